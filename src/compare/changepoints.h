/* changepoints.h — E-divisive means over a series' sessions (src/compare/changepoints.c;
 * docs/statistics.md, "Change points"). Internal to the library. */
#ifndef RPX_COMPARE_CHANGEPOINTS_H
#define RPX_COMPARE_CHANGEPOINTS_H

#include <stddef.h>

#include "compare/session_noise.h"

/* The change points among sessions [0, n) of S by E-divisive means (Matteson
 * & James 2014) with binary segmentation: the distance of two sessions is the
 * mean |y - y'| over their processes' log p50s (so a session's own spread
 * counts), a split needs min_segment sessions on each side, and it is kept
 * when its permutation p-value (perms permutations of the segment's sessions)
 * is below alpha. cps (room for n) gets the indices (the first session after
 * each change) in order, pvals their p-values; *ncp their number. 0 or
 * RPX_ENOMEM. */
int rpx__changepoints(const rpx__sessions *S, unsigned min_segment, double alpha, size_t perms,
                      rpx__rng *rng, size_t *cps, double *pvals, size_t *ncp);

#endif
