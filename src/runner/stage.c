/* stage.c — owns the measured stage of a run and its isolation:
 * a child process started before any CUDA initialisation runs the target's
 * setup, the loop and teardown, writing each sample straight into memory
 * shared with the parent; the parent watches it (timeouts, signals) and, if it
 * dies, still has every sample measured before. */
#include "runner/stage.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <limits.h>
#include <locale.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "device/cuda.h"
#include "rpxprof/error.h"
#include "device/gpu_memory.h"
#include "measure/run.h"
#include "rpxprof/target.h"
#include "loader/kinds.h"
#include "runner/runner_internal.h"
#include "runner/section.h"

/* The export's room: 64 KiB + 32 bytes a timed call, or RPX_TEST_EXPORT_CAP
 * bytes when that is smaller (a test knob: an export that does not fit). */
static size_t export_cap(long repeats)
{
    size_t cap = ((size_t)64 << 10) + (size_t)repeats * 32;
    const char *knob = getenv("RPX_TEST_EXPORT_CAP");
    if (knob && *knob) {
        char *end;
        unsigned long long v = strtoull(knob, &end, 10);
        if (*end == '\0' && v > 0 && v < cap) cap = (size_t)v;
    }
    return cap;
}

run_shared *rpx__run_shared_create(const run_plan *plan, long repeats)
{
    size_t head = (sizeof(run_shared) + 63) & ~(size_t)63;
    size_t samples, warm, json_cap, total, secs;
    const long warmup = plan->c->warmup;
    long keep = warmup < RPX_WARMUP_KEEP ? warmup : RPX_WARMUP_KEEP;
    run_shared *sh;
    char *m;
    /* repeats and warmup are in the ranges of the options' table (the runner
     * checked them: rpx_runner_config_check), which keep every size below far
     * from overflowing; a slice of them is at least 1 */
    if (repeats < 1 || warmup < 0) return NULL;
    samples = (size_t)repeats * sizeof(int64_t);
    warm = (size_t)keep * sizeof(int64_t);
    json_cap = export_cap(repeats);
    if (plan->c->layers > 0) /* --layers: each profiled call's time of every node */
        json_cap += (size_t)plan->c->layers * ((size_t)16 << 10);
    json_cap = (json_cap + 63) & ~(size_t)63;
    secs = rpx__sections_bytes(plan, repeats, keep); /* touched only by the sections on */
    /* the samples, the warmup's, the export, the restore times (touched only
     * with --writable-inputs), the start lags (--rate), the sections' slices */
    total = head + samples + warm + json_cap + samples + samples + secs;
    m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1,
             0);
    if (m == MAP_FAILED) return NULL;
    sh = (run_shared *)m;
    sh->mapped = total;
    m += head;
    sh->samples = (int64_t *)m;
    sh->warmup_samples = (int64_t *)(m + samples);
    sh->warmup_keep = keep;
    m += samples + warm;
    sh->json = m;
    sh->json_cap = json_cap;
    m += json_cap;
    sh->restore_samples = (int64_t *)m;
    sh->start_lag = (int64_t *)(m + samples);
    rpx__sections_layout(plan, sh, m + 2 * samples, repeats, keep);
    sh->failed_call = -1;
    sh->child_maxrss_bytes = -1;
    rpx_memory_peaks_init(&sh->memory);
    return sh;
}

void rpx__run_shared_free(run_shared *sh)
{
    if (sh) munmap(sh, sh->mapped);
}

static void set_phase(run_shared *sh, run_phase ph)
{
    __atomic_store_n(&sh->phase_start_ns, rpx_clock_now_ns(), __ATOMIC_RELEASE);
    __atomic_store_n(&sh->phase, (int)ph, __ATOMIC_RELEASE);
    /* wake the watchdog: a deadline may start with this phase (the first call's) */
    (void)syscall(SYS_futex, &sh->phase, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

typedef struct peaks_ctx {
    rpx_gpu_mem *gmem;
    rpx_target *target;
} peaks_ctx;

/* After warmup: the process-level CUDA peaks and the target's own (torch's allocator). */
static void peaks_reset(void *ctx)
{
    peaks_ctx *p = ctx;
    if (p->gmem) rpx_gpu_mem_reset(p->gmem);
    if (p->target->hooks.peaks_reset) p->target->hooks.peaks_reset(p->target->hooks.state);
}

typedef struct after_ctx {
    const section_set *secs;
    rpx_rss_trend *trend;
} after_ctx;

/* After every call, outside the timed span: the sections' after-call hooks
 * (the GPU busy time), the resident set. */
static void after_call(void *ctx, int timed)
{
    after_ctx *a = ctx;
    rpx__sections_after_call(a->secs, timed);
    rpx_rss_trend_after_call(a->trend, timed);
}

/* What the driver made visible, the memory peaks, the target's section and
 * each measured section's export, as one JSON text in the shared block (the
 * parent builds the report from it). One that does not fit leaves its size
 * in export_needed, and the report says what is missing. */
static void export_json(run_shared *sh, rpx_cuda *cuda, rpx_gpu_mem *gmem, rpx_target *target,
                        section_set *secs)
{
    json_t *o = json_object(), *c;
    const char *vis = rpx_cuda_visible_devices(cuda); /* what the driver used */
    const char *ver;
    json_t *section = rpx_target_section(target);
    char *text;
    size_t len;
    if (section) json_object_set_new(o, "target", section);
    if (cuda) {
        c = json_object();
        ver = rpx_cuda_driver_version(cuda);
        json_object_set_new(c, "CUDA_VISIBLE_DEVICES", vis ? json_string(vis) : json_null());
        json_object_set_new(c, "driver_api_version", ver ? json_string(ver) : json_null());
        json_object_set_new(c, "visible_devices", rpx_cuda_devices_json(cuda));
        json_object_set_new(c, "synchronized", json_string("primary context of every visible "
                                                          "device, before and after every call"));
        json_object_set_new(o, "cuda", c);
        json_object_set_new(o, "cuda_peaks", rpx_gpu_mem_peaks_json(gmem));
        json_object_set_new(o, "cuda_method", rpx_gpu_mem_method_json(gmem));
        json_object_set_new(o, "cuda_growth", rpx_gpu_mem_growth_json(gmem));
        json_object_set_new(o, "cuda_warnings", rpx_cuda_warnings(cuda));
    }
    rpx__sections_export(secs, o);
    text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    len = text ? strlen(text) : 0;
    if (text && len < sh->json_cap) {
        memcpy(sh->json, text, len + 1);
        sh->json_len = len;
    } else {
        sh->export_needed = text ? len + 1 : (size_t)-1; /* -1: it could not be written */
    }
    free(text);
}

/* The target runs in the process's own (global) locale, whatever locale the caller
 * gave this thread (the Python package runs the library in the C locale, uselocale).
 * A target may call setlocale() (a Python model's locale.setlocale(LC_ALL, "") under
 * LC_ALL=de_DE.UTF-8): it keeps its locale for its own calls, and LC_NUMERIC is put
 * back as soon as they are over, so every number rpxprof prints or writes after them
 * (the summary of a --no-isolate run, notes, messages) has a decimal point. */
static void numeric_locale_save(char *buf, size_t size)
{
    const char *now = setlocale(LC_NUMERIC, NULL);
    snprintf(buf, size, "%s", now ? now : "C");
}

static void numeric_locale_restore(const char *saved)
{
    const char *now = setlocale(LC_NUMERIC, NULL);
    if (!now || strcmp(now, saved) != 0) (void)setlocale(LC_NUMERIC, saved);
}

/* One stage in the model's process: what it opened, the loop's configuration. */
typedef struct stage {
    const run_params *p;
    const rpx_runner_config *c;
    run_shared *sh;
    const rpx_inputs *in;         /* the first sample */
    rpx_target *target;
    rpx_cuda *cuda;
    rpx_gpu_mem *gmem;
    section_set secs;             /* the measured sections on in this run */
    rpx_run_config cfg;
    peaks_ctx pk;
    after_ctx ac;
    rpx_run_result res;
    rpx_error err;
    char numeric[256];            /* the numeric locale to restore after the target's calls */
} stage;

/* Load the target (and the CUDA driver's contexts on a cuda run). */
static int stage_open(stage *st)
{
    const run_params *p = st->p;
    rpx_target_options topt; /* the bodies of an HTTP target go on from the last process's */
    int rc;
    topt = st->c->target;
    topt.bodies_first = p->bodies_first;
    if ((rc = rpx_target_open_ex(st->c->model, &topt, &st->target, &st->err)) != 0) return rc;
    if (strcmp(st->c->device, "cuda") == 0) {
        /* the primary contexts exist before setup: memory is tracked from there */
        if ((rc = rpx_cuda_open_for(&st->cuda, st->c->spelling == RPX_SPELL_PY, &st->err)) != 0 ||
            (rc = rpx_cuda_sync_overhead(st->cuda, 1001, &st->sh->sync_ns, &st->err)) != 0 ||
            (rc = rpx_gpu_mem_start(st->cuda, 1000, &st->gmem, &st->err)) != 0)
            return rc;
        st->sh->has_sync = 1;
    }
    return 0;
}

/* The loop's configuration, before the sections wire into it. */
static void loop_config(stage *st)
{
    const run_params *p = st->p;
    const run_plan *plan = p->plan;
    const rpx_runner_config *c = st->c;
    run_shared *sh = st->sh;
    rpx_run_config *cfg = &st->cfg;
    memset(cfg, 0, sizeof *cfg);
    cfg->warmup = c->warmup;
    cfg->repeats = p->repeats;
    cfg->progress = c->progress;
    cfg->stop = &sh->stop;
    cfg->progress_since_ns = p->run_start_ns;
    cfg->progress_before = p->sample_offset;
    cfg->progress_total = p->progress_total;
    cfg->progress_process = p->process_index + 1;
    if (plan->replan) { /* auto-ranging: its rule, asked after the first call */
        cfg->replan = plan->replan;
        cfg->replan_ctx = plan->replan_ctx;
        cfg->deadline_ns = 1;
    } else if (c->stop_after_s > 0) {
        cfg->deadline_ns = (p->run_start_ns > 0 ? p->run_start_ns : rpx_clock_now_ns()) +
                           (int64_t)(c->stop_after_s * 1e9);
    }
    st->pk.gmem = st->gmem;
    st->pk.target = st->target;
    cfg->peaks_reset = peaks_reset;
    cfg->peaks_ctx = &st->pk;
    st->ac.secs = &st->secs;
    st->ac.trend = &sh->trend;
    cfg->after_call = after_call;
    cfg->after_ctx = &st->ac;
    cfg->samples = sh->samples;
    cfg->calls_done = &sh->calls_done;
    cfg->max_failures = c->max_failures;
    cfg->failed_done = &sh->failed_calls;
    cfg->failed_warmup_done = &sh->failed_warmup_calls;
    cfg->progress_ns = &sh->progress_ns;
    cfg->warmup_samples = sh->warmup_samples;
    cfg->warmup_keep = sh->warmup_keep;
    if (st->cuda) {
        cfg->sync = rpx_cuda_sync_all;
        cfg->sync_ctx = st->cuda;
    }
    if (plan->n_samples > 1) {
        cfg->distinct = plan->samples;
        cfg->n_distinct = plan->n_samples;
        cfg->distinct_offset = p->sample_offset;
    }
    if (plan->pristine) {
        cfg->pristine = plan->pristine;
        cfg->restore_ns = sh->restore_samples;
        cfg->restore_warmup_ns = &sh->restore_warmup_ns;
    }
    if (plan->rate_hz > 0) {
        cfg->period_ns = (int64_t)(1e9 / plan->rate_hz + 0.5);
        cfg->start_lag_ns = sh->start_lag;
        cfg->late_starts = &sh->late_starts;
    }
}

/* The target's setup, the samples it is given and the sections' begin. */
static int stage_setup(stage *st)
{
    const run_params *p = st->p;
    const run_plan *plan = p->plan;
    rpx_run_info info = {RPX_MODEL_ABI_VERSION, st->c->device, st->c->precision, st->c->unit,
                         st->c->warmup, p->repeats};
    int rc;
    if ((rc = rpx_target_setup(st->target, st->in, &info, &st->err)) != 0) return rc;
    loop_config(st);
    /* every distinct sample, the same pointers the calls receive */
    if ((rc = rpx_target_samples(st->target, plan->samples, plan->n_samples,
                                 plan->pristine != NULL, &st->err)) != 0)
        return rc;
    /* GPU time's CUPTI, the output checks' reference pass, the recorders */
    return rpx__sections_begin(&st->secs, st->target, st->cuda, &st->cfg, &st->err);
}

/* The timed loop, the inputs guarded when they are read-only. */
static int stage_loop(stage *st)
{
    const run_plan *plan = st->p->plan;
    run_shared *sh = st->sh;
    int rc;
    /* read-only inputs: a write into them names --writable-inputs */
    if (!plan->pristine) rpx__samples_guard_begin(plan->samples, plan->n_samples, sh->input_fault);
    (void)rpx_rss_trend_open(&sh->trend, st->p->repeats); /* unreadable: the report says so */
    if (plan->warmup_max_s > 0) /* from the warmup's start, not the setup's */
        st->cfg.warmup_deadline_ns = rpx_clock_now_ns() + (int64_t)(plan->warmup_max_s * 1e9);
    rc = rpx_measure_run(&st->cfg, st->target, st->in, &st->res, &st->err);
    numeric_locale_restore(st->numeric);
    if (!plan->pristine) rpx__samples_guard_end();
    rpx_rss_trend_close(&sh->trend);
    rpx_gpu_mem_stop(st->gmem);
    sh->warmup_done = st->res.warmup_done;
    sh->measured = st->res.measured;
    sh->failed_call = st->res.failed_call;
    sh->failed_in_warmup = st->res.failed_in_warmup;
    sh->failed_calls = st->res.failed_calls;
    sh->failed_warmup_calls = st->res.failed_warmup_calls;
    sh->wall_ns = st->res.wall_ns;
    sh->memory = st->res.memory;
    return rc;
}

/* How the loop ended, as the block's outcome. */
static void stage_outcome(stage *st, int rc)
{
    run_shared *sh = st->sh;
    const rpx_run_result *res = &st->res;
    if (rc != 0 || res->status == RPX_RUN_FAILED) sh->outcome = OUTCOME_FAILED;
    else if (res->status == RPX_RUN_TOO_MANY_FAILURES) sh->outcome = OUTCOME_CALLS_FAILED;
    else if (res->status == RPX_RUN_INTERRUPTED) sh->outcome = OUTCOME_INTERRUPTED;
    else if (res->measured == 0 && res->failed_calls > 0) sh->outcome = OUTCOME_CALLS_FAILED;
    else sh->outcome = OUTCOME_COMPLETE;
    if (sh->outcome != OUTCOME_COMPLETE) snprintf(sh->error, sizeof sh->error, "%s", st->err.message);
}

/* The stage itself, in whichever process runs it. */
static void measure(const run_params *p, run_shared *sh)
{
    stage st;
    int rc;
    locale_t own = uselocale(LC_GLOBAL_LOCALE);

    memset(&st, 0, sizeof st);
    st.p = p;
    st.c = p->plan->c;
    st.sh = sh;
    st.in = &p->plan->samples[0];
    numeric_locale_save(st.numeric, sizeof st.numeric);
    rpx__sections_open(&st.secs, p, sh);
    sh->outcome = OUTCOME_FAILED;
    set_phase(sh, PHASE_LOAD);
    rpx__sections_mark(&st.secs, SECTION_LOAD);
    if ((rc = stage_open(&st)) != 0) goto fail;
    set_phase(sh, PHASE_SETUP);
    rpx__sections_mark(&st.secs, SECTION_SETUP);
    if ((rc = stage_setup(&st)) != 0) goto fail;
    rpx__sections_mark(&st.secs, SECTION_SETUP_END); /* not the clock's calibration */
    if ((rc = rpx_timer_calibrate(&sh->timer, 0)) != 0) {
        rpx_error_set(&st.err, rc, "cannot calibrate the clock: %s", rpx_strerror(rc));
        goto fail;
    }
    sh->timer_ok = 1;
    set_phase(sh, PHASE_LOOP);
    rc = stage_loop(&st);
    if (rc == 0 && st.res.status == RPX_RUN_COMPLETE && !sh->stop) {
        rpx__sections_after_loop(&st.secs); /* untimed: --layers' profiled calls */
        numeric_locale_restore(st.numeric);
    }
    if (rc == 0 && st.res.status != RPX_RUN_FAILED)
        export_json(sh, st.cuda, st.gmem, st.target, &st.secs);
    if (rc == 0 && st.res.status == RPX_RUN_COMPLETE && st.res.measured == 0 &&
        st.res.failed_calls > 0)
        rpx_error_set(&st.err, RPX_EMODEL, "--model %s: all %ld timed calls failed; the last: %s",
                      st.target->display_spec, st.res.failed_calls, st.res.last_failure);
    set_phase(sh, PHASE_TEARDOWN);
    rpx__sections_mark(&st.secs, SECTION_TEARDOWN);
    rpx_target_close(st.target); /* teardown runs while the contexts are still held */
    st.target = NULL;
    rpx__sections_mark(&st.secs, SECTION_TEARDOWN_END);
    stage_outcome(&st, rc);
    goto done;
fail:
    sh->outcome = OUTCOME_FAILED;
    snprintf(sh->error, sizeof sh->error, "%s", st.err.message);
done:
    set_phase(sh, PHASE_DONE);
    rpx_target_close(st.target);
    numeric_locale_restore(st.numeric); /* a setup or a teardown that called setlocale() */
    if (own) uselocale(own);
    rpx__sections_end(&st.secs);
    rpx_gpu_mem_free(st.gmem);
    rpx_cuda_close(st.cuda);
    rpx_run_result_free(&st.res);
}

/* The call in progress when the child stopped answering or died. */
static void note_failed_call(const run_params *p, run_shared *sh)
{
    long done = __atomic_load_n(&sh->calls_done, __ATOMIC_ACQUIRE);
    long failed = __atomic_load_n(&sh->failed_calls, __ATOMIC_ACQUIRE);
    sh->warmup_done = done < p->plan->c->warmup ? done : p->plan->c->warmup;
    sh->measured = done - failed > p->plan->c->warmup ? (size_t)(done - failed - p->plan->c->warmup) : 0;
    sh->failed_in_warmup = done < p->plan->c->warmup;
    sh->failed_call = sh->failed_in_warmup ? done : done - p->plan->c->warmup;
}

static const char *where(const run_params *p, const run_shared *sh, char *buf, size_t size)
{
    int ph = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
    (void)p;
    if (ph == PHASE_LOAD) snprintf(buf, size, "while loading the model");
    else if (ph == PHASE_SETUP) snprintf(buf, size, "in setup");
    else if (ph == PHASE_LOOP)
        snprintf(buf, size, "in %s call %ld", sh->failed_in_warmup ? "warmup" : "timed",
                 sh->failed_call);
    else snprintf(buf, size, "in teardown");
    return buf;
}

/* A crash that was a write into the read-only inputs says so, and what allows it. */
static void input_fault_hint(const run_params *p, run_shared *sh)
{
    int k = sh->input_fault[0] - 1, a = sh->input_fault[1];
    size_t len = strlen(sh->error);
    if (k < 0 || !p->plan->samples || (size_t)k >= p->plan->n_samples || a < 0 ||
        (size_t)a >= p->plan->samples[k].count)
        return;
    char which[48] = "";
    if (p->plan->n_samples > 1) snprintf(which, sizeof which, " of sample %d", k);
    snprintf(sh->error + len, sizeof sh->error - len,
             ": it wrote into its read-only inputs (array '%s'%s); give --writable-inputs "
             "to let the model edit its inputs in place (their bytes are restored before every "
             "call)",
             p->plan->samples[k].tensors[a].name, which);
}

/* A runtime that crashed while it loaded the model file or set it up says so
 * (the kind's words: its own crash, not one measured in the model). */
static void setup_crash_hint(const run_params *p, run_shared *sh)
{
    const rpx_kind *row = p->plan->row;
    int ph = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
    size_t len = strlen(sh->error);
    if (!row || !row->setup_crash || (ph != PHASE_LOAD && ph != PHASE_SETUP)) return;
    row->setup_crash(p->plan->c->model, &p->plan->c->target, sh->error + len,
                     sizeof sh->error - len);
}

/* ---- signals ---- */

static run_shared *g_sh;             /* the block of the stage in progress */
static volatile sig_atomic_t g_signals; /* SIGINT/SIGTERM received by this process */
static volatile sig_atomic_t g_first_signal;
static int64_t g_first_signal_ns;    /* written once, by the handler */
static int g_isolated;
static int g_saved_stdout = -1;     /* the real stdout while the model's goes to stderr */

static void on_stop_signal(int sig)
{
    struct timespec ts;
    if (g_sh) g_sh->stop = 1;
    if (g_signals == 0) {
        g_first_signal = sig;
        if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
            g_first_signal_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    }
    g_signals++;
    if (g_signals >= 2 && !g_isolated) {
        /* the model holds this very process: a second signal ends it now */
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

/* In the model's process: a signal only asks the loop to stop. */
static void on_child_signal(int sig)
{
    (void)sig;
    if (g_sh) g_sh->stop = 1;
}

static void on_child_exit(int sig)
{
    (void)sig; /* only wakes the watch loop's sleep */
}

typedef struct saved_handlers {
    struct sigaction sint, sterm, schld;
} saved_handlers;

static void set_handler(int sig, void (*fn)(int), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, old);
}

int rpx__die_with_parent(pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    return getppid() == parent ? 0 : -1;
}

/* ---- the watch loop ---- */

static int64_t seconds_ns(double s)
{
    return s >= 9e9 ? INT64_MAX / 4 : (int64_t)(s * 1e9);
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* What the watchdog waits for next, and which limit that is. */
static int64_t next_deadline(const run_params *p, const run_shared *sh, int64_t start,
                             const char **which)
{
    int64_t d = INT64_MAX;
    int ph = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
    int64_t since = __atomic_load_n(&sh->phase_start_ns, __ATOMIC_ACQUIRE);
    *which = NULL;
    if (p->plan->c->timeout_s > 0) {
        /* the whole run: every process since the first */
        d = (p->run_start_ns > 0 ? p->run_start_ns : start) + seconds_ns(p->plan->c->timeout_s);
        *which = "--timeout";
    }
    if (p->plan->c->setup_timeout_s > 0 && (ph == PHASE_LOAD || ph == PHASE_SETUP)) {
        /* loading and setup together, from the start of the model's process */
        int64_t s = start + seconds_ns(p->plan->c->setup_timeout_s);
        if (s < d) {
            d = s;
            *which = "--setup-timeout";
        }
    }
    if (p->plan->c->call_timeout_s > 0 && ph == PHASE_LOOP) {
        int64_t last = __atomic_load_n(&sh->progress_ns, __ATOMIC_ACQUIRE);
        int64_t c = (last > since ? last : since) + seconds_ns(p->plan->c->call_timeout_s);
        if (c < d) {
            d = c;
            *which = "--call-timeout";
        }
    }
    if (g_signals > 0) {
        int64_t g = g_first_signal_ns + seconds_ns(p->plan->c->grace_s);
        if (g_signals >= 2) g = 0;
        if (g < d) {
            d = g;
            *which = "grace";
        }
    }
    return d;
}

static double limit_of(const run_params *p, const char *which)
{
    if (strcmp(which, "--timeout") == 0) return p->plan->c->timeout_s;
    if (strcmp(which, "--setup-timeout") == 0) return p->plan->c->setup_timeout_s;
    if (strcmp(which, "--call-timeout") == 0) return p->plan->c->call_timeout_s;
    return p->plan->c->grace_s;
}

/* What the model's process waits for, once it has waited RPX_RUNNER_NOTICE_S: a line for
 * p->plan->c->notice ("waiting for URL: warmup call 2 of 10, 5 s so far (request timeout 60 s)").
 * Returns when to look again. */
static int64_t notice_waiting(const run_params *p, const run_shared *sh, const char *shown,
                           int64_t now)
{
    const rpx_target_options *t = &p->plan->c->target;
    const rpx_kind *kind = p->plan->row;
    const int requests = rpx__kind_has(kind, RPX_KIND_REQUESTS);
    const int load = rpx__kind_has(kind, RPX_KIND_OWN_LOAD) && t && t->load_rate > 0;
    int ph = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
    int64_t since = __atomic_load_n(&sh->phase_start_ns, __ATOMIC_ACQUIRE);
    int64_t last = __atomic_load_n(&sh->progress_ns, __ATOMIC_ACQUIRE);
    long done = __atomic_load_n(&sh->calls_done, __ATOMIC_ACQUIRE);
    double request_s = t && t->total_timeout_s > 0 ? t->total_timeout_s : 60.0;
    char what[160], limit[96] = "", line[512];
    const int64_t every = (int64_t)RPX_RUNNER_NOTICE_S * 1000000000LL;
    if (ph == PHASE_LOOP && last > since) since = last;
    if (now - since < every) return since + every;
    if (ph == PHASE_LOAD) snprintf(what, sizeof what, "loading the model");
    else if (ph == PHASE_SETUP) snprintf(what, sizeof what, "setup");
    else if (ph == PHASE_TEARDOWN) snprintf(what, sizeof what, "teardown");
    else if (ph != PHASE_LOOP) return now + every;
    else if (done < p->plan->c->warmup) snprintf(what, sizeof what, "warmup call %ld of %ld", done + 1,
                                        p->plan->c->warmup);
    else if (load)
        snprintf(what, sizeof what, "open-loop load, %ld of %ld requests finished",
                 done - p->plan->c->warmup, p->repeats);
    else
        snprintf(what, sizeof what, "timed call %ld of %ld", done - p->plan->c->warmup + 1, p->repeats);
    if (requests && ph == PHASE_LOOP && load) {
        double drain = t->load_drain_s > 0 ? t->load_drain_s
                     : t->load_drain_s < 0 ? 0 : RPX_HTTP_DEFAULT_DRAIN_S;
        double bound = t->load_duration_s + drain;
        if (done < p->plan->c->warmup)
            snprintf(limit, sizeof limit, " (a warmup call waits at most %g s)",
                     bound < request_s ? bound : request_s);
        else
            snprintf(limit, sizeof limit, " (--duration %g s + --drain %g s)",
                     t->load_duration_s, drain);
    } else if (requests && ph == PHASE_LOOP) {
        snprintf(limit, sizeof limit, " (request timeout %g s)", request_s);
    }
    snprintf(line, sizeof line, "waiting for %s: %s, %.0f s so far%s", shown, what,
             (double)(now - since) / 1e9, limit);
    p->plan->c->notice(p->plan->c->notice_ctx, line);
    return now + every;
}

/* In the model's process, before the target is loaded: its CPUs (--cpus,
 * --spread), so that every thread it starts inherits them, and the mask as
 * it reads it back (the report's placement.by_process). -1: the stage failed
 * (sh says why). */
static int pin_cpus(const run_params *p, run_shared *sh)
{
    if (p->cpus && sched_setaffinity(0, sizeof *p->cpus, p->cpus) != 0) {
        sh->outcome = OUTCOME_FAILED;
        snprintf(sh->error, sizeof sh->error,
                 "--cpus: cannot run the model's process on those CPUs: %s; give CPUs from "
                 "the allowed list (the report's placement.cpus_allowed)",
                 strerror(errno));
        return -1;
    }
    if (sched_getaffinity(0, sizeof sh->affinity, &sh->affinity) != 0) CPU_ZERO(&sh->affinity);
    return 0;
}

void rpx__run_stage(const run_params *p, run_shared *sh)
{
    const int isolate = p->plan->c->isolate;
    pid_t pid, parent = getpid();
    int status = 0;
    struct rusage ru;
    int64_t start = rpx_clock_now_ns();
    const char *why_killed = NULL;
    char at[96];
    char *shown = NULL;           /* the model as messages show it (credentials redacted) */
    int64_t next_notice = start + (int64_t)RPX_RUNNER_NOTICE_S * 1000000000LL;

    memset(&ru, 0, sizeof ru);
    g_sh = sh;
    if (g_signals > 0) sh->stop = 1; /* asked to stop before this process began */
    fflush(NULL);
    if (!isolate) {
        /* --cpus in this process: its thread (and the threads the model starts)
         * runs there for the stage; the caller's mask comes back after it */
        cpu_set_t saved;
        int restore = p->cpus && sched_getaffinity(0, sizeof saved, &saved) == 0;
        if (pin_cpus(p, sh) == 0) measure(p, sh);
        if (restore) (void)sched_setaffinity(0, sizeof saved, &saved);
        return;
    }
    {
        const rpx_target_hooks *cu = p->plan->c->target.custom;
        if (cu && cu->before_fork) cu->before_fork(cu->fork_arg);
        pid = fork();
        if (pid == 0 && cu && cu->after_fork_child) cu->after_fork_child(cu->fork_arg);
        else if (cu && cu->after_fork_parent) cu->after_fork_parent(cu->fork_arg);
    }
    if (pid < 0) {
        sh->outcome = OUTCOME_FAILED;
        snprintf(sh->error, sizeof sh->error, "cannot start the child process: %s (use --no-isolate)",
                 strerror(errno));
        return;
    }
    if (pid == 0) {
        if (rpx__die_with_parent(parent) != 0) _exit(1);
        if (g_saved_stdout >= 0) close(g_saved_stdout);
        set_handler(SIGINT, on_child_signal, NULL);
        set_handler(SIGTERM, on_child_signal, NULL);
        signal(SIGCHLD, SIG_DFL);
        if (pin_cpus(p, sh) != 0) {
            fflush(NULL);
            _exit(0);
        }
        rpx__vary_stage(p, sh, measure); /* vary.c: its own inputs and layout first */
        fflush(NULL);
        _exit(0);
    }
    for (;;) {
        const char *which;
        int64_t deadline, now;
        struct timespec ts;
        int phase = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        if (phase == PHASE_LOOP) rpx__gpu_watch_tick(p->plan->gpu_watch);
        deadline = next_deadline(p, sh, start, &which);
        now = rpx_clock_now_ns();
        if (p->plan->c->notice && now >= next_notice) {
            if (!shown) shown = rpx_target_redact_spec(p->plan->c->model);
            next_notice = shown ? notice_waiting(p, sh, shown, now)
                                : now + (int64_t)RPX_RUNNER_NOTICE_S * 1000000000LL;
        }
        if (which && now >= deadline) {
            why_killed = which;
            kill(pid, SIGKILL);
            while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
            }
            break;
        }
        /* sleep to the deadline, or 20 ms to look again; a new phase (the
         * child wakes the futex), a signal or the child's exit (SIGCHLD)
         * wakes it early */
        deadline = min64(deadline, now + 20 * 1000 * 1000);
        ts.tv_sec = (time_t)(deadline / 1000000000);
        ts.tv_nsec = (long)(deadline % 1000000000);
        (void)syscall(SYS_futex, &sh->phase, FUTEX_WAIT_BITSET, phase, &ts, NULL,
                      FUTEX_BITSET_MATCH_ANY);
    }
    free(shown);
    sh->child_maxrss_bytes = (int64_t)ru.ru_maxrss * 1024;
    if (why_killed && strcmp(why_killed, "grace") == 0) {
        note_failed_call(p, sh);
        sh->outcome = OUTCOME_INTERRUPTED;
        sh->abandoned = 1;
        snprintf(sh->error, sizeof sh->error,
                 "interrupted by %s; the model's process was killed %s because the call did "
                 "not end %s",
                 g_first_signal == SIGTERM ? "SIGTERM" : "SIGINT", where(p, sh, at, sizeof at),
                 g_signals >= 2 ? "before a second signal"
                                : "within the grace period (--grace)");
    } else if (why_killed) {
        note_failed_call(p, sh);
        sh->outcome = OUTCOME_TIMED_OUT;
        sh->signal = SIGKILL;
        snprintf(sh->error, sizeof sh->error,
                 "the model ran past %s (%g s) %s; the child process was killed", why_killed,
                 limit_of(p, why_killed), where(p, sh, at, sizeof at));
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        note_failed_call(p, sh);
        sh->signal = sig;
        sh->outcome = sig == SIGKILL ? OUTCOME_KILLED : OUTCOME_CRASHED;
        snprintf(sh->error, sizeof sh->error, "the model's process %s %s with signal %d (%s)%s",
                 sig == SIGKILL ? "was killed" : "crashed", where(p, sh, at, sizeof at), sig,
                 strsignal(sig),
                 sig == SIGKILL ? ": the kernel's out-of-memory killer, or another process" : "");
        input_fault_hint(p, sh);
        setup_crash_hint(p, sh);
    } else if (__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) != PHASE_DONE) {
        /* the model called exit() (or the child ended some other way) mid-run */
        note_failed_call(p, sh);
        sh->outcome = OUTCOME_CRASHED;
        snprintf(sh->error, sizeof sh->error, "the model's process exited (status %d) %s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, where(p, sh, at, sizeof at));
        input_fault_hint(p, sh);
    }
}

static saved_handlers g_old;

static int g_depth; /* stages begun and not ended: an audit's pair runs inside its run's */

void rpx__stage_begin(int isolate, int stdout_to_stderr)
{
    g_sh = NULL;
    g_isolated = isolate;
    if (g_depth++ > 0) return; /* nested: the run's handlers and the signals it got stay */
    g_signals = 0;
    g_first_signal = 0;
    set_handler(SIGINT, on_stop_signal, &g_old.sint);
    set_handler(SIGTERM, on_stop_signal, &g_old.sterm);
    set_handler(SIGCHLD, on_child_exit, &g_old.schld);
    g_saved_stdout = -1;
    fflush(NULL);
    if (stdout_to_stderr) {
        /* the report goes to stdout: whatever the model prints goes to stderr */
        g_saved_stdout = dup(STDOUT_FILENO);
        if (g_saved_stdout >= 0) dup2(STDERR_FILENO, STDOUT_FILENO);
    }
}

int rpx__stage_stop_signal(void)
{
    return g_first_signal;
}

void rpx__stage_end(void)
{
    g_sh = NULL;
    if (g_depth > 0 && --g_depth > 0) return;
    if (g_saved_stdout >= 0) {
        fflush(stdout);
        dup2(g_saved_stdout, STDOUT_FILENO);
        close(g_saved_stdout);
        g_saved_stdout = -1;
    }
    sigaction(SIGINT, &g_old.sint, NULL);
    sigaction(SIGTERM, &g_old.sterm, NULL);
    sigaction(SIGCHLD, &g_old.schld, NULL);
    g_sh = NULL;
}
