/* nvml.c — owns the NVML backend (src/device/nvml.h): loading
 * libnvidia-ml.so.1 with dlopen into a table of function pointers (newest
 * symbol version first, optional symbols NULL-checked), the per-GPU `gpus`
 * objects with a reason for every null, the mapping of CUDA_VISIBLE_DEVICES
 * onto NVML's GPUs, and the conditions of the visible GPUs (other processes,
 * clock-throttle reasons) with their warnings.
 *
 * The NVML types and signatures come from nvml_abi.h (written from the NVML
 * API Reference; no NVML header is needed). Library code: prints nothing,
 * never exits. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "device/nvml_abi.h"
#include "rpxprof/clock.h"
#include "rpxprof/error.h"
#include "device/nvml.h"

#define RPX__NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define RPX__REASON_SIZE 256
/* bytes per entry that nvmlDeviceGetComputeRunningProcesses_v3 of drivers
 * 535.43-535.86 writes (the documented layout is 24) */
#define RPX__PROC_V3_ROOM 32

_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "dlsym results are stored in function pointers");

struct rpx_nvml {
    void *lib;
    int initialised;
    struct {
        rpx_nvmlInit_fn init;
        rpx_nvmlShutdown_fn shutdown;
        rpx_nvmlErrorString_fn error_string;
        rpx_nvmlSystemGetDriverVersion_fn driver_version;
        rpx_nvmlSystemGetCudaDriverVersion_fn cuda_driver_version;
        rpx_nvmlDeviceGetCount_fn count;
        rpx_nvmlDeviceGetHandleByIndex_fn handle;
        rpx_nvmlDeviceGetName_fn name;
        rpx_nvmlDeviceGetUUID_fn uuid;
        rpx_nvmlDeviceGetPciInfo_fn pci;
        rpx_nvmlDeviceGetMemoryInfo_fn memory;
        rpx_nvmlDeviceGetCudaComputeCapability_fn cc;
        rpx_nvmlDeviceGetClockInfo_fn clock;
        rpx_nvmlDeviceGetClockInfo_fn max_clock;
        rpx_nvmlDeviceGetPowerManagementLimit_fn power_limit;
        rpx_nvmlDeviceGetTemperature_fn temperature;
        rpx_nvmlDeviceGetEnableState_fn persistence;
        rpx_nvmlDeviceGetMigMode_fn mig_mode;
        rpx_nvmlDeviceGetEccMode_fn ecc_mode;
        rpx_nvmlDeviceGetUint_fn pcie_gen;
        rpx_nvmlDeviceGetUint_fn pcie_width;
        rpx_nvmlDeviceGetReasons_fn reasons;
        rpx_nvmlDeviceGetProcesses_fn processes;
        rpx_nvmlDeviceGetUint_fn max_mig_count;
        rpx_nvmlDeviceGetMigDeviceHandleByIndex_fn mig_handle;
        rpx_nvmlDeviceGetUint_fn power_usage;
    } fn;
    int proc_version;        /* 2, 1 or 3: which ComputeRunningProcesses we hold */
    int reasons_old;         /* 1: only the older ...ClocksThrottleReasons name */
    unsigned int count;      /* GPUs NVML sees */
    nvmlDevice_t *dev;       /* count handles */
    nvmlReturn_t *dev_rc;    /* nvmlDeviceGetHandleByIndex result per GPU */
    char driver_version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    char driver_reason[RPX__REASON_SIZE]; /* empty when driver_version is valid */
    char cuda_version[32];
    char cuda_reason[RPX__REASON_SIZE];
};

/* ---------------------------------------------------------------- loading */

/* The first of `names` that the library exports (index in *which), or NULL. */
static void *find_symbol(void *lib, const char *const *names, int *which)
{
    int i;
    for (i = 0; names[i]; i++) {
        void *p = dlsym(lib, names[i]);
        if (p) {
            if (which) *which = i;
            return p;
        }
    }
    return NULL;
}

/* Newest version first. memcpy keeps ISO C quiet about object → function
 * pointer conversion, which POSIX guarantees for dlsym. */
#define RPX__SYM(field, which, ...)                                        \
    do {                                                                   \
        static const char *const names_[] = {__VA_ARGS__, NULL};           \
        void *p_ = find_symbol(n->lib, names_, (which));                   \
        memcpy(&n->fn.field, &p_, sizeof p_);                              \
    } while (0)

static void load_symbols(rpx_nvml *n)
{
    int proc = -1;
    RPX__SYM(init, NULL, "nvmlInit_v2");
    RPX__SYM(shutdown, NULL, "nvmlShutdown");
    RPX__SYM(error_string, NULL, "nvmlErrorString");
    RPX__SYM(driver_version, NULL, "nvmlSystemGetDriverVersion");
    RPX__SYM(cuda_driver_version, NULL, "nvmlSystemGetCudaDriverVersion_v2",
             "nvmlSystemGetCudaDriverVersion");
    RPX__SYM(count, NULL, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    RPX__SYM(handle, NULL, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    RPX__SYM(name, NULL, "nvmlDeviceGetName");
    RPX__SYM(uuid, NULL, "nvmlDeviceGetUUID");
    /* _v3 only: _v2 and older fill a different (pre-R390) nvmlPciInfo_t. */
    RPX__SYM(pci, NULL, "nvmlDeviceGetPciInfo_v3");
    RPX__SYM(memory, NULL, "nvmlDeviceGetMemoryInfo");
    RPX__SYM(cc, NULL, "nvmlDeviceGetCudaComputeCapability");
    RPX__SYM(clock, NULL, "nvmlDeviceGetClockInfo");
    RPX__SYM(max_clock, NULL, "nvmlDeviceGetMaxClockInfo");
    RPX__SYM(power_limit, NULL, "nvmlDeviceGetPowerManagementLimit");
    RPX__SYM(temperature, NULL, "nvmlDeviceGetTemperature");
    RPX__SYM(persistence, NULL, "nvmlDeviceGetPersistenceMode");
    RPX__SYM(mig_mode, NULL, "nvmlDeviceGetMigMode");
    RPX__SYM(ecc_mode, NULL, "nvmlDeviceGetEccMode");
    RPX__SYM(pcie_gen, NULL, "nvmlDeviceGetCurrPcieLinkGeneration");
    RPX__SYM(pcie_width, NULL, "nvmlDeviceGetCurrPcieLinkWidth");
    RPX__SYM(reasons, &n->reasons_old, "nvmlDeviceGetCurrentClocksEventReasons",
             "nvmlDeviceGetCurrentClocksThrottleReasons");
    /* _v2 first, not the newest: its 24-byte layout is fixed, while drivers
     * 535.43-535.86 write 32-byte entries through _v3 (past a buffer sized
     * for 24). _v3 only where neither older name exists, with 32 bytes of
     * room per entry. */
    RPX__SYM(processes, &proc, "nvmlDeviceGetComputeRunningProcesses_v2",
             "nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeRunningProcesses_v3");
    n->proc_version = proc < 0 ? 0 : proc == 0 ? 2 : proc == 1 ? 1 : 3;
    RPX__SYM(max_mig_count, NULL, "nvmlDeviceGetMaxMigDeviceCount");
    RPX__SYM(mig_handle, NULL, "nvmlDeviceGetMigDeviceHandleByIndex");
    RPX__SYM(power_usage, NULL, "nvmlDeviceGetPowerUsage");
}

static const char *errstr(const rpx_nvml *n, nvmlReturn_t rc)
{
    const char *s = n->fn.error_string ? n->fn.error_string(rc) : NULL;
    return s && *s ? s : "unknown NVML error";
}

static void unload(rpx_nvml *n)
{
    if (!n) return;
    if (n->initialised && n->fn.shutdown) n->fn.shutdown();
    if (n->lib) dlclose(n->lib);
    free(n->dev);
    free(n->dev_rc);
    free(n);
}

/* Driver and CUDA driver versions are the same for every GPU: read once. */
static void read_versions(rpx_nvml *n)
{
    nvmlReturn_t rc;
    int v = 0;
    if (!n->fn.driver_version) {
        snprintf(n->driver_reason, sizeof n->driver_reason,
                 "nvmlSystemGetDriverVersion not exported by this driver");
    } else if ((rc = n->fn.driver_version(n->driver_version, sizeof n->driver_version)) !=
               NVML_SUCCESS) {
        snprintf(n->driver_reason, sizeof n->driver_reason, "nvmlSystemGetDriverVersion: %s",
                 errstr(n, rc));
    } else {
        n->driver_version[sizeof n->driver_version - 1] = '\0';
    }
    if (!n->fn.cuda_driver_version) {
        snprintf(n->cuda_reason, sizeof n->cuda_reason,
                 "nvmlSystemGetCudaDriverVersion_v2 not exported by this driver");
    } else if ((rc = n->fn.cuda_driver_version(&v)) != NVML_SUCCESS) {
        snprintf(n->cuda_reason, sizeof n->cuda_reason, "nvmlSystemGetCudaDriverVersion_v2: %s",
                 errstr(n, rc));
    } else if (v <= 0) {
        snprintf(n->cuda_reason, sizeof n->cuda_reason,
                 "nvmlSystemGetCudaDriverVersion_v2: no CUDA driver (version %d)", v);
    } else {
        /* 1000 * major + 10 * minor (NVML_CUDA_DRIVER_VERSION_MAJOR/MINOR) */
        snprintf(n->cuda_version, sizeof n->cuda_version, "%d.%d", v / 1000, (v % 1000) / 10);
    }
}

int rpx_nvml_open(rpx_nvml **out, rpx_error *err)
{
    const char *path = getenv("RPX_NVML_LIBRARY");
    rpx_nvml *n;
    nvmlReturn_t rc;
    unsigned int i;

    if (!out) return rpx_error_set(err, RPX_EINVAL, "rpx_nvml_open: out is NULL");
    *out = NULL;
    if (!path || !*path) path = RPX__NVML_DEFAULT_LIBRARY;
    n = calloc(1, sizeof *n);
    if (!n) return rpx_error_set(err, RPX_ENOMEM, "NVML: out of memory");

    dlerror();
    n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        const char *e = dlerror();
        rpx_error_set(err, RPX_EUNAVAILABLE, "%s", e ? e : path);
        unload(n);
        return RPX_EUNAVAILABLE;
    }
    load_symbols(n);
    if (!n->fn.init || !n->fn.count || !n->fn.handle) {
        rpx_error_set(err, RPX_EUNAVAILABLE,
                      "%s: %s not exported; is this the NVIDIA Management Library?", path,
                      !n->fn.init ? "nvmlInit_v2"
                      : !n->fn.count ? "nvmlDeviceGetCount_v2"
                                     : "nvmlDeviceGetHandleByIndex_v2");
        unload(n);
        return RPX_EUNAVAILABLE;
    }
    rc = n->fn.init();
    if (rc != NVML_SUCCESS) {
        rpx_error_set(err, RPX_EUNAVAILABLE, "nvmlInit_v2: %s", errstr(n, rc));
        unload(n);
        return RPX_EUNAVAILABLE;
    }
    n->initialised = 1;
    rc = n->fn.count(&n->count);
    if (rc != NVML_SUCCESS) {
        rpx_error_set(err, RPX_EUNAVAILABLE, "nvmlDeviceGetCount_v2: %s", errstr(n, rc));
        unload(n);
        return RPX_EUNAVAILABLE;
    }
    if (n->count > 0) {
        n->dev = calloc(n->count, sizeof *n->dev);
        n->dev_rc = calloc(n->count, sizeof *n->dev_rc);
        if (!n->dev || !n->dev_rc) {
            unsigned count = n->count;
            unload(n);
            return rpx_error_set(err, RPX_ENOMEM, "NVML: out of memory for %u GPUs", count);
        }
    }
    for (i = 0; i < n->count; i++) n->dev_rc[i] = n->fn.handle(i, &n->dev[i]);
    read_versions(n);
    *out = n;
    return 0;
}

void rpx_nvml_close(rpx_nvml *nvml)
{
    unload(nvml);
}

const char *rpx_nvml_driver_version(rpx_nvml *nvml)
{
    return nvml && !nvml->driver_reason[0] && nvml->driver_version[0] ? nvml->driver_version
                                                                        : NULL;
}

/* ------------------------------------------------------------- visibility */

typedef char rpx__uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];

/* UUIDs of all GPUs ("" where unknown). Caller frees. */
static rpx__uuid *read_uuids(rpx_nvml *n)
{
    rpx__uuid *u = calloc(n->count ? n->count : 1, sizeof *u);
    unsigned int i;
    if (!u) return NULL;
    for (i = 0; i < n->count; i++) {
        if (n->dev_rc[i] != NVML_SUCCESS || !n->fn.uuid ||
            n->fn.uuid(n->dev[i], u[i], sizeof u[i]) != NVML_SUCCESS)
            u[i][0] = '\0';
        u[i][sizeof u[i] - 1] = '\0';
    }
    return u;
}

/* Whether `entry` is a prefix of `uuid` (hex compared without case) and
 * names at least one character after the "GPU-"/"MIG-" tag. */
static int uuid_prefix(const char *entry, size_t len, const char *uuid)
{
    return len > 4 && uuid[0] && strlen(uuid) >= len && strncasecmp(entry, uuid, len) == 0;
}

/* The one GPU whose UUID starts with entry[0..len), or -1 (none or several). */
static int match_gpu(const rpx_nvml *n, const rpx__uuid *u, const char *entry, size_t len)
{
    unsigned int i;
    int found = -1;
    for (i = 0; i < n->count; i++) {
        if (!uuid_prefix(entry, len, u[i])) continue;
        if (found >= 0) return -1; /* ambiguous prefix */
        found = (int)i;
    }
    return found;
}

/* The parent GPU of the one MIG device whose UUID starts with `entry`. */
static int match_mig(rpx_nvml *n, const char *entry)
{
    size_t len = strlen(entry);
    unsigned int i, j, max;
    int found = -1;
    if (!n->fn.max_mig_count || !n->fn.mig_handle || !n->fn.uuid) return -1;
    for (i = 0; i < n->count; i++) {
        if (n->dev_rc[i] != NVML_SUCCESS) continue;
        if (n->fn.max_mig_count(n->dev[i], &max) != NVML_SUCCESS) continue;
        for (j = 0; j < max; j++) {
            nvmlDevice_t mig;
            rpx__uuid uuid;
            if (n->fn.mig_handle(n->dev[i], j, &mig) != NVML_SUCCESS) continue;
            if (n->fn.uuid(mig, uuid, sizeof uuid) != NVML_SUCCESS) continue;
            uuid[sizeof uuid - 1] = '\0';
            if (!uuid_prefix(entry, len, uuid)) continue;
            if (found >= 0) return -1;
            found = (int)i;
        }
    }
    return found;
}

/* One CUDA_VISIBLE_DEVICES entry → NVML index, or -1 when CUDA would not
 * accept it. *mig is set for MIG entries (several may share a parent). */
static int resolve_entry(rpx_nvml *n, const rpx__uuid *u, const char *e, int *mig)
{
    *mig = 0;
    if (!*e) return -1;
    if (strspn(e, "0123456789") == strlen(e)) {
        unsigned long v;
        char *end;
        errno = 0;
        v = strtoul(e, &end, 10);
        if (errno || *end || v >= n->count) return -1;
        return (int)v;
    }
    if (strncmp(e, "GPU-", 4) == 0) return match_gpu(n, u, e, strlen(e));
    if (strncmp(e, "MIG-GPU-", 8) == 0) {
        /* Legacy MIG form (before R470): MIG-GPU-<gpu uuid>/<gi>/<ci>. */
        const char *slash = strchr(e, '/');
        *mig = 1;
        return match_gpu(n, u, e + 4, slash ? (size_t)(slash - (e + 4)) : strlen(e + 4));
    }
    if (strncmp(e, "MIG-", 4) == 0) {
        *mig = 1;
        return match_mig(n, e);
    }
    return -1;
}

/* ord[i] = CUDA ordinal of NVML GPU i, or -1 when CUDA does not see it.
 *
 * CUDA_VISIBLE_DEVICES unset: every GPU, ordinal = NVML index. Set: a comma-
 * separated list of indices, GPU UUIDs (a unique prefix is enough) and MIG
 * device ids; the first invalid entry ends the list, as in CUDA, so "" hides
 * every GPU and "1,bogus,0" shows only GPU 1. A GPU named twice is treated
 * as invalid (CUDA never exposes one device twice). A MIG entry ends the list
 * too: CUDA enumerates a single MIG instance per process; `cut` receives the
 * entries after it ("" when nothing was cut).
 *
 * Assumption: NVML numbers GPUs by PCI bus id; CUDA does the same only with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID (its default is FASTEST_FIRST). Indices are
 * therefore mapped as if CUDA_DEVICE_ORDER=PCI_BUS_ID; rpx_nvml_gpus warns
 * when that is not set and more than one GPU exists. */
static void map_visible(rpx_nvml *n, const rpx__uuid *u, int *ord, char *cut, size_t cut_size)
{
    const char *env = getenv("CUDA_VISIBLE_DEVICES");
    char *copy, *p;
    unsigned int i;
    int next = 0;

    if (cut && cut_size) cut[0] = '\0';
    for (i = 0; i < n->count; i++) ord[i] = env ? -1 : (int)i;
    if (!env || !(copy = strdup(env))) return;
    p = copy;
    for (;;) {
        char *comma = strchr(p, ',');
        char *e = p, *end;
        int mig, g;
        if (comma) *comma = '\0';
        while (*e == ' ' || *e == '\t') e++;
        end = e + strlen(e);
        while (end > e && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n')) *--end = '\0';
        g = resolve_entry(n, u, e, &mig);
        if (g < 0) break;
        if (ord[g] >= 0) break;
        ord[g] = next;
        next++;
        if (!comma) break;
        p = comma + 1;
        if (mig) {
            /* CUDA enumerates one MIG instance per process: the rest is unseen */
            if (cut && cut_size) snprintf(cut, cut_size, "%s", env + (p - copy));
            break;
        }
    }
    free(copy);
}

/* ------------------------------------------------------------- per field */

typedef struct {
    rpx_nvml *n;
    unsigned int index;
    nvmlDevice_t h;
    json_t *why; /* the GPU's `unavailable` object */
} gpu_ctx;

static void put(json_t *obj, const char *key, json_t *v)
{
    json_object_set_new(obj, key, v ? v : json_null());
}

static void because(gpu_ctx *c, const char *field, json_t *reason)
{
    if (reason) json_object_set_new(c->why, field, reason);
}

/* Whether `fn` can be called for this GPU; if not, the reason is recorded. */
static int can_call(gpu_ctx *c, const char *field, int exported, const char *fn)
{
    nvmlReturn_t hrc = c->n->dev_rc[c->index];
    if (hrc != NVML_SUCCESS) {
        because(c, field, json_sprintf("nvmlDeviceGetHandleByIndex_v2: %s", errstr(c->n, hrc)));
        return 0;
    }
    if (!exported) {
        because(c, field, json_sprintf("%s not exported by this driver", fn));
        return 0;
    }
    return 1;
}

/* 1 when the call succeeded; otherwise 0 after recording why `fn` failed. */
static int ok(gpu_ctx *c, const char *field, const char *fn, nvmlReturn_t rc)
{
    if (rc == NVML_SUCCESS) return 1;
    because(c, field, json_sprintf("%s: %s", fn, errstr(c->n, rc)));
    return 0;
}

static json_t *text(gpu_ctx *c, const char *field, const char *fn, const char *s)
{
    json_t *v = json_string(s);
    if (!v) because(c, field, json_sprintf("%s: the text is not UTF-8", fn));
    return v;
}

static json_t *field_name(gpu_ctx *c)
{
    char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
    if (!can_call(c, "name", c->n->fn.name != NULL, "nvmlDeviceGetName")) return NULL;
    if (!ok(c, "name", "nvmlDeviceGetName", c->n->fn.name(c->h, buf, sizeof buf))) return NULL;
    buf[sizeof buf - 1] = '\0';
    return text(c, "name", "nvmlDeviceGetName", buf);
}

static json_t *field_uuid(gpu_ctx *c, const char *uuid)
{
    if (!can_call(c, "uuid", c->n->fn.uuid != NULL, "nvmlDeviceGetUUID")) return NULL;
    if (uuid[0]) return text(c, "uuid", "nvmlDeviceGetUUID", uuid);
    /* read_uuids lost the code: ask again for the reason */
    {
        rpx__uuid again;
        nvmlReturn_t rc = c->n->fn.uuid(c->h, again, sizeof again);
        if (!ok(c, "uuid", "nvmlDeviceGetUUID", rc)) return NULL;
        again[sizeof again - 1] = '\0';
        return text(c, "uuid", "nvmlDeviceGetUUID", again);
    }
}

static json_t *field_pci(gpu_ctx *c)
{
    nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof pci);
    if (!can_call(c, "pci_bus_id", c->n->fn.pci != NULL, "nvmlDeviceGetPciInfo_v3")) return NULL;
    if (!ok(c, "pci_bus_id", "nvmlDeviceGetPciInfo_v3", c->n->fn.pci(c->h, &pci))) return NULL;
    pci.busId[sizeof pci.busId - 1] = '\0';
    return text(c, "pci_bus_id", "nvmlDeviceGetPciInfo_v3", pci.busId);
}

static json_t *field_memory(gpu_ctx *c)
{
    nvmlMemory_t m;
    memset(&m, 0, sizeof m);
    if (!can_call(c, "memory_total_mb", c->n->fn.memory != NULL, "nvmlDeviceGetMemoryInfo"))
        return NULL;
    if (!ok(c, "memory_total_mb", "nvmlDeviceGetMemoryInfo", c->n->fn.memory(c->h, &m)))
        return NULL;
    return json_real((double)m.total / 1048576.0);
}

static json_t *field_cc(gpu_ctx *c)
{
    int major = 0, minor = 0;
    if (!can_call(c, "compute_capability", c->n->fn.cc != NULL,
                  "nvmlDeviceGetCudaComputeCapability"))
        return NULL;
    if (!ok(c, "compute_capability", "nvmlDeviceGetCudaComputeCapability",
            c->n->fn.cc(c->h, &major, &minor)))
        return NULL;
    return json_sprintf("%d.%d", major, minor);
}

static json_t *field_clock(gpu_ctx *c, const char *field, int max, nvmlClockType_t type)
{
    rpx_nvmlDeviceGetClockInfo_fn f = max ? c->n->fn.max_clock : c->n->fn.clock;
    const char *fn = max ? "nvmlDeviceGetMaxClockInfo" : "nvmlDeviceGetClockInfo";
    unsigned int mhz = 0;
    if (!can_call(c, field, f != NULL, fn)) return NULL;
    if (!ok(c, field, fn, f(c->h, type, &mhz))) return NULL;
    return json_integer((json_int_t)mhz);
}

static json_t *field_power_limit(gpu_ctx *c)
{
    unsigned int mw = 0;
    const char *fn = "nvmlDeviceGetPowerManagementLimit";
    if (!can_call(c, "power_limit_w", c->n->fn.power_limit != NULL, fn)) return NULL;
    if (!ok(c, "power_limit_w", fn, c->n->fn.power_limit(c->h, &mw))) return NULL;
    return json_real((double)mw / 1000.0); /* milliwatts */
}

static json_t *field_temperature(gpu_ctx *c)
{
    unsigned int t = 0;
    const char *fn = "nvmlDeviceGetTemperature";
    if (!can_call(c, "temperature_c", c->n->fn.temperature != NULL, fn)) return NULL;
    if (!ok(c, "temperature_c", fn, c->n->fn.temperature(c->h, NVML_TEMPERATURE_GPU, &t)))
        return NULL;
    return json_integer((json_int_t)t);
}

static json_t *field_persistence(gpu_ctx *c)
{
    nvmlEnableState_t s = NVML_FEATURE_DISABLED;
    const char *fn = "nvmlDeviceGetPersistenceMode";
    if (!can_call(c, "persistence_mode", c->n->fn.persistence != NULL, fn)) return NULL;
    if (!ok(c, "persistence_mode", fn, c->n->fn.persistence(c->h, &s))) return NULL;
    return json_boolean(s == NVML_FEATURE_ENABLED);
}

static json_t *field_mig(gpu_ctx *c)
{
    unsigned int cur = 0, pending = 0;
    const char *fn = "nvmlDeviceGetMigMode";
    if (!can_call(c, "mig_mode", c->n->fn.mig_mode != NULL, fn)) return NULL;
    if (!ok(c, "mig_mode", fn, c->n->fn.mig_mode(c->h, &cur, &pending))) return NULL;
    return json_boolean(cur == NVML_DEVICE_MIG_ENABLE);
}

static json_t *field_ecc(gpu_ctx *c)
{
    nvmlEnableState_t cur = NVML_FEATURE_DISABLED, pending = NVML_FEATURE_DISABLED;
    const char *fn = "nvmlDeviceGetEccMode";
    if (!can_call(c, "ecc_mode", c->n->fn.ecc_mode != NULL, fn)) return NULL;
    if (!ok(c, "ecc_mode", fn, c->n->fn.ecc_mode(c->h, &cur, &pending))) return NULL;
    return json_boolean(cur == NVML_FEATURE_ENABLED);
}

static json_t *field_uint(gpu_ctx *c, const char *field, rpx_nvmlDeviceGetUint_fn f,
                          const char *fn)
{
    unsigned int v = 0;
    if (!can_call(c, field, f != NULL, fn)) return NULL;
    if (!ok(c, field, fn, f(c->h, &v))) return NULL;
    return json_integer((json_int_t)v);
}

/* "GPU 0 (NVIDIA H100 80GB HBM3)" for warnings. */
static void gpu_label(char *buf, size_t size, unsigned int index, const char *name)
{
    if (name)
        snprintf(buf, size, "GPU %u (%s)", index, name);
    else
        snprintf(buf, size, "GPU %u", index);
}

static void warn(json_t *warnings, json_t *sentence)
{
    if (!sentence) return;
    if (!warnings || json_array_append_new(warnings, sentence) != 0) json_decref(sentence);
}

static json_t *gpu_object(rpx_nvml *n, unsigned int i, const char *uuid, int ordinal)
{
    json_t *o = json_object(), *why = json_object(), *clocks = json_object(),
           *pcie = json_object();
    gpu_ctx c;
    if (!o || !why || !clocks || !pcie) {
        json_decref(o);
        json_decref(why);
        json_decref(clocks);
        json_decref(pcie);
        return NULL;
    }
    c.n = n;
    c.index = i;
    c.h = n->dev_rc[i] == NVML_SUCCESS ? n->dev[i] : NULL;
    c.why = why;

    put(o, "index", json_integer((json_int_t)i));
    put(o, "name", field_name(&c));
    put(o, "uuid", field_uuid(&c, uuid));
    put(o, "pci_bus_id", field_pci(&c));
    put(o, "memory_total_mb", field_memory(&c));
    if (n->driver_reason[0]) {
        put(o, "driver_version", NULL);
        because(&c, "driver_version", json_string(n->driver_reason));
    } else {
        put(o, "driver_version", json_string(n->driver_version));
    }
    if (n->cuda_reason[0]) {
        put(o, "cuda_driver_version", NULL);
        because(&c, "cuda_driver_version", json_string(n->cuda_reason));
    } else {
        put(o, "cuda_driver_version", json_string(n->cuda_version));
    }
    put(o, "compute_capability", field_cc(&c));
    put(o, "multiprocessor_count", NULL);
    because(&c, "multiprocessor_count", json_string("not reported by NVML"));
    put(clocks, "sm", field_clock(&c, "clocks_mhz.sm", 0, NVML_CLOCK_SM));
    put(clocks, "sm_max", field_clock(&c, "clocks_mhz.sm_max", 1, NVML_CLOCK_SM));
    put(clocks, "memory", field_clock(&c, "clocks_mhz.memory", 0, NVML_CLOCK_MEM));
    put(clocks, "memory_max", field_clock(&c, "clocks_mhz.memory_max", 1, NVML_CLOCK_MEM));
    put(o, "clocks_mhz", clocks);
    put(o, "power_limit_w", field_power_limit(&c));
    put(o, "temperature_c", field_temperature(&c));
    put(o, "persistence_mode", field_persistence(&c));
    put(o, "mig_mode", field_mig(&c));
    put(o, "ecc_mode", field_ecc(&c));
    put(pcie, "generation", field_uint(&c, "pcie.generation", n->fn.pcie_gen,
                                       "nvmlDeviceGetCurrPcieLinkGeneration"));
    put(pcie, "width", field_uint(&c, "pcie.width", n->fn.pcie_width,
                                  "nvmlDeviceGetCurrPcieLinkWidth"));
    put(o, "pcie", pcie);
    put(o, "visible", json_boolean(ordinal >= 0));
    if (ordinal >= 0) {
        put(o, "visible_ordinal", json_integer(ordinal));
    } else {
        put(o, "visible_ordinal", NULL);
        because(&c, "visible_ordinal", json_string("not visible to CUDA (CUDA_VISIBLE_DEVICES)"));
    }
    put(o, "unavailable", why);
    return o;
}

json_t *rpx_nvml_gpus(rpx_nvml *nvml, json_t *warnings)
{
    json_t *gpus = json_array();
    rpx__uuid *u;
    int *ord;
    unsigned int i;
    const char *order = getenv("CUDA_DEVICE_ORDER");
    char cut[256];

    if (!gpus || !nvml) return gpus;
    u = read_uuids(nvml);
    ord = calloc(nvml->count ? nvml->count : 1, sizeof *ord);
    if (!u || !ord) {
        free(u);
        free(ord);
        return gpus;
    }
    map_visible(nvml, u, ord, cut, sizeof cut);
    if (cut[0])
        warn(warnings, json_sprintf("CUDA_VISIBLE_DEVICES names a MIG instance and then '%s': "
                                    "CUDA enumerates one MIG instance per process, so only the "
                                    "first is visible and the entries after it are not",
                                    cut));
    for (i = 0; i < nvml->count; i++) {
        json_t *g = gpu_object(nvml, i, u[i], ord[i]);
        if (!g) continue;
        if (ord[i] >= 0 && json_is_false(json_object_get(g, "persistence_mode"))) {
            char label[160];
            gpu_label(label, sizeof label, i, json_string_value(json_object_get(g, "name")));
            warn(warnings, json_sprintf("%s: persistence mode is off, so the driver may tear the "
                                        "GPU down between runs and the first CUDA call pays for "
                                        "bringing it back up; enable it with "
                                        "'nvidia-smi -pm 1' (as root)",
                                        label));
        }
        if (json_array_append_new(gpus, g) != 0) break;
    }
    if (nvml->count > 1 && (!order || strcmp(order, "PCI_BUS_ID") != 0))
        warn(warnings, json_sprintf("CUDA_DEVICE_ORDER is %s%s%s, not PCI_BUS_ID, and %u GPUs are "
                                    "present: CUDA may number them fastest first while NVML "
                                    "numbers them by PCI bus id, so 'visible' and "
                                    "'visible_ordinal' assume PCI_BUS_ID order; set "
                                    "CUDA_DEVICE_ORDER=PCI_BUS_ID to make them exact",
                                    order ? "'" : "", order ? order : "unset",
                                    order ? "'" : "", nvml->count));
    free(u);
    free(ord);
    return gpus;
}

/* ------------------------------------------------------------- conditions */

static const struct {
    unsigned long long bit;
    const char *name;
    int benign; /* no warning: nothing to run, or a clock the user chose */
} reason_names[] = {
    {nvmlClocksThrottleReasonGpuIdle, "gpu_idle", 1},
    {nvmlClocksThrottleReasonApplicationsClocksSetting, "applications_clocks_setting", 1},
    {nvmlClocksThrottleReasonSwPowerCap, "sw_power_cap", 0},
    {nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown", 0},
    {nvmlClocksThrottleReasonSyncBoost, "sync_boost", 0},
    {nvmlClocksThrottleReasonSwThermalSlowdown, "sw_thermal_slowdown", 0},
    {nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown", 0},
    {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown", 0},
    {nvmlClocksThrottleReasonDisplayClockSetting, "display_clock_setting", 0},
};

/* Throttle reasons as names (unknown bits as "unknown_0x..."); the names
 * that call for a warning are joined into `held` ("" if none). */
static json_t *throttle_reasons(gpu_ctx *c, char *held, size_t held_size)
{
    unsigned long long mask = 0, known = 0;
    const char *fn = "nvmlDeviceGetCurrentClocksEventReasons";
    json_t *a;
    size_t k;
    int bit;
    held[0] = '\0';
    if (!can_call(c, "throttle_reasons", c->n->fn.reasons != NULL, fn)) return NULL;
    if (c->n->reasons_old) fn = "nvmlDeviceGetCurrentClocksThrottleReasons";
    if (!ok(c, "throttle_reasons", fn, c->n->fn.reasons(c->h, &mask))) return NULL;
    if (!(a = json_array())) return NULL;
    for (k = 0; k < sizeof reason_names / sizeof reason_names[0]; k++) {
        known |= reason_names[k].bit;
        if (!(mask & reason_names[k].bit)) continue;
        json_array_append_new(a, json_string(reason_names[k].name));
        if (!reason_names[k].benign) {
            size_t len = strlen(held);
            snprintf(held + len, held_size - len, "%s%s", len ? ", " : "", reason_names[k].name);
        }
    }
    for (bit = 0; bit < 64; bit++) {
        unsigned long long b = 1ULL << bit;
        char name[40];
        if (!(mask & b) || (known & b)) continue;
        snprintf(name, sizeof name, "unknown_0x%llx", b);
        json_array_append_new(a, json_string(name));
        {
            size_t len = strlen(held);
            snprintf(held + len, held_size - len, "%s%s", len ? ", " : "", name);
        }
    }
    return a;
}

/* Compute processes on the GPU other than this one: [{pid, used_memory_mb}].
 * `summary` gets "pid 4242: 256 MiB, pid 4243: n/a". */
static json_t *other_processes(gpu_ctx *c, char *summary, size_t summary_size, size_t *others)
{
    const char *fn = "nvmlDeviceGetComputeRunningProcesses_v2";
    /* stride of the entries the driver writes; room: what it may write */
    size_t elem = c->n->proc_version == 1 ? sizeof(nvmlProcessInfo_v1_t) : sizeof(nvmlProcessInfo_t);
    size_t room = c->n->proc_version == 3 ? RPX__PROC_V3_ROOM : elem;
    unsigned int cap = 16, cnt = 0, k;
    unsigned char *buf = NULL;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    unsigned int self = (unsigned int)getpid();
    json_t *a;
    int tries;

    summary[0] = '\0';
    *others = 0;
    if (!can_call(c, "other_processes", c->n->fn.processes != NULL, fn)) return NULL;
    if (c->n->proc_version == 3) fn = "nvmlDeviceGetComputeRunningProcesses_v3";
    if (c->n->proc_version == 1) fn = "nvmlDeviceGetComputeRunningProcesses";
    /* The list can grow between calls: retry a few times with more room. */
    for (tries = 0; tries < 5 && rc == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
        unsigned char *nb = realloc(buf, (size_t)cap * room);
        if (!nb) {
            free(buf);
            because(c, "other_processes", json_string("out of memory"));
            return NULL;
        }
        buf = nb;
        memset(buf, 0, (size_t)cap * room);
        cnt = cap;
        rc = c->n->fn.processes(c->h, &cnt, buf);
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE) cap = (cnt > cap ? cnt : cap * 2) + 8;
    }
    if (!ok(c, "other_processes", fn, rc) || !(a = json_array())) {
        free(buf);
        return NULL;
    }
    if (cnt > cap) cnt = cap;
    for (k = 0; k < cnt; k++) {
        unsigned int pid;
        unsigned long long used;
        json_t *p;
        if (c->n->proc_version == 1) {
            nvmlProcessInfo_v1_t info;
            memcpy(&info, buf + (size_t)k * elem, sizeof info);
            pid = info.pid;
            used = info.usedGpuMemory;
        } else {
            nvmlProcessInfo_t info;
            memcpy(&info, buf + (size_t)k * elem, sizeof info);
            pid = info.pid;
            used = info.usedGpuMemory;
        }
        if (pid == self) continue;
        p = json_pack("{s:I, s:o}", "pid", (json_int_t)pid, "used_memory_mb",
                      used == NVML_VALUE_NOT_AVAILABLE ? json_null()
                                                       : json_real((double)used / 1048576.0));
        if (p) json_array_append_new(a, p);
        {
            size_t len = strlen(summary);
            if (used == NVML_VALUE_NOT_AVAILABLE)
                snprintf(summary + len, summary_size - len, "%spid %u: memory n/a",
                         len ? ", " : "", pid);
            else
                snprintf(summary + len, summary_size - len, "%spid %u: %.0f MiB",
                         len ? ", " : "", pid, (double)used / 1048576.0);
        }
        (*others)++;
    }
    free(buf);
    return a;
}

json_t *rpx_nvml_conditions(rpx_nvml *nvml, json_t *warnings)
{
    json_t *out = json_array();
    rpx__uuid *u;
    int *ord;
    unsigned int i;

    if (!out || !nvml) return out;
    u = read_uuids(nvml);
    ord = calloc(nvml->count ? nvml->count : 1, sizeof *ord);
    if (!u || !ord) {
        free(u);
        free(ord);
        return out;
    }
    map_visible(nvml, u, ord, NULL, 0);
    for (i = 0; i < nvml->count; i++) {
        json_t *o, *why, *name, *procs, *reasons;
        char label[160], summary[1024], held[512];
        size_t others = 0;
        gpu_ctx c;
        if (ord[i] < 0) continue;
        o = json_object();
        why = json_object();
        if (!o || !why) {
            json_decref(o);
            json_decref(why);
            break;
        }
        c.n = nvml;
        c.index = i;
        c.h = nvml->dev_rc[i] == NVML_SUCCESS ? nvml->dev[i] : NULL;
        c.why = why;
        put(o, "index", json_integer((json_int_t)i));
        put(o, "visible_ordinal", json_integer(ord[i]));
        name = field_name(&c);
        gpu_label(label, sizeof label, i, json_string_value(name));
        put(o, "name", name);
        put(o, "uuid", field_uuid(&c, u[i]));
        procs = other_processes(&c, summary, sizeof summary, &others);
        put(o, "other_processes", procs);
        reasons = throttle_reasons(&c, held, sizeof held);
        put(o, "throttle_reasons", reasons);
        put(o, "unavailable", why);
        if (others > 0)
            warn(warnings, json_sprintf("%s is also used by %zu other process%s (%s); they "
                                        "compete for the GPU and disturb the timings",
                                        label, others, others == 1 ? "" : "es", summary));
        if (held[0])
            warn(warnings, json_sprintf("%s: clocks are held back by %s; the timings may not "
                                        "show what the GPU can do",
                                        label, held));
        if (json_array_append_new(out, o) != 0) break;
    }
    free(u);
    free(ord);
    return out;
}

/* ------------------------------------------------------------ watching */

#define RPX__WATCH_MAX_GPUS 64

typedef struct watch_gpu {
    unsigned int index;
    int ordinal;
    long samples;
    /* per quantity: samples read, the last failure */
    long n_reasons, n_clock, n_power, n_temp;
    nvmlReturn_t rc_reasons, rc_clock, rc_power, rc_temp;
    unsigned long long reasons_seen;
    long reason_samples[64]; /* samples in which bit k was set */
    unsigned int sm_min, sm_max, power_max_mw, temp_max;
} watch_gpu;

struct rpx_nvml_watch {
    rpx_nvml *n;
    int64_t interval_ns, last_ns;
    unsigned int count;
    watch_gpu g[RPX__WATCH_MAX_GPUS];
    rpx_nvml_reading *readings;   /* grown as read, at most RPX_NVML_WATCH_READINGS */
    size_t n_readings, cap_readings;
    long dropped_readings;
};

/* Keep one reading (outside any timed span: the parent reads NVML). */
static void keep_reading(rpx_nvml_watch *w, const rpx_nvml_reading *r)
{
    if (w->n_readings == w->cap_readings) {
        size_t cap = w->cap_readings ? 2 * w->cap_readings : 256;
        rpx_nvml_reading *m;
        if (cap > RPX_NVML_WATCH_READINGS) cap = RPX_NVML_WATCH_READINGS;
        if (w->n_readings >= cap || !(m = realloc(w->readings, cap * sizeof *m))) {
            w->dropped_readings++;
            return;
        }
        w->readings = m;
        w->cap_readings = cap;
    }
    w->readings[w->n_readings++] = *r;
}

size_t rpx_nvml_watch_readings(const rpx_nvml_watch *w, const rpx_nvml_reading **readings,
                               long *dropped)
{
    if (readings) *readings = w ? w->readings : NULL;
    if (dropped) *dropped = w ? w->dropped_readings : 0;
    return w ? w->n_readings : 0;
}

rpx_nvml_watch *rpx_nvml_watch_create(rpx_nvml *n, double interval_s)
{
    rpx_nvml_watch *w;
    rpx__uuid *u;
    int *ord;
    unsigned int i;
    if (!n) return NULL;
    w = calloc(1, sizeof *w);
    u = read_uuids(n);
    ord = calloc(n->count ? n->count : 1, sizeof *ord);
    if (!w || !u || !ord) {
        free(w);
        free(u);
        free(ord);
        return NULL;
    }
    map_visible(n, u, ord, NULL, 0);
    w->n = n;
    w->interval_ns = (int64_t)(interval_s * 1e9);
    for (i = 0; i < n->count && w->count < RPX__WATCH_MAX_GPUS; i++) {
        watch_gpu *g;
        if (ord[i] < 0) continue;
        g = &w->g[w->count++];
        g->index = i;
        g->ordinal = ord[i];
        g->sm_min = ~0u;
    }
    free(u);
    free(ord);
    return w;
}

void rpx_nvml_watch_free(rpx_nvml_watch *w)
{
    if (w) free(w->readings);
    free(w);
}

int rpx_nvml_watch_sample(rpx_nvml_watch *w)
{
    rpx_nvml *n;
    int64_t now;
    unsigned int k;
    if (!w) return 0;
    now = rpx_clock_now_ns();
    if (w->last_ns && now - w->last_ns < w->interval_ns) return 0;
    w->last_ns = now;
    n = w->n;
    for (k = 0; k < w->count; k++) {
        watch_gpu *g = &w->g[k];
        nvmlDevice_t h;
        unsigned long long mask = 0;
        unsigned int v = 0;
        nvmlReturn_t rc;
        int bit;
        rpx_nvml_reading rd = {now, g->index, g->ordinal, (double)NAN, (double)NAN, (double)NAN};
        if (n->dev_rc[g->index] != NVML_SUCCESS) continue;
        h = n->dev[g->index];
        g->samples++;
        if (n->fn.reasons) {
            if ((rc = n->fn.reasons(h, &mask)) == NVML_SUCCESS) {
                g->n_reasons++;
                g->reasons_seen |= mask;
                for (bit = 0; bit < 64; bit++)
                    if (mask & (1ULL << bit)) g->reason_samples[bit]++;
            } else {
                g->rc_reasons = rc;
            }
        }
        if (n->fn.clock) {
            if ((rc = n->fn.clock(h, NVML_CLOCK_SM, &v)) == NVML_SUCCESS) {
                g->n_clock++;
                rd.sm_clock_mhz = v;
                if (v < g->sm_min) g->sm_min = v;
                if (v > g->sm_max) g->sm_max = v;
            } else {
                g->rc_clock = rc;
            }
        }
        if (n->fn.power_usage) {
            if ((rc = n->fn.power_usage(h, &v)) == NVML_SUCCESS) {
                g->n_power++;
                rd.power_w = v / 1000.0;
                if (v > g->power_max_mw) g->power_max_mw = v;
            } else {
                g->rc_power = rc;
            }
        }
        if (n->fn.temperature) {
            if ((rc = n->fn.temperature(h, NVML_TEMPERATURE_GPU, &v)) == NVML_SUCCESS) {
                g->n_temp++;
                rd.temperature_c = v;
                if (v > g->temp_max) g->temp_max = v;
            } else {
                g->rc_temp = rc;
            }
        }
        keep_reading(w, &rd);
    }
    return 1;
}

/* null with its reason in `why` when no sample of the quantity was read */
static json_t *watched(const rpx_nvml_watch *w, const watch_gpu *g, json_t *why,
                       const char *field, long n_read, nvmlReturn_t rc, int exported,
                       const char *fn, json_t *value)
{
    if (n_read > 0) return value;
    json_decref(value);
    if (g->samples == 0)
        json_object_set_new(why, field, json_string("no sample was taken during the timed "
                                                    "calls (they ended before the first)"));
    else if (!exported)
        json_object_set_new(why, field, json_sprintf("%s not exported by this driver", fn));
    else
        json_object_set_new(why, field, json_sprintf("%s: %s", fn, errstr(w->n, rc)));
    return json_null();
}

json_t *rpx_nvml_watch_json(const rpx_nvml_watch *w, json_t *warnings)
{
    json_t *out = json_array();
    unsigned int k;
    if (!out || !w) return out;
    for (k = 0; k < w->count; k++) {
        const watch_gpu *g = &w->g[k];
        const rpx_nvml *n = w->n;
        json_t *o = json_object(), *why = json_object(), *reasons = json_array(), *clk;
        char held[512] = "", label[160];
        nvmlDevice_t h = n->dev_rc[g->index] == NVML_SUCCESS ? n->dev[g->index] : NULL;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
        size_t r;
        int bit;
        if (!o || !why || !reasons) {
            json_decref(o);
            json_decref(why);
            json_decref(reasons);
            break;
        }
        if (h && n->fn.name && n->fn.name(h, name, sizeof name) == NVML_SUCCESS) {
            name[sizeof name - 1] = '\0';
            gpu_label(label, sizeof label, g->index, name);
        } else {
            gpu_label(label, sizeof label, g->index, NULL);
        }
        for (bit = 0; bit < 64; bit++) {
            unsigned long long b = 1ULL << bit;
            const char *nm = NULL;
            int benign = 0;
            char unknown[40];
            if (!(g->reasons_seen & b)) continue;
            for (r = 0; r < sizeof reason_names / sizeof reason_names[0]; r++)
                if (reason_names[r].bit == b) {
                    nm = reason_names[r].name;
                    benign = reason_names[r].benign;
                }
            if (!nm) {
                snprintf(unknown, sizeof unknown, "unknown_0x%llx", b);
                nm = unknown;
            }
            json_array_append_new(reasons, json_string(nm));
            if (!benign) {
                size_t len = strlen(held);
                snprintf(held + len, sizeof held - len, "%s%s (%ld of %ld samples)",
                         len ? ", " : "", nm, g->reason_samples[bit], g->n_reasons);
            }
        }
        json_object_set_new(o, "index", json_integer((json_int_t)g->index));
        json_object_set_new(o, "visible_ordinal", json_integer(g->ordinal));
        json_object_set_new(o, "samples", json_integer((json_int_t)g->samples));
        json_object_set_new(o, "throttle_reasons_seen",
                            watched(w, g, why, "throttle_reasons_seen", g->n_reasons,
                                    g->rc_reasons, n->fn.reasons != NULL,
                                    n->reasons_old ? "nvmlDeviceGetCurrentClocksThrottleReasons"
                                                   : "nvmlDeviceGetCurrentClocksEventReasons",
                                    reasons));
        clk = json_pack("{s:I, s:I}", "min", (json_int_t)g->sm_min, "max", (json_int_t)g->sm_max);
        json_object_set_new(o, "sm_clock_mhz",
                            watched(w, g, why, "sm_clock_mhz", g->n_clock, g->rc_clock,
                                    n->fn.clock != NULL, "nvmlDeviceGetClockInfo", clk));
        json_object_set_new(o, "power_w_max",
                            watched(w, g, why, "power_w_max", g->n_power, g->rc_power,
                                    n->fn.power_usage != NULL, "nvmlDeviceGetPowerUsage",
                                    json_real((double)g->power_max_mw / 1000.0)));
        json_object_set_new(o, "temperature_c_max",
                            watched(w, g, why, "temperature_c_max", g->n_temp, g->rc_temp,
                                    n->fn.temperature != NULL, "nvmlDeviceGetTemperature",
                                    json_integer((json_int_t)g->temp_max)));
        json_object_set_new(o, "unavailable", why);
        if (held[0])
            warn(warnings, json_sprintf("%s: during the timed calls its clocks were held back by "
                                        "%s; SM clock %u-%u MHz: the timings may not show what "
                                        "the GPU can do",
                                        label, held, g->n_clock ? g->sm_min : 0,
                                        g->n_clock ? g->sm_max : 0));
        json_array_append_new(out, o);
    }
    return out;
}
