/* onnx.c — reading an ONNX file into the cost layer's representation.
 *
 * The file is not read whole: a wire-level pass walks the protobuf message
 * through a small window (pread) and copies everything except the payload of
 * large tensor data fields (raw_data, float_data, ...) into a small buffer;
 * the weight bytes are skipped with a seek, so they are neither read nor
 * mapped and memory does not grow with the weight size (a mapping would not
 * do: the kernel maps whole large folios of page cache around every byte
 * touched). Weights stored in external files are never opened; only a small
 * integer tensor stored there (a shape constant: at most EXT_CONST_MAX
 * elements) is read, when its file is next to the model. protobuf-c
 * (code generated from the system's onnx.proto) then unpacks the small
 * buffer, and rpx__build turns graphs, nodes and tensors into indexed values
 * and nodes. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/user_file.h"
#include "cost/cost_internal.h"

/* Tensor data fields up to this size are kept (shape constants, biases). */
#define KEEP_BYTES 65536
#define MAX_NESTING 64
#define WINDOW 16384

/* ---- the wire-level pass --------------------------------------------- */
enum { M_MODEL, M_GRAPH, M_NODE, M_ATTR, M_TENSOR, M_SPARSE, M_FUNCTION, M_OTHER };

typedef struct wbuf {
    unsigned char *p;
    size_t len, cap;
} wbuf;

typedef struct filt {
    rpx__ctx *c;
    const unsigned char *mem;   /* the message in memory, or NULL: read from fd */
    int fd;
    size_t len;                 /* of the whole message */
    unsigned char *win;         /* WINDOW bytes of the file from win_off */
    size_t win_off, win_len;
    wbuf out;
    int depth;
} filt;

static int read_at(filt *f, unsigned char *dst, size_t off, size_t n, size_t *got)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(f->fd, dst + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return rpx__fail(f->c, RPX_EIO, "read error at byte %zu: %s", off + done, strerror(errno));
        if (r == 0) break;
        done += (size_t)r;
    }
    *got = done;
    return 0;
}

/* up to n bytes of the message at off (fewer at its end): *avail of them */
static const unsigned char *at(filt *f, size_t off, size_t n, size_t *avail, int *rc)
{
    *rc = 0;
    if (off >= f->len) {
        *avail = 0;
        return f->mem ? f->mem : f->win;
    }
    if (n > f->len - off) n = f->len - off;
    if (f->mem) {
        *avail = n;
        return f->mem + off;
    }
    if (off < f->win_off || off + n > f->win_off + f->win_len) {
        size_t want = f->len - off < WINDOW ? f->len - off : WINDOW;
        f->win_len = 0;
        if ((*rc = read_at(f, f->win, off, want, &f->win_len))) return NULL;
        f->win_off = off;
        if (f->win_len < n) n = f->win_len;
    }
    *avail = n;
    return f->win + (off - f->win_off);
}

static int wreserve(filt *f, size_t n)
{
    if (f->out.len + n > f->out.cap) {
        size_t cap = f->out.cap ? f->out.cap : 65536;
        unsigned char *p;
        while (cap < f->out.len + n) cap *= 2;
        p = realloc(f->out.p, cap);
        if (!p) return rpx__fail(f->c, RPX_ENOMEM, "out of memory reading the model");
        f->out.p = p;
        f->out.cap = cap;
    }
    return 0;
}

/* copy n bytes of the message at off to the output */
static int wcopy(filt *f, size_t off, size_t n)
{
    int rc = wreserve(f, n);
    size_t got = 0;
    if (rc) return rc;
    if (f->mem) {
        memcpy(f->out.p + f->out.len, f->mem + off, n);
    } else if (off >= f->win_off && off + n <= f->win_off + f->win_len) {
        memcpy(f->out.p + f->out.len, f->win + (off - f->win_off), n);
    } else {
        if ((rc = read_at(f, f->out.p + f->out.len, off, n, &got))) return rc;
        if (got != n) return rpx__fail(f->c, RPX_EIO, "the file shrank while it was read");
    }
    f->out.len += n;
    return 0;
}

/* bytes used by the varint at p (at most 10), 0 if malformed or cut */
static size_t varint(const unsigned char *p, size_t avail, uint64_t *v)
{
    size_t i;
    uint64_t r = 0;
    for (i = 0; i < avail && i < 10; i++) {
        r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return 0;
}

static size_t put_varint(unsigned char *p, uint64_t v)
{
    size_t i = 0;
    do {
        p[i] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) p[i] |= 0x80;
        i++;
    } while (v);
    return i;
}

static int child_of(int msg, uint64_t field)
{
    switch (msg) {
    case M_MODEL: return field == 7 ? M_GRAPH : field == 25 ? M_FUNCTION : M_OTHER;
    case M_GRAPH:
        return field == 1 ? M_NODE : field == 5 ? M_TENSOR : field == 15 ? M_SPARSE : M_OTHER;
    case M_NODE: return field == 5 ? M_ATTR : M_OTHER;
    case M_ATTR:
        return field == 5 || field == 11   ? M_TENSOR
               : field == 6 || field == 10 ? M_GRAPH
               : field == 22 || field == 23 ? M_SPARSE
                                            : M_OTHER;
    case M_SPARSE: return field == 1 || field == 2 ? M_TENSOR : M_OTHER;
    case M_FUNCTION: return field == 7 ? M_NODE : M_OTHER;
    }
    return M_OTHER;
}

static int is_tensor_data(uint64_t field)
{
    return field == 4 || field == 5 || field == 6 || field == 7 || field == 9 || field == 10 ||
           field == 11;
}

static const char *msg_name(int msg)
{
    static const char *names[] = {"ModelProto", "GraphProto", "NodeProto", "AttributeProto",
                                  "TensorProto", "SparseTensorProto", "FunctionProto", "message"};
    return names[msg];
}

static int filter(filt *f, int msg, size_t off, size_t len)
{
    const unsigned char *p;
    size_t i = 0, start = 0, avail;
    uint64_t field = 0;
    int rc;
    if (++f->depth > MAX_NESTING)
        return rpx__fail(f->c, RPX_EFORMAT,
                         "messages nested more than %d deep at byte %zu; the file is damaged",
                         MAX_NESTING, off);
    while (i < len) {
        uint64_t key, v;
        size_t k;
        int wire;
        start = i;
        if (!(p = at(f, off + i, 10, &avail, &rc))) return rc;
        k = varint(p, avail < len - i ? avail : len - i, &key);
        if (!k)
            return rpx__fail(f->c, RPX_EFORMAT,
                             "bad field key at byte %zu (in a %s); the file is truncated or "
                             "not an ONNX model",
                             off + i, msg_name(msg));
        i += k;
        field = key >> 3;
        wire = (int)(key & 7);
        if (field == 0 || field > 536870911u)
            return rpx__fail(f->c, RPX_EFORMAT,
                             "invalid field number at byte %zu (in a %s); not an ONNX model "
                             "(ONNX files are protobuf ModelProto messages)",
                             off + start, msg_name(msg));
        switch (wire) {
        case 0:
            if (!(p = at(f, off + i, 10, &avail, &rc))) return rc;
            k = varint(p, avail < len - i ? avail : len - i, &v);
            if (!k) goto cut;
            i += k;
            break;
        case 1:
            if (len - i < 8) goto cut;
            i += 8;
            break;
        case 5:
            if (len - i < 4) goto cut;
            i += 4;
            break;
        case 2: {
            int child = child_of(msg, field);
            if (!(p = at(f, off + i, 10, &avail, &rc))) return rc;
            k = varint(p, avail < len - i ? avail : len - i, &v);
            if (!k || v > len - i - k) goto cut;
            i += k;
            if (msg == M_MODEL && field == 20) { /* training_info: not needed */
                i += (size_t)v;
                continue;
            }
            if (msg == M_TENSOR && is_tensor_data(field) && v > KEEP_BYTES) {
                f->c->elided_tensors++;
                f->c->elided_bytes += (double)v;
                i += (size_t)v;
                continue; /* the weight bytes stay in the file */
            }
            if (child != M_OTHER) {
                size_t at, body;
                unsigned char lenbuf[10];
                size_t nl;
                if ((rc = wcopy(f, off + start, i - k - start))) return rc; /* the key */
                if ((rc = wreserve(f, 10))) return rc;
                at = f->out.len;
                f->out.len += 10;
                if ((rc = filter(f, child, off + i, (size_t)v))) return rc;
                body = f->out.len - at - 10;
                nl = put_varint(lenbuf, body);
                memmove(f->out.p + at + nl, f->out.p + at + 10, body);
                memcpy(f->out.p + at, lenbuf, nl);
                f->out.len = at + nl + body;
                i += (size_t)v;
                continue;
            }
            i += (size_t)v;
            break;
        }
        default:
            return rpx__fail(f->c, RPX_EFORMAT,
                             "wire type %d at byte %zu (in a %s) is not used by ONNX; the file "
                             "is damaged or not an ONNX model",
                             wire, off + start, msg_name(msg));
        }
        if ((rc = wcopy(f, off + start, i - start))) return rc;
    }
    f->depth--;
    return 0;
cut:
    return rpx__fail(f->c, RPX_EFORMAT,
                     "field %llu at byte %zu (in a %s) runs past the end of its message; the file "
                     "is truncated or damaged (copy or export it again)",
                     (unsigned long long)field, off + start, msg_name(msg));
}

/* What a file that is not a protobuf message probably is. */
static const char *sniff(const unsigned char *p, size_t n)
{
    if (n >= 4 && memcmp(p, "PK\x03\x04", 4) == 0)
        return " (it is a zip archive: a PyTorch checkpoint? export the model with "
               "torch.onnx.export)";
    if (n >= 1 && (p[0] == '{' || p[0] == '<' || p[0] == '#'))
        return " (it looks like a text file)";
    if (n >= 4 && memcmp(p, "\x89HDF", 4) == 0)
        return " (it is an HDF5 file: a Keras model? convert it with tf2onnx)";
    return "";
}

static int unpack(rpx__ctx *c, filt *f)
{
    unsigned char head[8] = {0};
    size_t hn = 0;
    int rc;
    if (f->len == 0) return rpx__fail(c, RPX_EFORMAT, "the file is empty; not an ONNX model");
    {
        size_t avail;
        const unsigned char *p = at(f, 0, sizeof head, &avail, &rc);
        if (!p) return rc;
        memcpy(head, p, avail);
        hn = avail;
    }
    rc = filter(f, M_MODEL, 0, f->len);
    if (rc) {
        free(f->out.p);
        if (c->err && *sniff(head, hn)) {
            char msg[RPX_ERROR_MESSAGE_SIZE];
            snprintf(msg, sizeof msg, "%s", c->err->message);
            rpx_error_set(c->err, rc, "%s%s", msg, sniff(head, hn));
        }
        return rc;
    }
    c->kept = f->out.p;
    c->kept_len = f->out.len;
    c->m = (Onnx__ModelProto *)protobuf_c_message_unpack(&onnx__model_proto__descriptor, NULL,
                                                         c->kept_len, c->kept ? c->kept : head);
    if (!c->m)
        return rpx__fail(c, RPX_EFORMAT,
                         "not a valid ONNX ModelProto (protobuf-c could not decode it: a field "
                         "has the wrong type or a string is not UTF-8)%s",
                         sniff(head, hn));
    if (!c->m->graph)
        return rpx__fail(c, RPX_EFORMAT,
                         "the file has no graph: not an ONNX model (ModelProto.graph is "
                         "missing)%s",
                         sniff(head, hn));
    return 0;
}

int rpx__load_buffer(rpx__ctx *c, const void *data, size_t len)
{
    filt f;
    memset(&f, 0, sizeof f);
    f.c = c;
    f.mem = data;
    f.fd = -1;
    f.len = len;
    return unpack(c, &f);
}

int rpx__load_file(rpx__ctx *c, const char *path)
{
    struct stat st;
    filt f;
    int rc, fd;
    /* stat before the blocking open: a FIFO would wait for a writer without end */
    if ((rc = rpx__user_file_regular(path, c->path, c->err && c->err->code == 0 ? c->err : NULL)) != 0)
        return rc;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rpx__fail(c, RPX_EIO, "cannot open: %s", strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        close(fd);
        return rpx__fail(c, RPX_EIO, "not a regular file%s%s", e ? ": " : "",
                         e ? strerror(e) : "");
    }
    /* only field headers and small fields are read: no read-ahead into the weights */
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    memset(&f, 0, sizeof f);
    f.c = c;
    f.fd = fd;
    f.len = (size_t)st.st_size;
    f.win = malloc(WINDOW);
    if (!f.win) {
        close(fd);
        return rpx__fail(c, RPX_ENOMEM, "out of memory");
    }
    rc = unpack(c, &f);
    free(f.win);
    close(fd);
    return rc;
}

void rpx__unload(rpx__ctx *c)
{
    if (c->m) protobuf_c_message_free_unpacked(&c->m->base, NULL);
    c->m = NULL;
    free(c->kept);
    c->kept = NULL;
}

/* ---- attributes ------------------------------------------------------ */
const Onnx__AttributeProto *rpx__attr(const rpx__node *n, const char *name)
{
    size_t i;
    for (i = 0; i < n->p->n_attribute; i++)
        if (n->p->attribute[i]->name && strcmp(n->p->attribute[i]->name, name) == 0)
            return n->p->attribute[i];
    return NULL;
}

int64_t rpx__attr_i(const rpx__node *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = rpx__attr(n, name);
    return a && a->has_i ? a->i : def;
}

double rpx__attr_f(const rpx__node *n, const char *name, double def)
{
    const Onnx__AttributeProto *a = rpx__attr(n, name);
    return a && a->has_f ? (double)a->f : def;
}

const char *rpx__attr_s(rpx__ctx *c, const rpx__node *n, const char *name, const char *def)
{
    const Onnx__AttributeProto *a = rpx__attr(n, name);
    char *s;
    if (!a || !a->has_s) return def;
    s = rpx__strndup(&c->arena, (const char *)a->s.data, a->s.len);
    if (!s) return def;
    s[strnlen(s, a->s.len)] = '\0';
    return s;
}

long rpx__attr_ints(const rpx__node *n, const char *name, const int64_t **out)
{
    const Onnx__AttributeProto *a = rpx__attr(n, name);
    if (!a) return -1;
    if (a->n_ints == 0 && a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
        return -1;
    *out = a->ints;
    return (long)a->n_ints;
}

/* ---- tensors --------------------------------------------------------- */
static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static uint64_t le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    int i;
    for (i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

int rpx__tensor_dtype_dims(rpx__ctx *c, const Onnx__TensorProto *t, rpx__val *v,
                           const char *what)
{
    size_t i;
    double elems = 1;
    v->dtype = t->has_data_type ? t->data_type : 0;
    if (t->n_dims > RPX__MAX_RANK)
        return rpx__fail(c, RPX_EFORMAT, "%s has %zu dimensions (at most %d are supported)", what,
                         t->n_dims, RPX__MAX_RANK);
    v->rank = (int)t->n_dims;
    v->dims = rpx__alloc(&c->arena, (t->n_dims ? t->n_dims : 1) * sizeof *v->dims);
    if (!v->dims) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    for (i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || t->dims[i] > RPX__DIM_MAX)
            return rpx__fail(c, RPX_EFORMAT,
                             "%s has an absurd dimension %lld (dimension %zu); the file is "
                             "damaged",
                             what, (long long)t->dims[i], i);
        v->dims[i] = t->dims[i];
        elems *= (double)t->dims[i];
    }
    if (elems > RPX__ELEMS_MAX)
        return rpx__fail(c, RPX_EFORMAT, "%s has an absurd size (%.3g elements); the file is damaged",
                         what, elems);
    v->elems = elems;
    v->is_tensor = 1;
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        v->data_external = 1;
    return 0;
}

#define EXT_CONST_MAX 1024

/* The bytes of a small integer tensor in external data, from the file named
 * by its `location` (relative to the model's folder): a malloc'd buffer of
 * `want` bytes, or NULL with v->ext_missing set when it cannot be read. */
static unsigned char *read_external(rpx__ctx *c, const Onnx__TensorProto *t, rpx__val *v, size_t want)
{
    const char *loc = NULL, *slash;
    long long off = 0, len = -1;
    char path[4096];
    unsigned char *buf;
    size_t i;
    int fd;
    ssize_t got;
    for (i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        if (!e->key || !e->value) continue;
        if (!strcmp(e->key, "location")) loc = e->value;
        else if (!strcmp(e->key, "offset")) off = strtoll(e->value, NULL, 10);
        else if (!strcmp(e->key, "length")) len = strtoll(e->value, NULL, 10);
    }
    v->ext_location = loc ? rpx__strndup(&c->arena, loc, strlen(loc)) : "(no location)";
    v->ext_missing = 1;
    if (!loc || !*loc || loc[0] == '/' || strstr(loc, "..") || off < 0 ||
        (len >= 0 && (size_t)len != want))
        return NULL;
    slash = strrchr(c->path, '/');
    if (slash) snprintf(path, sizeof path, "%.*s/%s", (int)(slash - c->path), c->path, loc);
    else snprintf(path, sizeof path, "%s", loc);
    if (rpx__user_file_regular(path, NULL, NULL) != 0) return NULL; /* a FIFO: named as missing */
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    buf = malloc(want ? want : 1);
    got = buf ? pread(fd, buf, want, (off_t)off) : -1;
    close(fd);
    if (got < 0 || (size_t)got != want) {
        free(buf);
        return NULL;
    }
    v->ext_missing = 0;
    return buf;
}

int rpx__tensor_value(rpx__ctx *c, const Onnx__TensorProto *t, rpx__val *v, const char *what)
{
    size_t n = (size_t)v->elems, i;
    int dt = v->dtype, bits = rpx__dtype_bits(dt), isf = rpx__dtype_is_float(dt);
    unsigned char *ext = NULL;
    (void)what;
    if (v->data_external && !isf && bits >= 8 && v->elems <= EXT_CONST_MAX) {
        ext = read_external(c, t, v, n * (size_t)bits / 8);
        if (!ext) return 0; /* unknown; the message names the external file */
    } else if (v->data_external) {
        return 0;
    }
    if (v->elems > RPX__CVAL_MAX || bits < 8 || dt == RPX__T_COMPLEX64 ||
        dt == RPX__T_COMPLEX128 || (isf && bits == 8))
        return 0;
    if (isf) {
        v->cv_f = rpx__alloc(&c->arena, (n ? n : 1) * sizeof *v->cv_f);
        if (!v->cv_f) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    } else {
        v->cv_i = rpx__alloc(&c->arena, (n ? n : 1) * sizeof *v->cv_i);
        if (!v->cv_i) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    }
    if (ext || (t->has_raw_data && t->raw_data.len == n * (size_t)bits / 8)) {
        const uint8_t *p = ext ? ext : t->raw_data.data;
        int b = bits / 8;
        for (i = 0; i < n; i++, p += b) {
            uint64_t u = le(p, b);
            switch (dt) {
            case RPX__T_FLOAT: {
                float f;
                uint32_t w = (uint32_t)u;
                memcpy(&f, &w, 4);
                v->cv_f[i] = f;
                break;
            }
            case RPX__T_DOUBLE: memcpy(&v->cv_f[i], &u, 8); break;
            case RPX__T_FLOAT16: v->cv_f[i] = half_to_double((uint16_t)u); break;
            case RPX__T_BFLOAT16: {
                float f;
                uint32_t w = (uint32_t)u << 16;
                memcpy(&f, &w, 4);
                v->cv_f[i] = f;
                break;
            }
            case RPX__T_INT8: v->cv_i[i] = (int8_t)u; break;
            case RPX__T_INT16: v->cv_i[i] = (int16_t)u; break;
            case RPX__T_INT32: v->cv_i[i] = (int32_t)u; break;
            case RPX__T_INT64: v->cv_i[i] = (int64_t)u; break;
            case RPX__T_UINT64: v->cv_i[i] = u > INT64_MAX ? INT64_MAX : (int64_t)u; break;
            case RPX__T_BOOL: v->cv_i[i] = u != 0; break;
            default: v->cv_i[i] = (int64_t)u; break; /* unsigned narrower than 64 bits */
            }
        }
        free(ext);
    } else if (dt == RPX__T_FLOAT && t->n_float_data == n) {
        for (i = 0; i < n; i++) v->cv_f[i] = t->float_data[i];
    } else if (dt == RPX__T_DOUBLE && t->n_double_data == n) {
        for (i = 0; i < n; i++) v->cv_f[i] = t->double_data[i];
    } else if (dt == RPX__T_INT64 && t->n_int64_data == n) {
        for (i = 0; i < n; i++) v->cv_i[i] = t->int64_data[i];
    } else if ((dt == RPX__T_UINT32 || dt == RPX__T_UINT64) && t->n_uint64_data == n) {
        for (i = 0; i < n; i++)
            v->cv_i[i] = t->uint64_data[i] > INT64_MAX ? INT64_MAX : (int64_t)t->uint64_data[i];
    } else if (t->n_int32_data == n && !isf) {
        for (i = 0; i < n; i++) v->cv_i[i] = dt == RPX__T_BOOL ? t->int32_data[i] != 0 : t->int32_data[i];
    } else if (t->n_int32_data == n && (dt == RPX__T_FLOAT16 || dt == RPX__T_BFLOAT16)) {
        for (i = 0; i < n; i++) {
            uint16_t h = (uint16_t)t->int32_data[i];
            if (dt == RPX__T_FLOAT16) {
                v->cv_f[i] = half_to_double(h);
            } else {
                float f;
                uint32_t w = (uint32_t)h << 16;
                memcpy(&f, &w, 4);
                v->cv_f[i] = f;
            }
        }
    } else {
        return 0; /* no data here (left in the file, or external) */
    }
    v->has_cv = 1;
    v->cv_float = isf;
    v->cv_n = n;
    return 0;
}
