/* sweep.c — owns what a sweep's points say together (docs/sweep.md): each
 * point's summary read from its run report, the scaling exponent of latency
 * against the varied size (log-log, one intercept per round of processes, a
 * t interval) beside the roofline bound's own exponent, the neighbours that
 * go the "wrong way" with their paired ratio's interval, the best throughput
 * and the knee; assembled as sweep.json (schemas/sweep.schema.json). It
 * measures nothing and writes nothing: src/cli/sweep.c does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "rpxprof/comparison.h"
#include "rpxprof/stats.h"
#include "sweep/sweep.h"

/* the knee: the first point (smallest size) whose throughput reaches this
 * share of the best; beyond it the throughput gains less, the latency grows */
#define KNEE_SHARE 0.9

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *pair_or_null(double lo, double hi)
{
    json_t *a;
    if (!isfinite(lo) || !isfinite(hi)) return json_null();
    a = json_array();
    json_array_append_new(a, json_real(lo));
    json_array_append_new(a, json_real(hi));
    return a;
}

int rpx_sweep_loglog_slope(const double *x, const double *y, const int *group, size_t n,
                           double confidence, double *slope, double *lo, double *hi, int *df)
{
    double *lx = malloc((n ? n : 1) * sizeof *lx), *ly = malloc((n ? n : 1) * sizeof *ly);
    double sxx = 0, sxy = 0, sse = 0, b, t;
    size_t i, j, m = 0;
    int groups = 0, rc = -1;
    *slope = *lo = *hi = NAN;
    *df = 0;
    if (!lx || !ly) goto out;
    for (i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0)) continue;
        lx[m] = log(x[i]);
        ly[m] = log(y[i]);
        m++;
    }
    /* centre each group on its own means (group -1: one group); the groups
     * are counted as the intercepts they cost */
    {
        int *g = malloc((m ? m : 1) * sizeof *g), *done = calloc(m ? m : 1, sizeof *done);
        size_t k = 0;
        if (!g || !done) {
            free(g);
            free(done);
            goto out;
        }
        for (i = 0; i < n; i++)
            if (x[i] > 0 && y[i] > 0) g[k++] = group ? group[i] : -1;
        for (i = 0; i < m; i++) {
            double mx = 0, my = 0;
            size_t c = 0;
            if (done[i]) continue;
            for (j = i; j < m; j++)
                if (!done[j] && g[j] == g[i]) mx += lx[j], my += ly[j], c++;
            mx /= (double)c;
            my /= (double)c;
            for (j = i; j < m; j++)
                if (!done[j] && g[j] == g[i]) lx[j] -= mx, ly[j] -= my, done[j] = 1;
            groups++;
        }
        free(g);
        free(done);
    }
    for (i = 0; i < m; i++) sxx += lx[i] * lx[i], sxy += lx[i] * ly[i];
    if (!(sxx > 1e-12)) goto out;
    b = sxy / sxx;
    *slope = b;
    *df = (int)m - groups - 1;
    if (*df < 1) goto out;
    for (i = 0; i < m; i++) sse += (ly[i] - b * lx[i]) * (ly[i] - b * lx[i]);
    t = rpx_stats_t_quantile(1 - (1 - confidence) / 2, (double)*df);
    *lo = b - t * sqrt(sse / *df / sxx);
    *hi = b + t * sqrt(sse / *df / sxx);
    rc = 0;
out:
    free(lx);
    free(ly);
    return rc;
}

int rpx_sweep_paired_ratio(const json_t *a, const json_t *b, double *ratio, double *lo,
                           double *hi, rpx_error *err)
{
    rpx_compare_opts co;
    json_t *cmp = NULL, *ci;
    int rc;
    memset(&co, 0, sizeof co);
    co.threshold = 0.01, co.confidence = 0.95, co.paired_by_cpu = 1, co.same_session = 1;
    *ratio = *lo = *hi = NAN;
    if ((rc = rpx_compare_json(a, "the smaller point", b, "the larger point", &co, &cmp, err)) != 0)
        return rc;
    *ratio = num(cmp, "p50_ratio");
    ci = json_object_get(cmp, "p50_ratio_ci");
    if (json_array_size(ci) == 2) {
        *lo = json_number_value(json_array_get(ci, 0));
        *hi = json_number_value(json_array_get(ci, 1));
    }
    json_decref(cmp);
    return 0;
}

/* One point's summary from its report (a report's null stays null). */
static json_t *point_json(const rpx_sweep_point *p)
{
    const json_t *r = p->report, *lat = json_object_get(r, "latency");
    const json_t *ci = json_object_get(json_object_get(r, "latency_ci"), "p50_ms");
    double p50 = num(lat, "p50_ms"), flops = num(json_object_get(r, "efficiency"), "flops");
    double bound = NAN;
    json_t *o = json_object();
    const char *key, *bound_of = NULL;
    json_t *t, *roof = json_object_get(r, "roofline");
    /* the ideal bound (docs/roofline.md) of the device the run ran on: host-cpu on
     * the CPU, else the roofline's first target */
    json_object_foreach(roof, key, t) {
        if (bound_of && strcmp(key, "host-cpu") != 0) continue;
        bound = num(json_object_get(t, "ideal"), "latency_ms");
        bound_of = key;
        if (strcmp(key, "host-cpu") == 0) break;
    }
    if (json_is_object(roof) && json_object_get(roof, "host-cpu") &&
        strcmp(json_string_value(json_object_get(r, "device")) ? json_string_value(json_object_get(r, "device")) : "cpu", "cpu") != 0) {
        const char *first = NULL;
        json_object_foreach(roof, key, t) {
            if (strcmp(key, "host-cpu") != 0) { first = key; break; }
        }
        if (first) bound_of = first, bound = num(json_object_get(json_object_get(roof, first), "ideal"), "latency_ms");
    }
    json_object_set(o, "value", p->value);
    json_object_set_new(o, "label", json_string(p->label));
    {
        char name[160];
        snprintf(name, sizeof name, "%s.json", p->label);
        json_object_set_new(o, "report", r ? json_string(name) : json_null());
    }
    json_object_set_new(o, "size", num_or_null(p->size));
    json_object_set_new(o, "items_per_call", json_real(p->items));
    json_object_set_new(o, "p50_ms", num_or_null(p50));
    json_object_set(o, "p50_ci_ms", json_array_size(ci) == 2 ? (json_t *)ci : json_null());
    json_object_set_new(o, "p95_ms", num_or_null(num(lat, "p95_ms")));
    json_object_set_new(o, "p99_ms", num_or_null(num(lat, "p99_ms")));
    json_object_set_new(o, "processes", num_or_null((double)json_array_size(json_object_get(r, "latency_by_process"))));
    json_object_set_new(o, "throughput_per_s", num_or_null(p50 > 0 ? p->items * 1000.0 / p50 : NAN));
    json_object_set_new(o, "flops", num_or_null(flops));
    json_object_set_new(o, "bound_ms", num_or_null(bound));
    json_object_set_new(o, "bound_of", bound_of && isfinite(bound) ? json_string(bound_of) : json_null());
    json_object_set_new(o, "achieved", num_or_null(p50 > 0 ? bound / p50 : NAN));
    json_object_set_new(o, "valid", json_boolean(p->invalid_reason[0] == '\0'));
    json_object_set_new(o, "invalid_reason",
                        p->invalid_reason[0] ? json_string(p->invalid_reason) : json_null());
    return o;
}

/* The scaling: latency's exponent against the size from every valid point's
 * per-process p50s (process k of each point ran in round k: one intercept a
 * round), and the bound's own exponent from the points' bounds. */
static json_t *scaling_json(const char *size_of, const rpx_sweep_point *pts, const json_t *points,
                            size_t n)
{
    size_t i, k, m = 0, cap = 0, nb = 0;
    double *x = NULL, *y = NULL, *bx = malloc((n ? n : 1) * sizeof *bx),
           *by = malloc((n ? n : 1) * sizeof *by), s, lo, hi, bs, blo, bhi;
    int *g = NULL, df, bdf, ok;
    json_t *o = NULL;
    for (i = 0; i < n; i++) cap += json_array_size(json_object_get(pts[i].report, "latency_by_process"));
    x = malloc((cap ? cap : 1) * sizeof *x);
    y = malloc((cap ? cap : 1) * sizeof *y);
    g = malloc((cap ? cap : 1) * sizeof *g);
    if (!x || !y || !g || !bx || !by) goto out;
    for (i = 0; i < n; i++) {
        const json_t *byp = json_object_get(pts[i].report, "latency_by_process");
        double b = num(json_array_get(points, i), "bound_ms");
        if (pts[i].invalid_reason[0] || !(pts[i].size > 0)) continue;
        for (k = 0; k < json_array_size(byp); k++) {
            x[m] = pts[i].size;
            y[m] = num(json_array_get(byp, k), "p50_ms");
            g[m++] = (int)k;
        }
        if (b > 0) bx[nb] = pts[i].size, by[nb++] = b;
    }
    ok = rpx_sweep_loglog_slope(x, y, g, m, 0.95, &s, &lo, &hi, &df) == 0;
    if (!isfinite(s)) goto out;
    (void)rpx_sweep_loglog_slope(bx, by, NULL, nb, 0.95, &bs, &blo, &bhi, &bdf);
    o = json_object();
    json_object_set_new(o, "size_of", json_string(size_of));
    json_object_set_new(o, "exponent", json_real(s));
    json_object_set_new(o, "exponent_ci", ok ? pair_or_null(lo, hi) : json_null());
    json_object_set_new(o, "bound_exponent", num_or_null(bs));
    json_object_set_new(o, "fit_points", json_integer((json_int_t)m));
    json_object_set_new(o, "df", json_integer(df));
    json_object_set_new(o, "method",
                        json_string("least squares of log p50 on log size over every process's "
                                    "p50, one intercept per round of processes (a drift of the "
                                    "machine shared by the round drops out); 95 % t interval"));
out:
    free(x);
    free(y);
    free(g);
    free(bx);
    free(by);
    return o ? o : json_null();
}

/* Whether q is p's next neighbour along one varied parameter (the others
 * equal): that parameter's index, else -1. */
static int neighbour_axis(const rpx_sweep_point *p, const rpx_sweep_point *q, int nvary)
{
    int a, axis = -1;
    for (a = 0; a < nvary; a++) {
        if (q->index[a] == p->index[a]) continue;
        if (q->index[a] != p->index[a] + 1 || axis >= 0) return -1;
        axis = a;
    }
    return axis;
}

/* The neighbours where the latency went against the parameter's direction
 * (dir +1: larger is slower, as a size or a rate; -1: more is faster, as
 * threads; 0: no order), each with the paired ratio's interval. */
static json_t *wrong_way_json(const json_t *vary, const rpx_sweep_point *pts, const json_t *points,
                              size_t n)
{
    json_t *out = json_array();
    size_t i, j;
    int nvary = (int)json_array_size(vary);
    for (i = 0; out && i < n; i++)
        for (j = 0; j < n; j++) {
            int axis = neighbour_axis(&pts[i], &pts[j], nvary);
            const json_t *va = json_array_get(vary, axis < 0 ? 0 : (size_t)axis);
            double dir = num(va, "direction"), a = num(json_array_get(points, i), "p50_ms"),
                   b = num(json_array_get(points, j), "p50_ms"), r, lo, hi;
            rpx_error e = {0};
            json_t *o;
            if (axis < 0 || !(dir != 0) || pts[i].invalid_reason[0] || pts[j].invalid_reason[0])
                continue;
            if (!(a > 0 && b > 0) || !(dir > 0 ? b < a : b > a)) continue;
            o = json_object();
            json_object_set_new(o, "along", json_incref(json_object_get(va, "name")));
            json_object_set_new(o, "from", json_string(pts[i].label));
            json_object_set_new(o, "to", json_string(pts[j].label));
            if (rpx_sweep_paired_ratio(pts[i].report, pts[j].report, &r, &lo, &hi, &e) != 0) {
                r = b / a;
                lo = hi = NAN;
                json_object_set_new(o, "note", json_string(e.message));
            }
            json_object_set_new(o, "ratio", num_or_null(r));
            json_object_set_new(o, "ratio_ci", pair_or_null(lo, hi));
            /* real: the interval lies wholly on the wrong side of 1 */
            json_object_set_new(o, "real", json_boolean(isfinite(lo) && isfinite(hi) &&
                                                        (dir > 0 ? hi < 1 : lo > 1)));
            json_array_append_new(out, o);
        }
    return out ? out : json_array();
}

static json_t *pick(const json_t *points, size_t i, const char *definition)
{
    const json_t *p = json_array_get(points, i);
    json_t *o = json_object();
    json_object_set(o, "value", json_object_get(p, "value"));
    json_object_set(o, "label", json_object_get(p, "label"));
    json_object_set(o, "throughput_per_s", json_object_get(p, "throughput_per_s"));
    json_object_set(o, "p50_ms", json_object_get(p, "p50_ms"));
    if (definition) json_object_set_new(o, "definition", json_string(definition));
    return o;
}

/* best_throughput and the knee (sizes in order; a grid has no knee) */
static void best_and_knee(const rpx_sweep_point *pts, const json_t *points, size_t n, int nvary,
                          json_t *out)
{
    size_t i, best = (size_t)-1, knee = (size_t)-1;
    double tb = 0;
    for (i = 0; i < n; i++) {
        double t = num(json_array_get(points, i), "throughput_per_s");
        if (!pts[i].invalid_reason[0] && t > tb) tb = t, best = i;
    }
    json_object_set_new(out, "best_throughput", best == (size_t)-1 ? json_null()
                                                                   : pick(points, best, NULL));
    for (i = 0; nvary == 1 && best != (size_t)-1 && i < n; i++) {
        double t = num(json_array_get(points, i), "throughput_per_s");
        if (pts[i].invalid_reason[0] || !(t >= KNEE_SHARE * tb)) continue;
        if (knee == (size_t)-1 || pts[i].index[0] < pts[knee].index[0]) knee = i;
    }
    json_object_set_new(out, "knee", knee == (size_t)-1 ? json_null()
                        : pick(points, knee, "the first point, in the order of the values, "
                               "whose throughput reaches 90 % of the best: past it the "
                               "throughput gains under 10 % while the latency grows"));
}

int rpx_sweep_json(const char *model, const json_t *vary, const char *size_of,
                   const rpx_sweep_point *pts, size_t n, json_t **out, rpx_error *err)
{
    json_t *o = json_object(), *points = json_array(), *session = NULL;
    size_t i;
    if (!o || !points) goto oom;
    for (i = 0; i < n; i++) {
        json_t *p = point_json(&pts[i]);
        if (!p || json_array_append_new(points, p) != 0) goto oom;
        if (!session && pts[i].report) session = json_object_get(pts[i].report, "session");
    }
    json_object_set_new(o, "schema", json_string("rpxprof-sweep/1"));
    json_object_set_new(o, "model", json_string(model));
    if (session) { /* the one session every point was measured in (not a point's benchmark) */
        json_t *s = json_object();
        static const char *const keys[] = {"id", "started", "ended", "covers"};
        size_t k;
        for (k = 0; s && k < sizeof keys / sizeof keys[0]; k++)
            if (json_object_get(session, keys[k]))
                json_object_set(s, keys[k], json_object_get(session, keys[k]));
        json_object_set_new(o, "session", s ? s : json_null());
    } else {
        json_object_set_new(o, "session", json_null());
    }
    json_object_set(o, "vary", (json_t *)vary);
    json_object_set(o, "points", points);
    json_object_set_new(o, "scaling", size_of ? scaling_json(size_of, pts, points, n) : json_null());
    json_object_set_new(o, "wrong_way", wrong_way_json(vary, pts, points, n));
    best_and_knee(pts, points, n, (int)json_array_size(vary), o);
    json_object_set_new(o, "capacity", json_null()); /* the capacity search's (issue 40 §2) */
    json_decref(points);
    *out = o;
    return 0;
oom:
    json_decref(o);
    json_decref(points);
    return rpx_error_set(err, RPX_ENOMEM, "out of memory building sweep.json");
}
