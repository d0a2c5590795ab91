/* rpxprof/clock.h — the timing clock: integer nanoseconds from CLOCK_MONOTONIC,
 * and a calibration of its resolution and of the cost of reading it. */
#ifndef RPXPROF_CLOCK_H
#define RPXPROF_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* POSIX's clock: declared by <time.h> only in a POSIX mode (-std=gnu11, or
 * _POSIX_C_SOURCE >= 199309L before the first header); under strict ISO C
 * the rest of this header still compiles. */
#ifdef CLOCK_MONOTONIC
static inline int64_t rpx_clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}
#endif

typedef struct rpx_timer_info {
    const char *clock;            /* "CLOCK_MONOTONIC" */
    int64_t resolution_ns;        /* clock_getres */
    int64_t overhead_ns;          /* median of t1 - t0 over back-to-back reads */
    int64_t overhead_min_ns;      /* smallest such difference seen */
    long overhead_trials;
} rpx_timer_info;

/* Median of n integer samples (numpy's: the mean of the two middle values
 * when n is even), sorting v in place; NaN when n is 0. */
RPX_API double rpx_median_i64(int64_t *v, size_t n);

/* Measure the clock's resolution and the median cost of two back-to-back
 * reads over `trials` pairs (0 = a default of 100001). */
RPX_API int rpx_timer_calibrate(rpx_timer_info *out, long trials);

#ifdef __cplusplus
}
#endif
#endif
