/* clock.c — owns the calibration of the timing clock (resolution, read cost). */
#include "rpxprof/clock.h"

#include <math.h>
#include <stdlib.h>

#include "rpxprof/error.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double rpx_median_i64(int64_t *v, size_t n)
{
    if (n == 0) return (double)NAN;
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

int rpx_timer_calibrate(rpx_timer_info *out, long trials)
{
    struct timespec res;
    int64_t *d;
    long i;
    if (!out) return RPX_EINVAL;
    if (trials <= 0) trials = 100001;
    out->clock = "CLOCK_MONOTONIC";
    out->resolution_ns = -1;
    if (clock_getres(CLOCK_MONOTONIC, &res) == 0)
        out->resolution_ns = (int64_t)res.tv_sec * 1000000000 + res.tv_nsec;
    d = malloc((size_t)trials * sizeof *d);
    if (!d) return RPX_ENOMEM;
    for (i = 0; i < trials; i++) {
        int64_t t0 = rpx_clock_now_ns();
        int64_t t1 = rpx_clock_now_ns();
        d[i] = t1 - t0;
    }
    out->overhead_ns = llround(rpx_median_i64(d, (size_t)trials));
    out->overhead_min_ns = d[0];
    out->overhead_trials = trials;
    free(d);
    return 0;
}
