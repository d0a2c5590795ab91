/* plot.c — `rpxprof plot REPORT.json... -o FIG.svg [--timeline]`: the latency
 * figure of run reports (docs/batch.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/user_file.h"
#include "rpxprof/plot.h"
#include "rpxprof/error.h"
#include "common/output.h"
#include "common/json.h"
#include "rpxprof/aggregate.h"
#include "rpxprof/report.h"

static const char usage[] =
    "Usage: rpxprof plot REPORT.json... -o FIG.svg [--timeline] [--force]\n"
    "Draw the latency distribution of run reports: one panel per task (or unit),\n"
    "one row per model: a box p25-p75, whiskers p5-p95, every sample as a point,\n"
    "p50/p95/p99 marked. --timeline draws latency against call index of one report\n"
    "(against intended send time for an open-loop load run, --rate).\n"
    "\n"
    "Options:\n"
    "  -o, --output FIG.svg  the figure (written atomically; - for stdout); an existing\n"
    "                        file is replaced only when it is a figure of rpxprof's\n"
    "  --force               replace any regular file at FIG.svg (never a REPORT.json)\n"
    "  --timeline            latency against call index (exactly one report); for a\n"
    "                        load run against each request's intended send time\n"
    "  -h, --help            show this help and exit\n";

typedef struct loaded {
    json_t *r;
    double *samples;
    double *x_ms;                 /* --timeline of a load run: http.load.schedule_ms */
    char *shape;
    char note[128];               /* open-loop load or paced: the row's mode_note */
} loaded;

/* "rgb 48x64x3, depth 48x64" */
static char *shape_text(const json_t *inputs)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    const char *k;
    json_t *v;
    int first = 1;
    if (!f) return NULL;
    json_object_foreach((json_t *)inputs, k, v) {
        json_t *sh = json_object_get(v, "shape");
        size_t i;
        fprintf(f, "%s%s ", first ? "" : ", ", k);
        first = 0;
        if (json_array_size(sh) == 0) fputs("scalar", f);
        for (i = 0; i < json_array_size(sh); i++)
            fprintf(f, "%s%lld", i ? "x" : "", (long long)json_integer_value(json_array_get(sh, i)));
    }
    fclose(f);
    return s;
}

static const char *str_or(const json_t *r, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(r, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

int rpx_cli_plot(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"timeline", no_argument, NULL, 't'},
        {"force", no_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *output = NULL;
    int c, tl = 0, force = 0, rc = RPX_EXIT_OK;
    size_t n, i;
    loaded *l;
    rpx_plot_row *rows;
    rpx_error err = {0};
    char *svg = NULL;
    rpx_output *out = NULL;
    rpx_output_options oo = {RPX_OUTPUT_SVG, NULL, 0, NULL, 0, "--output"};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":" "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 't': tl = 1; break;
        case 'f': force = 1; break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        default: return rpx_cli_bad_option("plot", c, argv);
        }
    }
    if (!output) return rpx_cli_fail("plot", RPX_EXIT_USAGE, "-o FIG.svg is required");
    if (optind >= argc) return rpx_cli_fail("plot", RPX_EXIT_USAGE, "give at least one REPORT.json");
    n = (size_t)(argc - optind);
    if (tl && n != 1) return rpx_cli_fail("plot", RPX_EXIT_USAGE, "--timeline draws exactly one report; give one REPORT.json");
    /* the figure's place is checked (and its temporary file made) before any
     * report is read; the reports themselves are never replaced */
    oo.force = force;
    oo.protect = (const char *const *)(argv + optind);
    oo.n_protect = n;
    if ((c = rpx_output_open(output, &oo, &out, &err)) != 0)
        return rpx_cli_fail("plot", c == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE, "%s",
                            err.message);
    l = calloc(n, sizeof *l);
    rows = calloc(n, sizeof *rows);
    if (!l || !rows) {
        free(l);
        free(rows);
        rpx_output_discard(out);
        return rpx_cli_fail("plot", 1, "out of memory");
    }
    for (i = 0; i < n && rc == RPX_EXIT_OK; i++) {
        const char *path = argv[optind + (int)i];
        json_error_t je;
        json_t *s;
        size_t k;
        if (rpx__user_file_regular(path, NULL, &err) != 0) { /* a FIFO would block */
            rc = rpx_cli_fail("plot", 1, "%s", err.message);
            break;
        }
        l[i].r = json_load_file(path, 0, &je);
        if (!l[i].r) { rc = rpx_cli_fail("plot", 1, "%s: line %d: %s; give a report of rpxprof run", path, je.line, je.text); break; }
        s = json_object_get(l[i].r, "latency_samples_ms");
        if (!json_is_array(s) || json_array_size(s) == 0) {
            rc = rpx_cli_fail("plot", 1, "%s: latency_samples_ms: missing or empty; give a complete report of rpxprof run", path);
            break;
        }
        l[i].samples = malloc(json_array_size(s) * sizeof(double));
        if (!l[i].samples) { rc = rpx_cli_fail("plot", 1, "out of memory"); break; }
        for (k = 0; k < json_array_size(s); k++) {
            if (!json_is_number(json_array_get(s, k))) {
                rc = rpx_cli_fail("plot", 1, "%s: latency_samples_ms[%zu]: not a number", path, k);
                break;
            }
            l[i].samples[k] = json_number_value(json_array_get(s, k));
        }
        {   /* a complete report of rpxprof: aggregate's and compare's checks, as warnings (the
             * figure draws the file as it holds it) */
            const json_t *sc = json_object_get(l[i].r, "schema"), *st = json_object_get(l[i].r, "status");
            if (rc == RPX_EXIT_OK && json_is_string(sc) && !strcmp(json_string_value(sc), RPX_PROFILE_SCHEMA) && json_is_string(st) &&
                !strcmp(json_string_value(st), "complete")) {
                json_t *errs = json_array(), *warns = json_array(), *w;
                if (rpx_report_check(path, l[i].r, errs, warns) > 0)
                    json_array_foreach(errs, k, w)
                        fprintf(stderr, "rpxprof plot: warning: %s\n", json_string_value(w));
                json_decref(errs);
                json_decref(warns);
            }
        }
        l[i].shape = shape_text(json_object_get(l[i].r, "inputs"));
        rows[i].unit = str_or(l[i].r, "unit", "call");
        rows[i].panel = str_or(l[i].r, "task", rows[i].unit);
        rows[i].label = str_or(l[i].r, "model_name", str_or(l[i].r, "model_callable", path));
        rows[i].device = str_or(l[i].r, "device", NULL);
        rows[i].shape = l[i].shape;
        rows[i].samples_ms = l[i].samples;
        rows[i].n = json_array_size(s);
        rpx_plot_row_interval(&rows[i], l[i].r);
        rpx_plot_mode_note_of(l[i].note, sizeof l[i].note, l[i].r);
        rows[i].mode_note = l[i].note;
        /* an open-loop load run: latency against each request's intended send time */
        s = json_object_get(json_object_get(json_object_get(l[i].r, "http"), "load"), "schedule_ms");
        if (tl && rc == RPX_EXIT_OK && json_is_array(s)) {
            if (json_array_size(s) != rows[i].n) {
                rc = rpx_cli_fail("plot", 1, "%s: http.load.schedule_ms has %zu times but latency_samples_ms has %zu samples; the report was altered",
                                  path, json_array_size(s), rows[i].n);
                break;
            }
            l[i].x_ms = malloc(rows[i].n * sizeof(double));
            if (!l[i].x_ms) { rc = rpx_cli_fail("plot", 1, "out of memory"); break; }
            for (k = 0; k < rows[i].n; k++) {
                if (!json_is_number(json_array_get(s, k))) {
                    rc = rpx_cli_fail("plot", 1, "%s: http.load.schedule_ms[%zu]: not a number", path, k);
                    break;
                }
                l[i].x_ms[k] = json_number_value(json_array_get(s, k));
            }
            rows[i].x_ms = l[i].x_ms;
        }
    }
    if (rc == RPX_EXIT_OK && rpx_plot_svg(rows, n, tl, &svg, &err))
        rc = rpx_cli_fail("plot", 1, "%s", err.message);
    if (rc == RPX_EXIT_OK) {
        int to_stdout = rpx_output_is_stdout(out);
        fflush(stdout);
        if (rpx_output_commit(out, svg, strlen(svg), &err)) rc = rpx_cli_fail("plot", 1, "%s", err.message);
        else if (!to_stdout) printf("%s\n", output);
    } else {
        rpx_output_discard(out);
    }
    free(svg);
    for (i = 0; i < n; i++) { json_decref(l[i].r); free(l[i].samples); free(l[i].x_ms); free(l[i].shape); }
    free(l);
    free(rows);
    return rc;
}
