"""`--history` and `rpxprof history` (docs/history.md, issue 36 §2): the same tests
against an SQLite file and against a real PostgreSQL server (Debian's, started here
by initdb + postgres on a Unix socket in a temporary folder, stopped by the PID in
postmaster.pid). Recording by `run --history` and RPXPROF_HISTORY, `history add` of
older reports and of a batch folder, `show --json` checked against the reports,
`prune`, two writers at once, a writer killed by SIGKILL, an unwritable history
(the report still written, exit 9) and a schema newer than the binary."""
import copy
import glob
import json
import os
import pwd
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import unittest

from common import BIN, BUILD, SANITIZED, TempDirTest, main, run

PG_BIN = "/usr/lib/postgresql/15/bin"
DEMO = "rpxprof-demo:demo_depth"


def read(path):
    with open(path) as f:
        return json.load(f)


def write(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f)


def session_id(report):
    """The report's session id as the history keeps it: the report's own session,
    else (a report written before sessions existed) derived: its start and a digest."""
    s = report.get("session")
    return s["id"] if isinstance(s, dict) else None


def interval_text(v, lo, hi):
    """p50 and interval as `history show` prints them: to the second significant digit of
    the interval's half width (1 to 6 significant digits), as the summary and the page."""
    import math
    hw = (hi - lo) / 2
    e = math.floor(math.log10(abs(v)))
    sig = e - math.floor(math.log10(hw)) + 2 if hw > 1e-9 * abs(v) else 4
    d = min(max(min(max(sig, 1), 6) - 1 - e, 0), 15)
    return "%.*f  [%.*f, %.*f]" % (d, v, d, lo, d, hi)


def variant(report, k, scale=None, commit=None):
    """Report k of a family: another session of the same benchmark on the same machine;
    with scale, its p50s (pooled and per process) are scale x 1 ms, each process a little
    apart (a fixed pattern)."""
    r = copy.deepcopy(report)
    r["created_utc"] = "2026-01-%02dT%02d:%02d:%02dZ" % (1 + k // 3600 % 28, k // 60 % 24, k % 60, k % 60)
    if isinstance(r.get("session"), dict):
        r["session"]["id"] = "20260101T000000Z-%08x" % k
        r["session"]["started"] = r["session"]["ended"] = r["created_utc"]
        if commit:
            r["session"]["version"]["commit"] = commit
    r["latency"]["p50_ms"] = 1.0 + k / 1000.0
    if scale is not None:
        jitter = [1.0, 1.002, 0.998, 1.001, 0.999]
        for i, p in enumerate(r["latency_by_process"]):
            p["p50_ms"] = scale * jitter[(i + k) % 5] * (1 + 0.001 * ((k * 7) % 3 - 1))
        r["latency"]["p50_ms"] = sorted(p["p50_ms"] for p in r["latency_by_process"])[
            len(r["latency_by_process"]) // 2]
    return r


class PostgresServer:
    """A throwaway PostgreSQL cluster: initdb into a temporary folder, postgres on a Unix
    socket there (no TCP), as the unprivileged `postgres` user when run as root."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="rpxpg-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "sock")
        os.mkdir(self.sock)
        self.as_user = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            for p in (self.dir, self.sock):
                os.chown(p, pw.pw_uid, pw.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        with socket.socket() as s:  # a port number for the socket's name only
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        subprocess.run(self.as_user + [f"{PG_BIN}/initdb", "-D", self.data, "-U", "postgres",
                                       "--auth=trust", "-E", "UTF8", "--no-sync"],
                       check=True, capture_output=True, timeout=120)
        self.log = open(os.path.join(self.dir, "log.txt"), "w")
        os.chmod(self.log.name, 0o666)
        self.proc = subprocess.Popen(self.as_user + [f"{PG_BIN}/postgres", "-D", self.data, "-k", self.sock,
                                         "-p", str(self.port), "-c", "listen_addresses=",
                                         "-c", "fsync=off"],
                         stdout=self.log, stderr=self.log, start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            if subprocess.run([f"{PG_BIN}/pg_isready", "-h", self.sock, "-p", str(self.port)],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.2)
        else:
            raise RuntimeError("postgres did not start: " + open(self.log.name).read())
        self.n = 0

    def psql(self, sql, db="postgres"):
        p = subprocess.run([f"{PG_BIN}/psql", "-h", self.sock, "-p", str(self.port), "-U",
                            "postgres", "-d", db, "-tA", "-v", "ON_ERROR_STOP=1", "-c", sql],
                           capture_output=True, text=True, timeout=60)
        if p.returncode:
            raise RuntimeError(p.stderr)
        return p.stdout.strip()

    def new_database(self):
        self.n += 1
        name = f"h{self.n}"
        self.psql(f"CREATE DATABASE {name}")
        return f"postgresql:///{name}?host={self.sock}&port={self.port}&user=postgres", name

    def stop(self):
        pid_file = os.path.join(self.data, "postmaster.pid")
        try:
            with open(pid_file) as f:
                pid = int(f.readline())
            os.kill(pid, signal.SIGINT)  # fast shutdown
            for _ in range(300):
                os.kill(pid, 0)
                time.sleep(0.1)
        except (OSError, ValueError):
            pass
        self.proc.wait(timeout=60)  # reaped (runuser exits with it)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class HistoryCases(TempDirTest):
    """The cases; run by each backend's class (this base class skips them)."""
    backend = None
    _report = None

    def location(self):
        raise unittest.SkipTest("the base of the backends' classes")

    def setUp(self):
        super().setUp()
        self.loc = self.location()
        self.npz = self.path("x.npz")
        run("inputs", "make", self.npz, "rgb=24x32x3:uint8=1", check=0)

    def run_report(self, name, *args, env=None, check=0):
        out = self.path(name, "r.json")
        p = run("run", "--model", DEMO, "--inputs", self.npz, "--repeats", "20", "--processes", "2",
                "--warmup", "1", "--quiet", "--output", out, *args, env=env, check=check)
        return p, out

    def show(self, *args):
        p = run("history", "show", "--json", "--history", self.loc, *args, check=0)
        return json.loads(p.stdout)["series"]

    def sessions(self):
        return [s for series in self.show() for s in series["sessions"]]

    def template(self):
        if HistoryCases._report is None:
            _, out = self.run_report("template")
            HistoryCases._report = read(out)
        return HistoryCases._report

    def sql(self, query):
        if self.backend == "sqlite":
            with sqlite3.connect(self.loc) as db:
                return [r[0] for r in db.execute(query).fetchall()]
        out = self.server.psql(query, db=self.dbname)
        return out.splitlines() if out else []

    def sql_count(self):
        """Sessions in the database, counted by SQL beside the binary."""
        if self.backend == "sqlite":
            with sqlite3.connect(self.loc) as db:
                return db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        return int(self.server.psql("SELECT COUNT(*) FROM sessions", db=self.dbname))

    # ---- recording by run --history, RPXPROF_HISTORY, show --json against the reports
    def test_run_records_session(self):
        _, a = self.run_report("a", "--history", self.loc, "--commit", "c0ffee")
        _, b = self.run_report("b", env={"RPXPROF_HISTORY": self.loc})
        series = self.show()
        self.assertEqual(len(series), 1, series)
        got = series[0]["sessions"]
        self.assertEqual(len(got), 2)
        by_path = {e["report_path"]: e for e in got}
        for path in (a, b):
            r = read(path)
            entry = by_path[os.path.realpath(path)]
            self.assertEqual(entry["p50_ms"], r["latency"]["p50_ms"])
            self.assertEqual(entry["p50_ci_ms"], r["latency_ci"]["p50_ms"])
            self.assertEqual(entry["process_p50_ms"], [p["p50_ms"] for p in r["latency_by_process"]])
            self.assertEqual(entry["processes"], 2)
            self.assertEqual(entry["calls"], r["measured_calls"])
            self.assertEqual(entry["status"], "complete")
            self.assertEqual(entry["report_path"], os.path.realpath(path))
            self.assertEqual(entry["commit"], r["session"]["version"]["commit"])
            if session_id(r):
                self.assertEqual(entry["id"], session_id(r))
                self.assertEqual(series[0]["fingerprint"]["digest"], r["session"]["fingerprint"]["digest"])
        self.assertEqual(by_path[os.path.realpath(a)]["commit"], "c0ffee")
        self.assertLessEqual(got[0]["started"], got[1]["started"])
        text = run("history", "show", "--history", self.loc, check=0).stdout
        self.assertIn(got[0]["id"], text)
        self.assertIn(interval_text(got[0]["p50_ms"], *got[0]["p50_ci_ms"]), text)

    def test_compare_run_and_python_record(self):
        run("compare", "--run", "--model", DEMO, "--model", "rpxprof-demo:demo_noop", "--inputs", self.npz,
            "--repeats", "20", "--processes", "2", "--warmup", "1", "--history", self.loc, check=0)
        self.assertEqual(len(self.sessions()), 2)  # one session, two benchmarks: two series
        self.assertEqual(len(self.show()), 2)
        # without --out-dir its reports are removed at the end: no path to a file that is gone
        self.assertEqual([s["report_path"] for s in self.sessions()], [None, None])
        if SANITIZED:  # the Python package's native module is not instrumented: the
            return     # Python half runs in the first stage (tests/cli/test_python.py's rule)
        code = ("import numpy as np, rpxprof, warnings\n"
                "warnings.simplefilter('error')\n"
                "rpxprof.profile(lambda x: x.sum(), {'x': np.zeros(8)}, repeats=10, quiet=True,"
                " history=%r)\n" % self.loc)
        env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                           env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(self.sessions()), 3)
        bad = self.unwritable()
        p = subprocess.run(["/usr/bin/python3", "-c", code.replace(repr(self.loc), repr(bad))],
                           capture_output=True, text=True, env=env, timeout=300)
        self.assertIn("RuntimeWarning: the session was not recorded", p.stderr)

    # ---- history add: old reports, idempotent, a batch folder
    def test_add_reports_and_batch_folder(self):
        old = self.template()
        old = copy.deepcopy(old)
        old.pop("session", None)  # as written before sessions existed
        f = self.path("old", "r.json")
        write(f, old)
        p = run("history", "add", "--history", self.loc, "--samples", "5", f, check=0)
        self.assertIn("1 session added", p.stdout)
        (kept,) = self.sql("SELECT samples FROM sessions")  # bounded: 5 of the 20
        kept = json.loads(kept)
        self.assertEqual((kept["of"], kept["kept"], len(kept["samples_ms"])), (20, 5, 5))
        self.assertEqual(kept["samples_ms"][0], old["latency_samples_ms"][0])
        p = run("history", "add", "--history", self.loc, f, check=0)
        self.assertIn("0 sessions added, 1 already there", p.stdout)
        self.assertEqual(len(self.sessions()), 1)
        manifest = self.path("m.json")
        write(manifest, {"schema": "rpxprof.manifest/1",
                         "defaults": {"warmup": 1, "repeats": 10, "processes": 2},
                         "tasks": {"depth": {"inputs": self.npz, "unit": "frame"}},
                         "models": [{"name": "d1", "model": DEMO, "tasks": ["depth"]},
                                    {"name": "d2", "model": "rpxprof-demo:demo_depth", "tasks": ["depth"],
                                     "precision": "fp16"}]})
        out = self.path("batch")
        run("batch", manifest, "--out-dir", out, "-q", check=0)
        reports = sorted(glob.glob(os.path.join(out, "**", "*.json"), recursive=True))
        reports = [r for r in reports if read(r).get("schema", "").startswith("rpxprof.profile/")]
        self.assertEqual(len(reports), 2, reports)
        p = run("history", "add", "--history", self.loc, out, check=0)
        self.assertIn("2 sessions added", p.stdout)
        got = self.sessions()
        self.assertEqual(len(got), 3)
        paths = {s["report_path"] for s in got}
        for r in reports:
            self.assertIn(os.path.realpath(r), paths)
        # a batch recording itself
        run("batch", manifest, "--out-dir", self.path("batch2"), "-q", "--history", self.loc, check=0)
        self.assertEqual(len(self.sessions()), 5)
        # a file that is no report: exit 1, named
        bad = self.path("bad.json")
        write(bad, {"schema": "rpxprof.manifest/1"})
        p = run("history", "add", "--history", self.loc, bad, check=1)
        self.assertIn("bad.json", p.stderr)

    # ---- prune
    def test_prune(self):
        t = self.template()
        for k in range(4):
            write(self.path("fam", f"{k}.json"), variant(t, k))
        run("history", "add", "--history", self.loc, self.path("fam"), check=0)
        self.assertEqual(len(self.sessions()), 4)
        p = run("history", "prune", "--history", self.loc, "--keep-last", "1", "--dry-run", check=0)
        self.assertIn("3 sessions would be removed", p.stdout)
        self.assertEqual(len(self.sessions()), 4)
        p = run("history", "prune", "--history", self.loc, "--keep-last", "1", check=0)
        self.assertIn("3 sessions removed", p.stdout)
        left = self.sessions()
        self.assertEqual(len(left), 1)
        self.assertEqual(left[0]["p50_ms"], variant(t, 3)["latency"]["p50_ms"])  # the newest
        p = run("history", "prune", "--history", self.loc, "--older-than", "1", check=0)
        self.assertEqual(len(self.sessions()), 0)  # its session started in January 2026
        run("history", "prune", "--history", self.loc, check=2)  # no rule

    # ---- two writers at once lose nothing
    def test_concurrent_writers(self):
        t = self.template()
        n = 40
        for k in range(2 * n):
            write(self.path("w%d" % (k % 2), f"{k}.json"), variant(t, k))
        procs = [subprocess.Popen([BIN, "history", "add", "--history", self.loc, self.path(f"w{i}")],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(2)]
        for p in procs:
            out, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, err)
            self.assertIn(f"{n} sessions added", out)
        self.assertEqual(len(self.sessions()), 2 * n)
        self.assertEqual(self.sql_count(), 2 * n)

    # ---- a writer killed by SIGKILL mid-write
    def test_sigkill_mid_write(self):
        t = self.template()
        n = 400
        for k in range(n):
            write(self.path("many", f"{k:04d}.json"), variant(t, k))
        run("history", "add", "--history", self.loc, self.path("many", "0000.json"), check=0)
        p = subprocess.Popen([BIN, "history", "add", "--history", self.loc, self.path("many")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline and self.sql_count() < 20:
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)
        p.wait()
        if self.backend == "sqlite":
            with sqlite3.connect(self.loc) as db:
                self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        got = self.sessions()  # readable by rpxprof, consistent with SQL
        self.assertGreaterEqual(len(got), 20)
        self.assertLess(len(got), n, "the writer finished before the kill: nothing was tested")
        self.assertEqual(len(got), self.sql_count())
        for s in got:
            self.assertIsInstance(s["p50_ms"], float)
        p = run("history", "add", "--history", self.loc, self.path("many"), check=0)
        self.assertEqual(len(self.sessions()), n)

    # ---- an unwritable history: the report written, exit 9, the history named
    def test_unwritable_history(self):
        bad = self.unwritable()
        p, out = self.run_report("u", "--history", bad, check=9)
        self.assertTrue(os.path.exists(out))
        self.assertEqual(read(out)["status"], "complete")
        self.assertIn("history", p.stderr)
        self.assertIn(self.shown(bad), p.stderr)
        self.assertIn("not recorded", p.stderr)
        manifest = self.path("m.json")
        write(manifest, {"schema": "rpxprof.manifest/1",
                         "defaults": {"warmup": 1, "repeats": 10, "processes": 2},
                         "tasks": {"depth": {"inputs": self.npz, "unit": "frame"}},
                         "models": [{"name": "d1", "model": DEMO, "tasks": ["depth"]}]})
        p = run("batch", manifest, "--out-dir", self.path("b"), "-q", "--history", bad, check=9)
        self.assertTrue(os.path.exists(self.path("b", "depth", "d1.json")))
        self.assertIn(self.shown(bad), p.stderr)

    # ---- history check: the newest session's verdict and --fail-on-regression
    def test_check(self):
        t = self.template()
        for k in range(12):  # ten sessions of commit "base" at 1 ms, then two of "head" 10 % slower
            write(self.path("slow" if k < 11 else "slow2", f"{k:02d}.json"),
                  variant(t, k, 1.0 if k < 10 else 1.10, "base" if k < 10 else "head"))
        for k in range(12):
            write(self.path("same", f"{k:02d}.json"), variant(t, 100 + k, 1.0))
        run("history", "add", "--history", self.loc, self.path("slow"), check=0)
        p = run("history", "check", "--json", "--history", self.loc, check=0)
        (res,) = json.loads(p.stdout)
        self.assertEqual(res["sessions"], 11)
        # one slower head session may be a bad session: not `slower`; a second session of
        # the head commit decides (every trailing session of the newest commit is the head)
        self.assertNotEqual(res["newest"]["verdict"], "slower", res)
        run("history", "check", "--history", self.loc, "--fail-on-regression", check=0)
        run("history", "add", "--history", self.loc, self.path("slow2"), check=0)
        p = run("history", "check", "--json", "--history", self.loc, check=0)
        (res,) = json.loads(p.stdout)
        self.assertEqual(res["sessions"], 12)
        self.assertEqual(res["newest"]["head_sessions"], 2, res)
        p = run("history", "check", "--json", "--history", self.loc, "--confirm", "3", check=0)
        (res,) = json.loads(p.stdout)
        self.assertEqual(res["newest"]["verdict"], "slower", res)
        self.assertEqual(res["newest"]["commit"], "head")
        run("history", "check", "--history", self.loc, "--confirm", "3", "--fail-on-regression",
            check=3)
        text = run("history", "check", "--history", self.loc, "--confirm", "3", check=0).stdout
        self.assertIn("(commit head): slower", text)
        # an A/A series (another history): never exit 3
        other = self.location()
        run("history", "add", "--history", other, self.path("same"), check=0)
        p = run("history", "check", "--json", "--history", other, "--confirm", "3",
                "--fail-on-regression", check=0)
        self.assertNotEqual(json.loads(p.stdout)[0]["newest"]["verdict"], "slower")

    # ---- compare --history: the between-session spread of the base's series, else its machine's
    def test_compare_history(self):
        t = self.template()
        p50 = t["latency"]["p50_ms"]
        for k in range(8):  # earlier sessions of this benchmark, up to 2 % apart
            write(self.path("s", f"{k:02d}.json"), variant(t, k, p50 * (1.0 + 0.01 * (k % 3))))
        _, base = self.run_report("base")
        _, new = self.run_report("new")
        p = run("compare", base, new, "--json", check=0)
        self.assertEqual(json.loads(p.stdout)["between_session"]["source"], "default")
        run("history", "add", "--history", self.loc, self.path("s"), check=0)
        p = run("compare", base, new, "--json", "--history", self.loc, check=0)
        got = json.loads(p.stdout)["between_session"]
        self.assertEqual(got["source"], "series", got)
        p = run("compare", base, new, "--json", env={"RPXPROF_HISTORY": self.loc}, check=0)
        self.assertEqual(json.loads(p.stdout)["between_session"]["source"], "series")
        # another benchmark on the same machine: the machine's record
        other = read(base)
        other["session"]["benchmark"]["id"] = "0123456789abcdef"
        write(self.path("other.json"), other)
        p = run("compare", self.path("other.json"), new, "--json", "--history", self.loc, check=0)
        self.assertEqual(json.loads(p.stdout)["between_session"]["source"], "machine")

    def test_compare_history_leaves_out_new_commit(self):
        """NEW's session and every session of NEW's commit (it differs from BASE's) are not
        drift: a history holding them gives BASE's series the same spread as one without."""
        t = self.template()
        p50 = t["latency"]["p50_ms"]
        _, base = self.run_report("base")
        _, new = self.run_report("new")
        r = read(new)
        r["session"]["version"]["commit"] = "head"
        write(new, r)
        commit = read(base)["session"]["version"].get("commit") or "base"
        for k in range(10):  # eight sessions of BASE's commit up to 2 % apart, two of "head" 50 % slower
            rep = variant(t, k, p50 * (1.0 + 0.01 * (k % 3)) if k < 8 else p50 * 1.5,
                          commit if k < 8 else "head")
            write(self.path("all", f"{k:02d}.json"), rep)
            if k < 8:
                write(self.path("old", f"{k:02d}.json"), rep)
        write(self.path("all", "new.json"), r)
        other = self.location()
        run("history", "add", "--history", self.loc, self.path("all"), check=0)
        run("history", "add", "--history", other, self.path("old"), check=0)
        got = [json.loads(run("compare", base, new, "--json", "--history", h, check=0).stdout)
               ["between_session"] for h in (self.loc, other)]
        self.assertEqual(got[0]["source"], "series", got)
        self.assertAlmostEqual(got[0]["sigma_between_log"], got[1]["sigma_between_log"], 12, got)

    def test_benchmark_typo_fails(self):
        """A --benchmark the history does not hold: exit 1 naming those it holds (a CI gate
        must not pass on a typo)."""
        t = self.template()
        write(self.path("s", "00.json"), variant(t, 0, 1.0))
        run("history", "add", "--history", self.loc, self.path("s"), check=0)
        name = t["session"]["benchmark"].get("name") or t["session"]["benchmark"]["id"]
        for cmd in ("check", "show"):
            p = run("history", cmd, "--history", self.loc, "--benchmark", "no-such-bench", check=1)
            self.assertIn("no-such-bench", p.stderr)
            self.assertIn(name, p.stderr)
            run("history", cmd, "--history", self.loc, "--benchmark", name, check=0)

    def test_check_says_newest_incomplete(self):
        t = self.template()
        for k in range(6):
            r = variant(t, k, 1.0)
            if k == 5:
                r["status"] = "timed_out"
            write(self.path("s", f"{k:02d}.json"), r)
        run("history", "add", "--history", self.loc, self.path("s"), check=0)
        text = run("history", "check", "--history", self.loc, check=0).stdout
        self.assertIn("not complete (status timed_out)", text)
        p = run("history", "check", "--json", "--history", self.loc, check=0)
        self.assertEqual(json.loads(p.stdout)[0]["newest_skipped"]["status"], "timed_out")

    def test_add_folder_names_skipped_files(self):
        t = self.template()
        write(self.path("s", "00.json"), variant(t, 0, 1.0))
        write(self.path("s", "other.json"), {"schema": "something/1"})
        with open(self.path("s", "notes.txt"), "w") as f:
            f.write("x")
        p = run("history", "add", "--history", self.loc, self.path("s"), check=0)
        lines = [l for l in p.stderr.splitlines() if "skipped" in l]
        self.assertEqual(len(lines), 2, p.stderr)
        self.assertTrue(any("other.json" in l and "not an rpxprof run report" in l for l in lines))
        self.assertTrue(any("notes.txt" in l for l in lines))
        self.assertIn("1 session added", p.stdout)

    def test_sessions_ordered_by_time(self):
        """An imported old report's derived session ("...:10Z", no milliseconds) is older than
        a session started at "...:10.900Z": ordered by time, not as text."""
        t = self.template()
        real = variant(t, 1, 1.0)
        real["session"]["started"] = real["session"]["ended"] = "2026-12-06T11:00:10.900Z"
        old = variant(t, 2, 1.1)
        del old["session"]
        old["created_utc"] = "2026-12-06T11:00:10Z"
        write(self.path("a", "real.json"), real)
        write(self.path("b", "old.json"), old)
        run("history", "add", "--history", self.loc, self.path("a"), self.path("b"), check=0)
        (series,) = self.show()
        self.assertEqual([s["started"] for s in series["sessions"]],
                         ["2026-12-06T11:00:10Z", "2026-12-06T11:00:10.900Z"], series)

    def test_derived_duplicate_of_a_session(self):
        """The same run imported with and without its session block is one session."""
        t = self.template()
        write(self.path("a", "r.json"), t)
        bare = copy.deepcopy(t)
        del bare["session"]
        write(self.path("b", "r.json"), bare)
        run("history", "add", "--history", self.loc, self.path("a"), check=0)
        p = run("history", "add", "--history", self.loc, self.path("b"), check=0)
        self.assertIn("0 sessions added, 1 already there", p.stdout)
        self.assertEqual(len(self.sessions()), 1)

    def test_show_digits_the_interval_supports(self):
        t = self.template()
        r = variant(t, 0, 1.0)
        r["latency"]["p50_ms"] = 0.160459
        r["latency_ci"]["p50_ms"] = [0.156052, 0.163831]
        write(self.path("s", "r.json"), r)
        run("history", "add", "--history", self.loc, self.path("s"), check=0)
        text = run("history", "show", "--history", self.loc, check=0).stdout
        self.assertIn("0.1605  [0.1561, 0.1638]", text)
        (e,) = self.sessions()
        self.assertEqual(e["p50_ms"], 0.160459)
        self.assertEqual(e["p50_ci_ms"], [0.156052, 0.163831])

    def test_minor_words(self):
        """"1 session"; a derived session says "derived": true in show --json; a file that is
        not SQLite is named as not an rpxprof history."""
        t = self.template()
        old = variant(t, 0, 1.0)
        del old["session"]
        write(self.path("s", "old.json"), old)
        run("history", "add", "--history", self.loc, self.path("s"), check=0)
        (e,) = self.sessions()
        self.assertIs(e.get("derived"), True, e)
        text = run("history", "check", "--history", self.loc, check=0).stdout
        self.assertIn(": 1 session\n", text)
        if self.backend == "sqlite":
            bad = self.path("bad.db")
            with open(bad, "w") as f:
                f.write("this is not a database, not at all" * 100)
            p = run("history", "show", "--history", bad, check=1)
            self.assertIn(bad + ": not an rpxprof history (not an SQLite database, or damaged): ",
                          p.stderr)

    # ---- a schema newer than this rpxprof
    def test_newer_schema(self):
        self.run_report("a", "--history", self.loc)
        if self.backend == "sqlite":
            with sqlite3.connect(self.loc) as db:
                db.execute("INSERT INTO schema_version VALUES (99, 'x')")
        else:
            self.server.psql("INSERT INTO schema_version VALUES (99, 'x')", db=self.dbname)
        p = run("history", "show", "--history", self.loc, check=1)
        self.assertIn("version 99, newer than this rpxprof knows", p.stderr)
        p, out = self.run_report("b", "--history", self.loc, check=9)
        self.assertIn("newer", p.stderr)


class SqliteHistoryTest(HistoryCases):
    backend = "sqlite"

    def location(self):
        self.n_loc = getattr(self, "n_loc", 0) + 1
        os.makedirs(self.path("h"), exist_ok=True)
        return self.path("h", "history%d.db" % self.n_loc)

    def unwritable(self):
        with open(self.path("plain"), "w") as f:
            f.write("x")
        return self.path("plain", "history.db")  # under a file: never a database

    def shown(self, loc):
        return loc


class PostgresHistoryTest(HistoryCases):
    backend = "postgresql"

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(f"{PG_BIN}/postgres"):
            raise unittest.SkipTest(f"{PG_BIN}/postgres: not installed (scripts/setup.sh: postgresql)")
        cls.server = PostgresServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def location(self):
        loc, self.dbname = self.server.new_database()
        return loc

    def unwritable(self):  # a database that does not exist
        return f"postgresql:///nosuchdb?host={self.server.sock}&port={self.server.port}&user=postgres"

    def shown(self, loc):
        return loc


if __name__ == "__main__":
    main()
