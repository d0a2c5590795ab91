/* fuzz_report — the report reader of `rpxprof aggregate` (src/batch/aggregate.c)
 * on arbitrary bytes: the input is one report at DIR/task/model.json beside a
 * valid one, and the aggregation (checks, CSV, Markdown, validation, figure)
 * runs over both. */
#ifndef _GNU_SOURCE /* the build defines it (CMakeLists.txt) */
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rpxprof/aggregate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];

static void write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, size, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[128], out[128], path[192];
    const char *dirs[1];
    rpx_aggregate_opts o;
    rpx_aggregate_result res;
    rpx_error err = {0};
    if (!root[0]) {
        snprintf(root, sizeof root, "/tmp/rpx_fuzz_report.XXXXXX");
        if (!mkdtemp(root)) abort();
    }
    snprintf(dir, sizeof dir, "%s/reports", root);
    snprintf(out, sizeof out, "%s/out", root);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/task", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/task/model.json", dir);
    write_file(path, data, size);
    dirs[0] = dir;
    memset(&o, 0, sizeof o);
    o.dirs = dirs;
    o.ndirs = 1;
    o.out_dir = out;
    (void)rpx_aggregate(&o, &res, &err);
    return 0;
}
