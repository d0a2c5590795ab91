/* between_sessions.h — compare's rule for two reports of different sessions
 * (src/compare/between_sessions.c; docs/statistics.md, "Two reports of
 * different sessions"). Internal to the library. */
#ifndef RPX_COMPARE_BETWEEN_SESSIONS_H
#define RPX_COMPARE_BETWEEN_SESSIONS_H

#include <jansson.h>

#include "rpxprof/comparison.h"

/* Rewrites the result `o` of two reports measured in different sessions
 * (opts->same_session 0): the within-session intervals and verdicts move to
 * "within_session", each "<stat>_ratio_ci" is widened by the between-session
 * spread (opts->session_spread, else the default allowance), the verdicts
 * follow from the widened intervals, "covers" becomes "between-session", and
 * "between_session" says with what. A warning goes to `warnings` when no
 * spread was given. 0 or RPX_ENOMEM. */
int rpx__cmp_between_sessions(json_t *o, const rpx_compare_opts *opts, json_t *warnings);

#endif
