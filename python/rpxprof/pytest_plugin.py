"""rpxprof's pytest plugin: the fixture `rpxprof_benchmark(fn, *args, **options)` profiles
fn with rpxprof.profile. With a history (--rpxprof-history PATH, default RPXPROF_HISTORY: an
SQLite file or postgresql://...), --rpxprof-save appends each benchmark's session to it and
--rpxprof-compare checks each benchmark's new session against its series there (the same
test on the same machine fingerprint), with an interval that holds the between-session
spread; a test fails only on `slower`, never on `inconclusive` or `incomparable` (another
machine or other inputs: a new series). Without a history, --rpxprof-save=DIR keeps each
report as DIR/<test id>.json and --rpxprof-compare=BASELINE_DIR compares with those files.
Loaded with `pytest -p rpxprof.pytest_plugin`, or by the `pytest11` entry point of an
installed rpxprof.

    def test_predict(rpxprof_benchmark):
        report = rpxprof_benchmark(predict, {"rgb": frame})
        assert report.p50_ms < 50

pytest-benchmark's options that mean the same thing map to --rpxprof-* ones (docs/python.md,
"pytest"). rpxprof itself is imported only when a test uses the fixture."""
import contextlib
import json
import os
import re

import pytest

_STASH = "_rpxprof_results"
_HISTORY = "_rpxprof_history"
_NAMES = "_rpxprof_names"


def pytest_addoption(parser):
    g = parser.getgroup("rpxprof", "rpxprof benchmarks (the rpxprof_benchmark fixture)")
    g.addoption("--rpxprof-history", metavar="PATH", default=None,
                help="the history of sessions: an SQLite file or postgresql://USER@HOST/DB "
                     "(default: RPXPROF_HISTORY); --rpxprof-save and --rpxprof-compare "
                     "without a folder use it (docs/ci.md)")
    g.addoption("--rpxprof-save", metavar="DIR", nargs="?", const="", default=None,
                help="append each benchmark's session to the history (--rpxprof-history); "
                     "with DIR, also keep each report as DIR/<test id>.json "
                     "(pytest-benchmark: --benchmark-save/--benchmark-storage)")
    g.addoption("--rpxprof-compare", metavar="BASELINE_DIR", nargs="?", const="",
                default=None,
                help="check each benchmark's session against its series in the history "
                     "(the same test on the same machine fingerprint, the between-session "
                     "spread in the interval); with BASELINE_DIR, against the report "
                     "BASELINE_DIR/<test id>.json an earlier --rpxprof-save=DIR kept; the "
                     "test fails when the verdict is slower, never on inconclusive or "
                     "incomparable (pytest-benchmark: --benchmark-compare with "
                     "--benchmark-compare-fail)")
    g.addoption("--rpxprof-confirm", metavar="N", type=int, default=3,
                help="with --rpxprof-compare on the history: when a benchmark's session looks "
                     "slower than its series but one bad session could be that slow, run up to "
                     "N more sessions of it before the verdict (default 3; 0: never, one "
                     "session is then never enough on a noisy machine)")
    g.addoption("--rpxprof-threshold", metavar="T", default="1%",
                help="what counts as a change for --rpxprof-compare: 1%% (default) or 0.01")
    g.addoption("--rpxprof-processes", metavar="N", type=int, default=5,
                help="worker processes per benchmark (default 5: intervals between "
                     "processes, which a comparison needs); 0: one worker in the pytest "
                     "process")
    g.addoption("--rpxprof-repeats", metavar="N", type=int, default=None,
                help="timed calls per benchmark (pytest-benchmark: --benchmark-min-rounds); "
                     "default: rpxprof.profile's")
    g.addoption("--rpxprof-warmup", metavar="N", type=int, default=None,
                help="untimed calls per process (pytest-benchmark: "
                     "--benchmark-warmup-iterations); default: rpxprof.profile's")
    g.addoption("--rpxprof-max-time", metavar="S", type=float, default=None,
                help="auto-ranging's max_time: seconds a benchmark's profile() takes at most "
                     "(pytest-benchmark: --benchmark-max-time); default: rpxprof.profile's "
                     "(10 s); ignored when repeats are given")
    g.addoption("--rpxprof-min-time", metavar="S", type=float, default=None,
                help="auto-ranging's min_time: seconds of timed calls at least (pytest-"
                     "benchmark: --benchmark-min-time, which is per round there); default: "
                     "rpxprof.profile's (1 s)")
    g.addoption("--rpxprof-disable", action="store_true", default=False,
                help="call each benchmarked function once, untimed, and return None "
                     "(pytest-benchmark: --benchmark-disable)")
    g.addoption("--rpxprof-skip", action="store_true", default=False,
                help="skip the tests that use rpxprof_benchmark (pytest-benchmark: "
                     "--benchmark-skip)")
    g.addoption("--rpxprof-only", action="store_true", default=False,
                help="run only the tests that use rpxprof_benchmark (pytest-benchmark: "
                     "--benchmark-only)")


def pytest_configure(config):
    config.addinivalue_line("markers", "rpxprof: a test that uses the rpxprof_benchmark fixture")
    setattr(config, _STASH, [])
    setattr(config, _NAMES, {})  # benchmark name -> the test id that has it
    if config.getoption("rpxprof_skip") and config.getoption("rpxprof_only"):
        raise pytest.UsageError("--rpxprof-skip and --rpxprof-only exclude each other; give one")
    c = config.getoption("rpxprof_confirm")
    if c < 0 or c > 10:
        raise pytest.UsageError("--rpxprof-confirm %d: give 0 (never) to 10 more sessions" % c)
    p = config.getoption("rpxprof_processes")
    if p is not None and p < 0:
        raise pytest.UsageError("--rpxprof-processes %d: give 0 (the pytest process) or more" % p)
    for k in ("max_time", "min_time"):
        t = config.getoption("rpxprof_" + k)
        if t is not None and not t > 0:
            raise pytest.UsageError("--rpxprof-%s %g: give seconds above 0"
                                    % (k.replace("_", "-"), t))
    lo, hi = config.getoption("rpxprof_min_time"), config.getoption("rpxprof_max_time")
    if lo is not None and hi is not None and lo > hi:
        raise pytest.UsageError("--rpxprof-min-time %g is more than --rpxprof-max-time %g: "
                                "give min <= max" % (lo, hi))
    history = config.getoption("rpxprof_history") or os.environ.get("RPXPROF_HISTORY") or None
    setattr(config, _HISTORY, history)
    save = config.getoption("rpxprof_save")
    for flag, v in (("--rpxprof-save", save), ("--rpxprof-compare",
                                               config.getoption("rpxprof_compare"))):
        if v == "" and not history:
            raise pytest.UsageError(
                "%s without a folder uses the history: give --rpxprof-history PATH (an SQLite "
                "file, or postgresql://USER@HOST/DB) or set RPXPROF_HISTORY; or give %s a "
                "folder" % (flag, flag))
    if save and os.path.exists(save) and not os.path.isdir(save):
        raise pytest.UsageError("--rpxprof-save %s: is a file, not a folder; give a folder (it "
                                "is made when missing; each test's report is kept in it)" % save)
    base = config.getoption("rpxprof_compare")
    if base and not os.path.isdir(base):
        raise pytest.UsageError("--rpxprof-compare %s: no such folder; give the folder an "
                                "earlier run wrote with --rpxprof-save" % base)


def pytest_collection_modifyitems(config, items):
    skip, only = config.getoption("rpxprof_skip"), config.getoption("rpxprof_only")
    if not (skip or only):
        return
    for item in items:
        uses = "rpxprof_benchmark" in getattr(item, "fixturenames", ())
        if skip and uses:
            item.add_marker(pytest.mark.skip(reason="--rpxprof-skip: a benchmark"))
        elif only and not uses:
            item.add_marker(pytest.mark.skip(reason="--rpxprof-only: not a benchmark"))


def benchmark_name(item):
    """A test's name as a benchmark, the same whatever pytest's rootdir and wherever the
    checkout is: the test module's import name by Python's package rules (the folders
    with an __init__.py above the file, as the Python target names a module file:
    src/python/py_module_file.c), "::", then the test's name within the module with its
    class and parameters ("tests/perf/test_x.py::TestA::test_b[2]", with
    tests/perf/__init__.py only, -> "perf.test_x::TestA::test_b[2]"). An item that is not
    in a Python module file (a doctest of a text file, another plugin's item) keeps its
    node id."""
    module = item.getparent(pytest.Module)
    path = getattr(module, "path", None) or getattr(module, "fspath", None)
    if module is None or path is None or not item.nodeid.startswith(module.nodeid + "::"):
        return item.nodeid
    folder, file = os.path.split(os.path.abspath(str(path)))
    if not file.endswith(".py"):
        return item.nodeid
    parts = [file[:-3]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, pkg = os.path.split(folder)
        if not pkg:
            break
        parts.insert(0, pkg)
    return ".".join(parts) + item.nodeid[len(module.nodeid):]


def report_key(nodeid):
    """The file name (without .json) a test's report has: its id with every character
    other than letters, digits, '.', '_' and '-' made '_' ("tests/test_x.py::test_a[2]"
    -> "tests_test_x.py__test_a_2_")."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", nodeid)


class Benchmark:
    """The rpxprof_benchmark fixture's value: call it as rpxprof.profile (fn, then the
    model's arguments, then options as keywords); returns the Report. A second call in
    the same test is keyed <test id>-2, and so on."""

    def __init__(self, request):
        self._request = request
        self._config = request.config
        self.reports = []

    def _options(self, options):
        cfg = self._config
        out = {}
        p = cfg.getoption("rpxprof_processes")
        if p:
            out["processes"] = p
        for k in ("repeats", "warmup", "max_time", "min_time"):
            v = cfg.getoption("rpxprof_" + k)
            if v is not None:
                out[k] = v
        out.update(options)  # what the test says wins
        return out

    def __call__(self, fn, *args, **options):
        if self._config.getoption("rpxprof_disable"):
            return self._call_once(fn, args, options)
        import rpxprof
        cfg = self._config
        nodeid = self._request.node.nodeid
        n = "" if not self.reports else "-%d" % (len(self.reports) + 1)
        key = report_key(nodeid) + n
        meta = dict(options.pop("meta", None) or {})
        meta.setdefault("pytest_nodeid", nodeid)
        save, base_dir = cfg.getoption("rpxprof_save"), cfg.getoption("rpxprof_compare")
        history = getattr(cfg, _HISTORY)
        to_history = history if save is not None else None
        # the benchmark is the test (and its call number): its identity in a history, and
        # the same name in every run, whatever the function is called, pytest's rootdir
        # or the checkout's folder
        if "name" not in options:
            options["name"] = self._unique(benchmark_name(self._request.node) + n, nodeid)

        def session():
            # the plugin decides what goes into the history: --rpxprof-save
            with _no_history_from_environment(bool(history) and "history" not in options):
                return rpxprof.profile(fn, *args, meta=meta, **self._options(dict(options)))
        report = session()
        self.reports.append(report)
        entry = {"nodeid": nodeid, "key": key, "report": report, "verdict": None,
                 "comparison": None, "note": None, "history": None, "head": []}
        getattr(cfg, _STASH).append(entry)
        path = None
        if save:
            os.makedirs(save, exist_ok=True)
            path = os.path.join(save, key + ".json")
            report.write(path)
        slower = None
        if base_dir == "":
            slower = self._compare_history(rpxprof, entry, history, session)
        if to_history:  # recorded after the check, which reads only the earlier sessions
            for r in [report] + entry["head"]:
                self._record(rpxprof, entry, r, to_history, path if r is report else None)
        if slower:
            pytest.fail(slower, pytrace=False)
        if base_dir:
            self._compare(rpxprof, entry, os.path.join(base_dir, key + ".json"))
        return report

    def _unique(self, name, nodeid):
        """name, after checking that no other test of the run has it: two test files of
        the same module name outside packages (pytest's --import-mode=importlib allows
        them) would otherwise share one series."""
        other = getattr(self._config, _NAMES).setdefault(name, nodeid)
        if other != nodeid:
            pytest.fail("rpxprof: %s and %s are both the benchmark %s (a benchmark is named by "
                        "its test module's import name, which does not hold the folders "
                        "without an __init__.py): add an __init__.py to their folders, or give "
                        "the test's rpxprof_benchmark a name=" % (other, nodeid, name),
                        pytrace=False)
        return name

    def _record(self, rpxprof, entry, report, history, path):
        from . import _core
        try:
            _core.history_record(history, json.dumps(report, allow_nan=False),
                                 os.path.abspath(path) if path else None)
        except rpxprof.RpxprofError as e:
            entry["note"] = "not recorded: %s" % e
            pytest.fail("rpxprof: %s: the report is complete, but %s" % (entry["nodeid"], e),
                        pytrace=False)

    def _compare_history(self, rpxprof, entry, history, session):
        """The session against its series in the history, with up to --rpxprof-confirm
        more sessions of it (session() runs one) when it looks slower but one bad session
        could be that slow: the message a slower one fails with (the caller fails the
        test after recording the sessions), else None."""
        from . import _core, _results
        threshold = _results._threshold(self._config.getoption("rpxprof_threshold"))
        confirm = self._config.getoption("rpxprof_confirm")
        first = json.dumps(entry["report"], allow_nan=False)
        while True:
            try:
                res = json.loads(_core.history_compare(
                    history, first, threshold=threshold, confirm=confirm,
                    head=[json.dumps(r, allow_nan=False) for r in entry["head"]]))
            except rpxprof.RpxprofError as e:
                entry["note"] = "not compared: %s" % e
                pytest.fail("rpxprof: %s cannot be compared with the history: %s"
                            % (entry["nodeid"], e), pytrace=False)
            newest = (res.get("check") or {}).get("newest") or {}
            more = min(newest.get("sessions_needed") or 0, confirm - len(entry["head"]))
            if res["verdict"] != "inconclusive" or more <= 0:
                break
            entry["head"] += [session() for _ in range(more)]  # the head's confirming sessions
        entry["verdict"], entry["history"] = res["verdict"], res
        spread = (res.get("check") or {}).get("between_session") or {}
        ci = newest.get("ratio_ci") or (None, None)
        what = ("%d new session%s / its series' last %s sessions %s, 95%% CI [%s, %s] with the "
                "between-session spread (sigma %s), threshold %s"
                % (1 + len(entry["head"]), "s" if entry["head"] else "",
                   newest.get("baseline_sessions"), _r(newest.get("ratio")), _r(ci[0]),
                   _r(ci[1]), _r(spread.get("sigma_between_log")),
                   self._config.getoption("rpxprof_threshold")))
        if res["verdict"] == "slower":
            return ("rpxprof: %s is slower than its history %s (%s): %s. A test fails only on "
                    "the verdict 'slower', never on 'inconclusive' or 'incomparable'."
                    % (entry["nodeid"], history, what, res.get("why") or ""))
        if res["verdict"] == "incomparable":
            differs = ", ".join("%s %s -> %s" % (d["field"], d["base"], d["new"])
                                for d in res.get("differs") or [])
            entry["note"] = ("incomparable with the history (%s): a new series starts, not "
                             "failed" % (differs or res.get("why")))
        elif res["verdict"] == "no_history":
            entry["note"] = "no earlier session in the history %s" % history
        elif res["verdict"] == "inconclusive":
            entry["note"] = ("inconclusive against the history: %s; not failed (rpxprof fails "
                             "a test only on 'slower')" % (res.get("why") or what))
        return None

    def _call_once(self, fn, args, options):
        """--rpxprof-disable: one untimed call with the arguments as the fixture got them."""
        if len(args) == 1 and isinstance(args[0], dict) and not options.get("kwargs"):
            fn(**args[0])  # the old form: arrays by name
        else:
            fn(*args, **(options.get("kwargs") or {}))
        return None

    def _compare(self, rpxprof, entry, base_path):
        if not os.path.exists(base_path):
            entry["note"] = "no baseline (%s)" % base_path
            return
        if not os.path.isfile(base_path):
            entry["note"] = "not compared: the baseline %s is not a file" % base_path
            pytest.fail("rpxprof: %s cannot be compared with its baseline %s: it is a %s, not a "
                        "report file; remove it, or give --rpxprof-compare the folder an earlier "
                        "run wrote with --rpxprof-save"
                        % (entry["nodeid"], base_path,
                           "folder" if os.path.isdir(base_path) else "special file"),
                        pytrace=False)
        try:
            # two sessions: the spread between them from the history, when there is one
            c = rpxprof.compare(base_path, entry["report"],
                                threshold=self._config.getoption("rpxprof_threshold"),
                                history=_existing(getattr(self._config, _HISTORY)))
        except rpxprof.RpxprofError as e:
            entry["note"] = "not compared: %s" % e
            pytest.fail("rpxprof: %s cannot be compared with its baseline %s: %s"
                        % (entry["nodeid"], base_path, e), pytrace=False)
        entry["verdict"], entry["comparison"] = c.verdict, c
        if c.verdict == "slower":
            pytest.fail("rpxprof: %s is slower than its baseline %s (p50 new/base %s, 95%% CI "
                        "[%s, %s], threshold %s); a test fails only on the verdict 'slower', "
                        "never on 'inconclusive'.\n%s"
                        % (entry["nodeid"], base_path, _r(c.ratio), _r((c.ci or (None,))[0]),
                           _r((c.ci or (None, None))[1]), self._config.getoption(
                               "rpxprof_threshold"), c.summary()), pytrace=False)
        if c.verdict == "incomparable":  # another machine or other work: never a regression
            differs = ", ".join("%s %s -> %s" % (d.get("field"), d.get("base"), d.get("new"))
                                for d in c.get("differences") or ()
                                if d.get("effect") == "incomparable")
            entry["note"] = ("incomparable with %s (%s): not failed"
                             % (base_path, differs or "not the same machine or work"))
        if c.verdict == "inconclusive":
            ways = (c.get("between_session") or {}).get("to_decide_smaller") \
                if c.get("same_session") is False else None
            entry["note"] = ("inconclusive against %s: not failed (rpxprof fails a test only "
                             "on 'slower'); %s" % (base_path, "; or ".join(ways) if ways else
                                                   "more --rpxprof-repeats or "
                                                   "--rpxprof-processes narrow the interval"))


@contextlib.contextmanager
def _no_history_from_environment(on):
    """RPXPROF_HISTORY out of the environment while a benchmark runs, when the plugin
    decides itself what goes into the history (--rpxprof-save records, --rpxprof-compare
    alone records nothing); put back after."""
    saved = os.environ.pop("RPXPROF_HISTORY", None) if on else None
    try:
        yield
    finally:
        if saved is not None:
            os.environ["RPXPROF_HISTORY"] = saved


def _existing(history):
    """The history, when there is one to read (a database URL, or a file made already)."""
    return history if history and ("://" in history or os.path.exists(history)) else None


def _r(x):
    """A ratio: four decimals (1.0500), as close to 1 as a regression gate looks."""
    return "n/a" if x is None else "%.4f" % x


def _f(x):
    if x is None:
        return "n/a"
    from . import _core
    return _core.format_3g(float(x))


@pytest.fixture
def rpxprof_benchmark(request):
    """Profile a function with rpxprof: rpxprof_benchmark(fn, *args, **options) takes what
    rpxprof.profile takes and returns its Report; the report is kept and compared as the
    --rpxprof-* options say."""
    return Benchmark(request)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    results = getattr(config, _STASH, None)
    if not results:
        return
    tr = terminalreporter
    tr.section("rpxprof")
    for e in results:
        r = e["report"]
        ci = r.ci("p50")
        line = "%s: p50 %s ms" % (e["nodeid"], _f(r.p50_ms))
        if ci:
            line += " [%s, %s]" % (_f(ci[0]), _f(ci[1]))
        if e["comparison"] is not None:
            line += "; vs baseline %s (new/base %s)" % (e["verdict"], _f(e["comparison"].ratio))
        if e["history"] is not None:
            newest = (e["history"].get("check") or {}).get("newest") or {}
            line += "; vs history %s" % e["verdict"]
            if newest.get("ratio") is not None:
                line += " (new/series %s%s)" % (_r(newest["ratio"]), "" if not e["head"] else
                                                ", %d sessions: %d to confirm"
                                                % (1 + len(e["head"]), len(e["head"])))
        if e["note"]:
            line += "; " + e["note"]
        tr.write_line(line)
    save = config.getoption("rpxprof_save")
    if save:
        tr.write_line("reports kept in %s" % save)
    history = getattr(config, _HISTORY, None)
    if save is not None and history:
        tr.write_line("sessions recorded in the history %s" % history)
