/* Unit tests for src/measure/run.c (the timing loop) and src/measure/clock.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "rpxprof/clock.h"
#include "rpxprof/error.h"
#include "measure/run.h"
#include "loader/kinds.h"

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
    t.hooks.call = fake_call;
    t.hooks.state = f;
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
    t.kind = &rpx__kind_http;
    t.hooks.call = counted_call;
    t.hooks.state = &c;
    t.hooks.counts_failures = 1;
    t.hooks.after_call = counted_after;
    cfg.failed_done = &failed_done;
    /* by default a failed warmup call (call 1) ends the run at once, naming it */
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &r, &err), 0);
    assert_int_equal(r.status, RPX_RUN_TOO_MANY_FAILURES);
    assert_int_equal(c.calls, 2);
    assert_int_equal(r.failed_warmup_calls, 1);
    assert_true(r.failed_in_warmup);
    assert_int_equal(r.measured, 0);
    assert_non_null(strstr(err.message, "warmup call 2 of 2 failed: HTTP 500 at 1; a failed "
                                        "warmup call ends the run"));
    rpx_run_result_free(&r);

    /* allowed, warmup failures count like timed ones */
    memset(&c, 0, sizeof c);
    t.hooks.allow_warmup_failures = 1;
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
    t.hooks.counts_failures = 0;
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

/* Distinct samples and writable inputs: which sample each call got, and
 * that it found its pristine bytes although the call before scribbled. */
typedef struct sampled {
    const rpx_inputs *base;
    long seq[32], n, dirty;
} sampled;

static int sampled_call(void *state, const rpx_inputs *in, rpx_error *err)
{
    sampled *s = state;
    unsigned char *d = (unsigned char *)(uintptr_t)in->tensors[0].data;
    long k = (long)(in - s->base), i;
    (void)err;
    if (s->n < 32) s->seq[s->n++] = k;
    for (i = 0; i < 8; i++)
        if (d[i] != (unsigned char)(10 * k + i)) s->dirty++;
    memset(d, 0xEE, 8); /* an in-place edit */
    return 0;
}

static void test_distinct_samples_and_restore(void **st)
{
    unsigned char work[3][8], clean[3][8];
    rpx_tensor wt[3], pt[3];
    rpx_inputs wi[3], pi[3];
    int64_t restore[7];
    int64_t restore_warm = 0;
    sampled s;
    rpx_target t;
    rpx_run_config cfg;
    rpx_run_result r;
    rpx_error err = {0};
    long expect_warm[4] = {0, 1, 2, 0}, expect_timed[7] = {2, 0, 1, 2, 0, 1, 2}, i;
    int k, j;
    (void)st;
    for (k = 0; k < 3; k++) {
        for (j = 0; j < 8; j++) clean[k][j] = work[k][j] = (unsigned char)(10 * k + j);
        memset(&wt[k], 0, sizeof wt[k]);
        wt[k].name = "x";
        wt[k].dtype = RPX_DTYPE_UINT8;
        wt[k].ndim = 1;
        wt[k].shape[0] = 8;
        wt[k].count = wt[k].nbytes = 8;
        pt[k] = wt[k];
        wt[k].data = work[k];
        pt[k].data = clean[k];
        wi[k].count = pi[k].count = 1;
        wi[k].tensors = &wt[k];
        pi[k].tensors = &pt[k];
    }
    for (i = 0; i < 7; i++) restore[i] = -1;
    memset(&s, 0, sizeof s);
    s.base = wi;
    memset(&t, 0, sizeof t);
    t.spec = "fake:sampled";
    t.hooks.call = sampled_call;
    t.hooks.state = &s;
    memset(&cfg, 0, sizeof cfg);
    cfg.warmup = 4;
    cfg.repeats = 7;
    cfg.distinct = wi;
    cfg.n_distinct = 3;
    cfg.distinct_offset = 5; /* the processes before took 5 timed calls */
    cfg.pristine = pi;
    cfg.restore_ns = restore;
    cfg.restore_warmup_ns = &restore_warm;
    assert_int_equal(rpx_measure_run(&cfg, &t, NULL, &r, &err), 0);
    assert_int_equal(r.status, RPX_RUN_COMPLETE);
    assert_int_equal(s.n, 11);
    for (i = 0; i < 4; i++) assert_int_equal(s.seq[i], expect_warm[i]);
    for (i = 0; i < 7; i++) assert_int_equal(s.seq[4 + i], expect_timed[i]);
    assert_int_equal(s.dirty, 0);
    for (i = 0; i < 7; i++) assert_true(restore[i] >= 0);
    assert_true(restore_warm >= 0);
    rpx_run_result_free(&r);
    /* without the pristine copies the second visit of a sample finds the edit */
    for (k = 0; k < 3; k++) memcpy(work[k], clean[k], 8);
    memset(&s, 0, sizeof s);
    s.base = wi;
    cfg.pristine = NULL;
    cfg.restore_ns = NULL;
    cfg.restore_warmup_ns = NULL;
    assert_int_equal(rpx_measure_run(&cfg, &t, NULL, &r, &err), 0);
    assert_true(s.dirty > 0);
    rpx_run_result_free(&r);
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
        cmocka_unit_test(test_distinct_samples_and_restore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
