/* Unit tests for what a sweep's points say together (src/sweep/sweep.c): the
 * log-log slope with one intercept per round (exact on a power law whatever
 * each round's own factor, its degrees of freedom, refused without two sizes),
 * and sweep.json from hand-made reports: the per-point fields, throughput as
 * items x 1000 / p50, the scaling fit, the best throughput and the knee. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "sweep/sweep.h"

static void test_slope_is_exact_on_a_power_law_whatever_the_rounds_factors(void **st)
{
    double x[12], y[12], s, lo, hi;
    int g[12], df, i;
    (void)st;
    for (i = 0; i < 12; i++) {
        x[i] = 16.0 * (1 + i % 4);
        g[i] = i / 4;                               /* three rounds of four points */
        y[i] = 0.02 * pow(x[i], 1.5) * (1 + 0.3 * g[i]); /* each round its own drift */
    }
    assert_int_equal(rpx_sweep_loglog_slope(x, y, g, 12, 0.95, &s, &lo, &hi, &df), 0);
    assert_true(fabs(s - 1.5) < 1e-12);
    assert_true(fabs(lo - 1.5) < 1e-9 && fabs(hi - 1.5) < 1e-9);
    assert_int_equal(df, 12 - 3 - 1);
    /* one common intercept: the rounds' drift is noise, the interval widens */
    assert_int_equal(rpx_sweep_loglog_slope(x, y, NULL, 12, 0.95, &s, &lo, &hi, &df), 0);
    assert_int_equal(df, 10);
    assert_true(hi - lo > 0.1);
}

static void test_slope_needs_two_sizes(void **st)
{
    double x[3] = {4, 4, 4}, y[3] = {1, 2, 3}, s, lo, hi;
    int df;
    (void)st;
    assert_int_equal(rpx_sweep_loglog_slope(x, y, NULL, 3, 0.95, &s, &lo, &hi, &df), -1);
    assert_true(isnan(s) && isnan(lo) && isnan(hi));
}

/* a report with what sweep.json reads: p50 t (and the process p50s t, t x 1.01) */
static json_t *report(double t, double flops)
{
    return json_pack("{s:{s:f,s:f,s:f},s:{s:[f,f]},s:[{s:f},{s:f}],s:{s:f},s:{s:{s:{s:f}}},"
                     "s:s,s:{s:s,s:s}}",
                     "latency", "p50_ms", t, "p95_ms", t * 1.1, "p99_ms", t * 1.2,
                     "latency_ci", "p50_ms", t * 0.99, t * 1.01,
                     "latency_by_process", "p50_ms", t, "p50_ms", t * 1.01,
                     "efficiency", "flops", flops,
                     "roofline", "host-cpu", "ideal", "latency_ms", flops / 1e8,
                     "device", "cpu",
                     "session", "id", "S1", "started", "2026");
}

static void test_sweep_json_points_fit_best_and_knee(void **st)
{
    rpx_sweep_point p[4];
    json_t *r[4], *vary = json_pack("[{s:s,s:[i,i,i,i],s:i}]", "name", "batch", "values", 1, 2,
                                    4, 8, "direction", 1), *out = NULL;
    static const double t[4] = {1.0, 1.0, 1.2, 2.4}; /* throughput 1000, 2000, 3333, 3333 */
    rpx_error err = {0};
    const json_t *pts;
    int i;
    (void)st;
    memset(p, 0, sizeof p);
    for (i = 0; i < 4; i++) {
        r[i] = report(t[i], 1e6 * (1 << i));
        p[i].value = json_integer(1 << i);
        p[i].index[0] = i;
        snprintf(p[i].label, sizeof p[i].label, "batch-%d", 1 << i);
        p[i].size = p[i].items = (double)(1 << i);
        p[i].report = r[i];
    }
    assert_int_equal(rpx_sweep_json("m", vary, "batch", p, 4, &out, &err), 0);
    assert_string_equal(json_string_value(json_object_get(out, "schema")), "rpxprof-sweep/1");
    assert_string_equal(json_string_value(json_object_get(json_object_get(out, "session"), "id")), "S1");
    pts = json_object_get(out, "points");
    assert_int_equal(json_array_size(pts), 4);
    for (i = 0; i < 4; i++) {
        const json_t *q = json_array_get(pts, (size_t)i);
        assert_true(fabs(json_real_value(json_object_get(q, "throughput_per_s")) -
                         (1 << i) * 1000.0 / t[i]) < 1e-9);
        assert_true(fabs(json_real_value(json_object_get(q, "bound_ms")) - 1e6 * (1 << i) / 1e8) < 1e-12);
        assert_string_equal(json_string_value(json_object_get(q, "bound_of")), "host-cpu");
        assert_true(json_is_true(json_object_get(q, "valid")));
    }
    /* the bound goes exactly as the batch */
    assert_true(fabs(json_real_value(json_object_get(json_object_get(out, "scaling"),
                                                     "bound_exponent")) - 1) < 1e-12);
    /* best: batch-4 (3333.3 before batch-8's equal 3333.3); knee: the first at 90 % of it */
    assert_string_equal(json_string_value(json_object_get(json_object_get(out, "best_throughput"), "label")),
                        "batch-4");
    assert_string_equal(json_string_value(json_object_get(json_object_get(out, "knee"), "label")),
                        "batch-4");
    assert_true(json_is_null(json_object_get(out, "capacity")));
    assert_int_equal(json_array_size(json_object_get(out, "wrong_way")), 0);
    json_decref(out);
    json_decref(vary);
    for (i = 0; i < 4; i++) {
        json_decref(r[i]);
        json_decref(p[i].value);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slope_is_exact_on_a_power_law_whatever_the_rounds_factors),
        cmocka_unit_test(test_slope_needs_two_sizes),
        cmocka_unit_test(test_sweep_json_points_fit_best_and_knee),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
