/* session_internal.h — the session block's pieces (src/session/), for the
 * runner that writes it and the comparisons that read it. Internal to the
 * library; the public half is rpxprof/session.h. */
#ifndef RPX_SESSION_INTERNAL_H
#define RPX_SESSION_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

/* the words of the block's "covers" (one sentence) */
#define RPX_SESSION_COVERS                                                                  \
    "the report's intervals cover the variation between the processes of this session, not " \
    "session-to-session drift: compare sessions with the between-session rule "              \
    "(docs/statistics.md#what-an-interval-covers) or measure both sides in one session "     \
    "(compare --run)"

/* A new session id ("20261206T094700Z-3f9a1c2b": the UTC start and 8 random
 * hex digits) into id (at least 32 bytes) and its start time
 * ("2026-12-06T09:47:00.123Z") into started (at least 32 bytes). */
void rpx__session_new(char *id, char *started);
/* The time now as the block writes it ("2026-12-06T09:47:00.123Z"), 32 bytes. */
void rpx__session_now(char *out);

/* The first 16 hex digits of the SHA-256 of v's canonical JSON (sorted keys,
 * compact) into hex (17 bytes). 0, or -1 out of memory. */
int rpx__session_digest(const json_t *v, char hex[17]);

/* The session block of a report (a run's, built but for "session"): the
 * benchmark, the fingerprint (machine, software, work: all read from the
 * report, its system card and its target section) and `version` (taken; NULL:
 * every member null). id, started, ended: NULL writes null. derived: 1 for a
 * block made for a report written before sessions (its key "derived"). NULL
 * out of memory. */
json_t *rpx__session_block(const json_t *report, const char *id, const char *started,
                           const char *ended, json_t *version, int derived);

/* The version under test: {"model_sha256", "module_source_sha256", "commit",
 * "commit_source"}. model_file: the model's file (its SHA-256), module_file:
 * a Python module's source (its SHA-256), either NULL. commit: the option's
 * text (commit_source "option"); NULL: `git rev-parse HEAD` of the folder of
 * the module or model file when it is in a git checkout (commit_source "git"),
 * else null. Never prints; git's own output goes nowhere. NULL out of memory. */
json_t *rpx__session_version(const char *model_file, const char *module_file, const char *commit);

#endif
