/* system.c — owns `rpxprof system`: the system card for people (sections,
 * "n/a (reason)" for what is unknown) or, with --json, the same object a run
 * report embeds as `system_card`. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "device/nvml.h"
#include "common/json.h"
#include "rpxprof/system.h"

static const char usage[] =
    "Usage: rpxprof system [--json] [--device cpu|cuda] [--probe]\n"
    "Describe this machine as a run report's system card records it: CPU, memory,\n"
    "cgroup limits, operating system, rpxprof's build, GPUs, the performance-related\n"
    "environment variables, the load now, and warnings about noisy conditions.\n"
    "\n"
    "      --json         print the card as JSON (the report's `system_card` object)\n"
    "      --device DEV   cpu (default): the reference's gpu_* keys describe no GPU;\n"
    "                     cuda: they describe the visible GPUs\n"
    "      --probe        time each allowed CPU on a compute loop and a memory-streaming\n"
    "                     loop (5 repetitions each, about 0.1-0.2 s per CPU) and warn when\n"
    "                     CPUs differ beyond the repetitions' noise (the card's cpu_probe)\n"
    "  -h, --help         show this help and exit\n"
    "\n"
    "RPX_SYSROOT=DIR reads /proc, /sys and /etc under DIR (a captured snapshot;\n"
    "see scripts/gather-snapshot.sh). Exit status: 0 success, 1 failure,\n"
    "2 bad command line.\n";

static const struct {
    const char *key, *title;
} sections[] = {
    {"cpu", "CPU"},
    {"memory", "Memory"},
    {"limits", "Limits (cgroups)"},
    {"operating_system", "Operating system"},
    {"build", "Build"},
};

static const char *const reference_keys[] = {
    "cpu_name", "ram_gb", "os", "gpu_name", "gpu_memory_gb", "gpu_count", "driver_version",
    "cuda_version", "pytorch_version", "python_version", "precision", "batch_size",
    "input_resolution"};

/* A number for people: up to two decimals, trailing zeros dropped. */
static void put_number(FILE *f, const json_t *v)
{
    char s[64];
    size_t n;
    if (json_is_integer(v)) {
        fprintf(f, "%lld", (long long)json_integer_value(v));
        return;
    }
    snprintf(s, sizeof s, "%.2f", json_real_value(v));
    n = strlen(s);
    while (n > 0 && s[n - 1] == '0') s[--n] = '\0';
    if (n > 0 && s[n - 1] == '.') s[--n] = '\0';
    fputs(s, f);
}

static void put_scalar(FILE *f, const json_t *v)
{
    if (json_is_string(v))
        fputs(json_string_value(v), f);
    else if (json_is_number(v))
        put_number(f, v);
    else if (json_is_boolean(v))
        fputs(json_is_true(v) ? "yes" : "no", f);
    else if (json_is_null(v))
        fputs("n/a", f);
}

/* {k: v, ...} on one line: "k v, k v"; booleans only: "a b (not: c d)". */
static void put_inline_object(FILE *f, const json_t *o)
{
    const char *k;
    json_t *v;
    int all_bool = json_object_size(o) > 0, first = 1;
    json_object_foreach((json_t *)o, k, v) if (!json_is_boolean(v)) all_bool = 0;
    if (all_bool) {
        int neg;
        for (neg = 0; neg < 2; neg++) {
            int any = 0;
            if (neg) fputs(" (not: ", f);
            json_object_foreach((json_t *)o, k, v) if (json_is_true(v) == !neg) {
                fprintf(f, "%s%s", any ? " " : "", k);
                any = 1;
            }
            if (!any) fputs(neg ? "-" : "none", f);
            if (neg) fputs(")", f);
        }
        return;
    }
    json_object_foreach((json_t *)o, k, v) {
        if (strcmp(k, "unavailable") == 0) continue;
        fprintf(f, "%s%s ", first ? "" : ", ", k);
        if (json_is_object(v) || json_is_array(v)) {
            char *s = json_dumps(v, JSON_COMPACT);
            fputs(s ? s : "?", f);
            free(s);
        } else {
            put_scalar(f, v);
        }
        first = 0;
    }
}

static void put_field(FILE *f, const char *key, const json_t *v, const json_t *unavailable)
{
    const char *why = json_string_value(json_object_get(unavailable, key));
    fprintf(f, "  %-24s ", key);
    if (json_is_null(v) || !v) {
        fprintf(f, "n/a%s%s%s\n", why ? " (" : "", why ? why : "", why ? ")" : "");
    } else if (json_is_array(v)) {
        size_t i;
        if (json_array_size(v) == 0) fputs("none", f);
        for (i = 0; i < json_array_size(v); i++) {
            const json_t *e = json_array_get(v, i);
            if (json_is_object(e)) {
                fprintf(f, "%s", i ? "\n                           " : "");
                put_inline_object(f, e);
            } else {
                fprintf(f, "%s", i ? ", " : "");
                put_scalar(f, e);
            }
        }
        fputc('\n', f);
    } else if (json_is_object(v)) {
        put_inline_object(f, v);
        fputc('\n', f);
    } else {
        put_scalar(f, v);
        fputc('\n', f);
    }
}

static void put_section(FILE *f, const char *title, const json_t *s)
{
    const char *k;
    json_t *v;
    const json_t *u = json_object_get(s, "unavailable");
    fprintf(f, "\n%s\n", title);
    if (!json_is_object(s)) {
        fputs("  n/a\n", f);
        return;
    }
    json_object_foreach((json_t *)s, k, v) {
        if (strcmp(k, "unavailable") == 0 || strcmp(k, "warnings") == 0) continue;
        put_field(f, k, v, u);
    }
}

/* cpu_probe as a table: one row per allowed CPU, compute and memory side by side. */
static void print_probe(FILE *f, const json_t *card)
{
    const json_t *p = json_object_get(card, "cpu_probe"), *cm, *mm;
    const json_t *m;
    size_t i;
    fputs("\nCPU probe (speed of each allowed CPU, relative to the fastest)\n", f);
    if (!json_is_object(p)) {
        const char *why = json_string_value(json_object_get(json_object_get(card, "unavailable"), "cpu_probe"));
        fprintf(f, "  n/a (%s)\n", why ? why : "unknown");
        return;
    }
    cm = json_object_get(p, "compute");
    mm = json_object_get(p, "memory");
    m = json_object_get(p, "method");
    fprintf(f, "  %-5s %9s %12s %7s   %9s %9s %7s\n", "cpu", "compute", "ns/iter", "noise",
            "memory", "GB/s", "noise");
    for (i = 0; i < json_array_size(cm); i++) {
        const json_t *c = json_array_get(cm, i), *mr = json_array_get(mm, i);
        const json_t *cols[6] = {json_object_get(c, "relative"), json_object_get(c, "ns_per_iter"),
                                 json_object_get(c, "noise"), json_object_get(mr, "relative"),
                                 json_object_get(mr, "gbps"), json_object_get(mr, "noise")};
        static const int width[6] = {9, 12, 6, 9, 9, 6}, prec[6] = {3, 4, 1, 3, 2, 1};
        int k;
        fprintf(f, "  %-5lld", (long long)json_integer_value(json_object_get(c, "cpu")));
        for (k = 0; k < 6; k++) {
            fputs(k == 3 ? "   " : " ", f);
            if (json_is_number(cols[k]))
                fprintf(f, "%*.*f%s", width[k], prec[k],
                        json_number_value(cols[k]) * (k == 2 || k == 5 ? 100 : 1),
                        k == 2 || k == 5 ? "%" : "");
            else
                fprintf(f, "%*s", width[k] + (k == 2 || k == 5), "n/a");
        }
        fputs(json_is_true(json_object_get(c, "slow")) || json_is_true(json_object_get(mr, "slow"))
                  ? "  slow\n" : "\n", f);
    }
    fprintf(f, "  compute: %s\n", json_string_value(json_object_get(m, "compute")));
    if (json_is_string(json_object_get(m, "memory")))
        fprintf(f, "  memory:  %s\n", json_string_value(json_object_get(m, "memory")));
    fprintf(f, "  %lld repetitions per CPU, interleaved; relative = fastest median / this CPU's "
            "median; noise = (max - min) / median of the repetitions; took ",
            (long long)json_integer_value(json_object_get(m, "repetitions")));
    put_number(f, json_object_get(p, "cost_ms"));
    fputs(" ms\n", f);
    fprintf(f, "  %s\n", json_is_string(json_object_get(p, "warning"))
                            ? "CPUs differ: see the warning below"
                            : "no CPU differs beyond the repetitions' noise and 3 %");
}

static void print_card(FILE *f, const json_t *card)
{
    const json_t *u = json_object_get(card, "unavailable"), *v, *gpus, *env, *w;
    size_t i;
    fprintf(f, "rpxprof system card (%s), device %s, collected in ",
            json_string_value(json_object_get(card, "schema")),
            json_string_value(json_object_get(card, "device")));
    put_number(f, json_object_get(card, "collect_ms"));
    fputs(" ms\n\nSummary (the reference tool's keys)\n", f);
    for (i = 0; i < sizeof reference_keys / sizeof reference_keys[0]; i++)
        put_field(f, reference_keys[i], json_object_get(card, reference_keys[i]), u);
    for (i = 0; i < sizeof sections / sizeof sections[0]; i++)
        put_section(f, sections[i].title, json_object_get(card, sections[i].key));

    fputs("\nGPUs\n", f);
    gpus = json_object_get(card, "gpus");
    if (!json_is_array(gpus)) {
        const char *why = json_string_value(json_object_get(u, "gpus"));
        fprintf(f, "  n/a (%s)\n", why ? why : "unknown");
    } else if (json_array_size(gpus) == 0) {
        fputs("  none\n", f);
    } else {
        for (i = 0; i < json_array_size(gpus); i++) {
            char title[64];
            snprintf(title, sizeof title, "  GPU %zu", i);
            put_section(f, title, json_array_get(gpus, i));
        }
    }

    fputs("\nEnvironment (allowlisted variables that are set)\n", f);
    env = json_object_get(card, "environment");
    if (json_object_size(env) == 0) {
        fputs("  none set\n", f);
    } else {
        const char *k;
        json_t *ev;
        json_object_foreach((json_t *)env, k, ev) if (strcmp(k, "unavailable") != 0)
            fprintf(f, "  %-24s %s\n", k, json_string_value(ev) ? json_string_value(ev) : "n/a");
    }
    v = json_object_get(json_object_get(card, "conditions"), "start");
    put_section(f, "Conditions now", v);

    print_probe(f, card);

    w = json_object_get(card, "warnings");
    fprintf(f, "\nWarnings (%zu)\n", json_array_size(w));
    if (json_array_size(w) == 0) fputs("  none\n", f);
    for (i = 0; i < json_array_size(w); i++)
        fprintf(f, "  - %s\n", json_string_value(json_array_get(w, i)));
}

/* `system` is not a run: the conditions it stores as `start` are the
 * conditions now, and its sentences say so. */
static void now_not_run_start(json_t *warnings)
{
    static const char prefix[] = "At the start of the run";
    size_t i;
    for (i = 0; i < json_array_size(warnings); i++) {
        const char *s = json_string_value(json_array_get(warnings, i));
        if (s && strncmp(s, prefix, sizeof prefix - 1) == 0) {
            json_t *n = json_sprintf("Now%s", s + sizeof prefix - 1); /* ", ..." or ": ..." */
            if (n) json_array_set_new(warnings, i, n);
        }
    }
}

int rpx_cli_system(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"device", required_argument, NULL, 'd'},
                                             {"probe", no_argument, NULL, 'p'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    rpx_card_options opt = {0};
    rpx_error err = {0};
    rpx_nvml *nvml = NULL;
    json_t *card, *now;
    int json = 0, probe = 0, c, rc = RPX_EXIT_OK;
    opterr = 0;
    optind = 1;
    opt.device = "cpu";
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'p': probe = 1; break;
        case 'd':
            if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "cuda") != 0)
                return rpx_cli_fail("system", RPX_EXIT_USAGE,
                                    "--device '%s': expected cpu or cuda", optarg);
            opt.device = optarg;
            break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        default:
            return rpx_cli_fail("system", RPX_EXIT_USAGE,
                                "unknown option '%s'; see 'rpxprof system --help'",
                                argv[optind - 1]);
        }
    }
    if (optind < argc)
        return rpx_cli_fail("system", RPX_EXIT_USAGE,
                            "unexpected argument '%s'; see 'rpxprof system --help'", argv[optind]);

    if (rpx_nvml_open(&nvml, &err) != 0) nvml = NULL; /* the card records why */
    opt.nvml = nvml;
    /* Not a run: no precision, batch size or resolution. */
    card = rpx_system_card(&opt, &err);
    now = card ? rpx_system_conditions(nvml) : NULL;
    if (!card || !now) {
        rc = rpx_cli_fail("system", RPX_EXIT_FAILURE, "out of memory collecting the system card");
    } else {
        rpx_system_card_set_conditions(card, now, NULL);
        if (probe) {
            rpx_error perr = {0};
            json_t *p = rpx_system_cpu_probe(1, &perr);
            if (!p && perr.code == RPX_ENOMEM) {
                json_decref(now);
                json_decref(card);
                if (nvml) rpx_nvml_close(nvml);
                return rpx_cli_fail("system", RPX_EXIT_FAILURE, "--probe: %s", perr.message);
            }
            rpx_system_card_set_cpu_probe(card, p, perr.message);
            json_decref(p);
        }
        now_not_run_start(json_object_get(card, "warnings"));
        if (json) {
            char *s = rpx_json_dumps(card);
            if (!s) {
                rc = rpx_cli_fail("system", RPX_EXIT_FAILURE, "out of memory");
            } else {
                fputs(s, stdout);
                fputc('\n', stdout);
                free(s);
            }
        } else {
            print_card(stdout, card);
        }
        if (fflush(stdout) != 0) rc = rpx_cli_fail("system", RPX_EXIT_FAILURE, "writing to stdout failed");
    }
    json_decref(now);
    json_decref(card);
    if (nvml) rpx_nvml_close(nvml);
    return rc;
}
