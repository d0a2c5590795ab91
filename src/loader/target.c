/* target.c — owns the --model grammar, the lifecycle every kind shares, and
 * finding the files that ship with rpxprof (the demo and Python plugin). */
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

#define DEMO_PREFIX "rpxprof-demo:"
#define DEMO_FILE "librpxprof-demo.so" /* also in companions.c */

int rpx_target_files(const char *spec, char ***files, size_t *n_files, rpx_error *err)
{
    char buf[PATH_MAX], **list = NULL, **mod = NULL;
    size_t n = 0, n_mod = 0, i;
    const char *kind, *colon;
    int bad = 0;
    *files = NULL;
    *n_files = 0;
    if (!spec || !*spec) return 0;
    kind = rpx_target_kind_name(spec);
    colon = strrchr(spec, ':');
    if (strcmp(kind, "http") == 0) {
        bad = rpx__strv_push(&list, &n, rpx__plugin_path("http", buf, sizeof buf));
    } else if (strcmp(kind, "python") == 0) {
        char *module = strndup(spec, (size_t)(colon - spec));
        bad = !module || rpx__strv_push(&list, &n, rpx__plugin_path("python", buf, sizeof buf));
        if (!bad && rpx__python_module_files(module, &mod, &n_mod) == 0)
            for (i = 0; i < n_mod; i++) bad |= rpx__strv_push(&list, &n, mod[i]);
        for (i = 0; i < n_mod; i++) free(mod[i]);
        free(mod);
        free(module);
    } else if (colon && colon > spec) {
        size_t plen = (size_t)(colon - spec);
        if (plen + 1 == strlen(DEMO_PREFIX) && strncmp(spec, DEMO_PREFIX, plen) == 0)
            bad = rpx__strv_push(&list, &n, rpx_demo_library_path(buf, sizeof buf));
        else if (plen < sizeof buf) {
            snprintf(buf, sizeof buf, "%.*s", (int)plen, spec);
            bad = rpx__strv_push(&list, &n, buf);
        }
    }
    if (bad) {
        for (i = 0; i < n; i++) free(list[i]);
        free(list);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    *files = list;
    *n_files = n;
    return 0;
}

static void target_free(rpx_target *t)
{
    if (!t) return;
    if (t->unload_fn) t->unload_fn(t);
    if (t->handle) dlclose(t->handle);
    free(t->spec);
    free(t->display_spec);
    free(t->path);
    free(t->symbol);
    free(t);
}

static int valid_identifier(const char *s, size_t n, int dots)
{
    size_t i;
    if (n == 0 || s[0] == '.' || s[n - 1] == '.' || isdigit((unsigned char)s[0])) return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '.' && dots && s[i + 1] != '.' && !isdigit((unsigned char)s[i + 1])) continue;
        if (!(isalnum(c) || c == '_')) return 0;
    }
    return 1;
}

/* http:// or https://, in any case (curl reads schemes case-insensitively) */
static int is_url(const char *spec)
{
    return strncasecmp(spec, "http://", 7) == 0 || strncasecmp(spec, "https://", 8) == 0;
}

/* PATH:SYMBOL names a shared object when PATH has a '/' or looks like a library. */
static int names_shared_object(const char *spec, size_t plen)
{
    return memchr(spec, '/', plen) != NULL || (plen > 3 && strncmp(spec + plen - 3, ".so", 3) == 0) ||
           memmem(spec, plen, ".so.", 4) != NULL;
}

const char *rpx_target_kind_name(const char *spec)
{
    const char *colon;
    size_t plen;
    if (!spec) return "shared_object";
    if (is_url(spec)) return "http";
    colon = strrchr(spec, ':');
    if (!colon) return "shared_object";
    plen = (size_t)(colon - spec);
    if ((plen + 1 == strlen(DEMO_PREFIX) && strncmp(spec, DEMO_PREFIX, plen) == 0) ||
        names_shared_object(spec, plen) || !valid_identifier(spec, plen, 1))
        return "shared_object";
    return "python";
}

static int out_of_memory(rpx_target *t, rpx_error *err)
{
    target_free(t);
    return rpx_error_set(err, RPX_ENOMEM, "out of memory");
}

int rpx_target_check_spec(const char *spec, rpx_error *err)
{
    const char *colon;
    char *shown;
    int rc;
    if (!spec || !*spec)
        return rpx_error_set(err, RPX_EINVAL,
                             "--model is empty; give PATH/lib.so:SYMBOL, rpxprof-demo:SYMBOL, "
                             "module:function or an http(s):// URL");
    if (is_url(spec)) return 0;
    shown = rpx_target_redact_spec(spec); /* it may hold credentials */
    if (!shown) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    colon = strrchr(spec, ':');
    if (strstr(spec, "://"))
        rc = rpx_error_set(err, RPX_EUNSUPPORTED,
                           "--model %s: only http:// and https:// URLs are supported", shown);
    else if (!colon || colon == spec || !colon[1])
        rc = rpx_error_set(err, RPX_EINVAL,
                           "--model %s: expected PATH/lib.so:SYMBOL, rpxprof-demo:SYMBOL, "
                           "module:function or an http(s):// URL (missing ':SYMBOL'?)",
                           shown);
    else if (!valid_identifier(colon + 1, strlen(colon + 1), 0))
        rc = rpx_error_set(err, RPX_EINVAL,
                           "--model %s: '%s' is not a valid function name (letters, digits, "
                           "'_', not starting with a digit)",
                           shown, colon + 1);
    else
        rc = 0;
    free(shown);
    return rc;
}

int rpx_target_open_ex(const char *spec, const rpx_target_options *opt, rpx_target **out,
                       rpx_error *err)
{
    static const rpx_target_options none;
    rpx_target *t;
    const char *colon;
    size_t plen;
    int rc;
    *out = NULL;
    if (!opt) opt = &none;
    if (!spec || !*spec)
        return rpx_error_set(err, RPX_EINVAL,
                             "--model is empty; give PATH/lib.so:SYMBOL, rpxprof-demo:SYMBOL, "
                             "module:function or an http(s):// URL");
    t = calloc(1, sizeof *t);
    if (!t) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    t->spec = strdup(spec);
    t->display_spec = rpx_target_redact_spec(spec);
    if (!t->spec || !t->display_spec) return out_of_memory(t, err);
    if (opt->custom) {
        const rpx_target_custom *c = opt->custom;
        if (!c->call) {
            target_free(t);
            return rpx_error_set(err, RPX_EINVAL, "%s: a caller-made target needs a call", spec);
        }
        t->kind = strcmp(c->kind_name ? c->kind_name : "", "python") == 0
                      ? RPX_TARGET_PYTHON
                      : RPX_TARGET_SHARED_OBJECT;
        t->kind_name = c->kind_name ? c->kind_name : "shared_object";
        t->call = c->call;
        t->state = c->state;
        t->setup_fn = c->setup;
        t->teardown_fn = c->teardown;
        t->after_call_fn = c->after_call;
        t->peaks_reset_fn = c->peaks_reset;
        t->section_fn = c->section;
        t->samples_fn = c->samples;
        t->outputs_fn = c->outputs;
        *out = t;
        return 0;
    }
    if (is_url(spec)) {
        t->kind = RPX_TARGET_HTTP;
        t->kind_name = "http";
        rc = rpx__http_open(t, opt, err);
        goto opened;
    }
    if (strstr(spec, "://")) { /* shown redacted: it may hold credentials */
        rc = rpx_error_set(err, RPX_EUNSUPPORTED,
                           "--model %s: only http:// and https:// URLs are supported",
                           t->display_spec);
        target_free(t);
        return rc;
    }
    colon = strrchr(spec, ':');
    if (!colon || colon == spec || !colon[1]) {
        target_free(t);
        return rpx_error_set(err, RPX_EINVAL,
                             "--model %s: expected PATH/lib.so:SYMBOL, rpxprof-demo:SYMBOL, "
                             "module:function or an http(s):// URL (missing ':SYMBOL'?)",
                             spec);
    }
    plen = (size_t)(colon - spec);
    if (!valid_identifier(colon + 1, strlen(colon + 1), 0)) {
        target_free(t);
        return rpx_error_set(err, RPX_EINVAL,
                             "--model %s: '%s' is not a valid function name (letters, digits, "
                             "'_', not starting with a digit)",
                             spec, colon + 1);
    }
    t->symbol = strdup(colon + 1);
    if (!t->symbol) return out_of_memory(t, err);
    if (strncmp(spec, DEMO_PREFIX, plen + 1) == 0 && plen + 1 == strlen(DEMO_PREFIX)) {
        char buf[PATH_MAX];
        if (!rpx_demo_library_path(buf, sizeof buf)) {
            target_free(t);
            return rpx_error_set(err, RPX_ENOTFOUND,
                                 "--model %s: the packaged demo library %s was found neither "
                                 "next to rpxprof nor where it is installed; build the project "
                                 "(cmake --build build) or set RPX_DEMO_LIBRARY",
                                 spec, DEMO_FILE);
        }
        t->path = strdup(buf);
    } else if (names_shared_object(spec, plen)) {
        /* a bare file name is never searched on the library path: it names a file here */
        if (memchr(spec, '/', plen))
            t->path = strndup(spec, plen);
        else if ((t->path = malloc(plen + 3)) != NULL)
            snprintf(t->path, plen + 3, "./%.*s", (int)plen, spec);
    } else {
        if (!valid_identifier(spec, plen, 1)) {
            target_free(t);
            return rpx_error_set(err, RPX_EINVAL,
                                 "--model %s: '%.*s' is neither a shared object (write its path "
                                 "with a '/': ./lib.so:SYMBOL) nor a Python module name "
                                 "(my_model or package.module)",
                                 spec, (int)plen, spec);
        }
        t->kind = RPX_TARGET_PYTHON;
        t->kind_name = "python";
        t->path = strndup(spec, plen);
        if (!t->path) return out_of_memory(t, err);
        rc = rpx__python_open(t, opt, err);
        goto opened;
    }
    if (!t->path) return out_of_memory(t, err);
    t->kind = RPX_TARGET_SHARED_OBJECT;
    t->kind_name = "shared_object";
    rc = rpx__shared_object_open(t, err);
opened:
    if (rc) {
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
    if (!t->setup_fn) {
        t->setup_done = 1;
        return 0;
    }
    memset(&merr, 0, sizeof merr);
    rc = t->setup_fn(&t->state, inputs, info, &merr);
    merr.message[sizeof merr.message - 1] = '\0'; /* the model may fill it to the end */
    if (rc != 0) {
        if (t->kind != RPX_TARGET_SHARED_OBJECT)
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
    if (!t || !t->samples_fn) return 0;
    memset(&merr, 0, sizeof merr);
    rc = t->samples_fn(t->state, samples, n, writable, &merr);
    merr.message[sizeof merr.message - 1] = '\0';
    if (rc != 0)
        return rpx_error_set(err, merr.code ? merr.code : RPX_EMODEL, "--model %s: %s",
                             t->display_spec, merr.message[0] ? merr.message : "cannot take the samples");
    return 0;
}

json_t *rpx_target_section(rpx_target *t)
{
    return t && t->section_fn ? t->section_fn(t->state) : NULL;
}

void rpx_target_close(rpx_target *t)
{
    if (!t) return;
    if (t->setup_done && t->teardown_fn) t->teardown_fn(t->state);
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
