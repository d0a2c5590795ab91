/* rpxprof/batch.h — batch profiling over task manifests, aggregation of the
 * reports with consistency checks, and the latency figures (docs/batch.md).
 *
 * Manifest lifecycle: rpx_manifest_load → jobs → rpx_manifest_free.
 * Aggregation: rpx_aggregate (one call; writes everything under out_dir).
 * Figures: rpx_plot_svg on an array of rows (one per report). */
#ifndef RPXPROF_BATCH_H
#define RPXPROF_BATCH_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_MANIFEST_SCHEMA "rpxprof.manifest/1"
#define RPX_VALIDATION_SCHEMA "rpxprof.validation/1"

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
    /* every input the task names (files or folders, resolved), one distinct
     * sample each; `inputs` is the first. n_inputs >= 1. */
    const char *const *inputs_list;
    size_t n_inputs;
} rpx_batch_job;

typedef struct rpx_manifest rpx_manifest;

/* Parse and check a manifest. Errors name the file, the field and the fix. */
int rpx_manifest_load(const char *path, rpx_manifest **out, rpx_error *err);
void rpx_manifest_free(rpx_manifest *m);
/* Jobs in a stable order: tasks in manifest order x models in manifest order. */
size_t rpx_manifest_job_count(const rpx_manifest *m);
const rpx_batch_job *rpx_manifest_job(const rpx_manifest *m, size_t i);

/* The report of a job inside an output folder: DIR/<task>/<model>.json
 * (malloc'ed); trailing slashes of DIR are not doubled ("out/" and "out"
 * give the same path). */
char *rpx_batch_report_path(const char *out_dir, const rpx_batch_job *job);

/* `dir` without its trailing slashes ("/" stays "/"), malloc'ed. */
char *rpx_batch_dir_clean(const char *dir);

/* Aggregate's same-work check asks every job of a task for the same warmup,
 * measured calls and worker processes (docs/batch.md). 0 when the manifest's
 * jobs agree; RPX_EINVAL with a message naming the manifest (`path`), the
 * task, both models, the key with both values, and the fix, when per-model
 * overrides make two jobs of a task differ: checked before any job runs. The
 * processes compared are those the runner will use (0: 1 for an HTTP API,
 * else RPX_RUNNER_DEFAULT_PROCESSES; at most the repeats). */
int rpx_manifest_check_same_work(const rpx_manifest *m, const char *path, rpx_error *err);

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
int rpx_batch_slurm_shard(const rpx_slurm_array *a, long *i, long *n, rpx_error *err);
/* 1 when `report_path` holds a complete report made with exactly this job's
 * inputs (SHA-256: rpx_runner_inputs_sha256 of every input) and settings;
 * 0 otherwise. */
int rpx_batch_report_matches(const char *report_path, const rpx_batch_job *job);

typedef struct rpx_aggregate_opts {
    const char *const *dirs;
    size_t ndirs;
    const char *out_dir;
    const char *expect;           /* manifest path or NULL */
    int allow_incomplete_flops;
    int force;                    /* replace files in out_dir that rpxprof did not write */
} rpx_aggregate_opts;

typedef struct rpx_aggregate_result {
    size_t profiles_found;
    size_t errors, warnings;
} rpx_aggregate_result;

/* Check and combine the reports; writes OUT/summary.csv, summary.md (each
 * latency with its interval, to the digits the interval justifies),
 * validation.json and figure.svg through the output guard (rpxprof/output.h),
 * opened before any report is read: they replace only the files of a folder
 * that holds rpxprof's validation.json (or anything with force), never the
 * reports or the manifest read. Returns 0 when everything was written
 * (whatever the checks found: see result->errors), < 0 when it could not be. */
int rpx_aggregate(const rpx_aggregate_opts *opts, rpx_aggregate_result *result, rpx_error *err);

/* Whether two reports did the same work on the same kind of machine, with
 * aggregate's checks and messages: a difference in inputs_sha256, input
 * shapes, unit, device, precision, GPU or CPU model is appended to `errors`;
 * in CUDA_VISIBLE_DEVICES, driver, CPU governor or OS to `warnings` (messages
 * "KEY differs: A in FILE_A but B in FILE_B"). Call counts, processes and
 * metadata are not compared. */
void rpx_aggregate_same_work(const char *file_a, const json_t *a, const char *file_b, const json_t *b,
                             json_t *errors, json_t *warnings);

/* The one validator of a run report that aggregate and compare apply
 * (src/batch/report_check.c): the keys schemas/profile.json requires of it,
 * its status (complete), and its numbers against its own samples
 * (measured_calls, latency's percentiles, processes, latency_by_process,
 * latency_ci). Each problem is appended to `errors` as "FILE: ...", notes to
 * `warnings`. Returns the number of errors, or < 0 when out of memory. */
int rpx_report_check(const char *file, const json_t *report, json_t *errors, json_t *warnings);

/* One row of a latency figure: one report. Strings are borrowed. */
typedef struct rpx_plot_row {
    const char *panel;            /* task (or unit) */
    const char *label;            /* model */
    const char *unit;
    const char *shape;            /* input shapes, e.g. "rgb 48x64x3" */
    const char *device;
    const double *samples_ms;     /* in call order */
    size_t n;
    const double *x_ms;           /* NULL, or each sample's intended send time (http.load.schedule_ms):
                                   * the timeline's x axis instead of the call index */
    /* The p50's interval (the report's latency_ci): ci_covers NULL when the
     * report has none (older rpxprof); lo/hi NaN when it is null. */
    const char *ci_covers;        /* "between-process" | "within-process" */
    long processes;               /* 0: unknown */
    double p50_ci_lo_ms, p50_ci_hi_ms;
    /* NULL or "": one call after another (closed loop); else how the calls
     * were scheduled, drawn under the label (rpx_plot_mode_note), e.g.
     * "open loop, 50 req/s (from intended send)" or "paced 200 Hz" */
    const char *mode_note;
} rpx_plot_row;

/* Fill a row's interval fields from a report (strings borrowed from it). */
void rpx_plot_row_interval(rpx_plot_row *row, const json_t *report);

/* A row's mode_note into buf ("" for a closed-loop run): an open-loop load
 * run (http.load: its requested and achieved rates per second, the achieved
 * one only when below 0.98 of the requested; latency from each request's
 * intended send time) or a paced run (pacing.rate_hz). NaN: not that mode. */
void rpx_plot_mode_note(char *buf, size_t cap, double load_requested_per_s, double load_achieved_per_s,
                        double paced_hz);

/* The same from a report (http.load, pacing). */
void rpx_plot_mode_note_of(char *buf, size_t cap, const json_t *report);

/* An SVG document (malloc'ed) of the rows: one panel per task, one row per
 * model, the p50's interval drawn as an error bar where the row has one; with
 * `timeline`, latency against call index of rows[0] (its interval a band). */
int rpx_plot_svg(const rpx_plot_row *rows, size_t n, int timeline, char **svg, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
