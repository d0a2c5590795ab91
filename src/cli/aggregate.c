/* aggregate.c — `rpxprof aggregate DIR... --out-dir OUT [--expect MANIFEST]
 * [--allow-incomplete-flops]`: checks and combines batch reports (docs/batch.md). */
#include <getopt.h>
#include <limits.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "rpxprof/aggregate.h"
#include "rpxprof/error.h"
#include "sweep/sweep.h"

/* 1 when every DIR holds a sweep.json (rpxprof sweep's --out-dir) */
static int all_sweeps(const char *const *dirs, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        char path[PATH_MAX + 16];
        FILE *f;
        snprintf(path, sizeof path, "%s/sweep.json", dirs[i]);
        if (!(f = fopen(path, "r"))) return 0;
        fclose(f);
    }
    return n > 0;
}

static const char usage[] =
    "Usage: rpxprof aggregate DIR... --out-dir OUT [--expect MANIFEST.json]\n"
    "                         [--allow-incomplete-flops] [--allow-audit-failures] [--force]\n"
    "Check every report DIR/<task>/<model>.json of rpxprof batch (schema, identity,\n"
    "status, samples against statistics, same work across models, same machine) and\n"
    "write OUT/summary.csv, OUT/summary.md, OUT/validation.json and OUT/figure.svg.\n"
    "Given the --out-dir of rpxprof sweep for each model (DIR/sweep.json), write the\n"
    "paper's figure instead: OUT/sweeps.svg (a line a model, latency against size)\n"
    "and OUT/sweeps.csv (a row a point) (docs/sweep.md).\n"
    "Reports the reference wrote (its profile_callable.py, profile_depth_efficiency.py)\n"
    "are read too, with a warning naming the tool (docs/batch.md).\n"
    "\n"
    "Options:\n"
    "  -o, --out-dir OUT           where the summary goes (required)\n"
    "  --expect MANIFEST           every job of the manifest must be there, and nothing else\n"
    "  --allow-incomplete-flops    unknown FLOPs are a warning, not an error\n"
    "  --allow-audit-failures      a report whose --audit says suspect is a warning, not\n"
    "                              an error (docs/audits.md)\n"
    "  --force                     replace files in OUT that rpxprof did not write\n"
    "                              (without it, only a folder holding rpxprof's\n"
    "                              validation.json has its files replaced)\n"
    "  --html FILE                 also write the HTML report: the validation, the table,\n"
    "                              the figure and one section per report\n"
    "  -q, --quiet                 print nothing but errors of the command itself\n"
    "  -h, --help                  show this help and exit\n"
    "Exit status: 0 PASS, 1 FAIL (everything is still written), 2 bad command line.\n";

int rpx_cli_aggregate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out-dir", required_argument, NULL, 'o'}, {"expect", required_argument, NULL, 'e'},
        {"allow-incomplete-flops", no_argument, NULL, 'a'}, {"quiet", no_argument, NULL, 'q'},
        {"force", no_argument, NULL, 'f'}, {"html", required_argument, NULL, 'H'},
        {"allow-audit-failures", no_argument, NULL, 'A'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    rpx_aggregate_opts o = {0};
    rpx_aggregate_result res;
    rpx_error err = {0};
    int c, quiet = 0;
    const char *html = NULL;
    rpx_output *hout = NULL;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":" "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': o.out_dir = optarg; break;
        case 'e': o.expect = optarg; break;
        case 'a': o.allow_incomplete_flops = 1; break;
        case 'f': o.force = 1; break;
        case 'A': o.allow_audit_failures = 1; break;
        case 'q': quiet = 1; break;
        case 'H': html = optarg; break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        default: return rpx_cli_bad_option("aggregate", c, argv);
        }
    }
    if (optind >= argc)
        return rpx_cli_fail("aggregate", RPX_EXIT_USAGE, "give at least one DIR (the --out-dir of rpxprof batch)");
    if (!o.out_dir) return rpx_cli_fail("aggregate", RPX_EXIT_USAGE, "--out-dir OUT is required");
    for (c = optind; c <= argc; c++) { /* trailing slashes never doubled in what it prints */
        char *d = c < argc ? argv[c] : (char *)o.out_dir; /* argv's own, writable */
        size_t n = strlen(d);
        while (n > 1 && d[n - 1] == '/') d[--n] = '\0';
    }
    o.dirs = (const char *const *)(argv + optind);
    o.ndirs = (size_t)(argc - optind);
    if (all_sweeps(o.dirs, o.ndirs)) { /* sweeps of several models: the paper's figure */
        if (html || o.expect)
            return rpx_cli_fail("aggregate", RPX_EXIT_USAGE, "--html and --expect are batch "
                                "folders'; sweep folders give OUT/sweeps.csv and OUT/sweeps.svg");
        if (rpx_sweep_aggregate(o.dirs, o.ndirs, o.out_dir, &err) != 0)
            return rpx_cli_fail("aggregate", RPX_EXIT_FAILURE, "%s", err.message);
        if (!quiet) printf("%s/sweeps.csv\n%s/sweeps.svg\n", o.out_dir, o.out_dir);
        return RPX_EXIT_OK;
    }
    if (html) {   /* the page is never one of the out-dir's files */
        static const char *const names[] = {"summary.csv", "summary.md", "figure.svg",
                                            "validation.json"};
        size_t k;
        for (k = 0; k < sizeof names / sizeof *names; k++) {
            char p[PATH_MAX];
            const char *which[2] = {"--out-dir", "--html"}, *paths[2] = {p, html};
            snprintf(p, sizeof p, "%s/%s", o.out_dir, names[k]);
            if ((c = rpx_cli_outputs_distinct("aggregate", which, paths, 2)) != 0) return c;
        }
    }
    if (html) {
        const char **keep = calloc(o.ndirs + 2, sizeof *keep);
        size_t k;
        if (!keep) return rpx_cli_fail("aggregate", RPX_EXIT_FAILURE, "out of memory");
        for (k = 0; k < o.ndirs; k++) keep[k] = o.dirs[k];
        keep[o.ndirs] = o.expect;
        c = rpx__cli_html_open("aggregate", html, o.force, keep, o.ndirs + 1, &hout);
        free(keep);
        if (c) return c;
    }
    if ((c = rpx_aggregate(&o, &res, &err)) != 0) {
        rpx_output_discard(hout);
        return rpx_cli_fail("aggregate", c == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE,
                            "%s", err.message);
    }
    if (hout) {   /* the out-dir's validation, table and figure; the reports of the DIRs */
        char **inputs = calloc(o.ndirs + 1, sizeof *inputs);
        size_t k;
        if (!inputs) { rpx_output_discard(hout); return rpx_cli_fail("aggregate", RPX_EXIT_FAILURE, "out of memory"); }
        inputs[0] = (char *)o.out_dir;
        for (k = 0; k < o.ndirs; k++) inputs[k + 1] = (char *)o.dirs[k];
        c = rpx__cli_html_of_files("aggregate", hout, inputs, o.ndirs + 1);
        free(inputs);
        /* the folder's files are written: a page that fails is exit 8, not 1 */
        if (c) return res.errors ? RPX_EXIT_FAILURE : c == RPX_EXIT_USAGE ? c : RPX_EXIT_EXTRA_OUTPUT;
    }
    if (!quiet && res.warnings) {   /* the warnings the verdict carries, as validation.json holds them */
        char vp[4096];
        json_t *v;
        size_t i;
        const json_t *w;
        snprintf(vp, sizeof vp, "%s/validation.json", o.out_dir);
        v = json_load_file(vp, 0, NULL);
        json_array_foreach(json_object_get(v, "warnings"), i, w)
            fprintf(stderr, "rpxprof aggregate: warning: %s\n", json_string_value(w));
        json_decref(v);
    }
    if (!quiet)
        printf("aggregate: %zu reports, %zu errors, %zu warnings: %s (see %s/validation.json)\n",
               res.profiles_found, res.errors, res.warnings, res.errors ? "FAIL" : "PASS", o.out_dir);
    return res.errors ? RPX_EXIT_FAILURE : RPX_EXIT_OK;
}
