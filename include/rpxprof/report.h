/* rpxprof/report.h — reports: the profile report builder and JSON output.
 *
 * Reports are jansson trees (json_t). rpx_json_dump writes them with every
 * real number in its shortest round-trip form, locale-independently, and NaN
 * or infinity as null; rpx_json_write_file writes atomically (temporary file
 * in the same folder, flushed, renamed), or to stdout for "-".
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
#include "rpxprof/output.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_PROFILE_SCHEMA "rpxprof.profile/1"

/* A real, or null when it is NaN or infinite. Never NULL (except out of memory). */
json_t *rpx_json_real_or_null(double v);
/* A size in bytes as MiB (bytes / 2^20), or null when bytes < 0. */
json_t *rpx_json_mib_or_null(int64_t bytes);

/* {p50_ms, p95_ms, p99_ms, mean_ms, min_ms, max_ms, std_ms} of a latency
 * store, every one null when it holds no sample. NULL only out of memory. */
json_t *rpx_latency_json(const rpx_latency *lat);

/* Serialise with 2-space indentation (arrays of scalars on one line).
 * Returns a malloc'ed NUL-terminated string, or NULL out of memory. */
char *rpx_json_dumps(const json_t *value);
/* Write `value` + "\n" to `path` atomically ("-" is stdout). Parent folders
 * are created. Goes through the output guard (rpxprof/output.h) in one call:
 * it replaces only a report of the same "schema" (or a new or empty file),
 * never an input, a folder or another file; devices and FIFOs are streamed to. */
int rpx_json_write_file(const char *path, const json_t *value, rpx_error *err);
/* Write `len` bytes to `path` atomically, creating parent folders, through the
 * same guard: the data replaces only a file of its own kind (a JSON report of
 * the same schema, an SVG with RPX_OUTPUT_SVG_MARK). */
int rpx_write_file_atomic(const char *path, const void *data, size_t len, rpx_error *err);
/* Serialise `value` + "\n" and commit it to an output opened with
 * rpx_output_open (measure first, then write); frees `o` either way. */
int rpx_json_write_output(rpx_output *o, const json_t *value, rpx_error *err);

/* Everything a profile report is made of. Strings may be NULL (→ null). */
typedef struct rpx_profile_desc {
    const char *model_callable;   /* the --model text */
    const char *target_kind;      /* "shared_object", "python", "http" */
    const char *timing_scope;     /* what one sample spans; NULL: a shared object's call */
    json_t *target_section;       /* the kind's section, reported under the kind's name
                                     ("python", "http") (borrowed), or NULL for none */
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
} rpx_profile_desc;

/* Build the report object. NULL only when out of memory. */
json_t *rpx_profile_report(const rpx_profile_desc *desc);

#ifdef __cplusplus
}
#endif
#endif
