/* row.c — owns a report's one flat row (rpx_report_row, include/rpxprof/summary.h):
 * the columns a table of runs shows, as Python's Report.to_row and
 * rpxprof.to_dataframe give them. The values are the report's own, never
 * rounded (a row is data; the rule rounds only what is displayed); what the
 * report does not hold is null. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/summary.h"

static const char *const stats[] = {"p50", "p95", "p99", "mean"};

/* o[k1][k2]... when it is a number (JSON true/false are not), else null: a new reference */
static json_t *num_at(const json_t *o, const char *k1, const char *k2)
{
    const json_t *v = json_object_get(o, k1);
    if (k2) v = json_object_get(v, k2);
    return json_is_number(v) ? json_incref((json_t *)v) : json_null();
}

/* o[k] as it is (any JSON value), null when absent */
static json_t *raw(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return v ? json_incref((json_t *)v) : json_null();
}

/* a number as a real (Python's float()), else null */
static json_t *as_real(const json_t *v)
{
    return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
}

static void add_stats(json_t *row, const json_t *report)
{
    const json_t *ci = json_object_get(report, "latency_ci");
    size_t i;
    for (i = 0; i < sizeof stats / sizeof stats[0]; i++) {
        char key[32], lo[40], hi[40];
        const json_t *v;
        snprintf(key, sizeof key, "%s_ms", stats[i]);
        snprintf(lo, sizeof lo, "%s_ci_lo_ms", stats[i]);
        snprintf(hi, sizeof hi, "%s_ci_hi_ms", stats[i]);
        json_object_set_new(row, key, num_at(report, "latency", key));
        v = json_object_get(ci, key);
        /* an interval with both ends, or none */
        if (json_is_array(v) && json_array_size(v) == 2 && json_is_number(json_array_get(v, 0)) &&
            json_is_number(json_array_get(v, 1))) {
            json_object_set_new(row, lo, as_real(json_array_get(v, 0)));
            json_object_set_new(row, hi, as_real(json_array_get(v, 1)));
        } else {
            json_object_set_new(row, lo, json_null());
            json_object_set_new(row, hi, json_null());
        }
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* per roofline target, in key order: its ideal bound and the share of it the p50 achieves */
static int add_roofline(json_t *row, const json_t *roof)
{
    size_t n = json_is_object(roof) ? json_object_size(roof) : 0, i = 0;
    const char **keys;
    const char *k;
    json_t *v;
    if (n == 0) return 0;
    if (!(keys = malloc(n * sizeof *keys))) return -1;
    json_object_foreach((json_t *)roof, k, v) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_str);
    for (i = 0; i < n; i++) {
        const json_t *t = json_object_get(roof, keys[i]);
        size_t len = strlen(keys[i]) + 16;
        char *b = malloc(len), *a = malloc(len);
        if (!a || !b) {
            free(a);
            free(b);
            free(keys);
            return -1;
        }
        snprintf(b, len, "bound_%s_ms", keys[i]);
        snprintf(a, len, "achieved_%s", keys[i]);
        json_object_set_new(row, b, as_real(json_object_get(json_object_get(t, "ideal"), "latency_ms")));
        json_object_set_new(row, a, as_real(json_object_get(json_object_get(t, "achieved_fraction"), "ideal")));
        free(a);
        free(b);
    }
    free(keys);
    return 0;
}

json_t *rpx_report_row(const json_t *report)
{
    static const char *const head[] = {"status", "device", "precision", "unit"};
    static const char *const cost[] = {"flops", "macs", "params"};
    const json_t *ci = json_object_get(report, "latency_ci");
    json_t *row = json_object();
    size_t i;
    if (!row) return NULL;
    json_object_set_new(row, "name", raw(report, "model_callable"));
    for (i = 0; i < sizeof head / sizeof head[0]; i++)
        json_object_set_new(row, head[i], raw(report, head[i]));
    json_object_set_new(row, "calls", raw(report, "measured_calls"));
    json_object_set_new(row, "processes", raw(report, "processes"));
    add_stats(row, report);
    json_object_set_new(row, "min_ms", num_at(report, "latency", "min_ms"));
    json_object_set_new(row, "ci_covers", json_is_object(ci) ? raw(ci, "covers") : json_null());
    json_object_set_new(row, "peak_rss_mb", num_at(report, "memory", "cpu_inference_peak_mb"));
    for (i = 0; i < sizeof cost / sizeof cost[0]; i++)
        json_object_set_new(row, cost[i], num_at(report, "efficiency", cost[i]));
    if (add_roofline(row, json_object_get(report, "roofline")) != 0) {
        json_decref(row);
        return NULL;
    }
    json_object_set_new(row, "created_utc", raw(report, "created_utc"));
    return row;
}
