/* shapes_move.c — shape inference (and folding, where small) of views and
 * data movement: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat,
 * Split, Slice, Gather*, Pad, Expand, Tile, Range, ConstantOfShape,
 * DepthToSpace, SpaceToDepth, TopK, NonZero, Quantize/DequantizeLinear. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/shapes_internal.h"

int rpx__infer_reshape(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *s = NULL;
    int64_t *sh, dims[RPX__MAX_RANK];
    long k, j, infer = -1;
    double known = 1;
    int rc, allowzero = (int)rpx__attr_i(n, "allowzero", 0);
    NEED(a, 0);
    if (rpx__in(c, n, 1)) {
        NEED_CV(s, 1);
        k = rpx__cv_ints(c, s, &sh);
    } else {
        k = rpx__attr_ints(n, "shape", (const int64_t **)&sh);
        if (k < 0) return rpx__node_fail(c, n, RPX_EFORMAT, "the target shape is missing");
    }
    if (k > RPX__MAX_RANK) return rpx__node_fail(c, n, RPX_EFORMAT, "target shape has %ld dimensions", k);
    for (j = 0; j < k; j++) {
        if (sh[j] == 0 && !allowzero) {
            if (j >= a->rank)
                return rpx__node_fail(c, n, RPX_EFORMAT,
                                      "target dimension %ld is 0 (copy) but the input has rank %d",
                                      j, a->rank);
            dims[j] = a->dims[j];
        } else if (sh[j] == -1) {
            if (infer >= 0)
                return rpx__node_fail(c, n, RPX_EFORMAT, "the target shape has two -1 entries");
            infer = j;
            dims[j] = 1;
            continue;
        } else if (sh[j] < -1) {
            return rpx__node_fail(c, n, RPX_EFORMAT, "target dimension %ld is %lld", j,
                                  (long long)sh[j]);
        } else {
            dims[j] = sh[j];
        }
        known *= (double)dims[j];
    }
    if (infer >= 0) {
        if (known == 0 || fmod(a->elems, known) != 0)
            return rpx__node_fail(c, n, RPX_EFORMAT,
                                  "cannot reshape %s (%.17g elements) to %s with one -1 entry",
                                  rpx__shape_str(c, a->rank, a->dims), a->elems,
                                  rpx__shape_str(c, (int)k, sh));
        dims[infer] = (int64_t)(a->elems / known);
    } else if (known != a->elems) {
        return rpx__node_fail(c, n, RPX_EFORMAT,
                              "cannot reshape %s (%.17g elements) to %s (%.17g elements)",
                              rpx__shape_str(c, a->rank, a->dims), a->elems, rpx__shape_str(c, (int)k, dims),
                              known);
    }
    if ((rc = rpx__set(c, n, 0, a->dtype, (int)k, dims))) return rc;
    return rpx__pass_cv(c, n, a);
}

int rpx__infer_flatten(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t axis = rpx__attr_i(n, "axis", 1), dims[2] = {1, 1};
    int k, rc;
    NEED(a, 0);
    if (axis < 0) axis += a->rank;
    if (axis < 0 || axis > a->rank)
        return rpx__node_fail(c, n, RPX_EFORMAT, "axis %lld is out of range for rank %d",
                              (long long)rpx__attr_i(n, "axis", 1), a->rank);
    for (k = 0; k < a->rank; k++) dims[k < axis ? 0 : 1] *= a->dims[k];
    if ((rc = rpx__set(c, n, 0, a->dtype, 2, dims))) return rc;
    return rpx__pass_cv(c, n, a);
}

int rpx__infer_squeeze(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t *axes, dims[RPX__MAX_RANK];
    int drop[RPX__MAX_RANK] = {0}, absent, k, r = 0, rc;
    long cnt;
    NEED(a, 0);
    cnt = rpx__axes_of(c, n, 1, &axes, &absent);
    if (cnt == -2)
        return rpx__unknown(n, rpx__fmt(c, "the squeezed axes come from '%s', computed at run time",
                                        rpx__in(c, n, 1)->name));
    if (cnt == 0) {
        for (k = 0; k < a->rank; k++) drop[k] = a->dims[k] == 1;
    } else {
        for (k = 0; k < cnt; k++) {
            int ax;
            if ((rc = rpx__norm_axis(c, n, axes[k], a->rank, &ax))) return rc;
            if (a->dims[ax] != 1)
                return rpx__node_fail(c, n, RPX_EFORMAT,
                                      "cannot squeeze axis %d of %s: its size is %lld, not 1", ax,
                                      rpx__shape_str(c, a->rank, a->dims), (long long)a->dims[ax]);
            drop[ax] = 1;
        }
    }
    for (k = 0; k < a->rank; k++)
        if (!drop[k]) dims[r++] = a->dims[k];
    if ((rc = rpx__set(c, n, 0, a->dtype, r, dims))) return rc;
    return rpx__pass_cv(c, n, a);
}

int rpx__infer_unsqueeze(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t *axes, dims[RPX__MAX_RANK];
    int ins[RPX__MAX_RANK] = {0}, absent, k, r, j = 0, rc;
    long cnt;
    NEED(a, 0);
    cnt = rpx__axes_of(c, n, 1, &axes, &absent);
    if (cnt == -2)
        return rpx__unknown(n, rpx__fmt(c, "the new axes come from '%s', computed at run time",
                                        rpx__in(c, n, 1)->name));
    if (absent) return rpx__node_fail(c, n, RPX_EFORMAT, "'axes' is missing");
    r = a->rank + (int)cnt;
    if (r > RPX__MAX_RANK) return rpx__node_fail(c, n, RPX_EFORMAT, "output rank %d is too large", r);
    for (k = 0; k < cnt; k++) {
        int ax;
        if ((rc = rpx__norm_axis(c, n, axes[k], r, &ax))) return rc;
        if (ins[ax]) return rpx__node_fail(c, n, RPX_EFORMAT, "axis %d is given twice", ax);
        ins[ax] = 1;
    }
    for (k = 0; k < r; k++) dims[k] = ins[k] ? 1 : a->dims[j++];
    if ((rc = rpx__set(c, n, 0, a->dtype, r, dims))) return rc;
    return rpx__pass_cv(c, n, a);
}



static size_t map_transpose(const int64_t *coord, const rpx__val *in, const void *arg)
{
    const int64_t *perm = arg;
    int64_t src[RPX__MAX_RANK];
    int k;
    for (k = 0; k < in->rank; k++) src[perm[k]] = coord[k];
    return rpx__lin_of(src, in);
}

int rpx__infer_transpose(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    const int64_t *p;
    int64_t perm[RPX__MAX_RANK], dims[RPX__MAX_RANK];
    int used[RPX__MAX_RANK] = {0}, k, rc;
    long cnt;
    NEED(a, 0);
    cnt = rpx__attr_ints(n, "perm", &p);
    if (cnt < 0 || (cnt == 0 && a->rank > 0)) {
        for (k = 0; k < a->rank; k++) perm[k] = a->rank - 1 - k;
    } else {
        if (cnt != a->rank)
            return rpx__node_fail(c, n, RPX_EFORMAT, "perm has %ld entries for rank %d", cnt,
                                  a->rank);
        for (k = 0; k < a->rank; k++) {
            if (p[k] < 0 || p[k] >= a->rank || used[p[k]])
                return rpx__node_fail(c, n, RPX_EFORMAT, "perm is not a permutation of 0..%d",
                                      a->rank - 1);
            used[p[k]] = 1;
            perm[k] = p[k];
        }
    }
    for (k = 0; k < a->rank; k++) dims[k] = a->dims[perm[k]];
    if ((rc = rpx__set(c, n, 0, a->dtype, a->rank, dims))) return rc;
    return rpx__fold_map(c, n, 0, a, map_transpose, perm);
}

int rpx__infer_concat(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t dims[RPX__MAX_RANK];
    int ax, rc, k, all_cv = 1;
    size_t i;
    if (!rpx__attr(n, "axis")) return rpx__node_fail(c, n, RPX_EFORMAT, "attribute 'axis' is missing");
    NEED(a, 0);
    if ((rc = rpx__norm_axis(c, n, rpx__attr_i(n, "axis", 0), a->rank, &ax))) return rc;
    memcpy(dims, a->dims, (size_t)a->rank * sizeof *dims);
    dims[ax] = 0;
    for (i = 0; i < n->n_in; i++) {
        rpx__val *b;
        NEED(b, i);
        if (b->rank != a->rank)
            return rpx__node_fail(c, n, RPX_EFORMAT, "input %zu has rank %d, input 0 rank %d", i,
                                  b->rank, a->rank);
        for (k = 0; k < a->rank; k++)
            if (k != ax && b->dims[k] != a->dims[k])
                return rpx__node_fail(c, n, RPX_EFORMAT,
                                      "input %zu is %s, input 0 is %s: they differ outside axis %d",
                                      i, rpx__shape_str(c, b->rank, b->dims),
                                      rpx__shape_str(c, a->rank, a->dims), ax);
        dims[ax] += b->dims[ax];
        if (dims[ax] > RPX__DIM_MAX) return rpx__node_fail(c, n, RPX_EFORMAT, "the concatenation is absurdly long");
        if (!b->has_cv || b->cv_float != a->cv_float) all_cv = 0;
    }
    if ((rc = rpx__set(c, n, 0, a->dtype, a->rank, dims))) return rc;
    if (all_cv && rpx__out(c, n, 0) && rpx__out(c, n, 0)->elems <= FOLD_MAX) {
        size_t cnt = (size_t)rpx__out(c, n, 0)->elems, outer = 1, at = 0, o;
        double *rf = rpx__alloc(&c->arena, (cnt + 1) * sizeof *rf);
        int64_t *ri = rpx__alloc(&c->arena, (cnt + 1) * sizeof *ri);
        if (!rf || !ri) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (k = 0; k < ax; k++) outer *= (size_t)a->dims[k];
        for (o = 0; o < outer; o++)
            for (i = 0; i < n->n_in; i++) {
                rpx__val *b = rpx__in(c, n, i);
                size_t chunk = outer ? (size_t)b->elems / outer : 0, j;
                for (j = 0; j < chunk && at < cnt; j++, at++) {
                    rf[at] = rpx__fv_at(b, o * chunk + j);
                    ri[at] = rpx__iv_at(b, o * chunk + j);
                }
            }
        return a->cv_float ? rpx__set_cv_f(c, n, 0, rf, cnt) : rpx__set_cv_i(c, n, 0, ri, cnt);
    }
    return RPX__OK;
}

typedef struct slice_arg {
    int64_t start[RPX__MAX_RANK], step[RPX__MAX_RANK];
} slice_arg;

static size_t map_slice(const int64_t *coord, const rpx__val *in, const void *arg)
{
    const slice_arg *s = arg;
    int64_t src[RPX__MAX_RANK];
    int k;
    for (k = 0; k < in->rank; k++) src[k] = s->start[k] + coord[k] * s->step[k];
    return rpx__lin_of(src, in);
}

int rpx__infer_split(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int ax, rc;
    size_t i, nout = n->n_out;
    int64_t sizes[4096], dims[RPX__MAX_RANK], total = 0, *sp;
    long cnt = -1;
    const int64_t *attr;
    NEED(a, 0);
    if ((rc = rpx__norm_axis(c, n, rpx__attr_i(n, "axis", 0), a->rank, &ax))) return rc;
    if (nout == 0 || nout > 4096) return rpx__node_fail(c, n, RPX_EFORMAT, "%zu outputs", nout);
    if ((cnt = rpx__attr_ints(n, "split", &attr)) >= 0) {
        sp = (int64_t *)attr;
    } else if (rpx__in(c, n, 1)) {
        rpx__val *s;
        NEED_CV(s, 1);
        cnt = rpx__cv_ints(c, s, &sp);
    }
    if (cnt >= 0) {
        if ((size_t)cnt != nout)
            return rpx__node_fail(c, n, RPX_EFORMAT, "'split' has %ld sizes for %zu outputs", cnt,
                                  nout);
        for (i = 0; i < nout; i++) {
            if (sp[i] < 0 || sp[i] > RPX__DIM_MAX)
                return rpx__node_fail(c, n, RPX_EFORMAT, "split size %lld is invalid", (long long)sp[i]);
            sizes[i] = sp[i];
            total += sp[i];
        }
        if (total != a->dims[ax])
            return rpx__node_fail(c, n, RPX_EFORMAT, "split sizes add up to %lld, axis %d has %lld",
                                  (long long)total, ax, (long long)a->dims[ax]);
    } else if (rpx__attr(n, "num_outputs")) {
        int64_t k = rpx__attr_i(n, "num_outputs", 1), chunk;
        if (k <= 0 || (size_t)k != nout)
            return rpx__node_fail(c, n, RPX_EFORMAT, "num_outputs %lld for %zu outputs",
                                  (long long)k, nout);
        chunk = (a->dims[ax] + k - 1) / k;
        for (i = 0; i < nout; i++) {
            int64_t left = a->dims[ax] - chunk * (int64_t)i;
            sizes[i] = left < 0 ? 0 : left < chunk ? left : chunk;
        }
    } else {
        if (a->dims[ax] % (int64_t)nout)
            return rpx__node_fail(c, n, RPX_EFORMAT, "axis %d (%lld) does not split in %zu equal parts",
                                  ax, (long long)a->dims[ax], nout);
        for (i = 0; i < nout; i++) sizes[i] = a->dims[ax] / (int64_t)nout;
    }
    memcpy(dims, a->dims, (size_t)a->rank * sizeof *dims);
    total = 0;
    for (i = 0; i < nout; i++) {
        slice_arg s;
        int k;
        dims[ax] = sizes[i];
        if ((rc = rpx__set(c, n, i, a->dtype, a->rank, dims))) return rc;
        for (k = 0; k < a->rank; k++) {
            s.start[k] = k == ax ? total : 0;
            s.step[k] = 1;
        }
        if ((rc = rpx__fold_map(c, n, i, a, map_slice, &s))) return rc;
        total += sizes[i];
    }
    return RPX__OK;
}

int rpx__infer_slice(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t *st, *en, *ax = NULL, *sp = NULL, dims[RPX__MAX_RANK];
    long k, ka = -1, ks = -1, j;
    slice_arg s;
    int rc, seen[RPX__MAX_RANK] = {0};
    NEED(a, 0);
    if (n->opset < 10 && rpx__attr(n, "starts")) {
        k = rpx__attr_ints(n, "starts", (const int64_t **)&st);
        if (rpx__attr_ints(n, "ends", (const int64_t **)&en) != k)
            return rpx__node_fail(c, n, RPX_EFORMAT, "starts and ends differ in length");
        ka = rpx__attr_ints(n, "axes", (const int64_t **)&ax);
    } else {
        rpx__val *vs, *ve, *va, *vp;
        NEED_CV(vs, 1);
        NEED_CV(ve, 2);
        k = rpx__cv_ints(c, vs, &st);
        if (rpx__cv_ints(c, ve, &en) != k)
            return rpx__node_fail(c, n, RPX_EFORMAT, "starts and ends differ in length");
        if (rpx__in(c, n, 3)) {
            NEED_CV(va, 3);
            ka = rpx__cv_ints(c, va, &ax);
        }
        if (rpx__in(c, n, 4)) {
            NEED_CV(vp, 4);
            ks = rpx__cv_ints(c, vp, &sp);
        }
    }
    if ((ka >= 0 && ka != k) || (ks >= 0 && ks != k))
        return rpx__node_fail(c, n, RPX_EFORMAT, "starts, ends, axes and steps differ in length");
    memcpy(dims, a->dims, (size_t)a->rank * sizeof *dims);
    for (j = 0; j < a->rank; j++) {
        s.start[j] = 0;
        s.step[j] = 1;
    }
    for (j = 0; j < k; j++) {
        int axis;
        int64_t d, b, e, step = ks >= 0 ? sp[j] : 1, len;
        if ((rc = rpx__norm_axis(c, n, ka >= 0 ? ax[j] : j, a->rank, &axis))) return rc;
        if (seen[axis]) return rpx__node_fail(c, n, RPX_EFORMAT, "axis %d is sliced twice", axis);
        seen[axis] = 1;
        if (step == 0) return rpx__node_fail(c, n, RPX_EFORMAT, "a step is 0");
        /* any step beyond the axis length takes one element: bound it (no overflow) */
        if (step > 2 * RPX__DIM_MAX) step = 2 * RPX__DIM_MAX;
        if (step < -2 * RPX__DIM_MAX) step = -2 * RPX__DIM_MAX;
        d = a->dims[axis];
        b = st[j];
        e = en[j];
        if (b < 0) b += d;
        if (e < 0) e += d;
        if (step > 0) {
            b = b < 0 ? 0 : b > d ? d : b;
            e = e < 0 ? 0 : e > d ? d : e;
            len = e > b ? (e - b - 1) / step + 1 : 0;
        } else {
            b = b < 0 ? 0 : b > d - 1 ? d - 1 : b;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            len = b > e ? (b - e - 1) / (-step) + 1 : 0;
        }
        dims[axis] = len;
        s.start[axis] = b;
        s.step[axis] = step;
    }
    if ((rc = rpx__set(c, n, 0, a->dtype, a->rank, dims))) return rc;
    return rpx__fold_map(c, n, 0, a, map_slice, &s);
}

typedef struct gather_arg {
    int axis, rq;
    const rpx__val *idx;
} gather_arg;

static size_t map_gather(const int64_t *coord, const rpx__val *in, const void *arg)
{
    const gather_arg *g = arg;
    int64_t src[RPX__MAX_RANK], which;
    size_t il = 0;
    int k;
    for (k = 0; k < g->axis; k++) src[k] = coord[k];
    for (k = 0; k < g->rq; k++) il = il * (size_t)g->idx->dims[k] + (size_t)coord[g->axis + k];
    which = rpx__iv_at(g->idx, il);
    if (which < 0) which += in->dims[g->axis];
    if (which < 0 || which >= in->dims[g->axis]) return (size_t)-1;
    src[g->axis] = which;
    for (k = g->axis + 1; k < in->rank; k++) src[k] = coord[k - 1 + g->rq];
    return rpx__lin_of(src, in);
}

int rpx__infer_gather(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *idx;
    int64_t dims[RPX__MAX_RANK];
    int ax, rc, k, r = 0;
    gather_arg g;
    NEED(a, 0);
    NEED(idx, 1);
    if ((rc = rpx__norm_axis(c, n, rpx__attr_i(n, "axis", 0), a->rank, &ax))) return rc;
    if (a->rank - 1 + idx->rank > RPX__MAX_RANK)
        return rpx__node_fail(c, n, RPX_EFORMAT, "output rank too large");
    for (k = 0; k < ax; k++) dims[r++] = a->dims[k];
    for (k = 0; k < idx->rank; k++) dims[r++] = idx->dims[k];
    for (k = ax + 1; k < a->rank; k++) dims[r++] = a->dims[k];
    if ((rc = rpx__set(c, n, 0, a->dtype, r, dims))) return rc;
    if (!idx->has_cv) return RPX__OK;
    g.axis = ax;
    g.rq = idx->rank;
    g.idx = idx;
    return rpx__fold_map(c, n, 0, a, map_gather, &g);
}

int rpx__infer_gather_elements(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *idx;
    int ax, rc;
    NEED(a, 0);
    NEED(idx, 1);
    if ((rc = rpx__norm_axis(c, n, rpx__attr_i(n, "axis", 0), a->rank, &ax))) return rc;
    if (idx->rank != a->rank)
        return rpx__node_fail(c, n, RPX_EFORMAT, "indices rank %d differs from data rank %d",
                              idx->rank, a->rank);
    return rpx__set_like(c, n, 0, idx, a->dtype);
}

int rpx__infer_gather_nd(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *idx;
    int64_t dims[RPX__MAX_RANK], last, b = rpx__attr_i(n, "batch_dims", 0);
    int k, r = 0;
    NEED(a, 0);
    NEED(idx, 1);
    if (idx->rank < 1) return rpx__node_fail(c, n, RPX_EFORMAT, "indices must have rank >= 1");
    last = idx->dims[idx->rank - 1];
    if (b < 0 || b >= idx->rank || b >= a->rank || last > a->rank - b)
        return rpx__node_fail(c, n, RPX_EFORMAT, "indices of shape %s do not fit data %s",
                              rpx__shape_str(c, idx->rank, idx->dims), rpx__shape_str(c, a->rank, a->dims));
    for (k = 0; k < idx->rank - 1; k++) dims[r++] = idx->dims[k];
    for (k = (int)(b + last); k < a->rank; k++) dims[r++] = a->dims[k];
    return rpx__set(c, n, 0, a->dtype, r, dims);
}

int rpx__infer_pad(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t *pads, *axes = NULL, dims[RPX__MAX_RANK], ax_all[RPX__MAX_RANK];
    long k, ka, j;
    int rc;
    NEED(a, 0);
    if ((k = rpx__attr_ints(n, "pads", (const int64_t **)&pads)) < 0) {
        rpx__val *p;
        NEED_CV(p, 1);
        k = rpx__cv_ints(c, p, &pads);
    }
    if (rpx__in(c, n, 3)) {
        rpx__val *va;
        NEED_CV(va, 3);
        ka = rpx__cv_ints(c, va, &axes);
    } else {
        ka = a->rank;
        for (j = 0; j < ka; j++) ax_all[j] = j;
        axes = ax_all;
    }
    if (k != 2 * ka)
        return rpx__node_fail(c, n, RPX_EFORMAT, "%ld pads for %ld axes (need 2 per axis)", k, ka);
    memcpy(dims, a->dims, (size_t)a->rank * sizeof *dims);
    for (j = 0; j < ka; j++) {
        int ax;
        if ((rc = rpx__norm_axis(c, n, axes[j], a->rank, &ax))) return rc;
        if (pads[j] > RPX__DIM_MAX || pads[j] < -RPX__DIM_MAX || pads[j + ka] > RPX__DIM_MAX ||
            pads[j + ka] < -RPX__DIM_MAX)
            return rpx__node_fail(c, n, RPX_EFORMAT, "absurd pads on axis %d", ax);
        dims[ax] += pads[j] + pads[j + ka];
        if (dims[ax] < 0)
            return rpx__node_fail(c, n, RPX_EFORMAT, "pads make axis %d negative", ax);
    }
    return rpx__set(c, n, 0, a->dtype, a->rank, dims);
}

typedef struct bcast_arg {
    int ro;
    const int64_t *od;
} bcast_arg;

static size_t map_bcast(const int64_t *coord, const rpx__val *in, const void *arg)
{
    const bcast_arg *b = arg;
    int64_t src[RPX__MAX_RANK];
    int k;
    for (k = 0; k < in->rank; k++) {
        int64_t x = coord[k + b->ro - in->rank];
        src[k] = in->dims[k] == 1 ? 0 : x;
    }
    return rpx__lin_of(src, in);
}

int rpx__infer_expand(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *s;
    int64_t *sh, dims[RPX__MAX_RANK];
    long k;
    int r, rc;
    bcast_arg b;
    NEED(a, 0);
    NEED_CV(s, 1);
    k = rpx__cv_ints(c, s, &sh);
    if (k > RPX__MAX_RANK) return rpx__node_fail(c, n, RPX_EFORMAT, "shape too long");
    for (r = 0; r < (int)k; r++)
        if (sh[r] < 0) return rpx__node_fail(c, n, RPX_EFORMAT, "target dimension %d is negative", r);
    if ((rc = rpx__broadcast(c, n, a->rank, a->dims, (int)k, sh, &r, dims))) return rc;
    if ((rc = rpx__set(c, n, 0, a->dtype, r, dims))) return rc;
    b.ro = r;
    b.od = dims;
    return rpx__fold_map(c, n, 0, a, map_bcast, &b);
}

static size_t map_tile(const int64_t *coord, const rpx__val *in, const void *arg)
{
    int64_t src[RPX__MAX_RANK];
    int k;
    (void)arg;
    for (k = 0; k < in->rank; k++) src[k] = coord[k] % in->dims[k];
    return rpx__lin_of(src, in);
}

int rpx__infer_tile(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *r;
    int64_t *rep, dims[RPX__MAX_RANK];
    long k;
    int j, rc;
    NEED(a, 0);
    NEED_CV(r, 1);
    k = rpx__cv_ints(c, r, &rep);
    if (k != a->rank)
        return rpx__node_fail(c, n, RPX_EFORMAT, "%ld repeats for rank %d", k, a->rank);
    for (j = 0; j < a->rank; j++) {
        if (rep[j] < 0) return rpx__node_fail(c, n, RPX_EFORMAT, "a repeat is negative");
        if (rep[j] > 0 && a->dims[j] > RPX__DIM_MAX / rep[j])
            return rpx__node_fail(c, n, RPX_EFORMAT, "absurd repeats");
        dims[j] = a->dims[j] * rep[j];
    }
    if ((rc = rpx__set(c, n, 0, a->dtype, a->rank, dims))) return rc;
    return rpx__fold_map(c, n, 0, a, map_tile, NULL);
}

int rpx__infer_range(rpx__ctx *c, rpx__node *n)
{
    rpx__val *s, *l, *d;
    double start, limit, delta, len;
    int64_t count;
    int rc;
    NEED_CV(s, 0);
    NEED_CV(l, 1);
    NEED_CV(d, 2);
    if (s->cv_n != 1 || l->cv_n != 1 || d->cv_n != 1)
        return rpx__node_fail(c, n, RPX_EFORMAT, "start, limit and delta must be scalars");
    start = rpx__fv_at(s, 0);
    limit = rpx__fv_at(l, 0);
    delta = rpx__fv_at(d, 0);
    if (delta == 0) return rpx__node_fail(c, n, RPX_EFORMAT, "delta is 0");
    len = ceil((limit - start) / delta);
    if (!(len > 0)) len = 0;
    if (len > RPX__DIM_MAX)
        return rpx__node_fail(c, n, RPX_EFORMAT, "absurd length %.3g", len);
    count = (int64_t)len;
    if ((rc = rpx__set(c, n, 0, s->dtype, 1, &count))) return rc;
    if (count <= FOLD_MAX) {
        double *rf = rpx__alloc(&c->arena, (size_t)(count + 1) * sizeof *rf);
        int64_t *ri = rpx__alloc(&c->arena, (size_t)(count + 1) * sizeof *ri);
        int64_t k;
        if (!rf || !ri) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (k = 0; k < count; k++) {
            rf[k] = start + (double)k * delta;
            ri[k] = (int64_t)((uint64_t)rpx__iv_at(s, 0) + (uint64_t)k * (uint64_t)rpx__iv_at(d, 0));
        }
        return rpx__dtype_is_float(s->dtype) ? rpx__set_cv_f(c, n, 0, rf, (size_t)count)
                                             : rpx__set_cv_i(c, n, 0, ri, (size_t)count);
    }
    return RPX__OK;
}

int rpx__infer_constant_of_shape(rpx__ctx *c, rpx__node *n)
{
    rpx__val *s, tmp;
    int64_t *sh;
    long k, j;
    int rc, dtype = RPX__T_FLOAT;
    double fill = 0;
    const Onnx__AttributeProto *a = rpx__attr(n, "value");
    NEED_CV(s, 0);
    k = rpx__cv_ints(c, s, &sh);
    if (k > RPX__MAX_RANK) return rpx__node_fail(c, n, RPX_EFORMAT, "shape too long");
    for (j = 0; j < k; j++)
        if (sh[j] < 0) return rpx__node_fail(c, n, RPX_EFORMAT, "a dimension is negative");
    if (a && a->t) {
        memset(&tmp, 0, sizeof tmp);
        if ((rc = rpx__tensor_dtype_dims(c, a->t, &tmp, "attribute 'value'"))) return rc;
        if ((rc = rpx__tensor_value(c, a->t, &tmp, "attribute 'value'"))) return rc;
        dtype = tmp.dtype;
        if (tmp.has_cv && tmp.cv_n >= 1) fill = rpx__fv_at(&tmp, 0);
    }
    if ((rc = rpx__set(c, n, 0, dtype, (int)k, sh))) return rc;
    if (rpx__out(c, n, 0) && rpx__out(c, n, 0)->elems <= FOLD_MAX) {
        size_t cnt = (size_t)rpx__out(c, n, 0)->elems, i;
        double *rf = rpx__alloc(&c->arena, (cnt + 1) * sizeof *rf);
        int64_t *ri = rpx__alloc(&c->arena, (cnt + 1) * sizeof *ri);
        if (!rf || !ri) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (i = 0; i < cnt; i++) {
            rf[i] = fill;
            ri[i] = rpx__to_i64(fill);
        }
        return rpx__dtype_is_float(dtype) ? rpx__set_cv_f(c, n, 0, rf, cnt)
                                          : rpx__set_cv_i(c, n, 0, ri, cnt);
    }
    return RPX__OK;
}

int rpx__infer_depth_to_space(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t b = rpx__attr_i(n, "blocksize", 0), dims[4];
    NEED(a, 0);
    if (a->rank != 4 || b <= 0 || b > (1 << 20) || a->dims[1] % (b * b))
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %s does not fit blocksize %lld",
                              rpx__shape_str(c, a->rank, a->dims), (long long)b);
    dims[0] = a->dims[0];
    dims[1] = a->dims[1] / (b * b);
    dims[2] = a->dims[2] * b;
    dims[3] = a->dims[3] * b;
    return rpx__set(c, n, 0, a->dtype, 4, dims);
}

int rpx__infer_space_to_depth(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t b = rpx__attr_i(n, "blocksize", 0), dims[4];
    NEED(a, 0);
    if (a->rank != 4 || b <= 0 || b > (1 << 20) || a->dims[2] % b || a->dims[3] % b)
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %s does not fit blocksize %lld",
                              rpx__shape_str(c, a->rank, a->dims), (long long)b);
    dims[0] = a->dims[0];
    dims[1] = a->dims[1] * b * b;
    dims[2] = a->dims[2] / b;
    dims[3] = a->dims[3] / b;
    return rpx__set(c, n, 0, a->dtype, 4, dims);
}

int rpx__infer_topk(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t k, dims[RPX__MAX_RANK];
    int ax, rc;
    NEED(a, 0);
    if ((rc = rpx__norm_axis(c, n, rpx__attr_i(n, "axis", -1), a->rank, &ax))) return rc;
    if (rpx__in(c, n, 1)) {
        rpx__val *kv;
        int64_t *kk;
        NEED_CV(kv, 1);
        if (rpx__cv_ints(c, kv, &kk) != 1) return rpx__node_fail(c, n, RPX_EFORMAT, "K must hold one value");
        k = kk[0];
    } else {
        k = rpx__attr_i(n, "k", -1);
    }
    if (k < 0 || k > a->dims[ax])
        return rpx__node_fail(c, n, RPX_EFORMAT, "K = %lld for an axis of %lld", (long long)k,
                              (long long)a->dims[ax]);
    memcpy(dims, a->dims, (size_t)a->rank * sizeof *dims);
    dims[ax] = k;
    if ((rc = rpx__set(c, n, 0, a->dtype, a->rank, dims))) return rc;
    return rpx__set(c, n, 1, RPX__T_INT64, a->rank, dims);
}

int rpx__infer_nonzero(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t dims[2];
    NEED(a, 0);
    dims[0] = a->rank;
    dims[1] = -1; /* data-dependent */
    return rpx__set(c, n, 0, RPX__T_INT64, 2, dims);
}

int rpx__infer_quantize(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *zp = rpx__in(c, n, 2);
    int dt = zp ? zp->dtype : (int)rpx__attr_i(n, "output_dtype", 0);
    NEED(a, 0);
    return rpx__set_like(c, n, 0, a, dt > 0 ? dt : RPX__T_UINT8);
}

int rpx__infer_dequantize(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *s = rpx__in(c, n, 1);
    NEED(a, 0);
    return rpx__set_like(c, n, 0, a, s && s->dtype ? s->dtype : RPX__T_FLOAT);
}
