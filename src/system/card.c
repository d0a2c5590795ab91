/* card.c — owns assembling the system card: the reference tool's 13
 * top-level keys (derived from the sections), the sections of the other rooms,
 * the GPUs NVML sees, warnings, and the card's own cost (collect_ms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/nvml.h"
#include "rpxprof/error.h"
#include "system/system_internal.h"

static const char *const reference_keys[] = {
    "gpu_name", "gpu_memory_gb", "gpu_count", "cpu_name", "ram_gb", "cuda_version",
    "pytorch_version", "python_version", "precision", "batch_size", "input_resolution", "os",
    "driver_version"};
static const char *const section_keys[] = {"cpu", "memory", "limits", "operating_system",
                                           "build", "environment"};

/* An integer when the text is one, else the text itself, else null. */
static json_t *batch_size(const char *s)
{
    char *end;
    long long v;
    if (!s) return json_null();
    v = strtoll(s, &end, 10);
    if (*s && !*end && v >= 0) return json_integer(v);
    return rpx__sys_jstr(s);
}

/* card[key] = section[field], or null with the section's reason. */
static void derive(json_t *card, const char *key, const json_t *section, const char *section_name,
                   const char *field)
{
    const json_t *v = json_object_get(section, field);
    const char *why;
    if (v && !json_is_null(v)) {
        rpx__sys_put(card, key, json_deep_copy(v));
        return;
    }
    why = json_string_value(json_object_get(json_object_get(section, "unavailable"), field));
    rpx__sys_null(card, key, "%s.%s: %s", section_name, field, why ? why : "unknown");
}

static void os_string(json_t *card, const json_t *os)
{
    const char *pretty = json_string_value(json_object_get(os, "distribution"));
    const char *kernel = json_string_value(json_object_get(os, "kernel"));
    const char *release = json_string_value(json_object_get(os, "kernel_release"));
    if (pretty && kernel && release)
        rpx__sys_put(card, "os", json_sprintf("%s; %s %s", pretty, kernel, release));
    else if (kernel && release)
        rpx__sys_put(card, "os", json_sprintf("%s %s", kernel, release));
    else if (pretty)
        rpx__sys_put(card, "os", rpx__sys_jstr(pretty));
    else
        rpx__sys_null(card, "os", "neither the distribution nor the kernel is known: see operating_system.unavailable");
}

static void string_opt(json_t *card, const char *key, const char *v, const char *why)
{
    if (v)
        rpx__sys_put(card, key, rpx__sys_jstr(v));
    else
        rpx__sys_null(card, key, "%s", why);
}

/* The reference's GPU keys. On a cpu run they describe no GPU (count 0); on
 * a cuda run, the visible GPUs: the first one's name and memory, how many. */
static void gpu_keys(json_t *card, int cuda, const json_t *gpus, const char *gpus_why,
                     const char *driver)
{
    static const char *const keys[] = {"gpu_name", "gpu_memory_gb", "gpu_count", "cuda_version",
                                       "driver_version"};
    const json_t *first = NULL;
    size_t i;
    long long count = 0, best = -1;
    if (!cuda) {
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (strcmp(keys[i], "gpu_count") == 0)
                rpx__sys_put(card, keys[i], json_integer(0));
            else
                rpx__sys_null(card, keys[i], "cpu run: no GPU is described here; "
                          "the GPUs present are listed in `gpus`");
        return;
    }
    if (!json_is_array(gpus)) {
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
            rpx__sys_null(card, keys[i], "GPUs unknown: %s", gpus_why ? gpus_why : "no NVML");
        return;
    }
    for (i = 0; i < json_array_size(gpus); i++) {
        const json_t *g = json_array_get(gpus, i), *ord = json_object_get(g, "visible_ordinal");
        if (!json_is_true(json_object_get(g, "visible"))) continue;
        count++;
        if (!first || (json_is_integer(ord) && (best < 0 || json_integer_value(ord) < best))) {
            first = g;
            best = json_is_integer(ord) ? json_integer_value(ord) : best;
        }
    }
    rpx__sys_put(card, "gpu_count", json_integer(count));
    if (!first) {
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (strcmp(keys[i], "gpu_count") != 0)
                rpx__sys_null(card, keys[i], "no GPU is visible (NVML sees %zu; CUDA_VISIBLE_DEVICES=%s)",
                          json_array_size(gpus), cvd ? cvd : "(unset)");
        return;
    }
    derive(card, "gpu_name", first, "gpus[first visible]", "name");
    {
        const json_t *mb = json_object_get(first, "memory_total_mb");
        if (json_is_number(mb))
            rpx__sys_put(card, "gpu_memory_gb", json_real(json_number_value(mb) / 1024.0));
        else
            rpx__sys_null(card, "gpu_memory_gb", "the first visible GPU's memory_total_mb is unknown");
    }
    {
        const json_t *cv = json_object_get(first, "cuda_driver_version");
        if (json_is_string(cv))
            rpx__sys_put(card, "cuda_version", json_deep_copy(cv));
        else if (json_is_number(cv))
            rpx__sys_put(card, "cuda_version", json_sprintf("%g", json_number_value(cv)));
        else
            rpx__sys_null(card, "cuda_version", "the first visible GPU's cuda_driver_version is unknown");
    }
    string_opt(card, "driver_version", driver, "NVML gave no driver version");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

json_t *rpx_system_card(const rpx_card_options *opt, rpx_error *err)
{
    double t0 = now_ms();
    json_t *c = json_object(), *warnings = json_array(), *sec[6], *gpus = NULL, *cond, *ref;
    rpx_nvml *nvml = opt ? opt->nvml : NULL, *own = NULL;
    char gpus_why[RPX_ERROR_MESSAGE_SIZE + 64] = "", *driver = NULL;
    const char *device = opt && opt->device ? opt->device : "cpu";
    int cuda = strcmp(device, "cuda") == 0, ok = 1;
    size_t i;

    if (!c || !warnings) {
        json_decref(c);
        json_decref(warnings);
        rpx_error_set(err, RPX_ENOMEM, "system card: out of memory");
        return NULL;
    }
    sec[0] = rpx__sys_cpu_section(warnings);
    sec[1] = rpx__sys_memory_section(warnings);
    sec[2] = rpx__sys_limits_section(sec[0], warnings);
    sec[3] = rpx__sys_os_section(warnings);
    sec[4] = rpx__sys_build_section(warnings);
    sec[5] = rpx__sys_env_section(warnings);
    for (i = 0; i < 6; i++) ok = ok && sec[i];

    if (opt && opt->skip_gpus) {
        snprintf(gpus_why, sizeof gpus_why, "not looked for (the caller asked the card to skip GPUs)");
    } else {
        if (!nvml) {
            rpx_error e = {0};
            if (rpx_nvml_open(&own, &e) != 0 || !own) {
                snprintf(gpus_why, sizeof gpus_why, "NVML unavailable: %s",
                         e.message[0] ? e.message : "rpx_nvml_open failed without a reason");
                own = NULL;
            }
            nvml = own;
        }
        if (nvml) {
            const char *d = rpx_nvml_driver_version(nvml);
            gpus = rpx_nvml_gpus(nvml, warnings);
            if (!gpus) snprintf(gpus_why, sizeof gpus_why, "NVML gave no GPU list");
            if (d) driver = strdup(d);
        }
        if (own) rpx_nvml_close(own);
    }

    rpx__sys_put(c, "schema", json_string(RPX_SYSTEM_CARD_SCHEMA));
    /* The reference tool's 13 keys, built aside and moved in its order. */
    ref = json_object();
    gpu_keys(ref, cuda, gpus, gpus_why, driver);
    derive(ref, "cpu_name", sec[0], "cpu", "model_name");
    {
        const json_t *mb = json_object_get(sec[1], "total_mb");
        if (json_is_number(mb))
            rpx__sys_put(ref, "ram_gb", json_real(json_number_value(mb) / 1024.0));
        else
            derive(ref, "ram_gb", sec[1], "memory", "total_mb");
    }
    string_opt(ref, "pytorch_version", opt ? opt->pytorch_version : NULL,
               opt && opt->pytorch_reason ? opt->pytorch_reason
                                          : "not given: only a Python target reports it");
    string_opt(ref, "python_version", opt ? opt->python_version : NULL,
               "not given: only a Python target reports it");
    string_opt(ref, "precision", opt ? opt->precision : NULL,
               "not given: a run records its --precision");
    if (opt && opt->batch_size)
        rpx__sys_put(ref, "batch_size", batch_size(opt->batch_size));
    else
        rpx__sys_null(ref, "batch_size", "not given: a run records --meta batch_size=N");
    string_opt(ref, "input_resolution", opt ? opt->input_resolution : NULL,
               "not given: a run records HxW of its first HxWxC or TxHxWxC input, if any");
    os_string(ref, sec[3]);
    for (i = 0; i < sizeof reference_keys / sizeof reference_keys[0]; i++) {
        const char *why = json_string_value(
            json_object_get(json_object_get(ref, "unavailable"), reference_keys[i]));
        rpx__sys_put(c, reference_keys[i], json_incref(json_object_get(ref, reference_keys[i])));
        if (why) rpx__sys_reason(c, reference_keys[i], "%s", why);
    }
    json_decref(ref);

    rpx__sys_put(c, "device", json_string(cuda ? "cuda" : "cpu"));
    for (i = 0; i < 6; i++) {
        if (sec[i])
            rpx__sys_put(c, section_keys[i], sec[i]);
        else
            rpx__sys_null(c, section_keys[i], "out of memory");
    }
    if (gpus)
        rpx__sys_put(c, "gpus", gpus);
    else
        rpx__sys_null(c, "gpus", "%s", gpus_why);
    free(driver);

    rpx__sys_null(c, "cpu_probe", "not measured: `rpxprof system --probe` measures it, and a run "
                  "its cheap form unless --no-cpu-probe");
    cond = json_object();
    rpx__sys_null(cond, "start", "not recorded (not a run)");
    rpx__sys_null(cond, "end", "not recorded (not a run)");
    rpx__sys_null(cond, "other_processes", "not recorded (not a run)");
    rpx__sys_finish(cond, 1);
    rpx__sys_put(c, "conditions", cond);
    rpx__sys_put(c, "warnings", warnings);
    rpx__sys_put(c, "collect_ms", json_real(now_ms() - t0));
    rpx__sys_finish(c, 1);
    if (!ok || !json_object_get(c, "unavailable")) {
        json_decref(c);
        rpx_error_set(err, RPX_ENOMEM, "system card: out of memory");
        return NULL;
    }
    return c;
}
