/* build_info.c — owns the card's `build` section: which rpxprof made the
 * numbers and how it was compiled. The build system may define RPX_GIT_COMMIT,
 * RPX_BUILD_TYPE and RPX_C_FLAGS (strings); without them those fields are
 * null with a reason, and what the compiler itself says (__VERSION__,
 * __OPTIMIZE__, NDEBUG, sanitizers) is still recorded. */
#include <stdio.h>

#include "system/system_internal.h"

#ifndef RPX_VERSION
#define RPX_VERSION "unknown"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define RPX__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RPX__ASAN 1
#endif
#endif
#ifndef RPX__ASAN
#define RPX__ASAN 0
#endif

json_t *rpx__sys_build_section(json_t *warnings)
{
    json_t *b = json_object();
    int optimized;
    if (!b) return NULL;
    rpx__sys_put(b, "rpxprof_version", json_string(RPX_VERSION));
#ifdef RPX_HAVE_GIT_COMMIT_H
#include "rpx_git_commit.h" /* generated at build time: cmake/git_commit.cmake */
#endif
#ifdef RPX_GIT_COMMIT
    rpx__sys_put(b, "git_commit", rpx__sys_jstr(RPX_GIT_COMMIT));
#else
    rpx__sys_null(b, "git_commit", "not recorded: the build did not define RPX_GIT_COMMIT");
#endif
#if defined(__clang__)
    rpx__sys_put(b, "compiler", json_string("clang"));
#elif defined(__GNUC__)
    rpx__sys_put(b, "compiler", json_string("gcc"));
#else
    rpx__sys_null(b, "compiler", "not gcc or clang");
#endif
#ifdef __VERSION__
    rpx__sys_put(b, "compiler_version", rpx__sys_jstr(__VERSION__));
#else
    rpx__sys_null(b, "compiler_version", "the compiler defines no __VERSION__");
#endif
#ifdef RPX_BUILD_TYPE
    rpx__sys_put(b, "build_type", rpx__sys_jstr(RPX_BUILD_TYPE));
#else
    rpx__sys_null(b, "build_type", "not recorded: the build did not define RPX_BUILD_TYPE");
#endif
#ifdef RPX_C_FLAGS
    rpx__sys_put(b, "c_flags", rpx__sys_jstr(RPX_C_FLAGS));
#else
    rpx__sys_null(b, "c_flags", "not recorded: the build did not define RPX_C_FLAGS");
#endif
#ifdef __OPTIMIZE__
    optimized = 1;
#else
    optimized = 0;
#endif
    rpx__sys_put(b, "optimized", json_boolean(optimized));
#ifdef NDEBUG
    rpx__sys_put(b, "assertions", json_false());
#else
    rpx__sys_put(b, "assertions", json_true());
#endif
    {
        json_t *s = json_array();
        if (RPX__ASAN) json_array_append_new(s, json_string("address"));
        rpx__sys_put(b, "sanitizers", s);
    }
    rpx__sys_put(b, "c_standard", json_integer(__STDC_VERSION__));
    if (!optimized)
        rpx__sys_warn(warnings, "rpxprof was built without optimisation (a debug build): its timing "
                  "loop costs more per call than a release build's.");
    if (RPX__ASAN)
        rpx__sys_warn(warnings, "rpxprof was built with AddressSanitizer: every allocation in the "
                  "process, the model's included, is slower than in a normal build.");
    rpx__sys_finish(b, 1);
    return b;
}
