/* Unit tests for src/system/card.c and sysfs.c on captured snapshots (RPX_SYSROOT). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/system.h"

static const char *reference_keys[] = {"gpu_name", "gpu_memory_gb", "gpu_count", "cpu_name",
                                       "ram_gb", "cuda_version", "pytorch_version",
                                       "python_version", "precision", "batch_size",
                                       "input_resolution", "os", "driver_version"};

static void use_snapshot(const char *name)
{
    char root[1024];
    const char *dir = getenv("RPX_SNAPSHOTS");
    assert_non_null(dir);
    snprintf(root, sizeof root, "%s/%s", dir, name);
    setenv("RPX_SYSROOT", root, 1);
}

static void test_snapshot_card(void **st)
{
    rpx_card_options o = {"cpu", "fp32", "4", "480x640"};
    json_t *c;
    size_t i;
    (void)st;
    use_snapshot("debian12-kvm-2cpu");
    c = rpx_system_card(&o, NULL);
    assert_non_null(c);
    for (i = 0; i < sizeof reference_keys / sizeof reference_keys[0]; i++)
        assert_non_null(json_object_get(c, reference_keys[i]));
    assert_string_equal(json_string_value(json_object_get(c, "cpu_name")),
                        "AMD EPYC");
    /* MemTotal 24683584 kB */
    assert_true(json_real_value(json_object_get(c, "ram_gb")) == 24683584.0 * 1024 / 1073741824);
    assert_non_null(strstr(json_string_value(json_object_get(c, "os")),
                           "Debian GNU/Linux 12 (bookworm); Linux "));
    assert_int_equal(json_integer_value(json_object_get(c, "batch_size")), 4);
    assert_string_equal(json_string_value(json_object_get(c, "input_resolution")), "480x640");
    assert_true(json_is_null(json_object_get(c, "driver_version")));
    assert_int_equal(json_integer_value(json_object_get(c, "gpu_count")), 0);
    json_decref(c);
    unsetenv("RPX_SYSROOT");
}

static void test_missing_files_are_null(void **st)
{
    json_t *c;
    (void)st;
    setenv("RPX_SYSROOT", "/nonexistent-root", 1);
    c = rpx_system_card(NULL, NULL);
    assert_true(json_is_null(json_object_get(c, "cpu_name")));
    assert_true(json_is_null(json_object_get(c, "ram_gb")));
    assert_true(json_is_null(json_object_get(c, "precision")));
    json_decref(c);
    unsetenv("RPX_SYSROOT");
}

static void test_sys_read(void **st)
{
    char buf[16];
    (void)st;
    use_snapshot("debian12-kvm-2cpu");
    assert_int_equal(rpx_sys_read("/etc/os-release", buf, sizeof buf), 15);
    assert_int_equal(strlen(buf), 15);
    assert_true(rpx_sys_read("/etc/nothing", buf, sizeof buf) < 0);
    unsetenv("RPX_SYSROOT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_card),
        cmocka_unit_test(test_missing_files_are_null),
        cmocka_unit_test(test_sys_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
