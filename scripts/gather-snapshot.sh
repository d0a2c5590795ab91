#!/usr/bin/env bash
# gather-snapshot.sh — capture the /proc, /sys and /etc files the rpxprof
# system card reads, so the card can be rebuilt anywhere from the copy:
#
#   scripts/gather-snapshot.sh OUTDIR
#   RPX_SYSROOT=OUTDIR rpxprof system --json
#
# Only the files the card reads are copied (src/system/*.c), as plain files:
# sysfs symlinks (cpuN/cpufreq -> ../cpufreq/policyN) are read through, never
# copied as links. Nothing identifying is taken: no host name, no DMI serial
# numbers or UUIDs, no environment. Caches are copied for the first allowed CPU
# only (the card reads no other). Beside the copies, OUTDIR/rpxprof-snapshot/
# holds what does not live in files (docs/system.md):
#   affinity          this shell's allowed CPUs, a CPU list ("0-1")
#   uname             sysname=, release=, version=, machine= lines
#   libc              "glibc 2.36" (getconf GNU_LIBC_VERSION)
#   cpuid_hypervisor  the cpuid 0x40000000 signature ("KVMKVMKVM"), taken from
#                     `rpxprof system --json` when an rpxprof binary is found
#                     ($RPXPROF, build/rpxprof, or rpxprof in PATH)
#   info              when and how the snapshot was taken
set -euo pipefail

if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
OUT=$1
mkdir -p "$OUT/rpxprof-snapshot"
OUT=$(cd "$OUT" && pwd)

# grab PATH [FILTER-COMMAND...]: copy one readable regular file (through links).
grab() {
    local src=$1 dst="$OUT$1"
    shift
    [ -f "$src" ] && [ -r "$src" ] || return 0
    mkdir -p "$(dirname "$dst")"
    if [ $# -gt 0 ]; then
        "$@" <"$src" >"$dst" 2>/dev/null || rm -f "$dst"
    else
        cat "$src" >"$dst" 2>/dev/null || rm -f "$dst"
    fi
}
# mark PATH: record that a file or folder exists (an empty file, or a folder).
mark() {
    if [ -d "$1" ]; then mkdir -p "$OUT$1"; : >"$OUT$1/.rpxprof-keep"  # git keeps no empty folder
    elif [ -e "$1" ]; then mkdir -p "$(dirname "$OUT$1")"; : >"$OUT$1"; fi
}
# cpulist "0-3,8" -> "0 1 2 3 8"
expand() {
    local part a b out=""
    IFS=, read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        part=${part//[[:space:]]/}
        [ -n "$part" ] || continue
        a=${part%-*}; b=${part#*-}
        out+=" $(seq "$a" "$b" | tr '\n' ' ')"
    done
    echo $out
}

# ---- /proc and /etc --------------------------------------------------------
grab /proc/cpuinfo
grab /proc/meminfo
grab /proc/loadavg
grab /proc/stat awk '/^cpu /||/^procs_/'
grab /proc/pressure/cpu
grab /proc/self/cgroup
grab /proc/1/cgroup
grab /proc/self/mountinfo awk '$5=="/" || $5 ~ /^\/sys\/fs\/cgroup/'
mark /proc/vz
mark /proc/bc
grab /etc/os-release
[ -f /etc/os-release ] || grab /usr/lib/os-release
mark /.dockerenv
mark /run/.containerenv

# ---- CPUs ------------------------------------------------------------------
C=/sys/devices/system/cpu
for f in online present possible smt/control smt/active intel_pstate/no_turbo \
         intel_pstate/status cpufreq/boost; do
    grab "$C/$f"
done
affinity=$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/$$/status)
echo "$affinity" >"$OUT/rpxprof-snapshot/affinity"
first=$(expand "$affinity" | awk '{print $1}')
for n in $(expand "$(cat $C/online 2>/dev/null || echo 0)"); do
    for f in physical_package_id core_id die_id thread_siblings_list core_cpus_list; do
        grab "$C/cpu$n/topology/$f"
    done
    for f in scaling_governor scaling_driver scaling_cur_freq cpuinfo_max_freq \
             cpuinfo_min_freq base_frequency boost; do
        grab "$C/cpu$n/cpufreq/$f"
    done
done
for d in "$C/cpu$first"/cache/index*; do
    [ -d "$d" ] || continue
    for f in level type size coherency_line_size ways_of_associativity shared_cpu_list; do
        grab "$d/$f"
    done
done

# ---- NUMA, memory, virtualisation ------------------------------------------
N=/sys/devices/system/node
grab $N/online
for n in $(expand "$(cat $N/online 2>/dev/null)"); do
    grab "$N/node$n/cpulist"
    grab "$N/node$n/meminfo"
done
grab /sys/kernel/mm/transparent_hugepage/enabled
grab /sys/kernel/mm/transparent_hugepage/defrag
grab /sys/hypervisor/type
grab /sys/class/dmi/id/sys_vendor       # never product_serial, product_uuid, board_serial
grab /sys/class/dmi/id/product_name

# ---- cgroups: this process's cgroup and its ancestors ----------------------
G=/sys/fs/cgroup
# grab_up MOUNT PATH FILE...: FILE at MOUNT/PATH and every ancestor up to MOUNT.
grab_up() {
    local mount=$1 path=$2 f dir
    shift 2
    dir="$mount${path%/}"
    [ -d "$dir" ] || dir=$mount
    while :; do
        mark "$dir"
        for f in "$@"; do grab "$dir/$f"; done
        [ "$dir" = "$mount" ] && break
        dir=${dir%/*}
        case $dir in "$mount"*) ;; *) break ;; esac
    done
}
if [ -f $G/cgroup.controllers ]; then
    grab $G/cgroup.controllers
    path=$(awk -F: '$1=="0" && $2=="" {print $3}' /proc/self/cgroup)
    grab_up $G "${path:-/}" cpu.max memory.max cpuset.cpus.effective
else
    for ctl in cpu cpu,cpuacct memory cpuset; do mark "$G/$ctl"; done
    cpu_mount=$G/cpu; [ -d "$cpu_mount" ] || cpu_mount="$G/cpu,cpuacct"
    p() { awk -F: -v c="$1" '{n=split($2,a,","); for(i=1;i<=n;i++) if(a[i]==c) print $3}' /proc/self/cgroup | head -1; }
    [ -d "$cpu_mount" ] && grab_up "$cpu_mount" "$(p cpu)" cpu.cfs_quota_us cpu.cfs_period_us
    [ -d $G/memory ] && grab_up $G/memory "$(p memory)" memory.limit_in_bytes
    [ -d $G/cpuset ] && grab_up $G/cpuset "$(p cpuset)" cpuset.effective_cpus
fi

# ---- what is not in files ----------------------------------------------------
printf 'sysname=%s\nrelease=%s\nversion=%s\nmachine=%s\n' \
    "$(uname -s)" "$(uname -r)" "$(uname -v)" "$(uname -m)" >"$OUT/rpxprof-snapshot/uname"
getconf GNU_LIBC_VERSION >"$OUT/rpxprof-snapshot/libc" 2>/dev/null || rm -f "$OUT/rpxprof-snapshot/libc"
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${RPXPROF:-}
[ -n "$bin" ] || { [ -x "$here/build/rpxprof" ] && bin=$here/build/rpxprof; } || true
[ -n "$bin" ] || bin=$(command -v rpxprof || true)
if [ -n "$bin" ] && [ -x "$bin" ]; then
    sig=$(env -u RPX_SYSROOT "$bin" system --json 2>/dev/null |
          sed -n "s/.*\"hypervisor_source\": \"cpuid leaf 0x40000000: '\(.*\)'\",*$/\1/p")
    [ -z "$sig" ] || printf '%s\n' "$sig" >"$OUT/rpxprof-snapshot/cpuid_hypervisor"
fi
printf 'captured %s by scripts/gather-snapshot.sh (rpxprof %s)\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${bin:+$("$bin" --version 2>/dev/null | awk '{print $2}')}" \
    >"$OUT/rpxprof-snapshot/info"
echo "$OUT"
