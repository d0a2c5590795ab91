/* npz_make.c — owns making NPZ inputs without numpy (include/rpxprof/npz.h,
 * `rpxprof inputs make`): the NAME=SHAPE:DTYPE[=FILL] grammar, constant and
 * random fills (splitmix64 seeding xoshiro256**, the same bytes for the same
 * seed), float16 by rounding to nearest even, and the archive written through
 * rpx_npz_writer. Library code: errors go into rpx_error, nothing printed. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "rpxprof/npz.h"

/* ---- random numbers: splitmix64 seeding a xoshiro256** generator ---- */
typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* IEEE binary16 from a float, rounding to nearest even. */
static uint16_t float_to_half(float f)
{
    uint32_t x;
    uint32_t sign, exp, mant;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    exp = (x >> 23) & 0xffu;
    mant = x & 0x7fffffu;
    if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    if (exp > 142) return (uint16_t)(sign | 0x7c00u); /* overflow → inf */
    if (exp < 113) {                                  /* subnormal or zero */
        uint32_t shift, half, rem;
        if (exp < 102) return (uint16_t)sign;
        mant |= 0x800000u;
        shift = 126 - exp;
        half = mant >> shift;
        rem = mant & ((1u << shift) - 1);
        if (rem > (1u << (shift - 1)) || (rem == (1u << (shift - 1)) && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    {
        uint32_t h = sign | ((exp - 112) << 10) | (mant >> 13);
        uint32_t rem = mant & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
        return (uint16_t)h;
    }
}

typedef struct spec {
    char name[256];
    rpx_dtype dtype;
    int ndim;
    int64_t shape[RPX_MAX_DIMS];
    size_t count;
    void *data;
} spec;

struct rpx_npz_maker {
    rng r;
    spec *specs;
    size_t n, cap;
};

/* Strict base-10 parse of a whole string. 0 or -1. */
static int parse_long(const char *s, long *out)
{
    char *end;
    long v;
    if (!s || !*s) return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static int parse_shape(const char *s, size_t len, spec *sp)
{
    char buf[512], *tok, *save = NULL;
    size_t i, n = 0;
    if (len >= sizeof buf) return -1;
    /* the multiplication sign U+00D7 (UTF-8 C3 97) is read as 'x' */
    for (i = 0; i < len; i++) {
        if ((unsigned char)s[i] == 0xc3 && i + 1 < len && (unsigned char)s[i + 1] == 0x97) {
            buf[n++] = 'x';
            i++;
        } else {
            buf[n++] = s[i];
        }
    }
    buf[n] = '\0';
    len = n;
    sp->ndim = 0;
    sp->count = 1;
    if (strcmp(buf, "scalar") == 0 || buf[0] == '\0') return 0;
    if (buf[len - 1] == 'x' || buf[0] == 'x' || strstr(buf, "xx")) return -1;
    for (tok = strtok_r(buf, "x", &save); tok; tok = strtok_r(NULL, "x", &save)) {
        long d;
        if (sp->ndim >= RPX_MAX_DIMS || parse_long(tok, &d) || d < 0) return -1;
        sp->shape[sp->ndim++] = d;
        if (d && sp->count > SIZE_MAX / (size_t)d) return -2;
        sp->count *= (size_t)d;
    }
    return sp->ndim == 0 ? -1 : 0;
}

/* Fill element i of the array with a number, range-checked for integers. */
static int fill_value(spec *sp, const char *fill, rng *r)
{
    size_t i, n = sp->count, es = rpx_dtype_size(sp->dtype);
    int is_random = strcmp(fill, "random") == 0;
    double v = 0;
    char *end;
    long double lo = 0, hi = 0;
    int is_float = sp->dtype == RPX_DTYPE_FLOAT16 || sp->dtype == RPX_DTYPE_FLOAT32 ||
                   sp->dtype == RPX_DTYPE_FLOAT64;
    unsigned char pattern[8];
    if (n && es > SIZE_MAX / n) return -2;
    sp->data = calloc(n ? n : 1, es);
    if (!sp->data) return -3;
    if (!is_random) {
        errno = 0;
        v = strtod(fill, &end);
        if (!*fill || *end || errno == ERANGE) return -1;
        switch (sp->dtype) {
        case RPX_DTYPE_BOOL: lo = 0; hi = 1; break;
        case RPX_DTYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
        case RPX_DTYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
        case RPX_DTYPE_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
        case RPX_DTYPE_UINT8: lo = 0; hi = UINT8_MAX; break;
        case RPX_DTYPE_UINT16: lo = 0; hi = UINT16_MAX; break;
        case RPX_DTYPE_UINT32: lo = 0; hi = UINT32_MAX; break;
        default: break;
        }
        if (sp->dtype == RPX_DTYPE_INT64 || sp->dtype == RPX_DTYPE_UINT64) {
            /* beyond 2^53 a double is not exact: parse the text as an integer */
            errno = 0;
            if (sp->dtype == RPX_DTYPE_INT64) (void)strtoll(fill, &end, 10);
            else if (fill[0] != '-') (void)strtoull(fill, &end, 10);
            else end = (char *)fill;
            if (*end || errno == ERANGE) return -4;
        } else if (!is_float && (v != floor(v) || (long double)v < lo || (long double)v > hi)) {
            return -4;
        }
        /* integers beyond 2^53 are written from the text itself */
        switch (sp->dtype) {
        case RPX_DTYPE_BOOL: pattern[0] = v != 0; break;
        case RPX_DTYPE_INT8: { int8_t x = (int8_t)v; memcpy(pattern, &x, 1); } break;
        case RPX_DTYPE_UINT8: { uint8_t x = (uint8_t)v; memcpy(pattern, &x, 1); } break;
        case RPX_DTYPE_INT16: { int16_t x = (int16_t)v; memcpy(pattern, &x, 2); } break;
        case RPX_DTYPE_UINT16: { uint16_t x = (uint16_t)v; memcpy(pattern, &x, 2); } break;
        case RPX_DTYPE_INT32: { int32_t x = (int32_t)v; memcpy(pattern, &x, 4); } break;
        case RPX_DTYPE_UINT32: { uint32_t x = (uint32_t)v; memcpy(pattern, &x, 4); } break;
        case RPX_DTYPE_INT64: { int64_t x = strtoll(fill, NULL, 10); memcpy(pattern, &x, 8); } break;
        case RPX_DTYPE_UINT64: { uint64_t x = strtoull(fill, NULL, 10); memcpy(pattern, &x, 8); } break;
        case RPX_DTYPE_FLOAT16: { uint16_t x = float_to_half((float)v); memcpy(pattern, &x, 2); } break;
        case RPX_DTYPE_FLOAT32: { float x = (float)v; memcpy(pattern, &x, 4); } break;
        case RPX_DTYPE_FLOAT64: memcpy(pattern, &v, 8); break;
        }
        for (i = 0; i < n; i++) memcpy((char *)sp->data + i * es, pattern, es);
        return 0;
    }
    for (i = 0; i < n; i++) {
        uint64_t u = rng_next(r);
        double unit = (double)(u >> 11) * 0x1.0p-53; /* [0, 1) */
        char *dst = (char *)sp->data + i * es;
        switch (sp->dtype) {
        case RPX_DTYPE_BOOL: dst[0] = (char)(u >> 63); break;
        case RPX_DTYPE_FLOAT16: { uint16_t x = float_to_half((float)unit);
            if (x == 0x3c00u) x = 0x3bffu; /* rounding must not reach 1.0 */
            memcpy(dst, &x, 2); } break;
        case RPX_DTYPE_FLOAT32: { float x = (float)((u >> 40) * 0x1.0p-24); memcpy(dst, &x, 4); } break;
        case RPX_DTYPE_FLOAT64: memcpy(dst, &unit, 8); break;
        default: memcpy(dst, &u, es); break; /* low bytes: uniform over the dtype's range */
        }
    }
    return 0;
}

static int parse_spec(const char *arg, spec *sp, rng *r, rpx_error *err)
{
    const char *eq = strchr(arg, '='), *colon, *fill;
    char dtype[32];
    int rc;
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof sp->name)
        return rpx_error_set(err, RPX_EINVAL, "'%s': expected NAME=SHAPE:DTYPE[=FILL], e.g. rgb=480x640x3:uint8=128",
                            arg);
    snprintf(sp->name, sizeof sp->name, "%.*s", (int)(eq - arg), arg);
    colon = strchr(eq + 1, ':');
    if (!colon)
        return rpx_error_set(err, RPX_EINVAL, "'%s': missing ':DTYPE' after the shape, e.g. %s=480x640x3:uint8", arg,
                            sp->name);
    rc = parse_shape(eq + 1, (size_t)(colon - eq - 1), sp);
    if (rc)
        return rpx_error_set(err, RPX_EINVAL, rc == -2 ? "'%s': the shape's element count overflows"
                                     : "'%s': bad shape; give dimensions joined by 'x' "
                                       "(480x640x3) or 'scalar'",
                            arg);
    fill = strchr(colon + 1, '=');
    snprintf(dtype, sizeof dtype, "%.*s",
             (int)(fill ? (size_t)(fill - colon - 1) : strlen(colon + 1)), colon + 1);
    if (rpx_dtype_from_name(dtype, &sp->dtype) != 0)
        return rpx_error_set(err, RPX_EINVAL, "'%s': unknown dtype '%s'; use bool, int8..int64, uint8..uint64, "
                            "float16, float32 or float64",
                            arg, dtype);
    rc = fill_value(sp, fill ? fill + 1 : "0", r);
    if (rc == -1)
        return rpx_error_set(err, RPX_EINVAL, "'%s': fill '%s' is not a number or 'random'",
                            arg, fill + 1);
    if (rc == -4)
        return rpx_error_set(err, RPX_EINVAL, "'%s': fill '%s' does not fit %s", arg, fill + 1,
                            dtype);
    if (rc)
        return rpx_error_set(err, RPX_ENOMEM, "'%s': cannot allocate %zu elements of %s", arg,
                            sp->count, dtype);
    return 0;
}

int rpx_npz_maker_create(uint64_t seed, rpx_npz_maker **out)
{
    rpx_npz_maker *m = calloc(1, sizeof *m);
    uint64_t sm = seed;
    int i;
    *out = NULL;
    if (!m) return RPX_ENOMEM;
    for (i = 0; i < 4; i++) m->r.s[i] = splitmix64(&sm);
    *out = m;
    return 0;
}

int rpx_npz_maker_add(rpx_npz_maker *m, const char *arg, rpx_error *err)
{
    size_t j;
    spec *sp;
    int rc;
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 8;
        spec *p = realloc(m->specs, cap * sizeof *p);
        if (!p) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        m->specs = p;
        m->cap = cap;
    }
    sp = &m->specs[m->n];
    memset(sp, 0, sizeof *sp);
    if ((rc = parse_spec(arg, sp, &m->r, err)) != 0) {
        free(sp->data);
        return rc;
    }
    for (j = 0; j < m->n; j++)
        if (strcmp(m->specs[j].name, sp->name) == 0) {
            free(sp->data);
            return rpx_error_set(err, RPX_EINVAL,
                                 "'%s': array '%s' is given twice; give every array a unique name",
                                 arg, sp->name);
        }
    m->n++;
    return 0;
}

int rpx_npz_maker_write(const rpx_npz_maker *m, const char *path, int compress, rpx_error *err)
{
    rpx_npz_writer *w = NULL;
    size_t i;
    int rc = rpx_npz_writer_open(path, compress, &w, err);
    if (rc != 0) return rc;
    for (i = 0; i < m->n; i++) {
        const spec *sp = &m->specs[i];
        if ((rc = rpx_npz_writer_add(w, sp->name, sp->dtype, sp->ndim, sp->shape, sp->data, err)) != 0) {
            rpx_npz_writer_discard(w);
            return rc;
        }
    }
    return rpx_npz_writer_close(w, err);
}

void rpx_npz_maker_free(rpx_npz_maker *m)
{
    size_t i;
    if (!m) return;
    for (i = 0; i < m->n; i++) free(m->specs[i].data);
    free(m->specs);
    free(m);
}
