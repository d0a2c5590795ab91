/* layers_view.c — owns the per-operator-type words of the report's `layers`
 * block (--layers, layers_view.h) for compare (two reports side by side) and
 * aggregate (one line per model). The run's own summary lines are summary.c's.
 * Numbers go through the summary's one rule (rpx_format_3g). */
#include "report/layers_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/summary.h"

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const json_t *rpx__layers_op(const json_t *layers, const char *op)
{
    const json_t *g;
    size_t i;
    json_array_foreach(json_object_get(layers, "by_op_type"), i, g) {
        const char *t = json_string_value(json_object_get(g, "op_type"));
        if (t && op && strcmp(t, op) == 0) return g;
    }
    return NULL;
}

void rpx__layers_op_words(const json_t *op, char *buf, size_t size)
{
    char a[40], b[40];
    const char *t = json_string_value(json_object_get(op, "op_type"));
    snprintf(buf, size, "%s %s %% of the time at %s of its bound", t ? t : "?",
             rpx_format_3g(a, sizeof a, 100 * num(op, "share")),
             rpx_format_3g(b, sizeof b, num(op, "achieved")));
}


static json_t *side(const json_t *op)
{
    if (!op) return json_null();
    return json_pack("{s:O,s:O,s:O}", "time_ms", json_object_get(op, "time_ms"), "share",
                     json_object_get(op, "share"), "achieved", json_object_get(op, "achieved"));
}

json_t *rpx__layers_compare_json(const json_t *base, const json_t *new_report)
{
    const json_t *lb = json_object_get(base, "layers"), *ln = json_object_get(new_report, "layers");
    const json_t *sides[2] = {lb, ln}, *g;
    json_t *out;
    size_t i, k;
    int j;
    if (!json_is_object(lb) || !json_is_object(ln)) return json_null();
    out = json_array();
    for (j = 0; j < 2; j++) /* base's operator types first, in its order, then new's others */
        json_array_foreach(json_object_get(sides[j], "by_op_type"), i, g) {
            const char *op = json_string_value(json_object_get(g, "op_type"));
            const json_t *have;
            int seen = 0;
            json_array_foreach(out, k, have)
                seen |= op && strcmp(json_string_value(json_object_get(have, "op_type")), op) == 0;
            if (!op || seen) continue;
            json_array_append_new(out, json_pack("{s:s,s:o,s:o}", "op_type", op, "base",
                                                 side(rpx__layers_op(lb, op)), "new",
                                                 side(rpx__layers_op(ln, op))));
        }
    return out;
}

void rpx__layers_compare_text(rpx_strbuf *s, const json_t *cmp)
{
    const json_t *g;
    size_t i;
    char a[40], b[40], c[40], d[40];
    if (!json_array_size(cmp)) return;
    rpx__sb_str(s, "\nper operator type (--layers; share of the profiled time, fraction of its "
                   "bound achieved):\n");
    json_array_foreach(cmp, i, g) {
        const json_t *bs = json_object_get(g, "base"), *ns = json_object_get(g, "new");
        const char *op = json_string_value(json_object_get(g, "op_type"));
        rpx__sb_printf(s, "  %-20.40s base %s %% at %s of its bound, new %s %% at %s\n", op,
                       json_is_object(bs) ? rpx_format_3g(a, sizeof a, 100 * num(bs, "share")) : "n/a",
                       json_is_object(bs) ? rpx_format_3g(b, sizeof b, num(bs, "achieved")) : "n/a",
                       json_is_object(ns) ? rpx_format_3g(c, sizeof c, 100 * num(ns, "share")) : "n/a",
                       json_is_object(ns) ? rpx_format_3g(d, sizeof d, num(ns, "achieved")) : "n/a");
    }
}
