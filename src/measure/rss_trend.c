/* rss_trend.c — owns the resident-set readings across the timed calls and the
 * leak verdict (src/measure/rss_trend.h). */
#include "measure/rss_trend.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/clock.h"

/* The resident set in bytes from /proc/self/statm (its second field, pages). */
static int64_t read_rss(int fd)
{
    char buf[128];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    char *p, *end;
    long long pages;
    if (n <= 0) return -1;
    buf[n] = '\0';
    p = strchr(buf, ' ');
    if (!p) return -1;
    pages = strtoll(p + 1, &end, 10);
    if (end == p + 1 || pages < 0) return -1;
    return (int64_t)pages * sysconf(_SC_PAGESIZE);
}

int rpx_rss_trend_open(rpx_rss_trend *t, long repeats)
{
    int64_t best = -1;
    int i;
    memset(t, 0, sizeof *t);
    t->repeats = repeats;
    t->every = 1;
    t->decimate = 1;
    t->fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (t->fd < 0) {
        t->unreadable = 1;
        return -1;
    }
    for (i = 0; i < 5; i++) {
        int64_t t0 = rpx_clock_now_ns(), t1;
        if (read_rss(t->fd) < 0) {
            close(t->fd);
            t->fd = -1;
            t->unreadable = 1;
            return -1;
        }
        t1 = rpx_clock_now_ns();
        if (best < 0 || t1 - t0 < best) best = t1 - t0;
    }
    t->read_cost_ns = best;
    return 0;
}

void rpx_rss_trend_close(rpx_rss_trend *t)
{
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
}

/* Readings every N calls: N makes them cost <= 1 % of the calls' time, but
 * never so large that the planned calls give fewer than the minimum readings. */
static long choose_every(const rpx_rss_trend *t)
{
    long cap = t->repeats / RPX_RSS_TREND_MIN_READINGS;
    long n = 1;
    if (t->intervals > 0 && t->interval_sum_ns > 0) {
        double mean = (double)t->interval_sum_ns / (double)t->intervals;
        double want = 100.0 * (double)t->read_cost_ns / mean;
        n = want > 1e9 ? 1000000000L : (long)want + 1;
    }
    if (cap < 1) cap = 1;
    return n > cap ? cap : n;
}

void rpx_rss_trend_after_call(rpx_rss_trend *t, int timed)
{
    int64_t now, rss;
    if (t->fd < 0) return;
    now = rpx_clock_now_ns();
    if (t->last_ns > 0) {
        t->interval_sum_ns += now - t->last_ns;
        t->intervals++;
    }
    t->last_ns = now;
    if (!timed) return;
    t->timed++;
    if (++t->since < t->every) return;
    t->since = 0;
    t->every = choose_every(t);
    if (t->kept_skip++ % t->decimate != 0) return;
    rss = read_rss(t->fd);
    if (rss < 0) return;
    if (t->n == RPX_RSS_TREND_POINTS) {
        int i;
        for (i = 0; i < RPX_RSS_TREND_POINTS / 2; i++) {
            t->rss[i] = t->rss[2 * i];
            t->call[i] = t->call[2 * i];
        }
        t->n = RPX_RSS_TREND_POINTS / 2;
        t->decimate *= 2;
        t->kept_skip = 1;
    }
    t->rss[t->n] = rss;
    t->call[t->n] = t->timed;
    t->n++;
    /* the interval just measured includes this reading: start afresh */
    t->last_ns = rpx_clock_now_ns();
}

static double median_mb(const int64_t *v, int n)
{
    int64_t c[RPX_RSS_TREND_POINTS];
    memcpy(c, v, (size_t)n * sizeof *c);
    return rpx_median_i64(c, (size_t)n) / 1048576.0;
}

void rpx_rss_trend_summarise(const rpx_rss_trend *t, rpx_rss_summary *s)
{
    int q = t->n / 4;
    double mid_first, mid_last, calls, half;
    memset(s, 0, sizeof *s);
    s->readings = t->n;
    s->every_calls = t->n >= 2 ? (t->call[t->n - 1] - t->call[0]) / (t->n - 1) : 0;
    if (t->unreadable) {
        snprintf(s->reason, sizeof s->reason, "/proc/self/statm could not be read");
        return;
    }
    if (q < 2) {
        snprintf(s->reason, sizeof s->reason, "%d readings; at least 8 are needed", t->n);
        return;
    }
    s->available = 1;
    s->first_call = t->call[0];
    s->last_call = t->call[t->n - 1];
    s->first_quarter_mb = median_mb(t->rss, q);
    s->last_quarter_mb = median_mb(t->rss + t->n - q, q);
    s->growth_mb = s->last_quarter_mb - s->first_quarter_mb;
    /* the quarters' medians stand at their middles */
    mid_first = (double)t->call[q / 2];
    mid_last = (double)t->call[t->n - q + q / 2];
    calls = mid_last - mid_first;
    if (calls < 1) calls = 1;
    s->growth_kib_per_call = s->growth_mb * 1024.0 / calls;
    s->detectable_kib_per_call = (double)RPX_RSS_LEAK_MIN_BYTES / 1024.0 / calls;
    /* growth that goes on in the second half: the median of the second quarter
     * must stand clearly below the last one */
    half = median_mb(t->rss + q, q);
    s->leak_suspected = s->growth_mb * 1048576.0 >= (double)RPX_RSS_LEAK_MIN_BYTES &&
                        s->last_quarter_mb - half >= 0.25 * s->growth_mb;
}
