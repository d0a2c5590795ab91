"""Isolation: a model that crashes, aborts, hangs, is killed or exits still
leaves a report with every sample measured before the event, the right status
and the right exit code."""
import json
import os
import time

import numpy as np

from common import MODELS, SANITIZED, TempDirTest, main, run, validate_profile

# under ASan the sanitizer catches SIGSEGV, reports, and aborts (SIGABRT)
SEGV = 6 if SANITIZED else 11


class IsolationTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))

    def go(self, model, *args, code, env=None, quiet=True):
        out = self.path("r.json")
        # one worker process unless a test asks for more: "call k" is the k-th of one process
        procs = [] if "--processes" in args else ["--processes", "1"]
        p = run("run", "--model", f"{MODELS}:{model}", "--inputs", self.inputs, "--output", out,
                *(["--quiet"] if quiet else []), *procs, *args, env=env)
        self.assertEqual(p.returncode, code, p.stderr)
        with open(out) as f:
            r = json.load(f)
        validate_profile(r)
        self.assertEqual(len(r["latency_samples_ms"]), r["measured_calls"])
        return p, r

    def test_crash_at_call_k_keeps_k_samples(self):
        # warmup 2: overall call 7 is timed call 5
        p, r = self.go("crash_at", "--warmup", "2", "--repeats", "100", code=3,
                       env={"RPX_TEST_AT": "7"})
        self.assertEqual(r["status"], "crashed")
        self.assertEqual(r["measured_calls"], 5)
        self.assertEqual(r["warmup_calls"], 2)
        self.assertEqual(r["failure"], {"phase": "loop", "call_index": 5, "in_warmup": False,
                                        "signal": SEGV, "signal_name": r["failure"]["signal_name"]})
        self.assertIn(f"crashed in timed call 5 with signal {SEGV}", r["error"])
        self.assertIn("report written with 5 samples", p.stderr)
        self.assertIsNotNone(r["latency"]["p50_ms"])
        self.assertGreater(r["memory"]["cpu_process_lifetime_peak_mb"], 0)
        self.assertIsNone(r["memory"]["cpu_inference_peak_mb"])
        self.assertTrue(r["isolated"])

    def test_crash_in_warmup(self):
        _, r = self.go("crash_at", "--warmup", "3", "--repeats", "10", code=3,
                       env={"RPX_TEST_AT": "1"})
        self.assertEqual((r["measured_calls"], r["warmup_calls"]), (0, 1))
        self.assertEqual(r["failure"]["call_index"], 1)
        self.assertTrue(r["failure"]["in_warmup"])
        self.assertIsNone(r["latency"]["p50_ms"])

    def test_abort_in_setup(self):
        _, r = self.go("abort_setup", code=3)
        self.assertEqual(r["status"], "crashed")
        self.assertEqual(r["failure"]["phase"], "setup")
        self.assertEqual(r["failure"]["signal"], 6)
        self.assertEqual(r["measured_calls"], 0)

    def test_hang_hits_the_call_timeout(self):
        t0 = time.monotonic()
        _, r = self.go("hang_at", "--warmup", "0", "--repeats", "50", "--call-timeout", "1",
                       code=4, env={"RPX_TEST_AT": "20"})
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(r["status"], "timed_out")
        self.assertEqual(r["measured_calls"], 20)
        self.assertIn("--call-timeout", r["error"])

    def test_whole_run_timeout(self):
        _, r = self.go("busywait", "--warmup", "0", "--repeats", "1000000", "--timeout", "1",
                       code=4)
        self.assertEqual(r["status"], "timed_out")
        self.assertIn("--timeout", r["error"])
        self.assertGreater(r["measured_calls"], 100)

    def test_killed(self):
        _, r = self.go("kill_at", "--warmup", "1", "--repeats", "20", code=5,
                       env={"RPX_TEST_AT": "4"})
        self.assertEqual(r["status"], "killed")
        self.assertEqual(r["measured_calls"], 3)
        self.assertIn("out-of-memory killer", r["error"])

    def test_out_of_memory_kill(self):
        """A real OOM kill: the run goes into a cgroup (v1 memory controller) limited to
        256 MiB, and the hog model keeps 16 MiB per call until the kernel kills it."""
        import shlex
        import subprocess
        from common import BIN
        base = "/sys/fs/cgroup/memory"
        group = os.path.join(base, f"rpxtest-{os.getpid()}")
        try:
            os.mkdir(group)
        except OSError as e:
            self.skipTest(f"no writable cgroup v1 memory controller here ({e})")
        try:
            with open(os.path.join(group, "memory.limit_in_bytes"), "w") as f:
                f.write(str(256 << 20))
            out = self.path("hog.json")
            q = shlex.quote  # a TMPDIR or a build folder may have a space in its name
            script = (f'echo $$ > {q(group + "/cgroup.procs")} && exec "$0" run --model '
                      f'{q(MODELS + ":hog")} --inputs {q(self.inputs)} --warmup 0 --repeats 1000 '
                      f'--quiet --output {q(out)}')
            p = subprocess.run(["sh", "-c", script, BIN], capture_output=True, text=True,
                               timeout=120)
        finally:
            os.rmdir(group)
        self.assertEqual(p.returncode, 5, p.stderr)
        with open(out) as f:
            r = json.load(f)
        validate_profile(r)
        self.assertEqual(r["status"], "killed")
        self.assertEqual(r["failure"]["signal"], 9)
        self.assertGreater(r["measured_calls"], 5)  # 256 MiB / 16 MiB per call, less rpxprof
        self.assertLess(r["measured_calls"], 17)
        self.assertEqual(len(r["latency_samples_ms"]), r["measured_calls"])
        self.assertLessEqual(r["memory"]["cpu_process_lifetime_peak_mb"], 260)

    def test_exit_mid_run(self):
        _, r = self.go("exit_at", "--warmup", "0", "--repeats", "20", code=3,
                       env={"RPX_TEST_AT": "6"})
        self.assertEqual(r["status"], "crashed")
        self.assertEqual(r["measured_calls"], 6)
        self.assertIn("exited (status 0)", r["error"])

    def test_leak_is_reported(self):
        if SANITIZED:
            self.skipTest("ASan changes the resident set")
        # 2000 calls x 64 KiB kept = 125 MiB over about 0.5 s of calls
        p, r = self.go("leaky", "--warmup", "0", "--repeats", "2000", code=0, quiet=False)
        leak = [n for n in r["notes"] if n.startswith("Resident memory grew")]
        self.assertEqual(len(leak), 1, r["notes"])
        self.assertIn("warning: Resident memory grew", p.stderr)
        _, steady = self.go("busywait", "--warmup", "5", "--repeats", "1000", code=0)
        self.assertFalse([n for n in steady["notes"] if n.startswith("Resident memory grew")])

    def test_no_isolate(self):
        _, r = self.go("counted", "--warmup", "1", "--repeats", "5", "--no-isolate", code=0)
        self.assertFalse(r["isolated"])
        self.assertEqual(r["status"], "complete")
        p = run("run", "--model", f"{MODELS}:counted", "--inputs", self.inputs, "--output",
                self.path("x.json"), "--no-isolate", "--timeout", "3")
        self.assertEqual(p.returncode, 2)
        self.assertIn("need isolation", p.stderr)


if __name__ == "__main__":
    main()
