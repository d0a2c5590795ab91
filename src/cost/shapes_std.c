/* shapes_std.c — shape rules and cost formulas of the standard operators
 * whose output shape follows from their inputs' shapes and attributes and
 * that the other rooms do not cover: scatters, CumSum, GridSample, RoiAlign,
 * the recurrent family (RNN, GRU, LSTM), OneHot, EyeLike, Trilu, ...; and the
 * contraction order of an Einsum of any number of operands (the cheapest
 * pairwise order, found by dynamic programming over subsets of operands).
 * Formulas: docs/cost.md. */
#include <math.h>
#include <string.h>

#include "cost/shapes_internal.h"

/* ---- shape rules ---------------------------------------------------------- */

/* output 0 = input 0's shape and dtype (ScatterND, ScatterElements, CumSum, Trilu, ...) */
int rpx__infer_like_data(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    NEED(a, 0);
    return rpx__set_like(c, n, 0, a, a->dtype);
}

int rpx__infer_eyelike(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t dt;
    NEED(a, 0);
    dt = rpx__attr_i(n, "dtype", a->dtype);
    return rpx__set_like(c, n, 0, a, (int)dt);
}

/* GridSample: X [N, C, D1..Dk], grid [N, H1..Hk, k] -> [N, C, H1..Hk] */
int rpx__infer_grid_sample(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *g;
    int64_t d[RPX__MAX_RANK];
    int k, i;
    NEED(x, 0);
    NEED(g, 1);
    if (x->rank < 3 || g->rank != x->rank || g->dims[g->rank - 1] != x->rank - 2)
        return rpx__node_fail(c, n, RPX_EFORMAT,
                              "grid %s does not fit input %s: expected [N, H1..Hk, k] for X [N, C, D1..Dk]",
                              rpx__shape_str(c, g->rank, g->dims), rpx__shape_str(c, x->rank, x->dims));
    k = x->rank - 2;
    d[0] = x->dims[0];
    d[1] = x->dims[1];
    for (i = 0; i < k; i++) d[2 + i] = g->dims[1 + i];
    return rpx__set(c, n, 0, x->dtype, x->rank, d);
}

/* RoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] -> [R, C, oh, ow] */
int rpx__infer_roi_align(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *r;
    int64_t d[4];
    NEED(x, 0);
    NEED(r, 1);
    if (x->rank != 4 || r->rank != 2 || r->dims[1] != 4)
        return rpx__node_fail(c, n, RPX_EFORMAT, "expected X [N, C, H, W] and rois [R, 4], got %s and %s",
                              rpx__shape_str(c, x->rank, x->dims), rpx__shape_str(c, r->rank, r->dims));
    d[0] = r->dims[0];
    d[1] = x->dims[1];
    d[2] = rpx__attr_i(n, "output_height", 1);
    d[3] = rpx__attr_i(n, "output_width", 1);
    return rpx__set(c, n, 0, x->dtype, 4, d);
}

/* the recurrent family's sizes: X, W and the attributes */
typedef struct rnn_geom {
    int64_t seq, batch, in, hidden, dirs, gates;
    int layout;
} rnn_geom;

static int rnn_geom_of(rpx__ctx *c, rpx__node *n, rnn_geom *g)
{
    rpx__val *x, *w;
    const char *dir;
    NEED(x, 0);
    NEED(w, 1);
    g->gates = !strcmp(n->op, "LSTM") ? 4 : !strcmp(n->op, "GRU") ? 3 : 1;
    g->layout = (int)rpx__attr_i(n, "layout", 0);
    if (x->rank != 3 || w->rank != 3)
        return rpx__node_fail(c, n, RPX_EFORMAT, "X must be [seq, batch, input] and W [dirs, %lld*hidden, input]",
                              (long long)g->gates);
    g->seq = x->dims[g->layout ? 1 : 0];
    g->batch = x->dims[g->layout ? 0 : 1];
    g->in = x->dims[2];
    g->hidden = rpx__attr_i(n, "hidden_size", w->dims[1] / g->gates);
    dir = rpx__attr_s(c, n, "direction", "forward");
    g->dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
    if (w->dims[0] != g->dirs || w->dims[1] != g->gates * g->hidden || w->dims[2] != g->in)
        return rpx__node_fail(c, n, RPX_EFORMAT, "W %s does not fit X %s with hidden_size %lld (%s)",
                              rpx__shape_str(c, w->rank, w->dims), rpx__shape_str(c, x->rank, x->dims),
                              (long long)g->hidden, dir);
    return RPX__OK;
}

int rpx__infer_rnn(rpx__ctx *c, rpx__node *n)
{
    rnn_geom g;
    rpx__val *x;
    int64_t y[4], h[3];
    size_t i;
    int rc = rnn_geom_of(c, n, &g);
    if (rc) return rc;
    x = rpx__in(c, n, 0);
    if (g.layout) {
        y[0] = g.batch; y[1] = g.seq; y[2] = g.dirs; y[3] = g.hidden;
        h[0] = g.batch; h[1] = g.dirs; h[2] = g.hidden;
    } else {
        y[0] = g.seq; y[1] = g.dirs; y[2] = g.batch; y[3] = g.hidden;
        h[0] = g.dirs; h[1] = g.batch; h[2] = g.hidden;
    }
    if ((rc = rpx__set(c, n, 0, x->dtype, 4, y))) return rc;
    for (i = 1; i < n->n_out && i < 3; i++)
        if ((rc = rpx__set(c, n, i, x->dtype, 3, h))) return rc;
    return RPX__OK;
}

/* OneHot: indices [...], depth (a constant), values [2] -> depth inserted at axis */
int rpx__infer_one_hot(rpx__ctx *c, rpx__node *n)
{
    rpx__val *ind, *depth, *vals;
    int64_t d[RPX__MAX_RANK], *dv, axis;
    long nd;
    int a, i, r = 0, rc;
    NEED(ind, 0);
    NEED_CV(depth, 1);
    NEED(vals, 2);
    nd = rpx__cv_ints(c, depth, &dv);
    if (nd != 1 || dv[0] < 1)
        return rpx__node_fail(c, n, RPX_EFORMAT, "depth must be one positive number");
    if (ind->rank + 1 > RPX__MAX_RANK) return rpx__node_fail(c, n, RPX_EFORMAT, "rank too large");
    axis = rpx__attr_i(n, "axis", -1);
    if ((rc = rpx__norm_axis(c, n, axis, ind->rank + 1, &a))) return rc;
    for (i = 0; i <= ind->rank; i++) d[r++] = i == a ? dv[0] : ind->dims[i < a ? i : i - 1];
    return rpx__set(c, n, 0, vals->dtype, r, d);
}

/* DynamicQuantizeLinear: y like x (uint8), scale and zero point scalars */
int rpx__infer_dyn_quantize(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    int rc;
    NEED(x, 0);
    if ((rc = rpx__set_like(c, n, 0, x, RPX__T_UINT8))) return rc;
    if ((rc = rpx__set(c, n, 1, RPX__T_FLOAT, 0, NULL))) return rc;
    return rpx__set(c, n, 2, RPX__T_UINT8, 0, NULL);
}

/* Det: [..., M, M] -> [...] */
int rpx__infer_det(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    NEED(x, 0);
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %s is not [..., M, M]", rpx__shape_str(c, x->rank, x->dims));
    return rpx__set(c, n, 0, x->dtype, x->rank - 2, x->dims);
}

/* The integer and quantized products: the float rule on their two operands
 * (MatMulInteger, ConvInteger: inputs 0 and 1; QLinearMatMul, QLinearConv:
 * inputs 0 and 3), then the output dtype (int32, or the zero point's). */
static int quantized_operands(const rpx__node *n, int *a, int *b)
{
    int q = !strncmp(n->op, "QLinear", 7);
    *a = 0;
    *b = q ? 3 : 1;
    return q;
}

int rpx__infer_int_product(rpx__ctx *c, rpx__node *n)
{
    rpx__node tmp = *n;
    int ops[2], a, b, q = quantized_operands(n, &a, &b), rc, dt = RPX__T_INT32;
    rpx__val *o;
    if ((size_t)b >= n->n_in || n->in[b] < 0)
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %d is missing; it is required", b);
    ops[0] = n->in[a];
    ops[1] = n->in[b];
    tmp.in = ops;
    tmp.n_in = 2;
    rc = strstr(n->op, "Conv") ? rpx__infer_conv(c, &tmp) : rpx__infer_matmul(c, &tmp);
    n->reason = tmp.reason;
    if (rc) return rc;
    if (q) {
        const rpx__val *zp = rpx__in(c, n, 7);
        dt = zp && zp->dtype ? zp->dtype : rpx__in(c, n, 0)->dtype;
    }
    if ((o = rpx__out(c, n, 0))) o->dtype = dt;
    return RPX__OK;
}

/* ---- cost formulas -------------------------------------------------------- */
static double elems(const rpx__val *v) { return v && rpx__known(v) ? v->elems : NAN; }

/* interpolation FLOPs per output element over k resampled axes (as Resize) */
static double interp_flops(const char *mode, int k, int *ok)
{
    *ok = 1;
    if (!strcmp(mode, "nearest")) return 0;
    if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear")) return 3 * (ldexp(1, k) - 1);
    if (!strcmp(mode, "cubic") || !strcmp(mode, "bicubic")) return 7 * (pow(4, k) - 1) / 3;
    *ok = 0;
    return NAN;
}

int rpx__cost_std(rpx__ctx *c, rpx__node *n)
{
    const char *op = n->op;
    const rpx__val *x = rpx__in(c, n, 0), *y = rpx__out(c, n, 0);
    if (!strcmp(op, "ScatterND") || !strcmp(op, "ScatterElements") || !strcmp(op, "Scatter")) {
        const char *red = rpx__attr_s(c, n, "reduction", "none");
        /* the data is copied, the updates written; a reduction is one FLOP per update */
        n->flops = strcmp(red, "none") ? elems(rpx__in(c, n, 2)) : 0;
        return 1;
    }
    if (!strcmp(op, "MatMulInteger") || !strcmp(op, "QLinearMatMul") || !strcmp(op, "ConvInteger") ||
        !strcmp(op, "QLinearConv")) {
        int a, b;
        const rpx__val *w;
        quantized_operands(n, &a, &b);
        w = rpx__in(c, n, (size_t)b);
        x = rpx__in(c, n, (size_t)a);
        n->dense = 1;
        if (strstr(op, "Conv")) {
            double k = 1;
            int i;
            for (i = 1; i < w->rank; i++) k *= (double)w->dims[i];
            n->macs = elems(y) * k;
        } else {
            n->macs = elems(y) * (double)x->dims[x->rank - 1];
        }
        /* the products; zero points, requantisation and bias are not modelled */
        n->flops = 2 * n->macs;
        return 1;
    }
    if (!strcmp(op, "CumSum")) {
        n->flops = elems(y);
        return 1;
    }
    if (!strcmp(op, "GridSample")) {
        const char *mode = rpx__attr_s(c, n, "mode", n->opset >= 20 ? "linear" : "bilinear");
        int k = x->rank - 2, ok;
        double per = interp_flops(mode, k, &ok), points = elems(y) / (double)x->dims[1];
        if (!ok) {
            n->reason = rpx__fmt(c, "GridSample mode '%s' is not modelled", mode);
            return 0;
        }
        /* per output element: the interpolation; per grid point and axis: the
         * coordinate's unnormalisation and split (4 FLOPs) */
        n->flops = per * elems(y) + 4.0 * k * points;
        return 1;
    }
    if (!strcmp(op, "RoiAlign")) {
        int64_t s = rpx__attr_i(n, "sampling_ratio", 0);
        if (s <= 0) {
            n->reason = "RoiAlign with sampling_ratio 0 (adaptive): the samples per bin depend on "
                        "the sizes of the regions, known only at run time";
            return 0;
        }
        /* per output element: s*s bilinear samples (9 FLOPs each) and their
         * accumulation (1 each), then the average's division (1) */
        n->flops = elems(y) * ((double)(s * s) * 10 + 1);
        return 1;
    }
    if (!strcmp(op, "RNN") || !strcmp(op, "GRU") || !strcmp(op, "LSTM")) {
        rnn_geom g;
        int rc = rnn_geom_of(c, n, &g);
        const rpx__val *seqlens = rpx__in(c, n, 4);
        double steps, units, per;
        int bias = rpx__in(c, n, 3) != NULL;
        if (rc) return rc < 0 ? rc : 0;
        if (seqlens) {
            int64_t *sl;
            long k = rpx__cv_ints(c, seqlens, &sl), j;
            int all = k == g.batch;
            for (j = 0; all && j < k; j++) all = sl[j] == g.seq;
            if (!all) {
                n->reason = rpx__fmt(c, "%s with sequence_lens '%s': the steps taken depend on its "
                                        "values, known only at run time", op, seqlens->name);
                return 0;
            }
        }
        steps = (double)g.seq * (double)g.dirs * (double)g.batch;
        units = steps * (double)g.hidden;
        n->dense = 1;
        n->macs = units * (double)g.gates * (double)(g.in + g.hidden);
        if (g.gates == 4) /* LSTM: W·x + R·h per gate, 3 sigmoids (4), 2 tanh (1), c and h (4) */
            per = 4 + 3 * 4 + 2 + 4 + (bias ? 8 : 0) + (rpx__in(c, n, 7) ? 6 : 0);
        else if (g.gates == 3) /* GRU: sums (3), 2 sigmoids (8), tanh (1), r·(.) (1), h (4) */
            per = 3 + 8 + 1 + 1 + 4 + (bias ? 6 : 0);
        else /* RNN: sum (1), tanh (1) */
            per = 2 + (bias ? 2 : 0);
        n->flops = 2 * n->macs + per * units;
        return 1;
    }
    if (!strcmp(op, "OneHot") || !strcmp(op, "EyeLike") || !strcmp(op, "Trilu") ||
        !strcmp(op, "ReverseSequence")) {
        n->flops = 0;
        return 1;
    }
    if (!strcmp(op, "LRN")) { /* square, window sum, scale and power, divide */
        n->flops = elems(y) * ((double)rpx__attr_i(n, "size", 1) + 4);
        return 1;
    }
    if (!strcmp(op, "Hardmax")) { /* a max over the axis, a compare per element */
        n->flops = 2 * elems(y);
        return 1;
    }
    if (!strcmp(op, "DynamicQuantizeLinear")) { /* min/max (2), scale, then as QuantizeLinear (4) */
        n->flops = 6 * elems(x);
        return 1;
    }
    n->reason = rpx__fmt(c, "no cost formula for %s", op);
    return 0;
}

/* ---- Einsum of any number of operands ------------------------------------- */
#define EIN_MAXOPS 12
#define EIN_LABELS 52

typedef unsigned long long ein_set; /* 52 letters; ellipsis dims as labels 52.. */

/* macs of the cheapest pairwise order; *order describes it */
int rpx__einsum_order(rpx__ctx *c, rpx__node *n, double *macs, const char **order)
{
    const char *eq = rpx__attr_s(c, n, "equation", NULL), *p;
    double size[64];
    ein_set ops[EIN_MAXOPS], outset = 0, *need;
    double *best;
    int *split;
    int nops = 0, i, ell_rank = 0;
    unsigned s, full;
    char buf[512], desc[512];
    size_t len = 0;
    if (!eq) return rpx__node_fail(c, n, RPX_EFORMAT, "attribute 'equation' is missing");
    if (n->n_in > EIN_MAXOPS) {
        n->reason = rpx__fmt(c, "Einsum of %zu operands: more than %d are not planned", n->n_in, EIN_MAXOPS);
        return 0;
    }
    for (p = eq; *p && len < sizeof buf - 1; p++)
        if (*p != ' ') buf[len++] = *p;
    buf[len] = '\0';
    for (i = 0; i < 64; i++) size[i] = 1;
    for (p = buf; *p && !(p[0] == '-' && p[1] == '>');) {
        const rpx__val *v = rpx__in(c, n, (size_t)nops);
        int nl = 0, has_ell = -1, j, erank, lab[RPX__MAX_RANK];
        if (!v || !rpx__known(v)) {
            n->reason = "an operand's shape is unknown";
            return 0;
        }
        for (; *p && *p != ',' && !(p[0] == '-' && p[1] == '>'); p++) {
            if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
                has_ell = nl;
                p += 2;
                continue;
            }
            if (rpx__einsum_label(*p) < 0 || nl >= RPX__MAX_RANK)
                return rpx__node_fail(c, n, RPX_EFORMAT, "equation '%s' is malformed", eq);
            lab[nl++] = rpx__einsum_label(*p);
        }
        erank = v->rank - nl;
        if (erank < 0 || (has_ell < 0 && erank) || erank > 64 - EIN_LABELS)
            return rpx__node_fail(c, n, RPX_EFORMAT, "term %d of '%s' does not match rank %d", nops, eq, v->rank);
        ops[nops] = 0;
        for (j = 0; j < nl; j++) {
            int64_t d = v->dims[has_ell < 0 || j < has_ell ? j : j + erank];
            ops[nops] |= 1ULL << lab[j];
            if ((double)d > size[lab[j]]) size[lab[j]] = (double)d;
        }
        for (j = 0; j < erank; j++) { /* right-aligned broadcast dims */
            int l = EIN_LABELS + (erank - 1 - j);
            int64_t d = v->dims[has_ell + j];
            ops[nops] |= 1ULL << l;
            if ((double)d > size[l]) size[l] = (double)d;
        }
        if (erank > ell_rank) ell_rank = erank;
        nops++;
        if (*p == ',') p++;
    }
    if (nops != (int)n->n_in)
        return rpx__node_fail(c, n, RPX_EFORMAT, "equation '%s' has %d terms for %zu inputs", eq, nops, n->n_in);
    if (p[0] == '-') {
        for (p += 2; *p; p++) {
            if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
                for (i = 0; i < ell_rank; i++) outset |= 1ULL << (EIN_LABELS + i);
                p += 2;
            } else if (rpx__einsum_label(*p) >= 0) {
                outset |= 1ULL << rpx__einsum_label(*p);
            }
        }
    } else { /* implicit: the labels seen once, and the ellipsis */
        for (i = 0; i < EIN_LABELS; i++) {
            int cnt = 0, j;
            for (j = 0; j < nops; j++) cnt += (int)((ops[j] >> i) & 1);
            if (cnt == 1) outset |= 1ULL << i;
        }
        for (i = 0; i < ell_rank; i++) outset |= 1ULL << (EIN_LABELS + i);
    }
    full = (1u << nops) - 1;
    need = rpx__alloc(&c->arena, (full + 1) * sizeof *need);
    best = rpx__alloc(&c->arena, (full + 1) * sizeof *best);
    split = rpx__alloc(&c->arena, (full + 1) * sizeof *split);
    if (!need || !best || !split) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    /* need[s]: labels of the operands in s that are still needed outside s */
    for (s = 1; s <= full; s++) {
        ein_set in = 0, out = outset;
        for (i = 0; i < nops; i++) {
            if (s >> i & 1) in |= ops[i];
            else out |= ops[i];
        }
        need[s] = in & out;
    }
    for (s = 1; s <= full; s++) {
        unsigned a;
        if (!(s & (s - 1))) { /* one operand */
            best[s] = 0;
            split[s] = 0;
            continue;
        }
        best[s] = INFINITY;
        for (a = (s - 1) & s; a; a = (a - 1) & s) {
            unsigned b = s ^ a;
            ein_set u;
            double cost = 1;
            int l;
            if (a < b) continue; /* each split once */
            u = (a & (a - 1) ? need[a] : ops[__builtin_ctz(a)]) | (b & (b - 1) ? need[b] : ops[__builtin_ctz(b)]);
            for (l = 0; l < 64; l++)
                if (u >> l & 1) cost *= size[l];
            cost += best[a] + best[b];
            if (cost < best[s]) {
                best[s] = cost;
                split[s] = (int)a;
            }
        }
    }
    *macs = best[full];
    /* describe the order: the pairs, innermost first */
    {
        unsigned stack[2 * EIN_MAXOPS], post[2 * EIN_MAXOPS];
        int sp = 0, np = 0, k;
        size_t dl = 0;
        stack[sp++] = full;
        while (sp) {
            unsigned t = stack[--sp];
            if (!(t & (t - 1))) continue;
            post[np++] = t;
            stack[sp++] = (unsigned)split[t];
            stack[sp++] = t ^ (unsigned)split[t];
        }
        desc[0] = '\0';
        for (k = np - 1; k >= 0 && dl < sizeof desc - 64; k--) {
            unsigned b = (unsigned)split[post[k]], a = post[k] ^ b; /* a: the lower operands */
            int j, first = 1;
            dl += (size_t)snprintf(desc + dl, sizeof desc - dl, "%s(", k == np - 1 ? "" : ", ");
            for (j = 0; j < nops; j++)
                if (a >> j & 1) { dl += (size_t)snprintf(desc + dl, sizeof desc - dl, "%s%d", first ? "" : "+", j); first = 0; }
            dl += (size_t)snprintf(desc + dl, sizeof desc - dl, " x ");
            first = 1;
            for (j = 0; j < nops; j++)
                if (b >> j & 1) { dl += (size_t)snprintf(desc + dl, sizeof desc - dl, "%s%d", first ? "" : "+", j); first = 0; }
            dl += (size_t)snprintf(desc + dl, sizeof desc - dl, ")");
        }
        *order = rpx__fmt(c, "contraction order (operands by position, cheapest pairwise order): %s", desc);
    }
    return 1;
}
