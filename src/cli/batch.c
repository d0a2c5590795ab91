/* batch.c — `rpxprof batch MANIFEST --out-dir DIR [--resume] [--shard I/N]`:
 * runs every (task, model) job of a manifest as a child process of this same
 * binary (`rpxprof run`), so that models are isolated from each other; a job
 * that fails gets a failed report and the others go on (docs/batch.md).
 * Every job's report path is checked before the first job (the output guard,
 * src/common/output.c), and a job dies with batch (PR_SET_PDEATHSIG). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "rpxprof/batch.h"
#include "rpxprof/error.h"
#include "rpxprof/output.h"
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
    "Usage: rpxprof batch MANIFEST.json --out-dir DIR [--resume] [--shard I/N] [--force]\n"
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
    "  --force            replace files at the reports' paths that rpxprof did not\n"
    "                     write (never the manifest or an inputs file)\n"
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

/* Run the job in a child; its stderr's last non-empty line goes to `last`.
 * The child gets SIGKILL when this process dies (even by SIGKILL), so a job
 * never outlives batch; its own model process dies with it the same way. */
static int run_child(const rpx_batch_job *j, const char *out, int force, char *last,
                     size_t lastsz)
{
    static const char exec_failed[] = "cannot start rpxprof run: exec of /proc/self/exe failed\n";
    argv_buf a = {0};
    int pipefd[2], status = 0, rc = -1, i;
    pid_t pid, parent = getpid();
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
    if (force) push(&a, "--force"); /* checked by batch before the first job */
    push(&a, "--quiet");
    a.v[a.n] = NULL;

    if (pipe2(pipefd, O_CLOEXEC) != 0) goto done;
    pid = fork();
    if (pid == 0) {
        /* the child: async-signal-safe calls only until exec */
        int fd;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
        fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(pipefd[1], 2) < 0) _exit(127);
        execve("/proc/self/exe", a.v, environ);
        if (write(2, exec_failed, sizeof exec_failed - 1) < 0) {}
        _exit(127);
    }
    i = pid < 0 ? errno : 0;
    if (pid > 0) g_child = pid;
    close(pipefd[1]);
    if (pid < 0) {
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

/* What batch never replaces, and how it may replace a job's report. */
typedef struct guard {
    const char **protect;
    size_t n_protect;
    int force;
} guard;

static int open_report(const guard *g, const char *out, rpx_output **o, rpx_error *err)
{
    rpx_output_options oo = {RPX_OUTPUT_REPORT, RPX_PROFILE_SCHEMA, g->force, g->protect,
                             g->n_protect, "--out-dir"};
    return rpx_output_open(out, &oo, o, err);
}

/* Add "task" and "model_name" to the child's report and rewrite it atomically. */
static int tag_report(const guard *g, const char *out, const rpx_batch_job *j, rpx_error *err)
{
    json_t *r = json_load_file(out, 0, NULL);
    rpx_output *o;
    int rc;
    if (!r || !json_is_object(r)) {
        json_decref(r);
        return rpx_error_set(err, RPX_EFORMAT, "%s: the report of rpxprof run is not JSON", out);
    }
    json_object_set_new(r, "task", json_string(j->task));
    json_object_set_new(r, "model_name", json_string(j->model_name));
    rc = open_report(g, out, &o, err);
    if (!rc) rc = rpx_json_write_output(o, r, err);
    json_decref(r);
    return rc;
}

static int failed_report(const guard *g, const char *out, const rpx_batch_job *j,
                         const char *error, rpx_error *err)
{
    json_t *r = json_object();
    rpx_output *o;
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
    rc = open_report(g, out, &o, err);
    if (!rc) rc = rpx_json_write_output(o, r, err);
    json_decref(r);
    return rc;
}

/* The identity of the file at `path` (links followed); 0 when there is none. */
static int file_id(const char *path, struct stat *st)
{
    return stat(path, st) == 0;
}

/* 1 when the job's child left a report of its own at `path`: a file that is
 * not the one that was there before the job (the guard renames a new file in). */
static int child_wrote(const char *path, int had, const struct stat *before)
{
    struct stat now;
    if (!file_id(path, &now)) return 0;
    return !had || now.st_dev != before->st_dev || now.st_ino != before->st_ino ||
           now.st_mtim.tv_sec != before->st_mtim.tv_sec ||
           now.st_mtim.tv_nsec != before->st_mtim.tv_nsec;
}

/* The model file of a shared-object --model (PATH:SYMBOL), malloc'ed, or NULL. */
static char *model_file(const char *spec)
{
    const char *colon = strrchr(spec, ':');
    if (!colon || !strchr(spec, '/') || strstr(spec, "://")) return NULL;
    return strndup(spec, (size_t)(colon - spec));
}

/* Before the first job: every report path of this shard is checked (its folder
 * made, a temporary file created and removed, what is there replaceable). */
static int check_reports(const rpx_manifest *m, const char *out_dir, long si, long sn,
                         const guard *g, rpx_error *err)
{
    size_t i, total = rpx_manifest_job_count(m);
    struct stat st;
    int rc = 0;
    if (stat(out_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: is not a folder; give a folder for --out-dir (it is made when "
                             "missing)", out_dir);
    for (i = 0; i < total && !rc; i++) {
        const rpx_batch_job *j = rpx_manifest_job(m, i);
        rpx_output *o = NULL;
        char *out;
        if ((long)(i % (size_t)sn) != si) continue;
        if (!(out = rpx_batch_report_path(out_dir, j)))
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        rc = open_report(g, out, &o, err);
        rpx_output_discard(o);
        free(out);
    }
    return rc;
}

int rpx_cli_batch(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out-dir", required_argument, NULL, 'o'}, {"resume", no_argument, NULL, 'r'},
        {"shard", required_argument, NULL, 's'},   {"quiet", no_argument, NULL, 'q'},
        {"force", no_argument, NULL, 'f'},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *out_dir = NULL, *shard = NULL;
    int resume = 0, quiet = 0, force = 0, c, tty, interrupted = 0;
    guard g = {0};
    char **owned = NULL;
    size_t nowned = 0;
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
        case 'f': force = 1; break;
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
    /* never replaced: the manifest, every job's inputs, cost model and model
     * file; every report path is checked before the first job */
    total = rpx_manifest_job_count(m);
    g.force = force;
    g.protect = calloc(3 * total + 1, sizeof *g.protect);
    owned = calloc(total + 1, sizeof *owned);
    if (!g.protect || !owned) {
        free(g.protect);
        free(owned);
        rpx_manifest_free(m);
        return rpx_cli_fail("batch", RPX_EXIT_FAILURE, "out of memory");
    }
    g.protect[g.n_protect++] = argv[optind];
    for (i = 0; i < total; i++) {
        const rpx_batch_job *j = rpx_manifest_job(m, i);
        g.protect[g.n_protect++] = j->inputs;
        if (j->cost) g.protect[g.n_protect++] = j->cost;
        if ((owned[nowned] = model_file(j->model)) != NULL) g.protect[g.n_protect++] = owned[nowned++];
    }
    if (check_reports(m, out_dir, si, sn, &g, &err)) {
        for (i = 0; i < nowned; i++) free(owned[i]);
        free(owned);
        free(g.protect);
        rpx_manifest_free(m);
        return rpx_cli_fail("batch", RPX_EXIT_FAILURE, "%s", err.message);
    }
    signal(SIGPIPE, SIG_IGN);
    {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    for (i = 0; i < total; i++) if ((long)(i % (size_t)sn) == si) mine++;
    tty = !quiet && isatty(2);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (i = 0; i < total; i++) {
        const rpx_batch_job *j = rpx_manifest_job(m, i);
        char *out, last[1024];
        struct stat before;
        int rc, had;
        if ((long)(i % (size_t)sn) != si) continue;
        if (g_stop) { interrupted = 1; break; }
        out = rpx_batch_report_path(out_dir, j);
        if (!out) { nfailed++; fprintf(stderr, "rpxprof batch: out of memory\n"); break; }
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
        /* a stale report must not pass for this run's: the child's is a new file */
        had = file_id(out, &before);
        rc = run_child(j, out, force, last, sizeof last);
        if (g_stop) interrupted = 1;
        if (rc == 0 && child_wrote(out, had, &before)) {
            if (tag_report(&g, out, j, &err) == 0) ncomplete++;
            else { nfailed++; fprintf(stderr, "%srpxprof batch: %s\n", tty ? "\n" : "", err.message); }
            if (interrupted) { free(out); break; }
        } else if (child_wrote(out, had, &before)) {
            /* interrupted: the child wrote a report with its status */
            tag_report(&g, out, j, &err);
            nfailed++;
            if (rc == RPX_EXIT_INTERRUPTED || interrupted) { interrupted = 1; free(out); break; }
        } else {
            if (!last[0]) snprintf(last, sizeof last, "rpxprof run exited with status %d and wrote no report", rc);
            if (failed_report(&g, out, j, last, &err)) fprintf(stderr, "%srpxprof batch: %s\n", tty ? "\n" : "", err.message);
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
    for (i = 0; i < nowned; i++) free(owned[i]);
    free(owned);
    free(g.protect);
    if (interrupted) {
        fprintf(stderr, "rpxprof batch: interrupted; rerun with --resume to finish the remaining jobs\n");
        return RPX_EXIT_INTERRUPTED;
    }
    return nfailed ? RPX_EXIT_FAILURE : RPX_EXIT_OK;
}
