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

#endif
