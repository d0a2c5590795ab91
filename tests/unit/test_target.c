/* Unit tests for src/loader/shared_object.c: --model grammar and loading. */
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
    expect_error("./lib.so:bad-name", RPX_EINVAL, "not a valid function name");
    expect_error("my_model:9lives", RPX_EINVAL, "not a valid function name");
    expect_error("my-model:predict", RPX_EINVAL, "neither a shared object");
    expect_error("a..b:predict", RPX_EINVAL, "neither a shared object");
    expect_error("ftp://u:SECRET@h/x:f", RPX_EUNSUPPORTED,
                 "--model ftp://REDACTED@h/x:f: only http:// and https:// URLs are supported");
    /* the plugins are found next to the test executables; RPX_*_PLUGIN overrides */
    setenv("RPX_PYTHON_PLUGIN", "/nonexistent/librpxprof-python.so", 1);
    expect_error("my_model:predict_depth", RPX_ENOTFOUND, "cannot load the python plugin");
    setenv("RPX_HTTP_PLUGIN", "/nonexistent/librpxprof-http.so", 1);
    expect_error("https://user:pw@example.invalid/predict?api_key=s3cret&n=1", RPX_ENOTFOUND,
                 "--model https://REDACTED@example.invalid/predict?api_key=REDACTED&n=1: "
                 "cannot load the http plugin");
    unsetenv("RPX_PYTHON_PLUGIN");
    unsetenv("RPX_HTTP_PLUGIN");
    expect_error("./nope/libx.so:f", RPX_ENOTFOUND, "cannot load the library");
    /* a bare name is a file in the current folder, never a search of the library path:
     * libc.so.6 exists on every system's path but not here */
    expect_error("libc.so.6:malloc", RPX_ENOTFOUND, "./libc.so.6");
}

static void test_kinds_and_redaction(void **st)
{
    static const struct { const char *spec, *kind; } kinds[] = {
        {"./libm.so:f", "shared_object"}, {"libm.so.6:f", "shared_object"},
        {"rpxprof-demo:demo_depth", "shared_object"}, {"/x/y:f", "shared_object"},
        {"my_model:predict_depth", "python"}, {"pkg.sub.mod:f", "python"},
        {"http://h/p", "http"}, {"https://h:8443/p?q=1", "http"}, {"HTTP://h/p", "http"},
        {"nocolon", "shared_object"}};
    static const struct { const char *in, *out; } redact[] = {
        {"https://h/p", "https://h/p"},
        {"https://u:p@h/p", "https://REDACTED@h/p"},
        {"http://h/p?token=abc&x=1&API_KEY=z#frag", "http://h/p?token=REDACTED&x=1&API_KEY=REDACTED#REDACTED"},
        {"http://h/p?sig=1&signature=2&n=3", "http://h/p?sig=REDACTED&signature=REDACTED&n=3"},
        {"HTTPS://u:SECRET@h/p", "HTTPS://REDACTED@h/p"},
        {"http://user:pa#SECRET@h/x", "http://REDACTED@h/x"},
        {"http://user:pa/SECRET@h/x", "http://REDACTED@h/x"},
        {"http://user:p@ss@h/x", "http://REDACTED@h/x"},
        {"http://h/p?pwd=A&pass=B;token=C&x=1", "http://h/p?pwd=REDACTED&pass=REDACTED;token=REDACTED&x=1"},
        {"http://h/cb#access_token=T", "http://h/cb#REDACTED"},
        {"http://h/p?x=1#access_token=T", "http://h/p?x=1#REDACTED"},
        {"ftp://u:SECRET@h/x:f", "ftp://REDACTED@h/x:f"},
        {"./lib.so:f", "./lib.so:f"}};
    size_t i;
    (void)st;
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        assert_string_equal(rpx_target_kind_name(kinds[i].spec), kinds[i].kind);
    for (i = 0; i < sizeof redact / sizeof redact[0]; i++) {
        char *r = rpx_target_redact_spec(redact[i].in);
        assert_string_equal(r, redact[i].out);
        free(r);
    }
    assert_true(rpx_http_header_is_secret("Authorization"));
    assert_true(rpx_http_header_is_secret("x-api-key"));
    assert_true(rpx_http_header_is_secret("Cookie"));
    assert_true(rpx_http_header_is_secret("X-Auth-Token"));
    assert_false(rpx_http_header_is_secret("Content-Type"));
    assert_false(rpx_http_header_is_secret("X-Request-Id"));
}

static void test_demo_and_symbols(void **st)
{
    rpx_target *t;
    rpx_error err = {0};
    (void)st;
    assert_int_equal(rpx_target_open("rpxprof-demo:demo_depth", &t, &err), 0);
    assert_string_equal(t->kind_name, "shared_object");
    assert_string_equal(t->symbol, "demo_depth");
    assert_non_null(t->hooks.call);
    assert_non_null(t->hooks.setup);
    assert_non_null(t->hooks.teardown);
    rpx_target_close(t);
    assert_int_equal(rpx_target_open("rpxprof-demo:demo_noop", &t, &err), 0);
    assert_null(t->hooks.setup);
    assert_null(t->hooks.teardown);
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

/* The files a spec resolves, without loading anything (the output guard's list). */
static void expect_files(const char *spec, const char *first, size_t n_want)
{
    char **files = (char **)1;
    size_t n = 99, i;
    rpx_error err = {0};
    assert_int_equal(rpx_target_files(spec, &files, &n, &err), 0);
    assert_int_equal(n, n_want);
    if (first) assert_string_equal(files[0], first);
    if (n) assert_null(files[n]);
    for (i = 0; i < n; i++) free(files[i]);
    free(files);
}

static void test_files_of_a_spec(void **st)
{
    (void)st;
    expect_files("./nope/libx.so:f", "./nope/libx.so", 1);
    expect_files("libx.so:f", "libx.so", 1);
    setenv("RPX_DEMO_LIBRARY", "/somewhere/demo.so", 1);
    expect_files("rpxprof-demo:demo_noop", "/somewhere/demo.so", 1);
    unsetenv("RPX_DEMO_LIBRARY");
    setenv("RPX_HTTP_PLUGIN", "/somewhere/http.so", 1);
    expect_files("https://u:p@h/x", "/somewhere/http.so", 1);
    unsetenv("RPX_HTTP_PLUGIN");
    /* the Python plugin cannot be loaded: its own path, and no module files */
    setenv("RPX_PYTHON_PLUGIN", "/nonexistent/py.so", 1);
    expect_files("my_model:predict", "/nonexistent/py.so", 1);
    unsetenv("RPX_PYTHON_PLUGIN");
    expect_files("", NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar_errors),
        cmocka_unit_test(test_kinds_and_redaction),
        cmocka_unit_test(test_demo_and_symbols),
        cmocka_unit_test(test_abi_mismatch),
        cmocka_unit_test(test_setup_failure_message),
        cmocka_unit_test(test_files_of_a_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
