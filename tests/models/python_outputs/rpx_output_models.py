"""Python models for --check-outputs (tests/cli/test_output_checks.py).

exact:     a dict of a numpy array, a float and a tuple: the same for the same input
wrong50:   the same, but every 50th call (reference pass and warmup included) is off by one
dropout:   a torch module with nn.Dropout left in train mode: another answer every call
eval_net:  the same module in eval mode: exact
text:      a str (compared as its UTF-8 bytes)
per_process: an offset drawn once per process: each process agrees with itself only
"""
import numpy as np

_calls = 0


def exact(rgb):
    x = rgb.astype(np.float32)
    return {"mean": np.float64(x.mean()), "head": x.reshape(-1)[:8] * 0.5, "pair": (1, 2.5)}


def wrong50(rgb):
    global _calls
    _calls += 1
    out = exact(rgb)
    if _calls % 50 == 0:
        out["mean"] = out["mean"] + 1.0
    return out


def text(rgb):
    return "sum=%d" % int(rgb.sum())


_net = None


def _model(train):
    import torch
    global _net
    if _net is None:
        torch.manual_seed(0)
        _net = torch.nn.Sequential(torch.nn.Linear(192, 16), torch.nn.Dropout(p=0.5),
                                   torch.nn.Linear(16, 4))
    _net.train(train)
    return _net


def dropout(rgb):
    import torch
    x = torch.from_numpy(rgb.reshape(-1)[:192].astype(np.float32))
    return _model(True)(x)


def eval_net(rgb):
    import torch
    x = torch.from_numpy(rgb.reshape(-1)[:192].astype(np.float32))
    with torch.no_grad():
        return _model(False)(x)


_offset = None


def per_process(rgb):
    """Seeded by its process: the same answer every call of one process, another in the next."""
    import os
    global _offset
    if _offset is None:
        _offset = float(np.random.default_rng(os.getpid()).random())
    return np.float64(rgb.mean()) + _offset


def same_name(rgb):
    """Two outputs whose names read the same: the key "0" and the key 0."""
    x = rgb.astype(np.float32)
    return {"0": x.reshape(-1)[:4], 0: x.reshape(-1)[4:8]}


def nothing(rgb):
    """No output at all: an empty dict."""
    return {}


def wanders(rgb):
    """Moves to another working folder on every call."""
    import os
    import tempfile
    os.chdir(tempfile.gettempdir())
    return exact(rgb)


def opaque(rgb):
    """An object that is neither a number, an array nor a tensor."""
    return object()
