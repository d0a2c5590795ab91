/* plugins.c — owns finding and loading the target plugins: the Python one
 * for module:function targets (built only where Python's embedding files
 * exist) and the HTTP one for http(s):// targets. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>

#include "rpxprof/error.h"
#include "loader/kinds.h"
#include "loader/plugins.h"

typedef struct plugin {
    const char *kind, *file, *env, *installed;
    int global;
    void *handle;                 /* loaded once, never unloaded */
} plugin;

static int open_with(plugin *p, rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    char buf[PATH_MAX], sym[64];
    const int *abi;
    rpx_plugin_open_fn open_fn;
    if (!p->handle) {
        const char *path = rpx_companion_path(p->file, p->env, p->installed, buf, sizeof buf);
        const char *why;
        if (!path) return RPX_EUNSUPPORTED;
        dlerror();
        p->handle = dlopen(path, RTLD_NOW | (p->global ? RTLD_GLOBAL : RTLD_LOCAL));
        if (!p->handle)
            return (why = dlerror(), rpx_error_set(err, RPX_ENOTFOUND,
                                                   "--model %s: cannot load the %s plugin %s: %s; "
                                                   "rebuild rpxprof or set %s",
                                                   t->display_spec, p->kind, path,
                                                   why ? why : "unknown reason", p->env));
    }
    snprintf(sym, sizeof sym, "rpx_%s_plugin_abi", p->kind);
    abi = (const int *)dlsym(p->handle, sym);
    snprintf(sym, sizeof sym, "rpx_%s_plugin_open", p->kind);
    *(void **)(&open_fn) = dlsym(p->handle, sym);
    if (!abi || *abi != RPX_PLUGIN_ABI || !open_fn)
        return rpx_error_set(err, RPX_EABI,
                             "--model %s: the %s plugin is from another build of rpxprof (plugin "
                             "ABI %d, expected %d); rebuild, or unset %s",
                             t->display_spec, p->kind, abi ? *abi : -1, RPX_PLUGIN_ABI, p->env);
    return open_fn(t, opt, err);
}

#ifndef RPX_PYTHON_INSTALLED_PATH
#define RPX_PYTHON_INSTALLED_PATH NULL
#endif
#ifndef RPX_HTTP_INSTALLED_PATH
#define RPX_HTTP_INSTALLED_PATH NULL
#endif

int rpx__python_open(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    /* global: numpy's and torch's extension modules resolve libpython's symbols
     * from the global scope, as they do in the python3 executable */
    static plugin py = {"python", RPX_PYTHON_PLUGIN_FILE, "RPX_PYTHON_PLUGIN",
                        RPX_PYTHON_INSTALLED_PATH, 1, NULL};
    int rc = open_with(&py, t, opt, err);
    if (rc == RPX_EUNSUPPORTED && !py.handle)
        return rpx_error_set(
            err, RPX_EUNSUPPORTED,
            "--model %s: Python callables need %s, which this build of rpxprof does not have "
            "(it was built without Python's embedding files); install python3-dev "
            "(./scripts/setup.sh does) and rebuild, or give a shared object as ./lib.so:%s",
            t->spec, RPX_PYTHON_PLUGIN_FILE, t->symbol);
    return rc;
}

int rpx__http_open(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    static plugin http = {"http", RPX_HTTP_PLUGIN_FILE, "RPX_HTTP_PLUGIN",
                          RPX_HTTP_INSTALLED_PATH, 0, NULL};
    int rc = open_with(&http, t, opt, err);
    if (rc == RPX_EUNSUPPORTED && !http.handle)
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--model %s: HTTP API targets need %s, which was found neither next "
                             "to rpxprof nor where it is installed; build the project (cmake "
                             "--build build) or set RPX_HTTP_PLUGIN",
                             t->display_spec, RPX_HTTP_PLUGIN_FILE);
    return rc;
}
