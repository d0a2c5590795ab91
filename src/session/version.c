/* version.c — owns the version under test of a session (docs/report.md#session):
 * the model file's SHA-256, a Python module's source digest, and the commit,
 * from the option (--commit TEXT, commit=) or `git rev-parse HEAD` of the
 * model's folder when it is a git checkout. Read after the timed calls, never
 * inside them. The benchmark's identity never holds these: a new build of the
 * same model at the same path is what users compare. */
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "rpxprof/npz.h"
#include "session/session_internal.h"

extern char **environ;

/* the SHA-256 (64 hex digits) of a regular file, or null */
static json_t *file_digest(const char *path)
{
    char hex[65];
    struct stat st;
    rpx_error e = {0};
    if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return json_null();
    if (rpx_file_sha256(path, hex, &e) != 0) return json_null();
    return json_string(hex);
}

/* `git -C DIR rev-parse HEAD` into out (41 bytes): 0, or -1 when DIR is not in
 * a git checkout (or git is not installed). Its stderr goes to /dev/null. */
static int git_head(const char *dir, char out[41])
{
    int fd[2], status = 0, rc = -1;
    pid_t pid;
    posix_spawn_file_actions_t fa;
    /* no fsmonitor hook: asking for the commit never runs a program the checkout names */
    char *argv[] = {"git", "-C", (char *)dir, "-c", "core.fsmonitor=false", "rev-parse", "--verify", "-q", "HEAD", NULL};
    char buf[128];
    size_t got = 0;
    ssize_t n;
    if (pipe2(fd, O_CLOEXEC) != 0) return -1;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (posix_spawnp(&pid, "git", &fa, NULL, argv, environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    while (pid > 0 && got < sizeof buf - 1 && (n = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)n;
    close(fd[0]);
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        buf[got] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        if (strlen(buf) >= 40 && strspn(buf, "0123456789abcdef") == strlen(buf)) {
            snprintf(out, 41, "%.40s", buf);
            rc = 0;
        }
    }
    return rc;
}

/* the folder of a file (its real path's), into dir */
static int folder_of(const char *file, char *dir, size_t size)
{
    char real[PATH_MAX], *slash;
    if (!file || !realpath(file, real)) return -1;
    slash = strrchr(real, '/');
    if (!slash) return -1;
    if (slash == real) slash[1] = '\0';
    else *slash = '\0';
    snprintf(dir, size, "%s", real);
    return 0;
}

json_t *rpx__session_version(const char *model_file, const char *module_file, const char *commit)
{
    json_t *v = json_object();
    char dir[PATH_MAX], head[41];
    const char *where = module_file ? module_file : model_file;
    if (!v) return NULL;
    json_object_set_new(v, "model_sha256", file_digest(model_file));
    json_object_set_new(v, "module_source_sha256", file_digest(module_file));
    if (commit && *commit) {
        json_object_set_new(v, "commit", json_string(commit));
        json_object_set_new(v, "commit_source", json_string("option"));
    } else if (where && folder_of(where, dir, sizeof dir) == 0 && git_head(dir, head) == 0) {
        json_object_set_new(v, "commit", json_string(head));
        json_object_set_new(v, "commit_source", json_string("git"));
    } else {
        json_object_set_new(v, "commit", json_null());
        json_object_set_new(v, "commit_source", json_null());
    }
    return v;
}
