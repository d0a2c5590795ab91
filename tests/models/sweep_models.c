/* Test models for `rpxprof sweep` (independent truth for the scaling fit):
 * the call's time is known in terms of its first input's shape. For an input
 * of shape [B, H, ...] (ndim >= 2) the batch is B and the height H; for a
 * 1-d input [H] the batch is 1.
 *   by_height          spins RPX_TEST_NS_PER_ROW ns (default 4000) x B x H:
 *                      latency goes as height^1, and as batch^1
 *   by_height_squared  spins RPX_TEST_NS_PER_CELL ns (default 40) x B x H^2:
 *                      latency goes as height^2
 *   by_height_kinked   by_height, but RPX_TEST_KINK_FACTOR (default 1.6) times
 *                      slower at the height RPX_TEST_KINK (default 20): the next
 *                      larger height is faster (a runtime's kernel choice)
 * The time is the thread's CPU time (see now_ns). Each worker process scales its time by its own factor in [0.97, 1.03)
 * (from its pid; RPX_TEST_JITTER=0 turns it off), as the processes of a real
 * model differ by where their pages and caches fell: without it a busy-wait is
 * so exact that the fit's interval would be narrower than the runner's own
 * fixed overhead per call bends the line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rpxprof/model.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;
EXPORT int by_height(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int by_height_squared(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int by_height_kinked(void *state, const rpx_inputs *in, rpx_error *err);

/* the thread's CPU time: a call burns a known amount of CPU, so that on a
 * shared machine its wall time stretches in proportion (a wall-clock spin
 * would stretch by a time slice, whatever its length, and bend the fit) */
static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

/* The batch and height of the first input; 0 when there is none. */
static int shape_of(const rpx_inputs *in, rpx_error *err, long long *batch, long long *height)
{
    const rpx_tensor *t;
    if (in->count < 1 || in->tensors[0].ndim < 1) {
        snprintf(err->message, sizeof err->message,
                 "sweep test model: give an input of shape [B, H, ...] or [H]");
        return -1;
    }
    t = &in->tensors[0];
    *batch = t->ndim >= 2 ? t->shape[0] : 1;
    *height = t->ndim >= 2 ? t->shape[1] : t->shape[0];
    return 0;
}

/* this process's factor (see the header) */
static double jitter(void)
{
    static double f = 0;
    if (f == 0) {
        uint64_t z = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL;
        z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
        f = env_long("RPX_TEST_JITTER", 1) ? 0.97 + 0.06 * (double)(z >> 11) / 9007199254740992.0
                                           : 1.0;
    }
    return f;
}

static void spin(long long ns)
{
    long long end = now_ns() + (long long)((double)ns * jitter());
    while (now_ns() < end) {
    }
}

int by_height(void *state, const rpx_inputs *in, rpx_error *err)
{
    long long b, h;
    (void)state;
    if (shape_of(in, err, &b, &h) != 0) return -1;
    spin(env_long("RPX_TEST_NS_PER_ROW", 4000) * b * h);
    return 0;
}

int by_height_squared(void *state, const rpx_inputs *in, rpx_error *err)
{
    long long b, h;
    (void)state;
    if (shape_of(in, err, &b, &h) != 0) return -1;
    spin(env_long("RPX_TEST_NS_PER_CELL", 40) * b * h * h);
    return 0;
}

int by_height_kinked(void *state, const rpx_inputs *in, rpx_error *err)
{
    long long b, h;
    double f = 1;
    const char *kf = getenv("RPX_TEST_KINK_FACTOR");
    (void)state;
    if (shape_of(in, err, &b, &h) != 0) return -1;
    if (h == env_long("RPX_TEST_KINK", 20)) f = kf && *kf ? strtod(kf, NULL) : 1.6;
    spin((long long)((double)(env_long("RPX_TEST_NS_PER_ROW", 4000) * b * h) * f));
    return 0;
}
