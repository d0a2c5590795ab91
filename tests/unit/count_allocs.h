/* count_allocs.h — a counting allocator for tests that prove a code path
 * does not allocate: include it in exactly one test file of an executable.
 * It interposes malloc & co. for the whole process (glibc's own internal
 * calls included) and forwards to glibc. Under ASan, which owns malloc, it is
 * left out and RPX_COUNT_ALLOCS is 0 (tests then skip). Set count_allocs to 1
 * around the code under test and read n_allocs. */
#ifndef RPX_TEST_COUNT_ALLOCS_H
#define RPX_TEST_COUNT_ALLOCS_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define RPX_COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RPX_COUNT_ALLOCS 0
#endif
#endif
#ifndef RPX_COUNT_ALLOCS
#define RPX_COUNT_ALLOCS 1
#endif

#if RPX_COUNT_ALLOCS
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static volatile int count_allocs;
static volatile long n_allocs;

void *malloc(size_t n)
{
    if (count_allocs) n_allocs++;
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t m)
{
    if (count_allocs) n_allocs++;
    return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n)
{
    if (count_allocs) n_allocs++;
    return __libc_realloc(p, n);
}
void free(void *p)
{
    if (count_allocs && p) n_allocs++;
    __libc_free(p);
}
#endif

#endif
