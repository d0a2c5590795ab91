/* shared_object.c — the shared-object kind: PATH:SYMBOL where PATH has a '/'
 * or looks like a library (.so, .so.N), and rpxprof-demo:SYMBOL, the packaged
 * demo library; loaded with dlopen, the model ABI's NAME, NAME_setup,
 * NAME_teardown and NAME_outputs looked up. Its row also claims a text
 * without ':' (a missing ':SYMBOL' is its grammar's error) and a PATH that
 * is no Python module name (the "neither" error when opened); never a PATH
 * ending in ".py" (a Python module's file: kind_python.c). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

#include "common/user_file.h"
#include "rpxprof/error.h"
#include "rpxprof/target.h"
#include "loader/kinds.h"

static int load(rpx_target *t, rpx_error *err)
{
    const char *spec_for_msg = t->spec;
    char sym[512];
    const int *abi;
    char label[4200];
    snprintf(label, sizeof label, "--model %s", spec_for_msg);
    /* a FIFO would block dlopen's read for a writer without end */
    if (strchr(t->path, '/') && rpx__user_file_regular(t->path, label, err) != 0)
        return RPX_EIO;
    dlerror();
    /* dlopen searches the library path for a bare name; a path with a '/' is used as is */
    t->handle = dlopen(t->path, RTLD_NOW | RTLD_LOCAL);
    if (!t->handle) {
        const char *why = dlerror();
        return rpx_error_set(err, RPX_ENOTFOUND,
                             "--model %s: cannot load the library: %s; check the path and "
                             "that the library and its dependencies are built for this machine",
                             spec_for_msg, why ? why : "unknown reason");
    }
    abi = (const int *)dlsym(t->handle, "rpx_model_abi_version");
    if (abi && *abi != RPX_MODEL_ABI_VERSION)
        return rpx_error_set(err, RPX_EABI,
                             "--model %s: the library was built against model ABI version %d, "
                             "this rpxprof speaks version %d; rebuild it against this "
                             "rpxprof's include/rpxprof/model.h",
                             spec_for_msg, *abi, RPX_MODEL_ABI_VERSION);
    dlerror();
    *(void **)(&t->hooks.call) = dlsym(t->handle, t->symbol);
    if (!t->hooks.call)
        return rpx_error_set(err, RPX_ENOTFOUND,
                             "--model %s: the library %s has no symbol '%s'; export it with C "
                             "linkage (extern \"C\" in C++) and default visibility",
                             spec_for_msg, t->path, t->symbol);
    snprintf(sym, sizeof sym, "%s_setup", t->symbol);
    *(void **)(&t->hooks.setup) = dlsym(t->handle, sym);
    snprintf(sym, sizeof sym, "%s_teardown", t->symbol);
    *(void **)(&t->hooks.teardown) = dlsym(t->handle, sym);
    snprintf(sym, sizeof sym, "%s_outputs", t->symbol); /* read only by --check-outputs */
    *(void **)(&t->hooks.outputs) = dlsym(t->handle, sym);
    return 0;
}

#define DEMO_PREFIX "rpxprof-demo:"
#define DEMO_FILE "librpxprof-demo.so" /* also in companions.c */

/* the length of PATH in PATH:SYMBOL, or -1 without a ':' */
static long path_len(const char *spec)
{
    const char *colon = strrchr(spec, ':');
    return colon ? (long)(colon - spec) : -1;
}

static int is_demo(const char *spec, size_t plen)
{
    return plen + 1 == strlen(DEMO_PREFIX) && strncmp(spec, DEMO_PREFIX, plen) == 0;
}

/* PATH:SYMBOL names a shared object when PATH has a '/' or looks like a library. */
static int names_shared_object(const char *spec, size_t plen)
{
    return memchr(spec, '/', plen) != NULL || (plen > 3 && strncmp(spec + plen - 3, ".so", 3) == 0) ||
           memmem(spec, plen, ".so.", 4) != NULL;
}

/* Everything but MODULE:FUNCTION with a valid module name or a module's file
 * (PATH.py:FUNCTION), both Python's. */
static int claims(const char *spec)
{
    long plen = path_len(spec);
    if (plen > 0 && rpx__kind_python_file(spec, (size_t)plen)) return 0;
    return plen < 0 || is_demo(spec, (size_t)plen) || names_shared_object(spec, (size_t)plen) ||
           !rpx__kind_identifier(spec, (size_t)plen, 1);
}

static int open_shared_object(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    const char *spec = t->spec;
    long pl = path_len(spec); /* checked: PATH:SYMBOL */
    size_t plen;
    (void)opt;
    if (pl < 0)
        return rpx_error_set(err, RPX_EINVAL, "--model %s: expected PATH:SYMBOL", spec);
    plen = (size_t)pl;
    if (!(t->symbol = strdup(spec + plen + 1))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (is_demo(spec, plen)) {
        char buf[PATH_MAX];
        if (!rpx_demo_library_path(buf, sizeof buf))
            return rpx_error_set(err, RPX_ENOTFOUND,
                                 "--model %s: the packaged demo library %s was found neither "
                                 "next to rpxprof nor where it is installed; build the project "
                                 "(cmake --build build) or set RPX_DEMO_LIBRARY",
                                 spec, DEMO_FILE);
        t->path = strdup(buf);
    } else if (names_shared_object(spec, plen)) {
        /* a bare file name is never searched on the library path: it names a file here */
        if (memchr(spec, '/', plen))
            t->path = strndup(spec, plen);
        else if ((t->path = malloc(plen + 3)) != NULL)
            snprintf(t->path, plen + 3, "./%.*s", (int)plen, spec);
    } else {
        return rpx_error_set(err, RPX_EINVAL,
                             "--model %s: '%.*s' is neither a shared object (write its path "
                             "with a '/': ./lib.so:SYMBOL) nor a Python module name "
                             "(my_model or package.module)",
                             spec, (int)plen, spec);
    }
    if (!t->path) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    return load(t, err);
}

/* PATH of PATH:SYMBOL when it names a library file (not the demo, never a URL) */
static long local_path(const char *spec)
{
    long plen = path_len(spec);
    if (plen <= 0 || strstr(spec, "://") || is_demo(spec, (size_t)plen) ||
        !names_shared_object(spec, (size_t)plen))
        return -1;
    return plen;
}

/* the library's file (the demo's where it is found) */
static int files(const char *spec, char ***list, size_t *n)
{
    char buf[PATH_MAX];
    long plen = path_len(spec);
    if (plen <= 0) return 0;
    if (is_demo(spec, (size_t)plen))
        return rpx__strv_push(list, n, rpx_demo_library_path(buf, sizeof buf));
    if ((size_t)plen >= sizeof buf) return 0;
    snprintf(buf, sizeof buf, "%.*s", (int)plen, spec);
    return rpx__strv_push(list, n, buf);
}

const rpx_kind rpx__kind_shared_object = {
    .name = "shared_object",
    .claims = claims,
    .check = rpx__kind_check_callable,
    .open = open_shared_object,
    .files = files,
    .local_path = local_path,
    .caps = RPX_KIND_C_ABI,
    .words = "a shared object",
    .what = "a call into a shared object in this process",
    .scope_writable = "synchronized_callable_wall_time; preloaded_inputs, writable, "
                      "restored before every call outside the timed span",
    .outputs_how = "export NAME_outputs(void *state, rpx_outputs *outputs, rpx_error *error) "
                   "beside the predict function (docs/abi.md)",
};
