/* section_outputs.c — output checks (--check-outputs, outputs.h) as a
 * measured section: the folders checked before the first process, the
 * reference pass after setup, a seeded subset of the timed calls compared
 * after their t1, each process's findings in its export, and the report's
 * `outputs` merged from them; a completed run whose checked calls returned
 * other outputs fails the check (status outputs_differ). */
#include <stdio.h>

#include "runner/outputs.h"
#include "runner/runner_internal.h"
#include "runner/section.h"

static int out_on(const run_plan *plan)
{
    const rpx_runner_config *c = plan->c;
    return c->check_outputs || c->reference_outputs || c->save_outputs;
}

static int out_prepare(const run_plan *plan, rpx_error *err)
{
    return rpx__outputs_prepare(&plan->outputs, plan->n_samples, plan->c->force, plan->input_paths,
                                plan->n_input_paths, err);
}

/* The untimed reference pass, before warmup. */
static int out_begin(section_proc *sp, rpx_error *err)
{
    const run_plan *plan = sp->p->plan;
    outputs_params op = plan->outputs;
    outputs_check *checks = NULL;
    int rc;
    op.process = sp->p->process_index;
    if ((rc = rpx__outputs_begin(&op, sp->target, plan->samples, plan->n_samples, plan->pristine,
                                 sp->p->repeats, &checks, err)) != 0)
        return rc;
    sp->state = checks;
    return 0;
}

static json_t *out_export(section_proc *sp)
{
    return sp->state ? rpx__outputs_json(sp->state) : NULL;
}

static void out_end(section_proc *sp)
{
    rpx__outputs_free(sp->state);
    sp->state = NULL;
}

static const char *text_of(const json_t *o, const char *key, const char *otherwise)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : otherwise;
}

/* "--check-outputs: 3 of 40 checked calls returned other outputs ..." */
static void differ_message(const json_t *o, rpx_option_spelling sp, char *m, size_t size)
{
    char first[256] = "", big[64] = "not a number", label[40];
    json_t *f = json_array_get(json_object_get(o, "mismatches"), 0);
    if (json_is_number(json_object_get(o, "max_abs_diff")))
        snprintf(big, sizeof big, "%.6g", json_number_value(json_object_get(o, "max_abs_diff")));
    if (f)
        snprintf(first, sizeof first, "; the first: process %lld, timed call %lld, sample %lld, "
                 "output '%.60s': %.100s",
                 (long long)json_integer_value(json_object_get(f, "process")),
                 (long long)json_integer_value(json_object_get(f, "call")),
                 (long long)json_integer_value(json_object_get(f, "sample")),
                 text_of(f, "output", "(all)"), text_of(f, "reason", "(null)"));
    snprintf(m, size,
             "%s: %lld of %lld checked calls returned other outputs than the "
             "reference (largest difference %s)%s%s",
             rpx__option_value_label("check-outputs", sp, label, sizeof label),
             (long long)json_integer_value(json_object_get(o, "mismatched_calls")),
             (long long)json_integer_value(json_object_get(o, "checked_calls")), big, first,
             json_integer_value(json_object_get(o, "processes_with_other_reference"))
                 ? "; and the reference passes of the processes disagreed"
                 : "");
}

static int out_merge(const section_merge *m, section_out *out)
{
    int differ = 0;
    out->value = rpx__outputs_merge(&m->plan->outputs, m->exports, m->n, &differ);
    if (!out->value) return -1;
    if (differ) {
        out->check_failed = 1;
        differ_message(out->value, (rpx_option_spelling)m->plan->c->spelling, out->message,
                       sizeof out->message);
    }
    return 0;
}

const rpx_section rpx__section_outputs = {
    .key = "outputs",
    .on = out_on,
    .prepare = out_prepare,
    .begin = out_begin,
    .timed_call = rpx__outputs_check_call,
    .export_json = out_export,
    .end = out_end,
    .merge = out_merge,
};
