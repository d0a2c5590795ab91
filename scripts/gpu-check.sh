#!/usr/bin/env bash
# GPU proof for --device cuda, on a machine with an NVIDIA GPU (minutes, not more).
# Builds rpxprof with the CUDA examples, then checks:
#   1. the spin model's p50 is within 5% of its spin time (microseconds without sync),
#      and so is its GPU busy time from CUPTI (--gpu-time);
#   2. the GEMM model's CUDA memory peak is within 5% of what it allocates;
#   3. the GEMM's achieved TFLOP/s, printed next to the device's dense FP16 peak;
#   4. a missing device (CUDA_VISIBLE_DEVICES="") is refused;
#   5. the Python target's torch allocator peak (when torch has CUDA).
# Usage: scripts/gpu-check.sh [BUILD_DIR]   (RPX_SKIP_SETUP=1 skips apt-get)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
passed=0 failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
py=/usr/bin/python3

[ "${RPX_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh || echo "gpu-check: setup failed; trying the build anyway" >&2
nvidia-smi -L 2>/dev/null || echo "gpu-check: nvidia-smi not available"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRPX_CUDA_EXAMPLES=ON -DRPX_TESTS=OFF >/dev/null || exit 1
cmake --build "$build" -j"$(nproc)" >/dev/null || exit 1
rpx="$build/rpxprof"
ex="$build/examples/cuda"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$rpx" inputs make "$tmp/in.npz" x=1:float32 >/dev/null

# 1. spin: p50 within 5% of the spin time
spin_ms=2
RPX_SPIN_MS=$spin_ms "$rpx" run --model "$ex/librpxcuda_spin.so:spin" --inputs "$tmp/in.npz" \
  --device cuda --warmup 20 --repeats 300 --quiet --output "$tmp/spin.json" >/dev/null
$py - "$tmp/spin.json" "$spin_ms" <<'PY' && ok "spin p50 within 5%" || bad "spin p50"
import json, sys
r = json.load(open(sys.argv[1])); want = float(sys.argv[2])
p50 = r["latency"]["p50_ms"]
print(f"spin: p50 {p50:.4f} ms for a {want} ms kernel; sync overhead {r['timer']['sync_overhead_ns']} ns; devices {[d['name'] for d in r['cuda']['visible_devices']]}")
sys.exit(0 if abs(p50 - want) / want <= 0.05 else 1)
PY

# 1b. GPU busy time from CUPTI for the same kernel
RPX_SPIN_MS=$spin_ms "$rpx" run --model "$ex/librpxcuda_spin.so:spin" --inputs "$tmp/in.npz" \
  --device cuda --warmup 5 --repeats 50 --gpu-time --quiet --output "$tmp/spin_gt.json" >/dev/null
$py - "$tmp/spin_gt.json" "$spin_ms" <<'PY' && ok "GPU busy time within 5%" || bad "GPU busy time"
import json, sys
r = json.load(open(sys.argv[1])); want = float(sys.argv[2])
g = r.get("gpu_time") or {}
busy = g.get("p50_ms")
print(f"spin --gpu-time: GPU busy p50 {busy} ms, wall p50 {r['latency']['p50_ms']:.4f} ms, kernels/call {g.get('kernels_per_call_p50')}")
sys.exit(0 if busy is not None and abs(busy - want) / want <= 0.05 else 1)
PY

# 2 and 3. GEMM: memory peak and achieved TFLOP/s
n=8192 scratch_mb=256
RPX_GEMM_N=$n RPX_GEMM_SCRATCH_MB=$scratch_mb "$rpx" run --model "$ex/librpxcuda_gemm.so:gemm" \
  --inputs "$tmp/in.npz" --device cuda --precision fp16 --warmup 5 --repeats 50 --quiet \
  --output "$tmp/gemm.json" >/dev/null
"$rpx" gpus --json >"$tmp/gpus.json" 2>/dev/null || echo '{"gpus": []}' >"$tmp/gpus.json"
$py - "$tmp/gemm.json" "$tmp/gpus.json" "$n" "$scratch_mb" <<'PY' && ok "GEMM memory peak within 5%" || bad "GEMM memory peak"
import json, sys
r = json.load(open(sys.argv[1])); gpus = json.load(open(sys.argv[2]))
n, scratch = int(sys.argv[3]), int(sys.argv[4])
mib = n * n * 2 / 2**20
want = 2 * mib + mib + scratch  # A, B resident; C and the scratch per call
peaks = r["memory"]["cuda_peak_allocated_mb_by_visible_device"]
peak = peaks.get("0")
p50 = r["latency"]["p50_ms"]
tflops = 2 * n**3 / (p50 / 1e3) / 1e12
name = (r["cuda"]["visible_devices"] or [{}])[0].get("name")
peak_fp16 = None
for g in gpus.get("gpus", []):
    if name and g.get("name") and (g["name"].lower() in name.lower() or name.lower() in g["name"].lower()):
        peak_fp16 = (g.get("peak_tflops") or {}).get("fp16")
print(f"gemm: N={n} p50 {p50:.4f} ms -> {tflops:.1f} TFLOP/s achieved; device {name} dense fp16 peak "
      f"{'n/a' if peak_fp16 is None else peak_fp16} TFLOP/s")
print(f"gemm: CUDA peak {peak} MiB, the model allocates {want:.0f} MiB "
      f"(method {r['memory']['cuda_peak_method']['method']})")
sys.exit(0 if peak is not None and abs(peak - want) / want <= 0.05 else 1)
PY

# 4. no visible device: refused, no report
out=$(CUDA_VISIBLE_DEVICES="" "$rpx" run --model "$ex/librpxcuda_spin.so:spin" --inputs "$tmp/in.npz" \
  --device cuda --output "$tmp/none.json" 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ ! -e "$tmp/none.json" ] && echo "$out" | grep -q "no CUDA device is visible"; then
  ok "missing device refused: $out"
else
  bad "missing device not refused (exit $rc): $out"
fi

# 5. Python target with torch on the GPU: torch's allocator peak of a known allocation
#    (needs a CUDA build of torch for /usr/bin/python3; Debian's is CPU-only: skipped)
if $py -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  cat >"$tmp/gpu_torch_model.py" <<'PY'
import torch
_w = torch.ones(64 << 18, device="cuda")          # 64 MiB held from import
def predict(x):
    t = torch.empty(256 << 18, device="cuda")      # 256 MiB per call, freed after it
    t.fill_(1.0)
PY
  rpx_abs=$(realpath "$rpx")
  (cd "$tmp" && "$rpx_abs" run --model gpu_torch_model:predict --inputs in.npz --device cuda \
     --warmup 3 --repeats 20 --quiet --output torch.json >/dev/null)
  $py - "$tmp/torch.json" <<'PY' && ok "torch allocator peak within 5%" || bad "torch allocator peak"
import json, sys
r = json.load(open(sys.argv[1])); m = r["memory"]
peak = m["cuda_peak_allocated_mb_by_visible_device"].get("0")
print(f"torch: peak {peak} MiB (want 320: 64 held + 256 per call), method {m['cuda_peak_method']['method']}, "
      f"process-level {m.get('cuda_process_peak_mb_by_visible_device')}, torch {r['python']['torch_version']} "
      f"CUDA {r['python']['torch_cuda_version']}, p50 {r['latency']['p50_ms']:.4f} ms")
sys.exit(0 if peak is not None and abs(peak - 320) / 320 <= 0.05
         and m["cuda_peak_method"]["method"] == "torch_cuda_max_memory_allocated" else 1)
PY
else
  echo "SKIP: torch with CUDA is not importable by $py (the Python target's GPU check)"
fi

echo "gpu-check: $passed passed, $failed failed"
[ $failed -eq 0 ]
