/* redact.c — owns keeping secrets out of reports and messages: a --model
 * URL's user:password, secret-looking query values and fragment
 * (rpx_target_redact_spec), and which HTTP headers carry secrets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rpxprof/target.h"

static int contains_ci(const char *s, size_t n, const char *word)
{
    size_t w = strlen(word), i;
    for (i = 0; i + w <= n; i++)
        if (strncasecmp(s + i, word, w) == 0) return 1;
    return 0;
}

static int secret_name(const char *s, size_t n)
{
    static const char *words[] = {"auth", "cookie", "key", "token", "secret", "pass", "pwd",
                                  "signature", "credential", "session", "sig", "jwt"};
    size_t i;
    for (i = 0; i < sizeof words / sizeof words[0]; i++)
        if (contains_ci(s, n, words[i])) return 1;
    return 0;
}

int rpx_http_header_is_secret(const char *name)
{
    return name && secret_name(name, strlen(name));
}

/* Anything with "://" is treated as a URL here, whatever its scheme, so that a
 * mistyped one is redacted too. The user:password part ends at the last '@'
 * before the query (a password may hold an unencoded '/', '#' or '@': redacting
 * too much is harmless, too little is not); in the query, the value of every
 * parameter with a secret-looking name (pairs split on '&' and ';'); the
 * fragment (never sent, and where OAuth puts access tokens) entirely. */
char *rpx_target_redact_spec(const char *spec)
{
    const char *host, *q, *at = NULL, *p, *frag;
    size_t len = strlen(spec);
    char *out = malloc(len * 9 + 16), *o; /* each char may become "REDACTED" */
    if (!out) return NULL;
    p = strstr(spec, "://");
    if (!p) {
        memcpy(out, spec, len + 1);
        return out;
    }
    o = out;
    host = p + 3;
    q = host + strcspn(host, "?");
    for (p = host; p < q; p++)
        if (*p == '@') at = p;
    memcpy(o, spec, (size_t)(host - spec));
    o += host - spec;
    if (at) {
        o += sprintf(o, "REDACTED@");
        host = at + 1;
    }
    if (!*q) { /* no query: a fragment may still follow the path */
        frag = host + strcspn(host, "#");
        memcpy(o, host, (size_t)(frag - host));
        o += frag - host;
        strcpy(o, *frag ? "#REDACTED" : "");
        return out;
    }
    memcpy(o, host, (size_t)(q + 1 - host));
    o += q + 1 - host;
    q++;
    while (*q && *q != '#') {
        size_t plen = strcspn(q, "&;#");
        const char *eq = memchr(q, '=', plen);
        if (eq && secret_name(q, (size_t)(eq - q))) {
            memcpy(o, q, (size_t)(eq + 1 - q));
            o += eq + 1 - q;
            o += sprintf(o, "REDACTED");
        } else {
            memcpy(o, q, plen);
            o += plen;
        }
        q += plen;
        if (*q == '&' || *q == ';') *o++ = *q++;
    }
    strcpy(o, *q == '#' ? "#REDACTED" : "");
    return out;
}
