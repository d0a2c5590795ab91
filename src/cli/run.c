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
#include "common/output.h"
#include "loader/kinds.h"
#include "report/trace.h"
#include "rpxprof/error.h"
#include "rpxprof/options.h"
#include "rpxprof/runner.h"
#include "rpxprof/summary.h"
#include "rpxprof/target.h"

/* The help: lines as they are, except "@NAME", which stands for the table
 * option NAME: its name, metavar, help and default come from the table
 * (src/runner/options.c), wrapped at column 25 (print_help). */
static const char usage[] =
    "Usage: rpxprof run --model TARGET --inputs FILE.npz --output FILE.json [OPTION]...\n"
    "       rpxprof run --model TARGET --inputs A.npz --inputs B.npz ... --output FILE.json\n"
    "       rpxprof run --model MODEL.onnx     (a model file: inputs made, report written)\n"
    "Time a prediction function on fixed inputs and write a JSON report.\n"
    "\n"
    "  -m, --model TARGET     PATH/lib.so:SYMBOL (a shared object, see model.h),\n"
    "                         rpxprof-demo:SYMBOL (the packaged demo: demo_depth,\n"
    "                         demo_video_depth, demo_pose, demo_noop),\n"
    "                         MODULE:FUNCTION (a Python callable; arrays become\n"
    "                         keyword arguments), MODEL.onnx or MODEL.pt (a model\n"
    "                         file run by a runtime, below) or http(s)://HOST/PATH\n"
    "                         (an HTTP API)\n"
    "  -i, --inputs FILE      NPZ (or NPY) file; every array is passed to the model.\n"
    "                         Repeat it, or name a folder (its *.npz in name order),\n"
    "                         for distinct samples: one sample per file, the same\n"
    "                         arrays, dtypes and shapes in each; the timed calls\n"
    "                         cycle through them (latency_records, latency_by_sample)\n"
    "@writable-inputs\n"
    "  -o, --output FILE      report path (folders are created; '-' = stdout); an\n"
    "                         existing file is replaced only when it is an rpxprof\n"
    "                         report; checked before the first call\n"
    "      --html FILE        also write the run's HTML report (as 'rpxprof report'\n"
    "                         makes it) to FILE, checked before the first call\n"
    "@force\n"
    "@device\n"
    "@precision\n"
    "@unit\n"
    "@warmup\n"
    "@repeats\n"
    "@rate\n"
    "      --compare-back-to-back  with --rate: first the same calls back to back;\n"
    "                         both latencies in the report's pacing\n"
    "      --meta KEY=VALUE   record what the shapes do not say (repeatable)\n"
    "@commit\n"
    "@gpu-time\n"
    "\n"
    "Model cost and bounds (the report's efficiency, roofline, realtime_budget):\n"
    "@cost\n"
    "      --input NAME=DIMS  bind a graph input's shape for --cost (1x3x480x640)\n"
    "      --dim NAME=N       bind a symbolic dimension for --cost (and a model\n"
    "                         file's generated inputs)\n"
    "@flops\n"
    "@params\n"
    "@gpu\n"
    "@gpu-spec\n"
    "@tf32\n"
    "      --budget-hz LIST   real-time rates, comma-separated (default 5,10,30)\n"
    "\n"
    "Model files (--model MODEL.onnx, MODEL.pt; docs/runtimes.md): no --inputs: made\n"
    "from the model's inputs (seeded random data); no --output: STEM-report.json here;\n"
    "no --repeats, --duration, --rate or --target-precision: --auto; an ONNX file is\n"
    "costed as with --cost\n"
    "@runtime\n"
    "@threads\n"
    "@inter-threads\n"
    "@graph-opt\n"
    "      --shape NAME=DIMS  an input's shape for the generated inputs (and the\n"
    "                         cost): 1x3x224x224; a TorchScript file needs one per\n"
    "                         input (NAME=DIMS:DTYPE for other than float32)\n"
    "\n"
    "HTTP APIs (--model http://... or https://...):\n"
    "@body\n"
    "@body-template\n"
    "@prompts\n"
    "@prompt-field\n"
    "@prompts-order\n"
    "@nonce\n"
    "@server-metrics\n"
    "      --header 'K: V'    add a request header (repeatable); ${VAR} in V is read\n"
    "                         from the environment; secret values are never reported\n"
    "@method\n"
    "@connect-timeout\n"
    "@request-timeout\n"
    "@max-failures\n"
    "@allow-warmup-failures\n"
    "@insecure\n"
    "@http2\n"
    "@stream\n"
    "@tokens-field\n"
    "@keep-events\n"
    "@slo\n"
    "      --rate R           (HTTP) open-loop load: R requests per second on a fixed\n"
    "                         schedule, latency from each one's intended send time\n"
    "                         (http.load); needs --duration, replaces --repeats\n"
    "@duration\n"
    "@drain\n"
    "@arrivals\n"
    "@seed\n"
    "@concurrency\n"
    "@load-engine\n"
    "\n"
    "Processes and intervals (docs/statistics.md):\n"
    "@processes\n"
    "@cpus\n"
    "@spread\n"
    "@target-precision\n"
    "@max-time\n"
    "@auto\n"
    "@min-time\n"
    "@call-records\n"
    "\n"
    "Audits (docs/audits.md):\n"
    "@audit\n"
    "@audit-threshold\n"
    "@audit-seed-threshold\n"
    "Traces (docs/report.md#traces):\n"
    "      --trace FILE       also write a Chrome trace-event JSON of the run (open it in\n"
    "                         ui.perfetto.dev or chrome://tracing): one track per\n"
    "                         process, setup, every call, restore and teardown;\n"
    "                         implies --timeline\n"
    "      --trace-max-events N  at most N events in the trace (default 1000000; a\n"
    "                         note event says what the bound left out)\n"
    "@timeline\n"
    "\n"
    "Every layer (docs/runtimes.md#every-layer):\n"
    "@layers\n"
    "\n"
    "The machine (docs/system.md):\n"
    "@no-cpu-probe\n"
    "\n"
    "History (docs/history.md):\n"
    "@history\n"
    "\n"
    "Output checks (docs/output-checks.md):\n"
    "@check-outputs\n"
    "@check-fraction\n"
    "@rtol\n"
    "@atol\n"
    "@output-field\n"
    "@save-outputs\n"
    "@reference-outputs\n"
    "\n"
    "Isolation (a model that crashes, hangs or is killed still leaves a report):\n"
    "@timeout\n"
    "@call-timeout\n"
    "@setup-timeout\n"
    "@grace\n"
    "@no-isolate\n"
    "  -q, --quiet            no progress line, warnings or summary: only the path\n"
    "  -h, --help             show this help and exit\n"
    "      --list-options [--json]  (alone) the options above from the options' table:\n"
    "                         which front ends take each (command line, manifest,\n"
    "                         Python, compare --run) and how each spells it\n"
    "\n"
    "Exit status: 0 success, 1 failure (nothing written), 2 bad command line,\n"
    "3 crashed, 4 timed out, 5 killed, 6 calls failed (HTTP: every call,\n"
    "--max-failures, or a warmup call), 7 outputs differed (--check-outputs),\n"
    "8 the report was written but its --html or --trace could not be, 9 the\n"
    "report was written but the history could not be, 130 interrupted by\n"
    "SIGINT, 143 by SIGTERM (3-9, 130 and 143 write the report with every\n"
    "sample measured before the event).\n";

/* One table option's lines: "      --NAME METAVAR" to column 25, then its help
 * and "(default: D)", words wrapped before column 80. */
static void print_option(FILE *f, const rpx_run_option *o)
{
    char left[80], text[1200];
    const char *p;
    int col, first;
    snprintf(left, sizeof left, "      --%s%s%s", o->name, o->metavar ? " " : "",
             o->metavar ? o->metavar : "");
    snprintf(text, sizeof text, "%s%s%s%s", o->help, o->default_text ? " (default: " : "",
             o->default_text ? o->default_text : "", o->default_text ? ")" : "");
    col = fprintf(f, "%s", left);
    col += fprintf(f, "%*s", col < 23 ? 25 - col : 2, "");
    for (p = text, first = 1; *p; first = 0) {
        size_t n = strcspn(p, " ");
        if (!first && col + 1 + (int)n > 80) col = fprintf(f, "\n%25s", "") - 1;
        else if (!first) col += fprintf(f, " ");
        col += fprintf(f, "%.*s", (int)n, p);
        p += n;
        while (*p == ' ') p++;
    }
    fputc('\n', f);
}

static void print_help(FILE *f)
{
    const char *p = usage;
    while (*p) {
        size_t n = strcspn(p, "\n");
        if (p[0] == '@') {
            char name[64];
            const rpx_run_option *o;
            snprintf(name, sizeof name, "%.*s", (int)(n - 1), p + 1);
            o = rpx_run_option_find(name);
            if (o) print_option(f, o);
        } else {
            fprintf(f, "%.*s\n", (int)n, p);
        }
        p += n + (p[n] == '\n');
    }
}


#define MAX_BINDINGS 64
#define MAX_HEADERS 64

/* What the command line gives: the run's options straight into the runner's
 * config (through the options' table, include/rpxprof/options.h), and what
 * only the command line has. */
typedef struct run_opts {
    rpx_runner_config c;
    const char **inputs_list;     /* every --inputs, in order */
    size_t n_inputs;
    int quiet, back_to_back;
    json_t *meta;
    const char *budget_hz;        /* --budget-hz as given */
    double hz[16];                /* --budget-hz, checked */
    size_t n_hz;
    const char *bind_inputs[MAX_BINDINGS], *bind_dims[MAX_BINDINGS];
    size_t n_bind_inputs, n_bind_dims;
    const char *headers[MAX_HEADERS];
    size_t n_headers;
    const char *html;             /* --html FILE */
    const char *trace;            /* --trace FILE, or NULL */
    long trace_max;               /* --trace-max-events */
    int shape_given;              /* --shape (a model file's input shapes) */
    char default_output[4096];    /* a model file's report without --output */
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

/* getopt's has_arg of a table option: --layers [N] reads its N itself (layers_value). */
static int has_arg(const rpx_run_option *t)
{
    return t->kind == RPX_OPT_FLAG || !strcmp(t->name, "layers") ? no_argument : required_argument;
}

/* `--layers` alone (the default number of profiled calls) or `--layers N`. */
static char *layers_value(int argc, char **argv)
{
    static char dflt[] = RPX_LAYERS_DEFAULT_TEXT;
    if (optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9') return argv[optind++];
    return dflt;
}

/* A model file's report without --output: STEM-report.json in the current
 * folder (resnet50.onnx -> resnet50-report.json). */
static const char *model_file_output(const char *model, char *buf, size_t size)
{
    const char *base = strrchr(model, '/'), *dot;
    base = base ? base + 1 : model;
    dot = strrchr(base, '.');
    snprintf(buf, size, "%.*s-report.json", (int)(dot && dot > base ? dot - base : (long)strlen(base)),
             base);
    return buf;
}

static int parse(int argc, char **argv, run_opts *o)
{
    /* the command line's own options; the table's follow them (val O_TABLE + index) */
    enum { O_META = 256, O_INPUT, O_DIM, O_SHAPE, O_BUDGET, O_HEADER, O_BACK_TO_BACK, O_HTML, O_TRACE,
           O_TRACE_MAX, O_TABLE = 512 };
    static const struct option own[] = {
        {"model", required_argument, 0, 'm'},     {"inputs", required_argument, 0, 'i'},
        {"output", required_argument, 0, 'o'},    {"meta", required_argument, 0, O_META},
        {"quiet", no_argument, 0, 'q'},           {"input", required_argument, 0, O_INPUT},
        {"dim", required_argument, 0, O_DIM},     {"budget-hz", required_argument, 0, O_BUDGET},
        {"shape", required_argument, 0, O_SHAPE},
        {"header", required_argument, 0, O_HEADER},
        {"compare-back-to-back", no_argument, 0, O_BACK_TO_BACK},
        {"html", required_argument, 0, O_HTML},
        {"trace", required_argument, 0, O_TRACE},
        {"trace-max-events", required_argument, 0, O_TRACE_MAX},
        {"help", no_argument, 0, 'h'}};
    struct option longs[sizeof own / sizeof own[0] + 128 + 1];
    size_t n_table, k, n_own = sizeof own / sizeof own[0];
    const rpx_run_option *table = rpx_run_options(&n_table);
    rpx_error err = {0};
    int c;
    const rpx_kind *kind;
    if (n_table > 128) return rpx_cli_fail("run", -1, "internal: too many options");
    memcpy(longs, own, sizeof own);
    for (k = 0; k < n_table; k++) {
        longs[n_own + k].name = table[k].name;
        longs[n_own + k].has_arg = has_arg(&table[k]);
        longs[n_own + k].flag = NULL;
        longs[n_own + k].val = O_TABLE + (int)k;
    }
    memset(&longs[n_own + n_table], 0, sizeof longs[0]);
    opterr = 0;
    optind = 1;
    o->inputs_list = calloc((size_t)argc + 1, sizeof *o->inputs_list);
    if (!o->inputs_list) return rpx_cli_fail("run", -1, "out of memory");
    while ((c = getopt_long(argc, argv, ":m:i:o:qh", longs, NULL)) != -1) {
        if (c >= O_TABLE && c < O_TABLE + (int)n_table) {
            const rpx_run_option *t = &table[c - O_TABLE];
            char label[64];
            snprintf(label, sizeof label, "--%s", t->name);
            if (strcmp(t->name, "layers") == 0) optarg = layers_value(argc, argv);
            if (rpx_run_option_set_text(&o->c, t, optarg, label, &err) != 0)
                return rpx_cli_fail("run", -1, "%s", err.message);
            /* `--check-outputs DIR` (run takes no other bare argument): the saved
             * reference, as --reference-outputs DIR */
            if (strcmp(t->name, "check-outputs") == 0 && optind < argc && argv[optind][0] &&
                argv[optind][0] != '-')
                o->c.reference_outputs = argv[optind++];
            continue;
        }
        switch (c) {
        case 'm': o->c.model = optarg; break;
        case 'i':
            o->c.inputs = optarg;
            o->inputs_list[o->n_inputs++] = optarg; /* at most argc of them */
            break;
        case 'o': o->c.output = optarg; break;
        case 'q': o->quiet = 1; break;
        case O_HTML: o->html = optarg; break;
        case 'h': print_help(stdout); return -2;
        case O_TRACE: o->trace = optarg; break;
        case O_TRACE_MAX:
            if (rpx_cli_parse_long(optarg, &o->trace_max) != 0 ||
                o->trace_max < RPX_TRACE_MIN_MAX_EVENTS)
                return rpx_cli_fail("run", -1,
                                    "--trace-max-events '%s': expected a whole number of at "
                                    "least %ld",
                                    optarg, RPX_TRACE_MIN_MAX_EVENTS);
            break;
        case O_META:
            if (add_meta(o->meta, optarg) != 0)
                return rpx_cli_fail("run", -1, "--meta '%s': expected KEY=VALUE", optarg);
            break;
        case O_BUDGET:
            o->budget_hz = optarg;
            if (parse_budget(optarg, o->hz, &o->n_hz) != 0) return -1;
            break;
        case O_BACK_TO_BACK: o->back_to_back = 1; break;
        case O_HEADER:
            if (o->n_headers == MAX_HEADERS)
                return rpx_cli_fail("run", -1, "too many --header options (at most %d)",
                                    MAX_HEADERS);
            o->headers[o->n_headers++] = optarg;
            break;
        case O_INPUT:
        case O_SHAPE:
        case O_DIM:
            if (!strchr(optarg, '=') || optarg[0] == '=')
                return rpx_cli_fail("run", -1, "--%s '%s': expected NAME=%s",
                                    c == O_INPUT ? "input" : c == O_SHAPE ? "shape" : "dim",
                                    optarg, c != O_DIM ? "DIMS (1x3x480x640)" : "N");
            if (c == O_SHAPE) o->shape_given = 1;
            if (c != O_DIM && o->n_bind_inputs < MAX_BINDINGS)
                o->bind_inputs[o->n_bind_inputs++] = optarg;
            else if (c == O_DIM && o->n_bind_dims < MAX_BINDINGS)
                o->bind_dims[o->n_bind_dims++] = optarg;
            else
                return rpx_cli_fail("run", -1, "too many --input/--dim bindings (at most %d)",
                                    MAX_BINDINGS);
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
    if (!o->c.model)
        return rpx_cli_fail("run", -1, "--model is required (see 'rpxprof run --help')");
    if (rpx_target_check_spec(o->c.model, &err) != 0)
        return rpx_cli_fail("run", -1, "%s", err.message);
    kind = rpx__kind_of_spec(o->c.model);
    if (rpx__kind_has(kind, RPX_KIND_REQUESTS) && o->c.target.method) {
        /* the HTTP target's own rule (upper-case letters, under 32), before any work */
        const char *m = o->c.target.method;
        size_t i, n = strlen(m);
        for (i = 0; i < n && m[i] >= 'A' && m[i] <= 'Z'; i++) continue;
        if (n == 0 || n >= 32 || i < n)
            return rpx_cli_fail("run", -1, "--method %.40s: expected an uppercase HTTP method "
                                "such as POST, GET, HEAD, PUT, PATCH or DELETE", m);
    }
    if (rpx__kind_has(kind, RPX_KIND_REQUESTS) && o->c.target.body_template &&
        !o->c.target.prompts_path)
        return rpx_cli_fail("run", -1, "--body-template needs --prompts FILE.jsonl: the "
                                       "template's field --prompt-field is set to each prompt "
                                       "in turn");
    if (!o->c.inputs && rpx__kind_has(kind, RPX_KIND_REQUESTS)) {
        /* an API's request body: the inputs file, --body, or none (GET, HEAD) */
        const char *m = o->c.target.method;
        if (!o->c.target.body_path && !o->c.target.body_template &&
            (!m || (strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0)))
            return rpx_cli_fail("run", -1, "--inputs or --body is required: the request body "
                                           "(--method GET and HEAD send none); or --body-template "
                                           "with --prompts");
    } else if (!o->c.inputs && !rpx__kind_has(kind, RPX_KIND_RUNTIME))
        return rpx_cli_fail("run", -1, "--inputs is required (an NPZ file, several, or a folder "
                                       "of them)");
    if (o->shape_given && !rpx__kind_has(kind, RPX_KIND_RUNTIME))
        return rpx_cli_fail("run", -1, "--shape is for model files run by a runtime (--model "
                                       "MODEL.onnx or MODEL.pt); to bind a graph input for "
                                       "--cost give --input NAME=DIMS");
    if (rpx__kind_has(kind, RPX_KIND_RUNTIME)) {
        /* a model file alone is timed as `--auto` times it (within --max-time, 10 s), as
         * trtexec's and benchmark_app's default durations do, unless the calls are given */
        static const char *const fixing[] = {"repeats", "duration", "rate", "auto",
                                             "target-precision"};
        size_t f;
        for (f = 0; f < sizeof fixing / sizeof fixing[0]; f++)
            if (rpx_run_option_given(&o->c, rpx_run_option_find(fixing[f]))) break;
        if (f == sizeof fixing / sizeof fixing[0] &&
            rpx_run_option_set_text(&o->c, rpx_run_option_find("auto"), NULL, "--auto", &err) != 0)
            return rpx_cli_fail("run", -1, "%s", err.message);
    }
    if (!o->c.output && rpx__kind_has(kind, RPX_KIND_RUNTIME))
        o->c.output = model_file_output(o->c.model, o->default_output,
                                                sizeof o->default_output);
    if (!o->c.output) return rpx_cli_fail("run", -1, "--output is required (a JSON file, or -)");
    /* ranges and every rule combining options: the same check as manifests',
     * Python's and the runner's, worded with `--` */
    if (rpx_runner_config_check(&o->c, RPX_SPELL_CLI, &err) != 0)
        return rpx_cli_fail("run", -1, "%s", err.message);
    if (!rpx__kind_has(kind, RPX_KIND_REQUESTS) && o->n_headers) {
        char *shown = rpx_target_redact_spec(o->c.model);
        rpx_cli_fail("run", -1, "--header is for HTTP API targets (--model http(s)://...), not %s",
                     shown ? shown : "this --model");
        free(shown);
        return -1;
    }
    if (o->back_to_back && (!(o->c.rate_hz > 0) || rpx__kind_has(kind, RPX_KIND_OWN_LOAD)))
        return rpx_cli_fail("run", -1, "--compare-back-to-back compares paced calls (--rate HZ) "
                                       "of a shared object or Python callable with the same "
                                       "calls back to back; give --rate, and a local --model");
    return 0;
}

/* The few lines a person reads after a run, like hyperfine's: the library's
 * summary (src/report/summary.c), the same text as the Python package's
 * Report.summary(). */
static void print_summary(const rpx_runner_result *r, long asked)
{
    rpx_summary_opts so = {asked, 0};
    char *text = rpx_report_summary(r->report, &so);
    if (text) rpx_cli_term_puts(stderr, text);
    free(text);
}

/* The runner's "waiting for ..." lines (a call, setup or load that takes a while); over a
 * progress line on a terminal, which the next tick draws again. */
static void print_notice(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%srpxprof run: %s\n", isatty(2) ? "\r\033[K" : "", line);
    fflush(stderr);
}

/* --rate: paced calls of a local target (the paced rate joins the real-time
 * budget's rates; --rate x --duration timed calls), or an HTTP API's open-loop
 * load (rate x duration requests on the schedule). */
static void paced(run_opts *o, rpx_runner_config *c)
{
    if (c->rate_hz > 0 && !rpx__kind_has(rpx__kind_of_spec(c->model), RPX_KIND_OWN_LOAD)) {
        /* paced calls; the paced rate joins the real-time budget's rates */
        size_t k;
        if (!o->budget_hz) {
            o->hz[0] = 5, o->hz[1] = 10, o->hz[2] = 30;
            o->n_hz = 3;
        }
        for (k = 0; k < o->n_hz && o->hz[k] != c->rate_hz; k++) continue;
        if (k == o->n_hz && o->n_hz < 16) o->hz[o->n_hz++] = c->rate_hz;
        c->budget_hz = o->hz;
        c->n_budget_hz = o->n_hz;
        if (c->target.load_duration_s > 0) { /* --rate x --duration paced calls */
            c->repeats = (long)llround(c->rate_hz * c->target.load_duration_s);
            c->target.load_duration_s = 0;
        }
    } else if (c->rate_hz > 0) {
        /* an open-loop load: rate x duration requests on the schedule */
        c->target.load_rate = c->rate_hz;
        c->rate_hz = 0;
        c->repeats = (long)llround(c->target.load_rate * c->target.load_duration_s);
    }
}

/* --trace-max-events, checked up front, not after the run: 2 events a
 * process + the note. 0, or the exit code (the message printed). */
static int trace_bound(const run_opts *o, const rpx_runner_config *c)
{
    long k_proc = rpx_runner_processes(c, NULL);
    if (o->trace_max >= 2 * k_proc + 1) return 0;
    return rpx_cli_fail("run", RPX_EXIT_USAGE,
                        "--trace-max-events %ld: a trace of %ld processes needs at least %ld "
                        "events; give a larger bound or fewer --processes",
                        o->trace_max, k_proc, 2 * k_proc + 1);
}

/* --trace FILE: its place, checked before the first call: never a file the
 * run reads, never the report. 0 or the exit status. */
static int open_trace(const run_opts *o, rpx_runner_config *c, rpx_output **trace_out)
{
    char **files = NULL;
    size_t nf = 0, k;
    rpx_error err = {0};
    int rc;
    c->timeline = 1;
    if (rpx_runner_read_files(c, &files, &nf, &err) != 0)
        return rpx_cli_fail("run", RPX_EXIT_FAILURE, "%s", err.message);
    files = realloc(files, (nf + 2) * sizeof *files);
    if (files) {
        files[nf] = (char *)c->output;
        rc = rpx_cli_trace_open("run", "--trace", o->trace, c->force,
                                (const char *const *)files, nf + 1, trace_out);
        files[nf] = NULL;
    } else {
        rc = rpx_cli_fail("run", RPX_EXIT_FAILURE, "out of memory");
    }
    for (k = 0; files && k < nf; k++) free(files[k]);
    free(files);
    if (rc != 0) return rc;
    if (rpx_output_is_stdout(*trace_out))
        return rpx_cli_fail("run", RPX_EXIT_USAGE,
                            "--trace %s: the standard output carries the report or its "
                            "path; give a file (or rpxprof trace REPORT -o - later)",
                            o->trace);
    if (strcmp(o->trace, c->output) == 0)
        return rpx_cli_fail("run", RPX_EXIT_USAGE,
                            "--trace %s: the same path as --output; give another path", o->trace);
    return 0;
}

/* The report is written: a history that could not be is said, and exit 9. */
static int history_outcome(const rpx_runner_result *res, int exit_code)
{
    if (!res->history_failed) return exit_code;
    rpx_cli_term_printf(stderr, "rpxprof run: error: %s\n", res->history_error);
    return exit_code == RPX_EXIT_OK ? RPX_EXIT_HISTORY : exit_code;
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
    rpx_output *html_out = NULL;  /* --html: opened before the first call */
    rpx_output *trace_out = NULL;
    int extra_failed = 0;         /* the report written, its --html or --trace not (exit 8) */

    if (argc >= 2 && strcmp(argv[1], "--list-options") == 0)
        return rpx__cli_run_list_options(argc == 3 && strcmp(argv[2], "--json") == 0);
    memset(&o, 0, sizeof o);
    memset(&res, 0, sizeof res);
    rpx_runner_config_init(&o.c);
    o.c.target.load_seed = 1;     /* --seed's default */
    o.trace_max = RPX_TRACE_DEFAULT_MAX_EVENTS;
    o.meta = json_object();
    if (!o.meta) return rpx_cli_fail("run", RPX_EXIT_FAILURE, "out of memory");
    rc = parse(argc, argv, &o);
    if (rc) {
        json_decref(o.meta);
        free(o.inputs_list);
        return rc == -2 ? RPX_EXIT_OK : RPX_EXIT_USAGE;
    }
    /* what the table does not hold */
    c = o.c;
    if (o.n_inputs > 1) {
        c.sample_files = o.inputs_list; /* distinct samples */
        c.n_sample_files = o.n_inputs;
        c.inputs = NULL;
    }                                 /* else a file, or a folder of samples */
    c.meta = o.meta;
    c.bind_inputs = o.bind_inputs;
    c.n_bind_inputs = o.n_bind_inputs;
    c.bind_dims = o.bind_dims;
    c.n_bind_dims = o.n_bind_dims;
    c.budget_hz = o.budget_hz ? o.hz : NULL;
    c.n_budget_hz = o.n_hz;
    c.progress = !o.quiet && isatty(2);
    if (!o.quiet) c.notice = print_notice;
    c.target.headers = o.headers;
    c.target.n_headers = o.n_headers;
    paced(&o, &c);

    {   /* two outputs naming one file would overwrite each other: refused now */
        const char *which[3] = {"--output", "--html", "--trace"};
        const char *paths[3] = {c.output, o.html, o.trace};
        if ((rc = rpx_cli_outputs_distinct("run", which, paths, 3)) != 0) {
            exit_code = rc;
            goto out;
        }
    }
    if (o.trace && (exit_code = trace_bound(&o, &c)) != 0) goto out;
    if (o.html) {
        const char **keep = calloc(o.n_inputs + 2, sizeof *keep);
        size_t k;
        if (!keep) { rpx_cli_fail("run", 0, "out of memory"); goto out; }
        keep[0] = c.output;
        for (k = 0; k < o.n_inputs; k++) keep[k + 1] = o.inputs_list[k];
        rc = rpx__cli_html_open("run", o.html, c.force, keep, o.n_inputs + 1, &html_out);
        free(keep);
        if (rc) { exit_code = rc; goto out; }
    }
    if (o.back_to_back) {
        /* the same run unpaced, first, with no report of its own */
        rpx_runner_config b = c;
        rpx_runner_result bres;
        b.timeline = 0; /* the trace is the paced run's */
        b.rate_hz = 0;
        b.output = NULL;
        b.no_history = 1; /* only the paced run is a session of the history */
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
    if (o.trace && (rc = open_trace(&o, &c, &trace_out)) != 0) {
        exit_code = rc;
        goto out;
    }
    /* the per-call arrays only in the file, unless the page or the trace draws them */
    c.lean_report = !html_out && !trace_out;
    rc = rpx_runner_run(&c, &res, &err);
    if (rc != 0) {
        rpx_cli_fail("run", 0, "%s", err.message);
        exit_code = rc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE;
        goto out;
    }
    if (trace_out) { /* the report is written: a trace that fails is exit 8, not 1 */
        int trc = rpx_cli_trace_write("run", trace_out, res.report, c.output, o.trace_max);
        trace_out = NULL;
        if (trc == RPX_EXIT_USAGE) {
            exit_code = trc;
            goto out;
        }
        extra_failed |= trc != 0;
    }
    if (!o.quiet) {
        json_array_foreach(res.warnings, wi, w)
            if (!res.history_failed || strcmp(json_string_value(w), res.history_error) != 0)
                rpx_cli_term_printf(stderr, "rpxprof run: warning: %s\n", json_string_value(w));
        print_summary(&res, o.c.processes);
    }
    if (!res.to_stdout) rpx_cli_term_printf(stdout, "%s\n", c.output);
    if (html_out) {
        const json_t *one = res.report;
        rpx_html_input in = {0};
        rpx_output *h = html_out;
        in.runs = &one;
        in.run_names = &c.output;
        in.n_runs = 1;
        html_out = NULL;
        if (rpx__cli_html("run", h, &in) != 0) extra_failed = 1;
        else if (!res.to_stdout) printf("%s\n", o.html);
    }
    exit_code = rpx_runner_exit_code(&res); /* the status map (include/rpxprof/runner.h) */
    if (extra_failed)
        fprintf(stderr, "rpxprof run: the report %s was written, but not every --html or "
                "--trace file (above)\n", res.to_stdout ? "(standard output)" : c.output);
    if (exit_code == RPX_EXIT_OK && extra_failed) exit_code = RPX_EXIT_EXTRA_OUTPUT;
    exit_code = history_outcome(&res, exit_code);
    if (res.status == RPX_RUNNER_INTERRUPTED)
        fprintf(stderr, "rpxprof run: interrupted%s after %zu timed calls; report written\n",
                res.abandoned ? " (the call in progress was abandoned)" : "", res.measured);
    else if (res.status != RPX_RUNNER_COMPLETE)
        rpx_cli_term_printf(stderr, "rpxprof run: error: %s; report written with %zu samples (status %s)\n",
                res.error, res.measured,
                json_string_value(json_object_get(res.report, "status")));
out:
    rpx_output_discard(html_out);
    rpx_output_discard(trace_out);
    json_decref(c.back_to_back_latency);
    rpx_runner_result_free(&res);
    json_decref(o.meta);
    free(o.inputs_list);
    return exit_code;
}
