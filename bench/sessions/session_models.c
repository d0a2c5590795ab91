/* session_models.c — the two C models of bench/bench_sessions.py (issue 36): the
 * packaged demo's demo_depth (an H×W float32 map of 2.1 from an H×W×3 uint8 frame) and
 * an 8 MiB stream (reads 8 MiB allocated and touched in setup, as tests/models'
 * `stream`). Built twice from this file: RPX_BENCH_SLOW_PERMILLE=0 (the baseline) and
 * =50 (a "new build" 5 % slower): after its work, each call busy-waits until its own
 * elapsed time has grown by that share, so the slowdown is exactly 5 % of that call
 * whatever the machine does. Both builds read the clock the same way, so the ratio of
 * slowed to baseline is 1.05 by construction. */
#include <stdlib.h>
#include <time.h>

#include "rpxprof/model.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef RPX_BENCH_SLOW_PERMILLE
#define RPX_BENCH_SLOW_PERMILLE 0
#endif

EXPORT const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;
EXPORT const int rpx_bench_slow_permille = RPX_BENCH_SLOW_PERMILLE;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* the slowdown: wait until t1 + (t1 - t0) * permille / 1000 */
static void stretch(long long t0)
{
    long long t1 = now_ns();
    long long end = t1 + (t1 - t0) * RPX_BENCH_SLOW_PERMILLE / 1000;
    while (now_ns() < end) {
    }
}

typedef struct depth_state {
    float *out;
    size_t count;
} depth_state;

EXPORT int demo_depth_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                            rpx_error *err)
{
    const rpx_tensor *t = rpx_inputs_find(in, "rgb");
    depth_state *s;
    (void)info;
    if (!t || t->dtype != RPX_DTYPE_UINT8 || t->ndim != 3 || t->shape[2] != 3)
        return rpx_model_error(err, "demo_depth: needs rgb, a uint8 H×W×3 array");
    s = calloc(1, sizeof *s);
    if (!s) return rpx_model_error(err, "demo_depth: out of memory");
    s->count = (size_t)t->shape[0] * (size_t)t->shape[1];
    s->out = malloc((s->count ? s->count : 1) * sizeof *s->out);
    if (!s->out) {
        free(s);
        return rpx_model_error(err, "demo_depth: out of memory");
    }
    *state = s;
    return 0;
}

EXPORT int demo_depth(void *state, const rpx_inputs *in, rpx_error *err)
{
    depth_state *s = state;
    long long t0 = now_ns();
    size_t i;
    (void)in;
    (void)err;
    for (i = 0; i < s->count; i++) s->out[i] = 2.1f;
    stretch(t0);
    return 0;
}

EXPORT void demo_depth_teardown(void *state)
{
    depth_state *s = state;
    if (!s) return;
    free(s->out);
    free(s);
}

typedef struct stream_state {
    volatile unsigned long long *p;
    size_t words;
    volatile unsigned long long sink;
} stream_state;

EXPORT int stream_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                        rpx_error *err)
{
    stream_state *b = calloc(1, sizeof *b);
    size_t i;
    (void)in;
    (void)info;
    if (!b) return rpx_model_error(err, "stream: out of memory");
    b->words = ((size_t)8 << 20) / sizeof(unsigned long long);
    b->p = malloc(b->words * sizeof(unsigned long long));
    if (!b->p) {
        free(b);
        return rpx_model_error(err, "stream: out of memory");
    }
    for (i = 0; i < b->words; i++) b->p[i] = i;
    *state = b;
    return 0;
}

EXPORT int stream(void *state, const rpx_inputs *in, rpx_error *err)
{
    stream_state *b = state;
    long long t0 = now_ns();
    unsigned long long s = 0;
    size_t i;
    (void)in;
    (void)err;
    for (i = 0; i < b->words; i++) s += b->p[i];
    b->sink = s;
    stretch(t0);
    return 0;
}

EXPORT void stream_teardown(void *state)
{
    stream_state *b = state;
    if (!b) return;
    free((void *)b->p);
    free(b);
}
