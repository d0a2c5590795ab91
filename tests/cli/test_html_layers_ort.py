"""The run view's layer part of a real `--layers` run: resnet18 (the onnx_models fixture's,
random weights) through ONNX Runtime, 5 profiled calls in each of 2 processes. In the file:
one table row per layer sorted by time, the unattributed row apart, each row's numbers the
report's own (data-v), one dot per row with FLOPs, bytes and a time (every Conv row one);
in Debian's chromium: a click sorts, nothing overflows, every dot inside its figure. Skipped
with the reason where ONNX Runtime's library or its plugin is not here (as
cli.layer_times_ort)."""
import json
import os
import tempfile
import unittest

from common import BUILD, main, run
import test_html_layers as hl  # the module, not its classes: they would run here too
from test_html_layers import NULL_COLUMNS, costed, parse
from test_layer_times_ort import RESNET18, ort_library


class Resnet18LayerViewTest(unittest.TestCase):
    path = hl.LayerViewTest.path
    page = hl.LayerViewTest.page
    layer_table = hl.LayerViewTest.layer_table
    probe = hl.LayerViewChromiumTest.probe

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="rpxlayers-ort-")
        cls.tmp = cls._tmp.name
        cls.r = None
        if not os.path.exists(os.path.join(BUILD, "librpxprof-ort.so")) or not ort_library():
            return
        out = os.path.join(cls.tmp, "r18.json")
        run("run", "--model", RESNET18, "--runtime", "ort", "--layers", "5", "--repeats", "20",
            "--processes", "2", "-q", "--output", out, check=0, timeout=900)
        with open(out) as f:
            cls.r = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def setUp(self):
        if not os.path.exists(os.path.join(BUILD, "librpxprof-ort.so")):
            self.skipTest("librpxprof-ort.so is not built in " + BUILD)
        if not ort_library():
            self.skipTest("ONNX Runtime's library is not here: run ./scripts/setup.sh")
        self.L = self.r["layers"]

    def test_resnet18_layer_table_and_figure(self):
        page = self.page(self.r, "r18.html")
        t = self.layer_table(page)
        layers = [x for x in self.L["rows"] if x["name"] != "unattributed"]
        self.assertGreater(len(layers), 10)
        want = sorted(layers, key=lambda x: (x["time_ms"] is None, -(x["time_ms"] or 0)))
        self.assertEqual([row["cells"][0] for row in t["tbody"]], [x["name"] for x in want])
        self.assertEqual([row["cells"][0].split(" (")[0] for row in t["tfoot"]], ["unattributed"])
        for row, x in zip(t["tbody"], want):
            for key, col in NULL_COLUMNS.items():
                if x[key] is None:
                    self.assertEqual(row["cells"][col], "n/a", (x["name"], key))
                elif key not in ("op_type", "nodes"):
                    self.assertEqual(float(row["v"][col]), x[key] * (100 if key == "share" else 1), (x["name"], key))
        dots = {d["data-name"] for d in parse(page).svgs["run-0-layers-roof"]["circles"] if "ldot" in d.get("class", "")}
        self.assertEqual(len(dots), sum(1 for x in self.L["rows"] if costed(x)))
        import html as h
        self.assertLessEqual({x["name"] for x in layers if x["op_type"] == "Conv"}, {h.unescape(d) for d in dots})

    def test_resnet18_in_the_browser(self):
        self.page(self.r, "r18.html")
        found = self.probe("r18.html", "1100,2400", view="layers-resnet18")
        self.assertLessEqual(found["page"][0], found["page"][1], "the page scrolls sideways")
        self.assertLessEqual(found["wrap"][0], found["wrap"][1] + 1, "the layer table is wider than the page")
        self.assertEqual(found["cells"], [], "cells whose text overflows")
        self.assertEqual(len(found["dots"]), sum(1 for x in self.L["rows"] if costed(x)))
        self.assertEqual([d for d in found["dots"] if d != [True, True]], [], "a dot outside its figure")
        self.assertEqual(found["texts"], [], "labels outside the figure")
        i, up, down = found["sorts"]["time (ms) [95 % interval]"]
        times = sorted(x["time_ms"] for x in self.L["rows"] if x["name"] != "unattributed" and x["time_ms"] is not None)
        self.assertEqual([float(v[i]) for _, v in up][:len(times)], times)
        self.assertEqual([float(v[i]) for _, v in down][:len(times)], times[::-1])


if __name__ == "__main__":
    main()
