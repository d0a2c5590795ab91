/* trace.h — a run report as a Chrome trace-event JSON file (trace.c), the
 * format Perfetto (ui.perfetto.dev) and chrome://tracing open. Internal: the
 * CLI's `run --trace` and `rpxprof trace` call it. */
#ifndef RPX_REPORT_TRACE_H
#define RPX_REPORT_TRACE_H

#include <jansson.h>

#include "rpxprof/error.h"

#define RPX_TRACE_SCHEMA "rpxprof.trace/1"
#define RPX_TRACE_DEFAULT_MAX_EVENTS 1000000L
#define RPX_TRACE_MIN_MAX_EVENTS 16L

/* The trace of `report` (an "rpxprof.profile/1" report with its `timeline`)
 * as JSON text (malloc'ed, *len bytes): at most max_events events (>=
 * RPX_TRACE_MIN_MAX_EVENTS), metadata included, with a note event when the
 * bound cut it. `source` names the report in messages, `option` the bound's
 * option ("--trace-max-events" of run, "--max-events" of trace; NULL: the
 * first). NULL with err (RPX_EINVAL) saying what is missing, or RPX_ENOMEM. */
char *rpx__trace_from_report(const json_t *report, const char *source, const char *option,
                             long max_events, size_t *len, rpx_error *err);

#endif
