"""Traces (issue 28 §2): `rpxprof run --trace FILE` and `rpxprof trace REPORT -o FILE`
write the Chrome trace-event JSON (the Trace Event Format's JSON object form). Checked
field by field against that format; the events of each process track nest (no two
complete events of one track overlap, setup before the calls before teardown); every
timed call's dur equals its sample in latency_samples_ms to the format's rounding
(ts and dur are microseconds with three decimals: one nanosecond); the bound
(--trace-max-events) and its note; a report without a timeline; protected paths; the GPU
watch's counters against the NVML stub; HTTP calls (closed loop) and an open-loop load."""
import json
import os

import numpy as np

from common import BIN, MODELS, TempDirTest, main, run, run_report, validate_profile

PHASES = {"setup", "warmup", "timed", "restore", "teardown"}


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def ns(x_ms):
    return round(x_ms * 1e6)


class TraceTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(16, np.float32))

    def traced(self, *args, check=0, trace=None, env=None, model="sleep_ns", url=None,
               body=None):
        trace = trace or self.path("run.trace.json")
        target = ["--model", url, "--body", body] if url else ["--model", f"{MODELS}:{model}",
                                                                "--inputs", self.inputs]
        p, r, _ = run_report(self, *target,
                             "--quiet", "--trace", trace, *map(str, args), check=check,
                             env=dict({"RPX_TEST_SLEEP_NS": "200000"}, **(env or {})))
        t = None
        if r is not None and os.path.exists(trace):
            with open(trace) as f:
                t = json.load(f)
        return p, r, t

    def check_format(self, t):
        """The Trace Event Format's JSON object form, field by field."""
        self.assertIsInstance(t, dict)
        self.assertEqual(t["schema"], "rpxprof.trace/1")
        self.assertEqual(t["displayTimeUnit"], "ns")  # "ms" or "ns" only
        self.assertIsInstance(t["otherData"], dict)
        self.assertIsInstance(t["traceEvents"], list)
        for e in t["traceEvents"]:
            self.assertIsInstance(e["name"], str, e)
            self.assertIn(e["ph"], ("X", "M", "C", "i", "b", "e"), e)
            self.assertIsInstance(e["pid"], int, e)
            if "args" in e:
                self.assertIsInstance(e["args"], dict, e)
            if e["ph"] == "M":
                self.assertIn(e["name"], ("process_name", "thread_name"), e)
                self.assertIsInstance(e["tid"], int)
                self.assertIsInstance(e["args"]["name"], str)
                self.assertEqual(set(e), {"name", "ph", "pid", "tid", "args"})
                continue
            self.assertIsInstance(e["ts"], (int, float), e)
            self.assertGreaterEqual(e["ts"], 0, e)
            self.assertEqual(round(e["ts"] * 1000, 6), round(e["ts"] * 1000), e)  # 1 ns steps
            if e["ph"] == "X":
                self.assertIn(e["cat"], PHASES, e)
                self.assertIsInstance(e["tid"], int)
                self.assertIsInstance(e["dur"], (int, float), e)
                self.assertGreaterEqual(e["dur"], 0, e)
                self.assertEqual(round(e["dur"] * 1000, 6), round(e["dur"] * 1000), e)
                self.assertLessEqual(set(e), {"name", "cat", "ph", "ts", "dur", "pid", "tid",
                                              "args"})
            elif e["ph"] in ("b", "e"):   # an open-loop request: async, paired by id
                self.assertEqual(e["cat"], "request", e)
                self.assertIsInstance(e["id"], str, e)
                self.assertIsInstance(e["tid"], int)
                self.assertLessEqual(set(e), {"name", "cat", "ph", "id", "ts", "pid", "tid", "args"})
            elif e["ph"] == "C":
                self.assertTrue(e["args"], e)
                for v in e["args"].values():
                    self.assertIsInstance(v, (int, float), e)
            else:  # an instant: the bound's note, a streamed event
                self.assertIn(e["cat"], ("note", "stream"))
                self.assertIn(e["s"], ("g", "p", "t"))
                self.assertLessEqual(set(e), {"name", "cat", "ph", "s", "ts", "pid", "tid",
                                              "args"})

    def check_nesting(self, t, teardown=True):
        """On each (pid, tid) track: setup events first, teardown last, no two complete
        events overlapping."""
        tracks = {}
        for e in t["traceEvents"]:
            if e["ph"] == "X":
                tracks.setdefault((e["pid"], e["tid"]), []).append(e)
        for key, evs in tracks.items():
            evs.sort(key=lambda e: e["ts"])
            for a, b in zip(evs, evs[1:]):
                self.assertLessEqual(ns(a["ts"] / 1000 + a["dur"] / 1000), ns(b["ts"] / 1000),
                                     f"{key}: {a} overlaps {b}")
            cats = [e["cat"] for e in evs]
            self.assertEqual(cats[:2], ["setup", "setup"], key)
            if teardown:
                self.assertEqual(cats[-1], "teardown", key)
            first_timed = cats.index("timed")
            self.assertNotIn("warmup", cats[first_timed:], key)

    def check_against_report(self, t, r, warmup):
        samples = r["latency_samples_ms"]
        names = {e["pid"]: e["args"]["name"] for e in t["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "process_name"
                 and e["args"]["name"].startswith("process ")}
        # one track per worker process, named with its pid
        self.assertEqual(sorted(names), list(range(1, r["processes"] + 1)))
        for p, tp in zip(r["latency_by_process"], r["timeline"]["processes"]):
            pid = p["process"] + 1
            self.assertEqual(names[pid], f"process {p['process']} (pid {tp['pid']})")
            timed = [e for e in t["traceEvents"] if e["pid"] == pid and e.get("cat") == "timed"]
            self.assertEqual(len(timed), p["measured_calls"])
            for i, e in enumerate(timed):
                g = p["sample_offset"] + i
                self.assertEqual(e["args"]["index"], i)
                self.assertEqual(e["args"]["sample_index"], g)
                self.assertEqual(e["args"]["sample"], 0)
                # the trace's duration is the report's sample, to the nanosecond
                self.assertEqual(round(e["dur"] * 1000), ns(samples[g]), (e, samples[g]))
                self.assertEqual(round(e["ts"] * 1000), ns(tp["call_start_ms"][i]))
                if r["call_records"]:
                    self.assertEqual(e["args"]["cpu_start"], r["call_records"]["cpu_start"][g])
                    self.assertEqual(e["args"]["cpu_end"], r["call_records"]["cpu_end"][g])
            warm = [e for e in t["traceEvents"] if e["pid"] == pid and e.get("cat") == "warmup"]
            self.assertEqual([e["args"]["index"] for e in warm], list(range(warmup)))
            # the resident-set readings as a counter track
            rss = [e for e in t["traceEvents"] if e["pid"] == pid and e["ph"] == "C"]
            self.assertEqual([e["args"]["rss_mb"] for e in rss], tp["rss_mb"])
            self.assertTrue(rss)

    def test_run_trace_format_nesting_and_samples(self):
        p, r, t = self.traced("--warmup", 3, "--repeats", 24, "--processes", 2,
                              "--writable-inputs")
        validate_profile(r)
        self.check_format(t)
        self.check_nesting(t)
        self.check_against_report(t, r, 3)
        # every call of a writable-inputs run has its restore right before it
        restores = [e for e in t["traceEvents"] if e.get("cat") == "restore"]
        self.assertEqual(len(restores), 24 + 2 * 3)
        self.assertEqual(t["otherData"]["events_left_out"], 0)
        self.assertFalse([e for e in t["traceEvents"] if e["ph"] == "i"])
        # a timed call is 0.2 ms of sleep: generous bounds only
        for e in t["traceEvents"]:
            if e.get("cat") == "timed":
                self.assertGreaterEqual(e["dur"], 150)

        # the same trace from the saved report
        again = self.path("again.trace.json")
        out = run("trace", self.report_path(), "-o", again, check=0)
        self.assertEqual(out.stdout.strip(), again)
        with open(again) as f:
            t2 = json.load(f)
        self.assertEqual(t2["traceEvents"], t["traceEvents"])

    def report_path(self):
        return os.path.join(self.tmp, f"report{self.reports_written}", "r.json")

    def test_without_timeline_says_what_is_missing(self):
        _, r, _ = run_report(self, "--model", f"{MODELS}:sleep_ns", "--inputs", self.inputs,
                             "--quiet", "--repeats", 5, "--warmup", 1, "--processes", 1,
                             env={"RPX_TEST_SLEEP_NS": "10000"})
        self.assertIsNone(r["timeline"])
        validate_profile(r)
        out = self.path("t.json")
        p = run("trace", self.report_path(), "-o", out, check=1)
        self.assertIn("timeline: null", p.stderr)
        self.assertIn("--timeline", p.stderr)
        self.assertFalse(os.path.exists(out))
        # --timeline alone keeps it, and the trace is drawn from it later
        _, r, _ = run_report(self, "--model", f"{MODELS}:sleep_ns", "--inputs", self.inputs,
                             "--quiet", "--repeats", 5, "--warmup", 1, "--processes", 1,
                             "--timeline", env={"RPX_TEST_SLEEP_NS": "10000"})
        validate_profile(r)
        run("trace", self.report_path(), "-o", out, check=0)
        with open(out) as f:
            t = json.load(f)
        self.check_format(t)
        self.check_nesting(t)
        self.check_against_report(t, r, 1)

    def test_bound_cuts_with_a_note(self):
        p, r, t = self.traced("--warmup", 2, "--repeats", 60, "--processes", 2,
                              "--trace-max-events", 30)
        self.check_format(t)
        self.check_nesting(t)
        self.assertLessEqual(len(t["traceEvents"]), 30)
        notes = [e for e in t["traceEvents"] if e["ph"] == "i"]
        self.assertEqual(len(notes), 1)
        kept = sum(1 for e in t["traceEvents"] if e["ph"] in ("X", "C"))
        # every event it would have drawn is either kept or counted as left out
        _, _, full = self.traced("--warmup", 2, "--repeats", 60, "--processes", 2,
                                 trace=self.path("full.trace.json"))
        self.assertEqual(notes[0]["args"]["left_out"], t["otherData"]["events_left_out"])
        self.assertGreater(notes[0]["args"]["left_out"], 0)
        self.assertIn("--trace-max-events 30", notes[0]["name"])
        self.assertGreater(sum(1 for e in full["traceEvents"] if e["ph"] in ("X", "C")), kept)
        # below the least bound: a bad command line, nothing run
        q = run("run", "--model", f"{MODELS}:sleep_ns", "--inputs", self.inputs, "-o",
                self.path("x.json"), "--trace", self.path("x.trace.json"),
                "--trace-max-events", 3, check=2)
        self.assertIn("--trace-max-events", q.stderr)
        self.assertFalse(os.path.exists(self.path("x.json")))

    def test_protected_paths(self):
        before = read(self.inputs, "rb")
        p, r, t = self.traced("--repeats", 3, "--warmup", 1, "--processes", 1,
                              trace=self.inputs, check=2)
        self.assertIn("--trace", p.stderr)
        self.assertIsNone(r)
        self.assertEqual(read(self.inputs, "rb"), before)
        # a file that is not a trace is not replaced without --force
        other = self.path("notes.json")
        with open(other, "w") as f:
            f.write('{"mine": 1}')
        p, r, _ = self.traced("--repeats", 3, "--warmup", 1, "--processes", 1, trace=other,
                              check=1)
        self.assertIsNone(r)
        self.assertEqual(read(other), '{"mine": 1}')
        # the report itself is never the trace's place
        rep = self.path("rep.json")
        q = run("run", "--model", f"{MODELS}:sleep_ns", "--inputs", self.inputs, "-o", rep,
                "--trace", rep, "--quiet", "--repeats", 3, check=2)
        self.assertIn("--trace", q.stderr)
        # the standard output carries the report's path: a trace there is refused
        q = run("run", "--model", f"{MODELS}:sleep_ns", "--inputs", self.inputs, "-o", rep,
                "--trace", "-", "--quiet", "--repeats", 3, check=2)
        self.assertIn("--trace -", q.stderr)
        # rpxprof trace never replaces the report it reads
        _, r, _ = self.traced("--repeats", 3, "--warmup", 1, "--processes", 1)
        src = self.report_path()
        text = read(src)
        run("trace", src, "-o", src, check=2)
        self.assertEqual(read(src), text)

    def test_gpu_watch_as_counter_tracks(self):
        # the stub NVML (tests/stubs/nvml): an H100 at 1755 MHz and 690 W whose temperature
        # read fails, and an A100 whose power read is not supported; sampled by the parent
        # while the model's process is in its timed loop
        from test_cuda import CUPTI, NVML, STUB
        from test_cuda import MODELS as CUDA_MODELS
        env = {"RPX_CUDA_LIBRARY": STUB, "RPX_STUB_CUDA_LOG": self.path("cuda.log"),
               "RPX_NVML_LIBRARY": NVML, "RPX_STUB_NVML_BUSY_FILE": self.path("busy"),
               "RPX_TEST_CUPTI": CUPTI, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
        trace = self.path("gpu.trace.json")
        p, r, _ = run_report(self, "--model", f"{CUDA_MODELS}:gpu_kernels", "--inputs",
                             self.inputs, "--device", "cuda", "--processes", 1, "--warmup", 5,
                             "--repeats", 300, "--quiet", "--trace", trace, env=env)
        validate_profile(r)
        with open(trace) as f:
            t = json.load(f)
        self.check_format(t)
        self.check_nesting(t)
        self.check_against_report(t, r, 5)
        gpus = r["timeline"]["gpu"]
        self.assertEqual([g["index"] for g in gpus], [0, 1])
        self.assertGreaterEqual(len(gpus[0]["t_ms"]), 1)
        self.assertEqual(r["timeline"]["gpu_readings_left_out"], 0)
        names = {e["pid"]: e["args"]["name"] for e in t["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "process_name"}
        self.assertEqual(names[2], "GPU 0 (NVML index 0)")
        self.assertEqual(names[3], "GPU 1 (NVML index 1)")
        h100 = [e for e in t["traceEvents"] if e["ph"] == "C" and e["pid"] == 2]
        a100 = [e for e in t["traceEvents"] if e["ph"] == "C" and e["pid"] == 3]
        self.assertEqual({e["args"]["sm_clock_mhz"] for e in h100 if e["name"] == "SM clock (MHz)"},
                         {1755})
        self.assertEqual({e["args"]["power_w"] for e in h100 if e["name"] == "power (W)"}, {690})
        # a value NVML did not give is no point at all (never a 0)
        self.assertFalse([e for e in h100 if e["name"] == "temperature (C)"])
        self.assertFalse([e for e in a100 if e["name"] == "power (W)"])
        self.assertEqual(len([e for e in h100 if e["name"] == "SM clock (MHz)"]),
                         len(gpus[0]["t_ms"]))
        # the readings were taken while the process was in its timed loop
        tp = r["timeline"]["processes"][0]
        for ts in gpus[0]["t_ms"]:
            self.assertGreaterEqual(ts, tp["setup_ms"][1])
            self.assertLessEqual(ts, tp["teardown_ms"][1])

    def test_http_calls_and_an_open_loop_load(self):
        from http_server import HttpTestServer
        body = self.path("body.json")
        with open(body, "w") as f:
            f.write("{}")
        with HttpTestServer() as srv:
            # closed loop: every request is a timed call of the one process
            p, r, t = self.traced("--repeats", 8, "--warmup", 2, model=None,
                                  url=srv.url("/sleep?ms=1"), body=body)
            validate_profile(r)
            self.check_format(t)
            self.check_nesting(t)
            self.check_against_report(t, r, 2)
            self.assertTrue(all(e["args"]["cpu_start"] is None for e in t["traceEvents"]
                                if e.get("cat") == "timed"))  # no call_records for HTTP
            # a streamed response: each kept event an instant inside its call
            p, r, t = self.traced("--repeats", 3, "--warmup", 1, "--keep-events", 100,
                                  model=None, url=srv.url("/sse?first=5&every=2&n=4"), body=body)
            validate_profile(r)
            self.check_format(t)
            self.check_nesting(t)
            kept = r["http"]["streaming"]["events_kept"]
            inst = [e for e in t["traceEvents"] if e.get("cat") == "stream"]
            self.assertEqual(len(inst), sum(len(k["t_ms"]) for k in kept))
            self.assertGreaterEqual(len(inst), 3 * 4)
            calls = {e["args"]["index"]: e for e in t["traceEvents"] if e.get("cat") == "timed"}
            for e in inst:
                c = calls[e["args"]["call"]]
                self.assertEqual(e["s"], "t")
                self.assertGreaterEqual(e["ts"], c["ts"])
                self.assertLessEqual(e["ts"], c["ts"] + c["dur"] + 0.001)
            # an open-loop load has no calls of its own: the process's phases only
            p, r, t = self.traced("--rate", 200, "--duration", 0.05, "--warmup", 1, model=None,
                                  url=srv.url("/sleep?ms=1"), body=body)
            validate_profile(r)
            self.check_format(t)
            self.assertIsNone(r["timeline"]["processes"][0]["call_start_ms"])
            self.assertFalse([e for e in t["traceEvents"] if e.get("cat") == "timed"])
            self.assertEqual({e["cat"] for e in t["traceEvents"] if e["ph"] == "X"},
                             {"setup", "teardown"})
            self.assertIn("open-loop", t["otherData"]["calls"])
            # each request as an async pair on its process's track, from its intended send
            # time (http.load.schedule_ms, here on the trace's clock) to its end: dur = sample
            proc = r["timeline"]["processes"][0]
            intended = proc["request_intended_ms"]
            samples = r["latency_samples_ms"]
            self.assertEqual(len(intended), len(samples))
            sched = r["http"]["load"]["schedule_ms"]
            for i in range(1, len(intended)):   # the same schedule, shifted by its start
                self.assertAlmostEqual(intended[i] - intended[0], sched[i] - sched[0], delta=1e-5)
            reqs = [e for e in t["traceEvents"] if e.get("cat") == "request"]
            begins = {e["id"]: e for e in reqs if e["ph"] == "b"}
            ends = {e["id"]: e for e in reqs if e["ph"] == "e"}
            self.assertEqual(len(begins), len(samples))
            self.assertEqual(set(begins), set(ends))
            for k, e in begins.items():
                f = ends[k]
                self.assertEqual((e["pid"], e["tid"], e["name"]), (f["pid"], f["tid"], f["name"]))
                self.assertIsInstance(e["id"], str)
                g = e["args"]["sample_index"]
                self.assertEqual(ns(e["ts"] / 1e3), ns(intended[g]))
                self.assertEqual(ns((f["ts"] - e["ts"]) / 1e3), ns(samples[g]))
                self.assertAlmostEqual(e["args"]["intended_ms"], sched[g], delta=1e-9)

    def test_crashed_run_keeps_its_trace(self):
        p, r, t = self.traced("--repeats", 10, "--warmup", 2, "--processes", 1,
                              env={"RPX_TEST_AT": "6"}, check=3, model="crash_at")
        self.assertEqual(r["status"], "crashed")
        self.check_format(t)
        self.check_nesting(t, teardown=False)
        timed = [e for e in t["traceEvents"] if e.get("cat") == "timed"]
        self.assertEqual(len(timed), len(r["latency_samples_ms"]))

    def test_readme_and_docs_say_how_to_open_a_trace(self):
        from common import SOURCE
        readme = read(os.path.join(SOURCE, "README.md"))
        self.assertIn("--trace run.trace.json", readme, "README.md lost its trace paragraph")
        self.assertIn("ui.perfetto.dev", readme)
        self.assertIn("docs/report.md#traces", readme)
        doc = read(os.path.join(SOURCE, "docs", "report.md"))
        self.assertIn("## Traces", doc)
        self.assertIn("https://ui.perfetto.dev", doc)
        self.assertIn("chrome://tracing", doc)


if __name__ == "__main__":
    main()
