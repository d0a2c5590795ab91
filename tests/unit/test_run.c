/* Unit tests for src/measure/run.c (the timing loop) and src/measure/clock.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>

#include "rpxprof/clock.h"
#include "rpxprof/error.h"
#include "rpxprof/run.h"

typedef struct fake {
    long calls, syncs, fail_at, stop_at;
    volatile sig_atomic_t *stop;
    long syncs_at_call[64];
} fake;

static int fake_call(void *state, const rpx_inputs *in, rpx_error *err)
{
    fake *f = state;
    (void)in;
    if (f->calls < 64) f->syncs_at_call[f->calls] = f->syncs;
    if (f->calls == f->stop_at && f->stop) *f->stop = 1;
    if (f->calls++ == f->fail_at) return rpx_model_error(err, "boom at %ld", f->fail_at);
    return 0;
}

static int fake_sync(void *ctx, rpx_error *err)
{
    (void)err;
    ((fake *)ctx)->syncs++;
    return 0;
}

static rpx_target make_target(fake *f)
{
    rpx_target t;
    memset(&t, 0, sizeof t);
    t.spec = "fake:call";
    t.call = fake_call;
    t.state = f;
    return t;
}

static const rpx_inputs no_inputs = {0, NULL};

static void test_counts_and_sync(void **st)
{
    fake f = {0, 0, -1, -1, NULL, {0}};
    rpx_target t = make_target(&f);
    rpx_run_config cfg = {3, 7, fake_sync, &f, 0, NULL};
    rpx_run_result r;
    rpx_error err = {0};
    size_t i;
    (void)st;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), 0);
    assert_int_equal(r.status, RPX_RUN_COMPLETE);
    assert_int_equal(f.calls, 10);
    assert_int_equal(f.syncs, 20); /* before and after every call, warmup included */
    for (i = 0; i < 10; i++) assert_int_equal(f.syncs_at_call[i], 2 * (long)i + 1);
    assert_int_equal(r.measured, 7);
    assert_int_equal(r.warmup_done, 3);
    for (i = 0; i < r.measured; i++) assert_true(r.samples_ns[i] >= 0);
    assert_true(r.wall_ns > 0);
    rpx_run_result_free(&r);
}

static void test_failure_index(void **st)
{
    fake f = {0, 0, 5, -1, NULL, {0}};
    rpx_target t = make_target(&f);
    rpx_run_config cfg = {2, 10, NULL, NULL, 0, NULL};
    rpx_run_result r;
    rpx_error err = {0};
    (void)st;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), 0);
    assert_int_equal(r.status, RPX_RUN_FAILED);
    assert_int_equal(r.failed_call, 3);
    assert_false(r.failed_in_warmup);
    assert_int_equal(r.measured, 3);
    assert_non_null(strstr(err.message, "timed call 3 failed (returned -1): boom at 5"));
    rpx_run_result_free(&r);

    f.calls = 0;
    f.fail_at = 1;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), 0);
    assert_int_equal(r.status, RPX_RUN_FAILED);
    assert_true(r.failed_in_warmup);
    assert_int_equal(r.failed_call, 1);
    assert_int_equal(r.measured, 0);
    rpx_run_result_free(&r);
}

static void test_stop_flag(void **st)
{
    volatile sig_atomic_t stop = 0;
    fake f = {0, 0, -1, 6, &stop, {0}};
    rpx_target t = make_target(&f);
    rpx_run_config cfg = {2, 100, NULL, NULL, 0, &stop};
    rpx_run_result r;
    rpx_error err = {0};
    (void)st;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), 0);
    assert_int_equal(r.status, RPX_RUN_INTERRUPTED);
    assert_int_equal(f.calls, 7); /* the call that saw the signal completes */
    assert_int_equal(r.measured, 5);
    rpx_run_result_free(&r);
}

static void test_bad_config(void **st)
{
    fake f = {0, 0, -1, -1, NULL, {0}};
    rpx_target t = make_target(&f);
    rpx_run_config cfg = {-1, 10, NULL, NULL, 0, NULL};
    rpx_run_result r;
    rpx_error err = {0};
    (void)st;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), RPX_EINVAL);
    cfg.warmup = 0;
    cfg.repeats = 0;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "--repeats"));
    assert_int_equal(f.calls, 0);
}

static void test_clock_calibration(void **st)
{
    rpx_timer_info ti;
    int64_t a, b;
    (void)st;
    assert_int_equal(rpx_timer_calibrate(&ti, 1001), 0);
    assert_string_equal(ti.clock, "CLOCK_MONOTONIC");
    assert_true(ti.resolution_ns >= 1);
    assert_true(ti.overhead_ns >= ti.overhead_min_ns);
    assert_true(ti.overhead_ns < 100000);
    a = rpx_clock_now_ns();
    b = rpx_clock_now_ns();
    assert_true(b >= a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_sync),
        cmocka_unit_test(test_failure_index),
        cmocka_unit_test(test_stop_flag),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_clock_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
