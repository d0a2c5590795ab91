/* http_schedule.c — owns the open-loop load's schedule and counts: `rate *
 * duration` requests on a schedule fixed in advance (constant gaps of 1/rate,
 * or exponential ones of that mean from a seeded generator). A request's
 * latency runs from its intended send time to the last byte of its answer, so
 * a server stall delays every request scheduled during it (no coordinated
 * omission, as in wrk2); the service latency from the actual send is kept
 * beside it. --duration bounds the run: when it has passed since the
 * schedule's start, the requests in flight get --drain seconds, then count as
 * timed out (cut_at_end), and the requests not yet sent as dropped. Both
 * engines (http_load_curl.c, http_load_sock.c) report here; neither calls the
 * other. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/http_schedule.h"
#include "rpxprof/histogram.h"
#include "rpxprof/latency.h"
#include "rpxprof/report.h"
#include "rpxprof/send_delay.h"

#define LATE_NS 1000000LL         /* a send more than 1 ms after its time is late */

struct rpx_http_sched {
    rpx_http_load_opts o;
    long concurrency_asked;       /* --concurrency before a clamp to the open-file limit */
    char clamp_note[400];         /* why it was clamped; "" when it was not */
    rpx_http_load_done_fn done;
    void *ud;
    rpx_http_stream *stream;      /* responses captured for it; NULL: none */
    long n;                       /* scheduled requests */
    long next;                    /* the next request to send (or drop) */
    long long next_t;             /* its intended time */
    double offset;                /* ns from t0 of the schedule so far */
    long finished;                /* requests answered, failed or dropped */
    long sent, completed, failed, dropped, late, max_in_flight;
    long timed_out;               /* failed requests that timed out (cut ones included) */
    long cut;                     /* in flight when --duration and --drain ended */
    long dropped_at_end;          /* not yet sent then */
    long long t0, first_send, last_send, end;
    long long span_ns;            /* the last request's intended time from the first's */
    double last_offset_ns;        /* the same, known before the first send (Poisson: drawn
                                   * ahead with the same generator) */
    rpx_histogram *service, *send_delay; /* bounded: about 30 KiB each, whatever the count */
    rpx_histogram *own_delay;     /* the client's own delay: send minus ready (see sched_sent) */
    rpx_histogram *latency;       /* from the intended send (the samples' statistics, for the
                                   * send delay's share) */
    long waited;                  /* sends that waited for a free connection */
    double *sched_ms;             /* per latency sample (completion order): its intended send, */
    long n_sched;                 /* ms from the schedule's start; as many as the samples */
    unsigned long long rng;
    int ran;
};

long long rpx__load_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* splitmix64: a uniform in (0, 1] */
static double uniform(unsigned long long *x)
{
    unsigned long long z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 1.0) / 9007199254740992.0;
}

int rpx__sched_create(const rpx_http_load_opts *o, rpx_http_sched **out, rpx_error *err)
{
    rpx_http_sched *s = calloc(1, sizeof *s);
    *out = s;
    if (!s) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    s->o = *o;
    if (s->o.concurrency < 1) s->o.concurrency = 1;
    s->concurrency_asked = s->o.concurrency;
    if (rpx_histogram_create(&s->service) != 0 || rpx_histogram_create(&s->send_delay) != 0 ||
        rpx_histogram_create(&s->own_delay) != 0 || rpx_histogram_create(&s->latency) != 0)
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    return 0;
}

void rpx__sched_destroy(rpx_http_sched *s)
{
    if (!s) return;
    rpx_histogram_destroy(s->service);
    rpx_histogram_destroy(s->send_delay);
    rpx_histogram_destroy(s->own_delay);
    rpx_histogram_destroy(s->latency);
    free(s->sched_ms);
    free(s);
}

const rpx_http_load_opts *rpx__sched_opts(const rpx_http_sched *s) { return &s->o; }
void rpx__sched_set_stream(rpx_http_sched *s, rpx_http_stream *stream) { s->stream = stream; }
rpx_http_stream *rpx__sched_stream(const rpx_http_sched *s) { return s->stream; }

void rpx__sched_clamp_concurrency(rpx_http_sched *s, long concurrency, const char *note)
{
    s->o.concurrency = concurrency < 1 ? 1 : concurrency;
    snprintf(s->clamp_note, sizeof s->clamp_note, "%s", note);
}

int rpx__sched_begin(rpx_http_sched *s, long n, rpx_http_load_done_fn done, void *ud,
                     rpx_error *err)
{
    free(s->sched_ms);
    s->n_sched = 0;
    s->sched_ms = malloc((size_t)(n > 0 ? n : 1) * sizeof *s->sched_ms);
    if (!s->sched_ms) return rpx_error_set(err, RPX_ENOMEM, "out of memory for %ld requests", n);
    s->n = n;
    s->next = 0;
    s->offset = 0;
    s->finished = 0;
    s->done = done;
    s->ud = ud;
    s->ran = 1;
    s->rng = s->o.seed;
    s->last_offset_ns = n > 1 ? (double)(n - 1) * 1e9 / s->o.rate : 0;
    if (s->o.poisson && n > 1) { /* the same draws advance() will make */
        unsigned long long rng = s->o.seed;
        double off = 0;
        long i;
        const double gap_ns = 1e9 / s->o.rate;
        for (i = 0; i < n - 1; i++) off += -log(uniform(&rng)) * gap_ns;
        s->last_offset_ns = off;
    }
    s->t0 = rpx__load_now_ns() + 1000000LL;
    s->next_t = s->t0;
    return 0;
}

void rpx__sched_plan(rpx_http_sched *s, long n)
{
    if (!s->ran) s->n = n;
}

void rpx__sched_end(rpx_http_sched *s)
{
    if (!s->end) s->end = rpx__load_now_ns();
}

long long rpx__sched_due(const rpx_http_sched *s)
{
    return s->next < s->n ? s->next_t : LLONG_MAX;
}

long long rpx__sched_cut_ns(const rpx_http_sched *s)
{
    /* --duration, or the last request's intended time when Poisson gaps put it later */
    double end = s->o.duration_s * 1e9 > s->last_offset_ns ? s->o.duration_s * 1e9
                                                            : s->last_offset_ns;
    double ns = end + (s->o.drain_s > 0 ? s->o.drain_s : 0) * 1e9;
    if (!(s->o.duration_s > 0) || !(ns < 9e18) || s->t0 > LLONG_MAX - (long long)ns)
        return LLONG_MAX;
    return s->t0 + (long long)ns;
}

static void advance(rpx_http_sched *s)
{
    const double gap_ns = 1e9 / s->o.rate;
    if (s->next == s->n - 1) s->span_ns = s->next_t - s->t0;
    s->next++;
    s->offset += s->o.poisson ? -log(uniform(&s->rng)) * gap_ns : gap_ns;
    s->next_t = s->t0 + (long long)s->offset;
}

void rpx__sched_sent(rpx_http_sched *s, long long now, long long free_since, long in_flight)
{
    const long long intended = s->next_t;
    const long long ready = free_since > intended ? free_since : intended;
    s->sent++;
    if (free_since > intended) s->waited++;
    rpx_histogram_add(s->own_delay, now > ready ? now - ready : 0);
    if (!s->first_send) s->first_send = now;
    s->last_send = now;
    if (now - intended > LATE_NS) s->late++;
    rpx_histogram_add(s->send_delay, now > intended ? now - intended : 0);
    if (in_flight > s->max_in_flight) s->max_in_flight = in_flight;
    advance(s);
}

void rpx__sched_dropped(rpx_http_sched *s, const rpx_run_config *cfg)
{
    s->dropped++;
    s->finished++;
    advance(s);
    if (cfg->calls_done)
        __atomic_store_n(cfg->calls_done, cfg->warmup + s->finished, __ATOMIC_RELEASE);
}

void rpx__sched_drop_rest(rpx_http_sched *s, const rpx_run_config *cfg)
{
    while (s->next < s->n) {
        s->dropped_at_end++;
        rpx__sched_dropped(s, cfg);
    }
}

int rpx__sched_finished(rpx_http_sched *s, long long intended, const rpx_run_config *cfg,
                        rpx_run_result *res, const rpx_http_load_req *r)
{
    if (r->ok) {
        if (cfg->call_start_ns) cfg->call_start_ns[res->measured] = intended; /* --timeline */
        cfg->samples[res->measured++] = r->end_ns - intended;
        s->sched_ms[s->n_sched++] = (double)(intended - s->t0) / 1e6;
        rpx_histogram_add(s->service, r->end_ns - r->sent_ns);
        rpx_histogram_add(s->latency, r->end_ns - intended);
        s->completed++;
    } else {
        res->failed_calls++;
        s->failed++;
        if (r->cut || (r->error_key && strcmp(r->error_key, "timeout") == 0) ||
            (r->easy && r->curl_res == CURLE_OPERATION_TIMEDOUT))
            s->timed_out++;
        if (r->cut) s->cut++;
        if (cfg->failed_done)
            __atomic_store_n(cfg->failed_done, res->failed_calls, __ATOMIC_RELEASE);
    }
    if (s->done) s->done(s->ud, r);
    s->finished++;
    if (r->end_ns > s->end) s->end = r->end_ns;
    if (cfg->calls_done)
        __atomic_store_n(cfg->calls_done, cfg->warmup + s->finished, __ATOMIC_RELEASE);
    if (cfg->progress_ns) __atomic_store_n(cfg->progress_ns, r->end_ns, __ATOMIC_RELEASE);
    if (!r->ok && !r->cut && cfg->max_failures > 0 &&
        res->failed_calls + res->failed_warmup_calls >= cfg->max_failures) {
        res->status = RPX_RUN_TOO_MANY_FAILURES;
        return 1;
    }
    return 0;
}

long rpx__sched_done_count(const rpx_http_sched *s) { return s->finished; }
long rpx__sched_scheduled(const rpx_http_sched *s) { return s->n; }
long rpx__sched_concurrency(const rpx_http_sched *s) { return s->o.concurrency; }
long rpx__sched_sent_count(const rpx_http_sched *s) { return s->sent; }

static json_t *stats_json(const rpx_histogram *h)
{
    rpx_latency_stats st;
    if (rpx_histogram_stats(h, &st) != 0) st.available = 0;
    return rpx_latency_stats_json(&st);
}

static json_t *real_or_null(double x)
{
    return x == x && isfinite(x) ? json_real(x) : json_null();
}

void rpx__sched_json(const rpx_http_sched *s, json_t *o)
{
    double achieved = s->sent >= 2 && s->last_send > s->first_send
                          ? (double)(s->sent - 1) / ((double)(s->last_send - s->first_send) / 1e9)
                          : (double)NAN;
    json_object_set_new(o, "requested_rate_per_s", json_real(s->o.rate));
    json_object_set_new(o, "arrivals", json_string(s->o.poisson ? "poisson" : "constant"));
    json_object_set_new(o, "seed", json_integer((json_int_t)s->o.seed));
    json_object_set_new(o, "concurrency", json_integer(s->o.concurrency));
    json_object_set_new(o, "concurrency_asked", json_integer(s->concurrency_asked));
    json_object_set_new(o, "concurrency_note",
                        s->clamp_note[0] ? json_string(s->clamp_note) : json_null());
    json_object_set_new(o, "scheduled", json_integer(s->n));
    json_object_set_new(o, "schedule_mean_gap_ms",
                        s->n >= 2 && s->span_ns > 0
                            ? json_real((double)s->span_ns / 1e6 / (double)(s->n - 1))
                            : json_null());
    json_object_set_new(o, "achieved_rate_per_s", real_or_null(achieved));
    json_object_set_new(o, "sent", json_integer(s->sent));
    json_object_set_new(o, "completed", json_integer(s->completed));
    json_object_set_new(o, "failed", json_integer(s->failed));
    json_object_set_new(o, "timed_out", json_integer(s->timed_out));
    json_object_set_new(o, "cut_at_end", json_integer(s->cut));
    json_object_set_new(o, "dropped", json_integer(s->dropped));
    json_object_set_new(o, "dropped_at_end", json_integer(s->dropped_at_end));
    /* the run ended before these were due (a warmup failure, --max-failures, a signal) */
    json_object_set_new(o, "not_sent",
                        json_integer(s->n > s->sent + s->dropped ? s->n - s->sent - s->dropped
                                                                 : 0));
    json_object_set_new(o, "late", json_integer(s->late));
    json_object_set_new(o, "late_threshold_ms", json_real((double)LATE_NS / 1e6));
    json_object_set_new(o, "max_in_flight", json_integer(s->max_in_flight));
    json_object_set_new(o, "requested_duration_s", json_real(s->o.duration_s));
    json_object_set_new(o, "drain_s", json_real(s->o.drain_s > 0 ? s->o.drain_s : 0));
    json_object_set_new(o, "duration_s", s->ran ? json_real((double)(s->end - s->t0) / 1e9)
                                                : json_null());
    if (s->ran && s->sched_ms) {
        json_t *a = json_array();
        long i;
        for (i = 0; a && i < s->n_sched; i++) json_array_append_new(a, json_real(s->sched_ms[i]));
        json_object_set_new(o, "schedule_ms", a ? a : json_null());
    } else {
        json_object_set_new(o, "schedule_ms", json_null());
    }
    json_object_set_new(o, "service_latency_ms", stats_json(s->service));
    json_object_set_new(o, "send_delay_ms", stats_json(s->send_delay));
    {
        rpx_send_delay_stats sd;
        rpx_latency_stats st;
        memset(&sd, 0, sizeof sd);
        sd.n = (long)rpx_histogram_count(s->own_delay);
        sd.p50_ns = rpx_histogram_percentile_ns(s->own_delay, 50);
        sd.p99_ns = rpx_histogram_percentile_ns(s->own_delay, 99);
        sd.max_ns = sd.mean_ns = (double)NAN;
        if (rpx_histogram_stats(s->own_delay, &st) == 0 && st.available) {
            sd.max_ns = st.max_ms * 1e6;
            sd.mean_ns = st.mean_ms * 1e6;
        }
        sd.latency_p50_ns = rpx_histogram_percentile_ns(s->latency, 50);
        sd.latency_p99_ns = rpx_histogram_percentile_ns(s->latency, 99);
        sd.waited = s->waited;
        sd.requested_rate = s->o.rate;
        sd.achieved_rate = achieved;
        sd.target_bound = s->waited > 0 || s->dropped > 0;
        json_object_set_new(
            o, "send_delay",
            rpx_send_delay_json(&sd, "the client's own delay per request: from when it could "
                                     "be sent (its intended time, or when a connection came "
                                     "free if it waited for one) to the start of its send; "
                                     "share: of the latency from the intended send"));
    }
    json_object_set_new(o, "stats_method",
                        json_string("service_latency_ms and send_delay_ms: a log-bucketed "
                                    "histogram (64 buckets per power of two; percentiles within "
                                    "1 %, n/mean/min/max/std exact), bounded whatever the run's "
                                    "length"));
}
