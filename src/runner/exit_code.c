/* exit_code.c — owns the mapping of a run's outcome to rpxprof's exit codes
 * (include/rpxprof/runner.h, docs/cli.md): the CLI and the Python package
 * both ask it, so the two cannot disagree. */
#include <signal.h>

#include "rpxprof/runner.h"

int rpx_runner_exit_code(const rpx_runner_result *res)
{
    switch (res->status) {
    case RPX_RUNNER_COMPLETE: return RPX_EXIT_OK;
    case RPX_RUNNER_INTERRUPTED:
        return res->stop_signal == SIGTERM ? RPX_EXIT_TERMINATED : RPX_EXIT_INTERRUPTED;
    case RPX_RUNNER_CRASHED: return RPX_EXIT_CRASHED;
    case RPX_RUNNER_TIMED_OUT: return RPX_EXIT_TIMED_OUT;
    case RPX_RUNNER_KILLED: return RPX_EXIT_KILLED;
    case RPX_RUNNER_CALLS_FAILED: return RPX_EXIT_CALLS_FAILED;
    case RPX_RUNNER_OUTPUTS_DIFFER: return RPX_EXIT_OUTPUTS_DIFFER;
    }
    return RPX_EXIT_FAILURE;
}

void rpx_runner_result_free(rpx_runner_result *res)
{
    if (!res) return;
    json_decref(res->report);
    json_decref(res->warnings);
    res->report = res->warnings = NULL;
}
