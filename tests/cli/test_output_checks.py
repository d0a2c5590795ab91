"""--check-outputs (issue 30 §3, docs/output-checks.md): a reference pass before the
timed calls, a seeded share of the timed calls compared with it outside the timed
span. A C model (NAME_outputs), a Python callable's return value and an HTTP body
(whole, or --output-field) each: an exact model passes, a model wrong on every 50th
call and a torch model with dropout left on are caught (status outputs_differ, exit 7),
--rtol/--atol accept a rounding jitter, --save-outputs/--reference-outputs compare
two runs on what they returned."""
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from common import BUILD, SOURCE, TempDirTest, main, run, run_report, validate

OUT_MODELS = os.path.join(BUILD, "test-models", "librpxtest_outputs.so")
PYMODELS = os.path.join(SOURCE, "tests", "models", "python_outputs")
PY = {"PYTHONPATH": PYMODELS}


class Base(TempDirTest):
    def setUp(self):
        super().setUp()
        self.a, self.b = self.path("a.npz"), self.path("b.npz")
        run("inputs", "make", self.a, "rgb=8x8x3:uint8=random", "--seed", 1, check=0)
        run("inputs", "make", self.b, "rgb=8x8x3:uint8=random", "--seed", 2, check=0)

    def check(self, model, *extra, code=0, repeats=200, processes=2, env=None):
        p, r, _ = run_report(self, "--model", model, "--inputs", self.a, "--inputs", self.b,
                             "--repeats", repeats, "--warmup", 2, "--processes", processes,
                             "--check-outputs", *extra, env=env, check=code)
        validate(r, "profile.json")
        return p, r


class CModels(Base):
    def test_exact_model_passes(self):
        p, r = self.check(f"{OUT_MODELS}:exact", "--check-fraction", 1)
        o = r["outputs"]
        self.assertIn("outputs: 0 of 200 checked calls differ from the reference (bit-exact)",
                      p.stderr)
        self.assertEqual(r["status"], "complete")
        self.assertEqual(o["verdict"], "match")
        self.assertEqual(o["checked_calls"], 200)
        self.assertEqual(o["mismatched_calls"], 0)
        self.assertEqual(o["comparison"], "bit_exact")
        self.assertEqual(o["reference"]["samples"], 2)
        self.assertNotEqual(o["reference"]["sha256"][0], o["reference"]["sha256"][1])
        self.assertEqual([x["name"] for x in o["outputs"]], ["sum", "head"])

    def test_default_fraction_checks_at_least_one_call_per_process(self):
        _, r = self.check(f"{OUT_MODELS}:exact", repeats=60, processes=3)
        o = r["outputs"]
        self.assertEqual(o["fraction"], 0.01)
        self.assertTrue(all(p["checked"] >= 1 for p in o["by_process"]), o["by_process"])

    def test_wrong_every_50th_call_is_caught(self):
        p, r = self.check(f"{OUT_MODELS}:wrong50", "--check-fraction", 1, repeats=400, code=7)
        o = r["outputs"]
        self.assertEqual(r["status"], "outputs_differ")
        self.assertEqual(o["verdict"], "differ")
        # 2 processes x (2 reference + 2 warmup + 200 timed calls): calls 50, 100, ... of each
        self.assertEqual(o["mismatched_calls"], 8)
        m = o["mismatches"][0]
        self.assertEqual((m["output"], m["max_abs_diff"], m["elements_differing"]), ("sum", 1.0, 1))
        self.assertEqual(m["call"], 45)  # its 50th call: 2 reference + 2 warmup + 46th timed
        self.assertIn("outputs_differ", p.stderr)
        self.assertIn("timed call 45, sample 1", p.stderr)

    def test_jitter_fails_bit_exact_and_passes_within_rtol(self):
        self.check(f"{OUT_MODELS}:jitter", "--check-fraction", 1, code=7)
        _, r = self.check(f"{OUT_MODELS}:jitter", "--check-fraction", 1, "--rtol", "1e-5")
        o = r["outputs"]
        self.assertEqual((o["comparison"], o["rtol"], o["atol"]), ("tolerance", 1e-5, 0.0))
        self.assertGreater(o["max_abs_diff"], 0)

    def test_float16_differences_are_measured(self):
        _, r = self.check(f"{OUT_MODELS}:half", "--check-fraction", 1, processes=1, code=7)
        o = r["outputs"]
        self.assertEqual(o["max_abs_diff"], 2.0 ** -10)
        self.assertEqual(o["mismatches"][0]["elements_differing"], 1)
        _, r = self.check(f"{OUT_MODELS}:half", "--check-fraction", 1, "--atol", "0.001",
                          processes=1)
        self.assertEqual(r["outputs"]["verdict"], "match")

    def test_save_then_compare_against_the_saved_outputs(self):
        saved = self.path("ref")
        _, r = self.check(f"{OUT_MODELS}:exact", "--save-outputs", saved)
        self.assertEqual(sorted(os.listdir(saved)), ["outputs-00000.npz", "outputs-00001.npz"])
        self.assertEqual(r["outputs"]["reference"]["saved_to"], saved)
        import numpy as np
        z = np.load(os.path.join(saved, "outputs-00000.npz"))
        self.assertEqual(z["sum"].dtype, np.float64)
        self.assertEqual(float(z["sum"]), float(np.load(self.a)["rgb"].astype(np.float64).sum()))
        _, r = self.check(f"{OUT_MODELS}:exact", "--reference-outputs", saved)
        self.assertEqual(r["outputs"]["reference"]["source"], "saved")
        self.assertEqual(r["outputs"]["verdict"], "match")
        # `--check-outputs DIR` says the same
        p, r, _ = run_report(self, "--model", f"{OUT_MODELS}:exact", "--inputs", self.a,
                             "--inputs", self.b, "--repeats", 20, "--processes", 1,
                             "--check-outputs", saved)
        self.assertEqual(r["outputs"]["reference"], {
            "source": "saved", "path": saved, "saved_to": None, "samples": 2,
            "sha256": r["outputs"]["reference"]["sha256"],
            "digest": r["outputs"]["reference"]["digest"]})
        # the samples in the other order: every checked call differs from the saved answer
        p, r, _ = run_report(self, "--model", f"{OUT_MODELS}:exact", "--inputs", self.b,
                             "--inputs", self.a, "--repeats", 50, "--processes", 1,
                             "--check-outputs", "--reference-outputs", saved, check=7)
        self.assertEqual(r["outputs"]["mismatched_calls"], r["outputs"]["checked_calls"])
        # an existing saved reference is not replaced by surprise
        p = run("run", "--model", f"{OUT_MODELS}:exact", "--inputs", self.a, "--repeats", 5,
                "--save-outputs", saved, "--output", self.path("x.json"), check=2)
        self.assertRegex(p.stderr, r"outputs-0000[01]\.npz is already there")

    def test_refusals(self):
        p = run("run", "--model", f"{OUT_MODELS}:no_outputs", "--inputs", self.a, "--repeats", 5,
                "--check-outputs", "--output", self.path("x.json"), check=1)
        self.assertIn("export NAME_outputs", p.stderr)
        p = run("run", "--model", f"{OUT_MODELS}:exact", "--inputs", self.a, "--repeats", 5,
                "--rtol", "0.1", "--output", self.path("x.json"), check=2)
        self.assertIn("--rtol compares outputs; add --check-outputs", p.stderr)
        p = run("run", "--model", f"{OUT_MODELS}:exact", "--inputs", self.a, "--repeats", 5,
                "--check-outputs", "--reference-outputs", self.path("none"),
                "--output", self.path("x.json"), check=2)
        self.assertIn("outputs-00000.npz is missing", p.stderr)

    def test_manifest_output_checks(self):
        # a manifest's check_outputs, check_fraction, rtol, save_outputs, reference_outputs,
        # in defaults and per model, as the run options of the same names
        def manifest(name, defaults, models, valid=True):
            m = {"schema": "rpxprof.manifest/1",
                 "defaults": {"warmup": 2, "repeats": 200, "processes": 2, **defaults},
                 "tasks": {"t": {"inputs": [self.a, self.b]}},
                 "models": [{"name": n, "model": os.path.abspath(OUT_MODELS) + ":" + fn,
                             "tasks": ["t"], **extra}
                            for n, fn, extra in models]}
            path = self.path(name)
            with open(path, "w") as f:
                json.dump(m, f)
            if valid:
                validate(m, "manifest.json")
            return path

        def report(out, n):
            with open(os.path.join(out, "t", n + ".json")) as f:
                r = json.load(f)
            validate(r, "profile.json")
            return r

        all_calls = {"check_fraction": 1}
        path = manifest("m.json", {"check_outputs": True},
                        [("exact", "exact", all_calls), ("wrong", "wrong50", all_calls),
                         ("jitter", "jitter", {"rtol": 1e-3, **all_calls}),
                         ("off", "wrong50", {"check_outputs": False})])
        out = self.path("out")
        run("batch", path, "--out-dir", out, "--quiet", check=1)
        self.assertEqual(report(out, "exact")["outputs"]["verdict"], "match")
        self.assertEqual(report(out, "exact")["outputs"]["checked_calls"], 200)
        w = report(out, "wrong")
        self.assertEqual((w["status"], w["outputs"]["verdict"]), ("outputs_differ", "differ"))
        self.assertEqual(report(out, "jitter")["outputs"]["comparison"], "tolerance")
        self.assertEqual(report(out, "jitter")["status"], "complete")
        self.assertNotIn("outputs", report(out, "off"))
        # saved by one batch (DIR/TASK/MODEL), checked against by another
        path = manifest("save.json", {"save_outputs": "ref"}, [("exact", "exact", {})])
        run("batch", path, "--out-dir", self.path("o2"), "--quiet", check=0)
        self.assertEqual(sorted(os.listdir(self.path("ref", "t", "exact"))),
                         ["outputs-00000.npz", "outputs-00001.npz"])
        path = manifest("check.json", {}, [("exact", "exact", {"check_outputs": "ref"})])
        run("batch", path, "--out-dir", self.path("o3"), "--quiet", check=0)
        r = report(self.path("o3"), "exact")
        self.assertEqual(r["outputs"]["reference"]["source"], "saved")
        self.assertEqual(r["outputs"]["reference"]["path"], self.path("ref", "t", "exact"))
        # refused as `rpxprof run` refuses it, naming the key
        path = manifest("bad.json", {"rtol": 0.1}, [("exact", "exact", {})])
        p = run("batch", path, "--out-dir", self.path("o4"), "--quiet", check=1)
        self.assertIn("rtol", p.stderr)
        path = manifest("bad2.json", {"check_outputs": 3}, [("exact", "exact", {})], valid=False)
        p = run("batch", path, "--out-dir", self.path("o5"), "--quiet", check=1)
        self.assertIn("defaults.check_outputs: has the wrong type", p.stderr)

    def test_checks_off_no_outputs_section(self):
        _, r, _ = run_report(self, "--model", f"{OUT_MODELS}:wrong50", "--inputs", self.a,
                             "--repeats", 200, "--processes", 1)
        self.assertEqual(r["status"], "complete")
        self.assertNotIn("outputs", r)


class PythonModels(Base):
    def test_exact_passes_and_names_nested_outputs(self):
        _, r = self.check("rpx_output_models:exact", "--check-fraction", 1, env=PY)
        o = r["outputs"]
        self.assertEqual(o["verdict"], "match")
        self.assertEqual([(x["name"], x["dtype"], x["shape"]) for x in o["outputs"]],
                         [("mean", "float64", []), ("head", "float32", [8]),
                          ("pair", "float64", [2])])

    def test_wrong_every_50th_call_is_caught(self):
        _, r = self.check("rpx_output_models:wrong50", "--check-fraction", 1, repeats=400,
                          code=7, env=PY)
        self.assertEqual(r["outputs"]["mismatched_calls"], 8)
        self.assertEqual(r["outputs"]["mismatches"][0]["output"], "mean")

    def test_processes_that_disagree_are_caught(self):
        p, r = self.check("rpx_output_models:per_process", "--check-fraction", 1, processes=3,
                          code=7, env=PY)
        o = r["outputs"]
        self.assertEqual(o["mismatched_calls"], 0)  # each process agrees with itself
        self.assertEqual(o["processes_with_other_reference"], 2)
        self.assertEqual([b["reference_matches_first"] for b in o["by_process"]],
                         [True, False, False])
        self.assertIn("reference passes of the processes disagreed", p.stderr)
        self.assertRegex(o["reference"]["digest"], "^[0-9a-f]{64}$")

    def test_text_return_value(self):
        _, r = self.check("rpx_output_models:text", env=PY)
        self.assertEqual(r["outputs"]["outputs"][0]["dtype"], "uint8")

    def test_torch_dropout_left_on_is_caught_and_eval_passes(self):
        try:
            import torch  # noqa: F401  python3-torch (Debian)
        except ImportError:
            self.skipTest("torch is not installed")
        _, r = self.check("rpx_output_models:dropout", env=PY, repeats=100, code=7)
        o = r["outputs"]
        self.assertEqual(r["status"], "outputs_differ")
        self.assertGreaterEqual(o["mismatched_calls"], 1)
        self.assertEqual(o["mismatches"][0]["output"], "return")
        _, r = self.check("rpx_output_models:eval_net", env=PY, repeats=100)
        self.assertEqual(r["outputs"]["verdict"], "match")


class Answers(BaseHTTPRequestHandler):
    count = 0
    lock = threading.Lock()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with Answers.lock:
            Answers.count += 1
            n = Answers.count
        y = [1.5, 2.5]
        if self.path == "/wrong50" and n % 50 == 0:
            y = [1.5, 3.5]
        if self.path == "/error200" and n % 50 == 0:
            body = b"<html>Service busy</html>"
        else:
            body = json.dumps({"id": n, "y": y, "text": "ok"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Http(Base):
    def setUp(self):
        super().setUp()
        Answers.count = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def http(self, path, *extra, code=0):
        p, r, _ = run_report(self, "--model", self.url + path, "--inputs", self.a,
                             "--repeats", 150, "--warmup", 2, "--check-outputs",
                             "--check-fraction", 1, *extra, check=code)
        validate(r, "profile.json")
        return p, r

    def test_whole_body_differs_when_it_carries_a_request_id(self):
        _, r = self.http("/exact", code=7)
        self.assertEqual(r["outputs"]["outputs"][0]["name"], "body")
        self.assertEqual(r["outputs"]["mismatched_calls"], 150)

    def test_output_field_exact_passes(self):
        _, r = self.http("/exact", "--output-field", "y")
        o = r["outputs"]
        self.assertEqual(o["verdict"], "match")
        self.assertEqual(o["outputs"], [{"name": "y", "dtype": "float64", "shape": [2]}])
        _, r = self.http("/exact", "--output-field", "$.text")
        self.assertEqual(r["outputs"]["verdict"], "match")

    def test_wrong_every_50th_answer_is_caught(self):
        _, r = self.http("/wrong50", "--output-field", "y", code=7)
        o = r["outputs"]
        self.assertEqual(o["mismatched_calls"], 3)  # requests 50, 100, 150 of 154
        self.assertEqual(o["max_abs_diff"], 1.0)

    def test_error_page_with_200_is_caught(self):
        _, r = self.http("/error200", "--output-field", "y", code=7)
        o = r["outputs"]
        self.assertEqual(o["mismatched_calls"], 3)
        self.assertEqual(o["mismatches"][0]["reason"], "the outputs could not be read")


if __name__ == "__main__":
    main()
