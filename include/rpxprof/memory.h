/* rpxprof/memory.h — the memory profiler: host process peaks.
 *
 * lifetime peak: the process's peak resident set (VmHWM) over its whole life.
 * inference peak: the peak resident set from rpx_memory_begin_inference (after
 * warmup) to rpx_memory_end_inference, obtained by resetting the kernel's
 * high-water mark (writing 5 to /proc/self/clear_refs). Where the reset is
 * refused the inference peak is unavailable and `inference_reason` says why.
 * Values are bytes; -1 means unavailable. */
#ifndef RPXPROF_MEMORY_H
#define RPXPROF_MEMORY_H

#include <stdint.h>

#include "rpxprof/model.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpx_memory_peaks {
    int64_t lifetime_peak_bytes;  /* -1: unavailable, see lifetime_reason */
    int64_t inference_peak_bytes; /* -1: unavailable, see inference_reason */
    char lifetime_reason[256];
    char inference_reason[256];
    /* internal state between begin and end */
    int64_t hwm_before_reset;
    int reset_ok;
} rpx_memory_peaks;

/* Current resident set and its high-water mark of this process, in bytes. */
RPX_API int rpx_memory_read_self(int64_t *rss_bytes, int64_t *hwm_bytes, rpx_error *err);
/* Parse VmRSS / VmHWM ("kB" units) from the text of a /proc/PID/status file.
 * Only keys at the start of a line count. Either output may be NULL; each
 * requested one must be present: RPX_ENOTFOUND when missing, RPX_EFORMAT when
 * a VmRSS/VmHWM line is not "<number> kB". */
RPX_API int rpx_memory_parse_status(const char *text, int64_t *rss_bytes, int64_t *hwm_bytes);
/* The same, reading an open status file from its current offset to its end in
 * fixed-size chunks (no allocation; lines of any length). RPX_EIO with errno
 * set when read() fails. */
RPX_API int rpx_memory_parse_status_fd(int fd, int64_t *rss_bytes, int64_t *hwm_bytes);

RPX_API void rpx_memory_peaks_init(rpx_memory_peaks *p);
/* Record the lifetime peak so far, then reset the high-water mark (and check
 * that the kernel did reset it). Neither begin nor end allocates. */
RPX_API void rpx_memory_begin_inference(rpx_memory_peaks *p);
/* Read the high-water mark: inference peak and final lifetime peak. */
RPX_API void rpx_memory_end_inference(rpx_memory_peaks *p);

#ifdef __cplusplus
}
#endif
#endif
