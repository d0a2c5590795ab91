/* svg.c — owns the roofline picture: hand-written SVG text of a target's roof
 * (min(peak, bandwidth × intensity)) on log-log axes with the model's ideal,
 * unfused and measured points, written through the output guard (it carries
 * RPX_OUTPUT_SVG_MARK, so it replaces a figure of rpxprof's and nothing else).
 * Numbers are printed in the C locale. */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "rpxprof/error.h"
#include "common/output.h"
#include "common/json.h"
#include "rpxprof/roofline.h"
#include "report/svg.h"

typedef rpx_strbuf sbuf;
#define sb_printf rpx__sb_printf

/* XML-escaped copy of s into out. */
static void esc(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; s && *s && n + 7 < size; s++) {
        const char *r = NULL;
        switch (*s) {
        case '&': r = "&amp;"; break;
        case '<': r = "&lt;"; break;
        case '>': r = "&gt;"; break;
        case '"': r = "&quot;"; break;
        default: break;
        }
        if (r) {
            size_t k = strlen(r);
            memcpy(out + n, r, k);
            n += k;
        } else {
            out[n++] = *s;
        }
    }
    out[n] = '\0';
}

/* "0.01", "1", "1000", "1e+06" style decade labels. */
static void decade_label(int k, char *out, size_t size)
{
    if (k >= -3 && k <= 5)
        snprintf(out, size, "%g", pow(10.0, k));
    else
        snprintf(out, size, "1e%d", k);
}

typedef struct axes {
    double lx0, lx1, ly0, ly1; /* log10 ranges */
    double left, top, w, h;
} axes;

static double X(const axes *a, double x)
{
    double t = (log10(x) - a->lx0) / (a->lx1 - a->lx0);
    return a->left + (isfinite(t) ? t : 0) * a->w; /* never "nan" in an attribute */
}

static double Y(const axes *a, double y)
{
    double t = (log10(y) - a->ly0) / (a->ly1 - a->ly0);
    return a->top + a->h - (isfinite(t) ? t : 0) * a->h;
}

char *rpx_roofline_svg(const char *title, double peak_tflops, double bandwidth_gbps,
                       const rpx_roofline_point *points, size_t n_points)
{
    static locale_t c_locale;
    static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"};
    locale_t old = (locale_t)0;
    sbuf b = {0};
    axes a;
    double scale, peak, ridge, imin, imax, pmin, pmax, roof0;
    const char *unit;
    char t[512], lab[32];
    size_t i;
    int k;
    if (!(peak_tflops > 0) || !(bandwidth_gbps > 0) || isinf(peak_tflops) ||
        isinf(bandwidth_gbps))
        return NULL;
    if (!c_locale) c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c_locale) old = uselocale(c_locale);
    /* GFLOP/s for small targets (CPUs, Jetsons), TFLOP/s otherwise */
    scale = peak_tflops < 1.0 ? 1000.0 : 1.0;
    unit = peak_tflops < 1.0 ? "GFLOP/s" : "TFLOP/s";
    peak = peak_tflops * scale;
    ridge = peak_tflops * 1e3 / bandwidth_gbps; /* FLOP/byte */
    imin = ridge / 100.0;
    imax = ridge * 100.0;
    pmin = peak;
    pmax = peak * 2.0;
    for (i = 0; i < n_points; i++) {
        double x = points[i].intensity, y = points[i].tflops * scale;
        if (!(x > 0) || !(y > 0) || isinf(x) || isinf(y)) continue;
        if (x < imin) imin = x;
        if (x > imax) imax = x;
        if (y < pmin) pmin = y;
        if (y * 2 > pmax) pmax = y * 2;
    }
    a.lx0 = floor(log10(imin));
    a.lx1 = ceil(log10(imax));
    if (a.lx1 <= a.lx0) a.lx1 = a.lx0 + 1;
    roof0 = bandwidth_gbps * pow(10.0, a.lx0) / 1e3 * scale; /* roof at the left edge */
    if (roof0 < pmin) pmin = roof0;
    a.ly0 = floor(log10(pmin));
    a.ly1 = ceil(log10(pmax));
    if (a.ly1 <= a.ly0) a.ly1 = a.ly0 + 1;
    a.left = 90;
    a.top = 50;
    a.w = 600;
    a.h = 400;

    esc(title ? title : "roofline", t, sizeof t);
    sb_printf(&b,
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" RPX_OUTPUT_SVG_MARK "\n"
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"520\" "
              "viewBox=\"0 0 760 520\" font-family=\"sans-serif\" font-size=\"12\">\n"
              "<title>%s</title>\n"
              "<rect width=\"760\" height=\"520\" fill=\"white\"/>\n"
              "<text x=\"380\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n",
              t, t);
    /* grid and decade labels */
    for (k = (int)a.lx0; k <= (int)a.lx1; k++) {
        double x = X(&a, pow(10.0, k));
        decade_label(k, lab, sizeof lab);
        sb_printf(&b,
                  "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>\n"
                  "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n",
                  x, a.top, x, a.top + a.h, x, a.top + a.h + 18, lab);
    }
    for (k = (int)a.ly0; k <= (int)a.ly1; k++) {
        double y = Y(&a, pow(10.0, k));
        decade_label(k, lab, sizeof lab);
        sb_printf(&b,
                  "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>\n"
                  "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n",
                  a.left, y, a.left + a.w, y, a.left - 8, y + 4, lab);
    }
    sb_printf(&b,
              "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
              "stroke=\"#333\"/>\n"
              "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">arithmetic intensity "
              "(FLOP/byte)</text>\n"
              "<text x=\"20\" y=\"%.2f\" text-anchor=\"middle\" transform=\"rotate(-90 20 "
              "%.2f)\">attainable %s</text>\n",
              a.left, a.top, a.w, a.h, a.left + a.w / 2, a.top + a.h + 42, a.top + a.h / 2,
              a.top + a.h / 2, unit);
    /* the roof */
    {
        double x0 = pow(10.0, a.lx0), x1 = pow(10.0, a.lx1);
        sb_printf(&b,
                  "<polyline class=\"roof\" fill=\"none\" stroke=\"#000\" stroke-width=\"2.5\" "
                  "points=\"%.2f,%.2f %.2f,%.2f %.2f,%.2f\"/>\n",
                  X(&a, x0), Y(&a, roof0), X(&a, ridge), Y(&a, peak), X(&a, x1), Y(&a, peak));
        sb_printf(&b,
                  "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">peak %g %s</text>\n"
                  "<text x=\"%.2f\" y=\"%.2f\">%g GB/s</text>\n"
                  "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#888\" "
                  "stroke-dasharray=\"4 4\"/>\n"
                  "<text x=\"%.2f\" y=\"%.2f\" fill=\"#555\">ridge %.4g FLOP/B</text>\n",
                  a.left + a.w - 6, Y(&a, peak) - 8, peak, unit, X(&a, x0) + 6,
                  Y(&a, roof0) - 10, bandwidth_gbps, X(&a, ridge), Y(&a, peak), X(&a, ridge),
                  a.top + a.h, X(&a, ridge) + 4, a.top + a.h - 6, ridge);
    }
    /* the points */
    for (i = 0; i < n_points; i++) {
        double x = points[i].intensity, y = points[i].tflops * scale;
        const char *c = colors[i % (sizeof colors / sizeof colors[0])];
        char l[128];
        if (!(x > 0) || !(y > 0) || isinf(x) || isinf(y)) continue;
        esc(points[i].label ? points[i].label : "point", l, sizeof l);
        sb_printf(&b,
                  "<circle class=\"point\" cx=\"%.2f\" cy=\"%.2f\" r=\"6\" fill=\"%s\"/>\n"
                  "<text x=\"%.2f\" y=\"%.2f\" fill=\"%s\">%s (%.4g FLOP/B, %.4g %s)</text>\n",
                  X(&a, x), Y(&a, y), c, X(&a, x) + 9, Y(&a, y) + 4 + 14.0 * (double)i, c, l, x,
                  y, unit);
    }
    sb_printf(&b, "</svg>\n");
    if (c_locale) uselocale(old);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static double getnum(const json_t *o, const char *k)
{
    const json_t *v = o ? json_object_get(o, k) : NULL;
    return v && json_is_number(v) ? json_number_value(v) : NAN;
}

/* The picture of a roofline object; `path` names it in messages. */
static int roofline_svg_text(const char *path, const json_t *r, char **out, rpx_error *err)
{
    const json_t *ideal = json_object_get(r, "ideal"), *unf = json_object_get(r, "unfused");
    const json_t *gpu = json_object_get(r, "gpu"), *pk = json_object_get(r, "peak_dense");
    const json_t *name = json_object_get(gpu, "name"), *prec = json_object_get(r, "precision");
    rpx_roofline_point pts[3];
    size_t n = 0;
    double peak = getnum(pk, "tflops"), bw = getnum(r, "memory_bandwidth_gbps");
    double p50 = getnum(r, "measured_p50_ms");
    char title[320];
    char *svg;
    if (!(peak > 0) || !(bw > 0))
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: cannot draw a roofline without a peak and a memory bandwidth "
                             "(the target lacks one)", path);
    if (json_is_object(ideal)) {
        double f = getnum(ideal, "flops"), lat = getnum(ideal, "latency_ms");
        double ai = getnum(ideal, "arithmetic_intensity");
        pts[n].label = "ideal";
        pts[n].intensity = ai;
        pts[n].tflops = f / (lat * 1e9);
        n++;
        if (p50 > 0) {
            pts[n].label = "measured";
            pts[n].intensity = ai;
            pts[n].tflops = f / (p50 * 1e9);
            n++;
        }
    }
    if (json_is_object(unf)) {
        pts[n].label = "unfused";
        pts[n].intensity = getnum(unf, "arithmetic_intensity");
        pts[n].tflops = getnum(unf, "flops") / (getnum(unf, "latency_ms") * 1e9);
        n++;
    }
    snprintf(title, sizeof title, "Roofline: %s, %s",
             json_is_string(name) ? json_string_value(name) : "target",
             json_is_string(prec) ? json_string_value(prec) : "?");
    svg = rpx_roofline_svg(title, peak, bw, pts, n);
    if (!svg) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    *out = svg;
    return 0;
}

int rpx_roofline_svg_write(const char *path, const json_t *r, rpx_error *err)
{
    char *svg = NULL;
    int rc = roofline_svg_text(path, r, &svg, err);
    if (rc == 0) rc = rpx_write_file_atomic(path, svg, strlen(svg), err);
    free(svg);
    return rc;
}

int rpx_roofline_svg_commit(rpx_output *o, const json_t *r, rpx_error *err)
{
    char *svg = NULL;
    int rc = roofline_svg_text(rpx_output_path(o), r, &svg, err);
    if (rc == 0) {
        rc = rpx_output_commit(o, svg, strlen(svg), err);
    } else {
        rpx_output_discard(o);
    }
    free(svg);
    return rc;
}
