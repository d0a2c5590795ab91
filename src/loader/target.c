/* target.c — owns the lifecycle every kind shares: open through the kinds
 * table (or a caller's hooks), setup, samples, section, close. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/error.h"
#include "rpxprof/target.h"
#include "loader/kinds.h"

static void target_free(rpx_target *t)
{
    if (!t) return;
    if (t->hooks.unload) t->hooks.unload(t->hooks.state);
    if (t->handle) dlclose(t->handle);
    free(t->spec);
    free(t->display_spec);
    free(t->path);
    free(t->symbol);
    free(t);
}

static int out_of_memory(rpx_target *t, rpx_error *err)
{
    target_free(t);
    return rpx_error_set(err, RPX_ENOMEM, "out of memory");
}

int rpx_target_open_ex(const char *spec, const rpx_target_options *opt, rpx_target **out,
                       rpx_error *err)
{
    static const rpx_target_options none;
    const rpx_kind *kind;
    rpx_target *t;
    int rc;
    *out = NULL;
    if (!opt) opt = &none;
    if (!spec || !*spec) return rpx__kind_match(spec, spec, &kind, err);
    t = calloc(1, sizeof *t);
    if (!t) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    t->spec = strdup(spec);
    t->display_spec = rpx_target_redact_spec(spec);
    if (!t->spec || !t->display_spec) return out_of_memory(t, err);
    if (opt->custom) { /* the caller's hooks, as a kind's open would fill them */
        if (!opt->custom->call) {
            target_free(t);
            return rpx_error_set(err, RPX_EINVAL, "%s: a caller-made target needs a call", spec);
        }
        t->kind = rpx__kind_named(opt->custom->kind_name);
        t->kind_name = opt->custom->kind_name ? opt->custom->kind_name : t->kind->name;
        t->hooks = *opt->custom;
        *out = t;
        return 0;
    }
    /* the grammar through the kinds table; shown redacted: it may hold credentials */
    if ((rc = rpx__kind_match(spec, t->display_spec, &kind, err)) != 0) {
        target_free(t);
        return rc;
    }
    t->kind = kind;
    t->kind_name = kind->name;
    if ((rc = kind->open(t, opt, err)) != 0) {
        target_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int rpx_target_open(const char *spec, rpx_target **out, rpx_error *err)
{
    return rpx_target_open_ex(spec, NULL, out, err);
}

int rpx_target_setup(rpx_target *t, const rpx_inputs *inputs, const rpx_run_info *info,
                     rpx_error *err)
{
    rpx_error merr;
    int rc;
    if (!t) return RPX_EINVAL;
    /* a setup that fails cleans up after itself: teardown runs only after success */
    if (!t->hooks.setup) {
        t->setup_done = 1;
        return 0;
    }
    memset(&merr, 0, sizeof merr);
    rc = t->hooks.setup(&t->hooks.state, inputs, info, &merr);
    merr.message[sizeof merr.message - 1] = '\0'; /* the model may fill it to the end */
    if (rc != 0) {
        if (!rpx__kind_has(t->kind, RPX_KIND_C_ABI))
            return rpx_error_set(err, merr.code ? merr.code : RPX_EMODEL, "--model %s: %s",
                                 t->display_spec,
                                 merr.message[0] ? merr.message : "setup failed");
        return rpx_error_set(err, RPX_EMODEL, "--model %s: %s_setup failed (returned %d): %s",
                             t->spec, t->symbol, rc,
                             merr.message[0] ? merr.message : "no message given");
    }
    t->setup_done = 1;
    return 0;
}

int rpx_target_samples(rpx_target *t, const rpx_inputs *samples, size_t n, int writable,
                       rpx_error *err)
{
    rpx_error merr;
    int rc;
    if (!t || !t->hooks.samples) return 0;
    memset(&merr, 0, sizeof merr);
    rc = t->hooks.samples(t->hooks.state, samples, n, writable, &merr);
    merr.message[sizeof merr.message - 1] = '\0';
    if (rc != 0)
        return rpx_error_set(err, merr.code ? merr.code : RPX_EMODEL, "--model %s: %s",
                             t->display_spec, merr.message[0] ? merr.message : "cannot take the samples");
    return 0;
}

json_t *rpx_target_section(rpx_target *t)
{
    return t && t->hooks.section ? t->hooks.section(t->hooks.state) : NULL;
}

void rpx_target_close(rpx_target *t)
{
    if (!t) return;
    if (t->setup_done && t->hooks.teardown) t->hooks.teardown(t->hooks.state);
    target_free(t);
}
