/* plan.h — a run parsed once (plan.c): what the runner derives from a checked
 * rpx_runner_config before any process starts (the target's kind, the number
 * of worker processes, --cpus and --spread as a placement, the audits, the measured
 * sections the run keeps, the output checks' parameters) and the inputs every
 * process receives. Each value is worked out here once and passed on in this
 * parsed form: the workers, the stage and the report read the plan, never the
 * option's text again. Lifecycle: rpx__plan_build after rpx_runner_config_check
 * → rpx__plan_inputs once the inputs are loaded → read-only while the run goes
 * on; nothing in it is allocated. */
#ifndef RPX_RUNNER_PLAN_H
#define RPX_RUNNER_PLAN_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "rpxprof/model.h"
#include "rpxprof/options.h"
#include "rpxprof/runner.h"
#include "runner/outputs.h"

/* ---- placement.c ---- */
enum { RPX_PLACE_INHERIT = 0, RPX_PLACE_PINNED, RPX_PLACE_SPREAD };
typedef struct placement {
    int policy;                   /* RPX_PLACE_* */
    cpu_set_t allowed;            /* this process's own affinity when the run began */
    cpu_set_t requested;          /* --cpus, when has_requested */
    int has_requested;
    int rotation[CPU_SETSIZE];    /* --spread: the CPUs in turn (--cpus, else the allowed) */
    int n_rotation;
} placement;

struct rpx_nvml_watch;
struct rpx_kind;

#define RPX_SECTIONS_MAX 8        /* rows of the measured sections' table (section.h) */

typedef struct run_plan {
    const rpx_runner_config *c;   /* the run's options, checked (the run's own copy) */
    const char *kind;             /* the report's target_kind ("http", "python", ...) */
    const struct rpx_kind *row;   /* its row of the kinds table: what the kind can do */
    int processes;                /* worker processes to start (rpx_runner_processes) */
    int processes_asked;          /* more processes than calls were asked: the count asked
                                     (then reduced, and the report says so); 0: not */
    int spread_asked;             /* --spread changed the count from this; 0: it did not */
    placement place;              /* --cpus, parsed here once, and --spread's rotation */
    unsigned audits;              /* --audit: RPX__AUDIT_* (runner_internal.h); 0: none */
    double rate_hz;               /* --rate for a local target; 0: back to back (an HTTP
                                     target paces its own requests) */
    int call_records;             /* RPX_CALL_RECORDS_*: off for an HTTP target */
    unsigned sections;            /* the measured sections this run keeps: bit i for
                                     section i of the table (section.h) */
    outputs_params outputs;       /* --check-outputs, --save-outputs, --reference-outputs;
                                     read when the outputs section is on */
    /* the inputs (samples.c), set by rpx__plan_inputs: what the calls receive
     * (samples[0] first) and, with --writable-inputs, the bytes restored
     * before every call (NULL: read-only) */
    const rpx_inputs *samples;
    size_t n_samples;
    const rpx_inputs *pristine;
    /* the files the inputs were read from (an output never replaces one); set by the runner */
    const char *const *input_paths;
    size_t n_input_paths;
    struct rpx_nvml_watch *gpu_watch; /* NVML sampled by the parent during the timed calls
                                     (gpu_watch.c); NULL: none */
    /* auto-ranging (autorange.c, set by rpx__autorange_attach): the timed loop's
     * stopping rule, asked after each process's first timed call and then at
     * the times it names (rpx_run_config.replan); NULL: none. warmup_max_s:
     * each process's warmup ends after this many seconds (at least one call);
     * 0: none */
    int64_t (*replan)(void *ctx, const int64_t *samples, size_t measured, int64_t now);
    void *replan_ctx;
    double warmup_max_s;
} run_plan;

/* The plan of a checked config (c outlives it): RPX_EUSAGE when a target
 * precision cannot be reached with the processes' calls, or when the output
 * checks' folders are refused (outputs.c). */
int rpx__plan_build(const rpx_runner_config *c, const char *kind, const struct rpx_kind *row,
                    run_plan *plan, rpx_error *err);
/* The inputs the processes receive, once loaded. */
void rpx__plan_inputs(run_plan *plan, const rpx_inputs *samples, size_t n,
                      const rpx_inputs *pristine);
/* The number of processes from the options and --spread's count of CPUs (0:
 * no --spread); *asked (may be NULL): before the calls and the CPUs bounded it. */
int rpx__plan_processes(const rpx_runner_config *c, const struct rpx_kind *row, int spread_cpus,
                        int *asked);

#endif
