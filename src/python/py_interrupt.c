/* py_interrupt.c — owns the GIL and SIGINT while rpxprof.profile(processes=N)
 * waits on its worker processes (py_interrupt.h). */
#include "python/py_interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

/* signal.set_wakeup_fd(fd) (PySignal_SetWakeupFd is not exported): the fd
 * before, or -2 when Python refused (not the main thread): no watcher then */
static int set_wakeup(int fd)
{
    PyObject *m = PyImport_ImportModule("signal"), *r;
    long old = -2;
    r = m ? PyObject_CallMethod(m, "set_wakeup_fd", "i", fd) : NULL;
    if (r) old = PyLong_AsLong(r);
    if (!r || PyErr_Occurred()) {
        PyErr_Clear();
        old = -2;
    }
    Py_XDECREF(r);
    Py_XDECREF(m);
    return (int)old;
}

static int g_running; /* the runner's signal handling is the process's: one run at a time */

static void *watch(void *arg)
{
    rpx_py_run *r = arg;
    unsigned char b;
    for (;;) {
        ssize_t n = read(r->rd, &b, 1);
        if (n == 0) break; /* the write end closed: the run is over */
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (r->old_fd >= 0) (void)!write(r->old_fd, &b, 1); /* the caller's own wakeup fd */
        if (!r->forwarded && b == SIGINT) { /* once: Python's own handler may trip again */
            r->forwarded = 1;
            kill(getpid(), SIGINT);
        }
    }
    return NULL;
}

int rpx__py_run_begin(rpx_py_run *r)
{
    int p[2];
    r->ts = NULL;
    r->rd = r->wr = r->old_fd = -1;
    r->watching = 0;
    r->forwarded = 0;
    if (g_running) {
        PyErr_SetString(PyExc_RuntimeError, "rpxprof.profile is already running in this process "
                                            "(another thread); run one at a time");
        return -1;
    }
    g_running = 1;
    if (pipe2(p, O_CLOEXEC) == 0) {
        (void)fcntl(p[1], F_SETFL, O_NONBLOCK);
        r->rd = p[0];
        r->wr = p[1];
        r->old_fd = set_wakeup(r->wr);
        if (r->old_fd != -2 && pthread_create(&r->watcher, NULL, watch, r) == 0) {
            r->watching = 1;
        } else {
            if (r->old_fd != -2) (void)set_wakeup(r->old_fd);
            close(r->rd);
            close(r->wr);
            r->rd = r->wr = r->old_fd = -1;
        }
    }
    r->ts = PyEval_SaveThread();
    return 0;
}

int rpx__py_run_end(rpx_py_run *r, int interrupted)
{
    if (r->ts) PyEval_RestoreThread(r->ts);
    r->ts = NULL;
    if (r->watching) {
        (void)set_wakeup(r->old_fd);
        close(r->wr);
        pthread_join(r->watcher, NULL);
        close(r->rd);
        r->watching = 0;
    }
    g_running = 0;
    if (PyErr_CheckSignals() != 0) {
        /* the interrupt the run already acted on: its Interrupted (.report) says it */
        if (interrupted && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    return 0;
}

void rpx__py_run_before_fork(void *arg)
{
    rpx_py_run *r = arg;
    if (r && r->ts) {
        PyEval_RestoreThread(r->ts);
        r->ts = NULL;
    }
    PyOS_BeforeFork();
}

void rpx__py_run_after_fork_parent(void *arg)
{
    rpx_py_run *r = arg;
    PyOS_AfterFork_Parent();
    if (r) r->ts = PyEval_SaveThread();
}

void rpx__py_run_after_fork_child(void *arg)
{
    rpx_py_run *r = arg;
    PyOS_AfterFork_Child(); /* the child keeps the GIL: it runs the model */
    if (r && r->watching) { /* the watcher is the parent's: no copy of its pipe stays open here */
        (void)set_wakeup(-1);
        close(r->rd);
        close(r->wr);
        r->watching = 0;
    }
}
