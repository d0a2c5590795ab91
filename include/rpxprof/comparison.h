/* rpxprof/comparison.h — two run reports compared in memory (src/compare/):
 * the one validator of a report, and the ratio NEW/BASE of p50, p95 and mean
 * with its interval, p-value and verdict (docs/statistics.md). Below the
 * runner: audits, `rpxprof compare` (files and folders, rpxprof/compare.h),
 * `compare --run` and the Python package all compare through it. Results are
 * JSON objects the caller frees with json_decref. Nothing prints. */
#ifndef RPXPROF_COMPARISON_H
#define RPXPROF_COMPARISON_H

#include <jansson.h>

#include "rpxprof/model.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_compare_opts {
    double threshold;             /* relative, 0.01 for 1 %; > 0 */
    double confidence;            /* 0.95 */
    int paired_by_cpu;            /* compare --run's paired design: process k of each report
                                     ran on the same CPU (placement.by_process), so the interval
                                     comes from the within-pair ratios (docs/statistics.md);
                                     when the reports do not pair, the independent design and
                                     a warning saying why. 0: independent */
    const json_t *session_spread; /* the between-session spread (rpx_between_session_spread,
                                     rpxprof/history_check.h) that a history gives for two
                                     reports of different sessions; NULL: none, and the
                                     default allowance measured on this machine kind */
    int same_session;             /* 1: the caller measured both sides interleaved in one
                                     session (compare --run, the audits): the within-session
                                     intervals decide. 0: separate runs, even back to back:
                                     the between-session rule (docs/statistics.md, "Two
                                     reports of different sessions") */
} rpx_compare_opts;

/* Verdict of an interval [lo, hi] of a ratio: "faster" when hi < 1 - t,
 * "slower" when lo > 1 + t, "same" when 1 - t <= lo and hi <= 1 + t,
 * "inconclusive" otherwise (and when lo or hi is NaN). */
RPX_API const char *rpx_compare_verdict(double lo, double hi, double threshold);

/* The one validator of a run report that aggregate and compare apply
 * (src/compare/report_check.c): the keys schemas/profile.json requires of it,
 * its status (complete), and its numbers against its own samples
 * (measured_calls, latency's percentiles, processes, latency_by_process,
 * latency_ci). Each problem is appended to `errors` as "FILE: ...", notes to
 * `warnings`. Returns the number of errors, or < 0 when out of memory. */
RPX_API int rpx_report_check(const char *file, const json_t *report, json_t *errors, json_t *warnings);

/* Two reports in memory, NEW against BASE, each known by a name that the
 * messages and the result's "base" and "new" carry (a file path, an audit's
 * arm). Each is checked as rpx_report_check checks it; a report that fails
 * is refused (RPX_EFORMAT; RPX_EINVAL for one that is not complete) with
 * every problem in err. Whether the two did the same work is not asked here
 * (rpx_compare_reports asks it with aggregate's check; an audit compares two
 * arms that differ on purpose). *out: {"base", "new", "threshold",
 * "confidence", "covers", "design", "<stat>_ratio", "<stat>_ratio_ci",
 * "<stat>_verdict" for p50, p95 and mean ("<stat>_ratio_pooled" in the
 * paired design), "verdict", "p_value", "p_value_method", "p95_p_value",
 * "mean_p_value", "by_cpu", "null_reasons", "notes" ([]), "base_stats",
 * "new_stats", "warnings", "same_session", and, for two reports of different
 * sessions (same_session 0), "between_session" and "within_session"} as
 * rpx_compare_reports documents them. */
RPX_API int rpx_compare_json(const json_t *base, const char *base_name, const json_t *new_report,
                             const char *new_name, const rpx_compare_opts *opts, json_t **out,
                             rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
