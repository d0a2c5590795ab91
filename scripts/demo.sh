#!/usr/bin/env bash
# Set up, build, and profile the packaged demo (the reference quick start, in C).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
build/rpxprof inputs make profile-inputs.npz rgb=480x640x3:uint8=128 >/dev/null
build/rpxprof inputs show profile-inputs.npz
build/rpxprof run --model rpxprof-demo:demo_depth --inputs profile-inputs.npz --device cpu \
  --precision fp32 --unit frame --warmup 10 --repeats 1000 --output profile-demo.json
/usr/bin/python3 - <<'PY'
import json
r = json.load(open("profile-demo.json"))
lat, mem = r["latency"], r["memory"]
fmt = lambda v: "n/a" if v is None else f"{v:.4f}"
print(f"demo_depth on {r['system_card']['cpu_name'] or 'n/a'}: "
      f"p50 {fmt(lat['p50_ms'])} ms, p95 {fmt(lat['p95_ms'])} ms, p99 {fmt(lat['p99_ms'])} ms "
      f"over {r['measured_calls']} calls; inference peak RSS {fmt(mem['cpu_inference_peak_mb'])} MiB")
PY
