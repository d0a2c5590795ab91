/* http_engines.h — the open-loop load's two engines, called by the load's
 * front (http_load.c) only; both report to the schedule (http_schedule.h) and
 * neither calls the other. Internal to librpxprof-http.so. */
#ifndef RPX_HTTP_ENGINES_H
#define RPX_HTTP_ENGINES_H

#include "http/http_schedule.h"

/* --- curl's multi interface (http_load_curl.c): https, HTTP/2, proxies ------- */

/* Runs the schedule begun on `l`, with handles duplicated from `tmpl`. */
int rpx__http_curl_run(rpx_http_sched *l, CURL *tmpl, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_error *err);

/* --- plain sockets and one epoll loop (http_load_sock.c): http:// ------------ */

typedef struct rpx_http_sock rpx_http_sock;
/* NULL and *reason set when plain sockets cannot send this request (https,
 * --http2, a proxy from the environment, credentials in the URL). */
int rpx__http_sock_create(const char *url, const char *method,
                          const struct curl_slist *headers, const char *body, size_t body_len,
                          int send_body, rpx_http_sock **out, const char **reason,
                          rpx_error *err);
void rpx__http_sock_destroy(rpx_http_sock *k);
/* Runs the schedule begun on `l` (its request and connect timeouts, --duration, --drain). */
int rpx__http_sock_run(rpx_http_sock *k, rpx_http_sched *l, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_error *err);
/* The address the last connect reached as "ip:port" ("[ip]:port" for IPv6): 0, or -1
 * when none did. */
int rpx__http_sock_remote(const rpx_http_sock *k, char *buf, size_t size);

#endif
