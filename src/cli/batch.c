/* batch.c — `rpxprof batch MANIFEST --out-dir DIR [--resume] [--shard I/N]`:
 * runs every (task, model) job of a manifest as a child process of this same
 * binary (`rpxprof run`), so that models are isolated from each other; a job
 * that fails gets a failed report and the others go on (docs/batch.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "rpxprof/batch.h"
#include "rpxprof/error.h"
#include "rpxprof/report.h"
#include "rpxprof/target.h"

extern char **environ;

/* SIGINT/SIGTERM: stop after the job in progress, which is told too (it keeps
 * its samples in an interrupted report). */
static volatile sig_atomic_t g_stop;
static volatile pid_t g_child;

static void on_stop(int sig)
{
    g_stop = 1;
    if (g_child > 0) kill(g_child, sig);
}

static const char usage[] =
    "Usage: rpxprof batch MANIFEST.json --out-dir DIR [--resume] [--shard I/N]\n"
    "Run every (task, model) job of a manifest (docs/batch.md), each as a child\n"
    "`rpxprof run`, writing DIR/<task>/<model>.json. A model that fails gets a\n"
    "report with \"status\": \"failed\" and the other jobs go on.\n"
    "\n"
    "Options:\n"
    "  -o, --out-dir DIR  where the reports go (required)\n"
    "  --resume           skip jobs whose complete report has the same inputs\n"
    "                     (SHA-256) and settings\n"
    "  --shard I/N        run jobs I, I+N, I+2N, ... (0 <= I < N); default from\n"
    "                     SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT when set\n"
    "  -q, --quiet        no progress line\n"
    "  -h, --help         show this help and exit\n"
    "Exit status: 0 all jobs complete or skipped, 1 a job failed, 2 bad command line,\n"
    "130 interrupted (the job in progress keeps its interrupted report).\n";

static int parse_shard(const char *s, long *i, long *n)
{
    const char *slash = strchr(s, '/');
    char buf[64];
    if (!slash || (size_t)(slash - s) >= sizeof buf) return -1;
    memcpy(buf, s, (size_t)(slash - s));
    buf[slash - s] = '\0';
    if (rpx_cli_parse_long(buf, i) || rpx_cli_parse_long(slash + 1, n)) return -1;
    return (*n >= 1 && *i >= 0 && *i < *n) ? 0 : -1;
}

/* The shard from SLURM's array variables: 1 when set, 0 when absent, -1 when bad. */
static int slurm_shard(long *i, long *n)
{
    const char *id = getenv("SLURM_ARRAY_TASK_ID"), *count = getenv("SLURM_ARRAY_TASK_COUNT");
    const char *min = getenv("SLURM_ARRAY_TASK_MIN");
    long lo = 0;
    if (!id || !count || !*id || !*count) return 0;
    if (rpx_cli_parse_long(id, i) || rpx_cli_parse_long(count, n)) return -1;
    if (min && rpx_cli_parse_long(min, &lo)) return -1;
    *i -= lo;
    return (*n >= 1 && *i >= 0 && *i < *n) ? 1 : -1;
}

typedef struct argv_buf {
    char *v[64];
    int n;
    char *owned[32];
    int nowned;
} argv_buf;

static void push(argv_buf *a, const char *s) { if (a->n < 63) a->v[a->n++] = (char *)s; }

static void push_owned(argv_buf *a, char *s)
{
    if (!s || a->nowned >= 32) { free(s); return; }
    a->owned[a->nowned++] = s;
    push(a, s);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, f);
    if (vasprintf(&s, f, ap) < 0) s = NULL;
    va_end(ap);
    return s;
}

/* --meta KEY=VALUE for a scalar of the manifest's task meta. */
static char *meta_arg(const char *key, const json_t *v)
{
    if (json_is_string(v)) return fmt("%s=%s", key, json_string_value(v));
    if (json_is_integer(v)) return fmt("%s=%lld", key, (long long)json_integer_value(v));
    if (json_is_real(v)) return fmt("%s=%.17g", key, json_real_value(v));
    if (json_is_boolean(v)) return fmt("%s=%s", key, json_is_true(v) ? "true" : "false");
    return NULL;
}

/* Run the job in a child; its stderr's last non-empty line goes to `last`. */
static int run_child(const rpx_batch_job *j, const char *out, char *last, size_t lastsz)
{
    argv_buf a = {0};
    posix_spawn_file_actions_t fa;
    int pipefd[2], status = 0, rc = -1, i;
    pid_t pid;
    const char *key;
    json_t *v;
    char buf[4096], line[1024];
    size_t llen = 0;
    ssize_t got;

    last[0] = '\0';
    push(&a, "/proc/self/exe");
    push(&a, "run");
    push(&a, "--model"); push(&a, j->model);
    push(&a, "--inputs"); push(&a, j->inputs);
    push(&a, "--output"); push(&a, out);
    push(&a, "--unit"); push(&a, j->unit);
    push(&a, "--device"); push(&a, j->device);
    push(&a, "--precision"); push(&a, j->precision);
    push(&a, "--warmup"); push_owned(&a, fmt("%ld", j->warmup));
    push(&a, "--repeats"); push_owned(&a, fmt("%ld", j->repeats));
    json_object_foreach((json_t *)j->meta, key, v) {
        char *m = meta_arg(key, v);
        if (m) { push(&a, "--meta"); push_owned(&a, m); }
    }
    if (j->cost) { push(&a, "--cost"); push(&a, j->cost); }
    if (j->flops) { push(&a, "--flops"); push(&a, j->flops); }
    if (j->params) { push(&a, "--params"); push(&a, j->params); }
    if (j->gpus) { push(&a, "--gpu"); push(&a, j->gpus); }
    push(&a, "--quiet");
    a.v[a.n] = NULL;

    if (pipe2(pipefd, O_CLOEXEC) != 0) goto done;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    i = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, a.v, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (i == 0) g_child = pid;
    close(pipefd[1]);
    if (i != 0) {
        snprintf(last, lastsz, "cannot start rpxprof run: %s", strerror(i));
        close(pipefd[0]);
        goto done;
    }
    while ((got = read(pipefd[0], buf, sizeof buf)) != 0) {
        ssize_t k;
        if (got < 0) { if (errno == EINTR) continue; break; }
        for (k = 0; k < got; k++) {
            if (buf[k] == '\n') {
                if (llen) { line[llen] = '\0'; snprintf(last, lastsz, "%s", line); }
                llen = 0;
            } else if (llen + 1 < sizeof line) {
                line[llen++] = buf[k];
            }
        }
    }
    if (llen) { line[llen] = '\0'; snprintf(last, lastsz, "%s", line); }
    close(pipefd[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    g_child = 0;
    if (WIFEXITED(status)) rc = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) {
        rc = 128 + WTERMSIG(status);
        if (!last[0]) snprintf(last, lastsz, "rpxprof run killed by signal %d", WTERMSIG(status));
    }
done:
    for (i = 0; i < a.nowned; i++) free(a.owned[i]);
    return rc;
}

/* Add "task" and "model_name" to the child's report and rewrite it atomically. */
static int tag_report(const char *out, const rpx_batch_job *j, rpx_error *err)
{
    json_t *r = json_load_file(out, 0, NULL);
    int rc;
    if (!r || !json_is_object(r)) {
        json_decref(r);
        return rpx_error_set(err, RPX_EFORMAT, "%s: the report of rpxprof run is not JSON", out);
    }
    json_object_set_new(r, "task", json_string(j->task));
    json_object_set_new(r, "model_name", json_string(j->model_name));
    rc = rpx_json_write_file(out, r, err);
    json_decref(r);
    return rc;
}

static int failed_report(const char *out, const rpx_batch_job *j, const char *error, rpx_error *err)
{
    json_t *r = json_object();
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    int rc;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object_set_new(r, "schema", json_string(RPX_PROFILE_SCHEMA));
    json_object_set_new(r, "tool", json_pack("{s:s,s:s}", "name", "rpxprof", "version", RPX_VERSION));
    json_object_set_new(r, "created_utc", json_string(ts));
    json_object_set_new(r, "status", json_string("failed"));
    json_object_set_new(r, "error", json_string(error));
    {
        char *shown = rpx_target_redact_spec(j->model); /* credentials never reach a report */
        json_object_set_new(r, "model_callable", json_string(shown ? shown : "?"));
        free(shown);
    }
    json_object_set_new(r, "task", json_string(j->task));
    json_object_set_new(r, "model_name", json_string(j->model_name));
    json_object_set_new(r, "device", json_string(j->device));
    json_object_set_new(r, "precision", json_string(j->precision));
    json_object_set_new(r, "unit", json_string(j->unit));
    json_object_set_new(r, "inputs_file", json_string(j->inputs));
    json_object_set_new(r, "warmup_calls", json_integer(j->warmup));
    json_object_set_new(r, "metadata", j->meta ? json_deep_copy(j->meta) : json_object());
    rc = rpx_json_write_file(out, r, err);
    json_decref(r);
    return rc;
}

int rpx_cli_batch(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out-dir", required_argument, NULL, 'o'}, {"resume", no_argument, NULL, 'r'},
        {"shard", required_argument, NULL, 's'},   {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    const char *out_dir = NULL, *shard = NULL;
    int resume = 0, quiet = 0, c, tty, interrupted = 0;
    long si = 0, sn = 1;
    rpx_manifest *m = NULL;
    rpx_error err = {0};
    size_t i, total, mine = 0, done = 0, ncomplete = 0, nfailed = 0, nskipped = 0;
    struct timespec t0, t1;

    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out_dir = optarg; break;
        case 'r': resume = 1; break;
        case 's': shard = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        default: fputs(usage, stderr); return RPX_EXIT_USAGE;
        }
    }
    if (optind != argc - 1)
        return rpx_cli_fail("batch", RPX_EXIT_USAGE, "give exactly one MANIFEST.json; see 'rpxprof batch --help'");
    if (!out_dir)
        return rpx_cli_fail("batch", RPX_EXIT_USAGE, "--out-dir DIR is required");
    if (shard) {
        if (parse_shard(shard, &si, &sn))
            return rpx_cli_fail("batch", RPX_EXIT_USAGE, "--shard '%s': give I/N with 0 <= I < N (e.g. 0/4)", shard);
    } else if (slurm_shard(&si, &sn) < 0) {
        return rpx_cli_fail("batch", RPX_EXIT_USAGE,
                            "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT (minus SLURM_ARRAY_TASK_MIN) "
                            "give no shard I/N with 0 <= I < N; pass --shard I/N");
    }
    if (rpx_manifest_load(argv[optind], &m, &err))
        return rpx_cli_fail("batch", RPX_EXIT_FAILURE, "%s", err.message);
    signal(SIGPIPE, SIG_IGN);
    {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    total = rpx_manifest_job_count(m);
    for (i = 0; i < total; i++) if ((long)(i % (size_t)sn) == si) mine++;
    tty = !quiet && isatty(2);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (i = 0; i < total; i++) {
        const rpx_batch_job *j = rpx_manifest_job(m, i);
        char *out, last[1024];
        int rc;
        if ((long)(i % (size_t)sn) != si) continue;
        if (g_stop) { interrupted = 1; break; }
        out = rpx_batch_report_path(out_dir, j);
        if (!out) { rpx_manifest_free(m); return rpx_cli_fail("batch", 1, "out of memory"); }
        if (tty) {
            double el;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
            if (done) fprintf(stderr, "\r\033[Kbatch: job %zu/%zu %s/%s, ETA %.0f s", done + 1, mine,
                              j->task, j->model_name, el / (double)done * (double)(mine - done));
            else fprintf(stderr, "\r\033[Kbatch: job %zu/%zu %s/%s", done + 1, mine, j->task, j->model_name);
        }
        done++;
        if (resume && rpx_batch_report_matches(out, j)) {
            nskipped++;
            free(out);
            continue;
        }
        unlink(out); /* a stale report must not pass for this run's */
        rc = run_child(j, out, last, sizeof last);
        if (g_stop) interrupted = 1;
        if (rc == 0 && access(out, F_OK) == 0) {
            if (tag_report(out, j, &err) == 0) ncomplete++;
            else { nfailed++; fprintf(stderr, "%srpxprof batch: %s\n", tty ? "\n" : "", err.message); }
            if (interrupted) { free(out); break; }
        } else if (access(out, F_OK) == 0) {
            /* interrupted: the child wrote a report with its status */
            tag_report(out, j, &err);
            nfailed++;
            if (rc == RPX_EXIT_INTERRUPTED || interrupted) { interrupted = 1; free(out); break; }
        } else {
            if (!last[0]) snprintf(last, sizeof last, "rpxprof run exited with status %d and wrote no report", rc);
            if (failed_report(out, j, last, &err)) fprintf(stderr, "%srpxprof batch: %s\n", tty ? "\n" : "", err.message);
            nfailed++;
            if (!quiet) fprintf(stderr, "%srpxprof batch: %s/%s failed: %s\n", tty ? "\r\033[K" : "", j->task, j->model_name, last);
            if (rc == 128 + SIGINT || rc == 128 + SIGTERM || rc == RPX_EXIT_INTERRUPTED || interrupted) {
                interrupted = 1;
                free(out);
                break;
            }
        }
        free(out);
    }
    if (tty) fputs("\r\033[K", stderr);
    printf("batch: %zu jobs (shard %ld/%ld of %zu): %zu complete, %zu failed, %zu skipped; reports in %s\n",
           mine, si, sn, total, ncomplete, nfailed, nskipped, out_dir);
    rpx_manifest_free(m);
    if (interrupted) {
        fprintf(stderr, "rpxprof batch: interrupted; rerun with --resume to finish the remaining jobs\n");
        return RPX_EXIT_INTERRUPTED;
    }
    return nfailed ? RPX_EXIT_FAILURE : RPX_EXIT_OK;
}
