"""The run view's layer part (issue 39 §2; docs/report.md, "The HTML report"), drawn by
`rpxprof report` from a report's `layers` block: tests/fixtures/layers/layers-run.json
(written by hand to the contract's shape by make_layers_fixture.py). Checked in the file,
parsed: one table row per layer sorted by time (slowest first, the page's order without
its script), the unattributed row apart in the table's foot, each time to the digits its
interval supports, n/a for every null, the per-op-type sentence; one dot per costed row
in the per-layer roofline, its area proportional to the row's time, on log axes, the
host CPU's roofs drawn, the rows left out counted in the caption; a report without
`layers` has no layer part and is otherwise the same page. And in Debian's chromium,
headless, from file://: a click on a column's head reorders the rows (the unattributed
row stays in the foot), nothing overflows its cell, the table or the page, every dot
lies inside its figure, no console error and no request."""
import copy
import html as htmlmod
import json
import math
import os
import re
import shutil
import tempfile
import unittest
from html.parser import HTMLParser

from common import BUILD, SANITIZED, SOURCE, main, run
from test_html import CHROMIUM, chromium, fmt3

FIXTURE = os.path.join(SOURCE, "tests", "fixtures", "layers", "layers-run.json")
ARTIFACTS = os.path.join(BUILD, "test-artifacts", "html")

NULL_COLUMNS = {"op_type": 1, "nodes": 2, "time_ms": 3, "share": 4, "flops": 5, "macs": 6, "bytes": 7,
                "intensity": 8, "bound_ms": 9, "achieved": 10}


def ci_text(v, lo, hi):
    """A value and its interval to the digits the interval supports (html_history's
    rule, docs/statistics.md): the second significant digit of the half width."""
    e = math.floor(math.log10(abs(v)))
    hw = (hi - lo) / 2
    sig = 4 if not hw > 1e-9 * abs(v) else e - math.floor(math.log10(hw)) + 2
    d = min(15, max(0, min(6, max(1, sig)) - 1 - e))
    return "%.*f [%.*f, %.*f]" % (d, v, d, lo, d, hi)


class Tables(HTMLParser):
    """The rows of each <table id=...> (thead, tbody, tfoot apart) as cell texts, and
    each cell's data-v; the circles and text of each <svg id=...>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.svgs, self._t, self._part, self._row, self._cell, self._svg = {}, {}, None, None, None, None, None
        self._in_title = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id"):
            self._t = self.tables.setdefault(a["id"], {"thead": [], "tbody": [], "tfoot": [], "cls": a.get("class", "")})
        elif tag in ("thead", "tbody", "tfoot") and self._t is not None:
            self._part = tag
        elif tag == "tr" and self._t is not None:
            self._row = {"cls": a.get("class", ""), "cells": [], "v": []}
            self._t[self._part].append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
            self._row["v"].append(a.get("data-v"))
        elif tag == "svg" and a.get("id"):
            self._svg = self.svgs.setdefault(a["id"], {"circles": [], "texts": [], "paths": []})
        elif self._svg is not None and tag == "circle":
            self._svg["circles"].append(dict(a, title=""))
        elif self._svg is not None and tag == "path":
            self._svg["paths"].append(a.get("d", ""))
        elif self._svg is not None and tag == "title" and self._svg["circles"]:
            self._in_title = self._svg["circles"][-1]

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row["cells"].append(re.sub(r"\s+", " ", "".join(self._cell)).strip())
            self._cell = None
        elif tag == "table":
            self._t = None
        elif tag == "svg" and self._svg is not None:
            self._svg = None
        elif tag == "title":
            self._in_title = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._in_title is not None:
            self._in_title["title"] += data
        elif self._svg is not None:
            self._svg["texts"].append(data)


def parse(page):
    p = Tables()
    p.feed(page)
    return p


def costed(row):
    return (row["op_type"] is not None and all(row.get(k) is not None for k in ("flops", "intensity", "time_ms"))
            and row["flops"] > 0 and row["time_ms"] > 0)


class LayerViewTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="rpxlayers-")
        self.tmp = self._tmp.name
        with open(FIXTURE) as f:
            self.r = json.load(f)
        self.L = self.r["layers"]

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def page(self, report=None, out="layers.html"):
        with open(self.path("r.json"), "w") as f:
            json.dump(self.r if report is None else report, f)
        p = run("report", "r.json", "-o", out, cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path(out)) as f:
            return f.read()

    def layer_table(self, page):
        t = parse(page).tables.get("run-0-layers-table")
        self.assertIsNotNone(t, "no layer table")
        return t

    # ---- the table -------------------------------------------------------------------
    def test_rows_sorted_by_time_and_the_unattributed_row_apart(self):
        t = self.layer_table(self.page())
        layers = [r for r in self.L["rows"] if r["name"] != "unattributed"]
        self.assertEqual(len(t["tbody"]), len(layers))
        want = sorted(layers, key=lambda r: (r["time_ms"] is None, -(r["time_ms"] or 0)))
        self.assertEqual([row["cells"][0] for row in t["tbody"]], [r["name"] for r in want])
        # the foot: the unattributed row alone, marked as not a layer
        self.assertEqual(len(t["tfoot"]), 1)
        foot = t["tfoot"][0]
        self.assertEqual(foot["cls"], "unattributed")
        self.assertTrue(foot["cells"][0].startswith("unattributed (not a layer"), foot["cells"][0])
        self.assertTrue(all(row["cls"] == "layer" for row in t["tbody"]))
        self.assertEqual(t["thead"][0]["cells"][:4], ["layer", "op type", "original nodes", "time (ms) [95 % interval]"])

    def test_nulls_are_na_and_times_have_the_digits_their_interval_supports(self):
        t = self.layer_table(self.page())
        by_name = {row["cells"][0].split(" (not a layer")[0]: row for row in t["tbody"] + t["tfoot"]}
        nulls = 0
        for r in self.L["rows"]:
            row = by_name[r["name"]]
            for key, col in NULL_COLUMNS.items():
                if r[key] is None:
                    self.assertEqual(row["cells"][col], "n/a", (r["name"], key))
                    self.assertIn(row["v"][col], ("", None), (r["name"], key))
                    nulls += 1
            if r["time_ms"] is not None:
                self.assertEqual(float(row["v"][3]), r["time_ms"])   # sorts by the report's own value
                want = ci_text(r["time_ms"], *r["time_ci_ms"]) if r["time_ci_ms"] else fmt3(r["time_ms"])
                self.assertEqual(row["cells"][3], want, r["name"])
            if r["achieved"] is not None:
                self.assertEqual(float(row["v"][10]), r["achieved"])
            if r["flops"] is not None:
                self.assertEqual(float(row["v"][5]), r["flops"])
        self.assertGreater(nulls, 20)
        # a fused row of nine nodes: three shown, the count said
        self.assertIn("(9 in all)", by_name["/layer4/layer4.1/block_fused"]["cells"][2])
        # the GPU's bounds: a column of their own
        self.assertIn("bound on ref-rtx4090 (ms)", t["thead"][0]["cells"])

    def test_names_are_escaped(self):
        page = self.page().replace("<wbr>", "")   # a line may break after a '/' or '_'
        self.assertFalse("<b>x</b>" in page, "a name's markup in the page")
        self.assertTrue("&lt;b&gt;x&lt;/b&gt;&amp;&quot;&#39;/Reorder</td>" in page, "the name escaped")
        self.assertTrue('data-name="&lt;b&gt;x' not in page)   # not costed: no dot

    def test_the_sentence_and_by_op_type(self):
        page = self.page()
        ops = self.L["by_op_type"]
        part = page[page.index('<h3 id="run-0-layers">'):page.index('<h4>Every layer</h4>')]
        text = re.sub(r"\s+", " ", htmlmod.unescape(re.sub(r"<[^>]+>", "", part)))
        c = ops[0]
        self.assertIn(f"{c['op_type']} {fmt3(100 * c['share'])} % of the time at {fmt3(c['achieved'])} of its bound", text)
        t = parse(page).tables["run-0-layers-ops"]
        self.assertEqual([row["cells"][0] for row in t["tbody"]], [o["op_type"] for o in ops])
        self.assertIn(f"{fmt3(100 * self.L['below_10pct_share'])} % of the time is spent in layers below 10 % of their bound",
                      text)
        self.assertIn(f"the profiler's overhead: +{fmt3(100 * self.L['overhead'])} %", text)
        self.assertIn(self.L["overhead_note"], text)

    # ---- the figure -----------------------------------------------------------------
    def test_one_dot_per_costed_row_area_by_time_on_log_axes(self):
        page = self.page()
        svg = parse(page).svgs.get("run-0-layers-roof")
        self.assertIsNotNone(svg, "no per-layer roofline")
        rows = [r for r in self.L["rows"] if costed(r)]
        dots = [c for c in svg["circles"] if "ldot" in c.get("class", "")]
        self.assertEqual(len(dots), len(rows))
        by = {htmlmod.unescape(d["data-name"]): d for d in dots}
        self.assertEqual(set(by), {r["name"] for r in rows})
        for r in rows:
            self.assertTrue(by[r["name"]]["title"].startswith(f"{r['name']} ({r['op_type']}): {fmt3(r['time_ms'])} ms"),
                            by[r["name"]]["title"])
        # area proportional to time (above the smallest radius drawn)
        k = [float(by[r["name"]]["r"]) ** 2 / r["time_ms"] for r in rows if float(by[r["name"]]["r"]) > 2.5]
        self.assertGreater(len(k), 4)
        self.assertLess(max(k) / min(k), 1.03, k)
        # log axes: pixel distance proportional to the log of the ratio, along x and y
        att = {r["name"]: r["flops"] / r["time_ms"] / 1e6 for r in rows}
        a, b = rows[0]["name"], min(rows, key=lambda r: att[r["name"]])["name"]
        for key, val in (("cy", att), ("cx", {r["name"]: r["intensity"] for r in rows})):
            scale = [(float(by[n][key]) - float(by[a][key])) / math.log10(val[n] / val[a])
                     for n in by if abs(math.log10(val[n] / val[a])) > 0.3]
            self.assertGreater(len(scale), 2, key)
            mean = sum(scale) / len(scale)
            self.assertLess(max(scale) - min(scale), 0.02 * abs(mean), (key, scale))   # pixels per decade: one
        self.assertLess(float(by[b]["cy"]), 400)
        self.assertGreater(float(by[b]["cy"]), float(by[a]["cy"]))   # slower attained: lower
        # the roofs: the memory slope and the compute ceiling, labelled
        fig = page[page.index('id="run-0-layers-roof"'):]
        fig = fig[:fig.index("</figure>")]
        m = re.search(r'<g class="lroof"><title>([^<]*)</title><path d="(M[^"]*)"', fig)
        self.assertIsNotNone(m, "no roof")
        self.assertRegex(m.group(2), r"^M[\d.]+ [\d.]+L[\d.]+ [\d.]+M[\d.]+ [\d.]+H[\d.]+$")
        self.assertIn("compute ceiling 665 GFLOP/s", fig)
        self.assertIn("memory 20.0 GB/s", fig)
        left = len(self.L["rows"]) - len(rows)
        self.assertIn(f"Left out: the unattributed time and {left - 1} rows with no FLOPs, bytes or time to place on log "
                      f"axes ({left} in all).",
                      htmlmod.unescape(fig))

    def test_roofs_as_far_as_the_report_knows_them(self):
        r = copy.deepcopy(self.r)
        r["roofline"]["host-cpu"]["memory_bandwidth_gbps"] = None
        fig = self.page(r, "nobw.html")
        fig = htmlmod.unescape(fig[fig.index('id="run-0-layers-roof"'):])
        self.assertRegex(fig, r'<g class="lroof"><title>[^<]*</title><path d="M[\d.]+ [\d.]+H[\d.]+"')
        self.assertIn("its memory bandwidth is not known, so no memory slope is drawn", fig)
        r["roofline"] = None
        fig = self.page(r, "noroof.html")
        fig = htmlmod.unescape(fig[fig.index('id="run-0-layers-roof"'):fig.index("</figure>", fig.index('id="run-0-layers-roof"'))])
        self.assertNotIn("lroof", fig)
        self.assertIn("No roof is drawn", fig)
        self.assertEqual(fig.count('class="ldot'), sum(1 for x in self.L["rows"] if costed(x)))
        # no row with a cost: no figure, a sentence instead
        for row in r["layers"]["rows"]:
            row["flops"] = row["intensity"] = None
        page = self.page(r, "nocost.html")
        self.assertNotIn('id="run-0-layers-roof"', page)
        self.assertIn('id="run-0-layers-noroof"', page)

    def test_a_report_without_layers_has_no_layer_part_and_nothing_else_changes(self):
        with_layers = self.page()
        for absent in ("null", "missing"):
            r = copy.deepcopy(self.r)
            if absent == "null":
                r["layers"] = None
            else:
                del r["layers"]
            page = self.page(r, f"without-{absent}.html")
            self.assertNotIn("layers", re.sub(r"<style>.*?</style>|<script>.*?</script>", "", page, flags=re.S))
            start = with_layers.index('<h3 id="run-0-layers">')
            end = with_layers.index("</figure>\n", with_layers.index('id="run-0-layers-roof"')) + len("</figure>\n")
            self.assertEqual(with_layers[:start] + with_layers[end:], page, absent)

    def test_odd_blocks_never_break_the_page(self):
        """Whatever the block holds (wrong types, extreme numbers, markup in an op type,
        thousands of rows), the page is made and nothing of it runs."""
        big = [dict(self.L["rows"][0], name=f"n{i}", time_ms=1 + i % 7, time_ci_ms=None) for i in range(3000)]
        odd = [
            [],
            {"rows": "x", "by_op_type": 5},
            {"rows": [1, "a", None, {"name": 5, "time_ms": "fast", "nodes": [1, {"a": 1}], "time_ci_ms": [1],
                                     "gpu_bounds": [1, 2], "share": True}], "by_op_type": [None, 3]},
            {"rows": [dict(self.L["rows"][0], time_ms=1e-300, flops=1e300, intensity=1e-300, bound_ms=1e-300),
                      dict(self.L["rows"][1], time_ms=1e300, time_ci_ms=[0, 1e308], intensity=1e300),
                      dict(self.L["rows"][2], op_type="<script>window.__pwned=1</script>", time_ms=-1)],
             "by_op_type": [{"op_type": "<script>x</script>", "share": 2, "achieved": -1}],
             "total_ms": "x", "total_ci_ms": [1, "b"], "covers": 7, "overhead_note": ["x"]},
            {"rows": big, "by_op_type": self.L["by_op_type"]},
        ]
        for k, block in enumerate(odd):
            r = copy.deepcopy(self.r)
            r["layers"] = block
            page = self.page(r, f"odd{k}.html")
            self.assertEqual(page.count("<script"), 1, k)
            self.assertEqual('<h3 id="run-0-layers">' in page, isinstance(block, dict), k)
            self.assertTrue(page.rstrip().endswith("</html>"), k)
        t = self.layer_table(page)
        self.assertEqual(len(t["tbody"]), 3000)

    def test_the_fixture_is_its_script(self):
        """make_layers_fixture.py writes the committed fixture, unchanged."""
        src = os.path.join(SOURCE, "tests", "fixtures", "layers", "make_layers_fixture.py")
        tmp = self.path("fx")
        os.makedirs(tmp)
        shutil.copy(src, tmp)
        p = run_python(os.path.join(tmp, "make_layers_fixture.py"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(tmp, "layers-run.json")) as f:
            self.assertEqual(json.load(f), self.r)


REAL = os.path.join(os.environ.get("RPX_FIXTURES", os.path.join(BUILD, "fixtures")), "layers", "run.json")


class LayerViewOfARealReportTest(unittest.TestCase):
    """A report `rpxprof run --layers` wrote (unit.test_layer_times' stand-in target with a
    per-node profiler of known times, joined with conv_small.onnx's per-op cost; ctest
    fixture layer_reports): its rows, its dots and each row's bound as the report states it."""

    path = LayerViewTest.path
    page = LayerViewTest.page
    layer_table = LayerViewTest.layer_table
    tearDown = LayerViewTest.tearDown

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="rpxlayers-")
        self.tmp = self._tmp.name
        if not os.path.exists(REAL):
            self.fail(f"no {REAL}: unit.test_layer_times writes it (ctest fixture layer_reports)")
        with open(REAL) as f:
            self.r = json.load(f)
        self.L = self.r["layers"]

    def test_the_real_reports_table_dots_and_bounds(self):
        page = self.page(out="real.html")
        t = self.layer_table(page)
        rows = self.L["rows"]
        layers = [r for r in rows if r["name"] != "unattributed"]
        self.assertEqual([row["cells"][0] for row in t["tbody"]],
                         [r["name"] for r in sorted(layers, key=lambda r: -r["time_ms"])])
        self.assertEqual(len(t["tfoot"]), 1)
        for row, r in zip(t["tbody"], sorted(layers, key=lambda r: -r["time_ms"])):
            self.assertEqual(row["cells"][3], ci_text(r["time_ms"], *r["time_ci_ms"]) if r["time_ci_ms"]
                             else fmt3(r["time_ms"]))
            for key, col in NULL_COLUMNS.items():
                if r[key] is None:
                    self.assertEqual(row["cells"][col], "n/a", (r["name"], key))
                elif key not in ("op_type", "nodes"):
                    self.assertEqual(float(row["v"][col]), r[key] * (100 if key == "share" else 1), (r["name"], key))
        fig = page[page.index('id="run-0-layers-roof"'):]
        fig = fig[:fig.index("</figure>")]
        svg = parse(page).svgs["run-0-layers-roof"]
        drawn = [r for r in rows if costed(r)]
        self.assertGreater(len(drawn), 1)
        self.assertEqual(len([c for c in svg["circles"] if "ldot" in c.get("class", "")]), len(drawn))
        # each drawn row's bound: a mark at its FLOPs over its bound_ms, named
        bounds = re.findall(r'<g class="lbnd p\d"><title>([^<]*)</title>', fig)
        self.assertEqual(len(bounds), len([r for r in drawn if r["bound_ms"]]))
        for r in drawn:
            self.assertIn(f"{r['name']}: its bound {fmt3(r['bound_ms'])} ms, "
                          f"{fmt3(r['flops'] / r['bound_ms'] / 1e6)} GFLOP/s attainable", bounds)
        if "host-cpu" not in (self.r.get("roofline") or {}):
            self.assertNotIn('class="lroof"', fig)
            self.assertIn("No roof is drawn", fig)


def run_python(script):
    import subprocess
    import sys
    return subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=60)


# After load: a click on each column's head named, the rows' first cells and sort values
# after it; what overflows; where each dot lies against its figure.
PROBE = r"""<script>
window.__p={errors:[],csp:[]};
window.addEventListener('error',function(e){__p.errors.push('error: '+e.message);});
window.addEventListener('securitypolicyviolation',function(e){__p.csp.push(e.blockedURI+' '+e.violatedDirective);});
['error','warn'].forEach(function(k){var f=console[k];console[k]=function(){__p.errors.push(k+': '+Array.prototype.join.call(arguments,' '));return f.apply(console,arguments);};});
window.addEventListener('load',function(){setTimeout(function(){var out={};try{
 out.res=performance.getEntriesByType('resource').map(function(e){return e.name;});
 var t=document.getElementById('run-0-layers-table'),hs=[].map.call(t.tHead.rows[0].cells,function(c){return c.textContent.trim();});
 function rows(){return [].map.call(t.tBodies[0].rows,function(r){return [r.cells[0].textContent,[].map.call(r.cells,function(c){return c.getAttribute('data-v');})];});}
 out.before=rows();out.sorts={};
 ['time (ms) [95 % interval]','layer','FLOPs','achieved'].forEach(function(h){var i=hs.indexOf(h);
  t.tHead.rows[0].cells[i].click();var a=rows();t.tHead.rows[0].cells[i].click();out.sorts[h]=[i,a,rows()];});
 out.foot=[].map.call(t.tFoot.rows,function(r){return r.cells[0].textContent;});
 out.foot_last=t.rows[t.rows.length-1].className;
 var de=document.documentElement;out.page=[de.scrollWidth,de.clientWidth];
 var w=t.parentNode;out.wrap=[w.scrollWidth,w.clientWidth];
 out.cells=[].filter.call(t.querySelectorAll('td,th'),function(c){return c.scrollWidth>c.clientWidth+1;}).map(function(c){return c.textContent;});
 var svg=document.getElementById('run-0-layers-roof'),sb=svg.getBoundingClientRect();out.svg=[sb.width,sb.height];
 out.dots=[].map.call(svg.querySelectorAll('circle.ldot'),function(c){var b=c.getBoundingClientRect();
  return [b.width>0&&b.height>0,b.left>=sb.left-0.5&&b.right<=sb.right+0.5&&b.top>=sb.top-0.5&&b.bottom<=sb.bottom+0.5];});
 out.texts=[].filter.call(svg.querySelectorAll('text'),function(x){var b=x.getBoundingClientRect();
  return b.left<sb.left-0.5||b.right>sb.right+0.5;}).map(function(x){return x.textContent;});
}catch(e){__p.errors.push('probe: '+e);}
 out.errors=__p.errors;out.csp=__p.csp;
 var pre=document.createElement('pre');pre.id='rpx-probe';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);},0);});
</script>"""


class LayerViewChromiumTest(unittest.TestCase):
    path = LayerViewTest.path
    setUp = LayerViewTest.setUp
    tearDown = LayerViewTest.tearDown
    page = LayerViewTest.page

    def probe(self, name, size, view="layers"):
        if SANITIZED:
            self.skipTest("chromium parts run in the normal build only (slow under ASan)")
        if not CHROMIUM:
            self.fail("chromium is not installed (scripts/setup.sh installs it)")
        with open(self.path(name)) as f:
            page = f.read()
        probe = self.path(name + ".probe.html")
        with open(probe, "w") as f:
            f.write(page.replace("<head>", "<head>" + PROBE, 1))
        prof = tempfile.mkdtemp(prefix="rpxchrome-")
        try:
            p = chromium(f"--window-size={size}", "--virtual-time-budget=5000", "--dump-dom", "file://" + probe, prof=prof)
            os.makedirs(ARTIFACTS, exist_ok=True)
            png = os.path.join(ARTIFACTS, view + ".png")
            if os.path.exists(png):
                os.unlink(png)
            chromium("--hide-scrollbars", "--window-size=1100,5200", f"--screenshot={png}", "file://" + self.path(name),
                     prof=prof)
            self.assertTrue(os.path.exists(png) and os.path.getsize(png) > 10000, "the screenshot is empty")
        finally:
            shutil.rmtree(prof, ignore_errors=True)
        m = re.search(r'<pre id="rpx-probe">(.*?)</pre>', p.stdout, re.S)
        self.assertIsNotNone(m, "the probe wrote nothing: " + p.stderr[-2000:])
        found = json.loads(htmlmod.unescape(m.group(1)))
        self.assertEqual(found["errors"], [], "console or script errors")
        self.assertEqual(found["csp"], [], "the page tried to fetch something")
        self.assertEqual(found["res"], [], "network requests")
        console = [l for l in p.stderr.splitlines() if "CONSOLE" in l and "rpx-probe" not in l]
        self.assertEqual(console, [], "chromium's console log")
        return found

    def test_a_click_sorts_and_nothing_overflows(self):
        self.page()
        found = self.probe("layers.html", "1100,2400")
        L = self.L
        layers = [r for r in L["rows"] if r["name"] != "unattributed"]
        by_name = {r["name"]: r for r in layers}
        # before any click: by time, slowest first
        self.assertEqual([n for n, _ in found["before"]],
                         [r["name"] for r in sorted(layers, key=lambda r: (r["time_ms"] is None, -(r["time_ms"] or 0)))])

        def values(rows, i):
            return [float(v[i]) if v[i] not in ("", None) else None for _, v in rows]

        for head, key in (("time (ms) [95 % interval]", "time_ms"), ("FLOPs", "flops"), ("achieved", "achieved")):
            i, up, down = found["sorts"][head]
            for rows, rev in ((up, False), (down, True)):
                got = values(rows, i)
                known = [v for v in got if v is not None]
                self.assertEqual(known, sorted(known, reverse=rev), (head, got))
                self.assertEqual(got[len(known):], [None] * (len(got) - len(known)), (head, "n/a last"))
                self.assertEqual(got, [by_name[n][key] for n, _ in rows], head)   # each row moved whole
            self.assertNotEqual([n for n, _ in up], [n for n, _ in found["before"]], head)
        i, up, down = found["sorts"]["layer"]
        self.assertEqual(sorted(n for n, _ in up), sorted(r["name"] for r in layers))
        self.assertEqual([n for n, _ in down], [n for n, _ in up][::-1])
        self.assertNotEqual([n for n, _ in up], [n for n, _ in found["before"]])
        # the unattributed row never moves: the table's last, in its foot
        self.assertEqual(len(found["foot"]), 1)
        self.assertTrue(found["foot"][0].startswith("unattributed"))
        self.assertEqual(found["foot_last"], "unattributed")
        # nothing overflows: the page, the table's frame, any cell; every dot and label inside the figure
        self.assertLessEqual(found["page"][0], found["page"][1], "the page scrolls sideways")
        self.assertLessEqual(found["wrap"][0], found["wrap"][1] + 1, "the layer table is wider than the page")
        self.assertEqual(found["cells"], [], "cells whose text overflows")
        self.assertGreater(found["svg"][0], 100)
        self.assertGreater(found["svg"][1], 50)
        self.assertEqual(len(found["dots"]), sum(1 for r in L["rows"] if costed(r)))
        self.assertEqual([d for d in found["dots"] if d != [True, True]], [], "a dot not drawn or outside its figure")
        self.assertEqual(found["texts"], [], "labels outside the figure")

    def test_the_real_report_in_the_browser(self):
        if not os.path.exists(REAL):
            self.fail(f"no {REAL}: unit.test_layer_times writes it (ctest fixture layer_reports)")
        with open(REAL) as f:
            r = json.load(f)
        self.page(r, "real.html")
        found = self.probe("real.html", "1100,2400", view="layers-real")
        self.assertEqual(found["page"][0] <= found["page"][1], True, "the page scrolls sideways")
        self.assertLessEqual(found["wrap"][0], found["wrap"][1] + 1)
        self.assertEqual(found["cells"], [])
        self.assertEqual(len(found["dots"]), sum(1 for x in r["layers"]["rows"] if costed(x)))
        self.assertEqual([d for d in found["dots"] if d != [True, True]], [])
        self.assertEqual(found["texts"], [])
        rows = [x for x in r["layers"]["rows"] if x["name"] != "unattributed"]
        for head, key in (("time (ms) [95 % interval]", "time_ms"), ("FLOPs", "flops"), ("achieved", "achieved")):
            i, up, down = found["sorts"][head]
            want = sorted(x[key] for x in rows if x[key] is not None)
            self.assertEqual([float(v[i]) for _, v in up][:len(want)], want, head)
            self.assertEqual([float(v[i]) for _, v in down][:len(want)], want[::-1], head)


if __name__ == "__main__":
    main()
