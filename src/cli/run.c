/* run.c — owns `rpxprof run`: its options, one call of the runner
 * (include/rpxprof/runner.h), and what the user reads afterwards. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "rpxprof/error.h"
#include "rpxprof/runner.h"
#include "rpxprof/target.h"

static const char usage[] =
    "Usage: rpxprof run --model TARGET --inputs FILE.npz --output FILE.json [OPTION]...\n"
    "       rpxprof run --model TARGET --inputs A.npz --inputs B.npz ... --output FILE.json\n"
    "Time a prediction function on fixed inputs and write a JSON report.\n"
    "\n"
    "  -m, --model TARGET     PATH/lib.so:SYMBOL (a shared object, see model.h),\n"
    "                         rpxprof-demo:SYMBOL (the packaged demo: demo_depth,\n"
    "                         demo_video_depth, demo_pose, demo_noop),\n"
    "                         MODULE:FUNCTION (a Python callable; arrays become\n"
    "                         keyword arguments) or http(s)://HOST/PATH (an HTTP API)\n"
    "  -i, --inputs FILE      NPZ (or NPY) file; every array is passed to the model.\n"
    "                         Repeat it, or name a folder (its *.npz in name order),\n"
    "                         for distinct samples: one sample per file, the same\n"
    "                         arrays, dtypes and shapes in each; the timed calls\n"
    "                         cycle through them (latency_records, latency_by_sample)\n"
    "      --writable-inputs  the model may edit its input arrays in place: their\n"
    "                         bytes are restored before every call, outside the\n"
    "                         timed span (inputs_restore); without it the arrays are\n"
    "                         read-only and a write into them crashes the call\n"
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
    "      --rate HZ          paced calls: one timed call per 1/HZ s on absolute\n"
    "                         deadlines, late starts counted (the report's pacing;\n"
    "                         HZ joins --budget-hz); HTTP: open-loop load, below\n"
    "      --duration S       with --rate: HZ x S timed calls (instead of --repeats)\n"
    "      --compare-back-to-back  with --rate: first the same calls back to back;\n"
    "                         both latencies in the report's pacing\n"
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
    "      --body FILE        send FILE instead of the NPZ file's bytes (then, and\n"
    "                         with GET or HEAD, --inputs is not needed)\n"
    "      --header 'K: V'    add a request header (repeatable); ${VAR} in V is read\n"
    "                         from the environment; secret values are never reported\n"
    "      --method M         HTTP method (default POST; GET and HEAD send no body)\n"
    "      --connect-timeout S  (default 10)   --request-timeout S  (default 60)\n"
    "      --max-failures N   stop after N failed calls (default 100; 0: no limit)\n"
    "      --allow-warmup-failures  a failed warmup call counts towards --max-failures;\n"
    "                         without it the first one ends the run with its reason\n"
    "      --insecure         do not verify the server's TLS certificate (recorded)\n"
    "      --http2            HTTP/2: with prior knowledge for http://, required by\n"
    "                         ALPN for https://; under --rate, requests multiplexed\n"
    "      --stream MODE      read every response as a stream of events: sse, lines\n"
    "                         or chunked (default: sse when the response's\n"
    "                         Content-Type is text/event-stream); http.streaming\n"
    "                         reports TTFT, ITL, TPOT, end to end, tokens/s\n"
    "      --tokens-field PATH  a response's output tokens: the last number at this\n"
    "                         dotted path in its events' JSON (default\n"
    "                         usage.completion_tokens; else one per content event)\n"
    "      --keep-events N    keep N raw event timestamps (default 1000; 0: none)\n"
    "      --slo LIST         goodput: the share of requests meeting every SLO,\n"
    "                         e.g. ttft=500ms,tpot=50ms,e2e=2s\n"
    "      --rate R           (HTTP) open-loop load: R requests per second on a fixed\n"
    "                         schedule, latency from each one's intended send time\n"
    "                         (http.load); needs --duration, replaces --repeats\n"
    "      --duration S       seconds of schedule (R x S requests); it bounds the run:\n"
    "                         then the requests in flight get --drain, the rest are\n"
    "                         dropped (with a local --rate: R x S paced calls)\n"
    "      --drain S          after --duration, how long requests in flight may take\n"
    "                         before they count as timed out (default 5); a warmup\n"
    "                         call waits at most --duration + --drain\n"
    "      --arrivals A       constant (default) or poisson (seeded by --seed N)\n"
    "      --concurrency C    requests in flight at most (default 64)\n"
    "      --load-engine E    auto (default): plain sockets for http://, curl for\n"
    "                         https, --http2 and proxies; sockets; curl\n"
    "\n"
    "Processes and intervals (docs/statistics.md):\n"
    "      --processes K      spread the timed calls over K fresh worker processes,\n"
    "                         one after another, each with its own setup and warmup\n"
    "                         (default 5; 1 for HTTP, --gpu-time and --no-isolate):\n"
    "                         the intervals then cover run-to-run variation\n"
    "      --target-precision P  add processes (each of --repeats/K calls) until the\n"
    "                         p50's 95% interval is within +-P of it (1% or 0.01)\n"
    "      --max-time S       ... or S seconds have passed (default 60)\n"
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
    "  -q, --quiet            no progress line, warnings or summary: only the path\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "Exit status: 0 success, 1 failure (nothing written), 2 bad command line,\n"
    "3 crashed, 4 timed out, 5 killed, 6 calls failed (HTTP: every call,\n"
    "--max-failures, or a warmup call), 130 interrupted by SIGINT, 143 by SIGTERM\n"
    "(3-6, 130 and 143 write the report with every sample measured before the\n"
    "event).\n";


#define MAX_BINDINGS 64
#define MAX_HEADERS 64

typedef struct run_opts {
    const char *model, *inputs, *output, *device, *precision, *unit;
    const char **inputs_list;     /* every --inputs, in order */
    size_t n_inputs;
    int writable_inputs;
    long warmup, repeats;
    int quiet;
    json_t *meta;
    const char *cost, *gpus, *gpu_spec, *budget_hz;
    double flops, params;         /* NaN: not declared */
    int tf32, gpu_time, no_isolate, force;
    long processes;               /* 0: the runner's default */
    double target_precision, max_time_s;
    int max_time_given;
    double timeout_s, call_timeout_s, setup_timeout_s, grace_s;
    double hz[16];                /* --budget-hz, checked */
    size_t n_hz;
    const char *bind_inputs[MAX_BINDINGS], *bind_dims[MAX_BINDINGS];
    size_t n_bind_inputs, n_bind_dims;
    const char *headers[MAX_HEADERS];
    size_t n_headers;
    const char *body, *method;
    const char *stream, *tokens_field, *slo;
    long keep_events;             /* 0: the default; -1: none */
    double rate, duration_s;      /* --rate, --duration: open-loop load (0: none) */
    double drain_s;               /* --drain S (with drain_given) */
    int drain_given, allow_warmup_failures;
    const char *arrivals;
    int poisson, concurrency_given, seed_given, repeats_given, back_to_back;
    int load_engine, load_engine_given; /* --load-engine: 0 auto, 1 curl, 2 sockets */
    long concurrency, seed;
    double connect_timeout_s, request_timeout_s;
    long max_failures;
    int insecure, http2;
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
           O_SETUP_TIMEOUT, O_GRACE, O_PROCESSES, O_TARGET_PRECISION, O_MAX_TIME,
           O_WRITABLE_INPUTS, O_STREAM, O_TOKENS_FIELD, O_KEEP_EVENTS, O_SLO, O_RATE, O_ARRIVALS,
           O_DURATION, O_CONCURRENCY, O_SEED, O_BACK_TO_BACK, O_HTTP2, O_LOAD_ENGINE,
           O_DRAIN, O_ALLOW_WARMUP_FAILURES };
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
        {"http2", no_argument, 0, O_HTTP2},
        {"force", no_argument, 0, O_FORCE},
        {"setup-timeout", required_argument, 0, O_SETUP_TIMEOUT},
        {"grace", required_argument, 0, O_GRACE},
        {"processes", required_argument, 0, O_PROCESSES},
        {"target-precision", required_argument, 0, O_TARGET_PRECISION},
        {"max-time", required_argument, 0, O_MAX_TIME},
        {"writable-inputs", no_argument, 0, O_WRITABLE_INPUTS},
        {"stream", required_argument, 0, O_STREAM},
        {"tokens-field", required_argument, 0, O_TOKENS_FIELD},
        {"keep-events", required_argument, 0, O_KEEP_EVENTS},
        {"slo", required_argument, 0, O_SLO},
        {"rate", required_argument, 0, O_RATE},
        {"arrivals", required_argument, 0, O_ARRIVALS},
        {"duration", required_argument, 0, O_DURATION},
        {"concurrency", required_argument, 0, O_CONCURRENCY},
        {"seed", required_argument, 0, O_SEED},
        {"load-engine", required_argument, 0, O_LOAD_ENGINE},
        {"drain", required_argument, 0, O_DRAIN},
        {"allow-warmup-failures", no_argument, 0, O_ALLOW_WARMUP_FAILURES},
        {"compare-back-to-back", no_argument, 0, O_BACK_TO_BACK},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    int c;
    opterr = 0;
    optind = 1;
    o->inputs_list = calloc((size_t)argc + 1, sizeof *o->inputs_list);
    if (!o->inputs_list) return rpx_cli_fail("run", -1, "out of memory");
    while ((c = getopt_long(argc, argv, ":m:i:o:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'm': o->model = optarg; break;
        case 'i':
            o->inputs = optarg;
            o->inputs_list[o->n_inputs++] = optarg; /* at most argc of them */
            break;
        case O_WRITABLE_INPUTS: o->writable_inputs = 1; break;
        case 'o': o->output = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'h': fputs(usage, stdout); return -2;
        case O_DEVICE: o->device = optarg; break;
        case O_PRECISION: o->precision = optarg; break;
        case O_UNIT: o->unit = optarg; break;
        case O_WARMUP:
            if (rpx_cli_parse_long(optarg, &o->warmup) || o->warmup < 0 ||
                o->warmup > RPX_RUNNER_MAX_WARMUP)
                return rpx_cli_fail("run", -1,
                                    "--warmup '%s': give a whole number from 0 to %ld",
                                    optarg, RPX_RUNNER_MAX_WARMUP);
            break;
        case O_REPEATS:
            if (rpx_cli_parse_long(optarg, &o->repeats) || o->repeats < 1 ||
                o->repeats > RPX_RUNNER_MAX_REPEATS)
                return rpx_cli_fail("run", -1,
                                    "--repeats '%s': give a whole number from 1 to %ld (every "
                                    "timed call keeps its sample in memory and in the report; "
                                    "split a longer measurement into several runs)",
                                    optarg, RPX_RUNNER_MAX_REPEATS);
            o->repeats_given = 1;
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
        case O_PROCESSES:
            if (rpx_cli_parse_long(optarg, &o->processes) || o->processes < 1 ||
                o->processes > RPX_RUNNER_MAX_PROCESSES)
                return rpx_cli_fail("run", -1, "--processes '%s': give a whole number from 1 to %d",
                                    optarg, RPX_RUNNER_MAX_PROCESSES);
            break;
        case O_TARGET_PRECISION: {
            char buf[64];
            size_t n = strlen(optarg);
            int pct = n > 1 && optarg[n - 1] == '%';
            snprintf(buf, sizeof buf, "%.*s", (int)(pct ? n - 1 : n), optarg);
            if (n >= sizeof buf || rpx_cli_parse_number(buf, &o->target_precision) != 0 ||
                (pct && (o->target_precision /= 100, 0)) || !(o->target_precision > 0) ||
                o->target_precision > 0.5)
                return rpx_cli_fail("run", -1,
                                    "--target-precision '%s': give the half width of the p50's "
                                    "95%% interval wanted, relative to it: 1%% or 0.01 (above 0, "
                                    "at most 50%%)",
                                    optarg);
            break;
        }
        case O_MAX_TIME:
            if (rpx_cli_parse_number(optarg, &o->max_time_s) != 0 || !(o->max_time_s > 0) ||
                o->max_time_s > 1e7)
                return rpx_cli_fail("run", -1, "--max-time '%s': give a number of seconds above 0",
                                    optarg);
            o->max_time_given = 1;
            break;
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
        case O_STREAM:
            if (strcmp(optarg, "sse") != 0 && strcmp(optarg, "lines") != 0 &&
                strcmp(optarg, "chunked") != 0)
                return rpx_cli_fail("run", -1, "--stream '%s': expected sse, lines or chunked",
                                    optarg);
            o->stream = optarg;
            o->http_option_name = "--stream";
            break;
        case O_TOKENS_FIELD: o->tokens_field = optarg; o->http_option_name = "--tokens-field"; break;
        case O_SLO: {
            rpx_error serr = {0};
            double ttft, tpot, e2e;
            if (rpx_http_slo_parse(optarg, &ttft, &tpot, &e2e, &serr) != 0)
                return rpx_cli_fail("run", -1, "%s", serr.message);
            o->slo = optarg;
            o->http_option_name = "--slo";
            break;
        }
        case O_RATE:
        case O_DURATION: {
            double *v = c == O_RATE ? &o->rate : &o->duration_s;
            const char *name = c == O_RATE ? "--rate" : "--duration";
            if (rpx_cli_parse_number(optarg, v) != 0 || !(*v > 0) || *v > 1e9)
                return rpx_cli_fail("run", -1, "%s '%s': give a number above 0 (%s)", name,
                                    optarg, c == O_RATE ? "calls per second" : "seconds");
            break; /* --rate and --duration: every kind (local: paced calls) */
        }
        case O_DRAIN:
            if (rpx_cli_parse_number(optarg, &o->drain_s) != 0 || !(o->drain_s >= 0) ||
                o->drain_s > 1e6)
                return rpx_cli_fail("run", -1, "--drain '%s': give a number of seconds, 0 or "
                                               "more", optarg);
            o->drain_given = 1;
            o->http_option_name = "--drain";
            break;
        case O_ALLOW_WARMUP_FAILURES:
            o->allow_warmup_failures = 1;
            o->http_option_name = "--allow-warmup-failures";
            break;
        case O_BACK_TO_BACK: o->back_to_back = 1; break;
        case O_LOAD_ENGINE:
            if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "curl") != 0 &&
                strcmp(optarg, "sockets") != 0)
                return rpx_cli_fail("run", -1, "--load-engine '%s': expected auto, sockets or "
                                               "curl", optarg);
            o->load_engine = optarg[0] == 'c' ? 1 : optarg[0] == 's' ? 2 : 0;
            o->load_engine_given = 1;
            o->http_option_name = "--load-engine";
            break;
        case O_ARRIVALS:
            if (strcmp(optarg, "constant") != 0 && strcmp(optarg, "poisson") != 0)
                return rpx_cli_fail("run", -1, "--arrivals '%s': expected constant or poisson",
                                    optarg);
            o->poisson = strcmp(optarg, "poisson") == 0;
            o->arrivals = optarg;
            o->http_option_name = "--arrivals";
            break;
        case O_CONCURRENCY:
        case O_SEED: {
            long *v = c == O_CONCURRENCY ? &o->concurrency : &o->seed;
            if (rpx_cli_parse_long(optarg, v) || *v < (c == O_SEED ? 0 : 1) ||
                (c == O_CONCURRENCY && *v > 100000))
                return rpx_cli_fail("run", -1, "%s '%s': give a whole number %s",
                                    c == O_SEED ? "--seed" : "--concurrency", optarg,
                                    c == O_SEED ? "(0 or more)" : "from 1 to 100000");
            if (c == O_CONCURRENCY) o->concurrency_given = 1;
            else o->seed_given = 1;
            o->http_option_name = c == O_SEED ? "--seed" : "--concurrency";
            break;
        }
        case O_KEEP_EVENTS:
            if (rpx_cli_parse_long(optarg, &o->keep_events) || o->keep_events < 0 ||
                o->keep_events > 100000000L)
                return rpx_cli_fail("run", -1, "--keep-events '%s': give a whole number from 0 "
                                    "(none) to 100000000", optarg);
            o->keep_events = o->keep_events == 0 ? -1 : o->keep_events;
            o->http_option_name = "--keep-events";
            break;
        case O_METHOD: o->method = optarg; o->http_option_name = "--method"; break;
        case O_INSECURE: o->insecure = 1; o->http_option_name = "--insecure"; break;
        case O_HTTP2: o->http2 = 1; o->http_option_name = "--http2"; break;
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
    if (!o->inputs && strcmp(rpx_target_kind_name(o->model), "http") == 0) {
        /* an API's request body: the inputs file, --body, or none (GET, HEAD) */
        if (!o->body && (!o->method || (strcmp(o->method, "GET") != 0 &&
                                        strcmp(o->method, "HEAD") != 0)))
            return rpx_cli_fail("run", -1, "--inputs or --body is required: the request body "
                                           "(--method GET and HEAD send none)");
    } else if (!o->inputs)
        return rpx_cli_fail("run", -1, "--inputs is required (an NPZ file, several, or a folder "
                                       "of them)");
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
    if (o->processes > 1 && o->no_isolate)
        return rpx_cli_fail("run", -1, "--processes %ld needs isolation (each worker is a child "
                                       "process); drop --no-isolate or give --processes 1",
                            o->processes);
    if (o->processes > 1 && o->gpu_time)
        return rpx_cli_fail("run", -1, "--gpu-time traces the kernels of one process; give "
                                       "--processes 1");
    if (o->max_time_given && !(o->target_precision > 0))
        return rpx_cli_fail("run", -1, "--max-time bounds --target-precision; give both");
    if (o->target_precision > 0 && o->no_isolate)
        return rpx_cli_fail("run", -1, "--target-precision adds worker processes; drop "
                                       "--no-isolate");
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
    if (o->back_to_back && (!(o->rate > 0) || strcmp(rpx_target_kind_name(o->model), "http") == 0))
        return rpx_cli_fail("run", -1, "--compare-back-to-back compares paced calls (--rate HZ) "
                                       "of a shared object or Python callable with the same "
                                       "calls back to back; give --rate, and a local --model");
    if (strcmp(rpx_target_kind_name(o->model), "http") != 0 && o->duration_s > 0) {
        /* paced local calls: --rate x --duration timed calls */
        double n = o->rate * o->duration_s;
        if (!(o->rate > 0))
            return rpx_cli_fail("run", -1, "--duration S paces the calls for S seconds; give "
                                           "--rate HZ too (HZ x S timed calls)");
        if (o->repeats_given)
            return rpx_cli_fail("run", -1, "--repeats and --rate x --duration both set the "
                                           "number of timed calls; give one");
        if (n < 0.5 || n >= (double)RPX_RUNNER_MAX_REPEATS + 0.5)
            return rpx_cli_fail("run", -1, "--rate %g x --duration %g = %.0f calls: give "
                                           "from 1 to %ld",
                                o->rate, o->duration_s, n, (long)RPX_RUNNER_MAX_REPEATS);
        o->repeats = (long)llround(n);
    }
    if (strcmp(rpx_target_kind_name(o->model), "http") == 0 &&
        (o->rate > 0 || o->duration_s > 0 || o->arrivals || o->concurrency_given ||
         o->seed_given || o->load_engine_given || o->drain_given)) {
        double n = o->rate * o->duration_s;
        if (!(o->rate > 0))
            return rpx_cli_fail("run", -1, "--arrivals, --duration, --concurrency, --seed, "
                                           "--drain and --load-engine shape an open-loop load; "
                                           "give --rate too");
        if (!(o->duration_s > 0))
            return rpx_cli_fail("run", -1, "--rate %g needs --duration S (the schedule sends "
                                           "rate x duration requests)", o->rate);
        if (o->repeats_given)
            return rpx_cli_fail("run", -1, "--repeats and --rate both set the number of timed "
                                           "requests (--rate x --duration); give one");
        if (n < 0.5 || n >= (double)RPX_RUNNER_MAX_REPEATS + 0.5)
            return rpx_cli_fail("run", -1, "--rate %g x --duration %g = %.0f requests: give "
                                           "from 1 to %ld",
                                o->rate, o->duration_s, n, (long)RPX_RUNNER_MAX_REPEATS);
        if (o->target_precision > 0 || o->processes > 1)
            return rpx_cli_fail("run", -1, "--rate runs one schedule in one process; drop "
                                           "--processes and --target-precision");
    }
    if (o->cost && (o->flops == o->flops || o->params == o->params))
        return rpx_cli_fail("run", -1,
                            "--cost and --flops/--params both describe the model's cost; give "
                            "one or the other");
    return 0;
}

/* "0.0191 ms [0.0188, 0.0194]": three significant digits at most, fewer when
 * the interval is wide: a number is never printed more precisely than it
 * reproduces. */
static void print_ms(FILE *f, const char *label, json_t *v, json_t *ci)
{
    double x = json_number_value(v);
    int digits = 3;
    if (!json_is_number(v)) {
        fprintf(f, "  %-5s n/a\n", label);
        return;
    }
    if (json_is_array(ci) && json_array_size(ci) == 2) {
        double lo = json_number_value(json_array_get(ci, 0)), hi = json_number_value(json_array_get(ci, 1));
        /* how far the interval reaches from the value, on its wider side */
        double rel = x > 0 ? (hi - x > x - lo ? hi - x : x - lo) / x : 1;
        /* one rounding for all three, so the value stays inside its bounds */
        digits = rel >= 0.05 ? 2 : rel >= 0.005 ? 3 : 4;
        if (rel * 100 < 0.01)
            fprintf(f, "  %-5s %#.*g ms  95%% CI [%#.*g, %#.*g] (+-<0.01%%)\n", label, digits, x,
                    digits, lo, digits, hi);
        else
            fprintf(f, "  %-5s %#.*g ms  95%% CI [%#.*g, %#.*g] (+-%.2g%%)\n", label, digits, x,
                    digits, lo, digits, hi, rel * 100);
    } else {
        fprintf(f, "  %-5s %.*g ms\n", label, digits, x);
    }
}

/* The few lines a person reads after a run, like hyperfine's. */
static void print_summary(const rpx_runner_result *r, long asked)
{
    json_t *rep = r->report, *lat = json_object_get(rep, "latency");
    json_t *ci = json_object_get(rep, "latency_ci");
    json_t *mem = json_object_get(rep, "memory");
    const char *covers = json_string_value(json_object_get(ci, "covers"));
    json_t *out = json_object_get(lat, "outliers");
    fprintf(stderr, "%s: %zu timed calls in %d process%s\n",
            json_string_value(json_object_get(rep, "model_callable")), r->measured, r->processes,
            r->processes == 1 ? "" : "es");
    print_ms(stderr, "p50", json_object_get(lat, "p50_ms"), json_object_get(ci, "p50_ms"));
    print_ms(stderr, "p95", json_object_get(lat, "p95_ms"), json_object_get(ci, "p95_ms"));
    print_ms(stderr, "p99", json_object_get(lat, "p99_ms"), json_object_get(ci, "p99_ms"));
    print_ms(stderr, "mean", json_object_get(lat, "mean_ms"), json_object_get(ci, "mean_ms"));
    print_ms(stderr, "min", json_object_get(lat, "min_ms"), NULL);
    if (covers && strcmp(covers, "within-process") == 0 && asked == 1)
        fprintf(stderr, "  (one process: the intervals do not cover run-to-run variation; use "
                        "--processes 5 or more)\n");
    else if (covers && strcmp(covers, "within-process") == 0)
        fprintf(stderr, "  (only one process ran: the intervals do not cover run-to-run "
                        "variation)\n");
    if (json_is_object(out) &&
        json_integer_value(json_object_get(out, "mild")) + json_integer_value(json_object_get(out, "severe")) > 0)
        fprintf(stderr, "  outliers: %lld mild, %lld severe (Tukey's fences; kept)\n",
                (long long)json_integer_value(json_object_get(out, "mild")),
                (long long)json_integer_value(json_object_get(out, "severe")));
    if (json_is_number(json_object_get(mem, "cpu_inference_peak_mb")))
        fprintf(stderr, "  inference peak RSS %.1f MiB\n",
                json_number_value(json_object_get(mem, "cpu_inference_peak_mb")));
}

/* The runner's "waiting for ..." lines (a call, setup or load that takes a while); over a
 * progress line on a terminal, which the next tick draws again. */
static void print_notice(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%srpxprof run: %s\n", isatty(2) ? "\r\033[K" : "", line);
    fflush(stderr);
}

int rpx_cli_run(int argc, char **argv)
{
    run_opts o;
    rpx_runner_config c;
    rpx_runner_result res;
    rpx_error err = {0};
    int rc, exit_code = RPX_EXIT_FAILURE;
    json_t *w;
    size_t wi;

    memset(&o, 0, sizeof o);
    memset(&res, 0, sizeof res);
    rpx_runner_config_init(&c);
    o.device = c.device;
    o.precision = c.precision;
    o.unit = c.unit;
    o.warmup = c.warmup;
    o.repeats = c.repeats;
    o.flops = o.params = (double)NAN;
    o.max_failures = c.max_failures;
    o.grace_s = c.grace_s;
    o.max_time_s = c.max_time_s;
    o.meta = json_object();
    if (!o.meta) return rpx_cli_fail("run", RPX_EXIT_FAILURE, "out of memory");
    rc = parse(argc, argv, &o);
    if (rc) {
        json_decref(o.meta);
        free(o.inputs_list);
        return rc == -2 ? RPX_EXIT_OK : RPX_EXIT_USAGE;
    }
    c.model = o.model;
    if (o.n_inputs > 1) {
        c.sample_files = o.inputs_list; /* distinct samples */
        c.n_sample_files = o.n_inputs;
        c.inputs = NULL;
    } else {
        c.inputs = o.inputs;          /* a file, or a folder of samples */
    }
    c.writable_inputs = o.writable_inputs;
    c.output = o.output;
    c.force = o.force;
    c.device = o.device;
    c.precision = o.precision;
    c.unit = o.unit;
    c.warmup = o.warmup;
    c.repeats = o.repeats;
    c.processes = (int)o.processes;
    c.meta = o.meta;
    c.cost = o.cost;
    c.gpus = o.gpus;
    c.gpu_spec = o.gpu_spec;
    c.bind_inputs = o.bind_inputs;
    c.n_bind_inputs = o.n_bind_inputs;
    c.bind_dims = o.bind_dims;
    c.n_bind_dims = o.n_bind_dims;
    c.flops = o.flops;
    c.params = o.params;
    c.tf32 = o.tf32;
    c.gpu_time = o.gpu_time;
    c.budget_hz = o.budget_hz ? o.hz : NULL;
    c.n_budget_hz = o.n_hz;
    c.isolate = !o.no_isolate;
    c.timeout_s = o.timeout_s;
    c.call_timeout_s = o.call_timeout_s;
    c.setup_timeout_s = o.setup_timeout_s;
    c.grace_s = o.grace_s;
    c.progress = !o.quiet && isatty(2);
    if (!o.quiet) c.notice = print_notice;
    c.target.body_path = o.body;
    c.target.headers = o.headers;
    c.target.n_headers = o.n_headers;
    c.target.method = o.method;
    c.target.connect_timeout_s = o.connect_timeout_s;
    c.target.total_timeout_s = o.request_timeout_s;
    c.target.insecure = o.insecure;
    c.target.http2 = o.http2;
    c.target.stream = o.stream;
    c.target.tokens_field = o.tokens_field;
    c.target.keep_events = o.keep_events;
    c.target.slo = o.slo;
    c.target.allow_warmup_failures = o.allow_warmup_failures;
    if (o.rate > 0 && strcmp(rpx_target_kind_name(o.model), "http") != 0) {
        /* paced calls; the paced rate joins the real-time budget's rates */
        size_t k;
        if (!o.budget_hz) {
            o.hz[0] = 5, o.hz[1] = 10, o.hz[2] = 30;
            o.n_hz = 3;
        }
        for (k = 0; k < o.n_hz && o.hz[k] != o.rate; k++) continue;
        if (k == o.n_hz && o.n_hz < 16) o.hz[o.n_hz++] = o.rate;
        c.budget_hz = o.hz;
        c.n_budget_hz = o.n_hz;
        c.rate_hz = o.rate;
    } else if (o.rate > 0) {
        c.target.load_rate = o.rate;
        c.target.load_poisson = o.poisson;
        c.target.load_duration_s = o.duration_s;
        c.target.load_concurrency = o.concurrency;
        c.target.load_seed = (unsigned long long)(o.seed_given ? o.seed : 1);
        c.target.load_engine = o.load_engine;
        c.target.load_drain_s = !o.drain_given ? 0 : o.drain_s > 0 ? o.drain_s : -1;
        c.repeats = (long)llround(o.rate * o.duration_s);
    }
    c.max_failures = o.max_failures;
    c.target_precision = o.target_precision;
    c.max_time_s = o.max_time_s;

    if (o.back_to_back) {
        /* the same run unpaced, first, with no report of its own */
        rpx_runner_config b = c;
        rpx_runner_result bres;
        b.rate_hz = 0;
        b.output = NULL;
        b.progress = 0;
        rc = rpx_runner_run(&b, &bres, &err);
        if (rc == 0 && bres.status == RPX_RUNNER_COMPLETE)
            c.back_to_back_latency = json_incref(json_object_get(bres.report, "latency"));
        else if (rc == 0)
            rpx_error_set(&err, RPX_EMODEL, "--compare-back-to-back: the back-to-back run did "
                          "not complete: %s", bres.error);
        rpx_runner_result_free(&bres);
        if (!c.back_to_back_latency) {
            rpx_cli_fail("run", 0, "%s", err.message);
            exit_code = rc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE;
            goto out;
        }
    }
    rc = rpx_runner_run(&c, &res, &err);
    if (rc != 0) {
        rpx_cli_fail("run", 0, "%s", err.message);
        exit_code = rc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE;
        goto out;
    }
    if (!o.quiet) {
        json_array_foreach(res.warnings, wi, w)
            fprintf(stderr, "rpxprof run: warning: %s\n", json_string_value(w));
        print_summary(&res, o.processes);
    }
    if (!res.to_stdout) printf("%s\n", o.output);
    switch (res.status) {
    case RPX_RUNNER_COMPLETE: exit_code = RPX_EXIT_OK; break;
    case RPX_RUNNER_INTERRUPTED:
        exit_code = res.stop_signal == SIGTERM ? RPX_EXIT_TERMINATED : RPX_EXIT_INTERRUPTED;
        break;
    case RPX_RUNNER_CRASHED: exit_code = RPX_EXIT_CRASHED; break;
    case RPX_RUNNER_TIMED_OUT: exit_code = RPX_EXIT_TIMED_OUT; break;
    case RPX_RUNNER_KILLED: exit_code = RPX_EXIT_KILLED; break;
    case RPX_RUNNER_CALLS_FAILED: exit_code = RPX_EXIT_CALLS_FAILED; break;
    }
    if (res.status == RPX_RUNNER_INTERRUPTED)
        fprintf(stderr, "rpxprof run: interrupted%s after %zu timed calls; report written\n",
                res.abandoned ? " (the call in progress was abandoned)" : "", res.measured);
    else if (res.status != RPX_RUNNER_COMPLETE)
        fprintf(stderr, "rpxprof run: error: %s; report written with %zu samples (status %s)\n",
                res.error, res.measured,
                json_string_value(json_object_get(res.report, "status")));
out:
    json_decref(c.back_to_back_latency);
    rpx_runner_result_free(&res);
    json_decref(o.meta);
    free(o.inputs_list);
    return exit_code;
}
