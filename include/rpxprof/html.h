/* rpxprof/html.h — the HTML report (src/report/html*.c, docs/report.md "The HTML
 * report"): one self-contained page (inline CSS, SVG figures drawn by rpxprof,
 * a little JavaScript of ours; no network, no external file) of run reports,
 * a comparison or a batch. Every number the page prints is read from the
 * reports given; the figures are drawn from their samples. */
#ifndef RPXPROF_HTML_H
#define RPXPROF_HTML_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/api.h"
#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The mark the page carries near its start, so that rpxprof knows its own
 * files (an existing page is replaced only when it carries it). */
#define RPX_HTML_MARK "<!-- rpxprof report -->"

/* Calls drawn one by one in the per-call timeline and the CDF; beyond it
 * the timeline draws each pixel column's exact minimum-maximum range per
 * process, and the CDF steps through an exact histogram of 2000 bins (the
 * page says so; never a subsample). */
#define RPX_HTML_POINT_LIMIT 50000

/* What a page shows; every pointer borrowed, NULL (or 0) when absent. */
typedef struct rpx_html_input {
    const char *title;                /* NULL: made from the content */
    /* run reports ("rpxprof.profile/1"), each a run view (a batch: one per (task, model)) */
    const json_t *const *runs;
    const char *const *run_names;     /* their file names, for headings (may be NULL) */
    size_t n_runs;
    /* a `compare --json` result, and the two reports it compared when they could be read */
    const json_t *compare;
    const json_t *compare_base, *compare_new;
    /* a batch or an aggregate: validation.json, summary.csv's text, figure.svg's text */
    const json_t *validation;
    const char *summary_csv;
    const char *figure_svg;
} rpx_html_input;

/* The page (malloc'ed, NUL-terminated) into *html. 0, or < 0 with err set
 * (nothing to show, out of memory). */
RPX_API int rpx_html_report(const rpx_html_input *in, char **html, rpx_error *err);
/* One run report at a glance as an HTML fragment (Jupyter's view of a Python
 * Report): the headline (p50 with its interval), the statistics with their
 * intervals, the latency figure inline, the cost and the roofline bounds, every
 * number by the summary's rule. 0 and a malloc'ed fragment, or < 0 (err). */
/* A sweep's page (src/report/html_sweep.c, docs/sweep.md): sweep.json's
 * points, latency with its intervals against the varied value (log axes over
 * a decade), the roofline bound a second line, throughput against latency
 * (the Pareto front), the capacity block's SLO lines when it has one. 0 and a
 * malloc'ed page, or < 0 (err). */
RPX_API int rpx_html_sweep(const json_t *sweep, char **html, rpx_error *err);
RPX_API int rpx_html_glance(const json_t *report, char **html, rpx_error *err);

/* The history page (src/report/html_history.c, docs/report.md "The history
 * page"): a panel per series (benchmark x fingerprint) of a history. Every
 * pointer borrowed. */
typedef struct rpx_html_history_input {
    const char *title;                /* NULL: "rpxprof history" */
    const char *source;               /* where the history was read, shown on the page (a
                                         postgresql:// URL without its password and query); NULL */
    const json_t *series;             /* the series list (rpx_history_series: an array of
                                         {benchmark, fingerprint, sessions oldest first}) */
    const json_t *checks;             /* rpx_history_check's results, one per series, matched by
                                         benchmark id and fingerprint digest; NULL: none */
    double threshold;                 /* the check's threshold (0.01), said with the verdicts; 0 */
    int look_beside;                  /* 1: read the file system: link a kept report's HTML when
                                         one lies beside it (same name, .html), say "not found"
                                         for a report that is gone, links absolute (file://) */
} rpx_html_history_input;

/* The history page (malloc'ed, NUL-terminated) into *html: each series'
 * sessions (p50 and interval against commit or time), change points with
 * their ratio, the newest verdict in words, fingerprint changes, links to
 * the kept reports. 0, or < 0 with err set (not a series list, out of memory). */
RPX_API int rpx_html_history(const rpx_html_history_input *in, char **html, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
