"""Output files of `rpxprof plot`, `rpxprof aggregate` and `rpxprof batch` never
cost the user a file (issue 15, items 2, 3 and 5 for batch): a device, a FIFO
or a symbolic link is not replaced, a file rpxprof did not write is refused
unless --force, the files a command reads are refused even with --force, an
unwritable place is refused before any work, no temporary file is left behind,
and killing `rpxprof batch` with SIGKILL does not orphan its running job."""
import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time

from common import BIN, BUILD, MODELS, TempDirTest, alive, children, main, run, save_matmul_onnx

MARK = "<!-- rpxprof figure -->"


PLUGINS = {k: os.path.join(BUILD, f"librpxprof-{k}.so") for k in ("python", "http", "demo")}
DEAD_URL = "http://127.0.0.1:9/x"  # never reached: the output is refused first


def make_manifest(d, name="m.json", models=("a", "b"), repeats=5, model=None):
    run("inputs", "make", os.path.join(d, "f.npz"), "rgb=8x8x3:uint8", "--seed", "1", check=0)
    m = {"schema": "rpxprof.manifest/1",
         "defaults": {"warmup": 1, "repeats": repeats, "device": "cpu", "precision": "fp32"},
         "tasks": {"t": {"inputs": "f.npz", "unit": "frame"}},
         "models": [{"name": n, "model": model or "rpxprof-demo:demo_noop", "tasks": ["t"],
                     "flops": 1000, "params": 1} for n in models]}
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def load_report(path):
    with open(path) as f:
        return json.load(f)


def temps(d):
    """Temporary files left anywhere under d."""
    found = []
    for root, _, files in os.walk(d):
        found += [os.path.join(root, f) for f in files if ".tmp." in f]
    return found


def text(path):
    with open(path, errors="replace") as f:
        return f.read()


def write(path, s, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(s)
    if mode is not None:
        os.chmod(path, mode)


def as_nobody():
    """The command prefix that runs as an unprivileged user, or None."""
    for pre in (["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"],
                ["runuser", "-u", "nobody", "--"]):
        if shutil.which(pre[0]) is None:
            continue
        try:
            p = subprocess.run(pre + [BIN, "--version"], capture_output=True, timeout=30)
        except OSError:
            continue
        if p.returncode == 0:
            return pre
    return None


class OutputsTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls._ctmp = tempfile.TemporaryDirectory(prefix="rpxout-")
        cls.d = cls._ctmp.name
        cls.manifest = make_manifest(cls.d)
        cls.out = os.path.join(cls.d, "out")
        p = run("batch", cls.manifest, "--out-dir", cls.out, "-q")
        assert p.returncode == 0, p.stdout + p.stderr
        cls.report = os.path.join(cls.out, "t", "a.json")

    @classmethod
    def tearDownClass(cls):
        cls._ctmp.cleanup()

    def setUp(self):
        super().setUp()
        os.chmod(self.tmp, 0o755)   # readable by the unprivileged user of the read-only tests

    def assertNoTemps(self):
        self.assertEqual(temps(self.tmp), [])
        self.assertEqual(temps(self.d), [])

    def refused(self, p, *needles, code=1):
        self.assertEqual(p.returncode, code, p.stdout + p.stderr)
        for n in needles:
            self.assertIn(n, p.stderr)
        self.assertNoTemps()

    def report_copy(self):
        dst = self.path("r.json")
        shutil.copy(self.report, dst)
        return dst

    # --- plot ----------------------------------------------------------------
    def test_plot_new_and_own_figure_replaced(self):
        fig = self.path("figs", "deep", "f.svg")
        run("plot", self.report, "-o", fig, check=0)
        self.assertIn(MARK, text(fig)[:200])
        os.chmod(fig, 0o600)
        run("plot", self.report, "-o", fig, "--timeline", check=0)   # its own figure
        self.assertEqual(stat.S_IMODE(os.stat(fig).st_mode), 0o600)  # mode kept
        self.assertNoTemps()

    def test_plot_unrelated_file_refused_unless_forced(self):
        f = self.path("important.txt")
        write(f, "my notes\n")
        p = run("plot", self.report, "-o", f)
        self.refused(p, f"{f}: exists and is not a file rpxprof wrote (first bytes: \"my notes\\n\")",
                     "pass --force")
        self.assertEqual(text(f), "my notes\n")
        # an SVG of someone else's is not ours either
        other = self.path("other.svg")
        write(other, "<svg xmlns='http://www.w3.org/2000/svg'/>\n")
        self.refused(run("plot", self.report, "-o", other), "not a file rpxprof wrote")
        # mode 444: refused, even when it is rpxprof's own figure
        ro = self.path("ro.svg")
        run("plot", self.report, "-o", ro, check=0)
        os.chmod(ro, 0o444)
        self.refused(run("plot", self.report, "-o", ro), "read-only (mode 0444)")
        os.chmod(f, 0o444)
        self.refused(run("plot", self.report, "-o", f), "read-only (mode 0444)")
        self.assertEqual(text(f), "my notes\n")
        run("plot", self.report, "-o", f, "--force", check=0)
        self.assertIn(MARK, text(f))
        self.assertNoTemps()

    def test_plot_never_replaces_the_report_it_reads(self):
        r = self.report_copy()
        before = text(r)
        os.symlink(r, self.path("link.json"))
        for target in (r, self.path("link.json")):
            for force in ((), ("--force",)):
                p = run("plot", r, "-o", target, *force)
                # two of the command's own arguments name one file: a bad command line
                self.refused(p, f"--output {target}: is ",
                             "this command reads; rpxprof never replaces it, even with --force",
                             code=2)
                self.assertEqual(text(r), before)
        self.assertTrue(os.path.islink(self.path("link.json")))

    def devices(self):
        """(null, full): private copies of /dev/null and /dev/full when this user
        can make device nodes, so that a regression replaces a node of the test's
        own folder first, and the real ones only once those passed."""
        try:
            os.mknod(self.path("null"), stat.S_IFCHR | 0o666, os.makedev(1, 3))
            os.mknod(self.path("full"), stat.S_IFCHR | 0o666, os.makedev(1, 7))
            with open(self.path("null"), "w") as f:
                f.write("x")
            return [(self.path("null"), self.path("full")), ("/dev/null", "/dev/full")]
        except OSError:
            return [("/dev/null", "/dev/full")]

    def test_plot_devices_and_fifos_are_streamed_to(self):
        for null, full in self.devices():
            p = run("plot", self.report, "-o", null, check=0)
            self.assertTrue(stat.S_ISCHR(os.stat(null).st_mode), null)
            p = run("plot", self.report, "-o", full)
            self.assertEqual(p.returncode, 1)
            self.assertIn(f"{full}: write failed: No space left on device", p.stderr)
            self.assertTrue(stat.S_ISCHR(os.stat(full).st_mode), full)
        p = run("plot", self.report, "-o", "/dev/stdout", check=0)
        self.assertTrue(p.stdout.startswith("<?xml"), p.stdout[:100])
        self.assertTrue(p.stdout.rstrip().endswith("</svg>"))
        p = run("plot", self.report, "-o", "-", check=0)
        self.assertTrue(p.stdout.startswith("<?xml"))
        # `-o /dev/stdout > file`: written through the redirection
        with open(self.path("redirected.svg"), "w") as f:
            q = subprocess.run([BIN, "plot", self.report, "-o", "/dev/stdout"], stdout=f,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(q.returncode, 0, q.stderr)
        self.assertIn(MARK, text(self.path("redirected.svg")))
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        got = []
        def reader():
            with open(fifo) as f:
                got.append(f.read())
        t = threading.Thread(target=reader)
        t.start()
        p = run("plot", self.report, "-o", fifo, timeout=60)
        t.join(60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        self.assertIn(MARK, got[0])
        self.assertNoTemps()

    def test_plot_symlink_followed(self):
        real = self.path("real", "f.svg")
        run("plot", self.report, "-o", real, check=0)
        os.symlink("real/f.svg", self.path("link.svg"))
        os.utime(real, (0, 0))
        run("plot", self.report, "-o", self.path("link.svg"), "--timeline", check=0)
        self.assertTrue(os.path.islink(self.path("link.svg")))
        self.assertGreater(os.stat(real).st_mtime, 0)   # the target was replaced
        self.assertIn("timeline", text(real).lower())
        # a dangling link: its target is made
        os.symlink("real/new.svg", self.path("dangling.svg"))
        run("plot", self.report, "-o", self.path("dangling.svg"), check=0)
        self.assertTrue(os.path.islink(self.path("dangling.svg")))
        self.assertIn(MARK, text(self.path("real", "new.svg")))
        # a link to a file rpxprof did not write: refused, naming the target
        write(self.path("real", "notes.txt"), "notes")
        os.symlink("real/notes.txt", self.path("notes.svg"))
        self.refused(run("plot", self.report, "-o", self.path("notes.svg")), "(a link to ")
        self.assertEqual(text(self.path("real", "notes.txt")), "notes")
        self.assertNoTemps()

    def test_plot_folder_refused(self):
        os.mkdir(self.path("dir"))
        self.refused(run("plot", self.report, "-o", self.path("dir"), "--force"), "is a folder")

    def test_read_only_folder_refused_before_any_work(self):
        pre = as_nobody()
        if pre is None:
            self.skipTest("cannot run as an unprivileged user (setpriv/runuser with 'nobody')")
        # the caller's TMPDIR (or a folder above it) may be private: then 'nobody' is
        # refused on the way to the folder, not by it, and this test says so
        if subprocess.run(pre + ["test", "-x", self.tmp], capture_output=True, timeout=30).returncode != 0:
            self.skipTest(f"'nobody' cannot reach {self.tmp}: TMPDIR or a folder above it is private")
        ro = self.path("ro")
        os.mkdir(ro, 0o555)
        r = self.report_copy()
        os.chmod(r, 0o644)
        # plot: the output is checked before the reports are read (the missing
        # report would otherwise be the error)
        p = subprocess.run(pre + [BIN, "plot", self.path("missing.json"), "-o", os.path.join(ro, "f.svg")],
                           capture_output=True, text=True, timeout=60)
        self.refused(p, f"{ro}/f.svg: cannot create a file in the folder {ro}: Permission denied",
                     "choose a folder you can write")
        # aggregate: before any report is read
        p = subprocess.run(pre + [BIN, "aggregate", self.path("missing"), "--out-dir", os.path.join(ro, "agg")],
                           capture_output=True, text=True, timeout=60)
        self.refused(p, f"{ro}/agg", "Permission denied", "choose a")
        # batch: before the first job
        man = make_manifest(self.tmp)
        os.chmod(man, 0o644)
        os.chmod(self.path("f.npz"), 0o644)
        p = subprocess.run(pre + [BIN, "batch", man, "--out-dir", ro],
                           capture_output=True, text=True, timeout=120)
        self.refused(p, f"{ro}/t", "Permission denied", "choose a")
        self.assertNotIn("t/a failed", p.stderr)   # no job was started
        self.assertNotIn("1 complete", p.stdout)
        self.assertEqual(os.listdir(ro), [])

    # --- aggregate -----------------------------------------------------------
    def agg_files(self, agg):
        return {n: text(os.path.join(agg, n)) for n in sorted(os.listdir(agg))}

    def test_aggregate_replaces_its_own_folder(self):
        agg = self.path("agg")
        run("aggregate", self.out, "--out-dir", agg, "-q", check=0)
        self.assertIn(MARK, text(os.path.join(agg, "figure.svg")))
        run("aggregate", self.out, "--out-dir", agg, "-q", check=0)
        # a figure of an older rpxprof (no mark) in its folder is replaced too
        write(os.path.join(agg, "figure.svg"), "<svg/>")
        run("aggregate", self.out, "--out-dir", agg, "-q", check=0)
        self.assertIn(MARK, text(os.path.join(agg, "figure.svg")))
        self.assertNoTemps()

    def test_aggregate_refuses_a_folder_of_other_files(self):
        agg = self.path("results")
        write(os.path.join(agg, "summary.csv"), "name,score\nalice,3\n")
        p = run("aggregate", self.out, "--out-dir", agg)
        self.refused(p, f"{agg}/summary.csv: exists and is not a file rpxprof wrote (first bytes: \"name,score\\nalice,3\\n\")",
                     "pass --force")
        self.assertEqual(os.listdir(agg), ["summary.csv"])   # nothing written at all
        self.assertEqual(text(os.path.join(agg, "summary.csv")), "name,score\nalice,3\n")
        # a validation.json that is not rpxprof's does not make the folder ours
        write(os.path.join(agg, "validation.json"), '{"mine": true}\n')
        self.refused(run("aggregate", self.out, "--out-dir", agg), "summary.csv: exists and is not")
        run("aggregate", self.out, "--out-dir", agg, "--force", "-q", check=0)
        self.assertTrue(text(os.path.join(agg, "summary.csv")).startswith("task,model"))
        self.assertNoTemps()

    def test_aggregate_out_dir_not_a_folder(self):
        f = self.path("file")
        write(f, "x")
        self.refused(run("aggregate", self.out, "--out-dir", f), f"{f}: is not a folder")
        null = self.path("null")
        try:
            os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except OSError:
            null = "/dev/null"
        self.refused(run("aggregate", self.out, "--out-dir", null, "--force"), "is not a folder")
        self.assertTrue(stat.S_ISCHR(os.stat(null).st_mode))

    def test_aggregate_never_replaces_what_it_reads(self):
        agg = self.path("agg")
        man = os.path.join(agg, "validation.json")
        os.makedirs(agg)
        shutil.copy(self.manifest, man)
        before = text(man)
        p = run("aggregate", self.out, "--out-dir", agg, "--expect", man, "--force")
        self.refused(p, f"--out-dir {man}: is one of the files this command reads",
                     "even with --force", code=2)
        self.assertEqual(text(man), before)

    def test_aggregate_symlinked_output_followed(self):
        agg = self.path("agg")
        run("aggregate", self.out, "--out-dir", agg, "-q", check=0)
        os.rename(os.path.join(agg, "summary.md"), self.path("kept.md"))
        os.symlink(self.path("kept.md"), os.path.join(agg, "summary.md"))
        run("aggregate", self.out, "--out-dir", agg, "-q", check=0)
        self.assertTrue(os.path.islink(os.path.join(agg, "summary.md")))
        self.assertNoTemps()

    # --- batch ---------------------------------------------------------------
    def test_batch_reruns_into_its_own_folder(self):
        out = self.path("out")
        shutil.copytree(self.out, out)
        a = os.path.join(out, "t", "a.json")
        with open(a) as f:
            r = json.load(f)
        r["stale"] = True
        with open(a, "w") as f:
            json.dump(r, f)
        p = run("batch", self.manifest, "--out-dir", out, "-q", check=0)
        self.assertIn("2 complete", p.stdout)
        with open(a) as f:
            r = json.load(f)
        self.assertNotIn("stale", r)
        self.assertEqual(r["model_name"], "a")
        self.assertNoTemps()

    def test_batch_refuses_other_files_before_the_first_job(self):
        out = self.path("out")
        write(os.path.join(out, "t", "b.json"), '{"my": "data"}\n')
        p = run("batch", self.manifest, "--out-dir", out)
        self.refused(p, f"{out}/t/b.json: exists and is not a file rpxprof wrote", "pass --force")
        self.assertEqual(sorted(os.listdir(os.path.join(out, "t"))), ["b.json"])   # job a did not run
        self.assertEqual(text(os.path.join(out, "t", "b.json")), '{"my": "data"}\n')
        # a report of another schema is not replaced either
        write(os.path.join(out, "t", "b.json"), '{"schema": "rpxprof.validation/1"}\n')
        self.refused(run("batch", self.manifest, "--out-dir", out), "schema \"rpxprof.validation/1\"")
        p = run("batch", self.manifest, "--out-dir", out, "--force", "-q", check=0)
        self.assertIn("2 complete", p.stdout)
        with open(os.path.join(out, "t", "b.json")) as f:
            self.assertEqual(json.load(f)["status"], "complete")
        self.assertNoTemps()

    def test_batch_never_replaces_its_manifest_or_inputs(self):
        out = self.path("out")
        os.makedirs(os.path.join(out, "t"))
        # the manifest sits where job t/a would write its report
        man = make_manifest(os.path.join(out, "t"), name="a.json")
        before = text(man)
        p = run("batch", man, "--out-dir", out, "--force")
        self.refused(p, f"--out-dir {out}/t/a.json: is one of the files this command reads",
                     "even with --force", code=2)
        self.assertEqual(text(man), before)
        # an inputs file there: the same
        d = self.path("in")
        os.makedirs(d)
        man2 = make_manifest(d, models=("f",))
        with open(man2) as f:
            m = json.load(f)
        m["tasks"]["t"]["inputs"] = os.path.join(out, "t", "f.json")
        shutil.copy(os.path.join(d, "f.npz"), os.path.join(out, "t", "f.json"))
        with open(man2, "w") as f:
            json.dump(m, f)
        p = run("batch", man2, "--out-dir", out, "--force")
        self.refused(p, f"{out}/t/f.json: is one of the files this command reads", code=2)
        with open(os.path.join(out, "t", "f.json"), "rb") as f:
            self.assertTrue(f.read().startswith(b"PK"))

    def test_batch_out_dir_not_a_folder(self):
        f = self.path("file")
        write(f, "x")
        self.refused(run("batch", self.manifest, "--out-dir", f), f"{f}: is not a folder")

    def test_kill_9_of_batch_leaves_no_job_running(self):
        if not os.path.exists(MODELS):
            self.skipTest(f"{MODELS} not built")
        man = make_manifest(self.tmp, models=("busy",), repeats=10_000_000,
                            model=os.path.abspath(MODELS) + ":busywait")
        p = subprocess.Popen([BIN, "batch", man, "--out-dir", self.path("out"), "-q"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL)

        # batch runs each job through the runner in its own process: the job's
        # worker (the model's process) is batch's child
        job = worker = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and worker is None:
            for c in children(p.pid):
                worker = c
            time.sleep(0.1)
        job = p.pid
        self.assertIsNotNone(worker, "the job started no model process")
        try:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(30)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and alive(worker):
                time.sleep(0.1)
            self.assertFalse(alive(worker), f"the model process {worker} outlived rpxprof batch")
        finally:
            for pid in (job, worker):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (OSError, TypeError):
                    pass



class ModelFilesTest(TempDirTest):
    """Issue 26 §4.1: `run --output` (and batch's reports) never replace a file the
    run resolves and reads, even with --force: the Python module as Python would
    import it, its packages' __init__.py, the packaged demo library found through
    RPX_DEMO_LIBRARY, a shared object, the target plugins, --cost, --body. The
    refusal is a bad command line (exit 2) naming the option and the file."""

    def setUp(self):
        super().setUp()
        run("inputs", "make", self.path("in.npz"), "x=4:float32", "--seed", "1")
        self.module = self.path("noop2.py")
        write(self.module, "def f(x):\n    return None\n")
        write(self.path("pkg", "__init__.py"), "")
        write(self.path("pkg", "sub.py"), "def f(x):\n    return None\n")
        write(self.path("lib", "elsewhere.py"), "def f(x):\n    return None\n")

    def need(self, kind):
        if not os.path.exists(PLUGINS[kind]):
            self.skipTest(f"this build has no {PLUGINS[kind]}")

    def refused_twice(self, target, *args, env=None, cwd=None, option="--output"):
        """`run ARGS -o target`, with and without --force: exit 2, target intact."""
        with open(target, "rb") as f:
            before = f.read()
        for force in ((), ("--force",)):
            p = run("run", *args, "--warmup", "0", "--repeats", "2", "--processes", "1",
                    "-o", os.path.relpath(target, cwd) if cwd else target, *force,
                    env=env, cwd=cwd, timeout=120)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(f"{option} ", p.stderr)
            self.assertIn("this command reads; rpxprof never replaces it, even with --force",
                          p.stderr)
            with open(target, "rb") as f:
                self.assertEqual(f.read(), before, f"{target} was replaced")
        self.assertEqual(temps(self.tmp), [])
        return p

    def test_python_module_and_its_packages(self):
        self.need("python")
        env = {"PYTHONPATH": self.path("lib")}
        p = self.refused_twice(self.module, "-m", "noop2:f", "-i", "in.npz", cwd=self.tmp,
                               env=env)
        self.assertIn(f"--output noop2.py: is {os.path.realpath(self.module)}, which", p.stderr)
        for f in ("__init__.py", "sub.py"):
            self.refused_twice(self.path("pkg", f), "-m", "pkg.sub:f", "-i", "in.npz",
                               cwd=self.tmp, env=env)
        # found on PYTHONPATH, as the plugin finds it
        self.refused_twice(self.path("lib", "elsewhere.py"), "-m", "elsewhere:f", "-i",
                           "in.npz", cwd=self.tmp, env=env)
        # a file of the same name that Python would not import stays replaceable with --force
        write(self.path("other", "noop2.py"), "x = 1\n")
        p = run("run", "-m", "noop2:f", "-i", "in.npz", "--warmup", "0", "--repeats", "2",
                "--processes", "1", "-o", self.path("other", "noop2.py"), "--force", "-q",
                cwd=self.tmp, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(load_report(self.path("other", "noop2.py"))["status"], "complete")

    def test_demo_library_shared_object_and_plugins(self):
        demo = self.path("demo.so")
        shutil.copy(PLUGINS["demo"], demo)
        self.refused_twice(demo, "-m", "rpxprof-demo:demo_noop", "-i", self.path("in.npz"),
                           env={"RPX_DEMO_LIBRARY": demo})
        self.refused_twice(demo, "-m", "./demo.so:demo_noop", "-i", "in.npz", cwd=self.tmp)
        self.refused_twice(demo, "-m", "demo.so:demo_noop", "-i", "in.npz", cwd=self.tmp)
        self.need("http")
        http = self.path("http.so")
        shutil.copy(PLUGINS["http"], http)
        self.refused_twice(http, "-m", DEAD_URL, "-i", self.path("in.npz"),
                           env={"RPX_HTTP_PLUGIN": http})
        body = self.path("body.bin")
        write(body, "payload")
        self.refused_twice(body, "-m", DEAD_URL, "--body", body)
        self.need("python")
        py = self.path("py.so")
        shutil.copy(PLUGINS["python"], py)
        self.refused_twice(py, "-m", "noop2:f", "-i", "in.npz", cwd=self.tmp,
                           env={"RPX_PYTHON_PLUGIN": py})

    def test_cost_model(self):
        onnx = save_matmul_onnx(self.path("m.onnx"))
        self.refused_twice(onnx, "-m", "rpxprof-demo:demo_noop", "-i", self.path("in.npz"),
                           "--cost", onnx, "--input", "x=1x64")

    def test_gpu_spec_files(self):
        spec = self.path("lab.json")
        write(spec, json.dumps({"gpus": [{"key": "lab-gpu", "name": "Lab GPU",
                                          "memory_bandwidth_gbps": 1000,
                                          "peak_tflops": {"fp32": 50}}]}))
        self.refused_twice(spec, "-m", "rpxprof-demo:demo_noop", "-i", self.path("in.npz"),
                           "--gpu-spec", spec)
        before = text(spec)
        for force in ((), ("--force",)):
            p = run("roofline", "--gpu-spec", spec, "--gpu", "lab-gpu", "--flops", "1e9",
                    "--bytes", "1e6", "--svg", spec, *force)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(f"--svg {spec}: is one of the files this command reads", p.stderr)
            self.assertEqual(text(spec), before)

    def test_batch_never_replaces_a_model_file(self):
        self.need("python")
        out = self.path("out")
        man = make_manifest(self.tmp, models=("a",), model="noop2:f", repeats=2)
        with open(man) as f:
            m = json.load(f)
        m["tasks"]["t"]["inputs"] = "in.npz"
        with open(man, "w") as f:
            json.dump(m, f)
        os.makedirs(os.path.join(out, "t"))
        os.symlink(self.module, os.path.join(out, "t", "a.json"))
        before = text(self.module)
        p = run("batch", man, "--out-dir", out, "--force", cwd=self.tmp, timeout=120)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"--out-dir {out}/t/a.json: is {os.path.realpath(self.module)}, which this "
                      "command reads", p.stderr)
        self.assertEqual(text(self.module), before)


if __name__ == "__main__":
    main()
