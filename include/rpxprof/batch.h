/* rpxprof/batch.h — running a manifest's jobs (src/batch/batch_run.c,
 * docs/batch.md): every (task, model) job through the runner (the call behind
 * `rpxprof run`, its model in worker processes), one report each in
 * DIR/<task>/<model>.json; a job that fails gets a failed report and the
 * others go on. Every report path is checked before the first job, and the
 * manifest, every job's inputs, cost model and model file are never replaced.
 *
 *   rpx_manifest_load → rpx_manifest_check_same_work → rpx_batch_run
 *
 * The library reads no environment and prints nothing: the caller passes the
 * pipeline's variables and gets progress and failures through callbacks. */
#ifndef RPXPROF_BATCH_H
#define RPXPROF_BATCH_H

#include <signal.h>
#include <stddef.h>

#include "rpxprof/api.h"
#include "rpxprof/manifest.h"
#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_batch_options {
    const char *manifest_path;    /* the manifest (never replaced; the pipeline's manifest_path) */
    const char *out_dir;          /* where the reports go (made when missing) */
    long shard_index, shard_count; /* run jobs I, I+N, ...; 0 and 1 (or 0 and 0): every job */
    int resume;                   /* skip jobs whose complete report matches (rpx_batch_report_matches) */
    int force;                    /* replace files at report paths that rpxprof did not write */
    /* The depth-efficiency pipeline's values (docs/batch.md), NULL when unset:
     * $RPX_GIT_SHA, $PROFILE_CONTAINER_IMAGE, $PROFILE_CONCURRENT_HOST_LOAD. */
    const char *code_sha, *container_image, *concurrent_host_load;
    /* Set (by the caller's SIGINT/SIGTERM handler, to the signal's number) to
     * stop before the next job; NULL: never. During a job the runner handles the signals. */
    const volatile sig_atomic_t *stop;
    /* Before each job of the shard that runs or is skipped: the job's number
     * (1-based) among `mine`. NULL: nothing. */
    void (*on_job)(void *user, size_t number, size_t mine, const rpx_batch_job *job);
    /* After a job that failed: why, and (when not NULL) why even its failed
     * report could not be written. NULL: nothing. */
    void (*on_failed)(void *user, const rpx_batch_job *job, const char *why,
                      const char *report_error);
    void *user;
    /* --history PATH: every job's session recorded into this history after its
     * report is written (a manifest's `history` wins for its jobs; NULL: that,
     * else RPXPROF_HISTORY, else none) */
    const char *history;
} rpx_batch_options;

typedef struct rpx_batch_result {
    size_t total;                 /* jobs in the manifest */
    size_t mine;                  /* jobs of this shard */
    size_t complete, failed, skipped;
    size_t interrupted_jobs;      /* stopped by a signal, their interrupted report written */
    int interrupted;              /* a signal stopped the batch: rerun with resume */
    int started;                  /* the first job was reached (the checks passed) */
    int stop_signal;              /* the signal a stopped job's run named (SIGINT, SIGTERM), or 0 */
    size_t history_failed;        /* jobs whose report was written but not recorded in the history */
    char history_error[1024];     /* the last such job's reason, naming the history */
} rpx_batch_result;

/* Run the shard's jobs. 0 when they ran (whatever each job's outcome: see
 * res); a negative code when the batch could not start (an --out-dir that is
 * not a folder, a report path that must not be replaced: err names it) or ran
 * out of memory on the way (res->started then says jobs ran). */
RPX_API int rpx_batch_run(const rpx_manifest *m, const rpx_batch_options *opt,
                          rpx_batch_result *res, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
