/* section_layers.c — --layers as a measured section: after each worker
 * process's timed calls (never during them: the section's after_loop hook),
 * N profiled calls through the target's own per-node profiler
 * (rpx_target_hooks.layers_begin, call, layers_end), each whole profiled call
 * timed too; each process's export groups the runtime's events by row (the
 * node as the runtime ran it) with its time in every profiled call; merge
 * gives the report's `layers`: per row the median over a process's profiled
 * calls, then across processes the median of those and the between-process
 * interval (rpx_stats_interval), the "unattributed" row (a profiled call's
 * time that no node accounts for, never spread over the others), the sum of
 * rows against the unprofiled p50 (the profiler's overhead). The cost and
 * bound of each row are joined afterwards (layers_join.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "rpxprof/clock.h"
#include "rpxprof/latency.h"
#include "rpxprof/stats.h"
#include "runner/runner_internal.h"
#include "runner/section.h"

/* The slice: when this process's load began (its own mark, beside the
 * timeline's), the origin of the profiled calls' start times. */
typedef struct layers_slice {
    int64_t load_ns;
} layers_slice;

typedef struct layers_state {
    long asked;                   /* profiled calls to make */
    long done;                    /* made (each one timed whole) */
    double *call_ms;              /* `asked` entries */
    double *start_ms;             /* when each began, ms after the process's load */
    int64_t load_ns;
    json_t *events;               /* layers_end's array, or NULL */
    char error[RPX_ERROR_MESSAGE_SIZE + 96]; /* why the profiled calls stopped ("": they did not) */
} layers_state;

static int ly_on(const run_plan *plan)
{
    return plan->c->layers > 0;
}

static size_t ly_bytes(long repeats, long warmup_keep)
{
    (void)repeats;
    (void)warmup_keep;
    return sizeof(layers_slice);
}

static void ly_mark(section_proc *sp, section_event event)
{
    if (event == SECTION_LOAD) ((layers_slice *)sp->slice)->load_ns = rpx_clock_now_ns();
}

static int ly_begin(section_proc *sp, rpx_error *err)
{
    layers_state *s;
    if (!sp->target->hooks.layers_begin || !sp->target->hooks.layers_end)
        return rpx_error_set(err, RPX_EUSAGE,
                             "--layers: --model %s has no per-node profiler (its hooks have no "
                             "layers_begin and layers_end); drop --layers",
                             sp->target->display_spec);
    s = calloc(1, sizeof *s);
    if (s) s->call_ms = calloc(2 * (size_t)sp->p->plan->c->layers, sizeof *s->call_ms);
    if (!s || !s->call_ms) {
        free(s);
        return rpx_error_set(err, RPX_ENOMEM, "--layers: out of memory");
    }
    s->asked = sp->p->plan->c->layers;
    s->start_ms = s->call_ms + s->asked;
    s->load_ns = ((layers_slice *)sp->slice)->load_ns;
    sp->state = s;
    return 0;
}

/* The pristine bytes of sample k over the sample (--writable-inputs). */
static void restore(const rpx_inputs *dst, const rpx_inputs *src)
{
    size_t t;
    for (t = 0; t < dst->count && t < src->count; t++)
        if (dst->tensors[t].nbytes)
            memcpy((void *)dst->tensors[t].data, src->tensors[t].data, dst->tensors[t].nbytes);
}

/* The profiled calls, after the timed loop completed: layers_begin, N calls
 * (cycling through the samples as the timed calls do), layers_end. A failure
 * is kept for the report; the timed calls already measured stand. */
static void ly_after_loop(section_proc *sp)
{
    layers_state *s = sp->state;
    rpx_target *t = sp->target;
    const run_plan *plan = sp->p->plan;
    const rpx_run_config *loop = sp->loop;
    rpx_error e = {0};
    long k;
    if (!s) return;
    if (t->hooks.layers_begin(t->hooks.state, &e) != 0) {
        snprintf(s->error, sizeof s->error, "the profiler did not start: %s", e.message);
        return;
    }
    for (k = 0; k < s->asked && !sp->sh->stop; k++) {
        const rpx_inputs *in = &plan->samples[(size_t)k % plan->n_samples];
        int64_t t0, t1;
        int rc;
        if (plan->pristine) restore(in, &plan->pristine[(size_t)k % plan->n_samples]);
        if (loop->sync) (void)loop->sync(loop->sync_ctx, &e);
        t0 = rpx_clock_now_ns();
        rc = t->hooks.call(t->hooks.state, in, &e);
        if (loop->sync) (void)loop->sync(loop->sync_ctx, &e);
        t1 = rpx_clock_now_ns();
        if (t->hooks.after_call) t->hooks.after_call(t->hooks.state, 0, rc);
        __atomic_store_n(&sp->sh->progress_ns, t1, __ATOMIC_RELEASE); /* --call-timeout */
        if (rc != 0) {
            snprintf(s->error, sizeof s->error, "profiled call %ld failed (%d): %s", k, rc,
                     e.message[0] ? e.message : "no message given");
            break;
        }
        s->start_ms[s->done] = (double)(t0 - s->load_ns) / 1e6;
        s->call_ms[s->done++] = (double)(t1 - t0) / 1e6;
    }
    if (t->hooks.layers_end(t->hooks.state, &s->events, &e) != 0) {
        json_decref(s->events);
        s->events = NULL;
        if (!s->error[0])
            snprintf(s->error, sizeof s->error, "the profiler's results could not be read: %s",
                     e.message);
    } else if (!json_is_array(s->events) && !s->error[0]) {
        snprintf(s->error, sizeof s->error, "the profiler returned no array of events");
    }
}

/* The row called `name` in `rows` (appended when new). */
static json_t *row_of(json_t *rows, const json_t *ev, long calls)
{
    const char *name = json_string_value(json_object_get(ev, "name"));
    json_t *r, *ms;
    size_t i;
    long k;
    json_array_foreach(rows, i, r)
        if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0) return r;
    r = json_object();
    ms = json_array();
    for (k = 0; ms && k < calls; k++) json_array_append_new(ms, json_real(0));
    json_object_set_new(r, "name", json_string(name));
    json_object_set(r, "op_type", json_is_string(json_object_get(ev, "op_type"))
                                      ? json_object_get(ev, "op_type")
                                      : json_null());
    json_object_set(r, "nodes", json_is_array(json_object_get(ev, "nodes"))
                                    ? json_object_get(ev, "nodes")
                                    : json_null());
    json_object_set_new(r, "ms", ms);
    json_array_append_new(rows, r);
    return r;
}

/* {"calls": n, "call_ms": [...], "rows": [{"name","op_type","nodes","ms": [per call]}],
 *  "error": null|"..."}: a node run more than once in a call adds up. */
static json_t *ly_export(section_proc *sp)
{
    layers_state *s = sp->state;
    json_t *o, *rows, *calls, *starts, *ev;
    size_t i;
    long k;
    if (!s) return NULL;
    o = json_object();
    rows = json_array();
    calls = json_array();
    starts = json_array();
    for (k = 0; k < s->done; k++) {
        json_array_append_new(calls, json_real(s->call_ms[k]));
        json_array_append_new(starts, json_real(s->start_ms[k]));
    }
    json_array_foreach(s->events, i, ev) {
        json_t *call = json_object_get(ev, "call"), *t = json_object_get(ev, "time_ms"), *slot;
        if (!json_is_string(json_object_get(ev, "name")) || !json_is_integer(call) ||
            !json_is_number(t) || json_integer_value(call) < 0 ||
            json_integer_value(call) >= s->done)
            continue; /* an event of no profiled call */
        slot = json_array_get(json_object_get(row_of(rows, ev, s->done), "ms"),
                              (size_t)json_integer_value(call));
        json_real_set(slot, json_real_value(slot) + json_number_value(t));
    }
    json_object_set_new(o, "calls", json_integer(s->done));
    json_object_set_new(o, "call_ms", calls);
    json_object_set_new(o, "start_ms", starts);
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "error", s->error[0] ? json_string(s->error) : json_null());
    return o;
}

static void ly_end(section_proc *sp)
{
    layers_state *s = sp->state;
    if (!s) return;
    json_decref(s->events);
    free(s->call_ms);
    free(s);
    sp->state = NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
    if (!n) return (double)NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One quantity's per-call values in each process (samples[offsets[j]..],
 * counts[j]): the median of the per-process medians, and the between-process
 * interval (null with fewer than 2 processes or too few calls), widened to
 * hold the median shown. */
static double across(const double *samples, const size_t *offsets, const size_t *counts,
                     size_t k, json_t **ci)
{
    double meds[RPX_RUNNER_MAX_PROCESSES], buf_lo, buf_hi, point;
    size_t j, m = 0, maxn = 0;
    double *buf;
    char reason[512];
    for (j = 0; j < k; j++) maxn = counts[j] > maxn ? counts[j] : maxn;
    buf = malloc((maxn ? maxn : 1) * sizeof *buf);
    *ci = json_null();
    if (!buf) return (double)NAN;
    for (j = 0; j < k; j++) {
        if (!counts[j]) continue;
        memcpy(buf, samples + offsets[j], counts[j] * sizeof *buf);
        meds[m++] = median_of(buf, counts[j]);
    }
    free(buf);
    point = median_of(meds, m);
    if (m >= 2) {
        rpx_stats_runs r = {samples, offsets, counts, k};
        (void)rpx_stats_interval(&r, RPX_STAT_P50, 0.95, 1, &buf_lo, &buf_hi, reason, sizeof reason);
        if (isfinite(buf_lo) && isfinite(buf_hi)) {
            json_decref(*ci);
            *ci = json_pack("[ff]", fmin(buf_lo, point), fmax(buf_hi, point));
        }
    }
    return point;
}

/* Process j's per-call values of row `name` (NULL: the profiled call's whole
 * time; "" the unattributed time) into out; their count. */
static size_t values_of(const json_t *ex, const char *name, double *out)
{
    const json_t *calls = json_object_get(ex, "call_ms"), *rows = json_object_get(ex, "rows"), *r;
    size_t n = json_array_size(calls), i, c;
    for (c = 0; c < n; c++) out[c] = json_number_value(json_array_get(calls, c));
    if (!name) return n;
    if (*name) {
        for (c = 0; c < n; c++) out[c] = 0;
        json_array_foreach(rows, i, r)
            if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0)
                for (c = 0; c < n; c++)
                    out[c] = json_number_value(json_array_get(json_object_get(r, "ms"), c));
        return n;
    }
    json_array_foreach(rows, i, r)
        for (c = 0; c < n; c++) out[c] -= json_number_value(json_array_get(json_object_get(r, "ms"), c));
    return n;
}

/* The per-call values of one quantity in every process, then across(). */
static double measure_row(const section_merge *m, const char *name, long calls, json_t **ci)
{
    size_t offsets[RPX_RUNNER_MAX_PROCESSES], counts[RPX_RUNNER_MAX_PROCESSES];
    double *all = malloc(((size_t)m->n * (size_t)calls + 1) * sizeof *all), v;
    size_t at = 0;
    int j;
    *ci = json_null();
    if (!all) return (double)NAN;
    for (j = 0; j < m->n; j++) {
        offsets[j] = at;
        counts[j] = json_is_object(m->exports[j]) ? values_of(m->exports[j], name, all + at) : 0;
        at += counts[j];
    }
    json_decref(*ci);
    v = across(all, offsets, counts, (size_t)m->n, ci);
    free(all);
    return v;
}

/* Every process's rows, in the order they first ran. */
static json_t *row_names(const section_merge *m)
{
    json_t *rows = json_array(), *r, *have;
    size_t i, h;
    int j;
    for (j = 0; j < m->n; j++)
        json_array_foreach(json_object_get(m->exports[j], "rows"), i, r) {
            int seen = 0;
            json_array_foreach(rows, h, have)
                seen |= strcmp(json_string_value(json_object_get(have, "name")),
                               json_string_value(json_object_get(r, "name"))) == 0;
            if (!seen) json_array_append(rows, r);
        }
    return rows;
}

static void note(const section_merge *m, const char *text)
{
    if (m->rd->desc.notes) json_array_append_new(m->rd->desc.notes, json_string(text));
}

/* A row of the report: the measured part (layers_join.c adds the cost). */
static json_t *report_row(const char *name, const json_t *op, const json_t *nodes, double ms,
                          json_t *ci)
{
    json_t *r = json_object();
    json_object_set_new(r, "name", json_string(name));
    json_object_set(r, "op_type", op ? (json_t *)op : json_null());
    if (json_is_array(nodes)) json_object_set(r, "nodes", (json_t *)nodes);
    else if (op) json_object_set_new(r, "nodes", json_pack("[s]", name));
    else json_object_set_new(r, "nodes", json_null());
    json_object_set_new(r, "time_ms", rpx_json_real_or_null(ms));
    json_object_set_new(r, "time_ci_ms", ci);
    return r;
}

/* --timeline: each process's profiled calls as they ran (for the trace): when
 * each began (ms after the process's load, timeline's load_ms[0]), its time,
 * and each row's time in it, in the order the rows first ran. */
static json_t *by_process(const section_merge *m)
{
    json_t *a = json_array(), *r, *rows;
    size_t i;
    int j;
    for (j = 0; j < m->n; j++) {
        const json_t *ex = m->exports[j];
        if (!json_is_object(ex)) continue;
        rows = json_array();
        json_array_foreach(json_object_get(ex, "rows"), i, r)
            json_array_append_new(rows, json_pack("{s:O,s:O}", "name", json_object_get(r, "name"),
                                                  "ms", json_object_get(r, "ms")));
        json_array_append_new(a, json_pack("{s:i,s:O,s:O,s:o}", "process", j, "start_ms",
                                           json_object_get(ex, "start_ms"), "call_ms",
                                           json_object_get(ex, "call_ms"), "rows", rows));
    }
    return a;
}

static int ly_merge(const section_merge *m, section_out *out)
{
    json_t *o, *rows, *names, *r, *ci;
    long calls = 0;
    int j, with = 0;
    size_t i;
    double total = 0, p50 = (double)NAN, un;
    rpx_latency_stats st;
    char text[RPX_ERROR_MESSAGE_SIZE + 256];
    for (j = 0; j < m->n; j++) {
        const json_t *ex = m->exports[j];
        const char *e = json_string_value(json_object_get(ex, "error"));
        if (e) {
            snprintf(text, sizeof text, "--layers: process %d: %s", j + 1, e);
            note(m, text);
        }
        if (json_integer_value(json_object_get(ex, "calls")) > calls)
            calls = (long)json_integer_value(json_object_get(ex, "calls"));
        with += json_integer_value(json_object_get(ex, "calls")) > 0;
    }
    if (!with) {
        note(m, "--layers: no process made a profiled call; layers is null");
        return 0;
    }
    o = json_object();
    rows = json_array();
    names = row_names(m);
    json_array_foreach(names, i, r) {
        double ms = measure_row(m, json_string_value(json_object_get(r, "name")), calls, &ci);
        total += ms;
        json_array_append_new(rows, report_row(json_string_value(json_object_get(r, "name")),
                                               json_object_get(r, "op_type"),
                                               json_object_get(r, "nodes"), ms, ci));
    }
    json_decref(names);
    un = measure_row(m, "", calls, &ci);
    total += un;
    json_array_append_new(rows, report_row("unattributed", NULL, NULL, un, ci));
    if (m->rd->desc.latency && rpx_latency_stats_get(m->rd->desc.latency, &st) == 0 && st.available)
        p50 = st.p50_ms;
    json_array_foreach(rows, i, r)
        json_object_set_new(r, "share", rpx_json_real_or_null(
            json_number_value(json_object_get(r, "time_ms")) / total));
    json_object_set_new(o, "runtime", json_null()); /* the target's section names it (join) */
    json_object_set_new(o, "profiled_calls", json_integer(m->plan->c->layers));
    json_object_set_new(o, "processes", json_integer(with));
    json_object_set_new(o, "covers", json_string(
        "each row's time is the median over each process's profiled calls, then the median "
        "over processes; its interval is between processes (null with fewer than 2); the "
        "profiled calls ran after the timed ones, whose latency they do not touch"));
    json_object_set_new(o, "unprofiled_p50_ms", rpx_json_real_or_null(p50));
    json_object_set_new(o, "total_ms", rpx_json_real_or_null(total));
    json_object_set_new(o, "profiled_call_ms", rpx_json_real_or_null(measure_row(m, NULL, calls, &ci)));
    json_object_set_new(o, "total_ci_ms", ci);
    json_object_set_new(o, "overhead", rpx_json_real_or_null(p50 > 0 ? total / p50 - 1 : NAN));
    if (p50 > 0 && fabs(total / p50 - 1) > 0.15) {
        snprintf(text, sizeof text,
                 "the profiled calls' rows sum to %.4g ms, %.0f %% %s than the unprofiled p50 "
                 "(%.4g ms): the profiler's overhead, or work it does not see; the shares hold "
                 "for the profiled calls",
                 total, 100 * fabs(total / p50 - 1), total > p50 ? "more" : "less", p50);
        json_object_set_new(o, "overhead_note", json_string(text));
    } else {
        json_object_set_new(o, "overhead_note", json_null());
    }
    json_object_set_new(o, "device", json_null());
    json_object_set_new(o, "below_10pct_share", json_null());
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "by_op_type", json_array());
    if (m->plan->c->timeline) json_object_set_new(o, "by_process", by_process(m));
    out->value = o;
    return 0;
}

const rpx_section rpx__section_layers = {
    .off_is_null = 1,
    .key = "layers",
    .on = ly_on,
    .slice_bytes = ly_bytes,
    .mark = ly_mark,
    .begin = ly_begin,
    .after_loop = ly_after_loop,
    .export_json = ly_export,
    .end = ly_end,
    .merge = ly_merge,
};
