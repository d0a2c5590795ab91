/* runner_internal.h — what the runner's rooms share: the cost and roofline
 * layers (layers.c), the notes (notes.c) and the worker processes (workers.c). */
#ifndef RPX_RUNNER_INTERNAL_H
#define RPX_RUNNER_INTERNAL_H

#include <jansson.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/kinds.h"
#include "rpxprof/cost.h"
#include "rpxprof/memory.h"
#include "rpxprof/model.h"
#include "rpxprof/npz.h"
#include "rpxprof/options.h"
#include "rpxprof/roofline.h"
#include "measure/rss_trend.h"
#include "rpxprof/runner.h"
#include "report/run_report.h"
#include "runner/stage.h"

/* ---- options.c ---- */
/* Every option's default from the table, into a zeroed config. */
void rpx__run_options_defaults(rpx_runner_config *c);

/* ---- audit.c ---- */
#define RPX__AUDIT_CACHE 1u
#define RPX__AUDIT_SEED 2u
/* "cache", "seed", "cache,seed": 0 and the RPX__AUDIT_* bits (flags may be
 * NULL), or -1 */
int rpx__audit_parse(const char *text, unsigned *flags);
/* How an audit measures its two arms together: rpx_runner_run_pair's shape. */
typedef int (*rpx__run_pair_fn)(const rpx_runner_config *a, const rpx_runner_config *b,
                                rpx_runner_result *res_a, rpx_runner_result *res_b,
                                rpx_error *err);
/* The first SIGINT/SIGTERM the run got, 0 if none (runner.c gives
 * rpx__stage_stop_signal: the run's handlers stay through its audits). */
typedef int (*rpx__stop_signal_fn)(void);
/* The audits of `flags` (RPX__AUDIT_*, parsed from c->audit once, by the
 * plan), as the report's `audit` object (*audit NULL when none): each measures the target again through run_pair (runner.c gives
 * rpx_runner_run_pair: the audits sit beside the runner, not above and below
 * it at once), in the run's `processes` (2 at least) interleaved; when
 * stop_signal (NULL: never) says a signal came, the audit in progress ends
 * not_run "interrupted" and the next does not start. An audit
 * that cannot run says why in it (verdict not_run); warnings gets what the
 * user must see. A negative code only when nothing could be tried. */
int rpx__audit_run(const rpx_runner_config *c, unsigned flags, int processes,
                   rpx__run_pair_fn run_pair, rpx__stop_signal_fn stop_signal, json_t **audit,
                   json_t *warnings, rpx_error *err);

/* ---- server_metrics.c ---- */
typedef struct rpx__counters {
    double hits, queries;         /* prefix-cache counters (NAN: not read) */
    int pair;                     /* which names were found; -1: none (why says) */
    char why[1024];
} rpx__counters;
/* The counters at `url` now: 0, or -1 with out->why. */
int rpx__server_metrics_read(const char *url, rpx__counters *out);
/* The counters in a Prometheus text exposition (the first pair of names
 * found, every labelled series summed): 0, or -1 with out->why. */
int rpx__server_metrics_parse(const char *text, rpx__counters *out);
/* The report's server_metrics from the counters before and after the run;
 * a warning when the hit rate is above 1 % or cannot be read. */
json_t *rpx__server_metrics_json(const char *url, const rpx__counters *before,
                                 const rpx__counters *after, json_t *warnings);

/* ---- placement.c (the placement struct: plan.h) ---- */
/* "1", "2-3", "0,2": 0, or -1 and why (the list's syntax). */
int rpx__cpus_parse(const char *text, cpu_set_t *set, char *why, size_t size);
/* This process's affinity (sched_getaffinity): 0 or -1. */
int rpx__cpus_allowed(cpu_set_t *set);
/* "0-1,4" */
void rpx__cpus_text(const cpu_set_t *set, char *buf, size_t size);
json_t *rpx__cpus_json(const cpu_set_t *set);
/* how a bad value names option NAME: spelled, or from Python its key (options.c) */
const char *rpx__option_value_label(const char *name, rpx_option_spelling sp, char *buf,
                                    size_t size);
/* An option with a value as the caller writes it (options.c): "--repeats 100"
 * (CLI), "repeats=100" / device="cpu" (Python), "repeats 100" (a manifest's
 * key); value NULL: the name alone ("--precision", "precision="). For the
 * notes and warnings that tell the user what to give, worded at the source. */
const char *rpx__option_say(const char *name, const char *value, rpx_option_spelling sp,
                            char *buf, size_t size);
/* The placement of a checked config (--cpus parsed once, for the plan). */
int rpx__placement_plan(const rpx_runner_config *c, placement *pl, rpx_error *err);
/* The CPUs process i is pinned to: 1 and *set, or 0 (inherit: the mask stays). */
int rpx__placement_cpus_of(const placement *pl, int process, cpu_set_t *set);
/* --spread: how many CPUs the processes rotate over; 0 without --spread (for
 * rpx_runner_processes, which has no plan). */
int rpx__placement_spread_cpus(const rpx_runner_config *c);
/* The report's `placement`: policy, cpus_allowed, cpus_requested, by_process
 * (each process's CPUs as it read them itself; NULL or empty: null). */
json_t *rpx__placement_json(const placement *pl, const cpu_set_t *const *process_cpus, int n);

/* ---- layers.c ---- */
typedef struct layers {
    rpx_cost *cost;
    rpx_efficiency eff;
    json_t *efficiency;
    rpx_gpu_table *table;
    const rpx_gpu_spec *chosen[32];
    size_t n_chosen;
} layers;

/* A model file's run (model_file.c): the runtime resolved, the inputs made
 * when none were given (a temporary NPZ file, removed at the end). */
typedef struct model_file_prep {
    int on;                       /* the target is a model file run by a runtime */
    rpx_runtime_choice choice;
    int made;                     /* inputs_path was made (and is removed by _free) */
    char inputs_path[4096];
    json_t *generated;            /* the report's inputs_generated, or NULL */
    char **binds;                 /* given inputs: their shapes, then --shape/--input */
    size_t n_npz_binds;           /* the first ones, malloc'ed */
} model_file_prep;
/* Before the run: the runtime (refused with the fix when it cannot run), the
 * file costed (c->cost), the inputs made (c->inputs). 0 for other kinds. */
int rpx__model_file_prepare(rpx_runner_config *c, const struct rpx_kind *row, model_file_prep *m,
                            rpx_error *err);
/* The report's inputs_generated (null when the inputs were given). */
void rpx__model_file_report(const model_file_prep *m, json_t *report);
void rpx__model_file_free(model_file_prep *m);

/* The cost layer and the GPU table, before anything is measured. */
int rpx__layers_prepare(const rpx_runner_config *o, layers *l, rpx_error *err);
/* After the run: the bounds on the chosen targets and the real-time budget. */
void rpx__layers_finish(const rpx_runner_config *o, layers *l, const rpx_inputs *in,
                        double p50_ms, json_t *cuda_section, json_t *notes, json_t **roofline,
                        json_t **budget);
void rpx__layers_free(layers *l);
/* --layers (layers_join.c): the measured rows of the report's `layers` (section_layers.c)
 * joined in place with the per-op cost of l->cost, the host CPU's bound and each --gpu's;
 * notes for what could not be joined. */
void rpx__layers_join(json_t *value, const rpx_runner_config *o, const layers *l,
                      const json_t *target_section, json_t *notes);
/* --budget-hz's rates into hz (at most 16); 0: the defaults. */
size_t rpx__budget_rates(const rpx_runner_config *o, double hz[16]);

/* ---- notes.c ---- */
/* "HxW" of the first image-like input (rank >= 3, last dimension 1, 3 or 4). */
void rpx__input_resolution(const rpx_inputs *in, char *buf, size_t size);
/* A note for the report that the user should also see (warnings may be NULL). */
void rpx__warn_note(json_t *notes, json_t *warnings, const char *text);
/* The open-loop load's warnings (http.load): requests cut when --duration and --drain
 * ended, --concurrency lowered to the open-file limit. */
void rpx__load_notes(const json_t *load, json_t *notes, json_t *warnings);

/* gpu_watch.c — NVML sampled by the parent during the timed calls. */
struct rpx_nvml;
struct rpx_nvml_watch;
struct rpx_nvml_watch *rpx__gpu_watch_create(struct rpx_nvml *nvml, int isolate);
void rpx__gpu_watch_tick(struct rpx_nvml_watch *watch);
void rpx__gpu_watch_report(const struct rpx_nvml_watch *watch, json_t *cuda, json_t *notes,
                           json_t *warnings);
void rpx__drift_note(const int64_t *samples, size_t n, json_t *notes, json_t *warnings);
void rpx__growth_notes(const rpx_rss_summary *t, json_t *cuda_growth, json_t *notes,
                       json_t *warnings);
json_t *rpx__make_notes(const rpx_runner_config *o, size_t measured, const rpx_memory_peaks *m);

/* ---- samples.c ---- */
typedef struct samples_map {
    void *addr;
    size_t len;
} samples_map;

/* The distinct samples of a run (one, for a plain --inputs FILE). */
typedef struct samples_set {
    size_t n;                     /* samples (files) */
    char **paths;                 /* each file, a folder expanded to its *.npz in name order */
    char **ids;                   /* each file's stem: the report's sample_id */
    rpx_npz **npz;                /* each file, loaded once (read-only buffers) */
    rpx_inputs *pristine;         /* n: the loaded arrays, in the first file's order */
    rpx_tensor *pristine_tensors; /* their tensors (several samples) */
    rpx_inputs *work;             /* n: what the calls receive: `pristine`, or writable
                                     copies with --writable-inputs */
    rpx_tensor *work_tensors;
    samples_map *maps;            /* the writable copies' mappings */
    int writable;
    size_t bytes_per_sample;      /* what one restore copies */
    char sha[65];                 /* the inputs hash (rpx_runner_inputs_sha256) */
} samples_set;

/* The files `given` stand for: each file as it is, a folder as its *.npz
 * (regular files, name order; none is an error). malloc'ed list of
 * malloc'ed strings. */
int rpx__samples_paths(const char *const *given, size_t n_given, char ***out, size_t *n_out,
                       rpx_error *err);
/* Load c's samples (sample_files, else inputs; neither: one sample of no
 * arrays, no path, no hash): the same arrays in each, the hash, the writable
 * copies when asked. Free with rpx__samples_free
 * (also after a failure). */
int rpx__samples_load(const rpx_runner_config *c, samples_set *s, rpx_error *err);
void rpx__samples_free(samples_set *s);
/* In the model's process, around the loop when the inputs are read-only: a
 * write into them crashes as before, but first stores {sample + 1, array}
 * into fault[0..1] (a block the parent reads). */
void rpx__samples_guard_begin(const rpx_inputs *samples, size_t n, int *fault);
void rpx__samples_guard_end(void);

/* ---- workers.c ---- */
/* The worker processes of one run, one after another, each a run_shared
 * block with its slice of the timed calls. */
typedef struct workers {
    run_shared *proc[RPX_RUNNER_MAX_PROCESSES];
    long slice[RPX_RUNNER_MAX_PROCESSES]; /* timed calls asked of each */
    int n;                        /* processes started */
    size_t measured;              /* samples over all processes */
    int outcome;                  /* the first outcome that was not complete, else complete */
    int last;                     /* the process whose outcome that is */
    /* the stopping rule, when a target precision was given */
    int converged;
    double achieved;              /* the p50 interval's half width / p50, NaN if none */
    char why_none[256];           /* why the p50 interval is null when achieved is NaN */
    char stopped[320];            /* why the stopping rule stopped before converging, or "" */
    double seconds;
    int64_t start_ns;
} workers;

void rpx__workers_init(workers *w);
/* The timed calls of process i when `repeats` are spread over `processes`
 * (the first ones take the remainder; processes past them take the base). */
long rpx__workers_slice(long repeats, int processes, int i);
/* One more process of `slice` timed calls. 1: it completed, go on; 0: stop
 * (it did not complete, a signal came, or the limit of processes); < 0: the
 * first block could not be mapped (err says why). */
int rpx__workers_step(const run_plan *plan, long slice, workers *w, rpx_error *err);

/* Run the workers: plan->processes of them (more, up to
 * RPX_RUNNER_MAX_PROCESSES, while a target precision is not reached and time
 * is left). Returns 0, or -1 when the first block cannot be mapped (err says
 * why). */
int rpx__workers_run(const run_plan *plan, workers *w, rpx_error *err);
void rpx__workers_free(workers *w);
/* One run_shared that stands for all the processes, for the report code
 * (its samples stay in the processes' blocks): the counts summed, the
 * largest peaks, the last process's outcome. Returns the timed calls of the
 * processes before the last. */
size_t rpx__workers_merge(const workers *w, run_shared *m);
/* Where a run that did not complete stood; call_index counts `offset` timed
 * calls of the processes before. */
rpx_run_failure rpx__workers_failure(const run_shared *sh, size_t offset);
/* The report's view of each process (its samples, warmup, restores,
 * pacing), calloc'ed; NULL out of memory. */
rpx_run_process *rpx__workers_views(const workers *w);
/* A note (and a warning) for each process whose export did not fit its
 * block or could not be written: never silence. */
void rpx__workers_export_notes(const workers *w, json_t *notes, json_t *warnings);
/* A signal (sig) stopped a run that had processes left to run `when` ("between
 * two worker processes", "during the audit"): its outcome becomes interrupted,
 * the last process's error says so. Nothing when no process ran or the run had
 * already ended otherwise. */
void rpx__workers_interrupted(workers *w, int sig, const char *when);
/* Every sample (ms), process by process; offsets/counts per process. The
 * arrays are malloc'ed (NULL when there is no sample and out of memory). */
double *rpx__workers_samples_ms(const workers *w, size_t *offsets, size_t *counts);
/* latency_ci (rpx_stats_latency_ci at 95 %) with every interval widened by
 * the clock's resolution on each side ("widened_by_resolution_ms"). */
json_t *rpx__workers_latency_ci(const workers *w, const double *ms, const size_t *offsets,
                                const size_t *counts);

/* ---- vary.c: what each worker varies for itself (docs/statistics.md) ---- */
#define RPX_VARIED_INPUTS 1u  /* its own copy of the inputs: fresh pages, a random offset */
#define RPX_VARIED_HEAP 2u    /* a random pad on the heap */
#define RPX_VARIED_MMAP 4u    /* a random pad in the mmap space */
#define RPX_VARIED_STACK 8u   /* a random pad below the stage's frame (taken by stage.c) */
#define RPX_VARIED_RAN 16u    /* the worker ran rpx__vary_worker (an isolated process) */
/* The bytes of every array of n samples. */
size_t rpx__vary_input_bytes(const rpx_inputs *samples, size_t n);
/* Whether the workers copy the inputs: isolated processes, inputs of 1 byte to 256 MiB. */
int rpx__vary_inputs_on(const run_plan *plan);
/* In the worker, before its target is loaded: the pads, and its own copy of
 * local->samples (a copy of the run's plan); sh->varied says what was done,
 * sh->stack_pad the stack pad the stage then takes. */
void rpx__vary_worker(run_plan *local, int process_index, run_shared *sh);
/* In the worker (an isolated process), the stage: rpx__vary_worker on a copy
 * of the plan, then `stage` on it below the stack pad. */
void rpx__vary_stage(const run_params *p, run_shared *sh,
                     void (*stage)(const run_params *, run_shared *));
/* latency_ci's "varied" (what every process sampled) and "fixed_per_run"
 * (what none could: time, and the inputs when they were not copied, with why). */
void rpx__vary_describe(const workers *w, json_t *ci);

/* ---- autorange.c (above the workers: each process is one rpx__workers_step) ---- */
struct rpx__ar_proc;
typedef struct rpx__autorange {
    int on;                       /* rpx_runner_config.autorange */
    double min_time_s, max_time_s, precision; /* resolved: the defaults filled in */
    long warmup;                  /* asked of every process */
    int processes;                /* planned */
    long max_calls;               /* kept over the run at most */
    int64_t start_ns, end_ns;     /* the run's start, and when its last call must end */
    int capped;                   /* a process filled the most calls auto-ranging keeps */
    char limited[320];            /* processes not started for lack of time, or "" */
    struct rpx__ar_proc *procs;   /* shared with the workers, one per process */
    /* the rule's running state in the process being run (its own copy after a fork) */
    int index;
    size_t summed;
    int64_t sum_ns;
    int64_t last_step_ns;         /* how long the last process of this run took, all told */
} rpx__autorange;

/* c->autorange: resolve its defaults into ar and make c a plain run (its
 * target precision is auto-ranging's; repeats the most calls kept); without
 * it: --max-time's default. Before the plan is built. 0 or RPX_ENOMEM. */
int rpx__autorange_prepare(rpx_runner_config *c, rpx__autorange *ar, rpx_error *err);
/* When on: the plan's stopping hook (plan->replan, replan_ctx, warmup_max_s),
 * which every process's timed loop asks; off: nothing. */
void rpx__autorange_attach(rpx__autorange *ar, run_plan *plan);
/* Two runs measured together (compare --run) share one budget: ar takes with's
 * time, and each keeps half the calls. */
void rpx__autorange_share_end(rpx__autorange *ar, rpx__autorange *with);
/* One more process, its calls ended by the rule; steps_left: the processes still
 * to run in this budget, this one included. As rpx__workers_step: 1, 0 or < 0. */
int rpx__autorange_step(rpx__autorange *ar, const run_plan *plan, int steps_left, workers *w,
                        rpx_error *err);
/* The run's processes, one after another, within the budget. 0 or < 0. */
int rpx__autorange_run(rpx__autorange *ar, const run_plan *plan, workers *w, rpx_error *err);
/* The report's `autorange` (NULL when off), and its sentence appended to notes. */
json_t *rpx__autorange_json(const rpx__autorange *ar, const workers *w, json_t *notes);
void rpx__autorange_free(rpx__autorange *ar);

/* session_run.c: the report's "session" block (src/session/), set in report; id and
 * started are the session's. 0, or -1 out of memory. */
int rpx__run_session(const rpx_runner_config *c, json_t *report, const char *id,
                     const char *started);
/* history.c: the session of res->report recorded into c->history (or
 * RPXPROF_HISTORY); a failure sets res->history_failed and history_error and
 * adds a warning, never touching the report */
void rpx__runner_record_history(const rpx_runner_config *c, rpx_runner_result *res);

#endif
