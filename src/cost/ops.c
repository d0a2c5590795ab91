/* ops.c — the operator table and the per-node cost formulas (docs/cost.md
 * states each one). A node is costed only when its operator is in the table
 * with a cost class and every size it needs is known; anything else stays
 * unknown, never 0.
 *
 * Counting convention: every arithmetic operation, comparison and elementary
 * function (exp, log, sqrt, tanh, erf, ...) is one FLOP; a multiply-add is one
 * MAC and two FLOPs. */
#include <math.h>
#include <string.h>

#include "cost/shapes_internal.h"

#define E RPX__C_ELEMENTWISE
static const rpx__opdef table[] = {
    /* dense linear algebra: MACs */
    {"Conv", rpx__infer_conv, RPX__C_DENSE, 0},
    {"ConvTranspose", rpx__infer_conv_transpose, RPX__C_DENSE, 0},
    {"Gemm", rpx__infer_gemm, RPX__C_DENSE, 0},
    {"MatMul", rpx__infer_matmul, RPX__C_DENSE, 0},
    {"Einsum", rpx__infer_einsum, RPX__C_DENSE, 0},
    /* normalisation: FLOPs per element */
    {"BatchNormalization", rpx__infer_batchnorm, RPX__C_NORM, 2},
    {"InstanceNormalization", rpx__infer_same, RPX__C_NORM, 8},
    {"LayerNormalization", rpx__infer_layernorm, RPX__C_NORM, 8},
    {"GroupNormalization", rpx__infer_same, RPX__C_NORM, 8},
    {"LpNormalization", rpx__infer_same, RPX__C_NORM, 3},
    {"MeanVarianceNormalization", rpx__infer_same, RPX__C_NORM, 6},
    /* activations */
    {"Relu", rpx__infer_same, E, 1},
    {"LeakyRelu", rpx__infer_same, E, 2},
    {"PRelu", rpx__infer_elementwise, E, 2},
    {"Clip", rpx__infer_same, E, 2},
    {"Sigmoid", rpx__infer_same, E, 4},
    {"HardSigmoid", rpx__infer_same, E, 4},
    {"HardSwish", rpx__infer_same, E, 5},
    {"Tanh", rpx__infer_same, E, 1},
    {"Erf", rpx__infer_same, E, 1},
    {"Gelu", rpx__infer_same, E, 5}, /* 9 with approximate="tanh" */
    {"Softplus", rpx__infer_same, E, 3},
    {"Elu", rpx__infer_same, E, 4},
    {"Selu", rpx__infer_same, E, 5},
    {"Celu", rpx__infer_same, E, 7},
    {"Mish", rpx__infer_same, E, 5},
    {"Softsign", rpx__infer_same, E, 3},
    {"ThresholdedRelu", rpx__infer_same, E, 2},
    {"Softmax", rpx__infer_same, E, 5},
    {"LogSoftmax", rpx__infer_same, E, 5},
    /* elementwise arithmetic, with broadcasting: one FLOP per output element */
    {"Add", rpx__infer_elementwise, E, 1},
    {"Sub", rpx__infer_elementwise, E, 1},
    {"Mul", rpx__infer_elementwise, E, 1},
    {"Div", rpx__infer_elementwise, E, 1},
    {"Pow", rpx__infer_elementwise, E, 1},
    {"Mod", rpx__infer_elementwise, E, 1},
    {"BitShift", rpx__infer_elementwise, E, 1},
    {"Sum", rpx__infer_elementwise, E, -1},  /* n-1 per element */
    {"Max", rpx__infer_elementwise, E, -1},
    {"Min", rpx__infer_elementwise, E, -1},
    {"Mean", rpx__infer_elementwise, E, -2}, /* n per element */
    {"Equal", rpx__infer_compare, E, 1},
    {"Less", rpx__infer_compare, E, 1},
    {"Greater", rpx__infer_compare, E, 1},
    {"LessOrEqual", rpx__infer_compare, E, 1},
    {"GreaterOrEqual", rpx__infer_compare, E, 1},
    {"And", rpx__infer_compare, E, 1},
    {"Or", rpx__infer_compare, E, 1},
    {"Xor", rpx__infer_compare, E, 1},
    {"Where", rpx__infer_where, E, 1},
    {"Not", rpx__infer_unary, E, 1},
    {"Neg", rpx__infer_unary, E, 1},
    {"Abs", rpx__infer_unary, E, 1},
    {"Floor", rpx__infer_unary, E, 1},
    {"Ceil", rpx__infer_unary, E, 1},
    {"Round", rpx__infer_unary, E, 1},
    {"Sign", rpx__infer_unary, E, 1},
    {"Sqrt", rpx__infer_unary, E, 1},
    {"Reciprocal", rpx__infer_unary, E, 1},
    {"Exp", rpx__infer_same, E, 1},
    {"Log", rpx__infer_same, E, 1},
    {"Sin", rpx__infer_same, E, 1},
    {"Cos", rpx__infer_same, E, 1},
    {"Tan", rpx__infer_same, E, 1},
    {"Atan", rpx__infer_same, E, 1},
    {"IsNaN", rpx__infer_compare, E, 1},
    {"IsInf", rpx__infer_compare, E, 1},
    {"QuantizeLinear", rpx__infer_quantize, E, 4},
    {"DequantizeLinear", rpx__infer_dequantize, E, 2},
    /* reductions: per input element (+ per output element in the table below) */
    {"ReduceSum", rpx__infer_reduce, RPX__C_REDUCE, 1},
    {"ReduceMean", rpx__infer_reduce, RPX__C_REDUCE, 1},
    {"ReduceMax", rpx__infer_reduce, RPX__C_REDUCE, 1},
    {"ReduceMin", rpx__infer_reduce, RPX__C_REDUCE, 1},
    {"ReduceProd", rpx__infer_reduce, RPX__C_REDUCE, 1},
    {"ReduceSumSquare", rpx__infer_reduce, RPX__C_REDUCE, 2},
    {"ReduceL1", rpx__infer_reduce, RPX__C_REDUCE, 2},
    {"ReduceL2", rpx__infer_reduce, RPX__C_REDUCE, 2},
    {"ReduceLogSum", rpx__infer_reduce, RPX__C_REDUCE, 1},
    {"ReduceLogSumExp", rpx__infer_reduce, RPX__C_REDUCE, 2},
    {"ArgMax", rpx__infer_argreduce, RPX__C_REDUCE, 1},
    {"ArgMin", rpx__infer_argreduce, RPX__C_REDUCE, 1},
    /* pooling */
    {"MaxPool", rpx__infer_pool, RPX__C_POOL, 0},
    {"AveragePool", rpx__infer_pool, RPX__C_POOL, 0},
    {"LpPool", rpx__infer_pool, RPX__C_POOL, 0},
    {"GlobalMaxPool", rpx__infer_global_pool, RPX__C_POOL, 0},
    {"GlobalAveragePool", rpx__infer_global_pool, RPX__C_POOL, 0},
    {"GlobalLpPool", rpx__infer_global_pool, RPX__C_POOL, 0},
    /* resampling */
    {"Resize", rpx__infer_resize, RPX__C_RESIZE, 0},
    {"Upsample", rpx__infer_upsample, RPX__C_RESIZE, 0},
    /* data movement: no FLOPs, real bytes */
    {"Transpose", rpx__infer_transpose, RPX__C_MOVE, 0},
    {"Concat", rpx__infer_concat, RPX__C_MOVE, 0},
    {"Split", rpx__infer_split, RPX__C_MOVE, 0},
    {"Slice", rpx__infer_slice, RPX__C_MOVE, 0},
    {"Gather", rpx__infer_gather, RPX__C_MOVE, 0},
    {"GatherElements", rpx__infer_gather_elements, RPX__C_MOVE, 0},
    {"GatherND", rpx__infer_gather_nd, RPX__C_MOVE, 0},
    {"Pad", rpx__infer_pad, RPX__C_MOVE, 0},
    {"Expand", rpx__infer_expand, RPX__C_MOVE, 0},
    {"Cast", rpx__infer_cast, RPX__C_MOVE, 0},
    {"CastLike", rpx__infer_cast, RPX__C_MOVE, 0},
    {"Tile", rpx__infer_tile, RPX__C_MOVE, 0},
    {"DepthToSpace", rpx__infer_depth_to_space, RPX__C_MOVE, 0},
    {"SpaceToDepth", rpx__infer_space_to_depth, RPX__C_MOVE, 0},
    {"Range", rpx__infer_range, RPX__C_MOVE, 0},
    {"ConstantOfShape", rpx__infer_constant_of_shape, RPX__C_MOVE, 0},
    /* views: neither FLOPs nor bytes */
    {"Reshape", rpx__infer_reshape, RPX__C_VIEW, 0},
    {"Flatten", rpx__infer_flatten, RPX__C_VIEW, 0},
    {"Squeeze", rpx__infer_squeeze, RPX__C_VIEW, 0},
    {"Unsqueeze", rpx__infer_unsqueeze, RPX__C_VIEW, 0},
    {"Identity", rpx__infer_identity, RPX__C_VIEW, 0},
    {"Dropout", rpx__infer_dropout, RPX__C_VIEW, 0},
    {"Shape", rpx__infer_shape, RPX__C_VIEW, 0},
    {"Size", rpx__infer_size, RPX__C_VIEW, 0},
    {"Constant", rpx__infer_constant, RPX__C_VIEW, 0},
    /* shapes_std.c: shape-following operators and their formulas */
    {"ScatterND", rpx__infer_like_data, RPX__C_STD, 0},
    {"ScatterElements", rpx__infer_like_data, RPX__C_STD, 0},
    {"Scatter", rpx__infer_like_data, RPX__C_STD, 0},
    {"CumSum", rpx__infer_like_data, RPX__C_STD, 0},
    {"GridSample", rpx__infer_grid_sample, RPX__C_STD, 0},
    {"RoiAlign", rpx__infer_roi_align, RPX__C_STD, 0},
    {"RNN", rpx__infer_rnn, RPX__C_STD, 0},
    {"GRU", rpx__infer_rnn, RPX__C_STD, 0},
    {"LSTM", rpx__infer_rnn, RPX__C_STD, 0},
    {"OneHot", rpx__infer_one_hot, RPX__C_STD, 0},
    {"EyeLike", rpx__infer_eyelike, RPX__C_STD, 0},
    {"Trilu", rpx__infer_like_data, RPX__C_STD, 0},
    {"ReverseSequence", rpx__infer_like_data, RPX__C_STD, 0},
    {"LRN", rpx__infer_like_data, RPX__C_STD, 0},
    {"Hardmax", rpx__infer_like_data, RPX__C_STD, 0},
    {"DynamicQuantizeLinear", rpx__infer_dyn_quantize, RPX__C_STD, 0},
    {"MatMulInteger", rpx__infer_int_product, RPX__C_STD, 0},
    {"QLinearMatMul", rpx__infer_int_product, RPX__C_STD, 0},
    {"ConvInteger", rpx__infer_int_product, RPX__C_STD, 0},
    {"QLinearConv", rpx__infer_int_product, RPX__C_STD, 0},
    {"Acos", rpx__infer_same, E, 1},
    {"Asin", rpx__infer_same, E, 1},
    {"Acosh", rpx__infer_same, E, 1},
    {"Asinh", rpx__infer_same, E, 1},
    {"Atanh", rpx__infer_same, E, 1},
    {"Cosh", rpx__infer_same, E, 1},
    {"Sinh", rpx__infer_same, E, 1},
    {"Shrink", rpx__infer_same, E, 2},
    {"BitwiseNot", rpx__infer_same, E, 1},
    {"BitwiseAnd", rpx__infer_elementwise, E, 1},
    {"BitwiseOr", rpx__infer_elementwise, E, 1},
    {"BitwiseXor", rpx__infer_elementwise, E, 1},
    /* shapes known, cost not modelled: listed as unsupported */
    {"Det", rpx__infer_det, RPX__C_NONE, 0},
    {"RandomNormalLike", rpx__infer_like_data, RPX__C_NONE, 0},
    {"RandomUniformLike", rpx__infer_like_data, RPX__C_NONE, 0},
    {"Bernoulli", rpx__infer_like_data, RPX__C_NONE, 0},
    {"TopK", rpx__infer_topk, RPX__C_NONE, 0},
    {"NonZero", rpx__infer_nonzero, RPX__C_NONE, 0},
    {"HannWindow", rpx__infer_window, RPX__C_NONE, 0},
    {"HammingWindow", rpx__infer_window, RPX__C_NONE, 0},
    {"BlackmanWindow", rpx__infer_window, RPX__C_NONE, 0},
    {"MelWeightMatrix", rpx__infer_mel, RPX__C_NONE, 0},
    {"DFT", rpx__infer_dft, RPX__C_NONE, 0},
    {"STFT", rpx__infer_stft, RPX__C_NONE, 0},
    {"MaxUnpool", rpx__infer_max_unpool, RPX__C_NONE, 0},
    {"MaxRoiPool", rpx__infer_max_roi_pool, RPX__C_NONE, 0},
    {"NegativeLogLikelihoodLoss", rpx__infer_loss, RPX__C_NONE, 0},
    {"SoftmaxCrossEntropyLoss", rpx__infer_loss, RPX__C_NONE, 0},
    {"RandomNormal", rpx__infer_random, RPX__C_NONE, 0},
    {"RandomUniform", rpx__infer_random, RPX__C_NONE, 0},
    {"Multinomial", rpx__infer_multinomial, RPX__C_NONE, 0},
    {"TfIdfVectorizer", rpx__infer_tfidf, RPX__C_NONE, 0},
    {"AffineGrid", rpx__infer_affine_grid, RPX__C_NONE, 0},
    {"Col2Im", rpx__infer_col2im, RPX__C_NONE, 0},
    {"CenterCropPad", rpx__infer_center_crop_pad, RPX__C_NONE, 0},
    {"DeformConv", rpx__infer_conv, RPX__C_NONE, 0},
    {"RegexFullMatch", rpx__infer_regex_full_match, RPX__C_NONE, 0},
    {"StringConcat", rpx__infer_elementwise, RPX__C_NONE, 0},
    /* output shape known only at run time, or not a tensor: the reason is given */
    {"Compress", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"Unique", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"NonMaxSuppression", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"StringNormalizer", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"StringSplit", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"ImageDecoder", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"Optional", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"OptionalGetElement", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"OptionalHasElement", rpx__infer_scalar_of_container, RPX__C_NONE, 0},
    {"SequenceAt", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"SequenceConstruct", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"SequenceEmpty", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"SequenceErase", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"SequenceInsert", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"SequenceLength", rpx__infer_scalar_of_container, RPX__C_NONE, 0},
    {"SequenceMap", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"SplitToSequence", rpx__infer_data_dependent, RPX__C_NONE, 0},
    {"ConcatFromSequence", rpx__infer_data_dependent, RPX__C_NONE, 0},
    /* control flow: bodies costed in graph.c */
    {"If", NULL, RPX__C_CONTROL, 0},
    {"Loop", NULL, RPX__C_CONTROL, 0},
    {"Scan", NULL, RPX__C_CONTROL, 0},
};
#undef E

const rpx__opdef *rpx__op_find(const char *op)
{
    size_t i;
    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].op, op) == 0) return &table[i];
    return NULL;
}

int rpx__op_dense(const rpx__ctx *c, const rpx__node *n)
{
    const rpx__opdef *d;
    size_t i, j;
    if (n->dense) return 1;
    if (!n->std || !(d = rpx__op_find(n->op))) return 0;
    if (d->cls == RPX__C_CONTROL) {
        for (i = 0; i < n->n_sub; i++)
            for (j = 0; j < c->graphs[n->sub[i]].n_nodes; j++)
                if (rpx__op_dense(c, &c->nodes[c->graphs[n->sub[i]].nodes[j]])) return 1;
        return 0;
    }
    if (d->cls == RPX__C_DENSE) return strcmp(n->op, "Einsum") || n->n_in >= 2;
    return !strcmp(n->op, "LSTM") || !strcmp(n->op, "GRU") || !strcmp(n->op, "RNN") ||
           !strcmp(n->op, "MatMulInteger") || !strcmp(n->op, "QLinearMatMul") ||
           !strcmp(n->op, "ConvInteger") || !strcmp(n->op, "QLinearConv");
}

double rpx__bytes(const rpx__ctx *c, const rpx__val *v)
{
    int bits;
    if (!v || !rpx__known(v)) return NAN;
    bits = rpx__dtype_bits(v->dtype);
    if (c->precision_bits && rpx__dtype_is_float(v->dtype) && v->dtype != RPX__T_COMPLEX64 &&
        v->dtype != RPX__T_COMPLEX128)
        bits = c->precision_bits;
    if (bits == 0) return NAN;
    return v->elems * bits / 8.0;
}

static double elems_of(rpx__ctx *c, const rpx__node *n, size_t i, int input)
{
    const rpx__val *v = input ? rpx__in(c, n, i) : rpx__out(c, n, i);
    return v && rpx__known(v) ? v->elems : NAN;
}

static int unsupported(rpx__node *n, const char *why)
{
    n->reason = why;
    return 0;
}

static double product(const int64_t *d, int from, int to)
{
    double p = 1;
    int i;
    for (i = from; i < to; i++) p *= (double)d[i];
    return p;
}

/* FLOPs and MACs; bytes are added by rpx__cost_node */
static int flops_of(rpx__ctx *c, rpx__node *n, const rpx__opdef *def)
{
    const char *op = n->op;
    double out = elems_of(c, n, 0, 0), in = elems_of(c, n, 0, 1);
    const rpx__val *x = rpx__in(c, n, 0), *w = rpx__in(c, n, 1), *y = rpx__out(c, n, 0);
    n->macs = 0;
    n->flops = 0;
    n->dense = 0;
    n->view = 0;
    switch (def->cls) {
    case RPX__C_DENSE:
        n->dense = 1;
        if (!strcmp(op, "Conv")) {
            n->macs = out * product(w->dims, 1, w->rank);
            n->flops = 2 * n->macs + (rpx__in(c, n, 2) ? out : 0);
        } else if (!strcmp(op, "ConvTranspose")) {
            n->macs = in * product(w->dims, 1, w->rank);
            n->flops = 2 * n->macs + (rpx__in(c, n, 2) ? out : 0);
        } else if (!strcmp(op, "Gemm")) {
            int ta = (int)rpx__attr_i(n, "transA", 0);
            double k = (double)(ta ? x->dims[0] : x->dims[1]);
            double alpha = rpx__attr_f(n, "alpha", 1), beta = rpx__attr_f(n, "beta", 1);
            int has_c = rpx__in(c, n, 2) != NULL && beta != 0;
            n->macs = out * k;
            n->flops = 2 * n->macs + (has_c ? out : 0) + (alpha != 1 ? out : 0) +
                       (has_c && beta != 1 ? out : 0);
        } else if (!strcmp(op, "MatMul")) {
            n->macs = out * (double)x->dims[x->rank - 1];
            n->flops = 2 * n->macs;
        } else { /* Einsum */
            rpx__einsum plan;
            int64_t dims[RPX__MAX_RANK];
            int rank, rc = rpx__einsum_plan(c, n, &plan, 0, &rank, dims);
            if (rc) return rc;
            if (plan.n_ops == 2) {
                n->macs = plan.macs;
                n->flops = 2 * n->macs;
            } else if (plan.n_ops == 1) {
                n->dense = 0;
                n->flops = plan.macs == plan.out_elems ? 0 : plan.macs; /* transpose or sums */
                n->cls = RPX__C_MOVE;
            } else {
                int k = rpx__einsum_order(c, n, &n->macs, &n->note);
                if (k <= 0) return k;
                n->flops = 2 * n->macs;
            }
        }
        return 1;
    case RPX__C_NORM:
        n->flops = def->per_elem * in;
        if (!strcmp(op, "LayerNormalization") && !rpx__in(c, n, 2)) n->flops -= in; /* no bias */
        return 1;
    case RPX__C_ELEMENTWISE: {
        double per = def->per_elem;
        if (per == -1) per = (double)n->n_in - 1;
        if (per == -2) per = (double)n->n_in;
        if (!strcmp(op, "Gelu") && !strcmp(rpx__attr_s(c, n, "approximate", "none"), "tanh"))
            per = 9;
        n->flops = per * out;
        return 1;
    }
    case RPX__C_REDUCE: {
        double per_out = 0;
        if (!strcmp(op, "ReduceMean") || !strcmp(op, "ReduceL2") || !strcmp(op, "ReduceLogSum") ||
            !strcmp(op, "ReduceLogSumExp"))
            per_out = 1;
        n->flops = def->per_elem * in + per_out * out;
        return 1;
    }
    case RPX__C_POOL:
        if (!strncmp(op, "Global", 6)) {
            n->flops = !strcmp(op, "GlobalMaxPool") ? in
                       : !strcmp(op, "GlobalAveragePool") ? in + out
                                                          : 2 * in + out;
        } else {
            const int64_t *k;
            long nk = rpx__attr_ints(n, "kernel_shape", &k);
            double kk = product(k, 0, (int)nk);
            n->flops = !strcmp(op, "LpPool") ? out * (2 * kk + 1) : out * kk;
        }
        return 1;
    case RPX__C_RESIZE: {
        const char *mode = rpx__attr_s(c, n, "mode", "nearest");
        int k = 0, i;
        for (i = 0; i < x->rank; i++) k += x->dims[i] != y->dims[i];
        if (!strcmp(mode, "nearest")) {
            n->flops = 0;
        } else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear")) {
            n->flops = out * 3 * (ldexp(1, k) - 1);
        } else if (!strcmp(mode, "cubic")) {
            n->flops = out * 7 * (pow(4, k) - 1) / 3;
        } else {
            return unsupported(n, rpx__fmt(c, "resize mode '%s' is not modelled", mode));
        }
        return 1;
    }
    case RPX__C_STD: return rpx__cost_std(c, n);
    case RPX__C_MOVE: return 1;
    case RPX__C_VIEW: n->view = 1; return 1;
    case RPX__C_NONE: {
        size_t i;
        int all = 1;
        for (i = 0; i < n->n_out; i++) {
            const rpx__val *o = rpx__out(c, n, i);
            if (o && !rpx__known(o)) all = 0;
        }
        return unsupported(n, all ? rpx__fmt(c, "no cost formula for %s (its output shapes are known)", op)
                                  : rpx__fmt(c, "no cost formula for %s, and its output shape depends "
                                                "on the data (known only at run time)", op));
    }
    }
    return unsupported(n, "no cost formula");
}

int rpx__cost_node(rpx__ctx *c, rpx__node *n, const rpx__opdef *def)
{
    int rc;
    size_t i, j;
    double r = 0, w = 0;
    n->cls = def->cls;
    if ((rc = flops_of(c, n, def)) <= 0) return rc;
    if (!(n->flops >= 0) || !(n->macs >= 0))
        return unsupported(n, "a size it needs is unknown");
    if (n->view) {
        n->bytes_r = n->bytes_w = 0;
        return 1;
    }
    for (i = 0; i < n->n_in; i++) {
        const rpx__val *v = rpx__in(c, n, i);
        double b;
        int dup = 0;
        if (!v) continue;
        for (j = 0; j < i; j++) dup |= n->in[j] == n->in[i];
        if (dup) continue; /* distinct inputs are read once */
        if (i == 0 && (!strcmp(n->op, "Gather") || !strcmp(n->op, "GatherElements") ||
                       !strcmp(n->op, "GatherND") || !strcmp(n->op, "Slice")))
            b = rpx__bytes(c, rpx__out(c, n, 0)); /* only the selected part is read */
        else
            b = rpx__bytes(c, v);
        if (!(b >= 0))
            return unsupported(n, rpx__fmt(c, "the size of input '%s' is unknown", v->name));
        r += b;
    }
    for (i = 0; i < n->n_out; i++) {
        const rpx__val *v = rpx__out(c, n, i);
        double b;
        if (!v) continue;
        b = rpx__bytes(c, v);
        if (!(b >= 0))
            return unsupported(n, rpx__fmt(c, "the size of output '%s' is unknown", v->name));
        w += b;
    }
    n->bytes_r = r;
    n->bytes_w = w;
    return 1;
}
