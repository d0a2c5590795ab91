"""`rpxprof run --model http(s)://... --http2`: the real binary against a local HTTP/2 server
(tests/cli/h2_server.py: Debian's python3-h2 on an asyncio loop, 127.0.0.1, its own process).
Every stream is answered after a known delay, each on its own timer, and the server counts
connections and streams: one connection carrying many streams at once is multiplexing."""
import os
import shutil
import subprocess

import numpy as np

from common import TempDirTest, main, run, run_report, validate_profile
from h2_server import H2TestServer


class Http2Test(TempDirTest):
    def setUp(self):
        super().setUp()
        self.srv = H2TestServer(self.tmp, delay_ms=5).start()  # h2c: prior knowledge
        self.addCleanup(self.srv.stop)

    def profile(self, url, *extra, check=0):
        p, r, _ = run_report(self, "--model", url, "--method", "GET", "-q", *extra, check=check,
                             timeout=180)
        if r is not None:
            validate_profile(r)
        return p, r

    def tls_server(self, alpn):
        """An HTTPS server offering `alpn` (a self-signed certificate: --insecure)."""
        if not shutil.which("openssl"):
            self.skipTest("no openssl to make a test certificate")
        cert, key = self.path("cert.pem"), self.path("key.pem")
        if not os.path.exists(cert):
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                            key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1"],
                           check=True, capture_output=True, timeout=60)
        srv = H2TestServer(self.tmp, delay_ms=5, tls=(cert, key), alpn=alpn).start()
        self.addCleanup(srv.stop)
        return srv

    # (a) closed loop: HTTP/2 on one connection, the first byte no sooner than the server's delay
    def test_h2c_closed_loop(self):
        _, r = self.profile(self.srv.url("/x?ms=5"), "--http2", "--warmup", "2", "--repeats", "30")
        h = r["http"]
        self.assertEqual(r["status"], "complete")
        self.assertEqual(h["http_version"], "2")
        self.assertEqual(h["status_counts"], {"200": 30})
        ttfb = h["phases_ms"]["time_to_first_byte"]
        self.assertGreaterEqual(ttfb["min_ms"], 5.0, ttfb)  # the server sleeps 5 ms per stream
        self.assertGreaterEqual(ttfb["p50_ms"], 5.0, ttfb)
        self.assertLess(ttfb["p50_ms"], 5.0 + 500.0, ttfb)  # generous: a busy ASan machine
        self.assertLessEqual(ttfb["p50_ms"], h["phases_ms"]["total"]["p50_ms"])
        # one kept-alive h2 connection for every call (libcurl 7.88 breaks a prior-knowledge
        # connection on its reuse unless the target works around it)
        self.assertEqual(h["connections_opened"], 1)
        st = self.srv.stats()
        self.assertEqual((st["connections"], st["streams"], st["protocol_errors"]), (1, 32, 0), st)

    # (b) open loop: every request multiplexed on one connection, many streams at once
    def test_h2c_open_loop_multiplexes(self):
        # 50 ms per stream at 200 requests/s: about 10 in flight when they share a connection
        _, r = self.profile(self.srv.url("/x?ms=50"), "--http2", "--warmup", "2", "--rate", "200",
                            "--duration", "1", "--concurrency", "16")
        h, ld = r["http"], r["http"]["load"]
        self.assertEqual(r["status"], "complete", r.get("error"))
        self.assertEqual(h["http_version"], "2")
        self.assertEqual((ld["scheduled"], ld["sent"], ld["completed"], ld["failed"],
                          ld["dropped"]), (200, 200, 200, 0, 0), ld)
        self.assertEqual(h["status_counts"], {"200": 200})
        self.assertGreater(ld["max_in_flight"], 1, ld)
        st = self.srv.stats()
        self.assertEqual(st["streams"], 202, st)  # 2 warmup calls and the schedule's 200
        # the warmup's connection and the schedule's: not one per request in flight
        self.assertLessEqual(st["connections"], 2, st)
        self.assertGreater(st["max_open_streams"], 1, st)  # streams open at once on a connection
        self.assertEqual(st["protocol_errors"], 0, st)
        self.assertGreater(min(r["latency_samples_ms"]), 50.0)

    # (c) HTTP/1.1 to a server that speaks only h2c: a counted failure per call, not a hang
    def test_without_http2_an_h2c_server_fails(self):
        p, r = self.profile(self.srv.url("/x"), "--warmup", "0", "--repeats", "5",
                            "--max-failures", "2", check=6)
        self.assertEqual(r["status"], "failed")
        self.assertIn("2 calls failed (--max-failures 2); the last: curl: ", p.stderr)
        self.assertEqual(r["http"]["failed_calls"], 2)
        self.assertGreaterEqual(self.srv.stats()["protocol_errors"], 1)
        self.assertEqual(self.srv.stats()["streams"], 0)

    # (d) --http2 is an HTTP option
    def test_http2_refused_for_other_targets(self):
        npz = self.path("in.npz")
        np.savez(npz, x=np.zeros(4, np.float32))
        out = self.path("x", "r.json")
        for model in ("rpxprof-demo:demo_noop", "my_module:predict"):
            p = run("run", "--model", model, "--inputs", npz, "--http2", "--output", out)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(f"--http2 is for HTTP API targets (--model http(s)://...), not {model}",
                          p.stderr)
            self.assertFalse(os.path.exists(out))
        self.assertEqual(self.srv.stats()["connections"], 0)

    # (e) https: h2 by ALPN; under --rate the requests wait for the one connection (PIPEWAIT)
    def test_https_h2_by_alpn(self):
        h2 = self.tls_server("h2,http/1.1")
        _, r = self.profile(h2.url("/x?ms=5"), "--http2", "--insecure", "--warmup", "2",
                            "--repeats", "20")
        self.assertEqual((r["status"], r["http"]["http_version"]), ("complete", "2"))
        self.assertGreaterEqual(r["http"]["phases_ms"]["time_to_first_byte"]["min_ms"], 5.0)
        self.assertEqual((h2.stats()["connections"], h2.stats()["streams"]), (1, 22))
        # 1000 requests/s: several are due during the TLS handshake; without CURLOPT_PIPEWAIT
        # each of them would open a connection of its own (2 to 4 here)
        _, r = self.profile(h2.url("/x?ms=50"), "--http2", "--insecure", "--warmup", "0",
                            "--rate", "1000", "--duration", "0.2", "--concurrency", "16")
        ld = r["http"]["load"]
        self.assertEqual((r["status"], r["http"]["http_version"]), ("complete", "2"))
        self.assertEqual((ld["completed"], ld["failed"], ld["dropped"]), (200, 0, 0), ld)
        self.assertGreater(ld["max_in_flight"], 1, ld)
        st = h2.stats()
        self.assertEqual((st["connections"], st["streams"]), (2, 222), st)  # one per run
        self.assertGreater(st["max_open_streams"], 1, st)

    # (f) https to a server that does not agree to h2: a stop, not an HTTP/1.1 measurement
    def test_https_without_h2_is_refused(self):
        h1 = self.tls_server("http/1.1")
        p, r = self.profile(h1.url("/x"), "--http2", "--insecure", "--warmup", "2",
                            "--repeats", "20", check=1)
        self.assertIn(f"--http2: {h1.url('/x')} answered in HTTP/1.1, not HTTP/2 (the server "
                      "did not agree to h2 in the TLS handshake's ALPN); drop --http2 to measure "
                      "HTTP/1.1", p.stderr)
        self.assertEqual(h1.stats()["h1_requests"], 1)  # the first answer stops the run
        # under --rate too
        p, r = self.profile(h1.url("/x"), "--http2", "--insecure", "--warmup", "0", "--rate", "50",
                            "--duration", "0.2", check=1)
        self.assertIn("answered in HTTP/1.1, not HTTP/2", p.stderr)
        # without --http2 the same server is measured in HTTP/1.1
        _, r = self.profile(h1.url("/x"), "--insecure", "--warmup", "0", "--repeats", "3")
        self.assertEqual((r["status"], r["http"]["http_version"]), ("complete", "1.1"))

if __name__ == "__main__":
    main()
