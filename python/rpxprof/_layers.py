"""rpxprof.profile(model, x, layers=True | DEPTH): where an nn.Module's time goes, module by
module, against each module's cost and its bound on the host CPU's roofline.

This room owns: which modules are rows (the leaves, or the modules down to DEPTH), the
profiled calls in each worker process after its timed loop (forward pre/post hooks with
time.perf_counter_ns; torch.cuda.synchronize() at each on CUDA), each module's FLOPs
(torch.utils.flop_counter.FlopCounterMode's per-module counts where torch has it, torch >=
2.1; else this room's own count over __torch_dispatch__ with FlopCounterMode's convention),
its bytes (parameters and buffers plus input and output activations, per invocation), and
the report's `layers` block (the shape of WAVE 6's contract, the same as `rpxprof run
--layers` writes; docs/python.md, "Per module").

The timed calls are never touched: the hooks exist only during the profiled calls, which
run in each worker process after its timed loop completed (rpxprof._core's after_loop,
before the target's teardown), and each process writes what it measured to a file of its
own that the calling process reads after the run. The cost pass (one more call, under the
counter) runs in the calling process after the run."""
import json
import math
import os
import statistics
import time

from . import _torch

PROFILED_CALLS = 20     # profiled calls per process (layers_calls=)
WARMUP_CALLS = 3        # hooked calls before them, not kept
MAX_MODULE_ROWS = 10000

_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def depth_of(layers):
    """layers= as (on, depth): True -> leaves (depth None); an int >= 1 -> modules down to
    it; False/None -> off. Anything else is refused."""
    from . import RpxprofTypeError
    if layers is None or layers is False:
        return False, None
    if layers is True:
        return True, None
    if isinstance(layers, int) and not isinstance(layers, bool) and layers >= 1:
        return True, layers
    raise RpxprofTypeError("layers: True (every leaf module), an int DEPTH >= 1 (the modules "
                           "down to that depth: 1 is the model's children) or False, not %r"
                           % (layers,))


def check(fn, layers, calls, legacy):
    """Refuse what layers= cannot profile, before anything runs."""
    from . import RpxprofTypeError
    if not _torch.is_module(fn):
        raise RpxprofTypeError(
            "layers=%r: per-module times need a torch.nn.Module to hook (its submodules are "
            "the rows), and fn is %s; pass the module itself with its arguments: "
            "rpxprof.profile(model, x, layers=True), or drop layers=" % (
                layers, "a " + type(fn).__name__ if not callable(fn) else
                getattr(fn, "__qualname__", type(fn).__name__)))
    if legacy:
        raise RpxprofTypeError(
            "layers=%r: takes the module's own arguments, rpxprof.profile(model, x, "
            "layers=True); a dict of numpy arrays by name (or an NPZ path) is the "
            "fn(**arrays) form" % (layers,))
    if calls is not None and (isinstance(calls, bool) or not isinstance(calls, int)
                              or calls < 1):
        raise RpxprofTypeError("layers_calls: an int >= 1 (profiled calls per process), "
                               "not %r" % (calls,))


def rows_of(model, depth):
    """[(qualified name, module, covered leaf names or None)] in the model's order: the
    leaf modules (depth None), or the modules at depth DEPTH and the leaves above it; they
    never nest, so their times add up. A model without submodules is its own one row."""
    named = list(model.named_modules())
    out = []
    for name, m in named:
        if not name:
            continue
        d = name.count(".") + 1
        leaf = next(m.children(), None) is None
        if depth is None and leaf or depth is not None and (d == depth or d < depth and leaf):
            covers = None
            if not leaf:
                covers = [name + "." + n for n, c in m.named_modules()
                          if n and next(c.children(), None) is None]
            out.append((name, m, covers))
    if not out:
        out.append((type(model).__name__, model, None))
    return out[:MAX_MODULE_ROWS]


class Plan:
    """What the worker processes and the calling process share: the model, its arguments,
    the rows, where each process writes its file."""

    def __init__(self, model, args, kwargs, depth, calls, folder, cuda):
        self.model, self.args, self.kwargs = model, tuple(args), dict(kwargs or {})
        self.depth = depth
        self.calls = calls or PROFILED_CALLS
        self.folder = folder
        self.cuda = cuda
        self.rows = rows_of(model, depth)

    # ---- in each worker process, after its timed loop --------------------------------
    def after_loop(self):
        path = os.path.join(self.folder, "layers-%d.json" % os.getpid())
        try:
            out = self._profile()
        except BaseException as e:  # noqa: BLE001 - said in the report, never the run's end
            out = {"error": "%s: %s" % (type(e).__name__, e)}
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f)
        os.replace(tmp, path)

    def _profile(self):
        torch = _torch._torch()
        sync = torch.cuda.synchronize if self.cuda else (lambda: None)
        clock = time.perf_counter_ns
        n = len(self.rows)
        acc = [0] * n
        start = [0] * n
        handles = []

        def hooks(i):
            def pre(mod, inp):
                sync()
                start[i] = clock()

            def post(mod, inp, out):
                sync()
                acc[i] += clock() - start[i]
            return pre, post
        try:
            for i, (_, m, _) in enumerate(self.rows):
                pre, post = hooks(i)
                handles.append(m.register_forward_pre_hook(pre))
                handles.append(m.register_forward_hook(post))
            per_row = [[] for _ in range(n)]
            totals = []
            for k in range(WARMUP_CALLS + self.calls):
                for i in range(n):
                    acc[i] = 0
                sync()
                t0 = clock()
                self.model(*self.args, **self.kwargs)
                sync()
                t1 = clock()
                if k < WARMUP_CALLS:
                    continue
                totals.append(t1 - t0)
                for i in range(n):
                    per_row[i].append(acc[i])
        finally:
            for h in handles:
                h.remove()
        return {"pid": os.getpid(), "total_ns": totals, "rows_ns": per_row}

    # ---- in the calling process, after the run -----------------------------------------
    def cost(self):
        """Per row: flops (None where the counter counted nothing), bytes; and what
        counted them."""
        flops, how = count_flops(self.model, self.args, self.kwargs, self.rows)
        traffic = count_bytes(self.model, self.args, self.kwargs, self.rows)
        return flops, traffic, how

    def block(self, report, gpus=None):
        """(the report's `layers` block from the processes' files, None) or, when no
        process profiled, (None, why)."""
        files = sorted(f for f in os.listdir(self.folder) if f.startswith("layers-")
                       and f.endswith(".json"))
        procs, errors = [], []
        for f in files:
            with open(os.path.join(self.folder, f)) as fh:
                d = json.load(fh)
            (errors.append(d["error"]) if "error" in d else procs.append(d))
        if not procs:
            return None, failure_text(errors)
        flops, traffic, how = self.cost()
        return _assemble(self, report, procs, errors, flops, traffic, how, gpus), None


# ---- FLOPs --------------------------------------------------------------------------------

def _numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _aten_flops(func, args, out):
    """FLOPs of one aten op, FlopCounterMode's convention: matrix products and convolutions
    only, a multiply-add is 2 FLOPs, a bias add is not counted; None for any other op."""
    name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
    shape = lambda t: tuple(t.shape)  # noqa: E731
    if name in ("mm", "bmm"):
        a, b = shape(args[0]), shape(args[1])
        return 2 * _numel(a) * b[-1]
    if name in ("addmm", "baddbmm"):
        a, b = shape(args[1]), shape(args[2])
        return 2 * _numel(a) * b[-1]
    if name == "linear":
        x, w = shape(args[0]), shape(args[1])
        return 2 * _numel(x) * w[0]
    if name == "matmul":
        a, b = shape(args[0]), shape(args[1])
        k = a[-1]
        return 2 * _numel(shape(out)) * k
    if name in ("conv1d", "conv2d", "conv3d", "convolution", "_convolution",
                "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
        x, w = args[0], args[1]
        transposed = name.startswith("conv_transpose") or (
            name in ("convolution", "_convolution") and len(args) > 6 and bool(args[6]))
        if transposed:   # w: (C_in, C_out/groups, k...): every input element, each weight
            return 2 * _numel(shape(x)) * _numel(shape(w)[1:])
        return 2 * _numel(shape(out)) * _numel(shape(w)[1:])
    return None


def count_flops(model, args, kwargs, rows):
    """({row name: FLOPs or None}, what counted them) from one call of the model."""
    torch = _torch._torch()
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        FlopCounterMode = None
    names = {id(m): name for name, m, _ in rows}
    if FlopCounterMode is not None:
        with FlopCounterMode(display=False) as counter:
            model(*args, **kwargs)
        counts = counter.get_flop_counts()
        root = type(model).__name__
        out = {}
        for name, m, _ in rows:
            key = root if m is model else root + "." + name
            ops = counts.get(key)
            total = sum(int(v) for v in ops.values()) if ops else 0
            out[name] = total if total else None
        return out, ("torch.utils.flop_counter.FlopCounterMode (torch %s): its per-module "
                     "counts, get_flop_counts()" % torch.__version__)
    # torch < 2.1: the same convention, counted here over __torch_dispatch__, attributed
    # to the row whose forward is running
    from torch.utils._python_dispatch import TorchDispatchMode
    stack, out = [], {name: 0 for name, _, _ in rows}
    handles = []
    def enter(mod, inp):
        stack.append(id(mod))

    def leave(mod, inp, o):   # returns None: the output stays the module's own
        stack.pop()
    for _, m, _ in rows:
        handles.append(m.register_forward_pre_hook(enter))
        handles.append(m.register_forward_hook(leave))

    class _Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, a=(), kw=None):
            r = func(*a, **(kw or {}))
            f = _aten_flops(func, a, r)
            if f and stack:
                out[names[stack[-1]]] += f
            return r
    try:
        with _Count():
            model(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
    return ({k: (v if v else None) for k, v in out.items()},
            "rpxprof's count over __torch_dispatch__ with FlopCounterMode's convention "
            "(torch %s has no torch.utils.flop_counter): convolutions and matrix products, "
            "a multiply-add 2 FLOPs, bias adds and element-wise ops not counted"
            % torch.__version__)


def _tensor_bytes(x, depth=0):
    if _torch.is_tensor(x):
        return x.numel() * x.element_size()
    if depth < 3 and isinstance(x, (list, tuple)):
        return sum(_tensor_bytes(v, depth + 1) for v in x)
    if depth < 3 and isinstance(x, dict):
        return sum(_tensor_bytes(v, depth + 1) for v in x.values())
    return 0


def count_bytes(model, args, kwargs, rows):
    """{row name: bytes}: per invocation of the row's module, its parameters and buffers
    (read once) plus its input and output tensors (each read or written once), summed over
    the invocations of one call: no cache reuse, no fusion."""
    out = {name: 0 for name, _, _ in rows}
    own = {}
    handles = []
    for name, m, _ in rows:
        own[id(m)] = sum(p.numel() * p.element_size() for p in m.parameters()) + \
            sum(b.numel() * b.element_size() for b in m.buffers())

        def post(mod, inp, o, name=name):
            out[name] += own[id(mod)] + _tensor_bytes(inp) + _tensor_bytes(o)
        handles.append(m.register_forward_hook(post))
    try:
        model(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
    return out


# ---- the block ----------------------------------------------------------------------------

def _median_ms(ns):
    return statistics.median(ns) / 1e6 if ns else None


def _t_interval(values, log):
    """A 95 % t interval of the mean over the processes' values (on the log scale where
    `log`, as the report's between-process interval of the p50); None below 2 values."""
    if len(values) < 2 or (log and min(values) <= 0):
        return None
    xs = [math.log(v) for v in values] if log else list(values)
    m = statistics.mean(xs)
    df = len(xs) - 1
    t = _T975[df - 1] if df <= len(_T975) else 1.96 + 2.4 / df
    h = t * statistics.stdev(xs) / math.sqrt(len(xs))
    lo, hi = m - h, m + h
    return [math.exp(lo), math.exp(hi)] if log else [lo, hi]


def _roof(model, gpus):
    """({key: (peak FLOP/s or None, bandwidth B/s or None)} of the host CPU and each GPU
    key, from rpxprof.roofline (the library's own specs and CPU peak), the host CPU's
    name as the library gives it)."""
    from . import roofline
    keys = ["host-cpu"] + [g for g in (gpus or []) if g != "host-cpu"]
    fp64 = any(p.dtype == _torch._torch().float64 for p in model.parameters())
    try:
        r = roofline(1.0, 1.0, gpus=keys, precision="fp64" if fp64 else "fp32")
    except Exception:  # noqa: BLE001 - a bound not known is null
        return {}, None
    out = {}
    for key, b in (r.get("bounds") or {}).items():
        peak = (b.get("peak_dense") or {}).get("tflops")
        bw = b.get("memory_bandwidth_gbps")
        out[key] = (peak * 1e12 if isinstance(peak, (int, float)) and peak > 0 else None,
                    bw * 1e9 if isinstance(bw, (int, float)) and bw > 0 else None)
    cpu = ((r.get("bounds") or {}).get("host-cpu") or {}).get("gpu") or {}
    return out, cpu.get("name")


def _bound_ms(flops, nbytes, peak, bw):
    """max(FLOPs / peak, bytes / bandwidth) in ms over the terms known (a memory bound alone
    is still a lower bound where the FLOPs are not known); None when neither is."""
    terms = []
    if flops is not None and peak:
        terms.append(flops / peak * 1e3)
    if nbytes is not None and bw:
        terms.append(nbytes / bw * 1e3)
    return max(terms) if terms else None


def _row(name, op_type, covers, times_ms, flops, nbytes, roof, gpus, total_ms):
    t = statistics.median(times_ms)
    cpu = roof.get("host-cpu", (None, None))
    bound = _bound_ms(flops, nbytes, *cpu)
    gb = None
    if gpus:
        gb = {g: _bound_ms(flops, nbytes, *roof.get(g, (None, None))) for g in gpus
              if g != "host-cpu"} or None
    return {"name": name, "op_type": op_type, "nodes": covers, "time_ms": t,
            "time_ci_ms": _t_interval(times_ms, True), "share": t / total_ms if total_ms else None,
            "flops": flops, "macs": flops // 2 if flops is not None else None, "bytes": nbytes,
            "intensity": flops / nbytes if flops is not None and nbytes else None,
            "bound_ms": bound, "achieved": bound / t if bound is not None and t > 0 else None,
            "gpu_bounds": gb}


def _unprofiled_p50(report):
    lat = report.get("latency") or {}
    v = lat.get("p50_ms")
    return v if isinstance(v, (int, float)) else None


def _assemble(plan, report, procs, errors, flops, traffic, how, gpus):
    torch = _torch._torch()
    roof, cpu_name = _roof(plan.model, gpus)
    # per process: each row's median over its profiled calls, the total's
    totals = [_median_ms(p["total_ns"]) for p in procs]
    total_ms = statistics.median(totals)
    rows, row_medians = [], []
    for i, (name, m, covers) in enumerate(plan.rows):
        meds = [_median_ms(p["rows_ns"][i]) for p in procs]
        row_medians.append(meds)
        rows.append(_row(name, type(m).__name__, covers, meds, flops.get(name),
                         traffic.get(name), roof, gpus, total_ms))
    # the time no module accounts for: the whole call minus the rows (so that the rows
    # and it add up to the total), its interval over the processes' own differences
    un = total_ms - sum(r["time_ms"] for r in rows)
    un_p = [totals[j] - sum(meds[j] for meds in row_medians) for j in range(len(procs))]
    rows.append({"name": "unattributed", "op_type": None, "nodes": None, "time_ms": un,
                 "time_ci_ms": _t_interval(un_p, False),
                 "share": un / total_ms if total_ms else None, "flops": None, "macs": None,
                 "bytes": None, "intensity": None, "bound_ms": None, "achieved": None,
                 "gpu_bounds": None})
    p50 = _unprofiled_p50(report)
    overhead = total_ms / p50 - 1 if p50 else None
    note = None
    if overhead is not None and abs(overhead) > 0.15:
        note = ("the profiled calls took %.3g ms at the median against the unprofiled p50 of "
                "%.3g ms (%+.0f %%): the hooks' own time (two Python calls and two clock "
                "reads per module per call%s) is in the total, mostly in \"unattributed\""
                % (total_ms, p50, overhead * 100,
                   ", and a synchronisation at each" if plan.cuda else ""))
    known = [r for r in rows[:-1] if r["achieved"] is not None]
    below = sum(r["time_ms"] for r in known if r["achieved"] < 0.10)
    if cpu_name and cpu_name.startswith("Host CPU: "):
        cpu_name = cpu_name[len("Host CPU: "):]
    cpu_text = "host CPU (%s)" % cpu_name if cpu_name else "host CPU"
    block = {
        "runtime": "torch",
        "runtime_version": torch.__version__,
        "profiled_calls": plan.calls,
        "warmup_calls": WARMUP_CALLS,
        "processes": len(procs),
        "depth": plan.depth,
        "covers": ("each module's time is the median over the %d profiled calls of each "
                   "process (forward pre/post hooks, time.perf_counter_ns%s), run after its "
                   "timed calls; the time is the median of the processes' medians and %s"
                   % (plan.calls, ", torch.cuda.synchronize() at each" if plan.cuda else "",
                      "the interval a 95 %% t interval across the %d processes" % len(procs)
                      if len(procs) > 1 else "there is no interval: one process")),
        "unprofiled_p50_ms": p50,
        "total_ms": total_ms,
        "profiled_call_ms": total_ms,   # the rows add up to the whole profiled call
        "total_ci_ms": _t_interval(totals, True),
        "overhead": overhead,
        "overhead_note": note,
        "device": cpu_text,
        "below_10pct_share": below / total_ms if known and total_ms else None,
        "flops_counter": how,
        "bytes_model": ("per invocation: the module's parameters and buffers plus its input "
                        "and output tensors, each moved once (no cache reuse, no fusion)"),
        "bound_model": ("max(FLOPs / peak, bytes / bandwidth) on the host CPU's roofline "
                        "(rpxprof.roofline 'host-cpu'); the memory term alone where the "
                        "FLOPs are not known"),
        "errors": errors or None,
        "rows": rows,
        "by_op_type": by_op_type(rows, total_ms),
    }
    return block


def by_op_type(rows, total_ms):
    groups = {}
    for r in rows:
        if r["op_type"] is None:
            continue
        groups.setdefault(r["op_type"], []).append(r)
    out = []
    for op, rs in groups.items():
        t = sum(r["time_ms"] for r in rs)
        fl = None if any(r["flops"] is None for r in rs) else sum(r["flops"] for r in rs)
        b = None if any(r["bound_ms"] is None for r in rs) else sum(r["bound_ms"] for r in rs)
        out.append({"op_type": op, "rows": len(rs), "time_ms": t,
                    "share": t / total_ms if total_ms else None, "flops": fl, "bound_ms": b,
                    "achieved": b / t if b is not None and t > 0 else None})
    out.sort(key=lambda g: -g["time_ms"])
    return out


def failure_text(errors):
    """Why no process profiled (the block is then null, and this a warning)."""
    return ("layers: no worker process made its profiled calls, so the report's layers is "
            "null: %s" % ("; ".join(errors) if errors else
                          "none wrote what it measured (its timed loop did not complete)"))


# ---- at a glance (Report.summary, Report._repr_html_) -----------------------------------

def _g(x, unit=""):
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return "n/a"
    return "%.4g%s" % (x, unit)


def _pct(x):
    return "n/a" if not isinstance(x, (int, float)) else "%.1f %%" % (100 * x)


def slowest(block, n=10):
    rows = [r for r in block.get("rows") or [] if isinstance(r.get("time_ms"), (int, float))]
    return sorted(rows, key=lambda r: -r["time_ms"])[:n]


def summary_lines(block):
    """The layers block in words: the headline, the ten slowest rows, the share of the
    time spent below 10 % of the bound."""
    if not isinstance(block, dict):
        return []
    out = ["layers (%s, %s profiled calls x %s process%s, %s): %s ms in all against the "
           "unprofiled p50 of %s ms (overhead %s)"
           % (block.get("runtime"), block.get("profiled_calls"), block.get("processes"),
              "" if block.get("processes") == 1 else "es", block.get("device"),
              _g(block.get("total_ms")), _g(block.get("unprofiled_p50_ms")),
              _pct(block.get("overhead")))]
    if block.get("overhead_note"):
        out.append("  " + block["overhead_note"])
    for e in block.get("errors") or []:
        out.append("  not profiled: " + e)
    rows = slowest(block)
    if rows:
        w = max(len(r["name"]) for r in rows)
        out.append("  %-*s  %-12s %10s %7s %12s %9s" % (w, "module", "op type", "time ms",
                                                      "share", "FLOPs", "achieved"))
        for r in rows:
            out.append("  %-*s  %-12s %10s %7s %12s %9s"
                       % (w, r["name"], r.get("op_type") or "-", _g(r["time_ms"]),
                          _pct(r.get("share")), _g(r.get("flops")), _g(r.get("achieved"))))
    if block.get("below_10pct_share") is not None:
        out.append("  %s of the time is spent in modules below 10 %% of their bound"
                   % _pct(block["below_10pct_share"]))
    return out


def html_table(block):
    """The ten slowest rows as an HTML table (Report._repr_html_)."""
    import html
    if not isinstance(block, dict):
        return ""
    head = html.escape(summary_lines(block)[0])
    cells = ["<tr><th>module</th><th>op type</th><th>time ms</th><th>95 % CI</th>"
             "<th>share</th><th>FLOPs</th><th>bound ms</th><th>achieved</th></tr>"]
    for r in slowest(block):
        ci = r.get("time_ci_ms")
        cells.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
                     "<td>%s</td><td>%s</td></tr>" % (
                         html.escape(r["name"]), html.escape(r.get("op_type") or "-"),
                         _g(r["time_ms"]), "%s-%s" % (_g(ci[0]), _g(ci[1])) if ci else "n/a",
                         _pct(r.get("share")), _g(r.get("flops")), _g(r.get("bound_ms")),
                         _g(r.get("achieved"))))
    return ("<div class=\"rpxprof-layers\"><p>%s</p><table>%s</table></div>"
            % (head, "".join(cells)))
