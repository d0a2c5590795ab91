/* http_stream.c — streamed HTTP responses: the events of each response
 * (Server-Sent Events, lines, or chunks as they arrive), their timestamps,
 * and the report's http.streaming section (TTFT, ITL, TPOT, end to end,
 * events and tokens per response, output tokens/s, goodput under SLOs).
 *
 * Inside the timed call only a timestamp is taken and the bytes are copied
 * (curl's write callback); the events are parsed after the call. An event's
 * time is the arrival of the piece of body that completed it. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http_stream.h"
#include "rpxprof/latency.h"
#include "rpxprof/report.h"
#include "rpxprof/target.h"

enum { MODE_AUTO, MODE_SSE, MODE_LINES, MODE_CHUNKED };
static const char *const mode_names[] = {"auto", "sse", "lines", "chunked"};

#define STREAM_MAX_BYTES ((size_t)64 << 20) /* one response's body kept for parsing */
#define DEFAULT_KEEP 1000

enum { ST_TTFT, ST_ITL, ST_TPOT, ST_E2E, ST_EVENTS, ST_CONTENT, ST_TOKENS, ST_TPS, N_ST };
enum { TOK_USAGE, TOK_FIELD, TOK_EVENTS, N_TOK };
static const char *const tok_names[N_TOK] = {"usage", "tokens_field", "events"};

typedef struct piece {
    size_t end;                   /* offset just past the piece */
    long long t_ns;
} piece;

/* One response being received: its bytes and their arrival times. The
 * closed loop has one (the stream's own); the open-loop engines one per
 * request in flight. */
struct rpx_http_capture {
    long long t_start_ns;
    int is_stream;                /* this response is parsed as a stream */
    int detected;                 /* from its Content-Type */
    char *buf;
    size_t len, cap;
    int overflow;
    piece *pieces;
    size_t n_pieces, cap_pieces;
};

struct rpx_http_stream {
    int mode;
    char *tokens_field;           /* dotted path */
    int tokens_field_given;
    long keep;
    double slo_ttft_ms, slo_tpot_ms, slo_e2e_ms; /* NaN: none */
    int has_slo;
    rpx_http_capture own;         /* one call after another: the response */
    int open_loop;                /* --rate: times from each request's intended send */
    /* over the timed calls */
    long calls;                   /* timed calls seen (the index of kept events) */
    long responses, without_content, done_marker, truncated, good;
    long tok_count[N_TOK];
    long detected_responses;
    rpx_latency *st[N_ST];
    json_t *kept;                 /* [{call, t_ms: [...], content: [...]}] */
    long kept_events, not_kept;
};

/* --slo, parsed by the library's rpx_http_slo_parse (the CLI checks it with the same) */
static int parse_slo(rpx_http_stream *s, const char *slo, rpx_error *err)
{
    int rc = rpx_http_slo_parse(slo, &s->slo_ttft_ms, &s->slo_tpot_ms, &s->slo_e2e_ms, err);
    s->has_slo = rc == 0;
    return rc;
}

int rpx__stream_create(const char *mode, const char *tokens_field, long keep_events,
                       const char *slo, rpx_http_stream **out, rpx_error *err)
{
    rpx_http_stream *s = calloc(1, sizeof *s);
    int i, rc;
    *out = NULL;
    if (!s) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    *out = s;
    s->mode = MODE_AUTO;
    if (mode) {
        for (i = MODE_SSE; i <= MODE_CHUNKED; i++)
            if (strcmp(mode, mode_names[i]) == 0) s->mode = i;
        if (s->mode == MODE_AUTO)
            return rpx_error_set(err, RPX_EINVAL,
                                 "--stream %.40s: expected sse, lines or chunked", mode);
    }
    s->tokens_field_given = tokens_field != NULL;
    if (tokens_field) {
        size_t n = strlen(tokens_field);
        if (n == 0 || tokens_field[0] == '.' || tokens_field[n - 1] == '.' ||
            strstr(tokens_field, ".."))
            return rpx_error_set(err, RPX_EINVAL,
                                 "--tokens-field '%.80s': expected a dotted path to a number "
                                 "in each event's JSON, e.g. usage.output_tokens",
                                 tokens_field);
    }
    s->tokens_field = strdup(tokens_field ? tokens_field : "usage.completion_tokens");
    s->keep = keep_events < 0 ? 0 : keep_events == 0 ? DEFAULT_KEEP : keep_events;
    s->slo_ttft_ms = s->slo_tpot_ms = s->slo_e2e_ms = (double)NAN;
    s->kept = json_array();
    if (!s->tokens_field || !s->kept) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < N_ST; i++)
        if (rpx_latency_create(0, &s->st[i]) != 0)
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (slo && (rc = parse_slo(s, slo, err)) != 0) return rc;
    return 0;
}

void rpx__stream_destroy(rpx_http_stream *s)
{
    int i;
    if (!s) return;
    free(s->tokens_field);
    free(s->own.buf);
    free(s->own.pieces);
    json_decref(s->kept);
    for (i = 0; i < N_ST; i++) rpx_latency_destroy(s->st[i]);
    free(s);
}

/* --- inside the call: timestamps and bytes ------------------------------------ */

int rpx__capture_create(rpx_http_capture **out)
{
    return (*out = calloc(1, sizeof **out)) != NULL ? 0 : -1;
}

void rpx__capture_destroy(rpx_http_capture *c)
{
    if (!c) return;
    free(c->buf);
    free(c->pieces);
    free(c);
}

void rpx__capture_begin(const rpx_http_stream *s, rpx_http_capture *c, long long t_start_ns)
{
    c->t_start_ns = t_start_ns;
    c->len = c->n_pieces = 0;
    c->overflow = 0;
    c->is_stream = s->mode != MODE_AUTO;
    c->detected = 0;
}

void rpx__capture_header(const rpx_http_stream *s, rpx_http_capture *c, const char *line,
                         size_t len)
{
    static const char ct[] = "content-type:";
    size_t i = sizeof ct - 1;
    if (len > 5 && memcmp(line, "HTTP/", 5) == 0) { /* a new response (1xx, ...) */
        c->len = c->n_pieces = 0;
        c->is_stream = s->mode != MODE_AUTO;
        c->detected = 0;
        return;
    }
    if (s->mode != MODE_AUTO || len < i || strncasecmp(line, ct, i) != 0) return;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    if (len - i >= 17 && strncasecmp(line + i, "text/event-stream", 17) == 0)
        c->is_stream = c->detected = 1;
}

void rpx__capture_data(rpx_http_capture *c, const char *data, size_t len, long long t_ns)
{
    if (!c->is_stream || c->overflow || len == 0) return;
    if (c->len + len > STREAM_MAX_BYTES) {
        c->overflow = 1;
        return;
    }
    if (c->len + len > c->cap) {
        size_t cap = c->cap ? c->cap : 65536;
        char *b;
        while (cap < c->len + len) cap *= 2;
        if (!(b = realloc(c->buf, cap))) {
            c->overflow = 1;
            return;
        }
        c->buf = b;
        c->cap = cap;
    }
    if (c->n_pieces == c->cap_pieces) {
        size_t cap = c->cap_pieces ? c->cap_pieces * 2 : 1024;
        piece *p = realloc(c->pieces, cap * sizeof *p);
        if (!p) {
            c->overflow = 1;
            return;
        }
        c->pieces = p;
        c->cap_pieces = cap;
    }
    memcpy(c->buf + c->len, data, len);
    c->len += len;
    c->pieces[c->n_pieces].end = c->len;
    c->pieces[c->n_pieces].t_ns = t_ns;
    c->n_pieces++;
}

void rpx__stream_set_open_loop(rpx_http_stream *s)
{
    s->open_loop = 1;
}

void rpx__stream_begin(rpx_http_stream *s, long long t_start_ns)
{
    rpx__capture_begin(s, &s->own, t_start_ns);
}

void rpx__stream_header(rpx_http_stream *s, const char *line, size_t len)
{
    rpx__capture_header(s, &s->own, line, len);
}

void rpx__stream_data(rpx_http_stream *s, const char *data, size_t len, long long t_ns)
{
    rpx__capture_data(&s->own, data, len, t_ns);
}

/* --- after the call: events ------------------------------------------------------ */

typedef struct response {
    long events, content;
    long long first_ns, last_content_ns, prev_ns;
    double tokens;                /* from the JSON; NaN: none seen */
    int done;
    json_t *t_ms, *flags;         /* kept timestamps, or NULL */
} response;

static int nonempty_string(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) && json_string_length(v) > 0;
}

/* An event carries content unless it is an OpenAI-style chunk whose choices
 * carry no text (the role-only first chunk, the usage-only last one). */
static int json_has_content(json_t *j)
{
    json_t *choices = json_is_object(j) ? json_object_get(j, "choices") : NULL, *c;
    size_t i;
    if (!json_is_array(choices)) return 1;
    json_array_foreach(choices, i, c) {
        json_t *delta = json_object_get(c, "delta");
        json_t *tools = json_object_get(delta, "tool_calls");
        if (nonempty_string(c, "text") || nonempty_string(delta, "content") ||
            nonempty_string(delta, "reasoning_content") || nonempty_string(delta, "reasoning") ||
            nonempty_string(json_object_get(c, "message"), "content") ||
            (json_is_array(tools) && json_array_size(tools) > 0))
            return 1;
    }
    return 0;
}

static double json_path_number(json_t *j, const char *path)
{
    char key[128];
    const char *p = path;
    while (j && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof key) return (double)NAN;
        memcpy(key, p, n);
        key[n] = '\0';
        j = json_is_object(j) ? json_object_get(j, key) : NULL;
        p = dot ? dot + 1 : p + n;
    }
    return json_is_number(j) ? json_number_value(j) : (double)NAN;
}

static long long time_at(const rpx_http_capture *c, size_t offset, size_t *hint)
{
    while (*hint + 1 < c->n_pieces && c->pieces[*hint].end <= offset) (*hint)++;
    return c->n_pieces ? c->pieces[*hint].t_ns : c->t_start_ns;
}

static void event(rpx_http_stream *s, const rpx_http_capture *c, response *r, const char *data,
                  size_t len, long long t_ns)
{
    int content = 1;
    if (r->done) return; /* nothing counts after [DONE] */
    while (len && (data[len - 1] == '\n' || data[len - 1] == '\r')) len--;
    if (s->mode != MODE_CHUNKED) {
        json_t *j;
        if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
            r->done = 1;
            return;
        }
        if (len && (data[0] == '{' || data[0] == '[') &&
            (j = json_loadb(data, len, JSON_DECODE_ANY, NULL)) != NULL) {
            double tok = json_path_number(j, s->tokens_field);
            if (tok == tok && tok >= 0) r->tokens = tok;
            content = json_has_content(j);
            json_decref(j);
        }
    }
    r->events++;
    if (r->t_ms && s->kept_events < s->keep) {
        json_array_append_new(r->t_ms, json_real((double)(t_ns - c->t_start_ns) / 1e6));
        json_array_append_new(r->flags, json_boolean(content));
        s->kept_events++;
    } else {
        s->not_kept++;
    }
    if (!content) return;
    if (r->content == 0) r->first_ns = t_ns;
    else rpx_latency_add_ns(s->st[ST_ITL], (double)(t_ns - r->prev_ns));
    r->prev_ns = r->last_content_ns = t_ns;
    r->content++;
}

static void parse_sse(rpx_http_stream *s, const rpx_http_capture *c, response *r)
{
    /* data lines joined with '\n'; a blank line dispatches (SSE); comments ignored */
    size_t pos = 0, hint = 0, dlen = 0, dcap = 256;
    char *d = malloc(dcap);
    int has_data = 0;
    if (!d) return;
    while (pos < c->len) {
        const char *line = c->buf + pos, *nl = memchr(line, '\n', c->len - pos);
        size_t n = nl ? (size_t)(nl - line) : c->len - pos, end = pos + n;
        if (n && line[n - 1] == '\r') n--;
        if (n == 0) {
            if (has_data) event(s, c, r, d, dlen, time_at(c, end, &hint));
            dlen = 0;
            has_data = 0;
        } else if (n >= 5 && memcmp(line, "data:", 5) == 0) {
            const char *v = line + 5;
            size_t vn = n - 5;
            if (vn && *v == ' ') v++, vn--;
            if (dlen + vn + 2 > dcap) {
                char *bigger;
                while (dlen + vn + 2 > dcap) dcap *= 2;
                if (!(bigger = realloc(d, dcap))) break;
                d = bigger;
            }
            if (has_data) d[dlen++] = '\n';
            memcpy(d + dlen, v, vn);
            dlen += vn;
            has_data = 1;
        }
        pos = nl ? end + 1 : c->len;
    }
    /* a last event without its blank line: dispatched at the end of the body */
    if (has_data) event(s, c, r, d, dlen, time_at(c, c->len ? c->len - 1 : 0, &hint));
    free(d);
}

static void parse_lines(rpx_http_stream *s, const rpx_http_capture *c, response *r)
{
    size_t pos = 0, hint = 0;
    while (pos < c->len) {
        const char *line = c->buf + pos, *nl = memchr(line, '\n', c->len - pos);
        size_t n = nl ? (size_t)(nl - line) : c->len - pos, end = pos + n;
        size_t m = n;
        while (m && isspace((unsigned char)line[m - 1])) m--;
        if (m) event(s, c, r, line, m, time_at(c, nl ? end : c->len - 1, &hint));
        pos = nl ? end + 1 : c->len;
    }
}

void rpx__capture_end(rpx_http_stream *s, const rpx_http_capture *c, int timed, int ok)
{
    response r;
    long long end_ns;
    double ttft, e2e, tokens, tpot = (double)NAN;
    int src, good = 1;
    size_t i;
    if (!timed) return;
    s->calls++;
    if (!ok || !c->is_stream) return;
    if (c->overflow) {
        s->truncated++;
        return;
    }
    memset(&r, 0, sizeof r);
    r.tokens = (double)NAN;
    if (s->kept_events < s->keep) {
        r.t_ms = json_array();
        r.flags = json_array();
    }
    if (s->mode == MODE_CHUNKED)
        for (i = 0; i < c->n_pieces; i++)
            event(s, c, &r, c->buf + (i ? c->pieces[i - 1].end : 0),
                  c->pieces[i].end - (i ? c->pieces[i - 1].end : 0), c->pieces[i].t_ns);
    else if (s->mode == MODE_LINES)
        parse_lines(s, c, &r);
    else
        parse_sse(s, c, &r);
    if (r.t_ms && json_array_size(r.t_ms) > 0) {
        json_t *o = json_object();
        json_object_set_new(o, "call", json_integer(s->calls - 1));
        json_object_set_new(o, "t_ms", r.t_ms);
        json_object_set_new(o, "content", r.flags);
        json_array_append_new(s->kept, o);
    } else {
        json_decref(r.t_ms);
        json_decref(r.flags);
    }
    s->responses++;
    if (c->detected) s->detected_responses++;
    if (r.done) s->done_marker++;
    end_ns = c->n_pieces ? c->pieces[c->n_pieces - 1].t_ns : c->t_start_ns;
    e2e = (double)(end_ns - c->t_start_ns);
    rpx_latency_add_ns(s->st[ST_E2E], e2e);
    rpx_latency_add_ns(s->st[ST_EVENTS], 1e6 * (double)r.events);
    rpx_latency_add_ns(s->st[ST_CONTENT], 1e6 * (double)r.content);
    if (r.content == 0) {
        s->without_content++;
        return; /* no first token: not good under any SLO */
    }
    ttft = (double)(r.first_ns - c->t_start_ns);
    rpx_latency_add_ns(s->st[ST_TTFT], ttft);
    if (r.tokens == r.tokens) {
        src = s->tokens_field_given ? TOK_FIELD : TOK_USAGE;
        tokens = r.tokens;
    } else {
        src = TOK_EVENTS;
        tokens = (double)r.content;
    }
    s->tok_count[src]++;
    rpx_latency_add_ns(s->st[ST_TOKENS], 1e6 * tokens);
    if (e2e > 0) rpx_latency_add_ns(s->st[ST_TPS], 1e6 * tokens / (e2e / 1e9));
    if (tokens > 1) {
        tpot = (e2e - ttft) / (tokens - 1);
        rpx_latency_add_ns(s->st[ST_TPOT], tpot);
    }
    if (!s->has_slo) return;
    /* vLLM: a single-token response's TPOT counts as 0 */
    if (s->slo_ttft_ms == s->slo_ttft_ms && ttft / 1e6 > s->slo_ttft_ms) good = 0;
    if (s->slo_tpot_ms == s->slo_tpot_ms && tpot == tpot && tpot / 1e6 > s->slo_tpot_ms) good = 0;
    if (s->slo_e2e_ms == s->slo_e2e_ms && e2e / 1e6 > s->slo_e2e_ms) good = 0;
    s->good += good;
}

void rpx__stream_end(rpx_http_stream *s, int timed, int ok)
{
    rpx__capture_end(s, &s->own, timed, ok);
}

/* --- the section ------------------------------------------------------------------- */

/* A count's or a rate's statistics: the latency object's keys without _ms. */
static json_t *plain_stats(const rpx_latency *lat)
{
    json_t *ms = rpx_latency_json(lat), *o = json_object(), *v;
    const char *k;
    if (!ms || !o) {
        json_decref(ms);
        json_decref(o);
        return NULL;
    }
    json_object_foreach(ms, k, v) {
        char key[16];
        size_t n = strlen(k);
        snprintf(key, sizeof key, "%.*s", (int)(n > 3 ? n - 3 : n), k);
        json_object_set(o, key, v);
    }
    json_decref(ms);
    return o;
}

static json_t *samples_ms(const rpx_latency *lat)
{
    json_t *a = json_array();
    const double *x = rpx_latency_samples_ns(lat);
    size_t i, n = rpx_latency_count(lat);
    for (i = rpx_latency_first_used(lat); a && i < n; i++)
        json_array_append_new(a, json_real(x[i] / 1e6));
    return a ? a : json_null();
}

static json_t *slo_ms(double v)
{
    return v == v ? json_real(v) : json_null();
}

json_t *rpx__stream_json(const rpx_http_stream *s)
{
    json_t *o, *counts, *g;
    const char *src = NULL;
    int i, kinds = 0;
    if (s->mode == MODE_AUTO && s->responses == 0 && s->truncated == 0) return json_null();
    o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "mode", json_string(s->mode != MODE_AUTO ? mode_names[s->mode]
                                                                   : "sse"));
    json_object_set_new(o, "mode_from", json_string(s->mode != MODE_AUTO
                                                        ? "--stream"
                                                        : "content-type text/event-stream"));
    json_object_set_new(o, "timed_from", json_string(s->open_loop ? "intended_send"
                                                                  : "call_start"));
    json_object_set_new(o, "responses", json_integer(s->responses));
    json_object_set_new(o, "responses_without_content", json_integer(s->without_content));
    json_object_set_new(o, "responses_ended_by_done", json_integer(s->done_marker));
    json_object_set_new(o, "responses_too_large", json_integer(s->truncated));
    json_object_set_new(o, "ttft_ms", rpx_latency_json(s->st[ST_TTFT]));
    json_object_set_new(o, "itl_ms", rpx_latency_json(s->st[ST_ITL]));
    json_object_set_new(o, "tpot_ms", rpx_latency_json(s->st[ST_TPOT]));
    json_object_set_new(o, "e2e_ms", rpx_latency_json(s->st[ST_E2E]));
    /* under an open-loop load, every request's TTFT and TPOT (what a capacity search
     * bounds their percentiles from: src/sweep/capacity.c) */
    json_object_set_new(o, "ttft_samples_ms", s->open_loop ? samples_ms(s->st[ST_TTFT]) : json_null());
    json_object_set_new(o, "tpot_samples_ms", s->open_loop ? samples_ms(s->st[ST_TPOT]) : json_null());
    json_object_set_new(o, "events_per_response", plain_stats(s->st[ST_EVENTS]));
    json_object_set_new(o, "content_events_per_response", plain_stats(s->st[ST_CONTENT]));
    json_object_set_new(o, "tokens_per_response", plain_stats(s->st[ST_TOKENS]));
    json_object_set_new(o, "output_tokens_per_s", plain_stats(s->st[ST_TPS]));
    counts = json_object();
    for (i = 0; i < N_TOK; i++) {
        if (s->tok_count[i]) {
            kinds++;
            src = tok_names[i];
        }
        json_object_set_new(counts, tok_names[i], json_integer(s->tok_count[i]));
    }
    json_object_set_new(o, "tokens_source", kinds == 0 ? json_null()
                                            : kinds == 1 ? json_string(src)
                                                         : json_string("mixed"));
    json_object_set_new(o, "tokens_source_counts", counts);
    json_object_set_new(o, "tokens_field", json_string(s->tokens_field));
    if (s->has_slo) {
        json_t *slo = json_object();
        g = json_object();
        json_object_set_new(slo, "ttft_ms", slo_ms(s->slo_ttft_ms));
        json_object_set_new(slo, "tpot_ms", slo_ms(s->slo_tpot_ms));
        json_object_set_new(slo, "e2e_ms", slo_ms(s->slo_e2e_ms));
        json_object_set_new(g, "slo", slo);
        json_object_set_new(g, "good", json_integer(s->good));
        json_object_set_new(g, "requests", json_integer(s->calls));
        if (rpx_latency_count(s->st[ST_TTFT]) == 0) { /* nothing to judge: not 0 % */
            json_object_set_new(g, "share", json_null());
            json_object_set_new(g, "share_reason",
                                json_string("no time to first token was measured (no response "
                                            "streamed content), so no request could be judged "
                                            "against the SLOs"));
        } else {
            json_object_set_new(g, "share", s->calls ? json_real((double)s->good / (double)s->calls)
                                                     : json_null());
        }
        json_object_set_new(o, "goodput", g);
    } else {
        json_object_set_new(o, "goodput", json_null());
    }
    json_object_set_new(o, "keep_events", json_integer(s->keep));
    json_object_set(o, "events_kept", s->kept);
    json_object_set_new(o, "events_not_kept", json_integer(s->not_kept));
    return o;
}
