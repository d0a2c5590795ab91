/* limits.c — owns the card's `limits` section: what cgroups (v2, or v1)
 * allow this process — the CPU quota as a number of cores, the cpuset, the
 * memory limit — and the CPUs it can effectively use: a container given
 * 2 cores on a 64-CPU host says 2.
 *
 * The process's cgroup comes from /proc/self/cgroup; limits are read at that
 * cgroup and at every ancestor up to the mount root (/sys/fs/cgroup, or
 * /sys/fs/cgroup/<controller> on v1), and the tightest one wins. When the
 * cgroup's folder is not visible (a container without a cgroup namespace sees
 * its own cgroup at the mount root) the mount root alone is read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/system_internal.h"

#define CG "/sys/fs/cgroup"
#define UNLIMITED_BYTES (1LL << 62) /* v1 writes PAGE_COUNTER_MAX pages, ~2^63 */

typedef struct limit {
    int state;          /* 0 no limit found, 1 limited, -1 unreadable/garbage */
    double value;       /* cores, or bytes */
    char source[1400];  /* "file: text" of the tightest level */
    char why[512];      /* reason when state is -1 */
} limit;

/* The path of `controller` in /proc/self/cgroup ("" for the v2 line). */
static int cgroup_path(const char *text, const char *controller, char *out, size_t size)
{
    const char *p = text;
    while (p && *p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[2048], *c1, *c2;
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        c1 = strchr(line, ':');
        c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c1 && c2) {
            *c2 = '\0';
            if (controller[0] == '\0' ? c1[1] == '\0' && strncmp(line, "0", 1) == 0 : 0) {
                snprintf(out, size, "%s", c2 + 1);
                return 1;
            }
            if (controller[0]) {
                char *tok, *save = NULL;
                for (tok = strtok_r(c1 + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
                    if (strcmp(tok, controller) == 0) {
                        snprintf(out, size, "%s", c2 + 1);
                        return 1;
                    }
            }
        }
        p = eol ? eol + 1 : NULL;
    }
    return 0;
}

/* Leaf folder: mount + path when it exists there, else the mount root. */
static void leaf_dir(const char *mount, const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s%s", mount, strcmp(path, "/") == 0 ? "" : path);
    if (!rpx__sys_exists(out)) snprintf(out, size, "%s", mount);
}

/* Parse one level's file into (state, value). */
typedef int (*level_fn)(const char *dir, double *value, char *text, size_t size, char *why,
                        size_t whysize);

static int v2_cpu(const char *dir, double *v, char *text, size_t size, char *why, size_t ws)
{
    char path[1024], q[64], per[64], extra[8];
    int rc;
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    if ((rc = rpx__sys_line(path, text, size)) != 0) return rc == -ENOENT ? 0 : (rpx__sys_why(why, ws, path, rc), -1);
    if (sscanf(text, "%63s %63s %7s", q, per, extra) != 2 || atof(per) <= 0) {
        snprintf(why, ws, "%s: not 'QUOTA PERIOD': '%.40s'", path, text);
        return -1;
    }
    if (strcmp(q, "max") == 0) return 0;
    if (atof(q) <= 0) {
        snprintf(why, ws, "%s: not 'QUOTA PERIOD': '%.40s'", path, text);
        return -1;
    }
    *v = atof(q) / atof(per);
    return 1;
}

static int v1_cpu(const char *dir, double *v, char *text, size_t size, char *why, size_t ws)
{
    char path[1024];
    long long quota, period;
    int rc;
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    if ((rc = rpx__sys_ll(path, &quota)) != 0) return rc == -ENOENT ? 0 : (rpx__sys_why(why, ws, path, rc), -1);
    if (quota < 0) return 0;
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    if ((rc = rpx__sys_ll(path, &period)) != 0 || period <= 0) {
        rpx__sys_why(why, ws, path, rc ? rc : -EINVAL);
        return -1;
    }
    snprintf(text, size, "cfs_quota_us %lld, cfs_period_us %lld", quota, period);
    *v = (double)quota / (double)period;
    return 1;
}

static int mem_file(const char *dir, const char *file, double *v, char *text, size_t size,
                    char *why, size_t ws)
{
    char path[1024], *end;
    long long b;
    int rc;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if ((rc = rpx__sys_line(path, text, size)) != 0) return rc == -ENOENT ? 0 : (rpx__sys_why(why, ws, path, rc), -1);
    if (strcmp(text, "max") == 0) return 0;
    errno = 0;
    b = strtoll(text, &end, 10);
    if (!text[0] || *end || errno || b < 0) {
        snprintf(why, ws, "%s: not a size: '%.40s'", path, text);
        return -1;
    }
    if (b >= UNLIMITED_BYTES) return 0;
    *v = (double)b;
    return 1;
}

static int v2_mem(const char *dir, double *v, char *text, size_t size, char *why, size_t ws)
{
    return mem_file(dir, "memory.max", v, text, size, why, ws);
}

static int v1_mem(const char *dir, double *v, char *text, size_t size, char *why, size_t ws)
{
    return mem_file(dir, "memory.limit_in_bytes", v, text, size, why, ws);
}

/* Walk from the leaf folder up to the mount root; the tightest limit wins. */
static void walk(const char *mount, const char *path, level_fn fn, const char *file, limit *out)
{
    char dir[1024];
    memset(out, 0, sizeof *out);
    leaf_dir(mount, path, dir, sizeof dir);
    for (;;) {
        double v = 0;
        char text[256] = "", why[512] = "";
        int st = fn(dir, &v, text, sizeof text, why, sizeof why);
        char *slash;
        if (st < 0) {
            out->state = -1;
            snprintf(out->why, sizeof out->why, "%s", why);
            return;
        }
        if (st == 1 && (out->state == 0 || v < out->value)) {
            out->state = 1;
            out->value = v;
            snprintf(out->source, sizeof out->source, "%s/%s: %s", dir, file, text);
        }
        if (strcmp(dir, mount) == 0) break;
        slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < strlen(mount)) break;
        *slash = '\0';
    }
}

static void put_limit(json_t *lim, const char *key, const char *srckey, const limit *l,
                      double scale, const char *none)
{
    if (l->state == 1) {
        rpx__sys_put(lim, key, json_real(l->value / scale));
        rpx__sys_put(lim, srckey, rpx__sys_jstr(l->source));
    } else {
        if (l->state == 0)
            rpx__sys_null(lim, key, "%s", none);
        else
            rpx__sys_null(lim, key, "%s", l->why);
        rpx__sys_put(lim, srckey, json_null());
    }
}

/* cpuset.cpus.effective (v2) or cpuset.effective_cpus (v1), nearest level. */
static void cpuset(json_t *lim, const char *mount, const char *path, int v2)
{
    char dir[1024], file[1100], v[4096], why[512] = "";
    rpx__sys_cpuset set;
    leaf_dir(mount, path, dir, sizeof dir);
    for (;;) {
        int rc;
        char *slash;
        snprintf(file, sizeof file, "%s/%s", dir, v2 ? "cpuset.cpus.effective" : "cpuset.effective_cpus");
        rc = rpx__sys_line(file, v, sizeof v);
        if (rc == 0) {
            if (rpx__sys_cpuset_parse(v, &set) > 0) {
                rpx__sys_put(lim, "cpuset_cpus", rpx__sys_jstr(v));
                rpx__sys_put(lim, "cpuset_count", json_integer(rpx__sys_cpuset_count(&set)));
            } else {
                rpx__sys_null(lim, "cpuset_cpus", "%s: not a CPU list: '%.40s'", file, v);
                rpx__sys_null(lim, "cpuset_count", "%s: not a CPU list", file);
            }
            return;
        }
        if (!why[0]) rpx__sys_why(why, sizeof why, file, rc);
        if (strcmp(dir, mount) == 0) break;
        slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < strlen(mount)) break;
        *slash = '\0';
    }
    rpx__sys_null(lim, "cpuset_cpus", "%s", why);
    rpx__sys_null(lim, "cpuset_count", "%s", why);
}

json_t *rpx__sys_limits_section(const json_t *cpu, json_t *warnings)
{
    json_t *lim = json_object(), *allowed_j = json_object_get(cpu, "allowed_count");
    char *self, why[512], cpu_mount[64], mem_mount[64], set_mount[64];
    char cpu_path[1024] = "/", mem_path[1024] = "/", set_path[1024] = "/";
    long len;
    int v2;
    limit q, m;
    if (!lim) return NULL;

    v2 = rpx__sys_exists(CG "/cgroup.controllers");
    if (!v2 && !rpx__sys_exists(CG "/cpu") && !rpx__sys_exists(CG "/cpu,cpuacct") &&
        !rpx__sys_exists(CG "/memory")) {
        static const char *const keys[] = {"cgroup_version", "cgroup_path", "cpu_quota_cores",
                                           "cpuset_cpus", "cpuset_count", "memory_limit_mb"};
        size_t i;
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
            rpx__sys_null(lim, keys[i], CG " has neither cgroup.controllers (v2) nor cpu or memory "
                      "controllers (v1): cgroups are not mounted");
        rpx__sys_put(lim, "cpu_quota_source", json_null());
        rpx__sys_put(lim, "memory_limit_source", json_null());
        q.state = m.state = 0;
    } else {
        self = rpx__sys_slurp("/proc/self/cgroup", &len);
        if (!self) rpx__sys_why(why, sizeof why, "/proc/self/cgroup", (int)len);
        if (v2) {
            snprintf(cpu_mount, sizeof cpu_mount, CG);
            snprintf(mem_mount, sizeof mem_mount, CG);
            snprintf(set_mount, sizeof set_mount, CG);
            if (self) cgroup_path(self, "", cpu_path, sizeof cpu_path);
            snprintf(mem_path, sizeof mem_path, "%s", cpu_path);
            snprintf(set_path, sizeof set_path, "%s", cpu_path);
        } else {
            snprintf(cpu_mount, sizeof cpu_mount, rpx__sys_exists(CG "/cpu") ? CG "/cpu" : CG "/cpu,cpuacct");
            snprintf(mem_mount, sizeof mem_mount, CG "/memory");
            snprintf(set_mount, sizeof set_mount, CG "/cpuset");
            if (self) {
                cgroup_path(self, "cpu", cpu_path, sizeof cpu_path);
                cgroup_path(self, "memory", mem_path, sizeof mem_path);
                cgroup_path(self, "cpuset", set_path, sizeof set_path);
            }
        }
        rpx__sys_put(lim, "cgroup_version", json_integer(v2 ? 2 : 1));
        if (self)
            rpx__sys_put(lim, "cgroup_path", rpx__sys_jstr(cpu_path));
        else
            rpx__sys_null(lim, "cgroup_path", "%s; limits read at the mount root", why);
        free(self);

        walk(cpu_mount, cpu_path, v2 ? v2_cpu : v1_cpu, v2 ? "cpu.max" : "cpu.cfs_quota_us", &q);
        put_limit(lim, "cpu_quota_cores", "cpu_quota_source", &q, 1.0,
                  "no CPU quota in this cgroup or its ancestors");
        cpuset(lim, set_mount, set_path, v2);
        walk(mem_mount, mem_path, v2 ? v2_mem : v1_mem, v2 ? "memory.max" : "memory.limit_in_bytes", &m);
        put_limit(lim, "memory_limit_mb", "memory_limit_source", &m, 1048576.0,
                  "no memory limit in this cgroup or its ancestors");
    }

    /* What the process can use at once: its affinity, capped by the quota. */
    if (!json_is_integer(allowed_j)) {
        rpx__sys_null(lim, "effective_cpus", "the allowed CPUs are unknown: see cpu.unavailable.allowed_count");
    } else if (q.state < 0) {
        rpx__sys_null(lim, "effective_cpus", "the CPU quota is unknown: %s", q.why);
    } else {
        double eff = (double)json_integer_value(allowed_j);
        if (q.state == 1 && q.value < eff) {
            rpx__sys_warn(warnings, "The cgroup CPU quota (%g cores) is below the %g CPUs this process "
                      "may run on: thread pools sized by the CPU count will be throttled.",
                      q.value, eff);
            eff = q.value;
        }
        rpx__sys_put(lim, "effective_cpus", json_real(eff));
    }
    rpx__sys_finish(lim, 1);
    return lim;
}
