/* run_options.c — owns `rpxprof run --list-options [--json]`: the run options'
 * table (include/rpxprof/options.h) as the command line shows it, with the
 * front ends that take each option and how each spells it: `--max-time` on
 * the command line and in compare --run, `max_time` in a manifest,
 * `max_time=` in Python. Tests walk it to check that every front end reads
 * an option the same way (tests/cli/test_options_table.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/json.h"
#include "rpxprof/options.h"

static const char *const front_end_names[RPX_SPELL_COUNT] = {"cli", "manifest", "python",
                                                             "compare"};

static const char *kind_name(rpx_option_kind k)
{
    static const char *const kinds[] = {"int", "number", "duration", "share", "enum", "flag",
                                        "text"};
    return kinds[k];
}

static const char *manifest_level(const rpx_run_option *o)
{
    if (!rpx_run_option_accepted(o, RPX_SPELL_MANIFEST)) return NULL;
    if (o->flags & RPX_OPT_MANIFEST_MODEL) return "model";
    if (o->flags & RPX_OPT_MANIFEST_DEFAULTS) return "defaults";
    if (o->flags & RPX_OPT_MANIFEST_TASK) return "task";
    return "defaults,model";
}

/* One option as JSON: name, key, kind, range, default, choices, http,
 * min/max, front_ends {front end: spelling}, manifest_level. */
static json_t *option_json(const rpx_run_option *o)
{
    json_t *j = json_object(), *fe = json_object(), *choices = json_null();
    char range[400], buf[80];
    int sp;
    size_t k;
    if (!j || !fe) {
        json_decref(j);
        json_decref(fe);
        return NULL;
    }
    rpx_run_option_range_text(o, range, sizeof range);
    for (sp = 0; sp < RPX_SPELL_COUNT; sp++)
        if (rpx_run_option_accepted(o, (rpx_option_spelling)sp))
            json_object_set_new(fe, front_end_names[sp],
                                json_string(rpx_run_option_spelled(o, (rpx_option_spelling)sp,
                                                                   buf, sizeof buf)));
    if (o->choices) {
        choices = json_array();
        for (k = 0; o->choices[k]; k++) json_array_append_new(choices, json_string(o->choices[k]));
    }
    json_object_set_new(j, "name", json_string(o->name));
    json_object_set_new(j, "key", json_string(o->key));
    json_object_set_new(j, "kind", json_string(kind_name(o->kind)));
    json_object_set_new(j, "range", json_string(range));
    json_object_set_new(j, "default", o->default_text ? json_string(o->default_text) : json_null());
    json_object_set_new(j, "choices", choices);
    json_object_set_new(j, "min", json_real(o->min));
    json_object_set_new(j, "max", o->max < 1e300 ? json_real(o->max) : json_null());
    json_object_set_new(j, "min_excluded", json_boolean(o->min_excluded));
    json_object_set_new(j, "http", json_boolean(o->flags & RPX_OPT_HTTP));
    json_object_set_new(j, "front_ends", fe);
    json_object_set_new(j, "manifest_level", manifest_level(o) ? json_string(manifest_level(o))
                                                               : json_null());
    return j;
}

int rpx__cli_run_list_options(int json)
{
    size_t n, i;
    const rpx_run_option *t = rpx_run_options(&n);
    json_t *all;
    char *text;
    if (!json) {
        printf("%-24s %-24s %-8s %s\n", "OPTION", "KEY", "KIND", "FRONT ENDS");
        for (i = 0; i < n; i++) {
            int sp;
            printf("--%-22s %-24s %-8s", t[i].name, t[i].key, kind_name(t[i].kind));
            for (sp = 0; sp < RPX_SPELL_COUNT; sp++)
                if (rpx_run_option_accepted(&t[i], (rpx_option_spelling)sp))
                    printf(" %s", front_end_names[sp]);
            putchar('\n');
        }
        return RPX_EXIT_OK;
    }
    all = json_array();
    for (i = 0; all && i < n; i++) {
        json_t *o = option_json(&t[i]);
        if (!o || json_array_append_new(all, o) != 0) {
            json_decref(all);
            all = NULL;
        }
    }
    text = all ? rpx_json_dumps(all) : NULL;
    json_decref(all);
    if (!text) return rpx_cli_fail("run", RPX_EXIT_FAILURE, "out of memory");
    printf("%s\n", text);
    free(text);
    return RPX_EXIT_OK;
}
