/* base.c — the cost layer's small tools: the arena, the name map, the ONNX
 * data-type table, and the error and warning helpers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost_internal.h"

/* ---- arena ---------------------------------------------------------- */
struct rpx__block {
    struct rpx__block *next;
    size_t used, cap;
    max_align_t data[];
};

void *rpx__alloc(rpx__arena *a, size_t size)
{
    struct rpx__block *b = a->head;
    size_t align = sizeof(max_align_t);
    size = (size + align - 1) / align * align;
    if (size == 0) size = align;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    {
        char *p = (char *)b->data + b->used;
        b->used += size;
        memset(p, 0, size);
        return p;
    }
}

char *rpx__strndup(rpx__arena *a, const char *s, size_t n)
{
    char *p = rpx__alloc(a, n + 1);
    if (p && n) memcpy(p, s, n);
    return p;
}

void rpx__arena_free(rpx__arena *a)
{
    struct rpx__block *b = a->head;
    while (b) {
        struct rpx__block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

/* ---- map: open addressing, FNV-1a ------------------------------------ */
static size_t hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static int grow(rpx__map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64, i;
    const char **keys = calloc(cap, sizeof *keys);
    int *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (i = 0; i < m->cap; i++) {
        size_t j;
        if (!m->keys[i]) continue;
        for (j = hash(m->keys[i]) & (cap - 1); keys[j]; j = (j + 1) & (cap - 1)) {}
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int rpx__map_put(rpx__map *m, const char *key, int val)
{
    size_t j;
    if ((m->len + 1) * 2 > m->cap && grow(m) < 0) return -1;
    for (j = hash(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (strcmp(m->keys[j], key) == 0) return 1;
    m->keys[j] = key;
    m->vals[j] = val;
    m->len++;
    return 0;
}

int rpx__map_get(const rpx__map *m, const char *key)
{
    size_t j;
    if (!m->cap) return -1;
    for (j = hash(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (strcmp(m->keys[j], key) == 0) return m->vals[j];
    return -1;
}

void rpx__map_free(rpx__map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- data types ------------------------------------------------------ */
static const struct {
    const char *name;
    int bits, is_float, is_int;
} dtypes[RPX__T_COUNT] = {
    [RPX__T_UNDEFINED] = {"undefined", 0, 0, 0},
    [RPX__T_FLOAT] = {"float32", 32, 1, 0},
    [RPX__T_UINT8] = {"uint8", 8, 0, 1},
    [RPX__T_INT8] = {"int8", 8, 0, 1},
    [RPX__T_UINT16] = {"uint16", 16, 0, 1},
    [RPX__T_INT16] = {"int16", 16, 0, 1},
    [RPX__T_INT32] = {"int32", 32, 0, 1},
    [RPX__T_INT64] = {"int64", 64, 0, 1},
    [RPX__T_STRING] = {"string", 0, 0, 0},
    [RPX__T_BOOL] = {"bool", 8, 0, 1},
    [RPX__T_FLOAT16] = {"float16", 16, 1, 0},
    [RPX__T_DOUBLE] = {"float64", 64, 1, 0},
    [RPX__T_UINT32] = {"uint32", 32, 0, 1},
    [RPX__T_UINT64] = {"uint64", 64, 0, 1},
    [RPX__T_COMPLEX64] = {"complex64", 64, 1, 0},
    [RPX__T_COMPLEX128] = {"complex128", 128, 1, 0},
    [RPX__T_BFLOAT16] = {"bfloat16", 16, 1, 0},
    [RPX__T_F8E4M3FN] = {"float8e4m3fn", 8, 1, 0},
    [RPX__T_F8E4M3FNUZ] = {"float8e4m3fnuz", 8, 1, 0},
    [RPX__T_F8E5M2] = {"float8e5m2", 8, 1, 0},
    [RPX__T_F8E5M2FNUZ] = {"float8e5m2fnuz", 8, 1, 0},
    [RPX__T_UINT4] = {"uint4", 4, 0, 1},
    [RPX__T_INT4] = {"int4", 4, 0, 1},
    [RPX__T_FLOAT4E2M1] = {"float4e2m1", 4, 1, 0},
};

int rpx__dtype_bits(int dtype)
{
    return dtype > 0 && dtype < RPX__T_COUNT ? dtypes[dtype].bits : 0;
}

const char *rpx__dtype_name(int dtype)
{
    return dtype > 0 && dtype < RPX__T_COUNT ? dtypes[dtype].name : "undefined";
}

int rpx__dtype_is_float(int dtype)
{
    return dtype > 0 && dtype < RPX__T_COUNT && dtypes[dtype].is_float;
}

int rpx__dtype_is_int(int dtype)
{
    return dtype > 0 && dtype < RPX__T_COUNT && dtypes[dtype].is_int;
}

/* ---- errors and warnings --------------------------------------------- */
int rpx__fail(rpx__ctx *c, int code, const char *fmt, ...)
{
    char msg[RPX_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->err && c->err->code == 0) rpx_error_set(c->err, code, "%s: %s", c->path, msg);
    return code;
}

int rpx__node_fail(rpx__ctx *c, const rpx__node *n, int code, const char *fmt, ...)
{
    char msg[RPX_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n->graph > 0) { /* inside an If/Loop/Scan body: say which */
        const rpx__node *owner = &c->nodes[c->graphs[n->graph].owner];
        return rpx__fail(c, code, "node '%s' (%s) in a subgraph of node '%s' (%s): %s", n->name,
                         n->op, owner->name, owner->op, msg);
    }
    return rpx__fail(c, code, "node '%s' (%s): %s", n->name, n->op, msg);
}

const char *rpx__fmt(rpx__ctx *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    int len;
    va_start(ap, fmt);
    len = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (len < 0) return "";
    if ((size_t)len >= sizeof msg) len = (int)sizeof msg - 1;
    {
        char *p = rpx__strndup(&c->arena, msg, (size_t)len);
        return p ? p : "(out of memory)";
    }
}

void rpx__warn(rpx__ctx *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    int len;
    char *p;
    if (c->n_warnings >= 1000) return; /* enough to see the pattern */
    va_start(ap, fmt);
    len = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (len < 0) return;
    if ((size_t)len >= sizeof msg) len = (int)sizeof msg - 1;
    if (c->n_warnings == c->cap_warnings) {
        size_t cap = c->cap_warnings ? c->cap_warnings * 2 : 16;
        rpx__warning *w = realloc(c->warnings, cap * sizeof *w);
        if (!w) return;
        c->warnings = w;
        c->cap_warnings = cap;
    }
    p = rpx__strndup(&c->arena, msg, (size_t)len);
    if (p) c->warnings[c->n_warnings++].text = p;
}
