"""`rpxprof aggregate` and the figures with the reports' intervals (docs/batch.md,
docs/statistics.md): summary.csv and summary.md carry each latency with its 95 %
interval, printed to the digits the interval justifies; the intervals are
recomputed here with numpy/scipy from each report's own latency_by_process and
samples (and must equal the report's latency_ci); null intervals read n/a with
their reason; reports of an older rpxprof (no processes, no latency_ci) still
aggregate; a different number of processes for the same task is flagged like a
different number of calls; the figures draw the p50's interval; the reports and
validation.json are validated against schemas/."""
import copy
import csv
import glob
import json
import math
import os
import shutil
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
from scipy import stats as st

import stats_ref  # noqa: E402
from common import TempDirTest, load_json as load, save_json as save, assert_profile_rejects, main, run, validate, validate_profile

SVG = "{http://www.w3.org/2000/svg}"
CONF = 0.95
STATS = ("p50", "p95", "p99", "mean")


def stat(x, name):
    return float(np.mean(x)) if name == "mean" else float(np.percentile(x, {"p50": 50, "p95": 95, "p99": 99}[name]))


# ---- the intervals, computed independently --------------------------------------------

def between_interval(r, name):
    """t interval on log scale over the per-process statistics, centred on the pooled one."""
    x = np.array(r["latency_samples_ms"])
    groups = [x[p["sample_offset"]:p["sample_offset"] + p["measured_calls"]] for p in r["latency_by_process"]]
    need = {"p50": 6, "p95": 59, "p99": 299, "mean": 1}[name]
    if len(groups) < 2 or min(g.size for g in groups) < need:
        return None
    y = np.log([stat(g, name) for g in groups])
    se = y.std(ddof=1) / math.sqrt(y.size)
    t = st.t.ppf(0.5 + CONF / 2, y.size - 1)
    pooled = stat(x, name)
    # centred on the geometric mean of the per-process statistics, widened to the pooled one
    return [min(math.exp(y.mean() - t * se), pooled), max(math.exp(y.mean() + t * se), pooled)]


def order_stat_interval(x, q):
    r = stats_ref.order_stat_interval(x, q, CONF)
    return None if r is None else list(r)


def within_interval(r, name):
    x = np.array(r["latency_samples_ms"])
    if name == "mean":
        if x.size < 30:
            return None
        h = st.t.ppf(0.5 + CONF / 2, x.size - 1) * np.std(x, ddof=1) / math.sqrt(x.size)
        return [float(np.mean(x) - h), float(np.mean(x) + h)]
    return order_stat_interval(x, {"p50": 0.5, "p95": 0.95, "p99": 0.99}[name])


def assert_interval(test, got, want, what):
    if want is None:
        test.assertIsNone(got, what)
        return
    test.assertIsNotNone(got, what)
    for g, w in zip(got, want):
        test.assertLessEqual(abs(g - w), 1e-9 * abs(w), f"{what}: {got} vs {want}")


# ---- the printing rule (docs/batch.md), written out independently ------------------------

def exact_decimals(v):
    for d in range(17):
        if float(f"{v:.{d}f}") == v:
            return d
    return 17


def decimals(v, lo, hi):
    """The last digit shown is the half width's second significant digit, never
    beyond the digits of the stored value, never before the value's first."""
    h = (hi - lo) / 2
    cap = exact_decimals(v)
    d = 1 - math.floor(math.log10(h)) if h > 1e-12 * abs(v) else cap
    return max(min(d, cap), -math.floor(math.log10(v)))   # the value's first digit always shows


def fixed(v, d):
    if d >= 0:
        return f"{v:.{d}f}"
    step = 10.0 ** -d                     # to tens, hundreds...: rounded half away from zero
    return f"{math.floor(v / step + 0.5) * step:.0f}"


def md_time(v, d):
    if v >= 1000:
        unit, mult, shift = "s", 1e-3, -3
    elif v >= 1:
        unit, mult, shift = "ms", 1, 0
    elif v >= 1e-3:
        unit, mult, shift = "µs", 1e3, 3
    else:
        unit, mult, shift = "ns", 1e6, 6
    return f"{fixed(v * mult, d - shift)} {unit}"


def md_rel(v, lo, hi):
    rel = (hi - lo) / 2 / v * 100
    if rel < 0.01:
        return "± <0.01 %"
    return f"± {fixed(rel, 1 - math.floor(math.log10(rel)))} %"


def md_rows(path):
    """{(task, model): {column: cell}} of summary.md's table."""
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f if l.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for l in lines[1:]:
        cells = [c.strip() for c in l.strip("|").split("|")]
        row = dict(zip(head, cells))
        out[(row["task"], row["model"])] = row
    return out


def csv_rows(path):
    with open(path) as f:
        return {(r["task"], r["model"]): r for r in csv.DictReader(f)}


def manifest(d, repeats=300):
    run("inputs", "make", os.path.join(d, "frame.npz"), "rgb=48x64x3:uint8", "--seed", "1", check=0)
    m = {"schema": "rpxprof.manifest/1",
         "defaults": {"warmup": 2, "repeats": repeats, "device": "cpu", "precision": "fp32"},
         "tasks": {"image_depth": {"inputs": "frame.npz", "unit": "frame"}},
         "models": [{"name": "demo-depth", "model": "rpxprof-demo:demo_depth", "tasks": ["image_depth"],
                     "flops": 1e6, "params": 1000},
                    {"name": "demo-noop", "model": "rpxprof-demo:demo_noop", "tasks": ["image_depth"],
                     "flops": 1e3, "params": 1}]}
    path = os.path.join(d, "m.json")
    save(path, m)
    return path


class AggregateIntervalsTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls._ctmp = tempfile.TemporaryDirectory(prefix="rpxaggci-")
        cls.d = cls._ctmp.name
        cls.manifest = manifest(cls.d)
        cls.out = os.path.join(cls.d, "out")
        p = run("batch", cls.manifest, "--out-dir", cls.out)
        assert p.returncode == 0, p.stdout + p.stderr

    @classmethod
    def tearDownClass(cls):
        cls._ctmp.cleanup()

    def copy_out(self):
        dst = self.path("out")
        shutil.copytree(self.out, dst)
        return dst

    def files(self, out):
        return sorted(glob.glob(os.path.join(out, "*", "*.json")))

    def aggregate(self, out, status="PASS"):
        agg = self.path("agg")
        p = run("aggregate", out, "--out-dir", agg, "--force")
        val = load(os.path.join(agg, "validation.json"))
        validate(val, "validation.json")
        self.assertEqual(val["status"], status, val)
        self.assertEqual(p.returncode, 0 if status == "PASS" else 1, p.stdout + p.stderr)
        return val, agg

    def check_row(self, r, row, md, covers):
        """The CSV row and the Markdown row of report r, against numpy's intervals."""
        self.assertEqual(row["processes"], str(r["processes"]))
        self.assertEqual(row["covers"], covers)
        self.assertEqual(float(row["ci_confidence"]), CONF)
        for name in STATS:
            key = name + "_ms"
            want = (between_interval if covers == "between-process" else within_interval)(r, name)
            # never narrower than the clock's resolution (the runner widens each side by it)
            res = r["latency_ci"].get("widened_by_resolution_ms", 0)
            if want is not None:
                want = [max(want[0] - res, 0), want[1] + res]
                # and within the fastest and the slowest call (issue 36)
                want = [max(want[0], min(r["latency_samples_ms"])),
                        min(want[1], max(r["latency_samples_ms"]))]
            assert_interval(self, r["latency_ci"][key], want, f"{r['model_name']} latency_ci.{key}")
            v = r["latency"][key]
            if want is None:
                self.assertEqual((row[name + "_ci_lo_ms"], row[name + "_ci_hi_ms"]), ("", ""))
                self.assertIn(key, r["latency_ci"]["null_reasons"])
                self.assertEqual(float(row[key]), v)   # as stored: nothing to round it by
                self.assertTrue(md[name].endswith("± n/a"), md[name])
                continue
            d = decimals(v, *want)
            # the CSV is data: the report's numbers to the last digit; only the Markdown rounds
            self.assertEqual(float(row[key]), v, name)
            self.assertEqual(float(row[name + "_ci_lo_ms"]), r["latency_ci"][key][0])
            self.assertEqual(float(row[name + "_ci_hi_ms"]), r["latency_ci"][key][1])
            self.assertEqual(md[name], f"{md_time(v, d)} {md_rel(v, *want)}")
        self.assertEqual(md["processes"], str(r["processes"]))

    # --- between-process: real reports of rpxprof batch ---------------------------------
    def test_between_process_intervals_in_csv_and_md(self):
        val, agg = self.aggregate(self.out)
        self.assertEqual(val["errors"], [])
        rows, md = csv_rows(os.path.join(agg, "summary.csv")), md_rows(os.path.join(agg, "summary.md"))
        self.assertEqual(len(rows), 2)
        for f in self.files(self.out):
            r = load(f)
            validate_profile(r)
            self.assertEqual(r["processes"], 5)
            key = (r["task"], r["model_name"])
            self.check_row(r, rows[key], md[key], "between-process")
            # every sample counted once, in process order
            self.assertEqual([p["sample_offset"] for p in r["latency_by_process"]], [0, 60, 120, 180, 240])
            self.assertIsNone(r["latency_ci"]["p99_ms"])
        with open(os.path.join(agg, "summary.md")) as f:
            text = f.read()
        self.assertIn("**between-process**", text)
        self.assertIn("in 5 worker processes", text)
        self.assertNotIn("within-process**", text)
        # the p99's reason, once
        self.assertIn("- p99 (image_depth/demo-depth and 1 more): a per-process p99 needs at least 299 calls", text)

    def test_figure_draws_the_p50_interval(self):
        _, agg = self.aggregate(self.out)
        root = ET.parse(os.path.join(agg, "figure.svg")).getroot()
        bars = {e.get("id"): e for e in root.iter(SVG + "path") if e.get("id", "").endswith("-p50-ci")}
        self.assertEqual(sorted(bars), ["row-0-0-p50-ci", "row-0-1-p50-ci"])
        r = load(os.path.join(self.out, "image_depth", "demo-depth.json"))
        lo, hi = r["latency_ci"]["p50_ms"]
        title = bars["row-0-0-p50-ci"].find(SVG + "title").text
        self.assertIn(f"[{lo!r}, {hi!r}] ms, between-process (5 processes)", title)
        # rpxprof plot draws the same bar, and a band on the timeline
        svg = self.path("fig.svg")
        run("plot", *self.files(self.out), "-o", svg, check=0)
        root = ET.parse(svg).getroot()
        self.assertEqual(len([e for e in root.iter(SVG + "path") if e.get("id", "").endswith("-p50-ci")]), 2)
        tl = self.path("tl.svg")
        run("plot", self.files(self.out)[0], "-o", tl, "--timeline", check=0)
        band = [e for e in ET.parse(tl).getroot().iter(SVG + "rect") if e.get("id") == "timeline-p50-ci"]
        self.assertEqual(len(band), 1)
        self.assertIn(f"[{lo!r}, {hi!r}]", band[0].find(SVG + "title").text)

    # --- within-process: one process --------------------------------------------------------
    def test_within_process_intervals(self):
        out = self.copy_out()
        for f in self.files(out):
            r = load(f)
            p = run("run", "--model", r["model_callable"], "--inputs", os.path.join(self.d, "frame.npz"),
                    "--unit", "frame", "--device", "cpu", "--precision", "fp32", "--warmup", "2",
                    "--repeats", "300", "--processes", "1", "--flops", r["efficiency"]["flops"],
                    "--params", r["efficiency"]["params"], "--output", f, "--force", "--quiet")
            self.assertEqual(p.returncode, 0, p.stderr)
            n = load(f)
            n["task"], n["model_name"] = r["task"], r["model_name"]
            save(f, n)
        val, agg = self.aggregate(out)
        rows, md = csv_rows(os.path.join(agg, "summary.csv")), md_rows(os.path.join(agg, "summary.md"))
        for f in self.files(out):
            r = load(f)
            validate_profile(r)
            self.assertEqual(r["processes"], 1)
            key = (r["task"], r["model_name"])
            self.check_row(r, rows[key], md[key], "within-process")
        with open(os.path.join(agg, "summary.md")) as f:
            text = f.read()
        self.assertIn("**within-process**", text)
        self.assertIn("not the variation from one run to the next", text)
        root = ET.parse(os.path.join(agg, "figure.svg")).getroot()
        titles = [e.find(SVG + "title").text for e in root.iter(SVG + "path") if e.get("id", "").endswith("-p50-ci")]
        self.assertEqual(len(titles), 2)
        self.assertTrue(all("within-process (1 process); does not cover run-to-run variation" in t for t in titles))

    # --- older reports -----------------------------------------------------------------------
    def test_csv_holds_every_number_at_full_precision(self):
        """issue 38 item 3: summary.csv's numbers equal the reports' to the last digit
        (read back with float), the ones the Markdown rounds by their interval too."""
        val, agg = self.aggregate(self.out)
        rows = csv_rows(os.path.join(agg, "summary.csv"))
        where = {"p50_ms": ("latency", "p50_ms"), "p95_ms": ("latency", "p95_ms"),
                 "p99_ms": ("latency", "p99_ms"), "mean_ms": ("latency", "mean_ms"),
                 "per_frame_p50_ms": ("realtime_budget", "per_frame_ms"),
                 "throughput_per_s": ("realtime_budget", "throughput_per_s"),
                 "params": ("efficiency", "params"), "flops": ("efficiency", "flops"),
                 "cpu_process_lifetime_peak_mb": ("memory", "cpu_process_lifetime_peak_mb"),
                 "cpu_inference_peak_mb": ("memory", "cpu_inference_peak_mb")}
        seen = 0
        for f in self.files(self.out):
            r = load(f)
            row = rows[(r["task"], r["model_name"])]
            for col, (sec, key) in where.items():
                want = r[sec][key]
                if want is None:
                    self.assertEqual(row[col], "", col)
                    continue
                self.assertEqual(float(row[col]), want, f"{r['model_name']} {col}: {row[col]!r}")
                seen += 1
            for name in STATS:
                ci = r["latency_ci"][name + "_ms"]
                if ci is not None:
                    self.assertEqual([float(row[name + "_ci_lo_ms"]), float(row[name + "_ci_hi_ms"])], ci)
                    seen += 2
        self.assertGreater(seen, 20)

    def test_reports_warnings_reach_the_verdict(self):
        """issue 38 item 4: the reports' own warnings (system_card.warnings) are the
        aggregate's too, each naming its row, once: printed and in validation.json."""
        out = self.copy_out()
        load_w = "load 6.00 on 2 CPUs: Other processes took 70% of the time of the 2 CPUs"
        for f in self.files(out):
            r = load(f)
            r["system_card"]["warnings"] = [load_w, load_w]
            save(f, r)
        agg = self.path("agg")
        p = run("aggregate", out, "--out-dir", agg, "--force")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        val = load(os.path.join(agg, "validation.json"))
        self.assertEqual(val["status"], "PASS")
        for model in ("demo-depth", "demo-noop"):
            w = "image_depth/%s: %s" % (model, load_w)
            self.assertEqual(val["warnings"].count(w), 1, val["warnings"])
            self.assertIn("rpxprof aggregate: warning: " + w, p.stderr)
        self.assertIn("%d warnings" % len(val["warnings"]), p.stdout)

    def test_old_single_process_reports_still_aggregate(self):
        out = self.copy_out()
        for f in self.files(out):
            r = load(f)
            for k in ("processes", "latency_by_process", "latency_ci", "warmup_samples_ms", "stopping"):
                del r[k]
            del r["latency"]["outliers"]
            validate_profile(r)
            save(f, r)
        val, agg = self.aggregate(out)
        rows, md = csv_rows(os.path.join(agg, "summary.csv")), md_rows(os.path.join(agg, "summary.md"))
        for f in self.files(out):
            r = load(f)
            row, m = rows[(r["task"], r["model_name"])], md[(r["task"], r["model_name"])]
            self.assertEqual(row["processes"], "1")
            for c in ("covers", "ci_confidence", "p50_ci_lo_ms", "p50_ci_hi_ms", "mean_ci_lo_ms", "mean_ci_hi_ms"):
                self.assertEqual(row[c], "", c)
            self.assertEqual(float(row["p50_ms"]), r["latency"]["p50_ms"])    # as stored: nothing to round by
            for name in STATS:
                self.assertTrue(m[name].endswith(" ± n/a"), m[name])
        with open(os.path.join(agg, "summary.md")) as f:
            self.assertIn("older rpxprof", f.read())
        root = ET.parse(os.path.join(agg, "figure.svg")).getroot()
        self.assertEqual([e for e in root.iter(SVG + "path") if e.get("id", "").endswith("-p50-ci")], [])

    # --- same work ---------------------------------------------------------------------------
    def test_different_processes_flagged_like_different_calls(self):
        out = self.copy_out()
        f = os.path.join(out, "image_depth", "demo-noop.json")
        r = load(f)
        p = run("run", "--model", r["model_callable"], "--inputs", os.path.join(self.d, "frame.npz"),
                "--unit", "frame", "--device", "cpu", "--precision", "fp32", "--warmup", "2",
                "--repeats", "300", "--processes", "3", "--flops", "1e3", "--params", "1",
                "--output", f, "--force", "--quiet")
        self.assertEqual(p.returncode, 0, p.stderr)
        n = load(f)
        n["task"], n["model_name"] = r["task"], r["model_name"]
        save(f, n)
        val, _ = self.aggregate(out, status="FAIL")
        self.assertEqual(val["errors"], [
            "processes differs: 5 in %s but 3 in %s" % (os.path.join(out, "image_depth", "demo-depth.json"), f)])
        # the same message form as a different number of calls
        r = load(f)
        r["measured_calls"] = 299
        r["latency_samples_ms"] = r["latency_samples_ms"][:299]
        r["latency_by_process"][-1]["measured_calls"] -= 1
        save(f, r)
        val, _ = self.aggregate(out, status="FAIL")
        self.assertIn("measured_calls differs: 300 in %s but 299 in %s"
                      % (os.path.join(out, "image_depth", "demo-depth.json"), f), val["errors"])

    def test_altered_interval_refused(self):
        out = self.copy_out()
        f = os.path.join(out, "image_depth", "demo-depth.json")
        r = load(f)
        r["latency_ci"]["p50_ms"][0] *= 0.999
        save(f, r)
        val, _ = self.aggregate(out, status="FAIL")
        self.assertTrue(any(e.startswith(f + ": latency_ci.p50_ms is [") and "but the samples give" in e
                            for e in val["errors"]), val["errors"])
        r["latency_ci"]["p50_ms"][0] /= 0.999
        r["latency_by_process"][1]["sample_offset"] += 1
        save(f, r)
        val, _ = self.aggregate(out, status="FAIL")
        self.assertTrue(any("latency_by_process[1]" in e for e in val["errors"]), val["errors"])

    # --- schema --------------------------------------------------------------------------------
    def test_schema_holds_the_new_keys(self):
        r = load(self.files(self.out)[0])
        validate_profile(r)
        assert_profile_rejects(self, r, lambda x: x.__setitem__("processes", 0))
        assert_profile_rejects(self, r, lambda x: x["latency_ci"].__setitem__("covers", "across-runs"))
        assert_profile_rejects(self, r, lambda x: x["latency_ci"].__setitem__("p50_ms", [1.0]))
        assert_profile_rejects(self, r, lambda x: x["latency_by_process"][0].pop("sample_offset"))
        assert_profile_rejects(self, r, lambda x: x["latency"]["outliers"].__setitem__("mild", -1))
        assert_profile_rejects(self, r, lambda x: x.__setitem__("stopping", {"criterion": "x"}))
        assert_profile_rejects(self, r, lambda x: x.__setitem__("warmup_samples_ms", [-1.0]))
        # with --target-precision, stopping is an object the schema describes
        p = run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", os.path.join(self.d, "frame.npz"),
                "--repeats", "60", "--target-precision", "50%", "--max-time", "20",
                "--output", self.path("s.json"), "--quiet")
        self.assertEqual(p.returncode, 0, p.stderr)
        s = load(self.path("s.json"))
        validate_profile(s)
        self.assertIsInstance(s["stopping"], dict)


if __name__ == "__main__":
    main()
