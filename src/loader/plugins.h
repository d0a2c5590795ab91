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
/* Bumped whenever rpx_target, rpx_target_hooks, rpx_kv or this contract
 * change; a new option of a kind changes none of them. */
#define RPX_PLUGIN_ABI 4

/* A kind's own options as they cross to its plugin: name = value pairs that
 * the plugin reads by name (loader/kv.h), never a struct whose fields the
 * plugin ABI would hold. A name may come several times (each --header). */
typedef enum rpx_kv_type { RPX_KV_TEXT = 1, RPX_KV_NUMBER, RPX_KV_INTEGER } rpx_kv_type;
typedef struct rpx_kv {
    const char *name;
    rpx_kv_type type;
    const char *text;             /* RPX_KV_TEXT (borrowed: valid for the run) */
    double number;                /* RPX_KV_NUMBER */
    long long integer;            /* RPX_KV_INTEGER */
} rpx_kv;
typedef struct rpx_kv_list {
    const rpx_kv *items;
    size_t n;
} rpx_kv_list;

/* Each plugin exports `const int rpx_<kind>_plugin_abi = RPX_PLUGIN_ABI` and
 * `rpx_<kind>_plugin_open` of this type: fill t->hooks (call, state and the
 * rest; t->spec, display_spec, path and symbol are set) from `opts`, refusing
 * a name it does not know or a value of the wrong type by name
 * (RPX_EINVAL). */
typedef int (*rpx_plugin_open_fn)(rpx_target *t, const rpx_kv_list *opts, rpx_error *err);

#define RPX_PLUGIN_EXPORT __attribute__((visibility("default")))

#endif
