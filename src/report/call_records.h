/* call_records.h — the report's keys of where each timed call ran
 * (call_records.c): the top-level `call_records` (per call, parallel to
 * latency_samples_ms) and each latency_by_process entry's cpus, migrations,
 * context_switches, page_faults and off_cpu_ms. Internal. */
#ifndef RPX_REPORT_CALL_RECORDS_H
#define RPX_REPORT_CALL_RECORDS_H

#include <jansson.h>

#include "report/run_report.h"

/* call_records for the whole run: null when no process recorded its calls
 * (--call-records off, an HTTP target). */
json_t *rpx__call_records_json(const rpx_run_data *d);
/* Process p's totals into its latency_by_process entry `o` (nulls when not
 * recorded). */
void rpx__call_records_process(const rpx_run_process *p, json_t *o);

#endif
