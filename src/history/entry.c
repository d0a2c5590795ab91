/* src/history/entry.c — what the history keeps of a report: its session (the
 * report's own "session" block, or for a report written before sessions
 * existed one derived here from its system card and settings, marked
 * "derived": true), the series' session entry (include/rpxprof/history.h:
 * commit, p50 and its interval, each process's p50, status, warnings), the
 * detail kept beside it (each process's statistics, the intervals, variance,
 * the system's conditions) and, when asked, a bounded share of the samples. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <nettle/sha2.h>

#include "history/entry.h"

static void sha_hex(const char *text, char *hex, size_t n_hex)
{
    struct sha256_ctx ctx;
    unsigned char md[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, strlen(text), (const uint8_t *)text);
    sha256_digest(&ctx, sizeof md, md);
    size_t i = 0;
    for (; i < sizeof md && 2 * i + 2 < n_hex; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[2 * i] = '\0';
}

/* 16 hex of the SHA-256 of the canonical text of v (sorted keys, compact) */
static json_t *digest16(const json_t *v)
{
    char *text = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) return NULL;
    char hex[17];
    sha_hex(text, hex, sizeof hex);
    free(text);
    return json_string(hex);
}

static void copy_key(json_t *to, const char *to_key, const json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);
    json_object_set_new(to, to_key, v ? json_deep_copy(v) : json_null());
}

/* what makes two sessions comparable, from an old report's system card */
static json_t *derived_fingerprint(const json_t *report, const json_t *work)
{
    const json_t *card = json_object_get(report, "system_card");
    const json_t *cpu = json_object_get(card, "cpu"), *os = json_object_get(card, "operating_system");
    json_t *machine = json_object(), *software = json_object();
    copy_key(machine, "cpu_model", cpu, "model_name");
    copy_key(machine, "microcode", cpu, "microcode");
    copy_key(machine, "cores", cpu, "cores");
    copy_key(machine, "threads_per_core", cpu, "threads_per_core");
    copy_key(machine, "hypervisor", cpu, "hypervisor");
    copy_key(machine, "kernel", os, "kernel_release");
    copy_key(machine, "governor", cpu, "governor");
    copy_key(machine, "boost", cpu, "boost");
    copy_key(machine, "memory_mb", json_object_get(card, "memory"), "total_mb");
    copy_key(software, "rpxprof", report, "tool");
    copy_key(software, "python", card, "python_version");
    copy_key(software, "torch", card, "pytorch_version");
    json_t *fp = json_pack("{s:o, s:o, s:O}", "machine", machine, "software", software, "work",
                           work);
    json_t *d = fp ? digest16(fp) : NULL;
    if (!d) {
        json_decref(fp);
        return NULL;
    }
    json_object_set_new(fp, "digest", d);
    return fp;
}

/* Sessions for reports without one: their identity from what they hold. */
static json_t *derive_session(const json_t *report)
{
    const char *created = json_string_value(json_object_get(report, "created_utc"));
    const char *sha = json_string_value(json_object_get(report, "inputs_sha256"));
    json_t *work = json_object();
    copy_key(work, "precision", report, "precision");
    copy_key(work, "device", report, "device");
    copy_key(work, "timing_scope", report, "timing_scope");
    copy_key(work, "distinct_samples", report, "distinct_samples");
    json_t *bench = json_object();
    copy_key(bench, "target", report, "model_callable");
    copy_key(bench, "kind", report, "target_kind");
    json_object_set_new(bench, "inputs_digest", sha ? json_sprintf("sha256:%s", sha) : json_null());
    copy_key(bench, "unit", report, "unit");
    json_object_set(bench, "work", work);
    json_t *bid = digest16(bench);
    const json_t *name = json_object_get(json_object_get(report, "metadata"), "name");
    json_object_set_new(bench, "id", bid ? bid : json_null());
    json_object_set_new(bench, "name", json_is_string(name)
                                           ? json_deep_copy(name)
                                           : json_deep_copy(json_object_get(bench, "target")));
    json_t *fp = derived_fingerprint(report, work);
    json_decref(work);
    /* the id's digest from what the written report and the runner's own copy of it
     * share (the per-call arrays may be left out of one of them) */
    json_t *ident = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "created_utc",
                              json_object_get(report, "created_utc"), "target",
                              json_object_get(report, "model_callable"), "inputs",
                              json_object_get(report, "inputs_sha256"), "latency",
                              json_object_get(report, "latency"), "calls",
                              json_object_get(report, "measured_calls"), "wall",
                              json_object_get(report, "wall_time_ms"));
    char *text = ident ? json_dumps(ident, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17))
                       : NULL;
    json_decref(ident);
    char hex[9] = "00000000", stamp[32] = "19700101T000000Z";
    if (text) sha_hex(text, hex, sizeof hex);
    free(text);
    if (created && strlen(created) >= 19) /* 2026-12-06T09:47:00Z -> 20261206T094700Z */
        snprintf(stamp, sizeof stamp, "%.4s%.2s%.2sT%.2s%.2s%.2sZ", created, created + 5,
                 created + 8, created + 11, created + 14, created + 17);
    const json_t *code = json_object_get(report, "code_sha");
    json_t *version = json_pack("{s:n, s:n, s:O, s:s?}", "model_sha256", "module_source_sha256",
                                "commit", json_is_string(code) ? code : json_null(),
                                "commit_source", json_is_string(code) ? "option" : NULL);
    json_t *s = json_pack("{s:s++, s:O, s:O, s:s, s:o, s:o, s:o, s:b}", "id", stamp, "-", hex,
                          "started", created ? json_object_get(report, "created_utc") : json_null(),
                          "ended", created ? json_object_get(report, "created_utc") : json_null(),
                          "covers",
                          "the report's intervals cover the processes of this session, not "
                          "session-to-session drift",
                          "benchmark", bench, "fingerprint", fp ? fp : json_null(), "version",
                          version ? version : json_null(), "derived", 1);
    return s;
}

json_t *rpx__hist_session_of(const json_t *report)
{
    json_t *s = json_object_get(report, "session");
    if (json_is_object(s)) return json_incref(s);
    return derive_session(report);
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
