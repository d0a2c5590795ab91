/* python_target.c — librpxprof-python.so: the Python target of `rpxprof run
 * --model module:function`. It embeds CPython, extends sys.path (the current
 * folder, an active virtualenv) and imports MODULE in setup, outside timing.
 * Calling the function (numpy arrays over rpxprof's buffers as keyword
 * arguments, the result released after the timed span, torch's peaks) is
 * py_call.c's, shared with the extension module rpxprof._core. */
#include "python/py_call.h"
#include "python/py_module_file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "rpxprof/target.h"
#include "loader/plugins.h"

#ifndef RPX_PYTHON_EXECUTABLE
#define RPX_PYTHON_EXECUTABLE "/usr/bin/python3"
#endif

RPX_PLUGIN_EXPORT const int rpx_python_plugin_abi = RPX_PLUGIN_ABI;

typedef struct py_state {
    rpx__pycall call;             /* first: the py_call hooks take this state */
    const char *spec, *module_name, *function_name;
    PyObject *module;
    char venv_note[512];
    int venv_used;
    char dotted[256];             /* MODULE given as a file (PATH.py): its module name */
} py_state;

#define fail rpx__pycall_fail
#define py_fail rpx__pycall_py_fail
#define utf8_or rpx__pycall_utf8_or

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

static int py_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    py_state *s = *state;
    char what[512];
    int rc;
    s->call.cuda = info && info->device && strcmp(info->device, "cuda") == 0;
    s->call.function_name = s->function_name;
    if ((rc = rpx__pycall_bind(&s->call, in, err)) != 0) return rc;
    if (rpx__py_is_module_file(s->module_name)) { /* its own copy, never another's */
        if (!(s->module = rpx__py_import_file(s->module_name, s->dotted, sizeof s->dotted, err)))
            return err ? err->code : RPX_ENOTFOUND;
    } else if (!(s->module = PyImport_ImportModule(s->module_name))) {
        snprintf(what, sizeof what,
                 "cannot import the module '%s' (looked in the current folder, PYTHONPATH and "
                 "the virtualenv, if any)",
                 s->module_name);
        return py_fail(err, RPX_ENOTFOUND, what);
    }
    s->call.func = PyObject_GetAttrString(s->module, s->function_name);
    if (s->call.func && !PyCallable_Check(s->call.func))
        return fail(err, RPX_EINVAL, "'%s.%s' is not callable (an object of type %s); name a "
                                     "function",
                    s->module_name, s->function_name, Py_TYPE(s->call.func)->tp_name);
    if (!s->call.func) {
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
    return rpx__pycall_check_signature(&s->call, err);
}

static json_t *py_section(void *state)
{
    py_state *s = state;
    json_t *o = json_object();
    PyObject *file = s->module ? PyObject_GetAttrString(s->module, "__file__") : NULL;
    PyErr_Clear();
    rpx__pycall_version(o);
    json_object_set_new(o, "executable", json_string(RPX_PYTHON_EXECUTABLE));
    json_object_set_new(o, "module", json_string(s->dotted[0] ? s->dotted : s->module_name));
    json_object_set_new(o, "module_file", rpx__pycall_json_utf8(file));
    json_object_set_new(o, "function", json_string(s->function_name));
    rpx__pycall_section(&s->call, o);
    json_object_set_new(o, "virtualenv", s->venv_note[0] ? json_string(s->venv_note) : json_null());
    Py_XDECREF(file);
    return o;
}

static void py_teardown(void *state)
{
    py_state *s = state;
    if (!s) return;
    Py_CLEAR(s->call.result);
}

/* The interpreter is left running until the process exits: finalising it
 * under torch's or a user's threads is not safe, and a second start in one
 * process is not supported by numpy. */
static void py_unload(void *state)
{
    py_state *s = state;
    if (!s) return;
    rpx__pycall_clear(&s->call);
    if (Py_IsInitialized()) Py_CLEAR(s->module);
    free(s);
}

/* The files importing `module` would read (each package's __init__.py on the
 * way, then the module's own file), found as Python finds them: sys.path as
 * setup extends it, sys.meta_path's finders, no module's code run. Written
 * into out as NUL-terminated paths one after another, an empty one last.
 * For the output guard (rpx_target_files); a module not found gives none. */
RPX_PLUGIN_EXPORT int rpx_python_plugin_files(const char *module, char *out, size_t size,
                                              rpx_error *err);
int rpx_python_plugin_files(const char *module, char *out, size_t size, rpx_error *err)
{
    static const char code[] =
        "def _rpx_module_files(name):\n"
        "    import sys\n"
        "    files, path, spec = [], None, None\n"
        "    parts = name.split('.')\n"
        "    for i in range(len(parts)):\n"
        "        full = '.'.join(parts[:i + 1])\n"
        "        spec = None\n"
        "        m = sys.modules.get(full)\n"
        "        if m is not None: spec = getattr(m, '__spec__', None)\n"
        "        for finder in ([] if spec is not None else sys.meta_path):\n"
        "            f = getattr(finder, 'find_spec', None)\n"
        "            if f is None: continue\n"
        "            try: spec = f(full, path)\n"
        "            except Exception: spec = None\n"
        "            if spec is not None: break\n"
        "        if spec is None: break\n"
        "        if getattr(spec, 'has_location', False) and isinstance(spec.origin, str):\n"
        "            files.append(spec.origin)\n"
        "        path = spec.submodule_search_locations\n"
        "        if path is None: break\n"
        "    return '\\0'.join(files)\n";
    py_state s;
    PyObject *main, *g, *fn, *r;
    const char *t;
    Py_ssize_t n = 0;
    int rc;
    memset(&s, 0, sizeof s);
    if (size < 2) return fail(err, RPX_EINVAL, "no room for the module's files");
    out[0] = out[1] = '\0';
    if ((rc = start_interpreter(err)) != 0 || (rc = extend_path(&s, err)) != 0) return rc;
    if (rpx__py_is_module_file(module)) return rpx__py_module_file_files(module, out, size, err);
    main = PyImport_AddModule("__main__");
    if (!main) return py_fail(err, RPX_EUNAVAILABLE, "cannot look for the module");
    g = PyModule_GetDict(main);
    if ((r = PyRun_String(code, Py_file_input, g, g)) == NULL)
        return py_fail(err, RPX_EUNAVAILABLE, "cannot look for the module");
    Py_DECREF(r);
    fn = PyDict_GetItemString(g, "_rpx_module_files");
    r = fn ? PyObject_CallFunction(fn, "s", module) : NULL;
    if (!r || !PyUnicode_Check(r) || !(t = PyUnicode_AsUTF8AndSize(r, &n))) {
        Py_XDECREF(r);
        return py_fail(err, RPX_EUNAVAILABLE, "cannot look for the module");
    }
    if ((size_t)n + 2 > size) {
        Py_DECREF(r);
        return fail(err, RPX_EINVAL, "the module's file names are too long");
    }
    memcpy(out, t, (size_t)n);
    out[n] = '\0';
    out[n + 1] = '\0';
    Py_DECREF(r);
    return 0;
}

RPX_PLUGIN_EXPORT int rpx_python_plugin_open(rpx_target *t, const rpx_kv_list *opts,
                                             rpx_error *err);
int rpx_python_plugin_open(rpx_target *t, const rpx_kv_list *opts, rpx_error *err)
{
    py_state *s;
    int rc;
    if (opts && opts->n > 0) /* the Python kind takes no options of its own */
        return fail(err, RPX_EINVAL, "--model %s: the python plugin has no option '%s'; this "
                    "rpxprof and its plugin are from different builds", t->spec,
                    opts->items[0].name ? opts->items[0].name : "(null)");
    if (!(s = calloc(1, sizeof *s))) return fail(err, RPX_ENOMEM, "out of memory");
    s->spec = t->spec;
    s->module_name = t->path;
    s->function_name = t->symbol;
    rpx__pycall_hooks(&t->hooks, s);
    t->hooks.unload = py_unload;
    t->hooks.setup = py_setup;
    t->hooks.teardown = py_teardown;
    t->hooks.section = py_section;
    if ((rc = start_interpreter(err)) != 0 || (rc = extend_path(s, err)) != 0) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        return fail(err, rc, "--model %s: %s", t->spec, msg);
    }
    return 0;
}
