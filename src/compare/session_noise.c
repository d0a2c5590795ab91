/* session_noise.c — owns the between-session model's pieces (docs/statistics.md,
 * "Across sessions"): reading a series' sessions as log process p50s nested in
 * sessions, the robust level of a set of sessions (the lower quartile: this
 * machine kind's session noise is slow-sided), the resampled null distribution
 * of a difference of levels, the pairwise-quantile spread and the within-session
 * spread, the default noise measured on this machine kind, and a seeded
 * generator. Pure functions; no I/O. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/session_noise.h"

/* tests/fixtures/demo-sessions.json (a copy of ../shared/data/demo-sessions.json,
 * 2-vCPU AMD EPYC KVM guest, 2026-12-06): each session's level (median of its
 * five processes' log p50s) minus its series' median level. */
const double rpx__default_noise[] = {
    /* series A */
    -0.009637, -0.000486, 0.009545, -0.004981, 0.000486, 0.023460,
    /* series B */
    0.000624, -0.001659, 0.002755, -0.005945, 0.051236, -0.000624,
    /* series C */
    -0.000883, 0.045412, -0.000809, 0.000074, 0.013667, -0.000074, 0.038419, 0.000661,
    -0.001839, 0.002276, -0.003166, 0.029030, 0.109514, -0.002134, -0.000515, -0.002724,
    0.068768, 0.013377, -0.001692, -0.003756,
};
const size_t rpx__default_noise_n = sizeof rpx__default_noise / sizeof rpx__default_noise[0];

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

unsigned long long rpx__rng_next(rpx__rng *r)
{
    unsigned long long z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

size_t rpx__rng_below(rpx__rng *r, size_t n)
{
    return n ? (size_t)(rpx__rng_next(r) % (unsigned long long)n) : 0;
}

/* the k-th smallest (0-based) of x[0..n), x sorted */
static double select_kth(double *x, size_t n, size_t k)
{
    qsort(x, n, sizeof *x, cmp_dbl);
    return x[k];
}

static size_t low_rank(size_t n) { return n <= 4 ? 0 : (n + 3) / 4 - 1; }

double rpx__low_level(const double *x, size_t n)
{
    double buf[64], *c = n <= 64 ? buf : malloc(n * sizeof *c), v;
    if (n == 0 || !c) return NAN;
    memcpy(c, x, n * sizeof *c);
    v = select_kth(c, n, low_rank(n));
    if (c != buf) free(c);
    return v;
}

double rpx__median(const double *x, size_t n)
{
    double buf[64], *c = n <= 64 ? buf : malloc(n * sizeof *c), v;
    if (n == 0 || !c) return NAN;
    memcpy(c, x, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_dbl);
    v = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    if (c != buf) free(c);
    return v;
}

double rpx__quantile_sorted(const double *x, size_t n, double p)
{
    double h, f;
    size_t i;
    if (n == 0) return NAN;
    h = p * (double)(n - 1);
    i = (size_t)floor(h);
    if (i + 1 >= n) return x[n - 1];
    f = h - (double)i;
    return x[i] + f * (x[i + 1] - x[i]);
}

int rpx__null_diffs(const double *pool, size_t np, size_t n_base, size_t n_new, size_t reps,
                    rpx__rng *rng, double *out)
{
    size_t b, i, m = n_base > n_new ? n_base : n_new;
    double *d = malloc((m ? m : 1) * sizeof *d), lb, ln;
    if (!d) return RPX_ENOMEM;
    for (b = 0; b < reps; b++) {
        for (i = 0; i < n_base; i++) d[i] = pool[rpx__rng_below(rng, np)];
        lb = select_kth(d, n_base, low_rank(n_base));
        for (i = 0; i < n_new; i++) d[i] = pool[rpx__rng_below(rng, np)];
        ln = select_kth(d, n_new, low_rank(n_new));
        out[b] = ln - lb;
    }
    free(d);
    qsort(out, reps, sizeof *out, cmp_dbl);
    return 0;
}

double rpx__pairwise_sigma(const double *level, const size_t *seg, size_t n, double within_var_of_level,
                           size_t *pairs)
{
    size_t i, j, np = 0, cap = n * (n - (n > 0)) / 2;
    double *d, q, s2;
    *pairs = 0;
    if (n < 3 || !(d = malloc((cap ? cap : 1) * sizeof *d))) return NAN;
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (seg[i] == seg[j]) d[np++] = fabs(level[i] - level[j]);
    *pairs = np;
    if (np < 3) {
        free(d);
        return NAN;
    }
    qsort(d, np, sizeof *d, cmp_dbl);
    q = rpx__quantile_sorted(d, np, 0.95);
    free(d);
    s2 = q / (1.959963984540054 * sqrt(2.0));
    s2 = s2 * s2 - (isfinite(within_var_of_level) ? within_var_of_level : 0);
    return s2 > 0 ? sqrt(s2) : 0;
}

double rpx__within_sigma(const rpx__sessions *S)
{
    size_t j, i, m = 0;
    double *sig = malloc((S->n ? S->n : 1) * sizeof *sig), v;
    if (!sig) return NAN;
    for (j = 0; j < S->n; j++) {
        const double *y = S->proc + S->off[j];
        double med, dev[64];
        size_t k = S->cnt[j];
        if (k < 3 || k > 64) continue;
        med = rpx__median(y, k);
        for (i = 0; i < k; i++) dev[i] = fabs(y[i] - med);
        sig[m++] = 1.4826 * rpx__median(dev, k);
    }
    v = rpx__median(sig, m);
    free(sig);
    return v;
}

void rpx__sessions_free(rpx__sessions *S)
{
    free(S->level);
    free(S->proc);
    free(S->off);
    free(S->cnt);
    free(S->s);
    free(S->idx);
    memset(S, 0, sizeof *S);
}

/* session j's log process p50s appended to S->proc (one, log p50_ms, when it
 * has none); 0, 1 (a value that is not a positive number: err says which) or
 * RPX_ENOMEM */
static int read_session(rpx__sessions *S, size_t slot, size_t j, size_t *at, size_t *cap, rpx_error *err)
{
    const json_t *s = S->s[slot], *pp = json_object_get(s, "process_p50_ms"), *v;
    size_t i, k = json_array_size(pp);
    S->off[slot] = *at;
    if (k == 0) {
        double p = json_number_value(json_object_get(s, "p50_ms"));
        if (!json_is_number(json_object_get(s, "p50_ms")) || !(p > 0) || !isfinite(p))
            return rpx_error_set(err, RPX_EINVAL, "series: sessions[%zu] has neither process_p50_ms nor a positive p50_ms; "
                                 "give the store's series (sessions with their processes' p50s)", j);
        pp = NULL;
        k = 1;
    }
    if (*at + k > *cap) {
        size_t nc = (*cap + k) * 2;
        double *np = realloc(S->proc, nc * sizeof *np);
        if (!np) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        S->proc = np, *cap = nc;
    }
    for (i = 0; i < k; i++) {
        double p = pp ? json_number_value(v = json_array_get(pp, i)) : json_number_value(json_object_get(s, "p50_ms"));
        if (pp && !json_is_number(v)) p = NAN;
        if (!(p > 0) || !isfinite(p))
            return rpx_error_set(err, RPX_EINVAL, "series: sessions[%zu].process_p50_ms[%zu] is not a positive number; "
                                 "a session's processes' p50s are in ms", j, i);
        S->proc[(*at)++] = log(p);
    }
    S->cnt[slot] = k;
    S->level[slot] = rpx__median(S->proc + S->off[slot], k);
    return 0;
}

int rpx__sessions_read(const json_t *series, rpx__sessions *S, rpx_error *err)
{
    const json_t *ss = json_object_get(series, "sessions");
    size_t j, at = 0, cap = 0, n;
    int rc = 0;
    memset(S, 0, sizeof *S);
    if (!json_is_object(series) || !json_is_array(ss))
        return rpx_error_set(err, RPX_EINVAL, "series: an object with \"sessions\" (an array, oldest first) is needed; "
                             "give the history store's series");
    n = json_array_size(ss);
    S->total = n;
    S->level = malloc((n ? n : 1) * sizeof *S->level);
    S->idx = malloc((n ? n : 1) * sizeof *S->idx);
    S->off = malloc((n ? n : 1) * sizeof *S->off);
    S->cnt = malloc((n ? n : 1) * sizeof *S->cnt);
    S->s = malloc((n ? n : 1) * sizeof *S->s);
    if (!S->level || !S->off || !S->cnt || !S->s || !S->idx) rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (j = 0; !rc && j < n; j++) {
        const json_t *o = json_array_get(ss, j), *st = json_object_get(o, "status");
        if (!json_is_object(o)) {
            rc = rpx_error_set(err, RPX_EINVAL, "series: sessions[%zu] is not an object", j);
            break;
        }
        if (json_is_string(st) && strcmp(json_string_value(st), "complete") != 0) continue; /* not measured whole */
        S->s[S->n] = o;
        S->idx[S->n] = j;
        if (!(rc = read_session(S, S->n, j, &at, &cap, err))) S->n++;
    }
    if (rc) rpx__sessions_free(S);
    return rc;
}
