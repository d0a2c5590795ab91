/* env.c — owns the card's `environment` section: the values of an allowlist
 * of environment variables that change performance (thread counts, CUDA and
 * allocator settings, math-library dispatch). Nothing outside the list is
 * ever read into a report, so no secret can end up there. Variables that are
 * not set are simply absent. Always the live process environment, also on a
 * snapshot. */
#include <stdlib.h>
#include <string.h>

#include "system/system_internal.h"

static const char *const allowlist[] = {
    /* which GPUs, and how CUDA behaves */
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
    "CUDA_DEVICE_MAX_CONNECTIONS", "CUBLAS_WORKSPACE_CONFIG",
    "NVIDIA_TF32_OVERRIDE", "NVIDIA_VISIBLE_DEVICES",
    /* PyTorch */
    "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING", "TORCH_CUDNN_V8_API_ENABLED",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "TORCHINDUCTOR_MAX_AUTOTUNE",
    /* OpenMP and the BLAS libraries */
    "OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_SCHEDULE", "OMP_DYNAMIC",
    "OMP_WAIT_POLICY", "GOMP_CPU_AFFINITY", "GOMP_SPINCOUNT", "KMP_AFFINITY", "KMP_BLOCKTIME",
    "KMP_HW_SUBSET", "MKL_NUM_THREADS", "MKL_DYNAMIC", "MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR",
    "MKL_DEBUG_CPU_TYPE", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS",
    /* oneDNN, TensorFlow, XLA/JAX, ONNX Runtime, tokenizers */
    "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ONEDNN_DEFAULT_FPMATH_MODE",
    "TF_ENABLE_ONEDNN_OPTS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS",
    "TF_GPU_ALLOCATOR", "TF_FORCE_GPU_ALLOW_GROWTH",
    "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "ORT_DISABLE_ALL_OPTIMIZATION", "TOKENIZERS_PARALLELISM",
    /* the C library's allocator */
    "MALLOC_ARENA_MAX", "MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_",
    "GLIBC_TUNABLES",
    /* rpxprof's own switches that change what the card reads */
    "RPX_SYSROOT", "RPX_NVML_LIBRARY",
    NULL};

const char *const *rpx__sys_env_allowlist(void)
{
    return allowlist;
}

json_t *rpx__sys_env_section(json_t *warnings)
{
    json_t *env = json_object();
    const char *const *p;
    const char *v;
    if (!env) return NULL;
    for (p = allowlist; *p; p++) {
        if ((v = getenv(*p)) == NULL) continue;
        if (strlen(v) > 1024) {
            rpx__sys_put(env, *p, json_string("(longer than 1024 characters; not recorded)"));
            continue;
        }
        rpx__sys_put(env, *p, rpx__sys_jstr(v));
    }
    v = getenv("CUDA_LAUNCH_BLOCKING");
    if (v && strcmp(v, "0") != 0 && v[0])
        rpx__sys_warn(warnings, "CUDA_LAUNCH_BLOCKING=%s: every CUDA kernel launch waits for the "
                  "kernel to finish, so GPU timings are slower than in normal use.", v);
    v = getenv("RPX_SYSROOT");
    if (v && v[0] && strcmp(v, "/") != 0)
        rpx__sys_warn(warnings, "RPX_SYSROOT is set: the CPU, memory, limits and OS sections describe "
                  "the snapshot under it, not this machine.");
    return env;
}
