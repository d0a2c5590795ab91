/* fuzz_npz.c — libFuzzer target for the whole loader: the input bytes are an
 * .npz or .npy file, loaded through rpx__npz_load_buffer (the same code as
 * rpx_npz_load, over a libzip buffer source). Every accepted array must be
 * aligned, sized as its shape says, and readable to its last byte. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy_internal.h"
#include "rpxprof/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpx_npz *npz = NULL;
    rpx_error err = {0};
    const rpx_inputs *in;
    size_t i, k;
    volatile unsigned char sink = 0;

    if (rpx__npz_load_buffer(data, size, "fuzz.npz", &npz, &err) != 0) {
        if (npz || err.code == 0 || err.message[0] == '\0') abort();
        return 0;
    }
    in = rpx_npz_inputs(npz);
    for (i = 0; i < in->count; i++) {
        const rpx_tensor *t = &in->tensors[i];
        const rpx_npz_array_info *info = rpx_npz_array_info_at(npz, i);
        size_t count = 1;
        if (!t->name || !info || info->name != t->name || !t->data) abort();
        if ((uintptr_t)t->data % RPX_TENSOR_ALIGN) abort();
        for (k = 0; k < (size_t)t->ndim; k++) count *= (size_t)t->shape[k];
        if (count != t->count || t->nbytes != count * rpx_dtype_size(t->dtype)) abort();
        for (k = 0; k < t->nbytes; k += 4096) sink ^= ((const unsigned char *)t->data)[k];
        if (t->nbytes) sink ^= ((const unsigned char *)t->data)[t->nbytes - 1];
    }
    (void)sink;
    rpx_npz_free(npz);
    return 0;
}
