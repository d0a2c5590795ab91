/* shapes_signal.c — shape rules of the remaining standard operators whose
 * output shape follows from their inputs' shapes, attributes and small
 * constant inputs (issue 18): the signal operators (DFT, STFT, the windows,
 * MelWeightMatrix), MaxUnpool, MaxRoiPool, the two losses, the random
 * generators, Multinomial, TfIdfVectorizer; and the reason given for the
 * standard operators whose output shape depends on the data (Compress,
 * Unique, NonMaxSuppression, StringNormalizer) or that are not tensors
 * (sequences, optionals). Their cost is not modelled (listed as such). */
#include <string.h>

#include "cost/shapes_internal.h"

/* one integer from a constant input (a scalar or a one-element tensor) */
static int scalar_of(rpx__ctx *c, rpx__node *n, size_t idx, const char *what, int64_t *v)
{
    rpx__val *a;
    int64_t *iv;
    *v = 0; /* set on every path: a refusal's code is never 0, but the compiler cannot see it */
    NEED_CV(a, idx);
    if (rpx__cv_ints(c, a, &iv) != 1)
        return rpx__node_fail(c, n, RPX_EFORMAT, "%s (input %d) must hold one number", what, (int)idx);
    *v = iv[0];
    return RPX__OK;
}

/* HannWindow, HammingWindow, BlackmanWindow: size (a constant) -> [size] */
int rpx__infer_window(rpx__ctx *c, rpx__node *n)
{
    int64_t size;
    int rc = scalar_of(c, n, 0, "size", &size);
    if (rc) return rc;
    if (size < 0) return rpx__node_fail(c, n, RPX_EFORMAT, "size %lld is negative", (long long)size);
    return rpx__set(c, n, 0, (int)rpx__attr_i(n, "output_datatype", RPX__T_FLOAT), 1, &size);
}

/* MelWeightMatrix: num_mel_bins, dft_length (constants) -> [dft_length/2 + 1, num_mel_bins] */
int rpx__infer_mel(rpx__ctx *c, rpx__node *n)
{
    int64_t d[2], bins, len;
    int rc;
    if ((rc = scalar_of(c, n, 0, "num_mel_bins", &bins))) return rc;
    if ((rc = scalar_of(c, n, 1, "dft_length", &len))) return rc;
    if (bins < 0 || len < 0) return rpx__node_fail(c, n, RPX_EFORMAT, "num_mel_bins and dft_length must not be negative");
    d[0] = len / 2 + 1;
    d[1] = bins;
    return rpx__set(c, n, 0, (int)rpx__attr_i(n, "output_datatype", RPX__T_FLOAT), 2, d);
}

/* DFT (opset 17): input [..., L, 1|2]; the axis becomes dft_length (input 1,
 * when given), then L/2 + 1 when onesided; the last dimension becomes 2 */
int rpx__infer_dft(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    int64_t d[RPX__MAX_RANK];
    int ax, rc;
    NEED(x, 0);
    if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %s must be [..., 1] (real) or [..., 2] (complex)",
                              rpx__shape_str(c, x->rank, x->dims));
    if ((rc = rpx__norm_axis(c, n, rpx__attr_i(n, "axis", 1), x->rank - 1, &ax))) return rc;
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    if (rpx__in(c, n, 1) && (rc = scalar_of(c, n, 1, "dft_length", &d[ax]))) return rc;
    if (rpx__attr_i(n, "onesided", 0)) d[ax] = d[ax] / 2 + 1;
    d[x->rank - 1] = 2;
    return rpx__set(c, n, 0, x->dtype, x->rank, d);
}

/* STFT: signal [B, L, 1|2], frame_step, window [W], frame_length ->
 * [B, (L - frame_length) / frame_step + 1, frame_length/2 + 1 (onesided) or frame_length, 2].
 * onesided is 1 by default, as the operator's schema says (the onnx package's
 * shape inference, 1.12, takes 0 when the attribute is absent). */
int rpx__infer_stft(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *w = rpx__in(c, n, 2);
    int64_t step, len, d[4];
    int rc;
    NEED(x, 0);
    if (x->rank != 3) return rpx__node_fail(c, n, RPX_EFORMAT, "signal %s must be [batch, length, 1|2]",
                                            rpx__shape_str(c, x->rank, x->dims));
    if ((rc = scalar_of(c, n, 1, "frame_step", &step))) return rc;
    if (rpx__in(c, n, 3)) {
        if ((rc = scalar_of(c, n, 3, "frame_length", &len))) return rc;
    } else if (w) {
        NEED(w, 2);
        if (w->rank != 1) return rpx__node_fail(c, n, RPX_EFORMAT, "window must be one-dimensional");
        len = w->dims[0];
    } else {
        return rpx__node_fail(c, n, RPX_EFORMAT, "STFT needs a window (input 2) or a frame_length (input 3)");
    }
    if (step < 1 || len < 1 || len > x->dims[1])
        return rpx__node_fail(c, n, RPX_EFORMAT, "frame_step %lld and frame_length %lld do not fit a signal of length %lld",
                              (long long)step, (long long)len, (long long)x->dims[1]);
    d[0] = x->dims[0];
    d[1] = (x->dims[1] - len) / step + 1;
    d[2] = rpx__attr_i(n, "onesided", 1) ? len / 2 + 1 : len;
    d[3] = 2;
    return rpx__set(c, n, 0, x->dtype, 4, d);
}

/* MaxUnpool: X [N, C, D1..Dk] -> output_shape (input 2) when given, else
 * (D - 1) * stride - pad_begin - pad_end + kernel per spatial axis */
int rpx__infer_max_unpool(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *s;
    const int64_t *k, *st, *p;
    int64_t d[RPX__MAX_RANK], *sv;
    long nk, ns, np, cnt;
    int i, sp;
    NEED(x, 0);
    if (rpx__in(c, n, 2)) {
        NEED_CV(s, 2);
        cnt = rpx__cv_ints(c, s, &sv);
        if (cnt != x->rank) return rpx__node_fail(c, n, RPX_EFORMAT, "output_shape must have %d values", x->rank);
        return rpx__set(c, n, 0, x->dtype, x->rank, sv);
    }
    sp = x->rank - 2;
    nk = rpx__attr_ints(n, "kernel_shape", &k);
    ns = rpx__attr_ints(n, "strides", &st);
    np = rpx__attr_ints(n, "pads", &p);
    if (ns < 0) ns = 0; /* absent */
    if (np < 0) np = 0;
    if (sp < 1 || nk != sp || (ns && ns != sp) || (np && np != 2 * sp))
        return rpx__node_fail(c, n, RPX_EFORMAT, "kernel_shape, strides and pads do not fit input %s",
                              rpx__shape_str(c, x->rank, x->dims));
    d[0] = x->dims[0];
    d[1] = x->dims[1];
    for (i = 0; i < sp; i++)
        d[2 + i] = (x->dims[2 + i] - 1) * (ns ? st[i] : 1) - (np ? p[i] + p[sp + i] : 0) + k[i];
    return rpx__set(c, n, 0, x->dtype, x->rank, d);
}

/* MaxRoiPool: X [N, C, H, W], rois [R, 5] -> [R, C, pooled_shape] */
int rpx__infer_max_roi_pool(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *r;
    const int64_t *ps;
    int64_t d[4];
    NEED(x, 0);
    NEED(r, 1);
    if (x->rank != 4 || r->rank != 2 || rpx__attr_ints(n, "pooled_shape", &ps) != 2)
        return rpx__node_fail(c, n, RPX_EFORMAT, "expected X [N, C, H, W], rois [R, 5] and two pooled_shape values");
    d[0] = r->dims[0];
    d[1] = x->dims[1];
    d[2] = ps[0];
    d[3] = ps[1];
    return rpx__set(c, n, 0, x->dtype, 4, d);
}

/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss: reduction "none" gives
 * the target's shape, else a scalar; SoftmaxCrossEntropyLoss's optional
 * second output (log_prob) has the scores' shape */
int rpx__infer_loss(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *t;
    int rc;
    NEED(x, 0);
    NEED(t, 1);
    if (x->rank < 2 || t->rank != x->rank - 1)
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %s and target %s: expected [N, C, d1..dk] and [N, d1..dk]",
                              rpx__shape_str(c, x->rank, x->dims), rpx__shape_str(c, t->rank, t->dims));
    if (!strcmp(rpx__attr_s(c, n, "reduction", "mean"), "none"))
        rc = rpx__set(c, n, 0, x->dtype, t->rank, t->dims);
    else
        rc = rpx__set(c, n, 0, x->dtype, 0, NULL);
    if (rc || n->n_out < 2) return rc;
    return rpx__set_like(c, n, 1, x, x->dtype);
}

/* RandomNormal, RandomUniform: the shape attribute, dtype (float by default) */
int rpx__infer_random(rpx__ctx *c, rpx__node *n)
{
    const int64_t *s;
    long r = rpx__attr_ints(n, "shape", &s);
    if (r < 0 || !rpx__attr(n, "shape")) return rpx__node_fail(c, n, RPX_EFORMAT, "the shape attribute is required");
    return rpx__set(c, n, 0, (int)rpx__attr_i(n, "dtype", RPX__T_FLOAT), (int)r, s);
}

/* Multinomial: [batch, classes] -> [batch, sample_size] (int32 by default) */
int rpx__infer_multinomial(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    int64_t d[2];
    NEED(x, 0);
    if (x->rank != 2) return rpx__node_fail(c, n, RPX_EFORMAT, "input must be [batch, classes]");
    d[0] = x->dims[0];
    d[1] = rpx__attr_i(n, "sample_size", 1);
    return rpx__set(c, n, 0, (int)rpx__attr_i(n, "dtype", RPX__T_INT32), 2, d);
}

/* TfIdfVectorizer: [C] or [N, C] -> [max(ngram_indexes) + 1] or [N, ...], float */
int rpx__infer_tfidf(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    const int64_t *ix;
    int64_t d[2], m = -1;
    long k, i;
    NEED(x, 0);
    k = rpx__attr_ints(n, "ngram_indexes", &ix);
    for (i = 0; i < k; i++) m = ix[i] > m ? ix[i] : m;
    if (x->rank < 1 || x->rank > 2 || m < 0)
        return rpx__node_fail(c, n, RPX_EFORMAT, "input must be [C] or [N, C], with ngram_indexes given");
    d[0] = x->dims[0];
    d[x->rank - 1] = m + 1;
    return rpx__set(c, n, 0, RPX__T_FLOAT, x->rank, d);
}

/* AffineGrid (opset 20): theta [N, 2, 3] or [N, 3, 4], size [N, C, H, W] or
 * [N, C, D, H, W] (a constant) -> [N, H, W, 2] or [N, D, H, W, 3] */
int rpx__infer_affine_grid(rpx__ctx *c, rpx__node *n)
{
    rpx__val *t, *s;
    int64_t *sv, d[5];
    long k;
    int i;
    NEED(t, 0);
    NEED_CV(s, 1);
    k = rpx__cv_ints(c, s, &sv);
    if ((k != 4 && k != 5) || t->rank != 3 || t->dims[1] != k - 2 || t->dims[2] != k - 1)
        return rpx__node_fail(c, n, RPX_EFORMAT, "theta %s does not fit a size of %ld values: expected "
                              "[N, 2, 3] with [N, C, H, W] or [N, 3, 4] with [N, C, D, H, W]",
                              rpx__shape_str(c, t->rank, t->dims), k);
    d[0] = t->dims[0];
    for (i = 2; i < k; i++) d[i - 1] = sv[i];
    d[k - 1] = k - 2;
    return rpx__set(c, n, 0, t->dtype, (int)k, d);
}

/* Col2Im (opset 18): input [N, C * prod(block_shape), L], image_shape and
 * block_shape (constants) -> [N, C, image_shape...] */
int rpx__infer_col2im(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *im, *bl;
    int64_t *iv, *bv, d[RPX__MAX_RANK], blk = 1;
    long ni, nb, i;
    NEED(x, 0);
    NEED_CV(im, 1);
    NEED_CV(bl, 2);
    ni = rpx__cv_ints(c, im, &iv);
    nb = rpx__cv_ints(c, bl, &bv);
    for (i = 0; i < nb; i++) blk *= bv[i] > 0 ? bv[i] : 0;
    if (x->rank != 3 || ni != nb || ni < 1 || ni + 2 > RPX__MAX_RANK || blk < 1 || x->dims[1] % blk)
        return rpx__node_fail(c, n, RPX_EFORMAT, "input %s does not fit image_shape and block_shape of %ld values",
                              rpx__shape_str(c, x->rank, x->dims), ni);
    d[0] = x->dims[0];
    d[1] = x->dims[1] / blk;
    for (i = 0; i < ni; i++) d[2 + i] = iv[i];
    return rpx__set(c, n, 0, x->dtype, (int)ni + 2, d);
}

/* CenterCropPad (opset 18): the input's shape with the axes (all, or the
 * attribute's) set to the values of shape (a constant) */
int rpx__infer_center_crop_pad(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x, *s;
    int64_t *sv, d[RPX__MAX_RANK];
    const int64_t *ax;
    long k, na, i;
    int a, rc;
    NEED(x, 0);
    NEED_CV(s, 1);
    k = rpx__cv_ints(c, s, &sv);
    na = rpx__attr_ints(n, "axes", &ax);
    if (na < 0) na = 0;
    if (k != (na ? na : x->rank))
        return rpx__node_fail(c, n, RPX_EFORMAT, "shape has %ld values for %ld axes", k, na ? na : (long)x->rank);
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    for (i = 0; i < k; i++) {
        if ((rc = rpx__norm_axis(c, n, na ? ax[i] : i, x->rank, &a))) return rc;
        d[a] = sv[i];
    }
    return rpx__set(c, n, 0, x->dtype, x->rank, d);
}

/* RegexFullMatch (opset 20): a bool of the input's shape */
int rpx__infer_regex_full_match(rpx__ctx *c, rpx__node *n)
{
    rpx__val *x;
    NEED(x, 0);
    return rpx__set_like(c, n, 0, x, RPX__T_BOOL);
}

/* SequenceLength (int64) and OptionalHasElement (bool): a scalar, whatever their input */
int rpx__infer_scalar_of_container(rpx__ctx *c, rpx__node *n)
{
    return rpx__set(c, n, 0, !strcmp(n->op, "SequenceLength") ? RPX__T_INT64 : RPX__T_BOOL, 0, NULL);
}

/* the standard operators whose output shape is never known before run time */
int rpx__infer_data_dependent(rpx__ctx *c, rpx__node *n)
{
    const char *op = n->op;
    if (!strcmp(op, "Compress"))
        return rpx__unknown(n, "its output length is the number of true values in its condition (known only at run time)");
    if (!strcmp(op, "Unique"))
        return rpx__unknown(n, "its output length is the number of distinct values (known only at run time)");
    if (!strcmp(op, "NonMaxSuppression"))
        return rpx__unknown(n, "its output length is the number of boxes kept (known only at run time)");
    if (!strcmp(op, "StringSplit"))
        return rpx__unknown(n, "its last dimension is the most pieces a string splits into (known only at run time)");
    if (!strcmp(op, "ImageDecoder"))
        return rpx__unknown(n, "its output shape is the encoded image's size (known only at run time)");
    if (!strcmp(op, "StringNormalizer"))
        return rpx__unknown(n, "its output length depends on the stop words found (known only at run time)");
    (void)c;
    return rpx__unknown(n, "its values are sequences or optionals, not tensors; their shapes are not modelled");
}
