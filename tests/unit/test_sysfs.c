/* Unit tests for src/system/sysfs.c: reading under RPX_SYSROOT, kernel CPU
 * lists, and the null-with-a-reason helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/system_internal.h"

static void use_snapshot(const char *name)
{
    char root[1024];
    const char *dir = getenv("RPX_SNAPSHOTS");
    assert_non_null(dir);
    snprintf(root, sizeof root, "%s/%s", dir, name);
    setenv("RPX_SYSROOT", root, 1);
}

static void test_sys_read(void **st)
{
    char buf[16];
    long long v;
    long len;
    char *all;
    (void)st;
    use_snapshot("debian12-kvm-2cpu");
    assert_false(rpx__sys_live());
    assert_int_equal(rpx_sys_read("/etc/os-release", buf, sizeof buf), 15); /* truncated */
    assert_int_equal(strlen(buf), 15);
    assert_true(rpx_sys_read("/etc/nothing", buf, sizeof buf) == -ENOENT);
    assert_int_equal(rpx__sys_line("/sys/devices/system/cpu/online", buf, sizeof buf), 0);
    assert_string_equal(buf, "0-1");
    assert_int_equal(rpx__sys_ll("/sys/devices/system/cpu/cpu0/cache/index3/level", &v), 0);
    assert_int_equal(v, 3);
    assert_int_equal(rpx__sys_ll("/sys/devices/system/cpu/online", &v), -EINVAL); /* "0-1" */
    all = rpx__sys_slurp("/proc/cpuinfo", &len);
    assert_non_null(all);
    assert_int_equal((long)strlen(all), len);
    assert_non_null(strstr(all, "processor\t: 1"));
    free(all);
    assert_null(rpx__sys_slurp("/proc/none", &len));
    assert_int_equal(len, -ENOENT);
    assert_true(rpx__sys_exists("/.dockerenv"));
    assert_false(rpx__sys_exists("/run/.containerenv"));
    setenv("RPX_SYSROOT", "/", 1); /* "/" is the real root */
    assert_true(rpx__sys_live());
    unsetenv("RPX_SYSROOT");
    assert_true(rpx__sys_live());
    assert_string_equal(rpx_sys_root(), "");
}

static void test_cpuset(void **st)
{
    rpx__sys_cpuset s;
    char out[64];
    (void)st;
    assert_int_equal(rpx__sys_cpuset_parse("0-3,8,10-11\n", &s), 7);
    assert_true(rpx__sys_cpuset_has(&s, 8));
    assert_false(rpx__sys_cpuset_has(&s, 9));
    rpx__sys_cpuset_format(&s, out, sizeof out);
    assert_string_equal(out, "0-3,8,10-11");
    assert_int_equal(rpx__sys_cpuset_first(&s), 0);
    assert_int_equal(rpx__sys_cpuset_parse("", &s), 0);
    assert_int_equal(rpx__sys_cpuset_first(&s), -1);
    assert_int_equal(rpx__sys_cpuset_parse("5", &s), 1);
    assert_int_equal(rpx__sys_cpuset_first(&s), 5);
    assert_int_equal(rpx__sys_cpuset_parse("0-", &s), -1);
    assert_int_equal(rpx__sys_cpuset_parse("3-1", &s), -1);
    assert_int_equal(rpx__sys_cpuset_parse("1,,2", &s), -1);
    assert_int_equal(rpx__sys_cpuset_parse("zz", &s), -1);
    assert_int_equal(rpx__sys_cpuset_parse("0-99999", &s), -1);
    assert_int_equal(rpx__sys_cpuset_parse(NULL, &s), -1);
    assert_int_equal(rpx__sys_cpuset_parse("0-8191", &s), 8192);
    rpx__sys_cpuset_format(&s, out, 4); /* truncated, still terminated */
    assert_int_equal(strlen(out), 3);
}

static void test_kv(void **st)
{
    char v[32];
    const char *text = "model name\t: AMD EPYC\nmodel\t\t: 1\nflags\t\t:\n";
    (void)st;
    assert_true(rpx__sys_kv(text, "model", v, sizeof v));
    assert_string_equal(v, "1");
    assert_true(rpx__sys_kv(text, "model name", v, sizeof v));
    assert_string_equal(v, "AMD EPYC");
    assert_true(rpx__sys_kv(text, "flags", v, sizeof v));
    assert_string_equal(v, "");
    assert_false(rpx__sys_kv(text, "stepping", v, sizeof v));
}

static void test_null_reason_helpers(void **st)
{
    json_t *o = json_object(), *w = json_array(), *s;
    const char *k, *last = NULL;
    json_t *v;
    int i = 0;
    (void)st;
    rpx__sys_null(o, "a", "because %d", 7);
    rpx__sys_put(o, "b", json_integer(2));
    rpx__sys_finish(o, 1);
    json_object_foreach(o, k, v) {
        i++;
        last = k;
    }
    assert_int_equal(i, 3);
    assert_string_equal(last, "unavailable"); /* moved to the end */
    assert_true(json_is_null(json_object_get(o, "a")));
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "unavailable"), "a")),
                        "because 7");
    rpx__sys_warn(w, "one %s", "sentence");
    rpx__sys_warn(w, "one %s", "sentence");
    assert_int_equal(json_array_size(w), 1);
    s = rpx__sys_jstr("caf\xe9\x01");
    assert_non_null(s);
    assert_string_equal(json_string_value(s), "caf??");
    json_decref(s);
    json_decref(o);
    json_decref(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sys_read),
        cmocka_unit_test(test_cpuset),
        cmocka_unit_test(test_kv),
        cmocka_unit_test(test_null_reason_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
