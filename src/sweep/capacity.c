/* capacity.c — owns the capacity search (rpxprof/capacity.h): the objectives'
 * grammar, the distribution-free upper confidence bound of a percentile from
 * order statistics, one step's decision from a run's report (valid, enough
 * requests, every bound below its limit), and the bracket / bisect / verify
 * search with its `capacity` block and sentence. It calls the run function it
 * is given and never runs anything itself. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/capacity.h"
#include "rpxprof/send_delay.h"

void rpx_capacity_opts_init(rpx_capacity_opts *o)
{
    memset(o, 0, sizeof *o);
    o->start_rate = 10;
    o->min_duration_s = 1;
    o->precision = 0.05;
    o->verify_runs = 2;
    o->max_runs = 40;
    o->confidence = 0.95;
    o->unit = "req/s";
}

/* "50ms", "2s", "500us", "50" (ms): ms, or NaN */
static double duration_ms(const char *t)
{
    char *end;
    double v = strtod(t, &end);
    if (end == t || !(v > 0) || !isfinite(v)) return (double)NAN;
    if (!*end || strcmp(end, "ms") == 0) return v;
    if (strcmp(end, "s") == 0) return v * 1e3;
    if (strcmp(end, "us") == 0) return v / 1e3;
    return (double)NAN;
}

static int parse_one(char *tok, rpx_slo_objective *ob)
{
    static const struct { const char *prefix; rpx_slo_metric m; } names[] = {
        {"ttft_p", RPX_SLO_TTFT}, {"tpot_p", RPX_SLO_TPOT}, {"e2e_p", RPX_SLO_E2E}, {"p", RPX_SLO_LATENCY}};
    char *lt = strchr(tok, '<'), *end;
    size_t i;
    double pct;
    while (*tok == ' ') tok++;
    if (!lt) return -1;
    *lt = '\0';
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strncmp(tok, names[i].prefix, strlen(names[i].prefix)) == 0) break;
    if (i == sizeof names / sizeof names[0]) return -1;
    pct = strtod(tok + strlen(names[i].prefix), &end);
    if (end == tok + strlen(names[i].prefix) || (*end && *end != ' ') || !(pct > 0 && pct < 100))
        return -1;
    ob->metric = names[i].m;
    ob->q = pct / 100.0;
    ob->limit_ms = duration_ms(lt + 1);
    if (!(ob->limit_ms > 0)) return -1;
    snprintf(ob->text, sizeof ob->text, "%s%g<%gms", names[i].prefix, pct, ob->limit_ms);
    return 0;
}

int rpx_capacity_slo_parse(const char *text, rpx_capacity_slo *out, rpx_error *err)
{
    char *copy, *tok, *save = NULL;
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return rpx_error_set(err, RPX_EUSAGE, "--slo is empty; write e.g. 'p99<50ms'");
    if (!(copy = strdup(text))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        char shown[64];
        snprintf(shown, sizeof shown, "%s", tok);
        if (out->n == RPX_CAPACITY_MAX_OBJECTIVES)
            rc = rpx_error_set(err, RPX_EUSAGE, "--slo %s: at most %d objectives", text,
                               RPX_CAPACITY_MAX_OBJECTIVES);
        else if (parse_one(tok, &out->obj[out->n]) != 0)
            rc = rpx_error_set(err, RPX_EUSAGE,
                               "--slo %s: '%s' is not an objective; write NAME<DURATION with "
                               "NAME pN, e2e_pN, ttft_pN or tpot_pN (0 < N < 100) and DURATION "
                               "in us, ms (the default) or s, e.g. 'p99<50ms,ttft_p99<500ms'",
                               text, shown);
        else
            out->n++;
    }
    free(copy);
    return rc;
}

size_t rpx_capacity_min_requests(double q, double confidence)
{
    if (!(q > 0 && q < 1) || !(confidence > 0 && confidence < 1)) return 0;
    return (size_t)ceil(log(1 - confidence) / log(q) - 1e-9);
}

size_t rpx_capacity_upper_rank(size_t n, double q, double confidence)
{
    double lq, l1q, lnf, cdf = 0;
    size_t k;
    if (n == 0 || n < rpx_capacity_min_requests(q, confidence)) return 0;
    lq = log(q);
    l1q = log1p(-q);
    lnf = lgamma((double)n + 1);
    /* P(B <= j), B ~ Binomial(n, q), summed from j = 0; the rank is j + 1 */
    for (k = 0; k < n; k++) {
        double j = (double)k;
        cdf += exp(lnf - lgamma(j + 1) - lgamma((double)n - j + 1) + j * lq + ((double)n - j) * l1q);
        if (cdf >= confidence) return k + 1;
    }
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The per-request samples an objective is judged on, from a run's report (borrowed). */
static const json_t *samples_of(const json_t *report, rpx_slo_metric m)
{
    const json_t *stream = json_object_get(json_object_get(report, "http"), "streaming");
    const json_t *pacing = json_object_get(report, "pacing");
    if (m == RPX_SLO_TTFT) return json_object_get(stream, "ttft_samples_ms");
    if (m == RPX_SLO_TPOT) return json_object_get(stream, "tpot_samples_ms");
    if (json_is_object(pacing)) return json_object_get(pacing, "latency_from_schedule_samples_ms");
    return json_object_get(report, "latency_samples_ms");
}

static const char *metric_word(rpx_slo_metric m)
{
    return m == RPX_SLO_TTFT ? "ttft" : m == RPX_SLO_TPOT ? "tpot" : m == RPX_SLO_E2E ? "e2e"
                                                                                    : "latency";
}

/* One objective on one run: {text, n, rank, upper_ms, holds}; *need: requests it needs
 * (0: enough). NULL out of memory. */
static json_t *judge(const rpx_slo_objective *ob, const json_t *report, double confidence,
                     int *holds, size_t *need)
{
    const json_t *a = samples_of(report, ob->metric), *v;
    size_t n = json_array_size(a), i, rank, min = rpx_capacity_min_requests(ob->q, confidence);
    double *x = malloc((n ? n : 1) * sizeof *x), upper = (double)NAN;
    json_t *o = json_object();
    if (!x || !o) {
        free(x);
        json_decref(o);
        return NULL;
    }
    json_array_foreach(a, i, v) x[i] = json_number_value(v);
    qsort(x, n, sizeof *x, cmp_double);
    rank = rpx_capacity_upper_rank(n, ob->q, confidence);
    if (rank) upper = x[rank - 1];
    *need = n < min ? min : 0;
    *holds = rank > 0 && upper < ob->limit_ms;
    json_object_set_new(o, "text", json_string(ob->text));
    json_object_set_new(o, "n", json_integer((json_int_t)n));
    json_object_set_new(o, "rank", rank ? json_integer((json_int_t)rank) : json_null());
    json_object_set_new(o, "upper_ms", rank ? json_real(upper) : json_null());
    json_object_set_new(o, "holds", rank ? json_boolean(*holds) : json_null());
    free(x);
    return o;
}

typedef struct search {
    const rpx_capacity_opts *o;
    rpx_capacity_run_fn run;
    void *ctx;
    json_t *steps, *verified;
    double tolerance_ms;
    size_t min_requests;
    int runs;
} search;

/* The run's validity for the search: the send-delay block's saturation, and its p99
 * against the search's tolerance. 1 valid; 0 invalid (reason). */
static int step_valid(const search *S, const json_t *report, char *reason, size_t size)
{
    const json_t *b = json_object_get(json_object_get(json_object_get(report, "http"), "load"),
                                      "send_delay");
    const char *status = json_string_value(json_object_get(report, "status"));
    double p99_us;
    if (!json_is_object(b)) b = json_object_get(json_object_get(report, "pacing"), "send_delay");
    if (status && strcmp(status, "complete") != 0) {
        snprintf(reason, size, "the run did not complete (status %s)", status);
        return 0;
    }
    if (!json_is_object(b)) {
        snprintf(reason, size, "the run was not paced (no send_delay block): not a rate's point");
        return 0;
    }
    if (json_is_true(json_object_get(b, "saturated"))) {
        snprintf(reason, size, "%s", json_string_value(json_object_get(b, "invalid_reason")));
        return 0;
    }
    p99_us = json_number_value(json_object_get(b, "p99_us"));
    if (p99_us > S->tolerance_ms * 1e3) {
        snprintf(reason, size,
                 "the client fell behind its schedule: its own send delay's p99 was %.0f us, over "
                 "the search's tolerance of %.0f us",
                 p99_us, S->tolerance_ms * 1e3);
        return 0;
    }
    return 1;
}

/* One step at `rate`: runs (extending the duration while an objective lacks requests),
 * judges, appends the step to `into`. *pass: 1 when every objective holds on a valid run. */
static int step(search *S, double rate, const char *phase, json_t *into, int *pass,
                rpx_error *err)
{
    double duration = S->o->min_duration_s;
    int attempt;
    if ((double)S->min_requests * 1.1 / rate > duration)
        duration = (double)S->min_requests * 1.1 / rate;
    for (attempt = 0; attempt < 3; attempt++) {
        json_t *report = NULL, *st, *objs;
        char reason[400] = "";
        size_t need_max = 0;
        int i, rc, valid, all = 1;
        if (S->runs >= S->o->max_runs)
            return rpx_error_set(err, RPX_EINVAL,
                                 "the capacity search reached its %d runs without deciding; "
                                 "give a start rate nearer the capacity or a coarser precision",
                                 S->o->max_runs);
        S->runs++;
        if ((rc = S->run(S->ctx, rate, duration, &report, err)) != 0) return rc;
        st = json_object();
        objs = json_array();
        if (!st || !objs) {
            json_decref(report);
            json_decref(st);
            json_decref(objs);
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        }
        valid = step_valid(S, report, reason, sizeof reason);
        for (i = 0; i < S->o->slo.n; i++) {
            size_t need = 0;
            int holds = 0;
            json_t *j = judge(&S->o->slo.obj[i], report, S->o->confidence, &holds, &need);
            if (j) json_array_append_new(objs, j);
            if (need > need_max) need_max = need;
            all = all && holds;
        }
        json_decref(report);
        json_object_set_new(st, "phase", json_string(phase));
        json_object_set_new(st, "rate", json_real(rate));
        json_object_set_new(st, "duration_s", json_real(duration));
        json_object_set_new(st, "valid", json_boolean(valid));
        json_object_set_new(st, "invalid_reason", valid ? json_null() : json_string(reason));
        json_object_set_new(st, "objectives", objs);
        if (valid && need_max > 0) { /* too few requests for a bound: longer, never decided */
            json_object_set_new(st, "pass", json_null());
            json_object_set_new(st, "note", json_string("too few requests for the percentile's "
                                                        "bound: run again, longer"));
            json_array_append_new(into, st);
            duration *= 2;
            continue;
        }
        *pass = valid && all;
        json_object_set_new(st, "pass", json_boolean(*pass));
        json_array_append_new(into, st);
        return 0;
    }
    *pass = 0;
    return 0;
}

static json_t *objectives_json(const rpx_capacity_slo *slo)
{
    json_t *a = json_array();
    int i;
    for (i = 0; a && i < slo->n; i++) {
        json_t *o = json_object();
        if (!o) break;
        json_object_set_new(o, "text", json_string(slo->obj[i].text));
        json_object_set_new(o, "metric", json_string(metric_word(slo->obj[i].metric)));
        json_object_set_new(o, "percentile", json_real(100 * slo->obj[i].q));
        json_object_set_new(o, "limit_ms", json_real(slo->obj[i].limit_ms));
        json_array_append_new(a, o);
    }
    return a;
}

/* bracket: lo passes (0: none yet), hi fails (0: none yet) */
static int bracket(search *S, double *lo, double *hi, rpx_error *err)
{
    const double top = S->o->unit_per_s_max > 0 ? S->o->unit_per_s_max : 1e7;
    double r = S->o->start_rate;
    int pass, rc;
    *lo = *hi = 0;
    /* down at most 10 halvings from the start (1/1024 of it): below that, say so */
    while (r <= top && r >= S->o->start_rate / 1024.5) {
        if ((rc = step(S, r, "bracket", S->steps, &pass, err)) != 0) return rc;
        if (pass) {
            *lo = r;
            if (*hi > 0) return 0;
            r *= 2;
        } else {
            *hi = r;
            if (*lo > 0) return 0;
            r /= 2;
        }
    }
    return 0;
}

static int bisect(search *S, double *lo, double *hi, rpx_error *err)
{
    int pass, rc;
    while (*lo > 0 && *hi > *lo && (*hi - *lo) / *lo > S->o->precision) {
        double mid = (*lo + *hi) / 2;
        if ((rc = step(S, mid, "bisect", S->steps, &pass, err)) != 0) return rc;
        if (pass) *lo = mid;
        else *hi = mid;
    }
    return 0;
}

static void sentence(char *buf, size_t size, const rpx_capacity_opts *o, double lo, double hi,
                     int verified)
{
    char objs[400] = "";
    int i;
    for (i = 0; i < o->slo.n; i++) {
        char one[80];
        const rpx_slo_objective *ob = &o->slo.obj[i];
        snprintf(one, sizeof one, "%s%s p%g < %g ms", i ? (i == o->slo.n - 1 ? " and" : ",") : "",
                 ob->metric == RPX_SLO_LATENCY ? "" : ob->metric == RPX_SLO_TTFT ? " ttft"
                                                  : ob->metric == RPX_SLO_TPOT ? " tpot"
                                                                                : " e2e",
                 100 * ob->q, ob->limit_ms);
        strncat(objs, one, sizeof objs - strlen(objs) - 1);
    }
    if (!(lo > 0))
        snprintf(buf, size, "no rate tried met%s with 95 %% confidence (lowest tried: %.4g %s)",
                 objs, hi, o->unit);
    else if (!verified)
        snprintf(buf, size, "no rate was re-verified to meet%s (the search's last pass: %.4g %s)",
                 objs, lo, o->unit);
    else if (hi > 0)
        snprintf(buf, size, "sustains %.4g %s (95 %% CI %.4g-%.4g) with%s", lo, o->unit, lo, hi,
                 objs);
    else
        snprintf(buf, size, "sustains %.4g %s (no failing rate up to the search's ceiling) with%s",
                 lo, o->unit, objs);
}

/* The found rate in fresh runs; a failure moves the bracket below it and bisects again
 * (at most three times). *ok: 1 when the last verification passed every run. */
static int verify(search *S, double *lo, double *hi, int *ok, rpx_error *err)
{
    int round, rc;
    *ok = 0;
    for (round = 0; round < 3 && *lo > 0; round++) {
        int i, pass = 1;
        json_array_clear(S->verified);
        for (i = 0; i < S->o->verify_runs && pass; i++)
            if ((rc = step(S, *lo, "verify", S->verified, &pass, err)) != 0) return rc;
        for (i = 0; i < (int)json_array_size(S->verified); i++)
            json_array_append(S->steps, json_array_get(S->verified, (size_t)i));
        if (pass) {
            *ok = 1;
            return 0;
        }
        *hi = *lo;
        *lo = *lo * (1 - 2 * S->o->precision);
        if ((rc = step(S, *lo, "bisect", S->steps, &pass, err)) != 0) return rc;
        if (!pass) { /* start over below it */
            *hi = *lo;
            *lo /= 2;
            if ((rc = step(S, *lo, "bracket", S->steps, &pass, err)) != 0) return rc;
            if (!pass) {
                *lo = 0;
                return 0;
            }
        }
        if ((rc = bisect(S, lo, hi, err)) != 0) return rc;
    }
    return 0;
}

int rpx_capacity_search(const rpx_capacity_opts *o, rpx_capacity_run_fn run, void *ctx,
                        json_t **out, rpx_error *err)
{
    search S;
    double lo = 0, hi = 0, tightest = INFINITY;
    char text[600];
    int i, rc = 0, verified = 0;
    json_t *c;
    *out = NULL;
    if (!o || !run || o->slo.n < 1 || !(o->start_rate > 0) || !(o->confidence > 0 && o->confidence < 1))
        return rpx_error_set(err, RPX_EINVAL, "rpx_capacity_search: objectives, a start rate "
                                              "and a confidence in (0, 1) are needed");
    memset(&S, 0, sizeof S);
    S.o = o;
    S.run = run;
    S.ctx = ctx;
    for (i = 0; i < o->slo.n; i++) {
        size_t m = rpx_capacity_min_requests(o->slo.obj[i].q, o->confidence);
        if (m > S.min_requests) S.min_requests = m;
        if (o->slo.obj[i].limit_ms < tightest) tightest = o->slo.obj[i].limit_ms;
    }
    S.tolerance_ms = o->send_tolerance_ms > 0 ? o->send_tolerance_ms
                                              : fmax(RPX_SEND_DELAY_TOLERANCE_NS / 1e6, tightest / 10);
    S.steps = json_array();
    S.verified = json_array();
    if (!S.steps || !S.verified) rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (rc == 0) rc = bracket(&S, &lo, &hi, err);
    if (rc == 0) rc = bisect(&S, &lo, &hi, err);
    if (rc == 0 && lo > 0) rc = verify(&S, &lo, &hi, &verified, err);
    if (rc != 0 || !(c = json_object())) {
        json_decref(S.steps);
        json_decref(S.verified);
        return rc ? rc : rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    sentence(text, sizeof text, o, verified ? lo : 0, hi, verified);
    if (lo > 0 && !verified) sentence(text, sizeof text, o, lo, hi, 0);
    json_object_set_new(c, "rate", verified ? json_real(lo) : json_null());
    json_object_set_new(c, "unit", json_string(o->unit));
    if (verified && hi > 0) {
        json_t *ci = json_array();
        json_array_append_new(ci, json_real(lo));
        json_array_append_new(ci, json_real(hi));
        json_object_set_new(c, "ci", ci);
    } else {
        json_object_set_new(c, "ci", json_null());
    }
    json_object_set_new(c, "ci_means",
                        json_string("the final bracket [highest passing rate, lowest failing "
                                    "rate]: the capacity (the largest rate at which every "
                                    "objective holds) lies in it when both decisions are right, "
                                    "each taken at 95 % (a pass: every objective's upper bound "
                                    "below its limit; a fail: some bound not, or the run invalid)"));
    json_object_set_new(c, "objectives", objectives_json(&o->slo));
    json_object_set_new(c, "verified_runs", S.verified);
    json_object_set_new(c, "search", S.steps);
    json_object_set_new(c, "runs", json_integer(S.runs));
    json_object_set_new(c, "confidence", json_real(o->confidence));
    json_object_set_new(c, "precision", json_real(o->precision));
    json_object_set_new(c, "min_requests", json_integer((json_int_t)S.min_requests));
    json_object_set_new(c, "send_tolerance_ms", json_real(S.tolerance_ms));
    json_object_set_new(c, "sentence", json_string(text));
    *out = c;
    return 0;
}
