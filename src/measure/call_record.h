/* src/measure/call_record.h — where each timed call ran: the CPU it started
 * and ended on, its migrations, voluntary and involuntary context switches,
 * minor and major page faults, the calling thread's CPU time over it (off-CPU
 * time = wall - CPU time) and, where a PMU is there, its cycles.
 *
 * Two modes (--call-records). cpu (the default): per call only the CPU at the
 * start and the end (sched_getcpu: no system call, a few ns); the counters
 * are read once before the first timed call and once after the last, so a
 * process's migrations, switches, faults and off-CPU time are over its whole
 * timed loop (the calls and the loop's own bookkeeping between them), not per
 * call. full: the loop (run.c) reads a mark before t0 and closes it after t1
 * for every call (four system calls a call). Either way the timed span keeps
 * only the call. Everything is counted for the calling
 * thread (the one the loop runs in): threads of the model's own (a thread
 * pool started in setup) are not counted; while the calling thread waits for
 * them it is off-CPU. The per-call arrays are the caller's (shared memory
 * with the parent, like the samples); nothing here allocates, prints or
 * exits. */
#ifndef RPXPROF_CALL_RECORD_H
#define RPXPROF_CALL_RECORD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_CALL_CPU_UNKNOWN 0xFFFFu /* cpu[] when the CPU could not be read */

enum {
    RPX_REC_MIGRATIONS = 0,
    RPX_REC_VOLUNTARY,
    RPX_REC_INVOLUNTARY,
    RPX_REC_MINOR_FAULTS,
    RPX_REC_MAJOR_FAULTS,
    RPX_REC_N_COUNTS
};

/* One process's per-call arrays, `n` timed calls (parallel to its samples);
 * only the arrays its info says were recorded are written. */
typedef struct rpx_call_records {
    uint16_t *cpu;                /* 2 per call: the CPU at the start, at the end */
    uint32_t *counts;             /* RPX_REC_N_COUNTS per call (saturating at 2^32-1) */
    int64_t *cpu_ns;              /* the calling thread's CPU time over the call, ns */
    int64_t *cycles;              /* its cycles over the call (PMU only) */
} rpx_call_records;

/* How a process recorded (it travels to the parent with the arrays). */
typedef struct rpx_call_record_info {
    int on;                       /* the calls were recorded */
    int full;                     /* 1: every call's counters (--call-records full); 0: the
                                     CPU per call, the counters over the timed loop */
    int cpu;                      /* sched_getcpu worked */
    int migrations;               /* the perf software counters were open */
    int rusage;                   /* getrusage(RUSAGE_THREAD) worked */
    int cpu_time;                 /* 1: perf task-clock, 2: CLOCK_THREAD_CPUTIME_ID, 0: none */
    int pmu;                      /* a cycles counter could be opened (full mode: is open) */
    int pmu_user_only;            /* ... counting user mode only (kernel excluded) */
    char migrations_why[160];     /* why migrations are not counted ("" when they are) */
    char pmu_why[160];            /* why there is no cycles counter, or what it counts */
} rpx_call_record_info;

typedef struct rpx_call_recorder {
    int group_fd;                 /* task-clock (leader) + cpu-migrations, or -1 */
    int member_fd;                /* cpu-migrations, or -1 */
    int cycles_fd;                /* hardware cycles, or -1 */
    rpx_call_record_info info;
} rpx_call_recorder;

/* What the counters read before a call. */
typedef struct rpx_call_mark {
    int cpu;
    uint64_t task_ns, migrations, cycles;
    long nvcsw, nivcsw, minflt, majflt;
    int64_t wall_ns;              /* the clock (rpx_call_loop_begin only) */
} rpx_call_mark;

/* A process's counts over its whole timed loop (--call-records cpu): from
 * before the first timed call to after the last. */
typedef struct rpx_call_totals {
    int valid;                    /* the loop was closed (it ran to its end) */
    int64_t wall_ns;              /* the loop's wall time */
    int64_t cpu_ns;               /* the thread's CPU time over it (info.cpu_time) */
    int64_t migrations;           /* info.migrations */
    long voluntary, involuntary, minor_faults, major_faults; /* info.rusage */
} rpx_call_totals;

/* Open the counters for the calling thread (call it from the thread that
 * runs the calls); full: every call's counters, else the CPU per call and the
 * counters over the loop. Never fails: what cannot be opened is recorded as
 * such in r->info with the reason. */
void rpx_call_recorder_open(rpx_call_recorder *r, int full);
void rpx_call_recorder_close(rpx_call_recorder *r);

/* Before t0, and after t1: call i's record into `out`. */
void rpx_call_record_begin(const rpx_call_recorder *r, rpx_call_mark *m);
void rpx_call_record_end(const rpx_call_recorder *r, const rpx_call_mark *m,
                         const rpx_call_records *out, size_t i);

/* Before the first timed call, and after the last: the loop's totals. */
void rpx_call_loop_begin(const rpx_call_recorder *r, rpx_call_mark *m);
void rpx_call_loop_end(const rpx_call_recorder *r, const rpx_call_mark *m, rpx_call_totals *out);

/* The bytes of the per-call arrays for n calls, and the arrays laid out in
 * `mem` (8-byte aligned, that many bytes). */
size_t rpx_call_records_bytes(size_t n);
void rpx_call_records_layout(rpx_call_records *r, void *mem, size_t n);

#ifdef __cplusplus
}
#endif
#endif
