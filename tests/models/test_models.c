/* Test models with known behaviour (independent truth for the CLI tests).
 *   busywait      spins for RPX_TEST_BUSY_NS nanoseconds (default 1,000,000)
 *   alloc_touch   each call allocates, touches and frees RPX_TEST_ALLOC_MB MiB (default 256)
 *   hold          setup allocates and touches RPX_TEST_HOLD_MB MiB (default 64), held to teardown
 *   fail_setup    setup fails with a message
 *   fail_call     call number RPX_TEST_FAIL_AT (0-based, default 0) fails with a message
 *   counted       counts setup, calls and teardown into RPX_TEST_COUNT_FILE at teardown
 *   drifting      call k spins 100 us + k us: a model that slows down over the run
 *   cpu_skewed    1.5 ms on the lowest allowed CPU, 1.0 ms on the others (end of file)
 *   memo_last     memoises its last input: instant on a repeat, RPX_TEST_BUSY_NS on a new one
 *   cpu_skewed_scaled  cpu_skewed times RPX_TEST_SCALE: its slower (or faster) twin */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdint.h>

#include "rpxprof/model.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

EXPORT int busywait_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                          rpx_error *err);
EXPORT int busywait(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int alloc_touch(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int hold_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                      rpx_error *err);
EXPORT int hold(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT void hold_teardown(void *state);
EXPORT int fail_setup_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                            rpx_error *err);
EXPORT int fail_setup(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int fail_call(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int counted_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                         rpx_error *err);
EXPORT int counted(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT void counted_teardown(void *state);

static long long busy_ns = 1000000;

int busywait_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)info;
    (void)err;
    busy_ns = env_long("RPX_TEST_BUSY_NS", 1000000);
    return 0;
}

int busywait(void *state, const rpx_inputs *in, rpx_error *err)
{
    long long end = now_ns() + busy_ns;
    (void)state;
    (void)in;
    (void)err;
    while (now_ns() < end) {
    }
    return 0;
}

int alloc_touch(void *state, const rpx_inputs *in, rpx_error *err)
{
    size_t n = (size_t)env_long("RPX_TEST_ALLOC_MB", 256) << 20;
    volatile char *p = malloc(n);
    size_t i;
    (void)state;
    (void)in;
    if (!p) return rpx_model_error(err, "alloc_touch: malloc(%zu) failed", n);
    for (i = 0; i < n; i += 4096) p[i] = (char)i;
    free((void *)p);
    return 0;
}

int hold_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    size_t n = (size_t)env_long("RPX_TEST_HOLD_MB", 64) << 20;
    char *p = malloc(n);
    (void)in;
    (void)info;
    if (!p) return rpx_model_error(err, "hold: malloc(%zu) failed", n);
    memset(p, 1, n);
    *state = p;
    return 0;
}

int hold(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)in;
    (void)err;
    return ((volatile char *)state)[0] == 1 ? 0 : -1;
}

void hold_teardown(void *state)
{
    free(state);
}

int fail_setup_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                     rpx_error *err)
{
    (void)state;
    (void)in;
    (void)info;
    return rpx_model_error(err, "weights file /nonexistent/weights.bin not found");
}

int fail_setup(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    return 0;
}

static long fail_calls;

int fail_call(void *state, const rpx_inputs *in, rpx_error *err)
{
    long at = env_long("RPX_TEST_FAIL_AT", 0);
    (void)state;
    (void)in;
    if (fail_calls++ == at) return rpx_model_error(err, "tensor shape mismatch at call %ld", at);
    return 0;
}

typedef struct counts {
    long setup, calls;
    int inputs_ok;
} counts;

int counted_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    counts *c = calloc(1, sizeof *c);
    size_t i;
    if (!c) return rpx_model_error(err, "out of memory");
    c->setup = 1;
    c->inputs_ok = info && info->abi_version == RPX_MODEL_ABI_VERSION;
    for (i = 0; i < in->count; i++)
        if (((size_t)in->tensors[i].data % RPX_TENSOR_ALIGN) != 0) c->inputs_ok = 0;
    *state = c;
    return 0;
}

int counted(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)in;
    (void)err;
    ((counts *)state)->calls++;
    return 0;
}

void counted_teardown(void *state)
{
    counts *c = state;
    const char *path = getenv("RPX_TEST_COUNT_FILE");
    if (path) {
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%ld %ld %d\n", c->setup, c->calls, c->inputs_ok);
            fclose(f);
        }
    }
    free(c);
}

EXPORT int drifting(void *state, const rpx_inputs *in, rpx_error *err);

static long drift_calls;

int drifting(void *state, const rpx_inputs *in, rpx_error *err)
{
    long long end = now_ns() + 100000 + 1000 * drift_calls++;
    (void)state;
    (void)in;
    (void)err;
    while (now_ns() < end) {
    }
    return 0;
}

/* Models that misbehave, for the isolation tests (call indices count warmup calls too):
 *   crash_at     raises SIGSEGV at call RPX_TEST_AT
 *   abort_setup  setup aborts
 *   hang_at      sleeps forever at call RPX_TEST_AT
 *   kill_at      raises SIGKILL at call RPX_TEST_AT (as the OOM killer would)
 *   exit_at      calls exit(0) at call RPX_TEST_AT */
#include <signal.h>
#include <unistd.h>

EXPORT int crash_at(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int abort_setup_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                             rpx_error *err);
EXPORT int abort_setup(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int hang_at(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int kill_at(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int exit_at(void *state, const rpx_inputs *in, rpx_error *err);

static long misbehave_calls;

static int at_event(void)
{
    return misbehave_calls++ == env_long("RPX_TEST_AT", 0);
}

int crash_at(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    if (at_event()) raise(SIGSEGV);
    return 0;
}

int abort_setup_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                      rpx_error *err)
{
    (void)state;
    (void)in;
    (void)info;
    (void)err;
    abort();
}

int abort_setup(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    return 0;
}

int hang_at(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    if (at_event())
        for (;;) pause();
    return 0;
}

int kill_at(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    if (at_event()) raise(SIGKILL);
    return 0;
}

int exit_at(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    if (at_event()) exit(0);
    return 0;
}

/* leaky: each call keeps 64 KiB (touched) and spins 200 us: a leaking model */
EXPORT int leaky(void *state, const rpx_inputs *in, rpx_error *err);

static void *leaky_kept;

int leaky(void *state, const rpx_inputs *in, rpx_error *err)
{
    char *p = malloc(64 << 10);
    long long end = now_ns() + 200000;
    (void)state;
    (void)in;
    if (!p) return rpx_model_error(err, "leaky: out of memory");
    memset(p, 1, 64 << 10);
    *(void **)p = leaky_kept; /* kept, never freed */
    leaky_kept = p;
    while (now_ns() < end) {
    }
    return 0;
}

/* hog: each call allocates, touches and keeps 16 MiB: run under a memory limit,
 * the kernel's OOM killer ends it */
EXPORT int hog(void *state, const rpx_inputs *in, rpx_error *err);

static void *hog_kept; /* a chain of every block, so none can be optimised away */

int hog(void *state, const rpx_inputs *in, rpx_error *err)
{
    char *p = malloc(16 << 20);
    (void)state;
    (void)in;
    if (!p) return rpx_model_error(err, "hog: out of memory");
    memset(p, 1, 16 << 20);
    *(void **)p = hog_kept;
    hog_kept = p;
    return 0;
}

/* ---- safety tests (docs/robustness.md) ---- */

/* spin_at: call RPX_TEST_AT never returns, busy on the CPU (no system call a
 * signal could interrupt) */
EXPORT int spin_at(void *state, const rpx_inputs *in, rpx_error *err);

int spin_at(void *state, const rpx_inputs *in, rpx_error *err)
{
    volatile unsigned long spins = 0;
    (void)state;
    (void)in;
    (void)err;
    if (at_event())
        for (;;) spins++;
    return 0;
}

/* slow_setup: setup takes RPX_TEST_SETUP_MS milliseconds (busy), calls are no-ops */
EXPORT int slow_setup_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                            rpx_error *err);
EXPORT int slow_setup(void *state, const rpx_inputs *in, rpx_error *err);

int slow_setup_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                     rpx_error *err)
{
    long long end = now_ns() + env_long("RPX_TEST_SETUP_MS", 1000) * 1000000LL;
    (void)state;
    (void)in;
    (void)info;
    (void)err;
    while (now_ns() < end) {
    }
    return 0;
}

int slow_setup(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    return 0;
}

/* chatty: prints a line on stdout (through stdio and through write) per call */
EXPORT int chatty(void *state, const rpx_inputs *in, rpx_error *err);

int chatty(void *state, const rpx_inputs *in, rpx_error *err)
{
    static const char line[] = "chatty: written to fd 1\n";
    (void)state;
    (void)in;
    (void)err;
    printf("chatty: printed by the model\n");
    fflush(stdout);
    if (write(1, line, sizeof line - 1) < 0) return rpx_model_error(err, "write failed");
    return 0;
}

/* leak_mib: each call keeps 1 MiB, touched, and returns at once: a fast leak
 * that a run of 200 calls (well under a second) must flag. With
 * RPX_TEST_RSS_LOG=FILE every call appends a line "PID RSS_KIB": the process's
 * resident set (/proc/self/statm) after its leak: what the process really grew, sanitizer
 * shadow memory and allocator headers included, to check the estimate against. */
EXPORT int leak_mib(void *state, const rpx_inputs *in, rpx_error *err);

static void *leak_mib_kept;

static void log_rss_kib(const char *path)
{
    char buf[128];
    long pages = 0, resident = 0;
    ssize_t n;
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = '\0';
    if (sscanf(buf, "%ld %ld", &pages, &resident) != 2) return;
    n = snprintf(buf, sizeof buf, "%ld %ld\n", (long)getpid(),
                 resident * (sysconf(_SC_PAGESIZE) / 1024));
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (write(fd, buf, (size_t)n) != n) { /* a short log fails the test that reads it */
    }
    close(fd);
}

int leak_mib(void *state, const rpx_inputs *in, rpx_error *err)
{
    static const char *log;
    static int looked;
    char *p = malloc(1 << 20);
    (void)state;
    (void)in;
    if (!p) return rpx_model_error(err, "leak_mib: out of memory");
    memset(p, 1, 1 << 20);
    *(void **)p = leak_mib_kept;
    leak_mib_kept = p;
    if (!looked) {
        looked = 1;
        log = getenv("RPX_TEST_RSS_LOG");
    }
    if (log && *log) log_rss_kib(log);
    return 0;
}

/* ---- compare calibration (bench/compare_calibration.py, tests/cli/test_processes.py) ---- */

/* busywait_scaled: busywait's time times RPX_TEST_SCALE (default 1): the
 * "new" side of an A/B pair against busywait (RPX_TEST_BUSY_NS for both) */
EXPORT int busywait_scaled_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                                 rpx_error *err);
EXPORT int busywait_scaled(void *state, const rpx_inputs *in, rpx_error *err);

static long long scaled_busy_ns = 1000000;

static double env_scale(void)
{
    const char *s = getenv("RPX_TEST_SCALE");
    double v = s ? strtod(s, NULL) : 1.0;
    return v > 0 ? v : 1.0;
}

int busywait_scaled_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                          rpx_error *err)
{
    (void)state;
    (void)in;
    (void)info;
    (void)err;
    scaled_busy_ns = (long long)((double)env_long("RPX_TEST_BUSY_NS", 1000000) * env_scale());
    return 0;
}

int busywait_scaled(void *state, const rpx_inputs *in, rpx_error *err)
{
    long long end = now_ns() + scaled_busy_ns;
    (void)state;
    (void)in;
    (void)err;
    while (now_ns() < end) {
    }
    return 0;
}

/* stream / stream_scaled: read a buffer of RPX_TEST_STREAM_MB MiB (default 8;
 * times RPX_TEST_SCALE for stream_scaled), allocated and touched in setup:
 * where its pages land differs from one process to the next */
EXPORT int stream_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                        rpx_error *err);
EXPORT int stream(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT void stream_teardown(void *state);
EXPORT int stream_scaled_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                               rpx_error *err);
EXPORT int stream_scaled(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT void stream_scaled_teardown(void *state);

typedef struct stream_buf {
    volatile unsigned long long *p;
    size_t words;
    volatile unsigned long long sink;
} stream_buf;

static int stream_open(void **state, double scale, rpx_error *err)
{
    stream_buf *b = calloc(1, sizeof *b);
    size_t i, bytes = (size_t)((double)((size_t)env_long("RPX_TEST_STREAM_MB", 8) << 20) * scale);
    if (!b) return rpx_model_error(err, "stream: out of memory");
    b->words = bytes / sizeof(unsigned long long);
    b->p = malloc(b->words * sizeof(unsigned long long));
    if (!b->p) {
        free(b);
        return rpx_model_error(err, "stream: out of memory");
    }
    for (i = 0; i < b->words; i++) b->p[i] = i;
    *state = b;
    return 0;
}

static int stream_call(void *state)
{
    stream_buf *b = state;
    unsigned long long s = 0;
    size_t i;
    for (i = 0; i < b->words; i++) s += b->p[i];
    b->sink = s;
    return 0;
}

static void stream_close(void *state)
{
    stream_buf *b = state;
    if (!b) return;
    free((void *)b->p);
    free(b);
}

int stream_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    (void)in;
    (void)info;
    return stream_open(state, 1.0, err);
}

int stream(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)in;
    (void)err;
    return stream_call(state);
}

void stream_teardown(void *state)
{
    stream_close(state);
}

int stream_scaled_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                        rpx_error *err)
{
    (void)in;
    (void)info;
    return stream_open(state, env_scale(), err);
}

int stream_scaled(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)in;
    (void)err;
    return stream_call(state);
}

void stream_scaled_teardown(void *state)
{
    stream_close(state);
}

/* ---- distinct samples and writable inputs ----
 *   sample_id_check  each sample holds an integer array 'sample_id' (one
 *                    element, the sample's index); every call appends "W k"
 *                    (warmup) or "T k" (timed) to its process's log, written at
 *                    teardown to RPX_TEST_SAMPLE_LOG (one line "P pid" first),
 *                    and a call that receives no 'sample_id' fails
 *   pristine_edit    checks that uint8 array 'x' holds its pristine pattern
 *                    (x[i] == (x[0] + 7 i) mod 256) and fails the call when
 *                    not, then edits it in place (zeroes it through a cast, as
 *                    `rgb /= 255` would): with --writable-inputs every call
 *                    passes; without, the write crashes the call */
EXPORT int sample_id_check_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                                 rpx_error *err);
EXPORT int sample_id_check(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT void sample_id_check_teardown(void *state);
EXPORT int pristine_edit(void *state, const rpx_inputs *in, rpx_error *err);

static long sid_warmup, sid_calls;
static char *sid_log;
static size_t sid_len, sid_cap;

static void sid_append(const char *line)
{
    size_t n = strlen(line);
    if (sid_len + n + 1 > sid_cap) {
        size_t cap = sid_cap ? sid_cap * 2 + n : 4096 + n;
        char *p = realloc(sid_log, cap);
        if (!p) return;
        sid_log = p;
        sid_cap = cap;
    }
    memcpy(sid_log + sid_len, line, n + 1);
    sid_len += n;
}

EXPORT int sample_id_check_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                                 rpx_error *err)
{
    char line[64];
    (void)state;
    (void)in;
    (void)err;
    sid_warmup = info->warmup_calls;
    sid_calls = 0;
    snprintf(line, sizeof line, "P %ld\n", (long)getpid());
    sid_append(line);
    return 0;
}

EXPORT int sample_id_check(void *state, const rpx_inputs *in, rpx_error *err)
{
    const rpx_tensor *t = rpx_inputs_find(in, "sample_id");
    char line[64];
    long long id;
    (void)state;
    if (!t || t->count != 1) {
        snprintf(err->message, sizeof err->message, "no one-element array 'sample_id'");
        return 1;
    }
    switch (t->dtype) {
    case RPX_DTYPE_INT64: id = *(const long long *)t->data; break;
    case RPX_DTYPE_INT32: id = *(const int *)t->data; break;
    default:
        snprintf(err->message, sizeof err->message, "'sample_id' must be int32 or int64");
        return 1;
    }
    snprintf(line, sizeof line, "%c %lld\n", sid_calls < sid_warmup ? 'W' : 'T', id);
    sid_calls++;
    sid_append(line);
    return 0;
}

EXPORT void sample_id_check_teardown(void *state)
{
    const char *path = getenv("RPX_TEST_SAMPLE_LOG");
    FILE *f;
    (void)state;
    if (path && sid_log && (f = fopen(path, "a")) != NULL) {
        fputs(sid_log, f);
        fclose(f);
    }
}

static long pristine_calls;

EXPORT int pristine_edit(void *state, const rpx_inputs *in, rpx_error *err)
{
    const rpx_tensor *t = rpx_inputs_find(in, "x");
    const unsigned char *x;
    unsigned char *w;
    size_t i;
    (void)state;
    if (!t || t->dtype != RPX_DTYPE_UINT8 || t->count < 2) {
        snprintf(err->message, sizeof err->message, "no uint8 array 'x' of 2 or more elements");
        return 1;
    }
    x = t->data;
    for (i = 1; i < t->count; i++)
        if (x[i] != (unsigned char)(x[0] + 7 * i)) {
            snprintf(err->message, sizeof err->message,
                     "call %ld: the inputs are not pristine (x[%zu] = %u, expected %u)",
                     pristine_calls, i, x[i], (unsigned char)(x[0] + 7 * i));
            return 1;
        }
    pristine_calls++;
    w = (unsigned char *)(uintptr_t)t->data; /* an in-place edit, as `x /= 255` */
    for (i = 0; i < t->count; i++) w[i] = 0;
    return 0;
}

/* ---- where each call ran (tests/cli/test_call_records.py, issue 27 §1) ----
 *   touch_pages   maps RPX_TEST_PAGES (default 64) fresh pages, writes one byte
 *                 into each, unmaps them: at least that many minor faults a call
 *   sleep_ns      nanosleep(RPX_TEST_SLEEP_NS) (default 2,000,000): off-CPU, a
 *                 voluntary switch a call */
#include <sys/mman.h>
#include <unistd.h>

EXPORT int touch_pages(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int sleep_ns(void *state, const rpx_inputs *in, rpx_error *err);

int touch_pages(void *state, const rpx_inputs *in, rpx_error *err)
{
    long pages = env_long("RPX_TEST_PAGES", 64), i;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    volatile char *p;
    (void)state;
    (void)in;
    p = mmap(NULL, (size_t)pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
             0);
    if (p == MAP_FAILED) {
        snprintf(err->message, sizeof err->message, "mmap of %ld pages failed", pages);
        return 1;
    }
    for (i = 0; i < pages; i++) p[(size_t)i * page] = 1;
    munmap((void *)p, (size_t)pages * page);
    return 0;
}

int sleep_ns(void *state, const rpx_inputs *in, rpx_error *err)
{
    long ns = env_long("RPX_TEST_SLEEP_NS", 2000000);
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    (void)state;
    (void)in;
    (void)err;
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}

/* cpu_skewed: a model slower on one CPU (issue 27). Each call busy-waits
 * RPX_TEST_SLOW_NS (default 1,500,000) when it starts on the slow CPU and
 * RPX_TEST_FAST_NS (default 1,000,000) on any other (sched_getcpu at the
 * call). The slow CPU is RPX_TEST_SLOW_CPU, else the lowest CPU the process
 * is allowed at setup (sched_getaffinity). With RPX_TEST_CPU_ROTATE=FILE,
 * setup pins the process (after choosing the slow CPU) to the next allowed
 * CPU in rotation, counted in FILE under flock: process i of a run gets
 * allowed CPU i mod n, as `taskset` per process would; with RPX_TEST_STEP_NS
 * too, process i's calls take i x STEP longer (a run that drifts process by
 * process). */
#include <sched.h>
#include <sys/file.h>

EXPORT int cpu_skewed_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                            rpx_error *err);
EXPORT int cpu_skewed(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int cpu_skewed_scaled_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                                   rpx_error *err);
EXPORT int cpu_skewed_scaled(void *state, const rpx_inputs *in, rpx_error *err);

static long long skew_slow_ns = 1500000, skew_fast_ns = 1000000;
static int skew_slow_cpu = -1;
static long long skew_step_ns;

static int rotate_pin(const char *path, const cpu_set_t *allowed, rpx_error *err)
{
    int fd = open(path, O_RDWR | O_CREAT, 0644), cpu, n = 0, want, i;
    char buf[32] = "";
    long count;
    ssize_t got;
    cpu_set_t one;
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        if (fd >= 0) close(fd);
        return rpx_model_error(err, "cpu_skewed: cannot open or lock RPX_TEST_CPU_ROTATE");
    }
    got = read(fd, buf, sizeof buf - 1);
    count = got > 0 ? strtol(buf, NULL, 10) : 0;
    snprintf(buf, sizeof buf, "%ld\n", count + 1);
    if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, buf, strlen(buf)) < 0) {
        close(fd);
        return rpx_model_error(err, "cpu_skewed: cannot write RPX_TEST_CPU_ROTATE");
    }
    close(fd); /* releases the lock */
    skew_step_ns *= count;
    for (cpu = 0; cpu < CPU_SETSIZE; cpu++) n += CPU_ISSET(cpu, allowed) != 0;
    want = (int)(count % (n ? n : 1));
    for (cpu = 0, i = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, allowed) && i++ == want) break;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return rpx_model_error(err, "cpu_skewed: sched_setaffinity refused");
    return 0;
}

int cpu_skewed_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    cpu_set_t allowed;
    const char *rotate = getenv("RPX_TEST_CPU_ROTATE");
    int cpu;
    (void)state;
    (void)in;
    (void)info;
    skew_slow_ns = env_long("RPX_TEST_SLOW_NS", 1500000);
    skew_fast_ns = env_long("RPX_TEST_FAST_NS", 1000000);
    skew_slow_cpu = (int)env_long("RPX_TEST_SLOW_CPU", -1);
    skew_step_ns = env_long("RPX_TEST_STEP_NS", 0);
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return rpx_model_error(err, "cpu_skewed: sched_getaffinity refused");
    for (cpu = 0; skew_slow_cpu < 0 && cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed)) skew_slow_cpu = cpu;
    if (rotate && *rotate) return rotate_pin(rotate, &allowed, err);
    skew_step_ns = 0;
    return 0;
}

int cpu_skewed(void *state, const rpx_inputs *in, rpx_error *err)
{
    long long end = now_ns() + skew_step_ns +
                    (sched_getcpu() == skew_slow_cpu ? skew_slow_ns : skew_fast_ns);
    (void)state;
    (void)in;
    (void)err;
    while (now_ns() < end) {
    }
    return 0;
}

/* memo_last: a model that memoises its last input's answer (issue 30, the
 * cache audit): a call whose input bytes equal the last call's returns at
 * once; a new input spins RPX_TEST_BUSY_NS (default 200,000 ns) and becomes
 * the remembered one. Fast on a repeated sample, slow on a new one. */
EXPORT int memo_last_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                           rpx_error *err);
EXPORT int memo_last(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT void memo_last_teardown(void *state);

static long long memo_ns = 200000;
static unsigned char *memo_bytes;
static size_t memo_len;

int memo_last_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)info;
    (void)err;
    memo_ns = env_long("RPX_TEST_BUSY_NS", 200000);
    return 0;
}

int memo_last(void *state, const rpx_inputs *in, rpx_error *err)
{
    const rpx_tensor *t = in && in->count ? &in->tensors[0] : NULL;
    long long end;
    (void)state;
    if (!t) return rpx_model_error(err, "memo_last: needs one input array");
    if (memo_bytes && memo_len == t->nbytes && memcmp(memo_bytes, t->data, memo_len) == 0)
        return 0; /* the remembered answer */
    end = now_ns() + memo_ns;
    while (now_ns() < end) {
    }
    free(memo_bytes);
    memo_bytes = malloc(t->nbytes ? t->nbytes : 1);
    if (!memo_bytes) return rpx_model_error(err, "memo_last: out of memory");
    memcpy(memo_bytes, t->data, t->nbytes);
    memo_len = t->nbytes;
    return 0;
}

void memo_last_teardown(void *state)
{
    (void)state;
    free(memo_bytes);
    memo_bytes = NULL;
    memo_len = 0;
}

/* cpu_skewed_scaled: cpu_skewed with both times (and the step) times
 * RPX_TEST_SCALE (default 1): the "new" side of an A/B pair against cpu_skewed
 * (tests/cli/test_placement.py: compare --run against a 5 % slower twin). Give
 * RPX_TEST_SLOW_CPU where the runner pins the processes before setup, or every
 * process's only allowed CPU is its slow one. */
int cpu_skewed_scaled_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                            rpx_error *err)
{
    double scale = env_scale();
    if (cpu_skewed_setup(state, in, info, err) != 0) return -1;
    skew_slow_ns = (long long)((double)skew_slow_ns * scale);
    skew_fast_ns = (long long)((double)skew_fast_ns * scale);
    skew_step_ns = (long long)((double)skew_step_ns * scale);
    return 0;
}

int cpu_skewed_scaled(void *state, const rpx_inputs *in, rpx_error *err)
{
    return cpu_skewed(state, in, err);
}

/* read_inputs: each call reads every byte of every input array (as 64-bit
 * words, then the tail), a model whose time depends on where its inputs lie
 * (issue 36: the inputs' pages and their offset in a page);
 * input_address logs each input array's address, one line per setup, to
 * RPX_TEST_ADDRESS_LOG ("P pid" then "A name address"), and reads its inputs
 * as read_inputs does. */
EXPORT int read_inputs(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int input_address_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                               rpx_error *err);
EXPORT int input_address(void *state, const rpx_inputs *in, rpx_error *err);

static volatile unsigned long long read_sink;

int read_inputs(void *state, const rpx_inputs *in, rpx_error *err)
{
    unsigned long long s = 0;
    size_t i, j;
    (void)state;
    (void)err;
    for (i = 0; i < in->count; i++) {
        const unsigned char *p = in->tensors[i].data;
        size_t n = in->tensors[i].nbytes, words = n / 8;
        for (j = 0; j < words; j++) {
            unsigned long long w;
            memcpy(&w, p + 8 * j, 8);
            s += w;
        }
        for (j = words * 8; j < n; j++) s += p[j];
    }
    read_sink = s;
    return 0;
}

int input_address_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                        rpx_error *err)
{
    const char *path = getenv("RPX_TEST_ADDRESS_LOG");
    FILE *f;
    size_t i;
    (void)info;
    (void)err;
    *state = NULL;
    if (!path || !(f = fopen(path, "a"))) return 0;
    fprintf(f, "P %ld\n", (long)getpid());
    for (i = 0; i < in->count; i++)
        fprintf(f, "A %s %llu\n", in->tensors[i].name,
                (unsigned long long)(uintptr_t)in->tensors[i].data);
    fclose(f);
    return 0;
}

int input_address(void *state, const rpx_inputs *in, rpx_error *err)
{
    return read_inputs(state, in, err);
}
