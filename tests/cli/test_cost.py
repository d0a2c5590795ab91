"""`rpxprof cost` on graphs built with onnx.helper: each supported operator's
output shapes against onnx's own shape inference (opsets <= 17, what the
installed onnx knows) and its MACs, FLOPs and bytes against the formulas of
docs/cost.md, computed here independently; shape arithmetic, control flow,
unsupported operators, totals, options and malformed files."""
import json
import math
import os

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper, shape_inference

from common import SOURCE, TempDirTest, main, run

F = TP.FLOAT
I64 = TP.INT64


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def out(name, dtype=F):
    return helper.make_tensor_value_info(name, dtype, None)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def rnd(name, *shape):
    return numpy_helper.from_array(np.random.default_rng(1).standard_normal(shape).astype(np.float32), name)


def make(nodes, inputs, outputs, inits=(), opset=13, extra_opsets=(), value_info=()):
    g = helper.make_graph(nodes, "t", inputs, outputs, initializer=list(inits),
                          value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in extra_opsets])
    m.ir_version = 8
    return m


def prod(s):
    return int(np.prod(s, dtype=np.int64)) if len(s) else 1


def conv_len(i, k, s=1, d=1, pb=0, pe=0):
    return (i + pb + pe - ((k - 1) * d + 1)) // s + 1


class CostTest(TempDirTest):
    compared = 0

    def cost(self, m, *args, check=0, name="m.onnx", infer=True):
        p = self.path(name)
        onnx.save(m, p)
        r = run("cost", p, "--json", "--per-op", *args)
        if check != 0:
            self.assertEqual(r.returncode, check, r.stderr)
            return r
        self.assertEqual(r.returncode, 0, r.stderr)
        res = json.loads(r.stdout)
        self.validate(res)
        opset = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
        if infer and opset <= 17:
            self.compare_with_onnx(m, res, args)
        return res

    def validate(self, res):
        import jsonschema
        with open(os.path.join(SOURCE, "schemas", "cost.json")) as f:
            jsonschema.Draft202012Validator(json.load(f)).validate(res)

    def compare_with_onnx(self, m, res, args):
        """Every node output whose shape onnx infers must equal ours."""
        m2 = onnx.ModelProto()
        m2.CopyFrom(m)
        binds = {}
        for a, b in zip(args, args[1:]):
            if a == "--dim":
                k, v = b.split("=")
                binds[k] = int(v)
        for i in m2.graph.input:
            for d in i.type.tensor_type.shape.dim:
                if d.HasField("dim_param") and d.dim_param in binds:
                    d.dim_value = binds[d.dim_param]
        inferred = shape_inference.infer_shapes(m2, strict_mode=True)
        shapes = {}
        for v in list(inferred.graph.value_info) + list(inferred.graph.output):
            t = v.type.tensor_type
            if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
                shapes[v.name] = ([d.dim_value for d in t.shape.dim], t.elem_type)
        for n in res["nodes"]:
            for o in n["outputs"]:
                if o["shape"] is None and not n["supported"]:
                    continue  # unknown here: the node is listed as not costed
                if o["name"] in shapes:
                    want, dt = shapes[o["name"]]
                    self.assertEqual(o["shape"], want, f"{n['op_type']} output {o['name']}")
                    CostTest.compared += 1

    def node(self, res, name):
        for n in res["nodes"]:
            if n["name"] == name:
                return n
        self.fail(f"no node {name}")

    def shape(self, res, name):
        return self.node(res, name)["outputs"][0]["shape"]

    def assertCost(self, res, name, macs=None, flops=None, shape=None, read=None, written=None):
        n = self.node(res, name)
        self.assertTrue(n["supported"], n["reason"])
        if shape is not None:
            self.assertEqual(n["outputs"][0]["shape"], list(shape), name)
        if macs is not None:
            self.assertEqual(n["macs"], macs, f"{name} MACs")
        if flops is not None:
            self.assertEqual(n["flops"], flops, f"{name} FLOPs")
        if read is not None:
            self.assertEqual(n["bytes_read"], read, f"{name} bytes read")
        if written is not None:
            self.assertEqual(n["bytes_written"], written, f"{name} bytes written")
        return n

    # ---- dense linear algebra ------------------------------------------
    def test_conv(self):
        # N, C, spatial, M, kernel, strides, dilations, pads, group, bias, auto_pad, give kernel_shape
        cases = [
            (1, 3, [32, 32], 16, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, True, None, True),
            (2, 8, [17, 19], 12, [3, 3], [2, 2], [1, 1], [1, 0, 2, 1], 4, False, None, True),  # grouped, asymmetric pads
            (1, 16, [28, 28], 16, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 16, True, None, True),  # depthwise
            (1, 4, [20, 20], 8, [3, 3], [1, 1], [2, 2], [2, 2, 2, 2], 1, False, None, True),  # dilated
            (1, 3, [15, 15], 4, [3, 3], [2, 2], [1, 1], None, 1, False, "SAME_UPPER", True),
            (1, 3, [15, 16], 4, [3, 2], [2, 1], [1, 1], None, 1, False, "VALID", True),
            (1, 3, [9, 9], 5, [3, 3], [1, 1], [1, 1], [0, 0, 0, 0], 1, True, None, False),  # kernel from weight
            (1, 4, [50], 6, [5], [2], [1], [2, 2], 2, True, None, True),  # 1-D, grouped
            (1, 2, [8, 8, 8], 3, [3, 3, 3], [1, 1, 1], [1, 1, 1], [1] * 6, 1, False, None, True),  # 3-D
        ]
        for i, (n, c, sp, m, k, s, d, pads, g, bias, ap, ks) in enumerate(cases):
            with self.subTest(case=i):
                attrs = dict(strides=s, dilations=d, group=g)
                if ks:
                    attrs["kernel_shape"] = k
                if pads:
                    attrs["pads"] = pads
                if ap:
                    attrs["auto_pad"] = ap
                ins = ["x", "w"] + (["b"] if bias else [])
                inits = [rnd("w", m, c // g, *k)] + ([rnd("b", m)] if bias else [])
                model = make([helper.make_node("Conv", ins, ["y"], name="conv", **attrs)],
                             [vi("x", [n, c, *sp])], [out("y")], inits)
                nsp = len(sp)
                if ap == "SAME_UPPER":
                    osp = [-(-sp[j] // s[j]) for j in range(nsp)]
                elif ap == "VALID":
                    osp = [conv_len(sp[j], k[j], s[j], d[j]) for j in range(nsp)]
                else:
                    osp = [conv_len(sp[j], k[j], s[j], d[j], pads[j], pads[j + nsp]) for j in range(nsp)]
                macs = n * m * prod(osp) * (c // g) * prod(k)
                flops = 2 * macs + (n * m * prod(osp) if bias else 0)
                res = self.cost(model)
                nd = self.assertCost(res, "conv", macs, flops, [n, m, *osp])
                self.assertTrue(nd["dense"])
                self.assertEqual(res["flops_dense"], 2 * macs)
                self.assertEqual(res["params"], prod([m, c // g, *k]) + (m if bias else 0))

    def test_conv_transpose(self):
        cases = [  # N, Cin, H, W, Cout, k, stride, pads, output_padding, group
            (1, 8, 7, 7, 4, 4, 2, [1, 1, 1, 1], [0, 0], 1),
            (2, 6, 5, 6, 9, 3, 2, [1, 0, 1, 0], [1, 1], 3),
        ]
        for i, (n, ci, h, w_, co, k, s, pads, op, g) in enumerate(cases):
            with self.subTest(case=i):
                model = make([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ct",
                                               kernel_shape=[k, k], strides=[s, s], pads=pads,
                                               output_padding=op, group=g)],
                             [vi("x", [n, ci, h, w_])], [out("y")], [rnd("w", ci, co // g, k, k)])
                oh = s * (h - 1) + op[0] + k - pads[0] - pads[2]
                ow = s * (w_ - 1) + op[1] + k - pads[1] - pads[3]
                macs = n * ci * h * w_ * (co // g) * k * k
                self.assertCost(self.cost(model), "ct", macs, 2 * macs, [n, co, oh, ow])
        # output_shape given
        model = make([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ct",
                                       strides=[2, 2], output_shape=[15, 15])],
                     [vi("x", [1, 2, 7, 7])], [out("y")], [rnd("w", 2, 3, 3, 3)])
        self.assertCost(self.cost(model, infer=False), "ct", 1 * 2 * 49 * 3 * 9, shape=[1, 3, 15, 15])

    def test_gemm(self):
        for ta, tb, with_c, alpha, beta in [(0, 0, False, 1.0, 1.0), (1, 1, True, 1.0, 1.0),
                                            (0, 1, True, 0.5, 2.0)]:
            with self.subTest(ta=ta, tb=tb, c=with_c):
                m_, k, n = 4, 6, 5
                a = [k, m_] if ta else [m_, k]
                b = [n, k] if tb else [k, n]
                model = make([helper.make_node("Gemm", ["a", "b"] + (["c"] if with_c else []), ["y"],
                                               name="gemm", transA=ta, transB=tb, alpha=alpha, beta=beta)],
                             [vi("a", a)], [out("y")], [rnd("b", *b)] + ([rnd("c", n)] if with_c else []))
                macs = m_ * n * k
                flops = 2 * macs + (m_ * n if with_c else 0) + (m_ * n if alpha != 1 else 0) + \
                    (m_ * n if with_c and beta != 1 else 0)
                self.assertCost(self.cost(model), "gemm", macs, flops, [m_, n])

    def test_matmul_broadcasting(self):
        cases = [([3, 4], [4, 5], [3, 5], 60), ([2, 1, 4, 5], [3, 5, 6], [2, 3, 4, 6], 2 * 3 * 4 * 6 * 5),
                 ([5], [5, 3], [3], 15), ([2, 3, 5], [5], [2, 3], 30), ([7], [7], [], 7),
                 ([8, 1, 6, 7], [1, 5, 7, 2], [8, 5, 6, 2], 8 * 5 * 6 * 2 * 7)]
        for a, b, y, macs in cases:
            with self.subTest(a=a, b=b):
                model = make([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                             [vi("a", a), vi("b", b)], [out("y")])
                self.assertCost(self.cost(model), "mm", macs, 2 * macs, y)
        # an inner-dimension mismatch is an error naming the node
        model = make([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                     [vi("a", [2, 3]), vi("b", [4, 5])], [out("y")])
        r = self.cost(model, check=1)
        self.assertIn("node 'mm' (MatMul)", r.stderr)

    def test_einsum(self):
        cases = [("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]], [2, 3, 5], 120, 240),
                 ("ij,jk", [[3, 4], [4, 5]], [3, 5], 60, 120),
                 ("...ij,...jk->...ik", [[2, 3, 4], [2, 4, 5]], [2, 3, 5], 120, 240),
                 ("...ij,...jk->...ik", [[2, 3, 4], [1, 4, 5]], [2, 3, 5], 120, 240),
                 ("ij->ji", [[3, 4]], [4, 3], 0, 0),
                 ("ij->i", [[3, 4]], [3], 0, 12)]
        for eq, shapes, y, macs, flops in cases:
            with self.subTest(eq=eq):
                names = [f"x{i}" for i in range(len(shapes))]
                model = make([helper.make_node("Einsum", names, ["y"], name="e", equation=eq)],
                             [vi(nm, s) for nm, s in zip(names, shapes)], [out("y")], opset=13)
                self.assertCost(self.cost(model), "e", macs, flops, y)

    # ---- normalisation, activations, elementwise ----------------------
    def test_normalization(self):
        x = [2, 6, 4, 5]
        e = prod(x)
        cases = [
            ("BatchNormalization", ["x", "s", "b", "m", "v"], {}, 2 * e, 13,
             [rnd("s", 6), rnd("b", 6), rnd("m", 6), rnd("v", 6)]),
            ("InstanceNormalization", ["x", "s", "b"], {}, 8 * e, 13, [rnd("s", 6), rnd("b", 6)]),
            ("LayerNormalization", ["x", "s", "b"], {"axis": -1}, 8 * e, 17, [rnd("s", 5), rnd("b", 5)]),
            ("LayerNormalization", ["x", "s"], {"axis": 2}, 7 * e, 17, [rnd("s", 4, 5)]),
            ("GroupNormalization", ["x", "s", "b"], {"num_groups": 3}, 8 * e, 18, [rnd("s", 3), rnd("b", 3)]),
        ]
        for op, ins, attrs, flops, opset, inits in cases:
            with self.subTest(op=op, attrs=attrs):
                model = make([helper.make_node(op, ins, ["y"], name="n", **attrs)], [vi("x", x)],
                             [out("y")], inits, opset=opset)
                self.assertCost(self.cost(model), "n", 0, flops, x)

    def test_activations(self):
        x = [2, 3, 4]
        e = prod(x)
        cases = [("Relu", {}, 1), ("LeakyRelu", {"alpha": 0.1}, 2), ("Sigmoid", {}, 4),
                 ("HardSigmoid", {}, 4), ("HardSwish", {}, 5), ("Tanh", {}, 1), ("Erf", {}, 1),
                 ("Softplus", {}, 3), ("Elu", {}, 4), ("Selu", {}, 5), ("Celu", {}, 7),
                 ("Softsign", {}, 3), ("ThresholdedRelu", {}, 2), ("Softmax", {"axis": -1}, 5),
                 ("LogSoftmax", {"axis": 1}, 5), ("Exp", {}, 1), ("Sqrt", {}, 1), ("Neg", {}, 1),
                 ("Mish", {}, 5)]
        for op, attrs, per in cases:
            with self.subTest(op=op):
                model = make([helper.make_node(op, ["x"], ["y"], name="a", **attrs)], [vi("x", x)],
                             [out("y")], opset=18 if op == "Mish" else 14)
                self.assertCost(self.cost(model), "a", 0, per * e, x, read=4 * e, written=4 * e)
        # Gelu (opset 20), exact and tanh
        for approx, per in [("none", 5), ("tanh", 9)]:
            model = make([helper.make_node("Gelu", ["x"], ["y"], name="a", approximate=approx)],
                         [vi("x", x)], [out("y")], opset=20)
            self.assertCost(self.cost(model), "a", 0, per * e, x)
        # PRelu with a broadcast slope; Clip with min/max inputs
        model = make([helper.make_node("PRelu", ["x", "s"], ["y"], name="a"),
                      helper.make_node("Clip", ["y", "lo", "hi"], ["z"], name="c")],
                     [vi("x", x)], [out("z")], [rnd("s", 3, 1), const("lo", np.float32(0)),
                                                const("hi", np.float32(6))])
        res = self.cost(model)
        self.assertCost(res, "a", 0, 2 * e, x)
        self.assertCost(res, "c", 0, 2 * e, x)

    def test_elementwise_broadcasting(self):
        model = make([helper.make_node("Add", ["a", "b"], ["y"], name="add"),
                      helper.make_node("Sum", ["y", "a", "b"], ["s"], name="sum"),
                      helper.make_node("Mean", ["y", "a", "b"], ["m"], name="mean"),
                      helper.make_node("Greater", ["y", "b"], ["g"], name="gt"),
                      helper.make_node("Where", ["g", "y", "b"], ["w"], name="where"),
                      helper.make_node("Pow", ["w", "two"], ["p"], name="pow")],
                     [vi("a", [3, 1, 5]), vi("b", [4, 1])], [out("s"), out("m"), out("p")],
                     [const("two", np.float32(2))])
        res = self.cost(model)
        self.assertCost(res, "add", 0, 60, [3, 4, 5], read=4 * (15 + 4), written=4 * 60)
        self.assertCost(res, "sum", 0, 120, [3, 4, 5])
        self.assertCost(res, "mean", 0, 180, [3, 4, 5])
        n = self.assertCost(res, "gt", 0, 60, [3, 4, 5], written=60)  # bool: one byte each
        self.assertEqual(n["outputs"][0]["dtype"], "bool")
        self.assertCost(res, "where", 0, 60, [3, 4, 5])
        self.assertCost(res, "pow", 0, 60, [3, 4, 5])
        model = make([helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                     [vi("a", [3, 2]), vi("b", [4])], [out("y")])
        r = self.cost(model, check=1, infer=False)
        self.assertIn("do not broadcast", r.stderr)

    def test_reductions(self):
        x = [2, 3, 4]
        e = 24
        cases = [
            (13, "ReduceMean", {"axes": [1]}, None, [2, 1, 4], e + 8),
            (13, "ReduceSum", {"keepdims": 0}, [0, 2], [3], e),
            (13, "ReduceSum", {}, None, [1, 1, 1], e),  # no axes: all
            (13, "ReduceL2", {"axes": [2], "keepdims": 0}, None, [2, 3], 2 * e + 6),
            (13, "ReduceSumSquare", {"axes": [0]}, None, [1, 3, 4], 2 * e),
            (13, "ReduceLogSumExp", {"axes": [0]}, None, [1, 3, 4], 2 * e + 12),
            (13, "ArgMax", {"axis": 1, "keepdims": 0}, None, [2, 4], e),
            (18, "ReduceMax", {}, [-1], [2, 3, 1], e),
            (18, "ReduceMean", {"keepdims": 0}, [0, 1], [4], e + 4),
        ]
        for opset, op, attrs, axes_in, y, flops in cases:
            with self.subTest(op=op, opset=opset, attrs=attrs):
                ins, inits = ["x"], []
                if axes_in is not None:
                    ins.append("axes")
                    inits.append(const("axes", np.array(axes_in, np.int64)))
                model = make([helper.make_node(op, ins, ["y"], name="r", **attrs)], [vi("x", x)],
                             [out("y", I64 if op == "ArgMax" else F)], inits, opset=opset)
                self.assertCost(self.cost(model), "r", 0, flops, y)

    def test_pooling(self):
        cases = [
            ("MaxPool", [1, 8, 32, 32], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), [1, 8, 16, 16], 9),
            ("MaxPool", [1, 1, 6, 6], dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), [1, 1, 3, 3], 9),
            ("MaxPool", [1, 1, 7, 7], dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1, pads=[0, 0, 1, 1]), [1, 1, 4, 4], 4),
            ("AveragePool", [1, 4, 8, 8], dict(kernel_shape=[2, 2], strides=[2, 2]), [1, 4, 4, 4], 4),
            ("MaxPool", [1, 2, 10, 10], dict(kernel_shape=[3, 3], dilations=[2, 2]), [1, 2, 6, 6], 9),
            ("LpPool", [1, 2, 4, 4], dict(kernel_shape=[2, 2]), [1, 2, 3, 3], 9),
        ]
        for op, x, attrs, y, per in cases:
            with self.subTest(op=op, attrs=attrs):
                model = make([helper.make_node(op, ["x"], ["y"], name="p", **attrs)], [vi("x", x)],
                             [out("y")])
                self.assertCost(self.cost(model), "p", 0, per * prod(y), y)
        for op, extra in [("GlobalAveragePool", 1), ("GlobalMaxPool", 0)]:
            x = [2, 16, 7, 7]
            model = make([helper.make_node(op, ["x"], ["y"], name="p")], [vi("x", x)], [out("y")])
            self.assertCost(self.cost(model), "p", 0, prod(x) + extra * 32, [2, 16, 1, 1])

    def test_resize(self):
        x = [1, 3, 8, 8]
        cases = [  # mode, scales, sizes, output, FLOPs per output element
            ("nearest", [1, 1, 2, 2], None, [1, 3, 16, 16], 0),
            ("linear", None, [1, 3, 12, 10], [1, 3, 12, 10], 9),
            ("cubic", [1, 1, 2, 2], None, [1, 3, 16, 16], 35),
            ("linear", [1, 1, 1, 1.5], None, [1, 3, 8, 12], 3),
        ]
        for mode, scales, sizes, y, per in cases:
            with self.subTest(mode=mode, scales=scales, sizes=sizes):
                inits = [const("roi", np.zeros(0, np.float32))]
                ins = ["x", "roi"]
                if scales:
                    inits.append(const("scales", np.array(scales, np.float32)))
                    ins.append("scales")
                else:
                    inits.append(const("sizes", np.array(sizes, np.int64)))
                    ins += ["", "sizes"]
                model = make([helper.make_node("Resize", ins, ["y"], name="r", mode=mode)],
                             [vi("x", x)], [out("y")], inits)
                self.assertCost(self.cost(model), "r", 0, per * prod(y), y)
        model = make([helper.make_node("Upsample", ["x", "s"], ["y"], name="u", mode="nearest")],
                     [vi("x", x)], [out("y")], [const("s", np.array([1, 1, 2, 3], np.float32))], opset=9)
        self.assertCost(self.cost(model), "u", 0, 0, [1, 3, 16, 24])

    # ---- data movement and views ---------------------------------------
    def test_data_movement(self):
        i64 = lambda n, v: const(n, np.array(v, np.int64))
        nodes = [
            helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 2, 1]),
            helper.make_node("Concat", ["x", "x2"], ["c"], name="concat", axis=1),
            helper.make_node("Split", ["c", "sp"], ["s1", "s2"], name="split", axis=1),
            helper.make_node("Slice", ["x", "st", "en", "ax", "stp"], ["sl"], name="slice"),
            helper.make_node("Gather", ["table", "idx"], ["g"], name="gather", axis=0),
            helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
            helper.make_node("Expand", ["col", "eshape"], ["e"], name="expand"),
            helper.make_node("Cast", ["x"], ["h"], name="cast", to=TP.FLOAT16),
            helper.make_node("Tile", ["x", "reps"], ["tl"], name="tile"),
            helper.make_node("DepthToSpace", ["d"], ["d2s"], name="d2s", blocksize=2),
            helper.make_node("SpaceToDepth", ["d2s"], ["s2d"], name="s2d", blocksize=2),
            helper.make_node("GatherElements", ["x", "gi"], ["ge"], name="ge", axis=1),
        ]
        inits = [rnd("x2", 2, 5, 6), i64("sp", [3, 5]), i64("st", [1, -1]), i64("en", [4, -10]),
                 i64("ax", [1, 2]), i64("stp", [1, -2]), rnd("table", 10, 4), i64("idx", [1, 7, 3]),
                 i64("pads", [0, 1, 2, 0, 3, 4]), rnd("col", 3, 1), i64("eshape", [2, 3, 4]),
                 i64("reps", [2, 1, 3]), i64("gi", np.zeros((2, 2, 6)))]
        outs = ["t", "s1", "s2", "sl", "g", "p", "e", "h", "tl", "s2d", "ge"]
        model = make(nodes, [vi("x", [2, 3, 6]), vi("d", [1, 8, 3, 3])], [out(o) for o in outs if o != "h"] + [out("h", TP.FLOAT16)], inits)
        res = self.cost(model)
        x = 4 * 36
        self.assertCost(res, "transpose", 0, 0, [2, 6, 3], read=x, written=x)
        self.assertCost(res, "concat", 0, 0, [2, 8, 6], read=x + 4 * 60, written=4 * 96)
        self.assertEqual(self.node(res, "split")["outputs"][1]["shape"], [2, 5, 6])
        self.assertCost(res, "split", 0, 0, [2, 3, 6], read=4 * 96 + 16, written=4 * 96)
        # axis 1: 1..3 → 2; axis 2: 5 down to -1 by -2 → 5, 3, 1
        self.assertCost(res, "slice", 0, 0, [2, 2, 3], read=4 * 12 + 4 * 16, written=4 * 12)
        # a Gather reads only the rows it selects (and its indices)
        self.assertCost(res, "gather", 0, 0, [3, 4], read=4 * 12 + 24, written=4 * 12)
        self.assertCost(res, "pad", 0, 0, [2, 7, 12], read=x + 48, written=4 * 168)
        self.assertCost(res, "expand", 0, 0, [2, 3, 4], read=12 + 24, written=4 * 24)
        self.assertCost(res, "cast", 0, 0, [2, 3, 6], read=x, written=2 * 36)
        self.assertCost(res, "tile", 0, 0, [4, 3, 18], read=x + 24, written=4 * 216)
        self.assertCost(res, "d2s", 0, 0, [1, 2, 6, 6])
        self.assertCost(res, "s2d", 0, 0, [1, 8, 3, 3])
        self.assertCost(res, "ge", 0, 0, [2, 2, 6])
        # Split with num_outputs (opset 18): the last chunk is smaller
        model = make([helper.make_node("Split", ["x"], ["a", "b", "c"], name="split", axis=1, num_outputs=3)],
                     [vi("x", [2, 7])], [out("a"), out("b"), out("c")], opset=18)
        res = self.cost(model)
        self.assertEqual([o["shape"] for o in self.node(res, "split")["outputs"]], [[2, 3], [2, 3], [2, 1]])

    def test_views_are_free(self):
        i64 = lambda n, v: const(n, np.array(v, np.int64))
        nodes = [
            helper.make_node("Reshape", ["x", "shp"], ["r"], name="reshape"),
            helper.make_node("Flatten", ["x"], ["f"], name="flatten", axis=2),
            helper.make_node("Unsqueeze", ["r", "ua"], ["u"], name="unsqueeze"),
            helper.make_node("Squeeze", ["u", "ua"], ["q"], name="squeeze"),
            helper.make_node("Identity", ["q"], ["i"], name="identity"),
            helper.make_node("Dropout", ["i"], ["dr"], name="dropout"),
            helper.make_node("Shape", ["x"], ["sh"], name="shape"),
            helper.make_node("Constant", [], ["k"], name="constant", value=const("kv", np.ones(3, np.float32))),
        ]
        model = make(nodes, [vi("x", [2, 3, 4])], [out("f"), out("dr"), out("sh", I64), out("k")],
                     [i64("shp", [0, -1]), i64("ua", [0, 3])])
        res = self.cost(model)
        for name, shape in [("reshape", [2, 12]), ("flatten", [6, 4]), ("unsqueeze", [1, 2, 12, 1]),
                            ("squeeze", [2, 12]), ("identity", [2, 12]), ("dropout", [2, 12]),
                            ("shape", [3]), ("constant", [3])]:
            self.assertCost(res, name, 0, 0, shape, read=0, written=0)
        self.assertEqual(res["traffic_bytes_unfused"], 0)
        self.assertEqual(res["params"], 3)  # the Constant of 3 floats

    def test_shape_arithmetic_with_dynamic_batch(self):
        """What exporters emit to compute Reshape/Expand targets, folded here."""
        i64 = lambda n, v: const(n, np.array(v, np.int64))
        nodes = [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
            helper.make_node("ReduceProd", ["s"], ["total"], keepdims=0),
            helper.make_node("Div", ["total", "n"], ["per"]),
            helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
            helper.make_node("Unsqueeze", ["per", "ax0"], ["per1"]),
            helper.make_node("Concat", ["n1", "per1"], ["tgt"], axis=0),
            helper.make_node("Reshape", ["x", "tgt"], ["flat"], name="reshape"),
            helper.make_node("MatMul", ["flat", "w"], ["y"], name="fc"),
            # ConstantOfShape, Mul, Equal, Where, Slice, Expand (the class-token pattern)
            helper.make_node("Gather", ["s", "one"], ["c"], axis=0),
            helper.make_node("Unsqueeze", ["c", "ax0"], ["c1"]),
            helper.make_node("ConstantOfShape", ["c1"], ["ones"], value=helper.make_tensor("v", I64, [1], [1])),
            helper.make_node("Mul", ["ones", "minus1"], ["neg"]),
            helper.make_node("Equal", ["neg", "minus1"], ["eq"]),
            helper.make_node("Where", ["eq", "ones", "neg"], ["wh"]),
            helper.make_node("Slice", ["wh", "zero1", "two1"], ["w2"]),
            helper.make_node("Concat", ["n1", "w2"], ["eshape"], axis=0),
            helper.make_node("Expand", ["cls", "eshape"], ["tok"], name="expand"),
            # Range, Sub, Cast
            helper.make_node("Gather", ["s", "two"], ["h"], axis=0),
            helper.make_node("Sub", ["h", "one"], ["h1"]),
            helper.make_node("Range", ["zero", "h1", "one"], ["rg"], name="range"),
            helper.make_node("Cast", ["rg"], ["rgf"], to=F, name="cast"),
        ]
        inits = [i64("zero", 0), i64("one", 1), i64("two", 2), i64("ax0", [0]), i64("minus1", -1),
                 i64("zero1", [0]), i64("two1", [2]), rnd("w", 48, 10), rnd("cls", 1, 1, 8)]
        model = make(nodes, [vi("x", ["N", 3, 4, 4])], [out("y"), out("tok"), out("rgf")], inits)
        for n in (1, 5):
            with self.subTest(N=n):
                res = self.cost(model, "--dim", f"N={n}")
                self.assertEqual(self.shape(res, "reshape"), [n, 48])
                self.assertCost(res, "fc", n * 48 * 10, 2 * n * 48 * 10, [n, 10])
                self.assertEqual(self.shape(res, "expand"), [n, 1, 8])
                self.assertEqual(self.shape(res, "range"), [3])
                self.assertFalse(res["partial"], res["unsupported"])
                self.assertEqual(res["macs"], n * 480)
        r = self.cost(model, check=2)
        self.assertIn("'N'", r.stderr)
        self.assertIn("--dim N=", r.stderr)

    def test_older_opsets(self):
        """Attributes that later became inputs (Slice, Pad, Squeeze, Unsqueeze, Split,
        Reduce*, TopK, Clip, Upsample), read at the model's opset."""
        x = [2, 6, 8]
        cases = [
            (9, helper.make_node("Slice", ["x"], ["y"], name="n", starts=[1, 2], ends=[5, -1], axes=[1, 2]), [2, 4, 5], 0),
            (10, helper.make_node("Pad", ["x"], ["y"], name="n", pads=[0, 1, 2, 0, 1, 2]), [2, 8, 12], 0),
            (11, helper.make_node("Unsqueeze", ["x"], ["y"], name="n", axes=[0, -1]), [1, 2, 6, 8, 1], 0),
            (11, helper.make_node("Split", ["x"], ["y", "y2"], name="n", axis=1, split=[2, 4]), [2, 2, 8], 0),
            (11, helper.make_node("ReduceSum", ["x"], ["y"], name="n", axes=[2], keepdims=0), [2, 6], 96),
            (9, helper.make_node("TopK", ["x"], ["y", "yi"], name="n", k=3), [2, 6, 3], None),
            (7, helper.make_node("Clip", ["x"], ["y"], name="n", min=0.0, max=6.0), [2, 6, 8], 192),
            (7, helper.make_node("Upsample", ["x"], ["y"], name="n", scales=[1.0, 2.0, 2.0]), [2, 12, 16], 0),
            (8, helper.make_node("Softmax", ["x"], ["y"], name="n"), [2, 6, 8], 480),
            (7, helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="n"), [2, 6, 8], 192),
        ]
        for opset, node, y, flops in cases:
            with self.subTest(op=node.op_type, opset=opset):
                inits = [rnd(k, 6) for k in "sbmv"] if node.op_type == "BatchNormalization" else []
                outs = [out(o) if o != "yi" else out(o, I64) for o in node.output]
                res = self.cost(make([node], [vi("x", x)], outs, inits, opset=opset))
                self.assertEqual(self.shape(res, "n"), y)
                n = self.node(res, "n")
                self.assertEqual(n["supported"], flops is not None, n["reason"])
                if flops is not None:
                    self.assertEqual(n["flops"], flops)

    def test_newer_opsets(self):
        """Opsets 18-21, beyond the installed onnx's shape inference: hand-computed shapes."""
        i64 = lambda n, v: const(n, np.array(v, np.int64))
        cases = [
            (18, helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="n"), [2, 3, 4],
             [i64("pads", [1, 2]), i64("axes", [1])], [2, 6, 4], 0),
            (18, helper.make_node("Resize", ["x", "", "scales"], ["y"], name="n", axes=[2, 3], mode="nearest"),
             [1, 3, 4, 4], [const("scales", np.array([2, 2], np.float32))], [1, 3, 8, 8], 0),
            (18, helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="n", axes=[2, 3],
                                  keep_aspect_ratio_policy="not_larger", mode="linear"),
             [1, 3, 4, 8], [i64("sizes", [6, 10])], [1, 3, 5, 10], 3 * 3 * 150),
            (18, helper.make_node("ReduceSumSquare", ["x", "axes"], ["y"], name="n", keepdims=0), [2, 3, 4],
             [i64("axes", [0, 2])], [3], 48),
            (21, helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], name="n", num_groups=2),
             [2, 4, 3], [rnd("s", 4), rnd("b", 4)], [2, 4, 3], 8 * 24),
            (21, helper.make_node("Cast", ["x"], ["y"], name="n", to=22), [4, 6], [], [4, 6], 0),  # int4
        ]
        for opset, node, x, inits, y, flops in cases:
            with self.subTest(op=node.op_type, opset=opset):
                res = self.cost(make([node], [vi("x", x)], [out("y")], inits, opset=opset))
                n = self.assertCost(res, "n", 0, flops, y)
                self.assertEqual(res["warnings"], [])
                self.assertEqual(res["model"]["opset"], opset)
                if node.op_type == "Cast":
                    self.assertEqual(n["outputs"][0]["dtype"], "int4")
                    self.assertEqual(n["bytes_written"], 12)  # half a byte each

    # ---- control flow ----------------------------------------------------
    def test_if_loop_scan(self):
        then_g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["t"], name="mm")], "then", [],
                                   [out("t")])
        else_g = helper.make_graph([helper.make_node("Relu", ["x"], ["e"], name="relu")], "else", [],
                                   [out("e")])
        for cond, macs, flops, shape in [(True, 24, 48, [2, 4]), (False, 0, 6, [2, 3])]:
            with self.subTest(cond=cond):
                model = make([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                                               else_branch=else_g)],
                             [vi("x", [2, 3])], [out("y")], [const("c", np.array(cond)), rnd("w", 3, 4)])
                self.assertCost(self.cost(model, infer=False), "if", macs, flops, shape)
        model = make([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)],
                     [vi("x", [2, 3]), vi("c", [], TP.BOOL)], [out("y")], [rnd("w", 3, 4)])
        res = self.cost(model, infer=False)
        self.assertFalse(self.node(res, "if")["supported"])
        self.assertIn("condition", self.node(res, "if")["reason"])
        self.assertTrue(res["partial"])
        self.assertIsNone(self.node(res, "if")["flops"])

        body = helper.make_graph(
            [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("Add", ["y_in", "x"], ["y_out"], name="add"),
             helper.make_node("Relu", ["y_out"], ["scan_out"], name="relu")],
            "body", [vi("i", [], I64), vi("cond_in", [], TP.BOOL), vi("y_in", [2, 3])],
            [out("cond_out", TP.BOOL), out("y_out"), out("scan_out")])
        model = make([helper.make_node("Loop", ["m", "", "y0"], ["y", "ys"], name="loop", body=body)],
                     [vi("x", [2, 3]), vi("y0", [2, 3])], [out("y"), out("ys")], [const("m", np.array(3, np.int64))])
        res = self.cost(model, infer=False)
        n = self.assertCost(res, "loop", 0, 3 * (6 + 6), [2, 3])
        self.assertEqual(n["outputs"][1]["shape"], [3, 2, 3])
        self.assertEqual(n["iterations"], 3)

        body = helper.make_graph(
            [helper.make_node("Add", ["s_in", "xi"], ["s_out"]), helper.make_node("Mul", ["xi", "xi"], ["sq"])],
            "sbody", [vi("s_in", [4]), vi("xi", [4])], [out("s_out"), out("sq")])
        model = make([helper.make_node("Scan", ["s0", "xs"], ["s", "sqs"], name="scan", body=body,
                                       num_scan_inputs=1)],
                     [vi("s0", [4]), vi("xs", [5, 4])], [out("s"), out("sqs")])
        res = self.cost(model, infer=False)
        n = self.assertCost(res, "scan", 0, 5 * 8, [4])
        self.assertEqual(n["outputs"][1]["shape"], [5, 4])

    # ---- unsupported operators and totals ----------------------------------
    def test_unsupported_is_never_zero(self):
        model = make([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                      helper.make_node("Unique", ["r"], ["d"], name="det"),
                      helper.make_node("Relu", ["d"], ["y"], name="after"),
                      helper.make_node("Foo", ["r"], ["z"], name="custom", domain="com.example")],
                     [vi("x", [4, 5, 5])], [out("y"), out("z")], extra_opsets=[("com.example", 1)])
        res = self.cost(model)
        self.assertTrue(res["partial"])
        self.assertAlmostEqual(res["coverage"], 0.25)
        self.assertEqual(res["flops"], 100)  # the first Relu alone
        ops = {u["op_type"]: u for u in res["unsupported"]}
        self.assertEqual(set(ops), {"Unique", "Relu", "Foo"})
        self.assertIn("number of distinct values (known only at run time)", ops["Unique"]["reason"])
        self.assertIn("'d'", ops["Relu"]["reason"])  # after Det: its input's shape is unknown
        self.assertIn("com.example", ops["Foo"]["reason"])
        for name in ("det", "after", "custom"):
            n = self.node(res, name)
            self.assertFalse(n["supported"])
            self.assertIsNone(n["flops"])
            self.assertIsNone(n["macs"])
        row = {r["op_type"]: r for r in res["by_op"]}
        self.assertIsNone(row["Unique"]["flops"])
        self.assertEqual(row["Relu"]["flops"], 100)
        self.assertEqual(row["Relu"]["unsupported"], 1)
        self.assertIsNone(res["activation_peak_bytes"])
        t = run("cost", self.path("m.onnx"))
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertIn("PARTIAL", t.stdout)
        self.assertIn("Unique x 1", t.stdout)
        self.assertIn("1 of 4 nodes costed", t.stdout)
        # TopK: shapes known (downstream nodes are costed), cost not modelled
        model = make([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk", axis=1),
                      helper.make_node("Relu", ["v"], ["y"], name="after")],
                     [vi("x", [3, 10])], [out("y"), out("i", I64)], [const("k", np.array([4], np.int64))])
        res = self.cost(model)
        self.assertFalse(self.node(res, "topk")["supported"])
        self.assertCost(res, "after", 0, 12, [3, 4])

    def test_params_and_liveness(self):
        nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm1"),
                 helper.make_node("MatMul", ["x", "w"], ["b"], name="mm2"),  # same weight: counted once
                 helper.make_node("Constant", [], ["k"], value=const("kv", np.ones(5, np.float32))),
                 helper.make_node("Constant", [], ["one"], value=const("ov", np.float32(1))),
                 helper.make_node("Add", ["a", "b"], ["c"], name="add"),
                 helper.make_node("Add", ["c", "k"], ["d"], name="addk"),
                 helper.make_node("Mul", ["d", "one"], ["e"], name="mul"),
                 helper.make_node("Reshape", ["e", "shp"], ["y"], name="view")]
        inits = [rnd("w", 4, 5), const("shp", np.array([-1], np.int64)),
                 numpy_helper.from_array(np.ones(6, np.float16), "unused_half")]
        model = make(nodes, [vi("x", [3, 4])], [out("y")], inits)
        res = self.cost(model)
        self.assertEqual(res["params"], 20 + 5 + 6)
        pd = res["params_detail"]
        self.assertEqual(pd["by_dtype"]["float32"]["count"], 25)
        self.assertEqual(pd["by_dtype"]["float16"]["count"], 6)
        self.assertEqual(pd["by_dtype"]["float16"]["storage_bytes"], 12)
        self.assertEqual(pd["integer_constants"], {"count": 1, "storage_bytes": 8})
        self.assertEqual(self.node(res, "mm1")["params"], 20)
        self.assertEqual(self.node(res, "mm2")["params"], 0)
        # liveness: x(48) … at add: a, b, c live (3 x 60); at addk: c, d → peak 180
        self.assertEqual(res["activation_peak_bytes"], 180)
        # ideal traffic: weights once (all constant tensors) + inputs + outputs
        self.assertEqual(res["traffic_bytes_ideal"], 4 * 20 + 4 * 5 + 4 + 8 + 12 + 48 + 60)
        self.assertAlmostEqual(res["intensity_ideal"], res["flops"] / res["traffic_bytes_ideal"])
        half = self.cost(model, "--precision", "fp16")
        self.assertEqual(res["param_bytes"], 4 * 25 + 2 * 6)  # stored dtypes
        self.assertEqual(half["param_bytes"], 2 * 31)
        self.assertEqual(half["precision"], "fp16")
        self.assertEqual(half["flops"], res["flops"])

    def test_value_info_is_a_cross_check(self):
        model = make([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                      helper.make_node("Relu", ["r"], ["y"], name="relu2")],
                     [vi("x", [2, 3])], [out("y")], value_info=[vi("r", [2, 4])])
        res = self.cost(model, infer=False)
        self.assertEqual(self.shape(res, "relu"), [2, 3])
        self.assertTrue(any("value_info" in w and "'r'" in w for w in res["warnings"]), res["warnings"])

    # ---- options and errors -------------------------------------------------
    def test_options(self):
        model = make([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [vi("x", ["batch", 3, "h", "w"])], [out("y")])
        res = self.cost(model, "--input", "x=2x3x10x20")
        self.assertEqual(res["model"]["inputs"][0]["shape"], [2, 3, 10, 20])
        res = self.cost(model, "--dim", "batch=1", "--dim", "h=4", "--dim", "w=5")
        self.assertEqual(res["flops"], 60)
        for args, code, text in [
            ((), 2, "'batch'"),
            (("--dim", "batch=1"), 2, "'h'"),
            (("--dim", "nope=3", "--input", "x=1x3x4x4"), 2, "no input has a dynamic dimension named 'nope'"),
            (("--input", "y=1x3x4x4"), 2, "no input of that name"),
            (("--input", "x=1x3x4"), 2, "rank 4"),
            (("--input", "x=1x4x4x4"), 2, "fixed at 3"),
            (("--input", "x=1x3x0x4"), 2, "is 0"),
            (("--input", "x=100000000x3x100000000x100000000"), 2, "absurd"),
            (("--input", "x=1x3xhx4"), 2, "DIMS"),
            (("--input", "x=1x3x4x4", "--precision", "fp7"), 2, "fp7"),
        ]:
            with self.subTest(args=args):
                r = self.cost(model, *args, check=code)
                self.assertIn(text, r.stderr)
                self.assertEqual(r.stdout, "")
        r = run("cost", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("--per-op", r.stdout)
        self.assertEqual(run("cost").returncode, 2)
        self.assertEqual(run("cost", "a.onnx", "b.onnx").returncode, 2)
        t = run("cost", self.path("m.onnx"), "--input", "x=1x3x4x4", "--per-op")
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertIn("relu", t.stdout)
        self.assertIn("coverage    1 of 1 nodes costed", t.stdout)

    def test_fuzz_regression_pad_overflow(self):
        """Regression test for the fuzzer's find: pads near 2^62 overflowed the padded
        dimension (signed overflow). Now a clear error, never a crash."""
        pads = numpy_helper.from_array(np.array([0, 2**62, 0, 2**62], np.int64), "pads")
        g = helper.make_graph([helper.make_node("Pad", ["x", "pads"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TP.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TP.FLOAT, None)], [pads])
        path = os.path.join(self.tmp, "pad.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
        p = run("cost", path, "--json")
        self.assertIn(p.returncode, (1, 2), p.stderr)
        self.assertIn("pad.onnx", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_malformed_files(self):
        good = make([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], [vi("x", [1, 3, 8, 8])],
                    [out("y")], [rnd("w", 4, 3, 3, 3)])
        data = good.SerializeToString()
        cases = {
            "truncated.onnx": (data[: len(data) * 2 // 3], "truncated"),
            "text.onnx": (b"hello, this is not a model\n" * 4, "not an ONNX model"),
            "zip.onnx": (b"PK\x03\x04" + bytes(100), "zip archive"),
            "empty.onnx": (b"", "empty"),
        }
        for name, (blob, text) in cases.items():
            with self.subTest(name=name):
                with open(self.path(name), "wb") as f:
                    f.write(blob)
                r = run("cost", self.path(name))
                self.assertEqual(r.returncode, 1, r.stdout)
                self.assertIn(name, r.stderr)
                self.assertIn(text, r.stderr)
        r = run("cost", self.path("missing.onnx"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot open", r.stderr)
        graphs = {
            "cycle": (make([helper.make_node("Add", ["x", "b"], ["a"], name="first"),
                            helper.make_node("Relu", ["a"], ["b"], name="second")],
                           [vi("x", [2])], [out("b")]), "cycle"),
            "undefined": (make([helper.make_node("Add", ["x", "ghost"], ["y"], name="n1")],
                               [vi("x", [2])], [out("y")]), "'ghost' is not defined"),
            "channels": (make([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
                              [vi("x", [1, 3, 8, 8])], [out("y")], [rnd("w", 4, 2, 3, 3)]),
                         "input has 3 channels"),
            "absurd": (make([helper.make_node("Add", ["x", "h"], ["y"], name="add")], [vi("x", [2])],
                            [out("y")], [TP(name="h", data_type=F, dims=[1 << 45])]), "absurd"),
            "twice": (make([helper.make_node("Relu", ["x"], ["y"], name="a"),
                            helper.make_node("Relu", ["x"], ["y"], name="b")], [vi("x", [2])], [out("y")]),
                      "defined twice"),
        }
        for name, (m, text) in graphs.items():
            with self.subTest(name=name):
                r = self.cost(m, check=1, name=name + ".onnx")
                self.assertIn(name + ".onnx", r.stderr)
                self.assertIn(text, r.stderr)

    def test_zz_shapes_were_compared(self):
        # runs last (alphabetical): the comparisons with onnx really happened
        self.assertGreater(CostTest.compared, 100)


if __name__ == "__main__":
    main()
