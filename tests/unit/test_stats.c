/* test_stats.c — the statistics of docs/statistics.md: Student t against
 * closed forms and scipy.stats.t.ppf, distribution-free ranks against a
 * brute-force search with scipy.stats.binom, Mann-Whitney U against
 * scipy.stats.mannwhitneyu, Holm, Tukey fences against numpy's quartiles,
 * and the latency_ci object's nulls with their reasons. (tests/cli/
 * test_compare.py checks the intervals on real reports with scipy.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/compare.h"
#include "rpxprof/error.h"
#include "rpxprof/stats.h"

static void assert_rel(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want))) fail_msg("got %.17g, want %.17g (tol %g)", got, want, tol);
}

static void t_quantile_closed_forms(void **state)
{
    static const double ps[] = {0.6, 0.9, 0.975, 0.995, 0.9995, 0.999999};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof ps / sizeof *ps; i++) {
        double p = ps[i], a = 1 - p;
        /* df 1 (Cauchy): tan(pi (p - 1/2)) = 1 / tan(pi (1 - p)); df 2: (2p - 1) / sqrt(2 p (1 - p)) */
        assert_rel(rpx_stats_t_quantile(p, 1), 1 / tan(M_PI * a), 1e-12);
        assert_rel(rpx_stats_t_quantile(p, 2), (1 - 2 * a) / sqrt(2 * a * (1 - a)), 1e-12);
        assert_rel(rpx_stats_t_quantile(a, 1), -1 / tan(M_PI * a), 1e-12);
    }
    assert_true(rpx_stats_t_quantile(0.5, 3) == 0);
    assert_true(isnan(rpx_stats_t_quantile(0, 3)));
    assert_true(isnan(rpx_stats_t_quantile(0.5, 0)));
}

static void t_quantile_against_scipy(void **state)
{
    /* scipy.stats.t.ppf (scipy 1.10); its own error is about 1e-9 */
    static const struct { double df, p, want; } c[] = {
        {4, 0.975, 2.7764451051977987}, {9, 0.975, 2.2621571627409915}, {30, 0.995, 2.7499956535670305},
        {2.5, 0.9, 1.730250928807177}, {1000, 0.975, 1.9623390808264074}};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof c / sizeof *c; i++) {
        double q = rpx_stats_t_quantile(c[i].p, c[i].df);
        assert_rel(q, c[i].want, 1e-8);
        assert_rel(rpx_stats_t_cdf(q, c[i].df), c[i].p, 1e-13); /* round trip */
    }
}

static void distribution_free_minimum_and_ranks(void **state)
{
    /* brute force over all rank pairs with scipy.stats.binom (docs/statistics.md's rule) */
    static const struct { size_t n; double q; size_t lo, hi; } c[] = {
        {6, .5, 1, 6}, {100, .5, 40, 60}, {59, .95, 50, 59}, {1000, .95, 937, 964}, {299, .99, 289, 299}, {1000, .99, 983, 996}};
    size_t i, lo, hi;
    (void)state;
    assert_int_equal(rpx_stats_quantile_min_calls(0.5, 0.95), 6);
    assert_int_equal(rpx_stats_quantile_min_calls(0.95, 0.95), 59);
    assert_int_equal(rpx_stats_quantile_min_calls(0.99, 0.95), 299);
    for (i = 0; i < sizeof c / sizeof *c; i++) {
        assert_int_equal(rpx_stats_quantile_ranks(c[i].n, c[i].q, 0.95, &lo, &hi), 0);
        assert_int_equal(lo, c[i].lo);
        assert_int_equal(hi, c[i].hi);
    }
    assert_int_equal(rpx_stats_quantile_ranks(298, 0.99, 0.95, &lo, &hi), RPX_EINVAL);
    assert_int_equal(rpx_stats_quantile_ranks(5, 0.5, 0.95, &lo, &hi), RPX_EINVAL);
}

static void mann_whitney_and_holm(void **state)
{
    static const double a[] = {1, 2, 3, 4, 5}, b[] = {6, 7, 8, 9, 10};
    static const double c[] = {1.5, 2, 3.2, 7}, d[] = {6, 2.5, 8, 9, 10, 11};
    static const double p[] = {0.01, 0.04, 0.03, NAN};
    double adj[4];
    int exact = -1;
    (void)state;
    assert_rel(rpx_stats_mann_whitney(a, 5, b, 5, &exact), 2.0 / 252, 1e-14); /* scipy: 0.007936507936507936 */
    assert_int_equal(exact, 1);
    assert_rel(rpx_stats_mann_whitney(c, 4, d, 6, &exact), 0.06666666666666667, 1e-14);
    assert_true(isnan(rpx_stats_mann_whitney(a, 0, b, 5, NULL)));
    assert_int_equal(rpx_stats_holm(p, 4, adj), 0);
    assert_rel(adj[0], 0.03, 1e-15);
    assert_rel(adj[1], 0.06, 1e-15);
    assert_rel(adj[2], 0.06, 1e-15);
    assert_true(isnan(adj[3]));
}

static void tukey_fences(void **state)
{
    /* numpy: q1 4, q3 10, IQR 6: mild above 19, severe above 28 */
    static const double x[] = {20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 30, 100};
    size_t mild, severe;
    (void)state;
    rpx_stats_tukey(x, 13, &mild, &severe);
    assert_int_equal(mild, 1);
    assert_int_equal(severe, 2);
    rpx_stats_tukey(x, 0, &mild, &severe);
    assert_int_equal(mild + severe, 0);
}

static const char *reason(const json_t *ci, const char *key)
{
    return json_string_value(json_object_get(json_object_get(ci, "null_reasons"), key));
}

static void latency_ci_nulls_and_labels(void **state)
{
    double s[300];
    size_t off[3] = {0, 100, 200}, cnt[3] = {100, 100, 100}, one_off = 0, one_cnt = 100, i;
    json_t *ci;
    (void)state;
    for (i = 0; i < 300; i++) s[i] = 1.0 + 0.001 * (double)((i * 37) % 101) + 0.01 * (double)(i / 100);
    /* one process, 100 calls: p99 needs 299 */
    ci = rpx_stats_latency_ci(s, &one_off, &one_cnt, 1, 0.95);
    assert_non_null(ci);
    assert_string_equal(json_string_value(json_object_get(ci, "covers")), "within-process");
    assert_true(json_is_array(json_object_get(ci, "p50_ms")));
    assert_true(json_is_array(json_object_get(ci, "mean_ms")));
    assert_true(json_is_null(json_object_get(ci, "p99_ms")));
    assert_non_null(strstr(reason(ci, "p99_ms"), "at least 299 calls"));
    assert_null(reason(ci, "p50_ms"));
    json_decref(ci);
    /* three processes of 100: p95 works (59), p99 does not (299 per process) */
    ci = rpx_stats_latency_ci(s, off, cnt, 3, 0.95);
    assert_string_equal(json_string_value(json_object_get(ci, "covers")), "between-process");
    assert_true(json_is_array(json_object_get(ci, "p95_ms")));
    assert_true(json_is_null(json_object_get(ci, "p99_ms")));
    assert_non_null(strstr(reason(ci, "p99_ms"), "per-process p99 needs at least 299 calls"));
    {
        /* the interval holds the pooled p50 */
        const json_t *p = json_object_get(ci, "p50_ms");
        assert_true(json_number_value(json_array_get(p, 0)) < json_number_value(json_array_get(p, 1)));
    }
    json_decref(ci);
    /* one process with calls out of three: no between-process interval */
    cnt[1] = cnt[2] = 0;
    ci = rpx_stats_latency_ci(s, off, cnt, 3, 0.95);
    assert_true(json_is_null(json_object_get(ci, "p50_ms")));
    assert_non_null(strstr(reason(ci, "mean_ms"), "at least 2 processes"));
    json_decref(ci);
    /* a within-process mean from too few calls */
    one_cnt = 10;
    ci = rpx_stats_latency_ci(s, &one_off, &one_cnt, 1, 0.95);
    assert_non_null(strstr(reason(ci, "mean_ms"), "at least 30 calls"));
    assert_true(json_is_array(json_object_get(ci, "p50_ms")));
    json_decref(ci);
}

static void verdict_rule(void **state)
{
    (void)state;
    assert_string_equal(rpx_compare_verdict(1.02, 1.05, 0.01), "slower");
    assert_string_equal(rpx_compare_verdict(0.95, 0.98, 0.01), "faster");
    assert_string_equal(rpx_compare_verdict(0.995, 1.005, 0.01), "same");
    assert_string_equal(rpx_compare_verdict(1.005, 1.02, 0.01), "inconclusive");
    assert_string_equal(rpx_compare_verdict(NAN, NAN, 0.01), "inconclusive");
    assert_string_equal(rpx_compare_verdict(1.0, 1.01, 0.01), "same"); /* the edges belong to "same" */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_quantile_closed_forms),
        cmocka_unit_test(t_quantile_against_scipy),
        cmocka_unit_test(distribution_free_minimum_and_ranks),
        cmocka_unit_test(mann_whitney_and_holm),
        cmocka_unit_test(tukey_fences),
        cmocka_unit_test(latency_ci_nulls_and_labels),
        cmocka_unit_test(verdict_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
