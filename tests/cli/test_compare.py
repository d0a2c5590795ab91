"""`rpxprof compare` (docs/statistics.md): the ratio intervals and p-values
checked against an independent computation with numpy/scipy on the reports'
own samples, null intervals with their reasons, every verdict, the exit codes,
--fail-on-regression, refused reports, and two folders with Holm's correction.

Reports are a real report of `rpxprof run` whose samples are replaced by
numpy-generated ones (its latency fields recomputed as rpxprof computes them),
so the statistics are known exactly and no test depends on this machine's speed."""
import copy
import json
import math
import os
import re
import resource
import subprocess
import tempfile
import warnings

import numpy as np
from scipy import stats as st

import stats_ref  # noqa: E402
from common import BIN, MODELS, SANITIZED, SOURCE, TempDirTest, main, run

CONF = 0.95
TEMPLATE = None
SESSIONS_MADE = 0


def template():
    """One real complete report (made once)."""
    global TEMPLATE
    if TEMPLATE is None:
        with tempfile.TemporaryDirectory(prefix="rpxcmp-") as d:
            npz = os.path.join(d, "x.npz")
            run("inputs", "make", npz, "rgb=48x64x3:uint8=1", check=0)
            out = os.path.join(d, "r.json")
            run("run", "--model", "rpxprof-demo:demo_depth", "--inputs", npz, "--repeats", "20",
                "--output", out, "--quiet", check=0)
            with open(out) as f:
                TEMPLATE = json.load(f)
    return TEMPLATE


def report(groups, **changes):
    """The template with `groups` (a list of per-process sample arrays, ms) as its samples."""
    r = copy.deepcopy(template())
    samples = np.concatenate(groups)
    r["processes"] = len(groups)
    r["measured_calls"] = int(samples.size)
    r["latency_samples_ms"] = [float(x) for x in samples]
    by, off = [], 0
    for i, g in enumerate(groups):
        by.append({"process": i, "sample_offset": off, "measured_calls": int(g.size),
                   "p50_ms": float(np.percentile(g, 50)), "p95_ms": float(np.percentile(g, 95)),
                   "p99_ms": float(np.percentile(g, 99)), "mean_ms": float(np.mean(g)),
                   "min_ms": float(g.min()), "max_ms": float(g.max()),
                   "std_ms": float(np.std(g, ddof=1)) if g.size > 1 else None})
        off += g.size
    r["latency_by_process"] = by
    r["latency"] = {"p50_ms": float(np.percentile(samples, 50)), "p95_ms": float(np.percentile(samples, 95)),
                    "p99_ms": float(np.percentile(samples, 99)), "mean_ms": float(np.mean(samples)),
                    "min_ms": float(samples.min()), "max_ms": float(samples.max()),
                    "std_ms": float(np.std(samples, ddof=1))}
    r.pop("latency_ci", None)
    # each report made here is its own session (two reports of one session.id
    # are one session: no drift between them, SameSessionIdTest)
    global SESSIONS_MADE
    SESSIONS_MADE += 1
    if isinstance(r.get("session"), dict):
        r["session"]["id"] = f"{r['session'].get('id', 'session')}-{SESSIONS_MADE}"
    for k, v in changes.items():
        r[k] = v
    return r


def finite_only(o):
    """JSON has no Infinity: what overflows a double is null, as rpxprof writes it."""
    if isinstance(o, dict):
        return {k: finite_only(v) for k, v in o.items()}
    if isinstance(o, list):
        return [finite_only(v) for v in o]
    return None if isinstance(o, float) and not math.isfinite(o) else o


def huge_report(rng, k=3, n=60, centre=1.5e308):
    """Samples near the largest double: their sum (the mean) overflows."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return finite_only(report([centre * np.exp(rng.normal(0, 0.002, n)) for _ in range(k)]))


def groups_of(rng, k, n, centre, between_sd=0.0, within_sd=0.002):
    """k processes of n calls: each process's own level times log-normal call noise."""
    return [centre * math.exp(rng.normal(0, between_sd)) * np.exp(rng.normal(0, within_sd, n)) for _ in range(k)]


# ---- the independent computation -------------------------------------------------------

def stat(x, name):
    return float(np.mean(x)) if name == "mean" else float(np.percentile(x, {"p50": 50, "p95": 95}[name]))


def between_ratio(base, new, name):
    """Welch t on the log per-process statistics, centred on the ratio of their
    geometric means, widened to hold the pooled ratio."""
    pb, pn = stat(np.concatenate(base), name), stat(np.concatenate(new), name)
    yb = np.log([stat(g, name) for g in base])
    yn = np.log([stat(g, name) for g in new])
    vb, vn = yb.var(ddof=1) / yb.size, yn.var(ddof=1) / yn.size
    se = math.sqrt(vb + vn)
    df = (vb + vn) ** 2 / (vb ** 2 / (yb.size - 1) + vn ** 2 / (yn.size - 1))
    t = st.t.ppf(0.5 + CONF / 2, df)
    ratio = pn / pb
    p = st.mannwhitneyu([stat(g, name) for g in base], [stat(g, name) for g in new],
                        method="exact" if max(yb.size, yn.size) <= 50 else "asymptotic").pvalue
    d = yn.mean() - yb.mean()
    return ratio, min(math.exp(d - t * se), ratio), max(math.exp(d + t * se), ratio), p


def order_stat_interval(x, q):
    return stats_ref.order_stat_interval(x, q, CONF)


def within_interval(x, name):
    if name == "mean":
        m, h = np.mean(x), st.t.ppf(0.5 + CONF / 2, x.size - 1) * np.std(x, ddof=1) / math.sqrt(x.size)
        return m - h, m + h
    return order_stat_interval(x, {"p50": 0.5, "p95": 0.95}[name])


def within_ratio(base, new, name):
    """MOVER on log scale from each run's own interval; p: U over the samples."""
    xb, xn = np.concatenate(base), np.concatenate(new)
    pb, pn = stat(xb, name), stat(xn, name)
    lb, hb = within_interval(xb, name)
    ln, hn = within_interval(xn, name)
    d = math.log(pn) - math.log(pb)
    lo = d - math.sqrt((math.log(pn) - math.log(ln)) ** 2 + (math.log(hb) - math.log(pb)) ** 2)
    hi = d + math.sqrt((math.log(hn) - math.log(pn)) ** 2 + (math.log(pb) - math.log(lb)) ** 2)
    return pn / pb, math.exp(lo), math.exp(hi), st.mannwhitneyu(xb, xn, method="asymptotic").pvalue


class CompareFiles(TempDirTest):
    """Reports written here and compared by `rpxprof compare` (no tests of its own)."""

    def write(self, name, rep):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            json.dump(rep, f)
        return p

    def compare(self, base, new, *args, check=0, spread="0"):
        """compare BASE NEW; the reports made here share no machine drift, so the tests of
        the arithmetic give a between-session spread of 0 (--session-spread 0: the intervals
        are the within-session ones); SeparateSessionsTest checks the rule without it."""
        a = self.write("base.json", base) if isinstance(base, dict) else base
        b = self.write("new.json", new) if isinstance(new, dict) else new
        extra = ("--session-spread", spread) if spread is not None else ()
        return run("compare", a, b, *extra, *args, check=check)

    def compare_json(self, base, new, *args, check=0, spread="0"):
        return json.loads(self.compare(base, new, "--json", *args, check=check, spread=spread).stdout)


class CompareTest(CompareFiles):

    def test_between_process_arithmetic_against_scipy(self):
        rng = np.random.default_rng(1)
        base = groups_of(rng, 5, 200, 1.0, between_sd=0.02)
        new = groups_of(rng, 6, 150, 1.03, between_sd=0.02)
        out = self.compare_json(report(base), report(new))
        self.assertEqual(out["covers"], "between-session")
        self.assertEqual(out["within_session"]["covers"], "between-process")
        for name in ("p50", "p95", "mean"):
            ratio, lo, hi, p = between_ratio(base, new, name)
            self.assertAlmostEqual(out[f"{name}_ratio"], ratio, delta=1e-12 * ratio)
            self.assertAlmostEqual(out[f"{name}_ratio_ci"][0], lo, delta=1e-9 * lo, msg=name)
            self.assertAlmostEqual(out[f"{name}_ratio_ci"][1], hi, delta=1e-9 * hi, msg=name)
            key = "p_value" if name == "p50" else f"{name}_p_value"
            self.assertAlmostEqual(out[key], p, delta=1e-12, msg=name)
        self.assertIn("exact", out["p_value_method"])

    def test_within_process_arithmetic_against_scipy_and_warning(self):
        rng = np.random.default_rng(2)
        base = [1.0 * np.exp(rng.normal(0, 0.01, 400))]
        new = [1.02 * np.exp(rng.normal(0, 0.01, 350))]
        p = self.compare(report(base), report(new), "--json")
        out = json.loads(p.stdout)
        self.assertEqual(out["within_session"]["covers"], "within-process")
        self.assertIn("do not cover the variation from one run to the next", p.stderr)
        self.assertTrue(out["warnings"])
        for name in ("p50", "p95", "mean"):
            ratio, lo, hi, pv = within_ratio(base, new, name)
            self.assertAlmostEqual(out[f"{name}_ratio"], ratio, delta=1e-12 * ratio)
            self.assertAlmostEqual(out[f"{name}_ratio_ci"][0], lo, delta=1e-9 * lo, msg=name)
            self.assertAlmostEqual(out[f"{name}_ratio_ci"][1], hi, delta=1e-9 * hi, msg=name)
        self.assertAlmostEqual(out["p_value"], pv, delta=1e-12 + 1e-9 * pv)
        # the per-run intervals printed for people come from the same rule
        lo, hi = within_interval(np.concatenate(base), "p50")
        self.assertEqual(out["base_stats"]["p50_ms_ci"], [lo, hi])
        text = self.compare(report(base), report(new)).stdout
        self.assertIn("within-process", text)

    def test_null_intervals_say_why(self):
        rng = np.random.default_rng(3)
        # one process of 40 calls: no distribution-free interval of p95 (59 calls)
        out = self.compare_json(report([rng.uniform(1, 1.1, 40)]), report([rng.uniform(1, 1.1, 40)]))
        self.assertIsNone(out["p95_ratio_ci"])
        self.assertIn("at least 59 calls", out["null_reasons"]["p95_ratio_ci"])
        self.assertEqual(out["p95_verdict"], "inconclusive")
        self.assertIsNotNone(out["p50_ratio_ci"])
        # five processes of 40: a per-process p95 needs 59 calls in every process
        out = self.compare_json(report(groups_of(rng, 5, 40, 1.0)), report(groups_of(rng, 5, 40, 1.0)))
        self.assertIsNone(out["p95_ratio_ci"])
        self.assertIn("per-process p95 needs at least 59 calls", out["null_reasons"]["p95_ratio_ci"])
        text = self.compare(report(groups_of(rng, 5, 40, 1.0)), report(groups_of(rng, 5, 40, 1.0))).stdout
        self.assertIn("p95_ratio_ci is null: base: a per-process p95 needs at least 59 calls", text)

    def test_every_verdict_and_fail_on_regression(self):
        rng = np.random.default_rng(4)
        base = report(groups_of(rng, 5, 200, 1.0, between_sd=0.002))
        cases = {"slower": 1.05, "faster": 0.95, "same": 1.0}
        for verdict, factor in cases.items():
            new = report(groups_of(rng, 5, 200, factor, between_sd=0.002))
            out = self.compare_json(base, new)
            self.assertEqual(out["verdict"], verdict, out["p50_ratio_ci"])
            code = 3 if verdict == "slower" else 0
            self.compare(base, new, "--fail-on-regression", check=code)
        # 3 % apart but processes that scatter by 5 %: the interval straddles the threshold
        noisy = report([1.03 * math.exp(e) * np.exp(rng.normal(0, 0.002, 200)) for e in (-0.06, -0.03, 0, 0.03, 0.06)])
        self.assertEqual(self.compare_json(base, noisy)["verdict"], "inconclusive")
        self.compare(base, noisy, "--fail-on-regression", check=0)
        # 5 % slower is beyond a 1 % threshold but inside a 10 % one
        slower = report(groups_of(rng, 5, 200, 1.05, between_sd=0.002))
        self.assertEqual(self.compare_json(base, slower, "--threshold", "10%")["verdict"], "same")
        self.assertEqual(self.compare_json(base, slower, "--threshold", "0.1")["threshold"], 0.1)
        self.assertIn("slower", self.compare(base, slower).stdout)

    def test_overflowing_samples_are_inconclusive_and_printed_short(self):
        # A ratio beyond the largest double: null, with its reason, and so inconclusive
        # (docs/statistics.md), never slower; --fail-on-regression does not fire.
        rng = np.random.default_rng(12)
        base = report(groups_of(rng, 3, 60, 0.5))
        huge = huge_report(rng)
        out = self.compare_json(base, huge)
        for name in ("p50", "p95", "mean"):
            self.assertIsNone(out[f"{name}_ratio"], name)
            self.assertIsNone(out[f"{name}_ratio_ci"], name)
            self.assertEqual(out[f"{name}_verdict"], "inconclusive", name)
            self.assertIn(f"{name}_ratio_ci", out["null_reasons"])
        self.assertIn("larger than a double holds", out["null_reasons"]["p50_ratio_ci"])
        self.assertIn("mean of the new run", out["null_reasons"]["mean_ratio_ci"])
        self.assertEqual(out["verdict"], "inconclusive")
        self.assertIsNone(out["new_stats"]["mean_ms"])
        self.compare(base, huge, "--fail-on-regression", check=0)
        # swapped: a finite ratio near 1e-308, faster, printed to the digits it reproduces
        out = self.compare_json(huge, base)
        self.assertEqual(out["verdict"], "faster")
        self.assertLess(out["p50_ratio"], 1e-307)
        for text in (self.compare(huge, base).stdout, self.compare(base, huge).stdout):
            self.assertIsNone(re.search(r"\d{12}", text), text)
            self.assertNotIn("nan", text.lower())
            self.assertNotIn("inf", text.lower())
        text = self.compare(huge, base).stdout
        p50 = next(line for line in text.splitlines() if line.startswith("p50 "))
        cells = p50.split()
        self.assertAlmostEqual(float(cells[1]) / out["base_stats"]["p50_ms"], 1, delta=1e-5)
        self.assertAlmostEqual(float(cells[3]), out["p50_ratio"], delta=0.05 * (out["p50_ratio_ci"][1] - out["p50_ratio_ci"][0]))
        lo, hi = out["p50_ratio_ci"]
        # to the second digit of the interval's half-width: off by at most half a unit there
        self.assertAlmostEqual(float(cells[4].strip("[,")), lo, delta=0.05 * (hi - lo))
        self.assertAlmostEqual(float(cells[5].strip("]")), hi, delta=0.05 * (hi - lo))
        # the usual case keeps its fixed-point form
        rng = np.random.default_rng(4)
        text = self.compare(report(groups_of(rng, 5, 200, 1.0, between_sd=0.002)),
                            report(groups_of(rng, 5, 200, 1.05, between_sd=0.002))).stdout
        self.assertRegex(text, r"\np50 +\d\.\d+ +\d\.\d+ +1\.\d+ \[1\.\d+, 1\.\d+\]")

    def test_figures_and_tables_of_overflowing_samples_end(self):
        # plot and aggregate of a report near 1e308 beside a usual one: the log axis's decades
        # stopped at infinity (a loop that filled memory) and summary.md printed 63 digits
        rng = np.random.default_rng(15)
        huge = huge_report(rng)
        huge.update(task="t", model_name="huge")
        tiny = report(groups_of(rng, 3, 60, 1e-7), task="t", model_name="tiny")
        one = report(groups_of(rng, 3, 60, 1.0), task="t", model_name="one")
        files = [self.write(f"ag/t/{r['model_name']}.json", r) for r in (huge, tiny, one)]

        def bounded(*args):
            def limit():  # a regression must not take the machine's memory with it
                if not SANITIZED:
                    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
            return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120,
                                  preexec_fn=limit, stdin=subprocess.DEVNULL)

        p = bounded("plot", *files, "-o", self.path("fig.svg"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertLess(os.path.getsize(self.path("fig.svg")), 1 << 20)
        p = bounded("plot", files[0], "-o", self.path("tl.svg"), "--timeline")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = bounded("aggregate", self.path("ag"), "--out-dir", self.path("out"), "--allow-incomplete-flops",
                    "--quiet")
        self.assertIn(p.returncode, (0, 1), p.stderr)
        for name in ("summary.md", "summary.csv"):
            with open(self.path("out", name)) as f:
                text = f.read()
            self.assertIsNone(re.search(r"\d{20}", text), (name, text))
        with open(self.path("out", "summary.md")) as f:
            md = f.read()
        self.assertRegex(md, r"\| t \| huge \|.*\| 1\.50e\+305 s ")

    def test_processes_in_two_clusters_are_no_difference(self):
        # The same model twice (calibration, docs/statistics.md): its processes land at one of
        # two speeds, 1.0 or 1.8, six and four in the base, four and six in the new. The pooled
        # p50s jump to the larger cluster (a ratio of 1.8) while the per-process levels say
        # nothing changed: the interval, centred on the geometric means, must not call it slower.
        rng = np.random.default_rng(11)
        levels_a = [1.0] * 6 + [1.8] * 4
        levels_b = [1.0] * 4 + [1.8] * 6
        base = report([lv * np.exp(rng.normal(0, 0.002, 100)) for lv in levels_a])
        new = report([lv * np.exp(rng.normal(0, 0.002, 100)) for lv in levels_b])
        out = self.compare_json(base, new)
        self.assertGreater(out["p50_ratio"], 1.7)
        lo, hi = out["p50_ratio_ci"]
        self.assertLess(lo, 1.0)
        self.assertLessEqual(lo, out["p50_ratio"])
        self.assertGreaterEqual(hi, out["p50_ratio"])
        self.assertEqual(out["verdict"], "inconclusive")

    def test_bad_command_lines(self):
        rng = np.random.default_rng(5)
        a = self.write("a.json", report(groups_of(rng, 2, 50, 1.0)))
        for args in ([a], [a, a, a], [a, a, "--threshold", "0"], [a, a, "--threshold", "150%"],
                     [a, a, "--threshold", "x"], [a, self.tmp], [a, a, "--bogus"]):
            p = run("compare", *args, check=2)
            self.assertTrue(p.stderr)
        p = run("compare", "--run", check=2)  # --run measures: it needs two models
        self.assertIn("--run needs --model twice", p.stderr)
        p = run("compare", "--run", "-m", "rpxprof-demo:demo_noop", "-m", "rpxprof-demo:demo_noop",
                "-m", "rpxprof-demo:demo_depth", "--inputs", a, check=2)
        self.assertIn("takes exactly two --model", p.stderr)
        self.assertNotIn("given twice", p.stderr)
        # too few calls a process for any p50 interval: a verdict that could only be inconclusive
        p = run("compare", "--run", "-m", "rpxprof-demo:demo_noop", "-m", "rpxprof-demo:demo_noop",
                "--inputs", a, "--repeats", "11", "--processes", "2", check=2)
        self.assertIn("at least 6 in every process: give --repeats 12 or more", p.stderr)

    def test_errors_md_compare_run_rows_are_what_it_prints(self):
        """Issue 26 §4 item 10: docs/errors.md said `compare --run` was "not available yet"
        while src/cli/compare_run.c measures two models. Every message that errors.md quotes
        for `compare --run` is what a bad `compare --run` command line prints (exit 2)."""
        a = self.write("a.json", report(groups_of(np.random.default_rng(7), 2, 50, 1.0)))
        npz = os.path.join(self.tmp, "in.npz")
        np.savez(npz, x=np.zeros(4, np.float32))
        demo = ("--model", "rpxprof-demo:demo_noop", "--model", "rpxprof-demo:demo_noop")
        said = ""
        for args in ((), demo, (*demo, a, a), (*demo, "--model", "c.so:f", "--inputs", npz),
                     (*demo, "--inputs", npz, "--processes", "1"),
                     (*demo, "--inputs", npz, "--repeats", "11", "--processes", "2")):
            p = run("compare", "--run", *args, check=2)
            said += p.stderr
        with open(os.path.join(SOURCE, "docs", "errors.md")) as f:
            # the rows of bad command lines (exit 2); a failing model's row quotes the model
            rows = [r for r in f if r.startswith("| `compare --run`")
                    and r.split(" | ")[2].strip() == "2"]
        self.assertGreaterEqual(len(rows), 2)
        for row in rows:
            self.assertNotIn("not available", row)
            for quoted in row.split(" | ")[1].split("`")[1::2]:
                self.assertIn(quoted, said, row)

    def test_refused_reports(self):
        rng = np.random.default_rng(6)
        base = report(groups_of(rng, 3, 60, 1.0))
        checks = {
            "inputs_sha256": dict(inputs_sha256="0" * 64),
            "unit": dict(unit="frame"),
            "device": dict(device="cuda:0"),
            "precision": dict(precision="fp16"),
        }
        for key, change in checks.items():
            p = self.compare(base, report(groups_of(rng, 3, 60, 1.0), **change), check=1)
            self.assertIn("did not do the same work", p.stderr)
            self.assertIn(f"{key} differs", p.stderr.replace(" (different inputs)", ""))
        card = copy.deepcopy(base["system_card"])
        card["cpu_name"] = "Another CPU"
        p = self.compare(base, report(groups_of(rng, 3, 60, 1.0), system_card=card), check=1)
        self.assertIn("CPU model (system_card.cpu_name) differs", p.stderr)
        self.assertIn("Another CPU", p.stderr)
        card = copy.deepcopy(base["system_card"])
        card["gpu_name"] = "NVIDIA H100"
        p = self.compare(base, report(groups_of(rng, 3, 60, 1.0), system_card=card), check=1)
        self.assertIn("GPU model (system_card.gpu_name) differs", p.stderr)
        # not complete
        p = self.compare(base, report(groups_of(rng, 3, 60, 1.0), status="failed", error="boom"), check=1)
        self.assertIn("status is 'failed', not complete (boom)", p.stderr)
        # unreadable, or not a profile
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            f.write("{")
        self.assertIn("not valid JSON", self.compare(base, bad, check=1).stderr)
        self.assertIn("does not exist", self.compare(base, self.path("nope.json"), check=1).stderr)
        self.assertIn("'schema' is not", self.compare(base, report(groups_of(rng, 3, 60, 1.0), schema="x"), check=1).stderr)
        # latency_by_process that does not add up to the samples
        r = report(groups_of(rng, 3, 60, 1.0))
        r["latency_by_process"][2]["measured_calls"] = 10
        self.assertIn("latency_by_process counts", self.compare(base, r, check=1).stderr)
        # an older report (no processes, no latency_by_process) is one process
        old = report([rng.uniform(1, 1.1, 100)])
        del old["processes"], old["latency_by_process"]
        self.assertEqual(self.compare_json(base, old)["within_session"]["covers"], "within-process")

    def test_one_validator_with_aggregate(self):
        # compare refuses what aggregate refuses, with the same message (src/compare/report_check.c),
        # and the message counts the samples the file really has
        rng = np.random.default_rng(13)
        base = report(groups_of(rng, 3, 60, 1.0))

        def altered(change):
            r = report(groups_of(rng, 3, 60, 1.0), task="t", model_name="m")
            change(r)
            return r

        cases = {
            "latency_by_process counts 130 calls but latency_samples_ms has 180; the report was altered":
                lambda r: r["latency_by_process"][2].__setitem__("measured_calls", 10),
            "measured_calls is 5 but latency_samples_ms has 180 samples; the report is truncated":
                lambda r: r.__setitem__("measured_calls", 5),
            "latency.p50_ms is ": lambda r: r["latency"].__setitem__("p50_ms", r["latency"]["p50_ms"] * 1.1),
            "latency_by_process[1]: 'sample_offset' and 'measured_calls' do not follow on":
                lambda r: r["latency_by_process"][1].__setitem__("sample_offset", 70),
        }
        for i, (want, change) in enumerate(cases.items()):
            r = altered(change)
            f = self.write(f"agg{i}/t/m.json", r)
            p = self.compare(base, f, check=1)
            self.assertIn(want, p.stderr)
            run("aggregate", self.path(f"agg{i}"), "--out-dir", self.path(f"out{i}"), "--allow-incomplete-flops",
                "--quiet", check=1)
            with open(self.path(f"out{i}/validation.json")) as fh:
                errors = json.load(fh)["errors"]
            mine = [e for e in errors if e.startswith(f + ": ")]
            self.assertTrue(mine, errors)
            for e in mine:  # every one of aggregate's messages about this file, word for word
                self.assertIn(e, p.stderr)
            # plot draws the file as it is, and warns in the same words
            p = run("plot", f, "-o", self.path(f"fig{i}.svg"), check=0)
            for e in mine:
                self.assertIn(f"rpxprof plot: warning: {e}", p.stderr)
        p = run("plot", self.write("fine.json", base), "-o", self.path("fine.svg"), check=0)
        self.assertNotIn("warning", p.stderr)

    def test_notes_on_what_the_two_sides_time(self):
        rng = np.random.default_rng(14)
        local = report(groups_of(rng, 3, 60, 1.0))
        self.assertEqual(local["target_kind"], "shared_object")
        out = self.compare_json(local, report(groups_of(rng, 3, 60, 1.0)))
        self.assertEqual(out["notes"], [])
        # a local model against an HTTP API: the API's samples include the network
        http = report(groups_of(rng, 3, 60, 168.0), target_kind="http",
                      model_callable="http://127.0.0.1:9/predict",
                      timing_scope="http_request_wall_time: the request sent and the response read")
        out = self.compare_json(local, http)
        self.assertEqual(out["verdict"], "slower")
        self.assertEqual(len(out["notes"]), 1, out["notes"])
        self.assertIn("shared_object", out["notes"][0])
        self.assertIn("http", out["notes"][0])
        self.assertIn("network", out["notes"][0])
        text = self.compare(local, http).stdout
        self.assertIn("note: " + out["notes"][0], text)
        python = report(groups_of(rng, 3, 60, 1.0), target_kind="python", model_callable="m:f")
        self.assertIn("python", self.compare_json(local, python)["notes"][0])
        # the same file twice: compared with itself
        a = self.write("same.json", local)
        out = json.loads(run("compare", a, a, "--json", "--session-spread", "0", check=0).stdout)
        self.assertEqual(out["verdict"], "same")
        self.assertTrue(any("compared with itself" in n for n in out["notes"]), out["notes"])
        self.assertIn("compared with itself", run("compare", a, a, check=0).stdout)
        # a copy of it (another file, the same samples)
        b = self.write("copy.json", local)
        out = json.loads(run("compare", a, b, "--json", check=0).stdout)
        self.assertTrue(any("the same samples" in n for n in out["notes"]), out["notes"])
        # two folders: each row's notes, and under the Markdown table
        self.write("fb/api/m.json", local)
        self.write("fn/api/m.json", http)
        out = json.loads(run("compare", self.path("fb"), self.path("fn"), "--json", check=0).stdout)
        self.assertIn("network", out["rows"][0]["notes"][0])
        md = run("compare", self.path("fb"), self.path("fn"), check=0).stdout
        self.assertIn("\nNotes:\n- api/m: the targets are of different kinds", md)

    def test_two_folders_with_holm(self):
        rng = np.random.default_rng(7)
        factors = {("depth", "a"): 1.0, ("depth", "b"): 1.04, ("flow", "c"): 0.97, ("flow", "d"): 1.0}
        rows = {}
        for (task, model), f in factors.items():
            b = groups_of(rng, 5, 100, 1.0, between_sd=0.01)
            n = groups_of(rng, 5, 100, f, between_sd=0.01)
            rows[(task, model)] = (b, n)
            self.write(f"base/{task}/{model}.json", report(b))
            self.write(f"new/{task}/{model}.json", report(n))
        self.write("base/depth/only_base.json", report(groups_of(rng, 2, 50, 1.0)))
        self.write("new/flow/only_new.json", report(groups_of(rng, 2, 50, 1.0)))
        self.write("base/validation.json", {"schema": "rpxprof.validation/1"})
        self.write("base/depth/notes.json", {"schema": "something-else"})
        out = json.loads(run("compare", self.path("base"), self.path("new"), "--json", check=0).stdout)
        self.assertEqual([(r["task"], r["model"]) for r in out["rows"]], sorted(factors))
        self.assertEqual(out["only_in_base"], ["depth/only_base"])
        self.assertEqual(out["only_in_new"], ["flow/only_new"])
        ps = [between_ratio(*rows[(r["task"], r["model"])], "p50")[3] for r in out["rows"]]
        order = np.argsort(ps, kind="stable")
        holm, run_max = [0.0] * len(ps), 0.0
        for i, j in enumerate(order):
            run_max = max(run_max, min(1.0, (len(ps) - i) * ps[j]))
            holm[j] = run_max
        for r, p, h in zip(out["rows"], ps, holm):
            self.assertAlmostEqual(r["p_value"], p, delta=1e-12)
            self.assertAlmostEqual(r["p_value_holm"], h, delta=1e-12)
        ratios = [r["p50_ratio"] for r in out["rows"]]
        self.assertAlmostEqual(out["geomean_p50_ratio"], math.exp(np.mean(np.log(ratios))), delta=1e-12)
        md = run("compare", self.path("base"), self.path("new"), check=0).stdout
        self.assertIn("| task | model | base p50 ms | new p50 ms |", md)
        self.assertIn("| flow | c |", md)
        self.assertIn("Geometric mean of the p50 ratios", md)
        self.assertIn("Only in base: depth/only_base", md)
        run("compare", self.path("base"), self.path("new"), "--fail-on-regression", "--session-spread", "0", check=3)
        # without a spread the rows are of separate sessions: the default allowance decides none
        run("compare", self.path("base"), self.path("new"), "--fail-on-regression", check=0)
        # a row that is not comparable: listed, and exit 1
        self.write("new/flow/d.json", report(rows[("flow", "d")][1], unit="frame"))
        p = run("compare", self.path("base"), self.path("new"), check=1)
        self.assertIn("| flow | d | n/a | n/a | not comparable:", p.stdout)
        self.assertIn("unit differs", p.stderr)


class SeparateSessionsTest(CompareFiles):
    """Two reports of separate runs (issue 36, docs/statistics.md "Two reports of different
    sessions"): the ratio's interval holds the between-session spread, the default allowance
    (sigma 0.0393 on log scale, 29 df, from tests/fixtures/demo-sessions.json) when no spread
    is given; the within-session numbers are kept, labelled; a change the drift could explain
    is inconclusive, with the change that would be decided and the two ways to decide less."""

    DEFAULT_SIGMA, DEFAULT_DF = 0.0393, 29

    def widened(self, ratio, lo, hi, sigma, df):
        hb = (st.t.ppf(0.5 + CONF / 2, df) if df else st.norm.ppf(0.5 + CONF / 2)) * math.sqrt(2) * sigma
        d = math.log(ratio)
        dl, du = d - math.log(lo), math.log(hi) - d
        return math.exp(d - math.hypot(dl, hb)), math.exp(d + math.hypot(du, hb)), math.exp(math.log(1.01) + math.hypot(dl, hb)) - 1

    def test_default_allowance_makes_5_percent_inconclusive(self):
        rng = np.random.default_rng(21)
        base = groups_of(rng, 5, 200, 1.0, between_sd=0.002)
        new = groups_of(rng, 5, 200, 1.05, between_sd=0.002)
        p = self.compare(report(base), report(new), "--json", spread=None)
        out = json.loads(p.stdout)
        self.assertFalse(out["same_session"])
        self.assertEqual(out["covers"], "between-session")
        self.assertEqual(out["verdict"], "inconclusive")
        within = out["within_session"]
        self.assertEqual(within["p50_verdict"], "slower")      # what one session each would say
        self.assertEqual(within["covers"], "between-process")
        self.assertIn("one session each", within["sessions"])
        bs = out["between_session"]
        self.assertEqual(bs["source"], "default")
        self.assertAlmostEqual(bs["sigma_between_log"], self.DEFAULT_SIGMA, delta=1e-12)
        self.assertEqual(bs["df"], self.DEFAULT_DF)
        self.assertEqual(len(bs["to_decide_smaller"]), 2)
        self.assertIn("--history", bs["to_decide_smaller"][0])
        self.assertIn("compare --run", bs["to_decide_smaller"][1])
        for name in ("p50", "p95", "mean"):
            ratio, lo, hi, _ = between_ratio(base, new, name)
            self.assertAlmostEqual(within[f"{name}_ratio_ci"][0], lo, delta=1e-9 * lo, msg=name)
            self.assertAlmostEqual(within[f"{name}_ratio_ci"][1], hi, delta=1e-9 * hi, msg=name)
            wlo, whi, dec = self.widened(ratio, lo, hi, self.DEFAULT_SIGMA, self.DEFAULT_DF)
            self.assertAlmostEqual(out[f"{name}_ratio_ci"][0], wlo, delta=1e-9, msg=name)
            self.assertAlmostEqual(out[f"{name}_ratio_ci"][1], whi, delta=1e-9, msg=name)
            if name == "p50":
                self.assertAlmostEqual(bs["decidable_change"], dec, delta=1e-9)
        self.assertGreater(bs["decidable_change"], 0.10)
        self.assertLess(bs["decidable_change"], 0.16)
        self.assertIn("different sessions", p.stderr)
        self.assertIn("compare --run", p.stderr)
        self.compare(report(base), report(new), "--fail-on-regression", check=0, spread=None)
        # 30 % slower is beyond what the drift explains: decided without a history
        big = groups_of(rng, 5, 200, 1.3, between_sd=0.002)
        self.assertEqual(self.compare_json(report(base), report(big), spread=None)["verdict"], "slower")
        self.compare(report(base), report(big), "--fail-on-regression", check=3, spread=None)
        # the same report against itself is not "same" either: the drift is +-11 %
        self.assertEqual(self.compare_json(report(base), report(base), spread=None)["verdict"], "inconclusive")

    def test_no_p50_interval_says_so_in_words(self):
        """Too few calls in a process for a p50 interval (CI's fuzz seeds: 3 calls in 3
        processes): the warning says the decidable change is not known, never "nan %"."""
        rng = np.random.default_rng(24)
        base = groups_of(rng, 3, 1, 1.0)
        new = groups_of(rng, 5, 200, 1.05, between_sd=0.002)
        p = self.compare(report(base), report(new), "--json", spread=None)
        out = json.loads(p.stdout)
        self.assertIsNone(out["between_session"]["decidable_change"])
        self.assertIn("different sessions", p.stderr)
        self.assertNotIn("nan", p.stderr.lower())
        self.assertIn("not known (no p50 interval)", p.stderr)

    def test_a_spread_from_history_widens_by_its_own_sigma(self):
        rng = np.random.default_rng(22)
        base = groups_of(rng, 5, 200, 1.0, between_sd=0.002)
        new = groups_of(rng, 5, 200, 1.05, between_sd=0.002)
        out = self.compare_json(report(base), report(new), spread="0.5%")
        sigma = math.log1p(0.005)
        self.assertEqual(out["between_session"]["source"], "option")
        self.assertAlmostEqual(out["between_session"]["sigma_between_log"], sigma, delta=1e-12)
        ratio, lo, hi, _ = between_ratio(base, new, "p50")
        wlo, whi, _ = self.widened(ratio, lo, hi, sigma, None)
        # no df: the normal quantile (rpxprof takes t on 1e6 df: 1e-6 relative)
        self.assertAlmostEqual(out["p50_ratio_ci"][0], wlo, delta=1e-6)
        self.assertAlmostEqual(out["p50_ratio_ci"][1], whi, delta=1e-6)
        self.assertEqual(out["verdict"], "slower")     # a quiet machine's record decides 5 %
        for bad in ("-1", "x", "2%%", "200%"):
            p = self.compare(report(base), report(new), check=2, spread=bad)
            self.assertIn("--session-spread", p.stderr)


class SameSessionIdTest(CompareFiles):
    """Two reports with the same session.id are one session (issue 36 review): a report
    against itself is compared without the between-session rule, with no warning that
    they were measured in different sessions."""

    def test_a_report_against_itself_is_one_session(self):
        rng = np.random.default_rng(23)
        rep = report(groups_of(rng, 5, 200, 1.0, between_sd=0.002))
        self.assertIsInstance(rep.get("session"), dict)
        path = self.write("x.json", rep)
        p = self.compare(path, path, "--json", spread=None)
        out = json.loads(p.stdout)
        self.assertTrue(out["same_session"])
        self.assertNotIn("between_session", out)
        self.assertNotIn("different sessions", p.stderr)
        self.assertEqual(out["verdict"], "same")
        # another report of that one session: the same
        other = report(groups_of(rng, 5, 200, 1.0, between_sd=0.002))
        other["session"] = rep["session"]
        out = self.compare_json(rep, other, spread=None)
        self.assertTrue(out["same_session"])
        # and a report of another session is widened by the drift
        third = report(groups_of(rng, 5, 200, 1.0, between_sd=0.002))
        out = self.compare_json(rep, third, spread=None)
        self.assertFalse(out["same_session"])
        self.assertIn("between_session", out)


class CompareRunMessagesTest(TempDirTest):
    """Every message of compare --run names only options compare --run has (it has no --output
    and no --force: the runner's messages about the reports' place name --out-dir)."""

    def setUp(self):
        super().setUp()
        self.npz = self.path("x.npz")
        run("inputs", "make", self.npz, "rgb=4x4x3:uint8=1", check=0)
        self.options = set(re.findall(r"--[a-z][a-z0-9-]*", run("compare", "--run", "--help", check=0).stdout))
        self.assertIn("--out-dir", self.options)

    def compare_run(self, *args, model="rpxprof-demo:demo_noop", inputs=None, check=None):
        return run("compare", "--run", "-m", model, "-m", model, "--inputs", inputs or self.npz,
                   "--repeats", "12", "--processes", "2", "--warmup", "1", *args, check=check)

    def assert_own_options(self, p):
        named = set(re.findall(r"--[a-z][a-z0-9-]*", p.stderr))
        self.assertLessEqual(named, self.options, p.stderr)

    def test_the_reports_place(self):
        od = self.path("od")
        os.makedirs(od)
        with open(os.path.join(od, "base.json"), "w") as f:
            f.write("hello\n")
        p = self.compare_run("--out-dir", od, check=1)
        self.assertIn("exists and is not a file rpxprof wrote", p.stderr)
        self.assertIn("choose another --out-dir path or move it out of the way", p.stderr)
        self.assert_own_options(p)
        with open(os.path.join(od, "base.json"), "rb") as f:
            self.assertEqual(f.read(), b"hello\n")  # left alone
        # reports of rpxprof there are replaced; a read-only one is not
        os.remove(os.path.join(od, "base.json"))
        self.compare_run("--out-dir", od, check=0)
        os.chmod(os.path.join(od, "new.json"), 0o444)
        p = self.compare_run("--out-dir", od, check=1)
        self.assertIn("is read-only", p.stderr)
        self.assert_own_options(p)
        # a folder where a report goes
        od2 = self.path("od2")
        os.makedirs(os.path.join(od2, "new.json"))
        p = self.compare_run("--out-dir", od2, check=1)
        self.assertIn("new.json: is a folder, not a report", p.stderr)
        self.assert_own_options(p)
        # the inputs where a report goes: never replaced
        od3 = self.path("od3")
        os.makedirs(od3)
        with open(self.npz, "rb") as f, open(os.path.join(od3, "base.json"), "wb") as g:
            g.write(f.read())
        # a file the command reads named as an output: a bad command line (exit 2), as in run
        p = self.compare_run("--out-dir", od3, inputs=os.path.join(od3, "base.json"), check=2)
        self.assertIn("this command reads", p.stderr)
        self.assert_own_options(p)

    def test_a_model_that_writes_its_inputs(self):
        x = self.path("x_pattern.npz")
        np.savez(x, x=((np.arange(256) * 7 + 3) % 256).astype(np.uint8))  # pristine_edit's pattern
        p = self.compare_run(model=f"{MODELS}:pristine_edit", inputs=x, check=1)
        self.assertIn("--writable-inputs", p.stderr)
        self.assert_own_options(p)
        self.compare_run("--writable-inputs", model=f"{MODELS}:pristine_edit", inputs=x, check=0)


class CompareCarriesWarningsTest(TempDirTest):
    """issue 38 item 4: a verdict carries the warnings of the reports it was made from
    (their system_card.warnings), deduplicated, each naming its side: printed, in the
    JSON and on the HTML page."""
    write = CompareTest.write
    compare = CompareTest.compare

    LOAD = "load 6.00 on 2 CPUs: Other processes took 70% of the time of the 2 CPUs this process may use"

    def sides(self):
        rng = np.random.default_rng(7)
        base = report(groups_of(rng, 5, 100, 1.0, between_sd=0.02))
        new = report(groups_of(rng, 5, 100, 1.0, between_sd=0.02))
        base["system_card"]["warnings"] = [self.LOAD, "CPU governor 'powersave'", "CPU governor 'powersave'"]
        new["system_card"]["warnings"] = [self.LOAD, "hypervisor: timings include a virtual machine's"]
        return base, new

    def test_two_reports(self):
        base, new = self.sides()
        html = self.path("cmp.html")
        p = self.compare(base, new, "--json", "--html", html)
        out = json.loads(p.stdout)
        want = ["base and new: " + self.LOAD, "base: CPU governor 'powersave'",
                "new: hypervisor: timings include a virtual machine's"]
        for w in want:
            self.assertEqual(out["warnings"].count(w), 1, out["warnings"])
            self.assertIn("rpxprof compare: warning: " + w, p.stderr)
        self.assertEqual(len([w for w in out["warnings"] if self.LOAD in w]), 1, out["warnings"])
        with open(html) as f:
            page = f.read()
        self.assertIn("base and new: load 6.00", page)
        self.assertIn("new: hypervisor: timings include", page)

    def test_compare_run(self):
        """compare --run: both kept reports hold the warning a snapshot system card gives
        (RPX_SYSROOT); the verdict prints it once, as both sides', and keeps it."""
        npz = self.path("x.npz")
        run("inputs", "make", npz, "rgb=4x4x3:uint8=1", check=0)
        env = {"RPX_SYSROOT": os.path.join(SOURCE, "tests", "fixtures", "sysroots", "broken-partial")}
        p = run("compare", "--run", "-m", "rpxprof-demo:demo_noop", "-m", "rpxprof-demo:demo_noop",
                "--inputs", npz, "--repeats", "12", "--processes", "2", "--warmup", "1", "--json",
                "--out-dir", self.path("kept"), env=env, check=0)
        out = json.loads(p.stdout)
        w = [x for x in out["warnings"] if "RPX_SYSROOT is set" in x]
        self.assertEqual(len(w), 1, out["warnings"])
        self.assertTrue(w[0].startswith("base and new: RPX_SYSROOT is set"), w)
        self.assertEqual(p.stderr.count("rpxprof compare: warning: base and new: RPX_SYSROOT is set"), 1,
                         p.stderr)

    def test_two_folders(self):
        base, new = self.sides()
        for side, rep in (("a", base), ("b", new)):
            r = copy.deepcopy(rep)
            r["task"], r["model_name"] = "t", "m"
            self.write(os.path.join(side, "t", "m.json"), r)
        p = run("compare", self.path("a"), self.path("b"), "--json", check=0)
        self.assertIn("rpxprof compare: warning: base and new: " + self.LOAD, p.stderr)
        self.assertIn("base and new: " + self.LOAD, p.stdout)


if __name__ == "__main__":
    main()
