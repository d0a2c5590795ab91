/* py_call.h — calling a Python callable from rpxprof's timing loop.
 *
 * Shared by the two ways a Python callable is timed: the plugin
 * librpxprof-python.so (embedded CPython, `rpxprof run --model module:function`)
 * and the extension module rpxprof._core (the package's rpxprof.profile, in
 * the user's own interpreter). This room owns: numpy arrays over rpxprof's
 * input buffers (read-only, or writable with --writable-inputs), one vector
 * of arrays per distinct sample built outside timing, the vectorcall with the
 * arrays' names as keywords, the exception's text, the result's release
 * after the timed span, torch's allocator peaks and the report's fields that
 * both kinds share. It calls nothing of librpxprof (the plugin does not link
 * it): only CPython and jansson.
 *
 * Lifecycle: memset 0 → rpx__pycall_bind (the setup's inputs) → [samples]
 * → call / after_call ... → rpx__pycall_section → rpx__pycall_clear.
 * Every function here needs the GIL. The hooks take `void *state` that points
 * at an rpx__pycall (a kind's own state starts with one). */
#ifndef RPX_PY_CALL_H
#define RPX_PY_CALL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <jansson.h>
#include <stdarg.h>

#include "rpxprof/model.h"
#include "rpxprof/target.h"

typedef struct rpx__pycall {
    PyObject *func;               /* the callable (owned) */
    const char *function_name;    /* for messages */
    int cuda;                     /* --device cuda: torch's peaks are read */
    PyObject *args, *kwargs;      /* the setup's inputs, for the signature check */
    PyObject *kwnames;            /* tuple of the arrays' names (vectorcall keywords) */
    Py_ssize_t n_values;
    /* the caller's own arguments (rpxprof.profile(fn, *args, kwargs=...)): values
     * holds n_pos positional objects, then the keyword values; no numpy view */
    int native;
    Py_ssize_t n_pos;
    PyObject **values;            /* the setup's arrays (borrowed from kwargs) */
    /* distinct samples (rpx__pycall_samples): sample k's arrays are
     * sample_values[k * n_values ...], owned */
    const rpx_inputs *samples;
    size_t n_samples;
    PyObject **sample_values;
    int writable;                 /* the arrays are writable views */
    int zero_copy;                /* every array was checked to view rpxprof's buffer */
    PyObject *result;             /* the last call's result, released after the timed span */
    int torch_peaks_reset;
    /* --check-outputs (rpx__pycall_outputs): the return value flattened into
     * numpy arrays, kept until the next read (owned), and their views */
    PyObject *out_fn;             /* the flattening helper */
    PyObject *out_list;           /* [(name, array, dtype code)] */
    Py_buffer *out_bufs;
    rpx_tensor *out_tensors;
    size_t n_out;
} rpx__pycall;

/* Format into err and return code (err may be NULL). */
int rpx__pycall_fail(rpx_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "WHAT:\n<the pending exception's traceback>" into err (the exception is cleared). */
int rpx__pycall_py_fail(rpx_error *err, int code, const char *what);
/* The pending exception as text (the traceback's tail when long), cleared. */
void rpx__pycall_exception_text(char *buf, size_t size);
/* UTF-8 text of a str object, or `fallback`; never leaves an error set. */
const char *rpx__pycall_utf8_or(PyObject *o, const char *fallback);
/* The same as JSON: a string, or null. */
json_t *rpx__pycall_json_utf8(PyObject *o);

/* Read-only numpy arrays of the setup's inputs (the default call). */
int rpx__pycall_bind(rpx__pycall *c, const rpx_inputs *in, rpx_error *err);
/* The caller's objects as they are: fn(*args, **kwargs) (args a tuple, kwargs a dict
 * or NULL); nothing is copied or converted (torch tensors stay tensors). */
int rpx__pycall_bind_native(rpx__pycall *c, PyObject *args, PyObject *kwargs, rpx_error *err);
/* inspect.signature(func).bind(**arrays): the arrays must fit the parameters. */
int rpx__pycall_check_signature(rpx__pycall *c, rpx_error *err);

/* rpx_target hooks (state: an rpx__pycall) */
int rpx__pycall_samples(void *state, const rpx_inputs *samples, size_t n, int writable,
                        rpx_error *err);
int rpx__pycall_call(void *state, const rpx_inputs *in, rpx_error *err);
void rpx__pycall_after_call(void *state, int timed, int rc);
void rpx__pycall_peaks_reset(void *state);
/* --check-outputs: the last call's return value (numpy arrays, torch tensors
 * (detached, on the CPU; bfloat16 as float32), numbers, bytes and str as
 * uint8, None as nothing, tuples, lists and dicts of them, nested; names
 * "0", "logits", "0.boxes") as tensors valid until the next call. */
int rpx__pycall_outputs(void *state, rpx_outputs *outputs, rpx_error *err);
/* The hooks both makers of a Python target share (the plugin's open for
 * module:function and the package's caller-made target): the call, after
 * call, outputs, peaks and samples over `state` (an rpx__pycall first).
 * Each maker adds its own setup, teardown, section and the rest. */
void rpx__pycall_hooks(rpx_target_hooks *h, void *state);

/* The fields both kinds' "python" sections carry: numpy_version, inputs,
 * torch_version, torch_cuda_version, torch_num_threads and torch's peaks. */
void rpx__pycall_section(const rpx__pycall *c, json_t *o);
/* The running interpreter's version ("3.11.2"), and sys.version. */
void rpx__pycall_version(json_t *o);

/* Release every Python object (with the GIL) and free the vectors. */
void rpx__pycall_clear(rpx__pycall *c);

#endif
