/* capacity.c (cli) — owns `rpxprof capacity`: the capacity search of
 * rpxprof/capacity.h from the command line, until `rpxprof sweep --vary
 * rate=auto --slo ...` calls the same library function. Every step is a whole
 * `rpxprof run` of the target at --rate R for --duration S (the runner, no
 * report written); the result is the `capacity` block of sweep.json, written
 * to --output (or stdout), and its sentence on stderr. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/json.h"
#include "loader/kinds.h"
#include "rpxprof/capacity.h"
#include "rpxprof/options.h"
#include "rpxprof/runner.h"

static const char usage[] =
    "usage: rpxprof capacity --model TARGET --slo 'p99<50ms[,ttft_p99<500ms,...]' [options]\n"
    "                        [run options] [--output FILE]\n"
    "\n"
    "The largest request rate (an HTTP API's open-loop rate, a local model's paced call rate)\n"
    "at which every objective holds with 95 % confidence: bracket from --start-rate (doubling\n"
    "until an objective fails or the run is invalid), bisect, then re-verify the found rate in\n"
    "fresh runs (docs/capacity.md). Objectives: pN, e2e_pN, ttft_pN, tpot_pN < DURATION.\n"
    "\n"
    "  --slo LIST             the objectives, all at once (goodput), e.g. 'p99<50ms'\n"
    "  --start-rate R        the first rate tried, per second (10)\n"
    "  --min-duration S      each run at least S seconds (1; longer when a percentile needs\n"
    "                        more requests: a p99 needs 299)\n"
    "  --precision F         bisect until the bracket is within F of its low end (0.05)\n"
    "  --verify N            fresh runs at the found rate (2)\n"
    "  --max-runs N          runs of the whole search at most (40)\n"
    "  --send-tolerance MS   a run whose client's own send delay p99 passes this is invalid\n"
    "                        (default: 1 ms or a tenth of the tightest objective)\n"
    "  --output FILE         the capacity block as JSON (default: stdout)\n"
    "  -h, --help            show this help and exit\n";

typedef struct cap_ctx {
    rpx_runner_config cfg;
    const rpx_run_option *rate, *duration;
    int quiet;
    rpx_capacity_keep_fn keep;    /* each step's report (borrowed); NULL: none kept */
    void *keep_ud;
} cap_ctx;

static int run_at(void *ud, double rate, double duration_s, json_t **report, rpx_error *err)
{
    cap_ctx *x = ud;
    rpx_runner_config c = x->cfg;
    rpx_runner_result res;
    int rc;
    *report = NULL;
    if ((rc = rpx_run_option_set_number(&c, x->rate, rate, "--rate", err)) != 0 ||
        (rc = rpx_run_option_set_number(&c, x->duration, duration_s, "--duration", err)) != 0)
        return rc;
    /* as `rpxprof run` reads --rate x --duration (src/cli/run.c, paced()): a local
     * target's paced calls, or an HTTP API's open-loop load */
    if (!rpx__kind_has(rpx__kind_of_spec(c.model), RPX_KIND_OWN_LOAD)) {
        c.repeats = (long)llround(c.rate_hz * c.target.load_duration_s);
        c.target.load_duration_s = 0;
    } else {
        c.target.load_rate = c.rate_hz;
        c.rate_hz = 0;
        c.repeats = (long)llround(c.target.load_rate * c.target.load_duration_s);
    }
    c.output = NULL;
    c.lean_report = 0;
    c.no_history = 1;
    if ((rc = rpx_runner_config_check(&c, RPX_SPELL_CLI, err)) != 0) return rc;
    if (!x->quiet) fprintf(stderr, "capacity: %.4g per second for %.3g s\n", rate, duration_s);
    c.progress = 0;
    rc = rpx_runner_run(&c, &res, err);
    if (rc == 0) {
        *report = res.report;
        res.report = NULL;
        if (x->keep && x->keep(x->keep_ud, rate, *report) != 0)
            rc = rpx_error_set(err, RPX_ENOMEM, "out of memory keeping a step's report");
    }
    rpx_runner_result_free(&res);
    return rc;
}

static int own_number(const char *name, const char *arg, double lo, double *out)
{
    if (rpx_cli_parse_number(arg, out) || !(*out >= lo))
        return rpx_cli_fail("capacity", RPX_EXIT_USAGE, "--%s '%s': give a number of at least %g",
                            name, arg, lo);
    return 0;
}

int rpx__cli_capacity(const char *cmd, const rpx_runner_config *cfg, const char *slo,
                      rpx_capacity_opts *o, int quiet, rpx_capacity_keep_fn keep, void *keep_ud,
                      json_t **cap)
{
    cap_ctx x;
    rpx_error err = {0};
    memset(&x, 0, sizeof x);
    x.cfg = *cfg;
    x.cfg.progress = 0;
    x.quiet = quiet;
    x.keep = keep;
    x.keep_ud = keep_ud;
    x.rate = rpx_run_option_find("rate");
    x.duration = rpx_run_option_find("duration");
    if (rpx_capacity_slo_parse(slo, &o->slo, &err) != 0)
        return rpx_cli_fail(cmd, RPX_EXIT_USAGE, "%s", err.message);
    if (rpx_capacity_search(o, run_at, &x, cap, &err) != 0)
        return rpx_cli_fail(cmd, RPX_EXIT_FAILURE, "%s", err.message);
    fprintf(stderr, "%s: %s\n", cmd, json_string_value(json_object_get(*cap, "sentence")));
    return 0;
}

int rpx_cli_capacity(int argc, char **argv)
{
    enum { O_SLO = 256, O_START, O_MIND, O_PREC, O_VERIFY, O_MAXRUNS, O_TOL, O_OUT, O_TABLE = 512 };
    static const struct option own[] = {
        {"slo", required_argument, NULL, O_SLO},         {"start-rate", required_argument, NULL, O_START},
        {"min-duration", required_argument, NULL, O_MIND}, {"precision", required_argument, NULL, O_PREC},
        {"verify", required_argument, NULL, O_VERIFY},   {"max-runs", required_argument, NULL, O_MAXRUNS},
        {"send-tolerance", required_argument, NULL, O_TOL}, {"output", required_argument, NULL, O_OUT},
        {"model", required_argument, NULL, 'm'},         {"inputs", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'}};
    struct option longs[sizeof own / sizeof own[0] + RPX_RUN_OPTIONS_MAX + 1];
    size_t n_table, k, n = sizeof own / sizeof own[0];
    const rpx_run_option *table = rpx_run_options(&n_table);
    rpx_capacity_opts o;
    cap_ctx x;
    rpx_error err = {0};
    const char *slo = NULL, *out = NULL;
    json_t *cap = NULL;
    double v;
    int c, rc;

    memset(&x, 0, sizeof x);
    rpx_runner_config_init(&x.cfg);
    rpx_capacity_opts_init(&o);
    x.rate = rpx_run_option_find("rate");
    x.duration = rpx_run_option_find("duration");
    memcpy(longs, own, sizeof own);
    for (k = 0; k < n_table; k++) {
        if (!rpx_run_option_accepted(&table[k], RPX_SPELL_CLI) || !strcmp(table[k].name, "slo") ||
            !strcmp(table[k].name, "rate") || !strcmp(table[k].name, "duration") ||
            !strcmp(table[k].name, "output") || !strcmp(table[k].name, "model") ||
            !strcmp(table[k].name, "inputs"))
            continue;
        longs[n].name = table[k].name;
        longs[n].has_arg = table[k].kind == RPX_OPT_FLAG ? no_argument : required_argument;
        longs[n].flag = NULL;
        longs[n++].val = O_TABLE + (int)k;
    }
    memset(&longs[n], 0, sizeof longs[0]);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":m:i:qh", longs, NULL)) != -1) {
        if (c >= O_TABLE && c < O_TABLE + (int)n_table) {
            if (rpx_run_option_set_text(&x.cfg, &table[c - O_TABLE], optarg,
                                        argv[optind - 1], &err) != 0)
                return rpx_cli_fail("capacity", RPX_EXIT_USAGE, "%s", err.message);
            continue;
        }
        switch (c) {
        case 'm': x.cfg.model = optarg; break;
        case 'i': x.cfg.inputs = optarg; break;
        case 'q': x.quiet = 1; break;
        case O_SLO: slo = optarg; break;
        case O_START: if ((rc = own_number("start-rate", optarg, 1e-3, &o.start_rate))) return rc; break;
        case O_MIND: if ((rc = own_number("min-duration", optarg, 0.01, &o.min_duration_s))) return rc; break;
        case O_PREC: if ((rc = own_number("precision", optarg, 0.001, &o.precision))) return rc; break;
        case O_VERIFY: if ((rc = own_number("verify", optarg, 1, &v))) return rc; o.verify_runs = (int)v; break;
        case O_MAXRUNS: if ((rc = own_number("max-runs", optarg, 1, &v))) return rc; o.max_runs = (int)v; break;
        case O_TOL: if ((rc = own_number("send-tolerance", optarg, 0.001, &o.send_tolerance_ms))) return rc; break;
        case O_OUT: out = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        case ':':
            return rpx_cli_fail("capacity", RPX_EXIT_USAGE, "%s needs a value (see 'rpxprof capacity --help')",
                                argv[optind - 1]);
        default:
            return rpx_cli_fail("capacity", RPX_EXIT_USAGE, "unknown option '%s' (see 'rpxprof capacity --help')",
                                argv[optind - 1]);
        }
    }
    if (!x.cfg.model) return rpx_cli_fail("capacity", RPX_EXIT_USAGE, "--model is required");
    if (!slo) return rpx_cli_fail("capacity", RPX_EXIT_USAGE, "--slo is required, e.g. 'p99<50ms'");
    if ((rc = rpx__cli_capacity("capacity", &x.cfg, slo, &o, x.quiet, NULL, NULL, &cap)) != 0) return rc;
    if (rpx_json_write_file(out ? out : "-", cap, &err) != 0) {
        json_decref(cap);
        return rpx_cli_fail("capacity", RPX_EXIT_FAILURE, "%s", err.message);
    }
    json_decref(cap);
    return 0;
}
