/* bench_cost — time rpx_cost_analyze_onnx on one model, in process:
 *   bench_cost MODEL.onnx REPEATS [--input NAME=DIMS]...
 * prints one JSON line: file size, the median/min of REPEATS analyses (ms),
 * the peak RSS of this process (KiB) and the totals found. The first
 * analysis is a warm-up (page cache, allocator). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "rpxprof/cost.h"
#include "rpxprof/error.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    rpx_cost_options o;
    const char *shapes[64];
    size_t n_shapes = 0;
    int reps, i;
    double *t;
    struct stat st;
    struct rusage ru;
    const rpx_efficiency *e = NULL;
    rpx_cost *keep = NULL;
    if (argc < 3 || (reps = atoi(argv[2])) < 1) {
        fprintf(stderr, "usage: bench_cost MODEL.onnx REPEATS [--input NAME=DIMS]...\n");
        return 2;
    }
    for (i = 3; i + 1 < argc && n_shapes < 64; i += 2)
        if (!strcmp(argv[i], "--input")) shapes[n_shapes++] = argv[i + 1];
    rpx_cost_options_init(&o);
    o.input_shapes = shapes;
    o.n_input_shapes = n_shapes;
    t = calloc((size_t)reps, sizeof *t);
    if (!t || stat(argv[1], &st) != 0) return 1;
    for (i = -1; i < reps; i++) {
        rpx_cost *c = NULL;
        rpx_error err = {0};
        double t0 = now_ms();
        if (rpx_cost_analyze_onnx(argv[1], &o, &c, &err) != 0) {
            fprintf(stderr, "bench_cost: %s\n", err.message);
            return 1;
        }
        if (i >= 0) t[i] = now_ms() - t0;
        rpx_cost_free(keep);
        keep = c;
    }
    e = rpx_cost_efficiency(keep);
    qsort(t, (size_t)reps, sizeof *t, cmp);
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"file_bytes\": %lld, \"repeats\": %d, \"median_ms\": %.3f, \"min_ms\": %.3f, "
           "\"maxrss_kib\": %ld, \"nodes\": %zu, \"params\": %.0f, \"macs\": %.0f}\n",
           (long long)st.st_size, reps, t[reps / 2], t[0], ru.ru_maxrss,
           rpx_cost_node_count(keep), e->params, e->macs);
    rpx_cost_free(keep);
    free(t);
    return 0;
}
