"""Issue 38 ("a new user's first hour"), the Python side: an nn.Module's arguments bound
against its forward before anything runs (item 5), a trace from Python (item 7), and
notes and warnings in Python's words (item 8). Run by CTest with
PYTHONPATH=<build>/python (tests/python/python.cmake), one entry per section."""
import json
import os
import subprocess
import sys

import pytest

import rpxprof

BIN = os.environ.get("RPX_BIN")


# ---- item 5: an nn.Module's arguments, bound against forward ----

def test_module_arguments_bound_against_forward():
    torch = pytest.importorskip("torch")
    calls = []

    class TwoInputNet(torch.nn.Module):
        def forward(self, x, depth):
            calls.append(1)
            return x * depth

    net = TwoInputNet()
    with pytest.raises(rpxprof.RpxprofTypeError) as e:
        rpxprof.profile(net, torch.ones(2))
    text = str(e.value)
    assert calls == [], "the module ran before the check"
    assert e.value.code == 2
    assert "TwoInputNet.forward(x, depth)" in text, text
    assert "does not accept the arguments given (1 positional)" in text, text
    assert "missing a required argument: 'depth'" in text, text
    # the traceback ends in rpxprof's check, not inside a call of the model
    assert all(entry.name != "forward" for entry in e.traceback), e.traceback
    # given both, it runs
    r = rpxprof.profile(net, torch.ones(2), torch.ones(2), repeats=3, warmup=0)
    assert r["status"] == "complete" and len(calls) >= 3


# ---- item 7: a trace from Python ----

def _trace_of(path):
    with open(path) as f:
        t = json.load(f)
    assert t["schema"] == "rpxprof.trace/1", t.get("schema")
    names = {e.get("name") for e in t["traceEvents"]}
    return t, names


@pytest.mark.parametrize("processes", [None, 2])
def test_timeline_and_trace_from_python(tmp_path, processes):
    r = rpxprof.profile(lambda: None, repeats=30, warmup=1, processes=processes, timeline=True,
                        quiet=True)
    assert r["timeline"] is not None and r["timeline"]["processes"], r["timeline"]
    out = tmp_path / "r.json"
    r.write(str(out))
    if BIN:   # `rpxprof trace` of a Python report
        p = subprocess.run([BIN, "trace", str(out), "-o", str(tmp_path / "t.json")],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        _trace_of(tmp_path / "t.json")
    # trace= writes it as `rpxprof run --trace` does, and keeps the timeline
    tr = tmp_path / "run.trace.json"
    r = rpxprof.profile(lambda: None, repeats=30, warmup=1, processes=processes,
                        trace=str(tr), quiet=True)
    assert r["timeline"] is not None
    t, names = _trace_of(tr)
    assert len(t["traceEvents"]) > 30
    # an existing file that is not a trace is refused before anything runs
    other = tmp_path / "notes.txt"
    other.write_text("mine\n")
    ran = []
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(lambda: ran.append(1), repeats=5, warmup=0, trace=str(other), quiet=True)
    assert ran == [] and "trace" in str(e.value) and "--force" not in str(e.value), str(e.value)
    assert other.read_text() == "mine\n"


# ---- item 8: Python words in notes, warnings and refusals ----

CLI_WORDS = ("--repeats", "--cost", "--flops", "--precision", "--cpus", "--max-time",
             "--device", "--processes", "see the warning above")


def _no_cli_words(text):
    return [w for w in CLI_WORDS if w in text]


def test_notes_speak_python():
    r = rpxprof.profile(lambda: None, repeats=20, warmup=0, quiet=True)
    notes = "\n".join(r["notes"])
    assert "use repeats=100 or more" in notes, notes
    assert 'give cost="MODEL.onnx" or flops=N' in notes, notes
    assert 'give precision="fp32", tf32' in notes, notes
    assert _no_cli_words(notes) == [], notes
    assert _no_cli_words(r.summary()) == [], r.summary()


def test_the_cuda_refusal_speaks_python(monkeypatch):
    monkeypatch.setenv("RPX_CUDA_LIBRARY", "/nonexistent/libcuda.so.1")
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(lambda: None, device="cuda", repeats=3, quiet=True)
    text = str(e.value)
    assert text.startswith('device="cuda": the CUDA driver cannot be loaded'), text
    assert 'run with device="cpu"' in text and _no_cli_words(text) == [], text


def test_print_report_names_no_warning_it_did_not_print():
    """The summary of a Python report whose variance names a factor says where the
    advice is, not "see the warning above" (Python prints no warning)."""
    r = rpxprof.profile(lambda: None, repeats=20, warmup=0, quiet=True)
    r["variance"] = dict(r["variance"] or {})
    r["variance"].update({"explained_by": "cpu", "process_p50_ratio": 1.5, "factors": [
        {"factor": "cpu", "named": True, "tested": True, "share": 1.0}]})
    text = str(r)
    assert "why it varied: the CPU explains 100 %" in text, text
    assert "see the warning above" not in text and 'report["variance"]["message"]' in text, text


# ---- item 4: a comparison carries the reports' warnings ----

def test_comparison_carries_the_reports_warnings(tmp_path):
    a = rpxprof.profile(lambda: None, repeats=30, warmup=1, quiet=True)
    b = rpxprof.profile(lambda: None, repeats=30, warmup=1, quiet=True)
    a = dict(a)
    a["system_card"] = dict(a["system_card"], warnings=["load 6.00: Other processes took 70% of the time"])
    c = rpxprof.compare(a, b)
    assert "base: load 6.00: Other processes took 70% of the time" in c.warnings, c.warnings
    assert c.warnings == tuple(c["warnings"])
