/* bound.c — owns the roofline arithmetic: which peak a node runs at, the
 * ideal and unfused bounds, their JSON form, reading FLOPs/bytes/nodes from a
 * cost object or a run report, and the real-time budget of a latency.
 *
 *   compute_ms = FLOPs / (peak TFLOP/s × 1e9)      (FLOPs, never MACs)
 *   memory_ms  = bytes / (bandwidth GB/s × 1e6)
 *   latency_ms = max(compute_ms, memory_ms); a tie is compute-bound
 *   arithmetic intensity = FLOPs / bytes; ridge point = peak / bandwidth
 *
 * Numbers are divided once, in double precision, and never rounded. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json_set.h"
#include "rpxprof/error.h"
#include "common/json.h"
#include "rpxprof/roofline.h"

/* ---- peak selection ---- */

static const char *unit_words(const rpx_gpu_spec *g, int unit)
{
    if (unit == RPX_UNIT_VECTOR) return "vector (non-tensor)";
    return g->vendor && strcasecmp(g->vendor, "AMD") == 0 ? "matrix core" : "tensor core";
}

static void set_peak(const rpx_gpu_spec *g, rpx_peak *out, rpx_precision p, int unit)
{
    out->tflops = g->peak_tflops[p][unit];
    out->precision = p;
    out->unit = unit;
    snprintf(out->label, sizeof out->label, "%s %s, dense", rpx_precision_name(p),
             unit_words(g, unit));
}

int rpx_gpu_peak(const rpx_gpu_spec *g, rpx_precision precision, int dense, int tf32,
                 rpx_peak *out)
{
    int order[2], i;
    memset(out, 0, sizeof *out);
    out->tflops = NAN;
    out->precision = precision;
    out->unit = dense ? RPX_UNIT_TENSOR : RPX_UNIT_VECTOR;
    if (!g || (unsigned)precision >= RPX_PREC_COUNT) {
        snprintf(out->reason, sizeof out->reason, "no GPU or no precision");
        return RPX_EINVAL;
    }
    if (precision == RPX_PREC_TF32) { /* fp32 data on TF32 tensor cores */
        precision = RPX_PREC_FP32;
        tf32 = 1;
    }
    if (precision == RPX_PREC_FP32 && dense && tf32) {
        if (!isnan(g->peak_tflops[RPX_PREC_TF32][RPX_UNIT_TENSOR])) {
            set_peak(g, out, RPX_PREC_TF32, RPX_UNIT_TENSOR);
            return 0;
        }
        snprintf(out->reason, sizeof out->reason,
                 "%s has no TF32 tensor peak; fp32 dense ops use the fp32 peak", g->key);
    }
    /* dense linear algebra: tensor first; the rest: vector first. fp32 has a
     * tensor (matrix) peak only where the hardware runs fp32 matrices natively */
    order[0] = dense ? RPX_UNIT_TENSOR : RPX_UNIT_VECTOR;
    order[1] = dense ? RPX_UNIT_VECTOR : RPX_UNIT_TENSOR;
    for (i = 0; i < 2; i++) {
        if (isnan(g->peak_tflops[precision][order[i]])) continue;
        set_peak(g, out, precision, order[i]);
        /* fp32 on the vector units is the rule, not a fallback */
        if (i == 1 && !out->reason[0] && !(precision == RPX_PREC_FP32 && dense))
            snprintf(out->reason, sizeof out->reason,
                     "%s lists no %s %s peak; the %s peak is used", g->key,
                     rpx_precision_name(precision), rpx_unit_name(order[0]),
                     rpx_unit_name(order[1]));
        return 0;
    }
    out->tflops = NAN;
    out->precision = precision;
    snprintf(out->reason, sizeof out->reason, "%s (%s) has no %s peak: %s", g->key,
             g->name ? g->name : "?", rpx_precision_name(precision),
             g->notes ? g->notes : "the cited source publishes none");
    return RPX_ENOTFOUND;
}

/* ---- bounds ---- */

int rpx_roofline_bound(double flops, double bytes, double peak_tflops, double bandwidth_gbps,
                       rpx_bound *out, rpx_error *err)
{
    memset(out, 0, sizeof *out);
    out->flops = flops;
    out->bytes = bytes;
    out->peak_tflops = peak_tflops;
    out->bandwidth_gbps = bandwidth_gbps;
    out->compute_ms = out->memory_ms = out->latency_ms = NAN;
    out->arithmetic_intensity = out->ridge_point = NAN;
    out->bottleneck = NULL;
    if (flops < 0 || bytes < 0 || isinf(flops) || isinf(bytes))
        return rpx_error_set(err, RPX_EINVAL,
                             "FLOPs and bytes must be finite and non-negative (got %g, %g)",
                             flops, bytes);
    if (peak_tflops <= 0 || isinf(peak_tflops))
        return rpx_error_set(err, RPX_EINVAL, "peak must be a positive TFLOP/s (got %g)",
                             peak_tflops);
    if (bandwidth_gbps <= 0 || isinf(bandwidth_gbps))
        return rpx_error_set(err, RPX_EINVAL, "bandwidth must be a positive GB/s (got %g)",
                             bandwidth_gbps);
    if (!isnan(flops) && !isnan(peak_tflops)) out->compute_ms = flops / (peak_tflops * 1e9);
    if (!isnan(bytes) && !isnan(bandwidth_gbps)) out->memory_ms = bytes / (bandwidth_gbps * 1e6);
    if (!isnan(out->compute_ms) && !isnan(out->memory_ms)) {
        out->latency_ms = out->compute_ms >= out->memory_ms ? out->compute_ms : out->memory_ms;
        out->bottleneck = out->compute_ms >= out->memory_ms ? "compute" : "memory";
    } else if (!isnan(out->compute_ms)) {
        out->latency_ms = out->compute_ms;
    } else if (!isnan(out->memory_ms)) {
        out->latency_ms = out->memory_ms;
    }
    if (!isnan(flops) && !isnan(bytes) && bytes > 0) out->arithmetic_intensity = flops / bytes;
    if (!isnan(peak_tflops) && !isnan(bandwidth_gbps))
        out->ridge_point = peak_tflops * 1e3 / bandwidth_gbps;
    return 0;
}

int rpx_roofline_unfused(const rpx_cost_node *nodes, size_t n, const rpx_peak *dense_peak,
                         const rpx_peak *other_peak, double bandwidth_gbps,
                         rpx_unfused_bound *out, rpx_error *err)
{
    size_t i;
    int mem_known = !isnan(bandwidth_gbps);
    memset(out, 0, sizeof *out);
    out->latency_ms = NAN;
    if (!nodes && n) return rpx_error_set(err, RPX_EINVAL, "no nodes");
    if (mem_known && bandwidth_gbps <= 0)
        return rpx_error_set(err, RPX_EINVAL, "bandwidth must be a positive GB/s");
    for (i = 0; i < n; i++) {
        const rpx_cost_node *nd = &nodes[i];
        const rpx_peak *pk = nd->dense ? dense_peak : other_peak;
        double bytes = nd->bytes_read + nd->bytes_written, c, m, l;
        if (!nd->supported || isnan(nd->flops) || isnan(bytes) || nd->flops < 0 || bytes < 0 ||
            !pk || isnan(pk->tflops) || pk->tflops <= 0) {
            out->nodes_unknown++;
            continue;
        }
        c = nd->flops / (pk->tflops * 1e9);
        m = mem_known ? bytes / (bandwidth_gbps * 1e6) : NAN;
        l = (!mem_known || c >= m) ? c : m;
        if (mem_known) {
            if (c >= m)
                out->nodes_compute_bound++;
            else
                out->nodes_memory_bound++;
        }
        out->latency_ms = isnan(out->latency_ms) ? l : out->latency_ms + l;
        out->compute_ms += c;
        out->memory_ms += m;
        out->flops += nd->flops;
        out->bytes += bytes;
        out->nodes++;
    }
    if (!out->nodes) {
        out->compute_ms = out->memory_ms = out->flops = out->bytes = NAN;
    } else if (!mem_known) {
        out->memory_ms = NAN;
    }
    return 0;
}

void rpx_roofline_input_init(rpx_roofline_input *in)
{
    memset(in, 0, sizeof *in);
    in->flops = NAN;
    in->bytes = NAN;
    in->precision = RPX_PREC_FP32;
    in->measured_p50_ms = NAN;
}

/* ---- JSON ---- */

#define SET(obj, k, v) RPX_JSON_SET(ok, obj, k, v)

static json_t *str_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static json_t *peak_json(const rpx_peak *p)
{
    json_t *o = json_object();
    int ok = 1;
    if (!o) return NULL;
    SET(o, "tflops", rpx_json_real_or_null(p->tflops));
    SET(o, "precision", json_string(rpx_precision_name(p->precision)));
    SET(o, "unit", isnan(p->tflops) ? json_null() : json_string(rpx_unit_name(p->unit)));
    SET(o, "label", isnan(p->tflops) ? json_null() : str_or_null(p->label));
    SET(o, "note", str_or_null(p->reason));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *bound_json(const rpx_bound *b)
{
    json_t *o = json_object();
    int ok = 1;
    if (!o) return NULL;
    SET(o, "flops", rpx_json_real_or_null(b->flops));
    SET(o, "bytes", rpx_json_real_or_null(b->bytes));
    SET(o, "compute_ms", rpx_json_real_or_null(b->compute_ms));
    SET(o, "memory_ms", rpx_json_real_or_null(b->memory_ms));
    SET(o, "latency_ms", rpx_json_real_or_null(b->latency_ms));
    SET(o, "bottleneck", str_or_null(b->bottleneck));
    SET(o, "arithmetic_intensity", rpx_json_real_or_null(b->arithmetic_intensity));
    SET(o, "ridge_point", rpx_json_real_or_null(b->ridge_point));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *unfused_json(const rpx_unfused_bound *u, double ridge)
{
    json_t *o = json_object();
    int ok = 1;
    if (!o) return NULL;
    SET(o, "flops", rpx_json_real_or_null(u->flops));
    SET(o, "bytes", rpx_json_real_or_null(u->bytes));
    SET(o, "compute_ms", rpx_json_real_or_null(u->compute_ms));
    SET(o, "memory_ms", rpx_json_real_or_null(u->memory_ms));
    SET(o, "latency_ms", rpx_json_real_or_null(u->latency_ms));
    SET(o, "arithmetic_intensity",
        rpx_json_real_or_null(u->bytes > 0 ? u->flops / u->bytes : NAN));
    SET(o, "ridge_point", rpx_json_real_or_null(ridge));
    SET(o, "nodes", json_integer((json_int_t)u->nodes));
    SET(o, "nodes_unknown", json_integer((json_int_t)u->nodes_unknown));
    SET(o, "nodes_compute_bound", json_integer((json_int_t)u->nodes_compute_bound));
    SET(o, "nodes_memory_bound", json_integer((json_int_t)u->nodes_memory_bound));
    SET(o, "partial", json_boolean(u->nodes_unknown > 0));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *rpx_roofline_json(const rpx_gpu_spec *gpu, const rpx_roofline_input *in)
{
    json_t *o = json_object(), *g = json_object(), *frac;
    rpx_peak dense, other;
    rpx_bound ideal;
    rpx_unfused_bound unf;
    int ok = 1, have_ideal = 0, have_unfused = 0;
    char reason[512] = "";
    int tf32 = in->tf32 || in->precision == RPX_PREC_TF32;
    if (!o || !g) {
        json_decref(o);
        json_decref(g);
        return NULL;
    }
    SET(g, "key", str_or_null(gpu->key));
    SET(g, "name", str_or_null(gpu->name));
    SET(g, "source", str_or_null(gpu->source));
    SET(o, "gpu", g);
    SET(o, "precision", json_string(rpx_precision_name(in->precision)));
    SET(o, "tf32", json_boolean(tf32));
    rpx_gpu_peak(gpu, in->precision, 1, tf32, &dense);
    rpx_gpu_peak(gpu, in->precision, 0, tf32, &other);
    SET(o, "peak_dense", peak_json(&dense));
    SET(o, "peak_other", peak_json(&other));
    SET(o, "memory_bandwidth_gbps", rpx_json_real_or_null(gpu->memory_bandwidth_gbps));
    if (isnan(dense.tflops)) {
        snprintf(reason, sizeof reason, "%s", dense.reason);
    } else if (isnan(in->flops) && isnan(in->bytes)) {
        snprintf(reason, sizeof reason, "no FLOPs or bytes were given");
    } else if (rpx_roofline_bound(in->flops, in->bytes, dense.tflops, gpu->memory_bandwidth_gbps,
                                  &ideal, NULL) == 0) {
        have_ideal = 1;
        if (isnan(gpu->memory_bandwidth_gbps))
            snprintf(reason, sizeof reason,
                     "%s has no memory bandwidth: the bound covers compute only", gpu->key);
    } else {
        snprintf(reason, sizeof reason, "invalid FLOPs or bytes");
    }
    SET(o, "ideal", have_ideal ? bound_json(&ideal) : json_null());
    if (in->nodes && in->n_nodes && !isnan(dense.tflops) &&
        rpx_roofline_unfused(in->nodes, in->n_nodes, &dense, &other,
                             gpu->memory_bandwidth_gbps, &unf, NULL) == 0 &&
        unf.nodes > 0)
        have_unfused = 1;
    SET(o, "unfused",
        have_unfused ? unfused_json(&unf, dense.tflops * 1e3 / gpu->memory_bandwidth_gbps)
                     : json_null());
    SET(o, "measured_p50_ms", rpx_json_real_or_null(in->measured_p50_ms));
    frac = json_null();
    if (!isnan(in->measured_p50_ms) && in->measured_p50_ms > 0 && (have_ideal || have_unfused)) {
        json_decref(frac);
        frac = json_object();
        if (frac) {
            SET(frac, "ideal", rpx_json_real_or_null(have_ideal ? ideal.latency_ms /
                                                                      in->measured_p50_ms
                                                                : NAN));
            SET(frac, "unfused", rpx_json_real_or_null(have_unfused ? unf.latency_ms /
                                                                          in->measured_p50_ms
                                                                    : NAN));
        }
    }
    SET(o, "achieved_fraction", frac);
    SET(o, "reason", str_or_null(reason));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *rpx_roofline_json_multi(const rpx_gpu_spec *const *gpus, size_t n,
                                const rpx_roofline_input *in)
{
    json_t *o;
    size_t i;
    int ok = 1;
    /* without FLOPs there is no bound on any target: one null, not n empty targets
     * (the caller states the one reason) */
    if (isnan(in->flops)) return json_null();
    o = json_object();
    if (!o) return NULL;
    for (i = 0; i < n; i++) SET(o, gpus[i]->key, rpx_roofline_json(gpus[i], in));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- reading a cost object or a run report ---- */

static double num_or_nan(const json_t *o, const char *k)
{
    const json_t *v = o ? json_object_get(o, k) : NULL;
    return v && json_is_number(v) ? json_number_value(v) : NAN;
}

static int is_dense_op(const char *op)
{
    static const char *const dense_ops[] = {"Conv",          "ConvTranspose",  "ConvInteger",
                                            "QLinearConv",   "Gemm",           "MatMul",
                                            "MatMulInteger", "QLinearMatMul",  "Attention",
                                            "MultiHeadAttention", "GroupQueryAttention"};
    size_t i;
    for (i = 0; op && i < sizeof dense_ops / sizeof dense_ops[0]; i++)
        if (strcmp(op, dense_ops[i]) == 0) return 1;
    return 0;
}

static const json_t *find_nodes(const json_t *root, const json_t *eff)
{
    static const char *const where[] = {"nodes", "per_op"};
    const json_t *cost = json_object_get(root, "cost");
    const json_t *holders[3];
    size_t h, i;
    holders[0] = root;
    holders[1] = json_is_object(cost) ? cost : NULL;
    holders[2] = eff;
    for (h = 0; h < 3; h++) {
        if (!holders[h]) continue;
        for (i = 0; i < 2; i++) {
            const json_t *a = json_object_get(holders[h], where[i]);
            if (json_is_array(a)) return a;
        }
    }
    return NULL;
}

void rpx_roofline_nodes_free(rpx_cost_node *nodes)
{
    free(nodes);
}

int rpx_roofline_input_from_json(const json_t *root, const char *origin,
                                 rpx_roofline_input *in, rpx_cost_node **nodes_out,
                                 rpx_error *err)
{
    const json_t *eff, *lat, *nodes, *prec, *cost;
    rpx_cost_node *nodes_arr = NULL;
    size_t i, n = 0;
    if (nodes_out) *nodes_out = NULL;
    if (!origin) origin = "(cost)";
    if (!json_is_object(root))
        return rpx_error_set(err, RPX_EFORMAT, "%s: expected a JSON object (a cost object or a "
                             "run report)", origin);
    eff = json_object_get(root, "efficiency");
    cost = json_object_get(root, "cost");
    if (!json_is_object(eff) && json_is_object(cost))
        eff = json_object_get(cost, "efficiency");
    if (!json_is_object(eff)) eff = json_is_object(cost) ? cost : root;
    in->flops = num_or_nan(eff, "flops");
    in->bytes = num_or_nan(eff, "traffic_bytes_ideal");
    lat = json_object_get(root, "latency");
    if (json_is_object(lat)) in->measured_p50_ms = num_or_nan(lat, "p50_ms");
    prec = json_object_get(root, "precision");
    if (json_is_string(prec)) {
        rpx_precision p;
        if (rpx_precision_parse(json_string_value(prec), &p, NULL) == 0) in->precision = p;
    }
    nodes = find_nodes(root, eff);
    if (nodes && nodes_out) {
        n = json_array_size(nodes);
        nodes_arr = calloc(n ? n : 1, sizeof *nodes_arr);
        if (!nodes_arr) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        for (i = 0; i < n; i++) {
            const json_t *nd = json_array_get(nodes, i), *v;
            rpx_cost_node *c = &nodes_arr[i];
            if (!json_is_object(nd)) {
                free(nodes_arr);
                return rpx_error_set(err, RPX_EFORMAT, "%s: nodes[%zu]: must be an object",
                                     origin, i);
            }
            v = json_object_get(nd, "name");
            c->name = json_is_string(v) ? json_string_value(v) : NULL;
            v = json_object_get(nd, "op_type");
            c->op_type = json_is_string(v) ? json_string_value(v) : NULL;
            c->flops = num_or_nan(nd, "flops");
            c->macs = num_or_nan(nd, "macs");
            c->bytes_read = num_or_nan(nd, "bytes_read");
            c->bytes_written = num_or_nan(nd, "bytes_written");
            v = json_object_get(nd, "dense");
            c->dense = v ? json_is_true(v) || (json_is_integer(v) && json_integer_value(v))
                         : is_dense_op(c->op_type);
            v = json_object_get(nd, "supported");
            c->supported = v ? json_is_true(v) || (json_is_integer(v) && json_integer_value(v))
                             : !isnan(c->flops);
        }
    }
    if (isnan(in->flops) && isnan(in->bytes) && !n) {
        free(nodes_arr);
        return rpx_error_set(err, RPX_EFORMAT,
                             "%s: no 'flops' or 'traffic_bytes_ideal' (top level, under "
                             "'efficiency' or under 'cost') and no 'nodes'; give a cost object "
                             "from 'rpxprof cost --json --per-op' or a run report made with a "
                             "cost", origin);
    }
    in->nodes = nodes_arr;
    in->n_nodes = n;
    if (nodes_out) *nodes_out = nodes_arr;
    return 0;
}

/* ---- real-time budget ---- */

json_t *rpx_realtime_budget_json(double p50_ms, const double *hz, size_t n_hz,
                                 long frames_per_unit)
{
    static const double default_hz[] = {5, 10, 30};
    json_t *o = json_object(), *rates = json_array();
    int ok = 1;
    size_t i;
    int known = !isnan(p50_ms) && p50_ms > 0;
    if (!o || !rates) {
        json_decref(o);
        json_decref(rates);
        return NULL;
    }
    if (!hz || !n_hz) {
        hz = default_hz;
        n_hz = sizeof default_hz / sizeof default_hz[0];
    }
    SET(o, "p50_ms", rpx_json_real_or_null(p50_ms));
    for (i = 0; i < n_hz; i++) {
        json_t *r = json_object();
        double budget = hz[i] > 0 ? 1000.0 / hz[i] : NAN;
        double beta = known && !isnan(budget) ? p50_ms / budget : NAN;
        if (!r) {
            ok = 0;
            break;
        }
        SET(r, "hz", rpx_json_real_or_null(hz[i]));
        SET(r, "budget_ms", rpx_json_real_or_null(budget));
        SET(r, "beta", rpx_json_real_or_null(beta));
        SET(r, "realtime", isnan(beta) ? json_null() : json_boolean(beta <= 1.0));
        if (json_array_append_new(rates, r) != 0) ok = 0;
    }
    SET(o, "rates", rates);
    SET(o, "throughput_per_s", rpx_json_real_or_null(known ? 1000.0 / p50_ms : NAN));
    SET(o, "frames_per_unit", frames_per_unit > 0 ? json_integer(frames_per_unit) : json_null());
    SET(o, "per_frame_ms", rpx_json_real_or_null(known && frames_per_unit > 0
                                                     ? p50_ms / (double)frames_per_unit
                                                     : NAN));
    SET(o, "frames_per_s", rpx_json_real_or_null(known && frames_per_unit > 0
                                                     ? 1000.0 * (double)frames_per_unit / p50_ms
                                                     : NAN));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}
