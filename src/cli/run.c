/* run.c — owns `rpxprof run`: options, the order of the steps, the report. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "rpxprof/clock.h"
#include "rpxprof/cuda.h"
#include "rpxprof/gpu_memory.h"
#include "rpxprof/error.h"
#include "rpxprof/latency.h"
#include "rpxprof/npz.h"
#include "rpxprof/nvml.h"
#include "rpxprof/report.h"
#include "rpxprof/run.h"
#include "rpxprof/system.h"
#include "rpxprof/target.h"

static const char usage[] =
    "Usage: rpxprof run --model TARGET --inputs FILE.npz --output FILE.json [OPTION]...\n"
    "Time a prediction function on fixed inputs and write a JSON report.\n"
    "\n"
    "  -m, --model TARGET     PATH/lib.so:SYMBOL (a shared object, see model.h) or\n"
    "                         rpxprof-demo:SYMBOL (the packaged demo: demo_depth,\n"
    "                         demo_video_depth, demo_pose, demo_noop)\n"
    "  -i, --inputs FILE      NPZ (or NPY) file; every array is passed to the model\n"
    "  -o, --output FILE      report path (folders are created; '-' = stdout)\n"
    "      --device DEV       cpu (default) or cuda\n"
    "      --precision STR    recorded as given (default: unspecified)\n"
    "      --unit STR         what one call processes: frame, clip, pair, request\n"
    "                         (default: request)\n"
    "      --warmup N         untimed calls first (default: 10)\n"
    "      --repeats N        timed calls, one sample each (default: 1000)\n"
    "      --meta KEY=VALUE   record what the shapes do not say (repeatable)\n"
    "  -q, --quiet            no progress line\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "Exit status: 0 success, 1 failure (nothing written), 2 bad command line,\n"
    "130 interrupted (report written with status \"interrupted\").\n";

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

typedef struct run_opts {
    const char *model, *inputs, *output, *device, *precision, *unit;
    long warmup, repeats;
    int quiet;
    json_t *meta;
} run_opts;

/* --meta KEY=VALUE: integers and reals become numbers, true/false booleans. */
static int add_meta(json_t *meta, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char key[256], *end;
    json_t *v;
    double d;
    long l;
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof key) return -1;
    snprintf(key, sizeof key, "%.*s", (int)(eq - arg), arg);
    eq++;
    if (rpx_cli_parse_long(eq, &l) == 0) {
        v = json_integer(l);
    } else if (*eq && (d = strtod(eq, &end), *end == '\0') && d == d) {
        v = json_real(d);
    } else if (strcmp(eq, "true") == 0 || strcmp(eq, "false") == 0) {
        v = json_boolean(eq[0] == 't');
    } else {
        v = json_string(eq);
    }
    return v ? json_object_set_new(meta, key, v) : -1;
}

static int parse(int argc, char **argv, run_opts *o)
{
    enum { O_DEVICE = 256, O_PRECISION, O_UNIT, O_WARMUP, O_REPEATS, O_META };
    static const struct option longs[] = {
        {"model", required_argument, 0, 'm'},     {"inputs", required_argument, 0, 'i'},
        {"output", required_argument, 0, 'o'},    {"device", required_argument, 0, O_DEVICE},
        {"precision", required_argument, 0, O_PRECISION},
        {"unit", required_argument, 0, O_UNIT},   {"warmup", required_argument, 0, O_WARMUP},
        {"repeats", required_argument, 0, O_REPEATS},
        {"meta", required_argument, 0, O_META},   {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":m:i:o:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'm': o->model = optarg; break;
        case 'i': o->inputs = optarg; break;
        case 'o': o->output = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'h': fputs(usage, stdout); return -2;
        case O_DEVICE: o->device = optarg; break;
        case O_PRECISION: o->precision = optarg; break;
        case O_UNIT: o->unit = optarg; break;
        case O_WARMUP:
            if (rpx_cli_parse_long(optarg, &o->warmup) || o->warmup < 0)
                return rpx_cli_fail("run", -1, "--warmup '%s': give a whole number, 0 or more",
                                    optarg);
            break;
        case O_REPEATS:
            if (rpx_cli_parse_long(optarg, &o->repeats) || o->repeats < 1)
                return rpx_cli_fail("run", -1, "--repeats '%s': give a whole number, 1 or more",
                                    optarg);
            break;
        case O_META:
            if (add_meta(o->meta, optarg) != 0)
                return rpx_cli_fail("run", -1, "--meta '%s': expected KEY=VALUE", optarg);
            break;
        case ':':
            return rpx_cli_fail("run", -1, "%s needs a value (see 'rpxprof run --help')",
                                argv[optind - 1]);
        default:
            return rpx_cli_fail("run", -1, "unknown option '%s' (see 'rpxprof run --help')",
                                argv[optind - 1]);
        }
    }
    if (optind < argc)
        return rpx_cli_fail("run", -1, "unexpected argument '%s' (see 'rpxprof run --help')",
                            argv[optind]);
    if (!o->model) return rpx_cli_fail("run", -1, "--model is required (see 'rpxprof run --help')");
    if (!o->inputs) return rpx_cli_fail("run", -1, "--inputs is required (an NPZ file)");
    if (!o->output) return rpx_cli_fail("run", -1, "--output is required (a JSON file, or -)");
    if (strcmp(o->device, "cpu") != 0 && strcmp(o->device, "cuda") != 0)
        return rpx_cli_fail("run", -1, "--device '%s': expected cpu or cuda", o->device);
    if (!*o->precision)
        return rpx_cli_fail("run", -1, "--precision is empty; give e.g. fp32, fp16, bf16, int8");
    if (!*o->unit)
        return rpx_cli_fail("run", -1, "--unit is empty; give e.g. frame, clip, pair, request");
    return 0;
}

static void gpu_peaks_reset(void *ctx)
{
    rpx_gpu_mem_reset(ctx);
}

/* The report's `cuda` section: what the driver made visible. */
static json_t *cuda_json(rpx_cuda *cuda)
{
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    const char *ver = rpx_cuda_driver_version(cuda);
    json_t *o = json_object();
    json_object_set_new(o, "CUDA_VISIBLE_DEVICES", vis ? json_string(vis) : json_null());
    json_object_set_new(o, "driver_api_version", ver ? json_string(ver) : json_null());
    json_object_set_new(o, "visible_devices", rpx_cuda_devices_json(cuda));
    json_object_set_new(o, "synchronized", json_string("primary context of every visible device, "
                                                      "before and after every call"));
    return o;
}

/* "HxW" of the first image-like input (rank >= 3, last dimension 1, 3 or 4). */
static void input_resolution(const rpx_inputs *in, char *buf, size_t size)
{
    size_t i;
    buf[0] = '\0';
    for (i = 0; i < in->count; i++) {
        const rpx_tensor *t = &in->tensors[i];
        int64_t ch = t->ndim >= 3 ? t->shape[t->ndim - 1] : 0;
        if (ch == 1 || ch == 3 || ch == 4) {
            snprintf(buf, size, "%lldx%lld", (long long)t->shape[t->ndim - 3],
                     (long long)t->shape[t->ndim - 2]);
            return;
        }
    }
}

static json_t *make_notes(const run_opts *o, size_t measured, const rpx_memory_peaks *m)
{
    json_t *notes = json_array();
    char buf[512];
    if (!notes) return NULL;
    if (measured > 0 && measured < 100) {
        snprintf(buf, sizeof buf,
                 "p99 is interpolated from %zu samples; use --repeats 100 or more for a tail "
                 "percentile you can rely on",
                 measured);
        json_array_append_new(notes, json_string(buf));
    }
    if (m->inference_peak_bytes < 0) {
        snprintf(buf, sizeof buf, "cpu_inference_peak_mb is null: %s", m->inference_reason);
        json_array_append_new(notes, json_string(buf));
    }
    (void)o;
    return notes;
}

int rpx_cli_run(int argc, char **argv)
{
    run_opts o = {NULL, NULL, NULL, "cpu", "unspecified", "request", 10, 1000, 0, NULL};
    rpx_npz *npz = NULL;
    rpx_target *target = NULL;
    rpx_latency *lat = NULL;
    rpx_run_result res;
    rpx_timer_info timer;
    rpx_error err = {0};
    json_t *card = NULL, *notes = NULL, *report = NULL;
    json_t *cuda_peaks = NULL, *cuda_method = NULL, *cuda_section = NULL;
    rpx_cuda *cuda = NULL;
    rpx_gpu_mem *gmem = NULL;
    rpx_nvml *nvml = NULL;
    json_t *cond_start = NULL, *cond_end = NULL;
    int64_t sync_ns = -1;
    char sha[65], reso[64];
    const char *batch = NULL;
    char batch_buf[64];
    int rc, exit_code = RPX_EXIT_FAILURE;
    size_t i;

    memset(&res, 0, sizeof res);
    o.meta = json_object();
    if (!o.meta) return rpx_cli_fail("run", RPX_EXIT_FAILURE, "out of memory");
    rc = parse(argc, argv, &o);
    if (rc) {
        json_decref(o.meta);
        return rc == -2 ? RPX_EXIT_OK : RPX_EXIT_USAGE;
    }

    /* 1. inputs, loaded once, outside timing */
    if ((rc = rpx_npz_load(o.inputs, &npz, &err)) != 0 ||
        (rc = rpx_file_sha256(o.inputs, sha, &err)) != 0) {
        rpx_cli_fail("run", 0, "%s", err.message);
        goto out;
    }
    /* 2. the target: load it; on cuda, open the driver and every visible device's
     * primary context first, so that memory is tracked from before setup */
    if ((rc = rpx_target_open(o.model, &target, &err)) != 0) {
        rpx_cli_fail("run", 0, "%s", err.message);
        goto out;
    }
    if (strcmp(o.device, "cuda") == 0) {
        if ((rc = rpx_cuda_open(&cuda, &err)) != 0 ||
            (rc = rpx_cuda_sync_overhead(cuda, 1001, &sync_ns, &err)) != 0 ||
            (rc = rpx_gpu_mem_start(cuda, 1000, &gmem, &err)) != 0) {
            rpx_cli_fail("run", 0, "%s", err.message);
            goto out;
        }
        {
            rpx_error nerr = {0};
            if (rpx_nvml_open(&nvml, &nerr) != 0) nvml = NULL; /* the card says why */
        }
    }
    {
        rpx_run_info info = {RPX_MODEL_ABI_VERSION, o.device, o.precision, o.unit, o.warmup,
                             o.repeats};
        if ((rc = rpx_target_setup(target, rpx_npz_inputs(npz), &info, &err)) != 0) {
            rpx_cli_fail("run", 0, "%s", err.message);
            goto out;
        }
    }
    if ((rc = rpx_timer_calibrate(&timer, 0)) != 0) {
        rpx_cli_fail("run", 0, "cannot calibrate the clock: %s", rpx_strerror(rc));
        goto out;
    }
    /* 3. the loop */
    {
        rpx_run_config cfg = {o.warmup, o.repeats, NULL, NULL, !o.quiet && isatty(2), &g_stop,
                              NULL, NULL};
        struct sigaction sa, old_int, old_term;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        cond_start = rpx_system_conditions(nvml);
        if (cuda) {
            cfg.sync = rpx_cuda_sync_all;
            cfg.sync_ctx = cuda;
            cfg.peaks_reset = gpu_peaks_reset;
            cfg.peaks_ctx = gmem;
        }
        rc = rpx_measure_run(&cfg, target, rpx_npz_inputs(npz), &res, &err);
        rpx_gpu_mem_stop(gmem);
        cond_end = rpx_system_conditions(nvml);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    rpx_target_close(target); /* teardown runs while the contexts are still held */
    target = NULL;
    if (rc != 0 || res.status == RPX_RUN_FAILED) {
        rpx_cli_fail("run", 0, "%s", err.message);
        goto out;
    }
    /* 4. statistics, card, report */
    if (rpx_latency_create(0, &lat) != 0 || rpx_latency_reserve(lat, res.measured) != 0) {
        rpx_cli_fail("run", 0, "out of memory");
        goto out;
    }
    for (i = 0; i < res.measured; i++) rpx_latency_add_ns(lat, (double)res.samples_ns[i]);
    input_resolution(rpx_npz_inputs(npz), reso, sizeof reso);
    {
        json_t *b = json_object_get(o.meta, "batch_size");
        if (json_is_integer(b)) {
            snprintf(batch_buf, sizeof batch_buf, "%lld", (long long)json_integer_value(b));
            batch = batch_buf;
        } else if (json_is_string(b)) {
            batch = json_string_value(b);
        }
    }
    {
        rpx_card_options copt = {o.device, o.precision, batch, reso[0] ? reso : NULL,
                                 nvml, 0, NULL, NULL};
        card = rpx_system_card(&copt, &err);
        if (card) rpx_system_card_set_conditions(card, cond_start, cond_end);
    }
    notes = make_notes(&o, res.measured, &res.memory);
    {
        rpx_profile_desc d = {0};
        d.model_callable = o.model;
        d.target_kind = "shared_object";
        d.device = o.device;
        d.precision = o.precision;
        d.unit = o.unit;
        d.warmup_calls = res.warmup_done;
        d.inputs = rpx_npz_inputs(npz);
        d.inputs_path = o.inputs;
        d.inputs_sha256 = sha;
        d.metadata = o.meta;
        d.latency = lat;
        d.memory = &res.memory;
        d.timer = &timer;
        if (cuda) {
            cuda_peaks = rpx_gpu_mem_peaks_json(gmem);
            cuda_method = rpx_gpu_mem_method_json(gmem);
            cuda_section = cuda_json(cuda);
            d.cuda_peaks = cuda_peaks;
            d.cuda_memory_method = cuda_method;
            d.cuda = cuda_section;
            d.sync_overhead_ns = &sync_ns;
        }
        d.system_card = card;
        d.status = res.status == RPX_RUN_INTERRUPTED ? "interrupted" : "complete";
        d.error = res.status == RPX_RUN_INTERRUPTED ? err.message : NULL;
        d.notes = notes;
        d.wall_ns = res.wall_ns;
        report = rpx_profile_report(&d);
    }
    if (!report || !card || !notes) {
        rpx_cli_fail("run", 0, "out of memory building the report");
        goto out;
    }
    if ((rc = rpx_json_write_file(o.output, report, &err)) != 0) {
        rpx_cli_fail("run", 0, "%s", err.message);
        goto out;
    }
    if (!o.quiet) {
        json_t *w;
        size_t wi;
        json_array_foreach(json_object_get(card, "warnings"), wi, w)
            fprintf(stderr, "rpxprof run: warning: %s\n", json_string_value(w));
    }
    if (strcmp(o.output, "-") != 0) printf("%s\n", o.output);
    if (res.status == RPX_RUN_INTERRUPTED) {
        fprintf(stderr, "rpxprof run: interrupted after %zu timed calls; report written\n",
                res.measured);
        exit_code = RPX_EXIT_INTERRUPTED;
    } else {
        exit_code = RPX_EXIT_OK;
    }
out:
    rpx_target_close(target);
    rpx_gpu_mem_free(gmem);
    rpx_cuda_close(cuda);
    rpx_nvml_close(nvml);
    json_decref(cond_start);
    json_decref(cond_end);
    json_decref(cuda_peaks);
    json_decref(cuda_method);
    json_decref(cuda_section);
    rpx_run_result_free(&res);
    rpx_latency_destroy(lat);
    rpx_npz_free(npz);
    json_decref(card);
    json_decref(notes);
    json_decref(report);
    json_decref(o.meta);
    return exit_code;
}
