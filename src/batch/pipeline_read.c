/* pipeline_read.c — owns reading the reports the reference wrote
 * (docs/batch.md#what-aggregate-accepts-from-the-reference): recognising
 * its profile_callable.py reports and its profile_depth_efficiency.py
 * reports by their keys, checking their types and headline values, and
 * turning them into the keys rpxprof aggregate reads, with null for what the
 * tool does not record. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/pipeline.h"
#include "rpxprof/report.h"

static void msg(json_t *arr, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void msg(json_t *arr, const char *f, ...)
{
    char buf[2048];
    va_list ap;
    if (!arr) return;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    json_array_append_new(arr, json_string(buf));
}

static int has(const json_t *r, const char *k) { return json_object_get(r, k) != NULL; }

rpx_report_kind rpx_pipeline_report_kind(const json_t *r)
{
    if (!json_is_object(r)) return RPX_REPORT_UNKNOWN;
    if (has(r, "schema")) return RPX_REPORT_RPXPROF;
    if (has(r, "model") && has(r, "task") && has(r, "latency_p50_ms_per_sample") && has(r, "latency_samples_ms"))
        return RPX_REPORT_REF_DEPTH;
    if (has(r, "timing_scope") && has(r, "latency") && has(r, "latency_samples_ms") && has(r, "measured_calls"))
        return RPX_REPORT_REF_CALLABLE;
    return RPX_REPORT_UNKNOWN;
}

const char *rpx_pipeline_kind_name(rpx_report_kind kind)
{
    switch (kind) {
    case RPX_REPORT_RPXPROF: return "rpxprof";
    case RPX_REPORT_REF_CALLABLE: return "the reference's profile_callable.py";
    case RPX_REPORT_REF_DEPTH: return "the reference's profile_depth_efficiency.py";
    default: return "an unknown tool";
    }
}

/* a number or null (or absent) */
static int num_or_null(const json_t *v) { return !v || json_is_null(v) || json_is_number(v); }

static int finite_positive(const json_t *v)
{
    return json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) > 0;
}

/* a non-empty string, else null: the reference's "" means unknown */
static json_t *str_or_null(const json_t *v)
{
    return json_is_string(v) && *json_string_value(v) ? json_string(json_string_value(v)) : json_null();
}

static json_t *copy_or_null(const json_t *v) { return v ? json_deep_copy(v) : json_null(); }

static const char *samples_problem(const json_t *s)
{
    size_t i;
    if (!json_is_array(s)) return "'latency_samples_ms' is not an array";
    for (i = 0; i < json_array_size(s); i++)
        if (!json_is_number(json_array_get(s, i)) || json_number_value(json_array_get(s, i)) < 0)
            return "'latency_samples_ms' holds a value that is not a number >= 0";
    return NULL;
}

static const char *callable_problem(const json_t *r)
{
    static const char *lat[] = {"p50_ms", "p95_ms", "p99_ms", "mean_ms", NULL};
    const json_t *l = json_object_get(r, "latency");
    size_t i;
    if (!json_is_object(l)) return "'latency' is not an object";
    for (i = 0; lat[i]; i++)
        if (!json_object_get(l, lat[i]) || !num_or_null(json_object_get(l, lat[i])))
            return "a 'latency' statistic (p50_ms, p95_ms, p99_ms, mean_ms) is missing or not a number";
    if (!json_is_integer(json_object_get(r, "measured_calls")) || !json_is_integer(json_object_get(r, "warmup_calls")))
        return "'measured_calls' or 'warmup_calls' is missing or not an integer";
    if (!json_is_string(json_object_get(r, "device")) || !json_is_string(json_object_get(r, "unit")))
        return "'device' or 'unit' is missing or not a string";
    if (!json_is_object(json_object_get(r, "inputs"))) return "'inputs' is missing or not an object";
    if (!json_is_object(json_object_get(r, "memory"))) return "'memory' is missing or not an object";
    if (!json_is_object(json_object_get(r, "system_card"))) return "'system_card' is missing or not an object";
    return samples_problem(json_object_get(r, "latency_samples_ms"));
}

static const char *depth_problem(const json_t *r)
{
    static const char *nums[] = {"latency_p50_ms_per_sample", "latency_p95_ms_per_sample", "latency_p99_ms_per_sample",
                                 "latency_mean_ms_per_sample", "latency_p50_ms_per_frame", "params_total",
                                 "flops_per_sample", "macs_per_sample", "throughput_frames_per_second",
                                 "frames_per_sample", "peak_cpu_rss_mb", "peak_cuda_allocated_mb", NULL};
    const json_t *v;
    size_t i;
    if (!json_is_string(json_object_get(r, "model")) || !json_is_string(json_object_get(r, "task")))
        return "'model' or 'task' is not a string";
    for (i = 0; nums[i]; i++)
        if (!num_or_null(json_object_get(r, nums[i]))) return "a number key (latency_*_ms_per_sample, params_total, flops_per_sample, ...) is not a number or null";
    v = json_object_get(r, "timed_forwards");
    if (v && !json_is_null(v) && !json_is_integer(v)) return "'timed_forwards' is not an integer";
    v = json_object_get(r, "warmup_forwards");
    if (v && !json_is_null(v) && !json_is_integer(v)) return "'warmup_forwards' is not an integer";
    v = json_object_get(r, "latency_records");
    if (v && !json_is_null(v) && !json_is_array(v)) return "'latency_records' is not an array";
    return samples_problem(json_object_get(r, "latency_samples_ms"));
}

static void missing_add(json_t *missing, const char *k)
{
    if (missing) json_array_append_new(missing, json_string(k));
}

static json_t *from_callable(const json_t *r, const char *file, int allow, json_t *errors, json_t *warnings,
                             json_t *missing)
{
    json_t *o = json_object(), *mem = json_object(), *card = json_object();
    const json_t *rc = json_object_get(r, "system_card"), *rm = json_object_get(r, "memory"), *v;
    v = json_object_get(r, "model_callable");
    json_object_set_new(o, "model_callable", str_or_null(v));
    json_object_set_new(o, "device", json_string(json_string_value(json_object_get(r, "device"))));
    json_object_set_new(o, "precision", str_or_null(json_object_get(rc, "precision")));
    json_object_set_new(o, "unit", json_string(json_string_value(json_object_get(r, "unit"))));
    json_object_set_new(o, "warmup_calls", json_deep_copy(json_object_get(r, "warmup_calls")));
    json_object_set_new(o, "measured_calls", json_deep_copy(json_object_get(r, "measured_calls")));
    json_object_set_new(o, "inputs", json_deep_copy(json_object_get(r, "inputs")));
    v = json_object_get(r, "inputs_sha256");
    json_object_set_new(o, "inputs_sha256", str_or_null(v));
    if (!json_is_string(v)) missing_add(missing, "inputs_sha256");
    json_object_set_new(o, "metadata", json_null());
    missing_add(missing, "metadata");
    json_object_set_new(o, "latency", json_deep_copy(json_object_get(r, "latency")));
    json_object_set_new(o, "latency_samples_ms", json_deep_copy(json_object_get(r, "latency_samples_ms")));
    json_object_set_new(mem, "cpu_process_lifetime_peak_mb", copy_or_null(json_object_get(rm, "cpu_process_lifetime_peak_mb")));
    json_object_set_new(mem, "cpu_inference_peak_mb", json_null());
    missing_add(missing, "memory.cpu_inference_peak_mb");
    v = json_object_get(rm, "cuda_peak_allocated_mb_by_visible_device");
    json_object_set_new(mem, "cuda_peak_allocated_mb_by_visible_device", json_is_object(v) ? json_deep_copy(v) : json_object());
    json_object_set_new(o, "memory", mem);
    json_object_set_new(card, "gpu_name", str_or_null(json_object_get(rc, "gpu_name")));
    /* its cpu_name is platform.processor(), an architecture: not a CPU model */
    json_object_set_new(card, "cpu_name", json_null());
    missing_add(missing, "system_card.cpu_name (it records the architecture)");
    json_object_set_new(card, "driver_version", str_or_null(json_object_get(rc, "driver_version")));
    json_object_set_new(card, "os", str_or_null(json_object_get(rc, "os")));
    json_object_set_new(o, "system_card", card);
    json_object_set_new(o, "efficiency", json_null());
    missing_add(missing, "efficiency (params, flops, macs)");
    json_object_set_new(o, "realtime_budget", json_null());
    missing_add(missing, "realtime_budget");
    json_object_set_new(o, "created_utc", json_null());
    missing_add(missing, "created_utc");
    missing_add(missing, "latency_ci");
    if (allow)
        msg(warnings, "%s: FLOPs unavailable: %s counts none (allowed by --allow-incomplete-flops)", file,
            rpx_pipeline_kind_name(RPX_REPORT_REF_CALLABLE));
    else
        msg(errors, "%s: FLOPs unavailable: %s counts none; profile the model with rpxprof batch (\"cost\" or "
                    "\"flops\" in the manifest), or pass --allow-incomplete-flops",
            file, rpx_pipeline_kind_name(RPX_REPORT_REF_CALLABLE));
    return o;
}

static json_t *from_depth(const json_t *r, const char *file, int allow, json_t *errors, json_t *warnings,
                          json_t *missing)
{
    json_t *o = json_object(), *mem = json_object(), *card = json_object(), *lat = json_object(), *eff, *rt;
    const json_t *v, *s = json_object_get(r, "latency_samples_ms"), *rec = json_object_get(r, "latency_records");
    double frames = json_is_number(json_object_get(r, "frames_per_sample")) ? json_number_value(json_object_get(r, "frames_per_sample")) : NAN;
    double tput = json_is_number(json_object_get(r, "throughput_frames_per_second"))
                      ? json_number_value(json_object_get(r, "throughput_frames_per_second")) : NAN;
    json_object_set_new(o, "model_callable", str_or_null(json_object_get(r, "adapter_class")));
    json_object_set_new(o, "device", json_null());
    json_object_set_new(o, "precision", str_or_null(json_object_get(r, "precision")));
    json_object_set_new(o, "unit", json_null());
    v = json_object_get(r, "warmup_forwards");
    json_object_set_new(o, "warmup_calls", json_is_integer(v) ? json_deep_copy(v) : json_integer(0));
    if (!json_is_integer(v)) missing_add(missing, "warmup_forwards");
    v = json_object_get(r, "timed_forwards");
    json_object_set_new(o, "measured_calls", json_is_integer(v) ? json_deep_copy(v) : json_integer((json_int_t)json_array_size(s)));
    if (!json_is_integer(v)) missing_add(missing, "timed_forwards");
    json_object_set_new(o, "inputs", json_null());
    json_object_set_new(o, "inputs_sha256", json_null());
    json_object_set_new(o, "metadata", json_null());
    missing_add(missing, "device, unit, inputs, inputs_sha256, metadata");
    json_object_set_new(lat, "p50_ms", copy_or_null(json_object_get(r, "latency_p50_ms_per_sample")));
    json_object_set_new(lat, "p95_ms", copy_or_null(json_object_get(r, "latency_p95_ms_per_sample")));
    json_object_set_new(lat, "p99_ms", copy_or_null(json_object_get(r, "latency_p99_ms_per_sample")));
    json_object_set_new(lat, "mean_ms", copy_or_null(json_object_get(r, "latency_mean_ms_per_sample")));
    json_object_set_new(o, "latency", lat);
    json_object_set_new(o, "latency_samples_ms", json_deep_copy(s));
    if (json_is_array(rec) && json_array_size(rec) != json_array_size(s))
        msg(errors, "%s: latency_records has %zu records but latency_samples_ms has %zu samples; the report was "
                    "altered or truncated", file, json_array_size(rec), json_array_size(s));
    json_object_set_new(mem, "cpu_process_lifetime_peak_mb", copy_or_null(json_object_get(r, "peak_cpu_rss_mb")));
    json_object_set_new(mem, "cpu_inference_peak_mb", json_null());
    v = json_object_get(r, "peak_cuda_allocated_mb");
    json_object_set_new(mem, "cuda_peak_allocated_mb_by_visible_device",
                        json_is_number(v) ? json_pack("{s:O}", "current", v) : json_object());
    json_object_set_new(o, "memory", mem);
    json_object_set_new(card, "gpu_name", str_or_null(json_object_get(r, "gpu_name")));
    json_object_set_new(card, "cpu_name", json_null());
    json_object_set_new(card, "driver_version", json_null());
    json_object_set_new(card, "os", str_or_null(json_object_get(r, "platform")));
    missing_add(missing, "memory.cpu_inference_peak_mb, system_card.cpu_name, driver_version, latency_ci");
    json_object_set_new(o, "system_card", card);
    eff = json_object();
    json_object_set_new(eff, "source", json_string("profile_depth_efficiency"));
    json_object_set_new(eff, "params", copy_or_null(json_object_get(r, "params_total")));
    json_object_set_new(eff, "flops", copy_or_null(json_object_get(r, "flops_per_sample")));
    json_object_set_new(eff, "macs", copy_or_null(json_object_get(r, "macs_per_sample")));
    json_object_set_new(o, "efficiency", eff);
    rt = json_object();
    json_object_set_new(rt, "per_frame_ms", copy_or_null(json_object_get(r, "latency_p50_ms_per_frame")));
    json_object_set_new(rt, "throughput_per_s", isfinite(tput) && frames > 0 ? json_real(tput / frames) : json_null());
    json_object_set_new(o, "realtime_budget", rt);
    json_object_set_new(o, "created_utc", str_or_null(json_object_get(r, "profiled_at_utc")));
    /* the pipeline aggregator's own headline checks */
    v = json_object_get(r, "params_total");
    if (!finite_positive(v))
        msg(errors, "%s: params_total is %s, not a finite positive number (%s); the pipeline's aggregator "
                    "refuses it too", file, json_is_number(v) ? "not positive" : "null or missing",
            rpx_pipeline_kind_name(RPX_REPORT_REF_DEPTH));
    if (!finite_positive(json_object_get(r, "flops_per_sample"))) {
        v = json_object_get(r, "flop_status");
        if (allow)
            msg(warnings, "%s: FLOPs unavailable (flop_status '%s'; allowed by --allow-incomplete-flops)", file,
                json_is_string(v) ? json_string_value(v) : "missing");
        else
            msg(errors, "%s: FLOPs unavailable (flop_status '%s'); pass --allow-incomplete-flops to keep the report",
                file, json_is_string(v) ? json_string_value(v) : "missing");
    }
    return o;
}

json_t *rpx_pipeline_normalize(const json_t *r, rpx_report_kind kind, const char *file, const char *task,
                               const char *model, int allow, json_t *errors, json_t *warnings, json_t *missing)
{
    const char *prob;
    json_t *o;
    if (kind == RPX_REPORT_REF_CALLABLE) prob = callable_problem(r);
    else if (kind == RPX_REPORT_REF_DEPTH) prob = depth_problem(r);
    else prob = "it is not a report of the reference";
    if (prob) {
        msg(errors, "%s: written by %s, but %s; the report was altered", file, rpx_pipeline_kind_name(kind), prob);
        return NULL;
    }
    if (kind == RPX_REPORT_REF_DEPTH &&
        (strcmp(json_string_value(json_object_get(r, "model")), model) ||
         strcmp(json_string_value(json_object_get(r, "task")), task))) {
        msg(errors, "%s: identity mismatch: the report is model '%s' of task '%s' but its path says model '%s' of "
                    "task '%s'; a report must be <task>/<model>.json",
            file, json_string_value(json_object_get(r, "model")), json_string_value(json_object_get(r, "task")),
            model, task);
        return NULL;
    }
    o = kind == RPX_REPORT_REF_CALLABLE ? from_callable(r, file, allow, errors, warnings, missing)
                                        : from_depth(r, file, allow, errors, warnings, missing);
    json_object_set_new(o, "schema", json_string(RPX_PROFILE_SCHEMA));
    json_object_set_new(o, "status", json_string("complete"));
    json_object_set_new(o, "task", json_string(task));
    json_object_set_new(o, "model_name", json_string(model));
    return o;
}
