"""Issue 39 §2, Python: rpxprof.profile(model, x, layers=True | DEPTH) and the pytest
fixture's layers=: each nn.Module's time from profiled calls after the timed ones, its
FLOPs (FlopCounterMode's counts; torch < 2.1: the same convention counted by rpxprof),
bytes and host-CPU bound, the "unattributed" row, by_op_type. resnet18 from torchvision
with random weights on a 1x3x64x64 input (fast). Run by CTest with
PYTHONPATH=<build>/python (tests/python/python.cmake)."""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

import rpxprof

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import common  # noqa: E402  (validate_profile)

ROW_KEYS = {"name", "op_type", "nodes", "time_ms", "time_ci_ms", "share", "flops", "macs",
            "bytes", "intensity", "bound_ms", "achieved", "gpu_bounds"}
BLOCK_KEYS = {"runtime", "profiled_calls", "processes", "covers", "unprofiled_p50_ms",
              "total_ms", "total_ci_ms", "overhead", "overhead_note", "device",
              "below_10pct_share", "rows", "by_op_type"}
RUN = dict(warmup=2, repeats=10, quiet=True, layers_calls=5)


def resnet18():
    torch.manual_seed(0)
    return torchvision.models.resnet18(weights=None).eval(), torch.randn(1, 3, 64, 64)


@pytest.fixture(scope="module")
def leaves():
    model, x = resnet18()
    return model, x, rpxprof.profile(model, x, layers=True, **RUN)


@pytest.fixture(scope="module")
def depth2():
    model, x = resnet18()
    return model, x, rpxprof.profile(model, x, layers=2, processes=2, **RUN)


def truth_flops(model, x):
    """Each Conv2d's and Linear's FLOPs from its own hyperparameters and the shapes it saw
    (2 per multiply-add, bias not counted: FlopCounterMode's convention), summed over its
    invocations in one call: a count that shares nothing with rpxprof's."""
    out, handles = {}, []
    for name, m in model.named_modules():
        if isinstance(m, torch.nn.Conv2d):
            def hook(mod, inp, o, name=name):
                kh, kw = mod.kernel_size
                out[name] = out.get(name, 0) + \
                    2 * o.numel() * (mod.in_channels // mod.groups) * kh * kw
        elif isinstance(m, torch.nn.Linear):
            def hook(mod, inp, o, name=name):
                out[name] = out.get(name, 0) + \
                    2 * inp[0].numel() // mod.in_features * mod.in_features * mod.out_features
        else:
            continue
        handles.append(m.register_forward_hook(hook))
    with torch.inference_mode():
        model(x)
    for h in handles:
        h.remove()
    return out


def flop_counter_mode(model, x):
    """FlopCounterMode's own per-module counts, where torch has it (>= 2.1), else None."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return None
    with FlopCounterMode(display=False) as c, torch.inference_mode():
        model(x)
    root = type(model).__name__
    return {k[len(root) + 1:]: sum(v.values()) for k, v in c.get_flop_counts().items()
            if k.startswith(root + ".")}


def test_resnet18_module_flops_equal_flop_counter_modes(leaves):
    model, x, report = leaves
    rows = {r["name"]: r for r in report.layers["rows"]}
    truth = truth_flops(model, x)
    assert len(truth) == 21  # 20 Conv2d and the fc
    for name, flops in truth.items():
        assert rows[name]["flops"] == flops, name
        assert rows[name]["macs"] * 2 == flops, name
        assert rows[name]["intensity"] == pytest.approx(flops / rows[name]["bytes"])
    fcm = flop_counter_mode(model, x)
    if fcm is not None:  # torch >= 2.1: the counter itself, module by module
        for name, r in rows.items():
            if name != "unattributed":
                assert r["flops"] == (fcm.get(name) or None), name
    # what the convention does not count is not known: null, never 0
    for name, r in rows.items():
        if name not in truth:
            assert r["flops"] is None and r["macs"] is None and r["intensity"] is None, name
    assert report.layers["flops_counter"]
    conv = next(g for g in report.layers["by_op_type"] if g["op_type"] == "Conv2d")
    assert conv["rows"] == 20
    assert conv["flops"] == sum(v for k, v in truth.items() if k != "fc")


def test_rows_and_unattributed_add_up_to_the_profiled_total(leaves):
    model, x, report = leaves
    block = report.layers
    assert set(block) >= BLOCK_KEYS
    leaf_names = [n for n, m in model.named_modules() if n and not list(m.children())]
    rows = block["rows"]
    assert [r["name"] for r in rows] == leaf_names + ["unattributed"]
    for r in rows:
        assert set(r) >= ROW_KEYS
        assert r["time_ms"] > 0 or r["name"] == "unattributed"
    assert sum(r["time_ms"] for r in rows) == pytest.approx(block["total_ms"], rel=1e-12)
    assert sum(r["share"] for r in rows) == pytest.approx(1.0, rel=1e-12)
    un = rows[-1]
    assert un["op_type"] is None and un["nodes"] is None
    assert all(un[k] is None for k in ("flops", "macs", "bytes", "intensity", "bound_ms",
                                       "achieved"))
    assert sum(g["time_ms"] for g in block["by_op_type"]) == \
        pytest.approx(block["total_ms"] - un["time_ms"], rel=1e-9)
    assert {g["op_type"] for g in block["by_op_type"]} == \
        {"Conv2d", "BatchNorm2d", "ReLU", "MaxPool2d", "AdaptiveAvgPool2d", "Linear"}
    # no module beats its bound (a unit slip of 1e3 in time or FLOP/s would)
    for r in rows:
        if r["achieved"] is not None:
            assert 0 < r["achieved"] <= 1, r
    # one process: no interval across processes; the overhead against the timed p50
    assert block["processes"] == 1 and block["total_ci_ms"] is None
    assert block["unprofiled_p50_ms"] == report.p50_ms
    assert block["overhead"] == pytest.approx(block["total_ms"] / report.p50_ms - 1)
    assert (block["overhead_note"] is not None) == (abs(block["overhead"]) > 0.15)
    common.validate_profile(json.loads(json.dumps(report)))
    # the summary's layer lines: the package's, or the library's once its summary has them
    # (wt-layers' layers_view.c), never both
    text = report.summary()
    heads = [ln for ln in text.splitlines() if ln.lstrip().startswith("layers (torch")]
    assert len(heads) == 1 and "5 profiled calls x 1 process" in heads[0]
    assert "layer4.0.conv2" in text
    assert re.search(r"below 10 % of (its|their) bound", text)
    assert "rpxprof-layers" in report._repr_html_()


def test_layers_2_gives_modules_at_depth_at_most_2_with_intervals(depth2):
    model, x, report = depth2
    block = report.layers
    rows = block["rows"][:-1]
    names = [r["name"] for r in rows]
    assert all(n.count(".") + 1 <= 2 for n in names)
    # the blocks at depth 2, the leaves above it; none inside another
    assert names == ["conv1", "bn1", "relu", "maxpool", "layer1.0", "layer1.1", "layer2.0",
                     "layer2.1", "layer3.0", "layer3.1", "layer4.0", "layer4.1", "avgpool", "fc"]
    block10 = rows[names.index("layer1.0")]
    assert block10["op_type"] == "BasicBlock"
    assert block10["nodes"] == ["layer1.0.conv1", "layer1.0.bn1", "layer1.0.relu",
                                "layer1.0.conv2", "layer1.0.bn2"]
    assert rows[names.index("conv1")]["nodes"] is None
    truth = truth_flops(model, x)
    assert block10["flops"] == truth["layer1.0.conv1"] + truth["layer1.0.conv2"]
    assert block["processes"] == 2 and report["processes"] == 2
    for r in block["rows"]:
        lo, hi = r["time_ci_ms"]
        assert lo <= hi
    assert block["total_ci_ms"][0] <= block["total_ms"] <= block["total_ci_ms"][1]
    assert sum(r["time_ms"] for r in block["rows"]) == pytest.approx(block["total_ms"])


# ---- refusals: before anything runs ----

def test_a_callable_that_is_not_a_module_is_refused():
    model, x = resnet18()
    with pytest.raises(rpxprof.RpxprofTypeError, match=r"torch\.nn\.Module.*rpxprof\."
                                                     r"profile\(model, x, layers=True\)"):
        rpxprof.profile(lambda t: model(t), x, layers=True, **RUN)
    with pytest.raises(rpxprof.RpxprofTypeError, match="layers: True"):
        rpxprof.profile(model, x, layers="all", **RUN)
    with pytest.raises(rpxprof.RpxprofTypeError, match="layers: True"):
        rpxprof.profile(model, x, layers=0, **RUN)
    import numpy as np
    with pytest.raises(rpxprof.RpxprofTypeError, match="own arguments"):
        rpxprof.profile(model, {"x": np.zeros((1, 3, 8, 8), np.float32)}, layers=True, **RUN)


# ---- the timed calls stay unhooked ----

class Watched(torch.nn.Module):
    """Counts, in this process, the calls made while its child carries hooks."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.calls = [0, 0]  # [without hooks, with]

    def forward(self, x):
        self.calls[bool(self.lin._forward_hooks or self.lin._forward_pre_hooks)] += 1
        return self.lin(x)


def test_the_timed_calls_run_without_hooks():
    m = Watched().eval()
    report = rpxprof.profile(m, torch.randn(2, 4), warmup=3, repeats=40, quiet=True,
                             layers=True, layers_calls=7)
    # warmup + timed calls unhooked; the 3 profiled warmup + 7 profiled calls hooked, then
    # the two cost passes (FLOPs, bytes) hooked as well
    assert m.calls[0] == 3 + 40
    assert m.calls[1] == 3 + 7 + 2
    assert report.layers["profiled_calls"] == 7
    assert [r["name"] for r in report.layers["rows"]] == ["lin", "unattributed"]
    assert report.layers["rows"][0]["flops"] == 2 * 2 * 4 * 4


class FailsWhenHooked(Watched):
    def forward(self, x):
        if self.lin._forward_hooks:
            raise ValueError("hooked")
        return self.lin(x)


def test_profiled_calls_that_fail_leave_layers_null_and_say_why():
    m = FailsWhenHooked().eval()
    with pytest.warns(RuntimeWarning, match=r"layers: no worker process .*ValueError: hooked"):
        report = rpxprof.profile(m, torch.randn(2, 4), warmup=2, repeats=20, quiet=True,
                                 layers=True, processes=2)
    assert report.status == "complete" and report.layers is None and report["layers"] is None
    assert any("ValueError: hooked" in w for w in report.warnings)
    assert any("ValueError: hooked" in n for n in report["notes"])
    common.validate_profile(json.loads(json.dumps(report)))


# ---- the pytest fixture ----

def test_the_pytest_fixture_takes_layers(tmp_path):
    (tmp_path / "test_model.py").write_text(textwrap.dedent('''
        import torch


        def test_model(rpxprof_benchmark):
            m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).eval()
            r = rpxprof_benchmark(m, torch.randn(1, 8), repeats=20, layers=1, layers_calls=3)
            assert [row["name"] for row in r.layers["rows"]] == ["0", "1", "unattributed"]
    '''))
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "rpxprof.pytest_plugin", "--rpxprof-save", str(tmp_path / "out"),
                        str(tmp_path / "test_model.py")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    saved = json.loads(next((tmp_path / "out").iterdir()).read_text())
    assert saved["layers"]["rows"][0]["flops"] == 2 * 8 * 8
