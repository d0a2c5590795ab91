/* rpxprof/cost.h — the model-cost layer: what a model does, whatever the
 * hardware. Filled from an ONNX graph (rpx_cost_analyze_onnx) or declared by a
 * runner for models that have no graph. Every field may be unknown: NaN for
 * counts kept as double, -1 for integers; never 0 for "unknown".
 *
 * Lifecycle: rpx_cost_options_init → rpx_cost_analyze_onnx → read the
 * rpx_efficiency and the per-node costs → rpx_cost_free.
 *
 * The ONNX file is analysed alone: weights are never read (neither the bytes
 * embedded in the file nor external data files, which need not exist), and
 * memory does not grow with the weight size. Formulas: docs/cost.md. */
#ifndef RPXPROF_COST_H
#define RPXPROF_COST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "rpxprof/model.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_COST_SCHEMA "rpxprof.cost/1"

/* The reference's EfficiencyMetadata, with honest unknowns. */
typedef struct rpx_efficiency {
    const char *model_type;         /* "local" or "api" */
    const char *source;             /* "onnx", "declared", or NULL when nothing is known */
    double params;                  /* parameter elements (floating-point), NaN if unknown */
    double param_bytes;             /* their storage bytes at the counted precision */
    double flops;                   /* all supported nodes, NaN if unknown */
    double flops_dense;             /* conv/gemm/matmul/attention only (what fvcore counts) */
    double macs;                    /* dense linear algebra multiply-adds */
    double activation_peak_bytes;   /* liveness-pass peak */
    double traffic_bytes_ideal;     /* weights once + graph inputs and outputs */
    double traffic_bytes_unfused;   /* every node reads its inputs, writes its outputs */
    double intensity_ideal;         /* flops / traffic_bytes_ideal */
    double intensity_unfused;
    int traffic_is_heuristic;       /* always 0 since issue 26 (the 3 × parameter-bytes
                                     * floor is no longer derived); kept for readers */
    int macs_derived;               /* macs = flops / 2 (only flops were known) */
    int partial;                    /* unsupported nodes: totals cover part of the graph */
    double coverage;                /* fraction of nodes costed, NaN if unknown */
    /* issue 18: with partial set, macs/flops are lower bounds (the costed nodes' sum);
     * a total to which no costed node contributed (macs: no dense node) is NaN */
    double dense_coverage;          /* fraction of the dense nodes costed, NaN without any */
    /* issue 26: which formula made traffic_bytes_ideal: RPX_TRAFFIC_GRAPH, or NULL
     * when it is unknown. rpxprof's reports use this one formula; the reference's
     * 3 × parameter bytes is rpxprof.reference's derive_tier1 only. */
    const char *traffic_formula;
} rpx_efficiency;

#define RPX_TRAFFIC_GRAPH "graph: weights once + the graph's inputs and outputs"

/* All unknown; model_type "local". */
RPX_API void rpx_efficiency_init(rpx_efficiency *e);
/* The derivations for declared values: macs = flops / 2 when only flops are
 * known (the reference's); intensities when both sides exist. Traffic is the
 * graph's or unknown: declared parameters alone give none (issue 26: one
 * formula in rpxprof's reports, not the reference's 3 × param_bytes). An
 * "api" model keeps every value unknown (what a remote endpoint runs is not
 * known here). */
RPX_API void rpx_efficiency_derive(rpx_efficiency *e);
/* The `efficiency` object of reports (null for unknowns). */
RPX_API json_t *rpx_efficiency_json(const rpx_efficiency *e);

/* One costed node, for per-op listings and the unfused roofline bound. The
 * numbers are NaN when supported == 0. */
typedef struct rpx_cost_node {
    const char *name;
    const char *op_type;
    int supported;                  /* 0: unknown cost (never counted as 0) */
    int dense;                      /* conv/gemm/matmul/attention product */
    double macs, flops;
    double bytes_read, bytes_written;
    /* added by issue 6 */
    const char *domain;             /* "" for the default ONNX domain */
    double params;                  /* parameters first used by this node */
    const char *reason;             /* why it is not costed; NULL when supported */
} rpx_cost_node;

typedef struct rpx_cost rpx_cost;

typedef struct rpx_cost_options {
    const char *precision;          /* NULL: tensors' own dtypes; "fp16" "bf16" "fp8" "int8" "fp32" */
    /* NAME=DIMS bindings of graph inputs and NAME=VALUE of symbolic dims */
    const char *const *input_shapes; size_t n_input_shapes;
    const char *const *dims;         size_t n_dims;
} rpx_cost_options;

RPX_API void rpx_cost_options_init(rpx_cost_options *o);
/* Analyse PATH. Errors (RPX_EIO, RPX_EFORMAT for a malformed file or graph,
 * RPX_EINVAL for options, e.g. an unbound dynamic dimension) name the file,
 * the node or tensor, and the fix. *out is NULL on error. */
RPX_API int rpx_cost_analyze_onnx(const char *path, const rpx_cost_options *opt, rpx_cost **out,
                          rpx_error *err);
/* The same on a serialized ModelProto in memory (`name` labels messages). */
RPX_API int rpx_cost_analyze_onnx_buffer(const void *data, size_t len, const char *name,
                                 const rpx_cost_options *opt, rpx_cost **out, rpx_error *err);
RPX_API void rpx_cost_free(rpx_cost *cost);
RPX_API const rpx_efficiency *rpx_cost_efficiency(const rpx_cost *cost);
RPX_API size_t rpx_cost_node_count(const rpx_cost *cost);
RPX_API const rpx_cost_node *rpx_cost_node_at(const rpx_cost *cost, size_t index);
/* Notes the analysis made (value_info disagreeing with inference, shapes
 * taken from value_info, opsets outside 7..21). */
RPX_API size_t rpx_cost_warning_count(const rpx_cost *cost);
RPX_API const char *rpx_cost_warning_at(const rpx_cost *cost, size_t index);
/* The object `rpxprof cost --json` prints and `run --cost` attaches: the
 * rpx_efficiency_json fields plus the model, the parameter breakdown, the
 * table by operator type, the unsupported operators and, with per_op, every
 * node (schemas/cost.json). */
RPX_API json_t *rpx_cost_json(const rpx_cost *cost, int per_op);

#ifdef __cplusplus
}
#endif
#endif
