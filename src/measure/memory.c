/* memory.c — owns the memory profiler: this process's resident-set peaks.
 *
 * Reads VmRSS / VmHWM from the real /proc/self/status (the process measures
 * itself, so no sysroot applies) and resets the high-water mark by writing "5"
 * to /proc/self/clear_refs (Linux >= 4.0). The begin/end pair runs around the
 * timed calls, so it does no allocation: plain open/read/write/close and
 * fixed-size buffers on the stack. */
#include "rpxprof/memory.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpxprof/error.h"

#define RPX__STATUS_PATH "/proc/self/status"
#define RPX__CLEAR_REFS_PATH "/proc/self/clear_refs"

/* Fields found so far while scanning a status file. */
typedef struct rpx__status_scan {
    int64_t rss, hwm;   /* bytes, -1 while not seen */
    int bad;            /* a VmRSS/VmHWM line was present but malformed */
} rpx__status_scan;

/* Parse "   1234 kB" (the text after "VmXXX:") into bytes. */
static int rpx__parse_kb(const char *s, const char *end, int64_t *bytes)
{
    int64_t kb = 0;
    int digits = 0;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    while (s < end && *s >= '0' && *s <= '9') {
        int d = *s - '0';
        if (kb > (INT64_MAX / 1024 - d) / 10) return -1;
        kb = kb * 10 + d;
        digits++;
        s++;
    }
    if (!digits) return -1;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (end - s < 2 || s[0] != 'k' || s[1] != 'B') return -1;
    s += 2;
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    if (s != end) return -1;
    *bytes = kb * 1024;
    return 0;
}

/* One line, without its newline. Only keys at the start of a line count, so a
 * process named "VmHWM: 1 kB" cannot spoof a value. */
static void rpx__scan_line(rpx__status_scan *sc, const char *line, const char *end)
{
    static const char rss_key[] = "VmRSS:", hwm_key[] = "VmHWM:";
    size_t len = (size_t)(end - line);
    int64_t *slot = NULL;
    if (len >= sizeof rss_key - 1 && memcmp(line, rss_key, sizeof rss_key - 1) == 0)
        slot = &sc->rss;
    else if (len >= sizeof hwm_key - 1 && memcmp(line, hwm_key, sizeof hwm_key - 1) == 0)
        slot = &sc->hwm;
    if (!slot) return;
    if (rpx__parse_kb(line + 6, end, slot) != 0) sc->bad = 1;
}

static int rpx__scan_result(const rpx__status_scan *sc, int64_t *rss_bytes, int64_t *hwm_bytes)
{
    if (sc->bad) return RPX_EFORMAT;
    if ((rss_bytes && sc->rss < 0) || (hwm_bytes && sc->hwm < 0)) return RPX_ENOTFOUND;
    if (rss_bytes) *rss_bytes = sc->rss;
    if (hwm_bytes) *hwm_bytes = sc->hwm;
    return 0;
}

int rpx_memory_parse_status(const char *text, int64_t *rss_bytes, int64_t *hwm_bytes)
{
    rpx__status_scan sc = {-1, -1, 0};
    const char *p = text;
    if (!text) return RPX_EINVAL;
    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl : p + strlen(p);
        rpx__scan_line(&sc, p, end);
        if (!nl) break;
        p = nl + 1;
    }
    return rpx__scan_result(&sc, rss_bytes, hwm_bytes);
}

static const char *rpx__errno_text(int e, char *buf, size_t size)
{
    /* GNU strerror_r (we build with _GNU_SOURCE): no allocation. */
    return strerror_r(e, buf, size);
}

/* Stream a status file line by line through a fixed buffer, so that a huge
 * "Groups:" line costs nothing. Lines longer than the buffer are skipped
 * (VmRSS and VmHWM lines are short). */
int rpx_memory_parse_status_fd(int fd, int64_t *rss_bytes, int64_t *hwm_bytes)
{
    char buf[4096];
    size_t have = 0;
    int skipping = 0;
    rpx__status_scan sc = {-1, -1, 0};
    if (fd < 0) return RPX_EINVAL;
    for (;;) {
        ssize_t got = read(fd, buf + have, sizeof buf - have);
        size_t start = 0;
        if (got < 0) {
            if (errno == EINTR) continue;
            return RPX_EIO;
        }
        have += (size_t)got;
        for (size_t i = 0; i < have; i++) {
            if (buf[i] != '\n') continue;
            if (!skipping) rpx__scan_line(&sc, buf + start, buf + i);
            skipping = 0;
            start = i + 1;
        }
        if (got == 0) {
            if (start < have && !skipping) rpx__scan_line(&sc, buf + start, buf + have);
            break;
        }
        if (start == 0 && have == sizeof buf) {
            /* A line longer than the buffer: drop it up to its newline. */
            skipping = 1;
            have = 0;
        } else {
            memmove(buf, buf + start, have - start);
            have -= start;
        }
    }
    return rpx__scan_result(&sc, rss_bytes, hwm_bytes);
}

/* Read the real /proc/self/status; *err_no is the errno of a failed open or
 * read, 0 otherwise. */
static int rpx__read_status(int64_t *rss_bytes, int64_t *hwm_bytes, int *err_no)
{
    int rc, fd = open(RPX__STATUS_PATH, O_RDONLY | O_CLOEXEC);
    *err_no = 0;
    if (fd < 0) {
        *err_no = errno;
        return RPX_EIO;
    }
    rc = rpx_memory_parse_status_fd(fd, rss_bytes, hwm_bytes);
    if (rc == RPX_EIO) *err_no = errno;
    close(fd);
    return rc;
}

int rpx_memory_read_self(int64_t *rss_bytes, int64_t *hwm_bytes, rpx_error *err)
{
    char ebuf[128];
    int e = 0;
    int rc = rpx__read_status(rss_bytes, hwm_bytes, &e);
    if (rc == 0) return 0;
    if (e)
        return rpx_error_set(err, rc, RPX__STATUS_PATH ": %s",
                             rpx__errno_text(e, ebuf, sizeof ebuf));
    if (rc == RPX_EFORMAT)
        return rpx_error_set(err, rc, RPX__STATUS_PATH
                             ": VmRSS/VmHWM line is not '<number> kB'");
    return rpx_error_set(err, rc, RPX__STATUS_PATH
                         ": no VmRSS/VmHWM line (is this a Linux /proc?)");
}

/* Fills reason from a failed status read, without allocating. */
static void rpx__status_reason(char *reason, size_t size, int rc, int e)
{
    char ebuf[128];
    if (e)
        snprintf(reason, size, RPX__STATUS_PATH ": %s", rpx__errno_text(e, ebuf, sizeof ebuf));
    else if (rc == RPX_EFORMAT)
        snprintf(reason, size, RPX__STATUS_PATH ": VmHWM line is not '<number> kB'");
    else
        snprintf(reason, size, RPX__STATUS_PATH ": no VmHWM line (is this a Linux /proc?)");
}

void rpx_memory_peaks_init(rpx_memory_peaks *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->lifetime_peak_bytes = -1;
    p->inference_peak_bytes = -1;
    p->hwm_before_reset = -1;
    p->reset_ok = 0;
    /* Reasons read as they will in a report, should the run stop early. */
    snprintf(p->lifetime_reason, sizeof p->lifetime_reason,
             "not measured: the timed calls did not start");
    snprintf(p->inference_reason, sizeof p->inference_reason,
             "not measured: the timed calls did not start "
             "(rpx_memory_begin_inference was not called)");
}

/* Write "5" to /proc/self/clear_refs; 0 or an errno value. */
static int rpx__reset_hwm(void)
{
    ssize_t w;
    int e = 0;
    int fd = open(RPX__CLEAR_REFS_PATH, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    do {
        w = write(fd, "5", 1);
    } while (w < 0 && errno == EINTR);
    if (w < 0) e = errno;
    else if (w != 1) e = EIO;
    if (close(fd) != 0 && !e && errno != EINTR) e = errno;
    return e;
}

void rpx_memory_begin_inference(rpx_memory_peaks *p)
{
    char ebuf[128];
    int64_t rss = -1, hwm = -1, rss_after = -1, hwm_after = -1;
    int e = 0, rc;
    if (!p) return;
    p->lifetime_peak_bytes = -1;
    p->inference_peak_bytes = -1;
    p->lifetime_reason[0] = '\0';
    p->inference_reason[0] = '\0';
    p->reset_ok = 0;
    p->hwm_before_reset = -1;

    rc = rpx__read_status(&rss, &hwm, &e);
    if (rc != 0) {
        rpx__status_reason(p->lifetime_reason, sizeof p->lifetime_reason, rc, e);
        memcpy(p->inference_reason, p->lifetime_reason, sizeof p->inference_reason);
        return;
    }
    p->hwm_before_reset = hwm;
    snprintf(p->lifetime_reason, sizeof p->lifetime_reason,
             "not measured: the timed calls did not finish "
             "(rpx_memory_end_inference was not called)");

    e = rpx__reset_hwm();
    if (e) {
        snprintf(p->inference_reason, sizeof p->inference_reason,
                 RPX__CLEAR_REFS_PATH ": %s (%s)", rpx__errno_text(e, ebuf, sizeof ebuf),
                 e == EINVAL ? "this kernel cannot reset the peak RSS; it needs Linux 4.0 or later"
                             : "resetting the peak RSS is not allowed here");
        return;
    }
    /* A kernel that accepts the write but ignores "5" (older than 4.0, or an
     * emulated /proc) leaves VmHWM at its old value; after a working reset it
     * is the current RSS. Only decidable when the old peak was above RSS. */
    rc = rpx__read_status(&rss_after, &hwm_after, &e);
    if (rc != 0) {
        rpx__status_reason(p->inference_reason, sizeof p->inference_reason, rc, e);
        return;
    }
    if (hwm > rss && hwm_after == hwm && hwm_after > rss_after) {
        snprintf(p->inference_reason, sizeof p->inference_reason,
                 "writing 5 to " RPX__CLEAR_REFS_PATH " did not reset VmHWM "
                 "(the kernel ignored it; resetting needs Linux 4.0 or later)");
        return;
    }
    p->reset_ok = 1;
}

void rpx_memory_end_inference(rpx_memory_peaks *p)
{
    int64_t hwm = -1;
    int e = 0, rc;
    if (!p) return;
    rc = rpx__read_status(NULL, &hwm, &e);
    if (rc != 0) {
        rpx__status_reason(p->lifetime_reason, sizeof p->lifetime_reason, rc, e);
        memcpy(p->inference_reason, p->lifetime_reason, sizeof p->inference_reason);
        p->lifetime_peak_bytes = -1;
        p->inference_peak_bytes = -1;
        return;
    }
    p->lifetime_peak_bytes = hwm > p->hwm_before_reset ? hwm : p->hwm_before_reset;
    p->lifetime_reason[0] = '\0';
    if (p->reset_ok) {
        p->inference_peak_bytes = hwm;
        p->inference_reason[0] = '\0';
    } else {
        p->inference_peak_bytes = -1;
        if (!p->inference_reason[0])
            snprintf(p->inference_reason, sizeof p->inference_reason,
                     "not measured (rpx_memory_begin_inference was not called)");
    }
}
