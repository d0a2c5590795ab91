"""docs/batch.md's Slurm recipe on a real single-node Slurm cluster that
scripts/slurm-cluster.sh starts from Debian's slurm-wlm and munge (its own munge
key, slurm.conf, state, sockets and logs under a temporary folder): the array
with a dependent aggregate, a stepped array, a single index, a list of indices
(refused before any work), a task cancelled mid-run then the array re-submitted with --resume,
each compared with one unsharded run. Every daemon started is stopped by PID,
also when a check fails or the test is killed with SIGTERM/SIGINT.

Exit 77 (counted as skipped by CTest, never as passed) when the machine cannot
run the daemons, saying why: the packages missing, or no root and no sudo."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import common
from common import BIN, MODELS, SOURCE, load_json as load, run

SCRIPT = os.path.join(SOURCE, "scripts", "slurm-cluster.sh")
BIN_ABS = common.BIN = os.path.abspath(BIN)
MODELS_ABS = os.path.abspath(MODELS)
TMP = None                         # the cluster's and the test's folder
ENV = None                         # SLURM_CONF, PATH with rpxprof first


def sh(cmd, cwd=None, env=None, check=True, timeout=60):
    p = subprocess.run(cmd, shell=isinstance(cmd, str), cwd=cwd, env=env or ENV, text=True,
                       capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if check and p.returncode != 0:
        raise AssertionError(f"{cmd}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def doc_block(needle):
    """The fenced sh block of docs/batch.md that contains `needle`."""
    with open(os.path.join(SOURCE, "docs", "batch.md")) as f:
        text = f.read()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    found = [b for b in blocks if needle in b]
    assert len(found) == 1, f"docs/batch.md: {len(found)} sh blocks contain {needle!r}"
    return found[0]


def wait_idle(timeout=150):
    """Wait until the cluster has no job pending or running."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not sh(["squeue", "-h", "-o", "%i %T"]).stdout.strip():
            return
        time.sleep(0.3)
    raise AssertionError("jobs still queued after %d s:\n%s" % (timeout, sh(["squeue"]).stdout))


def job_states(job):
    """{array task id: (state, exit code)} of a job (or array) that has ended."""
    out = sh(["scontrol", "-o", "show", "job", str(job)]).stdout
    states = {}
    for line in out.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        states[int(f.get("ArrayTaskId", "0"))] = (f["JobState"], f["ExitCode"])
    return states


def reports(d):
    return sorted(os.path.relpath(p, d) for p in glob.glob(os.path.join(d, "*", "*.json")))


def make_work(name, busy_ns=1000000):
    """A folder with the manifest (6 jobs of the busy-wait test model), its inputs and
    the documented job script, as a user would lay them out."""
    d = os.path.join(TMP, name)
    os.makedirs(d)
    run("inputs", "make", os.path.join(d, "frame.npz"), "rgb=8x8x3:uint8", check=0)
    run("inputs", "make", os.path.join(d, "pair.npz"), "rgb_a=8x8x3:uint8", "rgb_b=8x8x3:uint8", check=0)
    run("inputs", "make", os.path.join(d, "clip.npz"), "frames=2x8x8x3:uint8", check=0)
    m = {"schema": "rpxprof.manifest/1",
         "defaults": {"warmup": 2, "repeats": 20, "device": "cpu", "precision": "fp32", "processes": 1},
         "tasks": {"image": {"inputs": "frame.npz", "unit": "frame"},
                   "pose": {"inputs": "pair.npz", "unit": "pair"},
                   "video": {"inputs": "clip.npz", "unit": "clip", "meta": {"clip_length": 2}}},
         "models": [{"name": "spin-a", "model": MODELS_ABS + ":busywait", "tasks": ["image", "pose", "video"],
                     "flops": 1e6, "params": 10},
                    {"name": "spin-b", "model": MODELS_ABS + ":busywait", "tasks": ["image", "pose", "video"],
                     "flops": 2e6, "params": 20}]}
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(m, f)
    with open(os.path.join(d, "cpu.sbatch"), "w") as f:
        f.write(doc_block("#SBATCH --job-name=rpxprof-cpu"))
    return d


def submit(d, *args, busy_ns=1000000):
    """sbatch --parsable ARGS in d; the job id."""
    env = dict(ENV, RPX_TEST_BUSY_NS=str(busy_ns))
    return sh(["sbatch", "--parsable", *args], cwd=d, env=env).stdout.strip().split(";")[0]


def shard_lines(d, job):
    """{shard I: (N, complete, skipped)} from the array tasks' logs (rpxprof-%A_%a.out)."""
    got = {}
    for path in glob.glob(os.path.join(d, f"rpxprof-{job}_*.out")):
        with open(path) as f:
            text = f.read()
        m = re.search(r"batch: (\d+) jobs \(shard (\d+)/(\d+) of 6\): (\d+) complete, (\d+) failed, (\d+) skipped",
                      text)
        if m:
            assert int(m[2]) not in got, f"shard {m[2]} ran twice"
            got[int(m[2])] = (int(m[3]), int(m[4]), int(m[6]))
    return got


IDENTITY = ("task", "model_name", "model_callable", "inputs_sha256", "metadata", "warmup_calls",
            "measured_calls", "processes", "device", "precision", "unit", "status")


class SlurmRecipeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.single = make_work("single")
        p = run("batch", "manifest.json", "--out-dir", "results/", "-q", cwd=cls.single,
                env={"RPX_TEST_BUSY_NS": "1000000"})
        assert p.returncode == 0, p.stderr
        cls.every = reports(os.path.join(cls.single, "results"))
        assert len(cls.every) == 6, cls.every

    def same_as_single(self, d):
        self.assertEqual(reports(os.path.join(d, "results")), self.every)
        for rel in self.every:
            a = load(os.path.join(d, "results", rel))
            b = load(os.path.join(self.single, "results", rel))
            for k in IDENTITY:
                self.assertEqual(a.get(k), b.get(k), (d, rel, k))

    def test_gpu_recipe_differs_only_in_its_sbatch_lines(self):
        cpu, gpu = doc_block("--job-name=rpxprof-cpu"), doc_block("--job-name=rpxprof-gpu")
        body = lambda b: [l for l in b.splitlines() if not l.startswith("#SBATCH")]
        self.assertEqual(body(cpu), body(gpu))
        self.assertIn("#SBATCH --gres=gpu:1", gpu)
        self.assertNotIn("gres", cpu)
        self.assertNotIn("--cpus-per-task", cpu)                # runs on any node

    def test_array_and_dependent_aggregate(self):
        d = make_work("array")
        # the documented submission, as written
        sub = doc_block("array=$(sbatch --parsable cpu.sbatch)")
        p = sh(["bash", "-ec", sub + '\necho "ARRAY=$array"\n'], cwd=d)
        array = re.search(r"ARRAY=(\d+)", p.stdout)[1]
        agg = re.search(r"Submitted batch job (\d+)", p.stdout)[1]
        wait_idle()
        self.assertEqual(job_states(array), {i: ("COMPLETED", "0:0") for i in range(4)})
        self.assertEqual(job_states(agg)[0], ("COMPLETED", "0:0"))
        shards = shard_lines(d, array)
        self.assertEqual(sorted(shards), [0, 1, 2, 3])
        self.assertEqual({n for n, _, _ in shards.values()}, {4})
        self.assertEqual(sum(c for _, c, _ in shards.values()), 6)     # every job exactly once
        self.same_as_single(d)
        val = load(os.path.join(d, "summary", "validation.json"))
        self.assertEqual((val["status"], val["profiles_found"], val["errors"]), ("PASS", 6, []))

    def test_stepped_array_and_a_list_of_indices(self):
        d = make_work("stepped")
        job = submit(d, "--array=0-6:2", "cpu.sbatch")
        wait_idle()
        self.assertEqual(job_states(job), {i: ("COMPLETED", "0:0") for i in (0, 2, 4, 6)})
        shards = shard_lines(d, job)
        self.assertEqual(sorted(shards), [0, 1, 2, 3])
        self.assertEqual(sum(c for _, c, _ in shards.values()), 6)
        self.same_as_single(d)
        p = run("aggregate", os.path.join(d, "results"), "--out-dir", os.path.join(d, "summary"),
                "--expect", os.path.join(d, "manifest.json"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # a single index: an array of one task, shard 0/1, the whole manifest
        d = make_work("single-index")
        job = submit(d, "--array=5", "cpu.sbatch")
        wait_idle()
        self.assertEqual(job_states(job), {5: ("COMPLETED", "0:0")})
        self.assertEqual(shard_lines(d, job), {0: (1, 6, 0)})
        self.same_as_single(d)
        # a list (what a user re-submits for the failed tasks 1 and 3): refused before any work
        d = make_work("list")
        job = submit(d, "--array=1,3", "cpu.sbatch")
        wait_idle()
        self.assertEqual(job_states(job), {1: ("FAILED", "2:0"), 3: ("FAILED", "2:0")})
        for i in (1, 3):
            with open(os.path.join(d, f"rpxprof-{job}_{i}.out")) as f:
                text = f.read()
            self.assertIn(f"SLURM_ARRAY_TASK_ID={i} SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=3 "
                          "SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=2", text)
            self.assertIn("--resume", text)
        self.assertFalse(os.path.exists(os.path.join(d, "results")))

    def test_cancelled_task_then_resume(self):
        d = make_work("cancel")
        job = submit(d, "cpu.sbatch", busy_ns=60000000)     # 22 calls x 60 ms: 1.3 s a job
        end = time.monotonic() + 60
        while time.monotonic() < end:                       # task 1 running: cancel it mid-job
            st = sh(["squeue", "-h", "-r", "-j", job, "-o", "%K %T"]).stdout.split("\n")
            if any(line.strip() == "1 RUNNING" for line in st):
                break
            time.sleep(0.1)
        else:
            self.fail("array task 1 never ran: " + sh(["squeue", "-r"]).stdout)
        time.sleep(0.5)
        sh(["scancel", f"{job}_1"])
        wait_idle()
        states = job_states(job)
        self.assertEqual(states[1][0], "CANCELLED", states)
        self.assertEqual({i: states[i] for i in (0, 2, 3)}, {i: ("COMPLETED", "0:0") for i in (0, 2, 3)})
        before = {}
        for rel in reports(os.path.join(d, "results")):
            with open(os.path.join(d, "results", rel), "rb") as f:
                before[rel] = f.read()
        done = [rel for rel, b in before.items() if json.loads(b)["status"] == "complete"]
        print("after the cancel:", {rel: json.loads(b)["status"] for rel, b in before.items()}, flush=True)
        self.assertLess(len(done), 6)                       # shard 1's jobs are missing or interrupted
        # the whole array again, as documented: only the missing jobs run
        job2 = submit(d, "cpu.sbatch")
        wait_idle()
        self.assertEqual(job_states(job2), {i: ("COMPLETED", "0:0") for i in range(4)})
        shards = shard_lines(d, job2)
        self.assertEqual(sum(c for _, c, _ in shards.values()), 6 - len(done))
        self.assertEqual(sum(s for _, _, s in shards.values()), len(done))
        for rel in done:                                    # the others byte-identical
            with open(os.path.join(d, "results", rel), "rb") as f:
                self.assertEqual(f.read(), before[rel], rel)
        self.same_as_single(d)
        p = run("aggregate", os.path.join(d, "results"), "--out-dir", os.path.join(d, "summary"),
                "--expect", os.path.join(d, "manifest.json"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def main():
    global TMP, ENV
    why = subprocess.run([SCRIPT, "check"], capture_output=True, text=True)
    if why.returncode != 0:
        print("SKIPPED: this machine cannot run a Slurm cluster: " + why.stdout.strip(), flush=True)
        sys.exit(77)
    TMP = tempfile.mkdtemp(prefix="rpxslurm-")
    os.chmod(TMP, 0o755)                                # slurmd (root) and the jobs read it
    cluster = os.path.join(TMP, "cluster")

    def stop_on_signal(sig, frame):                         # ctest's timeout, Ctrl-C
        subprocess.run([SCRIPT, "stop", cluster], capture_output=True, timeout=60)
        print(f"stopped the cluster on signal {sig}; kept {TMP}", flush=True)
        os._exit(128 + sig)
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)
    pids = []
    code = 1
    try:
        p = subprocess.run([SCRIPT, "start", cluster], capture_output=True, text=True, timeout=90)
        if p.returncode != 0:
            print("SKIPPED: the Slurm daemons did not start here: " + p.stderr.strip(), flush=True)
            code = 77
            sys.exit(77)
        with open(os.path.join(cluster, "pids")) as f:
            pids = [int(x) for x in f.read().split()]
        bindir = os.path.join(TMP, "bin")
        os.makedirs(bindir)
        os.symlink(BIN_ABS, os.path.join(bindir, "rpxprof"))
        ENV = dict(os.environ, SLURM_CONF=os.path.join(cluster, "slurm.conf"),
                   PATH=bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        r = unittest.main(verbosity=2, exit=False).result
        code = 0 if r.wasSuccessful() else 1
    finally:
        subprocess.run([SCRIPT, "stop", cluster], capture_output=True, text=True, timeout=60)
        left = [p for p in pids if pid_alive(p)]
        if left:
            print(f"FAILED: daemons still running after stop: {left}", flush=True)
            code = 1
        elif pids:
            print(f"stopped the cluster's daemons, PIDs {pids}", flush=True)
        if code != 1:
            shutil.rmtree(TMP, ignore_errors=True)
        else:
            print(f"kept {TMP} (logs under cluster/log)", flush=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
