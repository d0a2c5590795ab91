/* rpxprof/npz.h — NPY/NPZ input files: reading, writing, hashing.
 *
 * Owns: parsing NPY headers (format versions 1.0, 2.0, 3.0), loading every
 * array of an NPZ archive (np.savez or np.savez_compressed) or a single .npy
 * file into 64-byte-aligned, read-only, C-order, native-endian buffers, and
 * writing NPZ files that numpy.load reads back identically.
 *
 * Lifecycle: rpx_npz_load → rpx_npz_inputs / rpx_npz_array_info → rpx_npz_free.
 *            rpx_npz_writer_open → rpx_npz_writer_add... → rpx_npz_writer_close
 *            (or rpx_npz_writer_discard). */
#ifndef RPXPROF_NPZ_H
#define RPXPROF_NPZ_H

#include <stddef.h>
#include <stdint.h>

#include "rpxprof/model.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* numpy's name of a dtype ("uint8", "float32", "bool"); "unknown" otherwise. */
RPX_API const char *rpx_dtype_name(rpx_dtype dtype);
/* Parse numpy's name ("uint8", "float16", "bool", ...). 0 or RPX_EINVAL. */
RPX_API int rpx_dtype_from_name(const char *name, rpx_dtype *out);

/* A parsed NPY header. */
typedef struct rpx_npy_header {
    int major, minor;             /* format version: 1.0, 2.0 or 3.0 */
    char descr[32];               /* dtype as stored, e.g. "<f4", "|u1", ">i8" */
    rpx_dtype dtype;
    int big_endian;               /* data is stored big-endian (needs a swap) */
    int fortran_order;            /* data is stored in Fortran order */
    int ndim;
    int64_t shape[RPX_MAX_DIMS];
    size_t count;                 /* elements */
    size_t nbytes;                /* data bytes that follow the header */
    size_t data_offset;           /* bytes from the start of the file to the data */
} rpx_npy_header;

/* Parse the NPY header at the start of buf (len bytes available; the data need
 * not be present). `what` names the array in messages ("inputs.npz: array 'rgb'").
 * Checks the magic, version, header length, dict syntax, dtype (numeric only:
 * object, structured, string, complex, datetime are refused), and that the
 * shape's byte size does not overflow. 0 or a negative RPX_E* code. */
RPX_API int rpx_npy_parse_header(const void *buf, size_t len, const char *what,
                         rpx_npy_header *out, rpx_error *err);

/* Per-array facts about how it was stored (for `rpxprof inputs show`). */
typedef struct rpx_npz_array_info {
    const char *name;
    rpx_npy_header header;        /* as stored in the file */
    int compressed;               /* member was deflated */
} rpx_npz_array_info;

typedef struct rpx_npz rpx_npz;

/* Load every array of an .npz (or a single .npy, named after the file's stem).
 * Arrays keep file order. Refuses, with the file, array, reason and fix in the
 * message: a non-zip file, truncated or corrupt members, duplicate names,
 * members that are not .npy, non-numeric dtypes, shapes that overflow or
 * disagree with the member size, sizes beyond what the file could hold. */
RPX_API int rpx_npz_load(const char *path, rpx_npz **out, rpx_error *err);
RPX_API void rpx_npz_free(rpx_npz *npz);
/* The arrays, as handed to a model. Valid until rpx_npz_free. */
RPX_API const rpx_inputs *rpx_npz_inputs(const rpx_npz *npz);
RPX_API const rpx_npz_array_info *rpx_npz_array_info_at(const rpx_npz *npz, size_t index);

/* Writer. Arrays are given in C order and native byte order; `data` must stay
 * valid until close or discard. The file appears atomically at close. */
typedef struct rpx_npz_writer rpx_npz_writer;
RPX_API int rpx_npz_writer_open(const char *path, int compress, rpx_npz_writer **out, rpx_error *err);
RPX_API int rpx_npz_writer_add(rpx_npz_writer *w, const char *name, rpx_dtype dtype, int ndim,
                       const int64_t *shape, const void *data, rpx_error *err);
RPX_API int rpx_npz_writer_close(rpx_npz_writer *w, rpx_error *err);
RPX_API void rpx_npz_writer_discard(rpx_npz_writer *w);

/* Making inputs without numpy (`rpxprof inputs make`): arrays from text specs
 * NAME=SHAPE:DTYPE[=FILL] (SHAPE: dimensions joined by 'x' or the sign U+00D7,
 * or 'scalar'; FILL a number, default 0, or 'random': integers uniform over the
 * dtype's range, bool 0/1, floats uniform in [0, 1), from one generator seeded
 * by `seed`, so the same specs and seed give the same bytes).
 * Lifecycle: rpx_npz_maker_create → rpx_npz_maker_add... → rpx_npz_maker_write
 * → rpx_npz_maker_free. */
typedef struct rpx_npz_maker rpx_npz_maker;
RPX_API int rpx_npz_maker_create(uint64_t seed, rpx_npz_maker **out);
/* Parse one spec and make its data. RPX_EINVAL with a message quoting the spec
 * (a bad shape, an unknown dtype, a fill that is not a number or does not fit
 * the dtype, a name given twice), RPX_ENOMEM when the data cannot be held. */
RPX_API int rpx_npz_maker_add(rpx_npz_maker *m, const char *spec, rpx_error *err);
/* Write the arrays, in the order added, as an NPZ at `path` (np.savez, or
 * np.savez_compressed with `compress`). */
RPX_API int rpx_npz_maker_write(const rpx_npz_maker *m, const char *path, int compress,
                                rpx_error *err);
RPX_API void rpx_npz_maker_free(rpx_npz_maker *m);

/* Lower-case hex SHA-256 of a file's bytes into hex[65]. */
RPX_API int rpx_file_sha256(const char *path, char hex[65], rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
