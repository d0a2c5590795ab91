/* call_record.c — owns the record of where each timed call ran (see
 * call_record.h): the perf software counters (task-clock and cpu-migrations
 * in one group, read with one read(2)), getrusage(RUSAGE_THREAD) for the
 * context switches (voluntary and involuntary apart, which perf's
 * context-switches counter does not tell) and the page faults,
 * sched_getcpu() for the CPU (glibc reads it from rseq or the vDSO: no
 * system call), and a hardware cycles counter where a PMU is there.
 *
 * Cost here (a 2-vCPU KVM guest, kernel 6.18): sched_getcpu 1.4-3.5 ns,
 * getrusage 1.2-1.7 us, a perf group read 1.9-2.4 us,
 * CLOCK_THREAD_CPUTIME_ID 1.6-2.0 us (bench/bench_call_records.c). RDTSCP's
 * TSC_AUX would give the CPU too, but costs a serialising instruction where
 * sched_getcpu costs a load, and this guest does not offer RDTSCP. */
#include "measure/call_record.h"
#include "rpxprof/clock.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int perf_open(uint32_t type, uint64_t config, int group, uint64_t read_format,
                     int exclude_kernel)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.read_format = read_format;
    a.exclude_kernel = exclude_kernel ? 1u : 0u;
    a.exclude_hv = 1;
    /* pid 0, cpu -1: this thread, on whichever CPU it runs */
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

/* "perf_event_open(cycles): ENOENT (...)" */
static void why_not(char *buf, size_t size, const char *what, int e)
{
    const char *hint = e == ENOENT || e == EOPNOTSUPP
                           ? "no PMU is exposed here (common in virtual machines)"
                       : e == EACCES || e == EPERM
                           ? "not permitted (kernel.perf_event_paranoid, or a seccomp filter "
                             "of the container)"
                       : e == ENOSYS ? "the kernel has no perf events"
                                     : "refused";
    snprintf(buf, size, "perf_event_open(%s): %s (%s): %s", what, strerrorname_np(e)
                 ? strerrorname_np(e) : "error", strerror(e), hint);
}

/* task-clock (the leader) and cpu-migrations, read together. 0 or -errno. */
static int open_group(rpx_call_recorder *r, int exclude_kernel)
{
    const uint64_t fmt = PERF_FORMAT_GROUP;
    int lead = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, -1, fmt, exclude_kernel);
    int mig;
    if (lead < 0) return -errno;
    mig = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, lead, fmt, exclude_kernel);
    if (mig < 0) {
        int e = errno;
        close(lead);
        return -e;
    }
    r->group_fd = lead;
    r->member_fd = mig;
    return 0;
}

void rpx_call_recorder_open(rpx_call_recorder *r, int full)
{
    struct rusage ru;
    int rc, e;
    memset(r, 0, sizeof *r);
    r->group_fd = r->cycles_fd = -1;
    r->member_fd = -1;
    r->info.on = 1;
    r->info.full = full != 0;
    r->info.cpu = sched_getcpu() >= 0;
    r->info.rusage = getrusage(RUSAGE_THREAD, &ru) == 0;
    rc = open_group(r, 0);
    if (rc == -EACCES || rc == -EPERM) rc = open_group(r, 1);
    if (rc == 0) {
        r->info.migrations = 1;
        r->info.cpu_time = 1;
    } else {
        why_not(r->info.migrations_why, sizeof r->info.migrations_why,
                "software: task-clock, cpu-migrations", -rc);
        {
            struct timespec ts;
            r->info.cpu_time = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? 2 : 0;
        }
    }
    r->cycles_fd = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, -1, 0, 0);
    if (r->cycles_fd < 0 && (errno == EACCES || errno == EPERM)) {
        r->cycles_fd = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, -1, 0, 1);
        if (r->cycles_fd >= 0) r->info.pmu_user_only = 1;
    }
    e = errno;
    if (r->cycles_fd >= 0) {
        r->info.pmu = 1;
        snprintf(r->info.pmu_why, sizeof r->info.pmu_why,
                 "perf_event_open(PERF_COUNT_HW_CPU_CYCLES) of the calling thread%s",
                 r->info.pmu_user_only ? ", user mode only (the kernel's cycles are not "
                                         "permitted here)"
                                       : "");
    } else {
        why_not(r->info.pmu_why, sizeof r->info.pmu_why, "PERF_COUNT_HW_CPU_CYCLES", e);
    }
    if (!full && r->cycles_fd >= 0) { /* the clock is per call: only in full mode */
        close(r->cycles_fd);
        r->cycles_fd = -1; /* info.pmu stays 1: the PMU is there */
        snprintf(r->info.pmu_why, sizeof r->info.pmu_why,
                 "a PMU is there (PERF_COUNT_HW_CPU_CYCLES opens%s); the effective clock is "
                 "recorded per call with --call-records full only",
                 r->info.pmu_user_only ? ", user mode only" : "");
    }
}

void rpx_call_recorder_close(rpx_call_recorder *r)
{
    if (!r) return;
    if (r->member_fd >= 0) close(r->member_fd);
    if (r->group_fd >= 0) close(r->group_fd);
    if (r->cycles_fd >= 0) close(r->cycles_fd);
    r->member_fd = r->group_fd = r->cycles_fd = -1;
}

/* task-clock and migrations: {nr, task, migrations} */
static void read_group(const rpx_call_recorder *r, uint64_t *task, uint64_t *mig)
{
    uint64_t v[3] = {0, 0, 0};
    if (read(r->group_fd, v, sizeof v) == (ssize_t)sizeof v) {
        *task = v[1];
        *mig = v[2];
    }
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rpx_call_record_begin(const rpx_call_recorder *r, rpx_call_mark *m)
{
    struct rusage ru;
    m->cpu = sched_getcpu();
    if (r->info.rusage && getrusage(RUSAGE_THREAD, &ru) == 0) {
        m->nvcsw = ru.ru_nvcsw;
        m->nivcsw = ru.ru_nivcsw;
        m->minflt = ru.ru_minflt;
        m->majflt = ru.ru_majflt;
    }
    m->cycles = 0;
    if (r->cycles_fd >= 0 && read(r->cycles_fd, &m->cycles, sizeof m->cycles) != 8)
        m->cycles = 0;
    /* last before t0: the CPU time the record itself takes stays out */
    if (r->group_fd >= 0) read_group(r, &m->task_ns, &m->migrations);
    else if (r->info.cpu_time == 2) m->task_ns = thread_cpu_ns();
}

static uint32_t sat32(long long v)
{
    return v < 0 ? 0u : v > 0xFFFFFFFFLL ? 0xFFFFFFFFu : (uint32_t)v;
}

void rpx_call_record_end(const rpx_call_recorder *r, const rpx_call_mark *m,
                         const rpx_call_records *out, size_t i)
{
    struct rusage ru;
    uint64_t task = 0, mig = 0, cyc = 0;
    int cpu = sched_getcpu();
    /* first after t1 */
    if (r->group_fd >= 0) read_group(r, &task, &mig);
    else if (r->info.cpu_time == 2) task = thread_cpu_ns();
    if (r->cycles_fd >= 0 && read(r->cycles_fd, &cyc, sizeof cyc) != 8) cyc = m->cycles;
    out->cpu[2 * i] = m->cpu >= 0 && m->cpu < 0xFFFF ? (uint16_t)m->cpu : RPX_CALL_CPU_UNKNOWN;
    out->cpu[2 * i + 1] = cpu >= 0 && cpu < 0xFFFF ? (uint16_t)cpu : RPX_CALL_CPU_UNKNOWN;
    if (r->info.cpu_time) out->cpu_ns[i] = (int64_t)(task - m->task_ns);
    if (r->info.pmu) out->cycles[i] = (int64_t)(cyc - m->cycles);
    if (r->info.migrations)
        out->counts[RPX_REC_N_COUNTS * i + RPX_REC_MIGRATIONS] = sat32((long long)(mig - m->migrations));
    if (r->info.rusage && getrusage(RUSAGE_THREAD, &ru) == 0) {
        uint32_t *c = out->counts + RPX_REC_N_COUNTS * i;
        c[RPX_REC_VOLUNTARY] = sat32(ru.ru_nvcsw - m->nvcsw);
        c[RPX_REC_INVOLUNTARY] = sat32(ru.ru_nivcsw - m->nivcsw);
        c[RPX_REC_MINOR_FAULTS] = sat32(ru.ru_minflt - m->minflt);
        c[RPX_REC_MAJOR_FAULTS] = sat32(ru.ru_majflt - m->majflt);
    }
}

static void loop_read(const rpx_call_recorder *r, rpx_call_mark *m)
{
    struct rusage ru;
    if (r->info.rusage && getrusage(RUSAGE_THREAD, &ru) == 0) {
        m->nvcsw = ru.ru_nvcsw;
        m->nivcsw = ru.ru_nivcsw;
        m->minflt = ru.ru_minflt;
        m->majflt = ru.ru_majflt;
    }
    if (r->group_fd >= 0) read_group(r, &m->task_ns, &m->migrations);
    else if (r->info.cpu_time == 2) m->task_ns = thread_cpu_ns();
}

void rpx_call_loop_begin(const rpx_call_recorder *r, rpx_call_mark *m)
{
    memset(m, 0, sizeof *m);
    loop_read(r, m);
    m->wall_ns = rpx_clock_now_ns(); /* last: the reads stay out of the wall time */
}

void rpx_call_loop_end(const rpx_call_recorder *r, const rpx_call_mark *m, rpx_call_totals *out)
{
    rpx_call_mark e;
    int64_t wall = rpx_clock_now_ns(); /* first */
    memset(&e, 0, sizeof e);
    loop_read(r, &e);
    memset(out, 0, sizeof *out);
    out->valid = 1;
    out->wall_ns = wall - m->wall_ns;
    out->cpu_ns = (int64_t)(e.task_ns - m->task_ns);
    out->migrations = (int64_t)(e.migrations - m->migrations);
    out->voluntary = e.nvcsw - m->nvcsw;
    out->involuntary = e.nivcsw - m->nivcsw;
    out->minor_faults = e.minflt - m->minflt;
    out->major_faults = e.majflt - m->majflt;
}

size_t rpx_call_records_bytes(size_t n)
{
    size_t cpu = (n * 2 * sizeof(uint16_t) + 7) & ~(size_t)7;
    size_t counts = (n * RPX_REC_N_COUNTS * sizeof(uint32_t) + 7) & ~(size_t)7;
    return cpu + counts + 2 * n * sizeof(int64_t);
}

void rpx_call_records_layout(rpx_call_records *r, void *mem, size_t n)
{
    char *p = mem;
    size_t cpu = (n * 2 * sizeof(uint16_t) + 7) & ~(size_t)7;
    size_t counts = (n * RPX_REC_N_COUNTS * sizeof(uint32_t) + 7) & ~(size_t)7;
    r->cpu = (uint16_t *)(void *)p;
    r->counts = (uint32_t *)(void *)(p + cpu);
    r->cpu_ns = (int64_t *)(void *)(p + cpu + counts);
    r->cycles = r->cpu_ns + n;
}
