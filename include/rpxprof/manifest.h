/* rpxprof/manifest.h — batch profiling's task manifests (src/batch/manifest.c,
 * docs/batch.md): the jobs a manifest names, where each job's report goes, the
 * same-work check before any job runs, Slurm array shards.
 *
 * Manifest lifecycle: rpx_manifest_load → jobs → rpx_manifest_free. */
#ifndef RPXPROF_MANIFEST_H
#define RPXPROF_MANIFEST_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/api.h"
#include "rpxprof/model.h"
#include "rpxprof/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_MANIFEST_SCHEMA "rpxprof.manifest/1"

/* One (task, model) job: everything `rpxprof run` needs. Paths are resolved
 * against the manifest's folder. Strings are owned by the manifest. */
typedef struct rpx_batch_job {
    const char *task;
    const char *model_name;
    const char *model;            /* the --model text, PATH resolved */
    const char *inputs;           /* the NPZ path, resolved */
    const char *unit;
    const char *device;
    const char *precision;
    const char *cost;             /* ONNX path or NULL */
    const char *flops, *params;   /* declared cost (strings as given) or NULL */
    const char *gpus;             /* roofline targets "KEY,KEY" (--gpu) or NULL */
    const json_t *meta;           /* object, borrowed from the manifest */
    long warmup, repeats;
    long processes;               /* worker processes; 0: the runner's default */
    int gpu_time;                 /* --gpu-time (the manifest's gpu_time) */
    const char *cpus;             /* --cpus (the manifest's cpus: "1", "0,2"), or NULL */
    int spread;                   /* --spread */
    const char *audit;            /* --audit (the manifest's audit: "cache", "seed"), or NULL */
    double audit_threshold;       /* --audit-threshold (0: the default) */
    /* every input the task names (files or folders, resolved), one distinct
     * sample each; `inputs` is the first. n_inputs >= 1. */
    const char *const *inputs_list;
    size_t n_inputs;
    int call_records;             /* --call-records: RPX_CALL_RECORDS_CPU (0, the default), _FULL, _OFF */
    /* the output checks (docs/output-checks.md): --check-outputs, --check-fraction
     * (0: the default), --rtol, --atol, --output-field; save_outputs/reference_outputs:
     * this job's folder, the manifest's folder + /TASK/MODEL (resolved), or NULL */
    int check_outputs;
    double check_fraction, rtol, atol;
    const char *output_field, *save_outputs, *reference_outputs;
    /* the job's run: every run option the manifest gives (defaults, then the
     * task's, then the model's), read and checked through the options' table
     * (rpxprof/options.h); the fields above repeat what reports record */
    rpx_runner_config run;
} rpx_batch_job;

typedef struct rpx_manifest rpx_manifest;

/* Parse and check a manifest. Errors name the file, the field and the fix. */
RPX_API int rpx_manifest_load(const char *path, rpx_manifest **out, rpx_error *err);
RPX_API void rpx_manifest_free(rpx_manifest *m);
/* Jobs in a stable order: tasks in manifest order x models in manifest order. */
RPX_API size_t rpx_manifest_job_count(const rpx_manifest *m);
RPX_API const rpx_batch_job *rpx_manifest_job(const rpx_manifest *m, size_t i);
/* The run of a job (made by rpx_manifest_load): its run options (j->run), with
 * the job's model, inputs and metadata; borrowed from the job. */
RPX_API void rpx_batch_job_config(const rpx_batch_job *j, rpx_runner_config *c);

/* The report of a job inside an output folder: DIR/<task>/<model>.json
 * (malloc'ed); trailing slashes of DIR are not doubled ("out/" and "out"
 * give the same path). */
RPX_API char *rpx_batch_report_path(const char *out_dir, const rpx_batch_job *job);

/* `dir` without its trailing slashes ("/" stays "/"), malloc'ed. */
RPX_API char *rpx_batch_dir_clean(const char *dir);

/* Aggregate's same-work check asks every job of a task for the same warmup,
 * measured calls and worker processes (docs/batch.md). 0 when the manifest's
 * jobs agree; RPX_EINVAL with a message naming the manifest (`path`), the
 * task, both models, the key with both values, and the fix, when per-model
 * overrides make two jobs of a task differ: checked before any job runs. The
 * processes compared are those the runner will use (0: 1 for an HTTP API,
 * else RPX_RUNNER_DEFAULT_PROCESSES; at most the repeats). */
RPX_API int rpx_manifest_check_same_work(const rpx_manifest *m, const char *path, rpx_error *err);

/* The values of Slurm's array variables (NULL when unset): the library reads
 * no environment, the CLI passes them. */
typedef struct rpx_slurm_array {
    const char *task_id;          /* SLURM_ARRAY_TASK_ID */
    const char *task_min;         /* SLURM_ARRAY_TASK_MIN */
    const char *task_max;         /* SLURM_ARRAY_TASK_MAX */
    const char *task_step;        /* SLURM_ARRAY_TASK_STEP */
    const char *task_count;       /* SLURM_ARRAY_TASK_COUNT */
} rpx_slurm_array;

/* The shard I/N of one task of a Slurm job array, from the array's index
 * set: its indices must be MIN, MIN+STEP, ..., MAX, COUNT of them (STEP may
 * be unset when COUNT <= 2 or MAX-MIN = COUNT-1), and then I = (ID-MIN)/STEP,
 * N = COUNT, so the COUNT tasks cover every job exactly once. Returns 1 with
 * *i, *n; 0 when neither ID nor COUNT is set (not an array task); RPX_EINVAL
 * with a message naming every variable and its value when they cannot (a list
 * like 1,3,4, a value that is not an integer, an ID outside the set). */
RPX_API int rpx_batch_slurm_shard(const rpx_slurm_array *a, long *i, long *n, rpx_error *err);
/* 1 when `report_path` holds a complete report made with exactly this job's
 * inputs (SHA-256: rpx_runner_inputs_sha256 of every input) and settings;
 * 0 otherwise. */
RPX_API int rpx_batch_report_matches(const char *report_path, const rpx_batch_job *job);


#ifdef __cplusplus
}
#endif
#endif
