#!/usr/bin/env bash
# Set up, build and run the whole test suite: the warnings-as-errors build,
# the ASan+UBSan build, and a bounded fuzzing run. Use --quick for the first
# only.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
jobs=$(nproc)
scripts/setup.sh

echo "== build (-Werror) and test =="
cmake -S . -B build -DRPX_WERROR=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null
ctest --test-dir build --output-on-failure -j"$jobs"
if [ $quick -eq 1 ]; then echo "stages: 1 passed, 0 failed"; exit 0; fi

echo "== ASan+UBSan build and test =="
cmake -S . -B build-asan -DRPX_WERROR=ON -DRPX_SANITIZE=ON -DRPX_CUDA_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"

echo "== fuzzing (bounded) =="
CC=clang cmake -S . -B build-fuzz -DRPX_FUZZ=ON -DRPX_TESTS=OFF -DRPX_CUDA_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fuzz -j"$jobs" >/dev/null
tests/fuzz/run_fuzz.sh build-fuzz "${RPX_FUZZ_SECONDS:-60}"
# every stage above stops the script on failure (set -e): reaching here means all passed
echo "stages: 3 passed, 0 failed"
