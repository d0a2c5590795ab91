/* json.c — owns serialising jansson trees: shortest round-trip reals,
 * locale-independent, NaN/Inf as null, readable layout. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/output.h"
#include "rpxprof/error.h"
#include "common/json.h"

typedef rpx_strbuf buf;
#define put rpx__sb_add
#define puts_ rpx__sb_str

static void indent(buf *b, int level)
{
    int i;
    put(b, "\n", 1);
    for (i = 0; i < level; i++) put(b, "  ", 2);
}

/* Shortest round-trip form, locale-independent; NaN and infinity are null. */
static void put_real(buf *b, double v)
{
    char s[40];
    if (!isfinite(v)) {
        puts_(b, "null");
        return;
    }
    rpx__fmt_shortest(s, sizeof s, v);
    if (!strpbrk(s, ".eEn")) strcat(s, ".0"); /* keep reals recognisable as reals */
    puts_(b, s);
}

static int is_scalar(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

static void dump(buf *b, const json_t *v, int level)
{
    if (json_is_real(v)) {
        put_real(b, json_real_value(v));
    } else if (json_is_object(v)) {
        const char *key;
        json_t *val;
        int first = 1;
        if (json_object_size(v) == 0) {
            puts_(b, "{}");
            return;
        }
        puts_(b, "{");
        json_object_foreach((json_t *)v, key, val) {
            json_t *k = json_string(key);
            char *ks = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
            if (!first) puts_(b, ",");
            first = 0;
            indent(b, level + 1);
            if (ks) puts_(b, ks);
            else b->oom = 1;
            puts_(b, ": ");
            free(ks);
            json_decref(k);
            dump(b, val, level + 1);
        }
        indent(b, level);
        puts_(b, "}");
    } else if (json_is_array(v)) {
        size_t i, n = json_array_size(v);
        int flat = 1;
        for (i = 0; i < n && flat; i++) flat = is_scalar(json_array_get(v, i));
        if (n == 0) {
            puts_(b, "[]");
            return;
        }
        puts_(b, "[");
        for (i = 0; i < n; i++) {
            if (i) puts_(b, flat ? ", " : ",");
            if (!flat) indent(b, level + 1);
            dump(b, json_array_get(v, i), level + 1);
        }
        if (!flat) indent(b, level);
        puts_(b, "]");
    } else {
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        if (!s) {
            b->oom = 1;
            return;
        }
        puts_(b, s);
        free(s);
    }
}

char *rpx_json_dumps(const json_t *value)
{
    buf b = {0};
    if (!value) return NULL;
    dump(&b, value, 0);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* value + "\n", malloc'ed; NULL out of memory. */
static char *dumps_line(const json_t *value, size_t *len)
{
    char *s = rpx_json_dumps(value), *t;
    size_t n;
    if (!s) return NULL;
    n = strlen(s);
    t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    *len = n + 1;
    return t;
}

int rpx_json_write_file(const char *path, const json_t *value, rpx_error *err)
{
    size_t n = 0;
    char *s = dumps_line(value, &n);
    int rc;
    if (!s) return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory serialising JSON", path);
    rc = rpx_write_file_atomic(path, s, n, err);
    free(s);
    return rc;
}

int rpx_json_write_output(rpx_output *o, const json_t *value, rpx_error *err)
{
    size_t n = 0;
    char *s = dumps_line(value, &n);
    int rc;
    if (!s) {
        rc = rpx_error_set(err, RPX_ENOMEM, "%s: out of memory serialising JSON",
                           rpx_output_path(o));
        rpx_output_discard(o);
        return rc;
    }
    rc = rpx_output_commit(o, s, n, err);
    free(s);
    return rc;
}

json_t *rpx_json_real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *rpx_json_mib_or_null(int64_t bytes)
{
    return bytes < 0 ? json_null() : json_real((double)bytes / 1048576.0);
}
