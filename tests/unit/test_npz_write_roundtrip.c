/* test_npz_write_roundtrip.c — the NPZ writer: C writes every dtype and
 * shape, numpy.load reads it back identically (tests/fixtures/
 * check_npz_written.py, run through $RPX_PYTHON), and so does rpx_npz_load.
 * Also: the file appears atomically, a discarded writer leaves nothing, and
 * every refusal with its message. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "rpxprof/error.h"
#include "rpxprof/npz.h"
#include "common/output.h"

#ifndef RPX_NPZ_CHECKER
#error "RPX_NPZ_CHECKER must name tests/fixtures/check_npz_written.py"
#endif

static char tmpdir[256];

typedef struct arr {
    char name[64];
    rpx_dtype dtype;
    int ndim;
    int64_t shape[RPX_MAX_DIMS];
    size_t nbytes;
    unsigned char *data;
} arr;

static arr arrays[256];
static size_t narrays;

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t next_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void add_array(rpx_dtype dt, int ndim, const int64_t *shape)
{
    arr *a = &arrays[narrays];
    size_t count = 1, i;
    assert_true(narrays < sizeof arrays / sizeof arrays[0]);
    snprintf(a->name, sizeof a->name, "%s_%zu", rpx_dtype_name(dt), narrays);
    a->dtype = dt;
    a->ndim = ndim;
    for (i = 0; i < (size_t)ndim; i++) {
        a->shape[i] = shape[i];
        count *= (size_t)shape[i];
    }
    a->nbytes = count * rpx_dtype_size(dt);
    a->data = malloc(a->nbytes ? a->nbytes : 1);
    assert_non_null(a->data);
    for (i = 0; i < a->nbytes; i++) a->data[i] = (unsigned char)next_rand();
    if (dt == RPX_DTYPE_BOOL)
        for (i = 0; i < a->nbytes; i++) a->data[i] &= 1;
    narrays++;
}

static void make_arrays(void)
{
    static const int64_t s1[] = {5}, s0[] = {0}, s30[] = {3, 0}, s23[] = {2, 3},
                         s302[] = {3, 0, 2}, s4[] = {2, 1, 3, 2},
                         s8[] = {1, 2, 1, 2, 1, 2, 1, 2};
    static const struct { int ndim; const int64_t *shape; } shapes[] = {
        {0, NULL}, {1, s1}, {1, s0}, {2, s30}, {2, s23}, {3, s302}, {4, s4}, {8, s8}};
    int64_t s32[32], big[] = {1000, 1000};
    rpx_dtype dt;
    size_t k;
    narrays = 0;
    for (dt = RPX_DTYPE_BOOL; dt <= RPX_DTYPE_FLOAT64; dt++)
        for (k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
            add_array(dt, shapes[k].ndim, shapes[k].shape);
    /* 15 dimensions: the dict ends just below a 64-byte boundary without
     * numpy's spare growth spaces, beyond it with them */
    for (k = 0; k < 15; k++) s32[k] = 1;
    s32[14] = 2;
    add_array(RPX_DTYPE_UINT8, 15, s32);
    /* numpy 1.24 reads at most 32 dimensions */
    for (k = 0; k < 32; k++) s32[k] = 1;
    s32[31] = 3;
    add_array(RPX_DTYPE_INT16, 32, s32);
    add_array(RPX_DTYPE_FLOAT32, 2, big); /* 4 MB: many reads and deflate blocks */
}

static void free_arrays(void)
{
    size_t i;
    for (i = 0; i < narrays; i++) free(arrays[i].data);
    narrays = 0;
}

static char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", tmpdir, name);
    return p;
}

static size_t dir_entries(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    size_t n = 0;
    assert_non_null(d);
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void clear_dir(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    assert_non_null(d);
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(tmp_path(e->d_name));
    closedir(d);
}

static void write_all(const char *path, int compress)
{
    rpx_npz_writer *w = NULL;
    rpx_error err = {0};
    size_t i;
    if (rpx_npz_writer_open(path, compress, &w, &err)) fail_msg("%s", err.message);
    for (i = 0; i < narrays; i++)
        if (rpx_npz_writer_add(w, arrays[i].name, arrays[i].dtype, arrays[i].ndim,
                               arrays[i].shape, arrays[i].data, &err))
            fail_msg("%s", err.message);
    if (rpx_npz_writer_close(w, &err)) fail_msg("%s", err.message);
}

/* numpy reads `path` back; returns the checker's exit status. */
static int numpy_check(const char *path_in, int compress)
{
    json_t *spec = json_object(), *list = json_array();
    const char *python = getenv("RPX_PYTHON");
    char cmd[2048], rawname[128], path[512];
    size_t i;
    int st;
    snprintf(path, sizeof path, "%s", path_in); /* tmp_path's buffers rotate */
    json_object_set_new(spec, "compress", json_boolean(compress));
    for (i = 0; i < narrays; i++) {
        json_t *a = json_object(), *shape = json_array();
        FILE *f;
        int k;
        snprintf(rawname, sizeof rawname, "raw_%zu.bin", i);
        f = fopen(tmp_path(rawname), "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(arrays[i].data, 1, arrays[i].nbytes, f), arrays[i].nbytes);
        fclose(f);
        for (k = 0; k < arrays[i].ndim; k++)
            json_array_append_new(shape, json_integer(arrays[i].shape[k]));
        json_object_set_new(a, "name", json_string(arrays[i].name));
        json_object_set_new(a, "dtype", json_string(rpx_dtype_name(arrays[i].dtype)));
        json_object_set_new(a, "shape", shape);
        json_object_set_new(a, "raw", json_string(tmp_path(rawname)));
        json_array_append_new(list, a);
    }
    json_object_set_new(spec, "arrays", list);
    assert_int_equal(json_dump_file(spec, tmp_path("spec.json"), 0), 0);
    json_decref(spec);
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' '%s'", python && *python ? python : "python3",
             RPX_NPZ_CHECKER, path, tmp_path("spec.json"));
    st = system(cmd);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void rpx_check(const char *path, int compress)
{
    rpx_npz *npz;
    rpx_error err = {0};
    size_t i;
    int k;
    if (rpx_npz_load(path, &npz, &err)) fail_msg("%s", err.message);
    assert_int_equal(rpx_npz_inputs(npz)->count, narrays);
    for (i = 0; i < narrays; i++) {
        const rpx_tensor *t = &rpx_npz_inputs(npz)->tensors[i];
        const rpx_npz_array_info *info = rpx_npz_array_info_at(npz, i);
        assert_string_equal(t->name, arrays[i].name);
        assert_int_equal(t->dtype, arrays[i].dtype);
        assert_int_equal(t->ndim, arrays[i].ndim);
        for (k = 0; k < t->ndim; k++) assert_int_equal(t->shape[k], arrays[i].shape[k]);
        assert_int_equal(t->nbytes, arrays[i].nbytes);
        assert_memory_equal(t->data, arrays[i].data, t->nbytes);
        assert_int_equal(info->compressed, compress);
        assert_int_equal(info->header.major, 1);
        assert_int_equal(info->header.fortran_order, 0);
        assert_int_equal(info->header.data_offset % 64, 0);
    }
    rpx_npz_free(npz);
}

static void test_roundtrip_stored(void **state)
{
    (void)state;
    make_arrays();
    write_all(tmp_path("stored.npz"), 0);
    assert_int_equal(numpy_check(tmp_path("stored.npz"), 0), 0);
    rpx_check(tmp_path("stored.npz"), 0);
    free_arrays();
    clear_dir();
}

static void test_roundtrip_deflated(void **state)
{
    struct stat a, b;
    (void)state;
    make_arrays();
    write_all(tmp_path("deflated.npz"), 1);
    write_all(tmp_path("stored.npz"), 0);
    assert_int_equal(numpy_check(tmp_path("deflated.npz"), 1), 0);
    rpx_check(tmp_path("deflated.npz"), 1);
    /* compression really happened (the bool/int8 arrays are compressible) */
    assert_int_equal(stat(tmp_path("deflated.npz"), &a), 0);
    assert_int_equal(stat(tmp_path("stored.npz"), &b), 0);
    assert_true(a.st_size < b.st_size);
    free_arrays();
    clear_dir();
}

/* The checker can fail: a file whose values differ is caught. */
static void test_checker_catches_a_difference(void **state)
{
    (void)state;
    make_arrays();
    write_all(tmp_path("x.npz"), 0);
    arrays[4].data[0] ^= 1;
    assert_int_equal(numpy_check(tmp_path("x.npz"), 0), 1);
    arrays[4].data[0] ^= 1;
    assert_int_equal(numpy_check(tmp_path("x.npz"), 1), 1); /* wrong compression */
    free_arrays();
    clear_dir();
}

static void test_empty_archive(void **state)
{
    rpx_npz_writer *w;
    rpx_npz *npz;
    rpx_error err = {0};
    struct stat st;
    (void)state;
    narrays = 0;
    assert_int_equal(rpx_npz_writer_open(tmp_path("empty.npz"), 0, &w, &err), 0);
    assert_int_equal(rpx_npz_writer_close(w, &err), 0);
    assert_int_equal(stat(tmp_path("empty.npz"), &st), 0);
    /* numpy's 22-byte record, closed by rpxprof's archive comment */
    assert_int_equal(st.st_size, 22 + strlen(RPX_OUTPUT_NPZ_COMMENT));
    {
        char buf[64] = {0};
        FILE *f = fopen(tmp_path("empty.npz"), "rb");
        assert_non_null(f);
        assert_int_equal(fread(buf, 1, sizeof buf, f), (size_t)st.st_size);
        fclose(f);
        assert_memory_equal(buf, "PK\005\006", 4);
        assert_int_equal((unsigned char)buf[20], strlen(RPX_OUTPUT_NPZ_COMMENT));
        assert_memory_equal(buf + 22, RPX_OUTPUT_NPZ_COMMENT, strlen(RPX_OUTPUT_NPZ_COMMENT));
    }
    assert_int_equal(dir_entries(), 1);
    assert_int_equal(numpy_check(tmp_path("empty.npz"), 0), 0);
    assert_int_equal(rpx_npz_load(tmp_path("empty.npz"), &npz, &err), 0);
    assert_int_equal(rpx_npz_inputs(npz)->count, 0);
    rpx_npz_free(npz);
    clear_dir();
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int file_is(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

/* The old file stays intact until close, then the new one replaces it in a
 * single rename: no temporary file is left either way. */
static void test_atomic_replace(void **state)
{
    static const int64_t shape[] = {4};
    static const float data[] = {1, 2, 3, 4};
    rpx_npz_writer *w;
    rpx_npz *npz;
    rpx_error err = {0};
    const char *p = tmp_path("inputs.npz");
    (void)state;
    write_text(p, "OLD CONTENT");
    assert_int_equal(rpx_npz_writer_open(p, 0, &w, &err), 0);
    assert_int_equal(rpx_npz_writer_add(w, "x", RPX_DTYPE_FLOAT32, 1, shape, data, &err), 0);
    assert_true(file_is(p, "OLD CONTENT"));
    assert_int_equal(dir_entries(), 1);
    assert_int_equal(rpx_npz_writer_close(w, &err), 0);
    assert_false(file_is(p, "OLD CONTENT"));
    assert_int_equal(dir_entries(), 1);
    assert_int_equal(rpx_npz_load(p, &npz, &err), 0);
    assert_memory_equal(rpx_npz_inputs(npz)->tensors[0].data, data, sizeof data);
    rpx_npz_free(npz);

    /* discard: the old file stays, nothing new appears */
    write_text(p, "OLD CONTENT");
    assert_int_equal(rpx_npz_writer_open(p, 1, &w, &err), 0);
    assert_int_equal(rpx_npz_writer_add(w, "x", RPX_DTYPE_FLOAT32, 1, shape, data, &err), 0);
    rpx_npz_writer_discard(w);
    assert_true(file_is(p, "OLD CONTENT"));
    assert_int_equal(dir_entries(), 1);
    clear_dir();

    /* discard of a new file: nothing at all */
    assert_int_equal(rpx_npz_writer_open(p, 0, &w, &err), 0);
    assert_int_equal(rpx_npz_writer_add(w, "x", RPX_DTYPE_FLOAT32, 1, shape, data, &err), 0);
    rpx_npz_writer_discard(w);
    assert_int_equal(dir_entries(), 0);
    rpx_npz_writer_discard(NULL);
}

static void expect_add_refusal(rpx_npz_writer *w, const char *name, rpx_dtype dt, int ndim,
                               const int64_t *shape, const void *data, const char *fmt, ...)
{
    rpx_error err = {0};
    char want[1024], msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(want, sizeof want, "%s: %s", tmp_path("r.npz"), msg);
    assert_int_equal(rpx_npz_writer_add(w, name, dt, ndim, shape, data, &err), RPX_EINVAL);
    assert_int_equal(err.code, RPX_EINVAL);
    assert_string_equal(err.message, want);
}

static void test_writer_refusals(void **state)
{
    static const int64_t shape[] = {2, 2}, neg[] = {2, -1}, huge[] = {INT64_C(1) << 40,
                                                                      INT64_C(1) << 40};
    static const int32_t data[4] = {1, 2, 3, 4};
    int64_t many[RPX_MAX_DIMS + 1];
    char longname[1100];
    rpx_npz_writer *w;
    rpx_error err = {0};
    size_t i;
    (void)state;
    for (i = 0; i <= RPX_MAX_DIMS; i++) many[i] = 1;
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';

    assert_int_equal(rpx_npz_writer_open(tmp_path("r.npz"), 0, &w, &err), 0);
    assert_int_equal(rpx_npz_writer_add(w, "rgb", RPX_DTYPE_INT32, 2, shape, data, &err), 0);
    expect_add_refusal(w, "", RPX_DTYPE_INT32, 2, shape, data,
                       "an array has an empty name; give every array a name");
    expect_add_refusal(w, NULL, RPX_DTYPE_INT32, 2, shape, data,
                       "an array has an empty name; give every array a name");
    expect_add_refusal(w, "rgb", RPX_DTYPE_INT32, 2, shape, data,
                       "array 'rgb' is added twice; give every array a unique name");
    expect_add_refusal(w, "dir/", RPX_DTYPE_INT32, 2, shape, data,
                       "array 'dir/': a name may not end with '/'; remove the slash");
    expect_add_refusal(w, "bad\xff", RPX_DTYPE_INT32, 2, shape, data,
                       "array name is not valid UTF-8; use a UTF-8 name");
    expect_add_refusal(w, longname, RPX_DTYPE_INT32, 2, shape, data,
                       "array name of 1099 bytes is longer than 1024; use a shorter name");
    expect_add_refusal(w, "x", (rpx_dtype)0, 2, shape, data, "array 'x': unknown dtype 0");
    expect_add_refusal(w, "x", RPX_DTYPE_INT32, -1, shape, data,
                       "array 'x': -1 dimensions; an array has 0 to 64");
    expect_add_refusal(w, "x", RPX_DTYPE_INT32, RPX_MAX_DIMS + 1, many, data,
                       "array 'x': 65 dimensions; an array has 0 to 64");
    expect_add_refusal(w, "x", RPX_DTYPE_INT32, 2, NULL, data, "array 'x': no shape given");
    expect_add_refusal(w, "x", RPX_DTYPE_INT32, 2, neg, data,
                       "array 'x': dimension 1 is negative (-1)");
    expect_add_refusal(w, "x", RPX_DTYPE_INT32, 2, huge, data, "array 'x': the shape overflows");
    expect_add_refusal(w, "x", RPX_DTYPE_INT32, 2, shape, NULL, "array 'x': no data given");
    /* an empty array needs no data; a non-ASCII name is fine */
    assert_int_equal(rpx_npz_writer_add(w, "leer", RPX_DTYPE_INT32, 1, (int64_t[]){0}, NULL,
                                        &err), 0);
    assert_int_equal(rpx_npz_writer_add(w, "t\xc3\xa9st", RPX_DTYPE_INT32, 0, NULL, data, &err),
                     0);
    assert_int_equal(rpx_npz_writer_close(w, &err), 0);
    {
        rpx_npz *npz;
        assert_int_equal(rpx_npz_load(tmp_path("r.npz"), &npz, &err), 0);
        assert_int_equal(rpx_npz_inputs(npz)->count, 3);
        assert_string_equal(rpx_npz_inputs(npz)->tensors[2].name, "t\xc3\xa9st");
        assert_int_equal(*(const int32_t *)rpx_npz_inputs(npz)->tensors[2].data, 1);
        rpx_npz_free(npz);
    }
    clear_dir();

    assert_int_equal(rpx_npz_writer_open(NULL, 0, &w, &err), RPX_EINVAL);
    assert_int_equal(rpx_npz_writer_open("x.npz", 0, NULL, &err), RPX_EINVAL);
    assert_int_equal(rpx_npz_writer_add(NULL, "x", RPX_DTYPE_INT32, 2, shape, data, &err),
                     RPX_EINVAL);
    assert_int_equal(rpx_npz_writer_close(NULL, &err), RPX_EINVAL);
}

static void test_close_fails_in_missing_folder(void **state)
{
    static const int64_t shape[] = {2};
    static const int32_t data[2] = {1, 2};
    rpx_npz_writer *w;
    rpx_error err = {0};
    char want[600];
    const char *p = tmp_path("no_such_dir/x.npz");
    int rc;
    (void)state;
    rc = rpx_npz_writer_open(p, 0, &w, &err);
    if (rc == 0) {
        assert_int_equal(rpx_npz_writer_add(w, "x", RPX_DTYPE_INT32, 1, shape, data, &err), 0);
        rc = rpx_npz_writer_close(w, &err);
        assert_int_equal(rc, RPX_EIO);
        snprintf(want, sizeof want, "%s: cannot write the NPZ file (", p);
    } else {
        assert_int_equal(rc, RPX_EIO);
        snprintf(want, sizeof want, "%s: cannot create the NPZ file (", p);
    }
    assert_memory_equal(err.message, want, strlen(want));
    assert_non_null(strstr(err.message, "No such file or directory"));
    assert_int_equal(dir_entries(), 0);
}

static int setup(void **state)
{
    const char *base = getenv("TMPDIR");
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "%s/rpx_npzw_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clear_dir();
    rmdir(tmpdir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_stored),
        cmocka_unit_test(test_roundtrip_deflated),
        cmocka_unit_test(test_checker_catches_a_difference),
        cmocka_unit_test(test_empty_archive),
        cmocka_unit_test(test_atomic_replace),
        cmocka_unit_test(test_writer_refusals),
        cmocka_unit_test(test_close_fails_in_missing_folder),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
