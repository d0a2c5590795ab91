/* section.h — a measured section as a module: something a run measures
 * beside the latency samples (where each call ran, the timeline, the output
 * checks, the GPU busy time, the per-layer times), with its own slice
 * of each worker process's shared block (run_shared) and its own key in the
 * report. The runner knows sections only through this table (sections.c);
 * adding one is one file that defines an rpx_section and one row in
 * RPX_SECTIONS (below).
 *
 * Lifecycle of a section in a run (every hook but `on` may be NULL; a
 * section that is off keeps its key null when off_is_null, else the report
 * leaves the key out):
 *
 *   parent, once     on(plan)            is it measured in this run (plan.c
 *                                        keeps the answer as a bit of
 *                                        plan->sections; nothing else runs
 *                                        for a section that is off)
 *                    prepare(plan)       before the first process (files to
 *                                        check or create)
 *   parent, each     slice_bytes(r, w)   the bytes of its slice of a block
 *   process                              for r timed calls and w kept warmup
 *                                        calls; mapped zeroed with the block,
 *                                        touched only by this section
 *   model's process  mark(sp, event)     at the stage's events (load, setup,
 *                                        setup end, teardown, teardown end)
 *                    begin(sp, err)      after the target's setup, before
 *                                        warmup: opens sp->state and wires
 *                                        its per-call work into the loop
 *                                        (sp->loop: the loop's own slots,
 *                                        e.g. arrays the loop stores into
 *                                        beside each sample); an error fails
 *                                        the stage
 *                    timed_call(state, i, k, rc)
 *                                        after timed call i (sample k) ended,
 *                                        after t1: outside the timed span,
 *                                        before the target's own after-call
 *                                        hook (the call's outputs are there)
 *                    after_call(state, timed)
 *                                        after every call, warmup included,
 *                                        outside the timed span
 *                    after_loop(sp)      after a timed loop that completed
 *                                        (every timed call made), before the
 *                                        exports and the target's teardown:
 *                                        untimed work of its own through the
 *                                        target (--layers' profiled calls);
 *                                        what goes wrong there is the
 *                                        section's to report in its export
 *                    export_json(sp)     after a loop that did not fail: its
 *                                        findings as JSON, carried to the
 *                                        parent under its key in the
 *                                        process's export (a text in the
 *                                        block); an export that does not fit
 *                                        is a note in the report, never
 *                                        silence (stage.c, runner.c)
 *                    end(sp)             for each section whose begin ran,
 *                                        after the target's teardown, whatever
 *                                        the outcome (last begun first):
 *                                        closes sp->state
 *   parent, once     merge(m, out)       after the last process, before the
 *                                        report is built: its report value
 *                                        from every process's slice and
 *                                        export; out->value goes under `key`
 *                                        (the report is built once, with it)
 *
 * Nothing here runs between a call's t0 and t1: the loop's timed span keeps
 * only the call (measure/run.h). */
#ifndef RPX_RUNNER_SECTION_H
#define RPX_RUNNER_SECTION_H

#include <jansson.h>
#include <stddef.h>

#include "measure/run.h"
#include "report/run_report.h"
#include "runner/plan.h"
#include "runner/stage.h"

struct rpx_cuda;

/* The stage's events a section may mark (rpx_section.mark). */
typedef enum section_event {
    SECTION_LOAD = 0,             /* before the target is opened */
    SECTION_SETUP,                /* before the target's setup */
    SECTION_SETUP_END,            /* after setup and every section's begin */
    SECTION_TEARDOWN,             /* before the target's teardown */
    SECTION_TEARDOWN_END          /* after it */
} section_event;

/* A section in the model's process. */
typedef struct section_proc {
    const run_params *p;          /* this process's stage; p->plan is the run's */
    run_shared *sh;               /* its block */
    void *slice;                  /* this section's slice of it; NULL when it has none */
    rpx_target *target;           /* NULL before the target is opened */
    struct rpx_cuda *cuda;        /* NULL: not a cuda run */
    rpx_run_config *loop;         /* the timing loop's configuration (begin wires into it) */
    void *state;                  /* the section's own, set by begin */
} section_proc;

/* What merge sees: every process's slice and export. */
typedef struct section_merge {
    const run_plan *plan;
    int n;                        /* worker processes started */
    run_shared *const *procs;     /* their blocks */
    void *const *slices;          /* this section's slice of each block (NULL: none) */
    json_t *const *exports;       /* this section's export of each process (NULL: none: it
                                     failed before, or its export did not fit) */
    rpx_run_process *views;       /* the report's view of each process, to add to */
    const rpx_run_data *rd;       /* the report's data gathered so far */
} section_merge;

/* What merge gives the report. */
typedef struct section_out {
    json_t *value;                /* under the section's key (a new reference); NULL: null */
    int check_failed;             /* a completed run failed the section's check: status
                                     RPX_RUNNER_OUTPUTS_DIFFER, `message` its error */
    char message[768];
} section_out;

typedef struct rpx_section {
    const char *key;              /* its key in the report and in a process's export */
    int off_is_null;              /* off in a run: the key is null (else it is left out) */
    int (*on)(const run_plan *plan);
    int (*prepare)(const run_plan *plan, rpx_error *err);
    size_t (*slice_bytes)(long repeats, long warmup_keep);
    void (*mark)(section_proc *sp, section_event event);
    int (*begin)(section_proc *sp, rpx_error *err);
    void (*timed_call)(void *state, long i, size_t k, int rc);
    void (*after_call)(void *state, int timed);
    void (*after_loop)(section_proc *sp);
    json_t *(*export_json)(section_proc *sp);
    void (*end)(section_proc *sp);
    int (*merge)(const section_merge *m, section_out *out);
} rpx_section;

/* The table: one row per section, in the order the hooks run and the keys
 * are set; row X(name) is the rpx_section rpx__section_name that the file
 * section_name.c defines. Adding a section is its file and its row. */
#define RPX_SECTIONS(X)                                                                  \
    X(gpu_time)                                                                          \
    X(outputs)                                                                           \
    X(call_records)                                                                      \
    X(timeline)                                                                          \
    X(layers)

#define RPX__SECTION_DECLARE(name) extern const rpx_section rpx__section_##name;
RPX_SECTIONS(RPX__SECTION_DECLARE)
#undef RPX__SECTION_DECLARE

/* The table as an array (sections.c). */
extern const rpx_section *const rpx__sections[];
extern const size_t rpx__n_sections;

/* Whether section i is on in the plan. */
static inline int rpx__section_on(const run_plan *plan, size_t i)
{
    return (plan->sections >> i) & 1u;
}

/* ---- sections.c: the runner's side of the table ---- */

/* The bytes of the on sections' slices of one block. */
size_t rpx__sections_bytes(const run_plan *plan, long repeats, long warmup_keep);
/* Their slices laid out in `mem` (rpx__sections_bytes of it), into sh->slice. */
void rpx__sections_layout(const run_plan *plan, run_shared *sh, char *mem, long repeats,
                          long warmup_keep);

/* The on sections in the model's process, and the loop's per-call hooks. */
typedef struct section_set {
    section_proc sp[RPX_SECTIONS_MAX];
    const rpx_section *s[RPX_SECTIONS_MAX];
    int n, begun;
    /* the after_call hooks in table order (the stage's after-call calls them) */
    void (*after[RPX_SECTIONS_MAX])(void *, int);
    void *after_state[RPX_SECTIONS_MAX];
    int n_after;
    /* the timed_call hooks: one is wired into the loop straight, several
     * through a dispatcher */
    void (*timed[RPX_SECTIONS_MAX])(void *, long, size_t, int);
    void *timed_state[RPX_SECTIONS_MAX];
    int n_timed;
} section_set;

void rpx__sections_open(section_set *set, const run_params *p, run_shared *sh);
void rpx__sections_mark(section_set *set, section_event event);
/* Each section's begin, in order (the target is open and set up); the
 * timed_call hooks wired into loop->check. A negative code from the first
 * that failed. */
int rpx__sections_begin(section_set *set, rpx_target *t, struct rpx_cuda *cuda,
                        rpx_run_config *loop, rpx_error *err);
/* The after_call hooks, in table order. */
static inline void rpx__sections_after_call(const section_set *set, int timed)
{
    int i;
    for (i = 0; i < set->n_after; i++) set->after[i](set->after_state[i], timed);
}
/* Each begun section's after_loop, in table order (a completed timed loop). */
void rpx__sections_after_loop(section_set *set);
/* Each export under its key into `o`. */
void rpx__sections_export(section_set *set, json_t *o);
void rpx__sections_end(section_set *set);

/* The parent, after the last process: each on section's value (values[i]
 * for table row i, a new reference or NULL) from the processes' blocks and
 * their parsed exports (exports[j]: process j's, NULL: none). out_check: the
 * first check a section failed ("" when none). -1 out of memory. */
int rpx__sections_merge(const run_plan *plan, run_shared *const *procs, json_t *const *exports,
                        int n, rpx_run_process *views, const rpx_run_data *rd,
                        json_t **values, section_out *out_check);

#endif
