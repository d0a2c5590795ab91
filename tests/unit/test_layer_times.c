/* test_layer_times.c — --layers without a real runtime: a caller-made target
 * (rpx_target_options.custom) whose per-node profiler (layers_begin /
 * layers_end) reports the node names of tests/fixtures/onnx's conv_small.onnx
 * (conv, relu, pool, flatten, fc) with busy-waits of known length, one row
 * fused (conv+relu, as ONNX Runtime fuses them). Runs the runner with 3
 * processes and checks the report's `layers`: each row's FLOPs are the sum of
 * the per-op cost of its nodes, the rows (with "unattributed") sum to the
 * total, no row is faster than its bound (a unit slip would show), the
 * between-process intervals, the overhead note when the profiled calls are
 * slower than the timed ones. The reports are kept under
 * $RPX_FIXTURES/layers/ for the CLI tests (tests/cli/test_layer_times.py). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "rpxprof/clock.h"
#include "rpxprof/cost.h"
#include "rpxprof/npz.h"
#include "rpxprof/options.h"
#include "rpxprof/runner.h"
#include "rpxprof/summary.h"
#include "rpxprof/target.h"

typedef struct row {
    const char *name, *op;
    const char *nodes[3];         /* NULL-terminated; none: the node of that name */
    double ms;
} row;

static const row ROWS[] = {
    {"conv_relu_fused", "FusedConv", {"conv", "relu", NULL}, 2.0},
    {"pool", "GlobalAveragePool", {NULL}, 0.6},
    {"flatten", "Flatten", {NULL}, 0.3},
    {"fc", "Gemm", {NULL}, 1.0},
};
#define N_ROWS (sizeof ROWS / sizeof ROWS[0])
#define UNATTRIBUTED_MS 0.5

static int g_profiling;
static long g_call;
static json_t *g_events;
static double g_timed_scale = 1.0; /* the timed calls' work against the profiled ones' */

/* A busy-wait of ms; the profiler reports the nominal length (a loaded
 * machine's preemptions land in the unattributed time, as a runtime's
 * profiler does not see them either). */
static void spin_ms(double ms)
{
    int64_t end = rpx_clock_now_ns() + (int64_t)(ms * 1e6);
    while (rpx_clock_now_ns() < end) continue;
}

static int call(void *state, const rpx_inputs *in, rpx_error *err)
{
    size_t i, k;
    (void)state;
    (void)in;
    (void)err;
    for (i = 0; i < N_ROWS; i++) {
        json_t *ev, *nodes = json_null();
        spin_ms(ROWS[i].ms * (g_profiling ? 1.0 : g_timed_scale));
        if (!g_profiling) continue;
        if (ROWS[i].nodes[0]) {
            nodes = json_array();
            for (k = 0; ROWS[i].nodes[k]; k++) json_array_append_new(nodes, json_string(ROWS[i].nodes[k]));
        }
        ev = json_pack("{s:I,s:s,s:s,s:o,s:f}", "call", (json_int_t)g_call, "name", ROWS[i].name,
                       "op_type", ROWS[i].op, "nodes", nodes, "time_ms", ROWS[i].ms);
        json_array_append_new(g_events, ev);
    }
    spin_ms(UNATTRIBUTED_MS * (g_profiling ? 1.0 : g_timed_scale));
    if (g_profiling) g_call++;
    return 0;
}

static int layers_begin(void *state, rpx_error *err)
{
    (void)state;
    (void)err;
    g_profiling = 1;
    g_call = 0;
    g_events = json_array();
    return 0;
}

static int layers_end(void *state, json_t **events, rpx_error *err)
{
    (void)state;
    (void)err;
    g_profiling = 0;
    *events = g_events;
    g_events = NULL;
    return 0;
}

static char g_dir[512], g_inputs[600], g_onnx[600];

static int setup(void **state)
{
    const char *fx = getenv("RPX_FIXTURES");
    float x[3 * 16 * 16] = {0};
    int64_t shape[4] = {1, 3, 16, 16};
    rpx_npz_writer *w;
    rpx_error err = {0};
    (void)state;
    if (!fx) {
        print_message("RPX_FIXTURES is not set: run through ctest\n");
        return -1;
    }
    snprintf(g_onnx, sizeof g_onnx, "%s/onnx_small/good/conv_small.onnx", fx);
    snprintf(g_dir, sizeof g_dir, "%s/layers", fx);
    mkdir(fx, 0755);
    mkdir(g_dir, 0755);
    snprintf(g_inputs, sizeof g_inputs, "%s/in.npz", g_dir);
    if (rpx_npz_writer_open(g_inputs, 0, &w, &err) != 0 ||
        rpx_npz_writer_add(w, "x", RPX_DTYPE_FLOAT32, 4, shape, x, &err) != 0 ||
        rpx_npz_writer_close(w, &err) != 0) {
        print_message("%s\n", err.message);
        return -1;
    }
    return 0;
}

/* A run of the stand-in: 3 processes, `layers` profiled calls each. */
static json_t *run_layers(const char *out_name, long layers, const char *gpus, rpx_error *err,
                          int *rc)
{
    static rpx_target_hooks hooks;
    rpx_runner_config c;
    rpx_runner_result res;
    char out[700];
    json_t *report;
    memset(&hooks, 0, sizeof hooks);
    hooks.kind_name = "shared_object";
    hooks.call = call;
    hooks.layers_begin = layers_begin;
    hooks.layers_end = layers_end;
    rpx_runner_config_init(&c);
    snprintf(out, sizeof out, "%s/%s", g_dir, out_name);
    c.model = "./layers_stand_in.so:conv_small";
    c.target.custom = &hooks;
    c.inputs = g_inputs;
    c.output = out;
    c.force = 1;
    c.repeats = 30;
    c.warmup = 2;
    c.processes = 3;
    c.layers = layers;
    c.cost = g_onnx;
    c.gpus = gpus;
    c.progress = 0;
    c.timeline = layers == 10; /* run.json: the trace nests the layers */
    *rc = rpx_runner_run(&c, &res, err);
    if (*rc != 0) return NULL;
    report = json_incref(res.report);
    rpx_runner_result_free(&res);
    return report;
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* The bound a row should have on roofline target `key` of the report, worked
 * out here from the report's own peak and bandwidth: max(FLOPs / peak, bytes /
 * bandwidth) in ms (compute only where the bandwidth is unknown). A unit slip
 * in the join (s for ms, GFLOP/s for TFLOP/s) is off by 1000 or more. */
static double expected_bound(const json_t *report, const char *key, const json_t *r)
{
    const json_t *t = json_object_get(json_object_get(report, "roofline"), key);
    double tflops = json_number_value(json_object_get(json_object_get(t, "peak_dense"), "tflops"));
    const json_t *bw = json_object_get(t, "memory_bandwidth_gbps");
    double flops = json_number_value(json_object_get(r, "flops"));
    double bytes = json_number_value(json_object_get(r, "bytes"));
    double compute = flops / (tflops * 1e12) * 1e3;
    assert_true(tflops > 0);
    if (!json_is_number(bw)) return compute;
    return fmax(compute, bytes / (json_number_value(bw) * 1e9) * 1e3);
}

static const json_t *row_named(const json_t *rows, const char *name)
{
    const json_t *r;
    size_t i;
    json_array_foreach(rows, i, r)
        if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0) return r;
    fail_msg("no row %s", name);
    return NULL;
}

/* The per-op cost of the fixture's nodes, summed as a row. */
static void cost_of(const rpx_cost *cost, const char *const *nodes, const char *self,
                    double *flops, double *macs, double *bytes)
{
    size_t i, k, n = rpx_cost_node_count(cost);
    *flops = *macs = *bytes = 0;
    for (k = 0; nodes[k] || k == 0; k++) {
        const char *want = nodes[0] ? nodes[k] : self;
        int found = 0;
        for (i = 0; i < n; i++) {
            const rpx_cost_node *c = rpx_cost_node_at(cost, i);
            if (strcmp(c->name, want) != 0) continue;
            assert_true(c->supported);
            *flops += c->flops;
            *macs += c->macs;
            *bytes += c->bytes_read + c->bytes_written;
            found = 1;
        }
        assert_true(found);
        if (!nodes[0]) break;
    }
}

static void test_rows_cost_bound(void **state)
{
    rpx_error err = {0};
    int rc;
    json_t *rep = run_layers("run.json", 10, "a100-sxm-80gb", &err, &rc), *ly, *rows, *r, *ops;
    rpx_cost *cost = NULL;
    double sum = 0, total;
    size_t i;
    (void)state;
    if (rc != 0) fail_msg("run: %s", err.message);
    ly = json_object_get(rep, "layers");
    assert_true(json_is_object(ly));
    assert_int_equal(json_integer_value(json_object_get(ly, "profiled_calls")), 10);
    assert_int_equal(json_integer_value(json_object_get(ly, "processes")), 3);
    rows = json_object_get(ly, "rows");
    assert_int_equal(json_array_size(rows), N_ROWS + 1);
    rpx_cost_options co;
    rpx_cost_options_init(&co);
    assert_int_equal(rpx_cost_analyze_onnx(g_onnx, &co, &cost, &err), 0);
    for (i = 0; i < N_ROWS; i++) {
        double flops, macs, bytes, t, b;
        r = (json_t *)row_named(rows, ROWS[i].name);
        cost_of(cost, ROWS[i].nodes, ROWS[i].name, &flops, &macs, &bytes);
        assert_float_equal(num(r, "flops"), flops, 1e-9 * flops + 1e-12);
        assert_float_equal(num(r, "macs"), macs, 1e-9 * macs + 1e-12);
        assert_float_equal(num(r, "bytes"), bytes, 1e-9 * bytes);
        if (bytes > 0)
            assert_float_equal(num(r, "intensity"), flops / bytes, 1e-9 * flops / bytes);
        else /* Flatten: a view, no cost */
            assert_true(json_is_null(json_object_get(r, "intensity")));
        t = num(r, "time_ms");
        b = num(r, "bound_ms");
        assert_float_equal(t, ROWS[i].ms, 1e-9);      /* the median of what the profiler said */
        assert_true(b >= 0 && b <= t);               /* no row faster than its bound */
        assert_true(num(r, "achieved") <= 1.0);
        assert_float_equal(num(r, "achieved"), b / t, 1e-9);
        assert_true(json_is_array(json_object_get(r, "time_ci_ms")));
        assert_float_equal(num(json_object_get(r, "gpu_bounds"), "a100-sxm-80gb"),
                       expected_bound(rep, "a100-sxm-80gb", r), 1e-9 * num(r, "time_ms"));
        sum += t;
    }
    r = (json_t *)row_named(rows, "unattributed");
    assert_true(json_is_null(json_object_get(r, "op_type")));
    assert_true(json_is_null(json_object_get(r, "flops")));
    assert_true(json_is_null(json_object_get(r, "bound_ms")));
    assert_true(num(r, "time_ms") >= UNATTRIBUTED_MS * 0.9);
    sum += num(r, "time_ms");
    total = num(ly, "total_ms");
    assert_float_equal(sum, total, 1e-9 * total);   /* rows + unattributed = the total */
    /* and the profiled calls' own time (the nodes' times are constant here, so the
     * medians add up) */
    assert_float_equal(total, num(ly, "profiled_call_ms"), 1e-9 * total);
    assert_true(json_is_array(json_object_get(ly, "total_ci_ms")));
    assert_float_equal(num(ly, "overhead"), total / num(ly, "unprofiled_p50_ms") - 1, 1e-6);
    assert_true(num(ly, "below_10pct_share") >= 0 && num(ly, "below_10pct_share") <= 1);
    ops = json_object_get(ly, "by_op_type");
    assert_int_equal(json_array_size(ops), N_ROWS);
    assert_non_null(strstr(json_string_value(json_object_get(ly, "device")), "host CPU"));
    rpx_cost_free(cost);
    { /* the summary: the slowest rows, slowest first, and the share below 10 % of the bound */
        char *text = rpx_report_summary(rep, NULL);
        assert_non_null(text);
        assert_non_null(strstr(text, "slowest rows"));
        assert_non_null(strstr(text, "conv_relu_fused"));
        assert_true(strstr(text, "conv_relu_fused") < strstr(text, "flatten"));
        assert_non_null(strstr(text, "of the layers' time runs below 10 % of its bound"));
        free(text);
    }
    json_decref(rep);
}

static void test_overhead_note(void **state)
{
    rpx_error err = {0};
    int rc;
    json_t *rep, *ly, *r;
    size_t i;
    (void)state;
    g_timed_scale = 0.25; /* the timed calls do a quarter of the profiled ones' work */
    rep = run_layers("run_overhead.json", 6, NULL, &err, &rc);
    g_timed_scale = 1.0;
    if (rc != 0) fail_msg("run: %s", err.message);
    ly = json_object_get(rep, "layers");
    assert_true(num(ly, "overhead") > 0.3);
    assert_true(json_is_string(json_object_get(ly, "overhead_note")));
    assert_non_null(strstr(json_string_value(json_object_get(ly, "overhead_note")), "more than"));
    assert_true(json_is_null(json_object_get(json_array_get(json_object_get(ly, "rows"), 0),
                                             "gpu_bounds")));
    json_array_foreach(json_object_get(ly, "rows"), i, r) /* the host CPU's bound */
        if (json_is_number(json_object_get(r, "flops")))
            assert_float_equal(num(r, "bound_ms"), expected_bound(rep, "host-cpu", r),
                               1e-9 * num(r, "time_ms"));
    json_decref(rep);
}

static void test_off_is_null(void **state)
{
    rpx_error err = {0};
    int rc;
    json_t *rep;
    (void)state;
    rep = run_layers("run_off.json", 0, NULL, &err, &rc);
    if (rc != 0) fail_msg("run: %s", err.message);
    assert_true(json_is_null(json_object_get(rep, "layers")));
    json_decref(rep);
}

/* A target without layers_begin is refused before anything runs, naming the kinds. */
static void test_refused_without_profiler(void **state)
{
    rpx_runner_config c;
    rpx_target_hooks hooks;
    rpx_error err = {0};
    (void)state;
    memset(&hooks, 0, sizeof hooks);
    hooks.kind_name = "python";
    hooks.call = call;
    rpx_runner_config_init(&c);
    c.model = "mod:fn";
    c.target.custom = &hooks;
    c.inputs = g_inputs;
    c.layers = 5;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_CLI, &err), RPX_EUSAGE);
    assert_non_null(strstr(err.message, "--layers"));
    assert_non_null(strstr(err.message, "layers_begin"));
    assert_non_null(strstr(err.message, "kinds that have one"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_cost_bound),
        cmocka_unit_test(test_overhead_note),
        cmocka_unit_test(test_off_is_null),
        cmocka_unit_test(test_refused_without_profiler),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
