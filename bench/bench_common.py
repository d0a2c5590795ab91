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
