// spin.cu — a CUDA model whose kernel spins a known time on the GPU.
//
// rpxprof-side: --model build/examples/cuda/librpxcuda_spin.so:spin --device cuda
// The call only launches the kernel (asynchronously) and returns: without the
// synchronisation rpxprof does around every call it would time microseconds.
// RPX_SPIN_MS (default 2) sets the spin time; the kernel reads the GPU's
// nanosecond global timer.
#include <cuda_runtime.h>
#include <stdlib.h>

#include "rpxprof/model.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;

__device__ static unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin_kernel(unsigned long long ns)
{
    unsigned long long start = global_ns();
    while (global_ns() - start < ns) {
    }
}

struct spin_state {
    unsigned long long ns;
};

EXPORT int spin_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                      rpx_error *err)
{
    (void)in;
    (void)info;
    const char *ms = getenv("RPX_SPIN_MS");
    spin_state *s = (spin_state *)calloc(1, sizeof *s);
    if (!s) return rpx_model_error(err, "spin: out of memory");
    s->ns = (unsigned long long)((ms ? atof(ms) : 2.0) * 1e6);
    cudaError_t e = cudaFree(0); // create the runtime's context (the primary one) in setup
    if (e != cudaSuccess) {
        free(s);
        return rpx_model_error(err, "spin: %s", cudaGetErrorString(e));
    }
    *state = s;
    return 0;
}

EXPORT int spin(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)in;
    spin_kernel<<<1, 1>>>(((spin_state *)state)->ns);
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : rpx_model_error(err, "spin: launch failed: %s",
                                                  cudaGetErrorString(e));
}

EXPORT void spin_teardown(void *state)
{
    free(state);
}
