#!/usr/bin/python3
"""What recording where each call ran costs a whole run (issue 27 §1): `rpxprof run
--model rpxprof-demo:demo_noop --processes 1` with --call-records cpu (the default), full and
off, alternating, in the same session (off is the baseline). Per run: the process's wall time,
the loop's wall time (wall_time_ms: warmup + timed calls), the noop p50 and the floor
ratio (p50 over two clock reads, timer.overhead_ns: the timed span must stay unchanged).

usage: bench_call_records.py RPXPROF [TRIALS] [REPEATS]
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


def main():
    rpxprof = sys.argv[1]
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    warmup = 1000
    rows = {"cpu": [], "full": [], "off": []}
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "tiny.npz")
        subprocess.run([rpxprof, "inputs", "make", inputs, "x=1:float32"], check=True,
                       capture_output=True)
        for t in range(trials):
            for mode in rows:
                out = os.path.join(tmp, f"{t}.json")
                args = [rpxprof, "run", "--model", "rpxprof-demo:demo_noop", "--inputs", inputs,
                        "--warmup", str(warmup), "--repeats", str(repeats), "--processes", "1",
                        "--quiet", "--output", out, "--call-records", mode]
                t0 = time.perf_counter()
                subprocess.run(args, check=True, capture_output=True)
                wall = time.perf_counter() - t0
                with open(out) as f:
                    r = json.load(f)
                os.unlink(out)
                p50_ns = r["latency"]["p50_ms"] * 1e6
                rows[mode].append((wall * 1e3, r["wall_time_ms"], p50_ns,
                                   p50_ns / r["timer"]["overhead_ns"]))
    print(f"machine: {machine_line()}; demo_noop, --warmup {warmup} --repeats {repeats} "
          f"--processes 1, {trials} trials each, alternating")
    print()
    print("| mode | process wall (ms), median | loop wall_time_ms, median | noop p50 (ns) | "
          "floor ratio (p50 / two clock reads) |")
    print("|---|---:|---:|---:|---:|")
    med = {}
    for mode, rs in rows.items():
        m = [statistics.median(x[i] for x in rs) for i in range(4)]
        med[mode] = m
        print(f"| {mode} | {m[0]:.1f} | {m[1]:.1f} | {m[2]:.0f} | {m[3]:.2f} |")
    b = med["off"]
    for mode in ("cpu", "full"):
        a = med[mode]
        print(f"\n{mode} / off: process wall {a[0] / b[0]:.2f}x, loop {a[1] / b[1]:.2f}x; "
              f"per timed call {(a[1] - b[1]) * 1e6 / repeats:.0f} ns "
              f"(the loop's difference over {repeats} calls)")


if __name__ == "__main__":
    main()
