/* rpxprof/aggregate.h — aggregation of batch reports with consistency checks
 * (src/batch/aggregate.c, docs/batch.md): one call that writes the summaries,
 * validation.json and the figure under an output folder. */
#ifndef RPXPROF_AGGREGATE_H
#define RPXPROF_AGGREGATE_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/api.h"
#include "rpxprof/comparison.h"
#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_VALIDATION_SCHEMA "rpxprof.validation/1"

typedef struct rpx_aggregate_opts {
    const char *const *dirs;
    size_t ndirs;
    const char *out_dir;
    const char *expect;           /* manifest path or NULL */
    int allow_incomplete_flops;
    int force;                    /* replace files in out_dir that rpxprof did not write */
    int allow_audit_failures;     /* a report whose --audit says suspect is a warning, not an
                                     error (docs/audits.md) */
} rpx_aggregate_opts;

typedef struct rpx_aggregate_result {
    size_t profiles_found;
    size_t errors, warnings;
} rpx_aggregate_result;

/* Check and combine the reports; writes OUT/summary.csv, summary.md (each
 * latency with its interval, to the digits the interval justifies),
 * validation.json and figure.svg through the output guard (src/common/output.h),
 * opened before any report is read: they replace only the files of a folder
 * that holds rpxprof's validation.json (or anything with force), never the
 * reports or the manifest read. Returns 0 when everything was written
 * (whatever the checks found: see result->errors), < 0 when it could not be. */
RPX_API int rpx_aggregate(const rpx_aggregate_opts *opts, rpx_aggregate_result *result, rpx_error *err);

/* Whether two reports did the same work on the same kind of machine, with
 * aggregate's checks and messages: a difference in inputs_sha256, input
 * shapes, unit, device, precision, GPU or CPU model is appended to `errors`;
 * in CUDA_VISIBLE_DEVICES, driver, CPU governor or OS to `warnings` (messages
 * "KEY differs: A in FILE_A but B in FILE_B"). Call counts, processes and
 * metadata are not compared. */
RPX_API void rpx_aggregate_same_work(const char *file_a, const json_t *a, const char *file_b, const json_t *b,
                             json_t *errors, json_t *warnings);

/* rpx_report_check, the one validator of a run report: rpxprof/comparison.h */


#ifdef __cplusplus
}
#endif
#endif
