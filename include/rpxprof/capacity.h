/* rpxprof/capacity.h — the capacity under a latency objective (issue 40 §2):
 * the largest request rate (a paced local model's call rate, an HTTP API's
 * open-loop rate) at which every objective holds with 95 % confidence.
 *
 * Objectives: `--slo 'p99<50ms,ttft_p99<500ms,tpot_p99<50ms,e2e_p95<2s'`
 * (rpx_capacity_slo_parse). An objective holds at a rate when the
 * distribution-free upper confidence bound of its percentile (an order
 * statistic: the smallest rank k with P(Binomial(n, q) <= k - 1) >= 0.95) is
 * below its limit; a percentile q needs n >= log(0.05) / log(q) requests for
 * that bound to exist (p99: 299, p95: 59), and a run with fewer is extended,
 * never decided.
 *
 * The search (rpx_capacity_search): bracket (double the rate from the first
 * until an objective fails or the run is invalid; halve it while the first
 * fails), then bisect until the bracket is within `precision`; each step one
 * open-loop run timed from the intended send times; the highest passing rate
 * is then re-verified in fresh runs (MLPerf re-verifies its peak); a failed
 * verification moves the bracket down and bisects again. The interval `ci`
 * is the final bracket [highest passing rate, lowest failing rate]: each of
 * its ends was decided at 95 % (see docs/capacity.md for what it covers).
 *
 * The search calls a run function the caller gives (the sweep CLI: the runner
 * with --rate R --duration S; the tests: anything), so it never forks or
 * prints itself. */
#ifndef RPXPROF_CAPACITY_H
#define RPXPROF_CAPACITY_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/api.h"
#include "rpxprof/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_CAPACITY_MAX_OBJECTIVES 8

typedef enum rpx_slo_metric {
    RPX_SLO_LATENCY = 0,          /* pN: the latency from the intended send (the schedule) */
    RPX_SLO_E2E,                  /* e2e_pN: the same for a streamed answer (its last byte) */
    RPX_SLO_TTFT,                 /* ttft_pN: the first token, from the intended send */
    RPX_SLO_TPOT                  /* tpot_pN: the time per output token after the first */
} rpx_slo_metric;

typedef struct rpx_slo_objective {
    rpx_slo_metric metric;
    double q;                     /* the percentile as a fraction: p99 -> 0.99 */
    double limit_ms;
    char text[48];                /* as written back: "p99<50ms" */
} rpx_slo_objective;

typedef struct rpx_capacity_slo {
    rpx_slo_objective obj[RPX_CAPACITY_MAX_OBJECTIVES];
    int n;
} rpx_capacity_slo;

/* "p99<50ms,ttft_p99<500ms": 0, or RPX_EUSAGE with a message naming the
 * part and the grammar. Durations take us, ms (the default) or s. */
RPX_API int rpx_capacity_slo_parse(const char *text, rpx_capacity_slo *out, rpx_error *err);

/* The fewest requests for which the one-sided upper confidence bound of the
 * q-quantile exists: the smallest n with 1 - q^n >= confidence (p99 at 0.95:
 * 299). 0 on bad arguments. */
RPX_API size_t rpx_capacity_min_requests(double q, double confidence);

/* The 1-based rank k of the order statistic bounding the q-quantile from
 * above with `confidence` among n samples: the smallest k with
 * P(Binomial(n, q) <= k - 1) >= confidence. 0 when n is too small. */
RPX_API size_t rpx_capacity_upper_rank(size_t n, double q, double confidence);

/* One run at `rate` per second for `duration_s` seconds: *report (a new
 * reference) is the run's report, with its per-request samples
 * (latency_samples_ms, or pacing.latency_from_schedule_samples_ms; streamed
 * answers: http.streaming.ttft_samples_ms / tpot_samples_ms). 0 or a negative
 * code (err says why: the search stops with it). */
typedef int (*rpx_capacity_run_fn)(void *ctx, double rate, double duration_s, json_t **report,
                                   rpx_error *err);

typedef struct rpx_capacity_opts {
    rpx_capacity_slo slo;
    double start_rate;            /* the first rate tried (> 0) */
    double min_duration_s;        /* each run at least this long (and long enough for the
                                   * objectives' percentiles) */
    double precision;             /* bisect until (fail - pass) / pass <= this (0.05) */
    int verify_runs;              /* fresh runs at the found rate (2) */
    int max_runs;                 /* every run of the search, verifications included (40) */
    double confidence;            /* 0.95 */
    double send_tolerance_ms;     /* a run whose client's own send delay p99 is above this is
                                   * invalid for the search; 0: 1 ms or a tenth of the tightest
                                   * objective, whichever is larger */
    double unit_per_s_max;        /* no rate above this is tried (0: 1e7) */
    const char *unit;             /* "req/s" or "Hz" (the sentence) */
} rpx_capacity_opts;

RPX_API void rpx_capacity_opts_init(rpx_capacity_opts *o);

/* The search. *out: the `capacity` block of sweep.json: {rate, ci: [lo, hi] |
 * null, objectives: [{"text", "metric", "percentile", "limit_ms"}],
 * verified_runs: [step...], search: [step...], confidence, precision,
 * send_tolerance_ms, min_requests, ci_means, sentence}, where a step is
 * {rate, duration_s, n, valid, invalid_reason, pass, objectives: [{text,
 * upper_ms, rank, n, holds}], phase: "bracket"|"bisect"|"verify"}. rate and ci
 * are null, and the sentence says why, when no rate passed. 0, or a negative
 * code from the run function or RPX_ENOMEM. */
RPX_API int rpx_capacity_search(const rpx_capacity_opts *o, rpx_capacity_run_fn run, void *ctx,
                                json_t **out, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
