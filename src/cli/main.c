/* main.c — owns the top-level command line: dispatch, --help, --version. */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "Usage: rpxprof COMMAND [OPTION]...\n"
    "Profile machine-learning prediction functions: latency, memory, and the\n"
    "hardware and software they ran on.\n"
    "\n"
    "Commands:\n"
    "  run       time a prediction function on fixed inputs and write a JSON report\n"
    "  inputs    make or show NPZ input files (inputs make, inputs show)\n"
    "  cost      what an ONNX model costs: parameters, MACs, FLOPs, memory traffic\n"
    "  system    describe this machine: the system card a run report embeds\n"
    "  gpus      list the GPU spec table (peaks, bandwidth, sources)\n"
    "  roofline  the compute/memory lower bound of a model on a GPU or the host CPU\n"
    "  batch     run every (task, model) job of a manifest, one report each\n"
    "  aggregate check batch reports and combine them: CSV, Markdown, validation, figure\n"
    "  plot      draw the latency distribution of reports as an SVG figure\n"
    "  report    one self-contained HTML page of runs, a comparison or a batch\n"
    "  compare   compare two reports (or two batch folders): ratios, intervals, verdict\n"
    "  sweep     measure a target over sizes, batches, threads or rates in one session\n"
    "  capacity  the largest request or frame rate that meets latency objectives (--slo)\n"
    "  trace     a run report as a Chrome trace (Perfetto, chrome://tracing)\n"
    "  history   every run kept: add, show, prune and check a history of sessions\n"
    "\n"
    "Options:\n"
    "  -h, --help     show this help and exit\n"
    "  -V, --version  show the version and exit\n"
    "\n"
    "Run 'rpxprof COMMAND --help' for a command's options.\n"
    "Exit status (docs/cli.md):\n"
    "  0    success\n"
    "  1    failure: a file, the inputs or the model (aggregate: validation FAIL)\n"
    "  2    bad command line\n"
    "  3    run: the model's process crashed (report written)\n"
    "       compare --fail-on-regression: the verdict is slower\n"
    "  4    run: --timeout or --call-timeout passed (report written)\n"
    "  5    run: the model's process was killed by SIGKILL from elsewhere, such as the\n"
    "       out-of-memory killer (report written)\n"
    "  6    run: every timed call failed, or --max-failures was reached (report written)\n"
    "  7    run: --check-outputs: a checked call's outputs differed (report written,\n"
    "       status outputs_differ)\n"
    "  8    run, batch, aggregate: the report written, but its --html or --trace could\n"
    "       not be (a full disk; the message names it)\n"
    "  9    run, batch, compare --run: the report written, but the session could not\n"
    "       be recorded in the history (--history, RPXPROF_HISTORY; the message says why)\n"
    "  130  interrupted by SIGINT (report written, status interrupted)\n"
    "  143  stopped by SIGTERM (report written, status interrupted)\n";

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (!cmd) {
        fputs(usage, stderr);
        return RPX_EXIT_USAGE;
    }
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return RPX_EXIT_OK;
    }
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("rpxprof %s\n", RPX_VERSION);
        return RPX_EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0) return rpx_cli_run(argc - 1, argv + 1);
    if (strcmp(cmd, "inputs") == 0) return rpx_cli_inputs(argc - 1, argv + 1);
    if (strcmp(cmd, "cost") == 0) return rpx_cli_cost(argc - 1, argv + 1);
    if (strcmp(cmd, "system") == 0) return rpx_cli_system(argc - 1, argv + 1);
    if (strcmp(cmd, "gpus") == 0) return rpx_cli_gpus(argc - 1, argv + 1);
    if (strcmp(cmd, "roofline") == 0) return rpx_cli_roofline(argc - 1, argv + 1);
    if (strcmp(cmd, "batch") == 0) return rpx_cli_batch(argc - 1, argv + 1);
    if (strcmp(cmd, "aggregate") == 0) return rpx_cli_aggregate(argc - 1, argv + 1);
    if (strcmp(cmd, "plot") == 0) return rpx_cli_plot(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0) return rpx_cli_report(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0) return rpx_cli_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "sweep") == 0) return rpx_cli_sweep(argc - 1, argv + 1);
    if (strcmp(cmd, "trace") == 0) return rpx_cli_trace(argc - 1, argv + 1);
    if (strcmp(cmd, "history") == 0) return rpx_cli_history(argc - 1, argv + 1);
    if (strcmp(cmd, "capacity") == 0) return rpx_cli_capacity(argc - 1, argv + 1);
    return rpx_cli_fail(NULL, RPX_EXIT_USAGE,
                        "unknown command '%s'; see 'rpxprof --help' for the commands", cmd);
}
