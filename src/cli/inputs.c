/* inputs.c — owns `rpxprof inputs make` and `rpxprof inputs show`. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli/cli.h"
#include "rpxprof/error.h"
#include "rpxprof/npz.h"
#include "common/output.h"
#include "common/json.h"

static const char usage[] =
    "Usage: rpxprof inputs make OUT.npz NAME=SHAPE:DTYPE[=FILL]... [--seed N] [--compress]\n"
    "                           [--force]\n"
    "  or:  rpxprof inputs make DIR --samples N NAME=SHAPE:DTYPE=random... [--seed N]\n"
    "  or:  rpxprof inputs show FILE.npz [--json]\n"
    "Make an NPZ input file without numpy, or show what one holds.\n"
    "\n"
    "  SHAPE   dimensions joined by 'x' (480x640x3; the sign '\xc3\x97' works too), or\n"
    "          'scalar' for a 0-d array\n"
    "  DTYPE   bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,\n"
    "          float16, float32, float64\n"
    "  FILL    a number (default 0), or 'random': integers uniform over the\n"
    "          dtype's range, bool 0/1, floats uniform in [0, 1)\n"
    "\n"
    "  -s, --seed N      seed for 'random' fills (default 0)\n"
    "  -n, --samples N   N distinct samples: DIR/sample-0000.npz ... (the folder is\n"
    "                    made when missing), each with its own 'random' fill from\n"
    "                    the seed; give DIR to --inputs (docs/audits.md)\n"
    "  -z, --compress    deflate the members (np.savez_compressed)\n"
    "  -f, --force       replace OUT.npz even when rpxprof did not write it\n"
    "  -j, --json        show: print JSON\n"
    "  -h, --help        show this help and exit\n"
    "\n"
    "The same command makes the same bytes. An existing OUT.npz is replaced only\n"
    "when 'inputs make' wrote it (its archive comment), or with --force.\n"
    "\n"
    "Example: rpxprof inputs make profile-inputs.npz rgb=480x640x3:uint8=128\n";

/* One NPZ file of the specs, with its 'random' fills from `seed`, through
 * the output guard. 0, or the exit code after saying why. */
static int make_one(const char *out, char **specs, int nspec, uint64_t seed, int compress,
                    int force, int quiet)
{
    rpx_npz_maker *maker = NULL;
    rpx_output *o = NULL;
    rpx_error err = {0};
    const char *tmp;
    int i, c, exit_code = RPX_EXIT_FAILURE;
    if (rpx_npz_maker_create(seed, &maker) != 0)
        return rpx_cli_fail("inputs make", RPX_EXIT_FAILURE, "out of memory");
    for (i = 0; i < nspec; i++)
        if (rpx_npz_maker_add(maker, specs[i], &err) != 0) {
            exit_code = rpx_cli_fail("inputs make", RPX_EXIT_USAGE, "%s", err.message);
            goto out;
        }
    /* The output is checked before anything is written: a folder, a special
     * file or a file that `inputs make` did not write (without --force) is
     * refused; libzip then writes the guard's temporary file. */
    {
        rpx_output_options oo = {RPX_OUTPUT_NPZ, NULL, force, NULL, 0, "OUT.npz"};
        if (rpx_output_open(out, &oo, &o, &err) != 0) goto fail;
    }
    tmp = rpx_output_temp_path(o);
    if (!tmp) {
        rpx_error_set(&err, RPX_EIO, "%s: cannot create a temporary file", out);
        goto fail;
    }
    if (rpx_npz_maker_write(maker, tmp, compress, &err) != 0) goto fail_tmp;
    c = rpx_output_is_stdout(o);
    c = rpx_output_commit_written(o, &err) != 0 ? -1 : c;
    o = NULL;
    if (c < 0) goto fail;
    if (!c && !quiet) printf("%s\n", out);
    exit_code = RPX_EXIT_OK;
    goto out;
fail_tmp:
    /* the writer names the temporary file; the user named `out` */
    {
        size_t tl = strlen(tmp);
        const char *at = strstr(err.message, tmp);
        if (at)
            rpx_cli_fail("inputs make", 0, "%.*s%s%s", (int)(at - err.message), err.message, out,
                         at + tl);
        else
            rpx_cli_fail("inputs make", 0, "%s", err.message);
    }
    goto out;
fail:
    rpx_cli_fail("inputs make", 0, "%s", err.message);
out:
    rpx_output_discard(o);
    rpx_npz_maker_free(maker);
    return exit_code;
}

/* --samples N: DIR/sample-0000.npz ... each from its own seed (seed, then
 * seed + k * 2^64/golden ratio: distinct streams), so that `--inputs DIR`
 * cycles through N distinct samples (docs/audits.md). */
static int make_samples(const char *dir, long n, char **specs, int nspec, long seed, int compress,
                        int force)
{
    struct stat st;
    int i, random = 0, made_dir = 0;
    long k;
    unsigned char *fresh; /* the samples this command made (not there before) */
    for (i = 0; i < nspec; i++)
        if (strstr(specs[i], "=random")) random = 1;
    if (!random)
        return rpx_cli_fail("inputs make", RPX_EXIT_USAGE,
                            "--samples %ld: no array has a 'random' fill, so the %ld samples would "
                            "hold the same bytes; give at least one NAME=SHAPE:DTYPE=random",
                            n, n);
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return rpx_cli_fail("inputs make", RPX_EXIT_FAILURE,
                                "%s: is not a folder; --samples writes DIR/sample-0000.npz ...: "
                                "give a folder (made when missing)", dir);
    } else if (mkdir(dir, 0777) != 0) {
        return rpx_cli_fail("inputs make", RPX_EXIT_FAILURE, "%s: cannot make the folder: %s", dir,
                            strerror(errno));
    } else {
        made_dir = 1;
    }
    if (!(fresh = calloc((size_t)n, 1))) return rpx_cli_fail("inputs make", 1, "out of memory");
    for (k = 0; k < n; k++) {
        char path[4096];
        int rc;
        if (snprintf(path, sizeof path, "%s/sample-%04ld.npz", dir, k) >= (int)sizeof path) {
            free(fresh);
            return rpx_cli_fail("inputs make", RPX_EXIT_USAGE, "%s: path too long", dir);
        }
        fresh[k] = lstat(path, &st) != 0;
        rc = make_one(path, specs, nspec,
                      (uint64_t)seed + (uint64_t)k * UINT64_C(0x9E3779B97F4A7C15), compress, force, 1);
        if (rc != RPX_EXIT_OK) { /* a full disk: no half set of samples left behind */
            long j, removed = 0;
            for (j = 0; j < k; j++)
                if (fresh[j] && snprintf(path, sizeof path, "%s/sample-%04ld.npz", dir, j) > 0 &&
                    unlink(path) == 0)
                    removed++;
            if (made_dir) (void)rmdir(dir);
            if (removed)
                fprintf(stderr, "rpxprof inputs make: removed the %ld sample%s this command had "
                        "written to %s\n", removed, removed == 1 ? "" : "s", dir);
            free(fresh);
            return rc;
        }
    }
    free(fresh);
    printf("%s (%ld samples)\n", dir, n);
    return RPX_EXIT_OK;
}

static int cmd_make(int argc, char **argv)
{
    static const struct option longs[] = {{"seed", required_argument, 0, 's'},
                                          {"samples", required_argument, 0, 'n'},
                                          {"compress", no_argument, 0, 'z'},
                                          {"force", no_argument, 0, 'f'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    long seed = 0, samples = 0;
    int compress = 0, force = 0, c, nspec;
    const char *out;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":s:n:zfh", longs, NULL)) != -1) {
        switch (c) {
        case 's':
            if (rpx_cli_parse_long(optarg, &seed))
                return rpx_cli_fail("inputs make", RPX_EXIT_USAGE, "--seed '%s': not a number",
                                    optarg);
            break;
        case 'n':
            if (rpx_cli_parse_long(optarg, &samples) || samples < 2 || samples > 100000)
                return rpx_cli_fail("inputs make", RPX_EXIT_USAGE,
                                    "--samples '%s': give a whole number from 2 to 100000", optarg);
            break;
        case 'z': compress = 1; break;
        case 'f': force = 1; break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        case ':':
            return rpx_cli_fail("inputs make", RPX_EXIT_USAGE, "%s needs a value",
                                argv[optind - 1]);
        default:
            return rpx_cli_fail("inputs make", RPX_EXIT_USAGE,
                                "unknown option '%s' (see 'rpxprof inputs --help')",
                                argv[optind - 1]);
        }
    }
    if (argc - optind < 2)
        return rpx_cli_fail("inputs make", RPX_EXIT_USAGE,
                            "expected OUT.npz and at least one NAME=SHAPE:DTYPE[=FILL] (see "
                            "'rpxprof inputs --help')");
    out = argv[optind];
    nspec = argc - optind - 1;
    if (samples)
        return make_samples(out, samples, argv + optind + 1, nspec, seed, compress, force);
    return make_one(out, argv + optind + 1, nspec, (uint64_t)seed, compress, force, 0);
}

static void shape_text(const rpx_npy_header *h, char *buf, size_t size)
{
    size_t len = 0;
    int d;
    if (h->ndim == 0) {
        snprintf(buf, size, "scalar");
        return;
    }
    buf[0] = '\0';
    for (d = 0; d < h->ndim && len < size; d++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? "x" : "",
                                (long long)h->shape[d]);
}

static int cmd_show(int argc, char **argv)
{
    static const struct option longs[] = {{"json", no_argument, 0, 'j'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int as_json = 0, c, exit_code = RPX_EXIT_FAILURE;
    rpx_npz *npz = NULL;
    rpx_error err = {0};
    char sha[65];
    const char *file;
    size_t i, n;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":jh", longs, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = 1; break;
        case 'h': fputs(usage, stdout); return RPX_EXIT_OK;
        default:
            return rpx_cli_fail("inputs show", RPX_EXIT_USAGE,
                                "unknown option '%s' (see 'rpxprof inputs --help')",
                                argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return rpx_cli_fail("inputs show", RPX_EXIT_USAGE, "expected one FILE.npz");
    file = argv[optind];
    if (rpx_npz_load(file, &npz, &err) != 0 || rpx_file_sha256(file, sha, &err) != 0) {
        rpx_cli_fail("inputs show", 0, "%s", err.message);
        goto out;
    }
    n = rpx_npz_inputs(npz)->count;
    if (as_json) {
        json_t *o = json_object(), *arrays = json_array();
        char *s;
        json_object_set_new(o, "file", json_string(file));
        json_object_set_new(o, "sha256", json_string(sha));
        for (i = 0; i < n; i++) {
            const rpx_npz_array_info *ai = rpx_npz_array_info_at(npz, i);
            json_t *a = json_object(), *shape = json_array();
            int d;
            for (d = 0; d < ai->header.ndim; d++)
                json_array_append_new(shape, json_integer((json_int_t)ai->header.shape[d]));
            json_object_set_new(a, "name", json_string(ai->name));
            json_object_set_new(a, "shape", shape);
            json_object_set_new(a, "dtype", json_string(rpx_dtype_name(ai->header.dtype)));
            json_object_set_new(a, "nbytes", json_integer((json_int_t)ai->header.nbytes));
            json_object_set_new(a, "order", json_string(ai->header.fortran_order ? "F" : "C"));
            json_object_set_new(a, "descr", json_string(ai->header.descr));
            json_object_set_new(a, "compressed", json_boolean(ai->compressed));
            json_array_append_new(arrays, a);
        }
        json_object_set_new(o, "arrays", arrays);
        s = rpx_json_dumps(o);
        json_decref(o);
        if (!s) {
            rpx_cli_fail("inputs show", 0, "out of memory");
            goto out;
        }
        printf("%s\n", s);
        free(s);
    } else {
        printf("file:   %s\nsha256: %s\narrays: %zu\n\n", file, sha, n);
        printf("%-16s %-20s %-8s %14s  %-5s %-6s %s\n", "name", "shape", "dtype", "nbytes",
               "order", "endian", "stored");
        for (i = 0; i < n; i++) {
            const rpx_npz_array_info *ai = rpx_npz_array_info_at(npz, i);
            char shape[256];
            shape_text(&ai->header, shape, sizeof shape);
            printf("%-16s %-20s %-8s %14zu  %-5s %-6s %s\n", ai->name, shape,
                   rpx_dtype_name(ai->header.dtype), ai->header.nbytes,
                   ai->header.fortran_order ? "F" : "C", ai->header.big_endian ? "big" : "little",
                   ai->compressed ? "deflated" : "stored");
        }
    }
    exit_code = RPX_EXIT_OK;
out:
    rpx_npz_free(npz);
    return exit_code;
}

int rpx_cli_inputs(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL;
    if (!sub) {
        fputs(usage, stderr);
        return RPX_EXIT_USAGE;
    }
    if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
        fputs(usage, stdout);
        return RPX_EXIT_OK;
    }
    if (strcmp(sub, "make") == 0) return cmd_make(argc - 1, argv + 1);
    if (strcmp(sub, "show") == 0) return cmd_show(argc - 1, argv + 1);
    return rpx_cli_fail("inputs", RPX_EXIT_USAGE,
                        "unknown subcommand '%s'; use 'inputs make' or 'inputs show'", sub);
}
