/* latency.c — owns the latency profiler: the sample store and its statistics.
 *
 * Samples are doubles in nanoseconds, kept in the order they were added. The
 * statistics reproduce numpy 1.24's arithmetic so that a report can be checked
 * against numpy on the exported samples, bit for bit where possible:
 *   - percentiles: numpy.percentile's default 'linear' method, including its
 *     q / 100 step and its two-sided lerp (see rpx_percentile_sorted);
 *   - mean and std: numpy's pairwise summation (np.add.reduce on a contiguous
 *     float64 array), mean = sum / n, std = sqrt(sum((x - mean)^2) / (n - 1)),
 *     i.e. a two-pass variance with an O(eps log n) accurate sum.
 * Nanoseconds become milliseconds once, at the end (/ 1e6). */
#include "rpxprof/latency.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"

struct rpx_latency {
    size_t warmup;
    size_t count;
    size_t capacity;
    double *ns;
};

#define RPX__LAT_MIN_CAPACITY 64

int rpx_latency_create(long warmup, rpx_latency **out)
{
    rpx_latency *lat;
    if (!out) return RPX_EINVAL;
    *out = NULL;
    if (warmup < 0) return RPX_EINVAL;
    lat = calloc(1, sizeof *lat);
    if (!lat) return RPX_ENOMEM;
    lat->warmup = (size_t)warmup;
    *out = lat;
    return 0;
}

void rpx_latency_destroy(rpx_latency *lat)
{
    if (!lat) return;
    free(lat->ns);
    free(lat);
}

static int rpx__latency_grow(rpx_latency *lat, size_t need)
{
    size_t cap = lat->capacity;
    double *ns;
    if (need <= cap) return 0;
    if (need > SIZE_MAX / sizeof(double)) return RPX_ENOMEM;
    if (cap < RPX__LAT_MIN_CAPACITY) cap = RPX__LAT_MIN_CAPACITY;
    while (cap < need) {
        if (cap > SIZE_MAX / sizeof(double) / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    ns = realloc(lat->ns, cap * sizeof *ns);
    if (!ns) return RPX_ENOMEM;
    lat->ns = ns;
    lat->capacity = cap;
    return 0;
}

int rpx_latency_reserve(rpx_latency *lat, size_t n)
{
    if (!lat) return RPX_EINVAL;
    if (n > SIZE_MAX - lat->count) return RPX_ENOMEM;
    if (lat->count + n <= lat->capacity) return 0;
    /* Exact size: the caller knows how many samples are coming. */
    if (lat->count + n > SIZE_MAX / sizeof(double)) return RPX_ENOMEM;
    {
        double *ns = realloc(lat->ns, (lat->count + n) * sizeof *ns);
        if (!ns) return RPX_ENOMEM;
        lat->ns = ns;
        lat->capacity = lat->count + n;
    }
    return 0;
}

int rpx_latency_add_ns(rpx_latency *lat, double ns)
{
    int rc;
    /* A duration is finite and not negative; NaN would also break sorting. */
    if (!lat || !isfinite(ns) || ns < 0.0) return RPX_EINVAL;
    if (lat->count == lat->capacity) {
        if (lat->count == SIZE_MAX) return RPX_ENOMEM;
        rc = rpx__latency_grow(lat, lat->count + 1);
        if (rc) return rc;
    }
    lat->ns[lat->count++] = ns;
    return 0;
}

/* Seconds to nanoseconds, rounded to a whole nanosecond (the resolution of any
 * clock that reports seconds): seconds * 1e9 alone is not exact for decimal
 * values (0.067 * 1e9 = 67000000.00000001), whereas round() gives exactly
 * 67e6, so a sample of 0.067 s reads 67 ms in the report. */
static double rpx__seconds_to_ns(double seconds)
{
    return round(seconds * 1e9);
}

int rpx_latency_add_seconds(rpx_latency *lat, double seconds)
{
    return rpx_latency_add_ns(lat, rpx__seconds_to_ns(seconds));
}

int rpx_latency_add_batch_ns(rpx_latency *lat, double total_ns, size_t batch_size)
{
    if (batch_size == 0) return RPX_EINVAL;
    return rpx_latency_add_ns(lat, total_ns / (double)batch_size);
}

int rpx_latency_add_batch_seconds(rpx_latency *lat, double total_seconds, size_t batch_size)
{
    if (batch_size == 0) return RPX_EINVAL;
    return rpx_latency_add_ns(lat, rpx__seconds_to_ns(total_seconds) / (double)batch_size);
}

size_t rpx_latency_count(const rpx_latency *lat)
{
    return lat ? lat->count : 0;
}

const double *rpx_latency_samples_ns(const rpx_latency *lat)
{
    return lat ? lat->ns : NULL;
}

size_t rpx_latency_first_used(const rpx_latency *lat)
{
    if (!lat) return 0;
    /* All samples are used when the warmup would leave none. */
    return lat->count > lat->warmup ? lat->warmup : 0;
}

static int rpx__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's pairwise summation for float64 (DOUBLE_pairwise_sum in
 * numpy/core/src/umath/loops_utils.h.src, block size 128, unrolled by 8). */
static double rpx__pairwise_sum(const double *a, size_t n)
{
    if (n < 8) {
        double res = 0.0;
        for (size_t i = 0; i < n; i++) res += a[i];
        return res;
    } else if (n <= 128) {
        double r[8], res;
        size_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; j++) r[j] += a[i + (size_t)j];
        }
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    } else {
        size_t n2 = n / 2;
        n2 -= n2 % 8;
        return rpx__pairwise_sum(a, n2) + rpx__pairwise_sum(a + n2, n - n2);
    }
}

/* np.add.reduce on a contiguous float64 array: the reduction's iterator hands
 * the loop blocks of at most 8192 elements (numpy's default buffer size),
 * each summed pairwise and added to the running total in order. */
static double rpx__numpy_sum(const double *a, size_t n)
{
    const size_t block = 8192;
    double res = 0.0;
    for (size_t i = 0; i < n; i += block) res += rpx__pairwise_sum(a + i, n - i < block ? n - i : block);
    return res;
}

double rpx_percentile_sorted(const double *sorted, size_t n, double q)
{
    double h, lo_f, t, a, b, diff;
    size_t lo, hi;
    if (!sorted || n == 0 || !(q >= 0.0 && q <= 100.0)) return NAN;
    /* numpy: q = true_divide(q, 100); virtual index = (n - 1) * q. */
    q = q / 100.0;
    h = (double)(n - 1) * q;
    if (h >= (double)(n - 1)) {
        /* numpy takes the last value at or above the top index. */
        return sorted[n - 1];
    }
    lo_f = floor(h);
    lo = (size_t)lo_f;
    hi = lo + 1;
    t = h - lo_f;
    a = sorted[lo];
    b = sorted[hi];
    /* numpy's _lerp: a + (b - a) * t, or b - (b - a) * (1 - t) where t >= 0.5
     * (monotone and exact at both ends). */
    diff = b - a;
    if (t >= 0.5) return b - diff * (1.0 - t);
    return a + diff * t;
}

static void rpx__stats_unavailable(rpx_latency_stats *out, size_t n)
{
    out->n = n;
    out->available = 0;
    out->p50_ms = out->p95_ms = out->p99_ms = NAN;
    out->mean_ms = out->min_ms = out->max_ms = NAN;
    out->std_ms = NAN;
}

int rpx_latency_stats_get(const rpx_latency *lat, rpx_latency_stats *out)
{
    size_t first, n;
    double *x, *dev, mean, std = NAN;
    if (!out) return RPX_EINVAL;
    rpx__stats_unavailable(out, 0);
    if (!lat) return RPX_EINVAL;
    if (lat->count == 0) return 0;

    first = rpx_latency_first_used(lat);
    n = lat->count - first;
    if (n > SIZE_MAX / (2 * sizeof(double))) return RPX_ENOMEM;
    x = malloc(2 * n * sizeof *x);
    if (!x) return RPX_ENOMEM;
    dev = x + n;
    memcpy(x, lat->ns + first, n * sizeof *x);

    /* Mean and std on the samples in their added order, as numpy sees the
     * exported array; percentiles, min and max on the sorted copy. */
    mean = rpx__numpy_sum(x, n) / (double)n;
    if (n >= 2) {
        for (size_t i = 0; i < n; i++) {
            double d = x[i] - mean;
            dev[i] = d * d;
        }
        std = sqrt(rpx__numpy_sum(dev, n) / (double)(n - 1));
    }
    qsort(x, n, sizeof *x, rpx__cmp_double);

    out->n = n;
    out->available = 1;
    out->p50_ms = rpx_percentile_sorted(x, n, 50.0) / 1e6;
    out->p95_ms = rpx_percentile_sorted(x, n, 95.0) / 1e6;
    out->p99_ms = rpx_percentile_sorted(x, n, 99.0) / 1e6;
    out->mean_ms = mean / 1e6;
    out->min_ms = x[0] / 1e6;
    out->max_ms = x[n - 1] / 1e6;
    out->std_ms = std / 1e6;
    free(x);
    return 0;
}
