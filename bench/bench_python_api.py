#!/usr/bin/python3
"""The Python package's floor (issue 17): the p50 of a Python no-op under
rpxprof.profile (one worker in the calling process), against a time.perf_counter loop
timing the same call (the reference's method) and against `rpxprof run --model
floor_model:noop` (the CLI's Python target), trials interleaved in one run.

All three call noop(**inputs) with the same arrays (a 1-element float32 `x`), 1,000
warmup calls then 10,000 timed calls, each in a fresh interpreter or process.

usage: bench_python_api.py RPXPROF PYTHONPATH_OF_THE_PACKAGE [TRIALS]
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


API = r"""
import sys
import numpy as np
import rpxprof
sys.path.insert(0, sys.argv[1])
from floor_model import noop
inputs = dict(np.load(sys.argv[2]))
r = rpxprof.profile(noop, inputs, warmup=1000, repeats=10000)
print(r["latency"]["p50_ms"] * 1e6, r["timer"]["overhead_ns"])
"""


def main():
    rpxprof, pypath = sys.argv[1], sys.argv[2]
    trials = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    env = dict(os.environ, PYTHONPATH=pypath)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "floor_model.py"), "w") as f:
            f.write(MODEL)
        inputs = os.path.join(tmp, "tiny.npz")
        np.savez(inputs, x=np.zeros(1, np.float32))
        for t in range(trials):
            api, clock = map(float, subprocess.run(
                [sys.executable, "-c", API, tmp, inputs], check=True, capture_output=True,
                text=True, env=env).stdout.split())
            loop = float(subprocess.run([sys.executable, "-c", LOOP, tmp, inputs], check=True,
                                        capture_output=True, text=True).stdout)
            out = os.path.join(tmp, "floor.json")
            subprocess.run([rpxprof, "run", "--model", "floor_model:noop", "--inputs", inputs,
                            "--warmup", "1000", "--repeats", "10000", "--quiet", "--output", out],
                           check=True, cwd=tmp, capture_output=True)
            with open(out) as f:
                cli = json.load(f)["latency"]["p50_ms"] * 1e6
            rows.append((t, api, loop, cli, clock))
    print(f"machine: {machine_line()}, Python {platform.python_version()}, numpy {np.__version__}")
    print()
    print("| trial | rpxprof.profile p50 (ns) | perf_counter loop p50 (ns) | rpxprof run p50 (ns) "
          "| profile / loop | profile / run | two clock reads (ns) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for t, api, loop, cli, clock in rows:
        print(f"| {t} | {api:.0f} | {loop:.0f} | {cli:.0f} | {api / loop:.2f} | {api / cli:.2f} "
              f"| {clock:.0f} |")
    vs_loop = sorted(a / l for _, a, l, _, _ in rows)
    vs_cli = sorted(a / c for _, a, _, c, _ in rows)
    print(f"\nmedian profile/loop {vs_loop[len(rows) // 2]:.2f} (target < 1), "
          f"median profile/run {vs_cli[len(rows) // 2]:.2f} (target <= 1.5); "
          f"below the loop in {sum(a < l for _, a, l, _, _ in rows)} of {len(rows)}, within 1.5x "
          f"of the CLI in {sum(a <= 1.5 * c for _, a, _, c, _ in rows)} of {len(rows)}")


if __name__ == "__main__":
    main()
