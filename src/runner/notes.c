/* notes.c — owns the run's notes: what a reader of the report should know
 * about its numbers (few samples, drift, leaks), and the warnings among them
 * that the caller shows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/clock.h"
#include "runner/runner_internal.h"

/* "HxW" of the first image-like input (rank >= 3, last dimension 1, 3 or 4). */
void rpx__input_resolution(const rpx_inputs *in, char *buf, size_t size)
{
    size_t i;
    buf[0] = '\0';
    for (i = 0; i < in->count; i++) {
        const rpx_tensor *t = &in->tensors[i];
        int64_t ch = t->ndim >= 3 ? t->shape[t->ndim - 1] : 0;
        if (ch == 1 || ch == 3 || ch == 4) {
            snprintf(buf, size, "%lldx%lld", (long long)t->shape[t->ndim - 3],
                     (long long)t->shape[t->ndim - 2]);
            return;
        }
    }
}

/* Median of n samples (sorts a copy); -1 when n is 0 or out of memory. */
static double median_ns(const int64_t *s, size_t n)
{
    int64_t *c;
    double m;
    if (n == 0 || !(c = malloc(n * sizeof *c))) return -1;
    memcpy(c, s, n * sizeof *c);
    m = rpx_median_i64(c, n);
    free(c);
    return m;
}

/* Latency drift: the median of the last tenth of the calls against the first
 * tenth (throttling, a leak, caches or clocks still settling). */
void rpx__drift_note(const int64_t *samples, size_t n, json_t *notes, json_t *warnings)
{
    size_t tenth = n / 10;
    double first, last, change;
    char buf[512];
    if (n < 50) return;
    first = median_ns(samples, tenth);
    last = median_ns(samples + n - tenth, tenth);
    if (first <= 0 || last < 0) return;
    change = (last - first) / first;
    if (change < 0.10 && change > -0.10) return;
    snprintf(buf, sizeof buf,
             "Latency drifted across the run: the median of the last tenth of the calls "
             "(%.4g ms) is %.0f%% %s the first tenth (%.4g ms); throttling, a leak, or warmup "
             "too short for caches and clocks to settle.",
             last / 1e6, (change < 0 ? -change : change) * 100, change < 0 ? "below" : "above",
             first / 1e6);
    rpx__warn_note(notes, warnings, buf);
}

void rpx__warn_note(json_t *notes, json_t *warnings, const char *text)
{
    json_array_append_new(notes, json_string(text));
    if (warnings) json_array_append_new(warnings, json_string(text));
}

/* Memory that grows across the timed calls: the model process's resident set
 * (read every N calls by that process), and each device's CUDA memory from
 * the reset to the end. */
void rpx__growth_notes(const rpx_rss_summary *t, json_t *cuda_growth, json_t *notes,
                       json_t *warnings)
{
    char buf[512];
    const char *key;
    json_t *v;
    if (t->available && t->leak_suspected) {
        snprintf(buf, sizeof buf,
                 "Resident memory grew during the timed calls: %.1f MiB in the first quarter of "
                 "the run, %.1f MiB in the last (about %.1f KiB per call, %d readings from call "
                 "%ld to %ld); the model may be leaking.",
                 t->first_quarter_mb, t->last_quarter_mb, t->growth_kib_per_call, t->readings,
                 t->first_call, t->last_call);
        rpx__warn_note(notes, warnings, buf);
    }
    json_object_foreach(cuda_growth, key, v) {
        if (json_is_number(v) && json_number_value(v) > 64) {
            snprintf(buf, sizeof buf,
                     "CUDA memory in use on device %s grew by %.1f MiB across the timed calls; "
                     "the model may be leaking device memory.",
                     key, json_number_value(v));
            rpx__warn_note(notes, warnings, buf);
        }
    }
}

json_t *rpx__make_notes(const rpx_runner_config *o, size_t measured, const rpx_memory_peaks *m)
{
    json_t *notes = json_array();
    char buf[512], opt[64];
    if (!notes) return NULL;
    if (measured > 0 && measured < 100) {
        snprintf(buf, sizeof buf,
                 "p99 is interpolated from %zu samples; use %s or more for a tail "
                 "percentile you can rely on",
                 measured, rpx__option_say("repeats", "100", (rpx_option_spelling)o->spelling, opt, sizeof opt));
        json_array_append_new(notes, json_string(buf));
    }
    if (m->inference_peak_bytes < 0) {
        snprintf(buf, sizeof buf, "cpu_inference_peak_mb is null: %s", m->inference_reason);
        json_array_append_new(notes, json_string(buf));
    }
    (void)o;
    return notes;
}


void rpx__load_notes(const json_t *load, json_t *notes, json_t *warnings)
{
    char buf[600];
    long long cut = json_integer_value(json_object_get(load, "cut_at_end"));
    const char *clamp = json_string_value(json_object_get(load, "concurrency_note"));
    if (!json_is_object(load)) return;
    if (clamp) rpx__warn_note(notes, warnings, clamp);
    if (cut > 0) {
        snprintf(buf, sizeof buf,
                 "%lld requests were still in flight when --duration (%g s) and --drain (%g s) "
                 "ended and count as timed out (http.load.cut_at_end); give a longer --drain if "
                 "the server's answers take longer",
                 cut, json_number_value(json_object_get(load, "requested_duration_s")),
                 json_number_value(json_object_get(load, "drain_s")));
        rpx__warn_note(notes, warnings, buf);
    }
}
