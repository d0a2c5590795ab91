/* src/history/backend.h — the one interface both history backends implement
 * (sqlite.c: a file; postgres.c: libpq), and the rows a query returns. The
 * store (store.c) writes its SQL once, with $1, $2, ... parameters passed as
 * text (NULL: SQL NULL); each backend runs it in its own dialect. */
#ifndef RPXPROF_HISTORY_BACKEND_H
#define RPXPROF_HISTORY_BACKEND_H

#include <stddef.h>

#include "rpxprof/error.h"

/* The rows of a query, every value as text (NULL for SQL NULL). */
typedef struct rpx__hist_rows {
    size_t n, cols;
    char **v;                     /* n * cols values, row-major, malloc'ed */
} rpx__hist_rows;

static inline const char *rpx__hist_cell(const rpx__hist_rows *r, size_t row, size_t col)
{
    return r->v[row * r->cols + col];
}
void rpx__hist_rows_free(rpx__hist_rows *r);
/* append one row of `cols` values (copied); 0 or RPX_ENOMEM */
int rpx__hist_rows_add(rpx__hist_rows *r, size_t cols, const char *const *values);

typedef struct rpx__hist_backend {
    const char *name;             /* "sqlite" or "postgresql" */
    /* run one statement; rows (may be NULL) receives what it returns */
    int (*exec)(void *db, const char *sql, int n_params, const char *const *params,
                rpx__hist_rows *rows, rpx_error *err);
    /* start a write transaction that serialises writers (SQLite: BEGIN
     * IMMEDIATE; PostgreSQL: BEGIN and a transaction-scoped advisory lock) */
    int (*begin_write)(void *db, rpx_error *err);
    /* whether the table exists: 1, 0, or a negative code */
    int (*has_table)(void *db, const char *table, rpx_error *err);
    void (*close)(void *db);
} rpx__hist_backend;

/* Open a backend's connection: 0 and *db, or a negative code with err saying
 * why (naming `location`). create: make the database when missing. */
int rpx__hist_sqlite_open(const char *location, int create, int readonly, void **db,
                          const rpx__hist_backend **be, rpx_error *err);
int rpx__hist_pg_open(const char *location, int readonly, void **db,
                      const rpx__hist_backend **be, rpx_error *err);

#endif
