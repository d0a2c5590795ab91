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
#include "rpxprof/stats.h"

#include "report_maker.h"

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

/* NEW 20 % slower than BASE in every call: ratio 1.2, verdict slower; BASE
 * against itself: ratio 1, verdict same. The names are the caller's. Both
 * measured in one session, as the audits' arms are (same_session). */
static void test_two_reports_in_memory(void **st)
{
    json_t *b = rpx_test_report(1.0, "complete"), *n = rpx_test_report(1.2, "complete"), *out = NULL;
    rpx_compare_opts o = {0.01, 0.95, 0, NULL, 1};
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
    assert_true(json_is_true(json_object_get(out, "same_session")));
    assert_null(json_object_get(out, "between_session"));
    json_decref(out);
    out = NULL;
    assert_int_equal(rpx_compare_json(b, "a", b, "b", &o, &out, &err), 0);
    assert_string_equal(json_string_value(json_object_get(out, "verdict")), "same");
    assert_true(fabs(num(out, "p50_ratio") - 1.0) < 1e-12);
    json_decref(out);
    json_decref(b);
    json_decref(n);
}

/* Two reports of different sessions (same_session 0; docs/statistics.md, "Two
 * reports of different sessions"): without a spread, the default allowance
 * (sigma 0.0393, 29 df) widens the interval: BASE against itself is no longer
 * "same" but inconclusive, with the change that would be decided (about
 * 12 %) and the two ways to decide smaller ones; 20 % slower is still
 * decided; the within-session interval is kept. With a spread of sigma 0 from
 * a history, the within-session verdicts stand. */
static void test_two_sessions_rule(void **st)
{
    json_t *b = rpx_test_report(1.0, "complete"), *n = rpx_test_report(1.2, "complete"), *out = NULL;
    json_t *spread = json_pack("{ss sf si ss}", "source", "series", "sigma_between_log", 0.0, "df", 10, "how", "test");
    rpx_compare_opts o = {0.01, 0.95, 0, NULL, 0};
    rpx_error err = {0};
    const json_t *bs, *ws;
    double dec, lo;
    (void)st;
    assert_int_equal(rpx_compare_json(b, "a", b, "b", &o, &out, &err), 0);
    assert_string_equal(json_string_value(json_object_get(out, "verdict")), "inconclusive");
    assert_string_equal(json_string_value(json_object_get(out, "covers")), "between-session");
    bs = json_object_get(out, "between_session");
    ws = json_object_get(out, "within_session");
    assert_string_equal(json_string_value(json_object_get(bs, "source")), "default");
    dec = num(bs, "decidable_change");
    assert_true(dec > 0.10 && dec < 0.14);
    assert_int_equal(json_array_size(json_object_get(bs, "to_decide_smaller")), 2);
    assert_string_equal(json_string_value(json_object_get(ws, "verdict")), "same");
    assert_string_equal(json_string_value(json_object_get(ws, "covers")), "between-process");
    lo = json_number_value(json_array_get(json_object_get(out, "p50_ratio_ci"), 0));
    /* the between-session half-width alone: t(0.975; 29) sqrt 2 0.0393 */
    assert_true(fabs(log(lo) + rpx_stats_t_quantile(0.975, 29) * sqrt(2.0) * 0.0393) < 0.002);
    assert_true(json_array_size(json_object_get(out, "warnings")) >= 1);
    json_decref(out);
    assert_int_equal(rpx_compare_json(b, "a", n, "n", &o, &out, &err), 0);
    assert_string_equal(json_string_value(json_object_get(out, "verdict")), "slower");
    json_decref(out);
    o.session_spread = spread;
    assert_int_equal(rpx_compare_json(b, "a", b, "b", &o, &out, &err), 0);
    assert_string_equal(json_string_value(json_object_get(out, "verdict")), "same");
    assert_string_equal(json_string_value(json_object_get(json_object_get(out, "between_session"), "source")), "series");
    json_decref(out);
    json_decref(spread);
    json_decref(b);
    json_decref(n);
}

/* A report the validator refuses is refused here too, in its words, under the
 * name the caller gave; nothing comes out. */
static void test_refusals_name_the_report(void **st)
{
    json_t *b = rpx_test_report(1.0, "complete"), *n = rpx_test_report(1.0, "complete"), *c = rpx_test_report(1.0, "crashed");
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
        cmocka_unit_test(test_two_sessions_rule),
        cmocka_unit_test(test_refusals_name_the_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
