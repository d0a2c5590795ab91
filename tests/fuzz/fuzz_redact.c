/* fuzz_redact — every --model text goes through rpx_target_redact_spec before
 * it is shown; no input may crash it, overflow its buffer, or leave a URL's
 * user information visible (it must be replaced by "REDACTED@"). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1), *out;
    const char *sep, *host, *q, *p, *at = NULL;
    if (!in) return 0;
    memcpy(in, data, size);
    in[size] = '\0'; /* the text up to the first NUL, as argv would hold it */
    out = rpx_target_redact_spec(in);
    if (!out) abort();
    if (strlen(out) > 9 * strlen(in) + 16) abort();
    sep = strstr(in, "://");
    if (sep) {
        host = sep + 3;
        q = host + strcspn(host, "?");
        for (p = host; p < q; p++)
            if (*p == '@') at = p;
        if (at) {
            size_t plen = (size_t)(host - in);
            if (strncmp(out, in, plen) != 0 || strncmp(out + plen, "REDACTED@", 9) != 0) abort();
        }
    }
    (void)rpx_target_kind_name(in);
    (void)rpx_http_header_is_secret(in);
    free(out);
    free(in);
    return 0;
}
