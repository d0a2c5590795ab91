/* rpxprof/api.h — RPX_API, the mark of a function that librpxprof.so exports.
 *
 * The library is built with -fvisibility=hidden: only declarations marked
 * RPX_API in the installed headers (include/rpxprof/) are visible to a program
 * that links librpxprof.so; the rpx__ internals and the functions declared in
 * the internal headers under src/ are not (libuv's UV_EXTERN). Model authors
 * do not need it: model.h declares nothing the library exports. */
#ifndef RPXPROF_API_H
#define RPXPROF_API_H

#if defined(__GNUC__) && __GNUC__ >= 4
#define RPX_API __attribute__((visibility("default")))
#else
#define RPX_API
#endif

#endif
