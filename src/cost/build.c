/* build.c — the cost layer's representation of a model, from the unpacked
 * ModelProto: values (graph inputs, initializers, node outputs) and nodes in
 * flat arrays, one name map per graph (scopes chain to the enclosing graph),
 * subgraphs of If/Loop/Scan with the outer values they use, and the checks
 * that make a malformed graph an error naming the node or tensor. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost_internal.h"

/* ---- the representation ---------------------------------------------- */
static int new_val(rpx__ctx *c, const char *name, int graph, int kind)
{
    rpx__val *v;
    if (c->n_vals == c->cap_vals) {
        size_t cap = c->cap_vals ? c->cap_vals * 2 : 256;
        rpx__val *nv = realloc(c->vals, cap * sizeof *nv);
        if (!nv) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        c->vals = nv;
        c->cap_vals = cap;
    }
    if (c->n_vals >= (size_t)INT32_MAX)
        return rpx__fail(c, RPX_EFORMAT, "too many tensors");
    v = &c->vals[c->n_vals];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->graph = graph;
    v->kind = kind;
    v->producer = -1;
    v->rank = -1;
    v->elems = NAN;
    v->is_tensor = 1;
    v->first_use = -1;
    return (int)c->n_vals++;
}

static int lookup(const rpx__ctx *c, int graph, const char *name, int *found_in)
{
    int g;
    for (g = graph; g >= 0; g = c->graphs[g].parent) {
        int v = rpx__map_get(&c->graphs[g].names, name);
        if (v >= 0) {
            *found_in = g;
            return v;
        }
    }
    return -1;
}

static int define(rpx__ctx *c, int graph, int vid, const char *what)
{
    int prev = rpx__map_get(&c->graphs[graph].names, c->vals[vid].name);
    int rc;
    if (prev >= 0) {
        const rpx__val *p = &c->vals[prev];
        return rpx__fail(c, RPX_EFORMAT,
                         "tensor '%s' (%s) is defined twice (it is also %s%s%s); tensor names "
                         "must be unique: the file is damaged",
                         c->vals[vid].name, what,
                         p->kind == RPX__V_INPUT  ? "a graph input"
                         : p->kind == RPX__V_INIT ? "an initializer"
                                                  : "the output of node '",
                         p->kind == RPX__V_NODE ? c->nodes[p->producer].name : "",
                         p->kind == RPX__V_NODE ? "'" : "");
    }
    rc = rpx__map_put(&c->graphs[graph].names, c->vals[vid].name, vid);
    return rc < 0 ? rpx__fail(c, RPX_ENOMEM, "out of memory") : 0;
}

static int add_dep(rpx__ctx *c, int node, int vid)
{
    rpx__node *n = &c->nodes[node];
    size_t i;
    int *d;
    for (i = 0; i < n->n_dep; i++)
        if (n->dep[i] == vid) return 0;
    d = rpx__alloc(&c->arena, (n->n_dep + 1) * sizeof *d);
    if (!d) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    if (n->n_dep) memcpy(d, n->dep, n->n_dep * sizeof *d);
    d[n->n_dep++] = vid;
    n->dep = d;
    return 0;
}

static int opset_of(const rpx__ctx *c, const char *domain)
{
    size_t i;
    int std = !*domain || strcmp(domain, "ai.onnx") == 0;
    for (i = 0; i < c->m->n_opset_import; i++) {
        const char *d = c->m->opset_import[i]->domain ? c->m->opset_import[i]->domain : "";
        int dstd = !*d || strcmp(d, "ai.onnx") == 0;
        if ((std && dstd) || (!std && strcmp(d, domain) == 0))
            return c->m->opset_import[i]->has_version ? (int)c->m->opset_import[i]->version : 0;
    }
    return 0;
}

static int type_of(rpx__ctx *c, rpx__val *v, const Onnx__TypeProto *tp)
{
    const Onnx__TypeProto__Tensor *tt;
    size_t i;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
        v->is_tensor = tp == NULL; /* an untyped input: a tensor whose type is unknown */
        return 0;
    }
    tt = tp->tensor_type;
    v->dtype = tt->has_elem_type ? tt->elem_type : 0;
    if (!tt->shape) return 0;
    if (tt->shape->n_dim > RPX__MAX_RANK)
        return rpx__fail(c, RPX_EFORMAT, "tensor '%s' has %zu dimensions (at most %d)", v->name,
                         tt->shape->n_dim, RPX__MAX_RANK);
    v->rank = (int)tt->shape->n_dim;
    v->dims = rpx__alloc(&c->arena, (tt->shape->n_dim + 1) * sizeof *v->dims);
    v->sym = rpx__alloc(&c->arena, (tt->shape->n_dim + 1) * sizeof *v->sym);
    if (!v->dims || !v->sym) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    for (i = 0; i < tt->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        v->dims[i] = -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (d->dim_value > RPX__DIM_MAX)
                return rpx__fail(c, RPX_EFORMAT,
                                 "tensor '%s' has an absurd dimension %lld (dimension %zu); the "
                                 "file is damaged",
                                 v->name, (long long)d->dim_value, i);
            if (d->dim_value >= 0) v->dims[i] = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   d->dim_param && *d->dim_param) {
            v->sym[i] = d->dim_param;
        }
    }
    return 0;
}

static int build_graph(rpx__ctx *c, const Onnx__GraphProto *gp, int parent, int owner);

static int build_node_inputs(rpx__ctx *c, int gid, int nid)
{
    const Onnx__NodeProto *p = c->nodes[nid].p;
    size_t i, j;
    int rc;
    for (i = 0; i < p->n_input; i++) {
        int found, vid, x;
        if (!p->input[i] || !*p->input[i]) {
            c->nodes[nid].in[i] = -1;
            continue;
        }
        vid = lookup(c, gid, p->input[i], &found);
        if (vid < 0)
            return rpx__node_fail(c, &c->nodes[nid], RPX_EFORMAT,
                                  "input %zu '%s' is not defined: no node, initializer or graph "
                                  "input produces it (the file is incomplete or damaged; "
                                  "re-export the model)",
                                  i, p->input[i]);
        c->nodes[nid].in[i] = vid;
        /* a name from an enclosing scope: every control-flow node between
         * here and there depends on it */
        for (x = gid; x != found && x >= 0; x = c->graphs[x].parent)
            if ((rc = add_dep(c, c->graphs[x].owner, vid))) return rc;
    }
    for (i = 0; i < p->n_attribute; i++) {
        const Onnx__AttributeProto *a = p->attribute[i];
        if (a->g) {
            if ((rc = build_graph(c, a->g, gid, nid)) < 0) return rc;
        }
        for (j = 0; j < a->n_graphs; j++)
            if ((rc = build_graph(c, a->graphs[j], gid, nid)) < 0) return rc;
    }
    return 0;
}

static int add_sub(rpx__ctx *c, int nid, int sub)
{
    rpx__node *n = &c->nodes[nid];
    int *s = rpx__alloc(&c->arena, (n->n_sub + 1) * sizeof *s);
    if (!s) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    if (n->n_sub) memcpy(s, n->sub, n->n_sub * sizeof *s);
    s[n->n_sub++] = sub;
    n->sub = s;
    return 0;
}

/* A new graph in c->graphs (its id), a subgraph of node `owner` when owner >= 0. */
static int new_graph(rpx__ctx *c, const Onnx__GraphProto *gp, int parent, int owner)
{
    int gid, rc;
    rpx__graph *g;
    if (c->n_graphs == c->cap_graphs) {
        size_t cap = c->cap_graphs ? c->cap_graphs * 2 : 4;
        rpx__graph *ng = realloc(c->graphs, cap * sizeof *ng);
        if (!ng) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        c->graphs = ng;
        c->cap_graphs = cap;
    }
    gid = (int)c->n_graphs++;
    g = &c->graphs[gid];
    memset(g, 0, sizeof *g);
    g->p = gp;
    g->name = gp->name && *gp->name ? gp->name : parent < 0 ? "main" : "subgraph";
    g->parent = parent;
    g->owner = owner;
    if (owner >= 0 && (rc = add_sub(c, owner, gid))) return rc;
    return gid;
}

/* The graph's initializers: weights with their values. */
static int add_initializers(rpx__ctx *c, int gid, const Onnx__GraphProto *gp)
{
    size_t i;
    int rc;
    for (i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *t = gp->initializer[i];
        const char *what;
        int vid;
        if (!t->name || !*t->name)
            return rpx__fail(c, RPX_EFORMAT, "initializer %zu of graph '%s' has no name", i,
                             c->graphs[gid].name);
        if ((vid = new_val(c, t->name, gid, RPX__V_INIT)) < 0) return vid;
        what = rpx__fmt(c, "initializer '%s'", t->name);
        c->vals[vid].tensor = t;
        c->vals[vid].is_weight = 1;
        if ((rc = rpx__tensor_dtype_dims(c, t, &c->vals[vid], what))) return rc;
        if ((rc = rpx__tensor_value(c, t, &c->vals[vid], what))) return rc;
        if ((rc = define(c, gid, vid, "an initializer"))) return rc;
    }
    return 0;
}

/* The graph's sparse initializers: weights of their dense shape. */
static int add_sparse_initializers(rpx__ctx *c, int gid, const Onnx__GraphProto *gp)
{
    size_t i, j;
    int rc;
    for (i = 0; i < gp->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *s = gp->sparse_initializer[i];
        int vid;
        double elems = 1;
        if (!s->values || !s->values->name || !*s->values->name)
            return rpx__fail(c, RPX_EFORMAT, "sparse initializer %zu has no name", i);
        if ((vid = new_val(c, s->values->name, gid, RPX__V_INIT)) < 0) return vid;
        c->vals[vid].is_weight = 1;
        c->vals[vid].tensor = s->values;
        c->vals[vid].dtype = s->values->has_data_type ? s->values->data_type : 0;
        if (s->n_dims > RPX__MAX_RANK)
            return rpx__fail(c, RPX_EFORMAT, "sparse initializer '%s': too many dimensions",
                             s->values->name);
        c->vals[vid].rank = (int)s->n_dims;
        c->vals[vid].dims = rpx__alloc(&c->arena, (s->n_dims + 1) * sizeof(int64_t));
        if (!c->vals[vid].dims) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (j = 0; j < s->n_dims; j++) {
            if (s->dims[j] < 0 || s->dims[j] > RPX__DIM_MAX)
                return rpx__fail(c, RPX_EFORMAT,
                                 "sparse initializer '%s' has an absurd dimension %lld",
                                 s->values->name, (long long)s->dims[j]);
            c->vals[vid].dims[j] = s->dims[j];
            elems *= (double)s->dims[j];
        }
        c->vals[vid].elems = elems;
        if ((rc = define(c, gid, vid, "a sparse initializer"))) return rc;
    }
    return 0;
}

/* The graph's inputs (an initializer listed as an input stays a weight). */
static int add_inputs(rpx__ctx *c, int gid, const Onnx__GraphProto *gp)
{
    size_t i;
    int rc;
    for (i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        int vid, *in;
        if (!vi->name || !*vi->name)
            return rpx__fail(c, RPX_EFORMAT, "input %zu of graph '%s' has no name", i,
                             c->graphs[gid].name);
        vid = rpx__map_get(&c->graphs[gid].names, vi->name);
        if (vid >= 0) { /* an initializer listed as an input (IR < 4): a weight */
            c->vals[vid].vi = vi;
            continue;
        }
        if ((vid = new_val(c, vi->name, gid, RPX__V_INPUT)) < 0) return vid;
        c->vals[vid].vi = vi;
        if ((rc = type_of(c, &c->vals[vid], vi->type))) return rc;
        if ((rc = rpx__map_put(&c->graphs[gid].names, vi->name, vid)) != 0)
            return rc < 0 ? rpx__fail(c, RPX_ENOMEM, "out of memory")
                          : rpx__fail(c, RPX_EFORMAT, "graph input '%s' is listed twice",
                                      vi->name);
        in = rpx__alloc(&c->arena, (c->graphs[gid].n_inputs + 1) * sizeof *in);
        if (!in) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        if (c->graphs[gid].n_inputs)
            memcpy(in, c->graphs[gid].inputs, c->graphs[gid].n_inputs * sizeof *in);
        in[c->graphs[gid].n_inputs++] = vid;
        c->graphs[gid].inputs = in;
    }
    return 0;
}

/* Node i of the graph (c->nodes[nid]) and the values it outputs. */
static int add_node(rpx__ctx *c, int gid, size_t i, int nid)
{
    const Onnx__NodeProto *p = c->graphs[gid].p->node[i];
    rpx__node *n = &c->nodes[nid];
    size_t j;
    int rc;
    memset(n, 0, sizeof *n);
    c->graphs[gid].nodes[i] = nid;
    n->p = p;
    n->graph = gid;
    n->op = p->op_type && *p->op_type ? p->op_type : NULL;
    if (!n->op)
        return rpx__fail(c, RPX_EFORMAT, "node %zu of graph '%s' has no op_type", i,
                         c->graphs[gid].name);
    n->name = p->name && *p->name ? p->name : rpx__fmt(c, "%s#%zu", n->op, i);
    n->domain = p->domain ? p->domain : "";
    n->std = !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
    n->opset = opset_of(c, n->domain);
    if (n->std && n->opset == 0) n->opset = c->opset;
    n->n_in = p->n_input;
    n->n_out = p->n_output;
    n->in = rpx__alloc(&c->arena, (p->n_input + 1) * sizeof(int));
    n->out = rpx__alloc(&c->arena, (p->n_output + 1) * sizeof(int));
    n->trips = 1;
    if (!n->in || !n->out) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    for (j = 0; j < p->n_output; j++) {
        int vid;
        if (!p->output[j] || !*p->output[j]) {
            c->nodes[nid].out[j] = -1;
            continue;
        }
        if ((vid = new_val(c, p->output[j], gid, RPX__V_NODE)) < 0) return vid;
        c->vals[vid].producer = nid;
        c->nodes[nid].out[j] = vid;
        if ((rc = define(c, gid, vid, rpx__fmt(c, "output of node '%s'", c->nodes[nid].name))))
            return rc;
    }
    return 0;
}

/* The graph's nodes and their outputs first (files need not be topologically
 * sorted), then each node's inputs and subgraphs. */
static int add_nodes(rpx__ctx *c, int gid, const Onnx__GraphProto *gp)
{
    size_t i, first_node = c->n_nodes;
    int rc;
    if (c->n_nodes + gp->n_node > c->cap_nodes) {
        size_t cap = c->cap_nodes ? c->cap_nodes : 256;
        rpx__node *nn;
        while (cap < c->n_nodes + gp->n_node) cap *= 2;
        nn = realloc(c->nodes, cap * sizeof *nn);
        if (!nn) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        c->nodes = nn;
        c->cap_nodes = cap;
    }
    c->graphs[gid].nodes = rpx__alloc(&c->arena, (gp->n_node + 1) * sizeof(int));
    if (!c->graphs[gid].nodes) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    c->graphs[gid].n_nodes = gp->n_node;
    for (i = 0; i < gp->n_node; i++)
        if ((rc = add_node(c, gid, i, (int)c->n_nodes++))) return rc;
    for (i = 0; i < gp->n_node; i++)
        if ((rc = build_node_inputs(c, gid, (int)(first_node + i)))) return rc;
    return 0;
}

/* The graph's outputs, and the shapes value_info gives to values without one. */
static int add_outputs(rpx__ctx *c, int gid, const Onnx__GraphProto *gp)
{
    size_t i;
    c->graphs[gid].outputs = rpx__alloc(&c->arena, (gp->n_output + 1) * sizeof(int));
    if (!c->graphs[gid].outputs) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    for (i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        int found, vid = vi->name ? lookup(c, gid, vi->name, &found) : -1;
        if (vid < 0)
            return rpx__fail(c, RPX_EFORMAT,
                             "graph output '%s' of graph '%s' is not produced by any node, "
                             "initializer or input (the file is incomplete or damaged)",
                             vi->name ? vi->name : "", c->graphs[gid].name);
        if (!c->vals[vid].vi) c->vals[vid].vi = vi;
        c->graphs[gid].outputs[c->graphs[gid].n_outputs++] = vid;
    }
    for (i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        int vid = vi->name ? rpx__map_get(&c->graphs[gid].names, vi->name) : -1;
        if (vid >= 0 && !c->vals[vid].vi) c->vals[vid].vi = vi;
    }
    return 0;
}

static int build_graph(rpx__ctx *c, const Onnx__GraphProto *gp, int parent, int owner)
{
    int gid, rc;
    if (c->depth >= 16)
        return rpx__fail(c, RPX_EFORMAT, "subgraphs nested more than 16 deep");
    if ((gid = new_graph(c, gp, parent, owner)) < 0) return gid;
    c->depth++;
    if ((rc = add_initializers(c, gid, gp)) || (rc = add_sparse_initializers(c, gid, gp)) ||
        (rc = add_inputs(c, gid, gp)) || (rc = add_nodes(c, gid, gp)) ||
        (rc = add_outputs(c, gid, gp)))
        return rc;
    c->depth--;
    return gid;
}

int rpx__build(rpx__ctx *c)
{
    int rc;
    c->opset = opset_of(c, "");
    if (c->opset == 0) {
        c->opset = 1;
        rpx__warn(c, "the model imports no opset of the default domain; taken as opset 1");
    }
    if (c->opset < 7 || c->opset > 21)
        rpx__warn(c, "opset %d is outside 7..21, the versions rpxprof knows; operators are "
                     "read with the nearest rules",
                  c->opset);
    rc = build_graph(c, c->m->graph, -1, -1);
    return rc < 0 ? rc : 0;
}
