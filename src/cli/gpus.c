/* gpus.c — owns `rpxprof gpus`: the GPU spec table as a text table or JSON,
 * user spec files, and which entry a detected device name maps to. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cli/cli.h"
#include "common/json_keys.h"
#include "rpxprof/error.h"
#include "common/json.h"
#include "rpxprof/roofline.h"

#define GPUS_SCHEMA "rpxprof.gpus/1"

static const char usage[] =
    "Usage: rpxprof gpus [KEY]... [--json] [--sources] [--gpu-spec FILE]... [--match NAME]\n"
    "List the GPU spec table: dense peaks (no 2:4 sparsity) per precision in TFLOP/s\n"
    "(TOP/s for int8), memory, bandwidth, and the datasheet each entry comes from.\n"
    "\n"
    "  KEY               show only these entries\n"
    "  -j, --json        print JSON (schemas/gpus.json): tensor and vector peaks apart\n"
    "  -s, --sources     print each entry's source and notes under it\n"
    "      --gpu-spec FILE  add or override entries from a JSON file (repeatable;\n"
    "                    $RPX_GPU_SPECS names more, ':'-separated); see docs/roofline.md\n"
    "      --match NAME  the entry a detected device name maps to\n"
    "                    (\"NVIDIA H100 80GB HBM3\" -> h100-sxm)\n"
    "  -h, --help        show this help and exit\n"
    "\n"
    "Table columns are the peaks dense linear algebra runs at: tensor cores where the\n"
    "GPU has them, fp32 on the non-tensor units (tf32 is its own column); n/a: the GPU\n"
    "lacks the precision or no datasheet publishes it (see --sources).\n";

static void cell(char *out, size_t size, double v)
{
    if (isnan(v))
        snprintf(out, size, "n/a");
    else
        snprintf(out, size, "%g", v);
}

static void print_table(const rpx_gpu_spec *const *list, size_t n, int sources)
{
    static const rpx_precision cols[] = {RPX_PREC_FP64, RPX_PREC_FP32, RPX_PREC_TF32,
                                         RPX_PREC_FP16, RPX_PREC_BF16, RPX_PREC_FP8,
                                         RPX_PREC_INT8};
    size_t i, c;
    printf("%-26s %-40s %7s %8s %7s %7s %7s %7s %7s %7s %7s\n", "KEY", "NAME", "MEM_GB",
           "BW_GB/s", "FP64", "FP32", "TF32", "FP16", "BF16", "FP8", "INT8");
    for (i = 0; i < n; i++) {
        const rpx_gpu_spec *g = list[i];
        char mem[32], bw[32], v[7][32];
        cell(mem, sizeof mem, g->memory_gb);
        cell(bw, sizeof bw, g->memory_bandwidth_gbps);
        for (c = 0; c < 7; c++) {
            rpx_peak pk;
            rpx_gpu_peak(g, cols[c], 1, cols[c] == RPX_PREC_TF32, &pk);
            if (cols[c] == RPX_PREC_TF32 && pk.precision != RPX_PREC_TF32) pk.tflops = NAN;
            cell(v[c], sizeof v[c], pk.tflops);
        }
        printf("%-26s %-40.40s %7s %8s %7s %7s %7s %7s %7s %7s %7s\n", g->key, g->name, mem, bw,
               v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
        if (sources) {
            printf("    source: %s\n", g->source ? g->source : "n/a");
            if (g->notes) printf("    notes:  %s\n", g->notes);
        }
    }
}

int rpx_cli_gpus(int argc, char **argv)
{
    static const struct option longs[] = {{"json", no_argument, 0, 'j'},
                                          {"sources", no_argument, 0, 's'},
                                          {"gpu-spec", required_argument, 0, 'G'},
                                          {"match", required_argument, 0, 'M'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char **specs = NULL;
    const rpx_gpu_spec **list = NULL;
    size_t n_specs = 0, n = 0, i;
    const char *match = NULL;
    int json = 0, sources = 0, c, rc = RPX_EXIT_OK;
    rpx_gpu_table *t = NULL;
    rpx_error err = {0};
    specs = calloc((size_t)argc + 1, sizeof *specs);
    if (!specs) return rpx_cli_fail("gpus", RPX_EXIT_FAILURE, "out of memory");
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":jsh", longs, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 's': sources = 1; break;
        case 'G': specs[n_specs++] = optarg; break;
        case 'M': match = optarg; break;
        case 'h':
            fputs(usage, stdout);
            free(specs);
            return RPX_EXIT_OK;
        case ':':
            free(specs);
            return rpx_cli_fail("gpus", RPX_EXIT_USAGE, "option '%s' needs a value",
                                argv[optind - 1]);
        default:
            free(specs);
            return rpx_cli_fail("gpus", RPX_EXIT_USAGE,
                                "unknown option '%s'; see 'rpxprof gpus --help'",
                                argv[optind - 1]);
        }
    }
    if (rpx_gpu_table_create(&t) != 0) {
        free(specs);
        return rpx_cli_fail("gpus", RPX_EXIT_FAILURE, "out of memory");
    }
    if (rpx_gpu_table_load_all(t, specs, n_specs, &err) != 0) {
        rc = rpx_cli_fail("gpus", RPX_EXIT_FAILURE, "%s", err.message);
        goto out;
    }
    list = calloc(rpx_gpu_table_count(t) + (size_t)argc + 1, sizeof *list);
    if (!list) {
        rc = rpx_cli_fail("gpus", RPX_EXIT_FAILURE, "out of memory");
        goto out;
    }
    if (match) {
        const rpx_gpu_spec *g = rpx_gpu_table_match_name(t, match);
        if (!g) {
            rc = rpx_cli_fail("gpus", RPX_EXIT_FAILURE,
                              "no table entry matches the device name '%s'; add one with "
                              "--gpu-spec FILE (a \"match\" field lists device names)",
                              match);
            goto out;
        }
        list[n++] = g;
    } else if (optind < argc) {
        for (i = (size_t)optind; i < (size_t)argc; i++) {
            const rpx_gpu_spec *g = rpx_gpu_table_find(t, argv[i]);
            if (!g) {
                char hint[128];
                rc = rpx_cli_fail("gpus", RPX_EXIT_USAGE,
                                  "no GPU with key '%s';%s 'rpxprof gpus' lists the keys",
                                  argv[i], rpx_gpu_table_suggest(t, argv[i], 0, hint, sizeof hint));
                goto out;
            }
            list[n++] = g;
        }
    } else {
        for (i = 0; i < rpx_gpu_table_count(t); i++) list[n++] = rpx_gpu_table_at(t, i);
    }
    if (json) {
        json_t *root = json_object(), *arr = json_array();
        int ok = root && arr;
        for (i = 0; ok && i < n; i++) {
            json_t *e = rpx_gpu_spec_json(list[i]);
            if (!e || json_array_append_new(arr, e) != 0) ok = 0;
        }
        if (ok) ok = json_object_set_new(root, "schema", json_string(GPUS_SCHEMA)) == 0;
        if (ok) {
            ok = json_object_set_new(root, "gpus", arr) == 0;
            arr = NULL;
        }
        if (!ok) {
            json_decref(arr);
            json_decref(root);
            rc = rpx_cli_fail("gpus", RPX_EXIT_FAILURE, "out of memory");
            goto out;
        }
        if (rpx_json_write_file("-", root, &err) != 0)
            rc = rpx_cli_fail("gpus", RPX_EXIT_FAILURE, "%s", err.message);
        json_decref(root);
    } else {
        print_table(list, n, sources);
    }
out:
    free(list);
    free(specs);
    rpx_gpu_table_free(t);
    return rc;
}
