#!/usr/bin/env python3
"""Aggregation at scale (issue 8): make N reports of S samples each (copies of
one real `rpxprof run` report with varied samples and statistics recomputed
numpy's way) under WORK/reports/<task>/<model>.json, then time
`rpxprof aggregate` on them.

usage: bench_aggregate.py RPXPROF WORK [--reports N] [--samples S] [--tasks T]"""
import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rpxprof")
    ap.add_argument("work")
    ap.add_argument("--reports", type=int, default=10000)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--tasks", type=int, default=10)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    npz = os.path.join(a.work, "frame.npz")
    subprocess.run([a.rpxprof, "inputs", "make", npz, "rgb=48x64x3:uint8"], check=True, capture_output=True)
    base_path = os.path.join(a.work, "base.json")
    subprocess.run([a.rpxprof, "run", "--model", "rpxprof-demo:demo_depth", "--inputs", npz, "--output",
                    base_path, "--unit", "frame", "--warmup", "2", "--repeats", str(a.samples),
                    "--flops", "1e9", "--params", "1e6", "--quiet"], check=True, capture_output=True)
    with open(base_path) as f:
        base = json.load(f)
    out = os.path.join(a.work, "reports")
    shutil.rmtree(out, ignore_errors=True)
    rng = np.random.default_rng(1)
    per_task = (a.reports + a.tasks - 1) // a.tasks
    t0 = time.time()
    made = 0
    for t in range(a.tasks):
        os.makedirs(os.path.join(out, f"task{t:02d}"))
        for m in range(per_task):
            if made == a.reports:
                break
            s = np.round(rng.lognormal(mean=random.uniform(-1, 2), sigma=0.1, size=a.samples) * 1e6) / 1e6
            r = dict(base)
            r["task"], r["model_name"] = f"task{t:02d}", f"model{m:04d}"
            r["latency_samples_ms"] = s.tolist()
            r["latency"] = dict(base["latency"], p50_ms=float(np.percentile(s, 50)),
                                p95_ms=float(np.percentile(s, 95)), p99_ms=float(np.percentile(s, 99)),
                                mean_ms=float(np.mean(s)), min_ms=float(s.min()), max_ms=float(s.max()),
                                std_ms=float(np.std(s, ddof=1)))
            with open(os.path.join(out, r["task"], r["model_name"] + ".json"), "w") as f:
                json.dump(r, f, indent=1)
            made += 1
    gen = time.time() - t0
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(out) for f in fs)
    agg = os.path.join(a.work, "agg")
    times = []
    for _ in range(3):
        subprocess.run(["sync"])
        t0 = time.perf_counter()
        p = subprocess.run([a.rpxprof, "aggregate", out, "--out-dir", agg], capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if p.returncode != 0:
            sys.exit(f"aggregate failed: {p.stdout}{p.stderr}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.path.join(agg, "validation.json")) as f:
        val = json.load(f)
    print(f"reports: {made} x {a.samples} samples, {size / 2**20:.0f} MiB of JSON (generated in {gen:.0f} s)")
    print(f"aggregate: {val['status']}, {val['profiles_found']} profiles; wall {min(times):.2f} s best of 3 "
          f"({', '.join(f'{t:.2f}' for t in times)}); peak RSS of the children {usage.ru_maxrss / 1024:.0f} MiB")
    print(f"figure.svg {os.path.getsize(os.path.join(agg, 'figure.svg')) / 2**20:.1f} MiB, "
          f"summary.csv {os.path.getsize(os.path.join(agg, 'summary.csv')) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
