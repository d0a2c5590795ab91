/* report.c — `rpxprof report INPUT... -o REPORT.html`: the HTML report
 * (rpx_html_report, docs/report.md "The HTML report") of run reports, a
 * `compare --json` result, a batch folder or an aggregate folder (with
 * --history PATH: report_history.c draws the history page); and
 * rpx__cli_html, which `run`, `batch`, `compare` and `aggregate` call for
 * their --html FILE. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/output.h"
#include "common/strbuf.h"
#include "common/user_file.h"
#include "rpxprof/aggregate.h"
#include "rpxprof/error.h"
#include "rpxprof/html.h"
#include "rpxprof/report.h"

static const char usage[] =
    "Usage: rpxprof report INPUT... -o REPORT.html [--title TEXT] [--force]\n"
    "   or: rpxprof report --history PATH -o HISTORY.html [--benchmark B] [--checks FILE]\n"
    "                      [--threshold T] [--title TEXT] [--force]\n"
    "Write one self-contained HTML page (no network, no external file; readable\n"
    "printed and in a dark colour scheme) of what rpxprof measured. INPUT is a run\n"
    "report (or several), a 'compare --json' result (its two reports are drawn when\n"
    "found at the paths it names), a batch folder (DIR/<task>/<model>.json, checked\n"
    "as aggregate checks it) or an aggregate folder (its validation.json, summary.csv\n"
    "and figure.svg; give the batch folder too for one section per report).\n"
    "With --history (or, without INPUT, RPXPROF_HISTORY), the page of a history: a panel\n"
    "per series (benchmark x fingerprint) with each session's p50 and interval, the change\n"
    "points, the newest session's verdict and links to the kept reports.\n"
    "\n"
    "Options:\n"
    "  -o, --output REPORT.html  the page (written atomically; - for stdout); an existing\n"
    "                            file is replaced only when rpxprof wrote it\n"
    "  --title TEXT              the page's title (default: from what it shows)\n"
    "  --force                   replace any regular file at REPORT.html (never an INPUT)\n"
    "  --history PATH            a history: a SQLite file, a postgresql:// URL, or the JSON\n"
    "                            of 'rpxprof history show --json'\n"
    "  --benchmark B             only benchmark B's series (its name or id)\n"
    "  --checks FILE             the results of 'rpxprof history check --json' to draw,\n"
    "                            instead of checking each series here\n"
    "  --threshold T             the check's threshold: 1% (default), or a fraction (0.01)\n"
    "  -h, --help                show this help and exit\n";

/* What the inputs were read into. */
typedef struct loaded {
    json_t **runs;
    char **names;
    size_t n, cap;
    json_t *compare, *cbase, *cnew, *validation;
    char *csv, *svg;
} loaded;

static void loaded_free(loaded *l)
{
    size_t i;
    for (i = 0; i < l->n; i++) { json_decref(l->runs[i]); free(l->names[i]); }
    free(l->runs);
    free(l->names);
    json_decref(l->compare);
    json_decref(l->cbase);
    json_decref(l->cnew);
    json_decref(l->validation);
    free(l->csv);
    free(l->svg);
    memset(l, 0, sizeof *l);
}

static int add_run(loaded *l, json_t *r, const char *name)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        json_t **nr = realloc(l->runs, cap * sizeof *nr);
        char **nn;
        if (!nr) return -1;
        l->runs = nr;
        nn = realloc(l->names, cap * sizeof *nn);
        if (!nn) return -1;
        l->names = nn;
        l->cap = cap;
    }
    l->names[l->n] = strdup(name);
    if (!l->names[l->n]) return -1;
    l->runs[l->n++] = r;
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    size_t len = 0, cap = 0, k;
    if (!f) return NULL;
    for (;;) {
        if (len + 65536 + 1 > cap) {
            char *ns = realloc(s, cap = (len + 65536 + 1) * 2);
            if (!ns) { free(s); fclose(f); return NULL; }
            s = ns;
        }
        k = fread(s + len, 1, 65536, f);
        len += k;
        if (k < 65536) break;
    }
    fclose(f);
    s[len] = '\0';
    return s;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every DIR/<task>/<model>.json that is a run report, in name order. */
static int load_batch_reports(loaded *l, const char *dir, int *found)
{
    DIR *d = opendir(dir), *d2;
    struct dirent *e, *e2;
    char **paths = NULL;
    size_t n = 0, i;
    int rc = 0;
    *found = 0;
    if (!d) return rpx_cli_fail("report", 1, "%s: %s", dir, strerror(errno));
    while ((e = readdir(d))) {
        char sub[PATH_MAX];
        if (e->d_name[0] == '.') continue;
        if (snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name) >= (int)sizeof sub) continue;
        if (!is_dir(sub) || !(d2 = opendir(sub))) continue;
        while ((e2 = readdir(d2))) {
            char p[PATH_MAX];
            size_t k = strlen(e2->d_name);
            if (k < 6 || strcmp(e2->d_name + k - 5, ".json")) continue;
            if (snprintf(p, sizeof p, "%s/%s", sub, e2->d_name) >= (int)sizeof p || !is_file(p)) continue;
            if (rpx__strv_push(&paths, &n, p)) { rc = rpx_cli_fail("report", 1, "out of memory"); break; }
        }
        closedir(d2);
    }
    closedir(d);
    if (n) qsort(paths, n, sizeof *paths, name_cmp);
    for (i = 0; i < n && rc == 0; i++) {
        json_error_t je;
        json_t *r = json_load_file(paths[i], 0, &je);
        const char *sc = json_string_value(json_object_get(r, "schema"));
        if (r && sc && !strcmp(sc, RPX_PROFILE_SCHEMA)) {
            char name[PATH_MAX];
            const char *rel = paths[i] + strlen(dir) + 1;
            snprintf(name, sizeof name, "%.*s", (int)(strlen(rel) - 5), rel); /* task/model */
            if (add_run(l, r, name)) { json_decref(r); rc = rpx_cli_fail("report", 1, "out of memory"); }
            else (*found)++;
        } else {
            json_decref(r);
        }
    }
    for (i = 0; i < n; i++) free(paths[i]);
    free(paths);
    return rc;
}

static int load_aggregate(loaded *l, const char *dir)
{
    char p[PATH_MAX];
    json_error_t je;
    snprintf(p, sizeof p, "%s/validation.json", dir);
    l->validation = json_load_file(p, 0, &je);
    if (!l->validation)
        return rpx_cli_fail("report", 1, "%s: line %d: %s; give the --out-dir of rpxprof aggregate", p, je.line, je.text);
    snprintf(p, sizeof p, "%s/summary.csv", dir);
    if (is_file(p)) l->csv = slurp(p);
    snprintf(p, sizeof p, "%s/figure.svg", dir);
    if (is_file(p)) {
        l->svg = slurp(p);
        if (l->svg && !strstr(l->svg, RPX_OUTPUT_SVG_MARK)) { free(l->svg); l->svg = NULL; } /* only rpxprof's own figure */
    }
    return 0;
}

/* A batch folder without an aggregate: aggregate's checks into a temporary
 * folder, read back, removed. */
static int aggregate_into(loaded *l, const char *const *dirs, size_t nd)
{
    char tmp[] = "/tmp/rpxprof-report-XXXXXX", p[PATH_MAX];
    rpx_aggregate_opts ao = {0};
    rpx_aggregate_result res;
    rpx_error err = {0};
    static const char *const files[] = {"summary.csv", "summary.md", "validation.json", "figure.svg"};
    size_t i;
    int rc;
    const char *td = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    if (!td || !*td || snprintf(tmpl, sizeof tmpl, "%s/rpxprof-report-XXXXXX", td) >= (int)sizeof tmpl)
        snprintf(tmpl, sizeof tmpl, "%s", tmp);
    if (!mkdtemp(tmpl)) return rpx_cli_fail("report", 1, "%s: %s; set TMPDIR to a writable folder", tmpl, strerror(errno));
    ao.dirs = dirs;
    ao.ndirs = nd;
    ao.out_dir = tmpl;
    rc = rpx_aggregate(&ao, &res, &err);
    if (rc == 0) rc = load_aggregate(l, tmpl);
    else rc = rpx_cli_fail("report", 1, "%s", err.message);
    for (i = 0; i < sizeof files / sizeof *files; i++) {
        if (snprintf(p, sizeof p, "%s/%s", tmpl, files[i]) < (int)sizeof p) unlink(p);
    }
    rmdir(tmpl);
    return rc;
}

/* A report a comparison names: as written, else beside the comparison. */
static json_t *compare_side(const char *cmp_path, const char *name)
{
    char p[PATH_MAX];
    const char *slash = strrchr(cmp_path, '/');
    json_error_t je;
    json_t *r;
    if (!name) return NULL;
    if (is_file(name) && (r = json_load_file(name, 0, &je))) return r;
    if (slash && name[0] != '/') {
        snprintf(p, sizeof p, "%.*s/%s", (int)(slash - cmp_path), cmp_path, name);
        if (is_file(p) && (r = json_load_file(p, 0, &je))) return r;
    }
    return NULL;
}

static int load_inputs(loaded *l, char **inputs, size_t n)
{
    size_t i;
    const char **batch_dirs = calloc(n + 1, sizeof *batch_dirs);
    size_t nb = 0;
    int rc = 0;
    rpx_error err = {0};
    if (!batch_dirs) return rpx_cli_fail("report", 1, "out of memory");
    for (i = 0; i < n && rc == 0; i++) {
        const char *in = inputs[i];
        if (is_dir(in)) {
            char v[PATH_MAX];
            int found = 0;
            snprintf(v, sizeof v, "%s/validation.json", in);
            if (is_file(v)) {
                if (l->validation) { rc = rpx_cli_fail("report", RPX_EXIT_USAGE, "%s: a second aggregate folder; give one", in); break; }
                rc = load_aggregate(l, in);
                continue;
            }
            rc = load_batch_reports(l, in, &found);
            if (rc == 0 && !found)
                rc = rpx_cli_fail("report", 1, "%s: no DIR/<task>/<model>.json report of rpxprof in it, and no validation.json; "
                                               "give a batch folder (batch --out-dir) or an aggregate folder (aggregate --out-dir)", in);
            batch_dirs[nb++] = in;
            continue;
        }
        if (rpx__user_file_regular(in, NULL, &err) != 0) { rc = rpx_cli_fail("report", 1, "%s", err.message); break; }
        {
            json_error_t je;
            json_t *j = json_load_file(in, 0, &je);
            const char *sc;
            if (!j) { rc = rpx_cli_fail("report", 1, "%s: line %d: %s; give a report of rpxprof", in, je.line, je.text); break; }
            sc = json_string_value(json_object_get(j, "schema"));
            if (sc && !strcmp(sc, RPX_PROFILE_SCHEMA)) {
                if (add_run(l, j, in)) { json_decref(j); rc = rpx_cli_fail("report", 1, "out of memory"); }
            } else if (sc && !strcmp(sc, RPX_VALIDATION_SCHEMA)) {
                json_decref(j);
                rc = rpx_cli_fail("report", RPX_EXIT_USAGE, "%s: give the aggregate folder that holds it, not the file", in);
            } else if (!sc && json_object_get(j, "base") && json_object_get(j, "new") &&
                       (json_object_get(j, "verdict") || json_is_array(json_object_get(j, "rows")))) {
                if (l->compare) { json_decref(j); rc = rpx_cli_fail("report", RPX_EXIT_USAGE, "%s: a second comparison; give one", in); break; }
                l->compare = j;
                l->cbase = compare_side(in, json_string_value(json_object_get(j, "base")));
                l->cnew = compare_side(in, json_string_value(json_object_get(j, "new")));
            } else {
                json_decref(j);
                rc = rpx_cli_fail("report", 1, "%s: not a run report (schema \"%s\"), a compare --json result, a batch folder "
                                               "or an aggregate folder", in, RPX_PROFILE_SCHEMA);
            }
        }
    }
    if (rc == 0 && nb && !l->validation) rc = aggregate_into(l, batch_dirs, nb);
    free(batch_dirs);
    return rc;
}

int rpx__cli_html(const char *cmd, rpx_output *out, const rpx_html_input *in)
{
    char *html = NULL;
    rpx_error err = {0};
    if (rpx_html_report(in, &html, &err)) {
        rpx_output_discard(out);
        return rpx_cli_fail(cmd, 1, "%s", err.message);
    }
    if (rpx_output_commit(out, html, strlen(html), &err)) {
        free(html);
        return rpx_cli_fail(cmd, 1, "%s", err.message);
    }
    free(html);
    return 0;
}

/* the page's input: what load_inputs found */
static void html_input_of(const loaded *l, rpx_html_input *in)
{
    in->runs = (const json_t *const *)l->runs;
    in->run_names = (const char *const *)l->names;
    in->n_runs = l->n;
    in->compare = l->compare;
    in->compare_base = l->cbase;
    in->compare_new = l->cnew;
    in->validation = l->validation;
    in->summary_csv = l->csv;
    in->figure_svg = l->svg;
}

int rpx__cli_html_compare(const char *cmd, rpx_output *out, const json_t *res, const char *base,
                          const char *new_path)
{
    json_error_t je;
    json_t *a = json_load_file(base, 0, &je), *b = json_load_file(new_path, 0, &je);
    rpx_html_input in = {0};
    int rc;
    in.compare = res;
    in.compare_base = a;
    in.compare_new = b;
    rc = rpx__cli_html(cmd, out, &in);
    json_decref(a);
    json_decref(b);
    return rc;
}

int rpx__cli_html_sweep(const char *cmd, rpx_output *out, const json_t *sweep)
{
    char *html = NULL;
    rpx_error err = {0};
    if (rpx_html_sweep(sweep, &html, &err)) {
        rpx_output_discard(out);
        return rpx_cli_fail(cmd, 1, "%s", err.message);
    }
    if (rpx_output_commit(out, html, strlen(html), &err)) {
        free(html);
        return rpx_cli_fail(cmd, 1, "%s", err.message);
    }
    free(html);
    return 0;
}

int rpx__cli_html_open(const char *cmd, const char *path, int force, const char *const *protect, size_t np,
                       rpx_output **out)
{
    rpx_output_options oo = {RPX_OUTPUT_HTML, NULL, 0, NULL, 0, "--html", 0};
    rpx_error err = {0};
    int c;
    oo.force = force > 0;
    oo.no_force = force < 0;      /* the command has no --force */
    oo.protect = protect;
    oo.n_protect = np;
    /* folders these commands are given are batch or aggregate folders: what reading
     * them reads is never the page (run's folders are of inputs) */
    oo.protect_folders = strcmp(cmd, "aggregate") == 0 || strcmp(cmd, "compare") == 0;
    if ((c = rpx_output_open(path, &oo, out, &err)) != 0)
        return rpx_cli_fail(cmd, c == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s", err.message);
    return 0;
}

int rpx__cli_html_of_files(const char *cmd, rpx_output *out, char **inputs, size_t n)
{
    loaded l = {0};
    rpx_html_input in = {0};
    int rc = load_inputs(&l, inputs, n);
    if (rc) { rpx_output_discard(out); loaded_free(&l); return rc; }
    html_input_of(&l, &in);
    rc = rpx__cli_html(cmd, out, &in);
    loaded_free(&l);
    return rc;
}

int rpx_cli_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"title", required_argument, NULL, 't'},
        {"force", no_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        {"history", required_argument, NULL, 'H'}, {"benchmark", required_argument, NULL, 'b'},
        {"checks", required_argument, NULL, 'c'}, {"threshold", required_argument, NULL, 'T'}, {NULL, 0, NULL, 0}};
    const char *output = NULL, *title = NULL;
    rpx_report_history_args ha = {0};
    int history_only = 0;         /* an option only --history takes */
    int c, force = 0, rc, to_stdout;
    rpx_output *out = NULL;
    rpx_output_options oo = {RPX_OUTPUT_HTML, NULL, 0, NULL, 0, "--output", 0};
    rpx_error err = {0};
    loaded l = {0};
    rpx_html_input in = {0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":" "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 't': title = optarg; break;
        case 'f': force = 1; break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        case 'H': ha.history = optarg; break;
        case 'b': ha.benchmark = optarg; history_only = 1; break;
        case 'c': ha.checks = optarg; history_only = 1; break;
        case 'T':
            if (rpx_cli_parse_threshold(optarg, &ha.threshold))
                return rpx_cli_fail("report", RPX_EXIT_USAGE,
                                    "--threshold '%s': give a percentage above 0 and below 100 (1%%) or a fraction (0.01)", optarg);
            history_only = 1;
            break;
        default: return rpx_cli_bad_option("report", c, argv);
        }
    }
    if (!output) return rpx_cli_fail("report", RPX_EXIT_USAGE, "-o REPORT.html is required");
    if (!ha.history && optind >= argc && getenv("RPXPROF_HISTORY") && *getenv("RPXPROF_HISTORY"))
        ha.history = getenv("RPXPROF_HISTORY");
    if (ha.history && optind < argc)
        return rpx_cli_fail("report", RPX_EXIT_USAGE, "%s: give either INPUTs or --history PATH, not both", argv[optind]);
    if (!ha.history && history_only)
        return rpx_cli_fail("report", RPX_EXIT_USAGE, "--benchmark, --checks and --threshold go with --history PATH");
    if (ha.checks && ha.threshold > 0)
        return rpx_cli_fail("report", RPX_EXIT_USAGE, "--threshold is the check's: the results given with --checks were "
                                                      "judged with theirs; give one of the two");
    if (ha.history) {
        ha.title = title;
        ha.output = output;
        ha.force = force;
        fflush(stdout);
        return rpx__cli_report_history(&ha);
    }
    if (optind >= argc)
        return rpx_cli_fail("report", RPX_EXIT_USAGE, "give at least one INPUT: a run report, a compare --json result, a batch folder or an aggregate folder");
    oo.force = force;
    oo.protect = (const char *const *)(argv + optind);
    oo.n_protect = (size_t)(argc - optind);
    oo.protect_folders = 1;       /* batch and aggregate folders: their reports are read */
    if ((c = rpx_output_open(output, &oo, &out, &err)) != 0)
        return rpx_cli_fail("report", c == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s", err.message);
    to_stdout = rpx_output_is_stdout(out);
    rc = load_inputs(&l, argv + optind, (size_t)(argc - optind));
    if (rc) {
        rpx_output_discard(out);
        loaded_free(&l);
        return rc;
    }
    in.title = title;
    html_input_of(&l, &in);
    fflush(stdout);
    rc = rpx__cli_html("report", out, &in);
    loaded_free(&l);
    if (rc == 0 && !to_stdout) printf("%s\n", output);
    return rc;
}
