"""An open-loop load run (--rate) keeps each request's intended send time beside
its latency (http.load.schedule_ms), and `rpxprof plot --timeline` draws latency
against it: a server stall shows as a ramp (tests/cli/http_server.py on 127.0.0.1)."""
import csv
import json
import os
import re
import xml.etree.ElementTree as ET

import numpy as np

from common import TempDirTest, main, run, run_report, validate_profile
from http_server import HttpTestServer

GAP_MS = 20.0  # 50 req/s


class LoadTimelineTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.srv = HttpTestServer().start()  # its own count of requests: the stall at the 53rd
        self.addCleanup(self.srv.stop)

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
        # a report whose times and samples do not pair up is refused, not drawn
        r["http"]["load"]["schedule_ms"].pop()
        with open(rep, "w") as f:
            json.dump(r, f)
        p = run("plot", rep, "-o", self.path("u.svg"), "--timeline", check=1)
        self.assertIn(f"{rep}: http.load.schedule_ms has 149 times but latency_samples_ms has 150 "
                      "samples; the report was altered", p.stderr)

    @staticmethod
    def figure_labels(path):
        """Each row's label text (its note included), by the label's first line."""
        ns = "{http://www.w3.org/2000/svg}"
        labels = {}
        for t in ET.parse(path).getroot().iter(ns + "text"):
            if re.fullmatch(r"row-\d+-\d+-label", t.get("id", "")):
                labels[t.text.strip()] = " ".join("".join(t.itertext()).split())
        return labels

    # ---- aggregate ----
    def test_aggregate_reads_load_and_paced_runs(self):
        _, r = self.stall_run()
        out = self.path("out")
        os.makedirs(os.path.join(out, "load"))
        os.makedirs(os.path.join(out, "paced"))
        r.update(task="load", model_name="stall")
        with open(os.path.join(out, "load", "stall.json"), "w") as f:
            json.dump(r, f)
        noop = os.path.join(out, "paced", "noop.json")
        np.savez(self.path("x.npz"), x=np.zeros(4, np.float32))
        run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", self.path("x.npz"), "--rate",
            "200", "--repeats", "60", "--warmup", "2", "-q", "--output", noop, check=0, cwd=self.tmp)
        with open(noop) as f:
            pr = json.load(f)
        pr.update(task="paced", model_name="noop")
        with open(noop, "w") as f:
            json.dump(pr, f)
        # a streamed closed-loop run: its TTFT and ITL p50
        os.makedirs(os.path.join(out, "stream"))
        _, sr, _ = run_report(self, "--model", self.srv.url("/sse?first=30&every=5&n=4"), "--method",
                              "GET", "--stream", "sse", "--warmup", "1", "--repeats", "5", "-q")
        sr.update(task="stream", model_name="sse")
        with open(os.path.join(out, "stream", "sse.json"), "w") as f:
            json.dump(sr, f)
        agg = self.path("agg")
        p = run("aggregate", out, "--out-dir", agg, "--allow-incomplete-flops")
        with open(os.path.join(agg, "validation.json")) as f:
            self.assertEqual(p.returncode, 0, json.load(f)["errors"])
        with open(os.path.join(agg, "summary.md")) as f:
            lines = [l.rstrip("\n") for l in f if l.startswith("| ")]
        head = [c.strip() for c in lines[0].strip("|").split("|")]
        md = {}
        for l in lines[1:]:
            row = dict(zip(head, (c.strip() for c in l.strip("|").split("|"))))
            md[row["model"]] = row
        with open(os.path.join(agg, "summary.csv")) as f:
            rows = {x["model"]: x for x in csv.DictReader(f)}
        ld = r["http"]["load"]
        self.assertEqual(md["stall"]["load achieved /s"], "%.2f" % ld["achieved_rate_per_s"])
        self.assertAlmostEqual(float(rows["stall"]["load_achieved_rate_per_s"]), ld["achieved_rate_per_s"])
        self.assertAlmostEqual(float(rows["stall"]["load_p99_from_intended_ms"]), r["latency"]["p99_ms"])
        self.assertEqual(float(rows["stall"]["load_requested_rate_per_s"]), 50.0)
        self.assertTrue(md["stall"]["load p99 from intended"].endswith(" ms"), md["stall"])
        for col in ("TTFT p50", "ITL p50", "paced Hz"):
            self.assertEqual(md["stall"][col], "n/a")
        for col in ("TTFT p50", "ITL p50", "load achieved /s", "load p99 from intended"):
            self.assertEqual(md["noop"][col], "n/a")
        self.assertEqual(md["noop"]["paced Hz"], "%.3f" % pr["pacing"]["achieved_rate_hz"])
        self.assertEqual(float(rows["noop"]["paced_rate_hz"]), 200.0)
        self.assertEqual(rows["noop"]["ttft_p50_ms"], "")
        st = sr["http"]["streaming"]
        self.assertAlmostEqual(float(rows["sse"]["ttft_p50_ms"]), st["ttft_ms"]["p50_ms"])
        self.assertAlmostEqual(float(rows["sse"]["itl_p50_ms"]), st["itl_ms"]["p50_ms"])
        self.assertTrue(md["sse"]["TTFT p50"].endswith(" ms"), md["sse"])
        self.assertEqual(md["sse"]["load achieved /s"], "n/a")
        # the figure says which rows are not one call after another: a load run's latency
        # runs from the intended send time (queueing included), a paced run's calls come
        # one per period; the tables keep the bare model name
        self.assertEqual(sorted(md), ["noop", "sse", "stall"])
        label = self.figure_labels(os.path.join(agg, "figure.svg"))
        self.assertEqual(sorted(label), ["noop", "sse", "stall"])
        self.assertIn("open loop", label["stall"])
        self.assertIn("50 req/s", label["stall"])
        self.assertIn("intended send", label["stall"])
        if ld["achieved_rate_per_s"] < 0.98 * 50:
            self.assertIn("achieved", label["stall"])
        self.assertNotIn("paced", label["stall"])
        self.assertIn("paced 200 Hz", label["noop"])
        self.assertNotIn("open loop", label["noop"])
        self.assertEqual(label["sse"], "sse")
        # rpxprof plot: the same note in the load run's row
        fig = self.path("one.svg")
        run("plot", os.path.join(out, "load", "stall.json"), os.path.join(out, "stream", "sse.json"), "-o", fig)
        label = self.figure_labels(fig)
        self.assertIn("open loop, 50 req/s", label["stall"])
        self.assertEqual(label["sse"], "sse")
        # an achieved rate under 0.98 of the requested one is said too
        slow = json.loads(json.dumps(r))
        slow["http"]["load"]["achieved_rate_per_s"] = 40.5
        with open(self.path("slow.json"), "w") as f:
            json.dump(slow, f)
        run("plot", self.path("slow.json"), noop, "-o", fig)
        label = self.figure_labels(fig)
        self.assertEqual(label["stall"], "stall — open loop, 50 req/s, achieved 40.5/s (from intended send)")
        self.assertEqual(label["noop"], "noop — paced 200 Hz")
        # the same task run closed-loop is not the same work
        c = json.loads(json.dumps(r))
        c["http"]["load"] = None
        c["model_name"] = "closed"
        with open(os.path.join(out, "load", "closed.json"), "w") as f:
            json.dump(c, f)
        p = run("aggregate", out, "--out-dir", self.path("agg2"), "--allow-incomplete-flops")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        with open(os.path.join(self.path("agg2"), "validation.json")) as f:
            errs = json.load(f)["errors"]
        self.assertTrue(any("schedule (http.load" in e and "open-loop load at 50/s, 150 requests, "
                            "constant arrivals, concurrency 2" in e for e in errs), errs)


if __name__ == "__main__":
    main()
