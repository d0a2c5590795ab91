/* fuzz_gpu_spec — the user GPU spec file reader (src/roofline/spec_file.c) on
 * arbitrary bytes: jansson parses them, then rpx_gpu_table_load_json checks
 * every entry and either keeps all of them or none. */
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "rpxprof/roofline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpx_gpu_table *t = NULL;
    rpx_error err = {0};
    json_error_t je;
    json_t *root = json_loadb((const char *)data, size, 0, &je);
    size_t i;
    if (!root) return 0;
    if (rpx_gpu_table_create(&t) == 0) {
        if (rpx_gpu_table_load_json(t, root, "fuzz.json", &err) == 0)
            for (i = 0; i < rpx_gpu_table_count(t); i++) {
                json_t *j = rpx_gpu_spec_json(rpx_gpu_table_at(t, i));
                json_decref(j);
            }
        rpx_gpu_table_free(t);
    }
    json_decref(root);
    return 0;
}
