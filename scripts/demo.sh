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
# rpxprof prints the summary (each percentile with its interval, digits as the
# interval allows); the report holds every sample and the system card.
