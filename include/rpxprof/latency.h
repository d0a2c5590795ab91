/* rpxprof/latency.h — the latency profiler: samples and their statistics.
 *
 * Lifecycle: rpx_latency_create(warmup) → rpx_latency_add_* ... →
 * rpx_latency_stats_get → rpx_latency_destroy.
 *
 * Samples are kept in nanoseconds (double, so amortised batch times keep
 * their fraction). The first `warmup` samples added are excluded from the
 * statistics; if no sample is left after them, all samples are used. With no
 * samples at all every statistic is unavailable. Percentiles follow numpy's
 * default (linear interpolation between closest ranks); std is the sample
 * standard deviation (n - 1), unavailable below two samples. The arithmetic is
 * numpy 1.24's (its lerp, its pairwise summation for mean and std), so the
 * statistics equal numpy's on the exported samples; ns become ms (/ 1e6) last. */
#ifndef RPXPROF_LATENCY_H
#define RPXPROF_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_latency rpx_latency;

typedef struct rpx_latency_stats {
    size_t n;                     /* samples the statistics were computed from */
    int available;                /* 0: no samples, every value below is NaN */
    double p50_ms, p95_ms, p99_ms;
    double mean_ms, min_ms, max_ms;
    double std_ms;                /* NaN when n < 2 */
} rpx_latency_stats;

RPX_API int rpx_latency_create(long warmup, rpx_latency **out);
RPX_API void rpx_latency_destroy(rpx_latency *lat);
/* Pre-size storage so that adding n samples does not allocate. */
RPX_API int rpx_latency_reserve(rpx_latency *lat, size_t n);
/* ns must be finite and >= 0 (RPX_EINVAL otherwise). */
RPX_API int rpx_latency_add_ns(rpx_latency *lat, double ns);
/* seconds * 1e9 rounded to a whole nanosecond, so decimal inputs land on exact
 * values (0.067 s -> 67000000 ns, not 67000000.00000001). */
RPX_API int rpx_latency_add_seconds(rpx_latency *lat, double seconds);
/* One per-item sample: total_ns / batch_size (batch_size >= 1, RPX_EINVAL for
 * 0); the _seconds form rounds the total to a whole nanosecond first. */
RPX_API int rpx_latency_add_batch_ns(rpx_latency *lat, double total_ns, size_t batch_size);
RPX_API int rpx_latency_add_batch_seconds(rpx_latency *lat, double total_seconds, size_t batch_size);

/* Every sample added, warmup included, in order. */
RPX_API size_t rpx_latency_count(const rpx_latency *lat);
RPX_API const double *rpx_latency_samples_ns(const rpx_latency *lat);
/* Index of the first sample used by the statistics. */
RPX_API size_t rpx_latency_first_used(const rpx_latency *lat);

RPX_API int rpx_latency_stats_get(const rpx_latency *lat, rpx_latency_stats *out);

/* numpy.percentile(x, q) with the default 'linear' method, q in [0, 100],
 * on n >= 1 values sorted ascending. */
RPX_API double rpx_percentile_sorted(const double *sorted, size_t n, double q);

#ifdef __cplusplus
}
#endif
#endif
