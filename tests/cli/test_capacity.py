"""The capacity under an SLO (issue 40 §2) and the client's own send delay, against a server
on 127.0.0.1 the test starts (tests/cli/capacity_server.py: ONE worker, a fixed service time
S, first come first served, answers on a schedule so that S is exact whatever the machine).

The truth: with constant arrivals at rate r and deterministic service S (a D/D/1 queue), a
request finds the worker idle whenever r <= 1/S, so its latency is S plus the loopback; above
1/S the queue grows by (S - 1/r) a request, and request k waits k (S - 1/r). For p99 < X with
X well above S, the largest rate that meets it over a run of n requests is therefore 1/S, up to
the drift the queue builds before the percentile's upper bound (rank j <= n) passes X:
rate_max = 1 / (S - (X - S) / j). The capacity lies in [1/S, 1 / (S - (X - S) / n)], a band
that depends on S, X and n only — never on the machine's speed. With S = 10 ms, X = 200 ms and
n about 330 requests a run, the band is [100, 106.1] req/s: within 10 % of 1/S. X is generous
(20 x S) so that a busy 2-core machine's stalls (the loop held up for tens of ms) stay under it
below 1/S, where the queue drains at (1/r - S) a request.
"""
import json
import os
import signal
import subprocess
import sys

import numpy as np

from common import SOURCE, TempDirTest, main, run, run_report, validate_profile

SERVER = os.path.join(SOURCE, "tests", "cli", "capacity_server.py")


class QueueServer:
    """capacity_server.py started here, stopped by its PID."""

    def __init__(self, service_ms):
        self.p = subprocess.Popen([sys.executable, SERVER, str(service_ms)],
                                  stdout=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}/"

    def stop(self):
        os.kill(self.p.pid, signal.SIGTERM)
        self.p.wait(timeout=10)
        self.p.stdout.close()


class CapacityTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.server = None

    def tearDown(self):
        if self.server:
            self.server.stop()
        super().tearDown()

    def capacity(self, *args, check=0):
        out = self.path("capacity.json")
        p = run("capacity", *args, "--output", out, "-q", check=check, timeout=600)
        if check != 0:
            return p, None
        with open(out) as f:
            return p, json.load(f)

    # ---- one worker queue ----
    def test_one_worker_queue(self):
        S, X = 10.0, 200.0
        self.server = QueueServer(S)
        out = self.path("sweep")
        p = run("sweep", "--model", self.server.url, "--method", "GET", "--vary", "rate=auto",
                "--slo", f"p99<{X:g}ms", "--rate", "50", "--concurrency", "64",
                "--out-dir", out, "--html", self.path("sweep.html"), check=0, timeout=600)
        with open(os.path.join(out, "sweep.json")) as f:
            sw = json.load(f)
        import jsonschema
        with open(os.path.join(SOURCE, "schemas", "sweep.json")) as f:
            jsonschema.validate(sw, json.load(f))
        c = sw["capacity"]
        steps = c["search"]
        n_max = max(s["objectives"][0]["n"] for s in steps)
        truth, band_hi = 1e3 / S, 1e3 / (S - (X - S) / n_max)
        lo, hi = c["ci"]
        self.assertEqual(c["rate"], lo, c["sentence"])
        self.assertLessEqual(abs(lo - truth) / truth, 0.10, c["sentence"])
        self.assertTrue(lo <= band_hi and hi >= truth,
                        f"{c['sentence']}: the interval misses the truth band [{truth}, {band_hi:.1f}]")
        # every decision from enough requests for a p99's bound (299), said in the block
        self.assertEqual(c["min_requests"], 299)
        for s in steps:
            if s["valid"]:
                self.assertGreaterEqual(s["objectives"][0]["n"], 299, s)
        # the found rate re-verified in fresh runs, each passing at that rate
        self.assertEqual(len(c["verified_runs"]), 2, c["verified_runs"])
        for v in c["verified_runs"]:
            self.assertEqual((v["rate"], v["pass"], v["phase"]), (lo, True, "verify"))
        self.assertIn("sustains", c["sentence"])
        self.assertIn("p99 < 200 ms", c["sentence"])
        self.assertIn(c["sentence"], p.stdout)
        # every run a point with its report kept, in order of rate; an invalid one says why
        self.assertEqual(len(sw["points"]), c["runs"])
        self.assertEqual([pt["value"] for pt in sw["points"]],
                         sorted(s["rate"] for s in steps))
        for pt in sw["points"]:
            self.assertTrue(os.path.exists(os.path.join(out, pt["report"])), pt)
            self.assertEqual(pt["valid"], pt["invalid_reason"] is None, pt)
        # the page: every run's upper bound a dot, the objective's limit a line (the SLO), the
        # rate found a line and its interval a band
        with open(self.path("sweep.html")) as f:
            page = f.read()
        fig = page[page.index('id="sweep-capacity-fig"'):]
        fig = fig[:fig.index("</svg>")]
        runs = [r for r in steps + c["verified_runs"] if r["objectives"][0]["upper_ms"] is not None]
        self.assertEqual(fig.count('<circle class="cap-run'), len(runs))
        self.assertEqual(fig.count('class="cap-run invalid"'), sum(1 for r in runs if not r["valid"]))
        self.assertEqual(fig.count('<line class="cap-slo"'), 1)
        self.assertIn(">p99&lt;200ms</text>", fig)
        self.assertEqual(fig.count('<line class="cap-rate"'), 1)
        self.assertEqual(fig.count('<rect class="cap-ci"'), 1)

    # ---- send delay ----
    def test_send_delay_beside_the_latency(self):
        self.server = QueueServer(1.0)
        _, r, _ = run_report(self, "--model", self.server.url, "--method", "GET", "--rate", "200",
                             "--duration", "1.5", "--concurrency", "16", "-q")
        validate_profile(r)
        load = r["http"]["load"]
        sd = load["send_delay"]
        self.assertEqual(sd["n"], load["sent"])
        self.assertEqual(sd["tolerance_us"], 1000.0)
        self.assertLessEqual(sd["p50_us"], sd["p99_us"])
        self.assertLessEqual(sd["p99_us"], sd["max_us"])
        # its share: of the latency from the intended send (a bounded histogram: within 2 %)
        self.assertAlmostEqual(sd["share_p50"], sd["p50_us"] / 1e3 / r["latency"]["p50_ms"],
                               delta=0.02 * sd["share_p50"] + 1e-9)
        self.assertEqual(sd["valid"], sd["invalid_reason"] is None)

    def test_a_rate_beyond_the_client_is_invalid(self):
        x = self.path("x.npz")
        np.savez(x, x=np.zeros(4, np.float32))
        # 10 million calls a second of a model that returns at once: the pacer's own loop
        # cannot go that fast, and the model does not explain it (its median is far below
        # the 100 ns period on any machine this runs on); the run says so, never a point
        p, r, _ = run_report(self, "--model", "rpxprof-demo:demo_noop", "--inputs", x,
                             "--rate", "10000000", "--duration", "0.02", "--processes", "1")
        validate_profile(r)
        sd = r["pacing"]["send_delay"]
        self.assertIs(sd["valid"], False, sd)
        self.assertIs(sd["saturated"], True, sd)
        self.assertIn("the generator saturated", sd["invalid_reason"])
        self.assertIn("INVALID run: the generator saturated", p.stdout + p.stderr)

    def test_objectives_refused_with_the_grammar(self):
        p, _ = self.capacity("--model", "http://127.0.0.1:9/", "--slo", "p99=50ms", check=2)
        self.assertIn("NAME<DURATION", p.stderr)
        p = run("sweep", "--model", "http://127.0.0.1:9/", "--vary", "rate=auto", "--slo",
                "p99<5parsecs", "--out-dir", self.path("s"), check=2)
        self.assertIn("NAME<DURATION", p.stderr)
        p = run("sweep", "--model", "http://127.0.0.1:9/", "--vary", "rate=auto",
                "--out-dir", self.path("s"), check=2)
        self.assertIn("--slo 'p99<50ms'", p.stderr)


if __name__ == "__main__":
    main()
