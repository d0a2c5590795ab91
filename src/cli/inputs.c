/* inputs.c — owns `rpxprof inputs make` and `rpxprof inputs show`. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "rpxprof/error.h"
#include "rpxprof/npz.h"
#include "common/output.h"
#include "common/json.h"

static const char usage[] =
    "Usage: rpxprof inputs make OUT.npz NAME=SHAPE:DTYPE[=FILL]... [--seed N] [--compress]\n"
    "                           [--force]\n"
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
    "  -z, --compress    deflate the members (np.savez_compressed)\n"
    "  -f, --force       replace OUT.npz even when rpxprof did not write it\n"
    "  -j, --json        show: print JSON\n"
    "  -h, --help        show this help and exit\n"
    "\n"
    "The same command makes the same bytes. An existing OUT.npz is replaced only\n"
    "when 'inputs make' wrote it (its archive comment), or with --force.\n"
    "\n"
    "Example: rpxprof inputs make profile-inputs.npz rgb=480x640x3:uint8=128\n";

/* ---- random numbers: splitmix64 seeding a xoshiro256** generator ---- */
typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* IEEE binary16 from a float, rounding to nearest even. */
static uint16_t float_to_half(float f)
{
    uint32_t x;
    uint32_t sign, exp, mant;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    exp = (x >> 23) & 0xffu;
    mant = x & 0x7fffffu;
    if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    if (exp > 142) return (uint16_t)(sign | 0x7c00u); /* overflow → inf */
    if (exp < 113) {                                  /* subnormal or zero */
        uint32_t shift, half, rem;
        if (exp < 102) return (uint16_t)sign;
        mant |= 0x800000u;
        shift = 126 - exp;
        half = mant >> shift;
        rem = mant & ((1u << shift) - 1);
        if (rem > (1u << (shift - 1)) || (rem == (1u << (shift - 1)) && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    {
        uint32_t h = sign | ((exp - 112) << 10) | (mant >> 13);
        uint32_t rem = mant & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
        return (uint16_t)h;
    }
}

typedef struct spec {
    char name[256];
    rpx_dtype dtype;
    int ndim;
    int64_t shape[RPX_MAX_DIMS];
    size_t count;
    void *data;
} spec;

static int parse_shape(const char *s, size_t len, spec *sp)
{
    char buf[512], *tok, *save = NULL;
    size_t i, n = 0;
    if (len >= sizeof buf) return -1;
    /* the multiplication sign U+00D7 (UTF-8 C3 97) is read as 'x' */
    for (i = 0; i < len; i++) {
        if ((unsigned char)s[i] == 0xc3 && i + 1 < len && (unsigned char)s[i + 1] == 0x97) {
            buf[n++] = 'x';
            i++;
        } else {
            buf[n++] = s[i];
        }
    }
    buf[n] = '\0';
    len = n;
    sp->ndim = 0;
    sp->count = 1;
    if (strcmp(buf, "scalar") == 0 || buf[0] == '\0') return 0;
    if (buf[len - 1] == 'x' || buf[0] == 'x' || strstr(buf, "xx")) return -1;
    for (tok = strtok_r(buf, "x", &save); tok; tok = strtok_r(NULL, "x", &save)) {
        long d;
        if (sp->ndim >= RPX_MAX_DIMS || rpx_cli_parse_long(tok, &d) || d < 0) return -1;
        sp->shape[sp->ndim++] = d;
        if (d && sp->count > SIZE_MAX / (size_t)d) return -2;
        sp->count *= (size_t)d;
    }
    return sp->ndim == 0 ? -1 : 0;
}

/* Fill element i of the array with a number, range-checked for integers. */
static int fill_value(spec *sp, const char *fill, rng *r)
{
    size_t i, n = sp->count, es = rpx_dtype_size(sp->dtype);
    int is_random = strcmp(fill, "random") == 0;
    double v = 0;
    char *end;
    long double lo = 0, hi = 0;
    int is_float = sp->dtype == RPX_DTYPE_FLOAT16 || sp->dtype == RPX_DTYPE_FLOAT32 ||
                   sp->dtype == RPX_DTYPE_FLOAT64;
    unsigned char pattern[8];
    if (n && es > SIZE_MAX / n) return -2;
    sp->data = calloc(n ? n : 1, es);
    if (!sp->data) return -3;
    if (!is_random) {
        errno = 0;
        v = strtod(fill, &end);
        if (!*fill || *end || errno == ERANGE) return -1;
        switch (sp->dtype) {
        case RPX_DTYPE_BOOL: lo = 0; hi = 1; break;
        case RPX_DTYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
        case RPX_DTYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
        case RPX_DTYPE_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
        case RPX_DTYPE_UINT8: lo = 0; hi = UINT8_MAX; break;
        case RPX_DTYPE_UINT16: lo = 0; hi = UINT16_MAX; break;
        case RPX_DTYPE_UINT32: lo = 0; hi = UINT32_MAX; break;
        default: break;
        }
        if (sp->dtype == RPX_DTYPE_INT64 || sp->dtype == RPX_DTYPE_UINT64) {
            /* beyond 2^53 a double is not exact: parse the text as an integer */
            errno = 0;
            if (sp->dtype == RPX_DTYPE_INT64) (void)strtoll(fill, &end, 10);
            else if (fill[0] != '-') (void)strtoull(fill, &end, 10);
            else end = (char *)fill;
            if (*end || errno == ERANGE) return -4;
        } else if (!is_float && (v != floor(v) || (long double)v < lo || (long double)v > hi)) {
            return -4;
        }
        /* integers beyond 2^53 are written from the text itself */
        switch (sp->dtype) {
        case RPX_DTYPE_BOOL: pattern[0] = v != 0; break;
        case RPX_DTYPE_INT8: { int8_t x = (int8_t)v; memcpy(pattern, &x, 1); } break;
        case RPX_DTYPE_UINT8: { uint8_t x = (uint8_t)v; memcpy(pattern, &x, 1); } break;
        case RPX_DTYPE_INT16: { int16_t x = (int16_t)v; memcpy(pattern, &x, 2); } break;
        case RPX_DTYPE_UINT16: { uint16_t x = (uint16_t)v; memcpy(pattern, &x, 2); } break;
        case RPX_DTYPE_INT32: { int32_t x = (int32_t)v; memcpy(pattern, &x, 4); } break;
        case RPX_DTYPE_UINT32: { uint32_t x = (uint32_t)v; memcpy(pattern, &x, 4); } break;
        case RPX_DTYPE_INT64: { int64_t x = strtoll(fill, NULL, 10); memcpy(pattern, &x, 8); } break;
        case RPX_DTYPE_UINT64: { uint64_t x = strtoull(fill, NULL, 10); memcpy(pattern, &x, 8); } break;
        case RPX_DTYPE_FLOAT16: { uint16_t x = float_to_half((float)v); memcpy(pattern, &x, 2); } break;
        case RPX_DTYPE_FLOAT32: { float x = (float)v; memcpy(pattern, &x, 4); } break;
        case RPX_DTYPE_FLOAT64: memcpy(pattern, &v, 8); break;
        }
        for (i = 0; i < n; i++) memcpy((char *)sp->data + i * es, pattern, es);
        return 0;
    }
    for (i = 0; i < n; i++) {
        uint64_t u = rng_next(r);
        double unit = (double)(u >> 11) * 0x1.0p-53; /* [0, 1) */
        char *dst = (char *)sp->data + i * es;
        switch (sp->dtype) {
        case RPX_DTYPE_BOOL: dst[0] = (char)(u >> 63); break;
        case RPX_DTYPE_FLOAT16: { uint16_t x = float_to_half((float)unit);
            if (x == 0x3c00u) x = 0x3bffu; /* rounding must not reach 1.0 */
            memcpy(dst, &x, 2); } break;
        case RPX_DTYPE_FLOAT32: { float x = (float)((u >> 40) * 0x1.0p-24); memcpy(dst, &x, 4); } break;
        case RPX_DTYPE_FLOAT64: memcpy(dst, &unit, 8); break;
        default: memcpy(dst, &u, es); break; /* low bytes: uniform over the dtype's range */
        }
    }
    return 0;
}

static int parse_spec(const char *arg, spec *sp, rng *r)
{
    const char *eq = strchr(arg, '='), *colon, *fill;
    char dtype[32];
    int rc;
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof sp->name)
        return rpx_cli_fail("inputs make", -1,
                            "'%s': expected NAME=SHAPE:DTYPE[=FILL], e.g. rgb=480x640x3:uint8=128",
                            arg);
    snprintf(sp->name, sizeof sp->name, "%.*s", (int)(eq - arg), arg);
    colon = strchr(eq + 1, ':');
    if (!colon)
        return rpx_cli_fail("inputs make", -1,
                            "'%s': missing ':DTYPE' after the shape, e.g. %s=480x640x3:uint8", arg,
                            sp->name);
    rc = parse_shape(eq + 1, (size_t)(colon - eq - 1), sp);
    if (rc)
        return rpx_cli_fail("inputs make", -1,
                            rc == -2 ? "'%s': the shape's element count overflows"
                                     : "'%s': bad shape; give dimensions joined by 'x' "
                                       "(480x640x3) or 'scalar'",
                            arg);
    fill = strchr(colon + 1, '=');
    snprintf(dtype, sizeof dtype, "%.*s",
             (int)(fill ? (size_t)(fill - colon - 1) : strlen(colon + 1)), colon + 1);
    if (rpx_dtype_from_name(dtype, &sp->dtype) != 0)
        return rpx_cli_fail("inputs make", -1,
                            "'%s': unknown dtype '%s'; use bool, int8..int64, uint8..uint64, "
                            "float16, float32 or float64",
                            arg, dtype);
    rc = fill_value(sp, fill ? fill + 1 : "0", r);
    if (rc == -1)
        return rpx_cli_fail("inputs make", -1, "'%s': fill '%s' is not a number or 'random'",
                            arg, fill + 1);
    if (rc == -4)
        return rpx_cli_fail("inputs make", -1, "'%s': fill '%s' does not fit %s", arg, fill + 1,
                            dtype);
    if (rc)
        return rpx_cli_fail("inputs make", -1, "'%s': cannot allocate %zu elements of %s", arg,
                            sp->count, dtype);
    return 0;
}

static int cmd_make(int argc, char **argv)
{
    static const struct option longs[] = {{"seed", required_argument, 0, 's'},
                                          {"compress", no_argument, 0, 'z'},
                                          {"force", no_argument, 0, 'f'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    long seed = 0;
    int compress = 0, force = 0, c, i, j, nspec, exit_code = RPX_EXIT_FAILURE;
    spec *specs = NULL;
    rng r;
    uint64_t sm;
    rpx_npz_writer *w = NULL;
    rpx_output *o = NULL;
    rpx_error err = {0};
    const char *out, *tmp;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":s:zfh", longs, NULL)) != -1) {
        switch (c) {
        case 's':
            if (rpx_cli_parse_long(optarg, &seed))
                return rpx_cli_fail("inputs make", RPX_EXIT_USAGE, "--seed '%s': not a number",
                                    optarg);
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
    specs = calloc((size_t)nspec, sizeof *specs);
    if (!specs) return rpx_cli_fail("inputs make", RPX_EXIT_FAILURE, "out of memory");
    sm = (uint64_t)seed;
    for (i = 0; i < 4; i++) r.s[i] = splitmix64(&sm);
    for (i = 0; i < nspec; i++) {
        if (parse_spec(argv[optind + 1 + i], &specs[i], &r) != 0) {
            exit_code = RPX_EXIT_USAGE;
            goto out;
        }
        for (j = 0; j < i; j++)
            if (strcmp(specs[j].name, specs[i].name) == 0) {
                exit_code = rpx_cli_fail("inputs make", RPX_EXIT_USAGE,
                                         "'%s': array '%s' is given twice; give every array a "
                                         "unique name",
                                         argv[optind + 1 + i], specs[i].name);
                goto out;
            }
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
    if (rpx_npz_writer_open(tmp, compress, &w, &err) != 0) goto fail_tmp;
    for (i = 0; i < nspec; i++)
        if (rpx_npz_writer_add(w, specs[i].name, specs[i].dtype, specs[i].ndim, specs[i].shape,
                               specs[i].data, &err) != 0)
            goto fail_tmp;
    c = rpx_npz_writer_close(w, &err);
    w = NULL;
    if (c != 0) goto fail_tmp;
    c = rpx_output_is_stdout(o);
    c = rpx_output_commit_written(o, &err) != 0 ? -1 : c;
    o = NULL;
    if (c < 0) goto fail;
    if (!c) printf("%s\n", out);
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
    if (w) rpx_npz_writer_discard(w);
    rpx_output_discard(o);
    for (i = 0; i < nspec; i++) free(specs[i].data);
    free(specs);
    return exit_code;
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
