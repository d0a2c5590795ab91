/* user_file.c — owns the check that a file a user names for reading is a
 * regular file, made before any blocking open (user_file.h). */
#include <sys/stat.h>

#include "common/user_file.h"

int rpx__user_file_regular(const char *path, const char *label, rpx_error *err)
{
    struct stat st;
    const char *what, *why;
    if (!path || stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return 0;
    if (S_ISFIFO(st.st_mode)) {
        what = "a FIFO (named pipe)";
        why = "reading it would wait for a writer without end";
    } else if (S_ISCHR(st.st_mode)) {
        what = "a character device";
        why = "rpxprof reads whole files and a device may never end";
    } else if (S_ISBLK(st.st_mode)) {
        what = "a block device";
        why = "rpxprof reads whole files, not disks";
    } else if (S_ISSOCK(st.st_mode)) {
        what = "a socket";
        why = "a socket cannot be opened as a file";
    } else {
        what = "a special file";
        why = "rpxprof reads whole files";
    }
    return rpx_error_set(err, RPX_EIO,
                         "%s: is %s, not a regular file (%s); save the data to a regular file "
                         "and give that",
                         label ? label : path, what, why);
}

int rpx__user_file_bounded(const char *path, const char *label, long long max_bytes,
                           rpx_error *err)
{
    struct stat st;
    int rc = rpx__user_file_regular(path, label, err);
    if (rc != 0 || !path || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return rc;
    if ((long long)st.st_size <= max_bytes) return 0;
    return rpx_error_set(err, RPX_EIO,
                         "%s: is %lld bytes, more than rpxprof reads whole (%lld MiB); give a "
                         "smaller file",
                         label ? label : path, (long long)st.st_size, max_bytes >> 20);
}
