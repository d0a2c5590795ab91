/* kind_http.c — the HTTP API kind: an http:// or https:// URL (any case, as
 * curl reads schemes); run by the plugin librpxprof-http.so (libcurl), so
 * that rpxprof itself never loads libcurl and its TLS stack. The model runs
 * remotely: its cost, device and bounds are not measured here. Also the
 * text of --slo (rpx_http_slo_parse), which the CLI checks before a run. */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/kinds.h"
#include "loader/kv.h"
#include "loader/plugins.h"
#include "rpxprof/error.h"

#ifndef RPX_HTTP_INSTALLED_PATH
#define RPX_HTTP_INSTALLED_PATH NULL
#endif

static const rpx_kind_plugin plugin = {RPX_HTTP_PLUGIN_FILE, "RPX_HTTP_PLUGIN",
                                       RPX_HTTP_INSTALLED_PATH, 0};

static const char *const schemes[] = {"http://", "https://", NULL};

/* The options that cross to the plugin, by name (the runner's fields of
 * rpx_target_options stay the host's own): a new HTTP option is one line. */
#define F(name, type, field) {name, type, offsetof(rpx_target_options, field), 0}
static const rpx_kv_field fields[] = {
    F("inputs", RPX_KVF_TEXT, inputs_path),
    F("body", RPX_KVF_TEXT, body_path),
    {"header", RPX_KVF_TEXTS, offsetof(rpx_target_options, headers),
     offsetof(rpx_target_options, n_headers)},
    F("method", RPX_KVF_TEXT, method),
    F("connect_timeout_s", RPX_KVF_DOUBLE, connect_timeout_s),
    F("timeout_s", RPX_KVF_DOUBLE, total_timeout_s),
    F("insecure", RPX_KVF_INT, insecure),
    F("http2", RPX_KVF_INT, http2),
    F("stream", RPX_KVF_TEXT, stream),
    F("tokens_field", RPX_KVF_TEXT, tokens_field),
    F("keep_events", RPX_KVF_LONG, keep_events),
    F("slo", RPX_KVF_TEXT, slo),
    F("rate", RPX_KVF_DOUBLE, load_rate),
    F("poisson", RPX_KVF_INT, load_poisson),
    F("duration_s", RPX_KVF_DOUBLE, load_duration_s),
    F("concurrency", RPX_KVF_LONG, load_concurrency),
    F("seed", RPX_KVF_ULL, load_seed),
    F("load_engine", RPX_KVF_INT, load_engine),
    F("drain_s", RPX_KVF_DOUBLE, load_drain_s),
    F("allow_warmup_failures", RPX_KVF_INT, allow_warmup_failures),
    F("output_field", RPX_KVF_TEXT, output_field),
    F("body_template", RPX_KVF_TEXT, body_template),
    F("prompts", RPX_KVF_TEXT, prompts_path),
    F("prompt_field", RPX_KVF_TEXT, prompt_field),
    F("prompts_sample", RPX_KVF_INT, prompts_sample),
    F("nonce", RPX_KVF_TEXT, nonce_field),
    F("body_repeat", RPX_KVF_INT, body_repeat),
    F("nonce_prefix", RPX_KVF_INT, nonce_prefix),
    F("bodies_first", RPX_KVF_LONG, bodies_first),
};
#undef F
#define N_FIELDS (sizeof fields / sizeof fields[0])

int rpx__http_options_write(const rpx_target_options *opt, rpx_kv_list *out)
{
    return rpx__kv_write(fields, N_FIELDS, opt, out);
}

int rpx__http_options_read(const rpx_kv_list *kv, rpx_target_options *opt, rpx_error *err)
{
    return rpx__kv_read(fields, N_FIELDS, "the http plugin", kv, opt, sizeof *opt, err);
}

static int open_http(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    char buf[PATH_MAX];
    rpx_kv_list kv;
    int rc;
    if (rpx__http_options_write(opt, &kv) != 0) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    rc = rpx__plugin_open("http", &plugin, t, &kv, err);
    free((void *)kv.items);
    if (rc == RPX_EUNSUPPORTED && !rpx__plugin_path(&plugin, buf, sizeof buf))
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--model %s: HTTP API targets need %s, which was found neither next "
                             "to rpxprof nor where it is installed; build the project (cmake "
                             "--build build) or set RPX_HTTP_PLUGIN",
                             t->display_spec, RPX_HTTP_PLUGIN_FILE);
    return rc;
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

const rpx_kind rpx__kind_http = {
    .name = "http",
    .schemes = schemes,
    .open = open_http,
    .plugin = &plugin,
    .caps = RPX_KIND_REMOTE | RPX_KIND_REQUESTS | RPX_KIND_OWN_LOAD,
    .default_processes = 1,
    .words = "an HTTP API",
    .what = "an HTTP request: the network, the server and the machine it runs on",
    .scope = "http_request_wall_time: the request sent and the response read in full over a "
             "kept-alive connection; preloaded_body",
    .scope_load = "http_open_loop_latency: from each request's intended send time on the "
                  "--rate schedule to the last byte of its answer (http.load); preloaded_body",
};
