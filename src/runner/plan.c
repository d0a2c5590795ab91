/* plan.c — owns a run parsed once (plan.h): the number of worker processes,
 * the placement (--cpus read here, once), the stopping rule's feasibility,
 * the audits (--audit read here, once), the measured sections the run keeps
 * and the output checks' parameters,
 * worked out from a checked config before any process starts. */
#include "runner/plan.h"

#include <string.h>

#include "loader/kinds.h"
#include "rpxprof/error.h"
#include "rpxprof/stats.h"
#include "runner/runner_internal.h"
#include "runner/section.h"

int rpx__plan_processes(const rpx_runner_config *c, const rpx_kind *row, int spread_cpus,
                        int *asked)
{
    int kind_p = row ? row->default_processes : 0;
    int p = c->processes > 0 ? c->processes
          : (!c->isolate || c->gpu_time) ? 1
          : kind_p > 0 ? kind_p
                       : RPX_RUNNER_DEFAULT_PROCESSES;
    int n = spread_cpus;
    if (asked) *asked = p;
    if (n > 0) { /* --spread: the same number of processes on each CPU */
        long cap = c->repeats >= 1 && c->repeats < RPX_RUNNER_MAX_PROCESSES
                       ? c->repeats
                       : RPX_RUNNER_MAX_PROCESSES;
        long up = ((long)p + n - 1) / n * n;
        if (up > cap) up = cap / n * n;
        if (up < n) up = n;
        return (int)up;
    }
    return c->repeats >= 1 && p > c->repeats ? (int)c->repeats : p;
}

/* The stopping rule adds processes of repeats/processes calls: when that is
 * fewer than the p50's between-process interval needs in every process, no
 * number of processes ever states it (docs/statistics.md). */
static int precision_reachable(const rpx_runner_config *c, const run_plan *plan, rpx_error *err)
{
    long slice = rpx__workers_slice(c->repeats, plan->processes, plan->processes);
    long need = (long)rpx_stats_quantile_min_calls(0.5, 0.95);
    int k = plan->processes_asked ? plan->processes_asked : plan->processes;
    rpx_option_spelling sp = (rpx_option_spelling)c->spelling;
    char tp[40], rp[40], rp2[40], pr[40];
    if (!(c->target_precision > 0) || slice >= need) return 0;
    return rpx_error_set(err, RPX_EUSAGE,
                         "%s %g%%: cannot be reached: %s %ld over %d processes is %ld "
                         "call%s in each, and the p50's interval between processes "
                         "needs at least %ld calls in every process; give %s %ld or more "
                         "(or fewer %s)",
                         rpx__option_value_label("target-precision", sp, tp, sizeof tp),
                         c->target_precision * 100,
                         rpx__option_value_label("repeats", sp, rp, sizeof rp), c->repeats,
                         plan->processes, slice, slice == 1 ? "" : "s", need,
                         rpx_run_option_spelled(rpx_run_option_find("repeats"), sp, rp2,
                                                sizeof rp2),
                         need * k,
                         rpx_run_option_spelled(rpx_run_option_find("processes"), sp, pr,
                                                sizeof pr));
}

int rpx__plan_build(const rpx_runner_config *c, const char *kind, const rpx_kind *row,
                    run_plan *plan, rpx_error *err)
{
    int asked, rc;
    size_t i;
    memset(plan, 0, sizeof *plan);
    plan->c = c;
    plan->kind = kind;
    plan->row = row;
    if ((rc = rpx__placement_plan(c, &plan->place, err)) != 0) return rc;
    plan->processes = rpx__plan_processes(c, row, c->spread ? plan->place.n_rotation : 0, &asked);
    if (c->spread) {
        if (asked != plan->processes) plan->spread_asked = asked;
    } else if (asked > plan->processes) {
        plan->processes_asked = asked;
    }
    if ((rc = precision_reachable(c, plan, err)) != 0) return rc;
    if (c->audit && rpx__audit_parse(c->audit, &plan->audits) != 0) plan->audits = 0; /* checked */
    plan->rate_hz = rpx__kind_has(row, RPX_KIND_OWN_LOAD) ? 0 : c->rate_hz;
    /* where each call ran: a local model's calls (an HTTP call's time is the
     * remote server's, and the open-loop load has no calls of its own) */
    plan->call_records = rpx__kind_has(row, RPX_KIND_REMOTE) ? RPX_CALL_RECORDS_OFF : c->call_records;
    if (c->check_outputs || c->reference_outputs || c->save_outputs) {
        outputs_params op = {c->check_fraction, c->rtol, c->atol, c->target.load_seed,
                             c->reference_outputs, c->save_outputs, 0};
        plan->outputs = op;
        rpx__outputs_resolve(&plan->outputs); /* before the model can change its folder */
    }
    for (i = 0; i < rpx__n_sections; i++)
        if (rpx__sections[i]->on(plan)) plan->sections |= 1u << i;
    return 0;
}

void rpx__plan_inputs(run_plan *plan, const rpx_inputs *samples, size_t n,
                      const rpx_inputs *pristine)
{
    plan->samples = samples;
    plan->n_samples = n;
    plan->pristine = pristine;
}
