/* verdict.c — owns compare's verdict of a ratio's interval (docs/statistics.md,
 * "The verdict"): one rule for two reports (two_reports.c), two reports of
 * different sessions (between_sessions.c) and a history's changes and newest
 * session (history_check.c). */
#include <math.h>

#include "rpxprof/comparison.h"

const char *rpx_compare_verdict(double lo, double hi, double t)
{
    if (!isfinite(lo) || !isfinite(hi)) return "inconclusive"; /* a null interval (docs/statistics.md) */
    if (hi < 1 - t) return "faster";
    if (lo > 1 + t) return "slower";
    if (lo >= 1 - t && hi <= 1 + t) return "same";
    return "inconclusive";
}
