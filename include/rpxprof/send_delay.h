/* rpxprof/send_delay.h — the client's own send delay of an open-loop load
 * (the HTTP target's --rate) or of paced calls (a local model's --rate): per
 * request, the time between when it could be sent (its intended time, or the
 * moment a connection came free when none was) and when the client sent it.
 * The report's `send_delay` block (http.load.send_delay, pacing.send_delay)
 * and the rule that marks a run invalid when the client fell behind its
 * schedule (docs/targets.md#the-clients-own-send-delay). */
#ifndef RPXPROF_SEND_DELAY_H
#define RPXPROF_SEND_DELAY_H

#include <jansson.h>

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The stated tolerance: a run whose client's own send delay has a p99 above
 * this is invalid (behind schedule). The same 1 ms as the load's "late". */
#define RPX_SEND_DELAY_TOLERANCE_NS 1000000.0
/* ... or whose achieved rate is below this share of the requested one while
 * the target does not explain it (the generator saturated). */
#define RPX_SEND_RATE_TOLERANCE 0.95

/* How early a paced or open-loop sender wakes before a send's time, to spin
 * the rest on CLOCK_MONOTONIC (the kernel's timer slack and wake-up latency
 * are larger than the send itself). */
#define RPX_SEND_SPIN_NS 200000LL

typedef struct rpx_send_delay_stats {
    long n;                       /* sends measured; 0: none (the block's numbers are null) */
    double p50_ns, p99_ns, max_ns, mean_ns;
    double latency_p50_ns, latency_p99_ns; /* of the same run's latency; NaN: unknown */
    long waited;                  /* sends that waited for a free connection; -1: n/a */
    double requested_rate, achieved_rate; /* per second; NaN: unknown */
    int target_bound;             /* 1: the target explains a shortfall of the achieved rate
                                   * (requests waited for a connection; a paced call's median
                                   * takes longer than the period) */
} rpx_send_delay_stats;

/* The `send_delay` block: {n, p50_us, p99_us, max_us, mean_us, share_p50,
 * share_p99, waited_for_connection, tolerance_us, valid, invalid_reason,
 * saturated, covers}. Invalid: the p99 above RPX_SEND_DELAY_TOLERANCE_NS (the client
 * fell behind its schedule), or the achieved rate below
 * RPX_SEND_RATE_TOLERANCE of the requested one when the target does not
 * explain it (the generator saturated). `covers` is the sentence saying what was measured (from where to
 * where). NULL when out of memory. */
RPX_API json_t *rpx_send_delay_json(const rpx_send_delay_stats *st, const char *covers);

/* Whether a report's run is a valid open-loop (or paced) measurement: 1 valid,
 * 0 invalid (reason filled), -1 the report has no send_delay block (not
 * paced). */
RPX_API int rpx_send_delay_report_valid(const json_t *report, char *reason, size_t size);

#ifdef __cplusplus
}
#endif
#endif
