"""The run options' table read the same way by every front end (issue 35 §2).

`rpxprof run --list-options --json` gives the table (src/runner/options.c): each option's
name, key, kind, range and the front ends that take it, with their spelling (`--max-time`
on the command line, `max_time` in a manifest, `max_time=` in Python). This test walks
it: every option is set from the command line (`rpxprof run`), a batch manifest and
Python's keywords (`rpxprof._core.profile`, which `rpxprof.profile` hands them to), and

- a front end that does not take it refuses it by name;
- a good value is accepted by every front end that takes it (proved without running
  anything: a bad --repeats beside it is the only thing refused, in the same words);
- a bad value (out of range, an unknown choice, an empty text) is refused by each in the
  same words, but for the option's spelling;
- a rule that combines options (--max-time needs --target-precision; --rtol needs
  --check-outputs) is worded the same, in each front end's spelling.

Nothing is measured: every case is refused before a call, so the test is fast."""
import json
import os
import re
import subprocess
import sys

from common import BUILD, SANITIZED, TempDirTest, main, run

PY_CASES = r'''
import json, sys
import rpxprof
from rpxprof import _core
out = []
for kw in json.load(sys.stdin):
    try:
        _core.profile(lambda **a: None, "t:fn", **kw)
        out.append("(accepted)")
    except Exception as e:  # RpxprofError, TypeError: the message is what is compared
        out.append("%s: %s" % (type(e).__name__, e))
print(json.dumps(out))
'''


def table():
    p = run("run", "--list-options", "--json", check=0)
    return json.loads(p.stdout)


def bad_value(o):
    """A value the option refuses, or None (a flag has none; gpus is an array in a
    manifest, so its text is compared on the command line and in Python only)."""
    if o["kind"] == "flag":
        return None
    if o["kind"] == "int":
        return int(o["max"]) + 1 if o["max"] is not None and o["max"] < 1e15 else int(o["min"]) - 1
    if o["kind"] in ("number", "duration", "share"):
        return -1
    if o["kind"] == "enum":
        return "bogus"
    return ""


def good_value(o):
    if o["kind"] == "flag":
        return True
    if o["kind"] == "enum":
        return o["choices"][0]
    if o["kind"] == "text":
        return "0" if o["key"] == "cpus" else "x"
    lo, hi = o["min"], o["max"] if o["max"] is not None else float("inf")
    for v in (1, hi, lo + 1):
        if lo <= v <= hi and not (o["min_excluded"] and v == lo):
            return int(v) if o["kind"] == "int" else float(v)
    raise AssertionError(o)


def cli_args(o, v):
    if v is True:
        return ["--" + o["name"]]
    return ["--" + o["name"], str(v)]


def manifest_value(o, v):
    if o["key"] == "gpus":
        return [v]
    return v


def norm(msg, fe, opts):
    """The message with each named option's spelling (its first one) replaced by <key>, and a
    manifest's 'FILE: WHERE.' (or 'FILE: models[0] (task 't'): ') prefix removed."""
    msg = msg.strip().splitlines()[-1] if msg.strip() else ""
    msg = re.sub(r"^rpxprof [a-z]+: error: ", "", msg)
    msg = re.sub(r"^(RpxprofError|TypeError): ", "", msg)
    if fe == "manifest":
        msg = re.sub(r"^.*?m\.json: (defaults\.|tasks\.t\.|models\[0\]\.|"
                     r"models\[0\] \(task 't'\): )", "", msg)
    for o in opts:
        if fe == "cli":
            msg = re.sub(r"(?<![\w-])--%s(?![\w-])" % re.escape(o["name"]), "<%s>" % o["key"], msg,
                         count=1)
        else:
            msg = re.sub(r"(?<![\w.-])%s=?(?![\w-])" % re.escape(o["key"]), "<%s>" % o["key"], msg,
                         count=1)
    return msg


class OptionsTableTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.options = table()
        cls.by_key = {o["key"]: o for o in cls.options}

    def setUp(self):
        super().setUp()
        import numpy as np
        self.npz = self.path("in.npz")
        np.savez(self.npz, x=np.zeros(4, np.float32))
        self.cli, self.man, self.py = [], [], []   # (case id, args) per front end

    # ---- the three front ends, each given a list of cases ----------------------------
    def run_cli(self, args):
        p = run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", self.npz, "--output",
                self.path("never.json"), *args)
        self.assertFalse(os.path.exists(self.path("never.json")), args)
        return p.returncode, p.stderr

    def run_manifest(self, level_values):
        """level_values: {"defaults": {...}, "model": {...}, "task": {...}}"""
        m = {"schema": "rpxprof.manifest/1", "defaults": dict(level_values.get("defaults", {})),
             "tasks": {"t": dict({"inputs": "in.npz"}, **level_values.get("task", {}))},
             "models": [dict({"name": "m", "model": "rpxprof-demo:demo_noop", "tasks": ["t"]},
                             **level_values.get("model", {}))]}
        with open(self.path("m.json"), "w") as f:
            json.dump(m, f)
        p = run("batch", self.path("m.json"), "--out-dir", self.path("out"))
        self.assertFalse(os.path.exists(self.path("out", "t", "m.json")), level_values)
        return p.returncode, p.stderr

    def run_python(self, cases):
        env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
        if SANITIZED:  # the sanitized extension in Debian's python3: its runtimes preloaded
            libs = [subprocess.run(["cc", "-print-file-name=" + n], capture_output=True,
                                   text=True).stdout.strip() for n in ("libasan.so", "libubsan.so")]
            if not all(os.path.isabs(x) and os.path.exists(x) for x in libs):
                self.skipTest("the sanitized extension needs the ASan/UBSan runtimes "
                              "preloaded into python3, and cc does not name them")
            env.update(LD_PRELOAD=":".join(libs), ASAN_OPTIONS="detect_leaks=0")
        p = subprocess.run([sys.executable, "-c", PY_CASES], input=json.dumps(cases),
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def levels(self, o, v):
        lvl = o["manifest_level"] or "defaults,model"
        where = {"model": "model", "task": "task"}.get(lvl, "defaults")
        return {where: {o["key"]: manifest_value(o, v)}}

    # ---- the walk -------------------------------------------------------------------
    def test_table_is_walked(self):
        """Every option is in the table with its front ends; `rpxprof run` takes all."""
        self.assertGreater(len(self.options), 30)
        for o in self.options:
            self.assertEqual(o["front_ends"]["cli"], "--" + o["name"])
            if "manifest" in o["front_ends"]:
                self.assertEqual(o["front_ends"]["manifest"], o["key"])
            if "python" in o["front_ends"]:
                self.assertEqual(o["front_ends"]["python"], o["key"] + "=")
        for key in ("warmup", "repeats", "processes", "device", "cpus", "unit"):
            self.assertEqual(set(self.by_key[key]["front_ends"]),
                             {"cli", "manifest", "python", "compare"}, key)
        # compare --run takes --max-time as --auto's budget (it has no --target-precision)
        self.assertEqual(set(self.by_key["max_time"]["front_ends"]), {"cli", "python", "compare"})

    def test_refused_by_name(self):
        """A front end that does not take an option names it: a manifest's unknown key,
        Python's unknown keyword."""
        py_cases, py_keys = [], []
        for o in self.options:
            v = good_value(o)
            if "manifest" not in o["front_ends"]:
                code, err = self.run_manifest({"defaults": {o["key"]: manifest_value(o, v)}})
                self.assertEqual(code, 1, (o["key"], err))
                self.assertIn("unknown key '%s' in defaults" % o["key"], err)
            if "python" not in o["front_ends"]:
                py_cases.append({o["key"]: v})
                py_keys.append(o["key"])
        for key, msg in zip(py_keys, self.run_python(py_cases)):
            self.assertEqual(msg, "TypeError: profile(): unknown keyword '%s'" % key)

    def test_good_values_accepted_alike(self):
        """A good value of every option passes every front end that takes it: the one
        refusal is the bad --repeats beside it, in the same words everywhere."""
        py_cases, py_opts, checked = [], [], 0
        for o in self.options:
            v = good_value(o)
            other = self.by_key["warmup" if o["key"] == "repeats" else "repeats"]
            bad = -1 if other["key"] == "warmup" else 0
            code, err = self.run_cli(cli_args(o, v) + ["--" + other["name"], str(bad)])
            self.assertEqual(code, 2, (o["name"], err))
            want = norm(err, "cli", [other])
            self.assertEqual(want, "<%s> '%d': give %s" % (other["key"], bad, other["range"]),
                             (o["name"], err))
            if "manifest" in o["front_ends"]:
                lv = self.levels(o, v)
                lv.setdefault("defaults", {})[other["key"]] = bad
                code, err = self.run_manifest(lv)
                self.assertEqual(code, 1, (o["key"], err))
                self.assertEqual(norm(err, "manifest", [other]), want, o["key"])
            if "python" in o["front_ends"]:
                py_cases.append({o["key"]: v, other["key"]: bad})
                py_opts.append((o, other, want))
            checked += 1
        for (o, other, want), msg in zip(py_opts, self.run_python(py_cases)):
            self.assertEqual(norm(msg, "python", [other]), want, (o["key"], msg))
        self.assertEqual(checked, len(self.options))

    def test_bad_values_refused_alike(self):
        """Out of range, an unknown choice, an empty text: the same words from the command
        line, a manifest and Python, but for the option's spelling."""
        py_cases, py_opts, compared = [], [], 0
        for o in self.options:
            v = bad_value(o)
            if v is None:
                continue
            code, err = self.run_cli(cli_args(o, v))
            self.assertEqual(code, 2, (o["name"], err))
            want = norm(err, "cli", [o])
            self.assertIn(o["range"], want, o["name"])
            self.assertTrue(want.startswith("<%s> " % o["key"]), (o["name"], want))
            if "manifest" in o["front_ends"] and o["key"] != "gpus":
                code, err = self.run_manifest(self.levels(o, v))
                self.assertEqual(code, 1, (o["key"], err))
                self.assertEqual(norm(err, "manifest", [o]), want, o["key"])
                compared += 1
            if "python" in o["front_ends"]:
                py_cases.append(dict({"processes": 1}, **{o["key"]: v}))
                py_opts.append((o, want))
        for (o, want), msg in zip(py_opts, self.run_python(py_cases)):
            self.assertEqual(norm(msg, "python", [o]), want, (o["key"], msg))
            compared += 1
        self.assertGreater(compared, 30)

    def test_compare_run_alike(self):
        """compare --run takes the options its flag names, with the same words (its
        --processes has its own floor of 2: the ratio's interval is between processes);
        the others are unknown options there."""
        seen = 0
        for o in self.options:
            args = ["compare", "--run", "--model", "rpxprof-demo:demo_noop", "--model",
                    "rpxprof-demo:demo_noop", "--inputs", self.npz]
            v = bad_value(o)
            if "compare" not in o["front_ends"]:
                p = run(*args, *cli_args(o, good_value(o)))
                self.assertEqual(p.returncode, 2, (o["name"], p.stderr))
                self.assertIn("unknown option '--%s'" % o["name"], p.stderr)
                continue
            if v is None or o["key"] == "processes":
                continue
            p = run(*args, *cli_args(o, v))
            self.assertEqual(p.returncode, 2, (o["name"], p.stderr))
            self.assertEqual(p.stderr.replace("rpxprof compare:", "rpxprof run:"),
                             self.run_cli(cli_args(o, v))[1], o["name"])
            seen += 1
        self.assertGreater(seen, 5)

    def test_combination_rules_alike(self):
        """A rule that combines options, worded once (rpx_runner_config_check), in each
        front end's spelling; where a front end does not take an option it names it."""
        k = self.by_key
        # --max-time bounds --target-precision: the command line and Python; a manifest
        # takes neither and says so
        code, err = self.run_cli(["--max-time", "5"])
        self.assertEqual(code, 2, err)
        self.assertIn("--max-time bounds --target-precision; give both", err)
        want_max = norm(err, "cli", [k["max_time"], k["target_precision"]])
        code, err = self.run_manifest({"defaults": {"max_time": 5}})
        self.assertIn("unknown key 'max_time' in defaults", err)
        # --rtol compares outputs: every front end
        code, err = self.run_cli(["--rtol", "0.1"])
        self.assertEqual(code, 2, err)
        want_rtol = norm(err, "cli", [k["rtol"], k["check_outputs"]])
        self.assertEqual(want_rtol, "<rtol> compares outputs; add <check_outputs>")
        code, err = self.run_manifest({"defaults": {"rtol": 0.1}})
        self.assertEqual(code, 1, err)
        self.assertIn("m.json: models[0] (task 't'): rtol compares outputs; add check_outputs",
                      err)
        self.assertEqual(norm(err, "manifest", [k["rtol"], k["check_outputs"]]), want_rtol)
        m1, m2 = self.run_python([{"max_time": 5.0, "processes": 2},
                                  {"rtol": 0.1, "processes": 1}])
        self.assertEqual(m1, "RpxprofError: max_time= bounds target_precision=; give both")
        self.assertEqual(norm(m1, "python", [k["max_time"], k["target_precision"]]), want_max)
        self.assertEqual(norm(m2, "python", [k["rtol"], k["check_outputs"]]), want_rtol)


if __name__ == "__main__":
    main()
