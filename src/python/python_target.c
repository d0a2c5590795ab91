/* python_target.c — librpxprof-python.so: the Python target. It embeds
 * CPython, imports MODULE in setup (outside timing), passes every NPZ array
 * as a keyword argument (a read-only numpy array viewing rpxprof's buffer, no
 * copy), calls FUNCTION in the timed span and releases its result after it.
 * When the module uses torch it records torch's versions and, on --device
 * cuda, the peaks of torch's caching allocator per visible device. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "rpxprof/target.h"
#include "target/plugins.h"

#ifndef RPX_PYTHON_EXECUTABLE
#define RPX_PYTHON_EXECUTABLE "/usr/bin/python3"
#endif

RPX_PLUGIN_EXPORT const int rpx_python_plugin_abi = RPX_PLUGIN_ABI;

typedef struct py_state {
    const char *spec, *module_name, *function_name;
    int cuda;                     /* --device cuda */
    PyObject *module, *func, *args, *kwargs, *result;
    /* the call itself: the arrays as a vector plus a tuple of their names
     * (vectorcall), so no dictionary is unpacked per call */
    PyObject **values, *kwnames;
    Py_ssize_t n_values;
    int zero_copy;                /* every array was checked to view rpxprof's buffer */
    int torch_peaks;              /* peaks reset after warmup from torch's allocator */
    int torch_peaks_reset;
    char venv_note[512];
    int venv_used;
} py_state;

static int fail(rpx_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(rpx_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    if (!err) return code;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

/* UTF-8 text of a str object, or `fallback` when it is not one or cannot be
 * encoded (a path with bytes that are not UTF-8); never leaves an error set. */
static const char *utf8_or(PyObject *o, const char *fallback)
{
    const char *t = o && PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (!t) PyErr_Clear();
    return t ? t : fallback;
}

/* The same as JSON: a string, or null. */
static json_t *json_utf8(PyObject *o)
{
    const char *t = utf8_or(o, NULL);
    return t ? json_string(t) : json_null();
}

/* The pending Python exception as text (the traceback's tail when it is long),
 * cleared. */
static void exception_text(char *buf, size_t size)
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
    if (joined) text = utf8_or(joined, NULL);
    if (!text) {
        PyErr_Clear();
        PyObject *s = value ? PyObject_Str(value) : NULL;
        snprintf(buf, size, "%s: %s", ((PyTypeObject *)type)->tp_name,
                 utf8_or(s, "?"));
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

static int py_fail(rpx_error *err, int code, const char *what)
{
    char tb[900];
    exception_text(tb, sizeof tb);
    return fail(err, code, "%s:\n%s", what, tb);
}

static int start_interpreter(rpx_error *err)
{
    PyConfig config;
    PyStatus st;
    if (Py_IsInitialized()) return 0;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0; /* rpxprof's SIGINT/SIGTERM handling stays */
    config.parse_argv = 0;
    /* the interpreter this plugin was built against, whatever python3 is first on PATH */
    st = PyConfig_SetBytesString(&config, &config.program_name, RPX_PYTHON_EXECUTABLE);
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st))
        return fail(err, RPX_EUNAVAILABLE, "cannot start the Python interpreter (%s): %s",
                    RPX_PYTHON_EXECUTABLE, st.err_msg ? st.err_msg : "unknown reason");
    return 0;
}

/* The current folder first on sys.path (as `python -m` does), then an active
 * virtualenv's site-packages when it is of this Python's version. */
static int extend_path(py_state *s, rpx_error *err)
{
    static const char code[] =
        "import os, sys, site\n"
        "sys.path.insert(0, os.getcwd())\n"
        "def _rpx_venv():\n"
        "    v = os.environ.get('VIRTUAL_ENV')\n"
        "    if not v: return ''\n"
        "    mine = '%d.%d' % sys.version_info[:2]\n"
        "    ver = ''\n"
        "    try:\n"
        "        for line in open(os.path.join(v, 'pyvenv.cfg')):\n"
        "            k, _, val = line.partition('=')\n"
        "            if k.strip() in ('version', 'version_info'): ver = val.strip()\n"
        "    except OSError as e:\n"
        "        return 'VIRTUAL_ENV=%s ignored: %s' % (v, e)\n"
        "    if '.'.join(ver.split('.')[:2]) != mine:\n"
        "        return 'VIRTUAL_ENV=%s ignored: it is Python %s, rpxprof embeds Python %s' % (v, ver or '?', mine)\n"
        "    before = list(sys.path)\n"
        "    site.addsitedir(os.path.join(v, 'lib', 'python' + mine, 'site-packages'))\n"
        "    added = [p for p in sys.path if p not in before]\n"
        "    sys.path[:] = before[:1] + added + before[1:]  # the venv's packages win, as in the venv\n"
        "    return 'used ' + v\n"
        "_rpx_venv_note = _rpx_venv()\n";
    PyObject *main = PyImport_AddModule("__main__"), *g, *note, *r;
    if (!main) return py_fail(err, RPX_EUNAVAILABLE, "cannot set up the Python path");
    g = PyModule_GetDict(main);
    if ((r = PyRun_String(code, Py_file_input, g, g)) == NULL)
        return py_fail(err, RPX_EUNAVAILABLE, "cannot set up the Python path");
    Py_DECREF(r);
    note = PyDict_GetItemString(g, "_rpx_venv_note");
    if (note && PyUnicode_Check(note)) {
        const char *t = utf8_or(note, "VIRTUAL_ENV (a path that is not UTF-8)");
        s->venv_used = strncmp(t, "used ", 5) == 0;
        snprintf(s->venv_note, sizeof s->venv_note, "%s", s->venv_used ? t + 5 : t);
    }
    return 0;
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

/* A read-only numpy array over the tensor's bytes: numpy.frombuffer of a
 * read-only memoryview, reshaped. No byte is copied (checked). */
static PyObject *view_tensor(PyObject *np, const rpx_tensor *t, int *same_address)
{
    static char empty;
    PyObject *mv, *flat, *shape, *arr = NULL, *iface, *data;
    int d;
    char *p = t->nbytes ? (char *)(uintptr_t)t->data : &empty;
    mv = PyMemoryView_FromMemory(p, (Py_ssize_t)t->nbytes, PyBUF_READ);
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

static int build_kwargs(py_state *s, const rpx_inputs *in, rpx_error *err)
{
    PyObject *np = PyImport_ImportModule("numpy");
    size_t i;
    if (!np)
        return py_fail(err, RPX_ENOTFOUND,
                       "the Python target passes the inputs as numpy arrays, but numpy cannot "
                       "be imported; install python3-numpy (or activate a virtualenv of this "
                       "Python's version that has it)");
    s->kwargs = PyDict_New();
    s->args = PyTuple_New(0);
    s->zero_copy = 1;
    for (i = 0; s->kwargs && s->args && in && i < in->count; i++) {
        const rpx_tensor *t = &in->tensors[i];
        PyObject *arr;
        if (!numpy_dtype(t->dtype)) {
            Py_DECREF(np);
            return fail(err, RPX_EUNSUPPORTED, "array '%s': dtype %d has no numpy equivalent", t->name,
                        (int)t->dtype);
        }
        arr = view_tensor(np, t, &s->zero_copy);
        if (!arr || PyDict_SetItemString(s->kwargs, t->name, arr) != 0) {
            Py_XDECREF(arr);
            Py_DECREF(np);
            return py_fail(err, RPX_ENOMEM, "cannot make a numpy array of an input");
        }
        Py_DECREF(arr);
    }
    Py_DECREF(np);
    if (!s->kwargs || !s->args) return fail(err, RPX_ENOMEM, "out of memory");
    s->n_values = PyDict_Size(s->kwargs);
    s->kwnames = PyTuple_New(s->n_values);
    s->values = calloc((size_t)s->n_values + 1, sizeof *s->values);
    if (!s->kwnames || !s->values) return fail(err, RPX_ENOMEM, "out of memory");
    {
        Py_ssize_t pos = 0, k = 0;
        PyObject *key, *value;
        while (PyDict_Next(s->kwargs, &pos, &key, &value)) {
            Py_INCREF(key);
            PyTuple_SET_ITEM(s->kwnames, k, key);
            s->values[k++] = value; /* borrowed: kwargs holds them */
        }
    }
    return 0;
}

/* Names of the module's public callables, for an error message. */
static void list_callables(PyObject *module, char *buf, size_t size)
{
    PyObject *names = PyObject_Dir(module);
    Py_ssize_t i, n = names ? PyList_Size(names) : 0;
    size_t used = 0;
    buf[0] = '\0';
    for (i = 0; i < n && used + 4 < size; i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        const char *c = utf8_or(name, NULL);
        PyObject *v;
        if (!c || c[0] == '_') continue;
        v = PyObject_GetAttr(module, name);
        if (v && PyCallable_Check(v) && !PyType_Check(v) && !PyModule_Check(v))
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", c);
        Py_XDECREF(v);
        if (used >= size) used = size - 1;
    }
    PyErr_Clear();
    Py_XDECREF(names);
}

/* inspect.signature(func).bind(**kwargs): the arrays must fit the parameters. */
static int check_signature(py_state *s, rpx_error *err)
{
    PyObject *inspect = PyImport_ImportModule("inspect"), *sig = NULL, *bound = NULL, *bind;
    int rc = 0;
    if (inspect) sig = PyObject_CallMethod(inspect, "signature", "O", s->func);
    if (!sig) { /* builtins and some extensions have no signature: the call will tell */
        PyErr_Clear();
        Py_XDECREF(inspect);
        return 0;
    }
    bind = PyObject_GetAttrString(sig, "bind");
    if (bind) bound = PyObject_Call(bind, s->args, s->kwargs);
    if (!bound) {
        char why[512], names[256] = "";
        PyObject *text, *k;
        Py_ssize_t pos = 0;
        size_t used = 0;
        PyObject *type, *value, *tb, *msg;
        PyErr_Fetch(&type, &value, &tb);
        msg = value ? PyObject_Str(value) : NULL;
        text = PyObject_Str(sig);
        snprintf(why, sizeof why, "%s", utf8_or(msg, "?"));
        while (PyDict_Next(s->kwargs, &pos, &k, NULL) && used + 2 < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                     utf8_or(k, "?"));
        rc = fail(err, RPX_EINVAL,
                  "%s%s does not accept the inputs' arrays as keyword arguments (%s): %s; name "
                  "its parameters after the arrays in the NPZ file",
                  s->function_name, utf8_or(text, "()"),
                  names[0] ? names : "no arrays", why);
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

/* sys.modules['torch'] when the module (or anything) has imported it, else NULL. */
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

static int py_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    py_state *s = *state;
    char what[512];
    int rc;
    s->cuda = info && info->device && strcmp(info->device, "cuda") == 0;
    if ((rc = build_kwargs(s, in, err)) != 0) return rc;
    s->module = PyImport_ImportModule(s->module_name);
    if (!s->module) {
        snprintf(what, sizeof what,
                 "cannot import the module '%s' (looked in the current folder, PYTHONPATH and "
                 "the virtualenv, if any)",
                 s->module_name);
        return py_fail(err, RPX_ENOTFOUND, what);
    }
    s->func = PyObject_GetAttrString(s->module, s->function_name);
    if (s->func && !PyCallable_Check(s->func))
        return fail(err, RPX_EINVAL, "'%s.%s' is not callable (an object of type %s); name a "
                                     "function",
                    s->module_name, s->function_name, Py_TYPE(s->func)->tp_name);
    if (!s->func) {
        char names[400];
        PyObject *file;
        PyErr_Clear(); /* the AttributeError */
        file = PyObject_GetAttrString(s->module, "__file__");
        PyErr_Clear();
        list_callables(s->module, names, sizeof names);
        rc = fail(err, RPX_ENOTFOUND, "the module '%s' (%s) has no function '%s'; its functions: %s",
                  s->module_name,
                  utf8_or(file, "built-in"),
                  s->function_name, names[0] ? names : "none");
        Py_XDECREF(file);
        return rc;
    }
    return check_signature(s, err);
}

static int py_call(void *state, const rpx_inputs *in, rpx_error *err)
{
    py_state *s = state;
    (void)in;
    s->result = PyObject_Vectorcall(s->func, s->values, 0, s->n_values ? s->kwnames : NULL);
    if (s->result) return 0;
    return py_fail(err, RPX_EMODEL, "the function raised an exception");
}

/* The result is released here, after t1: its deallocation is not timed. */
static void py_after_call(void *state, int timed, int rc)
{
    py_state *s = state;
    (void)timed;
    (void)rc;
    Py_CLEAR(s->result);
}

static void py_peaks_reset(void *state)
{
    py_state *s = state;
    PyObject *torch;
    if (!s->cuda || !(torch = torch_module())) return;
    if (torch_cuda_available(torch) && torch_each_device(torch, "reset_peak_memory_stats", NULL, 64) >= 0)
        s->torch_peaks_reset = 1;
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
    out = json_utf8(cur);
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

static json_t *py_section(void *state)
{
    py_state *s = state;
    json_t *o = json_object(), *peaks = json_null(), *method = json_null();
    PyObject *torch = torch_module(), *file;
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *np = PyImport_ImportModule("numpy");
    char version[32];
    file = s->module ? PyObject_GetAttrString(s->module, "__file__") : NULL;
    PyErr_Clear();
    /* the running library's version ("3.11.2 (main, ...)"), not the headers' */
    snprintf(version, sizeof version, "%.*s", (int)strcspn(Py_GetVersion(), " "), Py_GetVersion());
    json_object_set_new(o, "version", json_string(version));
    json_object_set_new(o, "build", sys ? attr_string(sys, "version") : json_null());
    json_object_set_new(o, "executable", json_string(RPX_PYTHON_EXECUTABLE));
    json_object_set_new(o, "module", json_string(s->module_name));
    json_object_set_new(o, "module_file",
                        json_utf8(file));
    json_object_set_new(o, "function", json_string(s->function_name));
    json_object_set_new(o, "numpy_version", np ? attr_string(np, "__version__") : json_null());
    json_object_set_new(o, "inputs", json_string(s->zero_copy ? "read-only numpy views of rpxprof's buffers (no copy)"
                                                             : "read-only numpy views of rpxprof's buffers (address not verified)"));
    json_object_set_new(o, "virtualenv", s->venv_note[0] ? json_string(s->venv_note) : json_null());
    json_object_set_new(o, "torch_version", torch ? attr_string(torch, "__version__") : json_null());
    json_object_set_new(o, "torch_cuda_version", torch ? attr_string(torch, "version.cuda") : json_null());
    json_object_set_new(o, "torch_num_threads", torch ? torch_threads(torch) : json_null());
    if (torch && s->cuda && s->torch_peaks_reset) {
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
    Py_XDECREF(file);
    Py_XDECREF(torch);
    Py_XDECREF(sys);
    Py_XDECREF(np);
    PyErr_Clear();
    return o;
}

static void py_teardown(void *state)
{
    py_state *s = state;
    if (!s) return;
    Py_CLEAR(s->result);
}

/* The interpreter is left running until the process exits: finalising it
 * under torch's or a user's threads is not safe, and a second start in one
 * process is not supported by numpy. */
static void py_unload(rpx_target *t)
{
    py_state *s = t->state;
    if (!s) return;
    if (Py_IsInitialized()) {
        Py_CLEAR(s->result);
        Py_CLEAR(s->func);
        Py_CLEAR(s->module);
        Py_CLEAR(s->kwnames);
        Py_CLEAR(s->kwargs);
        Py_CLEAR(s->args);
    }
    free(s->values);
    free(s);
    t->state = NULL;
}

RPX_PLUGIN_EXPORT int rpx_python_plugin_open(rpx_target *t, const rpx_target_options *opt,
                                             rpx_error *err);
int rpx_python_plugin_open(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    py_state *s = calloc(1, sizeof *s);
    int rc;
    (void)opt;
    if (!s) return fail(err, RPX_ENOMEM, "out of memory");
    s->spec = t->spec;
    s->module_name = t->path;
    s->function_name = t->symbol;
    t->state = s;
    t->unload_fn = py_unload;
    t->setup_fn = py_setup;
    t->teardown_fn = py_teardown;
    t->call = py_call;
    t->after_call_fn = py_after_call;
    t->peaks_reset_fn = py_peaks_reset;
    t->section_fn = py_section;
    if ((rc = start_interpreter(err)) != 0 || (rc = extend_path(s, err)) != 0) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        return fail(err, rc, "--model %s: %s", t->spec, msg);
    }
    return 0;
}
