/* run_report.c — owns the report of one run from what it measured
 * (run_report.h): the base keys through rpx_profile_report (profile.c), then
 * the keys of the worker processes (latency_by_process, latency_ci, outliers,
 * warmup samples, stopping), of the distinct samples and writable inputs, of
 * the resident-set trend and of pacing. The runner measures; this file writes.
 * Library code: nothing printed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "loader/kinds.h"
#include "report/call_records.h"
#include "report/run_report.h"
#include "report/variance.h"
#include "rpxprof/latency.h"
#include "rpxprof/send_delay.h"
#include "rpxprof/stats.h"

/* A note for the report that the user should also see (warnings may be NULL). */
static void warn_note(json_t *notes, json_t *warnings, const char *text)
{
    if (!notes) return;
    json_array_append_new(notes, json_string(text));
    if (warnings) json_array_append_new(warnings, json_string(text));
}

/* What one sample spans, when the kind or the inputs make it other than a
 * shared object's call (NULL: profile.c's default). */
static const char *timing_scope(const rpx_run_data *d)
{
    const rpx_kind *k = rpx__kind_named(d->desc.target_kind); /* the kind's words */
    if (d->http_open_loop && k->scope_load) return k->scope_load;
    if (d->writable_inputs && k->scope_writable) return k->scope_writable;
    return k->scope;
}

/* Every process's samples in ms, one after another; offsets and counts per process. */
static double *samples_ms(const rpx_run_data *d, size_t *offsets, size_t *counts)
{
    double *ms = malloc((d->measured ? d->measured : 1) * sizeof *ms);
    size_t at = 0;
    int i;
    if (!ms) return NULL;
    for (i = 0; i < d->n_procs; i++) {
        size_t j, n = d->procs[i].measured;
        offsets[i] = at;
        counts[i] = n;
        for (j = 0; j < n && at < d->measured; j++) ms[at++] = (double)d->procs[i].samples[j] / 1e6;
    }
    return ms;
}

/* latency_by_process: each process's own statistics and where its samples are */
static json_t *by_process_json(const rpx_run_data *d, int n_procs, const double *ms,
                               const size_t *offsets, const size_t *counts)
{
    json_t *a = json_array();
    int i;
    for (i = 0; a && i < n_procs; i++) {
        rpx_latency *lat = NULL;
        json_t *o = NULL;
        size_t j;
        if (rpx_latency_create(0, &lat) == 0 && rpx_latency_reserve(lat, counts[i]) == 0) {
            for (j = 0; j < counts[i]; j++) rpx_latency_add_ns(lat, ms[offsets[i] + j] * 1e6);
            o = rpx_latency_json(lat);
        }
        rpx_latency_destroy(lat);
        if (!o) o = json_object();
        json_object_set_new(o, "process", json_integer(i));
        json_object_set_new(o, "sample_offset", json_integer((json_int_t)offsets[i]));
        json_object_set_new(o, "measured_calls", json_integer((json_int_t)counts[i]));
        rpx__call_records_process(&d->procs[i], o); /* where its calls ran */
        json_array_append_new(a, o);
    }
    return a;
}

/* The report's keys for the processes: processes, latency_by_process,
 * latency_ci, outliers, warmup samples, stopping. */
static void add_process_keys(const rpx_run_data *d, json_t *report)
{
    size_t *offsets = calloc((size_t)d->n_procs + 1, sizeof *offsets);
    size_t *counts = calloc((size_t)d->n_procs + 1, sizeof *counts);
    double *ms = offsets && counts ? samples_ms(d, offsets, counts) : NULL;
    json_t *warm = json_array(), *lat = json_object_get(report, "latency");
    size_t mild = 0, severe = 0;
    int i;
    json_object_set_new(report, "processes", json_integer(d->n_procs));
    if (ms) {
        json_object_set_new(report, "latency_by_process",
                            by_process_json(d, d->n_procs, ms, offsets, counts));
        if (d->latency_ci) json_object_set(report, "latency_ci", d->latency_ci);
        rpx_stats_tukey(ms, d->measured, &mild, &severe);
    }
    if (json_is_object(lat) && d->measured == 0) {
        json_object_set_new(lat, "outliers", json_null()); /* not measured: null, never 0 */
    } else if (json_is_object(lat)) {
        json_t *o = json_object();
        json_object_set_new(o, "mild", json_integer((json_int_t)mild));
        json_object_set_new(o, "severe", json_integer((json_int_t)severe));
        json_object_set_new(o, "method", json_string(RPX_STATS_TUKEY_METHOD));
        json_object_set_new(lat, "outliers", o);
    }
    for (i = 0; warm && i < d->n_procs; i++) {
        long j;
        for (j = 0; j < d->procs[i].warmup_kept; j++)
            json_array_append_new(warm, json_real((double)d->procs[i].warmup_samples[j] / 1e6));
    }
    json_object_set_new(report, "warmup_samples_ms", warm ? warm : json_null());
    if (d->target_precision > 0) {
        json_t *s = json_object();
        json_object_set_new(s, "criterion", json_string("p50_ci_half_width_relative"));
        json_object_set_new(s, "target", json_real(d->target_precision));
        json_object_set_new(s, "achieved", rpx_json_real_or_null(d->achieved));
        json_object_set_new(s, "converged", json_boolean(d->converged));
        json_object_set_new(s, "calls", json_integer((json_int_t)d->measured));
        json_object_set_new(s, "processes", json_integer(d->n_procs));
        json_object_set_new(s, "seconds", json_real(round(d->seconds * 1000) / 1000));
        json_object_set_new(s, "max_time_s", json_real(d->max_time_s));
        json_object_set_new(report, "stopping", s);
        if (!d->converged) {
            char buf[768], why[340] = "", tp[64];
            if (d->stopped && d->stopped[0]) snprintf(why, sizeof why, "; stopped: %s", d->stopped);
            if (d->python) /* rpxprof.profile()'s keyword and value */
                snprintf(tp, sizeof tp, "target_precision=%g", d->target_precision);
            else
                snprintf(tp, sizeof tp, "--target-precision %g%%", d->target_precision * 100);
            if (isfinite(d->achieved))
                snprintf(buf, sizeof buf,
                         "%s: not reached (the p50's interval reaches +-%.2g%% "
                         "from it after %d processes and %.0f s%s); the numbers stand, with that "
                         "interval",
                         tp, d->achieved * 100, d->n_procs, d->seconds, why);
            else
                snprintf(buf, sizeof buf,
                         "%s: not reached (after %d processes and %.0f s the "
                         "p50's interval cannot be stated: %s); the numbers stand, without it",
                         tp, d->n_procs, d->seconds,
                         d->why_none && d->why_none[0] ? d->why_none
                                                       : "fewer than 2 processes completed");
            warn_note(d->desc.notes, d->warnings, buf);
        }
    } else {
        json_object_set_new(report, "stopping", json_null());
    }
    json_object_set_new(report, "autorange", d->autorange ? json_incref(d->autorange) : json_null());
    free(ms);
    free(offsets);
    free(counts);
}

/* The variance section. With the per-call arrays written without being held
 * (desc.lazy), from the samples themselves and a passing copy of
 * call_records (its CPU arrays made of shared values: a pointer a call). */
static json_t *variance(const rpx_run_data *d, const json_t *report)
{
    const rpx_latency *lat = d->desc.latency;
    size_t first, n, i;
    const double *ns;
    double *ms;
    json_t *rv, *v;
    if (!d->desc.lazy || !lat) return rpx_variance_json_for(report, d->python);
    first = rpx_latency_first_used(lat);
    n = rpx_latency_count(lat) - first;
    ns = rpx_latency_samples_ns(lat);
    ms = malloc((n ? n : 1) * sizeof *ms);
    if (!ms) return NULL;
    for (i = 0; i < n; i++) ms[i] = ns[first + i] / 1e6;
    rv = json_copy(json_object_get(report, "call_records")); /* shallow: the copy's slots only */
    if (json_is_object(rv) && rpx_json_lazy_materialise(rv, d->desc.lazy) != 0) {
        json_decref(rv);
        free(ms);
        return NULL;
    }
    v = rpx__variance_json_of(report, ms, n, rv, d->python); /* frees ms */
    json_decref(rv);
    return v;
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The keys of distinct samples and writable inputs: distinct_samples,
 * inputs_writable; with several samples inputs_file (every file),
 * latency_records and latency_by_sample; with --writable-inputs
 * inputs_restore. Timed call j (counted over every process) took sample
 * j % n in repetition j / n. */
static void add_sample_keys(const rpx_run_data *d, json_t *report)
{
    size_t n_smp = d->n_samples;
    json_object_set_new(report, "distinct_samples", json_integer((json_int_t)n_smp));
    json_object_set_new(report, "inputs_writable", json_boolean(d->writable_inputs));
    if (n_smp > 1) {
        json_t *files = json_array(), *records = json_array(), *by = json_array();
        rpx_latency **lat = calloc(n_smp, sizeof *lat);
        size_t k, j = 0, m;
        int i;
        for (k = 0; files && k < n_smp; k++)
            json_array_append_new(files, json_string(d->sample_paths[k]));
        if (d->list_sample_files) json_object_set_new(report, "inputs_file", files);
        else json_decref(files);
        for (k = 0; lat && k < n_smp; k++)
            if (rpx_latency_create(0, &lat[k]) != 0 ||
                rpx_latency_reserve(lat[k], d->measured / n_smp + 1) != 0)
                break;
        for (i = 0; i < d->n_procs; i++)
            for (m = 0; m < d->procs[i].measured; m++, j++) {
                json_t *r = json_object();
                double ns = (double)d->procs[i].samples[m];
                k = j % n_smp;
                json_object_set_new(r, "sample_index", json_integer((json_int_t)k));
                json_object_set_new(r, "sample_id", json_string(d->sample_ids[k]));
                json_object_set_new(r, "repetition", json_integer((json_int_t)(j / n_smp)));
                json_object_set_new(r, "latency_ms", json_real(ns / 1e6));
                json_array_append_new(records, r);
                if (lat && lat[k]) rpx_latency_add_ns(lat[k], ns);
            }
        for (k = 0; k < n_smp; k++) {
            json_t *o = lat && lat[k] ? rpx_latency_json(lat[k]) : NULL;
            size_t n_k = d->measured / n_smp + (k < d->measured % n_smp);
            if (!o) o = json_object();
            json_object_set_new(o, "sample_index", json_integer((json_int_t)k));
            json_object_set_new(o, "sample_id", json_string(d->sample_ids[k]));
            json_object_set_new(o, "file", json_string(d->sample_paths[k]));
            json_object_set_new(o, "n", json_integer((json_int_t)n_k));
            json_array_append_new(by, o);
            if (lat) rpx_latency_destroy(lat[k]);
        }
        free(lat);
        json_object_set_new(report, "latency_records", records);
        json_object_set_new(report, "latency_by_sample", by);
        if (d->repeats % (long)n_smp != 0) {
            char m2[256];
            snprintf(m2, sizeof m2,
                     "--repeats %ld is not a multiple of the %zu distinct samples: the last "
                     "repetition is partial (latency_by_sample's n differ)",
                     d->repeats, n_smp);
            warn_note(d->desc.notes, d->warnings, m2);
        }
    }
    if (d->writable_inputs) {
        json_t *o = json_object();
        size_t total = 0, at = 0, m;
        double *ms, sum = 0, warm = 0;
        int i;
        for (i = 0; i < d->n_procs; i++) total += d->procs[i].measured;
        ms = malloc((total ? total : 1) * sizeof *ms);
        for (i = 0; i < d->n_procs; i++) {
            warm += (double)d->procs[i].restore_warmup_ns / 1e6;
            for (m = 0; ms && m < d->procs[i].measured; m++) {
                ms[at] = (double)d->procs[i].restore_samples[m] / 1e6;
                sum += ms[at++];
            }
        }
        if (ms && at) qsort(ms, at, sizeof *ms, cmp_ms);
        json_object_set_new(o, "total_ms", json_real(sum + warm));
        json_object_set_new(o, "timed_calls_total_ms", json_real(sum));
        json_object_set_new(o, "warmup_calls_total_ms", json_real(warm));
        json_object_set_new(o, "p50_ms", ms && at ? json_real(rpx_percentile_sorted(ms, at, 50))
                                                   : json_null());
        json_object_set_new(o, "calls", json_integer((json_int_t)at));
        json_object_set_new(o, "bytes_per_call", json_integer((json_int_t)d->bytes_per_sample));
        json_object_set_new(o, "method",
                            json_string("memcpy of the sample's pristine bytes over the arrays "
                                        "the call receives, before every call (warmup and timed), "
                                        "outside the timed span; never part of a latency sample"));
        json_object_set_new(report, "inputs_restore", o);
        free(ms);
    }
}

/* Three significant digits: a rate per call reproduces no better. */
static json_t *sig3(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.3g", v);
    return json_real(strtod(buf, NULL));
}

/* The resident set across the timed calls, as the report's memory.cpu_rss_trend. */
static json_t *rss_trend_json(const rpx_rss_summary *t)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "readings", json_integer(t->readings));
    json_object_set_new(o, "every_calls", json_integer(t->every_calls));
    if (!t->available) {
        json_object_set_new(o, "leak_suspected", json_null());
        json_object_set_new(o, "reason", json_string(t->reason));
        return o;
    }
    json_object_set_new(o, "first_quarter_mb", json_real(t->first_quarter_mb));
    json_object_set_new(o, "last_quarter_mb", json_real(t->last_quarter_mb));
    json_object_set_new(o, "growth_kib_per_call", sig3(t->growth_kib_per_call));
    json_object_set_new(o, "detectable_kib_per_call", sig3(t->detectable_kib_per_call));
    json_object_set_new(o, "leak_suspected", json_boolean(t->leak_suspected));
    return o;
}

/* The report's `pacing` section: a shared object or Python callable called at
 * a fixed rate (--rate HZ: a camera at 30 Hz, a control loop at 100 Hz)
 * instead of back to back. The loop (measure/run.c) starts timed call i at
 * pace_start + i / rate at the earliest, on absolute deadlines, and records
 * how late each call started; each call is timed as without pacing
 * (`latency`). Here: the late starts, the start lags, the latency from each
 * call's deadline (lag + call: the queueing a server would see when the rate
 * is above what one call can serve) and the rate achieved. */
static json_t *pacing_json(const rpx_run_data *d)
{
    double rate_hz = d->rate_hz;
    json_t *back_to_back = d->back_to_back;
    const rpx_latency *paced = d->desc.latency;
    json_t *o = json_object();
    rpx_latency *lag = NULL, *sched = NULL, *own = NULL;
    json_t *sched_samples = json_array();
    double period_ns = 1e9 / rate_hz, calls_minus = 0, span_ns = 0;
    long late = 0, calls = 0;
    int i;
    if (!o || !sched_samples || rpx_latency_create(0, &lag) != 0 ||
        rpx_latency_create(0, &sched) != 0 || rpx_latency_create(0, &own) != 0) {
        rpx_latency_destroy(lag);
        rpx_latency_destroy(sched);
        json_decref(o);
        json_decref(sched_samples);
        return NULL;
    }
    for (i = 0; i < d->n_procs; i++) {
        const rpx_run_process *sh = &d->procs[i];
        size_t m, n = sh->measured;
        late += sh->late_starts;
        calls += (long)n;
        for (m = 0; m < n; m++) {
            /* the client's own delay: the lag past the later of the deadline and the end
             * of the call before (a call still running is the model's queue, not ours) */
            double queued = m > 0 ? (double)(sh->start_lag[m - 1] + sh->samples[m - 1]) -
                                        period_ns
                                  : 0;
            double mine = (double)sh->start_lag[m] - (queued > 0 ? queued : 0);
            rpx_latency_add_ns(lag, (double)sh->start_lag[m]);
            rpx_latency_add_ns(sched, (double)(sh->start_lag[m] + sh->samples[m]));
            rpx_latency_add_ns(own, mine > 0 ? mine : 0);
            json_array_append_new(sched_samples,
                                  json_real((double)(sh->start_lag[m] + sh->samples[m]) / 1e6));
        }
        if (n >= 2) {
            /* call k started at pace_start + k * period + lag[k] */
            calls_minus += (double)(n - 1);
            span_ns += (double)(n - 1) * period_ns + (double)(sh->start_lag[n - 1] - sh->start_lag[0]);
        }
    }
    json_object_set_new(o, "rate_hz", json_real(rate_hz));
    json_object_set_new(o, "period_ms", json_real(period_ns / 1e6));
    json_object_set_new(o, "schedule",
                        json_string("absolute deadlines (clock_nanosleep TIMER_ABSTIME): timed "
                                    "call i of a process starts at the earliest i periods after "
                                    "its first; a late call does not move the ones after it"));
    json_object_set_new(o, "calls", json_integer(calls));
    json_object_set_new(o, "late_starts", json_integer(late));
    json_object_set_new(o, "achieved_rate_hz", span_ns > 0 ? json_real(calls_minus / (span_ns / 1e9))
                                                           : json_null());
    json_object_set_new(o, "start_lag_ms", rpx_latency_json(lag));
    json_object_set_new(o, "latency_from_schedule_ms", rpx_latency_json(sched));
    json_object_set_new(o, "latency_from_schedule_samples_ms", sched_samples);
    {
        rpx_send_delay_stats sd;
        rpx_latency_stats so, ss;
        memset(&sd, 0, sizeof sd);
        sd.waited = -1;
        sd.requested_rate = rate_hz;
        sd.achieved_rate = span_ns > 0 ? calls_minus / (span_ns / 1e9) : (double)NAN;
        sd.target_bound = rpx_latency_stats_get(d->desc.latency, &so) == 0 && so.available &&
                          so.p50_ms * 1e6 >= period_ns;
        sd.p50_ns = sd.p99_ns = sd.max_ns = sd.mean_ns = (double)NAN;
        sd.latency_p50_ns = sd.latency_p99_ns = (double)NAN;
        if (rpx_latency_stats_get(own, &so) == 0 && so.available) {
            sd.n = (long)rpx_latency_count(own);
            sd.p50_ns = so.p50_ms * 1e6;
            sd.p99_ns = so.p99_ms * 1e6;
            sd.max_ns = so.max_ms * 1e6;
            sd.mean_ns = so.mean_ms * 1e6;
        }
        if (rpx_latency_stats_get(sched, &ss) == 0 && ss.available) {
            sd.latency_p50_ns = ss.p50_ms * 1e6;
            sd.latency_p99_ns = ss.p99_ms * 1e6;
        }
        json_object_set_new(
            o, "send_delay",
            rpx_send_delay_json(&sd, "the pacer's own delay per call: from the later of its "
                                     "deadline and the previous call's end to the call's start "
                                     "(sleep to 200 us before, then spin); share: of the "
                                     "latency from the schedule"));
    }
    if (back_to_back) {
        /* the same model called back to back, before the paced run */
        json_t *b = json_object();
        rpx_latency_stats st;
        double p50 = json_number_value(json_object_get(back_to_back, "p50_ms"));
        json_object_set(b, "latency", back_to_back);
        json_object_set_new(b, "paced_p50_over_back_to_back_p50",
                            paced && rpx_latency_stats_get(paced, &st) == 0 && st.available &&
                                    p50 > 0
                                ? json_real(st.p50_ms / p50)
                                : json_null());
        json_object_set_new(o, "back_to_back", b);
    } else {
        json_object_set_new(o, "back_to_back", json_null());
    }
    rpx_latency_destroy(lag);
    rpx_latency_destroy(sched);
    rpx_latency_destroy(own);
    return o;
}

/* {phase, call_index, in_warmup, signal, signal_name} */
static json_t *failure_json(const rpx_run_failure *f)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "phase", json_string(f->phase));
    json_object_set_new(o, "call_index", f->in_loop ? json_integer(f->call_index) : json_null());
    json_object_set_new(o, "in_warmup", f->in_loop ? json_boolean(f->in_warmup) : json_null());
    json_object_set_new(o, "signal", f->signal ? json_integer(f->signal) : json_null());
    json_object_set_new(o, "signal_name", f->signal ? json_string(strsignal(f->signal))
                                                    : json_null());
    return o;
}

json_t *rpx__run_report(const rpx_run_data *d)
{
    rpx_profile_desc desc = d->desc;
    json_t *report, *failure = d->failure ? failure_json(d->failure) : NULL;
    if (!desc.timing_scope) desc.timing_scope = timing_scope(d);
    if (failure) desc.failure = failure;
    report = rpx_profile_report(&desc);
    json_decref(failure);
    if (!report) return NULL;
    if (d->rss_trend)
        json_object_set_new(json_object_get(report, "memory"), "cpu_rss_trend",
                            rss_trend_json(d->rss_trend));
    add_process_keys(d, report);
    if (d->placement) json_object_set(report, "placement", d->placement);
    {
        size_t i;
        for (i = 0; i < d->n_sections; i++) /* call_records, timeline, gpu_time... */
            if (!d->sections[i].optional)
                json_object_set(report, d->sections[i].key,
                            d->sections[i].value ? d->sections[i].value : json_null());
    }
    add_sample_keys(d, report);
    if (d->rate_hz > 0) json_object_set_new(report, "pacing", pacing_json(d));
    {
        /* why it varied: from the report's own keys (variance.c), after every
         * key it reads is in place */
        json_t *v = variance(d, report);
        const char *m = json_string_value(json_object_get(v, "message"));
        if (m) warn_note(d->desc.notes, d->warnings, m);
        json_object_set_new(report, "variance", v ? v : json_null());
    }
    if (d->processes_asked) {
        char m[200];
        snprintf(m, sizeof m, "%d processes were asked for %ld timed calls: %d processes of one "
                 "call each ran instead; give more %s",
                 d->processes_asked, d->repeats, d->processes, d->python ? "repeats=" : "--repeats");
        warn_note(d->desc.notes, d->warnings, m);
    }
    if (d->audit) json_object_set(report, "audit", d->audit);
    if (d->server_metrics) json_object_set(report, "server_metrics", d->server_metrics);
    {
        size_t i;
        for (i = 0; i < d->n_sections; i++) /* outputs */
            if (d->sections[i].optional)
                json_object_set(report, d->sections[i].key,
                                d->sections[i].value ? d->sections[i].value : json_null());
    }
    return report;
}
