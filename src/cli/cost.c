/* cost.c — owns `rpxprof cost MODEL.onnx`: the table by operator type and
 * the totals, every node with --per-op, the JSON object with --json. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "rpxprof/cost.h"
#include "rpxprof/error.h"
#include "common/json.h"

static const char usage[] =
    "Usage: rpxprof cost MODEL.onnx [--input NAME=DIMS]... [--dim NAME=N]...\n"
    "                    [--precision P] [--per-op] [--json]\n"
    "What an ONNX model costs, whatever the hardware: parameters, MACs, FLOPs,\n"
    "memory traffic, peak activation memory and arithmetic intensity. Weights\n"
    "are never read (external data files need not exist).\n"
    "\n"
    "  -i, --input NAME=DIMS  shape of graph input NAME (e.g. input=1x3x480x640)\n"
    "  -d, --dim NAME=N       value of the dynamic dimension NAME (e.g. batch=1)\n"
    "  -p, --precision P      count floating tensors at fp32, fp16, bf16, fp8 or int8\n"
    "                         (default: the tensors' own dtypes)\n"
    "      --per-op           list every node\n"
    "  -j, --json             print the JSON object (schemas/cost.json)\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "A dynamic dimension that is not bound is an error: rpxprof never guesses a\n"
    "size. Operators without a cost formula are listed; totals are then partial.\n"
    "Formulas: docs/cost.md.\n";

#define MAX_BINDINGS 256

typedef struct cost_opts {
    const char *model;
    const char *inputs[MAX_BINDINGS];
    size_t n_inputs;
    const char *dims[MAX_BINDINGS];
    size_t n_dims;
    const char *precision;
    int per_op, json;
} cost_opts;

static int parse(int argc, char **argv, cost_opts *o)
{
    enum { O_PER_OP = 256 };
    static const struct option longs[] = {
        {"input", required_argument, 0, 'i'},     {"dim", required_argument, 0, 'd'},
        {"precision", required_argument, 0, 'p'}, {"per-op", no_argument, 0, O_PER_OP},
        {"json", no_argument, 0, 'j'},            {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":i:d:p:jh", longs, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (o->n_inputs == MAX_BINDINGS) return rpx_cli_fail("cost", -1, "too many --input options");
            o->inputs[o->n_inputs++] = optarg;
            break;
        case 'd':
            if (o->n_dims == MAX_BINDINGS) return rpx_cli_fail("cost", -1, "too many --dim options");
            o->dims[o->n_dims++] = optarg;
            break;
        case 'p': o->precision = optarg; break;
        case O_PER_OP: o->per_op = 1; break;
        case 'j': o->json = 1; break;
        case 'h': fputs(usage, stdout); return -2;
        case ':':
            return rpx_cli_fail("cost", -1, "%s needs a value (see 'rpxprof cost --help')",
                                argv[optind - 1]);
        default:
            return rpx_cli_fail("cost", -1, "unknown option '%s' (see 'rpxprof cost --help')",
                                argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return rpx_cli_fail("cost", -1, "MODEL.onnx is required (see 'rpxprof cost --help')");
    o->model = argv[optind++];
    if (optind < argc)
        return rpx_cli_fail("cost", -1, "unexpected argument '%s' (see 'rpxprof cost --help')",
                            argv[optind]);
    return 0;
}

/* ---- human-readable numbers ------------------------------------------------ */
static const char *si(char *buf, size_t len, double v)
{
    static const char *units[] = {"", " k", " M", " G", " T", " P"};
    int u = 0;
    if (!isfinite(v)) return "n/a";
    while (fabs(v) >= 1000 && u < 5) {
        v /= 1000;
        u++;
    }
    if (u == 0) snprintf(buf, len, "%.0f", v);
    else snprintf(buf, len, "%.4g%s", v, units[u]);
    return buf;
}

static const char *bytes(char *buf, size_t len, double v)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    if (!isfinite(v)) return "n/a";
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0) snprintf(buf, len, "%.0f B", v);
    else snprintf(buf, len, "%.4g %s", v, units[u]);
    return buf;
}

static const char *ratio(char *buf, size_t len, double v)
{
    if (!isfinite(v)) return "n/a";
    snprintf(buf, len, "%.4g", v);
    return buf;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *shape_text(char *buf, size_t len, const json_t *t)
{
    const json_t *shape = json_object_get(t, "shape"), *d;
    size_t i, at = 0;
    if (!json_is_array(shape)) return "?";
    if (json_array_size(shape) == 0) return "scalar";
    buf[0] = '\0';
    json_array_foreach(shape, i, d) {
        if (at + 24 >= len) break;
        if (json_is_integer(d))
            at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "x" : "",
                                   (long long)json_integer_value(d));
        else
            at += (size_t)snprintf(buf + at, len - at, "%s?", i ? "x" : "");
    }
    return buf;
}

static void print_tensors(const char *label, const json_t *list)
{
    const json_t *t;
    size_t i;
    char b[256];
    printf("%-12s", label);
    json_array_foreach(list, i, t) {
        const json_t *dt = json_object_get(t, "dtype");
        printf("%s%s %s %s", i ? ", " : "", json_string_value(json_object_get(t, "name")),
               json_is_string(dt) ? json_string_value(dt) : "?", shape_text(b, sizeof b, t));
    }
    printf("%s\n", json_array_size(list) ? "" : "(none)");
}

static void print_table(const json_t *r, const rpx_cost *cost, int per_op)
{
    const json_t *model = json_object_get(r, "model"), *row, *p = json_object_get(r, "params_detail");
    const json_t *by = json_object_get(r, "by_op"), *un = json_object_get(r, "unsupported");
    const json_t *w = json_object_get(r, "warnings"), *prec = json_object_get(r, "precision");
    char a[64], b[64], c[64], d[64];
    size_t i, count = 0;
    const json_t *prod = json_object_get(model, "producer");
    printf("model       %s (opset %lld, IR %lld%s%s)\n",
           json_string_value(json_object_get(model, "path")),
           (long long)json_integer_value(json_object_get(model, "opset")),
           (long long)json_integer_value(json_object_get(model, "ir_version")),
           json_is_string(prod) ? ", " : "", json_is_string(prod) ? json_string_value(prod) : "");
    print_tensors("inputs", json_object_get(model, "inputs"));
    print_tensors("outputs", json_object_get(model, "outputs"));
    printf("precision   %s\n\n", json_is_string(prec) ? json_string_value(prec) : "the tensors' own dtypes");

    if (per_op) {
        size_t n = rpx_cost_node_count(cost);
        const json_t *nodes = json_object_get(r, "nodes");
        printf("%-5s %-32s %-22s %11s %11s %11s %11s  %s\n", "#", "node", "op type", "MACs", "FLOPs",
               "params", "bytes", "output");
        for (i = 0; i < n; i++) {
            const rpx_cost_node *nd = rpx_cost_node_at(cost, i);
            const json_t *outs = json_object_get(json_array_get(nodes, i), "outputs");
            char s[256];
            printf("%-5zu %-32.32s %-22.22s %11s %11s %11s %11s  %s%s%s\n", i, nd->name, nd->op_type,
                   si(a, sizeof a, nd->macs), si(b, sizeof b, nd->flops), si(c, sizeof c, nd->params),
                   bytes(d, sizeof d, nd->bytes_read + nd->bytes_written),
                   json_array_size(outs) ? shape_text(s, sizeof s, json_array_get(outs, 0)) : "",
                   nd->supported ? "" : "  not costed: ", nd->supported ? "" : nd->reason);
        }
        printf("\n");
    }

    printf("%-24s %7s %11s %11s %11s %11s\n", "op type", "count", "MACs", "FLOPs", "params", "bytes");
    json_array_foreach(by, i, row) {
        long long cnt = (long long)json_integer_value(json_object_get(row, "count"));
        long long unsup = (long long)json_integer_value(json_object_get(row, "unsupported"));
        printf("%-24s %7lld %11s %11s %11s %11s%s\n", json_string_value(json_object_get(row, "op_type")),
               cnt, si(a, sizeof a, num(row, "macs")), si(b, sizeof b, num(row, "flops")),
               si(c, sizeof c, num(row, "params")), bytes(d, sizeof d, num(row, "bytes")),
               unsup ? (unsup == cnt ? "  not costed" : "  partly costed") : "");
        count += (size_t)cnt;
    }
    printf("%-24s %7zu %11s %11s %11s %11s\n\n", "total", count, si(a, sizeof a, num(r, "macs")),
           si(b, sizeof b, num(r, "flops")), si(c, sizeof c, num(r, "params")),
           bytes(d, sizeof d, num(r, "traffic_bytes_unfused")));

    {
        const json_t *by_dtype = json_object_get(p, "by_dtype"), *v;
        const char *k;
        const json_t *ints = json_object_get(p, "integer_constants");
        printf("parameters  %.0f (%s, %s at the counted precision", num(r, "params"),
               si(a, sizeof a, num(r, "params")), bytes(b, sizeof b, num(r, "param_bytes")));
        json_object_foreach((json_t *)by_dtype, k, v) printf("; %s %.0f", k, num(v, "count"));
        printf("); integer constants %.0f (%s)\n", num(ints, "count"), bytes(c, sizeof c, num(ints, "storage_bytes")));
    }
    if (json_is_true(json_object_get(r, "partial"))) {
        /* lower bounds: the costed nodes' sums */
        char share[128];
        double dc = num(r, "dense_coverage");
        int n_share = snprintf(share, sizeof share, "%.0f %% of nodes costed", 100 * num(r, "coverage"));
        if (isfinite(dc))
            snprintf(share + n_share, sizeof share - (size_t)n_share, ", %.0f %% of dense nodes", 100 * dc);
        if (isfinite(num(r, "macs")))
            printf("MACs        \xe2\x89\xa5 %s (%s; a lower bound)\n", si(a, sizeof a, num(r, "macs")), share);
        else
            printf("MACs        n/a (no dense node is costed; %s)\n", share);
        if (isfinite(num(r, "flops")))
            printf("FLOPs       \xe2\x89\xa5 %s (%s; dense part %s%s)\n", si(a, sizeof a, num(r, "flops")),
                   share, isfinite(num(r, "flops_dense")) ? "\xe2\x89\xa5 " : "",
                   si(b, sizeof b, num(r, "flops_dense")));
        else
            printf("FLOPs       n/a (no node is costed)\n");
    } else {
        printf("MACs        %.0f (%s)\n", num(r, "macs"), si(a, sizeof a, num(r, "macs")));
        printf("FLOPs       %.0f (%s; dense part %s)\n", num(r, "flops"), si(a, sizeof a, num(r, "flops")),
               si(b, sizeof b, num(r, "flops_dense")));
    }
    printf("traffic     unfused %s, ideal %s\n", bytes(a, sizeof a, num(r, "traffic_bytes_unfused")),
           bytes(b, sizeof b, num(r, "traffic_bytes_ideal")));
    printf("intensity   unfused %s FLOP/B, ideal %s FLOP/B\n", ratio(a, sizeof a, num(r, "intensity_unfused")),
           ratio(b, sizeof b, num(r, "intensity_ideal")));
    printf("activations peak %s\n", bytes(a, sizeof a, num(r, "activation_peak_bytes")));
    printf("coverage    %lld of %lld nodes costed (%.1f%%)\n",
           (long long)json_integer_value(json_object_get(model, "nodes_costed")),
           (long long)json_integer_value(json_object_get(model, "nodes")), 100 * num(r, "coverage"));
    if (json_array_size(un)) {
        printf("\nPARTIAL: these nodes are not costed, so every total above covers only the rest:\n");
        json_array_foreach(un, i, row)
            printf("  %s x %lld: %s\n", json_string_value(json_object_get(row, "op_type")),
                   (long long)json_integer_value(json_object_get(row, "count")),
                   json_string_value(json_object_get(row, "reason")));
    }
    if (json_array_size(w)) {
        const json_t *s;
        printf("\n");
        json_array_foreach(w, i, s) {
            if (i == 10) {
                printf("note: %zu more (see --json)\n", json_array_size(w) - 10);
                break;
            }
            printf("note: %s\n", json_string_value(s));
        }
    }
}

int rpx_cli_cost(int argc, char **argv)
{
    cost_opts o = {0};
    rpx_cost_options opt;
    rpx_cost *cost = NULL;
    rpx_error err = {0};
    json_t *r;
    int rc = parse(argc, argv, &o);
    if (rc == -2) return RPX_EXIT_OK;
    if (rc) return RPX_EXIT_USAGE;
    rpx_cost_options_init(&opt);
    opt.precision = o.precision;
    opt.input_shapes = o.inputs;
    opt.n_input_shapes = o.n_inputs;
    opt.dims = o.dims;
    opt.n_dims = o.n_dims;
    rc = rpx_cost_analyze_onnx(o.model, &opt, &cost, &err);
    if (rc) return rpx_cli_fail("cost", rc == RPX_EINVAL ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s", err.message);
    r = rpx_cost_json(cost, o.per_op);
    if (!r) {
        rpx_cost_free(cost);
        return rpx_cli_fail("cost", RPX_EXIT_FAILURE, "out of memory");
    }
    if (o.json) {
        char *s = rpx_json_dumps(r);
        if (!s) rc = rpx_cli_fail("cost", RPX_EXIT_FAILURE, "out of memory");
        else {
            fputs(s, stdout);
            fputc('\n', stdout);
            free(s);
        }
    } else {
        print_table(r, cost, o.per_op);
    }
    json_decref(r);
    rpx_cost_free(cost);
    if (fflush(stdout) != 0) return rpx_cli_fail("cost", RPX_EXIT_FAILURE, "cannot write the output");
    return rc ? RPX_EXIT_FAILURE : RPX_EXIT_OK;
}
