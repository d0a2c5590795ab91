"""rpxprof.profile(fn_or_module, *args, kwargs=None, **options): the caller's own objects
(torch tensors stay tensors, numpy arrays stay arrays, or no arguments at all), an
nn.Module under torch.inference_mode(), auto-ranging (repeats=None: the calls and processes
picked by a time budget and a target precision) and the progress line. The old form
profile(fn, {"name": array}) goes on to the NPZ path as before (rpxprof._profile_run).
See docs/python.md, "PyTorch in" and "Auto-ranging"."""
import os

from . import _core, _torch

# the keywords profile() takes as options: the run's options that the options' table
# (src/runner/options.c) gives to Python (but auto: profile() auto-ranges with
# repeats=None), plus the package's own (name, meta, quiet, inference_mode, trace)
OPTIONS = tuple(o["key"] for o in _core.run_options()
                if "python" in o["front_ends"] and o["key"] != "auto") + (
    "name", "meta", "quiet", "inference_mode", "trace")
OPTIONS += tuple(k for k in ("layers", "layers_calls") if k not in OPTIONS)

def _is_legacy(x):
    """The old inputs forms: a dict name -> numpy array, an NPZ path, a list of those."""
    if isinstance(x, dict):
        return bool(x) and all(isinstance(k, str) for k in x) and \
            not any(_torch.is_tensor(v) for v in x.values())
    if isinstance(x, (str, os.PathLike)):
        p = os.fspath(x)
        return p.endswith(".npz") or os.path.exists(p)
    if isinstance(x, list) and x:
        return all((isinstance(i, dict) and _is_legacy(i)) or
                   (isinstance(i, (str, os.PathLike)) and _is_legacy(i)) for i in x)
    return False


def _label(fn):
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) \
        or type(fn).__qualname__
    if _torch.is_module(fn):  # a module instance: its class
        module, qualname = type(fn).__module__, type(fn).__qualname__
    return module, qualname


def profile(fn, *args, kwargs=None, warmup=10, repeats=None, device="cpu",
            precision="unspecified", unit="request", processes=None, writable_inputs=False,
            cost=None, flops=None, params=None, gpus=None, meta=None, timeout=None,
            call_timeout=None, name=None, cpus=None, spread=False, min_time=None,
            max_time=None, target_precision=None, quiet=False, inference_mode=None,
            layers=False, layers_calls=None, **unknown):
    """Time fn(*args, **kwargs) as `rpxprof run` does and return its report.

    fn: a function, any callable, or a torch.nn.Module (called under torch.inference_mode()
    unless inference_mode=False). args/kwargs: the caller's own objects, passed as they are
    (torch tensors stay tensors; nothing is copied); none at all for a closure:
    profile(lambda: model(x)). The old form profile(fn, {"name": array}) (or an NPZ path,
    or a list of those) still times fn(**arrays) over read-only views.
    repeats=None (the default) auto-ranges in the runner, as `rpxprof run --auto`: the
    timed calls go on, re-planned from those measured so far, until they took min_time s
    (1) and the p50's 95 % interval is within +-target_precision (0.01), or until the whole
    call would pass max_time s (10); report.autorange (the report's "autorange") and a
    note say what was chosen and what limited it. processes: None (this process) or N forked workers.
    quiet=True: no progress line (it is drawn on a terminal only, after 1 s).
    layers=True (or DEPTH, an int): fn is an nn.Module; after the timed calls, each worker
    process makes layers_calls (20) profiled calls that time every leaf module (or the
    modules down to DEPTH), and the report's `layers` block (report.layers) gives each
    module's time, FLOPs, bytes and bound on the host CPU's roofline (docs/python.md,
    "Per module").
    Other options as `rpxprof run` (src/runner/options.c). See docs/python.md."""
    options = dict(warmup=warmup, repeats=repeats, device=device, precision=precision,
                   unit=unit, processes=processes, writable_inputs=writable_inputs, cost=cost,
                   flops=flops, params=params, gpus=gpus, meta=meta, timeout=timeout,
                   call_timeout=call_timeout, name=name, cpus=cpus, spread=spread,
                   min_time=min_time, max_time=max_time, target_precision=target_precision,
                   quiet=quiet, inference_mode=inference_mode, layers=layers,
                   layers_calls=layers_calls)
    device_given = device != "cpu"
    options.update(unknown)
    from . import _layers
    layers_given = options.pop("layers", False)
    layers_on, depth = _layers.depth_of(layers_given)
    layers_calls = options.pop("layers_calls", None)
    from . import RpxprofError, RpxprofTypeError, _check_fn, _profile_run
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        import difflib
        close = difflib.get_close_matches(unknown[0], OPTIONS, 1)
        raise RpxprofTypeError(
            "rpxprof.profile(): unknown option%s %s%s; the options are %s. The model's own "
            "keyword arguments go in kwargs=, e.g. rpxprof.profile(model, x, kwargs={%r: ...})"
            % ("s" if len(unknown) > 1 else "", ", ".join(repr(u) for u in unknown),
               " (did you mean %r?)" % close[0] if close else "", ", ".join(OPTIONS),
               unknown[0]))
    if kwargs is not None and not isinstance(kwargs, dict):
        raise RpxprofTypeError("rpxprof.profile(fn, *args, kwargs=...): kwargs is the model's "
                               "keyword arguments, a dict name -> value, not %s"
                               % type(kwargs).__name__)
    _check_fn(fn)
    if name is None:
        options.pop("name")
    quiet = bool(options.pop("quiet", False))
    inference = options.pop("inference_mode", None)
    min_time = options.pop("min_time", None)
    max_time = options.pop("max_time", None)
    precision = options.pop("target_precision", None)
    repeats = options.get("repeats", None)
    for label, v in (("min_time", min_time), ("max_time", max_time),
                     ("target_precision", precision)):
        # refused as a TypeError, as before; the runner checks them again with the rest
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not v > 0):
            raise RpxprofTypeError("%s: a number above 0 (seconds%s), not %r"
                                   % (label, "" if label != "target_precision"
                                      else "; a fraction: 0.01 is +-1 %", v))
    progress = not quiet and os.isatty(2)

    if layers_on or layers_calls is not None:
        _layers.check(fn, layers_given, layers_calls,
                      kwargs is None and len(args) == 1 and _is_legacy(args[0]))
    # the old form: arrays by name through an NPZ file, read-only views
    if kwargs is None and len(args) == 1 and _is_legacy(args[0]):
        if repeats is None:
            options["repeats"] = 1000 if min_time is None and max_time is None else None
        if options.get("repeats") is not None:
            return _profile_run(fn, args[0], progress=progress, **options)
        raise RpxprofTypeError("auto-ranging (repeats=None with min_time/max_time) takes the "
                               "caller's own arguments, profile(fn, x); with a dict of arrays "
                               "give repeats=N")
    # one dict of tensors and arrays by name: fn(**d), as the old form meant
    if kwargs is None and len(args) == 1 and isinstance(args[0], dict) and \
            all(isinstance(k, str) for k in args[0]):
        args, kwargs = (), args[0]
    if options.get("writable_inputs"):
        raise RpxprofTypeError(
            "writable_inputs: rpxprof restores arrays it owns (profile(fn, {'name': array})); "
            "the caller's own objects are passed as they are and never restored: copy them "
            "in fn if it edits them")
    if inference is None:
        inference = _torch.is_module(fn)
    if inference and _torch._torch() is None:
        raise RpxprofTypeError("inference_mode=True needs torch, which is not imported")
    module, qualname = _label(fn)
    options.setdefault("name", "%s:%s" % (module or "?", qualname))
    _check_call(fn, args, kwargs)
    if not device_given and _torch.uses_cuda(fn, args, kwargs):
        options["device"] = "cuda"  # every call synchronized, as torch.utils.benchmark does
    if options.get("processes") is not None and _torch.cuda_initialized():
        raise RpxprofError(
            "processes=%r forks this process, and CUDA cannot be used in a forked child once "
            "this process has initialized it (CUDA tensors, a module on the GPU); use "
            "processes=None (the calls run here, synchronized), or `rpxprof run --model "
            "module:function --processes N`, which starts fresh interpreters"
            % options.get("processes"), 2)
    call_kw = dict(kwargs or {})

    ctx = _torch.inference_mode() if inference else None
    if ctx is not None:
        ctx.__enter__()
    import tempfile
    import shutil
    folder = plan = None
    try:
        if repeats is None:  # auto-ranging: the runner's (src/runner/autorange.c)
            options.update(repeats=None, autorange=True, min_time=min_time,
                           max_time=max_time, target_precision=precision)
        if layers_on:  # profiled calls in each worker after its timed loop (_layers.py)
            folder = tempfile.mkdtemp(prefix="rpxprof-layers-")
            plan = _layers.Plan(fn, args, call_kw, depth, layers_calls, folder,
                                options.get("device") == "cuda")
            options["after_loop"] = plan.after_loop
        report = _profile_run(fn, None, native=(tuple(args), call_kw), progress=progress,
                              **options)
        if plan is not None:  # the report's `layers`, its cost pass here, after the run
            gpus = options.get("gpus")
            if isinstance(gpus, str):
                gpus = [g for g in gpus.split(",") if g]
            report["layers"], why = plan.block(report, gpus)
            if why:  # said, never silent: a warning of the report and of Python's
                import warnings
                report.warnings = tuple(report.warnings) + (why,)
                if isinstance(report.get("notes"), list):
                    report["notes"].append(why)
                warnings.warn(why, RuntimeWarning, stacklevel=2)
    finally:
        if ctx is not None:
            ctx.__exit__(None, None, None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    report.autorange = report.get("autorange")
    return report


def _check_call(fn, args, kwargs):
    """fn must accept the arguments given: refused before anything runs, in Python's words."""
    import inspect
    from . import RpxprofTypeError
    target, label = _torch.forward_of(fn)   # an nn.Module's __call__ takes (*args, **kwargs)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):  # builtins without a signature: the call will tell
        return
    try:
        sig.bind(*args, **(kwargs or {}))
    except TypeError as e:
        label = label or getattr(fn, "__qualname__", None) or type(fn).__qualname__
        raise RpxprofTypeError(
            "rpxprof.profile(%s%s, ...): it does not accept the arguments given (%d "
            "positional%s): %s; pass the model's positional arguments after it and its "
            "keyword arguments in kwargs=, e.g. rpxprof.profile(model, x, kwargs={'mask': m}), "
            "or a function of no arguments: rpxprof.profile(lambda: model(x))"
            % (label, sig, len(args), "" if not kwargs else "; keyword: " + ", ".join(kwargs),
               e)) from None
