/* shared_object.c — owns loading C/C++ shared objects (including the
 * packaged demo library) with dlopen. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "common/user_file.h"
#include "rpxprof/error.h"
#include "rpxprof/target.h"
#include "loader/kinds.h"

int rpx__shared_object_open(rpx_target *t, rpx_error *err)
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
    *(void **)(&t->call) = dlsym(t->handle, t->symbol);
    if (!t->call)
        return rpx_error_set(err, RPX_ENOTFOUND,
                             "--model %s: the library %s has no symbol '%s'; export it with C "
                             "linkage (extern \"C\" in C++) and default visibility",
                             spec_for_msg, t->path, t->symbol);
    snprintf(sym, sizeof sym, "%s_setup", t->symbol);
    *(void **)(&t->setup_fn) = dlsym(t->handle, sym);
    snprintf(sym, sizeof sym, "%s_teardown", t->symbol);
    *(void **)(&t->teardown_fn) = dlsym(t->handle, sym);
    snprintf(sym, sizeof sym, "%s_outputs", t->symbol); /* read only by --check-outputs */
    *(void **)(&t->outputs_fn) = dlsym(t->handle, sym);
    return 0;
}
