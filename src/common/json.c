/* json.c — owns serialising jansson trees: shortest round-trip reals,
 * locale-independent, NaN/Inf as null, readable layout. */
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/output.h"
#include "rpxprof/error.h"
#include "common/json.h"

typedef rpx_strbuf buf;
#define put rpx__sb_add
#define puts_ rpx__sb_str

/* The text being made, and where it goes: all in memory (o NULL), or to an
 * output in pieces; the lazy arrays' table (may be NULL). */
typedef struct dumper {
    buf b;
    rpx_output *o;
    rpx_error *err;
    int werr;                     /* a write failed: err says why */
    const rpx_json_lazy *z;
} dumper;

#define RPX_JSON_PIECE (1u << 20)

static void flush_piece(dumper *d, int all)
{
    if (!d->o || d->werr || d->b.oom || (!all && d->b.len < RPX_JSON_PIECE)) return;
    if (d->b.len && rpx_output_write(d->o, d->b.p, d->b.len, d->err) != 0) d->werr = 1;
    d->b.len = 0;
    if (d->b.p) d->b.p[0] = '\0';
}

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

/* The lazy entry a placeholder stands for, or NULL */
static const rpx_json_lazy_entry *lazy_of(const rpx_json_lazy *z, const json_t *v)
{
    const char *s;
    size_t t, k;
    if (!z || !json_is_string(v)) return NULL;
    s = json_string_value(v);
    t = strlen(z->tag);
    if (strncmp(s, z->tag, t) != 0) return NULL;
    k = (size_t)strtoul(s + t, NULL, 10);
    return k < z->n ? &z->e[k] : NULL;
}

static void dump(dumper *d, const json_t *v, int level);

static void dump_lazy(dumper *d, const rpx_json_lazy_entry *e, int level)
{
    size_t i;
    if (e->n == 0) {
        puts_(&d->b, "[]");
        return;
    }
    puts_(&d->b, "[");
    for (i = 0; i < e->n && !d->werr; i++) {
        json_t *x = e->get(e, i);
        if (i) puts_(&d->b, ", ");
        if (x) dump(d, x, level + 1);
        else puts_(&d->b, "null");
        json_decref(x);
        flush_piece(d, 0);
    }
    puts_(&d->b, "]");
}

static void dump(dumper *d, const json_t *v, int level)
{
    buf *b = &d->b;
    const rpx_json_lazy_entry *e;
    if (json_is_real(v)) {
        put_real(b, json_real_value(v));
    } else if ((e = lazy_of(d->z, v)) != NULL) {
        dump_lazy(d, e, level);
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
            dump(d, val, level + 1);
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
            dump(d, json_array_get(v, i), level + 1);
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
    dumper d;
    if (!value) return NULL;
    memset(&d, 0, sizeof d);
    dump(&d, value, 0);
    if (d.b.oom) {
        free(d.b.p);
        return NULL;
    }
    return d.b.p;
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

/* ---- lazy arrays ---- */

void rpx_json_lazy_init(rpx_json_lazy *z)
{
    static unsigned long serial;
    struct timespec ts;
    memset(z, 0, sizeof *z);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    /* a control character no report string holds unescaped by chance, and a
     * value unique to this table */
    snprintf(z->tag, sizeof z->tag, "\001rpx-lazy-%lx-%lx-%lx-", (unsigned long)getpid(),
             (unsigned long)ts.tv_nsec ^ (unsigned long)(uintptr_t)z, ++serial);
}

void rpx_json_lazy_free(rpx_json_lazy *z)
{
    size_t i;
    if (!z) return;
    for (i = 0; i < z->n; i++) {
        if (z->e[i].drop) z->e[i].drop(z->e[i].b);
        else free(z->e[i].b);
    }
    z->n = 0;
}

static json_t *make_array(const rpx_json_lazy_entry *e)
{
    json_t *a = json_array();
    size_t i;
    for (i = 0; a && i < e->n; i++) {
        json_t *x = e->get(e, i);
        if (json_array_append_new(a, x ? x : json_null()) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *rpx_json_lazy_array(rpx_json_lazy *z, size_t n, rpx_json_lazy_get get, const void *a,
                            void *b, size_t k, void (*drop)(void *b))
{
    rpx_json_lazy_entry e = {n, get, a, b, k, drop};
    char ph[80];
    json_t *v;
    if (!z || z->n >= RPX_JSON_LAZY_MAX) { /* at once */
        v = make_array(&e);
        if (drop) drop(b);
        else free(b);
        return v;
    }
    snprintf(ph, sizeof ph, "%s%zu", z->tag, z->n);
    z->e[z->n++] = e;
    return json_string(ph);
}

int rpx_json_write_output_lazy(rpx_output *o, const json_t *value, const rpx_json_lazy *z,
                               rpx_error *err)
{
    dumper d;
    memset(&d, 0, sizeof d);
    d.o = o;
    d.err = err;
    d.z = z;
    dump(&d, value, 0);
    put(&d.b, "\n", 1);
    flush_piece(&d, 1);
    free(d.b.p);
    if (d.b.oom && !d.werr) {
        rpx_error_set(err, RPX_ENOMEM, "%s: out of memory serialising JSON", rpx_output_path(o));
        d.werr = 1;
    }
    if (d.werr) {
        rpx_output_discard(o);
        return err && err->code ? err->code : RPX_EIO;
    }
    return rpx_output_commit(o, "", 0, err);
}

/* Each placeholder of z in `value` replaced by fill(entry) (NULL: null) */
static int lazy_replace(json_t *value, const rpx_json_lazy *z, int materialise)
{
    int rc = 0;
    if (json_is_object(value)) {
        const char *key;
        json_t *val;
        void *tmp;
        json_object_foreach_safe(value, tmp, key, val) {
            const rpx_json_lazy_entry *e = lazy_of(z, val);
            if (e) {
                json_t *a = materialise ? make_array(e) : NULL;
                if (materialise && !a) rc = -1;
                json_object_set_new(value, key, a ? a : json_null());
            } else if (lazy_replace(val, z, materialise) != 0) {
                rc = -1;
            }
        }
    } else if (json_is_array(value)) {
        size_t i;
        for (i = 0; i < json_array_size(value); i++) {
            json_t *val = json_array_get(value, i);
            const rpx_json_lazy_entry *e = lazy_of(z, val);
            if (e) {
                json_t *a = materialise ? make_array(e) : NULL;
                if (materialise && !a) rc = -1;
                json_array_set_new(value, i, a ? a : json_null());
            } else if (lazy_replace(val, z, materialise) != 0) {
                rc = -1;
            }
        }
    }
    return rc;
}

int rpx_json_lazy_materialise(json_t *value, const rpx_json_lazy *z)
{
    return z && z->n ? lazy_replace(value, z, 1) : 0;
}

void rpx_json_lazy_drop(json_t *value, const rpx_json_lazy *z)
{
    if (z && z->n) (void)lazy_replace(value, z, 0);
}
