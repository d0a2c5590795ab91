/* shapes_internal.h — what the shape-inference rooms (shapes.c,
 * shapes_move.c, shapes_nn.c) share: the input checks and constant helpers. */
#ifndef RPX_SHAPES_INTERNAL_H
#define RPX_SHAPES_INTERNAL_H

#include "cost/cost_internal.h"

#define FOLD_MAX 4096 /* largest output folded at analysis time */

const char *rpx__why_unknown(rpx__ctx *c, const rpx__val *v);
/* why the values of v (needed for a shape) are not known */
const char *rpx__why_no_values(rpx__ctx *c, const rpx__val *v);
const char *rpx__shape_str(rpx__ctx *c, int rank, const int64_t *d);
double rpx__fv_at(const rpx__val *v, size_t i);
/* a double as int64, saturated (NaN → 0): never an undefined conversion */
int64_t rpx__to_i64(double x);
int64_t rpx__iv_at(const rpx__val *v, size_t i);
int rpx__set_cv(rpx__ctx *c, rpx__node *n, size_t i, const int64_t *iv, const double *fv,
                size_t count);
int rpx__pass_cv(rpx__ctx *c, rpx__node *n, const rpx__val *a);
/* axes from an attribute (older opsets) or from input idx (newer): count; 0 with
 * *absent = 1 when neither is given; -2 when the input is computed at run time */
long rpx__axes_of(rpx__ctx *c, rpx__node *n, size_t idx, int64_t **axes, int *absent);
size_t rpx__lin_of(const int64_t *coord, const rpx__val *in);
/* fold output `out` by mapping each of its elements to an element of `a`
 * (returning (size_t)-1 leaves it unfolded) */
typedef size_t (*index_map)(const int64_t *coord, const rpx__val *in, const void *arg);
int rpx__fold_map(rpx__ctx *c, rpx__node *n, size_t out, const rpx__val *a, index_map fn,
                  const void *arg);

/* input i, required and with a known shape */
#define NEED(v, i)                                                                         \
    do {                                                                                   \
        (v) = rpx__in(c, n, (i));                                                          \
        if (!(v))                                                                          \
            return rpx__node_fail(c, n, RPX_EFORMAT, "input %d is missing; it is required", \
                                  (int)(i));                                               \
        if (!rpx__known(v)) return rpx__unknown(n, rpx__why_unknown(c, (v)));                   \
    } while (0)

/* an input's constant value, needed to know the output shape */
#define NEED_CV(v, i)                                                                      \
    do {                                                                                   \
        NEED(v, i);                                                                        \
        if (!(v)->has_cv)                                                                  \
            return rpx__unknown(n, rpx__why_no_values(c, (v)));                            \
    } while (0)

#endif
