/* plot.c — owns the latency figures (`rpxprof plot`, aggregate's figure.svg):
 * one panel per task, one row per model, each row a box (p25–p75) with
 * whiskers at p5 and p95, the samples as points, p50/p95/p99 marked and the
 * p50's 95 % interval (the report's latency_ci) as an error bar; or with
 * `timeline`, latency against call index with the interval as a band. An open-loop
 * load run or a paced run says so under its label (rpx_plot_mode_note). Plain SVG 1.1: real text, a
 * <title> with the exact value on every mark, stable ids, XML-escaped text.
 * (src/report/svg.c is the roofline picture.) */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/plot.h"
#include "rpxprof/error.h"
#include "common/output.h"
#include "common/strbuf.h"
#include "rpxprof/latency.h"

#define W 960.0
#define LEFT 190.0
#define RIGHT 40.0
#define ROW_H 30.0
#define MAX_POINTS 20000          /* over the whole figure; more are thinned evenly */

typedef rpx_strbuf out;
#define put rpx__sb_printf

/* XML-escaped text. */
static void esc(out *o, const char *s)
{
    if (!s) s = "n/a";
    for (; *s; s++) {
        switch (*s) {
        case '&': put(o, "&amp;"); break;
        case '<': put(o, "&lt;"); break;
        case '>': put(o, "&gt;"); break;
        case '"': put(o, "&quot;"); break;
        case '\'': put(o, "&apos;"); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n') put(o, "?");
            else put(o, "%c", *s);
        }
    }
}

/* Shortest round-trip decimal. */
static const char *num(char *buf, size_t sz, double v)
{
    int prec;
    if (!isfinite(v)) return "n/a";
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sz, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (v != 0 && fabs(v) < 1e15) {       /* 100, not 1e+02 */
        int digits = (int)floor(log10(fabs(v))) + 1;
        if (digits > prec) snprintf(buf, sz, "%.*g", digits, v);
    }
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct axis { double lo, hi, step; int log; double x0, x1; } axis;

static double ax_pos(const axis *a, double v)
{
    double t;
    if (a->log) t = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    else t = (v - a->lo) / (a->hi - a->lo);
    if (!isfinite(t)) t = 0; /* a crafted value (a range of denormals): never "nan" in an attribute */
    return a->x0 + t * (a->x1 - a->x0);
}

static void ax_make(axis *a, double mn, double mx, double x0, double x1)
{
    a->x0 = x0;
    a->x1 = x1;
    a->log = mn > 0 && mx / mn > 20;
    if (a->log) {
        a->lo = pow(10, floor(log10(mn)));
        a->hi = pow(10, ceil(log10(mx)));
        /* samples near the ends of a double: decades a double holds (1e308 is the last) */
        if (!(a->lo >= 1e-300)) a->lo = 1e-300;
        if (!isfinite(a->hi)) a->hi = 1e308;
        if (a->hi <= a->lo) a->hi = a->lo * 10;
    } else {
        double span = mx - mn, step;
        if (span <= 0) span = mx > 0 ? mx * 0.1 : 1;
        step = pow(10, floor(log10(span / 5)));
        if (span / step > 20) step *= 5;
        else if (span / step > 8) step *= 2;
        a->lo = floor(mn / step) * step;
        a->hi = ceil(mx / step) * step;
        if (a->lo < 0 && mn >= 0) a->lo = 0;
        if (a->hi <= a->lo) a->hi = a->lo + step;
        a->step = step;
    }
}

/* Ticks and labels of a horizontal axis at y; vertical when `vertical` (y axis of timelines). */
static void ax_ticks(out *o, const axis *a, double y, const char *id, int vertical, double other0, double other1)
{
    char b[64];
    double v, step;
    int i = 0;
    if (a->log) {
        /* at most about 12 labelled decades: samples that span hundreds of them
         * (near the ends of a double) get every k-th */
        int decades = (int)lround(log10(a->hi) - log10(a->lo)), every = decades > 12 ? (decades + 11) / 12 : 1;
        for (v = a->lo; v <= a->hi * 1.0001 && isfinite(v) && i < 700; v *= 10, i++) {
            double p = ax_pos(a, v);
            if (i % every) continue;
            snprintf(b, sizeof b, "%g", v);
            if (vertical)
                put(o, "<g id=\"%s-tick-%d\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>"
                       "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" text-anchor=\"end\">%s</text></g>\n",
                    id, i, other0, p, other1, p, other0 - 6, p + 4, b);
            else
                put(o, "<g id=\"%s-tick-%d\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>"
                       "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" text-anchor=\"middle\">%s</text></g>\n",
                    id, i, p, other0, p, other1, p, y + 14, b);
        }
        return;
    }
    step = a->step;
    for (i = 0; a->lo + step * i <= a->hi + step * 1e-6 && i < 100; i++) {
        double p;
        v = a->lo + step * i;
        if (fabs(v) < step * 1e-9) v = 0;
        p = ax_pos(a, v);
        /* round the label to the step's precision so 0.30000000000000004 reads 0.3 */
        snprintf(b, sizeof b, "%.*g", 6, v);
        if (vertical)
            put(o, "<g id=\"%s-tick-%d\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>"
                   "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" text-anchor=\"end\">%s</text></g>\n",
                id, i, other0, p, other1, p, other0 - 6, p + 4, b);
        else
            put(o, "<g id=\"%s-tick-%d\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>"
                   "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" text-anchor=\"middle\">%s</text></g>\n",
                id, i, p, other0, p, other1, p, y + 14, b);
    }
}

/* Whether the row has a p50 interval that belongs to its samples: it holds
 * their p50 (an interval of other samples is not drawn). */
static int has_ci(const rpx_plot_row *r)
{
    double *s, p50;
    if (!(r->ci_covers && isfinite(r->p50_ci_lo_ms) && isfinite(r->p50_ci_hi_ms) && r->p50_ci_lo_ms > 0 &&
          r->p50_ci_lo_ms <= r->p50_ci_hi_ms && r->n > 0))
        return 0;
    s = malloc(r->n * sizeof *s);
    if (!s) return 0;
    memcpy(s, r->samples_ms, r->n * sizeof *s);
    qsort(s, r->n, sizeof *s, cmp_double);
    p50 = rpx_percentile_sorted(s, r->n, 50);
    free(s);
    return p50 >= r->p50_ci_lo_ms * (1 - 1e-12) && p50 <= r->p50_ci_hi_ms * (1 + 1e-12);
}

void rpx_plot_row_interval(rpx_plot_row *row, const json_t *report)
{
    const json_t *ci = json_object_get(report, "latency_ci"), *k = json_object_get(report, "processes");
    const json_t *p50 = json_object_get(ci, "p50_ms"), *cov = json_object_get(ci, "covers");
    row->processes = json_is_integer(k) ? (long)json_integer_value(k) : 1;
    row->ci_covers = json_is_string(cov) ? json_string_value(cov) : NULL;
    row->p50_ci_lo_ms = row->p50_ci_hi_ms = NAN;
    if (json_is_array(p50) && json_array_size(p50) == 2 && json_is_number(json_array_get(p50, 0)) &&
        json_is_number(json_array_get(p50, 1))) {
        row->p50_ci_lo_ms = json_number_value(json_array_get(p50, 0));
        row->p50_ci_hi_ms = json_number_value(json_array_get(p50, 1));
    }
}

/* A rate without noise: 50, 0.5, 199.7, 1234 (never 1e+04). */
static const char *rate(char *buf, size_t sz, double v)
{
    if (fabs(v) >= 1000) snprintf(buf, sz, "%.0f", v);
    else snprintf(buf, sz, "%.4g", v);
    return buf;
}

void rpx_plot_mode_note(char *buf, size_t cap, double load_requested_per_s, double load_achieved_per_s,
                        double paced_hz)
{
    char b1[64], b2[64];
    if (!cap) return;
    buf[0] = '\0';
    if (isfinite(load_requested_per_s)) {
        if (isfinite(load_achieved_per_s) && load_achieved_per_s < 0.98 * load_requested_per_s)
            snprintf(buf, cap, "open loop, %s req/s, achieved %s/s (from intended send)",
                     rate(b1, sizeof b1, load_requested_per_s), rate(b2, sizeof b2, load_achieved_per_s));
        else
            snprintf(buf, cap, "open loop, %s req/s (from intended send)", rate(b1, sizeof b1, load_requested_per_s));
    } else if (isfinite(paced_hz)) {
        snprintf(buf, cap, "paced %s Hz", rate(b1, sizeof b1, paced_hz));
    }
}

void rpx_plot_mode_note_of(char *buf, size_t cap, const json_t *report)
{
    const json_t *ld = json_object_get(json_object_get(report, "http"), "load"), *pc = json_object_get(report, "pacing");
    const json_t *req = json_object_get(ld, "requested_rate_per_s"), *ach = json_object_get(ld, "achieved_rate_per_s"),
                 *hz = json_object_get(pc, "rate_hz");
    rpx_plot_mode_note(buf, cap, json_is_object(ld) && json_is_number(req) ? json_number_value(req) : NAN,
                       json_is_object(ld) && json_is_number(ach) ? json_number_value(ach) : NAN,
                       json_is_object(pc) && json_is_number(hz) ? json_number_value(hz) : NAN);
}

/* "p50 95 % interval [lo, hi] ms, between-process (5 processes)" */
static void ci_title(out *o, const rpx_plot_row *r)
{
    char b1[64], b2[64];
    put(o, "p50 95 %% interval [%s, %s] ms, ", num(b1, sizeof b1, r->p50_ci_lo_ms), num(b2, sizeof b2, r->p50_ci_hi_ms));
    esc(o, r->ci_covers);
    if (r->processes > 0) put(o, " (%ld process%s)", r->processes, r->processes == 1 ? "" : "es");
    if (!strcmp(r->ci_covers, "within-process")) put(o, "; does not cover run-to-run variation");
    else put(o, "; this session's processes only, not session-to-session drift");
}

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

static int has_note(const rpx_plot_row *r) { return r->mode_note && r->mode_note[0]; }

/* A rough width of a text in px (UTF-8 characters, 0.6 em each). */
static double text_w(const char *s, double font)
{
    size_t chars = 0;
    for (; s && *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) chars++;
    return (double)chars * font * 0.6;
}

static void row_marks(out *o, const rpx_plot_row *r, const axis *ax, double yc, const char *id, size_t stride)
{
    double *s = malloc(r->n * sizeof *s), q[6];
    static const double qs[6] = {5, 25, 50, 75, 95, 99};
    char b1[64], b2[64], b3[64];
    size_t i;
    if (!s) { o->oom = 1; return; }
    memcpy(s, r->samples_ms, r->n * sizeof *s);
    qsort(s, r->n, sizeof *s, cmp_double);
    for (i = 0; i < 6; i++) q[i] = rpx_percentile_sorted(s, r->n, qs[i]);
    free(s);
    /* the label; under it how the calls were scheduled, when not one after another */
    put(o, "<g id=\"%s\">\n<text id=\"%s-label\" x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"end\">", id, id,
        ax->x0 - 10, has_note(r) ? yc - 2 : yc + 4);
    esc(o, r->label);
    if (has_note(r)) {
        put(o, "<tspan id=\"%s-mode\" x=\"%.2f\" dy=\"12\" font-size=\"10\" fill=\"#444\"> — ", id, ax->x0 - 10);
        esc(o, r->mode_note);
        put(o, "</tspan>");
    }
    put(o, "</text>\n");
    put(o, "<line id=\"%s-whisker\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"><title>whiskers p5 %s ms to p95 %s ms</title></line>\n",
        id, ax_pos(ax, q[0]), yc, ax_pos(ax, q[4]), yc, num(b1, sizeof b1, q[0]), num(b2, sizeof b2, q[4]));
    put(o, "<rect id=\"%s-box\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#9ecae1\" fill-opacity=\"0.6\" stroke=\"#3182bd\">"
           "<title>p25 %s ms, p75 %s ms</title></rect>\n",
        id, ax_pos(ax, q[1]), yc - 8, fmax(ax_pos(ax, q[3]) - ax_pos(ax, q[1]), 0.5), 16.0,
        num(b1, sizeof b1, q[1]), num(b2, sizeof b2, q[3]));
    for (i = 0; i < r->n; i += stride) {
        double jit = (double)((i * 2654435761u) % 1000u) / 1000.0 - 0.5;
        put(o, "<circle id=\"%s-pt-%zu\" cx=\"%.2f\" cy=\"%.2f\" r=\"1.6\" fill=\"#555\" fill-opacity=\"0.45\"><title>call %zu: %s ms</title></circle>\n",
            id, i, ax_pos(ax, r->samples_ms[i]), yc + jit * 10, i, num(b1, sizeof b1, r->samples_ms[i]));
    }
    put(o, "<line id=\"%s-p50\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#d62728\" stroke-width=\"2.5\"><title>p50 %s ms</title></line>\n",
        id, ax_pos(ax, q[2]), yc - 10, ax_pos(ax, q[2]), yc + 10, num(b1, sizeof b1, q[2]));
    if (has_ci(r)) {
        double x0 = ax_pos(ax, r->p50_ci_lo_ms), x1 = ax_pos(ax, r->p50_ci_hi_ms), yb = yc + 13;
        put(o, "<path id=\"%s-p50-ci\" d=\"M%.2f %.2fv6M%.2f %.2fh%.2fM%.2f %.2fv6\" stroke=\"#000\" stroke-width=\"1.5\" fill=\"none\"><title>",
            id, x0, yb - 3, x0, yb, fmax(x1 - x0, 0.5), x1, yb - 3);
        ci_title(o, r);
        put(o, "</title></path>\n");
    }
    put(o, "<path id=\"%s-p95\" d=\"M%.2f %.2fl-4 -6h8z\" fill=\"#ff7f0e\"><title>p95 %s ms</title></path>\n",
        id, ax_pos(ax, q[4]), yc - 9, num(b1, sizeof b1, q[4]));
    put(o, "<path id=\"%s-p99\" d=\"M%.2f %.2fl-4 -6h8z\" fill=\"#9467bd\"><title>p99 %s ms</title></path>\n</g>\n",
        id, ax_pos(ax, q[5]), yc - 9, num(b3, sizeof b3, q[5]));
}

static void header(out *o, double h, const char *title)
{
    put(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" RPX_OUTPUT_SVG_MARK "\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
           "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n<title>", W, h, W, h);
    esc(o, title);
    put(o, "</title>\n<rect id=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", W, h);
}

static void legend(out *o, double y)
{
    put(o, "<g id=\"legend\" font-size=\"11\"><text x=\"20\" y=\"%.2f\">box: p25–p75 · whiskers: p5–p95 · "
           "red bar: p50 · orange ▼ p95 · purple ▼ p99</text>"
           "<text x=\"20\" y=\"%.2f\">black ├┤ under the p50: its 95 %% interval where the report has one · "
           "dots: every sample (thinned evenly above %d in the figure)</text>"
           "<text id=\"legend-session\" x=\"20\" y=\"%.2f\">an interval covers the processes of its "
           "row's own session, not the drift between sessions: it does not say whether two rows "
           "differ</text></g>\n",
        y - 28, y - 14, MAX_POINTS, y);
}

static int boxes(const rpx_plot_row *rows, size_t n, out *o)
{
    size_t i, j, npanel = 0, total = 0, stride;
    double h, y, left = LEFT;
    const char **panels = calloc(n ? n : 1, sizeof *panels);
    if (!panels) return RPX_ENOMEM;
    for (i = 0; i < n; i++) {
        int seen = 0;
        /* room for the longest label or note (" — " and the note), at most half the width */
        left = fmax(left, 30 + text_w(rows[i].label, 12));
        if (has_note(&rows[i])) left = fmax(left, 30 + text_w(rows[i].mode_note, 10) + 2 * 10 * 0.6);
        total += rows[i].n;
        for (j = 0; j < npanel; j++) if (same_str(panels[j], rows[i].panel)) seen = 1;
        if (!seen) panels[npanel++] = rows[i].panel;
    }
    left = fmin(left, W / 2);
    stride = total > MAX_POINTS ? (total + MAX_POINTS - 1) / MAX_POINTS : 1;
    h = 30 + (double)npanel * 90 + (double)n * ROW_H + 54;
    header(o, h, "rpxprof latency per model");
    y = 30;
    if (n == 0)
        put(o, "<text id=\"empty\" x=\"20\" y=\"30\" font-size=\"14\">no complete report to plot</text>\n");
    for (j = 0; j < npanel; j++) {
        double mn = INFINITY, mx = -INFINITY, top, bottom;
        size_t nr = 0, k;
        axis ax;
        const rpx_plot_row *first = NULL;
        int same_shape = 1, same_dev = 1;
        char id[64];
        for (i = 0; i < n; i++) {
            if (!same_str(rows[i].panel, panels[j])) continue;
            if (!first) first = &rows[i];
            same_shape &= same_str(first->shape, rows[i].shape);
            same_dev &= same_str(first->device, rows[i].device);
            for (k = 0; k < rows[i].n; k++) {
                mn = fmin(mn, rows[i].samples_ms[k]);
                mx = fmax(mx, rows[i].samples_ms[k]);
            }
            if (has_ci(&rows[i])) {
                mn = fmin(mn, rows[i].p50_ci_lo_ms);
                mx = fmax(mx, rows[i].p50_ci_hi_ms);
            }
            nr++;
        }
        ax_make(&ax, mn, mx, left, W - RIGHT);
        snprintf(id, sizeof id, "panel-%zu", j);
        put(o, "<g id=\"%s\">\n<text id=\"%s-title\" x=\"20\" y=\"%.2f\" font-size=\"15\" font-weight=\"bold\">", id, id, y);
        esc(o, panels[j]);
        put(o, "</text>\n<text id=\"%s-caption\" x=\"20\" y=\"%.2f\" font-size=\"11\" fill=\"#444\">inputs: ", id, y + 16);
        esc(o, same_shape ? first->shape : "differ between models");
        put(o, " · device: ");
        esc(o, same_dev ? first->device : "differs between models");
        put(o, " · unit: ");
        esc(o, first->unit);
        put(o, "</text>\n");
        top = y + 28;
        bottom = top + (double)nr * ROW_H;
        ax_ticks(o, &ax, bottom, id, 0, top, bottom);
        put(o, "<line id=\"%s-axis\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n", id, left, bottom, W - RIGHT, bottom);
        put(o, "<text id=\"%s-xlabel\" x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"middle\">latency per ", id,
            (left + W - RIGHT) / 2, bottom + 32);
        esc(o, first->unit);
        put(o, " (ms%s)</text>\n", ax.log ? ", log scale" : "");
        k = 0;
        for (i = 0; i < n; i++) {
            char rid[96];
            if (!same_str(rows[i].panel, panels[j])) continue;
            snprintf(rid, sizeof rid, "row-%zu-%zu", j, k);
            row_marks(o, &rows[i], &ax, top + ROW_H * ((double)k + 0.5), rid, stride);
            k++;
        }
        put(o, "</g>\n");
        y = bottom + 62;
    }
    legend(o, h - 12);
    put(o, "</svg>\n");
    free(panels);
    return 0;
}

static int timeline(const rpx_plot_row *r, out *o)
{
    const double top = 60, bottom = 440, h = 520;
    double mn = INFINITY, mx = -INFINITY, *s, q[3];
    static const double qs[3] = {50, 95, 99};
    static const char *qn[3] = {"p50", "p95", "p99"}, *qc[3] = {"#d62728", "#ff7f0e", "#9467bd"};
    axis ya, xa;
    size_t i, stride = r->n > MAX_POINTS ? (r->n + MAX_POINTS - 1) / MAX_POINTS : 1;
    char b[64];
    for (i = 0; i < r->n; i++) { mn = fmin(mn, r->samples_ms[i]); mx = fmax(mx, r->samples_ms[i]); }
    if (has_ci(r)) { mn = fmin(mn, r->p50_ci_lo_ms); mx = fmax(mx, r->p50_ci_hi_ms); }
    s = malloc((r->n ? r->n : 1) * sizeof *s);
    if (!s) return RPX_ENOMEM;
    memcpy(s, r->samples_ms, r->n * sizeof *s);
    qsort(s, r->n, sizeof *s, cmp_double);
    for (i = 0; i < 3; i++) q[i] = rpx_percentile_sorted(s, r->n, qs[i]);
    free(s);
    ax_make(&ya, mn, mx, bottom, top);
    if (r->x_ms) {
        double xmax = 0;
        for (i = 0; i < r->n; i++) xmax = fmax(xmax, r->x_ms[i]);
        ax_make(&xa, 0, xmax > 0 ? xmax : 1, LEFT, W - RIGHT);
    } else {
        ax_make(&xa, 0, (double)(r->n > 1 ? r->n - 1 : 1), LEFT, W - RIGHT);
    }
    xa.log = 0;
    header(o, h, "rpxprof latency timeline");
    put(o, "<g id=\"timeline\">\n<text id=\"timeline-title\" x=\"20\" y=\"24\" font-size=\"15\" font-weight=\"bold\">");
    esc(o, r->panel);
    put(o, " · ");
    esc(o, r->label);
    if (has_note(r)) {
        put(o, " — ");
        esc(o, r->mode_note);
    }
    put(o, "</text>\n<text id=\"timeline-caption\" x=\"20\" y=\"42\" font-size=\"11\" fill=\"#444\">inputs: ");
    esc(o, r->shape);
    put(o, " · device: ");
    esc(o, r->device);
    put(o, " · %zu calls</text>\n", r->n);
    ax_ticks(o, &ya, 0, "timeline-y", 1, LEFT, W - RIGHT);
    ax_ticks(o, &xa, bottom, "timeline-x", 0, top, bottom);
    put(o, "<line id=\"timeline-axis\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n", LEFT, bottom, W - RIGHT, bottom);
    put(o, "<text id=\"timeline-xlabel\" x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n",
        (LEFT + W - RIGHT) / 2, bottom + 34,
        r->x_ms ? "intended send time (ms from the schedule's start; latency runs from it)"
                : "call index (warmup excluded)");
    put(o, "<text id=\"timeline-ylabel\" x=\"24\" y=\"%.2f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 24 %.2f)\">latency per ",
        (top + bottom) / 2, (top + bottom) / 2);
    esc(o, r->unit);
    put(o, " (ms%s)</text>\n", ya.log ? ", log scale" : "");
    if (has_ci(r)) {
        double y0 = ax_pos(&ya, r->p50_ci_hi_ms), y1 = ax_pos(&ya, r->p50_ci_lo_ms);
        put(o, "<rect id=\"timeline-p50-ci\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#d62728\" fill-opacity=\"0.15\"><title>",
            LEFT, y0, W - RIGHT - LEFT, fmax(y1 - y0, 0.5));
        ci_title(o, r);
        put(o, "</title></rect>\n");
    }
    for (i = 0; i < 3; i++)
        put(o, "<line id=\"timeline-%s\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-dasharray=\"6 3\"><title>%s %s ms</title></line>\n",
            qn[i], LEFT, ax_pos(&ya, q[i]), W - RIGHT, ax_pos(&ya, q[i]), qc[i], qn[i], num(b, sizeof b, q[i]));
    for (i = 0; i < r->n; i += stride) {
        char bx[64];
        if (r->x_ms)
            put(o, "<circle id=\"timeline-pt-%zu\" cx=\"%.2f\" cy=\"%.2f\" r=\"1.8\" fill=\"#1f77b4\"><title>request due at %s ms: %s ms</title></circle>\n",
                i, ax_pos(&xa, r->x_ms[i]), ax_pos(&ya, r->samples_ms[i]), num(bx, sizeof bx, r->x_ms[i]),
                num(b, sizeof b, r->samples_ms[i]));
        else
            put(o, "<circle id=\"timeline-pt-%zu\" cx=\"%.2f\" cy=\"%.2f\" r=\"1.8\" fill=\"#1f77b4\"><title>call %zu: %s ms</title></circle>\n",
                i, ax_pos(&xa, (double)i), ax_pos(&ya, r->samples_ms[i]), i, num(b, sizeof b, r->samples_ms[i]));
    }
    put(o, "</g>\n<g id=\"legend\" font-size=\"11\"><text x=\"%.2f\" y=\"%.2f\">dashed: p50 (red), p95 (orange), p99 (purple); red band: the p50's 95 %% interval where the report has one</text></g>\n</svg>\n",
        LEFT, h - 12);
    return 0;
}

int rpx_plot_svg(const rpx_plot_row *rows, size_t n, int tl, char **svg, rpx_error *err)
{
    out o = {0};
    size_t i;
    int rc;
    *svg = NULL;
    for (i = 0; i < n; i++) {
        size_t k;
        for (k = 0; k < rows[i].n; k++)
            if (!isfinite(rows[i].samples_ms[k]) || rows[i].samples_ms[k] < 0)
                return rpx_error_set(err, RPX_EINVAL, "%s: sample %zu is not a finite number >= 0",
                                     rows[i].label ? rows[i].label : "row", k);
    }
    if (tl) {
        if (n < 1 || rows[0].n == 0) return rpx_error_set(err, RPX_EINVAL, "timeline: give one report with samples");
        for (i = 0; rows[0].x_ms && i < rows[0].n; i++)
            if (!isfinite(rows[0].x_ms[i]) || rows[0].x_ms[i] < 0)
                return rpx_error_set(err, RPX_EINVAL, "%s: intended send time %zu is not a finite number >= 0",
                                     rows[0].label ? rows[0].label : "row", i);
        rc = timeline(&rows[0], &o);
    } else {
        for (i = 0; i < n; i++)
            if (rows[i].n == 0) return rpx_error_set(err, RPX_EINVAL, "%s: no samples to plot", rows[i].label);
        rc = boxes(rows, n, &o);
    }
    if (rc || o.oom) {
        free(o.p);
        return rpx_error_set(err, RPX_ENOMEM, "figure: out of memory");
    }
    *svg = o.p;
    return 0;
}
