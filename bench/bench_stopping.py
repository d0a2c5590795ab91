#!/usr/bin/python3
"""Adaptive stopping against the fixed default (issue 16): for demo_depth and MobileNetV2
through OpenCV DNN and libtorch, `rpxprof run --repeats R` (default processes) and
`rpxprof run --repeats R --target-precision 1% --max-time T`, side by side (fixed, then
adaptive, for each target in turn): wall time, calls, processes, the p50's achieved
precision (half the interval's width over its centre) and whether it converged.

usage: bench_stopping.py BUILD_DIR [SIZE (224x224)] [REPEATS (1000)] [MAX_TIME (120)]
Exports MobileNetV2 with examples/export_model.py (Debian's torch, random weights);
needs ./scripts/setup.sh --with-examples. Prints a Markdown table for BENCHMARKS.md."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402
from bench_runs import LoadLog, half_width, p50_ci, pct, run_report  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    build = os.path.abspath(sys.argv[1])
    size = sys.argv[2] if len(sys.argv) > 2 else "224x224"
    repeats = sys.argv[3] if len(sys.argv) > 3 else "1000"
    max_time = sys.argv[4] if len(sys.argv) > 4 else "120"
    rpxprof, ex = os.path.join(build, "rpxprof"), os.path.join(build, "examples")
    load = LoadLog()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(SOURCE, "examples", "export_model.py"), tmp,
                        "--net", "mobilenet_v2", "--size", size], check=True, capture_output=True)
        demo = os.path.join(tmp, "demo.npz")
        subprocess.run([rpxprof, "inputs", "make", demo, "rgb=480x640x3:uint8=128"], check=True,
                       stdout=subprocess.DEVNULL)
        targets = [("demo_depth (480x640)", "rpxprof-demo:demo_depth", demo, {}),
                   (f"MobileNetV2 {size}, OpenCV 4.6 DNN", f"{ex}/librpx-opencv-dnn.so:opencv_dnn_predict",
                    f"{tmp}/frame.npz", {"RPX_OPENCV_CONFIG": f"{tmp}/mobilenet_v2.opencv-dnn.conf"}),
                   (f"MobileNetV2 {size}, libtorch 1.13", f"{ex}/librpx-libtorch.so:libtorch_predict",
                    f"{tmp}/frame.npz", {"RPX_LIBTORCH_CONFIG": f"{tmp}/mobilenet_v2.libtorch.conf"})]
        for name, model, inputs, env in targets:
            base = ["--model", model, "--inputs", inputs, "--unit", "frame", "--repeats", repeats]
            for mode, extra in ((f"fixed {repeats} calls", []),
                                (f"--target-precision 1% --max-time {max_time}",
                                 ["--target-precision", "1%", "--max-time", max_time])):
                load.take()
                try:
                    r, wall = run_report(rpxprof, base + extra, os.path.join(tmp, "r.json"), env,
                                         timeout=int(max_time) * 3 + 120)
                except subprocess.TimeoutExpired as e:
                    print(f"{name}, {mode}: killed after {e.timeout} s", file=sys.stderr, flush=True)
                    continue
                load.take()
                p50, lo, hi = p50_ci(r)
                st = r.get("stopping") or {}
                achieved = st.get("achieved", half_width(p50, lo, hi))
                rows.append((name, mode, wall, r["measured_calls"], r["processes"], p50, achieved,
                             st.get("converged", "—") if st else "—"))
                print(f"{name}, {mode}: {rows[-1][2:]}", file=sys.stderr, flush=True)
    print(f"machine: {machine_line()}; repeats {repeats} (fixed: in the default processes; "
          f"adaptive: {repeats}/K calls per added process), warmup 10 per process")
    print(load.line())
    print()
    print("| target | mode | wall (whole `rpxprof run`) | calls | processes | p50 | ± achieved | converged |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name, mode, wall, calls, procs, p50, ach, conv in rows:
        conv = {True: "yes", False: "**no**"}.get(conv, conv)
        print(f"| {name} | {mode} | {wall:.1f} s | {calls} | {procs} | {p50:.4g} ms | "
              f"{pct(ach)} | {conv} |")


if __name__ == "__main__":
    main()
