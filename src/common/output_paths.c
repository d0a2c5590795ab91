/* output_paths.c — owns deciding whether two paths name one file, for the
 * output guard (src/common/output.h): a path normalised whether or not it
 * exists yet (the real path of its deepest existing folder, then the rest
 * with "." and ".." taken lexically), device and inode where both exist, and
 * whether an existing file is one that reading a folder would read (a batch
 * folder's run reports, an aggregate folder's files). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/output.h"

/* Append the components of `rest` to `base` (an absolute path without a
 * trailing slash, in a buffer of `size`), "." skipped and ".." dropping the
 * last component. 0, or -1 when it does not fit. */
static int append_lexical(char *base, size_t size, const char *rest)
{
    const char *p = rest;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p), len = strlen(base);
        if (n == 0 || (n == 1 && p[0] == '.')) {
            /* nothing */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            char *s = strrchr(base, '/');
            if (s && s != base) *s = '\0';
            else strcpy(base, "/");
        } else {
            int slash = !(len == 1 && base[0] == '/');
            if (len + (size_t)slash + n + 1 > size) return -1;
            if (slash) base[len++] = '/';
            memcpy(base + len, p, n);
            base[len + n] = '\0';
        }
        p += n;
        if (*p == '/') p++;
    }
    return 0;
}

/* A dangling symbolic link's target (relative to the link's folder), or NULL
 * when `path` is not a link. Malloc'ed. */
static char *link_target(const char *path)
{
    char link[PATH_MAX], *out = NULL;
    struct stat st;
    ssize_t n;
    const char *slash;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) return NULL;
    if ((n = readlink(path, link, sizeof link - 1)) < 0) return NULL;
    link[n] = '\0';
    slash = strrchr(path, '/');
    if (link[0] == '/' || !slash) return strdup(link);
    if (asprintf(&out, "%.*s/%s", (int)(slash - path), path, link) < 0) return NULL;
    return out;
}

static char *normalise(const char *path, int hops);

char *rpx_output_normalise(const char *path)
{
    return normalise(path, 0);
}

static char *normalise(const char *path, int hops)
{
    char buf[PATH_MAX], cwd[PATH_MAX], out[PATH_MAX];
    char *cut, *real, *to;
    if (!path || !*path) return NULL;
    if (hops < 40 && (to = link_target(path)) != NULL) { /* a dangling link: where it points */
        char *r = normalise(to, hops + 1);
        free(to);
        return r;
    }
    if (path[0] == '/') {
        if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return NULL;
    } else {
        if (!getcwd(cwd, sizeof cwd)) return NULL;
        if (snprintf(buf, sizeof buf, "%s/%s", cwd, path) >= (int)sizeof buf) return NULL;
    }
    if ((real = realpath(buf, NULL)) != NULL) return real; /* it exists: links followed */
    /* the deepest prefix that exists, resolved; the rest lexically */
    cut = buf + strlen(buf);
    while (cut > buf) {
        char save;
        while (cut > buf && *cut != '/') cut--;
        if (cut == buf) break;
        save = *cut;
        *cut = '\0';
        real = realpath(buf, NULL);
        *cut = save;
        if (real) break;
        cut--;
    }
    if (!real) snprintf(out, sizeof out, "/");
    else {
        snprintf(out, sizeof out, "%s", real);
        free(real);
    }
    if (append_lexical(out, sizeof out, cut + (*cut == '/')) != 0) return NULL;
    return strdup(out);
}

int rpx_output_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    char *na, *nb;
    int same;
    if (!a || !b || !*a || !*b) return 0;
    if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0) return strcmp(a, b) == 0;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) {
        if (S_ISCHR(sa.st_mode)) return 0; /* /dev/null twice loses nothing */
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    }
    na = rpx_output_normalise(a);
    nb = rpx_output_normalise(b);
    same = na && nb && strcmp(na, nb) == 0;
    free(na);
    free(nb);
    return same;
}

/* 1 when the start of the file at `path` is a JSON object whose first
 * "schema" starts with `prefix`. */
static int has_schema(const char *path, const char *prefix)
{
    char head[4096];
    ssize_t n;
    const char *s;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n <= 0) return 0;
    head[n] = '\0';
    s = strstr(head, "\"schema\"");
    if (!s) return 0;
    s += 8;
    while (*s == ' ' || *s == ':' || *s == '\n' || *s == '\t' || *s == '\r') s++;
    return *s == '"' && strncmp(s + 1, prefix, strlen(prefix)) == 0;
}

int rpx_output_read_from_folder(const char *folder, const char *file)
{
    char *rf, *rt;
    const char *rel, *slash;
    size_t n;
    int read = 0;
    struct stat st;
    if (!folder || !file || stat(folder, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    if (stat(file, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    rf = realpath(folder, NULL);
    rt = realpath(file, NULL);
    if (rf && rt) {
        n = strlen(rf);
        if (strncmp(rt, rf, n) == 0 && (rt[n] == '/' || n == 1)) {
            rel = rt + n + (n != 1);
            slash = strchr(rel, '/');
            if (!slash) { /* an aggregate folder's own files */
                char v[PATH_MAX];
                read = (strcmp(rel, "validation.json") == 0 || strcmp(rel, "summary.csv") == 0 ||
                        strcmp(rel, "summary.md") == 0 || strcmp(rel, "figure.svg") == 0) &&
                       snprintf(v, sizeof v, "%s/validation.json", rf) < (int)sizeof v &&
                       has_schema(v, "rpxprof.validation/");
            }
            else if (!strchr(slash + 1, '/')) /* DIR/<task>/<model>.json: a run report */
                read = strlen(slash + 1) > 5 &&
                       strcmp(slash + 1 + strlen(slash + 1) - 5, ".json") == 0 &&
                       has_schema(rt, "rpxprof.profile/");
        }
    }
    free(rf);
    free(rt);
    return read;
}
