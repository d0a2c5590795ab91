/* two_reports.c — owns the comparison of two run reports in memory
 * (docs/statistics.md): each side checked by the one validator
 * (report_check.c), the ratio NEW/BASE of p50, p95 and mean with its interval,
 * p-value and verdict, in the independent design (rpx_stats_ratio_ci) or in
 * compare --run's paired design (process k of each ran on the same CPU), the
 * per-CPU ratios, and each side's own statistics; for two reports of different
 * sessions the between-session rule (between_sessions.c). Audits, `rpxprof compare`
 * and the Python package compare through it; reading files and folders is
 * theirs (src/batch/compare.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "compare/between_sessions.h"
#include "compare/report_check.h"
#include "compare/comparable.h"
#include "compare/two_reports.h"
#include "report/layers_view.h"
#include "rpxprof/error.h"
#include "rpxprof/latency.h"
#include "rpxprof/stats.h"

void rpx__cmp_side_free(rpx__cmp_side *s)
{
    json_decref(s->r);
    free(s->samples);
    free(s->off);
    free(s->cnt);
    memset(s, 0, sizeof *s);
}

int rpx__cmp_side_load(const json_t *report, const char *name, rpx__cmp_side *s, json_t *warnings_out,
                       rpx_error *err)
{
    const char *prob;
    json_t *errors, *warnings;
    rpx__report_checked chk;
    int rc = 0, k;
    memset(s, 0, sizeof *s);
    s->name = name;
    if ((prob = rpx__report_shape_problem(report)) != NULL)
        return rpx_error_set(err, RPX_EFORMAT, "%s: does not match schemas/profile.json: %s; give a report written by rpxprof run",
                             name, prob);
    s->r = json_incref((json_t *)report);
    errors = json_array();
    warnings = json_array();
    if (!errors || !warnings) { json_decref(errors); json_decref(warnings); rpx__cmp_side_free(s); return rpx_error_set(err, RPX_ENOMEM, "out of memory"); }
    k = rpx__report_check(name, report, RPX_REPORT_RPXPROF, errors, warnings, &chk);
    if (k < 0) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    } else if (json_array_size(errors) || !chk.counts) {
        rpx_strbuf sb = {0};
        size_t i;
        for (i = 0; i < json_array_size(errors); i++) {
            if (i) rpx__sb_str(&sb, "; ");
            rpx__sb_str(&sb, json_string_value(json_array_get(errors, i)));
        }
        rc = rpx_error_set(err, k == 0 ? RPX_EINVAL : RPX_EFORMAT, "%s", sb.p ? sb.p : "out of memory");
        free(sb.p);
    } else {
        s->samples = chk.samples;
        s->n = chk.n;
        s->k = (size_t)chk.processes;
        s->off = chk.offsets;
        s->cnt = chk.counts;
        chk.samples = NULL;
        chk.offsets = chk.counts = NULL;
        json_array_extend(warnings_out, warnings);
    }
    rpx__report_check_free(&chk);
    json_decref(errors);
    json_decref(warnings);
    if (rc) rpx__cmp_side_free(s);
    s->name = name;
    return rc;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *pair_or_null(double lo, double hi)
{
    if (!isfinite(lo) || !isfinite(hi)) return json_null();
    return json_pack("[ff]", lo, hi);
}

static const rpx_stat cmp_stats[] = {RPX_STAT_P50, RPX_STAT_P95, RPX_STAT_MEAN};
static const char *const cmp_names[] = {"p50", "p95", "mean"};

/* ---- placement: compare --run's pairs by CPU, and the per-CPU ratios ---- */

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One statistic of n samples (the report's definitions: linear percentiles) */
static double stat_of(const double *s, size_t n, rpx_stat st)
{
    double *c, v = NAN, sum = 0;
    size_t i;
    if (n == 0) return NAN;
    if (st == RPX_STAT_MEAN) {
        for (i = 0; i < n; i++) sum += s[i];
        return sum / (double)n;
    }
    if (!(c = malloc(n * sizeof *c))) return NAN;
    memcpy(c, s, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_dbl);
    v = rpx_percentile_sorted(c, n, st == RPX_STAT_P50 ? 50 : st == RPX_STAT_P95 ? 95 : 99);
    free(c);
    return v;
}

/* The one CPU process i of a report ran on (placement.by_process), or -1 */
static long one_cpu(const rpx__cmp_side *c, size_t i)
{
    const json_t *by = json_object_get(json_object_get(c->r, "placement"), "by_process");
    const json_t *cpus = json_object_get(json_array_get(by, i), "cpus");
    if (json_array_size(by) != c->k || json_array_size(cpus) != 1) return -1;
    return (long)json_integer_value(json_array_get(cpus, 0));
}

/* 1 when process k of each report ran on the same one CPU, for every k; else
 * 0 and why */
static int pairs_by_cpu(const rpx__cmp_side *b, const rpx__cmp_side *n, char *why, size_t size)
{
    size_t i;
    if (b->k != n->k) {
        snprintf(why, size, "the reports ran %zu and %zu processes", b->k, n->k);
        return 0;
    }
    if (b->k < 2) {
        snprintf(why, size, "one pair gives no interval");
        return 0;
    }
    for (i = 0; i < b->k; i++) {
        long cb = one_cpu(b, i), cn = one_cpu(n, i);
        if (cb < 0 || cb != cn) {
            snprintf(why, size, "process %zu of the two reports did not run on one and the same "
                     "CPU (placement.by_process)", i);
            return 0;
        }
    }
    return 1;
}

/* The variance of the log of one process's statistic from its own calls (the
 * call-level noise): for a percentile, from its distribution-free 95 %
 * interval (order statistics), (log hi - log lo)^2 / (2 x 1.96)^2; for the
 * mean, (sd / mean)^2 / n. NaN when the process has too few calls. */
static double call_level_var(const double *s, size_t n, rpx_stat st)
{
    double *c, v = NAN;
    size_t lo, hi, i;
    if (n < 2) return NAN;
    if (st == RPX_STAT_MEAN) {
        double m = 0, ss = 0;
        for (i = 0; i < n; i++) m += s[i];
        m /= (double)n;
        for (i = 0; i < n; i++) ss += (s[i] - m) * (s[i] - m);
        return m > 0 ? ss / (double)(n - 1) / (m * m) / (double)n : NAN;
    }
    if (rpx_stats_quantile_ranks(n, st == RPX_STAT_P50 ? 0.5 : st == RPX_STAT_P95 ? 0.95 : 0.99, 0.95,
                                 &lo, &hi) != 0 ||
        !(c = malloc(n * sizeof *c)))
        return NAN;
    memcpy(c, s, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_dbl);
    if (c[lo - 1] > 0) v = pow((log(c[hi - 1]) - log(c[lo - 1])) / (2 * 1.959963984540054), 2);
    free(c);
    return v;
}

/* The paired design's interval (docs/statistics.md): d_k = log(new_k / base_k)
 * of the per-process statistic of pair k; mean(d) +- t(k-1) se, exponentiated,
 * around the ratio exp(mean(d)), with se the larger of sd(d)/sqrt(k) and the
 * standard error that the calls' own noise gives mean(d) (call_level_var of
 * both members of every pair: the spread of k pairs can come out below it by
 * chance, never the truth); p-value: the paired t test on d with that se. */
static void paired_ratio(const rpx__cmp_side *b, const rpx__cmp_side *n, rpx_stat st, double confidence,
                         rpx_stats_ratio *r)
{
    size_t i, k = b->k;
    double sum = 0, ss = 0, calls_var = 0, mean, se, t, tstat, *d = malloc(k * sizeof *d);
    r->lo = r->hi = r->p_value = NAN;
    r->between = 1;
    r->p_exact = 0;
    if (!d) {
        snprintf(r->reason, sizeof r->reason, "out of memory");
        return;
    }
    for (i = 0; i < k; i++) {
        double sb = stat_of(b->samples + b->off[i], b->cnt[i], st);
        double sn = stat_of(n->samples + n->off[i], n->cnt[i], st);
        if (!(sb > 0) || !(sn > 0)) {
            snprintf(r->reason, sizeof r->reason, "pair %zu: a per-process statistic is not "
                     "positive (or not measured)", i);
            free(d);
            return;
        }
        d[i] = log(sn / sb);
        sum += d[i];
        calls_var += call_level_var(b->samples + b->off[i], b->cnt[i], st) +
                     call_level_var(n->samples + n->off[i], n->cnt[i], st);
    }
    mean = sum / (double)k;
    for (i = 0; i < k; i++) ss += (d[i] - mean) * (d[i] - mean);
    se = sqrt(ss / (double)(k - 1)) / sqrt((double)k);
    if (isfinite(calls_var) && sqrt(calls_var) / (double)k > se) se = sqrt(calls_var) / (double)k;
    t = rpx_stats_t_quantile(1 - (1 - confidence) / 2, (double)(k - 1));
    r->lo = exp(mean - t * se);
    r->hi = exp(mean + t * se);
    /* the estimate the interval is built around: the geometric mean of the
     * within-pair ratios. The pooled statistics' ratio is not it: on CPUs that
     * run the model at different speeds the pooled p50 falls between the CPUs'
     * modes, and moves with how many calls each CPU happened to take (1.05
     * within every pair read 0.999 pooled); the caller keeps it as
     * <stat>_ratio_pooled. */
    r->ratio = exp(mean);
    tstat = se > 0 ? fabs(mean) / se : (mean == 0 ? 0 : INFINITY);
    r->p_value = isinf(tstat) ? 0 : 2 * (1 - rpx_stats_t_cdf(tstat, (double)(k - 1)));
    r->reason[0] = '\0';
    free(d);
}

/* by_cpu: for each CPU that processes of both reports were pinned to alone,
 * the p50 of those processes' samples in each and their ratio; null when
 * there is none */
static json_t *by_cpu_json(const rpx__cmp_side *b, const rpx__cmp_side *n)
{
    json_t *a = json_array();
    size_t i, j;
    long *seen = malloc((b->k ? b->k : 1) * sizeof *seen); /* the CPUs done */
    size_t n_seen = 0;
    if (!seen) {
        json_decref(a);
        return json_null();
    }
    for (i = 0; a && i < b->k; i++) {
        long cpu = one_cpu(b, i), kb = 0, kn = 0;
        size_t nb = 0, nn = 0, at;
        double *sb, *sn, pb, pn;
        json_t *o;
        for (j = 0; j < n_seen && seen[j] != cpu; j++) {}
        if (cpu < 0 || j < n_seen) continue;
        seen[n_seen++] = cpu;
        for (j = 0; j < b->k; j++) if (one_cpu(b, j) == cpu) nb += b->cnt[j], kb++;
        for (j = 0; j < n->k; j++) if (one_cpu(n, j) == cpu) nn += n->cnt[j], kn++;
        if (kn == 0 || nb == 0 || nn == 0) continue;
        sb = malloc(nb * sizeof *sb);
        sn = malloc(nn * sizeof *sn);
        if (!sb || !sn) { free(sb); free(sn); break; }
        for (at = 0, j = 0; j < b->k; j++)
            if (one_cpu(b, j) == cpu) memcpy(sb + at, b->samples + b->off[j], b->cnt[j] * sizeof *sb), at += b->cnt[j];
        for (at = 0, j = 0; j < n->k; j++)
            if (one_cpu(n, j) == cpu) memcpy(sn + at, n->samples + n->off[j], n->cnt[j] * sizeof *sn), at += n->cnt[j];
        pb = stat_of(sb, nb, RPX_STAT_P50);
        pn = stat_of(sn, nn, RPX_STAT_P50);
        free(sb);
        free(sn);
        o = json_object();
        json_object_set_new(o, "cpu", json_integer(cpu));
        json_object_set_new(o, "base_processes", json_integer(kb));
        json_object_set_new(o, "new_processes", json_integer(kn));
        json_object_set_new(o, "base_p50_ms", num_or_null(pb));
        json_object_set_new(o, "new_p50_ms", num_or_null(pn));
        json_object_set_new(o, "p50_ratio", num_or_null(pb > 0 ? pn / pb : NAN));
        json_array_append_new(a, o);
    }
    free(seen);
    if (a && json_array_size(a) == 0) {
        json_decref(a);
        return json_null();
    }
    return a ? a : json_null();
}

static json_t *run_stats(const rpx__cmp_side *c, const rpx_stats_runs *r, double confidence)
{
    json_t *o = json_object();
    size_t i;
    char why[512], key[32];
    json_object_set_new(o, "processes", json_integer((json_int_t)c->k));
    json_object_set_new(o, "calls", json_integer((json_int_t)c->n));
    for (i = 0; i < 3; i++) {
        double lo, hi, p = rpx_stats_interval(r, cmp_stats[i], confidence, c->k > 1, &lo, &hi, why, sizeof why);
        snprintf(key, sizeof key, "%s_ms", cmp_names[i]);
        json_object_set_new(o, key, num_or_null(p));
        snprintf(key, sizeof key, "%s_ms_ci", cmp_names[i]);
        json_object_set_new(o, key, pair_or_null(lo, hi));
    }
    return o;
}

int rpx__cmp_sides(const rpx__cmp_side *b, const rpx__cmp_side *n, const rpx_compare_opts *opts,
                   json_t *notes, json_t *warnings, json_t **out, rpx_error *err)
{
    json_t *o, *reasons;
    rpx_stats_runs rb, rn;
    size_t i;
    int paired = 0;
    *out = NULL;
    rb = (rpx_stats_runs){b->samples, b->off, b->cnt, b->k};
    rn = (rpx_stats_runs){n->samples, n->off, n->cnt, n->k};
    o = json_object();
    reasons = json_object();
    json_object_set_new(o, "base", json_string(b->name));
    json_object_set_new(o, "new", json_string(n->name));
    json_object_set_new(o, "threshold", json_real(opts->threshold));
    json_object_set_new(o, "confidence", json_real(opts->confidence));
    json_object_set_new(o, "covers", json_string(b->k > 1 && n->k > 1 ? "between-process" : "within-process"));
    if (opts->paired_by_cpu) {
        char why[256], w[512];
        paired = pairs_by_cpu(b, n, why, sizeof why);
        if (!paired) {
            snprintf(w, sizeof w, "the pairs by CPU could not be used (%s): the interval is the "
                     "independent design's", why);
            json_array_append_new(warnings, json_string(w));
        }
    }
    json_object_set_new(o, "design", json_string(paired ? "paired_by_cpu" : "independent"));
    for (i = 0; i < 3; i++) {
        rpx_stats_ratio r;
        char key[48];
        const char *verdict;
        if (rpx_stats_ratio_ci(&rb, &rn, cmp_stats[i], opts->confidence, &r)) {
            json_decref(o);
            json_decref(reasons);
            json_decref(notes);
            json_decref(warnings);
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        }
        if (paired) {
            double pooled = r.ratio;
            paired_ratio(b, n, cmp_stats[i], opts->confidence, &r);
            snprintf(key, sizeof key, "%s_ratio_pooled", cmp_names[i]);
            json_object_set_new(o, key, num_or_null(pooled));
        }
        verdict = rpx_compare_verdict(r.lo, r.hi, opts->threshold);
        snprintf(key, sizeof key, "%s_ratio", cmp_names[i]);
        json_object_set_new(o, key, num_or_null(r.ratio));
        snprintf(key, sizeof key, "%s_ratio_ci", cmp_names[i]);
        json_object_set_new(o, key, pair_or_null(r.lo, r.hi));
        if (r.reason[0]) json_object_set_new(reasons, key, json_string(r.reason));
        snprintf(key, sizeof key, "%s_verdict", cmp_names[i]);
        json_object_set_new(o, key, json_string(verdict));
        if (i == 0) {
            char method[160];
            json_object_set_new(o, "verdict", json_string(verdict));
            json_object_set_new(o, "p_value", num_or_null(r.p_value));
            if (paired)
                snprintf(method, sizeof method, "two-sided paired t over the log within-pair "
                         "ratios of the per-process statistic (pairs on the same CPU)");
            else
                snprintf(method, sizeof method, "two-sided Mann-Whitney U (%s) over %s",
                         r.p_exact ? "exact" : "normal approximation, tie and continuity corrected",
                         r.between ? "the per-process statistic of each run" : "the samples of the two runs");
            json_object_set_new(o, "p_value_method", json_string(method));
        } else {
            snprintf(key, sizeof key, "%s_p_value", cmp_names[i]);
            json_object_set_new(o, key, num_or_null(r.p_value));
        }
    }
    if (b->k == 1 || n->k == 1) {
        char w[512];
        snprintf(w, sizeof w,
                 "%s ran in one process: the intervals are within-process and do not cover the variation from one run to the next "
                 "(often a few %%); measure both with rpxprof run --processes K (K >= 2), or use rpxprof compare --run",
                 b->k == 1 && n->k == 1 ? "each report" : (b->k == 1 ? b->name : n->name));
        json_array_append_new(warnings, json_string(w));
    }
    json_object_set_new(o, "same_session", json_boolean(opts->same_session));
    if (!opts->same_session && rpx__cmp_between_sessions(o, opts, warnings)) {
        json_decref(o);
        json_decref(reasons);
        json_decref(notes);
        json_decref(warnings);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    json_object_set_new(o, "by_cpu", by_cpu_json(b, n));
    json_object_set_new(o, "null_reasons", reasons);
    json_object_set_new(o, "notes", notes ? notes : json_array());
    json_object_set_new(o, "base_stats", run_stats(b, &rb, opts->confidence));
    json_object_set_new(o, "new_stats", run_stats(n, &rn, opts->confidence));
    json_object_set_new(o, "warnings", warnings);
    /* --layers on both sides: per operator type, side by side (null otherwise) */
    json_object_set_new(o, "layers", rpx__layers_compare_json(b->r, n->r));
    *out = o;
    return 0;
}

int rpx__cmp_one_session(const json_t *base, const json_t *new_report)
{
    const json_t *a = json_object_get(json_object_get(base, "session"), "id"),
                 *b = json_object_get(json_object_get(new_report, "session"), "id");
    return json_is_string(a) && json_is_string(b) && strcmp(json_string_value(a), json_string_value(b)) == 0;
}

int rpx_compare_json(const json_t *base, const char *base_name, const json_t *new_report,
                     const char *new_name, const rpx_compare_opts *opts, json_t **out,
                     rpx_error *err)
{
    rpx__cmp_side b, n;
    json_t *warnings = json_array();
    int rc;
    *out = NULL;
    if (!warnings) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if ((rc = rpx__cmp_side_load(base, base_name, &b, warnings, err))) { json_decref(warnings); return rc; }
    if ((rc = rpx__cmp_side_load(new_report, new_name, &n, warnings, err))) {
        rpx__cmp_side_free(&b);
        json_decref(warnings);
        return rc;
    }
    /* two reports of one session (the same session.id: a report against
     * itself, say) share its drift: no between-session rule */
    rpx_compare_opts o = *opts;
    if (rpx__cmp_one_session(base, new_report)) o.same_session = 1;
    /* comparable at all (src/compare/comparable.c), before any statistics */
    if ((rc = rpx__cmp_comparable(base_name, base, new_name, new_report, &o, NULL, NULL, out, err)) == 0 &&
        !*out)
        rc = rpx__cmp_sides(&b, &n, &o, NULL, warnings, out, err);
    else
        json_decref(warnings);
    rpx__cmp_side_free(&b);
    rpx__cmp_side_free(&n);
    return rc;
}
