/* A fake CUDA driver for tests: the subset of the driver API rpxprof and the
 * test models call, with devices made up from the environment.
 *
 *   RPX_STUB_CUDA_COUNT=n        physical devices (default 2)
 *   CUDA_VISIBLE_DEVICES         honoured like the driver: indices or UUIDs,
 *                                comma-separated; an invalid entry ends the list
 *   RPX_STUB_CUDA_INIT_FAIL=n    cuInit returns n
 *   cuInit returns CUDA_ERROR_NO_DEVICE (100) when no device is visible
 *   (CUDA_VISIBLE_DEVICES="", or only invalid entries), as the real driver
 *   does; cuDeviceGetCount then answers CUDA_ERROR_NOT_INITIALIZED
 *   RPX_STUB_NVML_BUSY_FILE=F    created by cuInit, removed when the last primary
 *                                context is released: the stub NVML reads the GPUs
 *                                as busy meanwhile
 *   RPX_STUB_CUDA_LOG=FILE       appends events, one per line: "sync<ordinal>"
 *                                for cuCtxSynchronize and, from the main thread
 *                                only, "mem<ordinal>" for cuMemGetInfo
 *
 *   RPX_STUB_CUDA_MIG=1          physical device 0 is split into two MIG instances,
 *                                named "MIG-<uuid>" in CUDA_VISIBLE_DEVICES (a unique
 *                                prefix is enough). As in CUDA, a process sees one MIG
 *                                instance: the first MIG entry is enumerated and ends
 *                                the list. cuDeviceGetUuid_v2 gives the instance's
 *                                UUID, cuDeviceGetUuid (v1) the parent GPU's.
 *
 * Entry points as a CUDA 12.9/13 driver exports them: besides the names,
 * cuGetProcAddress(symbol, &fn, cudaVersion, flags) hands out the newest
 * version of `symbol` not newer than cudaVersion (logged "proc:NAME@VERSION"),
 * and cuCtxSynchronize_v2(CUcontext) exists with another signature than
 * cuCtxSynchronize(void) (logged "syncv2"): a caller that appends "_v2"
 * blindly calls it with a garbage context.
 *
 * cuMemAlloc_v2 / cuMemFree_v2 change the used memory that cuMemGetInfo
 * reports for the current context's device (base 512 MiB of 80 GiB). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct {
    unsigned char bytes[16];
} CUuuid;

#define MAXD 16
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_NO_DEVICE 100

typedef struct ctx {
    int ordinal;
} ctx;

static int initialised, nvisible, physical[MAXD];
static ctx contexts[MAXD];
static int64_t used[MAXD];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread ctx *stack[8];
static __thread int depth;

typedef struct alloc {
    CUdeviceptr p;
    size_t size;
    int ordinal;
} alloc;
static alloc allocs[1024];
static CUdeviceptr next_ptr = 0x100000;

static void log_event(const char *what, int ordinal)
{
    const char *path = getenv("RPX_STUB_CUDA_LOG");
    FILE *f;
    if (!path) return;
    f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s%d\n", what, ordinal);
    fclose(f);
}

static void uuid_of(int phys, CUuuid *u)
{
    int i;
    for (i = 0; i < 16; i++) u->bytes[i] = (unsigned char)(0x10 * (phys + 1) + i);
}

/* MIG instance k (0, 1) of physical device 0: its own UUID bytes */
static void mig_uuid_of(int k, CUuuid *u)
{
    int i;
    for (i = 0; i < 16; i++) u->bytes[i] = (unsigned char)(0xa0 + 0x10 * k + i);
}

/* `entry` is a prefix (longer than "GPU-") of "<prefix>-<uuid u>" */
static int entry_matches(const char *entry, const char *prefix, const CUuuid *u)
{
    char s[64];
    snprintf(s, sizeof s, "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             prefix, u->bytes[0], u->bytes[1], u->bytes[2], u->bytes[3], u->bytes[4],
             u->bytes[5], u->bytes[6], u->bytes[7], u->bytes[8], u->bytes[9], u->bytes[10],
             u->bytes[11], u->bytes[12], u->bytes[13], u->bytes[14], u->bytes[15]);
    return strncmp(s, entry, strlen(entry)) == 0 && strlen(entry) > 4;
}

static int mig_matches(const char *entry, int k)
{
    CUuuid u;
    mig_uuid_of(k, &u);
    return entry_matches(entry, "MIG", &u);
}

static int mig_of[MAXD]; /* visible ordinal -> MIG instance + 1, 0 for a whole GPU */

static int uuid_matches(const char *entry, int phys)
{
    CUuuid u;
    uuid_of(phys, &u);
    return entry_matches(entry, "GPU", &u);
}

CUresult cuInit(unsigned int flags)
{
    const char *fail = getenv("RPX_STUB_CUDA_INIT_FAIL");
    const char *cnt = getenv("RPX_STUB_CUDA_COUNT");
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    int n = cnt ? atoi(cnt) : 2, i;
    (void)flags;
    if (fail && *fail) return atoi(fail);
    if (n > MAXD) n = MAXD;
    nvisible = 0;
    if (!vis) {
        for (i = 0; i < n; i++) {
            mig_of[nvisible] = 0;
            physical[nvisible++] = i;
        }
    } else {
        char buf[256], *tok, *save = NULL;
        snprintf(buf, sizeof buf, "%s", vis);
        for (tok = strtok_r(buf, ",", &save); tok && nvisible < MAXD;
             tok = strtok_r(NULL, ",", &save)) {
            char *end;
            long v = strtol(tok, &end, 10);
            int found = -1, k;
            const char *mig = getenv("RPX_STUB_CUDA_MIG");
            if (strncmp(tok, "MIG-", 4) == 0 && mig && atoi(mig) == 1) {
                for (k = 0; k < 2; k++)
                    if (mig_matches(tok, k)) {
                        mig_of[nvisible] = k + 1;
                        physical[nvisible++] = 0;
                        break;
                    }
                break; /* one MIG instance per process: it ends the list */
            }
            if (*tok && !*end && v >= 0 && v < n) found = (int)v;
            for (i = 0; found < 0 && i < n; i++)
                if (uuid_matches(tok, i)) found = i;
            if (found < 0) break;
            mig_of[nvisible] = 0;
            physical[nvisible++] = found;
        }
    }
    for (i = 0; i < MAXD; i++) contexts[i].ordinal = i;
    if (nvisible == 0) return CUDA_ERROR_NO_DEVICE; /* the real driver: nothing to initialise */
    initialised = 1;
    {
        const char *busy = getenv("RPX_STUB_NVML_BUSY_FILE");
        FILE *f = busy && *busy ? fopen(busy, "w") : NULL;
        if (f) fclose(f);
    }
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
    *v = 12040;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    *n = nvisible;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= nvisible) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    snprintf(name, (size_t)len, "Stub GPU %d", physical[d]);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d)
{
    if (mig_of[d]) mig_uuid_of(mig_of[d] - 1, u);
    else uuid_of(physical[d], u);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
    uuid_of(physical[d], u); /* v1: the parent GPU's, even for a MIG instance */
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char *s, int len, CUdevice d)
{
    snprintf(s, (size_t)len, "00000000:%02X:00.0", 0x18 + physical[d]);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d)
{
    (void)d;
    *b = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    (void)d;
    switch (attr) {
    case 16: *v = 132; return CUDA_SUCCESS;
    case 75: *v = 9; return CUDA_SUCCESS;
    case 76: *v = 0; return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

static int retained;

CUresult cuDevicePrimaryCtxRetain(void **c, CUdevice d)
{
    if (d < 0 || d >= nvisible) return CUDA_ERROR_INVALID_DEVICE;
    *c = &contexts[d];
    retained++;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    const char *busy = getenv("RPX_STUB_NVML_BUSY_FILE");
    (void)d;
    if (--retained == 0 && busy && *busy) unlink(busy);
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(void *c)
{
    if (!c || depth >= 8) return CUDA_ERROR_INVALID_CONTEXT;
    stack[depth++] = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(void **c)
{
    if (depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    depth--;
    if (c) *c = stack[depth];
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(void *c)
{
    if (depth == 0) depth = 1;
    stack[depth - 1] = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
    if (depth == 0 || !stack[depth - 1]) return CUDA_ERROR_INVALID_CONTEXT;
    log_event("sync", stack[depth - 1]->ordinal);
    return CUDA_SUCCESS;
}

/* CUDA 12.9/13: synchronise one given context (another signature). */
CUresult cuCtxSynchronize_v2(void *c)
{
    int i, known = 0;
    log_event("syncv2", 0);
    for (i = 0; i < MAXD; i++)
        if (c == &contexts[i]) known = 1;
    return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuMemGetInfo_v2(size_t *freeb, size_t *total)
{
    int o;
    if (depth == 0 || !stack[depth - 1]) return CUDA_ERROR_INVALID_CONTEXT;
    o = stack[depth - 1]->ordinal;
    if (syscall(SYS_gettid) == getpid()) log_event("mem", o);
    pthread_mutex_lock(&lock);
    *total = (size_t)80 << 30;
    *freeb = *total - ((size_t)512 << 20) - (size_t)used[o];
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
    int i, o;
    if (depth == 0 || !stack[depth - 1]) return CUDA_ERROR_INVALID_CONTEXT;
    o = stack[depth - 1]->ordinal;
    pthread_mutex_lock(&lock);
    for (i = 0; i < 1024 && allocs[i].p; i++) {
    }
    if (i == 1024) {
        pthread_mutex_unlock(&lock);
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    }
    allocs[i].p = next_ptr;
    allocs[i].size = size;
    allocs[i].ordinal = o;
    next_ptr += size + 4096;
    used[o] += (int64_t)size;
    *p = allocs[i].p;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
    int i;
    pthread_mutex_lock(&lock);
    for (i = 0; i < 1024; i++)
        if (allocs[i].p == p) {
            used[allocs[i].ordinal] -= (int64_t)allocs[i].size;
            allocs[i].p = 0;
            pthread_mutex_unlock(&lock);
            return CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult r, const char **s)
{
    switch (r) {
    case 0: *s = "CUDA_SUCCESS"; break;
    case 3: *s = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; break;
    case 999: *s = "CUDA_ERROR_UNKNOWN"; break;
    default: *s = "CUDA_ERROR_STUB"; break;
    }
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
    *s = r == 100 ? "no CUDA-capable device is detected" : "stub error";
    return CUDA_SUCCESS;
}

#ifndef RPX_STUB_CUDA_NO_GET_PROC /* stubs/cuda-old: a driver before 11.3 */
/* cuGetProcAddress (CUDA 11.3; the exported name keeps this signature):
 * the newest version of `symbol` whose version is <= cudaVersion. */
typedef struct proc {
    const char *name;
    int version;
    void *fn;
} proc;

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{
    static const proc table[] = {
        {"cuInit", 2000, (void *)cuInit},
        {"cuDriverGetVersion", 2020, (void *)cuDriverGetVersion},
        {"cuDeviceGetCount", 2000, (void *)cuDeviceGetCount},
        {"cuDeviceGet", 2000, (void *)cuDeviceGet},
        {"cuDeviceGetName", 2000, (void *)cuDeviceGetName},
        {"cuDeviceGetUuid", 9020, (void *)cuDeviceGetUuid},
        {"cuDeviceGetUuid", 11040, (void *)cuDeviceGetUuid_v2},
        {"cuDeviceGetPCIBusId", 4000, (void *)cuDeviceGetPCIBusId},
        {"cuDeviceTotalMem", 3020, (void *)cuDeviceTotalMem_v2},
        {"cuDeviceGetAttribute", 2000, (void *)cuDeviceGetAttribute},
        {"cuDevicePrimaryCtxRetain", 7000, (void *)cuDevicePrimaryCtxRetain},
        {"cuDevicePrimaryCtxRelease", 11000, (void *)cuDevicePrimaryCtxRelease_v2},
        {"cuCtxPushCurrent", 4000, (void *)cuCtxPushCurrent_v2},
        {"cuCtxPopCurrent", 4000, (void *)cuCtxPopCurrent_v2},
        {"cuCtxSetCurrent", 4000, (void *)cuCtxSetCurrent},
        {"cuCtxSynchronize", 2000, (void *)cuCtxSynchronize},
        {"cuCtxSynchronize", 12090, (void *)cuCtxSynchronize_v2},
        {"cuMemGetInfo", 3020, (void *)cuMemGetInfo_v2},
        {"cuMemAlloc", 3020, (void *)cuMemAlloc_v2},
        {"cuMemFree", 3020, (void *)cuMemFree_v2},
        {"cuGetErrorName", 6000, (void *)cuGetErrorName},
        {"cuGetErrorString", 6000, (void *)cuGetErrorString},
    };
    size_t i;
    int best = -1;
    char what[128];
    (void)flags;
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    snprintf(what, sizeof what, "proc:%s@", symbol);
    log_event(what, version);
    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, symbol) == 0 && table[i].version <= version &&
            (best < 0 || table[i].version > table[best].version))
            best = (int)i;
    if (best < 0) return 500; /* CUDA_ERROR_NOT_FOUND */
    *pfn = table[best].fn;
    return CUDA_SUCCESS;
}
#endif
