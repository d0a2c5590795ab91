/* cpu_peak.c — owns the host CPU as a roofline target: its peak estimated from
 * /proc/cpuinfo and sysfs (through rpx_sys_read, so RPX_SYSROOT snapshots
 * work) or from the system card, and measured with a short multithreaded FMA
 * kernel and a STREAM-triad-like bandwidth kernel.
 *
 *   peak GFLOP/s = physical cores × max clock (GHz) × FLOPs per cycle per core
 *
 * FLOPs per cycle per core assumes two FMA pipes of the widest vector ISA the
 * flags advertise (docs/roofline.md has the table). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RPX_X86 1
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "common/json_set.h"
#include "rpxprof/error.h"
#include "common/json.h"
#include "rpxprof/roofline.h"
#include "rpxprof/system.h"

/* ---- FLOPs per cycle ---- */

void rpx_cpu_flops_per_cycle(const char *isa, const char *vendor, int family, int *fp32,
                             int *fp64)
{
    int f32 = 2; /* scalar: one FMA (or mul + add) per cycle */
    if (!isa) isa = "scalar";
    if (strcmp(isa, "avx512f") == 0) {
        /* two 512-bit FMA pipes; AMD Zen 4 (family 25) runs 512-bit ops on
         * 256-bit datapaths, so it has the AVX2 rate */
        f32 = (vendor && strcmp(vendor, "AuthenticAMD") == 0 && family == 25) ? 32 : 64;
    } else if (strcmp(isa, "avx2+fma") == 0) {
        f32 = 32; /* 2 pipes × 8 lanes × 2 */
    } else if (strcmp(isa, "avx") == 0) {
        f32 = 16; /* 8-lane mul + 8-lane add */
    } else if (strcmp(isa, "sse2") == 0) {
        f32 = 8; /* 4-lane mul + 4-lane add */
    } else if (strcmp(isa, "asimd") == 0) {
        f32 = 16; /* 2 pipes × 4 lanes × 2 */
    }
    if (fp32) *fp32 = f32;
    if (fp64) *fp64 = f32 > 2 ? f32 / 2 : 2;
}

static int has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    const char *p = list;
    while (p && (p = strstr(p, w)) != NULL) {
        int start = p == list || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '"' || p[-1] == ',';
        int end = p[n] == '\0' || p[n] == ' ' || p[n] == '\n' || p[n] == '\t' || p[n] == '"' ||
                  p[n] == ',';
        if (start && end) return 1;
        p += n;
    }
    return 0;
}

static const char *isa_from_flags(const char *flags)
{
    if (!flags || !*flags) return "scalar";
    if (has_word(flags, "avx512f")) return "avx512f";
    if (has_word(flags, "avx2") && has_word(flags, "fma")) return "avx2+fma";
    if (has_word(flags, "avx")) return "avx";
    if (has_word(flags, "sse2")) return "sse2";
    if (has_word(flags, "asimd")) return "asimd";
    return "scalar";
}

static void finish(rpx_cpu_peak *o, int family)
{
    rpx_cpu_flops_per_cycle(o->isa, o->vendor, family, &o->fp32_flops_per_cycle,
                            &o->fp64_flops_per_cycle);
    o->fp32_gflops = o->fp64_gflops = NAN;
    o->formula[0] = '\0';
    if (o->cores > 0 && !isnan(o->max_mhz) && o->max_mhz > 0) {
        o->fp32_gflops = o->cores * (o->max_mhz / 1000.0) * o->fp32_flops_per_cycle;
        o->fp64_gflops = o->cores * (o->max_mhz / 1000.0) * o->fp64_flops_per_cycle;
        snprintf(o->formula, sizeof o->formula,
                 "%d cores x %g GHz x %d FLOP/cycle (%s) = %g GFLOP/s fp32; x %d = %g fp64",
                 o->cores, o->max_mhz / 1000.0, o->fp32_flops_per_cycle, o->isa, o->fp32_gflops,
                 o->fp64_flops_per_cycle, o->fp64_gflops);
    }
}

static void init_peak(rpx_cpu_peak *o)
{
    memset(o, 0, sizeof *o);
    o->cores = o->logical_cpus = -1;
    o->max_mhz = NAN;
    o->fp32_gflops = o->fp64_gflops = NAN;
    o->cached_fp32_gflops = o->cached_fp64_gflops = NAN;
    o->cached_triad_gbps = NAN;
    o->cached_threads = -1;
    snprintf(o->isa, sizeof o->isa, "scalar");
}

/* ---- the per-machine cache of measurements ---- */

const char *rpx_cpu_peak_cache_path(char *buf, size_t size)
{
    const char *e = getenv("RPX_CPU_PEAK_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (e && *e) snprintf(buf, size, "%s", e);
    else if (x && *x == '/') snprintf(buf, size, "%s/rpxprof/cpu-peak.json", x);
    else if (h && *h == '/') snprintf(buf, size, "%s/.cache/rpxprof/cpu-peak.json", h);
    else return NULL;
    return buf;
}

static void cache_key(const rpx_cpu_peak *p, char *buf, size_t size)
{
    snprintf(buf, size, "%s|%d cores|%s", p->model[0] ? p->model : "unknown", p->cores, p->isa);
}

/* a measurement of this machine from the cache: the peak is then the higher of
 * estimate and measurement, and a bound; its triad bandwidth is this machine's
 * too (issue 26). Without a cpufreq maximum and without a measurement, the
 * estimate is not a bound. */
static void cache_lookup(rpx_cpu_peak *o, int have_max_clock)
{
    char path[4096], key[256];
    json_t *doc = NULL, *ent;
    double f32, f64, triad;
    o->cached_fp32_gflops = o->cached_fp64_gflops = o->cached_triad_gbps = NAN;
    o->cached_threads = -1;
    o->cached_at[0] = o->cache_file[0] = '\0';
    o->peak_is_measured = 0;
    cache_key(o, key, sizeof key);
    if (rpx_cpu_peak_cache_path(path, sizeof path)) doc = json_load_file(path, 0, NULL);
    ent = json_object_get(json_object_get(doc, "entries"), key);
    f32 = json_number_value(json_object_get(ent, "fp32_gflops"));
    f64 = json_number_value(json_object_get(ent, "fp64_gflops"));
    triad = json_number_value(json_object_get(ent, "triad_gbps"));
    if (json_is_object(ent) && f32 > 0) {
        const char *when = json_string_value(json_object_get(ent, "measured_at"));
        json_t *threads = json_object_get(ent, "threads");
        o->cached_fp32_gflops = f32;
        o->cached_fp64_gflops = f64 > 0 ? f64 : NAN;
        o->cached_triad_gbps = triad > 0 ? triad : NAN;
        o->cached_threads = json_is_integer(threads) ? (int)json_integer_value(threads) : -1;
        snprintf(o->cached_at, sizeof o->cached_at, "%s", when ? when : "");
        snprintf(o->cache_file, sizeof o->cache_file, "%.255s", path);
        if (isnan(o->fp32_gflops) || f32 > o->fp32_gflops) {
            o->fp32_gflops = f32;
            o->peak_is_measured = 1;
        }
        if (f64 > 0 && (isnan(o->fp64_gflops) || f64 > o->fp64_gflops)) o->fp64_gflops = f64;
        if (!have_max_clock) {
            o->is_bound = 1;
            snprintf(o->bound_note, sizeof o->bound_note,
                     "a bound: no cpufreq maximum, so the higher of the estimate and this "
                     "machine's measurement cached in %.120s (%s) is used",
                     path, when ? when : "undated");
        }
    } else if (!have_max_clock) {
        o->is_bound = 0;
        snprintf(o->bound_note, sizeof o->bound_note,
                 "an estimate, not a bound: no maximum boost clock is known (%s) and no "
                 "measurement is cached; run 'rpxprof roofline --measure-cpu' once on this machine",
                 isnan(o->max_mhz) ? "no clock" : "the current clock was used");
    }
    json_decref(doc);
}

int rpx_cpu_peak_cache_store(const rpx_cpu_peak *est, const struct rpx_cpu_measured *m, rpx_error *err)
{
    char path[4096], key[256], when[32];
    json_t *doc, *entries, *ent, *old;
    time_t now = time(NULL);
    struct tm tm;
    double f32, f64;
    int rc = 0;
    if (!est || !m || !(m->fp32_gflops > 0)) return 0;
    if (!rpx_cpu_peak_cache_path(path, sizeof path))
        return rpx_error_set(err, RPX_EINVAL, "no cache folder: set RPX_CPU_PEAK_CACHE, XDG_CACHE_HOME or HOME");
    cache_key(est, key, sizeof key);
    doc = json_load_file(path, 0, NULL);
    if ((doc || access(path, F_OK) == 0) &&
        !(json_is_object(doc) &&
          json_is_string(json_object_get(doc, "schema")) &&
          strcmp(json_string_value(json_object_get(doc, "schema")), "rpxprof.cpu-peak-cache/1") ==
              0)) {
        json_decref(doc);
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: exists and is not rpxprof's CPU measurement cache; the "
                             "measurement was not cached (set RPX_CPU_PEAK_CACHE to another file)",
                             path);
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        doc = json_object();
    }
    entries = json_object_get(doc, "entries");
    if (!json_is_object(entries)) {
        entries = json_object();
        json_object_set_new(doc, "entries", entries);
    }
    json_object_set_new(doc, "schema", json_string("rpxprof.cpu-peak-cache/1"));
    old = json_object_get(entries, key);
    f32 = m->fp32_gflops;
    f64 = m->fp64_gflops;
    /* never lowered by a slower run (a busy machine, a sanitizer): the higher peak stays */
    if (json_number_value(json_object_get(old, "fp32_gflops")) > f32) f32 = json_number_value(json_object_get(old, "fp32_gflops"));
    if (json_number_value(json_object_get(old, "fp64_gflops")) > f64) f64 = json_number_value(json_object_get(old, "fp64_gflops"));
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    ent = json_object();
    json_object_set_new(ent, "fp32_gflops", json_real(f32));
    json_object_set_new(ent, "fp64_gflops", rpx_json_real_or_null(f64));
    json_object_set_new(ent, "triad_gbps", rpx_json_real_or_null(m->triad_gbps));
    json_object_set_new(ent, "threads", json_integer(m->threads));
    json_object_set_new(ent, "measured_at", json_string(when));
    json_object_set_new(entries, key, ent);
    /* the output guard: folders made, written whole or not at all, and only over a cache */
    rc = rpx_json_write_file(path, doc, err);
    json_decref(doc);
    return rc;
}

/* ---- from /proc/cpuinfo and sysfs ---- */

/* "key<ws>:<ws>value" → value (trimmed) into out; returns 1 when the line has `key`. */
static int line_field(const char *line, size_t len, const char *key, char *out, size_t size)
{
    size_t k = strlen(key), i;
    const char *v, *end = line + len;
    if (len < k || strncmp(line, key, k) != 0) return 0;
    for (i = k; i < len && (line[i] == ' ' || line[i] == '\t'); i++) {}
    if (i >= len || line[i] != ':') return 0;
    v = line + i + 1;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
    snprintf(out, size, "%.*s", (int)(end - v), v);
    return 1;
}

#define MAX_PAIRS 4096

static void copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size) n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int rpx_cpu_peak_estimate(rpx_cpu_peak *out, rpx_error *err)
{
    enum { TEXT_SIZE = 1 << 20, FLAGS_SIZE = 8192 };
    char *text, *flags, v[256];
    long n;
    const char *p;
    int family = -1, logical = 0, phys = -1, npairs = 0, i;
    int (*pairs)[2];
    int cur_core = -1;
    double mhz = NAN, max_khz = NAN;
    init_peak(out);
    text = malloc(TEXT_SIZE + FLAGS_SIZE + sizeof(int[MAX_PAIRS][2]));
    if (!text) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    flags = text + TEXT_SIZE;
    pairs = (int(*)[2])(void *)(flags + FLAGS_SIZE);
    flags[0] = '\0';
    n = rpx_sys_read("/proc/cpuinfo", text, TEXT_SIZE);
    if (n <= 0) {
        free(text);
        return rpx_error_set(err, RPX_EIO, "%s/proc/cpuinfo: cannot read: %s", rpx_sys_root(),
                             n < 0 ? strerror((int)-n) : "empty");
    }
    for (p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (line_field(p, len, "processor", v, sizeof v)) {
            logical++;
            phys = -1;
            cur_core = -1;
        } else if (!out->model[0] && line_field(p, len, "model name", v, sizeof v)) {
            copy_str(out->model, sizeof out->model, v);
        } else if (!out->vendor[0] && line_field(p, len, "vendor_id", v, sizeof v)) {
            copy_str(out->vendor, sizeof out->vendor, v);
        } else if (family < 0 && line_field(p, len, "cpu family", v, sizeof v)) {
            family = atoi(v);
        } else if (line_field(p, len, "cpu MHz", v, sizeof v)) {
            double m = strtod(v, NULL);
            if (m > 0 && (isnan(mhz) || m > mhz)) mhz = m;
        } else if (line_field(p, len, "physical id", v, sizeof v)) {
            phys = atoi(v);
        } else if (line_field(p, len, "core id", v, sizeof v)) {
            cur_core = atoi(v);
            for (i = 0; i < npairs; i++)
                if (pairs[i][0] == phys && pairs[i][1] == cur_core) break;
            if (i == npairs && npairs < MAX_PAIRS) {
                pairs[npairs][0] = phys;
                pairs[npairs][1] = cur_core;
                npairs++;
            }
        } else if (!flags[0] && (line_field(p, len, "flags", v, 1) ||
                                 line_field(p, len, "Features", v, 1))) {
            /* re-read the whole (long) line */
            const char *colon = memchr(p, ':', len);
            if (colon) {
                const char *s = colon + 1;
                while (*s == ' ' || *s == '\t') s++;
                snprintf(flags, FLAGS_SIZE, "%.*s", (int)(p + len - s), s);
            }
            if (!out->vendor[0] && strncmp(p, "Features", 8) == 0)
                snprintf(out->vendor, sizeof out->vendor, "ARM");
        } else if (!out->model[0] && line_field(p, len, "Hardware", v, sizeof v)) {
            copy_str(out->model, sizeof out->model, v);
        }
        p = nl ? nl + 1 : p + len;
    }
    out->logical_cpus = logical > 0 ? logical : -1;
    out->cores = npairs > 0 ? npairs : out->logical_cpus;
    snprintf(out->isa, sizeof out->isa, "%s", isa_from_flags(flags));
    free(text);
    /* the highest cpuinfo_max_freq (kHz) of the CPUs, else the highest cpu MHz */
    for (i = 0; i < (logical > 0 ? logical : 1) && i < 4096; i++) {
        char path[96], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", i);
        if (rpx_sys_read(path, buf, sizeof buf) > 0) {
            double k = strtod(buf, NULL);
            if (k > 0 && (isnan(max_khz) || k > max_khz)) max_khz = k;
        }
    }
    if (!isnan(max_khz)) {
        out->max_mhz = max_khz / 1000.0;
        snprintf(out->max_mhz_source, sizeof out->max_mhz_source, "cpufreq cpuinfo_max_freq");
    } else if (!isnan(mhz)) {
        out->max_mhz = mhz;
        snprintf(out->max_mhz_source, sizeof out->max_mhz_source,
                 "cpuinfo cpu MHz (no cpufreq; current clock)");
    }
    finish(out, family);
    if (!isnan(max_khz) && !isnan(out->fp32_gflops)) {
        out->is_bound = 1;
        snprintf(out->bound_note, sizeof out->bound_note,
                 "a bound: the maximum boost clock (cpufreq cpuinfo_max_freq)");
        cache_lookup(out, 1); /* this machine's measured bandwidth (and a higher peak) */
    } else {
        cache_lookup(out, 0);
    }
    return 0;
}

/* ---- from the system card's cpu object ---- */

static const json_t *first_of(const json_t *o, const char *const *keys)
{
    for (; *keys; keys++) {
        const json_t *v = json_object_get(o, *keys);
        if (v && !json_is_null(v)) return v;
    }
    return NULL;
}

int rpx_cpu_peak_from_card(const json_t *cpu, rpx_cpu_peak *out, rpx_error *err)
{
    static const char *const k_model[] = {"model_name", "model", "name", NULL};
    static const char *const k_vendor[] = {"vendor", "vendor_id", NULL};
    static const char *const k_cores[] = {"physical_cores", "cores", NULL};
    static const char *const k_logical[] = {"logical_cpus", "threads", "logical_cores", NULL};
    static const char *const k_mhz[] = {"max_mhz", "max_frequency_mhz", "max_freq_mhz", NULL};
    static const char *const k_ghz[] = {"max_ghz", "max_frequency_ghz", NULL};
    static const char *const k_family[] = {"family", "cpu_family", NULL};
    const json_t *v;
    char flags[8192] = "";
    int family = -1;
    init_peak(out);
    if (!json_is_object(cpu))
        return rpx_error_set(err, RPX_EINVAL, "system card: 'cpu' is not an object");
    if ((v = first_of(cpu, k_model)) && json_is_string(v))
        snprintf(out->model, sizeof out->model, "%s", json_string_value(v));
    if ((v = first_of(cpu, k_vendor)) && json_is_string(v))
        snprintf(out->vendor, sizeof out->vendor, "%s", json_string_value(v));
    if ((v = first_of(cpu, k_cores)) && json_is_integer(v)) out->cores = (int)json_integer_value(v);
    if ((v = first_of(cpu, k_logical)) && json_is_integer(v))
        out->logical_cpus = (int)json_integer_value(v);
    if (out->cores <= 0) out->cores = out->logical_cpus;
    if ((v = first_of(cpu, k_family)) && json_is_integer(v)) family = (int)json_integer_value(v);
    if ((v = first_of(cpu, k_mhz)) && json_is_number(v)) {
        out->max_mhz = json_number_value(v);
        snprintf(out->max_mhz_source, sizeof out->max_mhz_source, "system card");
    } else if ((v = first_of(cpu, k_ghz)) && json_is_number(v)) {
        out->max_mhz = json_number_value(v) * 1000.0;
        snprintf(out->max_mhz_source, sizeof out->max_mhz_source, "system card");
    }
    v = json_object_get(cpu, "flags");
    if (json_is_string(v)) {
        snprintf(flags, sizeof flags, "%s", json_string_value(v));
    } else if (json_is_array(v)) {
        size_t i, len = 0;
        for (i = 0; i < json_array_size(v); i++) {
            const json_t *s = json_array_get(v, i);
            int w;
            if (!json_is_string(s)) continue;
            w = snprintf(flags + len, sizeof flags - len, "%s%s", len ? " " : "",
                         json_string_value(s));
            if (w < 0 || (size_t)w >= sizeof flags - len) break;
            len += (size_t)w;
        }
    }
    snprintf(out->isa, sizeof out->isa, "%s", isa_from_flags(flags));
    finish(out, family);
    return 0;
}

/* ---- measurement ---- */

#define ACC 12

typedef enum kernel_kind { K_F32, K_F64 } kernel_kind;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Twelve independent accumulators in named variables (an array would be
 * kept in memory): enough chains to cover FMA latency × 2 pipes. */
#define ACC_DECL(T) T a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11
#define ACC_INIT(SET, base, step)                                                        \
    a0 = SET(base), a1 = SET(base + step), a2 = SET(base + 2 * step),                   \
    a3 = SET(base + 3 * step), a4 = SET(base + 4 * step), a5 = SET(base + 5 * step),    \
    a6 = SET(base + 6 * step), a7 = SET(base + 7 * step), a8 = SET(base + 8 * step),    \
    a9 = SET(base + 9 * step), a10 = SET(base + 10 * step), a11 = SET(base + 11 * step)
#define ACC_STEP(F)                                                                      \
    do {                                                                                 \
        a0 = F(a0); a1 = F(a1); a2 = F(a2); a3 = F(a3); a4 = F(a4); a5 = F(a5);          \
        a6 = F(a6); a7 = F(a7); a8 = F(a8); a9 = F(a9); a10 = F(a10); a11 = F(a11);      \
    } while (0)
#define ACC_SUM(ADD)                                                                     \
    ADD(ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))),                \
        ADD(ADD(a8, a9), ADD(a10, a11)))

#if RPX_X86
#define F512S(x) _mm512_fmadd_ps((x), m, c)
#define F512D(x) _mm512_fmadd_pd((x), m, c)
#define F256S(x) _mm256_fmadd_ps((x), m, c)
#define F256D(x) _mm256_fmadd_pd((x), m, c)

__attribute__((target("avx512f"))) static double fma512_f32(uint64_t iters, float seed)
{
    __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f), r;
    ACC_DECL(__m512);
    float out[16];
    double s = 0;
    uint64_t i;
    int k;
    ACC_INIT(_mm512_set1_ps, seed, 1e-3f);
    for (i = 0; i < iters; i++) ACC_STEP(F512S);
    r = ACC_SUM(_mm512_add_ps);
    _mm512_storeu_ps(out, r);
    for (k = 0; k < 16; k++) s += out[k];
    return s;
}

__attribute__((target("avx512f"))) static double fma512_f64(uint64_t iters, float seed)
{
    __m512d m = _mm512_set1_pd(0.9999999), c = _mm512_set1_pd(1e-7), r;
    ACC_DECL(__m512d);
    double out[8], s = 0;
    uint64_t i;
    int k;
    ACC_INIT(_mm512_set1_pd, (double)seed, 1e-3);
    for (i = 0; i < iters; i++) ACC_STEP(F512D);
    r = ACC_SUM(_mm512_add_pd);
    _mm512_storeu_pd(out, r);
    for (k = 0; k < 8; k++) s += out[k];
    return s;
}

__attribute__((target("avx2,fma"))) static double fma256_f32(uint64_t iters, float seed)
{
    __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f), r;
    ACC_DECL(__m256);
    float out[8];
    double s = 0;
    uint64_t i;
    int k;
    ACC_INIT(_mm256_set1_ps, seed, 1e-3f);
    for (i = 0; i < iters; i++) ACC_STEP(F256S);
    r = ACC_SUM(_mm256_add_ps);
    _mm256_storeu_ps(out, r);
    for (k = 0; k < 8; k++) s += out[k];
    return s;
}

__attribute__((target("avx2,fma"))) static double fma256_f64(uint64_t iters, float seed)
{
    __m256d m = _mm256_set1_pd(0.9999999), c = _mm256_set1_pd(1e-7), r;
    ACC_DECL(__m256d);
    double out[4], s = 0;
    uint64_t i;
    int k;
    ACC_INIT(_mm256_set1_pd, (double)seed, 1e-3);
    for (i = 0; i < iters; i++) ACC_STEP(F256D);
    r = ACC_SUM(_mm256_add_pd);
    _mm256_storeu_pd(out, r);
    for (k = 0; k < 4; k++) s += out[k];
    return s;
}
#endif

#if defined(__aarch64__)
#define FNS(x) vfmaq_f32(c, (x), m)
#define FND(x) vfmaq_f64(c, (x), m)

static double neon_f32(uint64_t iters, float seed)
{
    float32x4_t m = vdupq_n_f32(0.9999999f), c = vdupq_n_f32(1e-7f);
    ACC_DECL(float32x4_t);
    uint64_t i;
    ACC_INIT(vdupq_n_f32, seed, 1e-3f);
    for (i = 0; i < iters; i++) ACC_STEP(FNS);
    return vaddvq_f32(ACC_SUM(vaddq_f32));
}

static double neon_f64(uint64_t iters, float seed)
{
    float64x2_t m = vdupq_n_f64(0.9999999), c = vdupq_n_f64(1e-7);
    ACC_DECL(float64x2_t);
    uint64_t i;
    ACC_INIT(vdupq_n_f64, (double)seed, 1e-3);
    for (i = 0; i < iters; i++) ACC_STEP(FND);
    return vaddvq_f64(ACC_SUM(vaddq_f64));
}
#endif

/* Portable fallback: twelve independent multiply-add chains (2 FLOPs each). */
#define FSS(x) ((x) * 0.9999999f + 1e-7f)
#define FSD(x) ((x) * 0.9999999 + 1e-7)
#define ADDS(x, y) ((x) + (y))

static double scalar_f32(uint64_t iters, float seed)
{
    ACC_DECL(float);
    uint64_t i;
#define SETF(v) (v)
    ACC_INIT(SETF, seed, 1e-3f);
    for (i = 0; i < iters; i++) ACC_STEP(FSS);
    return ACC_SUM(ADDS);
}

static double scalar_f64(uint64_t iters, float seed)
{
    ACC_DECL(double);
    uint64_t i;
    ACC_INIT(SETF, (double)seed, 1e-3);
    for (i = 0; i < iters; i++) ACC_STEP(FSD);
    return ACC_SUM(ADDS);
}
#undef SETF

typedef double (*kernel_fn)(uint64_t, float);

typedef struct kernel {
    kernel_fn f32, f64;
    int lanes32, lanes64;
    const char *isa;
} kernel;

static kernel pick_kernel(void)
{
    kernel k = {scalar_f32, scalar_f64, 1, 1, "scalar"};
#if RPX_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        k.f32 = fma512_f32;
        k.f64 = fma512_f64;
        k.lanes32 = 16;
        k.lanes64 = 8;
        k.isa = "avx512f";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        k.f32 = fma256_f32;
        k.f64 = fma256_f64;
        k.lanes32 = 8;
        k.lanes64 = 4;
        k.isa = "avx2+fma";
    }
#elif defined(__aarch64__)
    k.f32 = neon_f32;
    k.f64 = neon_f64;
    k.lanes32 = 4;
    k.lanes64 = 2;
    k.isa = "asimd";
#endif
    return k;
}

/* A start gate: threads are created first and wait here, so a failed
 * pthread_create only means fewer threads, never a stuck barrier. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
    pthread_barrier_t bar;
} gate;

typedef struct worker {
    pthread_t th;
    gate *g;
    int nthreads;
    kernel_fn fn;
    uint64_t iters;
    double t0, t1, sink;
    /* triad */
    double *a, *b, *c;
    size_t lo, hi;
    int reps;
    double *rep_t0, *rep_t1;
} worker;

static void gate_wait(gate *g)
{
    pthread_mutex_lock(&g->mu);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void *fma_worker(void *arg)
{
    worker *w = arg;
    gate_wait(w->g);
    if (w->nthreads > 1) pthread_barrier_wait(&w->g->bar);
    w->t0 = now_s();
    w->sink = w->fn(w->iters, 1.0f + (float)(w->lo % 7));
    w->t1 = now_s();
    return NULL;
}

static void *triad_worker(void *arg)
{
    worker *w = arg;
    size_t i;
    int r;
    gate_wait(w->g);
    for (i = w->lo; i < w->hi; i++) { /* first touch by the thread that uses it */
        w->a[i] = 0.0;
        w->b[i] = 1.0;
        w->c[i] = 2.0;
    }
    for (r = 0; r < w->reps; r++) {
        const double s = 3.0;
        double *a = w->a, *b = w->b, *c = w->c;
        if (w->nthreads > 1) pthread_barrier_wait(&w->g->bar);
        w->rep_t0[r] = now_s();
        for (i = w->lo; i < w->hi; i++) a[i] = b[i] + s * c[i];
        w->rep_t1[r] = now_s();
    }
    w->sink = w->hi > w->lo ? w->a[w->lo] : 0;
    return NULL;
}

/* Start up to n workers (w[0] runs on the calling thread); returns how many
 * run. setup(w, count) is called once the count is known, before the gate
 * opens. */
static int run_workers(worker *w, int n, void *(*fn)(void *), gate *g,
                       void (*setup)(worker *, int, void *), void *ctx)
{
    int i, started = 1;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = 0;
    for (i = 0; i < n; i++) w[i].g = g;
    for (i = 1; i < n; i++) {
        if (pthread_create(&w[i].th, NULL, fn, &w[i]) != 0) break;
        started++;
    }
    for (i = 0; i < started; i++) w[i].nthreads = started;
    if (setup) setup(w, started, ctx);
    if (started > 1) pthread_barrier_init(&g->bar, NULL, (unsigned)started);
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    fn(&w[0]);
    for (i = 1; i < started; i++) pthread_join(w[i].th, NULL);
    if (started > 1) pthread_barrier_destroy(&g->bar);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    return started;
}

/* Run `fn` on n threads with `iters` each; wall seconds and threads used. */
static int run_fma(kernel_fn fn, int n, uint64_t iters, double *wall, int *used,
                   rpx_error *err)
{
    worker *w = calloc((size_t)n, sizeof *w);
    gate g;
    int i;
    double t0 = INFINITY, t1 = -INFINITY;
    if (!w) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < n; i++) {
        w[i].fn = fn;
        w[i].iters = iters;
        w[i].lo = (size_t)i;
    }
    *used = run_workers(w, n, fma_worker, &g, NULL, NULL);
    for (i = 0; i < *used; i++) {
        if (w[i].t0 < t0) t0 = w[i].t0;
        if (w[i].t1 > t1) t1 = w[i].t1;
    }
    *wall = t1 - t0;
    free(w);
    return 0;
}

static int measure_fma(kernel_fn fn, int lanes, int n, double seconds, double *gflops,
                       int *used, rpx_error *err)
{
    uint64_t iters = 1u << 14;
    double t = 0, best = 0;
    int rc, rep;
    /* calibrate on one thread until a run takes 20 ms */
    for (;;) {
        double t0 = now_s();
        volatile double sink = fn(iters, 1.0f);
        (void)sink;
        t = now_s() - t0;
        if (t >= 0.02 || iters >= (UINT64_C(1) << 40)) break;
        iters *= 2;
    }
    iters = (uint64_t)((double)iters * seconds / (t > 0 ? t : 1e-3));
    if (iters < 1) iters = 1;
    for (rep = 0; rep < 2; rep++) {
        double wall = 0, g;
        if ((rc = run_fma(fn, n, iters, &wall, used, err)) != 0) return rc;
        g = (double)iters * ACC * lanes * 2.0 * *used / (wall > 0 ? wall : 1e-9) / 1e9;
        if (g > best) best = g;
    }
    *gflops = best;
    return 0;
}

typedef struct triad_ctx {
    double *a, *b, *c;
    size_t count;
    double (*t0s)[8], (*t1s)[8];
    int reps;
} triad_ctx;

static void triad_setup(worker *w, int n, void *arg)
{
    triad_ctx *tc = arg;
    size_t chunk = (tc->count + (size_t)n - 1) / (size_t)n;
    int t;
    for (t = 0; t < n; t++) {
        w[t].a = tc->a;
        w[t].b = tc->b;
        w[t].c = tc->c;
        w[t].lo = (size_t)t * chunk < tc->count ? (size_t)t * chunk : tc->count;
        w[t].hi = w[t].lo + chunk < tc->count ? w[t].lo + chunk : tc->count;
        w[t].reps = tc->reps;
        w[t].rep_t0 = tc->t0s[t];
        w[t].rep_t1 = tc->t1s[t];
    }
}

static int measure_triad(int n, size_t bytes_per_array, double *gbps, rpx_error *err)
{
    size_t count = bytes_per_array / sizeof(double), alloc, i;
    double best = INFINITY;
    worker *w = NULL;
    gate g;
    triad_ctx tc;
    int t, r, rc = 0, used;
    memset(&tc, 0, sizeof tc);
    tc.reps = 5;
    if (n > 256) n = 256;
    if (count < (size_t)n * 64) count = (size_t)n * 64;
    tc.count = count;
    alloc = ((count * sizeof(double) + 63) / 64) * 64;
    tc.a = aligned_alloc(64, alloc);
    tc.b = aligned_alloc(64, alloc);
    tc.c = aligned_alloc(64, alloc);
    tc.t0s = calloc((size_t)n, sizeof *tc.t0s);
    tc.t1s = calloc((size_t)n, sizeof *tc.t1s);
    w = calloc((size_t)n, sizeof *w);
    if (!tc.a || !tc.b || !tc.c || !w || !tc.t0s || !tc.t1s) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory for the triad arrays (3 x %zu bytes)",
                           alloc);
        goto out;
    }
    used = run_workers(w, n, triad_worker, &g, triad_setup, &tc);
    for (r = 0; r < tc.reps; r++) {
        double lo = INFINITY, hi = -INFINITY;
        for (t = 0; t < used; t++) {
            if (tc.t0s[t][r] < lo) lo = tc.t0s[t][r];
            if (tc.t1s[t][r] > hi) hi = tc.t1s[t][r];
        }
        if (hi - lo < best) best = hi - lo;
    }
    for (i = 0; i < count; i += count / 8 + 1)
        if (tc.a[i] != 7.0) rc = rpx_error_set(err, RPX_EIO, "triad kernel produced a wrong result");
    *gbps = 3.0 * sizeof(double) * (double)count / (best > 0 ? best : 1e-9) / 1e9;
out:
    free(tc.a);
    free(tc.b);
    free(tc.c);
    free(tc.t0s);
    free(tc.t1s);
    free(w);
    return rc;
}

/* CPUs in a sysfs cpulist ("0-15,64-79"). */
static int cpulist_count(const char *s)
{
    int n = 0;
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s) break;
        b = a;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
        }
        if (b >= a) n += (int)(b - a + 1);
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* STREAM's rule: each array at least 4 × the total last-level cache; at
 * least 64 MiB, at most 1 GiB and an eighth of the RAM. */
static size_t default_triad_bytes(int logical)
{
    char buf[256];
    size_t bytes = (size_t)64 << 20;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (rpx_sys_read("/sys/devices/system/cpu/cpu0/cache/index3/size", buf, sizeof buf) > 0) {
        char *end;
        double v = strtod(buf, &end);
        double mult = (*end == 'K') ? 1024.0 : (*end == 'M') ? 1048576.0 : 1.0;
        int shared = 0;
        if (rpx_sys_read("/sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list", buf,
                         sizeof buf) > 0)
            shared = cpulist_count(buf);
        if (v > 0) {
            double llc = v * mult * (shared > 0 && logical > shared
                                         ? (double)((logical + shared - 1) / shared)
                                         : 1.0);
            if (4.0 * llc > (double)bytes) bytes = (size_t)(4.0 * llc);
        }
    }
    if (bytes > ((size_t)1 << 30)) bytes = (size_t)1 << 30;
    if (pages > 0 && page > 0 && bytes > (size_t)pages * (size_t)page / 8)
        bytes = (size_t)pages * (size_t)page / 8;
    return bytes;
}

void rpx_cpu_measure_options_init(rpx_cpu_measure_options *o)
{
    memset(o, 0, sizeof *o);
}

static int allowed_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return 1;
}

int rpx_cpu_measure(const rpx_cpu_measure_options *o, rpx_cpu_measured *out, rpx_error *err)
{
    kernel k = pick_kernel();
    int n = o && o->threads > 0 ? o->threads : allowed_cpus();
    double seconds = o && o->seconds > 0 ? o->seconds : 0.2;
    size_t triad = o && o->triad_bytes > 0 ? o->triad_bytes : default_triad_bytes((int)sysconf(_SC_NPROCESSORS_CONF));
    double t0 = now_s();
    int rc, used = n;
    memset(out, 0, sizeof *out);
    out->fp32_gflops = out->fp64_gflops = out->triad_gbps = NAN;
    if (n > 1024) n = 1024;
    out->threads = n;
    out->triad_bytes = triad;
    snprintf(out->isa, sizeof out->isa, "%s", k.isa);
    if ((rc = measure_fma(k.f32, k.lanes32, n, seconds, &out->fp32_gflops, &used, err)) != 0)
        return rc;
    out->threads = used;
    if ((rc = measure_fma(k.f64, k.lanes64, n, seconds, &out->fp64_gflops, &used, err)) != 0)
        return rc;
    if ((rc = measure_triad(n, triad, &out->triad_gbps, err)) != 0) return rc;
    out->seconds = now_s() - t0;
    return 0;
}

/* ---- the CPU as a target spec ---- */

static double max_known(double a, double b)
{
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    return a > b ? a : b;
}

/* "2 threads, " or "" */
static void threads_words(int threads, char *buf, size_t size)
{
    if (threads > 0)
        snprintf(buf, size, " on %d thread%s", threads, threads == 1 ? "" : "s");
    else
        buf[0] = '\0';
}

void rpx_cpu_target_spec(const rpx_cpu_peak *est, const rpx_cpu_measured *meas,
                         rpx_gpu_spec *out, rpx_cpu_target_storage *st)
{
    int p, u, now_peak = 0;
    double f32 = NAN, f64 = NAN, bw = NAN;
    char peak_words[400], bw_words[400], th[32];
    int cached_bw = est && est->cached_triad_gbps > 0;
    memset(out, 0, sizeof *out);
    for (p = 0; p < RPX_PREC_COUNT; p++)
        for (u = 0; u < RPX_UNIT_COUNT; u++) out->peak_tflops[p][u] = NAN;
    if (est) {
        f32 = est->fp32_gflops;
        f64 = est->fp64_gflops;
    }
    if (meas) {
        /* the higher of estimate and measurement, so the bound stays a lower bound */
        now_peak = meas->fp32_gflops > 0 && (isnan(f32) || meas->fp32_gflops >= f32);
        f32 = max_known(f32, meas->fp32_gflops);
        f64 = max_known(f64, meas->fp64_gflops);
    }
    /* where the peak came from: measured now, the cached measurement, or the estimate */
    if (now_peak) {
        threads_words(meas->threads, th, sizeof th);
        snprintf(peak_words, sizeof peak_words,
                 "peak: measured now by rpxprof's FMA kernel (%s)%s: %g GFLOP/s fp32",
                 meas->isa[0] ? meas->isa : "?", th, f32);
    } else if (est && est->peak_is_measured) {
        threads_words(est->cached_threads, th, sizeof th);
        snprintf(peak_words, sizeof peak_words,
                 "peak: measured by rpxprof's FMA kernel (rpxprof roofline --measure-cpu)%s, "
                 "cached in %.160s (%s): %g GFLOP/s fp32, above the estimate",
                 th, est->cache_file, est->cached_at[0] ? est->cached_at : "undated", f32);
    } else if (est && est->formula[0]) {
        snprintf(peak_words, sizeof peak_words, "peak: estimate: %s", est->formula);
    } else {
        snprintf(peak_words, sizeof peak_words, "peak: unknown");
    }
    /* the bandwidth: measured now, else the cached measurement, else unknown */
    if (meas && meas->triad_gbps > 0) {
        bw = meas->triad_gbps;
        threads_words(meas->threads, th, sizeof th);
        snprintf(bw_words, sizeof bw_words,
                 "memory bandwidth: measured now by rpxprof's STREAM-triad-like kernel%s: %g GB/s",
                 th, bw);
    } else if (cached_bw) {
        bw = est->cached_triad_gbps;
        threads_words(est->cached_threads, th, sizeof th);
        snprintf(bw_words, sizeof bw_words,
                 "memory bandwidth: measured by rpxprof's STREAM-triad-like kernel (rpxprof "
                 "roofline --measure-cpu)%s, cached in %.160s (%s): %g GB/s",
                 th, est->cache_file, est->cached_at[0] ? est->cached_at : "undated", bw);
    } else {
        snprintf(bw_words, sizeof bw_words,
                 "memory bandwidth: unknown (no measurement; run 'rpxprof roofline "
                 "--measure-cpu' once on this machine)");
    }
    out->key = "host-cpu";
    snprintf(st->name, sizeof st->name, "Host CPU: %.150s (%d cores)%s",
             est && est->model[0] ? est->model : "unknown model", est ? est->cores : -1,
             est && !est->is_bound && !meas ? " [estimate, not a bound]" : "");
    out->name = st->name;
    out->vendor = est && est->vendor[0] ? est->vendor : NULL;
    out->architecture = est ? est->isa : NULL;
    out->memory_gb = NAN;
    out->memory_bandwidth_gbps = bw;
    out->peak_tflops[RPX_PREC_FP32][RPX_UNIT_VECTOR] = f32 / 1000.0;
    out->peak_tflops[RPX_PREC_FP64][RPX_UNIT_VECTOR] = f64 / 1000.0;
    out->sm_count = est ? est->cores : -1;
    out->boost_clock_mhz = est ? est->max_mhz : NAN;
    out->l2_mb = NAN;
    out->tdp_w = NAN;
    snprintf(st->source, sizeof st->source, "%s; %s", peak_words, bw_words);
    out->source = st->source;
    snprintf(st->notes, sizeof st->notes,
             "Only fp32 and fp64 are modelled for CPUs.%s%.250s%s",
             est && est->bound_note[0] && !meas ? " The peak is " : "",
             est && !meas ? est->bound_note : "",
             isnan(bw) ? " Memory bandwidth unknown without a measurement (rpxprof roofline "
                         "--measure-cpu): the bound covers compute only."
                       : "");
    out->notes = st->notes;
    out->match = NULL;
}

json_t *rpx_cpu_peak_json(const rpx_cpu_peak *e, const rpx_cpu_measured *m)
{
    json_t *o = json_object(), *je = json_object(), *jm = m ? json_object() : json_null();
    int ok = 1;
    if (!o || !je || !jm) {
        json_decref(o);
        json_decref(je);
        json_decref(jm);
        return NULL;
    }
#define SET(obj, k, v) RPX_JSON_SET(ok, obj, k, v)
    SET(je, "model", e->model[0] ? json_string(e->model) : json_null());
    SET(je, "vendor", e->vendor[0] ? json_string(e->vendor) : json_null());
    SET(je, "isa", json_string(e->isa));
    SET(je, "cores", e->cores > 0 ? json_integer(e->cores) : json_null());
    SET(je, "logical_cpus", e->logical_cpus > 0 ? json_integer(e->logical_cpus) : json_null());
    SET(je, "max_mhz", rpx_json_real_or_null(e->max_mhz));
    SET(je, "max_mhz_source", e->max_mhz_source[0] ? json_string(e->max_mhz_source) : json_null());
    SET(je, "fp32_flops_per_cycle", json_integer(e->fp32_flops_per_cycle));
    SET(je, "fp64_flops_per_cycle", json_integer(e->fp64_flops_per_cycle));
    SET(je, "fp32_gflops", rpx_json_real_or_null(e->fp32_gflops));
    SET(je, "fp64_gflops", rpx_json_real_or_null(e->fp64_gflops));
    SET(je, "formula", e->formula[0] ? json_string(e->formula) : json_null());
    SET(je, "is_bound", json_boolean(e->is_bound));
    SET(je, "bound_note", e->bound_note[0] ? json_string(e->bound_note) : json_null());
    SET(je, "cached_fp32_gflops", rpx_json_real_or_null(e->cached_fp32_gflops));
    SET(je, "cached_triad_gbps", rpx_json_real_or_null(e->cached_triad_gbps));
    SET(je, "cached_at", e->cached_at[0] ? json_string(e->cached_at) : json_null());
    SET(je, "cache_file", e->cache_file[0] ? json_string(e->cache_file) : json_null());
    SET(je, "peak_source", json_string(e->peak_is_measured ? "cached measurement"
                                       : isnan(e->fp32_gflops) ? "unknown" : "estimate"));
    SET(o, "estimate", je);
    if (m) {
        SET(jm, "threads", json_integer(m->threads));
        SET(jm, "isa", json_string(m->isa));
        SET(jm, "fp32_gflops", rpx_json_real_or_null(m->fp32_gflops));
        SET(jm, "fp64_gflops", rpx_json_real_or_null(m->fp64_gflops));
        SET(jm, "triad_gbps", rpx_json_real_or_null(m->triad_gbps));
        SET(jm, "triad_bytes_per_array", json_integer((json_int_t)m->triad_bytes));
        SET(jm, "seconds", rpx_json_real_or_null(m->seconds));
    }
    SET(o, "measured", jm);
    SET(o, "ratio_fp32", rpx_json_real_or_null(m ? m->fp32_gflops / e->fp32_gflops : NAN));
    SET(o, "ratio_fp64", rpx_json_real_or_null(m ? m->fp64_gflops / e->fp64_gflops : NAN));
#undef SET
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}
