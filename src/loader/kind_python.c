/* kind_python.c — the Python kind: MODULE:FUNCTION where MODULE is a Python
 * module name (the row the grammar falls back to), or a module's file
 * (PATH/module.py:FUNCTION: that file imported in each worker, so that two
 * checkouts of one module compare, python/py_module_file.h); run by the plugin
 * librpxprof-python.so (embedded CPython). The files a run reads (the
 * plugin, each package's __init__.py, the module's file) are asked of the
 * plugin in a child process, so that this one stays without an interpreter. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "loader/kinds.h"
#include "loader/plugins.h"
#include "rpxprof/error.h"

#ifndef RPX_PYTHON_INSTALLED_PATH
#define RPX_PYTHON_INSTALLED_PATH NULL
#endif

/* global: numpy's and torch's extension modules resolve libpython's symbols
 * from the global scope, as they do in the python3 executable */
static const rpx_kind_plugin plugin = {RPX_PYTHON_PLUGIN_FILE, "RPX_PYTHON_PLUGIN",
                                       RPX_PYTHON_INSTALLED_PATH, 1};

static int open_python(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    const char *colon = strrchr(t->spec, ':'); /* checked: MODULE:FUNCTION */
    char buf[PATH_MAX];
    int rc;
    t->path = strndup(t->spec, (size_t)(colon - t->spec));
    t->symbol = strdup(colon + 1);
    if (!t->path || !t->symbol) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    (void)opt; /* the Python kind has no options of its own */
    rc = rpx__plugin_open("python", &plugin, t, NULL, err);
    if (rc == RPX_EUNSUPPORTED && !rpx__plugin_path(&plugin, buf, sizeof buf))
        return rpx_error_set(
            err, RPX_EUNSUPPORTED,
            "--model %s: Python callables need %s, which this build of rpxprof does not have "
            "(it was built without Python's embedding files); install python3-dev "
            "(./scripts/setup.sh does) and rebuild, or give a shared object as ./lib.so:%s",
            t->spec, RPX_PYTHON_PLUGIN_FILE, t->symbol);
    return rc;
}

typedef int (*files_fn)(const char *module, char *out, size_t size, rpx_error *err);

/* In the child: load the plugin, ask it, write the answer to fd. */
static void module_files_child(const char *module, int fd)
{
    static char out[65536];
    char buf[PATH_MAX];
    const char *path = rpx__plugin_path(&plugin, buf, sizeof buf);
    rpx_error err = {0};
    files_fn fn;
    void *h;
    size_t n = 0;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) { /* the interpreter's own warnings come again in the run itself */
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
    }
    if (!path || !(h = dlopen(path, RTLD_NOW | RTLD_GLOBAL))) _exit(1);
    *(void **)(&fn) = dlsym(h, "rpx_python_plugin_files");
    if (!fn || fn(module, out, sizeof out, &err) != 0) _exit(1);
    while (n < sizeof out - 1 && !(out[n] == '\0' && out[n + 1] == '\0')) n++;
    n += 2;
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, out + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(1);
        done += (size_t)w;
    }
    _exit(0);
}

/* The answer of the child, read for 60 s at most: the bytes read. */
static size_t read_answer(int fd, char *buf, size_t size)
{
    size_t got = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) { /* a site .pth that hangs must not hang the run here: 60 s at most */
        struct pollfd pf = {fd, POLLIN, 0};
        long left_ms;
        ssize_t r;
        clock_gettime(CLOCK_MONOTONIC, &now);
        left_ms = 60000 - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        if (left_ms <= 0) break;
        r = poll(&pf, 1, (int)left_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
        if (got == size) break;
    }
    return got;
}

/* The files importing `module` reads: 0 after pushing them, -1 out of
 * memory; nothing pushed when the plugin cannot tell. */
static int module_files(const char *module, char ***list, size_t *n)
{
    char buf[65536];
    size_t got, i;
    int fds[2], status, bad = 0;
    pid_t pid;
    if (pipe2(fds, O_CLOEXEC) != 0) return 0;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        module_files_child(module, fds[1]);
    }
    close(fds[1]);
    got = read_answer(fds[0], buf, sizeof buf);
    close(fds[0]);
    kill(pid, SIGKILL); /* done or given up: it has nothing more to say */
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (got < 2 || buf[got - 1] != '\0' || buf[got - 2] != '\0') return 0;
    for (i = 0; i + 1 < got && buf[i] && !bad; i += strlen(buf + i) + 1)
        bad = rpx__strv_push(list, n, buf + i);
    return bad ? -1 : 0;
}

static int files(const char *spec, char ***list, size_t *n)
{
    const char *colon = strrchr(spec, ':');
    char *module = colon ? strndup(spec, (size_t)(colon - spec)) : NULL;
    int rc;
    if (!module) return -1;
    rc = module_files(module, list, n);
    free(module);
    return rc;
}

/* PATH of PATH.py:FUNCTION (a module's file; relative to a manifest's folder
 * there), never a module name */
static long local_path(const char *spec)
{
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || !rpx__kind_python_file(spec, (size_t)(colon - spec))) return -1;
    return (long)(colon - spec);
}

const rpx_kind rpx__kind_python = {
    .name = "python",
    .check = rpx__kind_check_callable,
    .open = open_python,
    .files = files,
    .local_path = local_path,
    .plugin = &plugin,
    .caps = RPX_KIND_INTERPRETER,
    .words = "a Python callable",
    .what = "a Python call through the embedded interpreter",
    .scope = "synchronized_callable_wall_time: the Python call (result released after the "
             "sample); preloaded_inputs as read-only numpy views",
    .scope_writable = "synchronized_callable_wall_time: the Python call (result released "
                      "after the sample); preloaded_inputs as writable numpy views, restored "
                      "before every call outside the timed span",
};
