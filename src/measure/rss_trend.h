/* src/measure/rss_trend.h — the resident set across the timed calls: is the model
 * leaking?
 *
 * The process reads its own resident set (/proc/self/statm, one pread on a
 * file kept open) after every N-th call, outside the timed span. N is chosen
 * from the call time so that the readings cost at most about 1 % of the run,
 * and capped so that even a short run gets at least 16 readings: the verdict
 * depends on the number of calls, not on how long the run took. At most
 * RPX_RSS_TREND_POINTS readings are kept (when full, every other one is
 * dropped and readings are taken half as often).
 *
 * The verdict compares the medians of the first and the last quarter of the
 * readings: growth of at least RPX_RSS_LEAK_MIN_BYTES that continues in the
 * second half (a one-off step, a cache filled once, is no leak) is reported
 * as a suspected leak. The smallest leak it detects is therefore about
 * RPX_RSS_LEAK_MIN_BYTES / (0.75 x calls) per call. */
#ifndef RPXPROF_RSS_TREND_H
#define RPXPROF_RSS_TREND_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPX_RSS_TREND_POINTS 4096
#define RPX_RSS_TREND_MIN_READINGS 16
#define RPX_RSS_LEAK_MIN_BYTES ((int64_t)4 << 20)

typedef struct rpx_rss_trend {
    int64_t rss[RPX_RSS_TREND_POINTS]; /* bytes */
    long call[RPX_RSS_TREND_POINTS];   /* the timed call after which it was read (1-based) */
    int n;
    int fd;                       /* /proc/self/statm, -1 when closed */
    int unreadable;               /* open found /proc/self/statm unreadable */
    long repeats;                 /* timed calls planned */
    long every;                   /* read after every `every`-th timed call */
    long decimate;                /* readings kept: one in `decimate` (doubles when full) */
    long since;                   /* timed calls since the last reading */
    long timed;                   /* timed calls seen */
    long kept_skip;               /* readings skipped since the last kept one */
    int64_t read_cost_ns;         /* one reading's cost, measured at open */
    int64_t last_ns, interval_sum_ns;
    long intervals;
} rpx_rss_trend;

typedef struct rpx_rss_summary {
    int readings;                 /* readings kept */
    long every_calls;             /* calls between two kept readings, at the end */
    long first_call, last_call;
    double first_quarter_mb, last_quarter_mb; /* medians, MiB */
    double growth_mb;             /* last - first quarter median */
    double growth_kib_per_call;   /* growth over the calls between the quarters' middles */
    double detectable_kib_per_call; /* the smallest steady leak this run could flag */
    int leak_suspected;
    int available;                /* 0: fewer than 8 readings (see reason) */
    char reason[128];
} rpx_rss_summary;

/* Zero `t` and open /proc/self/statm; 0, or -1 when it cannot be read (the
 * trend is then unavailable; after_call does nothing). */
int rpx_rss_trend_open(rpx_rss_trend *t, long repeats);
/* After each call (timed: 1), outside the timed span. No allocation. */
void rpx_rss_trend_after_call(rpx_rss_trend *t, int timed);
void rpx_rss_trend_close(rpx_rss_trend *t);
void rpx_rss_trend_summarise(const rpx_rss_trend *t, rpx_rss_summary *s);

#ifdef __cplusplus
}
#endif
#endif
