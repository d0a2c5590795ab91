/* cli.h — what the subcommands share: error output and number parsing
 * (common.c), the exit codes (rpxprof/runner.h), and the subcommands main.c
 * dispatches to. */
#ifndef RPX_CLI_H
#define RPX_CLI_H

#include <stdio.h>

#include "common/output.h"
#include "rpxprof/html.h"
#include "rpxprof/runner.h"

/* Exit codes: RPX_EXIT_* of rpxprof/runner.h (docs/cli.md). */

/* Text for the terminal: control characters (an ANSI escape from a file name or
 * a model's message) written as \xNN; a line break and a tab stay. */
void rpx_cli_term_puts(FILE *f, const char *s);
void rpx_cli_term_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* common.c: "rpxprof CMD: error: MESSAGE\n" on stderr (escaped as above); returns `code`. */
int rpx_cli_fail(const char *cmd, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* After getopt_long (run with opterr = 0 and a ':'-first optstring) returned
 * '?' or ':': the documented one-line error naming the option; returns 2. */
int rpx_cli_bad_option(const char *cmd, int c, char **argv);
/* Strict base-10 parse of a whole string into a long. 0 or -1. */
int rpx_cli_parse_long(const char *s, long *out);
/* A whole string that is a finite number >= 0, such as 4878.9e9. 0 or -1. */
int rpx_cli_parse_number(const char *s, double *out);
/* compare's --threshold: "1%", "0.5 %" or "0.01" into a fraction in (0, 1). 0 or -1. */
int rpx_cli_parse_threshold(const char *s, double *out);

/* Two outputs of one command naming one file (rpx_output_same_file):
 * "OPTION PATH: names the same file as OPTION PATH" and RPX_EXIT_USAGE, before
 * any work; 0 when every path differs. NULL paths are skipped; options[i]
 * names the option that gave paths[i]. */
int rpx_cli_outputs_distinct(const char *cmd, const char *const *options,
                             const char *const *paths, size_t n);

/* The subcommands (main.c dispatches). */

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
int rpx_cli_sweep(int argc, char **argv);
/* the sweep's page (rpx_html_sweep) of sweep.json `sweep` into out (taken) */
int rpx__cli_html_sweep(const char *cmd, rpx_output *out, const json_t *sweep);
int rpx_cli_report(int argc, char **argv);
/* report.c: --html FILE of run, batch, compare and aggregate. Open the page's
 * output before the work (RPX_OUTPUT_HTML, `protect` never replaced); then
 * write the page of `in`, or of files and folders as `rpxprof report` reads
 * them. Each returns 0 or the exit code after printing the error; `out` is
 * committed or discarded either way. `force` < 0: the command has no --force. */
int rpx__cli_html_open(const char *cmd, const char *path, int force, const char *const *protect, size_t np,
                       rpx_output **out);
int rpx__cli_html(const char *cmd, rpx_output *out, const rpx_html_input *in);
int rpx__cli_html_of_files(const char *cmd, rpx_output *out, char **inputs, size_t n);
/* the compare view of `res` (compare's JSON) with the two reports read from their
 * files (drawn when they load; the page says so when they do not) */
int rpx__cli_html_compare(const char *cmd, rpx_output *out, const json_t *res, const char *base,
                          const char *new_path);
/* report --history (report_history.c): the history page of a history's
 * series; every field borrowed, NULL/0 when not given. Returns 0 or the exit
 * code after printing the error. */
typedef struct rpx_report_history_args {
    const char *history;          /* a SQLite file, a postgresql:// URL, or a JSON series list */
    const char *benchmark;        /* --benchmark: one benchmark's series (name or id) */
    const char *checks;           /* --checks: `history check --json` results instead of checking */
    double threshold;             /* --threshold for the check (0: its default) */
    const char *title, *output;
    int force;
} rpx_report_history_args;
int rpx__cli_report_history(const rpx_report_history_args *a);
int rpx_cli_trace(int argc, char **argv);
int rpx_cli_history(int argc, char **argv);
int rpx_cli_capacity(int argc, char **argv); /* the search alone (sweep --vary rate=auto too) */
/* The capacity search (rpxprof/capacity.h) over runs of `cfg` at each rate (its --rate and
 * --duration set per step, nothing written): the objectives parsed from `slo` into o->slo,
 * the sentence on stderr; 0 and *cap, or the exit status (the message printed as `cmd`'s). */
struct rpx_capacity_opts;
typedef int (*rpx_capacity_keep_fn)(void *ud, double rate, const json_t *report);
int rpx__cli_capacity(const char *cmd, const rpx_runner_config *cfg, const char *slo,
                      struct rpx_capacity_opts *o, int quiet, rpx_capacity_keep_fn keep,
                      void *keep_ud, json_t **cap);
/* sweep --vary rate=auto (sweep_capacity.c): the search, each step's report kept as
 * DIR/rate-R.json and a point of DIR/sweep.json (an invalid run a point marked invalid,
 * never the curve's), the capacity block; hout: the page (taken). The exit status. */
int rpx__cli_sweep_capacity(const rpx_runner_config *cfg, const char *model, const char *inputs,
                            const char *slo, const char *out_dir, rpx_output *hout);
/* the trace file of `run --trace` and `trace` (trace.c): its guard opened
 * before any work (never one of protect), then the trace of `report`
 * written through it (or discarded). 0, or the exit code after a message */
struct rpx_output;
struct json_t;
int rpx_cli_trace_open(const char *cmd, const char *option, const char *path, int force,
                       const char *const *protect, size_t n_protect, struct rpx_output **out);
int rpx_cli_trace_write(const char *cmd, struct rpx_output *out, const struct json_t *report,
                        const char *source, long max_events);
/* rpxprof run --list-options [--json]: the run options' table (run_options.c) */
int rpx__cli_run_list_options(int json);

/* compare --run (compare_run.c) */
int rpx__cli_compare_run(int argc, char **argv);

#endif
