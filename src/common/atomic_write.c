/* atomic_write.c — owns writing output files atomically: a temporary file in
 * the same folder, flushed to disk, then renamed over the target. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "rpxprof/report.h"

/* mkdir -p of the folder that holds `path`. */
static int make_parents(const char *path, rpx_error *err)
{
    char buf[PATH_MAX];
    char *p;
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return rpx_error_set(err, RPX_EINVAL, "%s: path too long", path);
    p = strrchr(buf, '/');
    if (!p || p == buf) return 0;
    *p = '\0';
    for (p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return rpx_error_set(err, RPX_EIO, "%s: cannot create folder %s: %s", path, buf,
                                 strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return rpx_error_set(err, RPX_EIO, "%s: cannot create folder %s: %s", path, buf,
                             strerror(errno));
    return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int rpx_write_file_atomic(const char *path, const void *data, size_t len, rpx_error *err)
{
    char tmp[PATH_MAX];
    int fd, rc;
    if (!path || !*path) return rpx_error_set(err, RPX_EINVAL, "output path is empty");
    if (strcmp(path, "-") == 0) {
        if (write_all(STDOUT_FILENO, data, len) != 0)
            return rpx_error_set(err, RPX_EIO, "standard output: %s", strerror(errno));
        return 0;
    }
    if ((rc = make_parents(path, err)) != 0) return rc;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return rpx_error_set(err, RPX_EINVAL, "%s: path too long", path);
    fd = mkstemp(tmp);
    if (fd < 0)
        return rpx_error_set(err, RPX_EIO, "%s: cannot create a temporary file beside it: %s",
                             path, strerror(errno));
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return rpx_error_set(err, RPX_EIO, "%s: write failed: %s", path, strerror(e));
    }
    /* mkstemp makes 0600; reports are ordinary files */
    {
        mode_t um = umask(0);
        umask(um);
        (void)fchmod(fd, 0666 & ~um);
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return rpx_error_set(err, RPX_EIO, "%s: cannot move the finished file into place: %s",
                             path, strerror(e));
    }
    return 0;
}
