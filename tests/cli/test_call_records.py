"""Where each call ran (issue 27 §1): the report's call_records (per call,
parallel to latency_samples_ms) and each latency_by_process entry's cpus,
migrations, context_switches, page_faults and off_cpu_ms, against models whose
truth is known: pages touched per call (minor faults), a 2 ms nanosleep (off-CPU
time, a voluntary switch), a busy-wait (no off-CPU time), a run pinned with
taskset -c 0 (every call on CPU 0), a faked hybrid CPU through RPX_SYSROOT
(core types), --call-records off and an HTTP target (null). The per-call counters are
--call-records full's; the default (cpu) records the CPU per call and the counters once per
process over its timed loop. Bounds are generous: the machine is shared."""
import json
import os
import shutil
import subprocess

import numpy as np

from common import (BIN, MODELS, SANITIZED, TempDirTest, main, run, run_report, validate,
                    validate_profile)

FIELDS = ("migrations", "voluntary_switches", "involuntary_switches", "minor_faults",
          "major_faults")


class CallRecordsTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))

    def profile(self, model, *args, env=None):
        _, r, _ = run_report(self, "--model", f"{MODELS}:{model}", "--inputs", self.inputs,
                             "--quiet", *map(str, args), env=env)
        validate_profile(r)
        return r

    def check_parallel_and_totals(self, r):
        """Every array as long as latency_samples_ms; each process's totals the sums of
        its slice of the per-call arrays."""
        cr = r["call_records"]
        n = len(r["latency_samples_ms"])
        for k in ("cpu_start", "cpu_end", "off_cpu_ms") + FIELDS:
            self.assertIsNotNone(cr[k], k)
            self.assertEqual(len(cr[k]), n, k)
        for p in r["latency_by_process"]:
            a, m = p["sample_offset"], p["measured_calls"]
            sl = slice(a, a + m)
            self.assertEqual(p["migrations"], sum(cr["migrations"][sl]))
            self.assertEqual(p["context_switches"],
                             {"voluntary": sum(cr["voluntary_switches"][sl]),
                              "involuntary": sum(cr["involuntary_switches"][sl])})
            self.assertEqual(p["page_faults"], {"minor": sum(cr["minor_faults"][sl]),
                                                "major": sum(cr["major_faults"][sl])})
            self.assertAlmostEqual(p["off_cpu_ms"], sum(cr["off_cpu_ms"][sl]), places=9)
            counted = {}
            for c in cr["cpu_start"][sl]:
                counted[c] = counted.get(c, 0) + 1
            self.assertEqual(p["cpus"], [{"cpu": c, "calls": counted[c]} for c in sorted(counted)])

    def test_touched_pages_are_minor_faults(self):
        # truth: the model writes into 64 fresh pages a call
        r = self.profile("touch_pages", "--warmup", "2", "--repeats", "40", "--processes", "2",
                         "--call-records", "full", env={"RPX_TEST_PAGES": "64"})
        self.assertEqual(r["call_records"]["mode"], "full")
        faults = r["call_records"]["minor_faults"]
        self.assertEqual(len(faults), 40)
        self.assertTrue(all(f >= 64 for f in faults), faults)
        self.check_parallel_and_totals(r)
        self.assertEqual(len(r["latency_by_process"]), 2)
        for p in r["latency_by_process"]:
            self.assertGreaterEqual(p["page_faults"]["minor"], 64 * p["measured_calls"])

    def test_sleep_is_off_cpu_and_a_voluntary_switch(self):
        r = self.profile("sleep_ns", "--warmup", "2", "--repeats", "30", "--processes", "1",
                         "--call-records", "full", env={"RPX_TEST_SLEEP_NS": "2000000"})
        cr = r["call_records"]
        off = np.array(cr["off_cpu_ms"])
        # nanosleep(2 ms) sleeps at least 2 ms; the thread's CPU time around it is microseconds
        self.assertTrue(all(o >= 1.8 for o in off), off)
        self.assertLess(float(np.median(off)), 2.0 + (40 if SANITIZED else 10))
        # off-CPU is the call's time minus CPU time, never more than the call
        for o, s in zip(off, r["latency_samples_ms"]):
            self.assertLessEqual(o, s + 1e-9)
        self.assertTrue(all(v >= 1 for v in cr["voluntary_switches"]), cr["voluntary_switches"])
        self.check_parallel_and_totals(r)

    def test_busy_wait_is_on_cpu(self):
        r = self.profile("busywait", "--warmup", "2", "--repeats", "60", "--processes", "1",
                         "--call-records", "full", env={"RPX_TEST_BUSY_NS": "1000000"})
        off = np.array(r["call_records"]["off_cpu_ms"])
        # a quiet CPU would give 0; the median allows for a busy 2-core machine
        self.assertLess(float(np.median(off)), 0.3, off)
        self.assertTrue(all(v == 0 for v in r["call_records"]["voluntary_switches"]))
        self.check_parallel_and_totals(r)

    def pinned(self, args, env=None):
        """rpxprof run pinned to CPU 0 (taskset -c 0, or the same affinity set directly)."""
        if 0 not in os.sched_getaffinity(0):
            self.skipTest("CPU 0 is not allowed here")
        out = self.path("pinned.json")
        cmd = [BIN, "run", *args, "--output", out]
        e = dict(os.environ, **(env or {}))
        if shutil.which("taskset"):
            p = subprocess.run(["taskset", "-c", "0", *cmd], capture_output=True, text=True, env=e)
        else:
            p = subprocess.run(cmd, capture_output=True, text=True, env=e,
                               preexec_fn=lambda: os.sched_setaffinity(0, {0}))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return json.load(f)

    def test_taskset_puts_every_call_on_cpu_0(self):
        r = self.pinned(["--model", f"{MODELS}:busywait", "--inputs", self.inputs, "--quiet",
                         "--warmup", "2", "--repeats", "50", "--processes", "3",
                         "--call-records", "full"],
                        env={"RPX_TEST_BUSY_NS": "100000"})
        validate_profile(r)
        cr = r["call_records"]
        self.assertEqual(cr["cpu_start"], [0] * 50)
        self.assertEqual(cr["cpu_end"], [0] * 50)
        self.assertTrue(all(m == 0 for m in cr["migrations"]))
        for p in r["latency_by_process"]:
            self.assertEqual(p["cpus"], [{"cpu": 0, "calls": p["measured_calls"]}])
            self.assertEqual(p["migrations"], 0)
        self.check_parallel_and_totals(r)

    def test_hybrid_core_types_from_the_sysroot(self):
        # a faked hybrid CPU: CPU 0 a performance core, every other an efficiency core
        root = self.path("root")
        for d, cpus in (("cpu_core", "0\n"), ("cpu_atom", "1-4095\n")):
            os.makedirs(os.path.join(root, "sys", "devices", d))
            with open(os.path.join(root, "sys", "devices", d, "cpus"), "w") as f:
                f.write(cpus)
        r = self.profile("busywait", "--warmup", "1", "--repeats", "20", "--processes", "2",
                         env={"RPX_SYSROOT": root, "RPX_TEST_BUSY_NS": "10000"})
        cr = r["call_records"]
        self.assertEqual(cr["core_type"],
                         ["performance" if c == 0 else "efficiency" for c in cr["cpu_start"]])
        self.assertIn("cpu_core", cr["source"]["core_type"])
        # without the two lists it is not a hybrid CPU: null, and said why
        r = self.profile("busywait", "--warmup", "1", "--repeats", "5", "--processes", "1",
                         env={"RPX_SYSROOT": self.path("empty"), "RPX_TEST_BUSY_NS": "10000"})
        self.assertIsNone(r["call_records"]["core_type"])
        self.assertIn("not a hybrid CPU", r["call_records"]["source"]["core_type"])

    def test_pmu_is_said_once_never_guessed(self):
        # the default records no clock per call: null, and said why
        r = self.profile("busywait", "--warmup", "1", "--repeats", "10", "--processes", "1",
                         env={"RPX_TEST_BUSY_NS": "200000"})
        self.assertIsNone(r["call_records"]["effective_clock_ghz"])
        self.assertIn("--call-records full", r["call_records"]["source"]["effective_clock_ghz"])
        self.assertTrue(r["call_records"]["pmu"]["why"])
        r = self.profile("busywait", "--warmup", "1", "--repeats", "10", "--processes", "1",
                         "--call-records", "full", env={"RPX_TEST_BUSY_NS": "200000"})
        cr = r["call_records"]
        self.assertTrue(cr["pmu"]["why"])
        if cr["pmu"]["available"]:
            ghz = cr["effective_clock_ghz"]
            self.assertEqual(len(ghz), 10)
            self.assertTrue(all(0.05 < g < 10 for g in ghz), ghz)
        else:
            self.assertIsNone(cr["effective_clock_ghz"])
            self.assertIn("perf_event_open", cr["pmu"]["why"])
        for k, how in cr["source"].items():
            self.assertTrue(how, k)

    def test_http_records_nothing(self):
        # an HTTP call's time is the remote server's: null, like --call-records off
        from http_server import HttpTestServer
        srv = HttpTestServer().start()
        self.addCleanup(srv.stop)
        npz = self.path("rgb.npz")
        np.savez(npz, rgb=np.zeros((4, 4, 3), np.uint8))
        _, r, _ = run_report(self, "--model", srv.url("/depth"), "--inputs", npz, "--warmup", "1",
                             "--repeats", "5", "-q", timeout=120)
        validate_profile(r)
        self.assertEqual(r["measured_calls"], 5)
        self.assertIsNone(r["call_records"])
        for p in r["latency_by_process"]:
            self.assertIsNone(p["cpus"])
            self.assertIsNone(p["off_cpu_ms"])

    def test_default_is_the_cpu_per_call_and_totals_per_process(self):
        # truth: 64 fresh pages a call; per call only the CPU, the counters per process
        r = self.profile("touch_pages", "--warmup", "2", "--repeats", "40", "--processes", "2",
                         env={"RPX_TEST_PAGES": "64"})
        cr = r["call_records"]
        self.assertEqual(cr["mode"], "cpu")
        n = len(r["latency_samples_ms"])
        self.assertEqual(len(cr["cpu_start"]), n)
        self.assertEqual(len(cr["cpu_end"]), n)
        for k in FIELDS + ("off_cpu_ms", "effective_clock_ghz"):
            self.assertIsNone(cr[k], k)
        for k in FIELDS + ("off_cpu_ms",):
            self.assertIn("over the process's timed loop, not per call", cr["source"][k])
        self.assertIn("not per call", cr["source"]["per_process"])
        for p in r["latency_by_process"]:
            a, m = p["sample_offset"], p["measured_calls"]
            counted = {}
            for c in cr["cpu_start"][a:a + m]:
                counted[c] = counted.get(c, 0) + 1
            self.assertEqual(p["cpus"], [{"cpu": c, "calls": counted[c]} for c in sorted(counted)])
            # the timed calls' faults, not the warmup's twice over (2 x 64 + bookkeeping)
            self.assertGreaterEqual(p["page_faults"]["minor"], 64 * m)
            self.assertLess(p["page_faults"]["minor"], 64 * m + 2 * 64 + 200)
            self.assertGreaterEqual(p["page_faults"]["major"], 0)
            self.assertGreaterEqual(p["context_switches"]["voluntary"], 0)
            self.assertGreaterEqual(p["off_cpu_ms"], 0)
            self.assertTrue(p["migrations"] is None or p["migrations"] >= 0)
            if p["migrations"] is None:
                self.assertIn("perf_event_open", cr["source"]["per_process"] + str(cr["source"]))

    def test_default_counts_a_sleep_off_cpu_per_process(self):
        r = self.profile("sleep_ns", "--warmup", "2", "--repeats", "20", "--processes", "1",
                         env={"RPX_TEST_SLEEP_NS": "2000000"})
        (p,) = r["latency_by_process"]
        self.assertIsNone(r["call_records"]["off_cpu_ms"])
        # 20 sleeps of 2 ms: at least 36 ms off the CPU, at most the loop's wall time
        self.assertGreaterEqual(p["off_cpu_ms"], 20 * 1.8)
        self.assertLess(p["off_cpu_ms"], sum(r["latency_samples_ms"]) + (400 if SANITIZED else 100))
        self.assertGreaterEqual(p["context_switches"]["voluntary"], 20)

    def test_call_records_value_is_checked(self):
        p = subprocess.run([BIN, "run", "--model", f"{MODELS}:busywait", "--inputs", self.inputs,
                            "--call-records", "some", "--output", self.path("x.json")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--call-records 'some'", p.stderr)
        self.assertIn("expected cpu, full or off", p.stderr)
        self.assertFalse(os.path.exists(self.path("x.json")))

    def test_off_leaves_nulls(self):
        r = self.profile("busywait", "--warmup", "1", "--repeats", "10", "--processes", "2",
                         "--call-records", "off", env={"RPX_TEST_BUSY_NS": "10000"})
        self.assertIsNone(r["call_records"])
        for p in r["latency_by_process"]:
            for k in ("cpus", "migrations", "context_switches", "page_faults", "off_cpu_ms"):
                self.assertIn(k, p)
                self.assertIsNone(p[k], k)

    def test_manifest_call_records(self):
        # a manifest's call_records, in defaults and per model, as --call-records
        def manifest(name, defaults, models):
            m = {"schema": "rpxprof.manifest/1",
                 "defaults": {"warmup": 1, "repeats": 6, "processes": 2, **defaults},
                 "tasks": {"t": {"inputs": os.path.abspath(self.inputs)}},
                 "models": [{"name": n, "model": os.path.abspath(MODELS) + ":busywait",
                             "tasks": ["t"], **extra}
                            for n, extra in models]}
            path = self.path(name)
            with open(path, "w") as f:
                json.dump(m, f)
            return m, path

        m, path = manifest("m.json", {"call_records": "full"},
                           [("a", {}), ("b", {"call_records": "off"}), ("c", {"call_records": None})])
        validate(m, "manifest.json")
        out = self.path("out")
        run("batch", path, "--out-dir", out, "--quiet", check=0, env={"RPX_TEST_BUSY_NS": "10000"})
        reports = {}
        for n in "abc":
            with open(os.path.join(out, "t", n + ".json")) as f:
                reports[n] = json.load(f)
            validate_profile(reports[n])
        self.assertEqual(reports["a"]["call_records"]["mode"], "full")
        self.check_parallel_and_totals(reports["a"])
        self.assertIsNone(reports["b"]["call_records"])  # off
        self.assertEqual(reports["c"]["call_records"]["mode"], "full")  # null: the default's
        # a bad value names the file, the field and the words
        _, bad = manifest("bad.json", {}, [("a", {"call_records": "some"})])
        p = run("batch", bad, "--out-dir", self.path("o2"), "--quiet", check=1)
        self.assertIn("models[0].call_records", p.stderr)
        self.assertIn("expected cpu, full or off", p.stderr)
        _, bad = manifest("bad2.json", {"call_records": 1}, [("a", {})])
        p = run("batch", bad, "--out-dir", self.path("o3"), "--quiet", check=1)
        self.assertIn("defaults.call_records: has the wrong type", p.stderr)


if __name__ == "__main__":
    main()
