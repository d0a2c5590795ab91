/* workers.c — owns the worker processes of one run: the timed calls split
 * over K fresh processes run one after another (never side by side: they
 * would disturb each other), each with its own setup and warmup, and the
 * stopping rule that adds processes until the p50's interval is narrow
 * enough; after the run, their blocks as one (the peaks, where a run that
 * did not complete stood), as the report's views, and the note for an
 * export that did not fit. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/run_report.h"
#include "rpxprof/clock.h"
#include "rpxprof/latency.h"
#include "rpxprof/stats.h"
#include "runner/runner_internal.h"

double *rpx__workers_samples_ms(const workers *w, size_t *offsets, size_t *counts)
{
    double *ms = malloc((w->measured ? w->measured : 1) * sizeof *ms);
    size_t at = 0;
    int i;
    if (!ms) return NULL;
    for (i = 0; i < w->n; i++) {
        size_t j, n = w->proc[i]->measured;
        offsets[i] = at;
        counts[i] = n;
        for (j = 0; j < n && at < w->measured; j++) ms[at++] = (double)w->proc[i]->samples[j] / 1e6;
    }
    return ms;
}

json_t *rpx__workers_latency_ci(const workers *w, const double *ms, const size_t *offsets,
                                const size_t *counts)
{
    static const char *keys[] = {"p50_ms", "p95_ms", "p99_ms", "mean_ms"};
    json_t *ci = rpx_stats_latency_ci(ms, offsets, counts, (size_t)w->n, 0.95);
    double res = w->n > 0 && w->proc[0]->timer_ok && w->proc[0]->timer.resolution_ns > 0
                     ? (double)w->proc[0]->timer.resolution_ns / 1e6
                     : 1e-6;
    double fastest = INFINITY, slowest = -INFINITY;
    size_t i, j;
    for (i = 0; i < (size_t)w->n; i++)
        for (j = 0; j < counts[i]; j++) {
            fastest = fmin(fastest, ms[offsets[i] + j]);
            slowest = fmax(slowest, ms[offsets[i] + j]);
        }
    /* no interval is narrower than the clock can tell apart: processes that
     * agree to the nanosecond do not make a statistic exact; nor does the
     * widening take an end past the fastest or the slowest call */
    for (i = 0; ci && i < sizeof keys / sizeof keys[0]; i++) {
        json_t *a = json_object_get(ci, keys[i]);
        if (json_is_array(a) && json_array_size(a) == 2) {
            double lo = fmax(json_number_value(json_array_get(a, 0)) - res, fastest);
            double hi = fmin(json_number_value(json_array_get(a, 1)) + res, slowest);
            json_array_set_new(a, 0, json_real(lo > 0 ? lo : 0));
            json_array_set_new(a, 1, json_real(hi));
        }
    }
    if (ci) json_object_set_new(ci, "widened_by_resolution_ms", json_real(res));
    rpx__vary_describe(w, ci);
    return ci;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* How far the p50's 95 % interval reaches from the pooled p50 the report
 * shows, on its wider side, relative to it ("within +-P of it"); NaN when the
 * interval cannot be stated yet. */
static double p50_precision(workers *w)
{
    size_t offsets[RPX_RUNNER_MAX_PROCESSES], counts[RPX_RUNNER_MAX_PROCESSES];
    double *ms = rpx__workers_samples_ms(w, offsets, counts);
    json_t *ci, *p50;
    double r = (double)NAN;
    if (!ms) return r;
    ci = rpx__workers_latency_ci(w, ms, offsets, counts);
    p50 = json_object_get(ci, "p50_ms");
    if (json_is_array(p50) && json_array_size(p50) == 2 && w->measured > 0) {
        double lo = json_number_value(json_array_get(p50, 0));
        double hi = json_number_value(json_array_get(p50, 1));
        double med;
        qsort(ms, w->measured, sizeof *ms, cmp_double);
        med = rpx_percentile_sorted(ms, w->measured, 50); /* the report's p50 */
        if (med > 0) r = fmax(hi - med, med - lo) / med;
        else snprintf(w->why_none, sizeof w->why_none, "the p50 is not positive");
    } else {
        const json_t *why = json_object_get(json_object_get(ci, "null_reasons"), "p50_ms");
        snprintf(w->why_none, sizeof w->why_none, "%s", json_is_string(why) ? json_string_value(why) : "no reason given");
    }
    json_decref(ci);
    free(ms);
    return r;
}

int rpx__workers_step(const run_plan *plan, long slice, workers *w, rpx_error *err)
{
    const rpx_runner_config *c = plan->c;
    run_params rp;
    run_shared *sh;
    cpu_set_t cpus; /* --cpus, --spread: this process's CPUs */
    int i = w->n;
    if (i >= RPX_RUNNER_MAX_PROCESSES || w->outcome != OUTCOME_COMPLETE) return 0;
    if (rpx__stage_stop_signal()) { /* interrupted: no new process, and the run says so */
        rpx__workers_interrupted(w, rpx__stage_stop_signal(), "between two worker processes");
        return 0;
    }
    if (i == 0) w->start_ns = rpx_clock_now_ns();
    sh = rpx__run_shared_create(plan, slice);
    if (!sh) {
        if (i > 0) return 0;
        return rpx_error_set(err, RPX_ENOMEM,
                             "--repeats %ld: cannot map the sample buffer; give fewer repeats",
                             c->repeats);
    }
    w->proc[i] = sh;
    w->slice[i] = slice;
    w->n = i + 1;
    w->last = i;
    memset(&rp, 0, sizeof rp);
    rp.plan = plan;
    rp.repeats = slice;
    rp.run_start_ns = w->start_ns; /* --timeout bounds the whole run, not each process */
    /* the samples cycle across the processes: this one goes on where the last stopped */
    rp.sample_offset = (long)w->measured + c->sample_shift;
    rp.bodies_first = c->sample_shift + (long)w->measured + (long)i * c->warmup;
    rp.process_index = i;
    rp.progress_total = c->repeats > (long)w->measured + slice ? c->repeats
                                                               : (long)w->measured + slice;
    if (rpx__placement_cpus_of(&plan->place, i, &cpus)) rp.cpus = &cpus;
    rpx__run_stage(&rp, sh);
    w->measured += sh->measured;
    w->seconds = (double)(rpx_clock_now_ns() - w->start_ns) / 1e9;
    if (sh->outcome != OUTCOME_COMPLETE) {
        w->outcome = sh->outcome;
        return 0;
    }
    if (c->target_precision > 0 && w->n >= 2) w->achieved = p50_precision(w);
    return 1;
}

void rpx__workers_interrupted(workers *w, int sig, const char *when)
{
    run_shared *last;
    if (w->n == 0 || w->outcome != OUTCOME_COMPLETE) return;
    last = w->proc[w->last];
    w->outcome = OUTCOME_INTERRUPTED;
    snprintf(last->error, sizeof last->error, "interrupted by %s %s, after %d worker process%s",
             sig == SIGTERM ? "SIGTERM" : "SIGINT", when, w->n, w->n == 1 ? "" : "es");
}

void rpx__workers_init(workers *w)
{
    memset(w, 0, sizeof *w);
    w->outcome = OUTCOME_COMPLETE;
    w->achieved = (double)NAN;
}

long rpx__workers_slice(long repeats, int processes, int i)
{
    long base = repeats / processes, rem = repeats % processes;
    return i < processes ? base + (i < rem) : base;
}

int rpx__workers_run(const run_plan *plan, workers *w, rpx_error *err)
{
    const rpx_runner_config *c = plan->c;
    const placement *pl = &plan->place;
    const int spread = pl->policy == RPX_PLACE_SPREAD && pl->n_rotation > 0;
    int i, rc = 1, most = RPX_RUNNER_MAX_PROCESSES, processes = plan->processes;
    rpx__workers_init(w);
    if (processes < 1) processes = 1;
    if (processes > c->repeats) processes = (int)c->repeats;
    if (spread) most = most / pl->n_rotation * pl->n_rotation; /* whole rounds */
    for (i = 0; i < most && rc == 1; i++) {
        if (i >= processes) {
            /* the stopping rule: more processes while the interval is too wide */
            if (!(c->target_precision > 0)) break;
            /* --spread: whole rounds, the same number of processes on each CPU */
            if (spread && i % pl->n_rotation != 0) {
                rc = rpx__workers_step(plan, rpx__workers_slice(c->repeats, processes, i), w, err);
                if (rc < 0) return rc;
                continue;
            }
            if (w->achieved == w->achieved && w->achieved <= c->target_precision) break;
            if (w->n >= 2 && w->achieved != w->achieved) { /* more processes cannot state it */
                snprintf(w->stopped, sizeof w->stopped, "the p50's interval cannot be stated: %s", w->why_none);
                break;
            }
            if (w->seconds + w->seconds / w->n > c->max_time_s) { /* the next would overrun */
                char mt[32];
                snprintf(w->stopped, sizeof w->stopped, "another process would pass %s (%g s)",
                         rpx__option_value_label("max-time", (rpx_option_spelling)c->spelling, mt, sizeof mt),
                         c->max_time_s);
                break;
            }
        }
        rc = rpx__workers_step(plan, rpx__workers_slice(c->repeats, processes, i), w, err);
        if (rc < 0) return rc;
    }
    if (c->target_precision > 0 && !w->stopped[0] && w->outcome == OUTCOME_COMPLETE &&
        w->n >= RPX_RUNNER_MAX_PROCESSES)
        snprintf(w->stopped, sizeof w->stopped, "the most processes rpxprof runs (%d)", RPX_RUNNER_MAX_PROCESSES);
    if (c->target_precision > 0)
        w->converged = w->achieved == w->achieved && w->achieved <= c->target_precision;
    return 0;
}

/* ---- the processes' blocks after the run ---- */

/* Where a run that did not complete stood; call_index counts the timed calls
 * of every process before. */
rpx_run_failure rpx__workers_failure(const run_shared *sh, size_t offset)
{
    static const char *phases[] = {"load", "setup", "loop", "teardown", "done"};
    rpx_run_failure f;
    int ph = sh->phase;
    f.phase = ph >= 0 && ph <= PHASE_DONE ? phases[ph] : "?";
    f.in_loop = ph == PHASE_LOOP;
    f.call_index = sh->failed_in_warmup ? sh->failed_call : (long)offset + sh->failed_call;
    f.in_warmup = sh->failed_in_warmup;
    f.signal = sh->signal;
    return f;
}

/* The largest of the processes' peaks; unavailable only when none has one. */
static void merge_peaks(rpx_memory_peaks *into, const rpx_memory_peaks *m, int first)
{
    if (first) {
        *into = *m;
        return;
    }
    if (m->lifetime_peak_bytes > into->lifetime_peak_bytes)
        into->lifetime_peak_bytes = m->lifetime_peak_bytes;
    if (m->inference_peak_bytes > into->inference_peak_bytes)
        into->inference_peak_bytes = m->inference_peak_bytes;
}

/* One run_shared that stands for all the processes, for the report code
 * (its samples stay in the processes' blocks). */
size_t rpx__workers_merge(const workers *w, run_shared *m)
{
    const run_shared *last = w->proc[w->last];
    size_t at = 0, offset = 0;
    int i;
    memset(m, 0, sizeof *m);
    for (i = 0; i < w->n; i++) {
        const run_shared *p = w->proc[i];
        at += p->measured;
        if (i < w->last) offset += p->measured;
        m->failed_calls += p->failed_calls;
        m->failed_warmup_calls += p->failed_warmup_calls;
        m->wall_ns += p->wall_ns;
        merge_peaks(&m->memory, &p->memory, i == 0);
        if (p->child_maxrss_bytes > m->child_maxrss_bytes) m->child_maxrss_bytes = p->child_maxrss_bytes;
    }
    m->samples = NULL;
    m->measured = at;
    m->outcome = w->outcome;
    m->phase = last->phase;
    m->failed_call = last->failed_call;
    m->failed_in_warmup = last->failed_in_warmup;
    m->signal = last->signal;
    m->abandoned = last->abandoned;
    m->warmup_done = w->proc[0]->warmup_done;
    m->timer = w->proc[0]->timer;
    m->timer_ok = w->proc[0]->timer_ok;
    m->sync_ns = w->proc[0]->sync_ns;
    m->has_sync = w->proc[0]->has_sync;
    snprintf(m->error, sizeof m->error, "%s", last->error);
    return offset; /* the timed calls before the last process */
}

/* An export that did not fit its block is a note, never silence. */
void rpx__workers_export_notes(const workers *wp, json_t *notes, json_t *warnings)
{
    int i;
    for (i = 0; i < wp->n; i++) {
        const run_shared *p = wp->proc[i];
        char m[512];
        if (!p->export_needed) continue;
        if (p->export_needed == (size_t)-1)
            snprintf(m, sizeof m,
                     "process %d's export (the CUDA devices and peaks, the target's section and "
                     "the measured sections' findings) could not be written (out of memory in "
                     "the model's process) and is missing from this report: what it held is null",
                     i);
        else
            snprintf(m, sizeof m,
                     "process %d's export (%zu bytes: the CUDA devices and peaks, the target's "
                     "section and the measured sections' findings) did not fit the %zu bytes of "
                     "its shared block and is missing from this report: what it held is null",
                     i, p->export_needed, p->json_cap);
        rpx__warn_note(notes, warnings, m);
    }
}

/* The report's view of each process (its samples, warmup, restores, pacing). */
rpx_run_process *rpx__workers_views(const workers *wp)
{
    rpx_run_process *procs = calloc((size_t)wp->n + 1, sizeof *procs);
    int i;
    for (i = 0; procs && i < wp->n; i++) {
        const run_shared *p = wp->proc[i];
        procs[i].samples = p->samples;
        procs[i].measured = p->measured;
        procs[i].warmup_samples = p->warmup_samples;
        procs[i].warmup_kept = p->warmup_done < p->warmup_keep ? p->warmup_done : p->warmup_keep;
        procs[i].restore_samples = p->restore_samples;
        procs[i].restore_warmup_ns = p->restore_warmup_ns;
        procs[i].start_lag = p->start_lag;
        procs[i].late_starts = p->late_starts;
    }
    return procs;
}

void rpx__workers_free(workers *w)
{
    int i;
    for (i = 0; i < w->n; i++) rpx__run_shared_free(w->proc[i]);
    w->n = 0;
}
