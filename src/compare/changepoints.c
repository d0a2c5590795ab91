/* changepoints.c — owns change-point detection over a series' sessions
 * (docs/statistics.md, "Change points"): E-divisive means (Matteson & James
 * 2014, as Hunter/Otava use it) on the sessions' process-level log p50s, a
 * permutation test over whole sessions, a minimum segment length, binary
 * segmentation. The ratio and interval of each change are history_check.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/changepoints.h"
#include "rpxprof/error.h"

/* D[j][l]: the mean |y - y'| over process i of session j and process i' of
 * session l: an energy distance's cross term between the two sessions'
 * distributions (D[j][j] is the session's own spread). */
static double *distances(const rpx__sessions *S)
{
    size_t n = S->n, j, l, i, m;
    double *D = malloc((n ? n * n : 1) * sizeof *D);
    if (!D) return NULL;
    for (j = 0; j < n; j++)
        for (l = j; l < n; l++) {
            double s = 0;
            const double *a = S->proc + S->off[j], *b = S->proc + S->off[l];
            for (i = 0; i < S->cnt[j]; i++)
                for (m = 0; m < S->cnt[l]; m++) s += sqrt(fabs(a[i] - b[m]));
            D[j * n + l] = D[l * n + j] = s / (double)(S->cnt[j] * S->cnt[l]);
        }
    return D;
}

/* The largest divergence over the splits of ord[0..m) with min_seg on each
 * side (the split's index in *at): Q = nL nR / (nL + nR) (2 B / (nL nR) -
 * WL / nL^2 - WR / nR^2), B, WL, WR the sums of D across and within. */
static double best_split(const double *D, size_t n, const size_t *ord, size_t m, size_t min_seg, size_t *at)
{
    double WL = 0, WR = 0, Bt = 0, best = -INFINITY;
    size_t t, i;
    for (t = 0; t < m; t++)
        for (i = 0; i < m; i++) WR += D[ord[t] * n + ord[i]];
    *at = 0;
    for (t = 0; t + min_seg <= m; t++) {
        size_t x = ord[t];
        double rowL = 0, rowR = 0, dxx = D[x * n + x], nL, nR, q;
        if (t >= min_seg) {
            nL = (double)t, nR = (double)(m - t);
            q = nL * nR / (nL + nR) * (2 * Bt / (nL * nR) - WL / (nL * nL) - WR / (nR * nR));
            if (q > best) best = q, *at = t;
        }
        for (i = 0; i < t; i++) rowL += D[ord[i] * n + x];
        for (i = t + 1; i < m; i++) rowR += D[x * n + ord[i]];
        WL += 2 * rowL + dxx;
        WR -= 2 * rowR + dxx;
        Bt += rowR - rowL;
    }
    return best;
}

typedef struct cp_ctx {
    const rpx__sessions *S;
    const double *D;
    size_t n, min_seg, perms;
    double alpha;
    rpx__rng *rng;
    size_t *ord;                  /* n: scratch */
    size_t *cps, ncp;
    double *pvals;
} cp_ctx;

/* The check loss of the lower quartile (quantile regression's, q = 1/4) of
 * levels [a, b) about their level: slow sessions above it cost little, a
 * session below it costs three times as much */
static double quartile_loss(const double *y, size_t a, size_t b)
{
    double l = rpx__low_level(y + a, b - a), s = 0;
    size_t j;
    for (j = a; j < b; j++) s += y[j] >= l ? 0.1 * (y[j] - l) : 0.9 * (l - y[j]);
    return s;
}

/* The split's place refined within +-2 min_seg of E-divisive's: the one whose
 * two segments' lower-quartile fit costs least. Slow sessions just before a
 * step look like the step to a distance, not to a fit that knows that
 * sessions run slow, never fast (a session below the after-level belongs
 * before). */
static size_t refine(const cp_ctx *c, size_t a, size_t b, size_t tau)
{
    size_t w = 2 * c->min_seg;
    size_t lo = tau > a + c->min_seg + w ? tau - w : a + c->min_seg;
    size_t hi = tau + w + c->min_seg < b ? tau + w : b - c->min_seg, t, best = tau;
    double bc = INFINITY;
    for (t = lo; t <= hi; t++) {
        double v = quartile_loss(c->S->level, a, t) + quartile_loss(c->S->level, t, b);
        if (v < bc - 1e-15) bc = v, best = t;
    }
    return best;
}

static void segment(cp_ctx *c, size_t a, size_t b, int depth)
{
    size_t m = b - a, at, dummy, i, p, ge = 0;
    double q;
    if (m < 2 * c->min_seg || depth > 64) return;
    for (i = 0; i < m; i++) c->ord[i] = a + i;
    q = best_split(c->D, c->n, c->ord, m, c->min_seg, &at);
    if (!isfinite(q)) return;
    for (p = 0; p < c->perms; p++) {
        for (i = m - 1; i > 0; i--) {
            size_t r = rpx__rng_below(c->rng, i + 1), t = c->ord[i];
            c->ord[i] = c->ord[r], c->ord[r] = t;
        }
        if (best_split(c->D, c->n, c->ord, m, c->min_seg, &dummy) >= q) ge++;
    }
    {
        double pv = (double)(ge + 1) / (double)(c->perms + 1);
        size_t tau, j;
        if (!(pv < c->alpha)) return;
        tau = refine(c, a, b, a + at);
        for (j = c->ncp; j > 0 && c->cps[j - 1] > tau; j--) {
            c->cps[j] = c->cps[j - 1];
            c->pvals[j] = c->pvals[j - 1];
        }
        c->cps[j] = tau;
        c->pvals[j] = pv;
        c->ncp++;
        segment(c, a, tau, depth + 1);
        segment(c, tau, b, depth + 1);
    }
}

int rpx__changepoints(const rpx__sessions *S, unsigned min_segment, double alpha, size_t perms,
                      rpx__rng *rng, size_t *cps, double *pvals, size_t *ncp)
{
    cp_ctx c;
    *ncp = 0;
    if (S->n < 2) return 0;
    memset(&c, 0, sizeof c);
    c.D = distances(S);
    c.ord = malloc(S->n * sizeof *c.ord);
    if (!c.D || !c.ord) {
        free((void *)c.D);
        free(c.ord);
        return RPX_ENOMEM;
    }
    c.S = S;
    c.n = S->n;
    c.min_seg = min_segment ? min_segment : 1;
    c.perms = perms;
    c.alpha = alpha;
    c.rng = rng;
    c.cps = cps;
    c.pvals = pvals;
    segment(&c, 0, S->n, 0);
    *ncp = c.ncp;
    free((void *)c.D);
    free(c.ord);
    return 0;
}
