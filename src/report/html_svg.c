/* html_svg.c — owns embedding a figure read from a file (an aggregate
 * folder's figure.svg) into the HTML page: the SVG is parsed and rewritten
 * with drawing elements and presentation attributes only. Everything else
 * (script, foreignObject, links, images, animation, style, event handlers,
 * comments, processing instructions, CDATA) is left out with its content, and
 * every text and attribute value is escaped again, so a crafted file cannot
 * put markup or script into the page. */
#include <ctype.h>
#include <string.h>

#include "report/html_int.h"

static const char *const elements[] = {
    "svg", "g", "path", "line", "polyline", "polygon", "rect", "circle", "ellipse",
    "text", "tspan", "title", "desc", NULL};

static const char *const attributes[] = {
    "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "dx", "dy", "width",
    "height", "d", "points", "transform", "viewBox", "class", "id", "fill", "stroke",
    "stroke-width", "stroke-dasharray", "stroke-linecap", "stroke-linejoin", "stroke-opacity",
    "fill-opacity", "opacity", "font-size", "font-family", "font-weight", "font-style",
    "text-anchor", "dominant-baseline", "xmlns", "version", "preserveAspectRatio", "role",
    "aria-label", NULL};

static int listed(const char *const *list, const char *s, size_t n)
{
    size_t i;
    for (i = 0; list[i]; i++)
        if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0) return 1;
    return 0;
}

static int name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == ':' || c == '.';
}

/* Text or an attribute value as found in the file, escaped again: '<', '>',
 * '"' and '\'' become references; '&' stays only where it starts a character
 * or entity reference. */
static void put_text(hout *o, const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (c == '<') rpx__sb_str(o, "&lt;");
        else if (c == '>') rpx__sb_str(o, "&gt;");
        else if (c == '"') rpx__sb_str(o, "&quot;");
        else if (c == '\'') rpx__sb_str(o, "&#39;");
        else if (c == '&') {
            size_t j = i + 1;
            if (j < n && s[j] == '#') j++;
            while (j < n && j - i < 12 && isalnum((unsigned char)s[j])) j++;
            if (j < n && s[j] == ';' && j > i + 1 && !(j == i + 2 && s[i + 1] == '#'))
                rpx__sb_add(o, s + i, j - i + 1), i = j;
            else
                rpx__sb_str(o, "&amp;");
        } else {
            rpx__sb_add(o, &c, 1);
        }
    }
}

/* The attributes of a start tag from p (after its name) to its '>' at end:
 * the allowed ones written. Returns 1 when the tag closes itself ("/>"). */
static int put_attributes(hout *o, const char *p, const char *end)
{
    int self = end > p && end[-1] == '/';
    if (self) end--;
    while (p < end) {
        const char *n0, *v0 = NULL;
        size_t nn, vn = 0;
        while (p < end && isspace((unsigned char)*p)) p++;
        n0 = p;
        while (p < end && name_char(*p)) p++;
        nn = (size_t)(p - n0);
        if (!nn) { p++; continue; }
        while (p < end && isspace((unsigned char)*p)) p++;
        if (p < end && *p == '=') {
            p++;
            while (p < end && isspace((unsigned char)*p)) p++;
            if (p < end && (*p == '"' || *p == '\'')) {
                char q = *p++;
                v0 = p;
                while (p < end && *p != q) p++;
                vn = (size_t)(p - v0);
                if (p < end) p++;
            } else {
                v0 = p;
                while (p < end && !isspace((unsigned char)*p)) p++;
                vn = (size_t)(p - v0);
            }
        }
        if (v0 && listed(attributes, n0, nn)) {
            rpx__sb_str(o, " ");
            rpx__sb_add(o, n0, nn);
            rpx__sb_str(o, "=\"");
            put_text(o, v0, vn);
            rpx__sb_str(o, "\"");
        }
    }
    return self;
}

/* The end of the tag that starts at p ('<'): its '>' outside quotes, or NULL. */
static const char *tag_end(const char *p)
{
    char q = 0;
    for (p++; *p; p++) {
        if (q) { if (*p == q) q = 0; }
        else if (*p == '"' || *p == '\'') q = *p;
        else if (*p == '>') return p;
    }
    return NULL;
}

#define MAX_DEPTH 64

void rpx__h_svg_clean(hout *o, const char *svg)
{
    const char *p = svg ? strstr(svg, "<svg") : NULL;
    const char *open[MAX_DEPTH]; /* the names of the elements written and still open */
    size_t open_n[MAX_DEPTH];
    int skip = 0;                /* depth inside an element left out */
    int depth = 0;
    while (p && *p) {
        const char *lt = strchr(p, '<'), *gt, *n0;
        size_t nn;
        if (!lt) break;          /* text after the last tag: outside the root */
        if (lt > p && !skip && depth) put_text(o, p, (size_t)(lt - p));
        if (strncmp(lt, "<!--", 4) == 0) {
            const char *e = strstr(lt + 4, "-->");
            p = e ? e + 3 : NULL;
            continue;
        }
        if (strncmp(lt, "<![CDATA[", 9) == 0) {
            const char *e = strstr(lt + 9, "]]>");
            p = e ? e + 3 : NULL;
            continue;
        }
        if (!(gt = tag_end(lt))) break;
        p = gt + 1;
        if (lt[1] == '?' || lt[1] == '!') continue;
        if (lt[1] == '/') {
            n0 = lt + 2;
            for (nn = 0; name_char(n0[nn]); nn++) continue;
            if (skip) skip--;
            else if (depth > 0 && open_n[depth - 1] == nn && !memcmp(open[depth - 1], n0, nn)) {
                rpx__sb_str(o, "</");
                rpx__sb_add(o, n0, nn);
                rpx__sb_str(o, ">");
                if (--depth == 0) break; /* the root closed: nothing after it */
            }
            continue;
        }
        n0 = lt + 1;
        for (nn = 0; name_char(n0[nn]); nn++) continue;
        if (!nn) {               /* a '<' that starts no tag: text */
            if (!skip && depth) rpx__sb_str(o, "&lt;");
            p = lt + 1;
            continue;
        }
        if (skip || !listed(elements, n0, nn) || depth == MAX_DEPTH ||
            (depth == 0 && !(nn == 3 && !memcmp(n0, "svg", 3)))) {
            if (gt[-1] != '/') skip++;
            if (depth == 0 && !skip) break;
            continue;
        }
        rpx__sb_str(o, "<");
        rpx__sb_add(o, n0, nn);
        if (put_attributes(o, n0 + nn, gt)) {
            rpx__sb_str(o, "/>");
            if (depth == 0) break; /* a root that closes itself */
        } else {
            rpx__sb_str(o, ">");
            open[depth] = n0;
            open_n[depth++] = nn;
        }
    }
    while (depth-- > 0) {        /* a file cut short: close what is open */
        rpx__sb_str(o, "</");
        rpx__sb_add(o, open[depth], open_n[depth]);
        rpx__sb_str(o, ">");
    }
}
