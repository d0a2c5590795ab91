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
#include "loader/kinds.h"
#include "report/run_report.h"
#include "runner/runner_internal.h"
#include "runner/section.h"
#include "session/session_internal.h"

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
    /* a run works this out once, in its plan (plan.c), from the placement it parsed */
    return rpx__plan_processes(c, rpx__kind_of_target(c->model, &c->target),
                               rpx__placement_spread_cpus(c), asked);
}

/* the run's status and its report word (the status map, status.c) */
static const char *status_name(int outcome, rpx_runner_status *st)
{
    switch (outcome) {
    case OUTCOME_INTERRUPTED: *st = RPX_RUNNER_INTERRUPTED; break;
    case OUTCOME_CRASHED: *st = RPX_RUNNER_CRASHED; break;
    case OUTCOME_TIMED_OUT: *st = RPX_RUNNER_TIMED_OUT; break;
    case OUTCOME_KILLED: *st = RPX_RUNNER_KILLED; break;
    case OUTCOME_CALLS_FAILED: *st = RPX_RUNNER_CALLS_FAILED; break;
    default: *st = RPX_RUNNER_COMPLETE; break;
    }
    return rpx_runner_status_word(*st);
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

/* Everything one run holds between its preparation and its report. */
typedef struct run_ctx {
    rpx_runner_config c;
    const char *kind;             /* the report's target_kind */
    const rpx_kind *row;          /* its row in the kinds table: what the kind can do */
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
    run_plan plan;                /* the run parsed once (plan.c) */
    workers w;
    json_t *audit;                /* --audit: the report's audit (audit.c), or NULL */
    rpx__autorange ar;            /* --auto (autorange.c); ar.on 0: a fixed --repeats */
    json_t *server_metrics;       /* --server-metrics: the report's (server_metrics.c), or NULL */
    char session_id[32], session_started[32]; /* the report's session (src/session/) */
    model_file_prep mf;           /* a model file's runtime and made inputs (model_file.c) */
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
    rpx__autorange_free(&x->ar);
    json_decref(x->server_metrics);
    rpx_system_procs_free(x->procs_start);
    rpx_system_procs_free(x->procs_end);
    rpx__workers_free(&x->w);
    /* A Python target run in this process (--no-isolate) leaves its interpreter
     * running, and the model may still hold numpy views of the inputs: keep them
     * mapped until the process exits. */
    if (!x->c.isolate && rpx__kind_has(x->row, RPX_KIND_INTERPRETER)) {
        static samples_set kept_for_python;
        kept_for_python = x->smp;
        (void)kept_for_python;
    } else {
        rpx__samples_free(&x->smp);
    }
    free(x->shown_model);
    rpx__model_file_free(&x->mf);
    memset(x, 0, sizeof *x);
}

/* Steps 0 and 1: the plan, the output's place, the inputs, the cost layer, NVML. */
static int ctx_prepare(const rpx_runner_config *cfg, run_ctx *x, rpx_error *err)
{
    rpx_runner_config *c = &x->c;
    size_t i;
    int rc;
    memset(x, 0, sizeof *x);
    x->c = *cfg;
    rpx__workers_init(&x->w);
    /* a caller-made target's spec only names it */
    if (!c->target.custom && (rc = rpx_target_check_spec(c->model, err)) != 0) return rc;
    x->kind = config_kind(c);
    x->row = rpx__kind_of_target(c->model, &c->target);
    /* a model file: its runtime, its cost, and its inputs when none were given */
    if ((rc = rpx__model_file_prepare(c, x->row, &x->mf, err)) != 0) return rc;
    /* an HTTP request's body may come from --body (or be none): no inputs file then */
    /* ... nor for a caller-made target that brings its own arguments (rpxprof.profile(fn, x)) */
    if (!c->inputs && c->n_sample_files == 0 && !rpx__kind_has(x->row, RPX_KIND_REQUESTS) &&
        !c->target.custom)
        return rpx_error_set(err, RPX_EINVAL, "no inputs file given");
    /* ranges and combinations, as `rpxprof run`, manifests and Python check them */
    if ((rc = rpx_runner_config_check(c, RPX_SPELL_KEY, err)) != 0) return rc;
    /* --auto: its budget resolved, and c made a plain run of the most calls it keeps */
    if ((rc = rpx__autorange_prepare(c, &x->ar, err)) != 0) return rc;
    /* the processes, the placement, the sections: worked out once */
    if ((rc = rpx__plan_build(c, x->kind, x->row, &x->plan, err)) != 0) return rc;
    rpx__autorange_attach(&x->ar, &x->plan); /* its stopping rule in every process's loop */
    c->target.inputs_path = c->inputs ? c->inputs : c->n_sample_files ? c->sample_files[0] : NULL;
    x->shown_model = rpx_target_redact_spec(c->model); /* what reports and messages show */
    if (!x->shown_model) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    /* 0. the report's place, before anything is loaded or measured */
    if (c->output && (rc = open_output(c, &x->output, err)) != 0) return rc;
    if (c->save_outputs && (rc = rpx__outputs_place(c->save_outputs, err)) != 0) return rc;
    /* 1. inputs, loaded once, outside timing (the workers inherit them) */
    if ((rc = rpx__samples_load(c, &x->smp, err)) != 0) return rc;
    if (rpx__kind_has(x->row, RPX_KIND_REQUESTS) && x->smp.n > 1)
        return rpx_error_set(err, RPX_EUSAGE,
                             "--inputs: %zu samples were given, but an HTTP target sends one "
                             "file as its request body; give one --inputs file",
                             x->smp.n);
    if (rpx__kind_has(x->row, RPX_KIND_REQUESTS) && x->smp.writable)
        return rpx_error_set(err, RPX_EUSAGE,
                             "--writable-inputs: an HTTP target sends the file's bytes as its "
                             "request body; there is nothing for it to edit in place");
    c->target.inputs_path = x->smp.paths[0];
    rpx__plan_inputs(&x->plan, x->smp.work, x->smp.n, x->smp.writable ? x->smp.pristine : NULL);
    /* the cost layer and the GPU table, before anything is measured */
    if ((rc = rpx__layers_prepare(c, &x->lay, err)) != 0) return rc;
    /* NVML (never CUDA) in this process: the card and the conditions */
    if (strcmp(c->device, "cuda") == 0) {
        rpx_error nerr = {0};
        if (rpx_nvml_open(&x->nvml, &nerr) != 0) x->nvml = NULL; /* the card says why */
    }
    x->plan.gpu_watch = x->watch = rpx__gpu_watch_create(x->nvml, c->isolate);
    x->plan.input_paths = (const char *const *)x->smp.paths; /* never replaced by an output */
    x->plan.n_input_paths = x->smp.n;
    /* the sections' files (--save-outputs, --reference-outputs), before any process */
    for (i = 0; i < rpx__n_sections; i++)
        if (rpx__section_on(&x->plan, i) && rpx__sections[i]->prepare &&
            (rc = rpx__sections[i]->prepare(&x->plan, err)) != 0)
            return rc;
    return 0;
}

/* The notes of what the run saw (drift, memory growth, GPU busy time, a remote
 * API's unknowns, failed calls), and the layers' bounds and budget. */
static void run_notes(run_ctx *x, const run_shared *sh, const rpx_latency *lat, json_t *devjson,
                      json_t *gpu_time, const rpx_rss_summary *trend, json_t *notes,
                      json_t *warnings, json_t **roofline, json_t **budget)
{
    rpx_runner_config *cfgp = &x->c;
    const workers *wp = &x->w;
    json_t *section = json_object_get(devjson, "target");
    rpx_latency_stats st;
    double p50 = (double)NAN;
    size_t wi;
    json_t *w;
    /* drift within one process: between processes is the interval's business */
    rpx__drift_note(wp->proc[0]->samples, wp->proc[0]->measured, notes, warnings);
    rpx__growth_notes(trend, json_object_get(devjson, "cuda_growth"), notes, warnings);
    json_array_foreach(json_object_get(devjson, "cuda_warnings"), wi, w)
        rpx__warn_note(notes, warnings, json_string_value(w));
    rpx__gpu_watch_report(x->watch, json_object_get(devjson, "cuda"), notes, warnings);
    if (rpx_latency_stats_get(lat, &st) == 0 && st.available) p50 = st.p50_ms;
    if (json_is_object(gpu_time)) {
        double busy = json_number_value(json_object_get(gpu_time, "p50_ms"));
        if (json_is_number(json_object_get(gpu_time, "p50_ms")) && p50 == p50 && p50 > 2 * busy) {
            char m[256];
            snprintf(m, sizeof m,
                     "Wall time (p50 %.4g ms) is more than twice the GPU busy time (p50 "
                     "%.4g ms): the model is launch- or host-bound.",
                     p50, busy);
            rpx__warn_note(notes, warnings, m);
        }
    }
    if (rpx__kind_has(x->row, RPX_KIND_REMOTE)) {
        /* the remote model's cost, device and bounds are not knowable from here */
        double hz[16];
        size_t n_hz = rpx__budget_rates(cfgp, hz);
        json_array_append_new(notes, json_string(
            "remote API: the model's device, parameters, FLOPs and roofline bounds are "
            "null (http.not_measured); memory is this client's"));
        *budget = rpx_realtime_budget_json(p50, n_hz ? hz : NULL, n_hz, 0);
        rpx__load_notes(json_object_get(section, "load"), notes, warnings);
        if (cfgp->target.insecure)
            rpx__warn_note(notes, warnings,
                           "--insecure: the server's TLS certificate was not verified; the "
                           "timings may be of a server other than the one named");
        if (cfgp->target.slo && !json_is_object(json_object_get(section, "streaming")))
            rpx__warn_note(notes, warnings, /* never a silent null */
                           "--slo: no response was a stream, so goodput was not measured "
                           "(http.streaming is null); give --stream sse|lines|chunked, or "
                           "an endpoint that streams");
    } else {
        rpx__layers_finish(cfgp, &x->lay, &x->smp.pristine[0], p50,
                           json_object_get(devjson, "cuda"), notes, roofline, budget);
    }
    if (sh->failed_calls + sh->failed_warmup_calls > 0 && sh->outcome != OUTCOME_CALLS_FAILED) {
        char m[512];
        snprintf(m, sizeof m,
                 "%ld of %ld timed calls failed and are not latency samples (%ld warmup "
                 "calls failed too)%s",
                 sh->failed_calls, (long)sh->measured + sh->failed_calls,
                 sh->failed_warmup_calls, section ? "; see http.status_counts" : "");
        rpx__warn_note(notes, warnings, m);
    }
}

/* What ctx_finish gathers from the workers, for the report. */
typedef struct finish {
    run_shared *sh;               /* the processes as one (merge_workers) */
    size_t offset;                /* the timed calls before the last process */
    const char *status;
    rpx_run_failure failure;
    int has_failure;
    json_t *exports[RPX_RUNNER_MAX_PROCESSES]; /* each process's export, parsed once (NULL:
                                     none, or it did not fit its block) */
    json_t *devjson;              /* the last process's export (borrowed), or NULL */
    json_t *section;              /* its target section (borrowed), or NULL */
    json_t *peaks;                /* the largest CUDA peaks of every process, or NULL */
    rpx_latency *lat;
    rpx_rss_summary trend;        /* the first process's: the most calls */
    json_t *card, *notes, *roofline, *budget, *ci;
    rpx_run_process *procs;       /* the report's view of each process */
    json_t *values[RPX_SECTIONS_MAX]; /* each section's report value, by table row */
    rpx_run_key keys[RPX_SECTIONS_MAX];
    section_out check;            /* the first section's check a completed run failed */
    json_t *autorange;            /* --auto: the report's autorange, or NULL */
    rpx_run_data rd;
    rpx_json_lazy lazy;           /* the per-call arrays, written without being held */
} finish;

static void finish_free(finish *f)
{
    size_t i;
    int k;
    for (k = 0; k < RPX_RUNNER_MAX_PROCESSES; k++) json_decref(f->exports[k]);
    for (i = 0; i < RPX_SECTIONS_MAX; i++) json_decref(f->values[i]);
    json_decref(f->peaks);
    json_decref(f->card);
    json_decref(f->notes);
    json_decref(f->roofline);
    json_decref(f->budget);
    json_decref(f->ci);
    json_decref(f->autorange);
    json_decref(f->rd.placement);
    rpx_json_lazy_free(&f->lazy);
    rpx_latency_destroy(f->lat);
    free(f->procs);
    free(f->sh);
}

/* The processes' exports, each parsed once: what the device and the target
 * reported (the last process that did) and the largest CUDA peaks of all. */
static void gather_exports(const workers *wp, finish *f)
{
    int i;
    for (i = 0; i < wp->n; i++)
        f->exports[i] = wp->proc[i]->json_len ? json_loads(wp->proc[i]->json, 0, NULL) : NULL;
    for (i = wp->n - 1; i >= 0 && !f->devjson; i--) f->devjson = f->exports[i];
    if (json_is_object(json_object_get(f->devjson, "cuda_peaks"))) {
        f->peaks = json_object();
        for (i = 0; i < wp->n; i++)
            merge_cuda_peaks(f->peaks, json_object_get(f->exports[i], "cuda_peaks"));
    }
    f->section = json_object_get(f->devjson, "target");
}

/* The processes as one, how the run ended, its exports and samples. */
static int gather(const run_ctx *x, finish *f, rpx_runner_result *res, rpx_error *err)
{
    const workers *wp = &x->w;
    run_shared *sh;
    size_t k;
    int i;
    if (!(f->sh = sh = calloc(1, sizeof *sh)))
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    f->offset = rpx__workers_merge(wp, sh);
    f->status = status_name(sh->outcome, &res->status);
    if (res->status != RPX_RUNNER_INTERRUPTED) res->stop_signal = 0;
    if (sh->outcome >= OUTCOME_CRASHED && sh->outcome != OUTCOME_CALLS_FAILED) {
        /* peaks of a worker that died: the lifetime peak from wait4, nothing else */
        rpx_memory_peaks_init(&sh->memory);
        sh->memory.lifetime_peak_bytes = sh->child_maxrss_bytes;
        snprintf(sh->memory.inference_reason, sizeof sh->memory.inference_reason,
                 "not read: the run ended abnormally (%s)", f->status);
        f->failure = rpx__workers_failure(sh, f->offset);
        f->has_failure = 1;
    } else if (sh->abandoned) {
        f->failure = rpx__workers_failure(sh, f->offset); /* where the abandoned call stood */
        f->has_failure = 1;
    }
    gather_exports(wp, f);
    rpx_rss_trend_summarise(&wp->proc[0]->trend, &f->trend);
    if (rpx_latency_create(0, &f->lat) != 0 || rpx_latency_reserve(f->lat, sh->measured) != 0)
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < wp->n; i++) /* process by process, straight from the shared blocks */
        for (k = 0; k < wp->proc[i]->measured; k++)
            rpx_latency_add_ns(f->lat, (double)wp->proc[i]->samples[k]);
    return 0;
}

/* The system card, with the conditions and the CPU probe around the run. */
static json_t *make_card(const run_ctx *x, const finish *f)
{
    const rpx_runner_config *c = &x->c;
    char reso[64], batch_buf[64];
    const char *batch = NULL;
    json_t *b = json_object_get(c->meta, "batch_size"), *card;
    rpx_error cerr = {0};
    rpx__input_resolution(&x->smp.pristine[0], reso, sizeof reso);
    if (json_is_integer(b)) {
        snprintf(batch_buf, sizeof batch_buf, "%lld", (long long)json_integer_value(b));
        batch = batch_buf;
    } else if (json_is_string(b)) {
        batch = json_string_value(b);
    }
    rpx_card_options copt = {c->device, c->precision, batch, reso[0] ? reso : NULL,
                             x->nvml, 0, NULL, NULL};
    if (rpx__kind_has(x->row, RPX_KIND_INTERPRETER)) {
        copt.python_version = json_string_value(json_object_get(f->section, "version"));
        copt.pytorch_version = json_string_value(json_object_get(f->section, "torch_version"));
        copt.pytorch_reason = f->section ? "the Python module did not import torch"
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
    return card;
}

/* The report's data from what the run measured, but for the notes' findings
 * (run_notes) and the sections' values (rpx__sections_merge). */
static void fill_data(const run_ctx *x, finish *f, json_t *warnings)
{
    const rpx_runner_config *c = &x->c;
    const workers *wp = &x->w;
    const run_shared *sh = f->sh;
    rpx_run_data *rd = &f->rd;
    rpx_profile_desc *d = &rd->desc;
    const cpu_set_t *cpus[RPX_RUNNER_MAX_PROCESSES];
    size_t offsets[RPX_RUNNER_MAX_PROCESSES], counts[RPX_RUNNER_MAX_PROCESSES];
    double *ms = rpx__workers_samples_ms(wp, offsets, counts);
    json_t *section = f->section;
    int i;
    if (ms) f->ci = rpx__workers_latency_ci(wp, ms, offsets, counts);
    free(ms);
    d->model_callable = x->shown_model;
    d->target_kind = x->kind;
    d->target_section = section;
    d->target_section_key = x->row ? x->row->section_key : NULL;
    d->failed_calls = sh->failed_calls;
    d->failed_warmup_calls = sh->failed_warmup_calls;
    d->device = c->device;
    d->precision = c->precision;
    d->unit = c->unit;
    d->warmup_calls = sh->warmup_done;
    d->inputs = &x->smp.pristine[0];
    d->inputs_path = c->inputs_label ? c->inputs_label : x->smp.paths[0];
    d->inputs_sha256 = x->smp.sha[0] ? x->smp.sha : NULL;
    d->metadata = c->meta;
    d->latency = f->lat;
    d->memory = &sh->memory;
    d->timer = sh->timer_ok ? &sh->timer : NULL;
    d->cuda_peaks = f->peaks;
    d->cuda_memory_method = json_object_get(f->devjson, "cuda_method");
    if (json_is_object(json_object_get(section, "torch_cuda_peak_allocated_mb_by_visible_device"))) {
        /* torch's own allocator, as the reference measures; the process-level beside it */
        d->cuda_process_peaks = d->cuda_peaks;
        d->cuda_process_method = d->cuda_memory_method;
        d->cuda_peaks = json_object_get(section, "torch_cuda_peak_allocated_mb_by_visible_device");
        d->cuda_memory_method = json_object_get(section, "torch_cuda_peak_method");
    }
    d->cuda = json_object_get(f->devjson, "cuda");
    d->sync_overhead_ns = sh->has_sync ? &sh->sync_ns : NULL;
    d->efficiency = rpx__kind_has(x->row, RPX_KIND_REMOTE) ? NULL : x->lay.efficiency;
    d->status = f->status;
    d->error = sh->outcome == OUTCOME_COMPLETE ? NULL : sh->error;
    rd->failure = f->has_failure ? &f->failure : NULL;
    d->isolated = c->isolate;
    d->notes = f->notes;
    d->lazy = &f->lazy;
    d->wall_ns = sh->outcome == OUTCOME_COMPLETE || sh->outcome == OUTCOME_INTERRUPTED
                     ? sh->wall_ns
                     : -1;
    rd->http_open_loop = rpx__kind_has(x->row, RPX_KIND_OWN_LOAD) && c->target.load_rate > 0;
    rd->procs = f->procs;
    rd->n_procs = wp->n;
    rd->measured = wp->measured;
    rd->latency_ci = f->ci;
    rd->rss_trend = wp->proc[0]->phase >= PHASE_LOOP ? &f->trend : NULL;
    rd->n_samples = x->smp.n;
    rd->sample_paths = (const char *const *)x->smp.paths;
    rd->sample_ids = (const char *const *)x->smp.ids;
    rd->list_sample_files = !c->inputs_label;
    rd->writable_inputs = x->smp.writable;
    rd->bytes_per_sample = x->smp.bytes_per_sample;
    rd->repeats = c->repeats;
    rd->target_precision = c->target_precision;
    rd->achieved = wp->achieved;
    rd->seconds = wp->seconds;
    rd->max_time_s = c->max_time_s;
    rd->converged = wp->converged;
    rd->stopped = wp->stopped;
    rd->why_none = wp->why_none;
    rd->rate_hz = x->plan.rate_hz;
    rd->back_to_back = c->back_to_back_latency;
    rd->processes_asked = x->plan.processes_asked;
    rd->python = c->spelling == RPX_SPELL_PY;
    rd->processes = x->plan.processes;
    rd->warnings = warnings;
    for (i = 0; i < wp->n; i++) cpus[i] = &wp->proc[i]->affinity;
    rd->placement = rpx__placement_json(&x->plan.place, cpus, wp->n);
    rd->audit = x->audit;
    rd->server_metrics = x->server_metrics;
}

/* Each section's report value, and its keys for the report (an off section's
 * key is null or left out, as the section says). -1 out of memory. */
static int merge_sections(const run_ctx *x, finish *f)
{
    size_t i;
    if (rpx__sections_merge(&x->plan, x->w.proc, f->exports, x->w.n, f->procs, &f->rd,
                            f->values, &f->check) != 0)
        return -1;
    f->rd.n_sections = 0;
    for (i = 0; i < rpx__n_sections; i++) {
        if (!rpx__section_on(&x->plan, i) && !rpx__sections[i]->off_is_null) continue;
        f->keys[f->rd.n_sections].key = rpx__sections[i]->key;
        f->keys[f->rd.n_sections].optional = !rpx__sections[i]->off_is_null;
        f->keys[f->rd.n_sections++].value = f->values[i];
    }
    f->rd.sections = f->keys;
    return 0;
}

/* A section's merged value (borrowed), NULL when it is off. */
static json_t *section_value(const finish *f, const rpx_section *s)
{
    size_t i;
    for (i = 0; i < rpx__n_sections; i++)
        if (rpx__sections[i] == s) return f->values[i];
    return NULL;
}

/* The report's text, written atomically where it was asked: streamed, the
 * per-call arrays written from the samples, never held as a tree. */
static int write_report(run_ctx *x, const json_t *report, const rpx_json_lazy *lazy,
                        rpx_runner_result *res, rpx_error *err)
{
    int rc;
    res->to_stdout = rpx_output_is_stdout(x->output);
    rc = rpx_json_write_output_lazy(x->output, report, lazy, err);
    x->output = NULL;
    if (rc == 0) res->written = 1;
    return rc;
}

/* Step 3: the report from what the workers left, built once; written when asked. */
static int ctx_finish(run_ctx *x, int stop_signal, rpx_runner_result *res, rpx_error *err)
{
    const workers *wp = &x->w;
    json_t *report = NULL, *cw;
    finish f;
    size_t wi;
    int rc;

    memset(&f, 0, sizeof f);
    rpx_json_lazy_init(&f.lazy);
    res->stop_signal = stop_signal;
    if (wp->n == 0) return rpx_error_set(err, RPX_EINTERRUPTED, "interrupted before any process");
    if (wp->outcome == OUTCOME_FAILED) {
        const char *e = wp->proc[wp->last]->error;
        return rpx_error_set(err, RPX_EMODEL, "%s", e[0] ? e : "the run failed");
    }
    if ((rc = gather(x, &f, res, err)) != 0) goto out;
    /* 3. statistics, card, notes, the sections, the report */
    f.card = make_card(x, &f);
    f.notes = rpx__make_notes(&x->c, f.sh->measured, &f.sh->memory);
    f.procs = rpx__workers_views(wp);
    rc = RPX_ENOMEM;
    if (!f.card || !f.notes || !f.procs) goto oom;
    if (x->plan.spread_asked) {
        char m[256], sp[40];
        snprintf(m, sizeof m, "%s over %d CPUs: %d processes ran instead of %d, the same "
                 "number on each CPU",
                 rpx__option_value_label("spread", (rpx_option_spelling)x->c.spelling, sp,
                                         sizeof sp),
                 x->plan.place.n_rotation, x->plan.processes, x->plan.spread_asked);
        json_array_append_new(f.notes, json_string(m));
    }
    rpx__workers_export_notes(wp, f.notes, res->warnings);
    fill_data(x, &f, res->warnings);
    if (merge_sections(x, &f) != 0) goto oom;
    run_notes(x, f.sh, f.lat, f.devjson, section_value(&f, &rpx__section_gpu_time), &f.trend,
              f.notes, res->warnings, &f.roofline, &f.budget);
    rpx__layers_join(section_value(&f, &rpx__section_layers), &x->c, &x->lay, f.section, f.notes);
    f.rd.autorange = f.autorange = rpx__autorange_json(&x->ar, wp, f.notes); /* and its note */
    f.rd.desc.roofline = f.roofline;
    f.rd.desc.realtime_budget = f.budget;
    f.rd.desc.gpu_time = json_is_object(section_value(&f, &rpx__section_gpu_time))
                             ? section_value(&f, &rpx__section_gpu_time)
                             : NULL;
    f.rd.desc.system_card = f.card;
    if (f.check.check_failed && res->status == RPX_RUNNER_COMPLETE) {
        /* --check-outputs: a run that completed returned other outputs (exit 7) */
        res->status = RPX_RUNNER_OUTPUTS_DIFFER;
        f.rd.desc.status = rpx_runner_status_word(res->status);
        f.rd.desc.error = f.check.message;
    }
    if (!(report = rpx__run_report(&f.rd))) goto oom;
    if (rpx__run_session(&x->c, report, x->session_id, x->session_started) != 0) goto oom;
    rpx__model_file_report(&x->mf, report);
    if (res->status == RPX_RUNNER_OUTPUTS_DIFFER) {
        json_array_append_new(res->warnings, json_string(f.check.message));
        snprintf(res->error, sizeof res->error, "%s", f.check.message);
    }
    json_array_foreach(json_object_get(f.card, "warnings"), wi, cw)
        json_array_append(res->warnings, cw);
    if (x->output && (rc = write_report(x, report, &f.lazy, res, err)) != 0) goto out;
    if (x->c.lean_report && res->written)
        rpx_json_lazy_drop(report, &f.lazy); /* the per-call arrays only in the file */
    else if (rpx_json_lazy_materialise(report, &f.lazy) != 0)
        goto oom;
    res->report = report;
    report = NULL;
    rpx__runner_record_history(&x->c, res);
    res->measured = f.sh->measured;
    res->processes = wp->n;
    res->abandoned = f.sh->abandoned;
    if (res->status != RPX_RUNNER_OUTPUTS_DIFFER)
        snprintf(res->error, sizeof res->error, "%s",
                 f.sh->outcome == OUTCOME_COMPLETE ? "" : f.sh->error);
    rc = 0;
    goto out;
oom:
    rc = rpx_error_set(err, RPX_ENOMEM, "out of memory building the report");
out:
    json_decref(report);
    finish_free(&f);
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

/* The session of n contexts run together: the first's config's session_id, or a
 * new one, and the time it began. */
static void session_begin(run_ctx *x, int n)
{
    rpx__session_new(x[0].session_id, x[0].session_started);
    if (x[0].c.session_id && *x[0].c.session_id)
        snprintf(x[0].session_id, sizeof x[0].session_id, "%s", x[0].c.session_id);
    if (n > 1) { /* a pair: its second side (constant indices: no overlap to fear) */
        memcpy(x[1].session_id, x[0].session_id, sizeof x[1].session_id);
        memcpy(x[1].session_started, x[0].session_started, sizeof x[1].session_started);
    }
}

/* The other contexts of a sweep's n (rpx_runner_run_many) in the first's session. */
static void session_share(run_ctx *x, int n)
{
    int i;
    for (i = 1; i < n; i++) {
        memcpy(x[i].session_id, x[0].session_id, sizeof x[i].session_id);
        memcpy(x[i].session_started, x[0].session_started, sizeof x[i].session_started);
    }
}

static int result_init(rpx_runner_result *res, rpx_error *err)
{
    memset(res, 0, sizeof *res);
    res->warnings = json_array();
    return res->warnings ? 0 : rpx_error_set(err, RPX_ENOMEM, "out of memory");
}

/* An audit's config after an auto-ranged run: a plain run of the calls it chose
 * (its options no longer given, so that no rule reads them). */
static void autorange_off(rpx_runner_config *c)
{
    static const char *const names[] = {"auto", "min-time", "max-time"};
    size_t n, i;
    const rpx_run_option *table = rpx_run_options(&n);
    c->autorange = 0;
    c->min_time_s = 0;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        const rpx_run_option *o = rpx_run_option_find(names[i]);
        if (o && o >= table && (size_t)(o - table) < n && (size_t)(o - table) < RPX_RUN_OPTIONS_MAX)
            c->given[o - table] = 0;
    }
}

int rpx_runner_run(const rpx_runner_config *cfg, rpx_runner_result *res, rpx_error *err)
{
    run_ctx x;
    rpx__counters before, after;
    int rc, sig;
    if ((rc = result_init(res, err)) != 0) return rc;
    if ((rc = ctx_prepare(cfg, &x, err)) != 0) goto out;
    session_begin(&x, 1);
    cpu_probe(&x);
    x.procs_start = rpx_system_procs_take(x.procs_why, sizeof x.procs_why);
    x.cond_start = rpx_system_conditions(x.nvml);
    if (cfg->server_metrics) (void)rpx__server_metrics_read(cfg->server_metrics, &before);
    rpx__stage_begin(x.c.isolate, x.output ? rpx_output_is_stdout(x.output) : 0);
    rc = x.ar.on ? rpx__autorange_run(&x.ar, &x.plan, &x.w, err)
                 : rpx__workers_run(&x.plan, &x.w, err);
    if (x.ar.on) x.c.repeats = x.w.measured > 0 ? (long)x.w.measured : 1; /* what it chose */
    sig = rpx__stage_stop_signal();
    if (cfg->server_metrics) {
        (void)rpx__server_metrics_read(cfg->server_metrics, &after);
        x.server_metrics = rpx__server_metrics_json(cfg->server_metrics, &before, &after,
                                                    res->warnings);
    }
    /* the audits after the run (a server's cache must not see the run's inputs
     * first): more runs, interleaved, in their own processes, on inputs the run
     * did not send (the bodies go on after the run's) */
    if (rc == 0 && x.plan.audits && sig == 0 && x.w.n > 0 && x.w.outcome == OUTCOME_COMPLETE) {
        rpx_runner_config ac = x.c;
        ac.sample_shift += (long)x.w.measured + (long)x.w.n * x.c.warmup;
        ac.session_id = x.session_id; /* the audits' arms are measured in this session */
        if (x.ar.on) autorange_off(&ac); /* the audits repeat the calls auto-ranging chose */
        rc = rpx__audit_run(&ac, x.plan.audits, x.plan.processes, rpx_runner_run_pair,
                            rpx__stage_stop_signal, &x.audit, res->warnings, err);
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

/* The processes of an interleaved pair still to run from round i, side j
 * (this one included): A B, B A, ... */
static int pair_steps_left(const run_ctx *x, int i, int j)
{
    int left = 0, s;
    for (s = 0; s < 2; s++) left += x[s].plan.processes > i ? x[s].plan.processes - i : 0;
    return left - j;
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
    n = x[0].plan.processes > x[1].plan.processes ? x[0].plan.processes : x[1].plan.processes;
    session_begin(x, 2); /* both sides are measured interleaved in one session */
    rpx__autorange_share_end(&x[1].ar, &x[0].ar); /* one budget for both */
    x[0].ar.processes = x[0].plan.processes;
    x[1].ar.processes = x[1].plan.processes;
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
            if (i >= y->plan.processes) continue;
            if (y->ar.on) /* the steps still to run on both sides share the time left */
                rc = rpx__autorange_step(&y->ar, &y->plan, pair_steps_left(x, i, j), &y->w, err);
            else
                rc = rpx__workers_step(&y->plan,
                                       rpx__workers_slice(y->c.repeats, y->plan.processes, i),
                                       &y->w, err);
            if (rc < 0) break;
            go = rc == 1;
        }
        if (rc < 0) break;
    }
    for (i = 0; i < 2; i++)
        if (x[i].ar.on) x[i].c.repeats = x[i].w.measured > 0 ? (long)x[i].w.measured : 1;
    sig = rpx__stage_stop_signal();
    rpx__stage_end();
    for (i = 0; sig && i < 2; i++) /* a target with processes left to run was interrupted */
        if (x[i].w.n < x[i].plan.processes)
            rpx__workers_interrupted(&x[i].w, sig, "between two worker processes");
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

/* K targets interleaved by process (a sweep's points): round i runs process i
 * of every target, starting at target i mod K and going round (0 1 2, 1 2 0,
 * 2 0 1, ...), so that a drift of the machine falls on every one. Fixed
 * --repeats only (no auto-ranging: one budget over K is not defined yet). */
int rpx_runner_run_many(const rpx_runner_config *cfgs, int k, rpx_runner_result *res,
                        rpx_error *err)
{
    run_ctx *x;
    int rc = 0, sig = 0, i, j, go = 1, n = 0, prepared;
    if (k < 1) return rpx_error_set(err, RPX_EINVAL, "no targets to run");
    for (i = 0; i < k; i++)
        if ((rc = result_init(&res[i], err)) != 0) return rc;
    for (i = 0; i < k; i++) {
        if (!cfgs[i].isolate)
            return rpx_error_set(err, RPX_EINVAL, "interleaved targets need isolation");
        if (cfgs[i].autorange)
            return rpx_error_set(err, RPX_EUSAGE, "interleaved targets take a fixed --repeats, "
                                 "not --auto");
    }
    if (!(x = calloc((size_t)k, sizeof *x))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (prepared = 0; prepared < k; prepared++)
        if ((rc = ctx_prepare(&cfgs[prepared], &x[prepared], err)) != 0) goto out;
    for (i = 0; i < k; i++)
        if (x[i].plan.processes > n) n = x[i].plan.processes;
    session_begin(x, 1);
    session_share(x, k);
    cpu_probe(&x[0]);
    for (i = 1; i < k; i++) {
        if (x[0].cpu_probe) x[i].cpu_probe = json_incref(x[0].cpu_probe);
        /* the same array in every point (i > 0: never x[0]'s own) */
        memcpy(x[i].cpu_probe_why, x[0].cpu_probe_why, sizeof x[i].cpu_probe_why);
    }
    for (i = 0; i < k; i++) {
        x[i].procs_start = rpx_system_procs_take(x[i].procs_why, sizeof x[i].procs_why);
        x[i].cond_start = rpx_system_conditions(x[i].nvml);
    }
    rpx__stage_begin(1, 0);
    for (i = 0; go && i < n; i++) {
        for (j = 0; go && j < k; j++) {
            run_ctx *y = &x[(i + j) % k];
            if (i >= y->plan.processes) continue;
            rc = rpx__workers_step(&y->plan, rpx__workers_slice(y->c.repeats, y->plan.processes, i),
                                   &y->w, err);
            if (rc < 0) break;
            go = rc == 1;
        }
        if (rc < 0) break;
    }
    sig = rpx__stage_stop_signal();
    rpx__stage_end();
    for (i = 0; sig && i < k; i++) /* a target with processes left to run was interrupted */
        if (x[i].w.n < x[i].plan.processes)
            rpx__workers_interrupted(&x[i].w, sig, "between two worker processes");
    for (i = 0; i < k; i++) {
        x[i].cond_end = rpx_system_conditions(x[i].nvml);
        if (x[i].procs_start)
            x[i].procs_end = rpx_system_procs_take(x[i].procs_why, sizeof x[i].procs_why);
    }
    if (rc < 0) goto out;
    /* every target's report, each from what its processes left (one that
     * failed or was interrupted still writes the processes it finished) */
    rc = 0;
    for (i = 0; i < k; i++) {
        rpx_error e = {0};
        int r;
        if (sig && x[i].w.n == 0) { /* a signal before its first process: no report, no error */
            res[i].stop_signal = sig;
            res[i].status = RPX_RUNNER_INTERRUPTED;
            snprintf(res[i].error, sizeof res[i].error, "interrupted before its first process");
            continue;
        }
        r = ctx_finish(&x[i], sig, &res[i], &e);
        if (r != 0 && rc == 0) {
            rc = r;
            *err = e;
        }
    }
out:
    for (i = 0; i < k; i++) ctx_free(&x[i]); /* zeroed ones too, as run_pair's */
    free(x);
    return rc;
}
