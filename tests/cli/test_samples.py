"""Distinct samples and writable inputs (issue 17, sections 3 and 4):
`--inputs` repeated or a folder, the timed calls cycling sample-major across
the worker processes, latency_records and latency_by_sample, the combined
inputs hash; `--writable-inputs` restoring the pristine bytes before every
call outside the timed span, and a write into read-only inputs naming the
option."""
import hashlib
import json
import os
import sys

import numpy as np

from common import MODELS, SANITIZED, TempDirTest, main, run, run_report, validate_profile

HERE = os.path.dirname(os.path.abspath(__file__))


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def combined_sha(paths):
    return hashlib.sha256("".join(sha(p) + "\n" for p in paths).encode()).hexdigest()


class SamplesTest(TempDirTest):
    def samples(self, n, folder="s", size=64, names=None):
        """n NPZ files: sample_id = k, x = uint8 pattern (x[i] = x[0] + 7 i)."""
        os.makedirs(self.path(folder), exist_ok=True)
        paths = []
        for k in range(n):
            name = names[k] if names else f"s{k}"
            p = self.path(folder, f"{name}.npz")
            x = ((np.arange(size) * 7 + 11 * k + 3) % 256).astype(np.uint8)
            np.savez(p, sample_id=np.array([k], np.int64), x=x)
            paths.append(p)
        return paths

    def inputs_args(self, paths):
        return [a for p in paths for a in ("--inputs", p)]

    def read_log(self, path):
        """[(pid, [warmup ids], [timed ids])] per process, in order."""
        procs = []
        with open(path) as f:
            for line in f:
                kind, v = line.split()
                if kind == "P":
                    procs.append((int(v), [], []))
                else:
                    procs[-1][1 if kind == "W" else 2].append(int(v))
        return procs

    # ---- distinct samples ----

    def test_timed_calls_cycle_sample_major_across_processes(self):
        paths = self.samples(3)
        log = self.path("log")
        _, r, _ = run_report(self, "--model", f"{MODELS}:sample_id_check",
                             *self.inputs_args(paths), "--warmup", "4", "--repeats", "10",
                             "--processes", "3", "--quiet", env={"RPX_TEST_SAMPLE_LOG": log})
        validate_profile(r)
        self.assertEqual(r["distinct_samples"], 3)
        self.assertEqual(r["inputs_file"], paths)
        recs = r["latency_records"]
        self.assertEqual(len(recs), 10)
        self.assertEqual(r["measured_calls"], 10)
        self.assertEqual([x["sample_index"] for x in recs], [j % 3 for j in range(10)])
        self.assertEqual([x["repetition"] for x in recs], [j // 3 for j in range(10)])
        self.assertEqual([x["sample_id"] for x in recs], [f"s{j % 3}" for j in range(10)])
        self.assertEqual([x["latency_ms"] for x in recs], r["latency_samples_ms"])
        # what the model itself received: every process warms up on 0, 1, 2, 0; the
        # timed calls go on across the processes where the last one stopped
        procs = self.read_log(log)
        self.assertEqual(len(procs), 3)
        for _, warm, _ in procs:
            self.assertEqual(warm, [0, 1, 2, 0])
        self.assertEqual([k for _, _, timed in procs for k in timed], [j % 3 for j in range(10)])
        self.assertEqual([len(t) for _, _, t in procs], [4, 3, 3])
        # 10 is no multiple of 3: said so
        self.assertTrue(any("not a multiple" in n for n in r["notes"]), r["notes"])

    def test_per_sample_statistics_match_numpy_on_the_records(self):
        paths = self.samples(4)
        _, r, _ = run_report(self, "--model", f"{MODELS}:sample_id_check",
                             *self.inputs_args(paths), "--warmup", "2", "--repeats", "40",
                             "--processes", "2", "--quiet")
        by = r["latency_by_sample"]
        self.assertEqual([b["sample_index"] for b in by], [0, 1, 2, 3])
        self.assertEqual([b["file"] for b in by], paths)
        for b in by:
            v = np.array([x["latency_ms"] for x in r["latency_records"]
                          if x["sample_index"] == b["sample_index"]], np.float64)
            self.assertEqual(b["n"], 10)
            self.assertEqual(len(v), 10)
            for key, want in (("p50_ms", np.percentile(v, 50)), ("mean_ms", v.mean()),
                              ("min_ms", v.min()), ("max_ms", v.max()),
                              ("p95_ms", np.percentile(v, 95))):
                self.assertAlmostEqual(b[key], want, delta=1e-9 + abs(want) * 1e-9, msg=key)
        # every record is one of latency_samples_ms, in order
        self.assertEqual([x["latency_ms"] for x in r["latency_records"]], r["latency_samples_ms"])

    def test_folder_in_name_order_and_the_hash_covers_every_file(self):
        paths = self.samples(3, folder="d", names=["b", "a", "c"])
        with open(self.path("d", "notes.txt"), "w") as f:
            f.write("not a sample\n")
        os.makedirs(self.path("d", "sub.npz"))  # a folder named *.npz is no sample
        _, r, _ = run_report(self, "--model", f"{MODELS}:sample_id_check", "--inputs",
                             self.path("d"), "--warmup", "0", "--repeats", "6", "--processes",
                             "1", "--quiet")
        ordered = [self.path("d", n + ".npz") for n in ("a", "b", "c")]
        self.assertEqual(r["inputs_file"], ordered)
        self.assertEqual([x["sample_id"] for x in r["latency_records"]], ["a", "b", "c"] * 2)
        self.assertEqual(r["inputs_sha256"], combined_sha(ordered))
        # a change in any one file changes the hash
        before = r["inputs_sha256"]
        np.savez(self.path("d", "b.npz"), sample_id=np.array([0], np.int64),
                 x=((np.arange(64) * 7 + 5) % 256).astype(np.uint8))
        _, r2, _ = run_report(self, "--model", f"{MODELS}:sample_id_check", "--inputs",
                              self.path("d"), "--warmup", "0", "--repeats", "3", "--processes",
                              "1", "--quiet")
        self.assertNotEqual(r2["inputs_sha256"], before)
        self.assertEqual(r2["inputs_sha256"], combined_sha(ordered))
        # the order is part of the hash
        _, r3, _ = run_report(self, "--model", f"{MODELS}:sample_id_check",
                              *self.inputs_args(ordered[::-1]), "--warmup", "0", "--repeats",
                              "3", "--processes", "1", "--quiet")
        self.assertNotEqual(r3["inputs_sha256"], r2["inputs_sha256"])
        self.assertEqual(r3["inputs_sha256"], combined_sha(ordered[::-1]))

    def test_a_sample_inside_a_folder_is_never_the_output(self):
        paths = self.samples(2, folder="d")
        before = sha(paths[1])
        p = run("run", "--model", f"{MODELS}:sample_id_check", "--inputs", self.path("d"),
                "--warmup", "0", "--repeats", "2", "--processes", "1", "--output", paths[1],
                "--force")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"--output {paths[1]}: is one of the files this command reads", p.stderr)
        self.assertEqual(sha(paths[1]), before)

    def test_one_sample_reports_as_before(self):
        (p,) = self.samples(1)
        _, r, _ = run_report(self, "--model", f"{MODELS}:sample_id_check", "--inputs", p,
                             "--warmup", "1", "--repeats", "5", "--quiet")
        validate_profile(r)
        self.assertEqual(r["distinct_samples"], 1)
        self.assertEqual(r["inputs_file"], p)
        self.assertEqual(r["inputs_sha256"], sha(p))
        self.assertIs(r["inputs_writable"], False)
        for k in ("latency_records", "latency_by_sample", "inputs_restore"):
            self.assertNotIn(k, r)

    def test_a_folder_entry_that_is_not_a_file_is_refused_by_name(self):
        """Issue 26 §4.8: a dangling link, a loop of links or a FIFO named *.npz in an inputs
        folder was skipped in silence (distinct_samples 1, no note). A *.npz entry that is
        not a folder is a sample: one that cannot be read is refused, named. (A folder named
        *.npz stays skipped: test_folder_in_name_order_and_the_hash_covers_every_file.)"""
        self.samples(1, folder="d")
        entry = self.path("d", "s1.npz")
        cases = [(lambda: os.symlink("gone.npz", entry), "is a symbolic link to gone.npz, "
                  "which does not exist (a dangling link)"),
                 (lambda: os.symlink("s1.npz", entry), "a loop of links"),
                 (lambda: os.mkfifo(entry), "is a FIFO (named pipe), not a regular file")]
        for make, needle in cases:
            with self.subTest(needle=needle):
                make()
                out = self.path("never.json")
                try:
                    p = run("run", "--model", f"{MODELS}:sample_id_check", "--inputs",
                            self.path("d"), "--warmup", "0", "--repeats", "2", "--processes",
                            "1", "--output", out, timeout=60)
                    self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                    self.assertIn(f"--inputs {self.path('d')}: {entry}", p.stderr)
                    self.assertIn(needle, p.stderr)
                    self.assertFalse(os.path.exists(out))
                finally:
                    os.unlink(entry)
        # a link to a sample is a sample
        os.symlink(self.samples(2, folder="src")[1], entry)
        _, r, _ = run_report(self, "--model", f"{MODELS}:sample_id_check", "--inputs",
                             self.path("d"), "--warmup", "0", "--repeats", "2", "--processes",
                             "1", "--quiet")
        self.assertEqual(r["distinct_samples"], 2)

    def test_refusals(self):
        a, b = self.samples(2)
        os.makedirs(self.path("empty"))
        with open(self.path("empty", "x.txt"), "w") as f:
            f.write("x")
        cases = []
        out = self.path("never.json")
        p = run("run", "--model", f"{MODELS}:sample_id_check", "--inputs", self.path("empty"),
                "--output", out)
        cases.append((p, 1, ["--inputs " + self.path("empty"), "no *.npz file"]))
        np.savez(self.path("names.npz"), sample_id=np.array([0], np.int64),
                 y=np.zeros(64, np.uint8))
        p = run("run", "--model", f"{MODELS}:sample_id_check", "--inputs", a, "--inputs",
                self.path("names.npz"), "--output", out)
        cases.append((p, 1, [self.path("names.npz"), a, "(sample_id, y)", "same array names"]))
        np.savez(self.path("shape.npz"), sample_id=np.array([0], np.int64),
                 x=np.zeros(65, np.uint8))
        p = run("run", "--model", f"{MODELS}:sample_id_check", "--inputs", a, "--inputs",
                self.path("shape.npz"), "--output", out)
        cases.append((p, 1, [self.path("shape.npz"), a, "array 'x'", "uint8 65", "uint8 64",
                             "same dtypes and shapes"]))
        with open(self.path("bad.npz"), "wb") as f:
            f.write(b"not a zip file at all")
        p = run("run", "--model", f"{MODELS}:sample_id_check", "--inputs", a, "--inputs",
                self.path("bad.npz"), "--output", out)
        cases.append((p, 1, [self.path("bad.npz")]))
        p = run("run", "--model", "http://127.0.0.1:9/predict", "--inputs", a, "--inputs", b,
                "--output", out)
        cases.append((p, 2, ["2 samples", "HTTP target", "give one --inputs file"]))
        p = run("run", "--model", "http://127.0.0.1:9/predict", "--inputs", a,
                "--writable-inputs", "--output", out)
        cases.append((p, 2, ["--writable-inputs", "HTTP target"]))
        for p, code, parts in cases:
            self.assertEqual(p.returncode, code, p.stderr)
            for part in parts:
                self.assertIn(part, p.stderr)
            self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertFalse(os.path.exists(out))

    # ---- writable inputs ----

    def test_writable_inputs_are_restored_before_every_call(self):
        paths = self.samples(3, size=4096)
        _, r, _ = run_report(self, "--model", f"{MODELS}:pristine_edit", *self.inputs_args(paths),
                             "--writable-inputs", "--warmup", "5", "--repeats", "12",
                             "--processes", "2", "--quiet")
        validate_profile(r)
        self.assertEqual(r["status"], "complete", r.get("error"))
        self.assertEqual(r["measured_calls"], 12)
        self.assertIs(r["inputs_writable"], True)
        rs = r["inputs_restore"]
        self.assertEqual(rs["calls"], 12)
        # only the sample about to be called: its two arrays (8 + 4096 bytes)
        self.assertEqual(rs["bytes_per_call"], 8 + 4096)
        self.assertGreater(rs["p50_ms"], 0)
        self.assertAlmostEqual(rs["total_ms"], rs["timed_calls_total_ms"] + rs["warmup_calls_total_ms"],
                               places=9)
        # the files themselves are untouched
        for k, p in enumerate(paths):
            with np.load(p) as z:
                self.assertEqual(int(z["x"][0]), (11 * k + 3) % 256)

    def test_one_writable_sample(self):
        (p,) = self.samples(1, size=256)
        _, r, _ = run_report(self, "--model", f"{MODELS}:pristine_edit", "--inputs", p,
                             "--writable-inputs", "--warmup", "3", "--repeats", "8", "--quiet")
        self.assertEqual(r["status"], "complete", r.get("error"))
        self.assertEqual(r["distinct_samples"], 1)
        self.assertEqual(r["inputs_restore"]["calls"], 8)
        self.assertEqual(r["inputs_restore"]["bytes_per_call"], 8 + 256)

    def test_restore_time_is_not_in_the_samples(self):
        # 32 MiB restored before every call of a model that never reads it: the
        # copy takes milliseconds, the call microseconds
        p = self.path("big.npz")
        np.savez(p, sample_id=np.array([0], np.int64), big=np.ones(32 << 20, np.uint8))
        _, r, _ = run_report(self, "--model", f"{MODELS}:sample_id_check", "--inputs", p,
                             "--writable-inputs", "--warmup", "1", "--repeats", "15",
                             "--processes", "1", "--quiet")
        self.assertEqual(r["status"], "complete", r.get("error"))
        self.assertEqual(r["inputs_restore"]["bytes_per_call"], (32 << 20) + 8)
        self.assertLess(r["latency"]["p50_ms"], r["inputs_restore"]["p50_ms"])

    def test_a_write_into_read_only_inputs_crashes_and_names_the_option(self):
        paths = self.samples(2)
        _, r, _ = run_report(self, "--model", f"{MODELS}:pristine_edit", *self.inputs_args(paths),
                             "--warmup", "0", "--repeats", "4", "--processes", "1", "--quiet",
                             check=3)
        validate_profile(r)
        self.assertEqual(r["status"], "crashed")
        self.assertEqual(r["failure"]["call_index"], 0)
        self.assertIn("read-only inputs (array 'x' of sample 0)", r["error"])
        self.assertIn("--writable-inputs", r["error"])
        # one file: the same, without a sample number
        _, r, _ = run_report(self, "--model", f"{MODELS}:pristine_edit", "--inputs", paths[1],
                             "--warmup", "2", "--repeats", "4", "--quiet", check=3)
        self.assertIn("read-only inputs (array 'x');", r["error"])
        # a crash that is not a write into the inputs says nothing of them
        _, r, _ = run_report(self, "--model", f"{MODELS}:crash_at", "--inputs", paths[1],
                             "--warmup", "0", "--repeats", "4", "--processes", "1", "--quiet",
                             check=3, env={"RPX_TEST_AT": "1"})
        self.assertNotIn("--writable-inputs", r["error"])

    # ---- the manifest ----

    def test_manifest_takes_a_list_of_inputs_and_resume_checks_them_all(self):
        paths = self.samples(3)
        folder = self.samples(2, folder="dir", names=["q", "p"])
        m = {"schema": "rpxprof.manifest/1",
             "defaults": {"warmup": 1, "repeats": 6, "processes": 2},
             "tasks": {"listed": {"inputs": [os.path.relpath(p, self.tmp) for p in paths]},
                       "folder": {"inputs": "dir"},
                       "one": {"inputs": [os.path.relpath(paths[0], self.tmp)]}},
             "models": [{"name": "ids", "model": f"{MODELS}:sample_id_check",
                         "tasks": ["listed", "folder", "one"]}]}
        mp = self.path("manifest.json")
        with open(mp, "w") as f:
            json.dump(m, f)
        from common import validate
        validate(m, "manifest.json")
        out = self.path("out")
        run("batch", mp, "--out-dir", out, check=0)
        with open(os.path.join(out, "listed", "ids.json")) as f:
            r = json.load(f)
        validate_profile(r)
        self.assertEqual(r["distinct_samples"], 3)
        self.assertEqual(r["inputs_sha256"], combined_sha(paths))
        self.assertEqual([x["sample_index"] for x in r["latency_records"]], [0, 1, 2] * 2)
        with open(os.path.join(out, "folder", "ids.json")) as f:
            r = json.load(f)
        self.assertEqual(r["distinct_samples"], 2)
        self.assertEqual([x["sample_id"] for x in r["latency_records"]], ["p", "q"] * 3)
        with open(os.path.join(out, "one", "ids.json")) as f:
            r = json.load(f)
        self.assertEqual(r["distinct_samples"], 1)
        self.assertEqual(r["inputs_sha256"], sha(paths[0]))
        p = run("batch", mp, "--out-dir", out, "--resume", check=0)
        self.assertIn("0 complete, 0 failed, 3 skipped", p.stdout)
        # any one file of a list changed: that task runs again
        np.savez(paths[2], sample_id=np.array([2], np.int64), x=np.zeros(64, np.uint8))
        p = run("batch", mp, "--out-dir", out, "--resume", check=0)
        self.assertIn("1 complete, 0 failed, 2 skipped", p.stdout)
        # a file of the folder changed: that one
        np.savez(folder[0], sample_id=np.array([0], np.int64), x=np.ones(64, np.uint8))
        p = run("batch", mp, "--out-dir", out, "--resume", check=0)
        self.assertIn("1 complete, 0 failed, 2 skipped", p.stdout)
        # bad lists
        for inputs, needles in (([], ["tasks.listed.inputs", "empty list"]),
                                ([1], ["tasks.listed.inputs[0]", "wrong type"]),
                                ([""], ["tasks.listed.inputs[0]", "is empty"])):
            m["tasks"]["listed"]["inputs"] = inputs
            with open(mp, "w") as f:
                json.dump(m, f)
            p = run("batch", mp, "--out-dir", self.path("o"))
            self.assertEqual(p.returncode, 1, p.stderr)
            for n in needles:
                self.assertIn(n, p.stderr)

    # ---- a Python callable ----

    def test_python_in_place_edit(self):
        mod = self.path("inplace_model.py")
        with open(mod, "w") as f:
            f.write(
                "import numpy as np\n"
                "calls = 0\n"
                "def predict(sample_id, rgb):\n"
                "    global calls\n"
                "    k = int(sample_id[0])\n"
                "    want = (np.arange(rgb.size, dtype=np.float32) + 10 * k).reshape(rgb.shape)\n"
                "    if not np.array_equal(rgb, want):\n"
                "        raise RuntimeError(f'call {calls}: sample {k} is not pristine')\n"
                "    rgb /= 255\n"
                "    calls += 1\n")
        paths = []
        for k in range(3):
            p = self.path(f"rgb{k}.npz")
            np.savez(p, sample_id=np.array([k], np.int64),
                     rgb=(np.arange(48, dtype=np.float32) + 10 * k).reshape(4, 4, 3))
            paths.append(p)
        env = {"PYTHONPATH": self.tmp}
        _, r, _ = run_report(self, "--model", "inplace_model:predict", *self.inputs_args(paths),
                             "--writable-inputs", "--warmup", "4", "--repeats", "9",
                             "--processes", "2", "--quiet", env=env, cwd=self.tmp)
        self.assertEqual(r["status"], "complete", r.get("error"))
        self.assertEqual(r["distinct_samples"], 3)
        self.assertEqual(len(r["latency_records"]), 9)
        self.assertEqual(r["inputs_restore"]["calls"], 9)
        # without the option the edit fails, and the message names it
        p, r, _ = run_report(self, "--model", "inplace_model:predict", *self.inputs_args(paths),
                             "--warmup", "1", "--repeats", "3", "--processes", "1", "--quiet",
                             env=env, cwd=self.tmp, check=1)
        self.assertIsNone(r)
        self.assertIn("--writable-inputs", p.stderr)


if __name__ == "__main__":
    main()
