"""Issue 29 §1-§2: PyTorch in natively (profile(fn_or_module, *args, kwargs=, **options):
tensors arrive as tensors, arrays as arrays, no arguments at all, an nn.Module under
inference_mode, cost(module, *example_args)), auto-ranging (repeats=None within max_time)
and the progress line on a terminal (a pty) and not in a pipe, for Python and `rpxprof run`.
Speed against torch.utils.benchmark is bench/torch_timer.py's (BENCHMARKS.md), not here.
Run by CTest with PYTHONPATH=<build>/python (tests/python/python.cmake)."""
import os
import pty
import select
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import rpxprof

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import common  # noqa: E402  (validate_profile)

BIN = os.environ.get("RPX_BIN")
SANITIZED = os.environ.get("RPX_SANITIZED") == "1" or "LD_PRELOAD" in os.environ


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.fc = torch.nn.Linear(8, 4)
        self.seen = []

    def forward(self, x):
        self.seen.append((type(x), torch.is_inference_mode_enabled()))
        return self.fc(self.conv(x).mean((2, 3)))


def hook_macs(model, *args):
    """MACs of Conv2d and Linear layers counted by torch forward hooks: the truth."""
    total = [0]

    def conv(m, i, o):
        total[0] += o.numel() * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]

    def lin(m, i, o):
        total[0] += o.numel() * m.in_features
    hs = [m.register_forward_hook(conv) for m in model.modules()
          if isinstance(m, torch.nn.Conv2d)]
    hs += [m.register_forward_hook(lin) for m in model.modules()
           if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        model(*args)
    for h in hs:
        h.remove()
    return total[0]


def run_script(code, timeout=300):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ))


def test_a_module_and_a_tensor_in_one_line_with_nothing_on_stderr():
    # a fresh interpreter: no warning at all on stderr (torch's "not writable" among them)
    p = run_script("""
        import torch, rpxprof
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU()).eval()
        r = rpxprof.profile(model, torch.randn(1, 3, 32, 32), repeats=30, warmup=2)
        print(r["status"], len(r["latency_samples_ms"]), r["model_callable"])
        print(r["inputs_file"])
        print(r["python"]["inputs"])
    """)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr
    status, n, name = p.stdout.splitlines()[0].split()
    assert status == "complete" and n == "30" and name == "torch.nn.modules.container:Sequential"
    assert "tensor float32[1,3,32,32] cpu" in p.stdout.splitlines()[1]
    assert "caller's own objects" in p.stdout.splitlines()[2]


def test_tensors_arrive_as_tensors_and_arrays_as_arrays_the_same_objects():
    x, a = torch.randn(2, 3), np.arange(6.0)
    got = []

    def fn(t, arr, *, scale):
        got.append((t is x, arr is a, scale))
        return t * scale

    r = rpxprof.profile(fn, x, a, kwargs={"scale": 2.0}, warmup=1, repeats=5)
    assert r["status"] == "complete"
    assert got and all(g == (True, True, 2.0) for g in got)
    common.validate_profile(r)


def test_a_module_runs_under_inference_mode_unless_told_otherwise():
    m = Tiny().eval()
    x = torch.randn(1, 3, 16, 16)
    rpxprof.profile(m, x, warmup=1, repeats=5)
    assert m.seen and all(s == (torch.Tensor, True) for s in m.seen)
    m.seen.clear()
    rpxprof.profile(m, x, warmup=1, repeats=5, inference_mode=False)
    assert m.seen and all(s == (torch.Tensor, False) for s in m.seen)
    # a closure is the caller's: not under inference_mode unless asked
    m.seen.clear()
    rpxprof.profile(lambda: m(x), warmup=1, repeats=5)
    assert m.seen and not any(s[1] for s in m.seen)
    m.seen.clear()
    rpxprof.profile(lambda: m(x), warmup=1, repeats=5, inference_mode=True)
    assert m.seen and all(s[1] for s in m.seen)


def test_no_arguments_at_all_a_closure_and_an_empty_dict():
    calls = []
    r = rpxprof.profile(lambda: calls.append(1), warmup=2, repeats=7)
    assert r["status"] == "complete" and len(r["latency_samples_ms"]) == 7
    assert len(calls) == 9
    assert r["inputs_file"] == "<arguments: none>"
    r = rpxprof.profile(lambda: None, {}, warmup=0, repeats=3)
    assert r["status"] == "complete"
    common.validate_profile(r)


def test_a_dict_of_tensors_is_keyword_arguments():
    x = torch.ones(3)
    seen = []
    rpxprof.profile(lambda x: seen.append(type(x)), {"x": x}, warmup=0, repeats=3)
    assert seen == [torch.Tensor] * 3


def test_forked_workers_get_the_tensors_by_fork():
    # processes=N forks this process: the tensors are inherited (copy-on-write), not pickled
    m = Tiny().eval()
    x = torch.randn(1, 3, 16, 16)

    def fn(t):
        if not isinstance(t, torch.Tensor) or t.shape != (1, 3, 16, 16):
            raise AssertionError("not the tensor: %r" % type(t))
        return m(t)
    r = rpxprof.profile(fn, x, processes=2, warmup=1, repeats=20)
    assert r["status"] == "complete" and r["processes"] == 2
    assert len(r["latency_samples_ms"]) == 20

    class Strict(torch.nn.Module):  # a forked worker keeps the module's inference mode
        def forward(self, t):
            if not torch.is_inference_mode_enabled():
                raise AssertionError("not under inference_mode in the worker")
            return t * 2
    r = rpxprof.profile(Strict(), x, processes=2, warmup=1, repeats=10)
    assert r["status"] == "complete"


def test_forked_workers_after_cuda_initialised_are_refused(monkeypatch):
    # no GPU needed: the refusal depends on torch.cuda.is_initialized() only
    monkeypatch.setattr(rpxprof._torch, "cuda_initialized", lambda: True)
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(lambda: None, processes=2, repeats=5)
    text = str(e.value)
    assert e.value.code == 2 and "forked child" in text and "processes=None" in text, text
    monkeypatch.undo()
    r = rpxprof.profile(lambda: None, processes=2, repeats=6, warmup=0)
    assert r["status"] == "complete"


def test_errors_speak_python():
    with pytest.raises(rpxprof.RpxprofTypeError) as e:
        rpxprof.profile(lambda *a: 0, {"rgb": np.zeros(3)})
    text = str(e.value)
    assert "--model" not in text and "NPZ" not in text and "rgb" in text, text
    assert e.value.code == 2
    with pytest.raises(rpxprof.RpxprofTypeError) as e:
        rpxprof.profile(lambda x: 0, torch.ones(1), torch.ones(1))
    assert "does not accept the arguments given (2 positional)" in str(e.value)
    assert "kwargs=" in str(e.value)
    with pytest.raises(rpxprof.RpxprofTypeError) as e:
        rpxprof.profile(lambda: 0, repeat=3)
    assert "did you mean 'repeats'" in str(e.value) and "kwargs=" in str(e.value)
    with pytest.raises(rpxprof.RpxprofTypeError) as e:
        rpxprof.profile(lambda: 0, max_time=-1)
    assert "max_time" in str(e.value)

    def boom(x):
        raise ValueError("distinctive 9321")
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(boom, torch.ones(1), warmup=1, repeats=3)
    assert "--model" not in str(e.value) and "distinctive 9321" in str(e.value)
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(boom, torch.ones(1), max_time=2)  # auto-ranging's calibration call
    assert "distinctive 9321" in str(e.value)
    # cost: what was passed and what is expected, never the CLI's --model / NPZ words
    with pytest.raises(rpxprof.RpxprofTypeError) as e:
        rpxprof.cost(lambda: 0)
    assert "torch.nn.Module" in str(e.value) and "not function" in str(e.value)
    with pytest.raises(rpxprof.RpxprofTypeError) as e:
        rpxprof.cost(Tiny())
    assert "example arguments" in str(e.value)
    with pytest.raises(rpxprof.RpxprofTypeError) as e:
        rpxprof.cost("model.onnx", torch.ones(1))
    assert "example arguments are for a torch.nn.Module" in str(e.value)


def test_cost_of_a_module_is_the_forward_hook_count():
    torch.manual_seed(0)
    m = Tiny().eval()
    x = torch.randn(1, 3, 16, 16)
    c = rpxprof.cost(m, x)
    assert c["macs"] == hook_macs(m, x)
    assert c["params"] == sum(p.numel() for p in m.parameters())


@pytest.mark.skipif(SANITIZED, reason="resnet18's export is slow on 2 cores under ASan; "
                    "the normal build checks it")
def test_resnet18_in_one_line_and_its_cost_is_1814073344_macs():
    torchvision = pytest.importorskip("torchvision")
    m = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 224, 224)
    truth = hook_macs(m, x)
    assert truth == 1814073344
    assert rpxprof.cost(m, x)["macs"] == truth
    # the one line works (its speed against Timer: bench/bench_torch_timer.py)
    r = rpxprof.profile(m, x, max_time=4.0)
    assert r["status"] == "complete" and r["model_callable"] == "torchvision.models.resnet:ResNet"
    assert len(r["latency_samples_ms"]) >= 1 and r.autorange["max_time_s"] == 4.0
    r = rpxprof.profile(lambda: m(x), repeats=3, warmup=1)
    assert r["status"] == "complete"


def test_autoranging_stops_within_max_time_and_says_what_it_chose():
    def sleepy():
        time.sleep(0.002)
    t = time.perf_counter()
    r = rpxprof.profile(sleepy, max_time=2.0, min_time=0.5)
    took = time.perf_counter() - t
    # the timed calls stay inside max_time (one call may overrun); the wall clock only
    # shows that the run stopped: a busy 2-core machine under ASan adds seconds of
    # process and report time that are not the loop's
    assert sum(r["latency_samples_ms"]) / 1e3 <= 2.0 + 0.05, r["latency_samples_ms"][-5:]
    assert took < 2.0 + 30, took
    a = r.autorange
    assert a["max_time_s"] == 2.0 and a["min_time_s"] == 0.5 and a["repeats"] >= 10
    assert a["calls"] == len(r["latency_samples_ms"]) == a["repeats"]
    # no calibration calls apart: the first plan is made from 3 timed calls or more
    assert a["first_plan_calls"] >= 3 and a["plans"] >= 1 and a["seconds"] <= took
    assert any(n.startswith("auto-ranging: ") for n in r["notes"])
    # the timed calls fill min_time (sleep only makes a call longer)
    assert sum(r["latency_samples_ms"]) / 1e3 >= 0.5 * 0.9, a
    common.validate_profile(r)


def test_autoranging_across_processes_stops_within_max_time():
    def sleepy():
        time.sleep(0.002)
    t = time.perf_counter()
    r = rpxprof.profile(sleepy, processes=2, max_time=3.0, min_time=0.3, target_precision=0.001)
    took = time.perf_counter() - t
    assert took < 3.0 + 30, took  # it stopped (a busy machine adds seconds of fork and report)
    # +-0.1 % is out of reach for sleep(): the stopping rule added processes until time ran out
    assert r["processes"] >= 2 and r.autorange["processes"] == 2
    assert r.autorange["processes_run"] == r["processes"]
    common.validate_profile(r)


def test_calls_slower_than_the_first_plans_are_replanned():
    # fast at first, then 20x slower: the plan is made again from the calls as they come
    # (issue 38 item 2), so it neither overruns nor stops short of min_time when it fits
    n = [0]

    def sneaky():
        n[0] += 1
        time.sleep(0.001 if n[0] <= 150 else 0.02)
    t = time.perf_counter()
    r = rpxprof.profile(sneaky, max_time=2.0, min_time=1.0)
    took = time.perf_counter() - t
    assert took < 2.0 + 30, took  # it stopped (a busy machine adds seconds of report time)
    assert sum(r["latency_samples_ms"]) / 1e3 <= 2.0 + 0.05  # max_time + one slow call
    a = r.autorange
    assert a["plans"] >= 2 and a["calls"] > 150 - 10, a  # warmup took a few fast ones
    timed = sum(r["latency_samples_ms"]) / 1e3
    # limited_by is truthful: None only when the timed calls reached min_time
    assert (a["limited_by"] is None) == (timed >= 1.0 and a["calls"] >= a["calls_for_precision"]) \
        or "max_time" in (a["limited_by"] or ""), (a, timed)
    assert r["status"] == "complete"
    common.validate_profile(r)


def test_a_slow_call_gets_few_calls_not_a_blown_budget():
    def slow():
        time.sleep(0.3)
    t = time.perf_counter()
    r = rpxprof.profile(slow, max_time=2.0)
    assert time.perf_counter() - t < 2.0 + 30  # it stopped; the count below is the budget's
    # no calibration calls apart any more: the budget left after one warmup call holds 5
    assert 1 <= len(r["latency_samples_ms"]) <= 5 and r["warmup_calls"] == 1


# ---- the progress line: on a terminal, not in a pipe ----

def run_on_pty(argv, env=None, timeout=120):
    """Run argv with stderr (and stdout) on a pseudo-terminal; returns (exit code, output)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                         env=env or dict(os.environ), close_fds=True)
    os.close(slave)
    out = b""
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([master], [], [], 0.5)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    p.wait(timeout=30)
    os.close(master)
    return p.returncode, out.decode("utf-8", "replace")


PROGRESS_SCRIPT = """
import time, rpxprof
def sleepy():
    time.sleep(0.01)
r = rpxprof.profile(sleepy, warmup=1, repeats=200%s)
print("DONE", r["status"])
"""


def test_python_progress_line_on_a_tty_not_in_a_pipe_not_quiet():
    code, out = run_on_pty([sys.executable, "-c", PROGRESS_SCRIPT % ""])
    assert code == 0 and "DONE complete" in out, out
    assert "rpxprof: " in out and "/200 calls" in out and "p50 " in out and " s left" in out, out
    p = subprocess.run([sys.executable, "-c", PROGRESS_SCRIPT % ""], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0 and "DONE complete" in p.stdout
    assert "calls" not in p.stderr and "\r" not in p.stderr, p.stderr
    code, out = run_on_pty([sys.executable, "-c", PROGRESS_SCRIPT % ", quiet=True"])
    assert code == 0 and "DONE complete" in out and "calls" not in out, out


def test_python_no_progress_line_for_a_run_under_a_second():
    code, out = run_on_pty([sys.executable, "-c",
                            PROGRESS_SCRIPT.replace("repeats=200", "repeats=20") % ""])
    assert code == 0 and "DONE complete" in out and "calls" not in out, out


@pytest.mark.skipif(not BIN, reason="RPX_BIN (the rpxprof binary) is not set")
def test_cli_run_progress_line_on_a_tty_not_in_a_pipe(tmp_path):
    (tmp_path / "slow_model.py").write_text(
        "import time\ndef predict(rgb):\n    time.sleep(0.01)\n")
    np.savez(tmp_path / "in.npz", rgb=np.zeros((2, 2, 3), np.uint8))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop("LD_PRELOAD", None)  # the binary is sanitized itself when it is
    argv = [BIN, "run", "--model", "slow_model:predict", "--inputs", str(tmp_path / "in.npz"),
            "--repeats", "150", "--warmup", "1", "--processes", "1", "-o",
            str(tmp_path / "r.json"), "--force"]
    code, out = run_on_pty(argv, env=env)
    assert code == 0, out
    assert "/150 calls" in out and "p50 " in out and " s left" in out, out
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "/150 calls" not in p.stderr and "\r" not in p.stderr, p.stderr
    code, out = run_on_pty(argv + ["--quiet"], env=env)
    assert code == 0 and "/150 calls" not in out, out


def test_compare_run_passes_tensors_natively_and_modules_under_inference_mode():
    """compare_run(module_a, module_b, x): x reaches forward() as the tensor given (no NPZ
    round trip), each module is called under torch.inference_mode(), and the reports'
    inputs_file describes the tensor as profile()'s does."""
    lin = torch.nn.Linear(8, 4).eval()
    x = torch.randn(2, 8)

    class M(torch.nn.Module):
        def forward(self, t):
            assert torch.is_inference_mode_enabled() and t is x
            return lin(t)

    c = rpxprof.compare_run(M(), M(), x, repeats=40, processes=2, warmup=1, threshold="20%")
    assert c.base["inputs_file"] == "<arguments: tensor float32[2,8] cpu>"
    assert c.new["inputs_file"] == c.base["inputs_file"]
