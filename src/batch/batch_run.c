/* batch_run.c — owns running a manifest's jobs (include/rpxprof/batch.h):
 * every report path checked before the first job (the output guard,
 * src/common/output.c), each job through the runner in this process (its
 * worker processes die with it), its report tagged with the task, the model's
 * name and the pipeline's keys, and a failed report for a job that built none.
 * The CLI (src/cli/batch.c) parses, prints and handles signals. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch/pipeline.h"
#include "common/json.h"
#include "common/output.h"
#include "rpxprof/batch.h"
#include "rpxprof/error.h"
#include "rpxprof/history.h"
#include "rpxprof/report.h"
#include "rpxprof/runner.h"
#include "rpxprof/target.h"

/* What batch never replaces, and how it may replace a job's report. */
typedef struct guard {
    const char **protect;
    size_t n_protect;
    const rpx_batch_options *opt;
} guard;

/* The depth-efficiency pipeline's keys (docs/batch.md). */
static int pipeline_keys(const guard *g, const rpx_batch_job *j, json_t *r, rpx_error *err)
{
    rpx_pipeline_context pc = {j->model_name, g->opt->manifest_path, g->opt->code_sha,
                               g->opt->container_image, g->opt->concurrent_host_load};
    return rpx_pipeline_keys_add(r, &pc, err);
}

static int open_report(const guard *g, const char *out, rpx_output **o, rpx_error *err)
{
    rpx_output_options oo = {RPX_OUTPUT_REPORT, RPX_PROFILE_SCHEMA, g->opt->force, g->protect,
                             g->n_protect, "--out-dir"};
    return rpx_output_open(out, &oo, o, err);
}

/* The report of a job that built none (src/report/profile.c), with the
 * pipeline's keys, through the guard. */
static int failed_report(const guard *g, const char *out, const rpx_batch_job *j,
                         const char *error, rpx_error *err)
{
    char *shown = rpx_target_redact_spec(j->model); /* credentials never reach a report */
    rpx_profile_failed f = {error, shown, j->task, j->model_name, j->device, j->precision,
                            j->unit, j->inputs, j->warmup, j->meta};
    json_t *r = rpx_profile_failed_report(&f);
    rpx_output *o;
    int rc;
    free(shown);
    if (!r) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    rc = pipeline_keys(g, j, r, err);
    if (!rc) rc = open_report(g, out, &o, err);
    if (!rc) rc = rpx_json_write_output(o, r, err);
    json_decref(r);
    return rc;
}

/* The written report's session into the history (0, or a message in why). */
static int record_history(const char *loc, const json_t *report, const char *out, char *why,
                          size_t n)
{
    rpx_error err = {0};
    rpx_history *h = NULL;
    char path[4096];
    int rc = rpx_history_open(loc, RPX_HISTORY_CREATE, &h, &err);
    if (!rc) rc = rpx_history_record(h, report, realpath(out, path) ? path : out, NULL, &err);
    rpx_history_close(h);
    if (rc) snprintf(why, n, "%.200s: the session was not recorded: %.700s", out, err.message);
    return rc;
}

/* Run one job through the runner (the same call as `rpxprof run`). The report,
 * tagged with the task and the model's name, goes through the guard. Returns
 * 0 when the run completed and its report was written; else `last` says why,
 * *wrote says whether a report (with its status) was written, *stop whether a
 * signal asked the batch to stop (the signal, or -1 when the run did not say). */
static int run_job(const guard *g, const rpx_batch_job *j, const char *out, char *last,
                   size_t lastsz, int *wrote, int *stop, rpx_batch_result *br)
{
    rpx_runner_config c;
    rpx_runner_result res;
    rpx_error err = {0};
    rpx_output *o;
    int rc;
    *wrote = *stop = 0;
    last[0] = '\0';
    rpx_batch_job_config(j, &c);
    /* the session is recorded here, once its report (tagged below) is written */
    const char *history = g->opt->history ? g->opt->history : c.history;
    if (!history) history = getenv("RPXPROF_HISTORY");
    c.no_history = 1;
    if (j->save_outputs) { /* DIR/TASK/MODEL: the runner makes the last level */
        char *d = strdup(j->save_outputs), *slash;
        if (d && (slash = strrchr(d, '/')) != NULL) {
            *slash = '\0';
            if ((slash = strrchr(d, '/')) != NULL) {
                *slash = '\0';
                (void)mkdir(d, 0777);  /* an error: the runner's mkdir names the folder */
                *slash = '/';
            }
            (void)mkdir(d, 0777);
        }
        free(d);
    }
    rc = rpx_runner_run(&c, &res, &err);
    if (rc != 0) {
        snprintf(last, lastsz, "%s", err.message);
        rpx_runner_result_free(&res);
        return -1;
    }
    /* the signal that stopped it: the exit code tells SIGINT from SIGTERM */
    *stop = res.status != RPX_RUNNER_INTERRUPTED ? 0 : res.stop_signal ? res.stop_signal : -1;
    json_object_set_new(res.report, "task", json_string(j->task));
    json_object_set_new(res.report, "model_name", json_string(j->model_name));
    rc = pipeline_keys(g, j, res.report, &err);
    if (!rc) rc = open_report(g, out, &o, &err);
    if (!rc) rc = rpx_json_write_output(o, res.report, &err);
    if (rc) snprintf(last, lastsz, "%s", err.message);
    else *wrote = 1;
    if (*wrote && history && *history &&
        record_history(history, res.report, out, br->history_error, sizeof br->history_error))
        br->history_failed++;
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
        } else if (!manifest) {
            continue;
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

static int stopping(const rpx_batch_options *opt)
{
    return opt->stop && *opt->stop;
}

int rpx_batch_run(const rpx_manifest *m, const rpx_batch_options *opt, rpx_batch_result *res,
                  rpx_error *err)
{
    guard g = {0};
    char **owned = NULL;
    size_t nowned = 0, i, total = rpx_manifest_job_count(m), done = 0;
    long si = opt->shard_index, sn = opt->shard_count > 0 ? opt->shard_count : 1;
    const char *out_dir = opt->out_dir;
    int rc = 0;

    memset(res, 0, sizeof *res);
    res->total = total;
    /* never replaced: the manifest and every file a job's run reads; every
     * report path is checked before the first job. A folder not made yet
     * holds no file to lose: a Python model's files are then not looked up
     * (an interpreter started in a child process). */
    g.opt = opt;
    {
        struct stat st;
        if ((stat(out_dir, &st) == 0 || errno != ENOENT) &&
            (rc = read_files(m, opt->manifest_path, &owned, &nowned, err)) != 0)
            goto out;
    }
    g.protect = (const char **)owned;
    g.n_protect = nowned;
    if ((rc = check_reports(m, out_dir, si, sn, &g, err)) != 0) goto out;
    for (i = 0; i < total; i++) if ((long)(i % (size_t)sn) == si) res->mine++;
    res->started = 1;
    for (i = 0; i < total; i++) {
        const rpx_batch_job *j = rpx_manifest_job(m, i);
        char *out, last[1024];
        int wrote, stop;
        if ((long)(i % (size_t)sn) != si) continue;
        if (stopping(opt)) { res->interrupted = 1; break; }
        out = rpx_batch_report_path(out_dir, j);
        if (!out) {
            res->failed++;
            rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
            break;
        }
        if (opt->on_job) opt->on_job(opt->user, done + 1, res->mine, j);
        done++;
        if (opt->resume && rpx_batch_report_matches(out, j)) {
            res->skipped++;
            free(out);
            continue;
        }
        if (run_job(&g, j, out, last, sizeof last, &wrote, &stop, res) == 0) {
            res->complete++;
        } else if (stop && wrote) {
            res->interrupted_jobs++; /* its report says interrupted; resume runs it again */
        } else {
            rpx_error werr = {0};
            int failed_written = wrote || failed_report(&g, out, j, last, &werr) == 0;
            res->failed++;
            if (opt->on_failed)
                opt->on_failed(opt->user, j, last, failed_written ? NULL : werr.message);
        }
        free(out);
        if (stop > 0) res->stop_signal = stop;
        if (stopping(opt) || stop) {
            res->interrupted = 1;
            break;
        }
    }
out:
    for (i = 0; i < nowned; i++) free(owned[i]);
    free(owned);
    return rc;
}
