/* json_keys.c — owns reading the JSON files users write: missing files and
 * folders named as such, unknown keys refused with the nearest valid name,
 * and the type names of "expected X, got Y" messages (json_keys.h). */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json_keys.h"
#include "common/user_file.h"

#define MAX_KEY 255

size_t rpx_json_key_distance(const char *a, const char *b)
{
    /* three rows of the optimal-string-alignment table */
    size_t rows[3][MAX_KEY + 1];
    size_t la = strlen(a), lb = strlen(b), i, j;
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    if (la > MAX_KEY || lb > MAX_KEY) return SIZE_MAX;
    for (j = 0; j <= lb; j++) prev[j] = j;
    for (i = 1; i <= la; i++) {
        int ca = tolower((unsigned char)a[i - 1]);
        size_t *t;
        cur[0] = i;
        for (j = 1; j <= lb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ca != cb);           /* substitute (or keep) */
            if (prev[j] + 1 < best) best = prev[j] + 1;       /* delete */
            if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1; /* insert */
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1; /* transpose */
            cur[j] = best;
        }
        t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

const char *rpx_json_nearest_key(const char *key, const char *const *allowed, size_t n)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX, i, lk = strlen(key);
    for (i = 0; i < n; i++) {
        size_t d = rpx_json_key_distance(key, allowed[i]), la = strlen(allowed[i]);
        size_t shorter = lk < la ? lk : la, limit;
        if (d == SIZE_MAX) continue;
        /* one edit in four characters, at least one and at most three, and
         * never so many that the two share almost nothing */
        limit = (la > lk ? la : lk) / 4;
        if (limit < 1) limit = 1;
        if (limit > 3) limit = 3;
        if (d > limit || (d >= shorter && d > 0)) continue;
        if (d < best_d) {
            best = allowed[i];
            best_d = d;
        }
    }
    return best;
}

int rpx_json_check_keys(const json_t *o, const char *const *allowed, size_t n,
                        const char *origin, const char *where, rpx_error *err)
{
    const char *key;
    json_t *v;
    char place[320];
    if (!json_is_object(o)) return 0;
    if (where && *where)
        snprintf(place, sizeof place, "in %s", where);
    else
        snprintf(place, sizeof place, "at the top level");
    json_object_foreach((json_t *)o, key, v) {
        const char *near;
        char list[1024];
        size_t i, len = 0;
        for (i = 0; i < n; i++)
            if (strcmp(key, allowed[i]) == 0) break;
        if (i < n) continue;
        near = rpx_json_nearest_key(key, allowed, n);
        if (near)
            return rpx_error_set(err, RPX_EFORMAT, "%s: unknown key '%s' %s; did you mean '%s'?",
                                 origin, key, place, near);
        list[0] = '\0';
        for (i = 0; i < n && len < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                                    allowed[i]);
        return rpx_error_set(err, RPX_EFORMAT,
                             "%s: unknown key '%s' %s; the keys allowed there are: %s", origin,
                             key, place, list);
    }
    return 0;
}

const char *rpx_json_type_name(const json_t *v)
{
    if (!v) return "nothing";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "something else";
}

int rpx_user_file_check(const char *path, const char *what, rpx_error *err)
{
    struct stat st;
    if (!what) what = "a file";
    if (!path || !*path)
        return rpx_error_set(err, RPX_EINVAL, "no file named; give the path of %s", what);
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return rpx_error_set(err, RPX_EIO,
                                 "%s: the file does not exist; give the path of %s", path, what);
        return rpx_error_set(err, RPX_EIO, "%s: cannot read it (%s); give a readable file", path,
                             strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return rpx_error_set(err, RPX_EIO, "%s: is a folder, not a file; give the path of %s",
                             path, what);
    return rpx__user_file_regular(path, NULL, err); /* a FIFO would block the read */
}

int rpx_json_load_user_file(const char *path, size_t flags, const char *what, json_t **out,
                            rpx_error *err)
{
    json_error_t je;
    FILE *f;
    int rc;
    if (!out) return rpx_error_set(err, RPX_EINVAL, "rpx_json_load_user_file: no output given");
    *out = NULL;
    if (!what) what = "a JSON file";
    if ((rc = rpx_user_file_check(path, what, err)) != 0) return rc;
    f = fopen(path, "rb");
    if (!f)
        return rpx_error_set(err, RPX_EIO, "%s: cannot read it (%s); give a readable file", path,
                             strerror(errno));
    *out = json_loadf(f, flags, &je);
    fclose(f);
    if (!*out)
        return rpx_error_set(err, RPX_EFORMAT, "%s: line %d, column %d: %s; fix the JSON syntax",
                             path, je.line, je.column, je.text);
    return 0;
}
