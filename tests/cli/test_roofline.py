"""`rpxprof gpus` and `rpxprof roofline` on real files: the spec table and its
schema, user spec files, name matching, the reference's worked numbers, cost
files and run reports, the SVG picture and the CPU measurement."""
import json
import os
import xml.etree.ElementTree as ET

from common import SANITIZED, SOURCE, TempDirTest, main, run


def schema(name):
    import jsonschema
    with open(os.path.join(SOURCE, "schemas", name)) as f:
        return jsonschema.Draft202012Validator(json.load(f))


def validate_gpus(doc):
    schema("gpus.json").validate(doc)


def validate_roofline(doc):
    schema("roofline.json").validate(doc)


class GpusTest(TempDirTest):
    def write(self, name, obj):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return path

    def test_table(self):
        out = run("gpus", check=0).stdout
        lines = {l.split()[0]: l.split() for l in out.splitlines()[1:] if l.strip()}
        for key in ("h200-sxm", "h100-sxm", "h100-pcie", "h100-nvl", "b200", "a100-sxm-80gb",
                    "a100-pcie-40gb", "a100-pcie-80gb", "l40s", "l4", "a10", "a30", "t4",
                    "v100-sxm2", "rtx-4090", "rtx-4080", "rtx-3090", "rtx-a6000",
                    "rtx-6000-ada", "jetson-agx-orin-64gb", "jetson-orin-nano-8gb", "mi300x",
                    "mi250x", "ref-a100-80gb", "ref-rtx4090", "ref-jetson-orin-64gb"):
            self.assertIn(key, lines)
        # A100 has no FP8: n/a, never 0
        self.assertEqual(lines["a100-sxm-80gb"][-2], "n/a")
        self.assertNotIn(" 0 ", out)
        out = run("gpus", "--sources", "a100-sxm-80gb", check=0).stdout
        self.assertIn("source: NVIDIA A100 Tensor Core GPU datasheet", out)

    def test_json_schema_and_sources(self):
        doc = json.loads(run("gpus", "--json", check=0).stdout)
        validate_gpus(doc)
        keys = [g["key"] for g in doc["gpus"]]
        self.assertEqual(len(keys), len(set(keys)))
        for g in doc["gpus"]:
            self.assertTrue(g["source"], g["key"])
            for prec, pair in g["peak_tflops"].items():
                for unit, v in pair.items():
                    self.assertNotEqual(v, 0, f"{g['key']} {prec} {unit}")
        by_key = {g["key"]: g for g in doc["gpus"]}
        self.assertEqual(by_key["h100-sxm"]["peak_tflops"]["fp16"]["tensor"], 989.5)
        self.assertIsNone(by_key["a100-sxm-80gb"]["peak_tflops"]["fp8"]["tensor"])
        ref = by_key["ref-a100-80gb"]
        self.assertEqual((ref["name"], ref["peak_tflops"]["fp32"]["vector"],
                          ref["memory_bandwidth_gbps"]), ("A100-80GB", 19.5, 2039))

    def test_docs_list_every_entry(self):
        with open(os.path.join(SOURCE, "docs", "roofline.md")) as f:
            doc = f.read()
        for g in json.loads(run("gpus", "--json", check=0).stdout)["gpus"]:
            self.assertIn(f"- `{g['key']}`: {g['source']}", doc, g["key"])

    def test_match(self):
        for name, key in (("NVIDIA H100 80GB HBM3", "h100-sxm"),
                          ("NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"),
                          ("NVIDIA GeForce RTX 4090", "rtx-4090")):
            doc = json.loads(run("gpus", "--json", "--match", name, check=0).stdout)
            self.assertEqual(doc["gpus"][0]["key"], key)
        p = run("gpus", "--match", "Imaginary GPU 9000", check=1)
        self.assertIn("Imaginary GPU 9000", p.stderr)
        p = run("gpus", "no-such-gpu", check=2)
        self.assertIn("no-such-gpu", p.stderr)

    def test_spec_file(self):
        spec = self.write("lab.json", {"gpus": [{
            "key": "lab-gpu", "name": "Lab GPU", "memory_gb": 48,
            "memory_bandwidth_gbps": 1000, "peak_tflops": {"fp32": 50, "fp16": 100},
            "match": ["Lab Accelerator"]}]})
        doc = json.loads(run("gpus", "--json", "--gpu-spec", spec, "lab-gpu", check=0).stdout)
        validate_gpus(doc)
        g = doc["gpus"][0]
        self.assertEqual(g["peak_tflops"]["fp16"], {"tensor": 100.0, "vector": 100.0})
        self.assertIn("lab.json", g["source"])
        doc = json.loads(run("gpus", "--json", "--match", "Lab Accelerator", check=0,
                             env={"RPX_GPU_SPECS": spec}).stdout)
        self.assertEqual(doc["gpus"][0]["key"], "lab-gpu")
        # invalid: the message names the file, the entry and the field
        bad = self.write("bad.json", {"gpus": [{
            "key": "lab-gpu", "name": "Lab GPU", "memory_bandwidth_gbps": "fast",
            "peak_tflops": {"fp32": 50}}]})
        p = run("gpus", "--gpu-spec", bad, check=1)
        self.assertIn("bad.json", p.stderr)
        self.assertIn("gpus[0] (key 'lab-gpu')", p.stderr)
        self.assertIn("'memory_bandwidth_gbps'", p.stderr)
        p = run("gpus", check=1, env={"RPX_GPU_SPECS": bad})
        self.assertIn("RPX_GPU_SPECS", p.stderr)
        zero = self.write("zero.json", {"gpus": [{
            "key": "z", "name": "Z", "memory_bandwidth_gbps": 1,
            "peak_tflops": {"fp32": 1, "fp8": 0}}]})
        p = run("gpus", "--gpu-spec", zero, check=1)
        self.assertIn("'peak_tflops.fp8'", p.stderr)
        p = run("gpus", "--gpu-spec", self.write("syntax.json", "{\"gpus\": ["), check=1)
        self.assertIn("syntax.json", p.stderr)


class RooflineTest(TempDirTest):
    def roofline(self, *args, **kw):
        doc = json.loads(run("roofline", "--json", *args, check=0, **kw).stdout)
        validate_roofline(doc)
        return doc

    def test_reference_numbers(self):
        for key, ms in (("ref-a100-80gb", 250.2), ("ref-rtx4090", 59.1),
                        ("ref-jetson-orin-64gb", 920.5)):
            doc = self.roofline("--gpu", key, "--precision", "fp32", "--flops", "4878.9e9",
                                "--bytes", "1e8")
            ideal = doc["bounds"][key]["ideal"]
            self.assertEqual(round(ideal["latency_ms"], 1), ms, key)
            self.assertEqual(ideal["bottleneck"], "compute")
        # no rounding that loses resolution
        doc = self.roofline("--gpu", "ref-a100-80gb", "--flops", "4878.9e9", "--bytes", "0")
        self.assertEqual(doc["bounds"]["ref-a100-80gb"]["ideal"]["compute_ms"], 250.2)
        text = run("roofline", "--gpu", "ref-a100-80gb", "--flops", "4878.9e9", "--bytes",
                   "1e8", check=0).stdout
        self.assertIn("250.2 ms, compute-bound", text)

    def test_worked_examples(self):
        spec = self.path("ten.json")
        with open(spec, "w") as f:
            json.dump({"gpus": [{"key": "ten", "name": "Ten", "memory_bandwidth_gbps": 100,
                                 "peak_tflops": {"fp32": 10}}]}, f)
        doc = self.roofline("--gpu-spec", spec, "--gpu", "ten", "--flops", "100e9", "--bytes",
                            "1e8")
        ideal = doc["bounds"]["ten"]["ideal"]
        self.assertEqual((ideal["latency_ms"], ideal["bottleneck"]), (10.0, "compute"))
        doc = self.roofline("--gpu-spec", spec, "--gpu", "ten", "--flops", "1e9", "--bytes",
                            "1e9")
        ideal = doc["bounds"]["ten"]["ideal"]
        self.assertEqual((ideal["latency_ms"], ideal["bottleneck"]), (10.0, "memory"))
        self.assertEqual(ideal["ridge_point"], 100.0)

    def test_precisions(self):
        doc = self.roofline("--gpu", "h100-sxm,a100-sxm-80gb", "--precision", "fp16",
                            "--flops", "1e12", "--bytes", "1e9")
        self.assertEqual(doc["bounds"]["h100-sxm"]["peak_dense"]["tflops"], 989.5)
        self.assertEqual(doc["bounds"]["h100-sxm"]["peak_dense"]["unit"], "tensor")
        self.assertEqual(doc["bounds"]["a100-sxm-80gb"]["peak_other"]["tflops"], 78)
        doc = self.roofline("--gpu", "h100-sxm", "--flops", "1e12", "--bytes", "1e9")
        self.assertEqual(doc["bounds"]["h100-sxm"]["peak_dense"]["tflops"], 67)
        doc = self.roofline("--gpu", "h100-sxm", "--tf32", "--flops", "1e12", "--bytes", "1e9")
        self.assertEqual(doc["bounds"]["h100-sxm"]["peak_dense"]["precision"], "tf32")
        # fp8 on an A100: null, with the reason
        doc = self.roofline("--gpu", "a100-sxm-80gb", "--precision", "fp8", "--flops", "1e12",
                            "--bytes", "1e9")
        b = doc["bounds"]["a100-sxm-80gb"]
        self.assertIsNone(b["ideal"])
        self.assertIsNone(b["peak_dense"]["tflops"])
        self.assertIn("no fp8 peak", b["reason"])

    def test_cost_file_svg_and_report(self):
        cost = {"flops": 2.0e12, "traffic_bytes_ideal": 4.0e8, "nodes": [
            {"name": "conv1", "op_type": "Conv", "dense": True, "flops": 1.9e12,
             "bytes_read": 2e8, "bytes_written": 1e8},
            {"name": "relu1", "op_type": "Relu", "dense": False, "flops": 1e11,
             "bytes_read": 1e9, "bytes_written": 1e9},
            {"name": "odd", "op_type": "CustomOp", "supported": False}]}
        path = self.path("cost.json")
        with open(path, "w") as f:
            json.dump(cost, f)
        svg = self.path("out", "roof.svg")
        doc = self.roofline("--gpu", "h100-sxm", "--precision", "fp16", "--cost", path,
                            "--p50", "10", "--svg", svg)
        b = doc["bounds"]["h100-sxm"]
        self.assertEqual(doc["input"]["nodes"], 3)
        self.assertEqual(b["unfused"]["nodes"], 2)
        self.assertEqual(b["unfused"]["nodes_unknown"], 1)
        self.assertTrue(b["unfused"]["partial"])
        # the unfused bound is never below the ideal one here (same FLOPs, more bytes)
        self.assertGreater(b["unfused"]["latency_ms"], b["ideal"]["latency_ms"])
        self.assertAlmostEqual(b["achieved_fraction"]["ideal"], b["ideal"]["latency_ms"] / 10)
        tree = ET.parse(svg)
        ns = "{http://www.w3.org/2000/svg}"
        self.assertEqual(tree.getroot().tag, ns + "svg")
        texts = " ".join(t.text or "" for t in tree.iter(ns + "text"))
        for label in ("ideal (", "unfused (", "measured (", "peak 989.5 TFLOP/s"):
            self.assertIn(label, texts)
        self.assertEqual(len(list(tree.iter(ns + "circle"))), 3)
        # a run report: its efficiency, its precision and its measured p50
        report = {"schema": "rpxprof.profile/1", "precision": "bf16",
                  "latency": {"p50_ms": 4.0},
                  "efficiency": {"flops": 1e12, "traffic_bytes_ideal": 1e9}}
        rp = self.path("run.json")
        with open(rp, "w") as f:
            json.dump(report, f)
        doc = self.roofline("--gpu", "a100-sxm-80gb", "--report", rp)
        b = doc["bounds"]["a100-sxm-80gb"]
        self.assertEqual(b["precision"], "bf16")
        self.assertEqual(b["measured_p50_ms"], 4.0)
        self.assertAlmostEqual(b["achieved_fraction"]["ideal"], (1e12 / 312e9) / 4.0)

    def test_onnx_cost_pipeline(self):
        """An ONNX graph written by the onnx package, costed by `rpxprof cost`, bounded here."""
        try:
            import numpy as np
            from onnx import TensorProto, helper, numpy_helper, save
        except ImportError:
            self.skipTest("the onnx package is not installed")
        w = numpy_helper.from_array(np.ones((16, 3, 3, 3), np.float32), "w")
        g = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 64, 64])], [w])
        onnx_path = self.path("m.onnx")
        save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), onnx_path)
        p = run("cost", onnx_path, "--json", "--per-op")
        if p.returncode != 0:
            self.skipTest(f"rpxprof cost is not usable here: {p.stderr.strip()}")
        cost_path = self.path("cost.json")
        with open(cost_path, "w") as f:
            f.write(p.stdout)
        cost = json.loads(p.stdout)
        doc = self.roofline("--gpu", "a100-sxm-80gb", "--cost", cost_path)
        b = doc["bounds"]["a100-sxm-80gb"]
        self.assertEqual(b["ideal"]["flops"], cost["flops"])
        self.assertEqual(b["unfused"]["nodes"], 2)
        # the conv runs at the fp32 vector peak (no --tf32), the relu is memory-bound
        conv = 2 * 16 * 3 * 3 * 3 * 64 * 64
        self.assertGreaterEqual(b["unfused"]["latency_ms"], conv / 19.5e9)
        self.assertGreaterEqual(b["unfused"]["latency_ms"], b["ideal"]["latency_ms"])
        self.assertNotIn("unfused_reason", doc["input"])
        # without --per-op the unfused bound cannot be made: said, with the way to get it
        p = run("cost", onnx_path, "--json")
        with open(cost_path, "w") as f:
            f.write(p.stdout)
        doc = self.roofline("--gpu", "a100-sxm-80gb", "--cost", cost_path)
        self.assertIsNone(doc["bounds"]["a100-sxm-80gb"]["unfused"])
        self.assertIn("--per-op", doc["input"]["unfused_reason"])
        t = run("roofline", "--gpu", "a100-sxm-80gb", "--cost", cost_path, check=0)
        self.assertIn("no unfused bound: " + cost_path + " has no per-node costs", t.stdout)
        # the ONNX model itself: costed here, per node
        doc = self.roofline("--gpu", "a100-sxm-80gb", "--cost", onnx_path)
        self.assertEqual(doc["bounds"]["a100-sxm-80gb"]["unfused"]["nodes"], 2)
        self.assertEqual(doc["bounds"]["a100-sxm-80gb"]["ideal"]["flops"], cost["flops"])

    def test_gpu_by_name(self):
        """--gpu takes the table's names as users write them, case-insensitively (issue 18)."""
        for given, key in (("A100-80GB", "ref-a100-80gb"), ("RTX 4090", "ref-rtx4090"),
                           ("rtx 4090", "ref-rtx4090"), ("H100 SXM", "h100-sxm"),
                           ("nvidia geforce rtx 4090", "rtx-4090"), ("H100-SXM", "h100-sxm")):
            doc = self.roofline("--gpu", given, "--flops", "1e12", "--bytes", "1e9")
            self.assertEqual(list(doc["bounds"]), [key], given)
        # an ambiguous name lists the candidates
        p = run("roofline", "--gpu", "rtx4090", "--flops", "1", "--bytes", "1", check=2)
        self.assertIn("'rtx4090' is ambiguous", p.stderr)
        self.assertIn("rtx-4090 (NVIDIA GeForce RTX 4090)", p.stderr)
        self.assertIn("ref-rtx4090 (RTX 4090)", p.stderr)
        # a prefix of several keys is not a name: the keys are suggested as before
        p = run("roofline", "--gpu", "a100-sxm", "--flops", "1", "--bytes", "1", check=2)
        self.assertIn("no target with key 'a100-sxm'; did you mean 'a100-sxm-", p.stderr)

    def test_usage_errors(self):
        self.assertIn("--gpu", run("roofline", "--flops", "1", "--bytes", "1", check=2).stderr)
        self.assertIn("--flops", run("roofline", "--gpu", "h100-sxm", "--flops", "lots",
                                     check=2).stderr)
        self.assertIn("no-such", run("roofline", "--gpu", "no-such", "--flops", "1",
                                     "--bytes", "1", check=2).stderr)
        self.assertIn("cost", run("roofline", "--gpu", "h100-sxm", check=2).stderr)
        self.assertIn("fp4", run("roofline", "--gpu", "h100-sxm", "--precision", "fp4",
                                 "--flops", "1", "--bytes", "1", check=2).stderr)
        p = run("roofline", "--gpu", "h100-sxm", "--cost", self.path("missing.json"), check=1)
        self.assertIn("missing.json", p.stderr)
        empty = self.path("empty.json")
        with open(empty, "w") as f:
            f.write("{}")
        self.assertIn("empty.json", run("roofline", "--gpu", "h100-sxm", "--cost", empty,
                                        check=1).stderr)

    def test_host_cpu_cached_measurement_is_used_and_labelled(self):
        # issue 26: the cached measurement made the peak while the source said "estimate",
        # and its triad bandwidth was ignored ("host-cpu has no memory bandwidth"). The
        # test writes its own cache (never this machine's) with this machine's key.
        cache = self.path("cache", "cpu-peak.json")
        env = {"RPX_CPU_PEAK_CACHE": cache}
        doc = self.roofline("--gpu", "host-cpu", "--flops", "1e9", "--bytes", "1e8", env=env)
        est = doc["cpu"]["estimate"]
        self.assertEqual(est["peak_source"], "estimate" if est["fp32_gflops"] else "unknown")
        self.assertIsNone(est["cached_triad_gbps"])
        if est["fp32_gflops"]:
            self.assertIn("peak: estimate: ", doc["bounds"]["host-cpu"]["gpu"]["source"])
        key = "%s|%d cores|%s" % (est["model"] or "unknown",
                                  est["cores"] if est["cores"] is not None else -1, est["isa"])
        peak = 10 * (est["fp32_gflops"] or 100.0)
        os.makedirs(os.path.dirname(cache))
        with open(cache, "w") as f:
            json.dump({"schema": "rpxprof.cpu-peak-cache/1", "entries": {key: {
                "fp32_gflops": peak, "fp64_gflops": peak / 2, "triad_gbps": 90.57,
                "threads": 2, "measured_at": "2026-01-02T03:04:05Z"}}}, f)
        doc = self.roofline("--gpu", "host-cpu", "--flops", "1e9", "--bytes", "1e8", env=env)
        est, b = doc["cpu"]["estimate"], doc["bounds"]["host-cpu"]
        self.assertEqual(est["peak_source"], "cached measurement")
        self.assertEqual((est["cached_triad_gbps"], est["cached_at"], est["cache_file"]),
                         (90.57, "2026-01-02T03:04:05Z", cache))
        source = b["gpu"]["source"]
        self.assertNotIn("estimate:", source)  # the estimate's label only when it is used
        for words in ("peak: measured by rpxprof's FMA kernel", "on 2 threads",
                      "memory bandwidth: measured by rpxprof's STREAM-triad-like kernel",
                      "90.57 GB/s", cache, "2026-01-02T03:04:05Z"):
            self.assertIn(words, source)
        self.assertEqual(b["memory_bandwidth_gbps"], 90.57)
        self.assertAlmostEqual(b["ideal"]["memory_ms"], 1e8 / 90.57e6, places=12)
        self.assertAlmostEqual(b["ideal"]["compute_ms"], 1e9 / (peak * 1e6), places=12)
        self.assertIsNone(b["reason"])  # not "host-cpu has no memory bandwidth"
        self.assertNotIn("not a bound", b["gpu"]["name"])
        text = run("roofline", "--gpu", "host-cpu", "--flops", "1e9", env=env, check=0).stdout
        self.assertIn(f"cached measurement ({cache}, 2026-01-02T03:04:05Z)", text)
        self.assertIn("triad 90.57 GB/s; used for the peak and the memory bandwidth", text)

    def test_host_cpu(self):
        # this test's own measurement cache, never the user's
        cache = {"RPX_CPU_PEAK_CACHE": self.path("cache", "cpu-peak.json")}
        # estimate only: a compute-only bound
        doc = self.roofline("--gpu", "host-cpu", "--flops", "1e9", "--bytes", "1e6", env=cache)
        cpufreq = doc["cpu"]["estimate"]["max_mhz_source"] == "cpufreq cpuinfo_max_freq"
        self.assertEqual(doc["cpu"]["estimate"]["is_bound"], cpufreq)
        if not cpufreq:  # a VM: the current clock's estimate is labelled, in JSON and on screen
            self.assertIn("not a bound", doc["cpu"]["estimate"]["bound_note"])
            self.assertIn("[estimate, not a bound]", doc["bounds"]["host-cpu"]["gpu"]["name"])
            text = run("roofline", "--gpu", "host-cpu", "--flops", "1e9", env=cache, check=0).stdout
            self.assertIn("an estimate, not a bound", text)
            # and in a run's report: the target's name and one note
            import numpy as np
            from common import MODELS
            inputs = self.path("in.npz")
            np.savez(inputs, rgb=np.zeros((4, 4, 3), np.uint8))
            out = self.path("r.json")
            run("run", "--model", f"{MODELS}:busywait", "--inputs", inputs, "--warmup", "1",
                "--repeats", "5", "--quiet", "--flops", "1e9", "--output", out,
                env=dict(cache, RPX_TEST_BUSY_NS="100000"), check=0)
            with open(out) as f:
                r = json.load(f)
            self.assertIn("[estimate, not a bound]", r["roofline"]["host-cpu"]["gpu"]["name"])
            self.assertEqual(sum("host-cpu: the peak is an estimate, not a bound" in n
                                 for n in r["notes"]), 1)
        b = doc["bounds"]["host-cpu"]
        self.assertIsNotNone(b["ideal"]["compute_ms"])
        self.assertIsNone(b["ideal"]["memory_ms"])
        self.assertIn("compute only", b["reason"])
        # measured: peak and bandwidth, within a plausible range of the estimate
        # (the timeout only catches a hang: under ASan on a busy machine the
        # measurement has taken over 30 s)
        doc = self.roofline("--measure-cpu", "--gpu", "host-cpu", "--flops", "1e9", "--bytes",
                            "1e8", timeout=240, env=cache)
        cpu, b = doc["cpu"], doc["bounds"]["host-cpu"]
        est, meas = cpu["estimate"], cpu["measured"]
        print(f"\nCPU {est['model']}: estimate {est['fp32_gflops']} GFLOP/s fp32 "
              f"({est['formula']}); measured {meas['fp32_gflops']:.1f} GFLOP/s fp32, "
              f"{meas['fp64_gflops']:.1f} fp64, triad {meas['triad_gbps']:.1f} GB/s "
              f"on {meas['threads']} threads in {meas['seconds']:.2f} s")
        # no speed or duration is judged beyond what a busy machine under ASan
        # still meets: load and instrumentation only slow the kernels down
        self.assertGreater(meas["seconds"], 0)
        self.assertGreater(meas["triad_gbps"], 0)
        self.assertIsNotNone(b["ideal"]["memory_ms"])
        self.assertIn(b["ideal"]["bottleneck"], ("compute", "memory"))
        if est["fp32_gflops"]:
            self.assertLess(cpu["ratio_fp32"], 2.0)
            if not SANITIZED:  # 0.7 on a quiet 2-core VM; ASan's kernel reads 0.05
                self.assertGreater(cpu["ratio_fp32"], 0.05)
        text = run("roofline", "--measure-cpu", check=0, timeout=240, env=cache).stdout
        self.assertIn("measured / estimate", text)
        # the measurement is cached for this machine: the peak is now a bound, never
        # below what was measured
        with open(cache["RPX_CPU_PEAK_CACHE"]) as f:
            entries = json.load(f)["entries"]
        self.assertEqual(len(entries), 1)
        doc = self.roofline("--gpu", "host-cpu", "--flops", "1e9", env=cache)
        est = doc["cpu"]["estimate"]
        self.assertTrue(est["is_bound"])
        self.assertGreaterEqual(est["fp32_gflops"], meas["fp32_gflops"])
        self.assertNotIn("not a bound", doc["bounds"]["host-cpu"]["gpu"]["name"])
        # a file there that is not the cache is left alone, and the warning says what to do
        other = {"RPX_CPU_PEAK_CACHE": self.path("not-a-cache.json")}
        with open(other["RPX_CPU_PEAK_CACHE"], "w") as f:
            f.write('{"mine": 1}\n')
        p = run("roofline", "--measure-cpu", check=0, timeout=240, env=other)
        self.assertIn("not-a-cache.json: exists and is not rpxprof's CPU measurement cache; the "
                      "measurement was not cached (set RPX_CPU_PEAK_CACHE to another file)",
                      p.stderr)
        with open(other["RPX_CPU_PEAK_CACHE"]) as f:
            self.assertEqual(f.read(), '{"mine": 1}\n')


if __name__ == "__main__":
    main()
