"""librpxprof-ort.so, the ONNX Runtime plugin (issue 39): ONNX files made here with torch
(torchvision's resnet18, random weights) and onnx.helper; outputs against torch's and
numpy's own (rtol 1e-4), the report's `runtime` section, ORT's per-node profiler as the
layers events (fused nodes mapped to the model file's nodes), and the errors, named.

The plugin is driven through its ABI by ort_probe (tests/runtimes/ort_probe.c) and, for the
outputs, by `rpxprof run --model FILE.onnx` (the model_file kind). Skipped, with the reason,
only when libonnxruntime.so.1 cannot be found (./scripts/setup.sh fetches it)."""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import numpy as np  # noqa: E402

PROBE = os.path.join(common.BUILD, "ort_probe")
PLUGIN = os.path.join(common.BUILD, "librpxprof-ort.so")


def find_library():
    env = os.environ.get("RPXPROF_ORT_LIBRARY")
    if env:
        return env if os.path.exists(env) else None
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    p = os.path.join(cache, "rpxprof", "onnxruntime-1.31.1", "libonnxruntime.so.1")
    return p if os.path.exists(p) else None


LIBRARY = find_library()
SKIP = None if LIBRARY else ("libonnxruntime.so.1 not found (RPXPROF_ORT_LIBRARY, or "
                             "~/.cache/rpxprof/onnxruntime-1.31.1/): run ./scripts/setup.sh")


def tiny_model(path, batch_sym=True):
    """Y = Relu(X @ W + B), Z = Sigmoid(X): two outputs, a symbolic batch dimension."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(5)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    batch = "batch" if batch_sym else 2
    g = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"], name="mm"),
         helper.make_node("Add", ["XW", "B"], ["XWB"], name="add"),
         helper.make_node("Relu", ["XWB"], ["Y"], name="relu"),
         helper.make_node("Sigmoid", ["X"], ["Z"], name="sig")],
        "tiny",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [batch, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [batch, 4]),
         helper.make_tensor_value_info("Z", TensorProto.FLOAT, [batch, 3])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)
    return w, b


def resnet18(path):
    import torch
    import torchvision
    torch.manual_seed(0)
    net = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(net, x, path, opset_version=13, input_names=["input"],
                      output_names=["logits"])
    with torch.no_grad():
        y = net(x).numpy()
    return x.numpy(), y


@unittest.skipIf(SKIP, SKIP)
class OrtPluginTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rpx-ort-")
        d = cls.dir
        cls.tiny = os.path.join(d, "tiny.onnx")
        cls.w, cls.b = tiny_model(cls.tiny)
        cls.x = np.random.default_rng(7).standard_normal((2, 3)).astype(np.float32)
        cls.tiny_in = os.path.join(d, "tiny_in.npz")
        np.savez(cls.tiny_in, X=cls.x)
        cls.resnet = os.path.join(d, "resnet18.onnx")
        cls.rx, cls.ry = resnet18(cls.resnet)
        cls.resnet_in = os.path.join(d, "resnet_in.npz")
        np.savez(cls.resnet_in, input=cls.rx)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rpx-ort-case-", dir=self.dir)

    def probe(self, model, inputs, *kv, check=0, env=None):
        out = os.path.join(self.tmp, f"probe{len(os.listdir(self.tmp))}")
        e = dict(os.environ)
        e["TMPDIR"] = self.tmp_profiles()
        if env:
            e.update(env)
        args = [PROBE, PLUGIN, model, inputs, out, f"library={LIBRARY}", *kv]
        p = subprocess.run(args, capture_output=True, text=True, env=e, timeout=600)
        if check is not None and p.returncode != check:
            raise AssertionError(f"{' '.join(args)}: exit {p.returncode}\n{p.stderr}")
        if p.returncode != 0:
            return p, None, None
        with open(out + ".json") as f:
            doc = json.load(f)
        with np.load(out + ".npz") as z:
            outs = {k: z[k] for k in z.files}
        return p, doc, outs

    def tmp_profiles(self):
        d = os.path.join(self.tmp, "tmpdir")
        os.makedirs(d, exist_ok=True)
        return d

    # --- outputs -------------------------------------------------------------------
    def test_tiny_outputs_equal_numpy(self):
        _, doc, outs = self.probe(self.tiny, self.tiny_in, "graph_opt=none")
        self.assertEqual(doc["outputs"], ["Y", "Z"])
        np.testing.assert_allclose(outs["Y"], np.maximum(self.x @ self.w + self.b, 0), rtol=1e-4,
                                   atol=1e-6)
        np.testing.assert_allclose(outs["Z"], 1 / (1 + np.exp(-self.x)), rtol=1e-4, atol=1e-6)

    def test_resnet18_outputs_equal_torch(self):
        for level in ("none", "all"):
            with self.subTest(graph_opt=level):
                _, _, outs = self.probe(self.resnet, self.resnet_in, f"graph_opt={level}")
                self.assertEqual(outs["logits"].shape, (1, 1000))
                np.testing.assert_allclose(outs["logits"], self.ry, rtol=1e-4, atol=1e-4)

    def test_rpxprof_run_saves_every_output(self):
        """`rpxprof run --model tiny.onnx --check-outputs --save-outputs DIR`: the outputs hook
        through the real runner; both outputs saved and equal to numpy's."""
        saved = os.path.join(self.tmp, "saved")
        out = os.path.join(self.tmp, "r.json")
        p = common.run("run", "--model", self.tiny, "--inputs", self.tiny_in, "--repeats", "20",
                       "--warmup", "2", "--check-outputs", "--save-outputs", saved,
                       "--output", out, env={"RPXPROF_ORT_LIBRARY": LIBRARY})
        self.assertEqual(p.returncode, 0, p.stderr)
        files = sorted(glob.glob(os.path.join(saved, "outputs-*.npz")))
        self.assertTrue(files, os.listdir(saved) if os.path.isdir(saved) else saved)
        with np.load(files[0]) as z:
            self.assertEqual(sorted(z.files), ["Y", "Z"])
            np.testing.assert_allclose(z["Y"], np.maximum(self.x @ self.w + self.b, 0),
                                       rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(z["Z"], 1 / (1 + np.exp(-self.x)), rtol=1e-4, atol=1e-6)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["target_kind"], "model_file")
        self.assertEqual(self.find_runtime(report)["name"], "onnxruntime")

    def find_runtime(self, report):
        """The runtime block, wherever this branch's runner put the kind's section."""
        stack = [report]
        while stack:
            o = stack.pop()
            if isinstance(o, dict):
                if o.get("name") == "onnxruntime" and "setup_ms" in o:
                    return o
                stack.extend(o.values())
            elif isinstance(o, list):
                stack.extend(o)
        self.fail("no runtime block in the report")

    # --- the runtime section ---------------------------------------------------------
    def test_runtime_section(self):
        _, doc, _ = self.probe(self.tiny, self.tiny_in, "threads=2", "inter_threads=1",
                               "graph_opt=basic", "seed=11")
        r = doc["section"]
        self.assertEqual(r["name"], "onnxruntime")
        self.assertEqual(r["version"], "1.31.1")
        self.assertEqual(os.path.realpath(r["library"]), os.path.realpath(LIBRARY))
        with open(LIBRARY, "rb") as f:
            self.assertEqual(r["library_sha256"], hashlib.sha256(f.read()).hexdigest())
        with open(self.tiny, "rb") as f:
            self.assertEqual(r["model_sha256"], hashlib.sha256(f.read()).hexdigest())
        self.assertEqual(r["model"], self.tiny)
        self.assertEqual(r["provider"], "CPUExecutionProvider")
        s = r["settings"]
        self.assertEqual((s["threads"], s["inter_threads"], s["graph_opt"], s["seed"]),
                         (2, 1, "basic", 11))
        self.assertEqual(s["execution_mode"], "sequential")
        self.assertEqual(s["ORT_DISABLE_TELEMETRY"], "1")
        self.assertGreater(r["setup_ms"], 0)
        self.assertEqual(r["inputs"], [{"name": "X", "dtype": "float32", "shape": ["batch", 3]}])
        self.assertEqual(r["outputs"], [{"name": "Y", "dtype": "float32", "shape": ["batch", 4]},
                                        {"name": "Z", "dtype": "float32", "shape": ["batch", 3]}])
        # the defaults: chosen settings are named, ORT's own are null
        _, doc, _ = self.probe(self.tiny, self.tiny_in)
        s = doc["section"]["settings"]
        self.assertEqual((s["threads"], s["inter_threads"], s["graph_opt"]), (None, None, "all"))

    # --- layers -----------------------------------------------------------------------
    def original_nodes(self, path):
        import onnx
        m = onnx.load(path)
        return {n.name: n.op_type for n in m.graph.node}

    def check_events(self, doc, calls=3):
        ev = doc["events"]
        self.assertTrue(ev)
        self.assertEqual(sorted({e["call"] for e in ev}), list(range(calls)))
        for e in ev:
            self.assertGreaterEqual(e["time_ms"], 0)
            self.assertTrue(e["op_type"], e)
            self.assertTrue(e["name"], e)
        per_call = [sum(e["time_ms"] for e in ev if e["call"] == k) for k in range(calls)]
        names = [sorted(e["name"] for e in ev if e["call"] == k) for k in range(calls)]
        self.assertEqual(names[0], names[1])
        return per_call

    def test_layers_no_fusion_names_the_model_nodes(self):
        _, doc, _ = self.probe(self.resnet, self.resnet_in, "graph_opt=none", "threads=1")
        orig = self.original_nodes(self.resnet)
        per_call = self.check_events(doc)
        ran = {e["name"]: e for e in doc["events"] if e["call"] == 0}
        for name, e in ran.items():
            self.assertIn(name, orig)
            self.assertIsNone(e["nodes"], e)
            self.assertEqual(e["op_type"], orig[name])
        # every Conv of the file ran, each once per call
        convs = [n for n, op in orig.items() if op == "Conv"]
        self.assertEqual(len(convs), 20)
        self.assertTrue(set(convs) <= set(ran))
        # resnet18 at 1.8 GFLOP: tens of ms on one thread, never µs nor seconds
        for t in per_call:
            self.assertGreater(t, 1.0)
            self.assertLess(t, 5000.0)
        self.assertEqual(os.listdir(self.tmp_profiles()), [], "profile files left behind")

    def test_layers_fused_nodes_cover_the_model_nodes(self):
        """At every optimisation level each node of the file that runs in a call (not the
        Identity nodes on shared weights, folded at session creation) is covered by exactly one
        node ORT ran; fusions are named: FusedConv = Conv+Relu at `extended`, the NCHWc Conv
        with the residual Add and Relu at `all` (named after the Conv's output)."""
        import onnx
        m = onnx.load(self.resnet)
        weights = {i.name for i in m.graph.initializer}
        runs = [n.name for n in m.graph.node
                if not all(i in weights for i in n.input if i)]
        orig = self.original_nodes(self.resnet)
        for level in ("basic", "extended", "all"):
            with self.subTest(graph_opt=level):
                _, doc, _ = self.probe(self.resnet, self.resnet_in, f"graph_opt={level}",
                                       "threads=1")
                self.check_events(doc)
                ev = [e for e in doc["events"] if e["call"] == 0]
                covered = []
                for e in ev:
                    if e["nodes"] is None:
                        self.assertIn(e["name"], orig)
                        covered.append(e["name"])
                    else:
                        for n in e["nodes"]:
                            self.assertIn(n, orig)
                        covered += e["nodes"]
                self.assertEqual(sorted(covered), sorted(runs))
                if level == "extended":
                    fused = [e for e in ev if e["op_type"] == "FusedConv"]
                    self.assertTrue(fused)
                    for e in fused:
                        self.assertEqual([orig[n] for n in e["nodes"]], ["Conv", "Relu"], e)
                if level == "all":
                    self.assertTrue([e for e in ev if e["nodes"] and [orig[n] for n in e["nodes"]]
                                     == ["Conv", "Add", "Relu"]], json.dumps(ev[:8], indent=1))
                    self.assertTrue([e for e in ev if e["name"].endswith("_nchwc")])
                self.assertEqual(os.listdir(self.tmp_profiles()), [], "profile files left behind")

    # --- errors -------------------------------------------------------------------------
    def test_input_of_wrong_dtype_is_named(self):
        bad = os.path.join(self.tmp, "bad.npz")
        np.savez(bad, X=self.x.astype(np.float64))
        p, _, _ = self.probe(self.tiny, bad, check=1)
        self.assertIn("input 'X'", p.stderr)
        self.assertIn("expects float32 [batch, 3]", p.stderr)
        self.assertIn("give float64 [2, 3]", p.stderr)

    def test_input_of_wrong_shape_or_name_is_named(self):
        bad = os.path.join(self.tmp, "bad.npz")
        np.savez(bad, X=np.zeros((2, 5), np.float32))
        p, _, _ = self.probe(self.tiny, bad, check=1)
        self.assertIn("input 'X'", p.stderr)
        self.assertIn("[2, 5]", p.stderr)
        np.savez(bad, x=self.x)
        p, _, _ = self.probe(self.tiny, bad, check=1)
        self.assertIn("'x'", p.stderr)
        self.assertIn("its inputs are 'X'", p.stderr)

    def test_unreadable_model_gives_ort_words(self):
        junk = os.path.join(self.tmp, "junk.onnx")
        with open(junk, "wb") as f:
            f.write(b"this is not a protobuf \xff\xfe" * 10)
        p, _, _ = self.probe(junk, self.tiny_in, check=1)
        self.assertIn(junk, p.stderr)
        self.assertIn("ONNX Runtime 1.31.1 cannot load it", p.stderr)
        self.assertRegex(p.stderr, r"cannot load it: .{10,}")

    def test_missing_library_says_how_to_get_it(self):
        p, _, _ = self.probe(self.tiny, self.tiny_in, "library=/nonexistent/libonnxruntime.so.1",
                             check=1)
        self.assertIn("/nonexistent/libonnxruntime.so.1", p.stderr)
        self.assertIn("./scripts/setup.sh", p.stderr)
        self.assertIn("RPXPROF_ORT_LIBRARY", p.stderr)
        # through rpxprof run too
        p = common.run("run", "--model", self.tiny, "--inputs", self.tiny_in, "--repeats", "3",
                       "--output", os.path.join(self.tmp, "x.json"),
                       env={"RPXPROF_ORT_LIBRARY": "/nonexistent/libonnxruntime.so.1"})
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("./scripts/setup.sh", p.stderr)

    def test_unknown_option_and_bad_values_refused(self):
        p, _, _ = self.probe(self.tiny, self.tiny_in, "color=red", check=1)
        self.assertIn("color", p.stderr)
        p, _, _ = self.probe(self.tiny, self.tiny_in, "graph_opt=max", check=1)
        self.assertIn("graph_opt 'max' is none of none, basic, extended, all", p.stderr)
        p, _, _ = self.probe(self.tiny, self.tiny_in, "threads=-2", check=1)
        self.assertIn("threads -2 / inter_threads 0: give 0 (ONNX Runtime's default) or a count "
                      "of threads", p.stderr)


if __name__ == "__main__":
    unittest.main()
