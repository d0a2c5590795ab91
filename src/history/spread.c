/* history/spread.c — owns what a comparison of two reports of different
 * sessions takes from a history (`rpxprof compare --history`, Python's
 * compare(history=), the pytest plugin's folder mode): the between-session
 * spread of BASE's series (rpx_history_series_of), else of every series on
 * its machine (rpx_history_machine_sessions), as rpx_between_session_spread
 * gives it. Left out of both: BASE's and NEW's sessions and, when NEW's
 * commit differs from BASE's, every session of NEW's commit — they may hold
 * the very change being tested, which must not widen its own allowance. */
#include <string.h>

#include "rpxprof/history.h"
#include "rpxprof/history_check.h"
#include "rpxprof/session.h"

/* the spread of a list of series; NULL when it states no sigma */
static json_t *spread_of(const json_t *list, rpx_error *err)
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

/* drop from each series of list the session new_id and, when given, every
 * session of the commit new_commit */
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

int rpx_history_compare_spread(rpx_history *h, const json_t *base, const json_t *new_report,
                               json_t **spread, rpx_error *err)
{
    json_t *series = NULL, *list = NULL, *bs, *ns;
    const char *bid, *bcommit, *nid, *ncommit;
    int rc;
    *spread = NULL;
    if (!h || !base) return rpx_error_set(err, RPX_EINVAL, "rpx_history_compare_spread: no history or no base");
    bs = session_of(base, &bid, &bcommit);
    ns = session_of(new_report, &nid, &ncommit);
    if (ncommit && bcommit && !strcmp(ncommit, bcommit)) ncommit = NULL;
    rc = rpx_history_series_of(h, base, &series, err);
    if (!rc && series && (list = json_pack("[O]", series)) != NULL) {
        left_out(list, nid, ncommit);
        *spread = spread_of(list, err);
    }
    json_decref(list);
    list = NULL;
    if (!rc && !*spread && (rc = rpx_history_machine_sessions(h, base, &list, err)) == 0) {
        left_out(list, nid, ncommit);
        *spread = spread_of(list, err);
        if (*spread) json_object_set_new(*spread, "source", json_string("machine"));
    }
    json_decref(list);
    json_decref(series);
    json_decref(bs);
    json_decref(ns);
    return rc < 0 ? rc : 0;
}
