/* http_load.h — open-loop load for the HTTP target: requests sent on a
 * schedule (constant or Poisson arrivals), each request's latency measured
 * from its intended send time. Two engines drive the requests: plain sockets
 * with an epoll loop (http_load_sock.c: plain http://, HTTP/1.1, the fast
 * one) and curl's multi interface (http_load.c: https, HTTP/2, proxies). The
 * schedule, the counts and the report section are shared (http_load.c).
 * Internal to librpxprof-http.so. */
#ifndef RPX_HTTP_LOAD_H
#define RPX_HTTP_LOAD_H

#include <curl/curl.h>
#include <jansson.h>

#include "http/http_stream.h"
#include "rpxprof/error.h"
#include "measure/run.h"

enum { RPX_LOAD_ENGINE_AUTO, RPX_LOAD_ENGINE_CURL, RPX_LOAD_ENGINE_SOCKETS };

typedef struct rpx_http_load_opts {
    double rate;                  /* requests per second, > 0 */
    int poisson;                  /* 0: constant arrivals */
    double duration_s;            /* the schedule: rate * duration_s requests (cfg->repeats) */
    long concurrency;             /* requests in flight at most */
    unsigned long long seed;      /* Poisson arrivals */
    double request_timeout_s;     /* a request not answered (or sent) this long after its send
                                   * (its intended time) fails (is dropped) */
    double connect_timeout_s;     /* sockets engine: a connect not done this long fails */
    int engine;                   /* RPX_LOAD_ENGINE_* as asked (--load-engine) */
    int h2c;                      /* --http2 over http:// (prior knowledge; curl's engine) */
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
} rpx_http_load_req;

typedef void (*rpx_http_load_done_fn)(void *ud, const rpx_http_load_req *r);

typedef struct rpx_http_load rpx_http_load;

int rpx__http_load_create(const rpx_http_load_opts *o, rpx_http_load **out, rpx_error *err);
void rpx__http_load_destroy(rpx_http_load *l);

/* The request the sockets engine sends, as curl would send it from the same
 * options: `headers` is the target's curl list ("Name: value", "Name;" sent
 * empty, "Name:" removes a header). Chooses the engine: with
 * RPX_LOAD_ENGINE_AUTO the sockets engine when the URL allows it, else curl
 * with the reason recorded; RPX_LOAD_ENGINE_SOCKETS where it cannot serve the
 * URL is an error naming the reason. `http2`: --http2 (curl only). */
int rpx__http_load_prepare(rpx_http_load *l, const char *url, const char *display_url,
                           const char *method, const struct curl_slist *headers,
                           const char *body, size_t body_len, int send_body, int http2,
                           rpx_error *err);

/* Runs the schedule (cfg->repeats requests; cfg->warmup is the caller's, sent
 * before) with the chosen engine (curl: handles duplicated from `tmpl`);
 * fills cfg->samples, res (measured, failed_calls, status) and the shared
 * counters of cfg; `done` is called once per finished request. */
int rpx__http_load_run(rpx_http_load *l, CURL *tmpl, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_http_load_done_fn done, void *ud,
                       rpx_error *err);
/* Streamed responses under load: every request's response is captured for
 * `s` (its events timed from the request's intended send time). */
void rpx__http_load_set_stream(rpx_http_load *l, rpx_http_stream *s);
rpx_http_stream *rpx__load_stream(const rpx_http_load *l);

/* The sockets engine's server address (rpx__http_sock_remote); -1 with curl's. */
int rpx__http_load_remote(const rpx_http_load *l, char *buf, size_t size);

/* "sockets" or "curl": the engine prepare chose. */
const char *rpx__http_load_engine(const rpx_http_load *l);
/* The http.load section (new reference). */
json_t *rpx__http_load_json(const rpx_http_load *l);

/* --- shared by the engines (http_load.c) ----------------------------------- */

long long rpx__load_now_ns(void);
/* The next request's intended send time (CLOCK_MONOTONIC ns); LLONG_MAX when
 * every request has been sent or dropped. */
long long rpx__load_due(const rpx_http_load *l);
/* The request due now was sent at `now` (in_flight: counting it), or dropped. */
void rpx__load_sent(rpx_http_load *l, long long now, long in_flight);
void rpx__load_dropped(rpx_http_load *l, const rpx_run_config *cfg);
/* A request sent at its due time `intended` finished: the sample or the
 * failure, the done callback, the shared counters. 1: stop (too many failures). */
int rpx__load_finished(rpx_http_load *l, long long intended, const rpx_run_config *cfg,
                       rpx_run_result *res, const rpx_http_load_req *r);
/* Requests sent or dropped and finished; the schedule's length. */
long rpx__load_done_count(const rpx_http_load *l);
long rpx__load_scheduled(const rpx_http_load *l);
long rpx__load_concurrency(const rpx_http_load *l);

/* --- the sockets engine (http_load_sock.c) --------------------------------- */

typedef struct rpx_http_sock rpx_http_sock;
/* NULL and *reason set when plain sockets cannot send this request (https,
 * --http2, a proxy from the environment, credentials in the URL). */
int rpx__http_sock_create(const char *url, const char *method,
                          const struct curl_slist *headers, const char *body, size_t body_len,
                          int send_body, rpx_http_sock **out, const char **reason,
                          rpx_error *err);
void rpx__http_sock_destroy(rpx_http_sock *k);
int rpx__http_sock_run(rpx_http_sock *k, rpx_http_load *l, double request_timeout_s,
                       double connect_timeout_s, const rpx_run_config *cfg, rpx_run_result *res,
                       rpx_error *err);
/* The address the last connect reached as "ip:port" ("[ip]:port" for IPv6): 0, or -1
 * when none did. */
int rpx__http_sock_remote(const rpx_http_sock *k, char *buf, size_t size);

#endif
