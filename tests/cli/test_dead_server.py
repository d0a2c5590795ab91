"""A server that accepts connections and never answers (issue 26 §2), started by the test on
127.0.0.1: a failed warmup call ends the run at once with its reason (unless
--allow-warmup-failures), --duration bounds an open-loop run (the requests in flight get --drain,
then count as timed out; the rest are dropped) through both load engines, and a run that waits
says what for on stderr (not under --quiet)."""
import re
import socket
import threading
import time

from common import TempDirTest, main, run_report, validate_profile

ENGINES = ("sockets", "curl")


class DeadServer:
    """Accepts every connection and holds it open without reading or answering."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1024)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.held = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopping.is_set():
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.held.append(c)

    def url(self, path="/x"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=5)
        for c in self.held:
            c.close()
        self.sock.close()


class DeadServerTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.srv = DeadServer()
        self.addCleanup(self.srv.stop)

    def timed(self, *args, check=6):
        t0 = time.monotonic()
        p, r, _ = run_report(self, "--model", self.srv.url(), "--method", "GET", *args,
                             check=check, timeout=300)
        if r is not None:
            validate_profile(r)
        return p, r, time.monotonic() - t0

    def test_the_warmup_of_an_open_loop_run_ends_it(self):
        # the case: --rate 200 --duration 3 --concurrency 50, the default warmup (10
        # calls) and --request-timeout (60 s): the first warmup call waits at most --duration
        # + --drain, then ends the run with its reason; nothing is sent on the schedule
        p, r, took = self.timed("--rate", "200", "--duration", "3", "--concurrency", "50",
                                "--drain", "1", "--connect-timeout", "2")
        self.assertLess(took, 3 + 1 + 2 + 30)  # --duration + --drain + --connect-timeout, slack
        self.assertEqual(r["status"], "failed")
        self.assertIn("warmup call 1 of 10 failed", r["error"])
        self.assertIn("CURLE_OPERATION_TIMEDOUT", r["error"])
        self.assertIn("--allow-warmup-failures", r["error"])
        self.assertIn("warmup call 1 of 10 failed", p.stderr)
        ld = r["http"]["load"]
        self.assertEqual((ld["scheduled"], ld["sent"], ld["dropped"], ld["not_sent"]),
                         (600, 0, 0, 600))
        self.assertEqual(r["failed_warmup_calls"], 1)
        self.assertEqual(r["measured_calls"], 0)

    def test_duration_bounds_an_open_loop_run(self):
        for engine in ENGINES:
            p, r, took = self.timed("--rate", "200", "--duration", "3", "--concurrency", "50",
                                    "--drain", "1", "--connect-timeout", "2", "--warmup", "0",
                                    "--load-engine", engine)
            self.assertLess(took, 3 + 1 + 2 + 30, engine)
            self.assertEqual(r["status"], "failed", engine)
            ld = r["http"]["load"]
            self.assertEqual(ld["engine"], engine)
            self.assertEqual((ld["requested_duration_s"], ld["drain_s"]), (3.0, 1.0))
            # 50 sent (the concurrency), none answered: cut when --duration + --drain ended and
            # counted as timed out; the 550 never sent are dropped; together the schedule
            self.assertEqual((ld["scheduled"], ld["sent"], ld["completed"]), (600, 50, 0), engine)
            self.assertEqual((ld["failed"], ld["timed_out"], ld["cut_at_end"]), (50, 50, 50),
                             engine)
            self.assertEqual((ld["dropped"], ld["dropped_at_end"], ld["not_sent"]),
                             (550, 550, 0), engine)
            self.assertEqual(ld["sent"] + ld["dropped"] + ld["not_sent"], ld["scheduled"])
            self.assertEqual(r["http"]["status_counts"], {"timeout": 50}, engine)
            self.assertIn("still unanswered when --duration and --drain ended", r["error"])
            self.assertGreaterEqual(ld["duration_s"], 3.9, engine)  # the drain was given

    def test_warmup_failures_may_be_allowed(self):
        p, r, took = self.timed("--rate", "20", "--duration", "1", "--drain", "0",
                                "--warmup", "2", "--allow-warmup-failures")
        # each warmup call waits --duration + --drain (1 s), both fail and count, then the
        # schedule runs and is cut at its end
        self.assertEqual(r["failed_warmup_calls"], 2)
        self.assertEqual(r["http"]["failed_warmup_calls"], 2)
        ld = r["http"]["load"]
        self.assertEqual(ld["sent"] + ld["dropped"], 20)
        self.assertGreater(ld["sent"], 0)
        self.assertEqual(ld["cut_at_end"], ld["sent"])
        self.assertEqual(r["status"], "failed")

    def test_a_closed_loop_run_ends_at_the_first_warmup_timeout(self):
        # no --rate: one call after another; the first warmup call's --request-timeout ends
        # the run (it used to wait that long for every one of 10 + 1000 calls). It takes 6 s,
        # past the 5 s after which the run says what it waits for.
        p, r, took = self.timed("--request-timeout", "6", "--repeats", "1000")
        self.assertLess(took, 6 + 30)
        self.assertEqual(r["status"], "failed")
        self.assertEqual((r["failed_warmup_calls"], r["failed_calls"], r["measured_calls"]),
                         (1, 0, 0))
        self.assertIn("warmup call 1 of 10 failed: curl: Operation timed out", r["error"])
        # (5 s on an idle machine; a busy one may wake the watcher a little later)
        self.assertRegex(p.stderr, r"rpxprof run: waiting for %s: warmup call 1 of 10, [56] s so "
                                   r"far \(request timeout 6 s\)" % re.escape(self.srv.url()))
        # --quiet: no such line
        p, r, _ = self.timed("--request-timeout", "6", "--repeats", "1000", "-q")
        self.assertNotIn("waiting for", p.stderr)
        self.assertEqual(r["status"], "failed")

    def test_a_refused_warmup_call_ends_the_run(self):
        port = self.srv.port
        self.srv.stop()  # nothing listens now: refused
        t0 = time.monotonic()
        p, r, _ = run_report(self, "--model", "http://127.0.0.1:%d/x" % port, "--method",
                             "GET", "--repeats", "1000", check=6, timeout=120)
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(r["status"], "failed")
        self.assertIn("warmup call 1 of 10 failed", r["error"])
        self.assertIn("CURLE_COULDNT_CONNECT", r["error"])
        # allowed, the failures count towards --max-failures as timed ones do
        p, r, _ = run_report(self, "--model", "http://127.0.0.1:%d/x" % port, "--method",
                             "GET", "--repeats", "1000", "--allow-warmup-failures",
                             "--max-failures", "4", check=6, timeout=120)
        self.assertEqual(r["failed_warmup_calls"], 4)
        self.assertIn("4 calls failed (--max-failures 4)", r["error"])


if __name__ == "__main__":
    main()
