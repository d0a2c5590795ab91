/* ort_target.c — librpxprof-ort.so, the ONNX Runtime plugin of the
 * `model_file` kind: its options (kv pairs: model, runtime, threads,
 * inter_threads, graph_opt, library, seed), the session made in setup (its
 * time, graph optimisation included, is the report's setup_ms), the timed
 * call (one OrtApi Run on inputs bound before), the report's `runtime`
 * section. The library is dlopen'ed (ort_api.c), never linked. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loader/kv.h"
#include "loader/plugins.h"
#include "rpxprof/npz.h"
#include "runtimes/ort/ort_internal.h"

RPX_PLUGIN_EXPORT const int rpx_ort_plugin_abi = RPX_PLUGIN_ABI;

typedef struct ort_opts {
    const char *model, *runtime, *graph_opt, *library, *execution_mode;
    long threads, inter_threads;
    unsigned long long seed;
} ort_opts;

#define F(name, type, field) {name, type, offsetof(ort_opts, field), 0}
static const rpx_kv_field fields[] = {
    F("model", RPX_KVF_TEXT, model),
    F("runtime", RPX_KVF_TEXT, runtime),
    F("threads", RPX_KVF_LONG, threads),
    F("inter_threads", RPX_KVF_LONG, inter_threads),
    F("graph_opt", RPX_KVF_TEXT, graph_opt),
    F("library", RPX_KVF_TEXT, library),
    F("execution_mode", RPX_KVF_TEXT, execution_mode),
    F("seed", RPX_KVF_ULL, seed),
};
#undef F
#define N_FIELDS (sizeof fields / sizeof fields[0])

static const struct {
    const char *name;
    int level;
} levels[] = {{"none", RPX_ORT_DISABLE_ALL},
              {"basic", RPX_ORT_ENABLE_BASIC},
              {"extended", RPX_ORT_ENABLE_EXTENDED},
              {"all", RPX_ORT_ENABLE_ALL}};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define ORT_CHECK(expr, what)                                                                 \
    do {                                                                                      \
        OrtStatus *st_ = (expr);                                                              \
        if (st_) return rpx__ort_fail(&s->api, st_, err, RPX_EUNAVAILABLE, what);             \
    } while (0)

int rpx__ort_session_options(ort_state *s, OrtSessionOptions **out, rpx_error *err)
{
    OrtSessionOptions *o = NULL;
    int level = RPX_ORT_ENABLE_ALL;
    size_t i;
    *out = NULL;
    for (i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcmp(levels[i].name, s->graph_opt) == 0) level = levels[i].level;
    ORT_CHECK(s->api.CreateSessionOptions(&o), "ONNX Runtime: CreateSessionOptions");
    *out = o;
    ORT_CHECK(s->api.SetSessionLogSeverityLevel(o, RPX_ORT_LOGGING_ERROR), "ONNX Runtime: log level");
    ORT_CHECK(s->api.SetSessionGraphOptimizationLevel(o, level), "ONNX Runtime: graph_opt");
    ORT_CHECK(s->api.SetSessionExecutionMode(
                  o, strcmp(s->execution_mode, "parallel") == 0 ? RPX_ORT_PARALLEL : RPX_ORT_SEQUENTIAL),
              "ONNX Runtime: execution mode");
    ORT_CHECK(s->api.SetIntraOpNumThreads(o, (int)s->threads), "ONNX Runtime: threads");
    ORT_CHECK(s->api.SetInterOpNumThreads(o, (int)s->inter_threads), "ONNX Runtime: inter_threads");
    return 0;
}

static void io_free(ort_io *io, size_t n)
{
    size_t i;
    int d;
    for (i = 0; io && i < n; i++) {
        free(io[i].name);
        for (d = 0; d < RPX_MAX_DIMS; d++) free(io[i].sym[d]);
    }
    free(io);
}

/* One input's or output's name, type and shape (symbolic dimensions named). */
static int io_one(ort_state *s, OrtSession *sess, int output, size_t i, ort_io *io, rpx_error *err)
{
    OrtTypeInfo *ti = NULL;
    const OrtTensorTypeAndShapeInfo *tsi = NULL;
    const char *sym[RPX_MAX_DIMS];
    char *name = NULL;
    size_t nd = 0, d;
    int onnx_type = 0, rc = 0;
    OrtStatus *st = output ? s->api.SessionGetOutputName(sess, i, s->alloc, &name)
                           : s->api.SessionGetInputName(sess, i, s->alloc, &name);
    if (st) return rpx__ort_fail(&s->api, st, err, RPX_EUNAVAILABLE, "ONNX Runtime: a name");
    io->name = strdup(name);
    s->api.AllocatorFree(s->alloc, name);
    if (!io->name) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    io->ndim = -1;
    st = output ? s->api.SessionGetOutputTypeInfo(sess, i, &ti) : s->api.SessionGetInputTypeInfo(sess, i, &ti);
    if (!st) st = s->api.GetOnnxTypeFromTypeInfo(ti, &onnx_type);
    if (!st && onnx_type == RPX_ORT_ONNX_TYPE_TENSOR) st = s->api.CastTypeInfoToTensorInfo(ti, &tsi);
    if (!st && tsi) st = s->api.GetTensorElementType(tsi, &io->type);
    if (!st && tsi) st = s->api.GetDimensionsCount(tsi, &nd);
    if (!st && tsi && nd > RPX_MAX_DIMS)
        rc = rpx_error_set(err, RPX_EUNSUPPORTED, "%s: '%s' has %zu dimensions, more than %d",
                           s->model, io->name, nd, RPX_MAX_DIMS);
    if (!st && tsi && rc == 0) st = s->api.GetDimensions(tsi, io->dims, nd);
    if (!st && tsi && rc == 0) st = s->api.GetSymbolicDimensions(tsi, sym, nd);
    if (!st && tsi && rc == 0) {
        io->ndim = (int)nd;
        for (d = 0; d < nd; d++)
            if (io->dims[d] < 0 && sym[d] && *sym[d] && !(io->sym[d] = strdup(sym[d])))
                rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    if (ti) s->api.ReleaseTypeInfo(ti);
    if (st) return rpx__ort_fail(&s->api, st, err, RPX_EUNAVAILABLE, "ONNX Runtime: a type");
    return rc;
}

int rpx__ort_io_read(ort_state *s, OrtSession *sess, rpx_error *err)
{
    size_t i;
    int rc = 0;
    ORT_CHECK(s->api.SessionGetInputCount(sess, &s->n_in), "ONNX Runtime: inputs");
    ORT_CHECK(s->api.SessionGetOutputCount(sess, &s->n_out), "ONNX Runtime: outputs");
    s->in = calloc(s->n_in + 1, sizeof *s->in);
    s->out = calloc(s->n_out + 1, sizeof *s->out);
    s->in_names = calloc(s->n_in + 1, sizeof *s->in_names);
    s->out_names = calloc(s->n_out + 1, sizeof *s->out_names);
    s->results = calloc(s->n_out + 1, sizeof *s->results);
    s->out_tensors = calloc(s->n_out + 1, sizeof *s->out_tensors);
    if (!s->in || !s->out || !s->in_names || !s->out_names || !s->results || !s->out_tensors)
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; rc == 0 && i < s->n_in; i++)
        if ((rc = io_one(s, sess, 0, i, &s->in[i], err)) == 0) s->in_names[i] = s->in[i].name;
    for (i = 0; rc == 0 && i < s->n_out; i++)
        if ((rc = io_one(s, sess, 1, i, &s->out[i], err)) == 0) s->out_names[i] = s->out[i].name;
    return rc;
}

static int ort_setup(void **state, const rpx_inputs *inputs, const rpx_run_info *info,
                     rpx_error *err)
{
    ort_state *s = *state;
    OrtSessionOptions *o = NULL;
    OrtStatus *st;
    struct stat sb;
    double t0;
    int rc;
    (void)info;
    if (stat(s->model, &sb) != 0)
        return rpx_error_set(err, RPX_ENOTFOUND, "--model %s: %s", s->model, strerror(errno));
    if ((rc = rpx_file_sha256(s->model, s->model_sha256, err)) != 0) return rc;
    s->have_library_sha = rpx_file_sha256(s->api.path, s->library_sha256, NULL) == 0;
    /* ONNX Runtime 1.31's Linux build carries a telemetry client (1DS) that
     * writes $TMPDIR/.ses and may send events: off, unless the user set the
     * variable, before the environment starts it; its events off too */
    setenv("ORT_DISABLE_TELEMETRY", "1", 0);
    s->telemetry_env = getenv("ORT_DISABLE_TELEMETRY");
    ORT_CHECK(s->api.CreateEnv(RPX_ORT_LOGGING_ERROR, "rpxprof", &s->env), "ONNX Runtime: CreateEnv");
    ORT_CHECK(s->api.DisableTelemetryEvents(s->env), "ONNX Runtime: DisableTelemetryEvents");
    ORT_CHECK(s->api.GetAllocatorWithDefaultOptions(&s->alloc), "ONNX Runtime: allocator");
    ORT_CHECK(s->api.CreateCpuMemoryInfo(RPX_ORT_ARENA_ALLOCATOR, RPX_ORT_MEM_DEFAULT, &s->mem),
              "ONNX Runtime: memory info");
    if ((rc = rpx__ort_session_options(s, &o, err)) != 0) {
        if (o) s->api.ReleaseSessionOptions(o);
        return rc;
    }
    t0 = now_ms();
    st = s->api.CreateSession(s->env, s->model, o, &s->session);
    s->setup_ms = now_ms() - t0;
    s->api.ReleaseSessionOptions(o);
    if (st) {
        char what[PATH_MAX + 96];
        snprintf(what, sizeof what, "--model %s: ONNX Runtime %s cannot load it", s->model,
                 s->api.version);
        return rpx__ort_fail(&s->api, st, err, RPX_EFORMAT, what);
    }
    s->active = s->session;
    if ((rc = rpx__ort_io_read(s, s->session, err)) != 0) return rc;
    /* the inputs of setup bound now, so the first timed call binds nothing */
    if (inputs && inputs->count > 0 && !rpx__ort_bind(s, inputs, err)) return err->code ? err->code : -1;
    return 0;
}

static int ort_call(void *state, const rpx_inputs *inputs, rpx_error *err)
{
    ort_state *s = state;
    OrtValue **in = rpx__ort_bind(s, inputs, err);
    OrtStatus *st;
    if (!in) return err && err->code ? err->code : -1;
    if (s->results[0] || (s->n_out > 1 && s->results[s->n_out - 1])) rpx__ort_results_release(s);
    st = s->api.Run(s->active, NULL, s->in_names, (const OrtValue *const *)in, s->n_in,
                    s->out_names, s->n_out, s->results);
    if (st) return rpx__ort_fail(&s->api, st, err, RPX_EMODEL, "ONNX Runtime: Run");
    return 0;
}

static void ort_after_call(void *state, int timed, int rc)
{
    (void)timed;
    (void)rc;
    rpx__ort_results_release(state);
}

static int ort_samples(void *state, const rpx_inputs *samples, size_t n, int writable,
                       rpx_error *err)
{
    size_t i;
    (void)writable;
    for (i = 0; i < n; i++)
        if (!rpx__ort_bind(state, &samples[i], err)) return err->code ? err->code : -1;
    return 0;
}

static int ort_outputs_hook(void *state, rpx_outputs *outputs, rpx_error *err)
{
    return rpx__ort_outputs(state, outputs, err);
}

static json_t *io_json(const ort_io *io, size_t n)
{
    json_t *a = json_array();
    size_t i;
    int d;
    for (i = 0; a && i < n; i++) {
        json_t *shape = io[i].ndim < 0 ? json_null() : json_array();
        for (d = 0; d < io[i].ndim; d++)
            json_array_append_new(shape, io[i].dims[d] >= 0 ? json_integer(io[i].dims[d])
                                         : io[i].sym[d] ? json_string(io[i].sym[d])
                                                        : json_null());
        json_array_append_new(a, json_pack("{s:s, s:s, s:o}", "name", io[i].name, "dtype",
                                           io[i].type ? rpx__ort_type_name(io[i].type) : "not a tensor",
                                           "shape", shape));
    }
    return a;
}

static json_t *ort_section(void *state)
{
    ort_state *s = state;
    json_t *settings = json_pack(
        "{s:o, s:o, s:s, s:s, s:s, s:b, s:b}",
        "threads", s->threads > 0 ? json_integer(s->threads) : json_null(),
        "inter_threads", s->inter_threads > 0 ? json_integer(s->inter_threads) : json_null(),
        "graph_opt", s->graph_opt, "execution_mode", s->execution_mode,
        "threads_default", "ONNX Runtime's own where null: intra-op one thread per physical core, "
                           "inter-op unused in sequential execution",
        "memory_arena", 1, "memory_pattern", 1);
    if (settings && s->has_seed) json_object_set_new(settings, "seed", json_integer(s->seed));
    if (settings)
        json_object_set_new(settings, "ORT_DISABLE_TELEMETRY",
                            s->telemetry_env ? json_string(s->telemetry_env) : json_null());
    return json_pack("{s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:s, s:s, s:o, s:o}", "name",
                     "onnxruntime", "version", s->api.version, "library",
                     s->api.path ? s->api.path : "", "library_sha256",
                     s->have_library_sha ? json_string(s->library_sha256) : json_null(),
                     "provider", "CPUExecutionProvider", "settings", settings, "setup_ms",
                     s->session ? json_real(s->setup_ms) : json_null(), "model", s->model,
                     "model_sha256", s->model_sha256, "inputs", io_json(s->in, s->n_in),
                     "outputs", io_json(s->out, s->n_out));
}

static void ort_teardown(void *state)
{
    ort_state *s = state;
    rpx__ort_layers_free(s);
    rpx__ort_results_release(s);
    rpx__ort_bind_free(s);
    if (s->session) s->api.ReleaseSession(s->session);
    s->session = s->active = NULL;
}

static void ort_unload(void *state)
{
    ort_state *s = state;
    if (!s) return;
    ort_teardown(s);
    if (s->mem) s->api.ReleaseMemoryInfo(s->mem);
    if (s->env) s->api.ReleaseEnv(s->env);
    io_free(s->in, s->n_in);
    io_free(s->out, s->n_out);
    free(s->in_names);
    free(s->out_names);
    free(s->results);
    free(s->out_tensors);
    rpx__ort_api_unload(&s->api);
    free(s->model);
    free(s->library);
    free(s->graph_opt);
    free(s->execution_mode);
    free(s->runtime);
    free(s);
}

/* Where the library is: the kv pair `library` (the host's choice), else
 * RPXPROF_ORT_LIBRARY, else setup.sh's cache, else the loader's path. */
static const char *library_path(const char *given, char *buf, size_t size)
{
    const char *env = getenv("RPXPROF_ORT_LIBRARY"), *cache = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (given && *given) return given;
    if (env && *env) return env;
    if (cache && *cache)
        snprintf(buf, size, "%s/rpxprof/onnxruntime-1.31.1/libonnxruntime.so.1", cache);
    else
        snprintf(buf, size, "%s/.cache/rpxprof/onnxruntime-1.31.1/libonnxruntime.so.1",
                 home ? home : "");
    if (access(buf, R_OK) == 0) return buf;
    return "libonnxruntime.so.1";
}

static int check_opts(const ort_opts *o, const char *spec, rpx_error *err)
{
    size_t i;
    int ok = !o->graph_opt;
    for (i = 0; !ok && i < sizeof levels / sizeof levels[0]; i++) ok = strcmp(o->graph_opt, levels[i].name) == 0;
    if (!ok)
        return rpx_error_set(err, RPX_EINVAL,
                             "the ort plugin: graph_opt '%s' is none of none, basic, extended, all",
                             o->graph_opt);
    if (o->execution_mode && strcmp(o->execution_mode, "sequential") != 0 &&
        strcmp(o->execution_mode, "parallel") != 0)
        return rpx_error_set(err, RPX_EINVAL,
                             "the ort plugin: execution_mode '%s' is neither sequential nor parallel",
                             o->execution_mode);
    if (o->threads < 0 || o->inter_threads < 0 || o->threads > 4096 || o->inter_threads > 4096)
        return rpx_error_set(err, RPX_EINVAL,
                             "the ort plugin: threads %ld / inter_threads %ld: give 0 (ONNX "
                             "Runtime's default) or a count of threads",
                             o->threads, o->inter_threads);
    if (o->runtime && strcmp(o->runtime, "ort") != 0 && strcmp(o->runtime, "onnxruntime") != 0)
        return rpx_error_set(err, RPX_EINVAL, "--model %s: the ort plugin runs --runtime ort, not '%s'",
                             spec, o->runtime);
    return 0;
}

static char *dup_or(const char *s, const char *def)
{
    return strdup(s && *s ? s : def);
}

RPX_PLUGIN_EXPORT int rpx_ort_plugin_open(rpx_target *t, const rpx_kv_list *opts, rpx_error *err);
int rpx_ort_plugin_open(rpx_target *t, const rpx_kv_list *opts, rpx_error *err)
{
    ort_opts o;
    ort_state *s;
    char buf[PATH_MAX];
    int rc = rpx__kv_read(fields, N_FIELDS, "the ort plugin", opts, &o, sizeof o, err);
    if (rc != 0) return rc;
    if ((rc = check_opts(&o, t->display_spec, err)) != 0) return rc;
    if (!(s = calloc(1, sizeof *s))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    t->hooks.state = s;
    t->hooks.unload = ort_unload;
    s->model = dup_or(o.model, t->path ? t->path : t->spec);
    s->library = strdup(library_path(o.library, buf, sizeof buf));
    s->graph_opt = dup_or(o.graph_opt, "all");
    s->execution_mode = dup_or(o.execution_mode, "sequential");
    s->runtime = dup_or(o.runtime, "ort");
    s->threads = o.threads;
    s->inter_threads = o.inter_threads;
    s->seed = (long long)o.seed;
    s->has_seed = rpx__kv_integer(opts, "seed", &s->seed);
    if (!s->model || !s->library || !s->graph_opt || !s->execution_mode || !s->runtime)
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if ((rc = rpx__ort_api_load(s->library, &s->api, err)) != 0) return rc;
    t->hooks.setup = ort_setup;
    t->hooks.call = ort_call;
    t->hooks.after_call = ort_after_call;
    t->hooks.samples = ort_samples;
    t->hooks.outputs = ort_outputs_hook;
    t->hooks.section = ort_section;
    t->hooks.teardown = ort_teardown;
    t->hooks.layers_begin = rpx__ort_layers_begin;
    t->hooks.layers_end = rpx__ort_layers_end;
    return 0;
}
