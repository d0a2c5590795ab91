/* system_internal.h — what the rooms of src/system share; not a public header.
 *
 * Rooms: sysfs.c (reading files under the system root, CPU lists, JSON helpers),
 * cpu.c + cpu_arm.c (the `cpu` section), virt.c (hypervisors and containers),
 * mem.c (`memory`), limits.c (`limits`: cgroups), os.c (`operating_system`, uname),
 * build_info.c (`build`), env.c (`environment`), conditions.c (`conditions` and
 * their warnings), card.c (assembles the card: the reference's 13 keys, `gpus`).
 *
 * Snapshot rule: whatever cannot come from /proc, /sys or /etc (the affinity
 * mask, uname, the libc version, cpuid) is read live when RPX_SYSROOT is unset,
 * and from ROOT/rpxprof-snapshot/NAME when it is set, so a snapshot of another
 * machine gives the same card everywhere (docs/system.md). */
#ifndef RPX_SYSTEM_INTERNAL_H
#define RPX_SYSTEM_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/system.h"

/* ---- files under the system root (sysfs.c) ---------------------------- */

/* 1 when RPX_SYSROOT is unset (the live machine), 0 on a snapshot. */
int rpx__sys_live(void);
/* The whole file, malloc'ed and NUL-terminated (*len = bytes), or NULL with
 * *len = -errno. Files are capped at 16 MiB. */
char *rpx__sys_slurp(const char *path, long *len);
/* The first line, trimmed of surrounding white space. 0, or -errno. A file
 * that exists but is empty gives "" and 0. */
int rpx__sys_line(const char *path, char *buf, size_t size);
/* The file as one integer (decimal, surrounding white space allowed).
 * 0, -errno, or -EINVAL when the text is not an integer. */
int rpx__sys_ll(const char *path, long long *out);
/* 1 when the path exists under the root (any type), else 0. */
int rpx__sys_exists(const char *path);
/* "PATH: strerror(-rc)", or "PATH: not an integer" for -EINVAL, into out. */
const char *rpx__sys_why(char *out, size_t size, const char *path, int rc);
/* A snapshot file: ROOT/rpxprof-snapshot/NAME, first line trimmed. */
int rpx__sys_snapshot_line(const char *name, char *buf, size_t size);

/* Value of "key<spaces>:<value>" on its own line of a /proc-style text,
 * trimmed. 1 when found, else 0. */
int rpx__sys_kv(const char *text, const char *key, char *out, size_t size);

/* ---- CPU lists ("0-3,8,10-11") ----------------------------------------- */

#define RPX__MAX_CPUS 8192
typedef struct rpx__sys_cpuset {
    unsigned char bits[RPX__MAX_CPUS / 8];
} rpx__sys_cpuset;
/* Parse a kernel CPU list. Number of CPUs in it, or -1 when malformed. */
int rpx__sys_cpuset_parse(const char *list, rpx__sys_cpuset *set);
int rpx__sys_cpuset_has(const rpx__sys_cpuset *set, int cpu);
void rpx__sys_cpuset_add(rpx__sys_cpuset *set, int cpu);
int rpx__sys_cpuset_count(const rpx__sys_cpuset *set);
/* The first CPU in the set, or -1. */
int rpx__sys_cpuset_first(const rpx__sys_cpuset *set);
/* Canonical list text ("0-3,8"); "" for an empty set. */
void rpx__sys_cpuset_format(const rpx__sys_cpuset *set, char *out, size_t size);

/* ---- JSON helpers ------------------------------------------------------- */

/* A JSON string of text read from a file: invalid UTF-8 and control bytes
 * become '?' so a garbage file never breaks the card. */
json_t *rpx__sys_jstr(const char *s);
/* obj[key] = value (stolen; NULL → null). */
void rpx__sys_put(json_t *obj, const char *key, json_t *value);
/* obj[key] = null and obj.unavailable[key] = reason (printf-style). */
void rpx__sys_null(json_t *obj, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The reason text of a printf-style format, stored without the null value. */
void rpx__sys_reason(json_t *obj, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Move obj.unavailable to the end; create it ({}) when `always`. */
void rpx__sys_finish(json_t *obj, int always);
/* Append a sentence to a warnings array unless it is already there. */
void rpx__sys_warn(json_t *warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- rooms -------------------------------------------------------------- */

typedef struct rpx__sys_uname {
    char sysname[65], release[129], version[257], machine[65];
} rpx__sys_uname;
/* uname(2) live, ROOT/rpxprof-snapshot/uname on a snapshot (os.c).
 * 0, or negative with a reason in why. */
int rpx__sys_uname_get(rpx__sys_uname *u, char *why, size_t whysize);

/* The process's allowed CPUs: sched_getaffinity live, the snapshot's
 * `affinity` file otherwise (cpu.c). Count, or -1 with a reason. */
int rpx__sys_affinity(rpx__sys_cpuset *set, char *why, size_t whysize);

json_t *rpx__sys_cpu_section(json_t *warnings);          /* cpu.c */
json_t *rpx__sys_memory_section(json_t *warnings);       /* mem.c */
json_t *rpx__sys_limits_section(const json_t *cpu, json_t *warnings); /* limits.c */
json_t *rpx__sys_os_section(json_t *warnings);           /* os.c */
json_t *rpx__sys_build_section(json_t *warnings);        /* build_info.c */
json_t *rpx__sys_env_section(json_t *warnings);          /* env.c */
/* env.c: the allowlist of recorded variables, NULL-terminated. */
const char *const *rpx__sys_env_allowlist(void);

/* virt.c: fill cpu.virtualized / hypervisor / hypervisor_source /
 * platform_vendor / platform_product from cpuid (live or snapshot), the
 * cpuinfo `hypervisor` flag, /sys/hypervisor/type and DMI. */
void rpx__sys_virt_fill(json_t *cpu, int has_hypervisor_flag, int is_x86, json_t *warnings);
/* virt.c: fill operating_system.container / container_runtime / container_evidence. */
void rpx__sys_container_fill(json_t *os);

/* ---- the CPU probe (probe.c) and other processes (procs.c) -------------- */

/* CPUs differ when one's best repetition is more than this much slower than
 * the fastest CPU's worst one (docs/system.md#cpu_probe). */
#define RPX__PROBE_THRESHOLD 0.03
/* The memory loop's: bandwidth is shared by the CPUs, so other processes'
 * traffic makes its repetitions noisier than the compute loop's. */
#define RPX__PROBE_THRESHOLD_MEMORY 0.10
typedef struct rpx__probe_verdict {
    size_t fastest, slowest;  /* by median */
    double ratio;             /* slowest median / fastest median (>= 1) */
    double max_noise;         /* the largest (max - min) / median of one CPU's repetitions */
    double *median, *noise;   /* [cpu] */
    int *slow;                /* [cpu]: 1 when slower beyond the noise and the threshold */
    int n_slow;
} rpx__probe_verdict;
/* t[cpu * n_reps + rep]: time per unit of work (lower is faster), > 0.
 * 0, or -1 (bad input, out of memory); free with rpx__probe_verdict_free. */
int rpx__probe_judge(const double *t, size_t n_cpus, size_t n_reps, double threshold,
                     rpx__probe_verdict *v);
void rpx__probe_verdict_free(rpx__probe_verdict *v);

/* cpu_arm.c: names of Arm implementers and parts (util-linux lscpu-arm.c). */
const char *rpx__sys_arm_implementer(unsigned implementer);
const char *rpx__sys_arm_part(unsigned implementer, unsigned part);

#endif
