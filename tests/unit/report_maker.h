/* report_maker.h — a complete run report made in memory for the unit tests of
 * the comparison and the audits: K processes of M calls, samples a fixed
 * spread around 1 ms times a scale, percentiles what the samples give, the
 * keys the one validator (src/compare/report_check.c) asks for. */
#ifndef RPX_TEST_REPORT_MAKER_H
#define RPX_TEST_REPORT_MAKER_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/latency.h"
#include "rpxprof/report.h"

#define K 4   /* processes */
#define M 24  /* calls each */

static inline int rpx_test_cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A complete report of K processes of M calls whose samples are a fixed
 * spread around 1 ms times `scale`: the keys the validator asks for, its
 * percentiles what its samples give. */
static inline json_t *rpx_test_report(double scale, const char *status)
{
    json_t *r = json_object(), *s = json_array(), *by = json_array(), *lat = json_object();
    double v[K * M], sorted[K * M], sum = 0;
    size_t i;
    for (i = 0; i < K * M; i++) {
        v[i] = scale * (1.0 + 0.002 * (double)((i * 7) % 11) + 0.001 * (double)(i / M));
        sum += v[i];
        json_array_append_new(s, json_real(v[i]));
    }
    memcpy(sorted, v, sizeof v);
    qsort(sorted, K * M, sizeof *sorted, rpx_test_cmp_dbl);
    json_object_set_new(lat, "p50_ms", json_real(rpx_percentile_sorted(sorted, K * M, 50)));
    json_object_set_new(lat, "p95_ms", json_real(rpx_percentile_sorted(sorted, K * M, 95)));
    json_object_set_new(lat, "p99_ms", json_real(rpx_percentile_sorted(sorted, K * M, 99)));
    json_object_set_new(lat, "mean_ms", json_real(sum / (K * M)));
    for (i = 0; i < K; i++)
        json_array_append_new(by, json_pack("{s:I, s:I}", "sample_offset", (json_int_t)(i * M),
                                            "measured_calls", (json_int_t)M));
    json_object_set_new(r, "schema", json_string(RPX_PROFILE_SCHEMA));
    json_object_set_new(r, "status", json_string(status));
    json_object_set_new(r, "model_callable", json_string("./libm.so:predict"));
    json_object_set_new(r, "device", json_string("cpu"));
    json_object_set_new(r, "precision", json_string("fp32"));
    json_object_set_new(r, "unit", json_string("frame"));
    json_object_set_new(r, "inputs_sha256", json_null());
    json_object_set_new(r, "warmup_calls", json_integer(1));
    json_object_set_new(r, "measured_calls", json_integer(K * M));
    json_object_set_new(r, "inputs", json_object());
    json_object_set_new(r, "metadata", json_object());
    json_object_set_new(r, "latency", lat);
    json_object_set_new(r, "latency_samples_ms", s);
    json_object_set_new(r, "system_card", json_object());
    json_object_set_new(r, "memory", json_object());
    json_object_set_new(r, "processes", json_integer(K));
    json_object_set_new(r, "latency_by_process", by);
    json_object_set_new(r, "latency_ci", json_null());
    return r;
}

#endif
