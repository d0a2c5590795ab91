"""A stand-in for torch's CUDA memory statistics, for testing the Python
target's torch path on machines without a GPU or without torch's CUDA build.

It keeps per-device "allocated" and "peak" byte counters the way torch's
caching allocator reports them; rpx_torch_model.py allocates through it.
Every reset is logged (with how many model calls had run) to the file named
by RPX_FAKE_TORCH_LOG.
"""
import os

__version__ = "0.0.0+rpxtest"


def get_num_threads():
    return 3


class version:  # torch.version.cuda
    cuda = "12.4+rpxtest"


class _Cuda:
    def __init__(self):
        self.n = int(os.environ.get("RPX_FAKE_TORCH_DEVICES", "2"))
        self.allocated = [0] * self.n
        self.peak = [0] * self.n
        self.calls = 0

    def is_available(self):
        return True

    def device_count(self):
        return self.n

    def reset_peak_memory_stats(self, device):
        self.peak[device] = self.allocated[device]
        log = os.environ.get("RPX_FAKE_TORCH_LOG")
        if log:
            with open(log, "a") as f:
                f.write(f"reset {device} after {self.calls} calls\n")

    def max_memory_allocated(self, device):
        return self.peak[device]

    # what a model's tensors would do
    def _alloc(self, device, nbytes):
        self.allocated[device] += nbytes
        self.peak[device] = max(self.peak[device], self.allocated[device])

    def _free(self, device, nbytes):
        self.allocated[device] -= nbytes


cuda = _Cuda()
