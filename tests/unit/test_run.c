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

/* A target that counts failures (HTTP): calls 1, 4 and 5 fail with
 * RPX_CALL_COUNTED_FAILURE and are no samples; the after-call hook sees every call. */
typedef struct counted {
    long calls, after, after_failed;
} counted;

static int counted_call(void *state, const rpx_inputs *in, rpx_error *err)
{
    counted *c = state;
    long i = c->calls++;
    (void)in;
    if (i == 1 || i == 4 || i == 5) {
        rpx_model_error(err, "HTTP 500 at %ld", i);
        return RPX_CALL_COUNTED_FAILURE;
    }
    return i == 100 ? -1 : 0;
}

static void counted_after(void *state, int timed, int rc)
{
    counted *c = state;
    (void)timed;
    c->after++;
    if (rc) c->after_failed++;
}

static void test_counted_failures(void **st)
{
    counted c = {0, 0, 0};
    rpx_target t;
    rpx_run_config cfg = {2, 8, NULL, NULL, 0, NULL};
    rpx_run_result r;
    rpx_error err = {0};
    long failed_done = 0;
    (void)st;
    memset(&t, 0, sizeof t);
    t.spec = t.display_spec = "http://h/p";
    t.kind = RPX_TARGET_HTTP;
    t.call = counted_call;
    t.state = &c;
    t.counts_failures = 1;
    t.after_call_fn = counted_after;
    cfg.failed_done = &failed_done;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), 0);
    assert_int_equal(r.status, RPX_RUN_COMPLETE);
    assert_int_equal(c.calls, 10);
    assert_int_equal(c.after, 10);
    assert_int_equal(c.after_failed, 3);
    assert_int_equal(r.failed_warmup_calls, 1);
    assert_int_equal(r.failed_calls, 2);
    assert_int_equal(failed_done, 2);
    assert_int_equal(r.measured, 6); /* 8 timed calls, 2 failed */
    assert_string_equal(r.last_failure, "HTTP 500 at 5");
    rpx_run_result_free(&r);

    /* --max-failures 2: the second failure (warmup's included) stops the run */
    memset(&c, 0, sizeof c);
    cfg.max_failures = 2;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), 0);
    assert_int_equal(r.status, RPX_RUN_TOO_MANY_FAILURES);
    assert_int_equal(c.calls, 5);
    assert_int_equal(r.measured, 2); /* timed calls 0 and 1 (calls 2, 3); call 4 failed */
    assert_non_null(strstr(err.message, "2 calls failed (--max-failures 2); the last: HTTP 500 at 4"));
    rpx_run_result_free(&r);

    /* without counts_failures the same return code stops the run at once */
    memset(&c, 0, sizeof c);
    t.counts_failures = 0;
    cfg.max_failures = 0;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), 0);
    assert_int_equal(r.status, RPX_RUN_FAILED);
    assert_int_equal(c.calls, 2);
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
        cmocka_unit_test(test_counted_failures),
        cmocka_unit_test(test_stop_flag),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_clock_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
