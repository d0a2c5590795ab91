"""Issue 36, inside one run: intervals that stay within what the data allow, and the factors
a run's worker processes sample for themselves (src/runner/vary.c, docs/statistics.md).

- WithinDataTest: busy-waits whose processes take known, different times (cpu_skewed with
  RPX_TEST_STEP_NS: process i waits i x STEP longer) give a t interval over 3 processes that,
  unclamped, reaches below the fastest call and above the slowest; every end of every
  latency_ci interval lies within [fastest call, slowest call]. Only containment is asserted,
  never a duration.
- VariedLayoutTest: each worker reads its own copy of the inputs, at an address that differs
  from process to process, aligned to 64 bytes at a varied offset in its page; the report says
  what the processes sampled (latency_ci.varied) and what they could not (fixed_per_run: time);
  --no-isolate says the inputs were the parent's."""
import json
import os

import numpy as np

from common import MODELS, TempDirTest, main, run, validate_profile


def load(path):
    with open(path) as f:
        return json.load(f)


class WithinDataTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))

    def assert_within(self, r):
        fastest, slowest = min(r["latency_samples_ms"]), max(r["latency_samples_ms"])
        ci = r["latency_ci"]
        stated = 0
        for key in ("p50_ms", "p95_ms", "p99_ms", "mean_ms"):
            if ci[key] is None:
                continue
            stated += 1
            lo, hi = ci[key]
            self.assertGreaterEqual(lo, fastest, f"{key} {ci[key]} below the fastest call {fastest}")
            self.assertLessEqual(hi, slowest, f"{key} {ci[key]} above the slowest call {slowest}")
            self.assertLessEqual(lo, r["latency"][key])
            self.assertGreaterEqual(hi, r["latency"][key])
        return stated

    def test_processes_of_known_different_times(self):
        out = self.path("r.json")
        p = run("run", "--model", f"{MODELS}:cpu_skewed", "--inputs", self.inputs, "--processes",
                "3", "--repeats", "240", "--warmup", "2", "--output", out, "--quiet",
                env={"RPX_TEST_CPU_ROTATE": self.path("rotate"), "RPX_TEST_STEP_NS": "100000",
                     "RPX_TEST_SLOW_NS": "200000", "RPX_TEST_FAST_NS": "200000"})
        self.assertEqual(p.returncode, 0, p.stderr)
        r = load(out)
        self.assertEqual(r["latency_ci"]["covers"][:7], "between")
        self.assertGreaterEqual(self.assert_within(r), 3)  # p50, p95 and the mean at least

    def test_one_process(self):
        out = self.path("one.json")
        p = run("run", "--model", f"{MODELS}:busywait", "--inputs", self.inputs, "--processes",
                "1", "--repeats", "300", "--warmup", "2", "--output", out, "--quiet",
                env={"RPX_TEST_BUSY_NS": "100000"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreaterEqual(self.assert_within(load(out)), 3)


class OlderReportsTest(TempDirTest):
    """A report of an rpxprof before issue 36 (no latency_ci.varied), whose interval could
    reach past the calls, still compares; a newer report altered that way is refused."""

    def test_an_interval_past_the_calls(self):
        inputs, out = self.path("in.npz"), self.path("r.json")
        np.savez(inputs, x=np.zeros(4, np.float32))
        # processes of known different times (as WithinDataTest): the t interval reaches below
        # the fastest call, so the report's interval ends there
        p = run("run", "--model", f"{MODELS}:cpu_skewed", "--inputs", inputs, "--processes", "3",
                "--repeats", "60", "--warmup", "1", "--output", out, "--quiet",
                env={"RPX_TEST_CPU_ROTATE": self.path("rotate"), "RPX_TEST_STEP_NS": "100000",
                     "RPX_TEST_SLOW_NS": "200000", "RPX_TEST_FAST_NS": "200000"})
        self.assertEqual(p.returncode, 0, p.stderr)
        r = load(out)
        fastest = min(r["latency_samples_ms"])
        self.assertEqual(r["latency_ci"]["p50_ms"][0], fastest)
        r["latency_ci"]["p50_ms"][0] = fastest * 0.9  # what the t interval gave before
        newer, older = self.path("newer.json"), self.path("older.json")
        with open(newer, "w") as f:
            json.dump(r, f)
        del r["latency_ci"]["varied"], r["latency_ci"]["fixed_per_run"]
        with open(older, "w") as f:
            json.dump(r, f)
        p = run("compare", older, older)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run("compare", newer, newer)
        self.assertEqual(p.returncode, 1)
        self.assertIn("latency_ci.p50_ms is [", p.stderr)


class VariedLayoutTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.arange(3 * 4096, dtype=np.uint8), y=np.ones(5, np.float64))

    def addresses(self, log):
        procs = []
        with open(log) as f:
            for line in f:
                w = line.split()
                if w[0] == "P":
                    procs.append({})
                else:
                    procs[-1][w[1]] = int(w[2])
        return procs

    def test_each_process_its_own_inputs(self):
        out, log = self.path("r.json"), self.path("addr.log")
        p = run("run", "--model", f"{MODELS}:input_address", "--inputs", self.inputs,
                "--processes", "8", "--repeats", "16", "--warmup", "1", "--output", out,
                "--quiet", env={"RPX_TEST_ADDRESS_LOG": log})
        self.assertEqual(p.returncode, 0, p.stderr)
        procs = self.addresses(log)
        self.assertEqual(len(procs), 8)
        for name in ("x", "y"):
            at = [a[name] for a in procs]
            self.assertTrue(all(a % 64 == 0 for a in at), at)  # the model ABI's alignment
            self.assertGreater(len(set(at)), 1, f"every process read {name} at one address")
            self.assertGreater(len({a % 4096 for a in at}), 1,
                               f"{name} at one offset in its page in every process")
        r = load(out)
        validate_profile(r)
        ci = r["latency_ci"]
        self.assertEqual(ci["varied"], ["input_pages", "input_offset", "stack", "heap", "mmap"])
        self.assertEqual([f["factor"] for f in ci["fixed_per_run"]], ["time"])
        self.assertIn("does not cover", ci["fixed_per_run"][0]["why"])

    def test_writable_inputs_are_restored_in_the_copies(self):
        # pristine_edit fails a call that finds its input edited, then edits it: the restore
        # puts the bytes back in each process's own copy
        x = self.path("p.npz")
        np.savez(x, x=((np.arange(5000) * 7) % 256).astype(np.uint8))
        out = self.path("w.json")
        p = run("run", "--model", f"{MODELS}:pristine_edit", "--inputs", x, "--processes", "3",
                "--repeats", "30", "--warmup", "2", "--writable-inputs", "--output", out,
                "--quiet")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = load(out)
        self.assertEqual(r["failed_calls"], 0)
        self.assertIn("input_pages", r["latency_ci"]["varied"])

    def test_read_only_copies_still_name_writable_inputs(self):
        out = self.path("ro.json")
        x = self.path("p.npz")
        np.savez(x, x=((np.arange(5000) * 7) % 256).astype(np.uint8))
        p = run("run", "--model", f"{MODELS}:pristine_edit", "--inputs", x, "--processes", "2",
                "--repeats", "4", "--output", out, "--quiet")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--writable-inputs", p.stderr)

    def test_not_isolated_says_the_inputs_were_the_parents(self):
        out = self.path("ni.json")
        p = run("run", "--model", f"{MODELS}:read_inputs", "--inputs", self.inputs,
                "--no-isolate", "--repeats", "20", "--output", out, "--quiet")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = load(out)
        validate_profile(r)
        ci = r["latency_ci"]
        self.assertEqual(ci["varied"], [])
        self.assertEqual([f["factor"] for f in ci["fixed_per_run"]], ["time", "inputs"])
        self.assertIn("--no-isolate", ci["fixed_per_run"][1]["why"])


if __name__ == "__main__":
    main()
