"""A sweep against its points run one after another (issue 40 §1): the packaged
demo_depth (real work on a uint8 image, in proportion to its pixels) at four image
sizes, measured (a) by one `rpxprof sweep`, the points' processes interleaved, and
(b) as four separate `rpxprof run`s of the same inputs, one after another. Per round:
the wall time of each and the neighbouring points' p50 ratios; over the rounds, how far
each ratio moved (max/min: 1.000 is perfect; what the machine's drift between the
points adds) and how far each point's p50 moved.

usage: python3 bench/bench_sweep.py [BUILD] [--rounds R] [--processes K] [--repeats N]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import machine_line

SHAPES = ["60x80x3", "120x160x3", "240x320x3", "480x640x3"]
HEIGHTS = SHAPES
ENV = dict(os.environ)


def rpx(build, *args):
    subprocess.run([os.path.join(build, "rpxprof"), *map(str, args)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--processes", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=600)
    a = ap.parse_args()
    model = os.path.join(a.build, "librpxprof-demo.so") + ":demo_depth"
    common = ["--processes", a.processes, "--repeats", a.repeats, "--warmup", 5]
    print(f"# {machine_line()}; load {os.getloadavg()[0]:.1f}")
    print(f"# demo_depth at {', '.join(SHAPES)}: {a.processes} processes x {a.repeats // a.processes} calls "
          f"a point; {a.rounds} rounds, the two ways alternating")
    rows, p50s = [], {"sweep": {h: [] for h in HEIGHTS}, "runs": {h: [] for h in HEIGHTS}}
    with tempfile.TemporaryDirectory(prefix="rpxbench-sweep-") as d:
        for h in HEIGHTS:
            rpx(a.build, "inputs", "make", f"{d}/in{h}.npz", f"rgb={h}:uint8=random")
        for r in range(a.rounds):
            out = f"{d}/sweep{r}"
            t0 = time.monotonic()
            rpx(a.build, "sweep", "--model", model, "--make", "rgb=1x1x3:uint8",
                "--vary", "rgb=" + ",".join(SHAPES), *common, "--out-dir", out)
            t_sweep = time.monotonic() - t0
            with open(f"{out}/sweep.json") as f:
                sw = json.load(f)
            s_p50 = {p["value"]: p["p50_ms"] for p in sw["points"]}
            t0 = time.monotonic()
            r_p50 = {}
            for h in HEIGHTS:
                rpx(a.build, "run", "--model", model, "--inputs", f"{d}/in{h}.npz", *common, "-q",
                    "--output", f"{d}/run{r}_{h}.json")
                with open(f"{d}/run{r}_{h}.json") as f:
                    r_p50[h] = json.load(f)["latency"]["p50_ms"]
            t_runs = time.monotonic() - t0
            for h in HEIGHTS:
                p50s["sweep"][h].append(s_p50[h])
                p50s["runs"][h].append(r_p50[h])
            ratios = [[v[HEIGHTS[i + 1]] / v[HEIGHTS[i]] for i in range(len(HEIGHTS) - 1)]
                      for v in (s_p50, r_p50)]
            rows.append((t_sweep, t_runs, ratios[0], ratios[1]))
            print(f"round {r}: wall sweep {t_sweep:.2f} s, runs {t_runs:.2f} s; neighbours' "
                  f"p50 ratios sweep {' '.join('%.3f' % x for x in ratios[0])}, runs "
                  f"{' '.join('%.3f' % x for x in ratios[1])}; sweep exponent "
                  f"{sw['scaling']['exponent']:.3f}", flush=True)
    med = statistics.median
    print(f"median wall: sweep {med(r[0] for r in rows):.2f} s, separate runs "
          f"{med(r[1] for r in rows):.2f} s")
    for k, col in (("sweep", 2), ("runs", 3)):
        moved = [max(r[col][i] for r in rows) / min(r[col][i] for r in rows)
                 for i in range(len(HEIGHTS) - 1)]
        print(f"neighbours' p50 ratio max/min over the rounds, {k}: median {med(moved):.4f}, "
              f"worst {max(moved):.4f}")
    for k in ("sweep", "runs"):
        across = [max(v) / min(v) for v in p50s[k].values()]
        print(f"each point's p50 max/min over the rounds, {k}: median {med(across):.4f}, "
              f"worst {max(across):.4f}")


if __name__ == "__main__":
    sys.exit(main())
