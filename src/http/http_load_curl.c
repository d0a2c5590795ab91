/* http_load_curl.c — the open-loop load's curl engine: curl's multi interface
 * (https, HTTP/2, proxies), at most `concurrency` requests in flight, driven by
 * one thread on the schedule of http_schedule.c. A request that finds
 * `concurrency` requests in flight waits, and the wait counts; one still
 * waiting --request-timeout after its time is dropped. When --duration and
 * --drain have passed, the requests in flight are cut (timed out) and the rest
 * dropped. http_load_sock.c is the other engine; neither calls the other. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_engines.h"

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

static int start(rpx_http_sched *l, CURLM *m, slot *s, CURL *tmpl, long long intended,
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
        if ((s->stream = rpx__sched_stream(l)) != NULL && rpx__capture_create(&s->cap) != 0)
            return -1;
    }
    if (rpx__sched_opts(l)->next_body) { /* this request's own body (copied by curl) */
        size_t len;
        char *b = rpx__sched_opts(l)->next_body(rpx__sched_opts(l)->body_ud, &len);
        if (!b) return -1;
        curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(s->easy, CURLOPT_COPYPOSTFIELDS, b);
        free(b);
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
    if (rpx__sched_opts(l)->h2c)
        curl_easy_setopt(s->easy, CURLOPT_HTTP_VERSION,
                         rpx__sched_sent_count(l) == 0 ? (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
                                                       : (long)CURL_HTTP_VERSION_2_0);
#endif
    if (curl_multi_add_handle(m, s->easy) != CURLM_OK) return -1;
    s->busy = 1;
    return 0;
}

/* A finished (or cut) transfer on slot s: its counts; 1: stop (too many failures). */
static int slot_done(rpx_http_sched *l, const rpx_run_config *cfg, rpx_run_result *res, slot *s,
                     CURLcode result, int cut)
{
    rpx_http_load_req r;
    memset(&r, 0, sizeof r);
    r.easy = s->easy;
    r.curl_res = cut ? CURLE_OPERATION_TIMEDOUT : result;
    r.status = cut ? 0 : s->status;
    r.sent_ns = s->sent;
    r.first_ns = s->first;
    r.end_ns = !cut && s->last ? s->last : rpx__load_now_ns();
    r.connect_ns = -1;
    r.ok = !cut && r.curl_res == CURLE_OK && s->status >= 200 && s->status <= 299;
    r.capture = s->cap;
    r.cut = cut;
    if (cut) r.error_text = "still unanswered when --duration and --drain ended";
    return rpx__sched_finished(l, s->intended, cfg, res, &r);
}

int rpx__http_curl_run(rpx_http_sched *l, CURL *tmpl, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_error *err)
{
    const long n = rpx__sched_scheduled(l), c = rpx__sched_concurrency(l);
    const long long drop_ns = (long long)(rpx__sched_opts(l)->request_timeout_s * 1e9);
    const long long cut_ns = rpx__sched_cut_ns(l);
    CURLM *m = curl_multi_init();
    slot *slots = calloc((size_t)c, sizeof *slots);
    slot **free_slots = malloc((size_t)c * sizeof *free_slots); /* a stack of idle slots */
    long in_flight = 0, i, n_free = c;
    long long free_since = 0;     /* when free_slots last went from empty to not */
    int rc = 0;

    if (!m || !slots || !free_slots) {
        if (m) curl_multi_cleanup(m);
        free(slots);
        free(free_slots);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory for %ld connections", c);
    }
    for (i = 0; i < c; i++) free_slots[i] = &slots[c - 1 - i];
    while (rpx__sched_done_count(l) < n) {
        long long now = rpx__load_now_ns(), due;
        int running = 0, left;
        long wait_ms;
        CURLMsg *msg;
        if (cfg->stop && *cfg->stop) {
            res->status = RPX_RUN_INTERRUPTED;
            break;
        }
        if (now >= cut_ns) { /* --duration and --drain are over */
            for (i = 0; i < c; i++) {
                if (!slots[i].busy) continue;
                curl_multi_remove_handle(m, slots[i].easy);
                slots[i].busy = 0;
                in_flight--;
                slot_done(l, cfg, res, &slots[i], CURLE_OPERATION_TIMEDOUT, 1);
            }
            rpx__sched_drop_rest(l, cfg);
            break;
        }
        /* sends that are due: a free slot each, or they wait (and may be dropped) */
        while ((due = rpx__sched_due(l)) <= now) {
            if (in_flight < c) {
                slot *s = n_free > 0 ? free_slots[--n_free] : NULL;
                if (!s || start(l, m, s, tmpl, due, now) != 0) {
                    rc = rpx_error_set(err, RPX_ENOMEM, "cannot start request %ld",
                                       rpx__sched_sent_count(l));
                    goto out;
                }
                rpx__sched_sent(l, now, free_since, ++in_flight);
            } else if (now - due > drop_ns) {
                rpx__sched_dropped(l, cfg);
            } else {
                break;
            }
        }
        curl_multi_perform(m, &running);
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            slot *s = NULL;
            CURL *easy = msg->easy_handle;
            CURLcode result = msg->data.result;
            if (msg->msg != CURLMSG_DONE) continue;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&s);
            rc = slot_done(l, cfg, res, s, result, 0);
            curl_multi_remove_handle(m, easy);
            s->busy = 0;
            if (n_free == 0 || in_flight == c) free_since = rpx__load_now_ns();
            free_slots[n_free++] = s;
            in_flight--;
            if (rc) {
                rc = 0;
                goto out;
            }
        }
        if (rpx__sched_done_count(l) >= n) break;
        /* sleep until the next send is due, curl has work, or the run's end; under 1 ms:
         * spin */
        now = rpx__load_now_ns();
        due = rpx__sched_due(l);
        if (due != LLONG_MAX && in_flight < c)
            wait_ms = due - now <= 1000000LL ? 0 : (long)((due - now) / 1000000LL) - 1;
        else if (due != LLONG_MAX)
            wait_ms = due + drop_ns - now <= 0 ? 0 : (long)((due + drop_ns - now) / 1000000LL);
        else
            wait_ms = 100;
        if (wait_ms > 100) wait_ms = 100;
        if (cut_ns != LLONG_MAX && wait_ms > (cut_ns - now) / 1000000LL)
            wait_ms = cut_ns - now <= 0 ? 0 : (long)((cut_ns - now) / 1000000LL);
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
