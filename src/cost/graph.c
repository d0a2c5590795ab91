/* graph.c — binding the graph inputs (--input, --dim), the topological
 * order, the analysis driver (infer, fold, cost, cross-check against
 * value_info) and the bodies of If, Loop and Scan, costed when static. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost_internal.h"

/* ---- input binding ------------------------------------------------------ */
static int parse_dims(const char *s, int64_t *dims, int *rank)
{
    int r = 0;
    if (!*s || strcmp(s, "scalar") == 0) {
        *rank = 0;
        return 0;
    }
    for (;;) {
        char *end;
        long long v;
        if (*s < '0' || *s > '9') return -1;
        v = strtoll(s, &end, 10);
        if (end == s || r >= RPX__MAX_RANK || v > RPX__DIM_MAX) return -1;
        dims[r++] = v;
        if (!*end) break;
        if (strncmp(end, "\xc3\x97", 2) == 0) { /* the multiplication sign, as the demo writes it */
            s = end + 2;
            continue;
        }
        if (*end != 'x' && *end != ',' && *end != 'X') return -1;
        s = end + 1;
    }
    *rank = r;
    return 0;
}

static const char *input_names(rpx__ctx *c)
{
    const rpx__graph *g = &c->graphs[0];
    char buf[400];
    size_t i, len = 0;
    buf[0] = '\0';
    for (i = 0; i < g->n_inputs && len < sizeof buf - 40; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s'%s'", i ? ", " : "",
                                c->vals[g->inputs[i]].name);
    return rpx__fmt(c, "%s", g->n_inputs ? buf : "(none)");
}

static int sym_known(rpx__ctx *c, const char *name)
{
    const rpx__graph *g = &c->graphs[0];
    size_t i;
    int k;
    for (i = 0; i < g->n_inputs; i++) {
        const rpx__val *v = &c->vals[g->inputs[i]];
        for (k = 0; v->sym && k < v->rank; k++)
            if (v->sym[k] && strcmp(v->sym[k], name) == 0) return 1;
    }
    return 0;
}

int rpx__bind_inputs(rpx__ctx *c)
{
    const rpx__graph *g = &c->graphs[0];
    const rpx_cost_options *o = &c->opt;
    size_t i, j;
    int k;
    for (j = 0; j < o->n_input_shapes; j++) { /* every --input names an input */
        const char *eq = strrchr(o->input_shapes[j], '=');
        int found = 0;
        if (!eq || eq == o->input_shapes[j])
            return rpx_error_set(c->err, RPX_EINVAL, "--input '%s': expected NAME=DIMS (e.g. input=1x3x224x224)",
                                 o->input_shapes[j]);
        for (i = 0; i < g->n_inputs; i++)
            if (strlen(c->vals[g->inputs[i]].name) == (size_t)(eq - o->input_shapes[j]) &&
                !strncmp(c->vals[g->inputs[i]].name, o->input_shapes[j], (size_t)(eq - o->input_shapes[j])))
                found = 1;
        if (!found)
            return rpx__fail(c, RPX_EINVAL, "--input '%s': the model has no input of that name; its inputs are %s",
                             o->input_shapes[j], input_names(c));
    }
    for (j = 0; j < o->n_dims; j++) {
        const char *eq = strchr(o->dims[j], '=');
        long long v;
        char *end, name[256];
        if (!eq || eq == o->dims[j] || (size_t)(eq - o->dims[j]) >= sizeof name)
            return rpx_error_set(c->err, RPX_EINVAL, "--dim '%s': expected NAME=N (e.g. batch=1)", o->dims[j]);
        v = strtoll(eq + 1, &end, 10);
        if (!eq[1] || *end || v < 1 || v > RPX__DIM_MAX)
            return rpx_error_set(c->err, RPX_EINVAL, "--dim '%s': N must be a whole number >= 1", o->dims[j]);
        memcpy(name, o->dims[j], (size_t)(eq - o->dims[j]));
        name[eq - o->dims[j]] = '\0';
        if (!sym_known(c, name))
            return rpx__fail(c, RPX_EINVAL, "--dim '%s': no input has a dynamic dimension named '%s'",
                             o->dims[j], name);
    }
    for (i = 0; i < g->n_inputs; i++) {
        rpx__val *v = &c->vals[g->inputs[i]];
        int64_t dims[RPX__MAX_RANK];
        int rank = -1;
        double elems = 1;
        size_t nl = strlen(v->name);
        for (j = 0; j < o->n_input_shapes; j++) {
            const char *s = o->input_shapes[j], *eq = strrchr(s, '=');
            if ((size_t)(eq - s) == nl && !strncmp(s, v->name, nl)) {
                if (parse_dims(eq + 1, dims, &rank) < 0)
                    return rpx_error_set(c->err, RPX_EINVAL,
                                         "--input '%s': DIMS must be sizes joined by 'x' (e.g. 1x3x224x224)", s);
            }
        }
        if (!v->is_tensor) {
            rpx__warn(c, "input '%s' is not a tensor (sequence, map or optional): nodes that use it are not costed", v->name);
            continue;
        }
        if (rank >= 0) {
            if (v->rank >= 0 && v->rank != rank)
                return rpx__fail(c, RPX_EINVAL, "--input %s=...: the model declares rank %d for it, "
                                 "the option gives %d dimensions", v->name, v->rank, rank);
            for (k = 0; k < rank && v->rank >= 0; k++)
                if (v->dims[k] >= 0 && v->dims[k] != dims[k])
                    return rpx__fail(c, RPX_EINVAL, "--input %s=...: dimension %d is fixed at %lld in the "
                                     "model, the option gives %lld", v->name, k, (long long)v->dims[k],
                                     (long long)dims[k]);
        } else {
            if (v->rank < 0)
                return rpx__fail(c, RPX_EINVAL, "input '%s' has no shape in the model; give it with --input %s=DIMS",
                                 v->name, v->name);
            rank = v->rank;
            for (k = 0; k < rank; k++) {
                dims[k] = v->dims[k];
                if (dims[k] >= 0) continue;
                if (v->sym && v->sym[k]) {
                    for (j = 0; j < o->n_dims; j++) {
                        const char *eq = strchr(o->dims[j], '=');
                        if ((size_t)(eq - o->dims[j]) == strlen(v->sym[k]) &&
                            !strncmp(o->dims[j], v->sym[k], strlen(v->sym[k])))
                            dims[k] = strtoll(eq + 1, NULL, 10);
                    }
                    if (dims[k] < 0)
                        return rpx__fail(c, RPX_EINVAL, "input '%s' dimension %d is dynamic ('%s') and "
                                         "unbound; give it with --dim %s=N or --input %s=DIMS "
                                         "(rpxprof never guesses a size)",
                                         v->name, k, v->sym[k], v->sym[k], v->name);
                } else {
                    return rpx__fail(c, RPX_EINVAL, "input '%s' dimension %d is dynamic (unnamed) and "
                                     "unbound; give the whole shape with --input %s=DIMS "
                                     "(rpxprof never guesses a size)", v->name, k, v->name);
                }
            }
        }
        for (k = 0; k < rank; k++) {
            if (dims[k] == 0)
                return rpx__fail(c, RPX_EINVAL, "input '%s' dimension %d is 0: every count would be 0; "
                                 "give a real size with --input/--dim", v->name, k);
            elems *= (double)dims[k];
        }
        if (elems > RPX__ELEMS_MAX)
            return rpx__fail(c, RPX_EINVAL, "input '%s' would hold an absurd %.3g elements", v->name, elems);
        v->rank = rank;
        v->dims = rpx__alloc(&c->arena, (size_t)(rank + 1) * sizeof *v->dims);
        if (!v->dims) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        if (rank) memcpy(v->dims, dims, (size_t)rank * sizeof *dims);
        v->elems = elems;
    }
    return 0;
}

/* ---- topological order --------------------------------------------------- */
static void heap_push(int *h, size_t *n, int v)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static int heap_pop(int *h, size_t *n)
{
    int top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        int best = last;
        if (l < *n && h[l] < best) { m = l; best = h[l]; }
        if (l + 1 < *n && h[l + 1] < best) { m = l + 1; best = h[l + 1]; }
        if (m == i) break;
        h[i] = h[m];
        i = m;
    }
    if (*n) h[i] = last;
    return top;
}

/* the producer (in graph g) of each value a node needs, by position */
static int dep_count(const rpx__ctx *c, const rpx__node *n)
{
    (void)c;
    return (int)(n->n_in + n->n_dep);
}

static int dep_at(const rpx__ctx *c, const rpx__node *n, int k, int g)
{
    int vid = k < (int)n->n_in ? n->in[k] : n->dep[k - (int)n->n_in];
    int p;
    if (vid < 0) return -1;
    p = c->vals[vid].producer;
    return p >= 0 && c->nodes[p].graph == g ? p : -1;
}

int rpx__toposort(rpx__ctx *c, int graph)
{
    rpx__graph *g = &c->graphs[graph];
    size_t n = g->n_nodes, i, done = 0, heap_n = 0, e = 0;
    int *local, *indeg, *start, *adj, *heap, *order, k, sorted = 1, rc = 0;
    if (n == 0) return 0;
    /* already in order? (the usual case: keep the exporter's order) */
    local = calloc(c->n_nodes, sizeof *local);
    if (!local) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    for (i = 0; i < n; i++) local[g->nodes[i]] = (int)i + 1;
    for (i = 0; i < n && sorted; i++) {
        const rpx__node *nd = &c->nodes[g->nodes[i]];
        for (k = 0; k < dep_count(c, nd); k++) {
            int p = dep_at(c, nd, k, graph);
            if (p >= 0 && local[p] - 1 >= (int)i) sorted = 0;
        }
    }
    if (sorted) {
        free(local);
        return 0;
    }
    indeg = calloc(n, sizeof *indeg);
    start = calloc(n + 1, sizeof *start);
    heap = calloc(n, sizeof *heap);
    order = calloc(n, sizeof *order);
    for (i = 0; i < n; i++) e += (size_t)dep_count(c, &c->nodes[g->nodes[i]]);
    adj = calloc(e + 1, sizeof *adj);
    if (!indeg || !start || !heap || !order || !adj) {
        rc = rpx__fail(c, RPX_ENOMEM, "out of memory");
        goto out;
    }
    /* edges producer → consumer, as CSR by producer */
    for (i = 0; i < n; i++) {
        const rpx__node *nd = &c->nodes[g->nodes[i]];
        for (k = 0; k < dep_count(c, nd); k++) {
            int p = dep_at(c, nd, k, graph);
            if (p >= 0) {
                start[local[p] - 1 + 1]++;
                indeg[i]++;
            }
        }
    }
    for (i = 0; i < n; i++) start[i + 1] += start[i];
    {
        int *fill = calloc(n, sizeof *fill);
        if (!fill) {
            rc = rpx__fail(c, RPX_ENOMEM, "out of memory");
            goto out;
        }
        for (i = 0; i < n; i++) {
            const rpx__node *nd = &c->nodes[g->nodes[i]];
            for (k = 0; k < dep_count(c, nd); k++) {
                int p = dep_at(c, nd, k, graph);
                if (p >= 0) {
                    int pl = local[p] - 1;
                    adj[start[pl] + fill[pl]++] = (int)i;
                }
            }
        }
        free(fill);
    }
    for (i = 0; i < n; i++)
        if (!indeg[i]) heap_push(heap, &heap_n, (int)i);
    while (heap_n) {
        int u = heap_pop(heap, &heap_n), j;
        order[done++] = g->nodes[u];
        for (j = start[u]; j < start[u + 1]; j++)
            if (--indeg[adj[j]] == 0) heap_push(heap, &heap_n, adj[j]);
    }
    if (done < n) {
        for (i = 0; i < n; i++) {
            const rpx__node *nd = &c->nodes[g->nodes[i]];
            if (!indeg[i]) continue;
            for (k = 0; k < dep_count(c, nd); k++) {
                int p = dep_at(c, nd, k, graph);
                if (p >= 0 && indeg[local[p] - 1]) {
                    int vid = k < (int)nd->n_in ? nd->in[k] : nd->dep[k - (int)nd->n_in];
                    rc = rpx__fail(c, RPX_EFORMAT,
                                   "the graph has a cycle: node '%s' (%s) needs tensor '%s', which "
                                   "depends on the node's own output; ONNX graphs must be acyclic "
                                   "(re-export the model)",
                                   nd->name, nd->op, c->vals[vid].name);
                    goto out;
                }
            }
        }
        rc = rpx__fail(c, RPX_EFORMAT, "the graph has a cycle");
        goto out;
    }
    memcpy(g->nodes, order, n * sizeof *order);
out:
    free(local);
    free(indeg);
    free(start);
    free(adj);
    free(heap);
    free(order);
    return rc;
}

/* ---- the analysis -------------------------------------------------------- */
static const char *dims_str(rpx__ctx *c, int rank, const int64_t *d)
{
    char buf[256];
    size_t len = 0;
    int k;
    buf[0] = '\0';
    for (k = 0; k < rank && len < sizeof buf - 24; k++) {
        if (d[k] < 0)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s?", k ? "x" : "");
        else
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%lld", k ? "x" : "", (long long)d[k]);
    }
    return rank == 0 ? "scalar" : rpx__fmt(c, "%s", buf);
}

/* shape declared by a value_info, when it is a tensor with a static shape */
static int vi_shape(const Onnx__ValueInfoProto *vi, int *dtype, int *rank, int64_t *dims, int *all_fixed)
{
    const Onnx__TypeProto__Tensor *t;
    size_t i;
    if (!vi || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return 0;
    t = vi->type->tensor_type;
    if (!t->shape || t->shape->n_dim > RPX__MAX_RANK) return 0;
    *dtype = t->has_elem_type ? t->elem_type : 0;
    *rank = (int)t->shape->n_dim;
    *all_fixed = 1;
    for (i = 0; i < t->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = t->shape->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0 &&
            d->dim_value <= RPX__DIM_MAX) {
            dims[i] = d->dim_value;
        } else {
            dims[i] = -1;
            *all_fixed = 0;
        }
    }
    return 1;
}

static int set_val(rpx__ctx *c, rpx__val *v, int dtype, int rank, const int64_t *dims)
{
    double elems = 1;
    int k;
    v->dtype = dtype;
    v->rank = rank;
    v->dims = rpx__alloc(&c->arena, (size_t)(rank + 1) * sizeof *v->dims);
    if (!v->dims) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    if (rank) memcpy(v->dims, dims, (size_t)rank * sizeof *dims);
    for (k = 0; k < rank; k++) elems = dims[k] < 0 ? NAN : elems * (double)dims[k];
    v->elems = elems;
    v->is_tensor = 1;
    v->has_cv = 0;
    return 0;
}

static int copy_val(rpx__ctx *c, rpx__val *dst, const rpx__val *src)
{
    int rc;
    if (src->rank < 0) {
        dst->rank = -1;
        dst->dtype = src->dtype;
        return 0;
    }
    if ((rc = set_val(c, dst, src->dtype, src->rank, src->dims))) return rc;
    dst->has_cv = src->has_cv;
    dst->cv_float = src->cv_float;
    dst->cv_n = src->cv_n;
    dst->cv_i = src->cv_i;
    dst->cv_f = src->cv_f;
    return 0;
}

/* after inference: cross-check with value_info, or fall back to it */
static int check_outputs(rpx__ctx *c, rpx__node *n)
{
    size_t i;
    for (i = 0; i < n->n_out; i++) {
        rpx__val *v = n->out[i] >= 0 ? &c->vals[n->out[i]] : NULL;
        int64_t d[RPX__MAX_RANK];
        int dt, rank, fixed, k, rc;
        if (!v || !vi_shape(v->vi, &dt, &rank, d, &fixed)) continue;
        if (!rpx__known(v)) {
            if (fixed && v->rank < 0) {
                if ((rc = set_val(c, v, dt, rank, d))) return rc;
                v->from_vi = 1;
                rpx__warn(c, "shape of '%s' (%s) taken from the file's value_info: node '%s' (%s) could not be inferred",
                          v->name, dims_str(c, rank, d), n->name, n->op);
            }
            continue;
        }
        if (rank != v->rank) {
            rpx__warn(c, "value_info of '%s' says %s, inferred %s (node '%s')", v->name,
                      dims_str(c, rank, d), dims_str(c, v->rank, v->dims), n->name);
            continue;
        }
        for (k = 0; k < rank; k++)
            if (d[k] >= 0 && d[k] != v->dims[k]) {
                rpx__warn(c, "value_info of '%s' says %s, inferred %s (node '%s')", v->name,
                          dims_str(c, rank, d), dims_str(c, v->rank, v->dims), n->name);
                break;
            }
        if (dt && v->dtype && dt != v->dtype)
            rpx__warn(c, "value_info of '%s' says %s, inferred %s (node '%s')", v->name,
                      rpx__dtype_name(dt), rpx__dtype_name(v->dtype), n->name);
    }
    return 0;
}

static int sub_named(const rpx__ctx *c, const rpx__node *n, const char *attr)
{
    const Onnx__AttributeProto *a = rpx__attr(n, attr);
    size_t i;
    if (!a || !a->g) return -1;
    for (i = 0; i < n->n_sub; i++)
        if (c->graphs[n->sub[i]].p == a->g) return n->sub[i];
    return -1;
}

/* sum a body's costs into n; 0 with n->reason when a body node is not costed */
static int body_cost(rpx__ctx *c, rpx__node *n, int sub, const char *what, double trips)
{
    const rpx__graph *g = &c->graphs[sub];
    double macs = 0, flops = 0, r = 0, w = 0;
    size_t i;
    int dense = 0;
    for (i = 0; i < g->n_nodes; i++) {
        const rpx__node *b = &c->nodes[g->nodes[i]];
        if (b->status != RPX__N_OK) {
            n->reason = rpx__fmt(c, "node '%s' (%s) of the %s is not costed: %s", b->name, b->op, what,
                                 b->reason ? b->reason : "unknown");
            return 0;
        }
        macs += b->macs;
        flops += b->flops;
        r += b->bytes_r;
        w += b->bytes_w;
        dense |= b->dense;
    }
    n->macs += trips * macs;
    n->flops += trips * flops;
    n->bytes_r += trips * r;
    n->bytes_w += trips * w;
    n->dense |= dense;
    return 1;
}

static int analyze_node(rpx__ctx *c, int nid);

static int run_body(rpx__ctx *c, int sub)
{
    int rc;
    if ((rc = rpx__toposort(c, sub))) return rc;
    return rpx__analyze_graph(c, sub);
}

static int control_if(rpx__ctx *c, rpx__node *n)
{
    rpx__val *cond = rpx__in(c, n, 0);
    int then_g = sub_named(c, n, "then_branch"), else_g = sub_named(c, n, "else_branch"), rc;
    size_t i;
    if (then_g < 0 || else_g < 0) return rpx__node_fail(c, n, RPX_EFORMAT, "a branch is missing");
    if (!cond || !cond->has_cv || cond->cv_n != 1) {
        /* both branches for the shapes; the cost depends on the branch taken */
        if ((rc = run_body(c, then_g)) || (rc = run_body(c, else_g))) return rc;
        for (i = 0; i < n->n_out && i < c->graphs[then_g].n_outputs && i < c->graphs[else_g].n_outputs; i++) {
            const rpx__val *a = &c->vals[c->graphs[then_g].outputs[i]];
            const rpx__val *b = &c->vals[c->graphs[else_g].outputs[i]];
            int same = rpx__known(a) && rpx__known(b) && a->rank == b->rank;
            int k;
            for (k = 0; same && k < a->rank; k++) same = a->dims[k] == b->dims[k];
            if (same && n->out[i] >= 0 && (rc = copy_val(c, &c->vals[n->out[i]], a))) return rc;
            if (n->out[i] >= 0) c->vals[n->out[i]].has_cv = 0;
        }
        n->reason = "If whose condition is computed at run time: the branch taken is not known";
        return 0;
    }
    {
        int sub = (c->vals[n->in[0]].cv_float ? cond->cv_f[0] != 0 : cond->cv_i[0] != 0) ? then_g : else_g;
        const rpx__graph *g;
        if ((rc = run_body(c, sub))) return rc;
        g = &c->graphs[sub];
        if (g->n_outputs < n->n_out)
            return rpx__node_fail(c, n, RPX_EFORMAT, "the branch has %zu outputs for %zu", g->n_outputs, n->n_out);
        for (i = 0; i < n->n_out; i++)
            if (n->out[i] >= 0 && (rc = copy_val(c, &c->vals[n->out[i]], &c->vals[g->outputs[i]]))) return rc;
        return body_cost(c, n, sub, sub == then_g ? "then_branch" : "else_branch", 1);
    }
}

static int same_shape(const rpx__val *a, const rpx__val *b)
{
    int k;
    if (!rpx__known(a) || !rpx__known(b) || a->rank != b->rank) return 0;
    for (k = 0; k < a->rank; k++)
        if (a->dims[k] != b->dims[k]) return 0;
    return 1;
}

/* the body's condition output: always true, or the condition passed through */
static int cond_static(rpx__ctx *c, const rpx__graph *g, rpx__val **out)
{
    rpx__val *v = &c->vals[g->outputs[0]];
    *out = v;
    if (v->has_cv && v->cv_n == 1) return v->cv_float ? v->cv_f[0] != 0 : v->cv_i[0] != 0;
    if (g->outputs[0] == g->inputs[1]) return 1;
    if (v->producer >= 0 && !strcmp(c->nodes[v->producer].op, "Identity") &&
        c->nodes[v->producer].n_in == 1 && c->nodes[v->producer].in[0] == g->inputs[1])
        return 1;
    return 0;
}

/* The body is analysed once per iteration while a loop-carried value changes
 * shape (h = Concat(h, ...)), so each iteration is costed at its own sizes and
 * the outputs get the shapes of the last one; once every carried shape is
 * stable, the remaining iterations cost what the last one did. A shape that
 * depends on how many iterations run (a while-loop, a trip count computed at
 * run time) is left unknown: never the maximum, never one iteration's. */
#define LOOP_SIMULATE_MAX 4096

static int loop_set_unknown_dims(rpx__ctx *c, rpx__val *dst, const rpx__val *a, const rpx__val *b)
{
    int64_t d[RPX__MAX_RANK];
    int k;
    if (!a || !b || a->rank < 0 || a->rank != b->rank) {
        dst->rank = -1;
        dst->dims = NULL;
        dst->elems = NAN;
        dst->dtype = b ? b->dtype : 0;
        dst->has_cv = 0;
        return 0;
    }
    for (k = 0; k < a->rank; k++) d[k] = a->dims[k] == b->dims[k] ? a->dims[k] : -1;
    return set_val(c, dst, b->dtype, b->rank, d);
}

static int control_loop(rpx__ctx *c, rpx__node *n)
{
    int sub = sub_named(c, n, "body"), rc, dyn = 0, costed = 1, stable = 0;
    rpx__graph *g;
    rpx__val *m = rpx__in(c, n, 0), *cond = rpx__in(c, n, 1), *cond_out;
    size_t carried = n->n_in >= 2 ? n->n_in - 2 : 0, i, scans;
    int64_t zero = 0, trips = -1, k = 0, d[RPX__MAX_RANK + 1];
    rpx__val *first_scan = NULL;
    int *scan_vary = NULL;
    const char *why = NULL;
    if (sub < 0) return rpx__node_fail(c, n, RPX_EFORMAT, "attribute 'body' is missing");
    g = &c->graphs[sub];
    if (g->n_inputs != carried + 2 || g->n_outputs < carried + 1)
        return rpx__node_fail(c, n, RPX_EFORMAT, "the body has %zu inputs and %zu outputs for %zu loop-carried values",
                              g->n_inputs, g->n_outputs, carried);
    scans = g->n_outputs - 1 - carried;
    if (m && m->has_cv && m->cv_n == 1) trips = m->cv_float ? (m->cv_f[0] >= 0 && m->cv_f[0] < 9e18 ? (int64_t)m->cv_f[0] : -1) : m->cv_i[0];
    if (cond && cond->has_cv && cond->cv_n == 1 && !(cond->cv_float ? cond->cv_f[0] : (double)cond->cv_i[0]))
        trips = 0;
    if (trips < 0) why = "Loop whose trip count is computed at run time";
    if ((rc = set_val(c, &c->vals[g->inputs[0]], RPX__T_INT64, 0, &zero))) return rc;
    if ((rc = set_val(c, &c->vals[g->inputs[1]], RPX__T_BOOL, 0, &zero))) return rc;
    for (i = 0; i < carried; i++) {
        const rpx__val *v = rpx__in(c, n, 2 + i);
        rpx__val *b = &c->vals[g->inputs[2 + i]];
        if (v && (rc = copy_val(c, b, v))) return rc;
        b->has_cv = 0; /* changes from one iteration to the next */
    }
    if (scans) {
        first_scan = rpx__alloc(&c->arena, scans * sizeof *first_scan);
        scan_vary = rpx__alloc(&c->arena, scans * sizeof *scan_vary);
        if (!first_scan || !scan_vary) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    }
    for (;;) {
        if ((rc = run_body(c, sub))) return rc;
        g = &c->graphs[sub];
        if (k == 0) {
            dyn = !cond_static(c, g, &cond_out);
            if (dyn && !why) why = "Loop whose condition is computed in its body: it may stop early";
        }
        for (i = 0; i < scans; i++) {
            const rpx__val *b = &c->vals[g->outputs[1 + carried + i]];
            if (k == 0) {
                if ((rc = copy_val(c, &first_scan[i], b))) return rc;
            } else if (!same_shape(&first_scan[i], b)) {
                scan_vary[i] = 1;
            }
        }
        if (trips == 0) break;
        if (!why && costed) {
            costed = body_cost(c, n, sub, "loop body", 1);
            if (!costed) why = n->reason;
        }
        k++;
        stable = 1;
        for (i = 0; i < carried; i++)
            stable &= same_shape(&c->vals[g->inputs[2 + i]], &c->vals[g->outputs[1 + i]]);
        if (stable || trips < 0 || dyn || k >= trips) break;
        if (k >= LOOP_SIMULATE_MAX) {
            why = rpx__fmt(c, "Loop whose carried values change shape over more than %d iterations",
                           LOOP_SIMULATE_MAX);
            break;
        }
        for (i = 0; i < carried; i++) { /* the next iteration's carried values */
            rpx__val *b = &c->vals[g->inputs[2 + i]];
            if ((rc = copy_val(c, b, &c->vals[g->outputs[1 + i]]))) return rc;
            b->has_cv = 0;
        }
    }
    /* the rest of the iterations, at the stable shapes */
    if (!why && costed && trips > k && stable) costed = body_cost(c, n, sub, "loop body", (double)(trips - k));
    if (!costed && !why) why = n->reason;
    for (i = 0; i < carried; i++) {
        rpx__val *o = n->out[i] >= 0 ? &c->vals[n->out[i]] : NULL;
        const rpx__val *in = rpx__in(c, n, 2 + i), *last = &c->vals[g->outputs[1 + i]];
        if (!o) continue;
        if (trips == 0) rc = in ? copy_val(c, o, in) : 0;
        else if (stable || (trips >= 0 && !dyn && k == trips)) rc = copy_val(c, o, last);
        else rc = loop_set_unknown_dims(c, o, in, last); /* depends on the iterations run */
        if (rc) return rc;
    }
    for (i = 0; i < scans && carried + i < n->n_out; i++) {
        const rpx__val *b = &first_scan[i];
        if (n->out[carried + i] < 0 || b->rank < 0 || b->rank + 1 > RPX__MAX_RANK) continue;
        d[0] = dyn ? -1 : trips; /* a while-loop's count is known only at run time */
        memcpy(d + 1, b->dims, (size_t)b->rank * sizeof *d);
        if (scan_vary[i]) {
            int j;
            for (j = 0; j < b->rank; j++) d[1 + j] = -1;
        }
        if ((rc = set_val(c, &c->vals[n->out[carried + i]], b->dtype, b->rank + 1, d))) return rc;
    }
    for (i = 0; i < n->n_out; i++)
        if (n->out[i] >= 0) c->vals[n->out[i]].has_cv = 0;
    if (why) {
        n->reason = why;
        return 0;
    }
    n->trips = (double)trips;
    return 1;
}

static int control_scan(rpx__ctx *c, rpx__node *n)
{
    int sub = sub_named(c, n, "body"), rc;
    rpx__graph *g;
    int64_t m = rpx__attr_i(n, "num_scan_inputs", -1), trips = -1, d[RPX__MAX_RANK + 1];
    const int64_t *in_axes = NULL, *out_axes = NULL;
    long n_in_axes, n_out_axes;
    size_t states, i, scans_out;
    if (sub < 0) return rpx__node_fail(c, n, RPX_EFORMAT, "attribute 'body' is missing");
    if (n->opset > 0 && n->opset < 9) {
        n->reason = "Scan of opset 8 (with sequence_lens) is not modelled";
        return 0;
    }
    if (m < 1 || (size_t)m > n->n_in)
        return rpx__node_fail(c, n, RPX_EFORMAT, "num_scan_inputs %lld for %zu inputs", (long long)m, n->n_in);
    states = n->n_in - (size_t)m;
    g = &c->graphs[sub];
    if (g->n_inputs != n->n_in || g->n_outputs < states)
        return rpx__node_fail(c, n, RPX_EFORMAT, "the body has %zu inputs for %zu", g->n_inputs, n->n_in);
    scans_out = g->n_outputs - states;
    n_in_axes = rpx__attr_ints(n, "scan_input_axes", &in_axes);
    n_out_axes = rpx__attr_ints(n, "scan_output_axes", &out_axes);
    for (i = 0; i < states; i++) {
        const rpx__val *v = rpx__in(c, n, i);
        if (v && (rc = copy_val(c, &c->vals[g->inputs[i]], v))) return rc;
        c->vals[g->inputs[i]].has_cv = 0;
    }
    for (i = 0; i < (size_t)m; i++) {
        const rpx__val *v = rpx__in(c, n, states + i);
        int64_t ax = n_in_axes > (long)i ? in_axes[i] : 0;
        int a, k, r = 0;
        if (!v || !rpx__known(v)) {
            n->reason = "the shape of a scanned input is unknown";
            return 0;
        }
        if ((rc = rpx__norm_axis(c, n, ax, v->rank, &a))) return rc;
        if (trips >= 0 && v->dims[a] != trips)
            return rpx__node_fail(c, n, RPX_EFORMAT, "scanned inputs differ in length");
        trips = v->dims[a];
        for (k = 0; k < v->rank; k++)
            if (k != a) d[r++] = v->dims[k];
        if ((rc = set_val(c, &c->vals[g->inputs[states + i]], v->dtype, r, d))) return rc;
    }
    if ((rc = run_body(c, sub))) return rc;
    g = &c->graphs[sub];
    for (i = 0; i < states && i < n->n_out; i++) {
        const rpx__val *in = &c->vals[g->inputs[i]], *last = &c->vals[g->outputs[i]];
        if (n->out[i] < 0) continue;
        /* a state that changes shape: its final shape is not one iteration's */
        rc = same_shape(in, last) || trips == 1 ? copy_val(c, &c->vals[n->out[i]], last)
                                                : loop_set_unknown_dims(c, &c->vals[n->out[i]], in, last);
        if (rc) return rc;
    }
    for (i = 0; i < scans_out && states + i < n->n_out; i++) {
        const rpx__val *b = &c->vals[g->outputs[states + i]];
        int64_t ax = n_out_axes > (long)i ? out_axes[i] : 0;
        int a, k, r = 0;
        if (n->out[states + i] < 0 || !rpx__known(b) || b->rank + 1 > RPX__MAX_RANK) continue;
        if ((rc = rpx__norm_axis(c, n, ax, b->rank + 1, &a))) return rc;
        for (k = 0; k <= b->rank; k++) d[r++] = k == a ? trips : b->dims[k < a ? k : k - 1];
        if ((rc = set_val(c, &c->vals[n->out[states + i]], b->dtype, r, d))) return rc;
    }
    for (i = 0; i < states; i++)
        if (!same_shape(&c->vals[g->inputs[i]], &c->vals[g->outputs[i]])) {
            n->reason = rpx__fmt(c, "scan state '%s' changes shape from one iteration to the next",
                                 c->vals[g->inputs[i]].name);
            return 0;
        }
    n->trips = (double)trips;
    return body_cost(c, n, sub, "scan body", (double)trips);
}

static int analyze_node(rpx__ctx *c, int nid)
{
    rpx__node *n = &c->nodes[nid];
    const rpx__opdef *def;
    int rc;
    n->status = RPX__N_UNSUPPORTED;
    n->reason = NULL;
    n->macs = n->flops = n->bytes_r = n->bytes_w = 0;
    if (!n->std) {
        n->reason = rpx__fmt(c, "operator of domain '%s' (a contrib or custom operator)", n->domain);
        return check_outputs(c, n);
    }
    def = rpx__op_find(n->op);
    if (!def) {
        n->reason = rpx__fmt(c, "no shape rule or cost formula for %s", n->op);
        return check_outputs(c, n);
    }
    n->cls = def->cls;
    if (def->cls == RPX__C_CONTROL) {
        rc = !strcmp(n->op, "If") ? control_if(c, n) : !strcmp(n->op, "Loop") ? control_loop(c, n)
                                                                           : control_scan(c, n);
        if (rc < 0) return rc;
        n = &c->nodes[nid];
        if (rc == 1) n->status = RPX__N_OK;
        if (rc != 1) n->macs = n->flops = n->bytes_r = n->bytes_w = 0;
        return check_outputs(c, n);
    }
    rc = def->infer(c, n);
    if (rc < 0) return rc;
    if (rc == RPX__OK) {
        rc = rpx__cost_node(c, n, def);
        if (rc < 0) return rc;
        if (rc == 1) n->status = RPX__N_OK;
    }
    return check_outputs(c, n);
}

int rpx__analyze_graph(rpx__ctx *c, int graph)
{
    size_t i;
    int rc;
    for (i = 0; i < c->graphs[graph].n_nodes; i++)
        if ((rc = analyze_node(c, c->graphs[graph].nodes[i]))) return rc;
    return 0;
}
