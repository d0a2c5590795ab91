/* variance.h — why a run varied (variance.c): the report's `variance`
 * section, computed from the report's own JSON and nothing else, so that the
 * runner, `rpxprof compare`/`aggregate` and the HTML report give the same
 * answer for the same report. Method and rule: docs/statistics.md, "What made
 * this run vary". Library code: nothing printed. */
#ifndef RPX_REPORT_VARIANCE_H
#define RPX_REPORT_VARIANCE_H

#include <jansson.h>

/* A factor is named ("explains most of the spread") when it was tested, its
 * Holm-adjusted p-value is below RPX_VARIANCE_ALPHA, its share of the
 * between-process spread is at least RPX_VARIANCE_MIN_SHARE and its effect
 * (the ratio) is at least RPX_VARIANCE_MIN_RATIO (in either direction for
 * `order`; slower with more of it for migrations, off-CPU time and faults). */
#define RPX_VARIANCE_ALPHA 0.01
#define RPX_VARIANCE_MIN_SHARE 0.5
#define RPX_VARIANCE_MIN_RATIO 1.01
/* A count factor (migrations, page faults, involuntary switches) is tested only
 * when the processes' counts differ by at least this many events. */
#define RPX_VARIANCE_MIN_EVENTS 3

/* The `variance` object of a profile report (`rpxprof.profile/1`):
 * {between_process_share, process_p50_ratio, factors, explained_by, message,
 * slow_tail, method, rule}. Reads latency_samples_ms, latency_by_process
 * (sample_offset, measured_calls, cpus, migrations, context_switches,
 * page_faults, off_cpu_ms), call_records and system_card.cpu; whatever is
 * missing makes the factors that need it `tested: false` with the reason.
 * NULL only out of memory. */
json_t *rpx_variance_json(const json_t *report);
/* The same, its message worded for the front end that ran the report: python
 * nonzero names the options as rpxprof.profile()'s keywords ("pin with
 * cpus=1"), else as the CLI's ("pin with --cpus 1"). */
json_t *rpx_variance_json_for(const json_t *report, int python);
/* The same, with the samples (ms, n: malloc'ed, freed here) and call_records
 * given rather than read from the report (the runner writes those arrays
 * without holding them). */
json_t *rpx__variance_json_of(const json_t *report, double *ms, size_t n, const json_t *records,
                              int python);

#endif
