/* test_histogram.c — the log-bucketed histogram: percentiles within 1 % of the
 * exact ones (numpy's linear interpolation, rpx_percentile_sorted) on sample
 * sets spanning nanoseconds to hours; exact n, mean, min, max and std. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "rpxprof/histogram.h"
#include "rpxprof/latency.h"

static uint64_t rng = 88172645463325252ULL;

static double uniform01(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n samples of exp(N(mu, sigma)) ns, plus a few stalls 1000 times longer */
static void check_set(size_t n, double mu, double sigma)
{
    rpx_histogram *h = NULL;
    double *x = malloc(n * sizeof *x), sum = 0, ss = 0, mean, std;
    static const double qs[] = {0, 1, 25, 50, 75, 90, 95, 99, 99.9, 100};
    rpx_latency_stats st;
    size_t i, k;
    assert_non_null(x);
    assert_int_equal(rpx_histogram_create(&h), 0);
    for (i = 0; i < n; i++) {
        double u1 = uniform01(), u2 = uniform01();
        double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
        double v = floor(exp(mu + sigma * z));
        if (i % 97 == 0) v *= 1000;
        x[i] = v;
        rpx_histogram_add(h, (int64_t)v);
        sum += v;
    }
    mean = sum / (double)n;
    for (i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);
    std = sqrt(ss / (double)(n - 1));
    qsort(x, n, sizeof *x, cmp_d);
    assert_int_equal(rpx_histogram_count(h), n);
    for (k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        double exact = rpx_percentile_sorted(x, n, qs[k]);
        double got = rpx_histogram_percentile_ns(h, qs[k]);
        if (fabs(got - exact) > 0.01 * exact + 1e-9)
            fail_msg("q %g: histogram %.17g, exact %.17g (n %zu)", qs[k], got, exact, n);
    }
    assert_int_equal(rpx_histogram_stats(h, &st), 0);
    assert_true(st.available);
    assert_true(st.n == n);
    assert_true(st.min_ms == x[0] / 1e6);
    assert_true(st.max_ms == x[n - 1] / 1e6);
    assert_true(fabs(st.mean_ms - mean / 1e6) <= 1e-9 * mean / 1e6);
    assert_true(fabs(st.std_ms - std / 1e6) <= 1e-6 * std / 1e6);
    rpx_histogram_destroy(h);
    free(x);
}

static void test_percentiles_within_one_percent(void **state)
{
    (void)state;
    check_set(1000, log(2e6), 0.5);     /* milliseconds */
    check_set(100000, log(300), 1.0);   /* sub-microsecond to microseconds: exact buckets too */
    check_set(20000, log(5e9), 2.0);    /* seconds to hours */
    check_set(3, log(1e4), 1.0);
}

static void test_small_values_are_exact_and_negative_is_zero(void **state)
{
    rpx_histogram *h = NULL;
    int64_t v;
    (void)state;
    assert_int_equal(rpx_histogram_create(&h), 0);
    for (v = 0; v < 128; v++) rpx_histogram_add(h, v);
    assert_true(rpx_histogram_percentile_ns(h, 50) == 63.5);
    assert_true(rpx_histogram_percentile_ns(h, 0) == 0);
    assert_true(rpx_histogram_percentile_ns(h, 100) == 127);
    rpx_histogram_add(h, -5);
    assert_true(rpx_histogram_percentile_ns(h, 0) == 0);
    rpx_histogram_add(h, INT64_MAX);
    assert_true(rpx_histogram_percentile_ns(h, 100) == (double)INT64_MAX);
    rpx_histogram_destroy(h);
}

static void test_empty(void **state)
{
    rpx_histogram *h = NULL;
    rpx_latency_stats st;
    (void)state;
    assert_int_equal(rpx_histogram_create(&h), 0);
    assert_true(isnan(rpx_histogram_percentile_ns(h, 50)));
    assert_int_equal(rpx_histogram_stats(h, &st), 0);
    assert_false(st.available);
    assert_true(isnan(st.p50_ms) && isnan(st.std_ms));
    rpx_histogram_add(h, 7);
    assert_int_equal(rpx_histogram_stats(h, &st), 0);
    assert_true(st.available && isnan(st.std_ms) && st.p99_ms == 7e-6);
    rpx_histogram_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles_within_one_percent),
        cmocka_unit_test(test_small_values_are_exact_and_negative_is_zero),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
