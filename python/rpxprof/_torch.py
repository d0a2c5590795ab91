"""PyTorch without importing it: what rpxprof.profile and rpxprof.cost need to know about
torch objects (modules, tensors, CUDA), read through sys.modules, so that a user who never
imported torch never pays for it. See docs/python.md, "PyTorch in"."""
import io
import sys


def _torch():
    return sys.modules.get("torch")


def is_module(obj):
    """A torch.nn.Module (only when torch is already imported: a module is made with it)."""
    t = _torch()
    return t is not None and isinstance(obj, t.nn.Module)


def forward_of(fn):
    """(what to take the signature of, its label): an nn.Module's own forward (its
    __call__ takes *args, **kwargs, so binding against it checks nothing), else fn."""
    if is_module(fn) and callable(getattr(fn, "forward", None)):
        return fn.forward, type(fn).__qualname__ + ".forward"
    return fn, None


def is_tensor(obj):
    t = _torch()
    return t is not None and isinstance(obj, t.Tensor)


def _walk(obj, depth=0):
    """The tensors in obj (a tensor, or lists/tuples/dicts of them, two levels deep)."""
    if is_tensor(obj):
        yield obj
    elif depth < 2 and isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _walk(x, depth + 1)
    elif depth < 2 and isinstance(obj, dict):
        for x in obj.values():
            yield from _walk(x, depth + 1)


def uses_cuda(fn, args, kwargs):
    """True when an argument is a CUDA tensor or fn is a module with CUDA parameters or
    buffers: the run then defaults to device="cuda" (every call synchronized)."""
    if _torch() is None:
        return False
    for t in _walk((args, kwargs or {})):
        if t.is_cuda:
            return True
    if is_module(fn):
        for p in fn.parameters():
            if p.is_cuda:
                return True
        for b in fn.buffers():
            if b.is_cuda:
                return True
    return False


def cuda_initialized():
    t = _torch()
    try:
        return bool(t is not None and t.cuda.is_initialized())
    except Exception:  # noqa: BLE001 - a torch without CUDA
        return False


def inference_mode():
    """torch.inference_mode() (torch is imported: the caller holds a module)."""
    return _torch().inference_mode()


def export_onnx(module, example_args, kwargs=None):
    """The ONNX bytes of module(*example_args, **kwargs), exported in memory (eval mode is
    the caller's; no gradient is recorded). Errors speak Python."""
    from . import RpxprofError, RpxprofTypeError
    torch = _torch()
    if not example_args and not kwargs:
        raise RpxprofTypeError(
            "rpxprof.cost(%s): a torch.nn.Module is costed by exporting one call of it, so "
            "give example arguments of the shape to cost: rpxprof.cost(model, "
            "torch.randn(1, 3, 224, 224))" % type(module).__name__)
    args = tuple(example_args)
    if kwargs:
        args = args + (dict(kwargs),)  # torch.onnx.export: a trailing dict is keywords
    buf = io.BytesIO()
    try:
        with torch.no_grad():
            torch.onnx.export(module, args, buf)
    except Exception as e:  # noqa: BLE001 - the exporter's own words, named
        raise RpxprofError("rpxprof.cost(%s, ...): torch.onnx.export of the module on the "
                           "example arguments failed: %s: %s"
                           % (type(module).__name__, type(e).__name__, e), 1) from e
    return buf.getvalue()


def describe(args, kwargs):
    """What the call receives, for the report's inputs_file: "fn(tensor float32[1,3,224,224]
    cpu, kwargs: mask=tensor bool[1,8] cpu)"."""
    def one(x):
        if is_tensor(x):
            return "tensor %s[%s] %s" % (str(x.dtype).replace("torch.", ""),
                                         ",".join(str(d) for d in x.shape), x.device)
        if type(x).__name__ == "ndarray":
            return "ndarray %s[%s]" % (x.dtype, ",".join(str(d) for d in x.shape))
        return type(x).__name__
    parts = [one(a) for a in args] + ["%s=%s" % (k, one(v)) for k, v in (kwargs or {}).items()]
    text = "<arguments: %s>" % (", ".join(parts) if parts else "none")
    return text if len(text) <= 400 else text[:396] + "...>"
