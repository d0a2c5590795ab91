/* ort_probe.c — drives librpxprof-ort.so through its plugin ABI alone, as
 * the host will (open with kv pairs, setup, calls, outputs, section,
 * layers_begin / calls / layers_end), for tests/cli/test_ort_plugin.py:
 * the parts `rpxprof run` does not reach before the model_file kind and
 * --layers land (settings by name, the layers events).
 *   ort_probe PLUGIN MODEL INPUTS.npz OUT [NAME=VALUE ...]
 * writes OUT.json {"section", "events", "outputs": [names]} and OUT.npz (the
 * last call's outputs); on an error prints it and exits 1. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/plugins.h"
#include "rpxprof/error.h"
#include "rpxprof/npz.h"

#define CALLS 3

static int fail(const char *what, const rpx_error *err)
{
    fprintf(stderr, "ort_probe: %s: %s\n", what, err->message);
    return 1;
}

/* setup, calls, outputs, layers: 0 or 1 with the error printed */
static int drive(rpx_target *t, const rpx_inputs *in, const char *out, json_t **events,
                 json_t *names)
{
    rpx_error err;
    rpx_outputs outs;
    rpx_npz_writer *w = NULL;
    char path[4096];
    int i;
    memset(&err, 0, sizeof err);
    if (t->hooks.setup(&t->hooks.state, in, NULL, &err) != 0) return fail("setup", &err);
    t->setup_done = 1;
    for (i = 0; i < CALLS; i++) {
        if (t->hooks.call(t->hooks.state, in, &err) != 0) return fail("call", &err);
        if (i + 1 < CALLS) t->hooks.after_call(t->hooks.state, 1, 0);
    }
    if (t->hooks.outputs(t->hooks.state, &outs, &err) != 0) return fail("outputs", &err);
    snprintf(path, sizeof path, "%s.npz", out);
    if (rpx_npz_writer_open(path, 0, &w, &err) != 0) return fail("write", &err);
    for (i = 0; i < (int)outs.count; i++) {
        const rpx_tensor *o = &outs.tensors[i];
        json_array_append_new(names, json_string(o->name));
        if (rpx_npz_writer_add(w, o->name, o->dtype, o->ndim, o->shape, o->data, &err) != 0) {
            rpx_npz_writer_discard(w);
            return fail("write", &err);
        }
    }
    if (rpx_npz_writer_close(w, &err) != 0) return fail("write", &err);
    t->hooks.after_call(t->hooks.state, 1, 0);
    if (t->hooks.layers_begin(t->hooks.state, &err) != 0) return fail("layers_begin", &err);
    for (i = 0; i < CALLS; i++) {
        if (t->hooks.call(t->hooks.state, in, &err) != 0) return fail("call", &err);
        t->hooks.after_call(t->hooks.state, 0, 0);
    }
    if (t->hooks.layers_end(t->hooks.state, events, &err) != 0) return fail("layers_end", &err);
    return 0;
}

int main(int argc, char **argv)
{
    rpx_plugin_open_fn open_fn;
    rpx_target t;
    rpx_error err;
    rpx_kv kv[32];
    rpx_kv_list list = {kv, 0};
    rpx_npz *npz = NULL;
    json_t *events = NULL, *names = json_array();
    char path[4096];
    void *h;
    int i, rc = 1;
    if (argc < 5) {
        fprintf(stderr, "usage: ort_probe PLUGIN MODEL INPUTS.npz OUT [NAME=VALUE ...]\n");
        return 2;
    }
    memset(&err, 0, sizeof err);
    memset(&t, 0, sizeof t);
    if (!(h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "ort_probe: %s\n", dlerror());
        return 1;
    }
    *(void **)&open_fn = dlsym(h, "rpx_ort_plugin_open");
    kv[list.n++] = (rpx_kv){"model", RPX_KV_TEXT, argv[2], 0, 0};
    for (i = 5; i < argc && list.n < 32; i++) {
        char *eq = strchr(argv[i], '='), *end;
        long long v;
        if (!eq) continue;
        *eq = '\0';
        v = strtoll(eq + 1, &end, 10);
        kv[list.n++] = *end == '\0' && end != eq + 1 ? (rpx_kv){argv[i], RPX_KV_INTEGER, NULL, 0, v}
                                                     : (rpx_kv){argv[i], RPX_KV_TEXT, eq + 1, 0, 0};
    }
    t.spec = t.display_spec = argv[2];
    if (!open_fn || open_fn(&t, &list, &err) != 0)
        fail("open", &err);
    else if (rpx_npz_load(argv[3], &npz, &err) != 0)
        fail("inputs", &err);
    else if (drive(&t, rpx_npz_inputs(npz), argv[4], &events, names) == 0) {
        json_t *doc = json_pack("{s:o, s:o, s:O, s:i}", "section", t.hooks.section(t.hooks.state),
                                "events", events, "outputs", names, "profiled_calls", CALLS);
        snprintf(path, sizeof path, "%s.json", argv[4]);
        rc = json_dump_file(doc, path, JSON_INDENT(1)) == 0 ? 0 : 1;
        json_decref(doc);
    }
    if (t.setup_done && t.hooks.teardown) t.hooks.teardown(t.hooks.state);
    if (t.hooks.unload) t.hooks.unload(t.hooks.state);
    json_decref(names);
    rpx_npz_free(npz);
    return rc;
}
