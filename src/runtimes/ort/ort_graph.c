/* ort_graph.c — which nodes of the model file each node ONNX Runtime ran
 * covers. ORT's graph optimisations (graph_opt basic and above) fold
 * BatchNormalization into Conv, fuse Conv+Relu into FusedConv, rewrite
 * layouts (NCHWc at `all`), and name the new nodes as they like; the tensors
 * on the edges that survive keep their names. So the optimised model (saved
 * by ORT itself through SetOptimizedModelFilePath) is read beside the
 * original, and a node of it covers the original nodes found by walking
 * back from its outputs through their producers in the original graph,
 * stopping at its own inputs, at tensors another optimised node still
 * produces, and at the graph's inputs and weights. A node of the same name
 * that covers only itself maps to null (target.h: "the node of that name
 * itself"); a node the optimiser added that covers none (a layout reorder)
 * maps to []. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "runtimes/ort/ort_internal.h"

static Onnx__ModelProto *load_model(const char *path, rpx_error *err)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long len;
    Onnx__ModelProto *m = NULL;
    if (!f) {
        rpx_error_set(err, RPX_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len)) && fread(buf, 1, (size_t)len, f) == (size_t)len)
        m = onnx__model_proto__unpack(NULL, (size_t)len, buf);
    fclose(f);
    free(buf);
    if (!m || !m->graph) {
        if (m) onnx__model_proto__free_unpacked(m, NULL);
        rpx_error_set(err, RPX_EFORMAT, "%s: not an ONNX model that could be read", path);
        return NULL;
    }
    return m;
}

/* tensor name -> index of the node of `g` producing it */
static json_t *producers(const Onnx__GraphProto *g)
{
    json_t *o = json_object();
    size_t i, k;
    for (i = 0; o && i < g->n_node; i++)
        for (k = 0; k < g->node[i]->n_output; k++)
            if (g->node[i]->output[k][0])
                json_object_set_new(o, g->node[i]->output[k], json_integer((json_int_t)i));
    return o;
}

static json_t *covered(const Onnx__GraphProto *orig, const json_t *orig_prod,
                       const json_t *opt_prod, const Onnx__NodeProto *f, size_t f_index)
{
    json_t *stack = json_array(), *seen = json_object(), *fin = json_object(), *names = json_array();
    size_t k;
    for (k = 0; k < f->n_input; k++) json_object_set_new(fin, f->input[k], json_true());
    for (k = 0; k < f->n_output; k++)
        if (json_object_get(orig_prod, f->output[k])) json_array_append_new(stack, json_string(f->output[k]));
    while (json_array_size(stack) > 0) {
        size_t last = json_array_size(stack) - 1;
        const char *t = json_string_value(json_array_get(stack, last));
        json_t *p = json_object_get(orig_prod, t);
        const Onnx__NodeProto *n;
        char key[32];
        json_array_remove(stack, last);
        if (!p) continue;
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(p));
        if (json_object_get(seen, key)) continue;
        json_object_set_new(seen, key, json_true());
        n = orig->node[json_integer_value(p)];
        for (k = 0; k < n->n_input; k++) {
            const char *u = n->input[k];
            json_t *other = json_object_get(opt_prod, u);
            if (!u[0] || json_object_get(fin, u) || !json_object_get(orig_prod, u)) continue;
            if (other && (size_t)json_integer_value(other) != f_index) continue;
            json_array_append_new(stack, json_string(u));
        }
    }
    /* in the model file's order */
    for (k = 0; k < orig->n_node; k++) {
        char key[32];
        snprintf(key, sizeof key, "%zu", k);
        if (json_object_get(seen, key))
            json_array_append_new(names, json_string(orig->node[k]->name ? orig->node[k]->name : ""));
    }
    json_decref(stack);
    json_decref(seen);
    json_decref(fin);
    return names;
}

int rpx__ort_node_map(const char *original, const char *optimised, json_t **map, rpx_error *err)
{
    Onnx__ModelProto *a = load_model(original, err), *b = a ? load_model(optimised, err) : NULL;
    json_t *orig_prod, *opt_prod, *orig_names, *out;
    size_t i;
    *map = NULL;
    if (!a || !b) {
        if (a) onnx__model_proto__free_unpacked(a, NULL);
        return err->code ? err->code : RPX_EFORMAT;
    }
    orig_prod = producers(a->graph);
    opt_prod = producers(b->graph);
    orig_names = json_object();
    out = json_object();
    for (i = 0; i < a->graph->n_node; i++)
        if (a->graph->node[i]->name)
            json_object_set_new(orig_names, a->graph->node[i]->name, json_true());
    for (i = 0; out && i < b->graph->n_node; i++) {
        const Onnx__NodeProto *f = b->graph->node[i];
        json_t *c = covered(a->graph, orig_prod, opt_prod, f, i);
        const char *name = f->name ? f->name : "";
        int self = json_object_get(orig_names, name) &&
                   (json_array_size(c) == 0 ||
                    (json_array_size(c) == 1 &&
                     strcmp(json_string_value(json_array_get(c, 0)), name) == 0));
        json_object_set_new(out, name, self ? (json_decref(c), json_null()) : c);
    }
    json_decref(orig_prod);
    json_decref(opt_prod);
    json_decref(orig_names);
    onnx__model_proto__free_unpacked(a, NULL);
    onnx__model_proto__free_unpacked(b, NULL);
    if (!out) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    *map = out;
    return 0;
}
