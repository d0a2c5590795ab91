#!/usr/bin/env bash
# GPU proof for --device cuda, on a machine with an NVIDIA GPU (a few minutes).
# Builds rpxprof with the CUDA examples, compiles a few more test models with nvcc, runs
# them and judges every report with scripts/gpu-check-verdicts.py (the judging is tested on
# the stubs by tests/cli/test_cuda.py). One summary line per check:
#   PASS|FAIL|SKIP <check>: <numbers>
# and a non-zero exit when any check fails. SKIP: what the machine lacks (a second GPU,
# torch with CUDA), never a failure.
# Usage: scripts/gpu-check.sh [BUILD_DIR]   (RPX_SKIP_SETUP=1 skips apt-get)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:-build-gpu}
py=/usr/bin/python3
verdicts="scripts/gpu-check-verdicts.py"
passed=0 failed=0 skipped=0
lines=()

line() { echo "$*"; lines+=("$*"); }
pass() { line "PASS $1: $2"; passed=$((passed + 1)); }
fail() { line "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { line "SKIP $1: $2"; skipped=$((skipped + 1)); }
# judge NAME CHECK ARGS...: the verdict's one line of numbers, PASS or FAIL
judge() {
  local name=$1 out
  shift
  if out=$("$py" "$verdicts" "$@" 2>&1); then pass "$name" "${out//$'\n'/ | }"; else fail "$name" "${out//$'\n'/ | }"; fi
}
# rpx NAME ARGS...: rpxprof run with a time limit; its stderr kept in $tmp/NAME.err
rpx_run() {
  local name=$1
  shift
  timeout 300 "$rpx" run "$@" --quiet --output "$tmp/$name.json" >/dev/null 2>"$tmp/$name.err"
}
ran() { # NAME: the report exists, else one FAIL line with the error
  [ -s "$tmp/$1.json" ] && return 0
  fail "$1" "no report: $(tail -n 3 "$tmp/$1.err" 2>/dev/null | tr '\n' ' ')"
  return 1
}

[ "${RPX_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh || echo "gpu-check: setup failed; trying the build anyway" >&2
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv,noheader
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRPX_CUDA_EXAMPLES=ON -DRPX_TESTS=OFF >/dev/null || exit 1
cmake --build "$build" -j"$(nproc)" >/dev/null || exit 1
rpx="$build/rpxprof"
ex="$build/examples/cuda"
tmp=$(mktemp -d)
hold_pid=
trap '[ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$rpx" inputs make "$tmp/in.npz" x=1:float32 >/dev/null
export CUDA_DEVICE_ORDER=PCI_BUS_ID # NVML's order, so the card and the run agree
mapfile -t gpu_uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null)
spin="$ex/librpxcuda_spin.so:spin"

# More models: a spin on a non-default stream, one in a CUDA graph, many short kernels per
# call, and a process that holds GPU memory.
cat >"$tmp/check.cu" <<'CU'
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "rpxprof/model.h"
#define EXPORT extern "C" __attribute__((visibility("default")))
EXPORT const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;
__global__ void spin_ns(unsigned long long ns)
{
    unsigned long long s, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(s));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - s < ns);
}
struct st { cudaStream_t stream; cudaGraphExec_t graph; unsigned long long ns; int kernels; };
static int setup(void **state, rpx_error *err, int graph)
{
    st *s = (st *)calloc(1, sizeof *s);
    const char *ms = getenv("RPX_SPIN_MS"), *k = getenv("RPX_CHECK_KERNELS");
    s->ns = (unsigned long long)((ms ? atof(ms) : 2.0) * 1e6);
    s->kernels = k ? atoi(k) : 1;
    if (cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking) != cudaSuccess)
        return rpx_model_error(err, "cudaStreamCreateWithFlags failed");
    if (graph) {
        cudaGraph_t g;
        cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeGlobal);
        spin_ns<<<1, 1, 0, s->stream>>>(s->ns);
        cudaStreamEndCapture(s->stream, &g);
        if (cudaGraphInstantiateWithFlags(&s->graph, g, 0) != cudaSuccess)
            return rpx_model_error(err, "cudaGraphInstantiateWithFlags failed");
    }
    *state = s;
    return 0;
}
EXPORT int stream_spin_setup(void **s, const rpx_inputs *, const rpx_run_info *, rpx_error *e) { return setup(s, e, 0); }
EXPORT int graph_spin_setup(void **s, const rpx_inputs *, const rpx_run_info *, rpx_error *e) { return setup(s, e, 1); }
EXPORT int many_setup(void **s, const rpx_inputs *, const rpx_run_info *, rpx_error *e) { return setup(s, e, 0); }
EXPORT int stream_spin(void *p, const rpx_inputs *, rpx_error *)
{
    st *s = (st *)p;
    spin_ns<<<1, 1, 0, s->stream>>>(s->ns); // rpxprof's context sync must cover this stream
    return 0;
}
EXPORT int graph_spin(void *p, const rpx_inputs *, rpx_error *)
{
    st *s = (st *)p;
    return cudaGraphLaunch(s->graph, s->stream) == cudaSuccess ? 0 : -1;
}
EXPORT int many(void *p, const rpx_inputs *, rpx_error *)
{
    st *s = (st *)p;
    for (int i = 0; i < s->kernels; i++) spin_ns<<<1, 1>>>(s->ns / (unsigned long long)s->kernels);
    return 0;
}
CU
cat >"$tmp/hold.cu" <<'CU'
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    void *p;
    size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 512;
    if (cudaMalloc(&p, mb << 20) != cudaSuccess || cudaMemset(p, 1, mb << 20) != cudaSuccess) return 1;
    cudaDeviceSynchronize();
    printf("ready\n");
    fflush(stdout);
    sleep(argc > 2 ? (unsigned)atoi(argv[2]) : 120);
    return 0;
}
CU
extra=
if command -v nvcc >/dev/null &&
  nvcc -O2 -shared -Xcompiler -fPIC --cudart shared -I include -o "$tmp/libcheck.so" "$tmp/check.cu" 2>"$tmp/nvcc.err" &&
  nvcc -O2 --cudart shared -o "$tmp/hold" "$tmp/hold.cu" 2>>"$tmp/nvcc.err"; then
  extra="$tmp/libcheck.so"
else
  fail "build-check-models" "nvcc could not build the extra models: $(head -c 300 "$tmp/nvcc.err" 2>/dev/null)"
fi

# 1. the synchronised spin: p50 >= 2 ms and within 5 % of it
RPX_SPIN_MS=2 rpx_run spin --model "$spin" --inputs "$tmp/in.npz" --device cuda --warmup 20 --repeats 300
ran spin && judge spin-synchronised spin "$tmp/spin.json" 2
# 2. the same kernel without rpxprof's synchronisation (--device cpu): microseconds
RPX_SPIN_MS=2 rpx_run nosync --model "$spin" --inputs "$tmp/in.npz" --device cpu --warmup 20 --repeats 300
ran nosync && judge spin-unsynchronised unsynced "$tmp/nosync.json" 2
# 3. CUPTI busy time of the spin
RPX_SPIN_MS=2 rpx_run busy --model "$spin" --inputs "$tmp/in.npz" --device cuda --warmup 5 --repeats 50 --gpu-time
ran busy && judge spin-gpu-time busy "$tmp/busy.json" 2 1
# 4. the card's visible GPUs are the run's
[ -s "$tmp/spin.json" ] && judge card-uuids card_uuids "$tmp/spin.json"

# 5. GEMM: the call's own peak (peak minus the level at the reset: A, B, cuBLAS's workspace,
#    lazily loaded modules) against what the call allocates (C and the scratch)
n=8192 scratch_mb=256
RPX_GEMM_N=$n RPX_GEMM_SCRATCH_MB=$scratch_mb rpx_run gemm --model "$ex/librpxcuda_gemm.so:gemm" \
  --inputs "$tmp/in.npz" --device cuda --precision fp16 --warmup 5 --repeats 50
if ran gemm; then
  judge gemm-per-call-peak per_call_peak "$tmp/gemm.json" $((n * n * 2 / 1048576 + scratch_mb))
  "$py" - "$tmp/gemm.json" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2]); p50 = r["latency"]["p50_ms"]
print(f"INFO gemm: N={n} p50 {p50:.4f} ms -> {2 * n**3 / (p50 / 1e3) / 1e12:.1f} TFLOP/s on "
      f"{r['cuda']['visible_devices'][0]['name']}")
PY
fi

# 6. nothing visible: refused, no report
out=$(CUDA_VISIBLE_DEVICES="" "$rpx" run --model "$spin" --inputs "$tmp/in.npz" --device cuda \
  --output "$tmp/none.json" 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ ! -e "$tmp/none.json" ] && grep -q "no CUDA device is visible" <<<"$out"; then
  pass no-device-refused "$out"
else
  fail no-device-refused "exit $rc: $out"
fi

# 7-9. a non-default stream, a CUDA graph, many kernels per call under --gpu-time
if [ -n "$extra" ]; then
  RPX_SPIN_MS=2 rpx_run stream --model "$extra:stream_spin" --inputs "$tmp/in.npz" --device cuda --warmup 10 --repeats 100
  ran stream && judge non-default-stream at_least "$tmp/stream.json" 2
  RPX_SPIN_MS=2 rpx_run graph --model "$extra:graph_spin" --inputs "$tmp/in.npz" --device cuda --warmup 10 --repeats 100 --gpu-time
  ran graph && judge cuda-graph at_least "$tmp/graph.json" 2
  RPX_SPIN_MS=2 RPX_CHECK_KERNELS=100 rpx_run many --model "$extra:many" --inputs "$tmp/in.npz" --device cuda --warmup 5 --repeats 50 --gpu-time
  ran many && judge many-kernels-gpu-time busy "$tmp/many.json" 2 100 0.10
fi

# 10-12. visibility: by UUID, ordinal 1 and reordered "1,0" on two GPUs
if [ ${#gpu_uuids[@]} -ge 1 ]; then
  CUDA_VISIBLE_DEVICES=${gpu_uuids[-1]} RPX_SPIN_MS=1 rpx_run byuuid --model "$spin" --inputs "$tmp/in.npz" --device cuda --repeats 10
  ran byuuid && judge visible-by-uuid uuids "$tmp/byuuid.json" "${gpu_uuids[-1]}"
else
  fail visible-by-uuid "nvidia-smi lists no GPU UUID"
fi
if [ ${#gpu_uuids[@]} -ge 2 ]; then
  CUDA_VISIBLE_DEVICES=1 RPX_SPIN_MS=1 rpx_run ordinal1 --model "$spin" --inputs "$tmp/in.npz" --device cuda --repeats 10
  ran ordinal1 && judge ordinal-1 uuids "$tmp/ordinal1.json" "${gpu_uuids[1]}"
  CUDA_VISIBLE_DEVICES=1,0 RPX_SPIN_MS=1 rpx_run reordered --model "$spin" --inputs "$tmp/in.npz" --device cuda --repeats 10
  ran reordered && judge visible-reordered uuids "$tmp/reordered.json" "${gpu_uuids[1]},${gpu_uuids[0]}" &&
    judge visible-reordered-card card_uuids "$tmp/reordered.json"
else
  skip ordinal-1 "one GPU on this machine"
  skip visible-reordered "one GPU on this machine"
fi

# 13. another process on the GPU: listed with its pid and memory
if [ -n "$extra" ]; then
  "$tmp/hold" 512 120 >"$tmp/hold.out" 2>&1 &
  hold_pid=$!
  for _ in $(seq 100); do grep -q ready "$tmp/hold.out" 2>/dev/null && break; sleep 0.1; done
  RPX_SPIN_MS=1 rpx_run other --model "$spin" --inputs "$tmp/in.npz" --device cuda --repeats 20
  ran other && judge other-process-listed other_process "$tmp/other.json" "$hold_pid" 512
  kill "$hold_pid" 2>/dev/null
  wait "$hold_pid" 2>/dev/null
  hold_pid=
fi

# 14. GPU conditions sampled under load (about 3 s of 2 ms kernels)
RPX_SPIN_MS=2 rpx_run load --model "$spin" --inputs "$tmp/in.npz" --device cuda --warmup 20 --repeats 1500
ran load && judge conditions-under-load conditions "$tmp/load.json" 20

# 15. the memory sampler's cost: p50 of a short call with it and without
RPX_SPIN_MS=0.05 rpx_run sampler_on --model "$spin" --inputs "$tmp/in.npz" --device cuda --warmup 100 --repeats 3000
RPX_SPIN_MS=0.05 RPX_GPU_MEM_SAMPLER=off rpx_run sampler_off --model "$spin" --inputs "$tmp/in.npz" --device cuda --warmup 100 --repeats 3000
ran sampler_on && ran sampler_off && judge memory-sampler-cost sampler_cost "$tmp/sampler_on.json" "$tmp/sampler_off.json"

# 16. --call-timeout kills a child stuck in a kernel (a 60 s spin, a 3 s limit)
t0=$(date +%s)
RPX_SPIN_MS=60000 timeout 60 "$rpx" run --model "$spin" --inputs "$tmp/in.npz" --device cuda --warmup 0 \
  --repeats 1 --call-timeout 3 --output "$tmp/stuck.json" >/dev/null 2>"$tmp/stuck.err"
rc=$? t=$(($(date +%s) - t0))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $t -lt 30 ] && grep -q -- "--call-timeout" "$tmp/stuck.err"; then
  pass call-timeout-stuck-kernel "exit $rc after ${t}s: $(head -n 1 "$tmp/stuck.err")"
else
  fail call-timeout-stuck-kernel "exit $rc after ${t}s: $(head -n 2 "$tmp/stuck.err" | tr '\n' ' ')"
fi

# 17-18. Python with torch on the GPU: torch's allocator peak and the cuMemGetInfo-based peak;
#        --gpu-time together with import torch (torch links its own CUPTI)
if "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  cat >"$tmp/gpu_torch_model.py" <<'PY'
import torch
_w = torch.ones(64 << 18, device="cuda")          # 64 MiB held from import
def predict(x):
    t = torch.empty(256 << 18, device="cuda")      # 256 MiB per call, freed after it
    t.fill_(1.0)
PY
  rpx_abs=$(realpath "$rpx")
  (cd "$tmp" && timeout 300 "$rpx_abs" run --model gpu_torch_model:predict --inputs in.npz --device cuda \
    --warmup 3 --repeats 20 --quiet --output torch.json >/dev/null 2>torch.err)
  ran torch && judge torch-peaks torch_peak "$tmp/torch.json" 320 64
  (cd "$tmp" && timeout 300 "$rpx_abs" run --model gpu_torch_model:predict --inputs in.npz --device cuda \
    --warmup 3 --repeats 20 --gpu-time --quiet --output torch_gt.json >/dev/null 2>torch_gt.err)
  ran torch_gt && judge torch-gpu-time gpu_time_ran "$tmp/torch_gt.json"
else
  skip torch-peaks "torch with CUDA is not importable by $py (Debian's is CPU-only)"
  skip torch-gpu-time "torch with CUDA is not importable by $py"
fi

echo "---- gpu-check summary"
printf '%s\n' "${lines[@]}"
echo "gpu-check: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
