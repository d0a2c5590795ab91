"""The rpxprof package (python/, the extension rpxprof._core): profile through the runner
with dict / NPZ / list inputs, writable and read-only inputs, exceptions, forked workers
(after torch ran), Ctrl-C, Report.write's guard, and the thin wrappers cost / roofline /
system_card / gpus; the pip install into a virtualenv without network.
Run by CTest with PYTHONPATH=<build>/python (tests/python/python.cmake)."""
import functools
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import rpxprof

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import common  # noqa: E402  (validate_profile, save_matmul_onnx)

SOURCE = os.environ.get("RPX_SOURCE", os.path.join(HERE, "..", ".."))
BIN = os.environ.get("RPX_BIN")
SANITIZED = os.environ.get("RPX_SANITIZED") == "1"
FRAME = {"rgb": np.full((8, 8, 3), 7, np.uint8)}


def busywait_2ms(rgb):
    end = time.perf_counter() + 0.002
    while time.perf_counter() < end:
        pass


def noop(rgb):
    return None


def edits_in_place(rgb):
    # every call must see the pristine bytes, then edits them (as `rgb /= 255` does)
    if not (rgb == 7).all():
        raise AssertionError("the inputs were not restored: %r" % rgb.ravel()[:4])
    rgb += 1


def raises(rgb):
    raise RuntimeError("distinctive failure 4711")


def run_script(code, env_extra=None, timeout=300):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def test_busywait_is_measured_and_the_report_validates():
    r = rpxprof.profile(busywait_2ms, FRAME, warmup=2, repeats=40, name="tests:busywait")
    assert isinstance(r, dict) and isinstance(r, rpxprof.Report)
    assert r["status"] == "complete"
    assert r["target_kind"] == "python"
    assert r["model_callable"] == "tests:busywait"
    assert r["inputs_file"] == "<dict>"
    assert len(r["latency_samples_ms"]) == 40
    # never an upper bound: a busy sanitized machine only makes it slower
    assert r["latency"]["p50_ms"] >= 2.0
    assert r["python"]["function"] == "busywait_2ms"
    assert "read-only" in r["python"]["inputs"]
    common.validate_profile(r)


def test_npz_path_and_default_name(tmp_path):
    path = str(tmp_path / "in.npz")
    np.savez(path, **FRAME)
    r = rpxprof.profile(noop, path, warmup=1, repeats=20)
    assert r["inputs_file"] == path
    assert r["model_callable"] == __name__ + ":noop"
    common.validate_profile(r)


def test_list_is_distinct_samples():
    seen = []

    def record(rgb):
        seen.append(int(rgb[0, 0, 0]))

    samples = [{"rgb": np.full((8, 8, 3), v, np.uint8)} for v in (1, 2, 3)]
    r = rpxprof.profile(record, samples, warmup=0, repeats=30)
    assert r["distinct_samples"] == 3
    assert sorted(set(seen)) == [1, 2, 3]
    assert seen[:3] == [1, 2, 3]  # sample-major
    common.validate_profile(r)


def test_scalar_and_fortran_inputs_keep_their_shape():
    seen = []

    def record(s, m):
        seen.append((s.shape, float(s), m.shape, m.flags["C_CONTIGUOUS"], float(m[1, 0])))

    m = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    r = rpxprof.profile(record, {"s": np.float32(2.5), "m": m}, warmup=0, repeats=3)
    assert r["status"] == "complete"
    # a 0-d array stays 0-d (np.ascontiguousarray made it (1,)); the rest arrives in C order
    assert seen[0] == ((), 2.5, (2, 3), True, 3.0)


def test_writable_inputs_are_restored_before_every_call():
    r = rpxprof.profile(edits_in_place, FRAME, warmup=3, repeats=50, writable_inputs=True)
    assert r["status"] == "complete"
    assert "writable" in r["python"]["inputs"]
    common.validate_profile(r)


def test_read_only_inputs_refusal_names_the_option():
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(edits_in_place, FRAME, warmup=1, repeats=5)
    text = str(e.value)
    assert "read-only" in text
    assert "--writable-inputs" in text and "writable_inputs=True" in text
    assert e.value.code == 1


def test_exception_in_fn_carries_the_traceback():
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(raises, FRAME, warmup=1, repeats=5)
    text = str(e.value)
    assert "Traceback" in text and "distinctive failure 4711" in text
    assert "in raises" in text
    assert e.value.code == 1


def test_refusals_carry_the_cli_exit_code():
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(noop, FRAME, processes=0)
    assert e.value.code == 2
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(noop, {})  # fn() of no arguments (issue 29); noop needs rgb
    assert e.value.code == 2 and "does not accept the arguments given" in str(e.value)
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(noop, FRAME, timeout=5)
    assert e.value.code == 2 and "processes" in str(e.value)
    for bad in ({"device": "tpu"}, {"repeats": 0}, {"warmup": -1}, {"processes": 101},
                {"unit": ""}):
        with pytest.raises(rpxprof.RpxprofError) as e:
            rpxprof.profile(noop, FRAME, **bad)
        assert e.value.code == 2 and list(bad)[0] in str(e.value), (bad, str(e.value))
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.roofline(1e9, 1e8, gpus=["no-such-gpu"])
    assert e.value.code == 2 and "no-such-gpu" in str(e.value)


def test_keywords_and_the_options_table_agree():
    """profile()'s keywords that are run options have the defaults of the one table of a
    run's options (src/runner/options.c), which the command line and manifests share, and
    a bad value is refused in the table's words with the keyword's name."""
    import inspect
    table = {o["key"]: o for o in rpxprof._core.run_options()}
    assert table["repeats"]["default"] == 1000 and table["warmup"]["default"] == 10
    assert table["device"]["choices"] == ["cpu", "cuda"]
    assert table["call_timeout"]["name"] == "call-timeout"
    sig = inspect.signature(rpxprof.profile).parameters
    # the table's options that Python takes (front_ends: python); a keyword of the package's
    # own of the same name (layers=: the depth of per-module times, not the CLI's --layers N
    # profiled calls) is not one of them
    shared = [k for k in sig if k in table and "python" in table[k]["front_ends"]]
    assert set(shared) >= {"warmup", "repeats", "device", "precision", "unit", "processes",
                           "cost", "flops", "params", "gpus", "timeout", "call_timeout"}
    for k in shared:
        if k in ("repeats", "max_time", "target_precision"):
            # None: auto-ranging (issue 29): 1000 calls for the old dict form; 10 s for the
            # whole call and +-1 % (docs/python.md), not the CLI's stopping rule's 60 s
            assert sig[k].default is None
            continue
        assert sig[k].default == table[k]["default"], (k, sig[k].default, table[k]["default"])
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(noop, FRAME, repeats=0)
    assert str(e.value).startswith("repeats '0': " + "give " + table["repeats"]["range"])


def test_forked_workers_after_torch_ran():
    # in a child interpreter, so that a hang fails this test (timeout) instead of blocking
    p = run_script("""
        import numpy as np, torch, rpxprof
        torch.set_num_threads(2)
        a = torch.randn(512, 512)
        (a @ a).sum()
        def mm(x):
            t = torch.from_numpy(x)
            return (t @ t).sum()
        r = rpxprof.profile(mm, {"x": np.ones((64, 64), np.float32)}, warmup=2, repeats=40,
                            processes=2)
        print(r["status"], r["processes"]["count"] if isinstance(r.get("processes"), dict)
              else r.get("processes"), r["python"]["torch_version"] is not None)
    """, timeout=240)
    assert p.returncode == 0, p.stderr
    status, count, torch_seen = p.stdout.split()
    assert status == "complete" and count == "2" and torch_seen == "True"


def test_ctrl_c_keeps_the_report_and_raises_keyboard_interrupt():
    code = """
        import sys, time, numpy as np, rpxprof
        def spin(rgb):
            end = time.perf_counter() + 0.001
            while time.perf_counter() < end: pass
        print("ready", flush=True)
        try:
            rpxprof.profile(spin, {"rgb": np.zeros(3)}, repeats=1000000)
        except KeyboardInterrupt as e:
            r = e.report
            print(type(e).__name__, r["status"], len(r["latency_samples_ms"]) > 0, e.code)
    """
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out.split() == ["Interrupted", "interrupted", "True", "130"]


def test_report_write_goes_through_the_output_guard(tmp_path):
    r = rpxprof.profile(noop, FRAME, warmup=1, repeats=10)
    out = tmp_path / "sub" / "r.json"
    r.write(out)
    with open(out) as f:
        again = json.load(f)
    assert again == json.loads(json.dumps(r))
    common.validate_profile(again)
    r.write(out)  # an rpxprof report of the same kind is replaced
    precious = tmp_path / "notes.txt"
    precious.write_text("mine\n")
    with pytest.raises(rpxprof.RpxprofError) as e:
        r.write(precious)
    assert "force=True" in str(e.value) and "--force" not in str(e.value)
    assert precious.read_text() == "mine\n"
    r.write(precious, force=True)
    assert json.loads(precious.read_text())["schema"] == "rpxprof.profile/1"


def _export_tiny(buf_or_path):
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3)
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(self.conv(x).mean(dim=(2, 3)))

    torch.manual_seed(0)
    torch.onnx.export(Tiny().eval(), torch.zeros(1, 3, 16, 16), buf_or_path, opset_version=13)


def test_cost_of_bytes_equals_cost_of_the_file_and_the_cli(tmp_path):
    pytest.importorskip("torch")
    buf = io.BytesIO()
    _export_tiny(buf)
    path = str(tmp_path / "tiny.onnx")
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    a, b = rpxprof.cost(buf.getvalue()), rpxprof.cost(path)
    for k in ("params", "macs", "flops", "traffic_bytes_unfused", "by_op"):
        assert a[k] == b[k], k
    assert a["params"] == 3 * 8 * 9 + 8 + 8 * 4 + 4
    assert a["flops"] > 0
    if BIN:
        cli = json.loads(subprocess.run([BIN, "cost", path, "--json"], capture_output=True,
                                        text=True, check=True).stdout)
        assert cli == b
    with pytest.raises(rpxprof.RpxprofError):
        rpxprof.cost(b"not an onnx model")


def test_roofline_system_card_gpus():
    gl = rpxprof.gpus()
    assert isinstance(gl, list) and gl and all("key" in g for g in gl)
    key = gl[0]["key"]
    r = rpxprof.roofline(4e9, 1e8, gpus=[key])
    assert r["schema"] == "rpxprof.roofline/1" and list(r["bounds"]) == [key]
    assert r["input"]["flops"] == 4e9 and r["input"]["bytes"] == 1e8
    assert set(rpxprof.roofline(4e9, 1e8)["bounds"]) == {g["key"] for g in gl}
    card = rpxprof.system_card()
    assert isinstance(card, dict) and "cpu_name" in card
    if BIN:
        cli = json.loads(subprocess.run([BIN, "gpus", "--json"], capture_output=True,
                                        text=True, check=True).stdout)
        assert cli["gpus"] == gl


def test_a_comma_locale_set_by_the_script_changes_no_number(monkeypatch):
    """A script that set a locale with a decimal comma gets the same system card (of a
    captured machine: 'cpu MHz : 2445.402' in its /proc/cpuinfo) and roofline bounds as in
    the C locale; its callable runs in its locale; and its locale is left as it was."""
    import locale
    import re
    saved = locale.setlocale(locale.LC_ALL)
    try:
        locale.setlocale(locale.LC_ALL, "de_DE.UTF-8")
        comma = locale.localeconv()["decimal_point"] == ","
    except locale.Error:
        comma = False
    finally:
        locale.setlocale(locale.LC_ALL, saved)
    if not comma:
        pytest.skip("no de_DE.UTF-8 locale with a decimal comma (scripts/setup.sh generates it)")
    monkeypatch.setenv("RPX_SYSROOT", os.path.join(SOURCE, "tests", "fixtures", "sysroots",
                                                   "debian12-kvm-2cpu"))

    def now():
        card = rpxprof.system_card()
        card.pop("collect_ms", None)
        return card, rpxprof.roofline(4e9, 1e8)

    seen = []

    def fn(rgb):
        seen.append(locale.localeconv()["decimal_point"])

    in_c = now()
    assert in_c[0]["cpu"]["current_mhz"] == 2445.402
    try:
        locale.setlocale(locale.LC_ALL, "de_DE.UTF-8")
        assert now() == in_c
        r = rpxprof.profile(fn, FRAME, warmup=1, repeats=20)
        assert locale.localeconv()["decimal_point"] == ","  # the script's locale, as it was
    finally:
        locale.setlocale(locale.LC_ALL, saved)
    assert set(seen) == {","}  # the callable ran in the script's locale
    assert re.search(r"\d,\d", json.dumps(r)) is None


def test_the_extension_does_not_link_libpython():
    path = rpxprof._core.__file__
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    needed = [l for l in out.splitlines() if "NEEDED" in l]
    assert needed, out
    assert not any("libpython" in l for l in needed), needed


# ---- pip install (the package as a user installs it; its own CTest entry: minutes) ----

def _tree(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, dirs, files in os.walk(root) for f in files + dirs)


def test_pip_install_into_a_virtualenv_without_network(tmp_path):
    """From a copy of the checkout (its tracked and new files only), made read-only, as a
    user would: the package, the `rpxprof` command (the same program), `python -m rpxprof`
    and the pytest plugin's entry point; nothing written into the checkout."""
    files = subprocess.run(["git", "-C", SOURCE, "ls-files", "-co", "--exclude-standard", "-z"],
                           capture_output=True, check=True).stdout.split(b"\0")
    src = tmp_path / "src"
    for f in files:
        if not f:
            continue
        rel = os.fsdecode(f)
        a = os.path.join(SOURCE, rel)
        if not os.path.isfile(a):
            continue
        b = src / rel
        b.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(a, b)
    # pip, and whatever the build runs, write caches and settings under HOME or XDG_*:
    # this test's own folder, never the caller's (which may be read-only) nor its pip settings
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS")
           and not k.startswith(("XDG_", "PIP_"))}
    env["HOME"] = str(tmp_path / "home")
    os.mkdir(env["HOME"])
    env["PIP_NO_INDEX"] = "1"  # no network: everything comes from Debian
    venv = tmp_path / "v"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, env=env)
    before = _tree(src)
    subprocess.run(["chmod", "-R", "a-w", str(src)], check=True)  # (root writes anyway:
    env["RPXPROF_BUILD_DIR"] = str(tmp_path / "out")               # the listing below counts)
    try:
        p = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                            "--no-build-isolation", "./python"], cwd=src, env=env,
                           capture_output=True, text=True, timeout=900)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(src)], check=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert _tree(src) == before, "the install wrote into the source tree: %s" % (
        sorted(set(_tree(src)) - set(before)))
    assert (tmp_path / "out" / "build").is_dir()
    # the command and python -m rpxprof: the program itself, which finds its plugins and demo
    # beside it
    for cmd in ([str(venv / "bin" / "rpxprof")], [str(venv / "bin" / "python"), "-m", "rpxprof"]):
        q = subprocess.run(cmd + ["--help"], env=env, capture_output=True, text=True, timeout=60)
        assert q.returncode == 0 and "Usage: rpxprof" in q.stdout + q.stderr, q.stderr
        q = subprocess.run(cmd + ["compare"], env=env, capture_output=True, text=True, timeout=60)
        assert q.returncode == 2 and q.stderr.startswith("rpxprof compare: error: "), q.stderr
    np_ = subprocess.run([str(venv / "bin" / "python"), "-c",
                          "import numpy as np; np.savez(%r, rgb=np.zeros((4, 4, 3), np.uint8))"
                          % str(tmp_path / "in.npz")], env=env, check=True)
    q = subprocess.run([str(venv / "bin" / "rpxprof"), "run", "--model", "rpxprof-demo:demo_noop",
                        "--inputs", str(tmp_path / "in.npz"), "--repeats", "20", "-o",
                        str(tmp_path / "r.json")], env=env, capture_output=True, text=True,
                       timeout=120)
    assert q.returncode == 0 and "20 timed calls" in q.stderr, q.stderr
    # issue 38 item 6: the command uses its virtualenv's site-packages, activated or not
    site = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          env=env, capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(site, "only_in_the_venv.py"), "w") as f:
        f.write("def f(rgb):\n    return None\n")
    (tmp_path / "venv_user.py").write_text("import only_in_the_venv\n"
                                           "def predict(rgb):\n    return only_in_the_venv.f(rgb)\n")
    plain = {k: v for k, v in env.items() if k != "VIRTUAL_ENV"}
    for cmd in ([str(venv / "bin" / "rpxprof")], [str(venv / "bin" / "python"), "-m", "rpxprof"]):
        q = subprocess.run(cmd + ["run", "--model", "venv_user:predict", "--inputs",
                                  str(tmp_path / "in.npz"), "--repeats", "5", "-o",
                                  str(tmp_path / "rv.json"), "--force"], env=plain,
                           cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
        assert q.returncode == 0, q.stderr
        with open(tmp_path / "rv.json") as f:
            assert json.load(f)["python"]["virtualenv"] == str(venv)
    q = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "--help"], env=env,
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert "--rpxprof-compare" in q.stdout, "the pytest11 entry point did not load the plugin"
    q = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-p",
                        "rpxprof.pytest_plugin", "--help"], env=env, cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert q.returncode == 0 and "--rpxprof-compare" in q.stdout, q.stderr  # loaded once
    del np_
    p = subprocess.run([str(venv / "bin" / "python"), "-c", textwrap.dedent("""
        import numpy as np, rpxprof
        r = rpxprof.profile(lambda rgb: None, {"rgb": np.zeros(4)}, warmup=1, repeats=20)
        print(rpxprof.__file__)
        print(r["status"])
    """)], cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    where, status = p.stdout.splitlines()  # a TMPDIR may have spaces in its name
    assert where.startswith(str(venv)) and status == "complete"


def _other_python3():
    """A python3 on PATH that is not Debian's (a pyenv or conda one), or None."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d, "python3")
        if not (os.path.isfile(p) and os.access(p, os.X_OK)):
            continue
        q = subprocess.run([p, "-c", "import sys, os; print(os.path.realpath(sys.base_prefix))"],
                           capture_output=True, text=True)
        if q.returncode == 0 and q.stdout.strip() != "/usr":
            return p
    return None


@pytest.mark.skipif(not _other_python3(), reason="no python3 other than Debian's on PATH")
def test_pip_install_refuses_a_python_that_is_not_debians(tmp_path):
    """issue 38 item 12: a virtualenv made with another python3 (here the pyenv one first on
    PATH) is refused up front, naming the interpreter and the fix, never pip's `invalid
    command 'bdist_wheel'` after a build."""
    other = _other_python3()
    venv = tmp_path / "v"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_PRELOAD")
           and not k.startswith("PIP_")}
    env["HOME"] = str(tmp_path)
    env["PIP_NO_INDEX"] = "1"
    env["RPXPROF_BUILD_DIR"] = str(tmp_path / "out")
    subprocess.run([other, "-m", "venv", str(venv)], check=True, env=env)
    p = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install",
                        "--no-build-isolation", "./python"], cwd=SOURCE, env=env,
                       capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "rpxprof: error: this Python, %s" % (venv / "bin" / "python") in out, out
    assert "is not Debian's /usr/bin/python3" in out, out
    assert "/usr/bin/python3 -m venv --system-site-packages venv" in out, out
    assert not (tmp_path / "out" / "build").exists(), "it built before refusing"


# ---- the CLI's Python target: the same calls as the package ----

@pytest.mark.skipif(not BIN, reason="RPX_BIN (the CLI) is not set")
def test_cli_python_target_shares_the_call_samples_and_writable(tmp_path):
    """The plugin (rpxprof run --model module:function) uses the same py_call.c: distinct
    samples picked per call, writable views restored, the read-only hint."""
    (tmp_path / "m_rpx.py").write_text(textwrap.dedent("""
        import json, os
        def edit(rgb):
            if not (rgb == rgb.ravel()[0]).all():
                raise AssertionError("not restored")
            rgb += 1
        def rec(rgb):
            with open(os.environ["SEEN"], "a") as f:
                f.write("%d\\n" % rgb.ravel()[0])
    """))
    for v in (7, 8, 9):
        np.savez(tmp_path / ("s%d.npz" % v), rgb=np.full((4, 4), v, np.uint8))
    env = dict(os.environ, SEEN=str(tmp_path / "seen.txt"))
    env.pop("LD_PRELOAD", None)  # the CLI is sanitized itself when it is

    def run(*args):
        return subprocess.run([BIN, "run", *args, "--processes", "1", "-q", "--output",
                               str(tmp_path / "r.json"), "--force"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)

    p = run("--model", "m_rpx:rec", "--inputs", "s7.npz", "--inputs", "s8.npz", "--inputs",
            "s9.npz", "--warmup", "0", "--repeats", "9")
    assert p.returncode == 0, p.stderr
    seen = [int(x) for x in (tmp_path / "seen.txt").read_text().split()]
    assert seen[:3] == [7, 8, 9] and sorted(set(seen)) == [7, 8, 9]
    p = run("--model", "m_rpx:edit", "--inputs", "s7.npz", "--inputs", "s8.npz",
            "--writable-inputs", "--repeats", "20")
    assert p.returncode == 0, p.stderr
    assert "writable" in json.loads((tmp_path / "r.json").read_text())["python"]["inputs"]
    p = run("--model", "m_rpx:edit", "--inputs", "s7.npz", "--repeats", "20")
    assert p.returncode == 1
    assert "pass --writable-inputs (writable_inputs=True in Python)" in p.stderr


# ---- refusals up front (issue 26 §4.7) ----

def gen_fn(rgb):
    yield rgb.sum()


async def async_fn(rgb):
    return rgb.sum()


class GenCallable:
    def __call__(self, rgb):
        yield rgb


@pytest.mark.parametrize("bad, kind, fix", [
    (np.array(["a", "bc"]), "unicode string", "np.uint8"),
    (np.array([b"a", b"bc"]), "bytes string", "np.uint8"),
    (np.array(["2024-01-01"], dtype="datetime64[D]"), "datetime", "astype('int64')"),
    (np.array([1], dtype="timedelta64[s]"), "timedelta", "astype('int64')"),
    (np.zeros(2, np.complex64), "complex", "two float arrays"),
    (np.zeros(2, np.longdouble), "long double", "float64"),
    (np.zeros(2, dtype=[("a", np.int32), ("b", np.float32)]), "structured", "one array per field"),
])
def test_unsupported_dtypes_are_refused_naming_the_key(bad, kind, fix):
    # refused before anything is written: the message names the key and the dtype, never
    # the private temporary file (which the user never saw), and exits as a usage error
    for inputs, where in (({"rgb": FRAME["rgb"], "bad": bad}, "inputs['bad']"),
                          ([FRAME, {"rgb": FRAME["rgb"], "bad": bad}], "inputs[1]['bad']")):
        with pytest.raises(rpxprof.RpxprofError) as e:
            rpxprof.profile(noop, inputs, warmup=0, repeats=1)
        msg = str(e.value)
        assert e.value.code == 2, msg
        assert where in msg and str(bad.dtype) in msg and kind in msg and fix in msg, msg
        assert "rpxprof-" not in msg and ".npz" not in msg, msg


def test_wrong_types_raise_rpxprof_error_that_is_also_a_type_error():
    cases = [
        (lambda: rpxprof.profile(42, FRAME), "fn"),
        # an array, a list of arrays or a number after fn are now fn's own positional
        # arguments (issue 29): noop(arr) is a valid call; test_torch.py covers them
        (lambda: rpxprof.profile(noop, FRAME["rgb"], kwargs=[1]), "kwargs"),
        (lambda: rpxprof.profile(noop, FRAME["rgb"], repeat=3), "repeat"),
        (lambda: rpxprof.profile(noop, FRAME, warmup="2"), "warmup"),
        (lambda: rpxprof.profile(noop, FRAME, meta=["a"]), "meta"),
        (lambda: rpxprof.profile(noop, FRAME, cost=1.5), "cost"),
    ]
    for call, name in cases:
        with pytest.raises(rpxprof.RpxprofError) as e:
            call()
        assert isinstance(e.value, TypeError), (name, type(e.value))  # code catching TypeError
        assert e.value.code == 2 and name in str(e.value), (name, str(e.value))


@pytest.mark.parametrize("fn, what, fix", [
    (gen_fn, "generator function", "list(gen_fn(**a))"),
    (async_fn, "coroutine function", "asyncio.run(async_fn(**a))"),
    (GenCallable(), "generator function", "list("),
    (functools.partial(gen_fn), "generator function", "list(")])
def test_generator_and_async_functions_are_refused(fn, what, fix):
    # calling one only creates the generator (0.15 us) and runs none of its body
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(fn, FRAME, warmup=0, repeats=5)
    msg = str(e.value)
    assert e.value.code == 2 and what in msg and fix in msg, msg


# ---- placement (issue 27 §3): cpus= and spread= ------------------------------------------

_ALLOWED = sorted(os.sched_getaffinity(0))


def _affinity_logger(path):
    def record_affinity(rgb):
        with open(path, "a") as f:
            f.write("%d %s\n" % (os.getpid(), ",".join(map(str, sorted(os.sched_getaffinity(0))))))
    return record_affinity


def _logged(path):
    with open(path) as f:
        return [(int(a), [int(x) for x in b.split(",")]) for a, b in (l.split() for l in f)]


@pytest.mark.skipif(len(_ALLOWED) < 2, reason="placement needs 2 allowed CPUs")
@pytest.mark.parametrize("cpus", ["one", "list", "text"])
def test_profile_cpus_pins_the_forked_workers(tmp_path, cpus):
    cpu = _ALLOWED[1]
    given = {"one": cpu, "list": [cpu], "text": str(cpu)}[cpus]
    log = str(tmp_path / "aff.log")
    r = rpxprof.profile(_affinity_logger(log), FRAME, warmup=0, repeats=4, processes=2,
                        cpus=given)
    common.validate_profile(r)
    pl = r["placement"]
    assert (pl["policy"], pl["cpus_requested"], pl["cpus_allowed"]) == ("pinned", [cpu], _ALLOWED)
    assert [b["cpus"] for b in pl["by_process"]] == [[cpu], [cpu]]
    calls = _logged(log)
    assert len({pid for pid, _ in calls}) == 2 and {tuple(c) for _, c in calls} == {(cpu,)}
    assert sorted(os.sched_getaffinity(0)) == _ALLOWED  # this process is untouched


@pytest.mark.skipif(len(_ALLOWED) < 2, reason="placement needs 2 allowed CPUs")
def test_profile_cpus_in_this_process_restores_the_mask(tmp_path):
    log = str(tmp_path / "aff.log")
    r = rpxprof.profile(_affinity_logger(log), FRAME, warmup=0, repeats=3, cpus=_ALLOWED[0])
    assert r["placement"]["by_process"] == [{"process": 0, "cpus": [_ALLOWED[0]]}]
    assert {tuple(c) for _, c in _logged(log)} == {(_ALLOWED[0],)}
    assert sorted(os.sched_getaffinity(0)) == _ALLOWED


@pytest.mark.skipif(len(_ALLOWED) < 2, reason="placement needs 2 allowed CPUs")
def test_profile_spread(tmp_path):
    log = str(tmp_path / "aff.log")
    two = _ALLOWED[:2]
    r = rpxprof.profile(_affinity_logger(log), FRAME, warmup=0, repeats=8, processes=4,
                        cpus=two, spread=True)
    assert r["placement"]["policy"] == "spread"
    per_pid = {pid: c[0] for pid, c in _logged(log)}
    assert sorted(per_pid.values()) == sorted(two * 2)


def test_profile_cpus_refusals():
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(noop, FRAME, repeats=2, cpus="x")
    assert e.value.code == 2 and "cpus 'x': not a list of CPUs" in str(e.value)
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(noop, FRAME, repeats=2, cpus=max(_ALLOWED) + 1)
    assert e.value.code == 2 and "give CPUs from" in str(e.value)
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(noop, FRAME, repeats=2, spread=True)
    assert e.value.code == 2 and "processes=N" in str(e.value)
    with pytest.raises(TypeError):
        rpxprof.profile(noop, FRAME, repeats=2, cpus=[0.5])


# ---- audit= (issue 30 §2: the cache audit through the package) ----

_MEMO_LAST = []


def memo_last(x):
    """Memoises its last input's answer: instant on a repeat, 400 us on a new one."""
    b = x.tobytes()
    if _MEMO_LAST and _MEMO_LAST[0] == b:
        return 0
    end = time.perf_counter() + 0.0004
    while time.perf_counter() < end:
        pass
    _MEMO_LAST[:] = [b]
    return 1


def test_audit_cache_flags_a_memoising_callable():
    samples = [{"x": np.full(64, k, np.float32)} for k in range(4)]
    r = rpxprof.profile(memo_last, samples, warmup=1, repeats=60, processes=2, audit="cache")
    common.validate_profile(r)
    a = r["audit"]["cache"]
    assert a["verdict"] == "suspect", a
    assert a["ci"][1] < 0.9 and a["distinct_inputs"] == 4
    assert any("--audit cache: suspect" in w for w in r.warnings)
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(memo_last, samples, repeats=10, audit="cache")  # no processes=N
    assert "audit" in str(e.value) and e.value.code == 2


# ---- where each call ran (issue 27 §1): call_records= ----------------------------------


@pytest.mark.parametrize("mode", ["cpu", "full", "off", None])
def test_profile_call_records(mode):
    r = rpxprof.profile(noop, FRAME, warmup=1, repeats=6, processes=2, call_records=mode)
    common.validate_profile(r)
    if mode == "off":
        assert r["call_records"] is None
        assert all(b["cpus"] is None for b in r["latency_by_process"])
        return
    cr = r["call_records"]
    assert cr["mode"] == (mode or "cpu")
    assert len(cr["cpu_start"]) == 6
    assert (cr["off_cpu_ms"] is None) == (mode != "full")
    if mode == "full":
        assert len(cr["involuntary_switches"]) == 6


def test_profile_call_records_refusals():
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(noop, FRAME, repeats=2, call_records="some")
    assert e.value.code == 2 and "expected cpu, full or off" in str(e.value)
    with pytest.raises(TypeError):
        rpxprof.profile(noop, FRAME, repeats=2, call_records=1)


# ---- output checks (issue 30 §3) from Python: check_outputs=, rtol=, ... -----------------


def _every_50th_wrong():
    n = [0]

    def predict(rgb):
        n[0] += 1
        out = rgb.astype(np.float32) * 2
        if n[0] % 50 == 0:
            out[0, 0, 0] += 1  # a wrong answer every 50th call
        return out
    return predict


def test_profile_check_outputs_catches_a_wrong_answer():
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(_every_50th_wrong(), FRAME, warmup=1, repeats=150, check_outputs=True,
                        check_fraction=1.0)
    assert e.value.code == 7 and e.value.report["status"] == "outputs_differ", str(e.value)
    # processes=N: each worker checks its own calls
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(_every_50th_wrong(), FRAME, warmup=1, repeats=150, processes=2,
                        check_outputs=True, check_fraction=1.0)
    assert e.value.report["status"] == "outputs_differ"
    # the native form, fn(*args): the same
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(_every_50th_wrong(), FRAME["rgb"], warmup=1, repeats=150,
                        check_outputs=True, check_fraction=1.0)
    assert e.value.report["status"] == "outputs_differ"
    r = rpxprof.profile(lambda rgb: rgb * 2, FRAME["rgb"], warmup=1, repeats=20,
                        check_outputs=True, check_fraction=1.0)
    assert r["outputs"]["verdict"] == "match" and r["outputs"]["checked_calls"] == 20


def test_profile_check_outputs_passes_an_exact_one(tmp_path):
    def exact(rgb):
        return rgb.astype(np.float32) * 2
    r = rpxprof.profile(exact, FRAME, warmup=1, repeats=60, check_outputs=True,
                        check_fraction=1.0)
    assert r["status"] == "complete"
    common.validate_profile(r)
    # within rtol: a difference of 1e-7 relative passes with rtol=1e-5, as allclose says
    k = [0]

    def noisy(rgb):
        k[0] += 1
        return rgb.astype(np.float64) * 2 * (1 + 1e-7 * (k[0] % 2))
    r = rpxprof.profile(noisy, FRAME, warmup=1, repeats=40, check_outputs=True,
                        check_fraction=1.0, rtol=1e-5)
    assert r["status"] == "complete"
    # saved, then checked against the folder (check_outputs=DIR, as the CLI's)
    rpxprof.profile(exact, FRAME, warmup=1, repeats=10, save_outputs=tmp_path / "ref")
    assert sorted(os.listdir(tmp_path / "ref"))
    r = rpxprof.profile(exact, FRAME, warmup=1, repeats=10, check_outputs=tmp_path / "ref")
    assert r["status"] == "complete"
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(lambda rgb: rgb * 3, FRAME, warmup=1, repeats=10,
                        check_outputs=str(tmp_path / "ref"))
    assert e.value.code == 7
    # tolerances without a check: refused as `rpxprof run --rtol` is
    with pytest.raises(rpxprof.RpxprofError) as e:
        rpxprof.profile(exact, FRAME, repeats=2, rtol=1e-3)
    assert e.value.code == 2 and "check" in str(e.value)
    with pytest.raises(TypeError):
        rpxprof.profile(exact, FRAME, repeats=2, check_outputs=3)
