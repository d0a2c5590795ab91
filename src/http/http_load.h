/* http_load.h — open-loop load for the HTTP target: requests sent on a
 * schedule (constant or Poisson arrivals) by curl's multi interface, each
 * request's latency measured from its intended send time. Internal to
 * librpxprof-http.so. */
#ifndef RPX_HTTP_LOAD_H
#define RPX_HTTP_LOAD_H

#include <curl/curl.h>
#include <jansson.h>

#include "rpxprof/error.h"
#include "rpxprof/run.h"

typedef struct rpx_http_load_opts {
    double rate;                  /* requests per second, > 0 */
    int poisson;                  /* 0: constant arrivals */
    double duration_s;            /* the schedule: rate * duration_s requests (cfg->repeats) */
    long concurrency;             /* requests in flight at most */
    unsigned long long seed;      /* Poisson arrivals */
    double request_timeout_s;     /* a request not sent this long after its time is dropped */
} rpx_http_load_opts;

/* Called once per finished request (outside any timed span): easy is the
 * handle it ran on (curl_easy_getinfo works), res curl's result, status the
 * last status line's code, sent_ns, first_ns and end_ns the send, the first
 * response byte and the last (CLOCK_MONOTONIC; first_ns 0: none). ok: a latency sample. */
typedef void (*rpx_http_load_done_fn)(void *ud, CURL *easy, CURLcode res, long status,
                                      long long sent_ns, long long first_ns, long long end_ns,
                                      int ok);

typedef struct rpx_http_load rpx_http_load;

int rpx__http_load_create(const rpx_http_load_opts *o, rpx_http_load **out, rpx_error *err);
void rpx__http_load_destroy(rpx_http_load *l);
/* Runs the schedule (cfg->repeats requests; cfg->warmup is the caller's, sent
 * before) with handles duplicated from `tmpl`; fills cfg->samples, res
 * (measured, failed_calls, status, wall_ns) and the shared counters of cfg. */
int rpx__http_load_run(rpx_http_load *l, CURL *tmpl, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_http_load_done_fn done, void *ud,
                       rpx_error *err);
/* The http.load section (new reference). */
json_t *rpx__http_load_json(const rpx_http_load *l);

#endif
