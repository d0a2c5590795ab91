#!/usr/bin/python3
"""Harness floor: the p50 of `demo_noop` under `rpxprof run` against the cost of
two back-to-back clock reads measured in the same run (the report's
timer.overhead_ns), and the profiler's own peak RSS for a noop run.

usage: bench_floor.py RPXPROF RSS_OF [TRIALS [RUN-ARGS...]]  (e.g. --call-records off)
Prints a Markdown table for BENCHMARKS.md."""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402



def main():
    rpxprof, rss_of = sys.argv[1], sys.argv[2]
    trials = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    extra = sys.argv[4:]
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "tiny.npz")
        subprocess.run([rpxprof, "inputs", "make", inputs, "x=1:float32"], check=True,
                       capture_output=True)
        rows = []
        for repeats in (1000, 100000):
            for t in range(trials):
                out = os.path.join(tmp, "noop.json")
                p = subprocess.run([rss_of, rpxprof, "run", "--model", "rpxprof-demo:demo_noop",
                                    "--inputs", inputs, "--warmup", "1000", "--repeats",
                                    str(repeats), "--quiet", "--output", out, *extra],
                                   capture_output=True, text=True, check=True)
                maxrss = int(re.search(r"maxrss_kib=(\d+)", p.stderr).group(1))
                with open(out) as f:
                    r = json.load(f)
                p50_ns = r["latency"]["p50_ms"] * 1e6
                clock_ns = r["timer"]["overhead_ns"]
                rows.append((repeats, t, p50_ns, clock_ns, p50_ns / clock_ns, maxrss / 1024))
    print(f"machine: {machine_line()}")
    print()
    print("| repeats | trial | noop p50 (ns) | two clock reads, median (ns) | ratio | peak RSS (MiB) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for repeats, t, p50, clk, ratio, rss in rows:
        print(f"| {repeats} | {t} | {p50:.0f} | {clk} | {ratio:.2f} | {rss:.2f} |")
    for repeats in (1000, 100000):
        sel = [r for r in rows if r[0] == repeats]
        ratios = sorted(r[4] for r in sel)
        rss = max(r[5] for r in sel)
        print(f"\nrepeats {repeats}: median ratio {ratios[len(ratios) // 2]:.2f} "
              f"(target <= 1.5), worst peak RSS {rss:.2f} MiB (target <= 8)")


if __name__ == "__main__":
    main()
