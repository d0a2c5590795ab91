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

/* Arrays written without being held (a report's per-call arrays: ten million
 * samples would take a gigabyte as a tree). rpx_json_lazy_array returns a
 * placeholder for an array of n values that get(e, i) makes one at a time
 * (a new reference, or NULL for null); rpx_json_write_output_lazy writes the
 * tree with each placeholder's values in its place, streaming the text to the
 * output in pieces of about 1 MiB; rpx_json_lazy_materialise then puts the
 * real arrays in the tree (a caller that reads them), or rpx_json_lazy_drop
 * puts null there (one that does not). With z NULL (or its table full) the
 * array is made at once, as before. The entry's a, b, k are the getter's. */
typedef struct rpx_json_lazy_entry rpx_json_lazy_entry;
typedef json_t *(*rpx_json_lazy_get)(const rpx_json_lazy_entry *e, size_t i);
struct rpx_json_lazy_entry {
    size_t n;
    rpx_json_lazy_get get;
    const void *a;
    void *b;                      /* freed with the table: drop(b), or free(b) when drop is NULL */
    size_t k;
    void (*drop)(void *b);
};
#define RPX_JSON_LAZY_MAX 8
typedef struct rpx_json_lazy {
    char tag[48];                 /* the placeholders' prefix, unique to this table */
    size_t n;
    rpx_json_lazy_entry e[RPX_JSON_LAZY_MAX];
} rpx_json_lazy;

void rpx_json_lazy_init(rpx_json_lazy *z);
void rpx_json_lazy_free(rpx_json_lazy *z);
json_t *rpx_json_lazy_array(rpx_json_lazy *z, size_t n, rpx_json_lazy_get get, const void *a,
                            void *b, size_t k, void (*drop)(void *b));
int rpx_json_write_output_lazy(rpx_output *o, const json_t *value, const rpx_json_lazy *z,
                               rpx_error *err);
/* 0, or -1 out of memory (the placeholders left are null then) */
int rpx_json_lazy_materialise(json_t *value, const rpx_json_lazy *z);
void rpx_json_lazy_drop(json_t *value, const rpx_json_lazy *z);

#ifdef __cplusplus
}
#endif
#endif
