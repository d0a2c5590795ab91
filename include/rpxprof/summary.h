/* rpxprof/summary.h — the few lines a person reads after a run: a profile
 * report (JSON) as the text `rpxprof run` prints on stderr and the Python
 * package's Report.summary() returns, so both print the same thing. Every
 * number follows one rule (rpx_format_3g). Nothing prints. */
#ifndef RPXPROF_SUMMARY_H
#define RPXPROF_SUMMARY_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number rule of every summary: three significant digits, in plain
 * decimals (no exponent) from 1e-9 up to 1e15 ("0.000100", "0.0191", "86.0",
 * "120", "12300"), shortest "%.3g" outside that range; "n/a" for NaN or an
 * infinity. The C locale's '.' whatever the process's locale. Writes at most
 * cap bytes (cap >= 32 holds every result); returns buf. */
RPX_API char *rpx_format_3g(char *buf, size_t cap, double x);
/* A count by the same rule with an SI prefix, as the summary's cost line:
 * "1.81 G" of 1814073344, "11.7 M", "950" (prefixes k, M, G, T, P). cap >= 40;
 * returns buf. */
RPX_API char *rpx_format_si(char *buf, size_t cap, double x);
/* The report's common fields as one flat row (Python's Report.to_row, a
 * DataFrame's row): name, status, device, precision, unit, calls, processes,
 * each of p50/p95/p99/mean as STAT_ms, STAT_ci_lo_ms, STAT_ci_hi_ms, min_ms,
 * ci_covers, peak_rss_mb, flops, macs, params, per roofline target (in key
 * order) bound_KEY_ms and achieved_KEY (the ideal bound), created_utc; a value
 * the report does not hold is null. A new object (NULL out of memory). */
RPX_API json_t *rpx_report_row(const json_t *report);

typedef struct rpx_summary_opts {
    long asked_processes;         /* the processes asked for: 0 none (one worker in the
                                     calling process), 1 one forked process, N */
    int python;                   /* word the advice for the Python package (processes=5)
                                     instead of the CLI (--processes 5) */
} rpx_summary_opts;

/* The summary of a "rpxprof.profile/1" report: the callable, calls and
 * processes; p50, p95, p99 and the mean with their 95 % intervals; the minimum;
 * outliers; why it varied; the inference peak RSS; the model cost, the
 * roofline's achieved fraction per target and the real-time verdicts when the
 * report has them. Lines end in '\n' and are indented as `rpxprof run` prints
 * them. NULL: out of memory (or `report` is not an object). Free with free(). */
RPX_API char *rpx_report_summary(const json_t *report, const rpx_summary_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
