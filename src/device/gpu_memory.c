/* gpu_memory.c — owns the sampled per-device CUDA memory peaks. */
#include "device/gpu_memory.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpxprof/error.h"

#define MAX_DEV 64

struct rpx_gpu_mem {
    rpx_cuda *cuda;
    int count;
    long interval_us;
    pthread_t thread;
    int running;
    int sampler_off;              /* RPX_GPU_MEM_SAMPLER=off: read at reset and end only */
    int stopped;
    _Atomic int stop;
    pthread_mutex_t lock;
    int64_t baseline[MAX_DEV];
    int64_t peak[MAX_DEV];        /* used - baseline, max since reset; -1 none */
    int64_t last[MAX_DEV];
    int64_t at_reset[MAX_DEV];    /* in use (above the baseline) when the peaks were reset */
    int failed[MAX_DEV];
    char reason[MAX_DEV][RPX_ERROR_MESSAGE_SIZE];
    _Atomic long samples;
};

static void sample_all(rpx_gpu_mem *m)
{
    int i;
    for (i = 0; i < m->count; i++) {
        int64_t used, total;
        rpx_error err = {0};
        if (m->failed[i]) continue;
        if (rpx_cuda_mem_info(m->cuda, i, &used, &total, &err) != 0) {
            pthread_mutex_lock(&m->lock);
            m->failed[i] = 1;
            snprintf(m->reason[i], sizeof m->reason[i], "%s", err.message);
            pthread_mutex_unlock(&m->lock);
            continue;
        }
        pthread_mutex_lock(&m->lock);
        m->last[i] = used - m->baseline[i];
        if (m->last[i] < 0) m->last[i] = 0;
        if (m->last[i] > m->peak[i]) m->peak[i] = m->last[i];
        pthread_mutex_unlock(&m->lock);
    }
    m->samples++;
}

static void *sampler(void *arg)
{
    rpx_gpu_mem *m = arg;
    struct timespec ts = {m->interval_us / 1000000, (m->interval_us % 1000000) * 1000};
    while (!atomic_load(&m->stop)) {
        sample_all(m);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int rpx_gpu_mem_start(rpx_cuda *cuda, long interval_us, rpx_gpu_mem **out, rpx_error *err)
{
    rpx_gpu_mem *m;
    int i;
    *out = NULL;
    m = calloc(1, sizeof *m);
    if (!m) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    m->cuda = cuda;
    m->count = rpx_cuda_device_count(cuda);
    if (m->count > MAX_DEV) m->count = MAX_DEV;
    m->interval_us = interval_us > 0 ? interval_us : 1000;
    pthread_mutex_init(&m->lock, NULL);
    atomic_init(&m->stop, 0);
    for (i = 0; i < m->count; i++) {
        int64_t total;
        rpx_error e = {0};
        m->peak[i] = 0;
        if (rpx_cuda_mem_info(cuda, i, &m->baseline[i], &total, &e) != 0) {
            m->failed[i] = 1;
            snprintf(m->reason[i], sizeof m->reason[i], "%s", e.message);
        }
    }
    {
        /* off: to measure what the sampler costs the timed calls (gpu-check.sh) */
        const char *off = getenv("RPX_GPU_MEM_SAMPLER");
        m->sampler_off = off && strcmp(off, "off") == 0;
    }
    if (m->sampler_off) {
        *out = m;
        return 0;
    }
    m->running = pthread_create(&m->thread, NULL, sampler, m) == 0;
    if (!m->running) {
        pthread_mutex_destroy(&m->lock);
        free(m);
        return rpx_error_set(err, RPX_ENOMEM, "cannot start the GPU memory sampler thread");
    }
    *out = m;
    return 0;
}

void rpx_gpu_mem_reset(rpx_gpu_mem *m)
{
    int i;
    if (!m) return;
    sample_all(m);
    pthread_mutex_lock(&m->lock);
    for (i = 0; i < m->count; i++) m->peak[i] = m->at_reset[i] = m->last[i];
    pthread_mutex_unlock(&m->lock);
}

json_t *rpx_gpu_mem_growth_json(const rpx_gpu_mem *m)
{
    json_t *o = json_object();
    int i;
    for (i = 0; m && i < m->count; i++) {
        char key[16];
        snprintf(key, sizeof key, "%d", i);
        json_object_set_new(o, key, m->failed[i] ? json_null()
                                                 : json_real((double)(m->last[i] - m->at_reset[i]) /
                                                             1048576.0));
    }
    return o;
}

void rpx_gpu_mem_stop(rpx_gpu_mem *m)
{
    if (!m || m->stopped) return;
    m->stopped = 1;
    if (m->running) {
        atomic_store(&m->stop, 1);
        pthread_join(m->thread, NULL);
        m->running = 0;
    }
    sample_all(m);
}

int64_t rpx_gpu_mem_peak_bytes(const rpx_gpu_mem *m, int ordinal, const char **reason)
{
    if (!m || ordinal < 0 || ordinal >= m->count) {
        if (reason) *reason = "no such device";
        return -1;
    }
    if (m->failed[ordinal]) {
        if (reason) *reason = m->reason[ordinal];
        return -1;
    }
    return m->peak[ordinal];
}

json_t *rpx_gpu_mem_peaks_json(const rpx_gpu_mem *m)
{
    json_t *o = json_object();
    int i;
    for (i = 0; m && i < m->count; i++) {
        char key[16];
        int64_t p = rpx_gpu_mem_peak_bytes(m, i, NULL);
        snprintf(key, sizeof key, "%d", i);
        json_object_set_new(o, key, p < 0 ? json_null() : json_real((double)p / 1048576.0));
    }
    return o;
}

/* {"<ordinal>": MiB of bytes[ordinal], null where the device failed} */
static json_t *per_device_mb(const rpx_gpu_mem *m, const int64_t *bytes)
{
    json_t *o = json_object();
    int i;
    for (i = 0; m && i < m->count; i++) {
        char key[16];
        snprintf(key, sizeof key, "%d", i);
        json_object_set_new(o, key,
                            m->failed[i] ? json_null() : json_real((double)bytes[i] / 1048576.0));
    }
    return o;
}

json_t *rpx_gpu_mem_method_json(const rpx_gpu_mem *m)
{
    json_t *o = json_object(), *why = json_object();
    int i;
    json_object_set_new(o, "method", json_string("cuda_mem_get_info_sampled"));
    json_object_set_new(
        o, "covers",
        json_string("device memory in use (cuMemGetInfo: total - free) above what was in use "
                    "after rpxprof created the primary contexts and before setup; peak from "
                    "after warmup to the end of the loop, weights included; counts other "
                    "processes' allocations made during the run and can miss allocations that "
                    "live shorter than the sampling interval"));
    json_object_set_new(o, "sampler", json_boolean(m && !m->sampler_off));
    json_object_set_new(o, "interval_us",
                        m && m->sampler_off ? json_null() : json_integer(m ? m->interval_us : 0));
    json_object_set_new(o, "samples", json_integer(m ? (json_int_t)atomic_load(&((rpx_gpu_mem *)m)->samples) : 0));
    for (i = 0; m && i < m->count; i++) {
        char key[16];
        snprintf(key, sizeof key, "%d", i);
        if (m->failed[i]) json_object_set_new(why, key, json_string(m->reason[i]));
    }
    json_object_set_new(o, "baseline_mb", per_device_mb(m, m ? m->baseline : NULL));
    /* in use above the baseline when the peaks were reset (after warmup): the
     * peak minus this is what one call added (weights and caches excluded) */
    json_object_set_new(o, "at_reset_mb", per_device_mb(m, m ? m->at_reset : NULL));
    json_object_set_new(o, "unavailable", why);
    return o;
}

void rpx_gpu_mem_free(rpx_gpu_mem *m)
{
    if (!m) return;
    rpx_gpu_mem_stop(m);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
