/* html_util.c — what the HTML report's rooms share (html_int.h): escaping,
 * the numbers as the page prints them (the summary's rule, the digits an
 * interval supports), the few report fields both the page
 * and the glance read (an interval, the inputs in words), and one run's
 * samples read from its report (per call: latency, process, intended send
 * time, CPU; the warmup calls). html.c lays out the page, html_fig.c draws
 * the figures, html_glance.c is Jupyter's fragment. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "rpxprof/summary.h"

#define put rpx__sb_printf

/* s escaped; an apostrophe as `apos` (the page's "&#39;", or Python's
 * html.escape's "&#x27;" for the glance). */
static void esc_with(hout *o, const char *s, const char *apos)
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
        case '\'': rep = apos; break;
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

void rpx__h_esc(hout *o, const char *s)
{
    esc_with(o, s, "&#39;");
}

void rpx__h_esc_py(hout *o, const char *s)
{
    esc_with(o, s, "&#x27;");
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

/* Decimals that show v to the second significant digit of its interval's
 * half width, never more than six significant digits and never fewer than
 * one (docs/statistics.md, the comparison's rule); -1: no interval (then the
 * summary's three significant digits). */
int rpx__h_ci_decimals(double v, double lo, double hi)
{
    double hw = (hi - lo) / 2;
    int e, sig, d;
    if (!isfinite(v) || !isfinite(lo) || !isfinite(hi) || !(fabs(v) >= 1e-9 && fabs(v) < 1e15)) return -1; /* fixed point's range */
    e = (int)floor(log10(fabs(v)));
    if (!(hw > 1e-9 * fabs(v))) sig = 4;          /* a zero-width interval: 4 digits */
    else sig = e - (int)floor(log10(hw)) + 2;
    if (sig < 1) sig = 1;
    if (sig > 6) sig = 6;
    d = sig - 1 - e;
    return d < 0 ? 0 : d > 15 ? 15 : d;
}

/* v with `dec` decimals (dec < 0: the summary's rule), '.' whatever the locale. */
const char *rpx__h_fmt_dec(char *b, size_t n, double v, int dec)
{
    static locale_t c;
    locale_t old;
    if (!isfinite(v)) return "n/a";
    if (dec < 0) return rpx_format_3g(b, n, v);
    if (!c) c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    old = c ? uselocale(c) : (locale_t)0;
    snprintf(b, n, "%.*f", dec, v);
    if (old) uselocale(old);
    if (!strcmp(b, "-0")) snprintf(b, n, "0");
    return b;
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

const char *rpx__h_jstr(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

const json_t *rpx__h_interval(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(json_object_get(r, "latency_ci"), key);
    return json_array_size(v) == 2 && json_is_number(json_array_get(v, 0)) && json_is_number(json_array_get(v, 1))
               ? v
               : NULL;
}

/* A shape's dimension or a file name as Python's str() shows it. */
static void plain_value(hout *o, const json_t *v)
{
    char n[48];
    if (json_is_string(v)) rpx__h_esc(o, json_string_value(v));
    else if (json_is_integer(v)) put(o, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) rpx__h_esc(o, rpx__h_num(n, sizeof n, json_real_value(v)));
    else put(o, "?");
}

void rpx__h_inputs_words(hout *o, const json_t *r)
{
    const json_t *arrays = json_object_get(r, "inputs"), *f = json_object_get(r, "inputs_file");
    if (json_is_object(arrays) && json_object_size(arrays) > 0) {
        const char *name;
        const json_t *a;
        int first = 1;
        json_object_foreach((json_t *)arrays, name, a) {
            const json_t *dtype = json_object_get(a, "dtype"), *shape = json_object_get(a, "shape");
            put(o, first ? "" : ", ");
            first = 0;
            rpx__h_esc(o, name);
            put(o, " ");
            if (json_is_string(dtype)) rpx__h_esc(o, json_string_value(dtype));
            if (json_is_array(shape)) {
                size_t i;
                const json_t *d;
                put(o, "[");
                json_array_foreach(shape, i, d) {
                    put(o, i ? "," : "");
                    plain_value(o, d);
                }
                put(o, "]");
            }
        }
    } else if (json_array_size(f) > 1) {
        put(o, "%zu files (", json_array_size(f));
        plain_value(o, json_array_get(f, 0));
        put(o, ", ...)");
    } else if (json_array_size(f) == 1) {
        plain_value(o, json_array_get(f, 0));
    } else if (json_is_string(f) && json_string_length(f) > 0) {
        plain_value(o, f);
    } else {
        put(o, "not recorded");
    }
}

/* ---- values as table text ------------------------------------------------ */


/* A number of the report by the summary's rule (three significant digits,
 * no exponent: rpx_format_3g), the exact value (shortest round trip) on hover
 * where they differ; a count (a JSON integer) as it is. */
void rpx__h_put_num(hout *o, const json_t *v)
{
    char b[40], s3[40];
    double x = rpx__h_jnum(v);
    if (!isfinite(x)) { put(o, "<span class=\"na\">n/a</span>"); return; }
    if (json_is_integer(v)) { put(o, "%lld", (long long)json_integer_value(v)); return; }
    rpx__h_num(b, sizeof b, x);
    rpx__h_num3(s3, sizeof s3, x);
    if (strtod(s3, NULL) == x) { rpx__h_esc(o, s3); return; }
    put(o, "<span title=\"%s\">%s</span>", b, s3);
}

/* The exact number (shortest round trip), for the headline's p50. */
void rpx__h_put_exact(hout *o, const json_t *v)
{
    char b[40];
    rpx__h_esc(o, rpx__h_num(b, sizeof b, rpx__h_jnum(v)));
}

/* An array as words: "none", two numbers as "a to b" (an interval), else
 * its items one after another (numbers by the rule, objects as key: value). */
static void put_array(hout *o, const json_t *a)
{
    size_t i, n = json_array_size(a);
    if (n == 0) { put(o, "none"); return; }
    if (n == 2 && json_is_number(json_array_get(a, 0)) && json_is_number(json_array_get(a, 1))) {
        rpx__h_put_num(o, json_array_get(a, 0));
        put(o, " to ");
        rpx__h_put_num(o, json_array_get(a, 1));
        return;
    }
    for (i = 0; i < n && i < 50; i++) {
        const json_t *e = json_array_get(a, i);
        put(o, i ? (json_is_object(e) ? "<br>" : ", ") : "");
        if (json_is_object(e)) {
            const char *k;
            json_t *x;
            int first = 1;
            json_object_foreach((json_t *)e, k, x) {
                put(o, first ? "" : ", ");
                first = 0;
                rpx__h_esc(o, k);
                put(o, " ");
                if (json_is_object(x)) put(o, "(&hellip;)");
                else rpx__h_put_value(o, x);
            }
        } else rpx__h_put_value(o, e);
    }
    if (n > 50) put(o, " &hellip; (%zu in all)", n);
}

/* A JSON value as table text: strings as they are, numbers by the summary's
 * rule, arrays as words, null n/a. */
void rpx__h_put_value(hout *o, const json_t *v)
{
    if (!v || json_is_null(v)) put(o, "<span class=\"na\">n/a</span>");
    else if (json_is_string(v)) rpx__h_esc(o, json_string_value(v));
    else if (json_is_number(v)) rpx__h_put_num(o, v);
    else if (json_is_true(v)) put(o, "yes");
    else if (json_is_false(v)) put(o, "no");
    else if (json_is_array(v)) put_array(o, v);
    else if (json_is_object(v) && json_object_size(v) == 0) put(o, "none");
    else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (s && strlen(s) > 400) strcpy(s + 397, "...");
        put(o, "<code>");
        rpx__h_esc(o, s);
        put(o, "</code>");
        free(s);
    }
}

/* A key/value table of an object, nested objects flattened into dotted keys. */
static void kv_rows(hout *o, const json_t *obj, const char *prefix, int depth)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", k);
        if (json_is_object(v) && depth < 2 && json_object_size(v)) {
            kv_rows(o, v, key, depth + 1);
            continue;
        }
        put(o, "<tr><th>");
        rpx__h_esc(o, key);
        put(o, "</th><td>");
        rpx__h_put_value(o, v);
        put(o, "</td></tr>\n");
    }
}

void rpx__h_kv_table(hout *o, const json_t *obj, const char *cls)
{
    put(o, "<table class=\"kv %s\"><tbody>", cls ? cls : "");
    kv_rows(o, obj, "", 0);
    put(o, "</tbody></table>\n");
}

/* An array of objects as a table with one column per key, headed by its label. */
void rpx__h_rows_table(hout *o, const json_t *arr, const char *const *keys, const char *const *labels, size_t nk)
{
    size_t i, j;
    put(o, "<table class=\"sortable\"><thead><tr>");
    for (j = 0; j < nk; j++) { put(o, "<th>"); rpx__h_esc(o, labels ? labels[j] : keys[j]); put(o, "</th>"); }
    put(o, "</tr></thead><tbody>");
    for (i = 0; i < json_array_size(arr); i++) {
        put(o, "<tr>");
        for (j = 0; j < nk; j++) { put(o, "<td>"); rpx__h_put_value(o, json_object_get(json_array_get(arr, i), keys[j])); put(o, "</td>"); }
        put(o, "</tr>\n");
    }
    put(o, "</tbody></table>\n");
}

void rpx__h_list_items(hout *o, const json_t *arr, const char *cls)
{
    size_t i;
    for (i = 0; i < json_array_size(arr); i++) {
        const json_t *s = json_array_get(arr, i);
        put(o, "<li class=\"%s\">", cls);
        if (json_is_string(s)) rpx__h_esc(o, json_string_value(s));
        else rpx__h_put_value(o, s);
        put(o, "</li>\n");
    }
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

