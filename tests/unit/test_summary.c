/* Unit tests of the summary's number rule and lines (src/report/summary.c):
 * three significant digits without an exponent from 0.0001 ms to 10^5 ms, the
 * interval in the same rule, and the cost, bound and real-time lines only
 * when the report has them. */
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "rpxprof/summary.h"

static void test_number_rule(void **state)
{
    static const struct {
        double x;
        const char *text;
    } cases[] = {
        {0.0001, "0.000100"}, {0.00012345, "0.000123"}, {0.0009996, "0.00100"}, {0.001, "0.00100"},
        {0.0191, "0.0191"},   {0.01915, "0.0192"},      {0.5, "0.500"},         {1, "1.00"},
        {9.996, "10.0"},      {86, "86.0"},             {99.96, "100"},         {120, "120"},
        {123.4, "123"},       {999.7, "1000"},          {1234, "1230"},         {12345, "12300"},
        {1e5, "100000"},      {123456, "123000"},       {999999, "1000000"},    {0, "0"},
        {-0.0191, "-0.0191"}, {-1234, "-1230"},
    };
    char buf[40];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rpx_format_3g(buf, sizeof buf, cases[i].x);
        if (strcmp(buf, cases[i].text) != 0)
            fail_msg("%.17g: got '%s', want '%s'", cases[i].x, buf, cases[i].text);
    }
    /* every value from 0.0001 to 10^5 ms: no exponent, three significant digits */
    for (i = 0; i <= 900; i++) {
        double x = 1e-4 * pow(10, (double)i / 100);
        char *p;
        int sig = 0, started = 0;
        rpx_format_3g(buf, sizeof buf, x);
        assert_null(strchr(buf, 'e'));
        for (p = buf; *p; p++) {
            if (*p >= '1' && *p <= '9') started = 1;
            if (started && *p >= '0' && *p <= '9') sig++;
        }
        if (strtod(buf, NULL) >= 1000) assert_true(sig >= 3); /* 1230: trailing zeros */
        else assert_int_equal(sig, 3);
        assert_true(fabs(strtod(buf, NULL) - x) <= 0.005 * x);
    }
    assert_string_equal(rpx_format_3g(buf, sizeof buf, NAN), "n/a");
    assert_string_equal(rpx_format_3g(buf, sizeof buf, INFINITY), "n/a");
}

static json_t *report(double p50, double lo, double hi)
{
    json_t *r = json_pack("{s:s, s:i, s:i, s:{s:f, s:f, s:f, s:f, s:f}, s:{s:s, s:[f,f], s:n, s:n, s:n}}",
                          "model_callable", "m:predict", "measured_calls", 100, "processes", 5, "latency",
                          "p50_ms", p50, "p95_ms", p50 * 1.2, "p99_ms", p50 * 1.3, "mean_ms", p50 * 1.05,
                          "min_ms", p50 * 0.9, "latency_ci", "covers", "between-process", "p50_ms", lo, hi,
                          "p95_ms", "p99_ms", "mean_ms");
    assert_non_null(r);
    return r;
}

static void test_a_120_ms_model(void **state)
{
    json_t *r = report(120.2, 86.04, 150.3);
    rpx_summary_opts o = {5, 0};
    char *s = rpx_report_summary(r, &o);
    (void)state;
    assert_non_null(s);
    assert_non_null(strstr(s, "m:predict: 100 timed calls in 5 processes\n"));
    /* 28.4 % below, 25.0 % above: each side apart */
    if (!strstr(s, "  p50   120 ms  95% CI [86.0, 150] (-28.4 % / +25.0 %)\n")) fail_msg("%s", s);
    assert_non_null(strstr(s, "  p95   144 ms\n"));
    assert_non_null(strstr(s, "  min   108 ms\n"));
    /* no cost, bound or budget in the report: no such line */
    assert_null(strstr(s, "cost:"));
    assert_null(strstr(s, "bound "));
    assert_null(strstr(s, "real time"));
    free(s);
    json_decref(r);
}

/* issue 38: "p50 15.0 ms 95% CI [7.49, 64.9] (+-334 %)" hid that the lower
 * side is -50 %; an interval within 10 % of symmetric keeps one "+-" */
static void test_an_asymmetric_interval_shows_both_sides(void **state)
{
    json_t *r = report(15.0, 7.49, 64.9), *q = report(120.0, 110.0, 131.0);
    char *s = rpx_report_summary(r, NULL), *t = rpx_report_summary(q, NULL);
    (void)state;
    assert_non_null(s);
    assert_non_null(t);
    if (!strstr(s, "  p50   15.0 ms  95% CI [7.49, 64.9] (-50.1 % / +333 %)\n")) fail_msg("%s", s);
    if (!strstr(t, "  p50   120 ms  95% CI [110, 131] (+-9.17 %)\n")) fail_msg("%s", t);
    free(s);
    free(t);
    json_decref(r);
    json_decref(q);
}

static void test_extremes_have_no_exponent(void **state)
{
    double p50s[] = {0.0001, 0.00123, 0.5, 7, 4321, 1e5};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof p50s / sizeof p50s[0]; i++) {
        json_t *r = report(p50s[i], p50s[i] * 0.9, p50s[i] * 1.1);
        char *s = rpx_report_summary(r, NULL), *line;
        assert_non_null(s);
        line = strstr(s, "  p50 ");
        assert_non_null(line);
        /* the p50 line (up to its newline) holds no exponent */
        assert_null(memchr(line, 'e', (size_t)(strchr(line, '\n') - line)));
        free(s);
        json_decref(r);
    }
}

static void test_cost_bound_and_budget_lines(void **state)
{
    json_t *r = report(2.0, 1.9, 2.1);
    char *s;
    (void)state;
    json_object_set_new(r, "efficiency",
                        json_pack("{s:s, s:f, s:f, s:f, s:n, s:b}", "source", "graph", "flops", 3628146688.0,
                                  "macs", 1814073344.0, "params", 11689512.0, "traffic_bytes_ideal", "partial", 0));
    json_object_set_new(r, "roofline",
                        json_pack("{s:{s:{s:f, s:s}, s:{s:f}, s:n}, s:{s:n, s:n, s:s}}", "h100-sxm", "ideal",
                                  "latency_ms", 0.0542, "bottleneck", "compute", "achieved_fraction", "ideal", 0.0271,
                                  "reason", "rtx-4090", "ideal", "achieved_fraction", "reason", "no FLOPs"));
    json_object_set_new(r, "realtime_budget",
                        json_pack("{s:[{s:f, s:f, s:f, s:b}, {s:f, s:f, s:f, s:b}]}", "rates", "hz", 30.0,
                                  "budget_ms", 33.333, "beta", 0.06, "realtime", 1, "hz", 1000.0, "budget_ms", 1.0,
                                  "beta", 2.0, "realtime", 0));
    s = rpx_report_summary(r, NULL);
    assert_non_null(s);
    if (!strstr(s, "  cost: 3.63 G FLOPs (1.81 G MACs), 11.7 M params per call (graph)\n")) fail_msg("%s", s);
    if (!strstr(s, "  bound h100-sxm: ideal 0.0542 ms (compute-bound); the p50 achieves 2.71 % of it\n"))
        fail_msg("%s", s);
    if (!strstr(s, "  bound rtx-4090: n/a: no FLOPs\n")) fail_msg("%s", s);
    if (!strstr(s, "  real time at p50: 30.0 Hz yes (6.00 % of the 33.3 ms budget), 1000 Hz no (200 % of "
                   "the 1.00 ms budget)\n"))
        fail_msg("%s", s);
    free(s);
    json_decref(r);
}

static void test_a_comma_locale_changes_no_number(void **state)
{
    char buf[40];
    (void)state;
    if (!setlocale(LC_NUMERIC, "de_DE.UTF-8") && !setlocale(LC_NUMERIC, "fr_FR.UTF-8")) skip();
    assert_string_equal(rpx_format_3g(buf, sizeof buf, 86), "86.0");
    setlocale(LC_NUMERIC, "C");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_number_rule),
        cmocka_unit_test(test_a_120_ms_model),
        cmocka_unit_test(test_an_asymmetric_interval_shows_both_sides),
        cmocka_unit_test(test_extremes_have_no_exponent),
        cmocka_unit_test(test_cost_bound_and_budget_lines),
        cmocka_unit_test(test_a_comma_locale_changes_no_number),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
