/* target.c — owns the lifecycle every kind shares (open through the kinds
 * table, setup, samples, section, close), the redaction of specs and the
 * HTTP option texts the CLI checks (--slo, secret headers). */
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "rpxprof/error.h"
#include "rpxprof/target.h"
#include "loader/kinds.h"

static void target_free(rpx_target *t)
{
    if (!t) return;
    if (t->hooks.unload) t->hooks.unload(t->hooks.state);
    if (t->handle) dlclose(t->handle);
    free(t->spec);
    free(t->display_spec);
    free(t->path);
    free(t->symbol);
    free(t);
}

static int out_of_memory(rpx_target *t, rpx_error *err)
{
    target_free(t);
    return rpx_error_set(err, RPX_ENOMEM, "out of memory");
}

int rpx_target_open_ex(const char *spec, const rpx_target_options *opt, rpx_target **out,
                       rpx_error *err)
{
    static const rpx_target_options none;
    const rpx_kind *kind;
    rpx_target *t;
    int rc;
    *out = NULL;
    if (!opt) opt = &none;
    if (!spec || !*spec) return rpx__kind_match(spec, spec, &kind, err);
    t = calloc(1, sizeof *t);
    if (!t) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    t->spec = strdup(spec);
    t->display_spec = rpx_target_redact_spec(spec);
    if (!t->spec || !t->display_spec) return out_of_memory(t, err);
    if (opt->custom) { /* the caller's hooks, as a kind's open would fill them */
        if (!opt->custom->call) {
            target_free(t);
            return rpx_error_set(err, RPX_EINVAL, "%s: a caller-made target needs a call", spec);
        }
        t->kind = rpx__kind_named(opt->custom->kind_name);
        t->kind_name = opt->custom->kind_name ? opt->custom->kind_name : t->kind->name;
        t->hooks = *opt->custom;
        *out = t;
        return 0;
    }
    /* the grammar through the kinds table; shown redacted: it may hold credentials */
    if ((rc = rpx__kind_match(spec, t->display_spec, &kind, err)) != 0) {
        target_free(t);
        return rc;
    }
    t->kind = kind;
    t->kind_name = kind->name;
    if ((rc = kind->open(t, opt, err)) != 0) {
        target_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int rpx_target_open(const char *spec, rpx_target **out, rpx_error *err)
{
    return rpx_target_open_ex(spec, NULL, out, err);
}

int rpx_target_setup(rpx_target *t, const rpx_inputs *inputs, const rpx_run_info *info,
                     rpx_error *err)
{
    rpx_error merr;
    int rc;
    if (!t) return RPX_EINVAL;
    /* a setup that fails cleans up after itself: teardown runs only after success */
    if (!t->hooks.setup) {
        t->setup_done = 1;
        return 0;
    }
    memset(&merr, 0, sizeof merr);
    rc = t->hooks.setup(&t->hooks.state, inputs, info, &merr);
    if (rc != 0) {
        if (!rpx__kind_has(t->kind, RPX_KIND_C_ABI))
            return rpx_error_set(err, merr.code ? merr.code : RPX_EMODEL, "--model %s: %s",
                                 t->display_spec,
                                 merr.message[0] ? merr.message : "setup failed");
        return rpx_error_set(err, RPX_EMODEL, "--model %s: %s_setup failed (returned %d): %s",
                             t->spec, t->symbol, rc,
                             merr.message[0] ? merr.message : "no message given");
    }
    t->setup_done = 1;
    return 0;
}

int rpx_target_samples(rpx_target *t, const rpx_inputs *samples, size_t n, int writable,
                       rpx_error *err)
{
    rpx_error merr;
    int rc;
    if (!t || !t->hooks.samples) return 0;
    memset(&merr, 0, sizeof merr);
    rc = t->hooks.samples(t->hooks.state, samples, n, writable, &merr);
    if (rc != 0)
        return rpx_error_set(err, merr.code ? merr.code : RPX_EMODEL, "--model %s: %s",
                             t->display_spec, merr.message[0] ? merr.message : "cannot take the samples");
    return 0;
}

json_t *rpx_target_section(rpx_target *t)
{
    return t && t->hooks.section ? t->hooks.section(t->hooks.state) : NULL;
}

void rpx_target_close(rpx_target *t)
{
    if (!t) return;
    if (t->setup_done && t->hooks.teardown) t->hooks.teardown(t->hooks.state);
    target_free(t);
}

/* --- redaction ---------------------------------------------------------- */

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

static double slo_duration_ms(const char *v, int *ok)
{
    char *end;
    double x = strtod(v, &end);
    *ok = end != v && x >= 0 && isfinite(x);
    if (!*ok) return 0;
    if (strcmp(end, "ms") == 0 || *end == '\0') return x;
    if (strcmp(end, "s") == 0) return x * 1e3;
    if (strcmp(end, "us") == 0) return x / 1e3;
    *ok = 0;
    return 0;
}

int rpx_http_slo_parse(const char *slo, double *ttft_ms, double *tpot_ms, double *e2e_ms,
                       rpx_error *err)
{
    char *copy, *tok, *save = NULL;
    int rc = 0;
    *ttft_ms = *tpot_ms = *e2e_ms = (double)NAN;
    if (!slo || !*slo)
        return rpx_error_set(err, RPX_EINVAL, "--slo is empty; write e.g. ttft=500ms,tpot=50ms");
    if (!(copy = strdup(slo))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int ok = 0;
        double v;
        if (eq) *eq = '\0';
        v = eq ? slo_duration_ms(eq + 1, &ok) : 0;
        if (!eq || !ok)
            rc = rpx_error_set(err, RPX_EINVAL,
                               "--slo %s: '%s' is not NAME=DURATION; write e.g. "
                               "ttft=500ms,tpot=50ms,e2e=2s (ms when no unit)",
                               slo, tok);
        else if (strcmp(tok, "ttft") == 0) *ttft_ms = v;
        else if (strcmp(tok, "tpot") == 0) *tpot_ms = v;
        else if (strcmp(tok, "e2e") == 0 || strcmp(tok, "e2el") == 0) *e2e_ms = v;
        else
            rc = rpx_error_set(err, RPX_EINVAL,
                               "--slo %s: unknown name '%s'; the SLOs are ttft, tpot and e2e",
                               slo, tok);
    }
    free(copy);
    return rc;
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
