/* kinds.h — what target.c (the --model grammar and the lifecycle) asks of
 * each kind of target. Each opener fills the target's call, hooks and state;
 * on failure target.c frees whatever it set (unload_fn, handle, strings). */
#ifndef RPX_TARGET_KINDS_H
#define RPX_TARGET_KINDS_H

#include "rpxprof/error.h"
#include "rpxprof/target.h"

/* t->spec, t->path and t->symbol are set. */
int rpx__shared_object_open(rpx_target *t, rpx_error *err);
/* t->spec is the URL. */
int rpx__http_open(rpx_target *t, const rpx_target_options *opt, rpx_error *err);
/* t->path is the module, t->symbol the function. */
int rpx__python_open(rpx_target *t, const rpx_target_options *opt, rpx_error *err);
/* The file of the plugin of `kind` ("python", "http") that a run would load,
 * or NULL when none is found. */
const char *rpx__plugin_path(const char *kind, char *buf, size_t size);
/* The files importing Python `module` reads, asked of the Python plugin in a
 * child process (this one stays without an interpreter): 0 and a malloc'ed
 * list (each malloc'ed), or -1 when it cannot tell (no plugin, no module). */
int rpx__python_module_files(const char *module, char ***files, size_t *n_files);

#endif
