/* aggregate.c (sweep) — owns `rpxprof aggregate` over sweep folders
 * (docs/sweep.md, "Several models"): each DIR/sweep.json read, every point a
 * row of OUT/sweeps.csv, and the paper's figure OUT/sweeps.svg — one line
 * per model, p50 latency (with its interval) against the size (the value
 * where there is no size), log axes where either spans a decade. Both files
 * written atomically. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/output.h"
#include "common/strbuf.h"
#include "sweep/sweep.h"

#define W 760.0
#define H 440.0
#define L 80.0
#define R (W - 200.0)
#define T 20.0
#define B (H - 50.0)

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

static double pnum(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* the point's x: its size, else its value when a number */
static double x_of(const json_t *p)
{
    double s = pnum(p, "size");
    return isfinite(s) ? s : pnum(p, "value");
}

static void csv_field(rpx_strbuf *b, const char *s)
{
    rpx__sb_str(b, "\"");
    for (; s && *s; s++) rpx__sb_add(b, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1);
    rpx__sb_str(b, "\"");
}

static void csv_num(rpx_strbuf *b, double v)
{
    char buf[40];
    if (isfinite(v)) rpx__fmt_shortest(buf, sizeof buf, v);
    else buf[0] = '\0';
    rpx__sb_printf(b, ",%s", buf);
}

static void make_csv(json_t *const *sw, size_t n, rpx_strbuf *b)
{
    size_t i, k;
    rpx__sb_str(b, "model,label,value,size,p50_ms,p50_ci_lo_ms,p50_ci_hi_ms,p95_ms,p99_ms,"
                   "throughput_per_s,flops,bound_ms,valid\n");
    for (i = 0; i < n; i++) {
        const json_t *p;
        json_array_foreach(json_object_get(sw[i], "points"), k, p) {
            const json_t *ci = json_object_get(p, "p50_ci_ms"), *v = json_object_get(p, "value");
            char *vt = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            csv_field(b, json_string_value(json_object_get(sw[i], "model")));
            rpx__sb_str(b, ",");
            csv_field(b, json_string_value(json_object_get(p, "label")));
            rpx__sb_str(b, ",");
            csv_field(b, json_is_string(v) ? json_string_value(v) : vt);
            free(vt);
            csv_num(b, pnum(p, "size"));
            csv_num(b, pnum(p, "p50_ms"));
            csv_num(b, json_array_size(ci) == 2 ? json_number_value(json_array_get(ci, 0)) : NAN);
            csv_num(b, json_array_size(ci) == 2 ? json_number_value(json_array_get(ci, 1)) : NAN);
            csv_num(b, pnum(p, "p95_ms"));
            csv_num(b, pnum(p, "p99_ms"));
            csv_num(b, pnum(p, "throughput_per_s"));
            csv_num(b, pnum(p, "flops"));
            csv_num(b, pnum(p, "bound_ms"));
            rpx__sb_printf(b, ",%s\n", json_is_true(json_object_get(p, "valid")) ? "true" : "false");
        }
    }
}

typedef struct ax { double lo, hi; int log; double p0, p1; } ax;

static void ax_make(ax *a, double mn, double mx, double p0, double p1)
{
    a->p0 = p0, a->p1 = p1;
    a->log = mn > 0 && mx >= 10 * mn;
    if (!isfinite(mn) || !isfinite(mx)) mn = 0, mx = 1;
    if (a->log) a->lo = mn / 1.2, a->hi = mx * 1.2;
    else {
        double pad = mx > mn ? (mx - mn) * 0.08 : (mx > 0 ? mx * 0.1 : 1);
        a->lo = mn - pad < 0 && mn >= 0 ? 0 : mn - pad;
        a->hi = mx + pad;
    }
}

static double ax_pos(const ax *a, double v)
{
    double f = a->log ? (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo))
                      : (v - a->lo) / (a->hi - a->lo);
    return a->p0 + f * (a->p1 - a->p0);
}

static void esc(rpx_strbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': rpx__sb_str(b, "&lt;"); break;
        case '>': rpx__sb_str(b, "&gt;"); break;
        case '&': rpx__sb_str(b, "&amp;"); break;
        case '"': rpx__sb_str(b, "&quot;"); break;
        default: rpx__sb_add(b, s, 1);
        }
    }
}

static void ticks(rpx_strbuf *b, const ax *a, int vertical)
{
    int i;
    for (i = 0; i <= 4; i++) {
        double v = a->log ? exp(log(a->lo) + (log(a->hi) - log(a->lo)) * i / 4.0)
                          : a->lo + (a->hi - a->lo) * i / 4.0, p = ax_pos(a, v);
        if (vertical)
            rpx__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                           "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.3g</text>\n",
                           L, p, R, p, L - 6, p + 4, v);
        else
            rpx__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                           "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%.3g</text>\n",
                           p, T, p, B, p, B + 16, v);
    }
}

static void make_svg(json_t *const *sw, size_t n, rpx_strbuf *b)
{
    double xmn = INFINITY, xmx = -INFINITY, ymn = INFINITY, ymx = -INFINITY;
    size_t i, k;
    ax x, y;
    const json_t *p;
    for (i = 0; i < n; i++)
        json_array_foreach(json_object_get(sw[i], "points"), k, p) {
            double xv = x_of(p), yv = pnum(p, "p50_ms");
            const json_t *ci = json_object_get(p, "p50_ci_ms");
            if (!(xv > 0) || !(yv > 0)) continue;
            xmn = fmin(xmn, xv), xmx = fmax(xmx, xv);
            ymn = fmin(ymn, json_array_size(ci) == 2 ? json_number_value(json_array_get(ci, 0)) : yv);
            ymx = fmax(ymx, json_array_size(ci) == 2 ? json_number_value(json_array_get(ci, 1)) : yv);
        }
    ax_make(&x, xmn, xmx, L, R);
    ax_make(&y, ymn, ymx, B, T);
    rpx__sb_str(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" RPX_OUTPUT_SVG_MARK "\n");
    rpx__sb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                   "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
                   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H, W, H);
    ticks(b, &x, 0);
    ticks(b, &y, 1);
    rpx__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">size%s</text>\n"
                   "<text x=\"16\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
                   "transform=\"rotate(-90 16 %.1f)\">p50 latency (ms)%s</text>\n",
                   (L + R) / 2, H - 12, x.log ? " (log)" : "", (T + B) / 2, (T + B) / 2,
                   y.log ? " (log)" : "");
    for (i = 0; i < n; i++) {
        const char *c = colours[i % (sizeof colours / sizeof colours[0])];
        int any = 0;
        rpx__sb_printf(b, "<g class=\"model\"><title>");
        esc(b, json_string_value(json_object_get(sw[i], "model")));
        rpx__sb_printf(b, "</title><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
        json_array_foreach(json_object_get(sw[i], "points"), k, p) {
            double xv = x_of(p), yv = pnum(p, "p50_ms");
            if (!(xv > 0) || !(yv > 0)) continue;
            rpx__sb_printf(b, "%s%.1f,%.1f", any ? " " : "", ax_pos(&x, xv), ax_pos(&y, yv));
            any = 1;
        }
        rpx__sb_str(b, "\"/>\n");
        json_array_foreach(json_object_get(sw[i], "points"), k, p) {
            double xv = x_of(p), yv = pnum(p, "p50_ms");
            const json_t *ci = json_object_get(p, "p50_ci_ms");
            if (!(xv > 0) || !(yv > 0)) continue;
            if (json_array_size(ci) == 2)
                rpx__sb_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>",
                               ax_pos(&x, xv), ax_pos(&x, xv),
                               ax_pos(&y, json_number_value(json_array_get(ci, 0))),
                               ax_pos(&y, json_number_value(json_array_get(ci, 1))), c);
            rpx__sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>",
                           ax_pos(&x, xv), ax_pos(&y, yv), c);
            esc(b, json_string_value(json_object_get(p, "label")));
            rpx__sb_printf(b, ": p50 %.4g ms</title></circle>\n", yv);
        }
        rpx__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", R + 16, T + 10 + 18.0 * (double)i, c,
                       R + 36, T + 15 + 18.0 * (double)i);
        esc(b, json_string_value(json_object_get(sw[i], "model")));
        rpx__sb_str(b, "</text></g>\n");
    }
    rpx__sb_str(b, "</svg>\n");
}

int rpx_sweep_aggregate(const char *const *dirs, size_t n, const char *out_dir, rpx_error *err)
{
    json_t **sw = calloc(n ? n : 1, sizeof *sw);
    rpx_strbuf csv = {0}, svg = {0};
    char path[4200];
    size_t i;
    int rc = 0;
    if (!sw) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < n && rc == 0; i++) {
        json_error_t je;
        snprintf(path, sizeof path, "%s/sweep.json", dirs[i]);
        sw[i] = json_load_file(path, 0, &je);
        if (!sw[i] || strcmp(json_string_value(json_object_get(sw[i], "schema")) ?
                             json_string_value(json_object_get(sw[i], "schema")) : "",
                             "rpxprof-sweep/1") != 0)
            rc = rpx_error_set(err, RPX_EFORMAT, "%s: not a sweep.json of rpxprof sweep (%s); give "
                               "the --out-dir of rpxprof sweep", path,
                               sw[i] ? "its schema is not rpxprof-sweep/1" : je.text);
    }
    if (rc == 0) {
        make_csv(sw, n, &csv);
        make_svg(sw, n, &svg);
        if (!csv.p || !svg.p) rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/sweeps.csv", out_dir);
        rc = rpx_write_file_atomic(path, csv.p, strlen(csv.p), err);
    }
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/sweeps.svg", out_dir);
        rc = rpx_write_file_atomic(path, svg.p, strlen(svg.p), err);
    }
    for (i = 0; i < n; i++) json_decref(sw[i]);
    free(sw);
    free(csv.p);
    free(svg.p);
    return rc;
}
