/* comparable.c — owns the check every comparison of two reports makes before
 * any statistics (issue 36 §1; docs/statistics.md#comparability): their
 * sessions' fingerprints (src/session/) compared field by field. A different
 * CPU model, core count, GPU model, device, precision or inputs digest gives
 * the verdict `incomparable` with what differs (never a ratio, never exit 3);
 * any other difference, such as the kernel or rpxprof's version, is a note
 * beside the verdict. Called by `rpxprof compare`, rpxprof.compare (both
 * through rpx_compare_reports) and rpx_compare_json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "compare/comparable.h"
#include "rpxprof/session.h"

/* a value as the words show it: a string bare, anything else as JSON */
static void put_value(rpx_strbuf *s, const json_t *v)
{
    char *t;
    if (json_is_string(v)) {
        rpx__sb_printf(s, "'%s'", json_string_value(v));
        return;
    }
    t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    rpx__sb_str(s, t ? t : "?");
    free(t);
}

/* "machine.kernel differs: '6.1.0' in BASE but '6.12.0' in NEW" */
static json_t *diff_words(const json_t *d, const char *bn, const char *nn)
{
    rpx_strbuf s = {0};
    json_t *out;
    rpx__sb_printf(&s, "%s differs: ", json_string_value(json_object_get(d, "field")));
    put_value(&s, json_object_get(d, "base"));
    rpx__sb_printf(&s, " in %s but ", bn);
    put_value(&s, json_object_get(d, "new"));
    rpx__sb_printf(&s, " in %s", nn);
    if (!strcmp(json_string_value(json_object_get(d, "effect")), "note"))
        rpx__sb_str(&s, " (the sessions are compared; read the verdict with this difference in mind)");
    out = s.oom || !s.p ? NULL : json_string(s.p);
    free(s.p);
    return out;
}

static json_t *incomparable_result(const char *bn, const json_t *sb, const char *nn, const json_t *sn,
                                   const rpx_compare_opts *opts, json_t *diffs, json_t *words)
{
    json_t *o = json_object();
    size_t i;
    static const char *const stats[] = {"p50", "p95", "mean"};
    if (!o) return NULL;
    json_object_set_new(o, "base", json_string(bn));
    json_object_set_new(o, "new", json_string(nn));
    json_object_set_new(o, "verdict", json_string("incomparable"));
    for (i = 0; i < 3; i++) {
        char k[32];
        snprintf(k, sizeof k, "%s_verdict", stats[i]);
        json_object_set_new(o, k, json_string("incomparable"));
        snprintf(k, sizeof k, "%s_ratio", stats[i]);
        json_object_set_new(o, k, json_null());
        snprintf(k, sizeof k, "%s_ratio_ci", stats[i]);
        json_object_set_new(o, k, json_null());
    }
    json_object_set_new(o, "p_value", json_null());
    json_object_set_new(o, "threshold", json_real(opts ? opts->threshold : 0.01));
    json_object_set_new(o, "confidence", json_real(opts ? opts->confidence : 0.95));
    json_object_set_new(o, "why", json_string(
        "the two sessions' fingerprints differ in what makes times comparable (CPU model, core "
        "count, GPU model, device, precision or inputs): no ratio is stated; measure both on the "
        "same machine with the same work"));
    json_object_set_new(o, "base_session", json_copy(json_object_get(sb, "id")));
    json_object_set_new(o, "new_session", json_copy(json_object_get(sn, "id")));
    json_object_set_new(o, "differences", diffs);
    json_object_set_new(o, "notes", words);
    json_object_set_new(o, "warnings", json_array());
    return o;
}

int rpx__cmp_comparable(const char *base_name, const json_t *base, const char *new_name,
                        const json_t *new_report, const rpx_compare_opts *opts, json_t *notes,
                        json_t **differences, json_t **incomparable, rpx_error *err)
{
    json_t *sb = NULL, *sn = NULL, *diffs = NULL, *words = NULL, *d;
    const json_t *ib, *in;
    size_t i;
    int ok, rc = 0;
    *incomparable = NULL;
    if (differences) *differences = NULL;
    if ((rc = rpx_session_of_report(base, &sb, err)) != 0 ||
        (rc = rpx_session_of_report(new_report, &sn, err)) != 0)
        goto done;
    ib = json_object_get(sb, "id");
    in = json_object_get(sn, "id");
    /* one session: the two sides were measured together on purpose */
    if (json_is_string(ib) && json_equal((json_t *)ib, (json_t *)in) &&
        !json_is_true(json_object_get(sb, "derived")))
        goto done;
    ok = rpx_session_comparable(sb, sn, &diffs);
    if (ok < 0 || !(words = json_array())) {
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
        goto done;
    }
    json_array_foreach(diffs, i, d) {
        int refuses = !strcmp(json_string_value(json_object_get(d, "effect")), "incomparable");
        if (ok == 0 && !refuses) continue; /* an incomparable result names what refuses first */
        if (ok == 1 && !notes) continue;
        json_array_append_new(ok == 0 ? words : notes, diff_words(d, base_name, new_name));
    }
    if (ok == 0) {
        json_array_foreach(diffs, i, d) /* then the notes */
            if (strcmp(json_string_value(json_object_get(d, "effect")), "incomparable"))
                json_array_append_new(words, diff_words(d, base_name, new_name));
        *incomparable = incomparable_result(base_name, sb, new_name, sn, opts, diffs, words);
        diffs = words = NULL;
        if (!*incomparable) rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    } else if (differences) {
        *differences = diffs; /* the notes' fields, for the result's "differences" */
        diffs = NULL;
    }
done:
    json_decref(sb);
    json_decref(sn);
    json_decref(diffs);
    json_decref(words);
    return rc;
}
