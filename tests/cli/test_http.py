"""`rpxprof run --model http://...`: the real binary against a local HTTP/1.1 API
(tests/cli/http_server.py on 127.0.0.1; no other network)."""
import os
import shutil
import subprocess

import numpy as np

from common import (BIN, TempDirTest, assert_profile_rejects, interrupted_run, main, run,
                    run_report, validate_profile)
from http_server import HttpTestServer, closed_port, depth_of

TOKEN = "tok-3b1f9c-very-secret"


class HttpRunTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.srv = HttpTestServer().start()
        self.addCleanup(self.srv.stop)
        self.rgb = np.arange(24 * 32 * 3, dtype=np.uint8).reshape(24, 32, 3)
        self.npz = self.path("in.npz")
        np.savez(self.npz, rgb=self.rgb)

    def profile(self, url, *extra, check=0, env=None, repeats=50):
        rep = ["--repeats", repeats] if repeats is not None else []
        p, report, text = run_report(self, "--model", url, "--inputs", self.npz, "--warmup", "2",
                                     *rep, "-q", *extra, check=check, env=env, timeout=120)
        if report is not None:
            validate_profile(report)
            report["_text"] = text
        return p, report

    def assert_null_cost(self, r):
        self.assertIsNone(r["roofline"])
        self.assertIsNone(r["efficiency"])
        self.assertEqual(r["memory"]["cuda_peak_allocated_mb_by_visible_device"], {})
        self.assertTrue(any(n.startswith("remote API") for n in r["notes"]), r["notes"])

    # ---- a complete run ----
    def test_depth_complete(self):
        # the server's model is the numpy truth the client never sees
        self.assertEqual(depth_of(self.rgb).shape, (24, 32))
        _, r = self.profile(self.srv.url("/depth"))
        self.assertEqual(r["status"], "complete")
        self.assertEqual(r["target_kind"], "http")
        self.assertEqual(r["measured_calls"], 50)
        self.assertEqual(r["failed_calls"], 0)
        h = r["http"]
        self.assertEqual(h["url"], self.srv.url("/depth"))
        self.assertEqual(h["method"], "POST")
        self.assertEqual(h["status_counts"], {"200": 50})
        self.assertEqual(h["failed_calls"], 0)
        self.assertEqual(h["failed_warmup_calls"], 0)
        self.assertEqual(h["connections_opened"], 1)
        self.assertEqual(h["http_version"], "1.1")
        self.assertEqual(h["remote_address"], f"127.0.0.1:{self.srv.port}")
        size = os.path.getsize(self.npz)
        self.assertEqual(h["body"], {"source": "inputs", "path": self.npz, "bytes": size,
                                     "content_type": "application/x-npz"})
        self.assertEqual(h["request_body_bytes"], size)
        self.assertEqual(h["bytes_sent"], 50 * size)
        self.assertGreater(h["bytes_received"], 0)
        self.assertTrue(h["tls_verification"])
        for name in ("name_lookup", "connect", "time_to_first_byte", "total"):
            self.assertIsNotNone(h["phases_ms"][name]["p50_ms"], name)
        self.assertTrue(all(v is None for v in h["phases_ms"]["tls"].values()))  # plain http
        self.assertLessEqual(h["phases_ms"]["total"]["p50_ms"], r["latency"]["p50_ms"] * 1.5)
        self.assertEqual(set(h["not_measured"]), {"gpu", "cost", "roofline", "device_memory"})
        self.assert_null_cost(r)
        # keep-alive, seen from the server: one connection for every call
        self.assertEqual(self.srv.connections, 1)
        self.assertEqual(self.srv.requests, 52)
        self.assertEqual(self.srv.seen[-1]["headers"].get("Content-Type"), "application/x-npz")

    def test_sleep_latency(self):
        _, r = self.profile(self.srv.url("/sleep?ms=20"), repeats=20)
        self.assertEqual(r["status"], "complete")
        p50 = r["latency"]["p50_ms"]
        self.assertGreaterEqual(p50, 20.0)
        # load only lengthens calls: the fastest one shows what the transport adds
        self.assertGreaterEqual(min(r["latency_samples_ms"]), 20.0)
        self.assertLess(min(r["latency_samples_ms"]), 20.0 + 50.0, r["latency"])
        self.assertGreaterEqual(r["http"]["phases_ms"]["time_to_first_byte"]["p50_ms"], 20.0)

    def test_time_to_first_byte_is_the_first_response_byte(self):
        # A POST whose answer starts 5 ms after the request was read: the first byte cannot
        # come sooner. (libcurl 7.88's STARTTRANSFER, taken while a large upload is under
        # way, read 0.27 ms here for this 2 MB body.) --body without --inputs: no inputs
        # file needed.
        body = self.path("body.bin")
        with open(body, "wb") as f:
            f.write(b"\x02" * 2000000)
        p, r, _ = run_report(self, "--model", self.srv.url("/sleep?ms=5"), "--body", body,
                             "--warmup", "2", "--repeats", "30", "-q", timeout=120)
        validate_profile(r)
        ph = r["http"]["phases_ms"]
        ttfb, total = ph["time_to_first_byte"], ph["total"]
        self.assertGreaterEqual(ttfb["min_ms"], 5.0, ph)
        self.assertGreaterEqual(ttfb["p50_ms"], 5.0, ph)
        self.assertLessEqual(ttfb["p50_ms"], total["p50_ms"], ph)
        self.assertLessEqual(ttfb["p50_ms"], r["latency"]["p50_ms"], ph)
        self.assertEqual(r["http"]["body"]["source"], "--body")
        self.assertEqual(self.srv.seen[-1]["body_bytes"], 2000000)
        self.assertEqual((r["inputs"], r["inputs_file"], r["inputs_sha256"]), ({}, None, None))
        # GET sends no body: no --inputs either; POST without a body source is refused
        _, r, _ = run_report(self, "--model", self.srv.url("/sleep?ms=5"), "--method", "GET",
                             "--warmup", "0", "--repeats", "3", "-q", timeout=120)
        self.assertGreaterEqual(r["http"]["phases_ms"]["time_to_first_byte"]["min_ms"], 5.0)
        p = run("run", "--model", self.srv.url("/sleep"), "--output", self.path("x.json"),
                check=2)
        self.assertIn("--inputs or --body is required: the request body (--method GET and HEAD "
                      "send none)", p.stderr)

    # ---- streamed responses ----
    def test_sse_stream(self):
        # A role-only chunk at once, the first content event after 200 ms, then one every
        # 20 ms (10 in all), a usage-only chunk (completion_tokens 20), data: [DONE].
        # The bounds allow a busy 2-core ASan machine: events cannot come early, only late
        # (TTFT >= 195 ms and at most +50 ms; ITL p50 >= 18 ms and at most +50 ms).
        _, r = self.profile(self.srv.url("/sse?first=200&every=20&n=10"), "--keep-events", "15",
                            "--slo", "ttft=10s,tpot=1s", repeats=5)
        st = r["http"]["streaming"]
        self.assertEqual((st["mode"], st["mode_from"]), ("sse", "content-type text/event-stream"))
        self.assertEqual((st["responses"], st["responses_ended_by_done"],
                          st["responses_without_content"]), (5, 5, 0))
        self.assertGreaterEqual(st["ttft_ms"]["min_ms"], 195.0, st["ttft_ms"])
        self.assertLessEqual(st["ttft_ms"]["p50_ms"], 250.0, st["ttft_ms"])
        self.assertGreaterEqual(st["itl_ms"]["p50_ms"], 18.0, st["itl_ms"])
        self.assertLessEqual(st["itl_ms"]["p50_ms"], 70.0, st["itl_ms"])
        # the role-only chunk is an event but not content; [DONE] is neither
        self.assertEqual(st["events_per_response"]["p50"], 12)
        self.assertEqual(st["content_events_per_response"]["p50"], 10)
        self.assertEqual((st["tokens_source"], st["tokens_per_response"]["p50"]), ("usage", 20))
        for k in ("p50_ms", "min_ms", "max_ms"):  # (e2e - ttft) / (20 - 1), response by response
            self.assertGreater(st["tpot_ms"][k], 0)
        e2e, ttft = st["e2e_ms"]["p50_ms"], st["ttft_ms"]["p50_ms"]
        self.assertAlmostEqual(st["tpot_ms"]["p50_ms"], (e2e - ttft) / 19, delta=(e2e - ttft) / 19 * 0.2)
        self.assertGreaterEqual(e2e, 200 + 9 * 20)
        self.assertLessEqual(e2e, r["latency"]["p50_ms"] + 1e-6)
        self.assertAlmostEqual(st["output_tokens_per_s"]["p50"], 20 / (e2e / 1e3),
                               delta=20 / (e2e / 1e3) * 0.2)
        self.assertEqual(st["goodput"], {"slo": {"ttft_ms": 10000.0, "tpot_ms": 1000.0,
                                                 "e2e_ms": None},
                                         "good": 5, "requests": 5, "share": 1.0})
        # 15 raw timestamps kept: the first response's 12, three of the second
        kept = st["events_kept"]
        self.assertEqual([k["call"] for k in kept], [0, 1])
        self.assertEqual([len(k["t_ms"]) for k in kept], [12, 3])
        self.assertEqual(kept[0]["content"], [False] + [True] * 10 + [False])
        self.assertEqual(st["events_not_kept"], 5 * 12 - 15)
        t = kept[0]["t_ms"]
        self.assertEqual(t, sorted(t))
        self.assertGreaterEqual(t[1], 195.0)
        # an SLO nobody meets: a TTFT of 100 ms
        _, r = self.profile(self.srv.url("/sse?first=200&every=1&n=3"), "--slo", "ttft=100ms",
                            repeats=3)
        self.assertEqual(r["http"]["streaming"]["goodput"]["share"], 0.0)
        # without usage counts: one token per content event, and said so
        _, r = self.profile(self.srv.url("/sse?first=0&every=1&n=4&usage=0&done=0"), repeats=3)
        st = r["http"]["streaming"]
        self.assertEqual((st["tokens_source"], st["tokens_per_response"]["p50"]), ("events", 4))
        self.assertEqual(st["responses_ended_by_done"], 0)
        # a plain answer is no stream
        _, r = self.profile(self.srv.url("/sleep?ms=0"), repeats=3)
        self.assertIsNone(r["http"]["streaming"])

    def test_lines_and_chunked_streams(self):
        url = self.srv.url("/lines?first=50&every=10&n=5")
        _, r = self.profile(url, "--stream", "lines", "--tokens-field", "eval_count",
                            "--keep-events", "0", repeats=3)
        st = r["http"]["streaming"]
        self.assertEqual((st["mode"], st["mode_from"]), ("lines", "--stream"))
        self.assertEqual((st["tokens_source"], st["tokens_field"]), ("tokens_field", "eval_count"))
        self.assertEqual(st["tokens_per_response"]["p50"], 5)
        self.assertGreaterEqual(st["ttft_ms"]["min_ms"], 48.0)
        self.assertGreaterEqual(st["itl_ms"]["p50_ms"], 8.0)
        self.assertEqual((st["events_kept"], st["events_not_kept"]), ([], 15))
        _, r = self.profile(url, "--stream", "chunked", repeats=3)
        st = r["http"]["streaming"]
        self.assertEqual(st["mode"], "chunked")
        self.assertGreaterEqual(st["ttft_ms"]["min_ms"], 48.0)
        self.assertEqual(st["tokens_source"], "events")

    def test_stream_option_refusals(self):
        self.assertIn("--stream 'json': expected sse, lines or chunked",
                      self.refused("--stream", "json", code=2))
        self.assertIn("--keep-events '-3': give a whole number from 0 (none) to 100000000",
                      self.refused("--keep-events", "-3", code=2))
        self.assertIn("--slo ttft=fast: 'ttft' is not NAME=DURATION; write e.g. "
                      "ttft=500ms,tpot=50ms,e2e=2s (ms when no unit)",
                      self.refused("--slo", "ttft=fast", code=2))
        self.assertIn("--slo itl=5ms: unknown name 'itl'; the SLOs are ttft, tpot and e2e",
                      self.refused("--slo", "itl=5ms", code=2))
        self.assertIn("--slo is empty; give e.g. ttft=500ms,tpot=50ms",
                      self.refused("--slo", "", code=2))
        self.assertIn("--tokens-field 'usage..n': expected a dotted path to a number in each "
                      "event's JSON, e.g. usage.output_tokens",
                      self.refused("--tokens-field", "usage..n"))
        self.assertIn("--slo is for HTTP API targets",
                      self.refused("--slo", "ttft=1s", code=2, model="rpxprof-demo:demo_noop"))
        self.assertEqual(self.srv.requests, 0)

    # ---- open-loop load (--rate) ----
    def load(self, url, *extra, check=0):
        p, r, _ = run_report(self, "--model", url, "--method", "GET", "--warmup", "2", "-q",
                             *extra, check=check, timeout=180)
        if r is not None:
            validate_profile(r)
        return p, r

    def test_open_loop_shows_a_stall_that_a_closed_loop_hides(self):
        # 2 ms of service behind one lock; the 300th timed request stalls the server for 1 s.
        # At 100 req/s for 8 s about 100 requests are scheduled during the stall: measured
        # from their intended send times they wait up to 1 s (p99: hundreds of ms), though
        # with 4 connections only 4 of them were in flight when it ended (their service
        # latency, from the actual send, is short). The same server called one request
        # after another shows the stall as a single sample.
        _, r = self.load(self.srv.url("/locked?ms=2&stall_at=302&stall_ms=1000"),
                         "--rate", "100", "--duration", "8", "--concurrency", "4")
        self.assertEqual(r["status"], "complete")
        self.assertTrue(r["timing_scope"].startswith("http_open_loop_latency"), r["timing_scope"])
        ld = r["http"]["load"]
        self.assertEqual((ld["scheduled"], ld["sent"], ld["completed"], ld["failed"],
                          ld["dropped"]), (800, 800, 800, 0, 0))
        self.assertEqual((ld["arrivals"], ld["concurrency"]), ("constant", 4))
        self.assertAlmostEqual(ld["schedule_mean_gap_ms"], 10.0, places=6)
        self.assertLess(abs(ld["achieved_rate_per_s"] - 100) / 100, 0.02, ld)
        self.assertEqual(r["measured_calls"], 800)
        self.assertGreaterEqual(r["latency"]["p99_ms"], 300.0, r["latency"])
        self.assertGreaterEqual(r["latency"]["max_ms"], 1000.0, r["latency"])
        delayed = [x for x in r["latency_samples_ms"] if x >= 100.0]
        self.assertGreaterEqual(len(delayed), 80)  # the ~90 scheduled in the stall's first 900 ms
        self.assertGreaterEqual(ld["late"], 80)  # they found 4 in flight, and waited
        self.assertEqual(ld["max_in_flight"], 4)
        self.assertGreaterEqual(ld["service_latency_ms"]["max_ms"], 1000.0)
        self.assertLess(ld["service_latency_ms"]["p99_ms"], 300.0, ld["service_latency_ms"])
        self.assertEqual(r["http"]["status_counts"], {"200": 800})
        # the closed loop: the stall is one sample of 300
        _, c = self.load(self.srv.url("/locked?ms=2&stall_at=%d&stall_ms=1000" % (802 + 2 + 100)),
                         "--repeats", "300")
        self.assertIsNone(c["http"]["load"])
        self.assertGreaterEqual(c["latency"]["max_ms"], 1000.0)
        self.assertLess(c["latency"]["p99_ms"], 300.0, c["latency"])
        self.assertEqual(len([x for x in c["latency_samples_ms"] if x >= 100.0]), 1)

    def test_poisson_arrivals_dropped_and_late(self):
        _, r = self.load(self.srv.url("/sleep?ms=0"), "--rate", "200", "--duration", "2",
                         "--arrivals", "poisson", "--seed", "7")
        ld = r["http"]["load"]
        self.assertEqual((ld["arrivals"], ld["seed"], ld["sent"]), ("poisson", 7, 400))
        # exponential gaps of mean 5 ms: 400 of them average within 10 % (2 sigma) of it
        self.assertLess(abs(ld["schedule_mean_gap_ms"] - 5.0), 0.5, ld)
        self.assertNotEqual(ld["schedule_mean_gap_ms"], 5.0)
        _, r2 = self.load(self.srv.url("/sleep?ms=0"), "--rate", "200", "--duration", "2",
                          "--arrivals", "poisson", "--seed", "8")
        self.assertNotEqual(r2["http"]["load"]["schedule_mean_gap_ms"], ld["schedule_mean_gap_ms"])
        # --duration bounds the run, but a Poisson schedule may run past it: seed 14 puts the
        # 8th of 8 requests (--rate 4 --duration 2) at 4.25 s; none is dropped with a short
        # --drain, the bound being the later of --duration and the last intended send
        _, r = self.load(self.srv.url("/sleep?ms=0"), "--rate", "4", "--duration", "2",
                         "--arrivals", "poisson", "--seed", "14", "--drain", "0.5")
        ld = r["http"]["load"]
        self.assertAlmostEqual(ld["schedule_mean_gap_ms"] * 7, 4249.8, delta=1.0)
        self.assertEqual((ld["completed"], ld["dropped"], ld["cut_at_end"]), (8, 0, 0), ld)
        # one connection, 300 ms per request, one due every 50 ms: the queue grows; a request
        # still unsent 1 s (--request-timeout) after its time is dropped
        _, r = self.load(self.srv.url("/locked?ms=300"), "--rate", "20", "--duration", "1",
                         "--concurrency", "1", "--request-timeout", "1")
        ld = r["http"]["load"]
        self.assertEqual(ld["sent"] + ld["dropped"], 20, ld)
        self.assertGreaterEqual(ld["dropped"], 1, ld)
        self.assertGreaterEqual(ld["late"], 1, ld)
        self.assertEqual(ld["max_in_flight"], 1)
        self.assertEqual(r["measured_calls"], ld["completed"])
        # the wait counts: latency from the intended time exceeds the service time
        self.assertGreater(r["latency"]["max_ms"], ld["service_latency_ms"]["max_ms"] + 100)

    def test_load_failures_and_interrupt(self):
        # the first of the 2 warmup calls fails: the schedule never starts (issue 26)
        p, r = self.load(self.srv.url("/fail"), "--rate", "50", "--duration", "0.2", check=6)
        ld = r["http"]["load"]
        self.assertEqual((r["status"], ld["scheduled"], ld["sent"], ld["not_sent"]),
                         ("failed", 10, 0, 10))
        self.assertIn("warmup call 1 of 2 failed: HTTP 500 from", p.stderr)
        _, r = self.load(self.srv.url("/fail"), "--rate", "50", "--duration", "0.2",
                         "--warmup", "0", check=6)
        ld = r["http"]["load"]
        self.assertEqual((r["status"], ld["sent"], ld["failed"], ld["completed"]),
                         ("failed", 10, 10, 0))
        self.assertEqual(r["http"]["status_counts"], {"500": 10})
        p, r = self.load(self.srv.url("/fail"), "--rate", "50", "--duration", "1",
                         "--max-failures", "3", "--allow-warmup-failures", check=6)
        self.assertIn("3 calls failed (--max-failures 3); the last: HTTP 500 from", p.stderr)
        # the 2 warmup calls count towards --max-failures: the schedule's first request is the 3rd
        self.assertEqual((r["failed_warmup_calls"], r["http"]["load"]["failed"]), (2, 1))
        # Ctrl-C: the requests answered so far are the samples
        code, err, r = interrupted_run(self, "--model", self.srv.url("/sleep?ms=1"), "--method",
                                       "GET", "--warmup", "0", "--rate", "50", "--duration",
                                       "60", "-q", after_s=1.5)
        self.assertEqual(code, 130, err)
        self.assertEqual(r["status"], "interrupted")
        self.assertGreater(r["measured_calls"], 0)
        self.assertEqual(r["measured_calls"], r["http"]["load"]["completed"])
        self.assertLess(r["http"]["load"]["sent"], 3000)

    def test_load_option_refusals(self):
        url = self.srv.url("/sleep?ms=0")
        for args, msg in [
            (["--rate", "10"], "--rate 10 needs --duration S"),
            (["--duration", "3"], "--arrivals, --duration, --concurrency, --seed, --drain and "
                                  "--load-engine shape an open-loop load; give --rate too"),
            (["--drain", "3"], "--arrivals, --duration, --concurrency, --seed, --drain and "
                               "--load-engine shape an open-loop load; give --rate too"),
            (["--rate", "10", "--duration", "1", "--drain", "-1"],
             "--drain '-1': give a number of seconds, 0 or more"),
            (["--rate", "10", "--duration", "1", "--load-engine", "epoll"],
             "--load-engine 'epoll': expected auto, sockets or curl"),
            (["--rate", "10", "--duration", "1", "--repeats", "5"],
             "--repeats and --rate both set the number of timed requests"),
            (["--rate", "0.1", "--duration", "1"], "--rate 0.1 x --duration 1 = 0 requests"),
            (["--rate", "10", "--duration", "1", "--arrivals", "bursty"],
             "--arrivals 'bursty': expected constant or poisson"),
            (["--rate", "-1", "--duration", "1"], "--rate '-1': give a number above 0"),
            (["--rate", "10", "--duration", "1", "--concurrency", "0"],
             "--concurrency '0': give a whole number from 1 to 100000"),
            (["--rate", "10", "--duration", "1", "--processes", "2"],
             "--rate runs one schedule in one process; drop --processes and --target-precision"),
        ]:
            self.assertIn(msg, self.refused(*args, code=2, model=url))
        # --rate (and --duration) pace a local target's calls; the open-loop options stay HTTP's
        self.assertIn("--concurrency is for HTTP API targets",
                      self.refused("--rate", "10", "--duration", "1", "--concurrency", "2",
                                   code=2, model="rpxprof-demo:demo_noop"))
        self.assertIn("--allow-warmup-failures is for HTTP API targets",
                      self.refused("--allow-warmup-failures", code=2,
                                   model="rpxprof-demo:demo_noop"))
        self.assertEqual(self.srv.requests, 0)

    def test_body_and_method(self):
        body = self.path("body.bin")
        with open(body, "wb") as f:
            f.write(b"\x01" * 1000)
        _, r = self.profile(self.srv.url("/sleep?ms=0"), "--body", body, "--method", "PUT",
                            repeats=5)
        self.assertEqual(r["http"]["method"], "PUT")
        self.assertEqual(r["http"]["body"]["source"], "--body")
        self.assertEqual(r["http"]["body"]["content_type"], "application/octet-stream")
        self.assertEqual(self.srv.seen[-1]["method"], "PUT")
        self.assertEqual(self.srv.seen[-1]["body_bytes"], 1000)
        _, r = self.profile(self.srv.url("/sleep?ms=0"), "--method", "GET", repeats=5)
        self.assertIsNone(r["http"]["body"])
        self.assertEqual(self.srv.seen[-1]["method"], "GET")
        self.assertEqual(self.srv.seen[-1]["body_bytes"], 0)

    # ---- failures ----
    def test_http_500_fails(self):
        # the first warmup call fails: the run ends there, with its reason (issue 26)
        p, r = self.profile(self.srv.url("/fail"), check=6)
        self.assertEqual(r["status"], "failed")
        self.assertEqual((r["measured_calls"], r["failed_calls"], r["failed_warmup_calls"]),
                         (0, 0, 1))
        self.assertIn("warmup call 1 of 2 failed: HTTP 500 from", p.stderr)
        # warmup failures allowed: the timed calls run and are counted
        p, r = self.profile(self.srv.url("/fail"), "--allow-warmup-failures", check=6)
        self.assertEqual(r["status"], "failed")
        self.assertEqual(r["measured_calls"], 0)
        self.assertGreater(r["failed_calls"], 0)
        self.assertEqual(list(r["http"]["status_counts"]), ["500"])
        self.assertIn("HTTP 500", p.stderr)

    def test_a_header_larger_than_curl_takes_is_named(self):
        # issue 26 §4.10: a 1 MiB response header read "curl: Out of memory", as if rpxprof
        # had run out; it is the server's header over curl's limit, and says so
        p, r = self.profile(self.srv.url("/bigheader?kb=1024"), "--method", "GET", "--warmup",
                            "0", check=6, repeats=2)
        self.assertEqual(r["http"]["status_counts"], {"header_too_large": 2})
        self.assertIn("the response's headers are larger than curl accepts", r["error"])
        self.assertNotIn("Out of memory", r["error"])
        self.assertIn("not this machine's memory", p.stderr)
        # a header curl takes is fine
        _, r = self.profile(self.srv.url("/bigheader?kb=50"), "--method", "GET", repeats=2)
        self.assertEqual(r["http"]["status_counts"], {"200": 2})

    def test_redirect_is_a_failure(self):
        _, r = self.profile(self.srv.url("/status?code=302"), "--warmup", "0", check=6, repeats=5)
        self.assertEqual(list(r["http"]["status_counts"]), ["302"])
        self.assertTrue(all(s["path"].startswith("/status") for s in self.srv.seen))

    def test_hang_times_out(self):
        p, r = self.profile(self.srv.url("/hang"), "--request-timeout", "0.5", "--max-failures",
                            "3", "--allow-warmup-failures", check=6)
        self.assertEqual(r["status"], "failed")
        self.assertEqual(r["measured_calls"], 0)
        self.assertEqual(r["failed_calls"] + r["http"]["failed_warmup_calls"], 3)
        self.assertEqual(r["http"]["total_timeout_s"], 0.5)
        self.assertIn("CURLE_OPERATION_TIMEDOUT", p.stderr)

    def test_failures_before_a_hang_are_kept(self):
        # two warmup calls fail, the third hangs: the report still counts the two
        p, r = self.profile(self.srv.url("/fail-then-hang?n=2"), "--warmup", "3",
                            "--call-timeout", "1.5", "--request-timeout", "30",
                            "--allow-warmup-failures", check=4)
        self.assertEqual(r["status"], "timed_out")
        self.assertEqual(r["failed_warmup_calls"], 2)
        self.assertEqual(r["failed_calls"], 0)
        self.assertEqual(r["measured_calls"], 0)

    def test_interrupt_is_not_a_failure(self):
        code, err, r = interrupted_run(self, "--model", self.srv.url("/fail"), "--inputs",
                                       self.npz, "--warmup", "0", "--repeats", "1000000",
                                       "--max-failures", "0", "-q")
        self.assertEqual(code, 130, err)
        self.assertEqual(r["status"], "interrupted")
        self.assertGreater(r["failed_calls"], 0)
        self.assertEqual(r["measured_calls"], 0)

    def test_connection_refused(self):
        _, r = self.profile(f"http://127.0.0.1:{closed_port()}/x", "--max-failures", "5",
                            "--warmup", "0", check=6)
        self.assertEqual(r["status"], "failed")
        self.assertIn("connection_refused", r["http"]["status_counts"])
        self.assertIsNone(r["http"]["phases_ms"]["total"]["p50_ms"])

    def test_some_failures_are_counted_not_timed(self):
        # every 5th request fails: 52 requests (2 warmup), 10 failures
        p, r = self.profile(self.srv.url("/flaky?every=5"), "--max-failures", "0")
        self.assertEqual(r["status"], "complete")
        statuses = r["http"]["status_counts"]
        self.assertEqual(statuses["200"] + statuses.get("500", 0), 50)
        self.assertEqual(r["failed_calls"], statuses["500"])
        self.assertEqual(r["measured_calls"], statuses["200"])
        self.assertEqual(len(r["latency_samples_ms"]), statuses["200"])
        self.assertEqual(r["failed_calls"] + r["failed_warmup_calls"], 52 // 5)
        self.assertTrue(any("timed calls failed and are not latency samples" in n
                            for n in r["notes"]), r["notes"])
        # the default --max-failures (100) is not reached; 5 is
        _, r = self.profile(self.srv.url("/flaky?every=2"), "--max-failures", "5",
                            "--allow-warmup-failures", check=6)
        self.assertEqual(r["failed_calls"] + r["failed_warmup_calls"], 5)
        self.assertIn("--max-failures 5", r["error"])

    def test_tls_is_verified_and_insecure_is_recorded(self):
        # https to a plain-HTTP port: the TLS handshake fails, a counted failure
        url = f"https://127.0.0.1:{self.srv.port}/depth"
        _, r = self.profile(url, "--max-failures", "2", "--warmup", "0", check=6)
        self.assertEqual(list(r["http"]["status_counts"]), ["ssl_error"])
        self.assertTrue(r["http"]["tls_verification"])
        _, r = self.profile(url, "--max-failures", "2", "--warmup", "0", "--insecure", check=6)
        self.assertFalse(r["http"]["tls_verification"])
        self.assertTrue(any("insecure" in n.lower() for n in r["notes"]), r["notes"])

    def test_local_only_options_are_refused(self):
        for extra, what in ((["--cost", "m.onnx"], "--cost"), (["--flops", "1e9"], "--flops"),
                            (["--device", "cuda"], "--device cuda"),
                            (["--gpu", "ref-rtx4090"], "--gpu")):
            p = run("run", "--model", self.srv.url("/depth"), "--inputs", self.npz,
                    "--output", self.path("x.json"), *extra)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(f"{what} describes the model or the device", p.stderr)
            self.assertIn("remote API", p.stderr)
        p = run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", self.npz,
                "--output", self.path("x.json"), "--header", "X-A: 1")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--header is for HTTP API targets", p.stderr)
        self.assertEqual(self.srv.requests, 0)

    def test_credentials_in_the_url_are_redacted(self):
        url = (f"http://user:{TOKEN}@127.0.0.1:{self.srv.port}/sleep?ms=0&api_key={TOKEN}")
        p, r = self.profile(url, repeats=3)
        self.assertNotIn(TOKEN, r["_text"])
        self.assertNotIn(TOKEN, p.stderr + p.stdout)
        shown = f"http://REDACTED@127.0.0.1:{self.srv.port}/sleep?ms=0&api_key=REDACTED"
        self.assertEqual(r["model_callable"], shown)
        self.assertEqual(r["http"]["url"], shown)
        self.assertIn(f"api_key={TOKEN}", self.srv.seen[-1]["path"])  # sent, never reported

    # ---- headers and secrets ----
    def test_header_redaction(self):
        _, r = self.profile(self.srv.url("/echo-headers"),
                            "--header", "Authorization: Bearer ${RPX_TEST_TOKEN}",
                            "--header", "X-Trace: abc", "--header", "Accept: application/x-npz",
                            env={"RPX_TEST_TOKEN": TOKEN},
                            repeats=3)
        self.assertEqual(self.srv.seen[-1]["headers"]["Authorization"], f"Bearer {TOKEN}")
        self.assertEqual(self.srv.seen[-1]["headers"]["X-Trace"], "abc")
        self.assertNotIn(TOKEN, r["_text"])
        self.assertEqual(r["http"]["request_headers"],
                         [{"name": "Authorization", "value": "REDACTED"},
                          {"name": "X-Trace", "value": "REDACTED"},  # not known to be harmless
                          {"name": "Accept", "value": "application/x-npz"}])

    def test_missing_env_var(self):
        out = self.path("missing", "r.json")
        env = {k: v for k, v in os.environ.items() if k != "RPX_TEST_MISSING"}
        os.environ.pop("RPX_TEST_MISSING", None)
        p = run("run", "--model", self.srv.url("/depth"), "--inputs", self.npz, "--output", out,
                "--header", "Authorization: ${RPX_TEST_MISSING}", "-q", env=env)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--header Authorization: ${RPX_TEST_MISSING} is not set in the "
                      "environment; export it", p.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual(self.srv.requests, 0)

    # ---- bad HTTP inputs: refused before any request, no report (docs/errors.md) ----
    def refused(self, *extra, code=1, env=None, model=None):
        out = self.path("refused", "r.json")
        p = run("run", "--model", model or self.srv.url("/depth"), "--inputs", self.npz,
                "--output", out, "-q", *extra, env=env)
        self.assertEqual(p.returncode, code, p.stderr)
        self.assertFalse(os.path.exists(out), "a refused run wrote a report")
        return p.stderr

    def test_bad_headers_method_body_and_url(self):
        self.assertIn("--header number 1 has no ':'; write it as 'Name: value'",
                      self.refused("--header", "Authorization Bearer sekrit-abc"))
        self.assertIn("--header number 2: the name before ':' must be a non-empty HTTP token",
                      self.refused("--header", "X-A: 1", "--header", "Bad Name: v"))
        self.assertIn("--header X-A: the value has a '${' without a valid ${VAR}",
                      self.refused("--header", "X-A: ${1BAD}"))
        err = self.refused("--header", "X-Api-Key: ${RPX_TEST_NL}",
                           env={"RPX_TEST_NL": "line1\r\nX-Injected: sekrit-nl"})
        self.assertIn("--header X-Api-Key: the value (after ${VAR} expansion) contains a line "
                      "break; headers are one line", err)
        self.assertNotIn("sekrit-nl", err)
        self.assertIn("--method post: expected an uppercase HTTP method such as POST, GET, HEAD, "
                      "PUT, PATCH or DELETE", self.refused("--method", "post", code=2))  # before any work
        self.assertIn("--body %s: --method GET sends no body; drop --body" % self.npz,
                      self.refused("--method", "GET", "--body", self.npz))
        self.assertIn("--body /nonexistent/rpx-body.bin: cannot open the request body (No such "
                      "file or directory); give an existing, readable file",
                      self.refused("--body", "/nonexistent/rpx-body.bin"))
        self.assertIn("--model http://exa mple.com/x: not a valid URL",
                      self.refused(model="http://exa mple.com/x"))
        self.assertEqual(self.srv.requests, 0)

    def test_bad_http_option_values(self):
        self.assertIn("--max-failures '-1': give a whole number, 0 (no limit) or more",
                      self.refused("--max-failures", "-1", code=2))
        self.assertIn("--connect-timeout '0': give a number of seconds above 0",
                      self.refused("--connect-timeout", "0", code=2))
        self.assertIn("--request-timeout 'abc': give a number of seconds above 0",
                      self.refused("--request-timeout", "abc", code=2))
        self.assertIn("--insecure is for HTTP API targets (--model http(s)://...), not "
                      "rpxprof-demo:demo_noop",
                      self.refused("--insecure", code=2, model="rpxprof-demo:demo_noop"))
        self.assertIn("--max-failures is for HTTP API targets",
                      self.refused("--max-failures", "3", code=2, model="my_module:predict"))
        self.assertEqual(self.srv.requests, 0)

    def test_plugin_missing(self):
        self.assertIn("cannot load the http plugin /nonexistent/librpxprof-http.so",
                      self.refused(env={"RPX_HTTP_PLUGIN": "/nonexistent/librpxprof-http.so"}))
        lone = self.path("lone", "rpxprof")
        os.makedirs(os.path.dirname(lone))
        shutil.copy(BIN, lone)
        p = subprocess.run([lone, "run", "--model", self.srv.url("/depth"), "--inputs", self.npz,
                            "--output", self.path("x.json")], capture_output=True, text=True,
                           env={**os.environ, "RPX_HTTP_PLUGIN": ""}, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("HTTP API targets need librpxprof-http.so, which was found neither next to "
                      "rpxprof nor where it is installed", p.stderr)
        self.assertFalse(os.path.exists(self.path("x.json")))
        self.assertEqual(self.srv.requests, 0)

    # ---- the schema holds failed reports to their keys (schemas/profile.json) ----
    def test_schema_rejects_broken_http_reports(self):
        _, failed = self.profile(self.srv.url("/fail"), check=6, repeats=3)
        _, ok = self.profile(self.srv.url("/depth"), repeats=3)
        for r in (failed, ok):
            r.pop("_text")
            validate_profile(r)
        def broken(report, change):
            assert_profile_rejects(self, report, change)
        # a failed run (exit 6) is a full report: its measured keys and its reason stay required
        broken(failed, lambda r: r.pop("http"))
        broken(failed, lambda r: r.pop("latency"))
        broken(failed, lambda r: r.pop("failed_calls"))
        broken(failed, lambda r: r.update(error=None))
        broken(failed, lambda r: r["http"]["status_counts"].update({"500": "3"}))
        broken(ok, lambda r: r["http"]["phases_ms"].pop("tls"))
        broken(ok, lambda r: r["http"]["phases_ms"]["total"].update(p50_ms=-1))
        broken(ok, lambda r: r["http"].update(http_version=1.1))
        broken(ok, lambda r: r.update(failed_warmup_calls=-1))
        _, sse = self.profile(self.srv.url("/sse?first=0&every=1&n=3"), "--slo", "ttft=1s",
                              repeats=2)
        sse.pop("_text")
        validate_profile(sse)
        broken(sse, lambda r: r["http"]["streaming"].pop("itl_ms"))
        broken(sse, lambda r: r["http"]["streaming"].update(mode="json"))
        broken(sse, lambda r: r["http"]["streaming"]["tokens_per_response"].update(p50=-1))
        broken(sse, lambda r: r["http"]["streaming"]["goodput"].update(share=1.5))
        broken(sse, lambda r: r["http"]["streaming"]["events_kept"][0]["t_ms"].append("x"))
        _, ld = self.profile(self.srv.url("/sleep?ms=0"), "--rate", "50", "--duration", "0.2",
                             repeats=None)
        ld.pop("_text")
        validate_profile(ld)
        broken(ld, lambda r: r["http"]["load"].pop("dropped"))
        broken(ld, lambda r: r["http"]["load"].update(arrivals="burst"))
        broken(ld, lambda r: r["http"]["load"]["service_latency_ms"].update(p50_ms=-1))


if __name__ == "__main__":
    main()
