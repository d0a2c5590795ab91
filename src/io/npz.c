/* io/npz.c — owns loading input files: every array of an NPZ archive
 * (np.savez, np.savez_compressed) or a single .npy file, into 64-byte
 * aligned, read-only, C-order, native-endian buffers.
 *
 * Nothing is allocated on a size a header or the zip directory claims before
 * that size is checked against the file: a stored member must fit in the
 * archive, a deflated one must not claim more than deflate can expand its
 * compressed bytes to, and the NPY header's shape must match the member size
 * exactly. The data is then read (or inflated) straight into its final
 * anonymous mapping, which is made read-only. */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include "common/user_file.h"
#include "io/npy_internal.h"
#include "rpxprof/error.h"

/* Deflate cannot expand data by more than about 1032:1; anything claiming
 * more is corrupt (or a zip bomb). The slack covers tiny members. */
#define RPX__DEFLATE_MAX_RATIO 1032u
#define RPX__DEFLATE_SLACK 4096u
/* Stored members are read in chunks of this size, each CRC'd right after. */
#define RPX__READ_CHUNK ((size_t)1 << 20)

typedef struct npz_map {
    void *addr;
    size_t len;
} npz_map;

struct rpx_npz {
    size_t count, cap;
    rpx_tensor *tensors;
    rpx_npz_array_info *infos;
    npz_map *maps;
    rpx_inputs inputs;
};

/* What an empty array's data points to: aligned, read-only, never written. */
_Alignas(RPX_TENSOR_ALIGN) static const unsigned char empty_data[RPX_TENSOR_ALIGN];

/* ---- buffers ----------------------------------------------------------- */

static int map_alloc(size_t n, npz_map *m)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
    void *p;
    m->addr = NULL;
    m->len = 0;
    if (n == 0) return 0;
    if (n > SIZE_MAX - page) {
        errno = ENOMEM;
        return -1;
    }
    len = (n + page - 1) / page * page;
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    m->addr = p;
    m->len = len;
    return 0;
}

static void map_free(npz_map *m)
{
    if (m->addr && m->len) munmap(m->addr, m->len);
    m->addr = NULL;
    m->len = 0;
}

/* ---- the result -------------------------------------------------------- */

void rpx_npz_free(rpx_npz *npz)
{
    size_t i;
    if (!npz) return;
    for (i = 0; i < npz->count; i++) {
        map_free(&npz->maps[i]);
        free((char *)npz->tensors[i].name);
    }
    free(npz->tensors);
    free(npz->infos);
    free(npz->maps);
    free(npz);
}

const rpx_inputs *rpx_npz_inputs(const rpx_npz *npz)
{
    return npz ? &npz->inputs : NULL;
}

const rpx_npz_array_info *rpx_npz_array_info_at(const rpx_npz *npz, size_t index)
{
    if (!npz || index >= npz->count) return NULL;
    return &npz->infos[index];
}

static int npz_reserve(rpx_npz *npz)
{
    size_t cap;
    void *p;
    if (npz->count < npz->cap) return 0;
    cap = npz->cap ? npz->cap * 2 : 8;
    if (!(p = realloc(npz->tensors, cap * sizeof *npz->tensors))) return -1;
    npz->tensors = p;
    if (!(p = realloc(npz->infos, cap * sizeof *npz->infos))) return -1;
    npz->infos = p;
    if (!(p = realloc(npz->maps, cap * sizeof *npz->maps))) return -1;
    npz->maps = p;
    npz->cap = cap;
    return 0;
}

static bool npz_has_name(const rpx_npz *npz, const char *name)
{
    size_t i;
    for (i = 0; i < npz->count; i++)
        if (strcmp(npz->tensors[i].name, name) == 0) return true;
    return false;
}

/* ---- CRC-32 of stored members ----------------------------------------- */

/* libzip checks the CRC of every member it reads to the end, on its own
 * buffer. Stored data is instead read straight into the destination through a
 * window without that check, and zlib's crc32 is run here on each chunk while
 * it is still in cache. */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    uLong c = crc;
    while (n > 0) { /* zlib takes a uInt length */
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

uint32_t rpx__crc32(uint32_t crc, const void *data, size_t len)
{
    return crc32_update(crc, data, len);
}

/* For large members the CRC runs on a second thread, one chunk behind the
 * reads: the loading time is then that of the read, not read + CRC. The
 * reader publishes how many bytes are in place; the checker follows. */
#define RPX__CRC_THREAD_MIN ((size_t)16 << 20)

typedef struct crc_job {
    const unsigned char *buf;
    uint32_t crc;
    size_t done, avail;
    int closed;                   /* no more bytes will come */
    pthread_mutex_t lock;
    pthread_cond_t more;
} crc_job;

static void *crc_worker(void *arg)
{
    crc_job *j = arg;
    for (;;) {
        size_t avail;
        int closed;
        pthread_mutex_lock(&j->lock);
        while (j->avail == j->done && !j->closed) pthread_cond_wait(&j->more, &j->lock);
        avail = j->avail;
        closed = j->closed;
        pthread_mutex_unlock(&j->lock);
        if (avail > j->done) {
            j->crc = crc32_update(j->crc, j->buf + j->done, avail - j->done);
            j->done = avail;
        } else if (closed) {
            return NULL;
        }
    }
}

static void crc_publish(crc_job *j, size_t avail, int closed)
{
    pthread_mutex_lock(&j->lock);
    j->avail = avail;
    j->closed = closed;
    pthread_cond_signal(&j->more);
    pthread_mutex_unlock(&j->lock);
}

/* ---- reading a stream: a zip member or a whole .npy -------------------- */

typedef struct reader {
    zip_file_t *zf;
    zip_source_t *src;
    /* a stored zip member: its data is read by read_stored */
    zip_t *za;
    zip_uint64_t index;
    uint32_t crc;
} reader;

static zip_int64_t rd(reader *r, void *buf, zip_uint64_t n)
{
    return r->zf ? zip_fread(r->zf, buf, n) : zip_source_read(r->src, buf, n);
}

static const char *rd_strerror(reader *r)
{
    return r->zf ? zip_file_strerror(r->zf) : zip_error_strerror(zip_source_error(r->src));
}

/* Read up to n bytes; returns bytes read, or -1 on a read error. */
static zip_int64_t read_full(reader *r, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        zip_int64_t k = rd(r, (unsigned char *)buf + got, n - got);
        if (k < 0) return -1;
        if (k == 0) break;
        got += (size_t)k;
    }
    return (zip_int64_t)got;
}

#define ARR_ERR(code, ...)                                               \
    do {                                                                 \
        rpx_error_set(err, (code), __VA_ARGS__);                         \
        rpx_error_prefix(err, "%s: array '%s'", file, name);             \
        rc = (code);                                                     \
        goto fail;                                                       \
    } while (0)

/* The nbytes of data of a stored member, which follow `offset` bytes of
 * header whose CRC is `crc`, straight into buf; then the member's CRC. */
static int read_stored(reader *r, unsigned char *buf, size_t nbytes, size_t offset,
                       uint32_t crc, const char *file, const char *name, rpx_error *err)
{
    zip_source_t *src = NULL;
    size_t got = 0;
    int rc = 0;
    crc_job job;
    pthread_t worker;
    int threaded = 0;

    if (nbytes >= RPX__CRC_THREAD_MIN) {
        memset(&job, 0, sizeof job);
        job.buf = buf;
        job.crc = crc;
        pthread_mutex_init(&job.lock, NULL);
        pthread_cond_init(&job.more, NULL);
        threaded = pthread_create(&worker, NULL, crc_worker, &job) == 0;
        if (!threaded) {
            pthread_cond_destroy(&job.more);
            pthread_mutex_destroy(&job.lock);
        }
    }
    if (nbytes) {
        src = zip_source_zip(r->za, r->za, r->index, 0, offset, (zip_int64_t)nbytes);
        if (!src)
            ARR_ERR(RPX_EFORMAT, "cannot read the data (%s); the file is corrupt",
                    zip_strerror(r->za));
        if (zip_source_open(src) < 0)
            ARR_ERR(RPX_EFORMAT, "cannot read the data (%s); the file is corrupt",
                    zip_error_strerror(zip_source_error(src)));
        while (got < nbytes) {
            size_t want = nbytes - got < RPX__READ_CHUNK ? nbytes - got : RPX__READ_CHUNK;
            zip_int64_t n = zip_source_read(src, buf + got, want);
            if (n < 0) {
                rpx_error_set(err, RPX_EFORMAT, "cannot read the data (%s); the file is corrupt",
                              zip_error_strerror(zip_source_error(src)));
                rpx_error_prefix(err, "%s: array '%s'", file, name);
                rc = RPX_EFORMAT;
                break;
            }
            if (n == 0) {
                rpx_error_set(err, RPX_EFORMAT,
                              "the data ends after %zu of %zu bytes; the file is truncated or "
                              "corrupt",
                              got, nbytes);
                rpx_error_prefix(err, "%s: array '%s'", file, name);
                rc = RPX_EFORMAT;
                break;
            }
            if (!threaded) crc = crc32_update(crc, buf + got, (size_t)n); /* still in cache */
            got += (size_t)n;
            if (threaded) crc_publish(&job, got, 0);
        }
        zip_source_close(src);
        zip_source_free(src);
        src = NULL;
    }
    if (threaded) {
        crc_publish(&job, got, 1);
        pthread_join(worker, NULL);
        pthread_cond_destroy(&job.more);
        pthread_mutex_destroy(&job.lock);
        crc = job.crc;
    }
    if (rc) return rc;
    if (crc != r->crc)
        ARR_ERR(RPX_EFORMAT, "cannot read the data (CRC error); the file is corrupt");
    return 0;

fail:
    if (src) zip_source_free(src);
    return rc;
}

/* Read one NPY stream of exactly `size` bytes into a new array of npz.
 * `member` is the zip member's name when it lacks the .npy suffix (it is then
 * refused unless it starts like an NPY array), else NULL. */
static int load_array(rpx_npz *npz, reader *r, zip_uint64_t size, const char *file,
                      const char *name, const char *member, int compressed, rpx_error *err)
{
    unsigned char prefix[12];
    unsigned char *hdr = NULL;
    char what[600];
    rpx_npy_header h;
    npz_map map = {NULL, 0}, map2 = {NULL, 0};
    size_t plen, hlen, total, itemsize;
    zip_int64_t got;
    unsigned char extra;
    uint32_t hdr_crc = 0;
    int rc;

    snprintf(what, sizeof what, "%s: array '%s'", file, name);

    /* magic and version */
    got = read_full(r, prefix, size < 8 ? (size_t)size : 8);
    if (got < 0)
        ARR_ERR(RPX_EFORMAT, "cannot read the NPY header (%s); the file is corrupt",
                rd_strerror(r));
    if (member && (got < RPX__NPY_MAGIC_LEN ||
                   memcmp(prefix, RPX__NPY_MAGIC, RPX__NPY_MAGIC_LEN) != 0)) {
        rpx_error_set(err, RPX_EFORMAT,
                      "%s: member '%s' is not a .npy array; an NPZ file may hold only arrays "
                      "written by numpy.savez (remove the member)",
                      file, member);
        return RPX_EFORMAT;
    }
    if (got < 8) return rpx_npy_parse_header(prefix, (size_t)got, what, &h, err);
    plen = rpx__npy_prefix_len(prefix[6]);
    if (plen == 0 || prefix[7] != 0 || memcmp(prefix, RPX__NPY_MAGIC, RPX__NPY_MAGIC_LEN) != 0)
        return rpx_npy_parse_header(prefix, 8, what, &h, err);
    if (size < plen)
        ARR_ERR(RPX_EFORMAT, "NPY header is truncated (only %llu bytes present); "
                             "the file is truncated",
                (unsigned long long)size);
    got = read_full(r, prefix + 8, plen - 8);
    if (got != (zip_int64_t)(plen - 8))
        ARR_ERR(RPX_EFORMAT, "cannot read the NPY header (%s); the file is corrupt",
                got < 0 ? rd_strerror(r) : "it ends early");
    hlen = (size_t)prefix[8] | (size_t)prefix[9] << 8;
    if (plen == 12) hlen |= (size_t)prefix[10] << 16 | (size_t)prefix[11] << 24;
    if (hlen > RPX__NPY_MAX_HEADER - plen)
        return rpx_npy_parse_header(prefix, plen, what, &h, err); /* reports the limit */
    total = plen + hlen;
    if (total > size)
        ARR_ERR(RPX_EFORMAT,
                "NPY header is truncated (%zu bytes declared, only %llu present); the file "
                "is truncated",
                total, (unsigned long long)size);

    /* the header dict */
    if (!(hdr = malloc(total))) ARR_ERR(RPX_ENOMEM, "out of memory reading the NPY header");
    memcpy(hdr, prefix, plen);
    got = read_full(r, hdr + plen, hlen);
    if (got != (zip_int64_t)hlen)
        ARR_ERR(RPX_EFORMAT, "cannot read the NPY header (%s); the file is corrupt",
                got < 0 ? rd_strerror(r) : "it ends early");
    rc = rpx_npy_parse_header(hdr, total, what, &h, err);
    if (rc == 0 && r->za) hdr_crc = crc32_update(0, hdr, total);
    free(hdr);
    hdr = NULL;
    if (rc) return rc;

    /* the header's shape must describe the member's bytes exactly */
    if (h.nbytes != size - total) {
        char shape[96];
        rpx__npy_shape_str(shape, sizeof shape, h.ndim, h.shape);
        ARR_ERR(RPX_EFORMAT,
                "header shape %s with dtype '%s' needs %zu data bytes but the %s holds "
                "%llu; the file is corrupt or truncated",
                shape, h.descr, h.nbytes, (member || compressed >= 0) ? "member" : "file",
                (unsigned long long)(size - total));
    }

    /* the data, straight into its final buffer */
    if (map_alloc(h.nbytes, &map) < 0)
        ARR_ERR(RPX_ENOMEM, "cannot allocate %zu bytes (%s); free memory or use smaller inputs",
                h.nbytes, strerror(errno));
    if (r->za) {
        rc = read_stored(r, map.addr, h.nbytes, total, hdr_crc, file, name, err);
        if (rc) goto fail;
    } else if (h.nbytes) {
        got = read_full(r, map.addr, h.nbytes);
        if (got < 0)
            ARR_ERR(RPX_EFORMAT, "cannot read the data (%s); the file is corrupt",
                    rd_strerror(r));
        if ((size_t)got != h.nbytes)
            ARR_ERR(RPX_EFORMAT,
                    "the data ends after %lld of %zu bytes; the file is truncated or corrupt",
                    (long long)got, h.nbytes);
    }
    /* reading to the end makes libzip check the CRC and the size */
    got = r->za ? 0 : rd(r, &extra, 1);
    if (got < 0)
        ARR_ERR(RPX_EFORMAT, "cannot read the data (%s); the file is corrupt", rd_strerror(r));
    if (got > 0)
        ARR_ERR(RPX_EFORMAT,
                "the member holds more bytes than its header and the zip directory declare; "
                "the file is corrupt");

    itemsize = rpx_dtype_size(h.dtype);
    if (h.big_endian && h.count) rpx__npy_byteswap(map.addr, h.count, itemsize);
    if (h.fortran_order && h.ndim >= 2 && h.count) {
        if (map_alloc(h.nbytes, &map2) < 0)
            ARR_ERR(RPX_ENOMEM,
                    "cannot allocate %zu bytes to reorder the Fortran-order array (%s); save "
                    "it in C order (np.ascontiguousarray) or free memory",
                    h.nbytes, strerror(errno));
        rpx__npy_fortran_to_c(map2.addr, map.addr, h.ndim, h.shape, itemsize);
        map_free(&map);
        map = map2;
        map2.addr = NULL;
        map2.len = 0;
    }
    if (map.addr && mprotect(map.addr, map.len, PROT_READ) != 0)
        ARR_ERR(RPX_EIO, "cannot make the data read-only (%s)", strerror(errno));

    if (npz_reserve(npz) < 0) ARR_ERR(RPX_ENOMEM, "out of memory");
    {
        rpx_tensor *t = &npz->tensors[npz->count];
        rpx_npz_array_info *info = &npz->infos[npz->count];
        char *nm = strdup(name);
        if (!nm) ARR_ERR(RPX_ENOMEM, "out of memory");
        memset(t, 0, sizeof *t);
        t->name = nm;
        t->dtype = h.dtype;
        t->ndim = h.ndim;
        memcpy(t->shape, h.shape, sizeof t->shape);
        t->count = h.count;
        t->nbytes = h.nbytes;
        t->data = map.addr ? map.addr : empty_data;
        info->name = nm;
        info->header = h;
        info->compressed = compressed > 0;
        npz->maps[npz->count] = map;
        npz->count++;
    }
    return 0;

fail:
    free(hdr);
    map_free(&map);
    map_free(&map2);
    return rc;
}
#undef ARR_ERR

/* ---- a single .npy ----------------------------------------------------- */

static int load_npy(rpx_npz *npz, zip_source_t *src, zip_uint64_t size, const char *file,
                    rpx_error *err)
{
    const char *base = strrchr(file, '/');
    char *stem;
    char *dot;
    reader r = {NULL, src, NULL, 0, 0};
    int rc;

    base = base ? base + 1 : file;
    if (!(stem = strdup(base))) return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", file);
    dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
    if (zip_source_open(src) < 0) {
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot read (%s)", file,
                           zip_error_strerror(zip_source_error(src)));
    } else {
        rc = load_array(npz, &r, size, file, stem, NULL, -1, err);
        zip_source_close(src);
    }
    free(stem);
    return rc;
}

/* ---- an NPZ archive ---------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

#define MEM_ERR(code, ...)                                               \
    do {                                                                 \
        rpx_error_set(err, (code), __VA_ARGS__);                         \
        rpx_error_prefix(err, "%s: array '%s'", file, name);             \
        rc = (code);                                                     \
        goto done;                                                       \
    } while (0)

static int load_zip(rpx_npz *npz, zip_t *za, zip_uint64_t archive_size, const char *file,
                    rpx_error *err)
{
    zip_int64_t n = zip_get_num_entries(za, 0), i;
    int rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        zip_stat_t st;
        zip_file_t *zf = NULL;
        char *name = NULL;
        const char *member;
        bool npy_suffix;
        reader r;

        zip_stat_init(&st);
        if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) < 0)
            return rpx_error_set(err, RPX_EFORMAT,
                                 "%s: cannot read zip entry %lld (%s); the file is corrupt",
                                 file, (long long)i, zip_strerror(za));
        if (!(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE) ||
            !(st.valid & ZIP_STAT_COMP_SIZE) || !(st.valid & ZIP_STAT_COMP_METHOD))
            return rpx_error_set(err, RPX_EFORMAT,
                                 "%s: zip entry %lld lacks its name or sizes; the file is "
                                 "corrupt",
                                 file, (long long)i);
        member = st.name;
        if (ends_with(member, "/")) continue; /* a directory entry */
        npy_suffix = ends_with(member, ".npy");
        name = strdup(member);
        if (!name) return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", file);
        if (npy_suffix) name[strlen(name) - 4] = '\0';
        if (name[0] == '\0') {
            rc = rpx_error_set(err, RPX_EFORMAT,
                               "%s: member '%s' gives an array with an empty name; save every "
                               "array under a non-empty name",
                               file, member);
            goto done;
        }
        if (npz_has_name(npz, name)) {
            rc = rpx_error_set(err, RPX_EFORMAT,
                               "%s: array '%s' appears twice (member '%s' repeats an earlier "
                               "member); save every array under one unique name",
                               file, name, member);
            goto done;
        }
        if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
            MEM_ERR(RPX_EUNSUPPORTED,
                    "member '%s' is encrypted; save the inputs without a password", member);
        if (st.comp_size > archive_size)
            MEM_ERR(RPX_EFORMAT,
                    "member '%s' declares %llu bytes of data but the whole file has %llu; "
                    "the file is corrupt or truncated",
                    member, (unsigned long long)st.comp_size,
                    (unsigned long long)archive_size);
        if (st.comp_method == ZIP_CM_STORE) {
            if (st.comp_size != st.size)
                MEM_ERR(RPX_EFORMAT,
                        "stored member '%s' declares %llu bytes but occupies %llu; the file is "
                        "corrupt",
                        member, (unsigned long long)st.size, (unsigned long long)st.comp_size);
        } else if (st.comp_method == ZIP_CM_DEFLATE) {
            if (st.size / RPX__DEFLATE_MAX_RATIO > st.comp_size + RPX__DEFLATE_SLACK ||
                st.size > (zip_uint64_t)st.comp_size * RPX__DEFLATE_MAX_RATIO +
                              RPX__DEFLATE_SLACK)
                MEM_ERR(RPX_EFORMAT,
                        "member '%s' declares %llu uncompressed bytes, more than its %llu "
                        "deflated bytes can hold; the file is corrupt (or a zip bomb)",
                        member, (unsigned long long)st.size, (unsigned long long)st.comp_size);
        } else {
            MEM_ERR(RPX_EUNSUPPORTED,
                    "member '%s' uses zip compression method %d; only stored and deflated "
                    "members are supported (write it with numpy.savez or "
                    "numpy.savez_compressed)",
                    member, (int)st.comp_method);
        }

        if (!(zf = zip_fopen_index(za, (zip_uint64_t)i, 0)))
            MEM_ERR(RPX_EFORMAT, "cannot open member '%s' (%s); the file is corrupt", member,
                    zip_strerror(za));
        r.zf = zf;
        r.src = NULL;
        r.za = NULL;
        r.index = (zip_uint64_t)i;
        r.crc = 0;
        if (st.comp_method == ZIP_CM_STORE && (st.valid & ZIP_STAT_CRC)) {
            r.za = za;
            r.crc = st.crc;
        }
        rc = load_array(npz, &r, st.size, file, name, npy_suffix ? NULL : member,
                        st.comp_method == ZIP_CM_DEFLATE, err);
    done:
        if (zf) zip_fclose(zf);
        free(name);
    }
    return rc;
}
#undef MEM_ERR

static int load_source(zip_source_t *src, const char *file, rpx_npz **out, rpx_error *err)
{
    zip_stat_t st;
    zip_error_t ze;
    zip_t *za = NULL;
    unsigned char magic[RPX__NPY_MAGIC_LEN];
    zip_int64_t got = 0;
    zip_uint64_t size;
    rpx_npz *npz;
    int rc;

    zip_stat_init(&st);
    if (zip_source_stat(src, &st) < 0 || !(st.valid & ZIP_STAT_SIZE))
        return rpx_error_set(err, RPX_EIO, "%s: cannot read (%s)", file,
                             zip_error_strerror(zip_source_error(src)));
    size = st.size;
    if (size == 0)
        return rpx_error_set(err, RPX_EFORMAT,
                             "%s: the file is empty; save the inputs with numpy.savez", file);
    if (zip_source_open(src) < 0)
        return rpx_error_set(err, RPX_EIO, "%s: cannot read (%s)", file,
                             zip_error_strerror(zip_source_error(src)));
    got = zip_source_read(src, magic, sizeof magic);
    zip_source_close(src);
    if (got < 0)
        return rpx_error_set(err, RPX_EIO, "%s: cannot read (%s)", file,
                             zip_error_strerror(zip_source_error(src)));

    if (!(npz = calloc(1, sizeof *npz))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");

    if (got == (zip_int64_t)sizeof magic && memcmp(magic, RPX__NPY_MAGIC, sizeof magic) == 0) {
        rc = load_npy(npz, src, size, file, err);
    } else {
        /* First with libzip's consistency checks. If they fail, open it again
         * without them: our own checks of each member then usually say
         * precisely what is wrong (a duplicate name, a size beyond the file);
         * if they find nothing, the archive is still refused. */
        zip_error_t strict;
        int strict_code;
        zip_error_init(&strict);
        zip_source_keep(src);
        za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &strict);
        if (!za) zip_source_free(src); /* drop the reference taken above */
        strict_code = za ? ZIP_ER_OK : zip_error_code_zip(&strict);
        if (!za && (strict_code == ZIP_ER_NOZIP || strict_code == ZIP_ER_INCONS ||
                    strict_code == ZIP_ER_EXISTS)) {
            zip_error_init(&ze);
            zip_source_keep(src);
            za = zip_open_from_source(src, ZIP_RDONLY, &ze);
            if (!za) zip_source_free(src);
            zip_error_fini(&ze);
        }
        if (!za) {
            if (strict_code == ZIP_ER_NOZIP)
                rc = rpx_error_set(err, RPX_EFORMAT,
                                   "%s: not an NPZ (zip) or NPY file, or it is truncated; "
                                   "save the inputs with numpy.savez or numpy.save",
                                   file);
            else
                rc = rpx_error_set(err, RPX_EFORMAT,
                                   "%s: cannot read the zip archive (%s); the file is corrupt "
                                   "or truncated, write it again with numpy.savez",
                                   file, zip_error_strerror(&strict));
        } else {
            rc = load_zip(npz, za, size, file, err);
            zip_discard(za);
            if (rc == 0 && strict_code != ZIP_ER_OK)
                rc = rpx_error_set(err, RPX_EFORMAT,
                                   "%s: the zip archive is inconsistent (%s); the file is "
                                   "corrupt, write it again with numpy.savez",
                                   file, zip_error_strerror(&strict));
        }
        zip_error_fini(&strict);
    }
    if (rc) {
        rpx_npz_free(npz);
        return rc;
    }
    npz->inputs.count = npz->count;
    npz->inputs.tensors = npz->tensors;
    *out = npz;
    return 0;
}

int rpx__npz_load_buffer(const void *data, size_t len, const char *display, rpx_npz **out,
                         rpx_error *err)
{
    zip_error_t ze;
    zip_source_t *src;
    int rc;

    if (!out) return rpx_error_set(err, RPX_EINVAL, "rpx_npz_load: no output given");
    *out = NULL;
    if (!display) display = "(buffer)";
    if (!data || len == 0)
        return rpx_error_set(err, RPX_EFORMAT,
                             "%s: the file is empty; save the inputs with numpy.savez", display);
    zip_error_init(&ze);
    src = zip_source_buffer_create(data, len, 0, &ze);
    if (!src) {
        rc = rpx_error_set(err, RPX_ENOMEM, "%s: %s", display, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return rc;
    }
    zip_error_fini(&ze);
    rc = load_source(src, display, out, err);
    zip_source_free(src);
    return rc;
}

int rpx_npz_load(const char *path, rpx_npz **out, rpx_error *err)
{
    zip_error_t ze;
    zip_source_t *src;
    struct stat sb;
    int fd, rc;

    if (!out) return rpx_error_set(err, RPX_EINVAL, "rpx_npz_load: no output given");
    *out = NULL;
    if (!path || !*path) return rpx_error_set(err, RPX_EINVAL, "rpx_npz_load: no path given");
    if ((rc = rpx__user_file_regular(path, NULL, err)) != 0) return rc; /* a FIFO would block */
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return rpx_error_set(err, RPX_EIO, "%s: cannot open (%s); check the path", path,
                             strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        rc = rpx_error_set(err, RPX_EINVAL, "%s: not a regular file; give the path of an .npz "
                                            "or .npy file",
                           path);
        close(fd);
        return rc;
    }
    close(fd);
    zip_error_init(&ze);
    src = zip_source_file_create(path, 0, -1, &ze);
    if (!src) {
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot open (%s)", path, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return rc;
    }
    zip_error_fini(&ze);
    rc = load_source(src, path, out, err);
    zip_source_free(src);
    return rc;
}
