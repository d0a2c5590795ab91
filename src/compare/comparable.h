/* comparable.h — whether two reports may be compared at all, before any
 * statistics (src/compare/comparable.c; docs/statistics.md#comparability).
 * Internal to the library. */
#ifndef RPX_COMPARE_COMPARABLE_H
#define RPX_COMPARE_COMPARABLE_H

#include <jansson.h>

#include "rpxprof/comparison.h"
#include "rpxprof/error.h"

/* The two reports' sessions (rpx_session_of_report) checked with
 * rpx_session_comparable. Comparable: 0 and *incomparable NULL; each note's
 * words appended to `notes` (may be NULL), the notes' differences in
 * *differences (may be NULL; a new array, NULL for one session). Incomparable: 0 and *incomparable
 * a comparison result whose verdict is "incomparable" (what differs in
 * "differences" and in words in "notes"), for the caller to return instead of
 * its statistics. Two reports of one session (the same session.id: compare
 * --run's sides, an audit's arms) were measured together on purpose: always
 * comparable. opts: the threshold and confidence the result repeats. < 0: out of memory (err says so). */
int rpx__cmp_comparable(const char *base_name, const json_t *base, const char *new_name,
                        const json_t *new_report, const rpx_compare_opts *opts,
                        json_t *notes, json_t **differences, json_t **incomparable,
                        rpx_error *err);

#endif
