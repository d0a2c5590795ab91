/* test_capacity.c — the capacity search (rpxprof/capacity.h) without a server:
 * the one-sided order-statistic bound against the binomial by hand, the
 * objectives' grammar, and the search on a simulated one-worker queue with
 * constant arrivals and a fixed service time S (D/D/1): below 1/S every
 * request waits S; above, request k waits S + k (S - 1/r). With p99 < X, the
 * largest rate that passes over n requests is 1/S up to the drift the queue
 * builds before the bound's rank j: 1 / (S - (X - S) / j); the truth band is
 * [1/S, that] and the found capacity and its interval must meet it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpxprof/capacity.h"

static void min_requests_and_rank(void **state)
{
    (void)state;
    /* 1 - q^n >= 0.95: p99 needs 299 (0.99^298 = 0.0501, 0.99^299 = 0.0496), p95 59, p50 5 */
    assert_int_equal(rpx_capacity_min_requests(0.99, 0.95), 299);
    assert_int_equal(rpx_capacity_min_requests(0.95, 0.95), 59);
    assert_int_equal(rpx_capacity_min_requests(0.5, 0.95), 5);
    /* fewer: no bound; exactly the minimum: the maximum is the bound */
    assert_int_equal(rpx_capacity_upper_rank(298, 0.99, 0.95), 0);
    assert_int_equal(rpx_capacity_upper_rank(299, 0.99, 0.95), 299);
    /* p50 of 5: P(B <= 4) = 1 - 1/32 = 0.969 >= 0.95 and P(B <= 3) = 0.8125: rank 5 */
    assert_int_equal(rpx_capacity_upper_rank(5, 0.5, 0.95), 5);
    /* p50 of 20: P(B <= 13) = 0.9423, P(B <= 14) = 0.9793: rank 15 */
    assert_int_equal(rpx_capacity_upper_rank(20, 0.5, 0.95), 15);
    /* p99 of 1000: B ~ Bin(1000, 0.99); P(B <= 994) = 0.9329 < 0.95 <= P(B <= 995) = 0.9707 */
    assert_int_equal(rpx_capacity_upper_rank(1000, 0.99, 0.95), 996);
}

static void slo_grammar(void **state)
{
    rpx_capacity_slo s;
    rpx_error err;
    (void)state;
    memset(&err, 0, sizeof err);
    assert_int_equal(rpx_capacity_slo_parse("p99<50ms,ttft_p99<500ms,tpot_p99<50,e2e_p95<2s", &s, &err), 0);
    assert_int_equal(s.n, 4);
    assert_int_equal(s.obj[0].metric, RPX_SLO_LATENCY);
    assert_true(fabs(s.obj[0].q - 0.99) < 1e-12 && s.obj[0].limit_ms == 50);
    assert_int_equal(s.obj[1].metric, RPX_SLO_TTFT);
    assert_int_equal(s.obj[2].metric, RPX_SLO_TPOT);
    assert_true(s.obj[2].limit_ms == 50);
    assert_int_equal(s.obj[3].metric, RPX_SLO_E2E);
    assert_true(fabs(s.obj[3].q - 0.95) < 1e-12 && s.obj[3].limit_ms == 2000);
    assert_string_equal(s.obj[0].text, "p99<50ms");
    assert_int_equal(rpx_capacity_slo_parse("p99=50ms", &s, &err), RPX_EUSAGE);
    assert_non_null(strstr(err.message, "NAME<DURATION"));
    assert_int_equal(rpx_capacity_slo_parse("p100<5ms", &s, &err), RPX_EUSAGE);
    assert_int_equal(rpx_capacity_slo_parse("p99<5parsecs", &s, &err), RPX_EUSAGE);
    assert_int_equal(rpx_capacity_slo_parse("", &s, &err), RPX_EUSAGE);
}

/* The simulated queue: S = 10 ms; a run at rate r for d seconds is a report with
 * latency_samples_ms and a valid send_delay block. Above `client_max` the client
 * falls behind (invalid). */
typedef struct sim {
    double service_ms, client_max;
    int runs;
    double rates[64];
} sim;

static int sim_run(void *ctx, double rate, double duration_s, json_t **report, rpx_error *err)
{
    sim *q = ctx;
    long n = lround(rate * duration_s), k;
    json_t *r = json_object(), *a = json_array(), *http = json_object(), *load = json_object(),
           *sd = json_object(), *stream = json_object(), *ttft = json_array();
    double gap = 1e3 / rate, finish = 0;
    (void)err;
    if (q->runs < 64) q->rates[q->runs] = rate;
    q->runs++;
    for (k = 0; k < n; k++) { /* D/D/1: finish_k = max(arrival_k, finish_{k-1}) + S */
        double arrival = (double)k * gap;
        finish = fmax(arrival, finish) + q->service_ms;
        json_array_append_new(a, json_real(finish - arrival));
        json_array_append_new(ttft, json_real(finish - arrival - 5.0)); /* the first token */
    }
    json_object_set_new(r, "status", json_string("complete"));
    json_object_set_new(r, "latency_samples_ms", a);
    json_object_set_new(sd, "saturated", json_false());
    json_object_set_new(sd, "p99_us", json_real(rate > q->client_max ? 20000.0 : 20.0));
    json_object_set_new(load, "send_delay", sd);
    json_object_set_new(http, "load", load);
    json_object_set_new(stream, "ttft_samples_ms", ttft);
    json_object_set_new(http, "streaming", stream);
    json_object_set_new(r, "http", http);
    *report = r;
    return 0;
}

static void search_finds_the_queue_capacity(void **state)
{
    rpx_capacity_opts o;
    rpx_error err;
    sim q = {10.0, 1e9, 0, {0}};
    json_t *c = NULL, *st;
    double lo, hi, truth = 100.0, band_hi;
    size_t i, nmax = 0;
    (void)state;
    memset(&err, 0, sizeof err);
    rpx_capacity_opts_init(&o);
    assert_int_equal(rpx_capacity_slo_parse("p99<50ms", &o.slo, &err), 0);
    o.start_rate = 7;
    assert_int_equal(rpx_capacity_search(&o, sim_run, &q, &c, &err), 0);
    lo = json_number_value(json_array_get(json_object_get(c, "ci"), 0));
    hi = json_number_value(json_array_get(json_object_get(c, "ci"), 1));
    assert_true(json_number_value(json_object_get(c, "rate")) == lo);
    json_array_foreach(json_object_get(c, "search"), i, st) {
        size_t n = (size_t)json_integer_value(
            json_object_get(json_array_get(json_object_get(st, "objectives"), 0), "n"));
        assert_true(n >= 299); /* never decided from fewer than a p99 needs */
        if (n > nmax) nmax = n;
    }
    band_hi = 1e3 / (10.0 - (50.0 - 10.0) / (double)nmax);
    assert_true(fabs(lo - truth) / truth <= 0.10);
    assert_true(lo <= band_hi && hi >= truth); /* the interval meets the truth band */
    assert_true((hi - lo) / lo <= o.precision + 1e-12);
    assert_int_equal(json_array_size(json_object_get(c, "verified_runs")), 2);
    json_array_foreach(json_object_get(c, "verified_runs"), i, st) {
        assert_true(json_is_true(json_object_get(st, "pass")));
        assert_true(json_number_value(json_object_get(st, "rate")) == lo);
    }
    assert_non_null(strstr(json_string_value(json_object_get(c, "sentence")), "sustains"));
    assert_int_equal(json_integer_value(json_object_get(c, "min_requests")), 299);
    json_decref(c);
}

/* ttft_p99 from http.streaming.ttft_samples_ms (here latency - 5 ms): 'ttft_p99<45ms' and
 * 'p99<50ms' are the same objective on this queue, so the same capacity */
static void ttft_objective_from_the_stream(void **state)
{
    rpx_capacity_opts o;
    rpx_error err;
    sim q = {10.0, 1e9, 0, {0}};
    json_t *c = NULL, *st;
    (void)state;
    memset(&err, 0, sizeof err);
    rpx_capacity_opts_init(&o);
    assert_int_equal(rpx_capacity_slo_parse("ttft_p99<45ms", &o.slo, &err), 0);
    o.start_rate = 7;
    assert_int_equal(rpx_capacity_search(&o, sim_run, &q, &c, &err), 0);
    assert_true(fabs(json_number_value(json_object_get(c, "rate")) - 100.0) <= 10.0);
    st = json_array_get(json_object_get(json_array_get(json_object_get(c, "search"), 0), "objectives"), 0);
    assert_true(json_integer_value(json_object_get(st, "n")) >= 299);
    assert_non_null(strstr(json_string_value(json_object_get(c, "sentence")), "ttft p99 < 45 ms"));
    json_decref(c);
}

static void invalid_runs_are_never_the_capacity(void **state)
{
    rpx_capacity_opts o;
    rpx_error err;
    sim q = {10.0, 60.0, 0, {0}}; /* the client cannot send above 60/s */
    json_t *c = NULL, *st;
    size_t i;
    int invalid = 0;
    (void)state;
    memset(&err, 0, sizeof err);
    rpx_capacity_opts_init(&o);
    assert_int_equal(rpx_capacity_slo_parse("p99<50ms", &o.slo, &err), 0);
    o.start_rate = 40;
    assert_int_equal(rpx_capacity_search(&o, sim_run, &q, &c, &err), 0);
    assert_true(json_number_value(json_object_get(c, "rate")) <= 60.0);
    json_array_foreach(json_object_get(c, "search"), i, st) {
        if (json_is_false(json_object_get(st, "valid"))) {
            invalid++;
            assert_true(json_is_false(json_object_get(st, "pass")));
            assert_non_null(strstr(json_string_value(json_object_get(st, "invalid_reason")),
                                   "behind its schedule"));
        }
    }
    assert_true(invalid > 0);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(min_requests_and_rank),
        cmocka_unit_test(slo_grammar),
        cmocka_unit_test(search_finds_the_queue_capacity),
        cmocka_unit_test(ttft_objective_from_the_stream),
        cmocka_unit_test(invalid_runs_are_never_the_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
