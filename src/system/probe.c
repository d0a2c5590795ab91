/* probe.c — owns the per-CPU speed probe (`rpxprof system --probe`, and the
 * cheap form each run's card carries as `cpu_probe`): one helper thread pins
 * itself to each allowed CPU in turn and times a short compute loop (a
 * dependent 64-bit multiply-add chain: latency-bound, so it follows the
 * CPU's clock) and, in the full form, a STREAM triad over a buffer larger
 * than the last-level cache; the repetitions are interleaved over the CPUs
 * (rep 1 on every CPU, then rep 2, ...) so a drift of the machine falls on
 * all of them. The rule that calls CPUs different (rpx__probe_judge) is kept
 * apart so tests can feed it crafted numbers. docs/system.md#cpu_probe. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpxprof/error.h"
#include "system/system_internal.h"

#define PROBE_MAX_REPS 9

/* the two forms: the full one of `rpxprof system --probe`, the cheap one of a run */
typedef struct probe_plan {
    int reps;
    long compute_iters, warmup_iters;
    int memory;               /* 1: the triad too */
} probe_plan;

static const probe_plan full_plan = {5, 1L << 23, 1L << 20, 1};
static const probe_plan cheap_plan = {5, 1L << 18, 1L << 16, 0};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The helper thread's own CPU time: time it waited for a CPU that other work
 * held is not this CPU's slowness (conditions.other_processes says that). */
static double thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile uint64_t sink;

/* Latency-bound: each step needs the previous one (multiply + add). */
static __attribute__((noinline)) uint64_t chain(uint64_t x, long n)
{
    long i;
    for (i = 0; i < n; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}

static __attribute__((noinline)) void triad(double *a, const double *b, const double *c,
                                            size_t n, double s)
{
    size_t i;
    for (i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

/* ---- the rule ------------------------------------------------------------ */

static double median(double *v, size_t n)
{
    size_t i, j;
    for (i = 1; i < n; i++) /* insertion sort: n <= PROBE_MAX_REPS */
        for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int rpx__probe_judge(const double *t, size_t n_cpus, size_t n_reps, double threshold,
                     rpx__probe_verdict *v)
{
    size_t c, r;
    double fast_max = 0;
    memset(v, 0, sizeof *v);
    if (n_cpus == 0 || n_reps == 0 || n_reps > PROBE_MAX_REPS || n_cpus > RPX__MAX_CPUS) return -1;
    if (!(v->median = calloc(n_cpus, sizeof *v->median)) ||
        !(v->noise = calloc(n_cpus, sizeof *v->noise)) ||
        !(v->slow = calloc(n_cpus, sizeof *v->slow))) {
        rpx__probe_verdict_free(v);
        return -1;
    }
    for (c = 0; c < n_cpus; c++) {
        double s[PROBE_MAX_REPS];
        for (r = 0; r < n_reps; r++) {
            s[r] = t[c * n_reps + r];
            if (!(s[r] > 0)) {
                rpx__probe_verdict_free(v);
                return -1;
            }
        }
        v->median[c] = median(s, n_reps);
        v->noise[c] = (s[n_reps - 1] - s[0]) / v->median[c];
        if (v->noise[c] > v->max_noise) v->max_noise = v->noise[c];
        if (v->median[c] < v->median[v->fastest]) v->fastest = c;
        if (v->median[c] > v->median[v->slowest]) v->slowest = c;
    }
    v->ratio = v->median[v->slowest] / v->median[v->fastest];
    for (r = 0; r < n_reps; r++)
        if (t[v->fastest * n_reps + r] > fast_max) fast_max = t[v->fastest * n_reps + r];
    /* slow: even the CPU's best repetition is more than `threshold` slower
     * than the fastest CPU's worst one — beyond the repetitions' own noise */
    for (c = 0; c < n_cpus; c++) {
        double best = t[c * n_reps];
        for (r = 1; r < n_reps; r++)
            if (t[c * n_reps + r] < best) best = t[c * n_reps + r];
        if (c != v->fastest && best > fast_max * (1 + threshold)) {
            v->slow[c] = 1;
            v->n_slow++;
        }
    }
    return 0;
}

void rpx__probe_verdict_free(rpx__probe_verdict *v)
{
    free(v->median);
    free(v->noise);
    free(v->slow);
    v->median = v->noise = NULL;
    v->slow = NULL;
}

/* ---- the measurement ----------------------------------------------------- */

typedef struct probe_job {
    const probe_plan *plan;
    int cpus[RPX__MAX_CPUS];
    int n;
    double *compute;          /* [cpu][rep] ns per iteration */
    double *memory;           /* [cpu][rep] ns per byte (lower is faster, as compute) */
    int *failed;              /* [cpu]: the thread could not be moved there */
    double *a, *b, *c;
    size_t elems;
} probe_job;

static void *probe_thread(void *arg)
{
    probe_job *j = arg;
    int r, k;
    for (r = 0; r < j->plan->reps; r++)
        for (k = 0; k < j->n; k++) {
            cpu_set_t set;
            double t0, t1;
            if (j->failed[k]) continue;
            CPU_ZERO(&set);
            CPU_SET(j->cpus[k], &set);
            if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0 ||
                (sched_yield(), sched_getcpu() != j->cpus[k])) {
                j->failed[k] = 1;
                continue;
            }
            sink = chain(sink + 1, j->plan->warmup_iters); /* the clock ramps up */
            t0 = thread_ns();
            sink = chain(sink + 1, j->plan->compute_iters);
            t1 = thread_ns();
            j->compute[(size_t)k * (size_t)j->plan->reps + (size_t)r] =
                (t1 - t0) / (double)j->plan->compute_iters;
            if (j->a) {
                t0 = thread_ns();
                triad(j->a, j->b, j->c, j->elems, 3.0);
                t1 = thread_ns();
                sink += (uint64_t)j->a[j->elems / 2];
                j->memory[(size_t)k * (size_t)j->plan->reps + (size_t)r] =
                    (t1 - t0) / (double)(3 * sizeof(double) * j->elems);
            }
        }
    return NULL;
}

/* The largest cache size (KiB) sysfs lists for `cpu`, or 0. */
static long long llc_kb(int cpu)
{
    long long best = 0;
    int k;
    for (k = 0; k < 16; k++) {
        char path[160], v[64], *end;
        long long kb;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, k);
        if (rpx__sys_line(path, v, sizeof v) != 0) break;
        kb = strtoll(v, &end, 10);
        if (*end == 'M') kb *= 1024;
        if (kb > best) best = kb;
    }
    return best;
}

static json_t *rows(const probe_job *j, const rpx__probe_verdict *v,
                    const char *per_key, int gbps)
{
    json_t *arr = json_array();
    int k, m = 0;
    for (k = 0; k < j->n; k++) {
        json_t *e = json_object();
        rpx__sys_put(e, "cpu", json_integer(j->cpus[k]));
        if (j->failed[k]) {
            rpx__sys_null(e, "relative", "the probe thread could not be moved to CPU %d", j->cpus[k]);
            rpx__sys_null(e, per_key, "the probe thread could not be moved to CPU %d", j->cpus[k]);
            rpx__sys_null(e, "noise", "not measured");
            rpx__sys_put(e, "slow", json_false());
        } else {
            double med = v->median[m];
            rpx__sys_put(e, "relative", json_real(v->median[v->fastest] / med));
            rpx__sys_put(e, per_key, json_real(gbps ? 1.0 / med : med)); /* bytes/ns = GB/s */
            rpx__sys_put(e, "noise", json_real(v->noise[m]));
            rpx__sys_put(e, "slow", json_boolean(v->slow[m]));
            m++;
        }
        rpx__sys_finish(e, 0);
        json_array_append_new(arr, e);
    }
    return arr;
}

/* Judge one loop's numbers over the CPUs that were measured; the sentence
 * (or NULL) into *sentence. */
static int judge_loop(const probe_job *j, const double *t, const char *what, double threshold,
                      rpx__probe_verdict *v, char *sentence, size_t size)
{
    double *packed = malloc((size_t)j->n * (size_t)j->plan->reps * sizeof *packed);
    int *ids = malloc((size_t)j->n * sizeof *ids);
    size_t m = 0, r, c;
    int rc = -1;
    sentence[0] = '\0';
    if (packed && ids) {
        int k;
        for (k = 0; k < j->n; k++) {
            if (j->failed[k]) continue;
            for (r = 0; r < (size_t)j->plan->reps; r++)
                packed[m * (size_t)j->plan->reps + r] = t[(size_t)k * (size_t)j->plan->reps + r];
            ids[m++] = j->cpus[k];
        }
        rc = m ? rpx__probe_judge(packed, m, (size_t)j->plan->reps, threshold, v) : -1;
    }
    if (rc == 0 && v->n_slow > 0) {
        int n = snprintf(sentence, size, "CPU%s", v->n_slow > 1 ? "s" : "");
        for (c = 0; c < m && n >= 0 && (size_t)n < size; c++)
            if (v->slow[c]) n += snprintf(sentence + n, size - (size_t)n, " %d", ids[c]);
        if (n >= 0 && (size_t)n < size)
            snprintf(sentence + n, size - (size_t)n,
                     " ran the %s loop up to %.2fx slower than CPU %d (median of %d repetitions "
                     "each; the slow CPU's best repetition is more than %.0f%% slower than CPU "
                     "%d's worst). Other work on that CPU during the probe reads as slowness too: "
                     "probe again to tell. A run whose processes land on different CPUs will "
                     "vary: pin it to one CPU (taskset -c %d rpxprof run ...).",
                     what, v->ratio, ids[v->fastest], j->plan->reps, threshold * 100,
                     ids[v->fastest], ids[v->fastest]);
    }
    free(packed);
    free(ids);
    return rc;
}

json_t *rpx_system_cpu_probe(int full, rpx_error *err)
{
    const probe_plan *plan = full ? &full_plan : &cheap_plan;
    probe_job *j = NULL;
    json_t *p = NULL, *method, *spread, *noise;
    rpx__probe_verdict vc = {0}, vm = {0};
    char wc[1024] = "", wm[1024] = "", llc_text[32] = "";
    cpu_set_t live;
    pthread_t th;
    double t0 = now_ns();
    size_t cells;
    int cpu, rc;
    long long llc = 0;

    if (!rpx__sys_live()) {
        rpx_error_set(err, RPX_EINVAL,
                      "RPX_SYSROOT is set: the card describes a snapshot of another machine; the "
                      "probe measures only the live one");
        return NULL;
    }
    if (sched_getaffinity(0, sizeof live, &live) != 0) {
        rpx_error_set(err, RPX_EIO, "sched_getaffinity: %s", strerror(errno));
        return NULL;
    }
    if (!(j = calloc(1, sizeof *j))) goto oom;
    j->plan = plan;
    for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &live)) j->cpus[j->n++] = cpu;
    cells = (size_t)j->n * (size_t)plan->reps;
    if (!(j->compute = calloc(cells, sizeof *j->compute)) ||
        !(j->memory = calloc(cells, sizeof *j->memory)) ||
        !(j->failed = calloc((size_t)j->n, sizeof *j->failed)))
        goto oom;
    if (plan->memory) {
        /* three arrays whose sum is 4x the largest cache, 64 MiB to 1 GiB */
        size_t bytes;
        llc = j->n ? llc_kb(j->cpus[0]) : 0;
        bytes = (size_t)(llc * 1024 * 4);
        if (bytes < (64u << 20)) bytes = 64u << 20;
        if (bytes > (1024u << 20)) bytes = 1024u << 20;
        j->elems = bytes / 3 / sizeof(double);
        j->a = malloc(j->elems * sizeof(double));
        j->b = malloc(j->elems * sizeof(double));
        j->c = malloc(j->elems * sizeof(double));
        if (!j->a || !j->b || !j->c) goto oom;
        {
            size_t i; /* touch every page before any timing */
            for (i = 0; i < j->elems; i++) {
                j->a[i] = 0;
                j->b[i] = 1;
                j->c[i] = 2;
            }
        }
    }
    if ((rc = pthread_create(&th, NULL, probe_thread, j)) != 0) {
        rpx_error_set(err, RPX_EIO, "pthread_create: %s", strerror(rc));
        goto fail;
    }
    pthread_join(th, NULL);

    if (llc > 0) snprintf(llc_text, sizeof llc_text, "%lld KiB", llc);
    if (!(p = json_object())) goto oom;
    rpx__sys_put(p, "form", json_string(full ? "full" : "cheap"));
    method = json_object();
    rpx__sys_put(method, "compute", json_sprintf(
        "dependent 64-bit multiply-add chain of %ld iterations (after %ld untimed), the "
        "thread's CPU time (CLOCK_THREAD_CPUTIME_ID: waiting for the CPU does not count)", plan->compute_iters, plan->warmup_iters));
    if (plan->memory)
        rpx__sys_put(method, "memory", json_sprintf(
            "STREAM triad a[i] = b[i] + s*c[i] over three arrays of %zu doubles (%.0f MiB in all: "
            "4x the largest cache, %s, at least 64 MiB), one pass per repetition (the thread's "
            "CPU time), 24 bytes per element counted",
            j->elems, (double)(3 * j->elems * sizeof(double)) / 1048576.0,
            llc > 0 ? llc_text : "which sysfs does not list"));
    else
        rpx__sys_null(method, "memory", "the cheap form times the compute loop only");
    rpx__sys_put(method, "repetitions", json_integer(plan->reps));
    rpx__sys_put(method, "order", json_string(
        "one helper thread pinned to each allowed CPU in turn; repetition 1 on every CPU, then "
        "repetition 2, ..."));
    rpx__sys_put(method, "threshold", json_real(RPX__PROBE_THRESHOLD));
    if (plan->memory)
        rpx__sys_put(method, "threshold_memory", json_real(RPX__PROBE_THRESHOLD_MEMORY));
    else
        rpx__sys_null(method, "threshold_memory", "the memory loop is not measured");
    rpx__sys_put(method, "rule", json_string(
        "a CPU is slow when its best repetition is more than `threshold` (the memory loop: "
        "`threshold_memory`) slower than the fastest CPU's (by median) worst repetition"));
    rpx__sys_finish(method, 0);
    rpx__sys_put(p, "method", method);
    rpx__sys_put(p, "cpus", json_integer(j->n));
    spread = json_object();
    noise = json_object();
    if (judge_loop(j, j->compute, "compute", RPX__PROBE_THRESHOLD, &vc, wc, sizeof wc) == 0) {
        rpx__sys_put(p, "compute", rows(j, &vc, "ns_per_iter", 0));
        rpx__sys_put(spread, "compute", json_real(vc.ratio));
        rpx__sys_put(noise, "compute", json_real(vc.max_noise));
    } else {
        rpx__sys_null(p, "compute", "no allowed CPU could be measured");
        rpx__sys_null(spread, "compute", "not measured");
        rpx__sys_null(noise, "compute", "not measured");
    }
    if (!plan->memory) {
        rpx__sys_null(p, "memory", "the cheap form times the compute loop only; `rpxprof system "
                      "--probe` times memory too");
        rpx__sys_null(spread, "memory", "not measured");
        rpx__sys_null(noise, "memory", "not measured");
    } else if (judge_loop(j, j->memory, "memory", RPX__PROBE_THRESHOLD_MEMORY, &vm, wm, sizeof wm) == 0) {
        rpx__sys_put(p, "memory", rows(j, &vm, "gbps", 1));
        rpx__sys_put(spread, "memory", json_real(vm.ratio));
        rpx__sys_put(noise, "memory", json_real(vm.max_noise));
    } else {
        rpx__sys_null(p, "memory", "no allowed CPU could be measured");
        rpx__sys_null(spread, "memory", "not measured");
        rpx__sys_null(noise, "memory", "not measured");
    }
    rpx__sys_finish(spread, 0);
    rpx__sys_finish(noise, 0);
    rpx__sys_put(p, "spread", spread);
    rpx__sys_put(p, "noise", noise);
    if (wc[0] && wm[0])
        rpx__sys_put(p, "warning", json_sprintf("%s Memory: %s", wc, wm));
    else if (wc[0] || wm[0])
        rpx__sys_put(p, "warning", json_string(wc[0] ? wc : wm));
    else
        rpx__sys_put(p, "warning", json_null());
    rpx__sys_put(p, "cost_ms", json_real((now_ns() - t0) / 1e6));
    rpx__sys_finish(p, 0);
    rpx__probe_verdict_free(&vc);
    rpx__probe_verdict_free(&vm);
    goto done;
oom:
    rpx_error_set(err, RPX_ENOMEM, "CPU probe: out of memory");
fail:
    json_decref(p);
    p = NULL;
done:
    if (j) {
        free(j->compute);
        free(j->memory);
        free(j->failed);
        free(j->a);
        free(j->b);
        free(j->c);
        free(j);
    }
    return p;
}

void rpx_system_card_set_cpu_probe(json_t *card, json_t *probe, const char *why)
{
    json_t *warnings;
    const char *w;
    if (!card) return;
    if (probe) {
        json_object_set(card, "cpu_probe", probe);
        json_object_del(json_object_get(card, "unavailable"), "cpu_probe");
    } else {
        rpx__sys_null(card, "cpu_probe", "%s", why ? why : "not measured");
    }
    w = json_string_value(json_object_get(probe, "warning"));
    warnings = json_object_get(card, "warnings");
    if (w && json_is_array(warnings)) rpx__sys_warn(warnings, "%s", w);
}
