/* server_metrics.c — owns `--server-metrics URL` (docs/audits.md): the
 * server's Prometheus text exposition read with one plain-HTTP GET before and
 * after the run, its prefix-cache counters (vLLM's
 * vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total, or the
 * older vllm:gpu_prefix_cache_*_total; every labelled series summed), and
 * the report's `server_metrics`: the counts during the run and the hit rate. */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "rpxprof/target.h"
#include "runner/runner_internal.h"

static const char *const counter_pairs[][2] = {
    {"vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
    {"vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total"},
};
#define N_PAIRS (sizeof counter_pairs / sizeof counter_pairs[0])

/* The user:password of a URL's authority, percent-decoded, as HTTP Basic
 * credentials (base64) into out; 0, or -1 when it does not fit. */
static int basic_credentials(const char *user, size_t n, char *out, size_t size)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char raw[384];
    size_t m = 0, i, k = 0;
    for (i = 0; i < n && m < sizeof raw; i++) {
        unsigned v;
        if (user[i] == '%' && i + 2 < n && sscanf(user + i + 1, "%2x", &v) == 1) {
            raw[m++] = (unsigned char)v;
            i += 2;
        } else {
            raw[m++] = (unsigned char)user[i];
        }
    }
    if (i < n || (m + 2) / 3 * 4 + 1 > size) return -1;
    for (i = 0; i < m; i += 3) {
        unsigned long v = (unsigned long)raw[i] << 16 | (i + 1 < m ? (unsigned long)raw[i + 1] << 8 : 0) |
                          (i + 2 < m ? raw[i + 2] : 0);
        out[k++] = b64[v >> 18 & 63];
        out[k++] = b64[v >> 12 & 63];
        out[k++] = i + 1 < m ? b64[v >> 6 & 63] : '=';
        out[k++] = i + 2 < m ? b64[v & 63] : '=';
    }
    out[k] = '\0';
    return 0;
}

/* What a failed socket call means, in words: a timeout is named as one. */
static const char *net_error(int e)
{
    if (e == EAGAIN || e == EWOULDBLOCK || e == EINPROGRESS || e == ETIMEDOUT)
        return "no answer within 10 s (timed out)";
    return strerror(e);
}

/* GET url (http:// only) into *text (malloc'ed, the body): 0, or why. A
 * user:password@ in the URL is sent as HTTP Basic credentials, never shown. */
static int fetch(const char *url, char **text, char *why, size_t size)
{
    char host[256], port[8] = "80", req[1400], auth[560] = "";
    const char *p, *path, *colon, *at;
    struct addrinfo hints, *ai = NULL, *a;
    struct timeval tv = {10, 0};
    char *buf = NULL, *body;
    size_t len = 0, cap = 0;
    int fd = -1, rc;
    *text = NULL;
    if (strncmp(url, "http://", 7) != 0) {
        snprintf(why, size, "only http:// URLs are read (the metrics of a TLS endpoint: expose them on a plain port)");
        return -1;
    }
    p = url + 7;
    path = p + strcspn(p, "/?#");
    for (at = NULL, colon = p; colon < path; colon++) /* the last '@': a password may hold one */
        if (*colon == '@') at = colon;
    if (at) {
        char b[512];
        if (basic_credentials(p, (size_t)(at - p), b, sizeof b) != 0) {
            snprintf(why, size, "the user:password part of the URL is too long");
            return -1;
        }
        snprintf(auth, sizeof auth, "Authorization: Basic %s\r\n", b);
        p = at + 1;
    }
    colon = memchr(p, ':', (size_t)(path - p));
    if ((size_t)((colon ? colon : path) - p) >= sizeof host || (colon ? colon : path) == p) {
        snprintf(why, size, "no host in the URL");
        return -1;
    }
    snprintf(host, sizeof host, "%.*s", (int)((colon ? colon : path) - p), p);
    if (colon) snprintf(port, sizeof port, "%.*s", (int)(path - colon - 1), colon + 1);
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0) {
        snprintf(why, size, "%s: %s", host, gai_strerror(rc));
        return -1;
    }
    for (a = ai; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(why, size, "cannot connect to %s:%s: %s", host, port, net_error(errno));
        return -1;
    }
    snprintf(req, sizeof req, "GET %s%.*s HTTP/1.0\r\nHost: %s\r\n%sAccept: text/plain\r\n"
             "Connection: close\r\n\r\n", *path == '/' ? "" : "/",
             (int)strcspn(path, "#"), path, host, auth);
    if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
        snprintf(why, size, "cannot send the request to %s:%s: %s", host, port, net_error(errno));
        close(fd);
        return -1;
    }
    for (;;) {
        ssize_t n;
        if (cap - len < 65536) {
            char *nb = cap > (64u << 20) ? NULL : realloc(buf, cap + 65537);
            if (!nb) {
                snprintf(why, size, "the answer is too large (over 64 MiB) or out of memory");
                free(buf);
                close(fd);
                return -1;
            }
            buf = nb;
            cap += 65536;
        }
        n = recv(fd, buf + len, cap - len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            snprintf(why, size, "cannot read the answer from %s:%s: %s", host, port, net_error(errno));
            free(buf);
            close(fd);
            return -1;
        }
        if (n == 0) break;
        len += (size_t)n;
    }
    close(fd);
    if (!buf) {
        snprintf(why, size, "the server closed the connection without an answer");
        return -1;
    }
    buf[len] = '\0';
    if (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 8, " 200", 4) != 0) {
        snprintf(why, size, "the server answered '%.60s' instead of 200", strtok(buf, "\r\n"));
        free(buf);
        return -1;
    }
    body = strstr(buf, "\r\n\r\n");
    if (!body) {
        snprintf(why, size, "the answer has no end of headers");
        free(buf);
        return -1;
    }
    memmove(buf, body + 4, strlen(body + 4) + 1);
    *text = buf;
    return 0;
}

/* The sum of every sample of metric `name` ("name value" or
 * "name{labels} value", comments skipped); NAN when there is none. A NaN or
 * Inf sample is left out and sets *nonfinite. */
static double metric_sum(const char *text, const char *name, int *nonfinite)
{
    size_t n = strlen(name);
    const char *line = text;
    double sum = NAN;
    while (line && *line) {
        const char *end = strchr(line, '\n');
        if (*line != '#' && strncmp(line, name, n) == 0 && (line[n] == ' ' || line[n] == '{')) {
            const char *v = line + n;
            char *stop;
            double x;
            if (*v == '{') { /* the labels end on this line ('}' in a quoted value does not
                                end them), or the line is skipped */
                const char *q = v + 1, *stop_at = end ? end : v + strlen(v);
                int quoted = 0;
                for (; q < stop_at; q++) {
                    if (quoted && *q == '\\' && q + 1 < stop_at) q++;
                    else if (*q == '"') quoted = !quoted;
                    else if (!quoted && *q == '}') break;
                }
                v = q < stop_at ? q + 1 : v;
            }
            x = strtod(v, &stop);
            if (stop != v && isfinite(x)) sum = isnan(sum) ? x : sum + x;
            else if (stop != v) *nonfinite = 1;
        }
        line = end ? end + 1 : NULL;
    }
    return sum;
}

int rpx__server_metrics_read(const char *url, rpx__counters *out)
{
    char *text = NULL;
    int rc;
    memset(out, 0, sizeof *out);
    out->hits = out->queries = NAN;
    out->pair = -1;
    if (fetch(url, &text, out->why, sizeof out->why) != 0) return -1;
    rc = rpx__server_metrics_parse(text, out);
    free(text);
    return rc;
}

int rpx__server_metrics_parse(const char *text, rpx__counters *out)
{
    size_t i;
    memset(out, 0, sizeof *out);
    out->hits = out->queries = NAN;
    out->pair = -1;
    for (i = 0; i < N_PAIRS; i++) {
        int bad_h = 0, bad_q = 0;
        double h = metric_sum(text, counter_pairs[i][0], &bad_h),
               q = metric_sum(text, counter_pairs[i][1], &bad_q);
        if ((bad_h && isnan(h)) || (bad_q && isnan(q))) { /* there, but no finite value */
            snprintf(out->why, sizeof out->why, "the server's %s is not a finite number (NaN or "
                     "Inf) in the answer; the counters cannot give a hit rate",
                     counter_pairs[i][bad_h && isnan(h) ? 0 : 1]);
            return -1;
        }
        if (!isnan(h) && !isnan(q)) {
            out->hits = h;
            out->queries = q;
            out->pair = (int)i;
            break;
        }
    }
    if (out->pair < 0) {
        snprintf(out->why, sizeof out->why, "no prefix-cache counters in the answer (looked for %s and %s, "
                 "and %s and %s)", counter_pairs[0][0], counter_pairs[0][1], counter_pairs[1][0],
                 counter_pairs[1][1]);
        return -1;
    }
    return 0;
}

json_t *rpx__server_metrics_json(const char *url, const rpx__counters *before,
                                 const rpx__counters *after, json_t *warnings)
{
    json_t *o = json_object();
    const char *why = before->pair < 0 ? before->why : after->pair < 0 ? after->why : NULL;
    double hits = NAN, queries = NAN, rate = NAN;
    char *shown = rpx_target_redact_spec(url); /* credentials never reach a report */
    if (shown) url = shown;
    json_object_set_new(o, "url", json_string(url));
    if (!why && before->pair != after->pair) why = "the counters changed names during the run";
    if (!why) {
        hits = after->hits - before->hits;
        queries = after->queries - before->queries;
        if (hits < 0 || queries < 0) why = "the counters went down during the run (the server restarted?)";
        else if (queries == 0) why = "no prefix-cache queries during the run";
        else rate = hits / queries;
    }
    json_object_set_new(o, "hits_counter", after->pair >= 0 ? json_string(counter_pairs[after->pair][0]) : json_null());
    json_object_set_new(o, "queries_counter", after->pair >= 0 ? json_string(counter_pairs[after->pair][1]) : json_null());
    json_object_set_new(o, "hits", isfinite(hits) && hits >= 0 ? json_real(hits) : json_null());
    json_object_set_new(o, "queries", isfinite(queries) && queries >= 0 ? json_real(queries) : json_null());
    json_object_set_new(o, "hit_rate", isfinite(rate) ? json_real(rate) : json_null());
    json_object_set_new(o, "reason", why ? json_string(why) : json_null());
    if (why) {
        char w[1400];
        snprintf(w, sizeof w, "--server-metrics %s: no prefix-cache hit rate: %s", url, why);
        json_array_append_new(warnings, json_string(w));
    } else if (rate > 0.01) {
        char w[1400];
        snprintf(w, sizeof w, "--server-metrics %s: the server's prefix cache answered %.1f%% of the "
                 "run's prefix lookups (%.0f of %.0f, above 1%%): the latencies measure its cache, "
                 "not the model's prefill; send distinct prompts (--body-template with --prompts, or "
                 "--nonce) or turn the server's prefix caching off",
                 url, 100 * rate, hits, queries);
        json_array_append_new(warnings, json_string(w));
    }
    free(shown);
    return o;
}
