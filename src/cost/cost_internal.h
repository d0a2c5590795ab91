/* cost_internal.h — the cost layer's picture of an ONNX model, shared by its
 * rooms:
 *   base.c        the arena, the name map, data types, errors and warnings
 *   onnx.c        reading: a wire-level pass over the file that leaves the
 *                 weight bytes unread, protobuf-c; attributes and tensor values
 *   build.c       this representation, from the unpacked message
 *   shapes.c      shape inference of elementwise ops, reductions, Constant,
 *                 Shape, and the constant folding of shape arithmetic
 *   shapes_move.c shape inference (and folding) of views and data movement
 *   shapes_nn.c   shape inference of conv, pooling, gemm, matmul, einsum,
 *                 normalisation, resize
 *   ops.c         the operator table and the per-node cost formulas
 *   graph.c       input binding, topological order, the analysis driver,
 *                 If/Loop/Scan bodies
 *   totals.c      parameters, traffic, liveness, the per-op-type table
 *   report.c      the public accessors, rpx_cost_json
 *   efficiency.c  rpx_efficiency_*
 *
 * Values and nodes live in flat arrays addressed by index; every allocation
 * that lives as long as the analysis comes from one arena. */
#ifndef RPX_COST_INTERNAL_H
#define RPX_COST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"
#include "rpxprof/cost.h"
#include "rpxprof/error.h"

/* ONNX TensorProto.DataType codes (onnx.proto; newer ones than the system's
 * onnx.proto are numbers all the same). */
enum {
    RPX__T_UNDEFINED = 0, RPX__T_FLOAT = 1, RPX__T_UINT8 = 2, RPX__T_INT8 = 3,
    RPX__T_UINT16 = 4, RPX__T_INT16 = 5, RPX__T_INT32 = 6, RPX__T_INT64 = 7,
    RPX__T_STRING = 8, RPX__T_BOOL = 9, RPX__T_FLOAT16 = 10, RPX__T_DOUBLE = 11,
    RPX__T_UINT32 = 12, RPX__T_UINT64 = 13, RPX__T_COMPLEX64 = 14, RPX__T_COMPLEX128 = 15,
    RPX__T_BFLOAT16 = 16, RPX__T_F8E4M3FN = 17, RPX__T_F8E4M3FNUZ = 18, RPX__T_F8E5M2 = 19,
    RPX__T_F8E5M2FNUZ = 20, RPX__T_UINT4 = 21, RPX__T_INT4 = 22, RPX__T_FLOAT4E2M1 = 23,
    RPX__T_COUNT
};

int rpx__dtype_bits(int dtype);          /* 0 when unknown (string, undefined) */
const char *rpx__dtype_name(int dtype);  /* "float32", ...; "undefined" */
int rpx__dtype_is_float(int dtype);      /* floating point (incl. fp8, complex) */
int rpx__dtype_is_int(int dtype);        /* integer or bool */

#define RPX__MAX_RANK 32
#define RPX__CVAL_MAX 65536              /* largest tensor folded at analysis time */
#define RPX__DIM_MAX ((int64_t)1 << 40)  /* larger dimensions are absurd */
#define RPX__ELEMS_MAX 9007199254740992.0 /* 2^53 elements per tensor at most */

/* ---- arena ---------------------------------------------------------- */
typedef struct rpx__arena {
    struct rpx__block *head;
} rpx__arena;
void *rpx__alloc(rpx__arena *a, size_t size);            /* zeroed; NULL out of memory */
char *rpx__strndup(rpx__arena *a, const char *s, size_t n);
void rpx__arena_free(rpx__arena *a);

/* ---- string → index map --------------------------------------------- */
typedef struct rpx__map {
    const char **keys;
    int *vals;
    size_t cap, len;
} rpx__map;
int rpx__map_put(rpx__map *m, const char *key, int val);  /* 0, 1 exists, -1 oom */
int rpx__map_get(const rpx__map *m, const char *key);     /* -1 absent */
void rpx__map_free(rpx__map *m);

/* ---- the model ------------------------------------------------------- */
enum { RPX__V_INPUT, RPX__V_INIT, RPX__V_NODE };

typedef struct rpx__val {
    const char *name;
    int graph;              /* scope that defines it */
    int kind;               /* RPX__V_* */
    int producer;           /* node index, -1 for inputs and initializers */
    int dtype;              /* RPX__T_*, 0 unknown */
    int rank;               /* -1 unknown */
    int64_t *dims;          /* rank entries, -1 for an unknown one */
    const char **sym;       /* graph inputs: the dim_param of each dim, or NULL */
    double elems;           /* product of dims; NaN while unknown */
    int is_tensor;          /* 0: sequence, map, optional (never costed) */
    /* a value known at analysis time (small tensors only) */
    int has_cv, cv_float;
    size_t cv_n;
    int64_t *cv_i;
    double *cv_f;
    /* data of the model (initializer, Constant output) */
    int is_weight;
    int data_external;      /* initializer stored in an external file */
    const char *ext_location; /* its file, when its values were wanted (small integers) */
    int ext_missing;        /* ... and could not be read from it */
    const Onnx__TensorProto *tensor;
    const Onnx__ValueInfoProto *vi; /* value_info / output declaration */
    int from_vi;            /* shape taken from value_info: inference had none */
    int first_use;          /* first consumer in topological order, -1 */
} rpx__val;

enum { RPX__N_PENDING, RPX__N_OK, RPX__N_UNSUPPORTED };

typedef struct rpx__node {
    const Onnx__NodeProto *p;
    const char *name;       /* the node's name, or "OP#index" when it has none */
    const char *op;
    const char *domain;     /* "" for the default domain */
    int graph;
    int std;                /* default ONNX domain */
    int opset;              /* opset of its domain, 0 unknown */
    size_t n_in, n_out;
    int *in, *out;          /* value indices; -1 for an omitted optional one */
    size_t n_dep;
    int *dep;               /* values used by its subgraphs, defined outside them */
    size_t n_sub;
    int *sub;               /* subgraph indices */
    /* results */
    int status;             /* RPX__N_* */
    const char *reason;     /* why unsupported */
    const char *note;       /* how it was costed, when there was a choice (Einsum order) */
    int cls;                /* RPX__C_* of ops.c */
    int dense, view;
    double macs, flops, bytes_r, bytes_w, params;
    double trips;           /* control flow: iterations costed */
} rpx__node;

typedef struct rpx__graph {
    const Onnx__GraphProto *p;
    const char *name;
    int parent, owner;      /* enclosing graph and node, -1 for the main graph */
    rpx__map names;
    int *inputs;            /* graph inputs that are not initializers */
    size_t n_inputs;
    int *outputs;
    size_t n_outputs;
    int *nodes;             /* its nodes, file order, then topological order */
    size_t n_nodes;
} rpx__graph;

typedef struct rpx__warning {
    const char *text;
} rpx__warning;

/* totals by operator type (report) */
typedef struct rpx__optotal {
    const char *op;
    size_t count, unsupported;
    double macs, flops, params, bytes;
} rpx__optotal;

typedef struct rpx__group {   /* unsupported nodes grouped by op and reason */
    const char *op, *reason;
    size_t count;
} rpx__group;

struct rpx_cost {
    rpx__arena arena;
    const char *path;
    rpx_error *err;
    rpx_cost_options opt;
    int precision_bits;         /* 0: tensors' own dtypes */
    const char *precision;
    /* the file */
    unsigned char *kept;        /* the message without weight bytes */
    size_t kept_len;
    size_t elided_tensors;
    double elided_bytes;
    Onnx__ModelProto *m;
    int opset;                  /* default domain */
    /* representation */
    rpx__val *vals;
    size_t n_vals, cap_vals;
    rpx__node *nodes;
    size_t n_nodes, cap_nodes;
    rpx__graph *graphs;
    size_t n_graphs, cap_graphs;
    int depth;                  /* nesting of subgraphs while building */
    /* results */
    rpx_efficiency eff;
    rpx_cost_node *pub;         /* main-graph nodes in topological order */
    size_t n_pub;
    rpx__optotal *optot;
    size_t n_optot;
    rpx__group *groups;
    size_t n_groups;
    rpx__warning *warnings;
    size_t n_warnings, cap_warnings;
    size_t n_costed, n_total;   /* main-graph nodes */
    double params_int, params_int_bytes, param_storage_bytes;
    double by_dtype_elems[RPX__T_COUNT], by_dtype_bytes[RPX__T_COUNT];
    double input_bytes, output_bytes, const_bytes;
    int n_scan_outer;           /* nothing */
};

typedef struct rpx_cost rpx__ctx;

/* errors: "PATH: " + message; returns code */
int rpx__fail(rpx__ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int rpx__node_fail(rpx__ctx *c, const rpx__node *n, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rpx__warn(rpx__ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *rpx__fmt(rpx__ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* onnx.c */
int rpx__load_file(rpx__ctx *c, const char *path);
int rpx__load_buffer(rpx__ctx *c, const void *data, size_t len);
void rpx__unload(rpx__ctx *c);
/* build.c */
int rpx__build(rpx__ctx *c);      /* representation from c->m */
const Onnx__AttributeProto *rpx__attr(const rpx__node *n, const char *name);
int64_t rpx__attr_i(const rpx__node *n, const char *name, int64_t def);
double rpx__attr_f(const rpx__node *n, const char *name, double def);
/* NUL-terminated copy of a string attribute, or def */
const char *rpx__attr_s(rpx__ctx *c, const rpx__node *n, const char *name, const char *def);
/* ints attribute: count, or -1 when absent */
long rpx__attr_ints(const rpx__node *n, const char *name, const int64_t **out);
/* decode a small tensor's data into v's constant value; 0 ok or no data */
int rpx__tensor_value(rpx__ctx *c, const Onnx__TensorProto *t, rpx__val *v, const char *what);
int rpx__tensor_dtype_dims(rpx__ctx *c, const Onnx__TensorProto *t, rpx__val *v,
                           const char *what);

/* shapes.c / shapes_nn.c: infer one node's outputs (and fold constants).
 * RPX__OK: outputs set; RPX__UNKNOWN: an input's shape or a needed value is
 * unknown (reason in n->reason); negative: error. */
enum { RPX__OK = 0, RPX__UNKNOWN = 1 };
typedef int (*rpx__infer_fn)(rpx__ctx *c, rpx__node *n);

rpx__val *rpx__in(rpx__ctx *c, const rpx__node *n, size_t i);   /* NULL when omitted */
rpx__val *rpx__out(rpx__ctx *c, const rpx__node *n, size_t i);  /* NULL when omitted */
int rpx__known(const rpx__val *v);                   /* rank and every dim known */
/* Set output i: dtype, shape (validated: absurd dims are errors). */
int rpx__set(rpx__ctx *c, rpx__node *n, size_t i, int dtype, int rank, const int64_t *dims);
int rpx__set_like(rpx__ctx *c, rpx__node *n, size_t i, const rpx__val *like, int dtype);
/* Constant value of output i (copied); integer or floating. */
int rpx__set_cv_i(rpx__ctx *c, rpx__node *n, size_t i, const int64_t *vals, size_t count);
int rpx__set_cv_f(rpx__ctx *c, rpx__node *n, size_t i, const double *vals, size_t count);
int rpx__unknown(rpx__node *n, const char *reason);
/* numpy broadcasting of two shapes; error on a mismatch */
int rpx__broadcast(rpx__ctx *c, rpx__node *n, int ra, const int64_t *a, int rb,
                   const int64_t *b, int *rank, int64_t *out);
int rpx__norm_axis(rpx__ctx *c, rpx__node *n, int64_t axis, int rank, int *out);
/* integer-valued constant input (cast from floats): count or -1 when not known */
long rpx__cv_ints(rpx__ctx *c, const rpx__val *v, int64_t **out);

int rpx__infer_elementwise(rpx__ctx *c, rpx__node *n);
int rpx__infer_compare(rpx__ctx *c, rpx__node *n);
int rpx__infer_unary(rpx__ctx *c, rpx__node *n);
int rpx__infer_same(rpx__ctx *c, rpx__node *n);       /* every output = input 0 */
int rpx__infer_reduce(rpx__ctx *c, rpx__node *n);
int rpx__infer_argreduce(rpx__ctx *c, rpx__node *n);
int rpx__infer_constant(rpx__ctx *c, rpx__node *n);
int rpx__infer_shape(rpx__ctx *c, rpx__node *n);
int rpx__infer_size(rpx__ctx *c, rpx__node *n);
int rpx__infer_reshape(rpx__ctx *c, rpx__node *n);
int rpx__infer_flatten(rpx__ctx *c, rpx__node *n);
int rpx__infer_squeeze(rpx__ctx *c, rpx__node *n);
int rpx__infer_unsqueeze(rpx__ctx *c, rpx__node *n);
int rpx__infer_transpose(rpx__ctx *c, rpx__node *n);
int rpx__infer_concat(rpx__ctx *c, rpx__node *n);
int rpx__infer_split(rpx__ctx *c, rpx__node *n);
int rpx__infer_slice(rpx__ctx *c, rpx__node *n);
int rpx__infer_gather(rpx__ctx *c, rpx__node *n);
int rpx__infer_gather_elements(rpx__ctx *c, rpx__node *n);
int rpx__infer_gather_nd(rpx__ctx *c, rpx__node *n);
int rpx__infer_pad(rpx__ctx *c, rpx__node *n);
int rpx__infer_expand(rpx__ctx *c, rpx__node *n);
int rpx__infer_tile(rpx__ctx *c, rpx__node *n);
int rpx__infer_cast(rpx__ctx *c, rpx__node *n);
int rpx__infer_range(rpx__ctx *c, rpx__node *n);
int rpx__infer_constant_of_shape(rpx__ctx *c, rpx__node *n);
int rpx__infer_where(rpx__ctx *c, rpx__node *n);
int rpx__infer_identity(rpx__ctx *c, rpx__node *n);
int rpx__infer_dropout(rpx__ctx *c, rpx__node *n);
int rpx__infer_depth_to_space(rpx__ctx *c, rpx__node *n);
int rpx__infer_space_to_depth(rpx__ctx *c, rpx__node *n);
int rpx__infer_topk(rpx__ctx *c, rpx__node *n);
int rpx__infer_nonzero(rpx__ctx *c, rpx__node *n);
int rpx__infer_quantize(rpx__ctx *c, rpx__node *n);
int rpx__infer_dequantize(rpx__ctx *c, rpx__node *n);

int rpx__infer_conv(rpx__ctx *c, rpx__node *n);
int rpx__infer_conv_transpose(rpx__ctx *c, rpx__node *n);
int rpx__infer_pool(rpx__ctx *c, rpx__node *n);
int rpx__infer_global_pool(rpx__ctx *c, rpx__node *n);
int rpx__infer_gemm(rpx__ctx *c, rpx__node *n);
int rpx__infer_matmul(rpx__ctx *c, rpx__node *n);
int rpx__infer_einsum(rpx__ctx *c, rpx__node *n);
int rpx__infer_batchnorm(rpx__ctx *c, rpx__node *n);
int rpx__infer_layernorm(rpx__ctx *c, rpx__node *n);
int rpx__infer_resize(rpx__ctx *c, rpx__node *n);
int rpx__infer_upsample(rpx__ctx *c, rpx__node *n);
/* shapes_std.c */
int rpx__infer_like_data(rpx__ctx *c, rpx__node *n);   /* output 0 = input 0 */
int rpx__infer_eyelike(rpx__ctx *c, rpx__node *n);
int rpx__infer_grid_sample(rpx__ctx *c, rpx__node *n);
int rpx__infer_roi_align(rpx__ctx *c, rpx__node *n);
int rpx__infer_rnn(rpx__ctx *c, rpx__node *n);         /* RNN, GRU, LSTM */
int rpx__infer_one_hot(rpx__ctx *c, rpx__node *n);
int rpx__infer_dyn_quantize(rpx__ctx *c, rpx__node *n);
int rpx__infer_det(rpx__ctx *c, rpx__node *n);
int rpx__infer_int_product(rpx__ctx *c, rpx__node *n);  /* MatMulInteger, ConvInteger, QLinear* */
/* shapes_signal.c */
int rpx__infer_window(rpx__ctx *c, rpx__node *n);       /* Hann, Hamming, BlackmanWindow */
int rpx__infer_mel(rpx__ctx *c, rpx__node *n);
int rpx__infer_dft(rpx__ctx *c, rpx__node *n);
int rpx__infer_stft(rpx__ctx *c, rpx__node *n);
int rpx__infer_max_unpool(rpx__ctx *c, rpx__node *n);
int rpx__infer_max_roi_pool(rpx__ctx *c, rpx__node *n);
int rpx__infer_loss(rpx__ctx *c, rpx__node *n);         /* NLL, SoftmaxCrossEntropy */
int rpx__infer_random(rpx__ctx *c, rpx__node *n);       /* RandomNormal, RandomUniform */
int rpx__infer_multinomial(rpx__ctx *c, rpx__node *n);
int rpx__infer_tfidf(rpx__ctx *c, rpx__node *n);
int rpx__infer_data_dependent(rpx__ctx *c, rpx__node *n);
int rpx__infer_affine_grid(rpx__ctx *c, rpx__node *n);
int rpx__infer_col2im(rpx__ctx *c, rpx__node *n);
int rpx__infer_center_crop_pad(rpx__ctx *c, rpx__node *n);
int rpx__infer_regex_full_match(rpx__ctx *c, rpx__node *n);
int rpx__infer_scalar_of_container(rpx__ctx *c, rpx__node *n); /* SequenceLength, OptionalHasElement */
/* FLOPs (and MACs) of the operators of shapes_std.c: 1 costed, 0 not (reason set) */
int rpx__cost_std(rpx__ctx *c, rpx__node *n);
/* Einsum of any number of operands: MACs of the cheapest pairwise order and
 * its description; 1 planned, 0 not (reason set), negative error */
int rpx__einsum_order(rpx__ctx *c, rpx__node *n, double *macs, const char **order);

/* Conv/pool geometry shared by inference and cost (shapes_nn.c). */
typedef struct rpx__einsum {
    int n_ops;
    double macs;            /* product of every label's extent */
    double out_elems;
} rpx__einsum;
int rpx__einsum_plan(rpx__ctx *c, rpx__node *n, rpx__einsum *plan, int rank_out_only,
                     int *rank, int64_t *dims);
/* an Einsum label: a-z -> 0..25, A-Z -> 26..51, else -1 */
int rpx__einsum_label(char ch);

/* ops.c */
enum {
    RPX__C_NONE = 0,        /* shape rule only: cost unknown */
    RPX__C_DENSE, RPX__C_ELEMENTWISE, RPX__C_NORM, RPX__C_REDUCE, RPX__C_POOL,
    RPX__C_RESIZE, RPX__C_MOVE, RPX__C_VIEW, RPX__C_CONTROL,
    RPX__C_STD              /* formula in shapes_std.c (rpx__cost_std) */
};
typedef struct rpx__opdef {
    const char *op;
    rpx__infer_fn infer;
    int cls;
    double per_elem;        /* elementwise: FLOPs per output element */
} rpx__opdef;
const rpx__opdef *rpx__op_find(const char *op);
/* a dense node (matrix products, convolutions, recurrent cells), costed or not */
int rpx__op_dense(const rpx__ctx *c, const rpx__node *n);
/* Cost of an inferred node: 1 costed, 0 not (reason set), negative error. */
int rpx__cost_node(rpx__ctx *c, rpx__node *n, const rpx__opdef *def);
double rpx__bytes(const rpx__ctx *c, const rpx__val *v);   /* NaN if unknown */

/* graph.c */
int rpx__bind_inputs(rpx__ctx *c);
int rpx__toposort(rpx__ctx *c, int graph);
int rpx__analyze_graph(rpx__ctx *c, int graph);

/* totals.c */
int rpx__totals(rpx__ctx *c);

#endif
