/* atomic_write.c — owns rpx_write_file_atomic, the one-call form of the output
 * guard (src/common/output.c) for a writer that has all its data at once: the
 * data replaces only a file of its own kind (a report of the same schema, an
 * rpxprof figure), never an input, a device or another file; "-" and devices
 * are streamed to. A writer that measures first opens the guard itself. */
#include <stddef.h>

#include "rpxprof/error.h"
#include "common/output.h"
#include "common/json.h"

void rpx__output_sniff(const void *data, size_t len, rpx_output_options *opt, char *schema,
                       size_t size);

int rpx_write_file_atomic(const char *path, const void *data, size_t len, rpx_error *err)
{
    rpx_output_options opt;
    rpx_output *o;
    char schema[128];
    int rc;
    rpx__output_sniff(data, len, &opt, schema, sizeof schema);
    if ((rc = rpx_output_open(path, &opt, &o, err)) != 0) return rc;
    return rpx_output_commit(o, data, len, err);
}
