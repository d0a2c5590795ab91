/* src/batch/pipeline.h — the RPX depth-efficiency pipeline's formats, both ways
 * (docs/batch.md#the-reference-pipelines-format):
 *
 * - rpx_pipeline_keys_add: the per-model keys of the pipeline's
 *   profile_depth_efficiency.py (model, input_protocol, frames_per_sample,
 *   params_total, flops_per_sample, latency_p50_ms_per_sample, ...), derived
 *   from an rpxprof report and added to it, so that the pipeline's
 *   aggregate_depth_efficiency.py reads an `rpxprof batch` folder as it is.
 * - rpx_pipeline_report_kind / rpx_pipeline_normalize: a report written by
 *   the reference (its profile_callable.py, or profile_depth_efficiency.py)
 *   recognised by its keys and turned into the keys rpxprof aggregate reads.
 *
 * The library never prints; the caller reads the environment. */
#ifndef RPXPROF_PIPELINE_H
#define RPXPROF_PIPELINE_H

#include <jansson.h>

#include "compare/report_check.h"
#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The pipeline's dataset revision of its own runs is a git SHA; rpxprof has
 * none: the inputs' SHA-256, prefixed, unless the task's metadata names one. */
#define RPX_PIPELINE_SHA_PREFIX "sha256:"

typedef struct rpx_pipeline_context {
    const char *model;                /* the manifest's model name (required) */
    const char *manifest_path;        /* the batch manifest, or NULL (null) */
    const char *code_sha;             /* $RPX_GIT_SHA; NULL or "": null */
    const char *container_image;      /* $PROFILE_CONTAINER_IMAGE; NULL or "": null */
    const char *concurrent_host_load; /* $PROFILE_CONCURRENT_HOST_LOAD; NULL or "": "unknown" */
} rpx_pipeline_context;

/* Add (or replace) the pipeline's keys in `report`, an rpxprof.profile/1
 * report of any status (a failed report gets nulls for what it lacks). Keys
 * the report already has with the same meaning (task, precision,
 * latency_samples_ms, and distinct_samples / latency_records when the runner
 * wrote them) are kept. Unknown values are null, never 0. Returns 0, or
 * RPX_EINVAL (no report / no model) or RPX_ENOMEM. */
int rpx_pipeline_keys_add(json_t *report, const rpx_pipeline_context *ctx, rpx_error *err);

/* rpx_report_kind: compare/report_check.h (the validator reads it) */

/* Which tool wrote a report, from its keys: a "schema" key is rpxprof's; the
 * per-sample keys (model, task, latency_p50_ms_per_sample, latency_samples_ms)
 * without one are profile_depth_efficiency's; timing_scope, latency,
 * latency_samples_ms and measured_calls without one are profile_callable's. */
rpx_report_kind rpx_pipeline_report_kind(const json_t *report);
/* "rpxprof", "the reference's profile_callable.py", ... */
const char *rpx_pipeline_kind_name(rpx_report_kind kind);

/* A reference report as the keys rpxprof aggregate reads (new reference):
 * schema, status "complete", task and model_name from the path, device,
 * precision, unit, warmup_calls, measured_calls, inputs, inputs_sha256,
 * latency, latency_samples_ms, memory, system_card (gpu_name, cpu_name,
 * driver_version, os), efficiency (params, flops, macs), realtime_budget
 * (per_frame_ms, throughput_per_s), created_utc; what the tool did not write
 * is null. Problems of the report (a wrong type, its model or task differing
 * from its path, invalid headline values, unknown FLOPs unless
 * allow_incomplete_flops) are appended to `errors` as "FILE: ..." strings;
 * `missing` receives the names of the keys rpxprof reports have and it has
 * not (null then). Returns NULL when the report is unusable (errors say why). */
json_t *rpx_pipeline_normalize(const json_t *report, rpx_report_kind kind, const char *file,
                               const char *task, const char *model, int allow_incomplete_flops,
                               json_t *errors, json_t *warnings, json_t *missing);

/* rpx_pipeline_round3, the reference's rounding: compare/report_check.h */

#ifdef __cplusplus
}
#endif
#endif
