/* aggregate.c — owns `rpxprof aggregate`: reading every DIR/<task>/<model>.json,
 * checking each report (its statistics and intervals against its samples) and
 * that the reports measured the same work on the same kind of machine, and
 * writing summary.csv (every number at full precision), summary.md (values
 * with their 95 % intervals, printed
 * to the digits the interval justifies), validation.json and figure.svg
 * (docs/batch.md), through output guards opened before any report is read
 * (src/common/output.c). */
#include <dirent.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/strbuf.h"
#include "common/user_file.h"
#include "common/json.h"
#include "rpxprof/manifest.h"
#include "rpxprof/aggregate.h"
#include "rpxprof/session.h"
#include "rpxprof/plot.h"
#include "rpxprof/error.h"
#include "rpxprof/latency.h"
#include "common/output.h"
#include "batch/pipeline.h"
#include "rpxprof/report.h"
#include "rpxprof/stats.h"

#include "compare/report_check.h"
#include "report/layers_view.h"

/* What is kept of one report once its JSON is freed. */
typedef struct rep {
    char *file, *task, *model;
    int ok_parse, complete;
    rpx_report_kind kind;         /* which tool wrote it (rpxprof, or the reference) */
    /* same-work keys (serialised), NULL when absent */
    char *sha, *shapes, *unit, *meta, *device, *precision, *cvd, *gpu, *cpu;
    char *driver, *governor, *os, *created;
    char *mode;                   /* the run's schedule (open-loop load or pacing), NULL: neither */
    char *placement;              /* the placement policy and its CPUs (placement_of) */
    char *audit;                  /* the audits' verdicts ("cache suspect, seed pass"), NULL: none */
    char *session;                /* its session's id (rpx_session_of_report), NULL: not read */
    json_t *layers_ops;           /* --layers: its layers.by_op_type (a copy), NULL: none */
    long warmup, measured;
    double xnum[7];               /* streamed, load and paced runs (x_cols), NaN when n/a */
    double num[16];               /* the CSV's numbers, NaN when unknown */
    double *samples;
    size_t n;
    long processes;               /* 1 for a report older than `processes` */
    /* latency_ci: covers NULL when the report has none (older rpxprof) */
    char *covers;
    double confidence;
    double ci[4][2];              /* p50, p95, p99, mean: [lo, hi], NaN when null */
    char *ci_reason[4];           /* why an interval is null (malloc'ed) or NULL */
} rep;

/* Streamed responses (http.streaming), open-loop load (http.load) and paced
 * runs (pacing): their headline numbers, n/a for the other reports. */
enum { X_TTFT, X_ITL, X_LOAD_RATE, X_LOAD_ACHIEVED, X_LOAD_P99, X_PACE_RATE, X_PACE_ACHIEVED, X_COUNT };
static const char *const x_cols[X_COUNT] = {"ttft_p50_ms", "itl_p50_ms", "load_requested_rate_per_s",
                                            "load_achieved_rate_per_s", "load_p99_from_intended_ms",
                                            "paced_rate_hz", "paced_achieved_rate_hz"};

/* The schedule a run was asked for, as text compared between reports of the
 * same task (NULL: one call after another). */
static char *mode_of(const json_t *r)
{
    const json_t *ld = json_object_get(json_object_get(r, "http"), "load"), *pc = json_object_get(r, "pacing");
    char buf[256];
    if (json_is_object(ld)) {
        snprintf(buf, sizeof buf, "open-loop load at %.17g/s, %lld requests, %s arrivals, concurrency %lld",
                 json_number_value(json_object_get(ld, "requested_rate_per_s")),
                 (long long)json_integer_value(json_object_get(ld, "scheduled")),
                 json_is_string(json_object_get(ld, "arrivals")) ? json_string_value(json_object_get(ld, "arrivals")) : "?",
                 (long long)json_integer_value(json_object_get(ld, "concurrency")));
        return strdup(buf);
    }
    if (json_is_object(pc)) {
        snprintf(buf, sizeof buf, "paced at %.17g Hz", json_number_value(json_object_get(pc, "rate_hz")));
        return strdup(buf);
    }
    return NULL;
}

/* The placement a run was asked for, as text compared between reports of the
 * same task: "inherit", "pinned to CPUs 1", "spread over CPUs 0,1". A report of
 * rpxprof without `placement` (before issue 27) inherited its mask; the
 * reference's: NULL (not recorded). */
static char *placement_of(const json_t *r, int rpxprof)
{
    const json_t *pl = json_object_get(r, "placement"), *req, *v;
    const char *policy = json_string_value(json_object_get(pl, "policy"));
    char buf[512];
    size_t i;
    int n;
    if (!json_is_object(pl) || !policy) return rpxprof ? strdup("inherit") : NULL;
    req = json_object_get(pl, "cpus_requested");
    if (strcmp(policy, "inherit") == 0 || (strcmp(policy, "spread") == 0 && !json_is_array(req)))
        return strdup(policy);
    n = snprintf(buf, sizeof buf, "%s CPUs ", strcmp(policy, "pinned") == 0 ? "pinned to"
                                                                             : "spread over");
    json_array_foreach(req, i, v) if (n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%lld", i ? "," : "",
                      (long long)json_integer_value(v));
    return strdup(buf);
}

enum { N_PARAMS, N_FLOPS, N_MACS, N_P50, N_P95, N_P99, N_MEAN, N_PERFRAME, N_TPUT, N_CPULIFE,
       N_CPUINF, N_CUDA, N_COUNT };

typedef struct agg {
    json_t *errors, *warnings;
    rep *reps;
    size_t nreps, cap;
} agg;

#define msg rpx__report_msg /* report_check.c: one message appender for both */

/* A JSON value serialised canonically (NULL for absent); strings unquoted. */
static char *canon(const json_t *v)
{
    if (!v || json_is_null(v)) return NULL;
    if (json_is_string(v)) return strdup(json_string_value(v));
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static double num_or_nan(const json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

/* The streamed, load and paced numbers (xnum, NaN beforehand: read_report) and the schedule. */
static void read_modes(rep *p, const json_t *r)
{
    const json_t *http = json_object_get(r, "http"), *st = json_object_get(http, "streaming"),
                 *ld = json_object_get(http, "load"), *pc = json_object_get(r, "pacing");
    p->mode = mode_of(r);
    if (json_is_object(st)) {
        p->xnum[X_TTFT] = num_or_nan(json_object_get(json_object_get(st, "ttft_ms"), "p50_ms"));
        p->xnum[X_ITL] = num_or_nan(json_object_get(json_object_get(st, "itl_ms"), "p50_ms"));
    }
    if (json_is_object(ld)) {
        p->xnum[X_LOAD_RATE] = num_or_nan(json_object_get(ld, "requested_rate_per_s"));
        p->xnum[X_LOAD_ACHIEVED] = num_or_nan(json_object_get(ld, "achieved_rate_per_s"));
        /* the report's latency of a load run runs from each request's intended send time */
        p->xnum[X_LOAD_P99] = num_or_nan(json_object_get(json_object_get(r, "latency"), "p99_ms"));
    }
    if (json_is_object(pc)) {
        p->xnum[X_PACE_RATE] = num_or_nan(json_object_get(pc, "rate_hz"));
        p->xnum[X_PACE_ACHIEVED] = num_or_nan(json_object_get(pc, "achieved_rate_hz"));
    }
}

static char *shapes_of(const json_t *inputs)
{
    json_t *o = json_object();
    const char *k;
    json_t *v;
    char *s;
    json_object_foreach((json_t *)inputs, k, v) json_object_set(o, k, json_object_get(v, "shape"));
    s = canon(o);
    json_decref(o);
    return s;
}

/* Whole-file read + json_loadb: several times faster than json_load_file's getc loop. */
static json_t *load_json(const char *path, json_error_t *je)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    json_t *r;
    if (!f) return json_load_file(path, 0, je); /* its error names the cause */
    for (;;) {
        if (cap - len < 65536) {
            char *nb = realloc(buf, cap = cap ? cap * 2 : 262144);
            if (!nb) { free(buf); fclose(f); return json_load_file(path, 0, je); }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    fclose(f);
    r = json_loadb(buf, len, 0, je);
    free(buf);
    return r;
}

/* The report's audit (docs/audits.md): the verdicts as one cell, and a
 * suspect one an error (a warning with allow_failures). */
static void read_audit(agg *a, rep *p, const json_t *r, int allow_failures)
{
    static const char *const names[] = {"cache", "seed"};
    const json_t *au = json_object_get(r, "audit");
    char cell[128] = "";
    size_t i, len = 0;
    if (!json_is_object(au)) return;
    for (i = 0; i < 2; i++) {
        const json_t *o = json_object_get(au, names[i]), *ci = json_object_get(o, "ci");
        const char *v = json_string_value(json_object_get(o, "verdict"));
        if (!v) continue;
        len += (size_t)snprintf(cell + len, sizeof cell - len, "%s%s %s", len ? ", " : "", names[i], v);
        if (len >= sizeof cell) len = sizeof cell - 1;
        if (strcmp(v, "suspect") == 0)
            msg(allow_failures ? a->warnings : a->errors,
                "%s: --audit %s says suspect (ratio %.3g, 95%% interval [%.3g, %.3g]): %s; "
                "rerun the job on %s%s (docs/audits.md)",
                p->file, names[i], num_or_nan(json_object_get(o, "ratio")),
                num_or_nan(json_array_get(ci, 0)), num_or_nan(json_array_get(ci, 1)),
                i == 0 ? "the target answers a repeated input faster, so its numbers may measure a cache"
                       : "the result moved with another sample-order/schedule seed",
                i == 0 ? "distinct inputs with the cache off" : "more samples or more calls",
                allow_failures ? "" : ", or pass --allow-audit-failures to publish it anyway");
    }
    if (len) p->audit = strdup(cell);
}

/* A report of the reference's (profile_callable.py, profile_depth_efficiency.py)
 * in rpxprof's shape, with a warning naming what it does not record; r is
 * taken. NULL when it does not hold up (the errors say why). */
static json_t *reference_normalized(agg *a, rep *p, json_t *r, int allow_incomplete)
{
    json_t *missing = json_array(), *n;
    rpx_strbuf list = {0};
    size_t k;
    n = rpx_pipeline_normalize(r, p->kind, p->file, p->task, p->model, allow_incomplete, a->errors,
                               a->warnings, missing);
    json_decref(r);
    if (!n) {
        json_decref(missing);
        return NULL;
    }
    for (k = 0; k < json_array_size(missing); k++) {
        if (k) rpx__sb_str(&list, ", ");
        rpx__sb_str(&list, json_string_value(json_array_get(missing, k)));
    }
    msg(a->warnings, "%s: written by %s, not by rpxprof: its task and model are its path, its percentiles "
        "are checked at the reference's 1 us rounding, it has no intervals, and what it does not record is "
        "n/a: %s", p->file, rpx_pipeline_kind_name(p->kind), list.p ? list.p : "nothing");
    free(list.p);
    json_decref(missing);
    return n;
}

static void read_report(agg *a, rep *p, int allow_incomplete, int allow_audit)
{
    json_error_t je;
    json_t *r = NULL, *v, *eff, *mem, *card, *rt;
    const char *prob;
    size_t i;
    rpx_error fe = {0};
    for (i = 0; i < N_COUNT; i++) p->num[i] = NAN;
    for (i = 0; i < X_COUNT; i++) p->xnum[i] = NAN;
    if (rpx__user_file_regular(p->file, NULL, &fe) != 0) { /* a FIFO would block the read */
        msg(a->errors, "%s", fe.message);
        return;
    }
    r = load_json(p->file, &je);
    if (!r) {
        msg(a->errors, "%s: not valid JSON (line %d: %s); the report is truncated or corrupt, rerun the job with rpxprof batch",
            p->file, je.line, je.text);
        return;
    }
    p->kind = rpx_pipeline_report_kind(r);
    if (p->kind == RPX_REPORT_REF_CALLABLE || p->kind == RPX_REPORT_REF_DEPTH) {
        if (!(r = reference_normalized(a, p, r, allow_incomplete))) return;
    } else if ((prob = rpx__report_shape_problem(r)) != NULL) {
        if (p->kind == RPX_REPORT_UNKNOWN)
            msg(a->errors, "%s: not a report rpxprof knows: no 'schema' (rpxprof.profile/1), and not one of the "
                "reference's either (profile_callable.py: timing_scope, latency, latency_samples_ms, "
                "measured_calls; profile_depth_efficiency.py: model, task, latency_p50_ms_per_sample, "
                "latency_samples_ms)", p->file);
        else
            msg(a->errors, "%s: does not match schemas/profile.json: %s", p->file, prob);
        json_decref(r);
        return;
    }
    p->ok_parse = 1;
    v = json_object_get(r, "task");
    if (!json_is_string(v) || strcmp(json_string_value(v), p->task))
        msg(a->errors, "%s: report task '%s' does not match its folder '%s'", p->file,
            json_is_string(v) ? json_string_value(v) : "(missing)", p->task);
    v = json_object_get(r, "model_name");
    if (!json_is_string(v) || strcmp(json_string_value(v), p->model))
        msg(a->errors, "%s: report model_name '%s' does not match its file name '%s'", p->file,
            json_is_string(v) ? json_string_value(v) : "(missing)", p->model);
    p->device = canon(json_object_get(r, "device"));
    p->precision = canon(json_object_get(r, "precision"));
    p->unit = canon(json_object_get(r, "unit"));
    p->created = canon(json_object_get(r, "created_utc"));
    {   /* the session it was measured in (one derived for a report older than sessions) */
        json_t *ses = NULL;
        if (rpx_session_of_report(r, &ses, NULL) == 0 && json_is_string(json_object_get(ses, "id")))
            p->session = strdup(json_string_value(json_object_get(ses, "id")));
        json_decref(ses);
    }
    p->placement = placement_of(r, p->kind == RPX_REPORT_RPXPROF);
    {
        rpx__report_checked c;
        int k = rpx__report_check(p->file, r, p->kind, a->errors, a->warnings, &c);
        if (k != 1) {
            rpx__report_check_free(&c);
            json_decref(r);
            return;
        }
        /* the verdict carries the warnings of the reports it was made from */
        {
            char who[1024];
            snprintf(who, sizeof who, "%s/%s", p->task, p->model);
            rpx__report_own_warnings(a->warnings, who, r, NULL, NULL);
        }
        /* what the checks read is kept (the tables and the figure show it) */
        p->measured = c.measured;
        p->samples = c.samples;
        p->n = c.n;
        p->processes = c.processes;
        p->covers = c.covers;
        p->confidence = c.confidence;
        memcpy(p->ci, c.ci, sizeof p->ci);
        memcpy(p->ci_reason, c.ci_reason, sizeof p->ci_reason);
        free(c.offsets);
        free(c.counts);
    }
    p->complete = 1;
    read_audit(a, p, r, allow_audit);
    if (json_is_array(json_object_get(json_object_get(r, "layers"), "by_op_type")))
        p->layers_ops = json_deep_copy(json_object_get(json_object_get(r, "layers"), "by_op_type"));
    read_modes(p, r);
    p->sha = canon(json_object_get(r, "inputs_sha256"));
    v = json_object_get(r, "inputs");
    p->shapes = json_object_size(v) ? shapes_of(v) : NULL; /* the pipeline's reports name no arrays */
    p->meta = canon(json_object_get(r, "metadata"));
    p->warmup = (long)json_integer_value(json_object_get(r, "warmup_calls"));
    card = json_object_get(r, "system_card");
    v = json_object_get(json_object_get(card, "environment"), "CUDA_VISIBLE_DEVICES");
    /* the reference records no environment: unknown, not unset */
    p->cvd = json_is_string(v) ? canon(v) : p->kind == RPX_REPORT_RPXPROF ? strdup("(unset)") : NULL;
    p->gpu = canon(json_object_get(card, "gpu_name"));
    p->cpu = canon(json_object_get(card, "cpu_name"));
    p->driver = canon(json_object_get(card, "driver_version"));
    p->governor = canon(json_object_get(json_object_get(card, "cpu"), "governor"));
    p->os = canon(json_object_get(card, "os"));
    v = json_object_get(r, "latency");
    p->num[N_P50] = num_or_nan(json_object_get(v, "p50_ms"));
    p->num[N_P95] = num_or_nan(json_object_get(v, "p95_ms"));
    p->num[N_P99] = num_or_nan(json_object_get(v, "p99_ms"));
    p->num[N_MEAN] = num_or_nan(json_object_get(v, "mean_ms"));
    eff = json_object_get(r, "efficiency");
    p->num[N_PARAMS] = num_or_nan(json_object_get(eff, "params"));
    p->num[N_FLOPS] = num_or_nan(json_object_get(eff, "flops"));
    p->num[N_MACS] = num_or_nan(json_object_get(eff, "macs"));
    if (p->kind != RPX_REPORT_RPXPROF) {
        /* the reference's headline values were checked by rpx_pipeline_normalize */
    } else if (json_is_string(json_object_get(eff, "source")) &&
        !(isfinite(p->num[N_PARAMS]) && p->num[N_PARAMS] > 0))
        msg(a->errors, "%s: efficiency.params is not a finite positive number although a cost was asked for (efficiency.source '%s')",
            p->file, json_string_value(json_object_get(eff, "source")));
    if (p->kind == RPX_REPORT_RPXPROF && !isfinite(p->num[N_FLOPS])) {
        if (allow_incomplete)
            msg(a->warnings, "%s: efficiency.flops is unavailable (allowed by --allow-incomplete-flops)", p->file);
        else
            msg(a->errors, "%s: efficiency.flops is unavailable; give the model a \"cost\" (ONNX) or \"flops\" in the manifest, or pass --allow-incomplete-flops",
                p->file);
    }
    rt = json_object_get(r, "realtime_budget");
    p->num[N_PERFRAME] = num_or_nan(json_object_get(rt, "per_frame_ms"));
    p->num[N_TPUT] = num_or_nan(json_object_get(rt, "throughput_per_s"));
    mem = json_object_get(r, "memory");
    p->num[N_CPULIFE] = num_or_nan(json_object_get(mem, "cpu_process_lifetime_peak_mb"));
    p->num[N_CPUINF] = num_or_nan(json_object_get(mem, "cpu_inference_peak_mb"));
    {
        const char *k;
        double mx = NAN;
        json_object_foreach(json_object_get(mem, "cuda_peak_allocated_mb_by_visible_device"), k, v)
            if (json_is_number(v) && !(json_number_value(v) <= mx)) mx = json_number_value(v);
        p->num[N_CUDA] = mx;
    }
    json_decref(r);
}

static int same(const char *x, const char *y) { return (!x && !y) || (x && y && strcmp(x, y) == 0); }

static void cmp_field(json_t *arr, const char *what, const rep *p, const char *pv, const rep *q, const char *qv)
{
    if (!same(pv, qv))
        msg(arr, "%s differs: %s in %s but %s in %s", what, pv ? pv : "null", p->file, qv ? qv : "null", q->file);
}

static void cmp_long(json_t *arr, const char *what, const rep *p, long pv, const rep *q, long qv)
{
    if (pv != qv) msg(arr, "%s differs: %ld in %s but %ld in %s", what, pv, p->file, qv, q->file);
}

/* Two reports' values compared: always between rpxprof reports; with a
 * report of the reference only when both know the value (it records less). */
static void cmp_known(json_t *arr, const char *what, const rep *p, const char *pv, const rep *q, const char *qv)
{
    if ((p->kind == RPX_REPORT_RPXPROF && q->kind == RPX_REPORT_RPXPROF) || (pv && qv))
        cmp_field(arr, what, p, pv, q, qv);
}

static void cross_checks(agg *a)
{
    size_t i, k;
    const rep *first = NULL;
    for (i = 0; i < a->nreps; i++) {
        rep *p = &a->reps[i];
        if (!p->complete) continue;
        if (!first) first = p;
        else {
            cmp_known(a->errors, "device", first, first->device, p, p->device);
            cmp_known(a->errors, "precision", first, first->precision, p, p->precision);
            cmp_known(a->errors, "CUDA_VISIBLE_DEVICES (system_card.environment)", first, first->cvd, p, p->cvd);
            cmp_known(a->errors, "GPU model (system_card.gpu_name)", first, first->gpu, p, p->gpu);
            cmp_known(a->errors, "CPU model (system_card.cpu_name)", first, first->cpu, p, p->cpu);
            cmp_known(a->warnings, "driver (system_card.driver_version)", first, first->driver, p, p->driver);
            cmp_known(a->warnings, "CPU governor (system_card.cpu.governor)", first, first->governor, p, p->governor);
            cmp_known(a->warnings, "OS (system_card.os)", first, first->os, p, p->os);
        }
        /* same work: the first complete report of this task */
        for (k = 0; k < i; k++) {
            rep *q = &a->reps[k];
            if (!q->complete || strcmp(q->task, p->task)) continue;
            cmp_known(a->errors, "inputs_sha256 (same task, different inputs)", q, q->sha, p, p->sha);
            cmp_known(a->errors, "input shapes", q, q->shapes, p, p->shapes);
            cmp_known(a->errors, "unit", q, q->unit, p, p->unit);
            cmp_long(a->errors, "warmup_calls", q, q->warmup, p, p->warmup);
            cmp_long(a->errors, "measured_calls", q, q->measured, p, p->measured);
            cmp_long(a->errors, "processes", q, q->processes, p, p->processes);
            cmp_known(a->errors, "schedule (http.load: requested_rate_per_s, scheduled, arrivals, concurrency; pacing.rate_hz)",
                      q, q->mode, p, p->mode);
            cmp_known(a->errors, "metadata", q, q->meta, p, p->meta);
            cmp_known(a->errors, "placement policy (placement: --cpus, --spread; models of a task "
                      "run on the same CPUs, or the ratio compares the CPUs)",
                      q, q->placement, p, p->placement);
            break;
        }
    }
}

static int add_rep(agg *a, const char *dir, const char *task, const char *file)
{
    rep *p;
    size_t len = strlen(file);
    if (a->nreps == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        rep *n = realloc(a->reps, cap * sizeof *n);
        if (!n) return RPX_ENOMEM;
        a->reps = n;
        a->cap = cap;
    }
    p = &a->reps[a->nreps];
    memset(p, 0, sizeof *p);
    if (asprintf(&p->file, "%s/%s/%s", dir, task, file) < 0) { p->file = NULL; return RPX_ENOMEM; }
    p->task = strdup(task);
    p->model = strndup(file, len - 5);
    if (!p->task || !p->model) { free(p->file); free(p->task); free(p->model); return RPX_ENOMEM; }
    a->nreps++;
    return 0;
}

static int name_cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Sorted entries of a folder (malloc'ed array of malloc'ed names). */
static char **list_dir(const char *path, size_t *n)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    if (!d) return NULL;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (*n == cap) {
            char **nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *nv);
            if (!nv) break;
            v = nv;
        }
        v[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (v) qsort(v, *n, sizeof *v, name_cmp);
    return v;
}

static int scan(agg *a, const char *dir, rpx_error *err)
{
    size_t nt, t;
    char **tasks = list_dir(dir, &nt);
    struct stat st;
    int rc = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return rpx_error_set(err, RPX_EIO, "%s: not a folder; give the --out-dir of rpxprof batch", dir);
    for (t = 0; t < nt; t++) {
        char *sub;
        size_t nf, f;
        char **files;
        if (asprintf(&sub, "%s/%s", dir, tasks[t]) < 0) { rc = RPX_ENOMEM; break; }
        if (stat(sub, &st) != 0 || !S_ISDIR(st.st_mode)) { free(sub); continue; }
        files = list_dir(sub, &nf);
        for (f = 0; f < nf; f++) {
            size_t len = strlen(files[f]);
            if (!rc && len > 5 && strcmp(files[f] + len - 5, ".json") == 0)
                rc = add_rep(a, dir, tasks[t], files[f]);
            free(files[f]);
        }
        free(files);
        free(sub);
    }
    for (t = 0; t < nt; t++) free(tasks[t]);
    free(tasks);
    if (rc) return rpx_error_set(err, rc, "%s: out of memory", dir);
    return 0;
}

/* Shortest round-trip decimal of v into buf; "" when not finite. */
static void fmt_num(char *buf, size_t sz, double v)
{
    if (!isfinite(v)) { buf[0] = '\0'; return; }
    if (v == floor(v) && fabs(v) < 1e15) { snprintf(buf, sz, "%.0f", v); return; }
    rpx__fmt_shortest(buf, sz, v);
}

typedef rpx_strbuf sbuf;
#define sb_add rpx__sb_add
#define sb_str rpx__sb_str

static void csv_cell(sbuf *b, const char *s)
{
    const char *c;
    if (!s) return;
    if (!strpbrk(s, ",\"\n\r")) { sb_str(b, s); return; }
    sb_add(b, "\"", 1);
    for (c = s; *c; c++) {
        if (*c == '"') sb_add(b, "\"", 1);
        sb_add(b, c, 1);
    }
    sb_add(b, "\"", 1);
}

static void md_cell(sbuf *b, const char *s)
{
    const char *c;
    if (!s || !*s) { sb_str(b, "n/a"); return; }
    for (c = s; *c; c++) {
        if (*c == '|') sb_str(b, "\\|");
        else if (*c == '\n') sb_str(b, " ");
        else sb_add(b, c, 1);
    }
}

static const char *num_cols[] = {"params", "flops", "macs", "p50_ms", "p95_ms", "p99_ms", "mean_ms",
                                 "per_frame_p50_ms", "throughput_per_s", "cpu_process_lifetime_peak_mb",
                                 "cpu_inference_peak_mb", "cuda_peak_mb"};

/* ---- numbers printed to the digits their interval justifies (docs/batch.md) ----
 * A value with an interval [lo, hi]: h = (hi - lo) / 2; the last digit shown
 * is the one of h's second significant digit (h = 0.00051 ms: 0.00001 ms),
 * never beyond the digits of the stored number itself, and never before the
 * value's own first significant digit. Rounded to nearest. A value without
 * an interval: three significant digits. Only the Markdown rounds: the CSV
 * holds every number at full precision (csv_num). */

static locale_t c_locale(void)
{
    static locale_t c;
    if (!c) c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    return c;
}

/* v rounded to `d` decimals (d < 0: to 10^-d) into buf. */
static void fmt_fixed(char *buf, size_t sz, double v, int d)
{
    locale_t c = c_locale(), old = c ? uselocale(c) : (locale_t)0;
    if (d >= 0) {
        snprintf(buf, sz, "%.*f", d, v);
    } else {
        double step = pow(10, -d);
        snprintf(buf, sz, "%.0f", round(v / step) * step);
    }
    if (!strcmp(buf, "-0")) snprintf(buf, sz, "0");
    if (old) uselocale(old);
}

/* The fewest decimals (0..17) that print v exactly (its round trip). */
static int exact_decimals(double v)
{
    char b[64];
    int d;
    locale_t c = c_locale(), old = c ? uselocale(c) : (locale_t)0;
    for (d = 0; d < 17; d++) {
        snprintf(b, sizeof b, "%.*f", d, v);
        if (strtod(b, NULL) == v) break;
    }
    if (old) uselocale(old);
    return d;
}

/* The decimals of the second significant digit of h > 0 (may be < 0). */
static int sig2_decimals(double h) { return 1 - (int)floor(log10(h)); }

/* d, or more decimals where d would round v > 0 to nothing: its first
 * significant digit is always shown (a fast call never reads 0). */
static int keep_first_digit(double v, int d)
{
    int first = v > 0 && isfinite(v) ? -(int)floor(log10(v)) : d;
    return d > first ? d : first;
}

/* Decimals for v with the interval [lo, hi]; -1000 when there is none. A
 * half width within rounding error of v (below 1e-12 of it) is 0: v is shown
 * as stored. */
static int ci_decimals(double v, double lo, double hi)
{
    double h = (hi - lo) / 2;
    int cap, d;
    if (!isfinite(v) || !isfinite(h)) return -1000;
    cap = exact_decimals(v);
    d = h > 1e-12 * fabs(v) ? sig2_decimals(h) : cap;
    return keep_first_digit(v, d < cap ? d : cap);
}

/* A CSV number: the report's number at full precision, its shortest round
 * trip (a CSV is data; only the Markdown rounds, docs/batch.md). */
static void csv_num(sbuf *b, double v)
{
    char num[64];
    if (!isfinite(v)) return;
    fmt_num(num, sizeof num, v);
    sb_str(b, num);
}

/* "19.50 µs": v ms in a unit that puts it in [1, 1000), with `d` decimals of
 * milliseconds (d == -1000: three significant digits). */
static void md_time(sbuf *b, double v, int d)
{
    static const char *units[] = {"ns", "µs", "ms", "s"};
    static const double mult[] = {1e6, 1e3, 1, 1e-3};
    static const int shift[] = {6, 3, 0, -3};
    char num[64];
    int u = 2, dd;
    if (!isfinite(v)) { sb_str(b, "n/a"); return; }
    if (v >= 1000) u = 3;
    else if (v >= 1) u = 2;
    else if (v >= 1e-3) u = 1;
    else if (v > 0) u = 0;
    if (d == -1000) {
        double x = fabs(v * mult[u]);
        dd = x > 0 ? 2 - (int)floor(log10(x)) : 0;
        if (dd > exact_decimals(v) - shift[u]) dd = exact_decimals(v) - shift[u];
    } else {
        dd = d - shift[u];
    }
    if (v > 0 && (v * mult[u] >= 1e6 || v * mult[u] < 1e-3)) {
        /* a million seconds and more, or under a thousandth of a nanosecond:
         * exponent form with the significant digits the decimals stand for
         * (never hundreds of digits) */
        int e = (int)floor(log10(v * mult[u])), sig = e + dd + 1;
        locale_t c = c_locale(), old = c ? uselocale(c) : (locale_t)0;
        snprintf(num, sizeof num, "%.*e", (sig < 1 ? 1 : sig > 6 ? 6 : sig) - 1, v * mult[u]);
        if (old) uselocale(old);
    } else {
        fmt_fixed(num, sizeof num, v * mult[u], dd);
    }
    sb_str(b, num);
    sb_str(b, " ");
    sb_str(b, units[u]);
}

/* " ± 2.6 %": the half width relative to v, two significant digits. */
static void md_rel(sbuf *b, double v, double lo, double hi)
{
    char num[64];
    double rel = (hi - lo) / 2 / v * 100;
    if (!isfinite(rel) || v <= 0) { sb_str(b, " ± n/a"); return; }
    if (rel < 0.01) { sb_str(b, " ± <0.01 %"); return; }
    fmt_fixed(num, sizeof num, rel, sig2_decimals(rel));
    sb_str(b, " ± ");
    sb_str(b, num);
    sb_str(b, " %");
}

/* The outputs, in the order they are committed: validation.json last, so a
 * folder holds rpxprof's validation.json only once everything else is there. */
enum { OUT_CSV, OUT_MD, OUT_SVG, OUT_VAL, OUT_COUNT };

/* The Markdown's caption: the confidence and what the intervals cover, said once. */
/* How many different sessions the complete rows were measured in. */
static size_t n_sessions(const agg *a)
{
    size_t i, j, n = 0;
    for (i = 0; i < a->nreps; i++) {
        if (!a->reps[i].complete || !a->reps[i].session) continue;
        for (j = 0; j < i; j++)
            if (a->reps[j].complete && a->reps[j].session && !strcmp(a->reps[j].session, a->reps[i].session))
                break;
        if (j == i) n++;
    }
    return n;
}

/* Rows of different sessions: their intervals do not cover the difference between rows. */
static void md_sessions(sbuf *m, const agg *a)
{
    char buf[64];
    size_t n = n_sessions(a);
    if (n < 2) return;
    snprintf(buf, sizeof buf, "%zu", n);
    sb_str(m, "The rows were measured in **");
    sb_str(m, buf);
    sb_str(m, " different sessions** (the session column): each row's interval covers the processes of its "
              "own session, not the drift of the machine between sessions, so the intervals do not say "
              "whether the difference between two rows is real; compare two rows with rpxprof compare, "
              "or measure them together with rpxprof compare --run (docs/statistics.md#what-an-interval-covers).\n");
}

static void md_caption(sbuf *m, const agg *a)
{
    size_t i, nb = 0, nw = 0, nn = 0;
    double conf = NAN;
    int conf_same = 1;
    long kmin = 0, kmax = 0;
    char buf[64];
    for (i = 0; i < a->nreps; i++) {
        const rep *p = &a->reps[i];
        if (!p->complete) continue;
        if (!p->covers) { nn++; continue; }
        if (!strcmp(p->covers, "between-process")) {
            nb++;
            if (!kmin || p->processes < kmin) kmin = p->processes;
            if (p->processes > kmax) kmax = p->processes;
        } else {
            nw++;
        }
        if (isnan(conf)) conf = p->confidence;
        else if (conf != p->confidence) conf_same = 0;
    }
    sb_str(m, "Latency: the value ± the half width of its ");
    if (isnan(conf)) sb_str(m, "95 %");
    else if (!conf_same) sb_str(m, "confidence interval (the confidence differs between reports: the CSV's ci_confidence)");
    else { fmt_num(buf, sizeof buf, conf * 100); sb_str(m, buf); sb_str(m, " %"); }
    sb_str(m, " interval, relative to the value; the last digit shown is that of the half width's second "
              "significant digit. n/a: no interval (the reasons are below the table); a value without one is "
              "shown to three significant digits, which says nothing of its precision.\n");
    if (nb && !nw && !nn) {
        snprintf(buf, sizeof buf, kmin == kmax ? "%ld" : "%ld to %ld", kmin, kmax);
        sb_str(m, "The intervals are **between-process**: each report's calls ran in ");
        sb_str(m, buf);
        sb_str(m, " worker processes, and the interval covers the variation from one process to the next within "
                  "the report's session, not session-to-session drift.\n");
    } else if (nw && !nb && !nn) {
        sb_str(m, "The intervals are **within-process**: each report ran in one process, so they cover only the "
                  "noise of the calls inside it, not the variation from one run to the next (rerun with --processes K, "
                  "K >= 2).\n");
    } else if (nb || nw) {
        sb_str(m, "The intervals are **between-process** for the rows with 2 or more processes, **within-process** "
                  "(they do not cover the variation from one run to the next) for the rows with 1");
        if (nn) sb_str(m, ", and n/a for the reports of an older rpxprof, which have none");
        sb_str(m, ".\n");
    } else if (nn) {
        sb_str(m, "The reports carry no intervals (an older rpxprof, or the reference: one process, no latency_ci).\n");
    }
    md_sessions(m, a);
    sb_str(m, "\n");
}

/* Below the table: why intervals are n/a, once per statistic. */
static void md_reasons(sbuf *m, const agg *a)
{
    static const char *names[4] = {"p50", "p95", "p99", "mean"};
    size_t i, first, count;
    int j, any = 0;
    char buf[64];
    for (j = 0; j < 4; j++) {
        count = 0;
        first = a->nreps;
        for (i = 0; i < a->nreps; i++)
            if (a->reps[i].complete && a->reps[i].covers && a->reps[i].ci_reason[j]) {
                if (!count) first = i;
                count++;
            }
        if (!count) continue;
        if (!any) sb_str(m, "\nIntervals shown n/a:\n\n");
        any = 1;
        sb_str(m, "- ");
        sb_str(m, names[j]);
        sb_str(m, " (");
        md_cell(m, a->reps[first].task);
        sb_str(m, "/");
        md_cell(m, a->reps[first].model);
        if (count > 1) { snprintf(buf, sizeof buf, " and %zu more", count - 1); sb_str(m, buf); }
        sb_str(m, "): ");
        md_cell(m, a->reps[first].ci_reason[j]);
        sb_str(m, "\n");
    }
}

/* --layers: each model's time by operator type, after the main table ("Conv 61 % of
 * the time at 0.42 of its bound"); nothing when no report has layers. */
static void md_layers(sbuf *m, const agg *a)
{
    size_t i, k, any = 0;
    char words[256];
    for (i = 0; i < a->nreps; i++) any += a->reps[i].layers_ops != NULL;
    if (!any) return;
    sb_str(m, "\nPer operator type (--layers: share of the profiled time, fraction of its "
              "roofline bound achieved on the report's layers.device):\n\n"
              "| task | model | operator types, slowest first |\n|---|---|---|\n");
    for (i = 0; i < a->nreps; i++) {
        const rep *p = &a->reps[i];
        const json_t *g;
        if (!p->layers_ops) continue;
        sb_str(m, "| "); md_cell(m, p->task); sb_str(m, " | "); md_cell(m, p->model); sb_str(m, " | ");
        json_array_foreach(p->layers_ops, k, g) {
            rpx__layers_op_words(g, words, sizeof words);
            if (k) sb_str(m, "; ");
            md_cell(m, words);
        }
        sb_str(m, " |\n");
    }
}

static int write_tables(agg *a, const char *out, rpx_output **g, rpx_error *err)
{
    static const int stat_col[4] = {N_P50, N_P95, N_P99, N_MEAN};
    sbuf c = {0}, m = {0};
    char num[64], lb[32];
    size_t i, k;
    int rc;
    sb_str(&c, "task,model");
    for (k = 0; k < N_COUNT; k++) { sb_str(&c, ","); sb_str(&c, num_cols[k]); }
    sb_str(&c, ",gpu_name,cpu_name,device,precision,warmup,repeats,created_utc,status,processes,covers,"
               "ci_confidence,p50_ci_lo_ms,p50_ci_hi_ms,p95_ci_lo_ms,p95_ci_hi_ms,p99_ci_lo_ms,p99_ci_hi_ms,"
               "mean_ci_lo_ms,mean_ci_hi_ms");
    for (k = 0; k < X_COUNT; k++) { sb_str(&c, ","); sb_str(&c, x_cols[k]); }
    sb_str(&c, ",audit,session\n");
    md_caption(&m, a);
    sb_str(&m, "| task | model | params | FLOPs | processes | p50 | p95 | p99 | mean | per-frame p50 | "
               "throughput /s | CPU peak MiB | CUDA peak MiB | device | precision | GPU | CPU | "
               "TTFT p50 | ITL p50 | load achieved /s | load p99 from intended | paced Hz | audit | session |\n"
               "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|---|---|--:|--:|--:|--:|--:|---|---|\n");
    for (i = 0; i < a->nreps; i++) {
        rep *p = &a->reps[i];
        int dec[N_COUNT], j;
        double rel = NAN;
        for (k = 0; k < N_COUNT; k++) dec[k] = -1000;
        for (j = 0; j < 4; j++)
            dec[stat_col[j]] = ci_decimals(p->num[stat_col[j]], p->ci[j][0], p->ci[j][1]);
        /* per-frame p50 and throughput: the p50's relative precision */
        if (dec[N_P50] != -1000 && p->num[N_P50] > 0) rel = (p->ci[0][1] - p->ci[0][0]) / 2 / p->num[N_P50];
        if (isfinite(rel) && rel > 0) {
            if (isfinite(p->num[N_PERFRAME]) && p->num[N_PERFRAME] > 0) {
                int d = sig2_decimals(rel * p->num[N_PERFRAME]);
                dec[N_PERFRAME] = keep_first_digit(p->num[N_PERFRAME],
                                                   d < exact_decimals(p->num[N_PERFRAME]) ? d : exact_decimals(p->num[N_PERFRAME]));
            }
            if (isfinite(p->num[N_TPUT]) && p->num[N_TPUT] > 0) {
                int d = sig2_decimals(rel * p->num[N_TPUT]);
                dec[N_TPUT] = keep_first_digit(p->num[N_TPUT], d < exact_decimals(p->num[N_TPUT]) ? d : exact_decimals(p->num[N_TPUT]));
            }
        }
        csv_cell(&c, p->task); sb_str(&c, ",");
        csv_cell(&c, p->model);
        for (k = 0; k < N_COUNT; k++) { sb_str(&c, ","); csv_num(&c, p->num[k]); }
        sb_str(&c, ","); csv_cell(&c, p->gpu);
        sb_str(&c, ","); csv_cell(&c, p->cpu);
        sb_str(&c, ","); csv_cell(&c, p->device);
        sb_str(&c, ","); csv_cell(&c, p->precision);
        sb_str(&c, ",");
        if (p->complete) { snprintf(lb, sizeof lb, "%ld", p->warmup); sb_str(&c, lb); }
        sb_str(&c, ",");
        if (p->complete) { snprintf(lb, sizeof lb, "%ld", p->measured); sb_str(&c, lb); }
        sb_str(&c, ","); csv_cell(&c, p->created);
        sb_str(&c, ","); sb_str(&c, p->complete ? "complete" : "invalid");
        sb_str(&c, ",");
        if (p->complete) { snprintf(lb, sizeof lb, "%ld", p->processes); sb_str(&c, lb); }
        sb_str(&c, ","); csv_cell(&c, p->complete ? p->covers : NULL);
        sb_str(&c, ",");
        if (p->complete && p->covers) csv_num(&c, p->confidence);
        for (j = 0; j < 4; j++) {
            int have = p->complete && p->covers && isfinite(p->ci[j][0]);
            sb_str(&c, ",");
            if (have) csv_num(&c, p->ci[j][0]);
            sb_str(&c, ",");
            if (have) csv_num(&c, p->ci[j][1]);
        }
        for (k = 0; k < X_COUNT; k++) { sb_str(&c, ","); csv_num(&c, p->xnum[k]); }
        sb_str(&c, ","); csv_cell(&c, p->audit);
        sb_str(&c, ","); csv_cell(&c, p->session);
        sb_str(&c, "\n");
        sb_str(&m, "| "); md_cell(&m, p->task); sb_str(&m, " | "); md_cell(&m, p->model);
        fmt_num(num, sizeof num, p->num[N_PARAMS]); sb_str(&m, " | "); md_cell(&m, num);
        fmt_num(num, sizeof num, p->num[N_FLOPS]); sb_str(&m, " | "); md_cell(&m, num);
        sb_str(&m, " | ");
        if (p->complete) { snprintf(lb, sizeof lb, "%ld", p->processes); sb_str(&m, lb); }
        else sb_str(&m, "n/a");
        for (j = 0; j < 4; j++) {
            sb_str(&m, " | ");
            md_time(&m, p->num[stat_col[j]], dec[stat_col[j]]);
            if (isfinite(p->num[stat_col[j]])) {
                if (dec[stat_col[j]] != -1000) md_rel(&m, p->num[stat_col[j]], p->ci[j][0], p->ci[j][1]);
                else sb_str(&m, " ± n/a");
            }
        }
        sb_str(&m, " | "); md_time(&m, p->num[N_PERFRAME], dec[N_PERFRAME]);
        sb_str(&m, " | ");
        if (dec[N_TPUT] != -1000) fmt_fixed(num, sizeof num, p->num[N_TPUT], dec[N_TPUT]);
        else fmt_num(num, sizeof num, p->num[N_TPUT]);
        md_cell(&m, num);
        fmt_num(num, sizeof num, p->num[N_CPULIFE]); sb_str(&m, " | "); md_cell(&m, num);
        fmt_num(num, sizeof num, p->num[N_CUDA]); sb_str(&m, " | "); md_cell(&m, num);
        sb_str(&m, " | "); md_cell(&m, p->device);
        sb_str(&m, " | "); md_cell(&m, p->precision);
        sb_str(&m, " | "); md_cell(&m, p->gpu);
        sb_str(&m, " | "); md_cell(&m, p->cpu);
        sb_str(&m, " | "); md_time(&m, p->xnum[X_TTFT], -1000);
        sb_str(&m, " | "); md_time(&m, p->xnum[X_ITL], -1000);
        num[0] = '\0';
        if (isfinite(p->xnum[X_LOAD_ACHIEVED])) fmt_fixed(num, sizeof num, p->xnum[X_LOAD_ACHIEVED], 2);
        sb_str(&m, " | "); md_cell(&m, num);
        sb_str(&m, " | "); md_time(&m, p->xnum[X_LOAD_P99], -1000);
        num[0] = '\0';
        if (isfinite(p->xnum[X_PACE_ACHIEVED])) fmt_fixed(num, sizeof num, p->xnum[X_PACE_ACHIEVED], 3);
        sb_str(&m, " | "); md_cell(&m, num);
        sb_str(&m, " | "); md_cell(&m, p->audit);
        sb_str(&m, " | "); md_cell(&m, p->session);
        sb_str(&m, " |\n");
    }
    md_reasons(&m, a);
    md_layers(&m, a);
    if (c.oom || m.oom) { free(c.p); free(m.p); return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", out); }
    rc = rpx_output_commit(g[OUT_CSV], c.p, c.len, err);
    g[OUT_CSV] = NULL;
    if (!rc) {
        rc = rpx_output_commit(g[OUT_MD], m.p, m.len, err);
        g[OUT_MD] = NULL;
    }
    free(c.p);
    free(m.p);
    return rc;
}

static int write_figure(agg *a, rpx_output **g, rpx_error *err)
{
    rpx_plot_row *rows = calloc(a->nreps ? a->nreps : 1, sizeof *rows);
    char (*notes)[128] = calloc(a->nreps ? a->nreps : 1, sizeof *notes);
    char *svg = NULL;
    size_t i, n = 0;
    int rc;
    if (!rows || !notes) {
        free(rows);
        free(notes);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    for (i = 0; i < a->nreps; i++) {
        rep *p = &a->reps[i];
        if (!p->complete || !p->samples || !p->n) continue;
        rows[n].panel = p->task;
        rows[n].label = p->model;
        /* an open-loop load run's latency includes queueing, a paced run's calls
         * come one per period: the row says so (the tables keep the bare model) */
        rpx_plot_mode_note(notes[n], sizeof notes[n], p->xnum[X_LOAD_RATE], p->xnum[X_LOAD_ACHIEVED],
                           p->xnum[X_PACE_RATE]);
        rows[n].mode_note = notes[n];
        rows[n].unit = p->unit ? p->unit : "sample"; /* the pipeline's reports are per sample */
        rows[n].shape = p->shapes;
        rows[n].device = p->device;
        rows[n].samples_ms = p->samples;
        rows[n].n = p->n;
        rows[n].ci_covers = p->covers;
        rows[n].processes = p->processes;
        rows[n].p50_ci_lo_ms = p->ci[0][0];
        rows[n].p50_ci_hi_ms = p->ci[0][1];
        n++;
    }
    rc = rpx_plot_svg(rows, n, 0, &svg, err);
    free(rows);
    free(notes);
    if (rc) return rc;
    rc = rpx_output_commit(g[OUT_SVG], svg, strlen(svg), err);
    g[OUT_SVG] = NULL;
    free(svg);
    return rc;
}

static void check_expected(agg *a, const char *manifest, size_t *expected, rpx_error *err)
{
    rpx_manifest *m = NULL;
    size_t i, k, nj;
    char *seen;
    if (rpx_manifest_load(manifest, &m, err)) {
        msg(a->errors, "--expect %s", err->message);
        return;
    }
    nj = rpx_manifest_job_count(m);
    *expected = nj;
    seen = calloc(a->nreps + 1, 1);
    for (i = 0; i < nj; i++) {
        const rpx_batch_job *j = rpx_manifest_job(m, i);
        int found = 0;
        for (k = 0; k < a->nreps; k++)
            if (!strcmp(a->reps[k].task, j->task) && !strcmp(a->reps[k].model, j->model_name)) {
                found = 1;
                if (seen) seen[k] = 1;
            }
        if (!found)
            msg(a->errors, "expected report %s/%s.json is missing (model '%s' on task '%s' of %s); run rpxprof batch for it",
                j->task, j->model_name, j->model_name, j->task, manifest);
    }
    for (k = 0; seen && k < a->nreps; k++)
        if (!seen[k])
            msg(a->errors, "%s: unexpected report: task '%s', model '%s' is not a job of %s", a->reps[k].file,
                a->reps[k].task, a->reps[k].model, manifest);
    free(seen);
    rpx_manifest_free(m);
}

/* Open the four outputs before any report is read: the folder is made and
 * checked writable, and what is there may be replaced. The reports found and
 * the manifest are never replaced. */
static int open_outputs(const rpx_aggregate_opts *opts, const agg *a, rpx_output **g,
                        rpx_error *err)
{
    static const char *const names[OUT_COUNT] = {"summary.csv", "summary.md", "figure.svg",
                                                 "validation.json"};
    const char **prot = calloc(a->nreps + 1, sizeof *prot);
    struct stat st;
    size_t i;
    int rc = 0;
    if (!prot) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (stat(opts->out_dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        free(prot);
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: is not a folder; give a folder for --out-dir (it is made when "
                             "missing)", opts->out_dir);
    }
    prot[0] = opts->expect;
    for (i = 0; i < a->nreps; i++) prot[i + 1] = a->reps[i].file;
    for (i = 0; i < OUT_COUNT && !rc; i++) {
        rpx_output_options oo = {i == OUT_VAL ? RPX_OUTPUT_REPORT : RPX_OUTPUT_TEXT,
                                 i == OUT_VAL ? RPX_VALIDATION_SCHEMA : NULL, opts->force, prot,
                                 a->nreps + 1, "--out-dir"};
        char *path = NULL;
        if (asprintf(&path, "%s/%s", opts->out_dir, names[i]) < 0) {
            rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
            break;
        }
        rc = rpx_output_open(path, &oo, &g[i], err);
        free(path);
    }
    free(prot);
    return rc;
}

int rpx_aggregate(const rpx_aggregate_opts *opts, rpx_aggregate_result *res, rpx_error *err)
{
    agg a = {0};
    size_t i, k, expected = 0;
    int rc = 0, scan_rc = 0, have_expected = 0;
    json_t *val;
    rpx_output *g[OUT_COUNT] = {NULL};
    rpx_error scan_err = {0};
    memset(res, 0, sizeof *res);
    a.errors = json_array();
    a.warnings = json_array();
    /* list the reports (nothing is read yet), then open the outputs */
    for (i = 0; i < opts->ndirs && !scan_rc; i++) scan_rc = scan(&a, opts->dirs[i], &scan_err);
    if ((rc = open_outputs(opts, &a, g, err)) != 0) goto done;
    if (scan_rc) {
        rc = scan_rc;
        if (err) *err = scan_err;
        goto done;
    }
    for (i = 0; i < a.nreps; i++) read_report(&a, &a.reps[i], opts->allow_incomplete_flops, opts->allow_audit_failures);
    if (a.nreps == 0) msg(a.errors, "no reports (DIR/<task>/<model>.json) found; give the --out-dir of rpxprof batch");
    cross_checks(&a);
    if (opts->expect) {
        rpx_error e2 = {0};
        have_expected = 1;
        check_expected(&a, opts->expect, &expected, &e2);
    }
    res->profiles_found = a.nreps;
    res->errors = json_array_size(a.errors);
    res->warnings = json_array_size(a.warnings);
    val = json_object();
    json_object_set_new(val, "schema", json_string(RPX_VALIDATION_SCHEMA));
    json_object_set_new(val, "expected_models", have_expected ? json_integer((json_int_t)expected) : json_null());
    json_object_set_new(val, "profiles_found", json_integer((json_int_t)a.nreps));
    json_object_set(val, "errors", a.errors);
    json_object_set(val, "warnings", a.warnings);
    json_object_set_new(val, "status", json_string(res->errors ? "FAIL" : "PASS"));
    rc = write_tables(&a, opts->out_dir, g, err);
    if (!rc) rc = write_figure(&a, g, err);
    if (!rc) {
        rc = rpx_json_write_output(g[OUT_VAL], val, err);
        g[OUT_VAL] = NULL;
    }
    json_decref(val);
done:
    for (i = 0; i < OUT_COUNT; i++) rpx_output_discard(g[i]);
    for (i = 0; i < a.nreps; i++) {
        rep *p = &a.reps[i];
        free(p->file); free(p->task); free(p->model); free(p->sha); free(p->shapes); free(p->unit);
        free(p->meta); free(p->device); free(p->precision); free(p->cvd); free(p->gpu); free(p->cpu);
        free(p->driver); free(p->governor); free(p->os); free(p->created); free(p->audit); free(p->samples); free(p->mode);
        free(p->placement);
        free(p->session);
        json_decref(p->layers_ops);
        free(p->covers);
        for (k = 0; k < 4; k++) free(p->ci_reason[k]);
    }
    free(a.reps);
    json_decref(a.errors);
    json_decref(a.warnings);
    return rc;
}

/* The same-work part of cross_checks for two reports (rpxprof compare). */
void rpx_aggregate_same_work(const char *file_a, const json_t *a, const char *file_b, const json_t *b,
                             json_t *errors, json_t *warnings)
{
    rep r[2];
    const json_t *src[2] = {a, b};
    const char *files[2] = {file_a, file_b};
    int i;
    for (i = 0; i < 2; i++) {
        const json_t *card = json_object_get(src[i], "system_card"), *v;
        memset(&r[i], 0, sizeof r[i]);
        r[i].file = (char *)files[i];
        r[i].sha = canon(json_object_get(src[i], "inputs_sha256"));
        r[i].shapes = json_is_object(json_object_get(src[i], "inputs")) ? shapes_of(json_object_get(src[i], "inputs")) : NULL;
        r[i].unit = canon(json_object_get(src[i], "unit"));
        r[i].device = canon(json_object_get(src[i], "device"));
        r[i].precision = canon(json_object_get(src[i], "precision"));
        v = json_object_get(json_object_get(card, "environment"), "CUDA_VISIBLE_DEVICES");
        r[i].cvd = json_is_string(v) ? canon(v) : strdup("(unset)");
        r[i].gpu = canon(json_object_get(card, "gpu_name"));
        r[i].cpu = canon(json_object_get(card, "cpu_name"));
        r[i].driver = canon(json_object_get(card, "driver_version"));
        r[i].governor = canon(json_object_get(json_object_get(card, "cpu"), "governor"));
        r[i].os = canon(json_object_get(card, "os"));
        r[i].mode = mode_of(src[i]);
        r[i].placement = placement_of(src[i], 1);
    }
    cmp_field(warnings, "placement policy (placement: --cpus, --spread; a model can run at a "
              "different speed on each CPU)", &r[0], r[0].placement, &r[1], r[1].placement);
    cmp_field(errors, "schedule (http.load: requested_rate_per_s, scheduled, arrivals, concurrency; pacing.rate_hz)",
              &r[0], r[0].mode, &r[1], r[1].mode);
    cmp_field(errors, "inputs_sha256 (different inputs)", &r[0], r[0].sha, &r[1], r[1].sha);
    cmp_field(errors, "input shapes", &r[0], r[0].shapes, &r[1], r[1].shapes);
    cmp_field(errors, "unit", &r[0], r[0].unit, &r[1], r[1].unit);
    cmp_field(errors, "device", &r[0], r[0].device, &r[1], r[1].device);
    cmp_field(errors, "precision", &r[0], r[0].precision, &r[1], r[1].precision);
    cmp_field(errors, "GPU model (system_card.gpu_name)", &r[0], r[0].gpu, &r[1], r[1].gpu);
    cmp_field(errors, "CPU model (system_card.cpu_name)", &r[0], r[0].cpu, &r[1], r[1].cpu);
    cmp_field(warnings, "CUDA_VISIBLE_DEVICES (system_card.environment)", &r[0], r[0].cvd, &r[1], r[1].cvd);
    cmp_field(warnings, "driver (system_card.driver_version)", &r[0], r[0].driver, &r[1], r[1].driver);
    cmp_field(warnings, "CPU governor (system_card.cpu.governor)", &r[0], r[0].governor, &r[1], r[1].governor);
    cmp_field(warnings, "OS (system_card.os)", &r[0], r[0].os, &r[1], r[1].os);
    for (i = 0; i < 2; i++) {
        free(r[i].sha); free(r[i].shapes); free(r[i].unit); free(r[i].device); free(r[i].precision);
        free(r[i].cvd); free(r[i].gpu); free(r[i].cpu); free(r[i].driver); free(r[i].governor); free(r[i].os);
        free(r[i].mode);
        free(r[i].placement);
    }
}
