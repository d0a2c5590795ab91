/* rpxprof/histogram.h — a log-bucketed latency histogram of bounded size
 * (HdrHistogram-style): long runs keep their percentiles without keeping
 * every sample.
 *
 * Lifecycle: rpx_histogram_create → rpx_histogram_add ... →
 * rpx_histogram_stats / rpx_histogram_percentile_ns → rpx_histogram_destroy.
 *
 * Values are non-negative integer nanoseconds (a negative one counts as 0).
 * Values below 128 ns have a bucket each; above, every power of two is split
 * into 64 buckets, so a bucket is at most 1/64 of its values wide and its
 * midpoint is within 0.8 % of any value in it. Percentiles follow numpy's
 * default (linear interpolation between the closest ranks) over the bucket
 * midpoints, clamped to the exact minimum and maximum: within 1 % of numpy's
 * on the raw samples. n, mean, min, max and std (n - 1) are exact (std up to
 * the rounding of a running sum). About 30 KiB whatever the count. */
#ifndef RPXPROF_HISTOGRAM_H
#define RPXPROF_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "rpxprof/latency.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_histogram rpx_histogram;

RPX_API int rpx_histogram_create(rpx_histogram **out);
RPX_API void rpx_histogram_destroy(rpx_histogram *h);
RPX_API void rpx_histogram_add(rpx_histogram *h, int64_t ns);
RPX_API size_t rpx_histogram_count(const rpx_histogram *h);
/* q in [0, 100]; NaN when empty. */
RPX_API double rpx_histogram_percentile_ns(const rpx_histogram *h, double q);
/* The latency statistics (ms) of everything added; available 0 when empty. */
RPX_API int rpx_histogram_stats(const rpx_histogram *h, rpx_latency_stats *out);

#ifdef __cplusplus
}
#endif
#endif
