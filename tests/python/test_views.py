"""What a Report shows at a glance comes from the library (issue 35 §5, "Python on the
library"): the number format with an SI prefix (rpx_format_si), the table row
(rpx_report_row) and Jupyter's HTML (rpx_html_glance), no Python re-implementation."""
import json

import rpxprof
from rpxprof import _core, _results

REPORT = {
    "schema": "rpxprof.profile/1", "status": "complete", "model_callable": "m:<b>&'\"f",
    "device": "cpu", "precision": "fp32", "unit": "frame", "measured_calls": 120,
    "processes": 4, "created_utc": "2026-01-01T00:00:00Z",
    "latency": {"p50_ms": 12.345678901, "p95_ms": 20.5, "p99_ms": 30, "mean_ms": 13.0,
                "min_ms": 10.000001},
    "latency_ci": {"covers": "between-process", "p50_ms": [12.1, 12.6], "p95_ms": None,
                   "p99_ms": [1, 2], "mean_ms": [12.9, None]},
    "memory": {"cpu_inference_peak_mb": 312.2265625},
    "efficiency": {"flops": 3628146688, "macs": 1814073344, "params": 11689512,
                   "source": "declared"},
    "roofline": {"zz": {"ideal": {"latency_ms": 0.5}, "achieved_fraction": {"ideal": 0.04}},
                 "a100": {"ideal": {"latency_ms": None}, "achieved_fraction": None}},
}


def test_si_is_the_librarys():
    assert _core.format_si(1814073344) == "1.81 G" == _results._si(1814073344)
    assert _results._si(11689512) == "11.7 M" and _results._si(950) == "950"
    assert _results._si(None) == "n/a" and _results._si(True) == "n/a"


def test_row_is_the_reports_values_unrounded_in_order():
    row = rpxprof.Report(REPORT).to_row()
    assert list(row) == [
        "name", "status", "device", "precision", "unit", "calls", "processes",
        "p50_ms", "p50_ci_lo_ms", "p50_ci_hi_ms", "p95_ms", "p95_ci_lo_ms", "p95_ci_hi_ms",
        "p99_ms", "p99_ci_lo_ms", "p99_ci_hi_ms", "mean_ms", "mean_ci_lo_ms", "mean_ci_hi_ms",
        "min_ms", "ci_covers", "peak_rss_mb", "flops", "macs", "params",
        "bound_a100_ms", "achieved_a100", "bound_zz_ms", "achieved_zz", "created_utc"]
    assert row["p50_ms"] == 12.345678901 and row["min_ms"] == 10.000001
    assert (row["p50_ci_lo_ms"], row["p50_ci_hi_ms"]) == (12.1, 12.6)
    assert row["p95_ci_lo_ms"] is None and row["mean_ci_hi_ms"] is None
    assert row["p99_ci_lo_ms"] == 1.0 and isinstance(row["p99_ci_lo_ms"], float)
    assert row["flops"] == 3628146688 and row["peak_rss_mb"] == 312.2265625
    assert row["bound_zz_ms"] == 0.5 and row["achieved_zz"] == 0.04
    assert row["bound_a100_ms"] is None and row["achieved_a100"] is None
    assert rpxprof.Report({"status": "failed"}).to_row()["p50_ms"] is None


def test_glance_html_escapes_and_follows_the_rule():
    h = rpxprof.Report(REPORT)._repr_html_()
    assert h == _core.html_glance(json.dumps(REPORT))
    assert "m:&lt;b&gt;&amp;&#x27;&quot;f: p50 12.3 ms (95% CI [12.1, 12.6])" in h
    assert "<b>&" not in h
    assert "3.63 G FLOPs, 1.81 G MACs, 11.7 M params (declared)" in h
    assert "<tr><td>zz</td><td>0.500 ms</td><td>4.00 %</td></tr>" in h
    assert "<tr><td>a100</td><td>n/a ms</td><td>n/a</td></tr>" in h
    assert "<svg" not in h  # no samples: no figure
