#!/usr/bin/python3
"""Real networks through real runtimes (issue 11): for each network and runtime,
the measured p50 under `rpxprof run --cost`, the host-CPU roofline bound from
the same report, and the achieved fraction of the bound.

usage: bench_examples.py BUILD_DIR [REPEATS]
Exports the networks with examples/export_model.py (Debian's torch, random
weights), runs every pair, prints a Markdown table for BENCHMARKS.md."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)



def main():
    build = os.path.abspath(sys.argv[1])
    repeats = sys.argv[2] if len(sys.argv) > 2 else "20"
    rpxprof = os.path.join(build, "rpxprof")
    ex = os.path.join(build, "examples")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for net in ("mobilenet_v2", "lraspp"):
            subprocess.run([sys.executable, os.path.join(SOURCE, "examples", "export_model.py"),
                            tmp, "--net", net, "--size", "480x640"], check=True,
                           capture_output=True)
        cpus = len(os.sched_getaffinity(0))
        runs = [("MobileNetV2", "mobilenet_v2", "OpenCV 4.6 DNN",
                 f"{ex}/librpx-opencv-dnn.so:opencv_dnn_predict",
                 {"RPX_OPENCV_CONFIG": f"{tmp}/mobilenet_v2.opencv-dnn.conf"}),
                ("MobileNetV2", "mobilenet_v2", "libtorch 1.13 (TorchScript)",
                 f"{ex}/librpx-libtorch.so:libtorch_predict",
                 {"RPX_LIBTORCH_CONFIG": f"{tmp}/mobilenet_v2.libtorch.conf"}),
                ("MobileNetV2", "mobilenet_v2", "libtorch 1.13, set_num_threads(1)",
                 f"{ex}/librpx-libtorch.so:libtorch_predict",
                 {"RPX_LIBTORCH_CONFIG": f"{tmp}/mobilenet_v2.libtorch.conf",
                  "RPX_LIBTORCH_THREADS": "1"}),
                ("MobileNetV2", "mobilenet_v2", "libtorch 1.13, threads left at the default",
                 f"{ex}/librpx-libtorch.so:libtorch_predict",
                 {"RPX_LIBTORCH_CONFIG": f"{tmp}/mobilenet_v2.libtorch.conf",
                  "RPX_LIBTORCH_THREADS": "0"}),
                ("LR-ASPP MobileNetV3-L", "lraspp", "libtorch 1.13 (TorchScript)",
                 f"{ex}/librpx-libtorch.so:libtorch_predict",
                 {"RPX_LIBTORCH_CONFIG": f"{tmp}/lraspp.libtorch.conf"}),
                ("LR-ASPP MobileNetV3-L", "lraspp", "Python 3.11, torch 1.13 eager (my_model.py)",
                 "my_model:predict_depth",
                 {"PYTHONPATH": os.path.join(SOURCE, "examples", "python")}),
                ("LR-ASPP MobileNetV3-L", "lraspp",
                 "Python 3.11, torch 1.13 eager, threads left at the default",
                 "my_model:predict_depth",
                 {"PYTHONPATH": os.path.join(SOURCE, "examples", "python"),
                  "MY_MODEL_THREADS": "0"})]
        for name, net, runtime, model, env in runs:
            out = os.path.join(tmp, "r.json")
            subprocess.run([rpxprof, "run", "--model", model, "--inputs", f"{tmp}/frame.npz",
                            "--cost", f"{tmp}/{net}.onnx", "--precision", "fp32", "--unit",
                            "frame", "--warmup", "3", "--repeats", repeats, "--quiet",
                            "--output", out], check=True, env={**os.environ, **env})
            with open(out) as f:
                r = json.load(f)
            b = r["roofline"]["host-cpu"]
            threads = int(env.get("RPX_LIBTORCH_THREADS", cpus)) or "default"
            if r.get("python"):
                threads = r["python"]["torch_num_threads"]
            rows.append((name, runtime, r["efficiency"]["flops"] / 1e9, r["latency"]["p50_ms"],
                         b["ideal"]["latency_ms"], b["achieved_fraction"]["ideal"],
                         r["memory"]["cpu_inference_peak_mb"], b["gpu"]["source"], threads))
    print(f"machine: {machine_line()}; "
          f"{repeats} timed calls after 3 warmup, 480x640 rgb frame")
    print(f"host-CPU peak: {rows[0][7]}")
    print()
    print("| network | runtime | threads | GFLOP | p50 | bound (host CPU) | achieved fraction | inference peak RSS |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, runtime, gflop, p50, bound, frac, rss, _, threads in rows:
        print(f"| {name} | {runtime} | {threads} | {gflop:.2f} | {p50:.1f} ms | {bound:.1f} ms | "
              f"{frac:.3f} | {rss:.0f} MiB |")


if __name__ == "__main__":
    main()
