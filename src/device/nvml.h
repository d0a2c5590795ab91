/* src/device/nvml.h — NVIDIA GPUs as NVML sees them, loaded at run time.
 *
 * libnvidia-ml.so.1 is opened with dlopen (RPX_NVML_LIBRARY names another
 * file, for tests and unusual installs); no NVML header or library is needed
 * to build. Every field that NVML cannot give is null, and the reason is kept.
 *
 * Lifecycle: rpx_nvml_open → rpx_nvml_gpus / rpx_nvml_conditions ... →
 * rpx_nvml_close. */
#ifndef RPXPROF_NVML_H
#define RPXPROF_NVML_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_nvml rpx_nvml;

/* Load NVML and initialise it. On failure *out is NULL and err says why, e.g.
 * "libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
 * or "nvmlInit_v2: Driver Not Loaded". */
int rpx_nvml_open(rpx_nvml **out, rpx_error *err);
void rpx_nvml_close(rpx_nvml *nvml);

/* The card's `gpus` array: one object per GPU NVML sees, with (null where
 * unknown) index, name, uuid, pci_bus_id, memory_total_mb, driver_version,
 * cuda_driver_version, compute_capability, multiprocessor_count,
 * clocks_mhz {sm, sm_max, memory, memory_max}, power_limit_w, temperature_c,
 * persistence_mode, mig_mode, ecc_mode, pcie {generation, width}, visible
 * (per CUDA_VISIBLE_DEVICES, by index or UUID), visible_ordinal (its CUDA
 * ordinal, or null), and `unavailable` {field: reason}. Sentences for the
 * card's warnings (persistence mode off, ...) are appended to `warnings`
 * (a JSON array) when it is not NULL. */
json_t *rpx_nvml_gpus(rpx_nvml *nvml, json_t *warnings);

/* Conditions of the visible GPUs now: per GPU, other processes using it
 * (pid, used memory) and the current clock-throttle reasons as names.
 * Warnings as above. */
json_t *rpx_nvml_conditions(rpx_nvml *nvml, json_t *warnings);

/* Watching the visible GPUs while the model runs (from the parent process,
 * outside the model's timed spans): rpx_nvml_watch_create → ..._sample as
 * often as the caller likes (it reads NVML at most once per interval_s and
 * returns 1 when it did) → ..._json → ..._free. The nvml handle must outlive
 * the watch. NULL when nvml is NULL or memory runs out. */
typedef struct rpx_nvml_watch rpx_nvml_watch;
rpx_nvml_watch *rpx_nvml_watch_create(rpx_nvml *nvml, double interval_s);
int rpx_nvml_watch_sample(rpx_nvml_watch *watch);
/* Per visible GPU: {index, visible_ordinal, samples, throttle_reasons_seen
 * (every reason active in any sample), sm_clock_mhz {min, max}, power_w_max,
 * temperature_c_max, unavailable {field: reason}}; a warning per GPU whose
 * clocks were held back (power, thermal, ...) in any sample. */
json_t *rpx_nvml_watch_json(const rpx_nvml_watch *watch, json_t *warnings);
void rpx_nvml_watch_free(rpx_nvml_watch *watch);
/* Every reading the watch took, in order (at most RPX_NVML_WATCH_READINGS; the
 * later ones are counted in *dropped): when (CLOCK_MONOTONIC ns), which GPU,
 * and its SM clock, power and temperature (NaN: not read). For the run's
 * trace (--timeline). */
#define RPX_NVML_WATCH_READINGS 65536
typedef struct rpx_nvml_reading {
    int64_t t_ns;
    unsigned int index;           /* NVML's index */
    int visible_ordinal;
    double sm_clock_mhz, power_w, temperature_c;
} rpx_nvml_reading;
size_t rpx_nvml_watch_readings(const rpx_nvml_watch *watch, const rpx_nvml_reading **readings,
                               long *dropped);

/* Driver version ("550.54.15") or NULL. */
const char *rpx_nvml_driver_version(rpx_nvml *nvml);

#ifdef __cplusplus
}
#endif
#endif
