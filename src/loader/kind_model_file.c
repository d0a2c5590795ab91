/* kind_model_file.c — TEMPORARY stand-in for the `model_file` kind (issue
 * 39), written by the ort engineer only to drive librpxprof-ort.so from
 * `rpxprof run --model x.onnx` in its tests. The modelfile engineer owns this
 * row (runtime choice, --threads/--graph-opt/..., inputs made when none are
 * given, cost): the integrator takes theirs. Here: `.onnx` → the ort plugin
 * with the kv pairs model, runtime and library (RPXPROF_ORT_LIBRARY, then
 * setup.sh's cache, then the loader's path), and any name=value pairs of
 * RPX_ORT_KV (test-only: "threads=2,graph_opt=basic"). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader/kinds.h"
#include "loader/plugins.h"
#include "rpxprof/error.h"

static const rpx_kind_plugin plugin = {"librpxprof-ort.so", "RPX_ORT_PLUGIN", NULL, 0};
static const char *const suffixes[] = {".onnx", NULL};

static const char *ort_library(char *buf, size_t size)
{
    const char *env = getenv("RPXPROF_ORT_LIBRARY"), *cache = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (env && *env) return env;
    if (cache && *cache)
        snprintf(buf, size, "%s/rpxprof/onnxruntime-1.31.1/libonnxruntime.so.1", cache);
    else
        snprintf(buf, size, "%s/.cache/rpxprof/onnxruntime-1.31.1/libonnxruntime.so.1",
                 home ? home : "");
    return access(buf, R_OK) == 0 ? buf : "libonnxruntime.so.1";
}

static int open_model_file(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    char lib[PATH_MAX], *extra = NULL, *tok, *save = NULL;
    rpx_kv kv[24];
    rpx_kv_list list = {kv, 0};
    const char *e = getenv("RPX_ORT_KV");
    int rc;
    (void)opt;
    memset(kv, 0, sizeof kv);
    kv[list.n++] = (rpx_kv){"model", RPX_KV_TEXT, t->spec, 0, 0};
    kv[list.n++] = (rpx_kv){"runtime", RPX_KV_TEXT, "ort", 0, 0};
    kv[list.n++] = (rpx_kv){"library", RPX_KV_TEXT, ort_library(lib, sizeof lib), 0, 0};
    if (e && *e && !(extra = strdup(e))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (tok = extra ? strtok_r(extra, ",", &save) : NULL; tok && list.n < 24;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '='), *end;
        long long v;
        if (!eq) continue;
        *eq = '\0';
        v = strtoll(eq + 1, &end, 10);
        kv[list.n++] = *end == '\0' && end != eq + 1 ? (rpx_kv){tok, RPX_KV_INTEGER, NULL, 0, v}
                                                     : (rpx_kv){tok, RPX_KV_TEXT, eq + 1, 0, 0};
    }
    rc = rpx__plugin_open("ort", &plugin, t, &list, err);
    free(extra);
    if (rc == RPX_EUNSUPPORTED && !err->message[0])
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--model %s: model files need librpxprof-ort.so, which was not "
                             "found; build the project or set RPX_ORT_PLUGIN",
                             t->display_spec);
    return rc;
}

const rpx_kind rpx__kind_model_file = {
    .name = "model_file",
    .suffixes = suffixes,
    .open = open_model_file,
    .plugin = &plugin,
    .caps = 0,
    .words = "a model file run by ONNX Runtime",
    .what = "one Run of the model's graph by ONNX Runtime (CPU execution provider) in this process",
    .scope = "ort_session_run: one OrtApi Run on inputs bound before the timed calls; outputs "
             "allocated by ONNX Runtime",
};
