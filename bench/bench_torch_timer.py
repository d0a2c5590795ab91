"""rpxprof.profile(resnet18, x) against torch.utils.benchmark.Timer.adaptive_autorange in the
same script (issue 29's acceptance; a speed judgement, so a benchmark, not a test).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_torch_timer.py [ROUNDS]

Rounds interleave the two (Timer, rpxprof, Timer, rpxprof, ...), each with its defaults:
Timer's adaptive_autorange() (threshold 0.1, max_run_time 10 s) with num_threads set to
torch's current count (Timer's own default is 1 thread), rpxprof.profile's auto-ranging
(repeats=None, processes=None: this process). Both run the module under
torch.inference_mode(), as rpxprof does for an nn.Module. It also checks that nothing reached
stderr (fd 2) or the warnings module during rpxprof.profile, and resnet18's MACs
(rpxprof.cost(model, x) against a forward-hook count). Prints a JSON line and a Markdown
table for BENCHMARKS.md."""
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

import torch
import torchvision
from torch.utils import benchmark

import rpxprof


def hook_macs(model, x):
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
        model(x)
    for h in hs:
        h.remove()
    return total[0]


def profile_capturing_stderr(model, x):
    """rpxprof.profile with fd 2 redirected to a file and every warning recorded."""
    with tempfile.TemporaryFile() as f, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            t = time.perf_counter()
            r = rpxprof.profile(model, x)
            took = time.perf_counter() - t
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        err = f.read().decode("utf-8", "replace")
    return r, took, err, [str(w.message) for w in caught]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 224, 224)
    threads = torch.get_num_threads()
    truth = hook_macs(model, x)
    macs = rpxprof.cost(model, x)["macs"]
    rows = []
    for i in range(rounds):
        timer = benchmark.Timer(stmt="model(x)", globals={"model": model, "x": x},
                                num_threads=threads)
        t = time.perf_counter()
        with torch.inference_mode():
            m = timer.adaptive_autorange()
        timer_s = time.perf_counter() - t
        r, took, err, caught = profile_capturing_stderr(model, x)
        rows.append({"round": i + 1, "timer_median_ms": m.median * 1e3,
                     "timer_calls": sum(m.number_per_run for _ in m.raw_times),
                     "timer_s": timer_s, "rpxprof_p50_ms": r["latency"]["p50_ms"],
                     "rpxprof_ci_ms": r["latency_ci"]["p50_ms"],
                     "rpxprof_calls": len(r["latency_samples_ms"]), "rpxprof_s": took,
                     "rpxprof_stderr": err, "rpxprof_warnings": caught,
                     "autorange": {k: v for k, v in r.autorange.items()
                                   if k in ("repeats", "warmup", "calls", "limited_by",
                                            "calibration_calls")},
                     "ratio": r["latency"]["p50_ms"] / (m.median * 1e3)})
        print(json.dumps(rows[-1]), file=sys.__stdout__, flush=True)
    ratios = [row["ratio"] for row in rows]
    summary = {"torch": torch.__version__, "torchvision": torchvision.__version__,
               "threads": threads, "cpus": os.cpu_count(), "macs": macs, "hook_macs": truth,
               "median_ratio": statistics.median(ratios),
               "max_abs_diff_pct": max(abs(r - 1) for r in ratios) * 100,
               "stderr_empty": all(not row["rpxprof_stderr"] for row in rows),
               "no_warnings": all(not row["rpxprof_warnings"] for row in rows)}
    print(json.dumps(summary))
    print()
    print("| round | Timer.adaptive_autorange median | rpxprof.profile p50 [95% CI] | ratio "
          "| Timer: calls, s | rpxprof: calls, s |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        lo, hi = row["rpxprof_ci_ms"] or (float("nan"), float("nan"))
        print("| %d | %.2f ms | %.2f ms [%.2f, %.2f] | %.4f | %d, %.1f | %d, %.1f |"
              % (row["round"], row["timer_median_ms"], row["rpxprof_p50_ms"], lo, hi,
                 row["ratio"], row["timer_calls"], row["timer_s"], row["rpxprof_calls"],
                 row["rpxprof_s"]))


if __name__ == "__main__":
    main()
