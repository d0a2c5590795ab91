/* src/history/postgres.c — the history's PostgreSQL backend (Debian's libpq),
 * for a team that shares one history across machines and CI runners:
 * `--history postgresql://user@host/db`. The store's SQL runs as it is
 * ($1, $2 ... are libpq's own parameters, sent as text); writes take a
 * transaction-scoped advisory lock so that concurrent writers (and schema
 * migrations) are serialised as SQLite's BEGIN IMMEDIATE serialises them. */
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "history/backend.h"

/* pg_advisory_xact_lock's key: "rpxhist" */
#define WRITE_LOCK "7370091123"

typedef struct pg {
    PGconn *conn;
    char *location;               /* with any password removed */
} pg;

/* the location as messages show it: no password */
static char *redacted(const char *location)
{
    char *s = strdup(location);
    if (!s) return NULL;
    char *scheme = strstr(s, "://");
    if (!scheme) return s;
    char *auth = scheme + 3, *at = strchr(auth, '@'), *slash = strchr(auth, '/');
    if (!at || (slash && slash < at)) return s;
    char *colon = memchr(auth, ':', (size_t)(at - auth));
    if (colon) memmove(colon, at, strlen(at) + 1);
    return s;
}

static int pg_exec(void *db, const char *sql, int n_params, const char *const *params,
                   rpx__hist_rows *rows, rpx_error *err)
{
    pg *p = db;
    PGresult *res = PQexecParams(p->conn, sql, n_params, NULL, params, NULL, NULL, 0);
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        const char *m = res ? PQresultErrorMessage(res) : PQerrorMessage(p->conn);
        size_t len = strlen(m);
        while (len && (m[len - 1] == '\n' || m[len - 1] == ' ')) len--;
        int rc = rpx_error_set(err, RPX_EIO, "history %s: %.*s", p->location, (int)len, m);
        PQclear(res);
        return rc;
    }
    int out = 0;
    if (rows && st == PGRES_TUPLES_OK) {
        int n = PQntuples(res), cols = PQnfields(res);
        const char *vals[32];
        if (cols > 32) cols = 32;
        for (int i = 0; i < n && !out; i++) {
            for (int c = 0; c < cols; c++)
                vals[c] = PQgetisnull(res, i, c) ? NULL : PQgetvalue(res, i, c);
            if (rpx__hist_rows_add(rows, (size_t)cols, vals) < 0)
                out = rpx_error_set(err, RPX_ENOMEM, "history: out of memory");
        }
    }
    PQclear(res);
    return out;
}

static int pg_begin_write(void *db, rpx_error *err)
{
    int rc = pg_exec(db, "BEGIN", 0, NULL, NULL, err);
    if (!rc) rc = pg_exec(db, "SELECT pg_advisory_xact_lock(" WRITE_LOCK ")", 0, NULL, NULL, err);
    return rc;
}

static int pg_has_table(void *db, const char *table, rpx_error *err)
{
    rpx__hist_rows r = {0};
    const char *par[] = {table};
    int rc = pg_exec(db, "SELECT to_regclass($1) IS NOT NULL", 1, par, &r, err);
    if (rc < 0) return rc;
    rc = r.n > 0 && rpx__hist_cell(&r, 0, 0) && rpx__hist_cell(&r, 0, 0)[0] == 't';
    rpx__hist_rows_free(&r);
    return rc;
}

static void pg_close(void *db)
{
    pg *p = db;
    if (!p) return;
    PQfinish(p->conn);
    free(p->location);
    free(p);
}

static const rpx__hist_backend pg_backend = {"postgresql", pg_exec, pg_begin_write, pg_has_table,
                                             pg_close};

int rpx__hist_pg_open(const char *location, int readonly, void **db,
                      const rpx__hist_backend **be, rpx_error *err)
{
    pg *p = calloc(1, sizeof *p);
    if (!p || !(p->location = redacted(location))) {
        free(p);
        return rpx_error_set(err, RPX_ENOMEM, "history: out of memory");
    }
    p->conn = PQconnectdb(location);
    if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
        const char *m = p->conn ? PQerrorMessage(p->conn) : "out of memory";
        size_t len = strlen(m);
        while (len && (m[len - 1] == '\n' || m[len - 1] == ' ')) len--;
        int rc = rpx_error_set(err, RPX_EIO,
                               "history %s: cannot connect to the PostgreSQL server: %.*s",
                               p->location, (int)len, m);
        pg_close(p);
        return rc;
    }
    int rc = pg_exec(p, "SET client_min_messages = warning", 0, NULL, NULL, err);
    if (!rc && readonly)
        rc = pg_exec(p, "SET default_transaction_read_only = on", 0, NULL, NULL, err);
    if (rc < 0) {
        pg_close(p);
        return rc;
    }
    *db = p;
    *be = &pg_backend;
    return 0;
}
