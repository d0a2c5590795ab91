/* io/npy_internal.h — internals shared by npy.c, npz.c, npz_write.c, the
 * unit tests and the fuzz targets. Not installed, not part of the ABI. */
#ifndef RPXPROF_IO_NPY_INTERNAL_H
#define RPXPROF_IO_NPY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "rpxprof/npz.h"

/* Magic string at the start of every NPY file/member. */
#define RPX__NPY_MAGIC "\x93NUMPY"
#define RPX__NPY_MAGIC_LEN 6
/* Largest header (prefix + dict) we accept; numpy's own reader stops at 10000
 * bytes by default, our writer never comes near this. */
#define RPX__NPY_MAX_HEADER ((size_t)1 << 20)

/* Bytes before the header dict for a format major version (10 or 12), or 0
 * for an unknown version. */
size_t rpx__npy_prefix_len(int major);

/* Reverse the byte order of `count` items of `itemsize` bytes in place. */
void rpx__npy_byteswap(void *data, size_t count, size_t itemsize);

/* Copy an array stored in Fortran order (first index fastest) at src into C
 * order (last index fastest) at dst. The buffers must not overlap. */
void rpx__npy_fortran_to_c(void *dst, const void *src, int ndim, const int64_t *shape,
                           size_t itemsize);

/* Shape as Python prints a tuple: "()", "(5,)", "(2, 3)". Truncated with
 * "...)" if it does not fit. Returns buf. */
char *rpx__npy_shape_str(char *buf, size_t size, int ndim, const int64_t *shape);

/* The header numpy's np.save writes for a C-order native array (version 1.0,
 * or 2.0 if it does not fit), padded so the data starts at a multiple of 64.
 * Returns a malloc'd buffer of *len bytes, or NULL (out of memory / bad dtype). */
unsigned char *rpx__npy_make_header(rpx_dtype dtype, int ndim, const int64_t *shape,
                                    size_t *len);

/* CRC-32 (zip/gzip polynomial) of len bytes, continuing from crc (0 to start). */
uint32_t rpx__crc32(uint32_t crc, const void *data, size_t len);

/* rpx_npz_load on bytes in memory (what the fuzz target uses; rpx_npz_load
 * shares the same code). `display` is the file name used in messages and for
 * the array name of a single .npy. The buffer is not retained. */
int rpx__npz_load_buffer(const void *data, size_t len, const char *display, rpx_npz **out,
                         rpx_error *err);

#endif
