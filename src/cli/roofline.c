/* roofline.c — owns `rpxprof roofline`: the bound of a model's FLOPs and bytes
 * (given as numbers, a cost object or a run report) on one or more targets,
 * the host CPU's estimated and measured peak, and the SVG picture. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cli/cli.h"
#include "common/json_keys.h"
#include "common/user_file.h"
#include "common/output.h"
#include "rpxprof/cost.h"
#include "rpxprof/error.h"
#include "common/json.h"
#include "report/svg.h"
#include "rpxprof/roofline.h"

#define ROOFLINE_SCHEMA "rpxprof.roofline/1"
#define CMD "roofline"


static const char usage[] =
    "Usage: rpxprof roofline --gpu KEY[,KEY]... (--flops N --bytes N | --cost FILE |\n"
    "                        --report FILE) [--precision P] [OPTION]...\n"
    "  or:  rpxprof roofline --measure-cpu [--json]\n"
    "The lower bound that a model's FLOPs and memory traffic put on its latency on a\n"
    "target: compute_ms = FLOPs / peak, memory_ms = bytes / bandwidth, latency = the\n"
    "larger (a tie is compute-bound). Peaks are dense (no sparsity); FLOPs, never MACs.\n"
    "\n"
    "  -g, --gpu KEY[,KEY]  targets from 'rpxprof gpus'; host-cpu is this machine's CPU\n"
    "  -p, --precision P    fp64, fp32, tf32, fp16, bf16, fp8 or int8 (default: the\n"
    "                       report's precision, else fp32)\n"
    "      --tf32           fp32 dense ops (conv, gemm, matmul, attention) on TF32\n"
    "                       tensor cores; without it fp32 uses the non-tensor peak\n"
    "      --flops N        FLOPs of one call (4878.9e9 is accepted)\n"
    "      --bytes N        bytes one call must move (weights once + inputs + outputs)\n"
    "      --cost FILE      a cost object ('rpxprof cost --json --per-op'): flops,\n"
    "                       traffic_bytes_ideal and per-node costs (the unfused bound);\n"
    "                       or an ONNX model, costed as 'rpxprof cost' does\n"
    "      --input NAME=DIMS  --cost MODEL.onnx: a graph input's shape (1x3x480x640)\n"
    "      --dim NAME=N     --cost MODEL.onnx: a symbolic dimension's value\n"
    "      --report FILE    a run report: its cost and its measured p50\n"
    "      --p50 MS         a measured p50 latency: adds the achieved fraction\n"
    "      --svg OUT.svg    draw the first target's roofline with the model's points\n"
    "                       (checked first; replaces only a figure rpxprof drew)\n"
    "      --force          replace an existing --svg file rpxprof did not draw\n"
    "      --measure-cpu    measure this CPU: multithreaded FMA peak and triad\n"
    "                       bandwidth (a second or two); host-cpu then uses them\n"
    "      --threads N      threads for --measure-cpu (default: the CPUs allowed)\n"
    "      --gpu-spec FILE  add or override spec entries (repeatable; also\n"
    "                       $RPX_GPU_SPECS)\n"
    "  -j, --json           print JSON (schemas/roofline.json)\n"
    "  -h, --help           show this help and exit\n"
    "\n"
    "Example: rpxprof roofline --gpu h100-sxm --precision fp16 --flops 4878.9e9 "
    "--bytes 2e8\n";

static json_t *load_json(const char *path, const char *what, rpx_error *err)
{
    json_t *root = NULL;
    (void)rpx_json_load_user_file(path, 0, what, &root, err);
    return root;
}

/* An ONNX model given to --cost: by its name, or a file that does not open
 * with '{' (a cost object always does; a protobuf never does). */
static int is_onnx(const char *path)
{
    size_t n = strlen(path);
    FILE *f;
    int c;
    if (n > 5 && strcasecmp(path + n - 5, ".onnx") == 0) return 1;
    if (rpx__user_file_regular(path, NULL, NULL) != 0) return 0; /* the JSON reader names it */
    f = fopen(path, "rb");
    if (!f) return 0;
    do c = fgetc(f);
    while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
    fclose(f);
    return c != EOF && c != '{' && c != '[';
}

/* The cost object of an ONNX model, as `rpxprof cost --json --per-op` prints it. */
static json_t *cost_onnx(const char *path, const char *precision, const char *const *inputs,
                         size_t n_inputs, const char *const *dims, size_t n_dims, int *bad_line,
                         rpx_error *err)
{
    static const char *const cost_precisions[] = {"fp32", "fp16", "bf16", "fp8", "int8"};
    rpx_cost_options co;
    rpx_cost *cost = NULL;
    json_t *doc;
    size_t i;
    int rc;
    rpx_cost_options_init(&co);
    for (i = 0; precision && i < sizeof cost_precisions / sizeof *cost_precisions; i++)
        if (strcmp(precision, cost_precisions[i]) == 0) co.precision = precision;
    co.input_shapes = inputs;
    co.n_input_shapes = n_inputs;
    co.dims = dims;
    co.n_dims = n_dims;
    rc = rpx_cost_analyze_onnx(path, &co, &cost, err);
    if (rc) {
        *bad_line = rc == RPX_EINVAL;
        rpx_error_prefix(err, "--cost");
        return NULL;
    }
    doc = rpx_cost_json(cost, 1);
    rpx_cost_free(cost);
    if (!doc) rpx_error_set(err, RPX_ENOMEM, "out of memory");
    return doc;
}

static void fmt_num(char *out, size_t size, double v, const char *unit)
{
    if (isnan(v))
        snprintf(out, size, "n/a");
    else
        snprintf(out, size, "%.6g%s%s", v, unit && *unit ? " " : "", unit ? unit : "");
}

static double jnum(const json_t *o, const char *k)
{
    const json_t *v = o ? json_object_get(o, k) : NULL;
    return v && json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *jstr(const json_t *o, const char *k)
{
    const json_t *v = o ? json_object_get(o, k) : NULL;
    return v && json_is_string(v) ? json_string_value(v) : NULL;
}

static const char *jstr_or(const json_t *o, const char *k, const char *def)
{
    const char *s = jstr(o, k);
    return s ? s : def;
}

static void print_bound_line(const char *what, const json_t *b)
{
    char c[48], m[48], l[48], ai[48], rp[48];
    const char *bn = jstr(b, "bottleneck");
    fmt_num(c, sizeof c, jnum(b, "compute_ms"), "ms");
    fmt_num(m, sizeof m, jnum(b, "memory_ms"), "ms");
    fmt_num(l, sizeof l, jnum(b, "latency_ms"), "ms");
    fmt_num(ai, sizeof ai, jnum(b, "arithmetic_intensity"), "FLOP/B");
    fmt_num(rp, sizeof rp, jnum(b, "ridge_point"), "FLOP/B");
    printf("  %-8s %s%s (compute %s, memory %s; intensity %s, ridge %s)\n", what, l,
           bn ? (strcmp(bn, "compute") == 0 ? ", compute-bound" : ", memory-bound") : "", c, m,
           ai, rp);
}

static void print_text(const json_t *bounds)
{
    const char *key;
    json_t *r;
    json_object_foreach((json_t *)bounds, key, r) {
        const json_t *g = json_object_get(r, "gpu"), *pd = json_object_get(r, "peak_dense");
        const json_t *ideal = json_object_get(r, "ideal"), *unf = json_object_get(r, "unfused");
        const json_t *frac = json_object_get(r, "achieved_fraction");
        const char *reason = jstr(r, "reason"), *note = jstr(pd, "note");
        char pk[48], bw[48];
        fmt_num(pk, sizeof pk, jnum(pd, "tflops"), "TFLOP/s");
        fmt_num(bw, sizeof bw, jnum(r, "memory_bandwidth_gbps"), "GB/s");
        printf("%s (%s), %s: peak %s (%s), bandwidth %s\n", jstr_or(g, "name", "?"), key,
               jstr_or(r, "precision", "?"), pk, jstr_or(pd, "label", "none"), bw);
        if (note) printf("  note: %s\n", note);
        if (json_is_object(ideal)) print_bound_line("ideal:", ideal);
        if (json_is_object(unf)) {
            print_bound_line("unfused:", unf);
            printf("           %lld nodes costed, %lld unknown\n",
                   (long long)json_integer_value(json_object_get(unf, "nodes")),
                   (long long)json_integer_value(json_object_get(unf, "nodes_unknown")));
        }
        if (json_is_object(frac)) {
            char p50[48], fi[48], fu[48];
            fmt_num(p50, sizeof p50, jnum(r, "measured_p50_ms"), "ms");
            fmt_num(fi, sizeof fi, jnum(frac, "ideal") * 100, "%");
            fmt_num(fu, sizeof fu, jnum(frac, "unfused") * 100, "%");
            printf("  measured p50 %s: %s of the ideal bound, %s of the unfused bound\n", p50,
                   fi, fu);
        }
        if (reason) printf("  %s%s\n", json_is_null(ideal) ? "no bound: " : "", reason);
    }
}

static void print_cpu(const json_t *cpu)
{
    const json_t *e = json_object_get(cpu, "estimate"), *m = json_object_get(cpu, "measured");
    char a[48], b[48], c[48];
    printf("CPU: %s (%s, %lld cores, %s)\n", jstr_or(e, "model", "unknown"),
           jstr_or(e, "isa", "?"), (long long)json_integer_value(json_object_get(e, "cores")),
           jstr_or(e, "max_mhz_source", "no clock"));
    printf("  estimate: %s\n", jstr_or(e, "formula", "n/a (clock unknown)"));
    const char *note = jstr(e, "bound_note"), *from = jstr_or(e, "peak_source", "");
    if (note) printf("  peak: %s\n", note);
    if (jnum(e, "cached_fp32_gflops") > 0) { /* issue 26: what the cached measurement gives */
        int peak = strcmp(from, "cached measurement") == 0;
        int bw = jnum(e, "cached_triad_gbps") > 0;
        fmt_num(a, sizeof a, jnum(e, "cached_fp32_gflops"), "GFLOP/s");
        fmt_num(c, sizeof c, jnum(e, "cached_triad_gbps"), "GB/s");
        printf("  cached measurement (%s, %s): fp32 %s, triad %s; used for %s\n",
               jstr_or(e, "cache_file", "?"), jstr_or(e, "cached_at", "undated"), a, c,
               peak && bw ? "the peak and the memory bandwidth"
               : peak     ? "the peak"
               : bw       ? "the memory bandwidth (the estimate's peak is higher)"
                          : "nothing (the estimate's peak is higher)");
    }
    if (json_is_object(m)) {
        fmt_num(a, sizeof a, jnum(m, "fp32_gflops"), "GFLOP/s");
        fmt_num(b, sizeof b, jnum(m, "fp64_gflops"), "GFLOP/s");
        fmt_num(c, sizeof c, jnum(m, "triad_gbps"), "GB/s");
        printf("  measured (%lld threads, %s): fp32 %s, fp64 %s, triad %s\n",
               (long long)json_integer_value(json_object_get(m, "threads")), jstr_or(m, "isa", "?"), a,
               b, c);
        fmt_num(a, sizeof a, jnum(cpu, "ratio_fp32") * 100, "%");
        fmt_num(b, sizeof b, jnum(cpu, "ratio_fp64") * 100, "%");
        printf("  measured / estimate: fp32 %s, fp64 %s\n", a, b);
    }
}

typedef struct opts {
    const char *gpus, *precision, *cost, *report, *svg;
    const char **inputs, **dims;
    size_t n_inputs, n_dims;
    double flops, bytes, p50;
    int have_flops, have_bytes, have_p50, tf32, json, measure_cpu, force;
    long threads;
    const char **specs;
    size_t n_specs;
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
    static const struct option longs[] = {{"gpu", required_argument, 0, 'g'},
                                          {"precision", required_argument, 0, 'p'},
                                          {"tf32", no_argument, 0, 'T'},
                                          {"flops", required_argument, 0, 'F'},
                                          {"bytes", required_argument, 0, 'B'},
                                          {"cost", required_argument, 0, 'C'},
                                          {"report", required_argument, 0, 'R'},
                                          {"p50", required_argument, 0, 'P'},
                                          {"svg", required_argument, 0, 'S'},
                                          {"measure-cpu", no_argument, 0, 'm'},
                                          {"threads", required_argument, 0, 't'},
                                          {"gpu-spec", required_argument, 0, 'G'},
                                          {"input", required_argument, 0, 'I'},
                                          {"dim", required_argument, 0, 'D'},
                                          {"json", no_argument, 0, 'j'},
                                          {"force", no_argument, 0, 'f'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":g:p:jh", longs, NULL)) != -1) {
        switch (c) {
        case 'g': o->gpus = optarg; break;
        case 'p': o->precision = optarg; break;
        case 'T': o->tf32 = 1; break;
        case 'F':
            if (rpx_cli_parse_number(optarg, &o->flops))
                return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                                    "--flops '%s': not a non-negative number (e.g. 4878.9e9)",
                                    optarg);
            o->have_flops = 1;
            break;
        case 'B':
            if (rpx_cli_parse_number(optarg, &o->bytes))
                return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                                    "--bytes '%s': not a non-negative number (e.g. 1e9)", optarg);
            o->have_bytes = 1;
            break;
        case 'C': o->cost = optarg; break;
        case 'R': o->report = optarg; break;
        case 'P':
            if (rpx_cli_parse_number(optarg, &o->p50) || o->p50 <= 0)
                return rpx_cli_fail(CMD, RPX_EXIT_USAGE, "--p50 '%s': not a positive number of ms",
                                    optarg);
            o->have_p50 = 1;
            break;
        case 'S': o->svg = optarg; break;
        case 'f': o->force = 1; break;
        case 'm': o->measure_cpu = 1; break;
        case 't':
            if (rpx_cli_parse_long(optarg, &o->threads) || o->threads < 1 || o->threads > 1024)
                return rpx_cli_fail(CMD, RPX_EXIT_USAGE, "--threads '%s': not a number 1..1024",
                                    optarg);
            break;
        case 'G': o->specs[o->n_specs++] = optarg; break;
        case 'I': o->inputs[o->n_inputs++] = optarg; break;
        case 'D': o->dims[o->n_dims++] = optarg; break;
        case 'j': o->json = 1; break;
        case 'h': fputs(usage, stdout); return -1;
        case ':':
            return rpx_cli_fail(CMD, RPX_EXIT_USAGE, "option '%s' needs a value",
                                argv[optind - 1]);
        default:
            return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                                "unknown option '%s'; see 'rpxprof roofline --help'",
                                argv[optind - 1]);
        }
    }
    if (optind < argc)
        return rpx_cli_fail(CMD, RPX_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (o->cost && o->report)
        return rpx_cli_fail(CMD, RPX_EXIT_USAGE, "give --cost or --report, not both");
    if ((o->cost || o->report) && (o->have_flops || o->have_bytes))
        return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                            "--flops/--bytes and --%s both give the model's cost; use one",
                            o->cost ? "cost" : "report");
    if (!o->gpus && !o->measure_cpu)
        return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                            "name a target with --gpu KEY ('rpxprof gpus' lists them; host-cpu "
                            "is this CPU), or use --measure-cpu");
    if ((o->n_inputs || o->n_dims) && !o->cost)
        return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                            "--%s binds a shape of the ONNX model given with --cost "
                            "MODEL.onnx; give --cost or drop it",
                            o->n_inputs ? "input" : "dim");
    if (o->gpus && !o->cost && !o->report && !o->have_flops && !o->have_bytes)
        return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                            "give the model's cost: --flops N and --bytes N, --cost FILE or "
                            "--report FILE");
    return 0;
}

/* What one `rpxprof roofline` holds between its steps. */
typedef struct run_state {
    rpx_error err;
    rpx_gpu_table *t;
    rpx_roofline_input in;
    rpx_cost_node *nodes;
    json_t *doc, *cpu_json;
    rpx_cpu_peak est;
    rpx_cpu_measured meas;
    rpx_gpu_spec cpu_spec;
    rpx_cpu_target_storage cpu_store;
    int have_est, have_meas;
    const char *source;
    rpx_output *svg_out;
} run_state;

/* The figure's place, before anything is costed or measured; never a file this
 * command reads (--cost, --report, every --gpu-spec). */
static int open_svg(const opts *o, run_state *s)
{
    const char **protect = calloc(o->n_specs + 2, sizeof *protect);
    rpx_output_options oo = {RPX_OUTPUT_SVG, NULL, o->force, protect, o->n_specs + 2, "--svg"};
    int orc;
    if (!protect) return rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "out of memory");
    protect[0] = o->cost;
    protect[1] = o->report;
    memcpy(protect + 2, o->specs, o->n_specs * sizeof *protect);
    orc = rpx_output_open(o->svg, &oo, &s->svg_out, &s->err);
    free(protect);
    if (orc != 0)
        return rpx_cli_fail(CMD, orc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s",
                            s->err.message);
    return 0;
}

/* The model's cost: --cost (JSON or ONNX), --report, or --flops/--bytes; then
 * --precision, --tf32 and --p50. */
static int load_cost(const opts *o, run_state *s)
{
    rpx_roofline_input_init(&s->in);
    if (o->cost || o->report) {
        const char *path = o->cost ? o->cost : o->report;
        const char *what = o->cost ? "a cost object ('rpxprof cost --json') or an ONNX model"
                                   : "a run report (rpxprof run --output)";
        int bad_line = 0;
        if (rpx_user_file_check(path, what, &s->err) != 0)
            return rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "%s", s->err.message);
        if (o->cost && is_onnx(path)) {
            s->doc = cost_onnx(path, o->precision, o->inputs, o->n_inputs, o->dims, o->n_dims,
                               &bad_line, &s->err);
        } else if (o->n_inputs || o->n_dims) {
            return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                                "--%s binds a shape of an ONNX model, and %s is JSON; drop it",
                                o->n_inputs ? "input" : "dim", path);
        } else {
            s->doc = load_json(path, what, &s->err);
        }
        if (!s->doc || rpx_roofline_input_from_json(s->doc, path, &s->in, &s->nodes, &s->err) != 0)
            return rpx_cli_fail(CMD, bad_line ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s",
                                s->err.message);
        s->source = o->cost ? "cost" : "report";
    } else {
        s->in.flops = o->have_flops ? o->flops : NAN;
        s->in.bytes = o->have_bytes ? o->bytes : NAN;
    }
    if (o->precision) {
        rpx_precision p;
        if (rpx_precision_parse(o->precision, &p, &s->err) != 0)
            return rpx_cli_fail(CMD, RPX_EXIT_USAGE, "--precision: %s", s->err.message);
        s->in.precision = p;
    }
    s->in.tf32 = o->tf32;
    if (o->have_p50) s->in.measured_p50_ms = o->p50;
    return 0;
}

/* The host CPU: its estimated peak (--measure-cpu or a host-cpu target) and, with
 * --measure-cpu, its measured one. */
static int host_cpu(const opts *o, run_state *s)
{
    if (o->measure_cpu || (o->gpus && strstr(o->gpus, "host-cpu"))) {
        if (rpx_cpu_peak_estimate(&s->est, &s->err) != 0)
            return rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "%s", s->err.message);
        s->have_est = 1;
    }
    if (o->measure_cpu) {
        rpx_cpu_measure_options mo;
        rpx_cpu_measure_options_init(&mo);
        mo.threads = (int)o->threads;
        if (rpx_cpu_measure(&mo, &s->meas, &s->err) != 0)
            return rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "measuring the CPU: %s", s->err.message);
        s->have_meas = 1;
        /* this machine's measurement, cached for the bounds of later runs (a VM's
         * cpufreq gives no maximum clock); only a measurement on every CPU */
        if (s->have_est && o->threads == 0 &&
            rpx_cpu_peak_cache_store(&s->est, &s->meas, &s->err) != 0)
            fprintf(stderr, "rpxprof roofline: warning: %s\n", s->err.message);
    }
    if (s->have_est) {
        s->cpu_json = rpx_cpu_peak_json(&s->est, s->have_meas ? &s->meas : NULL);
        rpx_cpu_target_spec(&s->est, s->have_meas ? &s->meas : NULL, &s->cpu_spec, &s->cpu_store);
    }
    return 0;
}

/* One target of --gpu: its bound into `bounds`, and the first one's figure. */
static int add_bound(run_state *s, const char *key, json_t *bounds)
{
    const rpx_gpu_spec *g =
        strcmp(key, "host-cpu") == 0 ? &s->cpu_spec : rpx_gpu_table_find(s->t, key);
    json_t *b;
    if (!g) {
        char hint[128], cand[1024];
        if (rpx_gpu_table_candidates(s->t, key, cand, sizeof cand) > 1)
            return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                                "--gpu '%s' is ambiguous: it could be %s; give one of these keys",
                                key, cand);
        return rpx_cli_fail(CMD, RPX_EXIT_USAGE,
                            "--gpu: no target with key '%s';%s 'rpxprof gpus' lists them "
                            "(host-cpu is this CPU)",
                            key, rpx_gpu_table_suggest(s->t, key, 1, hint, sizeof hint));
    }
    b = rpx_roofline_json(g, &s->in);
    if (!b || json_object_set_new(bounds, g->key, b) != 0)
        return rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "out of memory");
    if (s->svg_out && json_object_size(bounds) == 1) {
        int src = rpx_roofline_svg_commit(s->svg_out, b, &s->err);
        s->svg_out = NULL;
        if (src != 0) return rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "--svg: %s", s->err.message);
    }
    return 0;
}

/* The targets of --gpu KEY[,KEY]..., in their order. */
static int add_bounds(const opts *o, run_state *s, json_t *bounds)
{
    char *list, *tok, *save = NULL;
    int rc = 0;
    if (!o->gpus) return 0;
    list = strdup(o->gpus);
    if (!list) return rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "out of memory");
    for (tok = strtok_r(list, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save))
        rc = add_bound(s, tok, bounds);
    free(list);
    return rc;
}

/* The "input" object of the JSON: where the cost came from, and what it is. */
static void fill_input(const opts *o, const run_state *s, json_t *input)
{
    const rpx_roofline_input *in = &s->in;
    json_object_set_new(input, "source", json_string(s->source));
    json_object_set_new(input, "file", (o->cost || o->report)
                                           ? json_string(o->cost ? o->cost : o->report)
                                           : json_null());
    json_object_set_new(input, "flops", rpx_json_real_or_null(in->flops));
    json_object_set_new(input, "bytes", rpx_json_real_or_null(in->bytes));
    json_object_set_new(input, "nodes", json_integer((json_int_t)in->n_nodes));
    json_object_set_new(input, "precision", json_string(rpx_precision_name(in->precision)));
    json_object_set_new(input, "tf32", json_boolean(in->tf32));
    json_object_set_new(input, "measured_p50_ms", rpx_json_real_or_null(in->measured_p50_ms));
    if (o->cost && in->n_nodes == 0) {
        /* the unfused bound needs every node's cost: say so, and how to get them */
        char why[1024];
        snprintf(why, sizeof why,
                 "no unfused bound: %s has no per-node costs (a cost object made without "
                 "--per-op); make it with 'rpxprof cost MODEL.onnx --json --per-op', or give "
                 "the ONNX model itself to --cost",
                 o->cost);
        json_object_set_new(input, "unfused_reason", json_string(why));
        if (!o->json) printf("note: %s\n", why);
    }
}

/* The answer: JSON (schemas/roofline.json) or text. */
static int print_result(const opts *o, run_state *s, json_t *root)
{
    if (o->json) {
        if (rpx_json_write_file("-", root, &s->err) != 0)
            return rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "%s", s->err.message);
    } else {
        const json_t *c = json_object_get(root, "cpu");
        if (json_is_object(c)) print_cpu(c);
        print_text(json_object_get(root, "bounds"));
        if (o->svg) printf("%s\n", o->svg);
    }
    return 0;
}

int rpx_cli_roofline(int argc, char **argv)
{
    opts o;
    run_state s;
    json_t *root = json_object(), *bounds = json_object(), *input = json_object();
    int rc = RPX_EXIT_OK;
    memset(&o, 0, sizeof o);
    memset(&s, 0, sizeof s);
    s.source = "command line";
    o.specs = calloc((size_t)argc + 1, sizeof *o.specs);
    o.inputs = calloc((size_t)argc + 1, sizeof *o.inputs);
    o.dims = calloc((size_t)argc + 1, sizeof *o.dims);
    if (!o.specs || !o.inputs || !o.dims || !root || !bounds || !input) {
        rc = rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "out of memory");
        goto out;
    }
    rc = parse_args(argc, argv, &o);
    if (rc == -1) {
        rc = RPX_EXIT_OK;
        goto out;
    }
    if (rc) goto out;
    if (rpx_gpu_table_create(&s.t) != 0) {
        rc = rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "out of memory");
        goto out;
    }
    if (rpx_gpu_table_load_all(s.t, o.specs, o.n_specs, &s.err) != 0) {
        rc = rpx_cli_fail(CMD, RPX_EXIT_FAILURE, "%s", s.err.message);
        goto out;
    }
    if ((o.svg && (rc = open_svg(&o, &s)) != 0) || (rc = load_cost(&o, &s)) != 0 ||
        (rc = host_cpu(&o, &s)) != 0 || (rc = add_bounds(&o, &s, bounds)) != 0)
        goto out;

    fill_input(&o, &s, input);
    json_object_set_new(root, "schema", json_string(ROOFLINE_SCHEMA));
    if (o.gpus) {
        json_object_set_new(root, "input", input);
        input = NULL;
    }
    if (s.cpu_json) {
        json_object_set_new(root, "cpu", s.cpu_json);
        s.cpu_json = NULL;
    }
    json_object_set_new(root, "bounds", bounds);
    bounds = NULL;
    rc = print_result(&o, &s, root);
out:
    rpx_output_discard(s.svg_out); /* not drawn (no target, or an error): no file is left */
    json_decref(s.cpu_json);
    json_decref(input);
    json_decref(bounds);
    json_decref(root);
    rpx_roofline_nodes_free(s.nodes);
    json_decref(s.doc);
    rpx_gpu_table_free(s.t);
    free(o.specs);
    free(o.inputs);
    free(o.dims);
    return rc;
}
