/* shapes.c — shape inference for data movement, views, elementwise
 * arithmetic and reductions, and the constant folding of the shape arithmetic
 * exporters emit (Shape, Gather, Slice, Concat, Unsqueeze, Squeeze, Cast,
 * Range, ConstantOfShape, Expand, Where, Equal, integer arithmetic,
 * ReduceProd), evaluated on small tensors so that Reshape targets are known.
 * Each rule follows the operator's definition in the ONNX operator set for
 * opsets 7..21 (attributes that became inputs are read from either). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/shapes_internal.h"


/* ---- common helpers ---------------------------------------------------- */
rpx__val *rpx__in(rpx__ctx *c, const rpx__node *n, size_t i)
{
    return i < n->n_in && n->in[i] >= 0 ? &c->vals[n->in[i]] : NULL;
}

rpx__val *rpx__out(rpx__ctx *c, const rpx__node *n, size_t i)
{
    return i < n->n_out && n->out[i] >= 0 ? &c->vals[n->out[i]] : NULL;
}

int rpx__known(const rpx__val *v)
{
    int i;
    if (!v || !v->is_tensor || v->rank < 0) return 0;
    for (i = 0; i < v->rank; i++)
        if (v->dims[i] < 0) return 0;
    return 1;
}

int rpx__unknown(rpx__node *n, const char *reason)
{
    n->reason = reason;
    return RPX__UNKNOWN;
}

const char *rpx__why_unknown(rpx__ctx *c, const rpx__val *v)
{
    if (!v->is_tensor) return rpx__fmt(c, "input '%s' is not a tensor", v->name);
    if (v->producer >= 0)
        return rpx__fmt(c, "the shape of input '%s' is unknown (made by node '%s' (%s))", v->name,
                        c->nodes[v->producer].name, c->nodes[v->producer].op);
    return rpx__fmt(c, "the shape of input '%s' is unknown", v->name);
}

const char *rpx__why_no_values(rpx__ctx *c, const rpx__val *v)
{
    if (v->data_external && v->ext_missing)
        return rpx__fmt(c, "the output shape depends on the values of '%s', which are stored in "
                           "external data ('%s') that could not be read next to the model; put "
                           "the file there",
                        v->name, v->ext_location ? v->ext_location : "?");
    if (v->data_external)
        return rpx__fmt(c, "the output shape depends on the values of '%s', which are stored in "
                           "external data (a tensor too large to be a shape constant)",
                        v->name);
    if (v->kind == RPX__V_INIT)
        return rpx__fmt(c, "the output shape depends on the values of initializer '%s', which "
                           "are not in the file",
                        v->name);
    return rpx__fmt(c, "the output shape depends on the values of '%s', which are computed at "
                       "run time",
                    v->name);
}

int rpx__set(rpx__ctx *c, rpx__node *n, size_t i, int dtype, int rank, const int64_t *dims)
{
    rpx__val *v = rpx__out(c, n, i);
    double elems = 1;
    int k, known = 1;
    if (!v) return 0;
    if (rank > RPX__MAX_RANK || rank < 0)
        return rpx__node_fail(c, n, RPX_EFORMAT, "output '%s' would have %d dimensions", v->name,
                              rank);
    for (k = 0; k < rank; k++) {
        if (dims[k] == -1) {
            known = 0;
            continue;
        }
        if (dims[k] < 0)
            return rpx__node_fail(c, n, RPX_EFORMAT, "output '%s' would have a negative dimension %lld",
                                  v->name, (long long)dims[k]);
        if (dims[k] > RPX__DIM_MAX)
            return rpx__node_fail(c, n, RPX_EFORMAT,
                                  "output '%s' would have an absurd dimension %lld; check the "
                                  "input sizes given with --input/--dim",
                                  v->name, (long long)dims[k]);
        elems *= (double)dims[k];
    }
    if (known && elems > RPX__ELEMS_MAX)
        return rpx__node_fail(c, n, RPX_EFORMAT,
                              "output '%s' would have an absurd size (%.3g elements); check the "
                              "input sizes given with --input/--dim",
                              v->name, elems);
    v->dtype = dtype;
    v->rank = rank;
    v->dims = rpx__alloc(&c->arena, (size_t)(rank + 1) * sizeof *v->dims);
    if (!v->dims) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    if (rank) memcpy(v->dims, dims, (size_t)rank * sizeof *dims);
    v->elems = known ? elems : NAN;
    v->is_tensor = 1;
    v->from_vi = 0;
    return 0;
}

int rpx__set_like(rpx__ctx *c, rpx__node *n, size_t i, const rpx__val *like, int dtype)
{
    return rpx__set(c, n, i, dtype, like->rank, like->dims);
}

int rpx__set_cv(rpx__ctx *c, rpx__node *n, size_t i, const int64_t *iv, const double *fv,
                  size_t count)
{
    rpx__val *v = rpx__out(c, n, i);
    if (!v || count > RPX__CVAL_MAX) return 0;
    if (fv) {
        v->cv_f = rpx__alloc(&c->arena, (count + 1) * sizeof *v->cv_f);
        if (!v->cv_f) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        if (count) memcpy(v->cv_f, fv, count * sizeof *fv);
    } else {
        v->cv_i = rpx__alloc(&c->arena, (count + 1) * sizeof *v->cv_i);
        if (!v->cv_i) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        if (count && iv) memcpy(v->cv_i, iv, count * sizeof *iv);
        else if (count) memset(v->cv_i, 0, count * sizeof *v->cv_i); /* no values: zeros */
    }
    v->has_cv = 1;
    v->cv_float = fv != NULL;
    v->cv_n = count;
    return 0;
}

int rpx__set_cv_i(rpx__ctx *c, rpx__node *n, size_t i, const int64_t *vals, size_t count)
{
    return rpx__set_cv(c, n, i, vals, NULL, count);
}

int rpx__set_cv_f(rpx__ctx *c, rpx__node *n, size_t i, const double *vals, size_t count)
{
    return rpx__set_cv(c, n, i, NULL, vals, count);
}

const char *rpx__shape_str(rpx__ctx *c, int rank, const int64_t *d)
{
    char buf[256];
    size_t len = 0;
    int k;
    buf[0] = '\0';
    for (k = 0; k < rank && len < sizeof buf - 24; k++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%lld", k ? "x" : "",
                                (long long)d[k]);
    return rank == 0 ? "scalar" : rpx__fmt(c, "%s", buf);
}

int rpx__broadcast(rpx__ctx *c, rpx__node *n, int ra, const int64_t *a, int rb,
                   const int64_t *b, int *rank, int64_t *out)
{
    int r = ra > rb ? ra : rb, k;
    for (k = 0; k < r; k++) {
        int64_t x = k - (r - ra) >= 0 ? a[k - (r - ra)] : 1;
        int64_t y = k - (r - rb) >= 0 ? b[k - (r - rb)] : 1;
        if (x == y || y == 1) {
            out[k] = x;
        } else if (x == 1) {
            out[k] = y;
        } else {
            return rpx__node_fail(c, n, RPX_EFORMAT,
                                  "shapes %s and %s do not broadcast (dimension %d: %lld vs "
                                  "%lld)",
                                  rpx__shape_str(c, ra, a), rpx__shape_str(c, rb, b), k, (long long)x,
                                  (long long)y);
        }
    }
    *rank = r;
    return 0;
}

int rpx__norm_axis(rpx__ctx *c, rpx__node *n, int64_t axis, int rank, int *out)
{
    *out = 0; /* set on failure too: inlined into callers, gcc cannot see the error path returns */
    if (axis < -(int64_t)rank || axis >= rank)
        return rpx__node_fail(c, n, RPX_EFORMAT, "axis %lld is out of range for rank %d",
                              (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 0;
}

long rpx__cv_ints(rpx__ctx *c, const rpx__val *v, int64_t **out)
{
    size_t i;
    if (!v || !v->has_cv) return -1;
    if (!v->cv_float) {
        *out = v->cv_i;
        return (long)v->cv_n;
    }
    *out = rpx__alloc(&c->arena, (v->cv_n + 1) * sizeof **out);
    if (!*out) return -1;
    for (i = 0; i < v->cv_n; i++) {
        double x = v->cv_f[i];
        (*out)[i] = !(x == x) ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
    }
    return (long)v->cv_n;
}

/* axes from an attribute (older opsets) or from input `idx` (newer): count,
 * 0 with *absent = 1 when neither is given, -2 when the input is not known */
long rpx__axes_of(rpx__ctx *c, rpx__node *n, size_t idx, int64_t **axes, int *absent)
{
    const int64_t *a;
    long k = rpx__attr_ints(n, "axes", &a);
    *absent = 0;
    if (k >= 0) {
        *axes = (int64_t *)a;
        return k;
    }
    if (rpx__in(c, n, idx)) {
        k = rpx__cv_ints(c, rpx__in(c, n, idx), axes);
        return k < 0 ? -2 : k;
    }
    *absent = 1;
    return 0;
}

/* ---- folding helpers --------------------------------------------------- */
/* linear index into a broadcast input of output element `lin` */
static size_t bidx(size_t lin, int ro, const int64_t *od, int ri, const int64_t *id)
{
    size_t in = 0, stride = 1;
    int k;
    for (k = ro - 1; k >= 0; k--) {
        size_t coord = (size_t)(lin % (size_t)od[k]);
        int j = k - (ro - ri);
        lin /= (size_t)od[k];
        if (j >= 0) {
            if (id[j] != 1) in += coord * stride;
            stride *= (size_t)id[j];
        }
    }
    return in;
}

double rpx__fv_at(const rpx__val *v, size_t i)
{
    return v->cv_float ? v->cv_f[i] : (double)v->cv_i[i];
}

int64_t rpx__to_i64(double x)
{
    return !(x == x) ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
}

int64_t rpx__iv_at(const rpx__val *v, size_t i)
{
    double x;
    if (!v->cv_float) return v->cv_i[i];
    x = v->cv_f[i];
    return x == x && fabs(x) < 9e18 ? (int64_t)x : 0;
}

static int64_t idiv(int64_t a, int64_t b)
{
    if (b == 0) return 0;
    if (b == -1 && a == INT64_MIN) return INT64_MIN;
    return a / b;
}

static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* fold a binary or variadic elementwise op over constant inputs */
static int fold_elementwise(rpx__ctx *c, rpx__node *n, int rank, const int64_t *dims,
                            double elems, int out_dtype)
{
    size_t i, j, count = (size_t)elems;
    const char *op = n->op;
    int isf = rpx__dtype_is_float(out_dtype), cmp = 0;
    int64_t *ri = NULL;
    double *rf = NULL;
    for (j = 0; j < n->n_in; j++)
        if (!rpx__in(c, n, j) || !rpx__in(c, n, j)->has_cv) return 0;
    if (elems > FOLD_MAX || n->n_in == 0) return 0;
    if (!strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") ||
        !strcmp(op, "LessOrEqual") || !strcmp(op, "GreaterOrEqual"))
        cmp = 1;
    /* comparisons of floats compare as floats */
    if (cmp)
        for (j = 0; j < n->n_in; j++) isf |= rpx__in(c, n, j)->cv_float;
    ri = rpx__alloc(&c->arena, (count + 1) * sizeof *ri);
    rf = rpx__alloc(&c->arena, (count + 1) * sizeof *rf);
    if (!ri || !rf) return rpx__fail(c, RPX_ENOMEM, "out of memory");
    for (i = 0; i < count; i++) {
        const rpx__val *a = rpx__in(c, n, 0), *b = rpx__in(c, n, n->n_in > 1 ? 1 : 0);
        size_t ia = bidx(i, rank, dims, a->rank, a->dims);
        size_t ib = bidx(i, rank, dims, b->rank, b->dims);
        double x = rpx__fv_at(a, ia), y = rpx__fv_at(b, ib), r = 0;
        int64_t xi = rpx__iv_at(a, ia), yi = rpx__iv_at(b, ib), q = 0;
        if (!strcmp(op, "Add")) { r = x + y; q = wrap_add(xi, yi); }
        else if (!strcmp(op, "Sub")) { r = x - y; q = wrap_sub(xi, yi); }
        else if (!strcmp(op, "Mul")) { r = x * y; q = wrap_mul(xi, yi); }
        else if (!strcmp(op, "Div")) { r = x / y; q = idiv(xi, yi); }
        else if (!strcmp(op, "Mod")) {
            int f = (int)rpx__attr_i(n, "fmod", 0);
            r = fmod(x, y);
            q = yi && yi != -1 ? xi % yi : 0;
            if (!f && yi && q && ((q < 0) != (yi < 0))) q += yi;
            if (!f && y != 0 && r != 0 && ((r < 0) != (y < 0))) r += y;
        }
        else if (!strcmp(op, "Pow")) { r = pow(x, y); q = rpx__to_i64(pow((double)xi, (double)yi)); }
        else if (!strcmp(op, "Equal")) { q = isf ? x == y : xi == yi; }
        else if (!strcmp(op, "Less")) { q = isf ? x < y : xi < yi; }
        else if (!strcmp(op, "Greater")) { q = isf ? x > y : xi > yi; }
        else if (!strcmp(op, "LessOrEqual")) { q = isf ? x <= y : xi <= yi; }
        else if (!strcmp(op, "GreaterOrEqual")) { q = isf ? x >= y : xi >= yi; }
        else if (!strcmp(op, "And")) { q = xi && yi; }
        else if (!strcmp(op, "Or")) { q = xi || yi; }
        else if (!strcmp(op, "Xor")) { q = !xi != !yi; }
        else if (!strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Sum") ||
                 !strcmp(op, "Mean")) {
            int mx = !strcmp(op, "Max"), mn = !strcmp(op, "Min");
            r = x;
            q = xi;
            for (j = 1; j < n->n_in; j++) {
                const rpx__val *v = rpx__in(c, n, j);
                size_t iv = bidx(i, rank, dims, v->rank, v->dims);
                double z = rpx__fv_at(v, iv);
                int64_t zi = rpx__iv_at(v, iv);
                if (mx) { r = z > r ? z : r; q = zi > q ? zi : q; }
                else if (mn) { r = z < r ? z : r; q = zi < q ? zi : q; }
                else { r += z; q = wrap_add(q, zi); }
            }
            if (!strcmp(op, "Mean")) { r /= (double)n->n_in; q = idiv(q, (int64_t)n->n_in); }
        }
        else return 0;
        if (cmp) { ri[i] = q; continue; }
        rf[i] = r;
        ri[i] = q;
    }
    if (cmp || !rpx__dtype_is_float(out_dtype)) return rpx__set_cv_i(c, n, 0, ri, count);
    return rpx__set_cv_f(c, n, 0, rf, count);
}

/* ---- elementwise ------------------------------------------------------- */
int rpx__infer_elementwise(rpx__ctx *c, rpx__node *n)
{
    int64_t dims[RPX__MAX_RANK];
    int rank, rc;
    size_t i;
    rpx__val *a;
    double elems = 1;
    NEED(a, 0);
    rank = a->rank;
    memcpy(dims, a->dims, (size_t)rank * sizeof *dims);
    for (i = 1; i < n->n_in; i++) {
        rpx__val *b;
        int64_t tmp[RPX__MAX_RANK];
        NEED(b, i);
        if ((rc = rpx__broadcast(c, n, rank, dims, b->rank, b->dims, &rank, tmp))) return rc;
        memcpy(dims, tmp, (size_t)rank * sizeof *dims);
    }
    if ((rc = rpx__set(c, n, 0, a->dtype, rank, dims))) return rc;
    for (i = 0; i < (size_t)rank; i++) elems *= (double)dims[i];
    return fold_elementwise(c, n, rank, dims, elems, a->dtype);
}

int rpx__infer_compare(rpx__ctx *c, rpx__node *n)
{
    int rc = rpx__infer_elementwise(c, n);
    rpx__val *o = rpx__out(c, n, 0);
    if (rc == RPX__OK && o) o->dtype = RPX__T_BOOL;
    return rc;
}

/* unary math: same shape; folds the ones shape arithmetic uses */
int rpx__infer_unary(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int rc;
    size_t i;
    NEED(a, 0);
    if ((rc = rpx__set_like(c, n, 0, a, a->dtype))) return rc;
    if (a->has_cv && a->cv_n <= FOLD_MAX) {
        const char *op = n->op;
        double *rf = rpx__alloc(&c->arena, (a->cv_n + 1) * sizeof *rf);
        int64_t *ri = rpx__alloc(&c->arena, (a->cv_n + 1) * sizeof *ri);
        if (!rf || !ri) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (i = 0; i < a->cv_n; i++) {
            double x = rpx__fv_at(a, i);
            int64_t xi = rpx__iv_at(a, i);
            if (!strcmp(op, "Neg")) { rf[i] = -x; ri[i] = wrap_sub(0, xi); }
            else if (!strcmp(op, "Abs")) { rf[i] = fabs(x); ri[i] = xi < 0 ? wrap_sub(0, xi) : xi; }
            else if (!strcmp(op, "Floor")) { rf[i] = floor(x); ri[i] = xi; }
            else if (!strcmp(op, "Ceil")) { rf[i] = ceil(x); ri[i] = xi; }
            else if (!strcmp(op, "Round")) { rf[i] = nearbyint(x); ri[i] = xi; }
            else if (!strcmp(op, "Sqrt")) { rf[i] = sqrt(x); ri[i] = rpx__to_i64(sqrt((double)xi)); }
            else if (!strcmp(op, "Reciprocal")) { rf[i] = 1 / x; ri[i] = xi ? 1 / xi : 0; }
            else if (!strcmp(op, "Sign")) { rf[i] = (x > 0) - (x < 0); ri[i] = (xi > 0) - (xi < 0); }
            else if (!strcmp(op, "Not")) { rf[i] = !x; ri[i] = !xi; }
            else return RPX__OK;
        }
        return rpx__dtype_is_float(a->dtype) ? rpx__set_cv_f(c, n, 0, rf, a->cv_n)
                                             : rpx__set_cv_i(c, n, 0, ri, a->cv_n);
    }
    return RPX__OK;
}

int rpx__infer_same(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    size_t i;
    int rc;
    NEED(a, 0);
    for (i = 0; i < n->n_out; i++)
        if ((rc = rpx__set_like(c, n, i, a, a->dtype))) return rc;
    return RPX__OK;
}

int rpx__infer_identity(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a, *o;
    int rc;
    NEED(a, 0);
    if ((rc = rpx__set_like(c, n, 0, a, a->dtype))) return rc;
    o = rpx__out(c, n, 0);
    if (o && a->has_cv)
        return a->cv_float ? rpx__set_cv_f(c, n, 0, a->cv_f, a->cv_n)
                           : rpx__set_cv_i(c, n, 0, a->cv_i, a->cv_n);
    return RPX__OK;
}

int rpx__infer_dropout(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int rc = rpx__infer_identity(c, n);
    if (rc) return rc;
    a = rpx__in(c, n, 0);
    return rpx__set_like(c, n, 1, a, RPX__T_BOOL);
}

int rpx__infer_where(rpx__ctx *c, rpx__node *n)
{
    rpx__val *cond, *x, *y;
    int64_t d1[RPX__MAX_RANK], d2[RPX__MAX_RANK];
    int r1, r2, rc;
    size_t i, count;
    double elems = 1;
    NEED(cond, 0);
    NEED(x, 1);
    NEED(y, 2);
    if ((rc = rpx__broadcast(c, n, cond->rank, cond->dims, x->rank, x->dims, &r1, d1))) return rc;
    if ((rc = rpx__broadcast(c, n, r1, d1, y->rank, y->dims, &r2, d2))) return rc;
    if ((rc = rpx__set(c, n, 0, x->dtype, r2, d2))) return rc;
    for (i = 0; i < (size_t)r2; i++) elems *= (double)d2[i];
    if (!cond->has_cv || !x->has_cv || !y->has_cv || elems > FOLD_MAX) return RPX__OK;
    count = (size_t)elems;
    {
        double *rf = rpx__alloc(&c->arena, (count + 1) * sizeof *rf);
        int64_t *ri = rpx__alloc(&c->arena, (count + 1) * sizeof *ri);
        if (!rf || !ri) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (i = 0; i < count; i++) {
            int pick = rpx__iv_at(cond, bidx(i, r2, d2, cond->rank, cond->dims)) != 0;
            const rpx__val *s = pick ? x : y;
            size_t k = bidx(i, r2, d2, s->rank, s->dims);
            rf[i] = rpx__fv_at(s, k);
            ri[i] = rpx__iv_at(s, k);
        }
        return rpx__dtype_is_float(x->dtype) ? rpx__set_cv_f(c, n, 0, rf, count)
                                             : rpx__set_cv_i(c, n, 0, ri, count);
    }
}

int rpx__infer_cast(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int to, rc;
    size_t i;
    NEED(a, 0);
    if (!strcmp(n->op, "CastLike")) {
        rpx__val *t = rpx__in(c, n, 1);
        if (!t) return rpx__node_fail(c, n, RPX_EFORMAT, "input 1 (target_type) is missing");
        to = t->dtype;
    } else {
        to = (int)rpx__attr_i(n, "to", 0);
        if (to <= 0 || to >= RPX__T_COUNT)
            return rpx__node_fail(c, n, RPX_EFORMAT, "attribute 'to' (%d) is not a data type", to);
    }
    if ((rc = rpx__set_like(c, n, 0, a, to))) return rc;
    if (!a->has_cv || a->cv_n > RPX__CVAL_MAX) return RPX__OK;
    if (rpx__dtype_is_float(to)) {
        double *rf = rpx__alloc(&c->arena, (a->cv_n + 1) * sizeof *rf);
        if (!rf) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (i = 0; i < a->cv_n; i++) rf[i] = rpx__fv_at(a, i);
        return rpx__set_cv_f(c, n, 0, rf, a->cv_n);
    } else {
        int64_t *ri = rpx__alloc(&c->arena, (a->cv_n + 1) * sizeof *ri);
        if (!ri) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (i = 0; i < a->cv_n; i++) ri[i] = to == RPX__T_BOOL ? rpx__fv_at(a, i) != 0 : rpx__iv_at(a, i);
        return rpx__set_cv_i(c, n, 0, ri, a->cv_n);
    }
}

/* ---- reductions -------------------------------------------------------- */
static int reduced_axes(rpx__ctx *c, rpx__node *n, const rpx__val *a, int *red, int *all)
{
    int64_t *axes = NULL;
    int absent, rc, k;
    long cnt = rpx__axes_of(c, n, 1, &axes, &absent);
    if (cnt == -2)
        return rpx__unknown(n, rpx__fmt(c, "the reduced axes come from '%s', computed at run time",
                                        rpx__in(c, n, 1)->name));
    memset(red, 0, (size_t)RPX__MAX_RANK * sizeof *red);
    *all = 0;
    if (cnt == 0) {
        if (rpx__attr_i(n, "noop_with_empty_axes", 0)) return RPX__OK; /* identity */
        for (k = 0; k < a->rank; k++) red[k] = 1;
        *all = 1;
        return RPX__OK;
    }
    for (k = 0; k < cnt; k++) {
        int ax;
        if ((rc = rpx__norm_axis(c, n, axes[k], a->rank, &ax))) return rc;
        red[ax] = 1;
    }
    return RPX__OK;
}

int rpx__infer_reduce(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int red[RPX__MAX_RANK], all, rc, k, r = 0;
    int64_t dims[RPX__MAX_RANK];
    int keep = (int)rpx__attr_i(n, "keepdims", 1);
    NEED(a, 0);
    if ((rc = reduced_axes(c, n, a, red, &all))) return rc;
    for (k = 0; k < a->rank; k++) {
        if (!red[k]) dims[r++] = a->dims[k];
        else if (keep) dims[r++] = 1;
    }
    if ((rc = rpx__set(c, n, 0, a->dtype, r, dims))) return rc;
    /* fold: ReduceProd of a shape is how exporters count elements */
    if (a->has_cv && a->cv_n <= FOLD_MAX &&
        (!strcmp(n->op, "ReduceProd") || !strcmp(n->op, "ReduceSum") ||
         !strcmp(n->op, "ReduceMax") || !strcmp(n->op, "ReduceMin"))) {
        rpx__val *o = rpx__out(c, n, 0);
        size_t cnt = o ? (size_t)o->elems : 0, i;
        double *acc = rpx__alloc(&c->arena, (cnt + 1) * sizeof *acc);
        int64_t *acci = rpx__alloc(&c->arena, (cnt + 1) * sizeof *acci);
        char *seen = rpx__alloc(&c->arena, cnt + 1);
        int prod = !strcmp(n->op, "ReduceProd"), sum = !strcmp(n->op, "ReduceSum");
        int mx = !strcmp(n->op, "ReduceMax");
        if (!o) return RPX__OK;
        if (!acc || !acci || !seen) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (i = 0; i < a->cv_n; i++) {
            size_t lin = i, oi = 0, stride = 1;
            double x = rpx__fv_at(a, i);
            int64_t xi = rpx__iv_at(a, i);
            for (k = a->rank - 1; k >= 0; k--) {
                size_t coord = lin % (size_t)a->dims[k];
                lin /= (size_t)a->dims[k];
                if (!red[k]) {
                    oi += coord * stride;
                    stride *= (size_t)a->dims[k];
                }
            }
            if (!seen[oi]) {
                seen[oi] = 1;
                acc[oi] = x;
                acci[oi] = xi;
            } else if (prod) {
                acc[oi] *= x;
                acci[oi] = wrap_mul(acci[oi], xi);
            } else if (sum) {
                acc[oi] += x;
                acci[oi] = wrap_add(acci[oi], xi);
            } else if (mx) {
                acc[oi] = x > acc[oi] ? x : acc[oi];
                acci[oi] = xi > acci[oi] ? xi : acci[oi];
            } else {
                acc[oi] = x < acc[oi] ? x : acc[oi];
                acci[oi] = xi < acci[oi] ? xi : acci[oi];
            }
        }
        for (i = 0; i < cnt; i++)
            if (!seen[i]) { /* reduction over an empty axis: the identity */
                acc[i] = prod ? 1 : 0;
                acci[i] = prod ? 1 : 0;
            }
        return a->cv_float ? rpx__set_cv_f(c, n, 0, acc, cnt) : rpx__set_cv_i(c, n, 0, acci, cnt);
    }
    return RPX__OK;
}

int rpx__infer_argreduce(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int ax, rc, k, r = 0;
    int64_t dims[RPX__MAX_RANK];
    int keep = (int)rpx__attr_i(n, "keepdims", 1);
    NEED(a, 0);
    if ((rc = rpx__norm_axis(c, n, rpx__attr_i(n, "axis", 0), a->rank, &ax))) return rc;
    for (k = 0; k < a->rank; k++) {
        if (k != ax) dims[r++] = a->dims[k];
        else if (keep) dims[r++] = 1;
    }
    return rpx__set(c, n, 0, RPX__T_INT64, r, dims);
}

/* ---- constants and shapes ------------------------------------------------ */
int rpx__infer_constant(rpx__ctx *c, rpx__node *n)
{
    rpx__val *o = rpx__out(c, n, 0);
    const Onnx__AttributeProto *a;
    int rc;
    if (!o) return RPX__OK;
    o->is_weight = 1;
    if ((a = rpx__attr(n, "value")) && a->t) {
        const char *what = rpx__fmt(c, "the value of Constant node '%s'", n->name);
        o->tensor = a->t;
        if ((rc = rpx__tensor_dtype_dims(c, a->t, o, what))) return rc;
        return rpx__tensor_value(c, a->t, o, what);
    }
    if ((a = rpx__attr(n, "sparse_value")) && a->sparse_tensor && a->sparse_tensor->values) {
        const Onnx__SparseTensorProto *s = a->sparse_tensor;
        size_t i;
        int64_t dims[RPX__MAX_RANK];
        if (s->n_dims > RPX__MAX_RANK)
            return rpx__node_fail(c, n, RPX_EFORMAT, "sparse_value has too many dimensions");
        for (i = 0; i < s->n_dims; i++) dims[i] = s->dims[i] < 0 ? RPX__DIM_MAX + 1 : s->dims[i];
        return rpx__set(c, n, 0, s->values->has_data_type ? s->values->data_type : 0,
                        (int)s->n_dims, dims);
    }
    if ((a = rpx__attr(n, "value_float"))) {
        double f = a->f;
        if ((rc = rpx__set(c, n, 0, RPX__T_FLOAT, 0, NULL))) return rc;
        return rpx__set_cv_f(c, n, 0, &f, 1);
    }
    if ((a = rpx__attr(n, "value_int"))) {
        if ((rc = rpx__set(c, n, 0, RPX__T_INT64, 0, NULL))) return rc;
        return rpx__set_cv_i(c, n, 0, &a->i, 1);
    }
    if ((a = rpx__attr(n, "value_floats"))) {
        int64_t d = (int64_t)a->n_floats;
        double *f = rpx__alloc(&c->arena, (a->n_floats + 1) * sizeof *f);
        size_t i;
        if (!f) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (i = 0; i < a->n_floats; i++) f[i] = a->floats[i];
        if ((rc = rpx__set(c, n, 0, RPX__T_FLOAT, 1, &d))) return rc;
        return rpx__set_cv_f(c, n, 0, f, a->n_floats);
    }
    if ((a = rpx__attr(n, "value_ints"))) {
        int64_t d = (int64_t)a->n_ints;
        if ((rc = rpx__set(c, n, 0, RPX__T_INT64, 1, &d))) return rc;
        return rpx__set_cv_i(c, n, 0, a->ints, a->n_ints);
    }
    if ((a = rpx__attr(n, "value_string"))) return rpx__set(c, n, 0, RPX__T_STRING, 0, NULL);
    if ((a = rpx__attr(n, "value_strings"))) {
        int64_t d = (int64_t)a->n_strings;
        return rpx__set(c, n, 0, RPX__T_STRING, 1, &d);
    }
    return rpx__node_fail(c, n, RPX_EFORMAT, "a Constant needs a value attribute");
}

int rpx__infer_shape(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a = rpx__in(c, n, 0);
    int64_t start, end, len, k, vals[RPX__MAX_RANK];
    int rc, all = 1;
    if (!a) return rpx__node_fail(c, n, RPX_EFORMAT, "input 0 is missing");
    if (!a->is_tensor || a->rank < 0) return rpx__unknown(n, rpx__why_unknown(c, a));
    start = rpx__attr_i(n, "start", 0);
    end = rpx__attr_i(n, "end", a->rank);
    if (start < 0) start += a->rank;
    if (end < 0) end += a->rank;
    start = start < 0 ? 0 : start > a->rank ? a->rank : start;
    end = end < 0 ? 0 : end > a->rank ? a->rank : end;
    len = end > start ? end - start : 0;
    if ((rc = rpx__set(c, n, 0, RPX__T_INT64, 1, &len))) return rc;
    for (k = 0; k < len; k++) {
        vals[k] = a->dims[start + k];
        if (vals[k] < 0) all = 0;
    }
    return all ? rpx__set_cv_i(c, n, 0, vals, (size_t)len) : RPX__OK;
}

int rpx__infer_size(rpx__ctx *c, rpx__node *n)
{
    rpx__val *a;
    int64_t e;
    int rc;
    NEED(a, 0);
    if ((rc = rpx__set(c, n, 0, RPX__T_INT64, 0, NULL))) return rc;
    e = (int64_t)a->elems;
    return rpx__set_cv_i(c, n, 0, &e, 1);
}

int rpx__pass_cv(rpx__ctx *c, rpx__node *n, const rpx__val *a)
{
    if (!a->has_cv) return RPX__OK;
    return a->cv_float ? rpx__set_cv_f(c, n, 0, a->cv_f, a->cv_n)
                       : rpx__set_cv_i(c, n, 0, a->cv_i, a->cv_n);
}


/* copy of a small constant through an index map: out element → input element */

int rpx__fold_map(rpx__ctx *c, rpx__node *n, size_t out, const rpx__val *a, index_map fn,
                    const void *arg)
{
    rpx__val *o = rpx__out(c, n, out);
    size_t cnt, i;
    int64_t coord[RPX__MAX_RANK];
    if (!o || !a->has_cv || !(o->elems <= FOLD_MAX)) return RPX__OK;
    cnt = (size_t)o->elems;
    {
        double *rf = rpx__alloc(&c->arena, (cnt + 1) * sizeof *rf);
        int64_t *ri = rpx__alloc(&c->arena, (cnt + 1) * sizeof *ri);
        if (!rf || !ri) return rpx__fail(c, RPX_ENOMEM, "out of memory");
        for (i = 0; i < cnt; i++) {
            size_t lin = i, src;
            int k;
            for (k = o->rank - 1; k >= 0; k--) {
                coord[k] = (int64_t)(lin % (size_t)o->dims[k]);
                lin /= (size_t)o->dims[k];
            }
            src = fn(coord, a, arg);
            if (src >= a->cv_n) return RPX__OK; /* out of range: leave unfolded */
            rf[i] = rpx__fv_at(a, src);
            ri[i] = rpx__iv_at(a, src);
        }
        return a->cv_float ? rpx__set_cv(c, n, out, NULL, rf, cnt) : rpx__set_cv(c, n, out, ri, NULL, cnt);
    }
}

size_t rpx__lin_of(const int64_t *coord, const rpx__val *in)
{
    size_t lin = 0;
    int k;
    for (k = 0; k < in->rank; k++) lin = lin * (size_t)in->dims[k] + (size_t)coord[k];
    return lin;
}
