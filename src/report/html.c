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
#include "loader/kinds.h"
#include "rpxprof/error.h"
#include "rpxprof/html.h"

#define put rpx__sb_printf

static const char *jstr(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A number of the report by the summary's rule (three significant digits,
 * no exponent: rpx_format_3g), the exact value (shortest round trip) on hover
 * where they differ; a count (a JSON integer) as it is. */
static void put_jnum(hout *o, const json_t *v)
{
    char b[40], s3[40];
    double x = rpx__h_jnum(v);
    if (!isfinite(x)) { put(o, "<span class=\"na\">n/a</span>"); return; }
    if (json_is_integer(v)) { put(o, "%lld", (long long)json_integer_value(v)); return; }
    rpx__h_num(b, sizeof b, x);
    rpx__h_num3(s3, sizeof s3, x);
    if (strtod(s3, NULL) == x) { rpx__h_esc(o, s3); return; }
    put(o, "<span title=\"%s\">%s</span>", b, s3);
}

/* The exact number (shortest round trip), for the headline's p50. */
static void put_exact(hout *o, const json_t *v)
{
    char b[40];
    rpx__h_esc(o, rpx__h_num(b, sizeof b, rpx__h_jnum(v)));
}

static void put_value(hout *o, const json_t *v);

/* An array as words: "none", two numbers as "a to b" (an interval), else
 * its items one after another (numbers by the rule, objects as key: value). */
static void put_array(hout *o, const json_t *a)
{
    size_t i, n = json_array_size(a);
    if (n == 0) { put(o, "none"); return; }
    if (n == 2 && json_is_number(json_array_get(a, 0)) && json_is_number(json_array_get(a, 1))) {
        put_jnum(o, json_array_get(a, 0));
        put(o, " to ");
        put_jnum(o, json_array_get(a, 1));
        return;
    }
    for (i = 0; i < n && i < 50; i++) {
        const json_t *e = json_array_get(a, i);
        put(o, i ? (json_is_object(e) ? "<br>" : ", ") : "");
        if (json_is_object(e)) {
            const char *k;
            json_t *x;
            int first = 1;
            json_object_foreach((json_t *)e, k, x) {
                put(o, first ? "" : ", ");
                first = 0;
                rpx__h_esc(o, k);
                put(o, " ");
                if (json_is_object(x)) put(o, "{&hellip;}");
                else put_value(o, x);
            }
        } else put_value(o, e);
    }
    if (n > 50) put(o, " &hellip; (%zu in all)", n);
}

/* A JSON value as table text: strings as they are, numbers by the summary's
 * rule, arrays as words, null n/a. */
static void put_value(hout *o, const json_t *v)
{
    if (!v || json_is_null(v)) put(o, "<span class=\"na\">n/a</span>");
    else if (json_is_string(v)) rpx__h_esc(o, json_string_value(v));
    else if (json_is_number(v)) put_jnum(o, v);
    else if (json_is_true(v)) put(o, "yes");
    else if (json_is_false(v)) put(o, "no");
    else if (json_is_array(v)) put_array(o, v);
    else if (json_is_object(v) && json_object_size(v) == 0) put(o, "none");
    else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (s && strlen(s) > 400) strcpy(s + 397, "...");
        put(o, "<code>");
        rpx__h_esc(o, s);
        put(o, "</code>");
        free(s);
    }
}

/* A key/value table of an object, nested objects flattened into dotted keys. */
static void kv_rows(hout *o, const json_t *obj, const char *prefix, int depth)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", k);
        if (json_is_object(v) && depth < 2 && json_object_size(v)) {
            kv_rows(o, v, key, depth + 1);
            continue;
        }
        put(o, "<tr><th>");
        rpx__h_esc(o, key);
        put(o, "</th><td>");
        put_value(o, v);
        put(o, "</td></tr>\n");
    }
}

static void kv_table(hout *o, const json_t *obj, const char *cls)
{
    put(o, "<table class=\"kv %s\"><tbody>", cls ? cls : "");
    kv_rows(o, obj, "", 0);
    put(o, "</tbody></table>\n");
}

/* An array of objects as a table with one column per key of the first. */
static void rows_table(hout *o, const json_t *arr, const char *const *keys, size_t nk)
{
    size_t i, j;
    put(o, "<table class=\"sortable\"><thead><tr>");
    for (j = 0; j < nk; j++) { put(o, "<th>"); rpx__h_esc(o, keys[j]); put(o, "</th>"); }
    put(o, "</tr></thead><tbody>");
    for (i = 0; i < json_array_size(arr); i++) {
        put(o, "<tr>");
        for (j = 0; j < nk; j++) { put(o, "<td>"); put_value(o, json_object_get(json_array_get(arr, i), keys[j])); put(o, "</td>"); }
        put(o, "</tr>\n");
    }
    put(o, "</tbody></table>\n");
}

static void list_items(hout *o, const json_t *arr, const char *cls)
{
    size_t i;
    for (i = 0; i < json_array_size(arr); i++) {
        const json_t *s = json_array_get(arr, i);
        put(o, "<li class=\"%s\">", cls);
        if (json_is_string(s)) rpx__h_esc(o, json_string_value(s));
        else put_value(o, s);
        put(o, "</li>\n");
    }
}

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
    "h3{font-size:15px;margin:18px 0 6px}\n"
    ".headline{font-size:16px;background:var(--card);padding:10px 14px;border-radius:6px}\n"
    ".alert{border-left:5px solid var(--warnb);background:var(--warn);padding:8px 12px;margin:10px 0;border-radius:4px}"
    ".alert.error{border-color:var(--errb);background:var(--err)}.alert ul{margin:4px 0;padding-left:20px}\n"
    ".status{display:inline-block;font-weight:700;padding:2px 10px;border-radius:4px}"
    ".status.PASS{background:var(--ok);color:var(--okb);border:1px solid var(--okb)}"
    ".status.FAIL{background:var(--err);color:var(--errb);border:1px solid var(--errb)}\n"
    "table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{border:1px solid var(--grid);padding:3px 7px;"
    "text-align:left;vertical-align:top}td{font-variant-numeric:tabular-nums}table.kv th{font-weight:500;color:var(--muted)}"
    "table.sortable th{cursor:pointer;background:var(--card)}table.sortable th::after{content:' \\2195';color:var(--muted)}"
    ".wide{overflow-x:auto}.na{color:var(--muted)}code{font-size:12px;word-break:break-all}\n"
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
    "#rpx-tip{position:fixed;pointer-events:none;background:var(--card);color:var(--fg);border:1px solid var(--grid);"
    "padding:2px 6px;font-size:12px;border-radius:3px;display:none;z-index:9}\n"
    "details>summary{cursor:pointer;font-weight:600;margin:8px 0}.muted{color:var(--muted)}\n"
    "@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--grid:#ccc;--card:#f3f3f3}body{max-width:none;padding:0;font-size:11pt}"
    "#rpx-tip{display:none}figure,table,.alert,.headline{break-inside:avoid}h2{break-after:avoid}"
    "table.sortable th::after{content:''}details{display:block}}\n";

/* Hover readouts, zoom of the per-call plots along x, sortable tables. Ours,
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
    "  var rows=Array.prototype.slice.call(b.rows);function key(r){var s=r.cells[i]?r.cells[i].textContent.trim():'';"
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

/* ---- a run ------------------------------------------------------------- */

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
    put_exact(o, json_object_get(lat, "p50_ms"));
    put(o, "\" title=\"");
    put_exact(o, json_object_get(lat, "p50_ms"));
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
    put_jnum(o, json_object_get(lat, "p95_ms"));
    put(o, " ms, p99 ");
    put_jnum(o, json_object_get(lat, "p99_ms"));
    put(o, " ms; ");
    put_jnum(o, json_object_get(r, "measured_calls"));
    put(o, " timed calls in ");
    put_jnum(o, json_object_get(r, "processes"));
    put(o, " process%s.</p>\n", rpx__h_jnum(json_object_get(r, "processes")) == 1 ? "" : "es");
}

/* Status, failure, notes and warnings: first, where they cannot be missed. */
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
            put_value(o, json_object_get(r, "failure"));
        }
        put(o, "</div>\n");
    }
    trend = json_object_get(json_object_get(r, "memory"), "cpu_rss_trend");
    if (json_array_size(json_object_get(card, "warnings")) || json_is_true(json_object_get(trend, "leak_suspected")) || var) {
        put(o, "<div class=\"alert\" role=\"note\"><b>Warnings</b><ul>");
        list_items(o, json_object_get(card, "warnings"), "warning");
        if (json_is_true(json_object_get(trend, "leak_suspected")))
            put(o, "<li class=\"warning\">memory: the RSS grew during the run (cpu_rss_trend.leak_suspected)</li>");
        if (var) { put(o, "<li class=\"warning\">why it varied: "); rpx__h_esc(o, var); put(o, "</li>"); }
        put(o, "</ul></div>\n");
    }
    if (json_array_size(json_object_get(r, "notes"))) {
        put(o, "<div class=\"alert\" role=\"note\"><b>Notes</b><ul>");
        list_items(o, json_object_get(r, "notes"), "note");
        put(o, "</ul></div>\n");
    }
}

static void run_variance(hout *o, const json_t *r)
{
    static const char *const keys[] = {"factor", "tested", "measure", "share", "ratio", "p_value", "p_adjusted", "named", "why"};
    const json_t *v = json_object_get(r, "variance");
    if (!json_is_object(v)) return;
    put(o, "<h3>Why it varied (variance)</h3>\n<p>Between-process share of the variation: ");
    put_jnum(o, json_object_get(v, "between_process_share"));
    put(o, "; the processes' p50s are ");
    put_jnum(o, json_object_get(v, "process_p50_ratio"));
    put(o, "x apart; explained by: ");
    if (jstr(v, "explained_by")) rpx__h_esc(o, jstr(v, "explained_by"));
    else put(o, "no factor");
    put(o, ".</p>\n");
    if (jstr(v, "message")) { put(o, "<p>"); rpx__h_esc(o, jstr(v, "message")); put(o, "</p>"); }
    if (json_array_size(json_object_get(v, "factors"))) {
        put(o, "<div class=\"wide\">");
        rows_table(o, json_object_get(v, "factors"), keys, sizeof keys / sizeof *keys);
        put(o, "</div>");
    }
    if (jstr(json_object_get(v, "slow_tail"), "message")) {
        put(o, "<p>Slow tail: ");
        rpx__h_esc(o, jstr(json_object_get(v, "slow_tail"), "message"));
        put(o, "</p>\n");
    }
    if (jstr(v, "rule")) { put(o, "<p class=\"muted\">"); rpx__h_esc(o, jstr(v, "rule")); put(o, "</p>"); }
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
        kv_table(o, load, NULL);
        json_decref(load);
    }
    {
        json_t *rest = json_deep_copy(http);
        json_object_del(rest, "phases_ms");
        json_object_del(rest, "streaming");
        json_object_del(rest, "load");
        put(o, "<details><summary>HTTP request and counts</summary>");
        kv_table(o, rest, NULL);
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
            put_value(o, v2);
            if (*unit && json_is_number(v2)) put(o, " %s", unit);
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
            else put_value(o, v);
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

static void run_view(hout *o, const json_t *r, const char *name, const char *id)
{
    rpx_h_run run;
    const json_t *mem = json_object_get(r, "memory"), *eff = json_object_get(r, "efficiency");
    const json_t *rl = json_object_get(r, "roofline"), *rt = json_object_get(r, "realtime_budget");
    const json_t *card = json_object_get(r, "system_card");
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
    put(o, "<h3>Latency</h3>\n");
    if (!run.n) put(o, "<p class=\"na\">No timed call completed: nothing to draw.</p>");
    rpx__h_fig_distribution(o, &run, id);
    {
        static const char *const lk[] = {"p50_ms", "p95_ms", "p99_ms", "mean_ms", "min_ms", "max_ms", "std_ms"};
        const json_t *lat = json_object_get(r, "latency"), *ci = json_object_get(r, "latency_ci");
        size_t j;
        put(o, "<table class=\"stats\"><thead><tr><th>statistic</th><th>ms</th><th>95 %% interval (ms)</th></tr></thead><tbody>");
        for (j = 0; j < sizeof lk / sizeof *lk; j++) {
            const json_t *iv = json_object_get(ci, lk[j]);
            put(o, "<tr><th>%.*s</th><td>", (int)(strlen(lk[j]) - 3), lk[j]);
            put_value(o, json_object_get(lat, lk[j]));
            put(o, "</td><td>");
            if (json_array_size(iv) == 2) {
                put_jnum(o, json_array_get(iv, 0));
                put(o, " to ");
                put_jnum(o, json_array_get(iv, 1));
            } else if (json_is_object(ci) && jstr(json_object_get(ci, "null_reasons"), lk[j])) {
                put(o, "<span class=\"na\">n/a: ");
                rpx__h_esc(o, jstr(json_object_get(ci, "null_reasons"), lk[j]));
                put(o, "</span>");
            } else put(o, "<span class=\"na\">n/a</span>");
            put(o, "</td></tr>");
        }
        put(o, "</tbody></table>\n");
        if (jstr(ci, "method")) { /* one sentence; the formula behind it, and where it is explained */
            int between = jstr(ci, "covers") && !strcmp(jstr(ci, "covers"), "between-process");
            put(o, "<details class=\"muted method\"><summary>%s</summary>", between
                ? "Each interval comes from how much the processes' own statistics differ, so it covers run-to-run variation."
                : "One process ran: each interval covers the variation among its calls only, not from run to run.");
            put(o, "Method: ");
            rpx__h_esc(o, jstr(ci, "method"));
            put(o, " (docs/statistics.md, &quot;The intervals of a report&quot;).</details>");
        }
    }
    put(o, "<h3>Every call</h3>\n");
    rpx__h_fig_timeline(o, &run, id);
    rpx__h_fig_cpus(o, &run, id);
    if (json_array_size(json_object_get(r, "latency_by_process")) > 0) {
        put(o, "<h3>Per process</h3>\n");
        rpx__h_fig_boxes(o, &run, id);
    }
    run_variance(o, r);
    rpx__h_run_free(&run);
    if (json_is_object(mem)) { put(o, "<h3>Memory</h3>\n"); memory_table(o, mem); }
    if ((json_is_object(eff) || json_is_object(rl)) && !has_cost(eff)) {
        put(o, "<h3>Cost and roofline</h3>\n<p class=\"na\" id=\"%s-nocost\">No cost was given: run again with "
               "<code>--cost MODEL.onnx</code> or <code>--flops N</code> for the model's FLOPs, its roofline bounds and "
               "the share of them the p50 achieves.</p>\n", id);
    } else if (json_is_object(eff) || json_is_object(rl)) {
        put(o, "<h3>Cost and roofline</h3>\n");
        if (json_is_object(eff)) kv_table(o, eff, NULL);
        if (json_is_object(rl)) {
            static const char *const rk[] = {"target", "peak GFLOP/s", "bandwidth GB/s", "ideal bound ms", "unfused bound ms",
                                             "measured p50 ms", "achieved (ideal)", "reason"};
            const char *k;
            json_t *t;
            size_t j;
            put(o, "<table class=\"sortable\"><thead><tr>");
            for (j = 0; j < sizeof rk / sizeof *rk; j++) put(o, "<th>%s</th>", rk[j]);
            put(o, "</tr></thead><tbody>");
            json_object_foreach((json_t *)rl, k, t) {
                char b[40];
                put(o, "<tr><td>");
                rpx__h_esc(o, k);
                put(o, "</td><td>%s</td><td>", rpx__h_num3(b, sizeof b, rpx__h_jnum(json_object_get(json_object_get(t, "peak_dense"), "tflops")) * 1e3));
                put_value(o, json_object_get(t, "memory_bandwidth_gbps"));
                put(o, "</td><td>");
                put_value(o, json_object_get(json_object_get(t, "ideal"), "latency_ms"));
                put(o, "</td><td>");
                put_value(o, json_object_get(json_object_get(t, "unfused"), "latency_ms"));
                put(o, "</td><td>");
                put_value(o, json_object_get(t, "measured_p50_ms"));
                put(o, "</td><td>");
                put_value(o, json_object_get(json_object_get(t, "achieved_fraction"), "ideal"));
                put(o, "</td><td>");
                put_value(o, json_object_get(t, "reason"));
                put(o, "</td></tr>\n");
            }
            put(o, "</tbody></table>\n");
            rpx__h_fig_roofline(o, r, id);
        }
    }
    if (json_is_object(rt)) {
        static const char *const bk[] = {"hz", "budget_ms", "beta", "realtime"};
        json_t *rest = json_deep_copy(rt);
        put(o, "<h3>Real-time budget</h3>\n");
        rows_table(o, json_object_get(rt, "rates"), bk, 4);
        json_object_del(rest, "rates");
        kv_table(o, rest, NULL);
        json_decref(rest);
    }
    run_http(o, r, id);
    if (json_is_object(json_object_get(r, "pacing"))) { put(o, "<h3>Pacing</h3>"); kv_table(o, json_object_get(r, "pacing"), NULL); }
    if (json_is_object(card)) {
        json_t *c = json_deep_copy(card);
        json_t *cond = json_incref(json_object_get(card, "conditions"));
        json_object_del(c, "conditions");
        json_object_del(c, "warnings");
        put(o, "<h3>System card</h3>\n<details open><summary>system_card</summary><div class=\"wide\">");
        kv_table(o, c, NULL);
        put(o, "</div></details>\n");
        if (json_is_object(cond)) {
            put(o, "<h3>Conditions</h3>\n<div class=\"wide\">");
            kv_table(o, cond, NULL);
            put(o, "</div>\n");
        }
        json_decref(cond);
        json_decref(c);
    }
    {   /* the rest of the top level: identity, timer, inputs */
        static const char *const keep[] = {"schema", "created_utc", "model_callable", "target_kind", "timing_scope", "device",
                                           "precision", "unit", "warmup_calls", "measured_calls", "failed_calls", "inputs_file",
                                           "inputs_sha256", "wall_time_ms", "isolated", "processes", "timer", "inputs",
                                           "placement", "stopping", "metadata", "tool"};
        json_t *id_ = json_object();
        size_t j;
        for (j = 0; j < sizeof keep / sizeof *keep; j++)
            if (json_object_get(r, keep[j])) json_object_set(id_, keep[j], json_object_get(r, keep[j]));
        put(o, "<details><summary>Run settings, inputs, timer, placement</summary><div class=\"wide\">");
        kv_table(o, id_, NULL);
        put(o, "</div></details>\n");
        json_decref(id_);
    }
    put(o, "</section>\n");
}

/* ---- a comparison ---------------------------------------------------------- */

/* Two batch folders compared row by row (compare DIR DIR --json). */
static void compare_rows_view(hout *o, const json_t *c)
{
    static const char *const keys[] = {"task", "model", "status", "verdict", "p50_ratio", "p50_ratio_ci", "p95_ratio",
                                       "mean_ratio", "p_value_holm", "reason"};
    put(o, "<section class=\"compare\" id=\"compare\">\n<h2>Comparison of two batch folders: ");
    rpx__h_esc(o, jstr(c, "new"));
    put(o, " against ");
    rpx__h_esc(o, jstr(c, "base"));
    put(o, "</h2>\n<p class=\"headline\">");
    put_jnum(o, json_object_get(c, "compared"));
    put(o, " (task, model) rows compared, ");
    put_jnum(o, json_object_get(c, "refused"));
    put(o, " refused; geometric mean of the p50 ratios new/base: ");
    put_jnum(o, json_object_get(c, "geomean_p50_ratio"));
    put(o, ".</p>\n<div class=\"wide\">");
    rows_table(o, json_object_get(c, "rows"), keys, sizeof keys / sizeof *keys);
    put(o, "</div>\n");
    if (json_array_size(json_object_get(c, "only_in_base")) || json_array_size(json_object_get(c, "only_in_new"))) {
        put(o, "<div class=\"alert\"><b>Not in both</b><ul>");
        list_items(o, json_object_get(c, "only_in_base"), "only-base");
        list_items(o, json_object_get(c, "only_in_new"), "only-new");
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
        list_items(o, json_object_get(c, "warnings"), "warning");
        list_items(o, json_object_get(c, "notes"), "note");
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
        put(o, "<h3>Everything the comparison states</h3><div class=\"wide\">");
        kv_table(o, rest, NULL);
        put(o, "</div>\n");
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
    put_jnum(o, json_object_get(v, "profiles_found"));
    put(o, " reports, %zu errors, %zu warnings.</p>\n", json_array_size(json_object_get(v, "errors")),
        json_array_size(json_object_get(v, "warnings")));
    if (json_array_size(json_object_get(v, "errors"))) {
        put(o, "<div class=\"alert error\" role=\"alert\"><b>Errors</b><ul>");
        list_items(o, json_object_get(v, "errors"), "error");
        put(o, "</ul></div>\n");
    }
    if (json_array_size(json_object_get(v, "warnings"))) {
        put(o, "<div class=\"alert\"><b>Warnings</b><ul>");
        list_items(o, json_object_get(v, "warnings"), "warning");
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
        run_view(&o, in->runs[i], in->run_names ? in->run_names[i] : NULL, id);
    }
    rpx__h_page_close(&o, NULL);
    if (o.oom) {
        free(o.p);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory writing the HTML report");
    }
    *html = o.p;
    return 0;
}
