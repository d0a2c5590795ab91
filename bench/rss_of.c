/* rss_of — run a command and print its peak resident set (ru_maxrss, KiB) and
 * wall time. A small C parent keeps the figure clean: a child forked from a
 * large parent (Python, a shell) inherits that parent's high-water mark. */
#include <spawn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

int main(int argc, char **argv)
{
    pid_t pid;
    int status;
    struct rusage ru;
    struct timespec t0, t1;
    if (argc < 2) {
        fprintf(stderr, "usage: rss_of COMMAND [ARG]...\n");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (posix_spawnp(&pid, argv[1], NULL, NULL, argv + 1, environ) != 0) {
        perror(argv[1]);
        return 127;
    }
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("wait4");
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "rss_of: maxrss_kib=%ld wall_s=%.6f exit=%d\n", ru.ru_maxrss,
            (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
