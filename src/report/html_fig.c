/* html_fig.c — owns the SVG figures of the HTML report (html.c places them):
 * the latency distribution (exact histogram and CDF, p50/p95/p99 and their
 * intervals from the report), every call against its index (one colour per
 * process, warmup apart, zoomable by the page's script), the CPU each call
 * started on, per-process box plots, the log-log roofline, rows of
 * statistics (HTTP phases, TTFT/ITL) and compare's figures.
 *
 * Drawing rule (docs/report.md): up to RPX_HTML_POINT_LIMIT calls every call
 * is a dot; beyond it each pixel column draws the exact minimum-maximum of
 * its calls per process, and the figure says so. Histograms and the CDF
 * count every sample (the CDF at one step per pixel column). Colours come
 * from the page's CSS variables, so the figures follow its light and dark
 * schemes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "rpxprof/html.h"
#include "rpxprof/latency.h"

#define put rpx__sb_printf
#define FW 760.0   /* figure width */
#define FL 72.0    /* left margin */
#define FR 56.0    /* right margin */
#define NPROC_COLOURS 8

typedef rpx_h_axis axis;

static double apos(const axis *a, double v)
{
    double t;
    if (a->log) t = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    else t = (v - a->lo) / (a->hi - a->lo);
    if (!isfinite(t)) t = 0; /* a crafted value (a range of denormals): never "nan" in an attribute */
    return a->p0 + t * (a->p1 - a->p0);
}

static void amake(axis *a, double mn, double mx, int allow_log, double p0, double p1)
{
    a->p0 = p0;
    a->p1 = p1;
    a->integer = 0;
    if (!isfinite(mn) || !isfinite(mx)) mn = 0, mx = 1;
    /* latency spans more than 5x (a cold first call, a stall): log, so that the body shows */
    a->log = allow_log && mn > 0 && mx / mn > 5;
    if (a->log) {   /* the data's own range, a little room each side */
        a->lo = mn / 1.15;
        a->hi = mx * 1.15;
        if (!(a->lo > 0)) a->lo = 1e-300;
        if (!isfinite(a->hi)) a->hi = 1e308;
        if (a->hi <= a->lo) a->hi = a->lo * 10;
    } else {
        double span = mx - mn, pad;
        if (span <= 0) span = mx > 0 ? mx * 0.1 : 1;
        pad = span * 0.05;
        a->lo = mn - pad;
        a->hi = mx + pad;
        if (a->lo < 0 && mn >= 0) a->lo = 0;
    }
}

/* A tick's label: six significant digits at most, in fixed point (0.00002, not 2e-05). */
static void tick_text(char *b, size_t size, double v)
{
    char t[64];
    snprintf(t, sizeof t, "%.6g", v);
    rpx__h_num(b, size, strtod(t, NULL));
}

/* Ticks of an axis: along x at baseline y (grid up to y_top), or along y. */
static void aticks(hout *o, const axis *a, int vertical, double c0, double c1)
{
    char b[64];
    if (a->log) {   /* 1-2-5 ticks over a few decades, every k-th decade over many */
        static const double m125[3] = {1, 2, 5};
        int k0 = (int)floor(log10(a->lo)), k1 = (int)ceil(log10(a->hi)), decades = k1 - k0, k, j;
        int every = decades > 10 ? (decades + 9) / 10 : 1, nm = decades <= 3 ? 3 : 1;
        for (k = k0; k <= k1 && k - k0 < 700; k++) for (j = 0; j < nm; j++) {
            double v = m125[j] * pow(10, k), p;
            if ((k - k0) % every || v < a->lo || v > a->hi) continue;
            p = apos(a, v);
            tick_text(b, sizeof b, v);
            if (vertical)
                put(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                    c0, p, c1, p, c0 - 5, p + 4, b);
            else
                put(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                    p, c0, p, c1, p, c0 + 14, b);
        }
    } else {
        double span = a->hi - a->lo, step = pow(10, floor(log10(span / 5))), v;
        int i;
        if (span / step > 10) step *= 2;
        if (span / step > 10) step = step / 2 * 5;
        if (a->integer && step < 1) step = 1;
        for (i = 0, v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-9 && i < 40; i++, v = (ceil(a->lo / step) + i) * step) {
            double p = apos(a, v);
            if (fabs(v) < step * 1e-9) v = 0;
            tick_text(b, sizeof b, v);
            if (vertical)
                put(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                    c0, p, c1, p, c0 - 5, p + 4, b);
            else
                put(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                    p, c0, p, c1, p, c0 + 14, b);
        }
    }
}

static void fig_open(hout *o, const char *id, double h, const char *label, const char *cls)
{
    put(o, "<figure class=\"figure\"><svg class=\"fig%s%s\" id=\"%s\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"",
        cls ? " " : "", cls ? cls : "", id, FW, h, FW, h);
    rpx__h_esc(o, label);
    put(o, "\">");
}

static void fig_close(hout *o, const char *caption)
{
    put(o, "</svg><figcaption>");
    rpx__h_esc(o, caption);
    put(o, "</figcaption></figure>\n");
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void minmax(const double *v, size_t n, double *mn, double *mx)
{
    size_t i;
    *mn = INFINITY;
    *mx = -INFINITY;
    for (i = 0; i < n; i++) {
        if (!isfinite(v[i])) continue;
        if (v[i] < *mn) *mn = v[i];
        if (v[i] > *mx) *mx = v[i];
    }
}

/* The histogram's range: the p0.1 to p99.9 of the finite samples (nearest
 * rank), so that a few far calls do not squeeze the body into one bar; the
 * whole range when the calls are fewer than about 500. */
static void body_range(const double *v, size_t n, double *lo, double *hi)
{
    double *c = malloc((n ? n : 1) * sizeof *c);
    size_t i, m = 0;
    if (!c) { minmax(v, n, lo, hi); return; }
    for (i = 0; i < n; i++) if (isfinite(v[i])) c[m++] = v[i];
    if (m == 0) { *lo = NAN; *hi = NAN; free(c); return; }
    qsort(c, m, sizeof *c, cmpd);
    *lo = c[(size_t)(0.001 * (double)(m - 1) + 0.5)];
    *hi = c[(size_t)(0.999 * (double)(m - 1) + 0.5)];
    free(c);
}

/* The bin of v on axis a over nb bins (clamped). */
static size_t bin_of(const axis *a, double v, size_t nb)
{
    double t = (apos(a, v) - a->p0) / (a->p1 - a->p0);
    long k = (long)floor(t * (double)nb);
    if (k < 0) k = 0;
    if (k >= (long)nb) k = (long)nb - 1;
    return (size_t)k;
}

static const json_t *jget2(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

/* p50/p95/p99 from the report with their intervals, as lines and bands. */
static void marks(hout *o, const axis *x, const json_t *r, double top, double bottom, const char *id)
{
    static const char *const keys[3] = {"p50_ms", "p95_ms", "p99_ms"};
    static const char *const names[3] = {"p50", "p95", "p99"};
    const json_t *lat = json_object_get(r, "latency"), *ci = json_object_get(r, "latency_ci");
    char b1[40], b2[40], b3[40];
    int k;
    for (k = 0; k < 3; k++) {
        double v = rpx__h_jnum(json_object_get(lat, keys[k]));
        const json_t *iv = json_object_get(ci, keys[k]);
        double px;
        if (!isfinite(v) || v < x->lo || v > x->hi) continue;
        if (json_array_size(iv) == 2) {
            double lo = rpx__h_jnum(json_array_get(iv, 0)), hi = rpx__h_jnum(json_array_get(iv, 1));
            if (isfinite(lo) && isfinite(hi) && lo >= x->lo && hi <= x->hi) {
                double a = apos(x, lo), b = apos(x, hi);
                put(o, "<rect class=\"ci m%d\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"><title>%s 95 %% interval [%s, %s] ms</title></rect>",
                    k, a, top, b - a < 1 ? 1 : b - a, bottom - top, names[k], rpx__h_num3(b1, sizeof b1, lo),
                    rpx__h_num3(b2, sizeof b2, hi));
            }
        }
        px = apos(x, v);
        put(o, "<line id=\"%s-%s\" class=\"mark m%d\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"><title>%s %s ms</title></line>"
               "<text class=\"ml m%d\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
            id, names[k], k, px, top, px, bottom, names[k], rpx__h_num3(b3, sizeof b3, v), k, px, top - 3 - 10.0 * k, names[k]);
    }
}

void rpx__h_fig_distribution(hout *o, const rpx_h_run *run, const char *id)
{
    const double H = 300, T = 46, B = 250;
    size_t nb = 60, i, *cnt, *cum, maxc = 0, npx;
    double mn, mx, pw = FW - FL - FR;
    axis x, y;
    char b1[40], b2[40], fid[96];
    size_t below = 0, above = 0;
    double xmin, xmax;
    if (!run->n) return;
    minmax(run->s, run->n, &xmin, &xmax);
    body_range(run->s, run->n, &mn, &mx);
    amake(&x, mn, mx, 1, FL, FL + pw);
    npx = (size_t)pw;
    cnt = calloc(nb, sizeof *cnt);
    cum = calloc(npx, sizeof *cum);
    if (!cnt || !cum) { free(cnt); free(cum); return; }
    for (i = 0; i < run->n; i++) {
        if (!isfinite(run->s[i])) continue;
        cum[bin_of(&x, run->s[i], npx)]++;
        /* beyond the axis: counted apart and marked at its edge, not piled into the edge bar */
        if (run->s[i] < x.lo) { below++; continue; }
        if (run->s[i] > x.hi) { above++; continue; }
        cnt[bin_of(&x, run->s[i], nb)]++;
    }
    for (i = 0; i < nb; i++) if (cnt[i] > maxc) maxc = cnt[i];
    amake(&y, 0, (double)maxc, 0, B, T);
    y.lo = 0;
    snprintf(fid, sizeof fid, "%s-dist", id);
    fig_open(o, fid, H, "latency distribution: histogram and CDF", NULL);
    aticks(o, &x, 0, B, T);
    aticks(o, &y, 1, FL, FL + pw);
    for (i = 0; i < nb; i++) {
        double a = x.p0 + (x.p1 - x.p0) * (double)i / (double)nb, w = (x.p1 - x.p0) / (double)nb;
        double lo, hi, top;
        if (!cnt[i]) continue;
        /* the bin's edges in ms, from the axis */
        if (x.log) {
            lo = pow(10, log10(x.lo) + (log10(x.hi) - log10(x.lo)) * (double)i / (double)nb);
            hi = pow(10, log10(x.lo) + (log10(x.hi) - log10(x.lo)) * (double)(i + 1) / (double)nb);
        } else {
            lo = x.lo + (x.hi - x.lo) * (double)i / (double)nb;
            hi = x.lo + (x.hi - x.lo) * (double)(i + 1) / (double)nb;
        }
        top = apos(&y, (double)cnt[i]);
        put(o, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>%s to %s ms: %zu calls</title></rect>",
            a, top, w > 1.5 ? w - 0.5 : w, B - top, rpx__h_num3(b1, sizeof b1, lo), rpx__h_num3(b2, sizeof b2, hi), cnt[i]);
    }
    {   /* the CDF, right axis 0..1, one step per pixel column of exact counts */
        size_t acc = 0, valid = 0;
        for (i = 0; i < npx; i++) valid += cum[i];
        put(o, "<path class=\"cdf\" d=\"M%.1f %.1f", FL, B);
        for (i = 0; i < npx && valid; i++) {
            acc += cum[i];
            put(o, "H%.1fV%.2f", FL + (double)i, B - (B - T) * (double)acc / (double)valid);
        }
        put(o, "H%.1f\"><title>cumulative share of the %zu calls</title></path>", FL + pw, valid);
        for (i = 0; i <= 4; i++)
            put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\">%zu %%</text>", FL + pw + 4, B - (B - T) * (double)i / 4 + 4, i * 25);
    }
    marks(o, &x, run->r, T, B, fid);
    if (below)
        put(o, "<text class=\"ax beyond\" x=\"%.1f\" y=\"%.1f\">&#9664; %zu call%s below (from %s ms)</text>", FL + 2, T - 34,
            below, below == 1 ? "" : "s", rpx__h_num3(b1, sizeof b1, xmin));
    if (above)
        put(o, "<text class=\"ax beyond\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%zu call%s above (to %s ms) &#9654;</text>",
            FL + pw - 2, T - 34, above, above == 1 ? "" : "s", rpx__h_num3(b2, sizeof b2, xmax));
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">latency per call (ms%s)</text>", FL + pw / 2, B + 32,
        x.log ? ", log scale" : "");
    put(o, "<text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">calls per bin</text>",
        (T + B) / 2, (T + B) / 2);
    free(cnt);
    free(cum);
    fig_close(o, "Every timed call counted: bars are a histogram of 60 bins over the p0.1 to p99.9 range (the calls "
                 "beyond it are counted at the axis's edges), the line the cumulative share of all calls (right axis). "
                 "Lines: p50, p95, p99 as the report states them; shaded: their 95 % intervals.");
}

/* Calls against index (or intended send time), one colour per process,
 * warmup calls in a band on the left; values[] per call. */
static void series(hout *o, const rpx_h_run *run, const double *values, const char *fid, const char *ylabel,
                   int allow_log, int with_warmup, const char *caption_extra)
{
    const double H = 300, T = 24, B = 244;
    double pw = FW - FL - FR, wpw = 0, mn, mx, xmin = 0, xmax, wmn, wmx;
    size_t i, nw = with_warmup ? run->nwarm : 0;
    axis x, y;
    int envelope = run->n > RPX_HTML_POINT_LIMIT, p;
    const double *xs = values == run->s ? run->x_ms : NULL;
    char cap[600];
    if (!run->n) return;
    minmax(values, run->n, &mn, &mx);
    if (nw) {
        minmax(run->warm, nw, &wmn, &wmx);
        if (wmn < mn) mn = wmn;
        if (wmx > mx) mx = wmx;
        wpw = 70;
    }
    if (xs) minmax(xs, run->n, &xmin, &xmax);
    else xmax = (double)(run->n - 1);
    if (xmax <= xmin) xmax = xmin + 1;
    amake(&y, mn, mx, allow_log, B, T);
    if (!allow_log) { /* CPU numbers: whole ticks, half a CPU of room */
        y.lo = mn - 0.5;
        y.hi = mx + 0.5;
        y.integer = 1;
    }
    x.log = 0;
    x.integer = !xs;
    x.lo = xmin;
    x.hi = xmax;
    x.p0 = 0;
    x.p1 = pw - wpw;
    fig_open(o, fid, H, ylabel, "zoom");
    aticks(o, &y, 1, FL, FL + pw);
    if (nw) {   /* the warmup calls: their own band, process after process */
        put(o, "<rect class=\"warmband\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
               "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">warmup</text><path class=\"warm\" d=\"",
            FL, T, wpw - 6, B - T, FL + (wpw - 6) / 2, B + 14);
        for (i = 0; i < nw; i++)
            if (isfinite(run->warm[i]) && (!y.log || run->warm[i] > 0))
                put(o, "M%.1f %.1fh0", FL + 3 + (wpw - 12) * (double)i / (double)(nw > 1 ? nw - 1 : 1), apos(&y, run->warm[i]));
        put(o, "\"><title>%zu warmup calls (no statistic uses them)</title></path>", nw);
    }
    /* the plot area: its own coordinates, which the page's script zooms along x */
    put(o, "<svg class=\"plot\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" viewBox=\"0 0 %.1f %.1f\" preserveAspectRatio=\"none\""
           " data-x0=\"%.17g\" data-x1=\"%.17g\" data-w=\"%.1f\" data-ylo=\"%.17g\" data-yhi=\"%.17g\" data-ylog=\"%d\" data-xname=\"%s\">",
        FL + wpw, T, pw - wpw, B - T, pw - wpw, B - T, x.lo, x.hi, pw - wpw, y.lo, y.hi, y.log, xs ? "sent at ms" : "call");
    put(o, "<rect class=\"hit\" x=\"0\" y=\"0\" width=\"%.1f\" height=\"%.1f\"/>", pw - wpw, B - T);
    for (p = 0; p < run->nproc || (p == 0 && run->nproc == 0); p++) {
        put(o, "<path class=\"pts p%d\" d=\"", p % NPROC_COLOURS);
        if (!envelope) {
            for (i = 0; i < run->n; i++) {
                double xv = xs ? xs[i] : (double)i;
                if (run->proc[i] != p || !isfinite(values[i]) || (y.log && values[i] <= 0)) continue;
                put(o, "M%.2f %.1fh0", apos(&x, xv), apos(&y, values[i]) - T);
            }
        } else {   /* each pixel column: the exact min-max of this process's calls there */
            size_t ncol = (size_t)(pw - wpw) + 1, c;
            double *lo = malloc(ncol * sizeof *lo), *hi = malloc(ncol * sizeof *hi);
            if (lo && hi) {
                for (c = 0; c < ncol; c++) lo[c] = INFINITY, hi[c] = -INFINITY;
                for (i = 0; i < run->n; i++) {
                    double xv = xs ? xs[i] : (double)i, v = values[i];
                    long cc;
                    if (run->proc[i] != p || !isfinite(v) || (y.log && v <= 0)) continue;
                    cc = lround(apos(&x, xv));
                    if (cc < 0) cc = 0;
                    if ((size_t)cc >= ncol) cc = (long)ncol - 1;
                    if (v < lo[cc]) lo[cc] = v;
                    if (v > hi[cc]) hi[cc] = v;
                }
                for (c = 0; c < ncol; c++)
                    if (lo[c] <= hi[c])
                        put(o, "M%zu %.1fV%.1f", c, apos(&y, hi[c]) - T, apos(&y, lo[c]) - T);
            }
            free(lo);
            free(hi);
        }
        put(o, "\"><title>process %d</title></path>", p);
    }
    put(o, "</svg>");
    /* x ticks (the script redraws them when zoomed) */
    put(o, "<g class=\"xt\" data-y=\"%.1f\" data-left=\"%.1f\">", B, FL + wpw);
    {
        axis xa = x;
        xa.p0 = FL + wpw;
        xa.p1 = FL + pw;
        aticks(o, &xa, 0, B, T);
    }
    put(o, "</g><text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", FL + wpw + (pw - wpw) / 2, B + 32,
        xs ? "intended send time (ms from the schedule's start)" : "timed call (index, process after process)");
    put(o, "<text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">", (T + B) / 2, (T + B) / 2);
    rpx__h_esc(o, ylabel);
    put(o, "%s</text>", y.log ? " (log)" : "");
    /* the legend: one colour per process */
    for (p = 0; p < run->nproc && p < 16; p++)
        put(o, "<rect class=\"sw p%d\" x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\"/><text class=\"ax\" x=\"%.1f\" y=\"%.1f\">%d</text>",
            p % NPROC_COLOURS, FL + 60.0 + 34.0 * p, H - 16, FL + 74.0 + 34.0 * p, H - 7, p);
    if (run->nproc) put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\">process</text>", FL, H - 7);
    snprintf(cap, sizeof cap, "%s%s Drag across the plot to zoom in, double-click to zoom out; hover for the position.",
             envelope ? "More calls than " : "Every timed call is a dot. ", caption_extra);
    if (envelope) {
        char num[32];
        snprintf(num, sizeof num, "%d", RPX_HTML_POINT_LIMIT);
        snprintf(cap, sizeof cap, "More than %s calls: each pixel column shows the exact minimum-maximum range of "
                                  "its calls, per process (no call is left out).%s Drag across the plot to zoom in, "
                                  "double-click to zoom out; hover for the position.", num, caption_extra);
    }
    fig_close(o, cap);
}

void rpx__h_fig_timeline(hout *o, const rpx_h_run *run, const char *id)
{
    char fid[96];
    snprintf(fid, sizeof fid, "%s-calls", id);
    series(o, run, run->s, fid, "latency (ms)", 1, 1,
           run->x_ms ? " Open loop: each request at its intended send time, its latency from that time."
                     : " Colours: worker processes; the grey band on the left holds the warmup calls.");
}

void rpx__h_fig_cpus(hout *o, const rpx_h_run *run, const char *id)
{
    double *v;
    size_t i;
    char fid[96];
    if (!run->cpu) return;
    v = malloc(run->n * sizeof *v);
    if (!v) return;
    for (i = 0; i < run->n; i++) v[i] = run->cpu[i] >= 0 ? (double)run->cpu[i] : NAN;
    snprintf(fid, sizeof fid, "%s-cpu", id);
    rpx_h_run r2 = *run;
    r2.x_ms = NULL;
    series(o, &r2, v, fid, "CPU the call started on", 0, 0, " From call_records.cpu_start.");
    free(v);
}

void rpx__h_fig_boxes(hout *o, const rpx_h_run *run, const char *id)
{
    const json_t *bp = json_object_get(run->r, "latency_by_process");
    size_t np = json_array_size(bp), k;
    const double T = 20, B = 230;
    double H, pw = FW - FL - FR, mn, mx, slot;
    axis y;
    char fid[96], b[6][40];
    if (np == 0 || !run->n) return;
    H = 280;
    minmax(run->s, run->n, &mn, &mx);
    amake(&y, mn, mx, 1, B, T);
    slot = pw / (double)np;
    snprintf(fid, sizeof fid, "%s-box", id);
    fig_open(o, fid, H, "per-process box plots", NULL);
    aticks(o, &y, 1, FL, FL + pw);
    for (k = 0; k < np; k++) {
        const json_t *e = json_array_get(bp, k);
        double off = rpx__h_jnum(json_object_get(e, "sample_offset")), cnt = rpx__h_jnum(json_object_get(e, "measured_calls"));
        double p50 = rpx__h_jnum(json_object_get(e, "p50_ms")), lo = rpx__h_jnum(json_object_get(e, "min_ms"));
        double hi = rpx__h_jnum(json_object_get(e, "max_ms")), p95 = rpx__h_jnum(json_object_get(e, "p95_ms"));
        double p99 = rpx__h_jnum(json_object_get(e, "p99_ms"));
        double cx = FL + slot * ((double)k + 0.5), w = slot * 0.5 > 60 ? 60 : slot * 0.5, q1 = NAN, q3 = NAN;
        if (isfinite(off) && isfinite(cnt) && cnt > 0 && off + cnt <= (double)run->n) {
            size_t n = (size_t)cnt, j;
            double *s = malloc(n * sizeof *s);
            if (s) {
                for (j = 0; j < n; j++) s[j] = run->s[(size_t)off + j];
                qsort(s, n, sizeof *s, cmpd);
                q1 = rpx_percentile_sorted(s, n, 25);
                q3 = rpx_percentile_sorted(s, n, 75);
                free(s);
            }
        }
        put(o, "<g class=\"p%d\"><title>process %zu: p50 %s ms, p95 %s ms, p99 %s ms, min %s ms, max %s ms (box: p25-p75 of its %s calls)</title>",
            (int)(k % NPROC_COLOURS), k, rpx__h_num3(b[0], 40, p50), rpx__h_num3(b[1], 40, p95), rpx__h_num3(b[2], 40, p99),
            rpx__h_num3(b[3], 40, lo), rpx__h_num3(b[4], 40, hi), rpx__h_num3(b[5], 40, cnt));
        if (isfinite(lo) && isfinite(hi) && (!y.log || lo > 0))
            put(o, "<line class=\"whisk\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", cx, apos(&y, lo), cx, apos(&y, hi));
        if (isfinite(q1) && isfinite(q3) && (!y.log || q1 > 0))
            put(o, "<rect class=\"box\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", cx - w / 2, apos(&y, q3), w,
                fmax(apos(&y, q1) - apos(&y, q3), 1));
        if (isfinite(p50) && (!y.log || p50 > 0))
            put(o, "<line class=\"med\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", cx - w / 2, apos(&y, p50), cx + w / 2, apos(&y, p50));
        put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%zu</text></g>", cx, B + 14, k);
    }
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">worker process</text>", FL + pw / 2, B + 32);
    put(o, "<text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">latency (ms%s)</text>",
        (T + B) / 2, (T + B) / 2, y.log ? ", log" : "");
    fig_close(o, "One box per worker process: the line is its p50 (latency_by_process), the box its p25-p75, the whisker "
                 "its minimum to maximum. Hover for the report's values.");
}

/* Rows of statistics objects as ranges: min-max line, p50 dot, p95 and p99 ticks. */
void rpx__h_fig_stat_rows(hout *o, const char *const *labels, const json_t *const *stats, size_t n, const char *id,
                          const char *caption)
{
    const double L = 170, T = 16, RH = 26;
    double H = T + RH * (double)n + 40, mn = INFINITY, mx = -INFINITY, B = T + RH * (double)n;
    size_t k;
    axis x;
    char b[5][40];
    static const char *const keys[5] = {"min_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"};
    for (k = 0; k < n; k++) {
        int j;
        for (j = 0; j < 5; j++) {
            double v = rpx__h_jnum(json_object_get(stats[k], keys[j]));
            if (isfinite(v)) { if (v < mn) mn = v; if (v > mx) mx = v; }
        }
    }
    if (!(mn <= mx)) return;
    amake(&x, mn, mx, 1, L, FW - FR);
    if (x.log && mn <= 0) amake(&x, mn, mx, 0, L, FW - FR);
    fig_open(o, id, H, caption, NULL);
    aticks(o, &x, 0, B, T);
    for (k = 0; k < n; k++) {
        double v[5], yy = T + RH * ((double)k + 0.5);
        int j;
        for (j = 0; j < 5; j++) {
            v[j] = rpx__h_jnum(json_object_get(stats[k], keys[j]));
            if (x.log && v[j] <= 0) v[j] = NAN;
        }
        put(o, "<g><title>");
        rpx__h_esc(o, labels[k]);
        put(o, ": min %s, p50 %s, p95 %s, p99 %s, max %s ms</title>", rpx__h_num3(b[0], 40, v[0]), rpx__h_num3(b[1], 40, v[1]),
            rpx__h_num3(b[2], 40, v[2]), rpx__h_num3(b[3], 40, v[3]), rpx__h_num3(b[4], 40, v[4]));
        put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 8, yy + 4);
        rpx__h_esc(o, labels[k]);
        put(o, "</text>");
        if (isfinite(v[0]) && isfinite(v[4]))
            put(o, "<line class=\"whisk\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", apos(&x, v[0]), yy, apos(&x, v[4]), yy);
        for (j = 2; j < 4; j++)
            if (isfinite(v[j]))
                put(o, "<line class=\"mark m%d\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", j - 1, apos(&x, v[j]), yy - 7,
                    apos(&x, v[j]), yy + 7);
        if (isfinite(v[1])) put(o, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\"/>", apos(&x, v[1]), yy);
        put(o, "</g>");
    }
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">ms%s</text>", (L + FW - FR) / 2, B + 32, x.log ? " (log scale)" : "");
    fig_close(o, "Each row: minimum to maximum (line), p50 (dot), p95 and p99 (ticks), as the report states them.");
}

/* The attainable GFLOP/s of a target's bound (its FLOPs over its latency),
 * NAN where the report has no such bound. */
static double bound_gflops(const json_t *b, double flops)
{
    double lat = rpx__h_jnum(json_object_get(b, "latency_ms")), f = rpx__h_jnum(json_object_get(b, "flops"));
    if (!isfinite(f)) f = flops;
    return isfinite(lat) && lat > 0 && isfinite(f) && f > 0 ? f / (lat * 1e-3) / 1e9 : NAN;
}

/* Log-log roofline of each target: attainable FLOP/s against arithmetic
 * intensity, the measured point (FLOPs / measured p50) where the intensity is
 * known, else the measured FLOP/s as a dashed line; each target's ideal and
 * unfused bound as its own labelled mark (a square and a triangle at the
 * bound's intensity and attainable FLOP/s, or a dotted level where the
 * bound's intensity is unknown). */
void rpx__h_fig_roofline(hout *o, const json_t *report, const char *id)
{
    const json_t *rl = json_object_get(report, "roofline"), *eff = json_object_get(report, "efficiency"), *t;
    const char *key;
    double flops = rpx__h_jnum(json_object_get(eff, "flops"));
    double ii = rpx__h_jnum(json_object_get(eff, "intensity_ideal")), iu = rpx__h_jnum(json_object_get(eff, "intensity_unfused"));
    double p50 = rpx__h_jnum(jget2(report, "latency", "p50_ms")), meas = flops / (p50 * 1e-3) / 1e9;
    double pmax = 0, pmin = INFINITY;
    const double T = 20, B = 300, H = 350;
    axis x, y;
    int k = 0;
    char fid[96], b1[40], b2[40];
    if (!json_is_object(rl) || json_object_size(rl) == 0 || !isfinite(meas)) return;
    json_object_foreach((json_t *)rl, key, t) {
        double pk = rpx__h_jnum(jget2(t, "peak_dense", "tflops")) * 1e3;
        if (isfinite(pk)) { if (pk > pmax) pmax = pk; if (pk < pmin) pmin = pk; }
    }
    if (!(pmax > 0)) return;
    json_object_foreach((json_t *)rl, key, t) {   /* the bounds' marks fit on the axis */
        double gi = bound_gflops(json_object_get(t, "ideal"), flops), gu = bound_gflops(json_object_get(t, "unfused"), flops);
        if (isfinite(gi) && gi / 1.5 < pmin / 1000) pmin = gi * 1000 / 1.5;
        if (isfinite(gu) && gu / 1.5 < pmin / 1000) pmin = gu * 1000 / 1.5;
    }
    amake(&x, 0.01, 10000, 1, FL, FW - FR - 150);
    amake(&y, fmin(meas, pmin / 1000) , fmax(meas, pmax) * 1.5, 1, B, T);
    snprintf(fid, sizeof fid, "%s-roof", id);
    fig_open(o, fid, H, "roofline (log-log)", NULL);
    aticks(o, &x, 0, B, T);
    aticks(o, &y, 1, FL, FW - FR - 150);
    json_object_foreach((json_t *)rl, key, t) {
        double pk = rpx__h_jnum(jget2(t, "peak_dense", "tflops")) * 1e3, bw = rpx__h_jnum(json_object_get(t, "memory_bandwidth_gbps"));
        double ridge = isfinite(bw) && bw > 0 ? pk / bw : NAN, ly;
        if (!isfinite(pk)) continue;
        put(o, "<g class=\"p%d\"><title>", k % NPROC_COLOURS);
        rpx__h_esc(o, key);
        put(o, ": peak %s GFLOP/s, memory %s GB/s</title><path class=\"roof\" d=\"", rpx__h_num3(b1, sizeof b1, pk), rpx__h_num3(b2, sizeof b2, bw));
        if (isfinite(ridge) && ridge > x.lo) {
            double x0 = x.lo, y0 = bw * x0;
            if (y0 < y.lo) { x0 = y.lo / bw; y0 = y.lo; }
            put(o, "M%.1f %.1fL%.1f %.1fH%.1f", apos(&x, x0), apos(&y, y0), apos(&x, fmin(ridge, x.hi)), apos(&y, fmin(pk, bw * x.hi)), apos(&x, x.hi));
        } else {
            put(o, "M%.1f %.1fH%.1f", apos(&x, x.lo), apos(&y, pk), apos(&x, x.hi));
        }
        ly = T + 14.0 * k + 10;
        put(o, "\"/><rect class=\"sw\" x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\"/><text class=\"ax\" x=\"%.1f\" y=\"%.1f\">",
            FW - FR - 140, ly - 9, FW - FR - 126, ly);
        rpx__h_esc(o, key);
        put(o, "</text></g>");
        k++;
    }
    k = 0;
    json_object_foreach((json_t *)rl, key, t) {   /* each target's two bounds, apart */
        int kind;
        if (!isfinite(rpx__h_jnum(jget2(t, "peak_dense", "tflops")))) continue;
        for (kind = 0; kind < 2; kind++) {
            const char *kn = kind ? "unfused" : "ideal";
            const json_t *b = json_object_get(t, kn);
            double g = bound_gflops(b, flops), lat = rpx__h_jnum(json_object_get(b, "latency_ms"));
            double ai = rpx__h_jnum(json_object_get(b, "arithmetic_intensity")), px, py;
            char b3[40];
            if (!isfinite(g)) continue;
            py = apos(&y, g);
            put(o, "<g class=\"bnd %s\" data-target=\"", kn);
            rpx__h_esc(o, key);
            put(o, "\" data-ms=\"%.17g\"><title>", lat);
            rpx__h_esc(o, key);
            put(o, ": %s bound %s ms = %s GFLOP/s attainable", kn, rpx__h_num3(b1, sizeof b1, lat), rpx__h_num3(b2, sizeof b2, g));
            if (isfinite(ai) && ai > 0) put(o, " at %s FLOP/byte", rpx__h_num3(b3, sizeof b3, ai));
            else put(o, " (arithmetic intensity unknown: no traffic figure)");
            put(o, "</title>");
            if (isfinite(ai) && ai > 0) {
                px = apos(&x, fmin(fmax(ai, x.lo), x.hi));
                if (kind) put(o, "<path class=\"bu p%d\" d=\"M%.1f %.1fl5 9h-10z\"/>", k % NPROC_COLOURS, px, py - 5);
                else put(o, "<rect class=\"bi p%d\" x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\"/>", k % NPROC_COLOURS, px - 4, py - 4);
                put(o, "<text class=\"ax bl\" x=\"%.1f\" y=\"%.1f\">%s</text>", px + 7, py + (kind ? 12 : -5), kn);
            } else {
                px = x.p1 - 60.0 * (kind + 1);
                put(o, "<line class=\"bl%s p%d\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", kind ? "u" : "i",
                    k % NPROC_COLOURS, x.p0, py, x.p1, py);
                put(o, "<text class=\"ax bl\" x=\"%.1f\" y=\"%.1f\">%s</text>", px, py - 3, kn);
            }
            put(o, "</g>");
        }
        k++;
    }
    if (isfinite(ii) && ii > 0) {
        put(o, "<circle class=\"meas\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\"><title>measured: %s GFLOP/s at %s FLOP/byte (ideal traffic)</title></circle>",
            apos(&x, fmin(fmax(ii, x.lo), x.hi)), apos(&y, meas), rpx__h_num3(b1, sizeof b1, meas), rpx__h_num3(b2, sizeof b2, ii));
        if (isfinite(iu) && iu > 0)
            put(o, "<circle class=\"meas2\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>measured: %s GFLOP/s at %s FLOP/byte (unfused traffic)</title></circle>",
                apos(&x, fmin(fmax(iu, x.lo), x.hi)), apos(&y, meas), rpx__h_num3(b1, sizeof b1, meas), rpx__h_num3(b2, sizeof b2, iu));
    } else {
        put(o, "<line class=\"measl\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>measured: %s GFLOP/s (arithmetic intensity unknown: no traffic figure)</title></line>",
            x.p0, apos(&y, meas), x.p1, apos(&y, meas), rpx__h_num3(b1, sizeof b1, meas));
    }
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte, log)</text>", (x.p0 + x.p1) / 2, B + 32);
    put(o, "<text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">GFLOP/s (log)</text>",
        (T + B) / 2, (T + B) / 2);
    fig_close(o, "Each target's roof: min(peak FLOP/s, bandwidth x intensity), from the report's roofline. The point (or the "
                 "dashed line where the traffic is unknown) is the model's FLOPs over the measured p50. Each target's "
                 "ideal bound (square) and unfused bound (triangle) sit at the bound's intensity and attainable FLOP/s "
                 "(FLOPs over the bound's latency; a dotted level where the intensity is unknown).");
}

void rpx__h_fig_two(hout *o, const rpx_h_run *a, const rpx_h_run *b, const char *id)
{
    const double H = 300, T = 30, B = 240;
    size_t nb = 60, i, maxc = 0, *ca, *cb;
    double mn1, mx1, mn2, mx2, pw = FW - FL - FR;
    axis x, y;
    int side;
    char fid[96], b1[40], b2[40];
    if (!a->n || !b->n) return;
    minmax(a->s, a->n, &mn1, &mx1);
    minmax(b->s, b->n, &mn2, &mx2);
    amake(&x, fmin(mn1, mn2), fmax(mx1, mx2), 1, FL, FL + pw);
    ca = calloc(nb, sizeof *ca);
    cb = calloc(nb, sizeof *cb);
    if (!ca || !cb) { free(ca); free(cb); return; }
    for (i = 0; i < a->n; i++) if (isfinite(a->s[i])) ca[bin_of(&x, a->s[i], nb)]++;
    for (i = 0; i < b->n; i++) if (isfinite(b->s[i])) cb[bin_of(&x, b->s[i], nb)]++;
    /* shares, so runs of different lengths compare */
    for (i = 0; i < nb; i++) {
        double sa = (double)ca[i] / (double)a->n, sb = (double)cb[i] / (double)b->n;
        if (sa * 1e6 > (double)maxc) maxc = (size_t)(sa * 1e6);
        if (sb * 1e6 > (double)maxc) maxc = (size_t)(sb * 1e6);
    }
    amake(&y, 0, (double)maxc / 1e4, 0, B, T);
    y.lo = 0;
    snprintf(fid, sizeof fid, "%s-two", id);
    fig_open(o, fid, H, "both distributions", NULL);
    aticks(o, &x, 0, B, T);
    aticks(o, &y, 1, FL, FL + pw);
    for (side = 0; side < 2; side++) {
        const size_t *c = side ? cb : ca;
        const rpx_h_run *r = side ? b : a;
        double p50 = rpx__h_jnum(jget2(r->r, "latency", "p50_ms"));
        put(o, "<path class=\"side%d\" d=\"M%.1f %.1f", side, FL, B);
        for (i = 0; i < nb; i++) {
            double yy = apos(&y, 100.0 * (double)c[i] / (double)r->n);
            put(o, "V%.2fH%.2f", yy, x.p0 + (x.p1 - x.p0) * (double)(i + 1) / (double)nb);
        }
        put(o, "V%.1fZ\"><title>%s: %zu calls</title></path>", B, side ? "new" : "base", r->n);
        if (isfinite(p50) && p50 >= x.lo && p50 <= x.hi)
            put(o, "<line class=\"sidem%d\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>%s p50 %s ms</title></line>", side,
                apos(&x, p50), T, apos(&x, p50), B, side ? "new" : "base", rpx__h_num3(b1, sizeof b1, p50));
    }
    put(o, "<rect class=\"sw side0\" x=\"%.1f\" y=\"6\" width=\"10\" height=\"10\"/><text class=\"ax\" x=\"%.1f\" y=\"15\">base</text>"
           "<rect class=\"sw side1\" x=\"%.1f\" y=\"6\" width=\"10\" height=\"10\"/><text class=\"ax\" x=\"%.1f\" y=\"15\">new</text>",
        FL, FL + 14, FL + 70, FL + 84);
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">latency per call (ms%s)</text>", FL + pw / 2, B + 32,
        x.log ? ", log scale" : "");
    put(o, "<text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">%% of calls per bin</text>",
        (T + B) / 2, (T + B) / 2);
    (void)b2;
    free(ca);
    free(cb);
    fig_close(o, "Histograms of every timed call of each side, as shares of its calls (60 bins on one axis); lines: each side's p50.");
}

void rpx__h_fig_procs_two(hout *o, const rpx_h_run *a, const rpx_h_run *b, const char *id)
{
    const double H = 200, T = 20, B = 130;
    const json_t *pa = json_object_get(a->r, "latency_by_process"), *pb = json_object_get(b->r, "latency_by_process");
    double mn = INFINITY, mx = -INFINITY, pw = FW - FL - FR;
    size_t k;
    int side;
    axis x;
    char fid[96], b1[40];
    for (side = 0; side < 2; side++) {
        const json_t *p = side ? pb : pa;
        for (k = 0; k < json_array_size(p); k++) {
            double v = rpx__h_jnum(json_object_get(json_array_get(p, k), "p50_ms"));
            if (isfinite(v)) { if (v < mn) mn = v; if (v > mx) mx = v; }
        }
    }
    if (!(mn <= mx)) return;
    amake(&x, mn, mx, 1, FL + 40, FL + pw);
    snprintf(fid, sizeof fid, "%s-procs", id);
    fig_open(o, fid, H, "per-process p50 of each side", NULL);
    aticks(o, &x, 0, B, T);
    for (side = 0; side < 2; side++) {
        const json_t *p = side ? pb : pa;
        double yy = T + 30 + 50.0 * side;
        put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", FL + 30, yy + 4, side ? "new" : "base");
        for (k = 0; k < json_array_size(p); k++) {
            double v = rpx__h_jnum(json_object_get(json_array_get(p, k), "p50_ms"));
            if (!isfinite(v)) continue;
            put(o, "<circle class=\"sidem%d dotp\" cx=\"%.2f\" cy=\"%.1f\" r=\"5\"><title>%s process %zu: p50 %s ms</title></circle>", side,
                apos(&x, v), yy, side ? "new" : "base", k, rpx__h_num3(b1, sizeof b1, v));
        }
    }
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">p50 of each worker process (ms%s)</text>", FL + pw / 2, B + 32,
        x.log ? ", log" : "");
    fig_close(o, "Each dot: one worker process's p50 (latency_by_process of each report); the interval of the ratio is over these.");
}

void rpx__h_fig_ratio(hout *o, const json_t *cmp, const char *id)
{
    static const char *const stats[3] = {"p50", "p95", "mean"};
    const double L = 120, T = 20, RH = 36, H = T + RH * 3 + 50, B = T + RH * 3;
    double thr = rpx__h_jnum(json_object_get(cmp, "threshold")), mn = INFINITY, mx = -INFINITY;
    axis x;
    int k;
    char fid[96], b1[40], b2[40], b3[40], key[40];
    if (!isfinite(thr)) thr = 0;
    for (k = 0; k < 3; k++) {
        const json_t *ci;
        double r;
        snprintf(key, sizeof key, "%s_ratio", stats[k]);
        r = rpx__h_jnum(json_object_get(cmp, key));
        snprintf(key, sizeof key, "%s_ratio_ci", stats[k]);
        ci = json_object_get(cmp, key);
        if (isfinite(r)) { mn = fmin(mn, r); mx = fmax(mx, r); }
        if (json_array_size(ci) == 2) {
            mn = fmin(mn, rpx__h_jnum(json_array_get(ci, 0)));
            mx = fmax(mx, rpx__h_jnum(json_array_get(ci, 1)));
        }
    }
    mn = fmin(mn, 1 - thr);
    mx = fmax(mx, 1 + thr);
    if (!(mn <= mx)) return;
    amake(&x, mn, mx, 0, L, FW - FR);
    snprintf(fid, sizeof fid, "%s-ratio", id);
    fig_open(o, fid, H, "ratio new / base with its interval against the threshold band", NULL);
    put(o, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>threshold band: %s to %s (no change within it)</title></rect>",
        apos(&x, 1 - thr), T, apos(&x, 1 + thr) - apos(&x, 1 - thr), B - T, rpx__h_num3(b1, sizeof b1, 1 - thr), rpx__h_num3(b2, sizeof b2, 1 + thr));
    aticks(o, &x, 0, B, T);
    put(o, "<line class=\"one\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", apos(&x, 1), T, apos(&x, 1), B);
    for (k = 0; k < 3; k++) {
        const json_t *ci, *vd;
        double r, yy = T + RH * (k + 0.5);
        snprintf(key, sizeof key, "%s_ratio", stats[k]);
        r = rpx__h_jnum(json_object_get(cmp, key));
        snprintf(key, sizeof key, "%s_ratio_ci", stats[k]);
        ci = json_object_get(cmp, key);
        snprintf(key, sizeof key, "%s_verdict", stats[k]);
        vd = json_object_get(cmp, key);
        put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s: ", L - 8, yy + 4, stats[k]);
        rpx__h_esc(o, json_is_string(vd) ? json_string_value(vd) : "n/a");
        put(o, "</text>");
        if (json_array_size(ci) == 2) {
            double lo = rpx__h_jnum(json_array_get(ci, 0)), hi = rpx__h_jnum(json_array_get(ci, 1));
            if (isfinite(lo) && isfinite(hi))
                put(o, "<line class=\"whisk\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>%s ratio 95 %% interval [%s, %s]</title></line>",
                    apos(&x, lo), yy, apos(&x, hi), yy, stats[k], rpx__h_num3(b1, sizeof b1, lo), rpx__h_num3(b2, sizeof b2, hi));
        }
        if (isfinite(r))
            put(o, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>%s ratio %s</title></circle>", apos(&x, r), yy, stats[k],
                rpx__h_num3(b3, sizeof b3, r));
    }
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">new / base (below 1: new is faster)</text>", (L + FW - FR) / 2, B + 32);
    fig_close(o, "Each statistic's ratio (dot) with its interval (line, where the comparison states one) against the threshold "
                 "band around 1 (shaded): slower or faster when the whole interval lies beyond the band, same when it lies "
                 "within it, inconclusive otherwise (docs/statistics.md).");
}

/* ---- the axes and frames for the other views' figures (html_int.h) ------- */

void rpx__h_axis_make(rpx_h_axis *a, double mn, double mx, int allow_log, double p0, double p1)
{
    amake(a, mn, mx, allow_log, p0, p1);
}

double rpx__h_axis_pos(const rpx_h_axis *a, double v) { return apos(a, v); }

void rpx__h_axis_ticks(hout *o, const rpx_h_axis *a, int vertical, double c0, double c1)
{
    aticks(o, a, vertical, c0, c1);
}

void rpx__h_fig_open(hout *o, const char *id, double h, const char *label, const char *cls)
{
    fig_open(o, id, h, label, cls);
}

void rpx__h_fig_close(hout *o, const char *caption) { fig_close(o, caption); }
