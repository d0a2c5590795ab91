/* rpxprof/roofline.h — the hardware-parametric layer: what the best possible
 * implementation of a model could do on a given GPU (or the host CPU).
 *
 *  - a const table of GPU specs with a source for every entry (gpus.c), that
 *    users extend or override with JSON files (spec_file.c);
 *  - the roofline bound: compute_ms = FLOPs / peak, memory_ms = bytes /
 *    bandwidth, latency_ms = max (bound.c). Always FLOPs against FLOP/s,
 *    never MACs;
 *  - the host CPU as a target: peak estimated from /proc and sysfs, or
 *    measured with a short FMA kernel and a STREAM-triad-like kernel
 *    (cpu_peak.c);
 *  - the real-time budget of a measured latency;
 *  - the roofline picture as SVG (report/svg.c).
 *
 * Units: peaks in TFLOP/s (TOP/s for int8), dense (no 2:4 sparsity);
 * bandwidth in GB/s (1e9 bytes/s); memory_gb as the vendor prints it; times in
 * ms. Unknown numbers are NaN (-1 for integers) and become null in JSON.
 *
 * Lifecycle of the spec table: rpx_gpu_table_create → rpx_gpu_table_load_file
 * / rpx_gpu_table_load_env (optional) → find / match / iterate →
 * rpx_gpu_table_free. Library code never prints or exits. */
#ifndef RPXPROF_ROOFLINE_H
#define RPXPROF_ROOFLINE_H

#include <jansson.h>

#include <stddef.h>

#include "rpxprof/cost.h"
#include "rpxprof/model.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- precisions ---------------------------------------------------------- */

typedef enum rpx_precision {
    RPX_PREC_FP64 = 0,
    RPX_PREC_FP32,
    RPX_PREC_TF32,
    RPX_PREC_FP16,
    RPX_PREC_BF16,
    RPX_PREC_FP8,
    RPX_PREC_INT8,
    RPX_PREC_COUNT
} rpx_precision;

/* Which execution units a peak belongs to. */
enum { RPX_UNIT_TENSOR = 0, RPX_UNIT_VECTOR = 1, RPX_UNIT_COUNT = 2 };

/* "fp64" "fp32" "tf32" "fp16" "bf16" "fp8" "int8"; NULL if out of range. */
RPX_API const char *rpx_precision_name(rpx_precision p);
/* Accepts the names above and the aliases float64/double, float32/float,
 * float16/half, bfloat16, float8/fp8_e4m3/fp8_e5m2, i8 (case-insensitive).
 * Returns 0, or RPX_EINVAL with a message listing the accepted names. */
RPX_API int rpx_precision_parse(const char *s, rpx_precision *out, rpx_error *err);
/* "tensor" or "vector". */
RPX_API const char *rpx_unit_name(int unit);

/* ---- the GPU spec table -------------------------------------------------- */

typedef struct rpx_gpu_spec {
    const char *key;                  /* "h100-sxm" */
    const char *name;                 /* "NVIDIA H100 SXM" */
    const char *vendor;               /* "NVIDIA", "AMD" */
    const char *architecture;         /* "Hopper" */
    double memory_gb;                 /* as printed by the vendor */
    double memory_bandwidth_gbps;     /* GB/s (1e9 bytes/s) */
    /* Dense peaks (TFLOP/s; TOP/s for int8) by [precision][unit]. NaN: the
     * GPU lacks it, or no cited document publishes it (see notes). Vector
     * means the non-tensor units (CUDA cores / AMD vector ALUs); tensor means
     * tensor cores / AMD matrix cores. */
    double peak_tflops[RPX_PREC_COUNT][RPX_UNIT_COUNT];
    int sm_count;                     /* SMs (NVIDIA) or CUs (AMD), -1 unknown */
    double boost_clock_mhz;           /* NaN unknown */
    double l2_mb;                     /* NaN unknown */
    double tdp_w;                     /* NaN unknown */
    const char *source;               /* document titles and dates; never NULL */
    const char *notes;                /* derivations, missing figures; may be NULL */
    /* How detected device names (NVML, CUDA, ROCm) map to this entry:
     * alternatives separated by '|', each a set of space-separated tokens that
     * must all appear in the tokenised name, '!' marking a token that must
     * not. "h100 hbm3 !nvl !pcie|h100 sxm". NULL: only exact name matches. */
    const char *match;
} rpx_gpu_spec;

/* The built-in table (const data, see src/roofline/gpus.c). */
RPX_API size_t rpx_gpu_builtin_count(void);
RPX_API const rpx_gpu_spec *rpx_gpu_builtin_at(size_t index);

typedef struct rpx_gpu_table rpx_gpu_table;

/* A table holding the built-in entries. RPX_ENOMEM only. */
RPX_API int rpx_gpu_table_create(rpx_gpu_table **out);
/* Add or override (same key: the user's entry replaces the built-in one as a
 * whole) entries from a JSON file {"gpus": [{...}, ...]}. On error nothing of
 * the file is kept and the message names the file, the entry and the field. */
RPX_API int rpx_gpu_table_load_file(rpx_gpu_table *t, const char *path, rpx_error *err);
/* The same from an in-memory JSON object; `origin` names it in messages and
 * in the entries' default source. */
RPX_API int rpx_gpu_table_load_json(rpx_gpu_table *t, const json_t *root, const char *origin,
                            rpx_error *err);
/* Load every file named in $RPX_GPU_SPECS (':'-separated); 0 when unset. */
RPX_API int rpx_gpu_table_load_env(rpx_gpu_table *t, rpx_error *err);
RPX_API size_t rpx_gpu_table_count(const rpx_gpu_table *t);
RPX_API const rpx_gpu_spec *rpx_gpu_table_at(const rpx_gpu_table *t, size_t index);
/* By key (case-insensitive); else by name as users write it ("A100-80GB",
 * "rtx 4090"): an exact case-insensitive name, else the one entry whose name or
 * key equals or contains the text with case, spaces and punctuation ignored.
 * NULL when none or several match (rpx_gpu_table_candidates lists them). */
RPX_API const rpx_gpu_spec *rpx_gpu_table_find(const rpx_gpu_table *t, const char *key);
/* The entries a name could mean, as "key (name), key (name)" into buf when
 * there are several; returns their count. */
RPX_API size_t rpx_gpu_table_candidates(const rpx_gpu_table *t, const char *what, char *buf, size_t len);
/* The entry for a detected device name ("NVIDIA H100 80GB HBM3" → h100-sxm),
 * or NULL. User entries are tried first; an exact (case-insensitive) name
 * match wins, then the most specific `match` pattern. */
RPX_API const rpx_gpu_spec *rpx_gpu_table_match_name(const rpx_gpu_table *t, const char *device_name);
RPX_API void rpx_gpu_table_free(rpx_gpu_table *t);
/* $RPX_GPU_SPECS (rpx_gpu_table_load_env), then each of `files` in order
 * (rpx_gpu_table_load_file): what `gpus --gpu-spec` and `roofline --gpu-spec`
 * load. 0, or the first error (err names the file). */
RPX_API int rpx_gpu_table_load_all(rpx_gpu_table *t, const char *const *files, size_t n,
                                   rpx_error *err);
/* " did you mean 'KEY'?" for a misspelt GPU key (with_host: host-cpu is one
 * too), listing up to four keys the text begins, else the nearest key; "" when
 * none is near. Written into buf, which is returned. */
RPX_API const char *rpx_gpu_table_suggest(const rpx_gpu_table *t, const char *key, int with_host,
                                          char *buf, size_t size);

/* Does `device_name` satisfy the pattern? Returns the number of required
 * tokens of the best matching alternative (its specificity), 0 if none. */
RPX_API int rpx_gpu_pattern_match(const char *pattern, const char *device_name);

/* One entry as JSON (the form of schemas/gpus.json; null for unknowns). */
RPX_API json_t *rpx_gpu_spec_json(const rpx_gpu_spec *g);

/* ---- peak selection ------------------------------------------------------ */

typedef struct rpx_peak {
    double tflops;                    /* NaN when none applies */
    rpx_precision precision;          /* the column used (tf32 for --tf32 fp32) */
    int unit;                         /* RPX_UNIT_TENSOR or RPX_UNIT_VECTOR */
    char label[96];                   /* "fp16 tensor core, dense" */
    char reason[384];                 /* why tflops is NaN, or a fallback note; "" */
} rpx_peak;

/* The peak a node runs at. Dense linear algebra (conv, gemm, matmul,
 * attention) uses the tensor peak of the precision, other nodes the vector
 * peak where the table has it (else the tensor peak). fp32 dense ops use the
 * fp32 vector peak unless `tf32` (then the TF32 tensor peak) — except where
 * the table lists an fp32 matrix peak (AMD matrix cores run fp32 natively).
 * precision tf32 is fp32 data with `tf32` set. Returns 0, or RPX_ENOTFOUND
 * with out->tflops NaN and out->reason set ("a100-sxm-80gb has no fp8 peak:
 * ..."). */
RPX_API int rpx_gpu_peak(const rpx_gpu_spec *g, rpx_precision precision, int dense, int tf32,
                 rpx_peak *out);

/* ---- the bound ----------------------------------------------------------- */

typedef struct rpx_bound {
    double flops, bytes;              /* inputs (NaN unknown) */
    double peak_tflops, bandwidth_gbps;
    double compute_ms;                /* flops / peak */
    double memory_ms;                 /* bytes / bandwidth */
    double latency_ms;                /* max of the known parts; NaN if none */
    const char *bottleneck;           /* "compute" | "memory" | NULL (a part unknown) */
    double arithmetic_intensity;      /* flops / bytes (FLOP/byte) */
    double ridge_point;               /* peak / bandwidth (FLOP/byte) */
} rpx_bound;

/* The roofline bound of one kernel or model. NaN inputs make the parts that
 * depend on them NaN. A tie is compute-bound (as the reference). Returns 0, or
 * RPX_EINVAL for negative numbers or non-positive peak/bandwidth. */
RPX_API int rpx_roofline_bound(double flops, double bytes, double peak_tflops, double bandwidth_gbps,
                       rpx_bound *out, rpx_error *err);

/* Unfused bound: the sum over nodes of max(node flops / its peak, node bytes
 * read + written / bandwidth). Nodes with supported == 0 or NaN numbers are
 * counted in *unknown and left out (the sum then covers part of the graph). */
typedef struct rpx_unfused_bound {
    double latency_ms;                /* NaN when no node was costed */
    double compute_ms, memory_ms;     /* sums of the per-node parts */
    double flops, bytes;              /* totals over the costed nodes */
    size_t nodes, nodes_unknown;
    size_t nodes_compute_bound, nodes_memory_bound;
} rpx_unfused_bound;

RPX_API int rpx_roofline_unfused(const rpx_cost_node *nodes, size_t n, const rpx_peak *dense_peak,
                         const rpx_peak *other_peak, double bandwidth_gbps,
                         rpx_unfused_bound *out, rpx_error *err);

/* Everything a model's roofline needs, as plain numbers. */
typedef struct rpx_roofline_input {
    double flops;                     /* all FLOPs, NaN unknown */
    double bytes;                     /* traffic of the ideal bound (traffic_bytes_ideal) */
    const rpx_cost_node *nodes;       /* optional: per-node costs for the unfused bound */
    size_t n_nodes;
    rpx_precision precision;
    int tf32;                         /* fp32 dense ops on TF32 tensor cores */
    double measured_p50_ms;           /* NaN when nothing was measured */
} rpx_roofline_input;

RPX_API void rpx_roofline_input_init(rpx_roofline_input *in); /* NaNs, fp32, no nodes */

/* The roofline object of one target (schemas/roofline.json "bounds" items):
 * gpu, precision, the peaks used, bandwidth, the ideal bound, the unfused bound
 * (null without nodes), the achieved fraction (bound / measured p50) when a
 * measured latency exists. A missing peak is not an error: the bound is null
 * and "reason" says why. NULL only out of memory. */
RPX_API json_t *rpx_roofline_json(const rpx_gpu_spec *gpu, const rpx_roofline_input *in);
/* {KEY: rpx_roofline_json(...), ...} for several targets (the report's
 * `roofline` object); a JSON null when in->flops is unknown (no bound on any
 * target). NULL only out of memory. */
RPX_API json_t *rpx_roofline_json_multi(const rpx_gpu_spec *const *gpus, size_t n,
                                const rpx_roofline_input *in);

/* Fill `in` from a cost object (`rpxprof cost --json [--per-op]`), an
 * `efficiency` object, or a run report (efficiency + latency.p50_ms, and the
 * per-op nodes under "cost" when present). Nodes are allocated into *nodes
 * (free with rpx_roofline_nodes_free); their strings point into `root`,
 * which must outlive them. Returns 0, or RPX_EFORMAT naming `origin`. */
RPX_API int rpx_roofline_input_from_json(const json_t *root, const char *origin,
                                 rpx_roofline_input *in, rpx_cost_node **nodes,
                                 rpx_error *err);
RPX_API void rpx_roofline_nodes_free(rpx_cost_node *nodes);

/* ---- the real-time budget ------------------------------------------------ */

/* β = p50 / (1000 / f) for each rate f (NULL/0: 5, 10, 30 Hz); real-time when
 * β ≤ 1; throughput (units/s from p50); with frames_per_unit > 0 (clips), the
 * per-frame latency and frames/s. NULL only out of memory. */
RPX_API json_t *rpx_realtime_budget_json(double p50_ms, const double *hz, size_t n_hz,
                                 long frames_per_unit);

/* ---- the host CPU as a target -------------------------------------------- */

typedef struct rpx_cpu_peak {
    char model[160];                  /* model name, "" unknown */
    char vendor[32];                  /* "GenuineIntel", "AuthenticAMD", "ARM", "" */
    char isa[24];                     /* "avx512f" "avx2+fma" "avx" "sse2" "asimd" "scalar" */
    int cores;                        /* physical cores, -1 unknown */
    int logical_cpus;                 /* -1 unknown */
    double max_mhz;                   /* NaN unknown */
    char max_mhz_source[64];          /* "cpufreq cpuinfo_max_freq" | "cpuinfo cpu MHz" | ... */
    int fp32_flops_per_cycle;         /* per core */
    int fp64_flops_per_cycle;
    double fp32_gflops, fp64_gflops;  /* estimates, NaN unknown */
    char formula[256];                /* the arithmetic, for the report */
    /* issue 18: a bound's peak must not be below what the machine reaches */
    int is_bound;                     /* 1: max boost clock (cpufreq) or a cached measurement
                                       * of this machine; 0: an estimate that is not a bound */
    char bound_note[256];             /* why it is or is not a bound */
    double cached_fp32_gflops, cached_fp64_gflops; /* the cached measurement, NaN none */
    /* issue 26: the cached measurement is used whole and labelled as measured */
    double cached_triad_gbps;         /* its STREAM-triad bandwidth, NaN none */
    int cached_threads;               /* threads it ran on, -1 unknown */
    char cached_at[32];               /* when ("2026-12-04T05:00:00Z"), "" undated */
    char cache_file[256];             /* the cache it came from, "" none */
    int peak_is_measured;             /* 1: fp32_gflops is the cached measurement (above the
                                       * estimate of `formula`); 0: the estimate */
} rpx_cpu_peak;

/* Estimate from /proc/cpuinfo and /sys/devices/system/cpu/cpu* /cpufreq
 * through rpx_sys_read (so RPX_SYSROOT snapshots work):
 * peak = cores × max clock × FLOPs per cycle per core of the vector ISA
 * (docs/roofline.md). Returns 0 (unknown parts NaN), or RPX_EIO when
 * /proc/cpuinfo cannot be read. */
RPX_API int rpx_cpu_peak_estimate(rpx_cpu_peak *out, rpx_error *err);
/* The same from the system card's `cpu` object (model/model_name/name,
 * cores/physical_cores, logical_cpus/threads, max_mhz/max_frequency_mhz/
 * max_frequency_ghz, flags as array or string, vendor/vendor_id). */
RPX_API int rpx_cpu_peak_from_card(const json_t *cpu, rpx_cpu_peak *out, rpx_error *err);
/* The per-machine cache of CPU measurements (keyed by model, cores and ISA):
 * RPX_CPU_PEAK_CACHE, else $XDG_CACHE_HOME/rpxprof/cpu-peak.json, else
 * ~/.cache/rpxprof/cpu-peak.json. rpx_cpu_peak_estimate reads it (the peak
 * becomes the higher of estimate and measurement, a bound even without a
 * cpufreq maximum; the triad bandwidth, threads, date and file are kept);
 * rpx_cpu_peak_cache_store records a measurement (keeping the higher peak of
 * an earlier one). 0 or a negative RPX_E* code. */
RPX_API const char *rpx_cpu_peak_cache_path(char *buf, size_t size);
struct rpx_cpu_measured;
RPX_API int rpx_cpu_peak_cache_store(const rpx_cpu_peak *estimate, const struct rpx_cpu_measured *measured,
                             rpx_error *err);
/* FLOPs per cycle per core for an ISA (vendor and family refine AVX-512). */
RPX_API void rpx_cpu_flops_per_cycle(const char *isa, const char *vendor, int family, int *fp32,
                             int *fp64);

typedef struct rpx_cpu_measure_options {
    int threads;                      /* 0: the CPUs this process may run on */
    double seconds;                   /* per kernel run, 0: 0.2 */
    size_t triad_bytes;               /* per array, 0: 4 x last-level cache, 64 MiB..1 GiB */
} rpx_cpu_measure_options;

typedef struct rpx_cpu_measured {
    int threads;
    char isa[24];                     /* kernel used */
    double fp32_gflops, fp64_gflops;  /* FMA kernel, best of runs */
    double triad_gbps;                /* 24 bytes per element (STREAM convention) */
    size_t triad_bytes;               /* per array */
    double seconds;                   /* wall time spent measuring */
} rpx_cpu_measured;

RPX_API void rpx_cpu_measure_options_init(rpx_cpu_measure_options *o);
/* Runs for a second or two. Returns 0, RPX_ENOMEM, or RPX_EIO (threads). */
RPX_API int rpx_cpu_measure(const rpx_cpu_measure_options *o, rpx_cpu_measured *out, rpx_error *err);

/* A target spec for the host CPU: key "host-cpu", fp32/fp64 vector peaks the
 * higher of `estimate` (which may hold a cached measurement) and `measured`;
 * bandwidth from the triad measured now, else the cached one, else NaN (the
 * bound is then compute-only). `source` says for the peak and the bandwidth
 * which it is: measured (how, where, when) or the estimate's formula. Strings
 * point into `storage`, which must outlive `out`. */
typedef struct rpx_cpu_target_storage {
    char name[200];
    char source[1024];
    char notes[512];
} rpx_cpu_target_storage;

RPX_API void rpx_cpu_target_spec(const rpx_cpu_peak *estimate, const rpx_cpu_measured *measured,
                         rpx_gpu_spec *out, rpx_cpu_target_storage *storage);
/* {estimate: {...}, measured: {...}|null, ratio_fp32: measured/estimate}. */
RPX_API json_t *rpx_cpu_peak_json(const rpx_cpu_peak *estimate, const rpx_cpu_measured *measured);

/* ---- the roofline picture ------------------------------------------------ */

typedef struct rpx_roofline_point {
    const char *label;                /* "ideal", "unfused", "measured" */
    double intensity;                 /* FLOP/byte */
    double tflops;                    /* attained TFLOP/s */
} rpx_roofline_point;

/* SVG text of the roof (min(peak, bandwidth × intensity), log-log) and the
 * labelled points; NULL out of memory or when the peak or bandwidth is not a
 * positive number. free() the result. */
RPX_API char *rpx_roofline_svg(const char *title, double peak_tflops, double bandwidth_gbps,
                       const rpx_roofline_point *points, size_t n_points);
/* Build the points from a roofline object (rpx_roofline_json) and write the
 * picture atomically. Returns 0, RPX_EINVAL (no peak/bandwidth) or an I/O
 * error. */
RPX_API int rpx_roofline_svg_write(const char *path, const json_t *roofline, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
