/* fuzz_manifest — the batch manifest reader (src/batch/manifest.c) on
 * arbitrary bytes, read from an in-memory file. */
#ifndef _GNU_SOURCE /* the build defines it (CMakeLists.txt) */
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rpxprof/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    rpx_manifest *m = NULL;
    rpx_error err = {0};
    size_t i;
    int fd = memfd_create("manifest.json", 0);
    if (fd < 0) return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (rpx_manifest_load(path, &m, &err) == 0) {
            for (i = 0; i < rpx_manifest_job_count(m); i++) (void)rpx_manifest_job(m, i);
            rpx_manifest_free(m);
        }
    }
    close(fd);
    return 0;
}
