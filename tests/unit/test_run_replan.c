/* The timing loop's hooks for auto-ranging (measure/run.c, runner/autorange.c):
 * the stopping rule asked at the deadlines it names, never in between, and the
 * warmup's own deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "rpxprof/clock.h"
#include "rpxprof/error.h"
#include "measure/run.h"

static long calls;

static int count_call(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    calls++;
    return 0;
}

typedef struct rule {
    long asked;                   /* times the rule was asked */
    size_t seen[128];             /* the calls measured at each ask */
    size_t stop_at;               /* stop once this many were measured */
    int64_t later;                /* 0: ask again after the next call; else this far ahead */
} rule;

static int64_t replan(void *ctx, const int64_t *samples, size_t measured, int64_t now)
{
    rule *r = ctx;
    assert_non_null(samples);
    if (r->asked < 128) r->seen[r->asked] = measured;
    r->asked++;
    if (measured >= r->stop_at) return 0;
    return now + (r->later ? r->later : 1);
}

static rpx_target target(void)
{
    rpx_target t;
    memset(&t, 0, sizeof t);
    t.spec = "fake:call";
    t.hooks.call = count_call;
    return t;
}

static const rpx_inputs no_inputs = {0, NULL};

static void test_rule_stops_the_loop(void **st)
{
    rule r = {0, {0}, 5, 0};
    rpx_target t = target();
    rpx_run_config cfg = {0};
    rpx_run_result res;
    rpx_error err = {0};
    long i;
    (void)st;
    calls = 0;
    cfg.warmup = 2;
    cfg.repeats = 100;
    cfg.deadline_ns = 1; /* already passed: asked after the first call */
    cfg.replan = replan;
    cfg.replan_ctx = &r;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &res, &err), 0);
    assert_int_equal(res.status, RPX_RUN_COMPLETE);
    assert_int_equal(res.measured, 5);
    assert_int_equal(calls, 7);
    assert_int_equal(r.asked, 5); /* after calls 1..5, each time with what was measured */
    for (i = 0; i < 5; i++) assert_int_equal(r.seen[i], (size_t)i + 1);
    rpx_run_result_free(&res);
}

static void test_rule_asked_only_at_its_deadlines(void **st)
{
    rule r = {0, {0}, 1000, (int64_t)60 * 1000000000}; /* next ask in a minute */
    rpx_target t = target();
    rpx_run_config cfg = {0};
    rpx_run_result res;
    rpx_error err = {0};
    (void)st;
    calls = 0;
    cfg.repeats = 50;
    cfg.deadline_ns = 1;
    cfg.replan = replan;
    cfg.replan_ctx = &r;
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &res, &err), 0);
    assert_int_equal(res.measured, 50); /* the loop's own end: repeats */
    assert_int_equal(r.asked, 1);
    rpx_run_result_free(&res);
}

static void test_warmup_deadline(void **st)
{
    rpx_target t = target();
    rpx_run_config cfg = {0};
    rpx_run_result res;
    rpx_error err = {0};
    (void)st;
    calls = 0;
    cfg.warmup = 10;
    cfg.repeats = 3;
    cfg.warmup_deadline_ns = 1; /* passed: one warmup call, then the timed ones */
    assert_int_equal(rpx_measure_run(&cfg, &t, &no_inputs, &res, &err), 0);
    assert_int_equal(res.warmup_done, 1);
    assert_int_equal(res.measured, 3);
    assert_int_equal(calls, 4);
    rpx_run_result_free(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_stops_the_loop),
        cmocka_unit_test(test_rule_asked_only_at_its_deadlines),
        cmocka_unit_test(test_warmup_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
