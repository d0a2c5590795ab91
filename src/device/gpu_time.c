/* gpu_time.c — owns per-call GPU busy time from CUPTI kernel activity.
 *
 * Our own minimal declarations of the CUPTI activity API (facts from NVIDIA's
 * CUPTI reference, cupti_activity.h / cupti_result.h): CUptiResult is an int
 * enum, CUPTI_SUCCESS = 0, CUPTI_ERROR_MAX_LIMIT_REACHED = 12; activity kinds
 * KERNEL = 3 and CONCURRENT_KERNEL = 10; every activity record starts with
 * its 32-bit kind; kernel records (CUpti_ActivityKernel4 and later, packed)
 * hold the 64-bit start and end timestamps in ns at byte offsets 16 and 24. */
#include "device/gpu_time.h"

#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "rpxprof/latency.h"

enum {
    CUPTI_SUCCESS = 0,
    CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
    KIND_KERNEL = 3,
    KIND_CONCURRENT_KERNEL = 10,
    KERNEL_START_OFFSET = 16,
    KERNEL_END_OFFSET = 24
};

#define BUFFER_SIZE ((size_t)1 << 20)
#define N_BUFFERS 8
#define MAX_INTERVALS 65536
#define RPX__MAX_REJECTED 4

typedef void (*request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*complete_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                            size_t valid);

typedef struct cupti_api {
    int (*register_callbacks)(request_fn, complete_fn);
    int (*enable)(uint32_t kind);
    int (*disable)(uint32_t kind);
    int (*next_record)(uint8_t *buffer, size_t valid, void **record);
    int (*flush_all)(uint32_t flag);
    int (*result_string)(int result, const char **str);
} cupti_api;

typedef struct interval {
    uint64_t start, end;
} interval;

struct rpx_gpu_time {
    void *lib;
    cupti_api api;
    char library[512];
    pthread_mutex_t lock;
    uint8_t *buffers[N_BUFFERS];
    int buffer_free[N_BUFFERS];
    interval *iv;                 /* kernels of the current call */
    size_t n_iv;
    int truncated;                /* a call had more kernels than MAX_INTERVALS */
    int lost_buffers;             /* CUPTI asked for a buffer when none was free */
    double *busy_ns;              /* per timed call */
    long *kernels;
    size_t n_calls, max_calls;
    int enabled_kind;
    char rejected[RPX__MAX_REJECTED][600]; /* candidates that loaded but would not trace */
    int n_rejected;
};

/* CUPTI calls back into plain functions: one profiler per process. */
static rpx_gpu_time *g_active;

static void on_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    rpx_gpu_time *g = g_active;
    int i;
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    if (!g) return;
    pthread_mutex_lock(&g->lock);
    for (i = 0; i < N_BUFFERS; i++)
        if (g->buffer_free[i]) {
            g->buffer_free[i] = 0;
            *buffer = g->buffers[i];
            *size = BUFFER_SIZE;
            break;
        }
    if (!*buffer) g->lost_buffers = 1;
    pthread_mutex_unlock(&g->lock);
}

static void on_complete(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    rpx_gpu_time *g = g_active;
    void *rec = NULL;
    int i;
    (void)ctx;
    (void)stream;
    (void)size;
    if (!g || !buffer) return;
    pthread_mutex_lock(&g->lock);
    while (valid > 0 && g->api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
        uint32_t kind;
        interval v;
        memcpy(&kind, rec, sizeof kind);
        if (kind != KIND_KERNEL && kind != KIND_CONCURRENT_KERNEL) continue;
        memcpy(&v.start, (const uint8_t *)rec + KERNEL_START_OFFSET, sizeof v.start);
        memcpy(&v.end, (const uint8_t *)rec + KERNEL_END_OFFSET, sizeof v.end);
        if (v.start == 0 || v.end < v.start) continue; /* no timing was collected */
        if (g->n_iv < MAX_INTERVALS) g->iv[g->n_iv++] = v;
        else g->truncated = 1;
    }
    for (i = 0; i < N_BUFFERS; i++)
        if (g->buffers[i] == buffer) g->buffer_free[i] = 1;
    pthread_mutex_unlock(&g->lock);
}

static int cmp_interval(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Length of the union of the intervals (sorts them in place). */
static double union_ns(interval *iv, size_t n)
{
    double total = 0;
    uint64_t s, e;
    size_t i;
    if (n == 0) return 0;
    qsort(iv, n, sizeof *iv, cmp_interval);
    s = iv[0].start;
    e = iv[0].end;
    for (i = 1; i < n; i++) {
        if (iv[i].start > e) {
            total += (double)(e - s);
            s = iv[i].start;
            e = iv[i].end;
        } else if (iv[i].end > e) {
            e = iv[i].end;
        }
    }
    return total + (double)(e - s);
}

/* ---- finding a CUPTI that works ---- */

#define MAX_CANDIDATES 48

typedef struct candidates {
    char path[MAX_CANDIDATES][512];
    int noload[MAX_CANDIDATES]; /* 1: only if already loaded (RTLD_NOLOAD) */
    int n;
    char prefix[16][400];       /* site-packages folders of loaded objects */
    int n_prefix;
} candidates;

static void add_candidate(candidates *c, const char *path, int noload)
{
    int i;
    for (i = 0; i < c->n; i++)
        if (strcmp(c->path[i], path) == 0) return;
    if (c->n >= MAX_CANDIDATES || strlen(path) >= sizeof c->path[0]) return;
    snprintf(c->path[c->n], sizeof c->path[0], "%s", path);
    c->noload[c->n++] = noload;
}

/* Every loaded object: a CUPTI already there (torch's, say) by its path, and
 * the site-packages (or dist-packages) folder of anything loaded from one
 * (the running Python's wheels). */
static int scan_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
    candidates *c = data;
    const char *name = info->dlpi_name, *base, *sp;
    (void)size;
    if (!name || !*name) return 0;
    base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strncmp(base, "libcupti.so", 11) == 0) add_candidate(c, name, 1);
    sp = strstr(name, "/site-packages/");
    if (!sp) sp = strstr(name, "/dist-packages/");
    if (sp) {
        size_t len = (size_t)(strchr(sp + 1, '/') - name);
        int i, seen = 0;
        for (i = 0; i < c->n_prefix; i++)
            if (strlen(c->prefix[i]) == len && strncmp(c->prefix[i], name, len) == 0) seen = 1;
        if (!seen && c->n_prefix < 16 && len < sizeof c->prefix[0]) {
            memcpy(c->prefix[c->n_prefix], name, len);
            c->prefix[c->n_prefix++][len] = '\0';
        }
    }
    return 0;
}

/* In the order they are tried: RPX_CUPTI_LIBRARY (a path, or several
 * separated by ':') alone when set; else a CUPTI already loaded in this
 * process (by soname with RTLD_NOLOAD, then by path), the CUPTI wheels of the
 * running Python (site-packages/nvidia/cuda_cupti/lib, nvidia/cu13/lib), and
 * the system's names and the CUDA toolkit's folders. */
static void list_candidates(candidates *c)
{
    static const char *const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8",
                                          "libcupti.so"};
    static const char *const wheels[] = {"nvidia/cuda_cupti/lib/libcupti.so.12",
                                         "nvidia/cuda_cupti/lib/libcupti.so.13",
                                         "nvidia/cu13/lib/libcupti.so.13",
                                         "nvidia/cuda_cupti/lib/libcupti.so.11.8"};
    static const char *const system[] = {
        "libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", "/usr/local/cuda/lib64/libcupti.so",
        "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so",
        "/usr/lib/x86_64-linux-gnu/libcupti.so"};
    const char *env = getenv("RPX_CUPTI_LIBRARY");
    size_t i;
    int k;
    memset(c, 0, sizeof *c);
    if (env && *env) {
        char buf[4096], *tok, *save = NULL;
        snprintf(buf, sizeof buf, "%s", env);
        for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
            add_candidate(c, tok, 0);
        return;
    }
    for (i = 0; i < sizeof sonames / sizeof sonames[0]; i++) add_candidate(c, sonames[i], 1);
    dl_iterate_phdr(scan_loaded, c);
    for (k = 0; k < c->n_prefix; k++)
        for (i = 0; i < sizeof wheels / sizeof wheels[0]; i++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", c->prefix[k], wheels[i]);
            if (access(path, R_OK) == 0) add_candidate(c, path, 0);
        }
    /* then loaded for real: the sonames (tried above only if already loaded) and the
     * toolkit's folders */
    for (i = 0; i < sizeof system / sizeof system[0]; i++) {
        int j, dup = 0;
        for (j = 0; j < c->n; j++)
            if (!c->noload[j] && strcmp(c->path[j], system[i]) == 0) dup = 1;
        if (!dup && c->n < MAX_CANDIDATES) {
            snprintf(c->path[c->n], sizeof c->path[0], "%s", system[i]);
            c->noload[c->n++] = 0;
        }
    }
}

static void append(char *buf, size_t size, const char *a, const char *b)
{
    size_t len = strlen(buf);
    if (len < size) snprintf(buf + len, size - len, "%s%s", a, b);
}

/* Resolve the activity API of `lib` and enable kernel records; 0 or the
 * CUPTI result (-1: a symbol is missing). */
static int try_enable(rpx_gpu_time *g, void *lib, const char **missing)
{
    int r;
    memset(&g->api, 0, sizeof g->api);
    *(void **)&g->api.register_callbacks = dlsym(lib, "cuptiActivityRegisterCallbacks");
    *(void **)&g->api.enable = dlsym(lib, "cuptiActivityEnable");
    *(void **)&g->api.disable = dlsym(lib, "cuptiActivityDisable");
    *(void **)&g->api.next_record = dlsym(lib, "cuptiActivityGetNextRecord");
    *(void **)&g->api.flush_all = dlsym(lib, "cuptiActivityFlushAll");
    *(void **)&g->api.result_string = dlsym(lib, "cuptiGetResultString");
    *missing = !g->api.register_callbacks ? "cuptiActivityRegisterCallbacks"
               : !g->api.enable           ? "cuptiActivityEnable"
               : !g->api.next_record      ? "cuptiActivityGetNextRecord"
               : !g->api.flush_all        ? "cuptiActivityFlushAll"
                                          : NULL;
    if (*missing) return -1;
    if ((r = g->api.register_callbacks(on_request, on_complete)) != CUPTI_SUCCESS) return r;
    return g->api.enable(KIND_CONCURRENT_KERNEL);
}

/* Try the candidates in order; the first that enables kernel records wins.
 * Returns 0, or RPX_EUNAVAILABLE with err naming every candidate's failure. */
static int open_cupti(rpx_gpu_time *g, rpx_error *err)
{
    candidates *c = calloc(1, sizeof *c);
    char loaded_why[2048] = "", refused_why[2048] = "";
    int i, any_loaded = 0;
    if (!c) return rpx_error_set(err, RPX_ENOMEM, "--gpu-time: out of memory");
    list_candidates(c);
    for (i = 0; i < c->n; i++) {
        const char *missing = NULL, *rs = NULL;
        char code[64];
        int r;
        void *h;
        dlerror();
        h = dlopen(c->path[i], RTLD_NOW | RTLD_LOCAL | (c->noload[i] ? RTLD_NOLOAD : 0));
        if (!h) {
            const char *why = dlerror();
            /* a name not already loaded, or not installed, is no news unless asked for */
            if (!c->noload[i] && (strchr(c->path[i], '/') || getenv("RPX_CUPTI_LIBRARY")))
                append(loaded_why, sizeof loaded_why, loaded_why[0] ? "; " : "",
                       why ? why : c->path[i]);
            continue;
        }
        any_loaded = 1;
        r = try_enable(g, h, &missing);
        if (r == CUPTI_SUCCESS) {
            g->lib = h;
            snprintf(g->library, sizeof g->library, "%s", c->path[i]);
            free(c);
            return 0;
        }
        /* left loaded: unloading a CUPTI that saw the driver is not safe */
        if (missing) {
            snprintf(code, sizeof code, "lacks %s", missing);
        } else {
            if (g->api.result_string) g->api.result_string(r, &rs);
            snprintf(code, sizeof code, "%.40s (%d)", rs ? rs : "error", r);
        }
        append(refused_why, sizeof refused_why, refused_why[0] ? "; " : "", c->path[i]);
        append(refused_why, sizeof refused_why, ": ", code);
        if (g->n_rejected < RPX__MAX_REJECTED) {
            snprintf(g->rejected[g->n_rejected], sizeof g->rejected[0], "%.500s: %.64s",
                     c->path[i], code);
            g->n_rejected++;
        }
    }
    free(c);
    if (any_loaded)
        return rpx_error_set(err, RPX_EUNAVAILABLE,
                             "--gpu-time: CUPTI refused kernel tracing: %s; a CUPTI newer than "
                             "the driver refuses: install the CUPTI of the driver's CUDA "
                             "version, or name it with RPX_CUPTI_LIBRARY=/path/libcupti.so",
                             refused_why);
    return rpx_error_set(err, RPX_EUNAVAILABLE,
                         "--gpu-time: CUPTI cannot be loaded: %s%slibcupti.so was found neither "
                         "loaded, nor in the running Python's nvidia-cuda-cupti wheel, nor on the "
                         "library path or in the CUDA toolkit's usual folders; set "
                         "RPX_CUPTI_LIBRARY=/path/libcupti.so",
                         loaded_why, loaded_why[0] ? "; " : "");
}

int rpx_gpu_time_open(size_t max_calls, rpx_gpu_time **out, rpx_error *err)
{
    rpx_gpu_time *g;
    int i, r;
    *out = NULL;
    if (g_active) return rpx_error_set(err, RPX_EINVAL, "--gpu-time: already active");
    g = calloc(1, sizeof *g);
    if (!g) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    pthread_mutex_init(&g->lock, NULL);
    g->max_calls = max_calls;
    g->iv = malloc(MAX_INTERVALS * sizeof *g->iv);
    g->busy_ns = calloc(max_calls ? max_calls : 1, sizeof *g->busy_ns);
    g->kernels = calloc(max_calls ? max_calls : 1, sizeof *g->kernels);
    for (i = 0; i < N_BUFFERS; i++) {
        g->buffers[i] = aligned_alloc(8, BUFFER_SIZE);
        g->buffer_free[i] = 1;
    }
    for (i = 0; i < N_BUFFERS; i++)
        if (!g->buffers[i]) {
            free(g->iv);
            g->iv = NULL;
        }
    if (!g->iv || !g->busy_ns || !g->kernels) {
        rpx_gpu_time_close(g);
        return rpx_error_set(err, RPX_ENOMEM, "--gpu-time: out of memory");
    }
    g_active = g; /* before registering: CUPTI may ask for a buffer at once */
    if ((r = open_cupti(g, err)) != 0) {
        rpx_gpu_time_close(g);
        return r;
    }
    g->enabled_kind = KIND_CONCURRENT_KERNEL;
    *out = g;
    return 0;
}

void rpx_gpu_time_after_call(rpx_gpu_time *g, int timed)
{
    size_t n;
    double busy;
    if (!g) return;
    g->api.flush_all(0); /* blocking; the call was synchronised, so its kernels are complete */
    pthread_mutex_lock(&g->lock);
    n = g->n_iv;
    busy = union_ns(g->iv, n);
    g->n_iv = 0;
    pthread_mutex_unlock(&g->lock);
    if (timed && g->n_calls < g->max_calls) {
        g->busy_ns[g->n_calls] = busy;
        g->kernels[g->n_calls] = (long)n;
        g->n_calls++;
    }
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

double rpx_gpu_time_p50_ms(const rpx_gpu_time *g)
{
    rpx_latency *lat;
    rpx_latency_stats st;
    double p = (double)NAN;
    size_t i;
    if (!g || g->n_calls == 0 || rpx_latency_create(0, &lat) != 0) return p;
    for (i = 0; i < g->n_calls; i++) rpx_latency_add_ns(lat, g->busy_ns[i]);
    if (rpx_latency_stats_get(lat, &st) == 0 && st.available) p = st.p50_ms;
    rpx_latency_destroy(lat);
    return p;
}

json_t *rpx_gpu_time_json(const rpx_gpu_time *g)
{
    json_t *o = json_object(), *samples = json_array();
    rpx_latency *lat = NULL;
    rpx_latency_stats st;
    long *k;
    size_t i;
    if (!o || !samples || !g) {
        json_decref(samples);
        return o;
    }
    json_object_set_new(o, "method", json_string("cupti_concurrent_kernel_activity"));
    json_object_set_new(o, "covers",
                        json_string("union of the GPU intervals of the kernels each timed call "
                                    "launched (all visible devices), from CUPTI activity "
                                    "records; memory copies and host work are not included"));
    json_object_set_new(o, "library", json_string(g->library));
    {
        json_t *rej = json_array();
        int r;
        for (r = 0; r < g->n_rejected; r++) json_array_append_new(rej, json_string(g->rejected[r]));
        json_object_set_new(o, "rejected_libraries", rej);
    }
    st.available = 0;
    if (rpx_latency_create(0, &lat) == 0) {
        for (i = 0; i < g->n_calls; i++) {
            rpx_latency_add_ns(lat, g->busy_ns[i]);
            json_array_append_new(samples, json_real(g->busy_ns[i] / 1e6));
        }
        rpx_latency_stats_get(lat, &st);
        rpx_latency_destroy(lat);
    }
    json_object_set_new(o, "calls", json_integer((json_int_t)g->n_calls));
    json_object_set_new(o, "p50_ms", st.available ? json_real(st.p50_ms) : json_null());
    json_object_set_new(o, "mean_ms", st.available ? json_real(st.mean_ms) : json_null());
    k = g->n_calls ? malloc(g->n_calls * sizeof *k) : NULL;
    if (k) {
        memcpy(k, g->kernels, g->n_calls * sizeof *k);
        qsort(k, g->n_calls, sizeof *k, cmp_long);
        json_object_set_new(o, "kernels_per_call_p50", json_integer(k[g->n_calls / 2]));
        free(k);
    } else {
        json_object_set_new(o, "kernels_per_call_p50", json_null());
    }
    json_object_set_new(o, "truncated", json_boolean(g->truncated || g->lost_buffers));
    json_object_set_new(o, "samples_ms", samples);
    return o;
}

void rpx_gpu_time_close(rpx_gpu_time *g)
{
    int i;
    if (!g) return;
    if (g_active == g) {
        if (g->enabled_kind && g->api.disable) g->api.disable((uint32_t)g->enabled_kind);
        if (g->api.flush_all) g->api.flush_all(1); /* forced: hand every buffer back */
        g_active = NULL;
    }
    /* CUPTI stays loaded: unloading it under a live CUDA context is unsafe */
    for (i = 0; i < N_BUFFERS; i++) free(g->buffers[i]);
    free(g->iv);
    free(g->busy_ns);
    free(g->kernels);
    pthread_mutex_destroy(&g->lock);
    free(g);
}
