/* test_npy.c — the NPY header parser, dtype names, the writer's header and
 * the byte-swap / Fortran→C conversions. Headers written by numpy come from
 * the fixtures; hand-written dicts cover the syntax numpy may produce. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_files.h"

#include "io/npy_internal.h"
#include "rpxprof/error.h"
#include "rpxprof/npz.h"

static const char *fixtures;

static unsigned char *slurp(const char *rel, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", fixtures, rel);
    return rpx_test_slurp(path, len);
}

/* An NPY 1.0 header around `dict`, padded to 64 like numpy; heap, exact size. */
static unsigned char *npy1(const char *dict, size_t *len)
{
    size_t dl = strlen(dict), hlen = dl + 1, pad = (64 - (10 + hlen) % 64) % 64;
    unsigned char *b = malloc(10 + hlen + pad);
    assert_non_null(b);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (unsigned char)((hlen + pad) & 0xff);
    b[9] = (unsigned char)((hlen + pad) >> 8);
    memcpy(b + 10, dict, dl);
    memset(b + 10 + dl, ' ', pad);
    b[10 + dl + pad] = '\n';
    *len = 10 + hlen + pad;
    return b;
}

static int parse_dict(const char *dict, rpx_npy_header *h, rpx_error *err)
{
    size_t len;
    unsigned char *b = npy1(dict, &len);
    int rc = rpx_npy_parse_header(b, len, "f.npz: array 'a'", h, err);
    free(b);
    return rc;
}

static void expect_refusal(const char *dict, int code, const char *message)
{
    rpx_npy_header h;
    rpx_error err = {0};
    char want[1200];
    int rc = parse_dict(dict, &h, &err);
    if (rc != code) fail_msg("%s: rc %d, want %d (%s)", dict, rc, code, err.message);
    snprintf(want, sizeof want, "f.npz: array 'a': %s", message);
    assert_string_equal(err.message, want);
}

/* ---- dtype names -------------------------------------------------------- */

static void test_dtype_names(void **state)
{
    static const struct { rpx_dtype dt; const char *name; size_t size; } all[] = {
        {RPX_DTYPE_BOOL, "bool", 1},       {RPX_DTYPE_INT8, "int8", 1},
        {RPX_DTYPE_INT16, "int16", 2},     {RPX_DTYPE_INT32, "int32", 4},
        {RPX_DTYPE_INT64, "int64", 8},     {RPX_DTYPE_UINT8, "uint8", 1},
        {RPX_DTYPE_UINT16, "uint16", 2},   {RPX_DTYPE_UINT32, "uint32", 4},
        {RPX_DTYPE_UINT64, "uint64", 8},   {RPX_DTYPE_FLOAT16, "float16", 2},
        {RPX_DTYPE_FLOAT32, "float32", 4}, {RPX_DTYPE_FLOAT64, "float64", 8}};
    size_t i;
    rpx_dtype dt;
    (void)state;
    for (i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_string_equal(rpx_dtype_name(all[i].dt), all[i].name);
        assert_int_equal(rpx_dtype_from_name(all[i].name, &dt), 0);
        assert_int_equal(dt, all[i].dt);
        assert_int_equal(rpx_dtype_size(dt), all[i].size);
    }
    assert_string_equal(rpx_dtype_name((rpx_dtype)0), "unknown");
    assert_string_equal(rpx_dtype_name((rpx_dtype)99), "unknown");
    assert_int_equal(rpx_dtype_from_name("float", &dt), RPX_EINVAL);
    assert_int_equal(rpx_dtype_from_name("bool_", &dt), RPX_EINVAL);
    assert_int_equal(rpx_dtype_from_name("", &dt), RPX_EINVAL);
    assert_int_equal(rpx_dtype_from_name(NULL, &dt), RPX_EINVAL);
    assert_int_equal(rpx_dtype_from_name("uint8", NULL), RPX_EINVAL);
}

/* ---- headers numpy wrote ------------------------------------------------ */

static void test_numpy_headers_all_versions(void **state)
{
    static const struct {
        const char *file;
        int major;
        const char *descr;
        int fortran, big, ndim;
        int64_t shape[2];
        rpx_dtype dt;
    } cases[] = {
        {"good/a_v1.npy", 1, "<f8", 0, 0, 1, {7, 0}, RPX_DTYPE_FLOAT64},
        {"good/b_v2.npy", 2, "<i4", 0, 0, 2, {3, 4}, RPX_DTYPE_INT32},
        {"good/c_v3.npy", 3, ">u2", 1, 1, 2, {2, 3}, RPX_DTYPE_UINT16},
        {"good/scalar.npy", 1, "<i8", 0, 0, 0, {0, 0}, RPX_DTYPE_INT64},
        {"good/nothing.npy", 1, "|u1", 0, 0, 1, {0, 0}, RPX_DTYPE_UINT8},
        {"good/single.npy", 1, ">f4", 1, 1, 2, {4, 6}, RPX_DTYPE_FLOAT32},
    };
    size_t i, len, k;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *b = slurp(cases[i].file, &len);
        rpx_npy_header h;
        rpx_error err = {0};
        size_t count = 1;
        if (rpx_npy_parse_header(b, len, cases[i].file, &h, &err))
            fail_msg("%s", err.message);
        assert_int_equal(h.major, cases[i].major);
        assert_int_equal(h.minor, 0);
        assert_string_equal(h.descr, cases[i].descr);
        assert_int_equal(h.dtype, cases[i].dt);
        assert_int_equal(h.fortran_order, cases[i].fortran);
        assert_int_equal(h.big_endian, cases[i].big);
        assert_int_equal(h.ndim, cases[i].ndim);
        for (k = 0; k < (size_t)h.ndim; k++) {
            assert_int_equal(h.shape[k], cases[i].shape[k]);
            count *= (size_t)cases[i].shape[k];
        }
        assert_int_equal(h.count, count);
        assert_int_equal(h.nbytes, count * rpx_dtype_size(h.dtype));
        assert_int_equal(h.data_offset % 64, 0);
        assert_int_equal(h.data_offset + h.nbytes, len); /* np.save: nothing else */
        /* every shorter buffer is refused cleanly (ASan checks the reads) */
        for (k = 0; k < h.data_offset; k++) {
            unsigned char *cut = malloc(k ? k : 1);
            rpx_npy_header h2;
            memcpy(cut, b, k);
            assert_int_not_equal(rpx_npy_parse_header(cut, k, NULL, &h2, &err), 0);
            free(cut);
        }
        free(b);
    }
}

/* The writer's header is byte-for-byte numpy's (np.save, numpy 1.24). */
static void test_make_header_equals_numpy(void **state)
{
    static const struct {
        const char *file;
        rpx_dtype dt;
        int ndim;
        int64_t shape[2];
    } cases[] = {
        {"good/a_v1.npy", RPX_DTYPE_FLOAT64, 1, {7, 0}},
        {"good/scalar.npy", RPX_DTYPE_INT64, 0, {0, 0}},
        {"good/nothing.npy", RPX_DTYPE_UINT8, 1, {0, 0}},
    };
    size_t i, len, hlen;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *b = slurp(cases[i].file, &len);
        unsigned char *h = rpx__npy_make_header(cases[i].dt, cases[i].ndim, cases[i].shape, &hlen);
        assert_non_null(h);
        assert_int_equal(hlen, 128);
        assert_true(len >= hlen);
        if (memcmp(b, h, hlen) != 0) fail_msg("%s: header differs:\n%.*s", cases[i].file,
                                              (int)hlen - 10, (const char *)h + 10);
        free(h);
        free(b);
    }
}

static void test_make_header_shapes(void **state)
{
#define D23 "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
#define D8 "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 2, 3, 4, 5, 6, 7, 8), }"
    static const int64_t s2[] = {2, 3};
    static const int64_t s8[] = {1, 2, 3, 4, 5, 6, 7, 8};
    int64_t s64[RPX_MAX_DIMS];
    size_t hlen, i;
    unsigned char *h;
    rpx_npy_header p;
    rpx_error err = {0};
    (void)state;

    h = rpx__npy_make_header(RPX_DTYPE_FLOAT32, 2, s2, &hlen);
    assert_non_null(h);
    assert_memory_equal(h + 10, D23, strlen(D23));
    assert_int_equal(h[10 + strlen(D23)], ' ');
    assert_int_equal(h[hlen - 1], '\n');
    free(h);
    h = rpx__npy_make_header(RPX_DTYPE_BOOL, 8, s8, &hlen);
    assert_non_null(h);
    assert_memory_equal(h + 10, D8, strlen(D8));
    assert_int_equal(rpx_npy_parse_header(h, hlen, NULL, &p, &err), 0);
    assert_int_equal(p.ndim, 8);
    assert_int_equal(p.count, 40320);
    free(h);
    /* the largest header our writer can make still fits version 1.0 */
    for (i = 0; i < RPX_MAX_DIMS; i++) s64[i] = INT64_C(1000000000);
    h = rpx__npy_make_header(RPX_DTYPE_UINT8, RPX_MAX_DIMS, s64, &hlen);
    assert_non_null(h);
    assert_int_equal(h[6], 1);
    assert_int_equal(hlen % 64, 0);
    free(h);
    assert_null(rpx__npy_make_header((rpx_dtype)0, 1, s2, &hlen));
    assert_null(rpx__npy_make_header(RPX_DTYPE_UINT8, RPX_MAX_DIMS + 1, s64, &hlen));
}

/* ---- hand-written dicts: syntax numpy (or Python 2 numpy) may write ----- */

static void test_header_syntax_variants(void **state)
{
    rpx_npy_header h;
    rpx_error err = {0};
    (void)state;
    assert_int_equal(parse_dict("{\"shape\": (5,), \"fortran_order\": True, \"descr\": \"<u2\"}",
                                &h, &err), 0);
    assert_int_equal(h.ndim, 1);
    assert_int_equal(h.shape[0], 5);
    assert_int_equal(h.fortran_order, 1);
    assert_int_equal(h.dtype, RPX_DTYPE_UINT16);
    /* Python 2 long suffix, no trailing comma, a 1-tuple without comma */
    assert_int_equal(parse_dict("{'descr':'>i8','fortran_order':False,'shape':(3L, 4L)}", &h,
                                &err), 0);
    assert_int_equal(h.shape[1], 4);
    assert_int_equal(h.big_endian, 1);
    assert_int_equal(parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (7), }", &h,
                                &err), 0);
    assert_int_equal(h.ndim, 1);
    assert_int_equal(h.shape[0], 7);
    /* '|' and '=' mean native order; '?' is bool; 1-byte types never swap */
    assert_int_equal(parse_dict("{'descr': '=f8', 'fortran_order': False, 'shape': (), }", &h,
                                &err), 0);
    assert_int_equal(h.big_endian, 0);
    assert_int_equal(h.count, 1);
    assert_int_equal(h.nbytes, 8);
    assert_int_equal(parse_dict("{'descr': '|?', 'fortran_order': False, 'shape': (2,), }", &h,
                                &err), 0);
    assert_int_equal(h.dtype, RPX_DTYPE_BOOL);
    assert_int_equal(parse_dict("{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }", &h,
                                &err), 0);
    assert_int_equal(h.big_endian, 0);
    /* empty arrays: a zero dimension anywhere */
    assert_int_equal(parse_dict("{'descr': '<f2', 'fortran_order': True, 'shape': (3, 0, 9), }",
                                &h, &err), 0);
    assert_int_equal(h.count, 0);
    assert_int_equal(h.nbytes, 0);
    assert_int_equal(h.dtype, RPX_DTYPE_FLOAT16);
}

static void test_header_refusals(void **state)
{
    (void)state;
    expect_refusal("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", RPX_EUNSUPPORTED,
                   "dtype '|O' (object) is not supported; save numeric arrays only");
    expect_refusal("{'descr': [('x', '<f4'), ('y', [('z', '<i2')])], 'fortran_order': False, "
                   "'shape': (3,), }", RPX_EUNSUPPORTED,
                   "dtype [('x', '<f4'), ('y', [('z', '<i2')])] (structured) is not "
                   "supported; save each field as its own array");
    expect_refusal("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", RPX_EUNSUPPORTED,
                   "dtype '<c8' (complex) is not supported; save the real and imaginary parts "
                   "as two float arrays");
    expect_refusal("{'descr': '<U7', 'fortran_order': False, 'shape': (3,), }", RPX_EUNSUPPORTED,
                   "dtype '<U7' (unicode string) is not supported; save numeric arrays only");
    expect_refusal("{'descr': '|a4', 'fortran_order': False, 'shape': (3,), }", RPX_EUNSUPPORTED,
                   "dtype '|a4' (bytes string) is not supported; save numeric arrays only");
    expect_refusal("{'descr': '<M8[D]', 'fortran_order': False, 'shape': (3,), }",
                   RPX_EUNSUPPORTED,
                   "dtype '<M8[D]' (datetime) is not supported; convert it first, e.g. "
                   "arr.astype('int64')");
    expect_refusal("{'descr': '<i3', 'fortran_order': False, 'shape': (3,), }", RPX_EUNSUPPORTED,
                   "dtype '<i3' is not a numeric numpy dtype; save numeric arrays only");
    expect_refusal("{'descr': '<f', 'fortran_order': False, 'shape': (3,), }", RPX_EUNSUPPORTED,
                   "dtype '<f' is not a numeric numpy dtype; save numeric arrays only");
    expect_refusal("{'descr': '<f4', 'fortran_order': False}", RPX_EFORMAT,
                   "NPY header has no 'shape' key; the file is corrupt");
    expect_refusal("{'descr': '<f4', 'shape': (2,)}", RPX_EFORMAT,
                   "NPY header has no 'fortran_order' key; the file is corrupt");
    expect_refusal("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                   RPX_EFORMAT,
                   "malformed NPY header (duplicate key 'descr' at byte 25 of the dict); the "
                   "file is corrupt");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", RPX_EFORMAT,
                   "malformed NPY header ('shape' is not a tuple at byte 50 of the dict); the "
                   "file is corrupt");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", RPX_EFORMAT,
                   "malformed NPY header ('shape' holds a non-integer at byte 54 of the dict); "
                   "the file is corrupt");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", RPX_EFORMAT,
                   "malformed NPY header (unexpected text after the dict at byte 56 of the "
                   "dict); the file is corrupt");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) 'x': 1}",
                   RPX_EFORMAT,
                   "malformed NPY header (expected ',' or '}' at byte 55 of the dict); the "
                   "file is corrupt");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 0}",
                   RPX_EFORMAT,
                   "NPY header has an unexpected key 'extra' (only 'descr', 'fortran_order' "
                   "and 'shape' are allowed); the file is corrupt");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'unterminated}",
                   RPX_EFORMAT,
                   "malformed NPY header ('shape' holds a non-integer at byte 54 of the "
                   "dict); the file is corrupt");
    expect_refusal("{'descr': '<f8', 'fortran_order': False, "
                   "'shape': (9223372036854775808,), }", RPX_EFORMAT,
                   "shape has a dimension beyond 2^63 (the size overflows); the file is corrupt");
    expect_refusal("{'descr': '<f8', 'fortran_order': False, "
                   "'shape': (1152921504606846976,), }", RPX_EFORMAT,
                   "shape (1152921504606846976,) with dtype '<f8' overflows (more than 2^63 "
                   "bytes); the file is corrupt");
    /* a zero dimension does not hide an overflowing product */
    expect_refusal("{'descr': '|u1', 'fortran_order': False, "
                   "'shape': (0, 4294967296, 4294967296), }", RPX_EFORMAT,
                   "shape (0, 4294967296, 4294967296) with dtype '|u1' overflows (more than "
                   "2^63 bytes); the file is corrupt");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", RPX_EFORMAT,
                   "shape (2, -3) has a negative dimension; the file is corrupt");
}

static void test_header_limits(void **state)
{
    rpx_npy_header h;
    rpx_error err = {0};
    char dict[1024];
    size_t used, i;
    unsigned char bad[16];
    (void)state;
    /* 64 dimensions load, 65 do not */
    used = (size_t)snprintf(dict, sizeof dict,
                            "{'descr': '<u2', 'fortran_order': False, 'shape': (");
    for (i = 0; i < RPX_MAX_DIMS; i++)
        used += (size_t)snprintf(dict + used, sizeof dict - used, "1, ");
    snprintf(dict + used, sizeof dict - used, "), }");
    assert_int_equal(parse_dict(dict, &h, &err), 0);
    assert_int_equal(h.ndim, RPX_MAX_DIMS);
    snprintf(dict + used, sizeof dict - used, "1, ), }");
    expect_refusal(dict, RPX_EUNSUPPORTED,
                   "shape has more than 64 dimensions; save an array of at most 64 dimensions");

    /* magic, version and length */
    memcpy(bad, "\x93NUMPY\x01\x01\x10\x00", 10);
    assert_int_equal(rpx_npy_parse_header(bad, 10, NULL, &h, &err), RPX_EUNSUPPORTED);
    assert_string_equal(err.message, "NPY format version 1.1 is not supported (1.0, 2.0 and 3.0 "
                                     "are); write it again with numpy.save");
    memcpy(bad, "PK\x03\x04\x01\x00\x00\x00\x10\x00", 10);
    assert_int_equal(rpx_npy_parse_header(bad, 10, "x", &h, &err), RPX_EFORMAT);
    assert_string_equal(err.message, "x: not an NPY array (the magic bytes \\x93NUMPY are "
                                     "missing); write arrays with numpy.save or numpy.savez");
    assert_int_equal(rpx_npy_parse_header(bad, 0, NULL, &h, &err), RPX_EFORMAT);
    assert_int_equal(rpx_npy_parse_header("\x93NUM", 4, NULL, &h, &err), RPX_EFORMAT);
    assert_string_equal(err.message,
                        "NPY header is truncated (only 4 bytes present); the file is truncated");
    memcpy(bad, "\x93NUMPY\x02\x00\x00\x00\x10\x00", 12);
    assert_int_equal(rpx_npy_parse_header(bad, 12, NULL, &h, &err), RPX_EFORMAT);
    assert_string_equal(err.message, "NPY header length 1048576 is beyond the 1048576-byte "
                                     "limit; the file is corrupt");
    memcpy(bad, "\x93NUMPY\x01\x00\x76\x00", 10);
    assert_int_equal(rpx_npy_parse_header(bad, 10, NULL, &h, &err), RPX_EFORMAT);
    assert_string_equal(err.message, "NPY header is truncated (128 bytes declared, only 10 "
                                     "present); the file is truncated");
    assert_int_equal(rpx_npy_parse_header(NULL, 10, NULL, &h, &err), RPX_EINVAL);
}

/* ---- conversions -------------------------------------------------------- */

static void test_byteswap(void **state)
{
    uint16_t a[2] = {0x0102, 0xa0b0};
    uint32_t b[2] = {0x01020304u, 0xdeadbeefu};
    uint64_t c[1] = {UINT64_C(0x0102030405060708)};
    unsigned char d[6] = {1, 2, 3, 4, 5, 6};
    (void)state;
    rpx__npy_byteswap(a, 2, 2);
    assert_int_equal(a[0], 0x0201);
    assert_int_equal(a[1], 0xb0a0);
    rpx__npy_byteswap(b, 2, 4);
    assert_int_equal(b[0], 0x04030201u);
    assert_int_equal(b[1], 0xefbeaddeu);
    rpx__npy_byteswap(c, 1, 8);
    assert_true(c[0] == UINT64_C(0x0807060504030201));
    rpx__npy_byteswap(d, 2, 3);
    assert_memory_equal(d, "\x03\x02\x01\x06\x05\x04", 6);
    rpx__npy_byteswap(d, 6, 1);
    assert_memory_equal(d, "\x03\x02\x01\x06\x05\x04", 6);
}

static void test_fortran_to_c(void **state)
{
    /* a 2x3 array [[0,1,2],[3,4,5]] stored in Fortran order: 0 3 1 4 2 5 */
    static const int64_t s23[] = {2, 3};
    const uint8_t f8[] = {0, 3, 1, 4, 2, 5};
    const uint16_t f16[] = {0, 3, 1, 4, 2, 5};
    const uint32_t f32[] = {0, 3, 1, 4, 2, 5};
    const uint64_t f64[] = {0, 3, 1, 4, 2, 5};
    uint8_t c8[6];
    uint16_t c16[6];
    uint32_t c32[6];
    uint64_t c64[6];
    /* 2x3x4: element (i,j,k) = 100i + 10j + k; Fortran offset i + 2j + 6k */
    static const int64_t s234[] = {2, 3, 4};
    int32_t f3[24], c3[24];
    int i, j, k;
    (void)state;
    rpx__npy_fortran_to_c(c8, f8, 2, s23, 1);
    rpx__npy_fortran_to_c(c16, f16, 2, s23, 2);
    rpx__npy_fortran_to_c(c32, f32, 2, s23, 4);
    rpx__npy_fortran_to_c(c64, f64, 2, s23, 8);
    for (i = 0; i < 6; i++) {
        assert_int_equal(c8[i], i);
        assert_int_equal(c16[i], i);
        assert_int_equal(c32[i], i);
        assert_int_equal(c64[i], i);
    }
    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++)
            for (k = 0; k < 4; k++) f3[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
    rpx__npy_fortran_to_c(c3, f3, 3, s234, 4);
    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++)
            for (k = 0; k < 4; k++) assert_int_equal(c3[i * 12 + j * 4 + k], 100 * i + 10 * j + k);
    /* itemsize other than 1/2/4/8 takes the generic path */
    {
        unsigned char f3b[18], c3b[18];
        for (i = 0; i < 6; i++) memset(f3b + 3 * i, f8[i], 3);
        rpx__npy_fortran_to_c(c3b, f3b, 2, s23, 3);
        for (i = 0; i < 18; i++) assert_int_equal(c3b[i], i / 3);
    }
}

static void test_shape_str(void **state)
{
    static const int64_t s[] = {2, 3, 40000};
    char buf[64], small[10];
    (void)state;
    assert_string_equal(rpx__npy_shape_str(buf, sizeof buf, 0, s), "()");
    assert_string_equal(rpx__npy_shape_str(buf, sizeof buf, 1, s), "(2,)");
    assert_string_equal(rpx__npy_shape_str(buf, sizeof buf, 3, s), "(2, 3, 40000)");
    assert_string_equal(rpx__npy_shape_str(small, sizeof small, 3, s), "(2, 3...)");
}

static int setup(void **state)
{
    (void)state;
    fixtures = getenv("RPX_FIXTURES");
    if (!fixtures || !*fixtures) {
        fprintf(stderr, "RPX_FIXTURES is not set; run through ctest\n");
        exit(77);
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_names),
        cmocka_unit_test(test_numpy_headers_all_versions),
        cmocka_unit_test(test_make_header_equals_numpy),
        cmocka_unit_test(test_make_header_shapes),
        cmocka_unit_test(test_header_syntax_variants),
        cmocka_unit_test(test_header_refusals),
        cmocka_unit_test(test_header_limits),
        cmocka_unit_test(test_byteswap),
        cmocka_unit_test(test_fortran_to_c),
        cmocka_unit_test(test_shape_str),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
