/* py_call.c — calling a Python callable from rpxprof's timing loop: numpy
 * arrays over rpxprof's buffers, one vector per distinct sample, the
 * vectorcall, the exception's text, torch's peaks (see py_call.h). Compiled
 * into both librpxprof-python.so and the extension module rpxprof._core. */
#include "python/py_call.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"

int rpx__pycall_fail(rpx_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    if (!err) return code;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

const char *rpx__pycall_utf8_or(PyObject *o, const char *fallback)
{
    const char *t = o && PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (!t) PyErr_Clear();
    return t ? t : fallback;
}

json_t *rpx__pycall_json_utf8(PyObject *o)
{
    const char *t = rpx__pycall_utf8_or(o, NULL);
    return t ? json_string(t) : json_null();
}

void rpx__pycall_exception_text(char *buf, size_t size)
{
    PyObject *type, *value, *tb, *mod = NULL, *lines = NULL, *joined = NULL, *empty = NULL;
    const char *text = NULL;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (!type) {
        snprintf(buf, size, "unknown Python error");
        return;
    }
    if (tb && value) PyException_SetTraceback(value, tb);
    mod = PyImport_ImportModule("traceback");
    if (mod)
        lines = PyObject_CallMethod(mod, "format_exception", "OOO", type,
                                    value ? value : Py_None, tb ? tb : Py_None);
    if (lines && (empty = PyUnicode_FromString("")) != NULL) joined = PyUnicode_Join(empty, lines);
    if (joined) text = rpx__pycall_utf8_or(joined, NULL);
    if (!text) {
        PyErr_Clear();
        PyObject *s = value ? PyObject_Str(value) : NULL;
        snprintf(buf, size, "%s: %s", ((PyTypeObject *)type)->tp_name,
                 rpx__pycall_utf8_or(s, "?"));
        Py_XDECREF(s);
    } else {
        size_t n = strlen(text);
        while (n && text[n - 1] == '\n') n--;
        if (n < size)
            snprintf(buf, size, "%.*s", (int)n, text);
        else /* the end of a traceback says where and what */
            snprintf(buf, size, "...%.*s", (int)(size - 4), text + n - (size - 4));
    }
    PyErr_Clear();
    Py_XDECREF(mod);
    Py_XDECREF(lines);
    Py_XDECREF(joined);
    Py_XDECREF(empty);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

int rpx__pycall_py_fail(rpx_error *err, int code, const char *what)
{
    char tb[900];
    rpx__pycall_exception_text(tb, sizeof tb);
    return rpx__pycall_fail(err, code, "%s:\n%s", what, tb);
}

static const char *numpy_dtype(rpx_dtype d)
{
    switch (d) {
    case RPX_DTYPE_BOOL: return "?";
    case RPX_DTYPE_INT8: return "i1";
    case RPX_DTYPE_INT16: return "=i2";
    case RPX_DTYPE_INT32: return "=i4";
    case RPX_DTYPE_INT64: return "=i8";
    case RPX_DTYPE_UINT8: return "u1";
    case RPX_DTYPE_UINT16: return "=u2";
    case RPX_DTYPE_UINT32: return "=u4";
    case RPX_DTYPE_UINT64: return "=u8";
    case RPX_DTYPE_FLOAT16: return "=f2";
    case RPX_DTYPE_FLOAT32: return "=f4";
    case RPX_DTYPE_FLOAT64: return "=f8";
    }
    return NULL;
}

/* A numpy array over the tensor's bytes: numpy.frombuffer of a memoryview
 * (read-only, or writable), reshaped. No byte is copied (checked). */
static PyObject *view_tensor(PyObject *np, const rpx_tensor *t, int writable, int *same_address)
{
    static char empty;
    PyObject *mv, *flat, *shape, *arr = NULL, *iface, *data;
    int d;
    char *p = t->nbytes ? (char *)(uintptr_t)t->data : &empty;
    mv = PyMemoryView_FromMemory(p, (Py_ssize_t)t->nbytes,
                                 writable && t->nbytes ? PyBUF_WRITE : PyBUF_READ);
    if (!mv) return NULL;
    flat = PyObject_CallMethod(np, "frombuffer", "Os", mv, numpy_dtype(t->dtype));
    Py_DECREF(mv);
    if (!flat) return NULL;
    shape = PyTuple_New(t->ndim);
    for (d = 0; shape && d < t->ndim; d++)
        PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong((long long)t->shape[d]));
    if (shape) arr = PyObject_CallMethod(flat, "reshape", "(O)", shape);
    Py_XDECREF(shape);
    Py_DECREF(flat);
    if (!arr) return NULL;
    /* __array_interface__['data'][0] is the address numpy reads from */
    iface = PyObject_GetAttrString(arr, "__array_interface__");
    data = iface ? PyDict_GetItemString(iface, "data") : NULL;
    if (data && PyTuple_Check(data) && PyTuple_GET_SIZE(data) > 0) {
        void *addr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
        if (t->nbytes && addr != (void *)p) *same_address = 0;
    } else {
        *same_address = 0;
    }
    PyErr_Clear();
    Py_XDECREF(iface);
    return arr;
}

static PyObject *import_numpy(rpx_error *err)
{
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np)
        rpx__pycall_py_fail(err, RPX_ENOTFOUND,
                            "the Python target passes the inputs as numpy arrays, but numpy "
                            "cannot be imported; install python3-numpy (or activate a virtualenv "
                            "of this Python's version that has it)");
    return np;
}

int rpx__pycall_bind(rpx__pycall *c, const rpx_inputs *in, rpx_error *err)
{
    PyObject *np = import_numpy(err);
    size_t i;
    if (!np) return err ? err->code : RPX_ENOTFOUND;
    c->kwargs = PyDict_New();
    c->args = PyTuple_New(0);
    c->zero_copy = 1;
    for (i = 0; c->kwargs && c->args && in && i < in->count; i++) {
        const rpx_tensor *t = &in->tensors[i];
        PyObject *arr;
        if (!numpy_dtype(t->dtype)) {
            Py_DECREF(np);
            return rpx__pycall_fail(err, RPX_EUNSUPPORTED,
                                    "array '%s': dtype %d has no numpy equivalent", t->name,
                                    (int)t->dtype);
        }
        arr = view_tensor(np, t, 0, &c->zero_copy);
        if (!arr || PyDict_SetItemString(c->kwargs, t->name, arr) != 0) {
            Py_XDECREF(arr);
            Py_DECREF(np);
            return rpx__pycall_py_fail(err, RPX_ENOMEM, "cannot make a numpy array of an input");
        }
        Py_DECREF(arr);
    }
    Py_DECREF(np);
    if (!c->kwargs || !c->args) return rpx__pycall_fail(err, RPX_ENOMEM, "out of memory");
    c->n_values = PyDict_Size(c->kwargs);
    c->kwnames = PyTuple_New(c->n_values);
    c->values = calloc((size_t)c->n_values + 1, sizeof *c->values);
    if (!c->kwnames || !c->values) return rpx__pycall_fail(err, RPX_ENOMEM, "out of memory");
    {
        Py_ssize_t pos = 0, k = 0;
        PyObject *key, *value;
        while (PyDict_Next(c->kwargs, &pos, &key, &value)) {
            Py_INCREF(key);
            PyTuple_SET_ITEM(c->kwnames, k, key);
            c->values[k++] = value; /* borrowed: kwargs holds them */
        }
    }
    return 0;
}

int rpx__pycall_bind_native(rpx__pycall *c, PyObject *args, PyObject *kwargs, rpx_error *err)
{
    Py_ssize_t i, k = 0, n_kw;
    PyObject *key, *value;
    if (!args || !PyTuple_Check(args) || (kwargs && !PyDict_Check(kwargs)))
        return rpx__pycall_fail(err, RPX_EINVAL, "the arguments: a tuple and a dict are needed");
    c->native = 1;
    c->zero_copy = 1;
    Py_INCREF(args);
    c->args = args;
    c->kwargs = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
    if (!c->kwargs) return rpx__pycall_fail(err, RPX_ENOMEM, "out of memory");
    c->n_pos = PyTuple_GET_SIZE(args);
    n_kw = PyDict_Size(c->kwargs);
    c->n_values = c->n_pos + n_kw;
    c->kwnames = PyTuple_New(n_kw);
    c->values = calloc((size_t)c->n_values + 1, sizeof *c->values);
    if (!c->kwnames || !c->values) return rpx__pycall_fail(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < c->n_pos; i++) c->values[i] = PyTuple_GET_ITEM(args, i); /* borrowed */
    i = 0;
    while (PyDict_Next(c->kwargs, &i, &key, &value)) {
        Py_INCREF(key);
        PyTuple_SET_ITEM(c->kwnames, k, key);
        c->values[c->n_pos + k++] = value; /* borrowed: kwargs holds them */
    }
    return 0;
}

/* A function whose call only creates a generator or a coroutine runs none of
 * its body: each sample would time the creation (~0.2 us). Refused with the fix
 * (issue 26). A callable object is judged by its type's __call__. */
static int refuse_generator(rpx__pycall *c, PyObject *inspect, rpx_error *err)
{
    static const struct {
        const char *test, *what, *made, *fix_pre, *fix_post;
    } kinds[] = {
        {"isgeneratorfunction", "a generator function", "a generator", "list(", "(**a))"},
        {"isasyncgenfunction", "an async generator function", "an async generator",
         "asyncio.run(consume(", "(**a))) with an async def consume(g) that runs "
                                 "`async for _ in g`"},
        {"iscoroutinefunction", "a coroutine function (async def)", "a coroutine",
         "asyncio.run(", "(**a))"},
    };
    PyObject *target = c->func;
    const char *name = c->function_name ? c->function_name : "fn";
    size_t i;
    int owned = 0;
    if (!inspect || !c->func) return 0;
    if (!PyFunction_Check(c->func) && !PyMethod_Check(c->func) && !PyType_Check(c->func) &&
        !PyCFunction_Check(c->func) && PyObject_HasAttrString(c->func, "__call__") &&
        !PyObject_HasAttrString(c->func, "func")) { /* not a functools.partial */
        target = PyObject_GetAttrString((PyObject *)Py_TYPE(c->func), "__call__");
        if (!target) {
            PyErr_Clear();
            return 0;
        }
        owned = 1;
    }
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        PyObject *r = PyObject_CallMethod(inspect, kinds[i].test, "O", target);
        int yes = r && PyObject_IsTrue(r) == 1;
        Py_XDECREF(r);
        PyErr_Clear();
        if (yes) {
            if (owned) Py_DECREF(target);
            return rpx__pycall_fail(err, RPX_EINVAL,
                                    "%s is %s: calling it only creates %s and runs none "
                                    "of its body, so every sample would time that creation "
                                    "(about 0.2 us); time a function that runs it, e.g. "
                                    "lambda **a: %s%s%s",
                                    name, kinds[i].what, kinds[i].made, kinds[i].fix_pre, name,
                                    kinds[i].fix_post);
        }
    }
    if (owned) Py_DECREF(target);
    return 0;
}

int rpx__pycall_check_signature(rpx__pycall *c, rpx_error *err)
{
    PyObject *inspect = PyImport_ImportModule("inspect"), *sig = NULL, *bound = NULL, *bind;
    int rc = 0;
    if ((rc = refuse_generator(c, inspect, err)) != 0) {
        Py_XDECREF(inspect);
        return rc;
    }
    if (inspect) sig = PyObject_CallMethod(inspect, "signature", "O", c->func);
    if (!sig) { /* builtins and some extensions have no signature: the call will tell */
        PyErr_Clear();
        Py_XDECREF(inspect);
        return 0;
    }
    bind = PyObject_GetAttrString(sig, "bind");
    if (bind) bound = PyObject_Call(bind, c->args, c->kwargs);
    if (!bound) {
        char why[512], names[256] = "";
        PyObject *text, *k;
        Py_ssize_t pos = 0;
        size_t used = 0;
        PyObject *type, *value, *tb, *msg;
        PyErr_Fetch(&type, &value, &tb);
        msg = value ? PyObject_Str(value) : NULL;
        text = PyObject_Str(sig);
        snprintf(why, sizeof why, "%s", rpx__pycall_utf8_or(msg, "?"));
        while (PyDict_Next(c->kwargs, &pos, &k, NULL) && used + 2 < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                     rpx__pycall_utf8_or(k, "?"));
        if (c->native)
            rc = rpx__pycall_fail(
                err, RPX_EINVAL,
                "%s%s does not accept the arguments given (%zd positional; keyword: %s): %s; "
                "pass the model's positional arguments after it and its keyword arguments "
                "in kwargs=, e.g. rpxprof.profile(model, x, kwargs={'mask': m}), or a "
                "function of no arguments (lambda: model(x))",
                c->function_name ? c->function_name : "the function",
                rpx__pycall_utf8_or(text, "()"), c->n_pos, names[0] ? names : "none", why);
        else
            rc = rpx__pycall_fail(
                err, RPX_EINVAL,
                "%s%s does not accept the inputs' arrays as keyword arguments (%s): %s; name "
                "its parameters after the arrays in the NPZ file",
                c->function_name ? c->function_name : "the function",
                rpx__pycall_utf8_or(text, "()"), names[0] ? names : "no arrays", why);
        Py_XDECREF(text);
        Py_XDECREF(msg);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        PyErr_Clear();
    }
    Py_XDECREF(bound);
    Py_XDECREF(bind);
    Py_XDECREF(sig);
    Py_XDECREF(inspect);
    return rc;
}

static void clear_samples(rpx__pycall *c)
{
    size_t i;
    if (c->sample_values) {
        for (i = 0; i < c->n_samples * (size_t)c->n_values; i++) Py_XDECREF(c->sample_values[i]);
        free(c->sample_values);
    }
    c->sample_values = NULL;
    c->samples = NULL;
    c->n_samples = 0;
}

/* Every sample's arrays, in the order of kwnames, built once here (outside
 * timing), so that a call only picks sample k's vector. */
int rpx__pycall_samples(void *state, const rpx_inputs *samples, size_t n, int writable,
                        rpx_error *err)
{
    rpx__pycall *c = state;
    PyObject *np;
    size_t k;
    Py_ssize_t j;
    clear_samples(c);
    c->writable = writable != 0;
    if (n == 0 || !samples || c->native) return 0; /* the caller's own objects: no arrays */
    if (!c->kwnames) return rpx__pycall_fail(err, RPX_EINVAL, "the samples came before setup");
    if (!(np = import_numpy(err))) return err ? err->code : RPX_ENOTFOUND;
    c->sample_values = calloc(n * (size_t)c->n_values + 1, sizeof *c->sample_values);
    if (!c->sample_values) {
        Py_DECREF(np);
        return rpx__pycall_fail(err, RPX_ENOMEM, "out of memory");
    }
    c->samples = samples;
    c->n_samples = n;
    for (k = 0; k < n; k++) {
        for (j = 0; j < c->n_values; j++) {
            const char *name = rpx__pycall_utf8_or(PyTuple_GET_ITEM(c->kwnames, j), "");
            const rpx_tensor *t = NULL;
            PyObject *arr;
            size_t i;
            for (i = 0; i < samples[k].count; i++)
                if (strcmp(samples[k].tensors[i].name, name) == 0) t = &samples[k].tensors[i];
            if (!t) {
                Py_DECREF(np);
                clear_samples(c);
                return rpx__pycall_fail(err, RPX_EINVAL,
                                        "sample %zu has no array '%s'; every sample needs the "
                                        "same array names",
                                        k, name);
            }
            if (!numpy_dtype(t->dtype)) {
                Py_DECREF(np);
                clear_samples(c);
                return rpx__pycall_fail(err, RPX_EUNSUPPORTED,
                                        "array '%s': dtype %d has no numpy equivalent", t->name,
                                        (int)t->dtype);
            }
            arr = view_tensor(np, t, c->writable, &c->zero_copy);
            if (!arr) {
                Py_DECREF(np);
                clear_samples(c);
                return rpx__pycall_py_fail(err, RPX_ENOMEM,
                                           "cannot make a numpy array of an input");
            }
            c->sample_values[k * (size_t)c->n_values + (size_t)j] = arr;
        }
    }
    Py_DECREF(np);
    return 0;
}

/* The timed call: the vector of the sample `in` points at (found by its
 * address, O(1)), else the setup's arrays. */
int rpx__pycall_call(void *state, const rpx_inputs *in, rpx_error *err)
{
    rpx__pycall *c = state;
    PyObject *const *v = c->values;
    if (c->sample_values) {
        uintptr_t a = (uintptr_t)in, base = (uintptr_t)c->samples;
        if (a >= base && a < base + c->n_samples * sizeof *c->samples)
            v = c->sample_values + (size_t)((a - base) / sizeof *c->samples) * (size_t)c->n_values;
    }
    c->result = PyObject_Vectorcall(c->func, v, (size_t)c->n_pos,
                                    c->n_values > c->n_pos ? c->kwnames : NULL);
    if (c->result) return 0;
    if (!c->writable && PyErr_ExceptionMatches(PyExc_ValueError)) {
        char tb[800];
        rpx__pycall_exception_text(tb, sizeof tb);
        if (strstr(tb, "read-only"))
            return rpx__pycall_fail(err, RPX_EMODEL,
                                    "the function raised an exception:\n%s\nthe inputs are "
                                    "read-only: pass --writable-inputs (writable_inputs=True in "
                                    "Python) to let the model edit them in place",
                                    tb);
        return rpx__pycall_fail(err, RPX_EMODEL, "the function raised an exception:\n%s", tb);
    }
    return rpx__pycall_py_fail(err, RPX_EMODEL, "the function raised an exception");
}

/* The result is released here, after t1: its deallocation is not timed. */
void rpx__pycall_after_call(void *state, int timed, int rc)
{
    rpx__pycall *c = state;
    (void)timed;
    (void)rc;
    Py_CLEAR(c->result);
}

/* sys.modules['torch'] when anything has imported it, else NULL. */
static PyObject *torch_module(void)
{
    PyObject *mods = PyImport_GetModuleDict();
    PyObject *t = mods ? PyDict_GetItemString(mods, "torch") : NULL;
    Py_XINCREF(t);
    return t;
}

static int torch_cuda_available(PyObject *torch)
{
    PyObject *cuda = PyObject_GetAttrString(torch, "cuda");
    PyObject *r = cuda ? PyObject_CallMethod(cuda, "is_available", NULL) : NULL;
    int ok = r && PyObject_IsTrue(r) == 1;
    Py_XDECREF(cuda);
    Py_XDECREF(r);
    PyErr_Clear();
    return ok;
}

/* Run `torch.cuda.FN(i)` for every visible device; results in `out` (NULL: discard). */
static int torch_each_device(PyObject *torch, const char *fn, double *out, int max)
{
    PyObject *cuda = PyObject_GetAttrString(torch, "cuda"), *n;
    long count = 0, i;
    if (!cuda) {
        PyErr_Clear();
        return -1;
    }
    n = PyObject_CallMethod(cuda, "device_count", NULL);
    count = n ? PyLong_AsLong(n) : -1;
    Py_XDECREF(n);
    for (i = 0; i < count && i < max; i++) {
        PyObject *r = PyObject_CallMethod(cuda, fn, "l", i);
        if (!r) {
            count = -1;
            break;
        }
        if (out) out[i] = PyFloat_AsDouble(r);
        Py_DECREF(r);
    }
    Py_DECREF(cuda);
    PyErr_Clear();
    return (int)(count < max ? count : max);
}

void rpx__pycall_peaks_reset(void *state)
{
    rpx__pycall *c = state;
    PyObject *torch;
    if (!c->cuda || !(torch = torch_module())) return;
    if (torch_cuda_available(torch) &&
        torch_each_device(torch, "reset_peak_memory_stats", NULL, 64) >= 0)
        c->torch_peaks_reset = 1;
    Py_DECREF(torch);
}

static json_t *attr_string(PyObject *obj, const char *dotted)
{
    PyObject *cur = obj, *next;
    char buf[128], *tok, *save = NULL;
    json_t *out;
    Py_INCREF(cur);
    snprintf(buf, sizeof buf, "%s", dotted);
    for (tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save)) {
        next = PyObject_GetAttrString(cur, tok);
        Py_DECREF(cur);
        cur = next;
    }
    out = rpx__pycall_json_utf8(cur);
    Py_XDECREF(cur);
    PyErr_Clear();
    return out;
}

/* torch.get_num_threads(): the intra-op threads, which decide CPU latency. */
static json_t *torch_threads(PyObject *torch)
{
    PyObject *r = PyObject_CallMethod(torch, "get_num_threads", NULL);
    json_t *out = r && PyLong_Check(r) ? json_integer(PyLong_AsLong(r)) : json_null();
    Py_XDECREF(r);
    PyErr_Clear();
    return out;
}

void rpx__pycall_version(json_t *o)
{
    PyObject *sys = PyImport_ImportModule("sys");
    char version[32];
    /* the running library's version ("3.11.2 (main, ...)"), not the headers' */
    snprintf(version, sizeof version, "%.*s", (int)strcspn(Py_GetVersion(), " "), Py_GetVersion());
    json_object_set_new(o, "version", json_string(version));
    json_object_set_new(o, "build", sys ? attr_string(sys, "version") : json_null());
    Py_XDECREF(sys);
    PyErr_Clear();
}

void rpx__pycall_section(const rpx__pycall *c, json_t *o)
{
    json_t *peaks = json_null(), *method = json_null();
    PyObject *torch = torch_module();
    PyObject *np = PyImport_ImportModule("numpy");
    const char *kind = c->native ? "the caller's own objects, as given (no copy, no conversion)"
                     : c->writable ? "writable numpy views of rpxprof's buffers (their bytes "
                                     "restored before every call)"
                                   : "read-only numpy views of rpxprof's buffers";
    char inputs[160];
    if (c->native)
        snprintf(inputs, sizeof inputs, "%s", kind);
    else
        snprintf(inputs, sizeof inputs, "%s, %s", kind,
                 c->zero_copy ? "no copy" : "address not verified");
    json_object_set_new(o, "numpy_version", np ? attr_string(np, "__version__") : json_null());
    json_object_set_new(o, "inputs", json_string(inputs));
    json_object_set_new(o, "torch_version", torch ? attr_string(torch, "__version__") : json_null());
    json_object_set_new(o, "torch_cuda_version",
                        torch ? attr_string(torch, "version.cuda") : json_null());
    json_object_set_new(o, "torch_num_threads", torch ? torch_threads(torch) : json_null());
    if (torch && c->cuda && c->torch_peaks_reset) {
        double v[64];
        int n = torch_each_device(torch, "max_memory_allocated", v, 64), i;
        if (n >= 0) {
            json_decref(peaks);
            peaks = json_object();
            for (i = 0; i < n; i++) {
                char key[16];
                snprintf(key, sizeof key, "%d", i);
                json_object_set_new(peaks, key, json_real(v[i] / 1048576.0));
            }
            json_decref(method);
            method = json_object();
            json_object_set_new(method, "method", json_string("torch_cuda_max_memory_allocated"));
            json_object_set_new(
                method, "covers",
                json_string("torch.cuda.max_memory_allocated(d) for every visible device d, "
                            "after torch.cuda.reset_peak_memory_stats(d) at the end of warmup: "
                            "tensors held by torch's caching allocator, not the CUDA context, "
                            "the allocator's cache or memory allocated outside torch"));
        }
    }
    json_object_set_new(o, "torch_cuda_peak_allocated_mb_by_visible_device", peaks);
    json_object_set_new(o, "torch_cuda_peak_method", method);
    Py_XDECREF(torch);
    Py_XDECREF(np);
    PyErr_Clear();
}

static const char outputs_helper[] =
    "def _rpx_outputs(result):\n"
    "    import numpy as np\n"
    "    codes = {('b', 1): 1, ('i', 1): 2, ('i', 2): 3, ('i', 4): 4, ('i', 8): 5, ('u', 1): 6,\n"
    "             ('u', 2): 7, ('u', 4): 8, ('u', 8): 9, ('f', 2): 10, ('f', 4): 11, ('f', 8): 12}\n"
    "    out = []\n"
    "    def conv(x):\n"
    "        m = getattr(type(x), '__module__', '') or ''\n"
    "        if m.startswith('torch') and hasattr(x, 'detach') and hasattr(x, 'cpu'):\n"
    "            x = x.detach()\n"
    "            if str(x.dtype) == 'torch.bfloat16':\n"
    "                x = x.float()\n"
    "            return x.cpu().numpy()\n"
    "        if isinstance(x, (bytes, bytearray, memoryview)):\n"
    "            return np.frombuffer(bytes(x), dtype=np.uint8)\n"
    "        if isinstance(x, str):\n"
    "            return np.frombuffer(x.encode('utf-8'), dtype=np.uint8)\n"
    "        return np.asarray(x)\n"
    "    def walk(x, name):\n"
    "        if x is None:\n"
    "            return\n"
    "        if isinstance(x, dict):\n"
    "            for k, v in x.items():\n"
    "                walk(v, '%s.%s' % (name, k) if name else str(k))\n"
    "            return\n"
    "        if isinstance(x, (list, tuple)) and not (x and all(\n"
    "                isinstance(v, (bool, int, float)) for v in x)):\n"
    "            for i, v in enumerate(x):\n"
    "                walk(v, '%s.%d' % (name, i) if name else str(i))\n"
    "            return\n"
    "        a = conv(x)\n"
    "        code = codes.get((a.dtype.kind, a.dtype.itemsize))\n"
    "        if code is None:\n"
    "            what = ('an object of type %s' % type(x).__name__ if a.dtype.kind == 'O'\n"
    "                    else 'dtype %s' % a.dtype)\n"
    "            raise TypeError('output %r: %s cannot be compared; return numbers, '\n"
    "                            'numeric arrays or tensors' % (name or 'return value', what))\n"
    "        a = a.astype(a.dtype.newbyteorder('='), order='C', copy=False)\n"
    "        out.append((name or 'return', a, code))\n"
    "    walk(result, '')\n"
    "    return out\n";

static void outputs_release(rpx__pycall *c)
{
    size_t i;
    for (i = 0; i < c->n_out; i++) PyBuffer_Release(&c->out_bufs[i]);
    free(c->out_bufs);
    free(c->out_tensors);
    c->out_bufs = NULL;
    c->out_tensors = NULL;
    c->n_out = 0;
    Py_CLEAR(c->out_list);
}

int rpx__pycall_outputs(void *state, rpx_outputs *outputs, rpx_error *err)
{
    rpx__pycall *c = state;
    Py_ssize_t n, i;
    outputs_release(c);
    outputs->count = 0;
    outputs->tensors = NULL;
    if (!c->out_fn) {
        PyObject *g = PyDict_New(), *r;
        if (!g) return rpx__pycall_py_fail(err, RPX_ENOMEM, "out of memory");
        PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins());
        r = PyRun_String(outputs_helper, Py_file_input, g, g);
        Py_XDECREF(r);
        c->out_fn = r ? PyDict_GetItemString(g, "_rpx_outputs") : NULL;
        Py_XINCREF(c->out_fn);
        Py_DECREF(g);
        if (!c->out_fn) return rpx__pycall_py_fail(err, RPX_EMODEL, "cannot read the outputs");
    }
    if (!c->result) return rpx__pycall_fail(err, RPX_EMODEL, "the call returned no value to read");
    c->out_list = PyObject_CallFunctionObjArgs(c->out_fn, c->result, NULL);
    if (!c->out_list)
        return rpx__pycall_py_fail(err, RPX_EMODEL,
                                   "--check-outputs: the return value cannot be read as "
                                   "outputs");
    n = PyList_GET_SIZE(c->out_list);
    c->out_bufs = calloc((size_t)n + 1, sizeof *c->out_bufs);
    c->out_tensors = calloc((size_t)n + 1, sizeof *c->out_tensors);
    if (!c->out_bufs || !c->out_tensors) {
        outputs_release(c);
        return rpx__pycall_fail(err, RPX_ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(c->out_list, i);
        rpx_tensor *t = &c->out_tensors[i];
        Py_buffer *b = &c->out_bufs[c->n_out];
        int d;
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(item, 1), b, PyBUF_C_CONTIGUOUS | PyBUF_ND) != 0) {
            outputs_release(c);
            return rpx__pycall_py_fail(err, RPX_EMODEL, "cannot read an output's bytes");
        }
        c->n_out++;
        t->name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0));
        t->dtype = (rpx_dtype)PyLong_AsLong(PyTuple_GET_ITEM(item, 2));
        t->ndim = b->ndim;
        if (t->ndim > RPX_MAX_DIMS) {
            outputs_release(c);
            return rpx__pycall_fail(err, RPX_EMODEL, "an output has more than %d dimensions",
                                    RPX_MAX_DIMS);
        }
        t->count = 1;
        for (d = 0; d < b->ndim; d++) {
            t->shape[d] = (int64_t)b->shape[d];
            t->count *= (size_t)b->shape[d];
        }
        t->nbytes = (size_t)b->len;
        t->data = b->buf;
    }
    outputs->count = c->n_out;
    outputs->tensors = c->out_tensors;
    return 0;
}

void rpx__pycall_clear(rpx__pycall *c)
{
    if (!c) return;
    if (Py_IsInitialized()) {
        outputs_release(c);
        Py_CLEAR(c->out_fn);
        clear_samples(c);
        Py_CLEAR(c->result);
        Py_CLEAR(c->func);
        Py_CLEAR(c->kwnames);
        Py_CLEAR(c->kwargs);
        Py_CLEAR(c->args);
    } else {
        free(c->sample_values);
        c->sample_values = NULL;
    }
    free(c->values);
    c->values = NULL;
}

void rpx__pycall_hooks(rpx_target_hooks *h, void *state)
{
    h->state = state;
    h->call = rpx__pycall_call;
    h->after_call = rpx__pycall_after_call;
    h->outputs = rpx__pycall_outputs; /* --check-outputs only, outside the timed span */
    h->peaks_reset = rpx__pycall_peaks_reset;
    h->samples = rpx__pycall_samples;
}
