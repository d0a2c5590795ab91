/* src/measure/run.h — the timing loop.
 *
 * warmup calls (untimed, each synchronized) → memory peaks reset → for each
 * repeat: sync · t0 · call · sync · t1 · record. Time is integer nanoseconds
 * from CLOCK_MONOTONIC; the loop does no allocation, I/O or formatting (the
 * sample buffer is allocated before it; an optional progress thread reads a
 * counter and prints from outside the loop). */
#ifndef RPXPROF_RUN_H
#define RPXPROF_RUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/call_record.h"
#include "rpxprof/memory.h"
#include "rpxprof/model.h"
#include "rpxprof/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Synchronize every device the call may have used (NULL for the CPU). */
typedef int (*rpx_sync_fn)(void *ctx, rpx_error *err);

typedef struct rpx_run_config {
    long warmup;                  /* >= 0 */
    long repeats;                 /* >= 1 */
    rpx_sync_fn sync;             /* NULL: nothing to synchronize */
    void *sync_ctx;
    int progress;                 /* print a progress line on stderr (from 1 s after
                                     progress_since_ns): calls done, current p50, time left */
    volatile sig_atomic_t *stop;  /* if non-NULL and set, stop after the current call */
    void (*peaks_reset)(void *ctx); /* called after warmup with the host peak reset (GPU peaks) */
    void *peaks_ctx;
    /* called after every call, outside the timed span (GPU busy time) */
    void (*after_call)(void *ctx, int timed);
    void *after_ctx;
    /* optional: a caller-owned buffer of `repeats` samples (e.g. shared with a
     * parent process), and a counter of finished calls (warmup included),
     * stored after each call's sample, readable from another process */
    int64_t *samples;
    long *calls_done;
    /* targets that count failures (HTTP): a call returning
     * RPX_CALL_COUNTED_FAILURE is no sample; the run stops when the failures
     * (warmup included) reach max_failures (0: no limit). failed_done, when
     * set, is stored the count of failed timed calls (readable from another
     * process, like calls_done). */
    long max_failures;
    long *failed_done;
    long *failed_warmup_done;     /* the same for failed warmup calls */
    /* optional: stored the CLOCK_MONOTONIC time at which each call ended
     * (warmup included), right after calls_done, outside the timed span: a
     * watchdog in another process times the call in progress from it */
    int64_t *progress_ns;
    /* optional: each warmup call's duration (ns, synchronized like a timed
     * call), for the first warmup_keep warmup calls; not statistics */
    int64_t *warmup_samples;
    long warmup_keep;
    /* optional: distinct samples. When n_distinct > 0 each call receives
     * &distinct[k] instead of `inputs`: warmup call i takes k = i % n_distinct,
     * timed call i takes k = (distinct_offset + i) % n_distinct (sample-major
     * within each repetition; distinct_offset: the timed calls of the processes
     * before this one) */
    const rpx_inputs *distinct;
    size_t n_distinct;
    long distinct_offset;
    /* optional: writable inputs. Before every call (warmup and timed),
     * outside the timed span, the bytes of pristine[k] are copied over the
     * sample about to be called (distinct[k], or `inputs` with pristine[0]
     * when n_distinct is 0); the same arrays and sizes, the destination
     * writable. restore_ns: each timed call's restore time (`repeats`
     * entries); restore_warmup_ns: the warmup calls' restore times summed */
    const rpx_inputs *pristine;
    int64_t *restore_ns;
    int64_t *restore_warmup_ns;
    /* Paced calls (--rate HZ): timed call i starts at the earliest at
     * pace_start + i * period_ns (absolute deadlines, clock_nanosleep
     * TIMER_ABSTIME; pace_start: the timed loop's start). start_lag_ns[i]: how
     * long after its deadline call i started (NULL: not kept); late_starts:
     * calls whose deadline had passed when the previous one ended. 0: no pacing. */
    int64_t period_ns;
    int64_t *start_lag_ns;
    long *late_starts;
    /* optional: where each timed call ran (call_record.h). The mark is read
     * after the sync before t0 and closed right after t1, outside the timed
     * span; a successful call's record goes to index `measured`, beside its
     * sample. NULL: not recorded (no cost but a predicted branch). */
    const rpx_call_recorder *recorder;
    const rpx_call_records *records;
    /* --call-records cpu: the counters over the whole timed loop (read once
     * before the first timed call and once after the last); left untouched
     * when the loop does not run to its end */
    rpx_call_totals *record_totals;
    /* optional (--check-outputs): called after timed call i returned `rc` on
     * sample k (0 without distinct samples), after t1 and outside the timed
     * span, before the target's after_call hook (the outputs are still
     * there). NULL: never called (no cost but a predicted branch). */
    void (*check)(void *ctx, long i, size_t k, int rc);
    void *check_ctx;
    /* the progress line (progress != 0) across a run's processes */
    int64_t progress_since_ns;    /* the run's start (several processes: the first's); 0: the
                                     loop's */
    long progress_before;         /* timed calls of the run's processes before this one */
    long progress_total;          /* timed calls of the whole run; 0: this loop's repeats */
    int progress_process;         /* this process's number from 1; 0: not shown */
    /* a soft deadline (CLOCK_MONOTONIC ns; 0: none): once it has passed, no further
     * timed call starts (after the first); the run completes with what it measured */
    int64_t deadline_ns;
    /* optional (auto-ranging, src/runner/autorange.c): when the soft deadline
     * has passed, the loop asks replan(ctx, samples, measured, now) for the
     * next one instead of stopping, outside the timed span: a time after
     * `now` goes on, anything else stops (the run completes with what it
     * measured). Only at the deadlines it returns: no work in between. */
    int64_t (*replan)(void *ctx, const int64_t *samples, size_t measured, int64_t now);
    void *replan_ctx;
    /* the warmup's soft deadline (CLOCK_MONOTONIC ns; 0: none): once it has
     * passed, no further warmup call starts (after the first) */
    int64_t warmup_deadline_ns;
    /* optional (--timeline): when each call started, on the clock of the
     * samples, stored after the call ends, outside the timed span.
     * call_start_ns: each successful timed call's t0 (index `measured`, beside
     * its sample); warmup_start_ns: the first warmup_keep warmup calls' w0;
     * restore_start_ns: each timed call's restore start (`repeats` entries,
     * like restore_ns); warmup_restore_ns: {start, duration} of the first
     * warmup_keep warmup calls' restores. NULL: not kept. */
    int64_t *call_start_ns;
    int64_t *warmup_start_ns;
    int64_t *restore_start_ns;
    int64_t *warmup_restore_ns;
} rpx_run_config;

typedef enum rpx_run_status {
    RPX_RUN_COMPLETE = 0,
    RPX_RUN_FAILED,               /* the call (or a sync) returned an error */
    RPX_RUN_INTERRUPTED,          /* *stop was set */
    RPX_RUN_TOO_MANY_FAILURES     /* counted failures reached max_failures */
} rpx_run_status;

typedef struct rpx_run_result {
    rpx_run_status status;
    int64_t *samples_ns;          /* `measured` timed calls, in order; free with rpx_run_result_free */
    size_t measured;              /* successful timed calls */
    long warmup_done;
    long failed_call;             /* index of the failing call (warmup calls count from 0 too); -1 */
    int failed_in_warmup;
    long failed_calls;            /* counted failures among the timed calls */
    long failed_warmup_calls;     /* ... and among the warmup calls */
    char last_failure[256];       /* the last counted failure's message ("" if none) */
    rpx_memory_peaks memory;
    int64_t wall_ns;              /* from the first warmup call to the end of the loop */
    int owns_samples;             /* samples_ns was allocated by rpx_measure_run */
} rpx_run_result;

/* Run the loop. Returns 0 when the loop ran (check result->status: a failing
 * call fills `err` with the model's message), a negative code otherwise. */
int rpx_measure_run(const rpx_run_config *cfg, const rpx_target *target,
                    const rpx_inputs *inputs, rpx_run_result *result, rpx_error *err);
void rpx_run_result_free(rpx_run_result *result);

#ifdef __cplusplus
}
#endif
#endif
