/* bench_call_records.c — what recording where each call ran costs per call
 * (src/measure/call_record.c): the record's begin + end around an empty span,
 * and each system call it is made of, median of 15 rounds of 20,000 each
 * (issue 27 §1; numbers in BENCHMARKS.md).
 *   bench_call_records [ROUNDS]   prints a Markdown table */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef __x86_64__
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "measure/call_record.h"

#define N 20000

static volatile long sink;

static long long now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef void (*op_fn)(void *ctx);

static double median_ns(op_fn f, void *ctx, int rounds)
{
    double r[64];
    int k, i;
    for (k = 0; k < rounds; k++) {
        long long t0 = now();
        for (i = 0; i < N; i++) f(ctx);
        r[k] = (double)(now() - t0) / N;
    }
    qsort(r, (size_t)rounds, sizeof r[0], cmp);
    return r[rounds / 2];
}

static void op_nothing(void *c) { (void)c; sink++; }
static void op_clock(void *c) { (void)c; sink += now(); }
static void op_getcpu(void *c) { (void)c; sink += sched_getcpu(); }
static void op_rusage(void *c)
{
    struct rusage ru;
    (void)c;
    getrusage(RUSAGE_THREAD, &ru);
    sink += ru.ru_minflt;
}
static void op_thread_cpu(void *c)
{
    struct timespec ts;
    (void)c;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    sink += ts.tv_nsec;
}
static void op_perf_group(void *c)
{
    const rpx_call_recorder *r = c;
    unsigned long long v[3];
    sink += read(r->group_fd, v, sizeof v);
}
#ifdef __x86_64__
static void op_rdtscp(void *c)
{
    unsigned aux;
    (void)c;
    sink += (long)__rdtscp(&aux);
    sink += aux & 0xfff;
}
#endif

typedef struct rec_ctx {
    rpx_call_recorder *r;
    rpx_call_records out;
    size_t i;
} rec_ctx;

static void op_record(void *c)
{
    rec_ctx *x = c;
    rpx_call_mark m;
    rpx_call_record_begin(x->r, &m);
    rpx_call_record_end(x->r, &m, &x->out, x->i);
    x->i = (x->i + 1) % N;
}

/* --call-records cpu: the CPU before and after, stored */
static void op_cpu_mode(void *c)
{
    rec_ctx *x = c;
    int c0 = sched_getcpu(), c1 = sched_getcpu();
    x->out.cpu[2 * x->i] = (uint16_t)c0;
    x->out.cpu[2 * x->i + 1] = (uint16_t)c1;
    x->i = (x->i + 1) % N;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    rpx_call_recorder r;
    rec_ctx x;
    void *mem;
    double base;
    if (rounds < 1 || rounds > 64) rounds = 15;
    rpx_call_recorder_open(&r, 1);
    mem = calloc(1, rpx_call_records_bytes(N));
    if (!mem) return 1;
    rpx_call_records_layout(&x.out, mem, N);
    x.r = &r;
    x.i = 0;
    base = median_ns(op_nothing, NULL, rounds);
    printf("| operation | ns per call (median of %d rounds of %d) |\n|---|---:|\n", rounds, N);
    printf("| empty loop | %.1f |\n", base);
    printf("| clock_gettime(CLOCK_MONOTONIC) (one of the timed span's two reads) | %.1f |\n",
           median_ns(op_clock, NULL, rounds));
    printf("| sched_getcpu() | %.1f |\n", median_ns(op_getcpu, NULL, rounds));
#ifdef __x86_64__
    {
        unsigned a, b, c, d;
        if (__get_cpuid(0x80000001, &a, &b, &c, &d) && (d >> 27 & 1))
            printf("| RDTSCP (TSC_AUX) | %.1f |\n", median_ns(op_rdtscp, NULL, rounds));
        else
            printf("| RDTSCP (TSC_AUX) | n/a: this CPU does not offer RDTSCP |\n");
    }
#endif
    printf("| getrusage(RUSAGE_THREAD) | %.1f |\n", median_ns(op_rusage, NULL, rounds));
    printf("| clock_gettime(CLOCK_THREAD_CPUTIME_ID) | %.1f |\n",
           median_ns(op_thread_cpu, NULL, rounds));
    if (r.group_fd >= 0)
        printf("| read(2) of the perf group (task-clock, cpu-migrations) | %.1f |\n",
               median_ns(op_perf_group, &r, rounds));
    else
        printf("| read(2) of the perf group | n/a: %s |\n", r.info.migrations_why);
    printf("| **--call-records cpu: a call's record (2 x sched_getcpu, stored)** | **%.1f** |\n",
           median_ns(op_cpu_mode, &x, rounds));
    printf("| **--call-records full: a whole record (begin + end)** | **%.1f** |\n",
           median_ns(op_record, &x, rounds));
    printf("\nPMU: %s\n", r.info.pmu ? "available" : r.info.pmu_why);
    rpx_call_recorder_close(&r);
    free(mem);
    return 0;
}
