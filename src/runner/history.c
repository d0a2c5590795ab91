/* runner/history.c — owns the last step of a run that asked for a history
 * (--history PATH, history=, a manifest's history, RPXPROF_HISTORY): the
 * built report's session recorded through the store (src/history/). The
 * report is already built (and written): a history that cannot be written
 * only says why, in res->history_error and a warning (the CLI exits 9). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/history.h"
#include "runner/runner_internal.h"

void rpx__runner_record_history(const rpx_runner_config *c, rpx_runner_result *res)
{
    const char *loc = c->history;
    if (!loc) loc = getenv("RPXPROF_HISTORY");
    if (c->no_history || !loc || !*loc || !res->report) return;
    rpx_error err = {0};
    rpx_history *h = NULL;
    char path[PATH_MAX];
    const char *report_path = NULL;
    if (res->written && !res->to_stdout && c->output && !c->output_temporary)
        report_path = realpath(c->output, path) ? path : c->output;
    int rc = rpx_history_open(loc, RPX_HISTORY_CREATE, &h, &err);
    if (rc == 0) rc = rpx_history_record(h, res->report, report_path, NULL, &err);
    rpx_history_close(h);
    if (rc == 0) {
        res->history_recorded = 1;
        return;
    }
    res->history_failed = 1;
    snprintf(res->history_error, sizeof res->history_error,
             "the session was not recorded: %.900s (the report itself is %s)", err.message,
             res->written ? "written" : "complete");
    json_array_append_new(res->warnings, json_string(res->history_error));
}
