/* call_records.c — owns the report's keys of where each timed call ran
 * (call_records.h) from the per-call arrays the worker processes recorded
 * (src/measure/call_record.c): `call_records`, parallel to
 * latency_samples_ms (one entry per timed call, so bounded like it by
 * --repeats), and each process's totals in latency_by_process. The core type
 * of a hybrid CPU comes from /sys/devices/cpu_core/cpus and
 * /sys/devices/cpu_atom/cpus through the system layer's sysroot helper. A
 * value not recorded is null, never 0. Library code: nothing printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "report/call_records.h"
#include "rpxprof/system.h"

/* Off-CPU time of call i (ns): its wall time minus the calling thread's CPU
 * time over it, at least 0 (the CPU time also holds a few microseconds of the
 * counters' own reads, which are outside the wall time). */
static double off_cpu_ms(const rpx_run_process *p, size_t i)
{
    int64_t off = p->samples[i] - p->records->cpu_ns[i];
    return off > 0 ? (double)off / 1e6 : 0.0;
}

static uint32_t count(const rpx_run_process *p, size_t i, int which)
{
    return p->records->counts[RPX_REC_N_COUNTS * i + (size_t)which];
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* [{"cpu": N, "calls": M}] by the CPU each call started on (calls whose CPU
 * could not be read are left out). */
static json_t *cpus_json(const rpx_run_process *p)
{
    json_t *a = json_array();
    int *cpu = malloc((p->measured ? p->measured : 1) * sizeof *cpu);
    size_t i, n = 0;
    if (!a || !cpu) {
        free(cpu);
        json_decref(a);
        return json_null();
    }
    for (i = 0; i < p->measured; i++)
        if (p->records->cpu[2 * i] != RPX_CALL_CPU_UNKNOWN) cpu[n++] = p->records->cpu[2 * i];
    qsort(cpu, n, sizeof *cpu, cmp_int);
    for (i = 0; i < n;) {
        size_t j = i;
        json_t *o = json_object();
        while (j < n && cpu[j] == cpu[i]) j++;
        json_object_set_new(o, "cpu", json_integer(cpu[i]));
        json_object_set_new(o, "calls", json_integer((json_int_t)(j - i)));
        json_array_append_new(a, o);
        i = j;
    }
    free(cpu);
    return a;
}

void rpx__call_records_process(const rpx_run_process *p, json_t *o)
{
    const rpx_call_record_info *in = p->record_info;
    json_int_t sum[RPX_REC_N_COUNTS] = {0};
    double off = 0;
    size_t i;
    int k;
    if (!in || !p->records) {
        json_object_set_new(o, "cpus", json_null());
        json_object_set_new(o, "migrations", json_null());
        json_object_set_new(o, "context_switches", json_null());
        json_object_set_new(o, "page_faults", json_null());
        json_object_set_new(o, "off_cpu_ms", json_null());
        return;
    }
    json_object_set_new(o, "cpus", in->cpu ? cpus_json(p) : json_null());
    if (!in->full) { /* --call-records cpu: the counters over the process's timed loop */
        const rpx_call_totals *t = p->record_totals;
        int ok = t && t->valid;
        json_object_set_new(o, "migrations", ok && in->migrations ? json_integer(t->migrations)
                                                                    : json_null());
        if (ok && in->rusage) {
            json_t *cs = json_object(), *pf = json_object();
            json_object_set_new(cs, "voluntary", json_integer(t->voluntary));
            json_object_set_new(cs, "involuntary", json_integer(t->involuntary));
            json_object_set_new(pf, "minor", json_integer(t->minor_faults));
            json_object_set_new(pf, "major", json_integer(t->major_faults));
            json_object_set_new(o, "context_switches", cs);
            json_object_set_new(o, "page_faults", pf);
        } else {
            json_object_set_new(o, "context_switches", json_null());
            json_object_set_new(o, "page_faults", json_null());
        }
        json_object_set_new(o, "off_cpu_ms",
                            ok && in->cpu_time
                                ? json_real(t->wall_ns > t->cpu_ns ? (double)(t->wall_ns - t->cpu_ns) / 1e6
                                                                   : 0.0)
                                : json_null());
        return;
    }
    for (i = 0; i < p->measured; i++) {
        for (k = 0; k < RPX_REC_N_COUNTS; k++) sum[k] += count(p, i, k);
        if (in->cpu_time) off += off_cpu_ms(p, i);
    }
    json_object_set_new(o, "migrations",
                        in->migrations ? json_integer(sum[RPX_REC_MIGRATIONS]) : json_null());
    if (in->rusage) {
        json_t *cs = json_object(), *pf = json_object();
        json_object_set_new(cs, "voluntary", json_integer(sum[RPX_REC_VOLUNTARY]));
        json_object_set_new(cs, "involuntary", json_integer(sum[RPX_REC_INVOLUNTARY]));
        json_object_set_new(pf, "minor", json_integer(sum[RPX_REC_MINOR_FAULTS]));
        json_object_set_new(pf, "major", json_integer(sum[RPX_REC_MAJOR_FAULTS]));
        json_object_set_new(o, "context_switches", cs);
        json_object_set_new(o, "page_faults", pf);
    } else {
        json_object_set_new(o, "context_switches", json_null());
        json_object_set_new(o, "page_faults", json_null());
    }
    json_object_set_new(o, "off_cpu_ms", in->cpu_time ? json_real(off) : json_null());
}

/* Whether cpu is in a kernel CPU list ("0-7,16,18-19"). */
static int in_list(const char *list, int cpu)
{
    const char *s = list;
    while (*s) {
        char *end;
        long lo = strtol(s, &end, 10), hi;
        if (end == s) return 0;
        hi = lo;
        if (*end == '-') {
            s = end + 1;
            hi = strtol(s, &end, 10);
            if (end == s) return 0;
        }
        if (cpu >= lo && cpu <= hi) return 1;
        s = end;
        while (*s == ',' || *s == '\n' || *s == ' ') s++;
    }
    return 0;
}

/* The hybrid CPU's two lists; 0 when this is not a hybrid CPU (either missing). */
static int hybrid_lists(char *core, char *atom, size_t size)
{
    return rpx_sys_read("/sys/devices/cpu_core/cpus", core, size) > 0 &&
           rpx_sys_read("/sys/devices/cpu_atom/cpus", atom, size) > 0;
}

/* Small integers (CPU numbers, counts: mostly 0) and 0.0 as shared values:
 * an array of 100,000 calls holds pointers to a few objects instead of
 * 100,000 of its own (jansson counts references; the arrays take one each). */
#define SMALL 1024
typedef struct shared_values {
    json_t *small[SMALL];
    json_t *zero_real;
    json_t *performance, *efficiency;
} shared_values;

static json_t *int_value(shared_values *v, json_int_t n)
{
    if (n >= 0 && n < SMALL) {
        if (!v->small[n]) v->small[n] = json_integer(n);
        return json_incref(v->small[n]);
    }
    return json_integer(n);
}

static json_t *real_value(shared_values *v, double x)
{
    if (x == 0) {
        if (!v->zero_real) v->zero_real = json_real(0);
        return json_incref(v->zero_real);
    }
    return json_real(x);
}

static void shared_free(shared_values *v)
{
    int i;
    for (i = 0; i < SMALL; i++) json_decref(v->small[i]);
    json_decref(v->zero_real);
    json_decref(v->performance);
    json_decref(v->efficiency);
}

typedef struct have {
    int cpu, migrations, rusage, cpu_time, pmu;
} have;

static const char *const count_keys[RPX_REC_N_COUNTS] = {
    "migrations", "voluntary_switches", "involuntary_switches", "minor_faults", "major_faults"};

/* call_records.source.core_type */
static json_t *core_type_source(const json_t *core)
{
    return json_string(core ? "the start CPU in /sys/devices/cpu_core/cpus "
                              "(performance) or /sys/devices/cpu_atom/cpus "
                              "(efficiency)"
                            : "not a hybrid CPU: /sys/devices/cpu_core/cpus and "
                              "/sys/devices/cpu_atom/cpus are not both there");
}

/* call_records.source with --call-records cpu: how each field was measured. */
static void source_cpu_mode(json_t *src, const json_t *core)
{
    int k;
    const char *cpu = "sched_getcpu() before t0 and after t1 (glibc: the rseq area's cpu_id, "
                      "or the vDSO's getcpu; no system call)";
    const char *per_process =
        "not recorded per call with --call-records cpu (the default: no system call a "
        "call); counted once per process over the process's timed loop, not per call "
        "(latency_by_process[]'s migrations, context_switches, page_faults, off_cpu_ms); "
        "--call-records full records it per call";
    json_object_set_new(src, "cpu_start", json_string(cpu));
    json_object_set_new(src, "cpu_end", json_string(cpu));
    for (k = 0; k < RPX_REC_N_COUNTS; k++) json_object_set_new(src, count_keys[k], json_string(per_process));
    json_object_set_new(src, "off_cpu_ms", json_string(per_process));
    json_object_set_new(src, "core_type", core_type_source(core));
    json_object_set_new(src, "effective_clock_ghz",
                        json_string("recorded per call with --call-records full only (cycles "
                                    "over the thread's CPU time, where a PMU is)"));
    json_object_set_new(src, "per_process",
                        json_string("latency_by_process[]'s migrations, context_switches, "
                                    "page_faults and off_cpu_ms: over the process's timed "
                                    "loop, not per call: perf software counters "
                                    "(task-clock, cpu-migrations) and getrusage(RUSAGE_THREAD) "
                                    "read once before the first timed call and once after "
                                    "the last; they include the loop's own bookkeeping "
                                    "between calls (about 0.1 us a call: the clock reads, "
                                    "two sched_getcpu, storing the sample); off_cpu_ms is "
                                    "the loop's wall time minus the thread's CPU time over "
                                    "it"));
}

/* call_records.source with --call-records full. */
static void source_full_mode(json_t *src, const have *h, const json_t *core, const json_t *ghz,
                             int user_only, const rpx_call_record_info *first)
{
    const char *cpu = "sched_getcpu() before t0 and after t1 (glibc: the rseq area's cpu_id, "
                      "or the vDSO's getcpu; no system call)";
    const char *ru = "getrusage(RUSAGE_THREAD) before t0 and after t1: the calling thread";
    json_object_set_new(src, "per_process",
                        json_string("latency_by_process[]'s counts: the sums of the calls' "
                                    "own (per call, before t0 and after t1)"));
    json_object_set_new(src, "cpu_start", json_string(cpu));
    json_object_set_new(src, "cpu_end", json_string(cpu));
    json_object_set_new(src, "migrations",
                        h->migrations ? json_string("perf_event_open software counter "
                                                   "PERF_COUNT_SW_CPU_MIGRATIONS of the "
                                                   "calling thread")
                                     : json_string(first->migrations_why));
    json_object_set_new(src, "voluntary_switches", json_string(h->rusage ? ru : "getrusage(RUSAGE_THREAD) failed"));
    json_object_set_new(src, "involuntary_switches", json_string(h->rusage ? ru : "getrusage(RUSAGE_THREAD) failed"));
    json_object_set_new(src, "minor_faults", json_string(h->rusage ? ru : "getrusage(RUSAGE_THREAD) failed"));
    json_object_set_new(src, "major_faults", json_string(h->rusage ? ru : "getrusage(RUSAGE_THREAD) failed"));
    json_object_set_new(src, "off_cpu_ms",
                        json_string(!h->cpu_time ? "the thread's CPU time could not be read"
                                    : h->migrations
                                        ? "the call's wall time (t1 - t0) minus the calling "
                                          "thread's CPU time over it (perf software counter "
                                          "PERF_COUNT_SW_TASK_CLOCK), at least 0"
                                        : "the call's wall time (t1 - t0) minus the calling "
                                          "thread's CPU time over it "
                                          "(CLOCK_THREAD_CPUTIME_ID), at least 0"));
    json_object_set_new(src, "core_type", core_type_source(core));
    json_object_set_new(src, "effective_clock_ghz",
                        json_string(json_is_array(ghz)
                                        ? (user_only ? "cycles (PERF_COUNT_HW_CPU_CYCLES, user "
                                                       "mode only) over the thread's CPU time"
                                                     : "cycles (PERF_COUNT_HW_CPU_CYCLES) over "
                                                       "the thread's CPU time")
                                        : "no PMU: see pmu.why"));
}

/* cpu_start / cpu_end written without being held: process i's calls start at
 * at[i] of the run's; e->k: 0 where each call started, 1 where it ended */
typedef struct cpu_src {
    const uint16_t *cpu;
    size_t at, n;
} cpu_src;

/* the processes' sources, and one shared value per small CPU number (a tree
 * made of them costs a pointer a call) */
typedef struct cpu_srcs {
    json_t *small[SMALL];
    cpu_src s[];
} cpu_srcs;

static void cpu_srcs_drop(void *b)
{
    cpu_srcs *c = b;
    size_t i;
    if (!c) return;
    for (i = 0; i < SMALL; i++) json_decref(c->small[i]);
    free(c);
}

static json_t *cpu_at(const rpx_json_lazy_entry *e, size_t j)
{
    cpu_srcs *all = e->b;
    const cpu_src *s = all->s;
    size_t lo = 0, hi = (size_t)(uintptr_t)e->a; /* the processes */
    uint16_t c;
    while (hi - lo > 1) { /* the last process that starts at or before j */
        size_t mid = (lo + hi) / 2;
        if (s[mid].at <= j) lo = mid;
        else hi = mid;
    }
    if (!s[lo].cpu || j - s[lo].at >= s[lo].n) return NULL;
    c = s[lo].cpu[2 * (j - s[lo].at) + e->k];
    if (c == RPX_CALL_CPU_UNKNOWN) return NULL;
    if (c >= SMALL) return json_integer(c);
    if (!all->small[c]) all->small[c] = json_integer(c);
    return json_incref(all->small[c]);
}

static json_t *lazy_cpus(const rpx_run_data *d, int which)
{
    cpu_srcs *all = calloc(1, sizeof *all + ((size_t)d->n_procs + 1) * sizeof(cpu_src));
    cpu_src *s = all ? all->s : NULL;
    size_t at = 0;
    int i;
    if (!all) return NULL;
    for (i = 0; i < d->n_procs; i++) {
        s[i].cpu = d->procs[i].records ? d->procs[i].records->cpu : NULL;
        s[i].at = at;
        s[i].n = d->procs[i].records ? d->procs[i].measured : 0;
        at += s[i].n;
    }
    return rpx_json_lazy_array(d->desc.lazy, at, cpu_at, (const void *)(uintptr_t)d->n_procs, all,
                               (size_t)which, cpu_srcs_drop);
}

json_t *rpx__call_records_json(const rpx_run_data *d)
{
    const rpx_call_record_info *first = NULL;
    json_t *o, *cs, *ce, *cnt[RPX_REC_N_COUNTS], *off, *core = NULL, *ghz, *src, *pmu;
    char lcore[1024], latom[1024];
    int hybrid, i, k, user_only = 0, full, pmu_there, lazy;
    have h = {1, 1, 1, 1, 1};
    shared_values sv;
    for (i = 0; i < d->n_procs; i++) {
        const rpx_call_record_info *in = d->procs[i].record_info;
        if (!in || !d->procs[i].records) {
            if (d->procs[i].measured > 0) return json_null(); /* a process did not record */
            continue;
        }
        if (!first) first = in;
        if (d->procs[i].measured == 0) continue;
        h.cpu &= in->cpu;
        h.migrations &= in->migrations;
        h.rusage &= in->rusage;
        h.cpu_time &= in->cpu_time != 0;
        h.pmu &= in->pmu;
        user_only |= in->pmu_user_only;
    }
    if (!first) return json_null();
    full = first->full;
    pmu_there = h.pmu;
    if (!full) { /* --call-records cpu: per call only the CPU */
        h.migrations = h.rusage = h.cpu_time = h.pmu = 0;
        user_only = 0;
    }
    memset(&sv, 0, sizeof sv);
    sv.performance = json_string("performance");
    sv.efficiency = json_string("efficiency");
    hybrid = hybrid_lists(lcore, latom, sizeof lcore);
    o = json_object();
    lazy = h.cpu && d->desc.lazy; /* written from the records, never held */
    cs = !h.cpu ? json_null() : lazy ? lazy_cpus(d, 0) : json_array();
    ce = !h.cpu ? json_null() : lazy ? lazy_cpus(d, 1) : json_array();
    for (k = 0; k < RPX_REC_N_COUNTS; k++)
        cnt[k] = (k == RPX_REC_MIGRATIONS ? h.migrations : h.rusage) ? json_array() : json_null();
    off = h.cpu_time ? json_array() : json_null();
    if (hybrid && h.cpu) core = json_array();
    ghz = h.pmu && h.cpu_time ? json_array() : json_null();
    for (i = 0; i < d->n_procs; i++) {
        const rpx_run_process *p = &d->procs[i];
        size_t j;
        if (!p->records) continue;
        for (j = 0; j < p->measured; j++) {
            uint16_t c0 = p->records->cpu[2 * j], c1 = p->records->cpu[2 * j + 1];
            if (h.cpu && !lazy) {
                json_array_append_new(cs, c0 == RPX_CALL_CPU_UNKNOWN ? json_null() : int_value(&sv, c0));
                json_array_append_new(ce, c1 == RPX_CALL_CPU_UNKNOWN ? json_null() : int_value(&sv, c1));
            }
            for (k = 0; k < RPX_REC_N_COUNTS; k++)
                if (json_is_array(cnt[k])) json_array_append_new(cnt[k], int_value(&sv, count(p, j, k)));
            if (h.cpu_time) json_array_append_new(off, real_value(&sv, off_cpu_ms(p, j)));
            if (core)
                json_array_append_new(core, c0 == RPX_CALL_CPU_UNKNOWN ? json_null()
                                          : in_list(lcore, c0) ? json_incref(sv.performance)
                                          : in_list(latom, c0) ? json_incref(sv.efficiency)
                                                               : json_null());
            if (json_is_array(ghz)) {
                int64_t ns = p->records->cpu_ns[j];
                json_array_append_new(ghz, ns > 0 ? json_real((double)p->records->cycles[j] / (double)ns)
                                                  : json_null());
            }
        }
    }
    shared_free(&sv); /* the arrays hold their own references */
    json_object_set_new(o, "cpu_start", cs);
    json_object_set_new(o, "cpu_end", ce);
    for (k = 0; k < RPX_REC_N_COUNTS; k++) json_object_set_new(o, count_keys[k], cnt[k]);
    json_object_set_new(o, "off_cpu_ms", off);
    json_object_set_new(o, "core_type", core ? core : json_null());
    json_object_set_new(o, "effective_clock_ghz", ghz);
    /* how each field was measured */
    src = json_object();
    json_object_set_new(o, "mode", json_string(full ? "full" : "cpu"));
    if (full) source_full_mode(src, &h, core, ghz, user_only, first);
    else source_cpu_mode(src, core);
    json_object_set_new(o, "source", src);
    pmu = json_object();
    json_object_set_new(pmu, "available", json_boolean(pmu_there));
    json_object_set_new(pmu, "why", json_string(first->pmu_why));
    json_object_set_new(o, "pmu", pmu);
    return o;
}
