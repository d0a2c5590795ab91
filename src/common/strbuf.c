/* strbuf.c — owns the growable text buffer and shortest round-trip numbers. */
#include "common/strbuf.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow(rpx_strbuf *b, size_t need)
{
    size_t cap = b->cap ? b->cap : 4096;
    char *np;
    if (b->len + need + 1 <= b->cap) return 0;
    while (cap < b->len + need + 1) cap *= 2;
    np = realloc(b->p, cap);
    if (!np) {
        b->oom = 1;
        return -1;
    }
    b->p = np;
    b->cap = cap;
    return 0;
}

void rpx__sb_add(rpx_strbuf *b, const char *s, size_t n)
{
    if (b->oom || grow(b, n) != 0) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void rpx__sb_str(rpx_strbuf *b, const char *s)
{
    rpx__sb_add(b, s, strlen(s));
}

void rpx__sb_printf(rpx_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (b->oom) return;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (grow(b, (size_t)n) != 0) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void rpx__fmt_shortest(char *buf, size_t size, double v)
{
    static locale_t c_locale;
    locale_t old;
    int prec;
    if (!c_locale) c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    old = c_locale ? uselocale(c_locale) : (locale_t)0;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (old) uselocale(old);
}

int rpx__strv_push(char ***list, size_t *n, const char *s)
{
    char **p;
    char *c;
    if (!s || !*s) return 0;
    if (!(c = strdup(s))) return -1;
    if (!(p = realloc(*list, (*n + 2) * sizeof *p))) {
        free(c);
        return -1;
    }
    p[(*n)++] = c;
    p[*n] = NULL;
    *list = p;
    return 0;
}
