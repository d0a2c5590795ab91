"""Builds rpxprof._core and the rpxprof program with the repository's own CMake build (the
folder above this one), so that the package and `cmake --build build` compile the same
sources the same way. Used by `python3 -m pip install --no-build-isolation ./python`; needs
no network. Everything the build writes (CMake's folder, setuptools' build/ and egg-info)
goes outside the source tree, under RPXPROF_BUILD_DIR or the temporary folder, so a
read-only checkout installs."""
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# one folder per checkout and user, kept between installs (CMake rebuilds what changed)
OUT = os.environ.get("RPXPROF_BUILD_DIR") or os.path.join(
    tempfile.gettempdir(), "rpxprof-build-%d-%s" % (os.getuid(),
                                                   hashlib.sha1(ROOT.encode()).hexdigest()[:10]))
# The program and the files it finds beside itself (src/loader/companions.c), shipped in
# rpxprof/_bin: `rpxprof` and `python -m rpxprof` run it (rpxprof/__main__.py).
PROGRAM = ["rpxprof", "librpxprof-python.so", "librpxprof-http.so", "librpxprof-demo.so"]


def refuse_other_interpreters():
    """rpxprof._core is built against Debian's Python (python3-embed) and the build uses
    Debian's setuptools and wheel: another interpreter (a pyenv or conda python3 first on
    PATH) would fail later with pip's `invalid command 'bdist_wheel'`, or load an extension
    built for another libpython. Refused up front, naming it and the fix."""
    base = os.path.realpath(sys.base_prefix)
    if base == "/usr":
        return
    here = sys.executable or "python3"
    venv = " (a virtualenv made from %s)" % base if sys.prefix != sys.base_prefix else ""
    sys.stderr.write(
        "rpxprof: error: this Python, %s%s (Python %d.%d.%d, prefix %s), is not Debian's "
        "/usr/bin/python3: rpxprof._core is built against Debian's Python (python3-embed) and "
        "the install uses Debian's setuptools and wheel (without them: `invalid command "
        "'bdist_wheel'`); make the virtualenv with "
        "`/usr/bin/python3 -m venv --system-site-packages venv` and install with "
        "`venv/bin/python -m pip install --no-build-isolation ./python` (docs/python.md)\n"
        % ((here, venv) + tuple(sys.version_info[:3]) + (base,)))
    raise SystemExit(1)


refuse_other_interpreters()


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(rpxprof VERSION ([0-9.]+)", f.read())
    return m.group(1) if m else "0"


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not os.path.exists(os.path.join(ROOT, "CMakeLists.txt")):
            raise RuntimeError("rpxprof's setup.py builds with the repository's CMakeLists.txt "
                               "(%s); install from the repository: pip install "
                               "--no-build-isolation ./python" % ROOT)
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        pkg = os.path.join(build, "package", "rpxprof")
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                               "-DRPX_TESTS=OFF", "-DRPX_EXAMPLES=OFF",
                               "-DRPX_CUDA_EXAMPLES=OFF", "-DRPX_PYTHON_PACKAGE_DIR=" + pkg])
        subprocess.check_call(["cmake", "--build", build, "--target", "rpxprof_core",
                               "rpxprof_cli", "-j", str(min(os.cpu_count() or 2, 8))])
        want = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        built = glob.glob(os.path.join(pkg, "_core*.so"))
        if not built:
            raise RuntimeError("the CMake build made no rpxprof._core in %s: is python3-dev "
                               "installed (its python3-embed.pc)?" % pkg)
        if not built[0].endswith(want):
            raise RuntimeError("the CMake build made %s for Debian's python3 (python3-embed), "
                               "and this interpreter loads *%s; install with that python3"
                               % (os.path.basename(built[0]), want))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)
        bindir = os.path.join(os.path.dirname(target), "_bin")
        os.makedirs(bindir, exist_ok=True)
        for name in PROGRAM:
            src = os.path.join(build, name)
            if not os.path.exists(src):
                raise RuntimeError("the CMake build made no %s in %s" % (name, build))
            shutil.copy2(src, os.path.join(bindir, name))  # the mode too: the program runs


setup(version=version(),
      ext_modules=[Extension("rpxprof._core", sources=[])],
      cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": os.path.join(OUT, "build")},
               "egg_info": {"egg_base": OUT}})
