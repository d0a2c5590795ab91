/* Unit tests for src/runner/audit.c with a stand-in pair runner: the audits
 * measure their arms through the runner they are given and compare the two
 * reports in memory (no output file, no temporary folder), so their verdicts
 * can be checked here on reports made to order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "report_maker.h"
#include "runner/runner_internal.h"

static int pairs_run, outputs_asked;

/* The stand-in: arm b is `b_scale` times arm a, except the seed audit's
 * (b's seed differs), whose arms take the same time. */
static double b_scale;
static int fake_pair(const rpx_runner_config *a, const rpx_runner_config *b, rpx_runner_result *ra,
                     rpx_runner_result *rb, rpx_error *err)
{
    int seed_arm = b->target.load_seed != a->target.load_seed;
    (void)err;
    pairs_run++;
    if (a->output || b->output) outputs_asked++;
    memset(ra, 0, sizeof *ra);
    memset(rb, 0, sizeof *rb);
    ra->report = rpx_test_report(1.0, "complete");
    rb->report = rpx_test_report(seed_arm ? 1.0 : b_scale, "complete");
    ra->warnings = json_array();
    rb->warnings = json_array();
    ra->status = rb->status = RPX_RUNNER_COMPLETE;
    return 0;
}

static void config(rpx_runner_config *c, const char *audit, const char **samples)
{
    rpx_runner_config_init(c);
    c->model = "./libm.so:predict";
    c->audit = audit;
    c->repeats = 100;
    /* two distinct samples (never read: the pair runner is a stand-in) */
    samples[0] = RPX_SOURCE_DIR "/README.md";
    samples[1] = RPX_SOURCE_DIR "/docs/audits.md";
    c->sample_files = samples;
    c->n_sample_files = 2;
}

/* The repeated input 30 % faster than the distinct ones: cache suspect, with
 * its warning; the seed arms alike: seed pass. Two pairs, no output file. */
static void test_audits_compare_in_memory(void **st)
{
    rpx_runner_config c;
    const char *samples[2];
    json_t *audit = NULL, *warnings = json_array();
    rpx_error err = {0};
    (void)st;
    config(&c, "cache,seed", samples);
    b_scale = 0.7;
    pairs_run = outputs_asked = 0;
    assert_int_equal(rpx__audit_run(&c, RPX__AUDIT_CACHE | RPX__AUDIT_SEED, 3, fake_pair, NULL, &audit, warnings, &err), 0);
    assert_int_equal(pairs_run, 2);
    assert_int_equal(outputs_asked, 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(audit, "cache"), "verdict")),
                        "suspect");
    assert_true(fabs(json_number_value(json_object_get(json_object_get(audit, "cache"), "ratio")) - 0.7) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(audit, "cache"), "processes")), 3);
    assert_string_equal(json_string_value(json_object_get(json_object_get(audit, "seed"), "verdict")),
                        "pass");
    assert_int_equal(json_array_size(warnings), 1);
    assert_non_null(strstr(json_string_value(json_array_get(warnings, 0)), "--audit cache: suspect"));
    json_decref(audit);
    json_decref(warnings);
}

/* The same time for both arms: cache pass, and no warning. */
static void test_no_cache_passes(void **st)
{
    rpx_runner_config c;
    const char *samples[2];
    json_t *audit = NULL, *warnings = json_array();
    rpx_error err = {0};
    (void)st;
    config(&c, "cache", samples);
    b_scale = 1.0;
    assert_int_equal(rpx__audit_run(&c, RPX__AUDIT_CACHE, 2, fake_pair, NULL, &audit, warnings, &err), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(audit, "cache"), "verdict")),
                        "pass");
    assert_null(json_object_get(audit, "seed"));
    assert_int_equal(json_array_size(warnings), 0);
    json_decref(audit);
    json_decref(warnings);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_audits_compare_in_memory),
        cmocka_unit_test(test_no_cache_passes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
