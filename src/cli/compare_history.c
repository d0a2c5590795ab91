/* compare_history.c — owns what `rpxprof compare --history PATH` (or
 * RPXPROF_HISTORY) takes from the history: the between-session spread of the
 * base report's series (rpx_history_series_of), else of every series on its
 * machine (rpx_history_machine_sessions), as rpx_between_session_spread gives
 * it (include/rpxprof/history_check.h), for rpx_compare_opts.session_spread.
 * Without a spread there (fewer sessions) compare's default allowance holds.
 * Left out of both (left_out): BASE's and NEW's sessions and, when NEW's
 * commit differs from BASE's, every session of NEW's commit: they may hold
 * the very change being tested, which must not widen its own allowance. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/history_cli.h"
#include "rpxprof/history.h"
#include "rpxprof/session.h"

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

/* a report's session id and commit (NULL: none); the session is a new reference */
static json_t *session_of(const json_t *report, const char **id, const char **commit)
{
    json_t *s = NULL;
    *id = *commit = NULL;
    if (!report || rpx_session_of_report(report, &s, NULL) < 0) return NULL;
    *id = json_string_value(json_object_get(s, "id"));
    *commit = json_string_value(json_object_get(json_object_get(s, "version"), "commit"));
    return s;
}

/* drop from each series of list the sessions of NEW (id new_id) and, when
 * given, of the commit new_commit */
static void left_out(json_t *list, const char *new_id, const char *new_commit)
{
    size_t i, k;
    json_t *one;
    json_array_foreach(list, i, one) {
        json_t *ss = json_object_get(one, "sessions");
        for (k = json_array_size(ss); k-- > 0;) {
            const json_t *e = json_array_get(ss, k);
            const char *id = json_string_value(json_object_get(e, "id"));
            const char *c = json_string_value(json_object_get(e, "commit"));
            if ((new_id && id && !strcmp(id, new_id)) || (new_commit && c && !strcmp(c, new_commit)))
                json_array_remove(ss, k);
        }
    }
}

int rpx__cli_compare_spread(const char *given, const char *base_path, const char *new_path,
                            json_t **spread)
{
    *spread = NULL;
    const char *loc = rpx__cli_history_location(given);
    if (!loc) return 0;
    rpx_error err = {0};
    rpx_history *h = NULL;
    json_error_t je;
    json_t *base = json_load_file(base_path, 0, &je), *series = NULL, *list = NULL;
    if (!base) return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "%s: %s", base_path, je.text);
    json_t *nw = json_load_file(new_path, 0, &je);
    if (!nw) {
        json_decref(base);
        return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "%s: %s", new_path, je.text);
    }
    const char *bid, *bcommit, *nid, *ncommit;
    json_t *bs = session_of(base, &bid, &bcommit), *ns = session_of(nw, &nid, &ncommit);
    if (ncommit && bcommit && !strcmp(ncommit, bcommit)) ncommit = NULL;
    int rc = rpx_history_open(loc, RPX_HISTORY_READONLY, &h, &err);
    if (!rc) rc = rpx_history_series_of(h, base, &series, &err);
    if (!rc && series) {
        list = json_pack("[O]", series);
        left_out(list, nid, ncommit);
        *spread = spread_of(list, &err);
        json_decref(list);
    }
    if (!rc && !*spread && (rc = rpx_history_machine_sessions(h, base, &list, &err)) == 0) {
        left_out(list, nid, ncommit);
        *spread = spread_of(list, &err);
        if (*spread) json_object_set_new(*spread, "source", json_string("machine"));
        json_decref(list);
    }
    rpx_history_close(h);
    json_decref(series);
    json_decref(bs), json_decref(ns), json_decref(nw);
    json_decref(base);
    if (rc < 0) return rpx_cli_fail("compare", RPX_EXIT_FAILURE, "--history: %s", err.message);
    if (!*spread)
        rpx_cli_term_printf(stderr, "rpxprof compare: note: --history %s: fewer than 3 sessions "
                            "of BASE's series or of its machine hold a spread; the default "
                            "allowance is used\n", loc);
    return 0;
}
