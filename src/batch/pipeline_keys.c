/* pipeline_keys.c — owns the depth-efficiency pipeline's per-model keys in
 * the reports `rpxprof batch` writes (spec: profile_depth_efficiency.py's
 * output; docs/batch.md has the table of what each means here): every key
 * derived from the rpxprof report itself, null where rpxprof does not know
 * it, never 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "common/json.h"
#include "batch/pipeline.h"

static double num(const json_t *v) { return json_is_number(v) ? json_number_value(v) : (double)NAN; }

/* a positive finite value, else NaN: the reference's truthiness turns 0 into None */
static double pos(double v) { return isfinite(v) && v > 0 ? v : (double)NAN; }

/* a count: an exact integer where it is one, null when unknown */
static json_t *count(double v)
{
    if (!isfinite(v)) return json_null();
    if (v == floor(v) && fabs(v) < 9007199254740992.0) return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *str_or_null(const char *s) { return s && *s ? json_string(s) : json_null(); }

static const json_t *path2(const json_t *r, const char *a, const char *b)
{
    return json_object_get(json_object_get(r, a), b);
}

/* A positive integer from a metadata value (a number or a numeric string), else 0. */
static long meta_long(const json_t *v)
{
    double d = NAN;
    if (json_is_number(v)) d = json_number_value(v);
    else if (json_is_string(v)) {
        char *end;
        d = strtod(json_string_value(v), &end);
        if (end == json_string_value(v) || *end) d = NAN;
    }
    return isfinite(d) && d >= 1 && d == floor(d) && d < 1e15 ? (long)d : 0;
}

/* frames per sample: the task's metadata frames_per_sample, else clip_length, else 1 */
static long frames_of(const json_t *r)
{
    const json_t *meta = json_object_get(r, "metadata");
    long f = meta_long(json_object_get(meta, "frames_per_sample"));
    if (!f) f = meta_long(json_object_get(meta, "clip_length"));
    return f ? f : 1;
}

/* The input protocol from the inputs' shapes: one H×W×3 array "1xRGB:WxH",
 * one T×H×W×3 array "1xclip:TxWxH", N H×W×3 arrays of one shape "NxRGB:WxH",
 * anything else "arrays:NAME=AxB...,..."; null without inputs. */
static json_t *protocol_of(const json_t *r)
{
    const json_t *in = json_object_get(r, "inputs"), *v;
    const char *k;
    char buf[512];
    size_t n = json_object_size(in), len = 0, i;
    long h = -1, w = -1, t = -1;
    int rgb = 1;
    if (!json_is_object(in) || n == 0) return json_null();
    json_object_foreach((json_t *)in, k, v) {
        const json_t *s = json_object_get(v, "shape");
        size_t nd = json_array_size(s);
        long d[4] = {0, 0, 0, 0};
        for (i = 0; i < nd && i < 4; i++) d[i] = (long)json_integer_value(json_array_get(s, i));
        if (n == 1 && nd == 4 && d[3] == 3) { t = d[0]; h = d[1]; w = d[2]; break; }
        if (nd != 3 || d[2] != 3 || (h >= 0 && (d[0] != h || d[1] != w))) { rgb = 0; break; }
        h = d[0];
        w = d[1];
    }
    if (t >= 0) snprintf(buf, sizeof buf, "1xclip:%ldx%ldx%ld", t, w, h);
    else if (rgb) snprintf(buf, sizeof buf, "%zuxRGB:%ldx%ld", n, w, h);
    else {
        len = (size_t)snprintf(buf, sizeof buf, "arrays:");
        json_object_foreach((json_t *)in, k, v) {
            const json_t *s = json_object_get(v, "shape");
            if (len >= sizeof buf) break;
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s=", len > 7 ? "," : "", k);
            for (i = 0; i < json_array_size(s) && len < sizeof buf; i++)
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%lld", i ? "x" : "",
                                        (long long)json_integer_value(json_array_get(s, i)));
            if (json_array_size(s) == 0 && len < sizeof buf)
                len += (size_t)snprintf(buf + len, sizeof buf - len, "scalar");
        }
    }
    return json_string(buf);
}

/* The ONNX weights' dtypes, sorted and joined by "," (the graph's names:
 * float32); null for a declared cost or none. */
static json_t *dtypes_of(const json_t *eff)
{
    const json_t *by = path2(eff, "params_detail", "by_dtype");
    const char *k, *names[64];
    json_t *v;
    size_t n = 0, i, j, len = 0;
    char buf[512];
    if (!json_is_object(by) || json_object_size(by) == 0) return json_null();
    json_object_foreach((json_t *)by, k, v) if (n < 64) names[n++] = k;
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *x = names[j];
            names[j] = names[j - 1];
            names[j - 1] = x;
        }
    buf[0] = '\0';
    for (i = 0; i < n && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", names[i]);
    return json_string(buf);
}

/* flop_status and flop_method (docs/batch.md): counted on the ONNX graph
 * (every node, or part of it), declared, or unavailable. */
static void flop_status(const json_t *eff, double flops, json_t **status, json_t **method)
{
    const json_t *src = json_object_get(eff, "source");
    const char *s = json_is_string(src) ? json_string_value(src) : NULL;
    *method = json_null();
    if (s && !strcmp(s, "onnx")) {
        const json_t *path = path2(eff, "model", "path");
        char buf[1200];
        double cov = num(json_object_get(eff, "coverage"));
        if (!isfinite(flops)) {
            *status = json_string("unsupported_or_zero:onnx_graph");
        } else if (json_is_true(json_object_get(eff, "partial"))) {
            *status = json_string("partial:onnx_graph");
        } else {
            *status = json_string("counted:onnx_graph");
        }
        if (isfinite(cov))
            snprintf(buf, sizeof buf, "rpxprof cost (ONNX graph analysis) of %.1000s: %.4g %% of the nodes costed",
                     json_is_string(path) ? json_string_value(path) : "the model", 100 * cov);
        else
            snprintf(buf, sizeof buf, "rpxprof cost (ONNX graph analysis) of %.1000s",
                     json_is_string(path) ? json_string_value(path) : "the model");
        *method = json_string(buf);
    } else if (s && !strcmp(s, "declared")) {
        *status = json_string(isfinite(flops) ? "declared" : "unavailable");
        if (isfinite(flops)) *method = json_string("declared in the manifest (\"flops\")");
    } else {
        *status = json_string("unavailable");
    }
}

/* The largest value of an object of numbers; NaN when none. */
static double max_of(const json_t *o)
{
    const char *k;
    json_t *v;
    double mx = NAN;
    json_object_foreach((json_t *)o, k, v)
        if (json_is_number(v) && !(json_number_value(v) <= mx)) mx = json_number_value(v);
    return mx;
}

/* Python's platform.platform() on Linux: "Linux-RELEASE-MACHINE-with-glibcVER". */
static json_t *platform_of(const json_t *card)
{
    const json_t *os = json_object_get(card, "operating_system");
    const json_t *k = json_object_get(os, "kernel"), *rel = json_object_get(os, "kernel_release");
    const json_t *arch = path2(card, "cpu", "architecture");
    const json_t *libc = json_object_get(os, "libc"), *lv = json_object_get(os, "libc_version");
    char buf[512];
    size_t len;
    if (!json_is_string(k)) return json_null();
    len = (size_t)snprintf(buf, sizeof buf, "%.100s", json_string_value(k));
    if (json_is_string(rel)) len += (size_t)snprintf(buf + len, sizeof buf - len, "-%.100s", json_string_value(rel));
    if (json_is_string(arch)) len += (size_t)snprintf(buf + len, sizeof buf - len, "-%.50s", json_string_value(arch));
    if (json_is_string(libc) && json_is_string(lv))
        snprintf(buf + len, sizeof buf - len, "-with-%.30s%.30s", json_string_value(libc), json_string_value(lv));
    return json_string(buf);
}

/* A file's stem (its base name without the extension), as the runner names
 * a sample: "frame" for "data/frame.npz". */
static json_t *stem_of(const json_t *file)
{
    const char *p, *b, *dot;
    if (json_is_array(file)) file = json_array_get(file, 0);
    if (!json_is_string(file)) return json_string("0");
    p = json_string_value(file);
    b = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
    dot = strrchr(b, '.');
    return dot && dot > b ? json_stringn(b, (size_t)(dot - b)) : json_string(b);
}

/* latency_records from latency_samples_ms: one sample (index 0, the inputs
 * file's stem), repetition i. */
static json_t *records_of(const json_t *r)
{
    const json_t *samples = json_object_get(r, "latency_samples_ms");
    json_t *a, *v, *id = stem_of(json_object_get(r, "inputs_file"));
    size_t i;
    a = json_array();
    json_array_foreach(samples, i, v) {
        json_t *o = json_object();
        json_object_set_new(o, "sample_index", json_integer(0));
        json_object_set_new(o, "sample_id", json_copy(id));
        json_object_set_new(o, "repetition", json_integer((json_int_t)i));
        json_object_set_new(o, "latency_ms", json_deep_copy(v));
        json_array_append_new(a, o);
    }
    json_decref(id);
    return a;
}

#define SET(k, v) json_object_set_new(r, k, v)

int rpx_pipeline_keys_add(json_t *r, const rpx_pipeline_context *ctx, rpx_error *err)
{
    const json_t *eff, *card, *lat, *py, *mem, *meta, *v;
    double params, flops, macs, p50, frames, storage, measured, distinct;
    json_t *status, *method;
    if (!json_is_object(r) || !ctx || !ctx->model)
        return rpx_error_set(err, RPX_EINVAL, "pipeline keys: no report or no model name");
    eff = json_object_get(r, "efficiency");
    card = json_object_get(r, "system_card");
    lat = json_object_get(r, "latency");
    py = json_object_get(r, "python");
    mem = json_object_get(r, "memory");
    meta = json_object_get(r, "metadata");
    frames = (double)frames_of(r);
    params = pos(num(json_object_get(eff, "params")));
    flops = pos(num(json_object_get(eff, "flops")));
    macs = pos(num(json_object_get(eff, "macs")));
    storage = pos(num(path2(eff, "params_detail", "storage_bytes")));
    p50 = pos(num(json_object_get(lat, "p50_ms")));
    measured = num(json_object_get(r, "measured_calls"));
    v = json_object_get(r, "distinct_samples");
    distinct = json_is_integer(v) && json_integer_value(v) >= 1 ? (double)json_integer_value(v) : 1;

    SET("model", json_string(ctx->model));
    if (!json_is_string(json_object_get(r, "task"))) SET("task", json_null());
    SET("input_protocol", protocol_of(r));
    SET("frames_per_sample", json_integer((json_int_t)frames));
    if (!json_object_get(r, "precision")) SET("precision", json_null());
    SET("parameter_dtypes", dtypes_of(eff));
    v = json_object_get(meta, "batch_size");
    SET("batch_size", json_integer(meta_long(v) ? meta_long(v) : 1));
    SET("distinct_samples", json_integer((json_int_t)distinct));
    v = json_object_get(r, "warmup_calls");
    SET("warmup_forwards", json_is_integer(v) ? json_integer(json_integer_value(v)) : json_null());
    SET("repetitions_per_sample", isfinite(measured) && measured >= 1 && fmod(measured, distinct) == 0
                                      ? count(measured / distinct) : json_null());
    SET("timed_forwards", isfinite(measured) && measured >= 1 ? count(measured) : json_null());
    SET("params_total", count(params));
    SET("params_total_m", rpx_json_real_or_null(params / 1e6));
    SET("params_trainable", json_null());
    SET("parameter_storage_bytes", count(storage));
    SET("parameter_storage_mb", rpx_json_real_or_null(storage / (1024.0 * 1024.0)));
    SET("flops_per_sample", count(flops));
    SET("flops_per_sample_g", rpx_json_real_or_null(flops / 1e9));
    SET("flops_per_frame_g", rpx_json_real_or_null(flops / frames / 1e9));
    SET("macs_per_sample", count(macs));
    SET("macs_per_sample_g", rpx_json_real_or_null(macs / 1e9));
    flop_status(eff, flops, &status, &method);
    SET("flop_status", status);
    SET("flop_method", method);
    SET("latency_p50_ms_per_sample", rpx_json_real_or_null(p50));
    SET("latency_p95_ms_per_sample", rpx_json_real_or_null(pos(num(json_object_get(lat, "p95_ms")))));
    SET("latency_p99_ms_per_sample", rpx_json_real_or_null(pos(num(json_object_get(lat, "p99_ms")))));
    SET("latency_mean_ms_per_sample", rpx_json_real_or_null(pos(num(json_object_get(lat, "mean_ms")))));
    SET("latency_p50_ms_per_frame", rpx_json_real_or_null(p50 / frames));
    /* a failed report has no samples: no latency_samples_ms, no latency_records */
    if (json_is_array(json_object_get(r, "latency_samples_ms")) &&
        !json_is_array(json_object_get(r, "latency_records")))
        SET("latency_records", records_of(r));
    SET("throughput_frames_per_second", rpx_json_real_or_null(frames * 1000.0 / p50));
    v = json_object_get(py, "torch_cuda_peak_allocated_mb_by_visible_device");
    SET("peak_cuda_allocated_mb",
        rpx_json_real_or_null(json_object_size(v) ? max_of(v)
                                                  : max_of(json_object_get(mem, "cuda_peak_allocated_mb_by_visible_device"))));
    SET("peak_cuda_reserved_mb", json_null());
    SET("peak_cpu_rss_mb", rpx_json_real_or_null(num(json_object_get(mem, "cpu_process_lifetime_peak_mb"))));
    v = json_object_get(card, "gpu_name");
    SET("gpu_name", json_is_string(v) ? json_string(json_string_value(v)) : json_null());
    SET("gpu_total_memory_mb", rpx_json_real_or_null(pos(num(json_object_get(card, "gpu_memory_gb"))) * 1024.0));
    v = json_object_get(py, "torch_version");
    if (!json_is_string(v)) v = json_object_get(card, "pytorch_version");
    SET("torch_version", json_is_string(v) ? json_string(json_string_value(v)) : json_null());
    v = json_object_get(py, "torch_cuda_version");
    SET("cuda_runtime", json_is_string(v) ? json_string(json_string_value(v)) : json_null());
    v = json_object_get(card, "python_version");
    SET("python_version", json_is_string(v) ? json_string(json_string_value(v)) : json_null());
    SET("platform", platform_of(card));
    v = json_object_get(r, "model_callable");
    SET("adapter_class", json_is_string(v) ? json_string(json_string_value(v)) : json_null());
    SET("manifest_path", str_or_null(ctx->manifest_path));
    v = json_object_get(meta, "dataset_revision");
    if (json_is_string(v)) {
        SET("dataset_revision", json_string(json_string_value(v)));
    } else {
        v = json_object_get(r, "inputs_sha256");
        if (json_is_string(v)) {
            char buf[160];
            snprintf(buf, sizeof buf, RPX_PIPELINE_SHA_PREFIX "%.128s", json_string_value(v));
            SET("dataset_revision", json_string(buf));
        } else {
            SET("dataset_revision", json_null());
        }
    }
    SET("code_sha", str_or_null(ctx->code_sha));
    SET("container_image", str_or_null(ctx->container_image));
    SET("concurrent_host_load", json_string(ctx->concurrent_host_load && *ctx->concurrent_host_load
                                                ? ctx->concurrent_host_load : "unknown"));
    v = json_object_get(r, "created_utc");
    SET("profiled_at_utc", json_is_string(v) ? json_string(json_string_value(v)) : json_null());
    return 0;
}
