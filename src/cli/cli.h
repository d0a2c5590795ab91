/* cli.h — what the subcommands share: error output, number parsing, exit codes. */
#ifndef RPX_CLI_H
#define RPX_CLI_H

#include <stdio.h>

/* Exit codes (docs/cli.md). */
enum {
    RPX_EXIT_OK = 0,
    RPX_EXIT_FAILURE = 1,         /* the run, the inputs or the model failed */
    RPX_EXIT_USAGE = 2,           /* bad command line */
    RPX_EXIT_CRASHED = 3,         /* the model's process died from a signal: report written */
    RPX_EXIT_REGRESSION = 3,      /* compare --fail-on-regression: the verdict is slower */
    RPX_EXIT_TIMED_OUT = 4,       /* --timeout / --call-timeout: report written */
    RPX_EXIT_KILLED = 5,          /* SIGKILL from elsewhere (OOM killer): report written */
    RPX_EXIT_CALLS_FAILED = 6,    /* every call failed, or --max-failures: report written */
    RPX_EXIT_INTERRUPTED = 130,   /* SIGINT: report written with status interrupted */
    RPX_EXIT_TERMINATED = 143     /* SIGTERM: report written with status interrupted */
};

/* "rpxprof CMD: error: MESSAGE\n" on stderr; returns `code`. */
int rpx_cli_fail(const char *cmd, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* After getopt_long (run with opterr = 0 and a ':'-first optstring) returned
 * '?' or ':': the documented one-line error naming the option; returns 2. */
int rpx_cli_bad_option(const char *cmd, int c, char **argv);
/* Strict base-10 parse of a whole string into a long. 0 or -1. */
int rpx_cli_parse_long(const char *s, long *out);
/* A whole string that is a finite number >= 0, such as 4878.9e9. 0 or -1. */
int rpx_cli_parse_number(const char *s, double *out);

int rpx_cli_run(int argc, char **argv);
int rpx_cli_inputs(int argc, char **argv);
int rpx_cli_cost(int argc, char **argv);
int rpx_cli_system(int argc, char **argv);
int rpx_cli_gpus(int argc, char **argv);
int rpx_cli_roofline(int argc, char **argv);
int rpx_cli_batch(int argc, char **argv);
int rpx_cli_aggregate(int argc, char **argv);
int rpx_cli_plot(int argc, char **argv);
int rpx_cli_compare(int argc, char **argv);
/* compare's --threshold: "1%", "0.5 %" or "0.01" into a fraction in (0, 1). 0 or -1. */
int rpx_cli_parse_threshold(const char *s, double *out);
/* compare --run (compare_run.c) */
int rpx__cli_compare_run(int argc, char **argv);

#endif
