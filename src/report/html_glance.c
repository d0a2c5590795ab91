/* html_glance.c — owns a run report at a glance as an HTML fragment
 * (rpx_html_glance, include/rpxprof/html.h): the headline (p50 with its
 * interval), the statistics with their intervals, the latency figure inline,
 * the cost and the roofline bounds, every number by the summary's rule. It is
 * Jupyter's view of a Report (Python's _repr_html_); the full page is
 * rpx_html_report's. Also the report's latency figure (rpx_plot_report_svg). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "rpxprof/error.h"
#include "rpxprof/html.h"
#include "rpxprof/plot.h"
#include "rpxprof/summary.h"

static const char *const stats[] = {"p50", "p95", "p99", "mean", "min"};

int rpx_plot_report_svg(const json_t *r, int timeline, char **svg, rpx_error *err)
{
    const json_t *smp = json_object_get(r, "latency_samples_ms"), *v;
    size_t i, n = json_array_size(smp);
    double *samples;
    rpx_plot_row row;
    char note[200];
    int rc;
    *svg = NULL;
    if (n == 0)
        return rpx_error_set(err, RPX_EINVAL, "report: latency_samples_ms is missing or empty; a "
                                              "figure needs the timed calls of a run");
    if (!(samples = malloc(n * sizeof *samples))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < n; i++) samples[i] = json_number_value(json_array_get(smp, i));
    memset(&row, 0, sizeof row);
#define STR_OR(k, d) (json_is_string(v = json_object_get(r, k)) ? json_string_value(v) : (d))
    row.unit = STR_OR("unit", "call");
    row.panel = STR_OR("task", row.unit);
    row.label = STR_OR("model_name", STR_OR("model_callable", "fn"));
    row.device = STR_OR("device", NULL);
#undef STR_OR
    row.samples_ms = samples;
    row.n = n;
    rpx_plot_row_interval(&row, r);
    rpx_plot_mode_note_of(note, sizeof note, r);
    row.mode_note = note;
    rc = rpx_plot_svg(&row, 1, timeline, svg, err);
    free(samples);
    return rc;
}

/* a JSON value as Python's str() of it shows a few: text, whole numbers, None */
static void esc_value(rpx_strbuf *b, const json_t *v)
{
    char n[48];
    if (json_is_string(v)) rpx__h_esc_py(b, json_string_value(v));
    else if (json_is_integer(v)) rpx__sb_printf(b, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) {
        rpx__fmt_shortest(n, sizeof n, json_real_value(v));
        rpx__sb_str(b, n);
    }
    else if (json_is_true(v)) rpx__sb_str(b, "True");
    else if (json_is_false(v)) rpx__sb_str(b, "False");
    else rpx__sb_str(b, "None");
}

/* a number by the rule, "n/a" when the value is not one */
static const char *fmt(char *buf, size_t cap, const json_t *v)
{
    return rpx__h_num3(buf, cap, rpx__h_jnum(v));
}

static const char *si(char *buf, size_t cap, const json_t *v)
{
    if (json_is_number(v)) return rpx_format_si(buf, cap, json_number_value(v));
    snprintf(buf, cap, "n/a");
    return buf;
}

static void headline(rpx_strbuf *b, const json_t *r)
{
    char x[48], y[48];
    const json_t *ci = rpx__h_interval(r, "p50_ms");
    rpx__sb_str(b, "<div class=\"rpxprof-report\">\n<p><strong>");
    esc_value(b, json_object_get(r, "model_callable"));
    rpx__sb_printf(b, ": p50 %s ms", fmt(x, sizeof x, json_object_get(json_object_get(r, "latency"), "p50_ms")));
    if (ci)
        rpx__sb_printf(b, " (95%% CI [%s, %s])", fmt(x, sizeof x, json_array_get(ci, 0)),
                       fmt(y, sizeof y, json_array_get(ci, 1)));
    rpx__sb_str(b, "</strong><br>");
    esc_value(b, json_object_get(r, "measured_calls"));
    rpx__sb_str(b, " timed calls in ");
    esc_value(b, json_object_get(r, "processes"));
    rpx__sb_str(b, " process(es), status ");
    esc_value(b, json_object_get(r, "status"));
    rpx__sb_str(b, "<br>inputs: ");
    rpx__h_inputs_words(b, r);
    rpx__sb_str(b, "</p>\n<table><tr><th></th><th>latency</th><th>95% CI</th></tr>");
}

static void stats_rows(rpx_strbuf *b, const json_t *r)
{
    size_t i;
    for (i = 0; i < sizeof stats / sizeof stats[0]; i++) {
        char key[32], x[48], lo[48], hi[48];
        const json_t *ci;
        snprintf(key, sizeof key, "%s_ms", stats[i]);
        ci = strcmp(stats[i], "min") ? rpx__h_interval(r, key) : NULL;
        rpx__sb_printf(b, "<tr><th>%s</th><td>%s ms</td><td>", stats[i],
                       fmt(x, sizeof x, json_object_get(json_object_get(r, "latency"), key)));
        if (ci)
            rpx__sb_printf(b, "[%s, %s]", fmt(lo, sizeof lo, json_array_get(ci, 0)),
                           fmt(hi, sizeof hi, json_array_get(ci, 1)));
        rpx__sb_str(b, "</td></tr>");
    }
    rpx__sb_str(b, "</table>");
}

static void cost_line(rpx_strbuf *b, const json_t *r)
{
    const json_t *eff = json_object_get(r, "efficiency");
    char f[48], m[48], p[48];
    if (!json_is_number(json_object_get(eff, "flops")) && !json_is_number(json_object_get(eff, "macs")) &&
        !json_is_number(json_object_get(eff, "params")))
        return;
    rpx__sb_printf(b, "\n<p>cost per call: %s FLOPs, %s MACs, %s params (",
                   si(f, sizeof f, json_object_get(eff, "flops")),
                   si(m, sizeof m, json_object_get(eff, "macs")),
                   si(p, sizeof p, json_object_get(eff, "params")));
    esc_value(b, json_object_get(eff, "source"));
    rpx__sb_str(b, ")</p>");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void bounds_table(rpx_strbuf *b, const json_t *r)
{
    const json_t *roof = json_object_get(r, "roofline"), *t;
    size_t n = json_is_object(roof) ? json_object_size(roof) : 0, i = 0;
    const char **keys, *k;
    if (n == 0 || !(keys = malloc(n * sizeof *keys))) return;
    json_object_foreach((json_t *)roof, k, t) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_str);
    rpx__sb_str(b, "\n<table><tr><th>bound</th><th>ideal</th><th>p50 achieves</th></tr>");
    for (i = 0; i < n; i++) {
        const json_t *x = json_object_get(roof, keys[i]);
        const json_t *a = json_object_get(json_object_get(x, "achieved_fraction"), "ideal");
        char v[48];
        rpx__sb_str(b, "<tr><td>");
        rpx__h_esc_py(b, keys[i]);
        rpx__sb_printf(b, "</td><td>%s ms</td><td>",
                       fmt(v, sizeof v, json_object_get(json_object_get(x, "ideal"), "latency_ms")));
        if (json_is_number(a)) rpx__sb_printf(b, "%s %%", rpx_format_3g(v, sizeof v, 100 * json_number_value(a)));
        else rpx__sb_str(b, "n/a");
        rpx__sb_str(b, "</td></tr>");
    }
    rpx__sb_str(b, "</table>");
    free(keys);
}

int rpx_html_glance(const json_t *report, char **html, rpx_error *err)
{
    rpx_strbuf b = {0};
    char *svg = NULL;
    rpx_error perr = {0};
    *html = NULL;
    if (!json_is_object(report)) return rpx_error_set(err, RPX_EINVAL, "not a report");
    headline(&b, report);
    stats_rows(&b, report);
    /* no samples (a failed run): the figure is left out */
    if (rpx_plot_report_svg(report, 0, &svg, &perr) == 0 && svg) {
        const char *at = strstr(svg, "<svg");
        rpx__sb_printf(&b, "\n<div>%s</div>", at ? at : svg);
    }
    free(svg);
    cost_line(&b, report);
    bounds_table(&b, report);
    rpx__sb_str(&b, "\n</div>");
    if (b.oom) {
        free(b.p);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    *html = b.p;
    return 0;
}
