/* Unit tests for src/measure/call_record.c (where each timed call ran) and
 * its place in the timing loop (src/measure/run.c): the records sit beside
 * the samples, by the index of the sample, and count what the calls did. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "measure/call_record.h"
#include "measure/run.h"
#include "rpxprof/error.h"
#include "rpxprof/target.h"

static void touch(long pages)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    volatile char *p = mmap(NULL, (size_t)pages * page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    long i;
    assert_true(p != MAP_FAILED);
    for (i = 0; i < pages; i++) p[(size_t)i * page] = 1;
    munmap((void *)p, (size_t)pages * page);
}

/* Call k (warmup included) touches 10 * (k + 1) fresh pages; call fail_at is
 * a counted failure (no sample). */
typedef struct fake {
    long calls, fail_at;
} fake;

static int fake_call(void *state, const rpx_inputs *in, rpx_error *err)
{
    fake *f = state;
    (void)in;
    (void)err;
    touch(10 * (f->calls + 1));
    return f->calls++ == f->fail_at ? RPX_CALL_COUNTED_FAILURE : 0;
}

static const rpx_inputs no_inputs = {0, NULL};

static void test_begin_end_counts_this_thread(void **st)
{
    rpx_call_recorder r;
    rpx_call_mark m;
    rpx_call_records out;
    void *mem = calloc(1, rpx_call_records_bytes(2));
    struct timespec ts = {0, 2000000};
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    (void)st;
    assert_non_null(mem);
    rpx_call_records_layout(&out, mem, 2);
    rpx_call_recorder_open(&r, 1);
    assert_true(r.info.on);
    assert_true(r.info.cpu);
    assert_true(r.info.rusage);
    assert_true(r.info.cpu_time != 0);
    assert_true(r.info.pmu_why[0] != '\0'); /* said either way */
    /* record 0: 50 pages touched */
    rpx_call_record_begin(&r, &m);
    touch(50);
    rpx_call_record_end(&r, &m, &out, 0);
    /* record 1: a 2 ms sleep */
    rpx_call_record_begin(&r, &m);
    nanosleep(&ts, NULL);
    rpx_call_record_end(&r, &m, &out, 1);
    rpx_call_recorder_close(&r);
    assert_true(out.counts[RPX_REC_MINOR_FAULTS] >= 50);
    assert_true(out.counts[RPX_REC_N_COUNTS + RPX_REC_VOLUNTARY] >= 1);
    assert_true(out.cpu[0] < ncpu && out.cpu[1] < ncpu && out.cpu[2] < ncpu);
    /* asleep: far less CPU time than the 2 ms */
    assert_true(out.cpu_ns[1] >= 0 && out.cpu_ns[1] < 1500000);
    free(mem);
}

static void test_records_follow_the_samples(void **st)
{
    fake f = {0, 4}; /* warmup 2: calls 0, 1; timed 2..7; call 4 (timed 2) fails */
    rpx_target t;
    rpx_call_recorder rec;
    rpx_call_records out;
    void *mem = calloc(1, rpx_call_records_bytes(6));
    int64_t samples[6];
    rpx_run_config cfg;
    rpx_run_result res;
    rpx_error err = {0};
    size_t i;
    (void)st;
    assert_non_null(mem);
    memset(samples, 0, sizeof samples);
    rpx_call_records_layout(&out, mem, 6);
    memset(&t, 0, sizeof t);
    t.spec = "fake:call";
    t.hooks.call = fake_call;
    t.hooks.state = &f;
    t.hooks.counts_failures = 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.warmup = 2;
    cfg.repeats = 6;
    cfg.samples = samples;
    rpx_call_recorder_open(&rec, 1);
    cfg.recorder = &rec;
    cfg.records = &out;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &res, &err), 0);
    rpx_call_recorder_close(&rec);
    assert_int_equal(res.measured, 5);
    assert_int_equal(res.failed_calls, 1);
    /* sample j came from call 2 + j, skipping the failed call 4: its record
     * counts that call's 10 * (call + 1) pages, not the failed call's */
    for (i = 0; i < res.measured; i++) {
        long call = 2 + (long)i + (i >= 2);
        uint32_t minor = out.counts[RPX_REC_N_COUNTS * i + RPX_REC_MINOR_FAULTS];
        assert_true(minor >= (uint32_t)(10 * (call + 1)));
        assert_true(minor < (uint32_t)(10 * (call + 1)) + 200);
    }
    rpx_run_result_free(&res);
    free(mem);
}

/* Warmup calls touch 1000 pages each, timed calls 10. */
static int warm_heavy_call(void *state, const rpx_inputs *in, rpx_error *err)
{
    long *calls = state;
    (void)in;
    (void)err;
    touch(*calls < 2 ? 1000 : 10);
    ++*calls;
    return 0;
}

/* --call-records cpu: each call's CPU, nothing else per call; the counters
 * over the timed loop only (the warmup's 2000 pages stay out). */
static void test_cpu_mode_counts_the_timed_loop_once(void **st)
{
    long calls = 0, ncpu = sysconf(_SC_NPROCESSORS_CONF);
    rpx_target t;
    rpx_call_recorder rec;
    rpx_call_records out;
    rpx_call_totals tot;
    void *mem = calloc(1, rpx_call_records_bytes(6));
    int64_t samples[6];
    rpx_run_config cfg;
    rpx_run_result res;
    rpx_error err = {0};
    size_t i;
    (void)st;
    assert_non_null(mem);
    rpx_call_records_layout(&out, mem, 6);
    memset(&tot, 0, sizeof tot);
    memset(&t, 0, sizeof t);
    t.spec = "fake:call";
    t.hooks.call = warm_heavy_call;
    t.hooks.state = &calls;
    memset(&cfg, 0, sizeof cfg);
    cfg.warmup = 2;
    cfg.repeats = 6;
    cfg.samples = samples;
    rpx_call_recorder_open(&rec, 0);
    assert_false(rec.info.full);
    assert_true(rec.cycles_fd < 0); /* the clock is per call, full mode only */
    cfg.recorder = &rec;
    cfg.records = &out;
    cfg.record_totals = &tot;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &res, &err), 0);
    rpx_call_recorder_close(&rec);
    assert_int_equal(res.measured, 6);
    assert_true(tot.valid);
    assert_true(tot.minor_faults >= 60 && tot.minor_faults < 1000);
    assert_true(tot.wall_ns > 0 && tot.cpu_ns > 0);
    for (i = 0; i < 6; i++) {
        int k;
        assert_true(out.cpu[2 * i] < ncpu && out.cpu[2 * i + 1] < ncpu);
        for (k = 0; k < RPX_REC_N_COUNTS; k++) assert_int_equal(out.counts[RPX_REC_N_COUNTS * i + (size_t)k], 0);
        assert_int_equal(out.cpu_ns[i], 0);
    }
    rpx_run_result_free(&res);
    free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_begin_end_counts_this_thread),
        cmocka_unit_test(test_records_follow_the_samples),
        cmocka_unit_test(test_cpu_mode_counts_the_timed_loop_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
