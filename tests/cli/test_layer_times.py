"""--layers' report through the CLI: the reports unit.test_layer_times wrote (a stand-in
target whose per-node profiler reports conv_small.onnx's node names with known times;
fixture layer_reports) against `rpxprof cost --per-op`, the schema, `rpxprof trace`,
`rpxprof compare` and `rpxprof aggregate`."""
import json
import os
import shutil
import unittest

from common import TempDirTest, main, run, validate_profile

FIXTURES = os.environ.get("RPX_FIXTURES", "build/fixtures")
LAYERS = os.path.join(FIXTURES, "layers")
ONNX = os.path.join(FIXTURES, "onnx_small", "good", "conv_small.onnx")


def report(name):
    with open(os.path.join(LAYERS, name)) as f:
        return json.load(f)


class LayerTimesTest(TempDirTest):
    def setUp(self):
        super().setUp()
        if not os.path.exists(os.path.join(LAYERS, "run.json")):
            self.fail("no %s: unit.test_layer_times writes it (ctest fixture layer_reports)"
                      % os.path.join(LAYERS, "run.json"))

    # ---- the report ----
    def test_schema(self):
        for name in ("run.json", "run_overhead.json", "run_off.json"):
            validate_profile(report(name))
        self.assertIsNone(report("run_off.json")["layers"])
        self.assertIn("by_process", report("run.json")["layers"])  # --timeline was on

    def test_rows_against_cost_per_op(self):
        """Each row's FLOPs, MACs and bytes are the sum of `rpxprof cost --per-op`'s for the
        nodes it covers (the fused conv+relu row: both); no row is faster than its bound;
        rows with unattributed sum to the total."""
        out = run("cost", ONNX, "--per-op", "--json", check=0).stdout
        nodes = {n["name"]: n for n in json.loads(out)["nodes"]}
        ly = report("run.json")["layers"]
        fused = [r for r in ly["rows"] if r["nodes"] and len(r["nodes"]) > 1]
        self.assertEqual([r["nodes"] for r in fused], [["conv", "relu"]])
        for r in ly["rows"]:
            if r["name"] == "unattributed":
                self.assertIsNone(r["flops"])
                continue
            self.assertEqual(r["flops"], sum(nodes[n]["flops"] for n in r["nodes"]), r["name"])
            self.assertEqual(r["macs"], sum(nodes[n]["macs"] for n in r["nodes"]), r["name"])
            self.assertEqual(r["bytes"], sum(nodes[n]["bytes_read"] + nodes[n]["bytes_written"]
                                             for n in r["nodes"]), r["name"])
            self.assertLessEqual(r["bound_ms"], r["time_ms"], r["name"])
            self.assertLessEqual(r["achieved"], 1.0, r["name"])
        self.assertAlmostEqual(sum(r["time_ms"] for r in ly["rows"]), ly["total_ms"], places=9)
        self.assertAlmostEqual(sum(r["share"] for r in ly["rows"]), 1.0, places=9)
        ops = {g["op_type"]: g for g in ly["by_op_type"]}
        self.assertEqual(ops["FusedConv"]["flops"], nodes["conv"]["flops"] + nodes["relu"]["flops"])
        times = [g["time_ms"] for g in ly["by_op_type"]]
        self.assertEqual(times, sorted(times, reverse=True))

    # ---- the trace ----
    def test_trace_nests_layers_under_profiled_calls(self):
        out = self.path("trace.json")
        run("trace", os.path.join(LAYERS, "run.json"), "-o", out, check=0)
        with open(out) as f:
            ev = json.load(f)["traceEvents"]
        ly = report("run.json")["layers"]
        for pid in (1, 2, 3):
            timed = [e for e in ev if e.get("cat") == "timed" and e["pid"] == pid]
            prof = [e for e in ev if e.get("cat") == "profiled" and e["pid"] == pid]
            layer = [e for e in ev if e.get("cat") == "layer" and e["pid"] == pid]
            self.assertEqual(len(prof), ly["profiled_calls"])
            last = max(e["ts"] + e["dur"] for e in timed)
            self.assertGreaterEqual(min(e["ts"] for e in prof), last)  # after the timed calls
            self.assertEqual(len(layer), 4 * len(prof))
            for e in layer:
                call = prof[e["args"]["profiled_call"]]
                self.assertGreaterEqual(e["ts"], call["ts"])
                self.assertLessEqual(e["ts"] + e["dur"], call["ts"] + call["dur"] + 0.001)
            self.assertEqual({e["name"] for e in layer},
                             {"conv_relu_fused", "pool", "flatten", "fc"})

    # ---- compare and aggregate ----
    def test_compare_by_op_type(self):
        a, b = os.path.join(LAYERS, "run.json"), os.path.join(LAYERS, "run_overhead.json")
        text = run("compare", a, b).stdout
        self.assertIn("per operator type (--layers", text)
        self.assertRegex(text, r"FusedConv +base [0-9.]+ % at [0-9.e-]+ of its bound, new")
        res = json.loads(run("compare", a, b, "--json").stdout)
        self.assertEqual(res["layers"][0]["op_type"], "FusedConv")
        self.assertEqual(set(res["layers"][0]), {"op_type", "base", "new"})
        res = json.loads(run("compare", a, os.path.join(LAYERS, "run_off.json"), "--json").stdout)
        self.assertIsNone(res["layers"])
        self.assertNotIn("per operator type", run("compare", a, os.path.join(LAYERS, "run_off.json")).stdout)

    def test_aggregate_by_op_type(self):
        d = self.path("batch")
        os.makedirs(os.path.join(d, "task"))
        shutil.copy(os.path.join(LAYERS, "run.json"), os.path.join(d, "task", "stand_in.json"))
        shutil.copy(os.path.join(LAYERS, "run_off.json"), os.path.join(d, "task", "no_layers.json"))
        out = self.path("agg")
        run("aggregate", d, "--out-dir", out)
        with open(os.path.join(out, "summary.md")) as f:
            md = f.read()
        self.assertIn("Per operator type (--layers", md)
        self.assertRegex(md, r"\| task \| stand_in \| FusedConv [0-9.]+ % of the time at [0-9.e-]+ "
                             r"of its bound; ")
        self.assertNotIn("| no_layers | FusedConv", md)


if __name__ == "__main__":
    main()
