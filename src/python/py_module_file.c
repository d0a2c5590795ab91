/* py_module_file.c — a Python module named by its file (py_module_file.h): where
 * its root and module name are, the files importing it reads, and its import in a
 * worker so that the worker runs that file and no other copy of the module. */
#include "python/py_module_file.h"

#include <stdio.h>
#include <string.h>

#include "python/py_call.h"

/* The rules, in Python: run once into a namespace of their own. A refusal is
 * returned as its message (str); the module's own exceptions propagate. */
static const char code[] =
    "import importlib, os, sys\n"
    "def where(path):\n"
    "    f = os.path.realpath(path)\n"
    "    if not os.path.isfile(f):\n"
    "        return ('%s: no such file (a module file, PATH/module.py:FUNCTION, relative to '\n"
    "                'the current folder %s)' % (path, os.getcwd()))\n"
    "    folder, name = os.path.split(f)\n"
    "    parts, files = [name[:-3]], [f]\n"
    "    while os.path.isfile(os.path.join(folder, '__init__.py')):\n"
    "        files.insert(0, os.path.join(folder, '__init__.py'))\n"
    "        folder, pkg = os.path.split(folder)\n"
    "        parts.insert(0, pkg)\n"
    "    for p in parts:\n"
    "        if not p.isidentifier():\n"
    "            return ('%s: %r is not a Python module name, so the file cannot be imported '\n"
    "                    'as %s; rename it (letters, digits, _)' % (path, p, '.'.join(parts)))\n"
    "    return folder, '.'.join(parts), files\n"
    "def load(path):\n"
    "    w = where(path)\n"
    "    if isinstance(w, str): return w\n"
    "    root, name, files = w\n"
    "    top = name.split('.')[0]\n"
    "    for k in [k for k in sys.modules if k == top or k.startswith(top + '.')]:\n"
    "        del sys.modules[k]\n"
    "    sys.path[:] = [root] + [p for p in sys.path if p != root]\n"
    "    importlib.invalidate_caches()\n"
    "    m = importlib.import_module(name)\n"
    "    got = getattr(m, '__file__', None)\n"
    "    if not got or os.path.realpath(got) != files[-1]:\n"
    "        return ('%s: importing %s with %s first on sys.path loaded %s, not this file; a '\n"
    "                'package of that name elsewhere (a namespace package, a .pth file) wins: '\n"
    "                'remove it or give the module by name'\n"
    "                % (path, name, root, got or 'a module without a file'))\n"
    "    return m, name\n";

static PyObject *rules(rpx_error *err)
{
    static PyObject *ns;
    PyObject *r;
    if (ns) return ns;
    if (!(ns = PyDict_New())) return NULL;
    if (PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) != 0 ||
        !(r = PyRun_String(code, Py_file_input, ns, ns))) {
        Py_CLEAR(ns);
        rpx__pycall_py_fail(err, RPX_EUNAVAILABLE, "cannot set up the import of a module file");
        return NULL;
    }
    Py_DECREF(r);
    return ns;
}

int rpx__py_is_module_file(const char *module)
{
    size_t n = module ? strlen(module) : 0;
    return n > 3 && strcmp(module + n - 3, ".py") == 0;
}

/* rules[fn](path): a new reference, or NULL with err set */
static PyObject *call_rule(const char *fn, const char *path, rpx_error *err)
{
    PyObject *ns = rules(err), *f, *r;
    char what[600];
    if (!ns) return NULL;
    f = PyDict_GetItemString(ns, fn);
    r = f ? PyObject_CallFunction(f, "s", path) : NULL;
    if (!r) {
        snprintf(what, sizeof what, "cannot import the module file %s", path);
        rpx__pycall_py_fail(err, RPX_ENOTFOUND, what);
    }
    return r;
}

PyObject *rpx__py_import_file(const char *path, char *dotted, size_t size, rpx_error *err)
{
    PyObject *r = call_rule("load", path, err), *m = NULL;
    const char *name;
    if (!r) return NULL;
    if (PyUnicode_Check(r)) {
        rpx__pycall_fail(err, RPX_ENOTFOUND, "%s", rpx__pycall_utf8_or(r, path));
    } else if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
        m = PyTuple_GET_ITEM(r, 0);
        name = rpx__pycall_utf8_or(PyTuple_GET_ITEM(r, 1), "?");
        snprintf(dotted, size, "%s", name);
        Py_INCREF(m);
    } else {
        rpx__pycall_fail(err, RPX_EUNAVAILABLE, "%s: the module file's import said nothing", path);
    }
    Py_DECREF(r);
    return m;
}

int rpx__py_module_file_files(const char *path, char *out, size_t size, rpx_error *err)
{
    PyObject *r = call_rule("where", path, err), *files;
    size_t used = 0;
    Py_ssize_t i;
    if (size < 2) return rpx__pycall_fail(err, RPX_EINVAL, "no room for the module's files");
    out[0] = out[1] = '\0';
    if (!r) return err ? err->code : RPX_ENOTFOUND;
    if (PyUnicode_Check(r)) {
        rpx__pycall_fail(err, RPX_ENOTFOUND, "%s", rpx__pycall_utf8_or(r, path));
        Py_DECREF(r);
        return RPX_ENOTFOUND;
    }
    files = PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 3 ? PyTuple_GET_ITEM(r, 2) : NULL;
    for (i = 0; files && PyList_Check(files) && i < PyList_GET_SIZE(files); i++) {
        const char *f = rpx__pycall_utf8_or(PyList_GET_ITEM(files, i), NULL);
        size_t n = f ? strlen(f) : 0;
        if (!f) continue;
        if (used + n + 2 > size) {
            Py_DECREF(r);
            return rpx__pycall_fail(err, RPX_EINVAL, "the module's file names are too long");
        }
        memcpy(out + used, f, n + 1);
        used += n + 1;
    }
    out[used] = '\0';
    Py_DECREF(r);
    return 0;
}
