/* http_load.h — open-loop load for the HTTP target: requests sent on a
 * schedule (constant or Poisson arrivals), each request's latency measured
 * from its intended send time. The front of three rooms: the schedule and its
 * counts (http_schedule.c), and the two engines that send the requests, plain
 * sockets with an epoll loop (http_load_sock.c: plain http://, HTTP/1.1, the
 * fast one) and curl's multi interface (http_load_curl.c: https, HTTP/2,
 * proxies). This front chooses the engine, raises the open-file limit the
 * concurrency needs and writes the report section; the engines report to the
 * schedule and call neither each other nor this front.
 * Internal to librpxprof-http.so. */
#ifndef RPX_HTTP_LOAD_H
#define RPX_HTTP_LOAD_H

#include <curl/curl.h>
#include <jansson.h>

#include "http/http_schedule.h"
#include "http/http_stream.h"
#include "rpxprof/error.h"
#include "measure/run.h"

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
 * counters of cfg; `done` is called once per finished request. --duration
 * bounds it: see rpx_http_load_opts.drain_s. */
int rpx__http_load_run(rpx_http_load *l, CURL *tmpl, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_http_load_done_fn done, void *ud,
                       rpx_error *err);
/* The schedule's length when the run ended before it began (a warmup failure). */
void rpx__http_load_plan(rpx_http_load *l, long n);
/* Streamed responses under load: every request's response is captured for
 * `s` (its events timed from the request's intended send time). */
void rpx__http_load_set_stream(rpx_http_load *l, rpx_http_stream *s);

/* The sockets engine's server address (rpx__http_sock_remote); -1 with curl's. */
int rpx__http_load_remote(const rpx_http_load *l, char *buf, size_t size);

/* "sockets" or "curl": the engine prepare chose. */
const char *rpx__http_load_engine(const rpx_http_load *l);
/* The http.load section (new reference). */
json_t *rpx__http_load_json(const rpx_http_load *l);

#endif
