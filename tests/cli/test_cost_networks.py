"""`rpxprof cost` on real exports made in this test run by Debian's torch and
torchvision (random weights, nothing kept): swin_t (ScatterND of the shifted
windows), raft_small (GridSample of the correlation lookup), an LSTM/GRU/RNN
stack with a bidirectional GRU. The MACs are compared with an independent
count made on the same forward pass: every aten matrix product and
convolution seen by a TorchDispatchMode, multiply-adds from the shapes torch
hands it. Each network must be fully costed and match exactly."""
import json
import math
import time
import warnings

from common import TempDirTest, main, run

import torch  # noqa: E402  (Debian's torch; the test is skipped without it)
import torchvision  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

aten = torch.ops.aten


def prod(s):
    return math.prod(int(x) for x in s)


class CountMacs(TorchDispatchMode):
    """Multiply-adds of every matrix product and convolution torch runs."""

    def __init__(self):
        super().__init__()
        self.macs = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        p = func.overloadpacket
        if p in (aten.mm, aten.bmm):
            self.macs += prod(out.shape) * args[0].shape[-1]
        elif p in (aten.addmm, aten.baddbmm):
            self.macs += prod(out.shape) * args[1].shape[-1]
        elif p is aten.convolution:
            x, w, transposed = args[0], args[1], args[6]
            self.macs += (prod(x.shape) if transposed else prod(out.shape)) * prod(w.shape[1:])
        return out


class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(16, 32, num_layers=2)
        self.gru = torch.nn.GRU(32, 24, num_layers=2)
        self.bigru = torch.nn.GRU(24, 8, bidirectional=True)
        self.rnn = torch.nn.RNN(16, 12)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, _ = self.gru(y)
        y, _ = self.bigru(y)
        z, _ = self.rnn(x)
        return y, z


def rnn_macs(seq, batch, dirs, gates, hidden, inp):
    return seq * batch * dirs * gates * hidden * (inp + hidden)


class WhileLoop(torch.nn.Module):
    """A while-loop that stops on a value computed in the body (torch.jit.script exports a Loop)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(64, 64))
        self.w2 = torch.nn.Parameter(torch.randn(64, 64))

    def forward(self, x):
        ys = []
        i = 0
        h = x
        while i < 7 and bool(h.sum() < 1e6):
            h = torch.tanh(torch.matmul(h, self.w))
            ys.append(h)
            i += 1
        return torch.matmul(torch.cat(ys, 0), self.w2)


class NetworksTest(TempDirTest):
    def export_and_count(self, model, inputs, name, opset):
        model.eval()
        counter = CountMacs()
        with torch.no_grad(), counter:
            model(*inputs)
        path = self.path(name + ".onnx")
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, inputs, path, opset_version=opset)
        t0 = time.monotonic()
        r = run("cost", path, "--json", "--per-op")
        elapsed = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr)
        res = json.loads(r.stdout)
        print(f"{name}: rpxprof {res['macs']} MACs, torch {counter.macs}; "
              f"{res['model']['nodes']} nodes; rpxprof cost took {elapsed * 1000:.0f} ms (process)")
        return res, counter.macs

    def check_full(self, res, name):
        self.assertEqual(res["unsupported"], [], name)
        self.assertFalse(res["partial"], name)
        self.assertEqual(res["coverage"], 1.0, name)

    def test_swin_t(self):
        torch.manual_seed(0)
        res, macs = self.export_and_count(torchvision.models.swin_t(weights=None),
                                          (torch.randn(1, 3, 224, 224),), "swin_t", 17)
        self.check_full(res, "swin_t")
        self.assertEqual(res["macs"], macs)
        scatter = [n for n in res["nodes"] if n["op_type"] == "ScatterND"]
        self.assertGreater(len(scatter), 0)

    def test_raft_small(self):
        torch.manual_seed(0)
        a, b = torch.randn(1, 3, 128, 128), torch.randn(1, 3, 128, 128)
        res, macs = self.export_and_count(torchvision.models.optical_flow.raft_small(weights=None),
                                          (a, b), "raft_small", 16)
        self.check_full(res, "raft_small")
        self.assertEqual(res["macs"], macs)
        grid = [n for n in res["nodes"] if n["op_type"] == "GridSample"]
        self.assertGreater(len(grid), 0)
        for n in grid:  # [N, C, H_grid, W_grid]
            self.assertEqual(len(n["outputs"][0]["shape"]), 4)
            self.assertGreater(n["flops"], 0)

    def test_recurrent_stack(self):
        torch.manual_seed(0)
        seq, batch = 5, 3
        res, macs = self.export_and_count(Recurrent(), (torch.randn(seq, batch, 16),), "recurrent", 14)
        self.check_full(res, "recurrent")
        # arithmetic on the exported shapes, per layer and direction
        want = (rnn_macs(seq, batch, 1, 4, 32, 16) + rnn_macs(seq, batch, 1, 4, 32, 32) +
                rnn_macs(seq, batch, 1, 3, 24, 32) + rnn_macs(seq, batch, 1, 3, 24, 24) +
                rnn_macs(seq, batch, 2, 3, 8, 24) + rnn_macs(seq, batch, 1, 1, 12, 16))
        self.assertEqual(macs, want)
        self.assertEqual(res["macs"], want)
        ops = sorted(n["op_type"] for n in res["nodes"] if n["op_type"] in ("LSTM", "GRU", "RNN"))
        self.assertEqual(ops, ["GRU", "GRU", "GRU", "LSTM", "LSTM", "RNN"])
        bi = [n for n in res["nodes"] if n["op_type"] == "GRU" and n["outputs"][0]["shape"][1] == 2]
        self.assertEqual(len(bi), 1)
        self.assertEqual(bi[0]["macs"], rnn_macs(seq, batch, 2, 3, 8, 24))

    def test_scripted_while_loop(self):
        # the iterations run depend on the data: the Loop and the MatMul after it are not
        # costed (never at the maximum trip count), and MACs is null rather than 0
        path = self.path("while.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(torch.jit.script(WhileLoop()), (torch.randn(1, 64),), path, opset_version=13)
        r = run("cost", path, "--json", "--per-op")
        self.assertEqual(r.returncode, 0, r.stderr)
        res = json.loads(r.stdout)
        loop = [n for n in res["nodes"] if n["op_type"] == "Loop"]
        self.assertEqual(len(loop), 1)
        self.assertFalse(loop[0]["supported"])
        self.assertIn("condition is computed in its body", loop[0]["reason"])
        mm = [n for n in res["nodes"] if n["op_type"] == "MatMul"]
        self.assertTrue(mm and not any(n["supported"] for n in mm))
        self.assertTrue(res["partial"])
        self.assertIsNone(res["macs"])
        self.assertEqual(res["dense_coverage"], 0)


if __name__ == "__main__":
    main()
