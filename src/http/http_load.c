/* http_load.c — open-loop load: `rate * duration` requests sent on a
 * schedule fixed in advance (constant gaps of 1/rate, or exponential ones of
 * that mean from a seeded generator), by one thread through curl's multi
 * interface, at most `concurrency` in flight. A request's latency runs from
 * its intended send time to the last byte of its answer, so a server stall
 * delays every request scheduled during it (no coordinated omission, as in
 * wrk2); the service latency from the actual send is kept beside it. A
 * request that finds `concurrency` requests in flight waits, and the wait
 * counts; one still waiting --request-timeout after its time is dropped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/http_load.h"
#include "rpxprof/histogram.h"
#include "rpxprof/latency.h"
#include "rpxprof/memory.h"
#include "rpxprof/report.h"

#define LATE_NS 1000000LL         /* a send more than 1 ms after its time is late */

typedef struct slot {
    CURL *easy;
    int busy;
    long long intended, sent, first, last;
    long status;
} slot;

struct rpx_http_load {
    rpx_http_load_opts o;
    long n;                       /* scheduled requests */
    long sent, completed, failed, dropped, late, max_in_flight;
    long long t0, first_send, last_send, end;
    long long span_ns;            /* the last request's intended time from the first's */
    rpx_histogram *service, *send_delay; /* bounded: about 30 KiB each, whatever the count */
    double *sched_ms;             /* per latency sample (completion order): its intended send, */
    long n_sched;                 /* ms from the schedule's start; as many as the samples */
    unsigned long long rng;
    int ran;
};

static long long now_ns(void)
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

int rpx__http_load_create(const rpx_http_load_opts *o, rpx_http_load **out, rpx_error *err)
{
    rpx_http_load *l = calloc(1, sizeof *l);
    *out = l;
    if (!l) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    l->o = *o;
    if (l->o.concurrency < 1) l->o.concurrency = 1;
    if (rpx_histogram_create(&l->service) != 0 || rpx_histogram_create(&l->send_delay) != 0)
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    return 0;
}

void rpx__http_load_destroy(rpx_http_load *l)
{
    if (!l) return;
    rpx_histogram_destroy(l->service);
    rpx_histogram_destroy(l->send_delay);
    free(l->sched_ms);
    free(l);
}

static size_t slot_body(char *data, size_t size, size_t n, void *ud)
{
    (void)data;
    ((slot *)ud)->last = now_ns();
    return size * n;
}

static size_t slot_header(char *line, size_t size, size_t n, void *ud)
{
    slot *s = ud;
    size_t len = size * n, i = 5;
    s->last = now_ns();
    if (!s->first) s->first = s->last;
    if (len > 5 && memcmp(line, "HTTP/", 5) == 0) {
        while (i < len && line[i] != ' ') i++;
        if (i + 3 < len && line[i + 1] >= '0' && line[i + 1] <= '9' && line[i + 2] >= '0' &&
            line[i + 2] <= '9' && line[i + 3] >= '0' && line[i + 3] <= '9')
            s->status = (line[i + 1] - '0') * 100 + (line[i + 2] - '0') * 10 + (line[i + 3] - '0');
    }
    return len;
}

static int start(rpx_http_load *l, CURLM *m, slot *s, CURL *tmpl, long long intended,
                 long long now)
{
    if (!s->easy) {
        if (!(s->easy = curl_easy_duphandle(tmpl))) return -1;
        curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, slot_body);
        curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
        curl_easy_setopt(s->easy, CURLOPT_HEADERFUNCTION, slot_header);
        curl_easy_setopt(s->easy, CURLOPT_HEADERDATA, s);
        curl_easy_setopt(s->easy, CURLOPT_PRIVATE, s);
        curl_easy_setopt(s->easy, CURLOPT_ERRORBUFFER, NULL);
    }
    s->intended = intended;
    s->sent = now;
    s->first = s->last = 0;
    s->status = 0;
    if (curl_multi_add_handle(m, s->easy) != CURLM_OK) return -1;
    s->busy = 1;
    l->sent++;
    if (!l->first_send) l->first_send = now;
    l->last_send = now;
    if (now - intended > LATE_NS) l->late++;
    rpx_histogram_add(l->send_delay, now > intended ? now - intended : 0);
    return 0;
}

int rpx__http_load_run(rpx_http_load *l, CURL *tmpl, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_http_load_done_fn done, void *ud,
                       rpx_error *err)
{
    const long n = cfg->repeats, c = l->o.concurrency;
    const double gap_ns = 1e9 / l->o.rate;
    const long long drop_ns = (long long)(l->o.request_timeout_s * 1e9);
    CURLM *m = curl_multi_init();
    slot *slots = calloc((size_t)c, sizeof *slots);
    slot **free_slots = malloc((size_t)c * sizeof *free_slots); /* a stack of idle slots */
    long next = 0, in_flight = 0, i, finished = 0, n_free = c;
    long long next_t;
    double offset = 0;
    int rc = 0;

    free(l->sched_ms);
    l->n_sched = 0;
    l->sched_ms = malloc((size_t)(n > 0 ? n : 1) * sizeof *l->sched_ms);
    if (!m || !slots || !free_slots || !l->sched_ms) {
        if (m) curl_multi_cleanup(m);
        free(slots);
        free(free_slots);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory for %ld connections", c);
    }
    for (i = 0; i < c; i++) free_slots[i] = &slots[c - 1 - i];
    l->n = n;
    l->ran = 1;
    l->rng = l->o.seed;
    rpx_memory_begin_inference(&res->memory);
    l->t0 = now_ns() + 1000000LL;
    next_t = l->t0;
    while (finished < n) {
        long long now = now_ns();
        int running = 0, left;
        long wait_ms;
        CURLMsg *msg;
        if (cfg->stop && *cfg->stop) {
            res->status = RPX_RUN_INTERRUPTED;
            break;
        }
        /* sends that are due: a free slot each, or they wait (and may be dropped) */
        while (next < n && next_t <= now) {
            if (in_flight < c) {
                slot *s = n_free > 0 ? free_slots[--n_free] : NULL;
                if (!s || start(l, m, s, tmpl, next_t, now) != 0) {
                    rc = rpx_error_set(err, RPX_ENOMEM, "cannot start request %ld", next);
                    goto out;
                }
                if (++in_flight > l->max_in_flight) l->max_in_flight = in_flight;
            } else if (now - next_t > drop_ns) {
                l->dropped++;
                finished++;
            } else {
                break;
            }
            if (next == n - 1) l->span_ns = next_t - l->t0;
            next++;
            offset += l->o.poisson ? -log(uniform(&l->rng)) * gap_ns : gap_ns;
            next_t = l->t0 + (long long)offset;
        }
        curl_multi_perform(m, &running);
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            slot *s = NULL;
            long long end;
            int ok;
            if (msg->msg != CURLMSG_DONE) continue;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            end = s->last ? s->last : now_ns();
            ok = msg->data.result == CURLE_OK && s->status >= 200 && s->status <= 299;
            if (ok) {
                cfg->samples[res->measured++] = end - s->intended;
                l->sched_ms[l->n_sched++] = (double)(s->intended - l->t0) / 1e6;
                rpx_histogram_add(l->service, end - s->sent);
                l->completed++;
            } else {
                res->failed_calls++;
                l->failed++;
                if (cfg->failed_done)
                    __atomic_store_n(cfg->failed_done, res->failed_calls, __ATOMIC_RELEASE);
            }
            if (done)
                done(ud, msg->easy_handle, msg->data.result, s->status, s->sent, s->first, end, ok);
            curl_multi_remove_handle(m, msg->easy_handle);
            s->busy = 0;
            free_slots[n_free++] = s;
            in_flight--;
            finished++;
            if (end > l->end) l->end = end;
            if (cfg->calls_done)
                __atomic_store_n(cfg->calls_done, cfg->warmup + finished, __ATOMIC_RELEASE);
            if (cfg->progress_ns) __atomic_store_n(cfg->progress_ns, end, __ATOMIC_RELEASE);
            if (!ok && cfg->max_failures > 0 &&
                res->failed_calls + res->failed_warmup_calls >= cfg->max_failures) {
                res->status = RPX_RUN_TOO_MANY_FAILURES;
                goto out;
            }
        }
        if (finished >= n) break;
        /* sleep until the next send is due or curl has work; under 1 ms: spin */
        now = now_ns();
        if (next < n && in_flight < c)
            wait_ms = next_t - now <= 1000000LL ? 0 : (long)((next_t - now) / 1000000LL) - 1;
        else if (next < n)
            wait_ms = next_t + drop_ns - now <= 0 ? 0 : (long)((next_t + drop_ns - now) / 1000000LL);
        else
            wait_ms = 100;
        if (wait_ms > 100) wait_ms = 100;
        if (wait_ms > 0) curl_multi_poll(m, NULL, 0, (int)wait_ms, NULL);
    }
out:
    rpx_memory_end_inference(&res->memory);
    if (!l->end) l->end = now_ns();
    for (i = 0; i < c; i++) {
        if (slots[i].busy) curl_multi_remove_handle(m, slots[i].easy);
        if (slots[i].easy) curl_easy_cleanup(slots[i].easy);
    }
    curl_multi_cleanup(m);
    free(slots);
    free(free_slots);
    return rc;
}

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

json_t *rpx__http_load_json(const rpx_http_load *l)
{
    json_t *o = json_object();
    double achieved = l->sent >= 2 && l->last_send > l->first_send
                          ? (double)(l->sent - 1) / ((double)(l->last_send - l->first_send) / 1e9)
                          : (double)NAN;
    if (!o) return NULL;
    json_object_set_new(o, "requested_rate_per_s", json_real(l->o.rate));
    json_object_set_new(o, "arrivals", json_string(l->o.poisson ? "poisson" : "constant"));
    json_object_set_new(o, "seed", json_integer((json_int_t)l->o.seed));
    json_object_set_new(o, "concurrency", json_integer(l->o.concurrency));
    json_object_set_new(o, "scheduled", json_integer(l->n));
    json_object_set_new(o, "schedule_mean_gap_ms",
                        l->n >= 2 && l->span_ns > 0
                            ? json_real((double)l->span_ns / 1e6 / (double)(l->n - 1))
                            : json_null());
    json_object_set_new(o, "achieved_rate_per_s", real_or_null(achieved));
    json_object_set_new(o, "sent", json_integer(l->sent));
    json_object_set_new(o, "completed", json_integer(l->completed));
    json_object_set_new(o, "failed", json_integer(l->failed));
    json_object_set_new(o, "dropped", json_integer(l->dropped));
    json_object_set_new(o, "late", json_integer(l->late));
    json_object_set_new(o, "late_threshold_ms", json_real((double)LATE_NS / 1e6));
    json_object_set_new(o, "max_in_flight", json_integer(l->max_in_flight));
    json_object_set_new(o, "duration_s", l->ran ? json_real((double)(l->end - l->t0) / 1e9)
                                                : json_null());
    if (l->ran && l->sched_ms) {
        json_t *a = json_array();
        long i;
        for (i = 0; a && i < l->n_sched; i++) json_array_append_new(a, json_real(l->sched_ms[i]));
        json_object_set_new(o, "schedule_ms", a ? a : json_null());
    } else {
        json_object_set_new(o, "schedule_ms", json_null());
    }
    json_object_set_new(o, "service_latency_ms", stats_json(l->service));
    json_object_set_new(o, "send_delay_ms", stats_json(l->send_delay));
    json_object_set_new(o, "stats_method",
                        json_string("service_latency_ms and send_delay_ms: a log-bucketed "
                                    "histogram (64 buckets per power of two; percentiles within "
                                    "1 %, n/mean/min/max/std exact), bounded whatever the run's "
                                    "length"));
    return o;
}
