/* fuzz_npy_header.c — libFuzzer target for rpx_npy_parse_header and the
 * conversions the loader applies after it. Properties checked on every
 * accepted header: the sizes are consistent, the header numpy-style writer
 * makes from it parses back to the same shape, and byte-swap/Fortran→C on
 * the data that follows stay within their buffers (ASan). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy_internal.h"
#include "rpxprof/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpx_npy_header h, h2;
    rpx_error err = {0};
    size_t itemsize, count = 1, hlen;
    unsigned char *hdr;
    char shape[128];
    int k;

    if (rpx_npy_parse_header(data, size, "fuzz.npy", &h, &err) != 0) {
        if (err.code == 0 || err.message[0] == '\0') abort(); /* refusals always explain */
        return 0;
    }
    itemsize = rpx_dtype_size(h.dtype);
    if (!itemsize || h.ndim < 0 || h.ndim > RPX_MAX_DIMS || h.data_offset > size) abort();
    for (k = 0; k < h.ndim; k++) {
        if (h.shape[k] < 0) abort();
        count *= (size_t)h.shape[k];
    }
    if (count != h.count || h.nbytes != h.count * itemsize) abort();
    rpx__npy_shape_str(shape, sizeof shape, h.ndim, h.shape);

    /* what the writer makes of this shape parses back identically */
    hdr = rpx__npy_make_header(h.dtype, h.ndim, h.shape, &hlen);
    if (!hdr) abort();
    if (rpx_npy_parse_header(hdr, hlen, NULL, &h2, &err) != 0) abort();
    if (h2.ndim != h.ndim || h2.dtype != h.dtype || h2.count != h.count || hlen % 64 != 0)
        abort();
    for (k = 0; k < h.ndim; k++)
        if (h2.shape[k] != h.shape[k]) abort();
    free(hdr);

    /* convert the data that is present, as the loader would */
    if (h.nbytes > 0 && h.nbytes <= size - h.data_offset && h.nbytes <= ((size_t)1 << 20)) {
        unsigned char *a = malloc(h.nbytes), *b = malloc(h.nbytes);
        if (!a || !b) abort();
        memcpy(a, data + h.data_offset, h.nbytes);
        if (h.big_endian) rpx__npy_byteswap(a, h.count, itemsize);
        if (h.fortran_order) rpx__npy_fortran_to_c(b, a, h.ndim, h.shape, itemsize);
        free(a);
        free(b);
    }
    return 0;
}
