/* Unit tests for src/target/shared_object.c: --model grammar and loading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "rpxprof/target.h"

static void expect_error(const char *spec, int code, const char *text)
{
    rpx_target *t = (rpx_target *)1;
    rpx_error err = {0};
    assert_int_equal(rpx_target_open(spec, &t, &err), code);
    assert_null(t);
    if (!strstr(err.message, text)) fail_msg("'%s' not in '%s'", text, err.message);
}

static void test_grammar_errors(void **st)
{
    (void)st;
    expect_error("", RPX_EINVAL, "--model is empty");
    expect_error("nocolon", RPX_EINVAL, "missing ':SYMBOL'");
    expect_error("./lib.so:", RPX_EINVAL, "missing ':SYMBOL'");
    expect_error("./lib.so:bad-name", RPX_EINVAL, "not a valid C symbol");
    expect_error("my_model:predict_depth", RPX_EUNSUPPORTED, "Python callables");
    expect_error("https://example.invalid/predict", RPX_EUNSUPPORTED, "HTTP API");
    expect_error("./nope/libx.so:f", RPX_ENOTFOUND, "cannot load the library");
    /* a bare name is a file in the current folder, never a search of the library path:
     * libc.so.6 exists on every system's path but not here */
    expect_error("libc.so.6:malloc", RPX_ENOTFOUND, "./libc.so.6");
}

static void test_demo_and_symbols(void **st)
{
    rpx_target *t;
    rpx_error err = {0};
    (void)st;
    assert_int_equal(rpx_target_open("rpxprof-demo:demo_depth", &t, &err), 0);
    assert_string_equal(t->kind_name, "shared_object");
    assert_string_equal(t->symbol, "demo_depth");
    assert_non_null(t->call);
    assert_non_null(t->setup_fn);
    assert_non_null(t->teardown_fn);
    rpx_target_close(t);
    assert_int_equal(rpx_target_open("rpxprof-demo:demo_noop", &t, &err), 0);
    assert_null(t->setup_fn);
    assert_null(t->teardown_fn);
    rpx_target_close(t);
    expect_error("rpxprof-demo:missing_fn", RPX_ENOTFOUND, "has no symbol 'missing_fn'");
}

static void test_abi_mismatch(void **st)
{
    char spec[1024];
    const char *dir = getenv("RPX_TEST_MODELS");
    (void)st;
    assert_non_null(dir);
    snprintf(spec, sizeof spec, "%s/librpxtest_bad_abi.so:predict", dir);
    expect_error(spec, RPX_EABI, "ABI version 999");
}

static void test_setup_failure_message(void **st)
{
    char spec[1024];
    const char *dir = getenv("RPX_TEST_MODELS");
    rpx_target *t;
    rpx_error err = {0};
    rpx_inputs in = {0, NULL};
    (void)st;
    snprintf(spec, sizeof spec, "%s/librpxtest_models.so:fail_setup", dir);
    assert_int_equal(rpx_target_open(spec, &t, &err), 0);
    assert_int_equal(rpx_target_setup(t, &in, NULL, &err), RPX_EMODEL);
    assert_non_null(strstr(err.message, "weights file /nonexistent/weights.bin not found"));
    rpx_target_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar_errors),
        cmocka_unit_test(test_demo_and_symbols),
        cmocka_unit_test(test_abi_mismatch),
        cmocka_unit_test(test_setup_failure_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
