/* pacing.c — owns the report's `pacing` section: a shared object or Python
 * callable called at a fixed rate (--rate HZ: a camera at 30 Hz, a control
 * loop at 100 Hz) instead of back to back. The loop (measure/run.c) starts
 * timed call i at pace_start + i / rate at the earliest, on absolute
 * deadlines, and records how late each call started; each call is timed as
 * without pacing (`latency`). Here: the late starts, the start lags, the
 * latency from each call's deadline (lag + call: the queueing a server
 * would see when the rate is above what one call can serve) and the rate
 * achieved. */
#include <math.h>
#include <stdlib.h>

#include "rpxprof/latency.h"
#include "rpxprof/report.h"
#include "runner/runner_internal.h"

json_t *rpx__pacing_json(double rate_hz, const workers *w, json_t *back_to_back,
                         const rpx_latency *paced)
{
    json_t *o = json_object();
    rpx_latency *lag = NULL, *sched = NULL;
    double period_ns = 1e9 / rate_hz, calls_minus = 0, span_ns = 0;
    long late = 0, calls = 0;
    int i;
    if (!o) return NULL;
    if (rpx_latency_create(0, &lag) != 0 || rpx_latency_create(0, &sched) != 0) {
        rpx_latency_destroy(lag);
        json_decref(o);
        return NULL;
    }
    for (i = 0; i < w->n; i++) {
        const run_shared *sh = w->proc[i];
        size_t m, n = sh->measured;
        late += sh->late_starts;
        calls += (long)n;
        for (m = 0; m < n; m++) {
            rpx_latency_add_ns(lag, (double)sh->start_lag[m]);
            rpx_latency_add_ns(sched, (double)(sh->start_lag[m] + sh->samples[m]));
        }
        if (n >= 2) {
            /* call k started at pace_start + k * period + lag[k] */
            calls_minus += (double)(n - 1);
            span_ns += (double)(n - 1) * period_ns + (double)(sh->start_lag[n - 1] - sh->start_lag[0]);
        }
    }
    json_object_set_new(o, "rate_hz", json_real(rate_hz));
    json_object_set_new(o, "period_ms", json_real(period_ns / 1e6));
    json_object_set_new(o, "schedule",
                        json_string("absolute deadlines (clock_nanosleep TIMER_ABSTIME): timed "
                                    "call i of a process starts at the earliest i periods after "
                                    "its first; a late call does not move the ones after it"));
    json_object_set_new(o, "calls", json_integer(calls));
    json_object_set_new(o, "late_starts", json_integer(late));
    json_object_set_new(o, "achieved_rate_hz", span_ns > 0 ? json_real(calls_minus / (span_ns / 1e9))
                                                           : json_null());
    json_object_set_new(o, "start_lag_ms", rpx_latency_json(lag));
    json_object_set_new(o, "latency_from_schedule_ms", rpx_latency_json(sched));
    if (back_to_back) {
        /* the same model called back to back, before the paced run */
        json_t *b = json_object();
        rpx_latency_stats st;
        double p50 = json_number_value(json_object_get(back_to_back, "p50_ms"));
        json_object_set(b, "latency", back_to_back);
        json_object_set_new(b, "paced_p50_over_back_to_back_p50",
                            paced && rpx_latency_stats_get(paced, &st) == 0 && st.available &&
                                    p50 > 0
                                ? json_real(st.p50_ms / p50)
                                : json_null());
        json_object_set_new(o, "back_to_back", b);
    } else {
        json_object_set_new(o, "back_to_back", json_null());
    }
    rpx_latency_destroy(lag);
    rpx_latency_destroy(sched);
    return o;
}
