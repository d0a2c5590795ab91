#!/usr/bin/python3
"""What --check-outputs costs (issue 30 §3): the p50 of a cheap C model (exposing its
outputs through NAME_outputs) and of a Python callable, against the cost of two clock
reads, and the run's wall time, with checks off, at the default 1 % and at every call.

usage: bench_output_checks.py RPXPROF OUTPUT_MODELS_SO PYMODELS_DIR [TRIALS]
Prints a Markdown table for BENCHMARKS.md."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402

MODES = [("off", []), ("1% (default)", ["--check-outputs"]),
         ("every call", ["--check-outputs", "--check-fraction", "1"])]


def main():
    rpxprof, lib, pymodels = sys.argv[1], sys.argv[2], sys.argv[3]
    trials = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    env = dict(os.environ, PYTHONPATH=pymodels)
    print(machine_line())
    print()
    print("| model | checks | p50 ns, median | p50 / two clock reads | run wall s, median "
          "| checked calls |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "x.npz")
        subprocess.run([rpxprof, "inputs", "make", inputs, "rgb=8x8x3:uint8=random"],
                       check=True, capture_output=True)
        for model, repeats in ((f"{lib}:exact", 100000), ("rpx_output_models:exact", 20000)):
            for name, extra in MODES:
                p50s, floors, walls, checked = [], [], [], []
                for t in range(trials):
                    out = os.path.join(tmp, "r.json")
                    t0 = time.monotonic()
                    subprocess.run([rpxprof, "run", "--model", model, "--inputs", inputs,
                                    "--warmup", "1000", "--repeats", str(repeats), "--quiet",
                                    "--output", out, *extra], check=True, capture_output=True,
                                   env=env)
                    walls.append(time.monotonic() - t0)
                    with open(out) as f:
                        r = json.load(f)
                    p50s.append(r["latency"]["p50_ms"] * 1e6)
                    floors.append(r["latency"]["p50_ms"] * 1e6 / r["timer"]["overhead_ns"])
                    checked.append(r.get("outputs", {}).get("checked_calls", 0))
                print(f"| `{model.split('/')[-1]}` ({repeats} calls) | {name} | "
                      f"{statistics.median(p50s):.0f} | {statistics.median(floors):.2f} | "
                      f"{statistics.median(walls):.2f} | {int(statistics.median(checked))} |")


if __name__ == "__main__":
    main()
