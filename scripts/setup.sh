#!/usr/bin/env bash
# Install the Debian 12 packages rpxprof needs to build, run and test.
# Idempotent; prints nothing when everything is already installed.
#   ./scripts/setup.sh                  what the build, the demo and the tests need
#   ./scripts/setup.sh --with-examples  also OpenCV's DNN module and libtorch, for
#                                       examples/opencv-dnn and examples/libtorch
#   ./scripts/setup.sh --with-bench     also nginx and wrk, for bench/bench_http_load.py
# Every form also puts ONNX Runtime's C library (for `rpxprof run --model FILE.onnx`) in
# ${XDG_CACHE_HOME:-~/.cache}/rpxprof/onnxruntime-1.31.1/ on x86-64 Linux: fetched with
# `npm pack onnxruntime-node@1.31.1` (no Node at run time), its digest checked, only
# libonnxruntime.so.1 extracted, with SHA256SUMS beside it; never in the repository.
set -euo pipefail

packages=(
  build-essential cmake pkg-config          # toolchain
  libzip-dev zlib1g-dev                     # NPZ archives
  libjansson-dev                            # JSON
  nettle-dev                                # SHA-256
  libcmocka-dev                             # unit tests
  clang libclang-rt-14-dev                  # fuzzing (libFuzzer) and sanitizers
  valgrind                                  # memcheck in the test suite
  python3 python3-numpy python3-jsonschema  # test fixtures and checks
  python3-scipy                             # independent check of the statistics (tests/cli/test_compare.py)
  libonnx-dev protobuf-c-compiler libprotobuf-c-dev   # ONNX reading (onnx.proto, protoc-c)
  python3-onnx python3-torch python3-torchvision    # ONNX test models
  chromium                                  # renders the SVG figures in the tests
  python3-dev                               # the Python target (embeds CPython)
  python3-setuptools python3-wheel python3-venv python3-pip python3-pytest  # the Python package: pip install --no-build-isolation ./python, its tests
  python3-pandas                            # rpxprof.to_dataframe, tested with and without it
  libcurl4-openssl-dev                      # the HTTP target
  libhttp-parser-dev                        # the HTTP target's open-loop engine (responses parsed as wrk does)
  python3-h2 openssl                        # an HTTP/2 test server and its TLS certificate (tests/cli/test_http2.py)
  slurm-wlm munge                           # a single-node Slurm cluster in the tests (scripts/slurm-cluster.sh)
  libsqlite3-dev libpq-dev                  # the history's stores (src/history/): SQLite, PostgreSQL by libpq
  postgresql                                # a real PostgreSQL server for the history's tests (/usr/lib/postgresql/15/bin)
  locales tzdata                            # the hostile-environment stage of scripts/test.sh: LC_ALL=de_DE.UTF-8, TZ=Pacific/Kiritimati
)
# npm fetches ONNX Runtime's library (onnxruntime-node), below; Debian's package only where no npm
# is on PATH (NodeSource's nodejs ships its own npm, and conflicts with Debian's)
command -v npm >/dev/null 2>&1 || packages+=(npm)
for arg in "$@"; do
  case "$arg" in
    --with-examples) packages+=(g++ libopencv-dnn-dev libtorch-dev) ;;  # examples/opencv-dnn, libtorch
    --with-bench) packages+=(nginx-light wrk) ;;  # bench/bench_http_load.py: a fast server, a peer load generator
    *) echo "setup: unknown option '$arg' (use --with-examples, --with-bench or nothing)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# a locale whose decimal separator is a comma (the hostile-environment stage of
# scripts/test.sh, tests/unit/test_json.c's locale test): Debian's locale-gen
has_locale() { locale -a 2>/dev/null | grep -qix 'de_DE\.utf-\?8'; }
install_packages() {
[ ${#missing[@]} -eq 0 ] && has_locale && return 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || {
    echo "setup: need root (or sudo) to install: ${missing[*]:-}${missing[*]:+, }the de_DE.UTF-8 locale" >&2
    exit 1
  }
  sudo="sudo"
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! has_locale; then
  echo "setup: generating the de_DE.UTF-8 locale (/etc/locale.gen, locale-gen)" >&2
  if grep -q '^# *de_DE\.UTF-8 UTF-8' /etc/locale.gen; then
    $sudo sed -i 's/^# *\(de_DE\.UTF-8 UTF-8\)/\1/' /etc/locale.gen
  elif ! grep -q '^de_DE\.UTF-8 UTF-8' /etc/locale.gen; then
    echo 'de_DE.UTF-8 UTF-8' | $sudo tee -a /etc/locale.gen >/dev/null
  fi
  $sudo locale-gen >/dev/null
  has_locale || { echo "setup: locale-gen did not make de_DE.UTF-8 (locale -a does not list it)" >&2; exit 1; }
fi
}

# ONNX Runtime 1.31.1's C library from the npm registry's onnxruntime-node package (the
# digests are pinned: the tarball npm packs, and the library inside it).
ort_version=1.31.1
ort_tgz_sha256=d7a3de2b1bba92614abc74af909cc0ba4f4dd5347735418794edeb58cfef2d22
ort_lib_sha256=f19a4da48c4c65e0cdccff82354482f657fa91a3455b66174195b94ca55b0e6f
ort_member=package/bin/napi-v6/linux/x64/libonnxruntime.so.1
ort_dir="${XDG_CACHE_HOME:-$HOME/.cache}/rpxprof/onnxruntime-$ort_version"

fetch_ort() {
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "setup: ONNX Runtime is fetched for x86-64 Linux only (onnxruntime-node's" \
         "libonnxruntime.so.1); on $(uname -s) $(uname -m) set RPXPROF_ORT_LIBRARY to your own" \
         "libonnxruntime.so.1 for --runtime ort" >&2
    return 0
  fi
  local lib="$ort_dir/libonnxruntime.so.1"
  if [ -f "$lib" ] && [ "$(sha256sum "$lib" | cut -d' ' -f1)" = "$ort_lib_sha256" ]; then
    [ -f "$ort_dir/SHA256SUMS" ] || printf '%s  %s\n' "$ort_lib_sha256" libonnxruntime.so.1 >"$ort_dir/SHA256SUMS"
    return 0
  fi
  local tmp
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  echo "setup: fetching ONNX Runtime $ort_version (npm pack onnxruntime-node@$ort_version, 115 MB) into $ort_dir" >&2
  if ! (cd "$tmp" && npm pack --silent "onnxruntime-node@$ort_version" >/dev/null 2>"$tmp/npm.log"); then
    echo "setup: npm pack onnxruntime-node@$ort_version failed; --runtime ort stays unavailable" \
         "until ./scripts/setup.sh is run again with the npm registry reachable:" >&2
    sed 's/^/  npm: /' "$tmp/npm.log" | tail -5 >&2
    return 0
  fi
  local tgz="$tmp/onnxruntime-node-$ort_version.tgz"
  if [ "$(sha256sum "$tgz" | cut -d' ' -f1)" != "$ort_tgz_sha256" ]; then
    echo "setup: onnxruntime-node-$ort_version.tgz has SHA-256 $(sha256sum "$tgz" | cut -d' ' -f1)," \
         "not the pinned $ort_tgz_sha256: refused" >&2
    exit 1
  fi
  tar -xzf "$tgz" -C "$tmp" "$ort_member"
  if [ "$(sha256sum "$tmp/$ort_member" | cut -d' ' -f1)" != "$ort_lib_sha256" ]; then
    echo "setup: $ort_member in the tarball has another SHA-256 than the pinned $ort_lib_sha256: refused" >&2
    exit 1
  fi
  mkdir -p "$ort_dir"
  install -m 0644 "$tmp/$ort_member" "$lib.tmp"
  mv -f "$lib.tmp" "$lib"
  printf '%s  %s\n' "$ort_lib_sha256" libonnxruntime.so.1 >"$ort_dir/SHA256SUMS"
}

install_packages
fetch_ort
