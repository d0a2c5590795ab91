/* io/npz_write.c — owns writing NPZ files that numpy.load reads back
 * identically: one NAME.npy member per array with numpy's exact NPY 1.0
 * header (2.0 only for a header beyond 65535 bytes), stored or deflated.
 *
 * libzip writes the archive to a temporary file next to the target and
 * renames it over the target in zip_close, so the file appears atomically;
 * until then nothing is written, and a discarded writer leaves nothing.
 *
 * The same arrays make the same bytes: every member carries the same time
 * (1980-01-01 00:00, the first a zip can hold) and the same attributes, and
 * no extra fields; the archive comment is RPX_OUTPUT_NPZ_COMMENT, by which
 * rpxprof knows its own files (src/common/output.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "io/npy_internal.h"
#include "rpxprof/error.h"
#include "common/output.h"

/* MS-DOS date and time of every member: 1980-01-01 00:00:00. */
#define RPX__NPZ_DOSDATE ((0u << 9) | (1u << 5) | 1u)
#define RPX__NPZ_DOSTIME 0u
/* external attributes: a regular file, rw-r--r--, made on Unix */
#define RPX__NPZ_ATTRIBUTES ((zip_uint32_t)0100644 << 16)

#define RPX__NPZ_MAX_NAME 1024

struct rpx_npz_writer {
    zip_t *za;
    char *path;
    int compress;
    size_t count, cap;
    char **names;            /* array names, for the duplicate check */
    unsigned char **headers; /* NPY headers; libzip reads them at close */
};

static void writer_free(rpx_npz_writer *w)
{
    size_t i;
    for (i = 0; i < w->count; i++) {
        free(w->names[i]);
        free(w->headers[i]);
    }
    free(w->names);
    free(w->headers);
    free(w->path);
    free(w);
}

int rpx_npz_writer_open(const char *path, int compress, rpx_npz_writer **out, rpx_error *err)
{
    rpx_npz_writer *w;
    zip_error_t ze;
    int zerr = 0, rc;

    if (!out) return rpx_error_set(err, RPX_EINVAL, "rpx_npz_writer_open: no output given");
    *out = NULL;
    if (!path || !*path)
        return rpx_error_set(err, RPX_EINVAL, "rpx_npz_writer_open: no path given");
    if (!(w = calloc(1, sizeof *w)) || !(w->path = strdup(path))) {
        free(w);
        return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", path);
    }
    w->compress = compress ? 1 : 0;
    /* ZIP_TRUNCATE: an existing file is replaced at close, never read. */
    w->za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    if (!w->za) {
        zip_error_init_with_code(&ze, zerr);
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot create the NPZ file (%s); check the path",
                           path, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        writer_free(w);
        return rc;
    }
    if (zip_set_archive_comment(w->za, RPX_OUTPUT_NPZ_COMMENT,
                                (zip_uint16_t)strlen(RPX_OUTPUT_NPZ_COMMENT)) < 0) {
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot set the archive comment (%s)", path,
                           zip_strerror(w->za));
        zip_discard(w->za);
        writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* Is s valid UTF-8 (no overlongs, no surrogates)? */
static bool valid_utf8(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s;
        int n;
        unsigned cp;
        if (c < 0x80) {
            s++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            n = 1;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        s++;
        for (int i = 0; i < n; i++, s++) {
            if ((*s & 0xc0) != 0x80) return false;
            cp = cp << 6 | (*s & 0x3fu);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
    }
    return true;
}

int rpx_npz_writer_add(rpx_npz_writer *w, const char *name, rpx_dtype dtype, int ndim,
                       const int64_t *shape, const void *data, rpx_error *err)
{
    zip_buffer_fragment_t frags[2];
    zip_error_t ze;
    zip_source_t *src;
    zip_int64_t idx;
    unsigned char *hdr = NULL;
    char *member = NULL, *nm = NULL;
    size_t hlen = 0, count = 1, nbytes, i, len;
    int rc;

    if (!w) return rpx_error_set(err, RPX_EINVAL, "rpx_npz_writer_add: no writer given");
    if (!name || !*name)
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: an array has an empty name; give every array a name",
                             w->path);
    len = strlen(name);
    if (len > RPX__NPZ_MAX_NAME)
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: array name of %zu bytes is longer than %d; use a shorter name",
                             w->path, len, RPX__NPZ_MAX_NAME);
    if (!valid_utf8((const unsigned char *)name))
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: array name is not valid UTF-8; use a UTF-8 name", w->path);
    if (name[len - 1] == '/')
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: array '%s': a name may not end with '/'; remove the slash",
                             w->path, name);
    for (i = 0; i < w->count; i++)
        if (strcmp(w->names[i], name) == 0)
            return rpx_error_set(err, RPX_EINVAL,
                                 "%s: array '%s' is added twice; give every array a unique "
                                 "name",
                                 w->path, name);
    if (rpx_dtype_size(dtype) == 0)
        return rpx_error_set(err, RPX_EINVAL, "%s: array '%s': unknown dtype %d", w->path,
                             name, (int)dtype);
    if (ndim < 0 || ndim > RPX_MAX_DIMS)
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: array '%s': %d dimensions; an array has 0 to %d", w->path,
                             name, ndim, RPX_MAX_DIMS);
    if (ndim > 0 && !shape)
        return rpx_error_set(err, RPX_EINVAL, "%s: array '%s': no shape given", w->path, name);
    nbytes = rpx_dtype_size(dtype);
    for (i = 0; i < (size_t)ndim; i++) {
        if (shape[i] < 0)
            return rpx_error_set(err, RPX_EINVAL,
                                 "%s: array '%s': dimension %zu is negative (%lld)", w->path,
                                 name, i, (long long)shape[i]);
        if (shape[i] == 0) {
            count = 0;
            continue;
        }
        if (__builtin_mul_overflow(nbytes, (size_t)shape[i], &nbytes) ||
            nbytes > (size_t)INT64_MAX / 2)
            return rpx_error_set(err, RPX_EINVAL, "%s: array '%s': the shape overflows",
                                 w->path, name);
        count *= (size_t)shape[i];
    }
    nbytes = count * rpx_dtype_size(dtype);
    if (nbytes && !data)
        return rpx_error_set(err, RPX_EINVAL, "%s: array '%s': no data given", w->path, name);

    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        char **n2;
        unsigned char **h2;
        if (!(n2 = realloc(w->names, cap * sizeof *n2)))
            return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", w->path);
        w->names = n2;
        if (!(h2 = realloc(w->headers, cap * sizeof *h2)))
            return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", w->path);
        w->headers = h2;
        w->cap = cap;
    }
    if (!(hdr = rpx__npy_make_header(dtype, ndim, shape, &hlen)) || !(nm = strdup(name)) ||
        !(member = malloc(len + 5))) {
        rc = rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", w->path);
        goto fail;
    }
    memcpy(member, name, len);
    memcpy(member + len, ".npy", 5);

    frags[0].data = hdr;
    frags[0].length = hlen;
    frags[1].data = (zip_uint8_t *)(uintptr_t)data; /* only read, never freed */
    frags[1].length = nbytes;
    zip_error_init(&ze);
    src = zip_source_buffer_fragment_create(frags, nbytes ? 2 : 1, 0, &ze);
    if (!src) {
        rc = rpx_error_set(err, RPX_ENOMEM, "%s: array '%s': %s", w->path, name,
                           zip_error_strerror(&ze));
        zip_error_fini(&ze);
        goto fail;
    }
    zip_error_fini(&ze);
    idx = zip_file_add(w->za, member, src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
        zip_source_free(src);
        rc = rpx_error_set(err, RPX_EIO, "%s: array '%s': cannot add it (%s)", w->path, name,
                           zip_strerror(w->za));
        goto fail;
    }
    if (zip_set_file_compression(w->za, (zip_uint64_t)idx,
                                 w->compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) < 0 ||
        zip_file_set_dostime(w->za, (zip_uint64_t)idx, RPX__NPZ_DOSTIME, RPX__NPZ_DOSDATE,
                             0) < 0 ||
        zip_file_set_external_attributes(w->za, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX,
                                         RPX__NPZ_ATTRIBUTES) < 0) {
        rc = rpx_error_set(err, RPX_EIO, "%s: array '%s': cannot set its compression, time "
                                         "or attributes (%s)",
                           w->path, name, zip_strerror(w->za));
        zip_delete(w->za, (zip_uint64_t)idx);
        goto fail;
    }
    free(member);
    w->names[w->count] = nm;
    w->headers[w->count] = hdr;
    w->count++;
    return 0;

fail:
    free(hdr);
    free(nm);
    free(member);
    return rc;
}

/* An archive without members: libzip writes no file at all for it, numpy
 * writes the 22-byte end-of-central-directory record. Do the same, with the
 * archive comment after it, through a temporary file and a rename. */
static int write_empty_zip(const char *path, rpx_error *err)
{
    unsigned char eocd[22 + sizeof RPX_OUTPUT_NPZ_COMMENT - 1] = {0x50, 0x4b, 0x05, 0x06};
    size_t n = strlen(path), clen = sizeof RPX_OUTPUT_NPZ_COMMENT - 1;
    char *tmp = malloc(n + 8);
    int fd, rc = 0;
    ssize_t wr;

    if (!tmp) return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", path);
    /* the comment's length (little-endian) closes the record; the comment follows */
    eocd[20] = (unsigned char)(clen & 0xff);
    eocd[21] = (unsigned char)(clen >> 8);
    memcpy(eocd + 22, RPX_OUTPUT_NPZ_COMMENT, clen);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".XXXXXX", 8);
    fd = mkstemp(tmp);
    if (fd < 0) {
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot write (%s); check the folder", path,
                           strerror(errno));
        free(tmp);
        return rc;
    }
    {
        mode_t mask = umask(0);
        umask(mask);
        (void)fchmod(fd, 0666 & ~mask);
    }
    errno = 0;
    wr = write(fd, eocd, sizeof eocd);
    if (wr != (ssize_t)sizeof eocd) {
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot write (%s)", path,
                           strerror(errno ? errno : EIO));
        close(fd);
    } else if (close(fd) != 0 || rename(tmp, path) != 0) {
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot write (%s)", path, strerror(errno));
    }
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

int rpx_npz_writer_close(rpx_npz_writer *w, rpx_error *err)
{
    int rc = 0;
    if (!w) return rpx_error_set(err, RPX_EINVAL, "rpx_npz_writer_close: no writer given");
    if (w->count == 0) {
        zip_discard(w->za);
        rc = write_empty_zip(w->path, err);
    } else if (zip_close(w->za) < 0) {
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot write the NPZ file (%s); check the "
                                         "folder and the free space",
                           w->path, zip_strerror(w->za));
        zip_discard(w->za);
    }
    writer_free(w);
    return rc;
}

void rpx_npz_writer_discard(rpx_npz_writer *w)
{
    if (!w) return;
    zip_discard(w->za);
    writer_free(w);
}
