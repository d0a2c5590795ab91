/* os.c — owns the card's `operating_system` section: the kernel (uname), the
 * distribution (os-release), the C library and container detection (virt.c).
 * Live, uname(2) and gnu_get_libc_version() are asked; on a snapshot the
 * gather script's rpxprof-snapshot/uname ("sysname=...", "release=...",
 * "version=...", "machine=..." lines) and rpxprof-snapshot/libc ("glibc 2.36")
 * stand in for them. The host name is never recorded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "system/system_internal.h"

int rpx__sys_uname_get(rpx__sys_uname *u, char *why, size_t whysize)
{
    memset(u, 0, sizeof *u);
    if (rpx__sys_live()) {
        struct utsname s;
        if (uname(&s) != 0) {
            snprintf(why, whysize, "uname: %s", strerror(errno));
            return -1;
        }
        snprintf(u->sysname, sizeof u->sysname, "%s", s.sysname);
        snprintf(u->release, sizeof u->release, "%s", s.release);
        snprintf(u->version, sizeof u->version, "%s", s.version);
        snprintf(u->machine, sizeof u->machine, "%s", s.machine);
        return 0;
    } else {
        char text[1024];
        long n = rpx_sys_read("/rpxprof-snapshot/uname", text, sizeof text);
        if (n < 0) {
            rpx__sys_why(why, whysize, "/rpxprof-snapshot/uname", (int)n);
            return -1;
        }
        /* key=value lines; rpx__sys_kv wants "key: value", so scan by hand. */
        {
            const char *p = text;
            while (p && *p) {
                const char *eol = strchr(p, '\n'), *eq = strchr(p, '=');
                int len = (int)(eol ? eol - p : (long)strlen(p));
                if (eq && (!eol || eq < eol)) {
                    int kl = (int)(eq - p), vl = len - kl - 1;
                    if (kl == 7 && strncmp(p, "sysname", 7) == 0)
                        snprintf(u->sysname, sizeof u->sysname, "%.*s", vl, eq + 1);
                    else if (kl == 7 && strncmp(p, "release", 7) == 0)
                        snprintf(u->release, sizeof u->release, "%.*s", vl, eq + 1);
                    else if (kl == 7 && strncmp(p, "version", 7) == 0)
                        snprintf(u->version, sizeof u->version, "%.*s", vl, eq + 1);
                    else if (kl == 7 && strncmp(p, "machine", 7) == 0)
                        snprintf(u->machine, sizeof u->machine, "%.*s", vl, eq + 1);
                }
                p = eol ? eol + 1 : NULL;
            }
        }
        if (!u->sysname[0] || !u->release[0] || !u->machine[0]) {
            snprintf(why, whysize, "/rpxprof-snapshot/uname: no sysname=, release= or machine= line");
            return -1;
        }
        return 0;
    }
}

/* VALUE of KEY=VALUE or KEY="VALUE" in os-release text. */
static int os_release_value(const char *text, const char *key, char *out, size_t size)
{
    size_t kl = strlen(key);
    const char *p = text;
    while (p && *p) {
        if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
            const char *q = p + kl + 1, *end;
            char quote = (*q == '"' || *q == '\'') ? *q++ : '\0';
            end = quote ? strchr(q, quote) : NULL;
            if (!end) end = q + strcspn(q, "\n");
            snprintf(out, size, "%.*s", (int)(end - q), q);
            return 1;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return 0;
}

static void distribution(json_t *os)
{
    char text[8192], v[256], why[512];
    const char *src = "/etc/os-release";
    long n = rpx_sys_read(src, text, sizeof text);
    if (n < 0) {
        src = "/usr/lib/os-release";
        n = rpx_sys_read(src, text, sizeof text);
    }
    if (n < 0) {
        rpx__sys_why(why, sizeof why, "/etc/os-release and /usr/lib/os-release", (int)n);
        rpx__sys_null(os, "distribution", "%s", why);
        rpx__sys_null(os, "distribution_id", "%s", why);
        rpx__sys_null(os, "distribution_version", "%s", why);
        return;
    }
    if (os_release_value(text, "PRETTY_NAME", v, sizeof v) && v[0])
        rpx__sys_put(os, "distribution", rpx__sys_jstr(v));
    else if (os_release_value(text, "NAME", v, sizeof v) && v[0])
        rpx__sys_put(os, "distribution", rpx__sys_jstr(v));
    else
        rpx__sys_null(os, "distribution", "%s: no PRETTY_NAME or NAME", src);
    if (os_release_value(text, "ID", v, sizeof v) && v[0])
        rpx__sys_put(os, "distribution_id", rpx__sys_jstr(v));
    else
        rpx__sys_null(os, "distribution_id", "%s: no ID", src);
    if (os_release_value(text, "VERSION_ID", v, sizeof v) && v[0])
        rpx__sys_put(os, "distribution_version", rpx__sys_jstr(v));
    else
        rpx__sys_null(os, "distribution_version", "%s: no VERSION_ID", src);
}

static void libc(json_t *os)
{
    char v[128];
    int rc;
    if (rpx__sys_live()) {
#ifdef __GLIBC__
        rpx__sys_put(os, "libc", json_string("glibc"));
        rpx__sys_put(os, "libc_version", rpx__sys_jstr(gnu_get_libc_version()));
#else
        rpx__sys_null(os, "libc", "not glibc, and this C library does not report its name");
        rpx__sys_null(os, "libc_version", "not glibc, and this C library does not report its version");
#endif
        return;
    }
    if ((rc = rpx__sys_snapshot_line("libc", v, sizeof v)) == 0 && strchr(v, ' ')) {
        char *sp = strchr(v, ' ');
        *sp = '\0';
        rpx__sys_put(os, "libc", rpx__sys_jstr(v));
        rpx__sys_put(os, "libc_version", rpx__sys_jstr(sp + 1));
    } else {
        char why[512];
        if (rc == 0) snprintf(why, sizeof why, "/rpxprof-snapshot/libc: not 'NAME VERSION': '%.40s'", v);
        else rpx__sys_why(why, sizeof why, "/rpxprof-snapshot/libc", rc);
        rpx__sys_null(os, "libc", "%s", why);
        rpx__sys_null(os, "libc_version", "%s", why);
    }
}

json_t *rpx__sys_os_section(json_t *warnings)
{
    json_t *os = json_object();
    rpx__sys_uname u;
    char why[512];
    (void)warnings;
    if (!os) return NULL;
    if (rpx__sys_uname_get(&u, why, sizeof why) == 0) {
        rpx__sys_put(os, "kernel", rpx__sys_jstr(u.sysname));
        rpx__sys_put(os, "kernel_release", rpx__sys_jstr(u.release));
        rpx__sys_put(os, "kernel_version", rpx__sys_jstr(u.version));
    } else {
        rpx__sys_null(os, "kernel", "%s", why);
        rpx__sys_null(os, "kernel_release", "%s", why);
        rpx__sys_null(os, "kernel_version", "%s", why);
    }
    distribution(os);
    libc(os);
    rpx__sys_container_fill(os);
    rpx__sys_finish(os, 1);
    return os;
}
