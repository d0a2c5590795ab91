"""One-glance results: what a Report shows (summary, Jupyter HTML, attributes, a row),
rows of many reports as a DataFrame, and compare in Python (two reports, or two callables
measured interleaved as `rpxprof compare --run`). The text comes from the library
(rpx_report_summary, rpx_compare_text, rpx_plot_svg), so the CLI and Python print the same."""
import html as _html
import json as _json
import os as _os
import shutil as _shutil
import tempfile as _tempfile

from . import _core

_STATS = ("p50", "p95", "p99", "mean")


def _fmt(x):
    """A number by the summary's rule (three significant digits, no exponent between
    0.001 and 10^6; rpx_format_3g), as the CLI prints it; "n/a" for None."""
    if x is None or isinstance(x, bool) or not isinstance(x, (int, float)):
        return "n/a"
    return _core.format_3g(float(x))


def _si(x):
    """"1.81 G" of 1814073344: the rule's three digits and an SI prefix (rpx_format_si, as
    the summary's cost line); "n/a" for None."""
    if x is None or isinstance(x, bool) or not isinstance(x, (int, float)):
        return "n/a"
    return _core.format_si(float(x))


def _stat_key(stat):
    """"p50", "p50_ms" -> "p50_ms"; anything else: a KeyError naming what exists."""
    s = str(stat)
    base = s[:-3] if s.endswith("_ms") else s
    if base not in _STATS:
        raise KeyError("%r: one of %s" % (stat, ", ".join(_STATS)))
    return base + "_ms"


class ReportView:
    """What a profile report shows at a glance; mixed into Report (a dict)."""

    def _num(self, *path):
        v = self
        for k in path:
            if not isinstance(v, dict):
                return None
            v = v.get(k)
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    @property
    def name(self):
        """What the report calls the callable (model_callable)."""
        return self.get("model_callable")

    @property
    def layers(self):
        """The report's `layers` block (rpxprof.profile(model, x, layers=True)): each
        module's time, interval, share, FLOPs, bytes and bound; None when not asked."""
        v = self.get("layers")
        return v if isinstance(v, dict) else None

    @property
    def p50_ms(self):
        """The median latency in ms (latency.p50_ms), None when not measured."""
        return self._num("latency", "p50_ms")

    @property
    def p95_ms(self):
        return self._num("latency", "p95_ms")

    @property
    def p99_ms(self):
        return self._num("latency", "p99_ms")

    @property
    def mean_ms(self):
        return self._num("latency", "mean_ms")

    @property
    def min_ms(self):
        return self._num("latency", "min_ms")

    def ci(self, stat="p50"):
        """The 95 % interval (lo_ms, hi_ms) of "p50", "p95", "p99" or "mean"
        (latency_ci), or None when the report has none (latency_ci.null_reasons says
        why)."""
        v = (self.get("latency_ci") or {}).get(_stat_key(stat))
        if isinstance(v, (list, tuple)) and len(v) == 2 and None not in v:
            return (float(v[0]), float(v[1]))
        return None

    def bound(self, target, kind="ideal"):
        """The roofline's lower bound in ms on `target` (a GPU key of `rpxprof gpus`, as
        given to gpus=): the "ideal" bound (default) or the "unfused" one; None when the
        report's roofline could not bound it (roofline[target].reason says why). A
        target the report has no roofline for is a KeyError naming those it has."""
        roof = self.get("roofline") or {}
        if target not in roof:
            raise KeyError("%r: the report has no roofline for it; it has %s (pass gpus=[...] "
                           "to rpxprof.profile with a cost or flops)"
                           % (target, ", ".join(sorted(roof)) or "none"))
        if kind not in ("ideal", "unfused"):
            raise ValueError("kind: 'ideal' or 'unfused', not %r" % (kind,))
        b = (roof[target] or {}).get(kind) or {}
        v = b.get("latency_ms")
        return float(v) if isinstance(v, (int, float)) else None

    def achieved(self, target, kind="ideal"):
        """The share of the roofline's bound the p50 achieves on `target` (bound / p50;
        roofline[target].achieved_fraction), None when unknown."""
        self.bound(target, kind)  # the same refusal for a target not in the report
        v = ((self["roofline"][target] or {}).get("achieved_fraction") or {}).get(kind)
        return float(v) if isinstance(v, (int, float)) else None

    def summary(self):
        """The lines `rpxprof run` prints after a run (the same renderer, in the library)."""
        asked = 0
        if self.get("isolated"):
            asked = self.get("processes") or 1
        text = _core.summary(_json.dumps(self, allow_nan=False), asked)
        if isinstance(self.get("layers"), dict) and not any(
                line.lstrip().startswith("layers") for line in text.splitlines()):
            from . import _layers  # profile(model, x, layers=True): its ten slowest modules
            text = text.rstrip("\n") + "\n" + "\n".join(_layers.summary_lines(self["layers"]))
        return text

    def __str__(self):
        return self.summary()

    def figure_svg(self, timeline=False):
        """The report's latency figure as `rpxprof plot` draws it (an SVG document, str):
        its distribution with the p50's interval, or with timeline=True latency against
        call index."""
        return _core.plot_svg(_json.dumps(self, allow_nan=False), bool(timeline))

    def to_row(self):
        """The common fields as one flat dict (a table row; rpxprof.to_dataframe): the
        callable, status, device, precision, unit, calls, processes, each statistic with
        its interval, the minimum, the inference peak RSS, the cost, and per roofline
        target its ideal bound and the achieved fraction. Unknown values are None. The
        library's row (rpx_report_row), the report's values unrounded."""
        return _json.loads(_core.report_row(_json.dumps(self, allow_nan=False)))

    def _repr_html_(self):
        """Jupyter's view: the headline (p50 with its interval), the latency figure, the
        cost and the roofline bounds. Self-contained HTML (the SVG inline), from the library
        (rpx_html_glance; the full page is `rpxprof report`'s)."""
        page = _core.html_glance(_json.dumps(self, allow_nan=False))
        if isinstance(self.get("layers"), dict) and "unattributed" not in page:
            from . import _layers
            page += _layers.html_table(self["layers"])
        return page


def _as_report(x, what):
    """A Report of a Report, a dict, or a path to a report file."""
    from . import Report, RpxprofTypeError
    if isinstance(x, Report):
        return x
    if isinstance(x, dict):
        return Report(x)
    if isinstance(x, (str, bytes, _os.PathLike)):
        with open(_os.fsdecode(_os.fspath(x)), encoding="utf-8") as f:
            return Report(_json.load(f))
    raise RpxprofTypeError("%s: a report (rpxprof.profile's result, a dict) or the path of a "
                           "report file, not %s" % (what, type(x).__name__))


def to_dataframe(reports):
    """The reports (Reports, dicts or paths) as a pandas DataFrame, one row each
    (Report.to_row). Without pandas: ImportError saying so; [r.to_row() for r in reports]
    are the same rows as dicts."""
    rows = [_as_report(r, "reports[%d]" % i).to_row() for i, r in enumerate(reports)]
    try:
        import pandas
    except ImportError:
        raise ImportError("rpxprof.to_dataframe needs pandas, which is not installed (Debian: "
                          "python3-pandas; pip install pandas); without it, "
                          "[report.to_row() for report in reports] gives the same rows as "
                          "dicts") from None
    return pandas.DataFrame(rows)


class Comparison(dict):
    """The result of rpxprof.compare / compare_run (a dict: `rpxprof compare --json`'s
    object) with the common fields as attributes: .verdict ("faster", "slower", "same",
    "inconclusive"; of the p50), .ratio (new/base p50), .ci (its interval, or None), .p
    (its p-value), .threshold, .summary() / str() (the CLI's table), _repr_html_. From
    compare_run, .base and .new are the two Reports."""

    base = None
    new = None
    _text = ""

    @property
    def verdict(self):
        return self.get("verdict")

    @property
    def ratio(self):
        return self.get("p50_ratio")

    @property
    def ci(self):
        v = self.get("p50_ratio_ci")
        return tuple(v) if isinstance(v, list) and None not in v else None

    @property
    def p(self):
        return self.get("p_value")

    @property
    def threshold(self):
        return self.get("threshold")

    @property
    def differences(self):
        """What the two reports' sessions differ in (docs/statistics.md#comparability): each
        {"field", "base", "new", "effect"}; effect "incomparable" (the verdict is then
        "incomparable": no ratio) or "note"."""
        return tuple(self.get("differences") or ())

    @property
    def warnings(self):
        """What the verdict must be read with: the comparison's own warnings and the two
        reports' (each once, naming its side: "base: ...", "new: ...", "base and new: ...")."""
        return tuple(self.get("warnings") or ())

    def summary(self):
        return self._text

    def __str__(self):
        return self._text

    def _repr_html_(self):
        e = _html.escape
        bs, ns = self.get("base_stats") or {}, self.get("new_stats") or {}
        rows = []
        for s in ("p50", "p95", "mean"):
            ci = self.get(s + "_ratio_ci")
            rows.append("<tr><th>%s</th><td>%s</td><td>%s</td><td>%s%s</td><td>%s</td><td>%s</td></tr>"
                        % (s, _fmt(bs.get(s + "_ms")), _fmt(ns.get(s + "_ms")),
                           _fmt(self.get(s + "_ratio")),
                           " [%s, %s]" % (_fmt(ci[0]), _fmt(ci[1]))
                           if isinstance(ci, list) and None not in ci else "",
                           _fmt(self.get("p_value" if s == "p50" else s + "_p_value")),
                           e(str(self.get(s + "_verdict")))))
        return ('<div class="rpxprof-compare"><p><strong>verdict: %s</strong> (p50 new/base %s, '
                'threshold &plusmn;%s %%)<br>base: %s<br>new: %s</p><table><tr><th></th>'
                '<th>base ms</th><th>new ms</th><th>new/base [95%% CI]</th><th>p</th>'
                '<th>verdict</th></tr>%s</table></div>'
                % (e(str(self.verdict)), _fmt(self.ratio), _fmt(100 * (self.threshold or 0)),
                   e(str(self.get("base"))), e(str(self.get("new"))), "".join(rows)))


def _threshold(t):
    from . import RpxprofTypeError
    if isinstance(t, str):
        s = t.strip()
        try:
            t = float(s[:-1]) / 100 if s.endswith("%") else float(s)
        except ValueError:
            raise RpxprofTypeError("threshold: a fraction (0.01) or a percentage (\"1%\"), "
                                   "not %r" % (t,)) from None
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        raise RpxprofTypeError("threshold: a fraction (0.01) or a percentage (\"1%\"), not %s"
                               % type(t).__name__)
    return float(t)


def _compare_files(base, new, threshold, design=None, paired=False, names=(None, None),
                   spread=None):
    js, text = _core.compare(base, new, threshold=threshold, paired_by_cpu=bool(paired),
                             design=design, base_name=names[0], new_name=names[1],
                             **(spread or {}))
    c = Comparison(_json.loads(js))
    c._text = text
    return c


def _session_spread(session_spread, history):
    """compare()'s between-session spread keywords for _core.compare."""
    from . import RpxprofTypeError
    if session_spread is not None and history is not None:
        raise RpxprofTypeError("session_spread and history both give the spread between "
                               "sessions; give one")
    if history is not None:
        return {"history": _os.fsdecode(_os.fspath(history))}
    if session_spread is None:
        return {}
    v = session_spread
    try:
        if isinstance(v, str) and v.strip().endswith("%"):
            import math
            v = math.log1p(float(v.strip()[:-1]) / 100)
        elif isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise ValueError
        v = float(v)
    except ValueError:
        raise RpxprofTypeError("session_spread: the standard deviation of log latency "
                               "between sessions, 0 or more (0.02, or \"2%%\"), not %r"
                               % (session_spread,)) from None
    if not 0 <= v <= 1:
        raise RpxprofTypeError("session_spread: 0 or more and at most 1 (0.02, or \"2%%\"), "
                               "not %r" % (session_spread,))
    return {"session_spread": v}


def compare(a, b, *, threshold=0.01, session_spread=None, history=None):
    """Compare two reports (rpxprof.profile's results, dicts, or report files) as
    `rpxprof compare A B`: the ratio b/a of p50, p95 and the mean with intervals, a
    p-value and a verdict (docs/statistics.md). threshold: what counts as a change
    (0.01 or "1%"). Returns a Comparison; RpxprofError when the reports cannot be
    compared (not complete, not the same work).
    Two reports of different sessions are compared with the between-session rule: its
    spread from history=PATH (the base's series there, or its machine's, as `compare
    --history`), or given as session_spread= (the standard deviation of log latency
    between sessions: 0.02 or "2%", as `compare --session-spread`; 0: none), else the
    default allowance (docs/statistics.md)."""
    threshold = _threshold(threshold)
    spread = _session_spread(session_spread, history)
    tmp = None
    try:
        paths = []
        for x, what in ((a, "a"), (b, "b")):
            if isinstance(x, (str, bytes, _os.PathLike)):
                paths.append(_os.fsdecode(_os.fspath(x)))
                continue
            r = _as_report(x, what)
            tmp = tmp or _tempfile.mkdtemp(prefix="rpxprof-compare-")
            p = _os.path.join(tmp, "%s.json" % ("base" if what == "a" else "new"))
            with open(p, "w", encoding="utf-8") as f:
                _json.dump(r, f, allow_nan=False)
            paths.append(p)
        # a report given as a dict is called by its callable's name, not its temporary file
        names = tuple(x.get("model_callable") if isinstance(x, dict) else None for x in (a, b))
        c = _compare_files(paths[0], paths[1], threshold, names=names, spread=spread)
    finally:
        if tmp:
            _shutil.rmtree(tmp, ignore_errors=True)
    return c


def _is_module(fn):
    return any(t.__module__.startswith("torch.nn") and t.__name__ == "Module"
               for t in type(fn).__mro__)


def _inference(fn):
    """An nn.Module called as fn(*args, **kwargs) under torch.inference_mode(); other
    callables as they are."""
    if not _is_module(fn):
        return fn
    import torch

    def call(*args, **kwargs):
        with torch.inference_mode():
            return fn(*args, **kwargs)
    return call


def _label(fn):
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) \
        or type(fn).__name__
    return module, qualname, "%s:%s" % (module or "?", qualname)


def _module_file(fn, which):
    """fn given as "PATH/module.py:function" (a module's file and its function): the
    text, checked here; None for a callable. The module is imported from that file in
    each of the side's workers, never from this process (docs/ci.md)."""
    if not isinstance(fn, str):
        return None
    from . import RpxprofError
    path, colon, func = fn.rpartition(":")
    if not colon or not path.endswith(".py") or not func.isidentifier():
        raise RpxprofError("%s=%r: give a callable, or a module's file and its function as "
                           "\"PATH/module.py:function\" (\"base/mypkg/model.py:predict\")"
                           % (which, fn), 2)
    if not _os.path.isfile(path):
        raise RpxprofError("%s=%r: %s: no such file (relative to the current folder %s)"
                           % (which, fn, path, _os.getcwd()), 2)
    return fn


def compare_run(fa, fb, *args, kwargs=None, threshold=0.01, warmup=10, repeats=None,
                processes=10, device="cpu", precision="unspecified", unit="request",
                cpus=None, paired=True, timeout=None, call_timeout=None, names=None,
                min_time=None, max_time=None, target_precision=None, history=None):
    """Measure fa and fb in one run as `rpxprof compare --run` does: `processes` worker
    processes of each (forked from this one), alternating A B, B A, ...; with paired=True
    (default) pair k runs both on CPU k mod n of `cpus` (else the allowed CPUs) and the
    ratio's interval comes from the within-pair ratios. Each is called as fn(*args,
    **kwargs) (an nn.Module under torch.inference_mode()); or, the old form, one dict
    name -> numpy array (or an NPZ file's path, *.npz) passed by name. repeats: timed calls per
    callable; None (the default) auto-ranges as profile() does, in the runner: both callables
    within max_time s (10), each process's calls until min_time s (1) over the processes and
    the p50 within +-target_precision (0.01), or its share of the time ends (each Report's
    .autorange says what was chosen). Returns a Comparison (fb/fa: fb is the new one) whose .base and .new are
    the two Reports. RpxprofError when a run fails or is refused.
    fa/fb may also be a module's file and its function, "PATH/module.py:function": two
    checkouts of one module (compare_run("base/mypkg/model.py:predict",
    "head/mypkg/model.py:predict", "inputs.npz")), each imported from its own file in its
    own workers, never from this process (docs/ci.md).
    history: an SQLite file or postgresql://... where both sessions are recorded, as
    `compare --run --history` records them (also RPXPROF_HISTORY; docs/history.md)."""
    from . import Report, RpxprofError, RpxprofTypeError, _check_fn, _npz_of
    files = (_module_file(fa, "fa"), _module_file(fb, "fb"))
    for f, spec in ((fa, files[0]), (fb, files[1])):
        if spec is None:
            _check_fn(f)
    threshold = _threshold(threshold)
    auto = repeats is None
    if not auto and (min_time is not None or max_time is not None or
                     target_precision is not None):
        raise RpxprofTypeError("min_time, max_time and target_precision are auto-ranging's "
                               "(repeats=None); with repeats=%r drop them" % (repeats,))
    for label, v in (("warmup", warmup), ("repeats", 1000 if auto else repeats),
                     ("processes", processes)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise RpxprofTypeError("%s: an int, not %s" % (label, type(v).__name__))
    if processes < 2:
        raise RpxprofError("processes: 2 or more of each (the interval of the ratio is "
                           "between processes)", 2)
    if cpus is not None and not isinstance(cpus, str):
        cpus = ",".join(str(int(x)) for x in ([cpus] if isinstance(cpus, int) else cpus))
    if cpus and not paired:
        raise RpxprofError("cpus picks the CPUs the pairs rotate over; drop it or paired=False", 2)
    (ma, qa, na), (mb, qb, nb) = [(None, f.rpartition(":")[2], f) if spec else _label(f)
                                  for f, spec in ((fa, files[0]), (fb, files[1]))]
    if names:
        na, nb = names
    if na == nb:
        na, nb = na + " (a)", nb + " (b)"
    tmp = _tempfile.mkdtemp(prefix="rpxprof-compare-")
    try:
        # the old form: one dict of numpy arrays (passed by name), or an NPZ file's path
        legacy = len(args) == 1 and not kwargs and (
            (isinstance(args[0], dict) and args[0] and all(
                type(v).__name__ == "ndarray" for v in args[0].values()))
            or (isinstance(args[0], (str, bytes, _os.PathLike))
                and _os.fsdecode(_os.fspath(args[0])).endswith(".npz")))
        native = {}
        if legacy and isinstance(args[0], dict):
            inputs, label, ca, cb = _npz_of(args[0], tmp, 0), "<dict>", fa, fb
        elif legacy:
            inputs, label, ca, cb = _os.fsdecode(_os.fspath(args[0])), None, fa, fb
        else:
            # the caller's own objects, passed as they are (as profile() does): no inputs file
            from . import _torch
            inputs = None
            ca, cb = [f if spec else _inference(f) for f, spec in ((fa, files[0]), (fb, files[1]))]
            label = _torch.describe(tuple(args), kwargs or {})
            native = {"args": tuple(args), "kwargs": dict(kwargs or {})}
        (ja, sa), (jb, sb), error = _core.profile_pair(
            ca, cb, na, nb, ma, qa, mb, qb, inputs, label=label, warmup=warmup,
            repeats=repeats, processes=processes, device=device, precision=precision,
            unit=unit, cpus=cpus, spread=bool(paired),
            timeout=float(timeout) if timeout else None,
            call_timeout=float(call_timeout) if call_timeout else None, **native,
            **({"history": _os.fspath(history)} if history is not None else {}),
            **_auto_keywords(auto, min_time, max_time, target_precision))
        reports = [Report(_json.loads(j)) if j else None for j in (ja, jb)]
        for r, s, n in ((reports[0], sa, na), (reports[1], sb, nb)):
            if s != "complete":
                raise RpxprofError("%s: %s (%s)" % (n, "interrupted" if s == "interrupted"
                                                    else "did not complete", error), 1, r)
        paths = []
        for r, k in zip(reports, ("base", "new")):
            p = _os.path.join(tmp, k + ".json")
            with open(p, "w", encoding="utf-8") as f:
                _json.dump(r, f, allow_nan=False)
            paths.append(p)
        c = _compare_files(paths[0], paths[1], threshold, design="interleaved",
                           paired=paired, names=(na, nb))
    finally:
        _shutil.rmtree(tmp, ignore_errors=True)
    c.base, c.new = reports
    for r in reports:
        r.autorange = r.get("autorange")
    return c


def _auto_keywords(auto, min_time, max_time, target_precision):
    """profile_pair's auto-ranging keywords (the runner checks their ranges)."""
    if not auto:
        return {}
    kw = {"auto": True}
    for k, v in (("min_time", min_time), ("max_time", max_time),
                 ("target_precision", target_precision)):
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                from . import RpxprofTypeError
                raise RpxprofTypeError("%s: a number above 0, not %r" % (k, v))
            kw[k] = float(v)
    return kw
