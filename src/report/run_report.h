/* run_report.h — the report of one run from what it measured (run_report.c):
 * the runner gathers the data (samples of every worker process, the sample
 * set, the stopping rule, the pacing) and hands it over; every key of the
 * "rpxprof.profile/1" report is set here or in profile.c, nowhere else.
 * Internal: the struct follows the runner's needs, not a stable API. */
#ifndef RPX_REPORT_RUN_REPORT_H
#define RPX_REPORT_RUN_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "device/nvml.h"
#include "measure/call_record.h"
#include "measure/rss_trend.h"
#include "rpxprof/report.h"

/* --timeline: when one worker process's phases, calls and restores began
 * (CLOCK_MONOTONIC ns, the samples' clock; 0: not reached; borrowed arrays,
 * the process's `measured` and `warmup_kept` entries). timeline.c. */
typedef struct rpx_run_timeline {
    int pid;
    int64_t load_start_ns, setup_start_ns, setup_end_ns, teardown_start_ns, teardown_end_ns;
    const int64_t *call_start_ns;
    const int64_t *restore_start_ns; /* NULL: no restores (read-only inputs) */
    const int64_t *warmup_start_ns;
    const int64_t *warmup_restore_ns; /* {start, duration} pairs; NULL: none */
    const rpx_rss_trend *trend;   /* the resident-set readings; NULL: none */
    /* an open-loop HTTP load: each successful request's intended send time,
     * beside its sample (`measured` entries); NULL: none */
    const int64_t *request_intended_ns;
} rpx_run_timeline;

/* What one worker process measured (borrowed arrays). */
typedef struct rpx_run_process {
    const int64_t *samples;       /* timed calls' durations, ns */
    size_t measured;
    const int64_t *warmup_samples; /* the warmup calls kept, ns */
    long warmup_kept;
    const int64_t *restore_samples; /* --writable-inputs: each timed call's restore, ns */
    int64_t restore_warmup_ns;    /* the warmup calls' restores together */
    const int64_t *start_lag;     /* --rate: how late each timed call started, ns */
    long late_starts;
    /* where each timed call ran (`measured` entries) and how it was recorded;
     * NULL: not recorded (call_records.c) */
    const rpx_call_records *records;
    const rpx_call_record_info *record_info;
    /* --call-records cpu: the counters over the timed loop (record_info->full 0) */
    const rpx_call_totals *record_totals;
    const rpx_run_timeline *timeline; /* NULL: not kept (no --timeline) */
} rpx_run_process;

/* Where a run that did not complete stood (the report's `failure`). */
typedef struct rpx_run_failure {
    const char *phase;            /* "load", "setup", "loop", "teardown", "done" */
    int in_loop;                  /* call_index and in_warmup mean something */
    long call_index;              /* counted over every process's timed calls */
    int in_warmup;
    int signal;                   /* 0: none */
} rpx_run_failure;

/* A measured section's key in the report and its value (runner/section.h):
 * the runner's sections merge what the processes measured, and this file
 * sets the keys, once, where the report has them. */
typedef struct rpx_run_key {
    const char *key;
    json_t *value;                /* borrowed; NULL: null */
    int optional;                 /* a key only the runs that measure it have (outputs): set
                                     last, after audit and server_metrics */
} rpx_run_key;

typedef struct rpx_run_data {
    rpx_profile_desc desc;        /* the keys profile.c lays out; desc.timing_scope NULL:
                                     chosen here from the kind and the inputs */
    int http_open_loop;           /* an HTTP target on a --rate schedule */
    const rpx_run_failure *failure; /* NULL: none (desc.failure is built from it) */
    const rpx_run_process *procs;
    int n_procs;
    size_t measured;              /* timed calls over every process */
    json_t *latency_ci;           /* the intervals (borrowed), or NULL */
    const rpx_rss_summary *rss_trend; /* the first process's; NULL: its loop never ran */
    /* the distinct samples (one for a plain --inputs FILE) */
    size_t n_samples;
    const char *const *sample_paths;
    const char *const *sample_ids;
    int list_sample_files;        /* inputs_file lists every file (no --inputs label) */
    int writable_inputs;
    size_t bytes_per_sample;      /* what one restore copies */
    long repeats;
    /* --target-precision (0: off) and how far the stopping rule got */
    double target_precision, achieved, seconds, max_time_s;
    int converged;
    const char *stopped;          /* why the rule stopped before converging ("" or NULL: the
                                     time limit), and why the interval is null when it is */
    const char *why_none;
    /* --rate for a local target (0: off), the back-to-back latency measured
     * before it (borrowed) or NULL */
    double rate_hz;
    json_t *back_to_back;
    int processes_asked;          /* more processes than calls were asked: 0 when not */
    int python;                   /* run from rpxprof.profile(): the sentences that advise an
                                     option name its keyword (repeats=, cpus=) */
    int processes;
    json_t *warnings;             /* the notes the user should see too, or NULL (desc.notes:
                                     the report's notes, appended to) */
    json_t *placement;            /* the report's placement (borrowed), or NULL */
    /* the measured sections' keys, set in their order before `variance`
     * reads the report (a key absent here is absent from the report) */
    const rpx_run_key *sections;
    size_t n_sections;
    /* the run's other parts (borrowed; NULL: the key is left out) */
    json_t *audit;                /* --audit (runner/audit.c) */
    json_t *server_metrics;       /* --server-metrics (runner/server_metrics.c) */
    json_t *autorange;            /* --auto: the report's autorange (runner/autorange.c;
                                     borrowed); NULL: null */
} rpx_run_data;

/* --timeline on cuda runs: the GPU watch's readings (borrowed; runner/gpu_watch.c). */
typedef struct rpx_run_gpu_readings {
    int watched;                  /* a watch ran (else the timeline's gpu is null) */
    const rpx_nvml_reading *readings;
    size_t n;
    long dropped;
} rpx_run_gpu_readings;

/* The report's `timeline` (timeline.c): null unless a process kept one. */
json_t *rpx__timeline_json(const rpx_run_data *d, const rpx_run_gpu_readings *gpu);

/* The report, or NULL out of memory. */
json_t *rpx__run_report(const rpx_run_data *d);

#endif
