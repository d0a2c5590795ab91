"""The session as a unit (issue 36 §1; docs/report.md#session, docs/statistics.md#comparability):
every run report's `session` block (its id, times, the benchmark's identity, the fingerprint
and the version under test beside it), its digests recomputed here from canonical JSON, the
identity that a rebuilt model keeps, --commit and a model in a git checkout; and the check
every comparison makes first: reports whose fingerprints differ in CPU model, core count,
precision or inputs are `incomparable` (exit 0 even with --fail-on-regression), a kernel
that differs is a note; aggregate says when its rows come from different sessions.

The comparability cases edit copies of a real report's session block, so that nothing
depends on this machine's speed."""
import copy
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess

from common import BIN, BUILD, SANITIZED, TempDirTest, main, run, validate_profile

ID = re.compile(r"^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$")
STAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$")


def digest16(value):
    """What src/session/block.c computes: SHA-256 of the canonical JSON (sorted keys,
    compact), its first 16 hex digits."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class SessionTestBase(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("x.npz")
        run("inputs", "make", self.inputs, "rgb=24x32x3:uint8=1", check=0)

    def run_model(self, model, *extra, name="r.json", cwd=None):
        out = self.path(name)
        run("run", "--model", model, "--inputs", self.inputs, "--repeats", "20", "--processes", "2",
            "--warmup", "1", "--output", out, "--quiet", *extra, check=0, cwd=cwd)
        with open(out) as f:
            return json.load(f)

    def write(self, name, report):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            json.dump(report, f)
        return p


class SessionBlockTest(SessionTestBase):
    def test_the_block_is_well_formed_and_its_digests_are_stable(self):
        a = self.run_model("rpxprof-demo:demo_depth", name="a.json")
        b = self.run_model("rpxprof-demo:demo_depth", name="b.json")
        for r in (a, b):
            validate_profile(r)
            s = r["session"]
            self.assertRegex(s["id"], ID)
            self.assertRegex(s["started"], STAMP)
            self.assertRegex(s["ended"], STAMP)
            self.assertLessEqual(s["started"], s["ended"])
            self.assertIn("not session-to-session drift", s["covers"])
            self.assertNotIn("derived", s)
            bench, fp = s["benchmark"], s["fingerprint"]
            self.assertEqual(bench["target"], "rpxprof-demo:demo_depth")
            self.assertEqual(bench["kind"], r["target_kind"])
            self.assertEqual(bench["unit"], r["unit"])
            self.assertEqual(bench["inputs_digest"], "sha256:" + r["inputs_sha256"])
            self.assertEqual(bench["work"], fp["work"])
            # the digests, recomputed from canonical JSON
            ident = {k: bench[k] for k in ("name", "target", "kind", "inputs_digest", "unit", "work")}
            self.assertEqual(bench["id"], digest16(ident))
            self.assertEqual(fp["digest"], digest16({k: fp[k] for k in ("machine", "software", "work")}))
            # the machine, from the system card
            card, m = r["system_card"], fp["machine"]
            self.assertEqual(m["cpu_model"], card["cpu"]["model_name"])
            self.assertEqual(m["microcode"], card["cpu"]["microcode"])
            self.assertEqual(m["cores"], card["cpu"]["cores"])
            self.assertEqual(m["threads_per_core"], card["cpu"]["threads_per_core"])
            self.assertEqual(m["hypervisor"], card["cpu"]["hypervisor"])
            self.assertEqual(m["kernel"], card["operating_system"]["kernel_release"])
            self.assertEqual(m["boost"], card["cpu"]["boost"])
            self.assertEqual(fp["software"]["rpxprof"], r["tool"]["version"])
            self.assertEqual(fp["work"]["precision"], r["precision"])
            # the words beside latency_ci.covers
            self.assertEqual(r["latency_ci"]["covers"], "between-process")
            self.assertIn("not session-to-session drift", r["latency_ci"]["covers_text"])
        # the same work on this machine: one benchmark, one fingerprint, two sessions
        self.assertEqual(a["session"]["benchmark"]["id"], b["session"]["benchmark"]["id"])
        self.assertEqual(a["session"]["fingerprint"]["digest"], b["session"]["fingerprint"]["digest"])
        self.assertNotEqual(a["session"]["id"], b["session"]["id"])
        # other work (precision) is another benchmark and another fingerprint
        c = self.run_model("rpxprof-demo:demo_depth", "--precision", "fp16", name="c.json")
        self.assertNotEqual(c["session"]["benchmark"]["id"], a["session"]["benchmark"]["id"])
        self.assertNotEqual(c["session"]["fingerprint"]["digest"], a["session"]["fingerprint"]["digest"])

    def test_a_rebuilt_model_keeps_its_benchmark_id(self):
        so = self.path("m.so")
        shutil.copy(os.path.join(BUILD, "librpxprof-demo.so"), so)
        a = self.run_model(so + ":demo_noop", name="a.json")
        with open(so, "ab") as f:      # a new build at the same path (the loader ignores the tail)
            f.write(b"another build")
        b = self.run_model(so + ":demo_noop", name="b.json")
        va, vb = a["session"]["version"], b["session"]["version"]
        self.assertNotEqual(va["model_sha256"], vb["model_sha256"])
        self.assertEqual(vb["model_sha256"], sha256_file(so))
        self.assertIsNone(va["module_source_sha256"])
        self.assertEqual(a["session"]["benchmark"]["id"], b["session"]["benchmark"]["id"])
        self.assertEqual(a["session"]["fingerprint"]["digest"], b["session"]["fingerprint"]["digest"])
        # outside a git checkout, and no --commit: no commit
        self.assertIsNone(va["commit"])
        self.assertIsNone(va["commit_source"])

    def test_commit_from_the_option_and_from_git(self):
        repo = self.path("repo")
        os.makedirs(repo)
        so = os.path.join(repo, "m.so")
        shutil.copy(os.path.join(BUILD, "librpxprof-demo.so"), so)
        git = ["git", "-C", repo, "-c", "user.email=t@example.com", "-c", "user.name=t"]
        for cmd in (["init", "-q"], ["add", "m.so"], ["commit", "-q", "-m", "model"]):
            subprocess.run(git + cmd, check=True, capture_output=True)
        head = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
        v = self.run_model(so + ":demo_noop", name="g.json")["session"]["version"]
        self.assertEqual((v["commit"], v["commit_source"]), (head, "git"))
        self.assertEqual(v["model_sha256"], sha256_file(so))
        # --commit names the version instead
        v = self.run_model(so + ":demo_noop", "--commit", "v1.2-rc1", name="o.json")["session"]["version"]
        self.assertEqual((v["commit"], v["commit_source"]), ("v1.2-rc1", "option"))

    def test_a_python_module_is_versioned_by_its_source(self):
        if SANITIZED:
            self.skipTest("the Python target of a sanitized build needs its runtimes preloaded")
        mod = self.path("sesmod.py")
        with open(mod, "w") as f:
            f.write("def f(rgb):\n    return rgb.sum()\n")
        r = self.run_model("sesmod:f", name="p1.json", cwd=self.tmp)
        v = r["session"]["version"]
        self.assertEqual(v["module_source_sha256"], sha256_file(mod))
        self.assertIsNone(v["model_sha256"])
        self.assertIsNotNone(r["session"]["fingerprint"]["software"]["python"])
        self.assertIsNotNone(r["session"]["fingerprint"]["software"]["numpy"])
        with open(mod, "a") as f:       # a new version of the same module
            f.write("# changed\n")
        r2 = self.run_model("sesmod:f", name="p2.json", cwd=self.tmp)
        self.assertEqual(r2["session"]["version"]["module_source_sha256"], sha256_file(mod))
        self.assertNotEqual(r2["session"]["version"]["module_source_sha256"], v["module_source_sha256"])
        self.assertEqual(r2["session"]["benchmark"]["id"], r["session"]["benchmark"]["id"])

    def test_compare_run_writes_one_session(self):
        out = self.path("pair")
        run("compare", "--run", "--model", "rpxprof-demo:demo_noop", "--model", "rpxprof-demo:demo_noop",
            "--inputs", self.inputs, "--processes", "2", "--repeats", "20", "--out-dir", out, check=0)
        with open(os.path.join(out, "base.json")) as f:
            base = json.load(f)
        with open(os.path.join(out, "new.json")) as f:
            new = json.load(f)
        self.assertRegex(base["session"]["id"], ID)
        self.assertEqual(base["session"]["id"], new["session"]["id"])


class ComparabilityTest(SessionTestBase):
    TEMPLATE = None

    def template(self):
        if ComparabilityTest.TEMPLATE is None:
            ComparabilityTest.TEMPLATE = self.run_model("rpxprof-demo:demo_depth", name="t.json")
        return copy.deepcopy(ComparabilityTest.TEMPLATE)

    def edited(self, name, part, key, value):
        r = self.template()
        r["session"]["id"] = r["session"]["id"][:-8] + "00000000"   # another session
        r["session"]["fingerprint"][part][key] = value
        return self.write(name, r)

    def compare(self, base, new, *extra):
        return run("compare", base, new, *extra)

    def test_different_machines_or_work_are_incomparable(self):
        base = self.write("base.json", self.template())
        cases = {
            ("machine", "cpu_model"): "Another CPU 9000",
            ("machine", "cores"): 96,
            ("work", "precision"): "fp16",
            ("work", "inputs_digest"): "sha256:" + "0" * 64,
        }
        for (part, key), value in cases.items():
            new = self.edited(f"{key}.json", part, key, value)
            p = self.compare(base, new, "--fail-on-regression", "--json")
            self.assertEqual(p.returncode, 0, (key, p.stdout, p.stderr))     # never 3, never 1
            res = json.loads(p.stdout)
            self.assertEqual(res["verdict"], "incomparable", key)
            self.assertIsNone(res["p50_ratio"])
            diffs = {d["field"]: d for d in res["differences"]}
            self.assertIn(f"{part}.{key}", diffs, key)
            self.assertEqual(diffs[f"{part}.{key}"]["effect"], "incomparable")
            self.assertEqual(diffs[f"{part}.{key}"]["new"], value)
            # the text names what differs, and the verdict
            p = self.compare(base, new, "--fail-on-regression")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(f"{part}.{key} differs", p.stdout)
            self.assertIn(str(value), p.stdout)
            self.assertIn("verdict: incomparable", p.stdout)

    def test_a_different_kernel_is_a_note(self):
        base = self.write("base.json", self.template())
        new = self.edited("kernel.json", "machine", "kernel", "1.2.3-other")
        p = self.compare(base, new, "--json")
        self.assertIn(p.returncode, (0, 3), p.stderr)
        res = json.loads(p.stdout)
        self.assertNotEqual(res["verdict"], "incomparable")
        self.assertIsNotNone(res["p50_ratio"])
        self.assertEqual([(d["field"], d["effect"]) for d in res["differences"]], [("machine.kernel", "note")])
        self.assertTrue(any("machine.kernel differs" in n and "1.2.3-other" in n for n in res["notes"]))
        p = self.compare(base, new)
        self.assertIn("note: machine.kernel differs", p.stdout)
        # rpxprof's version: a note too
        new = self.edited("version.json", "software", "rpxprof", "9.9.9")
        res = json.loads(self.compare(base, new, "--json").stdout)
        self.assertEqual([(d["field"], d["effect"]) for d in res["differences"]], [("software.rpxprof", "note")])

    def test_a_report_older_than_sessions_is_compared_by_a_derived_block(self):
        base = self.write("base.json", self.template())
        old = self.template()
        del old["session"]
        p = self.compare(base, self.write("old.json", old), "--json")
        self.assertIn(p.returncode, (0, 3), p.stderr)
        res = json.loads(p.stdout)
        self.assertNotEqual(res["verdict"], "incomparable")
        self.assertEqual(res["differences"], [])     # derived from the same card and config
        old["system_card"]["cpu"]["model_name"] = old["system_card"]["cpu_name"] = "Another CPU"
        res = json.loads(self.compare(base, self.write("old2.json", old), "--json").stdout)
        self.assertEqual(res["verdict"], "incomparable")

    def test_folders_show_an_incomparable_row(self):
        r = self.template()
        r["task"], r["model_name"] = "t", "m"
        self.write("A/t/m.json", r)
        r = copy.deepcopy(r)
        r["session"]["id"] = r["session"]["id"][:-8] + "00000000"
        r["session"]["fingerprint"]["machine"]["cores"] = 96
        self.write("B/t/m.json", r)
        p = run("compare", self.path("A"), self.path("B"), "--fail-on-regression")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"\| t \| m \|.*incomparable sessions, differ in: machine\.cores \|.*\| incomparable \|")

    def test_python_compare_says_incomparable(self):
        if SANITIZED:
            self.skipTest("the Python extension of a sanitized build needs its runtimes preloaded")
        base = self.write("base.json", self.template())
        new = self.edited("cpu.json", "machine", "cpu_model", "Another CPU 9000")
        code = ("import json, sys, rpxprof\n"
                "c = rpxprof.compare(sys.argv[1], sys.argv[2])\n"
                "print(json.dumps({'verdict': c.verdict, 'fields': [d['field'] for d in c.differences],"
                " 'text': str(c)}))\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
        p = subprocess.run([os.environ.get("RPX_PYTHON", "/usr/bin/python3"), "-c", code, base, new],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        self.assertEqual(out["verdict"], "incomparable")
        self.assertIn("machine.cpu_model", out["fields"])
        self.assertIn("verdict: incomparable", out["text"])


class AggregateSessionsTest(SessionTestBase):
    def aggregate(self, reports):
        for (task, model), r in reports.items():
            r = copy.deepcopy(r)
            r["task"], r["model_name"] = task, model
            self.write(f"out/{task}/{model}.json", r)
        agg = self.path("agg")
        run("aggregate", self.path("out"), "--out-dir", agg, "--allow-incomplete-flops", "--force",
            "--quiet")
        with open(os.path.join(agg, "summary.md")) as f:
            md = f.read()
        with open(os.path.join(agg, "summary.csv")) as f:
            rows = {(r["task"], r["model"]): r for r in csv.DictReader(f)}
        with open(os.path.join(agg, "figure.svg")) as f:
            svg = f.read()
        return md, rows, svg

    def test_rows_of_different_sessions_are_said_to_be(self):
        a = self.run_model("rpxprof-demo:demo_depth", name="a.json")
        b = self.run_model("rpxprof-demo:demo_noop", name="b.json")
        md, rows, svg = self.aggregate({("t", "a"): a, ("t", "b"): b})
        self.assertIn("**2 different sessions**", md)
        self.assertIn("not the drift of the machine between sessions", md)
        self.assertEqual(rows[("t", "a")]["session"], a["session"]["id"])
        self.assertEqual(rows[("t", "b")]["session"], b["session"]["id"])
        self.assertIn(f"| {a['session']['id']} |", md)
        self.assertIn("not the drift between sessions", svg)     # next to the intervals
        # rows of one session (compare --run's two sides): nothing to say
        b["session"]["id"] = a["session"]["id"]
        shutil.rmtree(self.path("out"))
        md, rows, _ = self.aggregate({("t", "a"): a, ("t", "b"): b})
        self.assertNotIn("different sessions", md)


if __name__ == "__main__":
    main()
