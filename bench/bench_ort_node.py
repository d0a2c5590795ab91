#!/usr/bin/python3
"""One ONNX file timed by rpxprof (`--runtime ort`) and by a loop over onnxruntime-node's own
`session.run` in Node (issue 39's acceptance), interleaved round by round (ABBA) in one run so
that a drift of the machine falls on both; then what `--layers` costs; then the p50s of the
same network through each runtime rpxprof has (ort, opencv, torch) side by side, interleaved
the same way.

Both sides run the same library (onnxruntime 1.31.1 from the npm package onnxruntime-node, the
one scripts/setup.sh fetches), one intra-op thread and one inter-op thread, sequential
execution, every graph optimisation, the same input (a 1x3x224x224 float32 tensor of 0.5), the
same number of warmup and timed calls in one process. Node times each `await session.run` with
process.hrtime.bigint(); rpxprof times the call as it times every call.

usage: bench_ort_node.py RPXPROF [ROUNDS (6)] [CALLS (60)]
Needs node and npm (Debian's), and torch/torchvision (Debian's) to export resnet18 with
random weights (opset 10, as examples/export_model.py exports for OpenCV 4.6). onnxruntime-node is installed with `npm install --ignore-scripts` into
${XDG_CACHE_HOME:-~/.cache}/rpxprof/ort-node (its postinstall would fetch CUDA parts; it is
not needed for the CPU). Prints Markdown for BENCHMARKS.md, then one JSON line per round."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402
from bench_runs import LoadLog  # noqa: E402

ORT_NODE_VERSION = "1.31.1"
NODE_LOOP = r"""
// node -e CODE A B C: process.argv is [node, A, B, C]
const ort = require(process.argv[1]);
(async () => {
  const [model, warmup, calls] = [process.argv[2], +process.argv[3], +process.argv[4]];
  const s = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, interOpNumThreads: 1,
      graphOptimizationLevel: 'all', executionMode: 'sequential'});
  const name = s.inputNames[0];
  const x = new ort.Tensor('float32', new Float32Array(3 * 224 * 224).fill(0.5), [1, 3, 224, 224]);
  for (let i = 0; i < warmup; i++) await s.run({[name]: x});
  const t = [];
  for (let i = 0; i < calls; i++) {
    const a = process.hrtime.bigint();
    await s.run({[name]: x});
    t.push(Number(process.hrtime.bigint() - a) / 1e6);
  }
  console.log(JSON.stringify({samples_ms: t, version: ort.env.versions}));
})();
"""


def cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rpxprof", "ort-node")


def ort_node_module():
    d = cache_dir()
    mod = os.path.join(d, "node_modules", "onnxruntime-node")
    if not os.path.isdir(mod):
        os.makedirs(d, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", d, "--ignore-scripts", "--no-audit", "--no-fund",
                        f"onnxruntime-node@{ORT_NODE_VERSION}"], check=True, stdout=subprocess.DEVNULL)
    return mod


def export_resnet18(work):
    path = os.path.join(work, "resnet18.onnx")
    # one file that every ONNX runtime here reads: OpenCV 4.6 needs opset 10 and no Identity
    # on an initializer (examples/export_model.py), which ONNX Runtime reads as well
    examples = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    code = ("import torch, torchvision, sys\n"
            "sys.path.insert(0, sys.argv[2])\n"
            "from export_model import drop_initializer_identities\n"
            "torch.manual_seed(0)\n"
            "m = torchvision.models.resnet18().eval()\n"
            "torch.onnx.export(m, torch.randn(1, 3, 224, 224), sys.argv[1], opset_version=10,\n"
            "                  input_names=['input'], output_names=['logits'])\n"
            "drop_initializer_identities(sys.argv[1])\n")
    subprocess.run(["/usr/bin/python3", "-c", code, path, examples], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    npz = os.path.join(work, "input.npz")
    code = ("import numpy as np, sys\n"
            "np.savez(sys.argv[1], input=np.full((1, 3, 224, 224), 0.5, np.float32))\n")
    subprocess.run(["/usr/bin/python3", "-c", code, npz], check=True)
    return path, npz


def rpx_run(rpxprof, model, npz, runtime, calls, out, extra=()):
    args = [rpxprof, "run", "--model", model, "--runtime", runtime, "--inputs", npz,
            "--threads", "1", "--processes", "1", "--warmup", "10", "--repeats", str(calls),
            "--quiet", "--output", out, *extra]
    if runtime == "ort":
        args[len(args):] = ["--inter-threads", "1", "--graph-opt", "all"]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def node_run(mod, model, calls):
    p = subprocess.run(["node", "-e", NODE_LOOP, mod, model, "10", str(calls)], check=True,
                       capture_output=True, text=True)
    return json.loads(p.stdout)


def main():
    rpxprof = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    log, rows = LoadLog(), []
    with tempfile.TemporaryDirectory() as work:
        model, npz = export_resnet18(work)
        mod = ort_node_module()
        out = os.path.join(work, "r.json")
        for r in range(rounds):
            order = ("rpx", "node") if r % 2 == 0 else ("node", "rpx")
            row = {"round": r}
            for side in order:
                log.take()
                if side == "rpx":
                    rep = rpx_run(rpxprof, model, npz, "ort", calls, out)
                    row["rpxprof_p50_ms"] = rep["latency"]["p50_ms"]
                    row["runtime"] = rep.get("runtime", {}).get("version")
                else:
                    res = node_run(mod, model, calls)
                    row["node_p50_ms"] = statistics.median(res["samples_ms"])
                    row["node_version"] = res["version"].get("node")
            row["ratio"] = row["rpxprof_p50_ms"] / row["node_p50_ms"]
            rows.append(row)
        # what --layers costs: the same run with and without it, alternating
        layer_rows = []
        for r in range(max(2, rounds // 2)):
            for with_layers in ((False, True) if r % 2 == 0 else (True, False)):
                log.take()
                extra = ("--layers",) if with_layers else ()
                t0 = os.times().elapsed
                rep = rpx_run(rpxprof, model, npz, "ort", calls, out, extra)
                wall = os.times().elapsed - t0
                lay = rep.get("layers") or {}
                layer_rows.append({"layers": with_layers, "wall_s": wall, "p50_ms": rep["latency"]["p50_ms"],
                                   "profiled_total_ms": lay.get("total_ms"),
                                   "overhead": lay.get("overhead"),
                                   "profiled_calls": lay.get("profiled_calls")})
        # the three runtimes side by side
        side_rows = {}
        for r in range(max(2, rounds // 2)):
            names = ["ort", "opencv", "torch"]
            if r % 2:
                names.reverse()
            for rt in names:
                m = model
                if rt == "torch":
                    m = os.path.join(work, "resnet18.pt")
                    if not os.path.exists(m):
                        code = ("import torch, torchvision, sys\ntorch.manual_seed(0)\n"
                                "m = torchvision.models.resnet18().eval()\n"
                                "torch.jit.trace(m, torch.randn(1, 3, 224, 224)).save(sys.argv[1])\n")
                        subprocess.run(["/usr/bin/python3", "-c", code, m], check=True)
                log.take()
                try:
                    rep = rpx_run(rpxprof, m, npz, rt, calls, out)
                    side_rows.setdefault(rt, []).append(rep["latency"]["p50_ms"])
                except subprocess.CalledProcessError as e:
                    side_rows.setdefault(rt, []).append(None)
                    print(f"{rt}: failed ({e})", file=sys.stderr)
    ratios = [x["ratio"] for x in rows]
    print(f"Machine: {machine_line()}; {log.line()}.\n")
    print(f"resnet18 (random weights, opset 10 as OpenCV 4.6 reads it, 1x3x224x224 float32), onnxruntime {rows[0].get('runtime')} "
          f"(rpxprof, --runtime ort) against onnxruntime-node {rows[0].get('node_version')} in Node, one "
          f"thread each, {rounds} rounds ABBA, {calls} timed calls after 10 warmup calls per side and round:\n")
    print("| round | rpxprof p50 ms | Node p50 ms | rpxprof / Node |")
    print("|---|---|---|---|")
    for x in rows:
        print(f"| {x['round']} | {x['rpxprof_p50_ms']:.2f} | {x['node_p50_ms']:.2f} | {x['ratio']:.3f} |")
    print(f"\nmedian ratio {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})\n")
    w0 = [x["wall_s"] for x in layer_rows if not x["layers"]]
    w1 = [x["wall_s"] for x in layer_rows if x["layers"]]
    ov = [x["overhead"] for x in layer_rows if x["layers"] and x["overhead"] is not None]
    print(f"--layers: run wall time {statistics.median(w1):.1f} s against {statistics.median(w0):.1f} s "
          f"without (median of {len(w1)}); profiled calls' summed layer time against the unprofiled "
          f"p50: {('%+.1f %%' % (100 * statistics.median(ov))) if ov else 'n/a'}\n")
    print("| runtime | p50 ms per round | median |")
    print("|---|---|---|")
    for rt, v in side_rows.items():
        ok = [x for x in v if x is not None]
        print(f"| {rt} | {', '.join('%.2f' % x if x is not None else 'failed' for x in v)} | "
              f"{('%.2f' % statistics.median(ok)) if ok else 'n/a'} |")
    for x in rows + layer_rows:
        print(json.dumps(x))


if __name__ == "__main__":
    main()
