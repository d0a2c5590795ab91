/* history_cli.h — what `rpxprof history`'s commands share (history.c,
 * history_check.c) and the --history location of compare and report. */
#ifndef RPX_CLI_HISTORY_CLI_H
#define RPX_CLI_HISTORY_CLI_H

#include <stddef.h>

typedef struct rpx__cli_history_args {
    const char *history;          /* --history, else RPXPROF_HISTORY */
    int json, dry_run, fail_on_regression, threshold_given, confirm_given;
    const char *benchmark;
    unsigned keep_last, confirm;
    double older_than_days, threshold;
    size_t samples;
    char **rest;                  /* the arguments after the options */
    size_t n_rest;
} rpx__cli_history_args;

/* given when set and not empty, else RPXPROF_HISTORY when set, else NULL */
const char *rpx__cli_history_location(const char *given);
/* the options of every history command; 0, -2 after --help, or the exit code */
int rpx__cli_history_parse(const char *cmd, int argc, char **argv, rpx__cli_history_args *a);
/* compare --history (compare_history.c): *spread for rpx_compare_opts.session_spread
 * (NULL without a history); 0, or the exit code after a message */
struct json_t;
int rpx__cli_compare_spread(const char *given, const char *base_path, const char *new_path,
                            struct json_t **spread);
/* --benchmark matched nothing in h: exit 1 after naming the benchmarks it holds;
 * 0 when it matched (list not empty) or none was given (history.c) */
struct rpx_history;
int rpx__cli_history_no_benchmark(const char *cmd, const char *loc, struct rpx_history *h,
                                  const char *benchmark,
                                  const struct json_t *list);
/* history check (history_check.c) */
int rpx__cli_history_check(rpx__cli_history_args *a);

#endif
