/* plugins.c — owns finding and loading a kind's plugin (its row's
 * rpx_kind_plugin): the file, the ABI check, the open call. The kinds say
 * what to do when the file is not found. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "loader/kinds.h"
#include "loader/plugins.h"

/* each plugin loaded once, never unloaded */
static struct {
    const rpx_kind_plugin *plugin;
    void *handle;
} loaded[8];

static void **handle_of(const rpx_kind_plugin *p)
{
    size_t i;
    for (i = 0; i < sizeof loaded / sizeof loaded[0]; i++) {
        if (!loaded[i].plugin) loaded[i].plugin = p;
        if (loaded[i].plugin == p) return &loaded[i].handle;
    }
    return NULL;
}

int rpx__plugin_open(const char *kind, const rpx_kind_plugin *p, rpx_target *t,
                     const rpx_kv_list *opts, rpx_error *err)
{
    char buf[PATH_MAX], sym[64];
    const int *abi;
    static const rpx_kv_list none = {NULL, 0};
    rpx_plugin_open_fn open_fn;
    void **handle = handle_of(p);
    if (!handle) return rpx_error_set(err, RPX_ENOMEM, "too many plugins");
    if (!*handle) {
        const char *path = rpx__plugin_path(p, buf, sizeof buf);
        const char *why;
        if (!path) return RPX_EUNSUPPORTED;
        dlerror();
        *handle = dlopen(path, RTLD_NOW | (p->global ? RTLD_GLOBAL : RTLD_LOCAL));
        if (!*handle)
            return (why = dlerror(), rpx_error_set(err, RPX_ENOTFOUND,
                                                   "--model %s: cannot load the %s plugin %s: %s; "
                                                   "rebuild rpxprof or set %s",
                                                   t->display_spec, kind, path,
                                                   why ? why : "unknown reason", p->env));
    }
    snprintf(sym, sizeof sym, "rpx_%s_plugin_abi", kind);
    abi = (const int *)dlsym(*handle, sym);
    snprintf(sym, sizeof sym, "rpx_%s_plugin_open", kind);
    *(void **)(&open_fn) = dlsym(*handle, sym);
    if (!abi || *abi != RPX_PLUGIN_ABI || !open_fn)
        return rpx_error_set(err, RPX_EABI,
                             "--model %s: the %s plugin is from another build of rpxprof (plugin "
                             "ABI %d, expected %d); rebuild, or unset %s",
                             t->display_spec, kind, abi ? *abi : -1, RPX_PLUGIN_ABI, p->env);
    if (!opts) opts = &none;
    return open_fn(t, opts, err);
}

const char *rpx__plugin_path(const rpx_kind_plugin *p, char *buf, size_t size)
{
    return p ? rpx_companion_path(p->file, p->env, p->installed, buf, size) : NULL;
}
