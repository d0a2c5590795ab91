"""Inputs that vary and the audits (issue 30 sections 1, 2 and 4): `inputs make
--samples N`, `--audit cache` against models that memoise their last input (C
and Python: suspect, with ratio and interval) and an honest one (never suspect,
10 runs of 10), `--audit seed`, and HTTP bodies that vary (--body-template with
--prompts, --nonce) against a server with a prefix cache and Prometheus
/metrics (tests/cli/cache_server.py): a fixed body is flagged by the audit and
by --server-metrics, distinct prompts are not. Timing is only compared within
one run, as ratios far from the threshold (a memo answers in nanoseconds, a
miss spins 200 us; a cache hit sleeps 1 ms, a miss 15 ms)."""
import csv
import json
import os
import signal
import subprocess
import sys

import numpy as np

from common import MODELS, SANITIZED, TempDirTest, main, run, run_report, validate_profile

HERE = os.path.dirname(os.path.abspath(__file__))

MEMO_PY = '''
import time
_last = None

def memo(x):
    """Memoises its last input's answer: instant on a repeat, 400 us on a new one."""
    global _last
    b = x.tobytes()
    if b == _last:
        return 0
    end = time.perf_counter() + 0.0004
    while time.perf_counter() < end:
        pass
    _last = b
    return 1
'''


class AuditTest(TempDirTest):
    def samples(self, n=4, folder="smp"):
        p = run("inputs", "make", self.path(folder), "--samples", n, "x=256:float32=random",
                check=0)
        self.assertIn(f"({n} samples)", p.stdout)
        return self.path(folder)

    def cache(self, r):
        validate_profile(r)
        return r["audit"]["cache"]

    # ---- inputs make --samples ----

    def test_inputs_make_samples_makes_distinct_seeded_files(self):
        d = self.samples(3)
        names = sorted(os.listdir(d))
        self.assertEqual(names, ["sample-0000.npz", "sample-0001.npz", "sample-0002.npz"])
        xs = [np.load(os.path.join(d, n))["x"] for n in names]
        self.assertFalse(np.array_equal(xs[0], xs[1]))
        self.assertFalse(np.array_equal(xs[1], xs[2]))
        # the same command makes the same bytes; another seed others
        again = self.samples(3, "again")
        for n in names:
            np.testing.assert_array_equal(np.load(os.path.join(d, n))["x"],
                                          np.load(os.path.join(again, n))["x"])
        run("inputs", "make", self.path("s7"), "--samples", 2, "--seed", 7, "x=256:float32=random",
            check=0)
        self.assertFalse(np.array_equal(np.load(self.path("s7", "sample-0000.npz"))["x"], xs[0]))

    def test_inputs_make_samples_refuses_identical_samples(self):
        p = run("inputs", "make", self.path("d"), "--samples", 3, "x=4:float32", check=2)
        self.assertIn("no array has a 'random' fill", p.stderr)
        self.assertFalse(os.path.exists(self.path("d")))
        p = run("inputs", "make", self.path("d"), "--samples", 1, "x=4:float32=random", check=2)
        self.assertIn("--samples '1': give a whole number from 2", p.stderr)

    # ---- --audit cache, local ----

    def test_memoising_c_model_is_suspect(self):
        d = self.samples()
        p, r, _ = run_report(self, "--model", f"{MODELS}:memo_last", "--inputs", d,
                             "--repeats", 120, "--processes", 3, "--warmup", 2,
                             "--audit", "cache")
        a = self.cache(r)
        self.assertEqual(a["verdict"], "suspect", a)
        self.assertLess(a["ratio"], 0.5)
        lo, hi = a["ci"]
        self.assertLessEqual(lo, a["ratio"])
        self.assertLess(hi, 0.9)
        self.assertEqual(a["distinct_inputs"], 4)
        self.assertEqual(a["threshold"], 0.1)
        self.assertIn("--audit cache: suspect", p.stderr)
        self.assertIn("cache", p.stderr)
        self.assertIn("repeated/distinct", p.stderr)
        self.assertIn("  audit cache: suspect (repeated/distinct p50 ", p.stderr)  # the summary

    def test_memoising_python_model_is_suspect(self):
        with open(self.path("memo_model.py"), "w") as f:
            f.write(MEMO_PY)
        d = self.samples()
        p, r, _ = run_report(self, "--model", "memo_model:memo", "--inputs", d, "--repeats", 90,
                             "--processes", 3, "--warmup", 2, "--audit", "cache",
                             env={"PYTHONPATH": self.tmp})
        a = self.cache(r)
        self.assertEqual(a["verdict"], "suspect", a)
        self.assertLess(a["ci"][1], 0.9)
        self.assertIn("--audit cache: suspect", p.stderr)

    def test_honest_model_is_never_suspect_in_ten_runs(self):
        d = self.samples()
        verdicts = []
        for _ in range(10):
            _, r, _ = run_report(self, "--model", f"{MODELS}:busywait", "--inputs", d,
                                 "--repeats", 48, "--processes", 2, "--warmup", 1,
                                 "--audit", "cache", "--call-records", "off", "--no-cpu-probe",
                                 env={"RPX_TEST_BUSY_NS": "50000"})
            verdicts.append(r["audit"]["cache"]["verdict"])
        self.assertNotIn("suspect", verdicts)
        self.assertTrue(set(verdicts) <= {"pass", "inconclusive"}, verdicts)

    def test_threshold_option(self):
        d = self.samples()
        _, r, _ = run_report(self, "--model", f"{MODELS}:memo_last", "--inputs", d,
                             "--repeats", 60, "--processes", 2, "--warmup", 1,
                             "--audit", "cache", "--audit-threshold", "30%")
        self.assertEqual(r["audit"]["cache"]["threshold"], 0.3)
        p = run("run", "--model", f"{MODELS}:busywait", "--inputs", d, "--audit", "cachee",
                "-o", self.path("x.json"), check=2)
        self.assertIn("--audit 'cachee': expected cache, seed or cache,seed", p.stderr)
        p = run("run", "--model", f"{MODELS}:busywait", "--inputs", d, "--audit", "cache",
                "--no-isolate", "-o", self.path("x.json"), check=2)
        self.assertIn("drop --no-isolate", p.stderr)

    def test_one_sample_says_the_audit_cannot_run_and_how(self):
        d = self.samples()
        p, r, _ = run_report(self, "--model", f"{MODELS}:memo_last", "--inputs",
                             os.path.join(d, "sample-0000.npz"), "--repeats", 20, "--audit",
                             "cache,seed")
        a = self.cache(r)
        self.assertEqual(a["verdict"], "not_run")
        self.assertIn("inputs make DIR --samples N", a["reason"])
        self.assertIn("--audit cache cannot run", p.stderr)
        self.assertIn("inputs make DIR --samples N", p.stderr)
        self.assertEqual(r["audit"]["seed"]["verdict"], "not_run")

    # ---- --audit seed ----

    def test_seed_audit_on_an_honest_model_is_not_suspect(self):
        d = self.samples()
        _, r, _ = run_report(self, "--model", f"{MODELS}:busywait", "--inputs", d,
                             "--repeats", 60, "--processes", 2, "--warmup", 1,
                             "--audit", "seed", env={"RPX_TEST_BUSY_NS": "50000"})
        validate_profile(r)
        s = r["audit"]["seed"]
        self.assertIn(s["verdict"], ("pass", "inconclusive"))
        self.assertEqual(s["threshold"], 0.05)
        self.assertIn("moved_beyond_interval", s)
        self.assertNotIn("cache", r["audit"])


class BatchAuditTest(TempDirTest):
    def test_batch_runs_the_audit_and_aggregate_refuses_a_suspect_row(self):
        run("inputs", "make", self.path("smp"), "--samples", 3, "x=128:float32=random", check=0)
        manifest = {"schema": "rpxprof.manifest/1",
                    "defaults": {"warmup": 1, "repeats": 60, "processes": 2, "audit": "cache"},
                    "tasks": {"t": {"inputs": "smp"}},
                    "models": [{"name": "memo", "model": f"{os.path.abspath(MODELS)}:memo_last", "tasks": ["t"]},
                               {"name": "honest", "model": f"{os.path.abspath(MODELS)}:busywait", "tasks": ["t"],
                                "audit_threshold": 0.2}]}
        with open(self.path("m.json"), "w") as f:
            json.dump(manifest, f)
        run("batch", self.path("m.json"), "--out-dir", self.path("out"), "--quiet", check=0,
            env={"RPX_TEST_BUSY_NS": "100000"})
        with open(self.path("out", "t", "memo.json")) as f:
            memo = json.load(f)
        with open(self.path("out", "t", "honest.json")) as f:
            honest = json.load(f)
        self.assertEqual(memo["audit"]["cache"]["verdict"], "suspect")
        self.assertEqual(honest["audit"]["cache"]["threshold"], 0.2)
        self.assertNotEqual(honest["audit"]["cache"]["verdict"], "suspect")
        p = run("aggregate", self.path("out"), "--out-dir", self.path("agg"),
                "--allow-incomplete-flops", check=1)
        self.assertIn("FAIL", p.stdout)
        with open(self.path("agg", "validation.json")) as f:
            errors = json.load(f)["errors"]
        self.assertTrue(any("memo.json: --audit cache says suspect" in e and
                            "--allow-audit-failures" in e for e in errors), errors)
        p = run("aggregate", self.path("out"), "--out-dir", self.path("agg"),
                "--allow-incomplete-flops", "--allow-audit-failures", check=0)
        self.assertIn("PASS", p.stdout)
        with open(self.path("agg", "summary.csv")) as f:
            rows = {r["model"]: r for r in csv.DictReader(f)}
        self.assertEqual(rows["memo"]["audit"], "cache suspect")
        self.assertIn(rows["honest"]["audit"], ("cache pass", "cache inconclusive"))
        with open(self.path("agg", "summary.md")) as f:
            md = f.read()
        self.assertIn("| audit |", md)
        self.assertIn("| cache suspect |", md)


class HttpAuditTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.srv = subprocess.Popen([sys.executable, os.path.join(HERE, "cache_server.py")],
                                    stdout=subprocess.PIPE, text=True)
        self.addCleanup(self.stop)
        self.port = int(self.srv.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}/v1/completions"
        self.metrics = f"http://127.0.0.1:{self.port}/metrics"
        with open(self.path("t.json"), "w") as f:
            json.dump({"model": "m", "prompt": "", "max_tokens": 4}, f)
        with open(self.path("fixed.json"), "w") as f:
            json.dump({"model": "m", "prompt": "the same prompt", "max_tokens": 4}, f)
        with open(self.path("prompts.jsonl"), "w") as f:
            for i in range(600):
                f.write(json.dumps(f"distinct prompt number {i}") + "\n")

    def stop(self):
        os.kill(self.srv.pid, signal.SIGTERM)
        self.srv.wait(timeout=10)
        self.srv.stdout.close()

    def test_fixed_body_is_flagged_by_the_metrics(self):
        p, r, _ = run_report(self, "--model", self.url, "--body", self.path("fixed.json"),
                             "--repeats", 20, "--warmup", 1, "--server-metrics", self.metrics)
        validate_profile(r)
        m = r["server_metrics"]
        self.assertEqual(m["hits_counter"], "vllm:prefix_cache_hits_total")
        self.assertGreater(m["hit_rate"], 0.9)
        self.assertIsNone(m["reason"])
        self.assertIn("prefix cache answered", p.stderr)
        self.assertIn("  server prefix-cache hit rate ", p.stderr)
        self.assertNotIn("bodies", r["http"])

    def test_distinct_prompts_are_not_flagged_and_the_fixed_body_is_by_the_audit(self):
        p, r, _ = run_report(self, "--model", self.url, "--body-template", self.path("t.json"),
                             "--prompts", self.path("prompts.jsonl"), "--repeats", 40,
                             "--warmup", 1, "--processes", 3, "--server-metrics", self.metrics,
                             "--audit", "cache")
        validate_profile(r)
        m = r["server_metrics"]
        self.assertEqual(m["hit_rate"], 0.0)
        self.assertNotIn("prefix cache answered", p.stderr)
        b = r["http"]["bodies"]
        self.assertEqual(b["sent"], 43)  # 3 processes: 1 warmup each + 40 timed
        self.assertEqual(b["distinct"], 43)
        self.assertEqual(b["order"], "cycled")
        self.assertEqual(r["http"]["body"]["source"], "--body-template")
        # the audit's repeated arm sends one body every call: the server's cache answers it
        a = r["audit"]["cache"]
        self.assertEqual(a["verdict"], "suspect", a)
        self.assertLess(a["ci"][1], 0.9)
        self.assertEqual(a["distinct_inputs"], 600)
        self.assertIn("--audit cache: suspect", p.stderr)

    def test_unreadable_metrics_say_why(self):
        p, r, _ = run_report(self, "--model", self.url, "--body", self.path("fixed.json"),
                             "--repeats", 3, "--warmup", 1, "--server-metrics",
                             f"http://127.0.0.1:{self.port}/nothing")
        validate_profile(r)
        m = r["server_metrics"]
        self.assertIsNone(m["hit_rate"])
        self.assertIsNone(m["hits"])
        self.assertIn("instead of 200", m["reason"])
        self.assertIn("no prefix-cache hit rate", p.stderr)

    def test_open_loop_sends_distinct_prompts(self):
        p, r, _ = run_report(self, "--model", self.url, "--body-template", self.path("t.json"),
                             "--prompts", self.path("prompts.jsonl"), "--rate", 40,
                             "--duration", 1, "--warmup", 2, "--server-metrics", self.metrics)
        validate_profile(r)
        b = r["http"]["bodies"]
        self.assertEqual(r["http"]["load"]["engine"], "curl")
        self.assertEqual(b["sent"], 2 + r["measured_calls"] + r["failed_calls"])
        self.assertEqual(b["distinct"], b["sent"])
        self.assertEqual(r["server_metrics"]["hit_rate"], 0.0)
        self.assertNotIn("prefix cache answered", p.stderr)

    def test_fixed_body_is_flagged_by_the_audit(self):
        # the audit's distinct arm puts a unique value before the prompt of each body
        p, r, _ = run_report(self, "--model", self.url, "--body", self.path("fixed.json"),
                             "--repeats", 10, "--warmup", 1, "--audit", "cache",
                             "--server-metrics", self.metrics)
        validate_profile(r)
        a = r["audit"]["cache"]
        self.assertEqual(a["verdict"], "suspect", a)
        self.assertLess(a["ratio"], 0.9)
        self.assertLess(a["ci"][1], 0.9)
        self.assertIsNone(a["distinct_inputs"])
        self.assertIn("before the prompt field 'prompt'", a["distinct_made_by"])
        self.assertIn("--audit cache: suspect", p.stderr)
        self.assertIn("this run sent the same --body every call", p.stderr)
        self.assertGreater(r["server_metrics"]["hit_rate"], 0.9)  # and by the metrics
        # a body without a prompt: a top-level field (the server then caches on the prompt)
        _, r, _ = run_report(self, "--model", self.url, "--body", self.path("fixed.json"),
                             "--prompt-field", "input", "--repeats", 4, "--warmup", 1,
                             "--audit", "cache")
        self.assertIn("top-level field 'rpxprof_nonce'", r["audit"]["cache"]["distinct_made_by"])

    def test_fixed_body_that_is_not_json_says_why_the_audit_cannot_run(self):
        with open(self.path("raw.bin"), "wb") as f:
            f.write(b"\x00\x01 not json")
        p, r, _ = run_report(self, "--model", f"http://127.0.0.1:{self.port}/v1/raw",
                             "--body", self.path("raw.bin"), "--repeats", 4, "--warmup", 1,
                             "--audit", "cache")
        a = r["audit"]["cache"]
        self.assertEqual(a["verdict"], "not_run")
        self.assertIn("is not a JSON object", a["reason"])
        self.assertIn("--prompts", p.stderr)

    def test_nonce_makes_every_body_distinct(self):
        _, r, _ = run_report(self, "--model", self.url, "--body", self.path("fixed.json"),
                             "--nonce", "metadata.nonce", "--repeats", 12, "--warmup", 1)
        validate_profile(r)
        b = r["http"]["bodies"]
        self.assertEqual((b["sent"], b["distinct"], b["nonce_field"]), (13, 13, "metadata.nonce"))
        with open(self.path("raw.bin"), "wb") as f:
            f.write(b"\x00\x01 not json")
        p = run("run", "--model", self.url, "--body", self.path("raw.bin"), "--nonce", "n",
                "--repeats", 2, "-o", self.path("x.json"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--nonce n: the body is not JSON", p.stderr)

    def test_prompts_errors_name_the_file_and_line(self):
        with open(self.path("bad.jsonl"), "w") as f:
            f.write('"ok"\n{not json\n')
        p = run("run", "--model", self.url, "--body-template", self.path("t.json"),
                "--prompts", self.path("bad.jsonl"), "--repeats", 2, "-o", self.path("x.json"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("bad.jsonl: line 2 is not JSON", p.stderr)
        p = run("run", "--model", self.url, "--body-template", self.path("t.json"),
                "--repeats", 2, "-o", self.path("x.json"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--body-template needs --prompts", p.stderr)
        p = run("run", "--model", self.url, "--body-template", self.path("t.json"),
                "--prompts", self.path("prompts.jsonl"), "--rate", 5, "--duration", 1,
                "--load-engine", "sockets", "-o", self.path("x.json"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("--load-engine sockets sends one prepared request, and the bodies vary",
                      p.stderr)
        p = run("run", "--model", f"{MODELS}:busywait", "--inputs", self.path("t.json"),
                "--nonce", "x", "-o", self.path("x.json"), check=2)
        self.assertIn("--nonce is for HTTP API targets", p.stderr)


if __name__ == "__main__":
    main()
