#!/usr/bin/env python3
"""ONNX cost analysis benchmark (issue 6): time and memory of
rpx_cost_analyze_onnx against the weight size.

    bench_cost.py --bench BENCH_COST --cli RPXPROF --rss-of RSS_OF --models DIR --work DIR [--repeats N]

Models (made once in --work, ViT-B/16 exported once into --models):
  * ViT-B/16 (torchvision, opset 13) with its weights embedded in the file;
  * the same saved with external data (onnx.save(save_as_external_data=True)),
    with the data file present and with it deleted;
  * a synthetic chain of MatMuls whose weights grow 16 MiB → 1 GiB, embedded;
  * a 4 GiB model (weights declared external, file absent: over 2 GiB a model
    must use external data).
For each: the in-process analysis time (median of N, bench_cost) and the peak
RSS of `rpxprof cost MODEL` as a process (rss_of: ru_maxrss of the child).
For the embedded ViT file also a cold page cache (its pages evicted with
POSIX_FADV_DONTNEED before each of 5 runs of `rpxprof cost`: only the field
headers and small tensors are read from disk). For scale, the peak RSS of
`onnx.load` (Python) on the same file.
Prints a Markdown table for BENCHMARKS.md and the raw JSON."""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORT = os.path.join(HERE, "..", "tests", "fixtures", "onnx", "export_torchvision.py")


def rss_of(rss, *cmd):
    p = subprocess.run([rss, *cmd], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    line = [x for x in p.stderr.splitlines() if x.startswith("rss_of:")][-1]
    kv = dict(f.split("=") for f in line.split()[1:])
    return int(kv["maxrss_kib"]), float(kv["wall_s"])


def chain(path, mib):
    """x[1,K] → MatMul(W_i[K,K]) × L: K×K×4×L bytes of weights, embedded."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    k = 1024
    layers = max(1, mib * (1 << 20) // (k * k * 4))
    nodes, inits, prev = [], [], "x"
    for i in range(layers):
        inits.append(numpy_helper.from_array(np.zeros((k, k), np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"h{i}"]))
        prev = f"h{i}"
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, k])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def external_4gib(path):
    """Weights declared in an external file that does not exist."""
    import onnx
    from onnx import TensorProto, helper
    k, layers = 16384, 4  # 4 x 1 GiB
    nodes, inits, prev = [], [], "x"
    for i in range(layers):
        t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[k, k])
        t.data_location = TensorProto.EXTERNAL
        for key, val in (("location", "weights.bin"), ("offset", str(i * k * k * 4)),
                         ("length", str(k * k * 4))):
            e = t.external_data.add()
            e.key, e.value = key, val
        inits.append(t)
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"h{i}"]))
        prev = f"h{i}"
    g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, k])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser()
    for a in ("--bench", "--cli", "--rss-of", "--models", "--work"):
        ap.add_argument(a, required=True)
    ap.add_argument("--repeats", type=int, default=21)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    subprocess.run([sys.executable, EXPORT, a.models, "vit_b_16"], check=True)
    vit = os.path.join(a.models, "vit_b_16.onnx")

    import onnx
    ext_dir, gone_dir = os.path.join(a.work, "vit_ext"), os.path.join(a.work, "vit_ext_gone")
    os.makedirs(ext_dir, exist_ok=True)
    os.makedirs(gone_dir, exist_ok=True)
    ext = os.path.join(ext_dir, "vit_b_16.onnx")
    gone = os.path.join(gone_dir, "vit_b_16.onnx")
    if not os.path.exists(ext):
        m = onnx.load(vit)
        onnx.save(m, ext, save_as_external_data=True, all_tensors_to_one_file=True,
                  location="vit_b_16.onnx.data")
        del m
    with open(ext, "rb") as f, open(gone, "wb") as g:
        g.write(f.read())
    rows = [("ViT-B/16, weights embedded", vit, ["--input", "input=1x3x224x224"]),
            ("ViT-B/16, external data", ext, []),
            ("ViT-B/16, external data file deleted", gone, [])]
    for mib in (16, 64, 256, 1024):
        p = os.path.join(a.work, f"chain_{mib}mib.onnx")
        if not os.path.exists(p):
            chain(p, mib)
        rows.append((f"MatMul chain, {mib} MiB embedded", p, []))
    big = os.path.join(a.work, "external_4gib.onnx")
    if not os.path.exists(big):
        external_4gib(big)
    rows.append(("MatMul chain, 4 GiB external (file absent)", big, []))

    results = []
    for label, path, extra in rows:
        subprocess.run([a.cli, "cost", path], capture_output=True)  # warm the page cache
        b = subprocess.run([a.bench, path, str(a.repeats), *extra], capture_output=True, text=True)
        if b.returncode != 0:
            raise SystemExit(f"{label}: {b.stderr}")
        r = json.loads(b.stdout)
        r["label"] = label
        r["data_bytes"] = sum(os.path.getsize(os.path.join(os.path.dirname(path), f))
                              for f in os.listdir(os.path.dirname(path))
                              if f.endswith(".data") and os.path.basename(path) in f) if "external" in label else 0
        r["cli_maxrss_kib"], r["cli_wall_s"] = rss_of(a.rss_of, a.cli, "cost", path)
        results.append(r)
    py_rss, py_wall = rss_of(a.rss_of, sys.executable, "-c", f"import onnx; onnx.load({vit!r})")
    cold = []
    for _ in range(5):
        fd = os.open(vit, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
        cold.append(rss_of(a.rss_of, a.cli, "cost", vit))
    cold.sort(key=lambda r: r[1])
    cold_rss, cold_wall = cold[len(cold) // 2]

    print("| model | .onnx file | analysis, median of %d | `rpxprof cost` peak RSS | process wall |" % a.repeats)
    print("|---|---|---|---|---|")
    for r in results:
        print(f"| {r['label']} | {r['file_bytes'] / 2**20:.1f} MiB | {r['median_ms']:.3g} ms "
              f"(min {r['min_ms']:.3g}) | {r['cli_maxrss_kib'] / 1024:.1f} MiB | {r['cli_wall_s'] * 1e3:.0f} ms |")
    print(f"| ViT-B/16, weights embedded, cold page cache | {results[0]['file_bytes'] / 2**20:.1f} MiB | "
          f"| {cold_rss / 1024:.1f} MiB | {cold_wall * 1e3:.0f} ms (median of 5) |")
    print(f"\nfor scale: python3 `onnx.load` of the embedded ViT-B/16 file: peak RSS "
          f"{py_rss / 1024:.0f} MiB, {py_wall:.2f} s")
    print(json.dumps({"results": results, "cold": {"maxrss_kib": cold_rss, "wall_s": cold_wall},
                      "onnx_load_maxrss_kib": py_rss}, indent=1))


if __name__ == "__main__":
    main()
