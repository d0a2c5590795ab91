/* src/device/gpu_time.h — per-call GPU busy time from CUPTI activity records.
 *
 * CUPTI (libcupti, loaded with dlopen after the model's setup: RPX_CUPTI_LIBRARY
 * (one path or several, ':'-separated), else a CUPTI already loaded in the
 * process (torch's), the running Python's nvidia-cuda-cupti wheel, the
 * system's and the toolkit's usual places; a candidate that loads but refuses
 * to enable kernel records is passed over for the next) records every
 * kernel's start and end on the GPU. After each
 * synchronised call rpxprof flushes the records and sums the union of the
 * kernels' intervals: the time the GPU was busy with that call. Next to the
 * wall time it shows a launch-bound model (wall far above GPU time).
 * Tracing adds a little cost to every kernel launch, so it is opt-in
 * (`run --gpu-time`) and the report says it was on.
 *
 * Lifecycle: rpx_gpu_time_open (after setup, before warmup) → rpx_gpu_time_after_call
 * after every call → rpx_gpu_time_json → rpx_gpu_time_close. */
#ifndef RPXPROF_GPU_TIME_H
#define RPXPROF_GPU_TIME_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_gpu_time rpx_gpu_time;

/* Load CUPTI and enable kernel activity records; room for `max_calls` timed
 * calls. Fails, with the reason, when CUPTI cannot be loaded or enabled. */
int rpx_gpu_time_open(size_t max_calls, rpx_gpu_time **out, rpx_error *err);
/* After a synchronised call: collect its kernels. `timed` 0 for warmup calls
 * (their records are dropped). Outside the timed span; no allocation. */
void rpx_gpu_time_after_call(rpx_gpu_time *g, int timed);
/* {method, library, rejected_libraries, samples_ms, p50_ms, mean_ms,
 *  kernels_per_call_p50, calls, truncated} */
json_t *rpx_gpu_time_json(const rpx_gpu_time *g);
/* Median busy time of the timed calls in ms, NaN if none. */
double rpx_gpu_time_p50_ms(const rpx_gpu_time *g);
void rpx_gpu_time_close(rpx_gpu_time *g);

#ifdef __cplusplus
}
#endif
#endif
