/* samples.c — owns the inputs of a run as distinct samples: the files (a
 * folder stands for its *.npz in name order), each loaded once outside
 * timing, checked to hold the same arrays (names, dtypes, shapes), their
 * combined SHA-256, the writable copies that --writable-inputs hands the
 * model (the loaded, read-only buffers stay as the pristine bytes that are
 * restored before every call), and the guard that names --writable-inputs
 * when a model writes into read-only inputs. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "common/user_file.h"
#include "rpxprof/npz.h"
#include "runner/runner_internal.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int push(char ***list, size_t *n, size_t *cap, char *s)
{
    if (!s) return -1;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        char **p = realloc(*list, nc * sizeof *p);
        if (!p) {
            free(s);
            return -1;
        }
        *list = p;
        *cap = nc;
    }
    (*list)[(*n)++] = s;
    return 0;
}

static void free_list(char **list, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) free(list[i]);
    free(list);
}

/* Whether the folder entry `p` (named *.npz) is a sample: 1 when it is a
 * regular file (or a link to one), 0 for a folder (a folder is never a
 * sample, as docs/cli.md says), else an error naming it: a link that cannot
 * be followed (dangling, a loop) or a FIFO, device or socket is most likely a
 * mistake (a sample moved, not yet copied, a pipe left behind), so it is
 * refused, never skipped in silence. */
static int check_entry(const char *dir, const char *p, rpx_error *err)
{
    struct stat st, ls;
    char target[4096];
    ssize_t n;
    if (stat(p, &st) == 0) {
        if (S_ISREG(st.st_mode)) return 1;
        if (S_ISDIR(st.st_mode)) return 0;
        {
            char label[4200];
            snprintf(label, sizeof label, "--inputs %s: %s", dir, p);
            if (rpx__user_file_regular(p, label, err) != 0) return RPX_EINVAL;
        }
        return rpx_error_set(err, RPX_EINVAL, "--inputs %s: %s is not a regular file", dir, p);
    }
    if (errno == ELOOP)
        return rpx_error_set(err, RPX_EINVAL,
                             "--inputs %s: %s is a symbolic link that cannot be followed (a loop "
                             "of links); every *.npz entry of the folder is a sample: fix the link "
                             "or remove it",
                             dir, p);
    if (lstat(p, &ls) == 0 && S_ISLNK(ls.st_mode)) {
        n = readlink(p, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        return rpx_error_set(err, RPX_EINVAL,
                             "--inputs %s: %s is a symbolic link to %s, which does not exist (a "
                             "dangling link); every *.npz entry of the folder is a sample: fix "
                             "the link or remove it",
                             dir, p, n > 0 ? target : "?");
    }
    return rpx_error_set(err, RPX_EIO, "--inputs %s: %s: cannot read it (%s)", dir, p,
                         strerror(errno));
}

/* A folder's *.npz files (regular files, or links to them), in name order;
 * folders are skipped, any other *.npz entry is refused (check_entry). */
static int expand_dir(const char *dir, char ***list, size_t *n, size_t *cap, rpx_error *err)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t first = *n, found = 0;
    int rc;
    if (!d)
        return rpx_error_set(err, RPX_EIO, "--inputs %s: cannot open the folder (%s)", dir,
                             strerror(errno));
    while ((e = readdir(d)) != NULL) {
        size_t len;
        char *p;
        if (!ends_with(e->d_name, ".npz") || strcmp(e->d_name, ".npz") == 0) continue;
        len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(p = malloc(len))) {
            closedir(d);
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        }
        snprintf(p, len, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", e->d_name);
        if ((rc = check_entry(dir, p, err)) <= 0) {
            free(p);
            if (rc == 0) continue;
            closedir(d);
            return rc;
        }
        if (push(list, n, cap, p) != 0) {
            closedir(d);
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        }
        found++;
    }
    closedir(d);
    if (found == 0)
        return rpx_error_set(err, RPX_EINVAL,
                             "--inputs %s: the folder holds no *.npz file; give a folder of NPZ "
                             "files (one sample each) or the files themselves",
                             dir);
    qsort(*list + first, found, sizeof **list, cmp_str);
    return 0;
}

int rpx__samples_paths(const char *const *given, size_t n_given, char ***out, size_t *n_out,
                       rpx_error *err)
{
    char **list = NULL;
    size_t n = 0, cap = 0, i;
    int rc = 0;
    *out = NULL;
    *n_out = 0;
    if (n_given == 0) return rpx_error_set(err, RPX_EINVAL, "no inputs file given");
    for (i = 0; i < n_given && rc == 0; i++) {
        struct stat st;
        if (!given[i] || !given[i][0]) {
            rc = rpx_error_set(err, RPX_EINVAL, "--inputs: an empty path; give an NPZ file");
        } else if (stat(given[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = expand_dir(given[i], &list, &n, &cap, err);
        } else if (rpx__user_file_regular(given[i], NULL, err) != 0) { /* a FIFO would block */
            char msg[sizeof err->message];
            snprintf(msg, sizeof msg, "%s", err->message);
            rc = rpx_error_set(err, RPX_EINVAL, "--inputs %s", msg);
        } else if (push(&list, &n, &cap, strdup(given[i])) != 0) {
            rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
        }
    }
    if (rc != 0) {
        free_list(list, n);
        return rc;
    }
    *out = list;
    *n_out = n;
    return 0;
}

/* SHA-256 over the files' own SHA-256s: one file, its own; several, the
 * lower-case hex digests in order, each followed by '\n' (what `sha256sum
 * FILES | cut -c1-64` prints). */
static int combined_sha256(char *const *paths, size_t n, char hex[65], rpx_error *err)
{
    static const char digits[] = "0123456789abcdef";
    struct sha256_ctx ctx;
    uint8_t md[SHA256_DIGEST_SIZE];
    size_t i;
    int rc;
    if (n == 1) return rpx_file_sha256(paths[0], hex, err);
    sha256_init(&ctx);
    for (i = 0; i < n; i++) {
        char one[65];
        if ((rc = rpx_file_sha256(paths[i], one, err)) != 0) return rc;
        one[64] = '\n';
        sha256_update(&ctx, 65, (const uint8_t *)one);
    }
    sha256_digest(&ctx, sizeof md, md);
    for (i = 0; i < sizeof md; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
    return 0;
}

int rpx_runner_inputs_sha256(const char *const *files, size_t n, char hex[65], rpx_error *err)
{
    char **paths;
    size_t np;
    int rc = rpx__samples_paths(files, n, &paths, &np, err);
    if (rc != 0) return rc;
    rc = combined_sha256(paths, np, hex, err);
    free_list(paths, np);
    return rc;
}

/* "1x3x8x8" */
static void shape_text(const rpx_tensor *t, char *buf, size_t size)
{
    size_t at = 0;
    int d;
    buf[0] = '\0';
    if (t->ndim == 0) snprintf(buf, size, "scalar");
    for (d = 0; d < t->ndim && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
}

static void names_text(const rpx_inputs *in, char *buf, size_t size)
{
    size_t at = 0, i;
    buf[0] = '\0';
    for (i = 0; i < in->count && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", i ? ", " : "", in->tensors[i].name);
}

/* Sample k's arrays in sample 0's order, checked against it. */
static int match_sample(const samples_set *s, size_t k, rpx_tensor *out, rpx_error *err)
{
    const rpx_inputs *a = rpx_npz_inputs(s->npz[0]), *b = rpx_npz_inputs(s->npz[k]);
    size_t i;
    char na[512], nb[512];
    if (a->count != b->count) goto names;
    for (i = 0; i < a->count; i++) {
        const rpx_tensor *x = &a->tensors[i], *y = rpx_inputs_find(b, x->name);
        int d, same;
        if (!y) goto names;
        same = x->dtype == y->dtype && x->ndim == y->ndim;
        for (d = 0; same && d < x->ndim; d++) same = x->shape[d] == y->shape[d];
        if (!same) {
            shape_text(x, na, sizeof na);
            shape_text(y, nb, sizeof nb);
            return rpx_error_set(err, RPX_EINVAL,
                                 "--inputs %s: array '%s' is %s %s but in %s it is %s %s; every "
                                 "sample must have the same dtypes and shapes (mixed shapes are "
                                 "refused, as the pipeline refuses them)",
                                 s->paths[k], x->name, rpx_dtype_name(y->dtype), nb, s->paths[0],
                                 rpx_dtype_name(x->dtype), na);
        }
        out[i] = *y;
    }
    return 0;
names:
    names_text(a, na, sizeof na);
    names_text(b, nb, sizeof nb);
    return rpx_error_set(err, RPX_EINVAL,
                         "--inputs %s: its arrays (%s) differ from those of %s (%s); every sample "
                         "must have the same array names",
                         s->paths[k], nb, s->paths[0], na);
}

/* A writable, page-aligned copy of every array of every sample. */
static int make_writable(samples_set *s, rpx_error *err)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), k, i, a = s->pristine[0].count;
    s->work_tensors = calloc(s->n * (a ? a : 1), sizeof *s->work_tensors);
    s->work = calloc(s->n, sizeof *s->work);
    s->maps = calloc(s->n * (a ? a : 1), sizeof *s->maps);
    if (!s->work_tensors || !s->work || !s->maps)
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (k = 0; k < s->n; k++) {
        rpx_tensor *t = s->work_tensors + k * a;
        for (i = 0; i < a; i++) {
            const rpx_tensor *src = &s->pristine[k].tensors[i];
            t[i] = *src;
            if (src->nbytes) {
                size_t len = (src->nbytes + page - 1) / page * page;
                void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                               -1, 0);
                if (m == MAP_FAILED)
                    return rpx_error_set(err, RPX_ENOMEM,
                                         "--writable-inputs: cannot allocate %zu bytes for the "
                                         "writable copy of %s's array '%s' (%s)",
                                         src->nbytes, s->paths[k], src->name, strerror(errno));
                memcpy(m, src->data, src->nbytes);
                s->maps[k * a + i].addr = m;
                s->maps[k * a + i].len = len;
                t[i].data = m;
            }
        }
        s->work[k].count = a;
        s->work[k].tensors = t;
    }
    return 0;
}

int rpx__samples_load(const rpx_runner_config *c, samples_set *s, rpx_error *err)
{
    const char *one[1];
    const char *const *given = c->sample_files;
    size_t n_given = c->n_sample_files, k, i, a;
    int rc;
    memset(s, 0, sizeof *s);
    if (n_given == 0 && !c->inputs) {
        /* no inputs file (an HTTP request; the runner refuses it for the other
         * targets): one sample of no arrays, no path, no hash */
        s->n = 1;
        s->paths = calloc(1, sizeof *s->paths);
        s->ids = calloc(1, sizeof *s->ids);
        s->npz = calloc(1, sizeof *s->npz);
        s->pristine = s->work = calloc(1, sizeof *s->pristine);
        if (!s->paths || !s->ids || !s->npz || !s->pristine)
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        return 0;
    }
    if (n_given == 0) {
        one[0] = c->inputs;
        given = one;
        n_given = 1;
    }
    if ((rc = rpx__samples_paths(given, n_given, &s->paths, &s->n, err)) != 0) return rc;
    s->writable = c->writable_inputs != 0;
    if (!(s->npz = calloc(s->n, sizeof *s->npz)) || !(s->ids = calloc(s->n, sizeof *s->ids)) ||
        !(s->pristine = calloc(s->n, sizeof *s->pristine)))
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (k = 0; k < s->n; k++) {
        const char *base = strrchr(s->paths[k], '/');
        const char *dot;
        base = base ? base + 1 : s->paths[k];
        dot = strrchr(base, '.');
        s->ids[k] = dot && dot != base ? strndup(base, (size_t)(dot - base)) : strdup(base);
        if (!s->ids[k]) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        if ((rc = rpx_npz_load(s->paths[k], &s->npz[k], err)) != 0) return rc;
    }
    a = rpx_npz_inputs(s->npz[0])->count;
    if (s->n > 1) {
        /* sample k's arrays in sample 0's order */
        if (!(s->pristine_tensors = calloc(s->n * (a ? a : 1), sizeof *s->pristine_tensors)))
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        for (k = 0; k < s->n; k++) {
            if ((rc = match_sample(s, k, s->pristine_tensors + k * a, err)) != 0) return rc;
            s->pristine[k].count = a;
            s->pristine[k].tensors = s->pristine_tensors + k * a;
        }
    } else {
        s->pristine[0] = *rpx_npz_inputs(s->npz[0]);
    }
    for (i = 0; i < a; i++) s->bytes_per_sample += s->pristine[0].tensors[i].nbytes;
    if ((rc = combined_sha256(s->paths, s->n, s->sha, err)) != 0) return rc;
    if (s->writable) return make_writable(s, err);
    s->work = s->pristine; /* the loaded buffers, read-only */
    return 0;
}

void rpx__samples_free(samples_set *s)
{
    size_t k, a = s->pristine && s->n ? s->pristine[0].count : 0;
    if (s->maps)
        for (k = 0; k < s->n * a; k++)
            if (s->maps[k].addr) munmap(s->maps[k].addr, s->maps[k].len);
    free(s->maps);
    if (s->work != s->pristine) free(s->work);
    free(s->work_tensors);
    free(s->pristine);
    free(s->pristine_tensors);
    for (k = 0; s->npz && k < s->n; k++) rpx_npz_free(s->npz[k]);
    free(s->npz);
    for (k = 0; s->ids && k < s->n; k++) free(s->ids[k]);
    free(s->ids);
    free_list(s->paths, s->n);
    memset(s, 0, sizeof *s);
}

/* ---- the guard: a write into read-only inputs ---- */

typedef struct guard_range {
    uintptr_t lo, hi;
    int sample, array;
} guard_range;

static guard_range *g_ranges;
static size_t g_n_ranges;
static int *g_fault;                   /* [sample + 1, array] in the shared block */
static struct sigaction g_old_segv, g_old_bus;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    size_t i;
    /* only a fault has an address; a signal sent (kill, raise) is passed on */
    for (i = 0; si->si_code > 0 && i < g_n_ranges; i++) {
        if (a >= g_ranges[i].lo && a < g_ranges[i].hi) {
            if (g_fault) {
                g_fault[1] = g_ranges[i].array;
                g_fault[0] = g_ranges[i].sample + 1;
            }
            /* the write into read-only inputs: crash plainly, as it would */
            signal(sig, SIG_DFL);
            return;
        }
    }
    /* someone else's fault: back to whoever handled it before (a sanitizer,
     * the interpreter), which sees it again when the instruction reruns */
    {
        const struct sigaction *old = sig == SIGSEGV ? &g_old_segv : &g_old_bus;
        sigaction(sig, old, NULL);
        if (si->si_code > 0) return;
        /* a signal sent: no instruction reruns to deliver it again, so the
         * handler before this one gets it now, as it would have */
        if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction)
            old->sa_sigaction(sig, si, uc);
        else if (old->sa_handler == SIG_DFL)
            raise(sig);
        else if (old->sa_handler != SIG_IGN)
            old->sa_handler(sig);
    }
}

void rpx__samples_guard_begin(const rpx_inputs *samples, size_t n, int *fault)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), k, i, at = 0, total = 0;
    struct sigaction sa;
    for (k = 0; k < n; k++) total += samples[k].count;
    g_ranges = total ? calloc(total, sizeof *g_ranges) : NULL;
    if (!g_ranges) return;
    for (k = 0; k < n; k++)
        for (i = 0; i < samples[k].count; i++) {
            const rpx_tensor *t = &samples[k].tensors[i];
            uintptr_t lo = (uintptr_t)t->data;
            if (!t->nbytes) continue;
            g_ranges[at].lo = lo / page * page;
            g_ranges[at].hi = (lo + t->nbytes + page - 1) / page * page;
            g_ranges[at].sample = (int)k;
            g_ranges[at].array = (int)i;
            at++;
        }
    g_n_ranges = at;
    g_fault = fault;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_old_segv);
    sigaction(SIGBUS, &sa, &g_old_bus);
}

void rpx__samples_guard_end(void)
{
    if (!g_ranges) return;
    sigaction(SIGSEGV, &g_old_segv, NULL);
    sigaction(SIGBUS, &g_old_bus, NULL);
    free(g_ranges);
    g_ranges = NULL;
    g_n_ranges = 0;
    g_fault = NULL;
}
