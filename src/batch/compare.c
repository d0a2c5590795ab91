/* compare.c — owns `rpxprof compare`'s library side: reading two reports (or
 * two folders of them), refusing what cannot be compared, the ratio NEW/BASE
 * of p50, p95 and mean with its interval, p-value and verdict, Holm over the
 * rows of two folders, and the text and Markdown tables (docs/statistics.md). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch/report_check.h"
#include "common/strbuf.h"
#include "common/user_file.h"
#include "loader/kinds.h"
#include "rpxprof/aggregate.h"
#include "rpxprof/compare.h"
#include "rpxprof/summary.h"
#include "rpxprof/error.h"
#include "rpxprof/latency.h"
#include "rpxprof/report.h"
#include "rpxprof/runner.h"
#include "rpxprof/stats.h"

typedef struct crep {
    json_t *r;
    double *samples;
    size_t n, k;
    size_t *off, *cnt;
} crep;

static void crep_free(crep *c)
{
    json_decref(c->r);
    free(c->samples);
    free(c->off);
    free(c->cnt);
    memset(c, 0, sizeof *c);
}

/* Reads a report and checks it with the validator aggregate uses
 * (src/batch/report_check.c): every problem it finds, in its words, joined
 * into one message. */
static int load_report(const char *path, crep *c, json_t *warnings_out, rpx_error *err)
{
    json_error_t je;
    const char *prob;
    json_t *errors, *warnings;
    rpx__report_checked chk;
    int rc = 0, k;
    memset(c, 0, sizeof *c);
    if (rpx__user_file_regular(path, NULL, err) != 0) return RPX_EFORMAT; /* a FIFO would block */
    c->r = json_load_file(path, 0, &je);
    if (!c->r) {
        struct stat st;
        if (stat(path, &st) != 0)
            return rpx_error_set(err, RPX_EFORMAT, "%s: the file does not exist; give a report written by rpxprof run", path);
        return rpx_error_set(err, RPX_EFORMAT, "%s: not valid JSON (line %d: %s); give a report written by rpxprof run",
                             path, je.line, je.text);
    }
    if ((prob = rpx__report_shape_problem(c->r)) != NULL) {
        crep_free(c);
        return rpx_error_set(err, RPX_EFORMAT, "%s: does not match schemas/profile.json: %s; give a report written by rpxprof run",
                             path, prob);
    }
    errors = json_array();
    warnings = json_array();
    if (!errors || !warnings) { json_decref(errors); json_decref(warnings); crep_free(c); return rpx_error_set(err, RPX_ENOMEM, "out of memory"); }
    k = rpx__report_check(path, c->r, RPX_REPORT_RPXPROF, errors, warnings, &chk);
    if (k < 0) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    } else if (json_array_size(errors) || !chk.counts) {
        rpx_strbuf s = {0};
        size_t i;
        for (i = 0; i < json_array_size(errors); i++) {
            if (i) rpx__sb_str(&s, "; ");
            rpx__sb_str(&s, json_string_value(json_array_get(errors, i)));
        }
        rc = rpx_error_set(err, k == 0 ? RPX_EINVAL : RPX_EFORMAT, "%s", s.p ? s.p : "out of memory");
        free(s.p);
    } else {
        c->samples = chk.samples;
        c->n = chk.n;
        c->k = (size_t)chk.processes;
        c->off = chk.offsets;
        c->cnt = chk.counts;
        chk.samples = NULL;
        chk.offsets = chk.counts = NULL;
        json_array_extend(warnings_out, warnings);
    }
    rpx__report_check_free(&chk);
    json_decref(errors);
    json_decref(warnings);
    if (rc) crep_free(c);
    return rc;
}

const char *rpx_compare_verdict(double lo, double hi, double t)
{
    if (!isfinite(lo) || !isfinite(hi)) return "inconclusive"; /* a null interval (docs/statistics.md) */
    if (hi < 1 - t) return "faster";
    if (lo > 1 + t) return "slower";
    if (lo >= 1 - t && hi <= 1 + t) return "same";
    return "inconclusive";
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *pair_or_null(double lo, double hi)
{
    if (!isfinite(lo) || !isfinite(hi)) return json_null();
    return json_pack("[ff]", lo, hi);
}

static const char *kind_what(const char *kind)
{
    const rpx_kind *row = rpx__kind_find(kind);
    return row ? row->what : "a target rpxprof does not describe";
}

/* What a reader of the ratio must know about the two sides: targets of
 * different kinds (their samples time different work), one file given twice,
 * or two files holding the same samples (compared with itself). */
static json_t *side_notes(const char *bp, const crep *b, const char *np, const crep *n)
{
    json_t *notes = json_array();
    const json_t *kb = json_object_get(b->r, "target_kind"), *kn = json_object_get(n->r, "target_kind");
    struct stat sb, sn;
    char buf[1024];
    if (json_is_string(kb) && json_is_string(kn) && strcmp(json_string_value(kb), json_string_value(kn))) {
        snprintf(buf, sizeof buf,
                 "the targets are of different kinds: %s times target_kind %s (%s), %s target_kind %s (%s); their "
                 "samples cover different work, so the ratio compares the two setups, not the models alone",
                 bp, json_string_value(kb), kind_what(json_string_value(kb)), np, json_string_value(kn),
                 kind_what(json_string_value(kn)));
        json_array_append_new(notes, json_string(buf));
    }
    if (stat(bp, &sb) == 0 && stat(np, &sn) == 0 && sb.st_dev == sn.st_dev && sb.st_ino == sn.st_ino) {
        snprintf(buf, sizeof buf,
                 "base and new are the same file (%s): it is compared with itself, so the verdict says nothing "
                 "about a change; measure the model again for a second report",
                 bp);
        json_array_append_new(notes, json_string(buf));
    } else if (b->n == n->n && b->k == n->k && !memcmp(b->samples, n->samples, b->n * sizeof *b->samples)) {
        snprintf(buf, sizeof buf,
                 "%s and %s hold the same samples (one is a copy of the other): compared with itself, the verdict "
                 "says nothing about a change",
                 bp, np);
        json_array_append_new(notes, json_string(buf));
    }
    return notes;
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
static long one_cpu(const crep *c, size_t i)
{
    const json_t *by = json_object_get(json_object_get(c->r, "placement"), "by_process");
    const json_t *cpus = json_object_get(json_array_get(by, i), "cpus");
    if (json_array_size(by) != c->k || json_array_size(cpus) != 1) return -1;
    return (long)json_integer_value(json_array_get(cpus, 0));
}

/* 1 when process k of each report ran on the same one CPU, for every k; else
 * 0 and why */
static int pairs_by_cpu(const crep *b, const crep *n, char *why, size_t size)
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

/* The paired design's interval (docs/statistics.md): d_k = log(new_k / base_k)
 * of the per-process statistic of pair k; mean(d) +- t(k-1) sd(d)/sqrt(k),
 * exponentiated, around the ratio exp(mean(d)); p-value: the paired t test
 * on d. */
static void paired_ratio(const crep *b, const crep *n, rpx_stat st, double confidence,
                         rpx_stats_ratio *r)
{
    size_t i, k = b->k;
    double sum = 0, ss = 0, mean, se, t, tstat, *d = malloc(k * sizeof *d);
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
    }
    mean = sum / (double)k;
    for (i = 0; i < k; i++) ss += (d[i] - mean) * (d[i] - mean);
    se = sqrt(ss / (double)(k - 1)) / sqrt((double)k);
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
static json_t *by_cpu_json(const crep *b, const crep *n)
{
    json_t *a = json_array();
    size_t i, j;
    long seen[RPX_RUNNER_MAX_PROCESSES];
    size_t n_seen = 0;
    for (i = 0; a && i < b->k && n_seen < RPX_RUNNER_MAX_PROCESSES; i++) {
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
    if (a && json_array_size(a) == 0) {
        json_decref(a);
        return json_null();
    }
    return a ? a : json_null();
}

static json_t *run_stats(const crep *c, const rpx_stats_runs *r, double confidence)
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

int rpx_compare_reports(const char *base_path, const char *new_path, const rpx_compare_opts *opts, json_t **out,
                        rpx_error *err)
{
    return rpx__compare_files(base_path, new_path, opts, 1, out, err);
}

int rpx__compare_files(const char *base_path, const char *new_path, const rpx_compare_opts *opts,
                       int same_work, json_t **out, rpx_error *err)
{
    crep b, n;
    json_t *errors, *warnings, *o, *reasons;
    rpx_stats_runs rb, rn;
    size_t i;
    int rc, paired = 0;
    *out = NULL;
    warnings = json_array();
    if ((rc = load_report(base_path, &b, warnings, err))) { json_decref(warnings); return rc; }
    if ((rc = load_report(new_path, &n, warnings, err))) { crep_free(&b); json_decref(warnings); return rc; }
    errors = json_array();
    if (same_work) rpx_aggregate_same_work(base_path, b.r, new_path, n.r, errors, warnings);
    if (json_array_size(errors)) {
        rpx_strbuf s = {0};
        for (i = 0; i < json_array_size(errors); i++) {
            if (i) rpx__sb_str(&s, "; ");
            rpx__sb_str(&s, json_string_value(json_array_get(errors, i)));
        }
        rc = rpx_error_set(err, RPX_EINVAL, "the reports did not do the same work, so their times cannot be compared: %s; "
                           "compare runs of the same inputs, unit, device and precision on the same CPU and GPU model",
                           s.p ? s.p : "out of memory");
        free(s.p);
        goto done;
    }
    rb = (rpx_stats_runs){b.samples, b.off, b.cnt, b.k};
    rn = (rpx_stats_runs){n.samples, n.off, n.cnt, n.k};
    o = json_object();
    reasons = json_object();
    json_object_set_new(o, "base", json_string(base_path));
    json_object_set_new(o, "new", json_string(new_path));
    json_object_set_new(o, "threshold", json_real(opts->threshold));
    json_object_set_new(o, "confidence", json_real(opts->confidence));
    json_object_set_new(o, "covers", json_string(b.k > 1 && n.k > 1 ? "between-process" : "within-process"));
    if (opts->paired_by_cpu) {
        char why[256], w[512];
        paired = pairs_by_cpu(&b, &n, why, sizeof why);
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
            rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
            goto done;
        }
        if (paired) {
            double pooled = r.ratio;
            paired_ratio(&b, &n, cmp_stats[i], opts->confidence, &r);
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
    if (b.k == 1 || n.k == 1) {
        char w[512];
        snprintf(w, sizeof w,
                 "%s ran in one process: the intervals are within-process and do not cover the variation from one run to the next "
                 "(often a few %%); measure both with rpxprof run --processes K (K >= 2), or use rpxprof compare --run",
                 b.k == 1 && n.k == 1 ? "each report" : (b.k == 1 ? base_path : new_path));
        json_array_append_new(warnings, json_string(w));
    }
    json_object_set_new(o, "by_cpu", by_cpu_json(&b, &n));
    json_object_set_new(o, "null_reasons", reasons);
    json_object_set_new(o, "notes", side_notes(base_path, &b, new_path, &n));
    json_object_set_new(o, "base_stats", run_stats(&b, &rb, opts->confidence));
    json_object_set_new(o, "new_stats", run_stats(&n, &rn, opts->confidence));
    json_object_set(o, "warnings", warnings);
    *out = o;
    rc = 0;
done:
    json_decref(errors);
    json_decref(warnings);
    crep_free(&b);
    crep_free(&n);
    return rc;
}

/* ---------------------------------------------------------------- folders */

static int name_cmp(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

typedef struct names { char **v; size_t n, cap; int oom; } names;

static void names_add(names *s, char *str)
{
    if (!str) { s->oom = 1; return; }
    if (s->n == s->cap) {
        char **nv = realloc(s->v, (s->cap = s->cap ? 2 * s->cap : 64) * sizeof *nv);
        if (!nv) { free(str); s->oom = 1; return; }
        s->v = nv;
    }
    s->v[s->n++] = str;
}

static void names_free(names *s)
{
    size_t i;
    for (i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

static int is_profile(const char *path)
{
    json_error_t je;
    json_t *r;
    const json_t *v;
    if (rpx__user_file_regular(path, NULL, NULL) != 0) return 1; /* comparing it names it */
    r = json_load_file(path, 0, &je);
    v = json_object_get(r, "schema");
    int ok = !r || (json_is_string(v) && !strcmp(json_string_value(v), RPX_PROFILE_SCHEMA));
    json_decref(r); /* an unreadable .json is kept: comparing it names the problem */
    return ok;
}

/* "task/model" of every DIR/<task>/<model>.json that is a profile, sorted. */
static int scan_dir(const char *dir, names *out, rpx_error *err)
{
    DIR *d = opendir(dir), *sd;
    struct dirent *e, *f;
    struct stat st;
    if (!d || stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        if (d) closedir(d);
        return rpx_error_set(err, RPX_EIO, "%s: not a folder that can be read; give the --out-dir of rpxprof batch", dir);
    }
    while ((e = readdir(d))) {
        char *sub;
        if (e->d_name[0] == '.') continue;
        if (asprintf(&sub, "%s/%s", dir, e->d_name) < 0) { out->oom = 1; break; }
        if (stat(sub, &st) || !S_ISDIR(st.st_mode) || !(sd = opendir(sub))) { free(sub); continue; }
        while ((f = readdir(sd))) {
            size_t len = strlen(f->d_name);
            char *path, *row;
            if (f->d_name[0] == '.' || len <= 5 || strcmp(f->d_name + len - 5, ".json")) continue;
            if (asprintf(&path, "%s/%s", sub, f->d_name) < 0) { out->oom = 1; continue; }
            if (is_profile(path)) {
                if (asprintf(&row, "%s/%.*s", e->d_name, (int)(len - 5), f->d_name) < 0) row = NULL;
                names_add(out, row);
            }
            free(path);
        }
        closedir(sd);
        free(sub);
    }
    closedir(d);
    if (out->oom) return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", dir);
    if (out->n) qsort(out->v, out->n, sizeof *out->v, name_cmp);
    return 0;
}

int rpx_compare_dirs(const char *base_dir, const char *new_dir, const rpx_compare_opts *opts, json_t **out,
                     rpx_error *err)
{
    names a = {0}, b = {0};
    size_t i = 0, j = 0, k, m;
    json_t *o = NULL, *rows, *ob, *on;
    double *p = NULL, *adj = NULL, logsum = 0;
    size_t nlog = 0, ncmp = 0, nref = 0;
    int rc;
    *out = NULL;
    if ((rc = scan_dir(base_dir, &a, err)) || (rc = scan_dir(new_dir, &b, err))) goto done;
    o = json_object();
    rows = json_array();
    ob = json_array();
    on = json_array();
    json_object_set_new(o, "base", json_string(base_dir));
    json_object_set_new(o, "new", json_string(new_dir));
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "only_in_base", ob);
    json_object_set_new(o, "only_in_new", on);
    while (i < a.n || j < b.n) {
        int c = i >= a.n ? 1 : j >= b.n ? -1 : strcmp(a.v[i], b.v[j]);
        if (c < 0) { json_array_append_new(ob, json_string(a.v[i++])); continue; }
        if (c > 0) { json_array_append_new(on, json_string(b.v[j++])); continue; }
        {
            char *pb, *pn, *slash = strchr(a.v[i], '/');
            json_t *row = NULL;
            rpx_error e = {0};
            if (asprintf(&pb, "%s/%s.json", base_dir, a.v[i]) < 0) { rc = RPX_ENOMEM; break; }
            if (asprintf(&pn, "%s/%s.json", new_dir, a.v[i]) < 0) { free(pb); rc = RPX_ENOMEM; break; }
            rc = rpx_compare_reports(pb, pn, opts, &row, &e);
            free(pb);
            free(pn);
            if (rc == RPX_ENOMEM) { rpx_error_set(err, rc, "out of memory"); break; }
            if (rc) {
                row = json_object();
                json_object_set_new(row, "status", json_string("refused"));
                json_object_set_new(row, "reason", json_string(e.message));
                nref++;
            } else {
                json_object_set_new(row, "status", json_string("compared"));
                ncmp++;
            }
            rc = 0;
            json_object_set_new(row, "task", json_stringn(a.v[i], (size_t)(slash - a.v[i])));
            json_object_set_new(row, "model", json_string(slash + 1));
            json_array_append_new(rows, row);
            i++;
            j++;
        }
    }
    if (rc) goto done;
    m = json_array_size(rows);
    p = malloc((m ? m : 1) * sizeof *p);
    adj = malloc((m ? m : 1) * sizeof *adj);
    if (!p || !adj) { rc = rpx_error_set(err, RPX_ENOMEM, "out of memory"); goto done; }
    for (k = 0; k < m; k++) {
        const json_t *row = json_array_get(rows, k), *v = json_object_get(row, "p_value"),
                     *r = json_object_get(row, "p50_ratio");
        p[k] = json_is_number(v) ? json_number_value(v) : NAN;
        if (json_is_number(r) && json_number_value(r) > 0) { logsum += log(json_number_value(r)); nlog++; }
    }
    if (rpx_stats_holm(p, m, adj)) { rc = rpx_error_set(err, RPX_ENOMEM, "out of memory"); goto done; }
    for (k = 0; k < m; k++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(rows, k), "status")), "compared"))
            json_object_set_new(json_array_get(rows, k), "p_value_holm", num_or_null(adj[k]));
    json_object_set_new(o, "geomean_p50_ratio", nlog ? json_real(exp(logsum / (double)nlog)) : json_null());
    json_object_set_new(o, "compared", json_integer((json_int_t)ncmp));
    json_object_set_new(o, "refused", json_integer((json_int_t)nref));
    json_object_set_new(o, "threshold", json_real(opts->threshold));
    json_object_set_new(o, "confidence", json_real(opts->confidence));
    *out = o;
    o = NULL;
done:
    json_decref(o);
    free(p);
    free(adj);
    names_free(&a);
    names_free(&b);
    return rc;
}

/* ------------------------------------------------------------- rendering */

/* Significant digits that show a value whose interval has half-width hw to
 * the second significant digit of that half-width: never more than it
 * reproduces, at most 6; `fallback` when the interval says nothing. */
static int digits_for(double hw, double v, int fallback)
{
    int d;
    if (!(hw > 0) || !isfinite(hw) || !(fabs(v) > 0) || !isfinite(v) || hw < 1e-9 * fabs(v)) return fallback;
    d = (int)floor(log10(fabs(v))) - (int)floor(log10(hw)) + 2;
    return d < 1 ? 1 : d > 6 ? 6 : d;
}

/* How `v` is written with `sig` significant digits: fixed point with that
 * many decimals (*dec) from 1e-4 to 1e6, else exponent form (*dec < 0), so
 * that no number runs to hundreds of digits. */
static int decimals_of(double v, int sig)
{
    int e = fabs(v) > 0 ? (int)floor(log10(fabs(v))) : 0;
    if (e < -4 || e >= 6) return -1;
    return sig - 1 - e < 0 ? 0 : sig - 1 - e;
}

static void put_num(rpx_strbuf *s, double v, int sig, int dec)
{
    if (!isfinite(v)) rpx__sb_str(s, "n/a");
    else if (dec < 0) rpx__sb_printf(s, "%.*e", sig - 1, v);
    else rpx__sb_printf(s, "%.*f", dec, v);
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void ci_of(const json_t *o, const char *k, double *lo, double *hi)
{
    const json_t *v = json_object_get(o, k);
    *lo = *hi = NAN;
    if (json_array_size(v) == 2) {
        *lo = json_number_value(json_array_get(v, 0));
        *hi = json_number_value(json_array_get(v, 1));
    }
}

/* "1.030 [1.012, 1.048]" or "1.03 (no interval)"; one form for the three. */
static void fmt_ratio(rpx_strbuf *s, double r, double lo, double hi)
{
    int sig, dec;
    if (!isfinite(r)) { rpx__sb_str(s, "n/a"); return; }
    if (!isfinite(lo) || !isfinite(hi)) { /* the summary's rule: "1.00", never "1" */
        char b[40];
        rpx__sb_printf(s, "%s (no interval)", rpx_format_3g(b, sizeof b, r));
        return;
    }
    sig = digits_for((hi - lo) / 2, r, 4); /* a zero-width interval: 4 digits (1.000) */
    dec = decimals_of(r, sig);
    put_num(s, r, sig, dec);
    rpx__sb_str(s, " [");
    put_num(s, lo, sig, dec);
    rpx__sb_str(s, ", ");
    put_num(s, hi, sig, dec);
    rpx__sb_str(s, "]");
}

static void fmt_ms(rpx_strbuf *s, const json_t *st, const char *name)
{
    char k[32];
    double v, lo, hi;
    snprintf(k, sizeof k, "%s_ms", name);
    v = num(st, k);
    snprintf(k, sizeof k, "%s_ms_ci", name);
    ci_of(st, k, &lo, &hi);
    if (!isfinite(v)) { rpx__sb_str(s, "n/a"); return; }
    if (isfinite(lo) && isfinite(hi)) {
        int sig = digits_for((hi - lo) / 2, v, 4);
        put_num(s, v, sig, decimals_of(v, sig));
    } else {
        char b[40];
        rpx__sb_str(s, rpx_format_3g(b, sizeof b, v)); /* the summary's rule: no exponent */
    }
}

static void fmt_p(rpx_strbuf *s, double p)
{
    if (!isfinite(p)) rpx__sb_str(s, "n/a");
    else if (p < 0.001) rpx__sb_str(s, "<0.001");
    else rpx__sb_printf(s, "%.2g", p);
}

char *rpx_compare_text(const json_t *res)
{
    rpx_strbuf s = {0};
    const json_t *bs = json_object_get(res, "base_stats"), *ns = json_object_get(res, "new_stats"),
                 *reasons = json_object_get(res, "null_reasons");
    size_t i;
    rpx__sb_printf(&s, "base: %s (%lld calls, %lld process%s)\nnew:  %s (%lld calls, %lld process%s)\n",
                   json_string_value(json_object_get(res, "base")), (long long)json_integer_value(json_object_get(bs, "calls")),
                   (long long)json_integer_value(json_object_get(bs, "processes")),
                   json_integer_value(json_object_get(bs, "processes")) == 1 ? "" : "es",
                   json_string_value(json_object_get(res, "new")), (long long)json_integer_value(json_object_get(ns, "calls")),
                   (long long)json_integer_value(json_object_get(ns, "processes")),
                   json_integer_value(json_object_get(ns, "processes")) == 1 ? "" : "es");
    rpx__sb_printf(&s, "%.0f %% intervals, %s%s; threshold ±%g %%\n\n",
                   100 * num(res, "confidence"), json_string_value(json_object_get(res, "covers")),
                   json_is_string(json_object_get(res, "design")) &&
                           strcmp(json_string_value(json_object_get(res, "design")), "paired_by_cpu") == 0
                       ? ", from the ratios of pairs run on the same CPU"
                       : "",
                   100 * num(res, "threshold"));
    rpx__sb_printf(&s, "%-6s %-12s %-12s %-28s %-8s %s\n", "", "base ms", "new ms", "new/base [interval]", "p", "verdict");
    for (i = 0; i < 3; i++) {
        char k[48];
        double lo, hi;
        rpx_strbuf cell = {0};
        rpx__sb_printf(&s, "%-6s ", cmp_names[i]);
        fmt_ms(&cell, bs, cmp_names[i]);
        rpx__sb_printf(&s, "%-12s ", cell.p ? cell.p : "");
        cell.len = 0;
        fmt_ms(&cell, ns, cmp_names[i]);
        rpx__sb_printf(&s, "%-12s ", cell.p ? cell.p : "");
        cell.len = 0;
        snprintf(k, sizeof k, "%s_ratio_ci", cmp_names[i]);
        ci_of(res, k, &lo, &hi);
        snprintf(k, sizeof k, "%s_ratio", cmp_names[i]);
        fmt_ratio(&cell, num(res, k), lo, hi);
        rpx__sb_printf(&s, "%-28s ", cell.p ? cell.p : "");
        cell.len = 0;
        if (i == 0) snprintf(k, sizeof k, "p_value");
        else snprintf(k, sizeof k, "%s_p_value", cmp_names[i]);
        fmt_p(&cell, num(res, k));
        rpx__sb_printf(&s, "%-8s ", cell.p ? cell.p : "");
        snprintf(k, sizeof k, "%s_verdict", cmp_names[i]);
        rpx__sb_printf(&s, "%s\n", json_string_value(json_object_get(res, k)));
        free(cell.p);
    }
    {
        const char *k;
        const json_t *v;
        size_t j;
        json_object_foreach((json_t *)reasons, k, v) rpx__sb_printf(&s, "%s is null: %s\n", k, json_string_value(v));
        json_array_foreach(json_object_get(res, "notes"), j, v) rpx__sb_printf(&s, "note: %s\n", json_string_value(v));
    }
    rpx__sb_printf(&s, "\nverdict: %s (p50; %s)\n", json_string_value(json_object_get(res, "verdict")),
                   json_string_value(json_object_get(res, "p_value_method")));
    if (s.oom) { free(s.p); return NULL; }
    return s.p;
}

static void md_text(rpx_strbuf *s, const char *t)
{
    for (; t && *t; t++) {
        if (*t == '|') rpx__sb_str(s, "\\|");
        else if (*t == '\n') rpx__sb_str(s, " ");
        else rpx__sb_add(s, t, 1);
    }
}

char *rpx_compare_markdown(const json_t *res)
{
    rpx_strbuf s = {0};
    const json_t *rows = json_object_get(res, "rows"), *v;
    size_t i;
    rpx__sb_printf(&s, "| task | model | base p50 ms | new p50 ms | new/base p50 [%.0f %% interval] | p (Holm) | verdict |\n"
                       "|---|---|--:|--:|--:|--:|---|\n", 100 * num(res, "confidence"));
    json_array_foreach(rows, i, v) {
        double lo, hi;
        rpx__sb_str(&s, "| ");
        md_text(&s, json_string_value(json_object_get(v, "task")));
        rpx__sb_str(&s, " | ");
        md_text(&s, json_string_value(json_object_get(v, "model")));
        if (strcmp(json_string_value(json_object_get(v, "status")), "compared")) {
            rpx__sb_str(&s, " | n/a | n/a | not comparable: ");
            md_text(&s, json_string_value(json_object_get(v, "reason")));
            rpx__sb_str(&s, " | n/a | refused |\n");
            continue;
        }
        rpx__sb_str(&s, " | ");
        fmt_ms(&s, json_object_get(v, "base_stats"), "p50");
        rpx__sb_str(&s, " | ");
        fmt_ms(&s, json_object_get(v, "new_stats"), "p50");
        rpx__sb_str(&s, " | ");
        ci_of(v, "p50_ratio_ci", &lo, &hi);
        fmt_ratio(&s, num(v, "p50_ratio"), lo, hi);
        rpx__sb_str(&s, " | ");
        fmt_p(&s, num(v, "p_value_holm"));
        rpx__sb_printf(&s, " | %s |\n", json_string_value(json_object_get(v, "verdict")));
    }
    if (json_is_number(json_object_get(res, "geomean_p50_ratio"))) {
        rpx__sb_printf(&s, "\nGeometric mean of the p50 ratios (new/base) over %lld compared rows: ",
                       (long long)json_integer_value(json_object_get(res, "compared")));
        put_num(&s, num(res, "geomean_p50_ratio"), 4, decimals_of(num(res, "geomean_p50_ratio"), 4));
        rpx__sb_str(&s, "\n");
    }
    {
        size_t j, shown = 0;
        const json_t *note;
        json_array_foreach(rows, i, v) json_array_foreach(json_object_get(v, "notes"), j, note) {
            rpx__sb_str(&s, shown++ ? "- " : "\nNotes:\n- ");
            md_text(&s, json_string_value(json_object_get(v, "task")));
            rpx__sb_str(&s, "/");
            md_text(&s, json_string_value(json_object_get(v, "model")));
            rpx__sb_str(&s, ": ");
            md_text(&s, json_string_value(note));
            rpx__sb_str(&s, "\n");
        }
    }
    if (json_array_size(json_object_get(res, "only_in_base"))) {
        rpx__sb_str(&s, "\nOnly in base:");
        json_array_foreach(json_object_get(res, "only_in_base"), i, v) { rpx__sb_str(&s, " "); md_text(&s, json_string_value(v)); }
        rpx__sb_str(&s, "\n");
    }
    if (json_array_size(json_object_get(res, "only_in_new"))) {
        rpx__sb_str(&s, "\nOnly in new:");
        json_array_foreach(json_object_get(res, "only_in_new"), i, v) { rpx__sb_str(&s, " "); md_text(&s, json_string_value(v)); }
        rpx__sb_str(&s, "\n");
    }
    if (s.oom) { free(s.p); return NULL; }
    return s.p;
}
