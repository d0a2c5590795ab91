/* CUDA test models for the stub driver (tests/stubs/cuda): they reach the
 * driver that rpxprof loaded (RPX_CUDA_LIBRARY) as a real model would reach
 * libcuda.
 *   gpu_logged   setup appends "setup", every call "predict" to RPX_STUB_CUDA_LOG
 *   gpu_alloc    setup allocates RPX_TEST_GPU_WEIGHTS_MB (default 100) on visible
 *                device RPX_TEST_GPU_DEVICE (default 1); each call allocates
 *                RPX_TEST_GPU_TRANSIENT_MB (default 50), holds it 20 ms, frees it
 *   gpu_kernels  each call "launches" two overlapping kernels on the stub CUPTI,
 *                [t, t+100 us] and [t+50 us, t+300 us] (300 us busy), and spends
 *                1 ms on the host: a launch-bound model */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpxprof/model.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;

typedef unsigned long long CUdeviceptr;

static void append(const char *what)
{
    const char *path = getenv("RPX_STUB_CUDA_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f) return;
    fprintf(f, "%s\n", what);
    fclose(f);
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

EXPORT int gpu_logged_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                            rpx_error *err);
EXPORT int gpu_logged(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT int gpu_alloc_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                           rpx_error *err);
EXPORT int gpu_alloc(void *state, const rpx_inputs *in, rpx_error *err);
EXPORT void gpu_alloc_teardown(void *state);

int gpu_logged_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    append(info && info->device ? "setup" : "setup-no-info");
    return 0;
}

int gpu_logged(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    append("predict");
    return 0;
}

typedef struct gpu {
    int (*retain)(void **, int);
    int (*set_current)(void *);
    int (*alloc)(CUdeviceptr *, size_t);
    int (*release)(CUdeviceptr);
    CUdeviceptr weights;
    size_t transient;
} gpu;

int gpu_alloc_setup(void **state, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    const char *lib = getenv("RPX_CUDA_LIBRARY");
    void *h = dlopen(lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *ctx;
    gpu *g;
    (void)in;
    (void)info;
    if (!h) return rpx_model_error(err, "gpu_alloc: the CUDA driver is not loaded");
    g = calloc(1, sizeof *g);
    *(void **)&g->retain = dlsym(h, "cuDevicePrimaryCtxRetain");
    *(void **)&g->set_current = dlsym(h, "cuCtxSetCurrent");
    *(void **)&g->alloc = dlsym(h, "cuMemAlloc_v2");
    *(void **)&g->release = dlsym(h, "cuMemFree_v2");
    if (!g->retain || !g->set_current || !g->alloc || !g->release ||
        g->retain(&ctx, (int)env_long("RPX_TEST_GPU_DEVICE", 1)) != 0 ||
        g->set_current(ctx) != 0 ||
        g->alloc(&g->weights, (size_t)env_long("RPX_TEST_GPU_WEIGHTS_MB", 100) << 20) != 0) {
        free(g);
        return rpx_model_error(err, "gpu_alloc: setup failed");
    }
    g->transient = (size_t)env_long("RPX_TEST_GPU_TRANSIENT_MB", 50) << 20;
    *state = g;
    return 0;
}

int gpu_alloc(void *state, const rpx_inputs *in, rpx_error *err)
{
    gpu *g = state;
    CUdeviceptr p;
    struct timespec ts = {0, 20 * 1000 * 1000};
    (void)in;
    if (g->alloc(&p, g->transient) != 0) return rpx_model_error(err, "gpu_alloc: alloc failed");
    nanosleep(&ts, NULL);
    if (!getenv("RPX_TEST_GPU_LEAK")) g->release(p); /* RPX_TEST_GPU_LEAK: keep it */
    return 0;
}

void gpu_alloc_teardown(void *state)
{
    gpu *g = state;
    g->release(g->weights);
    free(g);
}

EXPORT int gpu_kernels_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                             rpx_error *err);
EXPORT int gpu_kernels(void *state, const rpx_inputs *in, rpx_error *err);

int gpu_kernels_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                      rpx_error *err)
{
    /* loads the stub CUPTI as torch loads its own (the last of a ':' list) */
    const char *lib = getenv("RPX_TEST_CUPTI") ? getenv("RPX_TEST_CUPTI")
                                                : getenv("RPX_CUPTI_LIBRARY");
    const char *last = lib ? strrchr(lib, ':') : NULL;
    void *h = lib ? dlopen(last ? last + 1 : lib, RTLD_NOW) : NULL;
    (void)in;
    (void)info;
    *state = h ? dlsym(h, "rpx_stub_cupti_kernel") : NULL;
    return *state ? 0 : rpx_model_error(err, "gpu_kernels: the stub CUPTI is not loaded");
}

int gpu_kernels(void *state, const rpx_inputs *in, rpx_error *err)
{
    void (*kernel)(unsigned long long, unsigned long long);
    struct timespec ts = {0, 1000 * 1000}, now;
    unsigned long long t;
    (void)in;
    (void)err;
    *(void **)&kernel = state;
    clock_gettime(CLOCK_MONOTONIC, &now);
    t = (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
    kernel(t, t + 100000);
    kernel(t + 50000, t + 300000);
    nanosleep(&ts, NULL);
    return 0;
}
