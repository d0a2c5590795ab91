/* test_npz.c — rpx_npz_load on files numpy wrote (tests/fixtures/
 * make_npz_fixtures.py): every array's description and VALUES against what
 * numpy.load returned, and every refusal with its exact message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_files.h"
#include <jansson.h>

#include "io/npy_internal.h"
#include "rpxprof/error.h"
#include "rpxprof/npz.h"

static const char *fixtures;
static json_t *manifest;

static char *fixture_path(const char *rel)
{
    static char buf[4][4096];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", fixtures, rel);
    return p;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    return rpx_test_slurp(path, len);
}

/* The permissions of the mapping that holds addr, from /proc/self/maps. */
static void mapping_perms(const void *addr, char perms[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uintptr_t a = (uintptr_t)addr;
    strcpy(perms, "????");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char p[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && a >= lo && a < hi) {
            memcpy(perms, p, 5);
            break;
        }
    }
    fclose(f);
}

static long long fact(const char *file, const char *key)
{
    json_t *f = json_object_get(json_object_get(manifest, "bad"), file);
    if (!f || !json_object_get(f, key)) fail_msg("no fact %s.%s in expected.json", file, key);
    return json_integer_value(json_object_get(f, key));
}

/* ---- good files: everything against numpy ------------------------------ */

static void check_array(const rpx_npz *npz, size_t i, const json_t *exp, const char *file)
{
    const rpx_tensor *t = &rpx_npz_inputs(npz)->tensors[i];
    const rpx_npz_array_info *info = rpx_npz_array_info_at(npz, i);
    const json_t *shape = json_object_get(exp, "shape"), *ver = json_object_get(exp, "version");
    rpx_dtype dt = 0;
    size_t k, rawlen;
    unsigned char *raw;
    char perms[5];

    assert_non_null(info);
    assert_string_equal(t->name, json_string_value(json_object_get(exp, "name")));
    assert_ptr_equal(info->name, t->name);
    assert_int_equal(rpx_dtype_from_name(json_string_value(json_object_get(exp, "dtype")), &dt), 0);
    if (t->dtype != dt) fail_msg("%s: %s: dtype %d, want %d", file, t->name, t->dtype, dt);
    assert_string_equal(rpx_dtype_name(t->dtype), json_string_value(json_object_get(exp, "dtype")));
    assert_int_equal(t->ndim, (int)json_array_size(shape));
    for (k = 0; k < json_array_size(shape); k++) {
        assert_int_equal(t->shape[k], json_integer_value(json_array_get(shape, k)));
        assert_int_equal(info->header.shape[k], t->shape[k]);
    }
    assert_int_equal(t->count, json_integer_value(json_object_get(exp, "count")));
    assert_int_equal(t->nbytes, json_integer_value(json_object_get(exp, "nbytes")));
    assert_int_equal(t->nbytes, t->count * rpx_dtype_size(t->dtype));

    /* the header as stored */
    assert_string_equal(info->header.descr, json_string_value(json_object_get(exp, "descr")));
    assert_int_equal(info->header.fortran_order,
                     json_is_true(json_object_get(exp, "fortran_order")));
    assert_int_equal(info->header.big_endian, json_is_true(json_object_get(exp, "big_endian")));
    assert_int_equal(info->header.major, json_integer_value(json_array_get(ver, 0)));
    assert_int_equal(info->header.minor, json_integer_value(json_array_get(ver, 1)));
    assert_int_equal(info->header.data_offset,
                     json_integer_value(json_object_get(exp, "data_offset")));
    assert_int_equal(info->header.dtype, t->dtype);
    assert_int_equal(info->compressed, json_is_true(json_object_get(exp, "compressed")));

    /* the data: aligned, read-only, and exactly numpy's values */
    assert_non_null(t->data);
    assert_int_equal((uintptr_t)t->data % RPX_TENSOR_ALIGN, 0);
    raw = slurp(fixture_path(json_string_value(json_object_get(exp, "raw"))), &rawlen);
    assert_int_equal(rawlen, t->nbytes);
    if (memcmp(raw, t->data, rawlen) != 0) {
        for (k = 0; k < rawlen && raw[k] == ((const unsigned char *)t->data)[k]; k++) {}
        fail_msg("%s: array '%s': byte %zu differs from numpy's value", file, t->name, k);
    }
    free(raw);
    if (t->nbytes) {
        mapping_perms(t->data, perms);
        if (perms[0] != 'r' || perms[1] != '-')
            fail_msg("%s: array '%s': data mapping is '%s', want read-only", file, t->name,
                     perms);
    }
}

static void test_good_files_match_numpy(void **state)
{
    size_t i, j, arrays = 0, files = 0, fortran = 0, swapped = 0, deflated = 0, v2 = 0, v3 = 0;
    json_t *e, *a;
    (void)state;
    json_array_foreach(json_object_get(manifest, "good"), i, e) {
        const char *rel = json_string_value(json_object_get(e, "file"));
        json_t *exp = json_object_get(e, "arrays");
        rpx_npz *npz = NULL;
        rpx_error err = {0};
        int rc = rpx_npz_load(fixture_path(rel), &npz, &err);
        if (rc) fail_msg("%s: refused: %s", rel, err.message);
        assert_int_equal(rpx_npz_inputs(npz)->count, json_array_size(exp));
        assert_null(rpx_npz_array_info_at(npz, json_array_size(exp)));
        json_array_foreach(exp, j, a) {
            check_array(npz, j, a, rel);
            arrays++;
            fortran += json_is_true(json_object_get(a, "fortran_order"));
            swapped += json_is_true(json_object_get(a, "big_endian"));
            deflated += json_is_true(json_object_get(a, "compressed"));
            v2 += json_integer_value(json_array_get(json_object_get(a, "version"), 0)) == 2;
            v3 += json_integer_value(json_array_get(json_object_get(a, "version"), 0)) == 3;
        }
        rpx_npz_free(npz);
        files++;
    }
    /* the fixtures really exercise what they should */
    assert_true(files >= 20);
    assert_true(arrays >= 100);
    assert_true(fortran >= 10);
    assert_true(swapped >= 15);
    assert_true(deflated >= 40);
    assert_true(v2 >= 3 && v3 >= 3);
}

static const rpx_tensor *load_find(const char *rel, const char *name, rpx_npz **npz)
{
    rpx_error err = {0};
    const rpx_tensor *t;
    if (rpx_npz_load(fixture_path(rel), npz, &err)) fail_msg("%s: %s", rel, err.message);
    t = rpx_inputs_find(rpx_npz_inputs(*npz), name);
    if (!t) fail_msg("%s: no array %s", rel, name);
    return t;
}

/* Values written here by hand, independent of the manifest. */
static void test_known_values(void **state)
{
    rpx_npz *npz;
    const rpx_tensor *t;
    int i;
    (void)state;

    t = load_find("good/dtypes.npz", "int8", &npz);
    assert_int_equal(t->ndim, 2);
    for (i = 0; i < 256; i++) assert_int_equal(((const int8_t *)t->data)[i], i - 128);
    rpx_npz_free(npz);

    /* Fortran order: arange(12).reshape(3, 4) stored column-major */
    t = load_find("good/fortran_z.npz", "f2d", &npz);
    assert_int_equal(t->dtype, RPX_DTYPE_FLOAT32);
    for (i = 0; i < 12; i++) assert_true(((const float *)t->data)[i] == (float)i);
    t = rpx_inputs_find(rpx_npz_inputs(npz), "f3d");
    for (i = 0; i < 24; i++) assert_int_equal(((const int16_t *)t->data)[i], i);
    assert_int_equal(rpx_npz_array_info_at(npz, 1)->header.fortran_order, 1);
    rpx_npz_free(npz);

    /* version 3.0, big-endian and Fortran order at once */
    t = load_find("good/versions.npz", "c_v3", &npz);
    assert_int_equal(t->dtype, RPX_DTYPE_UINT16);
    for (i = 0; i < 6; i++) assert_int_equal(((const uint16_t *)t->data)[i], i);
    assert_string_equal(rpx_npz_array_info_at(npz, 2)->header.descr, ">u2");
    assert_int_equal(rpx_npz_array_info_at(npz, 2)->header.major, 3);
    rpx_npz_free(npz);

    t = load_find("good/bigendian.npz", "be_scalar", &npz);
    assert_int_equal(t->ndim, 0);
    assert_int_equal(t->count, 1);
    assert_int_equal(*(const int32_t *)t->data, -7);
    t = rpx_inputs_find(rpx_npz_inputs(npz), "be_empty");
    assert_int_equal(t->count, 0);
    assert_int_equal(t->nbytes, 0);
    assert_non_null(t->data);
    assert_int_equal((uintptr_t)t->data % RPX_TENSOR_ALIGN, 0);
    rpx_npz_free(npz);

    t = load_find("good/scalar.npy", "scalar", &npz);
    assert_int_equal(*(const int64_t *)t->data, 42);
    rpx_npz_free(npz);

    t = load_find("good/shapes_z.npz", "d8", &npz);
    assert_int_equal(t->ndim, 8);
    for (i = 0; i < 288; i++) assert_true(((const double *)t->data)[i] == (double)i);
    rpx_npz_free(npz);
}

static void test_member_names_and_order(void **state)
{
    static const char *want[] = {"rgb", "depth", "arr_0", "arr_1", "subdir/x", "noext"};
    rpx_npz *npz;
    rpx_error err = {0};
    size_t i;
    (void)state;
    assert_int_equal(rpx_npz_load(fixture_path("good/names.npz"), &npz, &err), 0);
    assert_int_equal(rpx_npz_inputs(npz)->count, 6);
    for (i = 0; i < 6; i++) assert_string_equal(rpx_npz_inputs(npz)->tensors[i].name, want[i]);
    rpx_npz_free(npz);

    assert_int_equal(rpx_npz_load(fixture_path("good/single.npy"), &npz, &err), 0);
    assert_int_equal(rpx_npz_inputs(npz)->count, 1);
    assert_string_equal(rpx_npz_inputs(npz)->tensors[0].name, "single");
    assert_int_equal(rpx_npz_array_info_at(npz, 0)->compressed, 0);
    rpx_npz_free(npz);

    assert_int_equal(rpx_npz_load(fixture_path("good/empty_archive.npz"), &npz, &err), 0);
    assert_int_equal(rpx_npz_inputs(npz)->count, 0);
    assert_null(rpx_npz_array_info_at(npz, 0));
    rpx_npz_free(npz);
}

/* The in-memory entry the fuzz target uses gives the same result. */
static void test_load_buffer_same_as_file(void **state)
{
    const char *files[] = {"good/fortran_z.npz", "good/single.npy", "bad/bad_object.npz",
                           "bad/bad_zip_bomb.npz", "bad/bad_truncated_data.npy"};
    size_t i, k;
    (void)state;
    for (i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t len;
        unsigned char *buf = slurp(fixture_path(files[i]), &len);
        rpx_npz *a = NULL, *b = NULL;
        rpx_error ea = {0}, eb = {0};
        int ra = rpx_npz_load(fixture_path(files[i]), &a, &ea);
        int rb = rpx__npz_load_buffer(buf, len, fixture_path(files[i]), &b, &eb);
        assert_int_equal(ra, rb);
        assert_string_equal(ea.message, eb.message);
        if (ra == 0) {
            assert_int_equal(rpx_npz_inputs(a)->count, rpx_npz_inputs(b)->count);
            for (k = 0; k < rpx_npz_inputs(a)->count; k++) {
                const rpx_tensor *ta = &rpx_npz_inputs(a)->tensors[k];
                const rpx_tensor *tb = &rpx_npz_inputs(b)->tensors[k];
                assert_string_equal(ta->name, tb->name);
                assert_int_equal(ta->nbytes, tb->nbytes);
                assert_memory_equal(ta->data, tb->data, ta->nbytes);
            }
        } else {
            assert_null(a);
            assert_null(b);
        }
        rpx_npz_free(a);
        rpx_npz_free(b);
        free(buf);
    }
}

static void test_crc32(void **state)
{
    unsigned char buf[1000];
    uint32_t whole, part;
    size_t i, cut;
    (void)state;
    assert_int_equal(rpx__crc32(0, "123456789", 9), 0xcbf43926u); /* the check value */
    assert_int_equal(rpx__crc32(0, "", 0), 0);
    for (i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 131 + 7);
    whole = rpx__crc32(0, buf, sizeof buf);
    for (cut = 0; cut <= 17; cut++) { /* any split and alignment gives the same */
        part = rpx__crc32(0, buf + 0, cut);
        part = rpx__crc32(part, buf + cut, sizeof buf - cut);
        assert_int_equal(part, whole);
    }
    part = rpx__crc32(rpx__crc32(0, buf + 3, 500), buf + 503, 497); /* unaligned start */
    assert_int_equal(part, rpx__crc32(0, buf + 3, 997));
    assert_int_not_equal(part, whole);
}

static void test_sha256_matches_python(void **state)
{
    size_t i;
    json_t *e;
    (void)state;
    json_array_foreach(json_object_get(manifest, "good"), i, e) {
        char hex[65];
        rpx_error err = {0};
        const char *rel = json_string_value(json_object_get(e, "file"));
        assert_int_equal(rpx_file_sha256(fixture_path(rel), hex, &err), 0);
        assert_string_equal(hex, json_string_value(json_object_get(e, "sha256")));
    }
    /* a file of exactly one and of more than one 1 MiB read */
    assert_true(i >= 20);
}

static void test_sha256_errors(void **state)
{
    char hex[65], want[4200];
    rpx_error err = {0};
    const char *missing = fixture_path("good/no_such_file.npz");
    (void)state;
    assert_int_equal(rpx_file_sha256(missing, hex, &err), RPX_EIO);
    snprintf(want, sizeof want, "%s: cannot open (No such file or directory); check the path",
             missing);
    assert_string_equal(err.message, want);
    assert_int_equal(rpx_file_sha256(fixtures, hex, &err), RPX_EIO);
    snprintf(want, sizeof want, "%s: cannot read (Is a directory)", fixtures);
    assert_string_equal(err.message, want);
    assert_int_equal(rpx_file_sha256(NULL, hex, &err), RPX_EINVAL);
}

static void test_load_bad_arguments(void **state)
{
    rpx_npz *npz = (rpx_npz *)&npz;
    rpx_error err = {0};
    char want[4200];
    const char *missing = fixture_path("good/no_such_file.npz");
    (void)state;
    assert_int_equal(rpx_npz_load(NULL, &npz, &err), RPX_EINVAL);
    assert_null(npz);
    assert_int_equal(rpx_npz_load("x.npz", NULL, &err), RPX_EINVAL);
    assert_int_equal(rpx_npz_load(missing, &npz, &err), RPX_EIO);
    snprintf(want, sizeof want, "%s: cannot open (No such file or directory); check the path",
             missing);
    assert_string_equal(err.message, want);
    assert_int_equal(rpx_npz_load(fixtures, &npz, &err), RPX_EINVAL);
    snprintf(want, sizeof want,
             "%s: not a regular file; give the path of an .npz or .npy file", fixtures);
    assert_string_equal(err.message, want);
    assert_null(rpx_npz_inputs(NULL));
    assert_null(rpx_npz_array_info_at(NULL, 0));
    rpx_npz_free(NULL);
    /* a NULL error buffer is allowed */
    assert_int_equal(rpx_npz_load(missing, &npz, NULL), RPX_EIO);
}

/* ---- refusals: one test per bad file, exact messages ------------------- */

static void check_refusal(const char *file, int code, const char *fmt, ...)
{
    char rel[256], want[2048], suffix[1024];
    rpx_npz *npz = (rpx_npz *)&npz;
    rpx_error err = {0};
    va_list ap;
    int rc;

    snprintf(rel, sizeof rel, "bad/%s", file);
    va_start(ap, fmt);
    vsnprintf(suffix, sizeof suffix, fmt, ap);
    va_end(ap);
    snprintf(want, sizeof want, "%s: %s", fixture_path(rel), suffix);
    rc = rpx_npz_load(fixture_path(rel), &npz, &err);
    if (rc != code)
        fail_msg("%s: rc %d (%s), want %d; message: %s", file, rc, rpx_err_name(rc), code,
                 err.message);
    assert_null(npz);
    assert_int_equal(err.code, code);
    assert_string_equal(err.message, want);
}

#define NOT_NUMERIC "save numeric arrays only"
#define CORRUPT "the file is corrupt"

static void test_refuse_object(void **s)
{
    (void)s;
    check_refusal("bad_object.npz", RPX_EUNSUPPORTED,
                  "array 'obj': dtype '|O' (object) is not supported; " NOT_NUMERIC);
}
static void test_refuse_structured(void **s)
{
    (void)s;
    check_refusal("bad_structured.npz", RPX_EUNSUPPORTED,
                  "array 'rec': dtype [('a', '<i4'), ('b', '<f8')] (structured) is not "
                  "supported; save each field as its own array");
}
static void test_refuse_unicode(void **s)
{
    (void)s;
    check_refusal("bad_unicode.npz", RPX_EUNSUPPORTED,
                  "array 'names': dtype '<U5' (unicode string) is not supported; " NOT_NUMERIC);
}
static void test_refuse_bytes(void **s)
{
    (void)s;
    check_refusal("bad_bytes.npz", RPX_EUNSUPPORTED,
                  "array 'raw': dtype '|S3' (bytes string) is not supported; " NOT_NUMERIC);
}
static void test_refuse_complex(void **s)
{
    (void)s;
    check_refusal("bad_complex.npz", RPX_EUNSUPPORTED,
                  "array 'z': dtype '<c16' (complex) is not supported; save the real and "
                  "imaginary parts as two float arrays");
}
static void test_refuse_datetime(void **s)
{
    (void)s;
    check_refusal("bad_datetime.npz", RPX_EUNSUPPORTED,
                  "array 't': dtype '<M8[ns]' (datetime) is not supported; convert it first, "
                  "e.g. arr.astype('int64')");
}
static void test_refuse_timedelta(void **s)
{
    (void)s;
    check_refusal("bad_timedelta.npz", RPX_EUNSUPPORTED,
                  "array 'dt': dtype '<m8[s]' (timedelta) is not supported; convert it first, "
                  "e.g. arr.astype('int64')");
}
static void test_refuse_void(void **s)
{
    (void)s;
    check_refusal("bad_void.npz", RPX_EUNSUPPORTED,
                  "array 'v': dtype '|V4' (void (raw bytes)) is not supported; " NOT_NUMERIC);
}
static void test_refuse_longdouble(void **s)
{
    (void)s;
    check_refusal("bad_longdouble.npz", RPX_EUNSUPPORTED,
                  "array 'ld': dtype '<f16' (long double) is not supported; convert it to "
                  "float64 first");
}
static void test_refuse_truncated_zip(void **s)
{
    (void)s;
    check_refusal("bad_truncated.npz", RPX_EFORMAT,
                  "not an NPZ (zip) or NPY file, or it is truncated; save the inputs with "
                  "numpy.savez or numpy.save");
}
static void test_refuse_truncated_npy_data(void **s)
{
    (void)s;
    check_refusal("bad_truncated_data.npy", RPX_EFORMAT,
                  "array 'bad_truncated_data': header shape (100,) with dtype '<f8' needs %lld "
                  "data bytes but the file holds %lld; the file is corrupt or truncated",
                  fact("bad_truncated_data.npy", "needs"),
                  fact("bad_truncated_data.npy", "holds"));
}
static void test_refuse_truncated_npy_header(void **s)
{
    (void)s;
    check_refusal("bad_truncated_header.npy", RPX_EFORMAT,
                  "array 'bad_truncated_header': NPY header is truncated (%lld bytes declared, "
                  "only %lld present); the file is truncated",
                  fact("bad_truncated_header.npy", "declared"),
                  fact("bad_truncated_header.npy", "holds"));
}
static void test_refuse_truncated_member(void **s)
{
    (void)s;
    check_refusal("bad_member_truncated.npz", RPX_EFORMAT,
                  "array 'x': header shape (2, 3) with dtype '<f4' needs %lld data bytes but "
                  "the member holds %lld; the file is corrupt or truncated",
                  fact("bad_member_truncated.npz", "needs"),
                  fact("bad_member_truncated.npz", "holds"));
}
static void test_refuse_trailing_data(void **s)
{
    (void)s;
    check_refusal("bad_trailing_data.npz", RPX_EFORMAT,
                  "array 'x': header shape (2, 3) with dtype '<f4' needs 24 data bytes but "
                  "the member holds 32; the file is corrupt or truncated");
}
static void test_refuse_header_key(void **s)
{
    (void)s;
    check_refusal("bad_header_key.npz", RPX_EFORMAT,
                  "array 'x': NPY header has an unexpected key 'dexcr' (only 'descr', "
                  "'fortran_order' and 'shape' are allowed); " CORRUPT);
}
static void test_refuse_header_syntax(void **s)
{
    (void)s;
    check_refusal("bad_header_syntax.npz", RPX_EFORMAT,
                  "array 'x': malformed NPY header (expected '{' at byte 0 of the dict); " CORRUPT);
}
static void test_refuse_magic(void **s)
{
    (void)s;
    check_refusal("bad_magic.npz", RPX_EFORMAT,
                  "array 'x': not an NPY array (the magic bytes \\x93NUMPY are missing); write "
                  "arrays with numpy.save or numpy.savez");
}
static void test_refuse_version(void **s)
{
    (void)s;
    check_refusal("bad_version.npy", RPX_EUNSUPPORTED,
                  "array 'bad_version': NPY format version 4.0 is not supported (1.0, 2.0 and "
                  "3.0 are); write it again with numpy.save");
}
static void test_refuse_fortran_value(void **s)
{
    (void)s;
    check_refusal("bad_fortran_value.npy", RPX_EFORMAT,
                  "array 'bad_fortran_value': malformed NPY header ('fortran_order' is neither "
                  "True nor False at byte 34 of the dict); " CORRUPT);
}
static void test_refuse_header_len(void **s)
{
    (void)s;
    check_refusal("bad_header_len.npy", RPX_EFORMAT,
                  "array 'bad_header_len': NPY header length 2147483647 is beyond the "
                  "1048576-byte limit; " CORRUPT);
}
static void test_refuse_shape_mismatch(void **s)
{
    (void)s;
    check_refusal("bad_shape_mismatch.npz", RPX_EFORMAT,
                  "array 'x': header shape (4,) with dtype '<f4' needs 16 data bytes but the "
                  "member holds 12; the file is corrupt or truncated");
}
static void test_refuse_shape_overflow(void **s)
{
    (void)s;
    check_refusal("bad_shape_overflow.npz", RPX_EFORMAT,
                  "array 'x': shape (4294967296, 4294967296, 16) with dtype '<f8' overflows "
                  "(more than 2^63 bytes); " CORRUPT);
}
static void test_refuse_dim_overflow(void **s)
{
    (void)s;
    check_refusal("bad_dim_overflow.npz", RPX_EFORMAT,
                  "array 'x': shape has a dimension beyond 2^63 (the size overflows); " CORRUPT);
}
static void test_refuse_negative_dim(void **s)
{
    (void)s;
    check_refusal("bad_negative_dim.npy", RPX_EFORMAT,
                  "array 'bad_negative_dim': shape (-1, 3) has a negative dimension; " CORRUPT);
}
static void test_refuse_too_many_dims(void **s)
{
    (void)s;
    check_refusal("bad_too_many_dims.npy", RPX_EUNSUPPORTED,
                  "array 'bad_too_many_dims': shape has more than 64 dimensions; save an array "
                  "of at most 64 dimensions");
}
static void test_refuse_crc(void **s)
{
    (void)s;
    check_refusal("bad_crc.npz", RPX_EFORMAT,
                  "array 'x': cannot read the data (CRC error); " CORRUPT);
}
static void test_refuse_crc_large(void **s)
{
    (void)s;
    check_refusal("bad_crc_large.npz", RPX_EFORMAT,
                  "array 'big': cannot read the data (CRC error); " CORRUPT);
}
static void test_refuse_corrupt_deflate(void **s)
{
    rpx_npz *npz;
    rpx_error err = {0};
    char want[2048];
    const char *p = fixture_path("bad/bad_deflate.npz");
    (void)s;
    assert_int_equal(rpx_npz_load(p, &npz, &err), RPX_EFORMAT);
    /* which of these zlib reports depends on where the corruption lands */
    snprintf(want, sizeof want, "%s: array 'x': cannot read the data (", p);
    if (strncmp(err.message, want, strlen(want)) != 0) {
        snprintf(want, sizeof want,
                 "%s: array 'x': the member holds more bytes than its header and the zip "
                 "directory declare; " CORRUPT,
                 p);
        assert_string_equal(err.message, want);
    }
    assert_non_null(strstr(err.message, CORRUPT));
}
static void test_refuse_duplicate(void **s)
{
    (void)s;
    check_refusal("bad_duplicate.npz", RPX_EFORMAT,
                  "array 'rgb' appears twice (member 'rgb.npy' repeats an earlier member); save "
                  "every array under one unique name");
}
static void test_refuse_duplicate_stem(void **s)
{
    (void)s;
    check_refusal("bad_duplicate_stem.npz", RPX_EFORMAT,
                  "array 'rgb' appears twice (member 'rgb' repeats an earlier member); save "
                  "every array under one unique name");
}
static void test_refuse_not_zip(void **s)
{
    (void)s;
    check_refusal("bad_notzip.npz", RPX_EFORMAT,
                  "not an NPZ (zip) or NPY file, or it is truncated; save the inputs with "
                  "numpy.savez or numpy.save");
}
static void test_refuse_empty_file(void **s)
{
    (void)s;
    check_refusal("bad_empty.npz", RPX_EFORMAT,
                  "the file is empty; save the inputs with numpy.savez");
}
static void test_refuse_non_npy_member(void **s)
{
    (void)s;
    check_refusal("bad_nonnpy_member.npz", RPX_EFORMAT,
                  "member 'notes.txt' is not a .npy array; an NPZ file may hold only arrays "
                  "written by numpy.savez (remove the member)");
}
static void test_refuse_empty_name(void **s)
{
    (void)s;
    check_refusal("bad_empty_name.npz", RPX_EFORMAT,
                  "member '.npy' gives an array with an empty name; save every array under a "
                  "non-empty name");
}
static void test_refuse_compression_method(void **s)
{
    (void)s;
    check_refusal("bad_method.npz", RPX_EUNSUPPORTED,
                  "array 'x': member 'x.npy' uses zip compression method 12; only stored and "
                  "deflated members are supported (write it with numpy.savez or "
                  "numpy.savez_compressed)");
}
static void test_refuse_zip_bomb(void **s)
{
    (void)s;
    check_refusal("bad_zip_bomb.npz", RPX_EFORMAT,
                  "array 'x': member 'x.npy' declares %lld uncompressed bytes, more than its "
                  "%lld deflated bytes can hold; the file is corrupt (or a zip bomb)",
                  fact("bad_zip_bomb.npz", "declared"), fact("bad_zip_bomb.npz", "comp"));
}
static void test_refuse_declared_size_beyond_data(void **s)
{
    (void)s;
    check_refusal("bad_declared_size.npz", RPX_EFORMAT,
                  "array 'x': the data ends after %lld of %lld bytes; the file is truncated or "
                  "corrupt",
                  fact("bad_declared_size.npz", "got"), fact("bad_declared_size.npz", "needs"));
}
static void test_refuse_stored_size_beyond_file(void **s)
{
    (void)s;
    check_refusal("bad_stored_size.npz", RPX_EFORMAT,
                  "array 'x': member 'x.npy' declares %lld bytes of data but the whole file has "
                  "%lld; the file is corrupt or truncated",
                  fact("bad_stored_size.npz", "declared"), fact("bad_stored_size.npz", "archive"));
}
static void test_refuse_encrypted(void **s)
{
    (void)s;
    check_refusal("bad_encrypted.npz", RPX_EUNSUPPORTED,
                  "array 'x': member 'x.npy' is encrypted; save the inputs without a password");
}

/* Every bad file in the folder has a test above (a new one must get one). */
static void test_every_bad_fixture_is_tested(void **state)
{
    static const char *tested[] = {
        "bad_object.npz", "bad_structured.npz", "bad_unicode.npz", "bad_bytes.npz",
        "bad_complex.npz", "bad_datetime.npz", "bad_timedelta.npz", "bad_void.npz",
        "bad_longdouble.npz", "bad_truncated.npz", "bad_truncated_data.npy",
        "bad_truncated_header.npy", "bad_member_truncated.npz", "bad_trailing_data.npz",
        "bad_header_key.npz",
        "bad_header_syntax.npz", "bad_magic.npz", "bad_version.npy", "bad_fortran_value.npy",
        "bad_header_len.npy", "bad_shape_mismatch.npz", "bad_shape_overflow.npz",
        "bad_dim_overflow.npz", "bad_negative_dim.npy", "bad_too_many_dims.npy", "bad_crc.npz",
        "bad_crc_large.npz",
        "bad_deflate.npz", "bad_duplicate.npz", "bad_duplicate_stem.npz", "bad_notzip.npz",
        "bad_empty.npz", "bad_nonnpy_member.npz", "bad_empty_name.npz", "bad_method.npz",
        "bad_zip_bomb.npz", "bad_declared_size.npz", "bad_stored_size.npz",
        "bad_encrypted.npz"};
    char cmd[4300];
    FILE *p;
    char line[512];
    size_t n = 0, i;
    (void)state;
    snprintf(cmd, sizeof cmd, "ls '%s/bad'", fixtures);
    p = popen(cmd, "r");
    assert_non_null(p);
    while (fgets(line, sizeof line, p)) {
        bool found = false;
        line[strcspn(line, "\n")] = '\0';
        for (i = 0; i < sizeof tested / sizeof tested[0]; i++)
            if (strcmp(tested[i], line) == 0) found = true;
        if (!found) fail_msg("bad fixture %s has no refusal test", line);
        n++;
    }
    pclose(p);
    assert_int_equal(n, sizeof tested / sizeof tested[0]);
}

static int setup(void **state)
{
    json_error_t jerr;
    (void)state;
    fixtures = getenv("RPX_FIXTURES");
    if (!fixtures || !*fixtures) {
        fprintf(stderr, "RPX_FIXTURES is not set; run through ctest\n");
        exit(77);
    }
    manifest = json_load_file(fixture_path("expected.json"), 0, &jerr);
    if (!manifest) {
        fprintf(stderr, "%s: %s (run the fixtures.npz test first)\n",
                fixture_path("expected.json"), jerr.text);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(manifest);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_files_match_numpy),
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_member_names_and_order),
        cmocka_unit_test(test_load_buffer_same_as_file),
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_sha256_matches_python),
        cmocka_unit_test(test_sha256_errors),
        cmocka_unit_test(test_load_bad_arguments),
        cmocka_unit_test(test_refuse_object),
        cmocka_unit_test(test_refuse_structured),
        cmocka_unit_test(test_refuse_unicode),
        cmocka_unit_test(test_refuse_bytes),
        cmocka_unit_test(test_refuse_complex),
        cmocka_unit_test(test_refuse_datetime),
        cmocka_unit_test(test_refuse_timedelta),
        cmocka_unit_test(test_refuse_void),
        cmocka_unit_test(test_refuse_longdouble),
        cmocka_unit_test(test_refuse_truncated_zip),
        cmocka_unit_test(test_refuse_truncated_npy_data),
        cmocka_unit_test(test_refuse_truncated_npy_header),
        cmocka_unit_test(test_refuse_truncated_member),
        cmocka_unit_test(test_refuse_trailing_data),
        cmocka_unit_test(test_refuse_header_key),
        cmocka_unit_test(test_refuse_header_syntax),
        cmocka_unit_test(test_refuse_magic),
        cmocka_unit_test(test_refuse_version),
        cmocka_unit_test(test_refuse_fortran_value),
        cmocka_unit_test(test_refuse_header_len),
        cmocka_unit_test(test_refuse_shape_mismatch),
        cmocka_unit_test(test_refuse_shape_overflow),
        cmocka_unit_test(test_refuse_dim_overflow),
        cmocka_unit_test(test_refuse_negative_dim),
        cmocka_unit_test(test_refuse_too_many_dims),
        cmocka_unit_test(test_refuse_crc),
        cmocka_unit_test(test_refuse_crc_large),
        cmocka_unit_test(test_refuse_corrupt_deflate),
        cmocka_unit_test(test_refuse_duplicate),
        cmocka_unit_test(test_refuse_duplicate_stem),
        cmocka_unit_test(test_refuse_not_zip),
        cmocka_unit_test(test_refuse_empty_file),
        cmocka_unit_test(test_refuse_non_npy_member),
        cmocka_unit_test(test_refuse_empty_name),
        cmocka_unit_test(test_refuse_compression_method),
        cmocka_unit_test(test_refuse_zip_bomb),
        cmocka_unit_test(test_refuse_declared_size_beyond_data),
        cmocka_unit_test(test_refuse_stored_size_beyond_file),
        cmocka_unit_test(test_refuse_encrypted),
        cmocka_unit_test(test_every_bad_fixture_is_tested),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
