"""The reference's own pattern: a module whose function predicts depth from one
RGB frame, profiled through rpxprof's Python target.

    rpxprof run --model my_model:predict_depth --inputs frame.npz --output py.json

The network is built once, at import (rpxprof imports the module in setup,
outside timing): torchvision's LR-ASPP MobileNetV3-Large with one output
channel, a dense depth-like map, with random weights (nothing is downloaded).
Each call is what you would time in your own code: the frame to a normalised
float tensor, the forward pass under torch.inference_mode(), the output back
to numpy. rpxprof passes `rgb` as a read-only numpy view of its buffer.
"""
import os
import warnings

import numpy as np
import torch
import torchvision

# rpxprof's inputs are read-only views (no copy); torch.from_numpy says so once
# per process. Nothing here writes through the view, so the warning is noise.
warnings.filterwarnings("ignore", message="The given NumPy array is not writable")

DEVICE = torch.device(os.environ.get("MY_MODEL_DEVICE", "cpu"))
# intra-op threads: every CPU this process may use (MY_MODEL_THREADS=0 leaves torch's
# default, which for Debian's torch is one, and slow: BENCHMARKS.md)
_threads = int(os.environ.get("MY_MODEL_THREADS", len(os.sched_getaffinity(0))))
if _threads > 0:
    torch.set_num_threads(_threads)
torch.manual_seed(0)
_net = torchvision.models.segmentation.lraspp_mobilenet_v3_large(
    weights=None, weights_backbone=None, num_classes=1).eval().to(DEVICE)
_mean = torch.tensor([0.485, 0.456, 0.406], device=DEVICE).view(1, 3, 1, 1)
_std = torch.tensor([0.229, 0.224, 0.225], device=DEVICE).view(1, 3, 1, 1)


def predict_depth(rgb):
    """rgb: uint8 H×W×3 → depth-like float32 H×W."""
    with torch.inference_mode():
        x = torch.from_numpy(rgb).to(DEVICE).permute(2, 0, 1).unsqueeze(0).float()
        x = (x / 255.0 - _mean) / _std
        depth = _net(x)["out"][0, 0]
        return depth.cpu().numpy()
