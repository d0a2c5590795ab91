/* test_memory.c — the memory profiler: parsing /proc/PID/status text, and
 * truth tests on this very process (allocate and touch a known amount, check
 * the peaks the profiler reports). The RSS truth tests skip under ASan, whose
 * quarantine and shadow memory distort RSS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "rpxprof/memory.h"

#define MIB ((int64_t)1 << 20)

/* ---- counting allocator: proves begin/end do not allocate --------------- */
#include "count_allocs.h"

/* ---- helpers ------------------------------------------------------------ */

static int sanitized(void)
{
    const char *s = getenv("RPX_SANITIZED");
    return s && strcmp(s, "1") == 0;
}

/* malloc + memset + free `bytes`; the barrier keeps the compiler from
 * dropping the writes or the allocation. */
static void touch_and_free(size_t bytes)
{
    unsigned char *p = malloc(bytes);
    assert_non_null(p);
    memset(p, 0x5a, bytes);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
}

static int64_t rss_now(void)
{
    int64_t rss = -1, hwm = -1;
    rpx_error err = {0};
    assert_int_equal(rpx_memory_read_self(&rss, &hwm, &err), 0);
    return rss;
}

/* Skip, saying why, when the kernel refused the peak reset (a sandbox that
 * denies /proc/self/clear_refs, or a kernel older than 4.0). A reset that was
 * accepted but had no effect is a failure, not a skip. */
static void skip_if_reset_refused(const rpx_memory_peaks *p)
{
    if (p->reset_ok) return;
    if (strncmp(p->inference_reason, "/proc/self/clear_refs: ", 23) != 0)
        fail_msg("peak reset failed: %s", p->inference_reason);
    print_message("skipped: the peak reset is refused here, inference peak not checked: %s\n",
                  p->inference_reason);
    skip();
}

/* Since Linux 6.2 the RSS counters are per CPU and VmHWM is raised from their
 * approximate total, which may lag by a batch of pages per CPU the thread ran
 * on (measured here: 0.1-0.2 MiB short of the touched size). */
#define SLACK (4 * MIB)

/* ---- parsing ---------------------------------------------------------------- */

/* Captured from a real process (Linux 6.18, x86_64); VmHWM edited above VmRSS. */
static const char real_status[] =
    "Name:\tcat\n"
    "Umask:\t0022\n"
    "State:\tR (running)\n"
    "Tgid:\t3230\n"
    "Ngid:\t0\n"
    "Pid:\t3230\n"
    "PPid:\t3227\n"
    "TracerPid:\t0\n"
    "Uid:\t0\t0\t0\t0\n"
    "Gid:\t0\t0\t0\t0\n"
    "FDSize:\t256\n"
    "Groups:\t \n"
    "NStgid:\t3230\n"
    "NSpid:\t3230\n"
    "NSpgid:\t3227\n"
    "NSsid:\t2485\n"
    "Kthread:\t0\n"
    "VmPeak:\t    3060 kB\n"
    "VmSize:\t    3060 kB\n"
    "VmLck:\t       0 kB\n"
    "VmPin:\t       0 kB\n"
    "VmHWM:\t    2048 kB\n"
    "VmRSS:\t    1608 kB\n"
    "RssAnon:\t     108 kB\n"
    "RssFile:\t    1500 kB\n"
    "RssShmem:\t       0 kB\n"
    "VmData:\t     360 kB\n"
    "VmStk:\t     132 kB\n"
    "VmExe:\t      20 kB\n"
    "VmLib:\t    1528 kB\n"
    "VmPTE:\t      44 kB\n"
    "VmSwap:\t       0 kB\n"
    "HugetlbPages:\t       0 kB\n"
    "CoreDumping:\t0\n"
    "THP_enabled:\t1\n"
    "Threads:\t1\n"
    "SigQ:\t0/96363\n"
    "Cpus_allowed:\t3\n"
    "Cpus_allowed_list:\t0-1\n"
    "voluntary_ctxt_switches:\t1\n"
    "nonvoluntary_ctxt_switches:\t0\n";

/* A kernel thread (kthreadd on Linux 5.15): no Vm* lines at all. */
static const char kthread_status[] =
    "Name:\tkthreadd\n"
    "Umask:\t0000\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t2\n"
    "Ngid:\t0\n"
    "Pid:\t2\n"
    "PPid:\t0\n"
    "TracerPid:\t0\n"
    "Uid:\t0\t0\t0\t0\n"
    "Gid:\t0\t0\t0\t0\n"
    "FDSize:\t64\n"
    "Groups:\t \n"
    "Threads:\t1\n"
    "SigQ:\t0/63474\n";

static void test_parse_real_status(void **state)
{
    (void)state;
    int64_t rss = 0, hwm = 0;
    assert_int_equal(rpx_memory_parse_status(real_status, &rss, &hwm), 0);
    assert_int_equal(rss, 1608 * 1024);
    assert_int_equal(hwm, 2048 * 1024);
    /* Either output may be left out. */
    hwm = 0;
    assert_int_equal(rpx_memory_parse_status(real_status, NULL, &hwm), 0);
    assert_int_equal(hwm, 2048 * 1024);
    /* Large values (a 1.5 TiB process) do not overflow. */
    assert_int_equal(rpx_memory_parse_status("VmHWM:\t1610612736 kB\nVmRSS:\t1 kB", &rss, &hwm), 0);
    assert_int_equal(hwm, (int64_t)1610612736 * 1024);
    assert_int_equal(rss, 1024); /* last line without a newline */
}

static void test_parse_missing_or_malformed(void **state)
{
    (void)state;
    int64_t rss = 77, hwm = 77;
    assert_int_equal(rpx_memory_parse_status(kthread_status, &rss, &hwm), RPX_ENOTFOUND);
    assert_int_equal(rpx_memory_parse_status("", &rss, &hwm), RPX_ENOTFOUND);
    assert_int_equal(rpx_memory_parse_status("VmRSS:\t 10 kB\n", &rss, &hwm), RPX_ENOTFOUND);
    assert_int_equal(rpx_memory_parse_status("VmHWM:\t 10 kB\n", &rss, &hwm), RPX_ENOTFOUND);
    /* ... but a missing field that was not asked for is fine. */
    assert_int_equal(rpx_memory_parse_status("VmHWM:\t 10 kB\n", NULL, &hwm), 0);
    assert_int_equal(hwm, 10240);
    rss = hwm = 77;
    assert_int_equal(rpx_memory_parse_status("VmHWM:\t abc kB\nVmRSS:\t 1 kB\n", &rss, &hwm),
                     RPX_EFORMAT);
    assert_int_equal(rpx_memory_parse_status("VmHWM:\t 12 MB\nVmRSS:\t 1 kB\n", &rss, &hwm),
                     RPX_EFORMAT);
    assert_int_equal(rpx_memory_parse_status("VmHWM:\t 12\nVmRSS:\t 1 kB\n", &rss, &hwm),
                     RPX_EFORMAT);
    assert_int_equal(rpx_memory_parse_status("VmHWM:\t 12 kB x\nVmRSS:\t 1 kB\n", &rss, &hwm),
                     RPX_EFORMAT);
    assert_int_equal(
        rpx_memory_parse_status("VmHWM:\t 99999999999999999999 kB\nVmRSS:\t 1 kB\n", &rss, &hwm),
        RPX_EFORMAT);
    assert_int_equal(rpx_memory_parse_status("VmHWM:\t -5 kB\nVmRSS:\t 1 kB\n", &rss, &hwm),
                     RPX_EFORMAT);
    /* Outputs untouched on failure. */
    assert_int_equal(rss, 77);
    assert_int_equal(hwm, 77);
    assert_int_equal(rpx_memory_parse_status(NULL, &rss, &hwm), RPX_EINVAL);
}

static void test_parse_keys_only_at_line_start(void **state)
{
    (void)state;
    /* A process may name itself anything, including a status line. */
    static const char spoof[] = "Name:\tVmHWM: 99 kB\n"
                                "XVmRSS:\t5 kB\n"
                                "VmHWM:\t    4 kB\n"
                                "VmRSS:\t    3 kB\n";
    int64_t rss = 0, hwm = 0;
    assert_int_equal(rpx_memory_parse_status(spoof, &rss, &hwm), 0);
    assert_int_equal(hwm, 4096);
    assert_int_equal(rss, 3072);
}

static int text_fd(const char *text, size_t len)
{
    char path[] = "/tmp/rpx_memory_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, text + off, len - off);
        assert_true(w > 0);
        off += (size_t)w;
    }
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    return fd;
}

static void test_parse_fd_long_lines(void **state)
{
    (void)state;
    /* A 200 KB Groups line (65536 supplementary groups) before the fields, and
     * lines that straddle the reader's chunk boundaries. */
    size_t groups = 200000, cap = groups + 4096;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t len = 0;
    len += (size_t)sprintf(text + len, "Name:\tbig\nGroups:\t");
    for (size_t i = 0; i < groups / 6; i++) len += (size_t)sprintf(text + len, "%05zu ", i % 99999);
    /* a fake key inside the long line must not count */
    len += (size_t)sprintf(text + len, " VmHWM:\t 1 kB\n");
    len += (size_t)sprintf(text + len, "VmHWM:\t  123456 kB\nVmRSS:\t  654321 kB\nThreads:\t9\n");
    int64_t rss = 0, hwm = 0;
    assert_int_equal(rpx_memory_parse_status(text, &rss, &hwm), 0);
    assert_int_equal(hwm, (int64_t)123456 * 1024);
    assert_int_equal(rss, (int64_t)654321 * 1024);

    int fd = text_fd(text, len);
    rss = hwm = 0;
    assert_int_equal(rpx_memory_parse_status_fd(fd, &rss, &hwm), 0);
    assert_int_equal(hwm, (int64_t)123456 * 1024);
    assert_int_equal(rss, (int64_t)654321 * 1024);
    close(fd);

    /* Shift the fields across every offset of a 4 KiB chunk boundary. */
    for (size_t pad = 4000; pad < 4200; pad += 7) {
        len = 0;
        len += (size_t)sprintf(text + len, "Groups:\t");
        memset(text + len, '1', pad);
        len += pad;
        len += (size_t)sprintf(text + len, "\nVmHWM:\t  %zu kB\nVmRSS:\t  %zu kB", pad, pad + 1);
        fd = text_fd(text, len);
        assert_int_equal(rpx_memory_parse_status_fd(fd, &rss, &hwm), 0);
        assert_int_equal(hwm, (int64_t)pad * 1024);
        assert_int_equal(rss, (int64_t)(pad + 1) * 1024);
        close(fd);
    }

    /* A key at the start of a 4 KiB chunk, but in the middle of a long line
     * that the reader skips: it must not count. The real VmHWM comes first,
     * then a 4096-byte line, then a long line that ends in a fake key placed
     * exactly on a chunk boundary (regular-file reads fill whole chunks). */
    len = 0;
    len += (size_t)sprintf(text + len, "VmHWM:\t  123456 kB\nName:\t");
    while (len < 4095) text[len++] = 'n';
    text[len++] = '\n';
    len += (size_t)sprintf(text + len, "Groups:\t");
    while (len < 3 * 4096) text[len++] = '1';
    len += (size_t)sprintf(text + len, "VmHWM:\t    1 kB\nVmRSS:\t  7 kB\n");
    fd = text_fd(text, len);
    assert_int_equal(rpx_memory_parse_status_fd(fd, &rss, &hwm), 0);
    assert_int_equal(hwm, (int64_t)123456 * 1024);
    assert_int_equal(rss, 7 * 1024);
    close(fd);
    free(text);

    fd = text_fd(kthread_status, sizeof kthread_status - 1);
    assert_int_equal(rpx_memory_parse_status_fd(fd, &rss, &hwm), RPX_ENOTFOUND);
    close(fd);
    assert_int_equal(rpx_memory_parse_status_fd(-1, &rss, &hwm), RPX_EINVAL);
}

/* ---- this process ------------------------------------------------------------ */

static void test_read_self(void **state)
{
    (void)state;
    int64_t rss = -1, hwm = -1;
    rpx_error err = {0};
    assert_int_equal(rpx_memory_read_self(&rss, &hwm, &err), 0);
    assert_true(rss > 0);
    assert_true(hwm >= rss);
    assert_int_equal(rss % 1024, 0);
}

static void test_init_and_end_without_begin(void **state)
{
    (void)state;
    rpx_memory_peaks p;
    rpx_memory_peaks_init(&p);
    assert_int_equal(p.lifetime_peak_bytes, -1);
    assert_int_equal(p.inference_peak_bytes, -1);
    assert_true(p.lifetime_reason[0] != '\0');
    assert_true(p.inference_reason[0] != '\0');
    rpx_memory_end_inference(&p);
    assert_true(p.lifetime_peak_bytes > 0);
    assert_int_equal(p.inference_peak_bytes, -1);
    assert_non_null(strstr(p.inference_reason, "begin"));
}

static void test_begin_end_do_not_allocate(void **state)
{
    (void)state;
#if RPX_COUNT_ALLOCS
    rpx_memory_peaks p;
    rpx_memory_peaks_init(&p);
    /* The counter itself works. */
    n_allocs = 0;
    count_allocs = 1;
    free(malloc(16));
    count_allocs = 0;
    assert_int_equal(n_allocs, 2);

    n_allocs = 0;
    count_allocs = 1;
    rpx_memory_begin_inference(&p);
    rpx_memory_end_inference(&p);
    count_allocs = 0;
    if (n_allocs != 0) fail_msg("begin/end made %ld malloc/free calls", n_allocs);
    assert_true(p.lifetime_peak_bytes > 0);
#else
    skip();
#endif
}

static void test_inference_peak_truth(void **state)
{
    (void)state;
    if (sanitized()) {
        print_message("skipped: RSS is distorted under AddressSanitizer\n");
        skip();
    }
    const int64_t big = 256 * MIB;
    rpx_memory_peaks p;
    rpx_memory_peaks_init(&p);
    rpx_memory_begin_inference(&p);
    int64_t rss0 = rss_now();
    touch_and_free((size_t)big);
    rpx_memory_end_inference(&p);

    assert_true(p.lifetime_peak_bytes >= big);
    if (!p.reset_ok) {
        assert_int_equal(p.inference_peak_bytes, -1);
        assert_true(p.inference_reason[0] != '\0');
    }
    skip_if_reset_refused(&p);
    int64_t delta = p.inference_peak_bytes - rss0;
    print_message("rss at begin %lld MiB, inference peak %lld MiB (delta %.1f MiB), lifetime "
                  "%lld MiB\n",
                  (long long)(rss0 / MIB), (long long)(p.inference_peak_bytes / MIB),
                  (double)delta / (double)MIB, (long long)(p.lifetime_peak_bytes / MIB));
    assert_true(p.inference_peak_bytes >= big);
    assert_true(delta >= big - SLACK);
    assert_true(delta <= big + big * 15 / 100);
    assert_true(p.lifetime_peak_bytes >= p.inference_peak_bytes);
    assert_int_equal(p.inference_reason[0], '\0');
    assert_int_equal(p.lifetime_reason[0], '\0');
}

static void test_reset_excludes_earlier_peak(void **state)
{
    (void)state;
    if (sanitized()) {
        print_message("skipped: RSS is distorted under AddressSanitizer\n");
        skip();
    }
    const int64_t before = 640 * MIB, during = 64 * MIB;
    int64_t rss_pre = rss_now();
    touch_and_free((size_t)before); /* a peak before the measured section */

    rpx_memory_peaks p;
    rpx_memory_peaks_init(&p);
    rpx_memory_begin_inference(&p);
    int64_t rss0 = rss_now();
    touch_and_free((size_t)during);
    rpx_memory_end_inference(&p);

    /* The lifetime peak remembers the earlier allocation either way. */
    assert_true(p.lifetime_peak_bytes - rss_pre >= before - SLACK);
    assert_true(p.hwm_before_reset - rss_pre >= before - SLACK);
    skip_if_reset_refused(&p);
    int64_t delta = p.inference_peak_bytes - rss0;
    print_message("earlier peak +%lld MiB; inference peak %lld MiB (delta %.1f MiB), lifetime "
                  "%lld MiB\n",
                  (long long)(before / MIB), (long long)(p.inference_peak_bytes / MIB),
                  (double)delta / (double)MIB, (long long)(p.lifetime_peak_bytes / MIB));
    assert_true(delta >= during - SLACK);
    assert_true(delta <= during + during * 15 / 100 + SLACK);
    assert_true(p.inference_peak_bytes < rss_pre + before / 2);
    assert_true(p.lifetime_peak_bytes >= p.inference_peak_bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_real_status),
        cmocka_unit_test(test_parse_missing_or_malformed),
        cmocka_unit_test(test_parse_keys_only_at_line_start),
        cmocka_unit_test(test_parse_fd_long_lines),
        cmocka_unit_test(test_read_self),
        cmocka_unit_test(test_init_and_end_without_begin),
        cmocka_unit_test(test_begin_end_do_not_allocate),
        cmocka_unit_test(test_inference_peak_truth),
        cmocka_unit_test(test_reset_excludes_earlier_peak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
