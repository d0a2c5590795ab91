"""rpxprof.sweep: one callable measured at several values of what it is called with,
every point in one session with their worker processes interleaved (as `rpxprof sweep`
measures a target's points; docs/sweep.md), and what the points say together: the
scaling exponent with its interval, the neighbours that went the wrong way, the best
throughput and the knee."""
import html as _html
import json as _json
import math as _math
import os as _os

from . import _core

__all__ = ["sweep", "Sweep"]


def _label_of(name, value):
    text = "x".join(str(v) for v in value) if isinstance(value, (tuple, list)) else str(value)
    safe = "".join(c if c.isalnum() or c in ".-" else "-" for c in text)
    return "%s-%s" % (name, safe)


def _size_of(value):
    """A value's size for the scaling fit: a positive number, or the product of a shape."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value > 0:
        return float(value)
    if isinstance(value, (tuple, list)) and value and all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
        return float(_math.prod(value))
    return None


def _json_value(value):
    if isinstance(value, (tuple, list)):
        return "x".join(str(v) for v in value)
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return str(value)


def _call_of(made):
    """make_args(value)'s result as (args tuple, kwargs dict or None)."""
    if isinstance(made, tuple):
        return made, None
    if isinstance(made, list):
        return tuple(made), None
    if isinstance(made, dict):
        return (), dict(made)
    return (made,), None


class Sweep(dict):
    """sweep.json as a dict (docs/sweep.md), with .points (its points), .reports (each
    point's whole Report, in the order of the values), .summary() (the table as text),
    _repr_html_ (Jupyter) and to_dataframe() (pandas, when installed)."""

    @property
    def points(self):
        return self["points"]

    def summary(self):
        lines = ["%-24s %10s %23s %10s %10s %14s" % ("point", "p50 ms", "95% CI", "p95 ms",
                                                      "p99 ms", "throughput/s")]
        for p in self["points"]:
            ci = p.get("p50_ci_ms")
            cis = "%.4g-%.4g" % tuple(ci) if ci else "n/a"
            lines.append("%-24s %10.4g %23s %10.4g %10.4g %14.5g%s" % (
                p["label"], p["p50_ms"] or float("nan"), cis, p["p95_ms"] or float("nan"),
                p["p99_ms"] or float("nan"), p["throughput_per_s"] or float("nan"),
                "" if p["valid"] else "  (invalid: %s)" % p["invalid_reason"]))
        sc = self.get("scaling")
        if sc:
            ci = sc.get("exponent_ci")
            lines.append("scaling: latency ~ (%s)^%.3f%s" % (
                sc["size_of"], sc["exponent"],
                " (95 %% CI %.3f to %.3f)" % tuple(ci) if ci else ""))
        for w in self.get("wrong_way") or []:
            lines.append("wrong way: %s -> %s, p50 ratio %.3f%s" % (
                w["from"], w["to"], w["ratio"], " (real)" if w["real"] else " (within the noise)"))
        if self.get("best_throughput"):
            lines.append("best throughput: %s" % self["best_throughput"]["label"])
        if self.get("knee"):
            lines.append("knee: %s" % self["knee"]["label"])
        return "\n".join(lines)

    def __str__(self):
        return self.summary()

    def html(self):
        """The sweep's whole page (as `rpxprof sweep --html` writes it)."""
        return _core.html_sweep(_json.dumps(self, allow_nan=False))

    def _repr_html_(self):
        rows = []
        for p in self["points"]:
            ci = p.get("p50_ci_ms")
            rows.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
                _html.escape(str(p["label"])), _core.format_3g(p["p50_ms"]) if p["p50_ms"]
                else "n/a", "%s to %s" % (_core.format_3g(ci[0]), _core.format_3g(ci[1]))
                if ci else "n/a", _core.format_3g(p["p99_ms"]) if p["p99_ms"] else "n/a",
                _core.format_3g(p["throughput_per_s"]) if p["throughput_per_s"] else "n/a"))
        sc = self.get("scaling")
        head = ""
        if sc and sc.get("exponent_ci"):
            head = "<p>latency grows as (%s)<sup>%s</sup> (95 %% CI %s to %s)</p>" % (
                _html.escape(sc["size_of"]), _core.format_3g(sc["exponent"]),
                _core.format_3g(sc["exponent_ci"][0]), _core.format_3g(sc["exponent_ci"][1]))
        return ("<div class=\"rpxprof-sweep\"><b>rpxprof sweep: %s</b>%s<table><tr><th>point"
                "</th><th>p50 (ms)</th><th>p50 95 %% CI</th><th>p99 (ms)</th><th>throughput "
                "(/s)</th></tr>%s</table></div>" % (_html.escape(str(self.get("model"))), head,
                                                    "".join(rows)))

    def to_dataframe(self):
        """The points as a pandas DataFrame, one row a point (pandas needed)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Sweep.to_dataframe() needs pandas, which is not installed "
                              "here: pip install pandas (Debian: python3-pandas), or use "
                              ".points, a list of dicts") from None
        rows = []
        for p in self["points"]:
            row = dict(p)
            ci = row.pop("p50_ci_ms", None)
            row["p50_ci_lo_ms"], row["p50_ci_hi_ms"] = ci if ci else (None, None)
            rows.append(row)
        return pandas.DataFrame(rows)

    def write(self, out_dir):
        """Keep the sweep as `rpxprof sweep --out-dir` does: out_dir/POINT.json each,
        out_dir/sweep.json."""
        _os.makedirs(out_dir, exist_ok=True)
        for p, r in zip(self["points"], self.reports):
            if r is not None:
                _core.write_report(_os.path.join(out_dir, p["label"] + ".json"),
                                   _json.dumps(r, allow_nan=False))
        with open(_os.path.join(out_dir, "sweep.json"), "w", encoding="utf-8") as f:
            _json.dump(self, f, indent=2, allow_nan=False)
        return out_dir


def sweep(fn_or_module, make_args, values, *, name="value", size=None, batch=False,
          warmup=10, repeats=300, processes=6, device="cpu", precision="unspecified",
          unit="call", cpus=None, paired=True, timeout=None, call_timeout=None,
          history=None):
    """Measure fn_or_module (a callable, or an nn.Module called under
    torch.inference_mode()) at every value of `values`, called as fn(*make_args(value))
    (make_args may return a tuple of positional arguments, a dict of keyword arguments,
    or one argument). All points are measured in one session, their `processes` worker
    processes interleaved round by round (the order rotating), so that a drift of the
    machine falls on every point; `repeats` timed calls a point. `name` names the varied
    parameter; `size(value)` gives the size the scaling exponent is fitted against
    (default: the value itself when it is a positive number, or the product of a shape
    tuple); batch=True: the value is the batch, so a point's throughput is batch x calls
    per second. Returns a Sweep (sweep.json as a dict: .points, .reports, .summary(),
    to_dataframe()). RpxprofError when the run fails or is refused."""
    from . import Report, RpxprofError, RpxprofTypeError, _check_fn
    from ._results import _inference, _label
    _check_fn(fn_or_module)
    values = list(values)
    if len(values) < 2:
        raise RpxprofError("values: a sweep needs two values or more", 2)
    for label, v in (("warmup", warmup), ("repeats", repeats), ("processes", processes)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise RpxprofTypeError("%s: an int, not %s" % (label, type(v).__name__))
    if processes < 2:
        raise RpxprofError("processes: 2 or more a point (the intervals are between "
                           "processes)", 2)
    if cpus is not None and not isinstance(cpus, str):
        cpus = ",".join(str(int(x)) for x in ([cpus] if isinstance(cpus, int) else cpus))
    calls = [_call_of(make_args(v)) for v in values]
    module, qualname, shown = _label(fn_or_module)
    fn = _inference(fn_or_module)
    from . import _torch
    options = dict(warmup=warmup, repeats=repeats, processes=processes, device=device,
                   precision=precision, unit=unit, cpus=cpus, spread=bool(paired),
                   timeout=float(timeout) if timeout else None,
                   call_timeout=float(call_timeout) if call_timeout else None)
    if history is not None:
        options["history"] = _os.fspath(history)
    results, error = _core.profile_many(fn, shown, module, qualname, calls,
                                        label=_torch.describe(calls[0][0], calls[0][1] or {}),
                                        **options)
    reports = [Report(_json.loads(j)) if j else None for j, _ in results]
    points, sized = [], True
    for i, (v, (_, status)) in enumerate(zip(values, results)):
        s = size(v) if size else _size_of(v)
        sized = sized and s is not None
        points.append({"value": _json_value(v), "label": _label_of(name, v), "index": [i],
                       "size": s, "items": float(v) if batch else 1.0,
                       "invalid_reason": None if status == "complete" else
                       "%s: %s" % (status, error)})
    vary = [{"name": name, "kind": "batch" if batch else "python", "direction": 1,
             "values": [_json_value(v) for v in values]}]
    text = _core.sweep_json(shown, _json.dumps(vary), ("batch" if batch else name) if sized
                            else None, _json.dumps(points),
                            [_json.dumps(r, allow_nan=False) if r is not None else None
                             for r in reports])
    out = Sweep(_json.loads(text))
    out.reports = reports
    return out
