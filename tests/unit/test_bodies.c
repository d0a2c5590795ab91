/* Unit tests for the HTTP bodies that vary (src/loader/http_bodies.c:
 * --body-template at a dotted path, --prompts cycled or shuffled from the
 * seed, --nonce unique per body and prefixed for the cache audit, the errors)
 * and the Prometheus text parser of --server-metrics
 * (src/runner/server_metrics.c: labelled series summed, vLLM's names and the
 * older fallback, comments, malformed lines). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "loader/http_bodies.h"
#include "runner/runner_internal.h"

typedef struct fx {
    char dir[64], tmpl[128], prompts[128];
} fx;

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/rpx-bodies-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->tmpl, sizeof f->tmpl, "%s/t.json", f->dir);
    snprintf(f->prompts, sizeof f->prompts, "%s/p.jsonl", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    char p[160];
    const char *names[] = {"t.json", "p.jsonl", "b.json", "raw.bin"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", f->dir, names[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

/* The next body, parsed */
static json_t *next(rpx_bodies *b)
{
    size_t len = 0;
    char *t = rpx__bodies_next(b, &len);
    json_t *j;
    assert_non_null(t);
    assert_int_equal(len, strlen(t));
    j = json_loads(t, 0, NULL);
    free(t);
    assert_non_null(j);
    return j;
}

static const char *str_at(json_t *j, const char *a, int idx, const char *b)
{
    json_t *v = json_object_get(j, a);
    if (idx >= 0) v = json_array_get(v, (size_t)idx);
    if (b) v = json_object_get(v, b);
    return json_string_value(v);
}

static void test_template_dotted_path_cycles_in_file_order(void **state)
{
    fx *f = *state;
    rpx_target_options o = {0};
    rpx_bodies *b = NULL;
    rpx_error e = {0};
    json_t *j, *rep;
    int i;
    write_file(f->tmpl, "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"\"}]}");
    write_file(f->prompts, "\"a\"\n\n\"b\"\n\"c\"\n\"a\"\n");
    o.body_template = f->tmpl;
    o.prompts_path = f->prompts;
    o.prompt_field = "messages.0.content";
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 0, &b, &e), 0);
    assert_non_null(b);
    for (i = 0; i < 9; i++) {
        const char *want[] = {"a", "b", "c", "a"};
        j = next(b);
        assert_string_equal(str_at(j, "messages", 0, "content"), want[i % 4]);
        assert_string_equal(str_at(j, "messages", 0, "role"), "user"); /* the rest kept */
        assert_string_equal(json_string_value(json_object_get(j, "model")), "m");
        json_decref(j);
    }
    rep = rpx__bodies_json(b);
    assert_int_equal(json_integer_value(json_object_get(rep, "prompts_lines")), 4);
    assert_int_equal(json_integer_value(json_object_get(rep, "prompts_distinct")), 3);
    assert_int_equal(json_integer_value(json_object_get(rep, "sent")), 8); /* the 9th not sent yet */
    assert_int_equal(json_integer_value(json_object_get(rep, "distinct")), 3);
    assert_string_equal(json_string_value(json_object_get(rep, "order")), "cycled");
    json_decref(rep);
    rpx__bodies_free(b);
    assert_int_equal(rpx_http_distinct_bodies(&o), 3);

    /* a later process goes on where the ones before stopped */
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 6, &b, &e), 0);
    j = next(b);
    assert_string_equal(str_at(j, "messages", 0, "content"), "c");
    json_decref(j);
    rpx__bodies_free(b);
}

static void shuffled_order(fx *f, unsigned long long seed, int *got, int n)
{
    rpx_target_options o = {0};
    rpx_bodies *b = NULL;
    rpx_error e = {0};
    int i;
    o.body_template = f->tmpl;
    o.prompts_path = f->prompts;
    o.prompts_sample = 1;
    o.load_seed = seed;
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 0, &b, &e), 0);
    for (i = 0; i < n; i++) {
        json_t *j = next(b);
        got[i] = (int)json_integer_value(json_object_get(j, "prompt"));
        json_decref(j);
    }
    rpx__bodies_free(b);
}

static void test_shuffle_is_a_seeded_permutation(void **state)
{
    fx *f = *state;
    int a[40], a2[40], c[40], i, seen[20] = {0}, same = 1, moved = 0;
    char lines[200] = "";
    for (i = 0; i < 20; i++) snprintf(lines + strlen(lines), sizeof lines - strlen(lines), "%d\n", i);
    write_file(f->tmpl, "{\"prompt\": null}");
    write_file(f->prompts, lines);
    shuffled_order(f, 42, a, 40);
    shuffled_order(f, 42, a2, 40);
    shuffled_order(f, 43, c, 40);
    for (i = 0; i < 20; i++) {
        assert_true(a[i] >= 0 && a[i] < 20);
        seen[a[i]]++;
        assert_int_equal(a[i + 20], a[i]); /* the permutation is cycled */
        if (a[i] != i) moved++;
    }
    for (i = 0; i < 20; i++) assert_int_equal(seen[i], 1); /* each prompt once */
    assert_memory_equal(a, a2, sizeof a);                 /* the same seed, the same order */
    for (i = 0; i < 20; i++)
        if (a[i] != c[i]) same = 0;
    assert_false(same); /* another seed, another order */
    assert_true(moved > 0);
}

static void test_nonce_is_unique_per_body_and_process(void **state)
{
    fx *f = *state;
    rpx_target_options o = {0};
    rpx_bodies *b = NULL;
    rpx_error e = {0};
    const char *fixed = "{\"prompt\": \"same\", \"meta\": {\"x\": 1}}";
    char *seen[200];
    json_t *rep;
    int i, k;
    (void)f;
    o.nonce_field = "meta.nonce";
    assert_int_equal(rpx__bodies_open(&o, fixed, strlen(fixed), 0, &b, &e), 0);
    for (i = 0; i < 200; i++) {
        json_t *j = next(b);
        json_t *meta = json_object_get(j, "meta");
        assert_string_equal(json_string_value(json_object_get(j, "prompt")), "same");
        assert_int_equal(json_integer_value(json_object_get(meta, "x")), 1);
        seen[i] = strdup(json_string_value(json_object_get(meta, "nonce")));
        for (k = 0; k < i; k++) assert_string_not_equal(seen[k], seen[i]);
        json_decref(j);
    }
    rep = rpx__bodies_json(b);
    assert_int_equal(json_integer_value(json_object_get(rep, "distinct")), 199);
    json_decref(rep);
    rpx__bodies_free(b);
    /* the next process (first = 200) makes none of these */
    assert_int_equal(rpx__bodies_open(&o, fixed, strlen(fixed), 200, &b, &e), 0);
    for (i = 0; i < 20; i++) {
        json_t *j = next(b);
        const char *n = json_string_value(json_object_get(json_object_get(j, "meta"), "nonce"));
        for (k = 0; k < 200; k++) assert_string_not_equal(seen[k], n);
        json_decref(j);
    }
    rpx__bodies_free(b);
    /* body_repeat (the cache audit's repeated arm): the same body every time */
    o.body_repeat = 1;
    assert_int_equal(rpx__bodies_open(&o, fixed, strlen(fixed), 5, &b, &e), 0);
    {
        size_t l1, l2;
        char *t1 = rpx__bodies_next(b, &l1), *t2 = rpx__bodies_next(b, &l2);
        assert_string_equal(t1, t2);
        free(t1);
        free(t2);
    }
    rpx__bodies_free(b);
    for (i = 0; i < 200; i++) free(seen[i]);
}

static void test_nonce_prefix_goes_before_the_prompt(void **state)
{
    fx *f = *state;
    rpx_target_options o = {0};
    rpx_bodies *b = NULL;
    rpx_error e = {0};
    char path[160], how[400], why[400];
    const char *field = NULL;
    int prefix = -1;
    const char *fixed = "{\"prompt\": \"the same prompt\"}";
    json_t *j1, *j2;
    const char *p1, *p2;
    o.nonce_field = "prompt";
    o.nonce_prefix = 1;
    assert_int_equal(rpx__bodies_open(&o, fixed, strlen(fixed), 0, &b, &e), 0);
    j1 = next(b);
    j2 = next(b);
    p1 = json_string_value(json_object_get(j1, "prompt"));
    p2 = json_string_value(json_object_get(j2, "prompt"));
    assert_non_null(strstr(p1, " the same prompt"));
    assert_int_equal(strlen(strstr(p1, " the same prompt")), strlen(" the same prompt")); /* at the end */
    assert_string_not_equal(p1, p2);
    assert_true(strncmp(p1, "rpx-", 4) == 0); /* the prompts differ from their first bytes */
    json_decref(j1);
    json_decref(j2);
    rpx__bodies_free(b);

    /* where the audit puts it in a fixed --body */
    memset(&o, 0, sizeof o);
    snprintf(path, sizeof path, "%s/b.json", f->dir);
    o.body_path = path;
    write_file(path, "{\"messages\": [{\"content\": \"hi\"}]}");
    o.prompt_field = "messages.0.content";
    assert_int_equal(rpx__bodies_fixed_nonce(&o, &field, &prefix, how, sizeof how, why, sizeof why), 0);
    assert_string_equal(field, "messages.0.content");
    assert_int_equal(prefix, 1);
    o.prompt_field = NULL; /* no string at "prompt": a top-level field */
    assert_int_equal(rpx__bodies_fixed_nonce(&o, &field, &prefix, how, sizeof how, why, sizeof why), 0);
    assert_string_equal(field, "rpxprof_nonce");
    assert_int_equal(prefix, 0);
    write_file(path, "[1, 2]");
    assert_int_equal(rpx__bodies_fixed_nonce(&o, &field, &prefix, how, sizeof how, why, sizeof why), -1);
    assert_non_null(strstr(why, "is not a JSON object"));
    o.body_path = NULL;
    assert_int_equal(rpx__bodies_fixed_nonce(&o, &field, &prefix, how, sizeof how, why, sizeof why), -1);
}

static void test_errors_name_the_file_the_line_and_the_fix(void **state)
{
    fx *f = *state;
    rpx_target_options o = {0};
    rpx_bodies *b = NULL;
    rpx_error e = {0};
    char raw[160];
    write_file(f->tmpl, "{\"messages\": []}");
    write_file(f->prompts, "\"ok\"\n{not json\n");
    o.body_template = f->tmpl;
    o.prompts_path = f->prompts;
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 0, &b, &e), RPX_EUSAGE);
    assert_null(b);
    assert_non_null(strstr(e.message, "p.jsonl: line 2 is not JSON"));

    write_file(f->prompts, "\n  \n");
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 0, &b, &e), RPX_EUSAGE);
    assert_non_null(strstr(e.message, "no prompt in it"));

    write_file(f->prompts, "\"x\"\n");
    o.prompt_field = "messages.3.content"; /* past the end of the array */
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 0, &b, &e), RPX_EUSAGE);
    assert_non_null(strstr(e.message, "--prompt-field messages.3.content: cannot be set"));

    write_file(f->tmpl, "{\"model\": ");
    o.prompt_field = NULL;
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 0, &b, &e), RPX_EUSAGE);
    assert_non_null(strstr(e.message, "t.json: not valid JSON"));

    write_file(f->tmpl, "\"a string\""); /* JSON, but no object to set a field in */
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 0, &b, &e), RPX_EUSAGE);
    assert_non_null(strstr(e.message, "--body-template"));
    assert_non_null(strstr(e.message, "t.json"));

    o.prompts_path = NULL; /* a template without prompts */
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 0, &b, &e), RPX_EUSAGE);
    assert_non_null(strstr(e.message, "--body-template needs --prompts"));

    memset(&o, 0, sizeof o);
    o.nonce_field = "n";
    snprintf(raw, sizeof raw, "%s/raw.bin", f->dir);
    assert_int_equal(rpx__bodies_open(&o, "\x01\x02 raw", 6, 0, &b, &e), RPX_EUSAGE);
    assert_non_null(strstr(e.message, "--nonce n: the body is not JSON"));
    assert_int_equal(rpx__bodies_open(&o, NULL, 0, 0, &b, &e), RPX_EUSAGE);
    assert_non_null(strstr(e.message, "--nonce n needs a JSON body"));
    o.nonce_field = "prompt.x"; /* inside a string */
    assert_int_equal(rpx__bodies_open(&o, "{\"prompt\": \"s\"}", 15, 0, &b, &e), RPX_EUSAGE);
    assert_non_null(strstr(e.message, "--nonce prompt.x: cannot be set"));

    memset(&o, 0, sizeof o); /* nothing varies: no bodies, no error */
    assert_int_equal(rpx__bodies_open(&o, "{}", 2, 0, &b, &e), 0);
    assert_null(b);
    assert_int_equal(rpx_http_distinct_bodies(&o), 1);
    o.nonce_field = "n";
    assert_int_equal(rpx_http_distinct_bodies(&o), SIZE_MAX);
}

/* ---- the Prometheus text parser ---- */

static void test_metrics_sum_labelled_series_and_skip_comments(void **state)
{
    rpx__counters c;
    const char *text =
        "# HELP vllm:prefix_cache_hits_total Prefix cache hits, in tokens.\n"
        "# TYPE vllm:prefix_cache_hits_total counter\n"
        "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 30.0\n"
        "vllm:prefix_cache_hits_total{engine=\"1\",model_name=\"m}\\\"{\"} 12\n"
        "# vllm:prefix_cache_hits_total 1000\n"
        "vllm:prefix_cache_hits_total_created 17e8\n"
        "vllm:prefix_cache_queries_total{engine=\"0\"} 100 1712345678000\n"
        "vllm:prefix_cache_queries_total{engine=\"1\"} 1e2\n";
    (void)state;
    assert_int_equal(rpx__server_metrics_parse(text, &c), 0);
    assert_int_equal(c.pair, 0);
    assert_true(fabs(c.hits - 42) < 1e-9);
    assert_true(fabs(c.queries - 200) < 1e-9);
}

static void test_metrics_fall_back_to_the_older_names(void **state)
{
    rpx__counters c;
    const char *old = "vllm:gpu_prefix_cache_hits_total{model_name=\"m\"} 5\n"
                      "vllm:gpu_prefix_cache_queries_total{model_name=\"m\"} 8\n";
    /* the newer pair wins when both are there; a half pair is not a pair */
    const char *both = "vllm:gpu_prefix_cache_hits_total 5\nvllm:gpu_prefix_cache_queries_total 8\n"
                       "vllm:prefix_cache_hits_total 1\nvllm:prefix_cache_queries_total 2";
    const char *half = "vllm:prefix_cache_hits_total 1\n"
                       "vllm:gpu_prefix_cache_hits_total 5\nvllm:gpu_prefix_cache_queries_total 8\n";
    (void)state;
    assert_int_equal(rpx__server_metrics_parse(old, &c), 0);
    assert_int_equal(c.pair, 1);
    assert_true(c.hits == 5 && c.queries == 8);
    assert_int_equal(rpx__server_metrics_parse(both, &c), 0);
    assert_int_equal(c.pair, 0);
    assert_true(c.hits == 1 && c.queries == 2);
    assert_int_equal(rpx__server_metrics_parse(half, &c), 0);
    assert_int_equal(c.pair, 1);
}

static void test_metrics_malformed_lines_are_skipped(void **state)
{
    rpx__counters c;
    const char *text = "vllm:prefix_cache_hits_total{engine=\"0\" 99\n" /* no closing brace */
                       "vllm:prefix_cache_hits_total garbage\n"
                       "vllm:prefix_cache_hits_total NaN\n"
                       "vllm:prefix_cache_hits_total +Inf\n"
                       "vllm:prefix_cache_hits_total 3\n"
                       "vllm:prefix_cache_queries_total\n"
                       "vllm:prefix_cache_queries_total 4\r\n"
                       "other_metric{a=\"b\"} 7\n"; /* a brace of a later line */
    (void)state;
    assert_int_equal(rpx__server_metrics_parse(text, &c), 0);
    assert_true(c.hits == 3);
    assert_true(c.queries == 4);
    assert_int_equal(rpx__server_metrics_parse("# nothing here\nother_metric 1\n", &c), -1);
    assert_int_equal(c.pair, -1);
    assert_true(isnan(c.hits) && isnan(c.queries));
    assert_non_null(strstr(c.why, "no prefix-cache counters"));
    assert_int_equal(rpx__server_metrics_parse("", &c), -1);
}

static void test_metrics_json_rate_and_reasons(void **state)
{
    rpx__counters a, b;
    json_t *w = json_array(), *o;
    (void)state;
    assert_int_equal(rpx__server_metrics_parse("vllm:prefix_cache_hits_total 10\n"
                                               "vllm:prefix_cache_queries_total 100\n", &a), 0);
    assert_int_equal(rpx__server_metrics_parse("vllm:prefix_cache_hits_total 100\n"
                                               "vllm:prefix_cache_queries_total 200\n", &b), 0);
    o = rpx__server_metrics_json("http://h/metrics", &a, &b, w);
    assert_true(fabs(json_real_value(json_object_get(o, "hit_rate")) - 0.9) < 1e-12);
    assert_true(json_is_null(json_object_get(o, "reason")));
    assert_int_equal(json_array_size(w), 1); /* above 1 % */
    json_decref(o);
    o = rpx__server_metrics_json("http://h/metrics", &b, &a, w); /* went down */
    assert_true(json_is_null(json_object_get(o, "hit_rate")));
    assert_non_null(strstr(json_string_value(json_object_get(o, "reason")), "went down"));
    json_decref(o);
    json_decref(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_template_dotted_path_cycles_in_file_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shuffle_is_a_seeded_permutation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nonce_is_unique_per_body_and_process, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nonce_prefix_goes_before_the_prompt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_name_the_file_the_line_and_the_fix, setup, teardown),
        cmocka_unit_test(test_metrics_sum_labelled_series_and_skip_comments),
        cmocka_unit_test(test_metrics_fall_back_to_the_older_names),
        cmocka_unit_test(test_metrics_malformed_lines_are_skipped),
        cmocka_unit_test(test_metrics_json_rate_and_reasons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
