#!/usr/bin/python3
"""Verdicts across sessions (issue 36, Acceptance bullet 1), in two phases.

record OUTDIR [--sessions 44] [--every 90] [--rpxprof BUILD/rpxprof] [--repeats-*]
    Every ~EVERY seconds one "slot": for each of three benchmarks -- the demo's demo_depth on
    the 480x640x3 uint8 frame of scripts/demo.sh, an 8 MiB stream and a pure-Python loop of
    about 0.4 ms -- three back-to-back runs of the baseline build (the first is the slot's
    session, the other two its confirming sessions), and from slot 4 on three back-to-back runs
    of a 5 % slower build of the same model at the same path/symbol/module: the file in place is
    replaced (bench/sessions/: the C models built with RPX_BENCH_SLOW_PERMILLE=0 and =50, each
    call of the slow one busy-waits 5 % of its own elapsed time; the Python module with its loop
    1.05x as long), so the benchmark's identity stays and only the model's SHA-256 / the
    module's source digest differs. Fixed options: 5 processes (the default), fixed repeats.
    Reports: OUTDIR/reports/sSS/BENCH/VARIANT/I.json; OUTDIR/log.jsonl: one line per run (its
    start and end time, wall seconds, the 1-minute load before and after, the compilers and
    test runners seen running beside it). The rpxprof build used is copied to OUTDIR/tool first,
    so later builds of the worktree do not change it mid-recording. Rerunning `record` on the
    same OUTDIR resumes after the last complete slot (--sessions is the total, so a larger
    number extends it). Run it under nohup; its PID is in OUTDIR/recorder.pid:
        setsid nohup /usr/bin/python3 bench/bench_sessions.py record OUTDIR \
            --sessions 44 --every 90 >> OUTDIR/recorder.out 2>&1 < /dev/null &

analyse OUTDIR --rpxprof PATH/TO/rpxprof [--confirm 2] [--threshold 1%]
    For each benchmark, imports the sessions into fresh SQLite histories with
    `rpxprof history add` in time order and asks `rpxprof history check --json` after each
    head (WAVE5.md's check JSON), and `rpxprof compare --history H base.json head.json --json`:
    (a) the A/A false-verdict rate across sessions (head = a baseline session, newest verdict
    slower/faster) with its 95 % Wilson interval; (b) with >= 3 baseline sessions in the
    history, the share of 5 % slowdowns called `slower` (with --confirm N: the confirming
    sessions are taken from the slot's back-to-back runs and counted in the wall time);
    and, for contrast, plain `rpxprof compare` of two separate baseline runs without history.
    Prints a Markdown table for BENCHMARKS.md (the machine from /proc/cpuinfo, the load range
    from the log).

    Each head is judged against the history of the earlier slots only; the slot's confirming
    runs go into a copy that is dropped after the decision. The reports predate the session
    block: the history derives their sessions, and each slot's baseline, A/A head and slow head
    get their own commit through a copy of the report with `code_sha` set (see labelled()).
    --slots A-B limits the analysis to those slots; --json FILE keeps every verdict.

contrast OUTDIR --rpxprof PATH/TO/rpxprof
    Only the no-history contrast (works with main's rpxprof, before `history` exists).

selftest
    The parts that need no rpxprof (the Wilson interval, the missing-key failure).
"""
import argparse
import datetime
import glob
import hashlib
import itertools
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_common import machine_line  # noqa: E402

BENCHES = ("demo", "stream", "pyloop")
VARIANTS = ("base", "slow")
RUNS_PER_VARIANT = 3
SLOW_FROM_SLOT = 4
PY_MODULE = "rpx_bench_loop"
PY_LOOPS = 600          # the baseline module's outer loop (the inner one is 20)
SLOW_PERMILLE = 50      # the slow builds: 5 %
DEMO_SHAPE = "rgb=480x640x3:uint8=128"   # scripts/demo.sh's frame


# ---------------------------------------------------------------- small helpers

def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


BUSY_NAMES = ("cc1", "cc1plus", "ld", "collect2", "cmake", "ctest", "make", "ninja", "clang",
              "pytest", "chromium", "rpxprof", "postgres")


def beside():
    """Names of compilers/test runners running now (ours excluded): 'a build beside'."""
    seen = {}
    me = os.getpid()
    for d in glob.glob("/proc/[0-9]*"):
        try:
            pid = int(d[6:])
            if pid == me:
                continue
            with open(d + "/comm") as f:
                name = f.read().strip()
        except (OSError, ValueError):
            continue
        if name in BUSY_NAMES or name.startswith("cc1"):
            seen[name] = seen.get(name, 0) + 1
    return seen


def wilson(k, n, z=1.959963984540054):
    """The 95 % Wilson score interval of k successes in n trials (None for n = 0)."""
    if n == 0:
        return None
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def die(msg):
    sys.exit(f"bench_sessions.py: {msg}")


# ---------------------------------------------------------------- the recording

class Layout:
    def __init__(self, outdir):
        self.out = os.path.abspath(outdir)
        self.tool = os.path.join(self.out, "tool")
        self.models = os.path.join(self.out, "models")      # models/base, models/slow
        self.live = os.path.join(self.out, "live")          # the files in place
        self.py = os.path.join(self.live, "py")
        self.inputs = os.path.join(self.out, "inputs")
        self.reports = os.path.join(self.out, "reports")
        self.log = os.path.join(self.out, "log.jsonl")
        self.config = os.path.join(self.out, "config.json")
        self.pid = os.path.join(self.out, "recorder.pid")

    def report(self, slot, bench, variant, index):
        return os.path.join(self.reports, f"s{slot:02d}", bench, variant, f"{index}.json")

    def so(self):
        return os.path.join(self.live, "session_models.so")


def py_source(loops):
    with open(os.path.join(HERE, "sessions", "pyloop.py")) as f:
        src = f.read()
    out, n = re.subn(r"^LOOPS = \d+$", f"LOOPS = {loops}", src, flags=re.M)
    if n != 1:
        die("bench/sessions/pyloop.py: expected one line 'LOOPS = N'")
    return out


def prepare(L, rpxprof, build_type):
    """Copy the tool, build both variants of the models, make the inputs (once per OUTDIR)."""
    if os.path.exists(L.config):
        with open(L.config) as f:
            return json.load(f)
    build = os.path.dirname(os.path.abspath(rpxprof))
    os.makedirs(L.tool, exist_ok=True)
    for f in ["rpxprof"] + [os.path.basename(p) for p in glob.glob(os.path.join(build, "*.so*"))]:
        shutil.copy2(os.path.join(build, f), os.path.join(L.tool, f))
    for sub in ("python",):      # the embedded Python's package, when the build has one
        if os.path.isdir(os.path.join(build, sub)):
            shutil.copytree(os.path.join(build, sub), os.path.join(L.tool, sub), dirs_exist_ok=True)
    src = os.path.join(HERE, "sessions", "session_models.c")
    include = os.path.join(os.path.dirname(HERE), "include")
    for variant, permille in (("base", 0), ("slow", SLOW_PERMILLE)):
        d = os.path.join(L.models, variant)
        os.makedirs(d, exist_ok=True)
        subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-O2",
                        "-fPIC", "-shared", "-fvisibility=hidden",
                        f"-DRPX_BENCH_SLOW_PERMILLE={permille}", "-I", include, src,
                        "-o", os.path.join(d, "session_models.so")], check=True)
        loops = PY_LOOPS if permille == 0 else round(PY_LOOPS * (1000 + permille) / 1000)
        with open(os.path.join(d, PY_MODULE + ".py"), "w") as f:
            f.write(py_source(loops))
    os.makedirs(L.py, exist_ok=True)
    os.makedirs(L.inputs, exist_ok=True)
    tool = os.path.join(L.tool, "rpxprof")
    subprocess.run([tool, "inputs", "make", os.path.join(L.inputs, "rgb.npz"), DEMO_SHAPE],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([tool, "inputs", "make", os.path.join(L.inputs, "x.npz"), "x=1:float32=0"],
                   check=True, stdout=subprocess.DEVNULL)
    git = lambda *a: subprocess.run(["git", "-C", HERE, *a], capture_output=True,  # noqa: E731
                                    text=True).stdout.strip()
    cfg = {"rpxprof_build": build, "build_type": build_type, "commit": git("rev-parse", "HEAD"),
           "branch": git("rev-parse", "--abbrev-ref", "HEAD"), "created": utc_now(),
           "machine": machine_line(), "slow_permille": SLOW_PERMILLE, "py_loops": PY_LOOPS,
           "runs_per_variant": RUNS_PER_VARIANT, "slow_from_slot": SLOW_FROM_SLOT}
    with open(L.config, "w") as f:
        json.dump(cfg, f, indent=1)
    return cfg


def bench_args(L, bench, repeats):
    if bench == "demo":
        return ["--model", L.so() + ":demo_depth", "--inputs", os.path.join(L.inputs, "rgb.npz"),
                "--unit", "frame", "--warmup", "10", "--repeats", str(repeats)]
    if bench == "stream":
        return ["--model", L.so() + ":stream", "--inputs", os.path.join(L.inputs, "x.npz"),
                "--warmup", "3", "--repeats", str(repeats)]
    return ["--model", f"{PY_MODULE}:work", "--inputs", os.path.join(L.inputs, "x.npz"),
            "--warmup", "20", "--repeats", str(repeats)]


def put_in_place(L, bench, variant):
    """Copy the variant's build of the model to the one path every run uses; its SHA-256."""
    src = os.path.join(L.models, variant)
    if bench == "pyloop":
        shutil.rmtree(os.path.join(L.py, "__pycache__"), ignore_errors=True)
        dst = os.path.join(L.py, PY_MODULE + ".py")
        src = os.path.join(src, PY_MODULE + ".py")
    else:
        dst, src = L.so(), os.path.join(src, "session_models.so")
    shutil.copyfile(src, dst + ".tmp")
    os.replace(dst + ".tmp", dst)
    with open(dst, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()   # the version in place: for the log


def done_slots(L):
    """Slots whose every run was logged (a slot cut by a kill is redone on resume)."""
    per = {}
    if os.path.exists(L.log):
        with open(L.log) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("kind") == "run":
                    per.setdefault(r["slot"], set()).add((r["bench"], r["variant"], r["index"]))
    full = lambda s: len(BENCHES) * RUNS_PER_VARIANT * (2 if s >= SLOW_FROM_SLOT else 1)  # noqa
    return sorted(s for s, runs in per.items() if len(runs) >= full(s))


def log(L, rec):
    with open(L.log, "a") as f:
        f.write(json.dumps(rec) + "\n")
        f.flush()
        os.fsync(f.fileno())


def record(a):
    L = Layout(a.outdir)
    os.makedirs(L.out, exist_ok=True)
    cfg = prepare(L, a.rpxprof, a.build_type)
    with open(L.pid, "w") as f:
        f.write(f"{os.getpid()}\n")
    repeats = {"demo": a.repeats_demo, "stream": a.repeats_stream, "pyloop": a.repeats_pyloop}
    tool = os.path.join(L.tool, "rpxprof")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": L.py,
           "LD_LIBRARY_PATH": L.tool}
    done = done_slots(L)
    first = (max(done) + 1) if done else 1
    log(L, {"kind": "start", "time": utc_now(), "pid": os.getpid(), "first_slot": first,
            "sessions": a.sessions, "every_s": a.every, "repeats": repeats, "config": cfg,
            "load1": load1()})
    t_start = time.monotonic()
    for n, slot in enumerate(range(first, a.sessions + 1)):
        due = t_start + n * a.every
        if time.monotonic() < due:
            time.sleep(due - time.monotonic())
        slot_t0 = time.monotonic()
        for bench in BENCHES:
            for variant in VARIANTS:
                if variant == "slow" and slot < SLOW_FROM_SLOT:
                    continue
                in_place = put_in_place(L, bench, variant)
                for index in range(1, RUNS_PER_VARIANT + 1):
                    out = L.report(slot, bench, variant, index)
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    rec = {"kind": "run", "slot": slot, "bench": bench, "variant": variant,
                           "index": index, "report": os.path.relpath(out, L.out),
                           "version_sha256": in_place, "start": utc_now(),
                           "load1_before": load1(), "beside": beside()}
                    t0 = time.monotonic()
                    try:
                        p = subprocess.run([tool, "run", *bench_args(L, bench, repeats[bench]),
                                            "--output", out, "--quiet"], cwd=L.py, env=env,
                                           capture_output=True, text=True, timeout=600)
                        rc, err = p.returncode, p.stderr
                    except (OSError, subprocess.SubprocessError) as e:   # log it, go on
                        rc, err = -1, str(e)
                    rec.update({"end": utc_now(), "wall_s": round(time.monotonic() - t0, 3),
                                "rc": rc, "load1_after": load1()})
                    if rc != 0:
                        rec["stderr"] = err[-2000:]
                    try:
                        with open(out) as f:
                            r = json.load(f)
                        rec["p50_ms"] = (r.get("latency") or {}).get("p50_ms")
                        rec["p50_ci_ms"] = (r.get("latency_ci") or {}).get("p50_ms")
                    except (OSError, ValueError):
                        rec["p50_ms"] = None
                    log(L, rec)
        log(L, {"kind": "slot", "slot": slot, "time": utc_now(),
                "wall_s": round(time.monotonic() - slot_t0, 1), "load1": load1()})
    log(L, {"kind": "end", "time": utc_now(), "slots": len(done_slots(L))})


# ---------------------------------------------------------------- the analysis

VERDICTS = ("slower", "faster", "same", "inconclusive", "incomparable")


BESIDE_GROUPS = {"build": {"cc1", "cc1plus", "ld", "collect2", "clang", "ninja", "make"},
                 "tests": {"ctest", "pytest", "chromium", "postgres"}}


def machine_words():
    """The CPU (model name, family/model/stepping, microcode), the CPU count, hypervisor, memory
    and kernel, from /proc (the machine kind the numbers hold for)."""
    info, mem = {}, None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                info.setdefault(k.strip(), v.strip())
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    hv = "KVM guest" if "hypervisor" in info.get("flags", "").split() else "bare metal"
    return (f"{info.get('model name', '?')} (family {info.get('cpu family', '?')}, model "
            f"{info.get('model', '?')}, stepping {info.get('stepping', '?')}, microcode "
            f"{info.get('microcode', '?')}), {os.cpu_count()} CPUs, {hv}"
            + (f", {mem:.0f} GiB" if mem else "") + f"; {machine_line().split(', ')[-1]}")


class Runs:
    """The recorded runs of OUTDIR: runs[bench][slot][variant] = [(index, path, log record)]."""

    def __init__(self, outdir, slots=None):
        self.L = Layout(outdir)
        if not os.path.exists(self.L.log):
            die(f"{self.L.log}: no log; record first (bench_sessions.py record {outdir})")
        self.runs, self.loads, self.beside, self.nruns = {}, [], {}, 0
        keep = None
        if slots:
            lo, _, hi = slots.partition("-")
            keep = range(int(lo), int(hi or lo) + 1)
        with open(self.L.log) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("kind") != "run" or r.get("rc") != 0:
                    continue
                if keep is not None and r["slot"] not in keep:
                    continue
                path = os.path.join(self.L.out, r["report"])
                if not os.path.exists(path):
                    continue
                self.loads += [r["load1_before"], r["load1_after"]]
                names = set(r.get("beside") or {})
                self.nruns += 1
                for what, group in BESIDE_GROUPS.items():
                    if names & group or (what == "build"
                                         and any(n.startswith("cc1") for n in names)):
                        self.beside[what] = self.beside.get(what, 0) + 1
                # a slot redone after a resume: its later runs replace the earlier ones
                (self.runs.setdefault(r["bench"], {}).setdefault(r["slot"], {})
                 .setdefault(r["variant"], {}))[r["index"]] = (r["index"], path, r)
        for b in self.runs.values():
            for v in b.values():
                for name in list(v):
                    v[name] = sorted(v[name].values(), key=lambda x: x[0])
        self.first = self.last = None
        times = [r[2]["start"] for b in self.runs.values() for v in b.values()
                 for runs in v.values() for r in runs]
        if times:
            self.first, self.last = min(times), max(times)

    def slots(self, bench):
        return sorted(self.runs.get(bench, {}))

    def get(self, bench, slot, variant):
        return self.runs.get(bench, {}).get(slot, {}).get(variant, [])


def tool(rpxprof, *args, ok=(0,)):
    p = subprocess.run([rpxprof, *args], capture_output=True, text=True, timeout=600)
    if p.returncode not in ok:
        die(f"`rpxprof {' '.join(args)}` exited {p.returncode}: {p.stderr.strip()[-800:]}")
    return p


def key(obj, name, where):
    """obj[name], or a clear failure naming the key, where it was looked for and what is there."""
    if not isinstance(obj, dict) or name not in obj:
        have = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        die(f"{where}: no key '{name}' (WAVE5.md's shape; found {have}): update "
            f"bench_sessions.py to the spelling the tool uses")
    return obj[name]


def verdict_word(v, where):
    if v not in VERDICTS:
        die(f"{where}: verdict '{v}' is not one of {', '.join(VERDICTS)}")
    return v


def compare_json(rpxprof, base, head, history=None, threshold="1%"):
    args = ["compare", "--json", "--threshold", threshold]
    if history:
        args += ["--history", history]
    p = tool(rpxprof, *args, base, head, ok=(0, 3))
    try:
        res = json.loads(p.stdout)
    except ValueError:
        die(f"`rpxprof {' '.join(args)} {base} {head}` printed no JSON: {p.stdout[:200]!r}")
    where = "compare --json" + (" --history" if history else "")
    return verdict_word(key(res, "verdict", where), where), res


def check_newest(rpxprof, history, confirm, threshold):
    """`rpxprof history check --json` -> (the newest block, the whole check) of the history's
    one series (one benchmark per history file here)."""
    args = ["history", "check", "--json", "--history", history, "--threshold", threshold]
    if confirm:
        args += ["--confirm", str(confirm)]
    p = tool(rpxprof, *args, ok=(0, 3))
    where = "history check --json"
    try:
        res = json.loads(p.stdout)
    except ValueError:
        die(f"`rpxprof {' '.join(args)}` printed no JSON: {p.stdout[:200]!r}")
    checks = res
    if isinstance(res, dict) and "newest" not in res:
        lists = [k for k, v in res.items() if isinstance(v, list) and v and isinstance(v[0], dict)
                 and "newest" in v[0]]
        if not lists:
            key(res, "newest", where)          # fails, naming the key
        checks = res[lists[0]]
    if isinstance(checks, dict):
        checks = [checks]
    if not checks:
        die(f"{where}: no series in {history}")
    if len(checks) > 1:   # a fingerprint change split the series: the one with the newest head
        checks.sort(key=lambda c: key(c, "sessions", where))
        print(f"warning: {history} holds {len(checks)} series (a fingerprint changed); "
              f"using the longest", file=sys.stderr)
    newest = key(checks[-1], "newest", where)
    verdict_word(key(newest, "verdict", where + " newest"), where + " newest")
    key(newest, "sessions_needed", where + " newest")
    return newest, checks[-1]


def history_add(rpxprof, history, *reports):
    tool(rpxprof, "history", "add", "--history", history, *reports)


def labelled(path, commit, tmpdir):
    """A copy of the report that names its version's commit. The reports were recorded by
    main's rpxprof, before the session block: the history derives their sessions, and takes the
    commit from the report's top-level `code_sha` (as for batch reports). `history check` groups
    the newest session with the sessions just before it of the same commit (the head and its
    confirming sessions), so each slot's baseline is its own commit (base-sNN), an A/A head a
    new commit of unchanged code (aa-sNN), a slow head slow-sNN."""
    out = os.path.join(tmpdir, "labelled", commit, os.path.relpath(path, "/").replace("/", "_"))
    if not os.path.exists(out):
        with open(path) as f:
            r = json.load(f)
        r["code_sha"] = commit
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            json.dump(r, f)
    return out


def has_commit(obj, commit):
    if isinstance(obj, dict):
        return obj.get("commit") == commit or any(has_commit(v, commit) for v in obj.values())
    if isinstance(obj, list):
        return any(has_commit(v, commit) for v in obj)
    return False


def commits_seen(rpxprof, history, commit):
    """Whether `history show --json` holds a session of that commit (see labelled())."""
    p = tool(rpxprof, "history", "show", "--json", "--history", history)
    try:
        return has_commit(json.loads(p.stdout), commit)
    except ValueError:
        die(f"`rpxprof history show --json --history {history}` printed no JSON: "
            f"{p.stdout[:200]!r}")


def copy_history(src, dst):
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(dst + ext):
            os.remove(dst + ext)
        if os.path.exists(src + ext):
            shutil.copyfile(src + ext, dst + ext)


def decide(rpxprof, history, head_runs, commit, confirm, threshold, tmpdir):
    """The gate on one head session: a copy of the history plus the head; while the newest
    verdict asks for sessions (sessions_needed > 0, verdict not `same`) and --confirm allows,
    add the slot's next back-to-back run of the same build (the copy is dropped after: the
    confirming runs never enter the history the later slots are judged against). Returns the
    final verdict, the sessions and the wall seconds used (the runs' own wall time), the first
    verdict and the last newest block."""
    h = os.path.join(tmpdir, "decide.sqlite")
    copy_history(history, h)
    used, wall, first = 0, 0.0, None
    while True:
        index, path, rec = head_runs[used]
        history_add(rpxprof, h, labelled(path, commit, tmpdir))
        used += 1
        wall += rec["wall_s"]
        newest, _ = check_newest(rpxprof, h, confirm, threshold)
        v = newest["verdict"]
        first = first or v
        need = newest.get("sessions_needed")
        # more sessions while the gate asks for them (a slower/faster that wants confirming,
        # or an inconclusive that names how many) and --confirm and the slot's runs allow
        if (v in ("same", "incomparable") or not need or used > confirm
                or used >= len(head_runs)):
            return v, used, wall, first, newest


def analyse_bench(rpxprof, R, bench, a, tmpdir, rows):
    """One benchmark: the history grows by one baseline session per slot (the slot's first
    baseline run); before it is added, slot s's baseline head and (from slot 4) its slow head
    are each decided against the history of slots < s."""
    hist = os.path.join(tmpdir, f"{bench}.sqlite")
    in_hist, last_base, confirm = 0, None, a.confirm
    out = {"aa": [], "ab": [], "aa_cmp": [], "ab_cmp": [], "notes": []}
    for slot in R.slots(bench):
        base, slow = R.get(bench, slot, "base"), R.get(bench, slot, "slow")
        if not base:
            continue
        if in_hist >= 3:
            for kind, runs in (("aa", base), ("ab", slow)):
                if not runs:
                    continue
                commit = f"{kind if kind == 'aa' else 'slow'}-s{slot:02d}"
                v, used, wall, first, newest = decide(rpxprof, hist, runs, commit, confirm,
                                                      a.threshold, tmpdir)
                if confirm and not out["aa"] and not commits_seen(
                        rpxprof, os.path.join(tmpdir, "decide.sqlite"), commit):
                    note = (f"{bench}: the history did not take the commit from the reports' "
                            f"code_sha, so `history check` cannot group a head with its "
                            f"confirming sessions: analysed with --confirm 0 instead of "
                            f"{a.confirm}")
                    print("warning: " + note, file=sys.stderr)
                    out["notes"].append(note)
                    confirm = 0
                    v, used, wall, first, newest = decide(rpxprof, hist, runs, commit, confirm,
                                                          a.threshold, tmpdir)
                out[kind].append({"slot": slot, "verdict": v, "first": first, "sessions": used,
                                  "wall_s": wall, "history": in_hist,
                                  "ratio": newest.get("ratio")})
                cv, res = compare_json(rpxprof, last_base, runs[0][1], hist, a.threshold)
                out[kind + "_cmp"].append({"slot": slot, "verdict": cv,
                                           "ratio": res.get("p50_ratio")})
        history_add(rpxprof, hist, labelled(base[0][1], f"base-s{slot:02d}", tmpdir))
        in_hist += 1
        last_base = base[0][1]
    rows[bench] = out
    return out


def contrast_bench(rpxprof, R, bench, threshold, max_pairs=300, seed=36):
    """No history: plain `compare` of two separate baseline sessions (A/A, pairs of slots) and
    of the previous slot's baseline against a slow session (A/B)."""
    sessions = [(s, R.get(bench, s, "base")[0][1]) for s in R.slots(bench)
                if R.get(bench, s, "base")]
    pairs = list(itertools.combinations(sessions, 2))
    if len(pairs) > max_pairs:
        pairs = random.Random(seed).sample(pairs, max_pairs)
    aa = [compare_json(rpxprof, x[1], y[1], None, threshold)[0] for x, y in pairs]
    ab = []
    prev = None
    for s in R.slots(bench):
        slow = R.get(bench, s, "slow")
        if prev and slow:
            ab.append(compare_json(rpxprof, prev, slow[0][1], None, threshold)[0])
        if R.get(bench, s, "base"):
            prev = R.get(bench, s, "base")[0][1]
    return aa, ab


def pct(k, n):
    if n == 0:
        return "n/a (no sessions)"
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {100 * k / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"


def header(R):
    lo = f"{min(R.loads):.1f}" if R.loads else "n/a"
    hi = f"{max(R.loads):.1f}" if R.loads else "n/a"
    cfg = {}
    if os.path.exists(R.L.config):
        with open(R.L.config) as f:
            cfg = json.load(f)
    slots = sorted({s for b in R.runs.values() for s in b})
    lines = [f"Machine: {machine_words()}, shared with the other work on it.",
             f"{len(slots)} slots recorded {R.first} to {R.last} (UTC) with rpxprof's "
             f"{cfg.get('build_type', '?')} build of {cfg.get('commit', '?')[:12]}; 1-minute load "
             f"{lo}-{hi}; a build (cc1/ld) ran beside {R.beside.get('build', 0)} of {R.nruns} "
             f"runs, "
             f"tests (ctest/pytest/chromium/postgres) beside {R.beside.get('tests', 0)}."]
    return "\n".join(lines)


NAMES = {"demo": "demo_depth 480x640x3 (C)", "stream": "8 MiB stream (C)",
         "pyloop": "pure-Python loop ~0.4 ms"}


def within_slot_ratio(R, bench):
    """The median over slots of slow/base p50 (each slot's first runs, seconds apart): a check
    that the slow build is the 5 % it is built to be."""
    rs = []
    for s in R.slots(bench):
        b, w = R.get(bench, s, "base"), R.get(bench, s, "slow")
        if b and w and b[0][2].get("p50_ms") and w[0][2].get("p50_ms"):
            rs.append(w[0][2]["p50_ms"] / b[0][2]["p50_ms"])
    rs.sort()
    return (f"{rs[len(rs) // 2]:.4f} (range {rs[0]:.4f}-{rs[-1]:.4f}, {len(rs)} slots)"
            if rs else "n/a")


def contrast_table(R, rpxprof, threshold):
    lines = ["| benchmark | A/A pairs of separate sessions said slower/faster (95 % Wilson) "
             "| 5 % slowdown vs previous session called slower |", "|---|---|---|"]
    res = {}
    for bench in BENCHES:
        if not R.slots(bench):
            continue
        aa, ab = contrast_bench(rpxprof, R, bench, threshold)
        res[bench] = {"aa": aa, "ab": ab}
        wrong = sum(v in ("slower", "faster") for v in aa)
        lines.append(f"| {NAMES[bench]} | {pct(wrong, len(aa))} | "
                     f"{pct(sum(v == 'slower' for v in ab), len(ab))} |")
    lines.append("\nThe slow build's p50 over the baseline's in the same slot (the runs seconds "
                 "apart), median: " + "; ".join(f"{b} {within_slot_ratio(R, b)}" for b in BENCHES))
    return "\n".join(lines), res


def selftest():
    """The parts that need no rpxprof: the Wilson interval against published values, the
    clear failure on a missing key."""
    lo, hi = wilson(2, 40)
    assert abs(lo - 0.01382) < 5e-5 and abs(hi - 0.16504) < 5e-5, (lo, hi)
    lo, hi = wilson(0, 40)
    assert lo == 0.0 and abs(hi - 3.8415 / 43.8415) < 1e-4, hi
    assert wilson(0, 0) is None
    try:
        key({"verdict": "same"}, "sessions_needed", "history check --json newest")
    except SystemExit as e:
        assert "no key 'sessions_needed'" in str(e) and "verdict" in str(e), e
    else:
        raise AssertionError("key() did not fail")
    assert has_commit({"series": [{"sessions": [{"commit": "aa-s04"}]}]}, "aa-s04")
    print("selftest: ok")


def contrast_only(a):
    R = Runs(a.outdir, a.slots)
    print(header(R) + "\n")
    print("Without history (`rpxprof compare BASE.json HEAD.json`, threshold "
          f"{a.threshold}):\n")
    text, res = contrast_table(R, os.path.abspath(a.rpxprof), a.threshold)
    print(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


def analyse(a):
    import tempfile
    rpxprof = os.path.abspath(a.rpxprof)
    R = Runs(a.outdir, a.slots)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for bench in BENCHES:
            if R.slots(bench):
                analyse_bench(rpxprof, R, bench, a, tmp, rows)
    ctext, cres = contrast_table(R, rpxprof, a.threshold)
    print(header(R) + "\n")
    print(f"With history (`rpxprof history check --confirm {a.confirm}`: the newest session "
          f"against >= 3 earlier baseline sessions of the same benchmark, one per slot; threshold "
          f"{a.threshold}):\n")
    print("| benchmark | A/A sessions: false verdict (slower/faster), 95 % Wilson | "
          "5 % slower build called `slower` | sessions per decision (A/A; 5 %) | "
          "wall s per decision (A/A; 5 %) | `compare --history` A/A false; 5 % slower |")
    print("|---|---|---|---|---|---|")
    for bench, o in rows.items():
        aa, ab = o["aa"], o["ab"]
        mean = lambda xs: (f"{sum(xs) / len(xs):.2f}" if xs else "n/a")  # noqa: E731
        wrong = sum(x["verdict"] in ("slower", "faster") for x in aa)
        cw = sum(x["verdict"] in ("slower", "faster") for x in o["aa_cmp"])
        cs = sum(x["verdict"] == "slower" for x in o["ab_cmp"])
        print(f"| {NAMES[bench]} | {pct(wrong, len(aa))} | "
              f"{pct(sum(x['verdict'] == 'slower' for x in ab), len(ab))} | "
              f"{mean([x['sessions'] for x in aa])}; {mean([x['sessions'] for x in ab])} | "
              f"{mean([x['wall_s'] for x in aa])}; {mean([x['wall_s'] for x in ab])} | "
              f"{pct(cw, len(o['aa_cmp']))}; {pct(cs, len(o['ab_cmp']))} |")
    aa = [x for o in rows.values() for x in o["aa"]]
    ab = [x for o in rows.values() for x in o["ab"]]
    if len(rows) > 1:
        print(f"| all three | {pct(sum(x['verdict'] in ('slower', 'faster') for x in aa), len(aa))}"
              f" | {pct(sum(x['verdict'] == 'slower' for x in ab), len(ab))} | | | |")
    for o in rows.values():
        for note in o["notes"]:
            print(f"\nNote: {note}")
    print("\nOther verdicts (A/A | 5 %): " + "; ".join(
        f"{b}: " + ", ".join(f"{v} {sum(x['verdict'] == v for x in o['aa'])}|"
                             f"{sum(x['verdict'] == v for x in o['ab'])}" for v in VERDICTS)
        for b, o in rows.items()))
    print("\nThe old behaviour for contrast (no history: `rpxprof compare` of two separate "
          "runs):\n")
    print(ctext)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"history": rows, "contrast": cres}, f, indent=1)

# ---------------------------------------------------------------- the command line

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("outdir")
    r.add_argument("--sessions", type=int, default=44, help="total slots (resume/extend: larger)")
    r.add_argument("--every", type=float, default=90.0, help="seconds between slot starts")
    r.add_argument("--rpxprof", default=os.path.join(os.path.dirname(HERE), "build", "rpxprof"),
                   help="the build to copy into OUTDIR/tool (first call only)")
    r.add_argument("--build-type", default="Release", help="recorded in config.json")
    r.add_argument("--repeats-demo", type=int, default=5000)
    r.add_argument("--repeats-stream", type=int, default=800)
    r.add_argument("--repeats-pyloop", type=int, default=300)
    sub.add_parser("selftest")
    for name in ("analyse", "contrast"):
        x = sub.add_parser(name)
        x.add_argument("outdir")
        x.add_argument("--rpxprof", required=True)
        x.add_argument("--confirm", type=int, default=2,
                       help="history check --confirm N (sessions a slower head may ask for)")
        x.add_argument("--threshold", default="1%")
        x.add_argument("--json", help="also write every verdict to this file")
        x.add_argument("--slots", help="use only these slots, e.g. 1-20")
    a = ap.parse_args(argv)
    if a.cmd == "record":
        record(a)
    elif a.cmd == "selftest":
        selftest()
    elif a.cmd == "analyse":
        analyse(a)
    else:
        contrast_only(a)


if __name__ == "__main__":
    main()
