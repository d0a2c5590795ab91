/* Unit tests for src/report/json.c, src/report/profile.c and src/common/atomic_write.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "common/json.h"
#include "common/output.h"
#include "rpxprof/error.h"
#include "rpxprof/report.h"

static char *dump_real(double v)
{
    json_t *a = json_array();
    char *s;
    json_array_append_new(a, rpx_json_real_or_null(v));
    s = rpx_json_dumps(a);
    json_decref(a);
    return s;
}

static void test_shortest_round_trip(void **st)
{
    static const double values[] = {0.1, 15.0, 1e-5, 2.5e-05, 1.234567, 123456789.123,
                                    1.0 / 3.0, 5e-324, 1.7976931348623157e308, -0.0, 0.0};
    static const char *expected[] = {"[0.1]", "[15.0]", "[1e-05]", "[2.5e-05]", "[1.234567]",
                                     "[123456789.123]", "[0.3333333333333333]",
                                     "[5e-324]", "[1.7976931348623157e+308]", "[-0.0]",
                                     "[0.0]"};
    size_t i;
    (void)st;
    for (i = 0; i < sizeof values / sizeof values[0]; i++) {
        char *s = dump_real(values[i]);
        assert_non_null(s);
        assert_string_equal(s, expected[i]);
        assert_true(strtod(s + 1, NULL) == values[i]);
        free(s);
    }
}

static void test_nan_and_inf_become_null(void **st)
{
    char *s;
    (void)st;
    s = dump_real((double)NAN);
    assert_string_equal(s, "[null]");
    free(s);
    s = dump_real((double)INFINITY);
    assert_string_equal(s, "[null]");
    free(s);
    json_t *m = rpx_json_mib_or_null(-1);
    assert_true(json_is_null(m));
    json_decref(m);
    m = rpx_json_mib_or_null(3 * 1048576 / 2);
    assert_true(json_real_value(m) == 1.5);
    json_decref(m);
}

static void test_locale_independent(void **st)
{
    static const char *locales[] = {"de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", "ru_RU.UTF-8"};
    size_t i;
    const char *got = NULL;
    char *s;
    (void)st;
    for (i = 0; i < sizeof locales / sizeof locales[0] && !got; i++)
        got = setlocale(LC_NUMERIC, locales[i]);
    if (!got) {
        setlocale(LC_NUMERIC, "C");
        skip(); /* no locale with a decimal comma is installed */
    }
    s = dump_real(0.25);
    setlocale(LC_NUMERIC, "C");
    assert_string_equal(s, "[0.25]");
    free(s);
}

static void test_layout_and_escaping(void **st)
{
    json_t *o = json_pack("{s:[i,i], s:s, s:{}, s:[], s:[{s:b}]}", "a", 1, 2, "q\"\n",
                          "caf\xc3\xa9", "e", "l", "n", "x", 1);
    char *s = rpx_json_dumps(o);
    (void)st;
    assert_string_equal(s, "{\n  \"a\": [1, 2],\n  \"q\\\"\\n\": \"caf\xc3\xa9\",\n  \"e\": {},\n"
                           "  \"l\": [],\n  \"n\": [\n    {\n      \"x\": true\n    }\n  ]\n}");
    /* jansson reads back what we wrote */
    json_error_t je;
    json_t *back = json_loads(s, 0, &je);
    assert_non_null(back);
    assert_true(json_equal(o, back));
    json_decref(back);
    json_decref(o);
    free(s);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_atomic_write_creates_parents(void **st)
{
    char dir[] = "/tmp/rpxjsonXXXXXX", path[256], buf[64];
    rpx_error err = {0};
    FILE *f;
    (void)st;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a/b/out.json", dir);
    json_t *o = json_pack("{s:s,s:f}", "schema", "rpxprof.test/1", "x", 0.5);
    assert_int_equal(rpx_json_write_file(path, o, &err), 0);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "{\n");
    snprintf(buf, sizeof buf, "%s/a/b", dir);
    assert_int_equal(count_entries(buf), 1); /* no temporary left */
    /* overwrite in place (a report of the same schema) */
    assert_int_equal(rpx_json_write_file(path, o, &err), 0);
    assert_int_equal(count_entries(buf), 1);
    json_decref(o);
    /* a folder where the file should go: error, nothing left behind */
    snprintf(path, sizeof path, "%s/a", dir);
    assert_int_not_equal(rpx_write_file_atomic(path, "x", 1, &err), 0);
    assert_non_null(strstr(err.message, path));
    assert_int_equal(count_entries(dir), 1);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
}

static void test_profile_report_nulls(void **st)
{
    rpx_profile_desc d = {0};
    rpx_latency *lat;
    json_t *r;
    (void)st;
    assert_int_equal(rpx_latency_create(0, &lat), 0);
    d.model_callable = "x:y";
    d.latency = lat;
    d.wall_ns = -1;
    r = rpx_profile_report(&d);
    assert_non_null(r);
    assert_true(json_is_null(json_object_get(json_object_get(r, "latency"), "p50_ms")));
    assert_true(json_is_null(json_object_get(json_object_get(r, "memory"),
                                             "cpu_inference_peak_mb")));
    assert_int_equal(json_integer_value(json_object_get(r, "measured_calls")), 0);
    assert_string_equal(json_string_value(json_object_get(r, "schema")), RPX_PROFILE_SCHEMA);
    json_decref(r);
    /* one sample: percentiles exist, std does not */
    rpx_latency_add_ns(lat, 40);
    r = rpx_profile_report(&d);
    assert_true(json_real_value(json_object_get(json_object_get(r, "latency"), "p50_ms")) ==
                40e-6);
    assert_true(json_is_null(json_object_get(json_object_get(r, "latency"), "std_ms")));
    json_decref(r);
    rpx_latency_destroy(lat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shortest_round_trip),
        cmocka_unit_test(test_nan_and_inf_become_null),
        cmocka_unit_test(test_locale_independent),
        cmocka_unit_test(test_layout_and_escaping),
        cmocka_unit_test(test_atomic_write_creates_parents),
        cmocka_unit_test(test_profile_report_nulls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
