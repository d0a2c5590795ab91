/* cpu.c — owns the card's `cpu` section: identity (/proc/cpuinfo), topology
 * (/sys/devices/system/cpu), the allowed CPUs, frequencies and their policy
 * (cpufreq), caches, the instruction-set flags that matter for inference and
 * NUMA nodes. Hypervisor fields come from virt.c. */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/system_internal.h"

#define CPU_DIR "/sys/devices/system/cpu"

/* Flags worth knowing for inference kernels, by architecture (kernel names). */
static const char *const x86_flags[] = {
    "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
    "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16",
    "amx_int8", NULL};
static const char *const arm_flags[] = {
    "asimd", "asimdhp", "asimddp", "fphp", "i8mm", "bf16", "sve", "sve2", "svei8mm",
    "svebf16", "sme", NULL};

int rpx__sys_affinity(rpx__sys_cpuset *set, char *why, size_t whysize)
{
    char line[4096];
    int rc, n;
    memset(set, 0, sizeof *set);
    if (rpx__sys_live()) {
        cpu_set_t *mask = CPU_ALLOC(RPX__MAX_CPUS);
        size_t sz = CPU_ALLOC_SIZE(RPX__MAX_CPUS);
        int c;
        if (!mask) {
            snprintf(why, whysize, "sched_getaffinity: out of memory");
            return -1;
        }
        CPU_ZERO_S(sz, mask);
        if (sched_getaffinity(0, sz, mask) != 0) {
            snprintf(why, whysize, "sched_getaffinity: %s", strerror(errno));
            CPU_FREE(mask);
            return -1;
        }
        for (c = 0; c < RPX__MAX_CPUS; c++)
            if (CPU_ISSET_S((size_t)c, sz, mask)) rpx__sys_cpuset_add(set, c);
        CPU_FREE(mask);
        return rpx__sys_cpuset_count(set);
    }
    /* On a snapshot: the mask the gather script recorded (a CPU list). */
    if ((rc = rpx__sys_snapshot_line("affinity", line, sizeof line)) != 0) {
        rpx__sys_why(why, whysize, "/rpxprof-snapshot/affinity", rc);
        return -1;
    }
    if ((n = rpx__sys_cpuset_parse(line, set)) <= 0) {
        snprintf(why, whysize, "/rpxprof-snapshot/affinity: not a CPU list: '%.40s'", line);
        return -1;
    }
    return n;
}

/* ---- /proc/cpuinfo ------------------------------------------------------- */

/* The block of processor `cpu` (or the first block with a "processor" line
 * when there is none), malloc'ed; NULL when there is no such block. */
static char *cpuinfo_block(const char *text, int cpu)
{
    const char *p = text, *first = NULL, *first_end = NULL;
    while (p && *p) {
        const char *end = strstr(p, "\n\n");
        char *b, v[32];
        size_t len;
        if (!end) end = p + strlen(p);
        len = (size_t)(end - p);
        b = strndup(p, len);
        if (!b) return NULL;
        if (rpx__sys_kv(b, "processor", v, sizeof v)) {
            char *e;
            long n = strtol(v, &e, 10);
            if (!first) {
                first = p;
                first_end = end;
            }
            if (*v && !*e && n == cpu) return b;
        }
        free(b);
        p = *end ? end + 2 : end;
    }
    return first ? strndup(first, (size_t)(first_end - first)) : NULL;
}

/* Mean "cpu MHz" over the allowed CPUs' blocks; < 0 when none has one. */
static double cpuinfo_mhz(const char *text, const rpx__sys_cpuset *allowed)
{
    const char *p = text;
    double sum = 0;
    int n = 0;
    while (p && *p) {
        const char *end = strstr(p, "\n\n");
        char *b, v[64], m[64];
        if (!end) end = p + strlen(p);
        b = strndup(p, (size_t)(end - p));
        if (!b) break;
        if (rpx__sys_kv(b, "processor", v, sizeof v) && rpx__sys_kv(b, "cpu MHz", m, sizeof m) &&
            rpx__sys_cpuset_has(allowed, atoi(v))) {
            char *e;
            double mhz = strtod(m, &e);
            if (e != m && mhz > 0) {
                sum += mhz;
                n++;
            }
        }
        free(b);
        p = *end ? end + 2 : end;
    }
    return n ? sum / n : -1;
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    const char *p = list;
    while ((p = strstr(p, word)) != NULL) {
        if ((p == list || p[-1] == ' ' || p[-1] == '\t') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\t'))
            return 1;
        p += n;
    }
    return 0;
}

static json_t *int_or_null(json_t *cpu, const char *key, const char *block, const char *field,
                           int base)
{
    char v[64], *e;
    long long n;
    if (!block || !rpx__sys_kv(block, field, v, sizeof v)) {
        rpx__sys_null(cpu, key, "/proc/cpuinfo: no '%s' line", field);
        return NULL;
    }
    errno = 0;
    n = strtoll(v, &e, base);
    if (!*v || *e || errno) {
        rpx__sys_null(cpu, key, "/proc/cpuinfo: '%s' is not a number: '%.40s'", field, v);
        return NULL;
    }
    rpx__sys_put(cpu, key, json_integer(n));
    return json_object_get(cpu, key);
}

static void identity(json_t *cpu, const char *block, int is_arm, char *flags, size_t flagsize)
{
    char v[512];
    flags[0] = '\0';
    if (!block) {
        static const char *const keys[] = {"vendor", "model_name", "family", "model",
                                           "stepping", "microcode"};
        size_t i;
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
            rpx__sys_null(cpu, keys[i], "/proc/cpuinfo: no processor block");
        return;
    }
    if (is_arm) {
        char imp[32] = "", part[32] = "";
        unsigned long i = 0, pa = 0;
        int ok = rpx__sys_kv(block, "CPU implementer", imp, sizeof imp) &&
                 rpx__sys_kv(block, "CPU part", part, sizeof part);
        const char *iname = NULL, *pname = NULL;
        if (ok) {
            char *e1, *e2;
            i = strtoul(imp, &e1, 0);
            pa = strtoul(part, &e2, 0);
            ok = *imp && *part && !*e1 && !*e2;
        }
        if (ok) {
            iname = rpx__sys_arm_implementer((unsigned)i);
            pname = rpx__sys_arm_part((unsigned)i, (unsigned)pa);
        }
        rpx__sys_put(cpu, "implementer", ok ? json_sprintf("0x%02lx", i) : NULL);
        rpx__sys_put(cpu, "part", ok ? json_sprintf("0x%03lx", pa) : NULL);
        if (!ok) {
            rpx__sys_reason(cpu, "implementer", "/proc/cpuinfo: no valid 'CPU implementer'/'CPU part' lines");
            rpx__sys_reason(cpu, "part", "/proc/cpuinfo: no valid 'CPU implementer'/'CPU part' lines");
        }
        if (iname)
            rpx__sys_put(cpu, "vendor", json_string(iname));
        else
            rpx__sys_null(cpu, "vendor", ok ? "implementer 0x%02lx is not in the table (cpu_arm.c)"
                                        : "/proc/cpuinfo: no 'CPU implementer' line", i);
        if (rpx__sys_kv(block, "model name", v, sizeof v) && v[0] && !pname) {
            rpx__sys_put(cpu, "model_name", rpx__sys_jstr(v));
        } else if (iname && pname) {
            rpx__sys_put(cpu, "model_name", json_sprintf("%s %s", iname, pname));
        } else {
            rpx__sys_null(cpu, "model_name", ok ? "part 0x%03lx of implementer 0x%02lx is not in the "
                                              "table (cpu_arm.c) and /proc/cpuinfo has no model name"
                                            : "/proc/cpuinfo: no model name and no CPU part",
                      pa, i);
        }
        int_or_null(cpu, "variant", block, "CPU variant", 0);
        int_or_null(cpu, "revision", block, "CPU revision", 0);
        rpx__sys_kv(block, "Features", flags, flagsize);
        return;
    }
    if (rpx__sys_kv(block, "vendor_id", v, sizeof v) && v[0])
        rpx__sys_put(cpu, "vendor", rpx__sys_jstr(v));
    else
        rpx__sys_null(cpu, "vendor", "/proc/cpuinfo: no 'vendor_id' line");
    if (rpx__sys_kv(block, "model name", v, sizeof v) && v[0])
        rpx__sys_put(cpu, "model_name", rpx__sys_jstr(v));
    else
        rpx__sys_null(cpu, "model_name", "/proc/cpuinfo: no 'model name' line");
    int_or_null(cpu, "family", block, "cpu family", 10);
    int_or_null(cpu, "model", block, "model", 10);
    int_or_null(cpu, "stepping", block, "stepping", 10);
    if (rpx__sys_kv(block, "microcode", v, sizeof v) && v[0])
        rpx__sys_put(cpu, "microcode", rpx__sys_jstr(v));
    else
        rpx__sys_null(cpu, "microcode", "/proc/cpuinfo: no 'microcode' line");
    rpx__sys_kv(block, "flags", flags, flagsize);
}

static void isa(json_t *cpu, const char *flags, int is_arm, int is_x86)
{
    const char *const *f = is_arm ? arm_flags : is_x86 ? x86_flags : NULL;
    json_t *o;
    if (!f) {
        if (json_is_null(json_object_get(cpu, "architecture")))
            rpx__sys_null(cpu, "isa", "the architecture is unknown, so the flags cannot be named");
        else
            rpx__sys_null(cpu, "isa", "no flag list is kept for this architecture");
        return;
    }
    if (!flags[0]) {
        rpx__sys_null(cpu, "isa", "/proc/cpuinfo: no '%s' line", is_arm ? "Features" : "flags");
        return;
    }
    o = json_object();
    for (; *f; f++) json_object_set_new(o, *f, json_boolean(has_word(flags, *f)));
    rpx__sys_put(cpu, "isa", o);
}

/* ---- topology ------------------------------------------------------------ */

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static int distinct(long long *v, int n)
{
    int i, d = 0;
    qsort(v, (size_t)n, sizeof *v, cmp_ll);
    for (i = 0; i < n; i++)
        if (i == 0 || v[i] != v[i - 1]) d++;
    return d;
}

static void topology(json_t *cpu, const rpx__sys_cpuset *online, int n_online)
{
    long long *pkg = calloc((size_t)n_online + 1, sizeof *pkg);
    long long *core = calloc((size_t)n_online + 1, sizeof *core);
    int c, n = 0, bad = 0;
    char path[256], why[512] = "";
    for (c = 0; pkg && core && c < RPX__MAX_CPUS && n < n_online; c++) {
        long long p, k;
        int rc;
        if (!rpx__sys_cpuset_has(online, c)) continue;
        snprintf(path, sizeof path, CPU_DIR "/cpu%d/topology/physical_package_id", c);
        if ((rc = rpx__sys_ll(path, &p)) == 0) {
            snprintf(path, sizeof path, CPU_DIR "/cpu%d/topology/core_id", c);
            rc = rpx__sys_ll(path, &k);
        }
        if (rc != 0) {
            rpx__sys_why(why, sizeof why, path, rc);
            bad = 1;
            break;
        }
        pkg[n] = p;
        core[n] = (p << 32) ^ (k & 0xffffffffLL);
        n++;
    }
    if (!pkg || !core) {
        bad = 1;
        snprintf(why, sizeof why, "out of memory");
    }
    if (bad || n == 0) {
        if (!why[0]) snprintf(why, sizeof why, "no online CPU");
        rpx__sys_null(cpu, "sockets", "%s", why);
        rpx__sys_null(cpu, "cores", "%s", why);
        rpx__sys_null(cpu, "threads_per_core", "%s", why);
    } else {
        int cores = distinct(core, n);
        rpx__sys_put(cpu, "sockets", json_integer(distinct(pkg, n)));
        rpx__sys_put(cpu, "cores", json_integer(cores));
        rpx__sys_put(cpu, "threads_per_core", json_integer((n + cores - 1) / cores));
    }
    free(pkg);
    free(core);
}

static void smt(json_t *cpu)
{
    char v[64];
    long long a;
    int rc = rpx__sys_line(CPU_DIR "/smt/control", v, sizeof v);
    char why[512];
    if (rc == 0 && v[0])
        rpx__sys_put(cpu, "smt_control", rpx__sys_jstr(v));
    else
        rpx__sys_null(cpu, "smt_control", "%s", rpx__sys_why(why, sizeof why, CPU_DIR "/smt/control", rc ? rc : -ENODATA));
    if ((rc = rpx__sys_ll(CPU_DIR "/smt/active", &a)) == 0)
        rpx__sys_put(cpu, "smt_active", json_boolean(a != 0));
    else
        rpx__sys_null(cpu, "smt_active", "%s", rpx__sys_why(why, sizeof why, CPU_DIR "/smt/active", rc));
}

/* ---- frequency and its policy ------------------------------------------- */

static void mhz_from(json_t *cpu, const char *key, int first, const char *file)
{
    char path[256], why[512];
    long long khz;
    int rc;
    snprintf(path, sizeof path, CPU_DIR "/cpu%d/cpufreq/%s", first, file);
    if ((rc = rpx__sys_ll(path, &khz)) == 0 && khz > 0)
        rpx__sys_put(cpu, key, json_real((double)khz / 1000.0));
    else
        rpx__sys_null(cpu, key, "%s", rpx__sys_why(why, sizeof why, path, rc ? rc : -EINVAL));
}

/* "@ 2.90GHz" at the end of an Intel model name. */
static double mhz_in_name(const json_t *name)
{
    const char *s = json_string_value(name), *at;
    double g;
    char *e;
    if (!s || !(at = strrchr(s, '@'))) return -1;
    g = strtod(at + 1, &e);
    if (e == at + 1 || g <= 0 || strncmp(e, "GHz", 3) != 0) return -1;
    return g * 1000.0;
}

static void frequency(json_t *cpu, const rpx__sys_cpuset *allowed, int first, const char *cpuinfo,
                      json_t *warnings)
{
    char path[256], why[512], v[64], governors[256] = "";
    int c, n_cur = 0, perf_only = 1, n_gov = 0, rc;
    double cur = 0, name_mhz;
    long long x;

    snprintf(path, sizeof path, CPU_DIR "/cpu%d/cpufreq/base_frequency", first);
    name_mhz = mhz_in_name(json_object_get(cpu, "model_name"));
    if (rpx__sys_ll(path, &x) == 0 && x > 0) {
        rpx__sys_put(cpu, "base_mhz", json_real((double)x / 1000.0));
    } else if (name_mhz > 0) {
        rpx__sys_put(cpu, "base_mhz", json_real(name_mhz));
        rpx__sys_reason(cpu, "base_mhz", "%s unreadable: taken from the model name", path);
    } else {
        rpx__sys_null(cpu, "base_mhz", "%s: not exposed, and the model name states no frequency", path);
    }
    mhz_from(cpu, "max_mhz", first, "cpuinfo_max_freq");
    mhz_from(cpu, "min_mhz", first, "cpuinfo_min_freq");

    for (c = 0; c < RPX__MAX_CPUS; c++) {
        if (!rpx__sys_cpuset_has(allowed, c)) continue;
        snprintf(path, sizeof path, CPU_DIR "/cpu%d/cpufreq/scaling_cur_freq", c);
        if (rpx__sys_ll(path, &x) == 0 && x > 0) {
            cur += (double)x / 1000.0;
            n_cur++;
        }
        snprintf(path, sizeof path, CPU_DIR "/cpu%d/cpufreq/scaling_governor", c);
        if (rpx__sys_line(path, v, sizeof v) == 0 && v[0] && !has_word(governors, v) &&
            strchr(v, ' ') == NULL) {
            size_t len = strlen(governors);
            snprintf(governors + len, sizeof governors - len, "%s%s", len ? " " : "", v);
            n_gov++;
            if (strcmp(v, "performance") != 0) perf_only = 0;
        }
    }
    if (n_cur) {
        rpx__sys_put(cpu, "current_mhz", json_real(cur / n_cur));
        rpx__sys_put(cpu, "current_mhz_source", json_string("cpufreq scaling_cur_freq (mean of the allowed CPUs)"));
    } else if (cpuinfo && (cur = cpuinfo_mhz(cpuinfo, allowed)) > 0) {
        rpx__sys_put(cpu, "current_mhz", json_real(cur));
        rpx__sys_put(cpu, "current_mhz_source", json_string("/proc/cpuinfo cpu MHz (mean of the allowed CPUs)"));
    } else {
        rpx__sys_null(cpu, "current_mhz", "no cpufreq scaling_cur_freq and no 'cpu MHz' in /proc/cpuinfo");
        rpx__sys_put(cpu, "current_mhz_source", json_null());
    }

    snprintf(path, sizeof path, CPU_DIR "/cpu%d/cpufreq/scaling_driver", first);
    if ((rc = rpx__sys_line(path, v, sizeof v)) == 0 && v[0])
        rpx__sys_put(cpu, "scaling_driver", rpx__sys_jstr(v));
    else
        rpx__sys_null(cpu, "scaling_driver", "%s", rpx__sys_why(why, sizeof why, path, rc ? rc : -ENODATA));
    if (n_gov) {
        rpx__sys_put(cpu, "governor", rpx__sys_jstr(governors));
        if (!perf_only)
            rpx__sys_warn(warnings, "The CPU frequency governor is '%s', not 'performance': clock speed "
                      "follows the load, which adds noise to timings.", governors);
    } else {
        snprintf(path, sizeof path, CPU_DIR "/cpu%d/cpufreq/scaling_governor", first);
        rc = rpx__sys_line(path, v, sizeof v);
        rpx__sys_null(cpu, "governor", "%s", rpx__sys_why(why, sizeof why, path, rc ? rc : -ENODATA));
    }

    /* Boost (turbo): intel_pstate's no_turbo, the global cpufreq boost
     * switch (acpi-cpufreq, amd-pstate), or a per-policy boost file. */
    if (rpx__sys_ll(CPU_DIR "/intel_pstate/no_turbo", &x) == 0) {
        rpx__sys_put(cpu, "boost", json_boolean(x == 0));
        rpx__sys_put(cpu, "boost_source", json_string(CPU_DIR "/intel_pstate/no_turbo"));
    } else if (rpx__sys_ll(CPU_DIR "/cpufreq/boost", &x) == 0) {
        rpx__sys_put(cpu, "boost", json_boolean(x != 0));
        rpx__sys_put(cpu, "boost_source", json_string(CPU_DIR "/cpufreq/boost"));
    } else if (snprintf(path, sizeof path, CPU_DIR "/cpu%d/cpufreq/boost", first) > 0 &&
               rpx__sys_ll(path, &x) == 0) {
        rpx__sys_put(cpu, "boost", json_boolean(x != 0));
        rpx__sys_put(cpu, "boost_source", json_string(path));
    } else if (rpx__sys_exists(CPU_DIR "/intel_pstate/no_turbo") || rpx__sys_exists(CPU_DIR "/cpufreq/boost")) {
        rpx__sys_null(cpu, "boost", "%s", rpx__sys_why(why, sizeof why,
                      rpx__sys_exists(CPU_DIR "/intel_pstate/no_turbo") ? CPU_DIR "/intel_pstate/no_turbo"
                                                                        : CPU_DIR "/cpufreq/boost", -EINVAL));
        rpx__sys_put(cpu, "boost_source", json_null());
    } else {
        rpx__sys_null(cpu, "boost", "the kernel exposes no boost control (" CPU_DIR "/intel_pstate/no_turbo, "
                  CPU_DIR "/cpufreq/boost): usual without a cpufreq driver, as in most VMs");
        rpx__sys_put(cpu, "boost_source", json_null());
    }
    if (json_is_true(json_object_get(cpu, "boost")))
        rpx__sys_warn(warnings, "CPU boost (turbo) is on: clock speed depends on temperature and on "
                  "how many cores are busy, so timings vary between runs.");
}

/* ---- caches and NUMA ------------------------------------------------------ */

static void caches(json_t *cpu, int first)
{
    json_t *arr = json_array();
    char path[256], v[256], why[512];
    int k, rc;
    for (k = 0; k < 16; k++) {
        json_t *e;
        long long x;
        rpx__sys_cpuset shared;
        char base[128];
        snprintf(base, sizeof base, CPU_DIR "/cpu%d/cache/index%d", first, k);
        snprintf(path, sizeof path, "%s/level", base);
        if ((rc = rpx__sys_ll(path, &x)) != 0) {
            if (k == 0) {
                json_decref(arr);
                rpx__sys_null(cpu, "caches", "%s", rpx__sys_why(why, sizeof why, path, rc));
                return;
            }
            if (rc == -ENOENT) break;
        }
        e = json_object();
        if (rc == 0)
            rpx__sys_put(e, "level", json_integer(x));
        else
            rpx__sys_null(e, "level", "%s", rpx__sys_why(why, sizeof why, path, rc));
        snprintf(path, sizeof path, "%s/type", base);
        if ((rc = rpx__sys_line(path, v, sizeof v)) == 0 && v[0])
            rpx__sys_put(e, "type", rpx__sys_jstr(v));
        else
            rpx__sys_null(e, "type", "%s", rpx__sys_why(why, sizeof why, path, rc ? rc : -ENODATA));
        snprintf(path, sizeof path, "%s/size", base);
        if ((rc = rpx__sys_line(path, v, sizeof v)) == 0) {
            char *end;
            long long kb = strtoll(v, &end, 10);
            if (end != v && kb >= 0 && (*end == 'K' || *end == '\0') && (!*end || !end[1]))
                rpx__sys_put(e, "size_kb", json_integer(kb));
            else if (end != v && kb >= 0 && *end == 'M' && !end[1])
                rpx__sys_put(e, "size_kb", json_integer(kb * 1024));
            else
                rpx__sys_null(e, "size_kb", "%s: not a size: '%.40s'", path, v);
        } else {
            rpx__sys_null(e, "size_kb", "%s", rpx__sys_why(why, sizeof why, path, rc));
        }
        snprintf(path, sizeof path, "%s/coherency_line_size", base);
        if ((rc = rpx__sys_ll(path, &x)) == 0)
            rpx__sys_put(e, "line_bytes", json_integer(x));
        else
            rpx__sys_null(e, "line_bytes", "%s", rpx__sys_why(why, sizeof why, path, rc));
        snprintf(path, sizeof path, "%s/ways_of_associativity", base);
        if ((rc = rpx__sys_ll(path, &x)) == 0)
            rpx__sys_put(e, "ways", json_integer(x));
        else
            rpx__sys_null(e, "ways", "%s", rpx__sys_why(why, sizeof why, path, rc));
        snprintf(path, sizeof path, "%s/shared_cpu_list", base);
        if ((rc = rpx__sys_line(path, v, sizeof v)) == 0 && rpx__sys_cpuset_parse(v, &shared) > 0) {
            rpx__sys_put(e, "shared_cpu_list", rpx__sys_jstr(v));
            rpx__sys_put(e, "shared_by_cpus", json_integer(rpx__sys_cpuset_count(&shared)));
        } else {
            const char *r = rc ? rpx__sys_why(why, sizeof why, path, rc) : "not a CPU list";
            rpx__sys_null(e, "shared_cpu_list", "%s", r);
            rpx__sys_null(e, "shared_by_cpus", "%s", r);
        }
        rpx__sys_finish(e, 0);
        json_array_append_new(arr, e);
    }
    rpx__sys_put(cpu, "caches", arr);
}

static void numa(json_t *cpu)
{
    char v[4096], path[256], why[512];
    rpx__sys_cpuset nodes;
    json_t *arr;
    int rc, n, node;
    char *meminfo;
    if ((rc = rpx__sys_line("/sys/devices/system/node/online", v, sizeof v)) != 0 ||
        (n = rpx__sys_cpuset_parse(v, &nodes)) <= 0) {
        const char *r = rc ? rpx__sys_why(why, sizeof why, "/sys/devices/system/node/online", rc)
                           : "/sys/devices/system/node/online: not a node list";
        rpx__sys_null(cpu, "numa_node_count", "%s", r);
        rpx__sys_null(cpu, "numa_nodes", "%s", r);
        return;
    }
    rpx__sys_put(cpu, "numa_node_count", json_integer(n));
    arr = json_array();
    for (node = 0; node < RPX__MAX_CPUS; node++) {
        json_t *e;
        long len;
        char key[64];
        if (!rpx__sys_cpuset_has(&nodes, node)) continue;
        e = json_object();
        rpx__sys_put(e, "node", json_integer(node));
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
        if ((rc = rpx__sys_line(path, v, sizeof v)) == 0)
            rpx__sys_put(e, "cpus", rpx__sys_jstr(v));
        else
            rpx__sys_null(e, "cpus", "%s", rpx__sys_why(why, sizeof why, path, rc));
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", node);
        snprintf(key, sizeof key, "Node %d MemTotal", node);
        meminfo = rpx__sys_slurp(path, &len);
        if (meminfo && rpx__sys_kv(meminfo, key, v, sizeof v) && atoll(v) > 0)
            rpx__sys_put(e, "memory_mb", json_real((double)atoll(v) / 1024.0));
        else if (meminfo)
            rpx__sys_null(e, "memory_mb", "%s: no '%s' line", path, key);
        else
            rpx__sys_null(e, "memory_mb", "%s", rpx__sys_why(why, sizeof why, path, (int)len));
        free(meminfo);
        rpx__sys_finish(e, 0);
        json_array_append_new(arr, e);
    }
    rpx__sys_put(cpu, "numa_nodes", arr);
}

/* ---- the section ---------------------------------------------------------- */

json_t *rpx__sys_cpu_section(json_t *warnings)
{
    json_t *cpu = json_object();
    rpx__sys_uname u;
    rpx__sys_cpuset allowed, online;
    char why[512], line[4096], flags[8192], list[4096];
    char *cpuinfo, *block = NULL;
    long len;
    int n_allowed, n_online = -1, first, is_x86 = 0, is_arm = 0, rc;
    if (!cpu) return NULL;

    cpuinfo = rpx__sys_slurp("/proc/cpuinfo", &len);
    if (rpx__sys_uname_get(&u, why, sizeof why) == 0) {
        rpx__sys_put(cpu, "architecture", rpx__sys_jstr(u.machine));
        is_x86 = strcmp(u.machine, "x86_64") == 0 || (u.machine[0] == 'i' && strstr(u.machine, "86"));
        is_arm = strncmp(u.machine, "aarch64", 7) == 0 || strncmp(u.machine, "arm", 3) == 0;
    } else {
        rpx__sys_null(cpu, "architecture", "%s", why);
    }
    if (cpuinfo && !is_x86 && !is_arm) { /* no uname: tell from cpuinfo itself */
        is_x86 = strstr(cpuinfo, "vendor_id") != NULL;
        is_arm = strstr(cpuinfo, "CPU implementer") != NULL;
    }

    n_allowed = rpx__sys_affinity(&allowed, why, sizeof why);
    if ((rc = rpx__sys_line(CPU_DIR "/online", line, sizeof line)) == 0)
        n_online = rpx__sys_cpuset_parse(line, &online);
    first = n_allowed > 0 ? rpx__sys_cpuset_first(&allowed) : n_online > 0 ? rpx__sys_cpuset_first(&online) : 0;

    if (cpuinfo) block = cpuinfo_block(cpuinfo, first);
    identity(cpu, block, is_arm, flags, sizeof flags);
    if (!cpuinfo) {
        char w[512];
        rpx__sys_why(w, sizeof w, "/proc/cpuinfo", (int)len);
        json_object_set_new(json_object_get(cpu, "unavailable"), "vendor", json_string(w));
        json_object_set_new(json_object_get(cpu, "unavailable"), "model_name", json_string(w));
    }

    /* counts */
    {
        rpx__sys_cpuset present;
        int n_present = -1, prc = rpx__sys_line(CPU_DIR "/present", list, sizeof list);
        if (prc == 0) n_present = rpx__sys_cpuset_parse(list, &present);
        if (n_present > 0)
            rpx__sys_put(cpu, "threads", json_integer(n_present));
        else
            rpx__sys_null(cpu, "threads", "%s", prc ? rpx__sys_why(why, sizeof why, CPU_DIR "/present", prc)
                                               : CPU_DIR "/present: not a CPU list");
    }
    if (n_online > 0) {
        rpx__sys_cpuset_format(&online, list, sizeof list);
        rpx__sys_put(cpu, "online_cpus", json_string(list));
        rpx__sys_put(cpu, "online_count", json_integer(n_online));
        topology(cpu, &online, n_online);
    } else {
        const char *r = rc ? rpx__sys_why(why, sizeof why, CPU_DIR "/online", rc) : CPU_DIR "/online: not a CPU list";
        rpx__sys_null(cpu, "online_cpus", "%s", r);
        rpx__sys_null(cpu, "online_count", "%s", r);
        rpx__sys_null(cpu, "sockets", "%s", r);
        rpx__sys_null(cpu, "cores", "%s", r);
        rpx__sys_null(cpu, "threads_per_core", "%s", r);
    }
    smt(cpu);
    if (n_allowed > 0) {
        rpx__sys_cpuset_format(&allowed, list, sizeof list);
        rpx__sys_put(cpu, "allowed_cpus", json_string(list));
        rpx__sys_put(cpu, "allowed_count", json_integer(n_allowed));
    } else {
        n_allowed = rpx__sys_affinity(&allowed, why, sizeof why); /* for the reason text */
        rpx__sys_null(cpu, "allowed_cpus", "%s", why);
        rpx__sys_null(cpu, "allowed_count", "%s", why);
        if (n_online > 0) allowed = online; /* frequencies: look at the online CPUs */
    }

    frequency(cpu, &allowed, first, cpuinfo, warnings);
    caches(cpu, first);
    isa(cpu, flags, is_arm, is_x86);
    numa(cpu);
    rpx__sys_virt_fill(cpu, is_x86 ? (block ? has_word(flags, "hypervisor") : -1) : -1, is_x86, warnings);
    free(block);
    free(cpuinfo);
    rpx__sys_finish(cpu, 1);
    return cpu;
}
