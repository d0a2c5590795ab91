/* run_stage.c — owns the measured stage of `rpxprof run` and its isolation:
 * a child process started before any CUDA initialisation runs the target's
 * setup, the loop and teardown, writing each sample straight into memory
 * shared with the parent; the parent watches it (timeouts, signals) and, if it
 * dies, still has every sample measured before. */
#include "cli/run_stage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "rpxprof/cuda.h"
#include "rpxprof/error.h"
#include "rpxprof/gpu_memory.h"
#include "rpxprof/gpu_time.h"
#include "rpxprof/run.h"
#include "rpxprof/target.h"

run_shared *rpx__run_shared_create(long repeats)
{
    size_t head = (sizeof(run_shared) + 63) & ~(size_t)63;
    size_t samples = (size_t)repeats * sizeof(int64_t);
    size_t json_cap = ((size_t)64 << 10) + (size_t)repeats * 32;
    size_t total = head + samples + json_cap;
    run_shared *sh;
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    sh = m;
    sh->mapped = total;
    sh->samples = (int64_t *)((char *)m + head);
    sh->json = (char *)m + head + samples;
    sh->json_cap = json_cap;
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
    __atomic_store_n(&sh->phase, (int)ph, __ATOMIC_RELEASE);
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
    if (p->target->peaks_reset_fn) p->target->peaks_reset_fn(p->target->state);
}

static void gpu_time_after_call(void *ctx, int timed)
{
    rpx_gpu_time_after_call(ctx, timed);
}

/* What the driver made visible, the memory peaks, the GPU time and the
 * target's section, as one JSON text in the shared block (the parent builds
 * the report from it). */
static void export_json(run_shared *sh, rpx_cuda *cuda, rpx_gpu_mem *gmem, rpx_gpu_time *gtime,
                        rpx_target *target)
{
    json_t *o = json_object(), *c;
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    const char *ver;
    json_t *section = rpx_target_section(target);
    char *text;
    if (section) json_object_set_new(o, "target", section);
    if (!cuda) goto dump;
    c = json_object();
    ver = rpx_cuda_driver_version(cuda);
    json_object_set_new(c, "CUDA_VISIBLE_DEVICES", vis ? json_string(vis) : json_null());
    json_object_set_new(c, "driver_api_version", ver ? json_string(ver) : json_null());
    json_object_set_new(c, "visible_devices", rpx_cuda_devices_json(cuda));
    json_object_set_new(c, "synchronized", json_string("primary context of every visible device, "
                                                      "before and after every call"));
    json_object_set_new(o, "cuda", c);
    json_object_set_new(o, "cuda_peaks", rpx_gpu_mem_peaks_json(gmem));
    json_object_set_new(o, "cuda_method", rpx_gpu_mem_method_json(gmem));
    json_object_set_new(o, "cuda_growth", rpx_gpu_mem_growth_json(gmem));
    json_object_set_new(o, "gpu_time", gtime ? rpx_gpu_time_json(gtime) : json_null());
dump:
    text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (text && strlen(text) < sh->json_cap) {
        memcpy(sh->json, text, strlen(text) + 1);
        sh->json_len = strlen(text);
    }
    free(text);
}

/* The stage itself, in whichever process runs it. */
static void measure(const run_params *p, const rpx_inputs *in, run_shared *sh)
{
    rpx_target *target = NULL;
    rpx_cuda *cuda = NULL;
    rpx_gpu_mem *gmem = NULL;
    rpx_gpu_time *gtime = NULL;
    rpx_run_result res;
    rpx_error err = {0};
    int rc;

    memset(&res, 0, sizeof res);
    sh->outcome = OUTCOME_FAILED;
    if ((rc = rpx_target_open_ex(p->model, p->target, &target, &err)) != 0) goto fail;
    if (strcmp(p->device, "cuda") == 0) {
        /* the primary contexts exist before setup: memory is tracked from there */
        if ((rc = rpx_cuda_open(&cuda, &err)) != 0 ||
            (rc = rpx_cuda_sync_overhead(cuda, 1001, &sh->sync_ns, &err)) != 0 ||
            (rc = rpx_gpu_mem_start(cuda, 1000, &gmem, &err)) != 0)
            goto fail;
        sh->has_sync = 1;
        /* kernel tracing starts before setup; setup's kernels go with the warmup's */
        if (p->gpu_time && (rc = rpx_gpu_time_open((size_t)p->repeats, &gtime, &err)) != 0)
            goto fail;
    }
    set_phase(sh, PHASE_SETUP);
    {
        rpx_run_info info = {RPX_MODEL_ABI_VERSION, p->device, p->precision, p->unit, p->warmup,
                             p->repeats};
        if ((rc = rpx_target_setup(target, in, &info, &err)) != 0) goto fail;
        if (gtime) rpx_gpu_time_after_call(gtime, 0); /* setup's kernels are not a call's */
    }
    if ((rc = rpx_timer_calibrate(&sh->timer, 0)) != 0) {
        rpx_error_set(&err, rc, "cannot calibrate the clock: %s", rpx_strerror(rc));
        goto fail;
    }
    sh->timer_ok = 1;
    set_phase(sh, PHASE_LOOP);
    {
        peaks_ctx pk = {gmem, target};
        rpx_run_config cfg = {p->warmup, p->repeats, NULL, NULL, p->progress, &sh->stop,
                              peaks_reset, &pk, NULL, NULL, sh->samples, &sh->calls_done,
                              p->max_failures, &sh->failed_calls, &sh->failed_warmup_calls};
        if (cuda) {
            cfg.sync = rpx_cuda_sync_all;
            cfg.sync_ctx = cuda;
        }
        if (gtime) {
            cfg.after_call = gpu_time_after_call;
            cfg.after_ctx = gtime;
        }
        rc = rpx_measure_run(&cfg, target, in, &res, &err);
        rpx_gpu_mem_stop(gmem);
    }
    sh->warmup_done = res.warmup_done;
    sh->measured = res.measured;
    sh->failed_call = res.failed_call;
    sh->failed_in_warmup = res.failed_in_warmup;
    sh->failed_calls = res.failed_calls;
    sh->failed_warmup_calls = res.failed_warmup_calls;
    sh->wall_ns = res.wall_ns;
    sh->memory = res.memory;
    if (rc == 0 && res.status != RPX_RUN_FAILED) export_json(sh, cuda, gmem, gtime, target);
    if (rc == 0 && res.status == RPX_RUN_COMPLETE && res.measured == 0 && res.failed_calls > 0)
        rpx_error_set(&err, RPX_EMODEL, "--model %s: all %ld timed calls failed; the last: %s",
                      target->display_spec, res.failed_calls, res.last_failure);
    set_phase(sh, PHASE_TEARDOWN);
    rpx_target_close(target); /* teardown runs while the contexts are still held */
    target = NULL;
    if (rc != 0 || res.status == RPX_RUN_FAILED) goto fail;
    if (res.status == RPX_RUN_TOO_MANY_FAILURES) {
        sh->outcome = OUTCOME_CALLS_FAILED;
    } else if (res.status == RPX_RUN_INTERRUPTED) {
        sh->outcome = OUTCOME_INTERRUPTED;
    } else if (res.measured == 0 && res.failed_calls > 0) {
        sh->outcome = OUTCOME_CALLS_FAILED;
    } else {
        sh->outcome = res.status == RPX_RUN_INTERRUPTED ? OUTCOME_INTERRUPTED : OUTCOME_COMPLETE;
    }
    if (sh->outcome != OUTCOME_COMPLETE) snprintf(sh->error, sizeof sh->error, "%s", err.message);
    goto done;
fail:
    sh->outcome = OUTCOME_FAILED;
    snprintf(sh->error, sizeof sh->error, "%s", err.message);
done:
    set_phase(sh, PHASE_DONE);
    rpx_target_close(target);
    rpx_gpu_time_close(gtime);
    rpx_gpu_mem_free(gmem);
    rpx_cuda_close(cuda);
    rpx_run_result_free(&res);
}

/* The child's resident set in bytes, from /proc/PID/statm; -1 if unreadable. */
static int64_t child_rss(pid_t pid)
{
    char path[64], buf[128];
    long size, resident;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    f = fopen(path, "r");
    if (!f) return -1;
    if (!fgets(buf, sizeof buf, f) || sscanf(buf, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : (int64_t)resident * sysconf(_SC_PAGESIZE);
}

#define RSS_TRACE 4096

typedef struct rss_trace {
    int64_t rss[RSS_TRACE];
    long call[RSS_TRACE];
    int n, stride, skip;
} rss_trace;

/* Keep at most RSS_TRACE points spread over the whole run: when full, drop
 * every other point and sample half as often. */
static void rss_add(rss_trace *t, long call, int64_t rss)
{
    int i;
    if (rss < 0 || (t->skip++ % t->stride) != 0) return;
    if (t->n == RSS_TRACE) {
        for (i = 0; i < RSS_TRACE / 2; i++) {
            t->rss[i] = t->rss[2 * i];
            t->call[i] = t->call[2 * i];
        }
        t->n = RSS_TRACE / 2;
        t->stride *= 2;
    }
    t->rss[t->n] = rss;
    t->call[t->n] = call;
    t->n++;
}

static double median_mb(int64_t *v, int n)
{
    return rpx_median_i64(v, (size_t)n) / 1048576.0;
}

/* Medians of the first and the last quarter of the trace. */
static void rss_summarise(rss_trace *t, run_shared *sh)
{
    int q = t->n / 4;
    sh->rss_samples = t->n;
    if (q < 2) return;
    sh->rss_first_call = t->call[0];
    sh->rss_last_call = t->call[t->n - 1];
    sh->rss_first_mb = median_mb(t->rss, q);
    sh->rss_last_mb = median_mb(t->rss + t->n - q, q);
}

static double now_s(void)
{
    return (double)rpx_clock_now_ns() / 1e9;
}

/* The call in progress when the child stopped answering or died. */
static void note_failed_call(const run_params *p, run_shared *sh)
{
    long done = __atomic_load_n(&sh->calls_done, __ATOMIC_ACQUIRE);
    long failed = __atomic_load_n(&sh->failed_calls, __ATOMIC_ACQUIRE);
    sh->warmup_done = done < p->warmup ? done : p->warmup;
    sh->measured = done - failed > p->warmup ? (size_t)(done - failed - p->warmup) : 0;
    sh->failed_in_warmup = done < p->warmup;
    sh->failed_call = sh->failed_in_warmup ? done : done - p->warmup;
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

void rpx__run_stage(const run_params *p, const rpx_inputs *in, int isolate, run_shared *sh)
{
    pid_t pid;
    int status = 0;
    struct rusage ru;
    double start = now_s(), last_progress;
    long last_done = -1;
    const char *why_killed = NULL;
    char at[96];
    rss_trace *trace = NULL;

    if (!isolate) {
        measure(p, in, sh);
        return;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        sh->outcome = OUTCOME_FAILED;
        snprintf(sh->error, sizeof sh->error, "cannot start the child process: %s (use --no-isolate)",
                 strerror(errno));
        return;
    }
    if (pid == 0) {
        /* the child: SIGINT/SIGTERM handlers were inherited and set sh->stop */
        measure(p, in, sh);
        fflush(NULL);
        _exit(0);
    }
    last_progress = start;
    trace = calloc(1, sizeof *trace);
    if (trace) trace->stride = 1;
    for (;;) {
        struct timespec tick = {0, 20 * 1000 * 1000};
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        double t = now_s();
        long done;
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        done = __atomic_load_n(&sh->calls_done, __ATOMIC_ACQUIRE);
        if (trace && done > p->warmup &&
            __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PHASE_LOOP)
            rss_add(trace, done - p->warmup, child_rss(pid));
        if (done != last_done) {
            last_done = done;
            last_progress = t;
        }
        if (!why_killed && p->timeout_s > 0 && t - start > p->timeout_s)
            why_killed = "--timeout";
        if (!why_killed && p->call_timeout_s > 0 &&
            __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PHASE_LOOP &&
            t - last_progress > p->call_timeout_s)
            why_killed = "--call-timeout";
        if (why_killed) {
            kill(pid, SIGKILL);
            while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
            }
            break;
        }
        nanosleep(&tick, NULL);
    }
    sh->child_maxrss_bytes = (int64_t)ru.ru_maxrss * 1024;
    if (trace) rss_summarise(trace, sh);
    free(trace);
    if (why_killed) {
        note_failed_call(p, sh);
        sh->outcome = OUTCOME_TIMED_OUT;
        sh->signal = SIGKILL;
        snprintf(sh->error, sizeof sh->error,
                 "the model ran past %s (%g s) %s; the child process was killed",
                 why_killed,
                 strcmp(why_killed, "--timeout") == 0 ? p->timeout_s : p->call_timeout_s,
                 where(p, sh, at, sizeof at));
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        note_failed_call(p, sh);
        sh->signal = sig;
        sh->outcome = sig == SIGKILL ? OUTCOME_KILLED : OUTCOME_CRASHED;
        snprintf(sh->error, sizeof sh->error, "the model's process %s %s with signal %d (%s)%s",
                 sig == SIGKILL ? "was killed" : "crashed", where(p, sh, at, sizeof at), sig,
                 strsignal(sig),
                 sig == SIGKILL ? ": the kernel's out-of-memory killer, or another process" : "");
    } else if (__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) != PHASE_DONE) {
        /* the model called exit() (or the child ended some other way) mid-run */
        note_failed_call(p, sh);
        sh->outcome = OUTCOME_CRASHED;
        snprintf(sh->error, sizeof sh->error, "the model's process exited (status %d) %s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, where(p, sh, at, sizeof at));
    }
}
