"""The runtime examples end to end (issue 11): a torchvision network exported at
test time by Debian's torch, run through examples/opencv-dnn and
examples/libtorch under `rpxprof batch` (cost from the ONNX graph, host-CPU
roofline bound, measured latency), aggregated into one table; and the Python
example (my_model.py) through the Python target.

Skipped (77) when the examples were not built (their dependencies come with
./scripts/setup.sh --with-examples, which ./scripts/test.sh runs)."""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import onnx
from onnx import numpy_helper

from common import BUILD, SOURCE, main, run, validate_profile

EXAMPLES = os.path.join(BUILD, "examples")
OPENCV = os.path.join(EXAMPLES, "librpx-opencv-dnn.so")
LIBTORCH = os.path.join(EXAMPLES, "librpx-libtorch.so")
EXPORT = os.path.join(SOURCE, "examples", "export_model.py")


def setUpModule():
    if not (os.path.exists(OPENCV) and os.path.exists(LIBTORCH)):
        print("examples not built (./scripts/setup.sh --with-examples); skipped", file=sys.stderr)
        sys.exit(77)


class ExamplesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="rpxexamples-")
        cls.dir = cls._tmp.name
        subprocess.run([sys.executable, EXPORT, cls.dir, "--net", "mobilenet_v2",
                        "--size", "480x640"], check=True, capture_output=True, timeout=600)
        cls.onnx = os.path.join(cls.dir, "mobilenet_v2.onnx")
        cls.frame = os.path.join(cls.dir, "frame.npz")
        cls.env = {"RPX_OPENCV_CONFIG": os.path.join(cls.dir, "mobilenet_v2.opencv-dnn.conf"),
                   "RPX_LIBTORCH_CONFIG": os.path.join(cls.dir, "mobilenet_v2.libtorch.conf")}

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def test_two_runtimes_cost_bound_and_one_table(self):
        manifest = {
            "schema": "rpxprof.manifest/1",
            "defaults": {"warmup": 1, "repeats": 5, "precision": "fp32"},
            "tasks": {"classify": {"inputs": self.frame, "unit": "frame"}},
            "models": [
                {"name": "mobilenet_v2-opencv-dnn", "model": f"{OPENCV}:opencv_dnn_predict",
                 "tasks": ["classify"], "cost": self.onnx},
                {"name": "mobilenet_v2-libtorch", "model": f"{LIBTORCH}:libtorch_predict",
                 "tasks": ["classify"], "cost": self.onnx}]}
        mpath = self.path("manifest.json")
        with open(mpath, "w") as f:
            json.dump(manifest, f)
        results, summary = self.path("results"), self.path("summary")
        run("batch", mpath, "--out-dir", results, "--quiet", env=self.env, check=0, timeout=900)
        # independent truth for the cost: the onnx package's own count of the weights
        model = onnx.load(self.onnx)
        params = sum(numpy_helper.to_array(t).size for t in model.graph.initializer
                     if t.data_type == onnx.TensorProto.FLOAT)
        cost = json.loads(run("cost", self.onnx, "--json", check=0).stdout)
        for m in manifest["models"]:
            with self.subTest(model=m["name"]):
                with open(os.path.join(results, "classify", m["name"] + ".json")) as f:
                    r = json.load(f)
                validate_profile(r)
                self.assertEqual(r["status"], "complete")
                self.assertEqual(r["measured_calls"], 5)
                self.assertEqual(r["inputs"]["rgb"]["shape"], [480, 640, 3])
                eff = r["efficiency"]
                self.assertEqual(eff["params"], params)
                self.assertEqual(eff["flops"], cost["flops"])
                self.assertEqual(eff["coverage"], 1.0)
                bound = r["roofline"]["host-cpu"]
                self.assertIsNotNone(bound["ideal"]["latency_ms"])
                p50 = r["latency"]["p50_ms"]
                # a bound the measurement beats is a bug in one of them
                self.assertGreaterEqual(p50, bound["ideal"]["latency_ms"], bound)
                self.assertAlmostEqual(bound["achieved_fraction"]["ideal"],
                                       bound["ideal"]["latency_ms"] / p50, places=12)
                self.assertGreater(r["memory"]["cpu_inference_peak_mb"], 0)
        run("aggregate", results, "--out-dir", summary, "--expect", mpath, check=0)
        with open(os.path.join(summary, "summary.csv")) as f:
            rows = {row["model"]: row for row in csv.DictReader(f)}
        self.assertEqual(set(rows), {m["name"] for m in manifest["models"]})
        for row in rows.values():
            self.assertTrue(float(row["p50_ms"]) > 0)
            self.assertTrue(float(row["cpu_inference_peak_mb"]) > 0)
            self.assertEqual(int(row["params"]), params)
        with open(os.path.join(summary, "summary.md")) as f:
            table = f.read()
        self.assertIn("mobilenet_v2-opencv-dnn", table)
        self.assertIn("mobilenet_v2-libtorch", table)
        with open(os.path.join(summary, "validation.json")) as f:
            self.assertEqual(json.load(f)["status"], "PASS")

    def test_first_call_checks_the_output(self):
        conf = self.path("wrong.conf")
        with open(conf, "w") as f:
            f.write("model = mobilenet_v2.onnx\nsize = 480x640\nexpect = 1x999\n")
        for lib, sym, var in ((OPENCV, "opencv_dnn_predict", "RPX_OPENCV_CONFIG"),
                              (LIBTORCH, "libtorch_predict", "RPX_LIBTORCH_CONFIG")):
            if lib == LIBTORCH:
                with open(conf, "w") as f:
                    f.write("model = mobilenet_v2.pt\nsize = 480x640\nexpect = 1x999\n")
            out = self.path(sym + "-wrong.json")
            p = run("run", "--model", f"{lib}:{sym}", "--inputs", self.frame, "--output", out,
                    "--warmup", 1, "--repeats", 1, env={var: conf})
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("output shape 1x1000, expected 1x999", p.stderr)
            self.assertFalse(os.path.exists(out))

    def test_missing_model_says_how_to_give_one(self):
        out = self.path("none.json")
        env = {"RPX_OPENCV_CONFIG": self.path("no-such.conf"), "RPX_OPENCV_MODEL": ""}
        p = run("run", "--model", f"{OPENCV}:opencv_dnn_predict", "--inputs", self.frame,
                "--output", out, env=env)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("no model: set RPX_OPENCV_MODEL=FILE or write", p.stderr)
        # a variable overrides the file's line, and a bad value says what it expects
        p = run("run", "--model", f"{OPENCV}:opencv_dnn_predict", "--inputs", self.frame,
                "--output", out, env={"RPX_OPENCV_CONFIG": self.env["RPX_OPENCV_CONFIG"],
                                      "RPX_OPENCV_THREADS": "two"})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("threads 'two' is not a number of threads (0: the runtime's default)",
                      p.stderr)
        # the environment variable alone is enough
        p = run("run", "--model", f"{OPENCV}:opencv_dnn_predict", "--inputs", self.frame,
                "--output", out, "--warmup", 0, "--repeats", 1, "-q",
                env={"RPX_OPENCV_MODEL": self.onnx, "RPX_OPENCV_EXPECT": "1x1000"})
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_readme_walkthrough(self):
        """The README's "Profile your real model" commands run as written, from a
        folder that looks like the repository root, and print what it says."""
        with open(os.path.join(SOURCE, "README.md")) as f:
            readme = f.read()
        m = re.search(r"<!-- readme-example: real-model -->\s*```sh\n(.*?)```", readme, re.S)
        self.assertIsNotNone(m, "README.md lost its real-model walk-through")
        root = self.path("root")
        os.makedirs(root)
        os.symlink(os.path.abspath(BUILD), os.path.join(root, "build"))
        os.symlink(os.path.join(SOURCE, "examples"), os.path.join(root, "examples"))
        p = subprocess.run(["bash", "-euo", "pipefail", "-c", m.group(1)], cwd=root,
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        last = p.stdout.strip().splitlines()[-1]
        got = re.fullmatch(r"p50 ([\d.]+) ms, bound ([\d.]+) ms, achieved ([\d.]+) of the bound",
                           last)
        self.assertIsNotNone(got, p.stdout)
        p50, bound, achieved = map(float, got.groups())
        self.assertGreaterEqual(p50, bound)
        self.assertGreater(bound, 0)
        self.assertLessEqual(achieved, 1.0)
        self.assertIn("coverage", p.stdout)  # `rpxprof cost` printed its table

    def test_python_example(self):
        out = self.path("python.json")
        env = {"PYTHONPATH": os.path.join(SOURCE, "examples", "python")}
        run("run", "--model", "my_model:predict_depth", "--inputs", self.frame, "--output", out,
            "--warmup", 1, "--repeats", 2, "-q", env=env, check=0, timeout=600)
        with open(out) as f:
            r = json.load(f)
        validate_profile(r)
        self.assertEqual(r["status"], "complete")
        self.assertEqual(r["target_kind"], "python")
        import torch
        self.assertEqual(r["system_card"]["pytorch_version"], torch.__version__)
        # my_model.py asks torch for every CPU it may use
        self.assertEqual(r["python"]["torch_num_threads"], len(os.sched_getaffinity(0)))
        self.assertGreater(r["latency"]["p50_ms"], 0)


if __name__ == "__main__":
    main()
