"""`rpxprof cost` shape rules for every operator of the ONNX standard (issue 18):
one-node models built with onnx.helper for the operators covered last (the
signal operators, MaxUnpool, MaxRoiPool, the losses, the random generators,
...), each output shape against onnx.shape_inference.infer_shapes; and a
coverage check: every operator of the default domain (latest version, not
deprecated) has a shape rule in src/cost/ops.c or is on DATA_DEPENDENT below
with the reason its output shape is not known before run time."""
import os
import re

import numpy as np
import onnx
import onnx.defs
from onnx import helper, shape_inference

import test_cost as tc
from common import TempDirTest, main
from test_cost import F, I64, const, make, out, vi

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# output shape known only at run time (or not a tensor): the reason rpxprof gives.
# (NonZero has a rule: its rank and first dimension are known, its length is not.)
DATA_DEPENDENT = {
    "Compress": "number of true values",
    "Unique": "number of distinct values",
    "NonMaxSuppression": "number of boxes kept",
    "StringNormalizer": "stop words",
    **{op: "not tensors" for op in (
        "Optional", "OptionalGetElement", "SequenceAt", "SequenceConstruct", "SequenceEmpty",
        "SequenceErase", "SequenceInsert", "SequenceMap", "SplitToSequence", "ConcatFromSequence")},
}


def standard_ops():
    latest = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain in ("", "ai.onnx") and (s.name not in latest or
                                            s.since_version > latest[s.name].since_version):
            latest[s.name] = s
    return sorted(n for n, s in latest.items() if not s.deprecated)


def ruled_ops():
    """the operators of rpxprof's table (src/cost/ops.c) that have a shape rule"""
    with open(os.path.join(ROOT, "src", "cost", "ops.c")) as f:
        text = f.read()
    return {op for op, fn in re.findall(r'\{"([A-Za-z0-9]+)", (\w+),', text)
            if fn not in ("rpx__infer_data_dependent", "NULL")} | {"If", "Loop", "Scan"}


def one(op, inputs, inits=(), n_out=1, opset=17, **attrs):
    """a one-node model: inputs are (name, shape) pairs or '' for an absent input"""
    names = [i if isinstance(i, str) else i[0] for i in inputs]
    outs = [f"y{k}" for k in range(n_out)]
    node = helper.make_node(op, names, outs, name="n", **attrs)
    graph_in = [vi(i[0], i[1], i[2] if len(i) > 2 else F) for i in inputs if not isinstance(i, str)]
    return make([node], graph_in, [out(o, 0) for o in outs], inits, opset=opset)


class ShapeRulesTest(TempDirTest):
    cost = tc.CostTest.cost
    validate = tc.CostTest.validate
    compare_with_onnx = tc.CostTest.compare_with_onnx
    node = tc.CostTest.node

    def check(self, model, want=None, by_onnx=True):
        """every output: rpxprof's shape is known and equals onnx's (and want's, if given);
        by_onnx=False where onnx's inference gives none (or a wrong one): want's only"""
        res = self.cost(model, infer=False)
        onnx_shapes = {}
        if by_onnx:
            inferred = shape_inference.infer_shapes(model, strict_mode=True)
            onnx_shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
                           for v in list(inferred.graph.value_info) + list(inferred.graph.output)
                           if v.type.tensor_type.HasField("shape")}
        n = self.node(res, "n")
        op = n["op_type"]
        for k, o in enumerate(n["outputs"]):
            self.assertIsNotNone(o["shape"], f"{op} output {k}: {n['reason']}")
            if by_onnx:
                self.assertIn(o["name"], onnx_shapes, f"onnx infers no shape for {op} output {k}")
                self.assertEqual(o["shape"], onnx_shapes[o["name"]], f"{op} output {k}")
            if want is not None:
                self.assertEqual(o["shape"], want[k], f"{op} output {k}")
        return n

    def test_signal_operators(self):
        i64 = lambda name, v: const(name, np.array(v, np.int64))  # noqa: E731
        for op in ("HannWindow", "HammingWindow", "BlackmanWindow"):
            with self.subTest(op=op):
                self.check(one(op, ["size"], [i64("size", 10)]), [[10]])
                self.check(one(op, ["size"], [i64("size", 7)], output_datatype=11), [[7]])
        self.check(one("MelWeightMatrix", ["b", "l", "sr", "lo", "hi"],
                       [i64("b", 8), i64("l", 64), i64("sr", 16000),
                        const("lo", np.array(0, np.float32)), const("hi", np.array(8000, np.float32))]),
                   [[33, 8]])
        for attrs, x, want, length in [({}, [2, 16, 1], [2, 16, 2], None),
                                       ({"onesided": 1}, [2, 16, 1], [2, 9, 2], None),
                                       ({"axis": 2}, [2, 3, 10, 2], [2, 3, 10, 2], None),
                                       ({"onesided": 1, "axis": 2}, [2, 3, 10, 1], [2, 3, 6, 1 + 1], None),
                                       ({}, [2, 16, 2], [2, 20, 2], 20)]:
            with self.subTest(op="DFT", attrs=attrs, x=x, length=length):
                ins = [("x", x)] + (["len"] if length else [])
                self.check(one("DFT", ins, [i64("len", length)] if length else [], **attrs), [want])
        # onnx 1.12's inference counts one frame more when onesided=1 and none of its
        # own defaults when the attribute is absent (the schema's is 1): those
        # cases are checked against (L - frame_length) // step + 1 and frame_length // 2 + 1
        for attrs, x, extra, want in [({"onesided": 0}, [2, 100, 1], {"w": 16}, [2, 22, 16, 2]),
                                      ({"onesided": 0}, [1, 64, 2], {"w": 8}, [1, 15, 8, 2]),
                                      ({"onesided": 0}, [3, 50, 1], {"fl": 10}, [3, 11, 10, 2]),
                                      ({"onesided": 1}, [2, 100, 1], {"w": 16}, [2, 22, 9, 2]),
                                      ({}, [3, 50, 1], {"fl": 10}, [3, 11, 6, 2])]:
            with self.subTest(op="STFT", attrs=attrs, extra=extra):
                inits = [i64("step", 4)]
                ins = [("x", x), "step"]
                if "w" in extra:
                    ins.append("w")
                    inits.append(const("w", np.ones(extra["w"], np.float32)))
                else:
                    ins += ["", "fl"]
                    inits.append(i64("fl", extra["fl"]))
                self.check(one("STFT", ins, inits, **attrs), [want], by_onnx=attrs.get("onesided") == 0)

    def test_pooling_losses_random(self):
        self.check(one("MaxUnpool", [("x", [2, 3, 4, 5]), ("i", [2, 3, 4, 5], I64)],
                       kernel_shape=[2, 2], strides=[2, 2]), [[2, 3, 8, 10]])
        self.check(one("MaxUnpool", [("x", [1, 2, 5, 5]), ("i", [1, 2, 5, 5], I64)],
                       kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1]), [[1, 2, 9, 5]])
        self.check(one("MaxUnpool", [("x", [1, 2, 4, 4]), ("i", [1, 2, 4, 4], I64), "os"],
                       [const("os", np.array([1, 2, 9, 9], np.int64))], kernel_shape=[2, 2], strides=[2, 2]),
                   [[1, 2, 9, 9]], by_onnx=False)  # onnx infers nothing from output_shape
        self.check(one("MaxRoiPool", [("x", [2, 8, 20, 20]), ("r", [5, 5])], pooled_shape=[7, 3]),
                   [[5, 8, 7, 3]])
        for op in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"):
            for red, want in [("mean", []), ("sum", []), ("none", [4, 6, 7])]:
                with self.subTest(op=op, reduction=red):
                    n_out = 2 if op == "SoftmaxCrossEntropyLoss" else 1
                    self.check(one(op, [("x", [4, 5, 6, 7]), ("t", [4, 6, 7], I64)], n_out=n_out,
                                   reduction=red), [want, [4, 5, 6, 7]][:n_out])
        self.check(one("RandomNormal", [], shape=[3, 4, 5]), [[3, 4, 5]])
        self.check(one("RandomUniform", [], shape=[6], dtype=11), [[6]])
        self.check(one("Multinomial", [("x", [4, 10])], sample_size=7), [[4, 7]])
        self.check(one("TfIdfVectorizer", [("x", [3, 6], I64)], mode="TF", min_gram_length=1,
                       max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0, 1, 4],
                       pool_int64s=[1, 2, 3]), [[3, 5]])

    def test_newer_than_onnx_here(self):
        """operators of opsets 18-20, which the onnx package here (1.12) does not know:
        the shapes the spec gives, computed here"""
        i64 = lambda name, v: const(name, np.array(v, np.int64))  # noqa: E731
        self.check(one("AffineGrid", [("t", [2, 2, 3]), "sz"], [i64("sz", [2, 3, 10, 12])], opset=20),
                   [[2, 10, 12, 2]], by_onnx=False)
        self.check(one("AffineGrid", [("t", [1, 3, 4]), "sz"], [i64("sz", [1, 1, 4, 5, 6])], opset=20),
                   [[1, 4, 5, 6, 3]], by_onnx=False)
        self.check(one("Col2Im", [("x", [2, 3 * 2 * 3, 20]), "im", "bl"],
                       [i64("im", [5, 8]), i64("bl", [2, 3])], opset=18), [[2, 3, 5, 8]], by_onnx=False)
        self.check(one("CenterCropPad", [("x", [3, 20, 10]), "s"], [i64("s", [12, 14])], opset=18, axes=[1, 2]),
                   [[3, 12, 14]], by_onnx=False)
        self.check(one("CenterCropPad", [("x", [3, 20, 10]), "s"], [i64("s", [5, 6, 7])], opset=18),
                   [[5, 6, 7]], by_onnx=False)
        self.check(one("DeformConv", [("x", [2, 4, 10, 12]), ("w", [6, 4, 3, 3]), ("o", [2, 18, 5, 6]),
                                      ("b", [6])], opset=19, strides=[2, 2], pads=[1, 1, 1, 1]),
                   [[2, 6, 5, 6]], by_onnx=False)
        self.check(one("RegexFullMatch", [("x", [3, 4], 8)], opset=20, pattern="a.*"), [[3, 4]], by_onnx=False)
        self.check(one("StringConcat", [("x", [3, 4], 8), ("y", [4], 8)], opset=20), [[3, 4]], by_onnx=False)

    def test_data_dependent_say_why(self):
        res = self.cost(one("Compress", [("x", [4, 5]), ("c", [4], 9)], axis=0), infer=False)
        n = self.node(res, "n")
        self.assertFalse(n["supported"])
        self.assertIn("number of true values", n["reason"])
        self.assertIsNone(n["outputs"][0]["shape"])
        res = self.cost(one("Unique", [("x", [4, 5])], n_out=4), infer=False)
        self.assertIn("number of distinct values", self.node(res, "n")["reason"])

    def test_every_standard_operator_is_covered(self):
        ruled = ruled_ops()
        missing = [op for op in standard_ops() if op not in ruled and op not in DATA_DEPENDENT]
        self.assertEqual(missing, [], "standard operators with neither a shape rule in src/cost/ops.c "
                                      "nor a place on DATA_DEPENDENT")
        wrongly = sorted(op for op in DATA_DEPENDENT if op in ruled)
        self.assertEqual(wrongly, [], "on DATA_DEPENDENT but given a shape rule")


if __name__ == "__main__":
    main()
