/* efficiency.c — rpx_efficiency: the reference's EfficiencyMetadata with
 * honest unknowns, its derivations for declared values, and its JSON. */
#include <math.h>
#include <string.h>

#include "rpxprof/cost.h"
#include "common/json.h"

void rpx_efficiency_init(rpx_efficiency *e)
{
    memset(e, 0, sizeof *e);
    e->model_type = "local";
    e->source = NULL;
    e->params = e->param_bytes = e->flops = e->flops_dense = e->macs = NAN;
    e->activation_peak_bytes = e->traffic_bytes_ideal = e->traffic_bytes_unfused = NAN;
    e->intensity_ideal = e->intensity_unfused = NAN;
    e->coverage = NAN;
    e->dense_coverage = NAN;
}

static double ratio(double num, double den)
{
    return isfinite(num) && isfinite(den) && den > 0 ? num / den : NAN;
}

void rpx_efficiency_derive(rpx_efficiency *e)
{
    if (e->model_type && strcmp(e->model_type, "api") == 0) {
        /* an endpoint: what runs behind it is not known here */
        const char *type = e->model_type;
        rpx_efficiency_init(e);
        e->model_type = type;
        return;
    }
    /* declared values only: a graph's unknown MACs (no dense node costed) stay unknown */
    if (isnan(e->macs) && isfinite(e->flops) && !(e->source && !strcmp(e->source, "onnx"))) {
        e->macs = e->flops / 2;
        e->macs_derived = 1;
    }
    /* traffic: the graph's, or unknown. Declared parameters alone give none: the
     * reference's 3 x param_bytes would be a second formula for the same model
     * (issue 26); rpxprof.reference's derive_tier1 keeps it, labelled */
    e->traffic_is_heuristic = 0;
    e->traffic_formula = !isfinite(e->traffic_bytes_ideal)               ? NULL
                         : e->source && strcmp(e->source, "onnx") == 0 ? RPX_TRAFFIC_GRAPH
                                                                       : "declared";
    e->intensity_ideal = ratio(e->flops, e->traffic_bytes_ideal);
    e->intensity_unfused = ratio(e->flops, e->traffic_bytes_unfused);
}

/* a count: an exact integer where it is one, null when unknown */
static json_t *count(double v)
{
    if (!isfinite(v)) return json_null();
    if (v == floor(v) && fabs(v) < 9007199254740992.0) return json_integer((json_int_t)v);
    return json_real(v);
}

json_t *rpx_efficiency_json(const rpx_efficiency *e)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "model_type", e->model_type ? json_string(e->model_type) : json_null());
    json_object_set_new(o, "source", e->source ? json_string(e->source) : json_null());
    json_object_set_new(o, "params", count(e->params));
    json_object_set_new(o, "param_bytes", count(e->param_bytes));
    json_object_set_new(o, "flops", count(e->flops));
    json_object_set_new(o, "flops_dense", count(e->flops_dense));
    json_object_set_new(o, "macs", count(e->macs));
    json_object_set_new(o, "activation_peak_bytes", count(e->activation_peak_bytes));
    json_object_set_new(o, "traffic_bytes_ideal", count(e->traffic_bytes_ideal));
    json_object_set_new(o, "traffic_bytes_unfused", count(e->traffic_bytes_unfused));
    json_object_set_new(o, "intensity_ideal", rpx_json_real_or_null(e->intensity_ideal));
    json_object_set_new(o, "intensity_unfused", rpx_json_real_or_null(e->intensity_unfused));
    json_object_set_new(o, "traffic_formula",
                        e->traffic_formula ? json_string(e->traffic_formula) : json_null());
    json_object_set_new(o, "traffic_is_heuristic", json_boolean(e->traffic_is_heuristic));
    json_object_set_new(o, "macs_derived", json_boolean(e->macs_derived));
    json_object_set_new(o, "partial", json_boolean(e->partial));
    json_object_set_new(o, "coverage", rpx_json_real_or_null(e->coverage));
    json_object_set_new(o, "dense_coverage", rpx_json_real_or_null(e->dense_coverage));
    return o;
}
