/* html_run.c — owns the run view of the HTML report (docs/report.md, "The
 * HTML report"): the headline, the status and warnings, then the page as an
 * answer, top-down: what was measured, how fast, how sure, why it varied,
 * what to do; then memory, cost and roofline, the layers (html_layers.c),
 * HTTP, pacing, the system card
 * and the run's settings. Each section opens with one sentence that says its
 * answer; every number is the report's, by the summary's rule. html.c makes
 * the page around it, html_fig.c draws the figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "loader/kinds.h"

#define put rpx__sb_printf
#define jstr rpx__h_jstr

static const char *kind_words(const char *k)
{
    const rpx_kind *row = rpx__kind_find(k);
    if (!k) return "a target of unknown kind";
    return row ? row->words : k;
}

static void headline(hout *o, const json_t *r, const char *id)
{
    const json_t *lat = json_object_get(r, "latency"), *ci = json_object_get(r, "latency_ci");
    const json_t *p50 = json_object_get(ci, "p50_ms"), *card = json_object_get(r, "system_card");
    const char *name = jstr(r, "model_name") ? jstr(r, "model_name") : jstr(r, "model_callable");
    const char *gpu = jstr(card, "gpu_name"), *cpu = jstr(card, "cpu_name"), *unit = jstr(r, "unit");
    char b1[40], b2[40];
    put(o, "<p class=\"headline\" id=\"%s-headline\"><b>", id);
    rpx__h_esc(o, name);
    put(o, "</b>");
    if (jstr(r, "task")) { put(o, " (task "); rpx__h_esc(o, jstr(r, "task")); put(o, ")"); }
    put(o, ", ");
    rpx__h_esc(o, kind_words(jstr(r, "target_kind"))); /* an unknown kind is the file's text */
    put(o, ", ran on ");
    rpx__h_esc(o, jstr(r, "device") ? jstr(r, "device") : "an unknown device");
    if (gpu) { put(o, " ("); rpx__h_esc(o, gpu); put(o, ")"); }
    else if (cpu) { put(o, " ("); rpx__h_esc(o, cpu); put(o, ")"); }
    put(o, " at precision ");
    rpx__h_esc(o, jstr(r, "precision") ? jstr(r, "precision") : "unspecified");
    put(o, ": <b>p50 <span class=\"p50\" data-ms=\"");
    rpx__h_put_exact(o, json_object_get(lat, "p50_ms"));
    put(o, "\" title=\"");
    rpx__h_put_exact(o, json_object_get(lat, "p50_ms"));
    put(o, "\">%s</span> ms</b> per ", rpx__h_num3(b1, sizeof b1, rpx__h_jnum(json_object_get(lat, "p50_ms"))));
    rpx__h_esc(o, unit ? unit : "call");
    if (json_array_size(p50) == 2)
        put(o, ", 95 %% interval %s to %s ms (%s)", rpx__h_num3(b1, sizeof b1, rpx__h_jnum(json_array_get(p50, 0))),
            rpx__h_num3(b2, sizeof b2, rpx__h_jnum(json_array_get(p50, 1))),
            jstr(ci, "covers") && !strcmp(jstr(ci, "covers"), "between-process") ? "between processes" : "within one process");
    else if (json_is_object(ci)) {
        const char *why = jstr(json_object_get(ci, "null_reasons"), "p50_ms");
        put(o, ", no interval");
        if (why) { put(o, " ("); rpx__h_esc(o, why); put(o, ")"); }
    }
    put(o, "; p95 ");
    rpx__h_put_num(o, json_object_get(lat, "p95_ms"));
    put(o, " ms, p99 ");
    rpx__h_put_num(o, json_object_get(lat, "p99_ms"));
    put(o, " ms; ");
    rpx__h_put_num(o, json_object_get(r, "measured_calls"));
    put(o, " timed calls in ");
    rpx__h_put_num(o, json_object_get(r, "processes"));
    put(o, " process%s.</p>\n", rpx__h_jnum(json_object_get(r, "processes")) == 1 ? "" : "es");
}

/* Status, failure and warnings: first, where they cannot be missed (the
 * notes say what to do: their own section). */
static void run_alerts(hout *o, const json_t *r)
{
    const char *st = jstr(r, "status");
    const json_t *card = json_object_get(r, "system_card"), *trend;
    const char *var = jstr(json_object_get(r, "variance"), "message");
    size_t i;
    for (i = 0; var && i < json_array_size(json_object_get(r, "notes")); i++)
        if (json_is_string(json_array_get(json_object_get(r, "notes"), i)) &&
            strstr(json_string_value(json_array_get(json_object_get(r, "notes"), i)), var))
            var = NULL; /* the notes say it already */
    if (st && strcmp(st, "complete")) {
        put(o, "<div class=\"alert error\" role=\"alert\"><b>Status: ");
        rpx__h_esc(o, st);
        put(o, "</b>");
        if (jstr(r, "error")) { put(o, ": "); rpx__h_esc(o, jstr(r, "error")); }
        if (json_is_object(json_object_get(r, "failure"))) {
            put(o, "<br>failure: ");
            rpx__h_put_value(o, json_object_get(r, "failure"));
        }
        put(o, "</div>\n");
    }
    trend = json_object_get(json_object_get(r, "memory"), "cpu_rss_trend");
    if (json_array_size(json_object_get(card, "warnings")) || json_is_true(json_object_get(trend, "leak_suspected")) || var) {
        put(o, "<div class=\"alert\" role=\"note\"><b>Warnings</b><ul>");
        rpx__h_list_items(o, json_object_get(card, "warnings"), "warning");
        if (json_is_true(json_object_get(trend, "leak_suspected")))
            put(o, "<li class=\"warning\">memory: the RSS grew during the run (cpu_rss_trend.leak_suspected)</li>");
        if (var) { put(o, "<li class=\"warning\">why it varied: "); rpx__h_esc(o, var); put(o, "</li>"); }
        put(o, "</ul></div>\n");
    }
}

/* x as a percentage by the rule ("9.27"), n/a when it is not a number. */
static const char *pct(char *b, size_t n, double x)
{
    return rpx__h_num3(b, n, 100 * x);
}

/* Why it varied: the variance's message, or the share between processes
 * and that no factor explains it; the factors, the slow tail; every call. */
static void why_section(hout *o, const json_t *r, const rpx_h_run *run, const char *id)
{
    static const char *const keys[] = {"factor", "tested", "measure", "share", "ratio", "p_value", "p_adjusted", "named", "why"};
    static const char *const labels[] = {"factor", "tested", "measure", "share", "ratio", "p-value", "p-value (Holm)", "named", "why"};
    const json_t *v = json_object_get(r, "variance");
    char b[40];
    put(o, "<h3 id=\"%s-why\">Why it varied</h3>\n<p class=\"answer\">", id);
    if (!json_is_object(v)) put(o, "The report holds no analysis of why the calls varied.");
    else if (jstr(v, "message")) rpx__h_esc(o, jstr(v, "message"));
    else {
        if (jstr(v, "explained_by")) {
            put(o, "The variation is explained by ");
            rpx__h_esc(o, jstr(v, "explained_by"));
        } else put(o, "No factor explains the variation");
        put(o, ": %s %% of it lies between processes (their p50s are ",
            pct(b, sizeof b, rpx__h_jnum(json_object_get(v, "between_process_share"))));
        rpx__h_put_num(o, json_object_get(v, "process_p50_ratio"));
        put(o, "x apart), the rest among each process's own calls.");
    }
    put(o, "</p>\n");
    if (json_array_size(json_object_get(v, "factors"))) {
        put(o, "<div class=\"wide\">");
        rpx__h_rows_table(o, json_object_get(v, "factors"), keys, labels, sizeof keys / sizeof *keys);
        put(o, "</div>");
    }
    if (jstr(json_object_get(v, "slow_tail"), "message")) {
        put(o, "<p>Slow tail: ");
        rpx__h_esc(o, jstr(json_object_get(v, "slow_tail"), "message"));
        put(o, "</p>\n");
    }
    if (jstr(v, "rule")) { put(o, "<p class=\"muted\">"); rpx__h_esc(o, jstr(v, "rule")); put(o, "</p>"); }
    put(o, "<h4>Every call</h4>\n");
    rpx__h_fig_timeline(o, run, id);
    rpx__h_fig_cpus(o, run, id);
}

static void run_http(hout *o, const json_t *r, const char *id)
{
    const json_t *http = json_object_get(r, "http"), *ph = json_object_get(http, "phases_ms"), *st;
    const char *labels[8];
    const json_t *stats[8];
    size_t n = 0;
    const char *k;
    json_t *v;
    char fid[96];
    if (!json_is_object(http)) return;
    put(o, "<h3>HTTP</h3>\n");
    json_object_foreach((json_t *)ph, k, v) {
        if (n < 8 && json_is_object(v)) { labels[n] = k; stats[n++] = v; }
    }
    snprintf(fid, sizeof fid, "%s-phases", id);
    if (n) rpx__h_fig_stat_rows(o, labels, stats, n, fid, "HTTP phases of the successful timed calls (http.phases_ms)");
    st = json_object_get(http, "streaming");
    if (json_is_object(st)) {
        static const char *const sk[] = {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"};
        size_t j;
        n = 0;
        for (j = 0; j < 4; j++)
            if (json_is_object(json_object_get(st, sk[j]))) { labels[n] = sk[j]; stats[n++] = json_object_get(st, sk[j]); }
        snprintf(fid, sizeof fid, "%s-stream", id);
        if (n) rpx__h_fig_stat_rows(o, labels, stats, n, fid, "Streamed responses: TTFT, ITL, TPOT (http.streaming)");
    }
    if (json_is_object(json_object_get(http, "load"))) {
        json_t *load = json_deep_copy(json_object_get(http, "load"));
        json_object_del(load, "schedule_ms");
        put(o, "<h3>Open-loop load</h3><p>The per-call figure above draws each request at its intended send time.</p>");
        rpx__h_kv_table(o, load, NULL);
        json_decref(load);
    }
    {
        json_t *rest = json_deep_copy(http);
        json_object_del(rest, "phases_ms");
        json_object_del(rest, "streaming");
        json_object_del(rest, "load");
        put(o, "<details><summary>HTTP request and counts</summary>");
        rpx__h_kv_table(o, rest, NULL);
        put(o, "</details>\n");
        json_decref(rest);
    }
}

/* The memory section in words: each key of the report's `memory` that the
 * page knows as a sentence with its unit, the others by their key. */
static void memory_table(hout *o, const json_t *mem)
{
    static const char *const words[][3] = {
        {"cpu_inference_peak_mb", "peak resident set during the timed calls", "MiB"},
        {"cpu_process_lifetime_peak_mb", "peak resident set over the process's life (weights and setup included)", "MiB"},
        {"cuda_peak_allocated_mb_by_visible_device", "CUDA peak allocated, by visible device", "MiB"},
        {"cuda_peak_method", "how the CUDA peak was read", ""},
        {"cuda_process_peak_mb_by_visible_device", "the process's CUDA peak, by visible device", "MiB"},
        {"cuda_process_peak_method", "how the process's CUDA peak was read", ""},
        {"cpu_rss_trend.readings", "leak check: resident-set readings during the timed calls", ""},
        {"cpu_rss_trend.every_calls", "leak check: read every", "calls"},
        {"cpu_rss_trend.first_quarter_mb", "leak check: resident set over the first quarter of the calls", "MiB"},
        {"cpu_rss_trend.last_quarter_mb", "leak check: resident set over the last quarter of the calls", "MiB"},
        {"cpu_rss_trend.growth_kib_per_call", "leak check: growth per call", "KiB"},
        {"cpu_rss_trend.detectable_kib_per_call", "leak check: the smallest growth per call it can detect", "KiB"},
        {"cpu_rss_trend.leak_suspected", "leak check: a leak suspected", ""},
        {"cpu_rss_trend.reason", "leak check: why it did not decide", ""},
    };
    const char *k, *k2;
    json_t *v, *v2;
    put(o, "<table class=\"kv memory\"><tbody>");
    json_object_foreach((json_t *)mem, k, v) {
        int sub = json_is_object(v) && (!strcmp(k, "cpu_rss_trend") || !strcmp(k, "unavailable"));
        json_object_foreach(sub ? v : NULL, k2, v2) {
            char key[200];
            size_t j;
            const char *label = NULL, *unit = "";
            snprintf(key, sizeof key, "%s.%s", k, k2);
            for (j = 0; j < sizeof words / sizeof *words; j++)
                if (!strcmp(words[j][0], key)) label = words[j][1], unit = words[j][2];
            put(o, "<tr><th>");
            if (!strcmp(k, "unavailable")) { put(o, "not measured: "); rpx__h_esc(o, k2); }
            else rpx__h_esc(o, label ? label : key);
            put(o, "</th><td>");
            rpx__h_put_value(o, v2);
            if (*unit && json_is_number(v2)) put(o, " %s", rpx__h_jnum(v2) == 1 && !strcmp(unit, "calls") ? "call" : unit);
            put(o, "</td></tr>\n");
        }
        if (!sub) {
            size_t j;
            const char *label = NULL, *unit = "";
            for (j = 0; j < sizeof words / sizeof *words; j++)
                if (!strcmp(words[j][0], k)) label = words[j][1], unit = words[j][2];
            put(o, "<tr><th>");
            rpx__h_esc(o, label ? label : k);
            put(o, "</th><td>");
            if (json_is_object(v) && json_object_size(v) == 0) put(o, "<span class=\"na\">n/a</span>");
            else rpx__h_put_value(o, v);
            if (*unit && json_is_number(v)) put(o, " %s", unit);
            put(o, "</td></tr>\n");
        }
    }
    put(o, "</tbody></table>\n");
}

/* No cost given: the efficiency holds no FLOPs, MACs or parameters. */
static int has_cost(const json_t *eff)
{
    return json_is_number(json_object_get(eff, "flops")) || json_is_number(json_object_get(eff, "macs")) ||
           json_is_number(json_object_get(eff, "params"));
}

static void plural(hout *o, const json_t *n, const char *one, const char *many)
{
    rpx__h_put_num(o, n);
    put(o, " %s", rpx__h_jnum(n) == 1 ? one : many);
}

/* What was measured: the calls, the target, the inputs, the processes and
 * their placement, the wall time; the settings behind it, closed. */
static void what_section(hout *o, const json_t *r, const char *id)
{
    static const char *const keep[] = {"schema", "created_utc", "model_callable", "target_kind", "timing_scope", "device",
                                       "precision", "unit", "warmup_calls", "measured_calls", "failed_calls", "inputs_file",
                                       "inputs_sha256", "wall_time_ms", "isolated", "processes", "timer", "inputs",
                                       "placement", "stopping", "metadata", "tool"};
    const char *policy = jstr(json_object_get(r, "placement"), "policy");
    const char *name = jstr(r, "model_name") ? jstr(r, "model_name") : jstr(r, "model_callable");
    json_t *id_ = json_object();
    char b[40];
    size_t j;
    put(o, "<h3 id=\"%s-what\">What was measured</h3>\n<p class=\"answer\">", id);
    plural(o, json_object_get(r, "measured_calls"), "timed call", "timed calls");
    put(o, " of <b>");
    rpx__h_esc(o, name);
    put(o, "</b> (one sample: one ");
    rpx__h_esc(o, jstr(r, "unit") ? jstr(r, "unit") : "call");
    put(o, "), after ");
    plural(o, json_object_get(r, "warmup_calls"), "warmup call", "warmup calls");
    put(o, ", with inputs ");
    rpx__h_inputs_words(o, r);
    put(o, ", in ");
    plural(o, json_object_get(r, "processes"), "process", "processes");
    if (policy && !strcmp(policy, "pinned")) put(o, " pinned to their CPUs");
    else if (policy) put(o, " placed by the scheduler (not pinned)");
    if (json_is_number(json_object_get(r, "wall_time_ms")))
        put(o, "; the run took %s s", rpx__h_num3(b, sizeof b, rpx__h_jnum(json_object_get(r, "wall_time_ms")) / 1e3));
    put(o, ".</p>\n");
    for (j = 0; j < sizeof keep / sizeof *keep; j++)
        if (json_object_get(r, keep[j])) json_object_set(id_, keep[j], json_object_get(r, keep[j]));
    put(o, "<details><summary>Run settings, inputs, timer, placement</summary><div class=\"wide\">");
    rpx__h_kv_table(o, id_, NULL);
    put(o, "</div></details>\n");
    json_decref(id_);
}

/* The real-time budget: the throughput at the p50 in one sentence, then
 * each rate's budget and the share of it the p50 takes. */
static void realtime(hout *o, const json_t *r, const json_t *rt)
{
    const json_t *rates = json_object_get(rt, "rates"), *x;
    size_t i;
    char b[40];
    put(o, "<h4>Real-time budget</h4>\n<p>At its p50 it runs ");
    rpx__h_put_num(o, json_object_get(rt, "throughput_per_s"));
    put(o, " ");
    rpx__h_esc(o, jstr(r, "unit") ? jstr(r, "unit") : "call");
    put(o, "s a second, one at a time");
    if (json_is_number(json_object_get(rt, "per_frame_ms"))) {
        put(o, "; ");
        rpx__h_put_num(o, json_object_get(rt, "per_frame_ms"));
        put(o, " ms a frame (");
        rpx__h_put_num(o, json_object_get(rt, "frames_per_s"));
        put(o, " frames a second)");
    }
    put(o, ".</p>\n<table class=\"sortable realtime\"><thead><tr><th>rate (Hz)</th><th>budget (ms)</th>"
           "<th>the p50 takes</th><th>in real time</th></tr></thead><tbody>");
    json_array_foreach(rates, i, x) {
        put(o, "<tr><td>");
        rpx__h_put_num(o, json_object_get(x, "hz"));
        put(o, "</td><td>");
        rpx__h_put_num(o, json_object_get(x, "budget_ms"));
        put(o, "</td><td>%s %%</td><td>", pct(b, sizeof b, rpx__h_jnum(json_object_get(x, "beta"))));
        rpx__h_put_value(o, json_object_get(x, "realtime"));
        put(o, "</td></tr>\n");
    }
    put(o, "</tbody></table>\n");
}

/* How fast: the percentiles in one sentence, the distribution, the table;
 * the real-time budget. */
static void fast_section(hout *o, const json_t *r, const rpx_h_run *run, const char *id)
{
    static const char *const lk[] = {"p50_ms", "p95_ms", "p99_ms", "mean_ms", "min_ms", "max_ms", "std_ms"};
    const json_t *lat = json_object_get(r, "latency"), *ci = json_object_get(r, "latency_ci");
    const json_t *rt = json_object_get(r, "realtime_budget");
    size_t j;
    put(o, "<h3 id=\"%s-fast\">How fast</h3>\n<p class=\"answer\">", id);
    if (!run->n) put(o, "No timed call completed: nothing says how fast.");
    else {
        put(o, "Half the timed calls took ");
        rpx__h_put_num(o, json_object_get(lat, "p50_ms"));
        put(o, " ms or less per ");
        rpx__h_esc(o, jstr(r, "unit") ? jstr(r, "unit") : "call");
        put(o, ", 95 %% took ");
        rpx__h_put_num(o, json_object_get(lat, "p95_ms"));
        put(o, " ms or less and 99 %% ");
        rpx__h_put_num(o, json_object_get(lat, "p99_ms"));
        put(o, " ms or less; the fastest took ");
        rpx__h_put_num(o, json_object_get(lat, "min_ms"));
        put(o, " ms, the slowest ");
        rpx__h_put_num(o, json_object_get(lat, "max_ms"));
        put(o, " ms.");
    }
    put(o, "</p>\n");
    rpx__h_fig_distribution(o, run, id);
    put(o, "<table class=\"stats\"><thead><tr><th>statistic</th><th>ms</th><th>95 %% interval (ms)</th></tr></thead><tbody>");
    for (j = 0; j < sizeof lk / sizeof *lk; j++) {
        const json_t *iv = json_object_get(ci, lk[j]);
        put(o, "<tr><th>%.*s</th><td>", (int)(strlen(lk[j]) - 3), lk[j]);
        rpx__h_put_value(o, json_object_get(lat, lk[j]));
        put(o, "</td><td>");
        if (json_array_size(iv) == 2) {
            rpx__h_put_num(o, json_array_get(iv, 0));
            put(o, " to ");
            rpx__h_put_num(o, json_array_get(iv, 1));
        } else if (json_is_object(ci) && jstr(json_object_get(ci, "null_reasons"), lk[j])) {
            put(o, "<span class=\"na\">n/a: ");
            rpx__h_esc(o, jstr(json_object_get(ci, "null_reasons"), lk[j]));
            put(o, "</span>");
        } else put(o, "<span class=\"na\">n/a</span>");
        put(o, "</td></tr>");
    }
    put(o, "</tbody></table>\n");
    if (json_is_object(rt)) realtime(o, r, rt);
}

/* How sure: the p50's interval in words (each side in %) and what it
 * covers, or why there is none; what stopped the run; the method behind
 * it; the processes side by side. */
static void sure_section(hout *o, const json_t *r, const rpx_h_run *run, const char *id)
{
    const json_t *ci = json_object_get(r, "latency_ci"), *iv = rpx__h_interval(r, "p50_ms");
    const json_t *ar = json_object_get(r, "autorange"), *st = json_object_get(r, "stopping");
    double p50 = rpx__h_jnum(json_object_get(json_object_get(r, "latency"), "p50_ms"));
    int between = jstr(ci, "covers") && !strcmp(jstr(ci, "covers"), "between-process");
    char b1[40], b2[40];
    put(o, "<h3 id=\"%s-sure\">How sure</h3>\n<p class=\"answer\">", id);
    if (iv) {
        double lo = rpx__h_jnum(json_array_get(iv, 0)), hi = rpx__h_jnum(json_array_get(iv, 1));
        double conf = 100 * (json_is_number(json_object_get(ci, "confidence")) ? rpx__h_jnum(json_object_get(ci, "confidence")) : 0.95);
        put(o, "With %s %% confidence the p50 lies between ",
            conf == floor(conf) ? rpx__h_num(b1, sizeof b1, conf) : rpx__h_num3(b1, sizeof b1, conf));
        rpx__h_put_num(o, json_array_get(iv, 0));
        put(o, " and ");
        rpx__h_put_num(o, json_array_get(iv, 1));
        put(o, " ms");
        if (p50 > 0) put(o, " (-%s %% / +%s %%)", pct(b1, sizeof b1, (p50 - lo) / p50), pct(b2, sizeof b2, (hi - p50) / p50));
        put(o, between ? ": it comes from how much the processes' own p50s differ, so it covers run-to-run variation."
                       : ": one process ran, so it covers the variation among its calls only, not from run to run.");
    } else {
        const char *why = jstr(json_object_get(ci, "null_reasons"), "p50_ms");
        put(o, "The p50 has no interval");
        if (why) { put(o, ": "); rpx__h_esc(o, why); }
        put(o, ".");
    }
    put(o, "</p>\n");
    if (json_is_object(st)) {
        put(o, "<p>The stopping rule asked for &plusmn;%s %% and reached ", pct(b1, sizeof b1, rpx__h_jnum(json_object_get(st, "target"))));
        if (json_is_number(json_object_get(st, "achieved")))
            put(o, "&plusmn;%s %%", pct(b2, sizeof b2, rpx__h_jnum(json_object_get(st, "achieved"))));
        else put(o, "no interval");
        put(o, "%s.</p>\n", json_is_true(json_object_get(st, "converged")) ? "" : " before its time ran out");
    }
    if (jstr(ar, "limited_by")) {
        put(o, "<p>Auto-ranging chose ");
        plural(o, json_object_get(ar, "calls"), "call", "calls");
        put(o, "; what limited it: ");
        rpx__h_esc(o, jstr(ar, "limited_by"));
        put(o, ".</p>\n");
    }
    if (jstr(ci, "method")) { /* the formula behind one sentence, and where it is explained */
        put(o, "<details class=\"muted method\"><summary>How the intervals are made</summary>Method: ");
        rpx__h_esc(o, jstr(ci, "method"));
        put(o, " (docs/statistics.md, &quot;The intervals of a report&quot;).</details>");
    }
    if (json_array_size(json_object_get(r, "latency_by_process")) > 0) {
        put(o, "<h4>Per process</h4>\n");
        rpx__h_fig_boxes(o, run, id);
    }
}

/* What to do: the run's notes (each says what would make the answer firmer
 * or fuller), after the warnings above. */
static void todo_section(hout *o, const json_t *r, const char *id)
{
    const json_t *notes = json_object_get(r, "notes");
    size_t n = json_array_size(notes);
    int warned = json_array_size(json_object_get(json_object_get(r, "system_card"), "warnings")) > 0;
    put(o, "<h3 id=\"%s-todo\">What to do</h3>\n<p class=\"answer\">", id);
    if (n)
        put(o, "%s the run's %s%s:", warned ? "Read the warnings above (what may have disturbed the timings), then"
                                            : "Follow", n == 1 ? "note" : "notes",
            n == 1 ? ", which says what would make this answer firmer or fuller"
                   : ", which say what would make this answer firmer or fuller");
    else if (warned) put(o, "Read the warnings above: they say what may have disturbed the timings; the run left no note.");
    else put(o, "Nothing: the run left no warning and no note.");
    put(o, "</p>\n");
    if (n) {
        put(o, "<ul class=\"notes\">");
        rpx__h_list_items(o, notes, "note");
        put(o, "</ul>\n");
    }
}

/* Memory: the inference peak and the leak check in one sentence, then each
 * reading in words. */
static void memory_section(hout *o, const json_t *mem)
{
    const json_t *trend = json_object_get(mem, "cpu_rss_trend");
    char b[40];
    put(o, "<h3>Memory</h3>\n<p class=\"answer\">");
    if (json_is_number(json_object_get(mem, "cpu_inference_peak_mb")))
        put(o, "The timed calls peaked at %s MiB resident",
            rpx__h_num3(b, sizeof b, rpx__h_jnum(json_object_get(mem, "cpu_inference_peak_mb"))));
    else put(o, "The resident set during the timed calls was not measured");
    if (json_is_true(json_object_get(trend, "leak_suspected"))) put(o, "; a leak is suspected: it grew during the run.");
    else if (json_is_false(json_object_get(trend, "leak_suspected"))) put(o, "; no leak is suspected.");
    else put(o, "; the leak check did not decide.");
    put(o, "</p>\n");
    memory_table(o, mem);
}

static void cost_section(hout *o, const json_t *r, const char *id)
{
    const json_t *eff = json_object_get(r, "efficiency"), *rl = json_object_get(r, "roofline");
    static const char *const rk[] = {"target", "peak GFLOP/s", "bandwidth GB/s", "ideal bound ms", "unfused bound ms",
                                     "measured p50 ms", "achieved (ideal)", "reason"};
    const char *k;
    json_t *t;
    size_t j;
    if (!json_is_object(eff) && !json_is_object(rl)) return;
    if (!has_cost(eff)) {
        put(o, "<h3>Cost and roofline</h3>\n<p class=\"na\" id=\"%s-nocost\">No cost was given: run again with "
               "<code>--cost MODEL.onnx</code> or <code>--flops N</code> for the model's FLOPs, its roofline bounds and "
               "the share of them the p50 achieves.</p>\n", id);
        return;
    }
    put(o, "<h3>Cost and roofline</h3>\n");
    if (json_is_object(eff)) rpx__h_kv_table(o, eff, NULL);
    if (!json_is_object(rl)) return;
    put(o, "<table class=\"sortable\"><thead><tr>");
    for (j = 0; j < sizeof rk / sizeof *rk; j++) put(o, "<th>%s</th>", rk[j]);
    put(o, "</tr></thead><tbody>");
    json_object_foreach((json_t *)rl, k, t) {
        char b[40];
        put(o, "<tr><td>");
        rpx__h_esc(o, k);
        put(o, "</td><td>%s</td><td>", rpx__h_num3(b, sizeof b, rpx__h_jnum(json_object_get(json_object_get(t, "peak_dense"), "tflops")) * 1e3));
        rpx__h_put_value(o, json_object_get(t, "memory_bandwidth_gbps"));
        put(o, "</td><td>");
        rpx__h_put_value(o, json_object_get(json_object_get(t, "ideal"), "latency_ms"));
        put(o, "</td><td>");
        rpx__h_put_value(o, json_object_get(json_object_get(t, "unfused"), "latency_ms"));
        put(o, "</td><td>");
        rpx__h_put_value(o, json_object_get(t, "measured_p50_ms"));
        put(o, "</td><td>");
        rpx__h_put_value(o, json_object_get(json_object_get(t, "achieved_fraction"), "ideal"));
        put(o, "</td><td>");
        rpx__h_put_value(o, json_object_get(t, "reason"));
        put(o, "</td></tr>\n");
    }
    put(o, "</tbody></table>\n");
    rpx__h_fig_roofline(o, r, id);
}

/* The page of one run, top-down as an answer: the headline, what cannot be
 * missed, what was measured, how fast, how sure, why it varied, what to do;
 * then the details: memory, cost, HTTP, pacing, the machine. */
void rpx__h_run_view(hout *o, const json_t *r, const char *name, const char *id)
{
    rpx_h_run run;
    const json_t *mem = json_object_get(r, "memory"), *card = json_object_get(r, "system_card");
    put(o, "<section class=\"run\" id=\"%s\">\n<h2>Run", id);
    if (name) { put(o, ": "); rpx__h_esc(o, name); }
    put(o, "</h2>\n");
    headline(o, r, id);
    run_alerts(o, r);
    if (rpx__h_run_load(&run, r) != 0) {
        rpx__h_run_free(&run);
        o->oom = 1;
        return;
    }
    what_section(o, r, id);
    fast_section(o, r, &run, id);
    sure_section(o, r, &run, id);
    why_section(o, r, &run, id);
    rpx__h_run_free(&run);
    todo_section(o, r, id);
    if (json_is_object(mem)) memory_section(o, mem);
    cost_section(o, r, id);
    rpx__h_layers_section(o, r, id);   /* html_layers.c: only where the report has `layers` */
    run_http(o, r, id);
    if (json_is_object(json_object_get(r, "pacing"))) {
        json_t *pc = json_deep_copy(json_object_get(r, "pacing"));
        json_object_del(pc, "latency_from_schedule_samples_ms"); /* per call: the figure's */
        put(o, "<h3>Pacing</h3>");
        rpx__h_kv_table(o, pc, NULL);
        json_decref(pc);
    }
    if (json_is_object(card)) {
        json_t *c = json_deep_copy(card);
        json_t *cond = json_incref(json_object_get(card, "conditions"));
        json_object_del(c, "conditions");
        json_object_del(c, "warnings");
        put(o, "<h3>System card</h3>\n<details open><summary>system_card</summary><div class=\"wide\">");
        rpx__h_kv_table(o, c, NULL);
        put(o, "</div></details>\n");
        if (json_is_object(cond)) {
            put(o, "<h3>Conditions</h3>\n<div class=\"wide\">");
            rpx__h_kv_table(o, cond, NULL);
            put(o, "</div>\n");
        }
        json_decref(cond);
        json_decref(c);
    }
    put(o, "</section>\n");
}
