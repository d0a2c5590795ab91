/* report_history.c — `rpxprof report --history PATH -o history.html`
 * (docs/report.md "The history page"): the series of a history (a SQLite
 * file or a postgresql:// URL, read through the history store; or a JSON
 * file of `rpxprof history show --json`), each checked by the history check
 * (rpx_history_check; or the results of `rpxprof history check --json` given
 * with --checks), drawn by rpx_html_history into one page. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/output.h"
#include "rpxprof/error.h"
#include "rpxprof/history.h"
#include "rpxprof/history_check.h"
#include "rpxprof/html.h"

/* A JSON file rather than a database: a regular file whose first byte that
 * is not white space opens a JSON array or object (SQLite's begin "SQLite"). */
static int is_json_file(const char *path)
{
    struct stat st;
    FILE *f;
    int c;
    if (strstr(path, "://") || stat(path, &st) || !S_ISREG(st.st_mode)) return 0;
    if (!(f = fopen(path, "rb"))) return 0;
    do c = fgetc(f); while (c == ' ' || c == '\n' || c == '\r' || c == '\t');
    fclose(f);
    return c == '[' || c == '{';
}

/* The list in a JSON file: the array itself, or the first of `keys` of an
 * object that is an array, or (`one`) the object as a list of one. */
static json_t *list_of(json_t *j, const char *const *keys, int one)
{
    size_t i;
    if (json_is_array(j)) return json_incref(j);
    for (i = 0; keys[i]; i++)
        if (json_is_array(json_object_get(j, keys[i]))) return json_incref(json_object_get(j, keys[i]));
    if (one && json_is_object(j)) {
        json_t *a = json_array();
        json_array_append(a, j);
        return a;
    }
    return NULL;
}

static int same_benchmark(const json_t *series, const char *b)
{
    const json_t *bm = json_object_get(series, "benchmark");
    const char *id = json_string_value(json_object_get(bm, "id")), *name = json_string_value(json_object_get(bm, "name"));
    return (id && !strcmp(id, b)) || (name && !strcmp(name, b));
}

static int series_of_json(const char *path, const char *benchmark, json_t **out)
{
    static const char *const keys[] = {"series", NULL};
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je), *list;
    size_t i;
    *out = NULL;
    if (!j) return rpx_cli_fail("report", 1, "%s: line %d: %s; give a history or the output of rpxprof history show --json", path, je.line, je.text);
    list = list_of(j, keys, 0);
    json_decref(j);
    if (!list) return rpx_cli_fail("report", 1, "%s: not a list of series; give a history or the output of rpxprof history show --json", path);
    if (benchmark) {
        json_t *keep = json_array();
        for (i = 0; i < json_array_size(list); i++)
            if (same_benchmark(json_array_get(list, i), benchmark)) json_array_append(keep, json_array_get(list, i));
        json_decref(list);
        list = keep;
    }
    *out = list;
    return 0;
}

static int series_of_store(const char *location, const char *benchmark, json_t **out)
{
    rpx_history *h = NULL;
    rpx_error err = {0};
    *out = NULL;
    if (rpx_history_open(location, RPX_HISTORY_READONLY, &h, &err)) return rpx_cli_fail("report", 1, "%s", err.message);
    if (rpx_history_series(h, benchmark, out, &err)) {
        rpx_history_close(h);
        return rpx_cli_fail("report", 1, "%s", err.message);
    }
    rpx_history_close(h);
    return 0;
}

static int checks_of_json(const char *path, json_t **out)
{
    static const char *const keys[] = {"checks", "series", "results", NULL};
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    *out = NULL;
    if (!j) return rpx_cli_fail("report", 1, "--checks %s: line %d: %s; give the output of rpxprof history check --json", path, je.line, je.text);
    *out = list_of(j, keys, 1);
    json_decref(j);
    if (!*out) return rpx_cli_fail("report", 1, "--checks %s: not a check result; give the output of rpxprof history check --json", path);
    return 0;
}

/* Each series checked; a series the check refuses gets its message instead. */
static json_t *check_all(const json_t *series, double threshold)
{
    rpx_history_check_opts o;
    json_t *all = json_array();
    size_t i;
    rpx_history_check_defaults(&o);
    if (threshold > 0) o.threshold = threshold;
    for (i = 0; i < json_array_size(series); i++) {
        const json_t *s = json_array_get(series, i);
        json_t *res = NULL;
        rpx_error err = {0};
        if (rpx_history_check(s, &o, &res, &err) == 0 && res) {
            json_array_append_new(all, res);
            continue;
        }
        json_array_append_new(all, json_pack("{s:O?,s:O?,s:s}", "benchmark", json_object_get(json_object_get(s, "benchmark"), "id"),
                                             "fingerprint_digest", json_object_get(json_object_get(s, "fingerprint"), "digest"),
                                             "error", err.message[0] ? err.message : "the check failed"));
    }
    return all;
}

int rpx__cli_report_history(const rpx_report_history_args *a)
{
    const char *protect[4];
    char wal[4096], shm[4096];
    rpx_output_options oo = {RPX_OUTPUT_HTML, NULL, 0, NULL, 0, "--output", 0};
    rpx_output *out = NULL;
    rpx_error err = {0};
    rpx_html_history_input in = {0};
    json_t *series = NULL, *checks = NULL;
    char *html = NULL;
    int c, rc, to_stdout;
    snprintf(wal, sizeof wal, "%s-wal", a->history);
    snprintf(shm, sizeof shm, "%s-shm", a->history);
    protect[0] = a->history, protect[1] = wal, protect[2] = shm, protect[3] = a->checks;
    oo.force = a->force;
    oo.protect = protect;
    oo.n_protect = 4;
    if ((c = rpx_output_open(a->output, &oo, &out, &err)) != 0)
        return rpx_cli_fail("report", c == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s", err.message);
    to_stdout = rpx_output_is_stdout(out);
    rc = is_json_file(a->history) ? series_of_json(a->history, a->benchmark, &series)
                                  : series_of_store(a->history, a->benchmark, &series);
    if (rc == 0 && a->checks) rc = checks_of_json(a->checks, &checks);
    else if (rc == 0 && !(checks = check_all(series, a->threshold)))
        rc = rpx_cli_fail("report", 1, "out of memory");
    if (rc == 0 && a->benchmark && json_array_size(series) == 0)
        rc = rpx_cli_fail("report", 1, "%s: no series of benchmark '%s' (a benchmark's name or id)", a->history, a->benchmark);
    if (rc) {
        rpx_output_discard(out);
        json_decref(series);
        json_decref(checks);
        return rc;
    }
    in.title = a->title;
    in.source = a->history;
    in.series = series;
    in.checks = checks;
    in.threshold = a->threshold > 0 ? a->threshold : a->checks ? 0 : 0.01; /* given results: their threshold is theirs */
    in.look_beside = 1;
    if (rpx_html_history(&in, &html, &err)) {
        rpx_output_discard(out);
        rc = rpx_cli_fail("report", 1, "%s", err.message);
    } else if (rpx_output_commit(out, html, strlen(html), &err)) {
        rc = rpx_cli_fail("report", 1, "%s", err.message);
    }
    free(html);
    json_decref(series);
    json_decref(checks);
    if (rc == 0 && !to_stdout) printf("%s\n", a->output);
    return rc;
}
