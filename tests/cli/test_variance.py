"""Why a run varied (issue 27 §2): the report's `variance` section on real runs.
A steady busy-wait names no factor in at least 19 of 20 runs; the test model
that is 1.5x slower on one CPU, its processes pinned in rotation to the
allowed CPUs, is named by CPU with its ratio and share, warned about with the
fix and said in the summary; untestable cases (one process, everything pinned
to one CPU) say why. The CPU tests need the per-process and per-call records
(`latency_by_process[].cpus`, `call_records`) and skip with a message where a
report has none; they skip too where fewer than two CPUs are allowed."""
import os
import shutil
import subprocess
import sys

import numpy as np

from common import BIN, MODELS, TempDirTest, main, run_report, validate_profile

FACTORS = ["cpu", "migrations", "off_cpu", "page_faults", "order", "load"]


def allowed_cpus():
    return sorted(os.sched_getaffinity(0))


def factor(r, name):
    return next(f for f in r["variance"]["factors"] if f["factor"] == name)


class VarianceTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))

    def profile(self, model, *args, env=None, quiet=True):
        extra = ["--quiet"] if quiet else []
        p, r, _ = run_report(self, "--model", f"{MODELS}:{model}", "--inputs", self.inputs,
                             *extra, *map(str, args), env=env)
        validate_profile(r)
        return p, r

    def need_records(self, r):
        if not r.get("call_records") or any(b.get("cpus") is None
                                            for b in r["latency_by_process"]):
            self.skipTest("this report has no call_records / latency_by_process[].cpus (the "
                          "recording of where each call ran, issue 27 §1, is not in this build): "
                          "the CPU factor cannot be tested yet")

    def test_section_is_there_and_says_what_it_could_not_test(self):
        p, r = self.profile("busywait", "--repeats", "100", "--warmup", "2",
                            env={"RPX_TEST_BUSY_NS": "200000"}, quiet=False)
        v = r["variance"]
        self.assertEqual([f["factor"] for f in v["factors"]], FACTORS)
        self.assertIsNone(v["explained_by"])
        self.assertIsNone(v["message"])
        self.assertTrue(0 <= v["between_process_share"] <= 1)
        self.assertGreaterEqual(v["process_p50_ratio"], 1)
        for f in v["factors"]:
            if f["tested"]:
                self.assertIsNone(f["why"])
                self.assertEqual(len(f["groups"]) > 0, True)
            else:
                self.assertTrue(f["why"], f)
                self.assertIsNone(f["share"])
        self.assertTrue(factor(r, "order")["tested"])
        self.assertFalse(factor(r, "load")["tested"])
        # the per-process p50s the factors use are numpy's over each process's samples
        s = np.array(r["latency_samples_ms"])
        for g, b in zip(factor(r, "order")["groups"], r["latency_by_process"]):
            mine = np.percentile(s[b["sample_offset"]:b["sample_offset"] + b["measured_calls"]], 50)
            self.assertAlmostEqual(g["p50_ms"], float(mine), delta=1e-12)
            self.assertEqual(g["process"], b["process"])
        logs = [np.log(g["p50_ms"]) for g in factor(r, "order")["groups"]]
        r2 = np.corrcoef(np.arange(len(logs)), logs)[0, 1] ** 2
        self.assertAlmostEqual(factor(r, "order")["share"], float(r2), delta=1e-9)
        self.assertIn("why it varied: no factor explains the spread between processes", p.stderr)
        self.assertNotIn("Processes on CPU", p.stderr)

    def test_one_process_says_why(self):
        _, r = self.profile("busywait", "--repeats", "50", "--processes", "1",
                            env={"RPX_TEST_BUSY_NS": "100000"})
        v = r["variance"]
        self.assertIsNone(v["between_process_share"])
        self.assertIn("one process", v["null_reasons"]["between_process_share"])
        self.assertIn("one process", factor(r, "cpu")["why"])
        self.assertFalse(any(f["tested"] for f in v["factors"]))

    def test_a_steady_model_names_nothing_in_19_of_20_runs(self):
        named = []
        for _ in range(20):
            _, r = self.profile("busywait", "--repeats", "100", "--warmup", "2",
                                env={"RPX_TEST_BUSY_NS": "300000"})
            if r["variance"]["explained_by"]:
                named.append(r["variance"]["message"])
        self.assertLessEqual(len(named), 1, named)

    def test_a_run_that_drifts_process_by_process_is_named_and_warned(self):
        # process i takes 1 ms + i x 0.1 ms on every CPU: the order explains the spread
        p, r = self.profile("cpu_skewed", "--repeats", "100", "--warmup", "2", quiet=False,
                            env={"RPX_TEST_CPU_ROTATE": self.path("rotate"),
                                 "RPX_TEST_SLOW_NS": "1000000", "RPX_TEST_FAST_NS": "1000000",
                                 "RPX_TEST_STEP_NS": "100000"})
        v = r["variance"]
        f = factor(r, "order")
        self.assertTrue(f["named"], f)
        self.assertEqual(v["explained_by"], "order")
        self.assertAlmostEqual(f["ratio"], 1.4, delta=0.05)
        self.assertGreaterEqual(f["share"], 0.9)
        self.assertGreater(v["between_process_share"], 0.9)
        self.assertIn("The processes slowed down over the run: the last ran 1.4", v["message"])
        self.assertIn(v["message"], r["notes"])
        self.assertIn("rpxprof run: warning: " + v["message"], p.stderr)
        self.assertIn("why it varied: the processes' order explains", p.stderr)

    def test_a_model_slower_on_one_cpu_is_named_by_cpu(self):
        cpus = allowed_cpus()
        if len(cpus) < 2:
            self.skipTest(f"only CPU {cpus} is allowed here: a CPU factor needs two")
        p, r = self.profile("cpu_skewed", "--repeats", "250", "--warmup", "3", quiet=False,
                            env={"RPX_TEST_CPU_ROTATE": self.path("rotate")})
        self.need_records(r)
        f = factor(r, "cpu")
        self.assertTrue(f["tested"], f)
        self.assertAlmostEqual(f["ratio"], 1.5, delta=1.5 * 0.03)
        self.assertGreaterEqual(f["share"], 0.9)
        self.assertTrue(f["named"])
        self.assertEqual(r["variance"]["explained_by"], "cpu")
        slow = next(g for g in f["groups"] if g["cpu"] == cpus[0])
        self.assertEqual(slow["processes"], 3)  # processes 0, 2, 4 of 5 in rotation
        msg = r["variance"]["message"]
        self.assertIn(f"Processes on CPU {cpus[0]} ran 1.5", msg)
        self.assertIn("--cpus", msg)
        self.assertIn(msg, r["notes"])
        self.assertIn("rpxprof run: warning: " + msg, p.stderr)
        self.assertIn("why it varied: the CPU explains", p.stderr)

    def test_a_busy_loop_on_the_models_cpu_is_blamed_for_the_slow_calls(self):
        # issue 27 acceptance: a busy loop pinned with taskset to the CPU the model is
        # pinned to (--cpus N) takes that CPU from it in turns; the report says the
        # slowest calls lost the CPU, for how long, and warns about the other process
        cpus = allowed_cpus()
        taskset = shutil.which("taskset")
        if not taskset:
            self.skipTest("taskset (util-linux) is not installed")
        if len(cpus) < 2:
            self.skipTest(f"only CPU {cpus} is allowed here: a busy loop pinned there would "
                          "compete with rpxprof's own process and this test, not only the model")
        n = cpus[-1]
        loop = subprocess.Popen([taskset, "-c", str(n), sys.executable, "-c", "while True: pass"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        self.addCleanup(loop.wait)
        self.addCleanup(loop.kill)  # by its PID, whatever the test does
        p, r = self.profile("busywait", "--repeats", "300", "--processes", "3", "--warmup", "2",
                            "--cpus", n, "--call-records", "full", quiet=False,
                            env={"RPX_TEST_BUSY_NS": "1000000"})
        self.need_records(r)
        recs = r["call_records"]
        self.assertEqual(set(recs["cpu_start"]), {n})
        procs = r["latency_by_process"]
        # the calls lost the CPU: involuntary switches, and off-CPU time a large part of the
        # calls' time (the loop has the CPU about half the time; others' work takes some too)
        self.assertGreater(sum(b["context_switches"]["involuntary"] for b in procs), 0)
        self.assertGreater(sum(b["off_cpu_ms"] for b in procs),
                           0.1 * sum(r["latency_samples_ms"]), procs)
        tail = r["variance"]["slow_tail"]
        self.assertTrue(tail["tested"], tail)
        self.assertEqual(tail["calls"], 3)  # the slowest 1 % of 300
        self.assertGreaterEqual(tail["lost_cpu"]["calls"], 2, tail)
        self.assertGreater(tail["lost_cpu"]["share_of_all"], 0, tail)
        self.assertGreater(tail["off_cpu_ms_range"][1], 0.5, tail)  # at least a scheduler slice
        self.assertIn("lost the CPU for", tail["message"])
        self.assertIn("slow tail: " + tail["message"], p.stderr)
        # and it warns: another process took the CPUs this run may use
        other = r["system_card"]["conditions"]["other_processes"]
        self.assertGreater(other["allowed_cpus_other_share"], 0.10, other)
        self.assertIn("rpxprof run: warning: Other processes took", p.stderr)
        self.assertIn("they competed with the model", p.stderr)

    def test_cpus_of_one_cpu_says_the_cpu_factor_could_not_be_tested(self):
        # --cpus of one CPU (as on a machine with one CPU): nothing breaks, the CPU factor
        # says why it was not tested, the others still are
        n = allowed_cpus()[-1]
        p, r = self.profile("busywait", "--repeats", "100", "--warmup", "2", "--cpus", n,
                            quiet=False, env={"RPX_TEST_BUSY_NS": "200000"})
        self.assertEqual(p.returncode, 0)
        self.need_records(r)
        self.assertEqual(r["placement"]["policy"], "pinned")
        self.assertEqual([b["cpus"] for b in r["latency_by_process"]],
                         [[{"cpu": n, "calls": 20}]] * 5)
        f = factor(r, "cpu")
        self.assertFalse(f["tested"])
        self.assertIsNone(f["share"])
        self.assertIn(f"every call ran on CPU {n} (pinned)", f["why"])
        self.assertTrue(factor(r, "order")["tested"])
        self.assertIn("why it varied:", p.stderr)

    def test_everything_pinned_to_one_cpu_says_why(self):
        cpus = allowed_cpus()
        taskset = shutil.which("taskset")
        if not taskset:
            self.skipTest("taskset (util-linux) is not installed")
        out = self.path("pinned", "r.json")
        os.makedirs(os.path.dirname(out))
        subprocess.run([taskset, "-c", str(cpus[-1]), BIN, "run", "--model",
                        f"{MODELS}:cpu_skewed", "--inputs", self.inputs, "--repeats", "50",
                        "--quiet", "--output", out], check=True, capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=300)
        import json
        with open(out) as fh:
            r = json.load(fh)
        validate_profile(r)
        self.need_records(r)
        f = factor(r, "cpu")
        self.assertFalse(f["tested"])
        self.assertIn(f"CPU {cpus[-1]}", f["why"])
        self.assertIsNone(r["variance"]["explained_by"])


if __name__ == "__main__":
    main()
