/* trace.c — `rpxprof trace REPORT.json -o FILE`: the Chrome trace-event JSON
 * of a saved run report that kept its timeline (src/report/trace.c), and the
 * trace file of `rpxprof run --trace` (the same writer and guard). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "common/output.h"
#include "common/user_file.h"
#include "report/trace.h"
#include "rpxprof/runner.h"

static const char usage[] =
    "Usage: rpxprof trace REPORT.json -o FILE.trace.json [--max-events N] [--force]\n"
    "Write the Chrome trace-event JSON of a run report that kept its timeline (rpxprof run\n"
    "--timeline or --trace FILE): open it in ui.perfetto.dev or chrome://tracing.\n"
    "\n"
    "  -o, --output FILE      the trace (folders are created; '-' = stdout); an existing\n"
    "                         file is replaced only when it is an rpxprof trace\n"
    "      --max-events N     at most N events (default 1000000, at least 16); a note\n"
    "                         event says what the bound left out\n"
    "      --force            replace an existing file that is not a trace (never the report)\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "Exit status: 0 written, 1 the report cannot be read or kept no timeline, 2 bad command\n"
    "line\n";

int rpx_cli_trace_open(const char *cmd, const char *option, const char *path, int force,
                       const char *const *protect, size_t n_protect, rpx_output **out)
{
    rpx_error err = {0};
    rpx_output_options oo = {RPX_OUTPUT_REPORT, RPX_TRACE_SCHEMA, force, protect, n_protect,
                             option};
    int rc = rpx_output_open(path, &oo, out, &err);
    if (rc != 0)
        return rpx_cli_fail(cmd, rc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s",
                            err.message);
    return 0;
}

int rpx_cli_trace_write(const char *cmd, rpx_output *out, const json_t *report,
                        const char *source, long max_events)
{
    rpx_error err = {0};
    size_t len = 0;
    /* the bound's option as the command spells it */
    char *text = rpx__trace_from_report(report, source,
                                        strcmp(cmd, "trace") == 0 ? "--max-events"
                                                                  : "--trace-max-events",
                                        max_events, &len, &err);
    int rc;
    if (!text) {
        rpx_output_discard(out);
        return rpx_cli_fail(cmd, RPX_EXIT_FAILURE, "%s", err.message);
    }
    rc = rpx_output_commit(out, text, len, &err);
    free(text);
    if (rc != 0) return rpx_cli_fail(cmd, RPX_EXIT_FAILURE, "%s", err.message);
    return 0;
}

int rpx_cli_trace(int argc, char **argv)
{
    enum { O_MAX = 256, O_FORCE };
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"max-events", required_argument, 0, O_MAX},
                                         {"force", no_argument, 0, O_FORCE},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *output = NULL, *path;
    long max_events = RPX_TRACE_DEFAULT_MAX_EVENTS;
    int c, force = 0, rc;
    rpx_output *out = NULL;
    rpx_error err = {0};
    json_error_t je;
    json_t *report;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case O_FORCE: force = 1; break;
        case O_MAX:
            if (rpx_cli_parse_long(optarg, &max_events) != 0 ||
                max_events < RPX_TRACE_MIN_MAX_EVENTS)
                return rpx_cli_fail("trace", RPX_EXIT_USAGE,
                                    "--max-events '%s': expected a whole number of at least %ld",
                                    optarg, RPX_TRACE_MIN_MAX_EVENTS);
            break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        default: return rpx_cli_bad_option("trace", c, argv);
        }
    }
    if (!output) return rpx_cli_fail("trace", RPX_EXIT_USAGE, "-o FILE.trace.json is required");
    if (optind != argc - 1)
        return rpx_cli_fail("trace", RPX_EXIT_USAGE, "give exactly one REPORT.json");
    path = argv[optind];
    /* the trace's place first; the report is never replaced */
    if ((rc = rpx_cli_trace_open("trace", "--output", output, force,
                                 (const char *const *)&argv[optind], 1, &out)) != 0)
        return rc;
    if (rpx__user_file_regular(path, NULL, &err) != 0) { /* a FIFO would block */
        rpx_output_discard(out);
        return rpx_cli_fail("trace", RPX_EXIT_FAILURE, "%s", err.message);
    }
    report = json_load_file(path, 0, &je);
    if (!report) {
        rpx_output_discard(out);
        return rpx_cli_fail("trace", RPX_EXIT_FAILURE,
                            "%s: line %d: %s; give a report of rpxprof run", path, je.line,
                            je.text);
    }
    rc = rpx_cli_trace_write("trace", out, report, path, max_events);
    json_decref(report);
    if (rc == 0 && strcmp(output, "-") != 0) printf("%s\n", output);
    return rc;
}
