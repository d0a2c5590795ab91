/* error.c — owns the error-code table and the rpx_error buffer helpers. */
#include "rpxprof/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *rpx_strerror(int code)
{
    switch (code) {
    case 0: return "success";
#define RPX__ERR_DESC(name, val, desc) \
    case RPX_E##name: return desc;
        RPX_ERRNO_MAP(RPX__ERR_DESC)
#undef RPX__ERR_DESC
    }
    return "unknown error";
}

const char *rpx_err_name(int code)
{
    switch (code) {
    case 0: return "RPX_OK";
#define RPX__ERR_NAME(name, val, desc) \
    case RPX_E##name: return "RPX_E" #name;
        RPX_ERRNO_MAP(RPX__ERR_NAME)
#undef RPX__ERR_NAME
    }
    return "RPX_EUNKNOWN";
}

int rpx_error_set(rpx_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void rpx_error_prefix(rpx_error *err, const char *fmt, ...)
{
    char prefix[512];
    char old[RPX_ERROR_MESSAGE_SIZE];
    va_list ap;
    if (!err) return;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    old[sizeof old - 1] = '\0';
    {
        /* room for both; the result is cut to the message size */
        char joined[sizeof prefix + 2 + sizeof old];
        snprintf(joined, sizeof joined, "%s: %s", prefix, old);
        memcpy(err->message, joined, sizeof err->message - 1);
        err->message[sizeof err->message - 1] = '\0';
    }
}

void rpx_error_clear(rpx_error *err)
{
    if (!err) return;
    err->code = 0;
    err->message[0] = '\0';
}
