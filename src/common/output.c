/* output.c — owns the one guard every output file goes through
 * (src/common/output.h): what may be replaced (never an input, a device,
 * a FIFO or a file rpxprof did not write, unless forced), the temporary file
 * made beside the target before any work, and the rename (or the write to a
 * stream) at the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "common/output.h"

struct rpx_output {
    char *path;    /* as given */
    char *target;  /* the file replaced at commit (links followed); NULL for a stream */
    char *tmp;     /* the temporary file beside target (or in TMPDIR for a stream) */
    int fd;        /* tmp's descriptor, or the stream's */
    int stream;    /* 1: the data is written to fd itself */
    int tmp_fd;    /* a stream's temporary file for rpx_output_temp_path, or -1 */
    int is_stdout;
    mode_t mode;   /* the mode the finished file gets */
};

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* mkdir -p of the folder that holds `path`. */
static int make_parents(const char *shown, const char *path, rpx_error *err)
{
    char buf[PATH_MAX];
    char *p;
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return rpx_error_set(err, RPX_EINVAL, "%s: path too long; choose a shorter path", shown);
    p = strrchr(buf, '/');
    if (!p || p == buf) return 0;
    *p = '\0';
    for (p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return rpx_error_set(err, RPX_EIO,
                                 "%s: cannot create the folder %s: %s; choose a place you can write",
                                 shown, buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return rpx_error_set(err, RPX_EIO,
                             "%s: cannot create the folder %s: %s; choose a place you can write",
                             shown, buf, strerror(errno));
    return 0;
}

/* The folder part of `path` ("." when none), malloc'ed. */
static char *dir_of(const char *path)
{
    const char *s = strrchr(path, '/');
    if (!s) return strdup(".");
    if (s == path) return strdup("/");
    return strndup(path, (size_t)(s - path));
}

/* Follow a chain of symbolic links from `path` to a name that does not exist
 * (a dangling link). Returns the final name, malloc'ed, or NULL (errno set). */
static char *follow_dangling(const char *path)
{
    char *cur = strdup(path);
    int hops;
    for (hops = 0; cur && hops < 40; hops++) {
        struct stat st;
        char link[PATH_MAX];
        ssize_t n;
        if (lstat(cur, &st) != 0) return cur; /* does not exist: the name to create */
        if (!S_ISLNK(st.st_mode)) return cur;
        n = readlink(cur, link, sizeof link - 1);
        if (n < 0) { free(cur); return NULL; }
        link[n] = '\0';
        if (link[0] == '/') {
            free(cur);
            cur = strdup(link);
        } else {
            char *d = dir_of(cur), *next = NULL;
            if (d && asprintf(&next, "%s/%s", d, link) < 0) next = NULL;
            free(d);
            free(cur);
            cur = next;
        }
    }
    if (cur) {
        free(cur);
        errno = ELOOP;
    } else {
        errno = ENOMEM;
    }
    return NULL;
}

/* The first bytes of a file, quoted with C escapes, for a refusal. */
static void first_bytes(const char *buf, size_t n, char *out, size_t size)
{
    size_t i, k = 0;
    if (n > 24) n = 24;
    out[k++] = '"';
    for (i = 0; i < n && k + 6 < size; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\n') k += (size_t)snprintf(out + k, size - k, "\\n");
        else if (c == '\t') k += (size_t)snprintf(out + k, size - k, "\\t");
        else if (c == '"' || c == '\\') k += (size_t)snprintf(out + k, size - k, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f) k += (size_t)snprintf(out + k, size - k, "\\x%02x", c);
        else out[k++] = (char)c;
    }
    if (k + 5 < size && n == 24) k += (size_t)snprintf(out + k, size - k, "...");
    if (k + 2 < size) out[k++] = '"';
    out[k] = '\0';
}

/* The value of the first "schema" key of a JSON object held in buf (NUL
 * terminated), copied into out; 0 when found. */
static int json_schema(const char *buf, char *out, size_t size)
{
    const char *p = buf, *q;
    size_t n;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    if (*p != '{') return -1;
    for (q = strstr(p, "\"schema\""); q; q = strstr(q + 1, "\"schema\"")) {
        const char *v = q + 8, *e;
        while (*v == ' ' || *v == '\n' || *v == '\r' || *v == '\t') v++;
        if (*v != ':') continue;
        v++;
        while (*v == ' ' || *v == '\n' || *v == '\r' || *v == '\t') v++;
        if (*v != '"') continue;
        v++;
        for (e = v; *e && *e != '"' && *e != '\\'; e++) {}
        if (*e != '"') return -1;
        n = (size_t)(e - v);
        if (n >= size) n = size - 1;
        memcpy(out, v, n);
        out[n] = '\0';
        return 0;
    }
    return -1;
}

/* Read up to size-1 bytes from the start of fd, NUL terminated; the count. */
static size_t read_head(int fd, char *buf, size_t size)
{
    size_t got = 0;
    while (got + 1 < size) {
        ssize_t n = pread(fd, buf + got, size - 1 - got, (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    return got;
}

/* 1 when the zip archive in fd ends with the archive comment `comment`. */
static int npz_has_comment(int fd, off_t size, const char *comment)
{
    size_t clen = strlen(comment), want = 22 + clen;
    char buf[512];
    if (want > sizeof buf || size < (off_t)want) return 0;
    if (pread(fd, buf, want, size - (off_t)want) != (ssize_t)want) return 0;
    if (memcmp(buf, "PK\005\006", 4) != 0) return 0;
    if ((size_t)((unsigned char)buf[20] | ((unsigned char)buf[21] << 8)) != clen) return 0;
    return memcmp(buf + 22, comment, clen) == 0;
}

/* 1 when the folder of `file` holds rpxprof's validation.json. */
static int folder_is_aggregate(const char *file)
{
    char *d = dir_of(file), *v = NULL, head[4096], schema[128];
    int fd, ok = 0;
    if (!d) return 0;
    if (asprintf(&v, "%s/validation.json", d) < 0) v = NULL;
    free(d);
    if (!v) return 0;
    fd = open(v, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    free(v);
    if (fd < 0) return 0;
    read_head(fd, head, sizeof head);
    ok = json_schema(head, schema, sizeof schema) == 0 &&
         strncmp(schema, "rpxprof.validation/", 19) == 0;
    close(fd);
    return ok;
}

static const char *choose(const rpx_output_options *opt)
{
    return opt && opt->option ? opt->option : NULL;
}

/* What would replace an existing file: --force (or the caller's spelling of
 * it), where the command has one. */
static const char *force_hint(const rpx_output_options *opt)
{
    static _Thread_local char buf[96];
    if (opt && opt->no_force) return " or move it out of the way";
    snprintf(buf, sizeof buf, " or pass %s to replace it",
             opt && opt->force_option ? opt->force_option : "--force");
    return buf;
}

static const char *even_force(const rpx_output_options *opt)
{
    static _Thread_local char buf[96];
    if (opt && opt->no_force) return "";
    snprintf(buf, sizeof buf, ", even with %s",
             opt && opt->force_option ? opt->force_option : "--force");
    return buf;
}

/* 0 when the existing regular file at `target` may be replaced. */
static int check_replace(const char *path, const char *target, const struct stat *st,
                         const rpx_output_options *opt, rpx_error *err)
{
    char head[16384], shown[PATH_MAX + 64], fb[160], how[128], schema[128];
    size_t n = 0;
    int fd, ours = 0;
    rpx_output_kind kind = opt ? opt->kind : RPX_OUTPUT_REPORT;
    const char *want = opt ? opt->schema : NULL;
    struct stat ls;
    if (opt && opt->force) return 0;
    if (lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode))
        snprintf(shown, sizeof shown, "%s (a link to %s)", path, target);
    else
        snprintf(shown, sizeof shown, "%s", path);
    if (choose(opt)) snprintf(how, sizeof how, "choose another %s path", choose(opt));
    else snprintf(how, sizeof how, "choose another path");
    if ((st->st_mode & 0222) == 0)
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: exists and is read-only (mode %04o); %s%s",
                             shown, (unsigned)(st->st_mode & 07777), how, force_hint(opt));
    if (st->st_size == 0) return 0; /* nothing there to lose */
    fd = open(target, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) n = read_head(fd, head, sizeof head);
    else head[0] = '\0';
    switch (kind) {
    case RPX_OUTPUT_REPORT:
        if (fd >= 0 && json_schema(head, schema, sizeof schema) == 0) {
            if (want ? strcmp(schema, want) == 0 : strncmp(schema, "rpxprof.", 8) == 0)
                ours = 1;
            else if (strncmp(schema, "rpxprof.", 8) == 0) {
                close(fd);
                return rpx_error_set(err, RPX_EINVAL,
                                     "%s: exists and is a different kind of rpxprof file "
                                     "(schema \"%s\", not \"%s\"); %s%s",
                                     shown, schema, want ? want : "rpxprof.*", how, force_hint(opt));
            }
        }
        break;
    case RPX_OUTPUT_SVG:
        ours = fd >= 0 && strstr(head, RPX_OUTPUT_SVG_MARK) != NULL;
        break;
    case RPX_OUTPUT_HTML:
        ours = fd >= 0 && strstr(head, RPX_OUTPUT_HTML_MARK) != NULL;
        break;
    case RPX_OUTPUT_NPZ:
        ours = fd >= 0 && npz_has_comment(fd, st->st_size, RPX_OUTPUT_NPZ_COMMENT);
        break;
    case RPX_OUTPUT_TEXT: /* the folder of the link, or of its target */
        ours = folder_is_aggregate(path) || folder_is_aggregate(target);
        break;
    }
    if (fd >= 0) close(fd);
    if (ours) return 0;
    if (fd < 0) snprintf(fb, sizeof fb, "unreadable: %s", strerror(errno));
    else {
        char q[128];
        first_bytes(head, n, q, sizeof q);
        snprintf(fb, sizeof fb, "first bytes: %s", q);
    }
    return rpx_error_set(err, RPX_EINVAL,
                         "%s: exists and is not a file rpxprof wrote (%s); %s%s",
                         shown, fb, how, force_hint(opt));
}

/* A path the command reads (opt->protect) is never replaced, forced or not:
 * the same file by device and inode, links followed (a symbolic or hard link
 * to it, another spelling of its path). A usage error: two of the command's
 * own options (or a file the model resolves to) name one file. */
static int check_protect(const char *path, const struct stat *st, const rpx_output_options *opt,
                         rpx_error *err)
{
    size_t i;
    int rc = 0;
    for (i = 0; !rc && opt && opt->protect && i < opt->n_protect; i++) {
        struct stat ps;
        const char *p = opt->protect[i];
        if (!p || !*p || strcmp(p, "-") == 0 || stat(p, &ps) != 0) continue;
        if (opt->protect_folders && S_ISDIR(ps.st_mode) && rpx_output_read_from_folder(p, path))
            rc = rpx_error_set(err, RPX_EUSAGE,
                               "%s %s: is a file this command reads from the folder %s; rpxprof "
                               "never replaces it%s; choose another %s path",
                               choose(opt) ? choose(opt) : "output", path, p, even_force(opt),
                               choose(opt) ? choose(opt) : "output");
        else if (ps.st_dev == st->st_dev && ps.st_ino == st->st_ino)
            rc = rpx_error_set(err, RPX_EUSAGE,
                               "%s %s: is %s%s this command reads; rpxprof never replaces it%s; "
                               "choose another %s path",
                               choose(opt) ? choose(opt) : "output", path,
                               strcmp(p, path) == 0 ? "one of the files" : p,
                               strcmp(p, path) == 0 ? "" : ", which", even_force(opt),
                               choose(opt) ? choose(opt) : "output");
    }
    return rc;
}

static int same_as_stdout(const struct stat *st)
{
    struct stat so;
    return fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == st->st_dev && so.st_ino == st->st_ino;
}

static rpx_output *new_output(const char *path)
{
    rpx_output *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->path = strdup(path);
    o->fd = -1;
    o->tmp_fd = -1;
    if (!o->path) {
        free(o);
        return NULL;
    }
    return o;
}

static void free_output(rpx_output *o)
{
    if (!o) return;
    free(o->path);
    free(o->target);
    free(o->tmp);
    free(o);
}

static int open_stream(rpx_output *o, const struct stat *st, rpx_error *err)
{
    o->stream = 1;
    o->is_stdout = same_as_stdout(st);
    if (o->is_stdout) o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    else
        do o->fd = open(o->path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        while (o->fd < 0 && errno == EINTR);
    if (o->fd < 0)
        return rpx_error_set(err, RPX_EIO, "%s: cannot open for writing: %s; choose a path you can write",
                             o->path, strerror(errno));
    return 0;
}

static mode_t default_mode(void)
{
    mode_t um = umask(0);
    umask(um);
    return 0666 & ~um;
}

/* The other temporary files of o->target (our own naming, TMP_TAG, never
 * another's): one a live writer holds locked means another rpxprof is writing
 * the same output now (1, *busy its name); one nobody holds was left by a
 * writer that died (SIGKILL, a crash): removed. */
#define TMP_TAG ".tmp.rpxprof-"
static int other_writers(const rpx_output *o, char *busy, size_t size)
{
    char *d = dir_of(o->target), *p;
    const char *base = strrchr(o->target, '/') ? strrchr(o->target, '/') + 1 : o->target;
    const char *mine = strrchr(o->tmp, '/') ? strrchr(o->tmp, '/') + 1 : o->tmp;
    size_t bl = strlen(base), tl = strlen(TMP_TAG);
    DIR *dir = d ? opendir(d) : NULL;
    struct dirent *e;
    int found = 0;
    while (dir && !found && (e = readdir(dir)) != NULL) {
        int fd;
        if (strncmp(e->d_name, base, bl) != 0 || strncmp(e->d_name + bl, TMP_TAG, tl) != 0 ||
            strlen(e->d_name + bl + tl) != 6 || strcmp(e->d_name, mine) == 0)
            continue;
        if (asprintf(&p, "%s/%s", d, e->d_name) < 0) break;
        fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd >= 0) {
            struct stat st;
            if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
                if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
                    snprintf(busy, size, "%s", p);
                    found = 1;
                } else {
                    (void)unlink(p); /* its writer died: nobody will finish it */
                }
            }
            close(fd);
        }
        free(p);
    }
    if (dir) closedir(dir);
    free(d);
    return found;
}

/* The temporary file beside o->target, kept open and locked while it is
 * written (a second writer of the same output sees the lock). */
static int make_temp(rpx_output *o, rpx_error *err)
{
    int rc;
    char *d, busy[PATH_MAX + 64];
    if ((rc = make_parents(o->path, o->target, err)) != 0) return rc;
    if (asprintf(&o->tmp, "%s" TMP_TAG "XXXXXX", o->target) < 0) {
        o->tmp = NULL;
        return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", o->path);
    }
    o->fd = mkostemp(o->tmp, O_CLOEXEC);
    if (o->fd >= 0) {
        (void)fchmod(o->fd, o->mode);
        (void)flock(o->fd, LOCK_EX | LOCK_NB);
        if (other_writers(o, busy, sizeof busy)) {
            close(o->fd);
            o->fd = -1;
            unlink(o->tmp);
            free(o->tmp);
            o->tmp = NULL;
            return rpx_error_set(err, RPX_EUSAGE,
                                 "%s: another rpxprof is writing this file now (its temporary "
                                 "file %s is in use); wait for it to finish, or choose another "
                                 "path",
                                 o->path, busy);
        }
        return 0;
    }
    rc = errno;
    free(o->tmp);
    o->tmp = NULL;
    d = dir_of(o->target);
    rpx_error_set(err, RPX_EIO,
                  "%s: cannot create a file in the folder %s: %s; choose a folder you can write "
                  "(or fix its permissions)",
                  o->path, d ? d : "?", strerror(rc));
    free(d);
    return RPX_EIO;
}

int rpx_output_open(const char *path, const rpx_output_options *opt, rpx_output **out,
                    rpx_error *err)
{
    rpx_output *o;
    struct stat st;
    int rc;
    *out = NULL;
    if (!path || !*path)
        return rpx_error_set(err, RPX_EINVAL, "%s: the output path is empty; give a file name",
                             opt && opt->option ? opt->option : "output");
    if (!(o = new_output(path))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (strcmp(path, "-") == 0) {
        o->stream = 1;
        o->is_stdout = 1;
        o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (o->fd < 0) {
            rc = rpx_error_set(err, RPX_EIO, "standard output: %s", strerror(errno));
            goto fail;
        }
        *out = o;
        return 0;
    }
    o->mode = default_mode();
    if (stat(path, &st) == 0) {
        if ((rc = check_protect(path, &st, opt, err)) != 0) goto fail;
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            if ((rc = open_stream(o, &st, err)) != 0) goto fail;
            *out = o;
            return 0;
        }
        if (S_ISDIR(st.st_mode)) {
            rc = rpx_error_set(err, RPX_EINVAL, "%s: is a folder; give a file name (e.g. %s/%s)",
                               path, path,
                               opt && opt->kind == RPX_OUTPUT_SVG   ? "figure.svg"
                               : opt && opt->kind == RPX_OUTPUT_HTML ? "report.html"
                               : opt && opt->kind == RPX_OUTPUT_NPZ ? "inputs.npz"
                                                                    : "report.json");
            goto fail;
        }
        if (!S_ISREG(st.st_mode)) {
            rc = rpx_error_set(err, RPX_EINVAL,
                               "%s: is a %s, not a regular file; rpxprof never replaces it%s; "
                               "choose another path",
                               path, S_ISSOCK(st.st_mode) ? "socket"
                                     : S_ISBLK(st.st_mode) ? "block device" : "special file",
                               even_force(opt));
            goto fail;
        }
        if (same_as_stdout(&st)) { /* `-o /dev/stdout > file`: write through fd 1 */
            if ((rc = open_stream(o, &st, err)) != 0) goto fail;
            *out = o;
            return 0;
        }
        if (!(o->target = realpath(path, NULL))) {
            rc = rpx_error_set(err, RPX_EIO, "%s: %s; choose another path", path, strerror(errno));
            goto fail;
        }
        if ((rc = check_replace(path, o->target, &st, opt, err)) != 0) goto fail;
        o->mode = st.st_mode & 07777;
    } else if (errno == ENOENT) {
        size_t n = strlen(path);
        if (path[n - 1] == '/') {
            rc = rpx_error_set(err, RPX_EINVAL, "%s: names a folder; give a file name", path);
            goto fail;
        }
        if (!(o->target = follow_dangling(path))) {
            rc = rpx_error_set(err, RPX_EINVAL, "%s: %s; choose another path", path,
                               strerror(errno));
            goto fail;
        }
    } else {
        rc = rpx_error_set(err, RPX_EINVAL, "%s: %s; choose a path you can write", path,
                           strerror(errno));
        goto fail;
    }
    if ((rc = make_temp(o, err)) != 0) goto fail;
    *out = o;
    return 0;
fail:
    free_output(o);
    return rc;
}

const char *rpx_output_temp_path(const rpx_output *co)
{
    rpx_output *o = (rpx_output *)co;
    const char *dir;
    if (!o) return NULL;
    if (!o->stream) return o->tmp;
    if (o->tmp) return o->tmp;
    /* a stream: a scratch file in TMPDIR, copied to the stream at commit */
    dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    if (asprintf(&o->tmp, "%s/rpxprof-output.XXXXXX", dir) < 0) {
        o->tmp = NULL;
        return NULL;
    }
    o->tmp_fd = mkostemp(o->tmp, O_CLOEXEC);
    if (o->tmp_fd < 0) {
        free(o->tmp);
        o->tmp = NULL;
    }
    return o->tmp;
}

static const char *shown_name(const rpx_output *o)
{
    return strcmp(o->path, "-") == 0 ? "standard output" : o->path;
}

static int finish_stream(rpx_output *o, int rc, rpx_error *err)
{
    if (close(o->fd) != 0 && rc == 0 && errno != EINTR)
        rc = rpx_error_set(err, RPX_EIO, "%s: write failed: %s", shown_name(o), strerror(errno));
    o->fd = -1;
    if (o->tmp) {
        if (o->tmp_fd >= 0) close(o->tmp_fd);
        unlink(o->tmp);
    }
    free_output(o);
    return rc;
}

/* The temporary file is complete: flush it and move it over the target. */
static int finish_file(rpx_output *o, rpx_error *err)
{
    int rc = 0;
    if (fsync(o->fd) != 0 && errno != EINVAL)
        rc = rpx_error_set(err, RPX_EIO, "%s: write failed: %s", o->path, strerror(errno));
    if (close(o->fd) != 0 && !rc && errno != EINTR)
        rc = rpx_error_set(err, RPX_EIO, "%s: write failed: %s", o->path, strerror(errno));
    o->fd = -1;
    if (!rc && rename(o->tmp, o->target) != 0)
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot move the finished file into place: %s",
                           o->path, strerror(errno));
    if (rc) unlink(o->tmp);
    free_output(o);
    return rc;
}

int rpx_output_write(rpx_output *o, const void *data, size_t len, rpx_error *err)
{
    if (!o) return rpx_error_set(err, RPX_EINVAL, "no output to write");
    if (write_all(o->fd, data, len) != 0)
        return rpx_error_set(err, RPX_EIO, "%s: write failed: %s", shown_name(o), strerror(errno));
    return 0;
}

int rpx_output_commit(rpx_output *o, const void *data, size_t len, rpx_error *err)
{
    if (!o) return rpx_error_set(err, RPX_EINVAL, "no output to commit");
    if (o->stream) {
        int rc = 0;
        if (write_all(o->fd, data, len) != 0)
            rc = rpx_error_set(err, RPX_EIO, "%s: write failed: %s", shown_name(o), strerror(errno));
        return finish_stream(o, rc, err);
    }
    if (write_all(o->fd, data, len) != 0) {
        int e = errno;
        close(o->fd);
        o->fd = -1;
        unlink(o->tmp);
        rpx_error_set(err, RPX_EIO, "%s: write failed: %s", o->path, strerror(e));
        free_output(o);
        return RPX_EIO;
    }
    return finish_file(o, err);
}

int rpx_output_commit_written(rpx_output *o, rpx_error *err)
{
    int fd, rc = 0;
    if (!o) return rpx_error_set(err, RPX_EINVAL, "no output to commit");
    if (o->stream) {
        char buf[65536];
        ssize_t n;
        if (!o->tmp) return finish_stream(o, rpx_error_set(err, RPX_EIO, "%s: nothing was written", o->path), err);
        fd = open(o->tmp, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            rc = rpx_error_set(err, RPX_EIO, "%s: cannot read back %s: %s", o->path, o->tmp,
                               strerror(errno));
        while (!rc && (n = read(fd, buf, sizeof buf)) != 0) {
            if (n < 0) {
                if (errno == EINTR) continue;
                rc = rpx_error_set(err, RPX_EIO, "%s: cannot read back %s: %s", o->path, o->tmp,
                                   strerror(errno));
            } else if (write_all(o->fd, buf, (size_t)n) != 0) {
                rc = rpx_error_set(err, RPX_EIO, "%s: write failed: %s", o->path, strerror(errno));
            }
        }
        if (fd >= 0) close(fd);
        return finish_stream(o, rc, err);
    }
    /* the writer may have replaced the file at tmp: flush what is there now */
    close(o->fd);
    o->fd = open(o->tmp, O_RDONLY | O_CLOEXEC);
    if (o->fd < 0) {
        rc = rpx_error_set(err, RPX_EIO, "%s: the finished file %s is missing: %s", o->path,
                           o->tmp, strerror(errno));
        unlink(o->tmp);
        free_output(o);
        return rc;
    }
    (void)fchmod(o->fd, o->mode);
    return finish_file(o, err);
}

void rpx_output_discard(rpx_output *o)
{
    if (!o) return;
    if (o->fd >= 0) close(o->fd);
    if (o->tmp_fd >= 0) close(o->tmp_fd);
    if (o->tmp) unlink(o->tmp);
    free_output(o);
}

int rpx_output_is_stdout(const rpx_output *o)
{
    return o ? o->is_stdout : 0;
}

const char *rpx_output_path(const rpx_output *o)
{
    return o ? o->path : NULL;
}

/* The options that let `data` replace a file of its own kind: a JSON object
 * with a "schema" replaces a report of that schema, an SVG with rpxprof's mark
 * one with the mark, anything else only a new or empty file (or an aggregate
 * folder's output). `schema` receives the schema (opt->schema points to it).
 * For rpx_write_file_atomic (src/common/atomic_write.c). */
void rpx__output_sniff(const void *data, size_t len, rpx_output_options *opt, char *schema,
                       size_t size);
void rpx__output_sniff(const void *data, size_t len, rpx_output_options *opt, char *schema,
                       size_t size)
{
    char head[16384];
    size_t n = len < sizeof head - 1 ? len : sizeof head - 1;
    memcpy(head, data, n);
    head[n] = '\0';
    memset(opt, 0, sizeof *opt);
    if (json_schema(head, schema, size) == 0) {
        opt->kind = RPX_OUTPUT_REPORT;
        opt->schema = schema;
    } else if (strstr(head, RPX_OUTPUT_SVG_MARK)) {
        opt->kind = RPX_OUTPUT_SVG;
    } else if (strstr(head, RPX_OUTPUT_HTML_MARK)) {
        opt->kind = RPX_OUTPUT_HTML;
    } else {
        opt->kind = RPX_OUTPUT_TEXT;
    }
}
