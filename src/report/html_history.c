/* html_history.c — owns the history page (rpx_html_history, docs/report.md
 * "The history page"): one offline page, as the run view is (html.c's head,
 * CSP and script), of a history's series (benchmark x fingerprint) and the
 * history check's results. Per series a panel: each session's p50 with its
 * interval (and its processes' p50s) against the session's commit or start
 * time, the change points marked with their ratio, the newest session's
 * verdict in words, a new fingerprint of the same benchmark marked with what
 * changed, and links to each session's run view when its report is kept.
 * Every number is the series' or the check's own, printed to the digits its
 * interval supports; nothing is recomputed. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/html_int.h"
#include "rpxprof/error.h"
#include "rpxprof/html.h"
#include "rpxprof/summary.h"

#define put rpx__sb_printf

static const char history_css[] =
    ".verdict{font-size:15px;padding:8px 12px;border-radius:6px;background:var(--card);border-left:5px solid var(--muted)}"
    ".verdict.slower{border-color:var(--errb);background:var(--err)}.verdict.faster{border-color:var(--okb);background:var(--ok)}"
    ".verdict.same{border-color:var(--okb)}.verdict.inconclusive{border-color:var(--warnb);background:var(--warn)}"
    ".verdict .word{font-weight:700}\n"
    ".civ{stroke:var(--accent);stroke-width:1.4}.sess{fill:var(--accent);stroke:var(--accent);stroke-width:1.2}"
    ".sess.open{fill:var(--bg)}.sess.newest{stroke:var(--fg);stroke-width:2.2}.nap{stroke:var(--muted);stroke-width:1.6;fill:none}"
    ".procp{fill:var(--muted);fill-opacity:.55}.chg{stroke:var(--errb);stroke-width:1.6;stroke-dasharray:5 3}"
    ".fig text.chgl{fill:var(--errb);font-weight:700}.fpc{stroke:var(--m2);stroke-width:2}.fig text.fpcl{fill:var(--m2);font-weight:700}"
    ".alert.fpchange{border-color:var(--m2)}section.series{margin-bottom:26px}\n";

typedef struct view {
    const rpx_html_history_input *in;
    const char *unit;             /* of the panel: "ms", "µs" or "ns" */
    double scale;                 /* ms to that unit */
} view;

static const char *jstr(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static double jnum(const json_t *o, const char *k) { return rpx__h_jnum(json_object_get(o, k)); }

/* ---- numbers: the digits their interval supports (html_util.c) ---------- */

/* "68.1 [67.9, 68.3]" (scaled), or "68.1" with no interval; the words
 * "n/a" for a value not measured. */
static void put_ci(hout *o, double v, const json_t *ci, double scale, int brackets)
{
    char a[48], b[48], c[48];
    double lo = rpx__h_jnum(json_array_get(ci, 0)) * scale, hi = rpx__h_jnum(json_array_get(ci, 1)) * scale;
    int dec;
    v *= scale;
    if (!isfinite(v)) { put(o, "<span class=\"na\">n/a</span>"); return; }
    dec = json_array_size(ci) == 2 ? rpx__h_ci_decimals(v, lo, hi) : -1;
    if (dec < 0) { put(o, "%s", rpx__h_fmt_dec(a, sizeof a, v, -1)); return; }
    put(o, brackets ? "%s [%s, %s]" : "%s (%s to %s)", rpx__h_fmt_dec(a, sizeof a, v, dec), rpx__h_fmt_dec(b, sizeof b, lo, dec),
        rpx__h_fmt_dec(c, sizeof c, hi, dec));
}

/* The panel's unit: ms, or µs / ns when every p50 is below 1 ms / 1 µs. */
static void pick_unit(view *v, const json_t *sessions)
{
    double mx = 0;
    size_t i;
    for (i = 0; i < json_array_size(sessions); i++) {
        double p = jnum(json_array_get(sessions, i), "p50_ms");
        if (isfinite(p) && p > mx) mx = p;
    }
    if (mx > 0 && mx < 1e-3) v->unit = "ns", v->scale = 1e6;
    else if (mx > 0 && mx < 1) v->unit = "\xc2\xb5s", v->scale = 1e3;
    else v->unit = "ms", v->scale = 1;
}

/* ---- words ----------------------------------------------------------------- */

/* A fraction as a percentage by the summary's rule, trailing zeros dropped
 * (0.01: "1", 0.045: "4.5"). */
static const char *pct(char *b, size_t n, double x)
{
    char *e;
    rpx_format_3g(b, n, x * 100);
    if (!strchr(b, '.')) return b;
    for (e = b + strlen(b) - 1; *e == '0'; e--) *e = '\0';
    if (*e == '.') *e = '\0';
    return b;
}

/* "2026-12-06 09:47" of "2026-12-06T09:47:00.123Z" (UTC); the text as given
 * when it is not of that form. */
static void put_time(hout *o, const char *t)
{
    if (t && strlen(t) >= 16 && t[10] == 'T') {
        char b[17];
        memcpy(b, t, 16);
        b[10] = ' ';
        b[16] = '\0';
        rpx__h_esc(o, b);
        return;
    }
    rpx__h_esc(o, t);
}

static void put_commit(hout *o, const char *c, size_t max)
{
    char b[48];
    if (!c) { put(o, "<span class=\"na\">no commit</span>"); return; }
    snprintf(b, sizeof b, "%.*s", (int)(max < sizeof b - 1 ? max : sizeof b - 1), c);
    put(o, "<code title=\"");
    rpx__h_esc(o, c);
    put(o, "\">");
    rpx__h_esc(o, b);
    put(o, "</code>");
}

/* A location with its password and query left out (a postgresql:// URL). */
static void put_source(hout *o, const char *src)
{
    const char *scheme = strstr(src, "://"), *at, *colon, *q;
    char b[1024];
    if (!scheme) { rpx__h_esc(o, src); return; }
    snprintf(b, sizeof b, "%s", src);
    q = strchr(b, '?');
    if (q) b[q - b] = '\0';
    at = strchr(b + (scheme - src) + 3, '@');
    colon = strchr(b + (scheme - src) + 3, ':');
    if (at && colon && colon < at) memmove((char *)colon, at, strlen(at) + 1);
    rpx__h_esc(o, b);
}

/* ---- links to each session's run view ----------------------------------- */

static int is_regular(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* An href of a file path: file:// and the path percent-encoded when it is
 * absolute, else the path relative to the page. */
static void put_href(hout *o, const char *path)
{
    const unsigned char *s;
    if (path[0] == '/') put(o, "file://");
    for (s = (const unsigned char *)path; *s; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("/._-~", *s))
            put(o, "%c", *s);
        else put(o, "%%%02X", *s);
    }
}

/* The run view of a kept report: the HTML beside it (same name, .html) when
 * one is there, else the JSON; "not found" when the report is gone. */
static void put_report_link(hout *o, const view *v, const json_t *s)
{
    const char *rp = jstr(s, "report_path");
    char html[PATH_MAX], abs[PATH_MAX];
    size_t n;
    const char *target = rp;
    int beside = 0;               /* the run view beside the report */
    if (!rp || !*rp) { put(o, "<span class=\"na\">not kept</span>"); return; }
    n = strlen(rp);
    if (v->in->look_beside) {
        if (n > 5 && !strcmp(rp + n - 5, ".json") && n < sizeof html) {
            snprintf(html, sizeof html, "%.*s.html", (int)(n - 5), rp);
            if (is_regular(html)) target = html, beside = 1;
        }
        if (target == rp && !is_regular(rp)) {
            put(o, "<span class=\"na\" title=\"");
            rpx__h_esc(o, rp);
            put(o, "\">not found</span>");
            return;
        }
        if (target[0] != '/' && realpath(target, abs)) target = abs;
    }
    put(o, "<a class=\"run-link\" href=\"");
    put_href(o, target);
    put(o, "\" title=\"");
    rpx__h_esc(o, target);
    put(o, "\">%s</a>", beside ? "run view" : "report (JSON)");
}

/* ---- the figure -------------------------------------------------------------- */

#define FH 300.0
#define FT 40.0
#define FB 240.0
#define FLM 72.0
#define FRM (RPX_H_FIG_W - 40.0)

static double xpos(size_t i, size_t n) { return FLM + ((double)i + 0.5) * (FRM - FLM) / (double)n; }

static void y_range(const json_t *ss, double scale, double *mn, double *mx)
{
    size_t i, j;
    *mn = INFINITY;
    *mx = -INFINITY;
    for (i = 0; i < json_array_size(ss); i++) {
        const json_t *s = json_array_get(ss, i), *ci = json_object_get(s, "p50_ci_ms"), *pp = json_object_get(s, "process_p50_ms");
        double vals[3] = {jnum(s, "p50_ms"), rpx__h_jnum(json_array_get(ci, 0)), rpx__h_jnum(json_array_get(ci, 1))};
        for (j = 0; j < 3; j++) if (isfinite(vals[j])) { *mn = fmin(*mn, vals[j] * scale); *mx = fmax(*mx, vals[j] * scale); }
        for (j = 0; j < json_array_size(pp); j++) {
            double p = rpx__h_jnum(json_array_get(pp, j));
            if (isfinite(p)) { *mn = fmin(*mn, p * scale); *mx = fmax(*mx, p * scale); }
        }
    }
}

/* Labels along x: every k-th session by its commit (7 characters) when the
 * series has commits, else by its start time. */
static void x_labels(hout *o, const json_t *ss, int by_commit)
{
    size_t i, n = json_array_size(ss), every = n > 10 ? (n + 9) / 10 : 1;
    for (i = 0; i < n; i += every) {
        const json_t *s = json_array_get(ss, i);
        const char *c = jstr(s, "commit"), *t = jstr(s, "started");
        double x = xpos(i, n);
        put(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, FB, x, FB + 4);
        put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, FB + 16);
        if (by_commit && c) { char b[8]; snprintf(b, sizeof b, "%.7s", c); rpx__h_esc(o, b); }
        else if (by_commit) put(o, "&#8212;");
        else if (t && strlen(t) >= 16) put(o, "%.5s %.5s", t + 5, t + 11);
        else rpx__h_esc(o, t ? t : "?");
        put(o, "</text>");
    }
}

static void session_title(hout *o, const view *v, const json_t *s, size_t i)
{
    put(o, "<title>session %zu ", i + 1);
    rpx__h_esc(o, jstr(s, "id"));
    put(o, ", ");
    put_time(o, jstr(s, "started"));
    put(o, " UTC, commit ");
    rpx__h_esc(o, jstr(s, "commit") ? jstr(s, "commit") : "none");
    put(o, ": p50 ");
    put_ci(o, jnum(s, "p50_ms"), json_object_get(s, "p50_ci_ms"), v->scale, 1);
    put(o, " %s", v->unit);
    if (json_array_size(json_object_get(s, "p50_ci_ms")) != 2) put(o, " (no interval)");
    if (jstr(s, "status") && strcmp(jstr(s, "status"), "complete")) { put(o, ", status "); rpx__h_esc(o, jstr(s, "status")); }
    put(o, "</title>");
}

/* One session: its processes' p50s (small dots), its interval (a line) and
 * its p50 (a circle; open when the session did not complete; a cross at the
 * bottom when it has no p50). */
static void session_mark(hout *o, const view *v, const json_t *s, size_t i, size_t n, const rpx_h_axis *y)
{
    const json_t *ci = json_object_get(s, "p50_ci_ms"), *pp = json_object_get(s, "process_p50_ms");
    double x = xpos(i, n), p = jnum(s, "p50_ms") * v->scale, w = fmin(6, (FRM - FLM) / (double)n / 3);
    const char *st = jstr(s, "status");
    size_t j, k = json_array_size(pp);
    char pb[48];
    put(o, "<g class=\"sess-mark\" data-session=\"");
    rpx__h_esc(o, jstr(s, "id"));
    put(o, "\" data-p50-ms=\"%s\">", rpx__h_num(pb, sizeof pb, jnum(s, "p50_ms")));
    session_title(o, v, s, i);
    for (j = 0; j < k; j++) {
        double q = rpx__h_jnum(json_array_get(pp, j)) * v->scale;
        if (isfinite(q))
            put(o, "<circle class=\"procp\" cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\"/>",
                x - w + (k > 1 ? 2 * w * (double)j / (double)(k - 1) : w), rpx__h_axis_pos(y, q));
    }
    if (!isfinite(p)) {
        put(o, "<path class=\"nap\" d=\"M%.1f %.1fl8 8m0 -8l-8 8\"/>", x - 4, FB - 12);
        put(o, "</g>");
        return;
    }
    if (json_array_size(ci) == 2 && isfinite(rpx__h_jnum(json_array_get(ci, 0))) && isfinite(rpx__h_jnum(json_array_get(ci, 1))))
        put(o, "<line class=\"civ\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
            rpx__h_axis_pos(y, rpx__h_jnum(json_array_get(ci, 0)) * v->scale), x,
            rpx__h_axis_pos(y, rpx__h_jnum(json_array_get(ci, 1)) * v->scale));
    put(o, "<circle class=\"sess%s%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"/></g>", st && strcmp(st, "complete") ? " open" : "",
        i + 1 == n ? " newest" : "", x, rpx__h_axis_pos(y, p), i + 1 == n ? "5.5" : "3.5");
}

/* A change point: a dashed line between the two sessions, its ratio above. */
static void change_mark(hout *o, const json_t *c, size_t k, size_t n)
{
    const json_t *idx = json_object_get(c, "index");
    double i = rpx__h_jnum(idx), x, ly;
    char rb[48];
    if (!isfinite(i) || i < 1 || i >= (double)n) return;
    x = FLM + i * (FRM - FLM) / (double)n;
    ly = FT - 8 - (double)(k % 2) * 14;
    put(o, "<g class=\"change\" data-index=\"%.0f\" data-ratio=\"%s\"><title>change point before session %.0f: after / before ",
        i, rpx__h_num(rb, sizeof rb, jnum(c, "ratio")), i + 1);
    put_ci(o, jnum(c, "ratio"), json_object_get(c, "ratio_ci"), 1, 1);
    put(o, ", p ");
    put(o, "%s", rpx_format_3g(rb, sizeof rb, jnum(c, "p_value")));
    put(o, "; commits ");
    rpx__h_esc(o, jstr(c, "before_commit") ? jstr(c, "before_commit") : "none");
    put(o, " to ");
    rpx__h_esc(o, jstr(c, "after_commit") ? jstr(c, "after_commit") : "none");
    put(o, "</title><line class=\"chg\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, ly + 3, x, FB);
    put(o, "<text class=\"chgl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">&#215;", x, ly,
        x > FRM - 90 ? "end" : x < FLM + 90 ? "start" : "middle");
    put_ci(o, jnum(c, "ratio"), json_object_get(c, "ratio_ci"), 1, 1);
    put(o, "</text></g>");
}

static void series_figure(hout *o, const view *v, const json_t *series, const json_t *check, const char *id, int new_fp)
{
    const json_t *ss = json_object_get(series, "sessions"), *ch = json_object_get(check, "changes");
    size_t i, n = json_array_size(ss);
    int by_commit = 0;
    double mn, mx;
    rpx_h_axis y;
    char fid[64];
    if (!n) return;
    for (i = 0; i < n; i++) by_commit |= jstr(json_array_get(ss, i), "commit") != NULL;
    y_range(ss, v->scale, &mn, &mx);
    if (!(mn <= mx)) mn = 0, mx = 1;
    rpx__h_axis_make(&y, mn, mx, 0, FB, FT);
    snprintf(fid, sizeof fid, "%s-fig", id);
    rpx__h_fig_open(o, fid, FH, "each session's p50 with its interval, in session order", "history");
    rpx__h_axis_ticks(o, &y, 1, FLM, FRM);
    x_labels(o, ss, by_commit);
    put(o, "<text class=\"ax\" transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">p50 (%s)</text>", (FT + FB) / 2, v->unit);
    put(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">session, oldest to newest, by %s</text>",
        (FLM + FRM) / 2, FB + 40, by_commit ? "commit" : "start time (UTC)");
    if (new_fp)
        put(o, "<g class=\"fpmark\"><title>a new fingerprint: this series starts here</title><line class=\"fpc\" x1=\"%.1f\" y1=\"%.1f\" "
               "x2=\"%.1f\" y2=\"%.1f\"/><text class=\"fpcl\" x=\"%.1f\" y=\"%.1f\">new fingerprint</text></g>",
            FLM + 1, FT - 4, FLM + 1, FB, FLM + 4, FT - 22);
    for (i = 0; i < json_array_size(ch); i++) change_mark(o, json_array_get(ch, i), i, n);
    for (i = 0; i < n; i++) session_mark(o, v, json_array_get(ss, i), i, n, &y);
    rpx__h_fig_close(o, "Each session's p50 (circle; the newest ringed; open: the session did not complete; a cross: no p50) "
                        "with its 95 % interval (line), which covers the processes of that session only, and each "
                        "process's p50 (grey dots). A dashed line is a change point found by rpxprof history check, "
                        "with the ratio after / before and its interval.");
}

/* ---- the words of a panel ----------------------------------------------------- */

static void verdict_words(hout *o, const view *v, const json_t *check)
{
    const json_t *nw = json_object_get(check, "newest");
    const char *vd = jstr(nw, "verdict");
    char b[48];
    if (jstr(check, "error")) {
        put(o, "<p class=\"verdict none\" data-verdict=\"\">The history check could not judge this series: ");
        rpx__h_esc(o, jstr(check, "error"));
        put(o, "</p>\n");
        return;
    }
    if (!json_is_object(nw) || !vd) {
        put(o, "<p class=\"verdict none\" data-verdict=\"\">No check of this series: %s</p>\n",
            check ? "the check gave no verdict for its newest session" : "none was made");
        return;
    }
    put(o, "<p class=\"verdict ");
    rpx__h_esc(o, vd);
    put(o, "\" data-verdict=\"");
    rpx__h_esc(o, vd);
    put(o, "\">The newest session (");
    put_commit(o, jstr(nw, "commit"), 12);
    put(o, ") is <span class=\"word\">");
    rpx__h_esc(o, vd);
    put(o, "</span>");
    if (isfinite(jnum(nw, "ratio"))) {
        put(o, ": ");
        put_ci(o, jnum(nw, "ratio"), json_object_get(nw, "ratio_ci"), 1, 1);
        put(o, " times the p50 of the segment before it");
        if (json_array_size(json_object_get(nw, "ratio_ci")) == 2) put(o, " (95 %% interval, with the between-session spread)");
    }
    if (v->in->threshold > 0) put(o, ", threshold %s %%", pct(b, sizeof b, v->in->threshold));
    put(o, ".");
    /* the check's reason, as a sentence of its own, when the page has not said its ratio */
    if (!isfinite(jnum(nw, "ratio")) && jstr(nw, "why") && *jstr(nw, "why")) {
        const char *why = jstr(nw, "why");
        put(o, " %c", why[0] >= 'a' && why[0] <= 'z' ? why[0] - 'a' + 'A' : why[0]);
        rpx__h_esc(o, why + 1);
        if (why[strlen(why) - 1] != '.') put(o, ".");
    }
    if (isfinite(jnum(nw, "decidable_change")))
        put(o, " A change of %s %% or more would be decided.", pct(b, sizeof b, jnum(nw, "decidable_change")));
    if (isfinite(jnum(nw, "sessions_needed")) && jnum(nw, "sessions_needed") > 0)
        put(o, " One session may be a bad session of the machine: record %.0f more session%s of this commit "
            "and check again (<code>rpxprof history check</code> runs nothing; the pytest plugin runs them itself).",
            jnum(nw, "sessions_needed"), jnum(nw, "sessions_needed") == 1 ? "" : "s");
    put(o, "</p>\n");
}

static void changes_list(hout *o, const json_t *check)
{
    const json_t *ch = json_object_get(check, "changes"), *bs = json_object_get(check, "between_session");
    size_t i;
    char b[48];
    if (json_array_size(ch)) {
        put(o, "<ul class=\"changes\">");
        for (i = 0; i < json_array_size(ch); i++) {
            const json_t *c = json_array_get(ch, i);
            if (isfinite(jnum(c, "index"))) put(o, "<li>Change before session %.0f, between commit ", jnum(c, "index") + 1);
            else put(o, "<li>Change before a session the check did not name, between commit ");
            put_commit(o, jstr(c, "before_commit"), 12);
            put(o, " and ");
            put_commit(o, jstr(c, "after_commit"), 12);
            put(o, ": after / before <b>");
            put_ci(o, jnum(c, "ratio"), json_object_get(c, "ratio_ci"), 1, 1);
            put(o, "</b>");
            if (isfinite(jnum(c, "p_value"))) { /* a permutation test's p: 2 digits */
                snprintf(b, sizeof b, "%.2g", jnum(c, "p_value"));
                put(o, ", p %s", b);
            }
            put(o, ".</li>");
        }
        put(o, "</ul>\n");
    } else if (check) {
        put(o, "<p>No change point in this series.</p>\n");
    }
    if (json_is_object(bs) && isfinite(jnum(bs, "sigma_between_log"))) {
        put(o, "<p class=\"muted\">Between sessions the p50 moves by about %s %% (the standard deviation of "
               "log p50 from one session to the next", rpx_format_3g(b, sizeof b, jnum(bs, "sigma_between_log") * 100));
        if (isfinite(jnum(bs, "sessions"))) put(o, ", from %.0f sessions", jnum(bs, "sessions"));
        put(o, ").</p>\n<details class=\"muted\"><summary>How the spread between sessions is estimated</summary><p>");
        rpx__h_esc(o, jstr(bs, "how") ? jstr(bs, "how") : "not said");
        put(o, ". Model: ");
        rpx__h_esc(o, jstr(bs, "model") ? jstr(bs, "model") : "not named");
        put(o, ". Estimator: ");
        rpx__h_esc(o, jstr(bs, "estimator") ? jstr(bs, "estimator") : "not named");
        put(o, ". docs/statistics.md, \"Across sessions\", says why.</p></details>\n");
    }
}

/* ---- fingerprints ------------------------------------------------------------ */

/* Each leaf of the fingerprint's machine, software and work as "key" and its
 * JSON text, into the object `flat` (the digest left out). */
static void flatten(json_t *flat, const json_t *obj, const char *prefix, int depth)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        char key[256];
        if (depth == 0 && !strcmp(k, "digest")) continue;
        int n = snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", k);
        if (n < 0 || (size_t)n >= sizeof key) continue; /* a key path this long names nothing we show */
        if (json_is_object(v) && depth < 3) flatten(flat, v, key, depth + 1);
        else json_object_set(flat, key, v);
    }
}

static void put_json_value(hout *o, const json_t *v)
{
    char *s;
    if (!v) { put(o, "<span class=\"na\">absent</span>"); return; }
    if (json_is_string(v)) { rpx__h_esc(o, json_string_value(v)); return; }
    s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s && strlen(s) > 200) strcpy(s + 197, "...");
    rpx__h_esc(o, s ? s : "?");
    free(s);
}

/* What differs from the previous fingerprint of the same benchmark. */
static void fingerprint_change(hout *o, const json_t *prev, const json_t *cur)
{
    json_t *a = json_object(), *b = json_object();
    const char *k;
    json_t *v;
    size_t shown = 0;
    flatten(a, prev, "", 0);
    flatten(b, cur, "", 0);
    put(o, "<div class=\"alert fpchange\" role=\"note\"><b>A new fingerprint</b> (");
    rpx__h_esc(o, jstr(prev, "digest"));
    put(o, " to ");
    rpx__h_esc(o, jstr(cur, "digest"));
    put(o, "): a new series, never compared with the sessions before it, so never a regression. What changed:<ul>");
    json_object_foreach(b, k, v) {
        const json_t *w = json_object_get(a, k);
        if (w && json_equal(v, w)) continue;
        put(o, "<li><code>");
        rpx__h_esc(o, k);
        put(o, "</code>: ");
        put_json_value(o, w);
        put(o, " &#8594; ");
        put_json_value(o, v);
        put(o, "</li>");
        shown++;
    }
    json_object_foreach(a, k, v) {
        if (json_object_get(b, k)) continue;
        put(o, "<li><code>");
        rpx__h_esc(o, k);
        put(o, "</code>: ");
        put_json_value(o, v);
        put(o, " &#8594; <span class=\"na\">absent</span></li>");
        shown++;
    }
    if (!shown) put(o, "<li>nothing the page can show (the digests differ)</li>");
    put(o, "</ul></div>\n");
    json_decref(a);
    json_decref(b);
}

/* "AMD EPYC 7B13, 2 cores, KVM, kernel 6.1.0, rpxprof 0.9.0, fp32". */
static void fingerprint_words(hout *o, const json_t *fp)
{
    const json_t *m = json_object_get(fp, "machine"), *sw = json_object_get(fp, "software"), *w = json_object_get(fp, "work");
    const char *cpu = jstr(m, "cpu_model");
    rpx__h_esc(o, cpu ? cpu : "an unnamed CPU");
    if (json_is_integer(json_object_get(m, "cores"))) put(o, ", %lld cores", (long long)json_integer_value(json_object_get(m, "cores")));
    if (jstr(m, "hypervisor")) { put(o, ", "); rpx__h_esc(o, jstr(m, "hypervisor")); }
    if (jstr(m, "kernel")) { put(o, ", kernel "); rpx__h_esc(o, jstr(m, "kernel")); }
    if (jstr(sw, "rpxprof")) { put(o, ", rpxprof "); rpx__h_esc(o, jstr(sw, "rpxprof")); }
    if (jstr(w, "precision")) { put(o, ", "); rpx__h_esc(o, jstr(w, "precision")); }
}

/* ---- the sessions' table and a panel --------------------------------------------- */

static void sessions_table(hout *o, const view *v, const json_t *ss)
{
    size_t i;
    put(o, "<details><summary>The %zu sessions</summary><div class=\"wide\"><table class=\"sortable sessions\"><thead><tr>"
           "<th>#</th><th>started (UTC)</th><th>commit</th><th>status</th><th>p50 (%s)</th><th>95 %% interval (%s)</th>"
           "<th>processes</th><th>calls</th><th>warnings</th><th>run</th></tr></thead><tbody>\n",
        json_array_size(ss), v->unit, v->unit);
    for (i = 0; i < json_array_size(ss); i++) {
        const json_t *s = json_array_get(ss, i), *ci = json_object_get(s, "p50_ci_ms"), *w = json_object_get(s, "warnings");
        double p = jnum(s, "p50_ms") * v->scale;
        int dec = json_array_size(ci) == 2 ? rpx__h_ci_decimals(p, rpx__h_jnum(json_array_get(ci, 0)) * v->scale,
                                                          rpx__h_jnum(json_array_get(ci, 1)) * v->scale) : -1;
        char a[48], b[48];
        size_t j;
        put(o, "<tr title=\"");
        rpx__h_esc(o, jstr(s, "id"));
        put(o, "\"><td>%zu</td><td>", i + 1);
        put_time(o, jstr(s, "started"));
        put(o, "</td><td>");
        put_commit(o, jstr(s, "commit"), 12);
        put(o, "</td><td>");
        rpx__h_esc(o, jstr(s, "status") ? jstr(s, "status") : "n/a");
        put(o, "</td><td>%s</td><td>", rpx__h_fmt_dec(a, sizeof a, p, dec));
        if (dec >= 0)
            put(o, "%s to %s", rpx__h_fmt_dec(a, sizeof a, rpx__h_jnum(json_array_get(ci, 0)) * v->scale, dec),
                rpx__h_fmt_dec(b, sizeof b, rpx__h_jnum(json_array_get(ci, 1)) * v->scale, dec));
        else put(o, "<span class=\"na\">n/a</span>");
        put(o, "</td><td>");
        put_json_value(o, json_object_get(s, "processes"));
        put(o, "</td><td>");
        put_json_value(o, json_object_get(s, "calls"));
        put(o, "</td><td>");
        for (j = 0; j < json_array_size(w) && j < 10; j++) {
            put(o, j ? "<br>" : "");
            put_json_value(o, json_array_get(w, j));
        }
        put(o, "</td><td>");
        put_report_link(o, v, s);
        put(o, "</td></tr>\n");
    }
    put(o, "</tbody></table></div></details>\n");
}

static void series_panel(hout *o, const rpx_html_history_input *in, const json_t *series, const json_t *check,
                         const json_t *prev_fp, size_t idx)
{
    const json_t *ss = json_object_get(series, "sessions"), *fp = json_object_get(series, "fingerprint");
    size_t n = json_array_size(ss);
    view v = {in, "ms", 1};
    char id[32];
    snprintf(id, sizeof id, "series-%zu", idx);
    pick_unit(&v, ss);
    put(o, "<section class=\"series\" id=\"%s\" data-fingerprint=\"", id);
    rpx__h_esc(o, jstr(fp, "digest"));
    put(o, "\"><h3>On ");
    fingerprint_words(o, fp);
    put(o, " <span class=\"muted\">(fingerprint ");
    rpx__h_esc(o, jstr(fp, "digest"));
    put(o, ")</span></h3>\n<p class=\"muted\">%zu session%s", n, n == 1 ? "" : "s");
    if (n) {
        put(o, ", ");
        put_time(o, jstr(json_array_get(ss, 0), "started"));
        put(o, " to ");
        put_time(o, jstr(json_array_get(ss, n - 1), "started"));
        put(o, " UTC");
    }
    put(o, ".</p>\n");
    if (prev_fp) fingerprint_change(o, prev_fp, fp);
    verdict_words(o, &v, check);
    series_figure(o, &v, series, check, id, prev_fp != NULL);
    changes_list(o, check);
    if (n) sessions_table(o, &v, ss);
    put(o, "<details><summary>The fingerprint</summary><table class=\"kv\"><tbody>");
    {
        json_t *flat = json_object();
        const char *k;
        json_t *x;
        flatten(flat, fp, "", 0);
        json_object_foreach(flat, k, x) {
            put(o, "<tr><th>");
            rpx__h_esc(o, k);
            put(o, "</th><td>");
            put_json_value(o, x);
            put(o, "</td></tr>");
        }
        json_decref(flat);
    }
    put(o, "</tbody></table></details>\n</section>\n");
}

/* ---- the page ----------------------------------------------------------------- */

static const char *bench_key(const json_t *series)
{
    const json_t *b = json_object_get(series, "benchmark");
    return jstr(b, "id") ? jstr(b, "id") : jstr(b, "name") ? jstr(b, "name") : "";
}

/* The check of a series: the one naming its benchmark (id or name, or an
 * object with its id) and its fingerprint's digest; else the check at the
 * same place when it names no digest (a series without a fingerprint). */
static const json_t *check_of(const json_t *checks, const json_t *series, size_t idx)
{
    const json_t *b = json_object_get(series, "benchmark");
    const char *fp = jstr(json_object_get(series, "fingerprint"), "digest");
    size_t i;
    for (i = 0; i < json_array_size(checks); i++) {
        const json_t *c = json_array_get(checks, i), *cb = json_object_get(c, "benchmark");
        const char *cf = jstr(c, "fingerprint_digest"), *cbs = json_is_string(cb) ? json_string_value(cb) : jstr(cb, "id");
        if (!cf || !fp || strcmp(cf, fp)) continue;
        if (!cbs || (jstr(b, "id") && !strcmp(cbs, jstr(b, "id"))) || (jstr(b, "name") && !strcmp(cbs, jstr(b, "name"))))
            return c;
    }
    if (idx < json_array_size(checks)) {
        const json_t *c = json_array_get(checks, idx);
        if (!jstr(c, "fingerprint_digest") &&
            (json_object_get(c, "newest") || json_object_get(c, "changes") || jstr(c, "error")))
            return c;
    }
    return NULL;
}

static const char *first_started(const json_t *series)
{
    const char *t = jstr(json_array_get(json_object_get(series, "sessions"), 0), "started");
    return t ? t : "";
}

typedef struct order {
    const json_t *series;
    size_t idx, group;            /* its place in the list; its benchmark's first place */
} order;

static int order_cmp(const void *pa, const void *pb)
{
    const order *a = pa, *b = pb;
    int c;
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    c = strcmp(first_started(a->series), first_started(b->series));
    if (c) return c;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* One row per series: its benchmark, machine, sessions, newest p50 and verdict. */
static void overview(hout *o, const rpx_html_history_input *in, const order *ord, size_t n)
{
    size_t i, slower = 0;
    put(o, "<h2>Series</h2>\n<div class=\"wide\"><table class=\"sortable overview\"><thead><tr><th>benchmark</th><th>machine</th>"
           "<th>sessions</th><th>newest</th><th>newest p50</th><th>changes</th><th>newest verdict</th></tr></thead><tbody>\n");
    for (i = 0; i < n; i++) {
        const json_t *s = ord[i].series, *c = check_of(in->checks, s, ord[i].idx), *ss = json_object_get(s, "sessions");
        const json_t *last = json_array_get(ss, json_array_size(ss) ? json_array_size(ss) - 1 : 0);
        const char *vd = jstr(json_object_get(c, "newest"), "verdict");
        view v = {in, "ms", 1};
        pick_unit(&v, ss);
        slower += vd && !strcmp(vd, "slower");
        put(o, "<tr><td><a href=\"#series-%zu\">", ord[i].idx);
        rpx__h_esc(o, jstr(json_object_get(s, "benchmark"), "name") ? jstr(json_object_get(s, "benchmark"), "name") : bench_key(s));
        put(o, "</a></td><td>");
        fingerprint_words(o, json_object_get(s, "fingerprint"));
        put(o, "</td><td>%zu</td><td>", json_array_size(ss));
        put_time(o, jstr(last, "started"));
        put(o, "</td><td>");
        put_ci(o, jnum(last, "p50_ms"), json_object_get(last, "p50_ci_ms"), v.scale, 1);
        put(o, " %s</td><td>", v.unit);
        if (c) put(o, "%zu", json_array_size(json_object_get(c, "changes")));
        else put(o, "<span class=\"na\">n/a</span>");
        put(o, "</td><td>");
        rpx__h_esc(o, vd ? vd : "not checked");
        put(o, "</td></tr>\n");
    }
    put(o, "</tbody></table></div>\n");
    if (slower)
        put(o, "<div class=\"alert error\" role=\"alert\"><b>%zu series' newest session is slower</b> than the segment "
               "before it, beyond the between-session spread (see its panel).</div>\n", slower);
}

static void bench_heading(hout *o, const json_t *b, size_t group)
{
    put(o, "<h2 id=\"bench-%zu\">", group);
    rpx__h_esc(o, jstr(b, "name") ? jstr(b, "name") : jstr(b, "id") ? jstr(b, "id") : "a benchmark without a name");
    put(o, "</h2>\n<p class=\"muted\">");
    rpx__h_esc(o, jstr(b, "target") ? jstr(b, "target") : "target not recorded");
    if (jstr(b, "kind")) { put(o, " (");  rpx__h_esc(o, jstr(b, "kind")); put(o, ")"); }
    put(o, ", per ");
    rpx__h_esc(o, jstr(b, "unit") ? jstr(b, "unit") : "call");
    put(o, ", inputs ");
    rpx__h_esc(o, jstr(b, "inputs_digest") ? jstr(b, "inputs_digest") : "none");
    put(o, "; benchmark id ");
    rpx__h_esc(o, jstr(b, "id"));
    put(o, ".</p>\n");
}

int rpx_html_history(const rpx_html_history_input *in, char **html, rpx_error *err)
{
    hout o = {0};
    size_t i, n, sessions = 0, groups = 0;
    order *ord;
    char title[256];
    if (!in || !html) return rpx_error_set(err, RPX_EINVAL, "rpx_html_history: no input");
    *html = NULL;
    if (!json_is_array(in->series))
        return rpx_error_set(err, RPX_EINVAL, "the history's series: not a list of series (rpx_history_series)");
    if (in->checks && !json_is_array(in->checks))
        return rpx_error_set(err, RPX_EINVAL, "the history check's results: not a list (rpxprof history check --json)");
    n = json_array_size(in->series);
    ord = calloc(n ? n : 1, sizeof *ord);
    if (!ord) return rpx_error_set(err, RPX_ENOMEM, "out of memory writing the history page");
    for (i = 0; i < n; i++) {
        size_t j;
        const json_t *s = json_array_get(in->series, i);
        if (!json_is_object(s) || !json_is_array(json_object_get(s, "sessions"))) {
            free(ord);
            return rpx_error_set(err, RPX_EINVAL, "the history's series %zu: not an object with a \"sessions\" list", i + 1);
        }
        ord[i].series = s;
        ord[i].idx = i;
        ord[i].group = i;
        for (j = 0; j < i; j++)
            if (!strcmp(bench_key(ord[j].series), bench_key(s))) { ord[i].group = ord[j].group; break; }
        groups += ord[i].group == i;
        sessions += json_array_size(json_object_get(s, "sessions"));
    }
    qsort(ord, n, sizeof *ord, order_cmp);
    snprintf(title, sizeof title, "%s", in->title ? in->title : "rpxprof history");
    rpx__h_page_open(&o, title, history_css);
    put(&o, "<h1>");
    rpx__h_esc(&o, title);
    put(&o, "</h1>\n<p class=\"headline\">");
    if (in->source) { put(&o, "History <code>"); put_source(&o, in->source); put(&o, "</code>: "); }
    put(&o, "%zu series of %zu benchmark%s, %zu session%s. A series is one benchmark on one fingerprint (machine, software "
            "and work); a session's interval covers its own processes, and the verdicts between sessions use the spread "
            "between them.</p>\n", n, groups, groups == 1 ? "" : "s", sessions, sessions == 1 ? "" : "s");
    if (!n) put(&o, "<p>The history holds no session yet: record one with <code>rpxprof run --history PATH</code>.</p>\n");
    else overview(&o, in, ord, n);
    for (i = 0; i < n; i++) {
        const json_t *prev = i && ord[i - 1].group == ord[i].group ? json_object_get(ord[i - 1].series, "fingerprint") : NULL;
        if (!i || ord[i - 1].group != ord[i].group) bench_heading(&o, json_object_get(ord[i].series, "benchmark"), ord[i].group);
        series_panel(&o, in, ord[i].series, check_of(in->checks, ord[i].series, ord[i].idx), prev, ord[i].idx);
    }
    free(ord);
    rpx__h_page_close(&o, "Made by rpxprof report --history from the history's series and the history check's results; "
                          "every number is theirs (docs/report.md, \"The history page\").");
    if (o.oom) {
        free(o.p);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory writing the history page");
    }
    *html = o.p;
    return 0;
}
