"""`rpxprof run --rate HZ` for local targets (a shared object, a Python callable): one timed
call per period on absolute deadlines, late starts counted, the report's `pacing`."""
import os
import textwrap

import numpy as np

from common import BUILD, TempDirTest, main, run, run_report, validate_profile


class PacedRunTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.npz = self.path("x.npz")
        np.savez(self.npz, x=np.zeros(4, np.float32))

    def paced(self, model, *extra, env=None, check=0):
        _, r, _ = run_report(self, "--model", model, "--inputs", self.npz, "-q", *extra,
                             env=env, check=check, cwd=self.tmp)
        if r is not None:
            validate_profile(r)
        return r

    def test_a_shared_object_at_100_hz_keeps_its_rate(self):
        r = self.paced("rpxprof-demo:demo_noop", "--rate", "100", "--repeats", "200",
                       "--warmup", "2", "--processes", "1")
        self.assertEqual(r["status"], "complete")
        pc = r["pacing"]
        self.assertEqual((pc["rate_hz"], pc["period_ms"], pc["calls"]), (100.0, 10.0, 200))
        # deadlines are absolute: a late wake-up does not shift the calls after it
        self.assertLess(abs(pc["achieved_rate_hz"] - 100.0), 1.0, pc)
        self.assertGreaterEqual(pc["start_lag_ms"]["min_ms"], 0.0)
        self.assertGreaterEqual(pc["latency_from_schedule_ms"]["max_ms"], pc["start_lag_ms"]["max_ms"])
        # the timed loop spans 199 periods at least
        self.assertGreaterEqual(r["wall_time_ms"], 199 * 10.0)
        # each call is timed as without pacing; the paced rate joins the real-time budget
        self.assertEqual(r["measured_calls"], 200)
        self.assertEqual([x["hz"] for x in r["realtime_budget"]["rates"]], [5.0, 10.0, 30.0, 100.0])
        # several processes: each keeps its own schedule; the calls add up
        r = self.paced("rpxprof-demo:demo_noop", "--rate", "200", "--repeats", "60",
                       "--warmup", "0", "--processes", "3", "--budget-hz", "200")
        self.assertEqual(r["pacing"]["calls"], 60)
        self.assertLess(abs(r["pacing"]["achieved_rate_hz"] - 200.0), 4.0, r["pacing"])
        self.assertEqual([x["hz"] for x in r["realtime_budget"]["rates"]], [200.0])
        # without --rate: no pacing section
        r = self.paced("rpxprof-demo:demo_noop", "--repeats", "5", "--warmup", "0")
        self.assertNotIn("pacing", r)

    def test_a_rate_above_what_one_call_serves_queues(self):
        if not os.path.exists(os.path.join(BUILD, "librpxprof-python.so")):
            self.skipTest("this build has no Python plugin (python3-dev missing)")
        with open(self.path("slow20.py"), "w") as f:
            f.write(textwrap.dedent("""\
                import time
                def predict(x):
                    time.sleep(0.02)
                """))
        # 20 ms calls due every 10 ms: every call after the first finds its deadline gone,
        # and the wait from the deadline grows by >= 10 ms a call (call 19: >= 190 ms)
        r = self.paced("slow20:predict", "--rate", "100", "--repeats", "20", "--warmup", "1",
                       "--processes", "1", env={"PYTHONPATH": self.tmp})
        pc = r["pacing"]
        self.assertEqual(pc["late_starts"], 19, pc)
        self.assertLessEqual(pc["achieved_rate_hz"], 50.0, pc)
        self.assertGreaterEqual(pc["start_lag_ms"]["max_ms"], 190.0, pc)
        self.assertGreaterEqual(pc["latency_from_schedule_ms"]["max_ms"], 210.0, pc)
        self.assertGreaterEqual(r["latency"]["min_ms"], 20.0)

    def test_compare_back_to_back(self):
        rgb = self.path("rgb.npz")
        np.savez(rgb, rgb=np.full((48, 64, 3), 128, np.uint8))
        _, r, _ = run_report(self, "--model", "rpxprof-demo:demo_depth", "--inputs", rgb, "-q",
                             "--rate", "200", "--repeats", "40", "--warmup", "2",
                             "--processes", "1", "--compare-back-to-back", cwd=self.tmp)
        validate_profile(r)
        b2b = r["pacing"]["back_to_back"]
        self.assertGreater(b2b["latency"]["p50_ms"], 0)
        self.assertAlmostEqual(b2b["paced_p50_over_back_to_back_p50"],
                               r["latency"]["p50_ms"] / b2b["latency"]["p50_ms"], places=9)
        self.assertEqual(r["measured_calls"], 40)  # the back-to-back run leaves no samples here
        r = self.paced("rpxprof-demo:demo_noop", "--rate", "200", "--repeats", "5")
        self.assertIsNone(r["pacing"]["back_to_back"])

    def test_rate_and_duration_pace_for_that_long(self):
        # --rate 30 --duration 60 paces a camera model for a minute: here 50 Hz for 0.6 s,
        # 30 timed calls, for a shared object and (below) a Python callable
        r = self.paced("rpxprof-demo:demo_noop", "--rate", "50", "--duration", "0.6",
                       "--warmup", "1", "--processes", "1")
        self.assertEqual(r["status"], "complete")
        self.assertEqual((r["pacing"]["rate_hz"], r["pacing"]["calls"], r["measured_calls"]),
                         (50.0, 30, 30))
        self.assertGreaterEqual(r["wall_time_ms"], 29 * 20.0)  # 29 periods at least
        # spread over processes as --repeats would be
        r = self.paced("rpxprof-demo:demo_noop", "--rate", "100", "--duration", "0.3",
                       "--warmup", "0", "--processes", "2")
        self.assertEqual((r["pacing"]["calls"], r["measured_calls"]), (30, 30))
        if not os.path.exists(os.path.join(BUILD, "librpxprof-python.so")):
            return
        with open(self.path("cam.py"), "w") as f:
            f.write("def predict(x):\n    return x\n")
        r = self.paced("cam:predict", "--rate", "50", "--duration", "0.4", "--warmup", "1",
                       "--processes", "1", env={"PYTHONPATH": self.tmp})
        self.assertEqual((r["pacing"]["rate_hz"], r["measured_calls"]), (50.0, 20))

    def test_refusals(self):
        out = self.path("r.json")
        for args, msg in [
            (["--rate", "0"], "--rate '0': give a number above 0 (calls per second)"),
            (["--compare-back-to-back"],
             "--compare-back-to-back compares paced calls (--rate HZ) of a shared object or "
             "Python callable with the same calls back to back; give --rate, and a local --model"),
            (["--duration", "2"],
             "--duration S paces the calls for S seconds; give --rate HZ too"),
            (["--rate", "10", "--duration", "2", "--repeats", "5"],
             "--repeats and --rate x --duration both set the number of timed calls; give one"),
            (["--rate", "1", "--duration", "0.1"],
             "--rate 1 x --duration 0.1 = 0 calls: give from 1 to 10000000"),
            (["--rate", "10", "--duration", "2", "--drain", "1"],
             "--drain is for HTTP API targets (--model http(s)://...), not "
             "rpxprof-demo:demo_noop"),
        ]:
            p = run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", self.npz,
                    "--output", out, *args, check=2)
            self.assertIn(msg, p.stderr)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    main()
