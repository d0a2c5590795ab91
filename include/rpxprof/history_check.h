/* rpxprof/history_check.h — statistics across sessions (src/compare/history_check.c,
 * changepoints.c, session_noise.c; docs/statistics.md, "Across sessions"): the
 * between-session spread of a benchmark's sessions, change points over a series
 * of sessions, and the verdict for the newest session with its confirm rule.
 * Works on the series JSON that the history store produces (one benchmark on
 * one fingerprint, sessions oldest first); reads no store. Results are JSON
 * objects the caller frees with json_decref. Nothing prints. Deterministic
 * given opts.seed. */
#ifndef RPXPROF_HISTORY_CHECK_H
#define RPXPROF_HISTORY_CHECK_H

#include <jansson.h>

#include "rpxprof/api.h"
#include "rpxprof/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_history_check_opts {
    double threshold;      /* relative, 0.01: what counts as a change */
    double confidence;     /* 0.95: of every interval; a change point needs p < 1 - confidence */
    unsigned min_segment;  /* sessions; a change needs this many on each side (default 5) */
    unsigned confirm;      /* --confirm N: > 0, a head of one session is never "slower" (it
                              says how many more sessions of its commit to record); 0: its
                              interval decides. The head is every trailing session of the
                              newest commit, whatever N is */
    unsigned long long seed; /* of the permutations and resamples */
} rpx_history_check_opts;

/* threshold 0.01, confidence 0.95, min_segment 5, confirm 3, seed 1 */
RPX_API void rpx_history_check_defaults(rpx_history_check_opts *o);

/* The check of one series {"benchmark", "fingerprint", "sessions": [...]} (the
 * store's shape: each session with "id", "commit", "p50_ms" and, when measured,
 * "process_p50_ms"; a session whose "status" is not "complete" is left out, and
 * "index" still counts it). opts NULL: the defaults. *out:
 *   {"benchmark": .., "fingerprint_digest": ..|null, "sessions": m, "sessions_used": n,
 *    "between_session": {"model", "estimator", "sigma_between_log": x|null, "df": n|null, "how",
 *                        (the three rpx_between_session_spread's of this series)
 *                        "sigma_within_log": x|null, "sessions": m, "noise_source": "series"|"default",
 *                        "noise_sessions": n},
 *    "changes": [{"index": i (0-based: the first session after), "text" (sessions
 *                 counted from 1: "between session i and i+1 ..."), "before_commit", "after_commit",
 *                 "before_session", "after_session", "ratio", "ratio_ci": [lo, hi],
 *                 "p_value", "sessions_before", "sessions_after"}],
 *    "newest": {"session": id, "commit", "head_sessions": r, "baseline_sessions": n,
 *               "ratio", "ratio_ci": [lo, hi]|null,
 *               "verdict": "slower"|"faster"|"same"|"inconclusive",
 *               "decidable_change": x|null, "sessions_needed": n|null, "why": "..."}}
 * ("newest" is null for an empty series.) 0; RPX_EINVAL (a series that is not
 * of that shape: err names the field) or RPX_ENOMEM. */
RPX_API int rpx_history_check(const json_t *series, const rpx_history_check_opts *o, json_t **out,
                              rpx_error *err);

/* The between-session spread of the sessions of `series_list` (an array of
 * series objects, or one series object), for compare's rule on two reports
 * of different sessions (rpx_compare_opts.session_spread). *spread:
 *   {"source": "series"|"machine"|"none", "sigma_between_log": x|null, "sessions": m,
 *    "df": d|null, "how": "..."}
 * source "series" for one series, "machine" for several (the caller may set
 * it), "none" (sigma null) below 3 sessions in segments of 2 or more. */
RPX_API int rpx_between_session_spread(const json_t *series_list, json_t **spread, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
