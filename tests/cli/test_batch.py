"""`rpxprof batch`, `rpxprof aggregate` and `rpxprof plot` on real runs of the
demo models: the manifest, child-process jobs, failed reports, --resume,
sharding (--shard and SLURM), every aggregate check broken on purpose, and the
SVG figures parsed as XML and rendered by headless Chromium."""
import copy
import csv
import glob
import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zlib

from common import load_json as load, save_json as save, MODELS, SOURCE, TempDirTest, main, run, validate, validate_profile

SVG = "{http://www.w3.org/2000/svg}"


def make_inputs(d):
    run("inputs", "make", os.path.join(d, "frame.npz"), "rgb=48x64x3:uint8", "--seed", "1", check=0)
    run("inputs", "make", os.path.join(d, "pair.npz"), "rgb_a=48x64x3:uint8", "rgb_b=48x64x3:uint8", check=0)
    run("inputs", "make", os.path.join(d, "clip.npz"), "frames=4x48x64x3:uint8", check=0)


def manifest(d, extra_models=(), name="m.json", repeats=50):
    m = {"schema": "rpxprof.manifest/1",
         "defaults": {"warmup": 2, "repeats": repeats, "device": "cpu", "precision": "fp32"},
         "tasks": {"image_depth": {"inputs": "frame.npz", "unit": "frame"},
                   "pose": {"inputs": "pair.npz", "unit": "pair"},
                   "video_depth": {"inputs": "clip.npz", "unit": "clip", "meta": {"clip_length": 4}}},
         "models": [{"name": "demo-depth", "model": "rpxprof-demo:demo_depth", "tasks": ["image_depth"],
                     "flops": 1e6, "params": 1000},
                    {"name": "demo-noop", "model": "rpxprof-demo:demo_noop",
                     "tasks": ["image_depth", "pose", "video_depth"], "flops": "1e3", "params": 1},
                    {"name": "demo-pose", "model": "rpxprof-demo:demo_pose", "tasks": ["pose"],
                     "flops": 2e6, "params": 10},
                    {"name": "demo-video", "model": "rpxprof-demo:demo_video_depth", "tasks": ["video_depth"],
                     "flops": 3e6, "params": 100}] + list(extra_models)}
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def reports(d):
    return sorted(os.path.relpath(p, d) for p in glob.glob(os.path.join(d, "*", "*.json")))


def png_nonblank(path):
    """(width, height, distinct byte values of the decompressed image data)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    w = h = 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    return w, h, len(set(raw))


class BatchTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls._ctmp = tempfile.TemporaryDirectory(prefix="rpxbatch-")
        cls.d = cls._ctmp.name
        make_inputs(cls.d)
        cls.manifest = manifest(cls.d)
        cls.out = os.path.join(cls.d, "out")
        p = run("batch", cls.manifest, "--out-dir", cls.out)
        assert p.returncode == 0, p.stderr
        cls.batch_stdout = p.stdout

    @classmethod
    def tearDownClass(cls):
        cls._ctmp.cleanup()

    def copy_out(self):
        dst = self.path("out")
        shutil.copytree(self.out, dst)
        return dst

    def aggregate(self, *dirs, expect=True, extra=()):
        agg = self.path("agg")
        args = ["aggregate", *dirs, "--out-dir", agg, *extra]
        if expect:
            args += ["--expect", self.manifest]
        p = run(*args)
        val = load(os.path.join(agg, "validation.json"))
        validate(val, "validation.json")
        for name in ("summary.csv", "summary.md", "figure.svg"):
            self.assertTrue(os.path.exists(os.path.join(agg, name)), name)
        return p, val, agg

    def assert_fail(self, out, needle, **kw):
        p, val, _ = self.aggregate(out, **kw)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(val["status"], "FAIL")
        self.assertTrue(any(needle in e for e in val["errors"]), f"{needle!r} not in {val['errors']}")
        return val

    # --- batch ---------------------------------------------------------------
    def test_batch_writes_one_report_per_job(self):
        self.assertEqual(reports(self.out), [
            "image_depth/demo-depth.json", "image_depth/demo-noop.json", "pose/demo-noop.json",
            "pose/demo-pose.json", "video_depth/demo-noop.json", "video_depth/demo-video.json"])
        self.assertIn("6 complete, 0 failed, 0 skipped", self.batch_stdout)
        for rel in reports(self.out):
            r = load(os.path.join(self.out, rel))
            validate_profile(r)
            task, model = rel[:-5].split("/")
            self.assertEqual((r["task"], r["model_name"], r["status"]), (task, model, "complete"))
            self.assertEqual(r["measured_calls"], 50)
            self.assertEqual(r["warmup_calls"], 2)
            self.assertEqual(r["device"], "cpu")
            self.assertEqual(r["precision"], "fp32")
        v = load(os.path.join(self.out, "video_depth", "demo-video.json"))
        self.assertEqual(v["metadata"], {"clip_length": 4})
        self.assertEqual(v["unit"], "clip")
        self.assertEqual(v["inputs"]["frames"]["shape"], [4, 48, 64, 3])
        self.assertEqual(v["efficiency"]["flops"], 3e6)

    def test_failing_model_gets_failed_report_and_others_complete(self):
        if not os.path.exists(MODELS):
            self.skipTest(f"{MODELS} not built")
        m = manifest(self.tmp, extra_models=[{"name": "broken", "model": os.path.abspath(MODELS) + ":fail_setup",
                                              "tasks": ["image_depth"]}])
        make_inputs(self.tmp)
        out = self.path("out")
        p = run("batch", m, "--out-dir", out)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("6 complete, 1 failed", p.stdout)
        r = load(os.path.join(out, "image_depth", "broken.json"))
        validate_profile(r)
        self.assertEqual(r["status"], "failed")
        self.assertIn("weights file /nonexistent/weights.bin not found", r["error"])
        self.assertEqual((r["task"], r["model_name"]), ("image_depth", "broken"))
        self.assertEqual(len(reports(out)), 7)
        for rel in reports(out):
            if "broken" not in rel:
                self.assertEqual(load(os.path.join(out, rel))["status"], "complete")
        p2 = run("aggregate", out, "--out-dir", self.path("agg"))
        self.assertEqual(p2.returncode, 1)
        val = load(self.path("agg", "validation.json"))
        self.assertTrue(any("broken.json: status is 'failed'" in e for e in val["errors"]), val["errors"])
        # A failed report is no valid complete report: the schema still requires the measured keys.
        import jsonschema
        r["status"] = "complete"
        with self.assertRaises(jsonschema.ValidationError):
            validate_profile(r)

    def test_resume_skips_matching_and_reruns_changed(self):
        make_inputs(self.tmp)
        m = manifest(self.tmp)
        out = self.path("out")
        run("batch", m, "--out-dir", out, check=0)
        before = {rel: os.stat(os.path.join(out, rel)).st_mtime_ns for rel in reports(out)}
        p = run("batch", m, "--out-dir", out, "--resume", check=0)
        self.assertIn("0 complete, 0 failed, 6 skipped", p.stdout)
        self.assertEqual(before, {rel: os.stat(os.path.join(out, rel)).st_mtime_ns for rel in reports(out)})
        # new inputs for the pose task: its two jobs run again
        run("inputs", "make", self.path("pair.npz"), "rgb_a=48x64x3:uint8=7", "rgb_b=48x64x3:uint8", check=0)
        p = run("batch", m, "--out-dir", out, "--resume", check=0)
        self.assertIn("2 complete, 0 failed, 4 skipped", p.stdout)
        # different settings (repeats) rerun everything
        m2 = manifest(self.tmp, repeats=20)
        p = run("batch", m2, "--out-dir", out, "--resume", check=0)
        self.assertIn("6 complete, 0 failed, 0 skipped", p.stdout)

    def test_sharding_covers_every_job_once(self):
        for how in ("flag", "slurm"):
            out = self.path("sharded-" + how)
            for i in range(3):
                if how == "flag":
                    p = run("batch", self.manifest, "--out-dir", out, "--shard", f"{i}/3")
                else:
                    p = run("batch", self.manifest, "--out-dir", out,
                            env={"SLURM_ARRAY_TASK_ID": str(i + 1), "SLURM_ARRAY_TASK_COUNT": "3",
                                 "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "3",
                                 "SLURM_ARRAY_TASK_STEP": "1"})
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("2 jobs (shard %d/3 of 6)" % i, p.stdout)
            self.assertEqual(reports(out), reports(self.out), how)
            for rel in reports(out):
                a, b = load(os.path.join(out, rel)), load(os.path.join(self.out, rel))
                for k in ("task", "model_name", "model_callable", "inputs_sha256", "metadata", "measured_calls"):
                    self.assertEqual(a[k], b[k], (how, rel, k))
            p, val, _ = self.aggregate(out)
            self.assertEqual(val["status"], "PASS", val["errors"])
        self.assertEqual(run("batch", self.manifest, "--out-dir", self.path("x"), "--shard", "3/3").returncode, 2)
        self.assertEqual(run("batch", self.manifest, "--out-dir", self.path("x"), "--shard", "1").returncode, 2)

    def small_manifest(self, d, **changes):
        """6 quick jobs (one process, 3 calls): 3 tasks x 2 demo models."""
        make_inputs(d)
        m = {"schema": "rpxprof.manifest/1",
             "defaults": {"warmup": 1, "repeats": 3, "device": "cpu", "precision": "fp32", "processes": 1},
             "tasks": {"image_depth": {"inputs": "frame.npz", "unit": "frame"},
                       "pose": {"inputs": "pair.npz", "unit": "pair"},
                       "video_depth": {"inputs": "clip.npz", "unit": "clip", "meta": {"clip_length": 4}}},
             "models": [{"name": "a", "model": "rpxprof-demo:demo_noop", "tasks": ["image_depth", "pose", "video_depth"],
                         "flops": 1, "params": 1},
                        {"name": "b", "model": "rpxprof-demo:demo_noop", "tasks": ["image_depth", "pose", "video_depth"],
                         "flops": 1, "params": 1}]}
        for k, v in changes.items():
            v(m) if callable(v) else m.__setitem__(k, v)
        path = os.path.join(d, "small.json")
        save(path, m)
        return path

    def slurm_array(self, m, out, ids, mn, mx, step, count, resume=False):
        """Run one batch per array index with Slurm's variables set as Slurm sets them;
        returns [(index, completed process, reports it wrote)]."""
        runs = []
        for i in ids:
            env = {"SLURM_ARRAY_TASK_ID": str(i), "SLURM_ARRAY_TASK_MIN": str(mn),
                   "SLURM_ARRAY_TASK_MAX": str(mx), "SLURM_ARRAY_TASK_COUNT": str(count)}
            if step is not None:
                env["SLURM_ARRAY_TASK_STEP"] = str(step)
            before = {r: os.stat(os.path.join(out, r)).st_mtime_ns for r in reports(out)} if os.path.isdir(out) else {}
            p = run("batch", m, "--out-dir", out, "-q", *(["--resume"] if resume else []), env=env)
            after = {r: os.stat(os.path.join(out, r)).st_mtime_ns for r in reports(out)} if os.path.isdir(out) else {}
            runs.append((i, p, sorted(r for r in after if before.get(r) != after[r])))
        return runs

    def test_slurm_array_index_set_covers_every_job_once(self):
        m = self.small_manifest(self.tmp)
        full = self.path("full")
        self.assertEqual(run("batch", m, "--out-dir", full, "-q").returncode, 0)
        every = reports(full)
        self.assertEqual(len(every), 6)
        # (array, indices, MIN, MAX, STEP (None: unset), COUNT, the shards I/N they must get)
        cases = [("0-6:2", [0, 2, 4, 6], 0, 6, 2, 4, ["0/4", "1/4", "2/4", "3/4"]),
                 ("1-3", [1, 2, 3], 1, 3, 1, 3, ["0/3", "1/3", "2/3"]),
                 ("5-11:3", [5, 8, 11], 5, 11, 3, 3, ["0/3", "1/3", "2/3"]),
                 ("1-3:2", [1, 3], 1, 3, 2, 2, ["0/2", "1/2"]),
                 ("two indices, no STEP (an older Slurm)", [1, 3], 1, 3, None, 2, ["0/2", "1/2"]),
                 ("1 (a single index: the whole manifest)", [1], 1, 1, 1, 1, ["0/1"])]
        for name, ids, mn, mx, step, count, shards in cases:
            out = self.path("arr-" + str(len(os.listdir(self.tmp))))
            runs = self.slurm_array(m, out, ids, mn, mx, step, count)
            written = []
            for (i, p, new), shard in zip(runs, shards):
                self.assertEqual(p.returncode, 0, (name, i, p.stderr))
                self.assertIn("(shard %s of 6)" % shard, p.stdout, (name, i))
                written += new
            # every report exactly once: no task rewrote another's report, none is missing
            self.assertEqual(sorted(written), every, name)
            self.assertEqual(reports(out), every, name)
            _, val, _ = self.aggregate(out, expect=False)
            self.assertEqual(val["status"], "PASS", (name, val["errors"]))
        # re-submitting part of an array (--array=1,3 of a 0-3 array): Slurm 22.05 sets MIN=1 MAX=3
        # STEP=1 COUNT=2, which is no evenly stepped set: refused; the whole array again with
        # --resume runs only the missing job
        out = self.path("resub")
        runs = self.slurm_array(m, out, [0, 1, 2, 3], 0, 3, 1, 4)
        lost = runs[1][2][0]
        os.unlink(os.path.join(out, lost))   # a report of shard 1 is lost (its task cancelled)
        runs = self.slurm_array(m, out, [1, 3], 1, 3, 1, 2, resume=True)
        self.assertEqual([p.returncode for _, p, _ in runs], [2, 2])
        self.assertEqual([r[2] for r in runs], [[], []])
        self.assertIn("SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=2", runs[0][1].stderr)
        runs = self.slurm_array(m, out, [0, 1, 2, 3], 0, 3, 1, 4, resume=True)
        self.assertEqual([p.returncode for _, p, _ in runs], [0, 0, 0, 0])
        self.assertEqual(sorted(sum((r[2] for r in runs), [])), [lost])
        self.assertEqual(reports(out), every)

    def test_slurm_arrays_that_cannot_cover_every_job_are_refused_before_any_work(self):
        m = self.small_manifest(self.tmp)
        out = self.path("refused")
        cases = [("list 1,3,4 (step 1)", dict(ID=3, MIN=1, MAX=4, STEP=1, COUNT=3), "not MIN, MIN+STEP"),
                 ("list 1,3 as Slurm sets it", dict(ID=1, MIN=1, MAX=3, STEP=1, COUNT=2), "not MIN, MIN+STEP"),
                 ("list 0,1,5 (no step)", dict(ID=5, MIN=0, MAX=5, COUNT=3), "no SLURM_ARRAY_TASK_STEP"),
                 ("list 0,2,3,6 (a step that fits the ends)", dict(ID=3, MIN=0, MAX=6, STEP=2, COUNT=4),
                  "not one of MIN, MIN+STEP"),
                 ("index outside", dict(ID=9, MIN=0, MAX=6, STEP=2, COUNT=4), "not one of MIN, MIN+STEP"),
                 ("no MAX", dict(ID=1, MIN=0, COUNT=2), "needs SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX"),
                 ("ID without COUNT", dict(ID=1), "come together"),
                 ("not an integer", dict(ID="x", MIN=0, MAX=1, STEP=1, COUNT=2), "not a non-negative integer"),
                 ("one task off its MIN", dict(ID=2, MIN=1, MAX=1, COUNT=1), "one task")]
        for name, v, why in cases:
            env = {"SLURM_ARRAY_TASK_" + k: str(x) for k, x in v.items()}
            p = run("batch", m, "--out-dir", out, env=env)
            self.assertEqual(p.returncode, 2, (name, p.stdout))
            self.assertIn(why, p.stderr, name)
            for k in ("ID", "MIN", "MAX", "STEP", "COUNT"):   # every variable named, with its value
                self.assertIn("SLURM_ARRAY_TASK_%s=%s" % (k, v.get(k, "(unset)")), p.stderr, name)
            self.assertIn("--resume", p.stderr)
            self.assertIn("--shard I/N", p.stderr)
            self.assertFalse(os.path.exists(out), name)
        # --shard wins over the variables
        p = run("batch", m, "--out-dir", out, "-q", "--shard", "1/2",
                env={"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(shard 1/2 of 6)", p.stdout)

    def test_per_model_overrides_refused_before_running(self):
        def override(i, key, value):
            return lambda m: m["models"][i].__setitem__(key, value)
        for key, value, what in (("repeats", 5, "measured calls"), ("warmup", 0, "warmup calls"),
                                 ("processes", 2, "number of worker processes")):
            m = self.small_manifest(self.tmp, x=override(1, key, value))
            out = self.path("o-" + key)
            p = run("batch", m, "--out-dir", out)
            self.assertEqual(p.returncode, 1, (key, p.stdout))
            d = load(m)["defaults"][key]
            self.assertIn("small.json: task 'image_depth': %s is %d for model 'a' but %d for model 'b'"
                          % (key, d, value), p.stderr)
            self.assertIn(what, p.stderr)
            self.assertIn("aggregate's same-work check", p.stderr)
            self.assertFalse(os.path.exists(out), key)     # refused before any job
        # the same override on every model of a task, or on a model alone in its task, runs
        def alone(m):
            m["tasks"]["slow"] = {"inputs": "frame.npz", "unit": "frame"}
            m["models"].append({"name": "c", "model": "rpxprof-demo:demo_noop", "tasks": ["slow"],
                                "repeats": 5, "warmup": 0, "flops": 1, "params": 1})
            m["models"][0]["repeats"] = m["models"][1]["repeats"] = 4
        m = self.small_manifest(self.tmp, x=alone)
        out = self.path("o-ok")
        p = run("batch", m, "--out-dir", out, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(load(os.path.join(out, "slow", "c.json"))["measured_calls"], 5)
        _, val, _ = self.aggregate(out, expect=False)
        self.assertEqual(val["status"], "PASS", val["errors"])
        # processes left to the runner: an HTTP API (1) beside a local model (5) in one task
        def http(m):
            del m["defaults"]["processes"]
            m["models"][1]["model"] = "http://127.0.0.1:9/predict"
            del m["models"][1]["flops"], m["models"][1]["params"]  # an API's cost is not known
        m = self.small_manifest(self.tmp, x=http)
        p = run("batch", m, "--out-dir", out)
        self.assertEqual(p.returncode, 1)
        self.assertIn("processes is 3 for model 'a' but 1 for model 'b'", p.stderr)  # 5 capped at repeats 3

    def predicted_processes(self, model, repeats, env):
        """The worker processes batch's same-work check predicts for `model` (a models[]
        entry, named "k"): beside a model "ref" of 7 explicit processes in one task, batch
        either refuses, naming k's number, or accepts (k's number is then ref's, 7 capped at
        the repeats)."""
        m = {"schema": "rpxprof.manifest/1",
             "defaults": {"warmup": 0, "repeats": repeats, "precision": "fp32"},
             "tasks": {"t": {"inputs": "frame.npz", "unit": "frame"}},
             "models": [dict(model, name="k", tasks=["t"]),
                        {"name": "ref", "model": "rpxprof-demo:demo_noop", "tasks": ["t"],
                         "processes": 7}]}
        path = self.path("pre.json")
        save(path, m)
        # --shard 1/2: the check covers the whole manifest, and only ref's job would run
        p = run("batch", path, "--out-dir", self.path("pre-out"), "-q", "--shard", "1/2", env=env)
        needle = "processes is "
        if p.returncode == 1 and needle in p.stderr:
            self.assertIn("for model 'k' but %d for model 'ref'" % min(7, repeats), p.stderr)
            return int(p.stderr.split(needle)[1].split()[0])
        self.assertEqual(p.returncode, 0, p.stderr)
        return min(7, repeats)

    def used_processes(self, model, repeats, env):
        """The worker processes the runner then uses for `model` alone in a batch."""
        m = {"schema": "rpxprof.manifest/1",
             "defaults": {"warmup": 0, "repeats": repeats, "precision": "fp32"},
             "tasks": {"t": {"inputs": "frame.npz", "unit": "frame"}},
             "models": [dict(model, name="k", tasks=["t"])]}
        path = self.path("alone.json")
        save(path, m)
        out = self.path("alone-out")
        shutil.rmtree(out, ignore_errors=True)
        p = run("batch", path, "--out-dir", out, "-q", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return load(os.path.join(out, "t", "k.json"))["processes"]

    def test_the_pre_check_predicts_the_processes_the_runner_uses(self):
        """One rule (rpx_runner_processes) for the runner and batch's same-work check: for
        every kind of job the manifest can express, the number the check compares is the
        number the runner then uses."""
        from http_server import HttpTestServer
        make_inputs(self.tmp)
        pymodels = os.path.join(SOURCE, "tests", "models", "python")
        env = {"PYTHONPATH": pymodels, "RPX_TEST_BUSY_NS": "1000"}
        with HttpTestServer() as srv:
            kinds = [("demo shared object", {"model": "rpxprof-demo:demo_noop"}, 7, 5),
                     ("shared object", {"model": os.path.abspath(MODELS) + ":busywait"}, 7, 5),
                     ("http", {"model": srv.url("/depth")}, 7, 1),
                     ("explicit processes", {"model": "rpxprof-demo:demo_noop", "processes": 3}, 7, 3),
                     ("explicit processes, http", {"model": srv.url("/depth"), "processes": 2}, 7, 2),
                     ("fewer repeats than processes", {"model": "rpxprof-demo:demo_noop"}, 2, 2)]
            if os.path.exists(os.path.join(os.environ.get("RPX_BUILD", "build"),
                                           "librpxprof-python.so")):
                kinds.append(("python", {"model": "rpx_pymodels:noop"}, 7, 5))
            for what, model, repeats, want in kinds:
                with self.subTest(what):
                    predicted = self.predicted_processes(model, repeats, env)
                    self.assertEqual(predicted, want)
                    self.assertEqual(self.used_processes(model, repeats, env), predicted)
        # --gpu-time traces one process's kernels: the runner uses 1 (it needs a GPU to run)
        for where in ("model", "defaults"):
            with self.subTest("gpu_time in " + where):
                model = {"model": "rpxprof-demo:demo_noop", "device": "cuda"}
                if where == "model":
                    model["gpu_time"] = True
                m = {"schema": "rpxprof.manifest/1",
                     "defaults": {"warmup": 0, "repeats": 7, "device": "cuda"},
                     "tasks": {"t": {"inputs": "frame.npz", "unit": "frame"}},
                     "models": [dict(model, name="k", tasks=["t"]),
                                {"name": "ref", "model": "rpxprof-demo:demo_noop", "tasks": ["t"]}]}
                if where == "defaults":
                    m["defaults"]["gpu_time"] = True
                    m["models"][1]["gpu_time"] = False
                save(self.path("g.json"), m)
                p = run("batch", self.path("g.json"), "--out-dir", self.path("g-out"))
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("task 't': processes is 1 for model 'k' but 5 for model 'ref'",
                              p.stderr)
                self.assertFalse(os.path.exists(self.path("g-out")))
        # and the manifest refuses what --gpu-time refuses on the command line
        for change, needle in (({"device": "cpu"}, "models[0] (task 't'): gpu_time needs device "
                                                   "cuda (it traces GPU kernels)"),
                               ({"processes": 2}, "models[0] (task 't'): gpu_time traces the "
                                                  "kernels of one process; give processes 1"),
                               ({"gpu_time": "yes"}, "models[0].gpu_time: has the wrong type: "
                                                     "expected true or false, got a string")):
            with self.subTest(str(change)):
                m = {"schema": "rpxprof.manifest/1", "defaults": {"device": "cuda"},
                     "tasks": {"t": {"inputs": "frame.npz", "unit": "frame"}},
                     "models": [dict({"name": "k", "model": "rpxprof-demo:demo_noop",
                                      "tasks": ["t"], "gpu_time": True}, **change)]}
                save(self.path("g.json"), m)
                p = run("batch", self.path("g.json"), "--out-dir", self.path("g-out"))
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn(needle, p.stderr)

    def test_trailing_slashes_never_doubled(self):
        m = self.small_manifest(self.tmp, x=lambda m: m["tasks"]["pose"].__setitem__("inputs", "./pairs//"))
        os.makedirs(self.path("pairs"))
        shutil.copy(self.path("pair.npz"), self.path("pairs", "p1.npz"))
        shutil.copy(self.path("pair.npz"), self.path("pairs", "p2.npz"))
        out = self.path("out") + "//"
        p = run("batch", self.path("small.json").replace(self.tmp, self.tmp + "/"), "--out-dir", out, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("//", p.stdout + p.stderr)
        self.assertIn("reports in " + self.path("out") + "\n", p.stdout)
        def strings(v):
            if isinstance(v, dict):
                return sum((strings(x) for x in v.values()), [])
            return sum((strings(x) for x in v), []) if isinstance(v, list) else [v] if isinstance(v, str) else []
        for rel in reports(self.path("out")):
            r = load(self.path("out", rel))
            self.assertEqual(r.pop("manifest_path"), self.tmp + "//small.json")   # as given
            self.assertEqual([x for x in strings(r) if "//" in x.replace("://", "")], [], rel)
        self.assertEqual(load(self.path("out", "pose", "a.json"))["inputs_file"],
                         [self.path("pairs", "p1.npz"), self.path("pairs", "p2.npz")])
        # aggregate's messages name the reports without a doubled slash
        os.unlink(self.path("out", "pose", "b.json"))
        p = run("aggregate", out, "--out-dir", self.path("s") + "/", "--expect", m)
        self.assertEqual(p.returncode, 1)
        self.assertIn("see %s/validation.json" % self.path("s"), p.stdout)
        text = p.stdout + p.stderr + open(self.path("s", "validation.json")).read()
        self.assertIn("pose", text)
        self.assertNotIn("//", text)

    def test_sigterm_stops_after_the_job_in_progress(self):
        from common import BIN
        if not os.path.exists(MODELS):
            self.skipTest(f"{MODELS} not built")
        make_inputs(self.tmp)
        # busywait: 1 ms a call, so the interrupted report stays small
        m = manifest(self.tmp, repeats=100_000, name="slow.json",
                     extra_models=[{"name": "a-busy", "model": os.path.abspath(MODELS) + ":busywait",
                                    "tasks": ["image_depth"]}])
        with open(m) as f:
            mm = json.load(f)
        mm["models"].insert(0, mm["models"].pop())   # the busy model runs first
        save(m, mm)
        out = self.path("out")
        p = subprocess.Popen([BIN, "batch", m, "--out-dir", out], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        import time
        time.sleep(1.5)
        p.terminate()   # to batch only: it tells the running job
        stdout, stderr = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 143, stderr)  # SIGTERM: 143 as errors.md says (issue 37)
        self.assertIn("interrupted; rerun with --resume", stderr)
        self.assertEqual(reports(out), ["image_depth/a-busy.json"])
        r = load(os.path.join(out, "image_depth", "a-busy.json"))
        validate_profile(r)
        self.assertIn(r["status"], ("interrupted", "failed"))
        self.assertEqual(r["task"], "image_depth")
        if r["status"] == "interrupted":
            self.assertGreater(r["measured_calls"], 0)
            self.assertIn("0 complete, 0 failed, 0 skipped, 1 interrupted", stdout)

    def test_bad_manifests(self):
        def bad(obj, *needles):
            path = self.path("bad.json")
            with open(path, "w") as f:
                f.write(obj if isinstance(obj, str) else json.dumps(obj))
            p = run("batch", path, "--out-dir", self.path("o"))
            self.assertEqual(p.returncode, 1, p.stderr)
            for n in (path, *needles):
                self.assertIn(n, p.stderr)
            self.assertFalse(os.path.exists(self.path("o")))
        good = load(self.manifest)
        bad("{", "fix the JSON syntax")
        m = copy.deepcopy(good); m["schema"] = "x"
        bad(m, "schema", "rpxprof.manifest/1")
        m = copy.deepcopy(good); m["models"][0]["tasks"] = ["nope"]
        bad(m, "models[0].tasks[0]", "'nope' is not a task")
        m = copy.deepcopy(good); del m["tasks"]["pose"]["inputs"]
        bad(m, "tasks.pose.inputs", "missing")
        m = copy.deepcopy(good); m["models"][1]["name"] = "demo-depth"
        bad(m, "models[1].name", "unique")
        m = copy.deepcopy(good); m["defaults"]["repeats"] = 0
        bad(m, "defaults.repeats", "give a whole number from 1 to 10000000")
        m = copy.deepcopy(good); m["defaults"]["device"] = "tpu"
        bad(m, "defaults.device", "cpu")
        m = copy.deepcopy(good); m["models"][0]["name"] = "a/b"
        bad(m, "models[0].name", "no '/'")

    def test_manifest_of_the_brief_is_valid(self):
        m = {"schema": "rpxprof.manifest/1",
             "defaults": {"warmup": 10, "repeats": 1000, "device": "cuda", "precision": "fp16"},
             "tasks": {"image_depth": {"inputs": "scene049_frame.npz", "unit": "frame"},
                       "pose": {"inputs": "scene049_pair.npz", "unit": "pair"},
                       "video_depth": {"inputs": "scene049_clip.npz", "unit": "clip", "meta": {"clip_length": 250}}},
             "models": [{"name": "demo-depth", "model": "rpxprof-demo:demo_depth", "tasks": ["image_depth"]},
                        {"name": "my-net", "model": "./libmynet.so:predict", "tasks": ["image_depth", "video_depth"],
                         "cost": "mynet.onnx", "precision": "bf16"}]}
        validate(m, "manifest.json")
        validate(load(self.manifest), "manifest.json")
        os.makedirs(self.path("sub"))
        save(self.path("sub", "m.json"), m)
        # The jobs start (and fail: no inputs here, no GPU needed to see that); each gets a failed report
        # naming the resolved paths.
        p = run("batch", self.path("sub", "m.json"), "--out-dir", self.path("o"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("0 complete, 3 failed", p.stdout)
        r = load(self.path("o", "video_depth", "my-net.json"))
        validate_profile(r)
        self.assertEqual(r["model_callable"], self.path("sub", "libmynet.so") + ":predict")
        self.assertEqual(r["precision"], "bf16")
        self.assertEqual(r["inputs_file"], self.path("sub", "scene049_clip.npz"))
        self.assertEqual(r["metadata"], {"clip_length": 250})

    # --- aggregate -------------------------------------------------------------
    def test_aggregate_pass(self):
        p, val, agg = self.aggregate(self.out)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr + json.dumps(val))
        self.assertEqual(val["status"], "PASS")
        self.assertEqual((val["expected_models"], val["profiles_found"], val["errors"]), (6, 6, []))
        with open(os.path.join(agg, "summary.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["task"], r["model"]) for r in rows],
                         [tuple(x[:-5].split("/")) for x in reports(self.out)])
        for r in rows:
            rep = load(os.path.join(self.out, r["task"], r["model"] + ".json"))
            # rounded to the digits its interval justifies (tests/cli/test_aggregate_ci.py)
            self.assert_rounded(r["p50_ms"], rep["latency"]["p50_ms"])
            self.assertEqual(float(r["flops"]), rep["efficiency"]["flops"])
            self.assertEqual(r["repeats"], "50")
            self.assertEqual(r["cuda_peak_mb"], "")      # unknown: empty, never 0
            self.assertEqual(r["gpu_name"], "")
            if r["task"] == "video_depth":
                self.assert_rounded(r["per_frame_p50_ms"], rep["realtime_budget"]["per_frame_ms"])
            else:
                self.assertEqual(r["per_frame_p50_ms"], "")
        with open(os.path.join(agg, "summary.md")) as f:
            md = f.read()
        self.assertIn("| video_depth | demo-video |", md)
        self.assertIn("n/a", md)
        self.assertNotIn("| 0 |", md)
        root = ET.parse(os.path.join(agg, "figure.svg")).getroot()
        self.assertEqual(len([g for g in root.iter(SVG + "g") if g.get("id", "").startswith("panel-")
                              and g.get("id").count("-") == 1]), 3)

    def assert_rounded(self, cell, value):
        """cell is value rounded to its last digit shown."""
        last = 10.0 ** -len(cell.split(".")[1]) if "." in cell else 1.0
        self.assertLessEqual(abs(float(cell) - value), last / 2 * (1 + 1e-9), (cell, value))

    def test_aggregate_different_inputs_hash(self):
        out = self.copy_out()
        p = os.path.join(out, "pose", "demo-pose.json")
        r = load(p); r["inputs_sha256"] = "0" * 64; save(p, r)
        self.assert_fail(out, "inputs_sha256 (same task, different inputs) differs")
        val = load(self.path("agg", "validation.json"))
        e = [e for e in val["errors"] if "inputs_sha256" in e][0]
        self.assertIn("0" * 64, e)
        self.assertIn("demo-pose.json", e)
        self.assertIn("demo-noop.json", e)

    def test_aggregate_truncated_report(self):
        out = self.copy_out()
        p = os.path.join(out, "image_depth", "demo-depth.json")
        with open(p) as f:
            data = f.read()
        with open(p, "w") as f:
            f.write(data[:len(data) // 2])
        self.assert_fail(out, "demo-depth.json: not valid JSON")

    def test_aggregate_truncated_samples(self):
        out = self.copy_out()
        p = os.path.join(out, "image_depth", "demo-depth.json")
        r = load(p); r["latency_samples_ms"] = r["latency_samples_ms"][:-1]; save(p, r)
        self.assert_fail(out, "measured_calls is 50 but latency_samples_ms has 49 samples")

    def test_aggregate_tampered_percentile(self):
        out = self.copy_out()
        p = os.path.join(out, "video_depth", "demo-video.json")
        r = load(p); r["latency"]["p95_ms"] *= 1.0000001; save(p, r)
        self.assert_fail(out, "latency.p95_ms is")
        # the untouched copy passes: the tolerance is not loose enough to hide a change
        p2, val, _ = self.aggregate(self.out)
        self.assertEqual(val["status"], "PASS")

    def test_aggregate_missing_and_unexpected(self):
        out = self.copy_out()
        os.remove(os.path.join(out, "pose", "demo-pose.json"))
        self.assert_fail(out, "expected report pose/demo-pose.json is missing")
        shutil.copy(os.path.join(out, "pose", "demo-noop.json"), os.path.join(out, "pose", "extra.json"))
        val = self.assert_fail(out, "unexpected report")
        self.assertTrue(any("report model_name 'demo-noop' does not match its file name 'extra'" in e
                            for e in val["errors"]), val["errors"])
        # without --expect, the missing one is not noticed, but the misplaced one is
        p, val, _ = self.aggregate(out, expect=False)
        self.assertIsNone(val["expected_models"])
        self.assertFalse(any("missing" in e for e in val["errors"]))

    def test_aggregate_different_device_and_machine(self):
        out = self.copy_out()
        p = os.path.join(out, "pose", "demo-pose.json")
        r = load(p); r["device"] = "cuda"; save(p, r)
        self.assert_fail(out, "device differs: cpu in")
        out2 = self.path("out2")
        shutil.copytree(self.out, out2)
        p = os.path.join(out2, "pose", "demo-pose.json")
        r = load(p)
        r["system_card"]["cpu_name"] = "Other CPU <x>"
        r["system_card"]["os"] = "Other OS"
        r["system_card"]["environment"]["CUDA_VISIBLE_DEVICES"] = "1"
        save(p, r)
        val = self.assert_fail(out2, "CPU model (system_card.cpu_name) differs")
        self.assertTrue(any("CUDA_VISIBLE_DEVICES" in e and "(unset)" in e for e in val["errors"]), val["errors"])
        self.assertTrue(any("OS (system_card.os) differs" in w for w in val["warnings"]), val["warnings"])

    def test_aggregate_same_work_metadata_and_status(self):
        out = self.copy_out()
        p = os.path.join(out, "video_depth", "demo-noop.json")
        r = load(p); r["metadata"]["clip_length"] = 5; save(p, r)
        self.assert_fail(out, "metadata differs")
        out2 = self.path("o2"); shutil.copytree(self.out, out2)
        p = os.path.join(out2, "video_depth", "demo-noop.json")
        r = load(p); r["status"] = "interrupted"; save(p, r)
        self.assert_fail(out2, "status is 'interrupted', not complete")

    def test_aggregate_flops_required(self):
        out = self.copy_out()
        p = os.path.join(out, "pose", "demo-pose.json")
        r = load(p); r["efficiency"]["flops"] = None; save(p, r)
        self.assert_fail(out, "efficiency.flops is unavailable")
        p2, val, _ = self.aggregate(out, extra=["--allow-incomplete-flops"])
        self.assertEqual(p2.returncode, 0, val)
        self.assertTrue(any("efficiency.flops is unavailable" in w for w in val["warnings"]))

    def test_aggregate_usage(self):
        self.assertEqual(run("aggregate", "--out-dir", self.path("a")).returncode, 2)
        self.assertEqual(run("aggregate", self.out).returncode, 2)
        p = run("aggregate", self.path("nope"), "--out-dir", self.path("a"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("not a folder", p.stderr)

    # --- plot ------------------------------------------------------------------
    def check_svg(self, path):
        root = ET.parse(path).getroot()
        self.assertEqual(root.tag, SVG + "svg")
        ids = [e.get("id") for e in root.iter() if e.get("id")]
        self.assertEqual(len(ids), len(set(ids)), "ids are unique")
        for tag in ("circle", "rect", "path"):
            for e in root.iter(SVG + tag):
                if e.get("id") == "background":
                    continue
                t = e.find(SVG + "title")
                self.assertIsNotNone(t, f"{tag} {e.get('id')} has a <title>")
        return root

    def render(self, svg):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            self.fail("chromium is not installed (scripts/setup.sh installs it)")
        png = svg[:-4] + ".png"
        prof = tempfile.mkdtemp(prefix="rpxchrome-")
        try:
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            "--no-first-run", f"--user-data-dir={prof}", f"--screenshot={png}",
                            "--window-size=1200,800", "file://" + os.path.abspath(svg)],
                           capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
                           # its crash reports and dconf cache go under HOME and XDG_*: this
                           # test's folder, never the caller's (which may be read-only)
                           env=dict(os.environ, HOME=prof, XDG_CONFIG_HOME=os.path.join(prof, "config"),
                                    XDG_CACHE_HOME=os.path.join(prof, "cache")))
        finally:
            shutil.rmtree(prof, ignore_errors=True)
        self.assertTrue(os.path.exists(png), "chromium wrote no screenshot")
        w, h, distinct = png_nonblank(png)
        self.assertEqual((w, h), (1200, 800))
        self.assertGreater(distinct, 16, "the rendered figure is blank")
        return png

    def test_plot_reports(self):
        files = [os.path.join(self.out, rel) for rel in reports(self.out)]
        svg = self.path("fig.svg")
        p = run("plot", *files, "-o", svg, check=0)
        root = self.check_svg(svg)
        texts = " ".join("".join(t.itertext()) for t in root.iter(SVG + "text"))
        for s in ("image_depth", "video_depth", "demo-video", "latency per clip (ms", "frames 4x48x64x3",
                  "device: cpu", "whiskers: p5–p95"):
            self.assertIn(s, texts)
        titles = [t.text for t in root.iter(SVG + "title")]
        r = load(files[0])
        self.assertIn(f"call 0: {r['latency_samples_ms'][0]!r} ms", titles)
        self.render(svg)
        # the example figure in docs/ is what this command draws
        self.assertTrue(ET.parse(os.path.join(SOURCE, "docs", "figure-example.svg")).getroot().tag == SVG + "svg")

    def test_plot_log_axis_escaping_and_timeline(self):
        r = load(os.path.join(self.out, "image_depth", "demo-depth.json"))
        r["model_name"] = "net <b>&\"it's\""
        r["latency_samples_ms"] = [1.0 + i % 7 for i in range(40)] + [100.0]
        src = self.path("r.json"); save(src, r)
        svg = self.path("log.svg")
        run("plot", src, "-o", svg, check=0)
        root = self.check_svg(svg)
        texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
        self.assertIn("net <b>&\"it's\"", texts)
        self.assertTrue(any("log scale" in t for t in texts))
        r["latency_samples_ms"] = [1.0 + i % 7 for i in range(41)]
        save(src, r)
        run("plot", src, "-o", svg, check=0)
        self.assertFalse(any("log scale" in "".join(t.itertext()) for t in self.check_svg(svg).iter(SVG + "text")))
        tl = self.path("tl.svg")
        run("plot", src, "-o", tl, "--timeline", check=0)
        root = self.check_svg(tl)
        self.assertEqual(len([c for c in root.iter(SVG + "circle")]), 41)
        self.assertIn("call index (warmup excluded)", " ".join("".join(t.itertext()) for t in root.iter(SVG + "text")))
        self.render(tl)
        self.assertEqual(run("plot", src, src, "-o", tl, "--timeline").returncode, 2)
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            f.write("{")
        p = run("plot", bad, "-o", tl)
        self.assertEqual(p.returncode, 1)
        self.assertIn("bad.json", p.stderr)


if __name__ == "__main__":
    main()
