/* compare_history.c — owns what `rpxprof compare --history PATH` (or
 * RPXPROF_HISTORY) takes from the history: the between-session spread of the
 * base report's series (rpx_history_series_of), else of every series on its
 * machine (rpx_history_machine_sessions), as rpx_between_session_spread gives
 * it (include/rpxprof/history_check.h), for rpx_compare_opts.session_spread.
 * Without a spread there (fewer sessions) compare's default allowance holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/history_cli.h"
#include "rpxprof/history.h"

#include "rpxprof/history_check.h"

/* the spread of a list of series; NULL when it states no sigma */
static json_t *spread_of(json_t *list, rpx_error *err)
{
    json_t *spread = NULL;
    if (!json_array_size(list) || rpx_between_session_spread(list, &spread, err) < 0) return NULL;
    if (!json_is_number(json_object_get(spread, "sigma_between_log"))) {
        json_decref(spread);
        return NULL;
    }
    return spread;
}

int rpx__cli_compare_spread(const char *given, const char *base_path, json_t **spread)
{
    *spread = NULL;
    const char *loc = rpx__cli_history_location(given);
    if (!loc) return 0;
    rpx_error err = {0};
    rpx_history *h = NULL;
    json_error_t je;
    json_t *base = json_load_file(base_path, 0, &je), *series = NULL, *list = NULL;
    if (!base) return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "%s: %s", base_path, je.text);
    int rc = rpx_history_open(loc, RPX_HISTORY_READONLY, &h, &err);
    if (!rc) rc = rpx_history_series_of(h, base, &series, &err);
    if (!rc && series) {
        list = json_pack("[O]", series);
        *spread = spread_of(list, &err);
        json_decref(list);
    }
    if (!rc && !*spread && (rc = rpx_history_machine_sessions(h, base, &list, &err)) == 0) {
        *spread = spread_of(list, &err);
        if (*spread) json_object_set_new(*spread, "source", json_string("machine"));
        json_decref(list);
    }
    rpx_history_close(h);
    json_decref(series);
    json_decref(base);
    if (rc < 0) return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "--history: %s", err.message);
    if (!*spread)
        rpx_cli_term_printf(stderr, "rpxprof compare: note: --history %s: fewer than 3 sessions "
                            "of BASE's series or of its machine hold a spread; the default "
                            "allowance is used\n", loc);
    return 0;
}
