/* plugins.h — the contract between rpxprof and the target plugins that ship
 * with it: librpxprof-python.so (embeds CPython) and librpxprof-http.so
 * (libcurl). They are separate libraries so that rpxprof itself loads neither
 * libpython nor libcurl and its TLS stack: only a run of that kind does
 * (linking libcurl alone doubled the resident size of every run). */
#ifndef RPX_TARGET_PLUGINS_H
#define RPX_TARGET_PLUGINS_H

#include "rpxprof/target.h"

#define RPX_PYTHON_PLUGIN_FILE "librpxprof-python.so"
#define RPX_HTTP_PLUGIN_FILE "librpxprof-http.so"
/* Bumped whenever rpx_target, rpx_target_options or this contract change. */
#define RPX_PLUGIN_ABI 2

/* Each plugin exports `const int rpx_<kind>_plugin_abi = RPX_PLUGIN_ABI` and
 * `rpx_<kind>_plugin_open` of this type: fill t (call, hooks, state). */
typedef int (*rpx_plugin_open_fn)(rpx_target *t, const rpx_target_options *opt, rpx_error *err);

#define RPX_PLUGIN_EXPORT __attribute__((visibility("default")))

#endif
