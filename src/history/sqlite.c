/* src/history/sqlite.c — the history's SQLite backend (Debian's libsqlite3):
 * one file, write-ahead log, a busy timeout so that concurrent writers wait
 * for each other instead of failing, writes serialised by BEGIN IMMEDIATE.
 * A writer killed mid-transaction leaves the file as it was (the WAL's
 * uncommitted frames are ignored by the next reader). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "history/backend.h"

#define BUSY_TIMEOUT_MS 60000

void rpx__hist_rows_free(rpx__hist_rows *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n * r->cols; i++) free(r->v[i]);
    free(r->v);
    r->v = NULL;
    r->n = r->cols = 0;
}

int rpx__hist_rows_add(rpx__hist_rows *r, size_t cols, const char *const *values)
{
    if (r->n && r->cols != cols) return RPX_EINVAL;
    char **v = realloc(r->v, (r->n + 1) * cols * sizeof *v);
    if (!v) return RPX_ENOMEM;
    r->v = v;
    r->cols = cols;
    for (size_t c = 0; c < cols; c++) {
        char *s = NULL;
        if (values[c] && !(s = strdup(values[c]))) {
            for (size_t k = 0; k < c; k++) free(v[r->n * cols + k]);
            return RPX_ENOMEM;
        }
        v[r->n * cols + c] = s;
    }
    r->n++;
    return 0;
}

typedef struct lite {
    sqlite3 *db;
    char *location;
} lite;

/* $1 $2 ... (the store's spelling) as ?1 ?2 ... */
static char *dialect(const char *sql)
{
    char *out = strdup(sql);
    if (!out) return NULL;
    for (char *p = out; *p; p++)
        if (*p == '$' && p[1] >= '0' && p[1] <= '9') *p = '?';
    return out;
}

static int fail(lite *l, rpx_error *err, const char *what)
{
    int rc = sqlite3_errcode(l->db);
    if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
        return rpx_error_set(err, RPX_EFORMAT, "%s: not an rpxprof history (not an SQLite "
                             "database, or damaged): %s", l->location, sqlite3_errmsg(l->db));
    return rpx_error_set(err, rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? RPX_EIO
                               : rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT ? RPX_EFORMAT
                                                                              : RPX_EIO,
                         "history %s: %s: %s", l->location, what, sqlite3_errmsg(l->db));
}

static int lite_exec(void *db, const char *sql, int n_params, const char *const *params,
                     rpx__hist_rows *rows, rpx_error *err)
{
    lite *l = db;
    char *text = dialect(sql);
    if (!text) return rpx_error_set(err, RPX_ENOMEM, "history: out of memory");
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(l->db, text, -1, &st, NULL);
    free(text);
    if (rc != SQLITE_OK) return fail(l, err, "preparing a statement");
    for (int i = 0; i < n_params; i++) {
        rc = params[i] ? sqlite3_bind_text(st, i + 1, params[i], -1, SQLITE_TRANSIENT)
                       : sqlite3_bind_null(st, i + 1);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(st);
            return fail(l, err, "binding a value");
        }
    }
    int cols = sqlite3_column_count(st), out = 0;
    const char *vals[32];
    if (cols > 32) cols = 32;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!rows) continue;
        for (int c = 0; c < cols; c++) vals[c] = (const char *)sqlite3_column_text(st, c);
        if (rpx__hist_rows_add(rows, (size_t)cols, vals) < 0) {
            out = rpx_error_set(err, RPX_ENOMEM, "history: out of memory");
            break;
        }
    }
    if (!out && rc != SQLITE_DONE) out = fail(l, err, "running a statement");
    sqlite3_finalize(st);
    return out;
}

static int lite_begin_write(void *db, rpx_error *err)
{
    return lite_exec(db, "BEGIN IMMEDIATE", 0, NULL, NULL, err);
}

static int lite_has_table(void *db, const char *table, rpx_error *err)
{
    rpx__hist_rows r = {0};
    const char *p[] = {table};
    int rc = lite_exec(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = $1",
                       1, p, &r, err);
    if (rc < 0) return rc;
    rc = r.n > 0;
    rpx__hist_rows_free(&r);
    return rc;
}

static void lite_close(void *db)
{
    lite *l = db;
    if (!l) return;
    sqlite3_close(l->db);
    free(l->location);
    free(l);
}

static const rpx__hist_backend sqlite_backend = {"sqlite", lite_exec, lite_begin_write,
                                                 lite_has_table, lite_close};

/* Switching a file to the write-ahead log takes an exclusive lock, and SQLite
 * answers SQLITE_BUSY at once, without calling the busy handler, when another
 * process holds the file (two writers opening a new history at the same
 * moment): retry for as long as the busy timeout, sleeping a little between. */
static int to_wal(lite *l, rpx_error *err)
{
    for (int waited_ms = 0;; waited_ms += 5) {
        rpx__hist_rows r = {0};
        rpx_error quiet = {0};
        int rc = lite_exec(l, "PRAGMA journal_mode=WAL", 0, NULL, &r, &quiet);
        rpx__hist_rows_free(&r);
        int busy = sqlite3_errcode(l->db) == SQLITE_BUSY;
        if (rc == 0 || !busy || waited_ms >= BUSY_TIMEOUT_MS) {
            if (rc < 0 && err) *err = quiet;
            return rc;
        }
        sqlite3_sleep(5);
    }
}

int rpx__hist_sqlite_open(const char *location, int create, int readonly, void **db,
                          const rpx__hist_backend **be, rpx_error *err)
{
    struct stat sb;
    if (stat(location, &sb) != 0) {
        if (errno != ENOENT || !create || readonly)
            return rpx_error_set(err, errno == ENOENT ? RPX_ENOTFOUND : RPX_EIO,
                                 "history %s: %s%s", location, strerror(errno),
                                 errno == ENOENT ? " (record a run into it with --history, "
                                                   "or `rpxprof history add REPORT`)"
                                                 : "");
    } else if (S_ISDIR(sb.st_mode)) {
        return rpx_error_set(err, RPX_EINVAL,
                             "history %s: is a folder; give a file such as %s/history.db",
                             location, location);
    }
    lite *l = calloc(1, sizeof *l);
    if (!l || !(l->location = strdup(location))) {
        free(l);
        return rpx_error_set(err, RPX_ENOMEM, "history: out of memory");
    }
    int flags = readonly ? SQLITE_OPEN_READONLY
                         : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(location, &l->db, flags | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        int rc = rpx_error_set(err, RPX_EIO, "history %s: cannot open the SQLite database: %s",
                               location, l->db ? sqlite3_errmsg(l->db) : "out of memory");
        lite_close(l);
        return rc;
    }
    sqlite3_busy_timeout(l->db, BUSY_TIMEOUT_MS);
    sqlite3_extended_result_codes(l->db, 0);
    int rc = 0;
    if (!readonly) rc = to_wal(l, err);
    if (!rc && !readonly) rc = lite_exec(l, "PRAGMA synchronous=NORMAL", 0, NULL, NULL, err);
    if (!rc) rc = lite_exec(l, "PRAGMA foreign_keys=ON", 0, NULL, NULL, err);
    if (rc < 0) {
        lite_close(l);
        return rc;
    }
    *db = l;
    *be = &sqlite_backend;
    return 0;
}
