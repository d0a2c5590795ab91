/* py_module_file.h — a Python module named by its file: `--model
 * base/mypkg/model.py:predict` and rpxprof.compare_run("base/mypkg/model.py:predict",
 * "head/mypkg/model.py:predict", ...), the base and the head checkouts of one module.
 *
 * Shared by the plugin librpxprof-python.so and the extension rpxprof._core. The
 * file's module name is its own name, with each folder above it that holds an
 * __init__.py as a package (base/mypkg/model.py with base/mypkg/__init__.py is
 * mypkg.model, imported with base first on sys.path). Importing it drops that
 * top-level package from sys.modules first (a forked worker inherits its parent's
 * modules: the parent may hold the other checkout's copy), puts the root first on
 * sys.path, and checks that the module Python loaded is that very file: each side of
 * a comparison runs its own source, never the other's. Every function needs the GIL. */
#ifndef RPX_PY_MODULE_FILE_H
#define RPX_PY_MODULE_FILE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

#include "rpxprof/error.h"

/* 1 when MODULE of MODULE:FUNCTION names a file (it ends in ".py"), else 0. */
int rpx__py_is_module_file(const char *module);

/* Import the module that the file `path` holds, as above: a new reference, or NULL
 * with err set (a missing file, a name Python cannot import, another file loaded).
 * `dotted` receives its module name ("mypkg.model"). */
PyObject *rpx__py_import_file(const char *path, char *dotted, size_t size, rpx_error *err);

/* The files that importing `path` reads (each package's __init__.py from the root
 * down, then the file), as NUL-terminated paths one after another and an empty one
 * last, into out; nothing is imported. 0, or the error. */
int rpx__py_module_file_files(const char *path, char *out, size_t size, rpx_error *err);

#endif
