/* history_check.c — owns the check of a series of sessions (rpxprof/history_check.h;
 * docs/statistics.md, "Across sessions"): the between-session block, the change
 * points kept (E-divisive in changepoints.c, each with its ratio after/before,
 * interval and p-value, and only when its interval decides beyond the
 * threshold), the newest session's verdict against the last segment with the
 * confirm rule, and the between-session spread compare uses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/changepoints.h"
#include "compare/session_noise.h"
#include "rpxprof/comparison.h"
#include "rpxprof/history_check.h"
#include "rpxprof/stats.h"

#define PERMUTATIONS 499      /* of the change-point test: p resolves to 0.002 */
#define RESAMPLES 1000        /* of each null distribution of a difference of levels */
#define MIN_OWN_NOISE 40      /* residuals before a series' own stand alone: a 97.5 % tail needs 39 */
#define MAX_EXTRA 10          /* sessions_needed is looked for up to this many */

void rpx_history_check_defaults(rpx_history_check_opts *o)
{
    o->threshold = 0.01;
    o->confidence = 0.95;
    o->min_segment = 5;
    o->confirm = 3; /* docs/statistics.md's calibration; a single slower head asks for more */
    o->seed = 1;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *field_or_null(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v ? json_incref(v) : json_null();
}

/* The residuals of sessions [0, end) about their segment's level (its lower
 * quartile: a segment's slow sessions move its median, not its undisturbed
 * level), into pool; cps: the segments' first sessions after the first. */
static size_t residuals(const rpx__sessions *S, const size_t *cps, size_t ncp, size_t end, double *pool)
{
    size_t k, j, np = 0, a = 0;
    for (k = 0; k <= ncp; k++) {
        size_t b = k < ncp ? cps[k] : end;
        double med;
        if (b > end) b = end;
        if (b <= a) continue;
        med = rpx__low_level(S->level + a, b - a);
        for (j = a; j < b; j++) pool[np++] = S->level[j] - med;
        a = b;
    }
    return np;
}

/* d = low_level(new) - low_level(base) and its interval [d - q_hi, d - q_lo]
 * from the null distribution over pool; p two-sided. 0 or RPX_ENOMEM. */
typedef struct lvl_diff { double d, lo, hi, p, q_hi; } lvl_diff;

static int diff_of_levels(const double *base, size_t nb, const double *nw, size_t nn, size_t nn_null,
                          const double *pool, size_t np, double confidence, rpx__rng *rng, lvl_diff *r)
{
    double *null = malloc(RESAMPLES * sizeof *null), a = (1 - confidence) / 2;
    size_t i, le = 0, ge = 0;
    if (!null) return RPX_ENOMEM;
    if (rpx__null_diffs(pool, np, nb, nn_null, RESAMPLES, rng, null)) { free(null); return RPX_ENOMEM; }
    r->d = rpx__low_level(nw, nn) - rpx__low_level(base, nb);
    r->q_hi = rpx__quantile_sorted(null, RESAMPLES, 1 - a);
    r->lo = r->d - r->q_hi;
    r->hi = r->d - rpx__quantile_sorted(null, RESAMPLES, a);
    for (i = 0; i < RESAMPLES; i++) le += null[i] <= r->d, ge += null[i] >= r->d;
    r->p = 2.0 * (double)((le < ge ? le : ge) + 1) / (RESAMPLES + 1);
    if (r->p > 1) r->p = 1;
    free(null);
    return 0;
}

/* "ratio [lo, hi]" to the digits the interval supports (the rule of
 * docs/batch.md: the last digit shown is the one of the half-width's second
 * significant digit), between 2 and 6 decimals */
static void fmt_ratio(char *buf, size_t cap, double v, double lo, double hi)
{
    double h = (hi - lo) / 2;
    int d = isfinite(h) && h > 0 ? 1 - (int)floor(log10(h)) : 4;
    if (d < 2) d = 2;
    if (d > 6) d = 6;
    snprintf(buf, cap, "%.*f [%.*f, %.*f]", d, v, d, lo, d, hi);
}

/* ---- change points kept ---- */

/* The ratio after/before of change k (segments by cps) into r; under the
 * residuals of its two segments, pooled below MIN_OWN_NOISE with the default
 * allowance's as the newest verdict's are (pool holds S->n + the default's) */
static int change_ratio(const rpx__sessions *S, const size_t *cps, size_t ncp, size_t k, double confidence,
                        rpx__rng *rng, double *pool, lvl_diff *r)
{
    size_t a = k ? cps[k - 1] : 0, t = cps[k], b = k + 1 < ncp ? cps[k + 1] : S->n, np = 0, j;
    double mb = rpx__low_level(S->level + a, t - a), ma = rpx__low_level(S->level + t, b - t);
    for (j = a; j < t; j++) pool[np++] = S->level[j] - mb;
    for (j = t; j < b; j++) pool[np++] = S->level[j] - ma;
    if (np < MIN_OWN_NOISE) { /* as the newest verdict's: too few to place a tail alone */
        memcpy(pool + np, rpx__default_noise, rpx__default_noise_n * sizeof *pool);
        np += rpx__default_noise_n;
    }
    return diff_of_levels(S->level + a, t - a, S->level + t, b - t, b - t, pool, np, confidence, rng, r);
}

/* Drops, one at a time, the change whose interval decides least, until every
 * change's interval is beyond +-threshold (slower or faster); r[k] each kept
 * change's ratio. */
static int keep_decided(const rpx__sessions *S, size_t *cps, double *pv, size_t *ncp,
                        const rpx_history_check_opts *o, rpx__rng *rng, lvl_diff *r, double *pool)
{
    for (;;) {
        size_t k, worst = 0;
        double worst_margin = INFINITY;
        for (k = 0; k < *ncp; k++) {
            double margin;
            if (change_ratio(S, cps, *ncp, k, o->confidence, rng, pool, &r[k])) return RPX_ENOMEM;
            /* how far the interval lies beyond the threshold band (< 0: not beyond) */
            margin = fmax(r[k].lo - log1p(o->threshold), log1p(-o->threshold) - r[k].hi);
            if (margin < worst_margin) worst_margin = margin, worst = k;
        }
        if (*ncp == 0 || worst_margin > 0) return 0;
        memmove(cps + worst, cps + worst + 1, (*ncp - worst - 1) * sizeof *cps);
        memmove(pv + worst, pv + worst + 1, (*ncp - worst - 1) * sizeof *pv);
        (*ncp)--;
    }
}

static json_t *changes_json(const rpx__sessions *S, const size_t *cps, const double *pv, size_t ncp,
                            const lvl_diff *r)
{
    json_t *a = json_array();
    size_t k;
    for (k = 0; a && k < ncp; k++) {
        const json_t *b = S->s[cps[k] - 1], *f = S->s[cps[k]];
        size_t from = k ? cps[k - 1] : 0, to = k + 1 < ncp ? cps[k + 1] : S->n;
        const char *cb = json_string_value(json_object_get(b, "commit")), *cf = json_string_value(json_object_get(f, "commit"));
        char rt[96], text[320];
        /* index: 0-based, the series' first session after the change; the
         * text counts sessions from 1, as the history page does */
        fmt_ratio(rt, sizeof rt, exp(r[k].d), exp(r[k].lo), exp(r[k].hi));
        snprintf(text, sizeof text, "between session %lld and %lld (%s -> %s): ratio %s",
                 (long long)S->idx[cps[k] - 1] + 1, (long long)S->idx[cps[k]] + 1, cb ? cb : "n/a", cf ? cf : "n/a", rt);
        json_array_append_new(a, json_pack("{sI ss so so so so so s[ff] sf sI sI}",
            "index", (json_int_t)S->idx[cps[k]], "text", text, "before_commit", field_or_null(b, "commit"),
            "after_commit", field_or_null(f, "commit"), "before_session", field_or_null(b, "id"),
            "after_session", field_or_null(f, "id"), "ratio", num_or_null(exp(r[k].d)),
            "ratio_ci", exp(r[k].lo), exp(r[k].hi), "p_value", pv[k],
            "sessions_before", (json_int_t)(cps[k] - from), "sessions_after", (json_int_t)(to - cps[k])));
    }
    return a;
}

/* ---- the newest session ---- */

/* Two sessions of one version under test: the same commit, model file digest
 * and module source digest (session.version), at least one of them known: a
 * rebuilt model in a dirty checkout is a new version though its commit is not */
static int same_version(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"model_sha256", "module_source_sha256"};
    const json_t *va = json_object_get(a, "version"), *vb = json_object_get(b, "version");
    int known = json_is_string(json_object_get(a, "commit"));
    size_t i;
    if (!json_equal(json_object_get(a, "commit"), json_object_get(b, "commit")) &&
        (json_object_get(a, "commit") || json_object_get(b, "commit")))
        return 0;
    for (i = 0; i < 2; i++) {
        const json_t *x = json_object_get(va, keys[i]), *y = json_object_get(vb, keys[i]);
        if ((x || y) && !json_equal(x, y) && !(json_is_null(x) && json_is_null(y))) return 0;
        known |= json_is_string(x);
    }
    return known;
}

/* The head: the newest session and every session just before it of the same
 * version (same_version; whatever confirm is: a second session of the new
 * version is never baseline); a session of no known version is a head alone */
static size_t head_size(const rpx__sessions *S)
{
    size_t r = 1;
    while (r < S->n && same_version(S->s[S->n - 1 - r], S->s[S->n - 1])) r++;
    return r;
}

/* The sessions of a head of r that the null distribution counts: the first
 * session of a head is the one that looked slower and asked for the others,
 * so only the r - 1 after it are a fair draw (with the lowest of r as the
 * head's level, lowest(r) <= lowest(the r - 1 after), so the interval errs
 * wide); a head of one is itself. */
static size_t confirming(size_t r) { return r > 1 ? r - 1 : 1; }

typedef struct newest_in {
    const rpx__sessions *S;
    size_t r, base_from, base_to;
    const double *pool;
    size_t np;
    double sigma, df;  /* the between-session spread compare uses (rpx_between_session_spread) */
} newest_in;

static int newest_json(const newest_in *in, const rpx_history_check_opts *o, rpx__rng *rng, json_t **out)
{
    const rpx__sessions *S = in->S;
    const json_t *last = S->s[S->n - 1];
    size_t nb = in->base_to - in->base_from, extra;
    lvl_diff r;
    char why[768], more[160], rt[96];
    const char *verdict;
    json_t *needed = json_null(), *decidable;
    double t = o->threshold;
    *out = json_pack("{so so sI sI}", "session", field_or_null(last, "id"), "commit", field_or_null(last, "commit"),
                     "head_sessions", (json_int_t)in->r, "baseline_sessions", (json_int_t)nb);
    if (nb == 0) {
        json_object_set_new(*out, "ratio", json_null());
        json_object_set_new(*out, "ratio_ci", json_null());
        json_object_set_new(*out, "verdict", json_string("inconclusive"));
        json_object_set_new(*out, "decidable_change", json_null());
        json_object_set_new(*out, "sessions_needed", json_null());
        json_object_set_new(*out, "why", json_string(in->r > 1 ? "every session of this series is of the newest version (commit and model digest): no "
                                                       "earlier version's session to compare with (the head is every trailing session of one version)"
                                                     : "no earlier session of this benchmark on this fingerprint to compare with"));
        json_decref(needed);
        return 0;
    }
    if (diff_of_levels(S->level + in->base_from, nb, S->level + S->n - in->r, in->r, confirming(in->r), in->pool,
                       in->np, o->confidence, rng, &r))
        return RPX_ENOMEM;
    verdict = rpx_compare_verdict(exp(r.lo), exp(r.hi), t);
    fmt_ratio(rt, sizeof rt, exp(r.d), exp(r.lo), exp(r.hi));
    /* the confirm rule: with --confirm N, one session is never called slower
     * (a bad session on this machine kind can be 11 % slow, and a series
     * holds too few sessions to place its tail); it asks for more */
    if (o->confirm > 0 && in->r == 1 && strcmp(verdict, "slower") == 0) verdict = "inconclusive";
    /* the change this head decides: compare's rule (between_sessions.c) with
     * the series' spread, for a head of r against nb sessions */
    {
        double hb = rpx_stats_t_quantile(1 - (1 - o->confidence) / 2, in->df >= 1 ? in->df : 1) * in->sigma *
                    sqrt(1.0 / (double)confirming(in->r) + 1.0 / (double)nb);
        decidable = isfinite(hb) ? json_real(exp(log1p(t) + hb) - 1) : json_null();
    }
    if (strcmp(verdict, "slower") != 0 && exp(r.d) > 1 + t) {
        /* it looks slower: how many more sessions of the head, landing where
         * these did, would decide it */
        for (extra = 1; extra <= MAX_EXTRA; extra++) {
            lvl_diff q;
            double *lv = malloc((in->r + extra) * sizeof *lv);
            size_t i;
            if (!lv) return RPX_ENOMEM;
            for (i = 0; i < in->r + extra; i++) lv[i] = S->level[S->n - in->r + (i % in->r)];
            if (diff_of_levels(S->level + in->base_from, nb, lv, in->r + extra, confirming(in->r + extra), in->pool,
                               in->np, o->confidence, rng, &q)) {
                free(lv);
                return RPX_ENOMEM;
            }
            free(lv);
            if (q.lo > log1p(t)) break;
        }
        if (extra <= MAX_EXTRA) {
            json_decref(needed);
            needed = json_integer((json_int_t)extra);
        }
        if (extra <= MAX_EXTRA)
            snprintf(more, sizeof more, "record %zu more session%s of this commit and check again (the pytest "
                     "plugin runs them itself)", extra, extra == 1 ? "" : "s");
        else
            snprintf(more, sizeof more, "more than %d more sessions of this commit would be needed", MAX_EXTRA);
        snprintf(why, sizeof why,
                 "the head (%zu session%s) is %.1f %% slower than the last segment (%zu sessions), but one bad session "
                 "on this machine can be that slow: the ratio %s holds the between-session spread; %s",
                 in->r, in->r == 1 ? "" : "s", 100 * (exp(r.d) - 1), nb, rt, more);
    } else {
        snprintf(why, sizeof why,
                 "the head (%zu session%s) against the last segment (%zu sessions): ratio %s, "
                 "the interval holding the between-session spread; threshold %.3g %%",
                 in->r, in->r == 1 ? "" : "s", nb, rt, 100 * t);
    }
    json_object_set_new(*out, "ratio", num_or_null(exp(r.d)));
    json_object_set_new(*out, "ratio_ci", json_pack("[ff]", exp(r.lo), exp(r.hi)));
    json_object_set_new(*out, "p_value", json_real(r.p));
    json_object_set_new(*out, "verdict", json_string(verdict));
    json_object_set_new(*out, "decidable_change", decidable);
    json_object_set_new(*out, "sessions_needed", needed);
    json_object_set_new(*out, "why", json_string(why));
    return 0;
}

/* ---- the between-session block ---- */

/* The between-session block: its sigma_between_log and df are compare's
 * (rpx_between_session_spread of this series, pooled with the default
 * allowance below its 29 df), so check and compare --history agree. */
static json_t *between_json(const rpx__sessions *S, const json_t *spread, const char *noise_source, size_t noise_n)
{
    double sw = rpx__within_sigma(S);
    return json_pack("{ss ss sO sO sO so sI ss sI}",
        "model", "log p50 of process i in session j = mu(segment) + s_j + w_ij: processes nested in sessions; "
                 "s_j the session's effect (heavy-tailed, slow-sided on this machine kind), w_ij the process's",
        "estimator", "session level: median of its processes' log p50s; a set of sessions: their lower quartile "
                     "(the lowest for <= 4); intervals: the resampled differences of such levels under the sessions' "
                     "own residuals; sigma_between_log: compare's spread of this series (95th percentile of "
                     "|level_j - level_l| over pairs in one segment / (1.96 sqrt 2), less the within-session part, "
                     "pooled with the default allowance below its 29 df); sigma_within_log: median 1.4826 MAD of "
                     "a session's processes",
        "sigma_between_log", json_object_get(spread, "sigma_between_log"), "df", json_object_get(spread, "df"),
        "how", json_object_get(spread, "how"), "sigma_within_log", num_or_null(sw), "sessions", (json_int_t)S->n,
        "noise_source", noise_source, "noise_sessions", (json_int_t)noise_n);
}

int rpx_history_check(const json_t *series, const rpx_history_check_opts *opts, json_t **out, rpx_error *err)
{
    rpx_history_check_opts o;
    rpx__sessions S;
    rpx__rng rng;
    size_t *cps = NULL, ncp = 0, r = 0, pre, np = 0, k, cut;
    double *pv = NULL, *pool = NULL;
    lvl_diff *rr = NULL;
    json_t *res, *newest = json_null(), *fp = json_object_get(series, "fingerprint"), *spread = NULL;
    const char *src = "series";
    int rc;
    *out = NULL;
    if (opts) o = *opts;
    else rpx_history_check_defaults(&o);
    if (!(o.threshold > 0 && o.threshold < 1) || !(o.confidence > 0 && o.confidence < 1))
        return rpx_error_set(err, RPX_EINVAL, "history check: threshold (%g) and confidence (%g) must lie in (0, 1); "
                             "give e.g. 0.01 and 0.95", o.threshold, o.confidence);
    if ((rc = rpx__sessions_read(series, &S, err))) return rc;
    if ((rc = rpx_between_session_spread(series, &spread, err))) {
        rpx__sessions_free(&S);
        return rc;
    }
    rng.s = o.seed;
    cps = malloc((S.n + 1) * sizeof *cps);
    pv = malloc((S.n + 1) * sizeof *pv);
    rr = malloc((S.n + 1) * sizeof *rr);
    pool = malloc((S.n + rpx__default_noise_n + 1) * sizeof *pool);
    rc = !cps || !pv || !rr || !pool ? RPX_ENOMEM : 0;
    if (!rc) rc = rpx__changepoints(&S, o.min_segment, 1 - o.confidence, PERMUTATIONS, &rng, cps, pv, &ncp);
    if (!rc) rc = keep_decided(&S, cps, pv, &ncp, &o, &rng, rr, pool);
    if (!rc && S.n) {
        newest_in in;
        /* the last segment: of the sessions before the head, segmented
         * without it (a step at the head, found with the head in, may take
         * a session or two of the baseline along) */
        rpx__sessions P = S;
        size_t *pc = malloc((S.n + 1) * sizeof *pc), npc = 0;
        double *ppv = malloc((S.n + 1) * sizeof *ppv);
        lvl_diff *prr = malloc((S.n + 1) * sizeof *prr);
        r = head_size(&S);
        pre = S.n - r;
        P.n = pre;
        rc = !pc || !ppv || !prr ? RPX_ENOMEM : rpx__changepoints(&P, o.min_segment, 1 - o.confidence, PERMUTATIONS, &rng, pc, ppv, &npc);
        if (!rc) rc = keep_decided(&P, pc, ppv, &npc, &o, &rng, prr, pool);
        for (k = 0, cut = 0; k < npc && pc[k] < pre; k++) cut = pc[k];
        np = rc ? 0 : residuals(&S, pc, npc, pre, pool);
        free(pc), free(ppv), free(prr);
        if (np < MIN_OWN_NOISE) {
            memcpy(pool + np, rpx__default_noise, rpx__default_noise_n * sizeof *pool);
            np += rpx__default_noise_n;
            src = np == rpx__default_noise_n ? "default" : "series and default";
        }
        in = (newest_in){&S, r, cut, pre, pool, np,
                         json_is_number(json_object_get(spread, "sigma_between_log"))
                             ? json_number_value(json_object_get(spread, "sigma_between_log")) : NAN,
                         json_is_integer(json_object_get(spread, "df"))
                             ? (double)json_integer_value(json_object_get(spread, "df")) : 1e6};
        if (!rc) {
            json_decref(newest);
            rc = newest_json(&in, &o, &rng, &newest);
        }
    }
    if (rc) {
        json_decref(newest);
        json_decref(spread);
        rpx__sessions_free(&S);
        free(cps), free(pv), free(rr), free(pool);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    res = json_pack("{so so sI sI so so so}", "benchmark", field_or_null(series, "benchmark"),
                    "fingerprint_digest", field_or_null(fp, "digest"), "sessions", (json_int_t)S.total,
                    "sessions_used", (json_int_t)S.n,
                    "between_session", between_json(&S, spread, src, np),
                    "changes", changes_json(&S, cps, pv, ncp, rr), "newest", newest);
    json_decref(spread);
    rpx__sessions_free(&S);
    free(cps), free(pv), free(rr), free(pool);
    if (!res) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    *out = res;
    return 0;
}

/* ---- the spread compare uses ---- */

int rpx_between_session_spread(const json_t *series_list, json_t **spread, rpx_error *err)
{
    size_t ns = json_is_array(series_list) ? json_array_size(series_list) : 1, i, j, k, all = 0, nseg = 0,
           at = 0, pairs = 0, nlev = 0;
    double *level = NULL, sw2 = 0, sb;
    size_t *seg = NULL, df;
    int rc = 0, nw = 0, n;
    char how[600];
    *spread = NULL;
    for (i = 0; i < ns; i++) {
        const json_t *s = json_is_array(series_list) ? json_array_get(series_list, i) : series_list;
        all += json_array_size(json_object_get(s, "sessions"));
    }
    level = malloc((all ? all : 1) * sizeof *level);
    seg = malloc((all ? all : 1) * sizeof *seg);
    if (!level || !seg) rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; !rc && i < ns; i++) {
        const json_t *s = json_is_array(series_list) ? json_array_get(series_list, i) : series_list;
        rpx__sessions S;
        rpx__rng rng = {1};
        size_t *cps, ncp = 0;
        double *pv, w;
        if ((rc = rpx__sessions_read(s, &S, err))) break;
        cps = malloc((S.n + 1) * sizeof *cps);
        pv = malloc((S.n + 1) * sizeof *pv);
        rc = cps && pv ? rpx__changepoints(&S, 5, 0.05, PERMUTATIONS, &rng, cps, pv, &ncp) : RPX_ENOMEM;
        if (rc) rpx_error_set(err, RPX_ENOMEM, "out of memory");
        for (j = 0, k = 0; !rc && j < S.n; j++) {
            while (k < ncp && cps[k] <= j) k++;
            level[at] = S.level[j];
            seg[at++] = nseg + k;
        }
        free(cps), free(pv);
        nseg += ncp + 1;
        nlev += S.n;
        w = rpx__within_sigma(&S);
        if (isfinite(w) && S.n) sw2 += 1.5707963 * w * w / (double)S.cnt[S.n / 2], nw++;
        rpx__sessions_free(&S);
    }
    if (rc) {
        free(level), free(seg);
        return rc;
    }
    sb = rpx__pairwise_sigma(level, seg, nlev, nw ? sw2 / nw : 0, &pairs);
    free(level), free(seg);
    df = isfinite(sb) && nlev > nseg ? nlev - nseg : 0;
    n = snprintf(how, sizeof how, "%zu sessions of %zu series in %zu segments (change points apart): the 95th percentile of "
                 "the differences between two sessions' levels over %zu pairs in one segment, divided by 1.96 sqrt 2, less "
                 "the within-session part",
                 nlev, ns, nseg, pairs);
    /* A few sessions (back to back, say) cannot show the machine's drift: with
     * fewer degrees of freedom than the default allowance's own, the estimate is
     * pooled with it (as rpx_history_check pools a short series' residuals with the
     * same sessions),
     * sigma^2 = (df s^2 + df0 s0^2) / (df + df0), so that compare --history and
     * history check agree on a short history. */
    if (isfinite(sb) && df < RPX__DEFAULT_SIGMA_DF) {
        double s2 = ((double)df * sb * sb + RPX__DEFAULT_SIGMA_DF * RPX__DEFAULT_SIGMA_BETWEEN_LOG *
                     RPX__DEFAULT_SIGMA_BETWEEN_LOG) / (double)(df + RPX__DEFAULT_SIGMA_DF);
        if (n > 0 && (size_t)n < sizeof how)
            snprintf(how + n, sizeof how - (size_t)n, "; %g from %zu degrees of freedom, fewer than the default "
                     "allowance's, pooled with it (%g, %d df)", sb, df, RPX__DEFAULT_SIGMA_BETWEEN_LOG,
                     RPX__DEFAULT_SIGMA_DF);
        sb = sqrt(s2);
        df += RPX__DEFAULT_SIGMA_DF;
    }
    *spread = json_pack("{ss so sI so ss}", "source", !isfinite(sb) ? "none" : ns == 1 ? "series" : "machine",
                        "sigma_between_log", num_or_null(sb), "sessions", (json_int_t)nlev,
                        "df", df ? json_integer((json_int_t)df) : json_null(),
                        "how", how);
    return *spread ? 0 : rpx_error_set(err, RPX_ENOMEM, "out of memory");
}
