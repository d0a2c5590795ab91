/* nvml_stub.c — a fake libnvidia-ml.so.1 for the tests of src/device/nvml.c.
 *
 * Two GPUs with realistic values, written with the same ABI declarations as
 * the caller (src/device/nvml_abi.h, from the NVML API Reference):
 *   0: NVIDIA H100 80GB HBM3   00000000:1B:00.0  temperature fails (Unknown Error)
 *   1: NVIDIA A100-SXM4-40GB   00000000:3B:00.0  power limit Not Supported,
 *                                                persistence mode off
 * Environment, read at each call:
 *   RPX_STUB_NVML_INIT_FAIL=1  nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED
 *   RPX_STUB_NVML_COUNT=n      only the first n GPUs (0..2)
 *   RPX_STUB_NVML_OTHER_PROC=n n other compute processes on GPU 0 (pid 4242+k,
 *                              (k+1)*256 MiB, except k=1: NVML_VALUE_NOT_AVAILABLE);
 *                              this process itself is always listed on GPU 0
 *   RPX_STUB_NVML_THROTTLE=hex clock-throttle reason mask of every GPU
 *                              (default 0x1, gpu_idle)
 *   RPX_STUB_NVML_MIG=1        MIG on for GPU 0, with two MIG devices
 *   RPX_STUB_NVML_BUSY_FILE=F  while file F exists the GPUs are busy, as a real GPU
 *                              is only while the model runs (the stub CUDA driver
 *                              creates F at cuInit and removes it at the last
 *                              context release): clock reasons
 *                              RPX_STUB_NVML_THROTTLE_BUSY (default 0x4,
 *                              sw_power_cap), SM clock 1755 / 1275 MHz, power
 *                              690 W on GPU 0; idle, 70 W and full clocks otherwise
 *
 * The full library's nvmlDeviceGetComputeRunningProcesses_v3 behaves like
 * drivers 535.43-535.86: it writes 32-byte entries (a fifth 8-byte field after
 * the 24-byte nvmlProcessInfo_t), whatever size the caller allocated; its
 * _v2 writes the fixed 24-byte layout.
 *
 * Built twice: the full library exports the newest entry points and also the
 * older ones, which answer NVML_ERROR_FUNCTION_NOT_FOUND so a test sees
 * which one was called (except the process list's _v2, which works, as on
 * every driver); RPX_STUB_NVML_MINIMAL builds an "older driver" without
 * nvmlDeviceGetMigMode, nvmlDeviceGetComputeRunningProcesses_v3 and
 * nvmlDeviceGetCurrentClocksEventReasons. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/nvml_abi.h"

#define EXPORT __attribute__((visibility("default")))

/* Prototypes of what this library exports (-Wmissing-prototypes). */
EXPORT nvmlReturn_t nvmlInit_v2(void);
EXPORT nvmlReturn_t nvmlShutdown(void);
EXPORT const char *nvmlErrorString(nvmlReturn_t result);
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version);
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                           unsigned int *clock);
EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                              unsigned int *clock);
EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit);
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                             unsigned int *temp);
EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode);
EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current,
                                         nvmlEnableState_t *pending);
EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *gen);
EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *width);
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                              unsigned long long *reasons);
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                            unsigned int *count,
                                                            nvmlProcessInfo_t *infos);
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count);
EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                        nvmlDevice_t *mig);
#ifndef RPX_STUB_NVML_MINIMAL
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current,
                                         unsigned int *pending);
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                           unsigned long long *reasons);
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                            unsigned int *count,
                                                            nvmlProcessInfo_t *infos);
#endif

struct nvmlDevice_st {
    int gpu;    /* index of the physical GPU */
    int mig;    /* -1: the GPU itself; else the MIG device number */
};

typedef struct {
    const char *name, *uuid, *bus_id, *bus_id_legacy;
    unsigned int bus, pci_device_id, pci_subsystem_id;
    unsigned long long mem_total, mem_used;
    int cc_major, cc_minor;
    unsigned int sm, sm_max, mem, mem_max;
    nvmlReturn_t power_rc;
    unsigned int power_mw;
    nvmlReturn_t temp_rc;
    unsigned int temp_c;
    nvmlEnableState_t persistence;
    unsigned int pcie_gen, pcie_width;
} fake_gpu;

static const fake_gpu gpus[2] = {
    {"NVIDIA H100 80GB HBM3", "GPU-5f8a3c2e-9b1d-4e7a-a6c0-3d2f1e8b7c94", "00000000:1B:00.0",
     "0000:1B:00.0", 0x1B, 0x233010DE, 0x16C110DE, 85520809984ULL, 552534016ULL, 9, 0, 1980,
     1980, 2619, 2619, NVML_SUCCESS, 700000, NVML_ERROR_UNKNOWN, 0, NVML_FEATURE_ENABLED, 5, 16},
    {"NVIDIA A100-SXM4-40GB", "GPU-5f17d0b2-6c3e-4f58-9e21-7b0c5d9f3a68", "00000000:3B:00.0",
     "0000:3B:00.0", 0x3B, 0x20B010DE, 0x134F10DE, 42949672960ULL, 442695680ULL, 8, 0, 210, 1410,
     1215, 1215, NVML_ERROR_NOT_SUPPORTED, 0, NVML_SUCCESS, 34, NVML_FEATURE_DISABLED, 4, 16},
};

static const char *const mig_uuids[2] = {"MIG-0c4e8f2a-7d13-5b6e-9a0f-2e8c1d4b6a37",
                                         "MIG-71b3e9d5-2a48-5c0f-8e6d-4f1a9b3c7e20"};

static struct nvmlDevice_st handles[2] = {{0, -1}, {1, -1}};
static struct nvmlDevice_st mig_handles[2] = {{0, 0}, {0, 1}};
static int init_count;

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 0) : fallback;
}

static unsigned int gpu_count(void)
{
    long n = env_long("RPX_STUB_NVML_COUNT", 2);
    return n < 0 ? 0u : n > 2 ? 2u : (unsigned int)n;
}

static int busy(void)
{
    const char *f = getenv("RPX_STUB_NVML_BUSY_FILE");
    return f && *f && access(f, F_OK) == 0;
}

static int mig_on(int gpu)
{
    return gpu == 0 && env_long("RPX_STUB_NVML_MIG", 0) == 1;
}

/* The fake GPU behind a whole-GPU handle, or NULL (with *rc set). */
static const fake_gpu *gpu_of(nvmlDevice_t d, nvmlReturn_t *rc)
{
    *rc = NVML_SUCCESS;
    if (init_count <= 0) {
        *rc = NVML_ERROR_UNINITIALIZED;
        return NULL;
    }
    if (!d || d->gpu < 0 || (unsigned int)d->gpu >= gpu_count()) {
        *rc = NVML_ERROR_INVALID_ARGUMENT;
        return NULL;
    }
    if (d->mig >= 0) {
        *rc = NVML_ERROR_NOT_SUPPORTED; /* only the UUID of MIG devices is faked */
        return NULL;
    }
    return &gpus[d->gpu];
}

#define GPU_OR_RETURN(d, g)                      \
    nvmlReturn_t rc_;                            \
    const fake_gpu *g = gpu_of((d), &rc_);       \
    if (!g) return rc_

static nvmlReturn_t copy_text(char *dst, unsigned int length, const char *src)
{
    if (!dst) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
    if (env_long("RPX_STUB_NVML_INIT_FAIL", 0) == 1) return NVML_ERROR_DRIVER_NOT_LOADED;
    init_count++;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    if (init_count <= 0) return NVML_ERROR_UNINITIALIZED;
    init_count--;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_UNKNOWN: return "Unknown Error";
    }
    return "Unknown Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    if (init_count <= 0) return NVML_ERROR_UNINITIALIZED;
    return copy_text(version, length, "550.54.15");
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version)
{
    if (!version) return NVML_ERROR_INVALID_ARGUMENT;
    *version = 12040; /* 1000 * 12 + 10 * 4 */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (init_count <= 0) return NVML_ERROR_UNINITIALIZED;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = gpu_count();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (init_count <= 0) return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= gpu_count()) return NVML_ERROR_INVALID_ARGUMENT;
    *device = &handles[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    GPU_OR_RETURN(device, g);
    return copy_text(name, length, g->name);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    if (init_count > 0 && device && device->mig >= 0 && device->mig < 2 && mig_on(device->gpu))
        return copy_text(uuid, length, mig_uuids[device->mig]);
    {
        GPU_OR_RETURN(device, g);
        return copy_text(uuid, length, g->uuid);
    }
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    GPU_OR_RETURN(device, g);
    if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", g->bus_id_legacy);
    pci->domain = 0;
    pci->bus = g->bus;
    pci->device = 0;
    pci->pciDeviceId = g->pci_device_id;
    pci->pciSubSystemId = g->pci_subsystem_id;
    snprintf(pci->busId, sizeof pci->busId, "%s", g->bus_id);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    GPU_OR_RETURN(device, g);
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    memory->total = g->mem_total;
    memory->used = g->mem_used;
    memory->free = g->mem_total - g->mem_used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    GPU_OR_RETURN(device, g);
    if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
    *major = g->cc_major;
    *minor = g->cc_minor;
    return NVML_SUCCESS;
}

static nvmlReturn_t clock_of(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock,
                             int max)
{
    GPU_OR_RETURN(device, g);
    if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
        *clock = max ? g->sm_max : busy() ? (g == &gpus[0] ? 1755 : 1275) : g->sm;
        return NVML_SUCCESS;
    case NVML_CLOCK_MEM: *clock = max ? g->mem_max : g->mem; return NVML_SUCCESS;
    }
    return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    return clock_of(device, type, clock, 0);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned int *clock)
{
    return clock_of(device, type, clock, 1);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
    GPU_OR_RETURN(device, g);
    if (!limit) return NVML_ERROR_INVALID_ARGUMENT;
    if (g->power_rc != NVML_SUCCESS) return g->power_rc;
    *limit = g->power_mw;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                      unsigned int *temp)
{
    GPU_OR_RETURN(device, g);
    if (!temp || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    if (g->temp_rc != NVML_SUCCESS) return g->temp_rc;
    *temp = g->temp_c;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
    GPU_OR_RETURN(device, g);
    if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = g->persistence;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current,
                                  nvmlEnableState_t *pending)
{
    GPU_OR_RETURN(device, g);
    (void)g;
    if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
    *current = *pending = NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *gen)
{
    GPU_OR_RETURN(device, g);
    if (!gen) return NVML_ERROR_INVALID_ARGUMENT;
    *gen = g->pcie_gen;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *width)
{
    GPU_OR_RETURN(device, g);
    if (!width) return NVML_ERROR_INVALID_ARGUMENT;
    *width = g->pcie_width;
    return NVML_SUCCESS;
}

static nvmlReturn_t reasons_of(nvmlDevice_t device, unsigned long long *reasons)
{
    const char *v = getenv("RPX_STUB_NVML_THROTTLE");
    GPU_OR_RETURN(device, g);
    (void)g;
    if (!reasons) return NVML_ERROR_INVALID_ARGUMENT;
    if (busy()) {
        const char *b = getenv("RPX_STUB_NVML_THROTTLE_BUSY");
        *reasons = b && *b ? strtoull(b, NULL, 16) : nvmlClocksThrottleReasonSwPowerCap;
        return NVML_SUCCESS;
    }
    *reasons = v && *v ? strtoull(v, NULL, 16) : nvmlClocksThrottleReasonGpuIdle;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    GPU_OR_RETURN(device, g);
    if (!power) return NVML_ERROR_INVALID_ARGUMENT;
    if (g->power_rc != NVML_SUCCESS) return g->power_rc;
    *power = busy() ? 690000 : 70000;
    return NVML_SUCCESS;
}

/* entry: bytes per entry written into `infos` (24, or 32 like _v3 of 535.43-535.86) */
static nvmlReturn_t processes_of(nvmlDevice_t device, unsigned int *count,
                                 nvmlProcessInfo_t *infos, size_t entry)
{
    long others = env_long("RPX_STUB_NVML_OTHER_PROC", 0);
    unsigned int n = 0, k;
    nvmlProcessInfo_t list[64];
    GPU_OR_RETURN(device, g);
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    if (g == &gpus[0]) {
        list[n].pid = (unsigned int)getpid(); /* the caller itself */
        list[n].usedGpuMemory = 2048ULL << 20;
        n++;
        for (k = 0; others > 0 && k < (unsigned long)others && n < 64; k++, n++) {
            list[n].pid = 4242 + k;
            list[n].usedGpuMemory = k == 1 ? NVML_VALUE_NOT_AVAILABLE : (k + 1ULL) * (256ULL << 20);
        }
    }
    for (k = 0; k < n; k++) list[k].gpuInstanceId = list[k].computeInstanceId = 0xFFFFFFFFu;
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (n && !infos) return NVML_ERROR_INVALID_ARGUMENT;
    for (k = 0; k < n; k++) {
        unsigned char *dst = (unsigned char *)infos + k * entry;
        memset(dst, 0xAB, entry); /* the extra field of the 32-byte layout */
        memcpy(dst, &list[k], sizeof list[k]);
    }
    *count = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
    GPU_OR_RETURN(device, g);
    (void)g;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = 7; /* both GPUs can be split in seven */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *mig)
{
    GPU_OR_RETURN(device, g);
    if (!mig) return NVML_ERROR_INVALID_ARGUMENT;
    if (!mig_on(g == &gpus[0] ? 0 : 1)) return NVML_ERROR_NOT_SUPPORTED;
    if (index >= 2) return NVML_ERROR_NOT_FOUND;
    *mig = &mig_handles[index];
    return NVML_SUCCESS;
}

#ifndef RPX_STUB_NVML_MINIMAL
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current,
                                  unsigned int *pending)
{
    GPU_OR_RETURN(device, g);
    if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
    *current = *pending = mig_on(g == &gpus[0] ? 0 : 1) ? NVML_DEVICE_MIG_ENABLE
                                                         : NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *reasons)
{
    return reasons_of(device, reasons);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos)
{
    return processes_of(device, count, infos, 32);
}

/* Older names: exported, as real drivers do, but they fail here so that a
 * test notices when rpxprof calls them instead of the newest one. */
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *reasons)
{
    (void)device;
    (void)reasons;
    return NVML_ERROR_FUNCTION_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos)
{
    return processes_of(device, count, infos, sizeof *infos);
}
#else
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *reasons)
{
    return reasons_of(device, reasons);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos)
{
    return processes_of(device, count, infos, sizeof *infos);
}
#endif
