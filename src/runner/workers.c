/* workers.c — owns the worker processes of one run: the timed calls split
 * over K fresh processes run one after another (never side by side: they
 * would disturb each other), each with its own setup and warmup, and the
 * stopping rule that adds processes until the p50's interval is narrow
 * enough. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/clock.h"
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

/* Half the width of the p50's 95 % interval over its centre; NaN when the
 * interval cannot be stated yet. */
static double p50_precision(const workers *w)
{
    size_t offsets[RPX_RUNNER_MAX_PROCESSES], counts[RPX_RUNNER_MAX_PROCESSES];
    double *ms = rpx__workers_samples_ms(w, offsets, counts);
    json_t *ci, *p50;
    double r = (double)NAN;
    if (!ms) return r;
    ci = rpx_stats_latency_ci(ms, offsets, counts, (size_t)w->n, 0.95);
    p50 = json_object_get(ci, "p50_ms");
    if (json_is_array(p50) && json_array_size(p50) == 2) {
        double lo = json_number_value(json_array_get(p50, 0));
        double hi = json_number_value(json_array_get(p50, 1));
        if (hi + lo > 0) r = (hi - lo) / (hi + lo);
    }
    json_decref(ci);
    free(ms);
    return r;
}

int rpx__workers_run(const rpx_runner_config *c, const run_params *p, const rpx_inputs *in,
                     int processes, workers *w, rpx_error *err)
{
    int64_t start = rpx_clock_now_ns();
    long base, rem;
    int i;
    memset(w, 0, sizeof *w);
    w->outcome = OUTCOME_COMPLETE;
    w->achieved = (double)NAN;
    if (processes < 1) processes = 1;
    if (processes > c->repeats) processes = (int)c->repeats;
    base = c->repeats / processes;
    rem = c->repeats % processes;
    for (i = 0; i < RPX_RUNNER_MAX_PROCESSES; i++) {
        run_params rp = *p;
        run_shared *sh;
        long slice = i < processes ? base + (i < rem) : base;
        if (i >= processes) {
            /* the stopping rule: more processes while the interval is too wide */
            double elapsed = (double)(rpx_clock_now_ns() - start) / 1e9;
            if (!(c->target_precision > 0)) break;
            if (w->achieved == w->achieved && w->achieved <= c->target_precision) break;
            if (elapsed + elapsed / w->n > c->max_time_s) break; /* the next would overrun */
        }
        if (rpx__stage_stop_signal()) break; /* interrupted: no new process */
        sh = rpx__run_shared_create(slice, c->warmup);
        if (!sh) {
            if (i == 0)
                return rpx_error_set(err, RPX_ENOMEM,
                                     "--repeats %ld: cannot map the sample buffer; give fewer "
                                     "repeats",
                                     c->repeats);
            break;
        }
        w->proc[i] = sh;
        w->slice[i] = slice;
        w->n = i + 1;
        rp.repeats = slice;
        rpx__run_stage(&rp, in, c->isolate, sh);
        w->measured += sh->measured;
        if (sh->outcome != OUTCOME_COMPLETE) {
            w->outcome = sh->outcome;
            w->last = i;
            break;
        }
        w->last = i;
        if (c->target_precision > 0 && w->n >= 2) w->achieved = p50_precision(w);
    }
    if (c->target_precision > 0)
        w->converged = w->achieved == w->achieved && w->achieved <= c->target_precision;
    w->seconds = (double)(rpx_clock_now_ns() - start) / 1e9;
    return 0;
}

void rpx__workers_free(workers *w)
{
    int i;
    for (i = 0; i < w->n; i++) rpx__run_shared_free(w->proc[i]);
    w->n = 0;
}
