/* report_check.h — the one validator of a run report (src/compare/report_check.c):
 * what `rpxprof aggregate`, `rpxprof compare` and the audits check in each
 * report, with the same messages. Internal to the library. */
#ifndef RPX_COMPARE_REPORT_CHECK_H
#define RPX_COMPARE_REPORT_CHECK_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/model.h"

/* Which tool wrote a report (batch/pipeline.c tells them apart by their keys):
 * the check reads the reference's percentiles at its 1 us rounding. */
typedef enum rpx_report_kind {
    RPX_REPORT_UNKNOWN = 0,
    RPX_REPORT_RPXPROF,           /* "schema": "rpxprof.profile/1" */
    RPX_REPORT_REF_CALLABLE,      /* the reference's examples/profile_callable.py */
    RPX_REPORT_REF_DEPTH          /* the reference's scripts/profile_depth_efficiency.py */
} rpx_report_kind;

/* The value the reference would store for a percentile of unrounded `v` ms:
 * round(v, 3) (Python's correctly rounded round-half-even on the exact
 * binary value). */
double rpx_pipeline_round3(double v);

/* What the checks read from one report; every pointer malloc'ed (free with
 * rpx__report_check_free). */
typedef struct rpx__report_checked {
    long measured;                /* measured_calls */
    double *samples;              /* latency_samples_ms, NULL when out of memory */
    size_t n;
    long processes;               /* 1 for a report older than `processes` */
    size_t *offsets, *counts;     /* each process's samples (processes entries);
                                     NULL when latency_by_process does not hold up */
    char *covers;                 /* latency_ci.covers, NULL when the report has none */
    double confidence;
    double ci[4][2];              /* p50, p95, p99, mean: [lo, hi], NaN when null */
    char *ci_reason[4];           /* why an interval is null, or NULL */
} rpx__report_checked;

/* The first type problem of the keys a report of rpxprof must have
 * (schemas/profile.json), or NULL. Only status is asked of a report that is
 * not complete. */
const char *rpx__report_shape_problem(const json_t *r);

/* The checks of a report whose shape holds (or a reference report normalised
 * by rpx_pipeline_normalize, `kind` saying which): status complete,
 * measured_calls against latency_samples_ms, latency's percentiles against the
 * samples (at the reference's 1 us rounding for its reports), processes,
 * latency_by_process and latency_ci against the samples, latency.p50_ms finite
 * and positive. Each problem is appended to `errors` (and `warnings`) as
 * "FILE: ...". Returns 1 when the report is complete (checked, errors or
 * not), 0 when it is not (one error says so), -1 out of memory. */
int rpx__report_check(const char *file, const json_t *r, rpx_report_kind kind, json_t *errors,
                      json_t *warnings, rpx__report_checked *out);
void rpx__report_check_free(rpx__report_checked *c);
/* Append a formatted message (at most 2047 bytes) to the JSON array `arr`: the
 * errors and warnings of aggregate and of the validator. */
void rpx__report_msg(json_t *arr, const char *f, ...) __attribute__((format(printf, 2, 3)));

/* The report's own warnings (system_card.warnings: competing load, a
 * governor, a throttled CPU...) appended to `arr` as "WHO: warning", each
 * once (a string `arr` already holds is not added again): a verdict carries
 * the warnings of what it was made from (issue 38). `also`, when not NULL, is
 * the other side's report: a warning both hold is added once as
 * "WHO_BOTH: warning" by the first call and skipped by the second. */
void rpx__report_own_warnings(json_t *arr, const char *who, const json_t *report,
                              const json_t *also, const char *who_both);

#endif
