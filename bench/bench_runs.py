"""Helpers shared by the issue 16 benchmarks (bench_processes.py, bench_stopping.py,
bench_compare_calibration.py): run rpxprof, read the load average, summarise intervals."""
import json
import os
import statistics
import subprocess
import time


def load1():
    """The 1-minute load average."""
    return os.getloadavg()[0]


class LoadLog:
    """Samples of the 1-minute load average taken around every measurement."""

    def __init__(self):
        self.samples = []

    def take(self):
        self.samples.append(load1())

    def line(self):
        s = self.samples or [load1()]
        busy = sum(1 for x in s if x > 2)
        return (f"1-minute load average during the runs: min {min(s):.1f}, median "
                f"{statistics.median(s):.1f}, max {max(s):.1f} ({busy} of {len(s)} samples above 2"
                f"{': other work shared the 2 cores' if busy else ''})")


def run_report(rpxprof, args, out, env=None, timeout=600):
    """`rpxprof run ARGS --output OUT --quiet`; returns (report, wall seconds of the process)."""
    t0 = time.monotonic()
    subprocess.run([rpxprof, "run", *args, "--output", out, "--quiet"], check=True,
                   env={**os.environ, **(env or {})}, timeout=timeout,
                   stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    with open(out) as f:
        return json.load(f), wall


def p50_ci(r):
    """(p50, lo, hi) of a report; lo, hi None when the interval is null."""
    ci = (r.get("latency_ci") or {}).get("p50_ms") or [None, None]
    return r["latency"]["p50_ms"], ci[0], ci[1]


def half_width(p50, lo, hi):
    """Half the interval's width over its centre: what --target-precision compares (workers.c)."""
    if lo is None or hi is None:
        return None
    return (hi - lo) / (hi + lo)


def pct(x, digits=2):
    return "null" if x is None else f"{100 * x:.{digits}f} %"
