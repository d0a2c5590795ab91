/* Unit tests for src/device/nvml.c against the stub NVML libraries of
 * tests/stubs/nvml (RPX_NVML_LIBRARY, RPX_NVML_MINIMAL_LIBRARY). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "device/nvml.h"

static char full_library[1024];
static char minimal_library[1024];

static const char *stub_vars[] = {"RPX_STUB_NVML_INIT_FAIL", "RPX_STUB_NVML_COUNT",
                                  "RPX_STUB_NVML_OTHER_PROC", "RPX_STUB_NVML_THROTTLE",
                                  "RPX_STUB_NVML_MIG", "CUDA_VISIBLE_DEVICES",
                                  "RPX_STUB_NVML_BUSY_FILE"};

static int reset_env(void **st)
{
    size_t i;
    (void)st;
    for (i = 0; i < sizeof stub_vars / sizeof stub_vars[0]; i++) unsetenv(stub_vars[i]);
    setenv("RPX_NVML_LIBRARY", full_library, 1);
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    return 0;
}

static rpx_nvml *open_ok(void)
{
    rpx_nvml *n = NULL;
    rpx_error err = {0, ""};
    int rc = rpx_nvml_open(&n, &err);
    if (rc != 0) fprintf(stderr, "rpx_nvml_open: %s\n", err.message);
    assert_int_equal(rc, 0);
    assert_non_null(n);
    return n;
}

static void assert_json_equal(const json_t *got, const char *expected_text)
{
    json_error_t jerr;
    json_t *expected = json_loads(expected_text, 0, &jerr);
    if (!expected) fprintf(stderr, "bad expected JSON: %s\n", jerr.text);
    assert_non_null(expected);
    if (!json_equal(got, expected)) {
        char *g = json_dumps(got, JSON_SORT_KEYS);
        char *e = json_dumps(expected, JSON_SORT_KEYS);
        fprintf(stderr, "got:      %s\nexpected: %s\n", g ? g : "?", e ? e : "?");
        free(g);
        free(e);
        fail_msg("JSON differs");
    }
    json_decref(expected);
}

/* Every null in `o` (nested one level: "clocks_mhz.sm") has a reason. */
static void assert_nulls_explained(const json_t *o)
{
    const json_t *why = json_object_get(o, "unavailable");
    const char *key;
    json_t *v;
    assert_true(json_is_object(why));
    json_object_foreach((json_t *)o, key, v) {
        if (json_is_null(v)) {
            if (!json_object_get(why, key)) fail_msg("null '%s' without a reason", key);
        } else if (json_is_object(v) && strcmp(key, "unavailable") != 0) {
            const char *sub;
            json_t *sv;
            json_object_foreach(v, sub, sv) {
                char path[128];
                snprintf(path, sizeof path, "%s.%s", key, sub);
                if (json_is_null(sv) && !json_object_get(why, path))
                    fail_msg("null '%s' without a reason", path);
            }
        }
    }
}

static int warnings_containing(const json_t *warnings, const char *needle)
{
    size_t i;
    int count = 0;
    for (i = 0; i < json_array_size(warnings); i++) {
        const char *s = json_string_value(json_array_get(warnings, i));
        assert_non_null(s);
        if (strstr(s, needle)) count++;
    }
    return count;
}

static const char *gpu0_expected =
    "{\"index\": 0, \"name\": \"NVIDIA H100 80GB HBM3\","
    " \"uuid\": \"GPU-5f8a3c2e-9b1d-4e7a-a6c0-3d2f1e8b7c94\","
    " \"pci_bus_id\": \"00000000:1B:00.0\", \"memory_total_mb\": 81559.0,"
    " \"driver_version\": \"550.54.15\", \"cuda_driver_version\": \"12.4\","
    " \"compute_capability\": \"9.0\", \"multiprocessor_count\": null,"
    " \"clocks_mhz\": {\"sm\": 1980, \"sm_max\": 1980, \"memory\": 2619, \"memory_max\": 2619},"
    " \"power_limit_w\": 700.0, \"temperature_c\": null, \"persistence_mode\": true,"
    " \"mig_mode\": false, \"ecc_mode\": true, \"pcie\": {\"generation\": 5, \"width\": 16},"
    " \"visible\": true, \"visible_ordinal\": 0,"
    " \"unavailable\": {\"multiprocessor_count\": \"not reported by NVML\","
    "                   \"temperature_c\": \"nvmlDeviceGetTemperature: Unknown Error\"}}";

static const char *gpu1_expected =
    "{\"index\": 1, \"name\": \"NVIDIA A100-SXM4-40GB\","
    " \"uuid\": \"GPU-5f17d0b2-6c3e-4f58-9e21-7b0c5d9f3a68\","
    " \"pci_bus_id\": \"00000000:3B:00.0\", \"memory_total_mb\": 40960.0,"
    " \"driver_version\": \"550.54.15\", \"cuda_driver_version\": \"12.4\","
    " \"compute_capability\": \"8.0\", \"multiprocessor_count\": null,"
    " \"clocks_mhz\": {\"sm\": 210, \"sm_max\": 1410, \"memory\": 1215, \"memory_max\": 1215},"
    " \"power_limit_w\": null, \"temperature_c\": 34, \"persistence_mode\": false,"
    " \"mig_mode\": false, \"ecc_mode\": true, \"pcie\": {\"generation\": 4, \"width\": 16},"
    " \"visible\": true, \"visible_ordinal\": 1,"
    " \"unavailable\": {\"multiprocessor_count\": \"not reported by NVML\","
    "                   \"power_limit_w\": \"nvmlDeviceGetPowerManagementLimit: Not Supported\"}}";

static void test_two_gpus_exact(void **st)
{
    rpx_nvml *n;
    json_t *warnings = json_array(), *gpus;
    (void)st;
    n = open_ok();
    assert_string_equal(rpx_nvml_driver_version(n), "550.54.15");
    gpus = rpx_nvml_gpus(n, warnings);
    assert_int_equal(json_array_size(gpus), 2);
    assert_json_equal(json_array_get(gpus, 0), gpu0_expected);
    assert_json_equal(json_array_get(gpus, 1), gpu1_expected);
    assert_nulls_explained(json_array_get(gpus, 0));
    assert_nulls_explained(json_array_get(gpus, 1));
    /* GPU 1 has persistence mode off; CUDA_DEVICE_ORDER=PCI_BUS_ID: no order warning */
    assert_int_equal(json_array_size(warnings), 1);
    assert_int_equal(warnings_containing(warnings, "GPU 1 (NVIDIA A100-SXM4-40GB): persistence "
                                                   "mode is off"),
                     1);
    json_decref(gpus);
    json_decref(warnings);
    rpx_nvml_close(n);
}

static void test_warnings_may_be_null(void **st)
{
    rpx_nvml *n;
    json_t *gpus, *cond;
    (void)st;
    setenv("RPX_STUB_NVML_THROTTLE", "0x8", 1);
    setenv("RPX_STUB_NVML_OTHER_PROC", "1", 1);
    n = open_ok();
    gpus = rpx_nvml_gpus(n, NULL);
    cond = rpx_nvml_conditions(n, NULL);
    assert_int_equal(json_array_size(gpus), 2);
    assert_int_equal(json_array_size(cond), 2);
    json_decref(gpus);
    json_decref(cond);
    rpx_nvml_close(n);
}

static void test_null_handle_is_safe(void **st)
{
    json_t *a;
    (void)st;
    a = rpx_nvml_gpus(NULL, NULL);
    assert_int_equal(json_array_size(a), 0);
    json_decref(a);
    a = rpx_nvml_conditions(NULL, NULL);
    assert_int_equal(json_array_size(a), 0);
    json_decref(a);
    assert_null(rpx_nvml_driver_version(NULL));
    rpx_nvml_close(NULL);
    assert_int_equal(rpx_nvml_open(NULL, NULL), RPX_EINVAL);
}

/* CUDA_VISIBLE_DEVICES → (ordinal of GPU 0, ordinal of GPU 1), -1 = not visible. */
static const struct {
    const char *value; /* NULL: unset */
    int ord0, ord1;
} visibility_cases[] = {
    {NULL, 0, 1},
    {"1", -1, 0},
    {"0,1", 0, 1},
    {"1,0", 1, 0},
    {"", -1, -1},
    {"1,bogus,0", -1, 0},
    {"GPU-5f17", -1, 0},                                     /* unique UUID prefix */
    {"GPU-5f17d0b2-6c3e-4f58-9e21-7b0c5d9f3a68", -1, 0},     /* whole UUID */
    {"GPU-5F8A3C2E,1", 0, 1},                                /* hex without case */
    {"GPU-5f", -1, -1},                                      /* ambiguous prefix */
    {"GPU-", -1, -1},
    {"GPU-ffff,0", -1, -1},                                  /* unknown UUID ends it */
    {"2", -1, -1},                                           /* no such index */
    {"-1", -1, -1},
    {"0x1", -1, -1},
    {" 1 , 0 ", 1, 0},
    {"0,0,1", 0, -1},                                        /* a repeat ends the list */
    {"1,", -1, 0},                                           /* empty entry ends it */
    {"MIG-GPU-5f17d0b2-6c3e-4f58-9e21-7b0c5d9f3a68/1/0,0", -1, 0}, /* legacy MIG form: one
                                                                  MIG instance ends it */
    {"MIG-0c4e8f2a", -1, -1},                                /* MIG off: no such device */
};

static void test_visible_devices(void **st)
{
    size_t k;
    (void)st;
    for (k = 0; k < sizeof visibility_cases / sizeof visibility_cases[0]; k++) {
        rpx_nvml *n;
        json_t *gpus, *cond;
        int want[2] = {visibility_cases[k].ord0, visibility_cases[k].ord1};
        int g, visible = 0;
        if (visibility_cases[k].value)
            setenv("CUDA_VISIBLE_DEVICES", visibility_cases[k].value, 1);
        else
            unsetenv("CUDA_VISIBLE_DEVICES");
        n = open_ok();
        gpus = rpx_nvml_gpus(n, NULL);
        cond = rpx_nvml_conditions(n, NULL);
        for (g = 0; g < 2; g++) {
            json_t *o = json_array_get(gpus, (size_t)g);
            json_t *ord = json_object_get(o, "visible_ordinal");
            int got = json_is_integer(ord) ? (int)json_integer_value(ord) : -1;
            if (got != want[g] || json_is_true(json_object_get(o, "visible")) != (want[g] >= 0))
                fail_msg("CUDA_VISIBLE_DEVICES=%s%s%s: GPU %d ordinal %d, expected %d",
                         visibility_cases[k].value ? "'" : "",
                         visibility_cases[k].value ? visibility_cases[k].value : "(unset)",
                         visibility_cases[k].value ? "'" : "", g, got, want[g]);
            if (want[g] < 0) {
                assert_true(json_is_null(ord));
            } else {
                visible++;
            }
            assert_nulls_explained(o);
        }
        /* conditions cover exactly the visible GPUs */
        assert_int_equal(json_array_size(cond), (size_t)visible);
        json_decref(gpus);
        json_decref(cond);
        rpx_nvml_close(n);
    }
}

static void test_mig_devices(void **st)
{
    rpx_nvml *n;
    json_t *gpus, *warnings;
    (void)st;
    setenv("RPX_STUB_NVML_MIG", "1", 1);
    setenv("CUDA_VISIBLE_DEVICES", "MIG-71b3", 1);
    n = open_ok();
    warnings = json_array();
    gpus = rpx_nvml_gpus(n, warnings);
    assert_true(json_is_true(json_object_get(json_array_get(gpus, 0), "mig_mode")));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(gpus, 0), "visible_ordinal")), 0);
    assert_true(json_is_false(json_object_get(json_array_get(gpus, 1), "visible")));
    assert_int_equal(json_array_size(warnings), 0);
    json_decref(warnings);
    json_decref(gpus);

    /* CUDA enumerates one MIG instance per process: the first MIG entry ends
     * the list, GPU 1 after it is not visible, and a warning says so */
    setenv("CUDA_VISIBLE_DEVICES", "MIG-0c4e8f2a-7d13-5b6e-9a0f-2e8c1d4b6a37,MIG-71b3,1", 1);
    warnings = json_array();
    gpus = rpx_nvml_gpus(n, warnings);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(gpus, 0), "visible_ordinal")), 0);
    assert_true(json_is_false(json_object_get(json_array_get(gpus, 1), "visible")));
    assert_int_equal(json_array_size(warnings), 1);
    assert_non_null(strstr(json_string_value(json_array_get(warnings, 0)), "one MIG instance"));
    json_decref(warnings);
    json_decref(gpus);

    setenv("CUDA_VISIBLE_DEVICES", "MIG-ffff,0", 1);
    gpus = rpx_nvml_gpus(n, NULL);
    assert_true(json_is_false(json_object_get(json_array_get(gpus, 0), "visible")));
    assert_true(json_is_false(json_object_get(json_array_get(gpus, 1), "visible")));
    json_decref(gpus);
    rpx_nvml_close(n);
}

static void test_device_order_warning(void **st)
{
    rpx_nvml *n;
    json_t *warnings = json_array(), *gpus;
    (void)st;
    unsetenv("CUDA_DEVICE_ORDER");
    n = open_ok();
    gpus = rpx_nvml_gpus(n, warnings);
    assert_int_equal(warnings_containing(warnings, "CUDA_DEVICE_ORDER is unset, not PCI_BUS_ID, "
                                                   "and 2 GPUs are present"),
                     1);
    json_decref(gpus);
    json_array_clear(warnings);

    setenv("CUDA_DEVICE_ORDER", "FASTEST_FIRST", 1);
    gpus = rpx_nvml_gpus(n, warnings);
    assert_int_equal(warnings_containing(warnings, "CUDA_DEVICE_ORDER is 'FASTEST_FIRST'"), 1);
    json_decref(gpus);
    rpx_nvml_close(n);
    json_array_clear(warnings);

    /* one GPU: the order does not matter */
    unsetenv("CUDA_DEVICE_ORDER");
    setenv("RPX_STUB_NVML_COUNT", "1", 1);
    n = open_ok();
    gpus = rpx_nvml_gpus(n, warnings);
    assert_int_equal(json_array_size(gpus), 1);
    assert_int_equal(json_array_size(warnings), 0);
    json_decref(gpus);
    json_decref(warnings);
    rpx_nvml_close(n);
}

static void test_no_gpus(void **st)
{
    rpx_nvml *n;
    json_t *warnings = json_array(), *gpus, *cond;
    (void)st;
    setenv("RPX_STUB_NVML_COUNT", "0", 1);
    n = open_ok();
    gpus = rpx_nvml_gpus(n, warnings);
    cond = rpx_nvml_conditions(n, warnings);
    assert_int_equal(json_array_size(gpus), 0);
    assert_int_equal(json_array_size(cond), 0);
    assert_int_equal(json_array_size(warnings), 0);
    json_decref(gpus);
    json_decref(cond);
    json_decref(warnings);
    rpx_nvml_close(n);
}

static void test_init_failure(void **st)
{
    rpx_nvml *n = (rpx_nvml *)&n; /* must be reset to NULL */
    rpx_error err = {0, ""};
    (void)st;
    setenv("RPX_STUB_NVML_INIT_FAIL", "1", 1);
    assert_int_equal(rpx_nvml_open(&n, &err), RPX_EUNAVAILABLE);
    assert_null(n);
    assert_string_equal(err.message, "nvmlInit_v2: Driver Not Loaded");
}

static void test_missing_library(void **st)
{
    rpx_nvml *n = NULL;
    rpx_error err = {0, ""};
    (void)st;
    setenv("RPX_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(rpx_nvml_open(&n, &err), RPX_EUNAVAILABLE);
    assert_null(n);
    assert_non_null(strstr(err.message, "/nonexistent/libnvidia-ml.so.1"));
    assert_non_null(strstr(err.message, "cannot open shared object file"));
}

static void test_not_nvml(void **st)
{
    rpx_nvml *n = NULL;
    rpx_error err = {0, ""};
    (void)st;
    setenv("RPX_NVML_LIBRARY", "libm.so.6", 1);
    assert_int_equal(rpx_nvml_open(&n, &err), RPX_EUNAVAILABLE);
    assert_null(n);
    assert_non_null(strstr(err.message, "nvmlInit_v2 not exported"));
}

static void test_conditions_quiet(void **st)
{
    rpx_nvml *n;
    json_t *warnings = json_array(), *cond;
    (void)st;
    n = open_ok();
    cond = rpx_nvml_conditions(n, warnings);
    /* this process is listed by NVML on GPU 0 but is not "other" */
    assert_json_equal(cond,
                      "[{\"index\": 0, \"visible_ordinal\": 0, \"name\": \"NVIDIA H100 80GB HBM3\","
                      "  \"uuid\": \"GPU-5f8a3c2e-9b1d-4e7a-a6c0-3d2f1e8b7c94\","
                      "  \"other_processes\": [], \"throttle_reasons\": [\"gpu_idle\"],"
                      "  \"unavailable\": {}},"
                      " {\"index\": 1, \"visible_ordinal\": 1, \"name\": \"NVIDIA A100-SXM4-40GB\","
                      "  \"uuid\": \"GPU-5f17d0b2-6c3e-4f58-9e21-7b0c5d9f3a68\","
                      "  \"other_processes\": [], \"throttle_reasons\": [\"gpu_idle\"],"
                      "  \"unavailable\": {}}]");
    assert_int_equal(json_array_size(warnings), 0);
    json_decref(cond);

    /* applications clocks are the user's choice: named, no warning */
    setenv("RPX_STUB_NVML_THROTTLE", "3", 1);
    cond = rpx_nvml_conditions(n, warnings);
    assert_json_equal(json_object_get(json_array_get(cond, 1), "throttle_reasons"),
                      "[\"gpu_idle\", \"applications_clocks_setting\"]");
    assert_int_equal(json_array_size(warnings), 0);
    json_decref(cond);
    json_decref(warnings);
    rpx_nvml_close(n);
}

static void test_conditions_warn(void **st)
{
    rpx_nvml *n;
    json_t *warnings = json_array(), *cond, *g0;
    (void)st;
    setenv("RPX_STUB_NVML_OTHER_PROC", "2", 1);
    setenv("RPX_STUB_NVML_THROTTLE", "0x28", 1); /* hw_slowdown | sw_thermal_slowdown */
    n = open_ok();
    cond = rpx_nvml_conditions(n, warnings);
    g0 = json_array_get(cond, 0);
    assert_json_equal(json_object_get(g0, "other_processes"),
                      "[{\"pid\": 4242, \"used_memory_mb\": 256.0},"
                      " {\"pid\": 4243, \"used_memory_mb\": null}]");
    assert_json_equal(json_object_get(g0, "throttle_reasons"),
                      "[\"hw_slowdown\", \"sw_thermal_slowdown\"]");
    assert_json_equal(json_object_get(json_array_get(cond, 1), "other_processes"), "[]");
    assert_int_equal(json_array_size(warnings), 3);
    assert_int_equal(warnings_containing(warnings, "GPU 0 (NVIDIA H100 80GB HBM3) is also used by "
                                                   "2 other processes (pid 4242: 256 MiB, "
                                                   "pid 4243: memory n/a)"),
                     1);
    assert_int_equal(warnings_containing(warnings, "clocks are held back by hw_slowdown, "
                                                   "sw_thermal_slowdown"),
                     2);
    json_decref(cond);
    json_decref(warnings);
    rpx_nvml_close(n);
}

static void test_conditions_every_reason(void **st)
{
    rpx_nvml *n;
    json_t *warnings = json_array(), *cond;
    (void)st;
    setenv("RPX_STUB_NVML_THROTTLE", "0x5ff", 1); /* all nine known bits and 0x400 */
    setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    n = open_ok();
    cond = rpx_nvml_conditions(n, warnings);
    assert_int_equal(json_array_size(cond), 1);
    assert_json_equal(json_object_get(json_array_get(cond, 0), "throttle_reasons"),
                      "[\"gpu_idle\", \"applications_clocks_setting\", \"sw_power_cap\","
                      " \"hw_slowdown\", \"sync_boost\", \"sw_thermal_slowdown\","
                      " \"hw_thermal_slowdown\", \"hw_power_brake_slowdown\","
                      " \"display_clock_setting\", \"unknown_0x400\"]");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(cond, 0), "index")), 1);
    assert_int_equal(json_array_size(warnings), 1);
    assert_int_equal(warnings_containing(warnings, "GPU 1 (NVIDIA A100-SXM4-40GB): clocks are held "
                                                   "back by sw_power_cap, hw_slowdown"),
                     1);
    assert_int_equal(warnings_containing(warnings, "gpu_idle"), 0);
    json_decref(cond);
    json_decref(warnings);
    rpx_nvml_close(n);
}

static void test_many_processes(void **st)
{
    rpx_nvml *n;
    json_t *cond, *procs;
    (void)st;
    setenv("RPX_STUB_NVML_OTHER_PROC", "40", 1); /* more than the first buffer holds */
    n = open_ok();
    cond = rpx_nvml_conditions(n, NULL);
    procs = json_object_get(json_array_get(cond, 0), "other_processes");
    assert_int_equal(json_array_size(procs), 40);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(procs, 39), "pid")), 4281);
    assert_true(json_number_value(json_object_get(json_array_get(procs, 39), "used_memory_mb")) ==
                40 * 256.0);
    json_decref(cond);
    rpx_nvml_close(n);
}

/* Drivers 535.43-535.86 write 32-byte entries through _v3 (the full stub
 * does): with 13 and more processes a 24-byte layout is overrun and misread. */
static void test_thirteen_processes(void **st)
{
    rpx_nvml *n;
    json_t *cond, *procs;
    int k;
    (void)st;
    setenv("RPX_STUB_NVML_OTHER_PROC", "13", 1); /* 14 entries with this process */
    n = open_ok();
    cond = rpx_nvml_conditions(n, NULL);
    procs = json_object_get(json_array_get(cond, 0), "other_processes");
    assert_int_equal(json_array_size(procs), 13);
    for (k = 0; k < 13; k++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(procs, (size_t)k), "pid")),
                         4242 + k);
    assert_true(json_number_value(json_object_get(json_array_get(procs, 12), "used_memory_mb")) ==
                13 * 256.0);
    json_decref(cond);
    rpx_nvml_close(n);
}

/* NVML watched during the run: nothing read before the first sample; the
 * reasons, clocks and power seen while busy; a warning for sw_power_cap. */
static void test_watch(void **st)
{
    rpx_nvml *n;
    rpx_nvml_watch *w;
    json_t *seen, *warnings, *g0;
    char busy[] = "/tmp/rpx-test-nvml-busy-XXXXXX";
    int fd = mkstemp(busy);
    (void)st;
    assert_true(fd >= 0);
    close(fd);
    setenv("RPX_STUB_NVML_BUSY_FILE", busy, 1);
    setenv("CUDA_VISIBLE_DEVICES", "0", 1);
    n = open_ok();
    w = rpx_nvml_watch_create(n, 0.0);
    assert_non_null(w);
    seen = rpx_nvml_watch_json(w, NULL);
    g0 = json_array_get(seen, 0);
    assert_int_equal(json_array_size(seen), 1);
    assert_int_equal(json_integer_value(json_object_get(g0, "samples")), 0);
    assert_true(json_is_null(json_object_get(g0, "sm_clock_mhz")));
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(g0, "unavailable"),
                                                             "sm_clock_mhz")),
                           "no sample was taken"));
    json_decref(seen);
    assert_int_equal(rpx_nvml_watch_sample(w), 1);
    unlink(busy); /* idle again: the busy sample is remembered */
    assert_int_equal(rpx_nvml_watch_sample(w), 1);
    warnings = json_array();
    seen = rpx_nvml_watch_json(w, warnings);
    assert_json_equal(seen, "[{\"index\": 0, \"visible_ordinal\": 0, \"samples\": 2,"
                            " \"throttle_reasons_seen\": [\"gpu_idle\", \"sw_power_cap\"],"
                            " \"sm_clock_mhz\": {\"min\": 1755, \"max\": 1980},"
                            " \"power_w_max\": 690.0, \"temperature_c_max\": null,"
                            " \"unavailable\": {\"temperature_c_max\":"
                            " \"nvmlDeviceGetTemperature: Unknown Error\"}}]");
    assert_int_equal(json_array_size(warnings), 1);
    assert_non_null(strstr(json_string_value(json_array_get(warnings, 0)),
                           "sw_power_cap (1 of 2 samples)"));
    json_decref(seen);
    json_decref(warnings);
    rpx_nvml_watch_free(w);
    rpx_nvml_close(n);
    assert_null(rpx_nvml_watch_create(NULL, 0.05));
}

static void test_older_driver(void **st)
{
    rpx_nvml *n;
    json_t *gpus, *cond, *g0;
    (void)st;
    setenv("RPX_NVML_LIBRARY", minimal_library, 1);
    setenv("RPX_STUB_NVML_OTHER_PROC", "1", 1);
    setenv("RPX_STUB_NVML_THROTTLE", "0x4", 1);
    n = open_ok();
    gpus = rpx_nvml_gpus(n, NULL);
    g0 = json_array_get(gpus, 0);
    assert_true(json_is_null(json_object_get(g0, "mig_mode")));
    assert_string_equal(json_string_value(json_object_get(json_object_get(g0, "unavailable"),
                                                          "mig_mode")),
                        "nvmlDeviceGetMigMode not exported by this driver");
    assert_nulls_explained(g0);
    /* the older process and throttle entry points are used instead */
    cond = rpx_nvml_conditions(n, NULL);
    assert_json_equal(json_object_get(json_array_get(cond, 0), "other_processes"),
                      "[{\"pid\": 4242, \"used_memory_mb\": 256.0}]");
    assert_json_equal(json_object_get(json_array_get(cond, 0), "throttle_reasons"),
                      "[\"sw_power_cap\"]");
    json_decref(gpus);
    json_decref(cond);
    rpx_nvml_close(n);
}

int main(void)
{
    const char *full = getenv("RPX_NVML_LIBRARY");
    const char *minimal = getenv("RPX_NVML_MINIMAL_LIBRARY");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_two_gpus_exact, reset_env),
        cmocka_unit_test_setup(test_warnings_may_be_null, reset_env),
        cmocka_unit_test_setup(test_null_handle_is_safe, reset_env),
        cmocka_unit_test_setup(test_visible_devices, reset_env),
        cmocka_unit_test_setup(test_mig_devices, reset_env),
        cmocka_unit_test_setup(test_device_order_warning, reset_env),
        cmocka_unit_test_setup(test_no_gpus, reset_env),
        cmocka_unit_test_setup(test_init_failure, reset_env),
        cmocka_unit_test_setup(test_missing_library, reset_env),
        cmocka_unit_test_setup(test_not_nvml, reset_env),
        cmocka_unit_test_setup(test_conditions_quiet, reset_env),
        cmocka_unit_test_setup(test_conditions_warn, reset_env),
        cmocka_unit_test_setup(test_conditions_every_reason, reset_env),
        cmocka_unit_test_setup(test_many_processes, reset_env),
        cmocka_unit_test_setup(test_thirteen_processes, reset_env),
        cmocka_unit_test_setup(test_watch, reset_env),
        cmocka_unit_test_setup(test_older_driver, reset_env),
    };
    if (!full || !*full || !minimal || !*minimal) {
        fprintf(stderr, "RPX_NVML_LIBRARY and RPX_NVML_MINIMAL_LIBRARY must name the stubs\n");
        return 1;
    }
    snprintf(full_library, sizeof full_library, "%s", full);
    snprintf(minimal_library, sizeof minimal_library, "%s", minimal);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
