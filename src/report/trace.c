/* trace.c — owns the Chrome trace-event JSON of a run (trace.h): the JSON
 * object format of the Trace Event Format ({"traceEvents": [...],
 * "displayTimeUnit": "ns", "otherData": {...}}), drawn from the report alone
 * (its `timeline`, `latency_samples_ms`, `latency_by_process`, `call_records`):
 *
 * - one process track per worker process (pid = process + 1, named by "M"
 *   process_name/thread_name metadata events; tid 1 carries its calls);
 * - "X" complete events on the samples' clock, ts and dur in microseconds
 *   from the run's origin, rounded to the nanosecond: load and setup (cat
 *   "setup"), each warmup call ("warmup"), each timed call ("timed", dur =
 *   its sample), each input restore ("restore") and teardown ("teardown");
 *   args: the call's index in its process, its index in latency_samples_ms,
 *   the input sample, the CPU it started and ended on;
 * - "C" counter events: the resident set readings (rss_mb) at the end of the
 *   call they followed; on cuda runs one more track per GPU with the GPU
 *   watch's SM clock, power and temperature (timeline.gpu);
 * - "i" instants: an HTTP run's streamed events (http.streaming.events_kept)
 *   on their calls;
 * - an open-loop HTTP load's requests (timeline request_intended_ms): async
 *   "b"/"e" pairs (cat "request", id the sample's index) on the process's
 *   track, from the intended send time to the response's end (its sample),
 *   so that requests in flight together stack instead of overlapping;
 * - --layers with --timeline: each process's profiled calls (cat "profiled")
 *   after its timed calls, the rows the runtime's profiler timed nested in
 *   each (cat "layer", one after another in the order they ran);
 * - at most max_events events; when the bound cuts a process's events, the
 *   first ones are kept and a global "i" instant event (cat "note") says how
 *   many were left out. */
#include "report/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

/* The events are written as text, one a line: a million of them as jansson
 * objects would take gigabytes. */
typedef struct sink {
    rpx_strbuf *b;
    long left;                    /* events this track may still add */
    long dropped;
    long *written;
} sink;

/* ms from the report as "µs.nnn": integer nanoseconds, written exactly */
static void put_us(rpx_strbuf *b, double ms)
{
    long long ns = llround(ms * 1e6);
    if (!(ns > 0)) ns = 0;
    rpx__sb_printf(b, "%lld.%03lld", ns / 1000, ns % 1000);
}

static void put_num(rpx_strbuf *b, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        rpx__sb_str(b, "null");
        return;
    }
    rpx__fmt_shortest(buf, sizeof buf, v);
    rpx__sb_str(b, buf);
}

static void put_int_or_null(rpx_strbuf *b, const json_t *v)
{
    if (json_is_integer(v)) rpx__sb_printf(b, "%lld", (long long)json_integer_value(v));
    else rpx__sb_str(b, "null");
}

static void begin(rpx_strbuf *b, long *written)
{
    if (*written) rpx__sb_str(b, ",\n");
    (*written)++;
}

/* Room for one more event on this track? Counts the ones left out. */
static int room(sink *s)
{
    if (s->left <= 0) {
        s->dropped++;
        return 0;
    }
    s->left--;
    begin(s->b, s->written);
    return 1;
}

/* {"name":..,"cat":..,"ph":"X","ts":..,"dur":..,"pid":..,"tid":1 — the caller closes it */
static int complete(sink *s, const char *name, const char *cat, int pid, double ts_ms,
                    double dur_ms)
{
    if (!room(s)) return 0;
    rpx__sb_printf(s->b, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", name, cat);
    put_us(s->b, ts_ms);
    rpx__sb_str(s->b, ",\"dur\":");
    put_us(s->b, dur_ms);
    rpx__sb_printf(s->b, ",\"pid\":%d,\"tid\":1", pid);
    return 1;
}

static void meta(rpx_strbuf *b, long *written, const char *what, int pid, const char *name)
{
    json_t *n = json_string(name);
    char *q = n ? json_dumps(n, JSON_ENCODE_ANY) : NULL;
    begin(b, written);
    rpx__sb_printf(b, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":1,\"args\":{\"name\":%s}}",
                   what, pid, q ? q : "\"?\"");
    free(q);
    json_decref(n);
}

static void counter(sink *s, const char *name, const char *cat, int pid, double ts_ms,
                    const char *key, double v)
{
    if (!room(s)) return;
    rpx__sb_printf(s->b, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"C\",\"ts\":", name, cat);
    put_us(s->b, ts_ms);
    rpx__sb_printf(s->b, ",\"pid\":%d,\"args\":{\"%s\":", pid, key);
    put_num(s->b, v);
    rpx__sb_str(s->b, "}}");
}

static int span_of(const json_t *a, double *start, double *end)
{
    if (!json_is_array(a) || json_array_size(a) != 2) return 0;
    *start = json_number_value(json_array_get(a, 0));
    *end = json_number_value(json_array_get(a, 1));
    return 1;
}

static double num_at(const json_t *a, size_t i)
{
    return json_number_value(json_array_get(a, i));
}

/* A streamed HTTP response's events (http.streaming.events_kept: t_ms from
 * the request's start, which the call's start stands for) as thread-scoped
 * instants on the one process's track. Not drawn when calls failed: the
 * kept events count every timed call, the call starts only the successful. */
static void stream_events(const json_t *report, const json_t *starts, size_t n_calls, int pid,
                          sink *s)
{
    const json_t *http = json_object_get(report, "http");
    const json_t *kept = json_object_get(json_object_get(http, "streaming"), "events_kept");
    const json_t *k;
    size_t i, j;
    if (!json_is_array(kept) || json_integer_value(json_object_get(http, "failed_calls")) != 0)
        return;
    json_array_foreach(kept, i, k)
    {
        json_int_t call = json_integer_value(json_object_get(k, "call"));
        const json_t *t = json_object_get(k, "t_ms"), *content = json_object_get(k, "content");
        if (call < 0 || (size_t)call >= n_calls) continue;
        for (j = 0; j < json_array_size(t); j++) {
            if (!room(s)) continue;
            rpx__sb_str(s->b, "{\"name\":\"streamed event\",\"cat\":\"stream\",\"ph\":\"i\","
                              "\"s\":\"t\",\"ts\":");
            put_us(s->b, num_at(starts, (size_t)call) + num_at(t, j));
            rpx__sb_printf(s->b, ",\"pid\":%d,\"tid\":1,\"args\":{\"call\":%lld,\"event\":%zu,"
                                 "\"content\":%s}}",
                           pid, (long long)call, j,
                           json_is_true(json_array_get(content, j)) ? "true" : "false");
        }
    }
}

/* An open-loop load's requests: one async pair each, from the intended send
 * time (on the trace's clock) to the end; args name the sample and its
 * http.load.schedule_ms. Both events or neither (the bound counts two). */
static void request_events(const json_t *report, const json_t *intended, size_t offset, int pid,
                           sink *s)
{
    const json_t *samples = json_object_get(report, "latency_samples_ms");
    const json_t *sched = json_object_get(
        json_object_get(json_object_get(report, "http"), "load"), "schedule_ms");
    size_t i, n = json_array_size(intended), n_samples = json_array_size(samples);
    if (offset > n_samples) return;
    if (n > n_samples - offset) n = n_samples - offset; /* an altered report */
    for (i = 0; i < n; i++) {
        size_t g = offset + i;
        double t0 = num_at(intended, i), dur = num_at(samples, g);
        if (s->left < 2) {
            s->dropped += 2;
            continue;
        }
        s->left--;
        begin(s->b, s->written);
        rpx__sb_printf(s->b, "{\"name\":\"request %zu\",\"cat\":\"request\",\"ph\":\"b\","
                             "\"id\":\"%zu\",\"ts\":", i, g);
        put_us(s->b, t0);
        rpx__sb_printf(s->b, ",\"pid\":%d,\"tid\":1,\"args\":{\"index\":%zu,\"sample_index\":%zu,"
                             "\"intended_ms\":", pid, i, g);
        put_num(s->b, json_is_number(json_array_get(sched, g)) ? num_at(sched, g) : NAN);
        rpx__sb_str(s->b, ",\"latency_ms\":");
        put_num(s->b, dur);
        rpx__sb_str(s->b, "}}");
        (void)room(s);
        rpx__sb_printf(s->b, "{\"name\":\"request %zu\",\"cat\":\"request\",\"ph\":\"e\","
                             "\"id\":\"%zu\",\"ts\":", i, g);
        /* the end as start + sample, both rounded to the nanosecond as put_us does */
        put_us(s->b, (double)(llround(t0 * 1e6) + llround(dur * 1e6)) / 1e6);
        rpx__sb_printf(s->b, ",\"pid\":%d,\"tid\":1}", pid);
    }
}

/* One process's events. */
/* A name that goes into the trace's text as it is (no quote, backslash or control). */
static int plain(const char *n)
{
    for (; *n; n++)
        if (*n == '"' || *n == '\\' || (unsigned char)*n < 0x20) return 0;
    return 1;
}

static void put_quoted(rpx_strbuf *b, const char *text)
{
    json_t *n = json_string(text);
    char *q = n ? json_dumps(n, JSON_ENCODE_ANY) : NULL;
    rpx__sb_str(b, q ? q : "\"?\"");
    free(q);
    json_decref(n);
}

/* --layers with --timeline: the process's profiled calls (cat "profiled", after
 * its timed calls) and in each the rows the runtime's profiler timed (cat
 * "layer"), one after another in the order they first ran (the profiler gives
 * each node's time, not its start), so that they nest under their call; what
 * no node accounts for is the call's time after them. */
static void layer_events(const json_t *report, const json_t *tp, int pid, sink *s)
{
    const json_t *bp = NULL, *p, *r, *rows, *starts, *calls;
    json_int_t proc = json_integer_value(json_object_get(tp, "process"));
    double load, end;
    size_t i, k;
    char name[48];
    json_array_foreach(json_object_get(json_object_get(report, "layers"), "by_process"), i, p)
        if (json_integer_value(json_object_get(p, "process")) == proc) bp = p;
    if (!bp || !span_of(json_object_get(tp, "load_ms"), &load, &end)) return;
    starts = json_object_get(bp, "start_ms");
    calls = json_object_get(bp, "call_ms");
    rows = json_object_get(bp, "rows");
    for (k = 0; k < json_array_size(starts); k++) {
        double at = load + num_at(starts, k);
        snprintf(name, sizeof name, "profiled call %zu", k);
        if (!complete(s, name, "profiled", pid, at, num_at(calls, k))) return;
        rpx__sb_printf(s->b, ",\"args\":{\"index\":%zu}}", k);
        json_array_foreach(rows, i, r) {
            double d = num_at(json_object_get(r, "ms"), k);
            const char *n = json_string_value(json_object_get(r, "name"));
            if (!(d > 0) || !n) continue;
            if (!complete(s, plain(n) ? n : "layer", "layer", pid, at, d)) return;
            rpx__sb_str(s->b, ",\"args\":{\"row\":");
            put_quoted(s->b, n);
            rpx__sb_printf(s->b, ",\"profiled_call\":%zu}}", k);
            at += d;
        }
    }
}

static void process_events(const json_t *report, const json_t *tp, sink *s, int *no_calls)
{
    const json_t *samples = json_object_get(report, "latency_samples_ms");
    const json_t *byp = json_object_get(report, "latency_by_process");
    const json_t *recs = json_object_get(report, "call_records");
    const json_t *cs = json_object_get(recs, "cpu_start"), *ce = json_object_get(recs, "cpu_end");
    const json_t *starts = json_object_get(tp, "call_start_ms");
    const json_t *ws = json_object_get(tp, "warmup_start_ms"), *wd = json_object_get(tp, "warmup_ms");
    const json_t *rs = json_object_get(tp, "restore_start_ms"), *rd = json_object_get(tp, "restore_ms");
    const json_t *wrs = json_object_get(tp, "warmup_restore_start_ms");
    const json_t *wrd = json_object_get(tp, "warmup_restore_ms");
    const json_t *rc = json_object_get(tp, "rss_after_call"), *rm = json_object_get(tp, "rss_mb");
    json_int_t proc = json_integer_value(json_object_get(tp, "process"));
    long n_distinct = (long)json_integer_value(json_object_get(report, "distinct_samples"));
    const json_t *bp = json_array_get(byp, (size_t)proc);
    size_t offset = (size_t)json_integer_value(json_object_get(bp, "sample_offset"));
    size_t i, n_calls = json_array_size(starts), n_warm = json_array_size(ws);
    size_t n_samples = json_array_size(samples);
    int pid = (int)proc + 1;
    char name[48];
    double a, b;
    if (n_distinct < 1) n_distinct = 1;
    if (offset > n_samples) offset = n_samples;
    if (n_calls > n_samples - offset) n_calls = n_samples - offset; /* an altered report */
    if (span_of(json_object_get(tp, "load_ms"), &a, &b) && complete(s, "load", "setup", pid, a, b - a))
        rpx__sb_str(s->b, "}");
    if (span_of(json_object_get(tp, "setup_ms"), &a, &b) &&
        complete(s, "setup", "setup", pid, a, b - a))
        rpx__sb_str(s->b, "}");
    if (span_of(json_object_get(tp, "teardown_ms"), &a, &b) &&
        complete(s, "teardown", "teardown", pid, a, b - a))
        rpx__sb_str(s->b, "}");
    for (i = 0; i < n_warm; i++) {
        if (json_is_array(wrs) && i < json_array_size(wrs) &&
            complete(s, "restore", "restore", pid, num_at(wrs, i), num_at(wrd, i)))
            rpx__sb_printf(s->b, ",\"args\":{\"before\":\"warmup\",\"index\":%zu}}", i);
        snprintf(name, sizeof name, "warmup %zu", i);
        if (complete(s, name, "warmup", pid, num_at(ws, i), num_at(wd, i)))
            rpx__sb_printf(s->b, ",\"args\":{\"index\":%zu,\"sample\":%zu}}", i,
                           i % (size_t)n_distinct);
    }
    if (!json_is_array(starts)) *no_calls = 1;
    for (i = 0; i < n_calls; i++) {
        size_t g = offset + i;
        if (json_is_array(rs) && i < json_array_size(rs) &&
            complete(s, "restore", "restore", pid, num_at(rs, i), num_at(rd, i)))
            rpx__sb_printf(s->b, ",\"args\":{\"before\":\"timed\",\"index\":%zu}}", i);
        snprintf(name, sizeof name, "call %zu", i);
        if (!complete(s, name, "timed", pid, num_at(starts, i), num_at(samples, g))) continue;
        rpx__sb_printf(s->b, ",\"args\":{\"index\":%zu,\"sample_index\":%zu,\"sample\":%zu,"
                             "\"cpu_start\":",
                       i, g, g % (size_t)n_distinct);
        put_int_or_null(s->b, json_array_get(cs, g));
        rpx__sb_str(s->b, ",\"cpu_end\":");
        put_int_or_null(s->b, json_array_get(ce, g));
        rpx__sb_str(s->b, "}}");
    }
    if (proc == 0 && n_calls > 0) stream_events(report, starts, n_calls, pid, s);
    if (json_is_array(json_object_get(tp, "request_intended_ms")))
        request_events(report, json_object_get(tp, "request_intended_ms"), offset, pid, s);
    layer_events(report, tp, pid, s);
    for (i = 0; json_is_array(rc) && i < json_array_size(rc) && n_calls > 0; i++) {
        json_int_t after = json_integer_value(json_array_get(rc, i)); /* 1-based */
        size_t k = after >= 1 && (size_t)after <= n_calls ? (size_t)after - 1 : n_calls - 1;
        counter(s, "resident set (MiB)", "memory", pid,
                num_at(starts, k) + num_at(samples, offset + k), "rss_mb", num_at(rm, i));
    }
}

/* One GPU's readings as counter tracks of their own process track. */
static void gpu_events(const json_t *g, int pid, sink *s)
{
    static const char *const keys[] = {"sm_clock_mhz", "power_w", "temperature_c"};
    static const char *const names[] = {"SM clock (MHz)", "power (W)", "temperature (C)"};
    const json_t *t = json_object_get(g, "t_ms");
    size_t i, k;
    for (i = 0; i < json_array_size(t); i++)
        for (k = 0; k < 3; k++) {
            const json_t *v = json_array_get(json_object_get(g, keys[k]), i);
            if (!json_is_number(v)) continue; /* not read: no point, never a 0 */
            counter(s, names[k], "gpu", pid, num_at(t, i), keys[k], json_number_value(v));
        }
}

char *rpx__trace_from_report(const json_t *report, const char *source, const char *option,
                             long max_events, size_t *len, rpx_error *err)
{
    const json_t *tl = json_object_get(report, "timeline"), *procs, *tp, *gpus;
    const char *schema = json_string_value(json_object_get(report, "schema"));
    json_t *other;
    rpx_strbuf b = {0};
    long budget, share, dropped = 0, written = 0;
    size_t i, n, n_gpus;
    int no_calls = 0;
    char *text;
    if (!source) source = "the report";
    if (!option) option = "--trace-max-events";
    if (!schema || strcmp(schema, "rpxprof.profile/1") != 0)
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: schema '%s' is not a run report (rpxprof.profile/1); give the "
                             "report of rpxprof run",
                             source, schema ? schema : "(none)"),
               NULL;
    if (!json_is_object(tl))
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: timeline: %s; the report did not keep when each call began. "
                             "Run again with --timeline (or --trace FILE)",
                             source, tl ? "null" : "missing"),
               NULL;
    procs = json_object_get(tl, "processes");
    n = json_array_size(procs);
    gpus = json_object_get(tl, "gpu");
    n_gpus = json_array_size(gpus);
    if (n == 0 || !json_is_array(json_object_get(report, "latency_samples_ms")))
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: timeline.processes or latency_samples_ms: empty or missing; "
                             "give a complete report of rpxprof run --timeline",
                             source),
               NULL;
    if (max_events < RPX_TRACE_MIN_MAX_EVENTS || (size_t)max_events < 2 * n + n_gpus + 1)
        return rpx_error_set(err, RPX_EINVAL,
                             "%s %ld: a trace of %zu processes needs at least "
                             "%zu events (and never fewer than %ld); give a larger bound",
                             option, max_events, n,
                             2 * n + n_gpus + 1 > (size_t)RPX_TRACE_MIN_MAX_EVENTS
                                 ? 2 * n + n_gpus + 1
                                 : (size_t)RPX_TRACE_MIN_MAX_EVENTS,
                             RPX_TRACE_MIN_MAX_EVENTS),
               NULL;
    /* the metadata first (2 a process, 1 a GPU) and room for the note */
    budget = max_events - (long)(2 * n + n_gpus) - 1;
    share = budget / (long)(n + n_gpus);
    rpx__sb_printf(&b, "{\"schema\":\"%s\",\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n",
                   RPX_TRACE_SCHEMA);
    json_array_foreach(procs, i, tp)
    {
        json_int_t proc = json_integer_value(json_object_get(tp, "process"));
        const json_t *pid = json_object_get(tp, "pid");
        char name[96];
        sink s = {&b, share, 0, &written};
        if (json_is_integer(pid))
            snprintf(name, sizeof name, "process %lld (pid %lld)", (long long)proc,
                     (long long)json_integer_value(pid));
        else
            snprintf(name, sizeof name, "process %lld", (long long)proc);
        meta(&b, &written, "process_name", (int)proc + 1, name);
        meta(&b, &written, "thread_name", (int)proc + 1, "calls");
        process_events(report, tp, &s, &no_calls);
        dropped += s.dropped;
    }
    for (i = 0; i < n_gpus; i++) { /* the GPU watch (cuda runs), after the processes */
        const json_t *g = json_array_get(gpus, i);
        char name[96];
        int pid = (int)(n + 1 + i);
        sink s = {&b, share, 0, &written};
        snprintf(name, sizeof name, "GPU %lld (NVML index %lld)",
                 (long long)json_integer_value(json_object_get(g, "visible_ordinal")),
                 (long long)json_integer_value(json_object_get(g, "index")));
        meta(&b, &written, "process_name", pid, name);
        gpu_events(g, pid, &s);
        dropped += s.dropped;
    }
    if (dropped > 0) {
        begin(&b, &written);
        rpx__sb_printf(&b,
                       "{\"name\":\"trace cut at %s %ld: %ld events left out "
                       "(each track keeps its first %ld)\",\"cat\":\"note\",\"ph\":\"i\","
                       "\"s\":\"g\",\"ts\":0.000,\"pid\":1,\"tid\":1,\"args\":{\"max_events\":%ld,"
                       "\"left_out\":%ld}}",
                       option, max_events, dropped, share, max_events, dropped);
    }
    other = json_object();
    json_object_set_new(other, "source", json_string(source));
    json_object_set(other, "model", json_object_get(report, "model_callable"));
    json_object_set(other, "status", json_object_get(report, "status"));
    json_object_set_new(other, "clock",
                        json_string("CLOCK_MONOTONIC (the samples' clock); ts and dur in "
                                    "microseconds from the run's first process's load start, "
                                    "rounded to the nanosecond"));
    json_object_set_new(other, "max_events", json_integer(max_events));
    json_object_set_new(other, "events_left_out", json_integer(dropped));
    if (no_calls) {
        json_object_set_new(other, "calls",
                            json_string("the calls' start times were not kept (an open-loop "
                                        "HTTP load has no calls of its own)"));
    } else if (dropped > 0) { /* never "every" beside events_left_out */
        char words[256];
        snprintf(words, sizeof words, "the first %ld events of each track kept (setup, the "
                 "warmup calls, then the timed calls, in order); %ld left out by %s %ld "
                 "(events_left_out)", share, dropped, option, max_events);
        json_object_set_new(other, "calls", json_string(words));
    } else {
        json_object_set_new(other, "calls", json_string("every warmup call kept and every "
                                                        "timed call"));
    }
    text = json_dumps(other, JSON_COMPACT);
    json_decref(other);
    rpx__sb_str(&b, "\n],\"otherData\":");
    rpx__sb_str(&b, text ? text : "{}");
    rpx__sb_str(&b, "}\n");
    free(text);
    if (b.oom || !text) {
        free(b.p);
        return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory writing the trace", source), NULL;
    }
    if (len) *len = b.len;
    return b.p;
}
