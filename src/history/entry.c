/* src/history/entry.c — what the history keeps of a report: its session (the
 * report's own "session" block, or for a report written before sessions
 * existed one derived by rpx_session_of_report, "derived": true), the
 * series' session entry (include/rpxprof/history.h: commit, p50 and its interval, each process's p50, status, warnings), the
 * detail kept beside it (each process's statistics, the intervals, variance,
 * the system's conditions) and, when asked, a bounded share of the samples. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "history/entry.h"
#include "rpxprof/session.h"

static void copy_key(json_t *to, const char *to_key, const json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);
    json_object_set_new(to, to_key, v ? json_deep_copy(v) : json_null());
}

json_t *rpx__hist_session_of(const json_t *report)
{
    json_t *s = NULL;
    return rpx_session_of_report(report, &s, NULL) == 0 ? s : NULL;
}

static json_t *copy_or_null(const json_t *v)
{
    return v ? json_deep_copy(v) : json_null();
}

json_t *rpx__hist_entry(const json_t *report, const json_t *session, const char *report_path)
{
    const json_t *lat = json_object_get(report, "latency");
    const json_t *ci = json_object_get(report, "latency_ci");
    const json_t *procs = json_object_get(report, "latency_by_process");
    const json_t *version = json_object_get(session, "version");
    json_t *p50s = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(procs, i, p) json_array_append(p50s, json_object_get(p, "p50_ms") ?
                                                           json_object_get(p, "p50_ms") : json_null());
    const json_t *np = json_object_get(report, "processes");
    json_int_t processes = json_is_integer(np) ? json_integer_value(np)
                           : json_array_size(procs) ? (json_int_t)json_array_size(procs) : 1;
    json_t *covers = json_object_get(session, "covers");
    if (!covers) covers = json_object_get(ci, "covers");
    json_t *warnings = json_object_get(report, "notes");
    json_t *e = json_object();
    copy_key(e, "id", session, "id");
    copy_key(e, "started", session, "started");
    copy_key(e, "ended", session, "ended");
    copy_key(e, "commit", version, "commit");
    json_object_set_new(e, "version", copy_or_null(version));
    copy_key(e, "status", report, "status");
    copy_key(e, "p50_ms", lat, "p50_ms");
    json_object_set_new(e, "p50_ci_ms", copy_or_null(json_object_get(ci, "p50_ms")));
    json_object_set_new(e, "covers", copy_or_null(covers));
    json_object_set_new(e, "processes", json_integer(processes));
    json_object_set_new(e, "process_p50_ms", p50s);
    copy_key(e, "calls", report, "measured_calls");
    if (json_is_true(json_object_get(session, "derived"))) /* an old report's, derived */
        json_object_set_new(e, "derived", json_true());
    json_object_set_new(e, "warnings", json_is_array(warnings) ? json_deep_copy(warnings)
                                                               : json_array());
    json_object_set_new(e, "report_path", report_path ? json_string(report_path) : json_null());
    return e;
}

json_t *rpx__hist_detail(const json_t *report)
{
    static const char *const per_process[] = {"process", "measured_calls", "p50_ms", "p95_ms",
                                              "p99_ms", "mean_ms", "min_ms", "max_ms", "std_ms"};
    json_t *procs = json_array(), *p;
    size_t i;
    json_array_foreach(json_object_get(report, "latency_by_process"), i, p) {
        json_t *o = json_object();
        for (size_t k = 0; k < sizeof per_process / sizeof per_process[0]; k++)
            copy_key(o, per_process[k], p, per_process[k]);
        json_array_append_new(procs, o);
    }
    json_t *d = json_object();
    copy_key(d, "latency", report, "latency");
    copy_key(d, "latency_ci", report, "latency_ci");
    json_object_set_new(d, "latency_by_process", procs);
    copy_key(d, "variance", report, "variance");
    copy_key(d, "conditions", json_object_get(report, "system_card"), "conditions");
    copy_key(d, "wall_time_ms", report, "wall_time_ms");
    copy_key(d, "failed_calls", report, "failed_calls");
    return d;
}

json_t *rpx__hist_samples(const json_t *report, size_t max)
{
    const json_t *s = json_object_get(report, "latency_samples_ms");
    size_t n = json_array_size(s);
    if (!max || !n) return NULL;
    json_t *out = json_array();
    size_t take = n < max ? n : max;
    /* evenly spaced over the run when there are more than max */
    for (size_t i = 0; i < take; i++)
        json_array_append(out, json_array_get(s, (size_t)((double)i * (double)n / (double)take)));
    return json_pack("{s:I, s:I, s:o}", "of", (json_int_t)n, "kept", (json_int_t)take, "samples_ms",
                     out);
}
