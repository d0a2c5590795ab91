/* kv.c — owns a kind's options as name = value pairs (kv.h): written from a
 * struct through a table of fields, read back by name with typed getters,
 * an unknown name or a value of the wrong type refused by name. */
#include "loader/kv.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

#define AT(base, off, type) ((type *)(void *)((char *)(base) + (off)))
#define CAT(base, off, type) ((const type *)(const void *)((const char *)(base) + (off)))

static rpx_kv_type kv_type_of(rpx_kv_field_type t)
{
    return t == RPX_KVF_TEXT || t == RPX_KVF_TEXTS ? RPX_KV_TEXT
         : t == RPX_KVF_DOUBLE                    ? RPX_KV_NUMBER
                                                  : RPX_KV_INTEGER;
}

int rpx__kv_write(const rpx_kv_field *fields, size_t n_fields, const void *src,
                  rpx_kv_list *out)
{
    size_t i, j, cap = 0, n = 0;
    rpx_kv *items;
    for (i = 0; i < n_fields; i++)
        cap += fields[i].type == RPX_KVF_TEXTS ? *CAT(src, fields[i].count_at, size_t) : 1;
    out->items = NULL;
    out->n = 0;
    if (!(items = calloc(cap ? cap : 1, sizeof *items))) return -1;
    for (i = 0; i < n_fields; i++) {
        const rpx_kv_field *f = &fields[i];
        rpx_kv kv = {f->name, kv_type_of(f->type), NULL, 0, 0};
        switch (f->type) {
        case RPX_KVF_TEXT:
            if (!(kv.text = *CAT(src, f->offset, char *))) continue;
            break;
        case RPX_KVF_DOUBLE:
            if ((kv.number = *CAT(src, f->offset, double)) == 0) continue;
            break;
        case RPX_KVF_LONG:
            if ((kv.integer = *CAT(src, f->offset, long)) == 0) continue;
            break;
        case RPX_KVF_INT:
            if ((kv.integer = *CAT(src, f->offset, int)) == 0) continue;
            break;
        case RPX_KVF_ULL:
            if ((kv.integer = (long long)*CAT(src, f->offset, unsigned long long)) == 0) continue;
            break;
        case RPX_KVF_TEXTS: {
            const char *const *list = *CAT(src, f->offset, char *const *);
            size_t count = *CAT(src, f->count_at, size_t);
            for (j = 0; list && j < count; j++) {
                kv.text = list[j];
                items[n++] = kv;
            }
            continue;
        }
        }
        items[n++] = kv;
    }
    out->items = items;
    out->n = n;
    return 0;
}

static const rpx_kv_field *field_named(const rpx_kv_field *fields, size_t n, const char *name)
{
    size_t i;
    for (i = 0; name && i < n; i++)
        if (strcmp(fields[i].name, name) == 0) return &fields[i];
    return NULL;
}

static int unknown(const rpx_kv_field *fields, size_t n_fields, const char *who, const char *name,
                   rpx_error *err)
{
    rpx_strbuf names = {0};
    size_t i;
    int rc;
    for (i = 0; i < n_fields; i++) rpx__sb_printf(&names, "%s%s", i ? ", " : "", fields[i].name);
    rc = rpx_error_set(err, RPX_EINVAL, "%s: no option '%s'%s%s; this rpxprof and its plugin "
                       "are from different builds, or the option is misspelt",
                       who, name ? name : "(null)", n_fields ? "; it takes " : "",
                       names.p ? names.p : "");
    free(names.p);
    return rc;
}

int rpx__kv_read(const rpx_kv_field *fields, size_t n_fields, const char *who,
                 const rpx_kv_list *kv, void *dst, size_t dst_size, rpx_error *err)
{
    size_t i;
    memset(dst, 0, dst_size);
    for (i = 0; kv && i < kv->n; i++) {
        const rpx_kv *p = &kv->items[i];
        const rpx_kv_field *f = field_named(fields, n_fields, p->name);
        if (!f) return unknown(fields, n_fields, who, p->name, err);
        if (p->type != kv_type_of(f->type))
            return rpx_error_set(err, RPX_EINVAL, "%s: option '%s' takes %s", who, p->name,
                                 kv_type_of(f->type) == RPX_KV_TEXT     ? "a text"
                                 : kv_type_of(f->type) == RPX_KV_NUMBER ? "a number"
                                                                        : "a whole number");
        switch (f->type) {
        case RPX_KVF_TEXT: *AT(dst, f->offset, const char *) = p->text; break;
        case RPX_KVF_DOUBLE: *AT(dst, f->offset, double) = p->number; break;
        case RPX_KVF_LONG: *AT(dst, f->offset, long) = (long)p->integer; break;
        case RPX_KVF_INT: *AT(dst, f->offset, int) = (int)p->integer; break;
        case RPX_KVF_ULL: *AT(dst, f->offset, unsigned long long) = (unsigned long long)p->integer; break;
        case RPX_KVF_TEXTS: {
            const char ***list = AT(dst, f->offset, const char **);
            size_t *count = AT(dst, f->count_at, size_t);
            const char **grown = realloc(*list, (*count + 1) * sizeof *grown);
            if (!grown) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
            grown[(*count)++] = p->text;
            *list = grown;
            break;
        }
        }
    }
    return 0;
}

static const rpx_kv *last_named(const rpx_kv_list *kv, const char *name, rpx_kv_type type)
{
    size_t i;
    for (i = kv ? kv->n : 0; i > 0; i--)
        if (strcmp(kv->items[i - 1].name, name) == 0)
            return kv->items[i - 1].type == type ? &kv->items[i - 1] : NULL;
    return NULL;
}

int rpx__kv_text(const rpx_kv_list *kv, const char *name, const char **out)
{
    const rpx_kv *p = last_named(kv, name, RPX_KV_TEXT);
    if (p) *out = p->text;
    return p != NULL;
}

int rpx__kv_number(const rpx_kv_list *kv, const char *name, double *out)
{
    const rpx_kv *p = last_named(kv, name, RPX_KV_NUMBER);
    if (p) *out = p->number;
    return p != NULL;
}

int rpx__kv_integer(const rpx_kv_list *kv, const char *name, long long *out)
{
    const rpx_kv *p = last_named(kv, name, RPX_KV_INTEGER);
    if (p) *out = p->integer;
    return p != NULL;
}
