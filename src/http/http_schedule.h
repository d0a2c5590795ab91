/* http_schedule.h — the open-loop load's schedule and counts, shared by both
 * engines (http_load_curl.c, http_load_sock.c) and by the load's front
 * (http_load.c), which calls neither back: the intended send times (constant
 * or Poisson arrivals), what was sent, dropped, answered, failed, timed out
 * and cut when --duration and --drain ended, and those counts in the report.
 * Internal to librpxprof-http.so. */
#ifndef RPX_HTTP_SCHEDULE_H
#define RPX_HTTP_SCHEDULE_H

#include <curl/curl.h>
#include <jansson.h>

#include "http/http_stream.h"
#include "rpxprof/error.h"
#include "measure/run.h"

enum { RPX_LOAD_ENGINE_AUTO, RPX_LOAD_ENGINE_CURL, RPX_LOAD_ENGINE_SOCKETS };

typedef struct rpx_http_load_opts {
    double rate;                  /* requests per second, > 0 */
    int poisson;                  /* 0: constant arrivals */
    double duration_s;            /* the schedule: rate * duration_s requests (cfg->repeats);
                                   * also the run's bound: see drain_s */
    long concurrency;             /* requests in flight at most */
    unsigned long long seed;      /* Poisson arrivals */
    double request_timeout_s;     /* a request not answered (or sent) this long after its send
                                   * (its intended time) fails (is dropped) */
    double connect_timeout_s;     /* sockets engine: a connect not done this long fails */
    int engine;                   /* RPX_LOAD_ENGINE_* as asked (--load-engine) */
    int h2c;                      /* --http2 over http:// (prior knowledge; curl's engine) */
    double drain_s;               /* --drain: when duration_s has passed since the schedule's
                                   * start, requests in flight get this long, then count as
                                   * timed out and the requests not yet sent as dropped */
    /* bodies that vary (--body-template, --nonce): the next request's body (malloc'ed,
     * *len its size; NULL out of memory), made when the request is due. NULL: every
     * request sends the prepared body. curl's engine only. */
    char *(*next_body)(void *ud, size_t *len);
    void *body_ud;
} rpx_http_load_opts;

/* One finished request, for the target's counts and phases (outside any timed span). */
typedef struct rpx_http_load_req {
    CURL *easy;                   /* curl engine: its handle (curl_easy_getinfo works); else NULL */
    CURLcode curl_res;            /* curl engine: curl's result */
    const char *error_key;        /* sockets engine: a transport error's status_counts key
                                   * ("timeout", "connection_refused", ...); NULL: answered */
    const char *error_text;       /* sockets engine: that error in words */
    long status;                  /* the status line's code; 0: none */
    long long sent_ns, first_ns, end_ns; /* CLOCK_MONOTONIC; first_ns 0: no response byte */
    long long connect_ns;         /* sockets engine: the connect this request opened; -1: none */
    long long bytes_sent, bytes_received; /* request and response body bytes */
    long http_version;            /* sockets engine: CURL_HTTP_VERSION_1_0 or _1_1 answered */
    const rpx_http_capture *capture; /* the response's bytes and times (streams); NULL: none */
    int ok;                       /* a latency sample (answered 2xx) */
    int cut;                      /* still in flight when --duration and --drain ended: a
                                   * timeout (error_key "timeout" / CURLE_OPERATION_TIMEDOUT) */
} rpx_http_load_req;

typedef void (*rpx_http_load_done_fn)(void *ud, const rpx_http_load_req *r);

typedef struct rpx_http_sched rpx_http_sched;

int rpx__sched_create(const rpx_http_load_opts *o, rpx_http_sched **out, rpx_error *err);
void rpx__sched_destroy(rpx_http_sched *s);
const rpx_http_load_opts *rpx__sched_opts(const rpx_http_sched *s);
/* Streamed responses under load: every request's response is captured for it. */
void rpx__sched_set_stream(rpx_http_sched *s, rpx_http_stream *stream);
rpx_http_stream *rpx__sched_stream(const rpx_http_sched *s);
/* --concurrency lowered to what the open-file limit allows (the reason kept for the report). */
void rpx__sched_clamp_concurrency(rpx_http_sched *s, long concurrency, const char *note);

/* A new schedule of n requests starting 1 ms from now; `done` is called once per finished
 * request. */
int rpx__sched_begin(rpx_http_sched *s, long n, rpx_http_load_done_fn done, void *ud,
                     rpx_error *err);
/* The schedule's length when it never began (the warmup ended the run): the report still
 * says how many requests were scheduled and that none was sent. */
void rpx__sched_plan(rpx_http_sched *s, long n);
/* The schedule is over (whatever ended it). */
void rpx__sched_end(rpx_http_sched *s);

long long rpx__load_now_ns(void);
/* The next request's intended send time (CLOCK_MONOTONIC ns); LLONG_MAX when
 * every request has been sent or dropped. */
long long rpx__sched_due(const rpx_http_sched *s);
/* When --duration and --drain end (CLOCK_MONOTONIC ns); LLONG_MAX: no bound. */
long long rpx__sched_cut_ns(const rpx_http_sched *s);
/* The request due now was sent at `now` (in_flight: counting it), or dropped.
 * free_since: when the connection (slot) it went out on came free, when that was
 * after the request's intended time (it waited for one: the server's slowness,
 * not the client's); else anything not later than it (0). The client's own send
 * delay is `now` minus the later of the two. */
void rpx__sched_sent(rpx_http_sched *s, long long now, long long free_since, long in_flight);
void rpx__sched_dropped(rpx_http_sched *s, const rpx_run_config *cfg);
/* --duration and --drain ended: every request not yet sent is dropped. */
void rpx__sched_drop_rest(rpx_http_sched *s, const rpx_run_config *cfg);
/* A request sent at its due time `intended` finished: the sample or the
 * failure, the done callback, the shared counters. 1: stop (too many failures). */
int rpx__sched_finished(rpx_http_sched *s, long long intended, const rpx_run_config *cfg,
                        rpx_run_result *res, const rpx_http_load_req *r);
/* Requests sent or dropped and finished; the schedule's length; requests in flight at most. */
long rpx__sched_done_count(const rpx_http_sched *s);
long rpx__sched_scheduled(const rpx_http_sched *s);
long rpx__sched_concurrency(const rpx_http_sched *s);
long rpx__sched_sent_count(const rpx_http_sched *s);

/* The schedule's part of the http.load section, added to `o`. */
void rpx__sched_json(const rpx_http_sched *s, json_t *o);

#endif
