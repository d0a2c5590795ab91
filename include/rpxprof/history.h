/* rpxprof/history.h — every run kept: a history of sessions (docs/history.md).
 *
 *   rpx_history *h;
 *   if (rpx_history_open("runs.db", RPX_HISTORY_CREATE, &h, &err) == 0) {
 *       rpx_history_record(h, report, "r.json", NULL, &err);
 *       rpx_history_series(h, NULL, &list, &err);
 *       rpx_history_close(h);
 *   }
 *
 * One interface, two backends: a file path is an SQLite database (WAL, one
 * file, a busy timeout so that writers wait for each other); a location that
 * starts with postgresql:// or postgres:// is a PostgreSQL database reached
 * by libpq. Both hold the same schema, versioned by a schema_version table
 * and brought up to date by migrations when opened for writing; a schema
 * newer than this build knows is refused. Every record is one transaction:
 * two writers lose nothing, and a writer killed in the middle leaves the
 * database as it was before its record.
 *
 * A series is a benchmark (session.benchmark.id) on a fingerprint
 * (session.fingerprint.digest); its JSON:
 *   {"benchmark": {...}, "fingerprint": {...},
 *    "sessions": [{"id", "started", "ended", "commit", "version", "status",
 *                  "p50_ms", "p50_ci_ms": [lo, hi]|null, "covers", "processes",
 *                  "process_p50_ms": [...], "calls", "warnings": [...],
 *                  "report_path"}, ...]}          sessions oldest first */
#ifndef RPXPROF_HISTORY_H
#define RPXPROF_HISTORY_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/error.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rpx_history_open's flags */
#define RPX_HISTORY_CREATE 1      /* create the database (and its schema) when missing */
#define RPX_HISTORY_READONLY 2    /* never write (SQLite: opened read-only) */

/* The schema version this build writes and reads (schema_version.version). */
#define RPX_HISTORY_SCHEMA_VERSION 2

typedef struct rpx_history rpx_history;

/* location: a file path (SQLite) or postgresql://... / postgres://...
 * 0 and *h, or a negative code: err names the location and why. */
RPX_API int rpx_history_open(const char *location, int flags, rpx_history **h, rpx_error *err);
RPX_API void rpx_history_close(rpx_history *h);
/* Record the session of a report (its "session" block, or one derived from
 * an older report). report_path: where the report is kept (NULL: nowhere).
 * A session already recorded is left as it is (idempotent).
 * recorded (may be NULL): {"session": id, "series": {"benchmark": id,
 * "fingerprint": digest}, "added": true|false} (a new reference). */
RPX_API int rpx_history_record(rpx_history *h, const json_t *report, const char *report_path,
                               json_t **recorded, rpx_error *err);
/* Every series as an array of series objects; benchmark NULL: all, else the
 * series whose benchmark name or id equals it. */
RPX_API int rpx_history_series(rpx_history *h, const char *benchmark, json_t **series_list,
                               rpx_error *err);
/* The series the report's session belongs to (the same benchmark id and
 * fingerprint digest), without the report's own session; *series NULL when
 * there is none (or it has no other session). */
RPX_API int rpx_history_series_of(rpx_history *h, const json_t *report, json_t **series,
                                  rpx_error *err);
/* Every series on the report's machine (fingerprint.machine equal), without
 * the report's own session: the machine's record of session drift. */
RPX_API int rpx_history_machine_sessions(rpx_history *h, const json_t *report,
                                         json_t **series_list, rpx_error *err);
/* What a comparison of BASE and NEW, reports of different sessions, takes
 * from the history (src/history/spread.c): the between-session spread
 * (rpx_between_session_spread, rpxprof/history_check.h) of BASE's series,
 * else of every series on its machine ("source": "machine"), leaving out
 * BASE's and NEW's sessions and, when NEW's commit differs from BASE's, every
 * session of NEW's commit. *spread NULL when neither holds one (too few
 * sessions): compare's default allowance holds. new_report may be NULL. */
RPX_API int rpx_history_compare_spread(rpx_history *h, const json_t *base, const json_t *new_report,
                                       json_t **spread, rpx_error *err);
/* Remove sessions by a retention rule: per series keep the newest keep_last
 * (0: no such rule) and/or remove those started more than older_than_days
 * days before now_epoch_s (<= 0: no such rule); a session goes when any rule
 * says so. dry_run: remove nothing. removed: array of {"session", "benchmark",
 * "fingerprint", "started", "why"} (a new reference). */
RPX_API int rpx_history_prune(rpx_history *h, unsigned keep_last, double older_than_days,
                              double now_epoch_s, int dry_run, json_t **removed,
                              rpx_error *err);
/* Keep at most max of a recorded report's samples (evenly spaced over the
 * run) with its session; 0 (the default): none. */
RPX_API void rpx_history_keep_samples(rpx_history *h, size_t max);
/* The schema version of the opened database. */
RPX_API int rpx_history_schema_version(const rpx_history *h);

#ifdef __cplusplus
}
#endif
#endif
