/* http_load_sock.c — the open-loop load's fast engine: HTTP/1.1 over plain
 * TCP sockets, one kept-alive connection per request in flight (as wrk),
 * all driven by one epoll loop; responses parsed by http-parser (Debian's
 * libhttp-parser, the parser wrk is built on). It serves http:// URLs
 * without --http2, credentials in the URL or a proxy from the environment;
 * curl's engine (http_load_curl.c) serves the rest; both report to the
 * schedule (http_schedule.c) and neither calls the other. The request's bytes are built
 * once, as curl builds them from the same options, and sent as they are for
 * every request.
 *
 * Why not curl here: curl_multi_perform checks every transfer's socket with a
 * poll() of its own on each call and re-parses the URL and the connection
 * cache per request; on loopback it drove 47-53 k requests/s where wrk on one
 * thread drives 105-114 k (BENCHMARKS.md). */
#include <errno.h>
#include <http_parser.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http/http_engines.h"
#include "rpxprof/send_delay.h"

#define SCAN_NS 50000000LL        /* timeouts are looked for every 50 ms at most */
#define READ_SIZE 65536
#define READS_PER_EVENT 4

struct rpx_http_sock {
    char *req;                    /* the request's bytes */
    size_t req_len;
    long long body_len;
    int head;                     /* HEAD: answers carry no body */
    char host[256], port[8];      /* for getaddrinfo: the host without IPv6 brackets */
    struct addrinfo *addrs;       /* resolved once, before the schedule */
    struct addrinfo *good;        /* the address the last connect reached */
    int gai_rc;
    int close;                    /* the request says "Connection: close": never reused */
};

typedef struct conn {
    int fd;                       /* -1: not connected */
    int connecting;               /* a non-blocking connect under way */
    int busy;                     /* a request on it */
    int served;                   /* answers received on this connection */
    int reused;                   /* the request went out on a connection that served before */
    int retried;                  /* the request was re-sent once on a new connection */
    int want_out;                 /* EPOLLOUT registered */
    int write_failed;             /* the connection refused the rest of the request */
    unsigned gen;                 /* counts the requests begun (and re-sent) on it */
    int complete, keep_alive;
    size_t off;                   /* request bytes written */
    long long intended, sent, first, end, connect_start, connect_ns, body_bytes;
    long status;
    long long t_read;             /* the read being parsed: when it returned */
    rpx_http_stream *stream;      /* responses captured for it (streams); NULL: none */
    rpx_http_capture *cap;
    int hstate;                   /* header callbacks: 1 in a name, 2 in a value */
    int is_ctype;                 /* the header being read is Content-Type */
    char hname[16], ctype[128];   /* its name (what fits), its value */
    size_t hname_len, ctype_len;
    struct addrinfo *ai;          /* the address a connect is trying */
    struct addrinfo *ai_start;    /* where this request's connects began */
    int wrapped;                  /* they went round to the list's start */
    http_parser parser;
    struct conn *next_free;
} conn;

typedef struct loop {
    rpx_http_sock *k;
    rpx_http_sched *l;
    const rpx_run_config *cfg;
    rpx_run_result *res;
    int ep;
    long in_flight;
    conn *free_list;
    long long free_since;         /* when free_list last went from empty to not (CLOCK_MONOTONIC) */
    int stop;                     /* too many failures */
    char *buf;
    long long req_ns, conn_ns;    /* --request-timeout, --connect-timeout */
} loop;

/* --- the request, as curl sends it ------------------------------------------ */

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = (*cap ? *cap * 2 : 1024);
        char *p;
        while (c < *len + n + 1) c *= 2;
        if (!(p = realloc(*buf, c))) return -1;
        *buf = p;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

static int appends(char **buf, size_t *len, size_t *cap, const char *a, const char *b,
                   const char *c, const char *d)
{
    return append(buf, len, cap, a, strlen(a)) | append(buf, len, cap, b, strlen(b)) |
           append(buf, len, cap, c, strlen(c)) | append(buf, len, cap, d, strlen(d));
}

/* The header list's entry for `name` ("Name: v", "Name;" or "Name:"), or NULL. */
static const char *user_header(const struct curl_slist *h, const char *name)
{
    size_t n = strlen(name);
    for (; h; h = h->next)
        if (strncasecmp(h->data, name, n) == 0 && (h->data[n] == ':' || h->data[n] == ';'))
            return h->data;
    return NULL;
}

static int build_request(rpx_http_sock *k, const char *method, const char *target,
                         const char *host_header, const struct curl_slist *headers,
                         const char *body, size_t body_len, int send_body)
{
    static const char *const defaults[] = {"Host", "User-Agent", "Accept"};
    const char *values[3];
    char *b = NULL;
    size_t len = 0, cap = 0, i;
    const struct curl_slist *h;
    int rc = 0;
    values[0] = host_header;
    values[1] = "rpxprof/" RPX_VERSION;
    values[2] = "*/*";
    rc |= appends(&b, &len, &cap, method, " ", target, " HTTP/1.1\r\n");
    /* curl's own headers unless the user's list replaces ("Name: v") or removes ("Name:") them */
    for (i = 0; i < 3; i++)
        if (!user_header(headers, defaults[i]))
            rc |= appends(&b, &len, &cap, defaults[i], ": ", values[i], "\r\n");
    for (h = headers; h; h = h->next) {
        size_t n = strlen(h->data);
        const char *colon = strchr(h->data, ':');
        if (n > 0 && h->data[n - 1] == ';' && !colon) { /* "Name;": sent with an empty value */
            rc |= append(&b, &len, &cap, h->data, n - 1);
            rc |= append(&b, &len, &cap, ":\r\n", 3);
        } else if (colon) {
            const char *v = colon + 1;
            while (*v == ' ' || *v == '\t') v++;
            if (*v) rc |= appends(&b, &len, &cap, h->data, "\r\n", "", ""); /* else: removed */
        }
    }
    if (send_body) {
        char n[32];
        /* curl's POSTFIELDS default type when the user's list has none */
        if (!user_header(headers, "Content-Type"))
            rc |= append(&b, &len, &cap,
                         "Content-Type: application/x-www-form-urlencoded\r\n", 49);
        if (!user_header(headers, "Content-Length")) {
            snprintf(n, sizeof n, "%zu", body_len);
            rc |= appends(&b, &len, &cap, "Content-Length: ", n, "\r\n", "");
        }
    }
    rc |= append(&b, &len, &cap, "\r\n", 2);
    if (send_body && body_len) rc |= append(&b, &len, &cap, body, body_len);
    if (rc) {
        free(b);
        return -1;
    }
    k->req = b;
    k->req_len = len;
    k->body_len = send_body ? (long long)body_len : 0;
    return 0;
}

static const char *proxy_variable(void)
{
    static const char *const names[] = {"http_proxy", "all_proxy", "ALL_PROXY"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return names[i];
    }
    return NULL;
}

int rpx__http_sock_create(const char *url, const char *method,
                          const struct curl_slist *headers, const char *body, size_t body_len,
                          int send_body, rpx_http_sock **out, const char **reason,
                          rpx_error *err)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *user = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL;
    char *target = NULL, host_header[300];
    rpx_http_sock *k = NULL;
    struct addrinfo hints;
    int rc = 0;
    *out = NULL;
    *reason = NULL;
    if (!u) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
        *reason = "the URL does not parse";
        goto done;
    }
    if (strcasecmp(scheme, "http") != 0) {
        *reason = "https (TLS is curl's)";
        goto done;
    }
    if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK && user) {
        *reason = "credentials in the URL (authentication is curl's)";
        goto done;
    }
    if (proxy_variable()) {
        *reason = "a proxy is set in the environment (proxies are curl's)";
        goto done;
    }
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK || strlen(host) >= 256) {
        *reason = "the URL has no host or path curl's parser gives";
        goto done;
    }
    if (curl_url_get(u, CURLUPART_QUERY, &query, 0) != CURLUE_OK) query = NULL;
    if (!(k = calloc(1, sizeof *k))) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
        goto done;
    }
    if (host[0] == '[') { /* an IPv6 literal: brackets in Host, not for getaddrinfo */
        snprintf(k->host, sizeof k->host, "%.*s", (int)strlen(host) - 2, host + 1);
    } else {
        snprintf(k->host, sizeof k->host, "%s", host);
    }
    snprintf(k->port, sizeof k->port, "%s", port);
    /* curl leaves the port out of Host when it is the scheme's */
    if (strcmp(port, "80") == 0) snprintf(host_header, sizeof host_header, "%s", host);
    else snprintf(host_header, sizeof host_header, "%s:%s", host, port);
    if (!(target = malloc(strlen(path) + (query ? strlen(query) + 1 : 0) + 1))) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
        goto done;
    }
    sprintf(target, "%s%s%s", path, query ? "?" : "", query ? query : "");
    k->head = strcmp(method, "HEAD") == 0;
    {
        const char *conn_h = user_header(headers, "Connection");
        k->close = conn_h && conn_h[10] == ':' && strcasestr(conn_h + 11, "close") != NULL;
    }
    if (build_request(k, method, target, host_header, headers, body, body_len, send_body) != 0) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory for the request");
        goto done;
    }
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    k->gai_rc = getaddrinfo(k->host, k->port, &hints, &k->addrs);
    *out = k;
    k = NULL;
done:
    rpx__http_sock_destroy(k);
    curl_free(scheme);
    curl_free(user);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(query);
    free(target);
    curl_url_cleanup(u);
    return rc;
}

void rpx__http_sock_destroy(rpx_http_sock *k)
{
    if (!k) return;
    if (k->addrs) freeaddrinfo(k->addrs);
    free(k->req);
    free(k);
}

int rpx__http_sock_remote(const rpx_http_sock *k, char *buf, size_t size)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (!k || !k->good ||
        getnameinfo(k->good->ai_addr, k->good->ai_addrlen, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return -1;
    snprintf(buf, size, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, serv);
    return 0;
}

/* --- the parser's callbacks --------------------------------------------------- */

/* 1: the answer has no body whatever its headers say (RFC 9112 6.3: HEAD, 1xx, 204, 304);
 * http-parser 2.9 would otherwise wait for a Content-Length or chunks that never come. */
static int headers_done(http_parser *p, int head)
{
    conn *c = p->data;
    unsigned code = p->status_code;
    c->status = (long)code;
    if (c->cap && c->ctype_len) {
        char line[160];
        int n = snprintf(line, sizeof line, "content-type: %.*s", (int)c->ctype_len, c->ctype);
        rpx__capture_header(c->stream, c->cap, line, (size_t)n);
    }
    return head || (code >= 100 && code < 200) || code == 204 || code == 304;
}

static int on_headers_complete(http_parser *p) { return headers_done(p, 0); }
/* An answer to HEAD has no body whatever its Content-Length. */
static int on_headers_complete_head(http_parser *p) { return headers_done(p, 1); }

static int on_body(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    c->body_bytes += (long long)len;
    if (c->cap) rpx__capture_data(c->cap, at, len, c->t_read);
    return 0;
}

/* Streams: a new answer (after a 1xx) starts the capture again, as a status line does. */
static int on_message_begin(http_parser *p)
{
    conn *c = p->data;
    if (c->cap) rpx__capture_header(c->stream, c->cap, "HTTP/1.1", 8);
    c->hstate = 0;
    c->is_ctype = 0;
    c->ctype_len = 0;
    return 0;
}

/* Streams: the Content-Type's value, which may come in pieces across reads. */
static int on_header_field(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (c->hstate != 1) c->hname_len = 0;
    c->hstate = 1;
    if (c->hname_len + len <= sizeof c->hname) memcpy(c->hname + c->hname_len, at, len);
    c->hname_len += len;
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (c->hstate != 2) {
        c->is_ctype = c->hname_len == 12 && strncasecmp(c->hname, "Content-Type", 12) == 0;
        if (c->is_ctype) c->ctype_len = 0;
    }
    c->hstate = 2;
    if (c->is_ctype && c->ctype_len + len <= sizeof c->ctype) {
        memcpy(c->ctype + c->ctype_len, at, len);
        c->ctype_len += len;
    }
    return 0;
}

static int on_message_complete(http_parser *p)
{
    conn *c = p->data;
    /* an interim answer (100 Continue): the final one follows on the same connection */
    if (p->status_code >= 100 && p->status_code < 200 && p->status_code != 101) return 0;
    c->complete = 1;
    /* not reused after a protocol switch, or an answer framed both ways (RFC 9112 6.3) */
    c->keep_alive = http_should_keep_alive(p) && !p->upgrade && p->status_code != 101 &&
                    !((p->flags & F_CHUNKED) && (p->flags & F_CONTENTLENGTH));
    http_parser_pause(p, 1); /* execute returns here: what follows is not this answer */
    return 0;
}

static http_parser_settings settings, settings_head;

static int watch(loop *L, conn *c, int op, unsigned events)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.ptr = c;
    return epoll_ctl(L->ep, op, c->fd, &ev);
}

/* The address after c->ai: the list from the last good address on, then its start up to
 * that one; NULL when every address was tried. */
static void next_address(loop *L, conn *c)
{
    c->ai = c->ai ? c->ai->ai_next : NULL;
    if (!c->ai && !c->wrapped && c->ai_start != L->k->addrs) {
        c->wrapped = 1;
        c->ai = L->k->addrs;
    }
    if (c->wrapped && c->ai == c->ai_start) c->ai = NULL;
}

/* --- connections and requests ---------------------------------------------------- */

static void conn_close(conn *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->connecting = 0;
    c->want_out = 0;
    c->served = 0;
}

static void finish_as(loop *L, conn *c, const char *key, const char *text, int cut)
{
    rpx_http_load_req r;
    const size_t head_len = L->k->req_len - (size_t)L->k->body_len;
    memset(&r, 0, sizeof r);
    r.cut = cut;
    r.error_key = key;
    r.error_text = text;
    r.status = key ? 0 : c->status;
    r.sent_ns = c->sent;
    r.first_ns = c->first;
    r.end_ns = c->end ? c->end : rpx__load_now_ns();
    r.connect_ns = c->connect_ns;
    r.bytes_sent = c->off > head_len ? (long long)(c->off - head_len) : 0;
    r.bytes_received = c->body_bytes;
    r.ok = !key && c->status >= 200 && c->status <= 299;
    r.capture = c->cap;
    if (c->status)
        r.http_version = c->parser.http_minor == 0 ? CURL_HTTP_VERSION_1_0
                                                   : CURL_HTTP_VERSION_1_1;
    c->busy = 0;
    /* reused only after a whole request went out and a whole answer came back, on a
     * connection both sides keep (an early answer, e.g. a 413 before the body's end, leaves
     * the rest of the body on the wire) */
    if (key || !c->keep_alive || c->off < L->k->req_len || L->k->close) {
        conn_close(c);
    } else {
        c->served++;
        if (c->want_out) { /* cannot be: the request was written; never a spinning EPOLLOUT */
            c->want_out = 0;
            watch(L, c, EPOLL_CTL_MOD, EPOLLIN);
        }
    }
    if (!L->free_list) L->free_since = rpx__load_now_ns();
    c->next_free = L->free_list;
    L->free_list = c;
    L->in_flight--;
    if (rpx__sched_finished(L->l, c->intended, L->cfg, L->res, &r)) L->stop = 1;
}

static void finish(loop *L, conn *c, const char *key, const char *text)
{
    finish_as(L, c, key, text, 0);
}

static void send_more(loop *L, conn *c);

/* A connect to c->ai, or the next address (from the last good one round to it again); the
 * request fails when none is left. */
static void connect_next(loop *L, conn *c)
{
    int e = ECONNREFUSED;
    while (c->ai) {
        int one = 1, rc;
        c->fd = socket(c->ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->fd >= 0) {
            setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            rc = connect(c->fd, c->ai->ai_addr, c->ai->ai_addrlen);
            if (rc == 0 || errno == EINPROGRESS) {
                c->connecting = 1;
                c->want_out = 1;
                c->connect_start = rpx__load_now_ns();
                if (watch(L, c, EPOLL_CTL_ADD, EPOLLIN | EPOLLOUT) == 0) return;
            }
            e = errno;
            conn_close(c);
        } else {
            e = errno;
        }
        next_address(L, c);
    }
    c->end = rpx__load_now_ns();
    if (e == EMFILE || e == ENFILE) /* this process's limit, not the server's doing */
        finish(L, c, "client_fd_limit",
               "no socket for the request: this process's open-file limit (ulimit -n) is "
               "reached; lower --concurrency or raise the limit");
    else
        finish(L, c, e == ECONNREFUSED ? "connection_refused" : "couldnt_connect", strerror(e));
}

/* The request goes out on c: on its open connection, or a new one. */
static void begin(loop *L, conn *c)
{
    c->gen++;
    c->off = 0;
    c->first = c->end = 0;
    c->status = 0;
    c->complete = 0;
    c->keep_alive = 0;
    c->body_bytes = 0;
    c->connect_ns = -1;
    http_parser_init(&c->parser, HTTP_RESPONSE);
    c->parser.data = c;
    c->parser.allow_chunked_length = 1; /* as curl: read, then the connection is not reused */
    if (c->cap) rpx__capture_begin(c->stream, c->cap, c->intended);
    if (c->fd >= 0) {
        c->reused = c->served > 0;
        send_more(L, c);
        return;
    }
    c->reused = 0;
    if (L->k->gai_rc != 0) {
        finish(L, c, "couldnt_resolve_host", gai_strerror(L->k->gai_rc));
        return;
    }
    c->ai = c->ai_start = L->k->good ? L->k->good : L->k->addrs;
    c->wrapped = 0;
    connect_next(L, c);
}

/* A kept-alive connection the server had closed before this request's first
 * byte came back: sent again once on a new connection, as curl does. */
static int retry(loop *L, conn *c)
{
    if (!c->reused || c->retried || c->first) return 0;
    c->retried = 1;
    conn_close(c);
    begin(L, c);
    return 1;
}

static void on_readable(loop *L, conn *c);

/* The connection refused more bytes: an answer already waiting (a 413 before a reset)
 * is read first; else the request is sent again (a dropped kept-alive connection) or fails. */
static void send_failed(loop *L, conn *c, int e)
{
    const unsigned gen = c->gen;
    c->write_failed = 1;
    on_readable(L, c);
    if (c->busy && c->gen == gen && !retry(L, c)) {
        c->end = rpx__load_now_ns();
        finish(L, c, "send_error", strerror(e));
    }
}

static void send_more(loop *L, conn *c)
{
    while (c->off < L->k->req_len && !c->write_failed) {
        ssize_t n = send(c->fd, L->k->req + c->off, L->k->req_len - c->off, MSG_NOSIGNAL);
        if (n > 0) {
            c->off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->want_out) {
                c->want_out = 1;
                watch(L, c, EPOLL_CTL_MOD, EPOLLIN | EPOLLOUT);
            }
            return;
        }
        send_failed(L, c, n < 0 ? errno : EPIPE);
        return;
    }
    if (c->want_out && c->fd >= 0) {
        c->want_out = 0;
        watch(L, c, EPOLL_CTL_MOD, EPOLLIN);
    }
}

static void on_connected(loop *L, conn *c)
{
    int e = 0;
    socklen_t len = sizeof e;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) e = errno;
    if (e != 0) {
        conn_close(c);
        next_address(L, c);
        if (c->ai) {
            connect_next(L, c);
        } else {
            c->end = rpx__load_now_ns();
            finish(L, c, e == ECONNREFUSED ? "connection_refused" : "couldnt_connect",
                   strerror(e));
        }
        return;
    }
    c->connecting = 0;
    c->connect_ns = rpx__load_now_ns() - c->connect_start;
    L->k->good = c->ai;
    c->write_failed = 0;
    send_more(L, c);
}

/* Reads what is there (at most READS_PER_EVENT reads: the loop's other connections and the
 * schedule wait meanwhile; epoll is level-triggered, so the rest comes on the next pass). */
static void on_readable(loop *L, conn *c)
{
    int reads;
    for (reads = 0; reads < READS_PER_EVENT; reads++) {
        ssize_t n = recv(c->fd, L->buf, READ_SIZE, 0);
        long long t;
        size_t used;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (!c->busy) { /* an idle connection: the server closed it (or spoke unasked) */
            conn_close(c);
            return;
        }
        t = rpx__load_now_ns();
        if (n <= 0) {
            int e = n < 0 ? errno : 0;
            if (retry(L, c)) return;
            /* a response that ends with the connection (no length) completes here */
            c->t_read = t;
            if (n == 0 && c->first) http_parser_execute(&c->parser, &settings, NULL, 0);
            c->end = t;
            if (c->complete) {
                c->keep_alive = 0;
                finish(L, c, NULL, NULL);
            } else {
                /* as curl: a reset is a receive error, a close before any byte no reply */
                finish(L, c, e || c->first ? "recv_error" : "empty_reply",
                       e ? strerror(e)
                         : c->first ? "the server closed the connection before the response's end"
                                    : "the server closed the connection without a response");
            }
            return;
        }
        if (!c->first) c->first = t;
        c->t_read = t;
        used = http_parser_execute(&c->parser, L->k->head ? &settings_head : &settings, L->buf,
                                   (size_t)n);
        if (c->complete) {
            c->end = t;
            if (used != (size_t)n) c->keep_alive = 0; /* bytes after the answer: not reused */
            if (t - c->sent > L->req_ns) /* as curl, which would have given up by then */
                finish(L, c, "timeout", "no full answer within --request-timeout");
            else
                finish(L, c, NULL, NULL);
            return;
        }
        if (HTTP_PARSER_ERRNO(&c->parser) == HPE_HEADER_OVERFLOW) {
            c->end = t;
            finish(L, c, "header_too_large",
                   "the response's headers are larger than the sockets engine accepts (80 KiB, "
                   "http-parser's HTTP_MAX_HEADER_SIZE); --load-engine curl takes up to 100 KiB "
                   "per header line");
            return;
        }
        if (HTTP_PARSER_ERRNO(&c->parser) != HPE_OK) {
            c->end = t;
            finish(L, c, "bad_response", http_errno_description(HTTP_PARSER_ERRNO(&c->parser)));
            return;
        }
        if (n < READ_SIZE) return;
    }
}

static void on_event(loop *L, conn *c, unsigned ev)
{
    const unsigned gen = c->gen;
    if (c->connecting) {
        if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) on_connected(L, c);
        return;
    }
    /* the answer first: an early one (a 413 before a reset) must not be lost to a send error */
    if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable(L, c);
    if (c->busy && c->gen == gen && c->fd >= 0 && !c->connecting && c->want_out &&
        (ev & EPOLLOUT))
        send_more(L, c);
}

static void scan_timeouts(loop *L, conn *conns, long nc)
{
    long i;
    for (i = 0; i < nc && !L->stop; i++) {
        conn *c = &conns[i];
        long long now;
        if (!c->busy) continue;
        now = rpx__load_now_ns();
        if (now - c->sent > L->req_ns) {
            c->end = now;
            finish(L, c, "timeout", "no full answer within --request-timeout");
        } else if (c->connecting && now - c->connect_start > L->conn_ns) {
            /* this address does not answer: the next one, else the request fails */
            conn_close(c);
            next_address(L, c);
            if (c->ai) {
                connect_next(L, c);
            } else {
                c->end = now;
                finish(L, c, "timeout", "the connect took longer than --connect-timeout");
            }
        }
    }
}

static int wait_events(int ep, struct epoll_event *evs, int max, long long wait_ns)
{
    static int no_pwait2;
    if (!no_pwait2) {
        struct timespec ts = {(time_t)(wait_ns / 1000000000LL), (long)(wait_ns % 1000000000LL)};
        int n = epoll_pwait2(ep, evs, max, &ts, NULL);
        if (n >= 0 || errno != ENOSYS) return n;
        no_pwait2 = 1;
    }
    /* kernels before 5.11 (and valgrind): whole milliseconds, spinning through the last one */
    return epoll_wait(ep, evs, max, wait_ns <= 1000000LL ? 0 : (int)(wait_ns / 1000000LL) - 1);
}

int rpx__http_sock_run(rpx_http_sock *k, rpx_http_sched *l, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_error *err)
{
    const long n = rpx__sched_scheduled(l), nc = rpx__sched_concurrency(l);
    const double request_timeout_s = rpx__sched_opts(l)->request_timeout_s;
    const double connect_timeout_s = rpx__sched_opts(l)->connect_timeout_s;
    const long long drop_ns = (long long)(request_timeout_s * 1e9); /* as the load's */
    const long long cut_ns = rpx__sched_cut_ns(l);
    struct epoll_event evs[256];
    conn *conns = calloc((size_t)nc, sizeof *conns);
    loop L;
    long long next_scan, scan_ns;
    long i;
    int rc = 0;

    memset(&L, 0, sizeof L);
    L.k = k;
    L.l = l;
    L.cfg = cfg;
    L.res = res;
    L.req_ns = (long long)(request_timeout_s * 1e9);
    L.conn_ns = (long long)(connect_timeout_s > 0 ? connect_timeout_s * 1e9 : 10e9);
    /* timeouts are looked for at a tenth of the shorter one (1 to 50 ms) */
    scan_ns = (L.req_ns < L.conn_ns ? L.req_ns : L.conn_ns) / 10;
    if (scan_ns > SCAN_NS) scan_ns = SCAN_NS;
    if (scan_ns < 1000000LL) scan_ns = 1000000LL;
    L.buf = malloc(READ_SIZE);
    L.ep = epoll_create1(EPOLL_CLOEXEC);
    if (conns)
        for (i = 0; i < nc; i++) conns[i].fd = -1;
    if (!conns || !L.buf || L.ep < 0) {
        rc = L.ep < 0 ? rpx_error_set(err, RPX_EIO, "epoll_create1: %s", strerror(errno))
                      : rpx_error_set(err, RPX_ENOMEM, "out of memory for %ld connections", nc);
        goto out;
    }
    memset(&settings, 0, sizeof settings);
    settings.on_headers_complete = on_headers_complete;
    settings.on_body = on_body;
    settings.on_message_complete = on_message_complete;
    if (rpx__sched_stream(l)) {
        settings.on_message_begin = on_message_begin;
        settings.on_header_field = on_header_field;
        settings.on_header_value = on_header_value;
    }
    settings_head = settings;
    settings_head.on_headers_complete = on_headers_complete_head;
    for (i = nc - 1; i >= 0; i--) {
        if ((conns[i].stream = rpx__sched_stream(l)) != NULL &&
            rpx__capture_create(&conns[i].cap) != 0) {
            rc = rpx_error_set(err, RPX_ENOMEM, "out of memory for %ld connections", nc);
            goto out;
        }
        conns[i].next_free = L.free_list;
        L.free_list = &conns[i];
    }
    next_scan = rpx__load_now_ns() + scan_ns;
    while (rpx__sched_done_count(l) < n && !L.stop) {
        long long due, wait, now;
        int nev, j;
        if (cfg->stop && *cfg->stop) {
            res->status = RPX_RUN_INTERRUPTED;
            break;
        }
        if (rpx__load_now_ns() >= cut_ns) { /* --duration and --drain are over */
            for (i = 0; i < nc; i++)
                if (conns[i].busy) {
                    conns[i].end = rpx__load_now_ns();
                    finish_as(&L, &conns[i], "timeout",
                              "still unanswered when --duration and --drain ended", 1);
                }
            rpx__sched_drop_rest(l, cfg);
            break;
        }
        /* sends that are due: a free connection each, or they wait (and may be dropped);
         * the clock read for each, as a send with a connect or a large body takes a while */
        while (!L.stop && (due = rpx__sched_due(l)) <= (now = rpx__load_now_ns())) {
            if (L.free_list) {
                conn *c = L.free_list;
                L.free_list = c->next_free;
                c->busy = 1;
                c->retried = 0;
                c->write_failed = 0;
                c->intended = due;
                c->sent = now;
                rpx__sched_sent(l, now, L.free_since, ++L.in_flight);
                begin(&L, c);
            } else if (now - due > drop_ns) {
                rpx__sched_dropped(l, cfg);
            } else {
                break;
            }
        }
        if (L.stop || rpx__sched_done_count(l) >= n) break;
        due = rpx__sched_due(l);
        now = rpx__load_now_ns();
        if (due == LLONG_MAX) wait = scan_ns;
        else if (L.free_list) wait = due - RPX_SEND_SPIN_NS - now; /* wake early, spin the rest */
        else wait = due + drop_ns - now;
        if (wait > scan_ns) wait = scan_ns;
        if (cut_ns != LLONG_MAX && wait > cut_ns - now) wait = cut_ns - now;
        if (wait < 0) wait = 0;
        nev = wait_events(L.ep, evs, 256, wait);
        if (nev < 0 && errno != EINTR) {
            rc = rpx_error_set(err, RPX_EIO, "epoll_wait: %s", strerror(errno));
            break;
        }
        for (j = 0; j < nev && !L.stop; j++) on_event(&L, evs[j].data.ptr, evs[j].events);
        if (rpx__load_now_ns() >= next_scan) {
            scan_timeouts(&L, conns, nc);
            next_scan = rpx__load_now_ns() + scan_ns;
        }
    }
out:
    if (conns)
        for (i = 0; i < nc; i++) {
            conn_close(&conns[i]);
            rpx__capture_destroy(conns[i].cap);
        }
    if (L.ep >= 0) close(L.ep);
    free(L.buf);
    free(conns);
    return rc;
}
