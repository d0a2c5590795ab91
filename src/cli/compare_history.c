/* compare_history.c — owns `rpxprof compare --history PATH` (or
 * RPXPROF_HISTORY): the two reports read, the history opened, and the spread
 * rpx_history_compare_spread takes from it (src/history/spread.c: BASE's
 * series, else its machine, without BASE's and NEW's sessions and NEW's
 * commit) handed to rpx_compare_opts.session_spread. Without a spread there
 * (fewer sessions) compare's default allowance holds, with a note. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/history_cli.h"
#include "rpxprof/history.h"

int rpx__cli_compare_spread(const char *given, const char *base_path, const char *new_path,
                            json_t **spread)
{
    *spread = NULL;
    const char *loc = rpx__cli_history_location(given);
    if (!loc) return 0;
    rpx_error err = {0};
    rpx_history *h = NULL;
    json_error_t je;
    json_t *base = json_load_file(base_path, 0, &je);
    if (!base) return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "%s: %s", base_path, je.text);
    json_t *nw = json_load_file(new_path, 0, &je);
    if (!nw) {
        json_decref(base);
        return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "%s: %s", new_path, je.text);
    }
    int rc = rpx_history_open(loc, RPX_HISTORY_READONLY, &h, &err);
    if (!rc) rc = rpx_history_compare_spread(h, base, nw, spread, &err);
    rpx_history_close(h);
    json_decref(nw);
    json_decref(base);
    if (rc < 0) return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "--history: %s", err.message);
    if (!*spread)
        rpx_cli_term_printf(stderr, "rpxprof compare: note: --history %s: fewer than 3 sessions "
                            "of BASE's series or of its machine hold a spread; the default "
                            "allowance is used\n", loc);
    return 0;
}
