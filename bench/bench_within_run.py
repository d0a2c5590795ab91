#!/usr/bin/python3
"""What a run's processes sample and what they share (issue 36, "Move what is fixed per run
inside the run"): back-to-back runs of `rpxprof run --processes 5`, in sets of six, with the
workers' variation (src/runner/vary.c) chosen by the test knob RPX_TEST_VARY: `none` (every
process reads the parent's pages of the inputs at the parent's addresses: before), `inputs`
(each process its own copy of the inputs at a random offset), `layout` (stack, heap and mmap
pads only) and `all` (the default of rpxprof run: after). Modes alternate run by run, so a drift
of the machine falls on all of them.

For each case and mode: the share of runs whose 95 % p50 interval holds the median of the six
p50s of its set (the issue's measure, 3/6 for the demo before), the spread of the processes'
p50s inside a run (median over runs of the sd of their logs, in %) and the spread of the runs'
p50s inside a set (median over sets of the sd of their logs, in %): a factor that the processes
sample moves spread from the second to the first; what is left between runs is time.

Cases: the demo (rpxprof-demo:demo_depth on a 480x640 frame), an 8 MiB stream (test model
`stream`, its buffer allocated in setup) and a model that reads 8 MiB of inputs (test model
`read_inputs`).

usage: bench_within_run.py RPXPROF TEST_MODELS_SO [SETS (2)] [MODES (none,all)]
       [CASES (demo,stream,read_inputs)] [PROCESSES (5)] [REPEATS (1000)]
Prints Markdown for BENCHMARKS.md, then one JSON line per run."""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402
from bench_runs import LoadLog  # noqa: E402


def sd_log(xs):
    return 100 * statistics.stdev(math.log(x) for x in xs) if len(xs) > 1 else float("nan")


def main():
    rpxprof, models = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    arg = lambda i, d: sys.argv[i] if len(sys.argv) > i else d  # noqa: E731
    sets, modes = int(arg(3, "2")), arg(4, "none,all").split(",")
    wanted, k, repeats = arg(5, "demo,stream,read_inputs").split(","), arg(6, "5"), arg(7, "1000")
    load = LoadLog()
    raw = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {"tiny": "x=1:float32=0", "frame": "rgb=480x640x3:uint8=128",
                 "big": "x=2048x4096:uint8=3"}
        for name, spec in files.items():
            subprocess.run([rpxprof, "inputs", "make", os.path.join(tmp, name + ".npz"), spec],
                           check=True, stdout=subprocess.DEVNULL)
        cases = {"demo": ("demo 480x640", "rpxprof-demo:demo_depth", "frame", {}),
                 "stream": ("stream 8 MiB", f"{models}:stream", "tiny",
                            {"RPX_TEST_STREAM_MB": "8"}),
                 "read_inputs": ("reads 8 MiB of inputs", f"{models}:read_inputs", "big", {})}
        cases = {c: cases[c] for c in wanted}
        out = os.path.join(tmp, "r.json")
        for s in range(sets):
            for i in range(6):
                for case, (_, model, inputs, env) in cases.items():
                    for mode in modes:
                        load.take()
                        t0 = time.monotonic()
                        subprocess.run([rpxprof, "run", "--model", model, "--inputs",
                                        os.path.join(tmp, inputs + ".npz"), "--processes", k,
                                        "--repeats", repeats, "--warmup", "10", "--output", out,
                                        "--quiet"],
                                       env={**os.environ, **env, "RPX_TEST_VARY": mode},
                                       check=True, stdout=subprocess.DEVNULL, timeout=600)
                        wall = time.monotonic() - t0
                        with open(out) as f:
                            r = json.load(f)
                        raw.append({"case": case, "mode": mode, "set": s, "i": i,
                                    "p50_ms": r["latency"]["p50_ms"],
                                    "p50_ci_ms": r["latency_ci"]["p50_ms"],
                                    "process_p50_ms": [p["p50_ms"] for p in r["latency_by_process"]],
                                    "varied": r["latency_ci"].get("varied"),
                                    "wall_s": round(wall, 2), "load1": round(load.samples[-1], 2)})
    print(f"machine: {machine_line()}; `rpxprof run --processes {k} --repeats {repeats} --warmup 10`"
          f", {sets} set(s) of six back-to-back runs per case and mode, modes alternating run by run")
    print(load.line())
    print()
    print("| case | mode (RPX_TEST_VARY) | runs | interval holds the median of its six | "
          "spread of processes in a run (sd log, median) | spread of runs in a set (sd log, median) "
          "| p50 (median) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for case, (label, *_rest) in cases.items():
        for mode in modes:
            rs = [r for r in raw if r["case"] == case and r["mode"] == mode]
            held, between = 0, []
            for s in range(sets):
                six = [r for r in rs if r["set"] == s]
                med = statistics.median(r["p50_ms"] for r in six)
                held += sum(1 for r in six if r["p50_ci_ms"] and r["p50_ci_ms"][0] <= med
                            <= r["p50_ci_ms"][1])
                between.append(sd_log([r["p50_ms"] for r in six]))
            within = statistics.median(sd_log(r["process_p50_ms"]) for r in rs)
            print(f"| {label} | {mode} | {len(rs)} | {held}/{len(rs)} | {within:.2f} % | "
                  f"{statistics.median(between):.2f} % | "
                  f"{1000 * statistics.median(r['p50_ms'] for r in rs):.2f} µs |")
    print()
    for r in raw:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
