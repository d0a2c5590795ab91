/* totals.c — the model's totals: parameters (each weight tensor once, by
 * dtype, integer constants apart), MACs and FLOPs (all and dense), memory
 * traffic (unfused and ideal), the activation peak from a liveness pass over
 * the topological order, and the table by operator type. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost_internal.h"

static double bits_at(const rpx__ctx *c, int dtype)
{
    int bits = rpx__dtype_bits(dtype);
    if (c->precision_bits && rpx__dtype_is_float(dtype) && dtype != RPX__T_COMPLEX64 &&
        dtype != RPX__T_COMPLEX128)
        bits = c->precision_bits;
    return bits;
}

/* Record one weight tensor: parameters when floating point (Constant tensors
 * only with more than one element), integer constants otherwise. */
static void weight(rpx__ctx *c, int dtype, double elems, int from_constant, double *param_of_val)
{
    double stored = elems * rpx__dtype_bits(dtype) / 8.0;
    if (!(elems >= 0)) return;
    c->const_bytes += elems * bits_at(c, dtype) / 8.0;
    if (rpx__dtype_is_float(dtype)) {
        if (from_constant && elems <= 1) return;
        c->eff.params += elems;
        c->eff.param_bytes += elems * bits_at(c, dtype) / 8.0;
        c->param_storage_bytes += stored;
        c->by_dtype_elems[dtype] += elems;
        c->by_dtype_bytes[dtype] += stored;
        if (param_of_val) *param_of_val = elems;
    } else if (rpx__dtype_is_int(dtype)) {
        c->params_int += elems;
        c->params_int_bytes += stored;
    }
}

static double tensor_elems(const Onnx__TensorProto *t)
{
    double e = 1;
    size_t i;
    for (i = 0; i < t->n_dims; i++) e *= t->dims[i] < 0 ? NAN : (double)t->dims[i];
    return e;
}

static int count_params(rpx__ctx *c, double *pv)
{
    size_t i;
    c->eff.params = 0;
    c->eff.param_bytes = 0;
    for (i = 0; i < c->n_vals; i++) {
        const rpx__val *v = &c->vals[i];
        if (v->kind == RPX__V_INIT) weight(c, v->dtype, v->elems, 0, &pv[i]);
    }
    for (i = 0; i < c->n_nodes; i++) { /* Constant nodes, analysed or not */
        const rpx__node *n = &c->nodes[i];
        const Onnx__AttributeProto *a;
        double *slot = n->n_out && n->out[0] >= 0 ? &pv[n->out[0]] : NULL;
        if (!n->std || strcmp(n->op, "Constant")) continue;
        if ((a = rpx__attr(n, "value")) && a->t)
            weight(c, a->t->has_data_type ? a->t->data_type : 0, tensor_elems(a->t), 1, slot);
        else if ((a = rpx__attr(n, "value_floats")))
            weight(c, RPX__T_FLOAT, (double)a->n_floats, 1, slot);
        else if ((a = rpx__attr(n, "value_ints")))
            weight(c, RPX__T_INT64, (double)a->n_ints, 1, slot);
        else if ((a = rpx__attr(n, "value_int")))
            weight(c, RPX__T_INT64, 1, 1, slot);
        else if ((a = rpx__attr(n, "sparse_value")) && a->sparse_tensor && a->sparse_tensor->values)
            weight(c, a->sparse_tensor->values->data_type, tensor_elems(a->sparse_tensor->values), 1, slot);
    }
    return 0;
}

/* the main-graph node that holds node `nid` (itself, or the control-flow node around it) */
static int top_node(const rpx__ctx *c, int nid)
{
    while (c->nodes[nid].graph != 0) nid = c->graphs[c->nodes[nid].graph].owner;
    return nid;
}

static int attribute_params(rpx__ctx *c, double *pv)
{
    size_t i, k;
    char *done = calloc(c->n_vals + 1, 1);
    if (!done) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    for (i = 0; i < c->n_graphs; i++) {
        const rpx__graph *g = &c->graphs[i];
        size_t j;
        for (j = 0; j < g->n_nodes; j++) {
            int nid = g->nodes[j];
            const rpx__node *n = &c->nodes[nid];
            for (k = 0; k < n->n_in; k++) {
                int v = n->in[k];
                if (v < 0 || done[v] || !(pv[v] > 0)) continue;
                done[v] = 1;
                c->nodes[top_node(c, nid)].params += pv[v];
            }
        }
    }
    free(done);
    return 0;
}

/* ---- liveness ----------------------------------------------------------- */
static int is_alias(const rpx__node *n)
{
    return n->status == RPX__N_OK && n->cls == RPX__C_VIEW && strcmp(n->op, "Shape") &&
           strcmp(n->op, "Size") && strcmp(n->op, "Constant");
}

static int liveness(rpx__ctx *c)
{
    const rpx__graph *g = &c->graphs[0];
    size_t n = g->n_nodes, i, k, nv = c->n_vals;
    int *root = malloc(nv * sizeof *root), *birth = malloc(nv * sizeof *birth),
        *death = malloc(nv * sizeof *death);
    double *delta = calloc(n + 2, sizeof *delta), live = 0, peak = 0;
    int unknown = 0, rc = 0;
    if (!root || !birth || !death || !delta) {
        rc = rpx__fail(c, RPX_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < nv; i++) {
        root[i] = (int)i;
        birth[i] = -1;
        death[i] = -1;
    }
    for (i = 0; i < g->n_inputs; i++) birth[g->inputs[i]] = 0;
    for (i = 0; i < n; i++) {
        const rpx__node *nd = &c->nodes[g->nodes[i]];
        for (k = 0; k < nd->n_out; k++) {
            int v = nd->out[k];
            if (v < 0) continue;
            if (k == 0 && is_alias(nd) && nd->n_in && nd->in[0] >= 0) root[v] = root[nd->in[0]];
            else birth[v] = (int)i;
        }
        for (k = 0; k < nd->n_in + nd->n_dep; k++) {
            int v = k < nd->n_in ? nd->in[k] : nd->dep[k - nd->n_in];
            if (v >= 0 && death[root[v]] < (int)i) death[root[v]] = (int)i;
        }
    }
    for (i = 0; i < g->n_outputs; i++) death[root[g->outputs[i]]] = (int)n;
    for (i = 0; i < nv; i++) {
        const rpx__val *v = &c->vals[i];
        double b;
        if (root[i] != (int)i || birth[i] < 0 || v->graph != 0 || v->is_weight || v->has_cv) continue;
        b = rpx__bytes(c, v);
        if (!(b >= 0)) {
            unknown = 1;
            continue;
        }
        delta[birth[i]] += b;
        delta[(death[i] > birth[i] ? death[i] : birth[i]) + 1] -= b;
    }
    for (i = 0; i <= n; i++) {
        live += delta[i];
        if (live > peak) peak = live;
    }
    c->eff.activation_peak_bytes = unknown ? NAN : peak;
out:
    free(root);
    free(birth);
    free(death);
    free(delta);
    return rc;
}

/* ---- tables -------------------------------------------------------------- */
static int optot_cmp(const void *a, const void *b)
{
    const rpx__optotal *x = a, *y = b;
    if (x->flops != y->flops) return x->flops < y->flops ? 1 : -1;
    return strcmp(x->op, y->op);
}

static int tables(rpx__ctx *c)
{
    const rpx__graph *g = &c->graphs[0];
    size_t i, k;
    c->pub = calloc(g->n_nodes + 1, sizeof *c->pub);
    c->optot = calloc(g->n_nodes + 1, sizeof *c->optot);
    c->groups = calloc(g->n_nodes + 1, sizeof *c->groups);
    if (!c->pub || !c->optot || !c->groups) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    for (i = 0; i < g->n_nodes; i++) {
        const rpx__node *n = &c->nodes[g->nodes[i]];
        rpx_cost_node *p = &c->pub[c->n_pub++];
        int ok = n->status == RPX__N_OK;
        rpx__optotal *t = NULL;
        p->name = n->name;
        p->op_type = n->op;
        p->domain = n->domain;
        p->supported = ok;
        p->dense = ok && n->dense;
        p->macs = ok ? n->macs : NAN;
        p->flops = ok ? n->flops : NAN;
        p->bytes_read = ok ? n->bytes_r : NAN;
        p->bytes_written = ok ? n->bytes_w : NAN;
        p->params = n->params;
        p->reason = ok ? NULL : n->reason ? n->reason : "not costed";
        for (k = 0; k < c->n_optot; k++)
            if (!strcmp(c->optot[k].op, n->op)) t = &c->optot[k];
        if (!t) {
            t = &c->optot[c->n_optot++];
            t->op = n->op;
        }
        t->count++;
        t->params += n->params;
        if (!ok) {
            rpx__group *gr = NULL;
            t->unsupported++;
            for (k = 0; k < c->n_groups; k++)
                if (!strcmp(c->groups[k].op, n->op)) gr = &c->groups[k];
            if (!gr) {
                gr = &c->groups[c->n_groups++];
                gr->op = n->op;
                gr->reason = p->reason;
            }
            gr->count++;
            continue;
        }
        t->macs += n->macs;
        t->flops += n->flops;
        t->bytes += n->bytes_r + n->bytes_w;
    }
    qsort(c->optot, c->n_optot, sizeof *c->optot, optot_cmp);
    return 0;
}

int rpx__totals(rpx__ctx *c)
{
    const rpx__graph *g = &c->graphs[0];
    double *pv = calloc(c->n_vals + 1, sizeof *pv), macs = 0, flops = 0, traffic = 0, io = 0;
    size_t i, n_dense = 0, n_dense_costed = 0;
    int rc;
    if (!pv) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    rpx_efficiency_init(&c->eff);
    c->eff.source = "onnx";
    count_params(c, pv);
    rc = attribute_params(c, pv);
    free(pv);
    if (rc) return rc;
    c->n_total = g->n_nodes;
    for (i = 0; i < g->n_nodes; i++) {
        const rpx__node *n = &c->nodes[g->nodes[i]];
        int dense = n->status == RPX__N_OK ? n->dense : rpx__op_dense(c, n);
        n_dense += dense != 0;
        if (n->status != RPX__N_OK) continue;
        n_dense_costed += dense != 0;
        c->n_costed++;
        macs += n->macs;
        flops += n->flops;
        traffic += n->bytes_r + n->bytes_w;
    }
    c->eff.macs = macs;
    c->eff.flops = flops;
    c->eff.flops_dense = 2 * macs;
    c->eff.traffic_bytes_unfused = traffic;
    c->input_bytes = 0;
    for (i = 0; i < g->n_inputs; i++) c->input_bytes += rpx__bytes(c, &c->vals[g->inputs[i]]);
    c->output_bytes = 0;
    for (i = 0; i < g->n_outputs; i++) c->output_bytes += rpx__bytes(c, &c->vals[g->outputs[i]]);
    io = c->input_bytes + c->output_bytes;
    c->eff.traffic_bytes_ideal = c->const_bytes + io; /* NaN when an output size is unknown */
    c->eff.partial = c->n_costed < c->n_total;
    c->eff.coverage = c->n_total ? (double)c->n_costed / (double)c->n_total : 1.0;
    c->eff.dense_coverage = n_dense ? (double)n_dense_costed / (double)n_dense : NAN;
    if (c->eff.partial) { /* lower bounds; a sum nothing contributed to is unknown, not 0 */
        if (!n_dense_costed) c->eff.macs = c->eff.flops_dense = NAN;
        if (!c->n_costed) c->eff.flops = c->eff.traffic_bytes_unfused = NAN;
    }
    if ((rc = liveness(c))) return rc;
    rpx_efficiency_derive(&c->eff);
    return tables(c);
}
