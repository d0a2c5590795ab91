"""bench_sessions.py's pure-Python benchmark: a fixed loop of about 0.4 ms per call.
bench_sessions.py writes this file with LOOPS = its PY_LOOPS for the baseline and with
LOOPS scaled by 1.05 for the 5 % slower "new build" of the same module, so the slowdown
is the loop's own 5 % whatever the machine does."""
LOOPS = 600
INNER = 20


def work(**arrays):
    s = 0
    for i in range(LOOPS):
        for j in range(INNER):
            s += i ^ j
    return s
