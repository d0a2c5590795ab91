"""`rpxprof system --probe` (each allowed CPU's speed) and, in every run's card,
the cheap probe and the CPU time other processes took during the run
(docs/system.md#cpu_probe, #other-processes)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import unittest

from common import BIN, TempDirTest, main, run, run_report, validate, validate_profile


def probe(*prefix):
    p = subprocess.run([*prefix, BIN, "system", "--probe", "--json"], capture_output=True,
                       text=True, timeout=300, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise AssertionError(f"exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


class ProbeTest(TempDirTest):
    def check_rows(self, rows, cpus, key):
        self.assertEqual([r["cpu"] for r in rows], sorted(cpus))
        rel = [r["relative"] for r in rows]
        for r in rows:
            self.assertGreater(r["relative"], 0)
            self.assertLessEqual(r["relative"], 1.0)
            self.assertGreater(r[key], 0)
        self.assertEqual(max(rel), 1.0)  # the fastest is the reference

    def test_one_row_per_allowed_cpu(self):
        card = probe()
        validate(card, "system_card.json")
        p = card["cpu_probe"]
        cpus = os.sched_getaffinity(0)
        self.assertEqual(p["form"], "full")
        self.assertEqual(p["cpus"], len(cpus))
        self.check_rows(p["compute"], cpus, "ns_per_iter")
        self.check_rows(p["memory"], cpus, "gbps")
        self.assertEqual(p["method"]["repetitions"], 5)
        self.assertGreaterEqual(p["spread"]["compute"], 1.0)
        if p["warning"]:  # the warning and the rows agree
            self.assertIn(p["warning"], card["warnings"])
            self.assertTrue(any(r["slow"] for r in p["compute"] + p["memory"]))
        else:
            self.assertFalse(any(r["slow"] for r in p["compute"] + p["memory"]))

    @unittest.skipUnless(shutil.which("taskset"), "taskset is not installed")
    def test_under_taskset_one_row(self):
        cpu = min(os.sched_getaffinity(0))
        p = probe("taskset", "-c", str(cpu))["cpu_probe"]
        self.assertEqual(p["cpus"], 1)
        self.assertEqual([(r["cpu"], r["relative"], r["slow"]) for r in p["compute"]],
                         [(cpu, 1.0, False)])
        self.assertEqual(len(p["memory"]), 1)
        self.assertIsNone(p["warning"])

    def test_text_table(self):
        out = run("system", "--probe", check=0).stdout
        self.assertIn("CPU probe (speed of each allowed CPU, relative to the fastest)", out)
        lines = out.split("CPU probe")[1].splitlines()
        self.assertRegex(lines[1], r"cpu +compute +ns/iter +noise +memory +GB/s +noise")
        rows = [l.split() for l in lines[2:2 + len(os.sched_getaffinity(0))]]
        self.assertEqual([int(r[0]) for r in rows], sorted(os.sched_getaffinity(0)))
        self.assertIn("1.000", [r[1] for r in rows])
        # without --probe: n/a and why
        out = run("system", check=0).stdout
        self.assertRegex(out, r"CPU probe .*\n  n/a \(not measured: `rpxprof system --probe`")

    def test_snapshot_is_not_this_machine(self):
        snap = os.path.join(os.environ.get("RPX_SOURCE", "."), "tests", "fixtures", "sysroots",
                            "debian12-kvm-2cpu")
        c = json.loads(run("system", "--probe", "--json", env={"RPX_SYSROOT": snap},
                           check=0).stdout)
        self.assertIsNone(c["cpu_probe"])
        self.assertIn("RPX_SYSROOT is set", c["unavailable"]["cpu_probe"])


class RunCardTest(TempDirTest):
    def inputs(self):
        path = self.path("in.npz")
        run("inputs", "make", path, "rgb=48x64x3:uint8=1", check=0)
        return path

    def test_cheap_probe_by_default_and_off(self):
        inp = self.inputs()
        _, r, _ = run_report(self, "--model", "rpxprof-demo:demo_noop", "--inputs", inp,
                             "--repeats", "5", "--warmup", "1")
        validate_profile(r)
        p = r["system_card"]["cpu_probe"]
        self.assertEqual(p["form"], "cheap")
        self.assertEqual(len(p["compute"]), len(os.sched_getaffinity(0)))
        self.assertIsNone(p["memory"])
        o = r["system_card"]["conditions"]["other_processes"]
        self.assertGreater(o["counted"], 0)
        self.assertEqual(o["allowed_cpus"], len(os.sched_getaffinity(0)))
        self.assertNotIn(os.getpid(), [])  # rpxprof's own pid is never in top
        _, r, _ = run_report(self, "--model", "rpxprof-demo:demo_noop", "--inputs", inp,
                             "--repeats", "5", "--warmup", "1", "--no-cpu-probe")
        validate_profile(r)
        self.assertIsNone(r["system_card"]["cpu_probe"])
        self.assertIn("--no-cpu-probe", r["system_card"]["unavailable"]["cpu_probe"])

    @unittest.skipUnless(shutil.which("taskset"), "taskset is not installed")
    def test_busy_loop_on_the_models_cpu_is_counted(self):
        inp = self.inputs()
        cpu = str(min(os.sched_getaffinity(0)))
        busy = subprocess.Popen(["taskset", "-c", cpu, sys.executable, "-c", "while True: pass"],
                                stdin=subprocess.DEVNULL)
        try:
            # paced: 100 calls at 50 Hz take 2 s whatever the machine, and leave
            # the CPU to the busy loop between calls
            p = subprocess.run(["taskset", "-c", cpu, BIN, "run", "--model",
                                "rpxprof-demo:demo_noop", "--inputs", inp, "--repeats", "100",
                                "--warmup", "1", "--rate", "50", "--processes", "1",
                                "--output", self.path("busy.json")],
                               capture_output=True, text=True, timeout=300,
                               stdin=subprocess.DEVNULL)
            self.assertEqual(p.returncode, 0, p.stderr)
        finally:
            os.kill(busy.pid, signal.SIGKILL)
            busy.wait()
        with open(self.path("busy.json")) as f:
            r = json.load(f)
        validate_profile(r)
        o = r["system_card"]["conditions"]["other_processes"]
        # the busy loop had about one CPU for about 2 s: generous bounds
        self.assertGreater(o["window_s"], 1.0)
        self.assertGreater(o["cpus"], 0.2, o)
        self.assertGreater(o["cpu_share"], 0.2 / o["allowed_cpus"], o)
        self.assertEqual(o["allowed_cpus"], 1)
        # on the one allowed CPU the busy loop took its share: at least a fifth
        self.assertGreater(o["allowed_cpus_other_share"], 0.2, o)
        mine = [t for t in o["top"] if t["pid"] == busy.pid]
        if mine:
            self.assertGreater(mine[0]["cpu_s"], 0.2)
            self.assertTrue(mine[0]["comm"].startswith("python"), mine)
        else:  # on a crowded machine, five of this user's processes took more still
            self.assertEqual(len(o["top"]), 5, o)
            self.assertGreater(min(t["cpu_s"] for t in o["top"]), 0.2, o)
        self.assertTrue(any("Other processes took" in w for w in r["system_card"]["warnings"]))


if __name__ == "__main__":
    main()
