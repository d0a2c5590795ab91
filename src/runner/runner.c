/* runner.c — owns a whole run as one call (include/rpxprof/runner.h): the
 * output's place checked first, the inputs loaded once, the cost layer, the
 * worker processes, and the report assembled from what they left. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "rpxprof/clock.h"
#include "rpxprof/error.h"
#include "rpxprof/latency.h"
#include "rpxprof/npz.h"
#include "device/nvml.h"
#include "common/output.h"
#include "rpxprof/options.h"
#include "rpxprof/report.h"
#include "rpxprof/stats.h"
#include "rpxprof/system.h"
#include "rpxprof/target.h"
#include "report/run_report.h"
#include "runner/outputs.h"
#include "runner/runner_internal.h"

void rpx_runner_config_init(rpx_runner_config *c)
{
    /* one sample (`inputs`), read-only, the path as inputs_file; the options'
     * defaults are those of their table (options.c) */
    memset(c, 0, sizeof *c);
    rpx__run_options_defaults(c);
}

/* the target's kind: a caller-made target's own name, else the --model grammar's */
static const char *config_kind(const rpx_runner_config *c)
{
    return c->target.custom && c->target.custom->kind_name ? c->target.custom->kind_name
                                                           : rpx_target_kind_name(c->model);
}

int rpx_runner_processes(const rpx_runner_config *c, int *asked)
{
    int p = c->processes > 0 ? c->processes
          : (!c->isolate || c->gpu_time || strcmp(config_kind(c), "http") == 0)
                ? 1
                : RPX_RUNNER_DEFAULT_PROCESSES;
    int n = rpx__placement_spread_cpus(c);
    if (asked) *asked = p;
    if (n > 0) { /* --spread: the same number of processes on each CPU */
        long cap = c->repeats >= 1 && c->repeats < RPX_RUNNER_MAX_PROCESSES
                       ? c->repeats
                       : RPX_RUNNER_MAX_PROCESSES;
        long up = ((long)p + n - 1) / n * n;
        if (up > cap) up = cap / n * n;
        if (up < n) up = n;
        return (int)up;
    }
    return c->repeats >= 1 && p > c->repeats ? (int)c->repeats : p;
}

void rpx_runner_result_free(rpx_runner_result *res)
{
    if (!res) return;
    json_decref(res->report);
    json_decref(res->warnings);
    res->report = res->warnings = NULL;
}

static const char *status_name(int outcome, rpx_runner_status *st)
{
    switch (outcome) {
    case OUTCOME_INTERRUPTED: *st = RPX_RUNNER_INTERRUPTED; return "interrupted";
    case OUTCOME_CRASHED: *st = RPX_RUNNER_CRASHED; return "crashed";
    case OUTCOME_TIMED_OUT: *st = RPX_RUNNER_TIMED_OUT; return "timed_out";
    case OUTCOME_KILLED: *st = RPX_RUNNER_KILLED; return "killed";
    case OUTCOME_CALLS_FAILED: *st = RPX_RUNNER_CALLS_FAILED; return "failed";
    default: *st = RPX_RUNNER_COMPLETE; return "complete";
    }
}

/* Where a run that did not complete stood; call_index counts the timed calls
 * of every process before. */
static rpx_run_failure failure_of(const run_shared *sh, size_t offset)
{
    static const char *phases[] = {"load", "setup", "loop", "teardown", "done"};
    rpx_run_failure f;
    int ph = sh->phase;
    f.phase = ph >= 0 && ph <= PHASE_DONE ? phases[ph] : "?";
    f.in_loop = ph == PHASE_LOOP;
    f.call_index = sh->failed_in_warmup ? sh->failed_call : (long)offset + sh->failed_call;
    f.in_warmup = sh->failed_in_warmup;
    f.signal = sh->signal;
    return f;
}

/* The largest of the processes' peaks; unavailable only when none has one. */
static void merge_peaks(rpx_memory_peaks *into, const rpx_memory_peaks *m, int first)
{
    if (first) {
        *into = *m;
        return;
    }
    if (m->lifetime_peak_bytes > into->lifetime_peak_bytes)
        into->lifetime_peak_bytes = m->lifetime_peak_bytes;
    if (m->inference_peak_bytes > into->inference_peak_bytes)
        into->inference_peak_bytes = m->inference_peak_bytes;
}

/* cuda peaks {device: MiB}: the largest over the processes */
static void merge_cuda_peaks(json_t *into, const json_t *peaks)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)peaks, k, v) {
        json_t *have = json_object_get(into, k);
        if (json_is_number(v) &&
            (!json_is_number(have) || json_number_value(v) > json_number_value(have)))
            json_object_set(into, k, v);
    }
}

int rpx_runner_read_files(const rpx_runner_config *c, char ***files, size_t *n_files,
                          rpx_error *err)
{
    char **expanded = NULL;       /* the files of a folder given as --inputs */
    char **model = NULL;          /* the files the target resolves */
    char **list = NULL;
    size_t n_expanded = 0, n_model = 0, n = 0, i;
    int rc = 0, bad = 0;
    rpx_error ignored = {0};      /* a bad --inputs is reported when the inputs are loaded */
    *files = NULL;
    *n_files = 0;
    if (c->n_sample_files > 0)
        (void)rpx__samples_paths(c->sample_files, c->n_sample_files, &expanded, &n_expanded,
                                 &ignored);
    else if (c->inputs)
        (void)rpx__samples_paths(&c->inputs, 1, &expanded, &n_expanded, &ignored);
    if (!c->target.custom && c->model &&
        (rc = rpx_target_files(c->model, &model, &n_model, err)) != 0)
        goto done;
    for (i = 0; i < n_expanded; i++) bad |= rpx__strv_push(&list, &n, expanded[i]);
    for (i = 0; i < n_model; i++) bad |= rpx__strv_push(&list, &n, model[i]);
    for (i = 0; i < c->n_sample_files; i++) bad |= rpx__strv_push(&list, &n, c->sample_files[i]);
    bad |= rpx__strv_push(&list, &n, c->inputs);
    bad |= rpx__strv_push(&list, &n, c->cost);
    bad |= rpx__strv_push(&list, &n, c->target.body_path);
    bad |= rpx__strv_push(&list, &n, c->gpu_spec);
    if (bad) {
        for (i = 0; i < n; i++) free(list[i]);
        free(list);
        list = NULL;
        n = 0;
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
done:
    for (i = 0; i < n_expanded; i++) free(expanded[i]);
    free(expanded);
    for (i = 0; i < n_model; i++) free(model[i]);
    free(model);
    *files = list;
    *n_files = n;
    return rc;
}

/* The report's place: never a file the run reads (rpx_runner_read_files;
 * refused even with force) nor a file that is not a report, unless force;
 * checked before anything is loaded or measured. Where nothing exists yet
 * there is nothing to protect, and a Python target's files are not looked up
 * (that starts an interpreter in a child process). */
static int open_output(const rpx_runner_config *c, rpx_output **out, rpx_error *err)
{
    char **files = NULL;
    size_t n = 0, i;
    struct stat st;
    rpx_output_options oo = {RPX_OUTPUT_REPORT, RPX_PROFILE_SCHEMA, c->force, NULL, 0,
                             c->output_option ? c->output_option : "--output", c->no_force_option};
    int rc = strcmp(c->output, "-") == 0 || stat(c->output, &st) != 0
                 ? 0
                 : rpx_runner_read_files(c, &files, &n, err);
    if (rc == 0) {
        oo.protect = (const char *const *)files;
        oo.n_protect = n;
        rc = rpx_output_open(c->output, &oo, out, err);
    }
    for (i = 0; i < n; i++) free(files[i]);
    free(files);
    return rc;
}

/* One run_shared that stands for all the processes, for the report code
 * (its samples stay in the processes' blocks). */
static size_t merge_workers(const workers *w, run_shared *m)
{
    const run_shared *last = w->proc[w->last];
    size_t at = 0, offset = 0;
    int i;
    memset(m, 0, sizeof *m);
    for (i = 0; i < w->n; i++) {
        const run_shared *p = w->proc[i];
        at += p->measured;
        if (i < w->last) offset += p->measured;
        m->failed_calls += p->failed_calls;
        m->failed_warmup_calls += p->failed_warmup_calls;
        m->wall_ns += p->wall_ns;
        merge_peaks(&m->memory, &p->memory, i == 0);
        if (p->child_maxrss_bytes > m->child_maxrss_bytes) m->child_maxrss_bytes = p->child_maxrss_bytes;
    }
    m->samples = NULL;
    m->measured = at;
    m->outcome = w->outcome;
    m->phase = last->phase;
    m->failed_call = last->failed_call;
    m->failed_in_warmup = last->failed_in_warmup;
    m->signal = last->signal;
    m->abandoned = last->abandoned;
    m->warmup_done = w->proc[0]->warmup_done;
    m->timer = w->proc[0]->timer;
    m->timer_ok = w->proc[0]->timer_ok;
    m->sync_ns = w->proc[0]->sync_ns;
    m->has_sync = w->proc[0]->has_sync;
    snprintf(m->error, sizeof m->error, "%s", last->error);
    return offset; /* the timed calls before the last process */
}

/* Everything one run holds between its preparation and its report. */
typedef struct run_ctx {
    rpx_runner_config c;
    const char *kind;
    char *shown_model;
    rpx_output *output;
    samples_set smp;              /* the inputs: one sample or several */
    layers lay;
    rpx_nvml *nvml;
    rpx_nvml_watch *watch;        /* NVML sampled during the timed calls (gpu_watch.c) */
    json_t *cond_start, *cond_end;
    json_t *cpu_probe;            /* the cheap CPU probe before the run, or NULL */
    char cpu_probe_why[RPX_ERROR_MESSAGE_SIZE + 64];
    rpx_proc_snapshot *procs_start, *procs_end; /* other processes' CPU time */
    char procs_why[256];
    run_params rp;
    workers w;
    int processes;
    int processes_asked;          /* more than the calls: reduced, and said so */
    int spread_asked;             /* --spread changed the count from this (0: it did not) */
    placement place;              /* --cpus, --spread (placement.c) */
    outputs_params outputs;       /* --check-outputs (outputs.c) */
    json_t *audit;                /* --audit: the report's audit (audit.c), or NULL */
    json_t *server_metrics;       /* --server-metrics: the report's (server_metrics.c), or NULL */
} run_ctx;

static void ctx_free(run_ctx *x)
{
    rpx_output_discard(x->output);
    x->output = NULL;
    rpx_nvml_watch_free(x->watch);
    rpx_nvml_close(x->nvml);
    rpx__layers_free(&x->lay);
    json_decref(x->cond_start);
    json_decref(x->cond_end);
    json_decref(x->cpu_probe);
    json_decref(x->audit);
    json_decref(x->server_metrics);
    rpx_system_procs_free(x->procs_start);
    rpx_system_procs_free(x->procs_end);
    rpx__workers_free(&x->w);
    /* A Python target run in this process (--no-isolate) leaves its interpreter
     * running, and the model may still hold numpy views of the inputs: keep them
     * mapped until the process exits. */
    if (!x->c.isolate && x->kind && strcmp(x->kind, "python") == 0) {
        static samples_set kept_for_python;
        kept_for_python = x->smp;
        (void)kept_for_python;
    } else {
        rpx__samples_free(&x->smp);
    }
    free(x->shown_model);
    memset(x, 0, sizeof *x);
}

/* Steps 0 and 1: the output's place, the inputs, the cost layer, NVML. */
static int ctx_prepare(const rpx_runner_config *cfg, run_ctx *x, rpx_error *err)
{
    rpx_runner_config *c = &x->c;
    int rc;
    memset(x, 0, sizeof *x);
    x->c = *cfg;
    rpx__workers_init(&x->w);
    /* a caller-made target's spec only names it */
    if (!c->target.custom && (rc = rpx_target_check_spec(c->model, err)) != 0) return rc;
    x->kind = config_kind(c);
    /* an HTTP request's body may come from --body (or be none): no inputs file then */
    /* ... nor for a caller-made target that brings its own arguments (rpxprof.profile(fn, x)) */
    if (!c->inputs && c->n_sample_files == 0 && strcmp(x->kind, "http") != 0 &&
        !c->target.custom)
        return rpx_error_set(err, RPX_EINVAL, "no inputs file given");
    /* ranges and combinations, as `rpxprof run`, manifests and Python check them */
    if ((rc = rpx_runner_config_check(c, RPX_SPELL_KEY, err)) != 0) return rc;
    {
        int asked;
        x->processes = rpx_runner_processes(c, &asked); /* in range: checked above */
        if (c->spread) {
            if (asked != x->processes) x->spread_asked = asked;
        } else if (asked > x->processes) {
            x->processes_asked = asked;
        }
    }
    /* the stopping rule adds processes of repeats/processes calls: when that is
     * fewer than the p50's between-process interval needs in every process, no
     * number of processes ever states it (docs/statistics.md) */
    if (c->target_precision > 0) {
        long slice = rpx__workers_slice(c->repeats, x->processes, x->processes);
        long need = (long)rpx_stats_quantile_min_calls(0.5, 0.95);
        int k = x->processes_asked ? x->processes_asked : x->processes;
        if (slice < need)
            return rpx_error_set(err, RPX_EUSAGE,
                                 "--target-precision %g%%: cannot be reached: --repeats %ld over %d "
                                 "processes is %ld call%s in each, and the p50's interval between "
                                 "processes needs at least %ld calls in every process; give "
                                 "--repeats %ld or more (or fewer --processes)",
                                 c->target_precision * 100, c->repeats, x->processes, slice,
                                 slice == 1 ? "" : "s", need, need * k);
    }
    c->target.inputs_path = c->inputs ? c->inputs : c->n_sample_files ? c->sample_files[0] : NULL;
    x->shown_model = rpx_target_redact_spec(c->model); /* what reports and messages show */
    if (!x->shown_model) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    /* 0. the report's place, before anything is loaded or measured */
    if (c->output && (rc = open_output(c, &x->output, err)) != 0) return rc;
    /* 1. inputs, loaded once, outside timing (the workers inherit them) */
    if ((rc = rpx__samples_load(c, &x->smp, err)) != 0) return rc;
    if (strcmp(x->kind, "http") == 0 && x->smp.n > 1)
        return rpx_error_set(err, RPX_EUSAGE,
                             "--inputs: %zu samples were given, but an HTTP target sends one "
                             "file as its request body; give one --inputs file",
                             x->smp.n);
    if (strcmp(x->kind, "http") == 0 && x->smp.writable)
        return rpx_error_set(err, RPX_EUSAGE,
                             "--writable-inputs: an HTTP target sends the file's bytes as its "
                             "request body; there is nothing for it to edit in place");
    c->target.inputs_path = x->smp.paths[0];
    /* the cost layer and the GPU table, before anything is measured */
    if ((rc = rpx__layers_prepare(c, &x->lay, err)) != 0) return rc;
    /* NVML (never CUDA) in this process: the card and the conditions */
    if (strcmp(c->device, "cuda") == 0) {
        rpx_error nerr = {0};
        if (rpx_nvml_open(&x->nvml, &nerr) != 0) x->nvml = NULL; /* the card says why */
    }
    {
        /* by name: a field added to either struct cannot land in another's place */
        run_params rp = {.model = c->model, .device = c->device, .precision = c->precision,
                         .unit = c->unit, .warmup = c->warmup, .repeats = c->repeats,
                         .gpu_time = c->gpu_time, .progress = c->progress,
                         .stop_after_s = c->stop_after_s,
                         .timeout_s = c->timeout_s, .call_timeout_s = c->call_timeout_s,
                         .setup_timeout_s = c->setup_timeout_s, .grace_s = c->grace_s,
                         .target = &c->target, .max_failures = c->max_failures};
        x->rp = rp;
        x->rp.samples = x->smp.work;
        x->rp.n_samples = x->smp.n;
        x->rp.pristine = x->smp.writable ? x->smp.pristine : NULL;
        x->rp.rate_hz = strcmp(x->kind, "http") == 0 ? 0 : c->rate_hz;
        x->rp.notice = c->notice;
        x->rp.notice_ctx = c->notice_ctx;
        x->rp.gpu_watch = x->watch = rpx__gpu_watch_create(x->nvml, c->isolate);
        rpx__placement_init(c, &x->place);
        x->rp.placement = &x->place;
        /* where each call ran: a local model's calls (an HTTP call's time is the
         * remote server's, and the open-loop load has no calls of its own) */
        x->rp.call_records = strcmp(x->kind, "http") == 0 ? RPX_CALL_RECORDS_OFF : c->call_records;
        x->rp.timeline = c->timeline;
    }
    if (c->check_outputs || c->reference_outputs || c->save_outputs) {
        outputs_params op = {c->check_fraction, c->rtol, c->atol, c->target.load_seed,
                             c->reference_outputs, c->save_outputs, 0};
        x->outputs = op;
        if ((rc = rpx__outputs_prepare(&x->outputs, x->smp.n, c->force, err)) != 0) return rc;
        x->rp.outputs = &x->outputs;
    }
    return 0;
}

/* The notes of what the run saw (drift, memory growth, GPU busy time, a remote
 * API's unknowns, failed calls), and the layers' bounds and budget. */
static void run_notes(run_ctx *x, const run_shared *sh, const rpx_latency *lat, json_t *devjson,
                      const rpx_rss_summary *trend, json_t *notes, json_t *warnings,
                      json_t **roofline, json_t **budget)
{
    rpx_runner_config *cfgp = &x->c;
    const rpx_runner_config c = *cfgp;
    const workers *wp = &x->w;
    const char *kind = x->kind;
    json_t *section = json_object_get(devjson, "target");
    if (notes) {
        /* drift within one process: between processes is the interval's business */
        rpx__drift_note(wp->proc[0]->samples, wp->proc[0]->measured, notes, warnings);
        rpx__growth_notes(trend, json_object_get(devjson, "cuda_growth"), notes, warnings);
        {
            size_t wi;
            json_t *w;
            json_array_foreach(json_object_get(devjson, "cuda_warnings"), wi, w)
                rpx__warn_note(notes, warnings, json_string_value(w));
            rpx__gpu_watch_report(x->watch, json_object_get(devjson, "cuda"), notes,
                                  warnings);
        }
    }
    {
        rpx_latency_stats st;
        double p50 = (double)NAN;
        json_t *gt = json_object_get(devjson, "gpu_time");
        if (rpx_latency_stats_get(lat, &st) == 0 && st.available) p50 = st.p50_ms;
        if (json_is_object(gt) && notes) {
            double busy = json_number_value(json_object_get(gt, "p50_ms"));
            if (json_is_number(json_object_get(gt, "p50_ms")) && p50 == p50 && p50 > 2 * busy) {
                char m[256];
                snprintf(m, sizeof m,
                         "Wall time (p50 %.4g ms) is more than twice the GPU busy time (p50 "
                         "%.4g ms): the model is launch- or host-bound.",
                         p50, busy);
                rpx__warn_note(notes, warnings, m);
            }
        }
        if (notes && strcmp(kind, "http") == 0) {
            /* the remote model's cost, device and bounds are not knowable from here */
            double hz[16];
            size_t n_hz = rpx__budget_rates(cfgp, hz);
            json_array_append_new(notes, json_string(
                "remote API: the model's device, parameters, FLOPs and roofline bounds are "
                "null (http.not_measured); memory is this client's"));
            *budget = rpx_realtime_budget_json(p50, n_hz ? hz : NULL, n_hz, 0);
            rpx__load_notes(json_object_get(section, "load"), notes, warnings);
            if (c.target.insecure)
                rpx__warn_note(notes, warnings,
                               "--insecure: the server's TLS certificate was not verified; the "
                               "timings may be of a server other than the one named");
            if (c.target.slo && !json_is_object(json_object_get(section, "streaming")))
                rpx__warn_note(notes, warnings, /* never a silent null */
                               "--slo: no response was a stream, so goodput was not measured "
                               "(http.streaming is null); give --stream sse|lines|chunked, or "
                               "an endpoint that streams");
        } else if (notes) {
            rpx__layers_finish(cfgp, &x->lay, &x->smp.pristine[0], p50,
                               json_object_get(devjson, "cuda"), notes, roofline, budget);
        }
        if (notes && sh->failed_calls + sh->failed_warmup_calls > 0 &&
            sh->outcome != OUTCOME_CALLS_FAILED) {
            char m[512];
            snprintf(m, sizeof m,
                     "%ld of %ld timed calls failed and are not latency samples (%ld warmup "
                     "calls failed too)%s",
                     sh->failed_calls, (long)sh->measured + sh->failed_calls,
                     sh->failed_warmup_calls, section ? "; see http.status_counts" : "");
            rpx__warn_note(notes, warnings, m);
        }
    }
}

/* What ctx_finish gathered from the workers, for the report. */
typedef struct gathered {
    const char *status;
    json_t *peaks, *devjson, *section, *card, *notes, *roofline, *budget;
    const rpx_run_failure *failure; /* NULL: the run completed */
    const rpx_latency *lat;
    const rpx_rss_summary *trend;
    json_t *warnings;
    rpx_json_lazy *lazy;          /* the per-call arrays, written without being held */
} gathered;

/* The report (src/report/run_report.c) from what the run measured: the
 * runner hands over its data and sets no key itself. NULL out of memory. */
static json_t *build_report(const run_ctx *x, const run_shared *sh, const gathered *g)
{
    const rpx_runner_config c = x->c;
    const workers *wp = &x->w;
    const char *kind = x->kind;
    json_t *section = g->section, *peaks = g->peaks, *devjson = g->devjson, *ci = NULL, *report;
    rpx_run_process *procs;
    rpx_run_timeline *tl;
    rpx_run_data rd;
    rpx_profile_desc *d = &rd.desc;
    int i;
    memset(&rd, 0, sizeof rd);
    if (!(procs = calloc((size_t)wp->n + 1, sizeof *procs))) return NULL;
    if (!(tl = calloc((size_t)wp->n + 1, sizeof *tl))) {
        free(procs);
        return NULL;
    }
    for (i = 0; i < wp->n; i++) {
        const run_shared *p = wp->proc[i];
        procs[i].samples = p->samples;
        procs[i].measured = p->measured;
        procs[i].warmup_samples = p->warmup_samples;
        procs[i].warmup_kept = p->warmup_done < p->warmup_keep ? p->warmup_done : p->warmup_keep;
        procs[i].restore_samples = p->restore_samples;
        procs[i].restore_warmup_ns = p->restore_warmup_ns;
        procs[i].start_lag = p->start_lag;
        procs[i].late_starts = p->late_starts;
        if (p->record_info.on) {
            procs[i].records = &p->records;
            procs[i].record_info = &p->record_info;
            procs[i].record_totals = &p->record_totals;
        }
        if (p->timeline) { /* --timeline */
            rpx_run_timeline t = {p->pid, p->load_start_ns, p->setup_start_ns, p->setup_end_ns,
                                  p->teardown_start_ns, p->teardown_end_ns,
                                  p->timeline_calls ? p->call_start : NULL,
                                  x->smp.writable && p->timeline_calls ? p->restore_start : NULL,
                                  p->timeline_calls ? p->warmup_start : NULL,
                                  x->smp.writable && p->timeline_calls ? p->warmup_restore : NULL,
                                  p->phase >= PHASE_LOOP ? &p->trend : NULL};
            tl[i] = t;
            if (!p->timeline_calls && p->phase >= PHASE_LOOP) tl[i].request_intended_ns = p->call_start;
            procs[i].timeline = &tl[i];
        }
    }
    {
        size_t offsets[RPX_RUNNER_MAX_PROCESSES], counts[RPX_RUNNER_MAX_PROCESSES];
        double *ms = rpx__workers_samples_ms(wp, offsets, counts);
        if (ms) ci = rpx__workers_latency_ci(wp, ms, offsets, counts);
        free(ms);
    }
    d->model_callable = x->shown_model;
    d->target_kind = kind;
    d->target_section = section;
    d->failed_calls = sh->failed_calls;
    d->failed_warmup_calls = sh->failed_warmup_calls;
    d->device = c.device;
    d->precision = c.precision;
    d->unit = c.unit;
    d->warmup_calls = sh->warmup_done;
    d->inputs = &x->smp.pristine[0];
    d->inputs_path = c.inputs_label ? c.inputs_label : x->smp.paths[0];
    d->inputs_sha256 = x->smp.sha[0] ? x->smp.sha : NULL;
    d->metadata = c.meta;
    d->latency = g->lat;
    d->memory = &sh->memory;
    d->timer = sh->timer_ok ? &sh->timer : NULL;
    d->cuda_peaks = peaks;
    d->cuda_memory_method = json_object_get(devjson, "cuda_method");
    if (json_is_object(json_object_get(section, "torch_cuda_peak_allocated_mb_by_visible_device"))) {
        /* torch's own allocator, as the reference measures; the process-level beside it */
        d->cuda_process_peaks = d->cuda_peaks;
        d->cuda_process_method = d->cuda_memory_method;
        d->cuda_peaks = json_object_get(section, "torch_cuda_peak_allocated_mb_by_visible_device");
        d->cuda_memory_method = json_object_get(section, "torch_cuda_peak_method");
    }
    d->cuda = json_object_get(devjson, "cuda");
    d->sync_overhead_ns = sh->has_sync ? &sh->sync_ns : NULL;
    d->efficiency = strcmp(kind, "http") == 0 ? NULL : x->lay.efficiency; /* remote API */
    d->roofline = g->roofline;
    d->realtime_budget = g->budget;
    d->gpu_time = json_is_object(json_object_get(devjson, "gpu_time"))
                      ? json_object_get(devjson, "gpu_time")
                      : NULL;
    d->system_card = g->card;
    d->status = g->status;
    d->error = sh->outcome == OUTCOME_COMPLETE ? NULL : sh->error;
    rd.failure = g->failure;
    d->isolated = c.isolate;
    d->notes = g->notes;
    d->lazy = g->lazy;
    d->wall_ns = sh->outcome == OUTCOME_COMPLETE || sh->outcome == OUTCOME_INTERRUPTED
                     ? sh->wall_ns
                     : -1;
    rd.http_open_loop = strcmp(kind, "http") == 0 && c.target.load_rate > 0;
    rd.procs = procs;
    rd.n_procs = wp->n;
    rd.measured = wp->measured;
    rd.latency_ci = ci;
    rd.rss_trend = wp->proc[0]->phase >= PHASE_LOOP ? g->trend : NULL;
    rd.n_samples = x->smp.n;
    rd.sample_paths = (const char *const *)x->smp.paths;
    rd.sample_ids = (const char *const *)x->smp.ids;
    rd.list_sample_files = !c.inputs_label;
    rd.writable_inputs = x->smp.writable;
    rd.bytes_per_sample = x->smp.bytes_per_sample;
    rd.repeats = c.repeats;
    rd.target_precision = c.target_precision;
    rd.achieved = wp->achieved;
    rd.seconds = wp->seconds;
    rd.max_time_s = c.max_time_s;
    rd.converged = wp->converged;
    rd.stopped = wp->stopped;
    rd.why_none = wp->why_none;
    rd.rate_hz = x->rp.rate_hz;
    rd.back_to_back = c.back_to_back_latency;
    rd.latency = g->lat;
    rd.processes_asked = x->processes_asked;
    rd.processes = x->processes;
    rd.notes = g->notes;
    rd.warnings = g->warnings;
    {
        const cpu_set_t *cpus[RPX_RUNNER_MAX_PROCESSES];
        for (i = 0; i < wp->n; i++) cpus[i] = &wp->proc[i]->affinity;
        rd.placement = rpx__placement_json(&x->place, cpus, wp->n);
    }
    if (c.timeline && x->watch) { /* the GPU's clocks, power and temperature over time */
        rd.gpu_watched = 1;
        rd.n_gpu_readings = rpx_nvml_watch_readings(x->watch, &rd.gpu_readings,
                                                    &rd.gpu_readings_dropped);
    }
    report = rpx__run_report(&rd);
    json_decref(rd.placement);
    json_decref(ci);
    free(procs);
    free(tl);
    return report;
}

/* --check-outputs: the report's `outputs` from every process's, and status
 * outputs_differ (exit 7) when a run that completed returned other outputs. */
static void outputs_section(const run_ctx *x, json_t *report, rpx_runner_result *res)
{
    json_t *per[RPX_RUNNER_MAX_PROCESSES], *o;
    int i, differ = 0;
    for (i = 0; i < x->w.n; i++) {
        json_t *d = x->w.proc[i]->json_len ? json_loads(x->w.proc[i]->json, 0, NULL) : NULL;
        per[i] = json_incref(json_object_get(d, "outputs"));
        json_decref(d);
    }
    o = rpx__outputs_merge(&x->outputs, per, x->w.n, &differ);
    for (i = 0; i < x->w.n; i++) json_decref(per[i]);
    if (!o) return;
    if (differ && res->status == RPX_RUNNER_COMPLETE) {
        char m[512], first[256] = "", big[64] = "not a number";
        json_t *f = json_array_get(json_object_get(o, "mismatches"), 0);
        res->status = RPX_RUNNER_OUTPUTS_DIFFER;
        json_object_set_new(report, "status", json_string("outputs_differ"));
        if (json_is_number(json_object_get(o, "max_abs_diff")))
            snprintf(big, sizeof big, "%.6g", json_number_value(json_object_get(o, "max_abs_diff")));
        if (f)
            snprintf(first, sizeof first, "; the first: process %lld, timed call %lld, sample %lld, "
                     "output '%.60s': %.100s",
                     (long long)json_integer_value(json_object_get(f, "process")),
                     (long long)json_integer_value(json_object_get(f, "call")),
                     (long long)json_integer_value(json_object_get(f, "sample")),
                     json_is_string(json_object_get(f, "output"))
                         ? json_string_value(json_object_get(f, "output")) : "(all)",
                     json_string_value(json_object_get(f, "reason")));
        snprintf(m, sizeof m,
                 "--check-outputs: %lld of %lld checked calls returned other outputs than the "
                 "reference (largest difference %s)%s%s",
                 (long long)json_integer_value(json_object_get(o, "mismatched_calls")),
                 (long long)json_integer_value(json_object_get(o, "checked_calls")), big, first,
                 json_integer_value(json_object_get(o, "processes_with_other_reference"))
                     ? "; and the reference passes of the processes disagreed"
                     : "");
        json_array_append_new(res->warnings, json_string(m));
        json_object_set_new(report, "error", json_string(m));
        snprintf(res->error, sizeof res->error, "%s", m);
    }
    json_object_set_new(report, "outputs", o);
}

/* Step 3: the report from what the workers left; written when asked. */
static int ctx_finish(run_ctx *x, int stop_signal, rpx_runner_result *res, rpx_error *err)
{
    rpx_runner_config *cfgp = &x->c;
    const rpx_runner_config c = *cfgp;
    workers *wp = &x->w;
    rpx_latency *lat = NULL;
    rpx_rss_summary trend;
    json_t *card = NULL, *notes = NULL, *report = NULL, *devjson = NULL;
    rpx_run_failure failure;
    int has_failure = 0;
    json_t *peaks = NULL;
    json_t *roofline = NULL, *budget = NULL, *section;
    run_shared *sh = NULL;
    char reso[64];
    const char *batch = NULL, *status;
    char batch_buf[64];
    int rc, i;
    size_t k, offset;
    const char *kind = x->kind;
    rpx_json_lazy lazy;

    memset(&trend, 0, sizeof trend);
    rpx_json_lazy_init(&lazy);
    res->stop_signal = stop_signal;
    if (wp->n == 0) return rpx_error_set(err, RPX_EINTERRUPTED, "interrupted before any process");
    if (wp->outcome == OUTCOME_FAILED) {
        const char *e = wp->proc[wp->last]->error;
        rc = rpx_error_set(err, RPX_EMODEL, "%s", e[0] ? e : "the run failed");
        goto out;
    }
    sh = calloc(1, sizeof *sh);
    if (!sh) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
        goto out;
    }
    offset = merge_workers(wp, sh);
    status = status_name(sh->outcome, &res->status);
    if (res->status != RPX_RUNNER_INTERRUPTED) res->stop_signal = 0;
    if (sh->outcome >= OUTCOME_CRASHED && sh->outcome != OUTCOME_CALLS_FAILED) {
        /* peaks of a worker that died: the lifetime peak from wait4, nothing else */
        rpx_memory_peaks_init(&sh->memory);
        sh->memory.lifetime_peak_bytes = sh->child_maxrss_bytes;
        snprintf(sh->memory.inference_reason, sizeof sh->memory.inference_reason,
                 "not read: the run ended abnormally (%s)", status);
        failure = failure_of(sh, offset);
        has_failure = 1;
    } else if (sh->abandoned) {
        failure = failure_of(sh, offset); /* where the abandoned call stood */
        has_failure = 1;
    }
    /* what the device and the target reported: the last process that did, and
     * the largest CUDA peaks of all */
    for (i = wp->n - 1; i >= 0 && !devjson; i--)
        if (wp->proc[i]->json_len) devjson = json_loads(wp->proc[i]->json, 0, NULL);
    if (json_is_object(json_object_get(devjson, "cuda_peaks"))) {
        peaks = json_object();
        for (i = 0; i < wp->n; i++) {
            json_t *d = wp->proc[i]->json_len ? json_loads(wp->proc[i]->json, 0, NULL) : NULL;
            merge_cuda_peaks(peaks, json_object_get(d, "cuda_peaks"));
            json_decref(d);
        }
    }
    rpx_rss_trend_summarise(&wp->proc[0]->trend, &trend); /* the first process: the most calls */
    section = json_object_get(devjson, "target");

    /* 3. statistics, card, report */
    if (rpx_latency_create(0, &lat) != 0 || rpx_latency_reserve(lat, sh->measured) != 0) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < wp->n; i++) /* process by process, straight from the shared blocks */
        for (k = 0; k < wp->proc[i]->measured; k++)
            rpx_latency_add_ns(lat, (double)wp->proc[i]->samples[k]);
    rpx__input_resolution(&x->smp.pristine[0], reso, sizeof reso);
    {
        json_t *b = json_object_get(c.meta, "batch_size");
        if (json_is_integer(b)) {
            snprintf(batch_buf, sizeof batch_buf, "%lld", (long long)json_integer_value(b));
            batch = batch_buf;
        } else if (json_is_string(b)) {
            batch = json_string_value(b);
        }
    }
    {
        rpx_card_options copt = {c.device, c.precision, batch, reso[0] ? reso : NULL,
                                 x->nvml, 0, NULL, NULL};
        rpx_error cerr = {0};
        if (strcmp(kind, "python") == 0) {
            copt.python_version = json_string_value(json_object_get(section, "version"));
            copt.pytorch_version = json_string_value(json_object_get(section, "torch_version"));
            copt.pytorch_reason = section ? "the Python module did not import torch"
                                          : "not read: the run ended before the Python target "
                                            "reported";
        }
        card = rpx_system_card(&copt, &cerr);
        if (card) {
            json_t *other = x->procs_start && x->procs_end
                                ? rpx_system_other_processes(x->procs_start, x->procs_end,
                                                             (int)getpid())
                                : NULL;
            rpx_system_card_set_conditions(card, x->cond_start, x->cond_end);
            rpx_system_card_set_cpu_probe(card, x->cpu_probe, x->cpu_probe_why);
            rpx_system_card_set_other_processes(card, other, x->procs_why);
            json_decref(other);
        }
    }
    notes = rpx__make_notes(cfgp, sh->measured, &sh->memory);
    if (notes && x->spread_asked) {
        char m[256];
        snprintf(m, sizeof m, "--spread over %d CPUs: %d processes ran instead of %d, the same "
                 "number on each CPU", x->place.n_rotation, x->processes, x->spread_asked);
        json_array_append_new(notes, json_string(m));
    }
    if (notes) run_notes(x, sh, lat, devjson, &trend, notes, res->warnings, &roofline, &budget);
    {
        gathered g = {status, peaks, devjson, section, card, notes, roofline, budget,
                      has_failure ? &failure : NULL,
                      lat, &trend, res->warnings, &lazy};
        report = notes && card ? build_report(x, sh, &g) : NULL;
    }
    if (report && x->audit) json_object_set(report, "audit", x->audit);
    if (report && x->server_metrics) json_object_set(report, "server_metrics", x->server_metrics);
    if (!report || !card || !notes) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory building the report");
        goto out;
    }
    if (x->rp.outputs) outputs_section(x, report, res);
    {
        json_t *cw;
        size_t wi;
        json_array_foreach(json_object_get(card, "warnings"), wi, cw) json_array_append(res->warnings, cw);
    }
    if (x->output) {
        /* streamed: the per-call arrays are written from the samples, never held */
        res->to_stdout = rpx_output_is_stdout(x->output);
        rc = rpx_json_write_output_lazy(x->output, report, &lazy, err);
        x->output = NULL;
        if (rc != 0) goto out;
        res->written = 1;
    }
    if (c.lean_report && res->written) {
        rpx_json_lazy_drop(report, &lazy);
    } else if (rpx_json_lazy_materialise(report, &lazy) != 0) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory building the report");
        goto out;
    }
    res->report = report;
    report = NULL;
    res->measured = sh->measured;
    res->processes = wp->n;
    res->abandoned = sh->abandoned;
    if (res->status != RPX_RUNNER_OUTPUTS_DIFFER)
        snprintf(res->error, sizeof res->error, "%s",
                 sh->outcome == OUTCOME_COMPLETE ? "" : sh->error);
    rc = 0;
out:
    json_decref(roofline);
    json_decref(budget);
    json_decref(devjson);
    json_decref(peaks);
    free(sh);

    rpx_latency_destroy(lat);
    json_decref(card);
    json_decref(notes);
    json_decref(report);
    rpx_json_lazy_free(&lazy);
    return rc;
}

/* The cheap CPU probe (docs/system.md#cpu_probe), before anything is timed. */
static void cpu_probe(run_ctx *x)
{
    rpx_error e = {0};
    if (!x->c.cpu_probe) {
        snprintf(x->cpu_probe_why, sizeof x->cpu_probe_why, "turned off (--no-cpu-probe)");
        return;
    }
    x->cpu_probe = rpx_system_cpu_probe(0, &e);
    if (!x->cpu_probe) snprintf(x->cpu_probe_why, sizeof x->cpu_probe_why, "%s", e.message);
}

static int result_init(rpx_runner_result *res, rpx_error *err)
{
    memset(res, 0, sizeof *res);
    res->warnings = json_array();
    return res->warnings ? 0 : rpx_error_set(err, RPX_ENOMEM, "out of memory");
}

int rpx_runner_run(const rpx_runner_config *cfg, rpx_runner_result *res, rpx_error *err)
{
    run_ctx x;
    rpx__counters before, after;
    int rc, sig;
    if ((rc = result_init(res, err)) != 0) return rc;
    if ((rc = ctx_prepare(cfg, &x, err)) != 0) goto out;
    cpu_probe(&x);
    x.procs_start = rpx_system_procs_take(x.procs_why, sizeof x.procs_why);
    x.cond_start = rpx_system_conditions(x.nvml);
    if (cfg->server_metrics) (void)rpx__server_metrics_read(cfg->server_metrics, &before);
    rpx__stage_begin(x.c.isolate, x.output ? rpx_output_is_stdout(x.output) : 0);
    rc = rpx__workers_run(&x.c, &x.rp, &x.smp.work[0], x.processes, &x.w, err);
    sig = rpx__stage_stop_signal();
    if (cfg->server_metrics) {
        (void)rpx__server_metrics_read(cfg->server_metrics, &after);
        x.server_metrics = rpx__server_metrics_json(cfg->server_metrics, &before, &after,
                                                    res->warnings);
    }
    /* the audits after the run (a server's cache must not see the run's inputs
     * first): more runs, interleaved, in their own processes, on inputs the run
     * did not send (the bodies go on after the run's) */
    if (rc == 0 && cfg->audit && sig == 0 && x.w.n > 0 && x.w.outcome == OUTCOME_COMPLETE) {
        rpx_runner_config ac = x.c;
        ac.sample_shift += (long)x.w.measured + (long)x.w.n * x.c.warmup;
        rc = rpx__audit_run(&ac, &x.audit, res->warnings, err);
        /* the run's signal handlers stay through the audits: a signal there ends them */
        if ((sig = rpx__stage_stop_signal()) != 0)
            rpx__workers_interrupted(&x.w, sig, "during the audit");
    }
    rpx__stage_end();
    x.cond_end = rpx_system_conditions(x.nvml);
    if (x.procs_start) x.procs_end = rpx_system_procs_take(x.procs_why, sizeof x.procs_why);
    if (rc == 0) rc = ctx_finish(&x, sig, res, err);
out:
    ctx_free(&x);
    return rc;
}

int rpx_runner_run_pair(const rpx_runner_config *a, const rpx_runner_config *b,
                        rpx_runner_result *res_a, rpx_runner_result *res_b, rpx_error *err)
{
    run_ctx x[2];
    int rc, sig = 0, i, go = 1, n;
    memset(x, 0, sizeof x);
    if ((rc = result_init(res_a, err)) != 0 || (rc = result_init(res_b, err)) != 0) return rc;
    if (!a->isolate || !b->isolate)
        return rpx_error_set(err, RPX_EINVAL, "an interleaved pair needs isolation");
    if ((rc = ctx_prepare(a, &x[0], err)) != 0) goto out;
    if ((rc = ctx_prepare(b, &x[1], err)) != 0) goto out;
    n = x[0].processes > x[1].processes ? x[0].processes : x[1].processes;
    cpu_probe(&x[0]);
    if (x[0].cpu_probe) x[1].cpu_probe = json_incref(x[0].cpu_probe);
    snprintf(x[1].cpu_probe_why, sizeof x[1].cpu_probe_why, "%s", x[0].cpu_probe_why);
    for (i = 0; i < 2; i++)
        x[i].procs_start = rpx_system_procs_take(x[i].procs_why, sizeof x[i].procs_why);
    x[0].cond_start = rpx_system_conditions(x[0].nvml);
    x[1].cond_start = rpx_system_conditions(x[1].nvml);
    rpx__stage_begin(1, 0);
    /* A B, B A, A B, ...: a drift of the machine falls on both */
    for (i = 0; go && i < n; i++) {
        int order[2] = {i % 2, 1 - i % 2}, j;
        for (j = 0; go && j < 2; j++) {
            run_ctx *y = &x[order[j]];
            if (i >= y->processes) continue;
            rc = rpx__workers_step(&y->c, &y->rp, &y->smp.work[0],
                                   rpx__workers_slice(y->c.repeats, y->processes, i), &y->w, err);
            if (rc < 0) break;
            go = rc == 1;
        }
        if (rc < 0) break;
    }
    sig = rpx__stage_stop_signal();
    rpx__stage_end();
    for (i = 0; sig && i < 2; i++) /* a target with processes left to run was interrupted */
        if (x[i].w.n < x[i].processes) rpx__workers_interrupted(&x[i].w, sig, "between two worker processes");
    x[0].cond_end = rpx_system_conditions(x[0].nvml);
    x[1].cond_end = rpx_system_conditions(x[1].nvml);
    for (i = 0; i < 2; i++)
        if (x[i].procs_start)
            x[i].procs_end = rpx_system_procs_take(x[i].procs_why, sizeof x[i].procs_why);
    if (rc < 0) goto out;
    if ((rc = ctx_finish(&x[0], sig, res_a, err)) != 0) goto out;
    rc = ctx_finish(&x[1], sig, res_b, err);
out:
    ctx_free(&x[0]);
    ctx_free(&x[1]);
    return rc;
}
