#!/usr/bin/python3
"""Python measurement floor (issue 9): the p50 of a Python no-op callable under
`rpxprof run --model floor_model:noop`, against a plain Python loop timing the
same callable with time.perf_counter (the reference's method), in one run.

Both sides call noop(**inputs) with the same NPZ arrays (a 1-element float32
`x`), 1,000 warmup calls then 10,000 timed calls, trials interleaved.

usage: bench_python_floor.py RPXPROF [TRIALS]
Prints a Markdown table for BENCHMARKS.md."""
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import LOOP, MODEL, machine_line  # noqa: E402




def main():
    rpxprof = sys.argv[1]
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "floor_model.py"), "w") as f:
            f.write(MODEL)
        inputs = os.path.join(tmp, "tiny.npz")
        np.savez(inputs, x=np.zeros(1, np.float32))
        for t in range(trials):
            out = os.path.join(tmp, "floor.json")
            subprocess.run([rpxprof, "run", "--model", "floor_model:noop", "--inputs", inputs,
                            "--warmup", "1000", "--repeats", "10000", "--quiet", "--output", out],
                           check=True, cwd=tmp, capture_output=True)
            with open(out) as f:
                r = json.load(f)
            ours = r["latency"]["p50_ms"] * 1e6
            clock = r["timer"]["overhead_ns"]
            loop = float(subprocess.run([sys.executable, "-c", LOOP, tmp, inputs], check=True,
                                        capture_output=True, text=True).stdout)
            rows.append((t, ours, loop, clock))
    print(f"machine: {machine_line()}, "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    print()
    print("| trial | rpxprof p50 (ns) | perf_counter loop p50 (ns) | rpxprof / loop | two clock reads (ns) |")
    print("|---:|---:|---:|---:|---:|")
    for t, ours, loop, clock in rows:
        print(f"| {t} | {ours:.0f} | {loop:.0f} | {ours / loop:.2f} | {clock} |")
    ratios = sorted(o / l for _, o, l, _ in rows)
    print(f"\nmedian ratio {ratios[len(ratios) // 2]:.2f} (target < 1: rpxprof's floor is lower); "
          f"rpxprof lower in {sum(o < l for _, o, l, _ in rows)} of {len(rows)} trials")


if __name__ == "__main__":
    main()
