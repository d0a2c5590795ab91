/* outputs.h — output checks (--check-outputs, docs/output-checks.md): an
 * untimed reference pass over every distinct sample before the timed calls
 * (or a reference saved by --save-outputs), then a seeded random subset of the
 * timed calls compared with it outside the timed span, and the report's
 * `outputs` section merged from every process's.
 *
 * Lifecycle, in the model's process: rpx__outputs_begin (after setup and the
 * samples, before warmup) → rpx__outputs_check_call as the loop's check hook
 * → rpx__outputs_json → rpx__outputs_free. In the parent:
 * rpx__outputs_prepare before the first process, rpx__outputs_merge after the
 * last. */
#ifndef RPX_RUNNER_OUTPUTS_H
#define RPX_RUNNER_OUTPUTS_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/model.h"
#include "rpxprof/target.h"

#define RPX_OUTPUTS_DEFAULT_FRACTION 0.01
#define RPX_OUTPUTS_MAX_SHOWN 10      /* mismatches listed per run */
#define RPX_OUTPUTS_MAX_LISTED 100    /* samples whose reference SHA-256 is listed */

typedef struct outputs_params {
    double fraction;              /* share of timed calls checked (at least one per process) */
    double rtol, atol;            /* both 0: bit-exact */
    unsigned long long seed;      /* which calls are checked */
    const char *reference_dir;    /* --reference-outputs DIR; NULL: the reference pass */
    const char *save_dir;         /* --save-outputs DIR; NULL: not saved */
    int process;                  /* this process's index: the seed's stream; 0 saves */
    /* the two folders as absolute paths (rpx__outputs_resolve), where the files
     * are read and written: a model may change its working folder in setup */
    char reference_abs[4096];
    char save_abs[4096];
} outputs_params;

/* The parent, before any process: reference_abs and save_abs from the folders
 * as given (the working folder's path put in front of a relative one). */
void rpx__outputs_resolve(outputs_params *op);

typedef struct outputs_check outputs_check;

/* The parent, before the inputs are loaded: --save-outputs DIR is created
 * when missing and must be a folder this process can write in (a file made
 * and removed). RPX_EUSAGE / RPX_EIO naming the folder. */
int rpx__outputs_place(const char *save_dir, rpx_error *err);

/* The parent, before any process: --save-outputs DIR is created (an
 * outputs-*.npz already there is refused unless force; one of the `reads`,
 * the files the run reads, or the --reference-outputs folder always);
 * --reference-outputs DIR must hold one outputs-NNNNN.npz per distinct
 * sample. RPX_EUSAGE / RPX_EIO with the file and the fix. */
int rpx__outputs_prepare(const outputs_params *op, size_t n_samples, int force,
                         const char *const *reads, size_t n_reads, rpx_error *err);

/* The model's process: the reference pass (each distinct sample called once,
 * untimed; `pristine` restored over it first when not NULL) or the saved
 * reference loaded, and saved when asked (process 0). */
int rpx__outputs_begin(const outputs_params *op, rpx_target *t, const rpx_inputs *samples,
                       size_t n, const rpx_inputs *pristine, long repeats, outputs_check **out,
                       rpx_error *err);
/* The loop's check hook (rpx_run_config.check): ctx is the outputs_check. */
void rpx__outputs_check_call(void *ctx, long i, size_t k, int rc);
/* This process's findings (a new reference). */
json_t *rpx__outputs_json(const outputs_check *oc);
void rpx__outputs_free(outputs_check *oc);

/* The report's `outputs` from each process's object (NULL entries: a process
 * that did not report); *differ: 1 when a checked call (or a process's
 * reference) differed. A new reference. */
json_t *rpx__outputs_merge(const outputs_params *op, json_t *const *per_process, int n,
                           int *differ);

#endif
