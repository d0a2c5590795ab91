/* ort_api.c — loading ONNX Runtime's library at run time (as rpxprof loads
 * CUDA): dlopen, OrtGetApiBase, the version and the API table (ort_api.h),
 * checked before use; an OrtStatus turned into an rpx_error; the element
 * types. Nothing here runs in a timed call. */
#include "runtimes/ort/ort_api.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/model.h"

/* OrtApiBase: GetApi(version), GetVersionString() (in this order) */
typedef struct rpx_ort_api_base {
    const void *(*GetApi)(uint32_t version);
    const char *(*GetVersionString)(void);
} rpx_ort_api_base;

typedef void (*rpx_ort_any_fn)(void);

int rpx__ort_fail(const rpx_ort_api *api, OrtStatus *st, rpx_error *err, int code,
                  const char *what)
{
    const char *msg = st ? api->GetErrorMessage(st) : "no status";
    rpx_error_set(err, code, "%s: %s", what, msg && *msg ? msg : "(ONNX Runtime gave no words)");
    if (st) api->ReleaseStatus(st);
    return code;
}

static int check_table(rpx_ort_api *api, rpx_error *err)
{
    /* entries 0, 1, 2, 93 together: a status made, read back and released */
    OrtStatus *st = api->CreateStatus(6 /* ORT_RUNTIME_EXCEPTION */, "rpxprof-probe");
    int ok = st && api->GetErrorCode(st) == 6 && api->GetErrorMessage(st) &&
             strcmp(api->GetErrorMessage(st), "rpxprof-probe") == 0;
    if (st) api->ReleaseStatus(st);
    if (!ok)
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "%s (ONNX Runtime %s): its OrtApi table does not answer as the "
                             "documented ABI says (CreateStatus/GetErrorMessage); use ONNX "
                             "Runtime 1.31.1 from scripts/setup.sh",
                             api->path, api->version);
    return 0;
}

int rpx__ort_api_load(const char *path, rpx_ort_api *api, rpx_error *err)
{
    const rpx_ort_api_base *(*get_base)(void);
    const rpx_ort_api_base *base;
    rpx_ort_any_fn const *table;
    char real[PATH_MAX];
    const char *v;
    memset(api, 0, sizeof *api);
    dlerror();
    api->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!api->handle)
        return rpx_error_set(err, RPX_EUNAVAILABLE,
                             "ONNX Runtime's library %s cannot be loaded (%s); run "
                             "./scripts/setup.sh to fetch it (onnxruntime-node 1.31.1 from npm), "
                             "or set RPXPROF_ORT_LIBRARY to a libonnxruntime.so.1",
                             path, dlerror());
    {
        /* the file the loader found (a soname resolves through the loader path) */
        Dl_info info;
        void *sym = dlsym(api->handle, "OrtGetApiBase");
        const char *p = path;
        if (sym && dladdr(sym, &info) && info.dli_fname) p = info.dli_fname;
        api->path = strdup(realpath(p, real) ? real : p);
        *(void **)&get_base = sym;
    }
    if (!api->path) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (!get_base)
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "%s has no OrtGetApiBase: it is not ONNX Runtime's library; run "
                             "./scripts/setup.sh or set RPXPROF_ORT_LIBRARY",
                             api->path);
    base = get_base();
    v = base && base->GetVersionString ? base->GetVersionString() : NULL;
    snprintf(api->version, sizeof api->version, "%s", v ? v : "unknown");
    table = base && base->GetApi ? (rpx_ort_any_fn const *)base->GetApi(RPX_ORT_API_NEEDED) : NULL;
    if (!table)
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "%s (ONNX Runtime %s) does not offer API version %u, which rpxprof "
                             "needs (ONNX Runtime 1.2 or newer); run ./scripts/setup.sh for "
                             "1.31.1",
                             api->path, api->version, RPX_ORT_API_NEEDED);
#define RPX_ORT_RESOLVE(idx, name, ret, args) api->name = (ret(*) args)table[idx];
    RPX_ORT_ENTRIES(RPX_ORT_RESOLVE)
#undef RPX_ORT_RESOLVE
    return check_table(api, err);
}

void rpx__ort_api_unload(rpx_ort_api *api)
{
    if (!api) return;
    /* never dlclose: ORT's threads and static destructors may outlive a
     * close (the same as the Python plugin keeps libpython) */
    free(api->path);
    api->path = NULL;
}

/* ONNXTensorElementDataType: 1 float, 2 uint8, 3 int8, 4 uint16, 5 int16,
 * 6 int32, 7 int64, 8 string, 9 bool, 10 float16, 11 double, 12 uint32,
 * 13 uint64, 14/15 complex, 16 bfloat16, ... */
static const struct {
    int ort;
    int rpx;
    const char *name;
} types[] = {
    {1, RPX_DTYPE_FLOAT32, "float32"}, {2, RPX_DTYPE_UINT8, "uint8"},
    {3, RPX_DTYPE_INT8, "int8"},       {4, RPX_DTYPE_UINT16, "uint16"},
    {5, RPX_DTYPE_INT16, "int16"},     {6, RPX_DTYPE_INT32, "int32"},
    {7, RPX_DTYPE_INT64, "int64"},     {8, 0, "string"},
    {9, RPX_DTYPE_BOOL, "bool"},       {10, RPX_DTYPE_FLOAT16, "float16"},
    {11, RPX_DTYPE_FLOAT64, "float64"}, {12, RPX_DTYPE_UINT32, "uint32"},
    {13, RPX_DTYPE_UINT64, "uint64"},  {14, 0, "complex64"},
    {15, 0, "complex128"},             {16, 0, "bfloat16"},
};
#define N_TYPES (sizeof types / sizeof types[0])

int rpx__ort_dtype_from(int ort_type)
{
    size_t i;
    for (i = 0; i < N_TYPES; i++)
        if (types[i].ort == ort_type) return types[i].rpx;
    return 0;
}

int rpx__ort_dtype_to(int dtype)
{
    size_t i;
    for (i = 0; i < N_TYPES; i++)
        if (types[i].rpx == dtype && dtype != 0) return types[i].ort;
    return 0;
}

const char *rpx__ort_type_name(int ort_type)
{
    static __thread char buf[24];
    size_t i;
    for (i = 0; i < N_TYPES; i++)
        if (types[i].ort == ort_type) return types[i].name;
    snprintf(buf, sizeof buf, "type %d", ort_type);
    return buf;
}
