/* test_roofline.c — the spec table, peak selection, the bounds (the
 * reference's worked numbers exactly), user spec files, device-name matching,
 * the real-time budget and the SVG picture. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "rpxprof/error.h"
#include "common/json.h"
#include "rpxprof/roofline.h"

static const rpx_gpu_spec *builtin(const char *key)
{
    size_t i;
    for (i = 0; i < rpx_gpu_builtin_count(); i++)
        if (strcmp(rpx_gpu_builtin_at(i)->key, key) == 0) return rpx_gpu_builtin_at(i);
    fail_msg("no built-in entry '%s'", key);
    return NULL;
}

static double round1(double v)
{
    return round(v * 10.0) / 10.0;
}

/* ---- the reference's worked numbers ---- */

static void test_worked_numbers(void **state)
{
    rpx_bound b;
    rpx_error err = {0};
    (void)state;
    /* 100 GFLOP at 10 TFLOP/s: 10 ms, compute-bound */
    assert_int_equal(rpx_roofline_bound(100e9, 1e9, 10, 1000, &b, &err), 0);
    assert_true(b.compute_ms == 10.0);
    assert_true(b.latency_ms == 10.0);
    assert_string_equal(b.bottleneck, "compute");
    /* 1 GB at 100 GB/s: 10 ms, memory-bound */
    assert_int_equal(rpx_roofline_bound(1e9, 1e9, 10, 100, &b, &err), 0);
    assert_true(b.memory_ms == 10.0);
    assert_true(b.latency_ms == 10.0);
    assert_string_equal(b.bottleneck, "memory");
    assert_true(b.arithmetic_intensity == 1.0);
    assert_true(b.ridge_point == 100.0);
}

static void ref_case(const char *key, const char *name, double tflops, double gbps,
                     double expect_ms)
{
    const rpx_gpu_spec *g = builtin(key);
    rpx_peak pk;
    rpx_bound b;
    assert_string_equal(g->name, name);
    assert_true(g->peak_tflops[RPX_PREC_FP32][RPX_UNIT_VECTOR] == tflops);
    assert_true(g->memory_bandwidth_gbps == gbps);
    assert_int_equal(rpx_gpu_peak(g, RPX_PREC_FP32, 1, 0, &pk), 0);
    assert_true(pk.tflops == tflops);
    assert_int_equal(rpx_roofline_bound(4878.9e9, 1e8, pk.tflops, g->memory_bandwidth_gbps, &b,
                                        NULL),
                     0);
    assert_string_equal(b.bottleneck, "compute");
    assert_true(round1(b.latency_ms) == expect_ms);
}

static void test_reference_entries(void **state)
{
    rpx_bound b;
    (void)state;
    ref_case("ref-a100-80gb", "A100-80GB", 19.5, 2039, 250.2);
    ref_case("ref-rtx4090", "RTX 4090", 82.6, 1008, 59.1);
    ref_case("ref-jetson-orin-64gb", "Jetson Orin 64GB", 5.3, 204.8, 920.5);
    /* no rounding: 4878.9e9 / 19.5 TFLOP/s is the double nearest 250.2 */
    assert_int_equal(rpx_roofline_bound(4878.9e9, 0, 19.5, 2039, &b, NULL), 0);
    assert_true(b.compute_ms == 250.2);
}

/* issue 26: every ref-* entry's label states the numbers the entry holds (the
 * label said 82.58 TFLOP/s beside the reference's 82.6), and its worked example */
static void test_reference_labels_agree_with_values(void **state)
{
    size_t i, n = 0;
    (void)state;
    for (i = 0; i < rpx_gpu_builtin_count(); i++) {
        const rpx_gpu_spec *g = rpx_gpu_builtin_at(i);
        const char *p;
        double tflops = 0, gbps = 0, gflop = 0, ms = 0;
        rpx_bound b;
        if (strncmp(g->key, "ref-", 4) != 0) continue;
        n++;
        p = strstr(g->source, "REFERENCE_GPUS table: ");
        assert_non_null(p);
        assert_int_equal(sscanf(p, "REFERENCE_GPUS table: %lf TFLOP/s fp32 and %lf GB/s",
                                &tflops, &gbps), 2);
        assert_true(tflops == g->peak_tflops[RPX_PREC_FP32][RPX_UNIT_VECTOR]);
        assert_true(gbps == g->memory_bandwidth_gbps);
        p = strstr(g->source, "worked example ");
        assert_non_null(p);
        assert_int_equal(sscanf(p, "worked example %lf GFLOP -> %lf ms", &gflop, &ms), 2);
        assert_int_equal(rpx_roofline_bound(gflop * 1e9, 0, tflops, gbps, &b, NULL), 0);
        assert_true(round1(b.compute_ms) == ms);
        /* the reference's memory_gb, so rpxprof.reference builds GPUSpec from this table */
        assert_false(isnan(g->memory_gb));
        /* only fp32: every other peak is unknown */
        for (int p2 = 0; p2 < RPX_PREC_COUNT; p2++)
            for (int u = 0; u < RPX_UNIT_COUNT; u++)
                if (!(p2 == RPX_PREC_FP32 && u == RPX_UNIT_VECTOR))
                    assert_true(isnan(g->peak_tflops[p2][u]));
    }
    assert_int_equal(n, 3);
}

static void test_tie_is_compute(void **state)
{
    rpx_bound b;
    (void)state;
    assert_int_equal(rpx_roofline_bound(1e12, 1e9, 100, 100, &b, NULL), 0);
    assert_true(b.compute_ms == b.memory_ms);
    assert_string_equal(b.bottleneck, "compute");
}

static void test_bound_invalid_and_partial(void **state)
{
    rpx_bound b;
    rpx_error err = {0};
    (void)state;
    assert_int_equal(rpx_roofline_bound(-1, 1, 1, 1, &b, &err), RPX_EINVAL);
    assert_int_equal(rpx_roofline_bound(1, 1, 0, 1, &b, &err), RPX_EINVAL);
    assert_int_equal(rpx_roofline_bound(1, 1, 1, -5, &b, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "bandwidth"));
    /* unknown bandwidth: compute only, no bottleneck claimed */
    assert_int_equal(rpx_roofline_bound(1e12, 1e9, 1, NAN, &b, &err), 0);
    assert_true(b.latency_ms == 1000.0);
    assert_true(isnan(b.memory_ms));
    assert_null(b.bottleneck);
}

/* ---- peak selection ---- */

static void test_precision_selection(void **state)
{
    rpx_peak pk;
    (void)state;
    /* fp16 on an H100 uses the dense FP16 tensor-core peak (1,979 sparse / 2) */
    assert_int_equal(rpx_gpu_peak(builtin("h100-sxm"), RPX_PREC_FP16, 1, 0, &pk), 0);
    assert_true(pk.tflops == 989.5);
    assert_int_equal(pk.unit, RPX_UNIT_TENSOR);
    assert_non_null(strstr(pk.label, "tensor core"));
    /* fp32 uses the non-tensor FP32 peak ... */
    assert_int_equal(rpx_gpu_peak(builtin("h100-sxm"), RPX_PREC_FP32, 1, 0, &pk), 0);
    assert_true(pk.tflops == 67);
    assert_int_equal(pk.unit, RPX_UNIT_VECTOR);
    assert_int_equal(pk.precision, RPX_PREC_FP32);
    assert_string_equal(pk.reason, "");
    /* ... unless --tf32 */
    assert_int_equal(rpx_gpu_peak(builtin("h100-sxm"), RPX_PREC_FP32, 1, 1, &pk), 0);
    assert_true(pk.tflops == 494.5);
    assert_int_equal(pk.precision, RPX_PREC_TF32);
    assert_int_equal(pk.unit, RPX_UNIT_TENSOR);
    /* precision tf32 is fp32 data with tf32 set; other nodes stay on fp32 vector */
    assert_int_equal(rpx_gpu_peak(builtin("a100-sxm-80gb"), RPX_PREC_TF32, 1, 0, &pk), 0);
    assert_true(pk.tflops == 156);
    assert_int_equal(rpx_gpu_peak(builtin("a100-sxm-80gb"), RPX_PREC_TF32, 0, 0, &pk), 0);
    assert_true(pk.tflops == 19.5);
    /* other nodes use the vector peak where the table has it */
    assert_int_equal(rpx_gpu_peak(builtin("a100-sxm-80gb"), RPX_PREC_FP16, 0, 0, &pk), 0);
    assert_true(pk.tflops == 78);
    assert_int_equal(pk.unit, RPX_UNIT_VECTOR);
    /* ... else the tensor peak, with a note */
    assert_int_equal(rpx_gpu_peak(builtin("h200-sxm"), RPX_PREC_FP16, 0, 0, &pk), 0);
    assert_true(pk.tflops == 989.5);
    assert_int_equal(pk.unit, RPX_UNIT_TENSOR);
    assert_non_null(strstr(pk.reason, "no fp16 vector peak"));
    /* AMD matrix cores run fp32 natively: fp32 dense ops use them */
    assert_int_equal(rpx_gpu_peak(builtin("mi250x"), RPX_PREC_FP32, 1, 0, &pk), 0);
    assert_true(pk.tflops == 95.7);
    assert_non_null(strstr(pk.label, "matrix core"));
    assert_int_equal(rpx_gpu_peak(builtin("mi250x"), RPX_PREC_FP32, 0, 0, &pk), 0);
    assert_true(pk.tflops == 47.9);
    /* --tf32 on a GPU without TF32 falls back to fp32 and says so */
    assert_int_equal(rpx_gpu_peak(builtin("v100-sxm2"), RPX_PREC_FP32, 1, 1, &pk), 0);
    assert_true(pk.tflops == 15.7);
    assert_non_null(strstr(pk.reason, "no TF32"));
    /* sparse datasheet figures are halved: L4 prints 242* for FP16 */
    assert_int_equal(rpx_gpu_peak(builtin("l4"), RPX_PREC_FP16, 1, 0, &pk), 0);
    assert_true(pk.tflops == 121);
}

static void test_missing_precision(void **state)
{
    rpx_peak pk;
    rpx_roofline_input in;
    json_t *r;
    const char *reason;
    (void)state;
    assert_int_equal(rpx_gpu_peak(builtin("a100-sxm-80gb"), RPX_PREC_FP8, 1, 0, &pk),
                     RPX_ENOTFOUND);
    assert_true(isnan(pk.tflops));
    assert_non_null(strstr(pk.reason, "a100-sxm-80gb"));
    assert_non_null(strstr(pk.reason, "no fp8 peak"));
    assert_non_null(strstr(pk.reason, "FP8"));
    /* in the report: the bound is null (never 0) with the reason */
    rpx_roofline_input_init(&in);
    in.flops = 1e12;
    in.bytes = 1e9;
    in.precision = RPX_PREC_FP8;
    r = rpx_roofline_json(builtin("a100-sxm-80gb"), &in);
    assert_non_null(r);
    assert_true(json_is_null(json_object_get(r, "ideal")));
    assert_true(json_is_null(json_object_get(json_object_get(r, "peak_dense"), "tflops")));
    reason = json_string_value(json_object_get(r, "reason"));
    assert_non_null(reason);
    assert_non_null(strstr(reason, "no fp8 peak"));
    json_decref(r);
}

/* ---- the table itself ---- */

static void test_every_entry_has_a_source(void **state)
{
    size_t i, j;
    static const char *const required[] = {
        "h200-sxm", "h100-sxm", "h100-pcie", "h100-nvl", "b200", "a100-sxm-80gb",
        "a100-pcie-40gb", "a100-pcie-80gb", "l40s", "l4", "a10", "a30", "t4", "v100-sxm2",
        "rtx-4090", "rtx-4080", "rtx-3090", "rtx-a6000", "rtx-6000-ada",
        "jetson-agx-orin-64gb", "jetson-orin-nano-8gb", "mi300x", "mi250x", "ref-a100-80gb",
        "ref-rtx4090", "ref-jetson-orin-64gb"};
    (void)state;
    assert_true(rpx_gpu_builtin_count() >= sizeof required / sizeof required[0]);
    for (i = 0; i < sizeof required / sizeof required[0]; i++) builtin(required[i]);
    for (i = 0; i < rpx_gpu_builtin_count(); i++) {
        const rpx_gpu_spec *g = rpx_gpu_builtin_at(i);
        int p, u, peaks = 0;
        assert_non_null(g->key);
        assert_non_null(g->name);
        assert_non_null(g->vendor);
        assert_non_null(g->source);
        if (strlen(g->source) < 20) fail_msg("%s: source too short: '%s'", g->key, g->source);
        /* a title and a year (or the reference tool, rpx_benchmark, whose table it is) */
        if (!strstr(g->source, "20") && !strstr(g->source, "rpx_benchmark"))
            fail_msg("%s: source has no date: '%s'", g->key, g->source);
        assert_true(g->memory_bandwidth_gbps > 0);
        for (p = 0; p < RPX_PREC_COUNT; p++)
            for (u = 0; u < RPX_UNIT_COUNT; u++) {
                double v = g->peak_tflops[p][u];
                if (isnan(v)) continue;
                if (!(v > 0)) fail_msg("%s: a peak is %g; a missing one must be NaN", g->key, v);
                peaks++;
            }
        assert_true(peaks > 0);
        /* whatever is missing at fp32 must be explained */
        if (isnan(g->peak_tflops[RPX_PREC_FP8][RPX_UNIT_TENSOR]) && !g->notes)
            fail_msg("%s: fp8 missing without notes", g->key);
        for (j = 0; j < i; j++)
            if (strcmp(rpx_gpu_builtin_at(j)->key, g->key) == 0)
                fail_msg("duplicate key %s", g->key);
    }
}

static void test_spec_json(void **state)
{
    json_t *o = rpx_gpu_spec_json(builtin("a100-sxm-80gb"));
    json_t *pk;
    (void)state;
    assert_non_null(o);
    pk = json_object_get(json_object_get(o, "peak_tflops"), "fp8");
    assert_true(json_is_null(json_object_get(pk, "tensor")));
    pk = json_object_get(json_object_get(o, "peak_tflops"), "fp16");
    assert_true(json_real_value(json_object_get(pk, "tensor")) == 312);
    assert_true(json_real_value(json_object_get(pk, "vector")) == 78);
    assert_int_equal(json_integer_value(json_object_get(o, "sm_count")), 108);
    assert_non_null(json_string_value(json_object_get(o, "source")));
    json_decref(o);
}

/* ---- name matching ---- */

static void test_name_matching(void **state)
{
    static const struct {
        const char *name, *key;
    } cases[] = {
        {"NVIDIA H100 80GB HBM3", "h100-sxm"},
        {"NVIDIA H100 PCIe", "h100-pcie"},
        {"NVIDIA H100 NVL", "h100-nvl"},
        {"NVIDIA H200", "h200-sxm"},
        {"NVIDIA B200", "b200"},
        {"NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"},
        {"NVIDIA A100-SXM4-40GB", "a100-sxm-40gb"},
        {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
        {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
        {"NVIDIA L40S", "l40s"},
        {"NVIDIA L4", "l4"},
        {"NVIDIA A10", "a10"},
        {"NVIDIA A30", "a30"},
        {"Tesla T4", "t4"},
        {"Tesla V100-SXM2-32GB", "v100-sxm2"},
        {"Tesla V100-SXM2-16GB", "v100-sxm2"},
        {"NVIDIA GeForce RTX 4090", "rtx-4090"},
        {"NVIDIA GeForce RTX 4080", "rtx-4080"},
        {"NVIDIA GeForce RTX 3090", "rtx-3090"},
        {"NVIDIA RTX A6000", "rtx-a6000"},
        {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
        {"NVIDIA Jetson AGX Orin 64GB", "jetson-agx-orin-64gb"},
        {"NVIDIA Jetson Orin Nano Developer Kit", "jetson-orin-nano-8gb"},
        {"AMD Instinct MI300X", "mi300x"},
        {"AMD Instinct MI250X", "mi250x"},
        {"A100-80GB", "ref-a100-80gb"}, /* an exact name wins */
        {"nvidia geforce rtx 4090", "rtx-4090"},
        {"NVIDIA A10G", NULL},
        {"NVIDIA GeForce RTX 4090 Laptop GPU", NULL},
        {"NVIDIA GeForce RTX 3090 Ti", NULL},
        {"NVIDIA GeForce RTX 4080 SUPER", NULL},
        {"NVIDIA H200 NVL", NULL},
        {"AMD Instinct MI250", NULL},
        {"NVIDIA GeForce GTX 1080", NULL},
        {"", NULL},
    };
    rpx_gpu_table *t;
    size_t i;
    (void)state;
    assert_int_equal(rpx_gpu_table_create(&t), 0);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const rpx_gpu_spec *g = rpx_gpu_table_match_name(t, cases[i].name);
        if (!cases[i].key && g) fail_msg("'%s' matched %s, expected none", cases[i].name, g->key);
        if (cases[i].key && (!g || strcmp(g->key, cases[i].key) != 0))
            fail_msg("'%s' matched %s, expected %s", cases[i].name, g ? g->key : "nothing",
                     cases[i].key);
    }
    assert_null(rpx_gpu_table_match_name(t, NULL));
    assert_int_equal(rpx_gpu_pattern_match("h100 hbm3 !nvl|h100 sxm5", "NVIDIA H100 SXM5"), 2);
    assert_int_equal(rpx_gpu_pattern_match("h100 hbm3 !nvl", "NVIDIA H100 NVL HBM3"), 0);
    rpx_gpu_table_free(t);
}

/* ---- user spec files ---- */

static char tmpdir[256];

static const char *write_tmp(const char *name, const char *text)
{
    static char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_spec_file_valid(void **state)
{
    rpx_gpu_table *t;
    rpx_error err = {0};
    const rpx_gpu_spec *g;
    rpx_peak pk;
    size_t n0;
    const char *path = write_tmp(
        "ok.json",
        "{\"gpus\": [{\"key\": \"lab-gpu\", \"name\": \"Lab GPU\", \"memory_gb\": 48,"
        " \"memory_bandwidth_gbps\": 1000, \"peak_tflops\": {\"fp32\": 50, \"fp16\": 100},"
        " \"vendor\": \"Lab\", \"match\": [\"lab gpu\", \"Lab Accelerator X\"]},"
        " {\"key\": \"h100-sxm\", \"name\": \"H100 (lab clocks)\", \"memory_bandwidth_gbps\": 3000,"
        " \"peak_tflops\": {\"fp16\": {\"tensor\": 900, \"vector\": 120}, \"fp8\": null},"
        " \"source\": \"our measurements, 2025\"}]}");
    (void)state;
    assert_int_equal(rpx_gpu_table_create(&t), 0);
    n0 = rpx_gpu_table_count(t);
    assert_int_equal(rpx_gpu_table_load_file(t, path, &err), 0);
    assert_int_equal(rpx_gpu_table_count(t), n0 + 1); /* one added, one replaced */
    g = rpx_gpu_table_find(t, "lab-gpu");
    assert_non_null(g);
    assert_string_equal(g->name, "Lab GPU");
    assert_true(g->memory_gb == 48);
    assert_non_null(strstr(g->source, "ok.json"));
    /* a plain number is the peak of every node at that precision */
    assert_int_equal(rpx_gpu_peak(g, RPX_PREC_FP16, 1, 0, &pk), 0);
    assert_true(pk.tflops == 100);
    assert_int_equal(rpx_gpu_peak(g, RPX_PREC_FP16, 0, 0, &pk), 0);
    assert_true(pk.tflops == 100);
    assert_int_equal(rpx_gpu_peak(g, RPX_PREC_BF16, 1, 0, &pk), RPX_ENOTFOUND);
    /* the override replaces the entry as a whole */
    g = rpx_gpu_table_find(t, "h100-sxm");
    assert_string_equal(g->name, "H100 (lab clocks)");
    assert_string_equal(g->source, "our measurements, 2025");
    assert_int_equal(rpx_gpu_peak(g, RPX_PREC_FP16, 1, 0, &pk), 0);
    assert_true(pk.tflops == 900);
    assert_int_equal(rpx_gpu_peak(g, RPX_PREC_FP16, 0, 0, &pk), 0);
    assert_true(pk.tflops == 120);
    assert_int_equal(rpx_gpu_peak(g, RPX_PREC_FP8, 1, 0, &pk), RPX_ENOTFOUND);
    /* user entries match first, by name or by their patterns */
    assert_string_equal(rpx_gpu_table_match_name(t, "Lab Accelerator X")->key, "lab-gpu");
    assert_string_equal(rpx_gpu_table_match_name(t, "The LAB GPU rev 2")->key, "lab-gpu");
    assert_string_equal(rpx_gpu_table_match_name(t, "NVIDIA H100 80GB HBM3")->key, "h100-sxm");
    rpx_gpu_table_free(t);
}

static void expect_bad(const char *file, const char *text, const char *const *fragments)
{
    rpx_gpu_table *t;
    rpx_error err = {0};
    const char *path = write_tmp(file, text);
    size_t n0;
    assert_int_equal(rpx_gpu_table_create(&t), 0);
    n0 = rpx_gpu_table_count(t);
    if (rpx_gpu_table_load_file(t, path, &err) == 0) fail_msg("%s: accepted: %s", file, text);
    assert_int_not_equal(err.code, 0);
    for (; *fragments; fragments++)
        if (!strstr(err.message, *fragments))
            fail_msg("%s: message '%s' lacks '%s'", file, err.message, *fragments);
    /* nothing of a bad file is kept */
    assert_int_equal(rpx_gpu_table_count(t), n0);
    assert_null(rpx_gpu_table_find(t, "lab-gpu"));
    assert_string_equal(rpx_gpu_table_find(t, "h100-sxm")->name, "NVIDIA H100 SXM");
    rpx_gpu_table_free(t);
}

#define FRAGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_spec_file_invalid(void **state)
{
    (void)state;
    expect_bad("nobw.json",
               "{\"gpus\": [{\"key\": \"lab-gpu\", \"name\": \"Lab\","
               " \"peak_tflops\": {\"fp32\": 50}}]}",
               FRAGS("nobw.json", "gpus[0]", "key 'lab-gpu'", "'memory_bandwidth_gbps'", "missing"));
    expect_bad("strbw.json",
               "{\"gpus\": [{\"key\": \"a\", \"name\": \"A\", \"memory_bandwidth_gbps\": 1},"
               " {\"key\": \"lab-gpu\", \"name\": \"Lab\", \"memory_bandwidth_gbps\": \"fast\","
               " \"peak_tflops\": {\"fp32\": 50}}]}",
               FRAGS("strbw.json", "gpus[0]", "key 'a'", "peak_tflops"));
    expect_bad("strbw2.json",
               "{\"gpus\": [{\"key\": \"lab-gpu\", \"name\": \"Lab\", \"memory_bandwidth_gbps\":"
               " \"fast\", \"peak_tflops\": {\"fp32\": 50}}]}",
               FRAGS("strbw2.json", "gpus[0]", "'memory_bandwidth_gbps'", "a string"));
    expect_bad("zero.json",
               "{\"gpus\": [{\"key\": \"lab-gpu\", \"name\": \"Lab\", \"memory_bandwidth_gbps\": 9,"
               " \"peak_tflops\": {\"fp32\": 50, \"fp8\": 0}}]}",
               FRAGS("zero.json", "'peak_tflops.fp8'", "never 0"));
    expect_bad("prec.json",
               "{\"gpus\": [{\"key\": \"lab-gpu\", \"name\": \"Lab\", \"memory_bandwidth_gbps\": 9,"
               " \"peak_tflops\": {\"fp17\": 50}}]}",
               FRAGS("prec.json", "'peak_tflops.fp17'", "unknown precision"));
    expect_bad("unit.json",
               "{\"gpus\": [{\"key\": \"lab-gpu\", \"name\": \"Lab\", \"memory_bandwidth_gbps\": 9,"
               " \"peak_tflops\": {\"fp16\": {\"matrix\": 5}}}]}",
               FRAGS("unit.json", "'peak_tflops.fp16.matrix'", "tensor"));
    expect_bad("nokey.json",
               "{\"gpus\": [{\"name\": \"Lab\", \"memory_bandwidth_gbps\": 9,"
               " \"peak_tflops\": {\"fp32\": 1}}]}",
               FRAGS("nokey.json", "gpus[0]", "'key'", "missing"));
    expect_bad("badkey.json",
               "{\"gpus\": [{\"key\": \"lab gpu!\", \"name\": \"Lab\", \"memory_bandwidth_gbps\": 9,"
               " \"peak_tflops\": {\"fp32\": 1}}]}",
               FRAGS("badkey.json", "'key'", "not a valid key"));
    expect_bad("dup.json",
               "{\"gpus\": [{\"key\": \"lab-gpu\", \"name\": \"Lab\", \"memory_bandwidth_gbps\": 9,"
               " \"peak_tflops\": {\"fp32\": 1}}, {\"key\": \"LAB-GPU\", \"name\": \"Lab2\","
               " \"memory_bandwidth_gbps\": 9, \"peak_tflops\": {\"fp32\": 1}}]}",
               FRAGS("dup.json", "gpus[1]", "duplicates gpus[0]"));
    expect_bad("nopeaks.json",
               "{\"gpus\": [{\"key\": \"lab-gpu\", \"name\": \"Lab\", \"memory_bandwidth_gbps\": 9,"
               " \"peak_tflops\": {\"fp32\": null}}]}",
               FRAGS("nopeaks.json", "'peak_tflops'", "no number"));
    expect_bad("entry.json", "{\"gpus\": [42]}", FRAGS("entry.json", "gpus[0]", "an object"));
    expect_bad("top.json", "[1, 2]", FRAGS("top.json", "expected an object"));
    expect_bad("nogpus.json", "{\"gpu\": []}", FRAGS("nogpus.json", "'gpus'"));
    expect_bad("syntax.json", "{\"gpus\": [", FRAGS("syntax.json", "line"));
    expect_bad("sm.json",
               "{\"gpus\": [{\"key\": \"lab-gpu\", \"name\": \"Lab\", \"memory_bandwidth_gbps\": 9,"
               " \"peak_tflops\": {\"fp32\": 1}, \"sm_count\": 1.5}]}",
               FRAGS("sm.json", "'sm_count'"));
}

static void test_spec_file_missing_and_env(void **state)
{
    rpx_gpu_table *t;
    rpx_error err = {0};
    char env[1024];
    const char *a = write_tmp("env-a.json",
                              "{\"gpus\": [{\"key\": \"env-a\", \"name\": \"Env A\","
                              " \"memory_bandwidth_gbps\": 10, \"peak_tflops\": {\"fp32\": 1}}]}");
    char pa[512];
    (void)state;
    snprintf(pa, sizeof pa, "%s", a);
    assert_int_equal(rpx_gpu_table_create(&t), 0);
    assert_int_equal(rpx_gpu_table_load_file(t, "/nonexistent/specs.json", &err), RPX_EIO);
    assert_non_null(strstr(err.message, "/nonexistent/specs.json"));
    snprintf(env, sizeof env, "%s:%s/env-missing.json", pa, tmpdir);
    setenv("RPX_GPU_SPECS", env, 1);
    assert_int_equal(rpx_gpu_table_load_env(t, &err), RPX_EIO);
    assert_non_null(strstr(err.message, "RPX_GPU_SPECS"));
    assert_non_null(strstr(err.message, "env-missing.json"));
    assert_non_null(rpx_gpu_table_find(t, "env-a")); /* the first file loaded */
    setenv("RPX_GPU_SPECS", pa, 1);
    rpx_gpu_table_free(t);
    assert_int_equal(rpx_gpu_table_create(&t), 0);
    assert_int_equal(rpx_gpu_table_load_env(t, &err), 0);
    assert_non_null(rpx_gpu_table_find(t, "ENV-A"));
    unsetenv("RPX_GPU_SPECS");
    rpx_gpu_table_free(t);
}

/* ---- unfused bound and the roofline object ---- */

static rpx_cost_node node(const char *op, int dense, int supported, double flops, double rd,
                          double wr)
{
    rpx_cost_node n;
    memset(&n, 0, sizeof n);
    n.name = op;
    n.op_type = op;
    n.dense = dense;
    n.supported = supported;
    n.flops = flops;
    n.macs = flops / 2;
    n.bytes_read = rd;
    n.bytes_written = wr;
    return n;
}

static void test_unfused_bound(void **state)
{
    const rpx_gpu_spec *g = builtin("h100-sxm");
    rpx_cost_node nodes[4];
    rpx_peak dense, other;
    rpx_unfused_bound u;
    rpx_roofline_input in;
    json_t *r, *unf, *frac;
    (void)state;
    /* conv: 989.5 GFLOP on the tensor peak = 1 ms; relu: 3.35 GB at 3350 GB/s = 1 ms;
     * add: 133.8 GFLOP on the fp16 vector peak = 1 ms (its 1 byte is nothing) */
    nodes[0] = node("Conv", 1, 1, 989.5e9, 1e6, 1e6);
    nodes[1] = node("Relu", 0, 1, 1e6, 1.675e9, 1.675e9);
    nodes[2] = node("Add", 0, 1, 133.8e9, 1, 0);
    nodes[3] = node("Weird", 0, 0, NAN, NAN, NAN);
    assert_int_equal(rpx_gpu_peak(g, RPX_PREC_FP16, 1, 0, &dense), 0);
    assert_int_equal(rpx_gpu_peak(g, RPX_PREC_FP16, 0, 0, &other), 0);
    assert_int_equal(rpx_roofline_unfused(nodes, 4, &dense, &other, g->memory_bandwidth_gbps, &u,
                                          NULL),
                     0);
    assert_int_equal(u.nodes, 3);
    assert_int_equal(u.nodes_unknown, 1);
    assert_int_equal(u.nodes_compute_bound, 2);
    assert_int_equal(u.nodes_memory_bound, 1);
    assert_true(fabs(u.latency_ms - 3.0) < 1e-12);
    /* the roofline object: ideal + unfused + achieved fraction */
    rpx_roofline_input_init(&in);
    in.flops = 989.5e9 + 1e6 + 133.8e9;
    in.bytes = 3.35e8;
    in.nodes = nodes;
    in.n_nodes = 4;
    in.precision = RPX_PREC_FP16;
    in.measured_p50_ms = 6.0;
    r = rpx_roofline_json(g, &in);
    assert_non_null(r);
    unf = json_object_get(r, "unfused");
    assert_true(fabs(json_real_value(json_object_get(unf, "latency_ms")) - 3.0) < 1e-12);
    assert_true(json_is_true(json_object_get(unf, "partial")));
    frac = json_object_get(r, "achieved_fraction");
    assert_true(fabs(json_real_value(json_object_get(frac, "unfused")) - 0.5) < 1e-12);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "ideal"),
                                                          "bottleneck")),
                        "compute");
    assert_true(json_real_value(json_object_get(json_object_get(r, "peak_other"), "tflops")) ==
                133.8);
    json_decref(r);
}

static void test_input_from_json(void **state)
{
    json_error_t je;
    json_t *cost = json_loads(
        "{\"flops\": 2e9, \"traffic_bytes_ideal\": 4e6, \"nodes\": ["
        " {\"name\": \"c\", \"op_type\": \"Conv\", \"flops\": 1.5e9, \"bytes_read\": 1e6,"
        "  \"bytes_written\": 2e6},"
        " {\"name\": \"r\", \"op_type\": \"Relu\", \"dense\": false, \"flops\": 5e8,"
        "  \"bytes_read\": 2e6, \"bytes_written\": 2e6},"
        " {\"name\": \"x\", \"op_type\": \"Custom\", \"supported\": false}]}",
        0, &je);
    json_t *report = json_loads(
        "{\"precision\": \"fp16\", \"latency\": {\"p50_ms\": 12.5},"
        " \"efficiency\": {\"flops\": 3e9, \"traffic_bytes_ideal\": null}}",
        0, &je);
    json_t *empty = json_loads("{\"latency\": {\"p50_ms\": 1}}", 0, &je);
    rpx_roofline_input in;
    rpx_cost_node *nodes = NULL;
    rpx_error err = {0};
    (void)state;
    assert_non_null(cost);
    rpx_roofline_input_init(&in);
    assert_int_equal(rpx_roofline_input_from_json(cost, "cost.json", &in, &nodes, &err), 0);
    assert_true(in.flops == 2e9);
    assert_true(in.bytes == 4e6);
    assert_int_equal(in.n_nodes, 3);
    assert_int_equal(nodes[0].dense, 1); /* Conv is dense linear algebra */
    assert_int_equal(nodes[1].dense, 0);
    assert_int_equal(nodes[2].supported, 0);
    assert_true(nodes[0].bytes_written == 2e6);
    rpx_roofline_nodes_free(nodes);

    rpx_roofline_input_init(&in);
    assert_int_equal(rpx_roofline_input_from_json(report, "run.json", &in, &nodes, &err), 0);
    assert_true(in.flops == 3e9);
    assert_true(isnan(in.bytes));
    assert_true(in.measured_p50_ms == 12.5);
    assert_int_equal(in.precision, RPX_PREC_FP16);
    assert_int_equal(in.n_nodes, 0);
    rpx_roofline_nodes_free(nodes);

    rpx_roofline_input_init(&in);
    assert_int_equal(rpx_roofline_input_from_json(empty, "empty.json", &in, &nodes, &err),
                     RPX_EFORMAT);
    assert_non_null(strstr(err.message, "empty.json"));
    assert_non_null(strstr(err.message, "flops"));
    json_decref(cost);
    json_decref(report);
    json_decref(empty);
}

/* ---- real-time budget ---- */

static void test_realtime_budget(void **state)
{
    json_t *b = rpx_realtime_budget_json(50.0, NULL, 0, 16), *rates, *r;
    double hz[] = {60};
    (void)state;
    assert_non_null(b);
    rates = json_object_get(b, "rates");
    assert_int_equal(json_array_size(rates), 3);
    r = json_array_get(rates, 0); /* 5 Hz: 200 ms budget */
    assert_true(json_real_value(json_object_get(r, "hz")) == 5);
    assert_true(json_real_value(json_object_get(r, "budget_ms")) == 200);
    assert_true(json_real_value(json_object_get(r, "beta")) == 0.25);
    assert_true(json_is_true(json_object_get(r, "realtime")));
    r = json_array_get(rates, 2); /* 30 Hz: 33.3 ms budget, β = 1.5 */
    assert_true(fabs(json_real_value(json_object_get(r, "beta")) - 1.5) < 1e-12);
    assert_true(json_is_false(json_object_get(r, "realtime")));
    assert_true(json_real_value(json_object_get(b, "throughput_per_s")) == 20);
    assert_true(json_real_value(json_object_get(b, "per_frame_ms")) == 3.125);
    assert_true(json_real_value(json_object_get(b, "frames_per_s")) == 320);
    json_decref(b);
    /* β = 1 is real-time */
    b = rpx_realtime_budget_json(1000.0 / 60.0, hz, 1, 0);
    r = json_array_get(json_object_get(b, "rates"), 0);
    assert_true(json_is_true(json_object_get(r, "realtime")));
    assert_true(json_is_null(json_object_get(b, "per_frame_ms")));
    assert_true(json_is_null(json_object_get(b, "frames_per_unit")));
    json_decref(b);
    /* nothing measured: nulls, never 0 */
    b = rpx_realtime_budget_json(NAN, NULL, 0, 0);
    r = json_array_get(json_object_get(b, "rates"), 1);
    assert_true(json_is_null(json_object_get(r, "beta")));
    assert_true(json_is_null(json_object_get(r, "realtime")));
    assert_true(json_is_null(json_object_get(b, "throughput_per_s")));
    json_decref(b);
}

/* ---- precision names ---- */

static void test_precision_parse(void **state)
{
    rpx_precision p;
    rpx_error err = {0};
    (void)state;
    assert_int_equal(rpx_precision_parse("FP16", &p, &err), 0);
    assert_int_equal(p, RPX_PREC_FP16);
    assert_int_equal(rpx_precision_parse("bfloat16", &p, &err), 0);
    assert_int_equal(p, RPX_PREC_BF16);
    assert_int_equal(rpx_precision_parse("float32", &p, &err), 0);
    assert_int_equal(p, RPX_PREC_FP32);
    assert_int_equal(rpx_precision_parse("fp4", &p, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "fp4"));
    assert_string_equal(rpx_precision_name(RPX_PREC_INT8), "int8");
    assert_null(rpx_precision_name(RPX_PREC_COUNT));
}

/* ---- SVG ---- */

static void test_svg(void **state)
{
    rpx_roofline_point pts[3] = {{"ideal", 50, 500}, {"unfused", 5, 16}, {"measured", 50, 100}};
    char *svg = rpx_roofline_svg("H100 <fp16> & co", 989.5, 3350, pts, 3);
    rpx_roofline_input in;
    json_t *r;
    rpx_error err = {0};
    char path[512], buf[256];
    FILE *f;
    const char *p;
    int circles = 0;
    (void)state;
    assert_non_null(svg);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "class=\"roof\""));
    assert_non_null(strstr(svg, "&lt;fp16&gt; &amp; co"));
    assert_non_null(strstr(svg, ">ideal ("));
    assert_non_null(strstr(svg, ">unfused ("));
    assert_non_null(strstr(svg, ">measured ("));
    for (p = svg; (p = strstr(p, "<circle")) != NULL; p++) circles++;
    assert_int_equal(circles, 3);
    assert_non_null(strstr(svg, "</svg>"));
    free(svg);
    assert_null(rpx_roofline_svg("x", 0, 3350, NULL, 0));
    assert_null(rpx_roofline_svg("x", 1, NAN, NULL, 0));

    rpx_roofline_input_init(&in);
    in.flops = 1e12;
    in.bytes = 1e9;
    in.precision = RPX_PREC_FP16;
    in.measured_p50_ms = 4;
    r = rpx_roofline_json(builtin("h100-sxm"), &in);
    snprintf(path, sizeof path, "%s/pics/roof.svg", tmpdir);
    assert_int_equal(rpx_roofline_svg_write(path, r, &err), 0);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_non_null(strstr(buf, "<?xml"));
    json_decref(r);
    in.precision = RPX_PREC_FP8;
    r = rpx_roofline_json(builtin("a100-sxm-80gb"), &in);
    assert_int_equal(rpx_roofline_svg_write(path, r, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "peak"));
    json_decref(r);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rpx-roofline-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[400];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_numbers),
        cmocka_unit_test(test_reference_entries),
        cmocka_unit_test(test_reference_labels_agree_with_values),
        cmocka_unit_test(test_tie_is_compute),
        cmocka_unit_test(test_bound_invalid_and_partial),
        cmocka_unit_test(test_precision_selection),
        cmocka_unit_test(test_missing_precision),
        cmocka_unit_test(test_every_entry_has_a_source),
        cmocka_unit_test(test_spec_json),
        cmocka_unit_test(test_name_matching),
        cmocka_unit_test(test_spec_file_valid),
        cmocka_unit_test(test_spec_file_invalid),
        cmocka_unit_test(test_spec_file_missing_and_env),
        cmocka_unit_test(test_unfused_bound),
        cmocka_unit_test(test_input_from_json),
        cmocka_unit_test(test_realtime_budget),
        cmocka_unit_test(test_precision_parse),
        cmocka_unit_test(test_svg),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
