/* Unit tests for the history's store (include/rpxprof/history.h, src/history/)
 * on SQLite: series by benchmark x fingerprint with their sessions oldest
 * first, a report's series without its own session, the sessions of a
 * report's machine, idempotent records, sessions derived for reports without
 * one, pruning, a read-only open of nothing, and a schema newer than this
 * build. (PostgreSQL runs the same store in tests/cli/test_history.py.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/history.h"

static char dir[] = "/tmp/rpxhist-XXXXXX";
static char db[512];

/* a report of session `id` of benchmark `bench` on fingerprint `fp` of machine `cpu` */
static json_t *report(const char *id, const char *started, const char *bench, const char *fp,
                      const char *cpu, double p50)
{
    return json_pack("{s:s, s:s, s:s, s:{s:f}, s:{s:[f, f], s:s}, s:[{s:f}, {s:f}], s:i, s:[s],"
                     " s:{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:o}, s:{s:s}}}",
                     "schema", "rpxprof.profile/1", "status", "complete", "created_utc", started,
                     "latency", "p50_ms", p50, "latency_ci", "p50_ms", p50 * 0.99, p50 * 1.01,
                     "covers", "between-process", "latency_by_process", "p50_ms", p50, "p50_ms",
                     p50 * 1.001, "measured_calls", 100, "notes", "a warning", "session", "id", id,
                     "started", started, "ended", started, "covers", "this session",
                     "benchmark", "id", bench, "name", bench, "fingerprint", "digest", fp,
                     "machine", json_pack("{s:s}", "cpu_model", cpu), "version", "commit", id);
}

static int setup(void **st)
{
    (void)st;
    if (!mkdtemp(dir)) return -1;
    snprintf(db, sizeof db, "%s/h.db", dir);
    return 0;
}

static int teardown(void **st)
{
    char cmd[600];
    (void)st;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void record(rpx_history *h, json_t *r, int want_added)
{
    rpx_error err = {0};
    json_t *rec = NULL;
    assert_int_equal(rpx_history_record(h, r, "/x/r.json", &rec, &err), 0);
    assert_int_equal(json_is_true(json_object_get(rec, "added")), want_added);
    json_decref(rec);
}

static const char *sid(const json_t *series, size_t i)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(series, "sessions"), i), "id"));
}

static void test_series_and_lookups(void **st)
{
    rpx_error err = {0};
    rpx_history *h;
    json_t *r[5], *list, *one;
    (void)st;
    assert_int_equal(rpx_history_open(db, RPX_HISTORY_CREATE, &h, &err), 0);
    assert_int_equal(rpx_history_schema_version(h), RPX_HISTORY_SCHEMA_VERSION);
    /* recorded newest first: the series lists them oldest first */
    r[0] = report("s3", "2026-12-03T00:00:00Z", "b1", "f1", "A", 1.03);
    r[1] = report("s2", "2026-12-02T00:00:00Z", "b1", "f1", "A", 1.02);
    r[2] = report("s1", "2026-12-01T00:00:00Z", "b1", "f1", "A", 1.01);
    r[3] = report("t1", "2026-12-01T00:00:00Z", "b2", "f1", "A", 2.0);
    r[4] = report("u1", "2026-12-01T00:00:00Z", "b1", "f2", "B", 3.0);
    for (int i = 0; i < 5; i++) record(h, r[i], 1);
    record(h, r[1], 0); /* again: left as it is */

    assert_int_equal(rpx_history_series(h, NULL, &list, &err), 0);
    assert_int_equal(json_array_size(list), 3);
    json_decref(list);
    assert_int_equal(rpx_history_series(h, "b1", &list, &err), 0);
    assert_int_equal(json_array_size(list), 2);
    json_decref(list);

    assert_int_equal(rpx_history_series_of(h, r[0], &one, &err), 0);
    assert_non_null(one);
    assert_int_equal(json_array_size(json_object_get(one, "sessions")), 2); /* not s3 itself */
    assert_string_equal(sid(one, 0), "s1");
    assert_string_equal(sid(one, 1), "s2");
    const json_t *e = json_array_get(json_object_get(one, "sessions"), 1);
    assert_true(json_real_value(json_object_get(e, "p50_ms")) == 1.02);
    assert_string_equal(json_string_value(json_object_get(e, "commit")), "s2");
    assert_int_equal(json_array_size(json_object_get(e, "process_p50_ms")), 2);
    assert_string_equal(json_string_value(json_object_get(e, "report_path")), "/x/r.json");
    json_decref(one);

    assert_int_equal(rpx_history_machine_sessions(h, r[0], &list, &err), 0);
    assert_int_equal(json_array_size(list), 2); /* b1/f1 (s1, s2) and b2/f1, not machine B's */
    size_t i;
    json_array_foreach(list, i, one)
        assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                                one, "fingerprint"), "machine"), "cpu_model")), "A");
    json_decref(list);

    json_t *removed;
    assert_int_equal(rpx_history_prune(h, 1, 0, 0, 1, &removed, &err), 0);
    assert_int_equal(json_array_size(removed), 2); /* s1, s2: dry run */
    json_decref(removed);
    assert_int_equal(rpx_history_prune(h, 1, 0, 0, 0, &removed, &err), 0);
    assert_int_equal(json_array_size(removed), 2);
    json_decref(removed);
    assert_int_equal(rpx_history_series_of(h, r[2], &one, &err), 0);
    assert_int_equal(json_array_size(json_object_get(one, "sessions")), 1);
    assert_string_equal(sid(one, 0), "s3");
    json_decref(one);
    for (i = 0; i < 5; i++) json_decref(r[i]);
    rpx_history_close(h);
}

static void test_derived_session(void **st)
{
    rpx_error err = {0};
    rpx_history *h;
    json_t *r = report("x", "2026-12-05T10:00:00Z", "b9", "f9", "A", 5.0), *list;
    (void)st;
    json_object_del(r, "session"); /* written before sessions existed */
    json_object_set_new(r, "model_callable", json_string("mod:fn"));
    assert_int_equal(rpx_history_open(db, RPX_HISTORY_CREATE, &h, &err), 0);
    record(h, r, 1);
    record(h, r, 0);
    assert_int_equal(rpx_history_series(h, "mod:fn", &list, &err), 0);
    assert_int_equal(json_array_size(list), 1);
    assert_memory_equal(sid(json_array_get(list, 0), 0), "20261205T100000Z-", 17);
    json_decref(list);
    json_decref(r);
    rpx_history_close(h);
}

static void test_refusals(void **st)
{
    rpx_error err = {0};
    rpx_history *h = NULL;
    char missing[600], sql[100];
    (void)st;
    snprintf(missing, sizeof missing, "%s/none.db", dir);
    assert_int_equal(rpx_history_open(missing, RPX_HISTORY_READONLY, &h, &err), RPX_ENOTFOUND);
    assert_non_null(strstr(err.message, missing));
    assert_int_equal(access(missing, F_OK), -1); /* a read never creates */

    sqlite3 *s;
    assert_int_equal(sqlite3_open(db, &s), SQLITE_OK);
    snprintf(sql, sizeof sql, "INSERT INTO schema_version VALUES (%d, 'x')",
             RPX_HISTORY_SCHEMA_VERSION + 1);
    assert_int_equal(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
    assert_int_equal(rpx_history_open(db, 0, &h, &err), RPX_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "newer than this rpxprof knows"));
    assert_int_equal(rpx_history_open(db, RPX_HISTORY_READONLY, &h, &err), RPX_EUNSUPPORTED);
}

/* a schema-1 database (its text-ordered start) is migrated to 2: its sessions get
 * started_s, and "...:10Z" (an imported old report's) orders before "...:10.582Z" */
static void test_migration_orders_by_time(void **st)
{
    rpx_error err = {0};
    rpx_history *h;
    json_t *list;
    char v1[600];
    sqlite3 *s;
    (void)st;
    snprintf(v1, sizeof v1, "%s/v1.db", dir);
    assert_int_equal(sqlite3_open(v1, &s), SQLITE_OK);
    assert_int_equal(sqlite3_exec(s,
        "CREATE TABLE schema_version (version INTEGER NOT NULL, applied TEXT NOT NULL);"
        "INSERT INTO schema_version VALUES (1, 'x');"
        "CREATE TABLE series (id TEXT PRIMARY KEY, benchmark_id TEXT NOT NULL, benchmark_name TEXT,"
        " fingerprint_digest TEXT NOT NULL, benchmark TEXT NOT NULL, fingerprint TEXT NOT NULL);"
        "CREATE TABLE sessions (id TEXT NOT NULL, series_id TEXT NOT NULL REFERENCES series(id),"
        " started TEXT, ended TEXT, commit_id TEXT, status TEXT, p50_ms DOUBLE PRECISION,"
        " entry TEXT NOT NULL, detail TEXT NOT NULL, samples TEXT, report_path TEXT,"
        " recorded TEXT NOT NULL, PRIMARY KEY (series_id, id));"
        "INSERT INTO series VALUES ('b/f', 'b', 'b', 'f', '{\"id\":\"b\"}', '{\"digest\":\"f\"}');"
        "INSERT INTO sessions VALUES ('real', 'b/f', '2026-12-06T11:00:10.582Z', NULL, NULL,"
        " 'complete', 1, '{\"id\":\"real\"}', '{}', NULL, NULL, 'x');"
        "INSERT INTO sessions VALUES ('old', 'b/f', '2026-12-06T11:00:10Z', NULL, NULL,"
        " 'complete', 1, '{\"id\":\"old\"}', '{}', NULL, NULL, 'x');",
        NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
    assert_int_equal(rpx_history_open(v1, 0, &h, &err), 0);
    assert_int_equal(rpx_history_schema_version(h), 2);
    assert_int_equal(rpx_history_series(h, NULL, &list, &err), 0);
    assert_string_equal(sid(json_array_get(list, 0), 0), "old");
    assert_string_equal(sid(json_array_get(list, 0), 1), "real");
    json_decref(list);
    rpx_history_close(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_and_lookups),
        cmocka_unit_test(test_derived_session),
        cmocka_unit_test(test_migration_orders_by_time),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
