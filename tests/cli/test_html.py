"""`rpxprof report` and --html (docs/report.md, "The HTML report"): the page of a run,
a crashed run, a comparison, an HTTP open-loop run and a batch with a FAIL, opened from
file:// by Debian's chromium, headless: no console error, no network request, every figure
drawn with a size, the headline's p50 the report's, the FAIL shown, the zoom and the sort
working. A screenshot of each view is kept in the build folder (test-artifacts/html/)."""
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from common import BUILD, MODELS, SANITIZED, main, run, save_matmul_onnx, validate_profile
from http_server import HttpTestServer

ARTIFACTS = os.path.join(BUILD, "test-artifacts", "html")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Put at the start of <head> of a copy of the page: it records errors, CSP violations
# and every resource the page fetched, and after load measures the figures, reads the
# headline's p50 and the validation status, drags across the first per-call plot (the
# page's zoom) and sorts the summary table; then writes it all into <pre id=rpx-probe>,
# which --dump-dom prints.
PROBE = r"""<script>
window.__p={errors:[],csp:[]};
window.addEventListener('error',function(e){__p.errors.push('error: '+e.message);});
window.addEventListener('securitypolicyviolation',function(e){__p.csp.push(e.blockedURI+' '+e.violatedDirective);});
['error','warn'].forEach(function(k){var f=console[k];console[k]=function(){__p.errors.push(k+': '+Array.prototype.join.call(arguments,' '));return f.apply(console,arguments);};});
window.addEventListener('load',function(){setTimeout(function(){var out={};try{
 out.figs=[].map.call(document.querySelectorAll('svg.fig, figure.agg > svg'),function(s){var r=s.getBoundingClientRect();return [s.id||'',r.width,r.height];});
 out.res=performance.getEntriesByType('resource').map(function(e){return e.name;});
 out.p50=[].map.call(document.querySelectorAll('.headline .p50'),function(e){return [e.textContent,e.dataset.ms];});
 out.status=[].map.call(document.querySelectorAll('.status'),function(e){var r=e.getBoundingClientRect();return [e.textContent,r.width,r.height];});
 out.alerts=[].map.call(document.querySelectorAll('.alert'),function(e){return e.textContent;});
 out.headline=[].map.call(document.querySelectorAll('p.headline'),function(e){return e.textContent;});
 out.stats=[].map.call(document.querySelectorAll('table.stats tbody tr'),function(r){return [].map.call(r.cells,function(c){return c.textContent;});});
 out.h3=[].map.call(document.querySelectorAll('h3'),function(e){return e.textContent;});
 out.states=[].map.call(document.querySelectorAll('table.states'),function(t){return t.innerText;});
 var p=document.querySelector('svg.plot');
 if(p){var r=p.getBoundingClientRect(),y=r.top+r.height/2;
  function ev(t,x,tg){(tg||p).dispatchEvent(new MouseEvent(t,{bubbles:true,clientX:r.left+x*r.width,clientY:y}));}
  out.vb0=p.getAttribute('viewBox');ev('mousedown',0.25);ev('mousemove',0.5);out.tip=document.getElementById('rpx-tip').textContent;
  ev('mouseup',0.5,window);out.vb1=p.getAttribute('viewBox');
  out.ticks=[].map.call(p.parentNode.querySelectorAll('g.xt text'),function(t){return t.textContent;});
  p.dispatchEvent(new MouseEvent('dblclick',{bubbles:true}));out.vb2=p.getAttribute('viewBox');}
 var t=document.getElementById('summary');
 if(t){var hs=[].map.call(t.tHead.rows[0].cells,function(c){return c.textContent;});var i=hs.indexOf('p50_ms');
  t.tHead.rows[0].cells[i].click();out.sorted=[].map.call(t.tBodies[0].rows,function(r){return r.cells[i].textContent;});}
}catch(e){__p.errors.push('probe: '+e);}
 out.title=document.title;out.pwned=window.__pwned||null;out.own=!!document.getElementById('rpx-tip');
 out.errors=__p.errors;out.csp=__p.csp;
 var pre=document.createElement('pre');pre.id='rpx-probe';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);},0);});
</script>"""


def fmt3(x):
    """The summary's number rule (rpx_format_3g, include/rpxprof/summary.h): three
    significant digits in plain decimals, no exponent between 1e-9 and 1e15."""
    if x is None or not math.isfinite(x):
        return "n/a"
    a = abs(x)
    if a == 0:
        return "0"
    if a < 1e-9 or a >= 1e15:
        return "%.3g" % x
    e = math.floor(math.log10(a))
    r = math.floor(a / 10.0 ** (e - 2) + 0.5) * 10.0 ** (e - 2)
    e = math.floor(math.log10(r) + 1e-12)
    return ("-" if x < 0 else "") + "%.*f" % (max(0, 2 - e), r)


def chromium(*args, prof):
    """Debian's chromium, headless; its crash reports and caches go under `prof`."""
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           "--disable-extensions", f"--user-data-dir={prof}", "--enable-logging=stderr", "--v=0",
                           *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, HOME=prof, XDG_CONFIG_HOME=os.path.join(prof, "config"),
                                   XDG_CACHE_HOME=os.path.join(prof, "cache")))


class HtmlReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="rpxhtml-")
        d = cls.tmp = cls._tmp.name
        run("inputs", "make", os.path.join(d, "frame.npz"), "rgb=48x64x3:uint8=7", check=0)
        common = ["--inputs", "frame.npz", "--device", "cpu", "--precision", "fp32", "--unit", "frame",
                  "--warmup", "3", "--repeats", "300", "--processes", "5", "-q"]
        # a run with a cost (the roofline chart) and a second one to compare
        run("run", "--model", "rpxprof-demo:demo_depth", *common, "--flops", "1e6", "--output", "run.json",
            check=0, cwd=d)
        run("run", "--model", "rpxprof-demo:demo_depth", *common, "--flops", "1e6", "--output", "run2.json",
            check=0, cwd=d)
        # a run whose model crashes at its 7th call (2 warmup + 5 timed)
        run("run", "--model", f"{os.path.abspath(MODELS)}:crash_at", "--inputs", "frame.npz", "--processes", "1",
            "--warmup", "2", "--repeats", "100", "-q", "--output", "crashed.json",
            env={"RPX_TEST_AT": "7"}, check=3, cwd=d)
        p = run("compare", "run.json", "run2.json", "--json", cwd=d)
        with open(os.path.join(d, "cmp.json"), "w") as f:
            f.write(p.stdout)
        # an HTTP open-loop run: 50 req/s for 1 s against a local server that stalls once
        with HttpTestServer() as srv:
            run("run", "--model", srv.url("/locked?ms=2&stall_at=20&stall_ms=150"), "--method", "GET",
                "--warmup", "2", "--rate", "50", "--duration", "1", "--concurrency", "2", "-q",
                "--output", "http.json", check=0, cwd=d, timeout=120)
        # a batch whose aggregate FAILs: no model declares its FLOPs
        with open(os.path.join(d, "m.json"), "w") as f:
            json.dump({"schema": "rpxprof.manifest/1",
                       "defaults": {"warmup": 2, "repeats": 40, "device": "cpu", "precision": "fp32"},
                       "tasks": {"image_depth": {"inputs": "frame.npz", "unit": "frame"}},
                       "models": [{"name": "demo-depth", "model": "rpxprof-demo:demo_depth", "tasks": ["image_depth"]},
                                  {"name": "demo-noop", "model": "rpxprof-demo:demo_noop", "tasks": ["image_depth"]}]},
                      f)
        run("batch", "m.json", "--out-dir", "bo", "-q", check=0, cwd=d)
        cls.reports = {}
        for name in ("run", "run2", "crashed", "http"):
            with open(os.path.join(d, name + ".json")) as f:
                cls.reports[name] = json.load(f)
        os.makedirs(ARTIFACTS, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def report(self, *inputs, out, code=0):
        p = run("report", *inputs, "-o", out, cwd=self.tmp)
        self.assertEqual(p.returncode, code, p.stderr)
        if code:
            return p
        with open(self.path(out)) as f:
            html = f.read()
        self.check_static(html)
        return html

    def check_static(self, html):
        """One file: nothing it would fetch, a policy that forbids fetching."""
        self.assertTrue(html.startswith("<!DOCTYPE html>\n<!-- rpxprof report -->"))
        self.assertIn("Content-Security-Policy\" content=\"default-src 'none';", html)
        for pattern in (r"<(link|img|iframe|object|embed)\b[^>]*>", r"<script[^>]*\bsrc=[^>]*>", r"@import|url\("):
            m = re.search(pattern, html)
            self.assertIsNone(m, f"the page would fetch something: {m and m.group(0)}")
        for m in re.finditer(r"\b(?:src|href)=\"([^\"]*)\"", html):
            self.assertTrue(m.group(1).startswith("#"), m.group(0))
        self.assertIn("@media print", html)
        self.assertIn("prefers-color-scheme:dark", html)

    def shot(self, html_name, png, *flags, size="1100,2400"):
        prof = tempfile.mkdtemp(prefix="rpxchrome-")
        try:
            chromium("--hide-scrollbars", f"--window-size={size}", *flags, f"--screenshot={png}",
                     "file://" + self.path(html_name), prof=prof)
        finally:
            shutil.rmtree(prof, ignore_errors=True)
        self.assertTrue(os.path.exists(png) and os.path.getsize(png) > 10000, f"{png}: no screenshot")

    def probe(self, html_name, extra=""):
        """Open a copy with the probe (and `extra` put before </body>) from file://;
        returns what the probe found, without judging it."""
        if SANITIZED:
            self.skipTest("chromium parts run in the normal build only (slow under ASan)")
        if not CHROMIUM:
            self.fail("chromium is not installed (scripts/setup.sh installs it)")
        with open(self.path(html_name)) as f:
            html = f.read()
        probe = self.path(html_name + ".probe.html")
        with open(probe, "w") as f:
            f.write(html.replace("<head>", "<head>" + PROBE, 1).replace("</body>", extra + "</body>", 1))
        prof = tempfile.mkdtemp(prefix="rpxchrome-")
        try:
            p = chromium("--virtual-time-budget=5000", "--dump-dom", "file://" + probe, prof=prof)
        finally:
            shutil.rmtree(prof, ignore_errors=True)
        m = re.search(r'<pre id="rpx-probe">(.*?)</pre>', p.stdout, re.S)
        self.assertIsNotNone(m, "the probe wrote nothing: " + p.stderr[-2000:])
        import html as h
        return json.loads(h.unescape(m.group(1)))

    def browse(self, html_name, view, size="1100,2400"):
        """Open a copy with the probe from file://; returns what it found. Keeps a
        screenshot of the page itself as test-artifacts/html/VIEW.png."""
        if SANITIZED:
            self.skipTest("chromium parts run in the normal build only (slow under ASan)")
        if not CHROMIUM:
            self.fail("chromium is not installed (scripts/setup.sh installs it)")
        src = self.path(html_name)
        with open(src) as f:
            html = f.read()
        probe = self.path(html_name + ".probe.html")
        with open(probe, "w") as f:
            f.write(html.replace("<head>", "<head>" + PROBE, 1))
        prof = tempfile.mkdtemp(prefix="rpxchrome-")
        try:
            p = chromium("--virtual-time-budget=5000", "--dump-dom", "file://" + probe, prof=prof)
            png = os.path.join(ARTIFACTS, view + ".png")
            if os.path.exists(png):
                os.unlink(png)
            chromium("--hide-scrollbars", f"--window-size={size}", f"--screenshot={png}", "file://" + src, prof=prof)
        finally:
            shutil.rmtree(prof, ignore_errors=True)
        m = re.search(r'<pre id="rpx-probe">(.*?)</pre>', p.stdout, re.S)
        self.assertIsNotNone(m, "the probe wrote nothing: " + p.stderr[-2000:])
        import html as h
        found = json.loads(h.unescape(m.group(1)))
        self.assertEqual(found["errors"], [], "console or script errors")
        self.assertEqual(found["csp"], [], "the page tried to fetch something")
        self.assertEqual(found["res"], [], "network requests")
        console = [l for l in p.stderr.splitlines() if "CONSOLE" in l and "rpx-probe" not in l]
        self.assertEqual(console, [], "chromium's console log")
        self.assertGreater(len(found["figs"]), 0)
        for fid, w, hh in found["figs"]:
            self.assertGreater(w, 100, f"figure {fid} has no width")
            self.assertGreater(hh, 50, f"figure {fid} has no height")
        self.assertTrue(os.path.getsize(png) > 10000, "the screenshot is empty")
        return found

    def check_p50(self, found, reports):
        # the text by the summary's rule, the exact value in data-ms
        self.assertEqual(len(found["p50"]), len(reports))
        for (text, data), r in zip(found["p50"], reports):
            self.assertEqual(text, fmt3(r["latency"]["p50_ms"]))
            self.assertEqual(float(data), r["latency"]["p50_ms"])

    def check_digits(self, found, r):
        """issue 38: every number of the headline and of the statistics table has the
        summary's digits (three significant, no exponent), the same as `rpxprof run` prints."""
        lat, ci = r["latency"], r["latency_ci"]
        head = found["headline"][0]
        want = [("p50", "p50_ms"), ("p95", "p95_ms"), ("p99", "p99_ms")]
        for word, key in want:
            m = re.search(word + r" (\S+) ms", head)
            self.assertIsNotNone(m, head)
            self.assertEqual(m.group(1), fmt3(lat[key]), head)
        if ci.get("p50_ms"):
            m = re.search(r"interval (\S+) to (\S+) ms", head)
            self.assertEqual((m.group(1), m.group(2)), tuple(fmt3(v) for v in ci["p50_ms"]), head)
        self.assertIn(f"; {r['measured_calls']} timed calls in {r['processes']} process", head)
        rows = {row[0]: row[1:] for row in found["stats"]}
        for stat in ("p50", "p95", "p99", "mean", "min", "max", "std"):
            value, interval = rows[stat]
            self.assertEqual(value, fmt3(lat[stat + "_ms"]), (stat, rows[stat]))
            iv = ci.get(stat + "_ms")
            if iv:
                self.assertEqual(interval, f"{fmt3(iv[0])} to {fmt3(iv[1])}", (stat, rows[stat]))
        for text in [head] + [c for row in found["stats"] for c in row]:
            self.assertNotRegex(text, r"\de[+-]?\d", "an exponent")

    def check_zoom(self, found):
        w = float(found["vb0"].split()[2])
        x0, _, vw, _ = map(float, found["vb1"].split())
        self.assertAlmostEqual(x0, 0.25 * w, delta=1.5)
        self.assertAlmostEqual(vw, 0.25 * w, delta=1.5)
        self.assertEqual(list(map(float, found["vb2"].split())), list(map(float, found["vb0"].split())))  # double-click: out
        self.assertTrue(found["tip"].startswith(("call ", "sent at ms ")), found["tip"])
        self.assertGreater(len(found["ticks"]), 1)

    # ---- the views ---------------------------------------------------------------
    def test_run_view(self):
        r = self.reports["run"]
        html = self.report("run.json", out="run.html")
        self.assertIn(f'data-ms="{r["latency"]["p50_ms"]!r}"', html)
        for s in ("Every call", "Per process", "Why it varied", "Memory", "Cost and roofline", "Real-time budget",
                  "System card", "Conditions", 'id="run-0-roof"', 'id="run-0-box"', 'id="run-0-dist"',
                  'id="run-0-calls"'):
            self.assertIn(s, html)
        if r.get("call_records") and r["call_records"].get("cpu_start"):
            self.assertIn('id="run-0-cpu"', html)  # the CPU each call started on
        # every timed call is a dot of its process's path, every warmup call one of the warmup band
        fig = html[html.index('id="run-0-calls"'):]
        fig = fig[:fig.index("</figure>")]
        dots = re.findall(r'<path class="pts p(\d)" d="([^"]*)"', fig)
        self.assertEqual(sum(d.count("h0") for _, d in dots), r["measured_calls"])
        for p in r["latency_by_process"]:
            self.assertEqual(dots[p["process"]][1].count("h0"), p["measured_calls"])
        self.assertEqual(re.search(r'<path class="warm" d="([^"]*)"', fig).group(1).count("h0"),
                         len(r["warmup_samples_ms"]))
        for n in r["notes"]:
            self.assertIn(n.replace("'", "&#39;").replace('"', "&quot;"), html)
        # its screenshot is kept (the README's picture, docs/images/report-run.png, is the packaged demo's page:
        # scripts/demo.sh's report, `rpxprof report`, chromium --headless --window-size=1000,1700 --screenshot)
        found = self.browse("run.html", "run", size="1000,1700")
        self.check_p50(found, [r])
        self.check_digits(found, r)
        self.check_zoom(found)
        # the dark scheme
        self.shot("run.html", os.path.join(ARTIFACTS, "run-dark.png"), "--force-dark-mode",
                  "--blink-settings=preferredColorScheme=0")
        # printed: chromium's own PDF of the page (@media print), kept beside the screenshots
        pdf = os.path.join(ARTIFACTS, "run.pdf")
        if os.path.exists(pdf):
            os.unlink(pdf)
        prof = tempfile.mkdtemp(prefix="rpxchrome-")
        try:
            chromium("--no-pdf-header-footer", f"--print-to-pdf={pdf}", "file://" + self.path("run.html"), prof=prof)
        finally:
            shutil.rmtree(prof, ignore_errors=True)
        with open(pdf, "rb") as f:
            data = f.read()
        self.assertTrue(data.startswith(b"%PDF"), "chromium printed no PDF")
        self.assertGreater(data.count(b"/Type /Page") + data.count(b"/Type/Page"), 1, "the print has one page or none")

    def test_the_page_speaks_words_not_keys(self):
        """issue 38: with no cost, one line on how to get it (not rows of n/a); the memory in
        words; the compare page's statements without raw JSON arrays; the histogram over the
        p0.1-p99.9 range with what lies beyond marked; "pinned" only for a pinned run."""
        out = self.path("nocost.json")
        run("run", "--model", "rpxprof-demo:demo_depth", "--inputs", "frame.npz", "--repeats", "1000",
            "--warmup", "3", "--processes", "2", "-q", "--output", out, check=0, cwd=self.tmp)
        with open(out) as f:
            r = json.load(f)
        html = self.report("nocost.json", out="nocost.html")
        cost = html[html.index("<h3>Cost and roofline</h3>"):]
        cost = cost[:cost.index("<h3>", 5)]
        self.assertIn("No cost was given: run again with <code>--cost MODEL.onnx</code> or <code>--flops N</code>", cost)
        self.assertNotIn("n/a", cost)
        mem = html[html.index("<h3>Memory</h3>"):]
        mem = mem[:mem.index("</table>")]
        self.assertIn("peak resident set during the timed calls", mem)
        self.assertNotIn("cpu_rss_trend.", mem)
        self.assertNotIn("_mb<", mem)
        if r["memory"].get("cpu_rss_trend", {}).get("growth_kib_per_call") is not None:
            self.assertIn("leak check: growth per call", mem)
        # the histogram: one call of 1,000 made 50x the slowest lies beyond p99.9, is counted
        # at the axis's edge and does not squeeze the others into a few bars
        far = json.loads(json.dumps(r))
        far["latency_samples_ms"][-1] = 50 * max(r["latency_samples_ms"])
        with open(self.path("far.json"), "w") as f:
            json.dump(far, f)
        dist = self.report("far.json", out="far.html")
        dist = dist[dist.index('id="run-0-dist"'):]
        dist = dist[:dist.index("</figure>")]
        self.assertIn("p0.1 to p99.9", dist)
        self.assertIn("1 call above (to %s ms)" % fmt3(far["latency_samples_ms"][-1]), dist)
        bars = [int(n) for n in re.findall(r"ms: (\d+) calls</title></rect>", dist)]
        below = sum(int(n) for n in re.findall(r"(\d+) calls? below", dist))
        self.assertEqual(sum(bars) + below + 1, len(far["latency_samples_ms"]), bars)  # every call counted once
        if (r.get("placement") or {}).get("policy") != "pinned":
            self.assertNotIn("(pinned)", html)
        # the comparison: words and numbers, no JSON array
        cmp = self.report("cmp.json", out="cmp-words.html")
        rest = cmp[cmp.index("Everything the comparison states"):]
        self.assertNotRegex(rest, r"<code>\[", "a raw JSON array")
        with open(self.path("cmp.json")) as f:
            c = json.load(f)
        if c.get("p50_ratio_ci"):
            lo, hi = c["p50_ratio_ci"]
            self.assertRegex(rest, r"p50 ratio new/base, interval</th><td>(<span[^>]*>)?%s(</span>)? to "
                             % re.escape(fmt3(lo)))
        self.assertNotIn("<code>{}</code>", rest)
        text = re.sub(r"<[^>]+>", " ", rest[:rest.index("</table>")])
        for tok in re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", text):
            self.assertEqual(tok, fmt3(float(tok)), "a number with other digits than the rule's")

    def test_crashed_run_view(self):
        r = self.reports["crashed"]
        self.assertEqual(r["status"], "crashed")
        self.report("crashed.json", out="crashed.html")
        found = self.browse("crashed.html", "crashed")
        self.check_p50(found, [r])
        self.assertTrue(any(a.startswith("Status: crashed") and "signal" in a for a in found["alerts"]), found["alerts"])

    def test_compare_view(self):
        with open(self.path("cmp.json")) as f:
            c = json.load(f)
        html = self.report("cmp.json", out="cmp.html")
        self.assertIn('id="compare-two"', html)    # both distributions: the reports were found
        self.assertIn('id="compare-procs"', html)
        self.assertIn('id="compare-ratio"', html)
        found = self.browse("cmp.html", "compare")
        self.assertEqual(found["p50"], [])
        self.assertIn(f'Verdict: <b class="v">{c["verdict"]}</b>', html)

    def test_http_open_loop_view(self):
        r = self.reports["http"]
        validate_profile(r)
        self.assertIsNotNone(r["http"]["load"])
        html = self.report("http.json", out="http.html")
        for s in ("Open-loop load", 'id="run-0-phases"', "intended send time"):
            self.assertIn(s, html)
        found = self.browse("http.html", "http")
        self.check_p50(found, [r])
        self.check_zoom(found)
        self.assertTrue(found["tip"].startswith("sent at ms "), found["tip"])

    def test_batch_view_shows_the_fail(self):
        html = self.report("bo", out="batch.html")
        self.assertIn('<span class="status FAIL">FAIL</span>', html)
        self.assertIn("efficiency.flops is unavailable", html)
        found = self.browse("batch.html", "batch")
        self.assertEqual(len(found["status"]), 1)
        text, w, h = found["status"][0]
        self.assertEqual(text, "FAIL")
        self.assertGreater(w * h, 0)
        reps = [json.load(open(self.path("bo", "image_depth", m + ".json"))) for m in ("demo-depth", "demo-noop")]
        self.check_p50(found, reps)
        vals = [float(v) for v in found["sorted"]]
        self.assertEqual(vals, sorted(vals))  # the table sorted by p50 on a click

    # ---- injected text (issue 37 item 4) -----------------------------------------
    def test_injected_strings_never_run(self):
        """One injected string per field class: text (a model name), an attribute (a
        roofline target's name in data-target), SVG (an aggregate folder's figure.svg)
        and words derived from the JSON (target_kind; a comparison's verdicts, covers
        and design). Each would set window.__pwned or the title if it ran: none runs,
        the page's own script does, and the CSP alone refuses a script put in the page."""
        def evil(tag):
            return (f"\"'><script>window.__pwned='{tag}';document.title='pwned'</script>"
                    f"<img src=x onerror=\"window.__pwned='{tag}-img'\">")
        r = json.loads(json.dumps(self.reports["run"]))
        r["model_name"] = evil("text")
        r["target_kind"] = evil("kind")
        key = next(iter(r["roofline"]))
        r["roofline"][evil("attr")] = r["roofline"].pop(key)
        with open(self.path("evil-run.json"), "w") as f:
            json.dump(r, f)
        with open(self.path("cmp.json")) as f:
            c = json.load(f)
        for k in ("p50_verdict", "p95_verdict", "mean_verdict", "covers", "design"):
            c[k] = evil(k)
        with open(self.path("evil-cmp.json"), "w") as f:
            json.dump(c, f)
        run("aggregate", "bo", "--out-dir", "evil-ag", "-q", cwd=self.tmp)
        with open(self.path("evil-ag", "figure.svg")) as f:
            svg = f.read()
        svg = svg.replace("</svg>", "<script>window.__pwned='svg'</script><g onload=\"window.__pwned='svg-on'\">"
                          "<text>&lt;fine&gt;</text></g><foreignObject><img src=x onerror=\"window.__pwned="
                          "'svg-fo'\"/></foreignObject><![CDATA[<script>window.__pwned='cdata'</script>]]>"
                          "<a href=\"javascript:window.__pwned='href'\"><text>a</text></a></svg>")
        with open(self.path("evil-ag", "figure.svg"), "w") as f:
            f.write(svg)
        self.report("evil-run.json", out="evil-run.html")
        self.report("evil-cmp.json", "run.json", "run2.json", out="evil-cmp.html")
        html = self.report("evil-ag", out="evil-ag.html")
        self.assertIn("&lt;fine&gt;", html)
        for name in ("evil-run.html", "evil-cmp.html", "evil-ag.html"):
            with open(self.path(name)) as f:
                page = f.read()
            self.assertNotIn("'unsafe-inline'; img-src", page)
            self.assertRegex(page, r"script-src 'sha256-[A-Za-z0-9+/]{43}='")
            self.assertEqual(page.count("<script"), 1, name)      # the page's own, no other
            found = self.probe(name)
            self.assertIsNone(found["pwned"], name)
            self.assertNotEqual(found["title"], "pwned", name)
            self.assertTrue(found["own"], f"{name}: the page's own script did not run")
            self.assertEqual(found["csp"], [], name)
            self.assertEqual(found["errors"], [], name)
        # the policy itself: a script put into the page after it never runs
        found = self.probe("evil-run.html", "<script>window.__pwned='raw'</script>")
        self.assertIsNone(found["pwned"])
        self.assertTrue(found["own"])
        self.assertTrue(any("script-src" in v for v in found["csp"]), found["csp"])

    # ---- the command -------------------------------------------------------------
    def test_aggregate_folder_and_the_batch(self):
        run("aggregate", "bo", "--out-dir", "ag", "-q", check=1, cwd=self.tmp)
        html = self.report("ag", out="ag.html")
        self.assertIn("FAIL", html)
        self.assertIn('<figure class="figure agg"><svg', html)
        self.assertNotIn('id="run-0"', html)       # no reports: the folder holds none
        html = self.report("ag", "bo", out="ag2.html")
        self.assertIn('id="run-1"', html)

    def test_several_runs(self):
        html = self.report("run.json", "run2.json", out="two.html")
        self.assertIn('id="run-0"', html)
        self.assertIn('id="run-1"', html)

    def test_refusals_and_the_output_guard(self):
        p = self.report("nope.json", out="x.html", code=1)
        self.assertIn("nope.json", p.stderr)
        p = self.report("m.json", out="x.html", code=1)
        self.assertIn("not a run report", p.stderr)
        self.assertEqual(run("report", "run.json", cwd=self.tmp).returncode, 2)
        self.assertEqual(run("report", "-o", "x.html", cwd=self.tmp).returncode, 2)
        # an input is never the output; a file rpxprof did not write is kept
        p = self.report("run.json", out="run.json", code=2)
        with open(self.path("mine.html"), "w") as f:
            f.write("<html>my notes</html>")
        p = self.report("run.json", out="mine.html", code=1)
        self.assertIn("not a file rpxprof wrote", p.stderr)
        with open(self.path("mine.html")) as f:
            self.assertEqual(f.read(), "<html>my notes</html>")
        self.report("run.json", out="own.html")
        self.report("run2.json", out="own.html")     # its own page is replaced

    def test_html_beside_each_command(self):
        d = self.tmp
        def page(name):
            with open(self.path(name)) as f:
                html = f.read()
            self.check_static(html)
            return html
        p = run("run", "--model", "rpxprof-demo:demo_depth", "--inputs", "frame.npz", "--repeats", "30", "-q",
                "--output", "h-run.json", "--html", "h-run.html", check=0, cwd=d)
        self.assertEqual(p.stdout.split(), ["h-run.json", "h-run.html"])
        with open(self.path("h-run.json")) as f:
            r = json.load(f)
        self.assertIn(f'data-ms="{r["latency"]["p50_ms"]!r}"', page("h-run.html"))
        run("compare", "run.json", "run2.json", "--html", "h-cmp.html", check=0, cwd=d)
        self.assertIn('id="compare-two"', page("h-cmp.html"))
        run("compare", "bo", "bo", "--html", "h-cmpd.html", check=0, cwd=d)
        self.assertIn("Comparison of two batch folders", page("h-cmpd.html"))
        run("batch", "m.json", "--out-dir", "bo2", "-q", "--html", "h-batch.html", check=0, cwd=d)
        self.assertIn('<span class="status FAIL">FAIL</span>', page("h-batch.html"))
        run("aggregate", "bo", "--out-dir", "ag3", "-q", "--html", "h-agg.html", check=1, cwd=d)
        html = page("h-agg.html")
        self.assertIn('<span class="status FAIL">FAIL</span>', html)
        self.assertIn('id="run-1"', html)
        # what a command reads is never its page; a file rpxprof did not write is kept
        p = run("run", "--model", "rpxprof-demo:demo_depth", "--inputs", "frame.npz", "--repeats", "5", "-q",
                "--output", "h2.json", "--html", "frame.npz", cwd=d)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--html frame.npz: is one of the files this command reads", p.stderr)
        self.assertFalse(os.path.exists(self.path("h2.json")))   # refused before the first call
        with open(self.path("notes.html"), "w") as f:
            f.write("mine")
        p = run("compare", "run.json", "run2.json", "--html", "notes.html", cwd=d)
        self.assertEqual(p.returncode, 1)
        self.assertIn("choose another --html path", p.stderr)

    def test_html_beside_compare_run(self):
        """compare --run --html FILE: the comparison's page of the two reports it measured
        (kept or temporary), written beside its table (cheap: two processes of 6 calls each)."""
        d = self.tmp
        p = run("compare", "--run", "--model", "rpxprof-demo:demo_noop", "--model", "rpxprof-demo:demo_noop",
                "--inputs", "frame.npz", "--processes", "2", "--repeats", "12", "--warmup", "1",
                "--html", "h-cmprun.html", cwd=d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path("h-cmprun.html")) as f:
            html = f.read()
        self.check_static(html)
        self.assertIn('id="compare-two"', html)   # both distributions: the two reports were read
        self.assertIn('id="compare-ratio"', html)
        verdict = re.search(r"verdict: (\w+)", p.stdout)
        self.assertIsNotNone(verdict, p.stdout)
        self.assertIn(f'Verdict: <b class="v">{verdict.group(1)}', html)
        # never one of the reports it keeps
        p = run("compare", "--run", "--model", "rpxprof-demo:demo_noop", "--model", "rpxprof-demo:demo_noop",
                "--inputs", "frame.npz", "--processes", "2", "--repeats", "12", "--out-dir", "crd",
                "--html", os.path.join("crd", "base.json"), cwd=d)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--html", p.stderr)

    def test_roofline_marks_each_targets_ideal_and_unfused_bound(self):
        """The run view's roofline: for each target of the report's roofline, its ideal and
        its unfused bound as separate labelled marks (at the bound's arithmetic intensity and
        attainable GFLOP/s = FLOPs / the bound's latency), beside the measured point."""
        model = save_matmul_onnx(self.path("mm.onnx"))
        run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", "frame.npz", "--repeats", "10", "--warmup", "1",
            "--processes", "1", "--cost", "mm.onnx", "--input", "x=4x64", "--precision", "fp32", "-q",
            "--output", "roof.json", check=0, cwd=self.tmp)
        self.assertTrue(os.path.exists(model))
        with open(self.path("roof.json")) as f:
            r = json.load(f)
        html = self.report("roof.json", out="roof.html")
        fig = html[html.index('id="run-0-roof"'):]
        fig = fig[:fig.index("</figure>")]
        self.assertIn('class="meas"', fig)            # the measured point
        flops = r["efficiency"]["flops"]
        seen = 0
        for key, t in r["roofline"].items():
            for kind in ("ideal", "unfused"):
                b = t[kind]
                marks = re.findall(r'<g class="bnd %s" data-target="([^"]*)" data-ms="([^"]*)">(.*?)</g>' % kind, fig)
                mine = [m for m in marks if m[0] == key]
                if b is None or b.get("latency_ms") is None:
                    self.assertEqual(mine, [], (key, kind))
                    continue
                self.assertEqual(len(mine), 1, (key, kind, marks))
                self.assertEqual(float(mine[0][1]), b["latency_ms"])   # the report's bound, not recomputed
                self.assertIn(f"{kind} bound", mine[0][2])                 # labelled
                self.assertIn(key, mine[0][2])
                self.assertRegex(mine[0][2], r"<text ")                   # a visible label, not only a tooltip
                seen += 1
        # a cost file gives every target with a peak both bounds
        self.assertGreaterEqual(seen, 2 * 2, fig[:400])
        self.assertTrue(flops > 0)

    def test_many_calls_draw_ranges_not_a_subsample(self):
        if SANITIZED:
            self.skipTest("60,000 calls: normal build only")
        run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", "frame.npz", "--warmup", "1", "--repeats",
            "60000", "--processes", "2", "--call-records", "off", "-q", "--output", "many.json", check=0, cwd=self.tmp)
        html = self.report("many.json", out="many.html")
        self.assertIn("More than 50000 calls: each pixel column shows the exact minimum-maximum range", html)
        fig = html[html.index('id="run-0-calls"'):]
        fig = fig[:fig.index("</figure>")]
        self.assertNotIn("h0", "".join(re.findall(r'<path class="pts[^"]*" d="([^"]*)"', fig)))
        self.assertLess(len(html), 150_000)  # BENCHMARKS.md: under 100 KB beyond the limit


ANSWERS = ["What was measured", "How fast", "How sure", "Why it varied", "What to do"]


class HtmlReadsAsAnswerTest(unittest.TestCase):
    """issue 38 item 10: the run view reads top-down as an answer (what was measured, how
    fast, how sure, why it varied, what to do), each section opening with a sentence that
    says its answer; the compare page's table of everything states words and numbers by
    the summary's rule, no raw key or JSON array (the JSON stays one click away); both
    pages render in chromium with no console error."""
    report = HtmlReportTest.report
    check_static = HtmlReportTest.check_static
    path = HtmlReportTest.path
    browse = HtmlReportTest.browse

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="rpxanswer-")
        d = cls.tmp = cls._tmp.name
        run("inputs", "make", os.path.join(d, "frame.npz"), "rgb=48x64x3:uint8=7", check=0)
        common = ["--model", "rpxprof-demo:demo_depth", "--inputs", "frame.npz", "--device", "cpu",
                  "--precision", "fp32", "--unit", "frame", "--warmup", "3", "--repeats", "300",
                  "--processes", "3", "-q"]
        run("run", *common, "--output", "a.json", check=0, cwd=d)
        run("run", *common, "--output", "b.json", check=0, cwd=d)
        p = run("compare", "a.json", "b.json", "--json", cwd=d)
        with open(os.path.join(d, "cmp.json"), "w") as f:
            f.write(p.stdout)
        with open(os.path.join(d, "a.json")) as f:
            cls.r = json.load(f)
        with open(os.path.join(d, "cmp.json")) as f:
            cls.c = json.load(f)
        os.makedirs(ARTIFACTS, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    @staticmethod
    def words(html):
        import html as h
        return re.sub(r"\s+", " ", h.unescape(re.sub(r"<[^>]+>", " ", html))).strip()

    def opening(self, html, heading):
        """The first paragraph after the section's heading, as text."""
        at = html.index(">" + heading + "</h3>")
        m = re.compile(r"<p\b[^>]*>(.*?)</p>", re.S).search(html, at)
        self.assertIsNotNone(m, heading)
        return self.words(m.group(1))

    def test_the_run_view_reads_top_down(self):
        r, lat, ci = self.r, self.r["latency"], self.r["latency_ci"]
        html = self.report("a.json", out="answer.html")
        heads = [self.words(h) for h in re.findall(r"<h3\b[^>]*>(.*?)</h3>", html, re.S)]
        for h in ANSWERS + ["Memory", "Cost and roofline", "System card"]:
            self.assertIn(h, heads)
        order = [heads.index(h) for h in ANSWERS + ["Memory", "Cost and roofline", "System card"]]
        self.assertEqual(order, sorted(order), heads)
        self.assertLess(html.index('id="run-0-headline"'), html.index(">What was measured</h3>"))
        # each section's first sentence says its answer
        what = self.opening(html, "What was measured")
        self.assertIn(f"{r['measured_calls']} timed calls", what)
        self.assertIn("rgb uint8[48,64,3]", what)
        self.assertIn(f"{r['processes']} processes", what)
        fast = self.opening(html, "How fast")
        for k in ("p50_ms", "p95_ms", "p99_ms"):
            self.assertIn(fmt3(lat[k]) + " ms", fast)
        sure = self.opening(html, "How sure")
        if ci.get("p50_ms"):
            lo, hi = ci["p50_ms"]
            self.assertIn(f"between {fmt3(lo)} and {fmt3(hi)} ms", sure)
        else:
            self.assertIn("no interval", sure)
        why = self.opening(html, "Why it varied")
        v = r["variance"]
        self.assertIn(v["message"] if v.get("message") else "between processes", why)
        todo = html[html.index(">What to do</h3>"):html.index(">Memory</h3>")]
        self.assertTrue(self.opening(html, "What to do"))
        for n in r["notes"]:
            self.assertIn(n.replace("'", "&#39;").replace('"', "&quot;"), todo)
        found = self.browse("answer.html", "run-answer", size="1000,2400")
        self.assertEqual([h for h in found["h3"] if h in ANSWERS], ANSWERS)

    def test_the_compare_table_speaks_words(self):
        html = self.report("cmp.json", out="cmp-answer.html")
        rest = html[html.index("Everything the comparison states"):]
        table = rest[:rest.index("</table>")]
        for th in re.findall(r"<th\b[^>]*>(.*?)</th>", table, re.S):
            self.assertNotIn("_", self.words(th), "a raw key name")
        text = self.words(table)
        for key in ("_ratio_ci", "p50_ratio", "base_stats", "p_value", "null_reasons", "_ms"):
            self.assertNotIn(key, text)
        self.assertNotRegex(text, r"[\[\]{}]", "a raw JSON array or object")
        for tok in re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", text):
            self.assertEqual(tok, fmt3(float(tok)), "a number with other digits than the rule's")
        if self.c.get("p50_ratio_ci"):
            lo, hi = self.c["p50_ratio_ci"]
            self.assertIn(f"{fmt3(lo)} to {fmt3(hi)}", text)
        # the comparison as JSON stays one click away, closed
        m = re.search(r"<details\b[^>]*>\s*<summary>[^<]*JSON[^<]*</summary>(.*?)</details>", rest, re.S)
        self.assertIsNotNone(m, "the raw JSON is not reachable")
        self.assertIn("&quot;p50_ratio_ci&quot;", m.group(1))
        found = self.browse("cmp-answer.html", "compare-answer")
        self.assertEqual(len(found["states"]), 1)
        self.assertNotIn("_ratio_ci", found["states"][0])
        self.assertNotRegex(found["states"][0], r"[\[\]{}]")
        # a paired comparison's rows by CPU (an array of objects): words too
        c = dict(self.c, design="paired_by_cpu", p50_ratio_pooled=self.c["p50_ratio"],
                 by_cpu=[{"cpu": 1, "base_processes": 1, "new_processes": 1, "base_p50_ms": 0.0833123,
                          "new_p50_ms": 0.08341, "p50_ratio": 1.0012}])
        with open(self.path("cmp-paired.json"), "w") as f:
            json.dump(c, f)
        html = self.report("cmp-paired.json", out="cmp-paired.html")
        rest = html[html.index("Everything the comparison states"):]
        text = self.words(rest[:rest.index("</table>")])
        self.assertNotRegex(text, r"[a-z0-9]_[a-z]", "a raw key name")
        self.assertIn("base p50 (ms) 0.0833", text)
        self.assertIn("p50 ratio new/base 1.00 (+0.120 %)", text)


if __name__ == "__main__":
    main()
