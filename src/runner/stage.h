/* stage.h — the measured stage of a run: the target's setup, the
 * device, the loop and teardown, run in a child process (the default) or in
 * this one (--no-isolate). Everything the report needs from it lands in one
 * run_shared block, which a crashed, hung or killed child leaves readable. */
#ifndef RPX_RUNNER_STAGE_H
#define RPX_RUNNER_STAGE_H

#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "measure/call_record.h"
#include "rpxprof/clock.h"
#include "rpxprof/memory.h"
#include "rpxprof/model.h"
#include "measure/rss_trend.h"
#include "rpxprof/runner.h"
#include "rpxprof/target.h"
#include "runner/plan.h"

typedef enum run_outcome {
    OUTCOME_COMPLETE = 0,
    OUTCOME_INTERRUPTED,          /* SIGINT/SIGTERM: stopped after the current call, or the
                                     call in progress was abandoned after --grace */
    OUTCOME_FAILED,               /* an error before or during the loop: no report */
    OUTCOME_CRASHED,              /* the child died from a signal */
    OUTCOME_TIMED_OUT,            /* --timeout or --call-timeout: the child was killed */
    OUTCOME_KILLED,               /* SIGKILL from elsewhere (the OOM killer, a user) */
    OUTCOME_CALLS_FAILED          /* counted failures (HTTP): every call, or --max-failures */
} run_outcome;

typedef enum run_phase { PHASE_LOAD = 0, PHASE_SETUP, PHASE_LOOP, PHASE_TEARDOWN, PHASE_DONE } run_phase;

struct rpx_nvml_watch;

/* One process's stage: the run's plan (its options as plan->c, what was
 * parsed from them, the inputs) and what differs from process to process. */
typedef struct run_params {
    const run_plan *plan;
    long repeats;                 /* this process's timed calls (its slice of the run's) */
    int process_index;            /* this process's index among the run's (0 first) */
    long progress_total;          /* the progress line's timed calls of the whole run */
    int64_t run_start_ns;         /* --timeout counts from here (the first process's start);
                                     0: from this stage's start */
    long sample_offset;           /* the timed calls of the processes before this one */
    long bodies_first;            /* the calls (warmup and timed) of the processes before this
                                     one: where an HTTP target's varying bodies go on */
    const cpu_set_t *cpus;        /* this process's CPUs, set before the target is loaded
                                     (the workers fill it in); NULL: the inherited mask */
} run_params;

typedef struct run_shared {
    volatile sig_atomic_t stop;   /* set by either process's SIGINT/SIGTERM handler */
    int stop_signal;              /* the first SIGINT/SIGTERM this process got, 0 if none */
    int abandoned;                /* the call in progress was abandoned after a signal */
    long calls_done;              /* finished calls, warmup included (atomic) */
    int64_t progress_ns;          /* when the last call ended (CLOCK_MONOTONIC, atomic) */
    int phase;                    /* run_phase (atomic) */
    int64_t phase_start_ns;       /* when the phase began (atomic) */
    int outcome;                  /* run_outcome */
    long warmup_done;
    size_t measured;
    long failed_call;             /* index of the call that failed, crashed or hung */
    int failed_in_warmup;
    long failed_calls;            /* counted failures among timed calls (atomic) */
    long failed_warmup_calls;
    int signal;                   /* the signal that ended the child, 0 if none */
    int64_t wall_ns;
    rpx_memory_peaks memory;
    int64_t child_maxrss_bytes;   /* from wait4, -1 when not isolated */
    rpx_timer_info timer;
    int timer_ok;
    int64_t sync_ns;
    int has_sync;
    char error[RPX_ERROR_MESSAGE_SIZE];
    /* the resident set across the timed calls, read by the model's process */
    rpx_rss_trend trend;
    /* the process's export: {"cuda":..,"cuda_peaks":..,"cuda_method":..,"target":..}
     * and each measured section's under its key (section.h) */
    size_t json_cap, json_len;
    char *json;                   /* points into this block */
    size_t export_needed;         /* the bytes of an export that did not fit json_cap (it
                                     is not there; the report says so); (size_t)-1: it could
                                     not be written (out of memory); 0: it fitted */
    int64_t *samples;             /* `repeats` entries, points into this block */
    int64_t *warmup_samples;      /* the first warmup_keep warmup calls' durations */
    long warmup_keep;
    size_t mapped;                /* size of the mapping */
    /* --writable-inputs: each timed call's restore time (`repeats` entries,
     * points into this block), and the warmup calls' summed */
    int64_t *restore_samples;
    int64_t restore_warmup_ns;
    /* --rate (paced calls): each timed call's start after its deadline
     * (`repeats` entries, points into this block), and the late starts */
    int64_t *start_lag;
    long late_starts;
    /* a write into read-only inputs: {sample + 1, array}, {0, 0} if none */
    int input_fault[2];
    /* the CPUs the model's process may run on, as it read them itself after
     * its mask was set (placement.c); empty: not read */
    cpu_set_t affinity;
    /* each measured section's slice of this block (section.h), in the
     * order of the table; NULL: the section is off in this run */
    void *slice[RPX_SECTIONS_MAX];
    /* what the worker varied for itself before its target was loaded
     * (vary.c): RPX_VARIED_* bits, and the pad below its stage's frame */
    unsigned varied;
    size_t stack_pad;
} run_shared;

#define RPX_WARMUP_KEEP 100000L   /* warmup durations kept per process */

/* A zeroed block for one process's `repeats` samples (1 to the table's
 * RPX_RUNNER_MAX_REPEATS, checked by the runner), its first warmup
 * durations and the slices of the plan's measured sections, in memory shared
 * with children; NULL when the memory cannot be mapped. The export's room
 * is 64 KiB + 32 bytes a timed call (RPX_TEST_EXPORT_CAP=BYTES, a test knob,
 * makes it smaller). */
run_shared *rpx__run_shared_create(const run_plan *plan, long repeats);
void rpx__run_shared_free(run_shared *sh);

/* Between rpx__stage_begin and rpx__stage_end (around every process of a
 * run) SIGINT and SIGTERM are handled: the first sets the running block's
 * stop (the loop stops after the current call; no further process starts);
 * when the call does not end within grace_s, or on a second signal, the child
 * is killed and the outcome is still interrupted. Without isolation a second
 * signal ends this process. With stdout_to_stderr the model's stdout goes to
 * stderr (the report goes to stdout). A begin inside another (an audit's pair
 * inside its run) keeps the outer one's handlers and the signals it got. */
void rpx__stage_begin(int isolate, int stdout_to_stderr);
void rpx__stage_end(void);
/* The first SIGINT/SIGTERM since the outermost rpx__stage_begin, 0 if none. */
int rpx__stage_stop_signal(void);

/* Run one process's stage in this process (--no-isolate) or in a child; the
 * calls receive p->plan->samples.
 * Returns when the stage is over; sh->outcome says how. */
void rpx__run_stage(const run_params *p, run_shared *sh);

/* In a child just forked from `parent`: die with the parent (SIGKILL when it
 * ends, whatever ends it), so that a killed rpxprof leaves no orphan running
 * the model. Returns -1 when the parent is already gone (then _exit). */
int rpx__die_with_parent(pid_t parent);

#endif
