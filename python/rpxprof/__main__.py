"""`python -m rpxprof ARGS` and the `rpxprof` command a pip install makes: both run the
rpxprof program itself (the C binary the package ships in rpxprof/_bin, beside its plugins),
so they are the CLI of docs/cli.md, byte for byte. Run from a virtualenv, the program's Python
target uses that virtualenv's site-packages, whether it is activated or not."""
import os
import sys


def binary():
    """The path of the rpxprof program shipped with this package (rpxprof/_bin/rpxprof);
    a package imported from a CMake build folder (PYTHONPATH=build/python) uses that
    build's program (build/rpxprof)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.path.join(here, "_bin", "rpxprof"),
              os.path.join(os.path.dirname(os.path.dirname(here)), "rpxprof")):
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    exe = binary()
    if exe is None:
        sys.stderr.write("rpxprof: error: the rpxprof program is not installed with this "
                         "package (%s has no _bin/rpxprof); install the package with `python3 "
                         "-m pip install --no-build-isolation ./python`, which builds it\n"
                         % os.path.dirname(os.path.abspath(__file__)))
        return 1
    if sys.prefix != sys.base_prefix:
        # run from a virtualenv (venv/bin/rpxprof, venv/bin/python -m rpxprof): the program's
        # Python target imports from this virtualenv's site-packages (python_target.c reads
        # VIRTUAL_ENV), activated or not, and never from another one's
        os.environ["VIRTUAL_ENV"] = sys.prefix
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [exe] + argv)  # the same process: its exit status and signals are the CLI's


if __name__ == "__main__":
    sys.exit(main())
