/* http_load.c — owns the open-loop load's front: the engine chosen for the
 * URL (plain sockets where they can serve it, else curl's multi interface),
 * the open-file limit fitted to --concurrency before the schedule begins, the
 * run handed to the chosen engine, and the report's http.load section. The
 * schedule and its counts are http_schedule.c's; the engines are
 * http_load_sock.c and http_load_curl.c. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "http/http_engines.h"
#include "http/http_load.h"
#include "rpxprof/memory.h"

#define FD_SPARE 8                /* descriptors kept free beside the connections (curl's
                                   * own, the resolver's, the report's) */

struct rpx_http_load {
    rpx_http_sched *sched;
    rpx_http_sock *sock;          /* the sockets engine; NULL: curl's */
    const char *engine_reason;    /* why curl's engine under --load-engine auto */
};

int rpx__http_load_create(const rpx_http_load_opts *o, rpx_http_load **out, rpx_error *err)
{
    rpx_http_load *l = calloc(1, sizeof *l);
    *out = l;
    if (!l) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    return rpx__sched_create(o, &l->sched, err);
}

void rpx__http_load_destroy(rpx_http_load *l)
{
    if (!l) return;
    rpx__http_sock_destroy(l->sock);
    rpx__sched_destroy(l->sched);
    free(l);
}

int rpx__http_load_prepare(rpx_http_load *l, const char *url, const char *display_url,
                           const char *method, const struct curl_slist *headers,
                           const char *body, size_t body_len, int send_body, int http2,
                           rpx_error *err)
{
    const int engine = rpx__sched_opts(l->sched)->engine;
    const char *reason = NULL;
    int rc;
    if (engine == RPX_LOAD_ENGINE_CURL) {
        l->engine_reason = "--load-engine curl";
        return 0;
    }
    if (rpx__sched_opts(l->sched)->next_body) {
        if (engine == RPX_LOAD_ENGINE_SOCKETS)
            return rpx_error_set(err, RPX_EINVAL,
                                 "--load-engine sockets sends one prepared request, and the bodies "
                                 "vary (--body-template, --nonce); use --load-engine curl (or auto)");
        l->engine_reason = "bodies that vary (--body-template, --nonce)";
        return 0;
    }
    if (http2) {
        reason = "--http2 (HTTP/2 is curl's)";
    } else {
        rc = rpx__http_sock_create(url, method, headers, body, body_len, send_body,
                                   &l->sock, &reason, err);
        if (rc != 0) return rc;
    }
    if (!l->sock) {
        if (engine == RPX_LOAD_ENGINE_SOCKETS)
            return rpx_error_set(err, RPX_EINVAL,
                                 "--load-engine sockets: --model %s cannot be sent on plain "
                                 "sockets: %s; use --load-engine curl (or auto)",
                                 display_url, reason);
        l->engine_reason = reason;
    }
    return 0;
}

void rpx__http_load_set_stream(rpx_http_load *l, rpx_http_stream *s)
{
    rpx__sched_set_stream(l->sched, s);
}

void rpx__http_load_plan(rpx_http_load *l, long n)
{
    rpx__sched_plan(l->sched, n);
}

int rpx__http_load_remote(const rpx_http_load *l, char *buf, size_t size)
{
    return l->sock ? rpx__http_sock_remote(l->sock, buf, size) : -1;
}

const char *rpx__http_load_engine(const rpx_http_load *l)
{
    return l->sock ? "sockets" : "curl";
}

/* Descriptors this process holds now; -1 when /proc/self/fd cannot be read. */
static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    long n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* Every request in flight holds a socket: the soft open-file limit is raised
 * to what --concurrency needs (up to the hard limit); where even the hard
 * limit is too low, the concurrency is lowered to fit, and the report says so.
 * A request is never sent into a limit it cannot pass (EMFILE), which would
 * count it as sent and blame the server. */
static void fit_fd_limit(rpx_http_load *l)
{
    const long asked = rpx__sched_concurrency(l->sched);
    long used = open_fds();
    struct rlimit rl;
    rlim_t need;
    char note[400];
    if (used < 0) used = 64; /* no /proc: assume a generous count */
    need = (rlim_t)(used + asked + FD_SPARE);
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return;
    {
        struct rlimit want = rl;
        want.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
        if (want.rlim_cur > rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &want) == 0) rl = want;
    }
    if (rl.rlim_cur >= need) return;
    {
        long fit = (long)rl.rlim_cur - used - FD_SPARE;
        if (fit < 1) fit = 1;
        snprintf(note, sizeof note,
                 "--concurrency %ld lowered to %ld: the open-file limit (ulimit -n) is %llu, "
                 "its hard limit %llu, and this process holds %ld files; raise the hard limit "
                 "(ulimit -Hn) to send %ld requests at once",
                 asked, fit, (unsigned long long)rl.rlim_cur,
                 rl.rlim_max == RLIM_INFINITY ? 0ULL : (unsigned long long)rl.rlim_max, used,
                 asked);
        rpx__sched_clamp_concurrency(l->sched, fit, note);
    }
}

int rpx__http_load_run(rpx_http_load *l, CURL *tmpl, const rpx_run_config *cfg,
                       rpx_run_result *res, rpx_http_load_done_fn done, void *ud,
                       rpx_error *err)
{
    int rc;
    fit_fd_limit(l);
    if ((rc = rpx__sched_begin(l->sched, cfg->repeats, done, ud, err)) != 0) return rc;
    rpx_memory_begin_inference(&res->memory);
    if (l->sock)
        rc = rpx__http_sock_run(l->sock, l->sched, cfg, res, err);
    else
        rc = rpx__http_curl_run(l->sched, tmpl, cfg, res, err);
    rpx_memory_end_inference(&res->memory);
    rpx__sched_end(l->sched);
    return rc;
}

json_t *rpx__http_load_json(const rpx_http_load *l)
{
    json_t *o = json_object();
    if (!o) return NULL;
    rpx__sched_json(l->sched, o);
    json_object_set_new(o, "engine", json_string(rpx__http_load_engine(l)));
    json_object_set_new(o, "engine_reason",
                        l->engine_reason ? json_string(l->engine_reason) : json_null());
    return o;
}
