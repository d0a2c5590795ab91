/* procs.c — owns the CPU time other processes took during a run
 * (conditions.other_processes): every /proc/PID/stat's utime+stime (and
 * cutime+cstime: children they reaped) at the start and the end of the run,
 * read under the system root, and the difference summed over the processes
 * that are neither rpxprof's own process nor its descendants.
 *
 * Counted for each process P that is not ours (docs/system.md#other-processes):
 *   alive at both ends (same pid and start time): the growth of its own time
 *     and of its reaped children's time;
 *   started during the run (absent at the start): all of its time;
 *   a process alive at the start and gone at the end was reaped by its parent,
 *     and its whole life landed in the reaped-children time of its nearest
 *     ancestor alive at both ends (through the ancestors between, reaped too):
 *     its time at the start is taken back off there, so only the part spent
 *     during the run counts.
 * What is missed: a process that started and ended within the run and whose
 * parent is not counted (reaped by init, or by a process that also ended).
 *
 * Privacy: reports are published. Command lines are never read. `top` names
 * (pid, comm) only processes of this user; other users' processes are
 * counted and summed in other_users, never named. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "system/system_internal.h"

#define TOP_N 5
#define WARN_SHARE 0.10

typedef struct proc_entry {
    int pid, ppid;
    unsigned long long start;  /* starttime, clock ticks after boot */
    unsigned long long own;    /* utime + stime, ticks */
    unsigned long long kids;   /* cutime + cstime, ticks */
    char comm[32];
} proc_entry;

struct rpx_proc_snapshot {
    proc_entry *e;
    size_t n;
    double uptime_s;           /* /proc/uptime at the moment */
    int have_uptime;
    int allowed_cpus;          /* -1: unknown */
    int have_cpu;              /* the allowed CPUs' lines of /proc/stat were read */
    unsigned long long cpu_busy, cpu_total; /* their ticks: busy (user nice system irq
                                               softirq), all (with idle iowait steal) */
};

/* The allowed CPUs' "cpuN" lines of /proc/stat, summed. */
static void allowed_cpu_ticks(rpx_proc_snapshot *s, const rpx__sys_cpuset *set)
{
    long len;
    char *text = rpx__sys_slurp("/proc/stat", &len);
    const char *p = text;
    int lines = 0;
    while (p && *p) {
        int cpu, k;
        unsigned long long v[8];
        if (strncmp(p, "cpu", 3) == 0 && p[3] >= '0' && p[3] <= '9' &&
            sscanf(p + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7]) == 9 &&
            rpx__sys_cpuset_has(set, cpu)) {
            s->cpu_busy += v[0] + v[1] + v[2] + v[5] + v[6];
            for (k = 0; k < 8; k++) s->cpu_total += v[k];
            lines++;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    s->have_cpu = lines > 0 && lines == rpx__sys_cpuset_count(set);
    free(text);
}

/* "pid (comm) S ppid ... utime stime cutime cstime ... starttime": comm may
 * hold spaces and parentheses, so the fields count from the last ')'. */
static int parse_stat(const char *text, proc_entry *e)
{
    const char *open = strchr(text, '('), *close = strrchr(text, ')');
    unsigned long long f[22];
    const char *p;
    int i;
    size_t len;
    if (!open || !close || close < open) return -1;
    e->pid = atoi(text);
    len = (size_t)(close - open - 1);
    if (len >= sizeof e->comm) len = sizeof e->comm - 1;
    memcpy(e->comm, open + 1, len);
    e->comm[len] = '\0';
    p = close + 1;
    while (*p == ' ') p++;
    if (!*p) return -1;
    p++; /* state */
    /* fields 4 (ppid) to 22 (starttime): 19 numbers */
    for (i = 0; i < 19; i++) {
        char *end;
        while (*p == ' ') p++;
        f[i] = strtoull(p, &end, 10);
        if (end == p) {
            /* negative fields (priority, nice) */
            if (*p == '-') {
                f[i] = 0;
                p++;
                (void)strtoull(p, &end, 10);
            }
            if (end == p) return -1;
        }
        p = end;
    }
    e->ppid = (int)f[0];
    e->own = f[10] + f[11];  /* fields 14, 15 */
    e->kids = f[12] + f[13]; /* fields 16, 17 */
    e->start = f[18];        /* field 22 */
    return 0;
}

static int cmp_pid(const void *a, const void *b)
{
    const proc_entry *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

rpx_proc_snapshot *rpx_system_procs_take(char *why, size_t whysize)
{
    char full[PATH_MAX], text[256];
    rpx_proc_snapshot *s;
    DIR *d;
    struct dirent *de;
    size_t cap = 256;
    rpx__sys_cpuset set;
    snprintf(full, sizeof full, "%s/proc", rpx_sys_root());
    if (!(d = opendir(full))) {
        snprintf(why, whysize, "%s: %s", full, strerror(errno));
        return NULL;
    }
    s = calloc(1, sizeof *s);
    if (s) s->e = malloc(cap * sizeof *s->e);
    if (!s || !s->e) {
        closedir(d);
        if (s) free(s);
        snprintf(why, whysize, "out of memory");
        return NULL;
    }
    while ((de = readdir(d)) != NULL) {
        char path[300], buf[1024];
        const char *c = de->d_name;
        proc_entry e;
        while (*c >= '0' && *c <= '9') c++;
        if (*c || c == de->d_name) continue;
        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
        if (rpx_sys_read(path, buf, sizeof buf) <= 0) continue; /* gone meanwhile */
        memset(&e, 0, sizeof e);
        if (parse_stat(buf, &e) != 0) continue;
        if (s->n == cap) {
            proc_entry *g = realloc(s->e, 2 * cap * sizeof *g);
            if (!g) break;
            s->e = g;
            cap *= 2;
        }
        s->e[s->n++] = e;
    }
    closedir(d);
    if (s->n) qsort(s->e, s->n, sizeof *s->e, cmp_pid);
    if (rpx_sys_read("/proc/uptime", text, sizeof text) > 0 && sscanf(text, "%lf", &s->uptime_s) == 1)
        s->have_uptime = 1;
    s->allowed_cpus = rpx__sys_affinity(&set, text, sizeof text);
    if (s->allowed_cpus > 0) allowed_cpu_ticks(s, &set);
    return s;
}

void rpx_system_procs_free(rpx_proc_snapshot *s)
{
    if (!s) return;
    free(s->e);
    free(s);
}

static const proc_entry *find(const rpx_proc_snapshot *s, int pid)
{
    proc_entry key;
    key.pid = pid;
    return bsearch(&key, s->e, s->n, sizeof *s->e, cmp_pid);
}

/* 1 when pid is self or descends from it in snapshot s */
static int ours(const rpx_proc_snapshot *s, int pid, int self)
{
    int depth;
    for (depth = 0; depth < 4096 && pid > 0; depth++) {
        const proc_entry *e;
        if (pid == self) return 1;
        if (!(e = find(s, pid)) || e->ppid == pid) return 0;
        pid = e->ppid;
    }
    return 0;
}

/* The same process at both ends: same pid and start time. */
static const proc_entry *same(const rpx_proc_snapshot *s, const proc_entry *e)
{
    const proc_entry *o = find(s, e->pid);
    return o && o->start == e->start ? o : NULL;
}

static long long this_uid(void)
{
    char v[64];
    if (rpx__sys_live()) return (long long)getuid();
    if (rpx__sys_snapshot_line("uid", v, sizeof v) == 0 && v[0]) return atoll(v);
    return -1;
}

/* The real uid of a process (/proc/PID/status "Uid:"), or -1. */
static long long uid_of(int pid)
{
    char path[64], text[4096], v[128];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    if (rpx_sys_read(path, text, sizeof text) <= 0 || !rpx__sys_kv(text, "Uid", v, sizeof v)) return -1;
    return atoll(v);
}

typedef struct contrib {
    int pid;
    double ticks;
    const char *comm;
} contrib;

static int cmp_contrib(const void *a, const void *b)
{
    const contrib *x = a, *y = b;
    return (x->ticks < y->ticks) - (x->ticks > y->ticks);
}

json_t *rpx_system_other_processes(const rpx_proc_snapshot *a, const rpx_proc_snapshot *b,
                                   int self)
{
    json_t *o = json_object(), *top, *others;
    contrib *c = NULL;
    double ticks = 0, hz = (double)sysconf(_SC_CLK_TCK), window;
    long long me = this_uid(), other_users = 0;
    double other_users_ticks = 0, own_ticks = 0;
    size_t i, n = 0, counted = 0, shown = 0;
    if (!o) return NULL;
    if (!(hz > 0)) hz = 100;
    if (b->n && !(c = calloc(b->n, sizeof *c))) {
        json_decref(o);
        return NULL;
    }
    for (i = 0; i < b->n; i++) {
        const proc_entry *e = &b->e[i], *before;
        double t;
        before = same(a, e);
        t = before ? (double)(e->own - (e->own >= before->own ? before->own : e->own)) +
                         (double)(e->kids - (e->kids >= before->kids ? before->kids : e->kids))
                   : (double)(e->own + e->kids);
        if (ours(b, e->pid, self)) {
            own_ticks += t;
            continue;
        }
        counted++;
        ticks += t;
        if (t > 0) c[n++] = (contrib){e->pid, t, e->comm};
    }
    /* processes alive at the start and reaped during the run: their whole
     * life landed in the reaped-children time of the nearest ancestor alive
     * at both ends (through every ancestor between, reaped too) */
    for (i = 0; i < a->n; i++) {
        const proc_entry *e = &a->e[i], *parent_a, *parent_b = NULL;
        int depth;
        if (same(b, e)) continue;
        parent_a = find(a, e->ppid);
        for (depth = 0; parent_a && depth < 4096; depth++) {
            if ((parent_b = same(b, parent_a)) != NULL) break;
            parent_a = parent_a->ppid != parent_a->pid ? find(a, parent_a->ppid) : NULL;
        }
        if (parent_b && ours(b, parent_b->pid, self)) {
            own_ticks -= (double)(e->own + e->kids);
        } else if (parent_b) {
            double back = (double)(e->own + e->kids), k;
            size_t j;
            ticks -= back;
            for (j = 0; j < n; j++)
                if (c[j].pid == parent_b->pid) {
                    k = c[j].ticks - back;
                    c[j].ticks = k > 0 ? k : 0;
                }
        }
    }
    if (ticks < 0) ticks = 0;
    if (n) qsort(c, n, sizeof *c, cmp_contrib); /* c is NULL when nothing was counted */
    top = json_array();
    for (i = 0; i < n; i++) {
        long long uid = uid_of(c[i].pid);
        if (c[i].ticks <= 0) continue;
        if (me >= 0 && uid == me) {
            json_t *e;
            if (shown >= TOP_N) continue;
            e = json_object();
            rpx__sys_put(e, "pid", json_integer(c[i].pid));
            rpx__sys_put(e, "comm", rpx__sys_jstr(c[i].comm));
            rpx__sys_put(e, "cpu_s", json_real(c[i].ticks / hz));
            json_array_append_new(top, e);
            shown++;
        } else {
            other_users++;
            other_users_ticks += c[i].ticks;
        }
        if (shown >= TOP_N && i >= 64) break; /* reading status files costs: enough */
    }
    window = a->have_uptime && b->have_uptime ? b->uptime_s - a->uptime_s : -1;
    rpx__sys_put(o, "cpu_s", json_real(ticks / hz));
    if (window > 0) {
        rpx__sys_put(o, "window_s", json_real(window));
        rpx__sys_put(o, "cpus", json_real(ticks / hz / window));
    } else {
        rpx__sys_null(o, "window_s", "/proc/uptime could not be read at the start and the end");
        rpx__sys_null(o, "cpus", "the window is unknown");
    }
    if (window > 0 && b->allowed_cpus > 0) {
        rpx__sys_put(o, "cpu_share", json_real(ticks / hz / window / b->allowed_cpus));
        rpx__sys_put(o, "allowed_cpus", json_integer(b->allowed_cpus));
    } else {
        rpx__sys_null(o, "cpu_share", "%s", window > 0 ? "the CPUs this process may use are unknown"
                                                        : "the window is unknown");
        rpx__sys_null(o, "allowed_cpus", "sched_getaffinity (or the snapshot's affinity) failed");
    }
    /* on the allowed CPUs: their busy time less rpxprof's own */
    if (own_ticks < 0) own_ticks = 0;
    if (a->have_cpu && b->have_cpu && b->cpu_total > a->cpu_total && b->cpu_busy >= a->cpu_busy) {
        double busy = (double)(b->cpu_busy - a->cpu_busy), all = (double)(b->cpu_total - a->cpu_total);
        double share = (busy - own_ticks) / all;
        rpx__sys_put(o, "allowed_cpus_other_share", json_real(share < 0 ? 0 : share > 1 ? 1 : share));
    } else {
        rpx__sys_null(o, "allowed_cpus_other_share", "/proc/stat's lines of the allowed CPUs could "
                      "not be read at the start and the end");
    }
    rpx__sys_put(o, "rpxprof_cpu_s", json_real(own_ticks / hz));
    rpx__sys_put(o, "counted", json_integer((json_int_t)counted));
    rpx__sys_put(o, "top", top);
    others = json_object();
    rpx__sys_put(others, "processes", json_integer(other_users));
    rpx__sys_put(others, "cpu_s", json_real(other_users_ticks / hz));
    rpx__sys_put(o, "other_users", others);
    rpx__sys_put(o, "method", json_string(
        "utime+stime (+ reaped children's cutime+cstime) of every /proc/PID/stat other than "
        "rpxprof's own process and its descendants, at the start and the end of the run; "
        "cpu_share is of the allowed CPUs' time over the window; top names this user's "
        "processes only (comm, never command lines); other users' are counted, not named"));
    rpx__sys_finish(o, 0);
    free(c);
    return o;
}

void rpx_system_card_set_other_processes(json_t *card, json_t *other, const char *why)
{
    json_t *cond = json_object_get(card, "conditions"), *warnings = json_object_get(card, "warnings");
    const json_t *share;
    if (!json_is_object(cond)) return;
    if (other) {
        json_object_set(cond, "other_processes", other);
    } else {
        rpx__sys_null(cond, "other_processes", "%s", why ? why : "not measured");
    }
    rpx__sys_finish(cond, 1);
    share = json_object_get(other, "allowed_cpus_other_share");
    if (!json_is_number(share)) share = json_object_get(other, "cpu_share");
    if (json_is_number(share) && json_number_value(share) > WARN_SHARE && json_is_array(warnings)) {
        const json_t *t0 = json_array_get(json_object_get(other, "top"), 0);
        char largest[128] = "";
        if (t0)
            snprintf(largest, sizeof largest, "; the largest of this user's: %s (pid %lld, %.2f s)",
                     json_string_value(json_object_get(t0, "comm")),
                     (long long)json_integer_value(json_object_get(t0, "pid")),
                     json_number_value(json_object_get(t0, "cpu_s")));
        rpx__sys_warn(warnings,
                      "Other processes took %.0f%% of the time of the %lld CPUs this process may "
                      "use during the run (%.2f CPU-seconds on the whole machine over %.2f s%s): "
                      "they competed with the model.",
                      100 * json_number_value(share),
                      (long long)json_integer_value(json_object_get(other, "allowed_cpus")),
                      json_number_value(json_object_get(other, "cpu_s")),
                      json_number_value(json_object_get(other, "window_s")), largest);
    }
}
