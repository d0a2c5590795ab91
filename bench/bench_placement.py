#!/usr/bin/python3
"""Time to a p50 known to ±1 % with and without `--cpus` (issue 27 §3): for demo_depth (on a
480x640 and a 64x64 frame) and the 8 MiB-streaming test model, `rpxprof run --target-precision
1% --max-time T` with the inherited mask and with `--cpus N` for each allowed CPU N (or the
CPUS given), the conditions alternating run by run, TRIALS runs each: wall time of the whole
command, calls, processes, the CPUs the processes ran on, the p50, the precision achieved (half
the interval's width over its centre), whether it converged, and the factor `variance` named.

usage: bench_placement.py RPXPROF TEST_MODELS_SO [TRIALS (2)] [MAX_TIME (60)] [CPUS (allowed)]
Prints a Markdown table for BENCHMARKS.md, one line per run on stderr."""
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402
from bench_runs import LoadLog, half_width, p50_ci, pct, run_report  # noqa: E402


def where(r):
    """The CPUs the processes' calls ran on, as 'CPU:processes' (by the most calls)."""
    count = {}
    for b in r.get("latency_by_process") or []:
        cpus = b.get("cpus") or []
        if cpus:
            c = max(cpus, key=lambda x: x["calls"])["cpu"]
            count[c] = count.get(c, 0) + 1
    return ", ".join(f"{c}:{n}" for c, n in sorted(count.items())) or "n/a"


def main():
    rpxprof, models = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    trials = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    max_time = sys.argv[4] if len(sys.argv) > 4 else "60"
    cpus = (sys.argv[5].split(",") if len(sys.argv) > 5
            else [str(c) for c in sorted(os.sched_getaffinity(0))])
    conditions = [("inherited mask", [])] + [(f"`--cpus {c}`", ["--cpus", c]) for c in cpus]
    load = LoadLog()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        big, small, x = (os.path.join(tmp, n) for n in ("big.npz", "small.npz", "x.npz"))
        for path, spec in ((big, "rgb=480x640x3:uint8=128"), (small, "rgb=64x64x3:uint8=128"),
                           (x, "x=1:float32=0")):
            subprocess.run([rpxprof, "inputs", "make", path, spec], check=True,
                           stdout=subprocess.DEVNULL)
        targets = [("demo_depth (480x640)", "rpxprof-demo:demo_depth", big, {}),
                   ("demo_depth (64x64)", "rpxprof-demo:demo_depth", small, {}),
                   ("stream 8 MiB", f"{models}:stream", x, {"RPX_TEST_STREAM_MB": "8"})]
        for name, model, inputs, env in targets:
            for t in range(trials):
                for cond, extra in conditions:
                    load.take()
                    args = ["--model", model, "--inputs", inputs, "--target-precision", "1%",
                            "--max-time", max_time, *extra]
                    try:
                        r, wall = run_report(rpxprof, args, os.path.join(tmp, "r.json"), env,
                                             timeout=int(max_time) * 3 + 120)
                    except subprocess.TimeoutExpired as e:
                        print(f"{name}, {cond}: killed after {e.timeout} s", file=sys.stderr,
                              flush=True)
                        continue
                    load.take()
                    p50, lo, hi = p50_ci(r)
                    st = r.get("stopping") or {}
                    ach = st.get("achieved", half_width(p50, lo, hi))
                    v = (r.get("variance") or {}).get("explained_by") or "none"
                    rows.append((name, cond, wall, r["measured_calls"], r["processes"],
                                 where(r), p50, ach, st.get("converged"), v))
                    print(f"{name}, {cond}, trial {t + 1}: {rows[-1][2:]}", file=sys.stderr,
                          flush=True)
    print(f"machine: {machine_line()}; `rpxprof run --target-precision 1% --max-time {max_time}` "
          f"(default 5 processes x 200 calls first, then whole processes), {trials} runs per "
          f"condition, the conditions alternating")
    print(load.line())
    print()
    print("| target | placement | runs | wall (whole `rpxprof run`), each | converged | "
          "processes (CPU:processes) | p50 | ± achieved | variance names |")
    print("|---|---|---:|---|---|---|---:|---|---|")
    for name, _, _, _ in targets:
        for cond, _ in conditions:
            rs = [r for r in rows if r[0] == name and r[1] == cond]
            if not rs:
                continue
            print(f"| {name} | {cond} | {len(rs)} | "
                  f"{', '.join(f'{r[2]:.1f} s' for r in rs)} | "
                  f"{sum(1 for r in rs if r[8])}/{len(rs)} | "
                  f"{'; '.join(f'{r[4]} ({r[5]})' for r in rs)} | "
                  f"{statistics.median(r[6] for r in rs):.4g} ms | "
                  f"{', '.join(pct(r[7]) for r in rs)} | "
                  f"{', '.join(r[9] for r in rs)} |")


if __name__ == "__main__":
    main()
