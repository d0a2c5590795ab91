/* layers_view.h — the report's `layers` block (--layers) as words for two
 * reports or many (the summary's lines are summary.c's): the per-operator-type sentence that `compare` and
 * `aggregate` print ("Conv 61 % of the time at 0.42 of its bound"). Pure
 * functions of the report's JSON (layers_view.c). */
#ifndef RPX_REPORT_LAYERS_VIEW_H
#define RPX_REPORT_LAYERS_VIEW_H

#include <jansson.h>
#include <stddef.h>

#include "common/strbuf.h"

/* "Conv 61 % of the time at 0.42 of its bound" for one by_op_type entry
 * (the achieved fraction "n/a" when unknown). */
void rpx__layers_op_words(const json_t *op, char *buf, size_t size);

/* The by_op_type entry of `layers` for op_type `op`, or NULL. */
const json_t *rpx__layers_op(const json_t *layers, const char *op);

/* compare: both reports' by_op_type side by side, [{"op_type", "base": {time_ms, share,
 * achieved}|null, "new": ...}] (base's types first), or a JSON null when either report
 * has no layers. A new reference. */
json_t *rpx__layers_compare_json(const json_t *base, const json_t *new_report);
/* Its lines in compare's text ("  Conv  base 61 % at 0.42 of its bound, new 58 % at 0.45");
 * nothing for an empty or null array. */
void rpx__layers_compare_text(rpx_strbuf *s, const json_t *cmp);

#endif
