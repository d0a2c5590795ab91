"""The second hostile round (issue 37), items 1-3, 5, 12, 13 and 16: two outputs of one
command that name one file, outputs that would replace what the command reads, credentials
in --server-metrics, output names that cannot be told apart, exit codes and the words of
the messages. Each refusal is checked to come before any work, the files untouched."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from common import BIN, BUILD, SANITIZED, SOURCE, TempDirTest, main, run

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


if __name__ == "__main__":
    main()
