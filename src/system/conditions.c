/* conditions.c — owns the machine's conditions at the start and the end of a
 * run (load, runnable tasks, CPU pressure, steal, GPU processes and
 * throttling) and the warnings they call for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/nvml.h"
#include "system/system_internal.h"

static void loadavg(json_t *c)
{
    char text[256], why[512];
    double l1, l5, l15;
    int running, total;
    long n = rpx_sys_read("/proc/loadavg", text, sizeof text);
    static const char *const keys[] = {"load_1m", "load_5m", "load_15m", "tasks_running",
                                       "tasks_total"};
    size_t i;
    if (n < 0 || sscanf(text, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) != 5) {
        if (n < 0)
            rpx__sys_why(why, sizeof why, "/proc/loadavg", (int)n);
        else {
            text[strcspn(text, "\n")] = '\0';
            snprintf(why, sizeof why, "/proc/loadavg: not 'L1 L5 L15 R/T ...': '%.40s'", text);
        }
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++) rpx__sys_null(c, keys[i], "%s", why);
        return;
    }
    rpx__sys_put(c, "load_1m", json_real(l1));
    rpx__sys_put(c, "load_5m", json_real(l5));
    rpx__sys_put(c, "load_15m", json_real(l15));
    rpx__sys_put(c, "tasks_running", json_integer(running));
    rpx__sys_put(c, "tasks_total", json_integer(total));
}

/* procs_running, procs_blocked and the aggregate "cpu" line's steal and
 * total ticks (USER_HZ) of /proc/stat. */
static void proc_stat(json_t *c)
{
    long len;
    char *text = rpx__sys_slurp("/proc/stat", &len), why[512];
    const char *p;
    long long v[10] = {0}, total = 0;
    int i, n = 0;
    if (!text) {
        rpx__sys_why(why, sizeof why, "/proc/stat", (int)len);
        rpx__sys_null(c, "procs_running", "%s", why);
        rpx__sys_null(c, "procs_blocked", "%s", why);
        rpx__sys_null(c, "cpu_ticks_total", "%s", why);
        rpx__sys_null(c, "cpu_steal_ticks", "%s", why);
        return;
    }
    for (i = 0; i < 2; i++) {
        const char *key = i ? "procs_blocked " : "procs_running ";
        long long x;
        p = strstr(text, key);
        if (p && (p == text || p[-1] == '\n') && sscanf(p + strlen(key), "%lld", &x) == 1)
            rpx__sys_put(c, key[6] == 'r' ? "procs_running" : "procs_blocked", json_integer(x));
        else
            rpx__sys_null(c, i ? "procs_blocked" : "procs_running", "/proc/stat: no '%.13s' line", key);
    }
    if (strncmp(text, "cpu ", 4) == 0)
        n = sscanf(text + 4, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
    if (n >= 8) {
        /* user nice system idle iowait irq softirq steal [guest guest_nice]:
         * guest time is already counted in user and nice. */
        for (i = 0; i < 8; i++) total += v[i];
        rpx__sys_put(c, "cpu_ticks_total", json_integer(total));
        rpx__sys_put(c, "cpu_steal_ticks", json_integer(v[7]));
    } else {
        rpx__sys_null(c, "cpu_ticks_total", "/proc/stat: no 'cpu' line with 8 counters");
        rpx__sys_null(c, "cpu_steal_ticks", "/proc/stat: no 'cpu' line with 8 counters");
    }
    free(text);
}

static void pressure(json_t *c)
{
    char text[512], why[512];
    const char *p;
    double avg10;
    long n = rpx_sys_read("/proc/pressure/cpu", text, sizeof text);
    if (n < 0) {
        rpx__sys_null(c, "cpu_pressure_some_avg10", "%s", rpx__sys_why(why, sizeof why, "/proc/pressure/cpu", (int)n));
        return;
    }
    p = strstr(text, "some avg10=");
    if (p && sscanf(p + 11, "%lf", &avg10) == 1)
        rpx__sys_put(c, "cpu_pressure_some_avg10", json_real(avg10));
    else
        rpx__sys_null(c, "cpu_pressure_some_avg10", "/proc/pressure/cpu: no 'some avg10=' field");
}

json_t *rpx_system_conditions(rpx_nvml *nvml)
{
    json_t *c = json_object(), *w = json_array();
    if (!c || !w) {
        json_decref(c);
        json_decref(w);
        return NULL;
    }
    loadavg(c);
    proc_stat(c);
    pressure(c);
    if (nvml) {
        json_t *g = rpx_nvml_conditions(nvml, w);
        rpx__sys_put(c, "gpus", g ? g : json_null());
        if (!g) rpx__sys_reason(c, "gpus", "NVML gave no conditions");
    } else {
        rpx__sys_null(c, "gpus", "no NVML handle: NVML could not be opened, or the caller passed none");
    }
    rpx__sys_put(c, "warnings", w);
    rpx__sys_finish(c, 1);
    return c;
}

static double num(const json_t *o, const char *key, int *ok)
{
    const json_t *v = json_object_get(o, key);
    *ok = json_is_number(v);
    return *ok ? json_number_value(v) : 0;
}

void rpx_system_card_set_conditions(json_t *card, json_t *start, json_t *end)
{
    json_t *cond, *warnings, *cpu;
    const char *when[2] = {"start", "end"};
    json_t *side[2];
    double cpus;
    int ok, i;
    size_t k;
    if (!card) return;
    side[0] = start;
    side[1] = end;
    warnings = json_object_get(card, "warnings");
    if (!json_is_array(warnings)) {
        warnings = json_array();
        rpx__sys_put(card, "warnings", warnings);
    }
    cond = json_object();
    if (!cond) return;
    for (i = 0; i < 2; i++) {
        if (side[i])
            rpx__sys_put(cond, when[i], json_incref(side[i]));
        else
            rpx__sys_null(cond, when[i], "not recorded (not a run, or the run did not reach its %s)", when[i]);
    }
    rpx__sys_null(cond, "other_processes", "not recorded (not a run, or the run did not reach "
                  "its end)");
    rpx__sys_finish(cond, 1);
    rpx__sys_put(card, "conditions", cond);

    cpu = json_object_get(card, "cpu");
    cpus = num(cpu, "allowed_count", &ok);
    if (!ok) cpus = num(cpu, "online_count", &ok);
    for (i = 0; i < 2; i++) {
        double load;
        int ok2;
        if (!side[i]) continue;
        load = num(side[i], "load_1m", &ok2);
        if (ok && ok2 && load > cpus)
            rpx__sys_warn(warnings, "At the %s of the run, the 1-minute load average (%.2f) is above "
                      "the %g CPUs this process may use: other work competes for them%s.",
                      when[i], load, cpus, i ? " (the run's own threads count too)" : "");
        for (k = 0; k < json_array_size(json_object_get(side[i], "warnings")); k++) {
            const char *s = json_string_value(json_array_get(json_object_get(side[i], "warnings"), k));
            if (s) rpx__sys_warn(warnings, "At the %s of the run: %s", when[i], s);
        }
    }
    if (start && end) {
        int a, b, c2, d;
        double st0 = num(start, "cpu_steal_ticks", &a), st1 = num(end, "cpu_steal_ticks", &b);
        double t0 = num(start, "cpu_ticks_total", &c2), t1 = num(end, "cpu_ticks_total", &d);
        if (a && b && c2 && d && t1 > t0 && st1 >= st0 && (st1 - st0) / (t1 - t0) > 0.01)
            rpx__sys_warn(warnings, "The hypervisor took %.1f%% of the CPU time (steal) during the "
                      "run: other guests competed for the host's CPUs.",
                      100.0 * (st1 - st0) / (t1 - t0));
    }
}
