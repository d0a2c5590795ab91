/* status.c — owns a run's result as its callers read it: the one status map
 * (RPX_RUNNER_STATUS_MAP in include/rpxprof/runner.h) turned into the
 * report's status word and rpxprof's exit code (docs/errors.md), which the
 * runner, the CLI and the Python package all ask here, so none can disagree;
 * and freeing a result. */
#include <signal.h>

#include "rpxprof/runner.h"

const char *rpx_runner_status_word(rpx_runner_status st)
{
    switch (st) {
#define RPX__WORD(name, word, code) \
    case RPX_RUNNER_##name: return word;
        RPX_RUNNER_STATUS_MAP(RPX__WORD)
#undef RPX__WORD
    }
    return "failed";
}

int rpx_runner_exit_code(const rpx_runner_result *res)
{
    if (res->status == RPX_RUNNER_INTERRUPTED && res->stop_signal == SIGTERM)
        return RPX_EXIT_TERMINATED;
    switch (res->status) {
#define RPX__EXIT(name, word, code) \
    case RPX_RUNNER_##name: return code;
        RPX_RUNNER_STATUS_MAP(RPX__EXIT)
#undef RPX__EXIT
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
