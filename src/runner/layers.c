/* layers.c — owns the run's model-cost and roofline layers: the cost
 * analysed (or declared) before anything is measured, the GPU table, and after
 * the run the bounds on the chosen targets and the real-time budget. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/cost.h"
#include "rpxprof/error.h"
#include "rpxprof/roofline.h"
#include "runner/runner_internal.h"


static double precision_bytes(const char *p)
{
    if (!strcmp(p, "fp32") || !strcmp(p, "tf32")) return 4;
    if (!strcmp(p, "fp16") || !strcmp(p, "bf16")) return 2;
    if (!strcmp(p, "fp8") || !strcmp(p, "int8")) return 1;
    if (!strcmp(p, "fp64")) return 8;
    return (double)NAN;
}

/* Before the run: cost the model (or take what was declared) and load the GPU
 * table, so that a bad graph or spec file fails before hours of measuring. */
int rpx__layers_prepare(const rpx_runner_config *o, layers *l, rpx_error *err)
{
    int rc;
    rpx_efficiency_init(&l->eff);
    if (o->cost) {
        rpx_cost_options co;
        rpx_cost_options_init(&co);
        if (strcmp(o->precision, "unspecified") != 0 && precision_bytes(o->precision) == precision_bytes(o->precision))
            co.precision = o->precision;
        co.input_shapes = o->bind_inputs;
        co.n_input_shapes = o->n_bind_inputs;
        co.dims = o->bind_dims;
        co.n_dims = o->n_bind_dims;
        if ((rc = rpx_cost_analyze_onnx(o->cost, &co, &l->cost, err)) != 0) return rc;
        l->eff = *rpx_cost_efficiency(l->cost);
        l->efficiency = rpx_cost_json(l->cost, 0);
    } else {
        if (o->flops == o->flops || o->params == o->params) {
            l->eff.source = "declared";
            l->eff.flops = o->flops;
            l->eff.params = o->params;
            l->eff.param_bytes = o->params * precision_bytes(o->precision);
            rpx_efficiency_derive(&l->eff);
        }
        l->efficiency = rpx_efficiency_json(&l->eff);
    }
    if (!l->efficiency) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if ((rc = rpx_gpu_table_create(&l->table)) != 0 ||
        (rc = rpx_gpu_table_load_env(l->table, err)) != 0)
        return rc ? rc : RPX_ENOMEM;
    if (o->gpu_spec && (rc = rpx_gpu_table_load_file(l->table, o->gpu_spec, err)) != 0) return rc;
    if (o->gpus) {
        char buf[1024], *tok, *save = NULL;
        snprintf(buf, sizeof buf, "%s", o->gpus);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            const rpx_gpu_spec *g = rpx_gpu_table_find(l->table, tok);
            char cand[512];
            if (!g && rpx_gpu_table_candidates(l->table, tok, cand, sizeof cand) > 1)
                return rpx_error_set(err, RPX_EUSAGE, "--gpu %s: '%s' is ambiguous: it could be %s; "
                                     "give one of these keys", o->gpus, tok, cand);
            if (!g)
                return rpx_error_set(err, RPX_EUSAGE,
                                     "--gpu %s: no GPU with key '%s'; 'rpxprof gpus' lists the "
                                     "keys, --gpu-spec FILE adds your own",
                                     o->gpus, tok);
            if (l->n_chosen < sizeof l->chosen / sizeof l->chosen[0]) l->chosen[l->n_chosen++] = g;
        }
    }
    return 0;
}

static void add_unique(layers *l, const rpx_gpu_spec *g)
{
    size_t i;
    if (!g) return;
    for (i = 0; i < l->n_chosen; i++)
        if (l->chosen[i] == g) return;
    if (l->n_chosen < sizeof l->chosen / sizeof l->chosen[0]) l->chosen[l->n_chosen++] = g;
}

/* --budget-hz: the rates, at most 16 (0 when not given: the defaults). */
size_t rpx__budget_rates(const rpx_runner_config *o, double hz[16])
{
    size_t n = o->budget_hz ? o->n_budget_hz : 0;
    if (n > 16) n = 16;
    if (n) memcpy(hz, o->budget_hz, n * sizeof *hz);
    return n;
}

/* After the run: the bounds on the chosen targets and the real-time budget. */
void rpx__layers_finish(const rpx_runner_config *o, layers *l, const rpx_inputs *in, double p50_ms,
                          json_t *cuda_section, json_t *notes, json_t **roofline,
                          json_t **budget)
{
    static const char *reference[] = {"ref-a100-80gb", "ref-rtx4090", "ref-jetson-orin-64gb"};
    rpx_roofline_input ri;
    rpx_cost_node *nodes = NULL;
    rpx_cpu_peak cpu;
    rpx_cpu_target_storage cpu_storage;
    rpx_gpu_spec cpu_spec;
    rpx_error perr = {0};
    const rpx_gpu_spec *targets[40];
    size_t nt = 0, i;
    double hz[16];
    size_t n_hz = 0;
    long frames = 0;
    char note[RPX_ERROR_MESSAGE_SIZE + 64], a[64], b[64];
    rpx_option_spelling sp = (rpx_option_spelling)o->spelling;

    if (!o->gpus) {
        json_t *dev;
        size_t di;
        json_array_foreach(json_object_get(cuda_section, "visible_devices"), di, dev)
            add_unique(l, rpx_gpu_table_match_name(l->table,
                                                   json_string_value(json_object_get(dev, "name"))));
        if (l->n_chosen == 0)
            for (i = 0; i < 3; i++) add_unique(l, rpx_gpu_table_find(l->table, reference[i]));
    }
    if (!cuda_section && !o->gpus) {
        rpx_error cerr = {0};
        if (rpx_cpu_peak_estimate(&cpu, &cerr) == 0) {
            rpx_cpu_target_spec(&cpu, NULL, &cpu_spec, &cpu_storage);
            targets[nt++] = &cpu_spec;
            if (!cpu.is_bound) { /* issue 18: said in the report, not only in the name */
                snprintf(note, sizeof note, "host-cpu: the peak is %.250s", cpu.bound_note);
                json_array_append_new(notes, json_string(note));
            }
        } else {
            snprintf(note, sizeof note, "no host-CPU roofline: %s", cerr.message);
            json_array_append_new(notes, json_string(note));
        }
    }
    for (i = 0; i < l->n_chosen && nt < sizeof targets / sizeof targets[0]; i++)
        targets[nt++] = l->chosen[i];

    rpx_roofline_input_init(&ri);
    ri.flops = l->eff.flops;
    ri.bytes = l->eff.traffic_bytes_ideal;
    ri.tf32 = o->tf32;
    ri.measured_p50_ms = p50_ms;
    if (rpx_precision_parse(o->precision, &ri.precision, &perr) != 0) {
        ri.precision = RPX_PREC_FP32;
        snprintf(note, sizeof note,
                 "roofline: precision '%s' names no peak column; bounds use fp32 (give "
                 "%s, tf32, fp16, bf16, fp8 or int8)",
                 o->precision, rpx__option_say("precision", "fp32", sp, a, sizeof a));
        json_array_append_new(notes, json_string(note));
    }
    if (l->cost) {
        size_t n = rpx_cost_node_count(l->cost);
        nodes = n ? malloc(n * sizeof *nodes) : NULL;
        for (i = 0; nodes && i < n; i++) nodes[i] = *rpx_cost_node_at(l->cost, i);
        ri.nodes = nodes;
        ri.n_nodes = nodes ? n : 0;
    }
    if (!(ri.flops == ri.flops)) {
        snprintf(note, sizeof note, "roofline bounds are null: the model's FLOPs are unknown; give "
                 "%s or %s", rpx__option_say("cost", "MODEL.onnx", sp, a, sizeof a),
                 rpx__option_say("flops", "N", sp, b, sizeof b));
        json_array_append_new(notes, json_string(note));
    } else if (!(ri.bytes == ri.bytes) && l->eff.source && strcmp(l->eff.source, "declared") == 0 &&
             l->eff.params == l->eff.params) {
        snprintf(note, sizeof note, "the model's memory traffic is unknown (declared %s give "
                 "no graph), so the roofline bounds cover compute only; give %s for the graph's "
                 "traffic (it is not guessed from the parameter count, e.g. as 3 x parameter bytes)",
                 rpx__option_value_label("params", sp, b, sizeof b),
                 rpx__option_say("cost", "MODEL.onnx", sp, a, sizeof a));
        json_array_append_new(notes, json_string(note));
    }
    *roofline = rpx_roofline_json_multi(targets, nt, &ri);
    free(nodes);

    n_hz = rpx__budget_rates(o, hz);
    if (strcmp(o->unit, "clip") == 0) {
        json_t *cl = json_object_get(o->meta, "clip_length");
        if (json_is_integer(cl) && json_integer_value(cl) > 0) {
            frames = (long)json_integer_value(cl);
        } else {
            for (i = 0; i < in->count; i++)
                if (in->tensors[i].ndim >= 4) {
                    frames = (long)in->tensors[i].shape[0];
                    break;
                }
        }
    }
    *budget = rpx_realtime_budget_json(p50_ms, n_hz ? hz : NULL, n_hz, frames);
}

void rpx__layers_free(layers *l)
{
    rpx_cost_free(l->cost);
    json_decref(l->efficiency);
    rpx_gpu_table_free(l->table);
}

