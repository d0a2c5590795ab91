/* http_bodies.h — request bodies that vary (docs/audits.md): --body-template
 * FILE with --prompts FILE.jsonl (one field set per request, the prompts
 * cycled in file order or in a permutation drawn from --seed), --nonce FIELD
 * (a unique string in every body). The HTTP plugin builds each request's
 * body with this outside the timed span. Nothing prints. */
#ifndef RPX_HTTP_BODIES_H
#define RPX_HTTP_BODIES_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/error.h"
#include "rpxprof/target.h"

typedef struct rpx_bodies rpx_bodies;

/* *out NULL (and 0) when the options ask for no varying body. `fixed`: the
 * --body bytes (a --nonce without a template sets its field in them, so they
 * must be a JSON object). `first`: the bodies before this process (the cycle
 * goes on where the last process stopped). Errors name the file, the line
 * and the fix (RPX_EUSAGE). */
int rpx__bodies_open(const rpx_target_options *o, const char *fixed, size_t fixed_len, long first,
                     rpx_bodies **out, rpx_error *err);
/* The next request's body (malloc'ed, *len its size), or NULL out of memory. */
char *rpx__bodies_next(rpx_bodies *b, size_t *len);
/* The report's http.bodies: {template, prompts, prompt_field, order, seed,
 * nonce_field, prompts_lines, prompts_distinct, sent, distinct}. `sent` and
 * `distinct` count every body of the run up to this process's last. */
json_t *rpx__bodies_json(const rpx_bodies *b);
void rpx__bodies_free(rpx_bodies *b);
/* For the cache audit on a fixed --body (no template, prompts or nonce): where
 * a unique value makes each body distinct. *field: --prompt-field (default
 * "prompt") with *prefix 1 when the body holds a string there, else the
 * top-level "rpxprof_nonce" with *prefix 0; *how says which, for the report.
 * -1 and *why when the body is not a JSON object (or there is no --body). */
int rpx__bodies_fixed_nonce(const rpx_target_options *o, const char **field, int *prefix,
                            char *how, size_t how_size, char *why, size_t why_size);

#endif
