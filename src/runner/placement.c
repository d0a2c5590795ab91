/* placement.c — owns where a run's processes run (issue 27 §3): --cpus LIST
 * parsed, the CPUs this process may use (its own sched_getaffinity: taskset,
 * a cgroup cpuset, Slurm's binding; options.c checks --cpus against them in
 * the caller's spelling), --spread's
 * rotation of the processes over those CPUs, the CPUs each process gets, and
 * the report's `placement` section. The mask is set in the model's process
 * before the target is loaded, so every thread it starts inherits it
 * (stage.c). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner_internal.h"

/* "1", "2-3", "0,2", "0-1,4": every CPU into set. 0, or -1 with why. */
int rpx__cpus_parse(const char *text, cpu_set_t *set, char *why, size_t size)
{
    const char *p = text;
    CPU_ZERO(set);
    if (!text || !*text) {
        snprintf(why, size, "it is empty");
        return -1;
    }
    for (;;) {
        char *end;
        long lo, hi;
        if (*p < '0' || *p > '9') goto bad;
        lo = strtol(p, &end, 10);
        hi = lo;
        p = end;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9') goto bad;
            hi = strtol(p, &end, 10);
            p = end;
        }
        if (lo >= CPU_SETSIZE || hi >= CPU_SETSIZE) {
            snprintf(why, size, "CPU numbers go up to %d", CPU_SETSIZE - 1);
            return -1;
        }
        if (hi < lo) {
            snprintf(why, size, "the range %ld-%ld goes backwards", lo, hi);
            return -1;
        }
        for (; lo <= hi; lo++) CPU_SET((int)lo, set);
        if (*p == '\0') return 0;
        if (*p != ',') goto bad;
        p++;
    }
bad:
    snprintf(why, size, "not a list of CPUs");
    return -1;
}

int rpx_runner_cpus_list(const char *text, int *cpus, int max, rpx_error *err)
{
    cpu_set_t set;
    char why[128];
    int c, n = 0;
    if (rpx__cpus_parse(text, &set, why, sizeof why) != 0)
        return rpx_error_set(err, RPX_EUSAGE, "'%s': %s", text ? text : "", why);
    for (c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    return n;
}

int rpx__cpus_allowed(cpu_set_t *set)
{
    CPU_ZERO(set);
    return sched_getaffinity(0, sizeof *set, set);
}

/* "0-1,4" */
void rpx__cpus_text(const cpu_set_t *set, char *buf, size_t size)
{
    int c, n = 0, first = 1;
    buf[0] = '\0';
    for (c = 0; c < CPU_SETSIZE && (size_t)n < size; c++) {
        int e = c;
        if (!CPU_ISSET(c, set)) continue;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set)) e++;
        n += snprintf(buf + n, size - (size_t)n, e > c ? "%s%d-%d" : "%s%d", first ? "" : ",", c,
                      e);
        first = 0;
        c = e;
    }
}

json_t *rpx__cpus_json(const cpu_set_t *set)
{
    json_t *a = json_array();
    int c;
    for (c = 0; a && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set)) json_array_append_new(a, json_integer(c));
    return a;
}

int rpx__placement_plan(const rpx_runner_config *c, placement *pl, rpx_error *err)
{
    char why[128];
    int k;
    memset(pl, 0, sizeof *pl);
    if (rpx__cpus_allowed(&pl->allowed) != 0) CPU_ZERO(&pl->allowed);
    if (c->cpus) { /* checked by rpx_runner_config_check (options.c); read here for the run */
        if (rpx__cpus_parse(c->cpus, &pl->requested, why, sizeof why) != 0)
            return rpx_error_set(err, RPX_EUSAGE, "--cpus '%s': %s", c->cpus, why);
        pl->has_requested = 1;
    }
    pl->policy = c->spread ? RPX_PLACE_SPREAD : pl->has_requested ? RPX_PLACE_PINNED
                                                                  : RPX_PLACE_INHERIT;
    for (k = 0; k < CPU_SETSIZE; k++)
        if (CPU_ISSET(k, pl->has_requested ? &pl->requested : &pl->allowed))
            pl->rotation[pl->n_rotation++] = k;
    return 0;
}

int rpx__placement_cpus_of(const placement *pl, int process, cpu_set_t *set)
{
    CPU_ZERO(set);
    switch (pl->policy) {
    case RPX_PLACE_PINNED: *set = pl->requested; return 1;
    case RPX_PLACE_SPREAD:
        if (pl->n_rotation < 1) return 0;
        CPU_SET(pl->rotation[process % pl->n_rotation], set);
        return 1;
    default: return 0;
    }
}

int rpx__placement_spread_cpus(const rpx_runner_config *c)
{
    placement pl;
    if (!c->spread) return 0;
    return rpx__placement_plan(c, &pl, NULL) == 0 ? pl.n_rotation : 0;
}

static const char *policy_name(int policy)
{
    return policy == RPX_PLACE_SPREAD ? "spread" : policy == RPX_PLACE_PINNED ? "pinned"
                                                                             : "inherit";
}

json_t *rpx__placement_json(const placement *pl, const cpu_set_t *const *process_cpus, int n)
{
    json_t *o = json_object(), *by = json_array();
    int i;
    if (!o || !by) {
        json_decref(o);
        json_decref(by);
        return NULL;
    }
    json_object_set_new(o, "policy", json_string(policy_name(pl->policy)));
    json_object_set_new(o, "cpus_allowed", rpx__cpus_json(&pl->allowed));
    json_object_set_new(o, "cpus_requested",
                        pl->has_requested ? rpx__cpus_json(&pl->requested) : json_null());
    for (i = 0; i < n; i++) {
        json_t *p = json_object();
        json_object_set_new(p, "process", json_integer(i));
        /* what the model's process itself read after the mask was set: null when
         * it could not (the process ended before it read it) */
        json_object_set_new(p, "cpus", process_cpus[i] && CPU_COUNT(process_cpus[i]) > 0
                                           ? rpx__cpus_json(process_cpus[i])
                                           : json_null());
        json_array_append_new(by, p);
    }
    json_object_set_new(o, "by_process", by);
    return o;
}
