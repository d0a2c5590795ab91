"""The reference profiler's public names, with its behaviour and rpxprof's numbers.

Code written for the RPX benchmark's ``rpx_benchmark.profiler`` and
``rpx_benchmark.model_profiler`` runs after changing one import::

    from rpx_benchmark.profiler import profile_model, LatencyProfiler   # before
    from rpxprof.reference import profile_model, LatencyProfiler        # after

The classes keep the reference's fields, their order and defaults, its roundings, derivations,
"N/A (API)" and key orders (docs/python.md, "Code written for the reference"). Where the
reference gives a wrong number, the name stays and the number is the right one:

* ``MemoryProfiler``'s CPU peak is a real peak (VmHWM of /proc/self/status, reset by writing 5
  to /proc/self/clear_refs), not the current RSS;
* ``SystemCard.auto_detect`` fills the CPU name, RAM and NVML's driver version from rpxprof's
  system card;
* ``count_flops_torch`` and ``profile_model`` count FLOPs (and MACs) on the graph: the module
  is exported to ONNX in memory and costed by librpxprof (``rpxprof.cost``), where the
  reference needs FlopCounterMode (absent from torch 1.13) or fvcore and otherwise gives None;
* ``estimate_memory_traffic_gb`` is rpxprof's traffic of that graph (weights once plus inputs
  and outputs), not "3 x parameter bytes";
* ``LatencyProfiler.percentiles`` without numpy interpolates as numpy does (the reference
  falls back to a nearest rank, so its numbers depend on whether numpy is installed).

Nothing here imports torch, numpy or psutil at import time.
"""

from __future__ import annotations

import io
import logging
import platform
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = [
    "RPXError", "ConfigError", "ConfigTypeError",
    "EfficiencyMetadata", "GPUSpec", "REFERENCE_GPUS", "RooflineBound", "SystemCard",
    "MemoryProfiler", "LatencyProfiler", "count_parameters", "count_flops_torch",
    "estimate_memory_traffic_gb", "profile_model", "graph_cost",
    "ROBOT_CONTROL_HZ", "ProfileReport", "ModelProfiler",
]

_log = logging.getLogger("rpxprof.reference")

_MIB = 1024 * 1024


# --------------------------------------------------------------------------------------------
# Exceptions (rpx_benchmark/exceptions.py)

class RPXError(Exception):
    """The reference's base error: ``RPXError(message, *, hint=None, details=None)``."""

    def __init__(self, message: str, *, hint: Optional[str] = None,
                 details: Optional[Dict[str, Any]] = None) -> None:
        self.message = message
        self.hint = hint
        self.details = dict(details) if details else {}
        super().__init__(message)

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class ConfigError(RPXError):
    """A bad configuration value."""


class ConfigTypeError(ConfigError, TypeError):
    """A configuration value of the wrong type."""


# --------------------------------------------------------------------------------------------
# Tier 2: GPUSpec, REFERENCE_GPUS, RooflineBound

@dataclass(frozen=True)
class GPUSpec:
    """A GPU for the roofline. All numbers are for the precision specified by `precision`
    (default FP32)."""

    name: str
    peak_tflops: float
    memory_bw_gbps: float
    memory_gb: float
    precision: str = "fp32"


def _reference_gpus() -> Dict[str, GPUSpec]:
    """The reference's table, read from librpxprof's built-in ref-* entries (one source: the
    table `rpxprof gpus`, `rpxprof roofline` and a run's bounds use; no RPX_GPU_SPECS file
    changes it), keyed by the reference's names."""
    import json

    from . import _core
    out: Dict[str, GPUSpec] = {}
    for g in json.loads(_core.builtin_gpus()):
        if g["key"].startswith("ref-"):
            out[g["name"]] = GPUSpec(g["name"], float(g["peak_tflops"]["fp32"]["vector"]),
                                     float(g["memory_bandwidth_gbps"]), float(g["memory_gb"]))
    return out


# Reference GPUs covering datacenter, workstation, and edge-robot scenarios (the reference's
# table, FP32 only; `rpxprof gpus` has the full table with every precision and its sources):
# A100-80GB 19.5 TFLOP/s, 2039 GB/s, 80 GB; RTX 4090 82.6, 1008, 24; Jetson Orin 64GB 5.3,
# 204.8, 64.
REFERENCE_GPUS: Dict[str, GPUSpec] = _reference_gpus()


@dataclass(frozen=True)
class RooflineBound:
    """The roofline lower bound of one model on one GPU (Williams et al. 2009)."""

    gpu_name: str
    compute_ms: float
    memory_ms: float
    latency_ms: float
    bottleneck: str

    @classmethod
    def from_model_and_gpu(cls, flops_g: float, traffic_gb: float, gpu: GPUSpec) -> "RooflineBound":
        """compute = FLOPs / peak, memory = traffic / bandwidth, each in ms rounded to 4
        decimals before the max; a tie is compute-bound."""
        compute_ms = round(flops_g / (gpu.peak_tflops * 1e3) * 1e3, 4)
        memory_ms = round(traffic_gb / gpu.memory_bw_gbps * 1e3, 4)
        bottleneck = "compute" if compute_ms >= memory_ms else "memory"
        return cls(gpu_name=gpu.name, compute_ms=compute_ms, memory_ms=memory_ms,
                   latency_ms=max(compute_ms, memory_ms), bottleneck=bottleneck)


# --------------------------------------------------------------------------------------------
# Tier 3: SystemCard

def _rpxprof_card(device: str) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """rpxprof's system card for `device`, or (None, why)."""
    try:
        from . import system_card  # the package's wrapper of the library
    except ImportError as exc:  # pragma: no cover - the package is always there in a build
        return None, f"rpxprof.system_card is unavailable: {exc}"
    try:
        return system_card(device=device), None
    except Exception as exc:  # noqa: BLE001 - best effort, as the reference
        return None, f"rpxprof.system_card(device={device!r}) failed: {exc}"


def _nvml_gpus(card: Optional[Dict[str, Any]]) -> Optional[List[Dict[str, Any]]]:
    """The GPUs NVML sees (None without NVML), those CUDA_VISIBLE_DEVICES lets through first
    in CUDA order (the driver version is the machine's, hidden GPUs included)."""
    if not card or not isinstance(card.get("gpus"), list):
        return None
    gpus = [g for g in card["gpus"] if isinstance(g, dict)]
    gpus.sort(key=lambda g: (g.get("visible_ordinal") is None, g.get("visible_ordinal") or 0))
    return gpus


@dataclass
class SystemCard:
    """The hardware and software a measurement ran on (the MLPerf convention)."""

    gpu_name: str = ""
    gpu_memory_gb: float = 0.0
    gpu_count: int = 1
    cpu_name: str = ""
    ram_gb: float = 0.0
    cuda_version: str = ""
    pytorch_version: str = ""
    python_version: str = ""
    precision: str = "fp32"
    batch_size: int = 1
    input_resolution: str = "640x480"
    os: str = ""
    driver_version: str = ""

    # Not dataclass fields (no annotation): rpxprof's whole card, and why a field stayed empty.
    rpxprof_card = None
    unavailable = None

    @classmethod
    def auto_detect(cls, precision: str = "fp32", batch_size: int = 1,
                    input_resolution: str = "640x480") -> "SystemCard":
        """Best effort, as the reference, with rpxprof's card for the CPU name, the RAM and the
        driver version (the reference never detects the driver and takes the CPU name from
        `platform.processor()`, which is empty or "x86_64" on Linux)."""
        card = cls(precision=precision, batch_size=batch_size, input_resolution=input_resolution)
        why: Dict[str, str] = {}
        card.python_version = platform.python_version()
        card.os = f"{platform.system()} {platform.release()}"

        torch = None
        cuda = False
        try:
            import torch  # type: ignore
        except ImportError:
            torch = None
        if torch is not None:
            card.pytorch_version = str(torch.__version__)
            try:
                cuda = bool(torch.cuda.is_available())
            except Exception:  # noqa: BLE001
                cuda = False

        rpx, reason = _rpxprof_card("cuda" if cuda else "cpu")
        if rpx is None and cuda:
            rpx, reason = _rpxprof_card("cpu")
        card.rpxprof_card = rpx
        if rpx is None:
            why["rpxprof_card"] = reason or "unknown"

        cpu_name = rpx.get("cpu_name") if rpx else None
        card.cpu_name = cpu_name or platform.processor() or platform.machine()
        if rpx and isinstance(rpx.get("ram_gb"), (int, float)):
            card.ram_gb = round(float(rpx["ram_gb"]), 1)
        else:
            try:
                import psutil  # type: ignore
                card.ram_gb = round(psutil.virtual_memory().total / 1024 ** 3, 1)
            except Exception:  # noqa: BLE001
                why["ram_gb"] = "neither rpxprof's card nor psutil gave the RAM"

        gpus = _nvml_gpus(rpx)
        if cuda:
            try:
                props = torch.cuda.get_device_properties(0)
                card.gpu_name = props.name
                card.gpu_memory_gb = round(props.total_memory / 1024 ** 3, 1)
                card.gpu_count = torch.cuda.device_count()
                card.cuda_version = torch.version.cuda or ""
            except Exception as exc:  # noqa: BLE001
                why["gpu_name"] = f"torch.cuda failed: {exc}"
        elif gpus is not None:
            card.gpu_count = 0  # CUDA is not usable here: no GPU described (rpxprof's cpu card)
        elif torch is not None:
            card.gpu_count = 0  # torch says there is no usable CUDA GPU
        else:
            why["gpu_count"] = ("neither torch nor NVML could say how many GPUs there are; "
                                "the reference's default (1) is kept")

        driver = rpx.get("driver_version") if rpx else None
        if not driver and gpus:
            driver = gpus[0].get("driver_version")
        if driver:
            card.driver_version = str(driver)
        elif rpx is not None:
            why["driver_version"] = ((rpx.get("unavailable") or {}).get("gpus")
                                     or "NVML gave no driver version")
        card.unavailable = why
        return card

    def to_dict(self) -> Dict[str, Any]:
        return {
            "gpu_name": self.gpu_name,
            "gpu_memory_gb": self.gpu_memory_gb,
            "gpu_count": self.gpu_count,
            "cpu_name": self.cpu_name,
            "ram_gb": self.ram_gb,
            "cuda_version": self.cuda_version,
            "pytorch_version": self.pytorch_version,
            "python_version": self.python_version,
            "precision": self.precision,
            "batch_size": self.batch_size,
            "input_resolution": self.input_resolution,
            "os": self.os,
            "driver_version": self.driver_version,
        }

    def summary(self) -> str:
        parts = []
        if self.gpu_name:
            parts.append(f"{self.gpu_name} ({self.gpu_memory_gb}GB)")
        if self.cpu_name:
            parts.append(self.cpu_name)
        if self.pytorch_version:
            parts.append(f"PyTorch {self.pytorch_version}")
        if self.cuda_version:
            parts.append(f"CUDA {self.cuda_version}")
        parts.append(self.precision)
        return " | ".join(p for p in parts if p)


# --------------------------------------------------------------------------------------------
# Tier 1: EfficiencyMetadata

# Which formula made memory_traffic_gb (EfficiencyMetadata.traffic_formula; rpxprof's reports
# say the same in efficiency.traffic_formula). The reference's derive_tier1 keeps its formula;
# profile_model and estimate_memory_traffic_gb use the graph's, as every rpxprof report does.
TRAFFIC_REFERENCE = "reference: 3 x parameter bytes"
TRAFFIC_GRAPH = "graph: weights once + the graph's inputs and outputs"
TRAFFIC_GIVEN = "given: memory_traffic_gb was set by the caller"

@dataclass
class EfficiencyMetadata:
    """Model cost (Tier 1), roofline bounds (Tier 2) and measurements (Tier 3)."""

    params_m: Optional[float] = None
    flops_g: Optional[float] = None
    macs_g: Optional[float] = None
    actmem_gb_fp16: Optional[float] = None
    memory_traffic_gb: Optional[float] = None
    arithmetic_intensity: Optional[float] = None
    latency_ms_per_sample: Optional[float] = None
    model_type: str = "local"
    notes: str = ""
    roofline: Optional[Dict[str, RooflineBound]] = None
    peak_cpu_mb: Optional[float] = None
    peak_cuda_mb: Optional[float] = None
    peak_mps_mb: Optional[float] = None
    latency_p50_ms: Optional[float] = None
    latency_p95_ms: Optional[float] = None
    latency_p99_ms: Optional[float] = None
    system_card: Optional[SystemCard] = None

    # rpxprof's additions. Class attributes without annotations, so not dataclass fields:
    # dataclasses.fields(), asdict() and the constructor stay the reference's. profile_model
    # sets them on the instance.
    graph_params = None            # int: parameters in the exported ONNX graph
    graph_params_m = None          # round(graph_params / 1e6, 3)
    params_note = None             # why graph_params differs from the module's count
    flops_note = None              # why flops_g is None (or how it was counted)
    traffic_note = None            # where memory_traffic_gb came from
    traffic_formula = None         # which formula made memory_traffic_gb (TRAFFIC_*)
    memory_traffic_unfused_gb = None  # every node reading its inputs and writing its outputs
    graph_cost = None              # the whole `rpxprof cost --json` object of the export

    def derive_tier1(self) -> None:
        """Fill what is missing from what is known; never overwrite."""
        if self.flops_g is not None and self.macs_g is None:
            self.macs_g = round(self.flops_g / 2.0, 3)
        if self.memory_traffic_gb is None and self.params_m is not None:
            param_bytes = self.params_m * 1e6 * 4
            self.memory_traffic_gb = round(param_bytes * 3 / 1e9, 4)
            self.traffic_formula = TRAFFIC_REFERENCE
        elif self.memory_traffic_gb is not None and self.traffic_formula is None:
            self.traffic_formula = TRAFFIC_GIVEN
        if (self.arithmetic_intensity is None and self.flops_g is not None
                and self.memory_traffic_gb is not None and self.memory_traffic_gb > 0):
            self.arithmetic_intensity = round((self.flops_g * 1e9) / (self.memory_traffic_gb * 1e9), 2)

    def compute_roofline(self, specs: Optional[Sequence[GPUSpec]] = None) -> Dict[str, RooflineBound]:
        if specs is None:
            specs = list(REFERENCE_GPUS.values())
        self.derive_tier1()
        if self.flops_g is None or self.memory_traffic_gb is None:
            return {}
        bounds: Dict[str, RooflineBound] = {}
        for gpu in specs:
            bounds[gpu.name] = RooflineBound.from_model_and_gpu(
                flops_g=self.flops_g, traffic_gb=self.memory_traffic_gb, gpu=gpu)
        self.roofline = bounds
        return bounds

    def to_table_row(self) -> Dict[str, Any]:
        na = "N/A (API)" if self.model_type == "api" else None
        row: Dict[str, Any] = {
            "type": self.model_type,
            "params_m": self.params_m if self.params_m is not None else na,
            "flops_g": self.flops_g if self.flops_g is not None else na,
            "macs_g": self.macs_g if self.macs_g is not None else na,
            "memory_traffic_gb": self.memory_traffic_gb,
            "arithmetic_intensity": self.arithmetic_intensity,
            "actmem_gb_fp16": self.actmem_gb_fp16,
            "latency_ms_per_sample": self.latency_ms_per_sample,
            "latency_p50_ms": self.latency_p50_ms,
            "latency_p95_ms": self.latency_p95_ms,
            "latency_p99_ms": self.latency_p99_ms,
            "peak_cpu_mb": self.peak_cpu_mb,
            "peak_cuda_mb": self.peak_cuda_mb,
            "peak_mps_mb": self.peak_mps_mb,
        }
        if self.roofline:
            for gpu_name, bound in self.roofline.items():
                key = gpu_name.lower().replace(" ", "_").replace("-", "_")
                row[f"roofline_{key}_ms"] = bound.latency_ms
                row[f"bottleneck_{key}"] = bound.bottleneck
        if self.system_card is not None:
            row["system_card"] = self.system_card.to_dict()
        return row


# --------------------------------------------------------------------------------------------
# Tier 3: memory

_PROC_STATUS = "/proc/self/status"
_PROC_CLEAR_REFS = "/proc/self/clear_refs"
_cpu_peak_reason: Optional[str] = None  # why the last CPU peak is not VmHWM, or not resettable


def _vmhwm_kib() -> Optional[int]:
    try:
        with open(_PROC_STATUS, "r", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cpu_peak_rss_mb() -> Optional[float]:
    """The process's resident-set high-water mark in MiB (VmHWM; since the last reset, see
    MemoryProfiler.reset), else ru_maxrss (since the process started), else None."""
    global _cpu_peak_reason
    kib = _vmhwm_kib()
    if kib is not None:
        return round(kib * 1024 / _MIB, 3)
    try:
        import resource
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (ImportError, OSError):
        _cpu_peak_reason = f"neither VmHWM ({_PROC_STATUS}) nor getrusage is available"
        return None
    _cpu_peak_reason = (f"no VmHWM in {_PROC_STATUS}: ru_maxrss, the peak since the process "
                        "started, which cannot be reset")
    # macOS reports bytes, Linux and the BSDs KiB.
    if sys.platform == "darwin":
        return round(maxrss / _MIB, 3)
    return round(maxrss / 1024, 3)


def _reset_cpu_peak() -> Optional[str]:
    """Reset VmHWM to the current RSS (clear_refs "5"); None when done, else why not."""
    try:
        with open(_PROC_CLEAR_REFS, "w", encoding="ascii") as f:
            f.write("5")
        return None
    except OSError as exc:
        return (f"the CPU peak could not be reset (writing 5 to {_PROC_CLEAR_REFS} failed: "
                f"{exc.strerror or exc}): it is the peak since the process started")


def _loaded_torch():
    """torch if this process already imported it (else torch has allocated nothing here)."""
    return sys.modules.get("torch")


def _cuda_peak_alloc_mb() -> Optional[float]:
    torch = _loaded_torch()
    if torch is None or not hasattr(torch, "cuda"):
        return None
    try:
        if not torch.cuda.is_available():
            return None
        return round(torch.cuda.max_memory_allocated() / _MIB, 3)
    except Exception:  # noqa: BLE001
        return None


def _mps_current_alloc_mb() -> Optional[float]:
    torch = _loaded_torch()
    if torch is None or not hasattr(torch, "mps"):
        return None
    try:
        if not torch.backends.mps.is_available():
            return None
        fn = getattr(torch.mps, "current_allocated_memory", None)
    except AttributeError:
        return None
    if fn is None:
        return None
    try:
        return round(fn() / _MIB, 3)
    except Exception:  # noqa: BLE001
        return None


@dataclass
class MemoryProfiler:
    """Peak memory per backend, in MiB rounded to 3 decimals; None where unavailable.

    cpu_mb is the resident-set high-water mark since the last reset() (VmHWM; reset() writes 5
    to /proc/self/clear_refs, which resets it for the whole process); cuda_mb is torch's
    max_memory_allocated since reset(); mps_mb is torch's current MPS allocation, as the
    reference (no peak API). `notes` says why a value is not what its name says.
    """

    sample_cpu: bool = True
    sample_cuda: bool = True
    sample_mps: bool = True

    notes = None  # not a field: {"cpu_mb": reason, ...} set by reset()/peaks()

    def _note(self, key: str, reason: Optional[str]) -> None:
        notes = dict(self.notes or {})
        if reason:
            notes[key] = reason
        else:
            notes.pop(key, None)
        self.notes = notes

    def reset(self) -> "MemoryProfiler":
        if self.sample_cpu:
            self._note("cpu_reset", _reset_cpu_peak())
        if self.sample_cuda:
            torch = _loaded_torch()
            try:
                if torch is not None and torch.cuda.is_available():
                    torch.cuda.reset_peak_memory_stats()
            except Exception:  # noqa: BLE001
                pass
        return self

    def peaks(self) -> Dict[str, Optional[float]]:
        global _cpu_peak_reason
        cpu = None
        if self.sample_cpu:
            _cpu_peak_reason = None
            cpu = _cpu_peak_rss_mb()
            self._note("cpu_mb", _cpu_peak_reason)
        return {
            "cpu_mb": cpu,
            "cuda_mb": _cuda_peak_alloc_mb() if self.sample_cuda else None,
            "mps_mb": _mps_current_alloc_mb() if self.sample_mps else None,
        }


# --------------------------------------------------------------------------------------------
# Tier 3: latency

def _linear_percentile(sorted_vals: List[float], q: float) -> float:
    """numpy's default (linear, type 7): position q/100 * (n - 1)."""
    n = len(sorted_vals)
    pos = q / 100.0 * (n - 1)
    lo = int(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * frac


@dataclass
class LatencyProfiler:
    """Wall-clock samples in ms; the first `warmup` samples are left out of the statistics."""

    warmup: int = 1
    _samples_ms: List[float] = field(default_factory=list)

    def add_sample_seconds(self, seconds: float) -> None:
        self._samples_ms.append(float(seconds) * 1000.0)

    def add_batch_seconds(self, batch_seconds: float, batch_size: int) -> None:
        if batch_size <= 0:
            return
        per = batch_seconds / batch_size
        self._samples_ms.extend([per * 1000.0] * batch_size)

    def percentiles(self) -> Dict[str, Optional[float]]:
        trimmed = self._samples_ms[self.warmup:] or self._samples_ms
        if not trimmed:
            return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "mean_ms": None}
        try:
            import numpy as np  # type: ignore
        except ImportError:
            np = None
        if np is not None:
            p50, p95, p99 = np.percentile(trimmed, [50, 95, 99])
            mean = np.mean(trimmed)
        else:
            s = sorted(trimmed)
            p50, p95, p99 = (_linear_percentile(s, q) for q in (50, 95, 99))
            mean = sum(s) / len(s)
        return {"p50_ms": round(float(p50), 3), "p95_ms": round(float(p95), 3),
                "p99_ms": round(float(p99), 3), "mean_ms": round(float(mean), 3)}

    def samples_ms(self) -> List[float]:
        return list(self._samples_ms)


# --------------------------------------------------------------------------------------------
# Cost: parameters, FLOPs (the graph's, through librpxprof), traffic

def count_parameters(model: Any) -> Optional[float]:
    """Trainable parameters in millions, round(n / 1e6, 3); JAX/Flax `model.params`; else None."""
    try:
        n = sum(p.numel() for p in model.parameters() if p.requires_grad)
        return round(n / 1e6, 3)
    except AttributeError:
        pass
    try:
        import jax  # type: ignore
        leaves = jax.tree_util.tree_leaves(model.params)
        return round(sum(leaf.size for leaf in leaves) / 1e6, 3)
    except (AttributeError, ImportError):
        pass
    return None


def _module_device(module: Any):
    for getter in ("parameters", "buffers"):
        try:
            for t in getattr(module, getter)():
                return t.device
        except Exception:  # noqa: BLE001
            continue
    return None


def _export_onnx(module: Any, input_shape: Sequence[int], device: str) -> bytes:
    """ONNX bytes of `module` on zeros(1, *input_shape), exported in memory (eval mode, with
    the exporter's defaults: constant folding, so batch norm folds into the convolution)."""
    import torch  # type: ignore

    dev = _module_device(module)
    if dev is None:
        dev = torch.device(device)
    dummy = torch.zeros(1, *tuple(input_shape), device=dev)
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, (dummy,), buf)
    return buf.getvalue()


def _graph_cost(model: Any, input_shape: Sequence[int], device: str,
                export_path: Optional[str] = None):
    """(cost dict or None, why not or None, the ONNX bytes or None)."""
    try:
        import torch  # type: ignore  # noqa: F401
    except ImportError:
        return None, "torch is not installed", None
    module = _find_torch_module(model)
    if module is None:
        return None, "no torch module found in the model (_find_torch_module)", None
    try:
        onnx_bytes = _export_onnx(module, input_shape, device)
    except RuntimeError as exc:
        if "out of memory" not in str(exc).lower():
            return None, f"torch.onnx.export failed: {exc}", None
        # As the reference: retry on the CPU, then put the module back.
        original = _module_device(module)
        try:
            module.cpu()
            onnx_bytes = _export_onnx(module, input_shape, "cpu")
        except Exception as exc2:  # noqa: BLE001
            return None, (f"torch.onnx.export failed on {device} (out of memory) and on cpu: "
                          f"{exc2}"), None
        finally:
            if original is not None:
                try:
                    module.to(original)
                except Exception:  # noqa: BLE001
                    pass
    except Exception as exc:  # noqa: BLE001
        return None, f"torch.onnx.export failed: {type(exc).__name__}: {exc}", None
    if export_path is not None:
        with open(export_path, "wb") as f:
            f.write(onnx_bytes)
    try:
        from . import cost as _cost
    except ImportError as exc:  # pragma: no cover
        return None, f"rpxprof.cost is unavailable: {exc}", onnx_bytes
    try:
        return _cost(onnx_bytes), None, onnx_bytes
    except Exception as exc:  # noqa: BLE001
        return None, f"rpxprof.cost refused the export: {exc}", onnx_bytes


def graph_cost(model: Any, input_shape: Sequence[int] = (3, 480, 640), device: str = "cpu",
               *, export_path: Optional[str] = None) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """rpxprof's cost of `model` (an nn.Module, or an object `_find_torch_module` finds one in)
    exported to ONNX in memory on zeros(1, *input_shape): (the `rpxprof cost --json` object,
    None), or (None, why not). `export_path` also writes the ONNX file there."""
    cost, reason, _ = _graph_cost(model, input_shape, device, export_path)
    return cost, reason


def _flops_from_cost(cost: Optional[Dict[str, Any]], reason: Optional[str]) -> Tuple[Optional[float], str]:
    if cost is None:
        return None, reason or "no graph"
    flops = cost.get("flops")
    if cost.get("partial"):
        unsupported = ", ".join(sorted({str(u.get("op_type", u)) if isinstance(u, dict) else str(u)
                                        for u in cost.get("unsupported") or []})) or "?"
        part = f"{flops / 1e9:.3f} GFLOP" if isinstance(flops, (int, float)) else "unknown"
        return None, (f"the graph's count is partial (coverage {cost.get('coverage')}; not costed: "
                      f"{unsupported}); the costed nodes' total is {part}, see graph_cost")
    if not isinstance(flops, (int, float)) or flops <= 0:
        return None, "the graph's FLOP count is unknown or zero"
    return round(flops / 1e9, 3), "rpxprof cost of the ONNX export (all costed nodes)"


def count_flops_torch(model: Any, input_shape: Sequence[int], device: str = "cpu") -> Optional[float]:
    """GFLOPs of one forward pass at batch 1, counted by librpxprof on the module's ONNX export
    (round(flops / 1e9, 3)); None when the module cannot be exported or costed in full, never 0."""
    cost, reason = graph_cost(model, input_shape, device)
    return _flops_from_cost(cost, reason)[0]


def _traffic_from_cost(cost: Optional[Dict[str, Any]]) -> Optional[float]:
    if cost is None:
        return None
    ideal = cost.get("traffic_bytes_ideal")
    if not isinstance(ideal, (int, float)) or ideal <= 0:
        return None
    return round(ideal / 1e9, 4)


def _param_bytes_traffic(model: Any) -> Optional[float]:
    """The reference's analytical estimate: 3 x the bytes of all parameters."""
    try:
        params_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    except (AttributeError, TypeError):
        return None
    return round((params_bytes + 2 * params_bytes) / 1e9, 4)


def _traffic_and_formula(model: Any, input_shape: Sequence[int], device: str
                         ) -> Tuple[Optional[float], Optional[str]]:
    """(GB, TRAFFIC_GRAPH or TRAFFIC_REFERENCE), or (None, None)."""
    cost, _ = graph_cost(model, input_shape, device)
    traffic = _traffic_from_cost(cost)
    if traffic is not None:
        return traffic, TRAFFIC_GRAPH
    traffic = _param_bytes_traffic(model)
    return traffic, TRAFFIC_REFERENCE if traffic is not None else None


def estimate_memory_traffic_gb(model: Any, input_shape: Sequence[int] = (3, 480, 640),
                               device: str = "cpu", precision_bytes: int = 4) -> Optional[float]:
    """DRAM traffic of one forward pass in GB (1e9): rpxprof's `traffic_bytes_ideal` of the
    ONNX export (every weight once plus the graph's inputs and outputs, the roofline's lower
    bound). When the module cannot be exported, the reference's 3 x parameter bytes.
    `precision_bytes` is accepted and unused, as in the reference."""
    del precision_bytes
    return _traffic_and_formula(model, input_shape, device)[0]


def _identity_copies(onnx_bytes: Optional[bytes]) -> Optional[int]:
    """Elements of the floating-point weights the exporter stores once for several module
    tensors (torch de-duplicates identical initializers and reads the others through Identity
    nodes); None without the onnx package."""
    if not onnx_bytes:
        return None
    try:
        import onnx  # type: ignore
        graph = onnx.load_from_string(onnx_bytes).graph
    except Exception:  # noqa: BLE001
        return None
    sizes = {}
    for init in graph.initializer:
        if init.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
                              onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16):
            n = 1
            for d in init.dims:
                n *= d
            sizes[init.name] = n
    return sum(sizes.get(n.input[0], 0) for n in graph.node
               if n.op_type == "Identity" and n.input)


def _params_difference_reason(module: Any, module_n: int, graph_n: int,
                              onnx_bytes: Optional[bytes] = None) -> Optional[str]:
    """Why the graph's parameter count differs from the module's trainable count, with the
    size of each cause and what stays unexplained."""
    if module_n == graph_n:
        return None
    diff = graph_n - module_n
    causes = []
    explained = 0
    try:
        import torch  # type: ignore
        bn_type = torch.nn.modules.batchnorm._BatchNorm  # noqa: SLF001
        prev = None
        folded_layers, channels, effect = 0, 0, 0
        for m in module.modules():
            if isinstance(m, bn_type):
                if m.affine and isinstance(prev, (torch.nn.modules.conv._ConvNd, torch.nn.Linear)):
                    c = int(m.num_features)
                    folded_layers += 1
                    channels += c
                    # scale and shift go; the layer before gains a bias unless it had one
                    effect -= 2 * c if prev.bias is not None else c
                prev = m
            elif not list(m.children()):
                prev = m
        if folded_layers:
            causes.append(f"{folded_layers} batch-norm layers ({channels:,} channels) folded "
                          f"into the layers before them ({effect:+,}: each loses its scale and "
                          "shift and the layer before gains a bias unless it had one)")
            explained += effect
        frozen = sum(p.numel() for p in module.parameters() if not p.requires_grad)
        if frozen:
            causes.append(f"{frozen:,} frozen parameters (requires_grad=False) in the graph but "
                          f"not in the trainable count (+{frozen:,})")
            explained += frozen
    except Exception:  # noqa: BLE001
        pass
    copies = _identity_copies(onnx_bytes)
    if copies:
        causes.append(f"tensors with identical values stored once by the exporter, read through "
                      f"Identity nodes (-{copies:,}; tied weights, or equal fresh biases)")
        explained -= copies
    rest = diff - explained
    if rest:
        causes.append(f"{rest:+,} not explained by these (buffers or tensors made in forward() "
                      "stored as weights, parameters forward() does not use)")
    return (f"the ONNX graph has {graph_n:,} parameters, the module {module_n:,} trainable "
            f"({diff:+,}): " + "; ".join(causes) + ". params_m is the module's count, as the "
            "reference's; graph_params the exported graph's")


def profile_model(model: Any, input_shape: Sequence[int] = (3, 480, 640), device: str = "cpu",
                  model_type: str = "local", notes: str = "", compute_roofline: bool = True,
                  attach_system_card: bool = True, precision: str = "fp32", *,
                  export_path: Optional[str] = None) -> EfficiencyMetadata:
    """Tier 1 (+ Tier 2, + the system card) of a torch model, as the reference's, with FLOPs,
    MACs and traffic from librpxprof's cost of the module's in-memory ONNX export.

    `model` is an nn.Module or an object `_find_torch_module` finds one in; `input_shape` is
    (C, H, W) and a batch of 1 is prepended. Besides the reference's fields it sets the
    attributes graph_params, graph_params_m, params_note, flops_note, traffic_note,
    memory_traffic_unfused_gb and graph_cost. `export_path` (rpxprof's, keyword-only) also
    writes the ONNX export to that file; nothing is written otherwise.
    """
    if model_type == "api":
        return EfficiencyMetadata(model_type="api", notes=notes)
    module = _find_torch_module(model)
    target = module if module is not None else model
    params_m = count_parameters(target)
    cost, reason, onnx_bytes = _graph_cost(target, input_shape, device, export_path)
    flops_g, flops_note = _flops_from_cost(cost, reason)
    macs_g = None
    if flops_g is not None and isinstance(cost.get("macs"), (int, float)) and cost["macs"] > 0:
        macs_g = round(cost["macs"] / 1e9, 3)
    traffic = _traffic_from_cost(cost)
    formula = TRAFFIC_GRAPH if traffic is not None else None
    if traffic is not None:
        traffic_note = ("rpxprof cost's traffic_bytes_ideal of the export: every weight once "
                        "plus the graph's inputs and outputs")
    else:
        traffic = _param_bytes_traffic(target)
        formula = TRAFFIC_REFERENCE if traffic is not None else None
        traffic_note = (f"3 x parameter bytes, the reference's estimate: no graph traffic "
                        f"({reason or 'the cost gave none'})") if traffic is not None else reason

    eff = EfficiencyMetadata(params_m=params_m, flops_g=flops_g, macs_g=macs_g,
                             memory_traffic_gb=traffic, model_type=model_type, notes=notes)
    eff.flops_note = flops_note
    eff.traffic_note = traffic_note
    eff.traffic_formula = formula
    eff.graph_cost = cost
    if cost is not None:
        unfused = cost.get("traffic_bytes_unfused")
        if isinstance(unfused, (int, float)):
            eff.memory_traffic_unfused_gb = round(unfused / 1e9, 4)
        gp = cost.get("params")
        if isinstance(gp, (int, float)):
            eff.graph_params = int(gp)
            eff.graph_params_m = round(gp / 1e6, 3)
            try:
                module_n = sum(p.numel() for p in target.parameters() if p.requires_grad)
                eff.params_note = _params_difference_reason(target, int(module_n), int(gp),
                                                            onnx_bytes)
            except AttributeError:
                pass
    eff.derive_tier1()
    if compute_roofline:
        eff.compute_roofline()
    if attach_system_card:
        h, w = input_shape[-2], input_shape[-1]
        eff.system_card = SystemCard.auto_detect(precision=precision, input_resolution=f"{w}x{h}")
    return eff


# --------------------------------------------------------------------------------------------
# model_profiler.py: ModelProfiler, ProfileReport

ROBOT_CONTROL_HZ: Tuple[float, ...] = (5.0, 10.0, 30.0)  # slow/fast manipulation, navigation

_TORCH_PATHS = ("model", "torch_module", "_model", "_pipe.model", "adapter.model",
                "adapter._model", "adapter.torch_module")


def _has_parameters(obj: Any) -> bool:
    return callable(getattr(obj, "parameters", None))


def _find_torch_module(model: Any) -> Any:
    """The model itself if it has a callable .parameters, else the first of the reference's
    dotted attribute paths that resolves to such an object, else None."""
    if _has_parameters(model):
        return model
    for path in _TORCH_PATHS:
        obj = model
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None and _has_parameters(obj):
            return obj
    return None


@dataclass
class ProfileReport:
    # Tier 1
    params_m: Optional[float] = None
    flops_g: Optional[float] = None
    macs_g: Optional[float] = None
    memory_traffic_gb: Optional[float] = None
    arithmetic_intensity: Optional[float] = None
    # Tier 2
    roofline: Optional[Dict[str, Dict[str, float]]] = None
    # Tier 3
    latency_p50_ms: Optional[float] = None
    latency_p95_ms: Optional[float] = None
    latency_p99_ms: Optional[float] = None
    peak_cpu_mb: Optional[float] = None
    peak_cuda_mb: Optional[float] = None
    peak_mps_mb: Optional[float] = None
    system_card: Optional[Dict[str, Any]] = None
    # Budget
    budget_fractions: Optional[Dict[str, float]] = None

    def budget_fraction(self, hz: float) -> Optional[float]:
        """beta = tau / (1 / f), from the p50."""
        if self.latency_p50_ms is None or hz <= 0:
            return None
        return round(self.latency_p50_ms / (1000.0 / hz), 3)

    def realtime_at_hz(self, hz: float) -> Optional[bool]:
        beta = self.budget_fraction(hz)
        return None if beta is None else beta <= 1.0

    def compute_budget_fractions(self) -> Dict[str, float]:
        out: Dict[str, float] = {}
        for hz in ROBOT_CONTROL_HZ:
            beta = self.budget_fraction(hz)
            if beta is not None:
                out[f"{hz:.0f}hz"] = beta
        self.budget_fractions = out
        return out

    def to_dict(self) -> Dict[str, Any]:
        return {
            "tier1_hardware_agnostic": {
                "params_m": self.params_m,
                "flops_g": self.flops_g,
                "macs_g": self.macs_g,
                "memory_traffic_gb": self.memory_traffic_gb,
                "arithmetic_intensity": self.arithmetic_intensity,
            },
            "tier2_roofline": self.roofline,
            "tier3_measured": {
                "latency_p50_ms": self.latency_p50_ms,
                "latency_p95_ms": self.latency_p95_ms,
                "latency_p99_ms": self.latency_p99_ms,
                "peak_cpu_mb": self.peak_cpu_mb,
                "peak_cuda_mb": self.peak_cuda_mb,
                "peak_mps_mb": self.peak_mps_mb,
                "system_card": self.system_card,
            },
            "realtime_budget": self.budget_fractions,
        }

    def summary_line(self) -> str:
        parts = []
        if self.params_m is not None:
            parts.append(f"{self.params_m:.1f}M params")
        if self.flops_g is not None:
            parts.append(f"{self.flops_g:.1f}G FLOPs")
        if self.latency_p50_ms is not None:
            parts.append(f"{self.latency_p50_ms:.1f}ms p50")
        for key, beta in (self.budget_fractions or {}).items():
            parts.append(f"\u2713@{key}" if beta <= 1.0 else f"\u2717@{key}")
        return " | ".join(parts) if parts else "no profile data"


class ModelProfiler:
    """Tier 1 before a run (parameters, traffic, system card) and the full report after it."""

    def __init__(self, model: Any, input_shape: Tuple[int, ...] = (3, 480, 640),
                 device: str = "cuda") -> None:
        self.model = model
        self.input_shape = input_shape
        self.device = device
        self._torch_mod = _find_torch_module(model)

    @property
    def has_torch_module(self) -> bool:
        return self._torch_mod is not None

    def pre_run_profile(self) -> EfficiencyMetadata:
        """Parameters and traffic (no FLOPs: the runner counts them on its first batch)."""
        eff = EfficiencyMetadata(model_type="local" if self.has_torch_module else "classical")
        if self._torch_mod is not None:
            try:
                eff.params_m = count_parameters(self._torch_mod)
            except Exception as exc:  # noqa: BLE001
                _log.warning("count_parameters failed: %s", exc)
            try:
                eff.memory_traffic_gb, eff.traffic_formula = _traffic_and_formula(
                    self._torch_mod, self.input_shape, self.device)
            except Exception as exc:  # noqa: BLE001
                _log.warning("estimate_memory_traffic_gb failed: %s", exc)
        try:
            h, w = self.input_shape[-2], self.input_shape[-1]
            eff.system_card = SystemCard.auto_detect(input_resolution=f"{w}x{h}")
        except Exception as exc:  # noqa: BLE001
            _log.warning("SystemCard.auto_detect failed: %s", exc)
        return eff

    def full_report(self, eff: EfficiencyMetadata) -> ProfileReport:
        eff.derive_tier1()
        if eff.flops_g is not None and eff.roofline is None:
            eff.compute_roofline()
        roofline = None
        if eff.roofline:
            roofline = {name: {"compute_ms": b.compute_ms, "memory_ms": b.memory_ms,
                               "latency_ms": b.latency_ms, "bottleneck": b.bottleneck}
                        for name, b in eff.roofline.items()}
        report = ProfileReport(
            params_m=eff.params_m, flops_g=eff.flops_g, macs_g=eff.macs_g,
            memory_traffic_gb=eff.memory_traffic_gb,
            arithmetic_intensity=eff.arithmetic_intensity, roofline=roofline,
            latency_p50_ms=eff.latency_p50_ms, latency_p95_ms=eff.latency_p95_ms,
            latency_p99_ms=eff.latency_p99_ms, peak_cpu_mb=eff.peak_cpu_mb,
            peak_cuda_mb=eff.peak_cuda_mb, peak_mps_mb=eff.peak_mps_mb,
            system_card=eff.system_card.to_dict() if eff.system_card is not None else None)
        report.compute_budget_fractions()
        return report
