/* layers_view.c — owns the words of the report's `layers` block (--layers,
 * layers_view.h): the summary's lines (the ten slowest rows, the share of the
 * time spent below 10 % of the bound, the profiler's overhead) and the
 * per-operator-type sentence of compare and aggregate. Numbers go through the
 * summary's one rule (rpx_format_3g). */
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

/* Row indices by time, slowest first (the unattributed row too: it is time). */
static int by_time_desc(const void *x, const void *y)
{
    double a = num(*(json_t *const *)x, "time_ms"), b = num(*(json_t *const *)y, "time_ms");
    if (isnan(a)) a = -1;
    if (isnan(b)) b = -1;
    return (a < b) - (a > b);
}

static void line_row(rpx_strbuf *s, const json_t *r)
{
    char t[40], lo[40], hi[40], sh[40], ac[40];
    const json_t *ci = json_object_get(r, "time_ci_ms");
    const char *op = json_string_value(json_object_get(r, "op_type"));
    rpx__sb_printf(s, "    %-28.60s %8s ms", json_string_value(json_object_get(r, "name")),
                   rpx_format_3g(t, sizeof t, num(r, "time_ms")));
    if (json_is_array(ci))
        rpx__sb_printf(s, " [%s, %s]", rpx_format_3g(lo, sizeof lo, json_number_value(json_array_get(ci, 0))),
                       rpx_format_3g(hi, sizeof hi, json_number_value(json_array_get(ci, 1))));
    rpx__sb_printf(s, "  %s %%", rpx_format_3g(sh, sizeof sh, 100 * num(r, "share")));
    if (json_is_number(json_object_get(r, "achieved")))
        rpx__sb_printf(s, "  at %s of its bound", rpx_format_3g(ac, sizeof ac, num(r, "achieved")));
    else
        rpx__sb_str(s, "  bound n/a");
    rpx__sb_printf(s, "  (%s)\n", op ? op : "no node accounts for it");
}

void rpx__layers_summary(rpx_strbuf *s, const json_t *layers)
{
    const json_t *rows = json_object_get(layers, "rows");
    const char *rt = json_string_value(json_object_get(layers, "runtime"));
    const char *dev = json_string_value(json_object_get(layers, "device"));
    const char *note = json_string_value(json_object_get(layers, "overhead_note"));
    size_t n = json_array_size(rows), i;
    const json_t **order;
    char a[40], b[40], c[40];
    if (!json_is_object(layers)) return;
    rpx__sb_printf(s, "  layers%s%s%s: %lld profiled calls x %lld processes, rows sum to %s ms "
                      "(unprofiled p50 %s ms, overhead %s %%)\n",
                   rt ? " (" : "", rt ? rt : "", rt ? ")" : "",
                   (long long)json_integer_value(json_object_get(layers, "profiled_calls")),
                   (long long)json_integer_value(json_object_get(layers, "processes")),
                   rpx_format_3g(a, sizeof a, num(layers, "total_ms")),
                   rpx_format_3g(b, sizeof b, num(layers, "unprofiled_p50_ms")),
                   rpx_format_3g(c, sizeof c, 100 * num(layers, "overhead")));
    order = n ? malloc(n * sizeof *order) : NULL;
    for (i = 0; order && i < n; i++) order[i] = json_array_get(rows, i);
    if (order) qsort(order, n, sizeof *order, by_time_desc);
    if (n) rpx__sb_printf(s, "  the %sslowest rows (median ms [interval], share, achieved):\n",
                          n > 10 ? "ten " : "");
    for (i = 0; order && i < n && i < 10; i++) line_row(s, order[i]);
    free(order);
    if (json_is_number(json_object_get(layers, "below_10pct_share")))
        rpx__sb_printf(s, "  %s %% of the layers' time runs below 10 %% of its bound%s%s%s\n",
                       rpx_format_3g(a, sizeof a, 100 * num(layers, "below_10pct_share")),
                       dev ? " on the " : "", dev ? dev : "", "");
    if (note) rpx__sb_printf(s, "  layers: %s\n", note);
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
