/* rpxprof/target.h — how a callable is reached.
 *
 * Every kind of target (shared object, packaged demo, and later Python and
 * HTTP) hands the timing loop the same thing: a call function with the model
 * ABI's signature plus its state. The loop knows nothing else about it.
 *
 * Lifecycle: rpx_target_open(spec) → rpx_target_setup → (timed calls through
 * target->call) → rpx_target_close (runs teardown, unloads). */
#ifndef RPXPROF_TARGET_H
#define RPXPROF_TARGET_H

#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*rpx_call_fn)(void *state, const rpx_inputs *inputs, rpx_error *error);

typedef enum rpx_target_kind {
    RPX_TARGET_SHARED_OBJECT = 1,
    RPX_TARGET_PYTHON,
    RPX_TARGET_HTTP
} rpx_target_kind;

typedef struct rpx_target {
    rpx_target_kind kind;
    const char *kind_name;        /* "shared_object", "python", "http" */
    char *spec;                   /* the --model text as given */
    char *path;                   /* resolved library path (shared objects) */
    char *symbol;                 /* function name */
    rpx_call_fn call;             /* the timed call */
    void *state;                  /* handed to call; set by setup */
    /* internal */
    void *handle;
    int (*setup_fn)(void **state, const rpx_inputs *inputs, const rpx_run_info *info,
                    rpx_error *error);
    void (*teardown_fn)(void *state);
    int setup_done;
} rpx_target;

/* Parse `spec` (PATH:SYMBOL, rpxprof-demo:SYMBOL, module:function, http(s)://...)
 * and load it. Errors name the target and the fix. */
int rpx_target_open(const char *spec, rpx_target **out, rpx_error *err);
/* Run the optional NAME_setup once (outside timing). */
int rpx_target_setup(rpx_target *t, const rpx_inputs *inputs, const rpx_run_info *info,
                     rpx_error *err);
/* Run the optional NAME_teardown (if setup ran) and unload. NULL is fine. */
void rpx_target_close(rpx_target *t);

/* Path of the packaged demo library (librpxprof-demo.so), found next to the
 * running rpxprof, in ../lib/rpxprof, or where it was installed; the
 * environment variable RPX_DEMO_LIBRARY overrides. NULL if not found. */
const char *rpx_demo_library_path(char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
