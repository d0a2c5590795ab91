/* nvml_abi.h — owns the few NVML types, constants and function signatures
 * that rpxprof uses, written by hand so that no NVML header or SDK is needed
 * to build. Shared by src/device/nvml.c (the caller) and the test stub
 * tests/stubs/nvml/nvml_stub.c (the callee).
 *
 * Source for every value and layout below: the NVML API Reference Guide,
 * https://docs.nvidia.com/deploy/nvml-api/ (sections "Device Structs",
 * "Device Enums", "Constants", "NvmlClocksEventReasons" /
 * "NvmlClocksThrottleReasons", "Initialization and Cleanup", "System
 * Queries", "Device Queries", "Multi Instance GPU Management"). Struct layouts
 * are part of the driver's ABI: the static assertions at the end pin the
 * sizes and offsets that the reference implies on LP64 Linux. */
#ifndef RPX_DEVICE_NVML_ABI_H
#define RPX_DEVICE_NVML_ABI_H

#include <stddef.h>

/* nvmlReturn_t — only the codes we name; any other value is passed to
 * nvmlErrorString as it is. */
typedef enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

/* nvmlDevice_t is an opaque pointer to the driver's struct nvmlDevice_st. */
typedef struct nvmlDevice_st *nvmlDevice_t;

/* nvmlEnableState_t */
typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;

/* nvmlClockType_t */
typedef enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 } nvmlClockType_t;

/* nvmlTemperatureSensors_t */
typedef enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;

/* nvmlDeviceGetMigMode modes */
#define NVML_DEVICE_MIG_DISABLE 0u
#define NVML_DEVICE_MIG_ENABLE 1u

/* "Special constant that some fields take when they are not available":
 * (-1) compared as unsigned long long, e.g. nvmlProcessInfo_t.usedGpuMemory. */
#define NVML_VALUE_NOT_AVAILABLE ((unsigned long long)-1)

/* Constants: buffer sizes guaranteed large enough. */
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96        /* nvmlDeviceGetName */
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96        /* nvmlDeviceGetUUID */
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80 /* nvmlSystemGetDriverVersion */
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

/* nvmlMemory_t (v1), bytes. */
typedef struct {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

/* nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3. */
typedef struct {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;    /* 16-bit device id << 16 | 16-bit vendor id */
    unsigned int pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "00000000:1B:00.0" */
} nvmlPciInfo_t;

/* nvmlProcessInfo_t as filled by nvmlDeviceGetComputeRunningProcesses_v3
 * (and nvmlProcessInfo_v2_t, the same layout, by the _v2 entry point). */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes, or NVML_VALUE_NOT_AVAILABLE */
    unsigned int gpuInstanceId;       /* MIG only, else 0xFFFFFFFF */
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

/* nvmlProcessInfo_v1_t, filled by the unversioned
 * nvmlDeviceGetComputeRunningProcesses of older drivers. */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* nvmlClocksEventReasons / nvmlClocksThrottleReasons bit masks (the same bits;
 * "throttle" is the older name, "event" the name since R535). */
#define nvmlClocksThrottleReasonGpuIdle 0x0000000000000001ULL
#define nvmlClocksThrottleReasonApplicationsClocksSetting 0x0000000000000002ULL
#define nvmlClocksThrottleReasonSwPowerCap 0x0000000000000004ULL
#define nvmlClocksThrottleReasonHwSlowdown 0x0000000000000008ULL
#define nvmlClocksThrottleReasonSyncBoost 0x0000000000000010ULL
#define nvmlClocksThrottleReasonSwThermalSlowdown 0x0000000000000020ULL
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x0000000000000040ULL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown 0x0000000000000080ULL
#define nvmlClocksThrottleReasonDisplayClockSetting 0x0000000000000100ULL

/* Function signatures (typedefs named after the entry point). */
typedef nvmlReturn_t (*rpx_nvmlInit_fn)(void);                   /* nvmlInit_v2 */
typedef nvmlReturn_t (*rpx_nvmlShutdown_fn)(void);               /* nvmlShutdown */
typedef const char *(*rpx_nvmlErrorString_fn)(nvmlReturn_t);     /* nvmlErrorString */
typedef nvmlReturn_t (*rpx_nvmlSystemGetDriverVersion_fn)(char *, unsigned int);
typedef nvmlReturn_t (*rpx_nvmlSystemGetCudaDriverVersion_fn)(int *); /* 1000*major + 10*minor */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetCount_fn)(unsigned int *);
typedef nvmlReturn_t (*rpx_nvmlDeviceGetHandleByIndex_fn)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*rpx_nvmlDeviceGetName_fn)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*rpx_nvmlDeviceGetUUID_fn)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*rpx_nvmlDeviceGetPciInfo_fn)(nvmlDevice_t, nvmlPciInfo_t *);
typedef nvmlReturn_t (*rpx_nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*rpx_nvmlDeviceGetCudaComputeCapability_fn)(nvmlDevice_t, int *, int *);
typedef nvmlReturn_t (*rpx_nvmlDeviceGetClockInfo_fn)(nvmlDevice_t, nvmlClockType_t,
                                                      unsigned int *); /* MHz; also Max */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetPowerManagementLimit_fn)(nvmlDevice_t,
                                                                 unsigned int *); /* mW */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetTemperature_fn)(nvmlDevice_t, nvmlTemperatureSensors_t,
                                                        unsigned int *); /* degrees C */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetEnableState_fn)(nvmlDevice_t, nvmlEnableState_t *);
/* nvmlDeviceGetEccMode(device, *current, *pending) */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetEccMode_fn)(nvmlDevice_t, nvmlEnableState_t *,
                                                    nvmlEnableState_t *);
/* nvmlDeviceGetMigMode(device, *currentMode, *pendingMode) */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetMigMode_fn)(nvmlDevice_t, unsigned int *, unsigned int *);
/* nvmlDeviceGetPowerUsage(device, *milliwatts) has this signature too.
 * nvmlDeviceGetCurrPcieLinkGeneration / Width */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetUint_fn)(nvmlDevice_t, unsigned int *);
/* nvmlDeviceGetCurrentClocksEventReasons / ...ThrottleReasons */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetReasons_fn)(nvmlDevice_t, unsigned long long *);
/* nvmlDeviceGetComputeRunningProcesses[_v2|_v3](device, *infoCount, infos):
 * NVML_ERROR_INSUFFICIENT_SIZE with *infoCount set to the count needed. The
 * element type depends on the version, hence void *. */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetProcesses_fn)(nvmlDevice_t, unsigned int *, void *);
/* nvmlDeviceGetMigDeviceHandleByIndex(device, index, *migDevice) */
typedef nvmlReturn_t (*rpx_nvmlDeviceGetMigDeviceHandleByIndex_fn)(nvmlDevice_t, unsigned int,
                                                                   nvmlDevice_t *);

/* Layout checks (LP64): a wrong declaration here would corrupt memory. */
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t is three unsigned long long");
_Static_assert(offsetof(nvmlPciInfo_t, domain) == 16, "nvmlPciInfo_t.domain after busIdLegacy[16]");
_Static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t.busId after five uints");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t is 68 bytes");
_Static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8, "usedGpuMemory is 8-aligned");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t (v2/v3) is 24 bytes");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t is 16 bytes");
_Static_assert(sizeof(nvmlReturn_t) == 4, "nvmlReturn_t is an int-sized enum");

#endif
