/* section_call_records.c — where each timed call ran (--call-records,
 * measure/call_record.h) as a measured section: its slice holds how the
 * process recorded, the per-call arrays and the loop's totals; begin opens
 * the counters in the thread that makes the calls and hands the loop the
 * recorder (the loop reads the CPU around each call, outside t0..t1); merge
 * gives the report's views of each process (latency_by_process) and the
 * report's `call_records` (report/call_records.c). */
#include <stdlib.h>
#include <string.h>

#include "measure/call_record.h"
#include "report/call_records.h"
#include "runner/section.h"

typedef struct records_slice {
    rpx_call_record_info info;    /* info.on 0: not recorded */
    rpx_call_totals totals;       /* --call-records cpu: over the timed loop */
    rpx_call_records records;     /* `repeats` calls, arrays after this header */
} records_slice;

#define HEAD ((sizeof(records_slice) + 63) & ~(size_t)63)

static int rec_on(const run_plan *plan)
{
    return plan->call_records != RPX_CALL_RECORDS_OFF;
}

static size_t rec_bytes(long repeats, long warmup_keep)
{
    (void)warmup_keep;
    return HEAD + rpx_call_records_bytes((size_t)repeats); /* touched only when recorded */
}

static int rec_begin(section_proc *sp, rpx_error *err)
{
    records_slice *s = sp->slice;
    rpx_call_recorder *r;
    (void)err;
    if (sp->target->hooks.run) return 0; /* an open-loop load has no calls of its own */
    if (!(r = malloc(sizeof *r))) return 0; /* not recorded: info.on stays 0 */
    rpx_call_records_layout(&s->records, (char *)s + HEAD, (size_t)sp->p->repeats);
    /* in this thread: the counters count the thread that makes the calls */
    rpx_call_recorder_open(r, sp->p->plan->call_records == RPX_CALL_RECORDS_FULL);
    s->info = r->info;
    sp->loop->recorder = r;
    sp->loop->records = &s->records;
    sp->loop->record_totals = &s->totals;
    sp->state = r;
    return 0;
}

static void rec_end(section_proc *sp)
{
    if (!sp->state) return;
    rpx_call_recorder_close(sp->state);
    free(sp->state);
    sp->state = NULL;
}

static int rec_merge(const section_merge *m, section_out *out)
{
    int i;
    for (i = 0; i < m->n; i++) {
        const records_slice *s = m->slices[i];
        if (!s || !s->info.on) continue;
        m->views[i].records = &s->records;
        m->views[i].record_info = &s->info;
        m->views[i].record_totals = &s->totals;
    }
    out->value = rpx__call_records_json(m->rd);
    return 0;
}

const rpx_section rpx__section_call_records = {
    .off_is_null = 1,
    .key = "call_records",
    .on = rec_on,
    .slice_bytes = rec_bytes,
    .begin = rec_begin,
    .end = rec_end,
    .merge = rec_merge,
};
