/* card.c — owns the system card's top-level keys (the reference's 13). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "rpxprof/error.h"
#include "rpxprof/system.h"

/* Value of "key<spaces>:<value>" on its own line of a /proc-style text. */
static int field(const char *text, const char *key, char *out, size_t size)
{
    size_t klen = strlen(key);
    const char *p = text;
    while (p && *p) {
        if (strncmp(p, key, klen) == 0) {
            const char *q = p + klen, *end;
            while (*q == ' ' || *q == '\t') q++;
            if (*q == ':') {
                q++;
                while (*q == ' ' || *q == '\t') q++;
                end = strchr(q, '\n');
                if (!end) end = q + strlen(q);
                while (end > q && isspace((unsigned char)end[-1])) end--;
                snprintf(out, size, "%.*s", (int)(end - q), q);
                return 1;
            }
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return 0;
}

static json_t *cpu_name(void)
{
    static char text[1 << 16];
    char name[256];
    if (rpx_sys_read("/proc/cpuinfo", text, sizeof text) <= 0) return json_null();
    if (field(text, "model name", name, sizeof name) && name[0]) return json_string(name);
    return json_null();
}

static json_t *ram_gb(void)
{
    char text[8192], v[64];
    if (rpx_sys_read("/proc/meminfo", text, sizeof text) <= 0) return json_null();
    if (!field(text, "MemTotal", v, sizeof v)) return json_null();
    return json_real((double)strtoll(v, NULL, 10) * 1024.0 / 1073741824.0);
}

/* PRETTY_NAME of os-release and the kernel release: "Debian GNU/Linux 12 (bookworm); Linux 6.1.0" */
static json_t *os_name(void)
{
    char text[4096], pretty[256] = "", out[512];
    const char *p;
    struct utsname u;
    if (rpx_sys_read("/etc/os-release", text, sizeof text) <= 0)
        rpx_sys_read("/usr/lib/os-release", text, sizeof text);
    p = strstr(text, "PRETTY_NAME=");
    if (p && (p == text || p[-1] == '\n')) {
        const char *q = p + strlen("PRETTY_NAME="), *end;
        if (*q == '"') q++;
        end = strpbrk(q, "\"\n");
        if (!end) end = q + strlen(q);
        snprintf(pretty, sizeof pretty, "%.*s", (int)(end - q), q);
    }
    if (uname(&u) != 0) return pretty[0] ? json_string(pretty) : json_null();
    if (pretty[0])
        snprintf(out, sizeof out, "%s; %s %s", pretty, u.sysname, u.release);
    else
        snprintf(out, sizeof out, "%s %s", u.sysname, u.release);
    return json_string(out);
}

/* An integer when the text is one, else the text itself, else null. */
static json_t *batch_size(const char *s)
{
    char *end;
    long long v;
    if (!s) return json_null();
    v = strtoll(s, &end, 10);
    if (*s && !*end && v >= 0) return json_integer(v);
    return json_string(s);
}

json_t *rpx_system_card(const rpx_card_options *opt, rpx_error *err)
{
    json_t *c = json_object();
    int ok = 1;
    (void)err;
    if (!c) return NULL;
#define PUT(k, v)                                              \
    do {                                                       \
        json_t *v_ = (v);                                      \
        if (!v_ || json_object_set_new(c, (k), v_) != 0) ok = 0; \
    } while (0)
    /* GPU facts come from the CUDA and NVML backends; on a CPU run none is used. */
    PUT("gpu_name", json_null());
    PUT("gpu_memory_gb", json_null());
    PUT("gpu_count", json_integer(0));
    PUT("cpu_name", cpu_name());
    PUT("ram_gb", ram_gb());
    PUT("cuda_version", json_null());
    PUT("pytorch_version", json_null());
    PUT("python_version", json_null());
    PUT("precision", opt && opt->precision ? json_string(opt->precision) : json_null());
    PUT("batch_size", batch_size(opt ? opt->batch_size : NULL));
    PUT("input_resolution",
        opt && opt->input_resolution ? json_string(opt->input_resolution) : json_null());
    PUT("os", os_name());
    PUT("driver_version", json_null());
#undef PUT
    if (!ok) {
        json_decref(c);
        return NULL;
    }
    return c;
}
