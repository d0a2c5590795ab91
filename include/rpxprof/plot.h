/* rpxprof/plot.h — the latency figures (src/report/plot.c): an SVG of rows,
 * one per report, one panel per task, or one report's timeline. */
#ifndef RPXPROF_PLOT_H
#define RPXPROF_PLOT_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/api.h"
#include "rpxprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row of a latency figure: one report. Strings are borrowed. */
typedef struct rpx_plot_row {
    const char *panel;            /* task (or unit) */
    const char *label;            /* model */
    const char *unit;
    const char *shape;            /* input shapes, e.g. "rgb 48x64x3" */
    const char *device;
    const double *samples_ms;     /* in call order */
    size_t n;
    const double *x_ms;           /* NULL, or each sample's intended send time (http.load.schedule_ms):
                                   * the timeline's x axis instead of the call index */
    /* The p50's interval (the report's latency_ci): ci_covers NULL when the
     * report has none (older rpxprof); lo/hi NaN when it is null. */
    const char *ci_covers;        /* "between-process" | "within-process" */
    long processes;               /* 0: unknown */
    double p50_ci_lo_ms, p50_ci_hi_ms;
    /* NULL or "": one call after another (closed loop); else how the calls
     * were scheduled, drawn under the label (rpx_plot_mode_note), e.g.
     * "open loop, 50 req/s (from intended send)" or "paced 200 Hz" */
    const char *mode_note;
} rpx_plot_row;

/* Fill a row's interval fields from a report (strings borrowed from it). */
RPX_API void rpx_plot_row_interval(rpx_plot_row *row, const json_t *report);

/* A row's mode_note into buf ("" for a closed-loop run): an open-loop load
 * run (http.load: its requested and achieved rates per second, the achieved
 * one only when below 0.98 of the requested; latency from each request's
 * intended send time) or a paced run (pacing.rate_hz). NaN: not that mode. */
RPX_API void rpx_plot_mode_note(char *buf, size_t cap, double load_requested_per_s, double load_achieved_per_s,
                        double paced_hz);

/* The same from a report (http.load, pacing). */
RPX_API void rpx_plot_mode_note_of(char *buf, size_t cap, const json_t *report);

/* An SVG document (malloc'ed) of the rows: one panel per task, one row per
 * model, the p50's interval drawn as an error bar where the row has one; with
 * `timeline`, latency against call index of rows[0] (its interval a band). */
RPX_API int rpx_plot_svg(const rpx_plot_row *rows, size_t n, int timeline, char **svg, rpx_error *err);
/* The latency figure of one run report (`rpxprof plot` of it): its samples,
 * the p50's interval and how the calls were scheduled. 0 and *svg, or < 0
 * (no samples: RPX_EINVAL, err says why). */
RPX_API int rpx_plot_report_svg(const json_t *report, int timeline, char **svg, rpx_error *err);


#ifdef __cplusplus
}
#endif
#endif
