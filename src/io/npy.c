/* io/npy.c — owns the NPY format itself: dtype names, parsing the header dict
 * (format versions 1.0, 2.0, 3.0), building numpy's exact header for the
 * writer, and the byte-swap and Fortran→C conversions the loader applies.
 * Pure functions on memory: no I/O, no allocation except the writer header. */
#include "io/npy_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define RPX__HOST_BIG_ENDIAN 1
#else
#define RPX__HOST_BIG_ENDIAN 0
#endif

/* ---- dtype names ------------------------------------------------------- */

static const struct {
    rpx_dtype dtype;
    const char *name;  /* numpy's name */
    char kind;         /* numpy's kind character in a descr */
} dtype_table[] = {
    {RPX_DTYPE_BOOL, "bool", 'b'},       {RPX_DTYPE_INT8, "int8", 'i'},
    {RPX_DTYPE_INT16, "int16", 'i'},     {RPX_DTYPE_INT32, "int32", 'i'},
    {RPX_DTYPE_INT64, "int64", 'i'},     {RPX_DTYPE_UINT8, "uint8", 'u'},
    {RPX_DTYPE_UINT16, "uint16", 'u'},   {RPX_DTYPE_UINT32, "uint32", 'u'},
    {RPX_DTYPE_UINT64, "uint64", 'u'},   {RPX_DTYPE_FLOAT16, "float16", 'f'},
    {RPX_DTYPE_FLOAT32, "float32", 'f'}, {RPX_DTYPE_FLOAT64, "float64", 'f'},
};
#define DTYPE_TABLE_LEN (sizeof dtype_table / sizeof dtype_table[0])

const char *rpx_dtype_name(rpx_dtype dtype)
{
    size_t i;
    for (i = 0; i < DTYPE_TABLE_LEN; i++)
        if (dtype_table[i].dtype == dtype) return dtype_table[i].name;
    return "unknown";
}

int rpx_dtype_from_name(const char *name, rpx_dtype *out)
{
    size_t i;
    if (!name || !out) return RPX_EINVAL;
    for (i = 0; i < DTYPE_TABLE_LEN; i++) {
        if (strcmp(dtype_table[i].name, name) == 0) {
            *out = dtype_table[i].dtype;
            return 0;
        }
    }
    return RPX_EINVAL;
}

static rpx_dtype dtype_from_kind(char kind, size_t size)
{
    size_t i;
    for (i = 0; i < DTYPE_TABLE_LEN; i++)
        if (dtype_table[i].kind == kind && rpx_dtype_size(dtype_table[i].dtype) == size)
            return dtype_table[i].dtype;
    return (rpx_dtype)0;
}

/* ---- small helpers ----------------------------------------------------- */

size_t rpx__npy_prefix_len(int major)
{
    switch (major) {
    case 1: return 10;
    case 2: case 3: return 12;
    }
    return 0;
}

char *rpx__npy_shape_str(char *buf, size_t size, int ndim, const int64_t *shape)
{
    char tmp[RPX_MAX_DIMS * 24 + 8];
    size_t used = 0, n;
    int i, w;
    if (!buf || size == 0) return buf;
    if (ndim < 0 || ndim > RPX_MAX_DIMS) ndim = 0;
    tmp[used++] = '(';
    for (i = 0; i < ndim; i++) {
        w = snprintf(tmp + used, sizeof tmp - used, "%" PRId64 "%s", shape[i],
                     i + 1 < ndim ? ", " : (ndim == 1 ? "," : ""));
        if (w < 0) break;
        used += (size_t)w;
    }
    tmp[used++] = ')';
    tmp[used] = '\0';
    n = used;
    if (n < size) {
        memcpy(buf, tmp, n + 1);
    } else if (size >= 5) {
        memcpy(buf, tmp, size - 5);
        memcpy(buf + size - 5, "...)", 5);
    } else {
        buf[0] = '\0';
    }
    return buf;
}

/* Message prefixed by `what` (may be NULL). */
#define HDR_ERR(code, ...)                                                  \
    do {                                                                    \
        rpx_error_set(err, (code), __VA_ARGS__);                            \
        if (what && *what) rpx_error_prefix(err, "%s", what);               \
        return (code);                                                      \
    } while (0)

/* ---- the header dict --------------------------------------------------- */

typedef struct cursor {
    const char *p, *end, *start;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A Python string literal in single or double quotes (no escapes in what
 * numpy writes; a backslash escapes the next character). Sets [*s, *s+*n). */
static bool parse_string(cursor *c, const char **s, size_t *n)
{
    char q;
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    q = *c->p++;
    *s = c->p;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\') c->p++;
        if (c->p < c->end) c->p++;
    }
    if (c->p >= c->end) return false;
    *n = (size_t)(c->p - *s);
    c->p++;
    return true;
}

static bool parse_word(cursor *c, const char *word)
{
    size_t n = strlen(word);
    skip_ws(c);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        const char *after = c->p + n;
        if (after < c->end && (isalnum((unsigned char)*after) || *after == '_')) return false;
        c->p = after;
        return true;
    }
    return false;
}

/* Skip a bracketed Python expression starting at '[' (a structured descr),
 * honouring nesting and string literals. */
static bool skip_bracketed(cursor *c)
{
    int depth = 0;
    while (c->p < c->end) {
        char ch = *c->p;
        if (ch == '\'' || ch == '"') {
            const char *s;
            size_t n;
            if (!parse_string(c, &s, &n)) return false;
            continue;
        }
        c->p++;
        if (ch == '[' || ch == '(') depth++;
        else if (ch == ']' || ch == ')') {
            if (--depth == 0) return true;
        }
    }
    return false;
}

/* Describe why a descr is not one we load; returns the error code. */
static int refuse_descr(const char *descr, const char *what, rpx_error *err)
{
    const char *p = descr;
    const char *kind = NULL, *fix = "save numeric arrays only";
    char order = 0;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=') order = *p++;
    (void)order;
    switch (*p) {
    case 'O': kind = "object"; break;
    case 'U': kind = "unicode string"; break;
    case 'S': case 'a': kind = "bytes string"; break;
    case 'V': kind = "void (raw bytes)"; break;
    case 'c':
        kind = "complex";
        fix = "save the real and imaginary parts as two float arrays";
        break;
    case 'M':
        kind = "datetime";
        fix = "convert it first, e.g. arr.astype('int64')";
        break;
    case 'm':
        kind = "timedelta";
        fix = "convert it first, e.g. arr.astype('int64')";
        break;
    case 'f':
        if (strcmp(p, "f16") == 0 || strcmp(p, "f12") == 0) {
            kind = "long double";
            fix = "convert it to float64 first";
        }
        break;
    }
    if (kind)
        HDR_ERR(RPX_EUNSUPPORTED, "dtype '%s' (%s) is not supported; %s", descr, kind, fix);
    HDR_ERR(RPX_EUNSUPPORTED, "dtype '%s' is not a numeric numpy dtype; %s", descr, fix);
}

/* Parse a simple descr such as "<f4", "|b1", ">i8" into the header. */
static int parse_descr(rpx_npy_header *h, const char *what, rpx_error *err)
{
    const char *p = h->descr;
    char order = '=', kind;
    size_t size = 0;
    int digits = 0;
    rpx_dtype dt;

    if (*p == '<' || *p == '>' || *p == '|' || *p == '=') order = *p++;
    kind = *p++;
    if (kind == '?') { /* numpy accepts '?' as an alias of b1 */
        kind = 'b';
        size = 1;
    } else {
        while (*p >= '0' && *p <= '9' && digits < 4) {
            size = size * 10 + (size_t)(*p - '0');
            p++;
            digits++;
        }
        if (digits == 0) return refuse_descr(h->descr, what, err);
    }
    if (*p != '\0') return refuse_descr(h->descr, what, err);
    dt = dtype_from_kind(kind, size);
    if (!dt) return refuse_descr(h->descr, what, err);
    h->dtype = dt;
    h->big_endian = 0;
    if (size > 1) {
        if (order == '>') h->big_endian = 1;
        else if (order == '=' || order == '|') h->big_endian = RPX__HOST_BIG_ENDIAN;
    }
    return 0;
}

/* Parse a Python int (optionally with the "L" suffix of Python 2 files). */
static int parse_dim(cursor *c, int64_t *out, bool *overflow)
{
    bool neg = false;
    uint64_t v = 0;
    int digits = 0;
    skip_ws(c);
    if (c->p < c->end && (*c->p == '-' || *c->p == '+')) neg = (*c->p++ == '-');
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (v > (UINT64_MAX - d) / 10) *overflow = true;
        else v = v * 10 + d;
        c->p++;
        digits++;
    }
    if (digits == 0) return -1;
    if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++;
    if (v > (uint64_t)INT64_MAX) *overflow = true;
    if (*overflow) return 0;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

/* The magic, the version and the header's length: the dict's place into `c`. */
static int parse_prefix(const unsigned char *b, size_t len, const char *what, rpx_npy_header *h,
                        cursor *c, rpx_error *err)
{
    size_t prefix, hlen;
    if (len < 8 || memcmp(b, RPX__NPY_MAGIC, RPX__NPY_MAGIC_LEN) != 0) {
        if (len < 8 && len > 0 && memcmp(b, RPX__NPY_MAGIC, len < 6 ? len : 6) == 0)
            HDR_ERR(RPX_EFORMAT,
                    "NPY header is truncated (only %zu bytes present); the file is truncated", len);
        HDR_ERR(RPX_EFORMAT,
                "not an NPY array (the magic bytes \\x93NUMPY are missing); "
                "write arrays with numpy.save or numpy.savez");
    }
    h->major = b[6];
    h->minor = b[7];
    prefix = rpx__npy_prefix_len(h->major);
    if (prefix == 0 || h->minor != 0)
        HDR_ERR(RPX_EUNSUPPORTED,
                "NPY format version %d.%d is not supported (1.0, 2.0 and 3.0 are); "
                "write it again with numpy.save",
                h->major, h->minor);
    if (len < prefix)
        HDR_ERR(RPX_EFORMAT,
                "NPY header is truncated (only %zu bytes present); the file is truncated", len);
    if (h->major == 1)
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
    else
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    if (hlen > RPX__NPY_MAX_HEADER - prefix)
        HDR_ERR(RPX_EFORMAT,
                "NPY header length %zu is beyond the %zu-byte limit; the file is corrupt",
                hlen, RPX__NPY_MAX_HEADER);
    if (len < prefix + hlen)
        HDR_ERR(RPX_EFORMAT,
                "NPY header is truncated (%zu bytes declared, only %zu present); the file "
                "is truncated",
                prefix + hlen, len);
    h->data_offset = prefix + hlen;
    c->start = (const char *)b + prefix;
    c->p = c->start;
    c->end = c->start + hlen;
    return 0;
}

/* What the dict said besides the header's own fields. */
typedef struct dict_seen {
    bool descr, fortran, shape, structured, overflow;
    char structured_text[64];
} dict_seen;

#define SYNTAX(msg)                                                                   \
    HDR_ERR(RPX_EFORMAT, "malformed NPY header (%s at byte %zu of the dict); "       \
                         "the file is corrupt",                                       \
            msg, (size_t)(c->p - c->start))

/* The value of 'descr': a string such as '<f4', or a structured dtype's list (kept
 * as text for the refusal). */
static int parse_descr_value(cursor *c, rpx_npy_header *h, dict_seen *seen, const char *what,
                             rpx_error *err)
{
    const char *s;
    size_t n, i;
    if (seen->descr) SYNTAX("duplicate key 'descr'");
    seen->descr = true;
    skip_ws(c);
    if (c->p < c->end && *c->p == '[') {
        const char *from = c->p;
        char *text = seen->structured_text;
        size_t tn, cap = sizeof seen->structured_text;
        if (!skip_bracketed(c)) SYNTAX("unterminated list in 'descr'");
        seen->structured = true;
        tn = (size_t)(c->p - from);
        if (tn >= cap) {
            memcpy(text, from, cap - 5);
            memcpy(text + cap - 5, "...]", 5);
        } else {
            memcpy(text, from, tn);
            text[tn] = '\0';
        }
        return 0;
    }
    if (!parse_string(c, &s, &n)) SYNTAX("'descr' is not a string");
    if (n == 0 || n >= sizeof h->descr) SYNTAX("'descr' has a bad length");
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
            SYNTAX("'descr' holds a non-printable character");
    memcpy(h->descr, s, n);
    h->descr[n] = '\0';
    return 0;
}

/* The value of 'shape': a tuple of Python ints. */
static int parse_shape_value(cursor *c, rpx_npy_header *h, dict_seen *seen, const char *what,
                             rpx_error *err)
{
    if (seen->shape) SYNTAX("duplicate key 'shape'");
    seen->shape = true;
    if (!eat(c, '(')) SYNTAX("'shape' is not a tuple");
    for (;;) {
        int64_t d = 0;
        if (eat(c, ')')) break;
        if (h->ndim >= RPX_MAX_DIMS)
            HDR_ERR(RPX_EUNSUPPORTED,
                    "shape has more than %d dimensions; save an array of at most "
                    "%d dimensions",
                    RPX_MAX_DIMS, RPX_MAX_DIMS);
        if (parse_dim(c, &d, &seen->overflow) < 0) SYNTAX("'shape' holds a non-integer");
        h->shape[h->ndim++] = d;
        if (eat(c, ',')) continue;
        if (eat(c, ')')) break;
        SYNTAX("expected ',' or ')' in 'shape'");
    }
    return 0;
}

/* A key other than the three of the format, named (printable) in the refusal. */
static int refuse_key(const char *key, size_t klen, const char *what, rpx_error *err)
{
    char k[40];
    size_t i, kn = klen < sizeof k - 1 ? klen : sizeof k - 1;
    memcpy(k, key, kn);
    k[kn] = '\0';
    for (i = 0; i < kn; i++)
        if ((unsigned char)k[i] < 0x20 || (unsigned char)k[i] >= 0x7f) k[i] = '?';
    HDR_ERR(RPX_EFORMAT,
            "NPY header has an unexpected key '%s' (only 'descr', 'fortran_order' "
            "and 'shape' are allowed); the file is corrupt",
            k);
}

/* The header's dict: {'descr': ..., 'fortran_order': ..., 'shape': (...)}, each key once. */
static int parse_dict(cursor *c, rpx_npy_header *h, dict_seen *seen, const char *what,
                      rpx_error *err)
{
    int rc;
    if (!eat(c, '{')) SYNTAX("expected '{'");
    for (;;) {
        const char *key;
        size_t klen;
        if (eat(c, '}')) break;
        if (!parse_string(c, &key, &klen)) SYNTAX("expected a quoted key");
        if (!eat(c, ':')) SYNTAX("expected ':'");
        if (klen == 5 && memcmp(key, "descr", 5) == 0) {
            if ((rc = parse_descr_value(c, h, seen, what, err)) != 0) return rc;
        } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
            if (seen->fortran) SYNTAX("duplicate key 'fortran_order'");
            seen->fortran = true;
            if (parse_word(c, "True")) h->fortran_order = 1;
            else if (parse_word(c, "False")) h->fortran_order = 0;
            else SYNTAX("'fortran_order' is neither True nor False");
        } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
            if ((rc = parse_shape_value(c, h, seen, what, err)) != 0) return rc;
        } else {
            return refuse_key(key, klen, what, err);
        }
        if (eat(c, ',')) continue;
        if (eat(c, '}')) break;
        SYNTAX("expected ',' or '}'");
    }
    skip_ws(c);
    if (c->p != c->end) SYNTAX("unexpected text after the dict");
    if (!seen->descr || !seen->fortran || !seen->shape)
        HDR_ERR(RPX_EFORMAT, "NPY header has no '%s' key; the file is corrupt",
                !seen->descr ? "descr" : !seen->fortran ? "fortran_order" : "shape");
    return 0;
}
#undef SYNTAX

/* The shape's dimensions and the array's byte size: never negative, never past 2^63. */
static int check_size(rpx_npy_header *h, bool overflow, const char *what, rpx_error *err)
{
    char shape_text[96];
    size_t i, count, nonzero;
    if (overflow)
        HDR_ERR(RPX_EFORMAT,
                "shape has a dimension beyond 2^63 (the size overflows); the file is corrupt");
    rpx__npy_shape_str(shape_text, sizeof shape_text, h->ndim, h->shape);
    for (i = 0; i < (size_t)h->ndim; i++)
        if (h->shape[i] < 0)
            HDR_ERR(RPX_EFORMAT, "shape %s has a negative dimension; the file is corrupt",
                    shape_text);

    /* The byte size must fit, even for the non-zero dimensions of an empty
     * array (numpy itself refuses such shapes as "array is too big"). */
    count = 1;
    nonzero = rpx_dtype_size(h->dtype);
    for (i = 0; i < (size_t)h->ndim; i++) {
        size_t d = (size_t)h->shape[i];
        if (d == 0) {
            count = 0;
            continue;
        }
        if (__builtin_mul_overflow(nonzero, d, &nonzero) || nonzero > (size_t)INT64_MAX)
            HDR_ERR(RPX_EFORMAT,
                    "shape %s with dtype '%s' overflows (more than 2^63 bytes); the file is "
                    "corrupt",
                    shape_text, h->descr);
        if (count) count *= d;
    }
    h->count = count;
    h->nbytes = count * rpx_dtype_size(h->dtype);
    if (h->nbytes > (size_t)INT64_MAX - h->data_offset)
        HDR_ERR(RPX_EFORMAT,
                "shape %s with dtype '%s' overflows (more than 2^63 bytes); the file is corrupt",
                shape_text, h->descr);
    return 0;
}

int rpx_npy_parse_header(const void *buf, size_t len, const char *what, rpx_npy_header *out,
                         rpx_error *err)
{
    rpx_npy_header h;
    cursor c;
    dict_seen seen;
    int rc;

    if (!buf || !out) HDR_ERR(RPX_EINVAL, "no header buffer given");
    memset(&h, 0, sizeof h);
    memset(&seen, 0, sizeof seen);
    if ((rc = parse_prefix(buf, len, what, &h, &c, err)) != 0 ||
        (rc = parse_dict(&c, &h, &seen, what, err)) != 0)
        return rc;
    if (seen.structured)
        HDR_ERR(RPX_EUNSUPPORTED,
                "dtype %s (structured) is not supported; save each field as its own array",
                seen.structured_text);
    if ((rc = parse_descr(&h, what, err)) != 0 || (rc = check_size(&h, seen.overflow, what, err)) != 0)
        return rc;
    *out = h;
    return 0;
}

/* ---- conversions ------------------------------------------------------- */

void rpx__npy_byteswap(void *data, size_t count, size_t itemsize)
{
    unsigned char *p = data;
    size_t i;
    switch (itemsize) {
    case 2:
        for (i = 0; i < count; i++, p += 2) {
            uint16_t v;
            memcpy(&v, p, 2);
            v = __builtin_bswap16(v);
            memcpy(p, &v, 2);
        }
        break;
    case 4:
        for (i = 0; i < count; i++, p += 4) {
            uint32_t v;
            memcpy(&v, p, 4);
            v = __builtin_bswap32(v);
            memcpy(p, &v, 4);
        }
        break;
    case 8:
        for (i = 0; i < count; i++, p += 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            v = __builtin_bswap64(v);
            memcpy(p, &v, 8);
        }
        break;
    default:
        if (itemsize > 1) {
            for (i = 0; i < count; i++, p += itemsize) {
                size_t a = 0, z = itemsize - 1;
                for (; a < z; a++, z--) {
                    unsigned char t = p[a];
                    p[a] = p[z];
                    p[z] = t;
                }
            }
        }
        break;
    }
}

#define GATHER(T)                                                              \
    for (j = 0; j < inner; j++) memcpy(d + j * sizeof(T), s + j * istride, sizeof(T))

void rpx__npy_fortran_to_c(void *dst, const void *src, int ndim, const int64_t *shape,
                           size_t itemsize)
{
    size_t fstride[RPX_MAX_DIMS], idx[RPX_MAX_DIMS];
    size_t count = 1, inner, istride, outer, o, j, soff = 0;
    unsigned char *d = dst;
    int k;

    for (k = 0; k < ndim; k++) count *= (size_t)shape[k];
    if (count == 0) return;
    if (ndim <= 1) {
        memcpy(dst, src, count * itemsize);
        return;
    }
    fstride[0] = 1;
    for (k = 1; k < ndim; k++) fstride[k] = fstride[k - 1] * (size_t)shape[k - 1];
    memset(idx, 0, sizeof idx);
    inner = (size_t)shape[ndim - 1];
    istride = fstride[ndim - 1] * itemsize;
    outer = count / inner;
    for (o = 0; o < outer; o++) {
        const unsigned char *s = (const unsigned char *)src + soff * itemsize;
        switch (itemsize) {
        case 1: for (j = 0; j < inner; j++) d[j] = s[j * istride]; break;
        case 2: GATHER(uint16_t); break;
        case 4: GATHER(uint32_t); break;
        case 8: GATHER(uint64_t); break;
        default:
            for (j = 0; j < inner; j++) memcpy(d + j * itemsize, s + j * istride, itemsize);
            break;
        }
        d += inner * itemsize;
        /* advance the odometer over dimensions ndim-2 .. 0 */
        for (k = ndim - 2; k >= 0; k--) {
            idx[k]++;
            soff += fstride[k];
            if (idx[k] < (size_t)shape[k]) break;
            soff -= fstride[k] * (size_t)shape[k];
            idx[k] = 0;
        }
    }
}
#undef GATHER

/* ---- numpy's header, for the writer ------------------------------------ */

static const char *native_descr(rpx_dtype dtype, char buf[8])
{
    size_t size = rpx_dtype_size(dtype), i;
    char kind = 0;
    for (i = 0; i < DTYPE_TABLE_LEN; i++)
        if (dtype_table[i].dtype == dtype) kind = dtype_table[i].kind;
    if (!kind || !size) return NULL;
    buf[0] = size == 1 ? '|' : (RPX__HOST_BIG_ENDIAN ? '>' : '<');
    buf[1] = kind;
    buf[2] = (char)('0' + size);
    buf[3] = '\0';
    return buf;
}

unsigned char *rpx__npy_make_header(rpx_dtype dtype, int ndim, const int64_t *shape,
                                    size_t *len)
{
    /* numpy 1.24 format.py: "{'descr': ..., 'fortran_order': False, 'shape': (...), }",
     * then spare spaces so the first axis can grow to 21 digits, then padding
     * so that magic + length + dict + '\n' is a multiple of 64. */
    enum { GROWTH_AXIS_MAX_DIGITS = 21, ALIGN = 64 };
    char descr[8], shape_text[RPX_MAX_DIMS * 24 + 8], first[24];
    size_t dict_len, hlen, padlen, prefix, total, used = 0;
    unsigned char *out;
    int i, major, n;

    if (!len || ndim < 0 || ndim > RPX_MAX_DIMS || (ndim > 0 && !shape)) return NULL;
    if (!native_descr(dtype, descr)) return NULL;
    shape_text[used++] = '(';
    for (i = 0; i < ndim; i++) {
        n = snprintf(shape_text + used, sizeof shape_text - used, "%" PRId64 "%s", shape[i],
                     i + 1 < ndim ? ", " : (ndim == 1 ? "," : ""));
        if (n < 0) return NULL;
        used += (size_t)n;
    }
    shape_text[used++] = ')';
    shape_text[used] = '\0';

    dict_len = strlen("{'descr': '', 'fortran_order': False, 'shape': , }") + strlen(descr) +
               used;
    if (ndim > 0) {
        n = snprintf(first, sizeof first, "%" PRId64, shape[0]);
        if (n >= 0 && n < GROWTH_AXIS_MAX_DIGITS) dict_len += (size_t)(GROWTH_AXIS_MAX_DIGITS - n);
    }
    hlen = dict_len + 1; /* the final '\n' */
    major = 1;
    prefix = 10;
    padlen = ALIGN - ((prefix + hlen) % ALIGN);
    if (hlen + padlen > 65535) {
        major = 2;
        prefix = 12;
        padlen = ALIGN - ((prefix + hlen) % ALIGN);
    }
    total = prefix + hlen + padlen;
    out = malloc(total + 1);
    if (!out) return NULL;
    memcpy(out, RPX__NPY_MAGIC, RPX__NPY_MAGIC_LEN);
    out[6] = (unsigned char)major;
    out[7] = 0;
    {
        size_t l = hlen + padlen;
        out[8] = (unsigned char)(l & 0xff);
        out[9] = (unsigned char)((l >> 8) & 0xff);
        if (major == 2) {
            out[10] = (unsigned char)((l >> 16) & 0xff);
            out[11] = (unsigned char)((l >> 24) & 0xff);
        }
    }
    n = snprintf((char *)out + prefix, total + 1 - prefix,
                 "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape_text);
    if (n < 0) {
        free(out);
        return NULL;
    }
    memset(out + prefix + (size_t)n, ' ', total - 1 - prefix - (size_t)n);
    out[total - 1] = '\n';
    out[total] = '\0';
    *len = total;
    return out;
}
