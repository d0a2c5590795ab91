/* sections.c — owns the table of measured sections (section.h) and the
 * runner's side of it: their slices of a worker's shared block, their hooks
 * run in order in the model's process (the loop's per-call slots wired to
 * them), their exports, and their merge into the report's keys. The runner,
 * the stage and the report know a section only through this table. */
#include "runner/section.h"

#include <string.h>

/* A row per section (RPX_SECTIONS): the order in which their hooks run and
 * their keys are set. */
#define ROW(name) &rpx__section_##name,
const rpx_section *const rpx__sections[] = {RPX_SECTIONS(ROW)};
#undef ROW
const size_t rpx__n_sections = sizeof rpx__sections / sizeof rpx__sections[0];

_Static_assert(sizeof rpx__sections / sizeof rpx__sections[0] <= RPX_SECTIONS_MAX,
               "RPX_SECTIONS_MAX: room for every section");

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static size_t slice_of(const rpx_section *s, long repeats, long warmup_keep)
{
    return s->slice_bytes ? align64(s->slice_bytes(repeats, warmup_keep)) : 0;
}

size_t rpx__sections_bytes(const run_plan *plan, long repeats, long warmup_keep)
{
    size_t i, total = 0;
    for (i = 0; i < rpx__n_sections; i++)
        if (rpx__section_on(plan, i)) total += slice_of(rpx__sections[i], repeats, warmup_keep);
    return total;
}

void rpx__sections_layout(const run_plan *plan, run_shared *sh, char *mem, long repeats,
                          long warmup_keep)
{
    size_t i, at = 0;
    for (i = 0; i < rpx__n_sections; i++) {
        size_t n = rpx__section_on(plan, i) ? slice_of(rpx__sections[i], repeats, warmup_keep) : 0;
        sh->slice[i] = n ? mem + at : NULL;
        at += n;
    }
}

void rpx__sections_open(section_set *set, const run_params *p, run_shared *sh)
{
    size_t i;
    memset(set, 0, sizeof *set);
    for (i = 0; i < rpx__n_sections; i++) {
        if (!rpx__section_on(p->plan, i)) continue;
        set->s[set->n] = rpx__sections[i];
        set->sp[set->n].p = p;
        set->sp[set->n].sh = sh;
        set->sp[set->n].slice = sh->slice[i];
        set->n++;
    }
}

void rpx__sections_mark(section_set *set, section_event event)
{
    int i;
    for (i = 0; i < set->n; i++)
        if (set->s[i]->mark) set->s[i]->mark(&set->sp[i], event);
}

/* Several timed_call hooks: each in table order (one is wired straight). */
static void timed_dispatch(void *ctx, long i, size_t k, int rc)
{
    const section_set *set = ctx;
    int j;
    for (j = 0; j < set->n_timed; j++) set->timed[j](set->timed_state[j], i, k, rc);
}

int rpx__sections_begin(section_set *set, rpx_target *t, struct rpx_cuda *cuda,
                        rpx_run_config *loop, rpx_error *err)
{
    int i, rc;
    for (i = 0; i < set->n; i++) {
        const rpx_section *s = set->s[i];
        section_proc *sp = &set->sp[i];
        sp->target = t;
        sp->cuda = cuda;
        sp->loop = loop;
        if (s->begin && (rc = s->begin(sp, err)) != 0) return rc;
        set->begun = i + 1;
        if (s->after_call) {
            set->after[set->n_after] = s->after_call;
            set->after_state[set->n_after++] = sp->state;
        }
        if (s->timed_call) {
            set->timed[set->n_timed] = s->timed_call;
            set->timed_state[set->n_timed++] = sp->state;
        }
    }
    if (set->n_timed == 1) {
        loop->check = set->timed[0];
        loop->check_ctx = set->timed_state[0];
    } else if (set->n_timed > 1) {
        loop->check = timed_dispatch;
        loop->check_ctx = set;
    }
    return 0;
}

void rpx__sections_after_loop(section_set *set)
{
    int i;
    for (i = 0; i < set->begun; i++)
        if (set->s[i]->after_loop) set->s[i]->after_loop(&set->sp[i]);
}

void rpx__sections_export(section_set *set, json_t *o)
{
    int i;
    for (i = 0; i < set->begun; i++) {
        json_t *v = set->s[i]->export_json ? set->s[i]->export_json(&set->sp[i]) : NULL;
        if (v) json_object_set_new(o, set->s[i]->key, v);
    }
}

void rpx__sections_end(section_set *set)
{
    int i;
    for (i = set->begun - 1; i >= 0; i--)
        if (set->s[i]->end) set->s[i]->end(&set->sp[i]);
    set->begun = 0;
}

int rpx__sections_merge(const run_plan *plan, run_shared *const *procs, json_t *const *exports,
                        int n, rpx_run_process *views, const rpx_run_data *rd,
                        json_t **values, section_out *out_check)
{
    void *slices[RPX_RUNNER_MAX_PROCESSES];
    json_t *mine[RPX_RUNNER_MAX_PROCESSES];
    size_t i;
    int j;
    memset(out_check, 0, sizeof *out_check);
    for (i = 0; i < rpx__n_sections; i++) {
        const rpx_section *s = rpx__sections[i];
        section_merge m = {plan, n, procs, slices, mine, views, rd};
        section_out out;
        values[i] = NULL;
        if (!rpx__section_on(plan, i) || !s->merge) continue;
        for (j = 0; j < n; j++) {
            slices[j] = procs[j]->slice[i];
            mine[j] = json_object_get(exports[j], s->key);
        }
        memset(&out, 0, sizeof out);
        if (s->merge(&m, &out) != 0) return -1;
        values[i] = out.value;
        if (out.check_failed && !out_check->check_failed) *out_check = out;
        if (out.check_failed) out_check->value = NULL;
    }
    return 0;
}
