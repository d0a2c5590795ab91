/* profile.c — owns the layout of the "rpxprof.profile/1" report: a run's
 * (rpx_profile_report) and a batch job's that built none (rpx_profile_failed_report). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/json_set.h"
#include "common/json.h"
#include "rpxprof/npz.h"
#include "rpxprof/report.h"

/* jansson's json_object_set_new ignores a NULL value; count it as out of memory. */
#define SET(obj, k, v) RPX_JSON_SET(ok, obj, k, v)

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *borrowed(json_t *v, json_t *(*fallback)(void))
{
    return v ? json_incref(v) : fallback();
}

static json_t *inputs_object(const rpx_inputs *in)
{
    json_t *o = json_object();
    size_t i;
    int d, ok = 1;
    if (!o || !in) return o;
    for (i = 0; i < in->count; i++) {
        const rpx_tensor *t = &in->tensors[i];
        json_t *shape = json_array(), *entry = json_object();
        if (!shape || !entry) ok = 0;
        for (d = 0; ok && d < t->ndim; d++)
            if (json_array_append_new(shape, json_integer((json_int_t)t->shape[d])) != 0) ok = 0;
        if (entry) {
            SET(entry, "shape", shape ? shape : json_null());
            SET(entry, "dtype", json_string(rpx_dtype_name(t->dtype)));
            SET(entry, "nbytes", json_integer((json_int_t)t->nbytes));
            SET(o, t->name, entry);
        } else {
            json_decref(shape);
        }
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *rpx_latency_json(const rpx_latency *lat)
{
    rpx_latency_stats st;
    if (!lat || rpx_latency_stats_get(lat, &st) != 0) st.available = 0;
    return rpx_latency_stats_json(&st);
}

json_t *rpx_latency_stats_json(const rpx_latency_stats *stats)
{
    rpx_latency_stats st = *stats;
    json_t *o = json_object();
    int ok = 1;
    if (!o) return NULL;
    if (!st.available) {
        st.p50_ms = st.p95_ms = st.p99_ms = st.mean_ms = st.min_ms = st.max_ms = st.std_ms =
            (double)NAN;
    }
    SET(o, "p50_ms", rpx_json_real_or_null(st.p50_ms));
    SET(o, "p95_ms", rpx_json_real_or_null(st.p95_ms));
    SET(o, "p99_ms", rpx_json_real_or_null(st.p99_ms));
    SET(o, "mean_ms", rpx_json_real_or_null(st.mean_ms));
    SET(o, "min_ms", rpx_json_real_or_null(st.min_ms));
    SET(o, "max_ms", rpx_json_real_or_null(st.max_ms));
    SET(o, "std_ms", rpx_json_real_or_null(st.std_ms));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *sample_ms(const rpx_json_lazy_entry *e, size_t i)
{
    return rpx_json_real_or_null(((const double *)e->a)[e->k + i] / 1e6);
}

/* latency_samples_ms: made at once, or (lazy) written from the samples */
static json_t *samples_array(const rpx_latency *lat, void *lazy)
{
    size_t first;
    if (!lat) return json_array();
    first = rpx_latency_first_used(lat);
    return rpx_json_lazy_array(lazy, rpx_latency_count(lat) - first, sample_ms,
                               rpx_latency_samples_ns(lat), NULL, first, NULL);
}

static json_t *memory_object(const rpx_memory_peaks *m, json_t *cuda, json_t *cuda_method,
                             json_t *process, json_t *process_method)
{
    json_t *o = json_object(), *why = json_object();
    int ok = 1;
    if (!o || !why) {
        json_decref(o);
        json_decref(why);
        return NULL;
    }
    SET(o, "cpu_process_lifetime_peak_mb", rpx_json_mib_or_null(m ? m->lifetime_peak_bytes : -1));
    SET(o, "cpu_inference_peak_mb", rpx_json_mib_or_null(m ? m->inference_peak_bytes : -1));
    SET(o, "cuda_peak_allocated_mb_by_visible_device", borrowed(cuda, json_object));
    if (cuda_method) SET(o, "cuda_peak_method", json_incref(cuda_method));
    if (process) SET(o, "cuda_process_peak_mb_by_visible_device", json_incref(process));
    if (process_method) SET(o, "cuda_process_peak_method", json_incref(process_method));
    if (!m) {
        SET(why, "cpu_process_lifetime_peak_mb", json_string("not measured"));
        SET(why, "cpu_inference_peak_mb", json_string("not measured"));
    } else {
        if (m->lifetime_peak_bytes < 0)
            SET(why, "cpu_process_lifetime_peak_mb", json_string(m->lifetime_reason));
        if (m->inference_peak_bytes < 0)
            SET(why, "cpu_inference_peak_mb", json_string(m->inference_reason));
    }
    SET(o, "unavailable", why);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *timer_object(const rpx_timer_info *t, const int64_t *sync_ns)
{
    json_t *o = json_object();
    int ok = 1;
    if (!o) return NULL;
    SET(o, "clock", str_or_null(t ? t->clock : NULL));
    SET(o, "resolution_ns", t && t->resolution_ns >= 0 ? json_integer(t->resolution_ns) : json_null());
    SET(o, "overhead_ns", t ? json_integer(t->overhead_ns) : json_null());
    SET(o, "overhead_min_ns", t ? json_integer(t->overhead_min_ns) : json_null());
    SET(o, "overhead_method",
        json_string("median of t1 - t0 over back-to-back clock reads"));
    SET(o, "sync_overhead_ns", sync_ns ? json_integer(*sync_ns) : json_null());
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *utc_now(void)
{
    char buf[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm)) return json_null();
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(buf);
}

json_t *rpx_profile_report(const rpx_profile_desc *d)
{
    json_t *r = json_object(), *tool = json_object();
    size_t measured;
    int ok = 1;
    if (!r || !tool || !d) {
        json_decref(r);
        json_decref(tool);
        return NULL;
    }
    SET(tool, "name", json_string("rpxprof"));
    SET(tool, "version", json_string(RPX_VERSION));
    measured = d->latency ? rpx_latency_count(d->latency) - rpx_latency_first_used(d->latency) : 0;
    SET(r, "schema", json_string(RPX_PROFILE_SCHEMA));
    SET(r, "tool", tool);
    SET(r, "created_utc", utc_now());
    SET(r, "model_callable", str_or_null(d->model_callable));
    SET(r, "target_kind", str_or_null(d->target_kind));
    SET(r, "timing_scope", json_string(d->timing_scope ? d->timing_scope
                                                       : "synchronized_callable_wall_time; "
                                                         "preloaded_inputs"));
    SET(r, "device", str_or_null(d->device));
    SET(r, "precision", str_or_null(d->precision));
    SET(r, "unit", str_or_null(d->unit));
    SET(r, "warmup_calls", json_integer(d->warmup_calls));
    SET(r, "measured_calls", json_integer((json_int_t)measured));
    SET(r, "failed_calls", json_integer(d->failed_calls));
    SET(r, "failed_warmup_calls", json_integer(d->failed_warmup_calls));
    SET(r, "inputs", inputs_object(d->inputs));
    SET(r, "inputs_file", str_or_null(d->inputs_path));
    SET(r, "inputs_sha256", str_or_null(d->inputs_sha256));
    SET(r, "metadata", borrowed(d->metadata, json_object));
    SET(r, "latency", rpx_latency_json(d->latency));
    SET(r, "latency_samples_ms", samples_array(d->latency, d->lazy));
    SET(r, "gpu_time", borrowed(d->gpu_time, json_null));
    SET(r, "memory", memory_object(d->memory, d->cuda_peaks, d->cuda_memory_method,
                                   d->cuda_process_peaks, d->cuda_process_method));
    SET(r, "timer", timer_object(d->timer, d->sync_overhead_ns));
    SET(r, "cuda", borrowed(d->cuda, json_null));
    if (d->target_section && d->target_kind)
        SET(r, d->target_section_key ? d->target_section_key : d->target_kind,
            json_incref(d->target_section));
    SET(r, "wall_time_ms", d->wall_ns >= 0 ? json_real((double)d->wall_ns / 1e6) : json_null());
    SET(r, "efficiency", borrowed(d->efficiency, json_null));
    SET(r, "roofline", borrowed(d->roofline, json_null));
    SET(r, "realtime_budget", borrowed(d->realtime_budget, json_null));
    SET(r, "system_card", borrowed(d->system_card, json_null));
    SET(r, "status", json_string(d->status ? d->status : "complete"));
    SET(r, "error", str_or_null(d->error));
    SET(r, "failure", borrowed(d->failure, json_null));
    SET(r, "isolated", json_boolean(d->isolated));
    SET(r, "notes", borrowed(d->notes, json_array));
    if (!ok) {
        json_decref(r);
        return NULL;
    }
    return r;
}

json_t *rpx_profile_failed_report(const rpx_profile_failed *f)
{
    json_t *r = json_object();
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    int ok = 1;
    if (!r) return NULL;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    SET(r, "schema", json_string(RPX_PROFILE_SCHEMA));
    SET(r, "tool", json_pack("{s:s,s:s}", "name", "rpxprof", "version", RPX_VERSION));
    SET(r, "created_utc", json_string(ts));
    SET(r, "status", json_string("failed"));
    SET(r, "error", str_or_null(f->error));
    SET(r, "model_callable", json_string(f->model_callable ? f->model_callable : "?"));
    SET(r, "task", str_or_null(f->task));
    SET(r, "model_name", str_or_null(f->model_name));
    SET(r, "device", str_or_null(f->device));
    SET(r, "precision", str_or_null(f->precision));
    SET(r, "unit", str_or_null(f->unit));
    SET(r, "inputs_file", str_or_null(f->inputs_path));
    SET(r, "warmup_calls", json_integer(f->warmup_calls));
    SET(r, "metadata", f->metadata ? json_deep_copy(f->metadata) : json_object());
    if (!ok) {
        json_decref(r);
        return NULL;
    }
    return r;
}
