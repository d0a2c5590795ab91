"""A SIGINT that a thread of the caller sends (os.kill, or _thread.interrupt_main(), which
raises no real signal) during rpxprof.profile(processes=N) is acted on at once: the run
stops after the call in progress and profile raises rpxprof.Interrupted (a
KeyboardInterrupt) with .report, as Ctrl-C does (issue 37 item 15). No duration is judged:
the run would take 20 s or more uninterrupted, and the signal comes after 1.5 s; before the
fix the run went on to its end and a bare KeyboardInterrupt (no .report) came after it."""
import subprocess
import sys
import textwrap

import pytest

CODE = """
    import _thread, os, signal, sys, threading, time
    import numpy as np
    import rpxprof
    mode = sys.argv[1]
    def spin(rgb):
        end = time.perf_counter() + 0.001
        while time.perf_counter() < end:
            pass
    def poke():
        time.sleep(1.5)
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGINT)
        else:
            _thread.interrupt_main()
    threading.Thread(target=poke, daemon=True).start()
    try:
        rpxprof.profile(spin, {"rgb": np.zeros(3)}, warmup=1, repeats=20000, processes=2)
        print("completed")
    except KeyboardInterrupt as e:
        r = getattr(e, "report", None)
        print(type(e).__name__, r["status"] if r else None,
              len(r["latency_samples_ms"]) < 20000 if r else None)
"""


@pytest.mark.parametrize("mode", ["kill", "interrupt_main"])
def test_a_sigint_from_a_thread_stops_profile_at_once(mode):
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(CODE), mode], capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    words = p.stdout.split()
    assert words == ["Interrupted", "interrupted", "True"], (p.stdout, p.stderr)
