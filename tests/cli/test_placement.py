"""Placement (issue 27 §3): --cpus pins the model's process and every thread it
starts, --spread gives the processes the CPUs in turn, a CPU outside rpxprof's
own affinity is refused with the allowed list, and the report's `placement`
says where each process ran. Checked from inside the model's process: a Python
target writes its own affinity (and a thread's) to a file."""
import json
import math
import os
import subprocess
import textwrap
import unittest

import numpy as np

from common import (BIN, MODELS, TempDirTest, load_json, main, run, run_report, validate,
                    validate_profile)

try:
    from scipy import stats as sstats
except ImportError:  # scripts/setup.sh installs python3-scipy
    sstats = None

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


def p50_log_var(x):
    """The variance of the log p50 of calls x from its distribution-free 95 % interval
    (rpx_stats_quantile_ranks: the fewest ranks between, then the closest tails, then the
    lower), as compare --run's paired interval takes it (docs/statistics.md)."""
    n, s, best = len(x), np.sort(x), None
    for lo in range(1, n + 1):
        lt = sstats.binom.cdf(lo - 1, n, 0.5)
        for up in range(lo + 1, n + 1):
            ut = sstats.binom.sf(up - 1, n, 0.5)
            if lt + ut <= 0.05:
                if best is None or up - lo < best[0] or (up - lo == best[0] and abs(lt - ut) < best[1] - 1e-12):
                    best = (up - lo, abs(lt - ut), lo, up)
                break
    _, _, lo, up = best
    return ((math.log(s[up - 1]) - math.log(s[lo - 1])) / (2 * 1.959963984540054)) ** 2


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

    def test_spread_with_target_precision_adds_whole_rounds(self):
        need_two_cpus(self)
        n = len(ALLOWED)
        _, r, _ = run_report(self, "--model", f"{MODELS}:busywait", "--inputs", self.inputs,
                             "--quiet", "--warmup", 1, "--repeats", 12 * n, "--processes", n,
                             "--spread", "--target-precision", "0.0001%", "--max-time", 1,
                             env={"RPX_TEST_BUSY_NS": "20000"})
        validate_profile(r)
        self.assertFalse(r["stopping"]["converged"])
        self.assertGreater(r["processes"], n)
        self.assertEqual(r["processes"] % n, 0, r["processes"])
        by = [b["cpus"][0] for b in r["placement"]["by_process"]]
        self.assertEqual(by, [ALLOWED[i % n] for i in range(r["processes"])])

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
        # the same CPUs written two ways are the same placement
        self.batch(self.manifest("w.json", [("a", {"cpus": f"{ALLOWED[0]},{cpu}"}),
                                            ("b", {"cpus": f"{cpu},{ALLOWED[0]}"})]),
                   self.path("out5"))
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

    # ---- compare --run: pairs by CPU ----

    def compare_run(self, *args, check=0):
        out = self.path("cmp")
        p = run("compare", "--run", "-m", f"{MODELS}:busywait", "-m", f"{MODELS}:busywait",
                "--inputs", self.inputs, "--warmup", 1, "--repeats", 240, "--processes", 4,
                "--json", "--out-dir", out, *args, check=check,
                env={"RPX_TEST_BUSY_NS": "30000"})
        if check:
            return p, None, None, None
        return (p, json.loads(p.stdout), load_json(os.path.join(out, "base.json")),
                load_json(os.path.join(out, "new.json")))

    def test_compare_run_pairs_by_cpu_and_its_interval_is_within_pair(self):
        if sstats is None:
            self.skipTest("scipy is not installed (scripts/setup.sh installs python3-scipy)")
        _, c, base, new = self.compare_run()
        self.assertEqual(c["design"], "paired_by_cpu")
        # pair k: process k of each, both on CPU k mod n of the allowed CPUs
        for r in (base, new):
            validate_profile(r)
            self.assertEqual(r["placement"]["policy"], "spread")
            self.assertEqual([b["cpus"] for b in r["placement"]["by_process"]],
                             [[ALLOWED[k % len(ALLOWED)]] for k in range(4)])

        def slices(r):
            s = np.array(r["latency_samples_ms"])
            return [s[b["sample_offset"]:b["sample_offset"] + b["measured_calls"]]
                    for b in r["latency_by_process"]]
        d = np.log([np.percentile(n, 50) / np.percentile(b, 50)
                    for b, n in zip(slices(base), slices(new))])
        k = len(d)
        # se: the pairs' spread, never below what the calls' own noise gives mean(d) (issue 36:
        # each per-process p50's distribution-free 95 % interval, as a variance on log scale)
        calls_var = sum(p50_log_var(x) for r in (base, new) for x in slices(r))
        se = max(np.std(d, ddof=1) / math.sqrt(k), math.sqrt(calls_var) / k)
        half = sstats.t.ppf(0.975, k - 1) * se
        pooled = (np.percentile(new["latency_samples_ms"], 50) /
                  np.percentile(base["latency_samples_ms"], 50))
        # the estimate is the within-pair ratios' geometric mean, its interval around it; the
        # pooled p50s' ratio is kept beside it, not forced into the interval
        lo, hi = math.exp(d.mean() - half), math.exp(d.mean() + half)
        self.assertAlmostEqual(c["p50_ratio"], math.exp(d.mean()), delta=1e-9)
        self.assertAlmostEqual(c["p50_ratio_pooled"], pooled, delta=1e-9)
        self.assertAlmostEqual(c["p50_ratio_ci"][0], lo, delta=1e-9)
        self.assertAlmostEqual(c["p50_ratio_ci"][1], hi, delta=1e-9)
        if se > 0:
            tstat = abs(d.mean()) / se
            self.assertAlmostEqual(c["p_value"], 2 * sstats.t.sf(tstat, k - 1), delta=1e-6)
        else:  # every pair the same ratio (scipy: nan): no difference at all, or a sure one
            self.assertEqual(c["p_value"], 1.0 if d.mean() == 0 else 0.0)
        self.assertIn("paired t", c["p_value_method"])
        # per CPU: where both reports have processes on that CPU
        self.assertEqual(sorted(x["cpu"] for x in c["by_cpu"]), sorted(set(ALLOWED[:4])))

    def test_compare_run_text_says_the_pairs(self):
        out = self.path("cmp_text")
        p = run("compare", "--run", "-m", f"{MODELS}:busywait", "-m", f"{MODELS}:busywait",
                "--inputs", self.inputs, "--warmup", 1, "--repeats", 24, "--processes", 2,
                "--out-dir", out, check=0, env={"RPX_TEST_BUSY_NS": "20000"})
        self.assertIn("between-process, from the ratios of pairs run on the same CPU", p.stdout)
        self.assertIn("paired t", p.stdout)

    def test_compare_run_unpaired_keeps_the_interleaved_design(self):
        _, c, base, _ = self.compare_run("--unpaired")
        self.assertEqual(c["design"], "interleaved")
        self.assertEqual(base["placement"]["policy"], "inherit")
        p, _, _, _ = self.compare_run("--unpaired", "--cpus", ALLOWED[0], check=2)
        self.assertIn("--cpus", p.stderr)

    def test_compare_of_reports_placed_differently_says_so(self):
        need_two_cpus(self)
        _, a = self.profile("--repeats", 40, "--processes", 2, "--cpus", ALLOWED[1])
        _, b = self.profile("--repeats", 40, "--processes", 2)
        pa, pb = self.path("a.json"), self.path("b.json")
        with open(pa, "w") as f:
            json.dump(a, f)
        with open(pb, "w") as f:
            json.dump(b, f)
        p = run("compare", pa, pb, "--json", check=0)
        c = json.loads(p.stdout)
        self.assertEqual(c["design"], "independent")
        self.assertTrue(any("placement policy" in w and f"pinned to CPUs {ALLOWED[1]}" in w
                            for w in c["warnings"]), c["warnings"])
        self.assertEqual([x["cpu"] for x in c["by_cpu"] or []], [])  # b has no pinned process

    def test_help_lists_the_options(self):
        h = run("run", "--help", check=0).stdout
        self.assertIn("--cpus LIST", h)
        self.assertIn("--spread", h)


if __name__ == "__main__":
    main()
