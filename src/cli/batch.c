/* batch.c — `rpxprof batch MANIFEST --out-dir DIR [--resume] [--shard I/N]`:
 * parses, loads the manifest (its jobs of a task must do the same work,
 * aggregate's check, refused before the first job otherwise), hands the jobs
 * to rpx_batch_run (src/batch/batch_run.c: the runner for each, a failed
 * report for a job that fails, every report path checked first), and prints
 * the progress line, the failures and the summary (docs/batch.md). SIGINT and
 * SIGTERM between jobs stop before the next one. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "rpxprof/batch.h"
#include "rpxprof/error.h"
#include "rpxprof/manifest.h"

/* SIGINT/SIGTERM between jobs: stop before the next one. During a job the
 * runner handles them (the job stops after its current call, or after the
 * grace period, and keeps its samples in an interrupted report). */
static volatile sig_atomic_t g_stop;

static void on_stop(int sig)
{
    g_stop = sig; /* which one: 130 or 143 at the end */
}

static const char usage[] =
    "Usage: rpxprof batch MANIFEST.json --out-dir DIR [--resume] [--shard I/N] [--force]\n"
    "Run every (task, model) job of a manifest (docs/batch.md), each as rpxprof run\n"
    "would (its model in worker processes), writing DIR/<task>/<model>.json. A model\n"
    "that fails gets a report with \"status\": \"failed\" and the other jobs go on.\n"
    "\n"
    "Options:\n"
    "  -o, --out-dir DIR  where the reports go (required)\n"
    "  --resume           skip jobs whose complete report has the same inputs\n"
    "                     (SHA-256) and settings\n"
    "  --shard I/N        run jobs I, I+N, I+2N, ... (0 <= I < N); default from a\n"
    "                     Slurm array: I = (SLURM_ARRAY_TASK_ID - _MIN) / _STEP,\n"
    "                     N = SLURM_ARRAY_TASK_COUNT (refused when the array is\n"
    "                     not MIN, MIN+STEP, ..., MAX)\n"
    "  --force            replace files at the reports' paths that rpxprof did not\n"
    "                     write (never the manifest or an inputs file)\n"
    "  --html FILE        also write the HTML report of DIR (as 'rpxprof report DIR'\n"
    "                     makes it: aggregate's checks, the table, each job's run)\n"
    "  --history PATH     record each job's session into this history (an SQLite file\n"
    "                     or postgresql://...; also RPXPROF_HISTORY; docs/history.md)\n"
    "  -q, --quiet        no progress line\n"
    "  -h, --help         show this help and exit\n"
    "Exit status: 0 all jobs complete or skipped, 1 a job failed, 2 bad command line,\n"
    "9 the reports written but a session not recorded in the history,\n"
    "130/143 interrupted by SIGINT/SIGTERM (the job in progress keeps its interrupted report).\n";

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

/* The shard from SLURM's array variables: 1 when set, 0 when absent, < 0 when
 * they cannot cover every job exactly once (err says why). */
static int slurm_shard(long *i, long *n, rpx_error *err)
{
    rpx_slurm_array a = {getenv("SLURM_ARRAY_TASK_ID"), getenv("SLURM_ARRAY_TASK_MIN"),
                         getenv("SLURM_ARRAY_TASK_MAX"), getenv("SLURM_ARRAY_TASK_STEP"),
                         getenv("SLURM_ARRAY_TASK_COUNT")};
    return rpx_batch_slurm_shard(&a, i, n, err);
}

/* The progress line on a terminal: the job and an ETA from the jobs done. */
typedef struct progress {
    int tty, quiet;
    struct timespec t0;
} progress;

static void on_job(void *user, size_t number, size_t mine, const rpx_batch_job *j)
{
    progress *p = user;
    struct timespec t1;
    double el;
    if (!p->tty) return;
    if (number > 1) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        el = (double)(t1.tv_sec - p->t0.tv_sec) + (double)(t1.tv_nsec - p->t0.tv_nsec) / 1e9;
        fprintf(stderr, "\r\033[Kbatch: job %zu/%zu %s/%s, ETA %.0f s", number, mine, j->task,
                j->model_name, el / (double)(number - 1) * (double)(mine - number + 1));
    } else {
        fprintf(stderr, "\r\033[Kbatch: job %zu/%zu %s/%s", number, mine, j->task, j->model_name);
    }
}

static void on_failed(void *user, const rpx_batch_job *j, const char *why, const char *report_error)
{
    progress *p = user;
    if (report_error) fprintf(stderr, "%srpxprof batch: %s\n", p->tty ? "\n" : "", report_error);
    if (!p->quiet)
        fprintf(stderr, "%srpxprof batch: %s/%s failed: %s\n", p->tty ? "\r\033[K" : "", j->task,
                j->model_name, why);
}

int rpx_cli_batch(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out-dir", required_argument, NULL, 'o'}, {"resume", no_argument, NULL, 'r'},
        {"shard", required_argument, NULL, 's'},   {"quiet", no_argument, NULL, 'q'},
        {"force", no_argument, NULL, 'f'},         {"help", no_argument, NULL, 'h'},
        {"html", required_argument, NULL, 'H'},     {"history", required_argument, NULL, 'Y'},
        {NULL, 0, NULL, 0}};
    const char *out_dir = NULL, *shard = NULL, *html = NULL;
    rpx_output *hout = NULL;
    char *dir_owned = NULL;
    int resume = 0, quiet = 0, force = 0, c, rc;
    long si = 0, sn = 1;
    rpx_manifest *m = NULL;
    rpx_error err = {0};
    rpx_batch_options bo = {0};
    rpx_batch_result br;
    progress pr = {0};

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":" "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out_dir = optarg; break;
        case 'r': resume = 1; break;
        case 's': shard = optarg; break;
        case 'q': quiet = 1; break;
        case 'f': force = 1; break;
        case 'H': html = optarg; break;
        case 'Y': bo.history = optarg; break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        default: return rpx_cli_bad_option("batch", c, argv);
        }
    }
    if (optind != argc - 1)
        return rpx_cli_fail("batch", RPX_EXIT_USAGE, "give exactly one MANIFEST.json; see 'rpxprof batch --help'");
    if (!out_dir)
        return rpx_cli_fail("batch", RPX_EXIT_USAGE, "--out-dir DIR is required");
    if (shard) {
        if (parse_shard(shard, &si, &sn))
            return rpx_cli_fail("batch", RPX_EXIT_USAGE, "--shard '%s': give I/N with 0 <= I < N (e.g. 0/4)", shard);
    } else if (slurm_shard(&si, &sn, &err) < 0) {
        return rpx_cli_fail("batch", RPX_EXIT_USAGE, "%s", err.message);
    }
    if (rpx_manifest_load(argv[optind], &m, &err) ||
        rpx_manifest_check_same_work(m, argv[optind], &err)) {
        rpx_manifest_free(m);
        return rpx_cli_fail("batch", RPX_EXIT_FAILURE, "%s", err.message);
    }
    if (html) {   /* the page is never one of the jobs' reports */
        size_t i;
        for (i = 0; i < rpx_manifest_job_count(m); i++) {
            char *rp = rpx_batch_report_path(out_dir, rpx_manifest_job(m, i));
            const char *which[2] = {"--out-dir", "--html"}, *paths[2] = {rp, html};
            rc = rp ? rpx_cli_outputs_distinct("batch", which, paths, 2) : 0;
            free(rp);
            if (rc) {
                rpx_manifest_free(m);
                return rc;
            }
        }
    }
    if (html && (rc = rpx__cli_html_open("batch", html, force, (const char *const *)argv + optind, 1, &hout)) != 0) {
        rpx_manifest_free(m);
        return rc;
    }
    if (!(dir_owned = rpx_batch_dir_clean(out_dir))) {
        rpx_output_discard(hout);
        rpx_manifest_free(m);
        return rpx_cli_fail("batch", RPX_EXIT_FAILURE, "out of memory");
    }
    bo.manifest_path = argv[optind];
    bo.out_dir = dir_owned;
    bo.shard_index = si;
    bo.shard_count = sn;
    bo.resume = resume;
    bo.force = force;
    bo.code_sha = getenv("RPX_GIT_SHA");
    bo.container_image = getenv("PROFILE_CONTAINER_IMAGE");
    bo.concurrent_host_load = getenv("PROFILE_CONCURRENT_HOST_LOAD");
    bo.stop = &g_stop;
    bo.on_job = on_job;
    bo.on_failed = on_failed;
    bo.user = &pr;
    signal(SIGPIPE, SIG_IGN);
    {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    pr.tty = !quiet && isatty(2);
    pr.quiet = quiet;
    clock_gettime(CLOCK_MONOTONIC, &pr.t0);
    rc = rpx_batch_run(m, &bo, &br, &err);
    if (rc != 0 && !br.started) {
        rpx_output_discard(hout);
        free(dir_owned);
        rpx_manifest_free(m);
        /* a report path that is one of the files the batch reads: a bad command line */
        return rpx_cli_fail("batch", rc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s",
                            err.message);
    }
    if (rc != 0) fprintf(stderr, "rpxprof batch: %s\n", err.message);
    if (pr.tty) fputs("\r\033[K", stderr);
    if (br.interrupted_jobs)
        printf("batch: %zu jobs (shard %ld/%ld of %zu): %zu complete, %zu failed, %zu skipped, "
               "%zu interrupted; reports in %s\n",
               br.mine, si, sn, br.total, br.complete, br.failed, br.skipped, br.interrupted_jobs,
               dir_owned);
    else
        printf("batch: %zu jobs (shard %ld/%ld of %zu): %zu complete, %zu failed, %zu skipped; "
               "reports in %s\n",
               br.mine, si, sn, br.total, br.complete, br.failed, br.skipped, dir_owned);
    rpx_manifest_free(m);
    if (hout) {   /* the page of the folder, interrupted or not */
        char *dirs[1];
        dirs[0] = dir_owned;
        if (rpx__cli_html_of_files("batch", hout, dirs, 1) == 0) printf("%s\n", html);
        else if (!br.failed && !br.interrupted) { free(dir_owned); return RPX_EXIT_EXTRA_OUTPUT; }
    }
    free(dir_owned);
    if (br.history_failed)
        rpx_cli_term_printf(stderr, "rpxprof batch: error: %zu job%s not recorded in the history; "
                            "the last: %s\n", br.history_failed,
                            br.history_failed == 1 ? "" : "s", br.history_error);
    if (br.interrupted) {
        int sig = br.stop_signal ? br.stop_signal : (int)g_stop;
        fprintf(stderr, "rpxprof batch: interrupted; rerun with --resume to finish the remaining jobs\n");
        return sig == SIGTERM ? RPX_EXIT_TERMINATED : RPX_EXIT_INTERRUPTED;
    }
    return br.failed ? RPX_EXIT_FAILURE : br.history_failed ? RPX_EXIT_HISTORY : RPX_EXIT_OK;
}
