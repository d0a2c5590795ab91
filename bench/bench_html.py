"""The HTML report at scale (issue 28, BENCHMARKS.md "The HTML report"): a run of N calls
(default 1,000,000, `rpxprof-demo:demo_noop`, 5 processes, --call-records cpu so the CPU
figure is drawn too), then `rpxprof report` on it, timed; the page's size; and Debian's
chromium, headless, opening it from file://: its first paint and first contentful paint
(from its trace: the page's navigationStart to firstPaint and firstContentfulPaint), and the
wall time of a whole headless screenshot.

usage: bench_html.py RPXPROF WORKDIR [N[,N...]] [ROUNDS]   (default 50000,1000000 5: the
largest page is at RPX_HTML_POINT_LIMIT calls, every call a dot; beyond it, ranges)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import machine_line




def chromium(prof, *args):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        sys.exit("chromium is not installed (scripts/setup.sh installs it)")
    return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={prof}", *args], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, HOME=prof))


def main():
    rpx, work = sys.argv[1], sys.argv[2]
    ns = [int(x) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else [50_000, 1_000_000]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    os.makedirs(work, exist_ok=True)
    print(machine_line())
    for n in ns:
        one(rpx, work, n, rounds)


def one(rpx, work, n, rounds):
    npz, rep, page = (os.path.join(work, f) for f in ("in.npz", "run.json", "report.html"))
    subprocess.run([rpx, "inputs", "make", npz, "x=4:float32", "--force"], check=True, capture_output=True)
    subprocess.run([rpx, "run", "--model", "rpxprof-demo:demo_noop", "--inputs", npz, "--repeats", str(n),
                    "--warmup", "10", "--processes", "5", "-q", "--output", rep], check=True, capture_output=True)
    print(f"run report: {n} calls, {os.path.getsize(rep) / 2**20:.1f} MiB of JSON")
    gen = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run([rpx, "report", rep, "-o", page], check=True, capture_output=True)
        gen.append(time.perf_counter() - t0)
    size = os.path.getsize(page)
    print(f"rpxprof report: median {statistics.median(gen):.2f} s (min {min(gen):.2f}, max {max(gen):.2f}) "
          f"over {rounds}; page {size / 1024:.0f} KiB")
    fp, fcp, shot = [], [], []
    for _ in range(rounds):
        prof = tempfile.mkdtemp(prefix="rpxbench-")
        trace = os.path.join(prof, "trace.json")
        try:
            t0 = time.perf_counter()
            chromium(prof, "--hide-scrollbars", "--window-size=1100,2400",
                     f"--screenshot={os.path.join(work, 'report.png')}", "file://" + os.path.abspath(page))
            shot.append(time.perf_counter() - t0)
            chromium(prof, "--hide-scrollbars", "--window-size=1100,2400", "--trace-startup=loading,blink.user_timing",
                     "--trace-startup-format=json", f"--trace-startup-file={trace}", "--trace-startup-duration=8",
                     f"--screenshot={os.path.join(work, 'traced.png')}", "file://" + os.path.abspath(page))
            with open(trace) as f:
                t = json.load(f)
            ev = t["traceEvents"] if isinstance(t, dict) else t
            # the page's own navigation (by its navigationId) to its first (contentful) paint
            nav = {e["args"]["data"]["navigationId"]: e["ts"] for e in ev if e.get("name") == "navigationStart"
                   and e.get("args", {}).get("data", {}).get("documentLoaderURL", "").endswith("report.html")}
            for e in ev:
                nid = e.get("args", {}).get("data", {}).get("navigationId")
                if nid in nav and e.get("name") == "firstPaint":
                    fp.append((e["ts"] - nav[nid]) / 1000)
                if nid in nav and e.get("name") == "firstContentfulPaint":
                    fcp.append((e["ts"] - nav[nid]) / 1000)
        finally:
            shutil.rmtree(prof, ignore_errors=True)
    if not fp:
        sys.exit("chromium's trace has no firstPaint of the page")
    print(f"chromium (headless, from file://): first paint median {statistics.median(fp):.0f} ms "
          f"(max {max(fp):.0f}), first contentful paint median {statistics.median(fcp):.0f} ms, over {len(fp)}")
    print(f"chromium --screenshot, the whole process: median {statistics.median(shot):.2f} s")


if __name__ == "__main__":
    main()
