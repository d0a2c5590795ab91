/* stats.c — owns the statistics of docs/statistics.md: intervals of the
 * latency statistics (between-process t on log scale, within-process order
 * statistics and t), Tukey outlier counts, the Student t distribution, the
 * ratio of two runs with its interval, Mann-Whitney U and Holm. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "rpxprof/latency.h"
#include "rpxprof/stats.h"

/* ---------------------------------------------------------------- Student t */

/* Continued fraction of the regularised incomplete beta function, evaluated
 * by the modified Lentz method. */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;
    int m;
    if (fabs(d) < tiny) d = tiny;
    d = 1.0 / d;
    h = d;
    for (m = 1; m <= 100000; m++) {
        double m2 = 2.0 * m, num, del;
        num = m * (b - m) * x / ((a - 1.0 + m2) * (a + m2));
        d = 1.0 + num * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1.0 + num / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2));
        d = 1.0 + num * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1.0 + num / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16) break;
    }
    return h;
}

/* I_x(a, b). */
static double ibeta(double a, double b, double x)
{
    double front;
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_cf(a, b, x) / a;
    return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

/* P(T > t) for t >= 0. */
static double t_upper(double t, double df)
{
    return 0.5 * ibeta(0.5 * df, 0.5, df / (df + t * t));
}

double rpx_stats_f_sf(double f, double df1, double df2)
{
    if (!(df1 > 0) || !(df2 > 0) || isnan(f)) return NAN;
    if (f <= 0) return 1.0;
    if (isinf(f)) return 0.0;
    return ibeta(0.5 * df2, 0.5 * df1, df2 / (df2 + df1 * f));
}

double rpx_stats_t_cdf(double t, double df)
{
    if (!(df > 0) || isnan(t)) return NAN;
    if (isinf(t)) return t > 0 ? 1.0 : 0.0;
    return t >= 0 ? 1.0 - t_upper(t, df) : t_upper(-t, df);
}

static double t_pdf(double t, double df)
{
    return exp(lgamma(0.5 * (df + 1)) - lgamma(0.5 * df) - 0.5 * log(df * M_PI) -
               0.5 * (df + 1) * log1p(t * t / df));
}

double rpx_stats_t_quantile(double p, double df)
{
    double a, lo = 0, hi = 1, t;
    int i;
    if (!(p > 0 && p < 1) || !(df > 0)) return NAN;
    if (p == 0.5) return 0;
    a = p < 0.5 ? p : 1.0 - p; /* solve P(T > t) = a, t > 0 */
    while (t_upper(hi, df) > a) {
        lo = hi;
        hi *= 2;
        if (hi > 1e300) return p < 0.5 ? -INFINITY : INFINITY;
    }
    t = 0.5 * (lo + hi);
    for (i = 0; i < 400; i++) {
        double f = t_upper(t, df) - a, step, nt;
        if (f > 0) lo = t; else hi = t; /* t_upper decreases in t */
        if (f == 0) break;
        step = f / t_pdf(t, df);       /* Newton: f' = -pdf */
        nt = t + step;
        if (!(nt > lo && nt < hi) || !isfinite(nt))
            nt = lo > 0 && hi / lo > 4 ? sqrt(lo * hi) : 0.5 * (lo + hi);
        if (fabs(nt - t) <= 1e-15 * fabs(nt) || hi - lo <= 1e-15 * hi) { t = nt; break; }
        t = nt;
    }
    return p < 0.5 ? -t : t;
}

/* ------------------------------------------------ distribution-free ranks */

size_t rpx_stats_quantile_min_calls(double q, double confidence)
{
    double big;
    size_t n;
    if (!(q > 0 && q < 1) || !(confidence > 0 && confidence < 1)) return 0;
    big = q > 0.5 ? q : 1 - q;
    n = (size_t)fmax(1.0, floor(log(1 - confidence) / log(big)) - 3);
    while (1.0 - pow(q, (double)n) - pow(1 - q, (double)n) < confidence) n++;
    return n;
}

int rpx_stats_quantile_ranks(size_t n, double q, double confidence, size_t *lo, size_t *hi)
{
    double mean, sd, w, lq, l1q, lnf;
    size_t a, b, m, j, l, u, best_l = 0, best_u = 0;
    double *cdf, *sf, best_bal = INFINITY;
    if (!(q > 0 && q < 1) || !(confidence > 0 && confidence < 1) || n < 2 ||
        n < rpx_stats_quantile_min_calls(q, confidence))
        return RPX_EINVAL;
    mean = (double)n * q;
    sd = sqrt((double)n * q * (1 - q));
    w = 40 * sd + 50;
    a = mean - w <= 0 ? 0 : (size_t)(mean - w);
    b = mean + w >= (double)n ? n : (size_t)(mean + w) + 1;
    if (b > n) b = n;
    m = b - a + 1;
    cdf = malloc(m * sizeof *cdf);
    sf = malloc(m * sizeof *sf);
    if (!cdf || !sf) { free(cdf); free(sf); return RPX_ENOMEM; }
    lq = log(q);
    l1q = log1p(-q);
    lnf = lgamma((double)n + 1);
    for (j = 0; j < m; j++) {
        double k = (double)(a + j);
        cdf[j] = exp(lnf - lgamma(k + 1) - lgamma((double)n - k + 1) + k * lq + ((double)n - k) * l1q);
    }
    for (j = m; j-- > 0;) sf[j] = cdf[j] + (j + 1 < m ? sf[j + 1] : 0); /* P(B >= a+j) */
    for (j = 1; j < m; j++) cdf[j] += cdf[j - 1];                       /* P(B <= a+j) */
#define LOWTAIL(L) ((L) - 1 < a ? 0.0 : ((L) - 1 > b ? 1.0 : cdf[(L) - 1 - a])) /* P(B <= L-1) */
#define UPTAIL(U) ((U) < a ? 1.0 : ((U) > b ? 0.0 : sf[(U) - a]))             /* P(B >= U) */
    l = a > 1 ? a : 1;
    u = l + 1;
    for (; l < n && l <= b + 1; l++) {
        double lt = LOWTAIL(l), ut;
        if (u <= l) u = l + 1;
        while (u <= n && u <= b + 1 && lt + UPTAIL(u) > 1 - confidence) u++;
        if (u > n || u > b + 1) break;
        ut = UPTAIL(u);
        if (!best_u || u - l < best_u - best_l ||
            (u - l == best_u - best_l && fabs(lt - ut) < best_bal - 1e-12)) {
            best_l = l;
            best_u = u;
            best_bal = fabs(lt - ut);
        }
    }
#undef LOWTAIL
#undef UPTAIL
    free(cdf);
    free(sf);
    if (!best_u) return RPX_EINVAL;
    *lo = best_l;
    *hi = best_u;
    return 0;
}

/* ------------------------------------------------------------ statistics */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static const double stat_q[] = {50, 95, 99, NAN};
static const char *const stat_key[] = {"p50_ms", "p95_ms", "p99_ms", "mean_ms"};
static const char *const stat_name[] = {"p50", "p95", "p99", "mean"};

static size_t total_calls(const rpx_stats_runs *r)
{
    size_t i, n = 0;
    for (i = 0; i < r->k; i++) n += r->counts[i];
    return n;
}

/* The pooled samples of a run, sorted, in a malloc'ed array (NULL: no memory). */
static double *pooled_sorted(const rpx_stats_runs *r, size_t *n)
{
    size_t i, at = 0;
    double *v;
    *n = total_calls(r);
    v = malloc((*n ? *n : 1) * sizeof *v);
    if (!v) return NULL;
    for (i = 0; i < r->k; i++) {
        memcpy(v + at, r->samples_ms + r->offsets[i], r->counts[i] * sizeof *v);
        at += r->counts[i];
    }
    qsort(v, *n, sizeof *v, cmp_double);
    return v;
}

static double mean_of(const double *x, size_t n)
{
    double s = 0, c = 0;
    size_t i;
    for (i = 0; i < n; i++) { /* Kahan */
        double y = x[i] - c, t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s / (double)n;
}

/* The statistic of sorted values (n >= 1). */
static double stat_sorted(const double *sorted, size_t n, rpx_stat s)
{
    return s == RPX_STAT_MEAN ? mean_of(sorted, n) : rpx_percentile_sorted(sorted, n, stat_q[s]);
}

static double sd_of(const double *x, size_t n, double mean)
{
    double s = 0;
    size_t i;
    for (i = 0; i < n; i++) s += (x[i] - mean) * (x[i] - mean);
    return sqrt(s / (double)(n - 1));
}

/* The fewest calls a process (between) or a run (within) needs for `s`. */
static size_t min_calls(rpx_stat s, double confidence, int between)
{
    if (s == RPX_STAT_MEAN) return between ? 1 : 30;
    return rpx_stats_quantile_min_calls(stat_q[s] / 100.0, confidence);
}

/* Per-process statistics of a run into vals[] (k entries); *m: how many.
 * 0, RPX_EINVAL with a reason, RPX_ENOMEM. */
static int per_process(const rpx_stats_runs *r, rpx_stat s, double confidence, double *vals, size_t *m,
                       char *reason, size_t rsz)
{
    size_t i, need = min_calls(s, confidence, 1), maxn = 0;
    double *buf;
    *m = 0;
    for (i = 0; i < r->k; i++) if (r->counts[i] > maxn) maxn = r->counts[i];
    for (i = 0; i < r->k; i++)
        if (r->counts[i] && r->counts[i] < need) {
            snprintf(reason, rsz,
                     "a per-process %s needs at least %zu calls in every process (%.0f %% confidence, distribution-free); "
                     "process %zu has %zu; give more --repeats or fewer --processes",
                     stat_name[s], need, 100 * confidence, i, r->counts[i]);
            return RPX_EINVAL;
        }
    buf = malloc((maxn ? maxn : 1) * sizeof *buf);
    if (!buf) return RPX_ENOMEM;
    for (i = 0; i < r->k; i++) {
        double v;
        if (!r->counts[i]) continue;
        memcpy(buf, r->samples_ms + r->offsets[i], r->counts[i] * sizeof *buf);
        qsort(buf, r->counts[i], sizeof *buf, cmp_double);
        v = stat_sorted(buf, r->counts[i], s);
        if (!(v > 0) || !isfinite(v)) {
            free(buf);
            snprintf(reason, rsz, "process %zu's %s is not a positive number; the interval is on log scale", i,
                     stat_name[s]);
            return RPX_EINVAL;
        }
        vals[(*m)++] = v;
    }
    free(buf);
    if (*m < 2) {
        snprintf(reason, rsz, "a between-process interval needs at least 2 processes with calls; %zu had any", *m);
        return RPX_EINVAL;
    }
    return 0;
}

/* Mean and standard error of log(vals). */
/* The mean of the logs of the per-process statistics (what the t interval
 * estimates: the log of their geometric mean) and its standard error. */
static void log_se(const double *vals, size_t m, double *mean_log, double *se)
{
    double *y = malloc(m * sizeof *y), mu;
    size_t i;
    if (!y) { *se = *mean_log = NAN; return; }
    for (i = 0; i < m; i++) y[i] = log(vals[i]);
    mu = mean_of(y, m);
    *mean_log = mu;
    *se = sd_of(y, m, mu) / sqrt((double)m);
    free(y);
}

/* The within-process interval from sorted pooled samples. */
static int within(const double *sorted, size_t n, rpx_stat s, double confidence, double *lo, double *hi,
                  char *reason, size_t rsz)
{
    size_t need = min_calls(s, confidence, 0);
    if (n < need) {
        if (s == RPX_STAT_MEAN)
            snprintf(reason, rsz,
                     "a t interval of the mean needs at least %zu calls (it leans on the central limit theorem and "
                     "latencies are skewed); this run has %zu",
                     need, n);
        else
            snprintf(reason, rsz,
                     "a distribution-free %.0f %% interval of %s needs at least %zu calls; this run has %zu",
                     100 * confidence, stat_name[s], need, n);
        return RPX_EINVAL;
    }
    if (s == RPX_STAT_MEAN) {
        double mu = mean_of(sorted, n), h = rpx_stats_t_quantile(0.5 + confidence / 2, (double)(n - 1)) *
                                            sd_of(sorted, n, mu) / sqrt((double)n);
        *lo = mu - h;
        *hi = mu + h;
        return 0;
    } else {
        size_t l, u;
        int rc = rpx_stats_quantile_ranks(n, stat_q[s] / 100.0, confidence, &l, &u);
        if (rc == RPX_ENOMEM) return rc;
        if (rc) {
            snprintf(reason, rsz, "no distribution-free interval of %s from %zu calls", stat_name[s], n);
            return rc;
        }
        *lo = sorted[l - 1];
        *hi = sorted[u - 1];
        return 0;
    }
}

static double interval_impl(const rpx_stats_runs *r, rpx_stat s, double confidence, int between,
                            const double *sorted, size_t n, double *lo, double *hi, char *reason, size_t rsz)
{
    double point;
    int rc;
    *lo = *hi = NAN;
    if (rsz) reason[0] = '\0';
    if (!n) {
        snprintf(reason, rsz, "no calls were measured");
        return NAN;
    }
    point = stat_sorted(sorted, n, s);
    if (between) {
        double *vals = malloc((r->k ? r->k : 1) * sizeof *vals), se, t;
        size_t m;
        if (!vals) { snprintf(reason, rsz, "out of memory"); return NAN; }
        rc = per_process(r, s, confidence, vals, &m, reason, rsz);
        if (rc == RPX_ENOMEM) snprintf(reason, rsz, "out of memory");
        if (!rc && !(point > 0)) {
            snprintf(reason, rsz, "the pooled %s is not positive; the interval is on log scale", stat_name[s]);
            rc = RPX_EINVAL;
        }
        if (!rc) {
            double mu;
            log_se(vals, m, &mu, &se);
            t = rpx_stats_t_quantile(0.5 + confidence / 2, (double)(m - 1));
            /* centred on the geometric mean of the per-process statistics, the
             * quantity the t interval is for; widened to hold the pooled
             * statistic the report shows when that lies outside (per-process
             * values in clusters: the pooled one jumps to the larger cluster) */
            *lo = fmin(exp(mu - t * se), point);
            *hi = fmax(exp(mu + t * se), point);
        }
        free(vals);
        return point;
    }
    rc = within(sorted, n, s, confidence, lo, hi, reason, rsz);
    if (rc == RPX_ENOMEM) snprintf(reason, rsz, "out of memory");
    return point;
}

double rpx_stats_interval(const rpx_stats_runs *runs, rpx_stat stat, double confidence, int between,
                          double *lo, double *hi, char *reason, size_t reason_size)
{
    size_t n;
    double *sorted = pooled_sorted(runs, &n), point;
    if (!sorted) {
        *lo = *hi = NAN;
        snprintf(reason, reason_size, "out of memory");
        return NAN;
    }
    point = interval_impl(runs, stat, confidence, between, sorted, n, lo, hi, reason, reason_size);
    free(sorted);
    return point;
}

json_t *rpx_stats_latency_ci(const double *samples_ms, const size_t *offsets, const size_t *counts, size_t k,
                             double confidence)
{
    rpx_stats_runs r = {samples_ms, offsets, counts, k};
    json_t *o = json_object(), *reasons = json_object();
    size_t n, s;
    double *sorted = pooled_sorted(&r, &n);
    int between = k > 1, bad = !o || !reasons || !sorted;
    if (!bad) {
        bad |= json_object_set_new(o, "confidence", json_real(confidence));
        bad |= json_object_set_new(o, "method", json_string(between ? RPX_STATS_METHOD_BETWEEN : RPX_STATS_METHOD_WITHIN));
        bad |= json_object_set_new(o, "covers", json_string(between ? "between-process" : "within-process"));
        /* the words beside the machine's value: what no interval of one session covers */
        bad |= json_object_set_new(o, "covers_text", json_string(
            between ? "the variation between the processes of this session; not session-to-session "
                      "drift (a change of the machine between runs)"
                    : "the calls of one process of this session; neither the variation between "
                      "processes nor session-to-session drift"));
    }
    for (s = 0; !bad && s < 4; s++) {
        double lo, hi;
        char reason[512];
        interval_impl(&r, (rpx_stat)s, confidence, between, sorted, n, &lo, &hi, reason, sizeof reason);
        if (isfinite(lo) && isfinite(hi)) {
            json_t *a = json_array();
            bad |= !a || json_array_append_new(a, json_real(lo)) || json_array_append_new(a, json_real(hi));
            bad |= json_object_set_new(o, stat_key[s], a);
        } else {
            if (!strcmp(reason, "out of memory")) bad = 1;
            bad |= json_object_set_new(o, stat_key[s], json_null());
            bad |= json_object_set_new(reasons, stat_key[s], json_string(reason));
        }
    }
    free(sorted);
    if (bad) {
        json_decref(o);
        json_decref(reasons);
        return NULL;
    }
    if (json_object_set_new(o, "null_reasons", reasons)) { json_decref(o); return NULL; }
    return o;
}

void rpx_stats_tukey(const double *samples, size_t n, size_t *mild, size_t *severe)
{
    double *v, q1, q3, iqr;
    size_t i;
    *mild = *severe = 0;
    if (!n) return;
    v = malloc(n * sizeof *v);
    if (!v) { *mild = *severe = SIZE_MAX; return; }
    memcpy(v, samples, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    q1 = rpx_percentile_sorted(v, n, 25);
    q3 = rpx_percentile_sorted(v, n, 75);
    iqr = q3 - q1;
    for (i = 0; i < n; i++) {
        double x = samples[i];
        if (x < q1 - 3 * iqr || x > q3 + 3 * iqr) (*severe)++;
        else if (x < q1 - 1.5 * iqr || x > q3 + 1.5 * iqr) (*mild)++;
    }
    free(v);
}

/* ----------------------------------------------------------- Mann-Whitney */

typedef struct tagged { double v; int g; } tagged;

static int cmp_tagged(const void *x, const void *y)
{
    double a = ((const tagged *)x)->v, b = ((const tagged *)y)->v;
    return (a > b) - (a < b);
}

/* P(U <= u) for sizes m, n without ties: the coefficients of the Gaussian
 * binomial [m+n choose m]_q, built factor by factor (exact integers). */
static double u_cdf_exact(size_t m, size_t n, double u)
{
    size_t deg = m * n, i, j;
    double *c = calloc(deg + 1, sizeof *c), below = 0, all = 0;
    if (!c) return NAN;
    c[0] = 1;
    for (i = 1; i <= m; i++) {
        size_t up = n + i;
        for (j = deg + 1; j-- > up;) c[j] -= c[j - up];    /* x (1 - q^(n+i)) */
        for (j = i; j <= deg; j++) c[j] += c[j - i];       /* / (1 - q^i) */
    }
    for (j = 0; j <= deg; j++) {
        all += c[j];
        if ((double)j <= u) below += c[j];
    }
    free(c);
    return below / all;
}

double rpx_stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, int *exact)
{
    size_t n = nx + ny, i, j;
    tagged *t;
    double r1 = 0, ties = 0, u1, u2, p;
    int has_ties = 0;
    if (exact) *exact = 0;
    if (!nx || !ny) return NAN;
    t = malloc(n * sizeof *t);
    if (!t) return NAN;
    for (i = 0; i < nx; i++) t[i] = (tagged){x[i], 0};
    for (i = 0; i < ny; i++) t[nx + i] = (tagged){y[i], 1};
    qsort(t, n, sizeof *t, cmp_tagged);
    for (i = 0; i < n; i = j) {
        double rank, cnt;
        for (j = i + 1; j < n && t[j].v == t[i].v; j++) {}
        cnt = (double)(j - i);
        rank = 0.5 * ((double)i + 1 + (double)j); /* average of ranks i+1 .. j */
        if (j - i > 1) { has_ties = 1; ties += cnt * cnt * cnt - cnt; }
        for (size_t k = i; k < j; k++) if (t[k].g == 0) r1 += rank;
    }
    free(t);
    u1 = r1 - (double)nx * ((double)nx + 1) / 2;
    u2 = (double)nx * (double)ny - u1;
    if (!has_ties && nx <= 50 && ny <= 50) {
        p = 2 * u_cdf_exact(nx, ny, fmin(u1, u2));
        if (exact) *exact = 1;
    } else {
        double mu = (double)nx * (double)ny / 2, nn = (double)n;
        double s2 = (double)nx * (double)ny / 12 * ((nn + 1) - ties / (nn * (nn - 1)));
        if (!(s2 > 0)) return 1.0;
        p = erfc((fmax(u1, u2) - mu - 0.5) / sqrt(s2) / M_SQRT2);
    }
    return p > 1 ? 1.0 : p;
}

int rpx_stats_holm(const double *p, size_t m, double *adjusted)
{
    size_t *idx = malloc((m ? m : 1) * sizeof *idx), k = 0, i, j;
    double run = 0;
    if (!idx) return RPX_ENOMEM;
    for (i = 0; i < m; i++) {
        adjusted[i] = NAN;
        if (!isnan(p[i])) idx[k++] = i;
    }
    for (i = 1; i < k; i++) /* insertion sort by p, stable */
        for (j = i; j > 0 && p[idx[j - 1]] > p[idx[j]]; j--) { size_t s = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = s; }
    for (i = 0; i < k; i++) {
        double a = (double)(k - i) * p[idx[i]];
        if (a > 1) a = 1;
        if (a > run) run = a;
        adjusted[idx[i]] = run;
    }
    free(idx);
    return 0;
}

/* ------------------------------------------------------------------ ratio */

int rpx_stats_ratio_ci(const rpx_stats_runs *base, const rpx_stats_runs *new_runs, rpx_stat stat,
                       double confidence, rpx_stats_ratio *out)
{
    size_t nb, nn;
    double *sb = pooled_sorted(base, &nb), *sn = pooled_sorted(new_runs, &nn);
    double pb, pn;
    int rc = 0;
    memset(out, 0, sizeof *out);
    out->ratio = out->lo = out->hi = out->p_value = NAN;
    if (!sb || !sn) { free(sb); free(sn); return RPX_ENOMEM; }
    out->between = base->k > 1 && new_runs->k > 1;
    if (!nb || !nn) {
        snprintf(out->reason, sizeof out->reason, "%s run has no measured calls", !nb ? "the base" : "the new");
        goto done;
    }
    pb = stat_sorted(sb, nb, stat);
    pn = stat_sorted(sn, nn, stat);
    if (!isfinite(pb) || !isfinite(pn)) { /* a mean whose samples overflow the sum */
        snprintf(out->reason, sizeof out->reason, "the %s of the %s run is larger than a double holds",
                 stat_name[stat], isfinite(pb) ? "new" : "base");
        goto done;
    }
    if (!(pb > 0) || !(pn > 0)) {
        snprintf(out->reason, sizeof out->reason, "the %s of the %s run is not positive", stat_name[stat],
                 pb > 0 ? "new" : "base");
        goto done;
    }
    out->ratio = pn / pb;
    if (!isfinite(out->ratio)) {
        out->ratio = NAN;
        snprintf(out->reason, sizeof out->reason, "the ratio of the %ss (new/base) is larger than a double holds",
                 stat_name[stat]);
        goto done;
    }
    if (out->between) {
        double *vb = malloc(base->k * sizeof *vb), *vn = malloc(new_runs->k * sizeof *vn), seb, sen, se, df, t;
        size_t mb, mn;
        char why[256];
        int r1, r2 = 0;
        if (!vb || !vn) { free(vb); free(vn); rc = RPX_ENOMEM; goto done; }
        r1 = per_process(base, stat, confidence, vb, &mb, why, sizeof why);
        if (r1 == RPX_EINVAL) snprintf(out->reason, sizeof out->reason, "base: %s", why);
        if (!r1) {
            r2 = per_process(new_runs, stat, confidence, vn, &mn, why, sizeof why);
            if (r2 == RPX_EINVAL) snprintf(out->reason, sizeof out->reason, "new: %s", why);
        }
        if (r1 == RPX_ENOMEM || r2 == RPX_ENOMEM) rc = RPX_ENOMEM;
        if (!r1 && !r2) {
            double mub, mun;
            log_se(vb, mb, &mub, &seb);
            log_se(vn, mn, &mun, &sen);
            se = sqrt(seb * seb + sen * sen);
            df = (seb > 0 || sen > 0)
                     ? pow(se, 4) / (pow(seb, 4) / (double)(mb - 1) + pow(sen, 4) / (double)(mn - 1))
                     : (double)(mb + mn - 2);
            t = rpx_stats_t_quantile(0.5 + confidence / 2, df);
            /* Welch on the logs: centred on the ratio of the geometric means of
             * the per-process statistics, widened to hold the ratio of the
             * pooled statistics shown beside it */
            out->lo = fmin(exp(mun - mub - t * se), out->ratio);
            out->hi = fmax(exp(mun - mub + t * se), out->ratio);
            out->p_value = rpx_stats_mann_whitney(vb, mb, vn, mn, &out->p_exact);
        }
        free(vb);
        free(vn);
    } else {
        double lb, hb, ln, hn, db, dn, d;
        char why[256];
        int r1 = within(sb, nb, stat, confidence, &lb, &hb, why, sizeof why), r2 = 0;
        if (r1 == RPX_EINVAL) snprintf(out->reason, sizeof out->reason, "base: %s", why);
        if (!r1) {
            r2 = within(sn, nn, stat, confidence, &ln, &hn, why, sizeof why);
            if (r2 == RPX_EINVAL) snprintf(out->reason, sizeof out->reason, "new: %s", why);
        }
        if (r1 == RPX_ENOMEM || r2 == RPX_ENOMEM) rc = RPX_ENOMEM;
        if (!r1 && !r2) {
            if (!(lb > 0) || !(ln > 0)) {
                snprintf(out->reason, sizeof out->reason,
                         "the lower end of the %s run's %s interval is not positive; the ratio is on log scale",
                         lb > 0 ? "new" : "base", stat_name[stat]);
            } else {
                /* MOVER on log scale: theta = log new - log base */
                db = log(pb);
                dn = log(pn);
                d = dn - db;
                out->lo = exp(d - sqrt(pow(dn - log(ln), 2) + pow(log(hb) - db, 2)));
                out->hi = exp(d + sqrt(pow(log(hn) - dn, 2) + pow(db - log(lb), 2)));
            }
        }
        out->p_value = rpx_stats_mann_whitney(sb, nb, sn, nn, &out->p_exact);
    }
    if (isfinite(out->ratio) && (!isfinite(out->lo) || !isfinite(out->hi)) && !out->reason[0] && !rc)
        snprintf(out->reason, sizeof out->reason, "an end of the %s ratio's interval is larger than a double holds",
                 stat_name[stat]);
done:
    if (!isfinite(out->lo) || !isfinite(out->hi)) out->lo = out->hi = NAN; /* null, never half an interval */
    free(sb);
    free(sn);
    return rc;
}
