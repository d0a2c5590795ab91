/* point_inputs.c — owns the inputs a sweep makes for each point
 * (docs/sweep.md, "Inputs per point"): arrays made as `rpxprof inputs make`
 * makes them (rpx_npz_maker: the same specs and seed give the same bytes)
 * from --make specs whose shapes may name symbols (1xheightx640x3), the
 * varied shape of one array, the batch as the leading dimension, and the
 * other arrays of --inputs copied (their leading dimension tiled to the
 * batch when the batch is varied). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/npz.h"
#include "sweep/point_inputs.h"

#define MAX_SPECS 64

typedef struct spec {
    char name[128], shape[512], dtype[32], fill[64];
    int has_dtype, has_fill;
} spec;

/* NAME=SHAPE[:DTYPE[=FILL]] into s; RPX_EINVAL with the fix. */
static int spec_parse(const char *text, spec *s, rpx_error *err)
{
    const char *eq = strchr(text, '='), *colon;
    memset(s, 0, sizeof *s);
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof s->name)
        return rpx_error_set(err, RPX_EINVAL, "--make '%s': give NAME=SHAPE[:DTYPE[=FILL]] "
                             "(image=1xheightx640x3:float32=random)", text);
    snprintf(s->name, sizeof s->name, "%.*s", (int)(eq - text), text);
    colon = strchr(eq + 1, ':');
    snprintf(s->shape, sizeof s->shape, "%.*s", (int)(colon ? colon - eq - 1 : (long)strlen(eq + 1)),
             eq + 1);
    if (colon) {
        const char *e2 = strchr(colon + 1, '=');
        s->has_dtype = 1;
        snprintf(s->dtype, sizeof s->dtype, "%.*s",
                 (int)(e2 ? e2 - colon - 1 : (long)strlen(colon + 1)), colon + 1);
        if (e2) s->has_fill = 1, snprintf(s->fill, sizeof s->fill, "%s", e2 + 1);
    }
    return 0;
}

static int is_number(const char *t)
{
    if (!*t) return 0;
    for (; *t; t++)
        if (*t < '0' || *t > '9') return 0;
    return 1;
}

/* The shape with its symbols bound: each 'x'-separated token a number or a
 * symbol of p; the batch in place of the token `batch_dim`, or of the first
 * dimension when no token names it. */
static int bind_shape(const char *what, const char *shape, const rpx_sweep_inputs_point *p,
                      char *out, size_t size, rpx_error *err)
{
    char buf[512], *tok, *save = NULL;
    size_t len = 0, k;
    int first = 1, batch_named = 0;
    snprintf(buf, sizeof buf, "%s", shape);
    out[0] = '\0';
    for (tok = strtok_r(buf, "x", &save); tok; tok = strtok_r(NULL, "x", &save)) {
        long v = -1;
        if (is_number(tok)) v = strtol(tok, NULL, 10);
        for (k = 0; v < 0 && k < p->n_syms; k++)
            if (strcmp(tok, p->sym_names[k]) == 0) v = p->sym_values[k];
        if (v < 0 && p->batch > 0 && p->batch_dim && strcmp(tok, p->batch_dim) == 0)
            v = p->batch, batch_named = 1;
        if (v < 0)
            return rpx_error_set(err, RPX_EINVAL, "%s: the dimension '%s' is neither a number nor "
                                 "a varied dimension; vary it with --vary dim:%s=... or give a "
                                 "number", what, tok, tok);
        len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%ld", first ? "" : "x", v);
        first = 0;
    }
    if (len >= size) return rpx_error_set(err, RPX_EINVAL, "%s: shape too long", what);
    if (first) return rpx_error_set(err, RPX_EINVAL, "%s: no shape", what);
    if (p->batch > 0 && !batch_named) { /* the batch is the leading dimension */
        const char *x = strchr(out, 'x');
        char rest[512];
        int w;
        snprintf(rest, sizeof rest, "%s", x ? x : "");
        w = snprintf(out, size, "%ld", p->batch);
        if (w < 0 || (size_t)w + strlen(rest) >= size)
            return rpx_error_set(err, RPX_EINVAL, "%s: shape too long", what);
        memcpy(out + w, rest, strlen(rest) + 1);
    }
    return 0;
}

static const rpx_tensor *base_array(const rpx_npz *base, const char *name)
{
    return base ? rpx_inputs_find(rpx_npz_inputs(base), name) : NULL;
}

/* The made specs: --make's, and the varied array's (its dtype and fill from
 * its --make spec, else --inputs, else float32 random). */
typedef char spec_text[768];
typedef char spec_name[128];

static int made_specs(const rpx_sweep_inputs_point *p, spec_text *specs, spec_name *names,
                      size_t *n, rpx_error *err)
{
    size_t i;
    int rc, varied_done = 0;
    *n = 0;
    for (i = 0; i < p->n_make && *n < MAX_SPECS; i++) {
        spec s;
        char shape[512];
        const rpx_tensor *t;
        if ((rc = spec_parse(p->make[i], &s, err)) != 0) return rc;
        t = base_array(p->base, s.name);
        if (p->shape_name && strcmp(p->shape_name, s.name) == 0) {
            snprintf(s.shape, sizeof s.shape, "%s", p->shape_value);
            varied_done = 1;
        }
        if ((rc = bind_shape(p->make[i], s.shape, p, shape, sizeof shape, err)) != 0) return rc;
        snprintf(specs[*n], 768, "%s=%s:%s=%s", s.name, shape,
                 s.has_dtype ? s.dtype : t ? rpx_dtype_name(t->dtype) : "float32",
                 s.has_fill ? s.fill : "random");
        snprintf(names[(*n)++], 128, "%s", s.name);
    }
    if (p->shape_name && !varied_done && *n < MAX_SPECS) {
        const rpx_tensor *t = base_array(p->base, p->shape_name);
        char shape[512];
        if ((rc = bind_shape(p->shape_name, p->shape_value, p, shape, sizeof shape, err)) != 0)
            return rc;
        snprintf(specs[*n], 768, "%s=%s:%s=random", p->shape_name, shape,
                 t ? rpx_dtype_name(t->dtype) : "float32");
        snprintf(names[(*n)++], 128, "%s", p->shape_name);
    }
    return 0;
}

/* An array of --inputs with its leading dimension tiled to `batch` (0: as it is). */
static int add_copied(rpx_npz_writer *w, const rpx_tensor *t, long batch, void **keep,
                      rpx_error *err)
{
    int64_t shape[RPX_MAX_DIMS];
    size_t row, total, i;
    unsigned char *d;
    memcpy(shape, t->shape, sizeof shape);
    if (batch <= 0 || t->ndim < 1 || t->shape[0] < 1)
        return rpx_npz_writer_add(w, t->name, t->dtype, t->ndim, t->shape, t->data, err);
    row = t->nbytes / (size_t)t->shape[0];
    shape[0] = batch;
    total = row * (size_t)batch;
    if (!(d = malloc(total ? total : 1))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < (size_t)batch; i++) /* the rows repeated in turn */
        memcpy(d + i * row, (const unsigned char *)t->data + (i % (size_t)t->shape[0]) * row, row);
    *keep = d;
    return rpx_npz_writer_add(w, t->name, t->dtype, t->ndim, shape, d, err);
}

int rpx_sweep_make_inputs(const rpx_sweep_inputs_point *p, const char *path, rpx_error *err)
{
    spec_text *specs = calloc(MAX_SPECS, sizeof *specs);
    spec_name *names = calloc(MAX_SPECS, sizeof *names);
    char tmp[4200];
    size_t n = 0, i, j, nb = p->base ? rpx_npz_inputs(p->base)->count : 0;
    rpx_npz_maker *m = NULL;
    rpx_npz *made = NULL;
    rpx_npz_writer *w = NULL;
    void *keep[MAX_SPECS * 2];
    size_t nkeep = 0;
    int rc;
    memset(keep, 0, sizeof keep);
    if (!specs || !names) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = made_specs(p, specs, names, &n, err)) != 0) goto out;
    snprintf(tmp, sizeof tmp, "%s.made-%ld.npz", path, (long)getpid());
    if (n) {
        if ((rc = rpx_npz_maker_create(p->seed, &m)) != 0) {
            rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
            goto out;
        }
        for (i = 0; i < n; i++)
            if ((rc = rpx_npz_maker_add(m, specs[i], err)) != 0) goto out;
        if ((rc = rpx_npz_maker_write(m, tmp, 0, err)) != 0) goto out;
        if ((rc = rpx_npz_load(tmp, &made, err)) != 0) goto out;
    }
    if ((rc = rpx_npz_writer_open(path, 0, &w, err)) != 0) goto out;
    for (i = 0; i < nb; i++) { /* --inputs's order: made ones in their place */
        const rpx_tensor *t = &rpx_npz_inputs(p->base)->tensors[i];
        const rpx_tensor *mt = made ? rpx_inputs_find(rpx_npz_inputs(made), t->name) : NULL;
        if (mt) rc = rpx_npz_writer_add(w, mt->name, mt->dtype, mt->ndim, mt->shape, mt->data, err);
        else rc = add_copied(w, t, p->batch, &keep[nkeep++], err);
        if (rc != 0) goto out;
    }
    for (j = 0; j < n; j++) { /* then the made ones --inputs does not hold */
        const rpx_tensor *mt = rpx_inputs_find(rpx_npz_inputs(made), names[j]);
        if (base_array(p->base, names[j]) || !mt) continue;
        if ((rc = rpx_npz_writer_add(w, mt->name, mt->dtype, mt->ndim, mt->shape, mt->data, err)) != 0)
            goto out;
    }
    rc = rpx_npz_writer_close(w, err);
    w = NULL;
out:
    rpx_npz_writer_discard(w);
    rpx_npz_free(made);
    rpx_npz_maker_free(m);
    if (n) unlink(tmp);
    for (i = 0; i < nkeep; i++) free(keep[i]);
    free(specs);
    free(names);
    return rc;
}
