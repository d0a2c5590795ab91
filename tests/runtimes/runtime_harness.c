/* runtime_harness.c — drives one runtime plugin of the model_file kind
 * (librpxprof-opencv.so, librpxprof-torch.so) through its C exports alone,
 * as rpxprof's loader would: rpx_NAME_plugin_abi, rpx_NAME_plugin_open with
 * name = value pairs, then setup, calls, outputs, layers_begin / profiled
 * calls / layers_end, section, unload. tests/cli/test_runtime_plugins.py
 * checks the hooks with it one by one (the raw layer events of each call, the
 * outputs), apart from the runner that `rpxprof run --model FILE` adds.
 *
 * usage: rpx-runtime-harness PLUGIN.so NAME INPUTS.npz [--calls N]
 *          [--profiled K] [--outputs OUT.npz] [-t name=text] [-i name=integer]...
 * stdout: {"section": the runtime block, "layers": the events | null,
 *          "outputs": [names]}; exit 1 with "STAGE: message" on stderr. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/plugins.h"
#include "rpxprof/error.h"
#include "rpxprof/npz.h"

#define MAX_KV 32

static int die(const char *stage, const rpx_error *err)
{
    fprintf(stderr, "%s: %s\n", stage, err && err->message[0] ? err->message : "failed");
    return 1;
}

static int parse_kv(rpx_kv *kv, char type, char *arg)
{
    char *eq = strchr(arg, '=');
    if (!eq) return -1;
    *eq = '\0';
    kv->name = arg;
    if (type == 't') {
        kv->type = RPX_KV_TEXT;
        kv->text = eq + 1;
    } else {
        kv->type = RPX_KV_INTEGER;
        kv->integer = strtoll(eq + 1, NULL, 10);
    }
    return 0;
}

static int write_outputs(rpx_target *t, const char *path, json_t *names, rpx_error *err)
{
    rpx_outputs out = {0, NULL};
    rpx_npz_writer *w = NULL;
    size_t i;
    if (!t->hooks.outputs) return rpx_error_set(err, RPX_EUNSUPPORTED, "no outputs hook");
    if (t->hooks.outputs(t->hooks.state, &out, err) != 0) return -1;
    if (path && rpx_npz_writer_open(path, 0, &w, err) != 0) return -1;
    for (i = 0; i < out.count; i++) {
        const rpx_tensor *o = &out.tensors[i];
        json_array_append_new(names, json_string(o->name));
        if (w && rpx_npz_writer_add(w, o->name, o->dtype, o->ndim, o->shape, o->data, err) != 0) {
            rpx_npz_writer_discard(w);
            return -1;
        }
    }
    return w ? rpx_npz_writer_close(w, err) : 0;
}

static int run(rpx_target *t, const rpx_inputs *in, long calls, long profiled,
               const char *out_path, rpx_error *err)
{
    rpx_run_info info = {RPX_MODEL_ABI_VERSION, "cpu", "fp32", "call", 1, calls};
    json_t *doc = json_object(), *names = json_array(), *events = NULL;
    const char *failed = NULL;
    long k;
    /* every way out frees what it made (LeakSanitizer in the ASan stage) */
    if (t->hooks.setup && t->hooks.setup(&t->hooks.state, in, &info, err) != 0) {
        json_decref(doc);
        json_decref(names);
        return die("setup", err);
    }
    for (k = 0; !failed && k < calls; k++)
        if (t->hooks.call(t->hooks.state, in, err) != 0) failed = "call";
    if (!failed && write_outputs(t, out_path, names, err) != 0) failed = "outputs";
    if (!failed && profiled > 0) {
        if (!t->hooks.layers_begin || !t->hooks.layers_end) {
            rpx_error_set(err, RPX_EUNSUPPORTED, "no layers hooks");
            failed = "layers";
        } else if (t->hooks.layers_begin(t->hooks.state, err) != 0) {
            failed = "layers_begin";
        }
        for (k = 0; !failed && k < profiled; k++)
            if (t->hooks.call(t->hooks.state, in, err) != 0) failed = "profiled call";
        if (!failed && t->hooks.layers_end(t->hooks.state, &events, err) != 0) failed = "layers_end";
    }
    if (!failed) {
        json_object_set_new(doc, "section", t->hooks.section ? t->hooks.section(t->hooks.state)
                                                             : json_null());
        json_object_set_new(doc, "layers", events ? events : json_null());
        json_object_set_new(doc, "outputs", names);
        json_dumpf(doc, stdout, JSON_INDENT(1));
        putchar('\n');
    } else {
        json_decref(names);
        json_decref(events);
    }
    json_decref(doc);
    if (t->hooks.teardown) t->hooks.teardown(t->hooks.state);
    return failed ? die(failed, err) : 0;
}

int main(int argc, char **argv)
{
    rpx_kv kv[MAX_KV];
    rpx_kv_list list = {kv, 0};
    rpx_error err = {0, ""};
    rpx_target t;
    rpx_npz *npz = NULL;
    long calls = 3, profiled = 0;
    const char *out_path = NULL;
    char sym[128];
    void *h;
    int i, rc;
    if (argc < 4) {
        fprintf(stderr, "usage: %s PLUGIN.so NAME INPUTS.npz [--calls N] [--profiled K] "
                        "[--outputs OUT.npz] [-t name=text] [-i name=integer]...\n", argv[0]);
        return 2;
    }
    for (i = 4; i < argc; i++) {
        if (i + 1 >= argc) return 2;
        if (strcmp(argv[i], "--calls") == 0) calls = atol(argv[++i]);
        else if (strcmp(argv[i], "--profiled") == 0) profiled = atol(argv[++i]);
        else if (strcmp(argv[i], "--outputs") == 0) out_path = argv[++i];
        else if ((strcmp(argv[i], "-t") == 0 || strcmp(argv[i], "-i") == 0) && list.n < MAX_KV) {
            if (parse_kv(&kv[list.n++], argv[i][1], argv[i + 1]) != 0) return 2;
            i++;
        } else return 2;
    }
    if (!(h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    snprintf(sym, sizeof sym, "rpx_%s_plugin_abi", argv[2]);
    const int *abi = (const int *)dlsym(h, sym);
    snprintf(sym, sizeof sym, "rpx_%s_plugin_open", argv[2]);
    rpx_plugin_open_fn open_fn = (rpx_plugin_open_fn)(uintptr_t)dlsym(h, sym);
    if (!abi || *abi != RPX_PLUGIN_ABI || !open_fn) {
        fprintf(stderr, "exports: rpx_%s_plugin_abi/open missing or ABI %d != %d\n", argv[2],
                abi ? *abi : -1, RPX_PLUGIN_ABI);
        return 1;
    }
    if (rpx_npz_load(argv[3], &npz, &err) != 0) return die("inputs", &err);
    memset(&t, 0, sizeof t);
    t.spec = t.display_spec = t.path = argv[1];
    if (open_fn(&t, &list, &err) != 0) {
        rpx_npz_free(npz); /* refused: nothing else to free (LeakSanitizer in the ASan stage) */
        return die("open", &err);
    }
    rc = run(&t, rpx_npz_inputs(npz), calls, profiled, out_path, &err);
    if (t.hooks.unload) t.hooks.unload(t.hooks.state);
    rpx_npz_free(npz);
    return rc;
}
