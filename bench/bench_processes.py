#!/usr/bin/python3
"""Which default --processes (issue 16): for each model and K, N separate invocations of
`rpxprof run --repeats 1000 --processes K`; the spread of their p50s against each run's own
95 % interval of its p50, and how often one run's interval holds the other runs' p50s.

usage: bench_processes.py RPXPROF TEST_MODELS_SO [RUNS (8)] [K,K,... (1,5,10)]
Prints a Markdown table for BENCHMARKS.md and docs/statistics.md."""
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402
from bench_runs import LoadLog, half_width, p50_ci, pct, run_report  # noqa: E402


def main():
    rpxprof, models = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    ks = [int(k) for k in (sys.argv[4] if len(sys.argv) > 4 else "1,5,10").split(",")]
    cases = [("demo_depth (480x640 rgb)", "rpxprof-demo:demo_depth", "frame.npz", {}),
             ("stream 8 MiB", f"{models}:stream", "x.npz", {"RPX_TEST_STREAM_MB": "8"}),
             ("busywait 1 ms", f"{models}:busywait", "x.npz", {"RPX_TEST_BUSY_NS": "1000000"})]
    load = LoadLog()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        frame, x = os.path.join(tmp, "frame.npz"), os.path.join(tmp, "x.npz")
        import subprocess
        subprocess.run([rpxprof, "inputs", "make", frame, "rgb=480x640x3:uint8=128"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([rpxprof, "inputs", "make", x, "x=1:float32=0"], check=True,
                       stdout=subprocess.DEVNULL)
        for name, model, inputs, env in cases:
            res = {k: [] for k in ks}
            # the K values alternate run by run, so a drift of the machine falls on all of them
            for i in range(runs):
                for k in ks:
                    load.take()
                    r, wall = run_report(rpxprof, ["--model", model, "--inputs",
                                                   os.path.join(tmp, inputs), "--repeats", "1000",
                                                   "--processes", str(k)],
                                         os.path.join(tmp, "r.json"), env, timeout=300)
                    p50, lo, hi = p50_ci(r)
                    res[k].append((p50, lo, hi, r["latency_ci"]["covers"], wall))
            for k in ks:
                p50s = [v[0] for v in res[k]]
                med = statistics.median(p50s)
                hws = [half_width(*v[:3]) for v in res[k]]
                stated = [v for v in res[k] if v[1] is not None]
                # other runs' p50s inside one run's interval, over all ordered pairs
                inside = sum(1 for a in stated for b in res[k] if b is not a and a[1] <= b[0] <= a[2])
                pairs = len(stated) * (len(res[k]) - 1)
                holds_median = sum(1 for a in stated if a[1] <= med <= a[2])
                rows.append((name, k, res[k][0][3], min(p50s), max(p50s), med,
                             (max(p50s) - min(p50s)) / med, statistics.stdev(p50s) / statistics.mean(p50s),
                             statistics.median([h for h in hws if h is not None]) if stated else None,
                             max(h for h in hws if h is not None) if stated else None,
                             inside, pairs, holds_median, len(stated),
                             statistics.mean(v[4] for v in res[k])))
    print(f"machine: {machine_line()}; {runs} invocations per row, 1000 timed calls each, "
          "warmup 10 per process")
    print(load.line())
    print()
    print(f"| model | K | interval covers | p50 min–max ({runs} runs) | spread (max−min)/median | CV of p50 "
          "| each run's ±interval (median; max) | other runs' p50 inside a run's interval "
          "| runs whose interval holds the median p50 | wall per run |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for (name, k, covers, lo, hi, med, spread, cv, hw, hwmax, inside, pairs, holds, n,
         wall) in rows:
        print(f"| {name} | {k} | {covers} | {1000 * lo:.2f}–{1000 * hi:.2f} µs | {pct(spread)} | "
              f"{pct(cv)} | ±{pct(hw)}; ±{pct(hwmax)} | {inside}/{pairs} | {holds}/{n} | "
              f"{wall:.2f} s |")


if __name__ == "__main__":
    main()
