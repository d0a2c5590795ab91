"""One-glance results of the rpxprof package (issue 29 §3, §4): Report.summary() is the
CLI's summary, _repr_html_ is valid HTML that shows the p50 (no Jupyter), the attributes
and to_row, to_dataframe with and without pandas, compare and compare_run."""
import html.parser
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import rpxprof

BIN = os.environ.get("RPX_BIN")


def spin(rgb, ms=0.3):
    """A busy-wait of `ms` wall-clock milliseconds: its p50 is `ms` on a busy machine too."""
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


def spin_slower(rgb):
    spin(rgb, 0.3 * 1.05)


INPUTS = {"rgb": np.zeros(4, np.float32)}


@pytest.fixture(scope="module")
def report():
    return rpxprof.profile(spin, INPUTS, warmup=2, repeats=120, flops=3628146688,
                           params=11689512, gpus=["h100-sxm", "rtx-4090"])


class _Checker(html.parser.HTMLParser):
    """Every opened element closed in order (void elements aside), and the text."""
    VOID = {"br", "img", "hr", "meta", "input", "col", "wbr", "area", "base", "link"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.text, self.tags = [], [], [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes %s" % (tag, self.stack[-1:] or "nothing"))
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def test_summary_is_the_cli_summary(report, tmp_path):
    s = report.summary()
    assert str(report) == s
    assert s.startswith("tests.python.test_results:spin: 120 timed calls in 1 process\n") or \
        s.startswith("test_results:spin: 120 timed calls in 1 process\n")
    assert "use processes=5 or more" in s  # the advice speaks Python
    assert "  cost: 3.63 G FLOPs (1.81 G MACs), 11.7 M params per call (declared)\n" in s
    assert "  bound h100-sxm: ideal " in s and "  bound rtx-4090: ideal " in s
    assert "  real time at p50: " in s
    # the same text as `rpxprof run` prints for the same report: the one renderer
    path = tmp_path / "r.json"
    report.write(path)
    p = subprocess.run([sys.executable, "-c", "import json, rpxprof; r = rpxprof.Report(json.load("
                        "open(%r))); print(r.summary(), end='')" % str(path)],
                       capture_output=True, text=True, check=True)
    assert p.stdout == s
    # the old dict access keeps working
    assert report["latency"]["p50_ms"] == report.p50_ms
    assert isinstance(report, dict) and json.loads(json.dumps(report)) == dict(report)


def test_attributes(report):
    assert report.p50_ms == report["latency"]["p50_ms"]
    lo, hi = report.ci("p50")
    assert (lo, hi) == tuple(report["latency_ci"]["p50_ms"]) and lo <= report.p50_ms <= hi
    assert report.ci("p50_ms") == report.ci("p50")
    assert report.ci("p99") is None  # 120 calls in one process: no p99 interval
    assert report.bound("h100-sxm") == report["roofline"]["h100-sxm"]["ideal"]["latency_ms"]
    assert report.achieved("h100-sxm") == \
        report["roofline"]["h100-sxm"]["achieved_fraction"]["ideal"]
    with pytest.raises(KeyError, match="has no roofline for it; it has h100-sxm, rtx-4090"):
        report.bound("a100-sxm")
    with pytest.raises(KeyError, match="one of p50, p95, p99, mean"):
        report.ci("p42")


def test_repr_html_is_valid_and_shows_the_p50(report):
    h = report._repr_html_()
    c = _Checker()
    c.feed(h)
    c.close()
    assert c.errors == [] and c.stack == [], (c.errors, c.stack)
    text = " ".join(c.text)
    p50 = rpxprof._core.format_3g(report.p50_ms)
    assert "p50 %s ms" % p50 in text
    assert "svg" in c.tags  # the distribution figure, inline
    # the cost and the bounds, numbers by the summary's rule
    assert "3.63 G FLOPs, 1.81 G MACs, 11.7 M params" in text
    assert "h100-sxm %s ms" % rpxprof._core.format_3g(report.bound("h100-sxm")) in text


def test_repr_html_says_the_inputs(report):
    # issue 38: "inputs: n/a" though they were known; the report's inputs in words
    c = _Checker()
    c.feed(report._repr_html_())
    c.close()
    assert "inputs: rgb float32[4]" in " ".join(c.text), c.text


def test_to_row_and_to_dataframe_with_and_without_pandas(report, monkeypatch):
    row = report.to_row()
    assert row["p50_ms"] == report.p50_ms and row["calls"] == 120
    assert (row["p50_ci_lo_ms"], row["p50_ci_hi_ms"]) == report.ci("p50")
    assert row["flops"] == 3628146688 and row["bound_h100-sxm_ms"] == report.bound("h100-sxm")
    # without pandas (hidden from the import system): a clear error that says what to do
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"needs pandas.*to_row\(\)"):
        rpxprof.to_dataframe([report])
    monkeypatch.undo()
    try:
        import pandas  # noqa: F401
    except ImportError:
        pytest.skip("pandas is not installed (Debian: python3-pandas): the half with pandas")
    df = rpxprof.to_dataframe([report, dict(report)])
    assert list(df["p50_ms"]) == [report.p50_ms] * 2 and "bound_rtx-4090_ms" in df.columns


def test_compare_reports_and_paths(tmp_path):
    a = rpxprof.profile(spin, INPUTS, warmup=2, repeats=240, processes=4)
    b = rpxprof.profile(spin_slower, INPUTS, warmup=2, repeats=240, processes=4)
    # two separate runs: the default allowance for the drift between sessions leaves 5 %
    # undecided (docs/statistics.md, "Two reports of different sessions"); the runs of one
    # session each say slower, and so does a history whose spread is that small
    u = rpxprof.compare(a, b)
    assert u.verdict == "inconclusive" and u["within_session"]["p50_verdict"] == "slower", str(u)
    assert u["between_session"]["source"] == "default" and u["between_session"]["decidable_change"] > 0.1
    c = rpxprof.compare(a, b, session_spread=0)
    assert c.verdict == "slower", str(c)
    assert 1.02 < c.ratio < 1.08 and c.ci[0] <= c.ratio <= c.ci[1] and 0 <= c.p <= 1
    assert c["base"] == a.name and "test_results:spin_slower" in str(c)
    assert "verdict: slower" in c.summary() and "/tmp" not in c.summary()
    assert not re.search(r"\de[+-]\d", c.summary()), c.summary()  # the rule: no exponent
    k = _Checker()
    k.feed(c._repr_html_())
    assert k.errors == [] and k.stack == []
    a.write(tmp_path / "a.json")
    b.write(tmp_path / "b.json")
    d = rpxprof.compare(tmp_path / "a.json", str(tmp_path / "b.json"), threshold="10%",
                        session_spread="0%")
    assert d.verdict == "same" and d.threshold == 0.1
    # the same as the CLI's compare of the same files
    if BIN:
        p = subprocess.run([BIN, "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                            "--threshold", "10%", "--session-spread", "0"], capture_output=True,
                           text=True, check=True)
        assert p.stdout == d.summary()
    with pytest.raises(rpxprof.RpxprofTypeError, match="give one"):
        rpxprof.compare(a, b, session_spread=0, history="x.db")
    with pytest.raises(rpxprof.RpxprofTypeError, match="0 or more"):
        rpxprof.compare(a, b, session_spread=-0.1)
    with pytest.raises(rpxprof.RpxprofTypeError, match="a report .* not int"):
        rpxprof.compare(a, 3)


def test_compare_with_the_spread_of_a_history(tmp_path):
    """compare(a, b, history=H): the between-session spread of the base's series in H (as
    `compare --history`). Three sessions run back to back cannot show the machine's drift, so
    their spread is pooled with the default allowance (docs/statistics.md): a 5 % slower
    busy-wait measured in another session stays inconclusive, a 30 % slower one is decided."""
    history = tmp_path / "runs.db"
    for _ in range(3):
        rpxprof.profile(spin, INPUTS, warmup=2, repeats=240, processes=4, name="spin",
                        history=history)
    a = rpxprof.profile(spin, INPUTS, warmup=2, repeats=240, processes=4, name="spin")
    b = rpxprof.profile(spin_slower, INPUTS, warmup=2, repeats=240, processes=4, name="spin")
    c = rpxprof.compare(a, b, history=history)
    between = c["between_session"]
    assert between["source"] == "series", between
    assert "pooled with it" in between["how"] and between["df"] == 2 + 29, between
    assert c.verdict == "inconclusive", str(c)
    assert c["within_session"]["verdict"] == "slower", str(c)
    d = rpxprof.profile(lambda rgb: spin(rgb, 0.3 * 1.3), INPUTS, warmup=2, repeats=240,
                        processes=4, name="spin")
    assert rpxprof.compare(a, d, history=history).verdict == "slower"
    assert rpxprof.compare(a, b)["between_session"]["source"] != "series"


def test_compare_run_interleaved():
    x = np.zeros(4)
    c = rpxprof.compare_run(lambda: spin(x), lambda: spin(x, 0.3 * 1.05), repeats=240,
                            processes=4)
    assert c.verdict == "slower", str(c)
    assert c["design"] in ("paired_by_cpu", "interleaved") and c["interleaved"] == "ABBA by process"
    assert isinstance(c.base, rpxprof.Report) and c.base["processes"] == 4
    d = rpxprof.compare_run(spin, spin, INPUTS, repeats=240, processes=4, threshold="3%")
    assert d.verdict in ("same", "inconclusive"), str(d)
    assert d["base"] != d["new"]  # the same callable twice, told apart
    with pytest.raises(rpxprof.RpxprofError, match="2 or more"):
        rpxprof.compare_run(spin, spin, INPUTS, processes=1)


def test_python_m_rpxprof_runs_the_program(tmp_path):
    """From the build tree `python -m rpxprof` is the build's program (an installed package:
    its own copy, test_package.py's virtualenv test): its output and exit status."""
    p = subprocess.run([sys.executable, "-m", "rpxprof", "compare"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.startswith("rpxprof compare: error: give two"), p.stderr
    p = subprocess.run([sys.executable, "-m", "rpxprof", "gpus", "--json"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout)["gpus"] == rpxprof.gpus()


def test_compare_run_passes_the_callers_objects_natively():
    """compare_run(fa, fb, *args, kwargs=) calls fa(*args, **kwargs) with the caller's own
    objects, as profile() does: no placeholder array, no temporary NPZ file, and the
    reports' inputs_file describes the arguments in profile()'s words."""
    box = object()
    seen = []

    def fa(x, tag, ms=0.2):
        assert tag is box and isinstance(x, np.ndarray)
        seen.append(1)
        spin(x, ms)

    def fb(x, tag, ms=0.2):
        assert tag is box
        spin(x, ms)

    c = rpxprof.compare_run(fa, fb, np.zeros((2, 3), np.float32), box, kwargs={"ms": 0.2},
                            repeats=60, processes=2, threshold="20%")
    for r in (c.base, c.new):
        assert r["inputs_file"] == rpxprof._torch.describe(
            (np.zeros((2, 3), np.float32), box), {"ms": 0.2}), r["inputs_file"]
        assert "rpxprof_no_inputs" not in json.dumps(r)
    # the old form goes on working: one dict of arrays, by name
    d = rpxprof.compare_run(spin, spin, INPUTS, repeats=60, processes=2, threshold="20%")
    assert d.base["inputs_file"] == "<dict>"
