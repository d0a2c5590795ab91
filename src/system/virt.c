/* virt.c — owns telling what the system runs inside: a hypervisor (cpuid leaf
 * 0x40000000, the cpuinfo `hypervisor` flag, /sys/hypervisor/type, DMI ids)
 * and a container (/.dockerenv, /run/.containerenv, cgroup paths, an overlay
 * root). DMI serial numbers and UUIDs are never read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define RPX_HAVE_CPUID 1
#else
#define RPX_HAVE_CPUID 0
#endif

#include "system/system_internal.h"

/* cpuid 0x40000000 vendor signatures (12 bytes, as the hypervisors publish them). */
static const struct {
    const char *sig, *name;
} signatures[] = {
    {"KVMKVMKVM", "KVM"},         {"Microsoft Hv", "Microsoft Hyper-V"},
    {"VMwareVMware", "VMware"},   {"XenVMMXenVMM", "Xen"},
    {"TCGTCGTCGTCG", "QEMU TCG"}, {" lrpepyh  vr", "Parallels"},
    {"ACRNACRNACRN", "ACRN"},     {"bhyve bhyve ", "bhyve"},
    {"VBoxVBoxVBox", "VirtualBox"}, {"QNXQVMBSQG", "QNX"},
};

/* DMI sys_vendor (and product_name) of virtual platforms. */
static const struct {
    const char *vendor, *product, *name;
} platforms[] = {
    {"QEMU", NULL, "QEMU"},
    {"Amazon EC2", NULL, "Amazon EC2"},
    {"Google", "Google Compute Engine", "Google Compute Engine"},
    {"Microsoft Corporation", "Virtual Machine", "Microsoft Hyper-V"},
    {"VMware, Inc.", NULL, "VMware"},
    {"innotek GmbH", NULL, "VirtualBox"},
    {"Xen", NULL, "Xen"},
    {"Alibaba Cloud", NULL, "Alibaba Cloud"},
    {"OpenStack Foundation", NULL, "OpenStack"},
    {"DigitalOcean", NULL, "DigitalOcean"},
    {"Hetzner", NULL, "Hetzner Cloud"},
    {"Parallels Software International Inc.", NULL, "Parallels"},
};

/* The 12-byte signature, or "" when there is none. Live: cpuid (when the
 * hypervisor bit of leaf 1 is set); snapshot: rpxprof-snapshot/cpuid_hypervisor. */
static void cpuid_signature(char *sig, size_t size, char *src, size_t srcsize)
{
    sig[0] = '\0';
    src[0] = '\0';
    if (rpx__sys_live()) {
#if RPX_HAVE_CPUID
        unsigned a, b, c, d;
        char s[13];
        if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 31) & 1u) {
            __cpuid(0x40000000, a, b, c, d);
            memcpy(s, &b, 4);
            memcpy(s + 4, &c, 4);
            memcpy(s + 8, &d, 4);
            s[12] = '\0';
            snprintf(sig, size, "%s", s);
            snprintf(src, srcsize, "cpuid leaf 0x40000000");
        }
#endif
        return;
    } else {
        char buf[64];
        long n = rpx_sys_read("/rpxprof-snapshot/cpuid_hypervisor", buf, sizeof buf);
        if (n > 0) {
            while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = '\0';
            snprintf(sig, size, "%.12s", buf);
            snprintf(src, srcsize, "cpuid leaf 0x40000000 (snapshot)");
            for (n = 0; sig[n]; n++)
                if ((unsigned char)sig[n] < 0x20 || (unsigned char)sig[n] > 0x7e) {
                    sig[0] = src[0] = '\0'; /* not a signature: ignore it */
                    break;
                }
        }
    }
}

void rpx__sys_virt_fill(json_t *cpu, int hv_flag, int is_x86, json_t *warnings)
{
    char sig[16], sigsrc[64], xen[64] = "", vendor[256] = "", product[256] = "", why[512];
    const char *name = NULL, *platform = NULL;
    char source[512] = "";
    int rc_v, rc_p, dmi_vm = 0;
    size_t i;

    cpuid_signature(sig, sizeof sig, sigsrc, sizeof sigsrc);
    rpx__sys_line("/sys/hypervisor/type", xen, sizeof xen);
    rc_v = rpx__sys_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof vendor);
    rc_p = rpx__sys_line("/sys/class/dmi/id/product_name", product, sizeof product);

    for (i = 0; vendor[0] && i < sizeof platforms / sizeof platforms[0]; i++) {
        size_t pl = strlen(product);
        if (strcmp(vendor, platforms[i].vendor) != 0) continue;
        if (platforms[i].product && strcmp(product, platforms[i].product) != 0) continue;
        /* Bare-metal cloud instances keep the cloud's vendor: "c7g.metal". */
        if (pl > 6 && strcmp(product + pl - 6, ".metal") == 0) continue;
        platform = platforms[i].name;
        dmi_vm = 1;
    }
    if (!dmi_vm && strcmp(product, "KVM") == 0) {
        platform = "KVM";
        dmi_vm = 1;
    }

    if (sig[0]) {
        for (i = 0; i < sizeof signatures / sizeof signatures[0]; i++)
            if (strncmp(sig, signatures[i].sig, 12) == 0) name = signatures[i].name;
        snprintf(source, sizeof source, "%s: '%s'", sigsrc, sig);
        if (!name) name = sig;
    } else if (xen[0]) {
        name = strcmp(xen, "xen") == 0 ? "Xen" : xen;
        snprintf(source, sizeof source, "/sys/hypervisor/type: '%s'", xen);
    } else if (dmi_vm) {
        name = platform;
        snprintf(source, sizeof source, "/sys/class/dmi/id/sys_vendor: '%s'", vendor);
    } else if (hv_flag == 1) {
        snprintf(source, sizeof source, "/proc/cpuinfo: 'hypervisor' flag");
    }

    if (name || hv_flag == 1 || dmi_vm) {
        rpx__sys_put(cpu, "virtualized", json_true());
    } else if (is_x86 && hv_flag == 0) {
        rpx__sys_put(cpu, "virtualized", json_false());
        snprintf(source, sizeof source, "/proc/cpuinfo: no 'hypervisor' flag");
    } else {
        rpx__sys_null(cpu, "virtualized", "no hypervisor CPU flag to read (%s), no cpuid signature, "
                  "no /sys/hypervisor/type, and DMI names no virtual platform",
                  is_x86 ? "no /proc/cpuinfo flags" : "the architecture is unknown or not x86");
    }
    if (name)
        rpx__sys_put(cpu, "hypervisor", rpx__sys_jstr(name));
    else if (json_is_true(json_object_get(cpu, "virtualized")))
        rpx__sys_null(cpu, "hypervisor", "virtualized, but neither cpuid, /sys/hypervisor nor DMI names the hypervisor");
    else if (json_is_false(json_object_get(cpu, "virtualized")))
        rpx__sys_null(cpu, "hypervisor", "not virtualized");
    else
        rpx__sys_null(cpu, "hypervisor", "unknown whether the system is virtualized");
    rpx__sys_put(cpu, "hypervisor_source", source[0] ? rpx__sys_jstr(source) : json_null());

    if (rc_v == 0 && vendor[0])
        rpx__sys_put(cpu, "platform_vendor", rpx__sys_jstr(vendor));
    else
        rpx__sys_null(cpu, "platform_vendor", "%s", rpx__sys_why(why, sizeof why, "/sys/class/dmi/id/sys_vendor", rc_v ? rc_v : -ENODATA));
    if (rc_p == 0 && product[0])
        rpx__sys_put(cpu, "platform_product", rpx__sys_jstr(product));
    else
        rpx__sys_null(cpu, "platform_product", "%s", rpx__sys_why(why, sizeof why, "/sys/class/dmi/id/product_name", rc_p ? rc_p : -ENODATA));

    if (json_is_true(json_object_get(cpu, "virtualized")))
        rpx__sys_warn(warnings, "Running under a hypervisor (%s): other guests can take CPU time "
                  "(steal), so timings may be noisier than on bare metal.", name ? name : "unknown");
}

/* ---- containers ----------------------------------------------------------- */

static const char *runtime_in_cgroup(const char *text)
{
    if (!text) return NULL;
    if (strstr(text, "kubepods")) return "kubernetes";
    if (strstr(text, "libpod")) return "podman";
    if (strstr(text, "docker")) return "docker";
    if (strstr(text, "containerd")) return "containerd";
    if (strstr(text, "/lxc")) return "lxc";
    return NULL;
}

/* The file-system type mounted on "/" (the last such line wins), or "". */
static void root_fstype(const char *mountinfo, char *out, size_t size)
{
    const char *p = mountinfo;
    out[0] = '\0';
    while (p && *p) {
        const char *eol = strchr(p, '\n'), *dash;
        char mnt[8] = "", fstype[64] = "";
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = strndup(p, len);
        if (!line) return;
        /* id parent major:minor root mountpoint ... - fstype source options */
        if (sscanf(line, "%*s %*s %*s %*s %7s", mnt) == 1 && strcmp(mnt, "/") == 0 &&
            (dash = strstr(line, " - ")) != NULL && sscanf(dash + 3, "%63s", fstype) == 1)
            snprintf(out, size, "%s", fstype);
        free(line);
        p = eol ? eol + 1 : NULL;
    }
}

void rpx__sys_container_fill(json_t *os)
{
    json_t *ev = json_array();
    const char *runtime = NULL, *r;
    char *cg1, *cgs, *mi, fstype[64];
    long l1, ls, lm;
    int readable = 0;

    if (rpx__sys_exists("/.dockerenv")) {
        json_array_append_new(ev, json_string("/.dockerenv exists"));
        runtime = "docker";
    }
    if (rpx__sys_exists("/run/.containerenv")) {
        json_array_append_new(ev, json_string("/run/.containerenv exists"));
        if (!runtime) runtime = "podman";
    }
    cg1 = rpx__sys_slurp("/proc/1/cgroup", &l1);
    cgs = rpx__sys_slurp("/proc/self/cgroup", &ls);
    if (cg1 || cgs) readable = 1;
    if ((r = runtime_in_cgroup(cg1)) != NULL) {
        json_array_append_new(ev, json_sprintf("/proc/1/cgroup names %s", r));
        if (!runtime || strcmp(r, "kubernetes") == 0) runtime = r;
    } else if ((r = runtime_in_cgroup(cgs)) != NULL) {
        json_array_append_new(ev, json_sprintf("/proc/self/cgroup names %s", r));
        if (!runtime || strcmp(r, "kubernetes") == 0) runtime = r;
    }
    mi = rpx__sys_slurp("/proc/self/mountinfo", &lm);
    if (mi) {
        readable = 1;
        root_fstype(mi, fstype, sizeof fstype);
        if (strcmp(fstype, "overlay") == 0 || strcmp(fstype, "aufs") == 0)
            json_array_append_new(ev, json_sprintf("the root file system is %s", fstype));
    }
    if (rpx__sys_exists("/proc/vz") && !rpx__sys_exists("/proc/bc")) {
        json_array_append_new(ev, json_string("/proc/vz exists without /proc/bc"));
        if (!runtime) runtime = "openvz";
    }
    free(cg1);
    free(cgs);
    free(mi);

    if (json_array_size(ev) > 0) {
        rpx__sys_put(os, "container", json_true());
        if (runtime)
            rpx__sys_put(os, "container_runtime", json_string(runtime));
        else
            rpx__sys_null(os, "container_runtime", "the evidence does not name the runtime");
    } else if (readable) {
        rpx__sys_put(os, "container", json_false());
        rpx__sys_null(os, "container_runtime", "not in a container");
    } else {
        rpx__sys_null(os, "container", "/proc/1/cgroup, /proc/self/cgroup and /proc/self/mountinfo "
                  "are unreadable, and no container marker file exists");
        rpx__sys_null(os, "container_runtime", "unknown whether this is a container");
    }
    rpx__sys_put(os, "container_evidence", ev);
}
