/* Unit tests for src/common/json_keys.c: the distance, the nearest name, the
 * unknown-key message, type names and the file checks (missing, folder,
 * syntax). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json_keys.h"
#include "rpxprof/error.h"

static void test_distance(void **st)
{
    char longer[300];
    (void)st;
    assert_int_equal(rpx_json_key_distance("unit", "unit"), 0);
    assert_int_equal(rpx_json_key_distance("unti", "unit"), 1);   /* transposition */
    assert_int_equal(rpx_json_key_distance("repeat", "repeats"), 1);
    assert_int_equal(rpx_json_key_distance("Unit", "unit"), 0);   /* case ignored */
    assert_int_equal(rpx_json_key_distance("", "abc"), 3);
    assert_int_equal(rpx_json_key_distance("kitten", "sitting"), 3);
    assert_int_equal(rpx_json_key_distance("ca", "abc"), 3);      /* OSA, not Damerau */
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    assert_true(rpx_json_key_distance(longer, "a") == SIZE_MAX);
}

static void test_nearest(void **st)
{
    static const char *const keys[] = {"name", "model", "tasks", "cost", "flops", "params",
                                       "device", "precision", "warmup", "repeats"};
    static const char *const bw[] = {"memory_gb", "memory_bandwidth_gbps", "l2_mb"};
    size_t n = sizeof keys / sizeof keys[0];
    (void)st;
    assert_string_equal(rpx_json_nearest_key("repeat", keys, n), "repeats");
    assert_string_equal(rpx_json_nearest_key("modle", keys, n), "model");
    assert_string_equal(rpx_json_nearest_key("precison", keys, n), "precision");
    assert_string_equal(rpx_json_nearest_key("Device", keys, n), "device");
    assert_string_equal(rpx_json_nearest_key("memory_bandwith_gbps", bw, 3),
                        "memory_bandwidth_gbps");
    /* nothing close: no guess */
    assert_null(rpx_json_nearest_key("colour", keys, n));
    assert_null(rpx_json_nearest_key("x", keys, n));
    assert_null(rpx_json_nearest_key("", keys, n));
    assert_null(rpx_json_nearest_key("unit", keys, 0));
}

static void test_check_keys(void **st)
{
    static const char *const keys[] = {"inputs", "unit", "meta"};
    rpx_error err = {0};
    json_t *o = json_pack("{s:s, s:s}", "inputs", "a.npz", "unti", "frame");
    (void)st;
    assert_int_equal(rpx_json_check_keys(o, keys, 3, "m.json", "tasks.depth", &err), RPX_EFORMAT);
    assert_string_equal(err.message,
                        "m.json: unknown key 'unti' in tasks.depth; did you mean 'unit'?");
    json_decref(o);
    o = json_pack("{s:i}", "colour", 1);
    assert_int_equal(rpx_json_check_keys(o, keys, 3, "m.json", NULL, &err), RPX_EFORMAT);
    assert_string_equal(err.message, "m.json: unknown key 'colour' at the top level; the keys "
                                     "allowed there are: inputs, unit, meta");
    json_decref(o);
    o = json_pack("{s:s, s:s, s:{}}", "inputs", "a", "unit", "b", "meta");
    rpx_error_clear(&err);
    assert_int_equal(rpx_json_check_keys(o, keys, 3, "m.json", "x", &err), 0);
    assert_int_equal(err.code, 0);
    json_decref(o);
    /* not an object: the caller reports the type */
    o = json_integer(3);
    assert_int_equal(rpx_json_check_keys(o, keys, 3, "m.json", "x", &err), 0);
    json_decref(o);
    assert_int_equal(rpx_json_check_keys(NULL, keys, 3, "m.json", "x", &err), 0);
}

static void test_type_names(void **st)
{
    json_t *v[] = {json_object(), json_array(), json_string("s"), json_integer(1),
                   json_real(1.5), json_true(), json_null()};
    const char *want[] = {"an object", "an array", "a string", "an integer", "a number",
                          "a boolean", "null"};
    size_t i;
    (void)st;
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        assert_string_equal(rpx_json_type_name(v[i]), want[i]);
        json_decref(v[i]);
    }
    assert_string_equal(rpx_json_type_name(NULL), "nothing");
}

static void test_load_user_file(void **st)
{
    char dir[] = "/tmp/rpxjsonkeys-XXXXXX", path[256];
    rpx_error err = {0};
    json_t *root = (json_t *)1;
    FILE *f;
    (void)st;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/missing.json", dir);
    assert_int_equal(rpx_json_load_user_file(path, 0, "a manifest", &root, &err), RPX_EIO);
    assert_null(root);
    assert_non_null(strstr(err.message, "missing.json: the file does not exist"));
    assert_non_null(strstr(err.message, "a manifest"));
    snprintf(path, sizeof path, "%s/missing/deeper.json", dir);
    assert_int_equal(rpx_json_load_user_file(path, 0, "a manifest", &root, &err), RPX_EIO);
    assert_non_null(strstr(err.message, "does not exist"));
    assert_int_equal(rpx_json_load_user_file(dir, 0, "a manifest", &root, &err), RPX_EIO);
    assert_non_null(strstr(err.message, "is a folder, not a file"));
    /* a FIFO is refused before the open that would wait for a writer */
    snprintf(path, sizeof path, "%s/ff.json", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(rpx_json_load_user_file(path, 0, "a manifest", &root, &err), RPX_EIO);
    assert_null(root);
    assert_non_null(strstr(err.message, "ff.json: is a FIFO (named pipe), not a regular file"));
    unlink(path);
    snprintf(path, sizeof path, "%s/bad.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"a\": 1,\n \"b\": }", f);
    fclose(f);
    assert_int_equal(rpx_json_load_user_file(path, 0, NULL, &root, &err), RPX_EFORMAT);
    assert_non_null(strstr(err.message, "bad.json: line 2"));
    assert_non_null(strstr(err.message, "fix the JSON syntax"));
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"a\": 1, \"a\": 2}", f);
    fclose(f);
    assert_int_equal(rpx_json_load_user_file(path, JSON_REJECT_DUPLICATES, NULL, &root, &err),
                     RPX_EFORMAT);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"a\": 1}", f);
    fclose(f);
    assert_int_equal(rpx_json_load_user_file(path, 0, NULL, &root, &err), 0);
    assert_int_equal(json_integer_value(json_object_get(root, "a")), 1);
    json_decref(root);
    assert_int_equal(rpx_json_load_user_file("", 0, NULL, &root, &err), RPX_EINVAL);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance),     cmocka_unit_test(test_nearest),
        cmocka_unit_test(test_check_keys),   cmocka_unit_test(test_type_names),
        cmocka_unit_test(test_load_user_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
