/* html_util.c — what the HTML report's rooms share (html_int.h): escaping,
 * the numbers as the page prints them, and one run's samples read from its
 * report (per call: latency, process, intended send time, CPU; the warmup
 * calls). html.c lays out the page, html_fig.c draws the figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "rpxprof/summary.h"

#define put rpx__sb_printf

void rpx__h_esc(hout *o, const char *s)
{
    const char *run;
    if (!s) s = "n/a";
    for (run = s; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n') rep = "?";
        }
        if (rep) {
            rpx__sb_add(o, run, (size_t)(s - run));
            rpx__sb_str(o, rep);
            run = s + 1;
        }
    }
    rpx__sb_add(o, run, (size_t)(s - run));
}

/* Fixed-point text of v with `decimals` digits, trailing zeros dropped. */
static void fixed(char *buf, size_t size, double v, int decimals)
{
    char *e;
    snprintf(buf, size, "%.*f", decimals, v);
    if (!strchr(buf, '.')) return;
    for (e = buf + strlen(buf) - 1; *e == '0'; e--) *e = '\0';
    if (*e == '.') *e = '\0';
}

const char *rpx__h_num(char *buf, size_t size, double v)
{
    int d;
    if (!isfinite(v)) return "n/a";
    if (v == floor(v) && fabs(v) < 1e15) { snprintf(buf, size, "%.0f", v); return buf; } /* 200, not 2e+02 */
    if (fabs(v) >= 1e-9 && fabs(v) < 1e15)   /* 0.00006, not 6e-05: the shortest fixed text that reads back */
        for (d = 1; d <= 26; d++) {
            fixed(buf, size, v, d);
            if (strtod(buf, NULL) == v) return buf;
        }
    rpx__fmt_shortest(buf, size, v);
    return buf;
}

/* The summary's number rule (rpx_format_3g): three significant digits, no
 * exponent, "n/a" for what is not a number. Every number the page shows. */
const char *rpx__h_num3(char *buf, size_t size, double v)
{
    return rpx_format_3g(buf, size, v);
}

double rpx__h_jnum(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* ---- a run's samples ------------------------------------------------------ */

static double *num_array(const json_t *a, size_t *n)
{
    size_t i, k = json_array_size(a);
    double *v = malloc((k ? k : 1) * sizeof *v);
    if (!v) return NULL;
    for (i = 0; i < k; i++) v[i] = rpx__h_jnum(json_array_get(a, i));
    *n = k;
    return v;
}

int rpx__h_run_load(rpx_h_run *run, const json_t *r)
{
    const json_t *bp = json_object_get(r, "latency_by_process"), *sched, *cpu;
    size_t i, k;
    memset(run, 0, sizeof *run);
    run->r = r;
    run->s = num_array(json_object_get(r, "latency_samples_ms"), &run->n);
    run->warm = num_array(json_object_get(r, "warmup_samples_ms"), &run->nwarm);
    run->proc = calloc(run->n ? run->n : 1, sizeof *run->proc);
    if (!run->s || !run->warm || !run->proc) return -1;
    run->nproc = (int)json_array_size(bp);
    for (k = 0; k < json_array_size(bp); k++) {
        double off = rpx__h_jnum(json_object_get(json_array_get(bp, k), "sample_offset"));
        double cnt = rpx__h_jnum(json_object_get(json_array_get(bp, k), "measured_calls"));
        if (!isfinite(off) || !isfinite(cnt) || off < 0 || cnt < 0) continue;
        for (i = (size_t)off; i < (size_t)(off + cnt) && i < run->n; i++) run->proc[i] = (int)k;
    }
    sched = json_object_get(json_object_get(json_object_get(r, "http"), "load"), "schedule_ms");
    if (json_array_size(sched) == run->n && run->n) {
        run->x_ms = num_array(sched, &k);
        if (!run->x_ms) return -1;
    }
    cpu = json_object_get(json_object_get(r, "call_records"), "cpu_start");
    if (json_array_size(cpu) == run->n && run->n) {
        run->cpu = malloc(run->n * sizeof *run->cpu);
        if (!run->cpu) return -1;
        for (i = 0; i < run->n; i++) {
            const json_t *c = json_array_get(cpu, i);
            run->cpu[i] = json_is_integer(c) ? (long)json_integer_value(c) : -1;
        }
    }
    return 0;
}

void rpx__h_run_free(rpx_h_run *run)
{
    free(run->s);
    free(run->proc);
    free(run->warm);
    free(run->x_ms);
    free(run->cpu);
    memset(run, 0, sizeof *run);
}

