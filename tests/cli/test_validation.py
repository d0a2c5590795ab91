"""Validation that never stays silent (issue 15, items 8 and 9): the JSON files users
write (a batch manifest, a GPU spec file, a cost object) refuse a misspelt key with the
nearest valid name at every level, name a wrong type as such, and say when the file
does not exist or is a folder; `roofline --cost` takes an ONNX model; exit codes follow
the documented table, and the top-level --help lists every one of them."""
import json
import os
import re

from common import SOURCE, TempDirTest, main, run

MANIFEST = {
    "schema": "rpxprof.manifest/1",
    "description": "a manifest with every key",
    "defaults": {"warmup": 1, "repeats": 2, "device": "cpu", "precision": "fp32",
                 "gpus": ["h100-sxm"]},
    "tasks": {"depth": {"inputs": "in.npz", "unit": "frame", "meta": {"clip_length": 1}}},
    "models": [{"name": "demo", "model": "rpxprof-demo:demo_noop", "tasks": ["depth"],
                "device": "cpu", "precision": "fp32", "warmup": 1, "repeats": 2,
                "flops": 1e9, "params": "1000"}],
}

SPEC = {"gpus": [{"key": "lab-gpu", "name": "Lab GPU", "vendor": "Lab", "architecture": "x",
                  "memory_gb": 48, "memory_bandwidth_gbps": 1000, "sm_count": 10,
                  "boost_clock_mhz": 1500, "l2_mb": 40, "tdp_w": 300, "source": "lab",
                  "notes": "n", "match": ["Lab Accelerator"],
                  "peak_tflops": {"fp32": 50, "fp16": {"tensor": 100, "vector": 25}}}]}


def changed(doc, change):
    d = json.loads(json.dumps(doc))
    change(d)
    return d


class ManifestTest(TempDirTest):
    def batch(self, doc, code=1):
        path = self.path("m.json")
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        p = run("batch", path, "--out-dir", self.path("out"), check=code)
        self.assertFalse(os.path.exists(self.path("out", "depth")), "a job ran")
        return p.stderr

    def test_misspelt_keys_at_every_level(self):
        cases = [
            (lambda d: d.update(modles=d.pop("models")),
             "unknown key 'modles' at the top level; did you mean 'models'?"),
            (lambda d: d["defaults"].update(repeat=5),
             "unknown key 'repeat' in defaults; did you mean 'repeats'?"),
            (lambda d: d["tasks"]["depth"].update(unti=d["tasks"]["depth"].pop("unit")),
             "unknown key 'unti' in tasks.depth; did you mean 'unit'?"),
            (lambda d: d["models"][0].update(repeat=5),
             "unknown key 'repeat' in models[0]; did you mean 'repeats'?"),
            (lambda d: d["models"][0].update(Device="cuda"),
             "unknown key 'Device' in models[0]; did you mean 'device'?"),
            (lambda d: d["models"][0].update(colour="blue"),
             "unknown key 'colour' in models[0]; the keys allowed there are: name, model"),
        ]
        for change, message in cases:
            with self.subTest(message):
                err = self.batch(changed(MANIFEST, change))
                self.assertIn("m.json: " + message, err)

    def test_wrong_types_are_named(self):
        cases = [
            (lambda d: d.update(tasks=[]),
             "tasks: has the wrong type: expected an object"),
            (lambda d: d.update(models={}),
             "models: has the wrong type: expected an array"),
            (lambda d: d["defaults"].update(repeats="5"),
             "defaults.repeats: has the wrong type: expected a whole number from 1 to 10000000 "
             "(every timed call keeps its sample in memory and in the report; split a longer "
             "measurement into several runs), got a string"),
            (lambda d: d["defaults"].update(gpus="h100-sxm"),
             "defaults.gpus: has the wrong type: expected an array of GPU keys"),
            (lambda d: d["tasks"]["depth"].update(inputs=3),
             "tasks.depth.inputs: has the wrong type: expected a non-empty string, got an "
             "integer"),
            (lambda d: d["tasks"]["depth"].update(meta={"a": [1]}),
             "tasks.depth.meta.a: has the wrong type: expected a string, a number or a "
             "boolean, got an array"),
            (lambda d: d["models"][0].update(tasks="depth"),
             "models[0].tasks: has the wrong type: expected an array of task names, got a "
             "string"),
            (lambda d: d["models"][0].update(tasks=[1]),
             "models[0].tasks[0]: has the wrong type: expected a task name (a string), got an "
             "integer"),
            (lambda d: d["models"][0].update(flops=True),
             "models[0].flops: has the wrong type"),
            (lambda d: d.update(schema=1), "schema: has the wrong type"),
        ]
        for change, message in cases:
            with self.subTest(message):
                err = self.batch(changed(MANIFEST, change))
                self.assertIn("m.json: " + message, err)
                self.assertNotIn("missing or empty", err)

    def test_missing_file_and_folder(self):
        p = run("batch", self.path("nope.json"), "--out-dir", self.path("out"), check=1)
        self.assertIn("nope.json: the file does not exist", p.stderr)
        self.assertNotIn("JSON syntax", p.stderr)
        os.mkdir(self.path("dir.json"))
        p = run("batch", self.path("dir.json"), "--out-dir", self.path("out"), check=1)
        self.assertIn("dir.json: is a folder, not a file", p.stderr)
        self.assertIn("fix the JSON syntax", self.batch("{\"schema\": "))


class GpuSpecTest(TempDirTest):
    def gpus(self, doc, code=1, env=False):
        path = self.path("spec.json")
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        if env:
            return run("gpus", check=code, env={"RPX_GPU_SPECS": path}).stderr
        return run("gpus", "--gpu-spec", path, check=code).stderr

    def test_every_key_is_accepted(self):
        self.gpus(SPEC, code=0)

    def test_misspelt_keys_at_every_level(self):
        entry = "gpus[0] (key 'lab-gpu')"
        cases = [
            (lambda d: d.update(gpu=d.pop("gpus")),
             "spec.json: unknown key 'gpu' at the top level; did you mean 'gpus'?"),
            (lambda d: d["gpus"][0].update(
                memory_bandwith_gbps=d["gpus"][0].pop("memory_bandwidth_gbps")),
             f"spec.json: unknown key 'memory_bandwith_gbps' in {entry}; did you mean "
             "'memory_bandwidth_gbps'?"),
            (lambda d: d["gpus"][0].update(comment="x"),
             f"spec.json: unknown key 'comment' in {entry}; the keys allowed there are: key, "),
            (lambda d: d["gpus"][0]["peak_tflops"].update(FP16=1),
             "field 'peak_tflops.FP16': unknown precision; did you mean 'fp16'?"),
            (lambda d: d["gpus"][0]["peak_tflops"].update(bf_16=1),
             "field 'peak_tflops.bf_16': unknown precision; did you mean 'bf16'?"),
            (lambda d: d["gpus"][0]["peak_tflops"]["fp16"].update(tensr=1),
             "field 'peak_tflops.fp16.tensr': unknown unit; did you mean 'tensor'?"),
        ]
        for change, message in cases:
            for env in (False, True):
                with self.subTest(message, env=env):
                    err = self.gpus(changed(SPEC, change), env=env)
                    self.assertIn(message, err)
                    if env:
                        self.assertIn("RPX_GPU_SPECS", err)
        # roofline and run read the same files
        spec = self.path("spec.json")
        with open(spec, "w") as f:
            json.dump(changed(SPEC, lambda d: d["gpus"][0].update(nmae="x")), f)
        p = run("roofline", "--gpu", "h100-sxm", "--flops", "1", "--bytes", "1",
                "--gpu-spec", spec, check=1)
        self.assertIn("did you mean 'name'?", p.stderr)

    def test_wrong_types_are_named(self):
        cases = [
            (lambda d: d.update(gpus={}),
             "field 'gpus': has the wrong type: expected an array of GPU entries, got an "
             "object"),
            (lambda d: d["gpus"][0].update(name=5),
             "field 'name': has the wrong type: expected a non-empty string, got a number"),
            (lambda d: d["gpus"][0].update(sm_count="ten"),
             "field 'sm_count': has the wrong type: expected a non-negative integer"),
        ]
        for change, message in cases:
            with self.subTest(message):
                self.assertIn(message, self.gpus(changed(SPEC, change)))
        self.assertIn("field 'gpus' is missing", self.gpus({}))
        self.assertIn("field 'name': is empty", self.gpus(
            changed(SPEC, lambda d: d["gpus"][0].update(name=""))))

    def test_missing_file_and_folder(self):
        p = run("gpus", "--gpu-spec", self.path("nope.json"), check=1)
        self.assertIn("nope.json: the file does not exist", p.stderr)
        p = run("gpus", check=1, env={"RPX_GPU_SPECS": self.tmp})
        self.assertIn(f"{self.tmp}: is a folder, not a file", p.stderr)
        self.assertIn("RPX_GPU_SPECS", p.stderr)

    def test_unknown_gpu_key_is_a_bad_command_line(self):
        p = run("gpus", "h100-sx", check=2)
        self.assertIn("no GPU with key 'h100-sx'; did you mean 'h100-sxm'?", p.stderr)
        p = run("roofline", "--gpu", "a100-sxm", "--flops", "1", "--bytes", "1", check=2)
        self.assertIn("no target with key 'a100-sxm'; did you mean 'a100-sxm-", p.stderr)
        p = run("roofline", "--gpu", "host-cp", "--flops", "1", "--bytes", "1", check=2)
        self.assertIn("did you mean 'host-cpu'?", p.stderr)


class RooflineCostTest(TempDirTest):
    def onnx_model(self, batch="batch"):
        try:
            import numpy as np
            from onnx import TensorProto, helper, numpy_helper, save
        except ImportError:
            self.skipTest("the onnx package is not installed")
        w = numpy_helper.from_array(np.ones((16, 3, 3, 3), np.float32), "w")
        g = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 32, 32])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 16, 32, 32])], [w])
        path = self.path("m.onnx")
        save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
        return path

    def test_cost_takes_an_onnx_model(self):
        model = self.onnx_model()
        p = run("cost", model, "--json", "--per-op", "--dim", "batch=2", check=0)
        cost_path = self.path("cost.json")
        with open(cost_path, "w") as f:
            f.write(p.stdout)
        want = json.loads(run("roofline", "--json", "--gpu", "a100-sxm-80gb", "--cost",
                              cost_path, check=0).stdout)
        got = json.loads(run("roofline", "--json", "--gpu", "a100-sxm-80gb", "--cost", model,
                             "--dim", "batch=2", check=0).stdout)
        self.assertEqual(got["bounds"], want["bounds"])
        self.assertEqual(got["input"]["flops"], json.loads(p.stdout)["flops"])
        # any name: a file that is not JSON is read as ONNX
        other = self.path("model.bin")
        os.rename(model, other)
        got = json.loads(run("roofline", "--json", "--gpu", "a100-sxm-80gb", "--cost", other,
                             "--input", "x=2x3x32x32", check=0).stdout)
        self.assertEqual(got["bounds"], want["bounds"])
        # an unbound dimension is a bad command line, as in `rpxprof cost`
        p = run("roofline", "--gpu", "a100-sxm-80gb", "--cost", other, check=2)
        self.assertIn("--dim batch=N", p.stderr)
        # --input/--dim without an ONNX --cost
        p = run("roofline", "--gpu", "a100-sxm-80gb", "--flops", "1", "--bytes", "1",
                "--dim", "batch=1", check=2)
        self.assertIn("--dim", p.stderr)
        p = run("roofline", "--gpu", "a100-sxm-80gb", "--cost", cost_path, "--dim", "batch=1",
                check=2)
        self.assertIn("--dim", p.stderr)

    def test_missing_file_and_folder(self):
        for opt in ("--cost", "--report"):
            with self.subTest(opt):
                p = run("roofline", "--gpu", "h100-sxm", opt, self.path("nope.json"), check=1)
                self.assertIn("nope.json: the file does not exist", p.stderr)
                p = run("roofline", "--gpu", "h100-sxm", opt, self.tmp, check=1)
                self.assertIn(f"{self.tmp}: is a folder, not a file", p.stderr)


class ExitCodesTest(TempDirTest):
    def test_help_lists_every_exit_code(self):
        with open(os.path.join(SOURCE, "include", "rpxprof", "runner.h")) as f:
            text = f.read()  # the codes of no status, and those of the status map's rows
            codes = {int(v) for v in re.findall(r"RPX_EXIT_\w+\s*=\s*(\d+)", text)}
            codes |= {int(v) for v in re.findall(r"X\(\w+,\s*\"\w+\",\s*(\d+)\)", text)}
        self.assertTrue({0, 1, 2, 3, 4, 5, 6, 130, 143} <= codes, codes)
        text = run("--help", check=0).stdout
        listed = {int(v) for v in re.findall(r"^\s+(\d+)\s{2,}\S", text, re.M)}
        self.assertEqual(listed, codes)


if __name__ == "__main__":
    main()
