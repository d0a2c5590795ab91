/* Unit tests for src/batch/manifest.c and src/report/plot.c: job order, path
 * resolution, defaults and overrides, error messages; SVG escaping, ids, axis. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/manifest.h"
#include "rpxprof/plot.h"
#include "rpxprof/error.h"
#include "rpxprof/runner.h"

static char dir[] = "/tmp/rpxbatch-unit-XXXXXX";

static char *write_manifest(const char *text)
{
    static char path[256];
    FILE *f;
    snprintf(path, sizeof path, "%s/m.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_jobs_order_paths_defaults(void **st)
{
    rpx_manifest *m = NULL;
    rpx_error err = {0};
    const rpx_batch_job *j;
    char want[512];
    const char *path = write_manifest(
        "{\"schema\": \"rpxprof.manifest/1\","
        " \"defaults\": {\"warmup\": 3, \"repeats\": 7, \"device\": \"cuda\", \"precision\": \"fp16\", \"gpus\": [\"h100-sxm\", \"l4\"]},"
        " \"tasks\": {\"b_task\": {\"inputs\": \"f.npz\", \"unit\": \"frame\"},"
        "            \"a_task\": {\"inputs\": \"/abs/c.npz\", \"unit\": \"clip\", \"meta\": {\"clip_length\": 250}}},"
        " \"models\": [{\"name\": \"demo\", \"model\": \"rpxprof-demo:demo_depth\", \"tasks\": [\"b_task\"],"
        "             \"flops\": 4e9},"
        "            {\"name\": \"mine\", \"model\": \"./libm.so:predict\", \"tasks\": [\"a_task\", \"b_task\"],"
        "             \"cost\": \"m.onnx\", \"precision\": \"bf16\", \"repeats\": 9}]}");
    (void)st;
    assert_int_equal(rpx_manifest_load(path, &m, &err), 0);
    assert_int_equal(rpx_manifest_job_count(m), 3);
    /* tasks in manifest order (b_task first) x models in manifest order */
    j = rpx_manifest_job(m, 0);
    assert_string_equal(j->task, "b_task");
    assert_string_equal(j->model_name, "demo");
    assert_string_equal(j->model, "rpxprof-demo:demo_depth");
    snprintf(want, sizeof want, "%s/f.npz", dir);
    assert_string_equal(j->inputs, want);
    assert_string_equal(j->device, "cuda");
    assert_string_equal(j->precision, "fp16");
    assert_string_equal(j->gpus, "h100-sxm,l4");
    assert_int_equal(j->warmup, 3);
    assert_int_equal(j->repeats, 7);
    assert_null(j->cost);
    assert_string_equal(j->flops, "4000000000");
    j = rpx_manifest_job(m, 1);
    assert_string_equal(j->model_name, "mine");
    snprintf(want, sizeof want, "%s/libm.so:predict", dir);
    assert_string_equal(j->model, want);
    snprintf(want, sizeof want, "%s/m.onnx", dir);
    assert_string_equal(j->cost, want);
    assert_string_equal(j->precision, "bf16");
    assert_int_equal(j->repeats, 9);
    assert_null(j->flops);
    j = rpx_manifest_job(m, 2);
    assert_string_equal(j->task, "a_task");
    assert_string_equal(j->inputs, "/abs/c.npz");
    assert_int_equal(json_integer_value(json_object_get(j->meta, "clip_length")), 250);
    assert_null(rpx_manifest_job(m, 3));
    {
        char *rp = rpx_batch_report_path("out", j);
        assert_string_equal(rp, "out/a_task/mine.json");
        free(rp);
    }
    rpx_manifest_free(m);
}

static void expect_error(const char *text, const char *needle)
{
    rpx_manifest *m = NULL;
    rpx_error err = {0};
    const char *path = write_manifest(text);
    assert_int_not_equal(rpx_manifest_load(path, &m, &err), 0);
    assert_null(m);
    if (!strstr(err.message, needle) || !strstr(err.message, path)) fail_msg("'%s' lacks '%s'", err.message, needle);
}

static void test_errors(void **st)
{
    (void)st;
    expect_error("[", "fix the JSON syntax");
    expect_error("{\"schema\": \"rpxprof.manifest/2\"}", "schema: must be \"rpxprof.manifest/1\"");
    expect_error("{\"schema\": \"rpxprof.manifest/1\", \"models\": []}", "tasks: missing or empty");
    expect_error("{\"schema\": \"rpxprof.manifest/1\", \"tasks\": {\"t\": {\"inputs\": \"x.npz\"}}, "
                 "\"models\": [{\"name\": \"a\", \"model\": \"rpxprof-demo:x\", \"tasks\": [\"u\"]}]}",
                 "models[0].tasks[0]: 'u' is not a task");
    expect_error("{\"schema\": \"rpxprof.manifest/1\", \"tasks\": {\"t\": {\"unit\": \"frame\"}}, "
                 "\"models\": [{\"name\": \"a\", \"model\": \"rpxprof-demo:x\", \"tasks\": [\"t\"]}]}",
                 "tasks.t.inputs: missing");
    expect_error("{\"schema\": \"rpxprof.manifest/1\", \"tasks\": {\"t\": {\"inputs\": \"x.npz\"}}, "
                 "\"models\": [{\"name\": \"a\", \"model\": \"rpxprof-demo:x\", \"tasks\": [\"t\"], \"warmup\": -1}]}",
                 "models[0].warmup '-1': give a whole number from 0 to 1000000000");
    /* the combinations `rpxprof run` refuses, in the manifest's words */
    expect_error("{\"schema\": \"rpxprof.manifest/1\", \"tasks\": {\"t\": {\"inputs\": \"x.npz\"}}, "
                 "\"models\": [{\"name\": \"a\", \"model\": \"./m.so:f\", \"tasks\": [\"t\"], "
                 "\"cost\": \"m.onnx\", \"flops\": 5}]}",
                 "models[0] (task 't'): cost and flops/params both describe the model's cost");
    expect_error("{\"schema\": \"rpxprof.manifest/1\", \"tasks\": {\"t\": {\"inputs\": \"x.npz\"}}, "
                 "\"models\": [{\"name\": \"a\", \"model\": \"http://127.0.0.1:9/x\", "
                 "\"tasks\": [\"t\"], \"device\": \"cuda\"}]}",
                 "models[0] (task 't'): device cuda describes the model or the device it runs on");
    expect_error("{\"schema\": \"rpxprof.manifest/1\", \"tasks\": {\"t\": {\"inputs\": \"x.npz\"}}, \"extra\": 1, "
                 "\"models\": [{\"name\": \"a\", \"model\": \"rpxprof-demo:x\", \"tasks\": [\"t\"]}]}",
                 "unknown key 'extra' at the top level");
}

static void test_plot_svg(void **st)
{
    static const double a[] = {1, 2, 3, 4, 100}, b[] = {1, 1.5, 2};
    rpx_plot_row rows[2] = {
        {"t<&>", "m\"1'", "frame", "rgb 4x4x3", "cpu", a, 5},
        {"t<&>", "m2", "frame", "rgb 4x4x3", "cpu", b, 3}};
    char *svg = NULL;
    rpx_error err = {0};
    (void)st;
    assert_int_equal(rpx_plot_svg(rows, 2, 0, &svg, &err), 0);
    assert_non_null(strstr(svg, "t&lt;&amp;&gt;"));
    assert_null(strstr(svg, "t<&>"));
    assert_non_null(strstr(svg, "m&quot;1&apos;"));
    assert_non_null(strstr(svg, "log scale"));        /* 100 / 1 > 20 */
    assert_non_null(strstr(svg, "id=\"row-0-1-p50\""));
    assert_non_null(strstr(svg, "<title>call 4: 100 ms</title>"));
    assert_non_null(strstr(svg, "<title>p50 3 ms</title>"));
    free(svg);
    rows[0].n = 4;                                   /* 4 / 1 <= 20: linear */
    assert_int_equal(rpx_plot_svg(rows, 2, 0, &svg, &err), 0);
    assert_null(strstr(svg, "log scale"));
    free(svg);
    assert_int_equal(rpx_plot_svg(rows, 1, 1, &svg, &err), 0);
    assert_non_null(strstr(svg, "id=\"timeline-pt-3\""));
    free(svg);
    rows[1].n = 0;
    assert_int_not_equal(rpx_plot_svg(rows, 2, 0, &svg, &err), 0);
    assert_null(svg);
}

static int setup(void **st)
{
    (void)st;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st)
{
    char path[300];
    (void)st;
    snprintf(path, sizeof path, "%s/m.json", dir);
    unlink(path);
    rmdir(dir);
    return 0;
}

/* Slurm's array variables: the shard from the index set (MIN, STEP, COUNT), a
 * refusal naming every variable when the set cannot cover every job once. */
static void test_slurm_shard(void **st)
{
    static const struct {
        const char *id, *min, *max, *step, *count;
        int rc;
        long i, n;
    } c[] = {
        {NULL, NULL, NULL, NULL, NULL, 0, 0, 0},      /* not an array task */
        {"4", "0", "6", "2", "4", 1, 2, 4},           /* --array=0-6:2 */
        {"6", "0", "6", "2", "4", 1, 3, 4},
        {"3", "1", "3", NULL, "2", 1, 1, 2},          /* --array=1,3 without a step */
        {"2", "1", "3", NULL, "3", 1, 1, 3},          /* 1-3, no step: dense */
        {"7", "7", "7", "1", "1", 1, 0, 1},           /* --array=7 */
        {"11", "5", "11", "3", "3", 1, 2, 3},
        {"3", "1", "4", "1", "3", RPX_EINVAL, 0, 0},  /* a list 1,3,4 */
        {"1", "1", "3", "1", "2", RPX_EINVAL, 0, 0},  /* --array=1,3 as Slurm 22.05 sets it */
        {"5", "0", "5", NULL, "3", RPX_EINVAL, 0, 0}, /* a list 0,1,5 without a step */
        {"3", "0", "6", "2", "4", RPX_EINVAL, 0, 0},  /* 3 is not on the step */
        {"8", "0", "6", "2", "4", RPX_EINVAL, 0, 0},  /* outside */
        {"1", NULL, NULL, NULL, NULL, RPX_EINVAL, 0, 0},
        {"1", "0", NULL, "1", "2", RPX_EINVAL, 0, 0},
        {"-1", "0", "1", "1", "2", RPX_EINVAL, 0, 0},
        {"1x", "0", "1", "1", "2", RPX_EINVAL, 0, 0},
        {"0", "0", "0", "0", "1", 1, 0, 1},
        {"2", "0", "4", "0", "3", RPX_EINVAL, 0, 0},  /* step 0 */
    };
    size_t k;
    (void)st;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        rpx_slurm_array a = {c[k].id, c[k].min, c[k].max, c[k].step, c[k].count};
        rpx_error err = {0};
        long i = -1, n = -1;
        int rc = rpx_batch_slurm_shard(&a, &i, &n, &err);
        if (rc != c[k].rc) fail_msg("case %zu: rc %d, want %d (%s)", k, rc, c[k].rc, err.message);
        if (rc == 1 && (i != c[k].i || n != c[k].n))
            fail_msg("case %zu: shard %ld/%ld, want %ld/%ld", k, i, n, c[k].i, c[k].n);
        if (rc < 0) {
            assert_non_null(strstr(err.message, "SLURM_ARRAY_TASK_ID="));
            assert_non_null(strstr(err.message, "SLURM_ARRAY_TASK_STEP="));
            assert_non_null(strstr(err.message, "--shard I/N"));
        }
    }
}

static void test_report_path_slashes(void **st)
{
    rpx_batch_job j;
    const char *dirs[][2] = {{"out", "out/t/m.json"}, {"out/", "out/t/m.json"},
                             {"out///", "out/t/m.json"}, {"/", "/t/m.json"}, {"//", "/t/m.json"}};
    size_t k;
    (void)st;
    memset(&j, 0, sizeof j);
    j.task = "t";
    j.model_name = "m";
    for (k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        char *p = rpx_batch_report_path(dirs[k][0], &j), *d = rpx_batch_dir_clean(dirs[k][0]);
        assert_string_equal(p, dirs[k][1]);
        assert_true(strcmp(d, "/") == 0 || d[strlen(d) - 1] != '/');
        free(p);
        free(d);
    }
}

/* The runner's one rule for its worker processes, which batch's same-work
 * check also calls: every kind, gpu_time, no isolation, explicit, capped. */
static void test_runner_processes(void **st)
{
    static const struct {
        const char *model;
        int isolate, gpu_time, processes;
        long repeats;
        int want, asked;
    } cases[] = {
        {"rpxprof-demo:demo_noop", 1, 0, 0, 1000, RPX_RUNNER_DEFAULT_PROCESSES,
         RPX_RUNNER_DEFAULT_PROCESSES},
        {"./libm.so:predict", 1, 0, 0, 1000, RPX_RUNNER_DEFAULT_PROCESSES,
         RPX_RUNNER_DEFAULT_PROCESSES},
        {"mod:fn", 1, 0, 0, 1000, RPX_RUNNER_DEFAULT_PROCESSES, RPX_RUNNER_DEFAULT_PROCESSES},
        {"http://127.0.0.1:9/x", 1, 0, 0, 1000, 1, 1},
        {"rpxprof-demo:demo_noop", 1, 1, 0, 1000, 1, 1},   /* gpu_time */
        {"mod:fn", 0, 0, 0, 1000, 1, 1},                   /* no isolation */
        {"rpxprof-demo:demo_noop", 1, 0, 3, 1000, 3, 3},   /* explicit */
        {"http://127.0.0.1:9/x", 1, 0, 4, 1000, 4, 4},
        {"rpxprof-demo:demo_noop", 1, 0, 0, 2, 2, RPX_RUNNER_DEFAULT_PROCESSES}, /* capped */
        {"rpxprof-demo:demo_noop", 1, 0, 9, 4, 4, 9},
    };
    size_t i;
    (void)st;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rpx_runner_config c;
        int asked = -1;
        rpx_runner_config_init(&c);
        c.model = cases[i].model;
        c.isolate = cases[i].isolate;
        c.gpu_time = cases[i].gpu_time;
        c.processes = cases[i].processes;
        c.repeats = cases[i].repeats;
        assert_int_equal(rpx_runner_processes(&c, &asked), cases[i].want);
        assert_int_equal(asked, cases[i].asked);
    }
    {   /* a caller-made target (the Python package): its own kind name counts */
        rpx_runner_config c;
        rpx_target_custom custom;
        memset(&custom, 0, sizeof custom);
        rpx_runner_config_init(&c);
        c.model = "mod:fn";
        c.target.custom = &custom;
        custom.kind_name = "http";
        assert_int_equal(rpx_runner_processes(&c, NULL), 1);
        custom.kind_name = "python";
        assert_int_equal(rpx_runner_processes(&c, NULL), RPX_RUNNER_DEFAULT_PROCESSES);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_order_paths_defaults),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_runner_processes),
        cmocka_unit_test(test_plot_svg),
        cmocka_unit_test(test_slurm_shard),
        cmocka_unit_test(test_report_path_slashes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
