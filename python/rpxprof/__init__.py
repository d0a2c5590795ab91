"""rpxprof: time a Python callable with librpxprof's timing loop, and cost models.

    import numpy as np, rpxprof
    def predict(rgb): return rgb.mean()
    report = rpxprof.profile(predict, {"rgb": np.zeros((480, 640, 3), np.uint8)}, repeats=200)
    print(report["latency"]["p50_ms"])
    report.write("predict.json")

The report is the same "rpxprof.profile/1" report as `rpxprof run` writes (a dict),
made by the same library call (rpx_runner_run); the timed loop is C. See docs/python.md.
"""
import json as _json
import os as _os
import shutil as _shutil
import tempfile as _tempfile

try:
    from . import _core
except ImportError as _e:  # pragma: no cover - a build without the extension
    raise ImportError(
        "rpxprof's extension module (rpxprof._core) is missing or cannot be loaded (%s); "
        "build it with `cmake --build build` and use PYTHONPATH=build/python, or "
        "`python3 -m pip install --no-build-isolation ./python`" % _e) from _e

__all__ = ["profile", "cost", "roofline", "system_card", "gpus", "Report", "RpxprofError",
           "RpxprofTypeError", "Interrupted", "__version__"]
__all__ += ["compare", "compare_run", "Comparison", "to_dataframe"]
__all__ += ["sweep", "Sweep"]
__version__ = _core.version


class RpxprofError(Exception):
    """A refusal or failure of rpxprof: str() is the library's message, `.code` the exit
    code `rpxprof` would have ended with (docs/cli.md: 1 failure, 2 usage, 3 crashed,
    4 timed out, 5 killed, 6 calls failed). `.report` is the report when one was built
    (a run that failed after it started), else None."""

    def __init__(self, message, code=1, report=None):
        super().__init__(message)
        self.code = code
        self.report = report


class RpxprofTypeError(RpxprofError, TypeError):
    """An argument of the wrong type (`fn` not callable, a list of arrays where samples are
    dicts, `warmup="2"`): an RpxprofError with code 2, as the CLI's usage errors, and also a
    TypeError, so code written to catch Python's TypeError keeps working."""

    def __init__(self, message, code=2, report=None):
        super().__init__(message, code, report)


class Interrupted(KeyboardInterrupt):
    """SIGINT/SIGTERM during rpxprof.profile: the run stopped, its report (status
    "interrupted", the samples measured so far) is kept in `.report`. A subclass of
    KeyboardInterrupt, so Ctrl-C still stops a script that does not catch it."""

    def __init__(self, message, report, code=130):
        super().__init__(message)
        self.report = report
        self.code = code


_core._set_error_class(RpxprofError)

from ._results import ReportView as _ReportView  # noqa: E402  (needs _core)


class Report(_ReportView, dict):
    """The "rpxprof.profile/1" report (a dict), with `.warnings` (what `rpxprof run`
    prints as warnings) and `.write(path, force=False)`; at a glance (rpxprof._results):
    `.summary()` / str() (the CLI's summary), `_repr_html_` (Jupyter), `.p50_ms`,
    `.ci("p50")`, `.bound("h100-sxm")`, `.to_row()`."""

    warnings = ()
    autorange = None  # what auto-ranging chose (repeats=None), docs/python.md

    @property
    def status(self):
        return self.get("status")

    def write(self, path, force=False):
        """Write the report to `path` through rpxprof's output guard: an existing file
        is replaced only when it is an rpxprof report (or empty), or with force=True;
        the inputs are never overwritten; the write is atomic. Returns the path."""
        text = _json.dumps(self, indent=2, allow_nan=False) + "\n"
        # the guard's messages name force=True (its spelling from Python)
        _core.write_report(_os.fspath(path), text, bool(force))
        return path


# What rpxprof's NPY reader loads (src/io/npy.c): numpy kind -> item sizes.
_NPZ_SIZES = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8)}
_NPZ_KINDS = "bool, int8-64, uint8-64, float16/32/64"


def _dtype_refusal(dtype):
    """(what the dtype is, how to fix it) for a dtype rpxprof does not pass, else None."""
    if dtype.kind in _NPZ_SIZES and dtype.itemsize in _NPZ_SIZES[dtype.kind] \
            and dtype.fields is None and not dtype.subdtype:
        return None
    if dtype.fields is not None:
        return "structured", "give one array per field (arr['name'])"
    table = {
        "O": ("object", "give numeric arrays"),
        "U": ("unicode string", "encode the text as numbers, e.g. "
                                "np.frombuffer(s.encode(), np.uint8), and decode it in fn"),
        "S": ("bytes string", "give the bytes as numbers, e.g. np.frombuffer(b, np.uint8)"),
        "M": ("datetime", "convert it first, e.g. arr.astype('int64')"),
        "m": ("timedelta", "convert it first, e.g. arr.astype('int64')"),
        "c": ("complex", "give the real and imaginary parts as two float arrays "
                         "(arr.real, arr.imag)"),
        "f": ("long double", "convert it to float64 first (arr.astype(np.float64))"),
        "V": ("void (raw bytes)", "give numeric arrays"),
    }
    return table.get(dtype.kind, ("not numeric", "give numeric arrays"))


def _npz_of(arrays, folder, index, where="inputs"):
    """Write one sample (a dict name -> array) to a private NPZ file, refusing up front what
    rpxprof's reader would refuse there (so the message names `where` and the key, never
    the temporary file)."""
    import numpy as np
    if not arrays:
        raise RpxprofError("%s: the dict of arrays is empty; give at least one array" % where, 2)
    fixed = {}
    for k, v in arrays.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise RpxprofError("%s: the name %r is not a Python identifier; the arrays "
                               "are passed as keyword arguments" % (where, k), 2)
        a = np.asarray(v, order="C")  # C order: what rpxprof reads (a 0-d array stays 0-d)
        bad = _dtype_refusal(a.dtype)
        if bad:
            raise RpxprofError("%s['%s']: dtype %s (%s) is not supported: rpxprof passes "
                               "numeric arrays (%s); %s" % (where, k, a.dtype, bad[0],
                                                           _NPZ_KINDS, bad[1]), 2)
        fixed[k] = a
    path = _os.path.join(folder, "sample%06d.npz" % index)
    np.savez(path, **fixed)
    return path


def _as_path(x, what, expected="a dict name -> numpy array, or an NPZ path"):
    if isinstance(x, (str, bytes, _os.PathLike)):
        p = _os.fsdecode(_os.fspath(x))
        return p
    hint = ""
    if type(x).__name__ == "ndarray" and what.startswith("inputs"):
        hint = ("; the arrays are passed by name as keyword arguments, so give "
                "{'rgb': arr} (a list holds one such dict per sample)")
    raise RpxprofTypeError("%s: %s, not %s%s" % (what, expected, type(x).__name__, hint))


def _check_fn(fn):
    """Refuse what cannot be timed: a non-callable, and a function whose call only creates a
    generator or coroutine (each sample would time the creation and none of the body)."""
    import functools
    import inspect
    if not callable(fn):
        raise RpxprofTypeError("fn: a callable (a function, a method or an object with "
                               "__call__), not %s" % type(fn).__name__)
    target = fn
    if not (inspect.isroutine(fn) or isinstance(fn, functools.partial) or inspect.isclass(fn)):
        target = getattr(type(fn), "__call__", fn)
    label = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) \
        or getattr(getattr(fn, "func", None), "__name__", None) or "fn"
    for test, what, made, fix in (
            (inspect.isgeneratorfunction, "a generator function", "a generator",
             "list(%s(**a))"),
            (inspect.isasyncgenfunction, "an async generator function",
             "an async generator", "asyncio.run(consume(%s(**a))) with an async def "
             "consume(g) that runs `async for _ in g`"),
            (inspect.iscoroutinefunction, "a coroutine function (async def)", "a coroutine",
             "asyncio.run(%s(**a))")):
        if test(target):
            raise RpxprofError(
                "fn: %s is %s: calling it only creates %s and runs none of its body, so "
                "every sample would time that creation (about 0.2 us); time a function that "
                "runs it, e.g. lambda **a: %s" % (label, what, made, fix % label), 2)


def _profile_run(fn, inputs, *, warmup=None, repeats=None, device=None, precision=None,
                 unit=None, processes=None, writable_inputs=False, cost=None, flops=None,
                 params=None, gpus=None, meta=None, timeout=None, call_timeout=None, name=None,
                 cpus=None, spread=False, native=None, progress=False, target_precision=None,
                 max_time=None, stop_after=None, autorange=False, min_time=None, audit=None,
                 audit_threshold=None,
                 call_records=None, check_outputs=None, check_fraction=None, rtol=None,
                 atol=None, output_field=None, save_outputs=None, reference_outputs=None,
                 timeline=False, trace=None, commit=None, history=None):
    """Time `fn(**arrays)` as `rpxprof run` does and return its report (a Report, a dict).
    An option left None takes the default of the run options' table (src/runner/options.c:
    warmup 10, repeats 1000, device "cpu", ...), as on the command line.
    native: (args, kwargs) to call fn(*args, **kwargs) with the caller's own objects
    instead of arrays (inputs is then None).

    inputs: a dict name -> numpy array, an NPZ path, or a list of those (distinct samples,
    the same array names in each; the timed calls cycle through them sample-major).
    processes: None (default) runs one worker in this process: your objects, no fork, the
    intervals cover within-process variation only. An int N >= 1 forks N worker processes
    one after another (isolation, between-process intervals), each a fork() of this
    process made with CPython's fork hooks (torch's thread pools survive it: tested).
    writable_inputs: the arrays are
    writable and rpxprof restores their bytes before every call, outside the timed span.
    cost: an ONNX model (path or bytes); flops/params: declared numbers instead.
    gpus: GPU keys (list or comma-separated str) for the roofline bounds. meta: a dict of
    str for the report's metadata. timeout/call_timeout: seconds (need processes=N).
    name: what the report calls the callable (default module:qualname).
    cpus: the CPUs fn's process and its threads run on: an int, a list of ints, or a str as
    `rpxprof run --cpus` takes it ("2-3", "0,2"); with processes=None, this thread for the
    run (its mask restored after). spread: the processes take those (else the allowed) CPUs in
    turn, the same number on each (needs processes=N). The report's placement says where.
    audit: "cache", "seed" or "cache,seed" (needs processes=N and, for cache, a list of
    distinct samples): the report's audit (docs/audits.md); audit_threshold: what the cache
    audit calls faster (default 0.10).
    call_records: "cpu" (the default), "full" or "off", as `rpxprof run --call-records`:
    where each timed call ran (the report's call_records; docs/report.md).
    check_outputs: True (or a folder, as `rpxprof run --check-outputs DIR`: against the outputs
    saved there) checks fn's return values as `rpxprof run --check-outputs` does
    (docs/output-checks.md): an untimed reference pass, then check_fraction (default 0.01)
    of the timed calls compared with it, bit-exact or within rtol/atol (numpy's allclose);
    save_outputs/reference_outputs: folders as --save-outputs/--reference-outputs. A
    difference ends the run with status outputs_differ: RpxprofError (code 7, .report).
    timeline=True keeps the run's timeline in the report (for `rpxprof trace`); trace="F"
    implies it and also writes the Chrome trace F, as `rpxprof run --trace F` (an existing
    F is replaced only when it is an rpxprof trace).
    Raises RpxprofError (.code, .report) when rpxprof refuses or the run fails (an argument
    of the wrong type: RpxprofTypeError, also a TypeError; a generator or async function, or
    an array of a dtype rpxprof does not pass: refused with code 2 before anything runs), and
    Interrupted (a KeyboardInterrupt, .report) on Ctrl-C."""
    _check_fn(fn)
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) \
        or type(fn).__name__
    if name is None:
        name = "%s:%s" % (module or "?", qualname)
    if processes is None:
        nproc = 0
    else:
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
            raise RpxprofError("processes: an int >= 1, or None for one worker in this "
                               "process", 2)
        nproc = processes
    if nproc == 0 and (timeout or call_timeout):
        raise RpxprofError(
            "%s needs forked workers (processes=N): in this process a call stuck in fn "
            "cannot be abandoned; pass processes=1 or more, or drop it"
            % ("timeout" if timeout else "call_timeout"), 2)
    if spread and nproc == 0:
        raise RpxprofError("spread gives each worker process its own CPU: pass processes=N "
                           "(N >= 1), or drop it", 2)
    if call_records is not None and not isinstance(call_records, str):
        raise RpxprofTypeError("call_records: \"cpu\", \"full\" or \"off\", not %s"
                               % type(call_records).__name__)
    for label, v in (("warmup", warmup), ("repeats", repeats)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise RpxprofTypeError("%s: an int, not %s" % (label, type(v).__name__))
    if cpus is not None and not isinstance(cpus, str):
        if isinstance(cpus, bool):
            raise RpxprofTypeError("cpus: an int, a list of ints or a str such as \"0,2\", "
                                   "not bool")
        items = [cpus] if isinstance(cpus, int) else cpus
        try:
            items = list(items)
        except TypeError:
            raise RpxprofTypeError("cpus: an int, a list of ints or a str such as \"0,2\", "
                                   "not %s" % type(cpus).__name__) from None
        for x in items:
            if isinstance(x, bool) or not isinstance(x, int):
                raise RpxprofTypeError("cpus: CPU numbers are ints, not %s" % type(x).__name__)
        cpus = ",".join(str(x) for x in items)
    checks = _output_checks(check_outputs, check_fraction, rtol, atol, output_field,
                            save_outputs, reference_outputs)
    if trace is not None:   # its place, checked before anything runs
        trace = _as_path(trace, "trace", "a file for the Chrome trace (\"run.trace.json\")")
        _core.write_trace(trace, None)
    tmp = _tempfile.mkdtemp(prefix="rpxprof-")
    try:
        has_dict = False
        single, samples = None, None
        items = inputs if isinstance(inputs, (list, tuple)) else None
        if native is not None:
            pass  # the caller's own objects: no inputs file
        elif items is not None:
            if not items:
                raise RpxprofError("inputs: the list of samples is empty", 2)
            samples = []
            for i, x in enumerate(items):
                if isinstance(x, dict):
                    has_dict = True
                    samples.append(_npz_of(x, tmp, i, "inputs[%d]" % i))
                else:
                    samples.append(_as_path(x, "inputs[%d]" % i))
        elif isinstance(inputs, dict):
            has_dict = True
            single = _npz_of(inputs, tmp, 0)
        else:
            single = _as_path(inputs, "inputs")
        first = inputs[0] if isinstance(inputs, (list, tuple)) and inputs else inputs
        if native is None and isinstance(first, dict) and first:
            _check_arrays_call(fn, first)  # after the dtypes (each refused by its key)
        cost_path = None
        if isinstance(cost, (bytes, bytearray, memoryview)):
            cost_path = _os.path.join(tmp, "model.onnx")
            with open(cost_path, "wb") as f:
                f.write(bytes(cost))
        elif cost is not None:
            cost_path = _as_path(cost, "cost", "an ONNX model: a path, or its bytes")
        if gpus is not None and not isinstance(gpus, str):
            gpus = ",".join(gpus)
        meta_text = None
        if meta is not None:
            if not isinstance(meta, dict):
                raise RpxprofTypeError("meta: a dict of str, not %s" % type(meta).__name__)
            meta_text = _json.dumps({str(k): str(v) for k, v in meta.items()})
        text, status, code, warnings, error = _call_core(name, 
            fn, name, module=module, qualname=qualname, inputs=single, samples=samples,
            label=_native_label(native) if native is not None else "<dict>" if has_dict
            else None, writable_inputs=bool(writable_inputs),
            warmup=warmup, repeats=repeats, device=device, precision=precision, unit=unit,
            processes=nproc, meta=meta_text, cost=cost_path,
            flops=None if flops is None else float(flops),
            params=None if params is None else float(params), gpus=gpus,
            timeout=float(timeout) if timeout else None,
            call_timeout=float(call_timeout) if call_timeout else None,
            cpus=cpus, spread=bool(spread), **_native_keywords(native, progress,
                                                                target_precision, max_time,
                                                                stop_after, autorange,
                                                                min_time),
            audit=audit,
            audit_threshold=None if audit_threshold is None else float(audit_threshold),
            call_records=call_records, timeline=bool(timeline or trace), commit=commit,
            **({"history": _os.fspath(history)} if history is not None else {}), **checks)
    finally:
        _shutil.rmtree(tmp, ignore_errors=True)
    report = Report(_json.loads(text))
    report.warnings = tuple(warnings)
    for w in warnings:  # history=PATH (or RPXPROF_HISTORY) not written: the report stands
        if w.startswith("the session was not recorded"):
            import warnings as _warnings
            _warnings.warn(w, RuntimeWarning, stacklevel=3)
    if trace is not None and status == "complete":
        _core.write_trace(trace, text)
    if status == "interrupted":
        raise Interrupted("rpxprof.profile: interrupted after %s timed calls; the report is "
                          "in .report" % len(report.get("latency_samples_ms") or ()),
                          report, code)
    if status != "complete":
        raise RpxprofError(_python_words(error or ("the run ended with status " + status),
                                         name), code, report)
    return report


def _output_checks(check_outputs, check_fraction, rtol, atol, output_field, save_outputs,
                   reference_outputs):
    """The output-check options as _core.profile's keywords (only those given; their ranges
    and combinations are checked by the runner, as for `rpxprof run`)."""
    kw = {}
    if check_outputs is not None and not isinstance(check_outputs, bool):
        if not isinstance(check_outputs, (str, bytes, _os.PathLike)):
            raise RpxprofTypeError("check_outputs: True, or a folder written by save_outputs "
                                   "(a path), not %s" % type(check_outputs).__name__)
        if reference_outputs is not None:
            raise RpxprofError("check_outputs=DIR is reference_outputs=DIR; give one of them", 2)
        reference_outputs, check_outputs = check_outputs, True
    if check_outputs:
        kw["check_outputs"] = True
    for label, v in (("check_fraction", check_fraction), ("rtol", rtol), ("atol", atol)):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise RpxprofTypeError("%s: a number, not %s" % (label, type(v).__name__))
        kw[label] = float(v)
    for label, v in (("output_field", output_field), ("save_outputs", save_outputs),
                     ("reference_outputs", reference_outputs)):
        if v is None:
            continue
        if label == "output_field":
            if not isinstance(v, str):
                raise RpxprofTypeError("output_field: a str, not %s" % type(v).__name__)
            kw[label] = v
        else:
            kw[label] = _as_path(v, label, "a folder")
    return kw


def _check_arrays_call(fn, arrays):
    """profile(fn, {"name": array}) calls fn(name=array): refused before anything runs,
    in Python's words, when fn's parameters do not take those names."""
    import inspect
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(**{k: None for k in arrays if isinstance(k, str)})
    except TypeError as e:
        label = getattr(fn, "__qualname__", None) or type(fn).__qualname__
        raise RpxprofTypeError(
            "rpxprof.profile(%s%s, {%s}): a dict of arrays is passed by name, as "
            "fn(%s), and %s does not take that: %s; name its parameters after the dict's keys, "
            "or pass the arrays as positional arguments: rpxprof.profile(fn, %s)"
            % (label, sig, ", ".join("%r: ..." % k for k in arrays), ", ".join(
                "%s=..." % k for k in arrays), label, e, ", ".join(str(k) for k in arrays)))


def _native_label(native):
    from . import _torch
    return _torch.describe(*native)


def _native_keywords(native, progress, target_precision, max_time, stop_after=None,
                     autorange=False, min_time=None):
    kw = {"progress": bool(progress)}
    if autorange:  # the runner's auto-ranging (src/runner/autorange.c)
        kw["auto"] = True
    if min_time is not None:
        kw["min_time"] = float(min_time)
    if native is not None:
        kw["args"], kw["kwargs"] = native
        if kw["kwargs"] is None:
            kw["kwargs"] = {}
    if target_precision is not None:
        kw["target_precision"] = float(target_precision)
    if max_time is not None:
        kw["max_time"] = float(max_time)
    if stop_after is not None:
        kw["stop_after"] = max(float(stop_after), 1e-3)
    return kw


def _python_words(message, name):
    """The library's messages name the callable as the CLI's `--model NAME`; from Python
    there is no --model: say rpxprof.profile(NAME) instead."""
    if name:
        message = message.replace("--model %s: " % name, "rpxprof.profile(%s): " % name)
    return message


def _call_core(name, fn, *a, **kw):
    try:
        return _core.profile(fn, *a, **kw)
    except RpxprofError as e:
        raise type(e)(_python_words(str(e), name), e.code, e.report) from None


from ._native import profile  # noqa: E402  (PyTorch in, auto-ranging: docs/python.md)


def cost(model, *example_args, kwargs=None, bind_inputs=None, bind_dims=None, precision=None,
         per_op=False):
    """The model cost of an ONNX model (a path, or its bytes, e.g. from torch.onnx.export to
    io.BytesIO), or of a torch.nn.Module called on `example_args` (exported to ONNX in
    memory, nothing written): the same object as `rpxprof cost MODEL --json` (params, macs,
    flops, traffic, by_op, ...). bind_inputs: ["name=1x3x224x224", ...]; bind_dims:
    ["N=1", ...]. See docs/python.md, "PyTorch in"."""
    from . import _torch
    if _torch.is_module(model):
        model = _torch.export_onnx(model, example_args, kwargs)
    elif example_args or kwargs is not None:
        raise RpxprofTypeError(
            "rpxprof.cost(model, *example_args): example arguments are for a torch.nn.Module "
            "(exported to ONNX in memory); model is %s, so give an ONNX model alone: "
            "rpxprof.cost(\"model.onnx\") or rpxprof.cost(onnx_bytes)" % type(model).__name__)
    if isinstance(model, (bytearray, memoryview)):
        model = bytes(model)
    elif not isinstance(model, bytes):
        model = _as_path(model, "rpxprof.cost(model)",
                         "an ONNX model (a path, or its bytes) or a torch.nn.Module with "
                         "example arguments (rpxprof.cost(model, torch.randn(1, 3, 224, 224)))")
    return _json.loads(_core.cost(model, bind_inputs=_list(bind_inputs),
                                  bind_dims=_list(bind_dims), precision=precision,
                                  per_op=bool(per_op)))


def roofline(flops, bytes, *, gpus=None, precision="fp32", tf32=False):
    """Roofline bounds of a model doing `flops` FLOPs and moving `bytes` bytes, on each GPU
    key in `gpus` (default: every GPU in the table; "host-cpu" is this CPU): the object of
    `rpxprof roofline --flops F --bytes B --gpu ... --json`."""
    if isinstance(gpus, str):
        gpus = gpus.split(",")
    return _json.loads(_core.roofline(float(flops), float(bytes), gpus=_list(gpus),
                                      precision=precision, tf32=bool(tf32)))


def system_card(device="cpu"):
    """This machine's system card (the report's system_card section; `rpxprof system --json`)."""
    return _json.loads(_core.system_card(device=device))


def gpus():
    """The GPU table (built in, plus RPX_GPU_SPECS files): the list `rpxprof gpus --json`
    prints under "gpus"."""
    return _json.loads(_core.gpus())


def _list(x):
    if x is None:
        return None
    if isinstance(x, str):
        return [x]
    return [str(v) for v in x]


from ._results import Comparison, compare, compare_run, to_dataframe  # noqa: E402
from ._sweep import Sweep, sweep  # noqa: E402  (docs/sweep.md)
