"""`rpxprof run` with the cost and roofline layers: --cost, --flops/--params,
--gpu, --gpu-spec, and the real-time budget, checked against hand arithmetic."""
import json
import os

import numpy as np

from common import MODELS, TempDirTest, main, run, save_matmul_onnx, validate_profile


class LayersTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, rgb=np.zeros((8, 8, 3), np.uint8))

    def profile(self, *args, model=None, check=0, inputs=None):
        out = self.path("r.json")
        p = run("run", "--model", model or f"{MODELS}:busywait", "--inputs",
                inputs or self.inputs, "--warmup", "2", "--repeats", "50", "--quiet",
                "--output", out, *args, env={"RPX_TEST_BUSY_NS": "2000000"}, check=check)
        if check != 0:
            return p, None
        with open(out) as f:
            r = json.load(f)
        validate_profile(r)
        return p, r

    def test_declared_cost_and_reference_bounds(self):
        _, r = self.profile("--flops", "100e9", "--params", "25e6", "--precision", "fp32")
        e = r["efficiency"]
        self.assertEqual(e["source"], "declared")
        self.assertEqual(e["flops"], 100e9)
        self.assertEqual(e["macs"], 50e9)          # the reference's FLOPs / 2
        self.assertTrue(e["macs_derived"])
        # issue 26: rpxprof's reports use one traffic formula, the graph's; declared
        # parameters have no graph, so the traffic is unknown (not the reference's 3 x
        # parameter bytes, which `rpxprof.reference`'s derive_tier1 keeps) and a note says so
        self.assertIsNone(e["traffic_bytes_ideal"])
        self.assertIsNone(e["traffic_formula"])
        self.assertFalse(e["traffic_is_heuristic"])
        self.assertIsNone(e["intensity_ideal"])
        self.assertEqual(sum("memory traffic is unknown" in n and "--cost" in n
                             and "3 x parameter bytes" in n for n in r["notes"]), 1)
        roof = r["roofline"]
        self.assertEqual(set(roof), {"host-cpu", "ref-a100-80gb", "ref-rtx4090",
                                     "ref-jetson-orin-64gb"})
        a100 = roof["ref-a100-80gb"]["ideal"]
        self.assertAlmostEqual(a100["compute_ms"], 100e9 / 19.5e12 * 1e3, places=9)
        self.assertIsNone(a100["memory_ms"])  # compute only: no bottleneck is claimed
        self.assertIsNone(a100["bottleneck"])
        p50 = r["latency"]["p50_ms"]
        self.assertAlmostEqual(roof["ref-a100-80gb"]["achieved_fraction"]["ideal"],
                               a100["latency_ms"] / p50, places=12)
        self.assertIsNotNone(roof["host-cpu"]["ideal"]["compute_ms"])
        budget = r["realtime_budget"]
        self.assertEqual([x["hz"] for x in budget["rates"]], [5, 10, 30])
        for x in budget["rates"]:
            self.assertAlmostEqual(x["beta"], p50 / (1000 / x["hz"]), places=12)
            self.assertEqual(x["realtime"], x["beta"] <= 1)

    def test_no_cost_gives_null_bounds_with_a_reason(self):
        _, r = self.profile()
        self.assertIsNone(r["efficiency"]["flops"])
        self.assertIsNone(r["roofline"])  # one null, not four empty targets (issue 18)
        self.assertEqual(sum("roofline bounds are null" in n for n in r["notes"]), 1)
        self.assertTrue(any("FLOPs are unknown" in n for n in r["notes"]))
        self.assertTrue(any("precision 'unspecified'" in n for n in r["notes"]))

    def test_chosen_gpu_and_user_spec(self):
        spec = self.path("lab.json")
        with open(spec, "w") as f:
            json.dump({"gpus": [{"key": "lab-gpu", "name": "Lab GPU", "memory_gb": 48,
                                 "memory_bandwidth_gbps": 1000,
                                 "peak_tflops": {"fp32": 50, "fp16": 100}}]}, f)
        _, r = self.profile("--flops", "1e12", "--precision", "fp16", "--gpu", "lab-gpu",
                            "--gpu-spec", spec)
        self.assertEqual(list(r["roofline"]), ["lab-gpu"])
        self.assertAlmostEqual(r["roofline"]["lab-gpu"]["ideal"]["compute_ms"], 10.0, places=9)
        p, _ = self.profile("--flops", "1e12", "--gpu", "no-such-gpu", check=2)  # a bad command line
        self.assertIn("no GPU with key 'no-such-gpu'", p.stderr)

    def test_clip_budget_per_frame(self):
        clip = self.path("clip.npz")
        np.savez(clip, frames=np.zeros((4, 8, 8, 3), np.uint8))
        _, r = self.profile("--unit", "clip", "--meta", "clip_length=250", inputs=clip)
        b = r["realtime_budget"]
        self.assertEqual(b["frames_per_unit"], 250)
        self.assertAlmostEqual(b["per_frame_ms"], r["latency"]["p50_ms"] / 250, places=12)
        _, r = self.profile("--unit", "clip", "--budget-hz", "24", inputs=clip)
        self.assertEqual(r["realtime_budget"]["frames_per_unit"], 4)
        self.assertEqual([x["hz"] for x in r["realtime_budget"]["rates"]], [24])

    def test_cost_from_onnx(self):
        model = save_matmul_onnx(self.path("mm.onnx"))
        p, _ = self.profile("--cost", model, check=1)
        self.assertIn("n", p.stderr)  # the unbound dimension is named
        _, r = self.profile("--cost", model, "--input", "x=4x64", "--precision", "fp32")
        e = r["efficiency"]
        self.assertEqual(e["source"], "onnx")
        self.assertEqual(e["macs"], 4 * 64 * 32)
        self.assertEqual(e["flops"], 2 * 4 * 64 * 32)
        self.assertEqual(e["params"], 64 * 32)
        self.assertEqual(e["traffic_formula"], "graph: weights once + the graph's inputs and outputs")
        self.assertEqual(e["traffic_bytes_ideal"], (64 * 32 + 4 * 64 + 4 * 32) * 4)
        cost = json.loads(run("cost", model, "--input", "x=4x64", "--json", check=0).stdout)
        self.assertEqual(cost["flops"], e["flops"])
        self.assertIsNotNone(r["roofline"]["ref-a100-80gb"]["unfused"])
        p, _ = self.profile("--cost", model, "--flops", "1", check=2)
        self.assertIn("one or the other", p.stderr)


if __name__ == "__main__":
    main()
