/* shared_object.c — owns --model parsing and loading C/C++ shared objects
 * (including the packaged demo library) with dlopen. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "rpxprof/target.h"

#define DEMO_PREFIX "rpxprof-demo:"
#define DEMO_FILE "librpxprof-demo.so"

static int file_exists(const char *p)
{
    return access(p, R_OK) == 0;
}

/* Try DIR/DEMO_FILE and DIR/../lib/rpxprof/DEMO_FILE for the folder of `self`. */
static int demo_near(const char *self, char *buf, size_t size)
{
    char dir[PATH_MAX];
    char *slash;
    if (!self || !*self) return 0;
    snprintf(dir, sizeof dir, "%s", self);
    slash = strrchr(dir, '/');
    if (!slash) return 0;
    *slash = '\0';
    snprintf(buf, size, "%s/%s", dir, DEMO_FILE);
    if (file_exists(buf)) return 1;
    snprintf(buf, size, "%s/../lib/rpxprof/%s", dir, DEMO_FILE);
    if (file_exists(buf)) return 1;
    return 0;
}

const char *rpx_demo_library_path(char *buf, size_t size)
{
    const char *env = getenv("RPX_DEMO_LIBRARY");
    char exe[PATH_MAX];
    Dl_info info;
    ssize_t n;
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return buf;
    }
    /* next to the library that holds this code (librpxprof.so or a static CLI) */
    if (dladdr((void *)rpx_demo_library_path, &info) && info.dli_fname &&
        demo_near(info.dli_fname, buf, size))
        return buf;
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        if (demo_near(exe, buf, size)) return buf;
    }
#ifdef RPX_DEMO_INSTALLED_PATH
    snprintf(buf, size, "%s", RPX_DEMO_INSTALLED_PATH);
    if (file_exists(buf)) return buf;
#endif
    return NULL;
}

static void target_free(rpx_target *t)
{
    if (!t) return;
    if (t->handle) dlclose(t->handle);
    free(t->spec);
    free(t->path);
    free(t->symbol);
    free(t);
}

static int valid_symbol(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static int open_shared_object(rpx_target *t, const char *spec_for_msg, rpx_error *err)
{
    char sym[512];
    const int *abi;
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
    return 0;
}

int rpx_target_open(const char *spec, rpx_target **out, rpx_error *err)
{
    rpx_target *t;
    const char *colon;
    int rc;
    *out = NULL;
    if (!spec || !*spec)
        return rpx_error_set(err, RPX_EINVAL,
                             "--model is empty; give PATH/lib.so:SYMBOL, rpxprof-demo:SYMBOL, "
                             "module:function or an http(s):// URL");
    if (strncmp(spec, "http://", 7) == 0 || strncmp(spec, "https://", 8) == 0)
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--model %s: HTTP API targets are not supported by this build of "
                             "rpxprof; profile a shared object (PATH/lib.so:SYMBOL) instead",
                             spec);
    colon = strrchr(spec, ':');
    if (!colon || colon == spec || !colon[1])
        return rpx_error_set(err, RPX_EINVAL,
                             "--model %s: expected PATH/lib.so:SYMBOL, rpxprof-demo:SYMBOL, "
                             "module:function or an http(s):// URL (missing ':SYMBOL'?)",
                             spec);
    if (!valid_symbol(colon + 1))
        return rpx_error_set(err, RPX_EINVAL,
                             "--model %s: '%s' is not a valid C symbol name (letters, digits, "
                             "'_')",
                             spec, colon + 1);
    t = calloc(1, sizeof *t);
    if (!t) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    t->spec = strdup(spec);
    t->symbol = strdup(colon + 1);
    t->kind = RPX_TARGET_SHARED_OBJECT;
    t->kind_name = "shared_object";
    if (!t->spec || !t->symbol) {
        target_free(t);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    if (strncmp(spec, DEMO_PREFIX, strlen(DEMO_PREFIX)) == 0 &&
        (size_t)(colon - spec) == strlen(DEMO_PREFIX) - 1) {
        char buf[PATH_MAX];
        if (!rpx_demo_library_path(buf, sizeof buf)) {
            target_free(t);
            return rpx_error_set(err, RPX_ENOTFOUND,
                                 "--model %s: the packaged demo library %s was found neither "
                                 "next to rpxprof nor where it is installed; build the project "
                                 "(cmake --build build) or set RPX_DEMO_LIBRARY",
                                 spec, DEMO_FILE);
        }
        t->path = strdup(buf);
    } else {
        size_t plen = (size_t)(colon - spec);
        int is_so = memchr(spec, '/', plen) != NULL ||
                    (plen > 3 && strncmp(colon - 3, ".so", 3) == 0) ||
                    memmem(spec, plen, ".so.", 4) != NULL;
        if (!is_so) {
            target_free(t);
            return rpx_error_set(err, RPX_EUNSUPPORTED,
                                 "--model %s: Python callables (module:function) are not "
                                 "supported by this build of rpxprof; for a shared object "
                                 "write its path with a '/' (./libm.so:%s)",
                                 spec, colon + 1);
        }
        /* a bare file name is never searched on the library path: it names a file here */
        if (memchr(spec, '/', plen))
            t->path = strndup(spec, plen);
        else if ((t->path = malloc(plen + 3)) != NULL)
            snprintf(t->path, plen + 3, "./%.*s", (int)plen, spec);
    }
    if (!t->path) {
        target_free(t);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    rc = open_shared_object(t, spec, err);
    if (rc) {
        target_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int rpx_target_setup(rpx_target *t, const rpx_inputs *inputs, const rpx_run_info *info,
                     rpx_error *err)
{
    rpx_error merr;
    int rc;
    if (!t) return RPX_EINVAL;
    /* a setup that fails cleans up after itself: teardown runs only after success */
    if (!t->setup_fn) {
        t->setup_done = 1;
        return 0;
    }
    memset(&merr, 0, sizeof merr);
    rc = t->setup_fn(&t->state, inputs, info, &merr);
    if (rc != 0)
        return rpx_error_set(err, RPX_EMODEL, "--model %s: %s_setup failed (returned %d): %s",
                             t->spec, t->symbol, rc,
                             merr.message[0] ? merr.message : "no message given");
    t->setup_done = 1;
    return 0;
}

void rpx_target_close(rpx_target *t)
{
    if (!t) return;
    if (t->setup_done && t->teardown_fn) t->teardown_fn(t->state);
    target_free(t);
}
