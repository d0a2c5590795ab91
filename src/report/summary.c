/* summary.c — owns the text summary of a profile report (rpxprof/summary.h):
 * what `rpxprof run` prints on stderr after a run and what the Python
 * package's Report.summary() returns, one renderer for both. A pure function
 * of the report's JSON; every number through one rule (rpx_format_3g).
 * Library code: nothing printed. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "rpxprof/summary.h"

char *rpx_format_3g(char *buf, size_t cap, double x)
{
    static locale_t c_locale;
    locale_t old;
    double a = fabs(x), r;
    int e;
    if (!buf || cap == 0) return buf;
    if (!isfinite(x)) {
        snprintf(buf, cap, "n/a");
        return buf;
    }
    if (!c_locale) c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    old = c_locale ? uselocale(c_locale) : (locale_t)0;
    if (a == 0) {
        snprintf(buf, cap, "0");
    } else if (a < 1e-9 || a >= 1e15) {
        snprintf(buf, cap, "%.3g", x);
    } else {
        /* round to three significant digits first: 999.7 becomes 1000, and
         * then prints with no decimals */
        e = (int)floor(log10(a));
        r = round(a / pow(10, e - 2)) * pow(10, e - 2);
        e = (int)floor(log10(r) + 1e-12);
        snprintf(buf, cap, "%s%.*f", x < 0 ? "-" : "", e >= 2 ? 0 : 2 - e, r);
    }
    if (old) uselocale(old);
    return buf;
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

char *rpx_format_si(char *buf, size_t cap, double x)
{
    static const char *const prefix[] = {"", " k", " M", " G", " T", " P"};
    int i = 0;
    char n[40];
    while (fabs(x) >= 999.5 && i < 5) {
        x /= 1000;
        i++;
    }
    snprintf(buf, cap, "%s%s", rpx_format_3g(n, sizeof n, x), prefix[i]);
    return buf;
}

/* "  p50   120 ms  95% CI [110, 131] (+-9.17 %)", "  p50   15.0 ms  95% CI
 * [7.49, 64.9] (-50.1 % / +333 %)": the value and its interval in the same
 * unit and the same rule */
static void line_ms(rpx_strbuf *s, const char *label, const json_t *v, const json_t *ci)
{
    char a[40], b[40], c[40], d[40], e[40];
    double x = json_number_value(v);
    if (!json_is_number(v)) {
        rpx__sb_printf(s, "  %-5s n/a\n", label);
        return;
    }
    if (json_is_array(ci) && json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0)) &&
        json_is_number(json_array_get(ci, 1))) {
        double lo = json_number_value(json_array_get(ci, 0)), hi = json_number_value(json_array_get(ci, 1));
        /* how far the interval reaches from the value on each side: one
         * "+-" of the wider side when the sides are within 10 % of each
         * other, else each side apart ("-50.1 % / +333 %") */
        double down = x > 0 ? (x - lo) / x : NAN, up = x > 0 ? (hi - x) / x : NAN;
        double rel = up > down ? up : down, narrow = up > down ? down : up;
        rpx__sb_printf(s, "  %-5s %s ms  95%% CI [%s, %s]", label, rpx_format_3g(a, sizeof a, x),
                       rpx_format_3g(b, sizeof b, lo), rpx_format_3g(c, sizeof c, hi));
        if (!isfinite(rel)) rpx__sb_str(s, "\n");
        else if (rel * 100 < 0.01) rpx__sb_str(s, " (+-<0.01 %)\n");
        else if (narrow >= 0.9 * rel) rpx__sb_printf(s, " (+-%s %%)\n", rpx_format_3g(d, sizeof d, rel * 100));
        else rpx__sb_printf(s, " (-%s %% / +%s %%)\n", rpx_format_3g(d, sizeof d, down * 100),
                            rpx_format_3g(e, sizeof e, up * 100));
    } else {
        rpx__sb_printf(s, "  %-5s %s ms\n", label, rpx_format_3g(a, sizeof a, x));
    }
}

/* The report's `variance` in words (src/report/variance.c): which factor, if
 * any, explains the spread between processes, and what the slowest calls had. */
static void lines_variance(rpx_strbuf *s, const json_t *v, int py)
{
    const json_t *f, *tail = json_object_get(v, "slow_tail");
    const char *named = json_string_value(json_object_get(v, "explained_by"));
    double spread = num(v, "process_p50_ratio");
    char tested[200] = "", a[40], b[40];
    size_t i, len = 0;
    if (!json_is_object(v)) return;
    json_array_foreach(json_object_get(v, "factors"), i, f) {
        const char *name = json_string_value(json_object_get(f, "factor"));
        if (!name) continue;
        if (json_is_true(json_object_get(f, "named")) && named && strcmp(name, named) == 0)
            rpx__sb_printf(s, "  why it varied: %s explains %s %% of the spread between processes "
                              "(their p50s %sx apart; %s)\n",
                           strcmp(name, "cpu") == 0 ? "the CPU" : strcmp(name, "off_cpu") == 0 ? "off-CPU time"
                           : strcmp(name, "page_faults") == 0 ? "page faults"
                           : strcmp(name, "order") == 0 ? "the processes' order" : name,
                           rpx_format_3g(a, sizeof a, num(f, "share") * 100), rpx_format_3g(b, sizeof b, spread),
                           /* Python prints no warnings: say where the advice is kept */
                           py ? "what to do: report[\"variance\"][\"message\"]" : "see the warning above");
        if (json_is_true(json_object_get(f, "tested")) && len < sizeof tested - 32)
            len += (size_t)snprintf(tested + len, sizeof tested - len, "%s%s", len ? ", " : "", name);
    }
    if (!named && isfinite(spread))
        rpx__sb_printf(s, "  why it varied: no factor explains the spread between processes (their "
                          "p50s %sx apart; tested: %s; variance.factors says why the others were not)\n",
                       rpx_format_3g(a, sizeof a, spread), len ? tested : "none");
    if (json_is_true(json_object_get(tail, "tested")) && json_is_string(json_object_get(tail, "message")))
        rpx__sb_printf(s, "  slow tail: %s\n", json_string_value(json_object_get(tail, "message")));
}

/* "  cost: 3.63 G FLOPs (1.81 G MACs), 11.7 M params per call (graph)" */
static void line_cost(rpx_strbuf *s, const json_t *eff)
{
    char a[48], b[48], c[48], d[48];
    double flops = num(eff, "flops"), macs = num(eff, "macs"), params = num(eff, "params"),
           traffic = num(eff, "traffic_bytes_ideal");
    const char *src = json_string_value(json_object_get(eff, "source"));
    if (!json_is_object(eff) || (!isfinite(flops) && !isfinite(macs) && !isfinite(params))) return;
    /* what is known, in this order: the unknown are left out */
    rpx__sb_str(s, "  cost:");
    if (isfinite(flops)) rpx__sb_printf(s, " %s FLOPs", rpx_format_si(a, sizeof a, flops));
    if (isfinite(macs)) rpx__sb_printf(s, isfinite(flops) ? " (%s MACs)" : " %s MACs", rpx_format_si(b, sizeof b, macs));
    if (isfinite(params))
        rpx__sb_printf(s, "%s %s params", isfinite(flops) || isfinite(macs) ? "," : "", rpx_format_si(c, sizeof c, params));
    if (isfinite(traffic)) rpx__sb_printf(s, ", %sB moved (ideal)", rpx_format_si(d, sizeof d, traffic));
    rpx__sb_printf(s, " per call%s%s%s%s\n", src ? " (" : "", src ? src : "", src ? ")" : "",
                   json_is_true(json_object_get(eff, "partial")) ? "; partial: some ops have no formula" : "");
}

/* One line per roofline target: the ideal bound and the achieved fraction. */
static void lines_roofline(rpx_strbuf *s, const json_t *roof)
{
    const char *key;
    const json_t *t;
    char a[40], b[40];
    if (!json_is_object(roof)) return;
    json_object_foreach((json_t *)roof, key, t) {
        const json_t *ideal = json_object_get(t, "ideal");
        const char *neck = json_string_value(json_object_get(ideal, "bottleneck"));
        double bound = num(ideal, "latency_ms"),
               frac = num(json_object_get(t, "achieved_fraction"), "ideal");
        if (!isfinite(bound)) {
            const char *why = json_string_value(json_object_get(t, "reason"));
            rpx__sb_printf(s, "  bound %s: n/a%s%s\n", key, why ? ": " : "", why ? why : "");
            continue;
        }
        rpx__sb_printf(s, "  bound %s: ideal %s ms%s%s%s", key, rpx_format_3g(a, sizeof a, bound),
                       neck ? " (" : "", neck ? neck : "", neck ? "-bound)" : "");
        if (isfinite(frac))
            rpx__sb_printf(s, "; the p50 achieves %s %% of it\n", rpx_format_3g(b, sizeof b, frac * 100));
        else
            rpx__sb_str(s, "\n");
    }
}

/* "  real time at p50: 30 Hz yes (2.86 % of the 33.3 ms budget), ..." */
static void line_budget(rpx_strbuf *s, const json_t *rb)
{
    const json_t *r;
    size_t i;
    char a[40], b[40], c[40];
    if (!json_is_array(json_object_get(rb, "rates")) || json_array_size(json_object_get(rb, "rates")) == 0) return;
    rpx__sb_str(s, "  real time at p50:");
    json_array_foreach(json_object_get(rb, "rates"), i, r) {
        const json_t *ok = json_object_get(r, "realtime");
        rpx__sb_printf(s, "%s %s Hz %s (%s %% of the %s ms budget)", i ? "," : "",
                       rpx_format_3g(a, sizeof a, num(r, "hz")),
                       json_is_true(ok) ? "yes" : json_is_false(ok) ? "no" : "n/a",
                       rpx_format_3g(b, sizeof b, num(r, "beta") * 100),
                       rpx_format_3g(c, sizeof c, num(r, "budget_ms")));
    }
    rpx__sb_str(s, "\n");
}

/* "  audit cache: suspect (repeated/distinct p50 0.0870 [0.0810, 0.0960], threshold 10 %)",
 * and the server's prefix-cache hit rate (docs/audits.md) */
static void lines_audit(rpx_strbuf *s, const json_t *audit, const json_t *sm)
{
    static const char *const names[] = {"cache", "seed"};
    char a[40], b[40], c[40], d[40];
    size_t i;
    for (i = 0; i < 2; i++) {
        const json_t *o = json_object_get(audit, names[i]), *ci = json_object_get(o, "ci");
        const char *v = json_string_value(json_object_get(o, "verdict"));
        if (!v) continue;
        if (!strcmp(v, "not_run")) {
            const char *why = json_string_value(json_object_get(o, "reason"));
            rpx__sb_printf(s, "  audit %s: not run (%s)\n", names[i], why ? why : "no reason given");
        } else if (json_is_array(ci) && json_is_number(json_array_get(ci, 0)) &&
                   json_is_number(json_array_get(ci, 1))) {
            rpx__sb_printf(s, "  audit %s: %s (%s p50 %s [%s, %s], threshold %s %%)\n", names[i], v,
                           i == 0 ? "repeated/distinct" : "other seed/this seed",
                           rpx_format_3g(a, sizeof a, num(o, "ratio")),
                           rpx_format_3g(b, sizeof b, json_number_value(json_array_get(ci, 0))),
                           rpx_format_3g(c, sizeof c, json_number_value(json_array_get(ci, 1))),
                           rpx_format_3g(d, sizeof d, 100 * num(o, "threshold")));
        } else {
            rpx__sb_printf(s, "  audit %s: %s (no interval: too few processes)\n", names[i], v);
        }
    }
    if (json_is_number(json_object_get(sm, "hit_rate")))
        rpx__sb_printf(s, "  server prefix-cache hit rate %s %% over the run\n",
                       rpx_format_3g(a, sizeof a, 100 * num(sm, "hit_rate")));
}

/* --check-outputs: "  outputs: 0 of 983 checked calls differ from the reference (bit-exact)" */
static void line_outputs(rpx_strbuf *s, const json_t *o)
{
    const char *cmp;
    if (!json_is_object(o)) return;
    cmp = json_string_value(json_object_get(o, "comparison"));
    rpx__sb_printf(s, "  outputs: %lld of %lld checked calls differ from the reference (%s)\n",
                   (long long)json_integer_value(json_object_get(o, "mismatched_calls")),
                   (long long)json_integer_value(json_object_get(o, "checked_calls")),
                   cmp && strcmp(cmp, "tolerance") == 0 ? "within --rtol/--atol" : "bit-exact");
}

/* Row indices by time, slowest first (the unattributed row too: it is time). */
static int by_time_desc(const void *x, const void *y)
{
    double a = num(*(json_t *const *)x, "time_ms"), b = num(*(json_t *const *)y, "time_ms");
    if (isnan(a)) a = -1;
    if (isnan(b)) b = -1;
    return (a < b) - (a > b);
}

static void line_row(rpx_strbuf *s, const json_t *r)
{
    char t[40], lo[40], hi[40], sh[40], ac[40];
    const json_t *ci = json_object_get(r, "time_ci_ms");
    const char *op = json_string_value(json_object_get(r, "op_type"));
    rpx__sb_printf(s, "    %-28.60s %8s ms", json_string_value(json_object_get(r, "name")),
                   rpx_format_3g(t, sizeof t, num(r, "time_ms")));
    if (json_is_array(ci))
        rpx__sb_printf(s, " [%s, %s]", rpx_format_3g(lo, sizeof lo, json_number_value(json_array_get(ci, 0))),
                       rpx_format_3g(hi, sizeof hi, json_number_value(json_array_get(ci, 1))));
    rpx__sb_printf(s, "  %s %%", rpx_format_3g(sh, sizeof sh, 100 * num(r, "share")));
    if (json_is_number(json_object_get(r, "achieved")))
        rpx__sb_printf(s, "  at %s of its bound", rpx_format_3g(ac, sizeof ac, num(r, "achieved")));
    else
        rpx__sb_str(s, "  bound n/a");
    rpx__sb_printf(s, "  (%s)\n", op ? op : "no node accounts for it");
}

/* --layers: the sum of rows against the unprofiled p50, the ten slowest rows,
 * the share of the time below 10 % of its bound, the overhead note. */
static void lines_layers(rpx_strbuf *s, const json_t *layers)
{
    const json_t *rows = json_object_get(layers, "rows");
    const char *rt = json_string_value(json_object_get(layers, "runtime"));
    const char *dev = json_string_value(json_object_get(layers, "device"));
    const char *note = json_string_value(json_object_get(layers, "overhead_note"));
    size_t n = json_array_size(rows), i;
    const json_t **order;
    char a[40], b[40], c[40];
    if (!json_is_object(layers)) return;
    rpx__sb_printf(s, "  layers%s%s%s: %lld profiled calls x %lld processes, rows sum to %s ms "
                      "(unprofiled p50 %s ms, overhead %s %%)\n",
                   rt ? " (" : "", rt ? rt : "", rt ? ")" : "",
                   (long long)json_integer_value(json_object_get(layers, "profiled_calls")),
                   (long long)json_integer_value(json_object_get(layers, "processes")),
                   rpx_format_3g(a, sizeof a, num(layers, "total_ms")),
                   rpx_format_3g(b, sizeof b, num(layers, "unprofiled_p50_ms")),
                   rpx_format_3g(c, sizeof c, 100 * num(layers, "overhead")));
    order = n ? malloc(n * sizeof *order) : NULL;
    for (i = 0; order && i < n; i++) order[i] = json_array_get(rows, i);
    if (order) qsort(order, n, sizeof *order, by_time_desc);
    if (n) rpx__sb_printf(s, "  the %sslowest rows (median ms [interval], share, achieved):\n",
                          n > 10 ? "ten " : "");
    for (i = 0; order && i < n && i < 10; i++) line_row(s, order[i]);
    free(order);
    if (json_is_number(json_object_get(layers, "below_10pct_share")))
        rpx__sb_printf(s, "  %s %% of the layers' time runs below 10 %% of its bound%s%s%s\n",
                       rpx_format_3g(a, sizeof a, 100 * num(layers, "below_10pct_share")),
                       dev ? " on the " : "", dev ? dev : "", "");
    if (note) rpx__sb_printf(s, "  layers: %s\n", note);
}

char *rpx_report_summary(const json_t *rep, const rpx_summary_opts *opts)
{
    rpx_strbuf s = {0};
    const json_t *lat = json_object_get(rep, "latency"), *ci = json_object_get(rep, "latency_ci"),
                 *mem = json_object_get(rep, "memory"), *out = json_object_get(lat, "outliers");
    const char *covers = json_string_value(json_object_get(ci, "covers"));
    const char *name = json_string_value(json_object_get(rep, "model_callable"));
    long long calls = json_integer_value(json_object_get(rep, "measured_calls"));
    long long procs = json_integer_value(json_object_get(rep, "processes"));
    long asked = opts ? opts->asked_processes : 1;
    int py = opts && opts->python;
    char a[40];
    if (!json_is_object(rep)) return NULL;
    if (procs < 1) procs = 1;
    rpx__sb_printf(&s, "%s: %lld timed calls in %lld process%s\n", name ? name : "?", calls, procs,
                   procs == 1 ? "" : "es");
    line_ms(&s, "p50", json_object_get(lat, "p50_ms"), json_object_get(ci, "p50_ms"));
    line_ms(&s, "p95", json_object_get(lat, "p95_ms"), json_object_get(ci, "p95_ms"));
    line_ms(&s, "p99", json_object_get(lat, "p99_ms"), json_object_get(ci, "p99_ms"));
    line_ms(&s, "mean", json_object_get(lat, "mean_ms"), json_object_get(ci, "mean_ms"));
    line_ms(&s, "min", json_object_get(lat, "min_ms"), NULL);
    if (covers && strcmp(covers, "within-process") == 0 && asked <= 1)
        rpx__sb_printf(&s, "  (one process: the intervals do not cover run-to-run variation; use "
                           "%s or more)\n", py ? "processes=5" : "--processes 5");
    else if (covers && strcmp(covers, "within-process") == 0)
        rpx__sb_str(&s, "  (only one process ran: the intervals do not cover run-to-run "
                        "variation)\n");
    if (json_is_object(out) &&
        json_integer_value(json_object_get(out, "mild")) + json_integer_value(json_object_get(out, "severe")) > 0)
        rpx__sb_printf(&s, "  outliers: %lld mild, %lld severe (Tukey's fences; kept)\n",
                       (long long)json_integer_value(json_object_get(out, "mild")),
                       (long long)json_integer_value(json_object_get(out, "severe")));
    lines_variance(&s, json_object_get(rep, "variance"), py);
    if (json_is_number(json_object_get(mem, "cpu_inference_peak_mb")))
        rpx__sb_printf(&s, "  inference peak RSS %s MiB\n",
                       rpx_format_3g(a, sizeof a, num(mem, "cpu_inference_peak_mb")));
    line_outputs(&s, json_object_get(rep, "outputs"));
    line_cost(&s, json_object_get(rep, "efficiency"));
    lines_roofline(&s, json_object_get(rep, "roofline"));
    line_budget(&s, json_object_get(rep, "realtime_budget"));
    lines_audit(&s, json_object_get(rep, "audit"), json_object_get(rep, "server_metrics"));
    lines_layers(&s, json_object_get(rep, "layers"));
    if (s.oom || !s.p) {
        free(s.p);
        return NULL;
    }
    return s.p;
}
