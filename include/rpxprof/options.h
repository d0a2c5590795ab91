/* rpxprof/options.h — a run's options, described once: name, kind, range,
 * default, help and where each lives in rpx_runner_config. `rpxprof run`'s
 * parser, the batch manifest reader and the Python extension set and check
 * options through this table, so that a range or a default is written in one
 * place (src/runner/options.c) and every caller's message says the same,
 * in the caller's spelling of the option:
 *
 *   const rpx_run_option *o = rpx_run_option_find("repeats");
 *   rpx_run_option_set_text(&cfg, o, "0", "--repeats", &err)
 *       -> "--repeats '0': give a whole number from 1 to 10000000 (...)"
 *   rpx_runner_config_check(&cfg, RPX_SPELL_KEY, &err)   ranges and combinations
 */
#ifndef RPXPROF_OPTIONS_H
#define RPXPROF_OPTIONS_H

#include <stddef.h>

#include "rpxprof/error.h"
#include "rpxprof/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rpx_option_kind {
    RPX_OPT_INT,                  /* a whole number (a long or an int field) */
    RPX_OPT_DOUBLE,               /* a number */
    RPX_OPT_DURATION,             /* seconds (a double) */
    RPX_OPT_FRACTION,             /* a share: 0.01 or 1% (a double) */
    RPX_OPT_ENUM,                 /* one of `choices`: the index (int field) or the text */
    RPX_OPT_FLAG,                 /* no value: sets the int field to 1 (0 when inverted) */
    RPX_OPT_STRING                /* a non-empty text (a const char * field) */
} rpx_option_kind;

/* Which front end asks, and so how it spells an option in messages:
 * `--call-timeout` on the command line (`rpxprof run`, `compare --run`),
 * `call_timeout` in a manifest, `call_timeout=` in a rule worded for Python
 * (a bad value from Python is named by the key: "repeats '0': give ..."). */
typedef enum rpx_option_spelling {
    RPX_SPELL_CLI,                /* rpxprof run */
    RPX_SPELL_KEY,                /* a batch manifest (and the runner's own check) */
    RPX_SPELL_PY,                 /* rpxprof.profile()'s keywords */
    RPX_SPELL_COMPARE             /* rpxprof compare --run (spelled as the CLI) */
} rpx_option_spelling;
#define RPX_SPELL_MANIFEST RPX_SPELL_KEY
#define RPX_SPELL_COUNT 4

/* flags */
#define RPX_OPT_HTTP 1u           /* for HTTP API targets only */
#define RPX_OPT_INVERT 2u         /* a flag that clears its field (--no-isolate: isolate = 0) */
#define RPX_OPT_ENUM_TEXT 4u      /* an enum stored as its text, not its index */
#define RPX_OPT_ZERO_IS_NONE 8u   /* an int whose 0 is stored as -1 (--keep-events 0: none) */
#define RPX_OPT_ULL 16u           /* an int stored as unsigned long long (--seed) */
#define RPX_OPT_INT_FIELD 32u     /* an int stored in an int (else a long) */
#define RPX_OPT_TEXT_DEFAULT 64u  /* a STRING or text ENUM whose default_text is its value */
/* the front ends that take the option (every one is `rpxprof run`'s) */
#define RPX_OPT_IN(sp) (128u << (sp)) /* RPX_OPT_IN(RPX_SPELL_PY): a Python keyword */
#define RPX_OPT_IN_CLI RPX_OPT_IN(RPX_SPELL_CLI)
#define RPX_OPT_IN_MANIFEST RPX_OPT_IN(RPX_SPELL_KEY)
#define RPX_OPT_IN_PY RPX_OPT_IN(RPX_SPELL_PY)
#define RPX_OPT_IN_COMPARE RPX_OPT_IN(RPX_SPELL_COMPARE)
/* where a manifest takes it: only on a model (cost), only in "defaults" (gpus),
 * only on a task (unit); else in "defaults" and on each model */
#define RPX_OPT_MANIFEST_MODEL 2048u
#define RPX_OPT_MANIFEST_DEFAULTS 4096u
#define RPX_OPT_MANIFEST_TASK 8192u
#define RPX_OPT_RUNTIME 16384u    /* for model files run by a runtime only (docs/runtimes.md) */

typedef struct rpx_run_option {
    const char *name;             /* the command line's, without "--": "call-timeout" */
    const char *key;              /* a manifest's and Python's: "call_timeout" */
    rpx_option_kind kind;
    unsigned flags;
    double min, max;              /* the range (INT, DOUBLE, DURATION, FRACTION) */
    int min_excluded;             /* the value must be above min, not equal to it */
    const char *const *choices;   /* ENUM: NULL-terminated */
    const char *metavar;          /* "N", "S", "HZ" (NULL for a flag) */
    double dflt;                  /* the field's value in rpx_runner_config_init (numbers,
                                     flags, enum indices): also "not given" */
    const char *default_text;     /* what --help says the default is (NULL: none); a STRING's
                                     or a text ENUM's default value itself */
    const char *range;            /* what a value must be, when not the range's own words */
    const char *why;              /* said after the range in a message, or NULL */
    const char *help;             /* one line */
    size_t offset;                /* of the field in rpx_runner_config */
    const char *py_spelling;      /* how a rule worded for Python names it when not "key="
                                     (NULL): --no-isolate, which Python says with
                                     processes=None */
} rpx_run_option;

/* The table, in --help order, and its length. */
RPX_API const rpx_run_option *rpx_run_options(size_t *n);
/* By the command line's name or the key; NULL when there is none. */
RPX_API const rpx_run_option *rpx_run_option_find(const char *name);
/* Whether the front end `sp` takes the option (its RPX_OPT_IN flag). */
RPX_API int rpx_run_option_accepted(const rpx_run_option *o, rpx_option_spelling sp);
/* Whether a front end set the option in c (rpx_run_option_set_text/_number
 * mark it in c->given). */
RPX_API int rpx_run_option_given(const rpx_runner_config *c, const rpx_run_option *o);
/* The option as the caller spells it: "--repeats", "repeats" or "repeats=" (in buf). */
RPX_API const char *rpx_run_option_spelled(const rpx_run_option *o, rpx_option_spelling sp,
                                   char *buf, size_t size);
/* What a value must be: "a whole number from 1 to 10000000 (every timed ...)". */
RPX_API void rpx_run_option_range_text(const rpx_run_option *o, char *buf, size_t size);
/* Parse `text` (NULL for a flag) and store it in c. A bad value: RPX_EUSAGE
 * and "LABEL 'TEXT': give RANGE" (LABEL: how the caller names it). */
RPX_API int rpx_run_option_set_text(rpx_runner_config *c, const rpx_run_option *o, const char *text,
                            const char *label, rpx_error *err);
/* Store a number (INT, DOUBLE, DURATION, FRACTION) or a flag's truth (FLAG)
 * after the same range check. */
RPX_API int rpx_run_option_set_number(rpx_runner_config *c, const rpx_run_option *o, double v,
                              const char *label, rpx_error *err);
/* The option's value in c as a number (ENUM: the index; STRING: 1 when set). */
RPX_API double rpx_run_option_get(const rpx_runner_config *c, const rpx_run_option *o);

/* Every option's range, then every rule that combines options (isolation,
 * --gpu-time, a local model's options on an HTTP API, --max-time without
 * --target-precision, --rate/--duration, an HTTP-only option on another
 * target, ...). RPX_EUSAGE with the message in the spelling of the front end
 * `sp` that asks. The runner calls it first (RPX_SPELL_KEY); each front end
 * calls it to say it in its own words. */
RPX_API int rpx_runner_config_check(const rpx_runner_config *c, rpx_option_spelling sp, rpx_error *err);

#ifdef __cplusplus
}
#endif
#endif
