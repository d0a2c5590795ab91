/* history.c — owns `rpxprof history add|show|prune|check` (docs/history.md):
 * parse, call the store (include/rpxprof/history.h), print. `check` is in
 * history_check.c. The history is --history PATH or RPXPROF_HISTORY. */
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/history_cli.h"
#include "common/json.h"
#include "rpxprof/history.h"
#include "rpxprof/summary.h"

static const char usage[] =
    "Usage: rpxprof history COMMAND [OPTION]...\n"
    "Every run kept: the sessions of each benchmark on each machine (docs/history.md).\n"
    "\n"
    "Commands:\n"
    "  add REPORT|FOLDER...  record existing reports (a folder: every report in it,\n"
    "                        such as a batch's --out-dir); a session already there is\n"
    "                        left as it is\n"
    "  show [--json] [--benchmark B]\n"
    "                        each series (benchmark x fingerprint): its sessions in order\n"
    "                        with commit, p50 and its interval\n"
    "  prune [--keep-last N] [--older-than DAYS] [--dry-run]\n"
    "                        remove sessions: per series all but the newest N, and/or\n"
    "                        those started more than DAYS days ago\n"
    "  check [--json] [--benchmark B] [--fail-on-regression] [--threshold 1%] [--confirm N]\n"
    "                        change points of each series and the newest session's verdict;\n"
    "                        --confirm N (default 3): a head of one session is never slower,\n"
    "                        the verdict says how many more sessions of its commit to record\n"
    "\n"
    "Options:\n"
    "  --history PATH  the history: an SQLite file or postgresql://USER@HOST/DB\n"
    "                  (default: RPXPROF_HISTORY)\n"
    "  --samples N     add: keep at most N samples of each report (default 0: none)\n"
    "  -h, --help      show this help and exit\n"
    "Exit status: 0 success, 1 failure (a history or a report that cannot be read or\n"
    "written), 2 bad command line, 3 check --fail-on-regression: a newest verdict slower.\n";

const char *rpx__cli_history_location(const char *given)
{
    const char *env = getenv("RPXPROF_HISTORY");
    return given && *given ? given : env && *env ? env : NULL;
}

int rpx__cli_history_parse(const char *cmd, int argc, char **argv, rpx__cli_history_args *a)
{
    static const struct option opts[] = {
        {"history", required_argument, NULL, 'y'}, {"json", no_argument, NULL, 'j'},
        {"benchmark", required_argument, NULL, 'b'}, {"keep-last", required_argument, NULL, 'k'},
        {"older-than", required_argument, NULL, 'o'}, {"dry-run", no_argument, NULL, 'n'},
        {"fail-on-regression", no_argument, NULL, 'f'}, {"threshold", required_argument, NULL, 't'},
        {"confirm", required_argument, NULL, 'c'}, {"samples", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    long v;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'y': a->history = optarg; break;
        case 'j': a->json = 1; break;
        case 'b': a->benchmark = optarg; break;
        case 'n': a->dry_run = 1; break;
        case 'f': a->fail_on_regression = 1; break;
        case 'k':
            if (rpx_cli_parse_long(optarg, &v) || v < 1 || v > 1000000000L)
                return rpx_cli_fail(cmd, RPX_EXIT_USAGE, "--keep-last '%s': give a whole number "
                                    "of sessions, 1 or more", optarg);
            a->keep_last = (unsigned)v;
            break;
        case 'o':
            if (rpx_cli_parse_number(optarg, &a->older_than_days) || !(a->older_than_days > 0))
                return rpx_cli_fail(cmd, RPX_EXIT_USAGE, "--older-than '%s': give a number of "
                                    "days above 0, such as 30 or 0.5", optarg);
            break;
        case 't':
            if (rpx_cli_parse_threshold(optarg, &a->threshold))
                return rpx_cli_fail(cmd, RPX_EXIT_USAGE, "--threshold '%s': give a share such as "
                                    "1%% or 0.01 (above 0, below 100%%)", optarg);
            a->threshold_given = 1;
            break;
        case 'c':
            if (rpx_cli_parse_long(optarg, &v) || v < 0 || v > 1000)
                return rpx_cli_fail(cmd, RPX_EXIT_USAGE, "--confirm '%s': give a number of "
                                    "sessions from 0 to 1000", optarg);
            a->confirm = (unsigned)v;
            a->confirm_given = 1;
            break;
        case 's':
            if (rpx_cli_parse_long(optarg, &v) || v < 0 || v > 10000000L)
                return rpx_cli_fail(cmd, RPX_EXIT_USAGE, "--samples '%s': give a whole number "
                                    "from 0 to 10000000", optarg);
            a->samples = (size_t)v;
            break;
        case 'h': fputs(usage, stdout); return -2;
        default: return rpx_cli_bad_option(cmd, c, argv);
        }
    }
    a->history = rpx__cli_history_location(a->history);
    if (!a->history)
        return rpx_cli_fail(cmd, RPX_EXIT_USAGE, "no history given: give --history PATH (an "
                            "SQLite file or postgresql://...) or set RPXPROF_HISTORY");
    a->rest = argv + optind;
    a->n_rest = (size_t)(argc - optind);
    return 0;
}

/* a file that holds a run report: 1 and *report, 0 when it is JSON of another kind */
static int read_report(const char *path, json_t **report, int quiet_other, int *bad)
{
    json_error_t je;
    *report = json_load_file(path, 0, &je);
    const char *schema = json_string_value(json_object_get(*report, "schema"));
    if (*report && schema && strncmp(schema, "rpxprof.profile/", 16) == 0) return 1;
    const char *why = !*report ? je.text : "not an rpxprof run report (its schema is not "
                                           "rpxprof.profile/1)";
    if (!quiet_other) {
        rpx_cli_fail("history add", 0, "%s: %s", path, why);
        (*bad)++;
    } else {
        rpx_cli_term_printf(stderr, "rpxprof history add: note: %s: skipped: %s\n", path, why);
    }
    json_decref(*report);
    *report = NULL;
    return 0;
}

typedef struct add_counts {
    size_t added, present, bad;
    int bad_flag;
} add_counts;

static int add_file(rpx_history *h, const char *path, int from_folder, add_counts *n)
{
    json_t *report, *rec = NULL;
    rpx_error err = {0};
    char full[PATH_MAX];
    int bad = 0;
    if (!read_report(path, &report, from_folder, &bad)) {
        n->bad += (size_t)bad;
        return 0;
    }
    int rc = rpx_history_record(h, report, realpath(path, full) ? full : path, &rec, &err);
    json_decref(report);
    if (rc < 0) {
        rpx_cli_fail("history add", 0, "%s: %s", path, err.message);
        n->bad++;
        return rc;
    }
    if (json_is_true(json_object_get(rec, "added"))) n->added++;
    else n->present++;
    json_decref(rec);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* every *.json in a folder and its subfolders, in name order */
static int add_folder(rpx_history *h, const char *dir, add_counts *n, int depth)
{
    DIR *d = opendir(dir);
    if (!d) {
        n->bad++;
        return rpx_cli_fail("history add", 0, "%s: cannot read the folder", dir);
    }
    char **names = NULL;
    size_t k = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (k == cap) {
            char **nn = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *nn);
            if (!nn) break;
            names = nn;
        }
        if (asprintf(&names[k], "%s/%s", dir, e->d_name) >= 0) k++;
    }
    closedir(d);
    qsort(names, k, sizeof *names, cmp_names);
    for (size_t i = 0; i < k; i++) {
        struct stat st;
        size_t len = strlen(names[i]);
        if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode) && depth < 8)
            add_folder(h, names[i], n, depth + 1);
        else if (len > 5 && strcmp(names[i] + len - 5, ".json") == 0 && S_ISREG(st.st_mode))
            add_file(h, names[i], 1, n);
        else
            rpx_cli_term_printf(stderr, "rpxprof history add: note: %s: skipped: %s\n", names[i],
                                depth >= 8 ? "a folder deeper than 8 levels" : "not a .json file");
        free(names[i]);
    }
    free(names);
    return 0;
}

static int cmd_add(rpx__cli_history_args *a)
{
    if (!a->n_rest)
        return rpx_cli_fail("history add", RPX_EXIT_USAGE, "give one or more REPORT files or "
                            "FOLDERs of reports (see 'rpxprof history --help')");
    rpx_history *h;
    rpx_error err = {0};
    if (rpx_history_open(a->history, RPX_HISTORY_CREATE, &h, &err) < 0)
        return rpx_cli_fail("history add", RPX_EXIT_FAILURE, "%s", err.message);
    rpx_history_keep_samples(h, a->samples);
    add_counts n = {0};
    for (size_t i = 0; i < a->n_rest; i++) {
        struct stat st;
        if (stat(a->rest[i], &st) == 0 && S_ISDIR(st.st_mode)) add_folder(h, a->rest[i], &n, 0);
        else add_file(h, a->rest[i], 0, &n);
    }
    rpx_history_close(h);
    printf("history %s: %zu session%s added, %zu already there%s\n", a->history, n.added,
           n.added == 1 ? "" : "s", n.present, n.bad ? " (some files not added: above)" : "");
    return n.bad ? RPX_EXIT_FAILURE : RPX_EXIT_OK;
}

/* the decimals that show v to the second significant digit of its interval's
 * half width, within 1 to 6 significant digits: the rule of the summary and of
 * the history page (src/report/html_history.c, docs/statistics.md); -1 when it
 * does not apply (then three significant digits, rpx_format_3g) */
static int interval_decimals(double v, double lo, double hi)
{
    double hw = (hi - lo) / 2;
    if (!isfinite(v) || !isfinite(lo) || !isfinite(hi) || !(fabs(v) >= 1e-9 && fabs(v) < 1e15))
        return -1;
    int e = (int)floor(log10(fabs(v)));
    int sig = hw > 1e-9 * fabs(v) ? e - (int)floor(log10(hw)) + 2 : 4;
    sig = sig < 1 ? 1 : sig > 6 ? 6 : sig;
    int d = sig - 1 - e;
    return d < 0 ? 0 : d > 15 ? 15 : d;
}

static const char *fixed(char *b, size_t n, double v, int dec)
{
    if (dec < 0) return rpx_format_3g(b, n, v);
    snprintf(b, n, "%.*f", dec, v);
    return b;
}

static void show_text(const json_t *list)
{
    size_t i, k;
    const json_t *s, *e;
    if (!json_array_size(list)) puts("no sessions");
    json_array_foreach(list, i, s) {
        const json_t *b = json_object_get(s, "benchmark"), *f = json_object_get(s, "fingerprint");
        const char *cpu = json_string_value(json_object_get(json_object_get(f, "machine"), "cpu_model"));
        rpx_cli_term_printf(stdout, "%s%s (benchmark %s) on fingerprint %s%s%s%s: %zu session%s\n",
                            i ? "\n" : "", json_string_value(json_object_get(b, "name")) ?
                            json_string_value(json_object_get(b, "name")) : "?",
                            json_string_value(json_object_get(b, "id")),
                            json_string_value(json_object_get(f, "digest")), cpu ? " (" : "",
                            cpu ? cpu : "", cpu ? ")" : "",
                            json_array_size(json_object_get(s, "sessions")),
                            json_array_size(json_object_get(s, "sessions")) == 1 ? "" : "s");
        printf("  %-24s %-28s %-14s %12s  %-26s %s\n", "started", "session", "commit", "p50 ms",
               "interval ms", "status");
        json_array_foreach(json_object_get(s, "sessions"), k, e) {
            const char *commit = json_string_value(json_object_get(e, "commit"));
            const json_t *ci = json_object_get(e, "p50_ci_ms");
            char ci_text[72] = "n/a", p50[40] = "n/a";
            const json_t *pv = json_object_get(e, "p50_ms");
            double v = json_is_number(pv) ? json_number_value(pv) : NAN;
            int dec = -1;
            if (json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0))) {
                double lo = json_number_value(json_array_get(ci, 0));
                double hi = json_number_value(json_array_get(ci, 1));
                dec = interval_decimals(isfinite(v) ? v : (lo + hi) / 2, lo, hi);
                char lo_t[28], hi_t[28];
                snprintf(ci_text, sizeof ci_text, "[%s, %s]", fixed(lo_t, sizeof lo_t, lo, dec),
                         fixed(hi_t, sizeof hi_t, hi, dec));
            }
            if (isfinite(v)) fixed(p50, sizeof p50, v, dec);
            rpx_cli_term_printf(stdout, "  %-24s %-28s %-14.12s ",
                                json_string_value(json_object_get(e, "started")) ?
                                json_string_value(json_object_get(e, "started")) : "n/a",
                                json_string_value(json_object_get(e, "id")),
                                commit ? commit : "n/a");
            printf("%12s", p50);
            printf("  %-26s %s\n", ci_text, json_string_value(json_object_get(e, "status")) ?
                   json_string_value(json_object_get(e, "status")) : "n/a");
        }
    }
}

static int cmd_show(rpx__cli_history_args *a)
{
    rpx_history *h;
    rpx_error err = {0};
    json_t *list = NULL;
    if (a->n_rest)
        return rpx_cli_fail("history show", RPX_EXIT_USAGE, "unexpected argument '%s'", a->rest[0]);
    if (rpx_history_open(a->history, RPX_HISTORY_READONLY, &h, &err) < 0)
        return rpx_cli_fail("history show", RPX_EXIT_FAILURE, "%s", err.message);
    int rc = rpx_history_series(h, a->benchmark, &list, &err);
    if (rc < 0) {
        rpx_history_close(h);
        return rpx_cli_fail("history show", RPX_EXIT_FAILURE, "%s", err.message);
    }
    if ((rc = rpx__cli_history_no_benchmark("history show", a->history, h, a->benchmark, list)) != 0) {
        rpx_history_close(h);
        json_decref(list);
        return rc;
    }
    rpx_history_close(h);
    if (a->json) {
        json_t *out = json_pack("{s:s, s:i, s:O}", "schema", "rpxprof.history/1",
                                "schema_version", RPX_HISTORY_SCHEMA_VERSION, "series", list);
        char *text = out ? rpx_json_dumps(out) : NULL;
        if (text) printf("%s\n", text);
        free(text);
        json_decref(out);
    } else {
        show_text(list);
    }
    json_decref(list);
    return RPX_EXIT_OK;
}

static int cmd_prune(rpx__cli_history_args *a)
{
    rpx_history *h;
    rpx_error err = {0};
    json_t *removed = NULL, *r;
    size_t i;
    if (a->n_rest)
        return rpx_cli_fail("history prune", RPX_EXIT_USAGE, "unexpected argument '%s'", a->rest[0]);
    if (!a->keep_last && !(a->older_than_days > 0))
        return rpx_cli_fail("history prune", RPX_EXIT_USAGE, "give a retention rule: "
                            "--keep-last N (per series) and/or --older-than DAYS");
    if (rpx_history_open(a->history, a->dry_run ? RPX_HISTORY_READONLY : 0, &h, &err) < 0)
        return rpx_cli_fail("history prune", RPX_EXIT_FAILURE, "%s", err.message);
    int rc = rpx_history_prune(h, a->keep_last, a->older_than_days, (double)time(NULL),
                               a->dry_run, &removed, &err);
    rpx_history_close(h);
    if (rc < 0) return rpx_cli_fail("history prune", RPX_EXIT_FAILURE, "%s", err.message);
    if (a->json) {
        char *text = rpx_json_dumps(removed);
        if (text) printf("%s\n", text);
        free(text);
    } else {
        json_array_foreach(removed, i, r)
            rpx_cli_term_printf(stdout, "%s %s (%s, started %s): %s\n",
                                a->dry_run ? "would remove" : "removed",
                                json_string_value(json_object_get(r, "session")),
                                json_string_value(json_object_get(r, "benchmark_name")) ?
                                json_string_value(json_object_get(r, "benchmark_name")) : "?",
                                json_string_value(json_object_get(r, "started")) ?
                                json_string_value(json_object_get(r, "started")) : "n/a",
                                json_string_value(json_object_get(r, "why")));
        printf("history %s: %zu session%s %s\n", a->history, json_array_size(removed),
               json_array_size(removed) == 1 ? "" : "s",
               a->dry_run ? "would be removed (dry run: nothing removed)" : "removed");
    }
    json_decref(removed);
    return RPX_EXIT_OK;
}

int rpx_cli_history(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL;
    if (!sub) {
        fputs(usage, stderr);
        return RPX_EXIT_USAGE;
    }
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
        fputs(usage, stdout);
        return RPX_EXIT_OK;
    }
    char cmd[32];
    snprintf(cmd, sizeof cmd, "history %s", sub);
    rpx__cli_history_args a = {0};
    int (*fn)(rpx__cli_history_args *) = !strcmp(sub, "add")     ? cmd_add
                                         : !strcmp(sub, "show")  ? cmd_show
                                         : !strcmp(sub, "prune") ? cmd_prune
                                         : !strcmp(sub, "check") ? rpx__cli_history_check
                                                                 : NULL;
    if (!fn)
        return rpx_cli_fail("history", RPX_EXIT_USAGE, "unknown command '%s'; give add, show, "
                            "prune or check (see 'rpxprof history --help')", sub);
    int rc = rpx__cli_history_parse(cmd, argc - 1, argv + 1, &a);
    if (rc) return rc == -2 ? RPX_EXIT_OK : rc;
    return fn(&a);
}
