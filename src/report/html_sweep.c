/* html_sweep.c — owns the sweep's page (docs/sweep.md, "The page"): from
 * sweep.json alone, the headline (the scaling exponent with its interval, the
 * best throughput, the knee), latency against the varied value with each
 * point's p50 interval and the roofline bound as a second line (log axes where
 * the values span a decade), throughput against latency with the Pareto front
 * marked, the neighbours that went the wrong way, the points' table, and the
 * capacity search's result when it ran: its sentence, its objectives and a
 * figure of every run's upper bounds against the rate with the objectives'
 * limits (the SLO lines), the rate found and its interval. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "rpxprof/error.h"
#include "rpxprof/html.h"

#define put rpx__sb_printf
#define FIG_H 320.0
#define L 70.0                    /* the plot's left edge */
#define R (RPX_H_FIG_W - 20.0)
#define T 20.0
#define B (FIG_H - 40.0)

typedef struct pt {
    double x, p50, lo, hi, bound, thr;
    const char *label;
    int valid;
} pt;

static double jnum(const json_t *o, const char *k) { return rpx__h_jnum(json_object_get(o, k)); }

/* The points' numbers; x is the value (or the size for a shape or a grid; the
 * point's index when neither is a number). */
static size_t load_points(const json_t *sw, pt **out)
{
    const json_t *arr = json_object_get(sw, "points"), *p;
    size_t i, n = json_array_size(arr);
    pt *v = calloc(n ? n : 1, sizeof *v);
    if (!v) return 0;
    json_array_foreach(arr, i, p) {
        const json_t *ci = json_object_get(p, "p50_ci_ms"), *val = json_object_get(p, "value");
        v[i].x = json_is_number(val) ? rpx__h_jnum(val) : jnum(p, "size");
        if (!isfinite(v[i].x)) v[i].x = (double)(i + 1);
        v[i].p50 = jnum(p, "p50_ms");
        v[i].lo = json_array_size(ci) == 2 ? rpx__h_jnum(json_array_get(ci, 0)) : NAN;
        v[i].hi = json_array_size(ci) == 2 ? rpx__h_jnum(json_array_get(ci, 1)) : NAN;
        v[i].bound = jnum(p, "bound_ms");
        v[i].thr = jnum(p, "throughput_per_s");
        v[i].label = rpx__h_jstr(p, "label");
        v[i].valid = json_is_true(json_object_get(p, "valid"));
    }
    *out = v;
    return n;
}

static void range(const pt *v, size_t n, int which, double *mn, double *mx)
{
    size_t i;
    *mn = INFINITY, *mx = -INFINITY;
    for (i = 0; i < n; i++) {
        double a[4] = {v[i].x, v[i].p50, v[i].bound, v[i].thr};
        double lo = which == 1 && isfinite(v[i].lo) ? v[i].lo : a[which];
        double hi = which == 1 && isfinite(v[i].hi) ? v[i].hi : a[which];
        if (which == 1 && isfinite(v[i].bound) && v[i].bound > 0) {
            if (v[i].bound < lo || !isfinite(lo)) lo = v[i].bound;
        }
        if (isfinite(lo) && lo > 0 && lo < *mn) *mn = lo;
        if (isfinite(hi) && hi > *mx) *mx = hi;
    }
}

/* a polyline through the finite (x, y) of the points, in order of x */
static void line(hout *o, const rpx_h_axis *ax, const rpx_h_axis *ay, const pt *v, size_t n,
                 int bound, const char *cls)
{
    size_t i;
    int any = 0;
    put(o, "<polyline class=\"%s\" fill=\"none\" points=\"", cls);
    for (i = 0; i < n; i++) {
        double y = bound ? v[i].bound : v[i].p50;
        if (!(y > 0) || !v[i].valid) continue;
        put(o, "%s%.1f,%.1f", any ? " " : "", rpx__h_axis_pos(ax, v[i].x), rpx__h_axis_pos(ay, y));
        any = 1;
    }
    put(o, "\"/>");
}

/* Latency (p50, its interval) and the bound against the value. */
static void fig_latency(hout *o, const json_t *sw, const pt *v, size_t n)
{
    rpx_h_axis ax, ay;
    double xmn, xmx, ymn, ymx;
    char b1[32], b2[32], b3[32];
    size_t i;
    const json_t *vary = json_array_get(json_object_get(sw, "vary"), 0);
    range(v, n, 0, &xmn, &xmx);
    range(v, n, 1, &ymn, &ymx);
    /* log axes when the values span a decade */
    rpx__h_axis_make(&ax, xmn, xmx, xmx >= 10 * xmn, L, R);
    rpx__h_axis_make(&ay, ymn, ymx, ymx >= 10 * ymn, B, T);
    rpx__h_fig_open(o, "sweep-latency", FIG_H, "latency against the varied value", NULL);
    rpx__h_axis_ticks(o, &ax, 0, B, T);
    rpx__h_axis_ticks(o, &ay, 1, L, R);
    line(o, &ax, &ay, v, n, 0, "sweep-p50");
    line(o, &ax, &ay, v, n, 1, "sweep-bound");
    for (i = 0; i < n; i++) {
        double x = rpx__h_axis_pos(&ax, v[i].x);
        if (isfinite(v[i].lo) && isfinite(v[i].hi))
            put(o, "<line class=\"sweep-ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
                rpx__h_axis_pos(&ay, v[i].lo), x, rpx__h_axis_pos(&ay, v[i].hi));
        if (v[i].p50 > 0) {
            put(o, "<circle class=\"sweep-point%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>", v[i].valid ? "" : " invalid", x,
                rpx__h_axis_pos(&ay, v[i].p50));
            rpx__h_esc(o, v[i].label);
            put(o, ": p50 %s ms (95 %% CI %s to %s)</title></circle>",
                rpx__h_num3(b1, sizeof b1, v[i].p50), rpx__h_num3(b2, sizeof b2, v[i].lo),
                rpx__h_num3(b3, sizeof b3, v[i].hi));
        }
        if (v[i].bound > 0) {
            put(o, "<rect class=\"sweep-bound-mark\" x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\"><title>",
                x - 3, rpx__h_axis_pos(&ay, v[i].bound) - 3);
            rpx__h_esc(o, v[i].label);
            put(o, ": roofline bound %s ms</title></rect>", rpx__h_num3(b1, sizeof b1, v[i].bound));
        }
    }
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (L + R) / 2, FIG_H - 8);
    rpx__h_esc(o, rpx__h_jstr(vary, "name"));
    put(o, "%s</text><text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
           "text-anchor=\"middle\">latency (ms)</text>", ax.log ? " (log)" : "", (T + B) / 2,
        (T + B) / 2);
    rpx__h_fig_close(o, "p50 (dots, the line) with its 95 % interval (the bars) at every point; "
                        "the roofline bound (squares, the dashed line) where the FLOPs are known.");
}

/* Throughput against latency; the Pareto front: no other point is both faster
 * and of higher throughput. */
static void fig_pareto(hout *o, const pt *v, size_t n)
{
    rpx_h_axis ax, ay;
    double xmn, xmx, ymn, ymx;
    char b1[32], b2[32];
    size_t i, j;
    range(v, n, 1, &xmn, &xmx);
    range(v, n, 3, &ymn, &ymx);
    rpx__h_axis_make(&ax, xmn, xmx, xmx >= 10 * xmn, L, R);
    rpx__h_axis_make(&ay, ymn, ymx, ymx >= 10 * ymn, B, T);
    rpx__h_fig_open(o, "sweep-pareto", FIG_H, "throughput against latency", NULL);
    rpx__h_axis_ticks(o, &ax, 0, B, T);
    rpx__h_axis_ticks(o, &ay, 1, L, R);
    for (i = 0; i < n; i++) {
        int front = v[i].valid && v[i].p50 > 0 && v[i].thr > 0;
        for (j = 0; front && j < n; j++)
            if (j != i && v[j].valid && v[j].p50 <= v[i].p50 && v[j].thr >= v[i].thr &&
                (v[j].p50 < v[i].p50 || v[j].thr > v[i].thr))
                front = 0;
        if (!(v[i].p50 > 0 && v[i].thr > 0)) continue;
        put(o, "<circle class=\"sweep-point%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\"><title>",
            front ? " pareto" : "", rpx__h_axis_pos(&ax, v[i].p50), rpx__h_axis_pos(&ay, v[i].thr),
            front ? 6 : 4);
        rpx__h_esc(o, v[i].label);
        put(o, ": %s /s at p50 %s ms%s</title></circle>", rpx__h_num3(b1, sizeof b1, v[i].thr),
            rpx__h_num3(b2, sizeof b2, v[i].p50), front ? " (on the Pareto front)" : "");
    }
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">p50 latency (ms)</text>"
           "<text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
           "text-anchor=\"middle\">throughput (items/s)</text>", (L + R) / 2, FIG_H - 8, (T + B) / 2,
        (T + B) / 2);
    rpx__h_fig_close(o, "Each point's throughput (items a second at its p50) against its p50; the "
                        "larger dots are the Pareto front: no other point is both faster and of "
                        "higher throughput.");
}

/* Every run of a capacity search (its steps and the re-verification runs),
 * each objective's upper confidence bound against the rate: what each
 * decision was made from. */
static void cap_each_run(const json_t *c, void (*fn)(void *, const json_t *run, const json_t *obj),
                         void *arg)
{
    static const char *const lists[] = {"search", "verified_runs"};
    size_t l, i, k;
    for (l = 0; l < 2; l++) {
        const json_t *runs = json_object_get(c, lists[l]);
        for (i = 0; i < json_array_size(runs); i++) {
            const json_t *objs = json_object_get(json_array_get(runs, i), "objectives");
            for (k = 0; k < json_array_size(objs); k++)
                fn(arg, json_array_get(runs, i), json_array_get(objs, k));
        }
    }
}

typedef struct cap_fig {
    double xmn, xmx, ymn, ymx;
    hout *o;
    const rpx_h_axis *ax, *ay;
    const json_t *limits;         /* the objectives: their texts, in order */
} cap_fig;

static void cap_range(void *arg, const json_t *run, const json_t *obj)
{
    cap_fig *f = arg;
    double r = jnum(run, "rate"), u = jnum(obj, "upper_ms");
    if (r > 0 && r < f->xmn) f->xmn = r;
    if (r > 0 && r > f->xmx) f->xmx = r;
    if (u > 0 && u < f->ymn) f->ymn = u;
    if (u > 0 && u > f->ymx) f->ymx = u;
}

static int objective_index(const json_t *limits, const char *text)
{
    size_t k;
    for (k = 0; text && k < json_array_size(limits); k++)
        if (!strcmp(text, rpx__h_jstr(json_array_get(limits, k), "text"))) return (int)k;
    return 0;
}

static void cap_mark(void *arg, const json_t *run, const json_t *obj)
{
    static const char *const colours[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b"};
    cap_fig *f = arg;
    char b1[32], b2[32];
    double r = jnum(run, "rate"), u = jnum(obj, "upper_ms");
    int valid = json_is_true(json_object_get(run, "valid"));
    int k = objective_index(f->limits, rpx__h_jstr(obj, "text"));
    if (!(r > 0 && u > 0)) return;
    put(f->o, "<circle class=\"cap-run%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" stroke=\"%s\" "
              "fill=\"%s\"><title>", valid ? "" : " invalid", rpx__h_axis_pos(f->ax, r),
        rpx__h_axis_pos(f->ay, u), colours[k % 4], valid ? colours[k % 4] : "none");
    rpx__h_esc(f->o, rpx__h_jstr(obj, "text"));
    put(f->o, " at %s /s: upper bound %s ms%s</title></circle>", rpx__h_num3(b1, sizeof b1, r),
        rpx__h_num3(b2, sizeof b2, u),
        !valid ? " (an invalid run: never a decision)"
               : json_is_true(json_object_get(obj, "holds")) ? " (holds)" : " (does not hold)");
}

/* The runs' upper bounds against the rate, each objective's limit as a
 * horizontal line (the SLO) and the capacity found as a vertical line with its
 * interval as a band. */
static void fig_capacity(hout *o, const json_t *c)
{
    rpx_h_axis ax, ay;
    cap_fig f = {INFINITY, -INFINITY, INFINITY, -INFINITY, o, &ax, &ay,
                 json_object_get(c, "objectives")};
    const json_t *ci = json_object_get(c, "ci");
    double rate = jnum(c, "rate");
    char b1[32];
    size_t k;
    cap_each_run(c, cap_range, &f);
    for (k = 0; k < json_array_size(f.limits); k++) {
        double lim = jnum(json_array_get(f.limits, k), "limit_ms");
        if (lim > 0 && lim < f.ymn) f.ymn = lim;
        if (lim > 0 && lim > f.ymx) f.ymx = lim;
    }
    if (rate > 0 && rate < f.xmn) f.xmn = rate;
    if (rate > 0 && rate > f.xmx) f.xmx = rate;
    if (!(isfinite(f.xmn) && isfinite(f.ymn))) return; /* no run with a bound: no figure */
    rpx__h_axis_make(&ax, f.xmn, f.xmx, f.xmx >= 10 * f.xmn, L, R);
    rpx__h_axis_make(&ay, f.ymn, f.ymx, f.ymx >= 10 * f.ymn, B, T);
    rpx__h_fig_open(o, "sweep-capacity-fig", FIG_H, "the capacity search: each run's upper bounds "
                    "against the rate, the objectives and the rate found", NULL);
    rpx__h_axis_ticks(o, &ax, 0, B, T);
    rpx__h_axis_ticks(o, &ay, 1, L, R);
    if (json_array_size(ci) == 2 && rpx__h_jnum(json_array_get(ci, 0)) > 0 &&
        rpx__h_jnum(json_array_get(ci, 1)) > 0) {
        double x0 = rpx__h_axis_pos(&ax, rpx__h_jnum(json_array_get(ci, 0)));
        double x1 = rpx__h_axis_pos(&ax, rpx__h_jnum(json_array_get(ci, 1)));
        put(o, "<rect class=\"cap-ci\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
            fmin(x0, x1), T, fmax(1.0, fabs(x1 - x0)), B - T);
    }
    for (k = 0; k < json_array_size(f.limits); k++) {
        const json_t *ob = json_array_get(f.limits, k);
        double y = rpx__h_axis_pos(&ay, jnum(ob, "limit_ms"));
        if (!(jnum(ob, "limit_ms") > 0)) continue;
        put(o, "<line class=\"cap-slo\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
               "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L, y, R, y, R - 4,
            y - 4);
        rpx__h_esc(o, rpx__h_jstr(ob, "text"));
        put(o, "</text>");
    }
    if (rate > 0) {
        double x = rpx__h_axis_pos(&ax, rate);
        put(o, "<line class=\"cap-rate\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
               "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\">%s /s</text>", x, T, x, B, x + 4, T + 12,
            rpx__h_num3(b1, sizeof b1, rate));
    }
    cap_each_run(c, cap_mark, &f);
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">rate (/s)%s</text>"
           "<text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
           "text-anchor=\"middle\">upper 95 %% bound of the percentile (ms)</text>",
        (L + R) / 2, FIG_H - 8, ax.log ? " (log)" : "", (T + B) / 2, (T + B) / 2);
    rpx__h_fig_close(o, "Every run of the search and of its re-verification: each objective's "
                        "distribution-free upper 95 % bound (a dot; hollow: an invalid run, never a "
                        "decision) against the rate; the objectives' limits (the horizontal lines), "
                        "the capacity found (the vertical line) and its interval (the band).");
}

/* The capacity block (issue 40 §2 fills it): its sentence, objectives and figure. */
static void capacity(hout *o, const json_t *sw)
{
    const json_t *c = json_object_get(sw, "capacity");
    put(o, "<section id=\"sweep-capacity\"><h2>Capacity</h2>");
    if (!json_is_object(c)) {
        put(o, "<p class=\"muted\">No capacity search in this sweep (--vary rate=auto --slo).</p></section>\n");
        return;
    }
    put(o, "<p>");
    rpx__h_esc(o, rpx__h_jstr(c, "sentence"));
    put(o, "</p>");
    if (json_array_size(json_object_get(c, "objectives"))) {
        const json_t *objs = json_object_get(c, "objectives");
        size_t k;
        char b1[32];
        put(o, "<ul class=\"sweep-slo\">");
        for (k = 0; k < json_array_size(objs); k++) {
            const json_t *ob = json_array_get(objs, k);
            put(o, "<li><code>");
            rpx__h_esc(o, rpx__h_jstr(ob, "text"));
            put(o, "</code>: percentile %s of the ", rpx__h_num3(b1, sizeof b1, jnum(ob, "percentile")));
            rpx__h_esc(o, rpx__h_jstr(ob, "metric"));
            put(o, " below %s ms, with 95 %% confidence</li>", rpx__h_num3(b1, sizeof b1, jnum(ob, "limit_ms")));
        }
        put(o, "</ul>");
    }
    fig_capacity(o, c);
    put(o, "</section>\n");
}

static void headline(hout *o, const json_t *sw)
{
    const json_t *sc = json_object_get(sw, "scaling"), *ci = json_object_get(sc, "exponent_ci");
    const json_t *best = json_object_get(sw, "best_throughput"), *knee = json_object_get(sw, "knee");
    char b1[32], b2[32], b3[32];
    put(o, "<h1>Sweep: ");
    rpx__h_esc(o, rpx__h_jstr(sw, "model"));
    put(o, "</h1>\n<p class=\"headline\">");
    if (json_is_object(sc)) {
        put(o, "Latency grows as (");
        rpx__h_esc(o, rpx__h_jstr(sc, "size_of"));
        put(o, ")<sup>%s</sup>", rpx__h_num3(b1, sizeof b1, jnum(sc, "exponent")));
        if (json_array_size(ci) == 2)
            put(o, " (95 %% CI %s to %s)", rpx__h_num3(b2, sizeof b2, rpx__h_jnum(json_array_get(ci, 0))),
                rpx__h_num3(b3, sizeof b3, rpx__h_jnum(json_array_get(ci, 1))));
        if (isfinite(jnum(sc, "bound_exponent")))
            put(o, "; the roofline bound as (size)<sup>%s</sup>",
                rpx__h_num3(b1, sizeof b1, jnum(sc, "bound_exponent")));
        put(o, ". ");
    }
    if (json_is_object(best)) {
        put(o, "Best throughput: ");
        rpx__h_esc(o, rpx__h_jstr(best, "label"));
        put(o, " (%s items/s). ", rpx__h_num3(b1, sizeof b1, jnum(best, "throughput_per_s")));
    }
    if (json_is_object(knee)) {
        put(o, "Knee: ");
        rpx__h_esc(o, rpx__h_jstr(knee, "label"));
        put(o, " (");
        rpx__h_esc(o, rpx__h_jstr(knee, "definition"));
        put(o, ").");
    }
    put(o, "</p>\n");
}

int rpx_html_sweep(const json_t *sw, char **html, rpx_error *err)
{
    static const char *const keys[] = {"label", "p50_ms", "p50_ci_ms", "p95_ms", "p99_ms",
                                       "throughput_per_s", "flops", "bound_ms", "achieved",
                                       "valid", "invalid_reason"};
    static const char *const labels[] = {"point", "p50 (ms)", "p50 95 % CI", "p95 (ms)",
                                         "p99 (ms)", "throughput (/s)", "FLOPs", "bound (ms)",
                                         "achieved", "valid", "why not"};
    static const char *const wkeys[] = {"along", "from", "to", "ratio", "ratio_ci", "real"};
    static const char *const wlabels[] = {"along", "from", "to", "p50 ratio", "95 % CI",
                                          "real (interval excludes 1)"};
    static const char css[] =
        ".sweep-p50{stroke:#1f77b4;stroke-width:2}.sweep-bound{stroke:#d62728;stroke-width:1.5;"
        "stroke-dasharray:6 4}.sweep-ci{stroke:#1f77b4;stroke-width:2}.sweep-point{fill:#1f77b4}"
        ".sweep-point.invalid{fill:#999}.sweep-point.pareto{fill:#ff7f0e}"
        ".sweep-bound-mark{fill:#d62728}.cap-slo{stroke:#d62728;stroke-width:1.5;"
        "stroke-dasharray:6 4}.cap-rate{stroke:#ff7f0e;stroke-width:2}.cap-ci{fill:#ff7f0e;"
        "fill-opacity:.15}.cap-run{stroke-width:1.5}\n";
    hout o = {0};
    pt *v = NULL;
    size_t n;
    if (!json_is_object(sw) || !json_is_array(json_object_get(sw, "points")))
        return rpx_error_set(err, RPX_EINVAL, "not a sweep.json: no points");
    n = load_points(sw, &v);
    rpx__h_page_open(&o, "rpxprof sweep", css);
    headline(&o, sw);
    if (n) {
        fig_latency(&o, sw, v, n);
        fig_pareto(&o, v, n);
    }
    put(&o, "<section id=\"sweep-wrong-way\"><h2>Where larger went faster</h2>");
    if (json_array_size(json_object_get(sw, "wrong_way")))
        rpx__h_rows_table(&o, json_object_get(sw, "wrong_way"), wkeys, wlabels, 6);
    else
        put(&o, "<p>No neighbouring points went the wrong way.</p>");
    put(&o, "</section>\n<section id=\"sweep-points\"><h2>Points</h2>");
    rpx__h_rows_table(&o, json_object_get(sw, "points"), keys, labels, 11);
    put(&o, "</section>\n");
    capacity(&o, sw);
    rpx__h_page_close(&o, "Made by rpxprof sweep from sweep.json; each point's whole report is "
                          "DIR/POINT.json (docs/sweep.md).");
    free(v);
    if (!o.p) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    *html = o.p;
    return 0;
}
