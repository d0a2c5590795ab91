/* run.c — owns `rpxprof run`: options, the order of the steps, the report. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/run_stage.h"
#include "rpxprof/clock.h"
#include "rpxprof/cost.h"
#include "rpxprof/cuda.h"
#include "rpxprof/gpu_memory.h"
#include "rpxprof/gpu_time.h"
#include "rpxprof/error.h"
#include "rpxprof/latency.h"
#include "rpxprof/npz.h"
#include "rpxprof/nvml.h"
#include "rpxprof/output.h"
#include "rpxprof/rss_trend.h"
#include "rpxprof/report.h"
#include "rpxprof/roofline.h"
#include "rpxprof/run.h"
#include "rpxprof/system.h"
#include "rpxprof/target.h"

static const char usage[] =
    "Usage: rpxprof run --model TARGET --inputs FILE.npz --output FILE.json [OPTION]...\n"
    "Time a prediction function on fixed inputs and write a JSON report.\n"
    "\n"
    "  -m, --model TARGET     PATH/lib.so:SYMBOL (a shared object, see model.h),\n"
    "                         rpxprof-demo:SYMBOL (the packaged demo: demo_depth,\n"
    "                         demo_video_depth, demo_pose, demo_noop),\n"
    "                         MODULE:FUNCTION (a Python callable; arrays become\n"
    "                         keyword arguments) or http(s)://HOST/PATH (an HTTP API)\n"
    "  -i, --inputs FILE      NPZ (or NPY) file; every array is passed to the model\n"
    "  -o, --output FILE      report path (folders are created; '-' = stdout); an\n"
    "                         existing file is replaced only when it is an rpxprof\n"
    "                         report; checked before the first call\n"
    "      --force            replace an existing file that is not a report (never\n"
    "                         the inputs or the model)\n"
    "      --device DEV       cpu (default) or cuda\n"
    "      --precision STR    recorded as given (default: unspecified)\n"
    "      --unit STR         what one call processes: frame, clip, pair, request\n"
    "                         (default: request)\n"
    "      --warmup N         untimed calls first (default: 10)\n"
    "      --repeats N        timed calls, one sample each (default: 1000; at most\n"
    "                         10000000)\n"
    "      --meta KEY=VALUE   record what the shapes do not say (repeatable)\n"
    "      --gpu-time         cuda: per-call GPU busy time from CUPTI kernel records\n"
    "\n"
    "Model cost and bounds (the report's efficiency, roofline, realtime_budget):\n"
    "      --cost MODEL.onnx  cost the model's graph (input shapes from the NPZ arrays\n"
    "                         of the same names; --input/--dim bind the rest)\n"
    "      --input NAME=DIMS  bind a graph input's shape for --cost (1x3x480x640)\n"
    "      --dim NAME=N       bind a symbolic dimension for --cost\n"
    "      --flops N          declare FLOPs per call for a model without a graph\n"
    "      --params N         declare its parameter count\n"
    "      --gpu KEY[,KEY]    roofline targets (rpxprof gpus); default: the detected\n"
    "                         GPU on cuda runs, the host CPU and the reference set\n"
    "      --gpu-spec FILE    add or override GPU specs (also RPX_GPU_SPECS)\n"
    "      --tf32             fp32 dense ops run on TF32 tensor cores\n"
    "      --budget-hz LIST   real-time rates, comma-separated (default 5,10,30)\n"
    "\n"
    "HTTP APIs (--model http://... or https://...):\n"
    "      --body FILE        send FILE instead of the NPZ file's bytes\n"
    "      --header 'K: V'    add a request header (repeatable); ${VAR} in V is read\n"
    "                         from the environment; secret values are never reported\n"
    "      --method M         HTTP method (default POST; GET and HEAD send no body)\n"
    "      --connect-timeout S  (default 10)   --request-timeout S  (default 60)\n"
    "      --max-failures N   stop after N failed calls (default 100; 0: no limit)\n"
    "      --insecure         do not verify the server's TLS certificate (recorded)\n"
    "\n"
    "Isolation (a model that crashes, hangs or is killed still leaves a report):\n"
    "      --timeout S        kill the run after S seconds (status timed_out)\n"
    "      --call-timeout S   kill it when one call takes more than S seconds\n"
    "                         (resolution about 1 ms)\n"
    "      --setup-timeout S  kill it when loading and setup take more than S seconds\n"
    "      --grace S          after SIGINT/SIGTERM, wait S seconds (default 2) for\n"
    "                         the call in progress, then kill the model's process;\n"
    "                         a second SIGINT kills it at once\n"
    "      --no-isolate       run the model in this process (for debuggers)\n"
    "  -q, --quiet            no progress line and no warnings\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "Exit status: 0 success, 1 failure (nothing written), 2 bad command line,\n"
    "3 crashed, 4 timed out, 5 killed, 6 calls failed (HTTP: every call, or\n"
    "--max-failures), 130 interrupted by SIGINT, 143 by SIGTERM (3-6, 130 and 143\n"
    "write the report with every sample measured before the event).\n";


#define MAX_BINDINGS 64
#define MAX_HEADERS 64

typedef struct run_opts {
    const char *model, *inputs, *output, *device, *precision, *unit;
    long warmup, repeats;
    int quiet;
    json_t *meta;
    const char *cost, *gpus, *gpu_spec, *budget_hz;
    double flops, params;         /* NaN: not declared */
    int tf32, gpu_time, no_isolate, force;
    double timeout_s, call_timeout_s, setup_timeout_s, grace_s;
    double hz[16];                /* --budget-hz, checked */
    size_t n_hz;
    const char *bind_inputs[MAX_BINDINGS], *bind_dims[MAX_BINDINGS];
    size_t n_bind_inputs, n_bind_dims;
    const char *headers[MAX_HEADERS];
    size_t n_headers;
    const char *body, *method;
    double connect_timeout_s, request_timeout_s;
    long max_failures;
    int insecure;
    const char *http_option_name; /* the last HTTP-only option given, for errors */
} run_opts;

/* --budget-hz 5,10,30: 1 to 16 rates, each a number above 0. 0, or -1 after
 * the message. */
static int parse_budget(const char *arg, double hz[16], size_t *n)
{
    const char *p = arg;
    *n = 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char tok[64];
        double v;
        if (*n == 16)
            return rpx_cli_fail("run", -1, "--budget-hz '%s': at most 16 rates", arg);
        if (len == 0 || len >= sizeof tok)
            return rpx_cli_fail("run", -1,
                                "--budget-hz '%s': an empty or overlong rate; give rates in "
                                "Hz separated by commas, such as 5,10,30",
                                arg);
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (rpx_cli_parse_number(tok, &v) != 0 || !(v > 0) || v > 1e9)
            return rpx_cli_fail("run", -1,
                                "--budget-hz '%s': '%s' is not a rate above 0; give rates in Hz "
                                "separated by commas, such as 5,10,30",
                                arg, tok);
        hz[(*n)++] = v;
        if (!comma) return 0;
        p = comma + 1;
    }
}

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
    enum { O_DEVICE = 256, O_PRECISION, O_UNIT, O_WARMUP, O_REPEATS, O_META, O_COST, O_INPUT,
           O_DIM, O_FLOPS, O_PARAMS, O_GPU, O_GPU_SPEC, O_TF32, O_BUDGET, O_GPU_TIME,
           O_NO_ISOLATE, O_TIMEOUT, O_CALL_TIMEOUT, O_BODY, O_HEADER, O_METHOD,
           O_CONNECT_TIMEOUT, O_REQUEST_TIMEOUT, O_MAX_FAILURES, O_INSECURE, O_FORCE,
           O_SETUP_TIMEOUT, O_GRACE };
    static const struct option longs[] = {
        {"model", required_argument, 0, 'm'},     {"inputs", required_argument, 0, 'i'},
        {"output", required_argument, 0, 'o'},    {"device", required_argument, 0, O_DEVICE},
        {"precision", required_argument, 0, O_PRECISION},
        {"unit", required_argument, 0, O_UNIT},   {"warmup", required_argument, 0, O_WARMUP},
        {"repeats", required_argument, 0, O_REPEATS},
        {"meta", required_argument, 0, O_META},   {"quiet", no_argument, 0, 'q'},
        {"cost", required_argument, 0, O_COST},   {"input", required_argument, 0, O_INPUT},
        {"dim", required_argument, 0, O_DIM},     {"flops", required_argument, 0, O_FLOPS},
        {"params", required_argument, 0, O_PARAMS}, {"gpu", required_argument, 0, O_GPU},
        {"gpu-spec", required_argument, 0, O_GPU_SPEC}, {"tf32", no_argument, 0, O_TF32},
        {"budget-hz", required_argument, 0, O_BUDGET},
        {"gpu-time", no_argument, 0, O_GPU_TIME},
        {"no-isolate", no_argument, 0, O_NO_ISOLATE},
        {"timeout", required_argument, 0, O_TIMEOUT},
        {"call-timeout", required_argument, 0, O_CALL_TIMEOUT},
        {"body", required_argument, 0, O_BODY},   {"header", required_argument, 0, O_HEADER},
        {"method", required_argument, 0, O_METHOD},
        {"connect-timeout", required_argument, 0, O_CONNECT_TIMEOUT},
        {"request-timeout", required_argument, 0, O_REQUEST_TIMEOUT},
        {"max-failures", required_argument, 0, O_MAX_FAILURES},
        {"insecure", no_argument, 0, O_INSECURE},
        {"force", no_argument, 0, O_FORCE},
        {"setup-timeout", required_argument, 0, O_SETUP_TIMEOUT},
        {"grace", required_argument, 0, O_GRACE},
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
            if (rpx_cli_parse_long(optarg, &o->warmup) || o->warmup < 0 ||
                o->warmup > RPX_MAX_WARMUP)
                return rpx_cli_fail("run", -1,
                                    "--warmup '%s': give a whole number from 0 to %ld",
                                    optarg, RPX_MAX_WARMUP);
            break;
        case O_REPEATS:
            if (rpx_cli_parse_long(optarg, &o->repeats) || o->repeats < 1 ||
                o->repeats > RPX_MAX_REPEATS)
                return rpx_cli_fail("run", -1,
                                    "--repeats '%s': give a whole number from 1 to %ld (every "
                                    "timed call keeps its sample in memory and in the report; "
                                    "split a longer measurement into several runs)",
                                    optarg, RPX_MAX_REPEATS);
            break;
        case O_META:
            if (add_meta(o->meta, optarg) != 0)
                return rpx_cli_fail("run", -1, "--meta '%s': expected KEY=VALUE", optarg);
            break;
        case O_COST: o->cost = optarg; break;
        case O_GPU: o->gpus = optarg; break;
        case O_GPU_SPEC: o->gpu_spec = optarg; break;
        case O_TF32: o->tf32 = 1; break;
        case O_GPU_TIME: o->gpu_time = 1; break;
        case O_NO_ISOLATE: o->no_isolate = 1; break;
        case O_FORCE: o->force = 1; break;
        case O_TIMEOUT:
        case O_CALL_TIMEOUT:
        case O_SETUP_TIMEOUT:
        case O_GRACE: {
            double *v = c == O_TIMEOUT ? &o->timeout_s
                      : c == O_CALL_TIMEOUT ? &o->call_timeout_s
                      : c == O_SETUP_TIMEOUT ? &o->setup_timeout_s : &o->grace_s;
            const char *name = c == O_TIMEOUT ? "timeout"
                             : c == O_CALL_TIMEOUT ? "call-timeout"
                             : c == O_SETUP_TIMEOUT ? "setup-timeout" : "grace";
            if (rpx_cli_parse_number(optarg, v) != 0 || (c != O_GRACE && *v <= 0) || *v > 1e9)
                return rpx_cli_fail("run", -1, "--%s '%s': give a number of seconds %s",
                                    name, optarg, c == O_GRACE ? "(0 or more)" : "above 0");
            break;
        }
        case O_BUDGET:
            o->budget_hz = optarg;
            if (parse_budget(optarg, o->hz, &o->n_hz) != 0) return -1;
            break;
        case O_BODY: o->body = optarg; o->http_option_name = "--body"; break;
        case O_METHOD: o->method = optarg; o->http_option_name = "--method"; break;
        case O_INSECURE: o->insecure = 1; o->http_option_name = "--insecure"; break;
        case O_HEADER:
            if (o->n_headers == MAX_HEADERS)
                return rpx_cli_fail("run", -1, "too many --header options (at most %d)",
                                    MAX_HEADERS);
            o->headers[o->n_headers++] = optarg;
            o->http_option_name = "--header";
            break;
        case O_CONNECT_TIMEOUT:
        case O_REQUEST_TIMEOUT: {
            double *v = c == O_CONNECT_TIMEOUT ? &o->connect_timeout_s : &o->request_timeout_s;
            const char *name = c == O_CONNECT_TIMEOUT ? "--connect-timeout" : "--request-timeout";
            if (rpx_cli_parse_number(optarg, v) != 0 || *v <= 0)
                return rpx_cli_fail("run", -1, "%s '%s': give a number of seconds above 0",
                                    name, optarg);
            o->http_option_name = name;
            break;
        }
        case O_MAX_FAILURES:
            if (rpx_cli_parse_long(optarg, &o->max_failures) || o->max_failures < 0)
                return rpx_cli_fail("run", -1,
                                    "--max-failures '%s': give a whole number, 0 (no limit) or "
                                    "more",
                                    optarg);
            o->http_option_name = "--max-failures";
            break;
        case O_INPUT:
        case O_DIM:
            if (!strchr(optarg, '=') || optarg[0] == '=')
                return rpx_cli_fail("run", -1, "--%s '%s': expected NAME=%s",
                                    c == O_INPUT ? "input" : "dim", optarg,
                                    c == O_INPUT ? "DIMS (1x3x480x640)" : "N");
            if (c == O_INPUT && o->n_bind_inputs < MAX_BINDINGS)
                o->bind_inputs[o->n_bind_inputs++] = optarg;
            else if (c == O_DIM && o->n_bind_dims < MAX_BINDINGS)
                o->bind_dims[o->n_bind_dims++] = optarg;
            else
                return rpx_cli_fail("run", -1, "too many --input/--dim bindings (at most %d)",
                                    MAX_BINDINGS);
            break;
        case O_FLOPS:
        case O_PARAMS:
            if (rpx_cli_parse_number(optarg, c == O_FLOPS ? &o->flops : &o->params) != 0)
                return rpx_cli_fail("run", -1, "--%s '%s': give a number such as 4878.9e9",
                                    c == O_FLOPS ? "flops" : "params", optarg);
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
    {
        rpx_error gerr = {0};
        if (rpx_target_check_spec(o->model, &gerr) != 0)
            return rpx_cli_fail("run", -1, "%s", gerr.message);
    }
    if (!o->inputs) return rpx_cli_fail("run", -1, "--inputs is required (an NPZ file)");
    if (!o->output) return rpx_cli_fail("run", -1, "--output is required (a JSON file, or -)");
    if (strcmp(o->device, "cpu") != 0 && strcmp(o->device, "cuda") != 0)
        return rpx_cli_fail("run", -1, "--device '%s': expected cpu or cuda", o->device);
    if (!*o->precision)
        return rpx_cli_fail("run", -1, "--precision is empty; give e.g. fp32, fp16, bf16, int8");
    if (!*o->unit)
        return rpx_cli_fail("run", -1, "--unit is empty; give e.g. frame, clip, pair, request");
    if (o->no_isolate && (o->timeout_s > 0 || o->call_timeout_s > 0 || o->setup_timeout_s > 0))
        return rpx_cli_fail("run", -1, "--timeout, --call-timeout and --setup-timeout need "
                                       "isolation; drop --no-isolate");
    if (o->gpu_time && strcmp(o->device, "cuda") != 0)
        return rpx_cli_fail("run", -1, "--gpu-time needs --device cuda (it traces GPU kernels)");
    if (strcmp(rpx_target_kind_name(o->model), "http") == 0) {
        const char *local = o->cost ? "--cost" : o->flops == o->flops ? "--flops"
                          : o->params == o->params ? "--params" : o->gpus ? "--gpu"
                          : o->gpu_time ? "--gpu-time" : strcmp(o->device, "cuda") == 0
                          ? "--device cuda" : NULL;
        if (local)
            return rpx_cli_fail("run", -1,
                                "%s describes the model or the device it runs on, and an HTTP "
                                "API's model runs remotely (remote API: not measured here); "
                                "drop %s",
                                local, local);
    } else if (o->http_option_name) {
        char *shown = rpx_target_redact_spec(o->model);
        rpx_cli_fail("run", -1, "%s is for HTTP API targets (--model http(s)://...), not %s",
                     o->http_option_name, shown ? shown : "this --model");
        free(shown);
        return -1;
    }
    if (o->cost && (o->flops == o->flops || o->params == o->params))
        return rpx_cli_fail("run", -1,
                            "--cost and --flops/--params both describe the model's cost; give "
                            "one or the other");
    return 0;
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

/* Median of n samples (sorts a copy); -1 when n is 0 or out of memory. */
static double median_ns(const int64_t *s, size_t n)
{
    int64_t *c;
    double m;
    if (n == 0 || !(c = malloc(n * sizeof *c))) return -1;
    memcpy(c, s, n * sizeof *c);
    m = rpx_median_i64(c, n);
    free(c);
    return m;
}

/* Latency drift: the median of the last tenth of the calls against the first
 * tenth (throttling, a leak, caches or clocks still settling). */
static void drift_note(const int64_t *samples, size_t n, json_t *notes, int quiet)
{
    size_t tenth = n / 10;
    double first, last, change;
    char buf[512];
    if (n < 50) return;
    first = median_ns(samples, tenth);
    last = median_ns(samples + n - tenth, tenth);
    if (first <= 0 || last < 0) return;
    change = (last - first) / first;
    if (change < 0.10 && change > -0.10) return;
    snprintf(buf, sizeof buf,
             "Latency drifted across the run: the median of the last tenth of the calls "
             "(%.4g ms) is %.0f%% %s the first tenth (%.4g ms); throttling, a leak, or warmup "
             "too short for caches and clocks to settle.",
             last / 1e6, (change < 0 ? -change : change) * 100, change < 0 ? "below" : "above",
             first / 1e6);
    json_array_append_new(notes, json_string(buf));
    if (!quiet) fprintf(stderr, "rpxprof run: warning: %s\n", buf);
}

static void warn_note(json_t *notes, int quiet, const char *text)
{
    json_array_append_new(notes, json_string(text));
    if (!quiet) fprintf(stderr, "rpxprof run: warning: %s\n", text);
}

/* Three significant digits: a rate per call reproduces no better. */
static json_t *sig3(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.3g", v);
    return json_real(strtod(buf, NULL));
}

/* The resident set across the timed calls, as the report's
 * memory.cpu_rss_trend; NULL when the loop never ran. */
static json_t *rss_trend_json(const rpx_rss_summary *t)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "readings", json_integer(t->readings));
    json_object_set_new(o, "every_calls", json_integer(t->every_calls));
    if (!t->available) {
        json_object_set_new(o, "leak_suspected", json_null());
        json_object_set_new(o, "reason", json_string(t->reason));
        return o;
    }
    json_object_set_new(o, "first_quarter_mb", json_real(t->first_quarter_mb));
    json_object_set_new(o, "last_quarter_mb", json_real(t->last_quarter_mb));
    json_object_set_new(o, "growth_kib_per_call", sig3(t->growth_kib_per_call));
    json_object_set_new(o, "detectable_kib_per_call", sig3(t->detectable_kib_per_call));
    json_object_set_new(o, "leak_suspected", json_boolean(t->leak_suspected));
    return o;
}

/* Memory that grows across the timed calls: the model process's resident set
 * (read every N calls by that process), and each device's CUDA memory from
 * the reset to the end. */
static void growth_notes(const rpx_rss_summary *t, json_t *cuda_growth, json_t *notes, int quiet)
{
    char buf[512];
    const char *key;
    json_t *v;
    if (t->available && t->leak_suspected) {
        snprintf(buf, sizeof buf,
                 "Resident memory grew during the timed calls: %.1f MiB in the first quarter of "
                 "the run, %.1f MiB in the last (about %.1f KiB per call, %d readings from call "
                 "%ld to %ld); the model may be leaking.",
                 t->first_quarter_mb, t->last_quarter_mb, t->growth_kib_per_call, t->readings,
                 t->first_call, t->last_call);
        warn_note(notes, quiet, buf);
    }
    json_object_foreach(cuda_growth, key, v) {
        if (json_is_number(v) && json_number_value(v) > 64) {
            snprintf(buf, sizeof buf,
                     "CUDA memory in use on device %s grew by %.1f MiB across the timed calls; "
                     "the model may be leaking device memory.",
                     key, json_number_value(v));
            warn_note(notes, quiet, buf);
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

/* ---- the cost and roofline layers ---- */

typedef struct layers {
    rpx_cost *cost;
    rpx_efficiency eff;
    json_t *efficiency;
    rpx_gpu_table *table;
    const rpx_gpu_spec *chosen[32];
    size_t n_chosen;
} layers;

static double precision_bytes(const char *p)
{
    if (!strcmp(p, "fp32") || !strcmp(p, "tf32")) return 4;
    if (!strcmp(p, "fp16") || !strcmp(p, "bf16")) return 2;
    if (!strcmp(p, "fp8") || !strcmp(p, "int8")) return 1;
    if (!strcmp(p, "fp64")) return 8;
    return (double)NAN;
}

/* Before the run: cost the model (or take what was declared) and load the GPU
 * table, so that a bad graph or spec file fails before hours of measuring. */
static int layers_prepare(const run_opts *o, layers *l, rpx_error *err)
{
    int rc;
    rpx_efficiency_init(&l->eff);
    if (o->cost) {
        rpx_cost_options co;
        rpx_cost_options_init(&co);
        if (strcmp(o->precision, "unspecified") != 0 && precision_bytes(o->precision) == precision_bytes(o->precision))
            co.precision = o->precision;
        co.input_shapes = o->bind_inputs;
        co.n_input_shapes = o->n_bind_inputs;
        co.dims = o->bind_dims;
        co.n_dims = o->n_bind_dims;
        if ((rc = rpx_cost_analyze_onnx(o->cost, &co, &l->cost, err)) != 0) return rc;
        l->eff = *rpx_cost_efficiency(l->cost);
        l->efficiency = rpx_cost_json(l->cost, 0);
    } else {
        if (o->flops == o->flops || o->params == o->params) {
            l->eff.source = "declared";
            l->eff.flops = o->flops;
            l->eff.params = o->params;
            l->eff.param_bytes = o->params * precision_bytes(o->precision);
            rpx_efficiency_derive(&l->eff);
        }
        l->efficiency = rpx_efficiency_json(&l->eff);
    }
    if (!l->efficiency) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if ((rc = rpx_gpu_table_create(&l->table)) != 0 ||
        (rc = rpx_gpu_table_load_env(l->table, err)) != 0)
        return rc ? rc : RPX_ENOMEM;
    if (o->gpu_spec && (rc = rpx_gpu_table_load_file(l->table, o->gpu_spec, err)) != 0) return rc;
    if (o->gpus) {
        char buf[1024], *tok, *save = NULL;
        snprintf(buf, sizeof buf, "%s", o->gpus);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            const rpx_gpu_spec *g = rpx_gpu_table_find(l->table, tok);
            if (!g)
                return rpx_error_set(err, RPX_EUSAGE,
                                     "--gpu %s: no GPU with key '%s'; 'rpxprof gpus' lists the "
                                     "keys, --gpu-spec FILE adds your own",
                                     o->gpus, tok);
            if (l->n_chosen < sizeof l->chosen / sizeof l->chosen[0]) l->chosen[l->n_chosen++] = g;
        }
    }
    return 0;
}

static void add_unique(layers *l, const rpx_gpu_spec *g)
{
    size_t i;
    if (!g) return;
    for (i = 0; i < l->n_chosen; i++)
        if (l->chosen[i] == g) return;
    if (l->n_chosen < sizeof l->chosen / sizeof l->chosen[0]) l->chosen[l->n_chosen++] = g;
}

/* --budget-hz: the rates, at most 16 (0 when not given: the defaults). */
static size_t budget_rates(const run_opts *o, double hz[16])
{
    memcpy(hz, o->hz, o->n_hz * sizeof *hz);
    return o->n_hz;
}

/* After the run: the bounds on the chosen targets and the real-time budget. */
static void layers_finish(const run_opts *o, layers *l, const rpx_inputs *in, double p50_ms,
                          json_t *cuda_section, json_t *notes, json_t **roofline,
                          json_t **budget)
{
    static const char *reference[] = {"ref-a100-80gb", "ref-rtx4090", "ref-jetson-orin-64gb"};
    rpx_roofline_input ri;
    rpx_cost_node *nodes = NULL;
    rpx_cpu_peak cpu;
    rpx_cpu_target_storage cpu_storage;
    rpx_gpu_spec cpu_spec;
    rpx_error perr = {0};
    const rpx_gpu_spec *targets[40];
    size_t nt = 0, i;
    double hz[16];
    size_t n_hz = 0;
    long frames = 0;
    char note[RPX_ERROR_MESSAGE_SIZE + 64];

    if (!o->gpus) {
        json_t *dev;
        size_t di;
        json_array_foreach(json_object_get(cuda_section, "visible_devices"), di, dev)
            add_unique(l, rpx_gpu_table_match_name(l->table,
                                                   json_string_value(json_object_get(dev, "name"))));
        if (l->n_chosen == 0)
            for (i = 0; i < 3; i++) add_unique(l, rpx_gpu_table_find(l->table, reference[i]));
    }
    if (!cuda_section && !o->gpus) {
        rpx_error cerr = {0};
        if (rpx_cpu_peak_estimate(&cpu, &cerr) == 0) {
            rpx_cpu_target_spec(&cpu, NULL, &cpu_spec, &cpu_storage);
            targets[nt++] = &cpu_spec;
        } else {
            snprintf(note, sizeof note, "no host-CPU roofline: %s", cerr.message);
            json_array_append_new(notes, json_string(note));
        }
    }
    for (i = 0; i < l->n_chosen && nt < sizeof targets / sizeof targets[0]; i++)
        targets[nt++] = l->chosen[i];

    rpx_roofline_input_init(&ri);
    ri.flops = l->eff.flops;
    ri.bytes = l->eff.traffic_bytes_ideal;
    ri.tf32 = o->tf32;
    ri.measured_p50_ms = p50_ms;
    if (rpx_precision_parse(o->precision, &ri.precision, &perr) != 0) {
        ri.precision = RPX_PREC_FP32;
        snprintf(note, sizeof note,
                 "roofline: precision '%s' names no peak column; bounds use fp32 (give "
                 "--precision fp32|tf32|fp16|bf16|fp8|int8)",
                 o->precision);
        json_array_append_new(notes, json_string(note));
    }
    if (l->cost) {
        size_t n = rpx_cost_node_count(l->cost);
        nodes = n ? malloc(n * sizeof *nodes) : NULL;
        for (i = 0; nodes && i < n; i++) nodes[i] = *rpx_cost_node_at(l->cost, i);
        ri.nodes = nodes;
        ri.n_nodes = nodes ? n : 0;
    }
    if (!(ri.flops == ri.flops))
        json_array_append_new(
            notes, json_string("roofline bounds are null: the model's FLOPs are unknown; give "
                               "--cost MODEL.onnx or --flops N"));
    *roofline = rpx_roofline_json_multi(targets, nt, &ri);
    free(nodes);

    n_hz = budget_rates(o, hz);
    if (strcmp(o->unit, "clip") == 0) {
        json_t *cl = json_object_get(o->meta, "clip_length");
        if (json_is_integer(cl) && json_integer_value(cl) > 0) {
            frames = (long)json_integer_value(cl);
        } else {
            for (i = 0; i < in->count; i++)
                if (in->tensors[i].ndim >= 4) {
                    frames = (long)in->tensors[i].shape[0];
                    break;
                }
        }
    }
    *budget = rpx_realtime_budget_json(p50_ms, n_hz ? hz : NULL, n_hz, frames);
}

static void layers_free(layers *l)
{
    rpx_cost_free(l->cost);
    json_decref(l->efficiency);
    rpx_gpu_table_free(l->table);
}

/* The report's status, and the exit code that says the same. */
static const char *outcome_status(int outcome, int stop_signal, int *exit_code)
{
    switch (outcome) {
    case OUTCOME_INTERRUPTED:
        *exit_code = stop_signal == SIGTERM ? RPX_EXIT_TERMINATED : RPX_EXIT_INTERRUPTED;
        return "interrupted";
    case OUTCOME_CRASHED: *exit_code = RPX_EXIT_CRASHED; return "crashed";
    case OUTCOME_TIMED_OUT: *exit_code = RPX_EXIT_TIMED_OUT; return "timed_out";
    case OUTCOME_KILLED: *exit_code = RPX_EXIT_KILLED; return "killed";
    case OUTCOME_CALLS_FAILED: *exit_code = RPX_EXIT_CALLS_FAILED; return "failed";
    default: *exit_code = RPX_EXIT_OK; return "complete";
    }
}

/* {phase, call_index, in_warmup, signal} of a run that did not complete. */
static json_t *failure_json(const run_shared *sh)
{
    static const char *phases[] = {"load", "setup", "loop", "teardown", "done"};
    json_t *f = json_object();
    int ph = sh->phase;
    json_object_set_new(f, "phase", json_string(ph >= 0 && ph <= PHASE_DONE ? phases[ph] : "?"));
    json_object_set_new(f, "call_index", ph == PHASE_LOOP ? json_integer(sh->failed_call)
                                                          : json_null());
    json_object_set_new(f, "in_warmup", ph == PHASE_LOOP ? json_boolean(sh->failed_in_warmup)
                                                         : json_null());
    json_object_set_new(f, "signal", sh->signal ? json_integer(sh->signal) : json_null());
    json_object_set_new(f, "signal_name", sh->signal ? json_string(strsignal(sh->signal))
                                                     : json_null());
    return f;
}

int rpx_cli_run(int argc, char **argv)
{
    run_opts o;
    rpx_npz *npz = NULL;
    rpx_latency *lat = NULL;
    run_shared *sh = NULL;
    rpx_output *output = NULL;
    rpx_rss_summary trend;
    rpx_error err = {0};
    json_t *card = NULL, *notes = NULL, *report = NULL, *devjson = NULL, *failure = NULL;
    rpx_nvml *nvml = NULL;
    json_t *cond_start = NULL, *cond_end = NULL;
    json_t *roofline = NULL, *budget = NULL, *section;
    const char *kind = NULL;
    char *shown_model = NULL;
    layers lay;
    char sha[65], reso[64];
    const char *batch = NULL, *status;
    char batch_buf[64];
    int rc, exit_code = RPX_EXIT_FAILURE, run_exit = RPX_EXIT_OK, to_stdout = 0;
    size_t i;

    memset(&o, 0, sizeof o);
    memset(&lay, 0, sizeof lay);
    o.device = "cpu";
    o.precision = "unspecified";
    o.unit = "request";
    o.warmup = 10;
    o.repeats = 1000;
    o.flops = o.params = (double)NAN;
    o.max_failures = 100;
    o.grace_s = 2;
    o.meta = json_object();
    if (!o.meta) return rpx_cli_fail("run", RPX_EXIT_FAILURE, "out of memory");
    rc = parse(argc, argv, &o);
    if (rc) {
        json_decref(o.meta);
        return rc == -2 ? RPX_EXIT_OK : RPX_EXIT_USAGE;
    }

    kind = rpx_target_kind_name(o.model);
    shown_model = rpx_target_redact_spec(o.model); /* what reports and messages show */
    if (!shown_model) {
        rpx_cli_fail("run", 0, "out of memory");
        goto out;
    }
    /* 0. the report's place, before anything is loaded or measured: never the
     * inputs, the model or a file that is not a report, unless --force */
    {
        char model_file[4096] = "";
        const char *protect[5];
        size_t np = 0;
        const char *colon = strrchr(o.model, ':');
        rpx_output_options oo = {RPX_OUTPUT_REPORT, RPX_PROFILE_SCHEMA, o.force, protect, 0,
                                 "--output"};
        if (strcmp(kind, "shared_object") == 0 && colon && strncmp(o.model, "rpxprof-demo:", 13))
            snprintf(model_file, sizeof model_file, "%.*s", (int)(colon - o.model), o.model);
        protect[np++] = o.inputs;
        if (model_file[0]) protect[np++] = model_file;
        if (o.cost) protect[np++] = o.cost;
        if (o.body) protect[np++] = o.body;
        if (o.gpu_spec) protect[np++] = o.gpu_spec;
        oo.n_protect = np;
        if (rpx_output_open(o.output, &oo, &output, &err) != 0) {
            rpx_cli_fail("run", 0, "%s", err.message);
            goto out;
        }
    }
    /* 1. inputs, loaded once, outside timing (the child inherits them) */
    if ((rc = rpx_npz_load(o.inputs, &npz, &err)) != 0 ||
        (rc = rpx_file_sha256(o.inputs, sha, &err)) != 0) {
        rpx_cli_fail("run", 0, "%s", err.message);
        goto out;
    }
    /* the cost layer and the GPU table, before anything is measured */
    if ((rc = layers_prepare(&o, &lay, &err)) != 0) {
        rpx_cli_fail("run", 0, "%s", err.message);
        if (rc == RPX_EUSAGE) exit_code = RPX_EXIT_USAGE; /* an unknown --gpu key */
        goto out;
    }
    sh = rpx__run_shared_create(o.repeats);
    if (!sh) {
        rpx_cli_fail("run", 0, "--repeats %ld: cannot map the sample buffer (%ld samples of 8 "
                     "bytes): %s; give fewer repeats", o.repeats, o.repeats, strerror(errno));
        goto out;
    }
    /* NVML (never CUDA) in this process: the card and the conditions */
    if (strcmp(o.device, "cuda") == 0) {
        rpx_error nerr = {0};
        if (rpx_nvml_open(&nvml, &nerr) != 0) nvml = NULL; /* the card says why */
    }
    /* 2. the measured stage: setup, loop, teardown (in a child unless --no-isolate) */
    {
        rpx_target_options topt = {o.inputs, o.body, o.headers, o.n_headers, o.method,
                                   o.connect_timeout_s, o.request_timeout_s, o.insecure};
        run_params rp = {o.model, o.device, o.precision, o.unit, o.warmup, o.repeats,
                         o.gpu_time, !o.quiet && isatty(2), o.timeout_s, o.call_timeout_s,
                         o.setup_timeout_s, o.grace_s, rpx_output_is_stdout(output),
                         &topt, o.max_failures};
        cond_start = rpx_system_conditions(nvml);
        rpx__run_stage(&rp, rpx_npz_inputs(npz), !o.no_isolate, sh);
        cond_end = rpx_system_conditions(nvml);
    }
    if (sh->outcome == OUTCOME_FAILED) {
        rpx_cli_fail("run", 0, "%s", sh->error[0] ? sh->error : "the run failed");
        goto out;
    }
    status = outcome_status(sh->outcome, sh->stop_signal, &run_exit);
    if (sh->outcome >= OUTCOME_CRASHED && sh->outcome != OUTCOME_CALLS_FAILED) {
        /* peaks of a child that died: its lifetime peak from wait4, nothing else */
        rpx_memory_peaks_init(&sh->memory);
        sh->memory.lifetime_peak_bytes = sh->child_maxrss_bytes;
        snprintf(sh->memory.inference_reason, sizeof sh->memory.inference_reason,
                 "not read: the run ended abnormally (%s)", status);
        failure = failure_json(sh);
    } else if (sh->abandoned) {
        failure = failure_json(sh); /* where the abandoned call stood */
    }
    if (sh->json_len) devjson = json_loads(sh->json, 0, NULL);
    rpx_rss_trend_summarise(&sh->trend, &trend);
    section = json_object_get(devjson, "target");

    /* 3. statistics, card, report */
    if (rpx_latency_create(0, &lat) != 0 || rpx_latency_reserve(lat, sh->measured) != 0) {
        rpx_cli_fail("run", 0, "out of memory");
        goto out;
    }
    for (i = 0; i < sh->measured; i++) rpx_latency_add_ns(lat, (double)sh->samples[i]);
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
        if (strcmp(kind, "python") == 0) {
            copt.python_version = json_string_value(json_object_get(section, "version"));
            copt.pytorch_version = json_string_value(json_object_get(section, "torch_version"));
            copt.pytorch_reason = section ? "the Python module did not import torch"
                                          : "not read: the run ended before the Python target "
                                            "reported";
        }
        card = rpx_system_card(&copt, &err);
        if (card) rpx_system_card_set_conditions(card, cond_start, cond_end);
    }
    notes = make_notes(&o, sh->measured, &sh->memory);
    if (notes) {
        drift_note(sh->samples, sh->measured, notes, o.quiet);
        growth_notes(&trend, json_object_get(devjson, "cuda_growth"), notes, o.quiet);
    }
    {
        rpx_latency_stats st;
        double p50 = (double)NAN;
        json_t *gt = json_object_get(devjson, "gpu_time");
        if (rpx_latency_stats_get(lat, &st) == 0 && st.available) p50 = st.p50_ms;
        if (json_is_object(gt) && notes) {
            double busy = json_number_value(json_object_get(gt, "p50_ms"));
            if (json_is_number(json_object_get(gt, "p50_ms")) && p50 == p50 && p50 > 2 * busy) {
                char w[256];
                snprintf(w, sizeof w,
                         "Wall time (p50 %.4g ms) is more than twice the GPU busy time (p50 "
                         "%.4g ms): the model is launch- or host-bound.",
                         p50, busy);
                json_array_append_new(notes, json_string(w));
                if (!o.quiet) fprintf(stderr, "rpxprof run: warning: %s\n", w);
            }
        }
        if (notes && strcmp(kind, "http") == 0) {
            /* the remote model's cost, device and bounds are not knowable from here */
            json_array_append_new(notes, json_string(
                "remote API: the model's device, parameters, FLOPs and roofline bounds are "
                "null (http.not_measured); memory is this client's"));
            double hz[16];
            size_t n_hz = budget_rates(&o, hz);
            budget = rpx_realtime_budget_json(p50, n_hz ? hz : NULL, n_hz, 0);
            if (o.insecure)
                warn_note(notes, o.quiet,
                          "--insecure: the server's TLS certificate was not verified; the "
                          "timings may be of a server other than the one named");
        } else if (notes) {
            layers_finish(&o, &lay, rpx_npz_inputs(npz), p50, json_object_get(devjson, "cuda"),
                          notes, &roofline, &budget);
        }
        if (notes && sh->failed_calls + sh->failed_warmup_calls > 0 &&
            sh->outcome != OUTCOME_CALLS_FAILED) {
            char w[512];
            snprintf(w, sizeof w,
                     "%ld of %ld timed calls failed and are not latency samples (%ld warmup "
                     "calls failed too)%s",
                     sh->failed_calls, (long)sh->measured + sh->failed_calls,
                     sh->failed_warmup_calls, section ? "; see http.status_counts" : "");
            warn_note(notes, o.quiet, w);
        }
    }
    {
        rpx_profile_desc d = {0};
        d.model_callable = shown_model;
        d.target_kind = kind;
        d.target_section = section;
        d.failed_calls = sh->failed_calls;
        d.failed_warmup_calls = sh->failed_warmup_calls;
        if (strcmp(kind, "http") == 0)
            d.timing_scope = "http_request_wall_time: the request sent and the response read in "
                             "full over a kept-alive connection; preloaded_body";
        else if (strcmp(kind, "python") == 0)
            d.timing_scope = "synchronized_callable_wall_time: the Python call (result released "
                             "after the sample); preloaded_inputs as read-only numpy views";
        d.device = o.device;
        d.precision = o.precision;
        d.unit = o.unit;
        d.warmup_calls = sh->warmup_done;
        d.inputs = rpx_npz_inputs(npz);
        d.inputs_path = o.inputs;
        d.inputs_sha256 = sha;
        d.metadata = o.meta;
        d.latency = lat;
        d.memory = &sh->memory;
        d.timer = sh->timer_ok ? &sh->timer : NULL;
        d.cuda_peaks = json_object_get(devjson, "cuda_peaks");
        d.cuda_memory_method = json_object_get(devjson, "cuda_method");
        if (json_is_object(json_object_get(section, "torch_cuda_peak_allocated_mb_by_visible_device"))) {
            /* torch's own allocator, as the reference measures; the process-level beside it */
            d.cuda_process_peaks = d.cuda_peaks;
            d.cuda_process_method = d.cuda_memory_method;
            d.cuda_peaks = json_object_get(section, "torch_cuda_peak_allocated_mb_by_visible_device");
            d.cuda_memory_method = json_object_get(section, "torch_cuda_peak_method");
        }
        d.cuda = json_object_get(devjson, "cuda");
        d.sync_overhead_ns = sh->has_sync ? &sh->sync_ns : NULL;
        d.efficiency = strcmp(kind, "http") == 0 ? NULL : lay.efficiency; /* remote API */
        d.roofline = roofline;
        d.realtime_budget = budget;
        d.gpu_time = json_is_object(json_object_get(devjson, "gpu_time"))
                         ? json_object_get(devjson, "gpu_time")
                         : NULL;
        d.system_card = card;
        d.status = status;
        d.error = sh->outcome == OUTCOME_COMPLETE ? NULL : sh->error;
        d.failure = failure;
        d.isolated = !o.no_isolate;
        d.notes = notes;
        d.wall_ns = sh->outcome == OUTCOME_COMPLETE || sh->outcome == OUTCOME_INTERRUPTED
                        ? sh->wall_ns
                        : -1;
        report = rpx_profile_report(&d);
    }
    if (!report || !card || !notes) {
        rpx_cli_fail("run", 0, "out of memory building the report");
        goto out;
    }
    if (sh->calls_done > o.warmup || sh->trend.n > 0)
        json_object_set_new(json_object_get(report, "memory"), "cpu_rss_trend",
                            rss_trend_json(&trend));
    to_stdout = rpx_output_is_stdout(output);
    {
        char *text = rpx_json_dumps(report);
        size_t len = text ? strlen(text) : 0;
        if (text) text[len++] = '\n'; /* over the NUL: the file ends in a newline */
        rc = text ? rpx_output_commit(output, text, len, &err)
                  : rpx_error_set(&err, RPX_ENOMEM, "out of memory writing the report");
        if (!text) rpx_output_discard(output);
        output = NULL;
        free(text);
        if (rc != 0) {
            rpx_cli_fail("run", 0, "%s", err.message);
            goto out;
        }
    }
    if (!o.quiet) {
        json_t *w;
        size_t wi;
        json_array_foreach(json_object_get(card, "warnings"), wi, w)
            fprintf(stderr, "rpxprof run: warning: %s\n", json_string_value(w));
    }
    if (!to_stdout) printf("%s\n", o.output);
    if (sh->outcome == OUTCOME_INTERRUPTED)
        fprintf(stderr, "rpxprof run: interrupted%s after %zu timed calls; report written\n",
                sh->abandoned ? " (the call in progress was abandoned)" : "", sh->measured);
    else if (sh->outcome != OUTCOME_COMPLETE)
        fprintf(stderr, "rpxprof run: error: %s; report written with %zu samples (status %s)\n",
                sh->error, sh->measured, status);
    exit_code = run_exit;
out:
    rpx_output_discard(output);
    rpx_nvml_close(nvml);
    layers_free(&lay);
    json_decref(roofline);
    json_decref(budget);
    json_decref(cond_start);
    json_decref(cond_end);
    json_decref(devjson);
    json_decref(failure);
    rpx__run_shared_free(sh);
    rpx_latency_destroy(lat);
    /* A Python target run in this process (--no-isolate) leaves its interpreter
     * running, and the model may still hold numpy views of the inputs: keep them
     * mapped until the process exits. */
    if (o.no_isolate && strcmp(kind ? kind : "", "python") == 0) {
        static rpx_npz *kept_for_python;
        kept_for_python = npz;
        (void)kept_for_python;
    } else {
        rpx_npz_free(npz);
    }
    json_decref(card);
    json_decref(notes);
    json_decref(report);
    json_decref(o.meta);
    free(shown_model);
    return exit_code;
}
