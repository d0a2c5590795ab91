/* rpxprof/report.h — the profile report: its schema name, the latency
 * statistics object and the builder. Reports are jansson trees (json_t),
 * which jansson's json_dumps or json_dump_file writes.
 *
 * The profile builder turns the measured pieces into an
 * "rpxprof.profile/1" report; any C runner with its own loop can use it. */
#ifndef RPXPROF_REPORT_H
#define RPXPROF_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "rpxprof/clock.h"
#include "rpxprof/latency.h"
#include "rpxprof/memory.h"
#include "rpxprof/model.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_PROFILE_SCHEMA "rpxprof.profile/1"

/* {p50_ms, p95_ms, p99_ms, mean_ms, min_ms, max_ms, std_ms} of a latency
 * store, every one null when it holds no sample. NULL only out of memory. */
RPX_API json_t *rpx_latency_json(const rpx_latency *lat);
/* The same object from statistics already computed (a histogram's); every
 * value null when st->available is 0. */
RPX_API json_t *rpx_latency_stats_json(const rpx_latency_stats *st);

/* Everything a profile report is made of. Strings may be NULL (→ null). */
typedef struct rpx_profile_desc {
    const char *model_callable;   /* the --model text */
    const char *target_kind;      /* "shared_object", "python", "http" */
    const char *timing_scope;     /* what one sample spans; NULL: a shared object's call */
    json_t *target_section;       /* the kind's section, reported under the kind's name
                                     ("python", "http") (borrowed), or NULL for none */
    const char *target_section_key; /* the report's key for it when not the kind's name (a
                                     model file's: "runtime"), or NULL */
    long failed_calls;            /* counted failures among timed calls (HTTP) */
    long failed_warmup_calls;
    const char *device;           /* "cpu" | "cuda" */
    const char *precision;
    const char *unit;
    long warmup_calls;
    const rpx_inputs *inputs;     /* names, shapes, dtypes */
    const char *inputs_path;
    const char *inputs_sha256;
    json_t *metadata;             /* object (borrowed), or NULL for {} */
    const rpx_latency *latency;   /* samples (ns) and statistics */
    const rpx_memory_peaks *memory;
    json_t *cuda_peaks;           /* object {ordinal: MiB} (borrowed), or NULL for {} */
    json_t *cuda_memory_method;   /* how cuda_peaks were measured (borrowed), or NULL */
    json_t *cuda_process_peaks;   /* when cuda_peaks come from a framework's allocator: the
                                     process-level figures beside them (borrowed), or NULL */
    json_t *cuda_process_method;
    json_t *cuda;                 /* the `cuda` section (borrowed), or NULL for null */
    const int64_t *sync_overhead_ns; /* median cost of one synchronisation, NULL if none */
    json_t *efficiency;           /* model cost (borrowed), or NULL for null */
    json_t *roofline;             /* {target: bound} (borrowed), or NULL for null */
    json_t *realtime_budget;      /* (borrowed), or NULL for null */
    json_t *gpu_time;             /* per-call GPU busy time (borrowed), or NULL for null */
    const rpx_timer_info *timer;
    json_t *system_card;          /* object (borrowed), or NULL for null */
    const char *status;           /* "complete", "failed", "interrupted", ... */
    const char *error;            /* reason when status is not complete, else NULL */
    json_t *failure;              /* {phase, call_index, in_warmup, signal} (borrowed) or NULL */
    int isolated;                 /* the model ran in a child process */
    json_t *notes;                /* array of strings (borrowed), or NULL for [] */
    int64_t wall_ns;              /* loop wall time, < 0 if unknown */
    void *lazy;                   /* the runner's: per-call arrays written without being
                                     held (src/common/json.h); NULL: made at once */
} rpx_profile_desc;

/* Build the report object. NULL only when out of memory. */
RPX_API json_t *rpx_profile_report(const rpx_profile_desc *desc);

/* A job that built no report of its own (the run could not start: a model
 * that does not load, inputs that do not exist): status "failed" with the
 * reason, and what the job asked for. Strings are borrowed; model_callable is
 * shown as given (redact credentials first: rpx_target_redact_spec). */
typedef struct rpx_profile_failed {
    const char *error;
    const char *model_callable;
    const char *task, *model_name;
    const char *device, *precision, *unit;
    const char *inputs_path;
    long warmup_calls;
    const json_t *metadata;       /* object (copied), or NULL for {} */
} rpx_profile_failed;

/* Build the failed report. NULL only when out of memory. */
RPX_API json_t *rpx_profile_failed_report(const rpx_profile_failed *f);

#ifdef __cplusplus
}
#endif
#endif
