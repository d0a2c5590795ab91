#!/usr/bin/python3
"""Calibration of `rpxprof compare --run` (issue 16): A/A pairs (busywait against
busywait_scaled, stream against stream_scaled, both at RPX_TEST_SCALE=1.0) and A/B pairs with
B 2 % and 5 % slower (RPX_TEST_SCALE=1.02, 1.05): the verdict counts, the false-difference
rate on A/A (faster or slower) with its 95 % Clopper-Pearson interval, the rate of `same`, the
detection rate (slower) of each slowdown, and the mean wall time of one comparison. The
conditions alternate pair by pair, so a drift of the machine falls on all of them.

usage: bench_compare_calibration.py RPXPROF TEST_MODELS_SO [AA_PAIRS (20)] [AB_PAIRS (10)]
       [BUSY_NS (200000)] [PROCESSES (10)] [REPEATS (1000)] [DESIGNS (paired,interleaved)]
DESIGNS: compare --run's pairs by CPU (paired, its default since issue 27) and/or the earlier
design (interleaved: --unpaired), alternating comparison by comparison in the same run.
Prints Markdown tables for BENCHMARKS.md, then one line per comparison."""
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402
from bench_runs import LoadLog  # noqa: E402

VERDICTS = ("faster", "slower", "same", "inconclusive")


def clopper_pearson(k, n):
    """The exact 95 % interval of k successes in n: the binomial tails found by bisection (no
    scipy: the calibration is long, and its summary must not fail at the end)."""
    from math import comb

    def cdf(j, p):  # P(X <= j), X ~ Bin(n, p)
        return sum(comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(j + 1))

    def solve(f, rising):  # the p in (0, 1) where f(p), monotone, crosses 0.025
        a, b = 0.0, 1.0
        for _ in range(100):
            m = (a + b) / 2
            if (f(m) < 0.025) == rising:
                a = m
            else:
                b = m
        return (a + b) / 2
    lo = 0.0 if k == 0 else solve(lambda p: 1 - cdf(k - 1, p), True)  # P(X >= k)
    hi = 1.0 if k == n else solve(lambda p: cdf(k, p), False)  # P(X <= k)
    return lo, hi


def main():
    rpxprof, models = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    arg = lambda i, d: sys.argv[i] if len(sys.argv) > i else d  # noqa: E731
    aa, ab = int(arg(3, "20")), int(arg(4, "10"))
    busy_ns, k, repeats = arg(5, "200000"), arg(6, "10"), arg(7, "1000")
    designs = arg(8, "paired,interleaved").split(",")
    cases = [(f"busywait {int(busy_ns) / 1000:g} µs", "busywait", {"RPX_TEST_BUSY_NS": busy_ns}),
             ("stream 8 MiB", "stream", {"RPX_TEST_STREAM_MB": "8"})]
    scales = (("1.0", aa), ("1.02", ab), ("1.05", ab))
    load = LoadLog()
    raw = []
    with tempfile.TemporaryDirectory() as tmp:
        x = os.path.join(tmp, "x.npz")
        subprocess.run([rpxprof, "inputs", "make", x, "x=1:float32=0"], check=True,
                       stdout=subprocess.DEVNULL)
        for i in range(max(aa, ab)):
            for name, sym, env in cases:
                for (scale, n), design in itertools.product(scales, designs):
                    if i >= n:
                        continue
                    load.take()
                    t0 = time.monotonic()
                    p = subprocess.run([rpxprof, "compare", "--run", "--model", f"{models}:{sym}",
                                        "--model", f"{models}:{sym}_scaled", "--inputs", x,
                                        "--processes", k, "--repeats", repeats, "--json"]
                                       + (["--unpaired"] if design == "interleaved" else []),
                                       env={**os.environ, **env, "RPX_TEST_SCALE": scale},
                                       capture_output=True, text=True, timeout=600)
                    wall = time.monotonic() - t0
                    if p.returncode != 0:
                        sys.exit(f"compare failed ({p.returncode}): {p.stderr}")
                    d = json.loads(p.stdout)
                    raw.append({"model": name, "scale": scale, "design": d.get("design", design),
                                "verdict": d["verdict"],
                                "p50_ratio": d["p50_ratio"], "p50_ratio_ci": d["p50_ratio_ci"],
                                "p_value": d["p_value"], "wall_s": round(wall, 2),
                                "load1": round(load.samples[-1], 2)})
    print(f"machine: {machine_line()}; `rpxprof compare --run --processes {k} --repeats {repeats}` "
          f"(K = {k} worker processes per target, {repeats} timed calls per target, warmup 10 per "
          "process, threshold 1 %), ABBA by process; designs: " + ", ".join(designs))
    print(load.line())
    print()
    print("| model | design | B / A | pairs | faster | slower | same | inconclusive | B/A p50 ratio (mean) "
          "| interval ± (median) | p < 0.05 | wall per comparison |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    summary = []
    for name, _, _ in cases:
        for design, (scale, _) in itertools.product(designs, scales):
            rs = [r for r in raw if r["model"] == name and r["scale"] == scale
                  and r["design"] == ("paired_by_cpu" if design == "paired" else design)]
            c = {v: sum(1 for r in rs if r["verdict"] == v) for v in VERDICTS}
            hw = [(r["p50_ratio_ci"][1] - r["p50_ratio_ci"][0]) / 2 for r in rs
                  if r["p50_ratio_ci"] and None not in r["p50_ratio_ci"]]
            ps = sum(1 for r in rs if r["p_value"] is not None and r["p_value"] < 0.05)
            print(f"| {name} | {design} | {scale} | {len(rs)} | {c['faster']} | {c['slower']} | {c['same']} | "
                  f"{c['inconclusive']} | {statistics.mean(r['p50_ratio'] for r in rs):.4f} | "
                  f"±{100 * statistics.median(hw):.2f} % | {ps}/{len(rs)} | "
                  f"{statistics.mean(r['wall_s'] for r in rs):.1f} s |")
            summary.append((name, design, scale, rs, c))
    print()
    print("| model | design | false differences on A/A (faster or slower) [95 % CI] | `same` on A/A "
          "| detected 2 % (slower) | detected 5 % (slower) |")
    print("|---|---|---:|---:|---:|---:|")
    for name, design in [(n, d) for n, _, _ in cases for d in designs]:
        s = {scale: (rs, c) for n, dd, scale, rs, c in summary if n == name and dd == design}
        rs, c = s["1.0"]
        fd = c["faster"] + c["slower"]
        lo, hi = clopper_pearson(fd, len(rs))
        det = lambda sc: f"{s[sc][1]['slower']}/{len(s[sc][0])} ({100 * s[sc][1]['slower'] / len(s[sc][0]):.0f} %)"  # noqa: E731,E501
        print(f"| {name} | {design} | {fd}/{len(rs)} = {100 * fd / len(rs):.0f} % [{100 * lo:.0f}, {100 * hi:.0f} %] | "
              f"{c['same']}/{len(rs)} ({100 * c['same'] / len(rs):.0f} %) | {det('1.02')} | {det('1.05')} |")
    print()
    for r in raw:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
