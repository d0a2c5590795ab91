/* src/history/entry.h — what the history keeps of a report (entry.c). */
#ifndef RPXPROF_HISTORY_ENTRY_H
#define RPXPROF_HISTORY_ENTRY_H

#include <jansson.h>
#include <stddef.h>

/* the report's session (a new reference): its own, or one derived for an old
 * report ("derived": true); NULL out of memory */
json_t *rpx__hist_session_of(const json_t *report);
/* the series' session entry (include/rpxprof/history.h) */
json_t *rpx__hist_entry(const json_t *report, const json_t *session, const char *report_path);
/* each process's statistics, the intervals, variance, conditions */
json_t *rpx__hist_detail(const json_t *report);
/* at most max samples, evenly spaced ({"of", "kept", "samples_ms"}); NULL: none */
json_t *rpx__hist_samples(const json_t *report, size_t max);

#endif
