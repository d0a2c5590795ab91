/* test_cost.c — the cost layer through its public API on models the onnx
 * package wrote (tests/fixtures/onnx/make_onnx_fixtures.py, run as the
 * cost.fixtures_small test): totals and per-node costs against the values the
 * generator computed from the formulas, dynamic dimensions, unsupported
 * operators, external data whose file is gone, the buffer entry point, and a
 * clear error for every malformed file. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"
#include <jansson.h>

#include "rpxprof/cost.h"
#include "rpxprof/error.h"

static char dir[2048];
static json_t *manifest;

static const char *path(const char *rel)
{
    static char buf[4][4096];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", dir, rel);
    return p;
}

static double want(const char *model, const char *key)
{
    json_t *v = json_object_get(json_object_get(manifest, model), key);
    if (!json_is_number(v)) fail_msg("manifest has no %s.%s", model, key);
    return json_number_value(v);
}

static rpx_cost *analyze(const char *rel, const rpx_cost_options *o)
{
    rpx_cost *c = NULL;
    rpx_error err = {0};
    int rc = rpx_cost_analyze_onnx(path(rel), o, &c, &err);
    if (rc) fail_msg("%s: %s (%s)", rel, err.message, rpx_err_name(rc));
    assert_non_null(c);
    return c;
}

static void test_conv_small(void **state)
{
    rpx_cost *c = analyze("good/conv_small.onnx", NULL);
    const rpx_efficiency *e = rpx_cost_efficiency(c);
    json_t *nm = json_object_get(json_object_get(manifest, "conv_small"), "node_macs");
    json_t *nf = json_object_get(json_object_get(manifest, "conv_small"), "node_flops");
    size_t i;
    (void)state;
    assert_int_equal(rpx_cost_node_count(c), (size_t)want("conv_small", "nodes"));
    assert_true(e->params == want("conv_small", "params"));
    assert_true(e->param_bytes == 4 * want("conv_small", "params"));
    assert_true(e->macs == want("conv_small", "macs"));
    assert_true(e->flops == want("conv_small", "flops"));
    assert_true(e->flops_dense == 2 * want("conv_small", "macs"));
    assert_true(e->traffic_bytes_ideal == want("conv_small", "ideal_bytes"));
    assert_false(e->partial);
    assert_true(e->coverage == 1.0);
    assert_false(e->macs_derived);
    assert_false(e->traffic_is_heuristic);
    assert_string_equal(e->traffic_formula, RPX_TRAFFIC_GRAPH);
    assert_string_equal(e->source, "onnx");
    assert_true(fabs(e->intensity_ideal - e->flops / e->traffic_bytes_ideal) < 1e-12);
    for (i = 0; i < rpx_cost_node_count(c); i++) {
        const rpx_cost_node *n = rpx_cost_node_at(c, i);
        assert_true(n->supported);
        assert_null(n->reason);
        assert_true(n->macs == json_number_value(json_array_get(nm, i)));
        assert_true(n->flops == json_number_value(json_array_get(nf, i)));
        assert_int_equal(n->dense, i == 0 || i == 4);
    }
    assert_string_equal(rpx_cost_node_at(c, 0)->op_type, "Conv");
    assert_string_equal(rpx_cost_node_at(c, 0)->name, "conv");
    assert_true(rpx_cost_node_at(c, 0)->bytes_read + rpx_cost_node_at(c, 0)->bytes_written ==
                want("conv_small", "conv_bytes"));
    assert_true(rpx_cost_node_at(c, 0)->params == 8 * 27 + 8);
    assert_true(rpx_cost_node_at(c, 3)->bytes_read == 0); /* Flatten: a view */
    assert_null(rpx_cost_node_at(c, 5));
    rpx_cost_free(c);
}

static void test_precision(void **state)
{
    rpx_cost_options o;
    rpx_cost *c32 = analyze("good/conv_small.onnx", NULL), *c16;
    (void)state;
    rpx_cost_options_init(&o);
    o.precision = "fp16";
    c16 = analyze("good/conv_small.onnx", &o);
    assert_true(rpx_cost_efficiency(c16)->param_bytes * 2 == rpx_cost_efficiency(c32)->param_bytes);
    assert_true(rpx_cost_efficiency(c16)->traffic_bytes_unfused * 2 ==
                rpx_cost_efficiency(c32)->traffic_bytes_unfused);
    assert_true(rpx_cost_efficiency(c16)->flops == rpx_cost_efficiency(c32)->flops);
    rpx_cost_free(c16);
    o.precision = "fp7";
    {
        rpx_cost *bad = NULL;
        rpx_error err = {0};
        assert_int_equal(rpx_cost_analyze_onnx(path("good/conv_small.onnx"), &o, &bad, &err), RPX_EINVAL);
        assert_null(bad);
        assert_non_null(strstr(err.message, "fp7"));
    }
    rpx_cost_free(c32);
}

static void test_dynamic(void **state)
{
    rpx_cost_options o;
    rpx_cost *c = NULL;
    rpx_error err = {0};
    const char *dims[] = {"batch=3"}, *shapes[] = {"x=5x4"}, *wrong[] = {"x=5x5"};
    (void)state;
    rpx_cost_options_init(&o);
    /* unbound: an error that names the dimension, never a count with N = 0 or 1 */
    assert_int_equal(rpx_cost_analyze_onnx(path("good/dynamic.onnx"), &o, &c, &err), RPX_EINVAL);
    assert_null(c);
    assert_non_null(strstr(err.message, "'batch'"));
    assert_non_null(strstr(err.message, "--dim batch=N"));
    assert_non_null(strstr(err.message, "dynamic.onnx"));
    o.dims = dims;
    o.n_dims = 1;
    c = analyze("good/dynamic.onnx", &o);
    assert_true(rpx_cost_efficiency(c)->flops == 3 * want("dynamic", "flops_per_batch"));
    rpx_cost_free(c);
    rpx_cost_options_init(&o);
    o.input_shapes = shapes;
    o.n_input_shapes = 1;
    c = analyze("good/dynamic.onnx", &o);
    assert_true(rpx_cost_efficiency(c)->flops == 5 * want("dynamic", "flops_per_batch"));
    rpx_cost_free(c);
    o.input_shapes = wrong; /* dimension 1 is fixed at 4 */
    c = NULL;
    assert_int_equal(rpx_cost_analyze_onnx(path("good/dynamic.onnx"), &o, &c, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "fixed at 4"));
}

static void test_unsupported(void **state)
{
    rpx_cost *c = analyze("good/unsupported.onnx", NULL);
    const rpx_efficiency *e = rpx_cost_efficiency(c);
    size_t i, costed = 0;
    json_t *j;
    (void)state;
    assert_int_equal(rpx_cost_node_count(c), (size_t)want("unsupported", "nodes"));
    for (i = 0; i < rpx_cost_node_count(c); i++) {
        const rpx_cost_node *n = rpx_cost_node_at(c, i);
        if (n->supported) {
            costed++;
            continue;
        }
        assert_non_null(n->reason);
        assert_true(isnan(n->flops)); /* unknown, never 0 */
        assert_true(isnan(n->macs));
    }
    assert_int_equal(costed, (size_t)want("unsupported", "costed"));
    assert_true(e->partial);
    assert_true(e->coverage == want("unsupported", "costed") / want("unsupported", "nodes"));
    assert_true(e->flops == want("unsupported", "flops"));
    j = rpx_cost_json(c, 1);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "unsupported")), 3);
    assert_true(json_is_true(json_object_get(j, "partial")));
    assert_int_equal(json_array_size(json_object_get(j, "nodes")), 4);
    json_decref(j);
    rpx_cost_free(c);
}

static void test_matmul_broadcast(void **state)
{
    rpx_cost *c = analyze("good/matmul_broadcast.onnx", NULL);
    (void)state;
    assert_true(rpx_cost_efficiency(c)->macs == want("matmul_broadcast", "macs"));
    rpx_cost_free(c);
}

static void test_external_missing(void **state)
{
    rpx_cost *c = analyze("good/external.onnx", NULL);
    (void)state;
    assert_true(rpx_cost_efficiency(c)->params == want("external", "params"));
    assert_true(rpx_cost_efficiency(c)->macs == want("external", "macs"));
    rpx_cost_free(c);
}

static unsigned char *slurp(const char *p, size_t *len)
{
    return rpx_test_slurp(p, len);
}

static void test_buffer_matches_file(void **state)
{
    size_t len;
    unsigned char *data = slurp(path("good/conv_small.onnx"), &len);
    rpx_cost *a = analyze("good/conv_small.onnx", NULL), *b = NULL;
    rpx_error err = {0};
    json_t *ja, *jb;
    (void)state;
    assert_int_equal(rpx_cost_analyze_onnx_buffer(data, len, "mem.onnx", NULL, &b, &err), 0);
    ja = rpx_cost_json(a, 1);
    jb = rpx_cost_json(b, 1);
    json_object_del(json_object_get(ja, "model"), "path");
    json_object_del(json_object_get(jb, "model"), "path");
    assert_true(json_equal(ja, jb));
    json_decref(ja);
    json_decref(jb);
    rpx_cost_free(a);
    rpx_cost_free(b);
    /* every prefix of a valid file: an error or a result, never a crash */
    {
        size_t cut;
        for (cut = 0; cut < len; cut += 7) {
            rpx_cost *p = NULL;
            int rc = rpx_cost_analyze_onnx_buffer(data, cut, "cut.onnx", NULL, &p, &err);
            if (rc == 0) rpx_cost_free(p);
            else assert_non_null(strstr(err.message, "cut.onnx"));
        }
    }
    free(data);
}

/* the file reader (a window over the file, large tensors skipped) against the
 * in-memory reader, and files cut short at many points */
static void test_file_reader(void **state)
{
    size_t len, cuts[] = {1, 2, 100, 0, 0, 0, 0}, i;
    unsigned char *data = slurp(path("good/embedded.onnx"), &len);
    rpx_cost *a = analyze("good/embedded.onnx", NULL), *b = NULL;
    rpx_error err = {0};
    json_t *ja, *jb, *nodes;
    char tmp[] = "/tmp/rpx_test_cost_XXXXXX";
    int fd;
    (void)state;
    assert_true(len > 1000000);
    assert_true(rpx_cost_efficiency(a)->params == want("embedded", "params"));
    assert_true(rpx_cost_efficiency(a)->macs == want("embedded", "macs"));
    assert_int_equal(rpx_cost_analyze_onnx_buffer(data, len, "mem.onnx", NULL, &b, &err), 0);
    ja = rpx_cost_json(a, 1);
    jb = rpx_cost_json(b, 1);
    nodes = json_object_get(ja, "nodes");
    {
        json_t *reshape = json_array_get(nodes, 2);
        json_t *shape = json_object_get(json_array_get(json_object_get(reshape, "outputs"), 0), "shape");
        json_t *expect = json_object_get(json_object_get(manifest, "embedded"), "reshape");
        assert_string_equal(json_string_value(json_object_get(reshape, "op_type")), "Reshape");
        assert_true(json_equal(shape, expect));
    }
    json_object_del(json_object_get(ja, "model"), "path");
    json_object_del(json_object_get(jb, "model"), "path");
    assert_true(json_equal(ja, jb));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(ja, "model"),
                                                        "weight_tensors_left_in_file")), 1);
    json_decref(ja);
    json_decref(jb);
    rpx_cost_free(a);
    rpx_cost_free(b);
    cuts[3] = len / 3;
    cuts[4] = len / 2;
    cuts[5] = len - 300;
    cuts[6] = len - 1;
    fd = mkstemp(tmp);
    assert_true(fd >= 0);
    for (i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        rpx_cost *c = NULL;
        int rc;
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(pwrite(fd, data, cuts[i], 0), (ssize_t)cuts[i]);
        rc = rpx_cost_analyze_onnx(tmp, NULL, &c, &err);
        if (rc == 0) fail_msg("cut at %zu of %zu: accepted", cuts[i], len);
        assert_null(c);
        assert_int_equal(rc, RPX_EFORMAT);
        assert_non_null(strstr(err.message, tmp));
    }
    close(fd);
    unlink(tmp);
    free(data);
}

static void test_bad_files(void **state)
{
    json_t *bad = json_object_get(manifest, "bad"), *v;
    const char *name;
    (void)state;
    assert_true(json_object_size(bad) >= 8);
    json_object_foreach(bad, name, v) {
        char rel[256];
        rpx_cost *c = NULL;
        rpx_error err = {0};
        int rc;
        snprintf(rel, sizeof rel, "bad/%s.onnx", name);
        rc = rpx_cost_analyze_onnx(path(rel), NULL, &c, &err);
        if (rc == 0) fail_msg("%s: accepted", rel);
        assert_null(c);
        if (!strstr(err.message, json_string_value(json_array_get(v, 0))))
            fail_msg("%s: message '%s' lacks '%s'", rel, err.message,
                     json_string_value(json_array_get(v, 0)));
        assert_string_equal(rpx_err_name(rc), json_string_value(json_array_get(v, 1)));
        assert_non_null(strstr(err.message, rel)); /* names the file */
    }
    {
        rpx_cost *c = NULL;
        rpx_error err = {0};
        assert_int_equal(rpx_cost_analyze_onnx(path("good/no-such.onnx"), NULL, &c, &err), RPX_EIO);
        assert_non_null(strstr(err.message, "no-such.onnx"));
    }
}

static void test_efficiency(void **state)
{
    rpx_efficiency e;
    json_t *j;
    (void)state;
    rpx_efficiency_init(&e);
    assert_string_equal(e.model_type, "local");
    assert_null(e.source);
    assert_true(isnan(e.params) && isnan(e.flops) && isnan(e.macs) && isnan(e.coverage));
    j = rpx_efficiency_json(&e);
    assert_true(json_is_null(json_object_get(j, "flops")));
    assert_true(json_is_null(json_object_get(j, "source")));
    assert_true(json_is_false(json_object_get(j, "partial")));
    json_decref(j);

    /* declared flops only: macs = flops / 2. Declared params give no traffic
     * (issue 26): rpxprof's reports use one formula, the graph's; the
     * reference's 3 x parameter bytes is rpxprof.reference's derive_tier1 only */
    e.source = "declared";
    e.flops = 1e9;
    e.param_bytes = 4e6;
    rpx_efficiency_derive(&e);
    assert_true(e.macs == 5e8);
    assert_true(e.macs_derived);
    assert_true(isnan(e.traffic_bytes_ideal));
    assert_false(e.traffic_is_heuristic);
    assert_null(e.traffic_formula);
    assert_true(isnan(e.traffic_bytes_unfused));
    assert_true(isnan(e.intensity_ideal));
    assert_true(isnan(e.intensity_unfused));
    j = rpx_efficiency_json(&e);
    assert_int_equal(json_integer_value(json_object_get(j, "macs")), 500000000);
    assert_true(json_is_false(json_object_get(j, "traffic_is_heuristic")));
    assert_true(json_is_null(json_object_get(j, "traffic_formula")));
    assert_true(json_is_null(json_object_get(j, "traffic_bytes_ideal")));
    json_decref(j);

    /* something better than the floor is known: no heuristic; macs kept */
    rpx_efficiency_init(&e);
    e.flops = 10;
    e.macs = 4;
    e.param_bytes = 100;
    e.traffic_bytes_unfused = 20;
    rpx_efficiency_derive(&e);
    assert_false(e.traffic_is_heuristic);
    assert_false(e.macs_derived);
    assert_true(e.macs == 4);
    assert_true(isnan(e.traffic_bytes_ideal));
    assert_true(e.intensity_unfused == 0.5);

    /* nothing known: nothing derived */
    rpx_efficiency_init(&e);
    rpx_efficiency_derive(&e);
    assert_true(isnan(e.macs) && isnan(e.traffic_bytes_ideal) && isnan(e.intensity_ideal));

    /* an API model: all unknown, whatever was declared */
    rpx_efficiency_init(&e);
    e.model_type = "api";
    e.flops = 1e9;
    e.params = 7;
    rpx_efficiency_derive(&e);
    assert_string_equal(e.model_type, "api");
    assert_true(isnan(e.flops) && isnan(e.params) && isnan(e.macs) && isnan(e.traffic_bytes_ideal));
    j = rpx_efficiency_json(&e);
    assert_string_equal(json_string_value(json_object_get(j, "model_type")), "api");
    assert_true(json_is_null(json_object_get(j, "params")));
    json_decref(j);
}

int main(void)
{
    const char *f = getenv("RPX_FIXTURES");
    json_error_t je;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_efficiency),
        cmocka_unit_test(test_conv_small),
        cmocka_unit_test(test_precision),
        cmocka_unit_test(test_dynamic),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_matmul_broadcast),
        cmocka_unit_test(test_external_missing),
        cmocka_unit_test(test_buffer_matches_file),
        cmocka_unit_test(test_file_reader),
        cmocka_unit_test(test_bad_files),
    };
    int rc;
    if (!f) {
        fprintf(stderr, "test_cost: RPX_FIXTURES is not set (run through ctest)\n");
        return 1;
    }
    snprintf(dir, sizeof dir, "%s/onnx_small", f);
    manifest = json_load_file(path("manifest.json"), 0, &je);
    if (!manifest) {
        fprintf(stderr, "test_cost: %s: %s (run the cost.fixtures_small test first)\n",
                path("manifest.json"), je.text);
        return 1;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    json_decref(manifest);
    return rc;
}
