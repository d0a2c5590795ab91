/* history_check.c — owns `rpxprof history check`: each series of the history
 * through rpx_history_check (the "stats" module's change points and newest
 * verdict, include/rpxprof/history_check.h), printed; exit 3 with
 * --fail-on-regression only when a newest verdict is `slower`; and the word
 * of a --benchmark that matched nothing (rpx__cli_history_no_benchmark, which
 * `history show` uses too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/history_cli.h"
#include "common/json.h"
#include "rpxprof/history.h"

#include "rpxprof/history_check.h"

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "n/a";
}

static void print_check(const json_t *r)
{
    size_t i;
    const json_t *c, *nw = json_object_get(r, "newest");
    rpx_cli_term_printf(stdout, "%s on fingerprint %s: %lld session%s\n",
                        str(json_object_get(r, "benchmark"), "name"),
                        str(r, "fingerprint_digest"),
                        (long long)json_integer_value(json_object_get(r, "sessions")),
                        json_integer_value(json_object_get(r, "sessions")) == 1 ? "" : "s");
    if (!json_array_size(json_object_get(r, "changes"))) puts("  changes: none");
    json_array_foreach(json_object_get(r, "changes"), i, c) {
        const json_t *ci = json_object_get(c, "ratio_ci");
        if (json_is_string(json_object_get(c, "text"))) { /* counts from 1, digits by the interval */
            rpx_cli_term_printf(stdout, "  change %s", str(c, "text"));
        } else {
            rpx_cli_term_printf(stdout, "  change before session %lld: %s -> %s",
                                (long long)json_integer_value(json_object_get(c, "index")) + 1,
                                str(c, "before_commit"), str(c, "after_commit"));
            printf(" ratio %.4g", json_number_value(json_object_get(c, "ratio")));
            if (json_array_size(ci) == 2)
                printf(" [%.4g, %.4g]", json_number_value(json_array_get(ci, 0)),
                       json_number_value(json_array_get(ci, 1)));
        }
        if (json_is_number(json_object_get(c, "p_value")))
            printf(" p %.2g", json_number_value(json_object_get(c, "p_value")));
        putchar('\n');
    }
    const json_t *sk = json_object_get(r, "newest_skipped");
    if (json_is_object(sk))
        rpx_cli_term_printf(stdout, "  newest session %s is not complete (status %s): left out "
                            "of the check\n", str(sk, "session"), str(sk, "status"));
    if (json_is_object(nw)) {
        rpx_cli_term_printf(stdout, "  newest %s (commit %s): %s", str(nw, "session"),
                            str(nw, "commit"), str(nw, "verdict"));
        /* the ratio and its interval are in `why`, to the digits the interval supports */
        rpx_cli_term_printf(stdout, "%s%s\n", json_is_string(json_object_get(nw, "why")) ? ": " : "",
                            json_is_string(json_object_get(nw, "why")) ? str(nw, "why") : "");
    }
}

/* the series' newest session, when not complete (timed_out, crashed...), is left out
 * of the check: r gets "newest_skipped": {"session", "status"} and the text says so */
static void mark_skipped(const json_t *series, json_t *r)
{
    const json_t *ss = json_object_get(series, "sessions");
    const json_t *last = json_array_get(ss, json_array_size(ss) ? json_array_size(ss) - 1 : 0);
    const char *st = json_string_value(json_object_get(last, "status"));
    if (!last || !st || !strcmp(st, "complete")) return;
    json_object_set_new(r, "newest_skipped", json_pack("{s:O?, s:s}", "session",
                        json_object_get(last, "id"), "status", st));
}

/* --benchmark B matched nothing: exit 1 naming the benchmarks the history holds
 * (a mistyped name must not pass a CI gate); 0 when B matched or none given */
int rpx__cli_history_no_benchmark(const char *cmd, const char *loc, rpx_history *h, const char *benchmark,
                                  const json_t *list)
{
    if (!benchmark || json_array_size(list)) return 0;
    json_t *all = NULL, *s;
    rpx_error err = {0};
    char names[1024] = "";
    size_t i, used = 0;
    if (rpx_history_series(h, NULL, &all, &err) < 0)
        return rpx_cli_fail(cmd, RPX_EXIT_FAILURE, "%s", err.message);
    json_array_foreach(all, i, s) {
        const json_t *b = json_object_get(s, "benchmark");
        const char *n = json_string_value(json_object_get(b, "name"));
        if (!n) n = json_string_value(json_object_get(b, "id"));
        if (!n || (used && strstr(names, n))) continue;
        int w = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", n);
        if (w < 0 || (size_t)w >= sizeof names - used) break;
        used += (size_t)w;
    }
    json_decref(all);
    return rpx_cli_fail(cmd, RPX_EXIT_FAILURE, "--benchmark %s: no such benchmark in history %s; "
                        "it holds: %s", benchmark, loc,
                        used ? names : "no sessions at all");
}

int rpx__cli_history_check(rpx__cli_history_args *a)
{
    rpx_history *h;
    rpx_error err = {0};
    json_t *list = NULL, *out = json_array(), *s;
    size_t i;
    int slower = 0;
    if (a->n_rest)
        return rpx_cli_fail("history check", RPX_EXIT_USAGE, "unexpected argument '%s'", a->rest[0]);
    if (rpx_history_open(a->history, RPX_HISTORY_READONLY, &h, &err) < 0)
        return rpx_cli_fail("history check", RPX_EXIT_FAILURE, "%s", err.message);
    int rc = rpx_history_series(h, a->benchmark, &list, &err);
    int nb = rc < 0 ? 0 : rpx__cli_history_no_benchmark("history check", a->history, h, a->benchmark, list);
    rpx_history_close(h);
    if (nb) {
        json_decref(list);
        json_decref(out);
        return nb;
    }
    rpx_history_check_opts o;
    rpx_history_check_defaults(&o);
    if (a->threshold_given) o.threshold = a->threshold;
    if (a->confirm_given) o.confirm = a->confirm; /* else the default (3) */
    json_array_foreach(list, i, s) {
        json_t *r = NULL;
        if (rc < 0 || (rc = rpx_history_check(s, &o, &r, &err)) < 0) break;
        mark_skipped(s, r);
        const char *v = json_string_value(json_object_get(json_object_get(r, "newest"), "verdict"));
        slower |= v && strcmp(v, "slower") == 0;
        json_array_append_new(out, r);
    }
    json_decref(list);
    if (rc < 0) {
        json_decref(out);
        return rpx_cli_fail("history check", RPX_EXIT_FAILURE, "%s", err.message);
    }
    if (a->json) {
        char *text = rpx_json_dumps(out);
        if (text) printf("%s\n", text);
        free(text);
    } else {
        json_array_foreach(out, i, s) {
            if (i) putchar('\n');
            print_check(s);
        }
        if (!json_array_size(out)) puts("no sessions");
    }
    json_decref(out);
    return slower && a->fail_on_regression ? RPX_EXIT_REGRESSION : RPX_EXIT_OK;
}
