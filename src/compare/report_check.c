/* report_check.c — owns the one validator of a run report: its shape
 * (schemas/profile.json's keys that the readers rely on), its status, and its
 * numbers against its own samples (measured_calls, latency's percentiles,
 * processes, latency_by_process, latency_ci, recomputed with
 * rpx_stats_latency_ci), and the reference's 1 us rounding it reads the
 * reference's reports at. `rpxprof aggregate`, `rpxprof compare` and the
 * audits all call it, so a report one refuses the others refuse with the same
 * message (docs/errors.md). */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/report_check.h"
#include "rpxprof/comparison.h"
#include "rpxprof/latency.h"
#include "rpxprof/report.h"
#include "rpxprof/stats.h"

static const char *const ci_keys[4] = {"p50_ms", "p95_ms", "p99_ms", "mean_ms"};

void rpx__report_msg(json_t *arr, const char *f, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    json_array_append_new(arr, json_string(buf));
}
#define msg rpx__report_msg

static int holds_string(const json_t *arr, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), s)) return 1;
    return 0;
}

static void add_once(json_t *arr, const char *who, const char *w)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s: %s", who, w);
    if (!holds_string(arr, buf)) json_array_append_new(arr, json_string(buf));
}

void rpx__report_own_warnings(json_t *arr, const char *who, const json_t *report,
                              const json_t *also, const char *who_both)
{
    const json_t *mine = json_object_get(json_object_get(report, "system_card"), "warnings");
    const json_t *theirs = also ? json_object_get(json_object_get(also, "system_card"), "warnings") : NULL;
    const json_t *w;
    size_t i;
    json_array_foreach(mine, i, w) {
        if (!json_is_string(w)) continue;
        if (theirs && holds_string(theirs, json_string_value(w)))
            add_once(arr, who_both, json_string_value(w));
        else
            add_once(arr, who, json_string_value(w));
    }
}

static double num_or_nan(const json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

static int close_rel(double a, double b)
{
    double m = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= 1e-12 * m;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

const char *rpx__report_shape_problem(const json_t *r)
{
    static const char *strs[] = {"model_callable", "device", "precision", "unit", "status", NULL};
    static const char *lat[] = {"p50_ms", "p95_ms", "p99_ms", "mean_ms", NULL};
    const json_t *v, *s;
    size_t i;
    if (!json_is_object(r)) return "the report is not a JSON object";
    v = json_object_get(r, "schema");
    if (!json_is_string(v) || strcmp(json_string_value(v), RPX_PROFILE_SCHEMA))
        return "'schema' is not \"" RPX_PROFILE_SCHEMA "\"";
    if (!json_is_string(json_object_get(r, "status"))) return "'status' is missing or not a string";
    if (strcmp(json_string_value(json_object_get(r, "status")), "complete") != 0) return NULL;
    for (i = 0; strs[i]; i++)
        if (!json_is_string(json_object_get(r, strs[i]))) return "a string key (model_callable, device, precision, unit, inputs_sha256) is missing or not a string";
    /* null: a run without inputs (an HTTP GET, docs/targets.md) */
    v = json_object_get(r, "inputs_sha256");
    if (!json_is_string(v) && !json_is_null(v))
        return "a string key (model_callable, device, precision, unit, inputs_sha256) is missing or not a string";
    if (!json_is_integer(json_object_get(r, "warmup_calls")) || !json_is_integer(json_object_get(r, "measured_calls")))
        return "'warmup_calls' or 'measured_calls' is missing or not an integer";
    if (!json_is_object(json_object_get(r, "inputs")) || !json_is_object(json_object_get(r, "metadata")))
        return "'inputs' or 'metadata' is missing or not an object";
    v = json_object_get(r, "latency");
    if (!json_is_object(v)) return "'latency' is missing or not an object";
    for (i = 0; lat[i]; i++) {
        s = json_object_get(v, lat[i]);
        if (!s || !(json_is_number(s) || json_is_null(s))) return "a 'latency' statistic is missing or not a number";
    }
    v = json_object_get(r, "latency_samples_ms");
    if (!json_is_array(v)) return "'latency_samples_ms' is missing or not an array";
    for (i = 0; i < json_array_size(v); i++)
        if (!json_is_number(json_array_get(v, i)) || json_number_value(json_array_get(v, i)) < 0)
            return "'latency_samples_ms' holds a value that is not a number >= 0";
    if (!json_is_object(json_object_get(r, "system_card"))) return "'system_card' is missing or not an object";
    if (!json_is_object(json_object_get(r, "memory"))) return "'memory' is missing or not an object";
    return NULL;
}

/* the reference's round(v, 3) of a percentile */
double rpx_pipeline_round3(double v)
{
    static locale_t c;
    locale_t old;
    char buf[64];
    if (!isfinite(v)) return v;
    if (!c) c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    old = c ? uselocale(c) : (locale_t)0;
    snprintf(buf, sizeof buf, "%.3f", v); /* correctly rounded, ties to even: Python's round */
    v = strtod(buf, NULL);
    if (old) uselocale(old);
    return v;
}

/* A reference report's percentile against the one recomputed from its
 * samples: at the reference's 1 us rounding (profile_callable stores
 * round(x, 3); profile_depth_efficiency stores x, which rounds alike). */
static int close_at_1us(double got, double want)
{
    return rpx_pipeline_round3(got) == rpx_pipeline_round3(want) ||
           fabs(got - want) <= 0.0005 + 1e-12 * fabs(want);
}

static void check_stats(const char *file, rpx_report_kind kind, const rpx__report_checked *p, const json_t *r,
                        json_t *errors)
{
    const json_t *lat = json_object_get(r, "latency");
    static const char *names[] = {"p50_ms", "p95_ms", "p99_ms"};
    static const char *depth_names[] = {"latency_p50_ms_per_sample", "latency_p95_ms_per_sample",
                                        "latency_p99_ms_per_sample"};
    static const double qs[] = {50, 95, 99};
    double *sorted;
    size_t i;
    if (p->n == 0) {
        msg(errors, "%s: latency_samples_ms is empty; rerun the model", file);
        return;
    }
    sorted = malloc(p->n * sizeof *sorted);
    if (!sorted) return;
    memcpy(sorted, p->samples, p->n * sizeof *sorted);
    qsort(sorted, p->n, sizeof *sorted, cmp_double);
    for (i = 0; i < 3; i++) {
        double want = rpx_percentile_sorted(sorted, p->n, qs[i]);
        const json_t *got = json_object_get(lat, names[i]);
        if (kind != RPX_REPORT_RPXPROF) {
            if (!json_is_number(got) || !close_at_1us(json_number_value(got), want))
                msg(errors, "%s: %s%s is %.17g but the samples give %.17g (%.3f at the reference's 1 us "
                    "rounding); the report was altered or truncated", file,
                    kind == RPX_REPORT_REF_DEPTH ? "" : "latency.",
                    kind == RPX_REPORT_REF_DEPTH ? depth_names[i] : names[i],
                    json_is_number(got) ? json_number_value(got) : NAN, want, rpx_pipeline_round3(want));
            continue;
        }
        if (!json_is_number(got) || !close_rel(json_number_value(got), want))
            msg(errors, "%s: latency.%s is %.17g but the samples give %.17g; the report was altered or truncated",
                file, names[i], json_is_number(got) ? json_number_value(got) : NAN, want);
    }
    free(sorted);
}

/* Whether two intervals (JSON null or [lo, hi]) are the same to 1e-9 relative. */
static int same_interval(const json_t *x, const json_t *y)
{
    size_t i;
    if ((!x || json_is_null(x)) && (!y || json_is_null(y))) return 1;
    if (!json_is_array(x) || !json_is_array(y) || json_array_size(x) != 2 || json_array_size(y) != 2) return 0;
    for (i = 0; i < 2; i++) {
        double a = num_or_nan(json_array_get(x, i)), b = num_or_nan(json_array_get(y, i));
        if (!(fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)))) return 0;
    }
    return 1;
}

/* An interval [lo, hi] kept within [fastest, slowest] (a new reference; a
 * null or malformed one as it is): how an older report's interval, which
 * could reach past the calls, reads since issue 36 (a newer report's must
 * match as written). */
static json_t *within_calls(const json_t *v, double fastest, double slowest)
{
    if (!json_is_array(v) || json_array_size(v) != 2 || !(fastest <= slowest))
        return json_incref((json_t *)v);
    return json_pack("[ff]", fmax(num_or_nan(json_array_get(v, 0)), fastest),
                     fmin(num_or_nan(json_array_get(v, 1)), slowest));
}

static void interval_text(char *buf, size_t sz, const json_t *v)
{
    if (json_is_array(v) && json_array_size(v) == 2)
        snprintf(buf, sz, "[%.17g, %.17g]", num_or_nan(json_array_get(v, 0)), num_or_nan(json_array_get(v, 1)));
    else
        snprintf(buf, sz, "null");
}

/* processes, latency_by_process and latency_ci: read, checked for shape and
 * against the samples (the interval recomputed with rpx_stats_latency_ci, and
 * widened by latency_ci.widened_by_resolution_ms as the runner does, when the
 * report names the method this rpxprof uses). A report without these
 * keys (older rpxprof) is one process with no interval. */
static void read_intervals(const char *file, rpx__report_checked *p, const json_t *r, json_t *errors,
                           json_t *warnings)
{
    const json_t *v = json_object_get(r, "processes"), *bp = json_object_get(r, "latency_by_process");
    const json_t *ci = json_object_get(r, "latency_ci"), *reasons;
    size_t *off = NULL, *cnt = NULL, k, i, next = 0;
    int bp_ok = 1, j;
    if (v && !json_is_null(v)) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000000) {
            msg(errors, "%s: 'processes' is not an integer >= 1; the report was altered", file);
            return;
        }
        p->processes = (long)json_integer_value(v);
    }
    k = (size_t)p->processes;
    if (!bp || json_is_null(bp)) {
        if (k > 1) msg(errors, "%s: 'processes' is %ld but 'latency_by_process' is missing; the report is truncated",
                       file, p->processes);
        bp_ok = k == 1;
    } else if (!json_is_array(bp) || json_array_size(bp) != k) {
        msg(errors, "%s: 'latency_by_process' is not an array of 'processes' (%zu) entries; the report was altered",
            file, k);
        bp_ok = 0;
    }
    off = calloc(k, sizeof *off);
    cnt = calloc(k, sizeof *cnt);
    if (!off || !cnt) { free(off); free(cnt); return; }
    if (bp_ok && json_is_array(bp)) {
        for (i = 0; i < k; i++) {
            const json_t *o = json_object_get(json_array_get(bp, i), "sample_offset"),
                         *m = json_object_get(json_array_get(bp, i), "measured_calls");
            if (!json_is_integer(o) || !json_is_integer(m) || json_integer_value(o) != (json_int_t)next ||
                json_integer_value(m) < 0 || (size_t)json_integer_value(m) > p->n - next) {
                msg(errors, "%s: latency_by_process[%zu]: 'sample_offset' and 'measured_calls' do not follow on "
                    "from the process before within latency_samples_ms (%zu samples); the report was altered",
                    file, i, p->n);
                bp_ok = 0;
                break;
            }
            off[i] = next;
            cnt[i] = (size_t)json_integer_value(m);
            next += cnt[i];
        }
        if (bp_ok && next != p->n) {
            msg(errors, "%s: latency_by_process counts %zu calls but latency_samples_ms has %zu; the report was altered",
                file, next, p->n);
            bp_ok = 0;
        }
    } else if (bp_ok) {
        cnt[0] = p->n;
    }
    if (!ci || json_is_null(ci)) goto done;
    v = json_object_get(ci, "covers");
    if (!json_is_object(ci) || !json_is_string(v) ||
        (strcmp(json_string_value(v), "between-process") && strcmp(json_string_value(v), "within-process")) ||
        !json_is_number(json_object_get(ci, "confidence"))) {
        msg(errors, "%s: 'latency_ci' is not an object with 'covers' (between-process or within-process) and "
            "'confidence'; the report was altered", file);
        goto done;
    }
    if (!strcmp(json_string_value(v), "between-process") != (k > 1)) {
        msg(errors, "%s: latency_ci.covers is '%s' but the report ran %ld process%s; the report was altered",
            file, json_string_value(v), p->processes, k == 1 ? "" : "es");
        goto done;
    }
    p->confidence = json_number_value(json_object_get(ci, "confidence"));
    reasons = json_object_get(ci, "null_reasons");
    for (j = 0; j < 4; j++) {
        const json_t *iv = json_object_get(ci, ci_keys[j]), *why = json_object_get(reasons, ci_keys[j]);
        double lo = num_or_nan(json_array_get(iv, 0)), hi = num_or_nan(json_array_get(iv, 1));
        if (iv && json_is_null(iv)) {
            p->ci_reason[j] = strdup(json_is_string(why) ? json_string_value(why) : "no reason given");
            continue;
        }
        if (!json_is_array(iv) || json_array_size(iv) != 2 || !isfinite(lo) || !isfinite(hi) || !(lo <= hi) || lo < 0) {
            msg(errors, "%s: latency_ci.%s is not null or [lo, hi] with 0 <= lo <= hi; the report was altered",
                file, ci_keys[j]);
            continue;
        }
        p->ci[j][0] = lo;
        p->ci[j][1] = hi;
    }
    v = json_object_get(ci, "method");
    if (bp_ok && p->samples && p->n &&
        json_is_string(v) && !strcmp(json_string_value(v), k > 1 ? RPX_STATS_METHOD_BETWEEN : RPX_STATS_METHOD_WITHIN) &&
        p->confidence > 0 && p->confidence < 1) {
        json_t *want = rpx_stats_latency_ci(p->samples, off, cnt, k, p->confidence);
        /* widened by the clock's resolution when the report says so, and
         * within the fastest and slowest call (an older report's interval is
         * read within them too) */
        double res = num_or_nan(json_object_get(ci, "widened_by_resolution_ms"));
        double fastest = INFINITY, slowest = -INFINITY;
        /* a report of an rpxprof before issue 36 (no latency_ci.varied) */
        const int older = !json_object_get(ci, "varied");
        size_t c;
        for (c = 0; c < p->n; c++) {
            fastest = fmin(fastest, p->samples[c]);
            slowest = fmax(slowest, p->samples[c]);
        }
        for (j = 0; want && j < 4; j++) {
            json_t *got = older ? within_calls(json_object_get(ci, ci_keys[j]), fastest, slowest)
                                : json_incref(json_object_get(ci, ci_keys[j]));
            json_t *w = json_object_get(want, ci_keys[j]);
            if (isfinite(res) && res > 0 && json_is_array(w) && json_array_size(w) == 2) {
                double lo = fmax(json_number_value(json_array_get(w, 0)) - res, fastest);
                json_array_set_new(w, 0, json_real(lo > 0 ? lo : 0));
                json_array_set_new(w, 1, json_real(fmin(json_number_value(json_array_get(w, 1)) + res, slowest)));
            }
            if (!same_interval(got, w)) {
                char g[96], wb[96];
                interval_text(g, sizeof g, json_object_get(ci, ci_keys[j])); /* as written */
                interval_text(wb, sizeof wb, w);
                msg(errors, "%s: latency_ci.%s is %s but the samples give %s; the report was altered or truncated",
                    file, ci_keys[j], g, wb);
            }
            json_decref(got);
        }
        json_decref(want);
    } else if (bp_ok) {
        msg(warnings, "%s: latency_ci was computed by a method this rpxprof does not use ('%s'); its intervals are "
            "shown as the report gives them, not checked against the samples",
            file, json_is_string(v) ? json_string_value(v) : "(none)");
    }
    p->covers = strdup(json_string_value(json_object_get(ci, "covers")));
done:
    if (bp_ok) {
        p->offsets = off;
        p->counts = cnt;
    } else {
        free(off);
        free(cnt);
    }
}

int rpx__report_check(const char *file, const json_t *r, rpx_report_kind kind, json_t *errors,
                      json_t *warnings, rpx__report_checked *p)
{
    const json_t *v = json_object_get(r, "status");
    size_t i;
    int j;
    memset(p, 0, sizeof *p);
    p->processes = 1;
    p->confidence = NAN;
    for (j = 0; j < 4; j++) p->ci[j][0] = p->ci[j][1] = NAN;
    if (!json_is_string(v) || strcmp(json_string_value(v), "complete") != 0) {
        const json_t *e = json_object_get(r, "error");
        msg(errors, "%s: status is '%s', not complete (%s); only complete reports are compared or aggregated",
            file, json_is_string(v) ? json_string_value(v) : "(missing)",
            json_is_string(e) ? json_string_value(e) : "no error given");
        return 0;
    }
    p->measured = (long)json_integer_value(json_object_get(r, "measured_calls"));
    v = json_object_get(r, "latency_samples_ms");
    p->n = json_array_size(v);
    p->samples = malloc((p->n ? p->n : 1) * sizeof *p->samples);
    if (!p->samples) return -1;
    for (i = 0; i < p->n; i++) p->samples[i] = json_number_value(json_array_get(v, i));
    if ((long)p->n != p->measured)
        msg(errors, "%s: measured_calls is %ld but latency_samples_ms has %zu samples; the report is truncated",
            file, p->measured, p->n);
    check_stats(file, kind, p, r, errors);
    if ((long)p->n == p->measured) read_intervals(file, p, r, errors, warnings);
    v = json_object_get(json_object_get(r, "latency"), "p50_ms");
    if (!(json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) > 0))
        msg(errors, "%s: latency.p50_ms is not a finite positive number", file);
    return 1;
}

void rpx__report_check_free(rpx__report_checked *c)
{
    int j;
    free(c->samples);
    free(c->offsets);
    free(c->counts);
    free(c->covers);
    for (j = 0; j < 4; j++) free(c->ci_reason[j]);
    memset(c, 0, sizeof *c);
}

int rpx_report_check(const char *file, const json_t *report, json_t *errors, json_t *warnings)
{
    const char *prob = rpx__report_shape_problem(report);
    size_t before = json_array_size(errors);
    rpx__report_checked c;
    int k;
    if (prob) {
        msg(errors, "%s: does not match schemas/profile.json: %s", file, prob);
        return (int)(json_array_size(errors) - before);
    }
    k = rpx__report_check(file, report, RPX_REPORT_RPXPROF, errors, warnings, &c);
    rpx__report_check_free(&c);
    return k < 0 ? k : (int)(json_array_size(errors) - before);
}
