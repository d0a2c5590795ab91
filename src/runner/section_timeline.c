/* section_timeline.c — the timeline (--timeline, implied by --trace) as a
 * measured section: its slice holds the model's process, when its phases
 * began and ended and when each call and restore began (CLOCK_MONOTONIC,
 * the samples' clock; the loop stores them beside each sample, outside the
 * timed span); merge gives the report's `timeline` (report/timeline.c). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/nvml.h"
#include "rpxprof/clock.h"
#include "runner/section.h"

typedef struct timeline_slice {
    int on;                       /* the process reached its load */
    int calls;                    /* the arrays were kept (not for an open-loop load) */
    int pid;
    int64_t load_start_ns, setup_start_ns, setup_end_ns, teardown_start_ns, teardown_end_ns;
    int64_t *call_start;          /* `repeats` entries, by measured call (an open-loop load:
                                     each request's intended send time) */
    int64_t *restore_start;       /* `repeats` entries, by timed call */
    int64_t *warmup_start;        /* warmup_keep entries */
    int64_t *warmup_restore;      /* 2 x warmup_keep: {start, duration} */
} timeline_slice;

#define HEAD ((sizeof(timeline_slice) + 63) & ~(size_t)63)

static int tl_on(const run_plan *plan)
{
    return plan->c->timeline != 0;
}

static size_t tl_bytes(long repeats, long warmup_keep)
{
    return HEAD + (2 * (size_t)repeats + 3 * (size_t)warmup_keep) * sizeof(int64_t);
}

static void tl_mark(section_proc *sp, section_event event)
{
    timeline_slice *s = sp->slice;
    int64_t now = sp->event_ns;
    switch (event) {
    case SECTION_LOAD:
        s->on = 1;
        s->pid = (int)getpid();
        s->load_start_ns = now;
        break;
    case SECTION_SETUP: s->setup_start_ns = now; break;
    case SECTION_SETUP_END: s->setup_end_ns = now; break; /* not the clock's calibration */
    case SECTION_TEARDOWN: s->teardown_start_ns = now; break;
    case SECTION_TEARDOWN_END: s->teardown_end_ns = now; break;
    }
}

static int tl_begin(section_proc *sp, rpx_error *err)
{
    timeline_slice *s = sp->slice;
    char *at = (char *)s + HEAD;
    size_t r = (size_t)sp->p->repeats, w = (size_t)sp->sh->warmup_keep;
    (void)err;
    s->call_start = (int64_t *)at;
    s->restore_start = s->call_start + r;
    s->warmup_start = s->restore_start + r;
    s->warmup_restore = s->warmup_start + w;
    sp->loop->call_start_ns = s->call_start;
    if (sp->target->hooks.run) return 0; /* an open-loop load keeps each request's intended
                                         send time there instead */
    s->calls = 1;
    sp->loop->warmup_start_ns = s->warmup_start;
    if (sp->p->plan->pristine) {
        sp->loop->restore_start_ns = s->restore_start;
        sp->loop->warmup_restore_ns = s->warmup_restore;
    }
    return 0;
}

static int tl_merge(const section_merge *m, section_out *out)
{
    rpx_run_timeline *tl = calloc((size_t)m->n + 1, sizeof *tl);
    const int writable = m->plan->pristine != NULL;
    rpx_run_gpu_readings gpu = {0, NULL, 0, 0};
    int i;
    if (!tl) return -1;
    for (i = 0; i < m->n; i++) {
        const timeline_slice *s = m->slices[i];
        const run_shared *p = m->procs[i];
        const int looped = p->phase >= PHASE_LOOP;
        if (!s || !s->on) continue;
        rpx_run_timeline t = {s->pid, s->load_start_ns, s->setup_start_ns, s->setup_end_ns,
                              s->teardown_start_ns, s->teardown_end_ns,
                              s->calls ? s->call_start : NULL,
                              writable && s->calls ? s->restore_start : NULL,
                              s->calls ? s->warmup_start : NULL,
                              writable && s->calls ? s->warmup_restore : NULL,
                              looped ? &p->trend : NULL};
        tl[i] = t;
        if (!s->calls && looped) tl[i].request_intended_ns = s->call_start;
        m->views[i].timeline = &tl[i];
    }
    if (m->plan->gpu_watch) /* the GPU's clocks, power and temperature over time */
        gpu.n = rpx_nvml_watch_readings(m->plan->gpu_watch, &gpu.readings, &gpu.dropped);
    gpu.watched = m->plan->gpu_watch != NULL;
    out->value = rpx__timeline_json(m->rd, &gpu);
    for (i = 0; i < m->n; i++) m->views[i].timeline = NULL; /* tl is freed here */
    free(tl);
    return 0;
}

const rpx_section rpx__section_timeline = {
    .off_is_null = 1,
    .key = "timeline",
    .on = tl_on,
    .slice_bytes = tl_bytes,
    .mark = tl_mark,
    .begin = tl_begin,
    .merge = tl_merge,
};
