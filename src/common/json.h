/* src/common/json.h — the JSON helpers every writer shares: numbers that are
 * null when not measured, rpxprof's serialisation (shortest round-trip reals,
 * locale-independent, arrays of scalars on one line) and writing a file
 * through the output guard (src/common/output.h). Knows nothing of reports. */
#ifndef RPXPROF_JSON_H
#define RPXPROF_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "rpxprof/error.h"
#include "common/output.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A real, or null when it is NaN or infinite. Never NULL (except out of memory). */
json_t *rpx_json_real_or_null(double v);
/* A size in bytes as MiB (bytes / 2^20), or null when bytes < 0. */
json_t *rpx_json_mib_or_null(int64_t bytes);

/* Serialise with 2-space indentation (arrays of scalars on one line).
 * Returns a malloc'ed NUL-terminated string, or NULL out of memory. */
char *rpx_json_dumps(const json_t *value);
/* Write `value` + "\n" to `path` atomically ("-" is stdout). Parent folders
 * are created. Goes through the output guard (src/common/output.h) in one call:
 * it replaces only a report of the same "schema" (or a new or empty file),
 * never an input, a folder or another file; devices and FIFOs are streamed to. */
int rpx_json_write_file(const char *path, const json_t *value, rpx_error *err);
/* Serialise `value` + "\n" and commit it to an output opened with
 * rpx_output_open (measure first, then write); frees `o` either way. */
int rpx_json_write_output(rpx_output *o, const json_t *value, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
