/* rpxprof/runner.h — a whole run as one call: what `rpxprof run` does.
 *
 *   rpx_runner_config c;
 *   rpx_runner_config_init(&c);               defaults of `rpxprof run`
 *   c.model = "rpxprof-demo:demo_depth"; c.inputs = "in.npz"; c.output = "r.json";
 *   rpx_runner_result r;
 *   if (rpx_runner_run(&c, &r, &err) == 0) { ... r.report, r.status ... }
 *   rpx_runner_result_free(&r);
 *
 * The runner checks the output's place before anything is loaded, loads the
 * inputs once, analyses the cost, spreads the timed calls over `processes`
 * fresh worker processes one after another (each does its own setup and
 * warmup; --no-isolate: this process, one worker), watches them (timeouts,
 * SIGINT/SIGTERM with a grace period), and builds the "rpxprof.profile/1"
 * report: every sample and where it came from, intervals, memory, the system
 * card, cost and bounds. With a target precision it adds processes until the
 * p50's interval is narrow enough or the time limit is reached; with
 * autorange it picks the calls itself within max_time (autorange.c). It never
 * prints: what the user should see comes back in `warnings`. */
#ifndef RPXPROF_RUNNER_H
#define RPXPROF_RUNNER_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/error.h"
#include "rpxprof/target.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_RUNNER_MAX_PROCESSES 100
/* every timed call keeps its sample in memory and in the report */
#define RPX_RUNNER_MAX_REPEATS 10000000L
#define RPX_RUNNER_MAX_WARMUP 1000000000L
#define RPX_RUNNER_DEFAULT_PROCESSES 5
/* --layers: profiled calls per process when no N is given, and the most */
#define RPX_LAYERS_DEFAULT_CALLS 20
#define RPX_LAYERS_DEFAULT_TEXT "20"
#define RPX_LAYERS_MAX_CALLS 10000
#define RPX_RUNNER_NOTICE_S 5
/* at most this many options in the run options' table (rpxprof/options.h) */
#define RPX_RUN_OPTIONS_MAX 128
/* auto-ranging's defaults (rpx_runner_config.autorange): min_time_s, max_time_s,
 * target_precision when 0 */
#define RPX_AUTORANGE_MIN_TIME_S 1.0
#define RPX_AUTORANGE_MAX_TIME_S 10.0
#define RPX_AUTORANGE_PRECISION 0.01

/* rpx_runner_config.call_records (--call-records cpu|full|off) */
enum { RPX_CALL_RECORDS_CPU = 0, RPX_CALL_RECORDS_FULL = 1, RPX_CALL_RECORDS_OFF = 2 };

typedef struct rpx_runner_config {
    const char *model;            /* --model TARGET (required) */
    const char *inputs;           /* NPZ or NPY file (required unless sample_files, or HTTP) */
    /* distinct samples: NPZ files, one sample each, the same array names in
     * each; when n_sample_files > 0 they replace `inputs` (which may then be
     * NULL). The timed calls cycle through them sample-major. */
    const char *const *sample_files;
    size_t n_sample_files;
    int writable_inputs;          /* --writable-inputs: the arrays handed to the call are
                                     writable; their bytes are restored before every call,
                                     outside the timed span (the restore time is reported) */
    const char *inputs_label;     /* NULL: the report's inputs_file is the path; else what it
                                     shows instead (the Python package: "<dict>") */
    const char *output;           /* report path, "-" stdout; NULL: no file, the caller takes
                                     the report */
    int force;                    /* replace an existing file that is not a report */
    const char *output_option;    /* what the command calls `output` in messages; NULL: "--output" */
    int no_force_option;          /* the command has no --force: messages never suggest one */
    const char *device, *precision, *unit;
    long warmup, repeats;         /* warmup per process; repeats: timed calls in total */
    int processes;                /* worker processes; 0: the default for the target kind
                                     (RPX_RUNNER_DEFAULT_PROCESSES; 1 for HTTP, --gpu-time and
                                     --no-isolate) */
    /* placement (docs/cli.md): cpus "1", "2-3", "0,2": the model's process and
     * its threads run on those CPUs (NULL: the inherited mask); spread: the
     * processes take the listed (or allowed) CPUs in turn, one each, and their
     * count is rounded up to a multiple of those CPUs (rpx_runner_processes) */
    const char *cpus;
    int spread;
    json_t *meta;                 /* the report's metadata (borrowed), or NULL */
    /* model cost and bounds */
    const char *cost, *gpus, *gpu_spec;
    const char *const *bind_inputs;
    size_t n_bind_inputs;
    const char *const *bind_dims;
    size_t n_bind_dims;
    double flops, params;         /* NaN: not declared */
    int tf32, gpu_time;
    const double *budget_hz;      /* NULL: 5, 10, 30 */
    size_t n_budget_hz;
    /* isolation, watching */
    int isolate;                  /* 1 (default): workers are child processes */
    double timeout_s, call_timeout_s, setup_timeout_s; /* <= 0: none */
    double grace_s;               /* after SIGINT/SIGTERM (default 2) */
    int progress;                 /* a progress line on stderr (the only output it makes) */
    int call_records;             /* where each timed call ran: RPX_CALL_RECORDS_CPU (the
                                     default: the CPU per call, the counters once per process),
                                     RPX_CALL_RECORDS_FULL (every call's counters: 4 system calls
                                     a call) or RPX_CALL_RECORDS_OFF (nothing) */
    /* optional: what the run waits for, when a call, setup or load has taken
     * RPX_RUNNER_NOTICE_S seconds and then every RPX_RUNNER_NOTICE_S
     * ("waiting for URL: warmup call 2 of 10, 5 s so far (request timeout 60 s)"),
     * handed as a line without newline; from the watching process, so not with
     * isolate 0. NULL: none. */
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;
    /* HTTP and Python options; target.inputs_path is filled from `inputs` */
    rpx_target_options target;
    long max_failures;
    /* stopping: add processes until the p50's 95 % interval is within
     * +-target_precision of it (0: off), or max_time_s has passed (0: the
     * default, 60 s; 10 s with autorange) */
    double target_precision;
    double max_time_s;
    /* auto-ranging (--auto, Python's profile() default; src/runner/autorange.c):
     * `repeats` is not used; each process's timed calls go on, re-planned from
     * the calls measured so far, until they took min_time_s (0: 1 s) and the
     * p50's 95 % interval is within +-target_precision (0: 1 %), or until the
     * whole run would pass max_time_s; the report's `autorange` says what was
     * chosen and what limited it */
    int autorange;
    double min_time_s;
    /* a soft deadline: no timed call starts once this
     * many seconds have passed since the first process began, and the run completes
     * with the samples it has (at least one per process); 0: none */
    double stop_after_s;
    /* paced calls (a shared object or Python callable): one timed call per
     * 1/rate_hz seconds on absolute deadlines, late starts counted; the
     * report's `pacing` (src/runner/pacing.c). 0: back to back. */
    double rate_hz;
    /* with rate_hz: the statistics of the same model called back to back
     * (`latency` of a run without rate_hz), reported beside the paced ones in
     * pacing.back_to_back; NULL: none. Borrowed. */
    json_t *back_to_back_latency;
    /* 1 (default): time the cheap CPU probe before the run (the card's
     * cpu_probe, docs/system.md#cpu_probe); 0: cpu_probe is null, with why */
    int cpu_probe;
    /* output checks (docs/output-checks.md): an untimed reference pass over
     * every distinct sample, then a seeded share of the timed calls compared
     * with it outside the timed span (status outputs_differ when one differs) */
    int check_outputs;            /* --check-outputs */
    const char *reference_outputs; /* --reference-outputs DIR: the reference saved there by
                                     --save-outputs instead of the pass (implies the check) */
    const char *save_outputs;     /* --save-outputs DIR: the pass's outputs as NPZ files
                                     (implies the check) */
    double check_fraction;        /* --check-fraction: share of timed calls checked (0.01);
                                     at least one per process */
    double rtol, atol;            /* --rtol/--atol: numpy's allclose rule; both 0: bit-exact */
    /* audits (docs/audits.md): "cache", "seed" or "cache,seed" (NULL: none).
     * cache: the target measured twice more, interleaved by process, every
     * call on sample 0 against calls cycling through the distinct samples;
     * seed: measured again with the sample-order/schedule seed + 1. The
     * report's `audit`. audit_threshold: what the cache audit calls faster
     * (0.10, MLPerf LoadGen TEST04); audit_seed_threshold: how far the seed
     * audit's result may move (0.05, TEST05). */
    const char *audit;
    double audit_threshold, audit_seed_threshold;
    /* the cycle through the distinct samples starts this many samples later
     * (0; the seed audit's other arm: 1) */
    long sample_shift;
    /* HTTP --server-metrics URL: Prometheus text read before and after the
     * run (vLLM's prefix-cache counters); the report's server_metrics */
    const char *server_metrics;
    /* 1: keep when each process set up and tore down the model and when each
     * call and input restore began (the report's `timeline`, which `rpxprof
     * trace` draws); 0 (default): not kept */
    int timeline;
    /* --layers [N]: N profiled calls in each worker process after its timed
     * calls, through the target's per-node profiler (layers_begin/layers_end
     * of rpx_target_hooks; the report's `layers`, docs/runtimes.md "Every
     * layer"); 0 (default): off */
    long layers;
    /* which options of the run options' table a front end set, by the option's
     * index (rpx_run_option_set_text/_number mark them): the rules that ask
     * whether an option was given (--max-time, --repeats beside --rate x
     * --duration, an HTTP-only option on another target) read it */
    unsigned char given[RPX_RUN_OPTIONS_MAX];
    /* the front end that asks (an rpx_option_spelling of rpxprof/options.h): how the
     * runner's own messages name options; 0: the command line's (--repeats) */
    int spelling;
    /* 1: the result's report leaves out the per-call arrays the written report
     * holds (latency_samples_ms, call_records' cpu_start and cpu_end are null
     * there), so that rpxprof never holds them as a tree (docs/report.md, the
     * bound); 0 (default): the result's report is the written one */
    int lean_report;
    /* --commit TEXT (commit=): the commit of the version under test, recorded in the
     * report's session.version (commit_source "option"); NULL: `git rev-parse HEAD` of the
     * model's folder when it is a git checkout (docs/report.md#session) */
    const char *commit;
    /* the session the run belongs to (its report's session.id; src/session/); NULL: a new
     * one. The two sides of rpx_runner_run_pair and the audits' arms share their run's. */
    const char *session_id;
    /* --history PATH (docs/history.md): the session recorded into this history
     * (an SQLite file, or postgresql://...) once the report is built; NULL: the
     * environment's RPXPROF_HISTORY when set, else none. A history that cannot
     * be written leaves the report as it is: res->history_failed says so. */
    const char *history;
    int no_history;               /* 1: record nothing, whatever history and RPXPROF_HISTORY say
                                     (an audit's arm; batch records each job itself) */
    int output_temporary;         /* 1: `output` is removed after the command (compare --run
                                     without --out-dir): the history records no report path */
} rpx_runner_config;

/* The one status map: X(NAME, report word, exit code) for each way a run that
 * built a report ends. The runner's status (RPX_RUNNER_NAME), the word of the
 * report's "status" (rpx_runner_status_word) and rpxprof's exit code
 * (RPX_EXIT_NAME, rpx_runner_exit_code) all come from this one table, which
 * the runner, the CLI and the Python package (its errors' .code) read;
 * docs/errors.md's table of exit codes is checked against it
 * (tests/unit/test_status.c). An interrupted run exits 130 for SIGINT and
 * RPX_EXIT_TERMINATED (143) for SIGTERM. The order is the ABI's: append only. */
#define RPX_RUNNER_STATUS_MAP(X)                                                    \
    X(COMPLETE, "complete", 0)                                                       \
    X(INTERRUPTED, "interrupted", 130) /* SIGINT/SIGTERM (see stop_signal) */       \
    X(CRASHED, "crashed", 3)           /* the model's process died from a signal */ \
    X(TIMED_OUT, "timed_out", 4)       /* --timeout / --call-timeout */             \
    X(KILLED, "killed", 5)             /* SIGKILL from elsewhere (OOM killer) */     \
    X(CALLS_FAILED, "failed", 6)       /* every call failed, or --max-failures */   \
    X(OUTPUTS_DIFFER, "outputs_differ", 7) /* --check-outputs: outputs differed */

/* Exit codes of rpxprof (docs/errors.md), which the Python package's errors
 * carry as .code too: those of a run's status from the map above
 * (RPX_EXIT_COMPLETE is RPX_EXIT_OK), and those of no status. */
enum {
    RPX_EXIT_OK = 0,
    RPX_EXIT_FAILURE = 1,         /* the run, the inputs or the model failed: no report */
    RPX_EXIT_USAGE = 2,           /* bad command line */
#define RPX__EXIT_OF_STATUS(name, word, code) RPX_EXIT_##name = (code),
    RPX_RUNNER_STATUS_MAP(RPX__EXIT_OF_STATUS)
#undef RPX__EXIT_OF_STATUS
    RPX_EXIT_REGRESSION = 3,      /* compare --fail-on-regression: the verdict is slower (the
                                     same number as CRASHED, as it always was) */
    RPX_EXIT_EXTRA_OUTPUT = 8,    /* the reports written, but another output of the command
                                     (--html, --trace) could not be: the message names it */
    RPX_EXIT_HISTORY = 9,         /* the report written, but the history (--history,
                                     RPXPROF_HISTORY) could not be: the message names it */
    RPX_EXIT_TERMINATED = 143     /* SIGTERM: report written with status interrupted */
};

typedef enum rpx_runner_status {
#define RPX__STATUS_ENUM(name, word, code) RPX_RUNNER_##name,
    RPX_RUNNER_STATUS_MAP(RPX__STATUS_ENUM)
#undef RPX__STATUS_ENUM
} rpx_runner_status;

typedef struct rpx_runner_result {
    json_t *report;               /* the report (owned) */
    rpx_runner_status status;
    int stop_signal;              /* SIGINT or SIGTERM when interrupted, else 0 */
    int abandoned;                /* the call in progress was abandoned after the grace */
    size_t measured;              /* timed calls measured */
    int processes;                /* worker processes that ran */
    int written;                  /* the report was written to `output` */
    int to_stdout;                /* ... and that is this process's stdout */
    json_t *warnings;             /* strings to show the user (owned) */
    char error[1024];             /* why the run did not complete ("" when it did) */
    int history_recorded;         /* the session was recorded into the history */
    int history_failed;           /* a history was asked for and could not be written: */
    char history_error[1024];     /* why, naming the history (also one of `warnings`) */
} rpx_runner_result;

RPX_API void rpx_runner_config_init(rpx_runner_config *c);
/* The worker processes a run of `c` uses: c->processes when above 0, else
 * the default for its kind (RPX_RUNNER_DEFAULT_PROCESSES; 1 for an HTTP
 * target, gpu_time and no isolation), never more than c->repeats (one call
 * each at least). With spread over n CPUs: rounded up to a multiple of n (down
 * when that passes c->repeats or RPX_RUNNER_MAX_PROCESSES; n at least). *asked (may be NULL): the number before that cap. The
 * runner's one rule: batch's same-work check calls it to predict the run. */
RPX_API int rpx_runner_processes(const rpx_runner_config *c, int *asked);
/* --cpus LIST ("1", "2-3", "0,2") as CPU numbers, ascending, into cpus (at
 * most max): how many, or RPX_EUSAGE (err, may be NULL: why). */
RPX_API int rpx_runner_cpus_list(const char *text, int *cpus, int max, rpx_error *err);
/* 0 when a report was built (and written, when `output` is set): see
 * res->status. A negative code when nothing was: err says why; RPX_EUSAGE
 * when an option names something that does not exist (an unknown GPU key)
 * or the output is one of the files the run reads.
 * res is always initialised; free it with rpx_runner_result_free. */
RPX_API int rpx_runner_run(const rpx_runner_config *cfg, rpx_runner_result *res, rpx_error *err);
RPX_API void rpx_runner_result_free(rpx_runner_result *res);
/* The report's inputs_sha256 for these --inputs (files, or folders standing
 * for their *.npz in name order): one file, the SHA-256 of its bytes;
 * several, the SHA-256 of their lower-case hex SHA-256s in order, each
 * followed by '\n'. 0, or a negative code (err names the file). */
RPX_API int rpx_runner_inputs_sha256(const char *const *files, size_t n, char hex[65], rpx_error *err);
/* Every file a run of `c` resolves and reads: the inputs (a folder's *.npz
 * files too), the model's files (rpx_target_files: a shared object, the demo
 * library, a plugin, a Python module's files), --cost, --body and --gpu-spec.
 * The report's guard never replaces one of them, even with force; batch
 * protects every job's. 0 and a malloc'ed list of malloc'ed paths
 * (NULL-terminated), or RPX_ENOMEM. */
RPX_API int rpx_runner_read_files(const rpx_runner_config *c, char ***files, size_t *n_files,
                                  rpx_error *err);
/* The exit code of a run that built a report (docs/cli.md): 0 complete, 130
 * or 143 interrupted by SIGINT or SIGTERM, 3 crashed, 4 timed out, 5 killed,
 * 6 calls failed, 7 outputs differed (--check-outputs). */
RPX_API int rpx_runner_exit_code(const rpx_runner_result *res);
/* The word a report's "status" holds for st ("complete", "timed_out", ...;
 * "failed" for a value outside the map). */
RPX_API const char *rpx_runner_status_word(rpx_runner_status st);
/* Two runs measured together, for a comparison: their worker processes
 * alternate A B, B A, A B, ... (process i of each in turn), so that a drift of
 * the machine falls on both. Both need isolation; a target precision is not
 * used. Results as rpx_runner_run's, one each. */
RPX_API int rpx_runner_run_pair(const rpx_runner_config *a, const rpx_runner_config *b,
                        rpx_runner_result *res_a, rpx_runner_result *res_b, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
