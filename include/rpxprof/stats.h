/* rpxprof/stats.h — the statistics that make latency numbers publishable
 * (docs/statistics.md): confidence intervals of p50/p95/p99/mean that cover
 * between-process variation when samples come from K > 1 worker processes,
 * Tukey outlier counts, Student-t quantiles, the ratio of two runs'
 * statistics with its interval, Mann-Whitney U p-values and Holm's correction.
 *
 * Samples are in milliseconds, grouped by process: process i owns
 * samples[offsets[i] .. offsets[i] + counts[i]). Percentiles are numpy's
 * default (linear interpolation). Nothing here allocates beyond the call,
 * prints or exits. Pure functions: the same data give the same numbers. */
#ifndef RPXPROF_STATS_H
#define RPXPROF_STATS_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_STATS_TUKEY_METHOD \
    "Tukey fences on numpy-default quartiles: mild 1.5-3 IQR beyond a quartile, severe > 3 IQR; counted, never removed"
#define RPX_STATS_METHOD_BETWEEN \
    "t interval on log scale: geometric mean of the per-process statistic x/÷ exp(t(k-1) x its standard error), " \
    "widened to hold the pooled statistic"
#define RPX_STATS_METHOD_WITHIN \
    "distribution-free order-statistic (binomial) interval for percentiles; Student t interval for the mean"

/* Where the samples of one run came from (borrowed pointers). */
typedef struct rpx_stats_runs {
    const double *samples_ms;
    const size_t *offsets;        /* k entries */
    const size_t *counts;         /* k entries */
    size_t k;                     /* processes, >= 1 */
} rpx_stats_runs;

typedef enum rpx_stat { RPX_STAT_P50, RPX_STAT_P95, RPX_STAT_P99, RPX_STAT_MEAN } rpx_stat;

/* Student t: CDF and its inverse for df > 0 (need not be an integer). The
 * quantile is exact to about 1e-12 relative (a safeguarded Newton iteration
 * on the CDF, the CDF from the regularised incomplete beta function by its
 * continued fraction). NaN for p outside (0, 1) or df <= 0. */
RPX_API double rpx_stats_t_cdf(double t, double df);
RPX_API double rpx_stats_t_quantile(double p, double df);

/* F distribution's upper tail P(F(df1, df2) > f) for df1, df2 > 0 (from the
 * same incomplete beta function); 1 for f <= 0, NaN on bad arguments. */
RPX_API double rpx_stats_f_sf(double f, double df1, double df2);

/* The fewest calls for which a distribution-free interval of the q-quantile
 * (q in (0, 1)) with this confidence exists: the smallest n with
 * 1 - q^n - (1 - q)^n >= confidence (p99 at 0.95: 299). 0 on bad arguments. */
RPX_API size_t rpx_stats_quantile_min_calls(double q, double confidence);

/* The order statistics [X_(lo), X_(hi)] (1-based ranks in the sorted sample)
 * bounding the q-quantile with at least `confidence`: of all rank pairs with
 * P(lo <= B < hi) >= confidence, B ~ Binomial(n, q), the one with the fewest
 * ranks between them, then the one whose two tail probabilities are closest,
 * (to 1e-12), then the lower. 0, or RPX_EINVAL when n < rpx_stats_quantile_min_calls,
 * RPX_ENOMEM. */
RPX_API int rpx_stats_quantile_ranks(size_t n, double q, double confidence, size_t *lo, size_t *hi);

/* The report's `latency_ci` object (docs/statistics.md): {"confidence",
 * "method", "covers", "p50_ms", "p95_ms", "p99_ms", "mean_ms",
 * "null_reasons"}. k > 1: between-process; k == 1: within-process. An interval
 * that cannot be stated honestly is null with its reason in null_reasons.
 * NULL only when out of memory. */
RPX_API json_t *rpx_stats_latency_ci(const double *samples_ms, const size_t *offsets, const size_t *counts,
                             size_t k, double confidence);

/* Tukey's fences on numpy-default quartiles: *mild counts samples beyond
 * 1.5 IQR from the nearer quartile but within 3 IQR, *severe those beyond
 * 3 IQR. n == 0 gives 0 and 0; out of memory gives SIZE_MAX in both. */
RPX_API void rpx_stats_tukey(const double *samples, size_t n, size_t *mild, size_t *severe);

/* The interval of one statistic of one run: *lo, *hi (NaN and a reason in
 * `reason` when it cannot be stated). between != 0 asks for the
 * between-process interval (k >= 2 needed). Returns the point estimate over
 * the pooled samples (NaN when there are none); RPX_ENOMEM is reported as
 * NaN with reason "out of memory". */
RPX_API double rpx_stats_interval(const rpx_stats_runs *runs, rpx_stat stat, double confidence, int between,
                          double *lo, double *hi, char *reason, size_t reason_size);

/* The ratio NEW/BASE of one statistic with its interval. */
typedef struct rpx_stats_ratio {
    double ratio, lo, hi;         /* lo/hi NaN when no interval: see reason */
    double p_value;               /* two-sided Mann-Whitney U (NaN when not computable) */
    int p_exact;                  /* 1: exact distribution; 0: normal approximation */
    int between;                  /* 1: covers between-process variation */
    char reason[512];             /* why lo/hi are NaN; "" otherwise */
} rpx_stats_ratio;

/* Between-process (both k >= 2): Welch t on the log per-process statistics,
 * centred on log(pooled NEW) - log(pooled BASE); p-value: Mann-Whitney U over
 * the per-process statistics. Otherwise within-process: MOVER (Zou & Donner)
 * on log scale from each run's own within-process interval; p-value:
 * Mann-Whitney U over the samples. 0 or RPX_ENOMEM. */
RPX_API int rpx_stats_ratio_ci(const rpx_stats_runs *base, const rpx_stats_runs *new_runs, rpx_stat stat,
                       double confidence, rpx_stats_ratio *out);

/* Two-sided Mann-Whitney U test of x against y: exact distribution when
 * nx, ny <= 50 and there are no ties, otherwise the normal approximation with
 * tie correction and continuity correction (scipy.stats.mannwhitneyu's
 * 'exact' and 'asymptotic'). NaN when a side is empty or out of memory. */
RPX_API double rpx_stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, int *exact);

/* Holm's step-down adjustment of m p-values (NaN stay NaN and do not count
 * in m). 0 or RPX_ENOMEM. */
RPX_API int rpx_stats_holm(const double *p, size_t m, double *adjusted);

#ifdef __cplusplus
}
#endif
#endif
