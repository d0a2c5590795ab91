"""What rpxprof.profile(model, x, layers=True) costs (issue 39 §2, Python): the forward
hooks' own time per module per call, and resnet18's profiled total against its unprofiled
p50 (a speed judgement, so a benchmark, not a test).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_layers_overhead.py [SIZE]

A chain of N nn.Identity modules has nothing to compute, so (profiled total - unprofiled
p50) / N is the hooks' time per module per call (a pre-hook and a post-hook, each a Python
call and a clock read). resnet18 (random weights, 1x3xSIZExSIZE, default 64) in 3 processes
gives the overhead the report states (layers.overhead) and its unattributed time."""
import sys

import torch
import torchvision

import rpxprof


def main():
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    for n in (50, 200):
        m = torch.nn.Sequential(*[torch.nn.Identity() for _ in range(n)]).eval()
        r = rpxprof.profile(m, torch.randn(1, 4), warmup=20, repeats=500, quiet=True,
                            layers=True, layers_calls=200, processes=1)
        L = r.layers
        print("identity x%d: unprofiled p50 %.4f ms, profiled %.4f ms: %.3f us per module "
              "per call" % (n, L["unprofiled_p50_ms"], L["total_ms"],
                            (L["total_ms"] - L["unprofiled_p50_ms"]) * 1e3 / n))
    torch.manual_seed(0)
    m = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, size, size)
    r = rpxprof.profile(m, x, warmup=5, repeats=100, quiet=True, layers=True, processes=3)
    L = r.layers
    print("resnet18 1x3x%dx%d: unprofiled p50 %.3f ms, profiled %.3f ms (overhead %+.1f %%), "
          "unattributed %.3f ms, %d modules" % (size, size, L["unprofiled_p50_ms"],
                                                L["total_ms"], 100 * L["overhead"],
                                                L["rows"][-1]["time_ms"], len(L["rows"]) - 1))


if __name__ == "__main__":
    main()
