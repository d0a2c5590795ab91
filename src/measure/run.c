/* run.c — owns the timing loop and its progress line. */
#include "measure/run.h"
#include "rpxprof/send_delay.h"
#include "loader/kinds.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpxprof/clock.h"
#include "rpxprof/error.h"

typedef struct progress {
    _Atomic long done;            /* calls finished, warmup included */
    _Atomic size_t measured;      /* samples[0..measured) written (release/acquire) */
    _Atomic int finished;
    long total, warmup;           /* this loop's calls (warmup included), its warmup */
    long before, run_total;       /* the run's timed calls: before this loop, in all */
    int process;                  /* shown when the run has more timed calls than this loop */
    const int64_t *samples;
    int64_t *scratch;             /* a copy of at most PROGRESS_KEEP samples, for the p50 */
    int64_t start_ns, since_ns;
    pthread_t thread;
    int running;
} progress;

#define PROGRESS_KEEP 20001       /* samples the current p50 is taken over (evenly spaced) */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The median of the samples so far (of at most PROGRESS_KEEP of them, evenly
 * spaced), in ms; NaN when there is none. */
static double progress_p50(progress *p)
{
    size_t m = atomic_load_explicit(&p->measured, memory_order_acquire), n, i;
    if (m == 0 || !p->scratch || !p->samples) return (double)NAN;
    n = m < PROGRESS_KEEP ? m : PROGRESS_KEEP;
    for (i = 0; i < n; i++) p->scratch[i] = p->samples[n == m ? i : i * (m - 1) / (n - 1)];
    qsort(p->scratch, n, sizeof *p->scratch, cmp_i64);
    return (n % 2 ? (double)p->scratch[n / 2]
                  : ((double)p->scratch[n / 2 - 1] + (double)p->scratch[n / 2]) / 2) / 1e6;
}

/* "12.3 ms", "850 us", "1.20 s": three significant digits */
static void progress_ms(double ms, char *buf, size_t size)
{
    if (ms != ms) snprintf(buf, size, "n/a");
    else if (ms >= 1000) snprintf(buf, size, "%.3g s", ms / 1000);
    else if (ms >= 1) snprintf(buf, size, "%.3g ms", ms);
    else snprintf(buf, size, "%.3g us", ms * 1000);
}

static void *progress_main(void *arg)
{
    progress *p = arg;
    const struct timespec tick = {0, 200 * 1000 * 1000};
    int printed = 0;
    int64_t p50_at = 0;           /* the p50 is taken again at most once a second */
    double p50_ms = (double)NAN;
    while (!atomic_load_explicit(&p->finished, memory_order_acquire)) {
        long done = atomic_load_explicit(&p->done, memory_order_relaxed);
        int64_t now = rpx_clock_now_ns();
        double elapsed = (double)(now - p->start_ns) / 1e9;
        char proc[32] = "", p50[32];
        /* runs shorter than a second draw nothing */
        if ((double)(now - p->since_ns) / 1e9 < 1.0) {
            nanosleep(&tick, NULL);
            continue;
        }
        if (p->process > 0 && p->run_total > p->total - p->warmup)
            snprintf(proc, sizeof proc, " (process %d)", p->process);
        if (done < p->warmup) {
            fprintf(stderr, "\r\033[Krpxprof: warmup %ld/%ld%s, %.1f s elapsed", done,
                    p->warmup, proc, elapsed);
        } else {
            long timed = done - p->warmup, all = p->before + timed;
            /* this loop's pace over every timed call of the run still to come */
            double per = timed > 0 ? (elapsed / (double)done) : 0.0;
            double left = per * (double)(p->run_total - all);
            if (p50_ms != p50_ms || now - p50_at >= 1000000000LL) {
                p50_ms = progress_p50(p);
                p50_at = now;
            }
            progress_ms(p50_ms, p50, sizeof p50);
            fprintf(stderr, "\r\033[Krpxprof: %ld/%ld calls%s, p50 %s, %.0f s left", all,
                    p->run_total, proc, p50, left < 0 ? 0.0 : left + 0.5);
        }
        fflush(stderr);
        printed = 1;
        nanosleep(&tick, NULL);
    }
    if (printed) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    return NULL;
}

static void progress_start(progress *p, const rpx_run_config *cfg, const int64_t *samples)
{
    atomic_init(&p->done, 0);
    atomic_init(&p->measured, 0);
    atomic_init(&p->finished, 0);
    p->total = cfg->warmup + cfg->repeats;
    p->warmup = cfg->warmup;
    p->before = cfg->progress_before > 0 ? cfg->progress_before : 0;
    p->run_total = cfg->progress_total > p->before + cfg->repeats ? cfg->progress_total
                                                                  : p->before + cfg->repeats;
    p->process = cfg->progress_process;
    p->samples = samples;
    p->scratch = malloc(PROGRESS_KEEP * sizeof *p->scratch);
    p->start_ns = rpx_clock_now_ns();
    p->since_ns = cfg->progress_since_ns > 0 ? cfg->progress_since_ns : p->start_ns;
    p->running = pthread_create(&p->thread, NULL, progress_main, p) == 0;
}

static void progress_stop(progress *p)
{
    if (p->running) {
        atomic_store_explicit(&p->finished, 1, memory_order_release);
        pthread_join(p->thread, NULL);
        p->running = 0;
    }
    free(p->scratch);
    p->scratch = NULL;
}

static int call_failed(rpx_run_result *r, const rpx_target *t, long index, int in_warmup, int rc,
                       const rpx_error *merr, rpx_error *err)
{
    r->status = RPX_RUN_FAILED;
    r->failed_call = index;
    r->failed_in_warmup = in_warmup;
    if (t->kind && !rpx__kind_has(t->kind, RPX_KIND_C_ABI)) /* no return code to show */
        return rpx_error_set(err, RPX_EMODEL, "--model %s: %s call %ld failed: %s",
                             t->display_spec ? t->display_spec : t->spec,
                             in_warmup ? "warmup" : "timed", index,
                             merr->message[0] ? merr->message : "no message given"),
               0;
    rpx_error_set(err, RPX_EMODEL, "--model %s: %s call %ld failed (returned %d): %s", t->spec,
                  in_warmup ? "warmup" : "timed", index, rc,
                  merr->message[0] ? merr->message : "no message given");
    return 0;
}

/* The pristine bytes of sample k over the one about to be called. */
static void restore_sample(const rpx_inputs *dst, const rpx_inputs *src)
{
    size_t t;
    for (t = 0; t < dst->count && t < src->count; t++)
        if (dst->tensors[t].nbytes)
            memcpy((void *)dst->tensors[t].data, src->tensors[t].data, dst->tensors[t].nbytes);
}

/* Wait for timed call i's deadline (absolute: a late call does not move the
 * ones after it), and record how late it starts. The sleep ends
 * RPX_SEND_SPIN_NS early (the timer slack and the wake-up are longer than
 * that), and the rest is spun on the monotonic clock: the start lag of a call
 * that was not late is then the clock's read, not the scheduler's. */
static void pace(const rpx_run_config *cfg, int64_t pace_start, long i)
{
    int64_t due = pace_start + (int64_t)i * cfg->period_ns, now = rpx_clock_now_ns();
    if (now > due) {
        if (cfg->late_starts && i > 0) (*cfg->late_starts)++; /* the first is the schedule's start */
    } else {
        /* in slices of at most 20 ms: a stop asked through shared memory (the
         * parent's SIGTERM reaches no worker) ends the wait at once, and no
         * call is left to abandon */
        const int64_t slice = 20 * 1000 * 1000, wake = due - RPX_SEND_SPIN_NS;
        while (now < wake && !(cfg->stop && *cfg->stop)) {
            int64_t until = wake - now > slice ? now + slice : wake;
            struct timespec ts = {(time_t)(until / 1000000000LL), (long)(until % 1000000000LL)};
            (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
            now = rpx_clock_now_ns();
        }
        while (now < due && !(cfg->stop && *cfg->stop)) now = rpx_clock_now_ns();
    }
    if (cfg->start_lag_ns) cfg->start_lag_ns[i] = now - due;
}

/* How a loop ends: complete, or why it stopped early (rpx_measure_run's tail). */
typedef enum loop_end {
    END_WARMUP_FAILED = 1,        /* a warmup call (or its sync) returned an error */
    END_TIMED_FAILED,             /* a timed call (or its sync) did */
    END_TOO_MANY_FAILURES,        /* counted failures reached max_failures */
    END_WARMUP_COUNTED_FAILURE,   /* a counted failure in warmup, not allowed there */
    END_INTERRUPTED               /* *stop was set */
} loop_end;

/* The checks and the result's start: 0, or a negative code. */
static int loop_start(const rpx_run_config *cfg, rpx_run_result *result, int64_t **samples,
                      rpx_error *err)
{
    if (cfg->warmup < 0)
        return rpx_error_set(err, RPX_EINVAL, "--warmup %ld: must be 0 or more", cfg->warmup);
    if (cfg->repeats < 1)
        return rpx_error_set(err, RPX_EINVAL, "--repeats %ld: must be 1 or more", cfg->repeats);
    memset(result, 0, sizeof *result);
    result->failed_call = -1;
    rpx_memory_peaks_init(&result->memory);
    *samples = cfg->samples;
    if (!*samples) {
        *samples = calloc((size_t)cfg->repeats, sizeof **samples);
        if (!*samples)
            return rpx_error_set(err, RPX_ENOMEM,
                                 "--repeats %ld: cannot allocate the sample buffer", cfg->repeats);
        result->owns_samples = 1;
    }
    result->samples_ns = *samples;
    return 0;
}

/* A loop that stopped early: the progress line gone, the wall time, the
 * status and the message (call i returned rc with merr). */
static int loop_stopped(loop_end how, const rpx_run_config *cfg, const rpx_target *target,
                        progress *prog, int64_t start, long i, int rc, rpx_error *merr,
                        rpx_run_result *result, rpx_error *err)
{
    const char *shown = target->display_spec ? target->display_spec : target->spec;
    const char *why;
    merr->message[sizeof merr->message - 1] = '\0'; /* the model may fill it to the end */
    why = merr->message[0] ? merr->message : "no message given";
    if (how == END_TIMED_FAILED ||
        (how == END_INTERRUPTED && result->warmup_done == cfg->warmup))
        rpx_memory_end_inference(&result->memory);
    progress_stop(prog);
    result->wall_ns = rpx_clock_now_ns() - start;
    switch (how) {
    case END_WARMUP_FAILED: return call_failed(result, target, i, 1, rc, merr, err);
    case END_TIMED_FAILED: return call_failed(result, target, i, 0, rc, merr, err);
    case END_TOO_MANY_FAILURES:
        result->status = RPX_RUN_TOO_MANY_FAILURES;
        rpx_error_set(err, RPX_EMODEL,
                      "--model %s: %ld calls failed (--max-failures %ld); the last: %s", shown,
                      result->failed_calls + result->failed_warmup_calls, cfg->max_failures, why);
        return 0;
    case END_WARMUP_COUNTED_FAILURE:
        /* a server that fails its warmup (refused, timed out, an error status) is not
         * measured: the run ends with the reason rather than waiting out every call */
        result->status = RPX_RUN_TOO_MANY_FAILURES;
        result->failed_call = i;
        result->failed_in_warmup = 1;
        rpx_error_set(err, RPX_EMODEL,
                      "--model %s: warmup call %ld of %ld failed: %s; a failed warmup call ends "
                      "the run (--allow-warmup-failures counts it towards --max-failures "
                      "instead)",
                      shown, i + 1, cfg->warmup, why);
        return 0;
    default:
        result->status = RPX_RUN_INTERRUPTED;
        rpx_error_set(err, RPX_EINTERRUPTED, "interrupted after %zu timed calls",
                      result->measured);
        return 0;
    }
}

/* The warmup calls, each synchronized and timed like a timed call (not
 * statistics). 0 when they all ran, else how the loop ends (*at: the call). */
static loop_end warmup(const rpx_run_config *cfg, const rpx_target *target,
                       const rpx_inputs *inputs, progress *prog, rpx_run_result *result,
                       long *at, int *rc_out, rpx_error *merr)
{
    const rpx_call_fn call = target->hooks.call;
    void *const state = target->hooks.state;
    const rpx_sync_fn sync = cfg->sync;
    volatile sig_atomic_t *const stop = cfg->stop;
    const rpx_inputs *const many = cfg->n_distinct > 0 ? cfg->distinct : NULL;
    const size_t n_many = many ? cfg->n_distinct : 1;
    const rpx_inputs *in = many ? &many[0] : inputs;
    size_t k;
    long i;
    int rc = 0;
    loop_end how = 0;
    for (i = 0, k = 0; i < cfg->warmup; i++) {
        int64_t w0, w1;
        if (stop && *stop) {
            how = END_INTERRUPTED;
            break;
        }
        if (cfg->warmup_deadline_ns > 0 && i > 0 && rpx_clock_now_ns() >= cfg->warmup_deadline_ns)
            break;
        if (many) in = &many[k];
        if (cfg->pristine) {
            int64_t r0 = rpx_clock_now_ns(), r1;
            restore_sample(in, &cfg->pristine[k]);
            r1 = rpx_clock_now_ns();
            if (cfg->restore_warmup_ns) *cfg->restore_warmup_ns += r1 - r0;
            if (cfg->warmup_restore_ns && i < cfg->warmup_keep) {
                cfg->warmup_restore_ns[2 * i] = r0;
                cfg->warmup_restore_ns[2 * i + 1] = r1 - r0;
            }
        }
        if (++k == n_many) k = 0;
        if (sync && (rc = sync(cfg->sync_ctx, merr)) != 0) {
            how = END_WARMUP_FAILED;
            break;
        }
        w0 = rpx_clock_now_ns();
        rc = call(state, in, merr);
        if (rc == 0 && sync) rc = sync(cfg->sync_ctx, merr);
        w1 = rpx_clock_now_ns();
        if (cfg->warmup_samples && i < cfg->warmup_keep) cfg->warmup_samples[i] = w1 - w0;
        if (cfg->warmup_start_ns && i < cfg->warmup_keep) cfg->warmup_start_ns[i] = w0;
        if (target->hooks.after_call) target->hooks.after_call(state, 0, rc);
        if (rc != 0) {
            if (!target->hooks.counts_failures || rc != RPX_CALL_COUNTED_FAILURE) {
                how = END_WARMUP_FAILED;
                break;
            }
            result->failed_warmup_calls++;
            if (cfg->failed_warmup_done)
                __atomic_store_n(cfg->failed_warmup_done, result->failed_warmup_calls,
                                 __ATOMIC_RELEASE);
            snprintf(result->last_failure, sizeof result->last_failure, "%.250s", merr->message);
            if (!target->hooks.allow_warmup_failures) {
                how = END_WARMUP_COUNTED_FAILURE;
                break;
            }
            if (cfg->max_failures > 0 && result->failed_warmup_calls >= cfg->max_failures) {
                how = END_TOO_MANY_FAILURES;
                break;
            }
        }
        if (cfg->after_call) cfg->after_call(cfg->after_ctx, 0);
        result->warmup_done = i + 1;
        if (cfg->calls_done) __atomic_store_n(cfg->calls_done, i + 1, __ATOMIC_RELEASE);
        if (cfg->progress_ns) __atomic_store_n(cfg->progress_ns, w1, __ATOMIC_RELEASE);
        if (cfg->progress) atomic_store_explicit(&prog->done, i + 1, memory_order_relaxed);
    }
    *at = i;
    *rc_out = rc;
    return how;
}

int rpx_measure_run(const rpx_run_config *cfg, const rpx_target *target,
                    const rpx_inputs *inputs, rpx_run_result *result, rpx_error *err)
{
    const rpx_call_fn call = target ? target->hooks.call : NULL;
    void *const state = target ? target->hooks.state : NULL;
    void (*const target_after)(void *, int, int) = target ? target->hooks.after_call : NULL;
    const int counts = target ? target->hooks.counts_failures : 0;
    const long max_failures = cfg ? cfg->max_failures : 0;
    long *const failed_done = cfg ? cfg->failed_done : NULL;
    const rpx_sync_fn sync = cfg ? cfg->sync : NULL;
    void *const sync_ctx = cfg ? cfg->sync_ctx : NULL;
    volatile sig_atomic_t *const stop = cfg ? cfg->stop : NULL;
    void (*const after_call)(void *, int) = cfg ? cfg->after_call : NULL;
    long *const calls_done = cfg ? cfg->calls_done : NULL;
    int64_t *const progress_ns = cfg ? cfg->progress_ns : NULL;
    void *const after_ctx = cfg ? cfg->after_ctx : NULL;
    void (*const check)(void *, long, size_t, int) = cfg ? cfg->check : NULL;
    void *const check_ctx = cfg ? cfg->check_ctx : NULL;
    const rpx_inputs *const many = cfg && cfg->n_distinct > 0 ? cfg->distinct : NULL;
    const size_t n_many = many ? cfg->n_distinct : 1;
    const rpx_inputs *const pristine = cfg ? cfg->pristine : NULL;
    const rpx_call_recorder *const rec = cfg && cfg->records ? cfg->recorder : NULL;
    const int rec_full = rec && rec->info.full;
    rpx_call_mark mark, loop_mark;
    const rpx_inputs *in;
    size_t k;
    progress prog = {0};
    rpx_error merr;
    int64_t *samples;
    int64_t start, pace_start, deadline = cfg ? cfg->deadline_ns : 0;
    size_t measured = 0;
    long i;
    int rc;
    loop_end how;

    if (!cfg || !target || !call || (!inputs && !many) || !result)
        return rpx_error_set(err, RPX_EINVAL, "rpx_measure_run: missing argument");
    if (target->hooks.run) return target->hooks.run(state, cfg, inputs, result, err);
    if ((rc = loop_start(cfg, result, &samples, err)) != 0) return rc;
    memset(&merr, 0, sizeof merr);
    memset(&mark, 0, sizeof mark);
    memset(&loop_mark, 0, sizeof loop_mark);
    if (cfg->progress) progress_start(&prog, cfg, samples);

    start = rpx_clock_now_ns();
    if ((how = warmup(cfg, target, inputs, &prog, result, &i, &rc, &merr)) != 0)
        return loop_stopped(how, cfg, target, &prog, start, i, rc, &merr, result, err);
    in = many ? &many[0] : inputs;
    rpx_memory_begin_inference(&result->memory);
    if (cfg->peaks_reset) cfg->peaks_reset(cfg->peaks_ctx);
    k = many && cfg->distinct_offset > 0 ? (size_t)cfg->distinct_offset % n_many : 0;
    if (rec && !rec_full) rpx_call_loop_begin(rec, &loop_mark); /* right before the first call */
    pace_start = rpx_clock_now_ns();
    for (i = 0; i < cfg->repeats; i++) {
        int64_t t0, t1;
        if (stop && *stop) goto interrupted;
        if (deadline > 0 && i > 0) {
            int64_t now = rpx_clock_now_ns();
            if (now >= deadline &&
                (!cfg->replan || (deadline = cfg->replan(cfg->replan_ctx, samples, measured, now)) <= now))
                break;
        }
        if (many) in = &many[k];
        if (pristine) {
            int64_t r0 = rpx_clock_now_ns();
            restore_sample(in, &pristine[k]);
            if (cfg->restore_ns) cfg->restore_ns[i] = rpx_clock_now_ns() - r0;
            if (cfg->restore_start_ns) cfg->restore_start_ns[i] = r0;
        }
        if (++k == n_many) k = 0;
        if (cfg->period_ns > 0) { /* after the restore: the call itself starts on its deadline */
            pace(cfg, pace_start, i);
            if (stop && *stop) goto interrupted;
        }
        if (sync && (rc = sync(sync_ctx, &merr)) != 0) goto timed_failed;
        if (rec_full) rpx_call_record_begin(rec, &mark);
        else if (rec) mark.cpu = sched_getcpu(); /* the vDSO or rseq: no system call */
        t0 = rpx_clock_now_ns();
        rc = call(state, in, &merr);
        if (sync && rc == 0) rc = sync(sync_ctx, &merr);
        t1 = rpx_clock_now_ns();
        if (rec_full && rc == 0) {
            rpx_call_record_end(rec, &mark, cfg->records, measured);
        } else if (rec && rc == 0) {
            int c1 = sched_getcpu();
            cfg->records->cpu[2 * measured] =
                mark.cpu >= 0 && mark.cpu < 0xFFFF ? (uint16_t)mark.cpu : RPX_CALL_CPU_UNKNOWN;
            cfg->records->cpu[2 * measured + 1] =
                c1 >= 0 && c1 < 0xFFFF ? (uint16_t)c1 : RPX_CALL_CPU_UNKNOWN;
        }
        if (check) check(check_ctx, i, many ? (size_t)(in - many) : 0, rc);
        if (target_after) target_after(state, 1, rc);
        if (rc != 0) {
            if (!counts || rc != RPX_CALL_COUNTED_FAILURE) goto timed_failed;
            result->failed_calls++;
            snprintf(result->last_failure, sizeof result->last_failure, "%.250s", merr.message);
            if (failed_done) __atomic_store_n(failed_done, result->failed_calls, __ATOMIC_RELEASE);
        } else {
            if (cfg->call_start_ns) cfg->call_start_ns[measured] = t0;
            samples[measured++] = t1 - t0;
            result->measured = measured;
            if (cfg->progress) atomic_store_explicit(&prog.measured, measured, memory_order_release);
        }
        if (calls_done) __atomic_store_n(calls_done, cfg->warmup + i + 1, __ATOMIC_RELEASE);
        if (progress_ns) __atomic_store_n(progress_ns, t1, __ATOMIC_RELEASE);
        if (rc != 0 && max_failures > 0 &&
            result->failed_calls + result->failed_warmup_calls >= max_failures) {
            rpx_memory_end_inference(&result->memory);
            goto too_many_failures;
        }
        if (after_call) after_call(after_ctx, 1);
        if (cfg->progress)
            atomic_store_explicit(&prog.done, cfg->warmup + i + 1, memory_order_relaxed);
    }
    if (rec && !rec_full && cfg->record_totals) /* right after the last call */
        rpx_call_loop_end(rec, &loop_mark, cfg->record_totals);
    rpx_memory_end_inference(&result->memory);
    result->wall_ns = rpx_clock_now_ns() - start;
    result->status = RPX_RUN_COMPLETE;
    progress_stop(&prog);
    return 0;

timed_failed:
    return loop_stopped(END_TIMED_FAILED, cfg, target, &prog, start, i, rc, &merr, result, err);
too_many_failures:
    return loop_stopped(END_TOO_MANY_FAILURES, cfg, target, &prog, start, i, rc, &merr, result,
                        err);
interrupted:
    return loop_stopped(END_INTERRUPTED, cfg, target, &prog, start, i, rc, &merr, result, err);
}

void rpx_run_result_free(rpx_run_result *result)
{
    if (!result) return;
    if (result->owns_samples) free(result->samples_ns);
    result->owns_samples = 0;
    result->samples_ns = NULL;
    result->measured = 0;
}
