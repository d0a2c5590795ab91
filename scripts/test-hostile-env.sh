#!/usr/bin/env bash
# Run a fast subset of the tests (run, report writing, number printing, inputs,
# Python targets and the Python package, isolation, compare, aggregate, the unit
# tests) on an existing build under a hostile environment, the kind a user's or a
# CI machine's shell has:
#
#   OPENBLAS_CORETYPE=Haswell (where the CPU has AVX2) OPENBLAS_L2_SIZE=512 OMP_NUM_THREADS=1
#   LC_ALL=LANG=de_DE.UTF-8        a decimal comma (scripts/setup.sh generates it)
#   TZ=Pacific/Kiritimati          UTC+14: a local date is another day than UTC's
#   TMPDIR=".../tmp with space"    every temporary path has a space in it
#   HOME=".../home"                read-only (mode 0555) and checked empty afterwards
#   PYTHONPATH=".../unrelated python path"   a folder with nothing of ours in it
#   XDG_CACHE_HOME, RPX_CPU_PEAK_CACHE unset: a cache would go under HOME
#
# HOME is read-only twice over: mode 0555 stops a user who is not root, and
# because root ignores mode bits (test.sh often runs as root) the stage also
# fails when anything was created under HOME, naming it. A HOME that does not
# exist would not do: rpxprof's cache writer makes missing parent folders, so
# root would quietly create it.
#
#   scripts/test-hostile-env.sh [BUILD_DIR [CTEST_REGEX]]
#   (default: build, made by scripts/test.sh, and the subset below)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -x "$build/rpxprof" ] || { echo "hostile-env: no $build/rpxprof; build first (scripts/test.sh --quick)" >&2; exit 1; }

tests=${2:-'^(unit\..*|fixtures\.npz|cli\.(run|inputs|validation|samples|python|outputs|compare|aggregate_ci|pipeline_format|system|layers|isolation)|python\.package)(\..*)?$'}

root=$(mktemp -d "${TMPDIR:-/tmp}/rpx-hostile.XXXXXX")
chmod 0755 "$root"  # as /tmp is: tests/cli/test_outputs.py's unprivileged user must reach its folders
trap 'chmod -R u+w "$root" 2>/dev/null; rm -rf "$root"' EXIT
home="$root/home"
mkdir "$home" "$root/tmp with space" "$root/unrelated python path"
echo 'raise ImportError("the unrelated PYTHONPATH folder of scripts/test-hostile-env.sh was imported from")' \
  >"$root/unrelated python path/unrelated_module.py"
chmod 0555 "$home"

if ! LC_ALL=de_DE.UTF-8 /usr/bin/python3 -c \
  'import locale, sys; locale.setlocale(locale.LC_ALL, ""); sys.exit(locale.localeconv()["decimal_point"] != ",")' \
  2>/dev/null; then
  echo "hostile-env: the de_DE.UTF-8 locale is missing or has no decimal comma; run scripts/setup.sh" >&2
  exit 1
fi
[ -e /usr/share/zoneinfo/Pacific/Kiritimati ] ||
  { echo "hostile-env: no /usr/share/zoneinfo/Pacific/Kiritimati; run scripts/setup.sh (tzdata)" >&2; exit 1; }

# Haswell's kernels need AVX2: elsewhere OpenBLAS would die of SIGILL, which tests nothing
blas=(OPENBLAS_L2_SIZE=512)
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then blas+=(OPENBLAS_CORETYPE=Haswell); fi

echo "hostile-env: ${blas[*]} OMP_NUM_THREADS=1 LC_ALL=de_DE.UTF-8 TZ=Pacific/Kiritimati" \
  "TMPDIR='$root/tmp with space' HOME='$home' (0555) PYTHONPATH='$root/unrelated python path'"
set +e
env -u XDG_CACHE_HOME -u RPX_CPU_PEAK_CACHE -u LANGUAGE \
  "${blas[@]}" OMP_NUM_THREADS=1 \
  LC_ALL=de_DE.UTF-8 LANG=de_DE.UTF-8 TZ=Pacific/Kiritimati \
  TMPDIR="$root/tmp with space" HOME="$home" PYTHONPATH="$root/unrelated python path" \
  ctest --test-dir "$build" -R "$tests" --output-on-failure -j"$(nproc)"
rc=$?
set -e

written=$(find "$home" -mindepth 1 | head -20)
if [ -n "$written" ]; then
  echo "hostile-env: tests wrote under HOME, which is read-only here (root ignores mode 0555):" >&2
  echo "$written" >&2
  rc=1
fi
# pytest keeps its last three runs' folders (pytest-of-USER) by design
left=$(find "$root/tmp with space" -mindepth 1 -maxdepth 1 ! -name 'pytest-of-*' | head -20)
if [ -n "$left" ]; then
  echo "hostile-env: left behind in TMPDIR (a test or rpxprof does not clean up):" >&2
  echo "$left" >&2
  rc=1
fi
exit $rc
