/* core_history.c — rpxprof._core's calls into the history (the pytest plugin's
 * --rpxprof-save and --rpxprof-compare, docs/python.md "pytest"): record a
 * report's session (rpx_history_record), and the verdict of a new report's session
 * against its series (the same benchmark on the same fingerprint): the series'
 * sessions with this one appended as the newest, checked by rpx_history_check,
 * whose interval holds the between-session spread. A session with no series of its
 * own but one of the same benchmark name elsewhere (another machine, other inputs)
 * is `incomparable`, with what differs: never a regression. */
#include "python/core_history.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "history/entry.h"
#include "rpxprof/error.h"
#include "rpxprof/history.h"
#include "rpxprof/history_check.h"
#include "rpxprof/runner.h"

/* "WHAT LOCATION: WHY" raised as RpxprofError (code 1) */
static PyObject *fail(PyObject *(*raise)(const char *, int), const char *what, const char *loc,
                      const char *why)
{
    char msg[sizeof ((rpx_error *)0)->message + 600];
    snprintf(msg, sizeof msg, "%s %s: %s", what, loc, why);
    return raise(msg, RPX_EXIT_FAILURE);
}

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    return json_is_object(v) ? v : (json_decref(v), NULL);
}

static PyObject *to_text(json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    PyObject *out = s ? PyUnicode_FromString(s) : PyErr_NoMemory();
    free(s);
    return out;
}

PyObject *rpx__core_history_record(PyObject *(*raise)(const char *, int), PyObject *args,
                                   PyObject *kw)
{
    static char *names[] = {"history", "report", "report_path", NULL};
    const char *loc, *text, *path = NULL;
    rpx_history *h = NULL;
    rpx_error err = {0};
    json_t *report, *recorded = NULL;
    PyObject *out;
    int rc;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|z", names, &loc, &text, &path)) return NULL;
    if (!(report = parse(text))) return raise("history_record: the report is not JSON", 2);
    rc = rpx_history_open(loc, RPX_HISTORY_CREATE, &h, &err);
    if (rc == 0) rc = rpx_history_record(h, report, path, &recorded, &err);
    rpx_history_close(h);
    json_decref(report);
    if (rc != 0) return fail(raise, "the session was not recorded in", loc, err.message);
    out = to_text(recorded);
    json_decref(recorded);
    return out;
}

/* Where a and b differ, as {"field": "fingerprint.machine.cpu_model", "base", "new"}
 * (objects walked key by key; at most 12). */
static void differ(const char *prefix, const json_t *a, const json_t *b, json_t *out)
{
    const char *k;
    json_t *v;
    char field[256];
    if (json_array_size(out) >= 12) return;
    if (json_is_object(a) && json_is_object(b)) {
        json_object_foreach((json_t *)a, k, v) {
            if (strcmp(k, "digest") == 0 || strcmp(k, "id") == 0) continue;
            snprintf(field, sizeof field, "%s.%s", prefix, k);
            differ(field, v, json_object_get(b, k), out);
        }
        json_object_foreach((json_t *)b, k, v) {
            if (json_object_get(a, k)) continue;
            snprintf(field, sizeof field, "%s.%s", prefix, k);
            differ(field, NULL, v, out);
        }
        return;
    }
    if (a && b && json_equal(a, b)) return;
    json_array_append_new(out, json_pack("{s:s, s:O, s:O}", "field", prefix,
                                         "base", a ? a : json_null(), "new", b ? b : json_null()));
}

/* No series of this session's own: one of its benchmark's name elsewhere makes it
 * incomparable (what differs, from the newest such series); none: no history. */
static json_t *no_series(rpx_history *h, const json_t *session, rpx_error *err)
{
    const json_t *bench = json_object_get(session, "benchmark"), *fp;
    const char *name = json_string_value(json_object_get(bench, "name"));
    json_t *list = NULL, *other = NULL, *diffs, *out, *s;
    size_t i;
    if (name && rpx_history_series(h, name, &list, err) == 0)
        json_array_foreach(list, i, s) { /* the newest series that is not this session's own */
            fp = json_object_get(s, "fingerprint");
            if (!json_equal(json_object_get(json_object_get(s, "benchmark"), "id"),
                            json_object_get(bench, "id")) ||
                !json_equal(json_object_get(fp, "digest"),
                            json_object_get(json_object_get(session, "fingerprint"), "digest")))
                other = s;
        }
    if (!other) {
        json_decref(list);
        return json_pack("{s:s, s:s, s:i}", "verdict", "no_history", "why",
                         "no earlier session of this benchmark in the history: record some "
                         "with --rpxprof-save", "baseline_sessions", 0);
    }
    diffs = json_array();
    differ("benchmark", json_object_get(other, "benchmark"), bench, diffs);
    differ("fingerprint", json_object_get(other, "fingerprint"),
           json_object_get(session, "fingerprint"), diffs);
    out = json_pack("{s:s, s:s, s:i, s:o}", "verdict", "incomparable", "why",
                    "the history holds this benchmark only on another machine fingerprint or "
                    "with other inputs: a new series starts here, never a regression",
                    "baseline_sessions", 0, "differs", diffs);
    json_decref(list);
    return out;
}

/* The session entry of a report of this run's head: its commit made the head's
 * own ("COMMIT (this run)"), so that the check's head is this run's sessions and
 * never earlier sessions of the same commit. NULL out of memory. */
static json_t *head_entry(const json_t *report)
{
    json_t *session = rpx__hist_session_of(report), *e, *c;
    const char *commit;
    if (!session) return NULL;
    e = rpx__hist_entry(report, session, NULL);
    json_decref(session);
    commit = json_string_value(json_object_get(e, "commit"));
    c = commit ? json_sprintf("%s (this run)", commit) : json_string("this run");
    if (!e || !c || json_object_set_new(e, "commit", c) != 0) { /* set_new takes c */
        if (!e) json_decref(c);
        json_decref(e);
        return NULL;
    }
    return e;
}

/* The series with this run's sessions (the report, then the head's others)
 * appended as the newest, checked. */
static json_t *check(const json_t *series, const json_t *report, const json_t *head,
                     double threshold, unsigned confirm, rpx_error *err)
{
    size_t base = json_array_size(json_object_get(series, "sessions")), i;
    rpx_history_check_opts o;
    json_t *s = json_deep_copy(series), *result = NULL, *newest, *r;
    const char *verdict, *why;
    int bad = !s || json_array_append_new(json_object_get(s, "sessions"), head_entry(report));
    json_array_foreach(head, i, r)
        bad = bad || json_array_append_new(json_object_get(s, "sessions"), head_entry(r));
    if (bad) {
        json_decref(s);
        rpx_error_set(err, RPX_ENOMEM, "out of memory");
        return NULL;
    }
    rpx_history_check_defaults(&o);
    o.threshold = threshold;
    o.confirm = confirm;
    if (rpx_history_check(s, &o, &result, err) != 0) {
        json_decref(s);
        return NULL;
    }
    json_decref(s);
    newest = json_object_get(result, "newest");
    verdict = json_string_value(json_object_get(newest, "verdict"));
    why = json_string_value(json_object_get(newest, "why"));
    return json_pack("{s:s, s:s, s:i, s:o}", "verdict", verdict ? verdict : "inconclusive",
                     "why", why ? why : "", "baseline_sessions", (int)base, "check", result);
}

PyObject *rpx__core_history_compare(PyObject *(*raise)(const char *, int), PyObject *args,
                                    PyObject *kw)
{
    static char *names[] = {"history", "report", "threshold", "confirm", "head", NULL};
    const char *loc, *text;
    PyObject *head_texts = NULL;
    double threshold = 0.01;
    unsigned confirm = 0;
    rpx_history *h = NULL;
    rpx_error err = {0};
    json_t *report, *session = NULL, *series = NULL, *out = NULL, *head;
    Py_ssize_t k;
    struct stat st;
    PyObject *res;
    int rc;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|dIO!", names, &loc, &text, &threshold,
                                     &confirm, &PyList_Type, &head_texts))
        return NULL;
    if (!(threshold > 0 && threshold < 1))
        return raise("threshold: a fraction above 0 and below 1 (0.01 for 1 %)", 2);
    if (!(report = parse(text))) return raise("history_compare: the report is not JSON", 2);
    if (!(head = json_array())) {
        json_decref(report);
        return PyErr_NoMemory();
    }
    for (k = 0; head_texts && k < PyList_GET_SIZE(head_texts); k++) { /* the confirming sessions */
        const char *t = PyUnicode_Check(PyList_GET_ITEM(head_texts, k))
                            ? PyUnicode_AsUTF8(PyList_GET_ITEM(head_texts, k)) : NULL;
        json_t *r = t ? parse(t) : NULL;
        if (!r || json_array_append_new(head, r) != 0) {
            json_decref(head);
            json_decref(report);
            PyErr_Clear();
            return raise("history_compare: head: a list of reports as JSON text", 2);
        }
    }
    if (!strstr(loc, "://") && stat(loc, &st) != 0) { /* an SQLite file not made yet */
        json_decref(report);
        json_decref(head);
        out = json_pack("{s:s, s:s+, s:i}", "verdict", "no_history", "why", loc,
                        " does not exist yet: record sessions with --rpxprof-save",
                        "baseline_sessions", 0);
        res = to_text(out);
        json_decref(out);
        return res;
    }
    session = rpx__hist_session_of(report);
    rc = session ? rpx_history_open(loc, RPX_HISTORY_READONLY, &h, &err)
                 : rpx_error_set(&err, RPX_ENOMEM, "out of memory");
    if (rc == 0) rc = rpx_history_series_of(h, report, &series, &err);
    if (rc == 0 && !(out = series ? check(series, report, head, threshold, confirm, &err)
                                  : no_series(h, session, &err)))
        rc = err.code ? err.code : RPX_ENOMEM;
    rpx_history_close(h);
    json_decref(series);
    json_decref(session);
    json_decref(report);
    json_decref(head);
    if (rc != 0) {
        json_decref(out);
        return fail(raise, "cannot compare with the history", loc, err.message);
    }
    res = to_text(out);
    json_decref(out);
    return res;
}

int rpx__core_history_spread(const char *loc, const char *base_path, const char *new_path,
                             json_t **spread, rpx_error *err)
{
    json_error_t je;
    json_t *base = json_load_file(base_path, 0, &je), *nw = NULL, *none;
    rpx_history *h = NULL;
    int rc;
    *spread = NULL;
    if (!base) return rpx_error_set(err, RPX_EFORMAT, "%s: %s", base_path, je.text);
    if (new_path && !(nw = json_load_file(new_path, 0, &je))) {
        json_decref(base);
        return rpx_error_set(err, RPX_EFORMAT, "%s: %s", new_path, je.text);
    }
    rc = rpx_history_open(loc, RPX_HISTORY_READONLY, &h, err);
    if (rc == 0) rc = rpx_history_compare_spread(h, base, nw, spread, err);
    if (rc == 0 && !*spread && (none = json_array()) != NULL) { /* none: the rule's own words */
        rc = rpx_between_session_spread(none, spread, err);
        json_decref(none);
    }
    rpx_history_close(h);
    json_decref(nw);
    json_decref(base);
    return rc;
}
