/* two_reports.h — the comparison of two reports in memory in two steps
 * (src/compare/two_reports.c), for the callers that put a check of their own
 * between them: `rpxprof compare` reads each file and checks it, asks
 * whether the two did the same work (aggregate's check), then compares.
 * rpx_compare_json (rpxprof/comparison.h) is the two steps at once.
 * Internal to the library. */
#ifndef RPX_COMPARE_TWO_REPORTS_H
#define RPX_COMPARE_TWO_REPORTS_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/comparison.h"

/* One side of a comparison: its report (a reference held) and its samples,
 * process by process, as the validator read them. */
typedef struct rpx__cmp_side {
    json_t *r;
    const char *name;             /* the caller's, not copied */
    double *samples;
    size_t n, k;                  /* samples, processes */
    size_t *off, *cnt;            /* each process's samples (k entries) */
} rpx__cmp_side;

/* Checks `report` as rpx_report_check does and keeps what the comparison
 * reads. 0; RPX_EFORMAT (a report that does not hold up: err joins every
 * problem, each naming `name`), RPX_EINVAL (not complete) or RPX_ENOMEM. The
 * validator's notes go to `warnings`. Free with rpx__cmp_side_free. */
int rpx__cmp_side_load(const json_t *report, const char *name, rpx__cmp_side *s, json_t *warnings,
                       rpx_error *err);
void rpx__cmp_side_free(rpx__cmp_side *s);

/* The ratio NEW/BASE of two loaded sides: *out as rpx_compare_json's, its
 * "notes" the array `notes` (taken; NULL: []), its "warnings" `warnings`
 * (a reference taken) with the comparison's own appended. 0 or RPX_ENOMEM. */
/* 1 when the two reports carry the same session.id (one session: no drift between them) */
int rpx__cmp_one_session(const json_t *base, const json_t *new_report);
int rpx__cmp_sides(const rpx__cmp_side *b, const rpx__cmp_side *n, const rpx_compare_opts *opts,
                   json_t *notes, json_t *warnings, json_t **out, rpx_error *err);

#endif
