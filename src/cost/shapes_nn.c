/* shapes_nn.c — shape inference of the network operators: Conv,
 * ConvTranspose, pooling, Gemm, MatMul, Einsum, normalisation, Resize and
 * Upsample. Inconsistent operands (channels that do not match the weight, a
 * contraction whose sizes differ) are errors that name the node. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/shapes_internal.h"

enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

static int auto_pad(rpx__ctx *c, rpx__node *n, int *mode)
{
    const char *s = rpx__attr_s(c, n, "auto_pad", "NOTSET");
    if (!strcmp(s, "NOTSET") || !*s) *mode = PAD_NOTSET;
    else if (!strcmp(s, "SAME_UPPER")) *mode = PAD_SAME_UPPER;
    else if (!strcmp(s, "SAME_LOWER")) *mode = PAD_SAME_LOWER;
    else if (!strcmp(s, "VALID")) *mode = PAD_VALID;
    else return rpx__node_fail(c, n, RPX_EFORMAT, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", s);
    return 0;
}

/* strides, dilations, pads: attribute of nsp (2·nsp for pads) values or defaults */
static int spatial_attr(rpx__ctx *c, rpx__node *n, const char *name, int count, int64_t def,
                        int64_t *out)
{
    const int64_t *v;
    long k = rpx__attr_ints(n, name, &v);
    int i;
    if (k <= 0) {
        for (i = 0; i < count; i++) out[i] = def;
        return 0;
    }
    if (k != count)
        return rpx__node_fail(c, n, RPX_EFORMAT, "'%s' has %ld values, %d expected", name, k,
                              count);
    for (i = 0; i < count; i++) {
        if (v[i] < (def == 0 ? 0 : 1) && strcmp(name, "pads"))
            return rpx__node_fail(c, n, RPX_EFORMAT, "'%s' value %lld is invalid", name,
                                  (long long)v[i]);
        if (v[i] > RPX__DIM_MAX || v[i] < -RPX__DIM_MAX)
            return rpx__node_fail(c, n, RPX_EFORMAT, "'%s' value %lld is absurd", name,
                                  (long long)v[i]);
        out[i] = v[i];
    }
    return 0;
}

/* Output extent of a convolution or pooling window sliding over `nsp` axes. */
static int window_out(rpx__ctx *c, rpx__node *n, int nsp, const int64_t *in, const int64_t *k,
                      int pool, int64_t *out)
{
    int64_t s[RPX__MAX_RANK], d[RPX__MAX_RANK], p[2 * RPX__MAX_RANK];
    int mode, rc, i, ceil_mode = pool ? (int)rpx__attr_i(n, "ceil_mode", 0) : 0;
    if ((rc = auto_pad(c, n, &mode))) return rc;
    if ((rc = spatial_attr(c, n, "strides", nsp, 1, s))) return rc;
    if ((rc = spatial_attr(c, n, "dilations", nsp, 1, d))) return rc;
    if ((rc = spatial_attr(c, n, "pads", 2 * nsp, 0, p))) return rc;
    for (i = 0; i < nsp; i++) {
        int64_t eff, span;
        if ((double)(k[i] - 1) * (double)d[i] + 1 > (double)RPX__DIM_MAX)
            return rpx__node_fail(c, n, RPX_EFORMAT, "the dilated window on axis %d is absurd", i);
        eff = (k[i] - 1) * d[i] + 1;
        if (k[i] <= 0)
            return rpx__node_fail(c, n, RPX_EFORMAT, "kernel size %lld on axis %d", (long long)k[i], i);
        if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
            out[i] = (in[i] + s[i] - 1) / s[i];
            continue;
        }
        span = mode == PAD_VALID ? in[i] - eff : in[i] + p[i] + p[i + nsp] - eff;
        if (span < 0)
            return rpx__node_fail(c, n, RPX_EFORMAT,
                                  "the window (%lld with dilation) is larger than the padded "
                                  "input (%lld) on spatial axis %d",
                                  (long long)eff, (long long)(span + eff), i);
        if (ceil_mode) {
            out[i] = (span + s[i] - 1) / s[i] + 1;
            /* the last window must start inside the input or its left padding */
            if (mode == PAD_NOTSET && (out[i] - 1) * s[i] >= in[i] + p[i]) out[i]--;
        } else {
            out[i] = span / s[i] + 1;
        }
    }
    return 0;
}

static int kernel_of(rpx__ctx *c, rpx__node *n, const rpx__val *w, int nsp, int64_t *k)
{
    const int64_t *ks;
    long cnt = rpx__attr_ints(n, "kernel_shape", &ks);
    int i;
    if (cnt >= 0 && cnt != nsp)
        return rpx__node_fail(c, n, RPX_EFORMAT, "kernel_shape has %ld values for %d spatial axes",
                              cnt, nsp);
    for (i = 0; i < nsp; i++) {
        k[i] = cnt >= 0 ? ks[i] : w ? w->dims[i + 2] : -1;
        if (w && w->dims[i + 2] != k[i])
            return rpx__node_fail(c, n, RPX_EFORMAT,
                                  "kernel_shape %lld on axis %d differs from the weight's %lld",
                                  (long long)k[i], i, (long long)w->dims[i + 2]);
        if (k[i] <= 0) return rpx__node_fail(c, n, RPX_EFORMAT, "kernel_shape is missing");
        if (k[i] > RPX__DIM_MAX) return rpx__node_fail(c, n, RPX_EFORMAT, "kernel_shape %lld is absurd", (long long)k[i]);
    }
    return 0;
}

int rpx__infer_conv(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *w, *b;
    int64_t k[RPX__MAX_RANK], dims[RPX__MAX_RANK], g = rpx__attr_i(n, "group", 1);
    int nsp, rc;
    NEED(x, 0);
    NEED(w, 1);
    if (x->rank < 3 || w->rank != x->rank)
        return rpx__node_fail(c, n, RPX_EFORMAT,
                              "input %s and weight %s: need N x C x spatial... and a weight of "
                              "the same rank",
                              rpx__shape_str(c, x->rank, x->dims), rpx__shape_str(c, w->rank, w->dims));
    nsp = x->rank - 2;
    if (g <= 0 || w->dims[1] * g != x->dims[1] || w->dims[0] % g)
        return rpx__node_fail(c, n, RPX_EFORMAT,
                              "input has %lld channels but the weight %s with group %lld expects "
                              "%lld",
                              (long long)x->dims[1], rpx__shape_str(c, w->rank, w->dims), (long long)g,
                              (long long)(w->dims[1] * g));
    /* DeformConv's input 2 is the offset; its bias is input 3 */
    if ((b = rpx__in(c, n, strcmp(n->op, "DeformConv") ? 2 : 3)) && rpx__known(b) &&
        b->elems != (double)w->dims[0])
        return rpx__node_fail(c, n, RPX_EFORMAT, "bias has %.17g values for %lld output channels",
                              b->elems, (long long)w->dims[0]);
    if ((rc = kernel_of(c, n, w, nsp, k))) return rc;
    dims[0] = x->dims[0];
    dims[1] = w->dims[0];
    if ((rc = window_out(c, n, nsp, x->dims + 2, k, 0, dims + 2))) return rc;
    return rpx__set(c, n, 0, x->dtype, x->rank, dims);
}

int rpx__infer_conv_transpose(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *w;
    int64_t k[RPX__MAX_RANK], dims[RPX__MAX_RANK], s[RPX__MAX_RANK], d[RPX__MAX_RANK];
    int64_t p[2 * RPX__MAX_RANK], op[RPX__MAX_RANK], g = rpx__attr_i(n, "group", 1);
    const int64_t *os;
    long nos;
    int nsp, rc, mode, i;
    NEED(x, 0);
    NEED(w, 1);
    if (x->rank < 3 || w->rank != x->rank)
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %s and weight %s do not fit",
                              rpx__shape_str(c, x->rank, x->dims), rpx__shape_str(c, w->rank, w->dims));
    nsp = x->rank - 2;
    if (g <= 0 || w->dims[0] != x->dims[1])
        return rpx__node_fail(c, n, RPX_EFORMAT,
                              "input has %lld channels but the weight %s expects %lld",
                              (long long)x->dims[1], rpx__shape_str(c, w->rank, w->dims),
                              (long long)w->dims[0]);
    if ((rc = kernel_of(c, n, w, nsp, k))) return rc;
    if ((rc = auto_pad(c, n, &mode))) return rc;
    if ((rc = spatial_attr(c, n, "strides", nsp, 1, s))) return rc;
    if ((rc = spatial_attr(c, n, "dilations", nsp, 1, d))) return rc;
    if ((rc = spatial_attr(c, n, "pads", 2 * nsp, 0, p))) return rc;
    if ((rc = spatial_attr(c, n, "output_padding", nsp, 0, op))) return rc;
    dims[0] = x->dims[0];
    dims[1] = w->dims[1] * g;
    nos = rpx__attr_ints(n, "output_shape", &os);
    if (nos > 0) {
        if (nos != nsp && nos != nsp + 2)
            return rpx__node_fail(c, n, RPX_EFORMAT, "output_shape has %ld values", nos);
        for (i = 0; i < nsp; i++) dims[i + 2] = os[nos - nsp + i];
    } else {
        for (i = 0; i < nsp; i++) {
            int64_t eff;
            if ((double)(k[i] - 1) * (double)d[i] + (double)s[i] * (double)x->dims[i + 2] +
                    (double)op[i] > (double)RPX__DIM_MAX)
                return rpx__node_fail(c, n, RPX_EFORMAT, "the output of spatial axis %d is absurd", i);
            eff = (k[i] - 1) * d[i] + 1;
            if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER)
                dims[i + 2] = x->dims[i + 2] * s[i];
            else if (mode == PAD_VALID)
                dims[i + 2] = s[i] * (x->dims[i + 2] - 1) + op[i] + eff;
            else
                dims[i + 2] = s[i] * (x->dims[i + 2] - 1) + op[i] + eff - p[i] - p[i + nsp];
            if (dims[i + 2] < 0)
                return rpx__node_fail(c, n, RPX_EFORMAT, "the pads leave spatial axis %d empty", i);
        }
    }
    return rpx__set(c, n, 0, x->dtype, x->rank, dims);
}

int rpx__infer_pool(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    int64_t k[RPX__MAX_RANK], dims[RPX__MAX_RANK];
    int nsp, rc;
    NEED(x, 0);
    if (x->rank < 3)
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %s: need N x C x spatial...",
                              rpx__shape_str(c, x->rank, x->dims));
    nsp = x->rank - 2;
    if ((rc = kernel_of(c, n, NULL, nsp, k))) return rc;
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    if ((rc = window_out(c, n, nsp, x->dims + 2, k, 1, dims + 2))) return rc;
    if ((rc = rpx__set(c, n, 0, x->dtype, x->rank, dims))) return rc;
    return rpx__set(c, n, 1, RPX__T_INT64, x->rank, dims); /* MaxPool's Indices */
}

int rpx__infer_global_pool(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    int64_t dims[RPX__MAX_RANK];
    int i;
    NEED(x, 0);
    if (x->rank < 2)
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %s: need N x C x spatial...",
                              rpx__shape_str(c, x->rank, x->dims));
    for (i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : 1;
    return rpx__set(c, n, 0, x->dtype, x->rank, dims);
}

int rpx__infer_gemm(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *b, *cc;
    int64_t dims[2], m, k, kb, nn, tmp[RPX__MAX_RANK];
    int ta = (int)rpx__attr_i(n, "transA", 0), tb = (int)rpx__attr_i(n, "transB", 0), r, rc;
    NEED(a, 0);
    NEED(b, 1);
    if (a->rank != 2 || b->rank != 2)
        return rpx__node_fail(c, n, RPX_EFORMAT, "A %s and B %s must be matrices",
                              rpx__shape_str(c, a->rank, a->dims), rpx__shape_str(c, b->rank, b->dims));
    m = ta ? a->dims[1] : a->dims[0];
    k = ta ? a->dims[0] : a->dims[1];
    kb = tb ? b->dims[1] : b->dims[0];
    nn = tb ? b->dims[0] : b->dims[1];
    if (k != kb)
        return rpx__node_fail(c, n, RPX_EFORMAT,
                              "A %s (transA=%d) and B %s (transB=%d) differ in the inner "
                              "dimension (%lld vs %lld)",
                              rpx__shape_str(c, a->rank, a->dims), ta, rpx__shape_str(c, b->rank, b->dims), tb,
                              (long long)k, (long long)kb);
    dims[0] = m;
    dims[1] = nn;
    if ((cc = rpx__in(c, n, 2)) && rpx__known(cc)) {
        if ((rc = rpx__broadcast(c, n, 2, dims, cc->rank, cc->dims, &r, tmp))) return rc;
        if (r != 2 || tmp[0] != m || tmp[1] != nn)
            return rpx__node_fail(c, n, RPX_EFORMAT, "C %s does not broadcast to %lldx%lld",
                                  rpx__shape_str(c, cc->rank, cc->dims), (long long)m, (long long)nn);
    }
    return rpx__set(c, n, 0, a->dtype, 2, dims);
}

int rpx__infer_matmul(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *b;
    int64_t da[RPX__MAX_RANK + 1], db[RPX__MAX_RANK + 1], batch[RPX__MAX_RANK],
        dims[RPX__MAX_RANK + 2];
    int ra, rb, rbatch, rc, r = 0, i;
    NEED(a, 0);
    NEED(b, 1);
    if (a->rank < 1 || b->rank < 1)
        return rpx__node_fail(c, n, RPX_EFORMAT, "operands must have rank >= 1");
    ra = a->rank;
    rb = b->rank;
    memcpy(da, a->dims, (size_t)ra * sizeof *da);
    memcpy(db, b->dims, (size_t)rb * sizeof *db);
    if (ra == 1) { /* [K] → [1, K] */
        da[1] = da[0];
        da[0] = 1;
        ra = 2;
    }
    if (rb == 1) { /* [K] → [K, 1] */
        db[1] = 1;
        rb = 2;
    }
    if (da[ra - 1] != db[rb - 2])
        return rpx__node_fail(c, n, RPX_EFORMAT,
                              "A %s and B %s differ in the inner dimension (%lld vs %lld)",
                              rpx__shape_str(c, a->rank, a->dims), rpx__shape_str(c, b->rank, b->dims),
                              (long long)da[ra - 1], (long long)db[rb - 2]);
    if ((rc = rpx__broadcast(c, n, ra - 2, da, rb - 2, db, &rbatch, batch))) return rc;
    for (i = 0; i < rbatch; i++) dims[r++] = batch[i];
    if (a->rank > 1) dims[r++] = da[ra - 2];
    if (b->rank > 1) dims[r++] = db[rb - 1];
    return rpx__set(c, n, 0, a->dtype, r, dims);
}

/* ---- Einsum ----------------------------------------------------------- */
int rpx__einsum_label(char ch)
{
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
    return -1;
}

int rpx__einsum_plan(rpx__ctx *c, rpx__node *n, rpx__einsum *plan, int rank_out_only, int *rank,
                     int64_t *dims)
{
    const char *eq = rpx__attr_s(c, n, "equation", NULL), *p;
    int64_t size[52], ell[RPX__MAX_RANK];
    int count[52] = {0}, ell_rank = 0, any_ell = 0, op = 0, i, r = 0, rc;
    char buf[512];
    size_t len = 0;
    (void)rank_out_only;
    if (!eq) return rpx__node_fail(c, n, RPX_EFORMAT, "attribute 'equation' is missing");
    for (p = eq; *p && len < sizeof buf - 1; p++)
        if (*p != ' ') buf[len++] = *p;
    buf[len] = '\0';
    for (i = 0; i < 52; i++) size[i] = -1;
    for (i = 0; i < RPX__MAX_RANK; i++) ell[i] = 1;
    p = buf;
    /* operands */
    while (*p && !(p[0] == '-' && p[1] == '>')) {
        rpx__val *v;
        int labels[RPX__MAX_RANK], nl = 0, has_ell = -1, j, erank;
        if (op >= (int)n->n_in)
            return rpx__node_fail(c, n, RPX_EFORMAT, "equation '%s' has more terms than inputs", eq);
        NEED(v, (size_t)op);
        for (; *p && *p != ',' && !(p[0] == '-' && p[1] == '>'); p++) {
            if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
                if (has_ell >= 0) return rpx__node_fail(c, n, RPX_EFORMAT, "two ellipses in a term");
                has_ell = nl;
                p += 2;
                continue;
            }
            if (rpx__einsum_label(*p) < 0 || nl >= RPX__MAX_RANK)
                return rpx__node_fail(c, n, RPX_EFORMAT, "equation '%s' is malformed", eq);
            labels[nl++] = rpx__einsum_label(*p);
        }
        erank = v->rank - nl;
        if ((has_ell < 0 && erank != 0) || erank < 0)
            return rpx__node_fail(c, n, RPX_EFORMAT, "term %d of '%s' does not match rank %d", op,
                                  eq, v->rank);
        if (has_ell >= 0) {
            any_ell = 1;
            if (erank > ell_rank) {
                /* right-align: shift the broadcast dims already seen */
                int64_t tmp[RPX__MAX_RANK];
                for (j = 0; j < erank; j++) tmp[j] = 1;
                for (j = 0; j < ell_rank; j++) tmp[erank - ell_rank + j] = ell[j];
                memcpy(ell, tmp, sizeof tmp[0] * (size_t)erank);
                ell_rank = erank;
            }
            for (j = 0; j < erank; j++) {
                int64_t d = v->dims[has_ell + j], *e = &ell[ell_rank - erank + j];
                if (*e == 1) *e = d;
                else if (d != 1 && d != *e)
                    return rpx__node_fail(c, n, RPX_EFORMAT, "ellipsis dimensions do not broadcast");
            }
        }
        for (j = 0; j < nl; j++) {
            int64_t d = v->dims[j < has_ell || has_ell < 0 ? j : j + erank];
            int l = labels[j];
            if (size[l] >= 0 && size[l] != d && d != 1 && size[l] != 1)
                return rpx__node_fail(c, n, RPX_EFORMAT, "label '%c' has sizes %lld and %lld",
                                      l < 26 ? 'a' + l : 'A' + l - 26, (long long)size[l],
                                      (long long)d);
            if (size[l] < d) size[l] = d;
            count[l]++;
        }
        op++;
        if (*p == ',') p++;
    }
    if (op != (int)n->n_in)
        return rpx__node_fail(c, n, RPX_EFORMAT, "equation '%s' has %d terms for %zu inputs", eq,
                              op, n->n_in);
    if (p[0] == '-') {
        int seen_ell = 0;
        for (p += 2; *p; p++) {
            if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
                if (seen_ell++) return rpx__node_fail(c, n, RPX_EFORMAT, "two ellipses in the output");
                for (i = 0; i < ell_rank; i++) dims[r++] = ell[i];
                p += 2;
                continue;
            }
            if (rpx__einsum_label(*p) < 0 || size[rpx__einsum_label(*p)] < 0 || r >= RPX__MAX_RANK)
                return rpx__node_fail(c, n, RPX_EFORMAT, "output of '%s' uses an unknown label", eq);
            dims[r++] = size[rpx__einsum_label(*p)];
        }
    } else {
        if (any_ell)
            for (i = 0; i < ell_rank; i++) dims[r++] = ell[i];
        for (i = 0; i < 52 && r < RPX__MAX_RANK; i++)
            if (count[i] == 1) dims[r++] = size[i];
    }
    *rank = r;
    plan->n_ops = op;
    plan->macs = 1;
    for (i = 0; i < 52; i++)
        if (size[i] >= 0) plan->macs *= (double)size[i];
    for (i = 0; i < ell_rank; i++) plan->macs *= (double)ell[i];
    plan->out_elems = 1;
    for (i = 0; i < r; i++) plan->out_elems *= (double)dims[i];
    rc = 0;
    return rc;
}

int rpx__infer_einsum(rpx__ctx *c, rpx__node *n)
{
    rpx__einsum plan;
    int64_t dims[RPX__MAX_RANK];
    int rank, rc = rpx__einsum_plan(c, n, &plan, 1, &rank, dims);
    if (rc) return rc;
    return rpx__set(c, n, 0, rpx__in(c, n, 0)->dtype, rank, dims);
}

/* ---- normalisation ------------------------------------------------------ */
int rpx__infer_batchnorm(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    int64_t ch;
    size_t i;
    int rc;
    NEED(x, 0);
    if (x->rank < 2) return rpx__node_fail(c, n, RPX_EFORMAT, "input needs N x C x ...");
    if ((rc = rpx__set_like(c, n, 0, x, x->dtype))) return rc;
    ch = x->dims[1];
    for (i = 1; i < n->n_out; i++) /* training outputs: running mean, var, saved stats */
        if ((rc = rpx__set(c, n, i, x->dtype, 1, &ch))) return rc;
    return RPX__OK;
}

int rpx__infer_layernorm(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    int64_t dims[RPX__MAX_RANK];
    int ax, rc, i, stash = (int)rpx__attr_i(n, "stash_type", RPX__T_FLOAT);
    NEED(x, 0);
    if ((rc = rpx__norm_axis(c, n, rpx__attr_i(n, "axis", -1), x->rank, &ax))) return rc;
    if ((rc = rpx__set_like(c, n, 0, x, x->dtype))) return rc;
    for (i = 0; i < x->rank; i++) dims[i] = i < ax ? x->dims[i] : 1;
    if ((rc = rpx__set(c, n, 1, stash, x->rank, dims))) return rc;
    return rpx__set(c, n, 2, stash, x->rank, dims);
}

/* ---- Resize and Upsample ------------------------------------------------ */
int rpx__infer_resize(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *scales = NULL, *sizes = NULL;
    int64_t dims[RPX__MAX_RANK], axes[RPX__MAX_RANK];
    const int64_t *ax;
    long na = rpx__attr_ints(n, "axes", &ax), i;
    int rc;
    NEED(x, 0);
    if (n->opset > 0 && n->opset < 11) {
        scales = rpx__in(c, n, 1);
    } else {
        scales = rpx__in(c, n, 2);
        sizes = rpx__in(c, n, 3);
    }
    if (na <= 0) {
        na = x->rank;
        for (i = 0; i < na; i++) axes[i] = i;
    } else {
        for (i = 0; i < na && i < RPX__MAX_RANK; i++) {
            int a;
            if ((rc = rpx__norm_axis(c, n, ax[i], x->rank, &a))) return rc;
            axes[i] = a;
        }
    }
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    if (sizes && !(sizes->rank == 1 && sizes->dims[0] == 0)) {
        int64_t *sz;
        const char *policy = rpx__attr_s(c, n, "keep_aspect_ratio_policy", "stretch");
        if (!sizes->has_cv)
            return rpx__unknown(n, rpx__fmt(c, "the output size comes from '%s', computed at run time",
                                            sizes->name));
        if (rpx__cv_ints(c, sizes, &sz) != na)
            return rpx__node_fail(c, n, RPX_EFORMAT, "'sizes' has %zu values for %ld axes",
                                  sizes->cv_n, na);
        if (!strcmp(policy, "not_larger") || !strcmp(policy, "not_smaller")) {
            double scale = strcmp(policy, "not_larger") ? 0 : INFINITY;
            for (i = 0; i < na; i++) {
                double s = (double)sz[i] / (double)x->dims[axes[i]];
                scale = strcmp(policy, "not_larger") ? fmax(scale, s) : fmin(scale, s);
            }
            for (i = 0; i < na; i++) {
                double o = floor(scale * (double)x->dims[axes[i]] + 0.5);
                if (!(o >= 0 && o <= (double)RPX__DIM_MAX))
                    return rpx__node_fail(c, n, RPX_EFORMAT, "'sizes' give an absurd output");
                dims[axes[i]] = (int64_t)o;
            }
        } else {
            for (i = 0; i < na; i++) dims[axes[i]] = sz[i];
        }
    } else if (scales && !(scales->rank == 1 && scales->dims[0] == 0)) {
        if (!scales->has_cv)
            return rpx__unknown(n, rpx__fmt(c, "the scales come from '%s', computed at run time",
                                            scales->name));
        if ((long)scales->cv_n != na)
            return rpx__node_fail(c, n, RPX_EFORMAT, "'scales' has %zu values for %ld axes",
                                  scales->cv_n, na);
        for (i = 0; i < na; i++) {
            double s = rpx__fv_at(scales, (size_t)i);
            if (!(s > 0) || s > 1e9)
                return rpx__node_fail(c, n, RPX_EFORMAT, "scale %g is invalid", s);
            if (floor((double)x->dims[axes[i]] * s) > (double)RPX__DIM_MAX)
                return rpx__node_fail(c, n, RPX_EFORMAT, "scale %g gives an absurd output", s);
            dims[axes[i]] = (int64_t)floor((double)x->dims[axes[i]] * s);
        }
    } else {
        return rpx__node_fail(c, n, RPX_EFORMAT, "neither 'scales' nor 'sizes' is given");
    }
    return rpx__set(c, n, 0, x->dtype, x->rank, dims);
}

int rpx__infer_upsample(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *s = rpx__in(c, n, 1);
    int64_t dims[RPX__MAX_RANK];
    const Onnx__AttributeProto *a = rpx__attr(n, "scales");
    int i;
    NEED(x, 0);
    if (s && !s->has_cv)
        return rpx__unknown(n, rpx__fmt(c, "the scales come from '%s', computed at run time", s->name));
    if ((s ? (int)s->cv_n : a ? (int)a->n_floats : -1) != x->rank)
        return rpx__node_fail(c, n, RPX_EFORMAT, "'scales' must have one value per axis");
    for (i = 0; i < x->rank; i++) {
        double sc = s ? rpx__fv_at(s, (size_t)i) : a->floats[i];
        if (!(sc > 0) || sc > 1e9) return rpx__node_fail(c, n, RPX_EFORMAT, "scale %g is invalid", sc);
        if (floor((double)x->dims[i] * sc) > (double)RPX__DIM_MAX)
            return rpx__node_fail(c, n, RPX_EFORMAT, "scale %g gives an absurd output", sc);
        dims[i] = (int64_t)floor((double)x->dims[i] * sc);
    }
    return rpx__set(c, n, 0, x->dtype, x->rank, dims);
}
