"""Python test models for the Python target (numpy only, as Debian ships it).

They mirror the packaged demo (depth on a frame, pose on an image pair, depth
on a clip) and add the cases the tests need: a function that raises, one whose
signature does not fit the inputs, a busy-wait of a known time, an allocation
of a known size, and checks that the inputs are read-only views.
"""
import os
import time

import numpy as np

IMPORTED_AT = time.perf_counter()  # importing is setup: it must not be timed
CALLS = 0


def _depth(rgb):
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f"rgb must be uint8 HxWx3, got {rgb.dtype} {rgb.shape}")
    return rgb.mean(axis=2, dtype=np.float32) / np.float32(255.0)


def predict_depth(rgb):
    """A frame → a dense depth-like map (H×W float32)."""
    return _depth(rgb)


def predict_pose(rgb_a, rgb_b):
    """An image pair → a 4×4 relative pose from the two frames' mean difference."""
    d = float(_depth(rgb_a).mean() - _depth(rgb_b).mean())
    pose = np.eye(4, dtype=np.float32)
    pose[0, 3] = d
    return pose


def predict_video_depth(frames):
    """A clip (T×H×W×3) → T depth maps."""
    if frames.ndim != 4:
        raise ValueError(f"frames must be T×H×W×3, got {frames.shape}")
    return frames.mean(axis=3, dtype=np.float32) / np.float32(255.0)


def noop(**arrays):
    """Nothing: the measurement floor of a Python call."""
    return None


def raises(rgb):
    raise RuntimeError("the model exploded on purpose")


def raises_later(rgb):
    """Works for 5 calls, then raises (the report must not be written)."""
    global CALLS
    CALLS += 1
    if CALLS > 5:
        raise ZeroDivisionError("call %d divided by zero" % CALLS)
    return None


def wrong_signature(image, mask):
    """Parameters that no NPZ array is named after."""
    return image


def busywait(rgb):
    """Spins for RPX_PY_BUSY_MS milliseconds (default 2) on perf_counter."""
    end = time.perf_counter() + float(os.environ.get("RPX_PY_BUSY_MS", "2")) / 1000.0
    while time.perf_counter() < end:
        pass


def alloc_touch(rgb):
    """Allocates and touches RPX_PY_ALLOC_MB MiB (default 128) in every call."""
    n = int(os.environ.get("RPX_PY_ALLOC_MB", "128")) << 20
    buf = np.ones(n, dtype=np.uint8)
    return int(buf[::4096].sum())


def write_input(rgb):
    """Tries to write into the input: must fail, the arrays are read-only."""
    rgb[0, 0, 0] = 1
    return rgb


def check_views(**arrays):
    """Raises unless every input is a read-only numpy array viewing memory it does not own."""
    for name, a in arrays.items():
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{name} is {type(a)}, not a numpy array")
        if a.flags.writeable:
            raise AssertionError(f"{name} is writeable")
        if a.flags.owndata:
            raise AssertionError(f"{name} owns its data: it was copied")
    return len(arrays)


def sleeps_forever(rgb):
    while True:
        time.sleep(1)


NOT_CALLABLE = 42


def generator(rgb):
    """A generator function: calling it runs none of this body (refused, issue 26)."""
    yield rgb.sum()


async def coroutine(rgb):
    """An async def: calling it only creates a coroutine (refused, issue 26)."""
    return rgb.sum()
