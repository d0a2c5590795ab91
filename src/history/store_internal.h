/* src/history/store_internal.h — the opened history shared by the store's
 * rooms (store.c: open, schema, record; read.c: series, prune). */
#ifndef RPXPROF_HISTORY_STORE_INTERNAL_H
#define RPXPROF_HISTORY_STORE_INTERNAL_H

#include <stddef.h>

#include "rpxprof/history.h"
#include "history/backend.h"

struct rpx_history {
    const rpx__hist_backend *be;
    void *db;
    int readonly;
    int version;                  /* the schema's */
    size_t keep_samples;          /* rpx_history_keep_samples */
    char shown[512];              /* the location as messages show it (no password) */
};

int rpx__hist_exec(rpx_history *h, const char *sql, int n, const char *const *params,
                   rpx__hist_rows *rows, rpx_error *err);
/* a write transaction; rpx__hist_end commits it (rc 0) or rolls it back and returns rc */
int rpx__hist_begin(rpx_history *h, rpx_error *err);
int rpx__hist_end(rpx_history *h, int rc, rpx_error *err);
/* seconds since the epoch of 2026-12-06T09:47:00[.123]Z (the column started_s
 * that orders sessions: as text an imported report's "...:10Z" would sort
 * after "...:10.582Z"); -1 when unreadable */
double rpx__hist_epoch(const char *iso);
/* the ORDER BY of sessions by start for this database's schema */
const char *rpx__hist_by_start(const rpx_history *h, int newest_first);
/* now as 2026-12-06T09:47:00Z */
void rpx__hist_now(char *buf, size_t n);

#endif
