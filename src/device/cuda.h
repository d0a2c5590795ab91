/* src/device/cuda.h — the CUDA driver, loaded at run time.
 *
 * libcuda.so.1 is opened with dlopen (RPX_CUDA_LIBRARY names another file,
 * for tests); nothing CUDA is needed to build. rpx_cuda_open initialises the
 * driver and retains the primary context of every visible device (the one
 * the CUDA runtime and the frameworks use), so that synchronising them covers
 * the model's work. Visibility is the driver's: CUDA_VISIBLE_DEVICES decides.
 *
 * Lifecycle: rpx_cuda_open → rpx_cuda_sync_all (as the loop's sync) ... →
 * rpx_cuda_close. */
#ifndef RPXPROF_CUDA_H
#define RPXPROF_CUDA_H

#include <jansson.h>
#include <stdint.h>

#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_cuda rpx_cuda;

/* Refuses (never falls back) with a message saying which step failed:
 * the library cannot be loaded, cuInit fails, or no device is visible. */
int rpx_cuda_open(rpx_cuda **out, rpx_error *err);
/* The same, its refusals worded for rpxprof.profile() when python is nonzero
 * (device="cuda" ... run with device="cpu") instead of the CLI's --device. */
int rpx_cuda_open_for(rpx_cuda **out, int python, rpx_error *err);
void rpx_cuda_close(rpx_cuda *cuda);

int rpx_cuda_device_count(const rpx_cuda *cuda);
/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" of a visible ordinal ("MIG-..."
 * for a MIG instance, as nvidia-smi prints it), or NULL. */
const char *rpx_cuda_device_uuid(const rpx_cuda *cuda, int ordinal);
/* CUDA_VISIBLE_DEVICES as it was when rpx_cuda_open initialised the driver
 * (the value the driver used), NULL when it was unset. */
const char *rpx_cuda_visible_devices(const rpx_cuda *cuda);
/* Sentences for the report's warnings: CUDA_VISIBLE_DEVICES changed since
 * rpx_cuda_open (a model that sets it is too late); entries after a MIG
 * instance (CUDA shows one per process); several GPUs visible (a
 * context, a sync and memory sampling on each). A JSON array, never NULL
 * but on allocation failure. */
json_t *rpx_cuda_warnings(const rpx_cuda *cuda);
/* CUDA driver version as "12.4", or NULL. */
const char *rpx_cuda_driver_version(const rpx_cuda *cuda);

/* Synchronise the primary context of every visible device, in ordinal order.
 * Has the signature of rpx_sync_fn (ctx is the rpx_cuda). */
int rpx_cuda_sync_all(void *cuda, rpx_error *err);

/* Median cost of rpx_cuda_sync_all on idle devices over `trials` calls. */
int rpx_cuda_sync_overhead(rpx_cuda *cuda, long trials, int64_t *median_ns, rpx_error *err);

/* Device memory in use on a visible device as the driver reports it (whole
 * device, all processes), in bytes. */
int rpx_cuda_mem_info(rpx_cuda *cuda, int ordinal, int64_t *used, int64_t *total,
                      rpx_error *err);

/* [{ordinal, name, uuid, pci_bus_id, memory_total_mb, compute_capability,
 *   multiprocessor_count}] for the visible devices, null where unknown. */
json_t *rpx_cuda_devices_json(const rpx_cuda *cuda);

#ifdef __cplusplus
}
#endif
#endif
