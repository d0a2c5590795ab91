/* test_library_api.c — what moved from the CLI into the library (issue 26 §5)
 * works as a library call, without the CLI: the exit code of a run's status
 * (rpx_runner_exit_code, shared by the CLI and the Python package), the NPZ
 * maker (rpx_npz_maker_*), and the GPU table's spec files and suggestions
 * (rpx_gpu_table_load_all, rpx_gpu_table_suggest). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rpxprof/error.h"
#include "rpxprof/npz.h"
#include "rpxprof/roofline.h"
#include "rpxprof/runner.h"

static void test_exit_codes(void **state)
{
    rpx_runner_result r;
    (void)state;
    memset(&r, 0, sizeof r);
    r.status = RPX_RUNNER_COMPLETE;
    assert_int_equal(rpx_runner_exit_code(&r), 0);
    r.status = RPX_RUNNER_INTERRUPTED;
    r.stop_signal = SIGINT;
    assert_int_equal(rpx_runner_exit_code(&r), 130);
    r.stop_signal = SIGTERM;
    assert_int_equal(rpx_runner_exit_code(&r), 143);
    r.status = RPX_RUNNER_CRASHED;
    assert_int_equal(rpx_runner_exit_code(&r), 3);
    r.status = RPX_RUNNER_TIMED_OUT;
    assert_int_equal(rpx_runner_exit_code(&r), 4);
    r.status = RPX_RUNNER_KILLED;
    assert_int_equal(rpx_runner_exit_code(&r), 5);
    r.status = RPX_RUNNER_CALLS_FAILED;
    assert_int_equal(rpx_runner_exit_code(&r), 6);
}

static void test_npz_maker(void **state)
{
    char dir[] = "/tmp/rpx-maker-XXXXXX", path[256];
    rpx_npz_maker *m = NULL;
    rpx_npz *npz = NULL;
    rpx_error err = {0};
    const rpx_inputs *in;
    uint16_t half;
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/x.npz", dir);
    assert_int_equal(rpx_npz_maker_create(7, &m), 0);
    assert_int_equal(rpx_npz_maker_add(m, "a=2x3:float16=1.5", &err), 0);
    assert_int_equal(rpx_npz_maker_add(m, "b=scalar:uint8=random", &err), 0);
    /* refusals name the spec and the fix */
    assert_int_equal(rpx_npz_maker_add(m, "a=4:int8", &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "'a=4:int8': array 'a' is given twice"));
    assert_int_equal(rpx_npz_maker_add(m, "c=4:int9", &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "unknown dtype 'int9'"));
    assert_int_equal(rpx_npz_maker_add(m, "d=4:uint8=300", &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "does not fit uint8"));
    assert_int_equal(rpx_npz_maker_write(m, path, 0, &err), 0);
    rpx_npz_maker_free(m);
    assert_int_equal(rpx_npz_load(path, &npz, &err), 0);
    in = rpx_npz_inputs(npz);
    assert_int_equal(in->count, 2);
    assert_string_equal(in->tensors[0].name, "a");
    assert_int_equal(in->tensors[0].dtype, RPX_DTYPE_FLOAT16);
    assert_int_equal(in->tensors[0].ndim, 2);
    assert_int_equal(in->tensors[0].shape[1], 3);
    memcpy(&half, in->tensors[0].data, sizeof half);
    assert_int_equal(half, 0x3e00); /* 1.5 in binary16 */
    assert_int_equal(in->tensors[1].ndim, 0);
    rpx_npz_free(npz);
    unlink(path);
    rmdir(dir);
}

static void test_gpu_table_files_and_suggestions(void **state)
{
    rpx_gpu_table *t = NULL;
    rpx_error err = {0};
    const char *missing[] = {"/nonexistent/specs.json"};
    char buf[256];
    (void)state;
    unsetenv("RPX_GPU_SPECS"); /* the caller's environment is not the test's */
    assert_int_equal(rpx_gpu_table_create(&t), 0);
    assert_int_equal(rpx_gpu_table_load_all(t, NULL, 0, &err), 0);
    assert_int_not_equal(rpx_gpu_table_load_all(t, missing, 1, &err), 0);
    assert_non_null(strstr(err.message, "/nonexistent/specs.json"));
    /* a key the text begins: every such key, named */
    rpx_gpu_table_suggest(t, "h100", 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "did you mean"));
    assert_non_null(strstr(buf, "'h100-sxm'"));
    /* a misspelling: the nearest key; host-cpu only when asked */
    rpx_gpu_table_suggest(t, "host-cpy", 1, buf, sizeof buf);
    assert_string_equal(buf, " did you mean 'host-cpu'?");
    rpx_gpu_table_suggest(t, "zzzzzzzzzzzzzzzz", 1, buf, sizeof buf);
    assert_string_equal(buf, "");
    rpx_gpu_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_npz_maker),
        cmocka_unit_test(test_gpu_table_files_and_suggestions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
