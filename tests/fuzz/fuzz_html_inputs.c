/* fuzz_html_inputs — `rpxprof report`'s reader (src/cli/report.c) of what it
 * is given: a run report, a `compare --json` result, a batch folder and an
 * aggregate folder, and the HTML page built from them (src/report/html*.c,
 * the embedded figure.svg cleaned by html_svg.c), on arbitrary bytes.
 *
 * The input is cut at each "\n--8<--\n" into up to four parts:
 *   0  a report file (read as a run report or a comparison by its schema), and
 *      the one run report of a batch folder (DIR/task/model.json)
 *   1  an aggregate folder's validation.json
 *   2  its summary.csv
 *   3  its figure.svg (the rpxprof mark put in front, as rpxprof writes it)
 * and `rpxprof report` is run on the file, the batch folder and the aggregate
 * folder in turn, the page written to a file in a temporary folder. */
#ifndef _GNU_SOURCE /* the build defines it (CMakeLists.txt) */
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];
static const char cut[] = "\n--8<--\n";

static void write_file(const char *path, const void *head, size_t nhead, const void *data,
                       size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    if (nhead) fwrite(head, 1, nhead, f);
    if (size) fwrite(data, 1, size, f);
    fclose(f);
}

static void report(const char *input, const char *out)
{
    char a0[] = "report", a2[] = "-o", a4[] = "--force";
    char *in = strdup(input), *o = strdup(out);
    char *argv[] = {a0, in, a2, o, a4, NULL};
    if (in && o) (void)rpx_cli_report(5, argv);
    free(in);
    free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char mark[] = "<!-- rpxprof figure -->\n";
    static const char *const part_path[4] = {"r.json", "agg/validation.json", "agg/summary.csv",
                                             "agg/figure.svg"};
    const char *p = (const char *)data, *end = p + size;
    char path[192], out[192];
    int k;
    if (!root[0]) {
        int null = open("/dev/null", O_WRONLY);
        snprintf(root, sizeof root, "/tmp/rpx_fuzz_html.XXXXXX");
        if (!mkdtemp(root)) abort();
        if (null >= 0) { /* the paths it prints; its errors (and ASan's) stay on stderr */
            dup2(null, 1);
            close(null);
        }
        snprintf(path, sizeof path, "%s/agg", root);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/batch", root);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/batch/task", root);
        mkdir(path, 0700);
    }
    for (k = 0; k < 4; k++) {
        const char *q = p;
        size_t n;
        while (q < end && !(q + sizeof cut - 1 <= end && memcmp(q, cut, sizeof cut - 1) == 0)) q++;
        n = (size_t)(q - p);
        snprintf(path, sizeof path, "%s/%s", root, part_path[k]);
        if (k == 3) write_file(path, mark, sizeof mark - 1, p, n);
        else write_file(path, NULL, 0, p, n);
        if (k == 0) {
            snprintf(path, sizeof path, "%s/batch/task/model.json", root);
            write_file(path, NULL, 0, p, n);
        }
        p = q < end ? q + sizeof cut - 1 : end;
    }
    snprintf(out, sizeof out, "%s/page.html", root);
    snprintf(path, sizeof path, "%s/r.json", root);
    report(path, out);
    snprintf(path, sizeof path, "%s/batch", root);
    report(path, out);
    snprintf(path, sizeof path, "%s/agg", root);
    report(path, out);
    return 0;
}
