"""rpxprof.compare_run of two checkouts of one module (issue 36 §5): compare_run(
"base/mypkg/model.py:predict", "head/mypkg/model.py:predict", ...) imports each file in
its own forked workers, although this process has already imported the head's `mypkg`
(a forked worker inherits sys.modules: the base side must not get the head's code). The
copies busy-wait different times and record which file each worker imported."""
import os
import sys
import textwrap

import numpy as np
import pytest

import rpxprof

MODEL = textwrap.dedent('''
    import os
    import time

    WHO = {who!r}
    MS = {ms}

    with open(os.environ["RPX_TEST_IMPORTS"], "a") as f:
        f.write("%s %d %s\\n" % (WHO, os.getpid(), __file__))


    def predict(x):
        end = time.perf_counter() + MS / 1000
        while time.perf_counter() < end:
            pass
        return WHO
''')


def checkout(root, who, ms):
    (root / "mypkg").mkdir(parents=True)
    (root / "mypkg" / "__init__.py").write_text("")
    (root / "mypkg" / "model.py").write_text(MODEL.format(who=who, ms=ms))


@pytest.fixture
def checkouts(tmp_path, monkeypatch):
    checkout(tmp_path / "base", "base", 1)
    checkout(tmp_path / "head", "head", 3)
    imports = tmp_path / "imports.txt"
    monkeypatch.setenv("RPX_TEST_IMPORTS", str(imports))
    monkeypatch.chdir(tmp_path)
    # this process imports the head's copy first: the base's workers must not reuse it
    monkeypatch.syspath_prepend(str(tmp_path / "head"))
    for k in [k for k in sys.modules if k == "mypkg" or k.startswith("mypkg.")]:
        monkeypatch.delitem(sys.modules, k)
    import mypkg.model
    assert mypkg.model.WHO == "head"
    imports.write_text("")
    yield tmp_path, imports
    for k in [k for k in sys.modules if k == "mypkg" or k.startswith("mypkg.")]:
        del sys.modules[k]


def test_each_side_imports_its_own_checkout(checkouts):
    tmp, imports = checkouts
    c = rpxprof.compare_run("base/mypkg/model.py:predict",
                            str(tmp / "head" / "mypkg" / "model.py") + ":predict",
                            {"x": np.zeros(4, np.float32)}, processes=3, repeats=120,
                            warmup=3)
    want = {"base": os.path.realpath(tmp / "base" / "mypkg" / "model.py"),
            "head": os.path.realpath(tmp / "head" / "mypkg" / "model.py")}
    for r, who in ((c.base, "base"), (c.new, "head")):
        assert r["status"] == "complete"
        assert r["python"]["module"] == "mypkg.model"
        assert os.path.realpath(r["python"]["module_file"]) == want[who]
    seen = [line.split(" ", 2) for line in imports.read_text().splitlines()]
    n = [len(r["latency_by_process"]) for r in (c.base, c.new)]   # 3, or 4 on 2 CPUs (pairs)
    assert sorted(w for w, _, _ in seen) == ["base"] * n[0] + ["head"] * n[1], seen
    for who, pid, file in seen:
        assert int(pid) != os.getpid()
        assert os.path.realpath(file) == want[who], seen
    assert c.verdict == "slower" and c.ratio > 2.0, c.summary()
    import mypkg.model   # this process's own import is left as it was
    assert mypkg.model.WHO == "head"


def test_a_bad_spec_is_refused_before_anything_runs(checkouts):
    x = {"x": np.zeros(4, np.float32)}
    with pytest.raises(rpxprof.RpxprofError, match="no such file") as e:
        rpxprof.compare_run("nowhere/mypkg/model.py:predict", "head/mypkg/model.py:predict",
                            x, processes=2, repeats=12)
    assert e.value.code == 2
    with pytest.raises(rpxprof.RpxprofError, match="PATH/module.py:function"):
        rpxprof.compare_run("base/mypkg/model:predict", "head/mypkg/model.py:predict",
                            x, processes=2, repeats=12)
