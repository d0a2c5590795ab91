/* ort_internal.h — the state of one ONNX Runtime target, shared by the
 * plugin's rooms:
 *   ort_api.c     loading the library, the API table, statuses, dtypes
 *   ort_target.c  the plugin's open (its options), setup (the session, the
 *                 model's inputs and outputs), the call, outputs, section
 *   ort_bind.c    the inputs bound by name as OrtValues (checked against the
 *                 model), the outputs as rpx_tensors
 *   ort_layers.c  --layers: a second session with ORT's profiler on, its
 *                 JSON turned into the events of target.h
 *   ort_graph.c   fused nodes: which of the model file's nodes each node of
 *                 the optimised graph covers */
#ifndef RPX_ORT_INTERNAL_H
#define RPX_ORT_INTERNAL_H

#include <jansson.h>

#include "rpxprof/model.h"
#include "runtimes/ort/ort_api.h"

typedef struct ort_io {           /* one input or output of the model */
    char *name;
    int type;                     /* ONNXTensorElementDataType; 0 not a tensor */
    int ndim;                     /* -1 unknown */
    int64_t dims[RPX_MAX_DIMS];   /* -1 where dynamic */
    char *sym[RPX_MAX_DIMS];      /* the dim_param of a dynamic one, or NULL */
} ort_io;

typedef struct ort_bound {        /* the OrtValues made for one rpx_inputs */
    const rpx_inputs *key;
    const void *first_data;
    OrtValue **values;            /* n_in, in the model's input order */
} ort_bound;

#define ORT_MAX_BOUND 256

typedef struct ort_state {
    rpx_ort_api api;
    /* options (kv pairs) */
    char *model, *library, *graph_opt, *execution_mode, *runtime;
    long threads, inter_threads;
    long long seed;
    int has_seed;
    /* the session */
    OrtEnv *env;
    OrtSession *session;
    OrtSession *active;           /* the session a call runs: `session`, or the profiling one */
    OrtMemoryInfo *mem;
    OrtAllocator *alloc;          /* ORT's default allocator (names) */
    double setup_ms;
    const char *telemetry_env;    /* ORT_DISABLE_TELEMETRY as the session saw it */
    char model_sha256[65], library_sha256[65];
    int have_library_sha;
    ort_io *in, *out;
    size_t n_in, n_out;
    const char **in_names, **out_names;
    ort_bound bound[ORT_MAX_BOUND];
    size_t n_bound;
    /* the last call's outputs (ORT allocates them; released after the call) */
    OrtValue **results;
    rpx_tensor *out_tensors;
    /* --layers */
    OrtSession *prof;
    char *prof_dir;               /* mkdtemp: the profile and the optimised model */
    json_t *node_map;             /* {"optimised node": ["orig", ...] | null} */
    const char *map_note;         /* how the map was found */
} ort_state;

/* ort_target.c */
int rpx__ort_session_options(ort_state *s, OrtSessionOptions **out, rpx_error *err);
int rpx__ort_io_read(ort_state *s, OrtSession *sess, rpx_error *err);
/* ort_bind.c */
OrtValue **rpx__ort_bind(ort_state *s, const rpx_inputs *inputs, rpx_error *err);
void rpx__ort_bind_free(ort_state *s);
int rpx__ort_outputs(ort_state *s, rpx_outputs *outputs, rpx_error *err);
void rpx__ort_results_release(ort_state *s);
/* ort_layers.c */
int rpx__ort_layers_begin(void *state, rpx_error *err);
int rpx__ort_layers_end(void *state, json_t **events, rpx_error *err);
void rpx__ort_layers_free(ort_state *s);
/* ort_graph.c: {"node of the optimised model": [the original nodes it covers]
 * | null when it is the original node of that name}, from the two files */
int rpx__ort_node_map(const char *original, const char *optimised, json_t **map,
                      rpx_error *err);

#endif
