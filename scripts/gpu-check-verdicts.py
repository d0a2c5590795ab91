#!/usr/bin/python3
"""The verdicts of scripts/gpu-check.sh: each reads rpxprof reports, prints one line of
numbers and exits 0 (pass) or 1 (fail). Kept apart from the shell script so that the
judging can be tested without a GPU (tests/cli/test_cuda.py runs it on the stubs' reports).

Usage: gpu-check-verdicts.py CHECK ARGS...   (see the functions below)
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def p50(r):
    return r["latency"]["p50_ms"]


def spin(report, want_ms):
    """The synchronised spin: p50 at least the spin time (a missing sync reads microseconds)
    and within 5 % above it."""
    r, want = load(report), float(want_ms)
    got = p50(r)
    print(f"p50 {got:.4f} ms for a {want} ms kernel (want {want} .. {want * 1.05:.3f}); "
          f"sync overhead {r['timer']['sync_overhead_ns']} ns; "
          f"devices {[d['name'] for d in r['cuda']['visible_devices']]}")
    return want <= got <= want * 1.05


def unsynced(report, want_ms):
    """The same kernel timed without synchronisation (--device cpu): microseconds."""
    r, want = load(report), float(want_ms)
    got = p50(r)
    print(f"without sync p50 {got * 1000:.1f} us for a {want} ms kernel (want < {want * 100:.0f} us)")
    return got < want / 10


def at_least(report, want_ms):
    """p50 at least the GPU work the call does (a model on a non-default stream, a graph)."""
    r, want = load(report), float(want_ms)
    got = p50(r)
    print(f"p50 {got:.4f} ms for {want} ms of GPU work (want {want} .. {want * 1.10:.3f})")
    return want <= got <= want * 1.10


def busy(report, want_ms, kernels="1", tolerance="0.05"):
    """CUPTI busy time within 5 % (tolerance) of the kernels' time, every kernel seen."""
    r, want, k, tol = load(report), float(want_ms), int(kernels), float(tolerance)
    g = r.get("gpu_time") or {}
    b = g.get("p50_ms")
    print(f"GPU busy p50 {b} ms (want {want} +-{tol * 100:g}%), wall p50 {p50(r):.4f} ms, kernels/call "
          f"{g.get('kernels_per_call_p50')} (want {k}), truncated {g.get('truncated')}, "
          f"library {g.get('library')}, rejected {g.get('rejected_libraries')}")
    return (b is not None and abs(b - want) / want <= tol
            and g.get("kernels_per_call_p50") == k and not g.get("truncated"))


def per_call_peak(report, alloc_mb, device="0"):
    """The call's own peak (peak minus the level at the reset after warmup: weights, the
    cuBLAS workspace and lazily loaded modules are in the level) within 5 % of what the
    call allocates."""
    r, want = load(report), float(alloc_mb)
    m = r["memory"]
    peak = m["cuda_peak_allocated_mb_by_visible_device"].get(device)
    method = m["cuda_peak_method"]
    at_reset = (method.get("at_reset_mb") or {}).get(device)
    own = None if peak is None or at_reset is None else peak - at_reset
    print(f"peak {peak} MiB, {at_reset} MiB in use at the reset: the call's own {own} MiB; it "
          f"allocates {want:.0f} MiB (method {method['method']}, {method.get('samples')} samples)")
    return own is not None and abs(own - want) / want <= 0.05


def torch_peak(report, want_mb, held_mb):
    """torch's allocator peak of a known allocation, and the cuMemGetInfo-based process
    peak beside it (at least what the call allocates above what was held at the reset)."""
    r, want, held = load(report), float(want_mb), float(held_mb)
    m = r["memory"]
    peak = m["cuda_peak_allocated_mb_by_visible_device"].get("0")
    proc = (m.get("cuda_process_peak_mb_by_visible_device") or {}).get("0")
    print(f"torch allocator peak {peak} MiB (want {want:.0f}), method "
          f"{m['cuda_peak_method']['method']}; cuMemGetInfo process peak {proc} MiB "
          f"(want >= {want - held:.0f}); torch {r['python']['torch_version']} CUDA "
          f"{r['python']['torch_cuda_version']}")
    return (peak is not None and abs(peak - want) / want <= 0.05
            and m["cuda_peak_method"]["method"] == "torch_cuda_max_memory_allocated"
            and proc is not None and proc >= (want - held) * 0.95)


def gpu_time_ran(report):
    """--gpu-time with a module that imports torch: the run completed and kernels were seen."""
    r = load(report)
    g = r.get("gpu_time") or {}
    print(f"--gpu-time with torch: library {g.get('library')}, rejected "
          f"{g.get('rejected_libraries')}, calls {g.get('calls')}, kernels/call "
          f"{g.get('kernels_per_call_p50')}, busy p50 {g.get('p50_ms')} ms")
    return bool(g.get("calls")) and (g.get("kernels_per_call_p50") or 0) >= 1


def uuids(report, expected):
    """The run's visible devices are the GPUs named, in that order (comma-separated)."""
    r = load(report)
    got = [d["uuid"] for d in r["cuda"]["visible_devices"]]
    want = expected.split(",")
    print(f"CUDA_VISIBLE_DEVICES={r['cuda']['CUDA_VISIBLE_DEVICES']!r}: run sees {got}, want {want}")
    return got == want


def card_uuids(report):
    """The system card's visible GPUs (NVML, by visible_ordinal) are the run's (CUDA)."""
    r = load(report)
    run = [d["uuid"] for d in r["cuda"]["visible_devices"]]
    gpus = [g for g in r["system_card"]["gpus"] if g.get("visible")]
    card = [g["uuid"] for g in sorted(gpus, key=lambda g: g["visible_ordinal"])]
    print(f"card's visible {card}, run's {run}")
    return bool(run) and card == run


def other_process(report, pid, min_mb):
    """Another process on the GPU is listed with its pid and its memory."""
    r, pid, min_mb = load(report), int(pid), float(min_mb)
    seen = []
    for when in ("start", "end"):
        for g in r["system_card"]["conditions"][when].get("gpus") or []:
            for p in g.get("other_processes") or []:
                seen.append((when, p["pid"], p["used_memory_mb"]))
    mine = [s for s in seen if s[1] == pid]
    print(f"other processes {seen}; want pid {pid} with >= {min_mb:.0f} MiB at start and end")
    return len(mine) == 2 and all(s[2] is not None and s[2] >= min_mb for s in mine)


def conditions(report, min_samples="5"):
    """NVML was sampled during the timed calls (clock reasons, clocks, power)."""
    r = load(report)
    seen = r["cuda"].get("conditions_during_timed_calls") or []
    print("; ".join(f"GPU {g['index']}: {g['samples']} samples during the timed calls, reasons "
                    f"seen {g['throttle_reasons_seen']}, SM clock {g['sm_clock_mhz']} MHz, power "
                    f"max {g['power_w_max']} W, temperature max {g['temperature_c_max']} C, "
                    f"unavailable {g['unavailable']}" for g in seen) or "no GPU was watched")
    return bool(seen) and all(g["samples"] >= int(min_samples) and g["sm_clock_mhz"] for g in seen)


def sampler_cost(report_on, report_off):
    """The cuMemGetInfo sampler's cost: p50 with and without it (recorded, and the two
    runs must be what they claim)."""
    on, off = load(report_on), load(report_off)
    a, b = p50(on), p50(off)
    print(f"p50 with the memory sampler {a:.4f} ms ({on['memory']['cuda_peak_method']['samples']}"
          f" samples), without {b:.4f} ms: the sampler costs {a - b:+.4f} ms "
          f"({(a - b) / b * 100:+.2f} %)")
    return (on["memory"]["cuda_peak_method"]["sampler"] is True
            and off["memory"]["cuda_peak_method"]["sampler"] is False)


CHECKS = {f.__name__: f for f in (spin, unsynced, at_least, busy, per_call_peak, torch_peak,
                                   gpu_time_ran, uuids, card_uuids, other_process, conditions,
                                   sampler_cost)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHECKS:
        print(f"usage: {sys.argv[0]} {{{','.join(CHECKS)}}} ARGS...", file=sys.stderr)
        sys.exit(2)
    try:
        ok = CHECKS[sys.argv[1]](*sys.argv[2:])
    except (OSError, KeyError, TypeError, ValueError, IndexError) as e:
        print(f"cannot judge: {type(e).__name__}: {e}")
        ok = False
    sys.exit(0 if ok else 1)
