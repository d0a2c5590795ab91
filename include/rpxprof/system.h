/* rpxprof/system.h — the system card: what hardware and software a
 * measurement ran on, read from the machine itself. Every value that cannot
 * be known is null, and its reason is kept in the `unavailable` object beside
 * it ({field: reason}). docs/system.md lists every field and its source.
 *
 * Everything read from /proc, /sys and /etc goes through rpx_sys_read,
 * relative to the root named by RPX_SYSROOT (default "/"), so tests run on
 * captured snapshots of real machines. What cannot come from those files
 * (the affinity mask, uname, the C library version, cpuid) is read live when
 * RPX_SYSROOT is unset and from ROOT/rpxprof-snapshot/ when it is set
 * (scripts/gather-snapshot.sh writes those files).
 *
 * Lifecycle in a run: rpx_system_conditions (start) → rpx_system_card →
 * timed loop → rpx_system_conditions (end) → rpx_system_card_set_conditions.
 * Library code never prints: warnings are sentences in the card's
 * "warnings" array, for the CLI to show. */
#ifndef RPXPROF_SYSTEM_H
#define RPXPROF_SYSTEM_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/model.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NVML, loaded at run time (internal: src/device/nvml.h) */
typedef struct rpx_nvml rpx_nvml;

#define RPX_SYSTEM_CARD_SCHEMA "rpxprof.system_card/1"

/* Read a small text file (≤ size-1 bytes kept, NUL-terminated) from the
 * system root. Returns the bytes read, or -errno. */
RPX_API long rpx_sys_read(const char *path, char *buf, size_t size);
/* The system root in force ("" for the real root). */
RPX_API const char *rpx_sys_root(void);

typedef struct rpx_card_options {
    const char *device;           /* "cpu" | "cuda"; NULL is "cpu" */
    const char *precision;
    const char *batch_size;       /* as recorded by --meta batch_size, or NULL */
    const char *input_resolution; /* "HxW", or NULL */
    /* Fields below may be left zero. */
    rpx_nvml *nvml;               /* borrowed NVML handle; NULL: the card opens
                                     NVML itself and closes it again */
    int skip_gpus;                /* 1: do not look for GPUs (gpus is null, with why) */
    const char *python_version;   /* set by targets that run Python, else NULL */
    const char *pytorch_version;
    const char *pytorch_reason;   /* why pytorch_version is NULL, when the caller knows */
} rpx_card_options;

/* Build the system card object (keys in docs/system.md; `conditions` start and
 * end are null until rpx_system_card_set_conditions). `opt` may be NULL (not
 * a run: precision, batch size and resolution are null). Returns NULL only
 * when out of memory (err says so). Takes a few milliseconds without GPUs;
 * the card records its own cost in `collect_ms`. */
RPX_API json_t *rpx_system_card(const rpx_card_options *opt, rpx_error *err);

/* The machine's conditions now: load average, runnable and blocked tasks,
 * CPU pressure and steal counters, and — when `nvml` is not NULL — the
 * visible GPUs' other processes and clock-throttle reasons
 * (rpx_nvml_conditions). Its own "warnings" array holds GPU sentences.
 * NULL only when out of memory. */
RPX_API json_t *rpx_system_conditions(rpx_nvml *nvml_or_null);

/* Store the conditions taken at the start and the end of a run in
 * card.conditions (either may be NULL: null with a reason). The card takes
 * its own references; the caller keeps (and frees) its own. Appends warnings
 * to card.warnings: a load average above the CPUs this process may use, CPU
 * time stolen by the hypervisor during the run, and the GPU sentences of
 * each side. */
RPX_API void rpx_system_card_set_conditions(json_t *card, json_t *start, json_t *end);

/* Each allowed CPU's speed, relative to the fastest (docs/system.md#cpu_probe):
 * full (1): a compute loop and a memory-streaming triad, 5 repetitions
 * (`rpxprof system --probe`, about 0.1-0.2 s per CPU); cheap (0): the compute
 * loop only, 5 repetitions (a run's card, about 2 ms per CPU). A helper
 * thread pins itself to each CPU in turn; the caller's affinity is not
 * touched. Returns the `cpu_probe` object, or NULL with err set (out of
 * memory, RPX_SYSROOT set: a snapshot is not this machine). */
RPX_API json_t *rpx_system_cpu_probe(int full, rpx_error *err);

/* card.cpu_probe = probe (a reference is taken), or null with `why`; the
 * probe's warning joins card.warnings. */
RPX_API void rpx_system_card_set_cpu_probe(json_t *card, json_t *probe_or_null, const char *why);

/* The processes on the machine at one moment (utime+stime of each
 * /proc/PID/stat, read under the system root). Between a run's start and end
 * they give the CPU share other processes took (conditions.other_processes). */
typedef struct rpx_proc_snapshot rpx_proc_snapshot;
/* NULL when /proc cannot be listed (errno-style reason in why). */
RPX_API rpx_proc_snapshot *rpx_system_procs_take(char *why, size_t whysize);
RPX_API void rpx_system_procs_free(rpx_proc_snapshot *s);
/* The CPU time processes other than `self_pid` and its descendants took
 * between the two snapshots, as conditions.other_processes
 * (docs/system.md#other-processes). NULL only when out of memory. */
RPX_API json_t *rpx_system_other_processes(const rpx_proc_snapshot *start,
                                           const rpx_proc_snapshot *end, int self_pid);
/* card.conditions.other_processes = other (a reference is taken), or null
 * with `why`; a warning when they took more than 10 % of the allowed CPUs. */
RPX_API void rpx_system_card_set_other_processes(json_t *card, json_t *other_or_null,
                                                 const char *why);

#ifdef __cplusplus
}
#endif
#endif
