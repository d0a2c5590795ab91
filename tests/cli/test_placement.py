"""Placement (issue 27 §3): --cpus pins the model's process and every thread it
starts, --spread gives the processes the CPUs in turn, a CPU outside rpxprof's
own affinity is refused with the allowed list, and the report's `placement`
says where each process ran. Checked from inside the model's process: a Python
target writes its own affinity (and a thread's) to a file."""
import json
import os
import subprocess
import textwrap
import unittest

import numpy as np

from common import (BIN, TempDirTest, load_json, main, run, run_report, validate,
                    validate_profile)

ALLOWED = sorted(os.sched_getaffinity(0))

MODULE = textwrap.dedent("""\
    import os, threading
    LOG = os.environ["PLACE_TEST_LOG"]
    def f(**arrays):
        seen = {}
        t = threading.Thread(target=lambda: seen.setdefault("t", sorted(os.sched_getaffinity(0))))
        t.start()
        t.join()
        with open(LOG, "a") as fh:
            fh.write("%d %s %s\\n" % (os.getpid(),
                                      ",".join(map(str, sorted(os.sched_getaffinity(0)))),
                                      ",".join(map(str, seen["t"]))))
    """)


def need_two_cpus(test):
    if len(ALLOWED) < 2:
        test.skipTest("placement needs 2 allowed CPUs; this process may use %s" % ALLOWED)


class PlacementTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))
        with open(self.path("place_model.py"), "w") as f:
            f.write(MODULE)
        self.log = self.path("calls.log")

    def profile(self, *args, check=0):
        if os.path.exists(self.log):
            os.unlink(self.log)
        p, r, _ = run_report(self, "--model", "place_model:f", "--inputs", self.inputs,
                             "--quiet", "--warmup", "0", *map(str, args), check=check,
                             env={"PYTHONPATH": self.tmp, "PLACE_TEST_LOG": self.log})
        if r is not None:
            validate_profile(r)
        return p, r

    def calls(self):
        """[(pid, process CPUs, a new thread's CPUs)] per call, from inside."""
        with open(self.log) as f:
            return [(int(a), [int(x) for x in b.split(",")], [int(x) for x in c.split(",")])
                    for a, b, c in (line.split() for line in f)]

    def test_default_inherits_the_mask(self):
        _, r = self.profile("--repeats", 4, "--processes", 2)
        pl = r["placement"]
        self.assertEqual(pl["policy"], "inherit")
        self.assertEqual(pl["cpus_allowed"], ALLOWED)
        self.assertIsNone(pl["cpus_requested"])
        self.assertEqual(pl["by_process"], [{"process": 0, "cpus": ALLOWED},
                                            {"process": 1, "cpus": ALLOWED}])
        for _, cpus, thread in self.calls():
            self.assertEqual((cpus, thread), (ALLOWED, ALLOWED))

    def test_cpus_pins_every_process_and_its_threads(self):
        need_two_cpus(self)
        cpu = ALLOWED[1]
        _, r = self.profile("--repeats", 6, "--processes", 3, "--cpus", cpu)
        pl = r["placement"]
        self.assertEqual((pl["policy"], pl["cpus_requested"]), ("pinned", [cpu]))
        self.assertEqual(pl["cpus_allowed"], ALLOWED)
        self.assertEqual([b["cpus"] for b in pl["by_process"]], [[cpu]] * 3)
        calls = self.calls()
        self.assertEqual(len(calls), 6)
        self.assertEqual(len({pid for pid, _, _ in calls}), 3)
        for _, cpus, thread in calls:
            self.assertEqual((cpus, thread), ([cpu], [cpu]))

    def test_cpus_list_and_range(self):
        need_two_cpus(self)
        a, b = ALLOWED[0], ALLOWED[1]
        for text in (f"{a},{b}", f"{a}-{b}" if b == a + 1 else f"{a},{b}"):
            _, r = self.profile("--repeats", 2, "--processes", 1, "--cpus", text)
            self.assertEqual(r["placement"]["cpus_requested"], [a, b])
            self.assertEqual(self.calls()[0][1], [a, b])

    def test_no_isolate_pins_this_process_for_the_run(self):
        need_two_cpus(self)
        cpu = ALLOWED[0]
        _, r = self.profile("--repeats", 3, "--no-isolate", "--cpus", cpu)
        self.assertEqual(r["placement"]["by_process"], [{"process": 0, "cpus": [cpu]}])
        self.assertEqual({(tuple(c), tuple(t)) for _, c, t in self.calls()},
                         {((cpu,), (cpu,))})

    def test_spread_gives_each_cpu_the_same_number_of_processes(self):
        need_two_cpus(self)
        two = ALLOWED[:2]
        _, r = self.profile("--repeats", 8, "--processes", 4, "--spread", "--cpus",
                            f"{two[0]},{two[1]}")
        pl = r["placement"]
        self.assertEqual(pl["policy"], "spread")
        self.assertEqual([b["cpus"] for b in pl["by_process"]],
                         [[two[0]], [two[1]], [two[0]], [two[1]]])
        per_pid = {}
        for pid, cpus, thread in self.calls():
            self.assertEqual(cpus, thread)
            per_pid[pid] = cpus[0]
        self.assertEqual(sorted(per_pid.values()), [two[0], two[0], two[1], two[1]])

    def test_spread_rounds_the_count_up_and_says_so(self):
        need_two_cpus(self)
        n = len(ALLOWED)
        _, r = self.profile("--repeats", 40, "--processes", n + 1, "--spread")
        self.assertEqual(r["processes"], 2 * n)
        by = [b["cpus"][0] for b in r["placement"]["by_process"]]
        self.assertEqual(sorted(by), sorted(ALLOWED * 2))
        self.assertTrue(any(f"{2 * n} processes ran instead of {n + 1}" in x for x in r["notes"]),
                        r["notes"])

    def test_spread_needs_isolation_and_calls(self):
        p, r = self.profile("--repeats", 4, "--spread", "--no-isolate", check=2)
        self.assertIn("--spread", p.stderr)
        self.assertIn("drop --no-isolate", p.stderr)
        if len(ALLOWED) >= 2:
            p, _ = self.profile("--repeats", 1, "--spread", check=2)
            self.assertIn("give --repeats %d or more" % len(ALLOWED), p.stderr)

    def test_bad_lists_are_refused(self):
        for text, why in (("x", "not a list of CPUs"), ("3-1", "goes backwards"),
                          ("0,", "not a list of CPUs"), ("99999", "CPU numbers go up to")):
            p, r = self.profile("--repeats", 2, "--cpus", text, check=2)
            self.assertIsNone(r)
            self.assertIn(f"--cpus '{text}'", p.stderr)
            self.assertIn(why, p.stderr)
            self.assertIn("such as 1, 2-3 or 0,2", p.stderr)

    def test_cpu_outside_the_allowed_set_is_refused_with_the_list(self):
        need_two_cpus(self)
        a, b = ALLOWED[0], ALLOWED[1]
        out = self.path("never.json")
        p = subprocess.run(["taskset", "-c", str(a), BIN, "run", "--model", "place_model:f",
                            "--inputs", self.inputs, "--cpus", f"{a},{b}", "--output", out],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           env={**os.environ, "PYTHONPATH": self.tmp,
                                "PLACE_TEST_LOG": self.log})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"CPU {b} is not among the CPUs this process may use ({a}", p.stderr)
        self.assertIn(f"give CPUs from {a}", p.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(self.log))  # nothing ran

    # ---- manifests and aggregate's same-work check ----

    def manifest(self, name, models, defaults=None, valid=True):
        m = {"schema": "rpxprof.manifest/1",
             "defaults": {"warmup": 1, "repeats": 6, "processes": 2, **(defaults or {})},
             "tasks": {"t": {"inputs": "in.npz"}},
             "models": [{"name": n, "model": "place_model:f", "tasks": ["t"], **extra}
                        for n, extra in models]}
        path = self.path(name)
        with open(path, "w") as f:
            json.dump(m, f)
        if valid:
            validate(m, "manifest.json")
        return path

    def batch(self, manifest, out, check=0):
        return run("batch", manifest, "--out-dir", out, "--quiet", check=check,
                   env={"PYTHONPATH": self.tmp, "PLACE_TEST_LOG": self.log})

    def test_manifest_cpus_and_spread(self):
        need_two_cpus(self)
        cpu = ALLOWED[1]
        out = self.path("out")
        self.batch(self.manifest("m.json", [("a", {}), ("b", {})], {"cpus": cpu}), out)
        for name in ("a", "b"):
            r = load_json(os.path.join(out, "t", name + ".json"))
            validate_profile(r)
            self.assertEqual((r["placement"]["policy"], r["placement"]["cpus_requested"]),
                             ("pinned", [cpu]))
        self.assertEqual({tuple(c) for _, c, _ in self.calls()}, {(cpu,)})
        out2 = self.path("out2")
        self.batch(self.manifest("s.json", [("a", {"spread": True, "cpus": f"{ALLOWED[0]},{cpu}"}),
                                            ("b", {"spread": True,
                                                   "cpus": f"{ALLOWED[0]},{cpu}"})]), out2)
        r = load_json(os.path.join(out2, "t", "a.json"))
        self.assertEqual([b["cpus"] for b in r["placement"]["by_process"]],
                         [[ALLOWED[0]], [cpu]])
        # a manifest whose models of one task differ in placement is refused up front
        p = self.batch(self.manifest("mixed.json", [("a", {"cpus": cpu}), ("b", {})]),
                       self.path("out3"), check=1)
        self.assertIn("placement", p.stderr)
        self.assertIn("aggregate's same-work check", p.stderr)
        # and a bad list names the manifest's field
        p = self.batch(self.manifest("bad.json", [("a", {"cpus": "x"})], valid=False), self.path("o4"),
                       check=1)
        self.assertIn("cpus 'x': not a list of CPUs", p.stderr)

    def test_aggregate_refuses_mixed_placement(self):
        need_two_cpus(self)
        pinned, inherit = self.path("pinned"), self.path("inherit")
        self.batch(self.manifest("a.json", [("a", {})], {"cpus": ALLOWED[1]}), pinned)
        self.batch(self.manifest("b.json", [("b", {})]), inherit)
        p = run("aggregate", pinned, inherit, "--out-dir", self.path("agg"),
                "--allow-incomplete-flops")
        self.assertNotEqual(p.returncode, 0, p.stdout)
        errors = load_json(self.path("agg", "validation.json"))["errors"]
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("placement policy", errors[0])
        self.assertIn(f"pinned to CPUs {ALLOWED[1]}", str(errors))
        # the same placement passes
        self.batch(self.manifest("c.json", [("c", {})], {"cpus": ALLOWED[1]}), self.path("p2"))
        p = run("aggregate", pinned, self.path("p2"), "--out-dir", self.path("agg2"),
                "--allow-incomplete-flops")
        self.assertEqual(p.returncode, 0, load_json(self.path("agg2", "validation.json")))

    def test_help_lists_the_options(self):
        h = run("run", "--help", check=0).stdout
        self.assertIn("--cpus LIST", h)
        self.assertIn("--spread", h)


if __name__ == "__main__":
    main()
