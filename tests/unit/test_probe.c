/* Unit tests for src/system/probe.c (the rule that calls CPUs different,
 * on crafted measurements, and the live probe's shape) and src/system/procs.c
 * (the other processes' CPU time, on the procs-run snapshots written by
 * tests/fixtures/sysroots/craft_procs.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "rpxprof/system.h"
#include "system/system_internal.h"

/* Two CPUs, five repetitions each: [cpu][rep], ns per iteration. */
static void test_judge_equal_cpus_do_not_differ(void **st)
{
    const double t[] = {1.00, 1.02, 0.99, 1.01, 1.00, /* CPU a */
                        1.01, 1.00, 1.02, 0.99, 1.03}; /* CPU b: the same within noise */
    rpx__probe_verdict v;
    (void)st;
    assert_int_equal(rpx__probe_judge(t, 2, 5, RPX__PROBE_THRESHOLD, &v), 0);
    assert_int_equal(v.n_slow, 0);
    assert_true(v.ratio >= 1.0 && v.ratio < 1.02);
    rpx__probe_verdict_free(&v);
}

static void test_judge_slow_cpu(void **st)
{
    /* the machine: one CPU 1.7x slower */
    const double t[] = {1.70, 1.72, 1.69, 1.71, 1.75,
                        1.00, 1.01, 0.99, 1.00, 1.02};
    rpx__probe_verdict v;
    (void)st;
    assert_int_equal(rpx__probe_judge(t, 2, 5, RPX__PROBE_THRESHOLD, &v), 0);
    assert_int_equal(v.fastest, 1);
    assert_int_equal(v.slowest, 0);
    assert_int_equal(v.n_slow, 1);
    assert_true(v.slow[0] && !v.slow[1]);
    assert_true(fabs(v.ratio - 1.71) < 1e-9);
    assert_true(fabs(v.noise[0] - (1.75 - 1.69) / 1.71) < 1e-9);
    rpx__probe_verdict_free(&v);
}

static void test_judge_noise_hides_a_small_gap(void **st)
{
    /* medians 5 % apart, but one repetition of the slower CPU is as fast as
     * the fastest's worst: within the repetitions' noise, no warning */
    const double t[] = {1.00, 1.10, 0.95, 1.00, 1.01,
                        1.05, 1.06, 1.04, 1.09, 1.05};
    rpx__probe_verdict v;
    (void)st;
    assert_int_equal(rpx__probe_judge(t, 2, 5, RPX__PROBE_THRESHOLD, &v), 0);
    assert_int_equal(v.n_slow, 0);
    assert_true(v.ratio > 1.04);
    rpx__probe_verdict_free(&v);
}

static void test_judge_threshold(void **st)
{
    /* separated, but by less than the threshold: 2 % apart is not a warning,
     * 4 % is */
    const double two[] = {1.00, 1.00, 1.00, 1.02, 1.02, 1.02};
    const double four[] = {1.00, 1.00, 1.00, 1.04, 1.04, 1.04};
    rpx__probe_verdict v;
    (void)st;
    assert_int_equal(rpx__probe_judge(two, 2, 3, RPX__PROBE_THRESHOLD, &v), 0);
    assert_int_equal(v.n_slow, 0);
    rpx__probe_verdict_free(&v);
    assert_int_equal(rpx__probe_judge(four, 2, 3, RPX__PROBE_THRESHOLD, &v), 0);
    assert_int_equal(v.n_slow, 1);
    assert_int_equal(v.slow[1], 1);
    rpx__probe_verdict_free(&v);
}

static void test_judge_bad_input(void **st)
{
    const double t[] = {1.0, 0.0};
    rpx__probe_verdict v;
    (void)st;
    assert_int_equal(rpx__probe_judge(t, 1, 2, 0.03, &v), -1); /* a zero time */
    assert_int_equal(rpx__probe_judge(t, 0, 2, 0.03, &v), -1);
    assert_null(v.median);
}

static void test_live_probe_one_row_per_allowed_cpu(void **st)
{
    rpx_error err = {0};
    cpu_set_t set;
    json_t *p, *rows;
    size_t i, n_fast = 0;
    (void)st;
    unsetenv("RPX_SYSROOT");
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    p = rpx_system_cpu_probe(0, &err);
    assert_non_null(p);
    assert_string_equal(json_string_value(json_object_get(p, "form")), "cheap");
    rows = json_object_get(p, "compute");
    assert_int_equal(json_array_size(rows), CPU_COUNT(&set));
    for (i = 0; i < json_array_size(rows); i++) {
        const json_t *r = json_array_get(rows, i);
        double rel = json_number_value(json_object_get(r, "relative"));
        assert_true(CPU_ISSET((int)json_integer_value(json_object_get(r, "cpu")), &set));
        assert_true(rel > 0 && rel <= 1.0);
        if (rel == 1.0) n_fast++;
        assert_true(json_number_value(json_object_get(r, "ns_per_iter")) > 0);
    }
    assert_true(n_fast >= 1);
    assert_true(json_is_null(json_object_get(p, "memory")));
    assert_true(json_is_number(json_object_get(p, "cost_ms")));
    json_decref(p);
    /* a snapshot is not this machine: no probe, and why */
    setenv("RPX_SYSROOT", "/nonexistent", 1);
    assert_null(rpx_system_cpu_probe(0, &err));
    assert_non_null(strstr(err.message, "RPX_SYSROOT"));
    unsetenv("RPX_SYSROOT");
}

static rpx_proc_snapshot *take(const char *side)
{
    char root[1024], why[256];
    rpx_proc_snapshot *s;
    snprintf(root, sizeof root, "%s/procs-run/%s", getenv("RPX_SNAPSHOTS"), side);
    setenv("RPX_SYSROOT", root, 1);
    s = rpx_system_procs_take(why, sizeof why);
    assert_non_null(s);
    return s;
}

static double num(const json_t *o, const char *k)
{
    assert_true(json_is_number(json_object_get(o, k)));
    return json_number_value(json_object_get(o, k));
}

static void test_other_processes_snapshot(void **st)
{
    rpx_proc_snapshot *a = take("start"), *b = take("end");
    json_t *o, *top, *ou, *card, *cond;
    rpx_error err = {0};
    (void)st;
    /* the snapshot's end root stays in force: its status files name the users */
    o = rpx_system_other_processes(a, b, 200);
    assert_non_null(o);
    /* 0 (systemd: 40 reaped - 40 back) + 1 (kthreadd) + 52 (make: 2 + 350 - 300)
     * + 180 (busy) + 20 (new cc1) + 25 (ctest: 1645 reaped - 20 (python3) - 1600
     * (its child, reaped by it: a grandchild's time before the run)) = 278 ticks */
    assert_true(fabs(num(o, "cpu_s") - 2.78) < 1e-9);
    assert_true(fabs(num(o, "window_s") - 2.0) < 1e-9);
    assert_true(fabs(num(o, "cpus") - 1.39) < 1e-9);
    assert_true(fabs(num(o, "cpu_share") - 0.695) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(o, "allowed_cpus")), 2);
    assert_int_equal(json_integer_value(json_object_get(o, "counted")), 8);
    /* ours: rpxprof 1 + 110 reaped - 100 (worker 201 before the run) + 150 (new
     * worker 202) = 161 ticks; the allowed CPUs 0-1 were busy 180 + 90 of 400
     * ticks (CPU 2 is not allowed; steal is not busy): (270 - 161) / 400 */
    assert_true(fabs(num(o, "rpxprof_cpu_s") - 1.61) < 1e-9);
    assert_true(fabs(num(o, "allowed_cpus_other_share") - 0.2725) < 1e-9);
    top = json_object_get(o, "top");
    assert_int_equal(json_array_size(top), 3); /* this user's, with time: make, ctest, cc1 */
    assert_string_equal(json_string_value(json_object_get(json_array_get(top, 0), "comm")), "make");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(top, 0), "pid")), 101);
    assert_true(fabs(num(json_array_get(top, 0), "cpu_s") - 0.52) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(top, 1), "pid")), 700);
    assert_true(fabs(num(json_array_get(top, 1), "cpu_s") - 0.25) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(top, 2), "pid")), 600);
    ou = json_object_get(o, "other_users");
    assert_int_equal(json_integer_value(json_object_get(ou, "processes")), 2); /* busy, kthreadd */
    assert_true(fabs(num(ou, "cpu_s") - 1.81) < 1e-9);
    {
        char *text = json_dumps(o, 0); /* other users' comm never appears */
        assert_null(strstr(text, "busy"));
        free(text);
    }

    /* in a card: conditions.other_processes and the warning (69.5 % > 10 %) */
    card = rpx_system_card(&(rpx_card_options){.skip_gpus = 1}, &err);
    assert_non_null(card);
    cond = json_object_get(card, "conditions");
    assert_true(json_is_null(json_object_get(cond, "other_processes")));
    rpx_system_card_set_other_processes(card, o, NULL);
    assert_ptr_equal(json_object_get(json_object_get(card, "conditions"), "other_processes"), o);
    {
        const char *w = json_string_value(json_array_get(json_object_get(card, "warnings"),
                                                         json_array_size(json_object_get(card, "warnings")) - 1));
        assert_non_null(w);
        assert_non_null(strstr(w, "Other processes took "));
        assert_non_null(strstr(w, "Other processes took 27% of the time of the 2 CPUs this "
                                  "process may use"));
        assert_non_null(strstr(w, "make (pid 101"));
    }
    json_decref(card);
    json_decref(o);
    rpx_system_procs_free(a);
    rpx_system_procs_free(b);
    unsetenv("RPX_SYSROOT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_judge_equal_cpus_do_not_differ),
        cmocka_unit_test(test_judge_slow_cpu),
        cmocka_unit_test(test_judge_noise_hides_a_small_gap),
        cmocka_unit_test(test_judge_threshold),
        cmocka_unit_test(test_judge_bad_input),
        cmocka_unit_test(test_live_probe_one_row_per_allowed_cpu),
        cmocka_unit_test(test_other_processes_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
