/* session_noise.h — the between-session model's pieces (src/compare/session_noise.c;
 * docs/statistics.md, "Across sessions"): the sessions of a series read as levels
 * (log p50 per process, nested in sessions), the robust level of a set of sessions,
 * the resampled null distribution of a difference of levels under the sessions'
 * own noise, the pairwise-quantile spread, this machine kind's measured noise
 * (tests/fixtures/demo-sessions.json) as the default, and a seeded generator.
 * Internal to the library. */
#ifndef RPX_COMPARE_SESSION_NOISE_H
#define RPX_COMPARE_SESSION_NOISE_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/error.h"

/* A series' sessions read for the statistics (a session whose status is not
 * "complete" is left out): per session its processes' log p50s (proc + off[j], cnt[j] values; one value, log p50_ms, when the session
 * has no process_p50_ms) and its level (their median). */
typedef struct rpx__sessions {
    size_t n;                     /* sessions used: those with status "complete" (or none) */
    size_t total;                 /* sessions in the series */
    size_t *idx;                  /* n: each one's index in the series */
    double *level;                /* n: median of the session's log process p50s */
    double *proc;                 /* all log process p50s */
    size_t *off, *cnt;            /* n each */
    const json_t **s;             /* n: the session objects (borrowed from the series) */
} rpx__sessions;

int rpx__sessions_read(const json_t *series, rpx__sessions *S, rpx_error *err);
void rpx__sessions_free(rpx__sessions *S);

/* splitmix64 */
typedef struct rpx__rng { unsigned long long s; } rpx__rng;
unsigned long long rpx__rng_next(rpx__rng *r);
size_t rpx__rng_below(rpx__rng *r, size_t n);     /* uniform in [0, n) */

/* The level of a set of session levels: the order statistic of rank
 * ceil(n / 4) (the lower quartile; the lowest for n <= 4). x is not changed. */
double rpx__low_level(const double *x, size_t n);

/* Median of n values (x not changed); NAN for n = 0 */
double rpx__median(const double *x, size_t n);

/* The residuals of this machine kind's sessions (tests/fixtures/demo-sessions.json:
 * each session's level minus its series' median level; 32 sessions). */
extern const double rpx__default_noise[];
extern const size_t rpx__default_noise_n;
/* sigma_between_log of the same data by rpx__pairwise_sigma (0.0393) and its df */
#define RPX__DEFAULT_SIGMA_BETWEEN_LOG 0.0393
#define RPX__DEFAULT_SIGMA_DF 29

/* The null distribution of low_level(n_new draws) - low_level(n_base draws),
 * both drawn with replacement from pool (np values), `reps` times: sorted into
 * out (reps values). 0 or RPX_ENOMEM. */
int rpx__null_diffs(const double *pool, size_t np, size_t n_base, size_t n_new, size_t reps,
                    rpx__rng *rng, double *out);

/* Quantile p of sorted values (linear interpolation) */
double rpx__quantile_sorted(const double *x, size_t n, double p);

/* The pairwise-quantile spread: over every pair of sessions in one segment
 * (seg[j] the segment of session j), q = the 95th percentile of |level_j -
 * level_l|; sigma^2 = (q / (1.96 sqrt 2))^2 - the within-session variance of a
 * level (pi/2 sigma_w^2 / k). NAN below 3 sessions in segments of >= 2. *pairs
 * the number of pairs. */
double rpx__pairwise_sigma(const double *level, const size_t *seg, size_t n, double within_var_of_level,
                           size_t *pairs);

/* The median over sessions (with >= 3 processes) of 1.4826 MAD of their log
 * process p50s; NAN when none */
double rpx__within_sigma(const rpx__sessions *S);

#endif
