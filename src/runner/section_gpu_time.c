/* section_gpu_time.c — the GPU busy time of every timed call (--gpu-time,
 * device/gpu_time.h) as a measured section: CUPTI opened after the target's
 * setup, each call's kernels collected after it, the process's summary in
 * its export, the report's `gpu_time` from the last process that reported
 * (--gpu-time runs one process). */
#include <string.h>

#include "device/gpu_time.h"
#include "runner/section.h"

static int gt_on(const run_plan *plan)
{
    return plan->c->gpu_time && plan->c->device && strcmp(plan->c->device, "cuda") == 0;
}

/* CUPTI after setup: the CUPTI the model's framework loaded (torch's) is reused. */
static int gt_begin(section_proc *sp, rpx_error *err)
{
    rpx_gpu_time *g = NULL;
    int rc;
    if (!sp->cuda) return 0; /* not reached: a cuda run opens the driver or fails first */
    if ((rc = rpx_gpu_time_open((size_t)sp->p->repeats, &g, err)) != 0) return rc;
    sp->state = g;
    return 0;
}

static void gt_after_call(void *state, int timed)
{
    rpx_gpu_time_after_call(state, timed);
}

static json_t *gt_export(section_proc *sp)
{
    return sp->state ? rpx_gpu_time_json(sp->state) : NULL;
}

static void gt_end(section_proc *sp)
{
    rpx_gpu_time_close(sp->state);
    sp->state = NULL;
}

static int gt_merge(const section_merge *m, section_out *out)
{
    int i;
    for (i = m->n - 1; i >= 0 && !out->value; i--)
        if (json_is_object(m->exports[i])) out->value = json_incref(m->exports[i]);
    return 0;
}

const rpx_section rpx__section_gpu_time = {
    .off_is_null = 1,
    .key = "gpu_time",
    .on = gt_on,
    .begin = gt_begin,
    .after_call = gt_after_call,
    .export_json = gt_export,
    .end = gt_end,
    .merge = gt_merge,
};
