/* variance.c — owns the report's `variance` section (variance.h): how much of
 * the spread of a run's per-call latencies lies between its worker processes,
 * which factor explains that spread (the CPU a process ran on, its
 * migrations, its time off the CPU, its page faults, its position in the run,
 * the machine's load) and what the slowest 1 % of calls had in common. A pure
 * function of the report's JSON: nothing is removed from any statistic, the
 * section only explains them. Method: docs/statistics.md, "What made this run
 * vary". Library code: nothing printed. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "report/variance.h"
#include "rpxprof/stats.h"
#include "rpxprof/summary.h"

#define WHY_SIZE 400
#define OFF_CPU_LOST_MS 0.01 /* without switch counts: a call off the CPU this long lost it */

/* One worker process with timed calls. */
typedef struct proc {
    const json_t *entry;          /* its latency_by_process entry */
    long id;                      /* its `process` number (its position in the run) */
    size_t off, n;
    double p50, y;                /* its median and log-median */
} proc;

typedef struct factor {
    const char *name;
    int tested;
    char why[WHY_SIZE];
    const char *measure;          /* what the numeric value of a process is */
    double share, ratio, p, p_adj;
    int positive_only;            /* named only when more of it goes with slower */
    double slope;
    json_t *groups;
    int named;
    /* for the sentence: cpu */
    long slow_cpu, fast_cpu;
    size_t n_slow, n_fast;
} factor;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's default (linear) percentile of a sorted array */
static double pct_sorted(const double *s, size_t n, double q)
{
    double h, lo;
    size_t i;
    if (n == 0) return NAN;
    h = (double)(n - 1) * q / 100.0;
    lo = floor(h);
    i = (size_t)lo;
    if (i + 1 >= n) return s[n - 1];
    return s[i] + (h - lo) * (s[i + 1] - s[i]);
}

static double num(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* ------------------------------------------------------------ the processes */

/* The processes with timed calls, their medians from latency_samples_ms. */
static proc *read_procs(const json_t *report, const double *ms, size_t n_ms, size_t *k)
{
    const json_t *by = json_object_get(report, "latency_by_process");
    size_t i, m = json_array_size(by);
    proc *p = calloc(m + 1, sizeof *p);
    *k = 0;
    if (!p) return NULL;
    for (i = 0; i < m; i++) {
        const json_t *e = json_array_get(by, i);
        double off = num(json_object_get(e, "sample_offset"));
        double n = num(json_object_get(e, "measured_calls"));
        double *s;
        proc *q = &p[*k];
        if (!isfinite(off) || !isfinite(n) || n < 1 || off < 0 || off + n > (double)n_ms) continue;
        q->entry = e;
        q->id = json_is_integer(json_object_get(e, "process"))
                    ? (long)json_integer_value(json_object_get(e, "process"))
                    : (long)i;
        q->off = (size_t)off;
        q->n = (size_t)n;
        s = malloc(q->n * sizeof *s);
        if (!s) {
            free(p);
            return NULL;
        }
        memcpy(s, ms + q->off, q->n * sizeof *s);
        qsort(s, q->n, sizeof *s, cmp_double);
        q->p50 = pct_sorted(s, q->n, 50);
        free(s);
        if (!(q->p50 > 0)) continue;
        q->y = log(q->p50);
        (*k)++;
    }
    return p;
}

/* The median of the calls of the processes in `member` (k flags). */
static double pooled_p50(const proc *p, size_t k, const int *member, const double *ms,
                         size_t *calls)
{
    size_t i, n = 0, at = 0;
    double *s, v;
    for (i = 0; i < k; i++)
        if (member[i]) n += p[i].n;
    *calls = n;
    if (!n || !(s = malloc(n * sizeof *s))) return NAN;
    for (i = 0; i < k; i++)
        if (member[i]) {
            memcpy(s + at, ms + p[i].off, p[i].n * sizeof *s);
            at += p[i].n;
        }
    qsort(s, n, sizeof *s, cmp_double);
    v = pct_sorted(s, n, 50);
    free(s);
    return v;
}

/* Share of the variance of the per-call latencies that lies between the
 * processes, on log scale: the intraclass correlation B / (B + W), B the
 * variance (n - 1) of the process log-medians, W the mean over processes of
 * the squared robust spread of their log latencies (1.4826 x MAD), so that
 * the stalls of a few calls (the slow tail, explained apart) do not swamp
 * what the medians and their interval see. */
static double between_share(const proc *p, size_t k, const double *ms, char *why)
{
    double grand = 0, b = 0, w = 0, *s;
    size_t i, j;
    if (k < 2) {
        snprintf(why, WHY_SIZE, "one process: nothing lies between processes (use --processes 5)");
        return NAN;
    }
    for (i = 0; i < k; i++) grand += p[i].y;
    grand /= (double)k;
    for (i = 0; i < k; i++) b += (p[i].y - grand) * (p[i].y - grand);
    b /= (double)(k - 1);
    for (i = 0; i < k; i++) {
        double mad;
        if (!(s = malloc(p[i].n * sizeof *s))) return NAN;
        for (j = 0; j < p[i].n; j++) s[j] = fabs(log(ms[p[i].off + j]) - p[i].y);
        qsort(s, p[i].n, sizeof *s, cmp_double);
        mad = 1.4826 * pct_sorted(s, p[i].n, 50);
        free(s);
        w += isfinite(mad) ? mad * mad : 0;
    }
    w /= (double)k;
    if (!(b + w > 0)) {
        snprintf(why, WHY_SIZE, "every call took the same time: there is no spread to divide");
        return NAN;
    }
    return b / (b + w);
}

/* ------------------------------------------------------------ the factors */

__attribute__((format(printf, 2, 3))) static void untested(factor *f, const char *fmt, ...)
{
    va_list ap;
    f->tested = 0;
    va_start(ap, fmt);
    vsnprintf(f->why, WHY_SIZE, fmt, ap);
    va_end(ap);
}

/* The CPU most of a process's calls started on (-1: not recorded), its calls there. */
static long main_cpu(const json_t *entry, double *most, double *total)
{
    const json_t *cpus = json_object_get(entry, "cpus"), *c;
    size_t i;
    long best = -1;
    *most = 0;
    *total = 0;
    if (!json_is_array(cpus)) return -1;
    json_array_foreach(cpus, i, c) {
        double calls = num(json_object_get(c, "calls"));
        const json_t *cpu = json_object_get(c, "cpu");
        if (!json_is_integer(cpu) || !isfinite(calls)) continue;
        *total += calls;
        if (calls > *most) {
            *most = calls;
            best = (long)json_integer_value(cpu);
        }
    }
    return best;
}

/* CPU identity: a one-way ANOVA of the process log-medians grouped by the CPU
 * each process ran most of its calls on; F test on (g - 1, k - g) degrees of
 * freedom. */
static void factor_cpu(factor *f, const proc *p, size_t k, const double *ms, const json_t *report)
{
    long *cpu = calloc(k + 1, sizeof *cpu), distinct[1024];
    int *member = calloc(k + 1, sizeof *member);
    size_t i, j, g = 0;
    double grand = 0, ssb = 0, sst = 0, allowed;
    long seen_cpu = -1;
    int several = 0;
    f->name = "cpu";
    f->measure = "the CPU most of the process's calls started on";
    allowed = num(json_object_get(json_object_get(json_object_get(report, "system_card"), "cpu"),
                                  "allowed_count"));
    if (!cpu || !member) goto out;
    if (k < 2) {
        untested(f, "one process: the CPU cannot be set against other processes (use --processes 5)");
        goto out;
    }
    for (i = 0; i < k; i++) {
        double most, total;
        const json_t *c, *all = json_object_get(p[i].entry, "cpus");
        size_t m;
        cpu[i] = main_cpu(p[i].entry, &most, &total);
        if (cpu[i] < 0) {
            untested(f, "latency_by_process[].cpus: not recorded (recording off, or a report "
                        "of an older rpxprof)");
            goto out;
        }
        json_array_foreach(all, m, c) {
            long v = (long)json_integer_value(json_object_get(c, "cpu"));
            if (num(json_object_get(c, "calls")) > 0) {
                if (seen_cpu >= 0 && v != seen_cpu) several = 1;
                seen_cpu = v;
            }
        }
        for (j = 0; j < g && distinct[j] != cpu[i]; j++) {
        }
        if (j == g && g < sizeof distinct / sizeof distinct[0]) distinct[g++] = cpu[i];
    }
    if (!several) {
        char buf[64];
        snprintf(buf, sizeof buf, "%ld", seen_cpu);
        /* "pinned" only where the run pinned (placement.policy); else the
         * scheduler kept every call there */
        const char *policy = json_string_value(json_object_get(json_object_get(report, "placement"), "policy"));
        untested(f, allowed == 1 ? "one CPU is allowed (CPU %s): every call ran there"
                 : policy && strcmp(policy, "pinned") == 0
                     ? "every call ran on CPU %s (pinned): no other CPU to compare with"
                     : "every call ran on CPU %s (the scheduler kept them there, unpinned): no other CPU to compare with",
                 buf);
        goto out;
    }
    if (g < 2) {
        char buf[64];
        snprintf(buf, sizeof buf, "%ld", distinct[0]);
        untested(f, "every process ran most of its calls on CPU %s: no other CPU to compare with",
                 buf);
        goto out;
    }
    if (g >= k) {
        untested(f, "each process ran on a CPU of its own: the CPU cannot be told apart from the "
                    "process (use more processes than CPUs)");
        goto out;
    }
    f->tested = 1;
    for (i = 0; i < k; i++) grand += p[i].y;
    grand /= (double)k;
    for (i = 0; i < k; i++) sst += (p[i].y - grand) * (p[i].y - grand);
    f->groups = json_array();
    {
        double slow = -INFINITY, fast = INFINITY;
        /* groups in CPU order */
        for (j = 1; j < g; j++)
            for (i = j; i > 0 && distinct[i - 1] > distinct[i]; i--) {
                long t = distinct[i];
                distinct[i] = distinct[i - 1];
                distinct[i - 1] = t;
            }
        for (j = 0; j < g; j++) {
            double mean = 0, p50;
            size_t n = 0, calls;
            json_t *o = json_object(), *ids = json_array();
            for (i = 0; i < k; i++) {
                member[i] = cpu[i] == distinct[j];
                if (member[i]) {
                    mean += p[i].y;
                    n++;
                    json_array_append_new(ids, json_integer(p[i].id));
                }
            }
            mean /= (double)n;
            ssb += (double)n * (mean - grand) * (mean - grand);
            p50 = pooled_p50(p, k, member, ms, &calls);
            json_object_set_new(o, "cpu", json_integer(distinct[j]));
            json_object_set_new(o, "processes", json_integer((json_int_t)n));
            json_object_set_new(o, "process_ids", ids);
            json_object_set_new(o, "calls", json_integer((json_int_t)calls));
            json_object_set_new(o, "p50_ms", real_or_null(p50));
            json_array_append_new(f->groups, o);
            if (p50 > slow) {
                slow = p50;
                f->slow_cpu = distinct[j];
                f->n_slow = n;
            }
            if (p50 < fast) {
                fast = p50;
                f->fast_cpu = distinct[j];
                f->n_fast = n;
            }
        }
        f->ratio = fast > 0 ? slow / fast : NAN;
    }
    if (sst > 0) {
        double ssw = sst - ssb;
        f->share = ssb / sst > 1 ? 1 : ssb / sst; /* ssb and sst summed apart: 1 + 1e-11 */
        f->p = ssw > 1e-12 * sst
                   ? rpx_stats_f_sf((ssb / (double)(g - 1)) / (ssw / (double)(k - g)),
                                    (double)(g - 1), (double)(k - g))
                   : 0.0;
    } else {
        f->share = 0;
        f->p = 1;
    }
out:
    free(cpu);
    free(member);
}

/* A numeric factor: least squares of the process log-medians on x, share R²,
 * F test on (1, k - 2) degrees of freedom; ratio exp(slope x (max - min)). */
static void factor_numeric(factor *f, const proc *p, size_t k, const double *x)
{
    double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0, lo = INFINITY, hi = -INFINITY;
    size_t i;
    if (k < 3) {
        untested(f, "fewer than 3 processes: a trend over processes cannot be tested (use "
                    "--processes 5)");
        return;
    }
    for (i = 0; i < k; i++) {
        mx += x[i];
        my += p[i].y;
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
    }
    mx /= (double)k;
    my /= (double)k;
    for (i = 0; i < k; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (p[i].y - my);
        syy += (p[i].y - my) * (p[i].y - my);
    }
    if (!(hi > lo) || !(sxx > 0)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.3g", lo);
        untested(f, "every process had the same value (%s): nothing to set against the latency",
                 buf);
        return;
    }
    f->tested = 1;
    f->slope = sxy / sxx;
    f->ratio = exp(f->slope * (hi - lo));
    f->groups = json_array();
    for (i = 0; i < k; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "process", json_integer(p[i].id));
        json_object_set_new(o, "value", json_real(x[i]));
        json_object_set_new(o, "calls", json_integer((json_int_t)p[i].n));
        json_object_set_new(o, "p50_ms", json_real(p[i].p50));
        json_array_append_new(f->groups, o);
    }
    if (syy > 0) {
        double r2 = sxy * sxy / (sxx * syy);
        if (r2 > 1) r2 = 1;
        f->share = r2;
        f->p = r2 < 1 - 1e-12 ? rpx_stats_f_sf(r2 / (1 - r2) * (double)(k - 2), 1, (double)(k - 2))
                              : 0.0;
    } else {
        f->share = 0;
        f->p = 1;
    }
}

/* The per-call value of a per-process counter (entry[key], or entry[key][sub]);
 * NaN when any process lacks it. */
static int per_call(const proc *p, size_t k, const char *key, const char *sub, const char *sub2,
                    double *x)
{
    size_t i;
    for (i = 0; i < k; i++) {
        const json_t *v = json_object_get(p[i].entry, key);
        double a;
        if (sub) {
            double b = sub2 ? num(json_object_get(v, sub2)) : 0;
            a = num(json_object_get(v, sub));
            if (!isfinite(b)) return 0;
            a += b;
        } else {
            a = num(v);
        }
        if (!isfinite(a)) return 0;
        x[i] = a / (double)p[i].n;
    }
    return 1;
}

static void factor_counter(factor *f, const proc *p, size_t k, double *x)
{
    const char *missing = NULL;
    if (strcmp(f->name, "migrations") == 0) {
        f->measure = "migrations per call";
        if (!per_call(p, k, "migrations", NULL, NULL, x)) missing = "latency_by_process[].migrations";
    } else if (strcmp(f->name, "off_cpu") == 0) {
        f->measure = "off-CPU ms per call (wall time minus the thread's CPU time)";
        if (!per_call(p, k, "off_cpu_ms", NULL, NULL, x)) {
            f->measure = "involuntary context switches per call";
            if (!per_call(p, k, "context_switches", "involuntary", NULL, x))
                missing = "latency_by_process[].off_cpu_ms and context_switches.involuntary";
        }
    } else {
        f->measure = "page faults (minor + major) per call";
        if (!per_call(p, k, "page_faults", "minor", "major", x))
            missing = "latency_by_process[].page_faults";
    }
    f->positive_only = 1;
    if (missing && k >= 3) {
        untested(f, "%s: not recorded (recording off, or a report of an older rpxprof)", missing);
        return;
    }
    /* events (migrations, faults, switches), not time: counts that differ by a
     * few events between processes cannot explain a latency difference, and
     * with five processes such a count lines up with the CPUs by chance (2
     * faults on the slow CPU's processes, 1 on the other's) */
    if (!missing && k >= 3 && strncmp(f->measure, "off-CPU ms", 10) != 0) {
        double lo = INFINITY, hi = -INFINITY;
        size_t i;
        for (i = 0; i < k; i++) {
            double events = x[i] * (double)p[i].n;
            if (events < lo) lo = events;
            if (events > hi) hi = events;
        }
        if (hi - lo < RPX_VARIANCE_MIN_EVENTS) {
            untested(f, "too few events to explain a difference: the processes' counts (%.0f to "
                        "%.0f) differ by fewer than %d", lo, hi, RPX_VARIANCE_MIN_EVENTS);
            return;
        }
    }
    factor_numeric(f, p, k, x);
}

static void factor_order(factor *f, const proc *p, size_t k, double *x)
{
    size_t i;
    f->measure = "the process's position in the run (0 first)";
    for (i = 0; i < k; i++) x[i] = (double)p[i].id;
    factor_numeric(f, p, k, x);
}

static void factor_load(factor *f, const proc *p, size_t k, double *x)
{
    size_t i;
    f->measure = "the machine's load while the process ran (latency_by_process[].load)";
    for (i = 0; i < k; i++) {
        x[i] = num(json_object_get(p[i].entry, "load"));
        if (!isfinite(x[i])) {
            untested(f, "the run's conditions hold the machine's load at its start and its end "
                        "only (system_card.conditions), not per process; a load that changed "
                        "during the run shows as the `order` factor");
            return;
        }
    }
    f->positive_only = 1;
    factor_numeric(f, p, k, x);
}

static json_t *factor_json(const factor *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "factor", json_string(f->name));
    json_object_set_new(o, "tested", json_boolean(f->tested));
    json_object_set_new(o, "why", f->tested ? json_null() : json_string(f->why));
    json_object_set_new(o, "measure", json_string(f->measure ? f->measure : ""));
    json_object_set_new(o, "share", f->tested ? real_or_null(f->share) : json_null());
    json_object_set_new(o, "ratio", f->tested ? real_or_null(f->ratio) : json_null());
    json_object_set_new(o, "p_value", f->tested ? real_or_null(f->p) : json_null());
    json_object_set_new(o, "p_adjusted", f->tested ? real_or_null(f->p_adj) : json_null());
    json_object_set_new(o, "named", json_boolean(f->named));
    json_object_set_new(o, "groups", f->groups ? json_incref(f->groups) : json_array());
    return o;
}

/* The sentence of a named factor: what, how much, and the fix. */
static void factor_sentence(const factor *f, double ratio_up, int py, char *buf, size_t size)
{
    int pct = (int)floor(f->share * 100 + 0.5);
    const char *cpus = py ? "cpus=" : "--cpus ", *pin = py ? "cpus=N" : "--cpus";
    if (strcmp(f->name, "cpu") == 0)
        snprintf(buf, size,
                 "Processes on CPU %ld ran %.2fx slower than on CPU %ld (%zu and %zu process%s; CPU "
                 "explains %d %% of the spread between processes). For a steady number pin with "
                 "%s%ld; %s pairs its two targets by CPU.",
                 f->slow_cpu, f->ratio, f->fast_cpu, f->n_slow, f->n_fast,
                 f->n_fast == 1 ? "" : "es", pct, cpus, f->fast_cpu,
                 py ? "rpxprof.compare_run" : "rpxprof compare --run");
    else if (strcmp(f->name, "migrations") == 0)
        snprintf(buf, size,
                 "Processes that moved between CPUs more ran %.2fx slower (migrations explain %d %% "
                 "of the spread between processes). For a steady number pin with %s.",
                 ratio_up, pct, pin);
    else if (strcmp(f->name, "off_cpu") == 0)
        snprintf(buf, size,
                 "Processes that spent more time off the CPU (preempted or waiting) ran %.2fx "
                 "slower (off-CPU time explains %d %% of the spread between processes): other work "
                 "competed for the CPU. Run on a quiet machine, or pin with %s to a CPU nothing "
                 "else uses.",
                 ratio_up, pct, pin);
    else if (strcmp(f->name, "page_faults") == 0)
        snprintf(buf, size,
                 "Processes with more page faults ran %.2fx slower (page faults explain %d %% of the "
                 "spread between processes). Touch the model's memory in setup or give more warmup "
                 "calls, so that timed calls do not fault.",
                 ratio_up, pct);
    else if (strcmp(f->name, "order") == 0)
        snprintf(buf, size,
                 "The processes %s over the run: the %s ran %.2fx slower than the %s (the process's "
                 "position explains %d %% of the spread between processes). The machine changed "
                 "during the run (load, clock, heat): rerun on a quiet machine; rpxprof compare --run "
                 "interleaves its two targets so that a drift falls on both.",
                 f->slope > 0 ? "slowed down" : "sped up", f->slope > 0 ? "last" : "first",
                 ratio_up, f->slope > 0 ? "first" : "last", pct);
    else
        snprintf(buf, size,
                 "Processes that ran while the machine was busier ran %.2fx slower (the load "
                 "explains %d %% of the spread between processes). Run on a quiet machine.",
                 ratio_up, pct);
}

/* ------------------------------------------------------------ the slow tail */

/* a share as a percentage that never reads 0 for a few calls in thousands */
static const char *pct_text(double share, char *buf, size_t size)
{
    double v = share * 100;
    if (v == 0 || v >= 1)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.1g", v);
    return buf;
}

/* milliseconds to two significant digits, never in exponent form (0.4, 1.1, 130, 2000) */
static const char *ms2_text(double v, char *buf, size_t size)
{
    if (isfinite(v) && fabs(v) >= 10) {
        double scale = pow(10, floor(log10(fabs(v))) - 1);
        snprintf(buf, size, "%.0f", floor(v / scale + 0.5) * scale);
    } else {
        snprintf(buf, size, "%.2g", v);
    }
    return buf;
}

/* a count of the slow tail worth a sentence: some of the slowest calls had
 * it, and at least as large a share of them as of all calls ("0 migrated (0.8
 * % of all)" says nothing) */
static int stands_out(const json_t *tail, const char *key)
{
    const json_t *c = json_object_get(tail, key);
    double share = num(json_object_get(c, "share")), all = num(json_object_get(c, "share_of_all"));
    return json_integer_value(json_object_get(c, "calls")) > 0 && isfinite(share) && isfinite(all) &&
           share >= all;
}

static const json_t *rec(const json_t *records, const char *key, size_t n)
{
    const json_t *a = json_object_get(records, key);
    return json_is_array(a) && json_array_size(a) == n ? a : NULL;
}

typedef struct idx_ms {
    double ms;
    size_t i;
} idx_ms;

static int cmp_desc(const void *a, const void *b)
{
    const idx_ms *x = a, *y = b;
    if (x->ms != y->ms) return x->ms < y->ms ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

/* {calls, share, share_of_all} of the calls for which has(j) holds, or null */
static json_t *tail_count(const idx_ms *s, size_t tail, size_t n, const json_t *a,
                          const json_t *b, int kind, size_t *in_tail)
{
    size_t j, all = 0, t = 0;
    json_t *o;
    if (!a) return json_null();
    for (j = 0; j < n; j++) {
        int has;
        if (kind == 1 && b) /* migration: a count, or a CPU change */
            has = num(json_array_get(a, j)) > 0;
        else if (kind == 2) /* cpu_start against cpu_end */
            has = json_is_integer(json_array_get(a, j)) && json_is_integer(json_array_get(b, j)) &&
                  json_integer_value(json_array_get(a, j)) != json_integer_value(json_array_get(b, j));
        else if (kind == 3) /* off-CPU without switch counts */
            has = num(json_array_get(a, j)) > OFF_CPU_LOST_MS;
        else
            has = num(json_array_get(a, j)) > 0;
        all += has != 0;
    }
    for (j = 0; j < tail; j++) {
        size_t i = s[j].i;
        int has;
        if (kind == 2)
            has = json_is_integer(json_array_get(a, i)) && json_is_integer(json_array_get(b, i)) &&
                  json_integer_value(json_array_get(a, i)) != json_integer_value(json_array_get(b, i));
        else if (kind == 3)
            has = num(json_array_get(a, i)) > OFF_CPU_LOST_MS;
        else
            has = num(json_array_get(a, i)) > 0;
        t += has != 0;
    }
    *in_tail = t;
    o = json_object();
    json_object_set_new(o, "calls", json_integer((json_int_t)t));
    json_object_set_new(o, "share", json_real((double)t / (double)tail));
    json_object_set_new(o, "share_of_all", json_real((double)all / (double)n));
    return o;
}

static json_t *slow_tail_json(const json_t *records, const double *ms, size_t n)
{
    json_t *o = json_object();
    const json_t *invol = rec(records, "involuntary_switches", n);
    const json_t *off = rec(records, "off_cpu_ms", n);
    const json_t *migr = rec(records, "migrations", n);
    const json_t *cs = rec(records, "cpu_start", n), *ce = rec(records, "cpu_end", n);
    const json_t *major = rec(records, "major_faults", n);
    idx_ms *s;
    size_t tail, j, lost = 0, moved = 0, faulted = 0, n_off = 0;
    double off_lo = INFINITY, off_hi = -INFINITY;
    char msg[600], pb[32], lo_b[32], hi_b[32];
    int len, head;
    if (!o) return NULL;
    tail = (n + 99) / 100;
    json_object_set_new(o, "calls", json_integer((json_int_t)tail));
    json_object_set_new(o, "of_calls", json_integer((json_int_t)n));
    if (n == 0 || !(s = malloc(n * sizeof *s))) {
        json_object_set_new(o, "tested", json_false());
        json_object_set_new(o, "why", json_string("no timed calls"));
        return o;
    }
    for (j = 0; j < n; j++) {
        s[j].ms = ms[j];
        s[j].i = j;
    }
    qsort(s, n, sizeof *s, cmp_desc);
    json_object_set_new(o, "threshold_ms", json_real(s[tail - 1].ms));
    json_object_set_new(o, "slowest_ms", json_real(s[0].ms));
    if (!json_is_object(records) || (!invol && !off && !migr && !cs && !major)) {
        json_object_set_new(o, "tested", json_false());
        json_object_set_new(o, "why", json_string(
            "call_records: not recorded (recording off, or a report of an older rpxprof): "
            "what the slowest calls had in common is unknown"));
        free(s);
        return o;
    }
    json_object_set_new(o, "tested", json_true());
    json_object_set_new(o, "why", json_null());
    json_object_set_new(o, "lost_cpu", invol ? tail_count(s, tail, n, invol, NULL, 0, &lost)
                                             : tail_count(s, tail, n, off, NULL, 3, &lost));
    json_object_set_new(o, "migrated", migr ? tail_count(s, tail, n, migr, migr, 1, &moved)
                                            : tail_count(s, tail, n, cs, ce, 2, &moved));
    json_object_set_new(o, "major_fault", tail_count(s, tail, n, major, NULL, 0, &faulted));
    if (off) {
        for (j = 0; j < tail; j++) {
            size_t i = s[j].i;
            double v = num(json_array_get(off, i));
            int lost_it = invol ? num(json_array_get(invol, i)) > 0 : v > OFF_CPU_LOST_MS;
            if (!lost_it || !isfinite(v)) continue;
            n_off++;
            if (v < off_lo) off_lo = v;
            if (v > off_hi) off_hi = v;
        }
    }
    if (n_off) {
        json_t *r = json_array();
        json_array_append_new(r, json_real(off_lo));
        json_array_append_new(r, json_real(off_hi));
        json_object_set_new(o, "off_cpu_ms_range", r);
    } else {
        json_object_set_new(o, "off_cpu_ms_range", json_null());
    }
    /* the sentence: only what stands out among the slowest calls (a count
     * above none and a share of them at least that among all calls); none:
     * no sentence */
    len = snprintf(msg, sizeof msg, "Of the %zu slowest call%s (%s ms and over): ", tail,
                   tail == 1 ? "" : "s", rpx_format_3g(lo_b, sizeof lo_b, s[tail - 1].ms));
    head = len;
    if ((invol || off) && stands_out(o, "lost_cpu")) {
        double all = num(json_object_get(json_object_get(o, "lost_cpu"), "share_of_all"));
        len += snprintf(msg + len, sizeof msg - (size_t)len, "%zu lost the CPU", lost);
        if (n_off && off_hi > 0)
            len += snprintf(msg + len, sizeof msg - (size_t)len, " for %s-%s ms",
                            ms2_text(off_lo, lo_b, sizeof lo_b), ms2_text(off_hi, hi_b, sizeof hi_b));
        len += snprintf(msg + len, sizeof msg - (size_t)len, " (%s %% of all calls did)",
                        pct_text(all, pb, sizeof pb));
    }
    if ((migr || cs) && stands_out(o, "migrated")) {
        double all = num(json_object_get(json_object_get(o, "migrated"), "share_of_all"));
        len += snprintf(msg + len, sizeof msg - (size_t)len, "%s%zu migrated (%s %% of all)",
                        len > head ? "; " : "", moved, pct_text(all, pb, sizeof pb));
    }
    if (major && stands_out(o, "major_fault")) {
        double all = num(json_object_get(json_object_get(o, "major_fault"), "share_of_all"));
        len += snprintf(msg + len, sizeof msg - (size_t)len, "%s%zu had a major fault (%s %% of all)",
                        len > head ? "; " : "", faulted, pct_text(all, pb, sizeof pb));
    }
    json_object_set_new(o, "message", len > head ? json_string(msg) : json_null());
    free(s);
    return o;
}

/* ------------------------------------------------------------ the section */

#define N_FACTORS 6

/* ms: the samples (owned: freed here); records: the call_records to read;
 * python: the message names options as rpxprof.profile()'s keywords */
static json_t *variance_of(const json_t *report, double *ms, size_t n, const json_t *records,
                           int python)
{
    size_t k = 0, i, m = 0;
    double *x = NULL, share, p[N_FACTORS];
    double adj[N_FACTORS], best = -1;
    proc *procs = NULL;
    factor f[N_FACTORS];
    json_t *o = json_object(), *fa = NULL, *nulls = json_object();
    char why[WHY_SIZE] = "", msg[900] = "";
    int named = -1;
    memset(f, 0, sizeof f);
    if (!ms || !o || !nulls) goto oom;
    procs = read_procs(report, ms, n, &k);
    x = calloc(k + 1, sizeof *x);
    if (!procs || !x) goto oom;
    share = between_share(procs, k, ms, why);
    json_object_set_new(o, "between_process_share", real_or_null(share));
    if (!isfinite(share)) json_object_set_new(nulls, "between_process_share", json_string(why));
    {
        double lo = INFINITY, hi = -INFINITY;
        for (i = 0; i < k; i++) {
            if (procs[i].p50 < lo) lo = procs[i].p50;
            if (procs[i].p50 > hi) hi = procs[i].p50;
        }
        json_object_set_new(o, "process_p50_ratio", k >= 2 ? real_or_null(hi / lo) : json_null());
    }
    f[0].name = "cpu";
    f[1].name = "migrations";
    f[2].name = "off_cpu";
    f[3].name = "page_faults";
    f[4].name = "order";
    f[5].name = "load";
    factor_cpu(&f[0], procs, k, ms, report);
    for (i = 1; i <= 3; i++) factor_counter(&f[i], procs, k, x);
    factor_order(&f[4], procs, k, x);
    factor_load(&f[5], procs, k, x);
    /* Holm over the factors tested */
    for (i = 0; i < N_FACTORS; i++)
        if (f[i].tested) p[m++] = isfinite(f[i].p) ? f[i].p : 1;
    if (m && rpx_stats_holm(p, m, adj) != 0) goto oom;
    for (i = 0, m = 0; i < N_FACTORS; i++) {
        double up;
        if (!f[i].tested) continue;
        f[i].p_adj = adj[m++];
        up = f[i].ratio >= 1 ? f[i].ratio : 1 / f[i].ratio;
        f[i].named = f[i].p_adj < RPX_VARIANCE_ALPHA && f[i].share >= RPX_VARIANCE_MIN_SHARE &&
                     up >= RPX_VARIANCE_MIN_RATIO && (!f[i].positive_only || f[i].slope > 0);
        if (f[i].named && f[i].share > best) {
            best = f[i].share;
            named = (int)i;
        }
    }
    fa = json_array();
    for (i = 0; fa && i < N_FACTORS; i++) json_array_append_new(fa, factor_json(&f[i]));
    json_object_set_new(o, "factors", fa);
    if (named >= 0) {
        const factor *g = &f[named];
        factor_sentence(g, g->ratio >= 1 ? g->ratio : 1 / g->ratio, python, msg, sizeof msg);
    }
    json_object_set_new(o, "explained_by", named >= 0 ? json_string(f[named].name) : json_null());
    json_object_set_new(o, "message", named >= 0 ? json_string(msg) : json_null());
    json_object_set_new(o, "slow_tail", slow_tail_json(records, ms, n));
    json_object_set_new(o, "null_reasons", nulls);
    nulls = NULL;
    json_object_set_new(o, "method",
                        json_string("per process: the median of its calls, on log scale; "
                                    "between_process_share: intraclass correlation B / (B + W) of "
                                    "the log latencies, B the variance of the process log-medians, "
                                    "W the mean squared 1.4826 x MAD within processes; "
                                    "cpu: between-group sum of squares of the process log-medians "
                                    "grouped by each process's main CPU over their total, F test; "
                                    "numeric factors: R^2 of a least-squares line of the process "
                                    "log-medians on the factor, F test; p-values Holm-adjusted over "
                                    "the factors tested"));
    {
        char rule[300];
        snprintf(rule, sizeof rule,
                 "a factor is named when tested, its Holm-adjusted p < %g, its share >= %g and its "
                 "ratio >= %g (slower with more of it, for migrations, off_cpu, page_faults and load)",
                 RPX_VARIANCE_ALPHA, RPX_VARIANCE_MIN_SHARE, RPX_VARIANCE_MIN_RATIO);
        json_object_set_new(o, "rule", json_string(rule));
    }
    for (i = 0; i < N_FACTORS; i++) json_decref(f[i].groups);
    free(ms);
    free(x);
    free(procs);
    return o;
oom:
    for (i = 0; i < N_FACTORS; i++) json_decref(f[i].groups);
    json_decref(o);
    json_decref(nulls);
    free(ms);
    free(x);
    free(procs);
    return NULL;
}

json_t *rpx_variance_json_for(const json_t *report, int python)
{
    const json_t *samples = json_object_get(report, "latency_samples_ms"), *v;
    size_t n = json_array_size(samples), i;
    double *ms = malloc((n ? n : 1) * sizeof *ms);
    if (ms) json_array_foreach(samples, i, v) ms[i] = num(v);
    return variance_of(report, ms, n, json_object_get(report, "call_records"), python);
}

json_t *rpx_variance_json(const json_t *report) { return rpx_variance_json_for(report, 0); }

json_t *rpx__variance_json_of(const json_t *report, double *ms, size_t n, const json_t *records,
                              int python)
{
    return variance_of(report, ms, n, records, python);
}
