/* runtime_stand_in.c — a TEST FIXTURE, never shipped: a stand-in for the
 * runtime plugins of model files (librpxprof-ort.so, -opencv.so, -torch.so;
 * docs/runtimes.md), so that the host's side of the model-file kind (which
 * runtime, the name = value pairs, the inputs made, the cost, the report's
 * `runtime` block, a crash in setup) is tested without a runtime. It exports
 * the three plugins' symbols; the tests point RPX_ORT_PLUGIN (or
 * RPX_OPENCV_PLUGIN, RPX_TORCH_PLUGIN) at it. It "runs" a model by summing
 * each input: one float64 output per input, named "sum_NAME".
 * RPX_STAND_IN_CRASH=setup: it raises SIGFPE in setup (OpenCV's on a file
 * without its weights). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "loader/kv.h"
#include "loader/plugins.h"
#include "rpxprof/npz.h"

typedef struct stand_in {
    const char *model, *runtime, *graph_opt, *library;
    long threads, inter_threads;
    unsigned long long seed;
    double setup_ms;
    char sha[65];
    rpx_tensor out[16];
    double sums[16];
    char names[16][80];
    size_t n_out;
    json_t *inputs;
} stand_in;

#define F(name, type, field) {name, type, offsetof(stand_in, field), 0}
static const rpx_kv_field fields[] = {
    F("model", RPX_KVF_TEXT, model),         F("runtime", RPX_KVF_TEXT, runtime),
    F("threads", RPX_KVF_LONG, threads),     F("inter_threads", RPX_KVF_LONG, inter_threads),
    F("graph_opt", RPX_KVF_TEXT, graph_opt), F("library", RPX_KVF_TEXT, library),
    F("seed", RPX_KVF_ULL, seed),
};
#undef F

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    stand_in *s = *state;
    double t0 = now_ms();
    const char *crash = getenv("RPX_STAND_IN_CRASH");
    size_t i;
    rpx_error e = {0};
    (void)info;
    if (crash && strcmp(crash, "setup") == 0) raise(SIGFPE);
    if (rpx_file_sha256(s->model, s->sha, &e) != 0) return rpx_error_set(err, e.code, "%s", e.message);
    s->inputs = json_array();
    for (i = 0; i < in->count && i < 16; i++) {
        const rpx_tensor *t = &in->tensors[i];
        json_t *shape = json_array();
        int k;
        for (k = 0; k < t->ndim; k++) json_array_append_new(shape, json_integer(t->shape[k]));
        json_array_append_new(s->inputs, json_pack("{s:s,s:s,s:o}", "name", t->name, "dtype",
                                                   rpx_dtype_name(t->dtype), "shape", shape));
        snprintf(s->names[i], sizeof s->names[i], "sum_%s", t->name);
        s->out[i].name = s->names[i];
        s->out[i].dtype = RPX_DTYPE_FLOAT64;
        s->out[i].ndim = 0;
        s->out[i].count = 1;
        s->out[i].nbytes = 8;
        s->out[i].data = &s->sums[i];
    }
    s->n_out = i;
    s->setup_ms = now_ms() - t0;
    return 0;
}

static int call(void *state, const rpx_inputs *in, rpx_error *err)
{
    stand_in *s = state;
    size_t i, k;
    (void)err;
    for (i = 0; i < in->count && i < s->n_out; i++) {
        const rpx_tensor *t = &in->tensors[i];
        double sum = 0;
        if (t->dtype == RPX_DTYPE_FLOAT32)
            for (k = 0; k < t->count; k++) sum += ((const float *)t->data)[k];
        else
            for (k = 0; k < t->nbytes; k++) sum += ((const unsigned char *)t->data)[k];
        s->sums[i] = sum;
    }
    return 0;
}

static int outputs(void *state, rpx_outputs *out, rpx_error *err)
{
    stand_in *s = state;
    (void)err;
    out->count = s->n_out;
    out->tensors = s->out;
    return 0;
}

static json_t *section(void *state)
{
    stand_in *s = state;
    json_t *settings = json_pack("{s:o,s:o,s:o}", "threads",
                                 s->threads ? json_integer(s->threads) : json_null(),
                                 "inter_threads",
                                 s->inter_threads ? json_integer(s->inter_threads) : json_null(),
                                 "graph_opt", s->graph_opt ? json_string(s->graph_opt) : json_null());
    json_t *outs = json_array();
    size_t i;
    for (i = 0; i < s->n_out; i++)
        json_array_append_new(outs, json_pack("{s:s,s:s,s:[]}", "name", s->names[i], "dtype",
                                              "float64", "shape"));
    return json_pack("{s:s,s:s,s:o,s:n,s:s,s:o,s:f,s:s,s:s,s:O,s:o,s:I}", "name",
                     strcmp(s->runtime, "ort") == 0 ? "onnxruntime" : s->runtime, "version",
                     "stand-in", "library", s->library ? json_string(s->library) : json_null(),
                     "library_sha256", "provider", "stand-in (tests/models/runtime_stand_in.c)",
                     "settings", settings, "setup_ms", s->setup_ms, "model", s->model,
                     "model_sha256", s->sha, "inputs", s->inputs ? s->inputs : json_array(),
                     "outputs", outs, "seed", (json_int_t)s->seed);
}

static void unload(void *state)
{
    stand_in *s = state;
    json_decref(s->inputs);
    free(s);
}

static int open_stand_in(rpx_target *t, const rpx_kv_list *kv, rpx_error *err)
{
    stand_in *s = calloc(1, sizeof *s);
    int rc;
    if (!s) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    rc = rpx__kv_read(fields, sizeof fields / sizeof fields[0], "the stand-in runtime plugin", kv,
                      s, sizeof *s, err);
    if (rc != 0) {
        free(s);
        return rc;
    }
    t->hooks.state = s;
    t->hooks.setup = setup;
    t->hooks.call = call;
    t->hooks.outputs = outputs;
    t->hooks.section = section;
    t->hooks.unload = unload;
    return 0;
}

#define EXPORT(name)                                                                       \
    RPX_PLUGIN_EXPORT const int rpx_##name##_plugin_abi = RPX_PLUGIN_ABI;                  \
    RPX_PLUGIN_EXPORT int rpx_##name##_plugin_open(rpx_target *t, const rpx_kv_list *kv,   \
                                                   rpx_error *err);                        \
    int rpx_##name##_plugin_open(rpx_target *t, const rpx_kv_list *kv, rpx_error *err)     \
    {                                                                                      \
        return open_stand_in(t, kv, err);                                                  \
    }
EXPORT(ort)
EXPORT(opencv)
EXPORT(torch)
