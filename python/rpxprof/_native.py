"""rpxprof.profile(fn_or_module, *args, kwargs=None, **options): the caller's own objects
(torch tensors stay tensors, numpy arrays stay arrays, or no arguments at all), an
nn.Module under torch.inference_mode(), auto-ranging (repeats=None: the calls and processes
picked by a time budget and a target precision) and the progress line. The old form
profile(fn, {"name": array}) goes on to the NPZ path as before (rpxprof._profile_run).
See docs/python.md, "PyTorch in" and "Auto-ranging"."""
import math
import os
import time

from . import _core, _torch

# the keywords profile() takes as options: the run's options that the options' table
# (src/runner/options.c) gives to Python, plus the package's own (name, meta, min_time,
# quiet, inference_mode, trace)
OPTIONS = tuple(o["key"] for o in _core.run_options() if "python" in o["front_ends"]) + (
    "name", "meta", "min_time", "quiet", "inference_mode", "trace")

MIN_TIME = 1.0           # s of timed calls at least (auto-ranging)
MAX_TIME = 10.0          # s for the whole profile() call at most (auto-ranging)
TARGET_PRECISION = 0.01  # the p50's 95 % interval within +-1 % of it, when the budget allows
P50_MIN_CALLS = 6        # calls a process needs for the p50's 95 % interval (order statistics)


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


def _percentile(sorted_xs, q):
    if not sorted_xs:
        return float("nan")
    k = (len(sorted_xs) - 1) * q
    lo, hi = int(math.floor(k)), int(math.ceil(k))
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (k - lo)


def _calibrate(call, max_time):
    """Time a few calls of `call` here (outside the report): (seconds per call, the relative
    spread IQR/median, calls made, seconds spent). At least 3 calls, about 0.05 x max_time
    (at most 0.25 s) unless one call is slower; a call slower than 0.2 x max_time stops it."""
    start = time.perf_counter()
    budget = min(0.25, 0.05 * max_time)
    times = []
    while True:
        a = time.perf_counter()
        call()
        b = time.perf_counter()
        times.append(b - a)
        spent = b - start
        if spent >= 0.2 * max_time or len(times) >= 1000:
            break
        if len(times) >= 3 and spent >= budget:
            break
    kept = sorted(times[1:] if len(times) > 1 else times)  # the first call pays lazy setup
    med = _percentile(kept, 0.5)
    iqr = _percentile(kept, 0.75) - _percentile(kept, 0.25)
    # what the time budget pays per call: the mean of the fastest 90 % (a single stall of
    # a busy machine in the calibration must not shrink the run; the deadline guards the rest)
    body = kept[:max(1, int(0.9 * len(kept)))] if len(kept) >= 10 else kept
    mean = sum(body) / len(body)
    return max(med, 1e-9), max(mean, med, 1e-9), (iqr / med if med > 0 else 0.0), \
        len(times), time.perf_counter() - start


def _plan(per_call, spread, spent, min_time, max_time, precision, processes, warmup):
    """The calls (repeats, over every process), the warmup and why, for a run that must end
    within max_time - spent seconds."""
    # calls the p50's interval needs for +-precision: the median's standard error is about
    # 1.2533 sigma / sqrt(n), sigma ~ IQR / 1.349
    sigma = spread / 1.349
    need = math.ceil((1.96 * 1.2533 * sigma / precision) ** 2) if sigma > 0 else 0
    k = processes or 1
    # the calibration calls warmed this process (a fork keeps that): the warmup takes at
    # most about 2 % of max_time, at least one call
    if isinstance(warmup, int) and not isinstance(warmup, bool):
        warmup = max(1, min(warmup, int(0.02 * max_time / per_call)))
    reserve = min(1.0, 0.1 * max_time) + k * (0.05 + warmup * per_call)
    left = max_time - spent - reserve
    cap = int(0.85 * left / per_call) if left > 0 else 0  # 15 %: the machine may slow down
    want = max(math.ceil(min_time / per_call), need, 10 * k, P50_MIN_CALLS * k)
    floor = P50_MIN_CALLS * k if processes else 1
    repeats = max(min(want, cap), floor)
    why = []
    if repeats < math.ceil(min_time / per_call):
        why.append("max_time left room for fewer calls than min_time asks")
    elif need > repeats:
        why.append("max_time left room for fewer calls than the target precision needs "
                   "(about %d)" % need)
    return int(repeats), int(warmup), need, "; ".join(why)


def profile(fn, *args, kwargs=None, warmup=10, repeats=None, device="cpu",
            precision="unspecified", unit="request", processes=None, writable_inputs=False,
            cost=None, flops=None, params=None, gpus=None, meta=None, timeout=None,
            call_timeout=None, name=None, cpus=None, spread=False, min_time=None,
            max_time=None, target_precision=None, quiet=False, inference_mode=None,
            **unknown):
    """Time fn(*args, **kwargs) as `rpxprof run` does and return its report.

    fn: a function, any callable, or a torch.nn.Module (called under torch.inference_mode()
    unless inference_mode=False). args/kwargs: the caller's own objects, passed as they are
    (torch tensors stay tensors; nothing is copied); none at all for a closure:
    profile(lambda: model(x)). The old form profile(fn, {"name": array}) (or an NPZ path,
    or a list of those) still times fn(**arrays) over read-only views.
    repeats=None (the default) auto-ranges: a few calibration calls, then the timed calls
    (and, with processes=N, more processes) picked so that the timed calls take at least
    min_time s (1), the p50's 95 % interval is within +-target_precision (0.01) when the
    budget allows, and the whole call ends within max_time s (10); the report's notes and
    .autorange say what was chosen. processes: None (this process) or N forked workers.
    quiet=True: no progress line (it is drawn on a terminal only, after 1 s).
    Other options as `rpxprof run` (src/runner/options.c). See docs/python.md."""
    options = dict(warmup=warmup, repeats=repeats, device=device, precision=precision,
                   unit=unit, processes=processes, writable_inputs=writable_inputs, cost=cost,
                   flops=flops, params=params, gpus=gpus, meta=meta, timeout=timeout,
                   call_timeout=call_timeout, name=name, cpus=cpus, spread=spread,
                   min_time=min_time, max_time=max_time, target_precision=target_precision,
                   quiet=quiet, inference_mode=inference_mode)
    device_given = device != "cpu"
    options.update(unknown)
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
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not v > 0):
            raise RpxprofTypeError("%s: a number above 0 (seconds%s), not %r"
                                   % (label, "" if label != "target_precision"
                                      else "; a fraction: 0.01 is +-1 %", v))
    progress = not quiet and os.isatty(2)

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

    def call():
        return fn(*args, **call_kw)

    ctx = _torch.inference_mode() if inference else None
    if ctx is not None:
        ctx.__enter__()
    try:
        auto = None
        if repeats is None:
            auto = _autorange(call, options, min_time, max_time, precision)
            # the soft deadline: no timed call starts after it (the report's time is kept)
            options["stop_after"] = auto["deadline"] - time.perf_counter()
        report = _profile_run(fn, None, native=(tuple(args), call_kw), progress=progress,
                              **options)
    finally:
        if ctx is not None:
            ctx.__exit__(None, None, None)
    report.autorange = auto
    if auto is not None:
        _autorange_note(report, auto)
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


def _autorange(call, options, min_time, max_time, precision):
    """Calibrate, then set options' repeats (and warmup, target_precision, max_time for
    forked workers); returns what was chosen (the Report's .autorange)."""
    t0 = time.perf_counter()
    min_time = MIN_TIME if min_time is None else float(min_time)
    max_time = MAX_TIME if max_time is None else float(max_time)
    precision = TARGET_PRECISION if precision is None else float(precision)
    if min_time > max_time:
        from . import RpxprofTypeError
        raise RpxprofTypeError("min_time %g s is more than max_time %g s: give min_time <= "
                               "max_time" % (min_time, max_time))
    try:
        p50, per_call, spread, n_cal, spent = _calibrate(call, max_time)
    except Exception as e:  # noqa: BLE001 - fn's own failure, with its traceback
        import traceback
        from . import RpxprofError
        raise RpxprofError("rpxprof.profile(%s): auto-ranging's calibration call raised an "
                           "exception:\n%s" % (options.get("name"), "".join(
                               traceback.format_exception(type(e), e, e.__traceback__)).rstrip()),
                           1) from e
    processes = options.get("processes")
    repeats, warmup, need, why = _plan(per_call, spread, spent, min_time, max_time, precision,
                                       processes, options.get("warmup"))
    options["repeats"] = repeats
    options["warmup"] = warmup
    if processes:
        # the runner's stopping rule: more processes (each of repeats/processes calls) while
        # the p50's interval is wider than +-precision and another process fits the time left
        options["target_precision"] = min(precision, 0.5)
        options["max_time"] = max(max_time - (time.perf_counter() - t0), 1e-3)
    reserve = min(0.5, 0.1 * max_time)  # for the report: statistics, system card
    return {"deadline": t0 + max_time - reserve, "min_time_s": min_time, "max_time_s": max_time, "target_precision": precision,
            "calibration_calls": n_cal, "calibration_s": spent,
            "calibration_p50_ms": p50 * 1e3, "calibration_mean_ms": per_call * 1e3,
            "calibration_spread": spread,
            "calls_for_precision": need, "warmup": warmup, "repeats": repeats,
            "processes": processes, "limited_by": why or None, "started": t0}


def _autorange_note(report, auto):
    started = auto.pop("started")
    auto.pop("deadline")
    auto["seconds"] = time.perf_counter() - started
    n_procs = report.get("processes")
    measured = len(report.get("latency_samples_ms") or ())
    auto["calls"] = measured
    auto["processes_run"] = n_procs
    if measured < auto["repeats"] and not auto["limited_by"]:
        auto["limited_by"] = ("the calls ran slower than calibrated: the deadline before "
                              "max_time stopped them after %d of %d" % (measured, auto["repeats"]))
    text = ("auto-ranging (repeats=None): %d timed calls%s after %d warmup, picked from %d "
            "calibration calls (p50 %.4g ms) for min_time %g s, max_time %g s and a target "
            "precision of +-%g %%; the whole profile() took %.2f s%s"
            % (measured, "" if not n_procs or n_procs < 2 else " over %s processes" % n_procs,
               auto["warmup"], auto["calibration_calls"], auto["calibration_p50_ms"],
               auto["min_time_s"], auto["max_time_s"], auto["target_precision"] * 100,
               auto["seconds"], "" if not auto["limited_by"] else "; " + auto["limited_by"]))
    notes = report.get("notes")
    if isinstance(notes, list):
        notes.append(text)
