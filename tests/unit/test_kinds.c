/* Unit tests for src/loader/kinds.c and kv.c: the table of target kinds (one
 * row per kind, the grammar through it, capabilities and words) and a
 * kind's options as name = value pairs (written by the host, read back by
 * the plugin, an unknown name refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "loader/kinds.h"
#include "loader/kv.h"
#include "rpxprof/error.h"
#include "rpxprof/target.h"

static void test_rows(void **st)
{
    size_t n, i, j;
    const rpx_kind *const *rows = rpx__kinds(&n);
    (void)st;
    assert_int_equal(n, 4);
    for (i = 0; i < n; i++) {
        /* every row opens, says what it is and is found by its name alone */
        assert_non_null(rows[i]->open);
        assert_non_null(rows[i]->words);
        assert_non_null(rows[i]->what);
        assert_ptr_equal(rpx__kind_find(rows[i]->name), rows[i]);
        for (j = i + 1; j < n; j++) assert_string_not_equal(rows[i]->name, rows[j]->name);
    }
    assert_null(rpx__kind_find("nothing"));
    assert_null(rpx__kind_find(NULL));
    /* a caller-made target of no known kind, or none, is treated as a shared object */
    assert_ptr_equal(rpx__kind_named(NULL), &rpx__kind_shared_object);
    assert_ptr_equal(rpx__kind_named("nothing"), &rpx__kind_shared_object);
    assert_ptr_equal(rpx__kind_of_spec(NULL), &rpx__kind_shared_object);
}

static void test_grammar_through_the_table(void **st)
{
    static const struct { const char *spec; const rpx_kind *kind; } cases[] = {
        {"https://h/p", &rpx__kind_http}, {"HtTp://h/p", &rpx__kind_http},
        {"./libm.so:f", &rpx__kind_shared_object}, {"rpxprof-demo:demo_depth", &rpx__kind_shared_object},
        {"nocolon", &rpx__kind_shared_object}, {"my-model:f", &rpx__kind_shared_object},
        {"pkg.mod:f", &rpx__kind_python}, {"ftp://h/x", &rpx__kind_python},
        /* a module's file: two checkouts of one module (issue 36 §5) */
        {"base/mypkg/model.py:predict", &rpx__kind_python}, {"model.py:f", &rpx__kind_python},
        {"./a-b/my-model.py:f", &rpx__kind_python}, {"x/m.pyc:f", &rpx__kind_shared_object},
        /* a model file run by a runtime, by its suffix (issue 39) */
        {"resnet50.onnx", &rpx__kind_model_file}, {"models/net.ONNX", &rpx__kind_model_file},
        {"m/traced.pt", &rpx__kind_model_file}, {"a.torchscript", &rpx__kind_model_file},
        {"./lib.onnx.so:f", &rpx__kind_shared_object}};
    size_t i;
    rpx_target_options opt;
    rpx_target_hooks custom;
    rpx_error err = {0};
    (void)st;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_ptr_equal(rpx__kind_of_spec(cases[i].spec), cases[i].kind);
        assert_string_equal(rpx_target_kind_name(cases[i].spec), cases[i].kind->name);
    }
    /* the URL schemes the rows claim make the message for any other */
    assert_int_equal(rpx_target_check_spec("ftp://h/x:f", &err), RPX_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "only http:// and https:// URLs are supported"));
    /* a caller-made target's kind_name picks its row */
    memset(&opt, 0, sizeof opt);
    memset(&custom, 0, sizeof custom);
    custom.kind_name = "python";
    opt.custom = &custom;
    assert_ptr_equal(rpx__kind_of_target("https://h/p", &opt), &rpx__kind_python);
    assert_ptr_equal(rpx__kind_of_target("https://h/p", NULL), &rpx__kind_http);
}

static void test_suffix_seam(void **st)
{
    /* a model-file kind claims by its file name's ending, in any case */
    static const char *const suffixes[] = {".onnx", ".pt", NULL};
    static const char *const schemes[] = {"grpc://", NULL};
    rpx_kind model_file = {.name = "model_file", .suffixes = suffixes};
    rpx_kind remote = {.name = "grpc", .schemes = schemes};
    (void)st;
    assert_int_equal(rpx__kind_claims(&model_file, "models/net.onnx"), 1);
    assert_int_equal(rpx__kind_claims(&model_file, "NET.PT"), 1);
    assert_int_equal(rpx__kind_claims(&model_file, ".onnx"), 0); /* a suffix alone names no file */
    assert_int_equal(rpx__kind_claims(&model_file, "net.onnx:f"), 0);
    assert_int_equal(rpx__kind_claims(&remote, "GRPC://h:1/m"), 2);
    assert_int_equal(rpx__kind_claims(&remote, "http://h"), 0);
}

static void test_capabilities(void **st)
{
    (void)st;
    assert_true(rpx__kind_has(&rpx__kind_http, RPX_KIND_REMOTE | RPX_KIND_REQUESTS | RPX_KIND_OWN_LOAD));
    assert_false(rpx__kind_has(&rpx__kind_http, RPX_KIND_C_ABI));
    assert_int_equal(rpx__kind_http.default_processes, 1);
    assert_true(rpx__kind_has(&rpx__kind_python, RPX_KIND_INTERPRETER));
    assert_false(rpx__kind_has(&rpx__kind_python, RPX_KIND_REMOTE));
    assert_true(rpx__kind_has(&rpx__kind_shared_object, RPX_KIND_C_ABI));
    assert_false(rpx__kind_has(&rpx__kind_shared_object, RPX_KIND_REQUESTS));
    assert_false(rpx__kind_has(NULL, RPX_KIND_REMOTE));
    assert_non_null(rpx__kind_shared_object.outputs_how);
    assert_null(rpx__kind_http.outputs_how);
    assert_non_null(rpx__kind_http.scope_load);
}

static void test_options_cross_by_name(void **st)
{
    static const char *const headers[] = {"Authorization: Bearer x", "X-A: 1"};
    rpx_target_options in, out;
    rpx_kv_list kv;
    rpx_error err = {0};
    (void)st;
    memset(&in, 0, sizeof in);
    in.inputs_path = "in.npz";
    in.headers = headers;
    in.n_headers = 2;
    in.method = "PUT";
    in.connect_timeout_s = 2.5;
    in.keep_events = -1;
    in.load_rate = 40;
    in.load_seed = 18446744073709551615ULL;
    in.load_drain_s = -1;
    in.http2 = 1;
    in.nonce_field = "meta.id";
    in.bodies_first = 12;
    assert_int_equal(rpx__http_options_write(&in, &kv), 0);
    assert_int_equal(kv.n, 12); /* the fields set, a header each */
    assert_int_equal(rpx__http_options_read(&kv, &out, &err), 0);
    assert_string_equal(out.inputs_path, "in.npz");
    assert_int_equal(out.n_headers, 2);
    assert_string_equal(out.headers[1], "X-A: 1");
    assert_string_equal(out.method, "PUT");
    assert_true(out.connect_timeout_s == 2.5);
    assert_int_equal(out.keep_events, -1);
    assert_true(out.load_rate == 40);
    assert_true(out.load_seed == 18446744073709551615ULL);
    assert_true(out.load_drain_s == -1);
    assert_int_equal(out.http2, 1);
    assert_string_equal(out.nonce_field, "meta.id");
    assert_int_equal(out.bodies_first, 12);
    assert_null(out.body_path);
    assert_null(out.custom);
    free((void *)out.headers);
    free((void *)kv.items);
    {
        const char *text = NULL;
        double x = 0;
        rpx_kv items[] = {{"method", RPX_KV_TEXT, "GET", 0, 0}, {"rate", RPX_KV_NUMBER, NULL, 5, 0}};
        rpx_kv_list two = {items, 2};
        assert_true(rpx__kv_text(&two, "method", &text));
        assert_string_equal(text, "GET");
        assert_true(rpx__kv_number(&two, "rate", &x));
        assert_true(x == 5);
        assert_false(rpx__kv_number(&two, "method", &x)); /* not a number */
        assert_false(rpx__kv_text(&two, "nothing", &text));
    }
}

static void test_unknown_or_mistyped_option_refused(void **st)
{
    rpx_kv bad_name[] = {{"method", RPX_KV_TEXT, "GET", 0, 0}, {"colour", RPX_KV_TEXT, "red", 0, 0}};
    rpx_kv bad_type[] = {{"rate", RPX_KV_TEXT, "fast", 0, 0}};
    rpx_kv_list a = {bad_name, 2}, b = {bad_type, 1};
    rpx_target_options out;
    rpx_error err = {0};
    (void)st;
    assert_int_equal(rpx__http_options_read(&a, &out, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "the http plugin: no option 'colour'; it takes inputs, "));
    memset(&err, 0, sizeof err);
    assert_int_equal(rpx__http_options_read(&b, &out, &err), RPX_EINVAL);
    assert_string_equal(err.message, "the http plugin: option 'rate' takes a number");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_grammar_through_the_table),
        cmocka_unit_test(test_suffix_seam),
        cmocka_unit_test(test_capabilities),
        cmocka_unit_test(test_options_cross_by_name),
        cmocka_unit_test(test_unknown_or_mistyped_option_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
