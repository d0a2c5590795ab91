"""rpxprof.reference: the reference profiler's names against the spec's worked numbers and
rules (shared/reference-spec.md sections 0-5), and profile_model on torchvision networks
against independent counts (torch's own p.numel() sum; `rpxprof cost` run on an export made
here). Run with PYTHONPATH=<build>/python; RPX_BIN names the CLI (else <build>/rpxprof)."""
import dataclasses
import io
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import rpxprof
from rpxprof import reference as R
from rpxprof.reference import (REFERENCE_GPUS, ROBOT_CONTROL_HZ, EfficiencyMetadata, GPUSpec,
                               LatencyProfiler, MemoryProfiler, ModelProfiler, ProfileReport,
                               RooflineBound, SystemCard, _find_torch_module, count_flops_torch,
                               count_parameters, estimate_memory_traffic_gb, profile_model)

try:
    import torch
    import torchvision
except ImportError:  # pragma: no cover - Debian's python3-torch/torchvision are test deps
    torch = torchvision = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch/torchvision not installed")


def _bin():
    if os.environ.get("RPX_BIN"):
        return os.environ["RPX_BIN"]
    # <build>/python/rpxprof/__init__.py -> <build>/rpxprof
    return str(Path(rpxprof.__file__).resolve().parents[2] / "rpxprof")


def cli_cost(path):
    p = subprocess.run([_bin(), "cost", str(path), "--json"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


# ------------------------------------------------------------------ EfficiencyMetadata

EFF_FIELDS = ["params_m", "flops_g", "macs_g", "actmem_gb_fp16", "memory_traffic_gb",
              "arithmetic_intensity", "latency_ms_per_sample", "model_type", "notes", "roofline",
              "peak_cpu_mb", "peak_cuda_mb", "peak_mps_mb", "latency_p50_ms", "latency_p95_ms",
              "latency_p99_ms", "system_card"]


def test_efficiency_fields_order_and_defaults():
    fields = dataclasses.fields(EfficiencyMetadata)
    assert [f.name for f in fields] == EFF_FIELDS
    e = EfficiencyMetadata()
    for name in EFF_FIELDS:
        expected = {"model_type": "local", "notes": ""}.get(name)
        assert getattr(e, name) == expected, name
    # rpxprof's extras are attributes, not fields: positional construction is the reference's
    e = EfficiencyMetadata(1.0, 2.0)
    assert (e.params_m, e.flops_g, e.graph_params, e.params_note) == (1.0, 2.0, None, None)
    assert list(dataclasses.asdict(EfficiencyMetadata())) == EFF_FIELDS


def test_derive_tier1_formulas():
    e = EfficiencyMetadata(params_m=3.505, flops_g=10.0)
    e.derive_tier1()
    assert e.macs_g == 5.0
    assert e.memory_traffic_gb == 0.0421            # round(3.505e6 * 4 * 3 / 1e9, 4)
    assert e.arithmetic_intensity == round(10.0 / 0.0421, 2) == 237.53
    e = EfficiencyMetadata(flops_g=7.777)
    e.derive_tier1()
    assert e.macs_g == 3.889 and e.memory_traffic_gb is None and e.arithmetic_intensity is None


def test_traffic_formula_says_which_formula_made_the_number():
    # issue 26: derive_tier1 (the reference's 3 x parameter bytes) and profile_model (the
    # graph's) give different numbers for one model; each result names its formula
    e = EfficiencyMetadata(params_m=11.69)
    assert e.traffic_formula is None
    e.derive_tier1()
    assert e.memory_traffic_gb == 0.1403
    assert e.traffic_formula == R.TRAFFIC_REFERENCE == "reference: 3 x parameter bytes"
    given = EfficiencyMetadata(memory_traffic_gb=0.5)
    given.derive_tier1()
    assert given.traffic_formula == "given: memory_traffic_gb was set by the caller"
    none = EfficiencyMetadata(flops_g=1.0)
    none.derive_tier1()
    assert none.memory_traffic_gb is None and none.traffic_formula is None
    # not a dataclass field: fields(), asdict() and the constructor stay the reference's
    assert "traffic_formula" not in EFF_FIELDS
    assert list(dataclasses.asdict(e)) == EFF_FIELDS


def test_derive_tier1_never_overwrites_and_needs_positive_traffic():
    e = EfficiencyMetadata(params_m=1.0, flops_g=10.0, macs_g=9.0, memory_traffic_gb=2.0,
                           arithmetic_intensity=1.5)
    e.derive_tier1()
    assert (e.macs_g, e.memory_traffic_gb, e.arithmetic_intensity) == (9.0, 2.0, 1.5)
    e = EfficiencyMetadata(flops_g=10.0, memory_traffic_gb=0.0)
    e.derive_tier1()
    assert e.arithmetic_intensity is None
    e = EfficiencyMetadata(flops_g=10.0, memory_traffic_gb=4.0)
    e.derive_tier1()
    assert e.arithmetic_intensity == 2.5


def test_compute_roofline():
    e = EfficiencyMetadata(params_m=1.0)
    assert e.compute_roofline() == {} and e.roofline is None
    assert e.memory_traffic_gb == 0.012                      # derive_tier1 ran first
    e = EfficiencyMetadata(params_m=1.0, flops_g=4878.9)
    bounds = e.compute_roofline()
    assert e.roofline is bounds
    assert list(bounds) == ["A100-80GB", "RTX 4090", "Jetson Orin 64GB"]
    assert bounds["A100-80GB"] == RooflineBound.from_model_and_gpu(4878.9, 0.012,
                                                                   REFERENCE_GPUS["A100-80GB"])
    only = EfficiencyMetadata(flops_g=100.0, memory_traffic_gb=1.0).compute_roofline(
        [GPUSpec("X", 10.0, 100.0, 8.0)])
    assert list(only) == ["X"] and only["X"].latency_ms == 10.0


def test_to_table_row_keys_order_and_api():
    card = SystemCard(gpu_name="A100", gpu_memory_gb=80.0)
    e = EfficiencyMetadata(params_m=1.0, flops_g=4878.9, system_card=card)
    e.compute_roofline()
    row = e.to_table_row()
    assert list(row) == [
        "type", "params_m", "flops_g", "macs_g", "memory_traffic_gb", "arithmetic_intensity",
        "actmem_gb_fp16", "latency_ms_per_sample", "latency_p50_ms", "latency_p95_ms",
        "latency_p99_ms", "peak_cpu_mb", "peak_cuda_mb", "peak_mps_mb",
        "roofline_a100_80gb_ms", "bottleneck_a100_80gb", "roofline_rtx_4090_ms",
        "bottleneck_rtx_4090", "roofline_jetson_orin_64gb_ms", "bottleneck_jetson_orin_64gb",
        "system_card"]
    assert row["type"] == "local" and row["macs_g"] == 2439.45
    assert round(row["roofline_a100_80gb_ms"], 1) == 250.2
    assert row["bottleneck_rtx_4090"] == "compute"
    assert row["system_card"] == card.to_dict()
    api = EfficiencyMetadata(model_type="api").to_table_row()
    assert list(api) == list(row)[:14]
    assert api["params_m"] == api["flops_g"] == api["macs_g"] == "N/A (API)"
    assert all(api[k] is None for k in list(api)[4:])
    local = EfficiencyMetadata().to_table_row()
    assert local["params_m"] is None and local["flops_g"] is None and local["macs_g"] is None


# ------------------------------------------------------------------ GPUs and roofline

def test_reference_gpus_table():
    assert {k: dataclasses.astuple(v) for k, v in REFERENCE_GPUS.items()} == {
        "A100-80GB": ("A100-80GB", 19.5, 2039.0, 80.0, "fp32"),
        "RTX 4090": ("RTX 4090", 82.6, 1008.0, 24.0, "fp32"),
        "Jetson Orin 64GB": ("Jetson Orin 64GB", 5.3, 204.8, 64.0, "fp32"),
    }
    assert [f.name for f in dataclasses.fields(GPUSpec)] == [
        "name", "peak_tflops", "memory_bw_gbps", "memory_gb", "precision"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        REFERENCE_GPUS["RTX 4090"].peak_tflops = 1.0


def test_reference_gpus_are_the_librarys_ref_entries():
    # issue 26: one source. REFERENCE_GPUS is read from librpxprof's built-in ref-* entries
    # (the table `rpxprof gpus` and the run's bounds use), never from RPX_GPU_SPECS, and
    # every entry's label states the numbers it holds
    import re
    import rpxprof._core as core
    table = [g for g in json.loads(core.builtin_gpus()) if g["key"].startswith("ref-")]
    assert [g["name"] for g in table] == list(REFERENCE_GPUS)
    for g in table:
        spec = REFERENCE_GPUS[g["name"]]
        assert spec.peak_tflops == g["peak_tflops"]["fp32"]["vector"]
        assert spec.memory_bw_gbps == g["memory_bandwidth_gbps"]
        assert spec.memory_gb == g["memory_gb"]
        m = re.search(r"REFERENCE_GPUS table: ([0-9.]+) TFLOP/s fp32 and ([0-9.]+) GB/s", g["source"])
        assert m and (float(m[1]), float(m[2])) == (spec.peak_tflops, spec.memory_bw_gbps), g["source"]
        m = re.search(r"worked example ([0-9.]+) GFLOP -> ([0-9.]+) ms", g["source"])
        assert m and round(float(m[1]) / spec.peak_tflops, 1) == float(m[2]), g["source"]
    # the Python table and `rpxprof.roofline` agree on each reference GPU
    for g in table:
        b = rpxprof.roofline(4878.9e9, 0, gpus=[g["key"]])["bounds"][g["key"]]["ideal"]
        ref = RooflineBound.from_model_and_gpu(4878.9, 0.0, REFERENCE_GPUS[g["name"]])
        assert round(b["compute_ms"], 4) == ref.compute_ms


def test_roofline_worked_numbers():
    gpu = GPUSpec("G", 10.0, 100.0, 16.0)
    b = RooflineBound.from_model_and_gpu(100.0, 0.5, gpu)
    assert (b.gpu_name, b.compute_ms, b.memory_ms, b.latency_ms, b.bottleneck) == (
        "G", 10.0, 5.0, 10.0, "compute")
    b = RooflineBound.from_model_and_gpu(flops_g=1.0, traffic_gb=1.0, gpu=gpu)
    assert (b.compute_ms, b.memory_ms, b.latency_ms, b.bottleneck) == (0.1, 10.0, 10.0, "memory")
    tie = RooflineBound.from_model_and_gpu(100.0, 1.0, gpu)
    assert tie.compute_ms == tie.memory_ms == 10.0 and tie.bottleneck == "compute"
    # rounded to 4 decimals before the max: memory is larger unrounded, equal rounded -> compute
    r = RooflineBound.from_model_and_gpu(100.0001, 1.000004, gpu)
    assert (r.compute_ms, r.memory_ms, r.bottleneck) == (10.0, 10.0, "compute")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.latency_ms = 0.0


def test_roofline_4878_9_gflop():
    got = {k: RooflineBound.from_model_and_gpu(4878.9, 1.0, g) for k, g in REFERENCE_GPUS.items()}
    assert {k: round(b.latency_ms, 1) for k, b in got.items()} == {
        "A100-80GB": 250.2, "RTX 4090": 59.1, "Jetson Orin 64GB": 920.5}
    assert got["RTX 4090"].compute_ms == 59.0666 and got["Jetson Orin 64GB"].compute_ms == 920.5472
    assert all(b.bottleneck == "compute" for b in got.values())
    assert got["A100-80GB"].memory_ms == round(1.0 / 2039.0 * 1e3, 4)


# ------------------------------------------------------------------ SystemCard

CARD_KEYS = ["gpu_name", "gpu_memory_gb", "gpu_count", "cpu_name", "ram_gb", "cuda_version",
             "pytorch_version", "python_version", "precision", "batch_size", "input_resolution",
             "os", "driver_version"]


def test_system_card_driver_from_nvml(monkeypatch):
    fake = {"cpu_name": "Test CPU 9000", "ram_gb": 15.98, "driver_version": None,
            "gpus": [{"name": "B", "visible": True, "visible_ordinal": 1, "driver_version": "1"},
                     {"name": "H", "visible": False, "visible_ordinal": None,
                      "driver_version": "2"},
                     {"name": "A", "visible": True, "visible_ordinal": 0,
                      "driver_version": "550.54.15"}]}
    monkeypatch.setattr(R, "_rpxprof_card", lambda device: (fake, None))
    c = SystemCard.auto_detect()
    assert (c.cpu_name, c.ram_gb, c.driver_version) == ("Test CPU 9000", 16.0, "550.54.15")
    if torch is None or not torch.cuda.is_available():
        assert c.gpu_count == 0 and c.gpu_name == ""      # NVML sees GPUs, CUDA cannot use them
    fake["gpus"] = fake["gpus"][1:2]                    # CUDA_VISIBLE_DEVICES hides them all
    assert SystemCard.auto_detect().driver_version == "2"
    monkeypatch.setattr(R, "_rpxprof_card", lambda device: (None, "no library"))
    c = SystemCard.auto_detect()
    assert c.unavailable["rpxprof_card"] == "no library" and c.driver_version == ""


def test_system_card_fields_to_dict_and_summary():
    assert [f.name for f in dataclasses.fields(SystemCard)] == CARD_KEYS
    c = SystemCard()
    assert c.to_dict() == {"gpu_name": "", "gpu_memory_gb": 0.0, "gpu_count": 1, "cpu_name": "",
                           "ram_gb": 0.0, "cuda_version": "", "pytorch_version": "",
                           "python_version": "", "precision": "fp32", "batch_size": 1,
                           "input_resolution": "640x480", "os": "", "driver_version": ""}
    assert list(c.to_dict()) == CARD_KEYS
    assert c.summary() == "fp32"
    c = SystemCard(gpu_name="A100", gpu_memory_gb=80.0, cpu_name="Xeon", pytorch_version="2.1",
                   cuda_version="12.1", precision="fp16")
    assert c.summary() == "A100 (80.0GB) | Xeon | PyTorch 2.1 | CUDA 12.1 | fp16"
    assert SystemCard(cpu_name="EPYC", precision="").summary() == "EPYC"


def _meminfo_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024


def _cpuinfo_model_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()


def test_system_card_auto_detect():
    import platform
    c = SystemCard.auto_detect(precision="fp16", batch_size=4, input_resolution="224x224")
    assert (c.precision, c.batch_size, c.input_resolution) == ("fp16", 4, "224x224")
    assert c.python_version == platform.python_version()
    assert c.os == f"{platform.system()} {platform.release()}"
    assert c.rpxprof_card is not None
    assert c.rpxprof_card["cpu_name"] and c.cpu_name == c.rpxprof_card["cpu_name"]
    if os.path.exists("/proc/cpuinfo") and _cpuinfo_model_name():
        assert c.cpu_name == _cpuinfo_model_name()      # not platform.processor()/"x86_64"
    if os.path.exists("/proc/meminfo"):
        assert abs(c.ram_gb - _meminfo_gib()) <= 0.051
    assert c.ram_gb == round(c.ram_gb, 1) and c.ram_gb > 0
    if torch is not None:
        assert c.pytorch_version == torch.__version__
        if not torch.cuda.is_available():
            assert (c.gpu_name, c.gpu_count, c.cuda_version) == ("", 0, "")
    gpus = c.rpxprof_card.get("gpus")
    if gpus:
        assert c.driver_version == gpus[0]["driver_version"]
    else:
        assert c.driver_version == "" and "driver_version" in c.unavailable
    assert list(c.to_dict()) == CARD_KEYS


# ------------------------------------------------------------------ MemoryProfiler

def test_memory_profiler_shape():
    assert [f.name for f in dataclasses.fields(MemoryProfiler)] == [
        "sample_cpu", "sample_cuda", "sample_mps"]
    m = MemoryProfiler()
    assert m.reset() is m
    peaks = m.peaks()
    assert list(peaks) == ["cpu_mb", "cuda_mb", "mps_mb"]
    assert isinstance(peaks["cpu_mb"], float) and peaks["cpu_mb"] > 0
    assert peaks["cpu_mb"] == round(peaks["cpu_mb"], 3)
    if torch is None or not torch.cuda.is_available():
        assert peaks["cuda_mb"] is None
    assert MemoryProfiler(False, False, False).peaks() == {
        "cpu_mb": None, "cuda_mb": None, "mps_mb": None}


def test_memory_profiler_cpu_peak_is_a_real_peak():
    np = pytest.importorskip("numpy")
    import mmap
    m = MemoryProfiler(sample_cuda=False, sample_mps=False).reset()
    before = m.peaks()["cpu_mb"]
    # 200 MiB in a numpy array, every page touched, on an anonymous mapping of its own that
    # is unmapped afterwards: the pages leave the process whatever the allocator (ASan's
    # quarantine keeps freed malloc memory resident)
    buf = mmap.mmap(-1, 200 * 1024 * 1024)
    a = np.frombuffer(buf, dtype=np.uint8)
    a.fill(1)
    del a
    buf.close()                                # unmapped before reading: current RSS drops
    peak = m.peaks()["cpu_mb"]
    assert peak - before >= 190, (before, peak)
    assert not (m.notes or {}).get("cpu_reset")
    m.reset()
    assert m.peaks()["cpu_mb"] <= peak - 150   # reset() lowers it again


def test_memory_profiler_fallbacks_say_why(monkeypatch, tmp_path):
    monkeypatch.setattr(R, "_PROC_CLEAR_REFS", str(tmp_path / "missing" / "clear_refs"))
    m = MemoryProfiler(sample_cuda=False, sample_mps=False).reset()
    assert "could not be reset" in m.notes["cpu_reset"]
    monkeypatch.setattr(R, "_PROC_STATUS", str(tmp_path / "no-status"))
    peaks = m.peaks()
    import resource
    assert peaks["cpu_mb"] == round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 3)
    assert "ru_maxrss" in m.notes["cpu_mb"]


# ------------------------------------------------------------------ LatencyProfiler

def _lat(values_ms, warmup=0):
    lp = LatencyProfiler(warmup=warmup)
    for v in values_ms:
        lp.add_sample_seconds(v / 1000.0)
    return lp


def test_latency_percentiles_worked_numbers():
    assert [f.name for f in dataclasses.fields(LatencyProfiler)] == ["warmup", "_samples_ms"]
    assert LatencyProfiler().warmup == 1
    assert _lat([10, 20, 30, 40, 50]).percentiles() == {
        "p50_ms": 30.0, "p95_ms": 48.0, "p99_ms": 49.6, "mean_ms": 30.0}
    assert _lat([10, 20]).percentiles()["p50_ms"] == 15.0
    assert _lat([1.00049, 1.0]).percentiles()["mean_ms"] == 1.0   # rounded to 3 decimals


def test_latency_warmup_trim_and_fallback():
    lp = _lat([1000, 10, 20], warmup=1)
    assert lp.percentiles()["p50_ms"] == 15.0
    assert lp.samples_ms() == [1000.0, 10.0, 20.0]            # untrimmed
    lp.samples_ms().append(5.0)
    assert len(lp.samples_ms()) == 3                           # a copy
    assert _lat([10, 20], warmup=5).percentiles()["p50_ms"] == 15.0   # trims all: keep all
    assert LatencyProfiler().percentiles() == {
        "p50_ms": None, "p95_ms": None, "p99_ms": None, "mean_ms": None}


def test_latency_add_batch_seconds():
    lp = LatencyProfiler(warmup=0)
    lp.add_batch_seconds(0.03, 3)
    assert lp.samples_ms() == pytest.approx([10.0, 10.0, 10.0])
    lp.add_batch_seconds(1.0, 0)
    lp.add_batch_seconds(1.0, -2)
    assert len(lp.samples_ms()) == 3


def test_latency_without_numpy_interpolates_as_numpy(monkeypatch):
    monkeypatch.setitem(sys.modules, "numpy", None)    # `import numpy` raises ImportError
    assert _lat([10, 20, 30, 40, 50]).percentiles() == {
        "p50_ms": 30.0, "p95_ms": 48.0, "p99_ms": 49.6, "mean_ms": 30.0}
    assert _lat([10, 20]).percentiles()["p50_ms"] == 15.0
    assert _lat([7.0]).percentiles() == {"p50_ms": 7.0, "p95_ms": 7.0, "p99_ms": 7.0,
                                         "mean_ms": 7.0}


# ------------------------------------------------------------------ model_profiler

def test_find_torch_module_paths():
    class P:
        def parameters(self):
            return iter(())

    def ns(**kw):
        return types.SimpleNamespace(**kw)

    p = P()
    assert _find_torch_module(p) is p
    for path in ["model", "torch_module", "_model", "_pipe.model", "adapter.model",
                 "adapter._model", "adapter.torch_module"]:
        obj = p
        for part in reversed(path.split(".")):
            obj = ns(**{part: obj})
        assert _find_torch_module(obj) is p, path
    q = P()
    assert _find_torch_module(ns(model=ns(), torch_module=p, _model=q)) is p   # order
    assert _find_torch_module(ns(model=ns(parameters=3), _model=q)) is q       # not callable
    assert _find_torch_module(ns(adapter=ns(other=p))) is None
    assert _find_torch_module(object()) is None
    assert ROBOT_CONTROL_HZ == (5.0, 10.0, 30.0)


def test_profile_report_budget_and_summary():
    r = ProfileReport(params_m=3.505, flops_g=3.787, latency_p50_ms=50.0)
    assert r.budget_fraction(5) == 0.25 and r.budget_fraction(30) == 1.5
    assert r.budget_fraction(0) is None and ProfileReport().budget_fraction(5) is None
    assert r.realtime_at_hz(10) is True and r.realtime_at_hz(30) is False
    assert ProfileReport().realtime_at_hz(10) is None
    assert r.compute_budget_fractions() == {"5hz": 0.25, "10hz": 0.5, "30hz": 1.5}
    assert r.budget_fractions == {"5hz": 0.25, "10hz": 0.5, "30hz": 1.5}
    assert r.summary_line() == "3.5M params | 3.8G FLOPs | 50.0ms p50 | \u2713@5hz | \u2713@10hz | \u2717@30hz"
    empty = ProfileReport()
    assert empty.compute_budget_fractions() == {} and empty.summary_line() == "no profile data"
    assert ProfileReport(latency_p50_ms=100.0).summary_line() == "100.0ms p50"
    d = r.to_dict()
    assert list(d) == ["tier1_hardware_agnostic", "tier2_roofline", "tier3_measured",
                       "realtime_budget"]
    assert list(d["tier1_hardware_agnostic"]) == ["params_m", "flops_g", "macs_g",
                                                  "memory_traffic_gb", "arithmetic_intensity"]
    assert list(d["tier3_measured"]) == ["latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
                                         "peak_cpu_mb", "peak_cuda_mb", "peak_mps_mb",
                                         "system_card"]
    assert d["realtime_budget"] == {"5hz": 0.25, "10hz": 0.5, "30hz": 1.5}
    assert [f.name for f in dataclasses.fields(ProfileReport)] == [
        "params_m", "flops_g", "macs_g", "memory_traffic_gb", "arithmetic_intensity", "roofline",
        "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "peak_cpu_mb", "peak_cuda_mb",
        "peak_mps_mb", "system_card", "budget_fractions"]


@needs_torch
def test_model_profiler_with_torch_module():
    net = torch.nn.Sequential(torch.nn.Linear(1000, 1000), torch.nn.ReLU())
    mp = ModelProfiler(types.SimpleNamespace(_pipe=types.SimpleNamespace(model=net)),
                       input_shape=(4, 1000), device="cpu")
    assert mp.has_torch_module and mp._torch_mod is net
    eff = mp.pre_run_profile()
    assert eff.model_type == "local" and eff.params_m == 1.001
    assert eff.flops_g is None                       # the runner counts them, as the reference
    assert eff.memory_traffic_gb == round((1000 * 1000 + 1000 + 2 * 4000) * 4 / 1e9, 4)
    assert eff.system_card.input_resolution == "1000x4"       # W x H, the last two dims
    one_d = ModelProfiler(net, input_shape=(1000,), device="cpu").pre_run_profile()
    assert one_d.params_m == 1.001 and one_d.system_card is None   # guarded, as the reference


def test_model_profiler_without_torch_module():
    mp = ModelProfiler(object(), input_shape=(3, 224, 320), device="cpu")
    assert not mp.has_torch_module and mp.device == "cpu"
    eff = mp.pre_run_profile()
    assert eff.model_type == "classical" and eff.params_m is None and eff.flops_g is None
    assert eff.system_card.input_resolution == "320x224"
    eff.flops_g = 100.0
    eff.memory_traffic_gb = 1.0
    eff.latency_p50_ms = 20.0
    rep = mp.full_report(eff)
    assert rep.macs_g == 50.0 and rep.arithmetic_intensity == 100.0
    assert list(rep.roofline) == list(REFERENCE_GPUS)
    assert list(rep.roofline["RTX 4090"]) == ["compute_ms", "memory_ms", "latency_ms", "bottleneck"]
    assert rep.roofline["A100-80GB"]["compute_ms"] == round(100.0 / 19.5, 4)
    assert rep.budget_fractions == {"5hz": 0.1, "10hz": 0.2, "30hz": 0.6}
    assert rep.system_card == eff.system_card.to_dict()
    none = mp.full_report(EfficiencyMetadata())
    assert none.roofline is None and none.budget_fractions == {} and none.system_card is None


def test_reference_errors():
    e = R.ConfigError("bad value", hint="use 1", details={"k": 1})
    assert str(e) == "bad value\n  hint: use 1" and e.message == "bad value"
    assert e.details == {"k": 1} and isinstance(e, R.RPXError)
    assert str(R.RPXError("plain")) == "plain" and R.RPXError("x").details == {}
    assert isinstance(R.ConfigTypeError("t"), TypeError)


# ------------------------------------------------------------------ torch: parameters, FLOPs

def test_count_parameters_jax_and_none(monkeypatch):
    class Leaf:
        def __init__(self, size):
            self.size = size
    fake = types.ModuleType("jax")
    fake.tree_util = types.SimpleNamespace(tree_leaves=lambda tree: list(tree.values()))
    monkeypatch.setitem(sys.modules, "jax", fake)
    flax_like = types.SimpleNamespace(params={"w": Leaf(1_500_000), "b": Leaf(1234)})
    assert count_parameters(flax_like) == 1.501
    assert count_parameters(object()) is None
    monkeypatch.setitem(sys.modules, "jax", None)
    assert count_parameters(flax_like) is None


@needs_torch
def test_count_parameters_trainable_only():
    net = torch.nn.Sequential(torch.nn.Linear(1000, 1000), torch.nn.Linear(1000, 500))
    net[1].weight.requires_grad_(False)
    assert count_parameters(net) == round((1000 * 1000 + 1000 + 500) / 1e6, 3) == 1.002


@needs_torch
def test_count_flops_small_conv_against_formula():
    conv = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
    # 2 * MACs: 8 out channels * 3 in * 9 taps * 16 * 16 pixels
    assert count_flops_torch(conv, (3, 16, 16)) == round(2 * 8 * 3 * 9 * 16 * 16 / 1e9, 3)
    lin = torch.nn.Linear(4096, 4096)
    flops = count_flops_torch(lin, (4096,))
    assert flops == round((2 * 4096 * 4096 + 4096) / 1e9, 3) == 0.034


@needs_torch
def test_count_flops_none_never_zero():
    assert count_flops_torch(torch.nn.Identity(), (3, 8, 8)) is None     # zero FLOPs -> None

    class Broken(torch.nn.Module):
        def forward(self, x):
            raise ValueError("cannot run")
    assert count_flops_torch(Broken(), (3, 8, 8)) is None
    cost, why = R.graph_cost(Broken(), (3, 8, 8))
    assert cost is None and "cannot run" in why
    assert count_flops_torch(object(), (3, 8, 8)) is None


@needs_torch
def test_estimate_memory_traffic_from_the_graph():
    net = torch.nn.Sequential(torch.nn.Linear(1000, 1000), torch.nn.ReLU(),
                              torch.nn.Linear(1000, 10))
    got = estimate_memory_traffic_gb(net, (50, 1000))
    # weights once (1000*1000 + 1000 + 1000*10 + 10 floats) + the input (50*1000) and output
    # (50*10): the activations between the layers stay on chip (not the unfused traffic)
    weights = 1000 * 1000 + 1000 + 1000 * 10 + 10
    assert got == round((weights + 50 * 1000 + 50 * 10) * 4 / 1e9, 4) == 0.0042
    assert got != round(3 * weights * 4 / 1e9, 4)               # not the reference's 3x

    class Broken(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(250_000))

        def forward(self, x):
            raise ValueError("no export")
    # no graph: the reference's 3 x parameter bytes
    assert estimate_memory_traffic_gb(Broken(), (4,)) == round(3 * 250_000 * 4 / 1e9, 4)
    # and the results that carry the number say which formula made it (issue 26)
    eff = profile_model(net, input_shape=(50, 1000), compute_roofline=False,
                        attach_system_card=False)
    assert eff.memory_traffic_gb == got and eff.traffic_formula == R.TRAFFIC_GRAPH
    assert eff.traffic_formula.startswith("graph: ")
    broken = profile_model(Broken(), input_shape=(4,), compute_roofline=False,
                           attach_system_card=False)
    assert broken.memory_traffic_gb == round(3 * 250_000 * 4 / 1e9, 4)
    assert broken.traffic_formula == R.TRAFFIC_REFERENCE
    pre = ModelProfiler(net, input_shape=(50, 1000), device="cpu").pre_run_profile()
    assert pre.memory_traffic_gb == got and pre.traffic_formula == R.TRAFFIC_GRAPH
    pre.derive_tier1()  # a number that is there keeps its formula
    assert pre.traffic_formula == R.TRAFFIC_GRAPH


@needs_torch
def test_profile_model_api_and_wrapped_module():
    api = profile_model(object(), model_type="api", notes="remote")
    assert (api.model_type, api.notes, api.params_m, api.flops_g, api.roofline,
            api.system_card) == ("api", "remote", None, None, None, None)
    lin = torch.nn.Linear(1024, 1024)
    wrapper = types.SimpleNamespace(adapter=types.SimpleNamespace(model=lin))
    eff = profile_model(wrapper, input_shape=(1024,), attach_system_card=False,
                        compute_roofline=False)
    assert eff.params_m == round((1024 * 1024 + 1024) / 1e6, 3) == 1.05
    assert eff.flops_g == round((2 * 1024 * 1024 + 1024) / 1e9, 3) == 0.002
    assert eff.graph_params == 1024 * 1024 + 1024 and eff.params_note is None
    assert eff.roofline is None and eff.system_card is None


@needs_torch
def test_profile_model_export_path(tmp_path):
    out = tmp_path / "m.onnx"
    conv = torch.nn.Conv2d(3, 4, 3)
    eff = profile_model(conv, input_shape=(3, 32, 32), attach_system_card=False,
                        export_path=str(out))
    assert out.exists()
    assert cli_cost(out)["flops"] == eff.graph_cost["flops"]


def _export(model, shape, path):
    with torch.no_grad():
        torch.onnx.export(model, torch.zeros(1, *shape), str(path))


@pytest.fixture(scope="module")
def mobilenet_v2():
    if torch is None:
        pytest.skip("torch/torchvision not installed")
    torch.manual_seed(0)
    return torchvision.models.mobilenet_v2(weights=None).eval()


@needs_torch
def test_profile_model_mobilenet_v2(mobilenet_v2, tmp_path):
    shape = (3, 480, 640)
    eff = profile_model(mobilenet_v2, input_shape=shape)
    n = sum(p.numel() for p in mobilenet_v2.parameters())     # torch's own count
    assert n == 3_504_872 and eff.params_m == round(n / 1e6, 3) == 3.505
    path = tmp_path / "mnv2.onnx"
    _export(mobilenet_v2, shape, path)
    cli = cli_cost(path)
    assert eff.flops_g == round(cli["flops"] / 1e9, 3) == 3.787
    assert eff.macs_g == round(cli["macs"] / 1e9, 3) == 1.835
    assert eff.memory_traffic_gb == round(cli["traffic_bytes_ideal"] / 1e9, 4)
    assert eff.memory_traffic_unfused_gb == round(cli["traffic_bytes_unfused"] / 1e9, 4)
    assert eff.arithmetic_intensity == round(eff.flops_g / eff.memory_traffic_gb, 2)
    assert eff.graph_params == cli["params"] == 3_475_008 and eff.graph_params_m == 3.475
    # the difference, explained in full: 52 batch norms folded (-17,056 channels) and
    # identical tensors stored once (-12,808); 3,504,872 - 17,056 - 12,808 = 3,475,008
    note = eff.params_note
    assert "3,475,008" in note and "(-29,864)" in note, note
    assert "52 batch-norm layers (17,056 channels)" in note and "(-17,056" in note, note
    assert "(-12,808" in note and "not explained" not in note, note
    assert list(eff.roofline) == list(REFERENCE_GPUS)
    assert eff.roofline["A100-80GB"] == RooflineBound.from_model_and_gpu(
        eff.flops_g, eff.memory_traffic_gb, REFERENCE_GPUS["A100-80GB"])
    assert eff.system_card.input_resolution == "640x480" and eff.system_card.precision == "fp32"
    assert "ideal" in eff.traffic_note
    assert count_flops_torch(mobilenet_v2, shape) == eff.flops_g


@needs_torch
def test_profile_model_resnet18():
    torch.manual_seed(0)
    net = torchvision.models.resnet18(weights=None).eval()
    shape = (3, 224, 224)
    eff = profile_model(net, input_shape=shape, attach_system_card=False)
    n = sum(p.numel() for p in net.parameters())
    assert n == 11_689_512 and eff.params_m == 11.69
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(net, torch.zeros(1, *shape), buf)
    cli = R_cost_file(buf.getvalue())
    assert eff.flops_g == round(cli["flops"] / 1e9, 3)
    assert 3.6 < eff.flops_g < 3.7                  # 2 x 1.814 GMACs + the elementwise ops
    assert eff.macs_g == round(cli["macs"] / 1e9, 3) == 1.814
    assert eff.graph_params == cli["params"] == 11_680_872
    assert "(-4,800" in eff.params_note and "(-3,840" in eff.params_note, eff.params_note
    assert "not explained" not in eff.params_note
    assert eff.system_card is None


@needs_torch
def test_profile_model_params_note_frozen_and_tied():
    net = torch.nn.Sequential(torch.nn.Linear(10, 10), torch.nn.Linear(10, 10))
    net[1].weight = net[0].weight               # tied: the module counts it once
    net[0].bias.requires_grad_(False)           # frozen: not in the reference's count
    eff = profile_model(net, input_shape=(10,), attach_system_card=False)
    assert eff.params_m == round(110 / 1e6, 3) and eff.graph_params == 120
    assert "(+10)" in eff.params_note and "frozen" in eff.params_note, eff.params_note
    assert "not explained" not in eff.params_note


def R_cost_file(onnx_bytes):
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        f.write(onnx_bytes)
        f.flush()
        return cli_cost(f.name)
