/* Unit tests for the statistics across sessions (rpxprof/history_check.h,
 * src/compare/history_check.c, changepoints.c, session_noise.c;
 * docs/statistics.md, "Across sessions"): synthetic histories whose session
 * effects are whole sessions resampled from this machine kind's measured
 * session noise (tests/fixtures/demo-sessions.json, each session's processes
 * relative to its series' median level): a 3 % step, A/A histories, a single
 * spike, and the newest session's verdict with the confirm rule, with the
 * rates docs/statistics.md reports. Deterministic (fixed seeds). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "rpxprof/history_check.h"

#ifndef RPX_SOURCE_DIR
#define RPX_SOURCE_DIR "."
#endif

#define MAXP 8
/* the fixture's sessions: each process's log p50 minus its series' median level */
static double noise[64][MAXP];
static size_t noise_k[64], n_noise;

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_dbl);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

static int load_noise(void **st)
{
    json_error_t je;
    json_t *d = json_load_file(RPX_SOURCE_DIR "/tests/fixtures/demo-sessions.json", 0, &je), *ser;
    size_t i, j, p;
    (void)st;
    if (!d) return -1;
    n_noise = 0;
    json_array_foreach(json_object_get(d, "series"), i, ser) {
        const json_t *ss = json_object_get(ser, "sessions");
        double lv[64], c;
        size_t first = n_noise;
        for (j = 0; j < json_array_size(ss) && n_noise < 64; j++, n_noise++) {
            const json_t *pp = json_object_get(json_array_get(ss, j), "process_p50_ms");
            double tmp[MAXP];
            noise_k[n_noise] = json_array_size(pp) < MAXP ? json_array_size(pp) : MAXP;
            for (p = 0; p < noise_k[n_noise]; p++) tmp[p] = noise[n_noise][p] = log(json_number_value(json_array_get(pp, p)));
            lv[j] = median(tmp, noise_k[n_noise]);
        }
        c = median(lv, n_noise - first);
        for (j = first; j < n_noise; j++)
            for (p = 0; p < noise_k[j]; p++) noise[j][p] -= c;
    }
    json_decref(d);
    return n_noise == 32 ? 0 : -1;
}

static unsigned long long rs = 1;
static unsigned long long rnd(void)
{
    unsigned long long z = (rs += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* One synthetic session: a fixture session drawn whole, times `factor`, at 0.07 ms */
static json_t *session(size_t i, double factor, const char *commit)
{
    size_t s = (size_t)(rnd() % n_noise), p;
    char id[32];
    json_t *pp = json_array(), *o;
    double tmp[MAXP];
    for (p = 0; p < noise_k[s]; p++) {
        tmp[p] = 0.07 * factor * exp(noise[s][p]);
        json_array_append_new(pp, json_real(tmp[p]));
    }
    snprintf(id, sizeof id, "s%04zu", i);
    o = json_pack("{ss ss so sf sI}", "id", id, "commit", commit, "process_p50_ms", pp, "p50_ms",
                  median(tmp, noise_k[s]), "processes", (json_int_t)noise_k[s]);
    return o;
}

static json_t *series_new(void)
{
    return json_pack("{s{ss} s{ss} s[]}", "benchmark", "name", "demo", "fingerprint", "digest", "0123456789abcdef",
                     "sessions");
}

static void add(json_t *ser, double factor, const char *commit)
{
    json_t *ss = json_object_get(ser, "sessions");
    json_array_append_new(ss, session(json_array_size(ss), factor, commit));
}

static json_t *check(const json_t *ser, unsigned confirm, unsigned long long seed)
{
    rpx_history_check_opts o;
    rpx_error err = {0};
    json_t *out = NULL;
    rpx_history_check_defaults(&o);
    o.confirm = confirm;
    o.seed = seed;
    assert_int_equal(rpx_history_check(ser, &o, &out, &err), 0);
    return out;
}

static const char *verdict_of(const json_t *out)
{
    return json_string_value(json_object_get(json_object_get(out, "newest"), "verdict"));
}

/* Wilson 95 % interval of k of n */
static void wilson(size_t k, size_t n, double *lo, double *hi)
{
    double z = 1.959964, p = (double)k / (double)n, d = 1 + z * z / (double)n;
    double c = (p + z * z / (2.0 * (double)n)) / d, h = z * sqrt(p * (1 - p) / (double)n + z * z / (4.0 * (double)n * (double)n)) / d;
    *lo = c - h, *hi = c + h;
}

/* A 3 % step at session 40 of 60, over 50 synthetic histories: one change
 * in each, at 40 +- 1 in >= 47 of them (a history whose sessions before the
 * step happen to draw several slow ones in a row moves it earlier), its
 * ratio interval holding 1.03 in >= 47, between commits aaa and bbb when at
 * 40, p < 0.05. */
#define STEP_HISTORIES 50
static void test_step_of_3_percent_is_found_at_40(void **st)
{
    int h, at40 = 0, near = 0, holds = 0;
    (void)st;
    for (h = 0; h < STEP_HISTORIES; h++) {
        json_t *ser = series_new(), *out, *c;
        int i;
        long at;
        double lo, hi;
        rs = 1000 + (unsigned long long)h;
        for (i = 0; i < 60; i++) add(ser, i < 40 ? 1.0 : 1.03, i < 40 ? "aaa" : "bbb");
        out = check(ser, 0, 7);
        c = json_object_get(out, "changes");
        assert_int_equal(json_array_size(c), 1);
        c = json_array_get(c, 0);
        at = (long)json_integer_value(json_object_get(c, "index"));
        lo = json_number_value(json_array_get(json_object_get(c, "ratio_ci"), 0));
        hi = json_number_value(json_array_get(json_object_get(c, "ratio_ci"), 1));
        near += labs(at - 40) <= 1;
        holds += lo <= 1.03 && 1.03 <= hi;
        if (labs(at - 40) > 1 || !(lo <= 1.03 && 1.03 <= hi))
            print_message("history %d: change at %ld, ratio %.4f [%.4f, %.4f]\n", h, at,
                          json_number_value(json_object_get(c, "ratio")), lo, hi);
        assert_true(json_number_value(json_object_get(c, "p_value")) < 0.05);
        if (at == 40) {
            assert_string_equal(json_string_value(json_object_get(c, "before_commit")), "aaa");
            assert_string_equal(json_string_value(json_object_get(c, "after_commit")), "bbb");
            at40++;
        }
        json_decref(out);
        json_decref(ser);
    }
    print_message("3 %% step at 40 of 60: %d/%d found at 40 +- 1 (%d at 40), the interval holding 1.03 in %d/%d\n",
                  near, STEP_HISTORIES, at40, holds, STEP_HISTORIES);
    assert_true(near >= STEP_HISTORIES - 3);
    assert_true(holds >= STEP_HISTORIES - 3);
}

/* 100 A/A sessions, over 20 synthetic histories: no change */
static void test_no_change_in_100_aa_sessions(void **st)
{
    int h, i;
    (void)st;
    for (h = 0; h < 20; h++) {
        json_t *ser = series_new(), *out;
        rs = 2000 + (unsigned long long)h;
        for (i = 0; i < 100; i++) add(ser, 1.0, "aaa");
        out = check(ser, 0, 11);
        assert_int_equal(json_array_size(json_object_get(out, "changes")), 0);
        json_decref(out);
        json_decref(ser);
    }
}

/* A single session 20 % slow (at the start, the middle, the end), in 60
 * otherwise A/A sessions: no change point */
static void test_a_single_spike_is_no_change(void **st)
{
    static const int at[] = {3, 30, 55, 59};
    size_t a;
    int h, i;
    (void)st;
    for (a = 0; a < sizeof at / sizeof at[0]; a++)
        for (h = 0; h < 5; h++) {
            json_t *ser = series_new(), *out;
            rs = 3000 + 10 * a + (unsigned long long)h;
            for (i = 0; i < 60; i++) add(ser, i == at[a] ? 1.2 : 1.0, "aaa");
            out = check(ser, 0, 13);
            assert_int_equal(json_array_size(json_object_get(out, "changes")), 0);
            json_decref(out);
            json_decref(ser);
        }
}

/* The CI gate's procedure with --confirm N: check; while the newest looks
 * slower and says how many sessions more would decide (within what is left
 * of N), run them (more sessions of the head, the same commit) and check
 * again. Returns the
 * final verdict's first letter ('=' for same) and adds the sessions run to *ran. */
static char gate(size_t baseline, double factor, unsigned confirm, unsigned long long seed, size_t *ran)
{
    json_t *ser = series_new(), *out;
    size_t i;
    const json_t *need;
    unsigned used = 0;
    char v;
    for (i = 0; i < baseline; i++) add(ser, 1.0, "base");
    add(ser, factor, "head");
    *ran += 1;
    out = check(ser, confirm, seed);
    need = json_object_get(json_object_get(out, "newest"), "sessions_needed");
    while (json_is_integer(need) && json_integer_value(need) <= (json_int_t)(confirm - used)) {
        json_int_t k;
        for (k = 0; k < json_integer_value(need); k++) add(ser, factor, "head");
        *ran += (size_t)json_integer_value(need);
        used += (unsigned)json_integer_value(need);
        json_decref(out);
        out = check(ser, confirm, seed);
        need = json_object_get(json_object_get(out, "newest"), "sessions_needed");
    }
    v = strcmp(verdict_of(out), "same") == 0 ? '=' : verdict_of(out)[0];
    json_decref(out);
    json_decref(ser);
    return v;
}

#define TRIALS 400

/* A/A heads (the newest session of the same code as the baseline): not
 * slower or faster in >= 95 % of trials (the target), with 3, 5 and 20
 * baseline sessions and --confirm 3. Asserted at <= 2.5 %: the confirm rule's
 * null counts only the sessions after the one that asked (without that
 * correction 2.0-3.5 % here, with upper bounds near 6 %). */
static void test_newest_on_aa_heads_is_rarely_a_verdict(void **st)
{
    static const size_t base[] = {3, 5, 20};
    size_t b, t;
    (void)st;
    for (b = 0; b < 3; b++) {
        size_t wrong = 0, ran = 0;
        double lo, hi;
        rs = 4000 + b;
        for (t = 0; t < TRIALS; t++) {
            char v = gate(base[b], 1.0, 3, 100 + t, &ran);
            wrong += v == 's' || v == 'f';
        }
        wilson(wrong, TRIALS, &lo, &hi);
        print_message("A/A heads, %zu baseline sessions, --confirm 3: %zu/%d slower or faster (%.1f %%; 95 %% CI "
                      "%.1f-%.1f %%), %.2f sessions a check\n", base[b], wrong, TRIALS, 100.0 * wrong / TRIALS,
                      100 * lo, 100 * hi, (double)ran / TRIALS);
        assert_true(wrong <= TRIALS / 40);
    }
}

/* A head 5 % slower, >= 3 baseline sessions, --confirm 3: called slower in
 * >= 90 % of trials */
static void test_newest_5_percent_slower_is_called_slower(void **st)
{
    static const size_t base[] = {3, 5, 20};
    size_t b, t;
    (void)st;
    for (b = 0; b < 3; b++) {
        size_t slower = 0, ran = 0;
        double lo, hi;
        rs = 5000 + b;
        for (t = 0; t < TRIALS; t++) slower += gate(base[b], 1.05, 3, 200 + t, &ran) == 's';
        wilson(slower, TRIALS, &lo, &hi);
        print_message("5 %% slower heads, %zu baseline sessions, --confirm 3: %zu/%d slower (%.1f %%; 95 %% CI "
                      "%.1f-%.1f %%), %.2f sessions a check\n", base[b], slower, TRIALS, 100.0 * slower / TRIALS,
                      100 * lo, 100 * hi, (double)ran / TRIALS);
        assert_true(slower * 10 >= TRIALS * 9);
    }
}

/* The spread of the fixture's three series (the machine's record): the
 * pairwise-quantile sigma that compare's default allowance (session_noise.h,
 * 0.0393) is taken from; one series alone is "series"; too few sessions give
 * "none" with sigma null. */
static void test_spread_of_the_measured_sessions(void **st)
{
    json_error_t je;
    json_t *d = json_load_file(RPX_SOURCE_DIR "/tests/fixtures/demo-sessions.json", 0, &je), *sp = NULL, *one;
    rpx_error err = {0};
    double sig;
    (void)st;
    assert_non_null(d);
    assert_int_equal(rpx_between_session_spread(json_object_get(d, "series"), &sp, &err), 0);
    assert_string_equal(json_string_value(json_object_get(sp, "source")), "machine");
    assert_int_equal(json_integer_value(json_object_get(sp, "sessions")), 32);
    sig = json_number_value(json_object_get(sp, "sigma_between_log"));
    print_message("the fixture's sigma_between_log %.4f, df %lld\n", sig, (long long)json_integer_value(json_object_get(sp, "df")));
    assert_true(fabs(sig - 0.0393) < 0.0015);
    assert_int_equal(json_integer_value(json_object_get(sp, "df")), 29);
    json_decref(sp);
    assert_int_equal(rpx_between_session_spread(json_array_get(json_object_get(d, "series"), 2), &sp, &err), 0);
    assert_string_equal(json_string_value(json_object_get(sp, "source")), "series");
    json_decref(sp);
    /* four sessions run back to back, alike to 0.02 %: too few to show the drift,
     * so the estimate is pooled with the default allowance's 29 df */
    {
        json_t *few = series_new();
        int i;
        for (i = 0; i < 4; i++) add(few, 1.0 + 0.0002 * i, "a");
        assert_int_equal(rpx_between_session_spread(few, &sp, &err), 0);
        sig = json_number_value(json_object_get(sp, "sigma_between_log"));
        print_message("four alike sessions: sigma_between_log %.4f, df %lld\n", sig,
                      (long long)json_integer_value(json_object_get(sp, "df")));
        assert_true(sig > 0.03);
        assert_int_equal(json_integer_value(json_object_get(sp, "df")), 3 + 29);
        json_decref(sp);
        json_decref(few);
    }
    one = json_pack("{s[{ss sf}]}", "sessions", "id", "x", "p50_ms", 0.07);
    assert_int_equal(rpx_between_session_spread(one, &sp, &err), 0);
    assert_string_equal(json_string_value(json_object_get(sp, "source")), "none");
    assert_true(json_is_null(json_object_get(sp, "sigma_between_log")));
    json_decref(sp);
    json_decref(one);
    json_decref(d);
}

/* Edge cases: no session (newest null), one session (nothing to compare
 * with: inconclusive), a crashed session (left out, counted), a session with
 * a p50 that is not a number (refused,
 * naming the field), a 20 % slower head of one session without --confirm
 * decided by its interval (beyond the largest bad session measured) */
static void test_edges(void **st)
{
    json_t *ser = series_new(), *out;
    rpx_history_check_opts o;
    rpx_error err = {0};
    int i;
    (void)st;
    out = check(ser, 0, 1);
    assert_true(json_is_null(json_object_get(out, "newest")));
    assert_int_equal(json_integer_value(json_object_get(out, "sessions")), 0);
    json_decref(out);
    rs = 77;
    add(ser, 1.0, "a");
    out = check(ser, 0, 1);
    assert_string_equal(verdict_of(out), "inconclusive");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(out, "newest"), "baseline_sessions")), 0);
    json_decref(out);
    for (i = 0; i < 9; i++) add(ser, 1.0, "a");
    add(ser, 1.2, "b");
    out = check(ser, 0, 1);
    assert_string_equal(verdict_of(out), "slower");
    json_decref(out);
    out = check(ser, 2, 1);  /* with --confirm, one session asks for another first */
    assert_string_equal(verdict_of(out), "inconclusive");
    assert_true(json_integer_value(json_object_get(json_object_get(out, "newest"), "sessions_needed")) >= 1);
    json_decref(out);
    /* a crashed session (no numbers) is left out, and counted */
    json_array_insert_new(json_object_get(ser, "sessions"), 5,
                          json_pack("{ss ss ss sn}", "id", "crashed", "commit", "a", "status", "crashed", "p50_ms"));
    out = check(ser, 0, 1);
    assert_int_equal(json_integer_value(json_object_get(out, "sessions")), 12);
    assert_int_equal(json_integer_value(json_object_get(out, "sessions_used")), 11);
    assert_string_equal(verdict_of(out), "slower");
    json_decref(out);
    json_object_set_new(json_array_get(json_object_get(ser, "sessions"), 3), "process_p50_ms", json_pack("[fs]", 0.07, "x"));
    rpx_history_check_defaults(&o);
    out = NULL;
    assert_int_equal(rpx_history_check(ser, &o, &out, &err), RPX_EINVAL);
    assert_null(out);
    assert_non_null(strstr(err.message, "sessions[3].process_p50_ms[1]"));
    json_decref(ser);
}

/* issue 36 review: the default confirm is the calibration's 3; the head is
 * every trailing session of the newest commit, with confirm 0 too; the why
 * text says how many sessions to record (history check runs nothing) */
static void test_defaults_head_and_why(void **st)
{
    json_t *ser = series_new(), *out;
    const json_t *nw;
    rpx_history_check_opts o;
    int i;
    (void)st;
    rpx_history_check_defaults(&o);
    assert_int_equal(o.confirm, 3);
    rs = 91;
    for (i = 0; i < 10; i++) add(ser, 1.0, "a");
    add(ser, 1.0, "b");
    add(ser, 1.0, "b");
    out = check(ser, 0, 1);
    nw = json_object_get(out, "newest");
    assert_int_equal(json_integer_value(json_object_get(nw, "head_sessions")), 2);
    assert_int_equal(json_integer_value(json_object_get(nw, "baseline_sessions")), 10);
    json_decref(out);
    /* a model rebuilt in a dirty checkout: the same commit, another model digest, is a
     * new version: the head is its one session, the commit's earlier sessions baseline */
    {
        json_t *ss = json_object_get(ser, "sessions");
        size_t k;
        for (k = 0; k < json_array_size(ss); k++)
            json_object_set_new(json_array_get(ss, k), "version",
                                json_pack("{ss}", "model_sha256", k + 1 < json_array_size(ss) ? "x" : "y"));
        out = check(ser, 0, 1);
        nw = json_object_get(out, "newest");
        assert_int_equal(json_integer_value(json_object_get(nw, "head_sessions")), 1);
        assert_int_equal(json_integer_value(json_object_get(nw, "baseline_sessions")), 11);
        json_decref(out);
    }
    json_decref(ser);
    ser = series_new();
    rs = 77;
    for (i = 0; i < 10; i++) add(ser, 1.0, "a");
    add(ser, 1.2, "b");
    out = check(ser, 2, 1);
    nw = json_object_get(out, "newest");
    print_message("why: %s\n", json_string_value(json_object_get(nw, "why")));
    assert_string_equal(verdict_of(out), "inconclusive");
    {
        char want[96];
        snprintf(want, sizeof want, "record %lld more session",
                 (long long)json_integer_value(json_object_get(nw, "sessions_needed")));
        assert_non_null(strstr(json_string_value(json_object_get(nw, "why")), want));
    }
    assert_null(strstr(json_string_value(json_object_get(nw, "why")), "runs them)"));
    assert_null(strstr(json_string_value(json_object_get(nw, "why")), "0000"));
    json_decref(out);
    json_decref(ser);
}

/* issue 36 review: check's sigma_between_log and compare's spread are one
 * number on one series (a 6-session history with a loaded session), and the
 * decidable change is compare's rule with it */
static void test_check_spread_is_compares(void **st)
{
    json_t *ser = series_new(), *out, *sp = NULL;
    rpx_error err = {0};
    double a, b, dec;
    int i;
    (void)st;
    rs = 606;
    for (i = 0; i < 5; i++) add(ser, i == 2 ? 1.25 : 1.0, "a");
    add(ser, 1.0, "b");
    out = check(ser, 3, 1);
    assert_int_equal(rpx_between_session_spread(ser, &sp, &err), 0);
    a = json_number_value(json_object_get(json_object_get(out, "between_session"), "sigma_between_log"));
    b = json_number_value(json_object_get(sp, "sigma_between_log"));
    dec = json_number_value(json_object_get(json_object_get(out, "newest"), "decidable_change"));
    print_message("check %.4f, compare %.4f, decidable %.4f\n", a, b, dec);
    assert_true(fabs(a - b) < 1e-12);
    /* head of 1 against 5: t(df) sigma sqrt(1 + 1/5) beyond 1 % */
    assert_true(dec > exp(log(1.01) + 1.9 * b * sqrt(1.2)) - 1 && dec < exp(log(1.01) + 2.1 * b * sqrt(1.2)) - 1);
    /* a history of one commit has no earlier commit to compare with */
    add(ser, 1.0, "a");
    json_array_remove(json_object_get(ser, "sessions"), 5);
    json_decref(out);
    out = check(ser, 3, 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(out, "newest"), "head_sessions")), 6);
    assert_string_equal(verdict_of(out), "inconclusive");
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(out, "newest"), "why")), "commit"));
    json_decref(sp);
    json_decref(out);
    json_decref(ser);
}

/* issue 36 review: a change's interval holds the between-session spread as
 * the newest verdict's does (6 + 6 sessions, a 3 % step: the two intervals
 * alike in width), and its text counts sessions from 1 */
static void test_change_interval_holds_the_spread(void **st)
{
    size_t h;
    (void)st;
    for (h = 0; h < 5; h++) {
        json_t *ser = series_new(), *out;
        const json_t *c, *nw;
        int i;
        rs = 700 + h;
        for (i = 0; i < 6; i++) add(ser, 1.0, "aaa");
        for (i = 0; i < 6; i++) add(ser, 1.03, "bbb");
        rpx_history_check_opts o;
        rpx_error err = {0};
        rpx_history_check_defaults(&o);
        o.min_segment = 3;
        out = NULL;
        assert_int_equal(rpx_history_check(ser, &o, &out, &err), 0);
        nw = json_object_get(out, "newest");
        c = json_array_get(json_object_get(out, "changes"), 0);
        if (c) {
            const json_t *ci = json_object_get(c, "ratio_ci"), *ni = json_object_get(nw, "ratio_ci");
            double wc = log(json_number_value(json_array_get(ci, 1)) / json_number_value(json_array_get(ci, 0)));
            double wn = log(json_number_value(json_array_get(ni, 1)) / json_number_value(json_array_get(ni, 0)));
            print_message("change %s: width %.4f, newest's %.4f\n", json_string_value(json_object_get(c, "text")), wc, wn);
            assert_true(wc > 0.5 * wn);
            if (json_integer_value(json_object_get(c, "index")) == 6)
                assert_non_null(strstr(json_string_value(json_object_get(c, "text")), "between session 6 and 7"));
        }
        json_decref(out);
        json_decref(ser);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_of_3_percent_is_found_at_40),
        cmocka_unit_test(test_no_change_in_100_aa_sessions),
        cmocka_unit_test(test_a_single_spike_is_no_change),
        cmocka_unit_test(test_newest_on_aa_heads_is_rarely_a_verdict),
        cmocka_unit_test(test_newest_5_percent_slower_is_called_slower),
        cmocka_unit_test(test_spread_of_the_measured_sessions),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_defaults_head_and_why),
        cmocka_unit_test(test_check_spread_is_compares),
        cmocka_unit_test(test_change_interval_holds_the_spread),
    };
    return cmocka_run_group_tests(tests, load_noise, NULL);
}
