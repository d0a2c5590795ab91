/* html.c — owns the HTML report (rpx_html_report, docs/report.md "The HTML
 * report"): the page (style for screen, print and a dark scheme; a small
 * script of ours for hover, zoom and sorting; a Content-Security-Policy that
 * forbids every network request), and its views: a run (headline, notes and
 * warnings, figures, variance, memory, cost and roofline, real-time budget,
 * HTTP, system card and conditions), a comparison and a batch/aggregate.
 * Every number printed is the report's own (formatted, never recomputed);
 * html_fig.c draws the figures. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h>

#include "report/html_int.h"
#include "rpxprof/error.h"
#include "rpxprof/html.h"

#define put rpx__sb_printf
#define jstr rpx__h_jstr

/* ---- the page ------------------------------------------------------------ */

static const char css[] =
    ":root{--bg:#fff;--fg:#1d1f21;--muted:#5f6368;--grid:#e2e4e8;--bar:#9fb9d8;--accent:#1f5fa8;--card:#f6f7f9;"
    "--warn:#fff3cd;--warnb:#c79a00;--err:#fde2e1;--errb:#c5221f;--ok:#e6f4ea;--okb:#188038;"
    "--m0:#c5221f;--m1:#b05f00;--m2:#7b1fa2;--s0:#1f77b4;--s1:#e8710a}\n"
    "@media (prefers-color-scheme:dark){:root{--bg:#16181b;--fg:#e4e6ea;--muted:#a0a4ab;--grid:#33373d;--bar:#3d5f86;"
    "--accent:#8ab4f8;--card:#1f2226;--warn:#3a3112;--warnb:#e6b800;--err:#3c1715;--errb:#f28b82;--ok:#15311f;--okb:#81c995;"
    "--m0:#f28b82;--m1:#fbbc04;--m2:#d7aefb;--s0:#8ab4f8;--s1:#fcad70}}\n"
    "body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
    "max-width:980px;padding:16px 24px}\n"
    "h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--grid)}"
    "h3{font-size:15px;margin:18px 0 6px}h4{font-size:14px;margin:14px 0 4px;color:var(--muted)}p.answer{font-size:15px}\n"
    ".headline{font-size:16px;background:var(--card);padding:10px 14px;border-radius:6px}\n"
    ".alert{border-left:5px solid var(--warnb);background:var(--warn);padding:8px 12px;margin:10px 0;border-radius:4px}"
    ".alert.error{border-color:var(--errb);background:var(--err)}.alert ul{margin:4px 0;padding-left:20px}\n"
    ".status{display:inline-block;font-weight:700;padding:2px 10px;border-radius:4px}"
    ".status.PASS{background:var(--ok);color:var(--okb);border:1px solid var(--okb)}"
    ".status.FAIL{background:var(--err);color:var(--errb);border:1px solid var(--errb)}\n"
    "table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{border:1px solid var(--grid);padding:3px 7px;"
    "text-align:left;vertical-align:top}td{font-variant-numeric:tabular-nums}table.kv th{font-weight:500;color:var(--muted)}"
    "table.sortable th{cursor:pointer;background:var(--card)}table.sortable th::after{content:' \\2195';color:var(--muted)}"
    "pre{white-space:pre-wrap;max-height:30em;overflow:auto}.wide{overflow-x:auto}.na{color:var(--muted)}code{font-size:12px;word-break:break-all}\n"
    "figure{margin:12px 0}figcaption{color:var(--muted);font-size:12px;max-width:760px}"
    "svg.fig{max-width:100%;height:auto;display:block}.agg svg{max-width:100%;height:auto;background:#fff;color:#000}\n"
    ".fig text{fill:var(--fg);font:11px system-ui,sans-serif}.grid{stroke:var(--grid)}.bar{fill:var(--bar)}"
    ".cdf{fill:none;stroke:var(--accent);stroke-width:1.6}.mark{stroke-width:1.6}.m0{stroke:var(--m0);fill:var(--m0)}"
    ".m1{stroke:var(--m1);fill:var(--m1)}.m2{stroke:var(--m2);fill:var(--m2)}.ci{stroke:none;fill-opacity:.16}"
    ".fig text.ml{font-weight:700}.fig text.m0{fill:var(--m0)}.fig text.m1{fill:var(--m1)}.fig text.m2{fill:var(--m2)}\n"
    ".p0{--c:#1f77b4}.p1{--c:#e8710a}.p2{--c:#2ca02c}.p3{--c:#d62728}.p4{--c:#9467bd}.p5{--c:#8c564b}.p6{--c:#e377c2}"
    ".p7{--c:#17becf}\n"
    "@media (prefers-color-scheme:dark){.p0{--c:#6fa8dc}.p1{--c:#f6a04d}.p2{--c:#6cc46c}.p3{--c:#f07470}.p4{--c:#b99ae0}"
    ".p5{--c:#c49a8c}.p6{--c:#f2a6d8}.p7{--c:#5fd3e0}}\n"
    ".pts{fill:none;stroke:var(--c);stroke-width:4;stroke-linecap:round;vector-effect:non-scaling-stroke}"
    ".sw{fill:var(--c)}.box{fill:var(--c);fill-opacity:.35;stroke:var(--c)}.whisk{stroke:var(--c,var(--fg));stroke-width:1.4}"
    ".med{stroke:var(--fg);stroke-width:2.5}.roof{fill:none;stroke:var(--c);stroke-width:2}.dot{fill:var(--accent)}"
    ".warm{fill:none;stroke:var(--muted);stroke-width:4;stroke-linecap:round}.warmband{fill:var(--grid);fill-opacity:.45}"
    ".hit{fill:transparent;cursor:crosshair}.sel{fill:var(--accent);fill-opacity:.15}"
    ".bi,.bu{fill:var(--c);stroke:var(--fg);stroke-width:.8}.bli,.blu{stroke:var(--c);stroke-width:1.4;stroke-dasharray:2 3}.blu{stroke-dasharray:1 5}.bl{font-size:10px}"
    ".meas{fill:var(--m0)}.meas2{fill:none;stroke:var(--m0);stroke-width:2}.measl{stroke:var(--m0);stroke-width:2;stroke-dasharray:6 4}"
    ".side0{fill:var(--s0);fill-opacity:.3;stroke:var(--s0)}.side1{fill:var(--s1);fill-opacity:.3;stroke:var(--s1)}"
    ".sidem0{stroke:var(--s0);fill:var(--s0);stroke-width:2}.sidem1{stroke:var(--s1);fill:var(--s1);stroke-width:2}"
    ".band{fill:var(--accent);fill-opacity:.15}.one{stroke:var(--muted);stroke-dasharray:3 3}\n"
    ".ldot{fill:var(--c);fill-opacity:.5;stroke:var(--c);stroke-width:1.2}.lroof path{fill:none;stroke:var(--fg);stroke-width:1.8}.lbnd path{fill:none;stroke:var(--c);stroke-width:1.2;stroke-dasharray:1 2}.lbnd path.bar{stroke-width:2.2;stroke-dasharray:none}"
    "table.layers{font-size:12px}table.layers td,table.layers th{padding:2px 5px}table.layers td[data-v]{white-space:nowrap}"
    "table.layers td.nm{overflow-wrap:anywhere;min-width:7em;max-width:16em}table.layers td.nodes{font-size:11px;color:var(--muted)}"
    "td .ci{display:block;color:var(--muted);font-size:11px}tr.unattributed td{font-style:italic;background:var(--card)}"
    "tr.unattributed .why{display:block;font-size:11px;color:var(--muted);white-space:normal}\n"
    "#rpx-tip{position:fixed;pointer-events:none;background:var(--card);color:var(--fg);border:1px solid var(--grid);"
    "padding:2px 6px;font-size:12px;border-radius:3px;display:none;z-index:9}\n"
    "details>summary{cursor:pointer;font-weight:600;margin:8px 0}.muted{color:var(--muted)}\n"
    "@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--grid:#ccc;--card:#f3f3f3}body{max-width:none;padding:0;font-size:11pt}"
    "#rpx-tip{display:none}figure,table,.alert,.headline{break-inside:avoid}h2{break-after:avoid}"
    "table.sortable th::after{content:''}details{display:block}}\n";

/* Hover readouts, zoom of the per-call plots along x, sortable tables (by a
 * cell's data-v where it has one: a number with its interval or unit). Ours,
 * small, no dependency. It prints no statistic: only where the pointer is. */
static const char js[] =
    "(function(){'use strict';\n"
    "var tip=document.createElement('div');tip.id='rpx-tip';document.body.appendChild(tip);\n"
    "function fmt(v){if(!isFinite(v))return 'n/a';var a=Math.abs(v);return a!==0&&(a>=1e6||a<1e-4)?v.toExponential(2):"
    "String(+v.toPrecision(4));}\n"
    "function ticks(lo,hi,whole){var span=hi-lo;if(!(span>0))return[lo];var st=Math.pow(10,Math.floor(Math.log10(span/5)));"
    "if(span/st>10)st*=2;if(span/st>10)st=st/2*5;if(whole&&st<1)st=1;var r=[];for(var v=Math.ceil(lo/st)*st;v<=hi+st*1e-9&&r.length<40;v+=st)"
    "r.push(Math.abs(v)<st*1e-9?0:v);return r;}\n"
    "var NS='http://www.w3.org/2000/svg';\n"
    "function el(n,a){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);return e;}\n"
    "document.querySelectorAll('svg.zoom').forEach(function(fig){\n"
    " var p=fig.querySelector('svg.plot'),xt=fig.querySelector('g.xt');if(!p||!xt)return;\n"
    " var w=+p.dataset.w,x0=+p.dataset.x0,x1=+p.dataset.x1,ylo=+p.dataset.ylo,yhi=+p.dataset.yhi,ylog=p.dataset.ylog==='1';\n"
    " var vb=p.viewBox.baseVal,h=vb.height,left=+xt.dataset.left,base=+xt.dataset.y,top=+p.getAttribute('y');\n"
    " var v0=0,v1=w,drag=null,sel=null;\n"
    " function redraw(){p.setAttribute('viewBox',v0+' 0 '+(v1-v0)+' '+h);while(xt.firstChild)xt.removeChild(xt.firstChild);\n"
    "  var a=x0+(x1-x0)*v0/w,b=x0+(x1-x0)*v1/w;ticks(a,b,p.dataset.xname==='call').forEach(function(v){var px=left+(v-a)/(b-a)*w;\n"
    "   xt.appendChild(el('line',{'class':'grid',x1:px,y1:base,x2:px,y2:top}));var t=el('text',{'class':'ax',x:px,y:base+14,"
    "'text-anchor':'middle'});t.textContent=String(+v.toPrecision(6));xt.appendChild(t);});}\n"
    " function at(ev){var r=p.getBoundingClientRect();var fx=(ev.clientX-r.left)/r.width,fy=(ev.clientY-r.top)/r.height;\n"
    "  var vx=v0+fx*(v1-v0);var yv=ylog?Math.pow(10,Math.log10(yhi)+fy*(Math.log10(ylo)-Math.log10(yhi))):yhi+fy*(ylo-yhi);\n"
    "  return{vx:vx,x:x0+(x1-x0)*vx/w,y:yv};}\n"
    " p.addEventListener('mousemove',function(ev){var q=at(ev);tip.style.display='block';tip.style.left=(ev.clientX+12)+'px';"
    "tip.style.top=(ev.clientY+12)+'px';\n"
    "  tip.textContent=p.dataset.xname+' '+(p.dataset.xname==='call'?Math.round(q.x):fmt(q.x))+', pointer at '+fmt(q.y);\n"
    "  if(drag!==null&&sel){var a=Math.min(drag,q.vx),b=Math.max(drag,q.vx);sel.setAttribute('x',a);sel.setAttribute('width',b-a);}});\n"
    " p.addEventListener('mouseleave',function(){tip.style.display='none';});\n"
    " p.addEventListener('mousedown',function(ev){ev.preventDefault();drag=at(ev).vx;sel=el('rect',{'class':'sel',x:drag,y:0,width:0,"
    "height:h});p.appendChild(sel);});\n"
    " window.addEventListener('mouseup',function(ev){if(drag===null)return;var b=at(ev).vx,a=drag;drag=null;if(sel){p.removeChild(sel);"
    "sel=null;}\n"
    "  var lo=Math.max(0,Math.min(a,b)),hi=Math.min(w,Math.max(a,b));if(hi-lo>(v1-v0)/200){v0=lo;v1=hi;redraw();}});\n"
    " p.addEventListener('dblclick',function(){v0=0;v1=w;redraw();});\n"
    "});\n"
    "document.querySelectorAll('table.sortable').forEach(function(t){var hs=t.tHead?t.tHead.rows[0].cells:[];\n"
    " Array.prototype.forEach.call(hs,function(th,i){var asc=true;th.addEventListener('click',function(){var b=t.tBodies[0];\n"
    "  var rows=Array.prototype.slice.call(b.rows);function key(r){var c=r.cells[i],s=c?c.textContent.trim():'';"
    "if(c&&c.hasAttribute('data-v')){var v=c.getAttribute('data-v');return{na:v==='',n:v===''?null:+v,s:s};}"
    "var n=parseFloat(s);return{na:s==='n/a'||s==='',n:(isFinite(n)&&/^[-+0-9.eE]+$/.test(s))?n:null,s:s};}\n"
    "  rows.sort(function(x,y){var a=key(x),c=key(y);if(a.na!==c.na)return a.na?1:-1;var d=(a.n!==null&&c.n!==null)?a.n-c.n:"
    "a.s.localeCompare(c.s);return asc?d:-d;});asc=!asc;rows.forEach(function(r){b.appendChild(r);});});});});\n"
    "})();\n";

/* The text of the page's one script element, and its SHA-256 in base64: the
 * CSP allows that script alone, so no text of a report can run as one. */
#define SCRIPT_OPEN "<script>\n"

static void script_hash(char out[45])
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint8_t md[SHA256_DIGEST_SIZE];
    struct sha256_ctx ctx;
    size_t i, k = 0;
    sha256_init(&ctx);
    sha256_update(&ctx, 1, (const uint8_t *)"\n");
    sha256_update(&ctx, sizeof js - 1, (const uint8_t *)js);
    sha256_digest(&ctx, sizeof md, md);
    for (i = 0; i + 2 < sizeof md; i += 3) {
        uint32_t v = (uint32_t)md[i] << 16 | (uint32_t)md[i + 1] << 8 | md[i + 2];
        out[k++] = b64[v >> 18 & 63], out[k++] = b64[v >> 12 & 63];
        out[k++] = b64[v >> 6 & 63], out[k++] = b64[v & 63];
    }
    {   /* 32 = 30 + 2: the last two bytes, one '=' */
        uint32_t v = (uint32_t)md[30] << 16 | (uint32_t)md[31] << 8;
        out[k++] = b64[v >> 18 & 63], out[k++] = b64[v >> 12 & 63];
        out[k++] = b64[v >> 6 & 63], out[k++] = '=';
    }
    out[k] = '\0';
}

/* The page's head: the CSP (only the page's one script runs, nothing is
 * fetched), the style and `extra_css` (a view's own; NULL none). */
void rpx__h_page_open(hout *o, const char *title, const char *extra_css)
{
    char hash[45];
    script_hash(hash);
    put(o, "<!DOCTYPE html>\n" RPX_HTML_MARK "\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "script-src 'sha256-%s'; img-src data:\">\n", hash);
    put(o, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
           "<meta name=\"color-scheme\" content=\"light dark\">\n<meta name=\"generator\" content=\"rpxprof\">\n<title>");
    rpx__h_esc(o, title);
    put(o, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n", css, extra_css ? extra_css : "");
}

/* The page's end: where it was made from (`made_from`, NULL: the report
 * files) and the page's one script. */
void rpx__h_page_close(hout *o, const char *made_from)
{
    if (made_from) {
        put(o, "<p class=\"muted\">");
        rpx__h_esc(o, made_from);
        put(o, "</p>\n" SCRIPT_OPEN "%s</script>\n</body>\n</html>\n", js);
        return;
    }
    put(o, "<p class=\"muted\">Made by rpxprof report from the report files alone; every number is the report's "
           "(docs/report.md, \"The HTML report\").</p>\n" SCRIPT_OPEN "%s</script>\n</body>\n</html>\n", js);
}

/* ---- a comparison ---------------------------------------------------------- */

/* A comparison's key as words ("p50_ratio_ci": "p50 ratio new/base,
 * interval"; "base_stats.p50_ms": "base: p50 (ms)"): the page shows no raw
 * key; the JSON is behind a click. */
static void key_words(hout *o, const char *key, const char *prefix)
{
    static const char *const whole[][2] = {
        {"base", "base report"}, {"new", "new report"}, {"threshold", "threshold (a smaller change counts as the same)"},
        {"confidence", "confidence of the intervals"}, {"covers", "what the intervals cover"}, {"design", "design"},
        {"verdict", "verdict (from the p50)"}, {"p_value", "p50 p-value"}, {"p_value_method", "how the p-values are found"},
        {"by_cpu", "pairs by CPU"}, {"null_reasons", "why a value is missing"}, {"base_stats", "base"},
        {"new_stats", "new"}, {"same_session", "both measured in one session"},
        {"between_session", "between sessions"}, {"within_session", "within each session"},
        {"sigma_between_log", "spread between sessions (sd of log latency)"}, {"df", "degrees of freedom"},
        {"how", "how it was found"}, {"source", "from"}, {"decidable_change", "smallest change decided"},
        {"to_decide_smaller", "to decide smaller changes"}, {"differences", "what differs"},
        {"sessions", "sessions"}};
    char tok[64];
    const char *s = key, *unit = "";
    size_t j;
    int first = 1;
    if (*prefix) { put(o, "%s: ", prefix); }
    for (j = 0; j < sizeof whole / sizeof *whole; j++)
        if (!strcmp(key, whole[j][0])) { put(o, "%s", whole[j][1]); return; }
    while (*s) {
        size_t n = strcspn(s, "_");
        snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok ? n : sizeof tok - 1), s);
        s += n + (s[n] == '_');
        if (!strcmp(tok, "ms")) { unit = " (ms)"; continue; }
        put(o, first ? "" : !strcmp(tok, "ci") ? "," : " ");
        first = 0;
        if (!strcmp(tok, "p") && !strncmp(s, "value", 5) && (s[5] == '_' || !s[5])) {
            put(o, "p-value");
            s += 5 + (s[5] == '_');
        } else if (!strcmp(tok, "ci")) put(o, " interval");
        else if (!strcmp(tok, "ratio")) put(o, "ratio new/base");
        else rpx__h_esc(o, tok);
    }
    put(o, "%s", unit);
}

/* A ratio by the rule and its change in % ("1.02 (+2.00 %)"). */
static void put_ratio(hout *o, const json_t *v)
{
    char b[40];
    double x = rpx__h_jnum(v);
    rpx__h_put_num(o, v);
    if (isfinite(x)) put(o, " (%s%s %%)", x >= 1 ? "+" : "", rpx__h_num3(b, sizeof b, 100 * (x - 1)));
}

/* One value of the comparison as words: percentages for the threshold and
 * the confidence, ratios with their change, the words for covers and design. */
static void state_value(hout *o, const char *key, const json_t *v)
{
    static const char *const said[][2] = {
        {"between-process", "run-to-run variation (between processes)"},
        {"within-process", "the calls of one process only, not run-to-run variation"},
        {"independent", "two independent runs"}, {"paired_by_cpu", "pairs of processes run on the same CPU"},
        {"between-session", "the drift between the two sessions as well as run-to-run variation"},
        {"interleaved", "both measured interleaved in one session"}};
    char b[40];
    size_t j;
    int ratio = strstr(key, "ratio") != NULL;
    if ((!strcmp(key, "threshold") || !strcmp(key, "confidence")) && json_is_number(v)) {
        double x = 100 * rpx__h_jnum(v); /* 95 %, as the verdict says it; else by the rule */
        put(o, "%s %%", x == floor(x) ? rpx__h_num(b, sizeof b, x) : rpx__h_num3(b, sizeof b, x));
        return;
    }
    if (json_is_string(v))
        for (j = 0; j < sizeof said / sizeof *said; j++)
            if (!strcmp(json_string_value(v), said[j][0])) { put(o, "%s", said[j][1]); return; }
    if (ratio && json_is_number(v)) { put_ratio(o, v); return; }
    if (json_is_object(json_array_get(v, 0))) { /* rows (by_cpu): each one line of "what: value" */
        const json_t *row;
        json_array_foreach(v, j, row) {
            const char *k;
            json_t *x;
            int first = 1;
            put(o, j ? "<br>" : "");
            json_object_foreach((json_t *)row, k, x) {
                put(o, first ? "" : "; ");
                first = 0;
                key_words(o, k, "");
                put(o, " ");
                if (json_is_object(x) || json_is_array(json_array_get(x, 0))) put(o, "(&hellip;)");
                else state_value(o, k, x);
            }
        }
        return;
    }
    if (ratio && json_array_size(v) == 2 && json_is_number(json_array_get(v, 0)) && json_is_number(json_array_get(v, 1))) {
        double lo = rpx__h_jnum(json_array_get(v, 0)), hi = rpx__h_jnum(json_array_get(v, 1));
        rpx__h_put_num(o, json_array_get(v, 0));
        put(o, " to ");
        rpx__h_put_num(o, json_array_get(v, 1));
        put(o, " (%s%s %% to ", lo >= 1 ? "+" : "", rpx__h_num3(b, sizeof b, 100 * (lo - 1)));
        put(o, "%s%s %%)", hi >= 1 ? "+" : "", rpx__h_num3(b, sizeof b, 100 * (hi - 1)));
        return;
    }
    rpx__h_put_value(o, v);
}

/* The comparison's statements as rows of words, nested objects as "what:
 * key" (two levels). */
static void states_rows(hout *o, const json_t *obj, const char *prefix, int depth)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        if (json_is_object(v) && depth < 2 && json_object_size(v)) {
            hout sub = {0};
            key_words(&sub, k, prefix);
            if (sub.oom) { o->oom = 1; free(sub.p); return; }
            states_rows(o, v, sub.p ? sub.p : "", depth + 1);
            free(sub.p);
            continue;
        }
        put(o, "<tr><th>");
        key_words(o, k, prefix);
        put(o, "</th><td>");
        state_value(o, k, v);
        put(o, "</td></tr>\n");
    }
}

/* Two batch folders compared row by row (compare DIR DIR --json). */
static void compare_rows_view(hout *o, const json_t *c)
{
    static const char *const keys[] = {"task", "model", "status", "verdict", "p50_ratio", "p50_ratio_ci", "p95_ratio",
                                       "mean_ratio", "p_value_holm", "reason"};
    static const char *const labels[] = {"task", "model", "status", "verdict", "p50 ratio new/base", "p50 ratio, interval",
                                         "p95 ratio new/base", "mean ratio new/base", "p-value (Holm)", "reason"};
    put(o, "<section class=\"compare\" id=\"compare\">\n<h2>Comparison of two batch folders: ");
    rpx__h_esc(o, jstr(c, "new"));
    put(o, " against ");
    rpx__h_esc(o, jstr(c, "base"));
    put(o, "</h2>\n<p class=\"headline\">");
    rpx__h_put_num(o, json_object_get(c, "compared"));
    put(o, " (task, model) rows compared, ");
    rpx__h_put_num(o, json_object_get(c, "refused"));
    put(o, " refused; geometric mean of the p50 ratios new/base: ");
    rpx__h_put_num(o, json_object_get(c, "geomean_p50_ratio"));
    put(o, ".</p>\n<div class=\"wide\">");
    rpx__h_rows_table(o, json_object_get(c, "rows"), keys, labels, sizeof keys / sizeof *keys);
    put(o, "</div>\n");
    if (json_array_size(json_object_get(c, "only_in_base")) || json_array_size(json_object_get(c, "only_in_new"))) {
        put(o, "<div class=\"alert\"><b>Not in both</b><ul>");
        rpx__h_list_items(o, json_object_get(c, "only_in_base"), "only-base");
        rpx__h_list_items(o, json_object_get(c, "only_in_new"), "only-new");
        put(o, "</ul></div>\n");
    }
    put(o, "</section>\n");
}

static void compare_view(hout *o, const json_t *c, const json_t *base, const json_t *nw)
{
    const char *v = jstr(c, "verdict");
    const json_t *ci = json_object_get(c, "p50_ratio_ci");
    double thr = rpx__h_jnum(json_object_get(c, "threshold"));
    char b1[40], b2[40], b3[40], b4[40];
    put(o, "<section class=\"compare\" id=\"compare\">\n<h2>Comparison: ");
    rpx__h_esc(o, jstr(c, "new"));
    put(o, " against ");
    rpx__h_esc(o, jstr(c, "base"));
    put(o, "</h2>\n<p class=\"headline verdict\" id=\"compare-verdict\">Verdict: <b class=\"v\">");
    rpx__h_esc(o, v);
    put(o, "</b>. ");
    if (v && !strcmp(v, "slower")) put(o, "The new version is slower: ");
    else if (v && !strcmp(v, "faster")) put(o, "The new version is faster: ");
    else if (v && !strcmp(v, "same")) put(o, "No change beyond the threshold: ");
    else put(o, "The data cannot tell: ");
    put(o, "the p50 ratio new/base is %s", rpx__h_num3(b1, sizeof b1, rpx__h_jnum(json_object_get(c, "p50_ratio"))));
    if (json_array_size(ci) == 2) {
        put(o, " with 95 %% interval %s to %s", rpx__h_num3(b2, sizeof b2, rpx__h_jnum(json_array_get(ci, 0))),
            rpx__h_num3(b3, sizeof b3, rpx__h_jnum(json_array_get(ci, 1))));
        if (v && !strcmp(v, "slower")) put(o, ", entirely above 1 + threshold");
        else if (v && !strcmp(v, "faster")) put(o, ", entirely below 1 - threshold");
        else if (v && !strcmp(v, "same")) put(o, ", entirely within 1 &plusmn; threshold");
        else put(o, ", which crosses an edge of the band 1 &plusmn; threshold");
    } else {
        const char *why = jstr(json_object_get(c, "null_reasons"), "p50_ratio_ci");
        put(o, " and has no interval");
        if (why) { put(o, " ("); rpx__h_esc(o, why); put(o, ")"); }
    }
    put(o, " (threshold %s %%, intervals ", rpx__h_num3(b4, sizeof b4, thr * 100));
    rpx__h_esc(o, jstr(c, "covers") ? jstr(c, "covers") : "n/a");
    put(o, ", design ");
    rpx__h_esc(o, jstr(c, "design") ? jstr(c, "design") : "n/a");
    put(o, ").</p>\n");
    if (json_array_size(json_object_get(c, "warnings")) || json_array_size(json_object_get(c, "notes"))) {
        put(o, "<div class=\"alert\"><b>Warnings and notes</b><ul>");
        rpx__h_list_items(o, json_object_get(c, "warnings"), "warning");
        rpx__h_list_items(o, json_object_get(c, "notes"), "note");
        put(o, "</ul></div>\n");
    }
    rpx__h_fig_ratio(o, c, "compare");
    if (base && nw) {
        rpx_h_run a, b;
        if (rpx__h_run_load(&a, base) == 0 && rpx__h_run_load(&b, nw) == 0) {
            rpx__h_fig_two(o, &a, &b, "compare");
            rpx__h_fig_procs_two(o, &a, &b, "compare");
        } else o->oom = 1;
        rpx__h_run_free(&a);
        rpx__h_run_free(&b);
    } else {
        put(o, "<p class=\"na\">The two reports (base and new) were not found beside the comparison, so their "
               "distributions are not drawn; give them to rpxprof report after the comparison.</p>\n");
    }
    {
        json_t *rest = json_deep_copy(c);
        /* the warnings and notes are words, listed once above */
        json_object_del(rest, "warnings");
        json_object_del(rest, "notes");
        char *dump = json_dumps(c, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        put(o, "<h3>Everything the comparison states</h3>\n<p class=\"answer\">Each value the comparison file "
               "holds, in words; ratios are new/base, with the change in %%.</p><div class=\"wide\">"
               "<table class=\"kv states\"><tbody>");
        states_rows(o, rest, "", 0);
        put(o, "</tbody></table></div>\n<details class=\"json\"><summary>The comparison as JSON</summary><pre><code>");
        if (dump) rpx__h_esc(o, dump);
        else o->oom = 1;
        put(o, "</code></pre></details>\n");
        free(dump);
        json_decref(rest);
    }
    put(o, "</section>\n");
}

/* ---- a batch / aggregate ------------------------------------------------- */

/* One CSV field (RFC 4180 quotes) from *p; returns it malloc'ed, advances *p. */
static char *csv_field(const char **p, int *eol)
{
    rpx_strbuf b = {0};
    const char *s = *p;
    if (*s == '"') {
        s++;
        for (;;) {
            if (!*s) break;
            if (*s == '"' && s[1] == '"') { rpx__sb_add(&b, "\"", 1); s += 2; continue; }
            if (*s == '"') { s++; break; }
            rpx__sb_add(&b, s++, 1);
        }
    }
    while (*s && *s != ',' && *s != '\n' && *s != '\r') rpx__sb_add(&b, s++, 1);
    if (*s == '\r') s++;
    *eol = *s == '\n' || !*s;
    if (*s) s++;
    *p = s;
    if (!b.p) { b.p = malloc(1); if (b.p) b.p[0] = '\0'; }
    return b.p;
}

static void csv_table(hout *o, const char *csv)
{
    const char *p = csv;
    int row = 0;
    put(o, "<div class=\"wide\"><table class=\"sortable summary\" id=\"summary\">");
    while (*p) {
        int eol = 0;
        put(o, row == 0 ? "<thead><tr>" : "<tr>");
        while (!eol) {
            char *f = csv_field(&p, &eol);
            if (row == 0) { put(o, "<th>"); rpx__h_esc(o, f); put(o, "</th>"); }
            else if (!f || !*f) put(o, "<td><span class=\"na\">n/a</span></td>");
            else { put(o, "<td>"); rpx__h_esc(o, f); put(o, "</td>"); }
            free(f);
        }
        put(o, row == 0 ? "</tr></thead><tbody>\n" : "</tr>\n");
        row++;
    }
    put(o, "%s</table></div>\n", row ? "</tbody>" : "");
}

static void batch_view(hout *o, const rpx_html_input *in)
{
    const json_t *v = in->validation;
    const char *st = jstr(v, "status");
    put(o, "<section class=\"batch\" id=\"batch\">\n<h2>Validation</h2>\n<p class=\"headline\" id=\"validation\">"
           "Validation: <span class=\"status %s\">", st && !strcmp(st, "PASS") ? "PASS" : "FAIL");
    rpx__h_esc(o, st ? st : "FAIL");
    put(o, "</span> &mdash; ");
    rpx__h_put_num(o, json_object_get(v, "profiles_found"));
    put(o, " reports, %zu errors, %zu warnings.</p>\n", json_array_size(json_object_get(v, "errors")),
        json_array_size(json_object_get(v, "warnings")));
    if (json_array_size(json_object_get(v, "errors"))) {
        put(o, "<div class=\"alert error\" role=\"alert\"><b>Errors</b><ul>");
        rpx__h_list_items(o, json_object_get(v, "errors"), "error");
        put(o, "</ul></div>\n");
    }
    if (json_array_size(json_object_get(v, "warnings"))) {
        put(o, "<div class=\"alert\"><b>Warnings</b><ul>");
        rpx__h_list_items(o, json_object_get(v, "warnings"), "warning");
        put(o, "</ul></div>\n");
    }
    if (in->summary_csv) {
        put(o, "<h2>Summary</h2>\n<p class=\"muted\">summary.csv; click a column to sort; n/a: not measured.</p>\n");
        csv_table(o, in->summary_csv);
    }
    if (in->figure_svg) {
        put(o, "<h2>Figure</h2>\n<figure class=\"figure agg\">");
        rpx__h_svg_clean(o, in->figure_svg); /* a file's text: drawing elements only */
        put(o, "<figcaption>The aggregate's figure.svg.</figcaption></figure>\n");
    }
    put(o, "</section>\n");
}

/* ---- the entry point ----------------------------------------------------- */

/* A text cut to its buffer may end inside a UTF-8 character: drop that
 * character's first bytes (a page must be valid UTF-8). */
static void utf8_trim(char *s)
{
    size_t i = strlen(s), cont = 0, need;
    unsigned char c;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80 && cont < 3) {
        i--;
        cont++;
    }
    if (i == 0) return;
    c = (unsigned char)s[i - 1];
    need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (c >= 0xC0 && need > cont + 1) s[i - 1] = '\0';
}

int rpx_html_report(const rpx_html_input *in, char **html, rpx_error *err)
{
    hout o = {0};
    size_t i;
    char title[256];
    if (!in || !html) return rpx_error_set(err, RPX_EINVAL, "rpx_html_report: no input");
    *html = NULL;
    if (!in->n_runs && !in->compare && !in->validation)
        return rpx_error_set(err, RPX_EINVAL, "nothing to show: give a run report, a comparison or a batch");
    if (in->title) snprintf(title, sizeof title, "%s", in->title);
    else if (in->validation) snprintf(title, sizeof title, "rpxprof batch: %s", jstr(in->validation, "status") ? jstr(in->validation, "status") : "");
    else if (in->compare)
        snprintf(title, sizeof title, "rpxprof compare: %s",
                 jstr(in->compare, "verdict") ? jstr(in->compare, "verdict") : "two batch folders");
    else {
        const json_t *r = in->runs[0];
        snprintf(title, sizeof title, "rpxprof run: %s", jstr(r, "model_name") ? jstr(r, "model_name") : jstr(r, "model_callable") ? jstr(r, "model_callable") : "report");
    }
    utf8_trim(title);
    rpx__h_page_open(&o, title, NULL);
    put(&o, "<h1>");
    rpx__h_esc(&o, title);
    put(&o, "</h1>\n");
    if (in->validation) batch_view(&o, in);
    if (in->compare && json_is_array(json_object_get(in->compare, "rows"))) compare_rows_view(&o, in->compare);
    else if (in->compare) compare_view(&o, in->compare, in->compare_base, in->compare_new);
    if (in->n_runs > 1 || in->validation) {
        put(&o, "<nav><b>Runs:</b> ");
        for (i = 0; i < in->n_runs; i++) {
            put(&o, "%s<a href=\"#run-%zu\">", i ? " &middot; " : "", i);
            rpx__h_esc(&o, in->run_names && in->run_names[i] ? in->run_names[i] : "run");
            put(&o, "</a>");
        }
        put(&o, "</nav>\n");
    }
    for (i = 0; i < in->n_runs; i++) {
        char id[32];
        snprintf(id, sizeof id, "run-%zu", i);
        rpx__h_run_view(&o, in->runs[i], in->run_names ? in->run_names[i] : NULL, id);
    }
    rpx__h_page_close(&o, NULL);
    if (o.oom) {
        free(o.p);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory writing the HTML report");
    }
    *html = o.p;
    return 0;
}
