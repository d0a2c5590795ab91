"""A model that "uses torch" (the fake in fake_torch/): 16 MiB held on device 0
from import, and in every call a transient 48 MiB on device 0 and 96 MiB on
device 1, or more during warmup (which the peaks must not include)."""
import torch

MiB = 1 << 20
torch.cuda._alloc(0, 16 * MiB)  # weights
WARMUP = 3


def predict(rgb):
    torch.cuda.calls += 1
    extra = 1000 * MiB if torch.cuda.calls <= WARMUP else 0  # warmup only
    torch.cuda._alloc(0, 48 * MiB + extra)
    torch.cuda._alloc(1, 96 * MiB)
    torch.cuda._free(0, 48 * MiB + extra)
    torch.cuda._free(1, 96 * MiB)
