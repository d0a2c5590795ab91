"""`rpxprof report --history` (docs/report.md, "The history page"): the page of a
history's series drawn from tests/fixtures/history/ (series.json as `rpxprof history
show --json` gives it, checks.json as `rpxprof history check --json` does; made by
make_history_fixtures.py from measured session noise). Checked in the file (one
script, the CSP, nothing fetched, links only within the page or to kept reports, the
digits each interval supports, what changed between fingerprints) and in Debian's
chromium, headless, from file:// (no console error, no request, one mark per session
in each series' figure, the change point with its ratio, the verdict's words, an
injected name that never runs). A screenshot is kept in test-artifacts/html/."""
import html as htmlmod
import json
import math
import os
import re
import shutil
import tempfile
import unittest

from common import BUILD, SANITIZED, SOURCE, main, run
from test_html import CHROMIUM, chromium

FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "history")
ARTIFACTS = os.path.join(BUILD, "test-artifacts", "html")

# Put at the start of <head> of a copy of the page: errors, CSP violations, every
# resource fetched, and after load what each series' panel shows.
PROBE = r"""<script>
window.__p={errors:[],csp:[]};
window.addEventListener('error',function(e){__p.errors.push('error: '+e.message);});
window.addEventListener('securitypolicyviolation',function(e){__p.csp.push(e.blockedURI+' '+e.violatedDirective);});
['error','warn'].forEach(function(k){var f=console[k];console[k]=function(){__p.errors.push(k+': '+Array.prototype.join.call(arguments,' '));return f.apply(console,arguments);};});
window.addEventListener('load',function(){setTimeout(function(){var out={};try{
 out.res=performance.getEntriesByType('resource').map(function(e){return e.name;});
 out.series=[].map.call(document.querySelectorAll('section.series'),function(sec){
  var fig=sec.querySelector('svg.fig'),r=fig?fig.getBoundingClientRect():{width:0,height:0},v=sec.querySelector('.verdict');
  return {id:sec.id,fp:sec.dataset.fingerprint,w:r.width,h:r.height,
   marks:sec.querySelectorAll('svg.fig g.sess-mark').length,
   titled:sec.querySelectorAll('svg.fig g.sess-mark > title').length,
   drawn:[].map.call(sec.querySelectorAll('svg.fig g.sess-mark circle.sess'),function(c){var b=c.getBoundingClientRect();return b.width>0&&b.height>0;}),
   changes:[].map.call(sec.querySelectorAll('svg.fig g.change text'),function(t){return t.textContent;}),
   verdict:v?v.textContent:null,word:v?v.dataset.verdict:null,
   fpchange:sec.querySelector('.fpchange')?sec.querySelector('.fpchange').textContent:null,
   fpmark:!!sec.querySelector('svg.fig g.fpmark')};});
 var t=document.querySelector('table.overview');
 if(t){t.tHead.rows[0].cells[2].click();out.sorted=[].map.call(t.tBodies[0].rows,function(r){return r.cells[2].textContent;});}
}catch(e){__p.errors.push('probe: '+e);}
 out.title=document.title;out.pwned=window.__pwned||null;out.own=!!document.getElementById('rpx-tip');
 out.errors=__p.errors;out.csp=__p.csp;
 var pre=document.createElement('pre');pre.id='rpx-probe';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);},0);});
</script>"""


def ci_text(v, lo, hi):
    """A value and its interval to the digits the interval supports: the second
    significant digit of the half width, one to six significant digits."""
    e = math.floor(math.log10(abs(v)))
    hw = (hi - lo) / 2
    sig = 4 if not hw > 1e-9 * abs(v) else e - math.floor(math.log10(hw)) + 2
    sig = min(6, max(1, sig))
    d = min(15, max(0, sig - 1 - e))
    return "%.*f [%.*f, %.*f]" % (d, v, d, lo, d, hi)


def load(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


class HistoryPageTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="rpxhist-")
        self.tmp = self._tmp.name
        self.series, self.checks = load("series.json"), load("checks.json")

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def write(self, name, obj):
        with open(self.path(name), "w") as f:
            json.dump(obj, f)

    def page(self, *args, out="history.html", series="series.json", checks="checks.json", code=0, env=None):
        self.write("series.json", self.series)
        self.write("checks.json", self.checks)
        extra = ["--checks", checks] if checks else []
        p = run("report", "--history", series, *extra, *args, "-o", out, cwd=self.tmp, env=env)
        self.assertEqual(p.returncode, code, p.stderr)
        if code:
            return p
        with open(self.path(out)) as f:
            return f.read()

    def keep_reports(self):
        """The kept reports of the first series: session 1 with its run view beside
        it, session 14 as JSON alone, session 15's gone; session 8 of the second."""
        os.makedirs(self.path("reports"))
        for name in ("demo_depth-00.json", "demo_depth-00.html", "demo_depth-13.json", "demo_depth-07.json"):
            with open(self.path("reports", name), "w") as f:
                f.write("{}")

    def probe(self, name, view=None):
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
            p = chromium("--virtual-time-budget=5000", "--dump-dom", "file://" + probe, prof=prof)
            if view:
                os.makedirs(ARTIFACTS, exist_ok=True)
                png = os.path.join(ARTIFACTS, view + ".png")
                if os.path.exists(png):
                    os.unlink(png)
                chromium("--hide-scrollbars", "--window-size=1100,2400", f"--screenshot={png}",
                         "file://" + self.path(name), prof=prof)
                self.assertTrue(os.path.exists(png) and os.path.getsize(png) > 10000, "the screenshot is empty")
        finally:
            shutil.rmtree(prof, ignore_errors=True)
        m = re.search(r'<pre id="rpx-probe">(.*?)</pre>', p.stdout, re.S)
        self.assertIsNotNone(m, "the probe wrote nothing: " + p.stderr[-2000:])
        found = json.loads(htmlmod.unescape(m.group(1)))
        console = [l for l in p.stderr.splitlines() if "CONSOLE" in l and "rpx-probe" not in l]
        self.assertEqual(console, [], "chromium's console log")
        return found

    def check_static(self, page):
        """One file: nothing it would fetch, a policy that forbids fetching, the
        page's one script; links within the page or to a kept report."""
        self.assertTrue(page.startswith("<!DOCTYPE html>\n<!-- rpxprof report -->"))
        self.assertRegex(page, r"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
                               r"script-src 'sha256-[A-Za-z0-9+/]{43}='; img-src data:\"")
        self.assertEqual(page.count("<script"), 1)
        for pattern in (r"<(link|img|iframe|object|embed)\b[^>]*>", r"<script[^>]*\bsrc=[^>]*>", r"@import|url\("):
            m = re.search(pattern, page)
            self.assertIsNone(m, f"the page would fetch something: {m and m.group(0)}")
        for m in re.finditer(r"\b(?:src|href)=\"([^\"]*)\"", page):
            self.assertTrue(m.group(1).startswith(("#", "file:///")), m.group(0))
        self.assertIn("@media print", page)
        self.assertIn("prefers-color-scheme:dark", page)

    def sections(self, page):
        """Each series' panel's text, by its place in the series list."""
        out = {}
        for m in re.finditer(r'<section class="series" id="series-(\d+)".*?</section>', page, re.S):
            out[int(m.group(1))] = m.group(0)
        return out

    # ---- the page in the file ----------------------------------------------------
    def test_page_of_the_fixtures(self):
        self.keep_reports()
        page = self.page()
        self.check_static(page)
        secs = self.sections(page)
        self.assertEqual(sorted(secs), list(range(len(self.series))))
        for i, (s, c) in enumerate(zip(self.series, self.checks)):
            sec = secs[i]
            # one mark per session, each with its id; one change mark per change point
            ids = re.findall(r'<g class="sess-mark" data-session="([^"]*)"', sec)
            self.assertEqual(ids, [x["id"] for x in s["sessions"]], f"series {i}")
            self.assertEqual(len(re.findall(r'<g class="change"', sec)), len(c["changes"]), f"series {i}")
            self.assertIn(f'data-verdict="{c["newest"]["verdict"]}"', sec)
            for ch in c["changes"]:
                self.assertIn("&#215;" + ci_text(ch["ratio"], *ch["ratio_ci"]), sec)
            nw = c["newest"]
            if nw["ratio"] is not None:
                self.assertIn(ci_text(nw["ratio"], *nw["ratio_ci"]) + " times the p50", sec)
            why = htmlmod.escape(nw["why"][0].upper() + nw["why"][1:], quote=True)
            if nw["ratio"] is None:  # the check's why where the page has no ratio to say
                self.assertIn(why, sec)
            else:                    # else the ratio once, not again in the why's words
                self.assertNotIn(why, sec)
        # the first series' sessions in µs, each to the digits its interval supports
        s1 = secs[0]
        for x in self.series[0]["sessions"]:
            if x["p50_ci_ms"]:
                want = ci_text(x["p50_ms"] * 1e3, *(v * 1e3 for v in x["p50_ci_ms"]))
                self.assertIn(f"p50 {want} \u00b5s", s1)
        self.assertIn("p50 (\u00b5s)", s1)
        # an interval-less session: three significant digits, said so
        nointerval = self.series[0]["sessions"][17]
        self.assertIn("p50 %.1f \u00b5s (no interval)" % (nointerval["p50_ms"] * 1e3), s1)
        self.assertIn('class="sess open', s1)
        # the change and the request for another session, in words
        self.assertIn("Change before session 15, between commit", s1)
        self.assertIn("record 1 more session of this commit and check again", s1)
        # the second series is the same benchmark on a new fingerprint: marked, with what changed
        self.assertNotIn("fpchange", s1)
        self.assertIn('class="alert fpchange"', secs[1])
        self.assertIn("<code>machine.kernel</code>: 6.1.0-28-amd64 &#8594; 6.12.9-amd64", secs[1])
        self.assertIn('class="fpmark"', secs[1])
        self.assertLess(page.index('id="series-0"'), page.index('id="series-1"'))
        self.assertIn("never a regression", secs[1])
        # the other machine's stream: a new fingerprint of that benchmark too
        self.assertIn("<code>machine.cpu_model</code>: AMD EPYC 7B13 &#8594; Intel(R) Xeon(R) Platinum 8481C", secs[3])
        # links: the run view beside a kept report, else its JSON; a report gone says so
        rep = os.path.realpath(self.path("reports"))
        self.assertIn(f'href="file://{rep}/demo_depth-00.html"', s1)
        self.assertIn(f'href="file://{rep}/demo_depth-13.json"', s1)
        self.assertIn('title="reports/demo_depth-14.json">not found</span>', s1)
        self.assertEqual(s1.count("not kept"), 24 - 4)
        self.assertIn(f'href="file://{rep}/demo_depth-07.json"', secs[1])

    def test_one_benchmark_and_the_threshold(self):
        page = self.page("--benchmark", "stream_8mib")
        secs = self.sections(page)
        self.assertEqual(sorted(secs), [0, 1])          # the stream's two series, renumbered
        self.assertNotIn("demo_depth", page.split("<h1>")[1].split("<section")[0])
        p = self.page("--threshold", "2%", code=2)          # given results were judged with their own
        self.assertIn("--threshold is the check's", p.stderr)
        page = self.page("--threshold", "2%", checks=None)
        for sec in self.sections(page).values():
            self.assertIn("threshold 2 %", sec)
        self.assertNotIn("threshold 1 %", page)

    def test_without_checks(self):
        """No --checks: the history check (rpx_history_check) judges each series here;
        every panel has its verdict in words."""
        page = self.page(checks=None)
        self.check_static(page)
        secs = self.sections(page)
        self.assertEqual(len(secs), len(self.series))
        for sec in secs.values():
            self.assertEqual(len(re.findall(r'<p class="verdict', sec)), 1)
            self.assertRegex(sec, r'data-verdict="(slower|faster|same|inconclusive)"')
            self.assertIn("threshold 1 %", sec)

    def test_an_empty_history(self):
        self.series = []
        page = self.page(checks=None)
        self.check_static(page)
        self.assertIn("The history holds no session yet", page)

    # ---- in the browser ----------------------------------------------------------
    def test_in_chromium(self):
        self.keep_reports()
        self.page()
        found = self.probe("history.html", view="history")
        self.assertEqual(found["errors"], [], "console or script errors")
        self.assertEqual(found["csp"], [], "the page tried to fetch something")
        self.assertEqual(found["res"], [], "network requests")
        self.assertTrue(found["own"], "the page's own script did not run")
        self.assertEqual(len(found["series"]), len(self.series))
        by_id = {s["id"]: s for s in found["series"]}
        for i, (s, c) in enumerate(zip(self.series, self.checks)):
            got = by_id[f"series-{i}"]
            self.assertGreater(got["w"], 100, got)
            self.assertGreater(got["h"], 50, got)
            self.assertEqual(got["marks"], len(s["sessions"]), got)
            self.assertEqual(got["titled"], len(s["sessions"]), got)
            self.assertTrue(all(got["drawn"]), got)
            self.assertEqual(got["changes"], ["\u00d7" + ci_text(ch["ratio"], *ch["ratio_ci"]) for ch in c["changes"]])
            self.assertEqual(got["word"], c["newest"]["verdict"])
            self.assertIn(f"is {c['newest']['verdict']}", got["verdict"])
        self.assertIsNone(by_id["series-0"]["fpchange"])
        self.assertIn("machine.kernel", by_id["series-1"]["fpchange"])
        self.assertTrue(by_id["series-1"]["fpmark"])
        self.assertEqual(found["sorted"], sorted(found["sorted"], key=float))

    def test_injected_strings_never_run(self):
        """A benchmark's name, a commit, a warning, the check's words and a CPU's
        name with HTML and a script in them: shown as text, never run."""
        def evil(tag):
            return (f"\"'><script>window.__pwned='{tag}';document.title='pwned'</script>"
                    f"<img src=x onerror=\"window.__pwned='{tag}-img'\">")
        s = self.series[0]
        s["benchmark"]["name"] = evil("name")
        s["sessions"][3]["commit"] = evil("commit")
        s["sessions"][4]["warnings"] = [evil("warning")]
        s["sessions"][5]["id"] = evil("id")
        s["sessions"][0]["report_path"] = "reports/" + evil("path") + ".json"
        self.series[1]["fingerprint"]["machine"]["cpu_model"] = evil("cpu")
        self.checks[0]["newest"]["why"] = evil("why")
        self.checks[0]["changes"][0]["after_commit"] = evil("after")
        page = self.page(out="evil.html")
        self.check_static(page)
        self.assertIn("&lt;script&gt;window.__pwned=&#39;name&#39;", page)
        self.assertNotIn("<img", page)
        found = self.probe("evil.html")
        self.assertIsNone(found["pwned"])
        self.assertNotEqual(found["title"], "pwned")
        self.assertTrue(found["own"])
        self.assertEqual(found["csp"], [])
        self.assertEqual(found["errors"], [])
        self.assertEqual(found["series"][0]["marks"], len(s["sessions"]))

    # ---- the command -------------------------------------------------------------
    def test_refusals(self):
        self.write("series.json", self.series)
        p = run("report", "--history", "series.json", "x.json", "-o", "h.html", cwd=self.tmp)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("either INPUTs or --history", p.stderr)
        p = run("report", "x.json", "--checks", "c.json", "-o", "h.html", cwd=self.tmp)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("go with --history", p.stderr)
        p = run("report", "--history", "series.json", "--threshold", "200%", "-o", "h.html", cwd=self.tmp)
        self.assertEqual(p.returncode, 2, p.stderr)
        # the history itself is never the page, even with --force
        p = run("report", "--history", "series.json", "-o", "series.json", "--force", cwd=self.tmp)
        self.assertEqual(p.returncode, 2, p.stderr)
        with open(self.path("series.json")) as f:
            self.assertEqual(json.load(f), self.series)
        p = self.page("--benchmark", "nothing-of-that-name", code=1)
        self.assertIn("no series of benchmark 'nothing-of-that-name'", p.stderr)
        self.assertFalse(os.path.exists(self.path("history.html")))
        with open(self.path("bad.json"), "w") as f:
            f.write('{"sessions": 3}')
        p = run("report", "--history", "bad.json", "-o", "h.html", cwd=self.tmp)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("not a list of series", p.stderr)
        p = self.page(checks="series.json", code=0)          # a list, but not of checks: no verdicts
        self.assertIn("none was made", p)

    def test_odd_series_still_make_a_page(self):
        """A JSON series list is a user's file: keys missing, null, of the wrong type,
        numbers at the ends of a double, a session without a start time or a p50 --
        still a page (n/a where a value is not there), never a crash."""
        s = json.loads(json.dumps(self.series[0]))
        ss = s["sessions"]
        ss[0] = {}                                              # nothing at all
        ss[1].update(p50_ms=None, p50_ci_ms=None, started=None, commit=None)
        ss[2].update(p50_ms="fast", p50_ci_ms=["a", "b"], process_p50_ms="many", warnings={"w": 1})
        ss[3].update(p50_ms=1e300, p50_ci_ms=[1e299, 1e301])
        ss[4].update(p50_ms=5e-12, p50_ci_ms=[4e-12, 6e-12], started="yesterday")
        ss[5].update(p50_ms=0.07, p50_ci_ms=[0.07, 0.07], report_path="/")
        ss[6].update(p50_ms=-1, p50_ci_ms=[-2, 0])
        odd = [s, {"sessions": []}, {"benchmark": "name", "fingerprint": [1], "sessions": [{"p50_ms": 1}]}]
        checks = [{"benchmark": s["benchmark"]["id"], "fingerprint_digest": s["fingerprint"]["digest"],
                   "changes": [{"index": 0}, {"index": 99}, {"index": "x"}, {"index": 3, "ratio": None}],
                   "newest": {"verdict": "slower", "ratio": "x", "sessions_needed": -1, "why": ""}}]
        self.series, self.checks = odd, checks
        page = self.page()
        self.check_static(page)
        self.assertEqual(len(self.sections(page)), 3)
        self.assertEqual(len(re.findall(r'<g class="sess-mark"', page)), len(ss) + 1)
        self.assertEqual(len(re.findall(r'<g class="change"', page)), 1)      # only index 3 lies inside
        self.assertIsNone(re.search(r"(?<![A-Za-z0-9+/])-?(nan|inf)(?![A-Za-z0-9+/])", page))  # C's words for no number
        page = self.page(checks=None)                          # the check itself on odd series
        self.check_static(page)
        self.assertEqual(len(re.findall(r'<p class="verdict', page)), 3)
        p = run("report", "--history", "series.json", "--checks", "checks.json", "-o", "-", cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("<!DOCTYPE html>"))

    def test_the_environment_names_the_history(self):
        self.write("series.json", self.series)
        self.write("checks.json", self.checks)
        p = run("report", "--checks", "checks.json", "-o", "h.html", cwd=self.tmp)
        self.assertEqual(p.returncode, 2, p.stderr)          # --checks needs a history
        p = run("report", "-o", "h.html", cwd=self.tmp, env={"RPXPROF_HISTORY": "series.json"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "h.html")
        with open(self.path("h.html")) as f:
            self.assertEqual(len(self.sections(f.read())), len(self.series))


class HistoryDatabaseTest(unittest.TestCase):
    """The page of a real history: three runs of the demo recorded into a SQLite
    file by `run --history` (the first with --html beside its report, the third's
    report removed afterwards), drawn by `report --history h.db`."""

    def test_a_recorded_history(self):
        with tempfile.TemporaryDirectory(prefix="rpxhistdb-") as d:
            run("inputs", "make", "in.npz", "rgb=16x16x3:uint8=7", check=0, cwd=d)
            for i in range(3):
                extra = ["--html", "r0.html"] if i == 0 else []
                run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", "in.npz", "--repeats", "50",
                    "--processes", "2", "-q", "--history", "h.db", "--output", f"r{i}.json", *extra, check=0, cwd=d)
            os.unlink(os.path.join(d, "r2.json"))
            p = run("report", "--history", "h.db", "-o", "page.html", cwd=d)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(d, "page.html")) as f:
                page = f.read()
            self.assertEqual(page.count('<section class="series"'), 1)
            self.assertEqual(len(re.findall(r'<g class="sess-mark"', page)), 3)
            self.assertEqual(len(re.findall(r'<p class="verdict', page)), 1)
            real = os.path.realpath(d)
            self.assertIn(f'href="file://{real}/r0.html"', page)           # the run view beside it
            self.assertIn(f'href="file://{real}/r1.json"', page)           # the report alone
            self.assertIn(">not found</span>", page)                      # r2.json is gone
            self.assertIn("History <code>h.db</code>", page)
            # the verdict is the history check's own, as `history check --json` gives it
            p = run("history", "check", "--json", "--history", "h.db", cwd=d)
            self.assertEqual(p.returncode, 0, p.stderr)
            (check,) = json.loads(p.stdout)
            self.assertIn(f'data-verdict="{check["newest"]["verdict"]}"', page)
            # the history is never the page, nor its write-ahead log
            p = run("report", "--history", "h.db", "-o", "h.db", "--force", cwd=d)
            self.assertEqual(p.returncode, 2, p.stderr)
            p = run("report", "--history", "h.db", "-o", "h.db-wal", "--force", cwd=d)
            self.assertEqual(p.returncode, 2, p.stderr)
            p = run("report", "--history", os.path.join(d, "missing.db"), "-o", "x.html", cwd=d)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("missing.db", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "missing.db")), "a read made a database")


if __name__ == "__main__":
    main()
