"""Shared helpers for the CLI tests: paths from CTest's environment, running the
real binary, making inputs with numpy, validating reports against the schema."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BIN = os.environ.get("RPX_BIN", "build/rpxprof")
BUILD = os.environ.get("RPX_BUILD", "build")
SOURCE = os.environ.get("RPX_SOURCE", ".")
SANITIZED = os.environ.get("RPX_SANITIZED") == "1"
MODELS = os.path.join(BUILD, "test-models", "librpxtest_models.so")

# Every other RPX_* switch (rpxprof's own, the test models' RPX_TEST_*, the stubs'
# RPX_STUB_*, the examples' RPX_OPENCV_*, ...) is the tests' to set, never the caller's
# (CTest unsets rpxprof's own too: tests/CMakeLists.txt, RPX_TEST_ENV_UNSET). The paths
# of the machine's CUDA, NVML and CUPTI libraries describe the machine, and stay.
_HARNESS = {"RPX_BIN", "RPX_BUILD", "RPX_SOURCE", "RPX_FIXTURES", "RPX_SANITIZED", "RPX_PYTHON",
            "RPX_CUDA_LIBRARY", "RPX_NVML_LIBRARY", "RPX_CUPTI_LIBRARY"}
for _k in [k for k in os.environ if k.startswith("RPX_") and k not in _HARNESS]:
    del os.environ[_k]


def run(*args, env=None, check=None, timeout=300, cwd=None):
    """Run rpxprof; returns CompletedProcess with text output."""
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, env=e,
                       timeout=timeout, stdin=subprocess.DEVNULL, cwd=cwd)
    if check is not None and p.returncode != check:
        raise AssertionError(f"rpxprof {' '.join(map(str, args))}: exit {p.returncode}, "
                             f"expected {check}\nstdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def run_report(test, *args, env=None, check=0, timeout=300, cwd=None):
    """`rpxprof run ARGS --output F` with F new for every call (a report left by an
    earlier run can never be mistaken for this one's). Returns (process, report
    or None, report text or None)."""
    test.reports_written = getattr(test, "reports_written", 0) + 1
    out = os.path.join(test.tmp, f"report{test.reports_written}", "r.json")
    p = run("run", *args, "--output", out, env=env, check=check, timeout=timeout, cwd=cwd)
    if not os.path.exists(out):
        return p, None, None
    with open(out) as f:
        text = f.read()
    return p, json.loads(text), text


def interrupted_run(test, *args, after_s=1.0):
    """Start `rpxprof run ARGS --output F`, send SIGINT after `after_s` seconds.
    Returns (exit code, stderr, report)."""
    import signal
    import time
    out = os.path.join(test.tmp, "interrupted", "r.json")
    proc = subprocess.Popen([BIN, "run", *map(str, args), "--output", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after_s)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    with open(out) as f:
        return proc.returncode, err, json.load(f)


def load_schema(name):
    with open(os.path.join(SOURCE, "schemas", name)) as f:
        return json.load(f)


def validate(report, schema_name):
    """Validate against schemas/NAME; every schema in schemas/ can be $ref'd by its $id."""
    import jsonschema
    store = {}
    for name in os.listdir(os.path.join(SOURCE, "schemas")):
        if name.endswith(".json"):
            s = load_schema(name)
            if "$id" in s:
                store[s["$id"]] = s
    schema = load_schema(schema_name)
    resolver = jsonschema.RefResolver.from_schema(schema, store=store)
    jsonschema.Draft202012Validator(schema, resolver=resolver).validate(report)


def validate_profile(report):
    validate(report, "profile.json")


def assert_profile_rejects(test, report, change):
    """`change` applied to a copy of a valid report must make it invalid."""
    import copy
    import jsonschema
    r = copy.deepcopy(report)
    change(r)
    with test.assertRaises(jsonschema.ValidationError):
        validate_profile(r)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="rpxtest-")
        self.tmp = self._tmp.name
        # a cleanup, not tearDown: cleanups run last in, first out, so the servers a test
        # starts (and stops with addCleanup) are stopped before their folder is removed
        self.addCleanup(self._tmp.cleanup)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)


def main():
    unittest.main(verbosity=2)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def save_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def children(pid):
    """PIDs of the direct children of `pid` (from /proc)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def alive(pid):
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def save_matmul_onnx(path):
    """A one-node ONNX model written by the onnx package: x[n, 64] @ w[64, 32] (w all ones)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    w = helper.make_tensor("w", TensorProto.FLOAT, [64, 32], np.ones(64 * 32, np.float32))
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 32])], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path
