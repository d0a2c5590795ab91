/* ort_graph.c — which nodes of the model file each node ONNX Runtime ran
 * covers. ORT's graph optimisations (graph_opt basic and above) fold
 * BatchNormalization into Conv, fuse Conv+Relu into FusedConv, rewrite
 * layouts (NCHWc at `all`), and name the new nodes as they like; the tensors
 * on the edges that survive mostly keep their names. So the optimised model
 * (saved by ORT itself through SetOptimizedModelFilePath) is read beside the
 * original; each tensor of it is given the file's tensor it stands for (its
 * alias, below); and a node of it covers the original nodes found by walking
 * back from its outputs' aliases through their producers in the original
 * graph, stopping at its own inputs' aliases, at tensors another optimised
 * node produces, and at the graph's inputs and weights. A node of the same name
 * that covers only itself maps to null (target.h: "the node of that name
 * itself"); a node the optimiser added that covers none (a layout reorder)
 * maps to [].
 *
 * What ONNX Runtime 1.31.1 does, seen on torchvision's resnet18 (opset 13):
 * at `basic` BatchNormalization is folded into the Conv, which keeps its
 * name; at `extended` Conv+Relu becomes FusedConv under the Conv's name; at
 * `all` the NCHWc layout transformer renames each node after its output
 * tensor with "_nchwc" appended ("/relu/Relu_output_0_nchwc" is conv1 with
 * its Relu) whose output is a new "reorder_token_N", and adds ReorderInput/
 * ReorderOutput. It also fuses the residual Add and the Relu after it into
 * the Conv before ("Sum" input) while naming the node after the Conv's
 * output. So a tensor's alias is: its own name where the file has it; else,
 * for the output of a node named "T_nchwc", the file's tensor T; and an
 * alias is then carried forward through the file's nodes the optimised
 * graph no longer shows (a single consumer whose output no optimised
 * tensor stands for and whose other inputs the node already has): the
 * residual Add and Relu land in the Conv they were fused into. Nodes whose
 * every input is a weight (torch's
 * Identity on a shared initializer, Constant) are folded when the session is
 * made, never run in a call: no node covers them. */
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

#define NCHWC "_nchwc"

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

/* tensor name -> how many nodes of `g` read it (as the JSON integer) */
static json_t *consumers(const Onnx__GraphProto *g)
{
    json_t *o = json_object();
    size_t i, k;
    for (i = 0; o && i < g->n_node; i++)
        for (k = 0; k < g->node[i]->n_input; k++) {
            const char *t = g->node[i]->input[k];
            if (t[0])
                json_object_set_new(o, t, json_integer(json_integer_value(json_object_get(o, t)) + 1));
        }
    return o;
}

/* The tensors of the file computed from weights alone (outputs of nodes
 * whose every input is an initializer or such a tensor): folded by ORT. */
static json_t *constants(const Onnx__GraphProto *g)
{
    json_t *c = json_object();
    size_t i, k;
    for (i = 0; c && i < g->n_initializer; i++)
        if (g->initializer[i]->name) json_object_set_new(c, g->initializer[i]->name, json_true());
    for (i = 0; c && i < g->n_input; i++) /* an initializer that is an input can be fed */
        if (g->input[i]->name) json_object_del(c, g->input[i]->name);
    for (i = 0; c && i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        int all = 1;
        for (k = 0; k < n->n_input && all; k++) all = !n->input[k][0] || json_object_get(c, n->input[k]);
        if (all)
            for (k = 0; k < n->n_output; k++)
                if (n->output[k][0]) json_object_set_new(c, n->output[k], json_true());
    }
    return c;
}

typedef struct graphs {
    const Onnx__GraphProto *orig, *opt;
    json_t *orig_prod, *orig_uses, *consts;
    json_t *alias;                /* optimised tensor -> the file's tensor */
    json_t *shown;                /* the file's tensors some optimised tensor stands for */
    json_t *opt_prod;             /* the file's tensor (an alias) -> optimised node index */
} graphs;

/* First pass: a tensor's own name, or T for the output of a node "T_nchwc". */
static void alias_by_name(graphs *g)
{
    size_t i, k, m = strlen(NCHWC);
    char buf[1024];
    for (i = 0; i < g->orig->n_input; i++)
        json_object_set_new(g->alias, g->orig->input[i]->name, json_string(g->orig->input[i]->name));
    for (i = 0; i < g->opt->n_node; i++) {
        const Onnx__NodeProto *f = g->opt->node[i];
        const char *name = f->name ? f->name : "";
        size_t n = strlen(name);
        for (k = 0; k < f->n_output; k++) {
            const char *t = f->output[k], *a = NULL;
            if (json_object_get(g->orig_prod, t))
                a = t;
            else if (f->n_output == 1 && n > m && strcmp(name + n - m, NCHWC) == 0) {
                snprintf(buf, sizeof buf, "%.*s", (int)(n - m), name);
                if (json_object_get(g->orig_prod, buf)) a = buf;
            }
            if (a) {
                json_object_set_new(g->alias, t, json_string(a));
                json_object_set_new(g->shown, a, json_true());
            }
        }
    }
}

static const char *alias_of(const graphs *g, const char *t)
{
    return json_string_value(json_object_get(g->alias, t));
}

/* The aliases of node f's inputs. */
static json_t *inputs_of(const graphs *g, const Onnx__NodeProto *f)
{
    json_t *fin = json_object();
    size_t k;
    for (k = 0; fin && k < f->n_input; k++) {
        const char *a = alias_of(g, f->input[k]);
        if (a) json_object_set_new(fin, a, json_true());
    }
    return fin;
}

/* Second pass, in the optimised graph's (topological) order: an output's
 * alias carried forward through fused-away nodes (see above). */
static void alias_forward(graphs *g)
{
    size_t i, k, j, q;
    for (i = 0; i < g->opt->n_node; i++) {
        const Onnx__NodeProto *f = g->opt->node[i];
        json_t *fin = inputs_of(g, f);
        for (k = 0; k < f->n_output; k++) {
            const char *a = alias_of(g, f->output[k]);
            int steps = 0;
            while (a && json_integer_value(json_object_get(g->orig_uses, a)) == 1 && steps++ < 64) {
                const Onnx__NodeProto *n = NULL;
                int ok = 1;
                for (j = 0; !n && j < g->orig->n_node; j++)
                    for (q = 0; q < g->orig->node[j]->n_input; q++)
                        if (strcmp(g->orig->node[j]->input[q], a) == 0) n = g->orig->node[j];
                if (!n || n->n_output != 1 || json_object_get(g->shown, n->output[0])) break;
                for (q = 0; q < n->n_input && ok; q++)
                    ok = !n->input[q][0] || strcmp(n->input[q], a) == 0 ||
                         json_object_get(fin, n->input[q]) || json_object_get(g->consts, n->input[q]);
                if (!ok) break;
                a = n->output[0];
            }
            if (a) { /* `a` may be the alias's own string, which the first set frees */
                json_t *name = json_string(a);
                json_object_set_new(g->shown, a, json_true());
                json_object_set_new(g->opt_prod, a, json_integer((json_int_t)i));
                json_object_set_new(g->alias, f->output[k], name);
            }
        }
        json_decref(fin);
    }
}

static json_t *covered(const graphs *g, const Onnx__NodeProto *f, size_t f_index)
{
    json_t *stack = json_array(), *seen = json_object(), *fin = inputs_of(g, f), *names = json_array();
    size_t k;
    for (k = 0; k < f->n_output; k++) {
        const char *t = alias_of(g, f->output[k]);
        if (t && json_object_get(g->orig_prod, t) && !json_object_get(fin, t) &&
            !json_object_get(g->consts, t))
            json_array_append_new(stack, json_string(t));
    }
    while (json_array_size(stack) > 0) {
        size_t last = json_array_size(stack) - 1;
        json_t *p = json_object_get(g->orig_prod, json_string_value(json_array_get(stack, last)));
        const Onnx__NodeProto *n;
        char key[32];
        json_array_remove(stack, last);
        if (!p) continue;
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(p));
        if (json_object_get(seen, key)) continue;
        json_object_set_new(seen, key, json_true());
        n = g->orig->node[json_integer_value(p)];
        for (k = 0; k < n->n_input; k++) {
            const char *u = n->input[k];
            json_t *other = json_object_get(g->opt_prod, u);
            if (!u[0] || json_object_get(fin, u) || !json_object_get(g->orig_prod, u) ||
                json_object_get(g->consts, u))
                continue;
            if (other && (size_t)json_integer_value(other) != f_index) continue;
            json_array_append_new(stack, json_string(u));
        }
    }
    for (k = 0; k < g->orig->n_node; k++) { /* in the model file's order */
        char key[32];
        snprintf(key, sizeof key, "%zu", k);
        if (json_object_get(seen, key))
            json_array_append_new(names, json_string(g->orig->node[k]->name ? g->orig->node[k]->name : ""));
    }
    json_decref(stack);
    json_decref(seen);
    json_decref(fin);
    return names;
}

int rpx__ort_node_map(const char *original, const char *optimised, json_t **map, rpx_error *err)
{
    Onnx__ModelProto *a = load_model(original, err), *b = a ? load_model(optimised, err) : NULL;
    json_t *orig_names, *out;
    graphs g;
    size_t i;
    *map = NULL;
    if (!a || !b) {
        if (a) onnx__model_proto__free_unpacked(a, NULL);
        return err && err->code ? err->code : RPX_EFORMAT;
    }
    g.orig = a->graph;
    g.opt = b->graph;
    g.orig_prod = producers(a->graph);
    g.orig_uses = consumers(a->graph);
    g.consts = constants(a->graph);
    g.alias = json_object();
    g.shown = json_object();
    g.opt_prod = json_object();
    alias_by_name(&g);
    alias_forward(&g);
    orig_names = json_object();
    out = json_object();
    for (i = 0; i < a->graph->n_node; i++)
        if (a->graph->node[i]->name)
            json_object_set_new(orig_names, a->graph->node[i]->name, json_true());
    for (i = 0; out && i < b->graph->n_node; i++) {
        const Onnx__NodeProto *f = b->graph->node[i];
        json_t *c = covered(&g, f, i);
        const char *name = f->name ? f->name : "";
        int self = json_object_get(orig_names, name) &&
                   (json_array_size(c) == 0 ||
                    (json_array_size(c) == 1 &&
                     strcmp(json_string_value(json_array_get(c, 0)), name) == 0));
        json_object_set_new(out, name, self ? (json_decref(c), json_null()) : c);
    }
    json_decref(g.orig_prod);
    json_decref(g.orig_uses);
    json_decref(g.consts);
    json_decref(g.alias);
    json_decref(g.shown);
    json_decref(g.opt_prod);
    json_decref(orig_names);
    onnx__model_proto__free_unpacked(a, NULL);
    onnx__model_proto__free_unpacked(b, NULL);
    if (!out) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    *map = out;
    return 0;
}
