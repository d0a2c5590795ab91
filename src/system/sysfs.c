/* sysfs.c — owns reading /proc, /sys and /etc files relative to RPX_SYSROOT. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rpxprof/system.h"

const char *rpx_sys_root(void)
{
    const char *r = getenv("RPX_SYSROOT");
    return (r && *r && !(r[0] == '/' && r[1] == '\0')) ? r : "";
}

long rpx_sys_read(const char *path, char *buf, size_t size)
{
    char full[PATH_MAX];
    size_t len = 0;
    int fd;
    if (!buf || size == 0) return -EINVAL;
    buf[0] = '\0';
    if (snprintf(full, sizeof full, "%s%s", rpx_sys_root(), path) >= (int)sizeof full)
        return -ENAMETOOLONG;
    fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    while (len < size - 1) {
        ssize_t n = read(fd, buf + len, size - 1 - len);
        if (n < 0) {
            int e = errno;
            if (e == EINTR) continue;
            close(fd);
            return -e;
        }
        if (n == 0) break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    close(fd);
    return (long)len;
}
