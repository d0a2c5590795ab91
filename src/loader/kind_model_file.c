/* kind_model_file.c — the model-file kind (docs/runtimes.md): `--model
 * resnet50.onnx` (or .pt, .torchscript) run by a runtime in the worker
 * process. Owns which runtime runs a file (--runtime ort|opencv|torch, else
 * by its suffix: .onnx → ONNX Runtime where its library is found, else
 * OpenCV DNN; TorchScript → libtorch), where ONNX Runtime's library is found
 * (RPXPROF_ORT_LIBRARY, the cache scripts/setup.sh fills, the loader path),
 * the runtime options as name = value pairs to the runtime's plugin
 * (librpxprof-ort.so, librpxprof-opencv.so, librpxprof-torch.so) and the
 * words of a runtime that crashes in its setup. */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/strbuf.h"
#include "loader/kinds.h"
#include "loader/kv.h"
#include "loader/plugins.h"
#include "rpxprof/error.h"

#ifndef RPX_ORT_INSTALLED_PATH
#define RPX_ORT_INSTALLED_PATH NULL
#endif
#ifndef RPX_OPENCV_INSTALLED_PATH
#define RPX_OPENCV_INSTALLED_PATH NULL
#endif
#ifndef RPX_TORCH_INSTALLED_PATH
#define RPX_TORCH_INSTALLED_PATH NULL
#endif

/* the version scripts/setup.sh fetches (onnxruntime-node's C library) */
#define ORT_VERSION "1.31.1"
#define ORT_LIBRARY_FILE "libonnxruntime.so.1"
#define ORT_FIX                                                                              \
    "run ./scripts/setup.sh (it fetches ONNX Runtime " ORT_VERSION "'s library into "       \
    "${XDG_CACHE_HOME:-~/.cache}/rpxprof/onnxruntime-" ORT_VERSION "/), or set "            \
    "RPXPROF_ORT_LIBRARY=/path/to/" ORT_LIBRARY_FILE

static const char *const suffixes[] = {".onnx", ".pt", ".torchscript", NULL};

typedef struct runtime_row {
    const char *word;             /* --runtime */
    const char *name;             /* the runtime block's name */
    rpx_kind_plugin plugin;
    const char *runs;             /* what it runs, for messages */
} runtime_row;

static const runtime_row runtimes[] = {
    {"ort", "onnxruntime", {"librpxprof-ort.so", "RPX_ORT_PLUGIN", RPX_ORT_INSTALLED_PATH, 0},
     "ONNX files"},
    {"opencv", "opencv",
     {"librpxprof-opencv.so", "RPX_OPENCV_PLUGIN", RPX_OPENCV_INSTALLED_PATH, 0}, "ONNX files"},
    {"torch", "torch", {"librpxprof-torch.so", "RPX_TORCH_PLUGIN", RPX_TORCH_INSTALLED_PATH, 0},
     "TorchScript files (.pt, .torchscript)"},
};
#define N_RUNTIMES (sizeof runtimes / sizeof runtimes[0])

static const runtime_row *runtime_named(const char *word)
{
    size_t i;
    for (i = 0; word && i < N_RUNTIMES; i++)
        if (strcmp(runtimes[i].word, word) == 0) return &runtimes[i];
    return NULL;
}

static int is_onnx(const char *spec)
{
    size_t n = strlen(spec);
    return n > 5 && strcasecmp(spec + n - 5, ".onnx") == 0;
}

static int is_file(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Where ONNX Runtime's library is: RPXPROF_ORT_LIBRARY (which must exist),
 * the cache scripts/setup.sh fills, then the loader's own search path. NULL
 * when none is found; *why then says what was looked at. */
static const char *ort_library(char *why, size_t size)
{
    static char found[PATH_MAX];
    const char *env = getenv("RPXPROF_ORT_LIBRARY");
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char path[PATH_MAX];
    void *h;
    if (env && *env) {
        if (is_file(env)) return snprintf(found, sizeof found, "%s", env), found;
        snprintf(why, size, "RPXPROF_ORT_LIBRARY=%s is not a file", env);
        return NULL;
    }
    if (cache && *cache)
        snprintf(path, sizeof path, "%s/rpxprof/onnxruntime-" ORT_VERSION "/" ORT_LIBRARY_FILE, cache);
    else
        snprintf(path, sizeof path, "%s/.cache/rpxprof/onnxruntime-" ORT_VERSION "/" ORT_LIBRARY_FILE,
                 home ? home : "");
    if (is_file(path)) return snprintf(found, sizeof found, "%s", path), found;
    /* onnxruntime on the loader path: where it lies, by a symbol it exports */
    h = dlopen(ORT_LIBRARY_FILE, RTLD_LAZY | RTLD_LOCAL);
    if (h) {
        Dl_info info;
        void *sym = dlsym(h, "OrtGetApiBase");
        if (sym && dladdr(sym, &info) && info.dli_fname)
            snprintf(found, sizeof found, "%s", info.dli_fname);
        else
            snprintf(found, sizeof found, "%s", ORT_LIBRARY_FILE);
        dlclose(h);
        return found;
    }
    snprintf(why, size, "RPXPROF_ORT_LIBRARY is not set, %s is not there and %s is not on the "
             "loader's path", path, ORT_LIBRARY_FILE);
    return NULL;
}

static int choose(const char *spec, const rpx_target_options *opt, rpx_runtime_choice *out,
                  rpx_error *err)
{
    const runtime_row *r = runtime_named(opt ? opt->runtime : NULL);
    const int onnx = is_onnx(spec);
    char why[PATH_MAX + 200] = "";
    memset(out, 0, sizeof *out);
    out->graph = onnx;
    out->defaulted = !r;
    if (opt && opt->runtime && !r)
        return rpx_error_set(err, RPX_EUSAGE, "--runtime %s: expected ort, opencv or torch",
                             opt->runtime);
    if (!r) { /* by the suffix: ONNX Runtime where its library is found */
        if (!onnx) r = runtime_named("torch");
        else r = runtime_named(ort_library(why, sizeof why) ? "ort" : "opencv");
    }
    if (onnx == (strcmp(r->word, "torch") == 0))
        return rpx_error_set(err, RPX_EUSAGE,
                             "--model %s --runtime %s: %s runs %s; give %s", spec, r->word,
                             r->word, r->runs,
                             onnx ? "--runtime ort or --runtime opencv (or no --runtime)"
                                  : "--runtime torch (or no --runtime), or export the model to "
                                    "ONNX for ort and opencv");
    out->runtime = r->word;
    out->name = r->name;
    out->other = onnx ? (strcmp(r->word, "ort") == 0 ? "opencv" : "ort") : NULL;
    if (strcmp(r->word, "ort") == 0) {
        out->library = ort_library(why, sizeof why);
        if (!out->library)
            return rpx_error_set(err, RPX_EUNSUPPORTED,
                                 "--model %s --runtime ort: ONNX Runtime's library was not "
                                 "found (%s); %s; or give --runtime opencv",
                                 spec, why, ORT_FIX);
    }
    return 0;
}

/* The pairs every runtime plugin takes (docs/runtimes.md). */
typedef struct runtime_kv {
    const char *model, *runtime, *graph_opt, *library;
    long threads, inter_threads;
    unsigned long long seed;
} runtime_kv;
#define F(name, type, field) {name, type, offsetof(runtime_kv, field), 0}
static const rpx_kv_field fields[] = {
    F("model", RPX_KVF_TEXT, model),
    F("runtime", RPX_KVF_TEXT, runtime),
    F("threads", RPX_KVF_LONG, threads),
    F("inter_threads", RPX_KVF_LONG, inter_threads),
    F("graph_opt", RPX_KVF_TEXT, graph_opt),
    F("library", RPX_KVF_TEXT, library),
    F("seed", RPX_KVF_ULL, seed),
};
#undef F

static int open_model_file(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    static const rpx_target_options none;
    rpx_runtime_choice ch;
    const runtime_row *r;
    runtime_kv v;
    rpx_kv_list kv;
    char buf[PATH_MAX];
    int rc;
    if (!opt) opt = &none;
    if ((rc = choose(t->spec, opt, &ch, err)) != 0) return rc;
    if (!is_file(t->spec))
        return rpx_error_set(err, RPX_ENOTFOUND, "--model %s: no such file", t->display_spec);
    r = runtime_named(ch.runtime);
    memset(&v, 0, sizeof v);
    v.model = t->spec;
    v.runtime = ch.runtime;
    v.graph_opt = opt->graph_opt;
    v.library = ch.library;
    v.threads = opt->threads;
    v.inter_threads = opt->inter_threads;
    v.seed = opt->model_seed;
    if (!(t->path = strdup(t->spec))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (rpx__kv_write(fields, sizeof fields / sizeof fields[0], &v, &kv) != 0)
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    rc = rpx__plugin_open(r->word, &r->plugin, t, &kv, err);
    free((void *)kv.items);
    if (rc == RPX_EUNSUPPORTED && !rpx__plugin_path(&r->plugin, buf, sizeof buf))
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--model %s: the %s runtime needs its plugin %s, which was found "
                             "neither next to rpxprof nor where it is installed (it is built "
                             "when its runtime is found at configure time: docs/runtimes.md); "
                             "build the project (cmake --build build), set %s%s%s",
                             t->display_spec, r->word, r->plugin.file, r->plugin.env,
                             ch.other ? ", or give --runtime " : "", ch.other ? ch.other : "");
    return rc;
}

/* every runtime's plugin found, then the model file last (the session's
 * version digests the last file: src/runner/session_run.c) */
static int files(const char *spec, char ***list, size_t *n)
{
    char buf[PATH_MAX];
    size_t i;
    for (i = 0; i < N_RUNTIMES; i++) {
        const char *p = rpx__plugin_path(&runtimes[i].plugin, buf, sizeof buf);
        if (p && rpx__strv_push(list, n, p) != 0) return -1;
    }
    return rpx__strv_push(list, n, spec);
}

static long local_path(const char *spec)
{
    return (long)strlen(spec);
}

static void setup_crash(const char *spec, const rpx_target_options *opt, char *buf, size_t size)
{
    rpx_runtime_choice ch;
    rpx_error e = {0};
    if (choose(spec, opt, &ch, &e) != 0) {
        snprintf(buf, size, ": the runtime crashed while it read the model file");
        return;
    }
    snprintf(buf, size,
             ": the runtime (%s) crashed while it read the model file: its own crash, not one "
             "measured in the model (a file it cannot read, e.g. without its weights, can do "
             "this)%s%s",
             ch.name, ch.other ? "; try --runtime " : "", ch.other ? ch.other : "");
}

const rpx_kind rpx__kind_model_file = {
    .name = "model_file",
    .suffixes = suffixes,
    .open = open_model_file,
    .files = files,
    .local_path = local_path,
    .caps = RPX_KIND_RUNTIME | RPX_KIND_LAYERS,
    .words = "a model file run by a runtime",
    .what = "a run of the model file in its runtime (ONNX Runtime, OpenCV DNN or libtorch) in "
            "this process, inputs bound and outputs read back",
    .scope = "runtime_run_wall_time: the runtime's run of the model on preloaded inputs, every "
             "output returned; preloaded_inputs",
    .outputs_how = NULL,
    .section_key = "runtime",
    .runtime = choose,
    .setup_crash = setup_crash,
};
