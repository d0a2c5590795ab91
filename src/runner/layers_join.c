/* layers_join.c — owns the join of --layers' measured rows (section_layers.c)
 * with what the model costs and what the hardware allows: each row's FLOPs,
 * MACs and bytes from the model file's per-op cost (rpx_cost, at the run's
 * bound shapes) by node name (a fused row sums the nodes it covers; one node
 * not costed leaves the row's cost null, never a part of it), its intensity,
 * its roofline bound on the host CPU (and on each --gpu), the fraction of the
 * bound it achieved, the view by operator type (slowest first), and the share of the time
 * spent below 10 % of the bound. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "rpxprof/cost.h"
#include "rpxprof/roofline.h"
#include "runner/runner_internal.h"

/* A target's peaks as the run's ideal bound uses them (rpx_roofline_json). */
typedef struct roof {
    const rpx_gpu_spec *g;
    double tflops, gbps;
} roof;

static int roof_of(const rpx_gpu_spec *g, const rpx_runner_config *o, roof *r)
{
    rpx_precision p;
    rpx_peak dense;
    if (rpx_precision_parse(o->precision, &p, NULL) != 0) p = RPX_PREC_FP32;
    rpx_gpu_peak(g, p, 1, o->tf32 || p == RPX_PREC_TF32, &dense);
    r->g = g;
    r->tflops = dense.tflops;
    r->gbps = g->memory_bandwidth_gbps;
    return isnan(r->tflops) ? -1 : 0;
}

static double bound_on(const roof *r, double flops, double bytes)
{
    rpx_bound b;
    if (!r || isnan(flops) || rpx_roofline_bound(flops, bytes, r->tflops, r->gbps, &b, NULL) != 0)
        return (double)NAN;
    return b.latency_ms;
}

static const rpx_cost_node *node_named(const rpx_cost *cost, const char *name)
{
    size_t i, n = rpx_cost_node_count(cost);
    for (i = 0; name && i < n; i++) {
        const rpx_cost_node *c = rpx_cost_node_at(cost, i);
        if (c->name && strcmp(c->name, name) == 0) return c;
    }
    return NULL;
}

/* The sums over a row's nodes; *missing: the nodes the model file lacks. */
static void row_cost(const rpx_cost *cost, const json_t *nodes, double *flops, double *macs,
                     double *bytes, size_t *missing)
{
    const json_t *n;
    size_t i;
    *flops = *macs = *bytes = 0;
    if (!cost || !json_array_size(nodes)) {
        *flops = *macs = *bytes = (double)NAN;
        return;
    }
    json_array_foreach(nodes, i, n) {
        const rpx_cost_node *c = node_named(cost, json_string_value(n));
        if (!c) ++*missing;
        if (!c || !c->supported) {
            *flops = *macs = *bytes = (double)NAN;
            continue;
        }
        *flops += c->flops;
        *macs += c->macs;
        *bytes += c->bytes_read + c->bytes_written;
    }
}

static void set_real(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, rpx_json_real_or_null(v));
}

/* One row's cost, bounds and achieved fraction. */
static void join_row(json_t *r, const rpx_cost *cost, const roof *cpu, const roof *gpus, size_t ng,
                     size_t *missing)
{
    double flops, macs, bytes, t = json_number_value(json_object_get(r, "time_ms")), b;
    json_t *gb = ng ? json_object() : json_null();
    size_t i;
    int unattributed = json_is_null(json_object_get(r, "op_type"));
    if (unattributed) flops = macs = bytes = (double)NAN;
    else row_cost(cost, json_object_get(r, "nodes"), &flops, &macs, &bytes, missing);
    b = bound_on(cpu, flops, bytes);
    set_real(r, "flops", flops);
    set_real(r, "macs", macs);
    set_real(r, "bytes", bytes);
    set_real(r, "intensity", bytes > 0 ? flops / bytes : (double)NAN);
    set_real(r, "bound_ms", b);
    set_real(r, "achieved", t > 0 ? b / t : (double)NAN);
    for (i = 0; i < ng; i++)
        json_object_set_new(gb, gpus[i].g->key,
                            rpx_json_real_or_null(bound_on(&gpus[i], flops, bytes)));
    json_object_set_new(r, "gpu_bounds", unattributed ? (json_decref(gb), json_null()) : gb);
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : (double)NAN;
}

static int slower_first(const void *x, const void *y)
{
    double a = num(*(json_t *const *)x, "time_ms"), b = num(*(json_t *const *)y, "time_ms");
    return (a < b) - (a > b);
}

/* The array's entries, slowest first. */
static void sort_by_time(json_t *a)
{
    size_t n = json_array_size(a), i;
    json_t **v = n ? malloc(n * sizeof *v) : NULL;
    if (!v) return;
    for (i = 0; i < n; i++) v[i] = json_incref(json_array_get(a, i));
    qsort(v, n, sizeof *v, slower_first);
    json_array_clear(a);
    for (i = 0; i < n; i++) json_array_append_new(a, v[i]);
    free(v);
}

/* by_op_type: each operator type's rows, time, share, FLOPs, bound and achieved
 * fraction (sums; null where a row of the type has none). */
static json_t *by_op_type(const json_t *rows, double total)
{
    json_t *out = json_array(), *r, *g;
    size_t i, k;
    json_array_foreach(rows, i, r) {
        const char *op = json_string_value(json_object_get(r, "op_type"));
        json_t *hit = NULL;
        if (!op) continue;
        json_array_foreach(out, k, g)
            if (strcmp(json_string_value(json_object_get(g, "op_type")), op) == 0) hit = g;
        if (!hit) {
            hit = json_pack("{s:s,s:i,s:f,s:f,s:f}", "op_type", op, "rows", 0, "time_ms", 0.0,
                            "flops", 0.0, "bound_ms", 0.0);
            json_array_append_new(out, hit);
        }
        json_object_set_new(hit, "rows", json_integer(json_integer_value(json_object_get(hit, "rows")) + 1));
        set_real(hit, "time_ms", num(hit, "time_ms") + num(r, "time_ms"));
        set_real(hit, "flops", num(hit, "flops") + num(r, "flops"));
        set_real(hit, "bound_ms", num(hit, "bound_ms") + num(r, "bound_ms"));
    }
    sort_by_time(out);
    json_array_foreach(out, k, g) {
        set_real(g, "share", num(g, "time_ms") / total);
        set_real(g, "achieved", num(g, "time_ms") > 0 ? num(g, "bound_ms") / num(g, "time_ms")
                                                      : (double)NAN);
    }
    return out;
}

void rpx__layers_join(json_t *value, const rpx_runner_config *o, const layers *l,
                      const json_t *target_section, json_t *notes)
{
    rpx_cpu_peak cpu;
    rpx_cpu_target_storage storage;
    rpx_gpu_spec cpu_spec;
    roof host, gpus[32];
    rpx_error e = {0};
    size_t ng = 0, i, missing = 0;
    int have_cpu = 0;
    double total = num(value, "total_ms"), below = 0, judged = 0;
    const json_t *rt = json_object_get(target_section, "runtime");
    json_t *rows = json_object_get(value, "rows"), *r;
    char text[RPX_ERROR_MESSAGE_SIZE + 64];
    if (!json_is_object(value)) return;
    if (!json_is_object(rt)) rt = target_section;
    if (json_is_string(json_object_get(rt, "name")))
        json_object_set(value, "runtime", json_object_get(rt, "name"));
    if (rpx_cpu_peak_estimate(&cpu, &e) == 0) {
        rpx_cpu_target_spec(&cpu, NULL, &cpu_spec, &storage);
        have_cpu = roof_of(&cpu_spec, o, &host) == 0;
        const char *name = cpu_spec.name ? cpu_spec.name : "unknown";
        if (strncmp(name, "Host CPU: ", 10) == 0) name += 10;
        snprintf(text, sizeof text, "host CPU (%s)", name);
        json_object_set_new(value, "device", json_string(text));
    } else {
        snprintf(text, sizeof text, "--layers: no host-CPU bound for the rows: %s", e.message);
        json_array_append_new(notes, json_string(text));
    }
    for (i = 0; o->gpus && i < l->n_chosen && ng < sizeof gpus / sizeof gpus[0]; i++)
        if (roof_of(l->chosen[i], o, &gpus[ng]) == 0) ng++;
    json_array_foreach(rows, i, r) {
        join_row(r, l->cost, have_cpu ? &host : NULL, gpus, ng, &missing);
        if (json_is_number(json_object_get(r, "achieved"))) {
            judged += num(r, "time_ms");
            if (num(r, "achieved") < 0.1) below += num(r, "time_ms");
        }
    }
    set_real(value, "below_10pct_share", judged > 0 ? below / total : (double)NAN);
    json_object_set_new(value, "by_op_type", by_op_type(rows, total));
    if (!l->cost)
        json_array_append_new(notes, json_string(
            "--layers: the rows' FLOPs, bytes and bounds are null: no per-op cost (give --cost "
            "MODEL.onnx, or a model file, costed at its bound shapes)"));
    else if (missing) {
        snprintf(text, sizeof text, "--layers: %zu node name%s the runtime reported %s not in "
                 "the model file's graph; their rows' cost is null", missing,
                 missing == 1 ? "" : "s", missing == 1 ? "is" : "are");
        json_array_append_new(notes, json_string(text));
    }
}
