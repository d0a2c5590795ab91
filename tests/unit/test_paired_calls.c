/* Unit tests for compare --run's paired interval (src/compare/two_reports.c,
 * docs/statistics.md "The paired design's interval"), issue 36: the interval
 * is never narrower than the calls' own noise allows. Pairs whose
 * within-pair ratios agree exactly (sd of the log ratios 0) but whose calls
 * spread +-20 % get an interval at least as wide as the per-process
 * statistics' own sampling error, which holds 1.0 for a 0.3 % difference;
 * without the floor it was [1.003, 1.003]. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/comparison.h"
#include "rpxprof/error.h"

#include "report_maker.h"

#define PK 6    /* pairs */
#define PM 101  /* calls a process */

/* A report of PK processes of PM calls each, process k on CPU k, calls
 * spread +-20 % around `scale` ms (the same pattern in every process). */
static json_t *paired_report(double scale)
{
    json_t *r = rpx_test_report(1.0, "complete"), *s = json_array(), *by = json_array(),
           *lat = json_object(), *place = json_array();
    static double v[PK * PM], sorted[PK * PM];
    double sum = 0;
    size_t i;
    for (i = 0; i < PK * PM; i++) {
        size_t j = i % PM;
        v[i] = scale * (0.8 + 0.4 * (double)((j * 37) % PM) / (PM - 1));
        sum += v[i];
        json_array_append_new(s, json_real(v[i]));
    }
    memcpy(sorted, v, sizeof v);
    qsort(sorted, PK * PM, sizeof *sorted, rpx_test_cmp_dbl);
    json_object_set_new(lat, "p50_ms", json_real(rpx_percentile_sorted(sorted, PK * PM, 50)));
    json_object_set_new(lat, "p95_ms", json_real(rpx_percentile_sorted(sorted, PK * PM, 95)));
    json_object_set_new(lat, "p99_ms", json_real(rpx_percentile_sorted(sorted, PK * PM, 99)));
    json_object_set_new(lat, "mean_ms", json_real(sum / (PK * PM)));
    for (i = 0; i < PK; i++) {
        json_array_append_new(by, json_pack("{s:I, s:I}", "sample_offset", (json_int_t)(i * PM),
                                            "measured_calls", (json_int_t)PM));
        json_array_append_new(place, json_pack("{s:[I]}", "cpus", (json_int_t)i));
    }
    json_object_set_new(r, "latency", lat);
    json_object_set_new(r, "latency_samples_ms", s);
    json_object_set_new(r, "measured_calls", json_integer(PK * PM));
    json_object_set_new(r, "processes", json_integer(PK));
    json_object_set_new(r, "latency_by_process", by);
    json_object_set_new(r, "placement", json_pack("{s:s, s:[I], s:n, s:o}", "policy", "spread",
                                                  "cpus_allowed", (json_int_t)0, "cpus_requested",
                                                  "by_process", place));
    return r;
}

static void test_never_narrower_than_the_calls(void **st)
{
    json_t *b = paired_report(1.0), *n = paired_report(1.003), *out = NULL;
    rpx_compare_opts o = {.threshold = 0.01, .confidence = 0.95, .paired_by_cpu = 1};
    rpx_error err = {0};
    const json_t *ci;
    (void)st;
    assert_int_equal(rpx_compare_json(b, "base", n, "new", &o, &out, &err), 0);
    assert_string_equal(json_string_value(json_object_get(out, "design")), "paired_by_cpu");
    assert_true(fabs(json_number_value(json_object_get(out, "p50_ratio")) - 1.003) < 1e-9);
    ci = json_object_get(out, "p50_ratio_ci");
    assert_true(json_is_array(ci));
    /* 101 calls spread +-20 %: the p50 of one process is known to about +-2 %,
     * so six pairs cannot tell 0.3 % from nothing */
    assert_true(json_number_value(json_array_get(ci, 0)) < 1.0);
    assert_true(json_number_value(json_array_get(ci, 1)) > 1.006);
    assert_true(json_number_value(json_object_get(out, "p_value")) > 0.05);
    assert_string_equal(json_string_value(json_object_get(out, "verdict")), "inconclusive");
    /* the mean's too */
    ci = json_object_get(out, "mean_ratio_ci");
    assert_true(json_number_value(json_array_get(ci, 0)) < 1.0);
    json_decref(out);
    json_decref(b);
    json_decref(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_narrower_than_the_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
