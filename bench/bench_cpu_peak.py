#!/usr/bin/python3
"""The host CPU's measured peak (`rpxprof roofline --measure-cpu`) against its
estimate: fp32 and fp64 FMA GFLOP/s, triad GB/s, the measured / estimate ratio
and the measurement's wall time, over several trials. The tests only check
what a busy machine under ASan still meets (the ratio stays below 2); how close
the kernels come to the estimate is measured here.

usage: bench_cpu_peak.py RPXPROF [TRIALS]
Prints a Markdown table for BENCHMARKS.md."""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402


def main():
    rpxprof = sys.argv[1]
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rows = []
    for _ in range(trials):
        p = subprocess.run([rpxprof, "roofline", "--measure-cpu", "--json"], check=True,
                           capture_output=True, text=True)
        cpu = json.loads(p.stdout)["cpu"]
        m = cpu["measured"]
        rows.append((m["fp32_gflops"], m["fp64_gflops"], m["triad_gbps"], cpu["ratio_fp32"],
                     m["seconds"]))
    est = cpu["estimate"]
    print(f"{machine_line()}, load {os.getloadavg()[0]:.1f}")
    print(f"estimate: {est['fp32_gflops']} GFLOP/s fp32 ({est['formula']}); "
          f"{m['threads']} threads, ISA {m['isa']}, triad {m['triad_bytes_per_array'] >> 20} MiB "
          f"per array")
    print()
    print("| | median | min | max |")
    print("|---|---:|---:|---:|")
    for i, name in enumerate(("fp32 FMA GFLOP/s", "fp64 FMA GFLOP/s", "triad GB/s",
                              "measured / estimate (fp32)", "wall time, s")):
        col = [r[i] for r in rows]
        print(f"| {name} | {statistics.median(col):.2f} | {min(col):.2f} | {max(col):.2f} |")


if __name__ == "__main__":
    main()
