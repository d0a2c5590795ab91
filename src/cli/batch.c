/* batch.c — `rpxprof batch MANIFEST --out-dir DIR [--resume] [--shard I/N]`:
 * runs every (task, model) job of a manifest through the runner (the call
 * behind `rpxprof run`, its model in worker processes), so that models are
 * isolated from each other; a job that fails gets a failed report and the
 * others go on (docs/batch.md). The manifest's jobs of a task must do the same
 * work (aggregate's check), refused before the first job otherwise.
 * Every job's report path is checked before the first job (the output guard,
 * src/common/output.c), and a job dies with batch (PR_SET_PDEATHSIG). */
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
#include "common/json.h"
#include "rpxprof/manifest.h"
#include "rpxprof/error.h"
#include "common/output.h"
#include "batch/pipeline.h"
#include "rpxprof/report.h"
#include "rpxprof/runner.h"
#include "rpxprof/target.h"

/* SIGINT/SIGTERM between jobs: stop before the next one. During a job the
 * runner handles them (the job stops after its current call, or after the
 * grace period, and keeps its samples in an interrupted report). */
static volatile sig_atomic_t g_stop;

static void on_stop(int sig)
{
    (void)sig;
    g_stop = 1;
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

/* The shard from SLURM's array variables: 1 when set, 0 when absent, < 0 when
 * they cannot cover every job exactly once (err says why). */
static int slurm_shard(long *i, long *n, rpx_error *err)
{
    rpx_slurm_array a = {getenv("SLURM_ARRAY_TASK_ID"), getenv("SLURM_ARRAY_TASK_MIN"),
                         getenv("SLURM_ARRAY_TASK_MAX"), getenv("SLURM_ARRAY_TASK_STEP"),
                         getenv("SLURM_ARRAY_TASK_COUNT")};
    return rpx_batch_slurm_shard(&a, i, n, err);
}

/* What batch never replaces, and how it may replace a job's report. */
typedef struct guard {
    const char **protect;
    size_t n_protect;
    int force;
    const char *manifest;         /* for the pipeline's manifest_path */
} guard;

/* The depth-efficiency pipeline's keys (docs/batch.md), its environment
 * variables read here: the library reads none. */
static int pipeline_keys(const guard *g, const rpx_batch_job *j, json_t *r, rpx_error *err)
{
    rpx_pipeline_context pc = {j->model_name, g->manifest, getenv("RPX_GIT_SHA"),
                               getenv("PROFILE_CONTAINER_IMAGE"),
                               getenv("PROFILE_CONCURRENT_HOST_LOAD")};
    return rpx_pipeline_keys_add(r, &pc, err);
}

static int open_report(const guard *g, const char *out, rpx_output **o, rpx_error *err)
{
    rpx_output_options oo = {RPX_OUTPUT_REPORT, RPX_PROFILE_SCHEMA, g->force, g->protect,
                             g->n_protect, "--out-dir"};
    return rpx_output_open(out, &oo, o, err);
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
    rc = pipeline_keys(g, j, r, err);
    if (!rc) rc = open_report(g, out, &o, err);
    if (!rc) rc = rpx_json_write_output(o, r, err);
    json_decref(r);
    return rc;
}

/* Run one job through the runner (the same call as `rpxprof run`), in this
 * process: its worker processes die with it. The report, tagged with the task
 * and the model's name, goes through the guard. Returns 0 when the run
 * completed and its report was written; else `last` says why, *wrote says
 * whether a report (with its status) was written, *stop whether a signal
 * asked the batch to stop. */
static int run_job(const guard *g, const rpx_batch_job *j, const char *out, char *last,
                   size_t lastsz, int *wrote, int *stop)
{
    rpx_runner_config c;
    rpx_runner_result res;
    rpx_error err = {0};
    rpx_output *o;
    int rc;
    *wrote = *stop = 0;
    last[0] = '\0';
    rpx_batch_job_config(j, &c);
    rc = rpx_runner_run(&c, &res, &err);
    if (rc != 0) {
        snprintf(last, lastsz, "%s", err.message);
        rpx_runner_result_free(&res);
        return -1;
    }
    *stop = res.status == RPX_RUNNER_INTERRUPTED;
    json_object_set_new(res.report, "task", json_string(j->task));
    json_object_set_new(res.report, "model_name", json_string(j->model_name));
    rc = pipeline_keys(g, j, res.report, &err);
    if (!rc) rc = open_report(g, out, &o, &err);
    if (!rc) rc = rpx_json_write_output(o, res.report, &err);
    if (rc) snprintf(last, lastsz, "%s", err.message);
    else *wrote = 1;
    if (!rc && res.status != RPX_RUNNER_COMPLETE) {
        snprintf(last, lastsz, "%.900s (status %.40s)", res.error,
                 json_string_value(json_object_get(res.report, "status")));
        rc = -1;
    }
    rpx_runner_result_free(&res);
    return rc;
}

/* What batch never replaces: the manifest and every file each job's run
 * reads (rpx_runner_read_files: inputs, folders' files, cost model, the
 * model's files; a model shared by several jobs is resolved once). Appended
 * to *list (malloc'ed paths). */
static int read_files(const rpx_manifest *m, const char *manifest, char ***list, size_t *n,
                      rpx_error *err)
{
    size_t total = rpx_manifest_job_count(m), i, k, cap = 0;
    int rc = 0;
    *list = NULL;
    *n = 0;
    for (i = 0; i <= total && rc == 0; i++) {
        const rpx_batch_job *j = i < total ? rpx_manifest_job(m, i) : NULL;
        rpx_runner_config c;
        char **files = NULL;
        size_t nf = 0;
        rpx_runner_config_init(&c);
        if (j) {
            c.model = j->model;
            for (k = 0; k < i; k++)
                if (strcmp(rpx_manifest_job(m, k)->model, j->model) == 0) c.model = NULL;
            c.inputs = j->inputs;
            if (j->n_inputs > 1) {
                c.sample_files = j->inputs_list;
                c.n_sample_files = j->n_inputs;
            }
            c.cost = j->cost;
            rc = rpx_runner_read_files(&c, &files, &nf, err);
        } else if ((files = calloc(2, sizeof *files)) == NULL || !(files[0] = strdup(manifest))) {
            free(files);
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        } else {
            nf = 1;
        }
        if (rc == 0 && *n + nf + 1 > cap) {
            char **p;
            cap = (*n + nf + 1) * 2;
            if (!(p = realloc(*list, cap * sizeof *p))) rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
            else *list = p;
        }
        for (k = 0; k < nf; k++) {
            if (rc == 0) (*list)[(*n)++] = files[k];
            else free(files[k]);
        }
        free(files);
    }
    return rc;
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
    char *dir_owned = NULL;
    int resume = 0, quiet = 0, force = 0, c, tty, interrupted = 0;
    guard g = {0};
    char **owned = NULL;
    size_t nowned = 0;
    struct stat st;
    long si = 0, sn = 1;
    rpx_manifest *m = NULL;
    rpx_error err = {0};
    size_t i, total, mine = 0, done = 0, ncomplete = 0, nfailed = 0, nskipped = 0;
    size_t ninterrupted = 0;
    struct timespec t0, t1;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":" "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out_dir = optarg; break;
        case 'r': resume = 1; break;
        case 's': shard = optarg; break;
        case 'q': quiet = 1; break;
        case 'f': force = 1; break;
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
    if (!(dir_owned = rpx_batch_dir_clean(out_dir))) {
        rpx_manifest_free(m);
        return rpx_cli_fail("batch", RPX_EXIT_FAILURE, "out of memory");
    }
    out_dir = dir_owned;
    /* never replaced: the manifest, every job's inputs, cost model and model
     * file; every report path is checked before the first job */
    total = rpx_manifest_job_count(m);
    g.force = force;
    g.manifest = argv[optind];
    /* a folder not made yet holds no file to lose: a Python model's files are
     * then not looked up (an interpreter started in a child process) */
    if ((stat(out_dir, &st) == 0 || errno != ENOENT) &&
        read_files(m, argv[optind], &owned, &nowned, &err) != 0) {
        for (i = 0; i < nowned; i++) free(owned[i]);
        free(owned);
        free(dir_owned);
        rpx_manifest_free(m);
        return rpx_cli_fail("batch", RPX_EXIT_FAILURE, "%s", err.message);
    }
    g.protect = (const char **)owned;
    g.n_protect = nowned;
    if ((c = check_reports(m, out_dir, si, sn, &g, &err)) != 0) {
        for (i = 0; i < nowned; i++) free(owned[i]);
        free(owned);
        free(dir_owned);
        rpx_manifest_free(m);
        return rpx_cli_fail("batch", c == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s",
                            err.message);
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
        int rc;
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
        {
            int wrote, stop;
            rc = run_job(&g, j, out, last, sizeof last, &wrote, &stop);
            if (g_stop || stop) interrupted = 1;
            if (rc == 0) {
                ncomplete++;
            } else if (stop && wrote) {
                ninterrupted++; /* its report says interrupted; --resume runs it again */
            } else {
                if (!wrote && failed_report(&g, out, j, last, &err))
                    fprintf(stderr, "%srpxprof batch: %s\n", tty ? "\n" : "", err.message);
                nfailed++;
                if (!quiet)
                    fprintf(stderr, "%srpxprof batch: %s/%s failed: %s\n", tty ? "\r\033[K" : "",
                            j->task, j->model_name, last);
            }
            if (interrupted) {
                free(out);
                break;
            }
        }
        free(out);
    }
    if (tty) fputs("\r\033[K", stderr);
    if (ninterrupted)
        printf("batch: %zu jobs (shard %ld/%ld of %zu): %zu complete, %zu failed, %zu skipped, "
               "%zu interrupted; reports in %s\n",
               mine, si, sn, total, ncomplete, nfailed, nskipped, ninterrupted, out_dir);
    else
        printf("batch: %zu jobs (shard %ld/%ld of %zu): %zu complete, %zu failed, %zu skipped; "
               "reports in %s\n",
               mine, si, sn, total, ncomplete, nfailed, nskipped, out_dir);
    rpx_manifest_free(m);
    for (i = 0; i < nowned; i++) free(owned[i]);
    free(owned);
    free(dir_owned);
    if (interrupted) {
        fprintf(stderr, "rpxprof batch: interrupted; rerun with --resume to finish the remaining jobs\n");
        return RPX_EXIT_INTERRUPTED;
    }
    return nfailed ? RPX_EXIT_FAILURE : RPX_EXIT_OK;
}
