/* timeline.c — owns the report's `timeline` (--timeline, implied by --trace):
 * when each worker process loaded, set up and tore down the model, and when
 * each warmup call, timed call and input restore began, on the samples' clock
 * (CLOCK_MONOTONIC), in milliseconds from the run's origin (the first
 * process's load start). `rpxprof trace` draws the Chrome trace from it
 * (trace.c); the durations of the timed calls stay in latency_samples_ms. */
#include <math.h>
#include <stdint.h>

#include "report/run_report.h"

static json_t *ms_at(int64_t t, int64_t origin)
{
    return json_real((double)(t - origin) / 1e6);
}

/* [start, end] in ms from origin, or null when either was not reached. */
static json_t *span(int64_t a, int64_t b, int64_t origin)
{
    json_t *o;
    if (a <= 0 || b <= 0 || b < a) return json_null();
    o = json_array();
    json_array_append_new(o, ms_at(a, origin));
    json_array_append_new(o, ms_at(b, origin));
    return o;
}

static json_t *process_json(const rpx_run_process *p, int index, int64_t origin)
{
    const rpx_run_timeline *t = p->timeline;
    json_t *o = json_object(), *a;
    size_t j;
    long w;
    int k;
    json_object_set_new(o, "process", json_integer(index));
    json_object_set_new(o, "pid", t->pid > 0 ? json_integer(t->pid) : json_null());
    json_object_set_new(o, "load_ms", span(t->load_start_ns, t->setup_start_ns, origin));
    json_object_set_new(o, "setup_ms", span(t->setup_start_ns, t->setup_end_ns, origin));
    json_object_set_new(o, "teardown_ms", span(t->teardown_start_ns, t->teardown_end_ns, origin));
    if (!t->call_start_ns || !t->warmup_start_ns) { /* an open-loop load: no calls of its own */
        json_object_set_new(o, "warmup_start_ms", json_null());
        json_object_set_new(o, "warmup_ms", json_null());
        json_object_set_new(o, "call_start_ms", json_null());
        if (t->request_intended_ns) {
            a = json_array();
            for (j = 0; j < p->measured; j++)
                json_array_append_new(a, ms_at(t->request_intended_ns[j], origin));
            json_object_set_new(o, "request_intended_ms", a);
        } else {
            json_object_set_new(o, "request_intended_ms", json_null());
        }
    } else {
        json_object_set_new(o, "request_intended_ms", json_null());
        a = json_array();
        for (w = 0; w < p->warmup_kept; w++)
            json_array_append_new(a, ms_at(t->warmup_start_ns[w], origin));
        json_object_set_new(o, "warmup_start_ms", a);
        a = json_array();
        for (w = 0; w < p->warmup_kept; w++)
            json_array_append_new(a, json_real((double)p->warmup_samples[w] / 1e6));
        json_object_set_new(o, "warmup_ms", a);
        a = json_array();
        for (j = 0; j < p->measured; j++)
            json_array_append_new(a, ms_at(t->call_start_ns[j], origin));
        json_object_set_new(o, "call_start_ms", a);
    }
    if (t->restore_start_ns && p->restore_samples) {
        json_t *d = json_array();
        a = json_array();
        for (j = 0; j < p->measured; j++) {
            json_array_append_new(a, ms_at(t->restore_start_ns[j], origin));
            json_array_append_new(d, json_real((double)p->restore_samples[j] / 1e6));
        }
        json_object_set_new(o, "restore_start_ms", a);
        json_object_set_new(o, "restore_ms", d);
    } else {
        json_object_set_new(o, "restore_start_ms", json_null());
        json_object_set_new(o, "restore_ms", json_null());
    }
    if (t->warmup_restore_ns) {
        json_t *d = json_array();
        a = json_array();
        for (w = 0; w < p->warmup_kept; w++) {
            json_array_append_new(a, ms_at(t->warmup_restore_ns[2 * w], origin));
            json_array_append_new(d, json_real((double)t->warmup_restore_ns[2 * w + 1] / 1e6));
        }
        json_object_set_new(o, "warmup_restore_start_ms", a);
        json_object_set_new(o, "warmup_restore_ms", d);
    } else {
        json_object_set_new(o, "warmup_restore_start_ms", json_null());
        json_object_set_new(o, "warmup_restore_ms", json_null());
    }
    if (t->trend && t->trend->n > 0 && t->call_start_ns) {
        json_t *c = json_array();
        a = json_array();
        for (k = 0; k < t->trend->n; k++) {
            json_array_append_new(c, json_integer(t->trend->call[k]));
            json_array_append_new(a, json_real((double)t->trend->rss[k] / 1048576.0));
        }
        json_object_set_new(o, "rss_after_call", c);
        json_object_set_new(o, "rss_mb", a);
    } else {
        json_object_set_new(o, "rss_after_call", json_null());
        json_object_set_new(o, "rss_mb", json_null());
    }
    return o;
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The GPU watch's readings, one entry per GPU in NVML's order. */
static json_t *gpu_json(const rpx_run_gpu_readings *gpu, int64_t origin)
{
    json_t *a = json_array();
    size_t i, k;
    for (i = 0; i < gpu->n; i++) {
        const rpx_nvml_reading *r = &gpu->readings[i];
        json_t *g = NULL, *e;
        json_array_foreach(a, k, e)
            if (json_integer_value(json_object_get(e, "index")) == (json_int_t)r->index) g = e;
        if (!g) {
            g = json_pack("{s:I, s:i, s:[], s:[], s:[], s:[]}", "index", (json_int_t)r->index,
                          "visible_ordinal", r->visible_ordinal, "t_ms", "sm_clock_mhz",
                          "power_w", "temperature_c");
            json_array_append_new(a, g);
        }
        json_array_append_new(json_object_get(g, "t_ms"), ms_at(r->t_ns, origin));
        json_array_append_new(json_object_get(g, "sm_clock_mhz"), num_or_null(r->sm_clock_mhz));
        json_array_append_new(json_object_get(g, "power_w"), num_or_null(r->power_w));
        json_array_append_new(json_object_get(g, "temperature_c"), num_or_null(r->temperature_c));
    }
    return a;
}

json_t *rpx__timeline_json(const rpx_run_data *d, const rpx_run_gpu_readings *gpu)
{
    int64_t origin = 0;
    json_t *o, *procs;
    int i, any = 0;
    for (i = 0; i < d->n_procs; i++) {
        const rpx_run_timeline *t = d->procs[i].timeline;
        if (!t) continue;
        any = 1;
        if (t->load_start_ns > 0 && (origin == 0 || t->load_start_ns < origin))
            origin = t->load_start_ns;
    }
    if (!any) return json_null();
    o = json_object();
    procs = json_array();
    json_object_set_new(o, "clock", json_string("CLOCK_MONOTONIC, the clock of the samples"));
    json_object_set_new(o, "origin", json_string("the first process's load start"));
    for (i = 0; i < d->n_procs; i++)
        if (d->procs[i].timeline)
            json_array_append_new(procs, process_json(&d->procs[i], i, origin));
    json_object_set_new(o, "processes", procs);
    json_object_set_new(o, "gpu", gpu->watched ? gpu_json(gpu, origin) : json_null());
    json_object_set_new(o, "gpu_readings_left_out",
                        gpu->watched ? json_integer(gpu->dropped) : json_null());
    return o;
}
