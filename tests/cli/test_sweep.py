"""rpxprof sweep (issue 40 §1, §3): the scaling exponent of two C test models whose
time goes as an input's height and as its square (tests/models/sweep_models.c: CPU
time burnt in proportion, each worker process 3 % apart at most) — each interval holds
its own exponent and excludes the other's; --vary batch on a C shared object with
generated inputs (4 points, FLOPs batch x one item's, a bound and a throughput at each);
sweep.json against schemas/sweep.json, every point's report against profile.json and
all in one session; the page parsed (and drawn by Chromium in the normal build); what
is refused; a sweep interrupted keeps every point's report and sweep.json. No test
asserts a speed."""
import csv
import html.parser
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

import numpy as np

from common import BIN, BUILD, SANITIZED, TempDirTest, main, run, validate, validate_profile

SWEEP_MODELS = os.path.join(BUILD, "test-models", "librpxtest_sweep.so")
# calls of 100 us to 410 us: long beside the runner's own overhead a call, short beside a
# time slice of the shared machine (a longer call is stretched by the other processes)
ENV = {"RPX_TEST_NS_PER_ROW": "12800", "RPX_TEST_NS_PER_CELL": "400"}
HEIGHTS = "16,20,24,28,32"
SMALL = ["--repeats", "80", "--processes", "4", "--warmup", "2"]


def sweep(test, *args, out="out", check=0, env=None):
    d = test.path(out)
    p = run("sweep", *args, "--out-dir", d, env=dict(ENV, **(env or {})), check=check)
    return p, d


def load(d, name="sweep.json"):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


class ScalingTest(TempDirTest):
    def fit(self, model):
        _, d = sweep(self, "--model", f"{SWEEP_MODELS}:{model}", "--make",
                     "image=1xheightx4:float32", "--vary", f"dim:height={HEIGHTS}", *SMALL,
                     out=model)
        sw = load(d)
        validate(sw, "sweep.json")
        return sw, d

    def test_exponents_hold_1_and_2_and_exclude_the_other(self):
        for model, truth, other in (("by_height", 1.0, 2.0), ("by_height_squared", 2.0, 1.0)):
            sw, d = self.fit(model)
            sc = sw["scaling"]
            lo, hi = sc["exponent_ci"]
            self.assertEqual(sc["size_of"], "height")
            self.assertTrue(lo <= truth <= hi, (model, sc))
            self.assertFalse(lo <= other <= hi, (model, sc))
            self.assertEqual([p["value"] for p in sw["points"]], [16, 20, 24, 28, 32])
            # every point a whole report, all of one session (the sweep's)
            ids = set()
            for p in sw["points"]:
                r = load(d, p["report"])
                validate_profile(r)
                ids.add(r["session"]["id"])
                self.assertEqual(r["inputs"]["image"]["shape"], [1, p["value"], 4])
                self.assertTrue(p["valid"])
            self.assertEqual(ids, {sw["session"]["id"]})
        # aggregate over the two models' sweeps: the paper's figure, a line a model
        out = self.path("agg")
        run("aggregate", self.path("by_height"), self.path("by_height_squared"), "--out-dir", out,
            check=0)
        with open(os.path.join(out, "sweeps.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 10)
        self.assertEqual({r["model"].rsplit(":", 1)[1] for r in rows},
                         {"by_height", "by_height_squared"})
        svg = ET.parse(os.path.join(out, "sweeps.svg")).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        groups = svg.findall(f"{ns}g")
        self.assertEqual(len(groups), 2)
        for g in groups:
            self.assertEqual(len(g.findall(f"{ns}polyline")), 1)
            self.assertEqual(len(g.findall(f"{ns}circle")), 5)

    def test_the_processes_of_the_points_interleave(self):
        """round k runs process k of every point, starting at point k mod K: in the order
        the worker processes were forked (their pids, ascending), the rounds follow one
        another and rotate"""
        _, d = sweep(self, "--model", f"{SWEEP_MODELS}:by_height", "--make",
                     "image=1xheightx4:float32", "--vary", "dim:height=16,24,32", *SMALL,
                     "--timeline")
        sw = load(d)
        forks = []
        for i, p in enumerate(sw["points"]):
            for w in load(d, p["report"])["timeline"]["processes"]:
                forks.append((w["pid"], w["process"], i))
        forks.sort()
        if [pid for pid, _, _ in forks] != sorted(set(pid for pid, _, _ in forks)) or \
                forks[-1][0] - forks[0][0] > 100000:
            self.skipTest("the pids wrapped around during the sweep: no order to read")
        self.assertEqual([(k, i) for _, k, i in forks],
                         [(k, (k + j) % 3) for k in range(4) for j in range(3)], forks)


class WrongWayTest(TempDirTest):
    def test_a_larger_point_that_is_faster_is_found_and_real(self):
        """by_height_kinked is 1.6x slower at height 20 alone: 20 -> 24 went the wrong way
        (ratio 24/(20 x 1.6) = 0.75), and its interval says it is real; no other pair"""
        _, d = sweep(self, "--model", f"{SWEEP_MODELS}:by_height_kinked", "--make",
                     "image=1xheightx4:float32", "--vary", "dim:height=16,20,24,28", *SMALL)
        sw = load(d)
        validate(sw, "sweep.json")
        ww = sw["wrong_way"]
        self.assertEqual([(w["from"], w["to"]) for w in ww], [("height-20", "height-24")], ww)
        w = ww[0]
        self.assertTrue(w["real"], w)
        self.assertLess(w["ratio_ci"][1], 1)
        self.assertTrue(w["ratio_ci"][0] <= w["ratio"] <= w["ratio_ci"][1])
        self.assertEqual(w["along"], "height")


class BatchTest(TempDirTest):
    def test_batch_on_a_shared_object_with_generated_inputs(self):
        _, d = sweep(self, "--model", f"{SWEEP_MODELS}:by_height", "--make",
                     "image=1x16x4:float32", "--vary", "batch=1,2,4,8", "--flops", "1e6",
                     *SMALL, "--html", self.path("page.html"))
        sw = load(d)
        validate(sw, "sweep.json")
        pts = sw["points"]
        self.assertEqual([p["value"] for p in pts], [1, 2, 4, 8])
        for p in pts:
            self.assertEqual(p["flops"], 1e6 * p["value"])
            self.assertGreater(p["bound_ms"], 0)
            self.assertGreater(p["throughput_per_s"], 0)
            self.assertAlmostEqual(p["throughput_per_s"], p["value"] * 1000 / p["p50_ms"])
            r = load(d, p["report"])
            self.assertEqual(r["inputs"]["image"]["shape"], [p["value"], 16, 4])
        self.assertEqual(sw["scaling"]["size_of"], "batch")
        self.assertAlmostEqual(sw["scaling"]["bound_exponent"], 1.0, places=6)
        self.assertIn(sw["best_throughput"]["label"], [p["label"] for p in pts])
        self.assertIn("90 %", sw["knee"]["definition"])
        self.check_page(self.path("page.html"), len(pts))

    def check_page(self, path, n):
        with open(path) as f:
            page = f.read()

        class P(html.parser.HTMLParser):
            def __init__(self):
                super().__init__()
                self.ids, self.circles, self.polylines = [], 0, []

            def handle_starttag(self, tag, attrs):
                a = dict(attrs)
                if a.get("id"):
                    self.ids.append(a["id"])
                if tag == "circle":
                    self.circles += 1
                if tag == "polyline":
                    self.polylines.append(a.get("class"))

        p = P()
        p.feed(page)
        for fid in ("sweep-latency", "sweep-pareto", "sweep-wrong-way", "sweep-points",
                    "sweep-capacity"):
            self.assertIn(fid, p.ids)
        self.assertEqual(p.circles, 2 * n)  # a dot a point in each figure
        self.assertEqual(sorted(p.polylines), ["sweep-bound", "sweep-p50"])
        if SANITIZED:
            return
        from test_html import CHROMIUM, chromium
        if not CHROMIUM:
            self.fail("chromium is not installed (scripts/setup.sh installs it)")
        prof = tempfile.mkdtemp(prefix="rpxchrome-")
        try:
            c = chromium("--virtual-time-budget=3000", "--dump-dom", "file://" + path, prof=prof)
        finally:
            shutil.rmtree(prof, ignore_errors=True)
        self.assertIn('id="sweep-latency"', c.stdout)
        console = [l for l in c.stderr.splitlines() if "CONSOLE" in l]
        self.assertEqual(console, [], "chromium's console log")


class RefusedTest(TempDirTest):
    def test_what_is_refused(self):
        m = f"{SWEEP_MODELS}:by_height"
        for args, words in (
                (["--vary", "rate=auto"], "capacity"),
                (["--vary", "height=a,b"], "not a shape"),
                (["--vary", "dim:height=8"], "two values"),
                (["--vary", "dim:height=8,0", "--make", "x=1xheightx2"], "not a whole number"),
                (["--vary", "dim:height=8,16"], "--make"),
                (["--vary", "dim:height=8,16", "--make", "x=1xheightx2", "--flops", "1e6"],
                 "--cost"),
                (["--vary", "batch=1,2", "--auto"], "fixed --repeats"),
                (["--vary", "dim:height=8,16", "--make", "x=1xwidthx2"], "width")):
            p, _ = sweep(self, "--model", m, *args, *SMALL, check=None)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(words, p.stderr, args)
            self.assertNotIn("Traceback", p.stderr)


class InterruptTest(TempDirTest):
    def test_a_signal_keeps_every_point_and_sweep_json(self):
        d = self.path("out")
        env = dict(os.environ, **ENV)
        proc = subprocess.Popen([BIN, "sweep", "--model", f"{SWEEP_MODELS}:by_height", "--make",
                                 "image=1xheightx4:float32", "--vary", "dim:height=16,32",
                                 "--repeats", "40000", "--processes", "40", "--out-dir", d],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        # a process a point a round is 1,000 calls of 0.2 to 0.4 ms: the first rounds end
        # within seconds, and the signal comes in the middle of one
        deadline = time.time() + 60
        while time.time() < deadline and not os.path.exists(os.path.join(d, "inputs")):
            time.sleep(0.1)
        time.sleep(2.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 130, err)
        sw = load(d)
        validate(sw, "sweep.json")
        for p in sw["points"]:
            self.assertFalse(p["valid"])
            self.assertIn("interrupted", p["invalid_reason"])
            self.assertEqual(load(d, p["report"])["status"], "interrupted")


if __name__ == "__main__":
    main()
