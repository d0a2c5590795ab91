/* test_latency.c — the latency profiler: warmup rules, batches, statistics,
 * and every statistic checked against numpy itself on random sample sets.
 * numpy is a required test dependency: without $RPX_PYTHON or numpy the
 * comparison fails rather than skips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "rpxprof/latency.h"

/* ---- counting allocator: proves reserve means no allocation ------------- */
#include "count_allocs.h"

/* ---- helpers ------------------------------------------------------------ */

static rpx_latency *new_lat(long warmup)
{
    rpx_latency *lat = NULL;
    assert_int_equal(rpx_latency_create(warmup, &lat), 0);
    assert_non_null(lat);
    return lat;
}

static rpx_latency_stats stats_of(const rpx_latency *lat)
{
    rpx_latency_stats st;
    assert_int_equal(rpx_latency_stats_get(lat, &st), 0);
    return st;
}

/* Equal as doubles, NaN equal to NaN, with the values printed on failure. */
static void check_exact(const char *what, double got, double want)
{
    if (isnan(got) && isnan(want)) return;
    if (got != want) {
        fail_msg("%s: got %.17g, want %.17g (diff %.3g)", what, got, want, got - want);
    }
}

static void check_close(const char *what, double got, double want, double rel)
{
    if (isnan(got) && isnan(want)) return;
    if (!(fabs(got - want) <= rel * fabs(want))) {
        fail_msg("%s: got %.17g, want %.17g (rel diff %.3g > %.1g)", what, got, want,
                 fabs(got - want) / fabs(want), rel);
    }
}

/* ---- README example and basics --------------------------------------------- */

static void test_readme_example(void **state)
{
    (void)state;
    rpx_latency *lat = new_lat(0);
    assert_int_equal(rpx_latency_add_seconds(lat, 0.010), 0);
    assert_int_equal(rpx_latency_add_seconds(lat, 0.020), 0);
    /* seconds * 1e9 lands exactly on the nanosecond values. */
    check_exact("sample 0", rpx_latency_samples_ns(lat)[0], 1e7);
    check_exact("sample 1", rpx_latency_samples_ns(lat)[1], 2e7);
    rpx_latency_stats st = stats_of(lat);
    assert_int_equal(st.available, 1);
    assert_int_equal(st.n, 2);
    check_exact("p50", st.p50_ms, 15.0);
    check_exact("mean", st.mean_ms, 15.0);
    check_exact("min", st.min_ms, 10.0);
    check_exact("max", st.max_ms, 20.0);
    /* numpy: np.percentile([10, 20], [95, 99]) = 19.5, 19.9 */
    check_exact("p95", st.p95_ms, 19.5);
    check_close("p99", st.p99_ms, 19.9, 1e-15);
    check_close("std", st.std_ms, sqrt(50.0), 1e-15);
    rpx_latency_destroy(lat);
}

static void test_decimal_seconds_are_exact(void **state)
{
    (void)state;
    /* Every whole millisecond up to 10 s and microsecond up to 0.1 s converts
     * to an exact ns value (0.067 * 1e9 alone gives 67000000.00000001). */
    rpx_latency *lat = new_lat(0);
    size_t k = 0;
    for (int ms = 0; ms <= 10000; ms++, k++) {
        assert_int_equal(rpx_latency_add_seconds(lat, ms / 1000.0), 0);
        if (rpx_latency_samples_ns(lat)[k] != (double)ms * 1e6)
            fail_msg("%d ms -> %.17g ns", ms, rpx_latency_samples_ns(lat)[k]);
    }
    for (int us = 0; us <= 100000; us++, k++) {
        assert_int_equal(rpx_latency_add_seconds(lat, us / 1e6), 0);
        if (rpx_latency_samples_ns(lat)[k] != (double)us * 1e3)
            fail_msg("%d us -> %.17g ns", us, rpx_latency_samples_ns(lat)[k]);
    }
    rpx_latency_destroy(lat);

    /* 67 ms and 268 ms: the README-style report reads exact milliseconds. */
    lat = new_lat(0);
    assert_int_equal(rpx_latency_add_seconds(lat, 0.067), 0);
    assert_int_equal(rpx_latency_add_seconds(lat, 0.268), 0);
    rpx_latency_stats st = stats_of(lat);
    check_exact("min", st.min_ms, 67.0);
    check_exact("max", st.max_ms, 268.0);
    rpx_latency_destroy(lat);
}

static void test_empty_is_unavailable(void **state)
{
    (void)state;
    rpx_latency *lat = new_lat(3);
    rpx_latency_stats st = stats_of(lat);
    assert_int_equal(st.available, 0);
    assert_int_equal(st.n, 0);
    assert_true(isnan(st.p50_ms) && isnan(st.p95_ms) && isnan(st.p99_ms));
    assert_true(isnan(st.mean_ms) && isnan(st.min_ms) && isnan(st.max_ms));
    assert_true(isnan(st.std_ms));
    assert_int_equal(rpx_latency_count(lat), 0);
    assert_int_equal(rpx_latency_first_used(lat), 0);
    rpx_latency_destroy(lat);
}

static void test_warmup_excluded(void **state)
{
    (void)state;
    rpx_latency *lat = new_lat(2);
    assert_int_equal(rpx_latency_add_ns(lat, 9e9), 0); /* warmup: slow first calls */
    assert_int_equal(rpx_latency_add_ns(lat, 8e9), 0);
    assert_int_equal(rpx_latency_add_ns(lat, 3e6), 0);
    assert_int_equal(rpx_latency_add_ns(lat, 1e6), 0);
    assert_int_equal(rpx_latency_add_ns(lat, 2e6), 0);
    assert_int_equal(rpx_latency_count(lat), 5);
    assert_int_equal(rpx_latency_first_used(lat), 2);
    /* Every sample is kept, in order, warmup included. */
    const double *s = rpx_latency_samples_ns(lat);
    check_exact("s0", s[0], 9e9);
    check_exact("s4", s[4], 2e6);
    rpx_latency_stats st = stats_of(lat);
    assert_int_equal(st.available, 1);
    assert_int_equal(st.n, 3);
    check_exact("min", st.min_ms, 1.0);
    check_exact("max", st.max_ms, 3.0);
    check_exact("p50", st.p50_ms, 2.0);
    check_exact("mean", st.mean_ms, 2.0);
    check_exact("std", st.std_ms, 1.0);
    rpx_latency_destroy(lat);
}

static void test_warmup_leaves_none_uses_all(void **state)
{
    (void)state;
    /* More warmup than samples, and exactly as many: all samples are used. */
    for (long warmup = 3; warmup <= 5; warmup += 2) {
        rpx_latency *lat = new_lat(warmup);
        assert_int_equal(rpx_latency_add_ns(lat, 4e6), 0);
        assert_int_equal(rpx_latency_add_ns(lat, 1e6), 0);
        assert_int_equal(rpx_latency_add_ns(lat, 1e6), 0);
        assert_int_equal(rpx_latency_first_used(lat), 0);
        rpx_latency_stats st = stats_of(lat);
        assert_int_equal(st.available, 1);
        assert_int_equal(st.n, 3);
        check_exact("max", st.max_ms, 4.0);
        check_exact("mean", st.mean_ms, 2.0);
        check_exact("p50", st.p50_ms, 1.0);
        rpx_latency_destroy(lat);
    }
    /* One sample past the warmup: only that one. */
    rpx_latency *lat = new_lat(3);
    for (int i = 0; i < 3; i++) assert_int_equal(rpx_latency_add_ns(lat, 5e6), 0);
    assert_int_equal(rpx_latency_add_ns(lat, 7e6), 0);
    rpx_latency_stats st = stats_of(lat);
    assert_int_equal(st.n, 1);
    check_exact("p99", st.p99_ms, 7.0);
    check_exact("min", st.min_ms, 7.0);
    assert_true(isnan(st.std_ms)); /* n < 2 */
    rpx_latency_destroy(lat);
}

static void test_add_batch(void **state)
{
    (void)state;
    rpx_latency *lat = new_lat(0);
    assert_int_equal(rpx_latency_add_batch_ns(lat, 1000.0, 4), 0);
    assert_int_equal(rpx_latency_add_batch_seconds(lat, 0.010, 4), 0);
    assert_int_equal(rpx_latency_add_batch_ns(lat, 10.0, 3), 0);
    assert_int_equal(rpx_latency_add_batch_ns(lat, 1e6, 1), 0);
    assert_int_equal(rpx_latency_add_batch_ns(lat, 1000.0, 0), RPX_EINVAL);
    assert_int_equal(rpx_latency_add_batch_seconds(lat, 0.5, 0), RPX_EINVAL);
    assert_int_equal(rpx_latency_count(lat), 4);
    const double *s = rpx_latency_samples_ns(lat);
    check_exact("1000/4", s[0], 250.0);
    check_exact("0.010 s/4", s[1], 2.5e6);
    check_exact("10/3", s[2], 10.0 / 3.0); /* the fraction is kept */
    check_exact("1e6/1", s[3], 1e6);
    rpx_latency_destroy(lat);
}

static void test_invalid_arguments(void **state)
{
    (void)state;
    rpx_latency *lat = NULL;
    assert_int_equal(rpx_latency_create(-1, &lat), RPX_EINVAL);
    assert_null(lat);
    assert_int_equal(rpx_latency_create(0, NULL), RPX_EINVAL);
    lat = new_lat(0);
    assert_int_equal(rpx_latency_add_ns(lat, NAN), RPX_EINVAL);
    assert_int_equal(rpx_latency_add_ns(lat, INFINITY), RPX_EINVAL);
    assert_int_equal(rpx_latency_add_ns(lat, -1.0), RPX_EINVAL);
    assert_int_equal(rpx_latency_add_seconds(lat, -0.001), RPX_EINVAL);
    assert_int_equal(rpx_latency_add_ns(NULL, 1.0), RPX_EINVAL);
    assert_int_equal(rpx_latency_count(lat), 0);
    assert_int_equal(rpx_latency_add_ns(lat, 0.0), 0);
    assert_int_equal(rpx_latency_count(lat), 1);
    assert_int_equal(rpx_latency_stats_get(lat, NULL), RPX_EINVAL);
    rpx_latency_destroy(lat);
    rpx_latency_destroy(NULL);
}

static void test_reserve_means_no_realloc(void **state)
{
    (void)state;
    rpx_latency *lat = new_lat(0);
    assert_int_equal(rpx_latency_add_ns(lat, 1.0), 0);
    assert_int_equal(rpx_latency_reserve(lat, 5000), 0);
#if RPX_COUNT_ALLOCS
    n_allocs = 0;
    count_allocs = 1;
#endif
    for (int i = 0; i < 5000; i++) {
        if (rpx_latency_add_ns(lat, (double)i) != 0) fail_msg("add_ns %d failed", i);
    }
#if RPX_COUNT_ALLOCS
    count_allocs = 0;
    if (n_allocs != 0) fail_msg("adding reserved samples made %ld allocator calls", n_allocs);
    /* The counter itself works: the next add past the reservation grows. */
    count_allocs = 1;
    assert_int_equal(rpx_latency_add_ns(lat, 1.0), 0);
    count_allocs = 0;
    assert_true(n_allocs > 0);
#else
    assert_int_equal(rpx_latency_add_ns(lat, 1.0), 0);
#endif
    assert_int_equal(rpx_latency_count(lat), 5002);
    /* Growth past the reservation still works and keeps the samples. */
    for (int i = 0; i < 100000; i++) assert_int_equal(rpx_latency_add_ns(lat, 7.0), 0);
    assert_int_equal(rpx_latency_count(lat), 105002);
    check_exact("s4000", rpx_latency_samples_ns(lat)[4001], 4000.0);
    rpx_latency_destroy(lat);
}

static void test_std_hand_computed(void **state)
{
    (void)state;
    /* 2 4 4 4 5 5 7 9 ns: mean 5, sum of squared deviations 32, n - 1 = 7. */
    static const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    rpx_latency *lat = new_lat(0);
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        assert_int_equal(rpx_latency_add_ns(lat, x[i] * 1e6), 0);
    rpx_latency_stats st = stats_of(lat);
    check_exact("mean", st.mean_ms, 5.0);
    check_close("std", st.std_ms, sqrt(32.0 / 7.0), 1e-15);
    /* Not the population std (n): sqrt(32 / 8) = 2. */
    assert_true(fabs(st.std_ms - 2.0) > 0.1);
    rpx_latency_destroy(lat);

    /* Two samples 1 and 3 ms: std = sqrt(2). */
    lat = new_lat(0);
    assert_int_equal(rpx_latency_add_seconds(lat, 0.001), 0);
    assert_int_equal(rpx_latency_add_seconds(lat, 0.003), 0);
    st = stats_of(lat);
    check_close("std2", st.std_ms, sqrt(2.0), 1e-15);
    rpx_latency_destroy(lat);

    /* A large common offset does not wreck the two-pass variance. */
    lat = new_lat(0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(rpx_latency_add_ns(lat, 1e12 + (i % 2 ? 1.0 : -1.0)), 0);
    st = stats_of(lat);
    check_close("std offset", st.std_ms * 1e6, sqrt(1000.0 / 999.0), 1e-9);
    rpx_latency_destroy(lat);
}

static void test_percentile_sorted_hand(void **state)
{
    (void)state;
    static const double x[] = {1, 2, 3, 4};
    check_exact("q50", rpx_percentile_sorted(x, 4, 50), 2.5);
    check_exact("q25", rpx_percentile_sorted(x, 4, 25), 1.75);
    check_exact("q0", rpx_percentile_sorted(x, 4, 0), 1.0);
    check_exact("q100", rpx_percentile_sorted(x, 4, 100), 4.0);
    check_exact("n1", rpx_percentile_sorted(x + 2, 1, 37.5), 3.0);
    assert_true(isnan(rpx_percentile_sorted(x, 4, -0.5)));
    assert_true(isnan(rpx_percentile_sorted(x, 4, 100.5)));
    assert_true(isnan(rpx_percentile_sorted(x, 4, NAN)));
    assert_true(isnan(rpx_percentile_sorted(x, 0, 50)));
    /* q = 100 reads the last of n values and nothing past it. */
    static const double z[] = {1, 2, 3, INFINITY};
    check_exact("q100 n3", rpx_percentile_sorted(z, 3, 100), 3.0);
    check_exact("q99.99 n3", rpx_percentile_sorted(z, 3, 99.99), 2.9997999999999996); /* numpy */
    /* Monotone in q even where the lerp switches sides at t = 0.5. */
    static const double y[] = {0.1, 1e9 + 0.3};
    double prev = -1;
    for (int i = 0; i <= 1000; i++) {
        double v = rpx_percentile_sorted(y, 2, i / 10.0);
        assert_true(v >= prev);
        prev = v;
    }
}

/* ---- against numpy ---------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_uniform(void) /* (0, 1) */
{
    return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(void)
{
    return sqrt(-2.0 * log(rng_uniform())) * cos(6.283185307179586 * rng_uniform());
}

enum shape { UNIFORM, LOGNORMAL, PARETO, DUPLICATES, INTEGER_NS, CONSTANT, TINY };

typedef struct sample_set {
    const char *name;
    size_t n;
    enum shape shape;
    long warmup; /* junk samples added first and excluded */
    double *x;
} sample_set;

static void fill(sample_set *s)
{
    s->x = malloc(s->n * sizeof *s->x);
    assert_non_null(s->x);
    for (size_t i = 0; i < s->n; i++) {
        double v = 0;
        switch (s->shape) {
        case UNIFORM: v = 1e6 + 9e6 * rng_uniform(); break;
        case LOGNORMAL: v = 5e6 * exp(1.5 * rng_normal()); break;
        case PARETO: v = 2e5 / pow(rng_uniform(), 1.0 / 1.1); break; /* heavy tail */
        case DUPLICATES: v = 1e6 * (double)(1 + rng_next() % 5); break;
        case INTEGER_NS: v = floor(12e6 + 3e5 * rng_normal()); break;
        case CONSTANT: v = 4321.5; break;
        case TINY: v = 37.0 + (double)(rng_next() % 1000) / 3.0; break;
        }
        if (v < 0) v = 0;
        s->x[i] = v;
    }
}

/* numpy computes, for each line of samples (ns), the statistics in ms exactly
 * as a reference script would, then the raw percentiles at a grid of q. */
static const char numpy_script[] =
    "import sys, warnings\n"
    "import numpy as np\n"
    "warnings.simplefilter('ignore')\n"
    "print(np.__version__)\n"
    "qs = [float(t) for t in sys.argv[2].split(',')]\n"
    "for line in open(sys.argv[1]):\n"
    "    x = np.array([float(t) for t in line.split()], dtype=np.float64)\n"
    "    p = np.percentile(x, [50, 95, 99])\n"
    "    vals = [p[0] / 1e6, p[1] / 1e6, p[2] / 1e6, np.mean(x) / 1e6,\n"
    "            np.std(x, ddof=1) / 1e6 if x.size > 1 else float('nan'),\n"
    "            np.min(x) / 1e6, np.max(x) / 1e6]\n"
    "    vals += list(np.percentile(x, qs))\n"
    "    print(' '.join(repr(float(v)) for v in vals))\n";

static const double grid_q[] = {0,  0.1, 1,  2.5, 5,    10,   12.5, 25,   100.0 / 3,
                                49.99, 50, 50.01, 62.5, 75, 90, 95, 99, 99.9, 99.99, 100};
#define GRID_N (sizeof grid_q / sizeof grid_q[0])

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_against_numpy(void **state)
{
    (void)state;
    sample_set sets[] = {
        {"n=1", 1, LOGNORMAL, 0, NULL},
        {"n=2", 2, UNIFORM, 1, NULL},
        {"n=3", 3, PARETO, 0, NULL},
        {"n=7", 7, UNIFORM, 2, NULL},
        {"n=8", 8, LOGNORMAL, 0, NULL},
        {"n=10", 10, UNIFORM, 5, NULL},
        {"n=101 tiny", 101, TINY, 0, NULL},
        {"n=129", 129, LOGNORMAL, 0, NULL},
        {"n=200 constant", 200, CONSTANT, 3, NULL},
        {"n=1000 lognormal", 1000, LOGNORMAL, 10, NULL},
        {"n=1001 duplicates", 1001, DUPLICATES, 0, NULL},
        {"n=1001 pareto", 1001, PARETO, 20, NULL},
        {"n=5000 integer ns", 5000, INTEGER_NS, 0, NULL},
        {"n=12345 pareto", 12345, PARETO, 0, NULL},
        {"n=100000 lognormal", 100000, LOGNORMAL, 100, NULL},
    };
    const size_t nsets = sizeof sets / sizeof sets[0];
    const char *py = getenv("RPX_PYTHON");
    if (!py || !*py) fail_msg("RPX_PYTHON is not set: numpy is a required test dependency");

    char dir[] = "/tmp/rpx_latency_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char data_path[256], script_path[256], cmd[2048], qarg[512] = "";
    snprintf(data_path, sizeof data_path, "%s/samples.txt", dir);
    snprintf(script_path, sizeof script_path, "%s/ref.py", dir);

    FILE *f = fopen(script_path, "w");
    assert_non_null(f);
    fputs(numpy_script, f);
    assert_int_equal(fclose(f), 0);

    f = fopen(data_path, "w");
    assert_non_null(f);
    for (size_t k = 0; k < nsets; k++) {
        fill(&sets[k]);
        for (size_t i = 0; i < sets[k].n; i++)
            fprintf(f, "%s%.17g", i ? " " : "", sets[k].x[i]);
        fputc('\n', f);
    }
    assert_int_equal(fclose(f), 0);
    for (size_t i = 0; i < GRID_N; i++) {
        size_t len = strlen(qarg);
        snprintf(qarg + len, sizeof qarg - len, "%s%.17g", i ? "," : "", grid_q[i]);
    }
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' '%s'", py, script_path, data_path, qarg);

    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *line = NULL;
    size_t cap = 0;
    size_t got_sets = 0;
    int n_exact = 0, n_values = 0;
    char numpy_version[64] = "";
    if (getline(&line, &cap, p) > 0) snprintf(numpy_version, sizeof numpy_version, "%s", line);
    numpy_version[strcspn(numpy_version, "\n")] = '\0';
    /* Our mean/std reproduce numpy 1.x's summation order exactly; another
     * numpy may block its reductions differently: a few ulps then. */
    const double mean_std_rel = strncmp(numpy_version, "1.", 2) == 0 ? 0.0 : 1e-15;
    for (size_t k = 0; k < nsets; k++) {
        if (getline(&line, &cap, p) < 0) break;
        double ref[7 + GRID_N];
        char *s = line, *end;
        for (size_t j = 0; j < 7 + GRID_N; j++) {
            errno = 0;
            ref[j] = strtod(s, &end);
            if (end == s) fail_msg("%s: cannot parse numpy output: %s", sets[k].name, line);
            s = end;
        }
        got_sets++;

        sample_set *ss = &sets[k];
        rpx_latency *lat = new_lat(ss->warmup);
        assert_int_equal(rpx_latency_reserve(lat, (size_t)ss->warmup + ss->n), 0);
        for (long w = 0; w < ss->warmup; w++)
            assert_int_equal(rpx_latency_add_ns(lat, 5e12), 0); /* must not show */
        for (size_t i = 0; i < ss->n; i++)
            assert_int_equal(rpx_latency_add_ns(lat, ss->x[i]), 0);
        rpx_latency_stats st = stats_of(lat);
        assert_int_equal(st.available, 1);
        assert_int_equal(st.n, ss->n);

        const double got[7] = {st.p50_ms, st.p95_ms, st.p99_ms, st.mean_ms,
                               st.std_ms, st.min_ms, st.max_ms};
        static const char *names[7] = {"p50", "p95", "p99", "mean", "std", "min", "max"};
        char what[128];
        for (int j = 0; j < 7; j++) {
            snprintf(what, sizeof what, "%s: %s", ss->name, names[j]);
            n_values++;
            if (got[j] == ref[j] || (isnan(got[j]) && isnan(ref[j])))
                n_exact++;
            else
                print_message("%s: %.17g vs numpy %.17g (not bit-identical)\n", what,
                              got[j], ref[j]);
            /* Percentiles, min and max reproduce numpy's arithmetic exactly;
             * so do mean and std (pairwise sums in blocks of 8192) for numpy
             * 1.x, held to a few ulps for another numpy. */
            if (j == 3 || j == 4)
                check_close(what, got[j], ref[j], mean_std_rel);
            else
                check_exact(what, got[j], ref[j]);
        }

        double *sorted = malloc(ss->n * sizeof *sorted);
        assert_non_null(sorted);
        memcpy(sorted, ss->x, ss->n * sizeof *sorted);
        qsort(sorted, ss->n, sizeof *sorted, cmp_d);
        for (size_t j = 0; j < GRID_N; j++) {
            snprintf(what, sizeof what, "%s: percentile q=%.17g", ss->name, grid_q[j]);
            check_exact(what, rpx_percentile_sorted(sorted, ss->n, grid_q[j]), ref[7 + j]);
        }
        free(sorted);
        rpx_latency_destroy(lat);
    }
    free(line);
    int status = pclose(p);
    if (got_sets != nsets || status != 0)
        fail_msg("numpy reference failed (exit status %d, %zu of %zu sets): is numpy "
                 "installed for %s? It is a required test dependency",
                 status, got_sets, nsets, py);
    print_message("numpy %s: %d of %d statistics bit-identical\n", numpy_version, n_exact,
                  n_values);

    for (size_t k = 0; k < nsets; k++) free(sets[k].x);
    unlink(data_path);
    unlink(script_path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readme_example),
        cmocka_unit_test(test_decimal_seconds_are_exact),
        cmocka_unit_test(test_empty_is_unavailable),
        cmocka_unit_test(test_warmup_excluded),
        cmocka_unit_test(test_warmup_leaves_none_uses_all),
        cmocka_unit_test(test_add_batch),
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test(test_reserve_means_no_realloc),
        cmocka_unit_test(test_std_hand_computed),
        cmocka_unit_test(test_percentile_sorted_hand),
        cmocka_unit_test(test_against_numpy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
