/* bench_npz_load.c — how close rpx_npz_load comes to reading the file.
 *
 *   bench_npz_load FILE.npz [REPS]
 *
 * Reads the file once to warm the page cache, then, REPS times and
 * interleaved: (a) read() of the whole file into a fresh buffer, (b)
 * rpx_npz_load of it. Prints every sample, the median throughput of each
 * (file bytes / time, GiB/s), their ratio, and the peak RSS growth of one
 * load (VmHWM − VmRSS before, measured in a forked child that holds nothing
 * else) relative to the bytes of array data. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "rpxprof/npz.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
    fclose(f);
    return v;
}

/* read() the whole file into a fresh anonymous mapping, like the loader's */
static double time_read(const char *path, size_t size)
{
    double t0 = now_s(), t1;
    int fd = open(path, O_RDONLY);
    size_t got = 0;
    unsigned char *buf;
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            perror("read");
            exit(1);
        }
        got += (size_t)n;
    }
    t1 = now_s();
    close(fd);
    munmap(buf, size);
    return t1 - t0;
}

static double time_load(const char *path, size_t *data_bytes)
{
    rpx_npz *npz;
    rpx_error err = {0};
    const rpx_inputs *in;
    double t0 = now_s(), t1;
    size_t i;
    if (rpx_npz_load(path, &npz, &err)) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    t1 = now_s();
    in = rpx_npz_inputs(npz);
    *data_bytes = 0;
    for (i = 0; i < in->count; i++) *data_bytes += in->tensors[i].nbytes;
    rpx_npz_free(npz);
    return t1 - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    const char *path;
    struct stat st;
    int reps = argc > 2 ? atoi(argv[2]) : 7, i, fds[2];
    double *tr, *tl, mr, ml, gib = 1024.0 * 1024 * 1024;
    size_t size, data = 0;
    long rss0 = -1, hwm = -1;

    if (argc < 2 || reps < 1) {
        fprintf(stderr, "usage: %s FILE.npz [REPS]\n", argv[0]);
        return 2;
    }
    path = argv[1];
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    size = (size_t)st.st_size;
    tr = calloc((size_t)reps, sizeof *tr);
    tl = calloc((size_t)reps, sizeof *tl);

    /* peak RSS of one load, in a child that holds nothing else (the page
     * cache is not RSS, so this runs before and after nothing big) */
    if (pipe(fds) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            long r[2];
            size_t d;
            r[0] = status_kib("VmRSS");
            time_load(path, &d);
            r[1] = status_kib("VmHWM");
            if (write(fds[1], r, sizeof r) != (ssize_t)sizeof r) _exit(1);
            _exit(0);
        }
        if (pid > 0) {
            long r[2];
            if (read(fds[0], r, sizeof r) == (ssize_t)sizeof r) {
                rss0 = r[0];
                hwm = r[1];
            }
            waitpid(pid, NULL, 0);
        }
        close(fds[0]);
        close(fds[1]);
    }

    time_read(path, size); /* warm the page cache */
    time_load(path, &data);
    for (i = 0; i < reps; i++) {
        tr[i] = time_read(path, size);
        tl[i] = time_load(path, &data);
        printf("rep %d: read() %.3f s (%.2f GiB/s)   rpx_npz_load %.3f s (%.2f GiB/s)\n", i + 1,
               tr[i], (double)size / gib / tr[i], tl[i], (double)size / gib / tl[i]);
    }
    mr = median(tr, reps);
    ml = median(tl, reps);
    printf("file: %s, %.3f GiB, array data %.3f GiB\n", path, (double)size / gib,
           (double)data / gib);
    printf("median read():       %.3f s  %.2f GiB/s\n", mr, (double)size / gib / mr);
    printf("median rpx_npz_load: %.3f s  %.2f GiB/s\n", ml, (double)size / gib / ml);
    printf("load / read throughput: %.2f\n", mr / ml);
    if (rss0 >= 0 && hwm >= 0)
        printf("peak RSS growth of one load: %.1f MiB = %.3f x the array data\n",
               (double)(hwm - rss0) / 1024.0, (double)(hwm - rss0) * 1024.0 / (double)data);
    free(tr);
    free(tl);
    return 0;
}
