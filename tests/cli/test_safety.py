"""Safe by default (issue 15): counts that size memory are refused up front, a
model stuck inside one call can always be stopped and still leaves a report,
killing rpxprof leaves no orphan, --call-timeout/--setup-timeout are honoured
far below the watch loop's 20 ms, the model's stdout never corrupts a report
written to stdout, and a short leaking run is flagged."""
import json
import os
import signal
import subprocess
import time

import numpy as np

from common import (BIN, MODELS, SANITIZED, TempDirTest, alive, children, main, run,
                    save_matmul_onnx, validate_profile)


def wait_until(cond, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


class SafetyTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))
        self.strays = []

    def tearDown(self):
        for pid in self.strays:  # never leave a spinning model behind, even on failure
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        super().tearDown()

    def args(self, model, *extra, out=None):
        return ["run", "--model", f"{MODELS}:{model}", "--inputs", self.inputs, "--quiet",
                "--output", out or self.path("r.json"), *map(str, extra)]

    def start(self, model, *extra, env=None, new_group=False):
        e = dict(os.environ)
        e.update(env or {})
        out = self.path("r.json")
        p = subprocess.Popen([BIN, *self.args(model, *extra, out=out)], env=e,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.DEVNULL, start_new_session=new_group)
        return p, out

    def started_model(self, p):
        """The model's process of a running `rpxprof run`, once it is running."""
        self.assertTrue(wait_until(lambda: children(p.pid), 30), "no model process started")
        kid = children(p.pid)[0]
        self.strays.append(kid)
        return kid

    def report(self, out):
        with open(out) as f:
            r = json.load(f)
        validate_profile(r)
        self.assertEqual(len(r["latency_samples_ms"]), r["measured_calls"])
        return r

    # ---- 1. counts that size memory ----

    def test_huge_counts_are_refused_before_any_call(self):
        for opt, value in [("--repeats", "9223372036854775807"), ("--repeats", "2147483648"),
                           ("--repeats", "10000001"), ("--warmup", "9223372036854775807"),
                           ("--repeats", "-1"), ("--repeats", "1e3")]:
            out = self.path("huge.json")
            p = run(*self.args("crash_at", opt, value, out=out), env={"RPX_TEST_AT": "0"})
            self.assertEqual(p.returncode, 2, (opt, value, p.stderr))
            self.assertIn(f"{opt} '{value}'", p.stderr)
            self.assertFalse(os.path.exists(out), "nothing is written for a refused count")
        p = run(*self.args("counted", "--repeats", "2147483648"))
        self.assertIn("from 1 to 10000000", p.stderr)  # the message states the limit
        # the limit itself is accepted (the buffer is mapped, not touched: a crash at call 3)
        p = run(*self.args("crash_at", "--warmup", "0", "--repeats", "10000000"),
                env={"RPX_TEST_AT": "3"})
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(self.report(self.path("r.json"))["measured_calls"], 3)

    # ---- 4. a model stuck inside one call ----

    def test_sigterm_stops_a_stuck_call_after_the_grace_period(self):
        p, out = self.start("spin_at", "--warmup", "0", "--repeats", "100", "--grace", "0.5",
                            env={"RPX_TEST_AT": "3"})
        kid = self.started_model(p)
        time.sleep(0.5)  # calls 0-2 are done in microseconds; call 3 spins forever
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        took = time.monotonic() - t0
        self.assertEqual(p.returncode, 143, err)
        r = self.report(out)
        self.assertEqual(r["status"], "interrupted")
        self.assertEqual(r["measured_calls"], 3)
        self.assertIn("interrupted by SIGTERM", r["error"])
        self.assertIn("within the grace period", r["error"])
        self.assertEqual(r["failure"]["phase"], "loop")
        self.assertEqual(r["failure"]["call_index"], 3)
        self.assertIn("the call in progress was abandoned", err)
        self.assertFalse(alive(kid), "the stuck model's process was killed")
        self.assertLess(took, 30, "generous: 0.5 s of grace and a report")

    def test_ctrl_c_twice_kills_at_once(self):
        # Ctrl-C signals the whole process group: rpxprof and the model's process
        p, out = self.start("spin_at", "--warmup", "0", "--repeats", "100", "--grace", "600",
                            env={"RPX_TEST_AT": "2"}, new_group=True)
        self.started_model(p)
        time.sleep(0.5)
        os.killpg(p.pid, signal.SIGINT)
        time.sleep(0.2)
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=60)  # with --grace 600, only the second signal ends it
        self.assertEqual(p.returncode, 130, err)
        r = self.report(out)
        self.assertEqual((r["status"], r["measured_calls"]), ("interrupted", 2))
        self.assertIn("before a second signal", r["error"])

    def test_sigint_lets_a_call_that_ends_finish(self):
        # 300 ms calls: the call in progress ends well within the default 2 s grace
        p, out = self.start("busywait", "--warmup", "0", "--repeats", "1000",
                            env={"RPX_TEST_BUSY_NS": "300000000"})
        self.started_model(p)
        time.sleep(1.0)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        r = self.report(out)
        self.assertEqual(r["status"], "interrupted")
        self.assertIsNone(r["failure"])  # nothing was abandoned
        self.assertGreaterEqual(r["measured_calls"], 1)
        self.assertGreaterEqual(min(r["latency_samples_ms"]), 300)  # the last call is whole

    # ---- 5. killing rpxprof leaves no orphan ----

    def test_sigkill_of_rpxprof_kills_the_model(self):
        p, _ = self.start("spin_at", "--warmup", "0", "--repeats", "100",
                          env={"RPX_TEST_AT": "1"})
        kid = self.started_model(p)
        time.sleep(0.3)
        p.kill()
        p.communicate(timeout=60)
        self.assertTrue(wait_until(lambda: not alive(kid), 10),
                        "the model's process outlived rpxprof (orphaned)")

    # ---- 6. timeouts below the watch loop's period ----

    def test_call_timeout_of_a_few_ms(self):
        # 5 ms calls, --call-timeout 2 ms: the first call is already too long. A watch
        # loop that polls every 20 ms sees a finished call at every look and never fires.
        out = self.path("r.json")
        p = run(*self.args("busywait", "--warmup", "0", "--repeats", "40", "--call-timeout",
                           "0.002", out=out), env={"RPX_TEST_BUSY_NS": "5000000"})
        self.assertEqual(p.returncode, 4, p.stderr)
        r = self.report(out)
        self.assertEqual(r["status"], "timed_out")
        self.assertEqual(r["measured_calls"], 0)
        self.assertIn("--call-timeout (0.002 s) in timed call 0", r["error"])
        # a limit far above the call time never fires
        p = run(*self.args("busywait", "--warmup", "2", "--repeats", "40", "--call-timeout", "5"),
                env={"RPX_TEST_BUSY_NS": "1000000"})
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_setup_timeout(self):
        out = self.path("r.json")
        p = run(*self.args("slow_setup", "--setup-timeout", "0.3", out=out),
                env={"RPX_TEST_SETUP_MS": "20000"})
        self.assertEqual(p.returncode, 4, p.stderr)
        r = self.report(out)
        self.assertEqual((r["status"], r["failure"]["phase"]), ("timed_out", "setup"))
        self.assertIn("--setup-timeout (0.3 s) in setup", r["error"])
        # a setup within its limit runs normally
        p = run(*self.args("slow_setup", "--setup-timeout", "60", "--repeats", "5"),
                env={"RPX_TEST_SETUP_MS": "10"})
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run(*self.args("slow_setup", "--setup-timeout", "1", "--no-isolate"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("need isolation", p.stderr)

    # ---- 10. the model's stdout and a report on stdout ----

    def test_model_stdout_goes_to_stderr_when_the_report_is_on_stdout(self):
        for extra in ([], ["--no-isolate"]):
            for target in ("-", "/dev/stdout"):
                p = run("run", "--model", f"{MODELS}:chatty", "--inputs", self.inputs,
                        "--warmup", "1", "--repeats", "3", "--processes", "1", "--quiet",
                        "--output", target, *extra)
                self.assertEqual(p.returncode, 0, p.stderr)
                r = json.loads(p.stdout)  # stdout is the report and nothing else
                self.assertEqual(r["measured_calls"], 3)
                self.assertEqual(p.stderr.count("chatty: printed by the model"), 4, extra)
                self.assertEqual(p.stderr.count("chatty: written to fd 1"), 4, extra)
        # a report in a file leaves the model's stdout where it was
        p = run(*self.args("chatty", "--warmup", "0", "--repeats", "2"))
        self.assertIn("chatty: printed by the model", p.stdout)

    # ---- 11. leaks in short runs ----

    def test_a_short_leaking_run_is_flagged(self):
        # 1 MiB kept per call, 200 calls: 200 MiB in a fraction of a second
        out, log = self.path("r.json"), self.path("rss.log")
        p = run("run", "--model", f"{MODELS}:leak_mib", "--inputs", self.inputs, "--warmup", "0",
                "--repeats", "200", "--output", out, env={"RPX_TEST_RSS_LOG": log})
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.report(out)
        trend = r["memory"]["cpu_rss_trend"]
        self.assertTrue(trend["leak_suspected"], trend)
        self.assertGreaterEqual(trend["readings"], 16)
        # what the process really grew per call, read by the model itself after each
        # leak: 1 MiB and the allocator's header page, and under ASan its shadow
        # memory (1/8) and redzones too; the trend is the first process's
        with open(log) as f:
            lines = [tuple(map(int, line.split())) for line in f]
        self.assertEqual(len(lines), 200)
        rss = [kib for pid, kib in lines if pid == lines[0][0]]
        self.assertGreaterEqual(len(rss), 16)
        real = (rss[-1] - rss[0]) / (len(rss) - 1)
        # (the kernel's resident-set counters lag by up to 64 pages a thread)
        self.assertGreater(real, 0.9 * 1024)
        self.assertLess(real, 1024 * (1.3 if SANITIZED else 1.1))
        self.assertAlmostEqual(trend["growth_kib_per_call"], real, delta=0.05 * real)
        self.assertLess(trend["detectable_kib_per_call"], 1024)
        self.assertTrue([n for n in r["notes"] if n.startswith("Resident memory grew")])
        self.assertIn("warning: Resident memory grew", p.stderr)

    def test_no_leak_no_note(self):
        # memory held from setup on, and memory taken and given back in every call
        for model, env in (("hold", {"RPX_TEST_HOLD_MB": "64"}),
                           ("alloc_touch", {"RPX_TEST_ALLOC_MB": "32"})):
            out = self.path("r.json")
            p = run(*self.args(model, "--warmup", "2", "--repeats", "200", out=out), env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            r = self.report(out)
            if not SANITIZED:  # ASan's quarantine keeps freed blocks for a while
                self.assertIs(r["memory"]["cpu_rss_trend"]["leak_suspected"], False, model)
            self.assertFalse([n for n in r["notes"] if n.startswith("Resident memory grew")])

    # ---- 8. the demo's hint writes shapes with a multiplication sign ----

    def test_cost_input_shape_takes_the_multiplication_sign(self):
        m = save_matmul_onnx(self.path("m.onnx"))
        a = run("cost", m, "--input", "x=8\u00d764", "--json", check=0)
        b = run("cost", m, "--input", "x=8x64", "--json", check=0)
        self.assertEqual(json.loads(a.stdout)["macs"], 8 * 64 * 32)
        self.assertEqual(json.loads(a.stdout), json.loads(b.stdout))

    # ---- 2/3. roofline --svg: checked first, only its own figures replaced ----

    def test_roofline_svg_output(self):
        notes = self.path("notes.svg")
        with open(notes, "w") as f:
            f.write("hello\n")
        args = ["roofline", "--gpu", "h100-sxm", "--flops", "1e12", "--bytes", "1e9", "--svg"]
        p = run(*args, notes)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("exists and is not a file rpxprof wrote", p.stderr)
        with open(notes) as f:
            self.assertEqual(f.read(), "hello\n")
        fig = self.path("fig.svg")
        for _ in range(2):  # its own figure is replaced
            p = run(*args, fig)
            self.assertEqual(p.returncode, 0, p.stderr)
        p = run(*args, notes, "--force")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(notes) as f:
            self.assertIn("<svg", f.read())
        self.assertEqual(sorted(os.listdir(self.tmp)), sorted(["fig.svg", "in.npz", "notes.svg"]))

    # ---- 8/9. silent validation and exit codes of `run` ----

    def test_bad_values_are_refused(self):
        for args, text in [
            (["--budget-hz", "5,abc,-3"], "'abc' is not a rate above 0"),
            (["--budget-hz", "0"], "'0' is not a rate above 0"),
            (["--budget-hz", "5,,10"], "an empty or overlong rate"),
            (["--grace", "-1"], "--grace '-1'"),
            (["--setup-timeout", "0"], "--setup-timeout '0'"),
            (["--gpu", "no-such-gpu"], "no GPU with key 'no-such-gpu'"),
        ]:
            p = run(*self.args("counted", *args))
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(text, p.stderr)
        for model, text in [("", "--model is empty"), ("./lib.so", "missing ':SYMBOL'"),
                            ("./lib.so:1x", "not a valid function name"),
                            ("ftp://user:pw@host/x", "only http:// and https://")]:
            p = run("run", "--model", model, "--inputs", self.inputs, "--output",
                    self.path("m.json"))
            self.assertEqual(p.returncode, 2, (model, p.stderr))
            self.assertIn(text, p.stderr)
            self.assertNotIn("pw@", p.stderr)
        # the rates given are the rates reported
        out = self.path("hz.json")
        p = run(*self.args("counted", "--repeats", "5", "--flops", "1e6", "--budget-hz", "7,24",
                           out=out))
        self.assertEqual(p.returncode, 0, p.stderr)
        rates = json.dumps(self.report(out)["realtime_budget"])
        self.assertIn("24", rates)


if __name__ == "__main__":
    main()
