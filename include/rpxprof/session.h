/* rpxprof/session.h — the session as a unit (issue 36 §1, docs/report.md#session).
 *
 * Every run report carries a "session" block: an id, when the session started
 * and ended, what its intervals cover, the benchmark's identity (what is
 * measured: target, kind, inputs digest, unit, the options that change the
 * work), a fingerprint of what makes two sessions comparable (the machine, the
 * software around the model, the work) and, beside it and not in it, the
 * version under test (the model file's SHA-256, a Python module's source
 * digest, the commit). Two reports of different sessions are compared only
 * when their fingerprints allow it: a different CPU model, core count, GPU
 * model, device, precision or inputs digest makes them incomparable; any other
 * difference (kernel, rpxprof's version, microcode, governor, ...) is a note. */
#ifndef RPXPROF_SESSION_H
#define RPXPROF_SESSION_H

#include <jansson.h>

#include "rpxprof/api.h"
#include "rpxprof/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The report's own "session" (a new reference), or, for a report written
 * before sessions existed, one derived from its system card and config: its
 * id from its start time (created_utc) and a digest of the report's content,
 * started and ended null where the report does not say, "derived": true.
 * 0, RPX_EINVAL (not a report object) or RPX_ENOMEM. */
RPX_API int rpx_session_of_report(const json_t *report, json_t **session, rpx_error *err);

/* Whether two sessions' measurements may be compared. *diffs (may be NULL):
 * a new array of {"field": "machine.cpu_model", "base": .., "new": ..,
 * "effect": "incomparable"|"note"}, one per difference of their fingerprints
 * (fields named as in the fingerprint: machine.*, software.*, work.*).
 * Returns 1 comparable (notes only), 0 incomparable, < 0 an error (not two
 * session objects, out of memory). */
RPX_API int rpx_session_comparable(const json_t *base_session, const json_t *new_session,
                                   json_t **diffs);

#ifdef __cplusplus
}
#endif
#endif
