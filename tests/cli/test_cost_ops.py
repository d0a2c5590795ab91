"""`rpxprof cost` on the shape-following standard operators of issue 18
(scatters, CumSum, GridSample, RoiAlign, the RNN family, OneHot, Trilu, ...)
and Einsum with more than two operands, on graphs built with onnx.helper:
every output shape against onnx's own shape inference, every count against
the formulas of docs/cost.md, computed here from the shapes."""
import numpy as np
from onnx import helper

import test_cost as tc
from common import TempDirTest, main
from test_cost import F, I64, const, make, out, prod, rnd, vi


class OpsTest(TempDirTest):
    cost = tc.CostTest.cost
    validate = tc.CostTest.validate
    compare_with_onnx = tc.CostTest.compare_with_onnx
    node = tc.CostTest.node
    shape = tc.CostTest.shape
    assertCost = tc.CostTest.assertCost

    def test_scatter_cumsum_trilu(self):
        data, upd = [2, 6, 5], [2, 3, 5]
        nodes = [helper.make_node("ScatterND", ["x", "ind", "u"], ["a"], name="snd"),
                 helper.make_node("ScatterND", ["x", "ind", "u"], ["b"], name="snd_add", reduction="add"),
                 helper.make_node("ScatterElements", ["x", "ie", "ue"], ["c"], name="se", axis=1),
                 helper.make_node("CumSum", ["x", "ax"], ["d"], name="cs"),
                 helper.make_node("Trilu", ["x"], ["e"], name="tri", upper=0),
                 helper.make_node("ReverseSequence", ["x", "sl"], ["f"], name="rev", batch_axis=0, time_axis=1)]
        m = make(nodes, [vi("x", data), vi("u", upd), vi("ue", [2, 2, 5])],
                 [out(o) for o in "abcdef"],
                 [const("ind", np.zeros([2, 3, 2], np.int64)), const("ie", np.zeros([2, 2, 5], np.int64)),
                  const("ax", np.array(1, np.int64)), const("sl", np.array([6, 6], np.int64))], opset=16)
        res = self.cost(m)
        b = 4 * prod(data)
        self.assertCost(res, "snd", 0, 0, data, read=b + 8 * 12 + 4 * prod(upd), written=b)
        self.assertCost(res, "snd_add", 0, prod(upd), data)
        self.assertCost(res, "se", 0, 0, data)
        self.assertCost(res, "cs", 0, prod(data), data)
        self.assertCost(res, "tri", 0, 0, data)
        self.assertCost(res, "rev", 0, 0, data)
        self.assertFalse(res["partial"])

    def test_grid_sample(self):
        x, grid = [2, 3, 10, 12], [2, 7, 9, 2]
        y = [2, 3, 7, 9]
        nodes = [helper.make_node("GridSample", ["x", "g"], ["a"], name="bil"),
                 helper.make_node("GridSample", ["x", "g"], ["b"], name="near", mode="nearest"),
                 helper.make_node("GridSample", ["x", "g"], ["c"], name="cub", mode="bicubic")]
        res = self.cost(make(nodes, [vi("x", x), vi("g", grid)], [out("a"), out("b"), out("c")], opset=16))
        coords = 4 * 2 * prod(grid[:3])  # 4 FLOPs per grid point and axis
        self.assertCost(res, "bil", 0, 9 * prod(y) + coords, y)
        self.assertCost(res, "near", 0, coords, y)
        self.assertCost(res, "cub", 0, 35 * prod(y) + coords, y)

    def test_roi_align(self):
        nodes = [helper.make_node("RoiAlign", ["x", "r", "bi"], ["a"], name="ra", output_height=7,
                                  output_width=5, sampling_ratio=2),
                 helper.make_node("RoiAlign", ["x", "r", "bi"], ["b"], name="adaptive", output_height=7,
                                  output_width=5)]
        res = self.cost(make(nodes, [vi("x", [1, 8, 20, 20]), vi("r", [6, 4]), vi("bi", [6], I64)],
                             [out("a"), out("b")], opset=16))
        y = [6, 8, 7, 5]
        self.assertCost(res, "ra", 0, prod(y) * (4 * 10 + 1), y)
        n = self.node(res, "adaptive")
        self.assertFalse(n["supported"])
        self.assertIsNone(n["flops"])
        self.assertIn("sampling_ratio 0", n["reason"])
        self.assertEqual(n["outputs"][0]["shape"], y)  # the shape is known all the same
        self.assertTrue(res["partial"])

    def test_rnn_family(self):
        seq, batch, inp, h = 5, 3, 6, 4
        cases = [("LSTM", 4, 1, "forward", 30), ("GRU", 3, 1, "forward", 23),
                 ("RNN", 1, 1, "forward", 4), ("GRU", 3, 2, "bidirectional", 23),
                 ("LSTM", 4, 2, "bidirectional", 30)]
        for op, gates, dirs, direction, per in cases:
            with self.subTest(op=op, direction=direction):
                nodes = [helper.make_node(op, ["x", "w", "r", "b"], ["y", "yh"], name="rnn",
                                          hidden_size=h, direction=direction)]
                inits = [rnd("w", dirs, gates * h, inp), rnd("r", dirs, gates * h, h),
                         rnd("b", dirs, 2 * gates * h)]
                res = self.cost(make(nodes, [vi("x", [seq, batch, inp])], [out("y"), out("yh")], inits,
                                     opset=14))
                macs = seq * batch * dirs * gates * h * (inp + h)
                self.assertCost(res, "rnn", macs, 2 * macs + per * seq * batch * dirs * h,
                                [seq, dirs, batch, h])
                self.assertEqual(self.node(res, "rnn")["outputs"][1]["shape"], [dirs, batch, h])
                self.assertTrue(self.node(res, "rnn")["dense"])
                self.assertEqual(res["macs"], macs)
        # batch-first layout (opset 14) and no bias
        nodes = [helper.make_node("GRU", ["x", "w", "r"], ["y", "yh"], name="rnn", hidden_size=h, layout=1)]
        res = self.cost(make(nodes, [vi("x", [batch, seq, inp])], [out("y"), out("yh")],
                             [rnd("w", 1, 3 * h, inp), rnd("r", 1, 3 * h, h)], opset=14))
        macs = seq * batch * 3 * h * (inp + h)
        self.assertCost(res, "rnn", macs, 2 * macs + 17 * seq * batch * h, [batch, seq, 1, h])

    def test_rnn_sequence_lens_at_run_time(self):
        nodes = [helper.make_node("LSTM", ["x", "w", "r", "", "sl"], ["y"], name="rnn", hidden_size=4)]
        res = self.cost(make(nodes, [vi("x", [5, 2, 3]), vi("sl", [2], TP_INT32)], [out("y")],
                             [rnd("w", 1, 16, 3), rnd("r", 1, 16, 4)], opset=14))
        n = self.node(res, "rnn")
        self.assertFalse(n["supported"])
        self.assertIn("sequence_lens", n["reason"])
        self.assertIsNone(res["macs"])  # no dense node contributed: unknown, never 0
        self.assertIsNone(res["flops_dense"])
        self.assertEqual(res["dense_coverage"], 0)

    def test_one_hot_eyelike_misc(self):
        nodes = [helper.make_node("OneHot", ["i", "depth", "vals"], ["a"], name="oh", axis=1),
                 helper.make_node("EyeLike", ["m"], ["b"], name="eye"),
                 helper.make_node("Hardmax", ["m"], ["c"], name="hm"),
                 helper.make_node("LRN", ["x"], ["d"], name="lrn", size=3),
                 helper.make_node("Cosh", ["m"], ["e"], name="cosh"),
                 helper.make_node("DynamicQuantizeLinear", ["m"], ["q", "s", "z"], name="dq")]
        m = make(nodes, [vi("i", [4, 5], I64), vi("m", [6, 7]), vi("x", [1, 4, 5, 5])],
                 [out("a"), out("b"), out("c"), out("d"), out("e"), out("q", 2), out("s"), out("z", 2)],
                 [const("depth", np.array(10, np.int64)), const("vals", np.array([0, 1], np.float32))],
                 opset=13)
        res = self.cost(m)
        self.assertCost(res, "oh", 0, 0, [4, 10, 5])
        self.assertCost(res, "eye", 0, 0, [6, 7])
        self.assertCost(res, "hm", 0, 84, [6, 7])
        self.assertCost(res, "lrn", 0, 100 * 7, [1, 4, 5, 5])
        self.assertCost(res, "cosh", 0, 42, [6, 7])
        self.assertCost(res, "dq", 0, 6 * 42, [6, 7])
        self.assertFalse(res["partial"])

    def test_integer_and_quantized_products(self):
        u8, i32 = 2, 6
        nodes = [helper.make_node("MatMulInteger", ["a", "b"], ["mi"], name="mmi"),
                 helper.make_node("QLinearMatMul", ["a", "s", "z", "b", "s", "z", "s", "z"], ["qm"], name="qmm"),
                 helper.make_node("ConvInteger", ["x", "w"], ["ci"], name="convi", kernel_shape=[3, 3]),
                 helper.make_node("QLinearConv", ["x", "s", "z", "w", "s", "z", "s", "z"], ["qc"], name="qconv",
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
        m = make(nodes, [vi("a", [2, 5, 6], u8), vi("b", [6, 7], u8), vi("x", [1, 4, 9, 9], u8),
                         vi("w", [8, 4, 3, 3], u8)],
                 [out("mi", i32), out("qm", u8), out("ci", i32), out("qc", u8)],
                 [const("s", np.array(0.1, np.float32)), const("z", np.array(0, np.uint8))])
        res = self.cost(m)
        self.assertCost(res, "mmi", 2 * 5 * 7 * 6, 2 * 2 * 5 * 7 * 6, [2, 5, 7])
        self.assertEqual(self.node(res, "mmi")["outputs"][0]["dtype"], "int32")
        self.assertCost(res, "qmm", 2 * 5 * 7 * 6, None, [2, 5, 7])
        self.assertEqual(self.node(res, "qmm")["outputs"][0]["dtype"], "uint8")
        self.assertCost(res, "convi", 8 * 7 * 7 * 36, None, [1, 8, 7, 7])
        self.assertCost(res, "qconv", 8 * 9 * 9 * 36, None, [1, 8, 9, 9])
        self.assertEqual(res["dense_coverage"], 1.0)

    def test_partial_totals_are_lower_bounds(self):
        # MatMul (costed) -> custom op -> MatMul (its input shape unknown) -> Relu
        nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm1"),
                 helper.make_node("Foo", ["a"], ["b"], name="custom", domain="com.example"),
                 helper.make_node("MatMul", ["b", "w2"], ["c"], name="mm2"),
                 helper.make_node("Relu", ["x"], ["d"], name="relu")]
        m = make(nodes, [vi("x", [4, 8])], [out("c"), out("d")], [rnd("w", 8, 16), rnd("w2", 16, 2)],
                 extra_opsets=[("com.example", 1)])
        res = self.cost(m)
        self.assertTrue(res["partial"])
        self.assertEqual(res["macs"], 4 * 8 * 16)  # the costed MatMul's: a lower bound
        self.assertEqual(res["flops"], 2 * 4 * 8 * 16 + 32)
        self.assertEqual(res["coverage"], 0.5)
        self.assertEqual(res["dense_coverage"], 0.5)
        t = tc.run("cost", self.path("m.onnx"))
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertIn("MACs        \u2265 512 (50 % of nodes costed, 50 % of dense nodes; a lower bound)",
                      t.stdout)
        self.assertIn("FLOPs       \u2265 1.056 k (50 % of nodes costed", t.stdout)
        # nothing dense costed: MACs null, not 0; the elementwise FLOPs still a lower bound
        nodes = [helper.make_node("Foo", ["x"], ["b"], name="custom", domain="com.example"),
                 helper.make_node("MatMul", ["b", "w"], ["c"], name="mm"),
                 helper.make_node("Relu", ["x"], ["d"], name="relu")]
        res = self.cost(make(nodes, [vi("x", [4, 8])], [out("c"), out("d")], [rnd("w", 8, 16)],
                             extra_opsets=[("com.example", 1)]))
        self.assertIsNone(res["macs"])
        self.assertEqual(res["flops"], 32)
        self.assertEqual(res["dense_coverage"], 0)
        t = tc.run("cost", self.path("m.onnx"))
        self.assertIn("MACs        n/a (no dense node is costed; 33 % of nodes costed, 0 % of dense nodes)",
                      t.stdout)
        # a fully costed graph without dense nodes: 0 MACs is a count; dense_coverage null
        res = self.cost(make([helper.make_node("Relu", ["x"], ["d"], name="relu")], [vi("x", [4, 8])],
                             [out("d")]))
        self.assertEqual(res["macs"], 0)
        self.assertIsNone(res["dense_coverage"])
        self.assertFalse(res["partial"])

    def test_loop_whose_carried_value_grows(self):
        # h = Concat(h, x.W) three times: each iteration costed at its own sizes, h is 4x64 after
        body = helper.make_graph(
            [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm_body"),
             helper.make_node("Concat", ["h_in", "xw"], ["h_out"], name="cat", axis=0)],
            "body", [vi("i", [], I64), vi("cond_in", [], tc.TP.BOOL), vi("h_in", None)],
            [out("cond_out", tc.TP.BOOL), out("h_out")])
        nodes = [helper.make_node("Loop", ["m", "", "x"], ["h"], name="loop", body=body),
                 helper.make_node("MatMul", ["h", "w2"], ["y"], name="after")]
        res = self.cost(make(nodes, [vi("x", [1, 64])], [out("y")],
                             [const("m", np.array(3, np.int64)), rnd("w", 64, 64), rnd("w2", 64, 64)]),
                        infer=False)
        loop = self.assertCost(res, "loop", 3 * 64 * 64, None, [4, 64])
        self.assertEqual(loop["iterations"], 3)
        self.assertCost(res, "after", 4 * 64 * 64, 2 * 4 * 64 * 64, [4, 64])
        self.assertEqual(res["macs"], 3 * 64 * 64 + 4 * 64 * 64)
        self.assertFalse(res["partial"])
        # the same with a trip count computed at run time: h's first dimension is unknown
        nodes[0] = helper.make_node("Loop", ["mm", "", "x"], ["h"], name="loop", body=body)
        res = self.cost(make(nodes, [vi("x", [1, 64]), vi("mm", [], I64)], [out("y")],
                             [rnd("w", 64, 64), rnd("w2", 64, 64)]), infer=False)
        self.assertFalse(self.node(res, "loop")["supported"])
        self.assertEqual(self.shape(res, "loop"), [None, 64])
        after = self.node(res, "after")
        self.assertFalse(after["supported"])
        self.assertIsNone(after["macs"])

    def test_scan_state_that_grows(self):
        # a Scan state that grows is never handed on with one iteration's shape
        body = helper.make_graph(
            [helper.make_node("Concat", ["s_in", "xi"], ["s_out"], axis=0)],
            "sbody", [vi("s_in", None), vi("xi", [4])], [out("s_out")])
        nodes = [helper.make_node("Scan", ["s0", "xs"], ["s"], name="scan", body=body, num_scan_inputs=1),
                 helper.make_node("Relu", ["s"], ["y"], name="after")]
        res = self.cost(make(nodes, [vi("s0", [4]), vi("xs", [5, 4])], [out("y")]), infer=False)
        self.assertFalse(self.node(res, "scan")["supported"])
        self.assertEqual(self.shape(res, "scan"), [None])
        self.assertFalse(self.node(res, "after")["supported"])

    def test_while_loop(self):
        # the condition is computed in the body: the scan output's length is known only at run time
        body = helper.make_graph(
            [helper.make_node("MatMul", ["h_in", "w"], ["hw"], name="mm_body"),
             helper.make_node("Tanh", ["hw"], ["h_out"]),
             helper.make_node("ReduceSum", ["h_out"], ["s"], keepdims=0),
             helper.make_node("Less", ["s", "limit"], ["cond_out"]),
             helper.make_node("Identity", ["h_out"], ["scan"])],
            "body", [vi("i", [], I64), vi("cond_in", [], tc.TP.BOOL), vi("h_in", [1, 64])],
            [out("cond_out", tc.TP.BOOL), out("h_out"), out("scan")])
        nodes = [helper.make_node("Loop", ["m", "c0", "x"], ["h", "hs"], name="loop", body=body),
                 helper.make_node("MatMul", ["hs", "w2"], ["y"], name="after_scan"),
                 helper.make_node("MatMul", ["h", "w2"], ["z"], name="after_h")]
        res = self.cost(make(nodes, [vi("x", [1, 64])], [out("y"), out("z")],
                             [const("m", np.array(7, np.int64)), const("c0", np.array(True)),
                              const("limit", np.array(1e6, np.float32)), rnd("w", 64, 64), rnd("w2", 64, 64)]),
                        infer=False)
        loop = self.node(res, "loop")
        self.assertFalse(loop["supported"])
        self.assertIn("condition is computed in its body", loop["reason"])
        self.assertEqual(loop["outputs"][1]["shape"], [None, 1, 64])  # not 7 (the maximum)
        self.assertEqual(loop["outputs"][0]["shape"], [1, 64])  # the carried value keeps its shape
        after = self.node(res, "after_scan")
        self.assertFalse(after["supported"])
        self.assertIsNone(after["macs"])
        self.assertCost(res, "after_h", 64 * 64, None, [1, 64])
        self.assertTrue(res["partial"])
        self.assertEqual(res["macs"], 64 * 64)  # a lower bound
        self.assertEqual(res["dense_coverage"], 1 / 3)

    def test_messages(self):
        import onnx
        import os
        # an int64 Reshape target stored in external data: read when the file is there
        nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"),
                 helper.make_node("Reshape", ["a", "target"], ["r"], name="reshape"),
                 helper.make_node("Relu", ["r"], ["y"], name="relu")]
        m = make(nodes, [vi("x", [4, 8])], [out("y")], [rnd("w", 8, 16), const("target", np.array([8, 8], np.int64))])
        p = self.path("ext.onnx")
        onnx.save(m, p, save_as_external_data=True, all_tensors_to_one_file=True, location="ext.onnx.data",
                  size_threshold=0)
        self.assertEqual(onnx.load(p, load_external_data=False).graph.initializer[1].data_location, 1)
        r = tc.run("cost", p, "--json", "--per-op")
        self.assertEqual(r.returncode, 0, r.stderr)
        import json
        res = json.loads(r.stdout)
        self.assertCost(res, "reshape", 0, 0, [8, 8])
        self.assertCost(res, "relu", 0, 64, [8, 8])
        self.assertFalse(res["partial"])
        os.remove(self.path("ext.onnx.data"))
        res = json.loads(tc.run("cost", p, "--json", "--per-op").stdout)
        n = self.node(res, "reshape")
        self.assertFalse(n["supported"])
        self.assertIn("stored in external data ('ext.onnx.data') that could not be read", n["reason"])
        self.assertNotIn("run time", n["reason"])
        self.assertEqual(res["macs"], 4 * 8 * 16)  # the MatMul still counts (a lower bound)
        # NonZero: its output's length depends on the data, and it says so
        nodes = [helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
                 helper.make_node("Transpose", ["nz"], ["t"], name="after")]
        res = self.cost(make(nodes, [vi("x", [3, 4])], [out("t", I64)]), infer=False)
        n = self.node(res, "nonzero")
        self.assertIn("depends on the data", n["reason"])
        self.assertNotIn("shapes are known", n["reason"])
        self.assertEqual(n["outputs"][0]["shape"], [2, None])

    def test_einsum_many_operands(self):
        # a chain: (x0 x1) x2 costs 2*100*3 + 2*3*50 = 900; x0 (x1 x2) costs 15000 + 10000
        cases = [("ij,jk,kl->il", [[2, 100], [100, 3], [3, 50]], [2, 50], 900, "(0 x 1), (0+1 x 2)"),
                 ("ij,jk,kl->il", [[50, 3], [3, 100], [100, 2]], [50, 2], 900, "(1 x 2), (0 x 1+2)"),
                 # implicit output, a batch dim and a label summed away in operand 2
                 ("bij,bjk,bkm", [[4, 2, 3], [4, 3, 5], [4, 5, 6]], [2, 6], 4 * 2 * 3 * 5 + 4 * 2 * 5 * 6,
                  "(0 x 1), (0+1 x 2)"),
                 ("i,i,i,i->", [[7], [7], [7], [7]], [], 21, None)]
        for eq, shapes, y, macs, order in cases:
            with self.subTest(eq=eq, shapes=shapes):
                names = [f"x{i}" for i in range(len(shapes))]
                model = make([helper.make_node("Einsum", names, ["y"], name="e", equation=eq)],
                             [vi(nm, s) for nm, s in zip(names, shapes)], [out("y")], opset=13)
                res = self.cost(model)
                n = self.assertCost(res, "e", macs, 2 * macs, y)
                self.assertIn("cheapest pairwise order", n["note"])
                if order:
                    self.assertIn(order, n["note"])


TP_INT32 = 6

if __name__ == "__main__":
    main()
