"""An open-loop load run (--rate) keeps each request's intended send time beside
its latency (http.load.schedule_ms), and `rpxprof plot --timeline` draws latency
against it: a server stall shows as a ramp (tests/cli/http_server.py on 127.0.0.1)."""
import json
import re

from common import TempDirTest, main, run, run_report, validate_profile
from http_server import HttpTestServer

GAP_MS = 20.0  # 50 req/s


class LoadTimelineTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.srv = HttpTestServer().start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def stall_run(self):
        # 50 req/s for 3 s, 2 connections; the 51st timed request (due at 1000 ms;
        # 2 warmup requests come first) stalls the one-at-a-time server for 500 ms
        p, r, _ = run_report(self, "--model", self.srv.url("/locked?ms=2&stall_at=53&stall_ms=500"),
                             "--method", "GET", "--warmup", "2", "-q", "--rate", "50",
                             "--duration", "3", "--concurrency", "2", timeout=120)
        validate_profile(r)
        return p, r

    def test_schedule_beside_latency_and_the_stall_as_a_ramp(self):
        _, r = self.stall_run()
        self.assertEqual(r["status"], "complete")
        ld = r["http"]["load"]
        lat, sched = r["latency_samples_ms"], ld["schedule_ms"]
        self.assertEqual(len(lat), 150)
        self.assertEqual(len(sched), len(lat))
        # constant arrivals: the intended times are exactly k * 20 ms, each once
        self.assertEqual(sorted(round(t / GAP_MS) for t in sched), list(range(150)))
        for t in sched:
            self.assertAlmostEqual(t, round(t / GAP_MS) * GAP_MS, delta=1e-3)
        by_t = dict(zip((round(t / GAP_MS) for t in sched), lat))
        # the stall runs from at least 1000 ms to at least 1500 ms: a request due at t in
        # between ends after 1500 ms, so its latency from t is at least 1500 - t (a ramp)
        for k in range(51, 74):
            self.assertGreaterEqual(by_t[k], 1500 - k * GAP_MS - 1.0, (k, by_t[k]))

        # ---- the figure ----
        rep = self.path("r.json")
        with open(rep, "w") as f:
            json.dump(r, f)
        fig = self.path("t.svg")
        run("plot", rep, "-o", fig, "--timeline", check=0)
        svg = open(fig).read()
        self.assertIn("intended send time", svg)
        pts = re.findall(r'<circle id="timeline-pt-(\d+)" cx="([\d.]+)" cy="([\d.]+)"[^>]*>'
                         r'<title>request due at ([\d.]+) ms: ([\d.e+-]+) ms</title>', svg)
        self.assertEqual(len(pts), 150)
        xs = {}
        for i, cx, cy, due, ms in pts:
            i = int(i)
            self.assertAlmostEqual(float(due), sched[i], delta=1e-6)
            self.assertAlmostEqual(float(ms), lat[i], delta=1e-6)
            xs[round(float(due) / GAP_MS)] = (float(cx), float(cy))
        # x is linear in the intended time (not the call index): equal gaps between slots
        x0, x149 = xs[0][0], xs[149][0]
        for k, (cx, _) in xs.items():
            self.assertAlmostEqual(cx, x0 + (x149 - x0) * k / 149, delta=0.02)
        # the ramp: points due early in the stall sit higher (smaller y) than points due late
        self.assertLess(xs[51][1], xs[70][1])
        self.assertLess(xs[51][1], min(xs[k][1] for k in range(0, 40)))


if __name__ == "__main__":
    main()
