/* http_target.c — librpxprof-http.so, the HTTP API target: one libcurl easy handle per target, one
 * kept-alive connection, the request body read once at open, and the
 * report's "http" section (curl's phase timings, status counts, traffic).
 *
 * The timed call is curl_easy_perform and nothing else: the status comes
 * from a header callback and the response body is only counted. Everything
 * curl_easy_getinfo reports is read by the after-call hook, outside the timed
 * span. Secret header values (rpx_http_header_is_secret) and values taken
 * from the environment never reach a message or a report. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "common/user_file.h"
#include "rpxprof/error.h"
#include "rpxprof/latency.h"
#include "rpxprof/report.h"
#include "rpxprof/target.h"
#include "loader/kinds.h"
#include "loader/plugins.h"
#include "loader/http_bodies.h"
#include "http/http_load.h"
#include "http/http_stream.h"
#include "rpxprof/memory.h"
#include "measure/run.h"

enum { PH_LOOKUP, PH_CONNECT, PH_TLS, PH_TTFB, PH_TOTAL, N_PHASES };
static const char *const phase_names[N_PHASES] = {"name_lookup", "connect", "tls",
                                                  "time_to_first_byte", "total"};

typedef struct http_state {
    CURL *curl;
    struct curl_slist *headers;
    char *display_url;
    char method[32];
    int send_body;                /* 0 for GET and HEAD */
    rpx_bodies *bodies;           /* --body-template/--prompts, --nonce: the body of each request
                                     (made after the call before, outside the timed span) */
    char *body;
    size_t body_len;
    const char *body_source;      /* "inputs", "--body" or "none" */
    char *body_path;
    char *content_type;           /* as sent, NULL when no body */
    json_t *request_headers;      /* for the report: secret values redacted */
    double connect_timeout_s, total_timeout_s;
    int verify_tls, is_https;
    int http2;                    /* --http2: HTTP/2 asked for, and required over TLS */
    long h2_refused;              /* --rate, --http2: a version other than 2 answered */
    int h2c_live;                 /* --http2 over http: the last call left an h2 connection */
    char errbuf[CURL_ERROR_SIZE];
    /* written during a call */
    CURLcode last_res;
    long status;                  /* from the last status line received */
    long long t_start_ns;         /* CLOCK_MONOTONIC as the loop: curl_easy_perform called */
    long long t_first_ns;         /* the first byte of the response (its status line); 0: none */
    long long t_end_ns;           /* curl_easy_perform returned */
    rpx_http_stream *stream;      /* streamed responses: events and their times */
    rpx_http_load *load;          /* --rate: the open-loop schedule; NULL without */
    double load_bound_s;          /* --rate: --duration + --drain, which bound each warmup call */
    int allow_warmup_failures;    /* --allow-warmup-failures */
    char load_failure[256];       /* the last failed request's message under load */
    curl_off_t received;          /* response body bytes of all calls */
    /* written by the after-call hook */
    rpx_latency *phase[N_PHASES];
    json_t *status_counts;
    long failed_calls, failed_warmup_calls, connections;
    curl_off_t bytes_sent, bytes_received;
    long http_version;
    char remote[96];
    /* --check-outputs: the last response body, kept only when asked
     * (keep_outputs), and --output-field's value of it */
    int keep_body;
    char *out_body;
    size_t out_len, out_cap;
    char *output_field;
    char *out_value;              /* the field's value as compared (malloc'ed) */
    double out_numbers_one;
    rpx_tensor out_tensor;
} http_state;

/* --- curl result names ---------------------------------------------------- */

static const char *curl_code_name(CURLcode c)
{
    switch (c) {
    case CURLE_UNSUPPORTED_PROTOCOL: return "CURLE_UNSUPPORTED_PROTOCOL";
    case CURLE_URL_MALFORMAT: return "CURLE_URL_MALFORMAT";
    case CURLE_COULDNT_RESOLVE_PROXY: return "CURLE_COULDNT_RESOLVE_PROXY";
    case CURLE_COULDNT_RESOLVE_HOST: return "CURLE_COULDNT_RESOLVE_HOST";
    case CURLE_COULDNT_CONNECT: return "CURLE_COULDNT_CONNECT";
    case CURLE_WEIRD_SERVER_REPLY: return "CURLE_WEIRD_SERVER_REPLY";
    case CURLE_HTTP2: return "CURLE_HTTP2";
    case CURLE_PARTIAL_FILE: return "CURLE_PARTIAL_FILE";
    case CURLE_OUT_OF_MEMORY: return "CURLE_OUT_OF_MEMORY";
    case CURLE_OPERATION_TIMEDOUT: return "CURLE_OPERATION_TIMEDOUT";
    case CURLE_SSL_CONNECT_ERROR: return "CURLE_SSL_CONNECT_ERROR";
    case CURLE_PEER_FAILED_VERIFICATION: return "CURLE_PEER_FAILED_VERIFICATION";
    case CURLE_GOT_NOTHING: return "CURLE_GOT_NOTHING";
    case CURLE_SEND_ERROR: return "CURLE_SEND_ERROR";
    case CURLE_RECV_ERROR: return "CURLE_RECV_ERROR";
    case CURLE_SSL_CERTPROBLEM: return "CURLE_SSL_CERTPROBLEM";
    case CURLE_SSL_CIPHER: return "CURLE_SSL_CIPHER";
    case CURLE_SSL_CACERT_BADFILE: return "CURLE_SSL_CACERT_BADFILE";
    case CURLE_HTTP2_STREAM: return "CURLE_HTTP2_STREAM";
    case CURLE_HTTP3: return "CURLE_HTTP3";
    default: return NULL;
    }
}

static int is_ssl_error(CURLcode c)
{
    return c == CURLE_SSL_CONNECT_ERROR || c == CURLE_PEER_FAILED_VERIFICATION ||
           c == CURLE_SSL_CERTPROBLEM || c == CURLE_SSL_CIPHER || c == CURLE_SSL_CACERT_BADFILE ||
           c == CURLE_SSL_ENGINE_NOTFOUND || c == CURLE_SSL_ENGINE_SETFAILED ||
           c == CURLE_SSL_ENGINE_INITFAILED || c == CURLE_SSL_SHUTDOWN_FAILED ||
           c == CURLE_SSL_CRL_BADFILE || c == CURLE_SSL_ISSUER_ERROR ||
           c == CURLE_SSL_PINNEDPUBKEYNOTMATCH || c == CURLE_SSL_INVALIDCERTSTATUS ||
           c == CURLE_USE_SSL_FAILED;
}

/* curl's answer to a response header larger than it takes (a header line over
 * CURL_MAX_HTTP_HEADER, 100 KiB, or all of them over its total): CURLE_OUT_OF_MEMORY before
 * curl 8.6, CURLE_TOO_LARGE (100) since, after the status line came in. Not this machine's
 * memory, so it is named for what it is. */
static int header_too_large(CURLcode c, long status)
{
    return status > 0 && (c == CURLE_OUT_OF_MEMORY || (int)c == 100);
}

static const char header_too_large_text[] =
    "the response's headers are larger than curl accepts (a header line over 100 KiB, "
    "CURL_MAX_HTTP_HEADER, or all of them over curl's total); curl calls it %s, which is the "
    "server's header, not this machine's memory";

/* The status_counts key of a transport error; os_errno from CURLINFO_OS_ERRNO; status: the
 * status line's code received before it (0: none). */
static void transport_key(CURLcode c, long os_errno, long status, char *key, size_t size)
{
    const char *k = NULL;
    if (header_too_large(c, status)) k = "header_too_large";
    else if (c == CURLE_OPERATION_TIMEDOUT) k = "timeout";
    else if (c == CURLE_COULDNT_CONNECT)
        k = os_errno == ECONNREFUSED ? "connection_refused" : "couldnt_connect";
    else if (c == CURLE_COULDNT_RESOLVE_HOST) k = "couldnt_resolve_host";
    else if (is_ssl_error(c)) k = "ssl_error";
    else if (c == CURLE_GOT_NOTHING) k = "empty_reply";
    else if (c == CURLE_SEND_ERROR) k = "send_error";
    else if (c == CURLE_RECV_ERROR) k = "recv_error";
    if (k) snprintf(key, size, "%s", k);
    else snprintf(key, size, "curl_error_%d", (int)c);
}

/* --- the call and its hooks ----------------------------------------------- */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    http_state *s = ud;
    s->received += (curl_off_t)(size * n);
    rpx__stream_data(s->stream, data, size * n, now_ns());
    if (s->keep_body) { /* --check-outputs only */
        size_t len = size * n;
        if (s->out_len + len + 1 > s->out_cap) {
            size_t cap = (s->out_len + len + 1) * 2;
            char *b = realloc(s->out_body, cap);
            if (!b) return 0; /* curl fails the call: CURLE_WRITE_ERROR */
            s->out_body = b;
            s->out_cap = cap;
        }
        memcpy(s->out_body + s->out_len, data, len);
        s->out_len += len;
    }
    return size * n;
}

/* Keeps the code of the last status line ("HTTP/1.1 200 OK", "HTTP/2 500"). */
static size_t on_header(char *line, size_t size, size_t n, void *ud)
{
    size_t len = size * n, i = 5;
    http_state *s = ud;
    /* curl hands over whole header lines: the status line's arrival is the first byte's */
    if (!s->t_first_ns) s->t_first_ns = now_ns();
    rpx__stream_header(s->stream, line, len);
    if (len > 5 && memcmp(line, "HTTP/", 5) == 0) {
        while (i < len && line[i] != ' ') i++;
        if (i + 3 < len && isdigit((unsigned char)line[i + 1]) &&
            isdigit((unsigned char)line[i + 2]) && isdigit((unsigned char)line[i + 3]))
            s->status =
                (line[i + 1] - '0') * 100 + (line[i + 2] - '0') * 10 + (line[i + 3] - '0');
    }
    return len;
}

static void call_failure(const http_state *s, CURLcode res, rpx_error *err)
{
    const char *name;
    if (res == CURLE_OK) {
        rpx_error_set(err, RPX_EMODEL, "HTTP %ld from %s", s->status, s->display_url);
        return;
    }
    name = curl_code_name(res);
    if (header_too_large(res, s->status)) {
        char what[32];
        snprintf(what, sizeof what, "%s", name ? name : "curl error 100");
        rpx_error_set(err, RPX_EMODEL, header_too_large_text, what);
        return;
    }
    if (name)
        rpx_error_set(err, RPX_EMODEL, "curl: %s (%s)",
                      s->errbuf[0] ? s->errbuf : curl_easy_strerror(res), name);
    else
        rpx_error_set(err, RPX_EMODEL, "curl: %s (curl error %d)",
                      s->errbuf[0] ? s->errbuf : curl_easy_strerror(res), (int)res);
}

/* --http2 over plain http on libcurl before 8.0: a connection made with prior knowledge breaks
 * when it is reused with prior knowledge (curl stacks a second HTTP/2 layer on it; curl issue
 * 10634, fixed in 8.0.0). So a call asks for prior knowledge only on a fresh connection, and on
 * the live h2 connection for CURL_HTTP_VERSION_2_0, which reuses it as it is. A call after a
 * failed one (its connection may be gone) opens a fresh connection. Between calls the handle
 * stays as configured (prior knowledge, no fresh connect), which the load engine copies. */
static void h2c_reuse(http_state *s, int before, CURLcode res)
{
#if LIBCURL_VERSION_NUM < 0x080000
    long v = 0;
    if (!s->http2 || s->is_https) return;
    if (before) {
        if (s->h2c_live)
            curl_easy_setopt(s->curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_0);
        else
            curl_easy_setopt(s->curl, CURLOPT_FRESH_CONNECT, 1L);
        return;
    }
    curl_easy_setopt(s->curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(s->curl, CURLOPT_FRESH_CONNECT, 0L);
    curl_easy_getinfo(s->curl, CURLINFO_HTTP_VERSION, &v);
    s->h2c_live = res == CURLE_OK && v == CURL_HTTP_VERSION_2_0;
#else
    (void)s, (void)before, (void)res;
#endif
}

/* --http2 and an answer in version v (CURLINFO_HTTP_VERSION), not HTTP/2: a stop, not a
 * counted failure, since no call will do better. Also for the answers under --rate. */
static int h2_refusal(const http_state *s, long v, rpx_error *err)
{
    const char *name = v == CURL_HTTP_VERSION_1_0 ? "1.0" : v == CURL_HTTP_VERSION_1_1 ? "1.1"
                     : v == CURL_HTTP_VERSION_3 ? "3" : "?";
    return rpx_error_set(err, RPX_EUNSUPPORTED,
                         "--http2: %s answered in HTTP/%s, not HTTP/2 (%s); drop --http2 to "
                         "measure HTTP/%s",
                         s->display_url, name,
                         s->is_https ? "the server did not agree to h2 in the TLS handshake's "
                                       "ALPN"
                                     : "the server did not take up h2c",
                         name);
}

static void http_keep_outputs(void *state, int keep)
{
    ((http_state *)state)->keep_body = keep;
}

/* --check-outputs: the last response body ("body", uint8), or with
 * --output-field its value there: a number as a float64 scalar, an array of
 * numbers as float64[n], a string as its UTF-8 bytes, anything else as its
 * JSON text (keys sorted). Outside the timed span. */
static int http_outputs(void *state, rpx_outputs *outputs, rpx_error *err)
{
    http_state *s = state;
    rpx_tensor *t = &s->out_tensor;
    json_t *doc, *v;
    json_error_t je;
    char path[512], *part, *save = NULL;
    int shown;
    memset(t, 0, sizeof *t);
    outputs->count = 1;
    outputs->tensors = t;
    free(s->out_value);
    s->out_value = NULL;
    if (!s->output_field) {
        t->name = "body";
        t->dtype = RPX_DTYPE_UINT8;
        t->ndim = 1;
        t->shape[0] = (int64_t)s->out_len;
        t->count = t->nbytes = s->out_len;
        t->data = s->out_body;
        return 0;
    }
    t->name = s->output_field;
    shown = s->out_len < 60 ? (int)s->out_len : 60; /* the body has no NUL of its own */
    doc = json_loadb(s->out_body ? s->out_body : "", s->out_len, JSON_DECODE_ANY, &je);
    if (!doc)
        return rpx_error_set(err, RPX_EMODEL,
                             "--output-field %s: the response body is not JSON (%s; it starts "
                             "'%.*s')",
                             s->output_field, je.text, shown, s->out_len ? s->out_body : "");
    snprintf(path, sizeof path, "%s", s->output_field);
    v = doc;
    for (part = strtok_r(path, ".", &save); part && v; part = strtok_r(NULL, ".", &save)) {
        char *end;
        long idx = strtol(part, &end, 10);
        v = json_is_array(v) && *end == '\0' && end != part ? json_array_get(v, (size_t)idx)
                                                             : json_object_get(v, part);
    }
    if (!v) {
        json_decref(doc);
        return rpx_error_set(err, RPX_EMODEL,
                             "--output-field %s: the response has no such field (it starts "
                             "'%.*s')",
                             s->output_field, shown, s->out_len ? s->out_body : "");
    }
    if (json_is_number(v)) {
        s->out_value = malloc(sizeof(double));
        if (s->out_value) *(double *)(void *)s->out_value = json_number_value(v);
        t->dtype = RPX_DTYPE_FLOAT64;
        t->count = 1;
        t->nbytes = sizeof(double);
    } else if (json_is_array(v) && json_array_size(v) > 0 &&
               json_is_number(json_array_get(v, 0))) {
        size_t i, n = json_array_size(v);
        json_t *x;
        s->out_value = malloc(n * sizeof(double));
        if (s->out_value)
            json_array_foreach(v, i, x) {
                if (!json_is_number(x)) {
                    json_decref(doc);
                    return rpx_error_set(err, RPX_EMODEL,
                                         "--output-field %s: element %zu is not a number",
                                         s->output_field, i);
                }
                ((double *)(void *)s->out_value)[i] = json_number_value(x);
            }
        t->dtype = RPX_DTYPE_FLOAT64;
        t->ndim = 1;
        t->shape[0] = (int64_t)n;
        t->count = n;
        t->nbytes = n * sizeof(double);
    } else {
        s->out_value = json_is_string(v) ? strdup(json_string_value(v))
                                         : json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS |
                                                             JSON_ENCODE_ANY);
        t->dtype = RPX_DTYPE_UINT8;
        t->ndim = 1;
        t->count = t->nbytes = s->out_value ? strlen(s->out_value) : 0;
        t->shape[0] = (int64_t)t->count;
    }
    json_decref(doc);
    if (!s->out_value) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    t->data = s->out_value;
    return 0;
}

static int http_call(void *state, const rpx_inputs *inputs, rpx_error *err)
{
    http_state *s = state;
    CURLcode res;
    (void)inputs; /* the body was read from the file at open */
    if (s->keep_body) s->out_len = 0;
    s->errbuf[0] = '\0';
    s->status = 0;
    s->t_first_ns = 0;
    h2c_reuse(s, 1, CURLE_OK);
    s->t_start_ns = now_ns();
    rpx__stream_begin(s->stream, s->t_start_ns);
    res = curl_easy_perform(s->curl);
    s->t_end_ns = now_ns();
    s->last_res = res;
    h2c_reuse(s, 0, res);
    if (s->http2 && res == CURLE_OK) {
        long v = 0;
        curl_easy_getinfo(s->curl, CURLINFO_HTTP_VERSION, &v);
        if (v != CURL_HTTP_VERSION_2_0) return h2_refusal(s, v, err);
    }
    if (res == CURLE_OK && s->status >= 200 && s->status <= 299) return 0;
    call_failure(s, res, err);
    return RPX_CALL_COUNTED_FAILURE;
}

static curl_off_t info_off(CURL *c, CURLINFO what)
{
    curl_off_t v = 0;
    return curl_easy_getinfo(c, what, &v) == CURLE_OK ? v : 0;
}

static long info_long(CURL *c, CURLINFO what)
{
    long v = 0;
    return curl_easy_getinfo(c, what, &v) == CURLE_OK ? v : 0;
}

static void count_status(http_state *s, const char *key)
{
    json_t *v = json_object_get(s->status_counts, key);
    if (v) json_integer_set(v, json_integer_value(v) + 1);
    else json_object_set_new(s->status_counts, key, json_integer(1));
}

/* A timed request's status count and, when it succeeded, rpxprof's own phases on
 * CLOCK_MONOTONIC from its send: to the first response byte (not curl's STARTTRANSFER: for
 * a POST some versions take it when the upload begins) and to its end, on the same clock so
 * that ttfb <= total always holds. 0: it succeeded. */
static int record_timed(http_state *s, const char *key, int rc, long long start_ns,
                        long long first_ns, long long end_ns)
{
    count_status(s, key);
    if (rc != 0) {
        s->failed_calls++;
        return -1;
    }
    if (first_ns > start_ns) rpx_latency_add_ns(s->phase[PH_TTFB], (double)(first_ns - start_ns));
    rpx_latency_add_ns(s->phase[PH_TOTAL], (double)(end_ns - start_ns));
    return 0;
}

/* One finished request's counts and phases (outside any timed span): c the
 * handle it ran on, start_ns and first_ns its send and its first response byte. */
static void record(http_state *s, CURL *c, CURLcode res, long status, long long start_ns,
                   long long first_ns, long long end_ns, int timed, int rc)
{
    long version = info_long(c, CURLINFO_HTTP_VERSION);
    char *ip = NULL;
    char key[32];

    s->connections += info_long(c, CURLINFO_NUM_CONNECTS);
    if (version) s->http_version = version;
    if (s->http2 && version && version != CURL_HTTP_VERSION_2_0) s->h2_refused = version;
    if (curl_easy_getinfo(c, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip && *ip) {
        long port = info_long(c, CURLINFO_PRIMARY_PORT);
        snprintf(s->remote, sizeof s->remote, strchr(ip, ':') ? "[%s]:%ld" : "%s:%ld", ip,
                 port);
    }
    if (!timed) {
        if (rc != 0) s->failed_warmup_calls++;
        return;
    }
    s->bytes_sent += info_off(c, CURLINFO_SIZE_UPLOAD_T);
    s->bytes_received += info_off(c, CURLINFO_SIZE_DOWNLOAD_T);
    if (res != CURLE_OK)
        transport_key(res, info_long(c, CURLINFO_OS_ERRNO), status, key, sizeof key);
    else
        snprintf(key, sizeof key, "%ld", status);
    if (record_timed(s, key, rc, start_ns, first_ns, end_ns) != 0) return;
    /* curl's times are cumulative from the start of the request, in µs */
    rpx_latency_add_ns(s->phase[PH_LOOKUP], 1e3 * (double)info_off(c, CURLINFO_NAMELOOKUP_TIME_T));
    rpx_latency_add_ns(s->phase[PH_CONNECT], 1e3 * (double)info_off(c, CURLINFO_CONNECT_TIME_T));
    /* curl reports appconnect 0 for plain http: no TLS, so no sample (null, not 0) */
    if (s->is_https)
        rpx_latency_add_ns(s->phase[PH_TLS],
                           1e3 * (double)info_off(c, CURLINFO_APPCONNECT_TIME_T));
}

static void http_after_call(void *state, int timed, int rc)
{
    http_state *s = state;
    rpx__stream_end(s->stream, timed, rc == 0);
    record(s, s->curl, s->last_res, s->status, s->t_start_ns, s->t_first_ns, s->t_end_ns, timed,
           rc);
    if (s->bodies) { /* the next request's body, outside the timed span */
        size_t len;
        char *b = rpx__bodies_next(s->bodies, &len);
        if (b) {
            free(s->body);
            s->body = b;
            s->body_len = len;
            curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, s->body);
            curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s->body_len);
        }
    }
}

/* --- open-loop load (--rate): the whole loop, run by http_load.c ------------------ */

/* A request the sockets engine ran (no curl handle): its own counts; name
 * lookup happened once before the schedule and TLS never, so no samples. */
static void record_sock(http_state *s, const rpx_http_load_req *r, int rc)
{
    char key[32];
    if (r->connect_ns >= 0) {
        s->connections++;
        rpx__http_load_remote(s->load, s->remote, sizeof s->remote); /* the address it reached */
    }
    if (r->http_version) s->http_version = r->http_version;
    s->bytes_sent += r->bytes_sent;
    s->bytes_received += r->bytes_received;
    if (r->error_key) snprintf(key, sizeof key, "%s", r->error_key);
    else snprintf(key, sizeof key, "%ld", r->status);
    if (record_timed(s, key, rc, r->sent_ns, r->first_ns, r->end_ns) != 0) return;
    /* connect: only for the requests that opened a connection (as curl's, which is 0 on a
     * reused one, but without the zeros: a reused connection has no connect to time) */
    if (r->connect_ns >= 0) rpx_latency_add_ns(s->phase[PH_CONNECT], (double)r->connect_ns);
}

static void load_done(void *ud, const rpx_http_load_req *r)
{
    http_state *s = ud;
    int rc = r->ok ? 0 : RPX_CALL_COUNTED_FAILURE;
    if (r->capture) rpx__capture_end(s->stream, r->capture, 1, r->ok);
    if (r->easy)
        record(s, r->easy, r->curl_res, r->status, r->sent_ns, r->first_ns, r->end_ns, 1, rc);
    else
        record_sock(s, r, rc);
    if (r->ok) return;
    if (r->cut)
        snprintf(s->load_failure, sizeof s->load_failure, "%s: %s (timeout)", s->display_url,
                 r->error_text);
    else if (r->error_key)
        snprintf(s->load_failure, sizeof s->load_failure, "%s: %s (%s)", s->display_url,
                 r->error_text ? r->error_text : r->error_key, r->error_key);
    else if (!r->easy || r->curl_res == CURLE_OK)
        snprintf(s->load_failure, sizeof s->load_failure, "HTTP %ld from %s", r->status,
                 s->display_url);
    else if (header_too_large(r->curl_res, r->status))
        snprintf(s->load_failure, sizeof s->load_failure, header_too_large_text,
                 curl_code_name(r->curl_res) ? curl_code_name(r->curl_res) : "curl error 100");
    else
        snprintf(s->load_failure, sizeof s->load_failure, "curl: %s (%s)",
                 curl_easy_strerror(r->curl_res),
                 curl_code_name(r->curl_res) ? curl_code_name(r->curl_res) : "curl error");
}

static long timeout_ms(double *seconds, double fallback);

/* --rate: a warmup call waits at most --duration + --drain (or --request-timeout, if shorter) */
static long load_warmup_timeout_ms(const http_state *s)
{
    double ms = s->load_bound_s * 1000.0;
    return ms < 1.0 ? 1L : ms > 1e12 ? (long)1e12 : (long)(ms + 0.5);
}

/* The handle's --request-timeout again: the load's requests are copies of it. */
static void restore_timeout(http_state *s)
{
    double t = s->total_timeout_s;
    curl_easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, timeout_ms(&t, 60.0));
}

static int http_load_run(void *state, const rpx_run_config *cfg, const rpx_inputs *inputs,
                         rpx_run_result *res, rpx_error *err)
{
    http_state *s = state;
    long i;
    long long start;
    int rc, warmup_failed = 0;
    memset(res, 0, sizeof *res);
    res->failed_call = -1;
    rpx_memory_peaks_init(&res->memory);
    if (!cfg->samples)
        return rpx_error_set(err, RPX_EINVAL, "open-loop load: no sample buffer");
    res->samples_ns = cfg->samples;
    start = now_ns();
    /* warmup: one after another, as without --rate; each call bounded by --duration +
     * --drain as well (a request slower than that could not be answered within the run) */
    if (cfg->warmup > 0 && s->load_bound_s < s->total_timeout_s)
        curl_easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, load_warmup_timeout_ms(s));
    for (i = 0; i < cfg->warmup; i++) {
        rpx_error merr = {0};
        if (cfg->stop && *cfg->stop) break;
        rc = http_call(s, inputs, &merr);
        http_after_call(s, 0, rc);
        if (cfg->progress_ns) __atomic_store_n(cfg->progress_ns, s->t_end_ns, __ATOMIC_RELEASE);
        if (rc != 0 && rc != RPX_CALL_COUNTED_FAILURE) { /* --http2 refused: a stop */
            restore_timeout(s);
            return rpx_error_set(err, merr.code, "%s", merr.message);
        }
        if (rc != 0) {
            res->failed_warmup_calls++;
            snprintf(res->last_failure, sizeof res->last_failure, "%.250s", merr.message);
            if (cfg->failed_warmup_done)
                __atomic_store_n(cfg->failed_warmup_done, res->failed_warmup_calls,
                                 __ATOMIC_RELEASE);
            if (!s->allow_warmup_failures) {
                res->status = RPX_RUN_TOO_MANY_FAILURES;
                res->failed_call = i;
                res->failed_in_warmup = 1;
                warmup_failed = 1;
                break;
            }
            if (cfg->max_failures > 0 && res->failed_warmup_calls >= cfg->max_failures) {
                res->status = RPX_RUN_TOO_MANY_FAILURES;
                break;
            }
        }
        res->warmup_done = i + 1;
        if (cfg->calls_done) __atomic_store_n(cfg->calls_done, i + 1, __ATOMIC_RELEASE);
    }
    restore_timeout(s);
    if (res->status == RPX_RUN_COMPLETE && !(cfg->stop && *cfg->stop)) {
        if (cfg->peaks_reset) cfg->peaks_reset(cfg->peaks_ctx);
        s->load_failure[0] = '\0';
        rc = rpx__http_load_run(s->load, s->curl, cfg, res, load_done, s, err);
        if (rc != 0) return rc;
        if (s->h2_refused) return h2_refusal(s, s->h2_refused, err);
        if (s->load_failure[0])
            snprintf(res->last_failure, sizeof res->last_failure, "%.250s", s->load_failure);
    } else if (res->status == RPX_RUN_COMPLETE) {
        res->status = RPX_RUN_INTERRUPTED;
    }
    if (res->status != RPX_RUN_COMPLETE && res->warmup_done < cfg->warmup)
        rpx__http_load_plan(s->load, cfg->repeats); /* scheduled, none sent */
    res->wall_ns = now_ns() - start;
    if (warmup_failed)
        rpx_error_set(err, RPX_EMODEL,
                      "--model %s: warmup call %ld of %ld failed: %s; a failed warmup call ends "
                      "the run (--allow-warmup-failures counts it towards --max-failures "
                      "instead)",
                      s->display_url, res->failed_call + 1, cfg->warmup, res->last_failure);
    else if (res->status == RPX_RUN_TOO_MANY_FAILURES)
        rpx_error_set(err, RPX_EMODEL, "--model %s: %ld calls failed (--max-failures %ld); the "
                      "last: %s", s->display_url, res->failed_calls + res->failed_warmup_calls,
                      cfg->max_failures, res->last_failure);
    else if (res->status == RPX_RUN_INTERRUPTED)
        rpx_error_set(err, RPX_EINTERRUPTED, "interrupted after %zu timed calls", res->measured);
    return 0;
}

static int http_setup(void **state, const rpx_inputs *inputs, const rpx_run_info *info,
                      rpx_error *err)
{
    http_state *s = *state;
    int i;
    (void)inputs;
    if (!info || info->measured_calls <= 0) return 0;
    for (i = 0; i < N_PHASES; i++)
        if (rpx_latency_reserve(s->phase[i], (size_t)info->measured_calls) != 0)
            return rpx_error_set(err, RPX_ENOMEM, "out of memory for %ld phase timings",
                                 info->measured_calls);
    return 0;
}

/* --- the report section ----------------------------------------------------- */

static json_t *string_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *http_section(void *state)
{
    http_state *s = state;
    json_t *o = json_object(), *body, *phases, *nm;
    const char *version = NULL;
    int i;
    if (!o) return NULL;
    json_object_set_new(o, "url", json_string(s->display_url));
    json_object_set_new(o, "method", json_string(s->method));
    if (s->send_body) {
        body = json_object();
        json_object_set_new(body, "source", json_string(s->body_source));
        json_object_set_new(body, "path", string_or_null(s->body_path));
        json_object_set_new(body, "bytes", json_integer((json_int_t)s->body_len));
        json_object_set_new(body, "content_type", string_or_null(s->content_type));
        json_object_set_new(o, "body", body);
        if (s->bodies) json_object_set_new(o, "bodies", rpx__bodies_json(s->bodies));
    } else {
        json_object_set_new(o, "body", json_null());
    }
    json_object_set(o, "request_headers", s->request_headers);
    json_object_set_new(o, "tls_verification", json_boolean(s->verify_tls));
    json_object_set_new(o, "connect_timeout_s", json_real(s->connect_timeout_s));
    json_object_set_new(o, "total_timeout_s", json_real(s->total_timeout_s));
    phases = json_object();
    for (i = 0; i < N_PHASES; i++)
        json_object_set_new(phases, phase_names[i], rpx_latency_json(s->phase[i]));
    json_object_set_new(o, "phases_ms", phases);
    json_object_set_new(
        o, "phases_note",
        json_string(s->load && strcmp(rpx__http_load_engine(s->load), "sockets") == 0
                        ? "open-loop load on plain sockets (http.load.engine): over the "
                          "successful timed requests, from each request's actual send on "
                          "CLOCK_MONOTONIC; name_lookup is null (the name is resolved once, "
                          "before the schedule) and tls null (plain http); connect is timed "
                          "only for the requests that opened a connection; "
                          "time_to_first_byte to the first response byte read, total to the "
                          "response's last byte"
                        : "cumulative times from the start of each request, over the "
                          "successful timed calls: name_lookup, connect and tls are curl's; "
                          "connect (and tls) are 0 on a reused connection; tls is null for "
                          "plain http (curl reports 0 when there is no TLS handshake); "
                          "time_to_first_byte and total are rpxprof's own, CLOCK_MONOTONIC "
                          "from the call into curl to the arrival of the response's status "
                          "line and to the end of the response"));
    json_object_set(o, "status_counts", s->status_counts);
    json_object_set_new(o, "failed_calls", json_integer(s->failed_calls));
    json_object_set_new(o, "failed_warmup_calls", json_integer(s->failed_warmup_calls));
    json_object_set_new(o, "bytes_sent", json_integer((json_int_t)s->bytes_sent));
    json_object_set_new(o, "bytes_received", json_integer((json_int_t)s->bytes_received));
    json_object_set_new(o, "request_body_bytes",
                        json_integer(s->send_body ? (json_int_t)s->body_len : 0));
    switch (s->http_version) {
    case CURL_HTTP_VERSION_1_0: version = "1.0"; break;
    case CURL_HTTP_VERSION_1_1: version = "1.1"; break;
    case CURL_HTTP_VERSION_2_0: version = "2"; break;
    case CURL_HTTP_VERSION_3: version = "3"; break;
    default: break;
    }
    json_object_set_new(o, "http_version", string_or_null(version));
    json_object_set_new(o, "remote_address", string_or_null(s->remote[0] ? s->remote : NULL));
    json_object_set_new(o, "connections_opened", json_integer(s->connections));
    json_object_set_new(o, "streaming", rpx__stream_json(s->stream));
    json_object_set_new(o, "load", s->load ? rpx__http_load_json(s->load) : json_null());
    nm = json_object();
    json_object_set_new(nm, "gpu", json_string("remote API"));
    json_object_set_new(nm, "cost", json_string("remote API"));
    json_object_set_new(nm, "roofline", json_string("remote API"));
    json_object_set_new(nm, "device_memory", json_string("remote API"));
    json_object_set_new(o, "not_measured", nm);
    return o;
}

static void http_unload(void *state)
{
    http_state *s = state;
    int i;
    if (!s) return;
    if (s->curl) curl_easy_cleanup(s->curl);
    rpx__stream_destroy(s->stream);
    rpx__http_load_destroy(s->load);
    rpx__bodies_free(s->bodies);
    curl_slist_free_all(s->headers);
    free(s->display_url);
    free(s->body);
    free(s->body_path);
    free(s->content_type);
    free(s->out_body);
    free(s->out_value);
    free(s->output_field);
    json_decref(s->request_headers);
    json_decref(s->status_counts);
    for (i = 0; i < N_PHASES; i++) rpx_latency_destroy(s->phase[i]);
    free(s);
}

/* --- open: options, headers, body --------------------------------------------- */

static int read_body(http_state *s, const char *option, const char *path, rpx_error *err)
{
    FILE *f;
    char label[PATH_MAX + 32];
    long size;
    int failed, e;
    snprintf(label, sizeof label, "%s %s", option, path);
    if ((e = rpx__user_file_bounded(path, label, RPX_USER_FILE_MAX_BYTES, err)) != 0)
        return e; /* a FIFO would block, a device or a huge file would grow us without end */
    f = fopen(path, "rb");
    if (!f)
        return rpx_error_set(err, RPX_ENOTFOUND,
                             "%s %s: cannot open the request body (%s); give an existing, "
                             "readable file",
                             option, path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || size == LONG_MAX ||
        fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return rpx_error_set(err, RPX_EIO,
                             "%s %s: cannot read the request body (not a regular file?); "
                             "give a regular file",
                             option, path);
    }
    s->body = malloc((size_t)size + 1);
    if (!s->body) {
        fclose(f);
        return rpx_error_set(err, RPX_ENOMEM, "%s %s: out of memory for %ld bytes", option,
                             path, size);
    }
    s->body_len = fread(s->body, 1, (size_t)size, f);
    failed = ferror(f);
    e = errno;
    fclose(f);
    if (failed || s->body_len != (size_t)size)
        return rpx_error_set(err, RPX_EIO, "%s %s: cannot read the request body (%s)", option,
                             path, failed ? strerror(e) : "the file changed while reading");
    s->body_path = strdup(path);
    return s->body_path ? 0 : rpx_error_set(err, RPX_ENOMEM, "out of memory");
}

static int valid_method(const char *m)
{
    size_t i, n = strlen(m);
    if (n == 0 || n >= 32) return 0;
    for (i = 0; i < n; i++)
        if (m[i] < 'A' || m[i] > 'Z') return 0;
    return 1;
}

static int token_char(unsigned char c)
{
    return c > 32 && c < 127 && !strchr("\"(),/:;<=>?@[\\]{}", c);
}

/* `value` with each ${VAR} replaced by the environment's VAR; malloc'ed in *out.
 * Messages name the header and the variable, never a value. */
static int expand_value(const char *name, const char *value, char **out, rpx_error *err)
{
    size_t cap = strlen(value) + 1, len = 0;
    char *buf = malloc(cap);
    const char *p = value;
    if (!buf) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    while (*p) {
        const char *add = p, *env;
        size_t n = 1;
        if (p[0] == '$' && p[1] == '{') {
            const char *end = strchr(p + 2, '}');
            size_t vlen = end ? (size_t)(end - p - 2) : 0;
            char var[256];
            size_t i;
            int ok = end && vlen > 0 && vlen < sizeof var && !isdigit((unsigned char)p[2]);
            for (i = 0; ok && i < vlen; i++)
                ok = isalnum((unsigned char)p[2 + i]) || p[2 + i] == '_';
            if (!ok) {
                free(buf);
                return rpx_error_set(err, RPX_EINVAL,
                                     "--header %s: the value has a '${' without a valid "
                                     "${VAR} (letters, digits, '_')",
                                     name);
            }
            memcpy(var, p + 2, vlen);
            var[vlen] = '\0';
            env = getenv(var);
            if (!env) {
                free(buf);
                return rpx_error_set(err, RPX_EINVAL,
                                     "--header %s: ${%s} is not set in the environment; "
                                     "export it",
                                     name, var);
            }
            add = env;
            n = strlen(env);
            p = end + 1;
        } else {
            p++;
        }
        if (len + n + 1 > cap) {
            char *bigger;
            cap = (len + n + 1) * 2;
            bigger = realloc(buf, cap);
            if (!bigger) {
                free(buf);
                return rpx_error_set(err, RPX_ENOMEM, "out of memory");
            }
            buf = bigger;
        }
        memcpy(buf + len, add, n);
        len += n;
    }
    buf[len] = '\0';
    *out = buf;
    return 0;
}

static int add_line(http_state *s, const char *line)
{
    struct curl_slist *l = curl_slist_append(s->headers, line);
    if (!l) return -1;
    s->headers = l;
    return 0;
}

/* Headers whose values are reported: standard ones that describe the content
 * or the client. A value of any other header may be a credential under a name
 * no list of secret names foresees (X-Access, X-Pwd, ...), so it is redacted. */
static int header_is_reportable(const char *name)
{
    static const char *const safe[] = {"Accept", "Accept-Encoding", "Accept-Language",
                                       "Cache-Control", "Connection", "Content-Encoding",
                                       "Content-Language", "Content-Type", "Expect",
                                       "Pragma", "TE", "User-Agent"};
    size_t i;
    if (rpx_http_header_is_secret(name)) return 0;
    for (i = 0; i < sizeof safe / sizeof safe[0]; i++)
        if (strcasecmp(name, safe[i]) == 0) return 1;
    return 0;
}

/* One "Name: value" of --header into the curl list and the report's list. */
static int add_header(http_state *s, size_t index, const char *text, int *has_ctype,
                      int *has_expect, rpx_error *err)
{
    const char *colon = strchr(text, ':'), *value;
    char name[128], *expanded = NULL, *line;
    size_t nlen, i;
    json_t *h;
    int rc;
    if (!colon)
        return rpx_error_set(err, RPX_EINVAL,
                             "--header number %zu has no ':'; write it as 'Name: value'",
                             index + 1);
    nlen = (size_t)(colon - text);
    while (nlen > 0 && (text[nlen - 1] == ' ' || text[nlen - 1] == '\t')) nlen--;
    for (i = 0; i < nlen && token_char((unsigned char)text[i]); i++) continue;
    if (nlen == 0 || i < nlen || nlen >= sizeof name)
        return rpx_error_set(err, RPX_EINVAL,
                             "--header number %zu: the name before ':' must be a non-empty "
                             "HTTP token (letters, digits, '-', no spaces)",
                             index + 1);
    memcpy(name, text, nlen);
    name[nlen] = '\0';
    value = colon + 1;
    while (*value == ' ' || *value == '\t') value++;
    if ((rc = expand_value(name, value, &expanded, err)) != 0) return rc;
    if (strpbrk(expanded, "\r\n")) {
        free(expanded);
        return rpx_error_set(err, RPX_EINVAL,
                             "--header %s: the value (after ${VAR} expansion) contains a line "
                             "break; headers are one line",
                             name);
    }
    line = malloc(nlen + strlen(expanded) + 3);
    if (!line) {
        free(expanded);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    /* curl drops "Name:" (empty value) from the request; "Name;" sends it empty */
    if (*expanded) sprintf(line, "%s: %s", name, expanded);
    else sprintf(line, "%s;", name);
    rc = add_line(s, line);
    free(line);
    free(expanded);
    if (rc != 0) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (strcasecmp(name, "Content-Type") == 0) *has_ctype = 1;
    if (strcasecmp(name, "Expect") == 0) *has_expect = 1;
    /* reported: the value as the user wrote it (never what the environment gave), and
     * only for headers known to carry no secret; every other value is redacted */
    h = json_object();
    json_object_set_new(h, "name", json_string(name));
    json_object_set_new(h, "value",
                        header_is_reportable(name) ? json_string(value) : json_string("REDACTED"));
    json_array_append_new(s->request_headers, h);
    return 0;
}

static long timeout_ms(double *seconds, double fallback)
{
    if (!(*seconds > 0)) *seconds = fallback;
    if (*seconds > 1e9) *seconds = 1e9;
    return *seconds * 1000.0 < 1.0 ? 1L : (long)(*seconds * 1000.0 + 0.5);
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int configure(rpx_target *t, http_state *s, const rpx_target_options *opt,
                     rpx_error *err)
{
    CURL *c = s->curl;
    int has_ctype = 0, has_expect = 0, rc = 0;
    size_t i;
    CURLUcode uc;
    CURLU *u = curl_url();
    if (!u) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    uc = curl_url_set(u, CURLUPART_URL, t->spec, 0);
    curl_url_cleanup(u);
    if (uc != CURLUE_OK)
        return rpx_error_set(err, RPX_EINVAL, "--model %s: not a valid URL (%s)",
                             t->display_spec, curl_url_strerror(uc));

    snprintf(s->method, sizeof s->method, "%s", opt->method ? opt->method : "POST");
    if (!valid_method(s->method) || (opt->method && strlen(opt->method) >= sizeof s->method))
        return rpx_error_set(err, RPX_EINVAL,
                             "--method %.40s: expected an uppercase HTTP method such as POST, "
                             "GET, HEAD, PUT, PATCH or DELETE",
                             opt->method);
    s->send_body = strcmp(s->method, "GET") != 0 && strcmp(s->method, "HEAD") != 0;
    if (!s->send_body && opt->body_path)
        return rpx_error_set(err, RPX_EINVAL,
                             "--body %s: --method %s sends no body; drop --body or use "
                             "another method (POST, PUT, ...)",
                             opt->body_path, s->method);

    for (i = 0; i < opt->n_headers; i++)
        if ((rc = add_header(s, i, opt->headers[i], &has_ctype, &has_expect, err)) != 0)
            return rc;

    if (!s->send_body && (opt->body_template || opt->nonce_field))
        return rpx_error_set(err, RPX_EINVAL, "%s: --method %s sends no body; drop it or use "
                             "another method (POST, PUT, ...)",
                             opt->body_template ? "--body-template" : "--nonce", s->method);
    if (s->send_body) {
        const char *ctype;
        if (opt->body_template) {
            s->body_source = "--body-template";
            ctype = "application/json";
            if (!(s->body_path = strdup(opt->body_template)))
                return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        } else if (opt->body_path) {
            s->body_source = "--body";
            rc = read_body(s, "--body", opt->body_path, err);
            ctype = "application/octet-stream";
        } else if (opt->inputs_path) {
            s->body_source = "inputs";
            rc = read_body(s, "--inputs", opt->inputs_path, err);
            ctype = strlen(opt->inputs_path) > 4 &&
                            strcmp(opt->inputs_path + strlen(opt->inputs_path) - 4, ".npy") == 0
                        ? "application/x-npy"
                        : "application/x-npz";
        } else {
            s->body_source = "none";
            ctype = NULL;
        }
        if (rc != 0) return rc;
        if (opt->body_template || opt->nonce_field) {
            size_t len;
            char *b;
            if ((rc = rpx__bodies_open(opt, s->body, s->body_len, opt->bodies_first, &s->bodies,
                                       err)) != 0)
                return rc;
            if (!(b = rpx__bodies_next(s->bodies, &len)))
                return rpx_error_set(err, RPX_ENOMEM, "out of memory");
            free(s->body);
            s->body = b;
            s->body_len = len;
            ctype = "application/json";
        }
        if (!has_ctype && ctype) {
            char line[64];
            snprintf(line, sizeof line, "Content-Type: %s", ctype);
            if (add_line(s, line) != 0) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        }
        if (has_ctype) {
            /* the user's value (reported only when the name is not secret, which it is not) */
            for (i = 0; i < json_array_size(s->request_headers); i++) {
                json_t *h = json_array_get(s->request_headers, i);
                if (strcasecmp(json_string_value(json_object_get(h, "name")), "Content-Type") == 0)
                    ctype = json_string_value(json_object_get(h, "value"));
            }
        }
        if (ctype && !(s->content_type = strdup(ctype)))
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        /* no "Expect: 100-continue" round trip before larger bodies */
        if (!has_expect && add_line(s, "Expect:") != 0)
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }

    s->verify_tls = !opt->insecure;
    s->is_https = strncmp(t->spec, "https://", 8) == 0;
    s->connect_timeout_s = opt->connect_timeout_s;
    s->total_timeout_s = opt->total_timeout_s;

    if (curl_easy_setopt(c, CURLOPT_URL, t->spec) != CURLE_OK ||
#if LIBCURL_VERSION_NUM >= 0x075500
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
#endif
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->errbuf) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEDATA, s) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HEADERDATA, s) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_USERAGENT, "rpxprof/" RPX_VERSION) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                         timeout_ms(&s->connect_timeout_s, 10.0)) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms(&s->total_timeout_s, 60.0)) !=
            CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, s->verify_tls ? 1L : 0L) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, s->verify_tls ? 2L : 0L) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, s->headers) != CURLE_OK)
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--model %s: this libcurl (%s) lacks an option rpxprof needs",
                             t->display_spec, curl_version());
    /* --http2: plain http speaks h2 from the first byte (prior knowledge, no Upgrade); https
     * offers h2 by ALPN and http_call refuses an answer in another version. PIPEWAIT: a
     * request under --rate waits for a connection that may multiplex rather than open one */
    s->http2 = opt->http2;
    if (s->http2 &&
        (!(curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_HTTP2) ||
         curl_easy_setopt(c, CURLOPT_HTTP_VERSION,
                          s->is_https ? (long)CURL_HTTP_VERSION_2TLS
                                      : (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE) != CURLE_OK ||
         curl_easy_setopt(c, CURLOPT_PIPEWAIT, 1L) != CURLE_OK))
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--http2: this libcurl (%s) cannot speak HTTP/2; drop --http2 or "
                             "install a libcurl built with nghttp2 (Debian: libcurl4)",
                             curl_version());

    if (strcmp(s->method, "GET") == 0) {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    } else if (strcmp(s->method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else {
        /* never NULL: curl would read the body from stdin */
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, s->body ? s->body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s->body_len);
        if (strcmp(s->method, "POST") != 0) curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, s->method);
    }
    return 0;
}

/* --rate with bodies that vary: each request's body, made by curl's engine when it is due */
static char *load_next_body(void *ud, size_t *len)
{
    return rpx__bodies_next(ud, len);
}

RPX_PLUGIN_EXPORT const int rpx_http_plugin_abi = RPX_PLUGIN_ABI;

static int http_open(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    http_state *s;
    int i;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return rpx_error_set(err, RPX_EUNAVAILABLE, "--model %s: libcurl failed to start: %s",
                             t->display_spec, curl_easy_strerror(curl_init_rc));
    s = calloc(1, sizeof *s);
    if (!s) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    t->hooks.state = s;
    t->hooks.unload = http_unload;
    s->display_url = strdup(t->display_spec);
    s->request_headers = json_array();
    s->status_counts = json_object();
    s->curl = curl_easy_init();
    if (!s->display_url || !s->request_headers || !s->status_counts)
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < N_PHASES; i++)
        if (rpx_latency_create(0, &s->phase[i]) != 0)
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (!s->curl)
        return rpx_error_set(err, RPX_EUNAVAILABLE, "--model %s: curl_easy_init failed",
                             t->display_spec);
    if ((i = rpx__stream_create(opt->stream, opt->tokens_field, opt->keep_events, opt->slo,
                                &s->stream, err)) != 0)
        return i;
    i = configure(t, s, opt, err);
    if (i != 0) return i;
    t->hooks.call = http_call;
    t->hooks.outputs = http_outputs;
    t->hooks.keep_outputs = http_keep_outputs;
    if (opt->output_field) {
        const char *f = opt->output_field;
        if (strncmp(f, "$.", 2) == 0) f += 2; /* a JSONPath's root */
        if (!(s->output_field = strdup(f))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    t->hooks.counts_failures = 1;
    t->hooks.allow_warmup_failures = s->allow_warmup_failures = opt->allow_warmup_failures;
    t->hooks.after_call = http_after_call;
    t->hooks.section = http_section;
    t->hooks.setup = http_setup;
    if (opt->load_rate > 0) {
        rpx_http_load_opts lo;
        memset(&lo, 0, sizeof lo);
        lo.rate = opt->load_rate;
        lo.poisson = opt->load_poisson;
        lo.duration_s = opt->load_duration_s;
        lo.concurrency = opt->load_concurrency > 0 ? opt->load_concurrency : 64;
        lo.seed = opt->load_seed;
        lo.request_timeout_s = s->total_timeout_s;
        lo.connect_timeout_s = s->connect_timeout_s;
        lo.engine = opt->load_engine;
        lo.h2c = s->http2 && !s->is_https;
        lo.drain_s = opt->load_drain_s > 0    ? opt->load_drain_s
                     : opt->load_drain_s < 0 ? 0
                                             : RPX_HTTP_DEFAULT_DRAIN_S;
        s->load_bound_s = lo.duration_s + lo.drain_s;
        if (s->bodies) {
            lo.next_body = load_next_body;
            lo.body_ud = s->bodies;
        }
        if ((i = rpx__http_load_create(&lo, &s->load, err)) != 0 ||
            (i = rpx__http_load_prepare(s->load, t->spec, s->display_url, s->method, s->headers,
                                        s->body, s->body_len, s->send_body, s->http2, err)) != 0)
            return i;
        rpx__http_load_set_stream(s->load, s->stream);
        rpx__stream_set_open_loop(s->stream);
        t->hooks.run = http_load_run;
    }
    return 0;
}

/* The options arrive by name (loader/kind_http.c's fields), read into this
 * plugin's own copy: a name it does not know is refused. */
RPX_PLUGIN_EXPORT int rpx_http_plugin_open(rpx_target *t, const rpx_kv_list *opts,
                                           rpx_error *err);
int rpx_http_plugin_open(rpx_target *t, const rpx_kv_list *opts, rpx_error *err)
{
    rpx_target_options opt;
    int rc = rpx__http_options_read(opts, &opt, err);
    if (rc == 0) rc = http_open(t, &opt, err);
    free((void *)opt.headers); /* each header is copied by configure */
    return rc;
}
