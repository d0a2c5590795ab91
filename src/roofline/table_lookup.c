/* table_lookup.c — owns what a caller of the GPU spec table needs around it:
 * loading the user's spec files ($RPX_GPU_SPECS, then each file named) and a
 * "did you mean" for a misspelt key (include/rpxprof/roofline.h). Used by
 * `rpxprof gpus` and `rpxprof roofline`; library code: nothing printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json_keys.h"
#include "rpxprof/error.h"
#include "rpxprof/roofline.h"

int rpx_gpu_table_load_all(rpx_gpu_table *t, const char *const *files, size_t n, rpx_error *err)
{
    size_t i;
    int rc;
    if ((rc = rpx_gpu_table_load_env(t, err)) != 0) return rc;
    for (i = 0; i < n; i++)
        if ((rc = rpx_gpu_table_load_file(t, files[i], err)) != 0) return rc;
    return 0;
}

const char *rpx_gpu_table_suggest(const rpx_gpu_table *t, const char *key, int with_host,
                                  char *buf, size_t size)
{
    size_t i, n = rpx_gpu_table_count(t);
    const char **keys = calloc(n + 1, sizeof *keys);
    const char *near;
    buf[0] = '\0';
    if (!keys) return buf;
    size_t np = 0, len = 0, kl = strlen(key);
    for (i = 0; i < n; i++) keys[i] = rpx_gpu_table_at(t, i)->key;
    keys[n] = "host-cpu";
    if (with_host) n++;
    /* a key the text begins (a100-sxm: a100-sxm-40gb, a100-sxm-80gb) */
    for (i = 0; kl && i < n; i++)
        if (strncasecmp(keys[i], key, kl) == 0) np++;
    if (np >= 1 && np <= 4) {
        size_t k = 0;
        len = (size_t)snprintf(buf, size, " did you mean");
        for (i = 0; i < n && len < size; i++) {
            if (strncasecmp(keys[i], key, kl) != 0) continue;
            len += (size_t)snprintf(buf + len, size - len, "%s'%s'",
                                    k == 0 ? " " : k + 1 == np ? " or " : ", ", keys[i]);
            k++;
        }
        if (len < size) snprintf(buf + len, size - len, "?");
    } else if ((near = rpx_json_nearest_key(key, keys, n)) != NULL) {
        snprintf(buf, size, " did you mean '%s'?", near);
    }
    free(keys);
    return buf;
}
