/* html_layers.c — owns the run view's per-layer part (issue 39 §2;
 * docs/report.md, "The HTML report"), drawn from a report's `layers` block
 * alone (the runner writes it; this room only reads it): one sentence of
 * where the time goes, the per-op-type summary ("Conv 61 % of the time at
 * 0.42 of its bound"), the layer table (sortable on a click of a column's
 * head; without the script it reads sorted by time, slowest first; the
 * "unattributed" row apart in the table's foot, never sorted among the
 * layers) and the per-layer roofline (arithmetic intensity against attained
 * GFLOP/s, log-log, one dot per costed row with its area proportional to its
 * time, the host CPU's roofs from the report's `roofline`, each row's own
 * bound as a bar above its dot). A time is printed
 * to the digits its interval supports (rpx__h_ci_decimals), a value derived
 * from it (share, achieved) to the digits of the same relative interval;
 * every other number by the summary's rule; a value not known is "n/a". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "rpxprof/summary.h"

#define put rpx__sb_printf
#define jstr rpx__h_jstr
#define MAX_GPU_COLS 4
#define DOT_R 18.0                    /* the radius of the slowest row's dot (px) */
#define DOT_MIN_R 2.0                 /* no dot smaller, so that each shows */
#define NCOLOURS 8                    /* the page's p0..p7 */

static double num(const json_t *o, const char *k) { return rpx__h_jnum(json_object_get(o, k)); }

/* The row of time no node accounts for (WAVE6 contract: name "unattributed",
 * op_type null). A node of the model with that name has an op type. */
static int unattributed(const json_t *row)
{
    const char *n = jstr(row, "name");
    return n && !strcmp(n, "unattributed") && !json_is_string(json_object_get(row, "op_type"));
}

/* A row's time interval as a factor of its time: [lo/t, hi/t], NAN when none. */
static void rel_ci(const json_t *row, double *flo, double *fhi)
{
    const json_t *ci = json_object_get(row, "time_ci_ms");
    double t = num(row, "time_ms"), lo = rpx__h_jnum(json_array_get(ci, 0)), hi = rpx__h_jnum(json_array_get(ci, 1));
    *flo = *fhi = NAN;
    if (json_array_size(ci) == 2 && t > 0 && isfinite(lo) && isfinite(hi)) *flo = lo / t, *fhi = hi / t;
}

/* v to the digits the interval [lo, hi] supports (the summary's rule where
 * there is none); "n/a" when v is not known. */
static void put_dec(hout *o, double v, double lo, double hi)
{
    char b[48];
    if (!isfinite(v)) { put(o, "<span class=\"na\">n/a</span>"); return; }
    put(o, "%s", rpx__h_fmt_dec(b, sizeof b, v, rpx__h_ci_decimals(v, lo, hi)));
}

/* A count by the summary's rule with a thousands prefix ("1.82 G"), the
 * exact count on hover. */
static void put_si(hout *o, double v)
{
    static const char *const pre[] = {"", " k", " M", " G", " T", " P", " E"};
    char b[48], e[48];
    double s = v;
    int k = 0;
    if (!isfinite(v)) { put(o, "<span class=\"na\">n/a</span>"); return; }
    while (fabs(s) >= 999.5 && k < 6) s /= 1000, k++;
    rpx_format_3g(b, sizeof b, s);
    put(o, "<span title=\"%s\">%s%s%s</span>", rpx__h_num(e, sizeof e, v), b, k ? "&nbsp;" : "", pre[k] + (k > 0));
}

/* <td> with the value the script sorts by (data-v; empty: not known). */
static void td_open(hout *o, double sortv, const char *cls)
{
    put(o, "<td%s%s%s", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
    if (isfinite(sortv)) put(o, " data-v=\"%.17g\">", sortv);
    else put(o, " data-v=\"\">");
}

/* ---- the layer table -------------------------------------------------------- */

typedef struct lrow {
    const json_t *row;
    double t;
    size_t at;
} lrow;

/* Slowest first; a row with no time last; ties in the report's order. */
static int by_time(const void *a, const void *b)
{
    const lrow *x = a, *y = b;
    int fx = isfinite(x->t), fy = isfinite(y->t);
    if (fx != fy) return fy - fx;
    if (fx && x->t != y->t) return x->t < y->t ? 1 : -1;
    return (x->at > y->at) - (x->at < y->at);
}

/* The GPU names of the rows' gpu_bounds, in the order first seen (up to MAX_GPU_COLS). */
static size_t gpu_names(const json_t *rows, const char **names)
{
    size_t i, j, n = 0;
    const json_t *row;
    json_array_foreach(rows, i, row) {
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(row, "gpu_bounds"), k, v) {
            for (j = 0; j < n && strcmp(names[j], k); j++) {}
            if (j == n && n < MAX_GPU_COLS) names[n++] = k;
        }
    }
    return n;
}

/* A node's name escaped, a line may break after each '/' or '_' (<wbr>: no text). */
static void esc_wbr(hout *o, const char *s)
{
    char seg[256];
    if (!s) { rpx__h_esc(o, s); return; }
    while (*s) {
        size_t n = strcspn(s, "/_");
        if (s[n]) n++;
        if (n >= sizeof seg) n = sizeof seg - 1;
        memcpy(seg, s, n);
        seg[n] = '\0';
        rpx__h_esc(o, seg);
        s += n;
        if (*s && (seg[n - 1] == '/' || seg[n - 1] == '_')) put(o, "<wbr>");
    }
}

/* The first n bytes of s escaped (a UTF-8 character is not cut). */
static void esc_prefix(hout *o, const char *s, size_t n)
{
    char b[64];
    if (n >= sizeof b) n = sizeof b - 1;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    memcpy(b, s, n);
    b[n] = '\0';
    rpx__h_esc(o, b);
}

static void put_nodes(hout *o, const json_t *nodes)
{
    size_t i, n = json_array_size(nodes);
    if (!json_is_array(nodes)) { put(o, "<span class=\"na\">n/a</span>"); return; }
    if (n > 3) {   /* a fused row of many nodes: three, and every one on hover */
        put(o, "<span title=\"");
        for (i = 0; i < n; i++) { put(o, i ? ", " : ""); rpx__h_esc(o, json_string_value(json_array_get(nodes, i))); }
        put(o, "\">");
    }
    for (i = 0; i < n && i < 3; i++) { put(o, i ? ", " : ""); esc_wbr(o, json_string_value(json_array_get(nodes, i))); }
    if (n > 3) put(o, " &hellip; (%zu in all)</span>", n);
    if (n == 0) put(o, "none");
}

/* One row of the layer table. */
static void layer_tr(hout *o, const json_t *row, const char *const *gpus, size_t ng)
{
    const json_t *ci = json_object_get(row, "time_ci_ms");
    double t = num(row, "time_ms"), flo, fhi, sh = num(row, "share"), ach = num(row, "achieved");
    int un = unattributed(row);
    char b[48];
    size_t j;
    rel_ci(row, &flo, &fhi);
    put(o, "<tr class=\"%s\"><td class=\"nm\">", un ? "unattributed" : "layer");
    esc_wbr(o, jstr(row, "name"));
    if (un) put(o, " <span class=\"why\">(not a layer: the time no node accounts for; never sorted)</span>");
    put(o, "</td><td>");
    rpx__h_put_value(o, json_object_get(row, "op_type"));
    put(o, "</td><td class=\"nm nodes\">");
    put_nodes(o, json_object_get(row, "nodes"));
    put(o, "</td>");
    td_open(o, t, NULL);
    put_dec(o, t, rpx__h_jnum(json_array_get(ci, 0)), rpx__h_jnum(json_array_get(ci, 1)));
    if (isfinite(flo))
        put(o, "<span class=\"ci\"> [%s, ", rpx__h_fmt_dec(b, sizeof b, t * flo, rpx__h_ci_decimals(t, t * flo, t * fhi))),
        put(o, "%s]</span>", rpx__h_fmt_dec(b, sizeof b, t * fhi, rpx__h_ci_decimals(t, t * flo, t * fhi)));
    put(o, "</td>");
    td_open(o, sh * 100, NULL);
    put_dec(o, sh * 100, sh * 100 * flo, sh * 100 * fhi);
    put(o, "</td>");
    td_open(o, num(row, "flops"), NULL);
    put_si(o, num(row, "flops"));
    put(o, "</td>");
    td_open(o, num(row, "macs"), NULL);
    put_si(o, num(row, "macs"));
    put(o, "</td>");
    td_open(o, num(row, "bytes"), NULL);
    put_si(o, num(row, "bytes"));
    put(o, "</td>");
    td_open(o, num(row, "intensity"), NULL);
    rpx__h_put_num(o, json_object_get(row, "intensity"));
    put(o, "</td>");
    td_open(o, num(row, "bound_ms"), NULL);
    rpx__h_put_num(o, json_object_get(row, "bound_ms"));
    put(o, "</td>");
    td_open(o, ach, NULL);   /* bound / time: the time's relative interval, inverted */
    put_dec(o, ach, ach / fhi, ach / flo);
    put(o, "</td>");
    for (j = 0; j < ng; j++) {
        const json_t *g = json_object_get(json_object_get(row, "gpu_bounds"), gpus[j]);
        td_open(o, rpx__h_jnum(g), NULL);
        rpx__h_put_num(o, g);
        put(o, "</td>");
    }
    put(o, "</tr>\n");
}

/* The layer table: the layers sorted by time, slowest first (the order the
 * page reads in without its script), the unattributed row in the foot. */
static void layer_table(hout *o, const json_t *rows, const char *id)
{
    static const char *const heads[] = {"layer", "op type", "original nodes", "time (ms) [95 % interval]", "share (%)",
                                        "FLOPs", "MACs", "bytes", "intensity (FLOP/byte)", "bound (ms)", "achieved"};
    const char *gpus[MAX_GPU_COLS];
    size_t i, n = 0, ng = gpu_names(rows, gpus), nr = json_array_size(rows);
    lrow *s = malloc((nr ? nr : 1) * sizeof *s);
    if (!s) { o->oom = 1; return; }
    for (i = 0; i < nr; i++) {
        const json_t *row = json_array_get(rows, i);
        if (unattributed(row)) continue;
        s[n].row = row;
        s[n].t = num(row, "time_ms");
        s[n].at = i;
        n++;
    }
    qsort(s, n, sizeof *s, by_time);
    put(o, "<div class=\"wide\"><table class=\"sortable layers\" id=\"%s-layers-table\"><thead><tr>", id);
    for (i = 0; i < sizeof heads / sizeof *heads; i++) put(o, "<th>%s</th>", heads[i]);
    for (i = 0; i < ng; i++) { put(o, "<th>bound on "); rpx__h_esc(o, gpus[i]); put(o, " (ms)</th>"); }
    put(o, "</tr></thead><tbody>\n");
    for (i = 0; i < n; i++) layer_tr(o, s[i].row, gpus, ng);
    put(o, "</tbody>");
    if (n < nr) {
        put(o, "<tfoot>");
        for (i = 0; i < nr; i++)
            if (unattributed(json_array_get(rows, i))) layer_tr(o, json_array_get(rows, i), gpus, ng);
        put(o, "</tfoot>");
    }
    put(o, "</table></div>\n");
    free(s);
}

/* ---- by op type ----------------------------------------------------------------- */

/* "Conv 61.2 % of the time at 0.42 of its bound" for the first three op
 * types by time, then the table of all. */
static void op_types(hout *o, const json_t *ops, const char *id)
{
    size_t i, n = json_array_size(ops);
    const json_t *op;
    char b[48];
    if (!n) return;
    put(o, "<h4>By op type</h4>\n<p class=\"optypes\">");
    for (i = 0; i < n && i < 3; i++) {
        op = json_array_get(ops, i);
        put(o, "%s", i ? "; " : "");
        rpx__h_esc(o, jstr(op, "op_type") ? jstr(op, "op_type") : "unattributed");
        put(o, " %s %% of the time", rpx_format_3g(b, sizeof b, 100 * num(op, "share")));
        if (isfinite(num(op, "achieved"))) put(o, " at %s of its bound", rpx_format_3g(b, sizeof b, num(op, "achieved")));
        else put(o, ", its bound not known");
    }
    put(o, "%s.</p>\n<div class=\"wide\"><table class=\"sortable optypes\" id=\"%s-layers-ops\"><thead><tr><th>op type</th>"
           "<th>layers</th><th>time (ms)</th><th>share (%%)</th><th>FLOPs</th><th>bound (ms)</th><th>achieved</th></tr></thead><tbody>",
        n > 3 ? "; the others below" : "", id);
    json_array_foreach(ops, i, op) {
        put(o, "<tr><td>");
        rpx__h_put_value(o, json_object_get(op, "op_type"));
        put(o, "</td>");
        td_open(o, num(op, "rows"), NULL);
        rpx__h_put_num(o, json_object_get(op, "rows"));
        put(o, "</td>");
        td_open(o, num(op, "time_ms"), NULL);
        rpx__h_put_num(o, json_object_get(op, "time_ms"));
        put(o, "</td>");
        td_open(o, 100 * num(op, "share"), NULL);
        put_dec(o, 100 * num(op, "share"), NAN, NAN);
        put(o, "</td>");
        td_open(o, num(op, "flops"), NULL);
        put_si(o, num(op, "flops"));
        put(o, "</td>");
        td_open(o, num(op, "bound_ms"), NULL);
        rpx__h_put_num(o, json_object_get(op, "bound_ms"));
        put(o, "</td>");
        td_open(o, num(op, "achieved"), NULL);
        rpx__h_put_num(o, json_object_get(op, "achieved"));
        put(o, "</td></tr>\n");
    }
    put(o, "</tbody></table></div>\n");
}

/* ---- the per-layer roofline ------------------------------------------------------- */

/* A row's point: attained GFLOP/s (its FLOPs over its time) at its intensity;
 * 0 when it has no cost to draw. */
static int point(const json_t *row, double *x, double *y)
{
    double f = num(row, "flops"), t = num(row, "time_ms"), ai = num(row, "intensity");
    if (unattributed(row) || !(f > 0) || !(t > 0) || !(ai > 0) || !isfinite(f) || !isfinite(t) || !isfinite(ai)) return 0;
    *x = ai;
    *y = f / (t * 1e-3) / 1e9;
    return isfinite(*y) && *y > 0;
}

/* A row's bound as a point of the roof: its FLOPs over its bound_ms
 * (attainable GFLOP/s) at its intensity; 0 when it has none. */
static int bound_point(const json_t *row, double *y)
{
    double f = num(row, "flops"), b = num(row, "bound_ms");
    *y = f / (b * 1e-3) / 1e9;
    return b > 0 && isfinite(*y) && *y > 0;
}

/* Each op type's colour: the first NCOLOURS - 1 of by_op_type (by time) their
 * own, the others the last. */
static int colour(const json_t *ops, const char *op)
{
    size_t i;
    for (i = 0; op && i < json_array_size(ops) && i < NCOLOURS - 1; i++) {
        const char *k = jstr(json_array_get(ops, i), "op_type");
        if (k && !strcmp(k, op)) return (int)i;
    }
    return NCOLOURS - 1;
}

/* A log axis from mn to mx over at least a decade. */
static void log_axis(rpx_h_axis *a, double mn, double mx, double p0, double p1)
{
    double mid = sqrt(mn) * sqrt(mx);   /* not sqrt(mn * mx): that underflows for tiny values */
    if (mx / mn < 10) mn = mid / sqrt(10), mx = mid * sqrt(10);
    rpx__h_axis_make(a, mn, mx, 1, p0, p1);
}

/* The host CPU's roofs: the memory slope (bandwidth x intensity) up to the
 * compute ceiling, or the ceiling alone where the bandwidth is not known. */
static void roofs(hout *o, const rpx_h_axis *x, const rpx_h_axis *y, double pk, double bw)
{
    char b1[40], b2[40];
    if (!(pk > 0)) return;
    put(o, "<g class=\"lroof\"><title>host CPU: peak %s GFLOP/s, memory %s GB/s</title><path d=\"",
        rpx_format_3g(b1, sizeof b1, pk), rpx_format_3g(b2, sizeof b2, bw));
    if (bw > 0) {
        double ridge = pk / bw, x0 = x->lo, y0 = bw * x0;
        if (y0 < y->lo) x0 = y->lo / bw, y0 = y->lo;
        if (ridge > x->lo) put(o, "M%.1f %.1fL%.1f %.1f", rpx__h_axis_pos(x, x0), rpx__h_axis_pos(y, y0),
                               rpx__h_axis_pos(x, fmin(ridge, x->hi)), rpx__h_axis_pos(y, fmin(pk, bw * x->hi)));
        if (ridge < x->hi) put(o, "M%.1f %.1fH%.1f", rpx__h_axis_pos(x, fmax(ridge, x->lo)), rpx__h_axis_pos(y, pk), x->p1);
    } else {
        put(o, "M%.1f %.1fH%.1f", x->p0, rpx__h_axis_pos(y, pk), x->p1);
    }
    put(o, "\"/><text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">compute ceiling %s GFLOP/s</text>",
        x->p1 - 4, rpx__h_axis_pos(y, pk) - 5, b1);
    if (bw > 0 && pk / bw > x->lo * 3) {   /* the slope's label, on it, a third of the way up to the ridge */
        double lx = fmax(x->lo * 1.5, pow(10, (2 * log10(fmax(x->lo, y->lo / bw)) + log10(fmin(pk / bw, x->hi))) / 3));
        put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\">memory %s GB/s</text>", rpx__h_axis_pos(x, lx) + 6,
            rpx__h_axis_pos(y, bw * lx) + 4, b2);
    }
    put(o, "</g>");
}

static void dot(hout *o, const json_t *row, const rpx_h_axis *x, const rpx_h_axis *y, double tmax, int c)
{
    double ax, ay, by, t = num(row, "time_ms"), r = DOT_R * sqrt(t / tmax);
    char b1[40], b2[40], b3[40], b4[40];
    point(row, &ax, &ay);
    if (bound_point(row, &by)) {   /* its bound: a bar on the roof, a dotted line down to the dot */
        double px = rpx__h_axis_pos(x, ax), pb = rpx__h_axis_pos(y, by);
        put(o, "<g class=\"lbnd p%d\"><title>", c);
        rpx__h_esc(o, jstr(row, "name"));
        put(o, ": its bound %s ms, %s GFLOP/s attainable</title><path class=\"bar\" d=\"M%.1f %.1fH%.1f\"/><path d=\"M%.1f %.1fV%.1f\"/></g>",
            rpx_format_3g(b1, sizeof b1, num(row, "bound_ms")), rpx_format_3g(b2, sizeof b2, by), px - 6, pb, px + 6, px, pb,
            rpx__h_axis_pos(y, ay));
    }
    put(o, "<circle class=\"ldot p%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.2f\" data-name=\"", c, rpx__h_axis_pos(x, ax),
        rpx__h_axis_pos(y, ay), r < DOT_MIN_R ? DOT_MIN_R : r);
    rpx__h_esc(o, jstr(row, "name"));
    put(o, "\"><title>");
    rpx__h_esc(o, jstr(row, "name"));
    put(o, " (");
    rpx__h_esc(o, jstr(row, "op_type"));
    put(o, "): %s ms, %s GFLOP/s at %s FLOP/byte", rpx_format_3g(b1, sizeof b1, t), rpx_format_3g(b2, sizeof b2, ay),
        rpx_format_3g(b3, sizeof b3, ax));
    if (isfinite(num(row, "achieved"))) put(o, "; %s of its bound", rpx_format_3g(b4, sizeof b4, num(row, "achieved")));
    put(o, "</title></circle>");
}

/* The figure's caption: what is drawn, the roofs' source, the rows left out. */
static void roof_caption(hout *o, double pk, double bw, size_t left, size_t un, size_t nb)
{
    char b1[40], b2[40];
    hout c = {0};
    rpx__sb_printf(&c, "One dot per layer with a cost: x its arithmetic intensity (FLOPs over bytes, log), y its attained "
                       "GFLOP/s (its FLOPs over its median time, log), its area proportional to its time. ");
    if (pk > 0 && bw > 0)
        rpx__sb_printf(&c, "The line: the host CPU's roofs from the report's roofline (host-cpu): its memory bandwidth (%s GB/s) "
                           "times the intensity, up to its compute ceiling (%s GFLOP/s). ",
                       rpx_format_3g(b1, sizeof b1, bw), rpx_format_3g(b2, sizeof b2, pk));
    else if (pk > 0)
        rpx__sb_printf(&c, "The line: the host CPU's compute ceiling (%s GFLOP/s) from the report's roofline (host-cpu); its "
                           "memory bandwidth is not known, so no memory slope is drawn (rpxprof roofline --measure-cpu measures it). ",
                       rpx_format_3g(b1, sizeof b1, pk));
    else rpx__sb_printf(&c, "No roof is drawn: the report's roofline holds no host-cpu target (a run with --gpu names "
                            "its targets; add host-cpu to them). ");
    if (nb)
        rpx__sb_printf(&c, "Each row's own bound (bound_ms) is the bar above its dot, at its FLOPs over the bound: the dotted "
                           "line between them is how far it is from it. ");
    if (left) {
        rpx__sb_printf(&c, "Left out: %s", un ? "the unattributed time" : "");
        if (left > un)
            rpx__sb_printf(&c, "%s%zu row%s with no FLOPs, bytes or time to place on log axes", un ? " and " : "", left - un,
                           left - un == 1 ? "" : "s");
        rpx__sb_printf(&c, " (%zu in all).", left);
    } else rpx__sb_printf(&c, "Every row is drawn.");
    if (c.oom) o->oom = 1;
    rpx__h_fig_close(o, c.p ? c.p : "");
    free(c.p);
}

void rpx__h_fig_layer_roofline(hout *o, const json_t *report, const char *id)
{
    const json_t *L = json_object_get(report, "layers"), *rows = json_object_get(L, "rows"), *ops = json_object_get(L, "by_op_type");
    const json_t *cpu = json_object_get(json_object_get(report, "roofline"), "host-cpu"), *row;
    double pk = num(json_object_get(cpu, "peak_dense"), "tflops") * 1e3, bw = num(cpu, "memory_bandwidth_gbps");
    double xmn = INFINITY, xmx = 0, ymn = INFINITY, ymx = 0, tmax = 0, px, py;
    const double T = 20, B = 330, H = 380, P1 = RPX_H_FIG_W - 56 - 150;
    size_t i, drawn = 0, un = 0, nl = 0, nb = 0;
    lrow *ord;
    rpx_h_axis x, y;
    char fid[96];
    json_array_foreach(rows, i, row) {
        if (unattributed(row)) { un++; continue; }
        if (!point(row, &px, &py)) continue;
        drawn++;
        xmn = fmin(xmn, px), xmx = fmax(xmx, px), ymn = fmin(ymn, py), ymx = fmax(ymx, py);
        tmax = fmax(tmax, num(row, "time_ms"));
        if (bound_point(row, &py)) ymn = fmin(ymn, py), ymx = fmax(ymx, py), nb++;
    }
    if (!drawn) {
        put(o, "<p class=\"na\" id=\"%s-layers-noroof\">No per-layer roofline: no row has FLOPs, bytes and a time "
               "(run with a cost: the model file's own, or --cost MODEL.onnx).</p>\n", id);
        return;
    }
    if (pk > 0) {
        ymx = fmax(ymx, pk * 1.5);
        if (bw > 0) xmn = fmin(xmn, pk / bw / 4), xmx = fmax(xmx, pk / bw * 4);
    }
    log_axis(&x, xmn / 2, xmx * 2, 72, P1);
    log_axis(&y, ymn / 2, ymx * 1.5, B, T);
    snprintf(fid, sizeof fid, "%s-layers-roof", id);
    rpx__h_fig_open(o, fid, H, "per-layer roofline (log-log): attained GFLOP/s against arithmetic intensity", NULL);
    rpx__h_axis_ticks(o, &x, 0, B, T);
    rpx__h_axis_ticks(o, &y, 1, 72, P1);
    roofs(o, &x, &y, pk, bw);
    ord = malloc(drawn * sizeof *ord);   /* the slowest drawn first, so that no dot hides a smaller one */
    if (!ord) { o->oom = 1; return; }
    {
        size_t n = 0;
        json_array_foreach(rows, i, row) if (point(row, &px, &py)) {
            ord[n].row = row;
            ord[n].t = num(row, "time_ms");
            ord[n].at = i;
            n++;
        }
        qsort(ord, n, sizeof *ord, by_time);
        for (i = 0; i < n; i++) dot(o, ord[i].row, &x, &y, tmax, colour(ops, jstr(ord[i].row, "op_type")));
    }
    free(ord);
    for (i = 0; i < json_array_size(ops) && i < NCOLOURS; i++) {   /* the legend: op types by time */
        const char *k = jstr(json_array_get(ops, i), "op_type");
        double ly = T + 16.0 * (double)nl + 10;
        size_t j;
        int seen = 0;
        json_array_foreach(rows, j, row) seen |= point(row, &px, &py) && (i == NCOLOURS - 1 ? colour(ops, jstr(row, "op_type")) == NCOLOURS - 1
                                                                                              : jstr(row, "op_type") && k && !strcmp(jstr(row, "op_type"), k));
        if (!k || !seen) continue;
        nl++;
        put(o, "<g class=\"p%zu\"><rect class=\"sw\" x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\"/><text class=\"ax\" x=\"%.1f\" y=\"%.1f\">",
            i, P1 + 16, ly - 9, P1 + 30, ly);
        if (i == NCOLOURS - 1) put(o, "other op types");
        else if (strlen(k) > 22) { esc_prefix(o, k, 20); put(o, "&hellip;"); }   /* the legend's width */
        else rpx__h_esc(o, k);
        put(o, "</text></g>");
    }
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte, log)</text>", (72 + P1) / 2, B + 32);
    put(o, "<text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">attained GFLOP/s (log)</text>",
        (T + B) / 2, (T + B) / 2);
    roof_caption(o, pk, bw, json_array_size(rows) - drawn, un, nb);
}

/* ---- the section ------------------------------------------------------------------- */

/* Where the time goes in one sentence: the rows, their sum against the
 * unprofiled p50, the slowest row, the share below 10 % of the bound. */
static void answer(hout *o, const json_t *L)
{
    const json_t *rows = json_object_get(L, "rows"), *row, *top = NULL, *ci = json_object_get(L, "total_ci_ms");
    double un_t = NAN, ov = num(L, "overhead");
    size_t i, n = 0;
    char b1[48], b2[48], b3[48];
    json_array_foreach(rows, i, row) {
        if (unattributed(row)) { un_t = num(row, "share"); continue; }
        n++;
        if (isfinite(num(row, "time_ms")) && (!top || num(row, "time_ms") > num(top, "time_ms"))) top = row;
    }
    put(o, "<p class=\"answer\">The %zu layer%s ", n, n == 1 ? "" : "s");
    rpx__h_esc(o, jstr(L, "runtime") ? jstr(L, "runtime") : "the runtime");
    put(o, "'s profiler timed (medians over ");
    rpx__h_put_num(o, json_object_get(L, "profiled_calls"));
    put(o, " profiled calls in each of ");
    rpx__h_put_num(o, json_object_get(L, "processes"));
    put(o, " processes) and the unattributed time sum to ");
    put_dec(o, num(L, "total_ms"), rpx__h_jnum(json_array_get(ci, 0)), rpx__h_jnum(json_array_get(ci, 1)));
    put(o, " ms a call");
    if (json_array_size(ci) == 2) {
        int d = rpx__h_ci_decimals(num(L, "total_ms"), rpx__h_jnum(json_array_get(ci, 0)), rpx__h_jnum(json_array_get(ci, 1)));
        put(o, " (95 %% interval %s to %s)", rpx__h_fmt_dec(b1, sizeof b1, rpx__h_jnum(json_array_get(ci, 0)), d),
            rpx__h_fmt_dec(b2, sizeof b2, rpx__h_jnum(json_array_get(ci, 1)), d));
    }
    put(o, " against the unprofiled p50 of ");
    rpx__h_put_num(o, json_object_get(L, "unprofiled_p50_ms"));
    put(o, " ms");
    if (isfinite(ov)) put(o, " (the profiler's overhead: %s%s %%)", ov >= 0 ? "+" : "", rpx_format_3g(b3, sizeof b3, 100 * ov));
    put(o, ".");
    if (top) {
        put(o, " The slowest, <b>");
        rpx__h_esc(o, jstr(top, "name"));
        put(o, "</b> (");
        rpx__h_esc(o, jstr(top, "op_type"));
        put(o, "), takes %s %% of the time", rpx_format_3g(b1, sizeof b1, 100 * num(top, "share")));
        if (isfinite(num(top, "achieved"))) put(o, " at %s of its bound", rpx_format_3g(b2, sizeof b2, num(top, "achieved")));
        put(o, ".");
    }
    if (isfinite(num(L, "below_10pct_share")))
        put(o, " %s %% of the time is spent in layers below 10 %% of their bound.", rpx_format_3g(b1, sizeof b1, 100 * num(L, "below_10pct_share")));
    if (isfinite(un_t)) put(o, " No node accounts for %s %% of it (the unattributed row).", rpx_format_3g(b1, sizeof b1, 100 * un_t));
    put(o, "</p>\n");
}

void rpx__h_layers_section(hout *o, const json_t *report, const char *id)
{
    const json_t *L = json_object_get(report, "layers");
    if (!json_is_object(L)) return;   /* no --layers: no layer part */
    put(o, "<h3 id=\"%s-layers\">Layers: where the time goes</h3>\n", id);
    answer(o, L);
    if (jstr(L, "overhead_note")) {
        put(o, "<div class=\"alert\" role=\"note\">");
        rpx__h_esc(o, jstr(L, "overhead_note"));
        put(o, "</div>\n");
    }
    put(o, "<p class=\"muted\">");
    if (jstr(L, "covers")) {   /* a sentence of its own, whether or not the report ends it */
        const char *c = jstr(L, "covers");
        size_t n = strlen(c);
        rpx__h_esc(o, c);
        put(o, "%s ", n && c[n - 1] == '.' ? "" : ".");
    }
    put(o, "Bounds on ");
    rpx__h_esc(o, jstr(L, "device") ? jstr(L, "device") : "the host CPU");
    put(o, "; achieved: the bound over the time (1: at the bound).</p>\n");
    op_types(o, json_object_get(L, "by_op_type"), id);
    put(o, "<h4>Every layer</h4>\n<p class=\"muted\">Sorted by time, slowest first; a click on a column's head sorts by it. "
           "A time to the digits its interval supports; n/a: not known.</p>\n");
    layer_table(o, json_object_get(L, "rows"), id);
    rpx__h_fig_layer_roofline(o, report, id);
}
