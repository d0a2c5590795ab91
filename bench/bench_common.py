"""What every benchmark script prints about the machine it ran on."""
import os
import platform


def cpu_name():
    """The CPU's model name from /proc/cpuinfo (the machine type when it has none)."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.machine()


def machine_line():
    """CPU, CPU count, kernel: the start of every benchmark's header."""
    return f"{cpu_name()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


# The Python floor benchmarks (bench_python_floor.py, bench_python_api.py): the
# no-op model they time, and the reference's method (a time.perf_counter loop
# around the same call; argv: the model's folder, the NPZ), printing the p50 in ns.
MODEL = "def noop(**arrays):\n    return None\n"

LOOP = r"""
import sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from floor_model import noop
inputs = dict(np.load(sys.argv[2]))
perf_counter = time.perf_counter
for _ in range(1000):
    noop(**inputs)
samples = []
append = samples.append
for _ in range(10000):
    t0 = perf_counter()
    noop(**inputs)
    t1 = perf_counter()
    append(t1 - t0)
print(np.percentile(samples, 50) * 1e9)
"""
