/* mem.c — owns the card's `memory` section: /proc/meminfo totals, swap,
 * huge pages and the transparent-huge-pages mode. Sizes are MiB (_mb). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/system_internal.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

/* "N kB" of meminfo as MiB. */
static void kb_field(json_t *mem, const char *key, const char *meminfo, const char *field)
{
    char v[64], *end;
    long long kb;
    if (!meminfo) return; /* reasons already given */
    if (!rpx__sys_kv(meminfo, field, v, sizeof v)) {
        rpx__sys_null(mem, key, "/proc/meminfo: no '%s' line", field);
        return;
    }
    errno = 0;
    kb = strtoll(v, &end, 10);
    if (end == v || errno || kb < 0 || (*end && strcmp(end, " kB") != 0)) {
        rpx__sys_null(mem, key, "/proc/meminfo: '%s' is not a size: '%.40s'", field, v);
        return;
    }
    rpx__sys_put(mem, key, json_real((double)kb / 1024.0));
}

/* The bracketed choice of "always [madvise] never". */
static void bracketed(json_t *mem, const char *key, const char *path)
{
    char v[256], why[512];
    const char *a, *b;
    int rc = rpx__sys_line(path, v, sizeof v);
    if (rc != 0) {
        rpx__sys_null(mem, key, "%s", rpx__sys_why(why, sizeof why, path, rc));
        return;
    }
    a = strchr(v, '[');
    b = a ? strchr(a, ']') : NULL;
    if (!a || !b || b == a + 1) {
        rpx__sys_null(mem, key, "%s: no [selected] mode in '%.60s'", path, v);
        return;
    }
    rpx__sys_put(mem, key, json_stringn(a + 1, (size_t)(b - a - 1)));
}

json_t *rpx__sys_memory_section(json_t *warnings)
{
    json_t *mem = json_object();
    long len;
    char *mi = rpx__sys_slurp("/proc/meminfo", &len);
    char v[64], why[512];
    (void)warnings;
    if (!mem) {
        free(mi);
        return NULL;
    }
    if (!mi) {
        static const char *const keys[] = {"total_mb", "available_mb", "swap_total_mb",
                                           "swap_free_mb", "hugepages_total", "hugepage_size_kb"};
        size_t i;
        rpx__sys_why(why, sizeof why, "/proc/meminfo", (int)len);
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++) rpx__sys_null(mem, keys[i], "%s", why);
    }
    kb_field(mem, "total_mb", mi, "MemTotal");
    kb_field(mem, "available_mb", mi, "MemAvailable");
    kb_field(mem, "swap_total_mb", mi, "SwapTotal");
    kb_field(mem, "swap_free_mb", mi, "SwapFree");
    if (mi) {
        if (rpx__sys_kv(mi, "HugePages_Total", v, sizeof v) && atoll(v) >= 0 && v[0])
            rpx__sys_put(mem, "hugepages_total", json_integer(atoll(v)));
        else
            rpx__sys_null(mem, "hugepages_total", "/proc/meminfo: no 'HugePages_Total' line");
        if (rpx__sys_kv(mi, "Hugepagesize", v, sizeof v) && atoll(v) > 0)
            rpx__sys_put(mem, "hugepage_size_kb", json_integer(atoll(v)));
        else
            rpx__sys_null(mem, "hugepage_size_kb", "/proc/meminfo: no 'Hugepagesize' line");
    }
    bracketed(mem, "thp_enabled", THP_DIR "/enabled");
    bracketed(mem, "thp_defrag", THP_DIR "/defrag");
    free(mi);
    rpx__sys_finish(mem, 1);
    return mem;
}
