/* hostile_models.c — test models that misbehave on purpose (issue 37, second
 * hostile round; tests/cli/test_hostile2.py):
 *   slow_teardown  each call spins 100 us; teardown appends a byte to
 *                  RPX_TEST_MARK_FILE (when set), then sleeps RPX_TEST_TEARDOWN_MS
 *                  (default 2000): a signal lands between two worker processes
 *   nth_crash      setup appends a byte to RPX_TEST_COUNT_FILE; from the process
 *                  whose setup finds more than RPX_TEST_CRASH_AFTER bytes there
 *                  (default 2), the first call raises SIGSEGV: a model that
 *                  crashes in an audit arm after the run's own processes
 *   long_error     call RPX_TEST_AT (default 0) fails with an error message of
 *                  1,024 bytes and no NUL terminator
 *   bad_shape      an output "y" whose shape says 1,000,000 elements and whose
 *                  byte count says 32 (bad_shape_outputs)
 *   ansi_error     call 0 fails with a message holding an ANSI escape (ESC [ 2 J)
 *   marked         each call appends a byte to RPX_TEST_MARK_FILE: a test knows
 *                  how many calls ran without timing them */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rpxprof/model.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int slow_teardown(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT void slow_teardown_teardown(void *state);
EXPORT int nth_crash_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                           rpx_error *err);
EXPORT int nth_crash(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int long_error(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int bad_shape(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int bad_shape_outputs(void *state, rpx_outputs *out, rpx_error *err);
EXPORT int marked(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int ansi_error(void *state, const rpx_inputs *in, rpx_error *err);

static long env_num(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

static void spin_ns(long long ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) < ns);
}

int slow_teardown(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    spin_ns(100000);
    return 0;
}

void slow_teardown_teardown(void *state)
{
    long ms = env_num("RPX_TEST_TEARDOWN_MS", 2000);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    const char *mark = getenv("RPX_TEST_MARK_FILE");
    (void)state;
    if (mark) {
        int fd = open(mark, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd >= 0) {
            if (write(fd, "t", 1) != 1) {
            }
            close(fd);
        }
    }
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static int crash_here;

int nth_crash_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    const char *path = getenv("RPX_TEST_COUNT_FILE");
    struct stat st;
    int fd;
    (void)state;
    (void)in;
    (void)info;
    if (!path) return rpx_model_error(err, "nth_crash: set RPX_TEST_COUNT_FILE");
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0 || write(fd, "x", 1) != 1 || fstat(fd, &st) != 0) {
        if (fd >= 0) close(fd);
        return rpx_model_error(err, "nth_crash: cannot write %s", path);
    }
    close(fd);
    crash_here = st.st_size > env_num("RPX_TEST_CRASH_AFTER", 2);
    return 0;
}

int nth_crash(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    if (crash_here) raise(SIGSEGV);
    spin_ns(50000);
    return 0;
}

static long long_error_calls;

int long_error(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    if (long_error_calls++ != env_num("RPX_TEST_AT", 0)) return 0;
    memset(err->message, 'E', sizeof err->message); /* no NUL anywhere */
    err->code = 1;
    return 1;
}

static float bad_values[8];
static rpx_tensor bad_tensor;

int bad_shape(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    return 0;
}

int bad_shape_outputs(void *state, rpx_outputs *out, rpx_error *err)
{
    (void)state;
    (void)err;
    bad_tensor.name = "y";
    bad_tensor.dtype = RPX_DTYPE_FLOAT32;
    bad_tensor.ndim = 1;
    bad_tensor.shape[0] = 1000000;
    bad_tensor.count = 8;
    bad_tensor.nbytes = sizeof bad_values;
    bad_tensor.data = bad_values;
    out->count = 1;
    out->tensors = &bad_tensor;
    return 0;
}

int marked(void *state, const rpx_inputs *in, rpx_error *err)
{
    const char *mark = getenv("RPX_TEST_MARK_FILE");
    (void)state;
    (void)in;
    if (mark) {
        int fd = open(mark, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd < 0 || write(fd, "c", 1) != 1) {
            if (fd >= 0) close(fd);
            return rpx_model_error(err, "marked: cannot write %s", mark);
        }
        close(fd);
    }
    return 0;
}

int ansi_error(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    return rpx_model_error(err, "bad \033[2J\033[31mthing\r");
}
