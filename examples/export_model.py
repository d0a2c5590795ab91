#!/usr/bin/python3
"""Export a torchvision network (random weights: nothing is downloaded) for the
runtime examples: NET.onnx for examples/opencv-dnn and `rpxprof cost`, NET.pt
(TorchScript) for examples/libtorch, and NET.conf for both, plus frame.npz
(an rgb uint8 HxWx3 input).

usage: export_model.py OUT_DIR [--net mobilenet_v2|lraspp] [--size 480x640]
Needs Debian's python3-torch and python3-torchvision (and python3-onnx)."""
import argparse
import os

import numpy as np
import onnx
import torch
import torchvision


# Opset 10: OpenCV 4.6 (Debian 12) reads Clip (ReLU6) only with its bounds as
# attributes, which opset 11 turned into inputs.
OPSET = 10


def build(net):
    torch.manual_seed(0)
    if net == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None), "1x1000"
    if net == "lraspp":  # a dense, depth-like output: one channel per pixel
        m = torchvision.models.segmentation.lraspp_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=1)
        return m, None
    raise SystemExit(f"unknown --net {net}")


class FirstOutput(torch.nn.Module):
    """torchvision's segmentation models return {'out': ...}; export the tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        y = self.m(x)
        return y["out"] if isinstance(y, dict) else y


def drop_initializer_identities(path):
    """torch 1.13 stores identical weights once and feeds the other users through
    Identity nodes, which OpenCV 4.6's importer refuses; point those users at
    the initializer itself (no weight is duplicated, the graph computes the same)."""
    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    alias = {n.output[0]: n.input[0] for n in m.graph.node
             if n.op_type == "Identity" and n.input[0] in inits}
    keep = [n for n in m.graph.node if not (n.op_type == "Identity" and n.output[0] in alias)]
    for n in keep:
        for i, name in enumerate(n.input):
            if name in alias:
                n.input[i] = alias[name]
    del m.graph.node[:]
    m.graph.node.extend(keep)
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return len(alias)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--net", default="mobilenet_v2")
    ap.add_argument("--size", default="480x640")
    a = ap.parse_args()
    h, w = (int(v) for v in a.size.split("x"))
    os.makedirs(a.out, exist_ok=True)
    model, expect = build(a.net)
    model = FirstOutput(model).eval()
    x = torch.randn(1, 3, h, w)
    with torch.no_grad():
        y = model(x)
        onnx_path = os.path.join(a.out, f"{a.net}.onnx")
        torch.onnx.export(model, x, onnx_path, input_names=["input"], output_names=["output"],
                          opset_version=OPSET)
        drop_initializer_identities(onnx_path)
        ts = torch.jit.trace(model, x)
        ts.save(os.path.join(a.out, f"{a.net}.pt"))
    expect = expect or "x".join(str(d) for d in y.shape)
    for runtime, ext in (("opencv-dnn", "onnx"), ("libtorch", "pt")):
        with open(os.path.join(a.out, f"{a.net}.{runtime}.conf"), "w") as f:
            f.write(f"# written by examples/export_model.py\nmodel = {a.net}.{ext}\n"
                    f"size = {h}x{w}\nexpect = {expect}\n")
    rng = np.random.default_rng(0)
    np.savez(os.path.join(a.out, "frame.npz"),
             rgb=rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8))
    print(f"{a.out}: {a.net}.onnx {a.net}.pt {a.net}.opencv-dnn.conf {a.net}.libtorch.conf "
          f"frame.npz (output {expect})")


if __name__ == "__main__":
    main()
