/* companions.c — owns finding the files that ship with rpxprof (the demo
 * library, the Python and HTTP plugins): an environment variable naming the
 * file, else beside the library or program that holds this code (or in
 * ../lib/rpxprof/ from there), else where it was installed. target.c (the demo)
 * and plugins.c (the plugins) both ask it; it asks neither. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/target.h"

#define DEMO_FILE "librpxprof-demo.so"

static int file_exists(const char *p)
{
    return access(p, R_OK) == 0;
}

/* Try DIR/file and DIR/../lib/rpxprof/file for the folder of `self`. */
static int near(const char *self, const char *file, char *buf, size_t size)
{
    char dir[PATH_MAX];
    char *slash;
    if (!self || !*self) return 0;
    snprintf(dir, sizeof dir, "%s", self);
    slash = strrchr(dir, '/');
    if (!slash) return 0;
    *slash = '\0';
    snprintf(buf, size, "%s/%s", dir, file);
    if (file_exists(buf)) return 1;
    snprintf(buf, size, "%s/../lib/rpxprof/%s", dir, file);
    if (file_exists(buf)) return 1;
    return 0;
}

const char *rpx_companion_path(const char *file, const char *env, const char *installed,
                               char *buf, size_t size)
{
    const char *over = env ? getenv(env) : NULL;
    char exe[PATH_MAX];
    Dl_info info;
    ssize_t n;
    if (over && *over) {
        snprintf(buf, size, "%s", over);
        return buf;
    }
    /* next to the library that holds this code (librpxprof.so or a static CLI) */
    if (dladdr((void *)rpx_companion_path, &info) && info.dli_fname &&
        near(info.dli_fname, file, buf, size))
        return buf;
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        if (near(exe, file, buf, size)) return buf;
    }
    if (installed) {
        snprintf(buf, size, "%s", installed);
        if (file_exists(buf)) return buf;
    }
    return NULL;
}

const char *rpx_demo_library_path(char *buf, size_t size)
{
#ifdef RPX_DEMO_INSTALLED_PATH
    const char *installed = RPX_DEMO_INSTALLED_PATH;
#else
    const char *installed = NULL;
#endif
    return rpx_companion_path(DEMO_FILE, "RPX_DEMO_LIBRARY", installed, buf, size);
}
