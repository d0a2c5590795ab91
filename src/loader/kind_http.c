/* kind_http.c — the HTTP API kind: an http:// or https:// URL (any case, as
 * curl reads schemes); run by the plugin librpxprof-http.so (libcurl), so
 * that rpxprof itself never loads libcurl and its TLS stack. The model runs
 * remotely: its cost, device and bounds are not measured here. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "loader/kinds.h"
#include "loader/plugins.h"
#include "rpxprof/error.h"

#ifndef RPX_HTTP_INSTALLED_PATH
#define RPX_HTTP_INSTALLED_PATH NULL
#endif

static const rpx_kind_plugin plugin = {RPX_HTTP_PLUGIN_FILE, "RPX_HTTP_PLUGIN",
                                       RPX_HTTP_INSTALLED_PATH, 0};

static const char *const schemes[] = {"http://", "https://", NULL};

static int open_http(rpx_target *t, const rpx_target_options *opt, rpx_error *err)
{
    char buf[PATH_MAX];
    int rc = rpx__plugin_open("http", &plugin, t, opt, err);
    if (rc == RPX_EUNSUPPORTED && !rpx__plugin_path(&plugin, buf, sizeof buf))
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--model %s: HTTP API targets need %s, which was found neither next "
                             "to rpxprof nor where it is installed; build the project (cmake "
                             "--build build) or set RPX_HTTP_PLUGIN",
                             t->display_spec, RPX_HTTP_PLUGIN_FILE);
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
