// gemm.cu — a cuBLAS FP16 GEMM model with known memory use.
//
// setup allocates A, B (N×N fp16) and keeps them (the "weights"); every call
// allocates the output C (N×N fp16) plus a scratch buffer of RPX_GEMM_SCRATCH_MB
// (default 256 MiB), runs C = A·B with tensor cores (FP16 in, FP32 accumulate),
// and frees both. N = RPX_GEMM_N (default 8192). So the device memory this
// model allocates beyond cuBLAS's own workspace is 2·N²·2 bytes resident plus
// N²·2 + scratch per call; FLOPs per call are 2·N³.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdlib.h>

#include "rpxprof/model.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;

struct gemm_state {
    cublasHandle_t handle;
    __half *a, *b;
    size_t n, scratch;
};

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

EXPORT void gemm_teardown(void *state)
{
    gemm_state *s = (gemm_state *)state;
    if (!s) return;
    cudaFree(s->a);
    cudaFree(s->b);
    if (s->handle) cublasDestroy(s->handle);
    free(s);
}

EXPORT int gemm_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                      rpx_error *err)
{
    (void)in;
    (void)info;
    gemm_state *s = (gemm_state *)calloc(1, sizeof *s);
    if (!s) return rpx_model_error(err, "gemm: out of memory");
    s->n = (size_t)env_long("RPX_GEMM_N", 8192);
    s->scratch = (size_t)env_long("RPX_GEMM_SCRATCH_MB", 256) << 20;
    size_t bytes = s->n * s->n * sizeof(__half);
    if (cublasCreate(&s->handle) != CUBLAS_STATUS_SUCCESS) {
        gemm_teardown(s);
        return rpx_model_error(err, "gemm: cublasCreate failed");
    }
    cublasSetMathMode(s->handle, CUBLAS_TENSOR_OP_MATH);
    if (cudaMalloc(&s->a, bytes) != cudaSuccess || cudaMalloc(&s->b, bytes) != cudaSuccess) {
        gemm_teardown(s);
        return rpx_model_error(err, "gemm: cudaMalloc of %zu bytes failed", bytes);
    }
    cudaMemset(s->a, 0, bytes);
    cudaMemset(s->b, 0, bytes);
    *state = s;
    return 0;
}

EXPORT int gemm(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)in;
    gemm_state *s = (gemm_state *)state;
    __half *c = NULL;
    void *scratch = NULL;
    const float alpha = 1.0f, beta = 0.0f;
    int n = (int)s->n;
    if (cudaMalloc(&c, s->n * s->n * sizeof(__half)) != cudaSuccess ||
        cudaMalloc(&scratch, s->scratch) != cudaSuccess) {
        cudaFree(c);
        return rpx_model_error(err, "gemm: cudaMalloc failed in the call");
    }
    cudaMemsetAsync(scratch, 0, s->scratch);
    cublasStatus_t st = cublasGemmEx(s->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, s->a,
                                     CUDA_R_16F, n, s->b, CUDA_R_16F, n, &beta, c, CUDA_R_16F, n,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cudaDeviceSynchronize(); // hold C and the scratch until the product is done
    cudaFree(scratch);
    cudaFree(c);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : rpx_model_error(err, "gemm: cublasGemmEx: %d", (int)st);
}
