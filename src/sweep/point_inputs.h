/* point_inputs.h — the inputs file a sweep makes for one point
 * (src/sweep/point_inputs.c). Internal to the library. */
#ifndef RPX_SWEEP_POINT_INPUTS_H
#define RPX_SWEEP_POINT_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "rpxprof/error.h"
#include "rpxprof/npz.h"

typedef struct rpx_sweep_inputs_point {
    const rpx_npz *base;          /* --inputs (its other arrays copied), or NULL */
    const char *const *make;      /* --make NAME=SHAPE[:DTYPE[=FILL]], symbols in SHAPE */
    size_t n_make;
    const char *const *sym_names; /* the varied dimensions at this point: height = 224 */
    const long *sym_values;
    size_t n_syms;
    const char *shape_name;       /* --vary NAME=SHAPE,...: the array and its shape here */
    const char *shape_value;
    long batch;                   /* --vary batch: the leading dimension (0: not varied) */
    const char *batch_dim;        /* the symbol that names the batch in a --make shape */
    uint64_t seed;
} rpx_sweep_inputs_point;

/* The point's NPZ at `path` (written atomically). 0, or a negative code with
 * the spec, the array and the fix in err. */
int rpx_sweep_make_inputs(const rpx_sweep_inputs_point *p, const char *path, rpx_error *err);

#endif
