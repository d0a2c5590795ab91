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

int rpx__cli_compare_run(int argc, char **argv)
{
    enum { O_RUN = 256, O_PROCESSES, O_REPEATS, O_WARMUP, O_DEVICE, O_PRECISION, O_UNIT,
           O_TIMEOUT, O_CALL_TIMEOUT, O_OUT_DIR, O_GATE, O_GRACE, O_WRITABLE, O_CPUS,
           O_UNPAIRED, O_HTML, O_AUTO, O_MAX_TIME, O_MIN_TIME };
    static const struct option opts[] = {
        {"run", no_argument, NULL, O_RUN},         {"model", required_argument, NULL, 'm'},
        {"inputs", required_argument, NULL, 'i'},  {"processes", required_argument, NULL, O_PROCESSES},
        {"repeats", required_argument, NULL, O_REPEATS}, {"warmup", required_argument, NULL, O_WARMUP},
        {"device", required_argument, NULL, O_DEVICE}, {"precision", required_argument, NULL, O_PRECISION},
        {"unit", required_argument, NULL, O_UNIT},  {"timeout", required_argument, NULL, O_TIMEOUT},
        {"call-timeout", required_argument, NULL, O_CALL_TIMEOUT}, {"grace", required_argument, NULL, O_GRACE},
        {"writable-inputs", no_argument, NULL, O_WRITABLE},
        {"cpus", required_argument, NULL, O_CPUS}, {"unpaired", no_argument, NULL, O_UNPAIRED},
        {"out-dir", required_argument, NULL, O_OUT_DIR},
        {"threshold", required_argument, NULL, 't'}, {"json", no_argument, NULL, 'j'},
        {"fail-on-regression", no_argument, NULL, O_GATE}, {"html", required_argument, NULL, O_HTML},
        {"auto", no_argument, NULL, O_AUTO}, {"max-time", required_argument, NULL, O_MAX_TIME},
        {"min-time", required_argument, NULL, O_MIN_TIME},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    rpx_runner_config cfg[2];
    rpx_runner_result res[2];
    rpx_compare_opts co = {0.01, 0.95, 1};
    rpx_error err = {0};
    const char *models[2] = {NULL, NULL}, *out_dir = NULL, *html = NULL;
    rpx_output *hout = NULL;
    char dir[PATH_MAX], path[2][PATH_MAX + 16];
    int nmodels = 0, c, json = 0, gate = 0, rc = RPX_EXIT_FAILURE, made_temp = 0, k;
    int repeats_given = 0;
    long l;
    json_t *cmp = NULL;
    char *text;

    rpx_runner_config_init(&cfg[0]);
    cfg[0].processes = 10;
    /* the runner's messages about the reports' place name compare's option, never a --force */
    cfg[0].output_option = "--out-dir";
    cfg[0].no_force_option = 1;
    memset(res, 0, sizeof res);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":m:i:t:jh", opts, NULL)) != -1) {
        switch (c) {
        case O_RUN: break;
        case 'm':
            if (nmodels == 2)
                return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                                    "--model '%s': compare --run takes exactly two --model: the base, then the new one",
                                    optarg);
            models[nmodels++] = optarg;
            break;
        case 'i': cfg[0].inputs = optarg; break;
        case O_PROCESSES:
            if (rpx_cli_parse_long(optarg, &l) || l < 2 || l > RPX_RUNNER_MAX_PROCESSES)
                return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                                    "--processes '%s': give a whole number from 2 to %d (the "
                                    "interval of the ratio is between processes)",
                                    optarg, RPX_RUNNER_MAX_PROCESSES);
            cfg[0].processes = (int)l;
            break;
        case O_REPEATS:
        case O_WARMUP:
        case O_DEVICE:
        case O_PRECISION:
        case O_UNIT:
        case O_TIMEOUT:
        case O_CALL_TIMEOUT:
        case O_GRACE:
        case O_CPUS:
        case O_AUTO:
        case O_MAX_TIME:
        case O_MIN_TIME:
        case O_WRITABLE: {
            /* a run's option: the options' table's range and words (rpxprof/options.h) */
            const char *name = c == O_REPEATS ? "repeats" : c == O_WARMUP ? "warmup"
                             : c == O_DEVICE ? "device" : c == O_PRECISION ? "precision"
                             : c == O_UNIT ? "unit" : c == O_TIMEOUT ? "timeout"
                             : c == O_GRACE ? "grace" : c == O_WRITABLE ? "writable-inputs"
                             : c == O_CPUS ? "cpus" : c == O_AUTO ? "auto"
                             : c == O_MAX_TIME ? "max-time" : c == O_MIN_TIME ? "min-time"
                             : "call-timeout";
            char label[40];
            snprintf(label, sizeof label, "--%s", name);
            if (rpx_run_option_set_text(&cfg[0], rpx_run_option_find(name),
                                        c == O_WRITABLE || c == O_AUTO ? NULL : optarg, label,
                                        &err))
                return rpx_cli_fail("compare", RPX_EXIT_USAGE, "%s", err.message);
            if (c == O_REPEATS) repeats_given = 1;
            break;
        }
        case O_OUT_DIR: out_dir = optarg; break;
        case O_UNPAIRED: co.paired_by_cpu = 0; break;
        case 't':
            if (rpx_cli_parse_threshold(optarg, &co.threshold))
                return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                                    "--threshold '%s': give a percentage above 0 and below 100 (1%%) or a fraction (0.01)", optarg);
            break;
        case 'j': json = 1; break;
        case O_GATE: gate = 1; break;
        case O_HTML: html = optarg; break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
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
    if (nmodels != 2)
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "--run needs --model twice: the base, then the new one");
    if (!cfg[0].inputs) return rpx_cli_fail("compare", RPX_EXIT_USAGE, "--run needs --inputs FILE.npz");
    if (cfg[0].autorange && repeats_given)
        return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                            "--repeats fixes the number of timed calls and --auto picks it; give one");
    if ((cfg[0].max_time_s > 0 || cfg[0].min_time_s > 0) && !cfg[0].autorange)
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "--%s is auto-ranging's; add --auto",
                            cfg[0].max_time_s > 0 ? "max-time" : "min-time");
    if (!cfg[0].autorange) {   /* fewer calls a process than a per-process p50 needs: the p50's interval is
         * null, the verdict inconclusive whatever the models do (docs/statistics.md) */
        long need = (long)rpx_stats_quantile_min_calls(0.5, 0.95);
        if (cfg[0].repeats / cfg[0].processes < need)
            return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                                "--repeats %ld over --processes %d is %ld call%s a process; the p50's interval "
                                "between processes needs at least %ld in every process: give --repeats %ld or "
                                "more, or fewer --processes",
                                cfg[0].repeats, cfg[0].processes, cfg[0].repeats / cfg[0].processes,
                                cfg[0].repeats / cfg[0].processes == 1 ? "" : "s", need, need * cfg[0].processes);
    }
    for (k = 0; k < 2; k++) {
        rpx_error gerr = {0};
        if (rpx_target_check_spec(models[k], &gerr) != 0)
            return rpx_cli_fail("compare", RPX_EXIT_USAGE, "%s", gerr.message);
    }
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
    /* the pairs by CPU: process i of each on CPU i mod n (the runner's --spread) */
    cfg[0].spread = co.paired_by_cpu;
    if (!co.paired_by_cpu && cfg[0].cpus)
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "--cpus picks the CPUs the pairs rotate "
                            "over; drop it or --unpaired");
    {
        rpx_error cerr = {0};
        if (rpx_runner_config_check(&cfg[0], RPX_SPELL_CLI, &cerr) != 0 &&
            strstr(cerr.message, "--cpus"))
            return rpx_cli_fail("compare", RPX_EXIT_USAGE, "%s", cerr.message);
    }
    cfg[1] = cfg[0];
    for (k = 0; k < 2; k++) {
        snprintf(path[k], sizeof path[k], "%s/%s.json", dir, k ? "new" : "base");
        cfg[k].model = models[k];
        cfg[k].output = path[k];
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
            int sig = res[k].stop_signal;
            rpx_cli_fail("compare", 0, "%s: %s (%s)", models[k],
                         res[k].status == RPX_RUNNER_INTERRUPTED ? "interrupted" : "did not complete",
                         res[k].error);
            rc = res[k].status == RPX_RUNNER_INTERRUPTED
                     ? (sig == SIGTERM ? RPX_EXIT_TERMINATED : RPX_EXIT_INTERRUPTED)
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
    if (json) {
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
    if (rc == RPX_EXIT_OK && gate &&
        strcmp(json_string_value(json_object_get(cmp, "verdict")), "slower") == 0)
        rc = RPX_EXIT_REGRESSION;
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
