/* rpxprof/error.h — error codes and the caller-owned error buffer.
 *
 * Every library function returns 0 on success or a negative RPX_E* code; the
 * human-readable detail goes into an rpx_error the caller owns. Messages name
 * the file, the field and what would fix the problem.
 *
 * rpx_error itself stays in model.h: a model author fills it and includes
 * only model.h, linking nothing of rpxprof's, so the ABI header must be
 * complete on its own. This header builds on it (codes, rpx_error_set), and
 * never the other way round. */
#ifndef RPXPROF_ERROR_H
#define RPXPROF_ERROR_H

#include "rpxprof/model.h" /* rpx_error */

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X-macro table: name, value, short description. */
#define RPX_ERRNO_MAP(X)                                                  \
    X(INVAL, -1, "invalid argument")                                      \
    X(NOMEM, -2, "out of memory")                                         \
    X(IO, -3, "input/output error")                                       \
    X(FORMAT, -4, "malformed file")                                       \
    X(UNSUPPORTED, -5, "unsupported feature")                             \
    X(NOTFOUND, -6, "not found")                                          \
    X(ABI, -7, "model ABI mismatch")                                      \
    X(MODEL, -8, "the profiled function failed")                          \
    X(UNAVAILABLE, -9, "not available on this machine")                   \
    X(INTERRUPTED, -10, "interrupted")                                     \
    X(USAGE, -11, "an option names something that does not exist")

enum {
#define RPX__ERR_ENUM(name, val, desc) RPX_E##name = (val),
    RPX_ERRNO_MAP(RPX__ERR_ENUM)
#undef RPX__ERR_ENUM
};

/* Short description of an error code ("malformed file"); never NULL. */
RPX_API const char *rpx_strerror(int code);
/* Name of an error code ("RPX_EFORMAT"); never NULL. */
RPX_API const char *rpx_err_name(int code);

/* Format into err (may be NULL) and return code. printf-style. */
RPX_API int rpx_error_set(rpx_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix the current message with "prefix: " (e.g. a file name). */
RPX_API void rpx_error_prefix(rpx_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
RPX_API void rpx_error_clear(rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
