/* html_int.h — what the rooms of the HTML report share (internal):
 * html.c (the page, its style and script, the views), html_fig.c (the SVG
 * figures), html_layers.c (the run view's per-layer part), html_glance.c (a report at a glance, Jupyter's), html_history.c (the
 * history page) and html_util.c (escaping, numbers, a report's words, a run's
 * samples). Text goes into an rpx_strbuf; every figure is an inline <svg>
 * with class "fig" and a <title> on each mark that has a value. */
#ifndef RPX_REPORT_HTML_INT_H
#define RPX_REPORT_HTML_INT_H

#include <jansson.h>
#include <stddef.h>

#include "common/strbuf.h"

typedef rpx_strbuf hout;

/* HTML/XML-escaped text ("n/a" for NULL). */
void rpx__h_esc(hout *o, const char *s);
/* The same with an apostrophe as Python's html.escape writes it ("&#x27;"):
 * Jupyter's glance (html_glance.c) is the text Python would make. */
void rpx__h_esc_py(hout *o, const char *s);
/* A number as the report holds it (shortest round trip), "n/a" when not finite. */
const char *rpx__h_num(char *buf, size_t size, double v);
/* The summary's number rule (rpx_format_3g): every number the page shows. */
const char *rpx__h_num3(char *buf, size_t size, double v);
/* The digits an interval supports (html_history.c's rule, docs/statistics.md):
 * the decimals that show v to the second significant digit of the half width
 * of [lo, hi], one to six significant digits; -1 where there is no interval
 * (then the summary's rule). v with `dec` decimals ('.' in any locale; dec < 0:
 * the summary's rule), "n/a" when not finite. */
int rpx__h_ci_decimals(double v, double lo, double hi);
const char *rpx__h_fmt_dec(char *buf, size_t size, double v, int dec);
/* A JSON number (integer or real) or NaN. */
double rpx__h_jnum(const json_t *v);
/* o[k] when it is a string, else NULL. */
const char *rpx__h_jstr(const json_t *o, const char *k);
/* The report's latency_ci[key] ("p50_ms") when both ends are numbers, else NULL. */
const json_t *rpx__h_interval(const json_t *report, const char *key);
/* The report's inputs in words, escaped: each array's name, dtype and shape
 * ("x float32[1,3,224,224]"), else the file or the caller's arguments
 * (inputs_file), else "not recorded". */
void rpx__h_inputs_words(hout *o, const json_t *report);

/* Values as the page prints them (html_util.c): a number by the summary's
 * rule (the exact value on hover where they differ; a count as it is); the
 * exact number; any JSON value as table text (strings as they are, arrays as
 * words, null n/a); an object as a key/value table (nested objects as dotted
 * keys); an array of objects as a sortable table of `keys` headed by `labels`
 * (NULL: the keys); an array as <li>. */
void rpx__h_put_num(hout *o, const json_t *v);
void rpx__h_put_exact(hout *o, const json_t *v);
void rpx__h_put_value(hout *o, const json_t *v);
void rpx__h_kv_table(hout *o, const json_t *obj, const char *cls);
void rpx__h_rows_table(hout *o, const json_t *arr, const char *const *keys, const char *const *labels, size_t nk);
void rpx__h_list_items(hout *o, const json_t *arr, const char *cls);

/* The run view (html_run.c): one report as a <section id=ID>. */
void rpx__h_run_view(hout *o, const json_t *report, const char *name, const char *id);

/* The page around a view (html.c): head with the CSP, the style and a
 * view's own `extra_css` (NULL none); the end with the page's one script and
 * where the page was made from (`made_from` NULL: the report files). */
void rpx__h_page_open(hout *o, const char *title, const char *extra_css);
void rpx__h_page_close(hout *o, const char *made_from);

/* One run's samples: timed calls (ms), their process, the warmup calls. */
typedef struct rpx_h_run {
    const json_t *r;
    double *s;                    /* latency_samples_ms, in order */
    int *proc;                    /* each sample's process (0 when unknown) */
    size_t n;
    double *warm;                 /* warmup_samples_ms */
    size_t nwarm;
    int nproc;
    double *x_ms;                 /* http.load.schedule_ms (open loop), or NULL */
    long *cpu;                    /* call_records.cpu_start, or NULL */
} rpx_h_run;

int rpx__h_run_load(rpx_h_run *run, const json_t *report);
void rpx__h_run_free(rpx_h_run *run);

/* An SVG read from a file (an aggregate's figure.svg) with drawing elements
 * and presentation attributes only, every text escaped again (html_svg.c). */
void rpx__h_svg_clean(hout *o, const char *svg);

/* An axis of a figure (html_fig.c): a value range drawn over a pixel range,
 * linear or (allow_log, a range over 5x) logarithmic; its ticks and grid
 * lines along x at baseline c0 up to c1, or along y from c0 to c1. Figures
 * are RPX_H_FIG_W wide, framed by rpx__h_fig_open/close (a <figure> with an
 * inline <svg class="fig"> and its caption). */
#define RPX_H_FIG_W 760.0
typedef struct rpx_h_axis {
    double lo, hi;
    int log;
    int integer;                  /* ticks at whole numbers only (CPU numbers) */
    double p0, p1;                /* pixel range */
} rpx_h_axis;
void rpx__h_axis_make(rpx_h_axis *a, double mn, double mx, int allow_log, double p0, double p1);
double rpx__h_axis_pos(const rpx_h_axis *a, double v);
void rpx__h_axis_ticks(hout *o, const rpx_h_axis *a, int vertical, double c0, double c1);
void rpx__h_fig_open(hout *o, const char *id, double h, const char *label, const char *cls);
void rpx__h_fig_close(hout *o, const char *caption);

/* The figures (html_fig.c); `id` makes their element ids unique on the page. */
void rpx__h_fig_distribution(hout *o, const rpx_h_run *run, const char *id);
void rpx__h_fig_timeline(hout *o, const rpx_h_run *run, const char *id);
void rpx__h_fig_cpus(hout *o, const rpx_h_run *run, const char *id);
void rpx__h_fig_boxes(hout *o, const rpx_h_run *run, const char *id);
void rpx__h_fig_roofline(hout *o, const json_t *report, const char *id);
/* The run view's per-layer part (html_layers.c), from the report's `layers`
 * block: nothing when it has none. Its roofline figure alone too. */
void rpx__h_layers_section(hout *o, const json_t *report, const char *id);
void rpx__h_fig_layer_roofline(hout *o, const json_t *report, const char *id);
/* Rows of statistics objects ({p50_ms, p95_ms, p99_ms, min_ms, max_ms}) as ranges. */
void rpx__h_fig_stat_rows(hout *o, const char *const *labels, const json_t *const *stats, size_t n,
                          const char *id, const char *caption);
/* Two runs' distributions on one axis (compare). */
void rpx__h_fig_two(hout *o, const rpx_h_run *a, const rpx_h_run *b, const char *id);
/* Per-process p50 of each side (compare). */
void rpx__h_fig_procs_two(hout *o, const rpx_h_run *a, const rpx_h_run *b, const char *id);
/* A ratio with its interval against the threshold band around 1. */
void rpx__h_fig_ratio(hout *o, const json_t *cmp, const char *id);

#endif
