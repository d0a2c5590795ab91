/* test_files.h — reading a whole fixture file in a cmocka test (include it
 * after <cmocka.h>). The buffer has one spare byte; free() it. */
#ifndef RPX_TEST_FILES_H
#define RPX_TEST_FILES_H

#include <stdio.h>
#include <stdlib.h>

static inline unsigned char *rpx_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long n;
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

#endif
