/* rpxprof/compare.h — `rpxprof compare`: two profile reports, or two folders
 * of them (DIR/<task>/<model>.json), compared statistic by statistic with an
 * interval of the ratio NEW/BASE, a p-value and a verdict
 * (docs/statistics.md): the files and folders read here, the statistics by
 * rpx_compare_json (rpxprof/comparison.h). Results are JSON objects the caller
 * frees with json_decref; the text renderings are malloc'ed strings. Nothing
 * prints. */
#ifndef RPXPROF_COMPARE_H
#define RPXPROF_COMPARE_H

#include <jansson.h>

#include "rpxprof/comparison.h"
#include "rpxprof/model.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rpx_compare_opts and rpx_compare_verdict: rpxprof/comparison.h */

/* Two reports. *out: {"base", "new", "verdict", "threshold", "confidence",
 * "covers", "p50_ratio", "p50_ratio_ci", "p50_verdict", "p_value",
 * "p_value_method", "p95_...", "mean_...", "base_stats", "new_stats",
 * "null_reasons", "warnings", "design" ("paired_by_cpu" or "independent"),
 * "by_cpu" ([{cpu, base_processes, new_processes, base_p50_ms, new_p50_ms,
 * p50_ratio}] over the CPUs both reports pinned processes to, or null),
 * "same_session" (opts->same_session), and when that is false (two separate
 * runs): "covers" "between-session", every "<stat>_ratio_ci" and verdict
 * widened by the between-session spread, "between_session" {"source":
 * "series"|"machine"|"default", "sigma_between_log", "df", "how",
 * "decidable_change" (the smallest slowdown, relative, that these two
 * reports would call slower), "to_decide_smaller" [two ways]} and
 * "within_session" {"covers": the processes of one session each,
 * "<stat>_ratio_ci", "<stat>_verdict" as the two sessions alone give them}
 * (docs/statistics.md, "Two reports of different sessions")}. Returns RPX_EFORMAT for an unreadable report
 * and RPX_EINVAL for reports that cannot be compared (not complete, not the
 * same work): err names the file and the difference. */
RPX_API int rpx_compare_reports(const char *base_path, const char *new_path, const rpx_compare_opts *opts,
                        json_t **out, rpx_error *err);

/* Two folders of reports, row by row over (task, model) = (sub-folder, file
 * name without .json) of every DIR/<task>/<model>.json whose schema is
 * rpxprof.profile/1. *out: {"base", "new", "rows": [{"task", "model",
 * "status": "compared" | "refused", "reason", ...the fields of
 * rpx_compare_reports..., "p_value_holm"}], "only_in_base": ["task/model"],
 * "only_in_new": [...], "geomean_p50_ratio", "compared", "refused"}.
 * p-values are Holm-corrected over the compared rows. RPX_EIO when a folder
 * cannot be read. */
RPX_API int rpx_compare_dirs(const char *base_dir, const char *new_dir, const rpx_compare_opts *opts, json_t **out,
                     rpx_error *err);

/* A table for people of a rpx_compare_reports result (NULL: out of memory). */
RPX_API char *rpx_compare_text(const json_t *result);
/* A Markdown table of a rpx_compare_dirs result, ready for a PR. */
RPX_API char *rpx_compare_markdown(const json_t *result);

#ifdef __cplusplus
}
#endif
#endif
