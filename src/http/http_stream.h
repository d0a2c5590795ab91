/* http_stream.h — streamed HTTP responses (Server-Sent Events, lines,
 * chunks): per-event timestamps and the report's http.streaming section.
 * Internal to librpxprof-http.so.
 *
 * Lifecycle: rpx__stream_create → per call: rpx__stream_begin (before the
 * call), rpx__stream_header / rpx__stream_data (curl's callbacks, inside the
 * timed span: a timestamp and a copy of the bytes, nothing else),
 * rpx__stream_end (after the call, outside the timed span: the events are
 * parsed and the per-response figures recorded) → rpx__stream_json →
 * rpx__stream_destroy. */
#ifndef RPX_HTTP_STREAM_H
#define RPX_HTTP_STREAM_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/error.h"

typedef struct rpx_http_stream rpx_http_stream;

/* mode: NULL (a response is a stream when its Content-Type is
 * text/event-stream), "sse", "lines" or "chunked". tokens_field: NULL
 * (usage.completion_tokens) or a dotted path to a number in each event's JSON.
 * keep_events: raw event timestamps kept in the report, at most (0: 1000, < 0: none).
 * slo: NULL or "ttft=500ms,tpot=50ms,e2e=2s". Errors name the option. */
int rpx__stream_create(const char *mode, const char *tokens_field, long keep_events,
                       const char *slo, rpx_http_stream **out, rpx_error *err);
void rpx__stream_destroy(rpx_http_stream *s);

void rpx__stream_begin(rpx_http_stream *s, long long t_start_ns);
/* Every header line of the response (a status line starts a new response). */
void rpx__stream_header(rpx_http_stream *s, const char *line, size_t len);
void rpx__stream_data(rpx_http_stream *s, const char *data, size_t len, long long t_ns);
/* timed: a timed call; ok: it succeeded (2xx). */
void rpx__stream_end(rpx_http_stream *s, int timed, int ok);

/* Several responses at once (the open-loop engines): one capture per request
 * in flight, the same steps; the figures go into the stream's statistics.
 * Under --rate t_start_ns is the request's intended send time. */
typedef struct rpx_http_capture rpx_http_capture;
void rpx__stream_set_open_loop(rpx_http_stream *s); /* "timed_from": "intended_send" */
int rpx__capture_create(rpx_http_capture **out);
void rpx__capture_destroy(rpx_http_capture *c);
void rpx__capture_begin(const rpx_http_stream *s, rpx_http_capture *c, long long t_start_ns);
void rpx__capture_header(const rpx_http_stream *s, rpx_http_capture *c, const char *line,
                         size_t len);
void rpx__capture_data(rpx_http_capture *c, const char *data, size_t len, long long t_ns);
void rpx__capture_end(rpx_http_stream *s, const rpx_http_capture *c, int timed, int ok);

/* The http.streaming section (new reference): null when no response was a
 * stream and no --stream was given. */
json_t *rpx__stream_json(const rpx_http_stream *s);

#endif
