/* sysfs.c — owns reading /proc, /sys and /etc files relative to RPX_SYSROOT,
 * kernel CPU lists, and the JSON helpers every room of the card uses
 * (null + reason in a sibling `unavailable` object, warnings). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "system/system_internal.h"

#define RPX__SLURP_MAX (16L << 20)

const char *rpx_sys_root(void)
{
    const char *r = getenv("RPX_SYSROOT");
    return (r && *r && !(r[0] == '/' && r[1] == '\0')) ? r : "";
}

int rpx__sys_live(void)
{
    return rpx_sys_root()[0] == '\0';
}

static int full_path(const char *path, char *full, size_t size)
{
    int n = snprintf(full, size, "%s%s", rpx_sys_root(), path);
    return (n < 0 || (size_t)n >= size) ? -ENAMETOOLONG : 0;
}

long rpx_sys_read(const char *path, char *buf, size_t size)
{
    char full[PATH_MAX];
    size_t len = 0;
    int fd, rc;
    if (!buf || size == 0 || !path) return -EINVAL;
    buf[0] = '\0';
    if ((rc = full_path(path, full, sizeof full)) != 0) return rc;
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

char *rpx__sys_slurp(const char *path, long *len)
{
    char full[PATH_MAX];
    size_t n = 0, cap = 8192;
    char *buf;
    int fd, rc;
    if ((rc = full_path(path, full, sizeof full)) != 0) {
        *len = rc;
        return NULL;
    }
    fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *len = -errno;
        return NULL;
    }
    buf = malloc(cap);
    while (buf) {
        ssize_t r;
        if (n + 1 >= cap) {
            char *nb;
            if (cap >= (size_t)RPX__SLURP_MAX) break; /* keep what fits */
            nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - 1 - n);
        if (r < 0) {
            int e = errno;
            if (e == EINTR) continue;
            free(buf);
            close(fd);
            *len = -e;
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (!buf) {
        *len = -ENOMEM;
        return NULL;
    }
    buf[n] = '\0';
    *len = (long)n;
    return buf;
}

int rpx__sys_line(const char *path, char *buf, size_t size)
{
    char tmp[4096];
    long n = rpx_sys_read(path, tmp, sizeof tmp);
    const char *p = tmp, *end;
    if (n < 0) {
        buf[0] = '\0';
        return (int)n;
    }
    while (*p && isspace((unsigned char)*p)) p++;
    end = strchr(p, '\n');
    if (!end) end = p + strlen(p);
    while (end > p && isspace((unsigned char)end[-1])) end--;
    snprintf(buf, size, "%.*s", (int)(end - p), p);
    return 0;
}

int rpx__sys_ll(const char *path, long long *out)
{
    char line[128], *end;
    long long v;
    int rc = rpx__sys_line(path, line, sizeof line);
    if (rc != 0) return rc;
    if (!line[0]) return -EINVAL;
    errno = 0;
    v = strtoll(line, &end, 10);
    if (errno || *end) return -EINVAL;
    *out = v;
    return 0;
}

int rpx__sys_exists(const char *path)
{
    char full[PATH_MAX];
    struct stat st;
    if (full_path(path, full, sizeof full) != 0) return 0;
    return lstat(full, &st) == 0;
}

const char *rpx__sys_why(char *out, size_t size, const char *path, int rc)
{
    if (rc == -EINVAL)
        snprintf(out, size, "%s: not a number", path);
    else if (rc == -ENODATA)
        snprintf(out, size, "%s: empty", path);
    else
        snprintf(out, size, "%s: %s", path, strerror(-rc));
    return out;
}

int rpx__sys_snapshot_line(const char *name, char *buf, size_t size)
{
    char path[256];
    snprintf(path, sizeof path, "/rpxprof-snapshot/%s", name);
    return rpx__sys_line(path, buf, size);
}

int rpx__sys_kv(const char *text, const char *key, char *out, size_t size)
{
    size_t klen = strlen(key);
    const char *p = text;
    while (p && *p) {
        if (strncmp(p, key, klen) == 0) {
            const char *q = p + klen, *end;
            while (*q == ' ' || *q == '\t') q++;
            if (*q == ':') {
                q++;
                while (*q == ' ' || *q == '\t') q++;
                end = strchr(q, '\n');
                if (!end) end = q + strlen(q);
                while (end > q && isspace((unsigned char)end[-1])) end--;
                snprintf(out, size, "%.*s", (int)(end - q), q);
                return 1;
            }
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return 0;
}

/* ---- CPU lists ---------------------------------------------------------- */

int rpx__sys_cpuset_has(const rpx__sys_cpuset *set, int cpu)
{
    return cpu >= 0 && cpu < RPX__MAX_CPUS && (set->bits[cpu / 8] >> (cpu % 8)) & 1;
}

void rpx__sys_cpuset_add(rpx__sys_cpuset *set, int cpu)
{
    if (cpu >= 0 && cpu < RPX__MAX_CPUS) set->bits[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
}

int rpx__sys_cpuset_count(const rpx__sys_cpuset *set)
{
    int n = 0;
    size_t i;
    for (i = 0; i < sizeof set->bits; i++) n += __builtin_popcount(set->bits[i]);
    return n;
}

int rpx__sys_cpuset_first(const rpx__sys_cpuset *set)
{
    int c;
    for (c = 0; c < RPX__MAX_CPUS; c++)
        if (rpx__sys_cpuset_has(set, c)) return c;
    return -1;
}

static int parse_cpu(const char **p)
{
    long v = 0;
    if (!isdigit((unsigned char)**p)) return -1;
    while (isdigit((unsigned char)**p)) {
        v = v * 10 + (**p - '0');
        if (v >= RPX__MAX_CPUS) return -1;
        (*p)++;
    }
    return (int)v;
}

int rpx__sys_cpuset_parse(const char *list, rpx__sys_cpuset *set)
{
    const char *p = list;
    memset(set, 0, sizeof *set);
    if (!list) return -1;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '\n' || !*p) return 0; /* an empty list is valid: no CPU */
    for (;;) {
        int a = parse_cpu(&p), b, c;
        if (a < 0) return -1;
        b = a;
        if (*p == '-') {
            p++;
            if ((b = parse_cpu(&p)) < a) return -1;
        }
        for (c = a; c <= b; c++) rpx__sys_cpuset_add(set, c);
        if (*p == ',') {
            p++;
            continue;
        }
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (*p) return -1;
        break;
    }
    return rpx__sys_cpuset_count(set);
}

void rpx__sys_cpuset_format(const rpx__sys_cpuset *set, char *out, size_t size)
{
    size_t len = 0;
    int c = 0;
    out[0] = '\0';
    while (c < RPX__MAX_CPUS) {
        int a, b;
        if (!rpx__sys_cpuset_has(set, c)) {
            c++;
            continue;
        }
        a = b = c;
        while (b + 1 < RPX__MAX_CPUS && rpx__sys_cpuset_has(set, b + 1)) b++;
        if (len < size) {
            int n = a == b ? snprintf(out + len, size - len, "%s%d", len ? "," : "", a)
                           : snprintf(out + len, size - len, "%s%d-%d", len ? "," : "", a, b);
            if (n > 0) len += (size_t)n;
        }
        c = b + 1;
    }
    if (len >= size && size > 0) out[size - 1] = '\0';
}

/* ---- JSON helpers ------------------------------------------------------- */

json_t *rpx__sys_jstr(const char *s)
{
    json_t *j;
    char *copy, *q;
    if (!s) return json_null();
    j = json_string(s);
    if (j) return j;
    copy = strdup(s); /* not valid UTF-8: keep printable ASCII only */
    if (!copy) return NULL;
    for (q = copy; *q; q++)
        if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e) *q = '?';
    j = json_string(copy);
    free(copy);
    return j;
}

void rpx__sys_put(json_t *obj, const char *key, json_t *value)
{
    if (!obj) {
        json_decref(value);
        return;
    }
    json_object_set_new(obj, key, value ? value : json_null());
}

static void vreason(json_t *obj, const char *key, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void vreason(json_t *obj, const char *key, const char *fmt, va_list ap)
{
    char msg[1024];
    json_t *u;
    if (!obj) return;
    u = json_object_get(obj, "unavailable");
    if (!json_is_object(u)) {
        u = json_object();
        if (!u || json_object_set_new(obj, "unavailable", u) != 0) return;
    }
    vsnprintf(msg, sizeof msg, fmt, ap);
    json_object_set_new(u, key, rpx__sys_jstr(msg));
}

void rpx__sys_null(json_t *obj, const char *key, const char *fmt, ...)
{
    va_list ap;
    rpx__sys_put(obj, key, json_null());
    va_start(ap, fmt);
    vreason(obj, key, fmt, ap);
    va_end(ap);
}

void rpx__sys_reason(json_t *obj, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreason(obj, key, fmt, ap);
    va_end(ap);
}

void rpx__sys_finish(json_t *obj, int always)
{
    json_t *u;
    if (!obj) return;
    u = json_object_get(obj, "unavailable");
    if (u) {
        json_incref(u);
        json_object_del(obj, "unavailable");
        json_object_set_new(obj, "unavailable", u);
    } else if (always) {
        json_object_set_new(obj, "unavailable", json_object());
    }
}

void rpx__sys_warn(json_t *warnings, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    size_t i;
    if (!warnings) return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (i = 0; i < json_array_size(warnings); i++) {
        const char *w = json_string_value(json_array_get(warnings, i));
        if (w && strcmp(w, msg) == 0) return;
    }
    json_array_append_new(warnings, rpx__sys_jstr(msg));
}
