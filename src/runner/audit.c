/* audit.c — owns a run's audits (docs/audits.md): `--audit cache` (MLPerf
 * LoadGen TEST04: the same target measured twice, interleaved by process,
 * every call on sample 0 against calls cycling through the distinct samples,
 * and the paired comparison of compare --run) and `--audit seed` (TEST05: the
 * target measured again with the sample-order/schedule seed + 1). Each audit
 * is two runs measured together by the pair runner runner.c hands it
 * (rpx_runner_run_pair; a unit test hands a stand-in), whose reports are
 * compared in memory by rpx_compare_json (src/compare/), which asks no
 * same-work question (the arms differ in their inputs or their seed on
 * purpose); no file is written. The result is the report's `audit` object;
 * what the user must see goes into warnings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/http_bodies.h"
#include "loader/kinds.h"
#include "rpxprof/comparison.h"
#include "rpxprof/stats.h"
#include "runner/runner_internal.h"

int rpx__audit_parse(const char *text, unsigned *flags)
{
    unsigned f = 0;
    const char *p = text;
    if (!text || !*text) return -1;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n == 5 && strncmp(p, "cache", 5) == 0) f |= RPX__AUDIT_CACHE;
        else if (n == 4 && strncmp(p, "seed", 4) == 0) f |= RPX__AUDIT_SEED;
        else return -1;
        p += n;
        if (*p == ',') p++;
    }
    if (flags) *flags = f;
    return 0;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static double num_at(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* An audit that could not run: {verdict: "not_run", reason} */
static json_t *not_run(const char *reason)
{
    return json_pack("{s:s, s:s}", "verdict", "not_run", "reason", reason);
}

/* The configuration both arms share: the run's, without its own output
 * (the arm's report stays in memory), audits, progress, cost layers or
 * stopping rule, in at least two processes of enough calls each for a p50
 * interval between processes. */
static void arm_config(const rpx_runner_config *c, int k, rpx_runner_config *a)
{
    long need = (long)rpx_stats_quantile_min_calls(0.5, 0.95);
    *a = *c;
    a->audit = NULL;
    a->output = NULL;
    a->no_history = 1; /* an arm is not a session of its own */
    a->progress = 0;
    a->notice = NULL;
    a->target_precision = 0;
    a->cost = NULL;
    a->flops = a->params = NAN;
    a->cpu_probe = 0;
    if (k < 2) k = 2;
    a->processes = k;
    if (a->repeats / k < need) a->repeats = need * k;
}

/* Runs the pair and compares NEW (b, named bn) against BASE (a, named an)
 * with threshold t in memory: the comparison, or NULL and *why. */
static json_t *measure_pair(rpx__run_pair_fn run_pair, rpx__stop_signal_fn stopped,
                            const rpx_runner_config *a, const char *an,
                            const rpx_runner_config *b, const char *bn, double t, char *why,
                            size_t size)
{
    rpx_runner_result ra, rb;
    rpx_error err = {0};
    rpx_compare_opts co = {t, 0.95, 0, NULL, 1}; /* the two arms ran interleaved in one session */
    json_t *cmp = NULL;
    int rc = run_pair(a, b, &ra, &rb, &err);
    /* an arm whose process failed stops the pair before the other arm starts:
     * its failure, not the other's "interrupted before any process", says why */
    int a_ended = ra.report && ra.status != RPX_RUNNER_COMPLETE;
    int b_ended = rb.report && rb.status != RPX_RUNNER_COMPLETE;
    if (stopped && stopped()) {
        snprintf(why, size, "interrupted");
    } else if (rc != 0 && !a_ended && !b_ended) {
        snprintf(why, size, "the audit's runs failed: %s", err.message);
    } else if (rc != 0 || ra.status != RPX_RUNNER_COMPLETE || rb.status != RPX_RUNNER_COMPLETE) {
        snprintf(why, size, "the audit's runs did not complete: %s",
                 a_ended || (!b_ended && ra.status != RPX_RUNNER_COMPLETE) ? ra.error : rb.error);
    } else if (rpx_compare_json(ra.report, an, rb.report, bn, &co, &cmp, &err) != 0) {
        snprintf(why, size, "the audit's runs could not be compared: %s", err.message);
        cmp = NULL;
    }
    rpx_runner_result_free(&ra);
    rpx_runner_result_free(&rb);
    return cmp;
}

/* The fields both audits share, from a comparison NEW/BASE */
static void fill_common(json_t *o, const json_t *cmp, const rpx_runner_config *arm, double t)
{
    const json_t *bs = json_object_get(cmp, "base_stats"), *ns = json_object_get(cmp, "new_stats");
    json_object_set_new(o, "ratio", num_or_null(num_at(cmp, "p50_ratio")));
    json_object_set(o, "ci", json_object_get(cmp, "p50_ratio_ci"));
    json_object_set_new(o, "confidence", json_real(0.95));
    json_object_set_new(o, "threshold", json_real(t));
    json_object_set(o, "p_value", json_object_get(cmp, "p_value"));
    json_object_set_new(o, "processes", json_integer(arm->processes));
    json_object_set_new(o, "calls", json_integer((json_int_t)arm->repeats));
    (void)bs;
    (void)ns;
}

/* The distinct samples of a local run: the expanded paths (*n 0: none) */
static int sample_paths(const rpx_runner_config *c, char ***paths, size_t *n, rpx_error *err)
{
    *paths = NULL;
    *n = 0;
    if (c->n_sample_files > 0) return rpx__samples_paths(c->sample_files, c->n_sample_files, paths, n, err);
    if (c->inputs) return rpx__samples_paths(&c->inputs, 1, paths, n, err);
    return 0;
}

static void free_paths(char **p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) free(p[i]);
    free(p);
}

static json_t *audit_cache(const rpx_runner_config *c, int k, rpx__run_pair_fn run_pair,
                           rpx__stop_signal_fn stopped,
                           json_t *warnings)
{
    char why[1400], w[2400], nbuf[32], made[400];
    const char *nfield = NULL;
    int nprefix = 0;
    rpx_runner_config rep, dis;
    char **paths = NULL;
    size_t n = 0;
    rpx_error err = {0};
    json_t *cmp, *o;
    const char *verdict;
    double lo, hi, t = c->audit_threshold;
    const int requests = rpx__kind_has(rpx__kind_of_spec(c->model), RPX_KIND_REQUESTS);
    if (requests) {
        n = rpx_http_distinct_bodies(&c->target);
        if (c->target.nonce_field)
            snprintf(made, sizeof made, "--nonce %s: a unique value in each body", c->target.nonce_field);
        else
            snprintf(made, sizeof made, "--prompts: the run's distinct prompts");
        if (n < 2 && !c->target.body_template && !c->target.prompts_path) {
            /* a fixed body: the distinct arm puts a unique value in each */
            if (rpx__bodies_fixed_nonce(&c->target, &nfield, &nprefix, made, sizeof made, why,
                                        sizeof why) == 0) {
                n = SIZE_MAX;
            } else {
                snprintf(w, sizeof w, "--audit cache cannot run: every request sends the same body "
                         "and %s (docs/audits.md)", why);
                json_array_append_new(warnings, json_string(w));
                return not_run(why);
            }
        }
        if (n < 2) {
            snprintf(w, sizeof w, "--audit cache cannot run: every request sends the same body, so "
                     "there are no distinct inputs to compare with; give --body-template FILE "
                     "--prompts FILE.jsonl (distinct prompts) or --nonce FIELD (docs/audits.md)");
            json_array_append_new(warnings, json_string(w));
            return not_run("one distinct body: give --body-template with --prompts, or --nonce");
        }
    } else {
        if (sample_paths(c, &paths, &n, &err) != 0) return not_run(err.message);
        if (n < 2) {
            free_paths(paths, n);
            snprintf(w, sizeof w, "--audit cache cannot run: the run has one distinct sample, so "
                     "there are no distinct inputs to compare with; make some with 'rpxprof "
                     "inputs make DIR --samples N NAME=SHAPE:DTYPE=random' and give --inputs DIR "
                     "(docs/audits.md)");
            json_array_append_new(warnings, json_string(w));
            return not_run("one distinct sample: give --inputs a folder of samples (rpxprof "
                           "inputs make DIR --samples N)");
        }
    }
    arm_config(c, k, &dis);
    arm_config(c, k, &rep);
    if (requests) {
        rep.target.body_repeat = 1; /* the first body, every request */
        if (nfield) { /* the fixed body: the repeated arm sends it as it is */
            dis.target.nonce_field = nfield;
            dis.target.nonce_prefix = nprefix;
        }
    } else {
        rep.sample_files = (const char *const *)paths;
        rep.n_sample_files = 1;
        dis.sample_files = (const char *const *)paths;
        dis.n_sample_files = n;
    }
    cmp = measure_pair(run_pair, stopped, &dis, "the distinct-inputs arm", &rep,
                       "the repeated-input arm", t, why,
                       sizeof why);
    free_paths(paths, requests ? 0 : n);
    if (!cmp) {
        json_array_append_new(warnings, json_pack("s+", "--audit cache: ", why));
        return not_run(why);
    }
    o = json_object();
    {
        const json_t *ci = json_object_get(cmp, "p50_ratio_ci");
        lo = json_is_array(ci) ? json_number_value(json_array_get(ci, 0)) : NAN;
        hi = json_is_array(ci) ? json_number_value(json_array_get(ci, 1)) : NAN;
    }
    verdict = !isfinite(lo) || !isfinite(hi) ? "inconclusive"
            : hi < 1 - t                     ? "suspect"
            : lo >= 1 - t                    ? "pass"
                                             : "inconclusive";
    json_object_set_new(o, "verdict", json_string(verdict));
    json_object_set_new(o, "test", json_string("MLPerf LoadGen TEST04"));
    json_object_set_new(o, "compares", json_string("repeated/distinct p50"));
    fill_common(o, cmp, &dis, t);
    json_object_set_new(o, "repeated_p50_ms", num_or_null(num_at(json_object_get(cmp, "new_stats"), "p50_ms")));
    json_object_set_new(o, "distinct_p50_ms", num_or_null(num_at(json_object_get(cmp, "base_stats"), "p50_ms")));
    /* --nonce: every body unique (null: as many as were sent) */
    json_object_set_new(o, "distinct_inputs", n == SIZE_MAX ? json_null() : json_integer((json_int_t)n));
    json_object_set_new(o, "distinct_made_by", requests ? json_string(made) : json_string("the run's samples"));
    json_object_set_new(o, "reason", json_null());
    if (n == SIZE_MAX) snprintf(nbuf, sizeof nbuf, "as many");
    else snprintf(nbuf, sizeof nbuf, "%zu", n);
    if (strcmp(verdict, "suspect") == 0 && nfield) { /* the run itself sent one body */
        snprintf(w, sizeof w,
                 "--audit cache: suspect: the same body every call took p50 %.4g ms, distinct "
                 "bodies (%s) %.4g ms (repeated/distinct %.3g, 95%% interval [%.3g, %.3g], more "
                 "than %g%% faster): the server answers a repeated body faster (a prefix or "
                 "response cache), and this run sent the same --body every call, so its numbers "
                 "measure that cache, not the model; send distinct prompts (--body-template FILE "
                 "--prompts FILE.jsonl, at least as many as calls) or turn the server's cache off",
                 num_at(o, "repeated_p50_ms"), made, num_at(o, "distinct_p50_ms"),
                 num_at(o, "ratio"), lo, hi, 100 * t);
        json_array_append_new(warnings, json_string(w));
    } else if (strcmp(verdict, "suspect") == 0) {
        snprintf(w, sizeof w,
                 "--audit cache: suspect: the same input every call took p50 %.4g ms, distinct "
                 "inputs %.4g ms (repeated/distinct %.3g, 95%% interval [%.3g, %.3g], more than "
                 "%g%% faster): the target answers a repeated input faster, so a run on one input "
                 "measures a cache (a memoised answer, a server's prefix or response cache, a "
                 "data-dependent fast path), not the model; this run cycled through %s distinct "
                 "inputs, so its own numbers hold where no input came back while cached (give at "
                 "least as many distinct inputs as calls: inputs make --samples N, --prompts; "
                 "--nonce defeats a cache of whole bodies only)",
                 num_at(o, "repeated_p50_ms"), num_at(o, "distinct_p50_ms"), num_at(o, "ratio"), lo,
                 hi, 100 * t, nbuf);
        json_array_append_new(warnings, json_string(w));
    }
    json_decref(cmp);
    return o;
}

static json_t *audit_seed(const rpx_runner_config *c, int k, rpx__run_pair_fn run_pair,
                          rpx__stop_signal_fn stopped,
                          json_t *warnings)
{
    char why[1400], w[2400];
    rpx_runner_config a, b;
    char **paths = NULL;
    size_t n = 0;
    rpx_error err = {0};
    json_t *cmp, *o;
    const char *verdict;
    const json_t *bci;
    double t = c->audit_seed_threshold, p_new;
    const int requests = rpx__kind_has(rpx__kind_of_spec(c->model), RPX_KIND_REQUESTS);
    int depends;
    if (requests) {
        depends = c->target.load_poisson || rpx_http_distinct_bodies(&c->target) > 1;
    } else {
        if (sample_paths(c, &paths, &n, &err) != 0) return not_run(err.message);
        free_paths(paths, n);
        depends = n > 1;
    }
    if (!depends) {
        snprintf(w, sizeof w, "--audit seed cannot run: nothing in this run depends on a seed "
                 "(one sample or body, no --arrivals poisson); it applies to runs that cycle "
                 "through samples or bodies, or with Poisson arrivals (docs/audits.md)");
        json_array_append_new(warnings, json_string(w));
        return not_run("nothing in the run depends on a seed (one sample or body, no --arrivals "
                       "poisson)");
    }
    arm_config(c, k, &a);
    arm_config(c, k, &b);
    b.target.load_seed = c->target.load_seed + 1;
    /* a local run: the cycle through the samples starts one later; HTTP: the
     * bodies go on after the other arm's (a server's cache sees none twice) */
    b.sample_shift = requests ? a.sample_shift + a.repeats + (long)a.processes * a.warmup
                          : c->sample_shift + 1;
    cmp = measure_pair(run_pair, stopped, &a, "the run's seed arm", &b, "the seed + 1 arm", t,
                       why, sizeof why);
    if (!cmp) {
        json_array_append_new(warnings, json_pack("s+", "--audit seed: ", why));
        return not_run(why);
    }
    o = json_object();
    verdict = json_string_value(json_object_get(cmp, "verdict"));
    verdict = !verdict || !strcmp(verdict, "inconclusive") ? "inconclusive"
            : !strcmp(verdict, "same")                     ? "pass"
                                                           : "suspect";
    json_object_set_new(o, "verdict", json_string(verdict));
    json_object_set_new(o, "test", json_string("MLPerf LoadGen TEST05"));
    json_object_set_new(o, "compares", json_string("p50 with seed + 1 / p50 with the run's seed"));
    fill_common(o, cmp, &a, t);
    bci = json_object_get(json_object_get(cmp, "base_stats"), "p50_ms_ci");
    p_new = num_at(json_object_get(cmp, "new_stats"), "p50_ms");
    json_object_set_new(o, "seed_p50_ms", num_or_null(num_at(json_object_get(cmp, "base_stats"), "p50_ms")));
    json_object_set_new(o, "other_seed_p50_ms", num_or_null(p_new));
    json_object_set_new(o, "moved_beyond_interval",
                        json_is_array(bci) && isfinite(p_new)
                            ? json_boolean(p_new < json_number_value(json_array_get(bci, 0)) ||
                                           p_new > json_number_value(json_array_get(bci, 1)))
                            : json_null());
    json_object_set_new(o, "reason", json_null());
    if (strcmp(verdict, "suspect") == 0) {
        snprintf(w, sizeof w,
                 "--audit seed: suspect: with another sample-order/schedule seed the p50 moved by "
                 "%+.1f%% (ratio %.3f, beyond +-%g%%): the result holds for one schedule or one "
                 "sample order only; report it with the seed, or measure longer (more --repeats, "
                 "more samples)",
                 100 * (num_at(o, "ratio") - 1), num_at(o, "ratio"), 100 * t);
        json_array_append_new(warnings, json_string(w));
    }
    json_decref(cmp);
    return o;
}

int rpx__audit_run(const rpx_runner_config *c, unsigned f, int processes,
                   rpx__run_pair_fn run_pair, rpx__stop_signal_fn stopped, json_t **audit,
                   json_t *warnings, rpx_error *err)
{
    json_t *o;
    (void)err;
    *audit = NULL;
    if (!f) return 0;
    o = json_object();
    if (f & RPX__AUDIT_CACHE)
        json_object_set_new(o, "cache", audit_cache(c, processes, run_pair, stopped, warnings));
    if (f & RPX__AUDIT_SEED) /* a signal during the first audit: the second does not start */
        json_object_set_new(o, "seed", stopped && stopped()
                                            ? not_run("interrupted")
                                            : audit_seed(c, processes, run_pair, stopped, warnings));
    *audit = o;
    return 0;
}
