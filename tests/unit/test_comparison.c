/* Unit tests for src/compare/: two reports compared in memory (rpx_compare_json,
 * rpxprof/comparison.h), no file read or written: the ratio and verdict of a
 * known change, the names the caller gives, and the validator's refusals
 * worded with those names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/comparison.h"
#include "rpxprof/error.h"
#include "rpxprof/latency.h"
#include "rpxprof/report.h"

#define K 4   /* processes */
#define M 24  /* calls each */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A complete report of K processes of M calls whose samples are a fixed
 * spread around 1 ms times `scale`: the keys the validator asks for, its
 * percentiles what its samples give. */
static json_t *report(double scale, const char *status)
{
    json_t *r = json_object(), *s = json_array(), *by = json_array(), *lat = json_object();
    double v[K * M], sorted[K * M], sum = 0;
    size_t i;
    for (i = 0; i < K * M; i++) {
        v[i] = scale * (1.0 + 0.002 * (double)((i * 7) % 11) + 0.001 * (double)(i / M));
        sum += v[i];
        json_array_append_new(s, json_real(v[i]));
    }
    memcpy(sorted, v, sizeof v);
    qsort(sorted, K * M, sizeof *sorted, cmp_dbl);
    json_object_set_new(lat, "p50_ms", json_real(rpx_percentile_sorted(sorted, K * M, 50)));
    json_object_set_new(lat, "p95_ms", json_real(rpx_percentile_sorted(sorted, K * M, 95)));
    json_object_set_new(lat, "p99_ms", json_real(rpx_percentile_sorted(sorted, K * M, 99)));
    json_object_set_new(lat, "mean_ms", json_real(sum / (K * M)));
    for (i = 0; i < K; i++)
        json_array_append_new(by, json_pack("{s:I, s:I}", "sample_offset", (json_int_t)(i * M),
                                            "measured_calls", (json_int_t)M));
    json_object_set_new(r, "schema", json_string(RPX_PROFILE_SCHEMA));
    json_object_set_new(r, "status", json_string(status));
    json_object_set_new(r, "model_callable", json_string("./libm.so:predict"));
    json_object_set_new(r, "device", json_string("cpu"));
    json_object_set_new(r, "precision", json_string("fp32"));
    json_object_set_new(r, "unit", json_string("frame"));
    json_object_set_new(r, "inputs_sha256", json_null());
    json_object_set_new(r, "warmup_calls", json_integer(1));
    json_object_set_new(r, "measured_calls", json_integer(K * M));
    json_object_set_new(r, "inputs", json_object());
    json_object_set_new(r, "metadata", json_object());
    json_object_set_new(r, "latency", lat);
    json_object_set_new(r, "latency_samples_ms", s);
    json_object_set_new(r, "system_card", json_object());
    json_object_set_new(r, "memory", json_object());
    json_object_set_new(r, "processes", json_integer(K));
    json_object_set_new(r, "latency_by_process", by);
    json_object_set_new(r, "latency_ci", json_null());
    return r;
}

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

/* NEW 20 % slower than BASE in every call: ratio 1.2, verdict slower; BASE
 * against itself: ratio 1, verdict same. The names are the caller's. */
static void test_two_reports_in_memory(void **st)
{
    json_t *b = report(1.0, "complete"), *n = report(1.2, "complete"), *out = NULL;
    rpx_compare_opts o = {0.01, 0.95, 0};
    rpx_error err = {0};
    (void)st;
    assert_int_equal(rpx_compare_json(b, "base arm", n, "new arm", &o, &out, &err), 0);
    assert_string_equal(json_string_value(json_object_get(out, "base")), "base arm");
    assert_string_equal(json_string_value(json_object_get(out, "new")), "new arm");
    assert_string_equal(json_string_value(json_object_get(out, "verdict")), "slower");
    assert_string_equal(json_string_value(json_object_get(out, "design")), "independent");
    assert_string_equal(json_string_value(json_object_get(out, "covers")), "between-process");
    assert_true(fabs(num(out, "p50_ratio") - 1.2) < 1e-9);
    assert_true(fabs(num(out, "mean_ratio") - 1.2) < 1e-9);
    assert_true(json_is_array(json_object_get(out, "p50_ratio_ci")));
    assert_true(num(json_object_get(out, "base_stats"), "p50_ms") > 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(out, "new_stats"), "calls")), K * M);
    assert_int_equal(json_array_size(json_object_get(out, "notes")), 0);
    json_decref(out);
    out = NULL;
    assert_int_equal(rpx_compare_json(b, "a", b, "b", &o, &out, &err), 0);
    assert_string_equal(json_string_value(json_object_get(out, "verdict")), "same");
    assert_true(fabs(num(out, "p50_ratio") - 1.0) < 1e-12);
    json_decref(out);
    json_decref(b);
    json_decref(n);
}

/* A report the validator refuses is refused here too, in its words, under the
 * name the caller gave; nothing comes out. */
static void test_refusals_name_the_report(void **st)
{
    json_t *b = report(1.0, "complete"), *n = report(1.0, "complete"), *c = report(1.0, "crashed");
    json_t *out = NULL;
    rpx_compare_opts o = {0.01, 0.95, 0};
    rpx_error err = {0};
    (void)st;
    json_object_set_new(json_object_get(n, "latency"), "p50_ms", json_real(5.0));
    assert_int_equal(rpx_compare_json(b, "base arm", n, "new arm", &o, &out, &err), RPX_EFORMAT);
    assert_null(out);
    assert_non_null(strstr(err.message, "new arm: latency.p50_ms is 5 but the samples give"));
    assert_int_equal(rpx_compare_json(c, "crashed arm", b, "b", &o, &out, &err), RPX_EINVAL);
    assert_null(out);
    assert_non_null(strstr(err.message, "crashed arm: status is 'crashed', not complete"));
    json_object_del(b, "latency");
    assert_int_equal(rpx_compare_json(b, "no latency", c, "c", &o, &out, &err), RPX_EFORMAT);
    assert_non_null(strstr(err.message, "no latency: does not match schemas/profile.json"));
    json_decref(b);
    json_decref(n);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_reports_in_memory),
        cmocka_unit_test(test_refusals_name_the_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
