"""compare --run of two checkouts of one Python module (issue 36 §5): `--model
base/mypkg/model.py:predict --model head/mypkg/model.py:predict`, the module `mypkg.model`
in both, each side importing its own file in its own worker processes. The two copies
busy-wait different times and record which file ran, so a side that ran the other's code
shows; a third copy of `mypkg` first on PYTHONPATH and in the current folder must not win
either. Busy-waits compared, so alone."""
import json
import os
import textwrap

import numpy as np

from common import BUILD, SANITIZED, TempDirTest, main, run

PLUGIN = os.path.join(BUILD, "librpxprof-python.so")

MODEL = textwrap.dedent('''
    import os
    import time

    WHO = {who!r}
    MS = {ms}

    # which copy each worker imported: one line per import, written outside timing
    with open(os.environ["RPX_TEST_IMPORTS"], "a") as f:
        f.write("%s %d %s\\n" % (WHO, os.getpid(), __file__))


    def predict(x):
        end = time.perf_counter() + MS / 1000
        while time.perf_counter() < end:
            pass
        return WHO
''')


def checkout(root, who, ms):
    """root/mypkg/{__init__,model}.py: one checkout of the package."""
    os.makedirs(os.path.join(root, "mypkg"))
    with open(os.path.join(root, "mypkg", "__init__.py"), "w") as f:
        f.write("")
    with open(os.path.join(root, "mypkg", "model.py"), "w") as f:
        f.write(MODEL.format(who=who, ms=ms))


class CompareCheckoutsTest(TempDirTest):
    def setUp(self):
        super().setUp()
        if not os.path.exists(PLUGIN):
            self.skipTest("this build has no Python plugin (python3-dev missing)")
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))
        checkout(self.path("base"), "base", 1)
        checkout(self.path("head"), "head", 3)
        checkout(self.path("other"), "other", 0)   # on PYTHONPATH and the current folder
        self.imports = self.path("imports.txt")

    def imported(self):
        with open(self.imports) as f:
            return [line.split(" ", 2) for line in f.read().splitlines()]

    def test_each_side_runs_its_own_checkout(self):
        out = self.path("out")
        calls = ["--processes", "3", "--repeats", "60", "--warmup", "2"] if SANITIZED else \
            ["--processes", "4", "--repeats", "200", "--warmup", "5"]
        # relative paths, run from a folder whose own mypkg is a third copy
        p = run("compare", "--run", "--model", "../base/mypkg/model.py:predict",
                "--model", os.path.join(self.tmp, "head", "mypkg", "model.py") + ":predict",
                "--inputs", self.inputs, *calls, "--out-dir", out, "--json",
                env={"RPX_TEST_IMPORTS": self.imports,
                     "PYTHONPATH": self.path("other")}, cwd=self.path("other"), check=0)
        c = json.loads(p.stdout)
        reports = {}
        for side in ("base", "new"):
            with open(os.path.join(out, side + ".json")) as f:
                reports[side] = json.load(f)
        want = {"base": self.path("base", "mypkg", "model.py"),
                "new": self.path("head", "mypkg", "model.py")}
        for side, r in reports.items():
            self.assertEqual(r["status"], "complete")
            self.assertEqual(r["target_kind"], "python")
            self.assertEqual(r["python"]["module"], "mypkg.model")
            self.assertEqual(os.path.realpath(r["python"]["module_file"]),
                             os.path.realpath(want[side]))
        # every worker imported its own side's file, and no worker imported a third copy
        seen = self.imported()
        self.assertEqual(sorted({who for who, _, _ in seen}), ["base", "head"], seen)
        for who, _, file in seen:
            self.assertEqual(os.path.realpath(file),
                             os.path.realpath(want["base" if who == "base" else "new"]))
        # one import in each worker process of its side
        for who, side in (("base", "base"), ("head", "new")):
            self.assertEqual([w for w, _, _ in seen].count(who),
                             len(reports[side]["latency_by_process"]), seen)
        self.assertEqual(len({pid for _, pid, _ in seen}), len(seen), seen)
        # and the times are each copy's own: head waits three times as long
        self.assertEqual(c["verdict"], "slower", c)
        self.assertGreater(c["p50_ratio"], 2.0, c)

    def test_a_missing_file_or_a_bad_module_name_is_said(self):
        p = run("compare", "--run", "--model", "nowhere/mypkg/model.py:predict",
                "--model", self.path("head", "mypkg", "model.py") + ":predict",
                "--inputs", self.inputs, "--processes", "2", "--repeats", "12",
                env={"RPX_TEST_IMPORTS": self.imports}, cwd=self.tmp)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("nowhere/mypkg/model.py: no such file", p.stderr)
        os.makedirs(self.path("bad-name"))
        with open(self.path("bad-name", "my-model.py"), "w") as f:
            f.write("def predict(x):\n    return 0\n")
        p = run("run", "--model", self.path("bad-name", "my-model.py") + ":predict",
                "--inputs", self.inputs, "--repeats", "5", "-q",
                "--output", self.path("bad.json"), cwd=self.tmp)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("'my-model' is not a Python module name", p.stderr)


if __name__ == "__main__":
    main()
