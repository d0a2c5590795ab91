/* between_sessions.c — owns compare's between-session rule (docs/statistics.md,
 * "Two reports of different sessions"): two reports of separate runs, even
 * back to back, differ by the machine's drift between sessions as well as by
 * what changed, and their own intervals cover the processes of one session
 * each. The ratio's interval is widened by the between-session spread (from a
 * history, rpx_between_session_spread, or the default allowance measured on
 * this machine kind), the verdicts follow from it, and the within-session
 * numbers are kept beside it, labelled. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare/between_sessions.h"
#include "compare/session_noise.h"
#include "rpxprof/stats.h"

static const char *const names[] = {"p50", "p95", "mean"};

static int ci_of(const json_t *o, const char *key, double *lo, double *hi)
{
    const json_t *ci = json_object_get(o, key);
    if (json_array_size(ci) != 2) return 0;
    *lo = json_number_value(json_array_get(ci, 0));
    *hi = json_number_value(json_array_get(ci, 1));
    return *lo > 0 && *hi > 0 && isfinite(*lo) && isfinite(*hi);
}

int rpx__cmp_between_sessions(json_t *o, const rpx_compare_opts *opts, json_t *warnings)
{
    const json_t *sp = opts->session_spread;
    double sigma = json_number_value(json_object_get(sp, "sigma_between_log")), df, tq, hb, t = opts->threshold;
    double decidable = NAN;
    const char *source = json_string_value(json_object_get(sp, "source"));
    json_t *within = json_object(), *between;
    char how[512], w[1024];
    size_t i;
    int given = json_is_number(json_object_get(sp, "sigma_between_log")) && sigma >= 0 && isfinite(sigma);
    if (!within) return RPX_ENOMEM;
    if (given) {
        df = json_is_integer(json_object_get(sp, "df")) ? (double)json_integer_value(json_object_get(sp, "df")) : 1e6;
        if (!source || !strcmp(source, "none")) source = "series";
        snprintf(how, sizeof how, "%s", json_is_string(json_object_get(sp, "how"))
                                              ? json_string_value(json_object_get(sp, "how"))
                                              : "the spread the caller gave");
    } else {
        sigma = RPX__DEFAULT_SIGMA_BETWEEN_LOG;
        df = RPX__DEFAULT_SIGMA_DF;
        source = "default";
        snprintf(how, sizeof how, "the default allowance: 32 sessions of the packaged demo on a 2-vCPU AMD EPYC KVM "
                 "guest (tests/fixtures/demo-sessions.json), the same code up to 11 %% apart between sessions; the "
                 "95th percentile of the differences between two sessions' levels, over every pair, divided by 1.96 sqrt 2");
    }
    if (!(df >= 1)) df = 1;
    tq = rpx_stats_t_quantile(1 - (1 - opts->confidence) / 2, df);
    hb = tq * sqrt(2.0) * sigma;
    json_object_set(within, "covers", json_object_get(o, "covers"));
    json_object_set_new(within, "sessions", json_string("one session each: these intervals cover the processes of each "
                                                        "report's own session, not the drift between the two sessions"));
    for (i = 0; i < 3; i++) {
        char k[48], kv[48];
        double lo, hi, r;
        snprintf(k, sizeof k, "%s_ratio_ci", names[i]);
        snprintf(kv, sizeof kv, "%s_verdict", names[i]);
        json_object_set(within, k, json_object_get(o, k));
        json_object_set(within, kv, json_object_get(o, kv));
        snprintf(kv, sizeof kv, "%s_ratio", names[i]);
        r = json_number_value(json_object_get(o, kv));
        if (ci_of(o, k, &lo, &hi) && r > 0) {
            double d = log(r), dl = fmax(0, d - log(lo)), du = fmax(0, log(hi) - d);
            double nlo = exp(d - sqrt(dl * dl + hb * hb)), nhi = exp(d + sqrt(du * du + hb * hb));
            json_object_set_new(o, k, json_pack("[ff]", nlo, nhi));
            snprintf(kv, sizeof kv, "%s_verdict", names[i]);
            json_object_set_new(o, kv, json_string(rpx_compare_verdict(nlo, nhi, t)));
            if (i == 0) decidable = exp(log1p(t) + sqrt(dl * dl + hb * hb)) - 1;
        }
    }
    json_object_set(within, "verdict", json_object_get(o, "verdict"));
    json_object_set(o, "verdict", json_object_get(o, "p50_verdict"));
    json_object_set_new(o, "covers", json_string("between-session"));
    between = json_pack("{ss sf sf ss so s[ss]}", "source", source, "sigma_between_log", sigma, "df", df, "how", how,
                        "decidable_change", isfinite(decidable) ? json_real(decidable) : json_null(),
                        "to_decide_smaller",
                        "record sessions in a history (rpxprof run --history PATH) and compare with --history PATH: "
                        "the history's own between-session spread replaces the default allowance as it grows (pooled "
                        "with it until about 30 sessions), and history check --confirm decides a head of a few "
                        "sessions against it",
                        "rpxprof compare --run BASE NEW: both measured interleaved in one session, where the "
                        "drift between sessions falls on both sides alike");
    if (!between) {
        json_decref(within);
        return RPX_ENOMEM;
    }
    json_object_set_new(o, "between_session", between);
    json_object_set_new(o, "within_session", within);
    if (!given) {
        char decided[96];
        if (isfinite(decidable))
            snprintf(decided, sizeof decided, "a change is decided from %.1f %% on", 100 * decidable);
        else /* no p50 interval in one of the reports (too few calls) */
            snprintf(decided, sizeof decided, "the smallest change it decides is not known (no p50 interval)");
        snprintf(w, sizeof w,
                 "the two reports were measured in different sessions: their own intervals cover the processes of one "
                 "session each, not the machine's drift between sessions; with the default allowance for that drift "
                 "(up to 11 %% between sessions of the same code on a 2-vCPU KVM guest) %s; for smaller ones "
                 "record sessions in a history (--history PATH: its own spread replaces the allowance as it grows, "
                 "about 30 sessions) or use rpxprof compare --run",
                 decided);
        json_array_append_new(warnings, json_string(w));
    }
    return 0;
}
