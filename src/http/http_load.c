/* http_load.c — open-loop load: `rate * duration` requests sent on a
 * schedule fixed in advance (constant gaps of 1/rate, or exponential ones of
 * that mean from a seeded generator), at most `concurrency` in flight, by one
 * thread. A request's latency runs from its intended send time to the last
 * byte of its answer, so a server stall delays every request scheduled during
 * it (no coordinated omission, as in wrk2); the service latency from the
 * actual send is kept beside it. A request that finds `concurrency` requests
 * in flight waits, and the wait counts; one still waiting --request-timeout
 * after its time is dropped. This file holds the schedule and the counts
 * both engines share, the report section, and the curl engine (curl's multi
 * interface: https, HTTP/2, proxies); http_load_sock.c is the other. */
#include <limits.h>
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

struct rpx_http_load {
    rpx_http_load_opts o;
    rpx_http_sock *sock;          /* the sockets engine; NULL: curl's */
    const char *engine_reason;    /* why curl's engine under --load-engine auto */
    rpx_http_load_done_fn done;
    void *ud;
    rpx_http_stream *stream;      /* responses captured for it; NULL: none */
    long n;                       /* scheduled requests */
    long next;                    /* the next request to send (or drop) */
    long long next_t;             /* its intended time */
    double offset;                /* ns from t0 of the schedule so far */
    long finished;                /* requests answered, failed or dropped */
    long sent, completed, failed, dropped, late, max_in_flight;
    long long t0, first_send, last_send, end;
    long long span_ns;            /* the last request's intended time from the first's */
    rpx_histogram *service, *send_delay; /* bounded: about 30 KiB each, whatever the count */
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
    rpx__http_sock_destroy(l->sock);
    rpx_histogram_destroy(l->service);
    rpx_histogram_destroy(l->send_delay);
    free(l->sched_ms);
    free(l);
}

int rpx__http_load_prepare(rpx_http_load *l, const char *url, const char *display_url,
                           const char *method, const struct curl_slist *headers,
                           const char *body, size_t body_len, int send_body, int http2,
                           rpx_error *err)
{
    const char *reason = NULL;
    int rc;
    if (l->o.engine == RPX_LOAD_ENGINE_CURL) {
        l->engine_reason = "--load-engine curl";
        return 0;
    }
    if (http2) {
        reason = "--http2 (HTTP/2 is curl's)";
    } else {
        rc = rpx__http_sock_create(url, method, headers, body, body_len, send_body,
                                   &l->sock, &reason, err);
        if (rc != 0) return rc;
    }
    if (!l->sock) {
        if (l->o.engine == RPX_LOAD_ENGINE_SOCKETS)
            return rpx_error_set(err, RPX_EINVAL,
                                 "--load-engine sockets: --model %s cannot be sent on plain "
                                 "sockets: %s; use --load-engine curl (or auto)",
                                 display_url, reason);
        l->engine_reason = reason;
    }
    return 0;
}

void rpx__http_load_set_stream(rpx_http_load *l, rpx_http_stream *s)
{
    l->stream = s;
}

rpx_http_stream *rpx__load_stream(const rpx_http_load *l)
{
    return l->stream;
}

int rpx__http_load_remote(const rpx_http_load *l, char *buf, size_t size)
{
    return l->sock ? rpx__http_sock_remote(l->sock, buf, size) : -1;
}

const char *rpx__http_load_engine(const rpx_http_load *l)
{
    return l->sock ? "sockets" : "curl";
}

long long rpx__load_due(const rpx_http_load *l)
{
    return l->next < l->n ? l->next_t : LLONG_MAX;
}

static void advance(rpx_http_load *l)
{
    const double gap_ns = 1e9 / l->o.rate;
    if (l->next == l->n - 1) l->span_ns = l->next_t - l->t0;
    l->next++;
    l->offset += l->o.poisson ? -log(uniform(&l->rng)) * gap_ns : gap_ns;
    l->next_t = l->t0 + (long long)l->offset;
}

void rpx__load_sent(rpx_http_load *l, long long now, long in_flight)
{
    const long long intended = l->next_t;
    l->sent++;
    if (!l->first_send) l->first_send = now;
    l->last_send = now;
    if (now - intended > LATE_NS) l->late++;
    rpx_histogram_add(l->send_delay, now > intended ? now - intended : 0);
    if (in_flight > l->max_in_flight) l->max_in_flight = in_flight;
    advance(l);
}

void rpx__load_dropped(rpx_http_load *l, const rpx_run_config *cfg)
{
    l->dropped++;
    l->finished++;
    advance(l);
    if (cfg->calls_done)
        __atomic_store_n(cfg->calls_done, cfg->warmup + l->finished, __ATOMIC_RELEASE);
}

int rpx__load_finished(rpx_http_load *l, long long intended, const rpx_run_config *cfg,
                       rpx_run_result *res, const rpx_http_load_req *r)
{
    if (r->ok) {
        cfg->samples[res->measured++] = r->end_ns - intended;
        l->sched_ms[l->n_sched++] = (double)(intended - l->t0) / 1e6;
        rpx_histogram_add(l->service, r->end_ns - r->sent_ns);
        l->completed++;
    } else {
        res->failed_calls++;
        l->failed++;
        if (cfg->failed_done)
            __atomic_store_n(cfg->failed_done, res->failed_calls, __ATOMIC_RELEASE);
    }
    if (l->done) l->done(l->ud, r);
    l->finished++;
    if (r->end_ns > l->end) l->end = r->end_ns;
    if (cfg->calls_done)
        __atomic_store_n(cfg->calls_done, cfg->warmup + l->finished, __ATOMIC_RELEASE);
    if (cfg->progress_ns) __atomic_store_n(cfg->progress_ns, r->end_ns, __ATOMIC_RELEASE);
    if (!r->ok && cfg->max_failures > 0 &&
        res->failed_calls + res->failed_warmup_calls >= cfg->max_failures) {
        res->status = RPX_RUN_TOO_MANY_FAILURES;
        return 1;
    }
    return 0;
}

long rpx__load_done_count(const rpx_http_load *l) { return l->finished; }
long rpx__load_scheduled(const rpx_http_load *l) { return l->n; }
long rpx__load_concurrency(const rpx_http_load *l) { return l->o.concurrency; }

/* --- the curl engine ------------------------------------------------------- */

typedef struct slot {
    CURL *easy;
    int busy;
    long long intended, sent, first, last;
    long status;
    rpx_http_stream *stream;      /* responses captured for it (streams); NULL: none */
    rpx_http_capture *cap;
} slot;

static size_t slot_body(char *data, size_t size, size_t n, void *ud)
{
    slot *s = ud;
    s->last = rpx__load_now_ns();
    if (s->cap) rpx__capture_data(s->cap, data, size * n, s->last);
    return size * n;
}

static size_t slot_header(char *line, size_t size, size_t n, void *ud)
{
    slot *s = ud;
    size_t len = size * n, i = 5;
    s->last = rpx__load_now_ns();
    if (!s->first) s->first = s->last;
    if (s->cap) rpx__capture_header(s->stream, s->cap, line, len);
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
        if ((s->stream = l->stream) != NULL && rpx__capture_create(&s->cap) != 0) return -1;
    }
    if (s->cap) rpx__capture_begin(s->stream, s->cap, intended);
    s->intended = intended;
    s->sent = now;
    s->first = s->last = 0;
    s->status = 0;
#if LIBCURL_VERSION_NUM < 0x080000
    /* libcurl before 8.0 breaks a prior-knowledge connection that a second prior-knowledge
     * request reuses (curl #10634): the first request opens it with prior knowledge, the
     * others ask for CURL_HTTP_VERSION_2_0 and (PIPEWAIT) wait for it and multiplex on it */
    if (l->o.h2c)
        curl_easy_setopt(s->easy, CURLOPT_HTTP_VERSION,
                         l->sent == 0 ? (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
                                      : (long)CURL_HTTP_VERSION_2_0);
#endif
    if (curl_multi_add_handle(m, s->easy) != CURLM_OK) return -1;
    s->busy = 1;
    return 0;
}

static int curl_run(rpx_http_load *l, CURL *tmpl, const rpx_run_config *cfg,
                    rpx_run_result *res, rpx_error *err)
{
    const long n = l->n, c = l->o.concurrency;
    const long long drop_ns = (long long)(l->o.request_timeout_s * 1e9);
    CURLM *m = curl_multi_init();
    slot *slots = calloc((size_t)c, sizeof *slots);
    slot **free_slots = malloc((size_t)c * sizeof *free_slots); /* a stack of idle slots */
    long in_flight = 0, i, n_free = c;
    int rc = 0;

    if (!m || !slots || !free_slots) {
        if (m) curl_multi_cleanup(m);
        free(slots);
        free(free_slots);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory for %ld connections", c);
    }
    for (i = 0; i < c; i++) free_slots[i] = &slots[c - 1 - i];
    while (l->finished < n) {
        long long now = rpx__load_now_ns();
        int running = 0, left;
        long wait_ms;
        CURLMsg *msg;
        if (cfg->stop && *cfg->stop) {
            res->status = RPX_RUN_INTERRUPTED;
            break;
        }
        /* sends that are due: a free slot each, or they wait (and may be dropped) */
        while (l->next < n && l->next_t <= now) {
            if (in_flight < c) {
                slot *s = n_free > 0 ? free_slots[--n_free] : NULL;
                if (!s || start(l, m, s, tmpl, l->next_t, now) != 0) {
                    rc = rpx_error_set(err, RPX_ENOMEM, "cannot start request %ld", l->next);
                    goto out;
                }
                rpx__load_sent(l, now, ++in_flight);
            } else if (now - l->next_t > drop_ns) {
                rpx__load_dropped(l, cfg);
            } else {
                break;
            }
        }
        curl_multi_perform(m, &running);
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            slot *s = NULL;
            rpx_http_load_req r = {0};
            if (msg->msg != CURLMSG_DONE) continue;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            r.easy = msg->easy_handle;
            r.curl_res = msg->data.result;
            r.status = s->status;
            r.sent_ns = s->sent;
            r.first_ns = s->first;
            r.end_ns = s->last ? s->last : rpx__load_now_ns();
            r.connect_ns = -1;
            r.ok = r.curl_res == CURLE_OK && s->status >= 200 && s->status <= 299;
            r.capture = s->cap;
            rc = rpx__load_finished(l, s->intended, cfg, res, &r);
            curl_multi_remove_handle(m, msg->easy_handle);
            s->busy = 0;
            free_slots[n_free++] = s;
            in_flight--;
            if (rc) {
                rc = 0;
                goto out;
            }
        }
        if (l->finished >= n) break;
        /* sleep until the next send is due or curl has work; under 1 ms: spin */
        now = rpx__load_now_ns();
        if (l->next < n && in_flight < c)
            wait_ms = l->next_t - now <= 1000000LL ? 0
                                                   : (long)((l->next_t - now) / 1000000LL) - 1;
        else if (l->next < n)
            wait_ms = l->next_t + drop_ns - now <= 0
                          ? 0
                          : (long)((l->next_t + drop_ns - now) / 1000000LL);
        else
            wait_ms = 100;
        if (wait_ms > 100) wait_ms = 100;
        if (wait_ms > 0) curl_multi_poll(m, NULL, 0, (int)wait_ms, NULL);
    }
out:
    for (i = 0; i < c; i++) {
        if (slots[i].busy) curl_multi_remove_handle(m, slots[i].easy);
        if (slots[i].easy) curl_easy_cleanup(slots[i].easy);
        rpx__capture_destroy(slots[i].cap);
    }
    curl_multi_cleanup(m);
    free(slots);
    free(free_slots);
    return rc;
}

int rpx__http_load_run(rpx_http_load *l, CURL *tmpl, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_http_load_done_fn done, void *ud,
                       rpx_error *err)
{
    const long n = cfg->repeats;
    int rc;
    free(l->sched_ms);
    l->n_sched = 0;
    l->sched_ms = malloc((size_t)(n > 0 ? n : 1) * sizeof *l->sched_ms);
    if (!l->sched_ms) return rpx_error_set(err, RPX_ENOMEM, "out of memory for %ld requests", n);
    l->n = n;
    l->next = 0;
    l->offset = 0;
    l->finished = 0;
    l->done = done;
    l->ud = ud;
    l->ran = 1;
    l->rng = l->o.seed;
    rpx_memory_begin_inference(&res->memory);
    l->t0 = rpx__load_now_ns() + 1000000LL;
    l->next_t = l->t0;
    if (l->sock)
        rc = rpx__http_sock_run(l->sock, l, l->o.request_timeout_s, l->o.connect_timeout_s, cfg,
                                res, err);
    else
        rc = curl_run(l, tmpl, cfg, res, err);
    rpx_memory_end_inference(&res->memory);
    if (!l->end) l->end = rpx__load_now_ns();
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
    json_object_set_new(o, "engine", json_string(rpx__http_load_engine(l)));
    json_object_set_new(o, "engine_reason",
                        l->engine_reason ? json_string(l->engine_reason) : json_null());
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
