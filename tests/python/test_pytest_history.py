"""The pytest plugin on a history (issue 36 §3, acceptance): a suite of two benchmarks
saved as three sessions with `--rpxprof-history H --rpxprof-save`, then rerun with
`--rpxprof-compare`: the A/A reruns fail nothing, and a rerun where one function is made
5 % slower fails exactly that test, against the between-session spread (with three
sessions in the series, the machine kind's measured spread: one session looks slower, and
up to --rpxprof-confirm more sessions of it decide). A
session on another machine (another system card: RPX_SYSROOT) is `incomparable` and never
fails. The functions are busy-waits of a known duration (their p50 is their wall time,
whatever the load), so the verdicts do not depend on the machine's noise; no duration is
asserted. Normal build only (the sanitized extension is slow to fork)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("RPX_SANITIZED") == "1",
                                reason="timing acceptance test: normal build only")

BIN = os.environ.get("RPX_BIN", "build/rpxprof")
SOURCE = os.environ.get("RPX_SOURCE", ".")

SUITE = textwrap.dedent('''
    import os
    import time


    def spin(ms):
        end = time.perf_counter() + ms / 1000
        while time.perf_counter() < end:
            pass


    def fast():
        spin(0.5)


    def slow():
        spin(0.5 * float(os.environ.get("SLOWER", "1")))


    def test_fast(rpxprof_benchmark):
        rpxprof_benchmark(fast)


    def test_slow(rpxprof_benchmark):
        rpxprof_benchmark(slow)


    def test_not_a_benchmark():
        assert True
''')

CALLS = ["--rpxprof-processes", "6", "--rpxprof-repeats", "900", "--rpxprof-warmup", "20",
         "--rpxprof-threshold", "2%"]


def pytest_run(tmp_path, *args, slower="1", env=None):
    """pytest on the suite; the suite's folder first, so that a bare --rpxprof-save or
    --rpxprof-compare (a flag with an optional folder) can come last."""
    e = dict(os.environ, SLOWER=slower)
    for k in ("PYTEST_ADDOPTS", "RPXPROF_HISTORY", "RPX_SYSROOT"):
        e.pop(k, None)
    e.update(env or {})
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEs",
           "-p", "rpxprof.pytest_plugin", str(tmp_path / "suite"), *args]
    return subprocess.run(cmd, cwd=tmp_path, env=e, capture_output=True, text=True,
                          timeout=600)


def sessions(history):
    """{benchmark name: number of sessions} of every series in the history."""
    p = subprocess.run([BIN, "history", "show", "--json", "--history", str(history)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    shown = json.loads(p.stdout)
    series = shown["series"] if isinstance(shown, dict) else shown
    out = {}
    for s in series:
        name = s["benchmark"]["name"]
        out[name] = out.get(name, 0) + len(s["sessions"])
    return out


def failed(p):
    return [line for line in p.stdout.splitlines() if line.startswith("FAILED")]


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_suite.py").write_text(SUITE)
    return tmp_path


def save_baseline(suite, history, n=3, calls=CALLS):
    for _ in range(n):
        p = pytest_run(suite, *calls, "--rpxprof-history", str(history), "--rpxprof-save")
        assert p.returncode == 0, p.stdout + p.stderr
        assert "3 passed" in p.stdout and "sessions recorded in the history" in p.stdout, p.stdout


# ---- A/A across saved sessions, and a 5 % slower function ----
def test_aa_fails_nothing_and_a_5_percent_slower_function_fails_exactly_its_test(suite):
    history = suite / "runs.db"
    save_baseline(suite, history)
    names = {"test_suite::test_fast": 3, "test_suite::test_slow": 3}
    assert sessions(history) == names
    # A/A: the same functions, compared with their series, fail nothing
    for _ in range(2):
        p = pytest_run(suite, *CALLS, "--rpxprof-history", str(history), "--rpxprof-compare")
        assert p.returncode == 0, p.stdout + p.stderr
        assert "3 passed" in p.stdout, p.stdout
        assert p.stdout.count("vs history ") == 2, p.stdout
    # A/B: slow() 5 % slower fails test_slow, and only it (the history from the environment)
    p = pytest_run(suite, *CALLS, "--rpxprof-compare", slower="1.05",
                   env={"RPXPROF_HISTORY": str(history)})
    assert p.returncode == 1, p.stdout + p.stderr
    f = failed(p)
    assert len(f) == 1 and "test_suite.py::test_slow" in f[0], p.stdout
    assert "1 failed, 2 passed" in p.stdout, p.stdout
    assert "is slower than its history" in p.stdout, p.stdout
    assert "between-session spread" in p.stdout and "never on 'inconclusive'" in p.stdout
    # --rpxprof-compare alone recorded nothing, even with RPXPROF_HISTORY set
    assert sessions(history) == names
    # one session looked slower, and more sessions of it (--rpxprof-confirm, 3 by default)
    # decided it: the verdict says how many
    assert "to confirm)" in p.stdout, p.stdout
    # with --rpxprof-save too, the slower sessions are recorded (the confirming ones too),
    # and still fail their test
    p = pytest_run(suite, *CALLS, "--rpxprof-history", str(history), "--rpxprof-compare",
                   "--rpxprof-save", slower="1.05")
    assert p.returncode == 1 and len(failed(p)) == 1, p.stdout + p.stderr
    seen = sessions(history)
    assert seen["test_suite::test_fast"] == 4, seen
    assert 5 <= seen["test_suite::test_slow"] <= 7, seen


# ---- incomparable: another machine never fails ----
def test_a_session_on_another_machine_is_incomparable_and_never_fails(suite):
    history = suite / "runs.db"
    few = ["--rpxprof-processes", "4", "--rpxprof-repeats", "240", "--rpxprof-warmup", "5"]
    save_baseline(suite, history, calls=few)
    other = os.path.join(SOURCE, "tests", "fixtures", "sysroots", "ubuntu22-graviton3-8cpu")
    p = pytest_run(suite, *few, "--rpxprof-history", str(history), "--rpxprof-compare",
                   slower="1.3", env={"RPX_SYSROOT": other})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "3 passed" in p.stdout, p.stdout
    assert p.stdout.count("vs history incomparable") == 2, p.stdout
    assert "a new series starts, not failed" in p.stdout and "cpu_model" in p.stdout, p.stdout


# ---- refusals ----
def test_the_history_flags_need_a_history(suite):
    for flag in ("--rpxprof-save", "--rpxprof-compare"):
        p = pytest_run(suite, flag)
        assert p.returncode == 4, p.stdout + p.stderr
        assert "without a folder uses the history: give --rpxprof-history PATH" in p.stderr


# ---- history= in profile() and compare_run(): the options table's key ----
def test_profile_and_compare_run_record_into_history(tmp_path):
    import rpxprof

    def f():
        pass

    def g():
        pass

    history = tmp_path / "h.db"
    rpxprof.profile(f, repeats=60, processes=2, name="f-alone", history=str(history),
                    quiet=True)
    rpxprof.compare_run(f, g, repeats=60, processes=2, names=("f-base", "g-new"),
                        history=history)
    assert sessions(history) == {"f-alone": 1, "f-base": 1, "g-new": 1}


# ---- names: a benchmark's name does not depend on pytest's rootdir or the checkout's folder ----
NAMED_SUITE = {
    "test_speed.py": textwrap.dedent('''
        import time

        import pytest


        def work():  # a busy-wait: its p50 is its wall time, whatever the load
            end = time.perf_counter() + 0.0003
            while time.perf_counter() < end:
                pass


        def test_work(rpxprof_benchmark):
            rpxprof_benchmark(work)


        class TestKinds:
            @pytest.mark.parametrize("n", [1, 2])
            def test_sized(self, rpxprof_benchmark, n):
                rpxprof_benchmark(work)
    '''),
    "pkg/__init__.py": "",
    "pkg/test_inner.py": textwrap.dedent('''
        from test_speed import work


        def test_inner(rpxprof_benchmark):
            rpxprof_benchmark(work)
    '''),
}
NAMES = {"test_speed::test_work", "test_speed::TestKinds::test_sized[1]",
         "test_speed::TestKinds::test_sized[2]", "pkg.test_inner::test_inner"}
FEW = ["--rpxprof-processes", "3", "--rpxprof-repeats", "90", "--rpxprof-warmup", "5",
       "--rpxprof-confirm", "0", "--rpxprof-threshold", "50%"]  # names, not verdicts


def run_in(folder, *args):
    """pytest from inside the suite's folder, its files given relative to it (the
    reviewer's `cd suite && pytest test_speed.py ...`)."""
    e = dict(os.environ)
    for k in ("PYTEST_ADDOPTS", "RPXPROF_HISTORY", "RPX_SYSROOT"):
        e.pop(k, None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEs",
           "-p", "rpxprof.pytest_plugin", "test_speed.py", "pkg/test_inner.py", *FEW, *args]
    p = subprocess.run(cmd, cwd=folder, env=e, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "4 passed" in p.stdout, p.stdout
    return p


def test_names_do_not_depend_on_rootdir_or_the_checkouts_folder(tmp_path):
    first = tmp_path / "review" / "suite"
    for rel, text in NAMED_SUITE.items():
        (first / rel).parent.mkdir(parents=True, exist_ok=True)
        (first / rel).write_text(text)
    history = tmp_path / "review" / "py.db"  # outside the suite; not there in the 1st run
    for _ in range(3):
        run_in(first, "--rpxprof-history", str(history), "--rpxprof-save")
    assert sessions(history) == {n: 3 for n in NAMES}
    # the same suite checked out elsewhere finds its series
    other = tmp_path / "ci" / "checkout" / "tests"
    for rel, text in NAMED_SUITE.items():
        (other / rel).parent.mkdir(parents=True, exist_ok=True)
        (other / rel).write_text(text)
    p = run_in(other, "--rpxprof-history", str(history), "--rpxprof-compare")
    assert p.stdout.count("vs history ") == 4, p.stdout
    assert "incomparable" not in p.stdout and "no earlier session" not in p.stdout, p.stdout
    assert sessions(history) == {n: 3 for n in NAMES}


def test_two_tests_with_one_name_are_refused_not_pooled(tmp_path):
    # two test_x.py outside packages (pytest's importlib mode imports both): one name
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "test_x.py").write_text(
            "def test_x(rpxprof_benchmark):\n    rpxprof_benchmark(lambda: None)\n")
    e = dict(os.environ)
    for k in ("PYTEST_ADDOPTS", "RPXPROF_HISTORY", "RPX_SYSROOT"):
        e.pop(k, None)
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEs",
                        "-p", "rpxprof.pytest_plugin", "--import-mode=importlib", "a", "b",
                        *FEW, "--rpxprof-history", str(tmp_path / "h.db"), "--rpxprof-save"],
                       cwd=tmp_path, env=e, capture_output=True, text=True, timeout=600)
    assert p.returncode == 1 and "1 failed, 1 passed" in p.stdout, p.stdout + p.stderr
    assert "are both the benchmark test_x::test_x" in p.stdout, p.stdout
    assert "add an __init__.py" in p.stdout, p.stdout
    assert sessions(tmp_path / "h.db") == {"test_x::test_x": 1}
