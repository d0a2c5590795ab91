/* Unit tests for src/runner/options.c: a run's options described once (the
 * table), set from text or numbers with one range check and one message in
 * the caller's spelling, and rpx_runner_config_check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rpxprof/options.h"
#include "rpxprof/runner.h"
#include "test_files.h"

/* Every name and key once; help, a field inside the config; the defaults
 * pass the check; key = name with '_' for '-' (--gpu's key is gpus: the
 * field's and the manifest's name). */
static void test_table(void **st)
{
    size_t n, i, j;
    const rpx_run_option *t = rpx_run_options(&n);
    rpx_runner_config c;
    rpx_error err = {0};
    (void)st;
    assert_true(n > 30);
    for (i = 0; i < n; i++) {
        char key[64];
        size_t k;
        assert_non_null(t[i].help);
        assert_true(t[i].help[0] != '\0');
        assert_true(t[i].offset < sizeof(rpx_runner_config));
        assert_ptr_equal(rpx_run_option_find(t[i].name), &t[i]);
        assert_ptr_equal(rpx_run_option_find(t[i].key), &t[i]);
        snprintf(key, sizeof key, "%s", t[i].name);
        for (k = 0; key[k]; k++)
            if (key[k] == '-') key[k] = '_';
        if (strcmp(t[i].name, "gpu") != 0) assert_string_equal(key, t[i].key);
        if (t[i].kind == RPX_OPT_ENUM) assert_non_null(t[i].choices);
        for (j = 0; j < i; j++) {
            assert_string_not_equal(t[i].name, t[j].name);
            assert_string_not_equal(t[i].key, t[j].key);
        }
    }
    rpx_runner_config_init(&c);
    c.model = "rpxprof-demo:demo_noop";
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_CLI, &err), 0);
    assert_int_equal(c.repeats, 1000);
    assert_int_equal(c.warmup, 10);
    assert_int_equal(c.isolate, 1);
    assert_true(isnan(c.flops));
    assert_string_equal(c.device, "cpu");
    assert_string_equal(c.unit, "request");
    assert_int_equal(c.max_failures, 100);
}

/* One range, one message: the caller's spelling, the same words after it. */
static void test_set_and_messages(void **st)
{
    const char *why = "give a whole number from 1 to 10000000 (every timed call keeps its sample "
                      "in memory and in the report; split a longer measurement into several runs)";
    char want[400];
    rpx_runner_config c;
    rpx_error err = {0};
    (void)st;
    rpx_runner_config_init(&c);
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("repeats"), "0", "--repeats",
                                             &err), RPX_EUSAGE);
    snprintf(want, sizeof want, "--repeats '0': %s", why);
    assert_string_equal(err.message, want);
    assert_int_equal(rpx_run_option_set_number(&c, rpx_run_option_find("repeats"), 2e7, "repeats",
                                               &err), RPX_EUSAGE);
    snprintf(want, sizeof want, "repeats '20000000': %s", why);
    assert_string_equal(err.message, want);
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("repeats"), "2.5", "--repeats",
                                             &err), RPX_EUSAGE);
    assert_int_equal(c.repeats, 1000); /* untouched by a refusal */
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("repeats"), "12", "--repeats",
                                             &err), 0);
    assert_int_equal(c.repeats, 12);
    /* the kinds */
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("target-precision"), "1%",
                                             "--target-precision", &err), 0);
    assert_true(fabs(c.target_precision - 0.01) < 1e-15);
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("keep-events"), "0",
                                             "--keep-events", &err), 0);
    assert_int_equal(c.target.keep_events, -1); /* 0: none */
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("no-isolate"), NULL,
                                             "--no-isolate", &err), 0);
    assert_int_equal(c.isolate, 0);
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("load-engine"), "sockets",
                                             "--load-engine", &err), 0);
    assert_int_equal(c.target.load_engine, 2);
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("device"), "tpu", "--device",
                                             &err), RPX_EUSAGE);
    assert_string_equal(err.message, "--device 'tpu': expected cpu or cuda");
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("precision"), "",
                                             "--precision", &err), RPX_EUSAGE);
    assert_string_equal(err.message, "--precision is empty; give e.g. fp32, fp16, bf16, int8");
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("grace"), "0", "--grace",
                                             &err), 0);
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("timeout"), "0", "--timeout",
                                             &err), RPX_EUSAGE);
    assert_string_equal(err.message, "--timeout '0': give a number of seconds above 0");
}

/* rpx_runner_config_check: a config filled by hand (the Python extension,
 * a manifest) is refused with the key's spelling; the command line's. */
static void test_check(void **st)
{
    rpx_runner_config c;
    rpx_error err = {0};
    (void)st;
    rpx_runner_config_init(&c);
    c.model = "rpxprof-demo:demo_noop";
    c.repeats = 0;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), RPX_EUSAGE);
    assert_true(strncmp(err.message, "repeats '0': give a whole number from 1 to 10000000", 50) == 0);
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_CLI, &err), RPX_EUSAGE);
    assert_true(strncmp(err.message, "--repeats '0': give", 19) == 0);
    c.repeats = 5;
    c.processes = 101;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "processes '101': give a whole number from 1 to 100");
    c.processes = 0;
    c.gpu_time = 1;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "gpu_time needs device cuda (it traces GPU kernels)");
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_CLI, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "--gpu-time needs --device cuda (it traces GPU kernels)");
    c.device = "cuda";
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), 0);
    c.processes = 2;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "gpu_time traces the kernels of one process; give processes 1");
    c.processes = 0;
    c.gpu_time = 0;
    c.device = "tpu";
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "device 'tpu': expected cpu or cuda");
    c.device = "cpu";
    c.model = "http://127.0.0.1:9/x";
    c.flops = 5;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), RPX_EUSAGE);
    assert_true(strncmp(err.message, "flops describes the model", 25) == 0);
}

/* The front ends: which take an option, how each spells it, which options a
 * front end set (given), and the rules that read them, worded per front end. */
static void test_front_ends_and_rules(void **st)
{
    const rpx_run_option *mt = rpx_run_option_find("max_time");
    const rpx_run_option *rep = rpx_run_option_find("repeats");
    rpx_runner_config c;
    rpx_error err = {0};
    char buf[64];
    (void)st;
    assert_string_equal(rpx_run_option_spelled(mt, RPX_SPELL_CLI, buf, sizeof buf), "--max-time");
    assert_string_equal(rpx_run_option_spelled(mt, RPX_SPELL_KEY, buf, sizeof buf), "max_time");
    assert_string_equal(rpx_run_option_spelled(mt, RPX_SPELL_PY, buf, sizeof buf), "max_time=");
    assert_string_equal(rpx_run_option_spelled(mt, RPX_SPELL_COMPARE, buf, sizeof buf),
                        "--max-time");
    assert_true(rpx_run_option_accepted(mt, RPX_SPELL_CLI));
    assert_true(rpx_run_option_accepted(mt, RPX_SPELL_PY));
    assert_false(rpx_run_option_accepted(mt, RPX_SPELL_MANIFEST));
    /* compare --run takes --max-time since --auto (auto-ranging's budget); not
     * --target-precision */
    assert_true(rpx_run_option_accepted(mt, RPX_SPELL_COMPARE));
    assert_false(rpx_run_option_accepted(rpx_run_option_find("target_precision"),
                                         RPX_SPELL_COMPARE));
    assert_true(rpx_run_option_accepted(rep, RPX_SPELL_MANIFEST));
    assert_true(rpx_run_option_accepted(rep, RPX_SPELL_COMPARE));
    /* --max-time bounds --target-precision: given, not a value that differs */
    rpx_runner_config_init(&c);
    c.model = "rpxprof-demo:demo_noop";
    assert_false(rpx_run_option_given(&c, mt));
    assert_int_equal(rpx_run_option_set_text(&c, mt, "60", "--max-time", &err), 0);
    assert_true(rpx_run_option_given(&c, mt));
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_CLI, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "--max-time bounds --target-precision; give both");
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_PY, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "max_time= bounds target_precision=; give both");
    c.target_precision = 0.01;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_PY, &err), 0);
    /* an option Python does not take, as Python says it */
    c.isolate = 0;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_PY, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "target_precision= adds worker processes; drop "
                                     "processes=None");
    c.isolate = 1;
    /* a bad value from Python is named by its key */
    c.repeats = 0;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_PY, &err), RPX_EUSAGE);
    assert_true(strncmp(err.message, "repeats '0': give", 17) == 0);
    /* paced calls: --duration needs --rate; --repeats beside them is refused */
    rpx_runner_config_init(&c);
    c.model = "rpxprof-demo:demo_noop";
    c.target.load_duration_s = 2;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "duration S paces the calls for S seconds; give rate HZ too "
                                     "(HZ x S timed calls)");
    c.rate_hz = 10;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), 0);
    assert_int_equal(rpx_run_option_set_number(&c, rep, 1000, "repeats", &err), 0);
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_CLI, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "--repeats and --rate x --duration both set the number of "
                                     "timed calls; give one");
    /* an HTTP-only option on another target, named as the front end spells it */
    rpx_runner_config_init(&c);
    c.model = "rpxprof-demo:demo_noop";
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("drain"), "1", "drain",
                                             &err), 0);
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "drain is for HTTP API targets (model http(s)://...), not "
                                     "rpxprof-demo:demo_noop");
    /* an API's open-loop load: --rate needs --duration */
    rpx_runner_config_init(&c);
    c.model = "http://127.0.0.1:9/x";
    c.rate_hz = 10;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_CLI, &err), RPX_EUSAGE);
    assert_string_equal(err.message, "--rate 10 needs --duration S (the schedule sends rate x "
                                     "duration requests)");
}

/* Every option of the table is documented in docs/cli.md as --NAME. */
static void test_documented(void **st)
{
    size_t n, i, len;
    const rpx_run_option *t = rpx_run_options(&n);
    char *doc = (char *)rpx_test_slurp(RPX_SOURCE_DIR "/docs/cli.md", &len);
    (void)st;
    doc[len] = '\0';
    for (i = 0; i < n; i++) {
        char opt[80];
        snprintf(opt, sizeof opt, "`--%s", t[i].name);
        if (!strstr(doc, opt)) fail_msg("docs/cli.md does not document %s`", opt);
    }
    free(doc);
}

/* `rpxprof run --help` is made from the table: src/cli/run.c's help places
 * every table option with a line "@NAME" (print_help), once. */
/* --cpus's grammar (rpx_runner_cpus_list) and its messages through the table */
static void test_cpus_list(void **st)
{
    int cpus[8], n;
    rpx_error err = {0};
    rpx_runner_config c;
    (void)st;
    assert_int_equal(rpx_runner_cpus_list("1", cpus, 8, &err), 1);
    assert_int_equal(cpus[0], 1);
    assert_int_equal(rpx_runner_cpus_list("2-3", cpus, 8, &err), 2);
    assert_int_equal(cpus[0] * 10 + cpus[1], 23);
    n = rpx_runner_cpus_list("5,0-1,3,1", cpus, 8, &err); /* ascending, once each */
    assert_int_equal(n, 4);
    assert_int_equal(cpus[0] * 1000 + cpus[1] * 100 + cpus[2] * 10 + cpus[3], 135);
    assert_int_equal(rpx_runner_cpus_list("0-9", cpus, 8, &err), 8); /* at most max */
    assert_int_equal(rpx_runner_cpus_list("3-1", cpus, 8, &err), RPX_EUSAGE);
    assert_non_null(strstr(err.message, "goes backwards"));
    assert_int_equal(rpx_runner_cpus_list("1,,2", cpus, 8, &err), RPX_EUSAGE);
    assert_int_equal(rpx_runner_cpus_list("-1", cpus, 8, &err), RPX_EUSAGE);
    assert_int_equal(rpx_runner_cpus_list("1-", cpus, 8, &err), RPX_EUSAGE);
    assert_int_equal(rpx_runner_cpus_list(" 1", cpus, 8, &err), RPX_EUSAGE);
    assert_int_equal(rpx_runner_cpus_list("", cpus, 8, &err), RPX_EUSAGE);
    assert_int_equal(rpx_runner_cpus_list("100000", cpus, 8, NULL), RPX_EUSAGE);
    /* through the options: in the caller's spelling */
    rpx_runner_config_init(&c);
    c.model = "rpxprof-demo:demo_noop";
    assert_int_equal(rpx_run_option_set_text(&c, rpx_run_option_find("cpus"), "x", "cpus", &err), 0);
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_KEY, &err), RPX_EUSAGE);
    assert_non_null(strstr(err.message, "cpus 'x': not a list of CPUs"));
    c.cpus = NULL;
    c.spread = 1;
    c.isolate = 0;
    assert_int_equal(rpx_runner_config_check(&c, RPX_SPELL_CLI, &err), RPX_EUSAGE);
    assert_non_null(strstr(err.message, "--spread"));
    assert_non_null(strstr(err.message, "drop --no-isolate"));
}

static void test_help_places_every_option(void **st)
{
    size_t n, i, len;
    const rpx_run_option *t = rpx_run_options(&n);
    char *src = (char *)rpx_test_slurp(RPX_SOURCE_DIR "/src/cli/run.c", &len);
    (void)st;
    src[len] = '\0';
    for (i = 0; i < n; i++) {
        char marker[80];
        const char *at;
        snprintf(marker, sizeof marker, "\"@%s\\n\"", t[i].name);
        at = strstr(src, marker);
        if (!at) fail_msg("src/cli/run.c's help does not place --%s (a line %s)", t[i].name, marker);
        if (strstr(at + 1, marker)) fail_msg("src/cli/run.c's help places --%s twice", t[i].name);
    }
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_set_and_messages),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_front_ends_and_rules),
        cmocka_unit_test(test_documented),
        cmocka_unit_test(test_help_places_every_option),
        cmocka_unit_test(test_cpus_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
