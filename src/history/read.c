/* src/history/read.c — reading the history back (include/rpxprof/history.h):
 * series (benchmark x fingerprint) with their sessions oldest first, the
 * series of a report, the sessions of a report's machine, and pruning by a
 * retention rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history/entry.h"
#include "history/store_internal.h"

#define SERIES_SQL                                                                      \
    "SELECT s.id, s.benchmark, s.fingerprint, x.entry, x.id FROM series s JOIN sessions x " \
    "ON x.series_id = s.id "
#define SERIES_ORDER " ORDER BY s.benchmark_name, s.benchmark_id, s.id, "

/* SERIES_SQL, where (may be ""), SERIES_ORDER and the sessions by start */
static int series_query(rpx_history *h, const char *where, int n, const char *const *p,
                        rpx__hist_rows *r, rpx_error *err)
{
    char sql[512];
    snprintf(sql, sizeof sql, "%s%s%s%s", SERIES_SQL, where, SERIES_ORDER,
             rpx__hist_by_start(h, 0));
    return rpx__hist_exec(h, sql, n, p, r, err);
}

static json_t *parse(const char *text)
{
    return text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
}

/* rows of SERIES_SQL (grouped by series, in order) as series objects;
 * skip_session: a session id left out (NULL: none) */
static int rows_to_series(const rpx_history *h, const rpx__hist_rows *r, const char *skip_session,
                          json_t **list, rpx_error *err)
{
    json_t *out = json_array(), *cur = NULL;
    const char *cur_id = NULL;
    for (size_t i = 0; i < r->n; i++) {
        const char *sid = rpx__hist_cell(r, i, 0);
        if (skip_session && rpx__hist_cell(r, i, 4) && !strcmp(rpx__hist_cell(r, i, 4), skip_session))
            continue;
        if (!cur_id || strcmp(cur_id, sid) != 0) {
            json_t *b = parse(rpx__hist_cell(r, i, 1)), *f = parse(rpx__hist_cell(r, i, 2));
            if (!b || !f) {
                json_decref(b), json_decref(f), json_decref(out);
                return rpx_error_set(err, RPX_EFORMAT,
                                     "history %s: series %s: its benchmark or fingerprint is "
                                     "not JSON", h->shown, sid);
            }
            cur = json_pack("{s:o, s:o, s:[]}", "benchmark", b, "fingerprint", f, "sessions");
            json_array_append_new(out, cur);
            cur_id = sid;
        }
        json_t *e = parse(rpx__hist_cell(r, i, 3));
        if (!e) {
            json_decref(out);
            return rpx_error_set(err, RPX_EFORMAT, "history %s: session %s: its entry is not JSON",
                                 h->shown, rpx__hist_cell(r, i, 4));
        }
        json_array_append_new(json_object_get(cur, "sessions"), e);
    }
    *list = out;
    return 0;
}

int rpx_history_series(rpx_history *h, const char *benchmark, json_t **series_list, rpx_error *err)
{
    if (!h || !series_list) return rpx_error_set(err, RPX_EINVAL, "rpx_history_series: no history");
    *series_list = NULL;
    rpx__hist_rows r = {0};
    const char *p[] = {benchmark};
    int rc = benchmark ? series_query(h, "WHERE s.benchmark_name = $1 OR s.benchmark_id = $1",
                                      1, p, &r, err)
                       : series_query(h, "", 0, NULL, &r, err);
    if (!rc) rc = rows_to_series(h, &r, NULL, series_list, err);
    rpx__hist_rows_free(&r);
    return rc;
}

int rpx_history_series_of(rpx_history *h, const json_t *report, json_t **series, rpx_error *err)
{
    if (!h || !series) return rpx_error_set(err, RPX_EINVAL, "rpx_history_series_of: no history");
    *series = NULL;
    json_t *s = rpx__hist_session_of(report);
    const char *bid = json_string_value(json_object_get(json_object_get(s, "benchmark"), "id"));
    const char *fd = json_string_value(json_object_get(json_object_get(s, "fingerprint"), "digest"));
    if (!bid || !fd) {
        json_decref(s);
        return rpx_error_set(err, RPX_EFORMAT, "the report's session has no benchmark id or "
                                               "fingerprint digest");
    }
    char id[80];
    snprintf(id, sizeof id, "%s/%s", bid, fd);
    rpx__hist_rows r = {0};
    const char *p[] = {id};
    json_t *list = NULL;
    int rc = series_query(h, "WHERE s.id = $1", 1, p, &r, err);
    if (!rc)
        rc = rows_to_series(h, &r, json_string_value(json_object_get(s, "id")), &list, err);
    if (!rc && json_array_size(list)) *series = json_incref(json_array_get(list, 0));
    json_decref(list);
    rpx__hist_rows_free(&r);
    json_decref(s);
    return rc;
}

int rpx_history_machine_sessions(rpx_history *h, const json_t *report, json_t **series_list,
                                 rpx_error *err)
{
    if (!h || !series_list)
        return rpx_error_set(err, RPX_EINVAL, "rpx_history_machine_sessions: no history");
    *series_list = NULL;
    json_t *s = rpx__hist_session_of(report);
    const json_t *machine = json_object_get(json_object_get(s, "fingerprint"), "machine");
    rpx__hist_rows r = {0};
    json_t *all = NULL;
    int rc = series_query(h, "", 0, NULL, &r, err);
    if (!rc) rc = rows_to_series(h, &r, json_string_value(json_object_get(s, "id")), &all, err);
    if (!rc) {
        json_t *out = json_array(), *one;
        size_t i;
        json_array_foreach(all, i, one) {
            const json_t *m = json_object_get(json_object_get(one, "fingerprint"), "machine");
            if (machine && m && json_equal(machine, m) && json_array_size(json_object_get(one, "sessions")))
                json_array_append(out, one);
        }
        *series_list = out;
    }
    json_decref(all);
    rpx__hist_rows_free(&r);
    json_decref(s);
    return rc;
}

int rpx_history_prune(rpx_history *h, unsigned keep_last, double older_than_days, double now_s,
                      int dry_run, json_t **removed, rpx_error *err)
{
    if (removed) *removed = NULL;
    if (!h) return rpx_error_set(err, RPX_EINVAL, "rpx_history_prune: no history");
    if (!dry_run && h->readonly)
        return rpx_error_set(err, RPX_EINVAL, "history %s: opened read-only", h->shown);
    int rc = dry_run ? 0 : rpx__hist_begin(h, err);
    if (rc < 0) return rc;
    rpx__hist_rows r = {0};
    char sql[384];
    snprintf(sql, sizeof sql, "SELECT x.id, s.benchmark_id, s.fingerprint_digest, x.started, "
             "s.benchmark_name, s.id FROM sessions x JOIN series s ON x.series_id = s.id "
             "ORDER BY s.id, %s", rpx__hist_by_start(h, 1));
    rc = rpx__hist_exec(h, sql, 0, NULL, &r, err);
    json_t *out = json_array();
    unsigned rank = 0;
    for (size_t i = 0; !rc && i < r.n; i++) {
        if (i == 0 || strcmp(rpx__hist_cell(&r, i, 5), rpx__hist_cell(&r, i - 1, 5)) != 0) rank = 0;
        rank++;
        const char *started = rpx__hist_cell(&r, i, 3);
        double t = rpx__hist_epoch(started);
        char why[160] = "";
        if (keep_last && rank > keep_last)
            snprintf(why, sizeof why, "beyond the newest %u of its series", keep_last);
        else if (older_than_days > 0 && t >= 0 && now_s - t > older_than_days * 86400.0)
            snprintf(why, sizeof why, "started %.1f days ago (more than %g)",
                     (now_s - t) / 86400.0, older_than_days);
        if (!why[0]) continue;
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s}", "session",
                                             rpx__hist_cell(&r, i, 0), "benchmark",
                                             rpx__hist_cell(&r, i, 1), "fingerprint",
                                             rpx__hist_cell(&r, i, 2), "benchmark_name",
                                             rpx__hist_cell(&r, i, 4), "started", started,
                                             "why", why));
        const char *p[] = {rpx__hist_cell(&r, i, 0), rpx__hist_cell(&r, i, 5)};
        if (!dry_run)
            rc = rpx__hist_exec(h, "DELETE FROM sessions WHERE id = $1 AND series_id = $2", 2, p,
                                NULL, err);
    }
    if (!rc && !dry_run)
        rc = rpx__hist_exec(h, "DELETE FROM series WHERE id NOT IN (SELECT series_id FROM "
                               "sessions)", 0, NULL, NULL, err);
    rpx__hist_rows_free(&r);
    if (!dry_run) rc = rpx__hist_end(h, rc, err);
    if (!rc && removed)
        *removed = out;
    else
        json_decref(out);
    return rc;
}
