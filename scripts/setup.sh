#!/usr/bin/env bash
# Install the Debian 12 packages rpxprof needs to build, run and test.
# Idempotent; prints nothing when everything is already installed.
#   ./scripts/setup.sh                  what the build, the demo and the tests need
#   ./scripts/setup.sh --with-examples  also OpenCV's DNN module and libtorch, for
#                                       examples/opencv-dnn and examples/libtorch
#   ./scripts/setup.sh --with-bench     also nginx and wrk, for bench/bench_http_load.py
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
[ ${#missing[@]} -eq 0 ] && has_locale && exit 0

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
