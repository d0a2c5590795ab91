/* rpxprof/model.h — the model ABI.
 *
 * The only header a model author includes; a model library links nothing of
 * rpxprof's. For `rpxprof run --model path/libm.so:NAME` the library exports
 *
 *   int  NAME(void *state, const rpx_inputs *inputs, rpx_error *error);       required
 *   int  NAME_setup(void **state, const rpx_inputs *inputs,
 *                   const rpx_run_info *info, rpx_error *error);             optional
 *   void NAME_teardown(void *state);                                         optional
 *   int  NAME_outputs(void *state, rpx_outputs *outputs, rpx_error *error);  optional
 *
 * and may export `const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;`
 * (the loader refuses a library built against another version).
 *
 * Return 0 for success; any other value fails the run with the text written
 * into `error` (use rpx_model_error()). setup runs once, outside timing: load
 * weights, allocate outputs, move to the device. The timed call should not
 * allocate. Every input array of the NPZ file arrives as a named, read-only,
 * C-contiguous, native-endian tensor whose data is aligned to 64 bytes. */
#ifndef RPXPROF_MODEL_H
#define RPXPROF_MODEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_MODEL_ABI_VERSION 1

/* Largest rank an input may have (numpy 2 allows 64). */
#define RPX_MAX_DIMS 64
/* Alignment of every tensor's data, in bytes. */
#define RPX_TENSOR_ALIGN 64

typedef enum rpx_dtype {
    RPX_DTYPE_BOOL = 1,
    RPX_DTYPE_INT8,
    RPX_DTYPE_INT16,
    RPX_DTYPE_INT32,
    RPX_DTYPE_INT64,
    RPX_DTYPE_UINT8,
    RPX_DTYPE_UINT16,
    RPX_DTYPE_UINT32,
    RPX_DTYPE_UINT64,
    RPX_DTYPE_FLOAT16, /* IEEE 754 binary16, stored as uint16_t */
    RPX_DTYPE_FLOAT32,
    RPX_DTYPE_FLOAT64
} rpx_dtype;

typedef struct rpx_tensor {
    const char *name;             /* array name as numpy names it ("rgb") */
    rpx_dtype dtype;
    int ndim;                     /* 0 for a scalar */
    int64_t shape[RPX_MAX_DIMS];  /* first ndim entries are valid */
    size_t count;                 /* number of elements (product of shape) */
    size_t nbytes;                /* count * element size */
    const void *data;             /* C order, native byte order, read-only */
} rpx_tensor;

typedef struct rpx_inputs {
    size_t count;                 /* number of arrays, in file order */
    const rpx_tensor *tensors;
} rpx_inputs;

/* What the last call returned, for `rpxprof run --check-outputs` (docs/abi.md).
 * NAME_outputs is called only when outputs are checked, after a call has
 * returned and outside the timed span (never in the timed call itself): it
 * points `outputs->tensors` at `outputs->count` named tensors that stay valid
 * until the next call of NAME (buffers the model owns, e.g. allocated in
 * setup). C order, native byte order; `data` may be NULL only when nbytes is
 * 0. A model without NAME_outputs cannot be checked (the run says so). */
typedef struct rpx_outputs {
    size_t count;
    const rpx_tensor *tensors;
} rpx_outputs;

typedef struct rpx_run_info {
    int abi_version;              /* RPX_MODEL_ABI_VERSION of the loader */
    const char *device;           /* "cpu" or "cuda" (informational) */
    const char *precision;        /* as given by --precision */
    const char *unit;             /* "frame", "clip", "pair", "request", ... */
    long warmup_calls;
    long measured_calls;
} rpx_run_info;

#define RPX_ERROR_MESSAGE_SIZE 1024
typedef struct rpx_error {
    int code;                     /* 0 = no error */
    char message[RPX_ERROR_MESSAGE_SIZE];
} rpx_error;

/* The input array called `name`, or NULL. */
static inline const rpx_tensor *rpx_inputs_find(const rpx_inputs *inputs, const char *name)
{
    size_t i;
    if (!inputs || !name) return NULL;
    for (i = 0; i < inputs->count; i++)
        if (inputs->tensors[i].name && strcmp(inputs->tensors[i].name, name) == 0)
            return &inputs->tensors[i];
    return NULL;
}

/* Bytes per element of a dtype (0 if unknown). */
static inline size_t rpx_dtype_size(rpx_dtype dtype)
{
    switch (dtype) {
    case RPX_DTYPE_BOOL: case RPX_DTYPE_INT8: case RPX_DTYPE_UINT8: return 1;
    case RPX_DTYPE_INT16: case RPX_DTYPE_UINT16: case RPX_DTYPE_FLOAT16: return 2;
    case RPX_DTYPE_INT32: case RPX_DTYPE_UINT32: case RPX_DTYPE_FLOAT32: return 4;
    case RPX_DTYPE_INT64: case RPX_DTYPE_UINT64: case RPX_DTYPE_FLOAT64: return 8;
    }
    return 0;
}

/* Write a message into `error` and return -1, for `return rpx_model_error(...)`. */
#if defined(__GNUC__)
static inline int rpx_model_error(rpx_error *error, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif
static inline int rpx_model_error(rpx_error *error, const char *fmt, ...)
{
    va_list ap;
    if (!error) return -1;
    va_start(ap, fmt);
    vsnprintf(error->message, sizeof error->message, fmt, ap);
    va_end(ap);
    error->code = -1;
    return -1;
}

#ifdef __cplusplus
}
#endif
#endif
