/* cuda.c — owns the CUDA driver backend: dlopen of libcuda, the visible
 * devices, their primary contexts and synchronising them.
 *
 * The declarations below are our own minimal subset of the CUDA driver API
 * (facts from NVIDIA's CUDA Driver API reference: CUresult is an int enum with
 * CUDA_SUCCESS = 0, CUdevice an int, CUcontext an opaque pointer, CUuuid 16
 * bytes; attribute ids MULTIPROCESSOR_COUNT = 16, COMPUTE_CAPABILITY_MAJOR =
 * 75, COMPUTE_CAPABILITY_MINOR = 76). No CUDA header is needed to build. */
#include "device/cuda.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/clock.h"
#include "rpxprof/error.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct {
    unsigned char bytes[16];
} CUuuid;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NO_DEVICE = 100,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
};

#define RPX_CUDA_MAX_DEVICES 64

typedef struct cuda_api {
    CUresult (*cuInit)(unsigned int);
    CUresult (*cuDriverGetVersion)(int *);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
    CUresult (*cuDeviceGetPCIBusId)(char *, int, CUdevice);
    CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult (*cuCtxPushCurrent)(CUcontext);
    CUresult (*cuCtxPopCurrent)(CUcontext *);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuMemGetInfo)(size_t *, size_t *);
    CUresult (*cuGetErrorName)(CUresult, const char **);
    CUresult (*cuGetErrorString)(CUresult, const char **);
} cuda_api;

typedef struct cuda_device {
    CUdevice dev;
    CUcontext ctx;
    int retained;
    char name[256];
    char uuid[48];
    char pci_bus_id[32];
    int64_t total_bytes;
    int cc_major, cc_minor, sm_count;
} cuda_device;

struct rpx_cuda {
    void *lib;
    cuda_api api;
    int count;
    char *visible;       /* CUDA_VISIBLE_DEVICES when cuInit ran; NULL: unset */
    char driver_version[16];
    cuda_device dev[RPX_CUDA_MAX_DEVICES];
};

static const char *library_path(void)
{
    const char *p = getenv("RPX_CUDA_LIBRARY");
    return p && *p ? p : "libcuda.so.1";
}

static const char *err_text(const rpx_cuda *c, CUresult r, char *buf, size_t size)
{
    const char *name = NULL, *desc = NULL;
    if (c->api.cuGetErrorName) c->api.cuGetErrorName(r, &name);
    if (c->api.cuGetErrorString) c->api.cuGetErrorString(r, &desc);
    snprintf(buf, size, "%s (%d)%s%s", name ? name : "CUDA error", r, desc ? ": " : "",
             desc ? desc : "");
    return buf;
}

/* cuGetProcAddress as exported (CUDA 11.3+; the name keeps this signature
 * when headers map it to cuGetProcAddress_v2): the newest version of a
 * driver entry point not newer than `cudaVersion` (CU_GET_PROC_ADDRESS_DEFAULT
 * = 0 for flags). */
typedef CUresult (*get_proc_fn)(const char *, void **, int, unsigned long long);

/* Resolve `name` in the version whose signature cuda_api declares: with
 * cuGetProcAddress(name, version), else (drivers before 11.3) by the exact
 * exported name `exported` of that version. Never by a guessed suffix: CUDA
 * 12.9/13 export cuCtxSynchronize_v2(CUcontext), not our cuCtxSynchronize(void). */
static void *sym(void *lib, get_proc_fn get_proc, const char *name, int version,
                 const char *exported)
{
    void *p = NULL;
    if (get_proc && get_proc(name, &p, version, 0) == CUDA_SUCCESS && p) return p;
    return dlsym(lib, exported);
}

#define LOAD(field, name, version, exported, required)                                     \
    do {                                                                                   \
        *(void **)(&c->api.field) = sym(c->lib, get_proc, name, version, exported);        \
        if (required && !c->api.field) {                                                   \
            rpx_error_set(err, RPX_EUNAVAILABLE,                                           \
                          "%s: %s does not export %s; install a complete NVIDIA driver",   \
                          on, library_path(), name);                                       \
            goto fail;                                                                     \
        }                                                                                  \
    } while (0)

/* Entry `ordinal` of CUDA_VISIBLE_DEVICES (blanks trimmed) into buf; "" if
 * the list is unset or shorter. Visible ordinals follow the list's entries. */
static const char *visible_entry(const char *vis, int ordinal, char *buf, size_t size)
{
    const char *p = vis;
    int i;
    buf[0] = '\0';
    if (!vis) return buf;
    for (i = 0; i < ordinal && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p) return buf;
    while (*p == ' ' || *p == '\t') p++;
    snprintf(buf, size, "%.*s", (int)strcspn(p, ","), p);
    return buf;
}

/* The device of `ordinal` is a MIG instance: its entry names one ("MIG-..."). */
static int is_mig(const char *vis, int ordinal)
{
    char e[128];
    return strncmp(visible_entry(vis, ordinal, e, sizeof e), "MIG-", 4) == 0;
}

/* As nvidia-smi prints it: "GPU-..." for a GPU, "MIG-..." for a MIG instance
 * (cuDeviceGetUuid_v2 gives a MIG instance its own UUID). */
static void format_uuid(const CUuuid *u, int mig, char *out, size_t size)
{
    const unsigned char *b = u->bytes;
    snprintf(out, size,
             "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             mig ? "MIG" : "GPU", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static void describe(rpx_cuda *c, cuda_device *d, int ordinal)
{
    CUuuid u;
    size_t total = 0;
    int v;
    d->total_bytes = -1;
    d->cc_major = d->cc_minor = d->sm_count = -1;
    if (c->api.cuDeviceGetName(d->name, (int)sizeof d->name, d->dev) != CUDA_SUCCESS)
        d->name[0] = '\0';
    if (c->api.cuDeviceGetUuid && c->api.cuDeviceGetUuid(&u, d->dev) == CUDA_SUCCESS)
        format_uuid(&u, is_mig(c->visible, ordinal), d->uuid, sizeof d->uuid);
    if (c->api.cuDeviceGetPCIBusId &&
        c->api.cuDeviceGetPCIBusId(d->pci_bus_id, (int)sizeof d->pci_bus_id, d->dev) !=
            CUDA_SUCCESS)
        d->pci_bus_id[0] = '\0';
    if (c->api.cuDeviceTotalMem && c->api.cuDeviceTotalMem(&total, d->dev) == CUDA_SUCCESS)
        d->total_bytes = (int64_t)total;
    if (c->api.cuDeviceGetAttribute) {
        if (c->api.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                        d->dev) == CUDA_SUCCESS)
            d->cc_major = v;
        if (c->api.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                        d->dev) == CUDA_SUCCESS)
            d->cc_minor = v;
        if (c->api.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev) ==
            CUDA_SUCCESS)
            d->sm_count = v;
    }
}

int rpx_cuda_open(rpx_cuda **out, rpx_error *err) { return rpx_cuda_open_for(out, 0, err); }

int rpx_cuda_open_for(rpx_cuda **out, int python, rpx_error *err)
{
    /* the refusals name the option as the caller writes it */
    const char *on = python ? "device=\"cuda\"" : "--device cuda";
    const char *off = python ? "device=\"cpu\"" : "--device cpu";
    rpx_cuda *c;
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    char eb[256];
    CUresult r;
    get_proc_fn get_proc = NULL;
    int i, version = 0;
    *out = NULL;
    c = calloc(1, sizeof *c);
    if (!c) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (vis && !(c->visible = strdup(vis))) {
        free(c);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    c->lib = dlopen(library_path(), RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        const char *why = dlerror();
        rpx_error_set(err, RPX_EUNAVAILABLE,
                      "%s: the CUDA driver cannot be loaded (%s); install the NVIDIA "
                      "driver, or run with %s",
                      on, why ? why : library_path(), off);
        free(c->visible);
        free(c);
        return RPX_EUNAVAILABLE;
    }
    *(void **)&get_proc = dlsym(c->lib, "cuGetProcAddress");
    /* name, the CUDA version that introduced the signature declared in
     * cuda_api, and the name that version is exported under */
    LOAD(cuInit, "cuInit", 2000, "cuInit", 1);
    LOAD(cuDriverGetVersion, "cuDriverGetVersion", 2020, "cuDriverGetVersion", 0);
    LOAD(cuDeviceGetCount, "cuDeviceGetCount", 2000, "cuDeviceGetCount", 1);
    LOAD(cuDeviceGet, "cuDeviceGet", 2000, "cuDeviceGet", 1);
    LOAD(cuDeviceGetName, "cuDeviceGetName", 2000, "cuDeviceGetName", 1);
    LOAD(cuDeviceGetUuid, "cuDeviceGetUuid", 11040, "cuDeviceGetUuid_v2", 0);
    LOAD(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", 4000, "cuDeviceGetPCIBusId", 0);
    LOAD(cuDeviceTotalMem, "cuDeviceTotalMem", 3020, "cuDeviceTotalMem_v2", 0);
    LOAD(cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000, "cuDeviceGetAttribute", 0);
    LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, "cuDevicePrimaryCtxRetain",
         1);
    LOAD(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000,
         "cuDevicePrimaryCtxRelease_v2", 1);
    LOAD(cuCtxPushCurrent, "cuCtxPushCurrent", 4000, "cuCtxPushCurrent_v2", 1);
    LOAD(cuCtxPopCurrent, "cuCtxPopCurrent", 4000, "cuCtxPopCurrent_v2", 1);
    LOAD(cuCtxSynchronize, "cuCtxSynchronize", 2000, "cuCtxSynchronize", 1);
    LOAD(cuMemGetInfo, "cuMemGetInfo", 3020, "cuMemGetInfo_v2", 0);
    LOAD(cuGetErrorName, "cuGetErrorName", 6000, "cuGetErrorName", 0);
    LOAD(cuGetErrorString, "cuGetErrorString", 6000, "cuGetErrorString", 0);

    r = c->api.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        /* what the driver answers when CUDA_VISIBLE_DEVICES hides every GPU */
        rpx_error_set(err, RPX_EUNAVAILABLE,
                      "%s: no CUDA device is visible (CUDA_VISIBLE_DEVICES=%s%s%s): cuInit "
                      "answered %s; make a GPU visible or run with %s",
                      on, vis ? "\"" : "", vis ? vis : "unset", vis ? "\"" : "",
                      err_text(c, r, eb, sizeof eb), off);
        goto fail;
    }
    if (r != CUDA_SUCCESS) {
        rpx_error_set(err, RPX_EUNAVAILABLE,
                      "%s: cuInit failed: %s; check the driver (nvidia-smi) or run "
                      "with %s",
                      on, err_text(c, r, eb, sizeof eb), off);
        goto fail;
    }
    r = c->api.cuDeviceGetCount(&c->count);
    if (r != CUDA_SUCCESS || c->count <= 0) {
        if (r != CUDA_SUCCESS)
            rpx_error_set(err, RPX_EUNAVAILABLE, "%s: cuDeviceGetCount failed: %s",
                          on, err_text(c, r, eb, sizeof eb));
        else
            rpx_error_set(err, RPX_EUNAVAILABLE,
                          "%s: no CUDA device is visible (CUDA_VISIBLE_DEVICES=%s%s%s); "
                          "make a GPU visible or run with %s",
                          on, vis ? "\"" : "", vis ? vis : "unset", vis ? "\"" : "", off);
        goto fail;
    }
    if (c->count > RPX_CUDA_MAX_DEVICES) c->count = RPX_CUDA_MAX_DEVICES;
    if (c->api.cuDriverGetVersion && c->api.cuDriverGetVersion(&version) == CUDA_SUCCESS)
        snprintf(c->driver_version, sizeof c->driver_version, "%d.%d", version / 1000,
                 (version % 1000) / 10);
    for (i = 0; i < c->count; i++) {
        cuda_device *d = &c->dev[i];
        r = c->api.cuDeviceGet(&d->dev, i);
        if (r == CUDA_SUCCESS) {
            describe(c, d, i);
            r = c->api.cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
        }
        if (r != CUDA_SUCCESS) {
            rpx_error_set(err, RPX_EUNAVAILABLE,
                          "%s: cannot open the primary context of device %d: %s", on, i,
                          err_text(c, r, eb, sizeof eb));
            goto fail;
        }
        d->retained = 1;
    }
    *out = c;
    return 0;
fail:
    rpx_cuda_close(c);
    return err ? err->code : RPX_EUNAVAILABLE;
}

void rpx_cuda_close(rpx_cuda *c)
{
    int i;
    if (!c) return;
    for (i = 0; i < c->count; i++)
        if (c->dev[i].retained) c->api.cuDevicePrimaryCtxRelease(c->dev[i].dev);
    /* the driver stays loaded: unloading libcuda under a live runtime is unsafe */
    free(c->visible);
    free(c);
}

int rpx_cuda_device_count(const rpx_cuda *c)
{
    return c ? c->count : 0;
}

const char *rpx_cuda_device_uuid(const rpx_cuda *c, int ordinal)
{
    if (!c || ordinal < 0 || ordinal >= c->count || !c->dev[ordinal].uuid[0]) return NULL;
    return c->dev[ordinal].uuid;
}

const char *rpx_cuda_visible_devices(const rpx_cuda *c)
{
    return c ? c->visible : NULL;
}

static void add_warning(json_t *a, json_t *sentence)
{
    if (sentence && json_array_append_new(a, sentence) != 0) json_decref(sentence);
}

json_t *rpx_cuda_warnings(const rpx_cuda *c)
{
    json_t *a = json_array();
    const char *now = getenv("CUDA_VISIBLE_DEVICES");
    int i, k;
    if (!a || !c) return a;
    if ((now == NULL) != (c->visible == NULL) || (now && strcmp(now, c->visible) != 0))
        add_warning(a, json_sprintf(
                           "CUDA_VISIBLE_DEVICES changed during the run (%s%s%s when the driver "
                           "started, %s%s%s after): the driver had already chosen its devices, "
                           "so the change had no effect; the report shows the value the driver "
                           "used. Set it before rpxprof starts",
                           c->visible ? "'" : "", c->visible ? c->visible : "unset",
                           c->visible ? "'" : "", now ? "'" : "", now ? now : "unset",
                           now ? "'" : ""));
    for (i = 0; i < c->count; i++) {
        const char *rest;
        if (!is_mig(c->visible, i)) continue;
        rest = c->visible;
        for (k = 0; k <= i && rest; k++) {
            rest = strchr(rest, ',');
            if (rest) rest++;
        }
        if (rest && *rest)
            add_warning(a, json_sprintf(
                               "CUDA_VISIBLE_DEVICES names the MIG instance %s and then '%s': "
                               "CUDA enumerates one MIG instance per process, so the entries "
                               "after it are not visible",
                               c->dev[i].uuid[0] ? c->dev[i].uuid : "(unknown)", rest));
        break;
    }
    if (c->count > 1)
        add_warning(a, json_sprintf(
                           "%d GPUs are visible (CUDA_VISIBLE_DEVICES=%s%s%s): rpxprof holds a "
                           "primary context on each (hundreds of MiB apiece), synchronises each "
                           "before and after every call and samples each one's memory; on a "
                           "shared node set CUDA_VISIBLE_DEVICES to the GPU the model uses",
                           c->count, c->visible ? "'" : "", c->visible ? c->visible : "unset",
                           c->visible ? "'" : ""));
    return a;
}

const char *rpx_cuda_driver_version(const rpx_cuda *c)
{
    return c && c->driver_version[0] ? c->driver_version : NULL;
}

int rpx_cuda_sync_all(void *ctx, rpx_error *err)
{
    rpx_cuda *c = ctx;
    CUcontext popped;
    CUresult r;
    int i;
    for (i = 0; i < c->count; i++) {
        if ((r = c->api.cuCtxPushCurrent(c->dev[i].ctx)) != CUDA_SUCCESS) goto fail;
        r = c->api.cuCtxSynchronize();
        c->api.cuCtxPopCurrent(&popped);
        if (r != CUDA_SUCCESS) goto fail;
    }
    return 0;
fail : {
    char eb[256];
    return rpx_error_set(err, RPX_EMODEL, "synchronising CUDA device %d failed: %s", i,
                         err_text(c, r, eb, sizeof eb));
}
}

int rpx_cuda_sync_overhead(rpx_cuda *c, long trials, int64_t *median_ns, rpx_error *err)
{
    int64_t *d;
    long i;
    int rc;
    if (trials <= 0) trials = 1001;
    d = malloc((size_t)trials * sizeof *d);
    if (!d) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < trials; i++) {
        int64_t t0 = rpx_clock_now_ns();
        if ((rc = rpx_cuda_sync_all(c, err)) != 0) {
            free(d);
            return rc;
        }
        d[i] = rpx_clock_now_ns() - t0;
    }
    *median_ns = llround(rpx_median_i64(d, (size_t)trials));
    free(d);
    return 0;
}

int rpx_cuda_mem_info(rpx_cuda *c, int ordinal, int64_t *used, int64_t *total, rpx_error *err)
{
    size_t f = 0, t = 0;
    CUcontext popped;
    CUresult r;
    char eb[256];
    if (!c || ordinal < 0 || ordinal >= c->count)
        return rpx_error_set(err, RPX_EINVAL, "CUDA device %d is not visible", ordinal);
    if (!c->api.cuMemGetInfo)
        return rpx_error_set(err, RPX_EUNAVAILABLE, "cuMemGetInfo is not exported by the driver");
    if ((r = c->api.cuCtxPushCurrent(c->dev[ordinal].ctx)) != CUDA_SUCCESS)
        return rpx_error_set(err, RPX_EUNAVAILABLE, "cuCtxPushCurrent: %s",
                             err_text(c, r, eb, sizeof eb));
    r = c->api.cuMemGetInfo(&f, &t);
    c->api.cuCtxPopCurrent(&popped);
    if (r != CUDA_SUCCESS)
        return rpx_error_set(err, RPX_EUNAVAILABLE, "cuMemGetInfo: %s",
                             err_text(c, r, eb, sizeof eb));
    *used = (int64_t)(t - f);
    *total = (int64_t)t;
    return 0;
}

json_t *rpx_cuda_devices_json(const rpx_cuda *c)
{
    json_t *a = json_array();
    int i;
    if (!a || !c) return a;
    for (i = 0; i < c->count; i++) {
        const cuda_device *d = &c->dev[i];
        char cc[16];
        json_t *o = json_object();
        snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
        json_object_set_new(o, "ordinal", json_integer(i));
        json_object_set_new(o, "name", d->name[0] ? json_string(d->name) : json_null());
        json_object_set_new(o, "uuid", d->uuid[0] ? json_string(d->uuid) : json_null());
        json_object_set_new(o, "pci_bus_id",
                            d->pci_bus_id[0] ? json_string(d->pci_bus_id) : json_null());
        json_object_set_new(o, "memory_total_mb",
                            d->total_bytes >= 0 ? json_real((double)d->total_bytes / 1048576.0)
                                                : json_null());
        json_object_set_new(o, "compute_capability",
                            d->cc_major >= 0 && d->cc_minor >= 0 ? json_string(cc) : json_null());
        json_object_set_new(o, "multiprocessor_count",
                            d->sm_count >= 0 ? json_integer(d->sm_count) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}
