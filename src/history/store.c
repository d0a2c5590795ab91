/* src/history/store.c — the history's one interface (include/rpxprof/history.h):
 * opening a location on its backend (a file: SQLite; postgresql://: libpq),
 * the schema and its migrations, recording a report's session in one
 * transaction, and reading series back. The SQL is written once for both
 * backends (standard SQL, ON CONFLICT DO NOTHING, $N parameters as text). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpxprof/history.h"
#include "history/backend.h"
#include "history/entry.h"
#include "history/store_internal.h"

/* Migration N brings the schema from version N-1 to N; each runs in the
 * transaction that records the new version. Append only. */
static const char *const migration_1[] = {
    "CREATE TABLE series ("
    " id TEXT PRIMARY KEY,"                    /* benchmark id '/' fingerprint digest */
    " benchmark_id TEXT NOT NULL,"
    " benchmark_name TEXT,"
    " fingerprint_digest TEXT NOT NULL,"
    " benchmark TEXT NOT NULL,"                /* session.benchmark as JSON */
    " fingerprint TEXT NOT NULL)",             /* session.fingerprint as JSON */
    "CREATE TABLE sessions ("                  /* one row per session and series: the */
    " id TEXT NOT NULL,"                       /* session.id (both sides of compare --run */
    " series_id TEXT NOT NULL REFERENCES series(id)," /* share one session) */
    " started TEXT,"
    " ended TEXT,"
    " commit_id TEXT,"
    " status TEXT,"
    " p50_ms DOUBLE PRECISION,"
    " entry TEXT NOT NULL,"                    /* the series' session entry as JSON */
    " detail TEXT NOT NULL,"                   /* per-process statistics, intervals, variance,"
                                                  conditions as JSON */
    " samples TEXT,"                           /* a bounded share of the samples, or NULL */
    " report_path TEXT,"
    " recorded TEXT NOT NULL,"
    " PRIMARY KEY (series_id, id))",
    "CREATE INDEX sessions_by_series ON sessions (series_id, started, id)",
    NULL};
/* 2: sessions ordered by a numeric start (started_s, filled for the rows
 * already there by fill_started_s) */
static const char *const migration_2[] = {
    "ALTER TABLE sessions ADD COLUMN started_s DOUBLE PRECISION",
    "CREATE INDEX sessions_by_start ON sessions (series_id, started_s, id)",
    NULL};
static const char *const *const migrations[] = {NULL, migration_1, migration_2};
_Static_assert(sizeof migrations / sizeof migrations[0] == RPX_HISTORY_SCHEMA_VERSION + 1,
               "one migration per schema version");

int rpx__hist_exec(rpx_history *h, const char *sql, int n, const char *const *params,
                   rpx__hist_rows *rows, rpx_error *err)
{
    return h->be->exec(h->db, sql, n, params, rows, err);
}

int rpx__hist_begin(rpx_history *h, rpx_error *err)
{
    return h->be->begin_write(h->db, err);
}

int rpx__hist_end(rpx_history *h, int rc, rpx_error *err)
{
    rpx_error ignored;
    if (rc < 0) {
        h->be->exec(h->db, "ROLLBACK", 0, NULL, NULL, &ignored);
        return rc;
    }
    return h->be->exec(h->db, "COMMIT", 0, NULL, NULL, err);
}

double rpx__hist_epoch(const char *iso)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!rest) return -1;
    double t = (double)timegm(&tm);
    if (*rest == '.') t += strtod(rest, NULL);
    return t;
}

const char *rpx__hist_by_start(const rpx_history *h, int newest_first)
{
    if (h->version < 2)
        return newest_first ? "COALESCE(x.started, '') DESC, x.id DESC" : "COALESCE(x.started, ''), x.id";
    return newest_first ? "COALESCE(x.started_s, -1) DESC, x.id DESC" : "COALESCE(x.started_s, -1), x.id";
}

static void epoch_text(const char *iso, char *buf, size_t n)
{
    double t = rpx__hist_epoch(iso);
    if (t >= 0) snprintf(buf, n, "%.17g", t);
    else buf[0] = 0;
}

/* migration 2's data: started_s of every session already recorded */
static int fill_started_s(rpx_history *h, rpx_error *err)
{
    rpx__hist_rows r = {0};
    int rc = rpx__hist_exec(h, "SELECT id, series_id, started FROM sessions", 0, NULL, &r, err);
    for (size_t i = 0; !rc && i < r.n; i++) {
        char t[40];
        epoch_text(rpx__hist_cell(&r, i, 2), t, sizeof t);
        const char *p[] = {t[0] ? t : NULL, rpx__hist_cell(&r, i, 0), rpx__hist_cell(&r, i, 1)};
        rc = rpx__hist_exec(h, "UPDATE sessions SET started_s = $1 WHERE id = $2 AND series_id = $3",
                            3, p, NULL, err);
    }
    rpx__hist_rows_free(&r);
    return rc;
}

void rpx__hist_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int read_version(rpx_history *h, int *version, rpx_error *err)
{
    *version = 0;
    int has = h->be->has_table(h->db, "schema_version", err);
    if (has <= 0) return has;
    rpx__hist_rows r = {0};
    int rc = rpx__hist_exec(h, "SELECT MAX(version) FROM schema_version", 0, NULL, &r, err);
    if (!rc && r.n && rpx__hist_cell(&r, 0, 0)) *version = atoi(rpx__hist_cell(&r, 0, 0));
    rpx__hist_rows_free(&r);
    return rc;
}

static int too_new(const rpx_history *h, int version, rpx_error *err)
{
    return rpx_error_set(err, RPX_EUNSUPPORTED,
                         "history %s: its schema is version %d, newer than this rpxprof knows "
                         "(%d); use the rpxprof that wrote it, or a newer one",
                         h->shown, version, RPX_HISTORY_SCHEMA_VERSION);
}

/* bring the schema up to date, in one write transaction */
static int migrate(rpx_history *h, rpx_error *err)
{
    int version = 0, rc = rpx__hist_begin(h, err);
    if (rc < 0) return rc;
    rc = read_version(h, &version, err);
    if (!rc && version == 0)
        rc = rpx__hist_exec(h, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL,"
                               " applied TEXT NOT NULL)", 0, NULL, NULL, err);
    if (!rc && version > RPX_HISTORY_SCHEMA_VERSION) rc = too_new(h, version, err);
    for (int v = version + 1; !rc && v <= RPX_HISTORY_SCHEMA_VERSION; v++) {
        for (const char *const *s = migrations[v]; !rc && *s; s++)
            rc = rpx__hist_exec(h, *s, 0, NULL, NULL, err);
        if (!rc && v == 2) rc = fill_started_s(h, err);
        char text[16], now[32];
        snprintf(text, sizeof text, "%d", v);
        rpx__hist_now(now, sizeof now);
        const char *p[] = {text, now};
        if (!rc)
            rc = rpx__hist_exec(h, "INSERT INTO schema_version (version, applied) VALUES ($1, $2)",
                                2, p, NULL, err);
    }
    if (!rc) h->version = version > RPX_HISTORY_SCHEMA_VERSION ? version
                        : RPX_HISTORY_SCHEMA_VERSION;
    return rpx__hist_end(h, rc, err);
}

static int is_postgres(const char *location)
{
    return strncmp(location, "postgresql://", 13) == 0 || strncmp(location, "postgres://", 11) == 0;
}

int rpx_history_open(const char *location, int flags, rpx_history **out, rpx_error *err)
{
    if (!out) return rpx_error_set(err, RPX_EINVAL, "rpx_history_open: no handle to fill");
    *out = NULL;
    if (!location || !*location)
        return rpx_error_set(err, RPX_EINVAL,
                             "history: no location given; give a file (runs.db) or a "
                             "postgresql://USER@HOST/DB location");
    rpx_history *h = calloc(1, sizeof *h);
    if (!h) return rpx_error_set(err, RPX_ENOMEM, "history: out of memory");
    int readonly = (flags & RPX_HISTORY_READONLY) != 0, rc;
    if (is_postgres(location))
        rc = rpx__hist_pg_open(location, readonly, &h->db, &h->be, err);
    else
        rc = rpx__hist_sqlite_open(location, (flags & RPX_HISTORY_CREATE) != 0, readonly, &h->db,
                                   &h->be, err);
    if (rc < 0) {
        free(h);
        return rc;
    }
    h->readonly = readonly;
    snprintf(h->shown, sizeof h->shown, "%s", location);
    if (is_postgres(location)) { /* never show a password */
        char *at = strchr(h->shown, '@'), *auth = strstr(h->shown, "://") + 3;
        char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
        if (colon) memmove(colon, at, strlen(at) + 1);
    }
    if (readonly) {
        rc = read_version(h, &h->version, err);
        if (!rc && h->version == 0)
            rc = rpx_error_set(err, RPX_ENOTFOUND,
                               "history %s: holds no rpxprof history (no schema_version table); "
                               "record a run into it with --history first", h->shown);
        if (!rc && h->version > RPX_HISTORY_SCHEMA_VERSION) rc = too_new(h, h->version, err);
    } else {
        rc = migrate(h, err);
    }
    if (rc < 0) {
        rpx_history_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

void rpx_history_close(rpx_history *h)
{
    if (!h) return;
    if (h->be) h->be->close(h->db);
    free(h);
}

int rpx_history_schema_version(const rpx_history *h)
{
    return h ? h->version : 0;
}

void rpx_history_keep_samples(rpx_history *h, size_t max)
{
    if (h) h->keep_samples = max;
}

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
}

/* a derived session (an old report's, or a report imported without its session
 * block) is already there when the series holds a session with the same
 * per-process p50s whose time holds the derived start (created_utc, whole
 * seconds: the same second as its start, or between its start and its end,
 * when the report was written): *added 0 */
static int derived_present(rpx_history *h, const char *series_id, const json_t *entry, int *added,
                           rpx_error *err)
{
    double t = rpx__hist_epoch(json_string_value(json_object_get(entry, "started")));
    const json_t *p50s = json_object_get(entry, "process_p50_ms");
    rpx__hist_rows r = {0};
    const char *p[] = {series_id};
    if (t < 0 || !json_array_size(p50s)) return 0;
    int rc = rpx__hist_exec(h, "SELECT started, ended, entry FROM sessions WHERE series_id = $1", 1, p,
                            &r, err);
    for (size_t i = 0; !rc && *added && i < r.n; i++) {
        double u = rpx__hist_epoch(rpx__hist_cell(&r, i, 0));
        double v = rpx__hist_epoch(rpx__hist_cell(&r, i, 1));
        if (u < 0 || (floor(u) != floor(t) && !(v >= u && t >= floor(u) && t <= ceil(v) + 1)))
            continue;
        json_t *e = rpx__hist_cell(&r, i, 2) ? json_loads(rpx__hist_cell(&r, i, 2), 0, NULL) : NULL;
        if (e && json_equal(json_object_get(e, "process_p50_ms"), p50s)) *added = 0;
        json_decref(e);
    }
    rpx__hist_rows_free(&r);
    return rc;
}

int rpx_history_record(rpx_history *h, const json_t *report, const char *report_path,
                       json_t **recorded, rpx_error *err)
{
    if (recorded) *recorded = NULL;
    if (!h || !json_is_object(report))
        return rpx_error_set(err, RPX_EINVAL, "rpx_history_record: no history or no report");
    if (h->readonly)
        return rpx_error_set(err, RPX_EINVAL, "history %s: opened read-only", h->shown);
    json_t *s = rpx__hist_session_of(report);
    const json_t *bench = json_object_get(s, "benchmark"), *fp = json_object_get(s, "fingerprint");
    const char *sid = json_string_value(json_object_get(s, "id"));
    const char *bid = json_string_value(json_object_get(bench, "id"));
    const char *fd = json_string_value(json_object_get(fp, "digest"));
    if (!sid || !bid || !fd) {
        json_decref(s);
        return rpx_error_set(err, RPX_EFORMAT,
                             "history %s: the report's session has no %s; record a report "
                             "written by rpxprof run", h->shown,
                             !sid ? "id" : !bid ? "benchmark.id" : "fingerprint.digest");
    }
    json_t *entry = rpx__hist_entry(report, s, report_path);
    json_t *detail = rpx__hist_detail(report);
    json_t *samples = rpx__hist_samples(report, h->keep_samples);
    char series_id[80], p50[40] = "", now[32];
    snprintf(series_id, sizeof series_id, "%s/%s", bid, fd);
    const json_t *pv = json_object_get(entry, "p50_ms");
    if (json_is_number(pv)) snprintf(p50, sizeof p50, "%.17g", json_number_value(pv));
    rpx__hist_now(now, sizeof now);
    char started_s[40];
    epoch_text(json_string_value(json_object_get(entry, "started")), started_s, sizeof started_s);
    char *btext = dump(bench), *ftext = dump(fp), *etext = dump(entry), *dtext = dump(detail);
    char *stext = samples ? dump(samples) : NULL;
    int rc = !btext || !ftext || !etext || !dtext || (samples && !stext)
                 ? rpx_error_set(err, RPX_ENOMEM, "history: out of memory")
                 : 0;
    int added = 0;
    if (!rc) rc = rpx__hist_begin(h, err);
    if (!rc) {
        const char *sp[] = {series_id, bid, json_string_value(json_object_get(bench, "name")), fd,
                            btext, ftext};
        rc = rpx__hist_exec(h, "INSERT INTO series (id, benchmark_id, benchmark_name, "
                               "fingerprint_digest, benchmark, fingerprint) VALUES "
                               "($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
                            6, sp, NULL, err);
        rpx__hist_rows r = {0};
        const char *idp[] = {sid, series_id};
        if (!rc)
            rc = rpx__hist_exec(h, "SELECT id FROM sessions WHERE id = $1 AND series_id = $2", 2,
                                idp, &r, err);
        added = !rc && r.n == 0;
        rpx__hist_rows_free(&r);
        if (added && json_is_true(json_object_get(s, "derived")))
            rc = derived_present(h, series_id, entry, &added, err);
        const char *ep[] = {sid, series_id,
                            json_string_value(json_object_get(entry, "started")),
                            json_string_value(json_object_get(entry, "ended")),
                            json_string_value(json_object_get(entry, "commit")),
                            json_string_value(json_object_get(entry, "status")),
                            p50[0] ? p50 : NULL, etext, dtext, stext, report_path, now,
                            started_s[0] ? started_s : NULL};
        if (added)
            rc = rpx__hist_exec(h, "INSERT INTO sessions (id, series_id, started, ended, commit_id,"
                                   " status, p50_ms, entry, detail, samples, report_path, recorded,"
                                   " started_s) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"
                                   " $11, $12, $13) ON CONFLICT (series_id, id) DO NOTHING",
                                13, ep, NULL, err);
        rc = rpx__hist_end(h, rc, err);
    }
    if (!rc && recorded)
        *recorded = json_pack("{s:s, s:{s:s, s:s}, s:b}", "session", sid, "series", "benchmark",
                              bid, "fingerprint", fd, "added", added);
    free(btext), free(ftext), free(etext), free(dtext), free(stext);
    json_decref(entry), json_decref(detail), json_decref(samples), json_decref(s);
    return rc;
}
