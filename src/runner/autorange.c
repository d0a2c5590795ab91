/* autorange.c — owns auto-ranging (--auto, a manifest's autorange, Python's
 * profile() default and compare --run's): the run's time budget split over its
 * processes, the stopping rule each process's timed loop asks as its calls
 * come (re-planned from the calls measured so far, never from fewer than
 * AR_FIRST_PLAN), and the report's `autorange`: what was chosen and, truthfully,
 * what limited it. It sits above the workers: each process is one
 * rpx__workers_step, the rule reaching its loop through the plan's stopping
 * hook (plan.h: replan); the loop (measure/run.c) asks the rule only at the
 * times the rule itself named, outside the timed span. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/json.h"
#include "rpxprof/clock.h"
#include "rpxprof/latency.h"
#include "rpxprof/stats.h"
#include "runner/runner_internal.h"

#define AR_MIN_TIME_S RPX_AUTORANGE_MIN_TIME_S   /* the defaults: timed calls of 1 s at least, */
#define AR_MAX_TIME_S RPX_AUTORANGE_MAX_TIME_S   /* the whole run within 10 s, */
#define AR_PRECISION RPX_AUTORANGE_PRECISION     /* the p50's interval within +-1 % of it */
/* Every timed call keeps its sample in the report: auto-ranging keeps at most
 * this many over the run (a callable of 50 ns would otherwise fill the
 * repeats limit, and a report of 10^7 samples, in one second) */
#define AR_MAX_CALLS 1000000L
#define AR_FIRST_PLAN 3       /* a plan is made from 3 timed calls at least */
/* what one kept sample costs the report after the calls (statistics, JSON),
 * with room for a slow machine: the calls end early by that much */
#define AR_REPORT_NS_PER_CALL 5000.0
#define AR_SUBSAMPLE 2001     /* a plan's median and IQR: from at most this many calls */

enum { AR_RAN = 0, AR_GOAL, AR_TIME };

/* One process's plans, in memory shared with it (its loop runs the rule). */
struct rpx__ar_proc {
    int64_t end_ns;           /* no call of this process may end after it */
    int64_t loop_start_ns;    /* its first timed call's start, about */
    long plans, first_plan_calls;
    double need, want;        /* calls the precision needs (the run's), and this process's aim */
    double p50_ms, spread;    /* the last plan's median and IQR / median */
    int why;                  /* AR_GOAL, AR_TIME, AR_RAN (its capacity, or it ended) */
};

static double now_s(void)
{
    return (double)rpx_clock_now_ns() / 1e9;
}

int rpx__autorange_prepare(rpx_runner_config *c, rpx__autorange *ar, rpx_error *err)
{
    double reserve;
    memset(ar, 0, sizeof *ar);
    if (!c->autorange) {
        if (!(c->max_time_s > 0)) c->max_time_s = 60; /* --target-precision's default */
        return 0;
    }
    ar->on = 1;
    ar->min_time_s = c->min_time_s > 0 ? c->min_time_s : AR_MIN_TIME_S;
    ar->max_time_s = c->max_time_s > 0 ? c->max_time_s : AR_MAX_TIME_S;
    ar->precision = c->target_precision > 0 ? c->target_precision : AR_PRECISION;
    if (ar->min_time_s > ar->max_time_s) ar->min_time_s = ar->max_time_s;
    ar->warmup = c->warmup;
    ar->start_ns = rpx_clock_now_ns();
    reserve = fmin(0.5, 0.1 * ar->max_time_s); /* the report, the system card */
    ar->end_ns = ar->start_ns + (int64_t)((ar->max_time_s - reserve) * 1e9);
    /* the rest of the runner sees a plain run: no --target-precision rule of
     * its own, no soft deadline, and the most calls auto-ranging keeps */
    c->max_time_s = ar->max_time_s;
    c->target_precision = 0;
    c->stop_after_s = 0;
    /* the report of every kept call must fit the budget too, on a busy machine: a
     * twentieth of it at AR_REPORT_NS_PER_CALL (a 1 s budget: 10,000 calls; 10 s:
     * 100,000, already a p50 within +-0.1 % of a steady call) */
    ar->max_calls = (long)fmin((double)AR_MAX_CALLS,
                               fmax(1000, 0.05 * ar->max_time_s * 1e9 / AR_REPORT_NS_PER_CALL));
    c->repeats = ar->max_calls;
    ar->procs = mmap(NULL, RPX_RUNNER_MAX_PROCESSES * sizeof *ar->procs, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ar->procs == MAP_FAILED) {
        ar->procs = NULL;
        return rpx_error_set(err, RPX_ENOMEM, "auto-ranging: cannot map its shared block");
    }
    return 0;
}

void rpx__autorange_share_end(rpx__autorange *ar, rpx__autorange *with)
{
    if (ar->on && with->on) {
        ar->start_ns = with->start_ns;
        ar->end_ns = with->end_ns;
        /* two reports of the calls kept: half the calls each */
        ar->max_calls = with->max_calls = (with->max_calls + 1) / 2;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The calls the p50's 95 % interval needs for +-precision, from n samples: the
 * distribution-free interval (the report's within a process) of a spread
 * subsample of at most AR_SUBSAMPLE, whose half width shrinks about as
 * 1/sqrt(calls); no normal approximation (a bimodal sample would ask for
 * millions). Also the median and the spread (IQR / median) for the report. */
static double plan_need(const int64_t *s, size_t n, double precision, double *p50_ms,
                        double *spread)
{
    int64_t sub[AR_SUBSAMPLE];
    size_t m = n < AR_SUBSAMPLE ? n : AR_SUBSAMPLE, j, lo, hi;
    double med, iqr, half, minc = (double)rpx_stats_quantile_min_calls(0.5, 0.95);
    for (j = 0; j < m; j++) sub[j] = s[(size_t)((double)j * (double)n / (double)m)];
    qsort(sub, m, sizeof *sub, cmp_i64);
    med = m % 2 ? (double)sub[m / 2] : ((double)sub[m / 2 - 1] + (double)sub[m / 2]) / 2;
    iqr = (double)(sub[(3 * (m - 1)) / 4] - sub[(m - 1) / 4]);
    *p50_ms = med / 1e6;
    *spread = med > 0 ? iqr / med : 0;
    if (!(med > 0) || rpx_stats_quantile_ranks(m, 0.5, 0.95, &lo, &hi) != 0) return minc;
    half = fmax(med - (double)sub[lo - 1], (double)sub[hi - 1] - med) / med;
    return fmax(minc, ceil((double)m * pow(half / precision, 2)));
}

/* The stopping rule, in the worker, outside the timed span: stop (0) when
 * this process's share of the goal is met or the next call would end after
 * its share of the time; else the time to ask again. */
static int64_t replan(void *ctx, const int64_t *s, size_t n, int64_t now)
{
    rpx__autorange *ar = ctx;
    struct rpx__ar_proc *P = &ar->procs[ar->index];
    double mean, sum_s, share = 1.0 / ar->processes, minc, calls_left, step;
    int64_t end, next;
    while (ar->summed < n) ar->sum_ns += s[ar->summed++];
    if (!P->loop_start_ns) P->loop_start_ns = now - s[0];
    mean = fmax(1, (double)ar->sum_ns / (double)n); /* calls below the clock's resolution */
    sum_s = (double)ar->sum_ns / 1e9;
    end = P->end_ns - (int64_t)((double)n * AR_REPORT_NS_PER_CALL);
    if (n < AR_FIRST_PLAN) { /* never plan from one call; only keep to the time */
        if ((double)now + mean > (double)end) {
            P->why = AR_TIME;
            return 0;
        }
        return now + 1;
    }
    P->need = plan_need(s, n, ar->precision, &P->p50_ms, &P->spread);
    if (P->plans++ == 0) P->first_plan_calls = (long)n;
    minc = (double)rpx_stats_quantile_min_calls(0.5, 0.95);
    P->want = fmax(fmax(minc, ceil(P->need * share)), ceil(ar->min_time_s * share * 1e9 / mean));
    if ((double)n >= fmax(minc, ceil(P->need * share)) && sum_s >= ar->min_time_s * share) {
        P->why = AR_GOAL;
        return 0;
    }
    if ((double)now + mean > (double)end) {
        P->why = AR_TIME;
        return 0;
    }
    calls_left = fmax(P->want - (double)n, 1);
    /* ask again when the goal may be met, at least every quarter of the time so far */
    step = fmin(calls_left * mean, fmax(10e6, 0.25 * (double)(now - P->loop_start_ns)));
    next = now + (int64_t)step;
    if ((double)next > (double)end - mean) next = end - (int64_t)mean;
    return next > now ? next : now + 1;
}

void rpx__autorange_attach(rpx__autorange *ar, run_plan *plan)
{
    if (!ar->on) return;
    plan->replan = replan;
    plan->replan_ctx = ar;
    plan->warmup_max_s = 0.02 * ar->max_time_s; /* at least one warmup call */
}

int rpx__autorange_step(rpx__autorange *ar, const run_plan *plan, int steps_left, workers *w,
                        rpx_error *err)
{
    int i = w->n, rc;
    int64_t now = rpx_clock_now_ns();
    long cap;
    if (i >= RPX_RUNNER_MAX_PROCESSES) return 0;
    if (steps_left < 1) steps_left = 1;
    if (i > 0) {
        /* another process costs what the last one took besides its timed calls
         * (load, setup, warmup, teardown), and a few calls */
        const run_shared *last = w->proc[i - 1];
        double timed = 0, overhead, mean;
        size_t k;
        for (k = 0; k < last->measured; k++) timed += (double)last->samples[k];
        overhead = fmax(0, (double)ar->last_step_ns - timed);
        mean = last->measured ? timed / (double)last->measured : 0;
        if ((double)now + overhead + (double)rpx_stats_quantile_min_calls(0.5, 0.95) * mean +
                (double)w->measured * AR_REPORT_NS_PER_CALL >
            (double)ar->end_ns) {
            snprintf(ar->limited, sizeof ar->limited,
                     "max_time (%g s) left room for %d of the %d processes", ar->max_time_s, i,
                     ar->processes);
            return 0;
        }
    }
    cap = (ar->max_calls - (long)w->measured) / steps_left;
    if (cap < 1) return 0;
    memset(&ar->procs[i], 0, sizeof ar->procs[i]);
    ar->procs[i].end_ns = now + (ar->end_ns - now) / steps_left;
    ar->procs[i].need = (double)NAN;
    ar->index = i;
    ar->summed = 0;
    ar->sum_ns = 0;
    rc = rpx__workers_step(plan, cap, w, err);
    ar->last_step_ns = rpx_clock_now_ns() - now; /* its own time: a pair's other side apart */
    if (rc >= 0 && w->n > i && w->proc[i]->measured >= (size_t)cap && ar->procs[i].why == AR_RAN)
        ar->capped = 1;
    return rc;
}

int rpx__autorange_run(rpx__autorange *ar, const run_plan *plan, workers *w, rpx_error *err)
{
    int i, rc = 1;
    rpx__workers_init(w);
    ar->processes = plan->processes < 1 ? 1 : plan->processes;
    for (i = 0; i < ar->processes && rc == 1; i++) {
        rc = rpx__autorange_step(ar, plan, ar->processes - i, w, err);
        if (rc < 0) return rc;
    }
    return 0;
}

/* Why fewer calls than the goal, truthfully, or "" (the goal was met). */
static void limited_by(const rpx__autorange *ar, const workers *w, double timed_s, double need,
                       char *buf, size_t size)
{
    int i, time = 0;
    size_t n = 0;
    buf[0] = '\0';
    for (i = 0; i < w->n; i++) time |= ar->procs[i].why == AR_TIME;
    if (ar->capped)
        n = (size_t)snprintf(buf, size, "a process filled its share of the most timed calls "
                             "auto-ranging keeps (%ld in a max_time of %g s: every call keeps "
                             "its sample in the report)", ar->max_calls, ar->max_time_s);
    else if (time && timed_s < ar->min_time_s)
        n = (size_t)snprintf(buf, size, "max_time (%g s) left room for %.3g s of timed calls, "
                             "fewer than min_time (%g s)", ar->max_time_s, timed_s,
                             ar->min_time_s);
    else if (time && (double)w->measured < need)
        n = (size_t)snprintf(buf, size, "max_time (%g s) left room for %zu timed calls, fewer "
                             "than the target precision needs (about %.0f)", ar->max_time_s,
                             w->measured, need);
    else if (time)
        n = (size_t)snprintf(buf, size, "max_time (%g s): the processes' shares of it ended "
                             "before their shares of the calls", ar->max_time_s);
    if (ar->limited[0] && n < size)
        snprintf(buf + n, size - n, "%s%s", n ? "; " : "", ar->limited);
}

json_t *rpx__autorange_json(const rpx__autorange *ar, const workers *w, json_t *notes)
{
    json_t *o;
    double timed = 0, need = (double)NAN, p50 = (double)NAN, spread = (double)NAN, want = 0;
    long plans = 0, first = 0, warm = 0;
    char why[640], note[1200], procs[48] = "";
    int i;
    if (!ar->on) return NULL;
    for (i = 0; i < w->n; i++) {
        const run_shared *sh = w->proc[i];
        size_t k;
        for (k = 0; k < sh->measured; k++) timed += (double)sh->samples[k] / 1e9;
        plans += ar->procs[i].plans;
        if (i == 0) first = ar->procs[i].first_plan_calls;
        want += ar->procs[i].plans ? ar->procs[i].want : (double)sh->measured;
        warm += sh->warmup_done;
    }
    if (w->n > 0 && w->measured >= AR_FIRST_PLAN) { /* the run's own, from every call */
        int64_t *all = malloc(w->measured * sizeof *all);
        size_t at = 0;
        if (all) {
            for (i = 0; i < w->n; i++) {
                memcpy(all + at, w->proc[i]->samples, w->proc[i]->measured * sizeof *all);
                at += w->proc[i]->measured;
            }
            need = plan_need(all, at, ar->precision, &p50, &spread);
            free(all);
        }
    }
    limited_by(ar, w, timed, need, why, sizeof why);
    if (w->n > 1) snprintf(procs, sizeof procs, " over %d processes", w->n);
    o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "min_time_s", json_real(ar->min_time_s));
    json_object_set_new(o, "max_time_s", json_real(ar->max_time_s));
    json_object_set_new(o, "target_precision", json_real(ar->precision));
    json_object_set_new(o, "calls", json_integer((json_int_t)w->measured));
    json_object_set_new(o, "repeats", json_integer((json_int_t)(isfinite(want) && want < 1e15
                                                                   ? fmax(want, (double)w->measured)
                                                                   : (double)w->measured)));
    json_object_set_new(o, "timed_s", json_real(timed));
    json_object_set_new(o, "calls_for_precision", rpx_json_real_or_null(need));
    json_object_set_new(o, "p50_ms", rpx_json_real_or_null(p50));
    json_object_set_new(o, "spread", rpx_json_real_or_null(spread));
    json_object_set_new(o, "plans", json_integer(plans));
    json_object_set_new(o, "first_plan_calls", json_integer(first));
    json_object_set_new(o, "warmup", json_integer(ar->warmup));
    json_object_set_new(o, "warmup_calls", json_integer(warm));
    json_object_set_new(o, "processes", json_integer(ar->processes));
    json_object_set_new(o, "processes_run", json_integer(w->n));
    json_object_set_new(o, "seconds", json_real(now_s() - (double)ar->start_ns / 1e9));
    json_object_set_new(o, "limited_by", why[0] ? json_string(why) : json_null());
    snprintf(note, sizeof note,
             "auto-ranging: %zu timed calls (%.3g s)%s after %ld warmup call%s, re-planned "
             "%ld time%s from the calls as they came (the first plan from %ld), for min_time "
             "%g s, max_time %g s and a target precision of +-%g %%%s%s",
             w->measured, timed, procs,
             warm, warm == 1 ? "" : "s", plans, plans == 1 ? "" : "s", first, ar->min_time_s,
             ar->max_time_s, ar->precision * 100, why[0] ? "; " : "", why);
    if (notes) json_array_append_new(notes, json_string(note));
    return o;
}

void rpx__autorange_free(rpx__autorange *ar)
{
    if (ar->procs) munmap(ar->procs, RPX_RUNNER_MAX_PROCESSES * sizeof *ar->procs);
    ar->procs = NULL;
}
