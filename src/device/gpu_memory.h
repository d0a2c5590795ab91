/* src/device/gpu_memory.h — per-device peaks of CUDA memory during a run.
 *
 * Method "cuda_mem_get_info_sampled": a background thread reads each visible
 * device's used memory (cuMemGetInfo: total − free) every `interval_us`. The
 * figure for a device is the peak of (used − baseline), where the baseline is
 * what was in use once this process had created its contexts and before the
 * model's setup: so it is the memory this process allocated, weights included,
 * provided no other process allocated on the device meanwhile (the system
 * card's conditions list other processes), and allocations that live less
 * than the interval can be missed.
 *
 * RPX_GPU_MEM_SAMPLER=off starts no sampler thread (memory is read at the
 * reset and at the end only): for measuring what the sampler costs the timed
 * calls. The method's at_reset_mb is what was in use at the reset: the peak
 * minus it is what a call added.
 *
 * Lifecycle: rpx_gpu_mem_start (baseline) → rpx_gpu_mem_reset (after warmup)
 * → rpx_gpu_mem_stop → rpx_gpu_mem_json → rpx_gpu_mem_free. */
#ifndef RPXPROF_GPU_MEMORY_H
#define RPXPROF_GPU_MEMORY_H

#include <jansson.h>
#include <stdint.h>

#include "device/cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_gpu_mem rpx_gpu_mem;

int rpx_gpu_mem_start(rpx_cuda *cuda, long interval_us, rpx_gpu_mem **out, rpx_error *err);
/* Peaks restart from the current use (call after warmup). */
void rpx_gpu_mem_reset(rpx_gpu_mem *m);
/* Take a last sample and stop the thread. */
void rpx_gpu_mem_stop(rpx_gpu_mem *m);
/* Peak bytes above the baseline since the last reset, or -1 (reason set). */
int64_t rpx_gpu_mem_peak_bytes(const rpx_gpu_mem *m, int ordinal, const char **reason);
/* {ordinal: MiB or null} for the report. */
json_t *rpx_gpu_mem_peaks_json(const rpx_gpu_mem *m);
/* {ordinal: MiB} in use at the end of the loop minus at the reset (after
 * warmup): what the timed calls left allocated. */
json_t *rpx_gpu_mem_growth_json(const rpx_gpu_mem *m);
/* {method, covers, interval_us, samples, baseline_mb {ordinal: MiB}} */
json_t *rpx_gpu_mem_method_json(const rpx_gpu_mem *m);
void rpx_gpu_mem_free(rpx_gpu_mem *m);

#ifdef __cplusplus
}
#endif
#endif
