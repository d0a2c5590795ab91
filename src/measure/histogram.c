/* histogram.c — owns the log-bucketed latency histogram (rpxprof/histogram.h). */
#include "rpxprof/histogram.h"

#include <math.h>
#include <stdlib.h>

#include "rpxprof/error.h"

#define SUB_BITS 6                          /* 64 buckets per power of two */
#define EXACT (1 << (SUB_BITS + 1))         /* 128: values below have a bucket each */
#define N_BUCKETS ((64 - SUB_BITS) * (1 << SUB_BITS) + EXACT)

struct rpx_histogram {
    uint64_t count[N_BUCKETS];
    size_t n;
    int64_t min, max;
    double mean, m2;                        /* Welford's running mean and sum of squares */
};

static int bucket_of(uint64_t v)
{
    int msb, shift;
    if (v < EXACT) return (int)v;
    msb = 63 - __builtin_clzll(v);
    shift = msb - SUB_BITS;                 /* v >> shift in [64, 127] */
    return shift * (1 << SUB_BITS) + (int)(v >> shift);
}

/* The midpoint of bucket b's values. */
static double mid_of(int b)
{
    int shift;
    double lo, width;
    if (b < EXACT) return (double)b;
    shift = b / (1 << SUB_BITS) - 1;
    lo = ldexp((double)(b - shift * (1 << SUB_BITS)), shift);
    width = ldexp(1.0, shift);
    return lo + (width - 1) / 2;
}

int rpx_histogram_create(rpx_histogram **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : RPX_ENOMEM;
}

void rpx_histogram_destroy(rpx_histogram *h)
{
    free(h);
}

void rpx_histogram_add(rpx_histogram *h, int64_t ns)
{
    double d;
    if (ns < 0) ns = 0;
    h->count[bucket_of((uint64_t)ns)]++;
    if (h->n == 0 || ns < h->min) h->min = ns;
    if (h->n == 0 || ns > h->max) h->max = ns;
    h->n++;
    d = (double)ns - h->mean;
    h->mean += d / (double)h->n;
    h->m2 += d * ((double)ns - h->mean);
}

size_t rpx_histogram_count(const rpx_histogram *h)
{
    return h->n;
}

/* The value of rank r (0-based) as its bucket's midpoint, within [min, max]. */
static double value_at(const rpx_histogram *h, size_t r)
{
    size_t seen = 0;
    int b;
    double v;
    for (b = 0; b < N_BUCKETS; b++) {
        seen += h->count[b];
        if (seen > r) break;
    }
    if (r == 0) return (double)h->min;
    if (r == h->n - 1) return (double)h->max;
    v = mid_of(b < N_BUCKETS ? b : N_BUCKETS - 1);
    if (v < (double)h->min) v = (double)h->min;
    if (v > (double)h->max) v = (double)h->max;
    return v;
}

double rpx_histogram_percentile_ns(const rpx_histogram *h, double q)
{
    double pos, frac, lo, hi;
    size_t k;
    if (!h || h->n == 0 || !(q >= 0 && q <= 100)) return (double)NAN;
    pos = q / 100.0 * (double)(h->n - 1);
    k = (size_t)pos;
    frac = pos - (double)k;
    lo = value_at(h, k);
    if (frac == 0 || k + 1 >= h->n) return lo;
    hi = value_at(h, k + 1);
    return lo + (hi - lo) * frac;
}

int rpx_histogram_stats(const rpx_histogram *h, rpx_latency_stats *out)
{
    if (!h || !out) return RPX_EINVAL;
    out->n = h->n;
    out->available = h->n > 0;
    if (!out->available) {
        out->p50_ms = out->p95_ms = out->p99_ms = out->mean_ms = out->min_ms = out->max_ms =
            out->std_ms = (double)NAN;
        return 0;
    }
    out->p50_ms = rpx_histogram_percentile_ns(h, 50) / 1e6;
    out->p95_ms = rpx_histogram_percentile_ns(h, 95) / 1e6;
    out->p99_ms = rpx_histogram_percentile_ns(h, 99) / 1e6;
    out->mean_ms = h->mean / 1e6;
    out->min_ms = (double)h->min / 1e6;
    out->max_ms = (double)h->max / 1e6;
    out->std_ms = h->n >= 2 ? sqrt(h->m2 / (double)(h->n - 1)) / 1e6 : (double)NAN;
    return 0;
}
