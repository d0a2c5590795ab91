/* compare.c — `rpxprof compare BASE NEW [--threshold T] [--json] [--session-spread SIGMA]
 * [--history PATH] [--fail-on-regression]`: two reports or two folders of reports, compared
 * with intervals of the ratios NEW/BASE (docs/statistics.md). Parses, calls
 * src/batch/compare.c, prints. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/history_cli.h"
#include "rpxprof/compare.h"
#include "rpxprof/error.h"
#include "common/json.h"

static const char usage[] =
    "Usage: rpxprof compare BASE.json NEW.json [--threshold T] [--json] [--fail-on-regression]\n"
    "                       [--session-spread SIGMA]\n"
    "   or: rpxprof compare BASE_DIR NEW_DIR [--threshold T] [--json] [--fail-on-regression]\n"
    "Compare the latency of two reports of rpxprof run (or two folders of rpxprof\n"
    "batch, row by row over task and model): the ratio NEW/BASE of p50, p95 and the\n"
    "mean with its 95 % interval, a p-value and a verdict: faster or slower when the\n"
    "interval lies entirely beyond the threshold, same when it lies entirely within\n"
    "it, inconclusive otherwise (docs/statistics.md). Two reports of separate runs\n"
    "differ by the machine's drift between sessions too: the interval holds it (the\n"
    "default allowance, measured on a 2-vCPU KVM guest, decides changes from about\n"
    "12 %; record sessions in a history, or use --run, to decide smaller ones).\n"
    "\n"
    "Options:\n"
    "  -t, --threshold T       what counts as a change: 1% (default), or a fraction (0.01)\n"
    "  -j, --json              print JSON instead of a table (folders: the rows; the\n"
    "                          table is Markdown ready for a pull request)\n"
    "  --fail-on-regression    exit 3 when the verdict is slower (folders: any row)\n"
    "  --session-spread SIGMA  the machine's between-session spread, the standard\n"
    "                          deviation of log latency between sessions (0.02, or 2%),\n"
    "                          instead of the default allowance (e.g. rpxprof history\n"
    "                          check --json's between_session.sigma_between_log)\n"
    "  --html FILE             also write the comparison's HTML report (as 'rpxprof\n"
    "                          report' makes it): both distributions, the ratios\n"
    "  --history PATH          the history (an SQLite file or postgresql://...; default\n"
    "                          RPXPROF_HISTORY) whose sessions of BASE's series, or of\n"
    "                          its machine, give the between-session spread\n"
    "                          (docs/history.md, docs/statistics.md)\n"
    "  --run                   measure two targets interleaved: see\n"
    "                          'rpxprof compare --run --help'\n"
    "  -h, --help              show this help and exit\n"
    "Two reports of different sessions whose fingerprints differ in CPU model, core\n"
    "count, GPU model, device, precision or inputs get the verdict incomparable,\n"
    "with what differs (exit 0, never 3); a different kernel or rpxprof version is\n"
    "a note (docs/statistics.md#comparability).\n"
    "Exit status: 0 compared (or incomparable), 1 a report unreadable or not the\n"
    "same work (not complete; input shapes, unit, device, schedule),\n"
    "2 bad command line, 3 slower with --fail-on-regression.\n";

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int print_json(const json_t *r)
{
    char *s = rpx_json_dumps(r);
    if (!s) return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "out of memory");
    fputs(s, stdout);
    fputc('\n', stdout);
    free(s);
    return 0;
}

static void print_warnings(const json_t *r)
{
    size_t i;
    const json_t *w;
    json_array_foreach(json_object_get(r, "warnings"), i, w)
        fprintf(stderr, "rpxprof compare: warning: %s\n", json_string_value(w));
}

/* the command; *spread (--session-spread's) is the caller's to free */
static int compare_cli(int argc, char **argv, json_t **spread)
{
    static const struct option opts[] = {
        {"threshold", required_argument, NULL, 't'}, {"json", no_argument, NULL, 'j'},
        {"fail-on-regression", no_argument, NULL, 'F'}, {"run", no_argument, NULL, 'R'},
        {"html", required_argument, NULL, 'H'}, {"session-spread", required_argument, NULL, 'S'},
        {"history", required_argument, NULL, 'Y'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    rpx_compare_opts o = {0.01, 0.95};
    rpx_error err = {0};
    json_t *res = NULL;
    int c, json = 0, gate = 0, run = 0, dirs, rc = RPX_EXIT_OK;
    size_t i;
    char *text;
    const char *html = NULL, *history = NULL;
    json_t *hspread = NULL;       /* the between-session spread from --history */
    rpx_output *hout = NULL;
    for (c = 1; c < argc; c++)
        if (strcmp(argv[c], "--run") == 0) return rpx__cli_compare_run(argc, argv);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":" "t:jh", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (rpx_cli_parse_threshold(optarg, &o.threshold))
                return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                                    "--threshold '%s': give a percentage above 0 and below 100 (1%%) or a fraction (0.01)", optarg);
            break;
        case 'j': json = 1; break;
        case 'F': gate = 1; break;
        case 'R': run = 1; break;
        case 'H': html = optarg; break;
        case 'S': {
            char *end;
            double v = strtod(optarg, &end);
            if (end != optarg && *end == '%' && end[1] == '\0') v = log1p(v / 100), end++;
            if (end == optarg || *end || !(v >= 0) || !isfinite(v) || v > 1)
                return rpx_cli_fail("compare", RPX_EXIT_USAGE,
                                    "--session-spread '%s': give the standard deviation of log latency between "
                                    "sessions, 0 or more (0.02, or 2%%)", optarg);
            json_decref(*spread);
            *spread = json_pack("{ss sf sn ss}", "source", "option", "sigma_between_log", v, "df",
                               "how", "given with --session-spread");
            o.session_spread = *spread;
            break;
        }
        case 'Y': history = optarg; break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        default: return rpx_cli_bad_option("compare", c, argv);
        }
    }
    (void)run; /* --run was handed to compare_run.c above */
    if (argc - optind != 2)
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "give two reports (BASE.json NEW.json) or two folders (BASE_DIR NEW_DIR)");
    dirs = is_dir(argv[optind]);
    if (dirs != is_dir(argv[optind + 1]))
        return rpx_cli_fail("compare", RPX_EXIT_USAGE, "'%s' is a %s but '%s' is not; give two reports or two folders",
                            argv[dirs ? optind : optind + 1], "folder", argv[dirs ? optind + 1 : optind]);
    if (html && (rc = rpx__cli_html_open("compare", html, -1, (const char *const *)argv + optind, 2, &hout)) != 0)
        return rc;
    if (!dirs) {
        /* --session-spread, given, wins over the history's */
        if (!*spread && (rc = rpx__cli_compare_spread(history, argv[optind], argv[optind + 1], &hspread)) != 0) {
            rpx_output_discard(hout);
            return rc;
        }
        if (hspread) o.session_spread = hspread;
        rc = rpx_compare_reports(argv[optind], argv[optind + 1], &o, &res, &err);
        json_decref(hspread);
        if (rc) {
            rpx_output_discard(hout);
            return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "%s", err.message);
        }
        print_warnings(res);
        if (json) rc = print_json(res);
        else if ((text = rpx_compare_text(res))) { fputs(text, stdout); free(text); }
        else rc = rpx_cli_fail("compare", RPX_EXIT_FAILURE, "out of memory");
        if (!rc && hout && !strcmp(json_string_value(json_object_get(res, "verdict")), "incomparable")) {
            fprintf(stderr, "rpxprof compare: warning: --html %s: not written; the reports are "
                    "incomparable, so there is no ratio to draw\n", html);
            rpx_output_discard(hout);
            hout = NULL;
        }
        if (!rc && hout) {   /* the page, with both reports' distributions */
            if (rpx__cli_html_compare("compare", hout, res, argv[optind], argv[optind + 1]))
                rc = RPX_EXIT_FAILURE;
            hout = NULL;
        }
        rpx_output_discard(hout);
        if (!rc && gate && !strcmp(json_string_value(json_object_get(res, "verdict")), "slower")) rc = RPX_EXIT_REGRESSION;
        json_decref(res);
        return rc;
    }
    if (rpx_compare_dirs(argv[optind], argv[optind + 1], &o, &res, &err)) {
        rpx_output_discard(hout);
        return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "%s", err.message);
    }
    {
        const json_t *row;
        json_array_foreach(json_object_get(res, "rows"), i, row) {
            if (!strcmp(json_string_value(json_object_get(row, "status")), "refused"))
                fprintf(stderr, "rpxprof compare: error: %s/%s: %s\n", json_string_value(json_object_get(row, "task")),
                        json_string_value(json_object_get(row, "model")), json_string_value(json_object_get(row, "reason")));
            else
                print_warnings(row);
        }
    }
    if (json) rc = print_json(res);
    else if ((text = rpx_compare_markdown(res))) { fputs(text, stdout); free(text); }
    else rc = rpx_cli_fail("compare", RPX_EXIT_FAILURE, "out of memory");
    if (hout) {   /* the rows as a table */
        rpx_html_input in = {0};
        in.compare = res;
        if (rpx__cli_html("compare", hout, &in) && !rc) rc = RPX_EXIT_FAILURE;
    }
    if (!rc && json_integer_value(json_object_get(res, "refused"))) rc = RPX_EXIT_FAILURE;
    if (!rc && json_integer_value(json_object_get(res, "compared")) == 0)
        rc = rpx_cli_fail("compare", RPX_EXIT_FAILURE, "no (task, model) report is in both %s and %s", argv[optind], argv[optind + 1]);
    if (!rc && gate) {
        const json_t *row;
        json_array_foreach(json_object_get(res, "rows"), i, row)
            if (json_is_string(json_object_get(row, "verdict")) &&
                !strcmp(json_string_value(json_object_get(row, "verdict")), "slower"))
                rc = RPX_EXIT_REGRESSION;
    }
    json_decref(res);
    return rc;
}

int rpx_cli_compare(int argc, char **argv)
{
    json_t *spread = NULL;
    int rc = compare_cli(argc, argv, &spread);
    json_decref(spread);
    return rc;
}
