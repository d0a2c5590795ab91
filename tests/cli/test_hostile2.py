"""The second hostile round (issue 37), items 1-3, 5, 12, 13 and 16: two outputs of one
command that name one file, outputs that would replace what the command reads, credentials
in --server-metrics, output names that cannot be told apart, exit codes and the words of
the messages. Each refusal is checked to come before any work, the files untouched.

Items 6-11 and 15 (class HostileTest): signals between worker
processes and during audits, reads past a buffer, files that never end, bounds
checked up front. Models: tests/models/hostile_models.c. No test here judges a
duration: each waits for a file the model writes, never for a time."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from common import BIN, BUILD, SANITIZED, SOURCE, TempDirTest, main, run, validate_profile

OUT_MODELS = os.path.join(BUILD, "test-models", "librpxtest_outputs.so")
PYMODELS = os.path.join(SOURCE, "tests", "models", "python_outputs")
PY = {"PYTHONPATH": PYMODELS}


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Base(TempDirTest):
    def setUp(self):
        super().setUp()
        run("inputs", "make", self.path("in.npz"), "rgb=48x64x3:uint8=128", check=0)

    def run_(self, *args, code=None, env=None):
        p = run(*args, cwd=self.tmp, env=env)
        if code is not None:
            self.assertEqual(p.returncode, code, p.stderr)
        return p

    def manifest(self):
        with open(self.path("m.json"), "w") as f:
            json.dump({"schema": "rpxprof.manifest/1", "defaults": {"warmup": 1, "repeats": 5},
                       "tasks": {"image_depth": {"inputs": "in.npz", "unit": "frame"}},
                       "models": [{"name": "demo-noop", "model": "rpxprof-demo:demo_noop",
                                   "tasks": ["image_depth"]}]}, f)


class OutputsThatClash(Base):
    """Item 1: two outputs of one command naming one file: exit 2, nothing written."""
    RUN = ["run", "--model", "rpxprof-demo:demo_noop", "--inputs", "in.npz", "--repeats", "5", "-q"]

    def test_report_and_page_on_one_new_file(self):
        p = self.run_(*self.RUN, "-o", "y.json", "--html", "y.json", code=2)
        self.assertIn("--html y.json: names the same file as --output y.json", p.stderr)
        self.assertFalse(os.path.exists(self.path("y.json")))

    def test_page_and_trace_by_another_spelling(self):
        os.makedirs(self.path("d"))
        p = self.run_(*self.RUN, "-o", "r.json", "--html", "t.html", "--trace", "d/../t.html", code=2)
        self.assertIn("--trace d/../t.html: names the same file as --html t.html", p.stderr)
        p = self.run_(*self.RUN, "-o", "new/../r.json", "--trace", os.path.join(self.tmp, "r.json"),
                      code=2)
        self.assertIn("names the same file as --output new/../r.json", p.stderr)
        for f in ("r.json", "t.html"):
            self.assertFalse(os.path.exists(self.path(f)), f)

    def test_a_link_to_the_report(self):
        self.run_(*self.RUN, "-o", "r.json", code=0)
        os.symlink("r.json", self.path("link.html"))
        before = digest(self.path("r.json"))
        p = self.run_(*self.RUN, "-o", "r.json", "--html", "link.html", "--force", code=2)
        self.assertIn("names the same file as --output r.json", p.stderr)
        self.assertEqual(digest(self.path("r.json")), before)
        # a dangling link to the report that the run is about to write
        os.symlink("new.json", self.path("dangling.html"))
        p = self.run_(*self.RUN, "-o", "new.json", "--html", "dangling.html", code=2)
        self.assertIn("names the same file as --output new.json", p.stderr)
        self.assertFalse(os.path.exists(self.path("new.json")))

    def test_batch_page_on_a_jobs_report(self):
        self.manifest()
        p = self.run_("batch", "m.json", "--out-dir", "bo", "--html", "bo/image_depth/demo-noop.json",
                      "-q", code=2)
        self.assertIn("--html bo/image_depth/demo-noop.json: names the same file as --out-dir "
                      "bo/image_depth/demo-noop.json", p.stderr)
        self.assertFalse(os.path.exists(self.path("bo")))

    def test_aggregate_page_on_its_own_table(self):
        self.manifest()
        self.run_("batch", "m.json", "--out-dir", "bo", "-q", code=0)
        p = self.run_("aggregate", "bo", "--out-dir", "agg", "--html", "agg/summary.csv", "-q", code=2)
        self.assertIn("--html agg/summary.csv: names the same file as --out-dir agg/summary.csv",
                      p.stderr)
        self.assertFalse(os.path.exists(self.path("agg")))


class NeverAnInput(Base):
    """Items 2 and 3: --save-outputs, report and aggregate never replace what they read."""

    def test_save_outputs_over_its_own_inputs(self):
        self.run_("run", "--model", f"{OUT_MODELS}:exact", "--inputs", "in.npz", "--repeats", "5",
                  "--save-outputs", "d", "-q", "-o", "a.json", code=0)
        before = digest(self.path("d", "outputs-00000.npz"))
        p = self.run_("run", "--model", f"{OUT_MODELS}:exact", "--inputs", "d/outputs-00000.npz",
                      "--repeats", "5", "--save-outputs", "d", "--force", "-q", "-o", "b.json", code=2)
        self.assertIn("--save-outputs d: would replace d/outputs-00000.npz, a file this run reads",
                      p.stderr)
        self.assertEqual(digest(self.path("d", "outputs-00000.npz")), before)
        self.assertFalse(os.path.exists(self.path("b.json")))

    def test_report_and_aggregate_over_the_batch_reports(self):
        self.manifest()
        self.run_("batch", "m.json", "--out-dir", "bo", "-q", code=0)
        job = self.path("bo", "image_depth", "demo-noop.json")
        before = digest(job)
        p = self.run_("report", "bo", "-o", "bo/image_depth/demo-noop.json", "--force", code=2)
        self.assertIn("is a file this command reads from the folder bo", p.stderr)
        p = self.run_("aggregate", "bo", "--out-dir", "agg", "--html", "bo/image_depth/demo-noop.json",
                      "--force", "-q", code=2)
        self.assertIn("is a file this command reads from the folder bo", p.stderr)
        self.assertEqual(digest(job), before)
        # a new file in the folder is no report being read: written
        self.run_("report", "bo", "-o", "bo/page.html", code=0)
        # a folder of inputs is no folder of reports: a report in it may be replaced
        os.makedirs(self.path("ins", "t"))
        os.link(self.path("in.npz"), self.path("ins", "a.npz"))
        for _ in range(2):
            self.run_("run", "--model", "rpxprof-demo:demo_noop", "--inputs", "ins", "--repeats", "3",
                      "-q", "-o", "ins/t/r.json", "--html", "ins/t/r.html", "--force", code=0)


class MetricsHandler(BaseHTTPRequestHandler):
    seen_auth = []

    def do_GET(self):
        MetricsHandler.seen_auth.append(self.headers.get("Authorization"))
        body = (b"vllm:prefix_cache_hits_total 1\nvllm:prefix_cache_queries_total "
                + (b"NaN" if "nan" in self.path else b"10") + b"\n")
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class ServerMetricsCredentials(Base):
    """Item 5: user:password@ in --server-metrics is sent as Basic credentials, never shown."""

    def setUp(self):
        super().setUp()
        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), MetricsHandler)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.addCleanup(self.srv.server_close)
        self.addCleanup(self.srv.shutdown)
        self.port = self.srv.server_address[1]

    def metrics_run(self, url):
        p = self.run_("run", "--model", f"http://127.0.0.1:{self.port}/api", "--method", "GET",
                      "--repeats", "3", "--warmup", "1", "--server-metrics", url, "-o", "r.json")
        with open(self.path("r.json")) as f:
            return p, f.read()

    def test_credentials_redacted_and_the_host_right(self):
        MetricsHandler.seen_auth.clear()
        p, text = self.metrics_run(f"http://user:s3cret@127.0.0.1:{self.port}/metrics")
        self.assertNotIn("s3cret", text)
        self.assertNotIn("s3cret", p.stderr)
        r = json.loads(text)
        self.assertEqual(r["server_metrics"]["url"], f"http://REDACTED@127.0.0.1:{self.port}/metrics")
        # read: the counters did not move (the host was the host, not the user part)
        self.assertEqual(r["server_metrics"]["reason"], "no prefix-cache queries during the run")
        self.assertIn("Basic dXNlcjpzM2NyZXQ=", MetricsHandler.seen_auth)

    def test_nan_counter_named(self):
        p, text = self.metrics_run(f"http://127.0.0.1:{self.port}/nan")
        why = json.loads(text)["server_metrics"]["reason"]
        self.assertIn("vllm:prefix_cache_queries_total is not a finite number (NaN or Inf)", why)


class OutputNames(Base):
    """Item 12: output names that cannot be told apart are refused at the check."""

    def check(self, model, code, env=None, *extra):
        return self.run_("run", "--model", model, "--inputs", "in.npz", "--repeats", "5",
                         "--check-outputs", *extra, "-q", "-o", "r.json", code=code, env=env)

    def test_c_duplicate_and_empty_names(self):
        p = self.check(f"{OUT_MODELS}:dup_names", 1)
        self.assertIn("outputs 0 and 1 are both named 'sum'; give every output a name of its own",
                      p.stderr)
        p = self.check(f"{OUT_MODELS}:no_name", 1)
        self.assertIn("output 0 has no name", p.stderr)

    def test_python_keys_that_read_the_same(self):
        p = self.check("rpx_output_models:same_name", 1, PY)
        self.assertIn("outputs 0 and 1 are both named '0'", p.stderr)

    def test_zero_outputs_are_not_checked(self):
        for model, env in ((f"{OUT_MODELS}:zero_outputs", None), ("rpx_output_models:nothing", PY)):
            self.check(model, 0, env)
            with open(self.path("r.json")) as f:
                self.assertEqual(json.load(f)["outputs"]["verdict"], "not_checked", model)
            os.unlink(self.path("r.json"))

    def test_unwritable_save_folder_refused_before_the_model_loads(self):
        p = self.run_("run", "--model", "./no-such-lib.so:f", "--inputs", "in.npz",
                      "--save-outputs", "/proc/self", "-q", "-o", "r.json", code=1)
        self.assertIn("--save-outputs /proc/self: cannot write in the folder", p.stderr)
        self.assertFalse(os.path.exists(self.path("r.json")))

    def test_relative_save_folder_when_the_model_changes_folder(self):
        os.makedirs(self.path("w"))
        p = run("run", "--model", "rpx_output_models:wanders", "--inputs", "../in.npz", "--repeats", "3",
                "--processes", "1", "--save-outputs", "rel", "-q", "-o", "r.json", cwd=self.path("w"),
                env=PY)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(self.path("w", "rel", "outputs-00000.npz")))


MODELS = os.path.join(BUILD, "test-models", "librpxtest_models.so")


class ExitCodes(Base):
    """Item 13: exit codes and words."""
    RUN = ["run", "--model", "rpxprof-demo:demo_noop", "--inputs", "in.npz", "--repeats", "5", "-q"]

    def test_batch_exits_143_on_sigterm(self):
        with open(self.path("m.json"), "w") as f:
            json.dump({"schema": "rpxprof.manifest/1", "defaults": {"warmup": 0, "repeats": 100000},
                       "tasks": {"t": {"inputs": "in.npz", "unit": "frame"}},
                       "models": [{"name": f"m{i}", "model": f"{MODELS}:busywait", "tasks": ["t"]}
                                  for i in range(3)]}, f)
        proc = subprocess.Popen([BIN, "batch", "m.json", "--out-dir", "bo", "-q"], cwd=self.tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, RPX_TEST_BUSY_NS="1000000"))
        deadline = time.time() + 60
        while not os.path.exists(self.path("bo", "t")) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 143, err)
        self.assertIn("interrupted", err)

    def test_report_written_but_not_its_trace_or_page(self):
        p = self.run_(*self.RUN, "-o", "a.json", "--trace", "/dev/full", code=8)
        self.assertIn("No space left on device", p.stderr)
        self.assertIn("the report a.json was written, but not every --html or --trace file", p.stderr)
        self.assertTrue(os.path.exists(self.path("a.json")))
        self.run_(*self.RUN, "-o", "b.json", "--html", "/dev/full", code=8)
        self.assertTrue(os.path.exists(self.path("b.json")))

    def test_http_usage_errors_exit_2(self):
        p = self.run_("run", "--model", "http://127.0.0.1:9/x", "--inputs", "in.npz", "--method", "get",
                      "-o", "r.json", code=2)
        self.assertIn("--method get: expected an uppercase HTTP method", p.stderr)
        with open(self.path("t.json"), "w") as f:
            f.write('{"prompt": ""}')
        p = self.run_("run", "--model", "http://127.0.0.1:9/x", "--body-template", "t.json",
                      "-o", "r.json", code=2)
        self.assertIn("--body-template needs --prompts FILE.jsonl", p.stderr)
        self.assertFalse(os.path.exists(self.path("r.json")))

    def test_trace_words_name_its_own_option(self):
        self.run_("run", "--model", "rpxprof-demo:demo_noop", "--inputs", "in.npz", "--repeats", "200",
                  "--processes", "2", "--timeline", "-q", "-o", "r.json", code=0)
        self.run_("trace", "r.json", "-o", "t.json", "--max-events", "16", code=0)
        with open(self.path("t.json")) as f:
            t = json.load(f)
        other = t["otherData"]
        self.assertGreater(other["events_left_out"], 0)
        self.assertNotIn("every", other["calls"])
        self.assertIn("left out by --max-events 16", other["calls"])
        notes = [e["name"] for e in t["traceEvents"] if e.get("cat") == "note"]
        self.assertTrue(notes and notes[0].startswith("trace cut at --max-events 16"), notes)
        self.run_("run", "--model", "rpxprof-demo:demo_noop", "--inputs", "in.npz", "--repeats", "40",
                  "--processes", "12", "--timeline", "-q", "-o", "r12.json", code=0)
        p = self.run_("trace", "r12.json", "-o", "t12.json", "--max-events", "16")
        self.assertIn("--max-events 16: a trace of 12 processes", p.stderr)
        self.assertNotIn("--trace-max-events", p.stderr)

    def test_exit_code_table_matches_the_code(self):
        """docs/errors.md's table of exit codes and run --help list the codes of
        include/rpxprof/runner.h's RPX_EXIT_*, no more, no fewer."""
        import re
        with open(os.path.join(SOURCE, "include", "rpxprof", "runner.h")) as f:
            text = f.read()  # the codes of no status, and those of the status map's rows
            codes = {int(v) for v in re.findall(r"RPX_EXIT_[A-Z_]+ = (\d+)", text)}
            codes |= {int(v) for v in re.findall(r'X\(\w+,\s*"\w+",\s*(\d+)\)', text)}
        with open(os.path.join(SOURCE, "docs", "errors.md")) as f:
            text = f.read()
        table = text[text.index("| code | meaning |"):text.index("## Each bad input")]
        documented = {int(v) for v in re.findall(r"^\| (\d+) \|", table, re.M)}
        self.assertEqual(documented, codes)
        help_text = run("run", "--help").stdout
        status = help_text[help_text.index("Exit status:"):]
        for c in codes:
            self.assertRegex(status, rf"\b{c}\b", f"run --help does not list exit {c}")


class Messages(Base):
    """Item 16: the messages that did not say what was wrong."""

    def test_upper_bounds_named(self):
        for args, want in ((["--model", "rpxprof-demo:demo_noop", "--inputs", "in.npz", "--rate", "1e12"],
                            "--rate '1e12': above the largest value it takes, 1000000000"),
                           (["--model", "http://127.0.0.1:9/", "--inputs", "in.npz", "--rate", "10",
                             "--duration", "1e15"],
                            "--duration '1e15': above the largest value it takes, 1000000000"),
                           (["--model", "http://127.0.0.1:9/", "--inputs", "in.npz", "--rate", "10",
                             "--duration", "1", "--drain", "1e300"],
                            "--drain '1e300': above the largest value it takes, 1000000")):
            p = self.run_("run", *args, "-o", "r.json", code=2)
            self.assertIn(want, p.stderr)

    def test_metrics_timeout_said_as_one(self):
        import socket
        quiet = socket.socket()
        quiet.bind(("127.0.0.1", 0))
        quiet.listen(8)           # accepts (the kernel does), never answers
        self.addCleanup(quiet.close)
        srv = ThreadingHTTPServer(("127.0.0.1", 0), MetricsHandler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        self.run_("run", "--model", f"http://127.0.0.1:{srv.server_address[1]}/api", "--method", "GET",
                  "--repeats", "2", "--warmup", "0", "--server-metrics",
                  f"http://127.0.0.1:{quiet.getsockname()[1]}/metrics", "-o", "r.json", code=0)
        with open(self.path("r.json")) as f:
            why = json.load(f)["server_metrics"]["reason"]
        self.assertIn("no answer within 10 s (timed out)", why)
        self.assertNotIn("Resource temporarily unavailable", why)

    def test_prompts_folder(self):
        with open(self.path("t.json"), "w") as f:
            f.write('{"prompt": ""}')
        p = self.run_("run", "--model", "http://127.0.0.1:9/", "--body-template", "t.json", "--prompts",
                      ".", "--repeats", "2", "-o", "r.json")
        self.assertIn("--prompts .: is a folder; give a JSON Lines file", p.stderr)

    def test_python_output_that_is_no_array(self):
        p = self.run_("run", "--model", "rpx_output_models:opaque", "--inputs", "in.npz", "--repeats", "3",
                      "--check-outputs", "-q", "-o", "r.json", env=PY, code=1)
        self.assertIn("an object of type object cannot be compared; return numbers, numeric arrays "
                      "or tensors", p.stderr)
        self.assertNotIn("numpy is needed", p.stderr)

    def test_corrupt_saved_reference(self):
        self.run_("run", "--model", f"{OUT_MODELS}:exact", "--inputs", "in.npz", "--repeats", "3",
                  "--save-outputs", "ref", "-q", "-o", "a.json", code=0)
        with open(self.path("ref", "outputs-00000.npz"), "r+b") as f:
            f.truncate(100)
        p = self.run_("run", "--model", f"{OUT_MODELS}:exact", "--inputs", "in.npz", "--repeats", "3",
                      "--check-outputs", "ref", "-q", "-o", "b.json", code=1)
        self.assertIn("--reference-outputs: ref/outputs-00000.npz: ", p.stderr)
        self.assertIn("the saved reference is damaged: write it again with a run's --save-outputs ref",
                      p.stderr)
        self.assertNotIn("save the inputs", p.stderr)

    def pytest_run(self, *args):
        with open(self.path("test_suite.py"), "w") as f:
            f.write("def test_b(rpxprof_benchmark):\n"
                    "    rpxprof_benchmark(lambda: None, repeats=3, warmup=0, processes=1)\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
        env.pop("PYTEST_ADDOPTS", None)
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                               "rpxprof.pytest_plugin", *args, "test_suite.py"], cwd=self.tmp, env=env,
                              capture_output=True, text=True, timeout=300)

    def test_pytest_save_to_a_file_and_a_baseline_folder(self):
        if SANITIZED:  # the sanitized extension needs its runtimes preloaded into python3
            self.skipTest("the pytest plugin runs in the normal build only (tests/python covers ASan)")
        with open(self.path("kept.txt"), "w") as f:
            f.write("mine")
        p = self.pytest_run("--rpxprof-save=kept.txt")
        out = p.stdout + p.stderr
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--rpxprof-save kept.txt: is a file, not a folder", out)
        self.assertNotIn("FileExistsError", out)
        os.makedirs(self.path("base", "test_suite.py__test_b.json"))
        p = self.pytest_run("--rpxprof-compare=base")
        out = p.stdout + p.stderr
        self.assertIn("it is a folder, not a report file", out)
        self.assertNotIn("not valid JSON", out)


def wait_for_file(path, timeout=120):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.02)
    return False


class HostileTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))
        self.mark = self.path("teardown.mark")

    def popen(self, args, env=None):
        e = dict(os.environ)
        e.update(env or {})
        return subprocess.Popen([BIN, *map(str, args)], env=e, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)

    def signal_in_first_teardown(self, args, sig, env=None):
        """Start rpxprof ARGS on slow_teardown; send `sig` while the first worker
        process sleeps in its teardown (it writes self.mark first). (rc, stdout, stderr)"""
        e = {"RPX_TEST_MARK_FILE": self.mark, "RPX_TEST_TEARDOWN_MS": "1500"}
        e.update(env or {})
        p = self.popen(args, env=e)
        try:
            self.assertTrue(wait_for_file(self.mark), "the first process never reached teardown")
            p.send_signal(sig)
            out, err = p.communicate(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        return p.returncode, out, err

    def run_args(self, model, out, *extra):
        return ["run", "--model", f"{MODELS}:{model}", "--inputs", self.inputs, "--quiet",
                "--warmup", "1", "--output", out, *map(str, extra)]

    # ---- item 6: a signal between two worker processes ----

    def test_sigterm_between_processes_marks_the_run_interrupted(self):
        for sig, code, name in [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "SIGINT")]:
            out = self.path(f"between-{name}.json")
            if os.path.exists(self.mark):
                os.unlink(self.mark)
            rc, _, err = self.signal_in_first_teardown(
                self.run_args("slow_teardown", out, "--repeats", 100, "--processes", 2), sig)
            self.assertEqual(rc, code, err)
            with open(out) as f:
                r = json.load(f)
            validate_profile(r)
            self.assertEqual(r["status"], "interrupted")
            self.assertEqual(r["measured_calls"], 50)
            self.assertEqual(len(r["latency_samples_ms"]), 50)
            self.assertIn(f"interrupted by {name}", r["error"])

    def test_batch_stops_at_a_signal_between_processes(self):
        m = {"schema": "rpxprof.manifest/1",
             "defaults": {"warmup": 1, "repeats": 40, "processes": 2, "precision": "fp32"},
             "tasks": {"t1": {"inputs": self.inputs, "unit": "frame"},
                       "t2": {"inputs": self.inputs, "unit": "frame"}},
             "models": [{"name": "k", "model": f"{MODELS}:slow_teardown", "tasks": ["t1", "t2"]}]}
        path = self.path("m.json")
        with open(path, "w") as f:
            json.dump(m, f)
        for sig, code in [(signal.SIGTERM, 143), (signal.SIGINT, 130)]:
            outdir = self.path(f"bo-{int(sig)}")
            if os.path.exists(self.mark):
                os.unlink(self.mark)
            rc, _, err = self.signal_in_first_teardown(["batch", path, "--out-dir", outdir, "-q"],
                                                       sig)
            self.assertEqual(rc, code, err)
            with open(os.path.join(outdir, "t1", "k.json")) as f:
                self.assertEqual(json.load(f)["status"], "interrupted")
            self.assertFalse(os.path.exists(os.path.join(outdir, "t2", "k.json")),
                             "the batch stopped: the second job did not run")

    def test_compare_run_writes_the_interrupted_side_as_interrupted(self):
        d = self.path("cmp")
        rc, _, err = self.signal_in_first_teardown(
            ["compare", "--run", "--model", f"{MODELS}:slow_teardown", "--model",
             f"{MODELS}:slow_teardown", "--inputs", self.inputs, "--warmup", "1", "--repeats",
             40, "--processes", 2, "--out-dir", d], signal.SIGTERM)
        self.assertEqual(rc, 143, err)
        written = [n for n in ("base.json", "new.json") if os.path.exists(os.path.join(d, n))]
        self.assertTrue(written, err)
        for n in written:
            with open(os.path.join(d, n)) as f:
                self.assertEqual(json.load(f)["status"], "interrupted", n)

    # ---- items 7 and 11: audits ----

    def samples_dir(self):
        d = self.path("samples")
        if not os.path.isdir(d):
            run("inputs", "make", d, "--samples", 4, "x=16:float32=random", check=0)
        return d

    def test_a_signal_during_the_audit_ends_it(self):
        out = self.path("audit.json")
        args = ["run", "--model", f"{MODELS}:slow_teardown", "--inputs", self.samples_dir(),
                "--quiet", "--warmup", "1", "--repeats", 20, "--processes", 2, "--audit", "seed",
                "--output", out]
        e = {"RPX_TEST_MARK_FILE": self.mark, "RPX_TEST_TEARDOWN_MS": "700"}
        p = self.popen(args, env=e)
        try:
            # the run's two processes tear down, then the audit's first
            end = time.monotonic() + 300
            while time.monotonic() < end and (not os.path.exists(self.mark)
                                              or os.path.getsize(self.mark) < 3):
                time.sleep(0.02)
            self.assertGreaterEqual(os.path.getsize(self.mark), 3, "the audit never started")
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 143, err)
        with open(out) as f:
            r = json.load(f)
        validate_profile(r)
        self.assertEqual(r["status"], "interrupted")
        self.assertEqual(r["measured_calls"], 20, "the run itself had every sample")
        self.assertIn("during the audit", r["error"])
        self.assertEqual(r["audit"]["seed"]["verdict"], "not_run")
        self.assertIn("interrupted", r["audit"]["seed"]["reason"])
        self.assertEqual([n for n in os.listdir(self.tmp) if ".tmp." in n], [])

    def test_a_crash_in_an_audit_arm_is_named(self):
        out = self.path("crash-audit.json")
        p = run("run", "--model", f"{MODELS}:nth_crash", "--inputs", self.samples_dir(),
                "--quiet", "--warmup", "1", "--repeats", 20, "--processes", 2, "--audit", "seed",
                "--output", out,
                env={"RPX_TEST_COUNT_FILE": self.path("count"), "RPX_TEST_CRASH_AFTER": "2"})
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            r = json.load(f)
        seed = r["audit"]["seed"]
        self.assertEqual(seed["verdict"], "not_run")
        self.assertNotIn("interrupted before any process", seed["reason"])
        self.assertIn("crashed", seed["reason"])
        # SIGSEGV (11); under ASan its own handler turns the fault into SIGABRT (6)
        self.assertRegex(seed["reason"], "with signal (11|6)")

    # ---- item 8: reads past a buffer (the ASan build catches each) ----

    def test_a_body_without_nul_is_quoted_by_its_length(self):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = b"<" if self.path == "/lt" else b"{}"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        for route, needle in [("/lt", "it starts '<')"), ("/obj", "it starts '{}')")]:
            p = run("run", "--model", f"http://127.0.0.1:{srv.server_port}{route}", "--inputs",
                    self.inputs, "--quiet", "--warmup", "0", "--repeats", 3, "--check-outputs",
                    "--output-field", "x", "--output", self.path("http.json"))
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(needle, p.stderr)
            self.assertNotIn("AddressSanitizer", p.stderr)

    def test_an_output_whose_shape_disagrees_with_its_bytes_is_refused(self):
        saved = self.path("saved")
        for iso in ([], ["--no-isolate"]):
            p = run("run", "--model", f"{MODELS}:bad_shape", "--inputs", self.inputs, "--quiet",
                    "--warmup", "0", "--repeats", 3, "--check-outputs", "--save-outputs", saved,
                    "--force", *iso, "--output", self.path("shape.json"))
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("is malformed", p.stderr)
            self.assertIn("a shape of another count", p.stderr)
            self.assertNotIn("crashed", p.stderr)
            self.assertNotIn("AddressSanitizer", p.stderr)
            left = os.listdir(saved) if os.path.isdir(saved) else []
            self.assertEqual([n for n in left if ".tmp" in n], [], left)

    def test_a_model_message_without_nul_is_cut(self):
        for at, iso in [("0", []), ("0", ["--no-isolate"]), ("2", []), ("2", ["--no-isolate"])]:
            p = run("run", "--model", f"{MODELS}:long_error", "--inputs", self.inputs, "--quiet",
                    "--warmup", "1", "--repeats", 5, "--processes", 1, *iso,
                    "--output", self.path("long.json"),
                    env={"RPX_TEST_AT": at})
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertNotIn("AddressSanitizer", p.stderr)
            self.assertIn("failed", p.stderr)
            self.assertIn("EEEEEEEE", p.stderr, "the message is shown, cut at its buffer")

    # ---- items 9 and 10: files that never end, bounds up front ----

    def test_files_read_are_regular_and_bounded(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        os.mkfifo(self.path("f.so"))
        tmpl = self.path("t.json")
        with open(tmpl, "w") as f:
            f.write('{"prompt": ""}')
        huge = self.path("huge.jsonl")
        with open(huge, "wb") as f:
            f.truncate(300 << 20)  # sparse: no disk, but more than rpxprof reads whole
        url = "http://127.0.0.1:9/x"
        cases = [
            (["--model", "./f.so:predict", "--inputs", self.inputs], "--model ./f.so:predict: is a FIFO"),
            (["--model", url, "--body-template", tmpl, "--prompts", fifo], f"--prompts {fifo}: is a FIFO"),
            (["--model", url, "--body-template", fifo, "--prompts", tmpl], f"--body-template {fifo}: is a FIFO"),
            (["--model", url, "--body-template", tmpl, "--prompts", "/dev/zero"],
             "--prompts /dev/zero: is a character device"),
            (["--model", url, "--body-template", tmpl, "--prompts", huge], "more than rpxprof reads whole"),
            (["--model", url, "--body", huge], "more than rpxprof reads whole"),
        ]
        for args, needle in cases:
            out = self.path("never.json")
            p = run("run", *args, "--repeats", 3, "--quiet", "--output", out, cwd=self.tmp,
                    timeout=120)
            self.assertIn(p.returncode, (1, 2), (args, p.stderr))
            self.assertIn(needle, p.stderr, args)
            self.assertFalse(os.path.exists(out))

    def test_trace_max_events_is_checked_before_the_run(self):
        out, trace = self.path("t.json"), self.path("t.trace.json")
        p = run("run", "--model", f"{MODELS}:counted", "--inputs", self.inputs, "--quiet",
                "--processes", 100, "--repeats", 200, "--trace-max-events", 100, "--trace", trace,
                "--output", out, env={"RPX_TEST_COUNT_FILE": self.path("count")})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--trace-max-events 100: a trace of 100 processes needs at least 201", p.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(trace))
        self.assertFalse(os.path.exists(self.path("count")), "no process ran")

    # ---- item 15: outputs ----

    def test_a_second_writer_of_the_same_output_is_refused(self):
        out = self.path("same.json")
        first = self.popen(self.run_args("slow_teardown", out, "--repeats", 10, "--processes", 1),
                           env={"RPX_TEST_MARK_FILE": self.mark, "RPX_TEST_TEARDOWN_MS": "1500"})
        try:
            self.assertTrue(wait_for_file(self.mark), "the first run never reached teardown")
            p = run(*self.run_args("counted", out, "--repeats", 5),
                    env={"RPX_TEST_COUNT_FILE": self.path("count")})
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("another rpxprof is writing this file now", p.stderr)
            self.assertFalse(os.path.exists(self.path("count")), "refused before any process")
            _, err = first.communicate(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
                first.communicate()
        self.assertEqual(first.returncode, 0, err)
        with open(out) as f:
            self.assertEqual(json.load(f)["measured_calls"], 10, "the first run's report")

    def test_stale_temporary_files_of_ours_are_removed_never_anothers(self):
        out = self.path("r.json")
        ours = out + ".tmp.rpxprof-Ab12Cd"    # left by a writer that was killed
        theirs = [out + ".tmp.Xy34Zw", out + ".tmp.rpxprof-keep", self.path("x.json.tmp.rpxprof-Ab12Cd")]
        for f in [ours, *theirs]:
            with open(f, "w") as h:
                h.write("{")
        p = run(*self.run_args("counted", out, "--repeats", 5),
                env={"RPX_TEST_COUNT_FILE": self.path("count")})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(ours))
        for f in theirs:
            self.assertTrue(os.path.exists(f), f)

    # ---- item 15: options that were silently ignored, goodput without a TTFT ----

    def plain_server(self, body=b"ok", ctype="text/plain"):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        return f"http://127.0.0.1:{srv.server_port}/x"

    def test_prompts_without_a_body_template_are_refused(self):
        prompts = self.path("p.jsonl")
        with open(prompts, "w") as f:
            f.write('"hi"\n')
        body = self.path("b.json")
        with open(body, "w") as f:
            f.write("{}")
        out = self.path("p.json")
        p = run("run", "--model", "http://127.0.0.1:9/x", "--body", body, "--prompts", prompts,
                "--repeats", 3, "--quiet", "--output", out)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("add --body-template", p.stderr)
        self.assertFalse(os.path.exists(out))

    def test_slo_without_a_stream_is_said(self):
        url = self.plain_server()
        out = self.path("slo.json")
        p = run("run", "--model", url, "--inputs", self.inputs, "--slo", "ttft=100ms",
                "--warmup", 1, "--repeats", 5, "--output", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--slo: no response was a stream, so goodput was not measured", p.stderr)
        with open(out) as f:
            r = json.load(f)
        self.assertIsNone(r["http"]["streaming"])
        self.assertTrue(any("--slo: no response was a stream" in n for n in r["notes"]))

    def test_goodput_without_a_time_to_first_token_is_null(self):
        url = self.plain_server()
        out = self.path("g.json")
        p = run("run", "--model", url, "--inputs", self.inputs, "--stream", "sse", "--slo",
                "ttft=100ms", "--warmup", 1, "--repeats", 5, "--quiet", "--output", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            r = json.load(f)
        validate_profile(r)
        g = r["http"]["streaming"]["goodput"]
        self.assertIsNone(g["share"])
        self.assertIn("no time to first token was measured", g["share_reason"])

    # ---- item 15: the page and the figures ----

    def small_report(self):
        out = self.path("small.json")
        if not os.path.exists(out):
            run(*self.run_args("counted", out, "--repeats", 40, "--processes", 2), check=0,
                env={"RPX_TEST_COUNT_FILE": self.path("count")})
        with open(out) as f:
            return json.load(f)

    def test_a_long_title_is_cut_on_a_character_boundary(self):
        self.small_report()
        for tail in ["\u00e9", "\u20ac", "\U0001f600"]:  # 2, 3 and 4 bytes
            page = self.path("t.html")
            title = "a" * 254 + tail
            run("report", self.path("small.json"), "-o", page, "--force", "--title", title, check=0)
            with open(page, "rb") as f:
                f.read().decode("utf-8")  # strict: a cut character raises

    def test_crafted_numbers_give_no_nan_in_figures(self):
        r = self.small_report()
        tiny = 5e-324  # a denormal: every axis range collapses
        r["latency_samples_ms"] = [tiny] * len(r["latency_samples_ms"])
        for k in ("p50_ms", "p95_ms", "p99_ms", "mean_ms", "min_ms", "max_ms"):
            r["latency"][k] = tiny
            for b in r["latency_by_process"]:
                b[k] = tiny
        crafted = self.path("crafted.json")
        with open(crafted, "w") as f:
            json.dump(r, f)
        page, fig = self.path("c.html"), self.path("c.svg")
        run("report", crafted, "-o", page, "--force", check=0)
        run("plot", crafted, "-o", fig, "--force")
        for path in (page, fig):
            with open(path) as f:
                text = f.read()
            self.assertFalse('="-nan"' in text or '="nan"' in text, f"{path}: nan in an attribute")

    # ---- item 15: a signal during a --rate pacing wait ----

    def test_sigterm_in_a_pacing_wait_ends_it_without_an_abandoned_call(self):
        out = self.path("paced.json")
        # 1 call every 50 s: after the first, the worker waits out the period; --grace 40
        p = self.popen(["run", "--model", f"{MODELS}:marked", "--inputs", self.inputs, "--quiet",
                        "--warmup", "0", "--repeats", "3", "--processes", "1", "--rate", "0.02",
                        "--grace", "40", "--output", out], env={"RPX_TEST_MARK_FILE": self.mark})
        try:
            self.assertTrue(wait_for_file(self.mark), "the first call never ran")
            start = time.monotonic()
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=120)
            took = time.monotonic() - start
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 143, err)
        self.assertNotIn("abandoned", err)
        with open(out) as f:
            r = json.load(f)
        self.assertEqual(r["status"], "interrupted")
        self.assertEqual(r["measured_calls"], 1)
        self.assertIsNone(r["failure"], "no call was in progress")
        self.assertLess(took, 35, "generous: well under the 40 s grace the old wait used up")

    # ---- item 15: inputs make --samples on a full disk ----

    def test_inputs_make_samples_removes_its_samples_when_it_fails(self):
        d = self.path("sd")
        os.makedirs(os.path.join(d, "sample-0002.npz"))  # not ours: sample 2 cannot be written
        p = run("inputs", "make", d, "--samples", 4, "x=4:float32=random")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(sorted(os.listdir(d)), ["sample-0002.npz"], "only what was there before")
        self.assertIn("removed the 2 samples this command had written", p.stderr)

    def test_inputs_make_samples_on_a_full_disk(self):
        import shutil
        if not shutil.which("unshare") or subprocess.run(["unshare", "-m", "true"]).returncode:
            self.skipTest("no private mount namespace here for a small tmpfs")
        mnt = self.path("mnt")
        os.makedirs(mnt)
        script = (f'mount -t tmpfs -o size=64k tmpfs "{mnt}" || exit 77; "{os.path.abspath(BIN)}" '
                  f'inputs make "{mnt}/s" --samples 20 x=4096:float32=random; echo "rc=$?"; '
                  f'ls -A "{mnt}"')
        p = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                           timeout=120)
        if p.returncode == 77:
            self.skipTest("cannot mount a tmpfs here")
        self.assertIn("rc=1", p.stdout, p.stderr)
        self.assertIn("No space left on device", p.stderr)
        self.assertEqual(p.stdout.split("rc=1", 1)[1].split(), [], "the full disk is left empty")

    # ---- item 15: control characters never reach the terminal ----

    def test_control_characters_are_escaped_on_the_terminal(self):
        for iso in ([], ["--no-isolate"]):
            p = run("run", "--model", f"{MODELS}:ansi_error", "--inputs", self.inputs,
                    "--repeats", 3, "--processes", 1, *iso, "--output", self.path("a.json"))
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertNotIn("\x1b", p.stderr)
            self.assertNotIn("\r", p.stderr)
            self.assertIn("bad \\x1b[2J\\x1b[31mthing\\x0d", p.stderr)
        odd = self.path("in\x1b[31mred.npz")
        np.savez(odd, x=np.zeros(4, np.float32))
        out = self.path("out\x1b[2J.json")
        p = run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", odd, "--repeats", 5,
                "--output", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("\x1b", p.stdout + p.stderr)
        self.assertIn("out\\x1b[2J.json", p.stdout)
        p = run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", odd + ".gone",
                "--output", out)
        self.assertNotIn("\x1b", p.stderr)
        self.assertIn("in\\x1b[31mred.npz.gone", p.stderr)


if __name__ == "__main__":
    main()
