#!/usr/bin/python3
"""Coverage of `rpxprof compare --run`'s paired interval on A/A (issue 36, "Intervals that hold
what they claim"): N comparisons of a target against itself, for an 8 MiB stream (test model
`stream`, RPX_TEST_STREAM_MB=8) and the demo (`rpxprof-demo:demo_depth` on a 480x640 frame),
alternating case by case so that a drift of the machine falls on both. Counts the 95 % p50 ratio
intervals that leave out 1.0 (the target: at most 5 %), with the exact 95 % interval of that
share, the verdicts, the median half-width and the wall time of one comparison. Each line of the
raw data keeps the per-pair log ratios (d_k = log(new_k / base_k) of the per-process p50s), so
that an interval rule can be checked again on the same comparisons.

usage: bench_paired_aa.py RPXPROF TEST_MODELS_SO [N (30)] [PROCESSES (10)] [REPEATS (1000)]
       [CASES (stream,demo)] [MODES (all)]
MODES: the workers' variation (RPX_TEST_VARY, src/runner/vary.c) of each comparison, e.g.
none,all: the modes alternate comparison by comparison.
Prints Markdown for BENCHMARKS.md, then one JSON line per comparison."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402
from bench_compare_calibration import clopper_pearson  # noqa: E402
from bench_runs import LoadLog  # noqa: E402


def t_only_excludes(d):
    """Whether the paired t interval without the floor from the calls' noise (rpxprof before
    issue 36: exp(mean(d) +- t sd(d) / sqrt(K))) leaves out 1.0, on the same pairs."""
    from scipy.stats import t as student
    k, m = len(d), statistics.mean(d)
    h = student.ppf(0.975, k - 1) * statistics.stdev(d) / k ** 0.5
    return m - h > 0 or m + h < 0


def per_process_p50(report):
    return [p["p50_ms"] for p in report["latency_by_process"]]


def main():
    rpxprof, models = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    arg = lambda i, d: sys.argv[i] if len(sys.argv) > i else d  # noqa: E731
    n, k, repeats = int(arg(3, "30")), arg(4, "10"), arg(5, "1000")
    wanted, modes = arg(6, "stream,demo").split(","), arg(7, "all").split(",")
    load = LoadLog()
    raw = []
    with tempfile.TemporaryDirectory() as tmp:
        tiny, frame = os.path.join(tmp, "x.npz"), os.path.join(tmp, "frame.npz")
        subprocess.run([rpxprof, "inputs", "make", tiny, "x=1:float32=0"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([rpxprof, "inputs", "make", frame, "rgb=480x640x3:uint8=128"], check=True,
                       stdout=subprocess.DEVNULL)
        cases = {"stream 8 MiB": (f"{models}:stream", tiny, {"RPX_TEST_STREAM_MB": "8"}),
                 "demo 480x640": ("rpxprof-demo:demo_depth", frame, {})}
        cases = {name: c for name, c in cases.items() if name.split()[0] in wanted}
        out = os.path.join(tmp, "out")
        for i in range(n):
            for (name, (model, inputs, env)), mode in ((c, m) for c in cases.items()
                                                        for m in modes):
                load.take()
                t0 = time.monotonic()
                p = subprocess.run([rpxprof, "compare", "--run", "--model", model, "--model", model,
                                    "--inputs", inputs, "--processes", k, "--repeats", repeats,
                                    "--json", "--out-dir", out],
                                   env={**os.environ, **env, "RPX_TEST_VARY": mode},
                                   capture_output=True, text=True,
                                   timeout=600)
                wall = time.monotonic() - t0
                if p.returncode != 0:
                    sys.exit(f"compare failed ({p.returncode}): {p.stderr}")
                d = json.loads(p.stdout)
                with open(os.path.join(out, "base.json")) as f:
                    b = per_process_p50(json.load(f))
                with open(os.path.join(out, "new.json")) as f:
                    nn = per_process_p50(json.load(f))
                raw.append({"case": name, "mode": mode, "i": i, "design": d["design"],
                            "verdict": d["verdict"],
                            "p50_ratio": d["p50_ratio"], "p50_ratio_ci": d["p50_ratio_ci"],
                            "p_value": d["p_value"], "d": [round(__import__("math").log(y / x), 7)
                                                           for x, y in zip(b, nn)],
                            "wall_s": round(wall, 2), "load1": round(load.samples[-1], 2)})
    print(f"machine: {machine_line()}; `rpxprof compare --run --processes {k} --repeats {repeats}`"
          f" of a target against itself, {n} times per case, cases alternating")
    print(load.line())
    print()
    print("| case | RPX_TEST_VARY | A/A comparisons | interval leaves out 1.0 [95 % CI] | faster | "
          "slower | same | inconclusive | half-width (median) | wall per comparison | "
          "without the floor: leaves out 1.0 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, mode in ((c, m) for c in cases for m in modes):
        rs = [r for r in raw if r["case"] == name and r["mode"] == mode]
        ci = [r["p50_ratio_ci"] for r in rs if r["p50_ratio_ci"]]
        out1 = sum(1 for lo, hi in ci if lo > 1 or hi < 1)
        lo, hi = clopper_pearson(out1, len(rs))
        v = {w: sum(1 for r in rs if r["verdict"] == w) for w in ("faster", "slower", "same",
                                                               "inconclusive")}
        hw = statistics.median((h - l) / 2 for l, h in ci) if ci else float("nan")
        print(f"| {name} | {mode} | {len(rs)} | {out1}/{len(rs)} = {100 * out1 / len(rs):.0f} % "
              f"[{100 * lo:.0f}, {100 * hi:.0f} %] | {v['faster']} | {v['slower']} | {v['same']} | "
              f"{v['inconclusive']} | ±{100 * hw:.2f} % | "
              f"{statistics.mean(r['wall_s'] for r in rs):.1f} s | "
              f"{sum(1 for r in rs if t_only_excludes(r['d']))}/{len(rs)} |")
    print()
    for r in raw:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
