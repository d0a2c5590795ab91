/* rpxprof/system.h — the system card: what hardware and software a
 * measurement ran on. Everything read from /proc, /sys and /etc goes through
 * rpx_sys_read, relative to the root named by RPX_SYSROOT (default "/"), so
 * tests run on captured snapshots of real machines. */
#ifndef RPXPROF_SYSTEM_H
#define RPXPROF_SYSTEM_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read a small text file (≤ size-1 bytes kept, NUL-terminated) from the
 * system root. Returns the bytes read, or -errno. */
long rpx_sys_read(const char *path, char *buf, size_t size);
/* The system root in force ("" for the real root). */
const char *rpx_sys_root(void);

typedef struct rpx_card_options {
    const char *device;           /* "cpu" | "cuda" */
    const char *precision;
    const char *batch_size;       /* as recorded by --meta batch_size, or NULL */
    const char *input_resolution; /* "HxW", or NULL */
} rpx_card_options;

/* Build the system card object. NULL only when out of memory. */
json_t *rpx_system_card(const rpx_card_options *opt, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
