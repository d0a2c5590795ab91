"""rpxprof's pytest plugin (issue 29 §5): a suite of two benchmarks run three times, as a
user runs it in CI. The baseline run keeps the reports; an A/A rerun against it fails no
test; a rerun with one function made 30 % slower (a busy-wait, whose p50 is its wall time
on a busy machine too) fails exactly that test, saying why; an inconclusive verdict fails
nothing and says so. (A baseline saved in another session is compared under the
between-session rule, docs/statistics.md: without a history's spread the default allowance
decides changes from about 12 % on, so 5 % is inconclusive there.) Normal build only (the sanitized extension is slow to fork)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("RPX_SANITIZED") == "1",
                                reason="timing acceptance test: normal build only")

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
        r = rpxprof_benchmark(fast)
        assert r is None or r.p50_ms > 0.45  # None: --rpxprof-disable


    def test_slow(rpxprof_benchmark):
        rpxprof_benchmark(slow)


    def test_not_a_benchmark():
        assert True
''')


def pytest_run(tmp_path, *args, slower="1", plugin=True):
    env = dict(os.environ, SLOWER=slower)
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEs"]
    if plugin:
        cmd += ["-p", "rpxprof.pytest_plugin"]
    # the benchmarks use the fixture's function form (no inputs): each profile gets
    # processes and calls from the options
    return subprocess.run(cmd + [*args, str(tmp_path / "suite")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def no_args_supported():
    """The suite's `rpxprof_benchmark(fast)` needs profile(fn) with no inputs (issue 29 §1);
    until then the benchmarks take an array by name."""
    import rpxprof
    try:
        rpxprof.profile(lambda: None, repeats=1, warmup=0)
        return True
    except Exception:
        return False


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "suite").mkdir()
    text = SUITE
    if not no_args_supported():
        text = text.replace("def fast():", "def fast(x):").replace("def slow():", "def slow(x):")
        text = text.replace("rpxprof_benchmark(fast)", "rpxprof_benchmark(fast, {'x': X})")
        text = text.replace("rpxprof_benchmark(slow)", "rpxprof_benchmark(slow, {'x': X})")
        text = "import numpy as np\nX = np.zeros(1)\n" + text
    (tmp_path / "suite" / "test_suite.py").write_text(text)
    return tmp_path


def test_slower_fails_exactly_that_test_and_a_rerun_fails_none(suite):
    common = ["--rpxprof-processes", "6", "--rpxprof-repeats", "900", "--rpxprof-warmup", "20",
              "--rpxprof-threshold", "2%"]
    base = suite / "base"
    # the baseline: reports kept in a folder, and (issue 36) three sessions in a history,
    # whose between-session spread a comparison of two sessions needs
    history = ["--rpxprof-history", str(suite / "runs.db")]
    for _ in range(3):
        p = pytest_run(suite, "--rpxprof-save", str(base), *history, *common)
        assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(os.listdir(base)) == ["suite_test_suite.py__test_fast.json",
                                        "suite_test_suite.py__test_slow.json"]
    assert "rpxprof" in p.stdout and "reports kept in" in p.stdout
    # A/A: the same functions again fail nothing
    p = pytest_run(suite, "--rpxprof-compare", str(base), "--rpxprof-save",
                   str(suite / "aa"), *common)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "3 passed" in p.stdout, p.stdout
    # A/B: slow() 30 % slower fails test_slow, and only it (the spread from the history: three
    # back-to-back sessions, pooled with the default allowance, decide 30 % but not 5 %; a 5 %
    # change is decided by the history mode's confirming sessions, test_pytest_history.py)
    p = pytest_run(suite, "--rpxprof-compare", str(base), *history, *common, slower="1.30")
    assert p.returncode == 1, p.stdout + p.stderr
    failed = [line for line in p.stdout.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "test_suite.py::test_slow" in failed[0], p.stdout
    assert "1 failed, 2 passed" in p.stdout, p.stdout
    assert "is slower than its baseline" in p.stdout
    assert "never on 'inconclusive'" in p.stdout
    assert "verdict: slower" in p.stdout  # the comparison's own table
    # without a history, a change the drift between sessions could explain is not decided
    # (issue 36 §1): no test fails, and the summary says the two ways to decide it
    p = pytest_run(suite, "--rpxprof-compare", str(base), *common, slower="1.05")
    assert p.returncode == 0 and "3 passed" in p.stdout, p.stdout + p.stderr
    assert "vs baseline inconclusive" in p.stdout and "compare --run" in p.stdout, p.stdout


def test_inconclusive_fails_nothing_and_says_so(suite):
    # 3 calls a process: no interval of the p50, so the verdict cannot be but inconclusive
    few = ["--rpxprof-processes", "3", "--rpxprof-repeats", "9", "--rpxprof-warmup", "1"]
    base = suite / "base"
    assert pytest_run(suite, "--rpxprof-save", str(base), *few).returncode == 0
    p = pytest_run(suite, "--rpxprof-compare", str(base), *few, slower="1.3")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "vs baseline inconclusive" in p.stdout and "not failed" in p.stdout, p.stdout


def test_options_mapped_from_pytest_benchmark(suite):
    p = pytest_run(suite, "--rpxprof-skip")
    assert p.returncode == 0 and "2 skipped" in p.stdout and "1 passed" in p.stdout, p.stdout
    p = pytest_run(suite, "--rpxprof-only", "--rpxprof-disable")
    assert p.returncode == 0 and "1 skipped" in p.stdout and "2 passed" in p.stdout, p.stdout
    p = pytest_run(suite, "--rpxprof-compare", str(suite / "nowhere"))
    assert p.returncode == 4 and "no such folder" in p.stderr, p.stdout + p.stderr
    # --benchmark-max-time/--benchmark-min-time: auto-ranging's max_time/min_time
    p = pytest_run(suite, "--rpxprof-max-time", "0.8", "--rpxprof-min-time", "0.25",
                   "--rpxprof-processes", "2", "--rpxprof-save", str(suite / "timed"))
    assert p.returncode == 0 and "3 passed" in p.stdout, p.stdout + p.stderr
    for name in os.listdir(suite / "timed"):
        r = json.loads((suite / "timed" / name).read_text())
        assert any("for min_time 0.25 s, max_time 0.8 s" in n for n in r["notes"]), r["notes"]
    p = pytest_run(suite, "--rpxprof-max-time", "0.1", "--rpxprof-min-time", "0.5")
    assert p.returncode == 4 and "min <= max" in p.stderr, p.stdout + p.stderr
    # without the plugin the fixture does not exist: the entry point is what loads it
    p = pytest_run(suite, "-p", "no:rpxprof", plugin=False)
    assert "fixture 'rpxprof_benchmark' not found" in p.stdout
