/* Unit tests for src/http/http_target.c: --header parsing and ${VAR} expansion,
 * --method, the request body, redaction, and calls to a tiny HTTP/1.1 server
 * on 127.0.0.1 (keep-alive, status codes, a refused connection, a timeout).
 * No network beyond 127.0.0.1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "common/json.h"
#include "measure/run.h"
#include "rpxprof/target.h"

/* --- a one-connection-at-a-time HTTP/1.1 server ------------------------------ */

typedef struct server {
    int fd, port;
    int status;                   /* the answer to every request */
    int no_reply;                 /* read requests, never answer */
    pthread_t thread;
    pthread_mutex_t lock;
    int connections, requests;
    char last[4096];              /* request line and headers of the last request */
    size_t last_body;
} server;

static int serve_request(server *sv, int c)
{
    char buf[8192];
    size_t len = 0, body = 0, have;
    char *end, *cl, answer[128];
    int head;
    for (;;) {
        ssize_t n;
        buf[len] = '\0';
        if ((end = strstr(buf, "\r\n\r\n")) != NULL) break;
        if (len + 1 >= sizeof buf) return -1;
        n = recv(c, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0) return -1;
        len += (size_t)n;
    }
    *end = '\0';
    cl = strcasestr(buf, "\r\nContent-Length:");
    if (cl) body = strtoul(cl + 17, NULL, 10);
    have = len - (size_t)(end + 4 - buf);
    while (have < body) { /* discard the rest of the body */
        char tmp[4096];
        size_t want = body - have < sizeof tmp ? body - have : sizeof tmp;
        ssize_t n = recv(c, tmp, want, 0);
        if (n <= 0) return -1;
        have += (size_t)n;
    }
    head = strncmp(buf, "HEAD ", 5) == 0;
    pthread_mutex_lock(&sv->lock);
    snprintf(sv->last, sizeof sv->last, "%.4095s", buf);
    sv->last_body = body;
    sv->requests++;
    pthread_mutex_unlock(&sv->lock);
    if (sv->no_reply) return 0;
    snprintf(answer, sizeof answer, "HTTP/1.1 %d X\r\nContent-Length: 2\r\n\r\n%s", sv->status,
             head ? "" : "ok");
    return send(c, answer, strlen(answer), MSG_NOSIGNAL) < 0 ? -1 : 0;
}

static void *serve(void *arg)
{
    server *sv = arg;
    int c;
    while ((c = accept(sv->fd, NULL, NULL)) >= 0) {
        pthread_mutex_lock(&sv->lock);
        sv->connections++;
        pthread_mutex_unlock(&sv->lock);
        while (serve_request(sv, c) == 0) continue;
        close(c);
    }
    return NULL;
}

/* A bound socket's port; with listen 0 nothing accepts there (a refused connection). */
static int bind_local(int *port, int do_listen)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    if (do_listen) assert_int_equal(listen(fd, 4), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static void server_start(server *sv, int status)
{
    memset(sv, 0, sizeof *sv);
    sv->status = status;
    pthread_mutex_init(&sv->lock, NULL);
    sv->fd = bind_local(&sv->port, 1);
    assert_int_equal(pthread_create(&sv->thread, NULL, serve, sv), 0);
}

static void server_stop(server *sv)
{
    shutdown(sv->fd, SHUT_RDWR);
    pthread_join(sv->thread, NULL);
    close(sv->fd);
    pthread_mutex_destroy(&sv->lock);
}

/* --- helpers ---------------------------------------------------------------------- */

static char inputs_path[64];

static rpx_target *open_ok(const char *url, const rpx_target_options *opt)
{
    rpx_target *t = NULL;
    rpx_error err = {0};
    if (rpx_target_open_ex(url, opt, &t, &err) != 0) fail_msg("open %s: %s", url, err.message);
    assert_string_equal(t->kind_name, "http");
    assert_non_null(t->hooks.call);
    assert_true(t->hooks.counts_failures);
    return t;
}

static void open_fails(const char *url, const rpx_target_options *opt, int code,
                       const char *text, const char *never)
{
    rpx_target *t = (rpx_target *)1;
    rpx_error err = {0};
    assert_int_equal(rpx_target_open_ex(url, opt, &t, &err), code);
    assert_null(t);
    if (!strstr(err.message, text)) fail_msg("'%s' not in '%s'", text, err.message);
    if (never && strstr(err.message, never)) fail_msg("'%s' leaked: '%s'", never, err.message);
}

/* One call and its after-call hook, as the timing loop makes them. */
static int call(rpx_target *t, int timed, rpx_error *err)
{
    rpx_inputs in = {0, NULL};
    int rc;
    memset(err, 0, sizeof *err);
    rc = t->hooks.call(t->hooks.state, &in, err);
    t->hooks.after_call(t->hooks.state, timed, rc);
    return rc;
}

static char *section_text(rpx_target *t, json_t **out)
{
    json_t *s = rpx_target_section(t);
    char *text;
    assert_non_null(s);
    text = json_dumps(s, JSON_SORT_KEYS);
    assert_non_null(text);
    *out = s;
    return text;
}

static long count_of(json_t *sec, const char *key)
{
    json_t *v = json_object_get(json_object_get(sec, "status_counts"), key);
    return v ? (long)json_integer_value(v) : -1;
}

static json_t *phase(json_t *sec, const char *name, const char *stat)
{
    return json_object_get(json_object_get(json_object_get(sec, "phases_ms"), name), stat);
}

/* --- tests ------------------------------------------------------------------------- */

static void test_header_errors(void **st)
{
    const char *no_colon[] = {"Authorization Bearer sekrit-abc"};
    const char *missing[] = {"X-Trace: abc", "Authorization: Bearer ${RPX_HTTP_TEST_UNSET}"};
    const char *bad_name[] = {"Bad Name: v"};
    const char *unterminated[] = {"X-Api-Key: ${OOPS"};
    rpx_target_options o = {0};
    (void)st;
    unsetenv("RPX_HTTP_TEST_UNSET");
    o.headers = no_colon;
    o.n_headers = 1;
    open_fails("http://127.0.0.1:9/x", &o, RPX_EINVAL, "--header number 1 has no ':'",
               "sekrit");
    o.headers = missing;
    o.n_headers = 2;
    open_fails("http://127.0.0.1:9/x", &o, RPX_EINVAL,
               "--header Authorization: ${RPX_HTTP_TEST_UNSET} is not set in the environment; "
               "export it",
               "Bearer");
    o.headers = bad_name;
    o.n_headers = 1;
    open_fails("http://127.0.0.1:9/x", &o, RPX_EINVAL, "--header number 1: the name", NULL);
    o.headers = unterminated;
    open_fails("http://127.0.0.1:9/x", &o, RPX_EINVAL, "--header X-Api-Key:", "OOPS");
}

static void test_method_validation(void **st)
{
    rpx_target_options o = {0};
    rpx_target *t;
    json_t *sec;
    char *text;
    (void)st;
    o.method = "post";
    open_fails("http://127.0.0.1:9/x", &o, RPX_EINVAL, "--method post", NULL);
    o.method = "PO ST";
    open_fails("http://127.0.0.1:9/x", &o, RPX_EINVAL, "--method", NULL);
    o.method = "";
    open_fails("http://127.0.0.1:9/x", &o, RPX_EINVAL, "--method", NULL);
    o.method = "GET";
    o.body_path = inputs_path;
    open_fails("http://127.0.0.1:9/x", &o, RPX_EINVAL, "--method GET sends no body", NULL);
    o.body_path = NULL;
    t = open_ok("http://127.0.0.1:9/x", &o);
    text = section_text(t, &sec);
    assert_string_equal(json_string_value(json_object_get(sec, "method")), "GET");
    assert_true(json_is_null(json_object_get(sec, "body")));
    free(text);
    json_decref(sec);
    rpx_target_close(t);
    o.method = "PATCH";
    o.inputs_path = inputs_path;
    t = open_ok("http://127.0.0.1:9/x", &o);
    rpx_target_close(t);
    open_fails("http://exa mple/x", NULL, RPX_EINVAL, "not a valid URL", NULL);
}

static void test_body_missing(void **st)
{
    rpx_target_options o = {0};
    (void)st;
    o.inputs_path = inputs_path;
    o.body_path = "/nonexistent/rpx-body.bin";
    open_fails("http://127.0.0.1:9/x", &o, RPX_ENOTFOUND,
               "--body /nonexistent/rpx-body.bin: cannot open the request body", NULL);
    o.body_path = NULL;
    o.inputs_path = "/nonexistent/in.npz";
    open_fails("http://127.0.0.1:9/x", &o, RPX_ENOTFOUND, "--inputs /nonexistent/in.npz", NULL);
}

static void test_redaction_and_expansion(void **st)
{
    const char *headers[] = {"Authorization: Bearer ${RPX_HTTP_TEST_TOKEN}",
                             "X-Api-Key: literal-key-123", "X-Trace: abc",
                             "X-From-Env: ${RPX_HTTP_TEST_PLAIN}", "Content-Type: image/png"};
    rpx_target_options o = {0};
    rpx_target *t;
    rpx_error err;
    server sv;
    json_t *sec, *h;
    char url[128], *text;
    (void)st;
    setenv("RPX_HTTP_TEST_TOKEN", "tok-S3CR3T-value", 1);
    setenv("RPX_HTTP_TEST_PLAIN", "plain-from-env", 1);
    server_start(&sv, 200);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", sv.port);
    o.inputs_path = inputs_path;
    o.headers = headers;
    o.n_headers = 5;
    t = open_ok(url, &o);
    assert_int_equal(call(t, 1, &err), 0);
    pthread_mutex_lock(&sv.lock);
    assert_non_null(strstr(sv.last, "\r\nAuthorization: Bearer tok-S3CR3T-value"));
    assert_non_null(strstr(sv.last, "\r\nX-From-Env: plain-from-env"));
    assert_non_null(strstr(sv.last, "\r\nContent-Type: image/png"));
    assert_null(strstr(sv.last, "application/x-npz"));
    pthread_mutex_unlock(&sv.lock);
    text = section_text(t, &sec);
    assert_null(strstr(text, "S3CR3T"));
    assert_null(strstr(text, "literal-key-123"));
    assert_null(strstr(text, "plain-from-env")); /* reported as written: ${RPX_HTTP_TEST_PLAIN} */
    h = json_object_get(sec, "request_headers");
    assert_int_equal(json_array_size(h), 5);
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 0), "name")),
                        "Authorization");
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 0), "value")),
                        "REDACTED");
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 1), "value")),
                        "REDACTED");
    /* a header not known to be harmless is redacted too, whatever its name */
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 2), "value")),
                        "REDACTED");
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 3), "value")),
                        "REDACTED");
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 4), "value")),
                        "image/png");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(sec, "body"), "content_type")),
        "image/png");
    free(text);
    json_decref(sec);
    rpx_target_close(t);
    server_stop(&sv);
}

static void test_keepalive_success(void **st)
{
    rpx_target_options o = {0};
    rpx_run_info info = {0};
    rpx_inputs in = {0, NULL};
    rpx_target *t;
    rpx_error err;
    server sv;
    json_t *sec, *body;
    char url[128], remote[64], *text;
    int i;
    (void)st;
    server_start(&sv, 200);
    snprintf(url, sizeof url, "http://user:pw@127.0.0.1:%d/depth?api_key=k1", sv.port);
    o.inputs_path = inputs_path;
    t = open_ok(url, &o);
    info.warmup_calls = 2;
    info.measured_calls = 5;
    assert_int_equal(rpx_target_setup(t, &in, &info, &err), 0);
    for (i = 0; i < 2; i++) assert_int_equal(call(t, 0, &err), 0);
    for (i = 0; i < 5; i++) assert_int_equal(call(t, 1, &err), 0);
    pthread_mutex_lock(&sv.lock);
    assert_int_equal(sv.connections, 1);
    assert_int_equal(sv.requests, 7);
    assert_int_equal(sv.last_body, 100);
    assert_non_null(strstr(sv.last, "POST /depth?api_key=k1 HTTP/1.1"));
    assert_non_null(strstr(sv.last, "\r\nContent-Type: application/x-npz"));
    assert_null(strstr(sv.last, "Expect:"));
    pthread_mutex_unlock(&sv.lock);
    text = section_text(t, &sec);
    assert_null(strstr(text, "k1"));
    assert_null(strstr(text, ":pw@"));
    assert_int_equal(count_of(sec, "200"), 5);
    assert_int_equal(json_object_size(json_object_get(sec, "status_counts")), 1);
    assert_int_equal(json_integer_value(json_object_get(sec, "connections_opened")), 1);
    assert_int_equal(json_integer_value(json_object_get(sec, "failed_calls")), 0);
    assert_int_equal(json_integer_value(json_object_get(sec, "bytes_sent")), 500);
    assert_int_equal(json_integer_value(json_object_get(sec, "bytes_received")), 10);
    assert_int_equal(json_integer_value(json_object_get(sec, "request_body_bytes")), 100);
    assert_string_equal(json_string_value(json_object_get(sec, "http_version")), "1.1");
    snprintf(remote, sizeof remote, "127.0.0.1:%d", sv.port);
    assert_string_equal(json_string_value(json_object_get(sec, "remote_address")), remote);
    body = json_object_get(sec, "body");
    assert_string_equal(json_string_value(json_object_get(body, "source")), "inputs");
    assert_string_equal(json_string_value(json_object_get(body, "content_type")),
                        "application/x-npz");
    assert_true(json_is_real(phase(sec, "total", "p50_ms")));
    assert_true(json_real_value(phase(sec, "total", "min_ms")) > 0);
    assert_true(json_real_value(phase(sec, "time_to_first_byte", "max_ms")) <=
                json_real_value(phase(sec, "total", "max_ms")));
    assert_true(json_is_real(phase(sec, "connect", "p99_ms")));
    assert_true(json_is_null(phase(sec, "tls", "p50_ms"))); /* plain http */
    assert_true(json_is_true(json_object_get(sec, "tls_verification")));
    assert_true(json_real_value(json_object_get(sec, "connect_timeout_s")) == 10.0);
    assert_true(json_real_value(json_object_get(sec, "total_timeout_s")) == 60.0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(sec, "not_measured"), "gpu")),
        "remote API");
    free(text);
    json_decref(sec);
    rpx_target_close(t);
    server_stop(&sv);
}

static void test_methods_on_the_wire(void **st)
{
    rpx_target_options o = {0};
    rpx_target *t;
    rpx_error err;
    server sv;
    char url[128];
    (void)st;
    server_start(&sv, 201);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/r", sv.port);
    o.inputs_path = inputs_path;
    o.method = "HEAD";
    t = open_ok(url, &o);
    assert_int_equal(call(t, 1, &err), 0);
    assert_non_null(strstr(sv.last, "HEAD /r HTTP/1.1"));
    assert_int_equal(sv.last_body, 0);
    rpx_target_close(t);
    o.method = "DELETE";
    o.body_path = inputs_path;
    t = open_ok(url, &o);
    assert_int_equal(call(t, 1, &err), 0);
    assert_non_null(strstr(sv.last, "DELETE /r HTTP/1.1"));
    assert_non_null(strstr(sv.last, "\r\nContent-Type: application/octet-stream"));
    assert_int_equal(sv.last_body, 100);
    rpx_target_close(t);
    server_stop(&sv);
}

/* --rate through the sockets engine: the schedule's requests on one kept-alive
 * connection, the bytes curl would send, the counts in the section. */
static void test_load_sockets(void **st)
{
    rpx_target_options o = {0};
    rpx_run_config cfg = {0};
    rpx_run_result res;
    rpx_inputs in = {0, NULL};
    rpx_target *t;
    rpx_error err = {0};
    server sv;
    json_t *sec, *load;
    int64_t samples[20];
    char url[128], *text;
    long i;
    (void)st;
    server_start(&sv, 200);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/depth?q=1", sv.port);
    o.inputs_path = inputs_path;
    o.load_rate = 400;
    o.load_duration_s = 0.05;
    o.load_concurrency = 1; /* the server serves one connection at a time */
    o.load_seed = 1;
    t = open_ok(url, &o);
    assert_non_null(t->hooks.run);
    cfg.repeats = 20;
    cfg.samples = samples;
    assert_int_equal(t->hooks.run(t->hooks.state, &cfg, &in, &res, &err), 0);
    assert_int_equal(res.status, RPX_RUN_COMPLETE);
    assert_int_equal((long)res.measured, 20);
    for (i = 0; i < 20; i++) assert_true(samples[i] > 0);
    pthread_mutex_lock(&sv.lock);
    assert_int_equal(sv.connections, 1);
    assert_int_equal(sv.requests, 20);
    assert_int_equal(sv.last_body, 100);
    assert_non_null(strstr(sv.last, "POST /depth?q=1 HTTP/1.1\r\n"));
    assert_non_null(strstr(sv.last, "\r\nContent-Type: application/x-npz"));
    assert_non_null(strstr(sv.last, "\r\nUser-Agent: rpxprof/"));
    assert_null(strstr(sv.last, "Expect:"));
    pthread_mutex_unlock(&sv.lock);
    text = section_text(t, &sec);
    load = json_object_get(sec, "load");
    assert_string_equal(json_string_value(json_object_get(load, "engine")), "sockets");
    assert_int_equal(json_integer_value(json_object_get(load, "completed")), 20);
    assert_int_equal(count_of(sec, "200"), 20);
    assert_int_equal(json_integer_value(json_object_get(sec, "connections_opened")), 1);
    assert_int_equal(json_integer_value(json_object_get(sec, "bytes_sent")), 2000);
    assert_int_equal(json_integer_value(json_object_get(sec, "bytes_received")), 40);
    assert_true(json_is_null(phase(sec, "name_lookup", "p50_ms")));
    snprintf(url, sizeof url, "127.0.0.1:%d", sv.port);
    assert_string_equal(json_string_value(json_object_get(sec, "remote_address")), url);
    assert_true(json_real_value(phase(sec, "time_to_first_byte", "max_ms")) <=
                json_real_value(phase(sec, "total", "max_ms")));
    free(text);
    json_decref(sec);
    rpx_target_close(t);
    server_stop(&sv);
}

static void test_http_500(void **st)
{
    rpx_target_options o = {0};
    rpx_target *t;
    rpx_error err;
    server sv;
    json_t *sec;
    char url[128], want[160], *text;
    (void)st;
    server_start(&sv, 500);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/fail", sv.port);
    o.inputs_path = inputs_path;
    t = open_ok(url, &o);
    assert_int_equal(call(t, 0, &err), RPX_CALL_COUNTED_FAILURE);
    assert_int_equal(call(t, 1, &err), RPX_CALL_COUNTED_FAILURE);
    snprintf(want, sizeof want, "HTTP 500 from %s", url);
    assert_string_equal(err.message, want);
    text = section_text(t, &sec);
    assert_int_equal(count_of(sec, "500"), 1);
    assert_int_equal(json_integer_value(json_object_get(sec, "failed_calls")), 1);
    assert_int_equal(json_integer_value(json_object_get(sec, "failed_warmup_calls")), 1);
    assert_true(json_is_null(phase(sec, "total", "p50_ms")));
    free(text);
    json_decref(sec);
    rpx_target_close(t);
    server_stop(&sv);
}

static void test_refused(void **st)
{
    rpx_target_options o = {0};
    rpx_target *t;
    rpx_error err;
    json_t *sec;
    char url[128], *text;
    int port, fd = bind_local(&port, 0); /* bound, not listening: refused */
    (void)st;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
    o.inputs_path = inputs_path;
    o.connect_timeout_s = 2;
    t = open_ok(url, &o);
    assert_int_equal(call(t, 1, &err), RPX_CALL_COUNTED_FAILURE);
    if (!strstr(err.message, "CURLE_COULDNT_CONNECT")) fail_msg("message: %s", err.message);
    text = section_text(t, &sec);
    assert_int_equal(count_of(sec, "connection_refused"), 1);
    assert_int_equal(json_integer_value(json_object_get(sec, "failed_calls")), 1);
    assert_true(json_is_null(phase(sec, "name_lookup", "p50_ms")));
    assert_true(json_real_value(json_object_get(sec, "connect_timeout_s")) == 2.0);
    free(text);
    json_decref(sec);
    rpx_target_close(t);
    close(fd);
}

static void test_timeout(void **st)
{
    rpx_target_options o = {0};
    rpx_target *t;
    rpx_error err;
    server sv;
    json_t *sec;
    char url[128], *text;
    (void)st;
    server_start(&sv, 200);
    sv.no_reply = 1;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/hang", sv.port);
    o.inputs_path = inputs_path;
    o.total_timeout_s = 0.2;
    t = open_ok(url, &o);
    assert_int_equal(call(t, 1, &err), RPX_CALL_COUNTED_FAILURE);
    if (!strstr(err.message, "(CURLE_OPERATION_TIMEDOUT)")) fail_msg("message: %s", err.message);
    text = section_text(t, &sec);
    assert_int_equal(count_of(sec, "timeout"), 1);
    free(text);
    json_decref(sec);
    rpx_target_close(t);
    server_stop(&sv);
}

static void test_half_open_cleanup(void **st)
{
    /* a failure after the curl handle and headers exist is freed by target.c's unload */
    const char *headers[] = {"X-A: 1", "X-B: ${RPX_HTTP_TEST_UNSET}"};
    rpx_target_options o = {0};
    (void)st;
    o.inputs_path = inputs_path;
    o.headers = headers;
    o.n_headers = 2;
    open_fails("https://127.0.0.1:9/x", &o, RPX_EINVAL, "${RPX_HTTP_TEST_UNSET}", NULL);
}

static int make_inputs(void **st)
{
    char body[100];
    int fd;
    (void)st;
    snprintf(inputs_path, sizeof inputs_path, "/tmp/rpx-http-test-XXXXXX");
    fd = mkstemp(inputs_path);
    if (fd < 0) return -1;
    memset(body, 'x', sizeof body);
    if (write(fd, body, sizeof body) != (ssize_t)sizeof body) return -1;
    close(fd);
    /* only 127.0.0.1 is used: never through a proxy */
    setenv("NO_PROXY", "*", 1);
    setenv("no_proxy", "*", 1);
    return 0;
}

static int remove_inputs(void **st)
{
    (void)st;
    unlink(inputs_path);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_errors),
        cmocka_unit_test(test_method_validation),
        cmocka_unit_test(test_body_missing),
        cmocka_unit_test(test_redaction_and_expansion),
        cmocka_unit_test(test_keepalive_success),
        cmocka_unit_test(test_methods_on_the_wire),
        cmocka_unit_test(test_load_sockets),
        cmocka_unit_test(test_http_500),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_half_open_cleanup),
    };
    return cmocka_run_group_tests(tests, make_inputs, remove_inputs);
}
