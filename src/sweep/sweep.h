/* sweep.h — a sweep's points and what is read from them (src/sweep/):
 * the per-point summary, the scaling fit, the "wrong way" neighbours, the
 * best throughput and the knee, put together as DIR/sweep.json
 * (schemas/sweep.schema.json, docs/sweep.md). The measuring is the runner's
 * (rpx_runner_run_many); the command line is src/cli/sweep.c. Internal to
 * the library. */
#ifndef RPX_SWEEP_SWEEP_H
#define RPX_SWEEP_SWEEP_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/error.h"

#define RPX_SWEEP_MAX_VARY 2

/* One point of a sweep, as the front end made it. */
typedef struct rpx_sweep_point {
    json_t *value;                /* a number or a text; an object {name: v} for a grid (owned) */
    int index[RPX_SWEEP_MAX_VARY]; /* its position along each varied parameter */
    char label[128];              /* a name safe in a file name: DIR/LABEL.json */
    double size;                  /* what the scaling is fitted against (the product of the
                                     varied dimensions, or the batch); NAN: none */
    double items;                 /* items a call: the batch (1 when the batch is not varied) */
    const json_t *report;         /* the point's run report (borrowed), or NULL when none */
    char invalid_reason[1280];     /* "" when the point is valid */
} rpx_sweep_point;

/* The fit of log(y) against log(x) with one intercept per group (a round of
 * processes: a drift shared by the round drops out): the slope, its t
 * interval at `confidence`, the points and the degrees of freedom. 0, or -1
 * when it cannot be fitted (fewer than two distinct x, no degrees of freedom:
 * lo and hi NAN then too). Group -1: no group (one common intercept). */
int rpx_sweep_loglog_slope(const double *x, const double *y, const int *group, size_t n,
                           double confidence, double *slope, double *lo, double *hi, int *df);

/* The paired ratio p50(b) / p50(a) of two reports measured interleaved (process
 * k of each in round k), with its 95 % interval (docs/statistics.md's paired
 * design). 0, or a negative code when the reports cannot be compared. */
int rpx_sweep_paired_ratio(const json_t *a, const json_t *b, double *ratio, double *lo,
                           double *hi, rpx_error *err);

/* sweep.json: {"schema": "rpxprof-sweep/1", model, session, vary, points,
 * scaling, wrong_way, best_throughput, knee, capacity: null}. `vary` is
 * [{name, values}] (a reference taken); `size_of` says what `size` is
 * (NULL: no scaling fit). *out a new object; 0 or RPX_ENOMEM. */
int rpx_sweep_json(const char *model, const json_t *vary, const char *size_of,
                   const rpx_sweep_point *pts, size_t n, json_t **out, rpx_error *err);

/* `rpxprof aggregate` over sweep folders (src/sweep/aggregate.c): each
 * DIRS[i]/sweep.json, OUT/sweeps.csv (a row a point) and OUT/sweeps.svg (a line
 * a model, latency against size), written atomically. 0, or a negative code
 * naming the file. */
int rpx_sweep_aggregate(const char *const *dirs, size_t n, const char *out_dir, rpx_error *err);

#endif
