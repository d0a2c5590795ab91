/* Unit tests of the session API (rpxprof/session.h, src/session/): the block
 * derived for a report written before sessions (deterministic id from its
 * start and content, "derived": true), a report's own block handed back, and
 * rpx_session_comparable's effects: CPU model, core count, precision and
 * inputs refuse; the kernel and rpxprof's version are notes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "rpxprof/session.h"

static json_t *old_report(const char *cpu, int cores, const char *kernel, const char *precision)
{
    json_t *r = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:{s:s, s:i, s:i, s:s}, s:{s:s}, s:{s:s}}}",
        "schema", "rpxprof.profile/1", "created_utc", "2026-12-06T09:47:00Z", "model_callable",
        "m.so:f", "target_kind", "shared_object", "precision", precision, "unit", "frame",
        "inputs_sha256", "4965f4f24758bff3252b8612eceb82f69fec0d5e69ffd566210fdd55adbb019d",
        "system_card", "cpu_name", cpu, "cpu", "model_name", cpu, "cores", cores, "threads", cores,
        "microcode", "0x1", "operating_system", "kernel_release", kernel, "build",
        "rpxprof_version", "0.1.0");
    assert_non_null(r);
    return r;
}

static const json_t *diff_of(const json_t *diffs, const char *field)
{
    size_t i;
    json_t *d;
    json_array_foreach(diffs, i, d)
        if (!strcmp(json_string_value(json_object_get(d, "field")), field)) return d;
    return NULL;
}

static void test_derived_block(void **st)
{
    json_t *r = old_report("CPU A", 4, "6.1", "fp32"), *s1 = NULL, *s2 = NULL;
    rpx_error err = {0};
    const char *id;
    (void)st;
    assert_int_equal(rpx_session_of_report(r, &s1, &err), 0);
    assert_int_equal(rpx_session_of_report(r, &s2, &err), 0);
    assert_true(json_is_true(json_object_get(s1, "derived")));
    id = json_string_value(json_object_get(s1, "id"));
    assert_non_null(id);
    assert_int_equal(strncmp(id, "20261206T094700Z-", 17), 0);
    assert_int_equal(strlen(id), 25);
    assert_string_equal(id, json_string_value(json_object_get(s2, "id"))); /* one file, one id */
    assert_string_equal(json_string_value(json_object_get(json_object_get(s1, "benchmark"), "inputs_digest")),
                        "sha256:4965f4f24758bff3252b8612eceb82f69fec0d5e69ffd566210fdd55adbb019d");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(json_object_get(s1, "fingerprint"), "machine"), "cpu_model")),
        "CPU A");
    assert_int_equal(strlen(json_string_value(json_object_get(json_object_get(s1, "fingerprint"), "digest"))), 16);
    assert_true(json_is_null(json_object_get(json_object_get(s1, "version"), "commit")));
    /* a report's own block comes back as it is */
    json_object_set(r, "session", s1);
    json_decref(s2);
    assert_int_equal(rpx_session_of_report(r, &s2, &err), 0);
    assert_ptr_equal(s2, s1);
    json_decref(s2);
    json_decref(s1);
    json_decref(r);
    assert_int_equal(rpx_session_of_report(NULL, &s1, &err), RPX_EINVAL);
    /* a batch report's code_sha ($RPX_GIT_SHA) is the derived block's commit */
    r = old_report("CPU A", 4, "6.1", "fp32");
    json_object_set_new(r, "code_sha", json_string("0123abcd"));
    assert_int_equal(rpx_session_of_report(r, &s1, &err), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(s1, "version"), "commit")), "0123abcd");
    assert_string_equal(json_string_value(json_object_get(json_object_get(s1, "version"), "commit_source")),
                        "code_sha");
    json_decref(s1);
    json_decref(r);
}

static int compared(json_t *a, json_t *b, json_t **diffs)
{
    json_t *sa = NULL, *sb = NULL;
    int rc;
    assert_int_equal(rpx_session_of_report(a, &sa, NULL), 0);
    assert_int_equal(rpx_session_of_report(b, &sb, NULL), 0);
    rc = rpx_session_comparable(sa, sb, diffs);
    json_decref(sa);
    json_decref(sb);
    json_decref(a);
    json_decref(b);
    return rc;
}

static void test_comparable(void **st)
{
    json_t *d = NULL;
    const json_t *x;
    (void)st;
    assert_int_equal(compared(old_report("A", 4, "6.1", "fp32"), old_report("A", 4, "6.1", "fp32"), &d), 1);
    assert_int_equal(json_array_size(d), 0);
    json_decref(d);
    /* the kernel: a note */
    assert_int_equal(compared(old_report("A", 4, "6.1", "fp32"), old_report("A", 4, "6.12", "fp32"), &d), 1);
    assert_non_null(x = diff_of(d, "machine.kernel"));
    assert_string_equal(json_string_value(json_object_get(x, "effect")), "note");
    assert_string_equal(json_string_value(json_object_get(x, "base")), "6.1");
    assert_string_equal(json_string_value(json_object_get(x, "new")), "6.12");
    json_decref(d);
    /* CPU model, core count, precision: incomparable */
    assert_int_equal(compared(old_report("A", 4, "6.1", "fp32"), old_report("B", 4, "6.1", "fp32"), &d), 0);
    assert_string_equal(json_string_value(json_object_get(diff_of(d, "machine.cpu_model"), "effect")), "incomparable");
    json_decref(d);
    assert_int_equal(compared(old_report("A", 4, "6.1", "fp32"), old_report("A", 8, "6.1", "fp32"), &d), 0);
    assert_string_equal(json_string_value(json_object_get(diff_of(d, "machine.cores"), "effect")), "incomparable");
    json_decref(d);
    assert_int_equal(compared(old_report("A", 4, "6.1", "fp32"), old_report("A", 4, "6.1", "fp16"), NULL), 0);
    /* not sessions */
    assert_true(rpx_session_comparable(NULL, NULL, &d) < 0);
    assert_null(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_derived_block),
        cmocka_unit_test(test_comparable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
