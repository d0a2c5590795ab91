/* strbuf.h — a growable text buffer for the writers of JSON, CSV, Markdown and
 * SVG, a growable list of strings (paths), and the shortest round-trip
 * formatting of a double. An allocation
 * failure sets `oom` and later appends do nothing; the owner checks it once. */
#ifndef RPX_COMMON_STRBUF_H
#define RPX_COMMON_STRBUF_H

#include <stddef.h>

typedef struct rpx_strbuf {
    char *p;                      /* NUL-terminated once anything was added; free() it */
    size_t len, cap;
    int oom;
} rpx_strbuf;

void rpx__sb_add(rpx_strbuf *b, const char *s, size_t n);
void rpx__sb_str(rpx_strbuf *b, const char *s);
void rpx__sb_printf(rpx_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append a copy of `s` to the NULL-terminated list *list of *n malloc'ed
 * strings (a list of paths); NULL or "" adds nothing. 0, or -1 out of memory
 * (the list is left as it was). */
int rpx__strv_push(char ***list, size_t *n, const char *s);

/* The shortest "%.Ng" that reads back as v, in the C locale whatever the
 * process's locale; v must be finite. `size` >= 32. */
void rpx__fmt_shortest(char *buf, size_t size, double v);

#endif
