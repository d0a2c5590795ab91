#!/usr/bin/env bash
# Set up, build and run the whole test suite: the warnings-as-errors build,
# a subset of its tests again under a hostile environment, the ASan+UBSan
# build, and a bounded fuzzing run. Use --quick for the first two only.
#
# Every stage runs even when an earlier one failed (a stage that needs an
# earlier stage's build is skipped when that build failed, and says so); the
# script ends with a summary of the stages and the line
# 'stages: N passed, M failed', and exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
jobs=$(nproc)
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT

names=() results=()
passed=0 failed=0

# stage NAME FUNCTION — run FUNCTION in a subshell under `set -e` (its first
# failing command ends the stage) and record the outcome.
stage() {
  local name=$1 fn=$2 rc
  echo "== $name =="
  ( set -e; "$fn" )
  rc=$?
  names+=("$name")
  if [ $rc -eq 0 ]; then
    results+=("passed")
    passed=$((passed + 1))
  else
    results+=("FAILED (exit $rc)")
    failed=$((failed + 1))
    echo "== $name: FAILED (exit $rc); going on with the next stage ==" >&2
  fi
}

# skip NAME WHY — a stage that cannot run; counted neither passed nor failed
# (the failure that caused it is).
skip() {
  names+=("$1")
  results+=("skipped ($2)")
  echo "== $1: skipped ($2) =="
}

# summary — what ran and how it ended, then the count; exits 1 if anything failed.
summary() {
  local i
  echo "== summary =="
  for i in "${!names[@]}"; do
    echo "  ${names[$i]}: ${results[$i]}"
  done
  echo "stages: $passed passed, $failed failed"
  if [ "$failed" -eq 0 ]; then exit 0; fi
  exit 1
}

setup() {
  scripts/setup.sh --with-examples  # the runtime examples are part of what is tested
}

build_and_test() {
  cmake -S . -B build -DRPX_WERROR=ON >/dev/null
  cmake --build build -j"$jobs" >/dev/null
  touch "$state/build-ok"  # the hostile-environment and valgrind stages run on this build
  ctest --test-dir build --output-on-failure -j"$jobs"
}

hostile_env() {
  # locale with a decimal comma, TZ at UTC+14, a TMPDIR with a space, a read-only
  # HOME, OpenBLAS/OpenMP settings, an unrelated PYTHONPATH: scripts/test-hostile-env.sh
  scripts/test-hostile-env.sh build
}

release_build() {
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRPX_WERROR=ON -DRPX_TESTS=OFF \
    -DRPX_CUDA_EXAMPLES=OFF >/dev/null
  cmake --build build-release -j"$jobs" >/dev/null
}

asan_build_and_test() {
  # the C++ runtime examples are not instrumented: they are tested by the first stage; the
  # C++ runtime plugins (librpxprof-opencv.so, -torch.so) link no rpxprof code and are built and
  # tested here too, loaded uninstrumented into the sanitized rpxprof and harness
  cmake -S . -B build-asan -DRPX_WERROR=ON -DRPX_SANITIZE=ON -DRPX_CUDA_EXAMPLES=OFF -DRPX_EXAMPLES=OFF \
    -DCMAKE_BUILD_TYPE=Debug >/dev/null
  cmake --build build-asan -j"$jobs" >/dev/null
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs"
}

valgrind_runs() {
  tmp=$(mktemp -d)  # not local: the EXIT trap of the stage's subshell reads it
  trap 'rm -rf "$tmp"' EXIT
  vg() { valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite "$@"; }
  build/rpxprof inputs make "$tmp/in.npz" rgb=48x64x3:uint8=128 >/dev/null
  vg build/rpxprof run --model rpxprof-demo:demo_depth --inputs "$tmp/in.npz" --warmup 2 \
    --repeats 50 --quiet --output "$tmp/r.json" >/dev/null
  vg build/rpxprof run --model rpxprof-demo:demo_depth --inputs "$tmp/in.npz" --warmup 2 \
    --repeats 50 --quiet --no-isolate --output "$tmp/r.json" >/dev/null
  /usr/bin/python3 - "$tmp/m.onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper
w = helper.make_tensor("w", TensorProto.FLOAT, [64, 32], np.ones(64 * 32, np.float32))
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"]),
                       helper.make_node("Relu", ["y"], ["z"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
                      [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", 32])], [w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
  vg build/rpxprof cost "$tmp/m.onnx" --input x=8x64 --json >/dev/null
  vg build/rpxprof system --json >/dev/null
  vg build/test_http >/dev/null  # the HTTP plugin against its loopback server
  cat >"$tmp/manifest.json" <<'JSON'
{"schema": "rpxprof.manifest/1",
 "defaults": {"warmup": 2, "repeats": 30, "device": "cpu", "precision": "fp32"},
 "tasks": {"frames": {"inputs": "in.npz", "unit": "frame"}},
 "models": [{"name": "depth", "model": "rpxprof-demo:demo_depth", "tasks": ["frames"], "flops": "1e6", "params": "1000"},
            {"name": "noop", "model": "rpxprof-demo:demo_noop", "tasks": ["frames"], "flops": "1", "params": "1"}]}
JSON
  build/rpxprof batch "$tmp/manifest.json" --out-dir "$tmp/reports" >/dev/null
  vg build/rpxprof aggregate "$tmp/reports" --out-dir "$tmp/agg" --expect "$tmp/manifest.json" >/dev/null
  echo "valgrind: no errors, no definite leaks"
}

fuzz_bounded() {
  # -Werror: clang's warnings (-Wmacro-redefined, -Wformat-nonliteral) stay fixed
  # (the C++ runtime plugins are not fuzzed: RPX_RUNTIME_PLUGINS=OFF saves compiling libtorch's headers)
  CC=clang cmake -S . -B build-fuzz -DRPX_FUZZ=ON -DRPX_WERROR=ON -DRPX_TESTS=OFF -DRPX_CUDA_EXAMPLES=OFF \
    -DRPX_EXAMPLES=OFF -DRPX_RUNTIME_PLUGINS=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
  cmake --build build-fuzz -j"$jobs" >/dev/null
  tests/fuzz/run_fuzz.sh build-fuzz "${RPX_FUZZ_SECONDS:-60}"
}

# Installing packages is not a stage of its own; when it fails, the stages
# still run (what is installed may be enough) and the failure is counted.
echo "== setup (scripts/setup.sh --with-examples) =="
if ! setup; then
  names+=("setup (scripts/setup.sh --with-examples)")
  results+=("FAILED")
  failed=$((failed + 1))
fi

stage "build (-Werror) and test" build_and_test
if [ -e "$state/build-ok" ]; then
  stage "hostile environment: run, inputs, Python, compare, aggregate and unit tests on that build" hostile_env
else
  skip "hostile environment" "it runs the first stage's build, which failed"
fi
if [ $quick -eq 1 ]; then summary; fi
stage "Release build (-O3, -Werror): compiles clean" release_build
stage "ASan+UBSan build and test" asan_build_and_test
if [ -e "$state/build-ok" ]; then
  stage "valgrind memcheck: a demo run, a cost run, the system card, the HTTP target, an aggregate run" valgrind_runs
else
  skip "valgrind memcheck" "it runs build/rpxprof, and the first stage's build failed"
fi
stage "fuzzing (bounded)" fuzz_bounded
summary
