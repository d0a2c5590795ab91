/* plugins.c — owns finding and loading the target plugins: the Python one
 * for module:function targets (built only where Python's embedding files
 * exist) and the HTTP one for http(s):// targets. */
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

static plugin py = {"python", RPX_PYTHON_PLUGIN_FILE, "RPX_PYTHON_PLUGIN",
                    RPX_PYTHON_INSTALLED_PATH, 1, NULL};
static plugin http = {"http", RPX_HTTP_PLUGIN_FILE, "RPX_HTTP_PLUGIN", RPX_HTTP_INSTALLED_PATH, 0,
                      NULL};

int rpx__python_open(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    /* global: numpy's and torch's extension modules resolve libpython's symbols
     * from the global scope, as they do in the python3 executable */
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
    int rc = open_with(&http, t, opt, err);
    if (rc == RPX_EUNSUPPORTED && !http.handle)
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--model %s: HTTP API targets need %s, which was found neither next "
                             "to rpxprof nor where it is installed; build the project (cmake "
                             "--build build) or set RPX_HTTP_PLUGIN",
                             t->display_spec, RPX_HTTP_PLUGIN_FILE);
    return rc;
}

const char *rpx__plugin_path(const char *kind, char *buf, size_t size)
{
    const plugin *p = strcmp(kind, "python") == 0 ? &py : strcmp(kind, "http") == 0 ? &http : NULL;
    return p ? rpx_companion_path(p->file, p->env, p->installed, buf, size) : NULL;
}

typedef int (*files_fn)(const char *module, char *out, size_t size, rpx_error *err);

/* In the child: load the plugin, ask it, write the answer to fd. */
static void module_files_child(const char *module, int fd)
{
    static char out[65536];
    char buf[PATH_MAX];
    const char *path = rpx__plugin_path("python", buf, sizeof buf);
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

int rpx__python_module_files(const char *module, char ***files, size_t *n_files)
{
    char buf[65536];
    size_t got = 0;
    int fds[2], status;
    pid_t pid;
    struct timespec t0, now;
    *files = NULL;
    *n_files = 0;
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        module_files_child(module, fds[1]);
    }
    close(fds[1]);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) { /* a site .pth that hangs must not hang the run here: 60 s at most */
        struct pollfd pf = {fds[0], POLLIN, 0};
        long left_ms;
        ssize_t r;
        clock_gettime(CLOCK_MONOTONIC, &now);
        left_ms = 60000 - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        if (left_ms <= 0) break;
        r = poll(&pf, 1, (int)left_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        r = read(fds[0], buf + got, sizeof buf - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
        if (got == sizeof buf) break;
    }
    close(fds[0]);
    kill(pid, SIGKILL); /* done or given up: it has nothing more to say */
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (got < 2 || buf[got - 1] != '\0' || buf[got - 2] != '\0') return -1;
    {
        size_t i = 0, k = 0, count = 0;
        char **list;
        for (i = 0; i + 1 < got; i += strlen(buf + i) + 1)
            if (buf[i]) count++;
            else break;
        list = calloc(count + 1, sizeof *list);
        if (!list) return -1;
        for (i = 0; k < count; i += strlen(buf + i) + 1)
            if (!(list[k++] = strdup(buf + i))) {
                while (k > 0) free(list[--k]);
                free(list);
                return -1;
            }
        *files = list;
        *n_files = count;
    }
    return 0;
}
