/* compare_run.c — `rpxprof compare --run`: two targets measured in one
 * invocation, their worker processes alternating A B, B A, ... (the runner's
 * rpx_runner_run_pair), then compared as two reports. The recommended way to
 * compare on a shared machine: a drift of the machine falls on both. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "rpxprof/compare.h"
#include "rpxprof/error.h"
#include "common/json.h"
#include "rpxprof/options.h"
#include "rpxprof/runner.h"
#include "rpxprof/stats.h"

static const char usage[] =
    "Usage: rpxprof compare --run --model A --model B --inputs FILE.npz [OPTION]...\n"
    "Measure two targets in one invocation, their worker processes alternating\n"
    "(A B, B A, A B, ...), so that a drift of the machine falls on both, and\n"
    "compare them as rpxprof compare compares two reports (B/A: B is the new one).\n"
    "Pair k (process k of each) runs both on CPU k mod n of the --cpus (else the\n"
    "allowed) CPUs, and the ratio's interval comes from the within-pair ratios\n"
    "(design paired_by_cpu, docs/statistics.md).\n"
    "\n"
    "  -m, --model TARGET     twice: the base (A), then the new (B)\n"
    "  -i, --inputs FILE      NPZ file both are called with\n"
    "      --processes K      processes per target (default 10: ten of each)\n"
    "      --repeats N        timed calls per target (default 1000)\n"
    "      --warmup N         untimed calls per process (default 10)\n"
    "      --auto             auto-ranging instead of --repeats, as rpxprof run --auto:\n"
    "                         both targets within --max-time S (default 10), each\n"
    "                         process's calls until --min-time S (1) over the processes\n"
    "                         and the p50 within +-1%, or its share of the time ends\n"
    "      --device DEV, --precision STR, --unit STR   as rpxprof run\n"
    "      --timeout S, --call-timeout S, --grace S    as rpxprof run\n"
    "      --writable-inputs  let the models edit their inputs in place (as rpxprof run)\n"
    "      --cpus LIST        the CPUs the pairs rotate over (default: every allowed one)\n"
    "      --unpaired         no pairs by CPU: the inherited mask, and the interval of\n"
    "                         two independent sets of processes (design interleaved)\n"
    "      --out-dir DIR      keep the two reports as DIR/base.json and DIR/new.json\n"
    "                         (reports of rpxprof there are replaced, nothing else)\n"
    "  -t, --threshold T      what counts as a change: 1% (default) or 0.01\n"
    "  -j, --json             print JSON instead of a table\n"
    "      --fail-on-regression  exit 3 when B is slower\n"
    "      --html FILE        also write the comparison's HTML report (as 'rpxprof\n"
    "                         report' makes it): both distributions, the ratios\n"
    "  -h, --help             show this help and exit\n"
    "Exit status: 0 compared, 1 a run failed or the reports cannot be compared,\n"
    "2 bad command line, 3 slower with --fail-on-regression, 130/143 interrupted.\n";

/* Whether `path` names DIR/NAME (a report not written yet, so not by inode):
 * its folder and DIR resolved, links followed. */
static int same_place(const char *path, const char *dir, const char *name)
{
    char buf[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (strcmp(base, name) != 0) return 0;
    if (!slash) snprintf(buf, sizeof buf, ".");
    else if (slash == path) snprintf(buf, sizeof buf, "/");
    else snprintf(buf, sizeof buf, "%.*s", (int)(slash - path), path);
    if (!realpath(buf, a) || !realpath(dir, b)) return strcmp(buf, dir) == 0;
    return strcmp(a, b) == 0;
}

/* What compare --run's command line gives: the run options (through the options'
 * table, those it takes: RPX_OPT_IN_COMPARE) and its own. */
typedef struct compare_args {
    rpx_runner_config cfg;
    rpx_compare_opts co;
    const char *models[2], *out_dir, *html;
    int nmodels, json, gate;
} compare_args;

static int check(compare_args *a);

/* One table option given to compare --run: the table's range and words
 * (rpxprof/options.h), and its own rule for --processes. */
static int table_option(compare_args *a, const rpx_run_option *t, const char *arg)
{
    rpx_error err = {0};
    char label[64];
    long l;
    if (strcmp(t->name, "processes") == 0 &&
        (rpx_cli_parse_long(arg, &l) || l < 2 || l > RPX_RUNNER_MAX_PROCESSES))
        return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                            "--processes '%s': give a whole number from 2 to %d (the "
                            "interval of the ratio is between processes)",
                            arg, RPX_RUNNER_MAX_PROCESSES);
    if (rpx_run_option_set_text(&a->cfg, t, arg,
                                rpx_run_option_spelled(t, RPX_SPELL_COMPARE, label, sizeof label),
                                &err))
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "%s", err.message);
    return 0;
}

/* The command line into a; 0, -2 after --help, or the exit status. */
static int parse(int argc, char **argv, compare_args *a)
{
    enum { O_RUN = 256, O_OUT_DIR, O_GATE, O_UNPAIRED, O_HTML, O_TABLE = 512 };
    static const struct option own[] = {
        {"run", no_argument, NULL, O_RUN},         {"model", required_argument, NULL, 'm'},
        {"inputs", required_argument, NULL, 'i'},  {"unpaired", no_argument, NULL, O_UNPAIRED},
        {"out-dir", required_argument, NULL, O_OUT_DIR},
        {"threshold", required_argument, NULL, 't'}, {"json", no_argument, NULL, 'j'},
        {"fail-on-regression", no_argument, NULL, O_GATE}, {"html", required_argument, NULL, O_HTML},
        {"help", no_argument, NULL, 'h'}};
    struct option longs[sizeof own / sizeof own[0] + RPX_RUN_OPTIONS_MAX + 1];
    size_t n_table, k, n = sizeof own / sizeof own[0];
    const rpx_run_option *table = rpx_run_options(&n_table);
    int c;
    memcpy(longs, own, sizeof own);
    for (k = 0; k < n_table; k++) { /* the run options compare --run takes */
        if (!rpx_run_option_accepted(&table[k], RPX_SPELL_COMPARE)) continue;
        longs[n].name = table[k].name;
        longs[n].has_arg = table[k].kind == RPX_OPT_FLAG ? no_argument : required_argument;
        longs[n].flag = NULL;
        longs[n++].val = O_TABLE + (int)k;
    }
    memset(&longs[n], 0, sizeof longs[0]);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":m:i:t:jh", longs, NULL)) != -1) {
        if (c >= O_TABLE && c < O_TABLE + (int)n_table) {
            if ((c = table_option(a, &table[c - O_TABLE], optarg)) != 0) return c;
            continue;
        }
        switch (c) {
        case O_RUN: break;
        case 'm':
            if (a->nmodels == 2)
                return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                                    "--model '%s': compare --run takes exactly two --model: the base, then the new one",
                                    optarg);
            a->models[a->nmodels++] = optarg;
            break;
        case 'i': a->cfg.inputs = optarg; break;
        case O_OUT_DIR: a->out_dir = optarg; break;
        case O_UNPAIRED: a->co.paired_by_cpu = 0; break;
        case 't':
            if (rpx_cli_parse_threshold(optarg, &a->co.threshold))
                return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                                    "--threshold '%s': give a percentage above 0 and below 100 (1%%) or a fraction (0.01)", optarg);
            break;
        case 'j': a->json = 1; break;
        case O_GATE: a->gate = 1; break;
        case O_HTML: a->html = optarg; break;
        case 'h': fputs(usage, stdout); return -2;
        case ':':
            return rpx_cli_fail("compare", RPX_EXIT_USAGE, "%s needs a value (see 'rpxprof compare --run --help')",
                                argv[optind - 1]);
        default:
            return rpx_cli_fail("compare", RPX_EXIT_USAGE, "unknown option '%s' (see 'rpxprof compare --run --help')",
                                argv[optind - 1]);
        }
    }
    if (optind < argc)
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "--run takes no reports: give --model A --model B --inputs FILE.npz");
    if (a->nmodels != 2)
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "--run needs --model twice: the base, then the new one");
    if (!a->cfg.inputs) return rpx_cli_fail("compare", RPX_EXIT_USAGE, "--run needs --inputs FILE.npz");
    return check(a);
}

/* What the pair needs beyond each run's options: calls enough a process for
 * the p50's interval, targets that parse, --cpus with pairs; and the run
 * options' own rules (those that concern what compare --run takes). */
static int check(compare_args *a)
{
    rpx_runner_config *cfg = &a->cfg;
    long need = (long)rpx_stats_quantile_min_calls(0.5, 0.95);
    rpx_error cerr = {0};
    int k;
    /* fewer calls a process than a per-process p50 needs: the p50's interval is
     * null, the verdict inconclusive whatever the models do (docs/statistics.md);
     * --auto picks the calls itself (and refuses --repeats beside it) */
    if (!cfg->autorange && cfg->repeats / cfg->processes < need)
        return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                            "--repeats %ld over --processes %d is %ld call%s a process; the p50's interval "
                            "between processes needs at least %ld in every process: give --repeats %ld or "
                            "more, or fewer --processes",
                            cfg->repeats, cfg->processes, cfg->repeats / cfg->processes,
                            cfg->repeats / cfg->processes == 1 ? "" : "s", need, need * cfg->processes);
    for (k = 0; k < 2; k++)
        if (rpx_target_check_spec(a->models[k], &cerr) != 0)
            return rpx_cli_fail("compare", RPX_EXIT_USAGE, "%s", cerr.message);
    /* the pairs by CPU: process i of each on CPU i mod n (the runner's --spread) */
    cfg->spread = a->co.paired_by_cpu;
    if (!a->co.paired_by_cpu && cfg->cpus)
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "--cpus picks the CPUs the pairs rotate "
                            "over; drop it or --unpaired");
    /* spread is compare's own (--unpaired): the runner words its rules itself */
    if (rpx_runner_config_check(cfg, RPX_SPELL_COMPARE, &cerr) != 0 &&
        !strstr(cerr.message, "--spread"))
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "%s", cerr.message);
    return 0;
}

int rpx__cli_compare_run(int argc, char **argv)
{
    compare_args a;
    rpx_runner_config cfg[2];
    rpx_runner_result res[2];
    rpx_error err = {0};
    rpx_output *hout = NULL;
    char dir[PATH_MAX], path[2][PATH_MAX + 16];
    int rc = RPX_EXIT_FAILURE, made_temp = 0, k;
    json_t *cmp = NULL;
    char *text;
    const char *out_dir, *html, **models = a.models;
    rpx_compare_opts co;

    memset(&a, 0, sizeof a);
    a.co.threshold = 0.01, a.co.confidence = 0.95, a.co.paired_by_cpu = 1;
    a.co.same_session = 1; /* both sides interleaved in this one session: no between-session rule */
    rpx_runner_config_init(&a.cfg);
    a.cfg.processes = 10;
    /* the runner's messages about the reports' place name compare's option, never a --force */
    a.cfg.output_option = "--out-dir";
    a.cfg.no_force_option = 1;
    a.cfg.spelling = RPX_SPELL_COMPARE;
    memset(res, 0, sizeof res);
    if ((k = parse(argc, argv, &a)) != 0) return k == -2 ? RPX_EXIT_OK : k;
    cfg[0] = a.cfg;
    out_dir = a.out_dir;
    html = a.html;
    co = a.co;
    if (out_dir) {
        if (snprintf(dir, sizeof dir, "%s", out_dir) >= (int)sizeof dir)
            return rpx_cli_fail("compare", RPX_EXIT_USAGE, "--out-dir: path too long");
        for (k = 0; k < 2; k++) {
            struct stat st;
            snprintf(path[k], sizeof path[k], "%s/%s.json", dir, k ? "new" : "base");
            if (stat(path[k], &st) == 0 && !S_ISREG(st.st_mode))
                return rpx_cli_fail("compare", RPX_EXIT_FAILURE,
                                    "%s: is a %s, not a report; compare --run keeps its reports as "
                                    "DIR/base.json and DIR/new.json: give another --out-dir or move it out of the way",
                                    path[k], S_ISDIR(st.st_mode) ? "folder" : "special file");
        }
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/rpxprof-compare-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
            return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "%s: cannot make a temporary folder: %s", dir,
                                strerror(errno));
        made_temp = 1;
    }
    cfg[1] = cfg[0];
    for (k = 0; k < 2; k++) {
        snprintf(path[k], sizeof path[k], "%s/%s.json", dir, k ? "new" : "base");
        cfg[k].model = models[k];
        cfg[k].output = path[k];
        cfg[k].output_temporary = made_temp; /* removed at the end: no path in the history */
    }
    if (html) {   /* the page's file, before anything is measured: never the inputs or the reports */
        const char *protect[3] = {cfg[0].inputs, path[0], path[1]};
        if (same_place(html, dir, "base.json") || same_place(html, dir, "new.json")) {
            rc = rpx_cli_fail("compare", RPX_EXIT_USAGE,
                              "--html %s: is one of the reports compare --run keeps in --out-dir %s; "
                              "choose another --html path", html, dir);
            goto out;
        }
        if ((k = rpx__cli_html_open("compare", html, -1, protect, 3, &hout)) != 0) {
            rc = k;
            goto out;
        }
    }
    /* a target whose first process fails stops the pair before the other one
     * starts: its failure, not the other's "interrupted before any process", is
     * what the user needs */
    if ((k = rpx_runner_run_pair(&cfg[0], &cfg[1], &res[0], &res[1], &err)) != 0 &&
        !(res[0].report && res[0].status != RPX_RUNNER_COMPLETE) &&
        !(res[1].report && res[1].status != RPX_RUNNER_COMPLETE)) {
        rpx_cli_fail("compare", 0, "%s", err.message);
        if (k == RPX_EUSAGE) rc = RPX_EXIT_USAGE;
        goto out;
    }
    for (k = 0; k < 2; k++)
        if (res[k].report && res[k].status != RPX_RUNNER_COMPLETE) {
            rpx_cli_fail("compare", 0, "%s: %s (%s)", models[k],
                         res[k].status == RPX_RUNNER_INTERRUPTED ? "interrupted" : "did not complete",
                         res[k].error);
            rc = res[k].status == RPX_RUNNER_INTERRUPTED ? rpx_runner_exit_code(&res[k])
                                                         : RPX_EXIT_FAILURE;
            goto out;
        }
    if (rpx_compare_reports(path[0], path[1], &co, &cmp, &err) != 0) {
        rpx_cli_fail("compare", 0, "%s", err.message);
        goto out;
    }
    json_object_set_new(cmp, "interleaved", json_string("ABBA by process"));
    if (strcmp(json_string_value(json_object_get(cmp, "design")), "independent") == 0)
        json_object_set_new(cmp, "design", json_string("interleaved"));
    {
        size_t i;
        const json_t *w;
        json_array_foreach(json_object_get(cmp, "warnings"), i, w)
            fprintf(stderr, "rpxprof compare: warning: %s\n", json_string_value(w));
    }
    rc = RPX_EXIT_OK;
    if (a.json) {
        text = rpx_json_dumps(cmp);
        if (text) {
            fputs(text, stdout);
            fputc('\n', stdout);
        }
    } else {
        text = rpx_compare_text(cmp);
        if (text) fputs(text, stdout);
    }
    if (!text) rc = rpx_cli_fail("compare", RPX_EXIT_FAILURE, "out of memory");
    free(text);
    if (rc == RPX_EXIT_OK && hout) {   /* the page, with both reports' distributions */
        if (rpx__cli_html_compare("compare", hout, cmp, path[0], path[1])) rc = RPX_EXIT_FAILURE;
        hout = NULL;
    }
    if (rc == RPX_EXIT_OK && a.gate &&
        strcmp(json_string_value(json_object_get(cmp, "verdict")), "slower") == 0)
        rc = RPX_EXIT_REGRESSION;
    for (k = 0; k < 2; k++)   /* both reports are written: a history not written is exit 9 */
        if (res[k].history_failed) {
            rpx_cli_term_printf(stderr, "rpxprof compare: error: %s: %s\n", models[k],
                                res[k].history_error);
            if (rc == RPX_EXIT_OK) rc = RPX_EXIT_HISTORY;
        }
    if (out_dir) fprintf(stderr, "rpxprof compare: reports kept: %s, %s\n", path[0], path[1]);
out:
    rpx_output_discard(hout);
    json_decref(cmp);
    rpx_runner_result_free(&res[0]);
    rpx_runner_result_free(&res[1]);
    if (made_temp) {
        unlink(path[0]);
        unlink(path[1]);
        rmdir(dir);
    }
    return rc;
}
