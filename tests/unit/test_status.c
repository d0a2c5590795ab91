/* Unit tests for the one status map (RPX_RUNNER_STATUS_MAP, src/runner/status.c):
 * a run's status, its report word and rpxprof's exit code, which users see and
 * which must not change; and docs/errors.md's table of exit codes, read here and
 * checked row by row against the map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/runner.h"
#include "test_files.h"

typedef struct row { const char *name, *word; int code; rpx_runner_status st; } row;

static const row map[] = {
#define ROW(name, word, code) {#name, word, code, RPX_RUNNER_##name},
    RPX_RUNNER_STATUS_MAP(ROW)
#undef ROW
};
#define N_MAP (sizeof map / sizeof map[0])

/* The words and codes users see, written out by hand: a change to the map
 * that changes one of them fails here. */
static void test_words_and_codes_do_not_change(void **st)
{
    static const struct { rpx_runner_status st; const char *word; int code; } want[] = {
        {RPX_RUNNER_COMPLETE, "complete", 0},     {RPX_RUNNER_INTERRUPTED, "interrupted", 130},
        {RPX_RUNNER_CRASHED, "crashed", 3},       {RPX_RUNNER_TIMED_OUT, "timed_out", 4},
        {RPX_RUNNER_KILLED, "killed", 5},         {RPX_RUNNER_CALLS_FAILED, "failed", 6},
        {RPX_RUNNER_OUTPUTS_DIFFER, "outputs_differ", 7},
    };
    size_t i;
    (void)st;
    assert_int_equal(N_MAP, sizeof want / sizeof want[0]);
    for (i = 0; i < N_MAP; i++) {
        rpx_runner_result r;
        memset(&r, 0, sizeof r);
        r.status = want[i].st;
        assert_int_equal((int)want[i].st, (int)i); /* the ABI's order */
        assert_string_equal(rpx_runner_status_word(want[i].st), want[i].word);
        assert_int_equal(rpx_runner_exit_code(&r), want[i].code);
        r.stop_signal = SIGTERM; /* only an interrupted run reads it */
        assert_int_equal(rpx_runner_exit_code(&r),
                         want[i].st == RPX_RUNNER_INTERRUPTED ? 143 : want[i].code);
    }
    assert_int_equal(RPX_EXIT_OK, 0);
    assert_int_equal(RPX_EXIT_FAILURE, 1);
    assert_int_equal(RPX_EXIT_USAGE, 2);
    assert_int_equal(RPX_EXIT_REGRESSION, 3);
    assert_int_equal(RPX_EXIT_TERMINATED, 143);
    assert_int_equal(RPX_EXIT_CRASHED, 3);
    assert_int_equal(RPX_EXIT_OUTPUTS_DIFFER, 7);
    assert_string_equal(rpx_runner_status_word((rpx_runner_status)99), "failed");
}

/* The cells of one Markdown table row "| a | b | c |": how many (at most max) */
static int cells(char *line, char **out, int max)
{
    int n = 0;
    char *p = line, *bar;
    if (*p != '|') return 0;
    p++;
    while (n < max && (bar = strchr(p, '|')) != NULL) {
        char *a = p, *b = bar;
        while (*a == ' ') a++;
        while (b > a && b[-1] == ' ') b--;
        *b = '\0';
        out[n++] = a;
        p = bar + 1;
    }
    return n;
}

/* docs/errors.md's first table: every status of the map has the row of its exit
 * code, saying "status `WORD`" (SIGTERM's 143 too, for interrupted); every row
 * is a code of the map or one of the codes of no status (1, 2: no report; 8:
 * the reports written, another output of the command not). */
static void test_errors_md_follows_the_map(void **st)
{
    size_t len, i;
    char *doc = (char *)rpx_test_slurp(RPX_SOURCE_DIR "/docs/errors.md", &len);
    char *line, *save = NULL, *table;
    int rows = 0, seen[N_MAP + 1];
    (void)st;
    assert_non_null(doc);
    memset(seen, 0, sizeof seen);
    table = strstr(doc, "\n| code | meaning | report written? |\n");
    assert_non_null(table);
    table = strchr(table + 1, '\n') + 1; /* the header */
    table = strchr(table, '\n') + 1;     /* |---:|---|---| */
    for (line = strtok_r(table, "\n", &save); line && line[0] == '|';
         line = strtok_r(NULL, "\n", &save)) {
        char *c[4], *end, want[64];
        int code, known = 0;
        assert_int_equal(cells(line, c, 4), 3);
        code = (int)strtol(c[0], &end, 10);
        assert_true(end != c[0] && *end == '\0');
        rows++;
        for (i = 0; i < N_MAP; i++) {
            if (map[i].code != code) continue;
            snprintf(want, sizeof want, "status `%s`", map[i].word);
            if (!strstr(c[2], want)) fail_msg("docs/errors.md: code %d's row says '%s', not '%s' "
                                              "(RPX_RUNNER_STATUS_MAP)", code, c[2], want);
            seen[i] = known = 1;
        }
        if (code == RPX_EXIT_TERMINATED) {
            if (!strstr(c[2], "status `interrupted`"))
                fail_msg("docs/errors.md: code 143's row says '%s', not status `interrupted`", c[2]);
            seen[N_MAP] = known = 1;
        }
        if (code == RPX_EXIT_FAILURE || code == RPX_EXIT_USAGE) {
            if (strcmp(c[2], "no") != 0) fail_msg("docs/errors.md: code %d writes no report", code);
            known = 1;
        }
        if (code == RPX_EXIT_EXTRA_OUTPUT || code == RPX_EXIT_HISTORY) {
            /* the reports written, an --html/--trace not; or the history not */
            if (strncmp(c[2], "yes", 3) != 0)
                fail_msg("docs/errors.md: code %d's reports are written", code);
            known = 1;
        }
        if (!known) fail_msg("docs/errors.md: code %d is no code of the status map", code);
    }
    for (i = 0; i <= N_MAP; i++)
        if (!seen[i]) fail_msg("docs/errors.md: no row for status %s", i < N_MAP ? map[i].name : "TERMINATED");
    assert_int_equal(rows, (int)N_MAP + 5); /* and 1, 2, 8, 9, 143 */
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_and_codes_do_not_change),
        cmocka_unit_test(test_errors_md_follows_the_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
