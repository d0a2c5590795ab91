"""compare --run's pairs by CPU against a model slower on one CPU (issue 27,
acceptance): `cpu_skewed` (300 us a call on the lowest allowed CPU, 200 us on
the others) against its twin `cpu_skewed_scaled` 5 % slower says `slower` in
every one of 10 comparisons, and against its twin at the same speed never says
`faster` or `slower` in 10. The processes alternate between CPUs that run the
model 1.5x apart, which the pairs (process k of each on the same CPU) take out
of the ratio's interval. Busy-waits in 20 `compare --run`s of 5 + 5 processes,
so it runs alone and only in the normal build (ASan adds nothing to a busy-wait
but minutes; cli.placement checks compare --run's code under ASan)."""
import json
import os

import numpy as np

from common import MODELS, SANITIZED, TempDirTest, main, run

ALLOWED = sorted(os.sched_getaffinity(0))
# 5 processes: 3 on the slow CPU and 2 on a fast one where 2 CPUs are allowed, so
# that the pooled p50 lies in one CPU's cluster, not in the gap between two halves
ARGS = ["--processes", "5", "--repeats", "150", "--warmup", "2", "--json"]


class ComparePairedTest(TempDirTest):
    def setUp(self):
        super().setUp()
        if SANITIZED:
            self.skipTest("20 compare --run of busy-waits: statistics, run in the normal build "
                          "only (cli.placement runs compare --run under ASan)")
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))

    def compare(self, scale, i):
        out = self.path(f"cmp{scale}_{i}")
        p = run("compare", "--run", "-m", f"{MODELS}:cpu_skewed", "-m",
                f"{MODELS}:cpu_skewed_scaled", "--inputs", self.inputs, *ARGS, "--out-dir", out,
                env={"RPX_TEST_SCALE": scale, "RPX_TEST_SLOW_CPU": str(ALLOWED[0]),
                     "RPX_TEST_SLOW_NS": "300000", "RPX_TEST_FAST_NS": "200000"})
        c = json.loads(p.stdout)
        self.assertEqual(c["design"], "paired_by_cpu", c)
        return c

    def test_a_5_percent_slower_twin_is_slower_in_10_of_10_and_itself_never_differs(self):
        seen = {"1.05": [], "1.0": []}
        for i in range(10):  # the two conditions alternate: a drift falls on both
            for scale in ("1.05", "1.0"):
                c = self.compare(scale, i)
                seen[scale].append((c["verdict"], round(c["p50_ratio"], 4),
                                    [round(x, 4) for x in c["p50_ratio_ci"] or []]))
        if len(ALLOWED) >= 2:  # the model really ran 1.5x apart on the CPUs of the run
            with open(self.path("cmp1.0_0", "base.json")) as f:
                r = json.load(f)
            by_cpu = {}
            for b in r["latency_by_process"]:
                by_cpu.setdefault(b["cpus"][0]["cpu"], []).append(b["p50_ms"])
            self.assertAlmostEqual(min(by_cpu[ALLOWED[0]]) / max(by_cpu[ALLOWED[1]]), 1.5,
                                   delta=0.15, msg=by_cpu)
        self.assertEqual([v for v, _, _ in seen["1.05"]], ["slower"] * 10, seen["1.05"])
        self.assertFalse([s for s in seen["1.0"] if s[0] in ("faster", "slower")], seen["1.0"])
        for _, ratio, _ in seen["1.05"]:
            self.assertAlmostEqual(ratio, 1.05, delta=0.02)


if __name__ == "__main__":
    main()
