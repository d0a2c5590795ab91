/* common.c — owns what every subcommand shares: the error line on stderr, the
 * getopt error, and the strict number parsers (cli/cli.h). It calls no
 * subcommand: main.c dispatches to them, and they call down to here. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

void rpx_cli_term_puts(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        /* an escape sequence from a file name or a model's message would drive
         * the terminal: control characters are shown, not sent (a line break
         * and a tab stay) */
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) fprintf(f, "\\x%02x", c);
        else fputc(c, f);
    }
}

void rpx_cli_term_printf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    char *text = NULL;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0) text = NULL;
    va_end(ap);
    rpx_cli_term_puts(f, text ? text : "(out of memory)");
    free(text);
}

int rpx_cli_fail(const char *cmd, int code, const char *fmt, ...)
{
    va_list ap;
    char *text = NULL;
    fprintf(stderr, "rpxprof%s%s: error: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0) text = NULL;
    va_end(ap);
    rpx_cli_term_puts(stderr, text ? text : "(out of memory)");
    free(text);
    fputc('\n', stderr);
    return code;
}

int rpx_cli_bad_option(const char *cmd, int c, char **argv)
{
    const char *opt = optind > 0 ? argv[optind - 1] : "?";
    if (c == ':')
        return rpx_cli_fail(cmd, RPX_EXIT_USAGE, "%s needs a value (see 'rpxprof %s --help')", opt,
                            cmd);
    return rpx_cli_fail(cmd, RPX_EXIT_USAGE, "unknown option '%s' (see 'rpxprof %s --help')", opt,
                        cmd);
}

int rpx_cli_parse_long(const char *s, long *out)
{
    char *end;
    long v;
    if (!s || !*s) return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int rpx_cli_parse_number(const char *s, double *out)
{
    char *end;
    double v;
    if (!s || !*s) return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < 0) return -1;
    *out = v;
    return 0;
}

/* "1%", "0.5 %" or "0.01" into a fraction in (0, 1). 0 or -1. */
int rpx_cli_parse_threshold(const char *s, double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (end == s || errno || !isfinite(v)) return -1;
    while (*end == ' ') end++;
    if (*end == '%') {
        v /= 100;
        end++;
    }
    if (*end || !(v > 0) || !(v < 1)) return -1;
    *out = v;
    return 0;
}

int rpx_cli_outputs_distinct(const char *cmd, const char *const *options,
                             const char *const *paths, size_t n)
{
    size_t i, j;
    for (i = 0; i < n; i++)
        for (j = i + 1; paths[i] && j < n; j++)
            if (paths[j] && rpx_output_same_file(paths[i], paths[j]))
                return rpx_cli_fail(cmd, RPX_EXIT_USAGE,
                                    "%s %s: names the same file as %s %s; give each output its "
                                    "own path (nothing was run or written)",
                                    options[j], paths[j], options[i], paths[i]);
    return 0;
}
