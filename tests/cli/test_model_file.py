"""A model file is a target (issue 39 §1, docs/runtimes.md): `rpxprof run --model FILE.onnx`
alone, through each runtime.

ModelFileHostTest: the host's side, through the stand-in runtime plugin
(tests/models/runtime_stand_in.c, a test fixture: RPX_ORT_PLUGIN and friends point at it):
the runtime chosen, the options as name = value pairs, the inputs made from the graph's inputs,
the file costed as `rpxprof cost` costs it, the `runtime` block at the report's top level, the
refusals, and a runtime that crashes in its setup.

RealRuntimesTest: torchvision's resnet18 and mobilenet_v3_small with random weights, exported
to ONNX and TorchScript with this machine's torch (cached in the build folder), run with no other
argument through every runtime whose plugin is built here (ONNX Runtime's library from
scripts/setup.sh's cache), outputs checked against torch's own (--check-outputs with a
reference saved from torch, rtol 1e-4). A runtime whose plugin or library cannot be had is
skipped with the reason.
"""
import hashlib
import json
import os
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import BIN, BUILD, SANITIZED, SOURCE, TempDirTest, load_json, main, run, validate_profile  # noqa: E402

# the SIGFPE a runtime raises; under ASan (abort_on_error=1) the sanitizer catches it, reports
# it and aborts: the process ends by signal 6
FPE = "signal 6" if SANITIZED else "signal 8"

STAND_IN = os.path.join(BUILD, "test-models", "librpxtest_runtime_stand_in.so")
PYTHON = "/usr/bin/python3"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tiny_onnx(path, batch="batch"):
    """Conv(3->8, 3x3) + Relu on x[batch, 3, 32, 32]: a graph with a dynamic dimension."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.full((8, 3, 3, 3), 0.01, np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
                           helper.make_node("Relu", ["c"], ["y"], name="relu0")],
                          "tiny", [x], [y], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


class ModelFileHostTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.onnx = self.path("tiny.onnx")
        tiny_onnx(self.onnx)
        self.fake_ort = self.path("libonnxruntime.so.1")
        with open(self.fake_ort, "wb") as f:
            f.write(b"not a library: the stand-in plugin never loads it")
        self.env = {"RPX_ORT_PLUGIN": STAND_IN, "RPX_OPENCV_PLUGIN": STAND_IN,
                    "RPX_TORCH_PLUGIN": STAND_IN, "RPXPROF_ORT_LIBRARY": self.fake_ort}

    def go(self, *args, check=0, env=None, cwd=None):
        e = dict(self.env)
        e.update(env or {})
        return run("run", *args, "--repeats", "20", "--processes", "2", "--warmup", "1",
                   check=check, env=e, cwd=cwd or self.tmp)

    def test_one_command(self):
        # `rpxprof run --model FILE` (the options here only keep the run short): inputs made
        # from the graph, the report written beside, the runtime block, the cost, the bound
        p = self.go("--model", "tiny.onnx", "--dim", "batch=2", "--threads", "2",
                    "--graph-opt", "basic")
        out = self.path("tiny-report.json")
        self.assertIn("tiny-report.json", p.stdout)
        r = load_json(out)
        validate_profile(r)
        self.assertEqual(r["target_kind"], "model_file")
        self.assertNotIn("model_file", r)
        rt = r["runtime"]
        self.assertEqual(rt["name"], "onnxruntime")
        self.assertEqual(rt["library"], self.fake_ort)          # the kv pair `library`
        self.assertEqual(rt["settings"], {"threads": 2, "inter_threads": None, "graph_opt": "basic"})
        self.assertEqual(rt["inputs"], [{"name": "x", "dtype": "float32", "shape": [2, 3, 32, 32]}])
        self.assertGreaterEqual(rt["setup_ms"], 0)
        # the inputs made: how, and the command that makes the same bytes
        g = r["inputs_generated"]
        self.assertEqual(g["seed"], 0)
        self.assertEqual(g["arrays"], [{"name": "x", "dtype": "float32", "shape": "2x3x32x32"}])
        self.assertEqual(r["inputs_file"], "<generated>")
        made = self.path("made.npz")
        run(*g["command"].split()[1:3], made, *g["command"].split()[4:], check=0)
        self.assertEqual(r["inputs_sha256"], sha256(made))
        # the cost is `rpxprof cost`'s at the bound shapes, with the host CPU's bound
        cost = json.loads(run("cost", self.onnx, "--dim", "batch=2", "--json", check=0).stdout)
        for k in ("flops", "macs", "params", "traffic_bytes_ideal"):
            self.assertEqual(r["efficiency"][k], cost[k], k)
        self.assertIn("host-cpu", r["roofline"])
        self.assertIsNotNone(r["roofline"]["host-cpu"]["bound_ms"] if "bound_ms" in
                             r["roofline"]["host-cpu"] else r["roofline"]["host-cpu"])
        # no --repeats: auto-ranged (within --max-time)
        e = dict(self.env)
        run("run", "--model", "tiny.onnx", "--dim", "batch=1", "--max-time", "2", check=0,
            env=e, cwd=self.tmp)
        self.assertIsNotNone(load_json(out)["autorange"])
        self.assertIsNone(r["autorange"])
        # the session's version digests the model file
        self.assertEqual(r["session"]["version"]["model_sha256"], sha256(self.onnx))
        self.assertEqual(rt["model_sha256"], sha256(self.onnx))

    def test_the_runtime_chosen_and_refused(self):
        # no library: .onnx goes to OpenCV; --runtime ort is refused naming the fix
        gone = {"RPXPROF_ORT_LIBRARY": "", "XDG_CACHE_HOME": self.path("empty-cache")}
        p = self.go("--model", "tiny.onnx", "--dim", "batch=1", env=gone)
        self.assertEqual(load_json(self.path("tiny-report.json"))["runtime"]["name"], "opencv")
        p = self.go("--model", "tiny.onnx", "--dim", "batch=1", "--runtime", "ort", env=gone,
                    check=1)
        self.assertIn("ONNX Runtime's library was not found", p.stderr)
        self.assertIn("./scripts/setup.sh", p.stderr)
        self.assertIn("RPXPROF_ORT_LIBRARY", p.stderr)
        self.assertIn("RPXPROF_ORT_LIBRARY is not set", p.stderr)
        # RPXPROF_ORT_LIBRARY naming no file is said, never passed over for OpenCV
        nowhere = self.path("nowhere", "libonnxruntime.so.1")
        p = self.go("--model", "tiny.onnx", "--dim", "batch=1", check=1,
                    env={"RPXPROF_ORT_LIBRARY": nowhere})
        self.assertIn(f"RPXPROF_ORT_LIBRARY={nowhere} is not a file", p.stderr)
        # a runtime that does not run the file's format
        p = self.go("--model", "tiny.onnx", "--runtime", "torch", check=2)
        self.assertIn("torch runs TorchScript files", p.stderr)
        # a plugin that is not there
        p = self.go("--model", "tiny.onnx", "--dim", "batch=1",
                    env={"RPX_ORT_PLUGIN": self.path("none.so")}, check=1)
        self.assertIn("cannot load the ort plugin", p.stderr)
        self.assertIn("RPX_ORT_PLUGIN", p.stderr)

    def test_the_runtime_options_are_a_model_files_only(self):
        for opt in (["--runtime", "ort"], ["--threads", "2"], ["--inter-threads", "1"],
                    ["--graph-opt", "all"]):
            p = run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", self.onnx, *opt,
                    "--output", self.path("r.json"), check=2)
            self.assertIn(f"{opt[0]} is for model files run by a runtime", p.stderr)
        p = run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", self.onnx, "--shape",
                "x=1x3", "--output", self.path("r.json"), check=2)
        self.assertIn("--shape is for model files", p.stderr)
        p = run("run", "--model", "x.onnx", "--graph-opt", "most", check=2)
        self.assertIn("expected none, basic, extended or all", p.stderr)

    def test_shapes_bound(self):
        # a dynamic dimension not bound: said, with the options that bind it
        p = self.go("--model", "tiny.onnx", check=1)
        self.assertIn("--dim", p.stderr)
        # --shape binds the input whole
        self.go("--model", "tiny.onnx", "--shape", "x=3x3x32x32")
        r = load_json(self.path("tiny-report.json"))
        self.assertEqual(r["inputs_generated"]["arrays"][0]["shape"], "3x3x32x32")
        one = json.loads(run("cost", self.onnx, "--dim", "batch=1", "--json", check=0).stdout)
        self.assertEqual(r["efficiency"]["flops"], 3 * one["flops"])
        # given inputs are used by name, nothing made
        np.savez(self.path("in.npz"), x=np.ones((1, 3, 32, 32), np.float32))
        self.go("--model", "tiny.onnx", "--inputs", "in.npz")
        r = load_json(self.path("tiny-report.json"))
        self.assertIsNone(r["inputs_generated"])
        self.assertEqual(r["runtime"]["inputs"][0]["shape"], [1, 3, 32, 32])

    def test_torchscript_needs_shapes(self):
        pt = self.path("net.pt")
        with open(pt, "wb") as f:
            f.write(b"stand-in")
        p = self.go("--model", "net.pt", check=1)
        self.assertIn("give one --shape NAME=DIMS per input", p.stderr)
        self.go("--model", "net.pt", "--shape", "x=1x3x8x8", "--shape", "ids=1x4:int64")
        r = load_json(self.path("net-report.json"))
        self.assertEqual(r["runtime"]["name"], "torch")
        self.assertEqual([a["dtype"] for a in r["inputs_generated"]["arrays"]], ["float32", "int64"])
        self.assertIsNone(r["efficiency"]["flops"])  # no graph: not costed
        p = self.go("--model", "net.pt", "--runtime", "ort", check=2)
        self.assertIn("--runtime torch", p.stderr)

    def test_a_runtime_that_crashes_in_setup(self):
        # OpenCV's SIGFPE on a file without weights: the runtime's crash, said as such
        p = self.go("--model", "tiny.onnx", "--dim", "batch=1", check=3,
                    env={"RPX_STAND_IN_CRASH": "setup"})
        r = load_json(self.path("tiny-report.json"))
        self.assertEqual(r["status"], "crashed")
        self.assertEqual(r["failure"]["phase"], "setup")
        self.assertIn("crashed in setup with " + FPE, r["error"])
        self.assertIn("the runtime (onnxruntime) crashed while it read the model file: its own "
                      "crash, not one measured in the model", r["error"])
        self.assertIn("try --runtime opencv", r["error"])
        self.assertIn("the runtime (onnxruntime) crashed", p.stderr)


# ---- real runtimes ------------------------------------------------------------------------

CACHE = os.path.join(BUILD, "model-file-cache")
NETS = ("resnet18", "mobilenet_v3_small")
EXPORT = r"""
import sys, numpy as np, torch, torchvision
name, out, inputs, examples = sys.argv[1:5]
sys.path.insert(0, examples)
from export_model import drop_initializer_identities
torch.manual_seed(0)
m = getattr(torchvision.models, name)(weights=None).eval()
x = torch.from_numpy(np.load(inputs)["input"])
torch.onnx.export(m, x, out + ".onnx", input_names=["input"], output_names=["logits"],
                  opset_version=13, do_constant_folding=True)
torch.jit.save(torch.jit.trace(m, x), out + ".pt")
# what OpenCV 4.6 reads (examples/export_model.py): opset 10, no Identity on an initializer
torch.onnx.export(m, x, out + ".cv.onnx", input_names=["input"], output_names=["logits"],
                  opset_version=10)
drop_initializer_identities(out + ".cv.onnx")
with torch.no_grad():
    np.savez(out + ".ref.npz", logits=m(x).numpy())
"""


def export(name):
    """NAME.onnx, NAME.pt and torch's own outputs on the inputs rpxprof makes (seed 0),
    cached in the build folder."""
    os.makedirs(CACHE, exist_ok=True)
    base = os.path.join(CACHE, name)
    inputs = base + ".inputs.npz"
    if not all(os.path.exists(base + s) for s in (".onnx", ".cv.onnx", ".pt", ".ref.npz")):
        run("inputs", "make", inputs, "input=1x3x224x224:float32=random", "--seed", "0",
            "--force", check=0)
        subprocess.run([PYTHON, "-c", EXPORT, name, base, inputs,
                        os.path.join(SOURCE, "examples")], check=True, capture_output=True,
                       timeout=600)
    return base


def plugin_built(runtime):
    return os.path.exists(os.path.join(BUILD, f"librpxprof-{runtime}.so"))


def ort_library():
    env = os.environ.get("RPXPROF_ORT_LIBRARY")
    if env:
        return env if os.path.isfile(env) else None
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    p = os.path.join(cache, "rpxprof", "onnxruntime-1.31.1", "libonnxruntime.so.1")
    return p if os.path.isfile(p) else None


class RealRuntimesTest(TempDirTest):
    def reference(self, base, name):
        """torch's outputs as --save-outputs saves them, under the name the runtime gives its
        output (a TorchScript module's has none of its own: the plugin's 'output')."""
        ref = self.path("ref-" + os.path.basename(base))
        os.makedirs(ref, exist_ok=True)
        with np.load(base + ".ref.npz") as z:
            np.savez(os.path.join(ref, "outputs-00000.npz"), **{name: z["logits"]})
        return ref

    def through(self, runtime, suffix):
        if not plugin_built(runtime):
            self.skipTest(f"librpxprof-{runtime}.so is not built in {BUILD} (the {runtime} plugin "
                          f"is built where its runtime is found: docs/runtimes.md)")
        if runtime == "ort" and not ort_library():
            self.skipTest("ONNX Runtime's library is not here: run ./scripts/setup.sh")
        for name in NETS:
            with self.subTest(net=name, runtime=runtime):
                base = export(name)
                model = base + suffix
                out = self.path(f"{name}-{runtime}.json")
                # the one command: `rpxprof run --model FILE` (the report beside)
                p = subprocess.run([BIN, "run", "--model", model] +
                                   (["--runtime", runtime] if runtime == "opencv" else []) +
                                   (["--shape", "input=1x3x224x224"] if suffix == ".pt" else []),
                                   cwd=self.tmp, capture_output=True, text=True, timeout=900)
                self.assertEqual(p.returncode, 0, p.stderr)
                stem = os.path.basename(model).rsplit(".", 1)[0]
                r = load_json(self.path(f"{stem}-report.json"))
                validate_profile(r)
                self.assertEqual(r["runtime"]["name"],
                                 {"ort": "onnxruntime"}.get(runtime, runtime))
                self.assertGreater(r["runtime"]["setup_ms"], 0)
                if suffix.endswith(".onnx"):
                    cost = json.loads(run("cost", model, "--json", check=0).stdout)
                    self.assertEqual(r["efficiency"]["flops"], cost["flops"])
                # outputs against torch's own on the same inputs
                p = subprocess.run([BIN, "run", "--model", model, "--runtime", runtime,
                                    "--repeats", "20", "--processes", "1", "--warmup", "1",
                                    "--inputs", base + ".inputs.npz",
                                    "--reference-outputs",
                                    self.reference(base, r["runtime"]["outputs"][0]["name"]),
                                    "--rtol", "1e-4", "--atol", "1e-5", "--output", out],
                                   cwd=self.tmp, capture_output=True, text=True, timeout=900)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(load_json(out)["status"], "complete")

    def test_ort(self):
        self.through("ort", ".onnx")

    def test_opencv(self):
        self.through("opencv", ".cv.onnx")
        # a plain export (opset 13, an Identity on an initializer): refused naming the node and
        # OpenCV's words, with the other runtime suggested
        p = subprocess.run([BIN, "run", "--model", export("resnet18") + ".onnx", "--runtime",
                            "opencv"], cwd=self.tmp, capture_output=True, text=True, timeout=900)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("at node 'Identity_", p.stderr)
        self.assertIn("OpenCV says", p.stderr)
        self.assertIn("try --runtime ort", p.stderr)
        # a file whose weights are empty: OpenCV 4.6 dies with SIGFPE in its setup; the report
        # says it is the runtime's crash, not the model's
        import onnx
        m = onnx.load(export("resnet18") + ".cv.onnx")
        for t in m.graph.initializer:
            t.ClearField("raw_data")
            t.ClearField("float_data")
        onnx.save(m, self.path("empty_weights.onnx"))
        p = subprocess.run([BIN, "run", "--model", "empty_weights.onnx", "--runtime", "opencv"],
                           cwd=self.tmp, capture_output=True, text=True, timeout=900)
        self.assertEqual(p.returncode, 3, p.stderr)
        r = load_json(self.path("empty_weights-report.json"))
        validate_profile(r)
        self.assertEqual((r["status"], r["failure"]["phase"]), ("crashed", "setup"))
        self.assertIn(FPE, r["error"])
        self.assertIn("the runtime (opencv) crashed while it read the model file: its own crash, "
                      "not one measured in the model", r["error"])
        self.assertIn("try --runtime ort", r["error"])

    def test_torch(self):
        self.through("torch", ".pt")


if __name__ == "__main__":
    main()
