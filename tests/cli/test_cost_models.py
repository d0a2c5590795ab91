"""`rpxprof cost` on real architectures exported by torch (torchvision, random
weights, opset 13; tests/fixtures/onnx/export_torchvision.py, run once as the
cost.fixtures_models test): parameters equal the onnx package's count exactly,
MACs at 224x224 match torchvision's published figures within 2 %, and no
operator is left uncosted. Also: the same model with its weights in an
external file that no longer exists gives the same answer."""
import json
import os
import time

import onnx

from common import BUILD, TempDirTest, main, run

FIXTURES = os.path.join(os.environ.get("RPX_FIXTURES", os.path.join(BUILD, "fixtures")), "onnx_models")


def load_manifest():
    with open(os.path.join(FIXTURES, "manifest.json")) as f:
        return json.load(f)


class ModelsTest(TempDirTest):
    def analyze(self, path, *args):
        r = run("cost", path, "--json", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_published_figures(self):
        manifest = load_manifest()
        self.assertEqual(set(manifest), {"resnet18", "resnet50", "mobilenet_v2", "vit_b_16"})
        for name, m in manifest.items():
            with self.subTest(model=name):
                t0 = time.monotonic()
                res = self.analyze(m["path"])
                elapsed = time.monotonic() - t0
                self.assertEqual(res["params"], m["onnx_params"], "parameters vs the onnx package")
                err = abs(res["macs"] - m["macs"]) / m["macs"]
                self.assertLess(err, 0.02, f"MACs {res['macs']} vs published {m['macs']}")
                self.assertFalse(res["partial"], res["unsupported"])
                self.assertEqual(res["unsupported"], [])
                self.assertEqual(res["coverage"], 1.0)
                self.assertEqual(res["flops_dense"], 2 * res["macs"])
                self.assertGreater(res["flops"], res["flops_dense"])
                self.assertLess(res["flops"], 1.05 * res["flops_dense"])
                self.assertEqual(res["warnings"], [])
                self.assertEqual(res["model"]["inputs"][0]["shape"], [1, 3, 224, 224])
                self.assertEqual(res["model"]["outputs"][0]["shape"], [1, 1000])
                self.assertEqual(res["param_bytes"], 4 * res["params"])
                self.assertGreater(res["activation_peak_bytes"], 0)
                self.assertLess(elapsed, 60.0)  # it ends: its speed is bench/'s to show, not a test's
                print(f"{name}: params {res['params']} (onnx {m['onnx_params']}, torchvision "
                      f"{m['params']}), MACs {res['macs'] / 1e9:.4f} G (published "
                      f"{m['macs'] / 1e9:.2f} G, {100 * err:.2f} % off)")

    def test_external_data_file_missing(self):
        m = load_manifest()["resnet18"]
        base = self.analyze(m["path"])
        model = onnx.load(m["path"])
        p = self.path("resnet18_ext.onnx")
        onnx.save(model, p, save_as_external_data=True, all_tensors_to_one_file=True,
                  location="resnet18_ext.onnx.data", size_threshold=1024)
        os.remove(self.path("resnet18_ext.onnx.data"))
        self.assertLess(os.path.getsize(p), 1 << 20)
        ext = self.analyze(p)
        for key in ("params", "macs", "flops", "traffic_bytes_unfused", "activation_peak_bytes"):
            self.assertEqual(ext[key], base[key], key)

    def test_precision_and_batch(self):
        m = load_manifest()["resnet18"]
        res = self.analyze(m["path"], "--precision", "fp16")
        self.assertEqual(res["param_bytes"], 2 * res["params"])
        # the exported input is fixed at 1x3x224x224: another size is refused
        r = run("cost", m["path"], "--input", "input=2x3x224x224")
        self.assertEqual(r.returncode, 2)
        self.assertIn("fixed at 1", r.stderr)


if __name__ == "__main__":
    main()
