/* py_interrupt.h — rpxprof.profile(processes=N) while the runner waits on its
 * worker processes: the GIL released (the caller's other threads run), and a
 * SIGINT they raise acted on at once. A real signal reaches the runner's own
 * handler; _thread.interrupt_main() raises none, only trips Python's flag and
 * writes to Python's wakeup fd, which a watcher thread turns into a real
 * SIGINT for the runner (signal.set_wakeup_fd: the main thread only). After the run, the KeyboardInterrupt Python still
 * holds is taken when the run says interrupted (profile raises
 * rpxprof.Interrupted with .report instead of a bare one). */
#ifndef RPX_PYTHON_PY_INTERRUPT_H
#define RPX_PYTHON_PY_INTERRUPT_H

#include <Python.h>
#include <pthread.h>

typedef struct rpx_py_run {
    PyThreadState *ts;            /* the caller's thread state while the GIL is released */
    int rd, wr, old_fd;           /* the wakeup pipe, Python's wakeup fd before it */
    int watching;
    pthread_t watcher;
    volatile int forwarded;       /* a wakeup byte became a real SIGINT */
} rpx_py_run;

/* With the GIL held: 0, or -1 with a Python exception set (another profile
 * runs in this process). Releases the GIL. */
int rpx__py_run_begin(rpx_py_run *r);
/* Takes the GIL back; interrupted: the run ended interrupted (the pending
 * KeyboardInterrupt of a forwarded interrupt_main() is taken: 0); otherwise a
 * signal Python holds is raised as usual (-1 with the exception set). */
int rpx__py_run_end(rpx_py_run *r, int interrupted);
/* The runner's fork callbacks (fork_arg: the rpx_py_run): the GIL around fork. */
void rpx__py_run_before_fork(void *arg);
void rpx__py_run_after_fork_parent(void *arg);
void rpx__py_run_after_fork_child(void *arg);

#endif
