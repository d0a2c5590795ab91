/* sweep.c — owns `rpxprof sweep` (docs/sweep.md): the --vary specs parsed
 * into points (one parameter, or a grid of two), each point's run options
 * and inputs, every point measured in one session with their worker
 * processes interleaved (rpx_runner_run_many), each point's report kept as
 * DIR/POINT.json, and DIR/sweep.json from what the points say together
 * (src/sweep/sweep.c); --html draws the sweep's page (report/html_sweep.c). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/json.h"
#include "common/output.h"
#include "rpxprof/error.h"
#include "rpxprof/npz.h"
#include "rpxprof/options.h"
#include "rpxprof/runner.h"
#include "rpxprof/stats.h"
#include "rpxprof/target.h"
#include "sweep/point_inputs.h"
#include "sweep/sweep.h"

#define MAX_VALUES 64
#define MAX_POINTS 256
#define MAX_MAKE 32

static const char usage[] =
    "Usage: rpxprof sweep --model TARGET --vary SPEC [--vary SPEC] [RUN OPTION]...\n"
    "                     --out-dir DIR [--html FILE] [--json]\n"
    "Measure a target at several sizes, batches, thread counts or rates in one\n"
    "session, the points' worker processes interleaved (round k runs process k of\n"
    "every point, the order rotating), so that a drift of the machine falls on\n"
    "every point. Each point's report is kept as DIR/POINT.json; DIR/sweep.json\n"
    "holds the points, the scaling exponent with its interval, the neighbours that\n"
    "go the wrong way, the best throughput and the knee (docs/sweep.md).\n"
    "\n"
    "  -m, --model TARGET      what to measure (as rpxprof run)\n"
    "      --vary SPEC         what varies (twice: a grid), one of\n"
    "                          NAME=SHAPE,SHAPE,...   an input's shape (rgb=240x320x3,480x640x3)\n"
    "                          dim:NAME=N,N,...       a dimension: the symbol NAME of the --make\n"
    "                                                 shapes, and --dim NAME=N for --cost\n"
    "                          batch=N,N,...          the leading dimension of every input\n"
    "                                                 (--dim BATCH-DIM=N for --cost and model files)\n"
    "                          OPTION=V,V,...         a run option per point: threads=1,2,\n"
    "                                                 rate=10,20,40 (paced and HTTP targets)\n"
    "                          inputs=DIR             one NPZ a point: DIR's *.npz in name order\n"
    "                          rate=auto              the capacity search, with --slo\n"
    "      --slo LIST          with --vary rate=auto: the objectives, e.g. 'p99<50ms' (pN,\n"
    "                          e2e_pN, ttft_pN, tpot_pN < DURATION; docs/capacity.md)\n"
    "  -i, --inputs FILE       NPZ whose arrays the points copy (a varied array's dtype too)\n"
    "      --make SPEC         an array made for every point as 'rpxprof inputs make' makes\n"
    "                          it, NAME=SHAPE[:DTYPE[=FILL]] (DTYPE float32, FILL random by\n"
    "                          default); SHAPE may name varied dimensions: 1xheightx64\n"
    "      --seed N            seed of the made arrays' random fills (default 0)\n"
    "      --batch-dim NAME    the symbol of the batch in --make shapes and --cost's graph\n"
    "                          (default batch)\n"
    "      --dim NAME=N        bind a symbolic dimension at every point (model files, --cost)\n"
    "      --shape NAME=DIMS   bind an input's shape at every point (model files, --cost)\n"
    "      --out-dir DIR       the points' reports, their inputs and sweep.json\n"
    "      --html FILE         also write the sweep's page\n"
    "  -j, --json              print sweep.json instead of a table\n"
    "  -h, --help              show this help and exit\n"
    "Run options: as rpxprof run (--repeats, --processes, --warmup, --cost, --flops,\n"
    "--gpu, --cpus, --timeout ...), the same at every point; not --auto. Under\n"
    "--vary batch, --flops is the FLOPs of one item (a point's: batch x N).\n"
    "Exit status: 0 every point measured, 1 a point failed, 2 bad command line,\n"
    "130/143 interrupted (the points' reports and sweep.json written all the same).\n";

typedef enum { V_SHAPE, V_DIM, V_BATCH, V_OPTION, V_INPUTS } vary_kind;

typedef struct vary {
    vary_kind kind;
    char name[64];
    const rpx_run_option *opt;    /* V_OPTION */
    char *values[MAX_VALUES];     /* owned */
    int n;
    int direction;                /* +1 larger is slower, -1 more is faster, 0 no order */
} vary;

typedef struct sweep_args {
    rpx_runner_config cfg;
    const char *model, *out_dir, *html, *inputs, *batch_dim;
    const char *make[MAX_MAKE];
    size_t n_make;
    const char *dims[MAX_MAKE], *shapes[MAX_MAKE]; /* --dim, --shape: every point's bindings */
    size_t n_dims, n_shapes;
    long seed;
    vary v[RPX_SWEEP_MAX_VARY];
    int nvary, json;
    const char *capacity_slo;     /* --slo 'p99<50ms': the capacity search's objectives */
    int rate_auto;                /* --vary rate=auto: the capacity search (sweep_capacity.c) */
} sweep_args;

static void args_free(sweep_args *a)
{
    int i, k;
    for (i = 0; i < a->nvary; i++)
        for (k = 0; k < a->v[i].n; k++) free(a->v[i].values[k]);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* --vary inputs=DIR: DIR's *.npz files, in name order */
static int list_npz(const char *dir, vary *v)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary inputs=%s: cannot open the folder: %s",
                            dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        char path[4096];
        if (l < 5 || strcmp(e->d_name + l - 4, ".npz") != 0) continue;
        if (v->n == MAX_VALUES) {
            closedir(d);
            return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary inputs=%s: more than %d files",
                                dir, MAX_VALUES);
        }
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        v->values[v->n++] = strdup(path);
    }
    closedir(d);
    if (v->n < 2)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary inputs=%s: a sweep needs two .npz "
                            "files or more there (one a point)", dir);
    qsort(v->values, (size_t)v->n, sizeof v->values[0], cmp_str);
    return 0;
}

static int is_shape(const char *s)
{
    int digits = 0;
    for (; *s; s++) {
        if (*s >= '0' && *s <= '9') digits = 1;
        else if (*s != 'x') return 0;
    }
    return digits;
}

static int positive_int(const char *s)
{
    long l;
    return rpx_cli_parse_long(s, &l) == 0 && l > 0;
}

/* One --vary SPEC into v. 0 or the exit status. */
static int parse_vary(const char *spec, vary *v)
{
    const char *eq = strchr(spec, '='), *name = spec;
    char list[4096], *tok, *save = NULL;
    int k;
    memset(v, 0, sizeof *v);
    if (!eq || !eq[1] || eq == spec)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary '%s': give NAME=V,V,... "
                            "(dim:height=224,320, batch=1,2,4, threads=1,2, rgb=240x320x3,480x640x3, "
                            "inputs=DIR)", spec);
    v->direction = 1;
    if (strncmp(spec, "dim:", 4) == 0) v->kind = V_DIM, name = spec + 4;
    snprintf(v->name, sizeof v->name, "%.*s", (int)(eq - name), name);
    if (!v->name[0])
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary '%s': no dimension named", spec);
    if (v->kind != V_DIM && strcmp(v->name, "inputs") == 0) {
        v->kind = V_INPUTS;
        v->direction = 0;
        return list_npz(eq + 1, v);
    }
    if (v->kind != V_DIM && strcmp(v->name, "batch") == 0) v->kind = V_BATCH;
    else if (v->kind != V_DIM && (v->opt = rpx_run_option_find(v->name)) != NULL &&
             rpx_run_option_accepted(v->opt, RPX_SPELL_CLI) && v->opt->kind != RPX_OPT_FLAG) {
        v->kind = V_OPTION;
        if (strcmp(v->name, "threads") == 0) v->direction = -1;
        if (strcmp(v->name, "rate") == 0 && strcmp(eq + 1, "auto") == 0)
            return 0; /* the capacity search: no values (v->n 0) */
    } else if (v->kind != V_DIM && strcmp(v->name, "threads") == 0) {
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary threads: this build has no "
                            "--threads run option (a model file's runtime threads); vary "
                            "something else");
    } else if (v->kind != V_DIM) {
        v->kind = V_SHAPE;
    }
    snprintf(list, sizeof list, "%s", eq + 1);
    for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (v->n == MAX_VALUES)
            return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary '%s': at most %d values", spec,
                                MAX_VALUES);
        if ((v->kind == V_DIM || v->kind == V_BATCH) && !positive_int(tok))
            return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary '%s': '%s' is not a whole "
                                "number above 0", spec, tok);
        if (v->kind == V_SHAPE && !is_shape(tok))
            return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary '%s': '%s' is not a shape "
                                "(480x640x3), and '%s' is not a run option; an input's shape, "
                                "dim:NAME=N,..., batch=N,... or OPTION=V,...", spec, tok, v->name);
        if (v->kind == V_OPTION) {
            rpx_runner_config probe;
            rpx_error e = {0};
            rpx_runner_config_init(&probe);
            if (rpx_run_option_set_text(&probe, v->opt, tok, v->name, &e) != 0)
                return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary %s", e.message);
        }
        v->values[v->n++] = strdup(tok);
    }
    if (v->n < 2)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary '%s': a sweep needs two values or "
                            "more", spec);
    for (k = 0; k < v->n; k++)
        if (!v->values[k]) return rpx_cli_fail("sweep", RPX_EXIT_FAILURE, "out of memory");
    return 0;
}

/* One run option for every point (the table's range and words). */
static int table_option(sweep_args *a, const rpx_run_option *t, const char *arg)
{
    rpx_error err = {0};
    char label[64];
    if (strcmp(t->name, "slo") == 0 && strchr(arg, '<')) { /* 'p99<50ms': the capacity's */
        a->capacity_slo = arg;
        return 0;
    }
    if (strcmp(t->name, "auto") == 0 || strcmp(t->name, "force") == 0)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--%s: a sweep takes a fixed --repeats a "
                            "point, and keeps rpxprof's reports in --out-dir (replaced there)",
                            t->name);
    if (rpx_run_option_set_text(&a->cfg, t, arg,
                                rpx_run_option_spelled(t, RPX_SPELL_CLI, label, sizeof label), &err))
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "%s", err.message);
    return 0;
}

static int parse(int argc, char **argv, sweep_args *a)
{
    enum { O_VARY = 256, O_OUT_DIR, O_HTML, O_MAKE, O_SEED, O_BATCH_DIM, O_DIM, O_SHAPE,
           O_TABLE = 512 };
    static const struct option own[] = {
        {"model", required_argument, NULL, 'm'},   {"vary", required_argument, NULL, O_VARY},
        {"inputs", required_argument, NULL, 'i'},  {"make", required_argument, NULL, O_MAKE},
        {"seed", required_argument, NULL, O_SEED}, {"batch-dim", required_argument, NULL, O_BATCH_DIM},
        {"out-dir", required_argument, NULL, O_OUT_DIR}, {"html", required_argument, NULL, O_HTML},
        {"dim", required_argument, NULL, O_DIM},   {"shape", required_argument, NULL, O_SHAPE},
        {"json", no_argument, NULL, 'j'},          {"help", no_argument, NULL, 'h'}};
    struct option longs[sizeof own / sizeof own[0] + RPX_RUN_OPTIONS_MAX + 1];
    size_t n_table, k, n = sizeof own / sizeof own[0];
    const rpx_run_option *table = rpx_run_options(&n_table);
    int c;
    memcpy(longs, own, sizeof own);
    for (k = 0; k < n_table; k++) {
        if (!rpx_run_option_accepted(&table[k], RPX_SPELL_CLI) || strcmp(table[k].name, "seed") == 0)
            continue;
        longs[n].name = table[k].name;
        longs[n].has_arg = table[k].kind == RPX_OPT_FLAG ? no_argument : required_argument;
        longs[n].flag = NULL;
        longs[n++].val = O_TABLE + (int)k;
    }
    memset(&longs[n], 0, sizeof longs[0]);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":m:i:jh", longs, NULL)) != -1) {
        if (c >= O_TABLE && c < O_TABLE + (int)n_table) {
            if ((c = table_option(a, &table[c - O_TABLE], optarg)) != 0) return c;
            continue;
        }
        switch (c) {
        case 'm': a->model = optarg; break;
        case 'i': a->inputs = optarg; break;
        case O_VARY:
            if (a->nvary == RPX_SWEEP_MAX_VARY)
                return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary '%s': at most two --vary "
                                    "(a grid)", optarg);
            if ((c = parse_vary(optarg, &a->v[a->nvary])) != 0) {
                a->nvary++;
                return c;
            }
            if (a->v[a->nvary].kind == V_OPTION && a->v[a->nvary].n == 0) a->rate_auto = 1;
            a->nvary++;
            break;
        case O_MAKE:
            if (a->n_make == MAX_MAKE)
                return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "at most %d --make", MAX_MAKE);
            a->make[a->n_make++] = optarg;
            break;
        case O_SEED:
            if (rpx_cli_parse_long(optarg, &a->seed) || a->seed < 0)
                return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--seed '%s': give a whole number "
                                    "0 or above", optarg);
            break;
        case O_BATCH_DIM: a->batch_dim = optarg; break;
        case O_DIM:
        case O_SHAPE:
            if (!strchr(optarg, '=') || optarg[0] == '=')
                return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--%s '%s': expected NAME=%s",
                                    c == O_DIM ? "dim" : "shape", optarg,
                                    c == O_DIM ? "N" : "DIMS (1x3x224x224)");
            if ((c == O_DIM ? a->n_dims : a->n_shapes) == MAX_MAKE)
                return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "at most %d --dim and --shape each",
                                    MAX_MAKE);
            if (c == O_DIM) a->dims[a->n_dims++] = optarg;
            else a->shapes[a->n_shapes++] = optarg;
            break;
        case O_OUT_DIR: a->out_dir = optarg; break;
        case O_HTML: a->html = optarg; break;
        case 'j': a->json = 1; break;
        case 'h': fputs(usage, stdout); return -2;
        case ':':
            return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "%s needs a value (see 'rpxprof sweep "
                                "--help')", argv[optind - 1]);
        default:
            return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "unknown option '%s' (see 'rpxprof "
                                "sweep --help')", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "unexpected '%s': give the target as --model",
                            argv[optind]);
    if (!a->model) return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "give --model TARGET");
    if (!a->nvary) return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "give --vary SPEC (see "
                                       "'rpxprof sweep --help')");
    if (!a->out_dir) return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "give --out-dir DIR: the "
                                         "points' reports and sweep.json are kept there");
    return 0;
}

/* model files (kind model_file: their runtime binds --dim itself) */
static int is_model_file(const char *model)
{
    static const char *const suffixes[] = {".onnx", ".pt", ".torchscript"};
    size_t l = strlen(model), i;
    for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t s = strlen(suffixes[i]);
        if (l > s && strcmp(model + l - s, suffixes[i]) == 0) return 1;
    }
    return 0;
}

/* What the command line asks beyond its parts. */
static int check(const sweep_args *a)
{
    int i, sizes = 0;
    rpx_error e = {0};
    if (rpx_target_check_spec(a->model, &e) != 0)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "%s", e.message);
    if (a->nvary == 2 && strcmp(a->v[0].name, a->v[1].name) == 0)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary %s given twice: a grid varies two "
                            "different things", a->v[0].name);
    for (i = 0; i < a->nvary; i++) {
        vary_kind k = a->v[i].kind;
        sizes += k == V_SHAPE || k == V_DIM;
        if (k == V_INPUTS && (a->inputs || a->n_make))
            return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary inputs=DIR takes each point's "
                                "inputs from DIR: drop --inputs and --make");
        /* a model file binds its dimensions itself (--dim); other targets need to be told
         * where the dimension lies in the inputs */
        if (k == V_DIM && !is_model_file(a->model) && !a->n_make)
            return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary dim:%s: say where the dimension "
                                "lies with --make NAME=SHAPE naming it (--make image=1x%sx64:float32)",
                                a->v[i].name, a->v[i].name);
        if (k == V_BATCH && !is_model_file(a->model) && !a->inputs && !a->n_make)
            return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary batch needs inputs to batch: "
                                "--inputs FILE.npz (its arrays' leading dimension) or --make "
                                "NAME=SHAPE");
    }
    if (sizes && a->cfg.flops == a->cfg.flops)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--flops is one number for every point, "
                            "but the points' sizes differ: give --cost MODEL.onnx (each point "
                            "costed at its size)");
    return 0;
}

/* --vary rate=auto and --slo 'p99<...' go together, alone (no grid) */
static int check_capacity(const sweep_args *a)
{
    if (a->rate_auto && !a->capacity_slo)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary rate=auto is the capacity search "
                            "(the largest rate meeting objectives): give them, e.g. --slo "
                            "'p99<50ms' (docs/capacity.md)");
    if (a->capacity_slo && !a->rate_auto)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--slo '%s' is the capacity search's: give "
                            "--vary rate=auto with it (run's goodput SLO is written "
                            "ttft=500ms,...)", a->capacity_slo);
    if (a->rate_auto && a->nvary > 1)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary rate=auto is a search of its own: "
                            "give it as the only --vary");
    return 0;
}

/* What each point holds beyond its config (the strings the config points at). */
typedef struct point_bufs {
    char output[4200], inputs[4200];
    char dims[RPX_SWEEP_MAX_VARY][160], shape[160];
    const char *bind_dims[MAX_MAKE + RPX_SWEEP_MAX_VARY];
    const char *bind_inputs[MAX_MAKE + 1];
} point_bufs;

static void safe_label(const char *in, char *out, size_t size)
{
    size_t i;
    snprintf(out, size, "%s", in);
    for (i = 0; out[i]; i++)
        if (!((out[i] >= 'a' && out[i] <= 'z') || (out[i] >= 'A' && out[i] <= 'Z') ||
              (out[i] >= '0' && out[i] <= '9') || out[i] == '.' || out[i] == '-'))
            out[i] = '-';
}

static const char *stem(const char *path)
{
    static char buf[256];
    const char *s = strrchr(path, '/');
    size_t l;
    snprintf(buf, sizeof buf, "%s", s ? s + 1 : path);
    l = strlen(buf);
    if (l > 4 && strcmp(buf + l - 4, ".npz") == 0) buf[l - 4] = '\0';
    return buf;
}

static json_t *value_json(const vary *v, int i)
{
    double d;
    if (v->kind == V_INPUTS) return json_string(stem(v->values[i]));
    if (v->kind != V_SHAPE && rpx_cli_parse_number(v->values[i], &d) == 0)
        return d == floor(d) && fabs(d) < 9e15 ? json_integer((json_int_t)d) : json_real(d);
    return json_string(v->values[i]);
}

/* Point p (indices idx) of the sweep: its label, value, size, config and inputs. */
static int make_point(const sweep_args *a, const int *idx, const rpx_npz *base,
                      rpx_sweep_point *p, rpx_runner_config *cfg, point_bufs *b)
{
    const char *sym_names[RPX_SWEEP_MAX_VARY];
    long sym_values[RPX_SWEEP_MAX_VARY];
    rpx_sweep_inputs_point ip;
    const char *batch_dim = a->batch_dim ? a->batch_dim : "batch";
    size_t nd = 0, ns = 0, len = 0, ni = 0, nb = 0;
    int i, make = 0;
    double size = 1;
    int sized = 0;
    memset(&ip, 0, sizeof ip);
    *cfg = a->cfg;
    cfg->model = a->model;
    cfg->inputs = a->inputs;
    p->items = 1;
    p->value = a->nvary == 1 ? value_json(&a->v[0], idx[0]) : json_object();
    for (i = 0; i < (int)a->n_dims; i++) b->bind_dims[nd++] = a->dims[i];
    for (i = 0; i < (int)a->n_shapes; i++) b->bind_inputs[ni++] = a->shapes[i];
    for (i = 0; i < a->nvary; i++) {
        const vary *v = &a->v[i];
        const char *val = v->values[idx[i]];
        char part[160];
        p->index[i] = idx[i];
        if (a->nvary > 1) json_object_set_new(p->value, v->name, value_json(v, idx[i]));
        safe_label(v->kind == V_INPUTS ? stem(val) : val, part, sizeof part);
        len += (size_t)snprintf(p->label + len, len < sizeof p->label ? sizeof p->label - len : 0,
                                "%s%s-%s", i ? "_" : "", v->kind == V_INPUTS ? "inputs" : v->name, part);
        switch (v->kind) {
        case V_DIM:
            sym_names[ns] = v->name;
            sym_values[ns++] = strtol(val, NULL, 10);
            snprintf(b->dims[nb], sizeof b->dims[nb], "%s=%s", v->name, val);
            b->bind_dims[nd++] = b->dims[nb++];
            size *= strtod(val, NULL), sized = 1, make = 1;
            break;
        case V_BATCH:
            ip.batch = strtol(val, NULL, 10);
            p->items = (double)ip.batch;
            snprintf(b->dims[nb], sizeof b->dims[nb], "%s=%s", batch_dim, val);
            b->bind_dims[nd++] = b->dims[nb++];
            if (cfg->flops == cfg->flops) cfg->flops *= (double)ip.batch; /* one item's FLOPs */
            size *= (double)ip.batch, sized = 1, make = 1;
            break;
        case V_SHAPE: {
            const char *s = val;
            ip.shape_name = v->name;
            ip.shape_value = val;
            /* a model file's (and --cost's) input bound at this shape, as --shape binds it */
            snprintf(b->shape, sizeof b->shape, "%s=%s", v->name, val);
            b->bind_inputs[ni++] = b->shape;
            while (*s) { /* the product of the shape's elements */
                size *= strtod(s, (char **)&s);
                if (*s == 'x') s++;
            }
            sized = 1, make = 1;
            break;
        }
        case V_OPTION: {
            rpx_error e = {0};
            if (rpx_run_option_set_text(cfg, v->opt, val, v->name, &e) != 0)
                return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "--vary %s", e.message);
            break;
        }
        case V_INPUTS: cfg->inputs = val; break;
        }
    }
    p->size = sized ? size : NAN;
    cfg->bind_dims = b->bind_dims;
    cfg->n_bind_dims = nd;
    cfg->bind_inputs = b->bind_inputs;
    cfg->n_bind_inputs = ni;
    snprintf(b->output, sizeof b->output, "%s/%s.json", a->out_dir, p->label);
    cfg->output = b->output;
    if (a->n_make || (make && (a->inputs || !is_model_file(a->model)))) {
        rpx_error e = {0};
        snprintf(b->inputs, sizeof b->inputs, "%s/inputs", a->out_dir);
        if (mkdir(b->inputs, 0777) != 0 && errno != EEXIST)
            return rpx_cli_fail("sweep", RPX_EXIT_FAILURE, "%s: cannot make the folder: %s",
                                b->inputs, strerror(errno));
        snprintf(b->inputs, sizeof b->inputs, "%s/inputs/%s.npz", a->out_dir, p->label);
        ip.base = base;
        ip.make = a->make;
        ip.n_make = a->n_make;
        ip.sym_names = sym_names;
        ip.sym_values = sym_values;
        ip.n_syms = ns;
        ip.batch_dim = batch_dim;
        ip.seed = (uint64_t)a->seed;
        if (rpx_sweep_make_inputs(&ip, b->inputs, &e) != 0)
            return rpx_cli_fail("sweep", e.code == RPX_EINVAL ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE,
                                "%s: %s", p->label, e.message);
        cfg->inputs = b->inputs;
    }
    return 0;
}

/* The vary block of sweep.json: [{name, kind, values, direction}] */
static json_t *vary_json(const sweep_args *a)
{
    static const char *const kinds[] = {"shape", "dim", "batch", "option", "inputs"};
    json_t *arr = json_array();
    int i, k;
    for (i = 0; i < a->nvary; i++) {
        json_t *o = json_object(), *vals = json_array();
        for (k = 0; k < a->v[i].n; k++) json_array_append_new(vals, value_json(&a->v[i], k));
        json_object_set_new(o, "name", json_string(a->v[i].kind == V_INPUTS ? "inputs" : a->v[i].name));
        json_object_set_new(o, "kind", json_string(kinds[a->v[i].kind]));
        json_object_set_new(o, "values", vals);
        json_object_set_new(o, "direction", json_integer(a->v[i].direction));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* What the scaling is fitted against, or NULL for no fit. */
static const char *size_of(const sweep_args *a, char *buf, size_t size)
{
    size_t len = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; i < a->nvary; i++) {
        const vary *v = &a->v[i];
        if (v->kind == V_OPTION || v->kind == V_INPUTS) continue;
        len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s%s", len ? " x " : "",
                                v->kind == V_SHAPE ? "elements of " : "", v->name);
    }
    return buf[0] ? buf : NULL;
}

static void print_table(const json_t *sw)
{
    const json_t *pts = json_object_get(sw, "points"), *p, *sc = json_object_get(sw, "scaling");
    size_t i;
    printf("%-28s %10s %21s %10s %10s %14s %10s\n", "point", "p50 ms", "95% CI", "p95 ms", "p99 ms",
           "throughput/s", "bound ms");
    json_array_foreach(pts, i, p) {
        const json_t *ci = json_object_get(p, "p50_ci_ms");
        char cis[40] = "n/a", bound[24] = "n/a";
        if (json_array_size(ci) == 2)
            snprintf(cis, sizeof cis, "%.4g-%.4g", json_number_value(json_array_get(ci, 0)),
                     json_number_value(json_array_get(ci, 1)));
        if (json_is_number(json_object_get(p, "bound_ms")))
            snprintf(bound, sizeof bound, "%.4g", json_number_value(json_object_get(p, "bound_ms")));
        printf("%-28s %10.4g %21s %10.4g %10.4g %14.5g %10s%s\n",
               json_string_value(json_object_get(p, "label")),
               json_number_value(json_object_get(p, "p50_ms")), cis,
               json_number_value(json_object_get(p, "p95_ms")),
               json_number_value(json_object_get(p, "p99_ms")),
               json_number_value(json_object_get(p, "throughput_per_s")), bound,
               json_is_true(json_object_get(p, "valid")) ? "" : "  (invalid)");
    }
    if (json_is_object(sc)) {
        const json_t *ci = json_object_get(sc, "exponent_ci");
        printf("scaling: latency ~ (%s)^%.3f", json_string_value(json_object_get(sc, "size_of")),
               json_number_value(json_object_get(sc, "exponent")));
        if (json_array_size(ci) == 2)
            printf(" (95 %% CI %.3f to %.3f)", json_number_value(json_array_get(ci, 0)),
                   json_number_value(json_array_get(ci, 1)));
        if (json_is_number(json_object_get(sc, "bound_exponent")))
            printf("; the bound's exponent %.3f",
                   json_number_value(json_object_get(sc, "bound_exponent")));
        printf("\n");
    }
    json_array_foreach(json_object_get(sw, "wrong_way"), i, p)
        printf("wrong way: %s -> %s, p50 ratio %.3f%s\n",
               json_string_value(json_object_get(p, "from")),
               json_string_value(json_object_get(p, "to")),
               json_number_value(json_object_get(p, "ratio")),
               json_is_true(json_object_get(p, "real")) ? " (real: its interval excludes 1)"
                                                       : " (within the noise)");
    if (json_is_object(json_object_get(sw, "best_throughput")))
        printf("best throughput: %s (%.5g /s)\n",
               json_string_value(json_object_get(json_object_get(sw, "best_throughput"), "label")),
               json_number_value(json_object_get(json_object_get(sw, "best_throughput"),
                                                 "throughput_per_s")));
    if (json_is_object(json_object_get(sw, "knee")))
        printf("knee: %s (the first point at 90 %% of the best throughput)\n",
               json_string_value(json_object_get(json_object_get(sw, "knee"), "label")));
}

/* Every point run, interleaved; the reports and sweep.json written. */
static int run_points(sweep_args *a, rpx_output *hout)
{
    int counts[RPX_SWEEP_MAX_VARY] = {1, 1}, idx[RPX_SWEEP_MAX_VARY] = {0, 0}, k, n = 1, i, rc;
    rpx_sweep_point *pts = NULL;
    rpx_runner_config *cfgs = NULL;
    rpx_runner_result *res = NULL;
    point_bufs *bufs = NULL;
    rpx_npz *base = NULL;
    rpx_error err = {0};
    json_t *sw = NULL, *vj = NULL;
    char sizeof_buf[256], path[4200];
    for (i = 0; i < a->nvary; i++) counts[i] = a->v[i].n, n *= a->v[i].n;
    if (n > MAX_POINTS)
        return rpx_cli_fail("sweep", RPX_EXIT_USAGE, "%d points: at most %d", n, MAX_POINTS);
    pts = calloc((size_t)n, sizeof *pts);
    cfgs = calloc((size_t)n, sizeof *cfgs);
    res = calloc((size_t)n, sizeof *res);
    bufs = calloc((size_t)n, sizeof *bufs);
    rc = RPX_EXIT_FAILURE;
    if (!pts || !cfgs || !res || !bufs) {
        rpx_cli_fail("sweep", 0, "out of memory");
        goto out;
    }
    if (a->inputs && rpx_npz_load(a->inputs, &base, &err) != 0) {
        rc = rpx_cli_fail("sweep", RPX_EXIT_FAILURE, "%s", err.message);
        goto out;
    }
    for (k = 0; k < n; k++) {
        idx[0] = a->nvary > 1 ? k / counts[1] : k;
        idx[1] = a->nvary > 1 ? k % counts[1] : 0;
        if ((rc = make_point(a, idx, base, &pts[k], &cfgs[k], &bufs[k])) != 0) goto out;
    }
    rc = rpx_runner_run_many(cfgs, n, res, &err);
    for (k = 0; k < n; k++) {
        pts[k].report = res[k].report;
        if (!res[k].report)
            snprintf(pts[k].invalid_reason, sizeof pts[k].invalid_reason, "no report: %.1000s",
                     rc != 0 ? err.message : res[k].error[0] ? res[k].error : "not run");
        else if (res[k].status != RPX_RUNNER_COMPLETE)
            snprintf(pts[k].invalid_reason, sizeof pts[k].invalid_reason, "%s%s%.1000s",
                     rpx_runner_status_word(res[k].status), res[k].error[0] ? ": " : "",
                     res[k].error);
    }
    if (rc != 0) {
        int any = 0;
        for (k = 0; k < n; k++) any |= res[k].report != NULL;
        rpx_cli_fail("sweep", 0, "%s", err.message);
        rc = rc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE;
        if (!any) goto out;
    }
    vj = vary_json(a);
    if (rpx_sweep_json(a->model, vj, size_of(a, sizeof_buf, sizeof sizeof_buf), pts, (size_t)n, &sw,
                       &err) != 0) {
        rc = rpx_cli_fail("sweep", RPX_EXIT_FAILURE, "%s", err.message);
        goto out;
    }
    snprintf(path, sizeof path, "%s/sweep.json", a->out_dir);
    if (rpx_json_write_file(path, sw, &err) != 0) {
        rc = rpx_cli_fail("sweep", RPX_EXIT_FAILURE, "%s", err.message);
        goto out;
    }
    if (a->json) {
        char *text = rpx_json_dumps(sw);
        if (text) puts(text);
        free(text);
    } else {
        print_table(sw);
    }
    if (hout) {
        if (rpx__cli_html_sweep("sweep", hout, sw) != 0 && rc == 0) rc = RPX_EXIT_EXTRA_OUTPUT;
        hout = NULL;
    }
    fprintf(stderr, "rpxprof sweep: %d point reports and %s kept\n", n, path);
    for (k = 0; k < n; k++) /* a session not recorded in the history: exit 9 (as run's) */
        if (res[k].history_failed) {
            rpx_cli_term_printf(stderr, "rpxprof sweep: error: %s: %s\n", pts[k].label,
                                res[k].history_error);
            if (rc == 0) rc = RPX_EXIT_HISTORY;
        }
    if (rc == 0)
        for (k = 0; k < n; k++) {
            int code = res[k].status == RPX_RUNNER_COMPLETE ? 0
                       : !res[k].report && res[k].stop_signal
                           ? (res[k].stop_signal == SIGTERM ? RPX_EXIT_TERMINATED : 130)
                           : rpx_runner_exit_code(&res[k]);
            if (code != 0 && (rc == 0 || code > rc)) rc = code;
        }
out:
    rpx_output_discard(hout);
    json_decref(sw);
    json_decref(vj);
    for (k = 0; pts && res && k < n; k++) {
        json_decref(pts[k].value);
        rpx_runner_result_free(&res[k]);
    }
    rpx_npz_free(base);
    free(pts);
    free(cfgs);
    free(res);
    free(bufs);
    return rc;
}

int rpx_cli_sweep(int argc, char **argv)
{
    sweep_args a;
    rpx_output *hout = NULL;
    int rc;
    memset(&a, 0, sizeof a);
    rpx_runner_config_init(&a.cfg);
    a.cfg.processes = 6;
    a.cfg.output_option = "--out-dir";
    a.cfg.no_force_option = 1;
    a.cfg.spelling = RPX_SPELL_CLI;
    a.cfg.spread = 1; /* process k of every point on one CPU: the neighbours pair (compare --run) */
    if ((rc = parse(argc, argv, &a)) != 0 || (rc = check(&a)) != 0 ||
        (rc = check_capacity(&a)) != 0) {
        args_free(&a);
        return rc == -2 ? RPX_EXIT_OK : rc;
    }
    if (mkdir(a.out_dir, 0777) != 0 && errno != EEXIST) {
        args_free(&a);
        return rpx_cli_fail("sweep", RPX_EXIT_FAILURE, "--out-dir %s: cannot make the folder: %s",
                            a.out_dir, strerror(errno));
    }
    if (a.html) {
        const char *protect[1] = {a.inputs};
        if ((rc = rpx__cli_html_open("sweep", a.html, -1, protect, a.inputs ? 1 : 0, &hout)) != 0) {
            args_free(&a);
            return rc;
        }
    }
    rc = a.rate_auto ? rpx__cli_sweep_capacity(&a.cfg, a.model, a.inputs, a.capacity_slo,
                                               a.out_dir, hout)
                     : run_points(&a, hout);
    args_free(&a);
    return rc;
}
