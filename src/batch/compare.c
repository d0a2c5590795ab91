/* compare.c — owns `rpxprof compare`'s library side: reading two reports (or
 * two folders of them), refusing what cannot be compared (unreadable files,
 * aggregate's same-work check), the notes about the two files, Holm over the
 * rows of two folders, and the text and Markdown tables (docs/statistics.md).
 * The statistics (the ratio NEW/BASE of p50, p95 and mean with its interval,
 * p-value and verdict) are src/compare/two_reports.c's. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/strbuf.h"
#include "common/user_file.h"
#include "compare/comparable.h"
#include "compare/report_check.h"
#include "compare/two_reports.h"
#include "loader/kinds.h"
#include "report/layers_view.h"
#include "rpxprof/aggregate.h"
#include "rpxprof/compare.h"
#include "rpxprof/summary.h"
#include "rpxprof/error.h"
#include "rpxprof/report.h"
#include "rpxprof/stats.h"

/* Reads a report file (the file's own problems: missing, a FIFO, not JSON)
 * and checks it with the validator aggregate uses (src/compare/two_reports.c):
 * every problem it finds, in its words, joined into one message. */
static int load_report(const char *path, rpx__cmp_side *c, json_t *warnings, rpx_error *err)
{
    json_error_t je;
    json_t *r;
    int rc;
    memset(c, 0, sizeof *c);
    if (rpx__user_file_regular(path, NULL, err) != 0) return RPX_EFORMAT; /* a FIFO would block */
    r = json_load_file(path, 0, &je);
    if (!r) {
        struct stat st;
        if (stat(path, &st) != 0)
            return rpx_error_set(err, RPX_EFORMAT, "%s: the file does not exist; give a report written by rpxprof run", path);
        return rpx_error_set(err, RPX_EFORMAT, "%s: not valid JSON (line %d: %s); give a report written by rpxprof run",
                             path, je.line, je.text);
    }
    rc = rpx__cmp_side_load(r, path, c, warnings, err);
    json_decref(r);
    return rc;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static const char *kind_what(const char *kind)
{
    const rpx_kind *row = rpx__kind_find(kind);
    return row ? row->what : "a target rpxprof does not describe";
}

/* What a reader of the ratio must know about the two sides: targets of
 * different kinds (their samples time different work), one file given twice,
 * or two files holding the same samples (compared with itself). */
static json_t *side_notes(const char *bp, const rpx__cmp_side *b, const char *np, const rpx__cmp_side *n)
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

int rpx_compare_reports(const char *base_path, const char *new_path, const rpx_compare_opts *opts, json_t **out,
                        rpx_error *err)
{
    rpx__cmp_side b, n;
    json_t *errors, *warnings, *notes, *diffs = NULL, *incomparable = NULL;
    size_t i;
    int rc;
    *out = NULL;
    warnings = json_array();
    if ((rc = load_report(base_path, &b, warnings, err))) { json_decref(warnings); return rc; }
    if ((rc = load_report(new_path, &n, warnings, err))) { rpx__cmp_side_free(&b); json_decref(warnings); return rc; }
    /* comparable at all (the sessions' fingerprints), before any statistics */
    notes = json_array();
    if ((rc = rpx__cmp_comparable(base_path, b.r, new_path, n.r, opts, notes, &diffs, &incomparable, err)) != 0 ||
        incomparable) {
        if (incomparable) {
            rpx__report_own_warnings(warnings, "base", b.r, n.r, "base and new");
            rpx__report_own_warnings(warnings, "new", n.r, b.r, "base and new");
            json_object_set_new(incomparable, "warnings", warnings);
            warnings = NULL;
        }
        *out = incomparable;
        json_decref(notes);
        json_decref(warnings);
        rpx__cmp_side_free(&b);
        rpx__cmp_side_free(&n);
        return rc;
    }
    errors = json_array();
    rpx_aggregate_same_work(base_path, b.r, new_path, n.r, errors, warnings);
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
        json_decref(warnings);
    } else {
        /* the verdict carries the warnings of the reports it was made from */
        rpx__report_own_warnings(warnings, "base", b.r, n.r, "base and new");
        rpx__report_own_warnings(warnings, "new", n.r, b.r, "base and new");
        json_t *more = side_notes(base_path, &b, new_path, &n);
        json_array_extend(notes, more);
        json_decref(more);
        rpx_compare_opts o1 = *opts;  /* one session.id: one session, one drift */
        if (rpx__cmp_one_session(b.r, n.r)) o1.same_session = 1;
        rc = rpx__cmp_sides(&b, &n, &o1, notes, warnings, out, err);
        notes = NULL;
        if (rc == 0) { /* what the sessions' fingerprints differ in, each a note */
            json_object_set_new(*out, "differences", diffs ? diffs : json_array());
            diffs = NULL;
        }
    }
    json_decref(notes);
    json_decref(diffs);
    json_decref(errors);
    rpx__cmp_side_free(&b);
    rpx__cmp_side_free(&n);
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

static const char *const cmp_names[] = {"p50", "p95", "mean"}; /* the statistics compared */

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

/* An incomparable result: what differs, in words, and the verdict; no table. */
static char *incomparable_text(const json_t *res)
{
    rpx_strbuf s = {0};
    const json_t *v;
    size_t j;
    rpx__sb_printf(&s, "base: %s (session %s)\nnew:  %s (session %s)\n\n",
                   json_string_value(json_object_get(res, "base")),
                   json_is_string(json_object_get(res, "base_session")) ? json_string_value(json_object_get(res, "base_session")) : "n/a",
                   json_string_value(json_object_get(res, "new")),
                   json_is_string(json_object_get(res, "new_session")) ? json_string_value(json_object_get(res, "new_session")) : "n/a");
    json_array_foreach(json_object_get(res, "notes"), j, v) rpx__sb_printf(&s, "- %s\n", json_string_value(v));
    rpx__sb_printf(&s, "\nverdict: incomparable (%s)\n", json_string_value(json_object_get(res, "why")));
    if (s.oom) { free(s.p); return NULL; }
    return s.p;
}

char *rpx_compare_text(const json_t *res)
{
    rpx_strbuf s = {0};
    const json_t *bs = json_object_get(res, "base_stats"), *ns = json_object_get(res, "new_stats"),
                 *reasons = json_object_get(res, "null_reasons");
    size_t i;
    if (json_is_string(json_object_get(res, "verdict")) &&
        !strcmp(json_string_value(json_object_get(res, "verdict")), "incomparable"))
        return incomparable_text(res);
    rpx__sb_printf(&s, "base: %s (%lld calls, %lld process%s)\nnew:  %s (%lld calls, %lld process%s)\n",
                   json_string_value(json_object_get(res, "base")), (long long)json_integer_value(json_object_get(bs, "calls")),
                   (long long)json_integer_value(json_object_get(bs, "processes")),
                   json_integer_value(json_object_get(bs, "processes")) == 1 ? "" : "es",
                   json_string_value(json_object_get(res, "new")), (long long)json_integer_value(json_object_get(ns, "calls")),
                   (long long)json_integer_value(json_object_get(ns, "processes")),
                   json_integer_value(json_object_get(ns, "processes")) == 1 ? "" : "es");
    rpx__sb_printf(&s, "%.0f %% intervals, %s%s; threshold ±%g %%\n",
                   100 * num(res, "confidence"), json_string_value(json_object_get(res, "covers")),
                   json_is_string(json_object_get(res, "design")) &&
                           strcmp(json_string_value(json_object_get(res, "design")), "paired_by_cpu") == 0
                       ? ", from the ratios of pairs run on the same CPU"
                       : "",
                   100 * num(res, "threshold"));
    {   /* two reports of different sessions: with what the drift was allowed for */
        const json_t *btw = json_object_get(res, "between_session"), *ws = json_object_get(res, "within_session");
        if (json_is_object(btw))
            rpx__sb_printf(&s, "the drift between the two sessions included (%s: sigma %.2g %% between sessions; "
                           "each report's own intervals: %s, one session each)\n",
                           json_string_value(json_object_get(btw, "source")),
                           100 * num(btw, "sigma_between_log"), json_string_value(json_object_get(ws, "covers")));
    }
    rpx__sb_str(&s, "\n");
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
    rpx__layers_compare_text(&s, json_object_get(res, "layers"));
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
        if (!strcmp(json_string_value(json_object_get(v, "verdict")), "incomparable")) {
            size_t j;
            const json_t *d;
            rpx__sb_str(&s, " | n/a | n/a | incomparable sessions, differ in:");
            json_array_foreach(json_object_get(v, "differences"), j, d)
                if (!strcmp(json_string_value(json_object_get(d, "effect")), "incomparable")) {
                    rpx__sb_str(&s, " ");
                    md_text(&s, json_string_value(json_object_get(d, "field")));
                }
            rpx__sb_str(&s, " | n/a | incomparable |\n");
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
