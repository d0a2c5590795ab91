"""Samples from several processes (issue 16): the timed calls spread over K
worker processes, every sample kept with where it came from, intervals
recomputed here with numpy/scipy from the report's own samples, nulls with
reasons, outliers counted, warmup times kept, the stopping rule, and
`compare --run` measuring two targets interleaved."""
import json
import math
import os

import numpy as np

from common import MODELS, SANITIZED, TempDirTest, main, run, run_report, validate_profile

try:
    from scipy import stats as sstats
except ImportError:  # scripts/setup.sh installs python3-scipy
    sstats = None


class ProcessesTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))

    def profile(self, model, *args, env=None, check=0):
        p, r, _ = run_report(self, "--model", f"{MODELS}:{model}", "--inputs", self.inputs,
                             "--quiet", *map(str, args), env=env, check=check)
        if r is not None:
            validate_profile(r)
        return p, r

    def slices(self, r):
        s = np.array(r["latency_samples_ms"])
        return [s[b["sample_offset"]:b["sample_offset"] + b["measured_calls"]]
                for b in r["latency_by_process"]]

    def test_default_spreads_calls_over_five_processes(self):
        _, r = self.profile("busywait", "--warmup", "3", "--repeats", "1003",
                            env={"RPX_TEST_BUSY_NS": "20000"})
        self.assertEqual(r["processes"], 5)
        by = r["latency_by_process"]
        self.assertEqual([b["measured_calls"] for b in by], [201, 201, 201, 200, 200])
        self.assertEqual([b["sample_offset"] for b in by], [0, 201, 402, 603, 803])
        self.assertEqual(r["measured_calls"], 1003)
        # each process's statistics are its own samples'
        for b, s in zip(by, self.slices(r)):
            self.assertAlmostEqual(b["p50_ms"], float(np.percentile(s, 50)), places=9)
            self.assertAlmostEqual(b["mean_ms"], float(np.mean(s)), places=9)
        # the pooled statistics are over every sample, as before
        s = np.array(r["latency_samples_ms"])
        self.assertAlmostEqual(r["latency"]["p50_ms"], float(np.percentile(s, 50)), places=9)
        # every process did its own warmup; warmup times are kept, not statistics
        self.assertEqual(len(r["warmup_samples_ms"]), 5 * 3)
        self.assertGreater(min(r["warmup_samples_ms"]), 0.019)
        self.assertIsNone(r["stopping"])

    def test_between_process_interval_recomputed(self):
        if sstats is None:
            self.skipTest("scipy is not installed (scripts/setup.sh installs python3-scipy)")
        _, r = self.profile("busywait", "--warmup", "2", "--repeats", "600", "--processes", "4",
                            env={"RPX_TEST_BUSY_NS": "30000"})
        ci = r["latency_ci"]
        self.assertEqual((ci["covers"], ci["confidence"]), ("between-process", 0.95))
        k = r["processes"]
        t = sstats.t.ppf(0.975, k - 1)
        for key, stat in (("p50_ms", lambda s: np.percentile(s, 50)),
                          ("p95_ms", lambda s: np.percentile(s, 95)),
                          ("mean_ms", np.mean)):
            per = np.log([stat(s) for s in self.slices(r)])
            se = np.std(per, ddof=1) / math.sqrt(k)
            pooled = r["latency"][key]
            res = ci["widened_by_resolution_ms"]  # never narrower than the clock's resolution
            # centred on the geometric mean of the per-process statistics, widened to hold
            # the pooled statistic the report shows
            lo = min(math.exp(per.mean() - t * se), pooled) - res
            hi = max(math.exp(per.mean() + t * se), pooled) + res
            # and kept within the data (issue 36): no end past the fastest or slowest call
            lo = max(lo, min(r["latency_samples_ms"]))
            hi = min(hi, max(r["latency_samples_ms"]))
            self.assertAlmostEqual(ci[key][0], lo, delta=1e-9 + 1e-7 * lo, msg=key)
            self.assertAlmostEqual(ci[key][1], hi, delta=1e-9 + 1e-7 * hi, msg=key)
            self.assertLessEqual(ci[key][0], pooled)
            self.assertGreaterEqual(ci[key][1], pooled)
        # 150 calls per process cannot bound a per-process p99 (299 needed)
        self.assertIsNone(ci["p99_ms"])
        self.assertIn("299", ci["null_reasons"]["p99_ms"])

    def test_one_process_is_within_process_and_says_so(self):
        p = run("run", "--model", f"{MODELS}:busywait", "--inputs", self.inputs, "--output",
                self.path("one.json"), "--repeats", "400", "--processes", "1",
                env={"RPX_TEST_BUSY_NS": "20000"})
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path("one.json")) as f:
            r = json.load(f)
        self.assertEqual(r["processes"], 1)
        self.assertEqual(r["latency_ci"]["covers"], "within-process")
        self.assertIn("do not cover run-to-run variation", p.stderr)
        self.assertIn("400 timed calls in 1 process", p.stderr)
        if sstats is not None:
            # the distribution-free interval of the median: order statistics
            s = np.sort(np.array(r["latency_samples_ms"]))
            res = r["latency_ci"]["widened_by_resolution_ms"]
            lo, hi = (round(v, 9) for v in (r["latency_ci"]["p50_ms"][0] + res,
                                            r["latency_ci"]["p50_ms"][1] - res))
            s = np.round(s, 9)
            self.assertIn(lo, s)
            self.assertIn(hi, s)
            i, j = np.searchsorted(s, lo), np.searchsorted(s, hi, side="right")
            cover = sstats.binom.cdf(j - 1, len(s), 0.5) - sstats.binom.cdf(i - 1, len(s), 0.5)
            self.assertGreaterEqual(cover, 0.95 - 1e-9)

    def test_outliers_counted_not_removed(self):
        _, r = self.profile("busywait", "--repeats", "500", env={"RPX_TEST_BUSY_NS": "20000"})
        s = np.array(r["latency_samples_ms"])
        q1, q3 = np.percentile(s, [25, 75])
        iqr = q3 - q1
        severe = int(np.sum((s < q1 - 3 * iqr) | (s > q3 + 3 * iqr)))
        mild = int(np.sum((s < q1 - 1.5 * iqr) | (s > q3 + 1.5 * iqr))) - severe
        self.assertEqual(r["latency"]["outliers"]["mild"], mild)
        self.assertEqual(r["latency"]["outliers"]["severe"], severe)
        self.assertEqual(len(s), 500)

    def test_stopping_rule(self):
        # a loose target is reached at once, with the processes asked for
        _, r = self.profile("busywait", "--repeats", "200", "--target-precision", "50%",
                            env={"RPX_TEST_BUSY_NS": "20000"})
        st = r["stopping"]
        self.assertEqual((st["criterion"], st["target"]), ("p50_ci_half_width_relative", 0.5))
        self.assertTrue(st["converged"])
        self.assertEqual(st["processes"], 5)
        self.assertLessEqual(st["achieved"], 0.5)
        # an impossible one stops at the time limit and says how far it got
        _, r = self.profile("busywait", "--repeats", "50", "--processes", "2",
                            "--target-precision", "0.0000001", "--max-time", "1",
                            env={"RPX_TEST_BUSY_NS": "20000"})
        st = r["stopping"]
        self.assertFalse(st["converged"])
        self.assertGreaterEqual(st["processes"], 2)
        self.assertEqual(r["processes"], st["processes"])
        self.assertEqual(r["measured_calls"], st["calls"])
        self.assertTrue([n for n in r["notes"] if "not reached" in n])

    def test_a_target_precision_that_cannot_converge_is_refused_up_front(self):
        # 3 calls over 3 processes (5 asked): 1 call each, and a between-process p50 interval
        # needs 6 in every process, so no number of processes would ever state it
        for args, needed in ((["--repeats", "3"], "--repeats 30"),
                             (["--repeats", "10", "--processes", "2"], "--repeats 12")):
            p = run("run", "--model", f"{MODELS}:busywait", "--inputs", self.inputs, "--output",
                    self.path("x.json"), "--target-precision", "1e-9", *args, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("cannot be reached", p.stderr)
            self.assertIn("at least 6 calls in every process", p.stderr)
            self.assertIn(needed, p.stderr)
            self.assertNotIn("nan", p.stderr.lower())
            self.assertFalse(os.path.exists(self.path("x.json")))
        # 6 calls a process can: it runs, and its note never says nan
        _, r = self.profile("busywait", "--repeats", "12", "--processes", "2", "--target-precision",
                            "1e-9", "--max-time", "1", env={"RPX_TEST_BUSY_NS": "20000"})
        self.assertFalse(r["stopping"]["converged"])
        note = [n for n in r["notes"] if "not reached" in n]
        self.assertTrue(note, r["notes"])
        self.assertNotIn("nan", " ".join(r["notes"]).lower())
        # and it says why it stopped: the time limit, or the most processes rpxprof runs
        self.assertRegex(note[0], r"stopped: (another process would pass --max-time \(1 s\)|the most processes)")

    def test_achieved_precision_is_measured_from_the_p50(self):
        _, r = self.profile("busywait", "--repeats", "300", "--target-precision", "50%",
                            env={"RPX_TEST_BUSY_NS": "20000"})
        lo, hi = r["latency_ci"]["p50_ms"]
        p50 = r["latency"]["p50_ms"]
        self.assertAlmostEqual(r["stopping"]["achieved"], max(hi - p50, p50 - lo) / p50,
                               delta=1e-9)

    def test_more_processes_than_calls_is_said(self):
        _, r = self.profile("busywait", "--repeats", "3", "--processes", "5",
                            env={"RPX_TEST_BUSY_NS": "20000"})
        self.assertEqual(r["processes"], 3)
        self.assertTrue([n for n in r["notes"] if n.startswith("5 processes were asked for 3")])

    def test_crash_in_a_worker_keeps_the_samples_before(self):
        _, r = self.profile("crash_at", "--warmup", "0", "--repeats", "30", "--processes", "3",
                            env={"RPX_TEST_AT": "4"}, check=3)
        self.assertEqual(r["status"], "crashed")
        self.assertEqual((r["processes"], r["measured_calls"]), (1, 4))
        self.assertEqual(r["failure"]["call_index"], 4)

    def test_timeout_bounds_the_whole_run(self):
        # 5 processes whose setup waits 0.6 s (one wall-clock wait each, so a
        # busy machine stretches it little): each is within 1.5 s, the run is not
        _, r = self.profile("slow_setup", "--warmup", "0", "--repeats", "50", "--timeout", "1.5",
                            env={"RPX_TEST_SETUP_MS": "600"}, check=4)
        self.assertEqual(r["status"], "timed_out")
        self.assertIn("--timeout (1.5 s)", r["error"])
        self.assertGreaterEqual(r["processes"], 2)
        self.assertLess(r["measured_calls"], 50)

    def test_refused_combinations(self):
        for args, text in ((["--processes", "2", "--no-isolate"], "needs isolation"),
                           (["--processes", "0"], "--processes '0'"),
                           (["--processes", "101"], "from 1 to 100"),
                           (["--max-time", "5"], "--max-time bounds --target-precision"),
                           (["--target-precision", "0"], "--target-precision '0'"),
                           (["--target-precision", "2%", "--no-isolate"], "drop --no-isolate")):
            p = run("run", "--model", f"{MODELS}:busywait", "--inputs", self.inputs, "--output",
                    self.path("x.json"), *args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(text, p.stderr)

    def test_manifest_processes(self):
        man = self.path("m.json")
        with open(man, "w") as f:
            json.dump({"schema": "rpxprof.manifest/1",
                       "defaults": {"warmup": 1, "repeats": 30, "processes": 3},
                       "tasks": {"t": {"inputs": self.inputs, "unit": "frame"},
                                 "t3": {"inputs": self.inputs, "unit": "frame"}},
                       # a task of its own each: batch refuses two processes in one task (docs/batch.md)
                       "models": [{"name": "two", "model": f"{os.path.abspath(MODELS)}:counted",
                                   "tasks": ["t"], "processes": 2},
                                  {"name": "three", "model": f"{os.path.abspath(MODELS)}:counted",
                                   "tasks": ["t3"]}]}, f)
        out = self.path("out")
        p = run("batch", man, "--out-dir", out, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        for name, k, task in (("two", 2, "t"), ("three", 3, "t3")):
            with open(os.path.join(out, task, f"{name}.json")) as f:
                r = json.load(f)
            validate_profile(r)
            self.assertEqual((r["processes"], r["measured_calls"]), (k, 30))
        # --resume knows a report made with other processes is not this job's
        p = run("batch", man, "--out-dir", out, "--resume", "-q")
        self.assertIn("0 complete, 0 failed, 2 skipped", p.stdout)
        with open(man) as f:
            m = json.load(f)
        m["defaults"]["processes"] = 4
        with open(man, "w") as f:
            json.dump(m, f)
        p = run("batch", man, "--out-dir", out, "--resume", "-q")
        self.assertIn("1 complete, 0 failed, 1 skipped", p.stdout)
        m["defaults"]["processes"] = 101
        with open(man, "w") as f:
            json.dump(m, f)
        p = run("batch", man, "--out-dir", out, "-q")
        self.assertEqual(p.returncode, 1, p.stderr)
        # the options' table's words, as `run --processes 101` says them
        self.assertIn("defaults.processes '101': give a whole number from 1 to 100", p.stderr)

    # ---- compare --run ----

    def compare_run(self, b_model, *args, env=None):
        e = {"RPX_TEST_BUSY_NS": "100000"}
        e.update(env or {})
        return run("compare", "--run", "--model", f"{MODELS}:busywait", "--model",
                   f"{MODELS}:{b_model}", "--inputs", self.inputs, "--repeats", "300",
                   "--warmup", "3", *args, env=e)

    def test_compare_run_interleaves_and_judges(self):
        out = self.path("pair")
        p = self.compare_run("busywait_scaled", "--json", "--out-dir", out,
                             "--fail-on-regression", env={"RPX_TEST_SCALE": "2"})
        self.assertEqual(p.returncode, 3, p.stderr)  # twice as slow: a regression
        r = json.loads(p.stdout)
        self.assertEqual(r["verdict"], "slower")
        self.assertEqual(r["interleaved"], "ABBA by process")
        self.assertAlmostEqual(r["p50_ratio"], 2.0, delta=0.2)
        for name in ("base", "new"):
            with open(os.path.join(out, f"{name}.json")) as f:
                rep = json.load(f)
            validate_profile(rep)
            self.assertEqual((rep["processes"], rep["measured_calls"]), (10, 300))
        # without --out-dir nothing is left behind
        tmp = self.path("tmp")
        os.makedirs(tmp)
        p = self.compare_run("busywait_scaled", env={"TMPDIR": tmp, "RPX_TEST_SCALE": "0.5"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("verdict: faster", p.stdout)
        self.assertEqual(os.listdir(tmp), [])

    def test_compare_run_refusals(self):
        p = run("compare", "--run", "--model", f"{MODELS}:busywait", "--inputs", self.inputs)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--model twice", p.stderr)
        p = self.compare_run("busywait", "--processes", "1")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--processes '1'", p.stderr)


if __name__ == "__main__":
    main()
