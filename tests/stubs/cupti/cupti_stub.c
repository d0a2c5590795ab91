/* A fake CUPTI activity API for tests: kernels are "launched" by the test
 * model calling rpx_stub_cupti_kernel(start_ns, end_ns); cuptiActivityFlushAll
 * asks for a buffer, writes one 64-byte CONCURRENT_KERNEL record per kernel
 * (kind at offset 0, start at 16, end at 24, as the real packed records) and
 * hands it back through the completion callback.
 *   RPX_STUB_CUPTI_ENABLE_FAIL=n   cuptiActivityEnable returns n
 * Built with RPX_STUB_CUPTI_TOO_NEW (stubs/cupti-new/libcupti.so.13) it is a
 * CUPTI newer than the driver: it loads, and enabling answers
 * CUPTI_ERROR_NOT_INITIALIZED (15), as the real one does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*complete_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                            size_t valid);

#define RECORD 64
#define MAXK 4096

static request_fn req;
static complete_fn comp;
static int enabled;
static uint64_t pending[MAXK][2];
static size_t npending;

void rpx_stub_cupti_kernel(uint64_t start, uint64_t end)
{
    if (enabled && npending < MAXK) {
        pending[npending][0] = start;
        pending[npending][1] = end;
        npending++;
    }
}

int cuptiActivityRegisterCallbacks(request_fn r, complete_fn c)
{
    req = r;
    comp = c;
    return 0;
}

int cuptiActivityEnable(uint32_t kind)
{
    const char *fail = getenv("RPX_STUB_CUPTI_ENABLE_FAIL");
#ifdef RPX_STUB_CUPTI_TOO_NEW
    (void)kind;
    (void)fail;
    return 15; /* CUPTI_ERROR_NOT_INITIALIZED */
#endif
    if (fail && *fail) return atoi(fail);
    if (kind != 10) return 1;
    enabled = 1;
    return 0;
}

int cuptiActivityDisable(uint32_t kind)
{
    (void)kind;
    enabled = 0;
    return 0;
}

int cuptiActivityFlushAll(uint32_t flag)
{
    uint8_t *buf = NULL;
    size_t size = 0, max = 0, i, n;
    (void)flag;
    if (!req || !comp || npending == 0) return 0;
    req(&buf, &size, &max);
    if (!buf) return 0;
    n = npending < size / RECORD ? npending : size / RECORD;
    memset(buf, 0, n * RECORD);
    for (i = 0; i < n; i++) {
        uint32_t kind = 10;
        memcpy(buf + i * RECORD, &kind, 4);
        memcpy(buf + i * RECORD + 16, &pending[i][0], 8);
        memcpy(buf + i * RECORD + 24, &pending[i][1], 8);
    }
    npending = 0;
    comp(NULL, 0, buf, size, n * RECORD);
    return 0;
}

int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + RECORD : buffer;
    if ((size_t)(next - buffer) + RECORD > valid) return 12; /* MAX_LIMIT_REACHED */
    *record = next;
    return 0;
}

int cuptiGetResultString(int result, const char **str)
{
    *str = result == 0 ? "CUPTI_SUCCESS" : result == 15 ? "CUPTI_ERROR_NOT_INITIALIZED" : "CUPTI_ERROR_STUB";
    return 0;
}
