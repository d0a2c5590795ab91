/* gpu_watch.c — owns the GPU conditions seen during the timed calls: NVML
 * (clock-event reasons, SM clock, power, temperature of the visible GPUs)
 * sampled by the parent process from the stage's watch loop while the model's
 * process is in its timed loop, so power or thermal throttling under load is
 * reported (the card's start and end conditions see an idle GPU). The model's
 * process never calls NVML: nothing is added to its timed spans. */
#include <jansson.h>

#include "device/nvml.h"
#include "runner/runner_internal.h"

/* NVML is read at most this often (a read of the four values costs about a
 * millisecond of the parent's time on a real GPU). */
#define RPX__GPU_WATCH_INTERVAL_S 0.05

rpx_nvml_watch *rpx__gpu_watch_create(rpx_nvml *nvml, int isolate)
{
    /* without isolation there is no parent to watch from */
    return nvml && isolate ? rpx_nvml_watch_create(nvml, RPX__GPU_WATCH_INTERVAL_S) : NULL;
}

void rpx__gpu_watch_tick(rpx_nvml_watch *watch)
{
    if (watch) (void)rpx_nvml_watch_sample(watch);
}

/* cuda.conditions_during_timed_calls: the per-GPU summary, or null when no
 * watch ran; its warnings go to the notes and the run's warnings. */
void rpx__gpu_watch_report(const rpx_nvml_watch *watch, json_t *cuda, json_t *notes,
                           json_t *warnings)
{
    json_t *w, *seen, *s;
    size_t i;
    if (!json_is_object(cuda)) return;
    if (!watch) {
        json_object_set_new(cuda, "conditions_during_timed_calls", json_null());
        return;
    }
    w = json_array();
    seen = rpx_nvml_watch_json(watch, w);
    json_object_set_new(cuda, "conditions_during_timed_calls", seen ? seen : json_null());
    json_array_foreach(w, i, s) rpx__warn_note(notes, warnings, json_string_value(s));
    json_decref(w);
}
