"""docs/cli.md against the binary: every option that a command's `--help` shows
(long and short forms) is documented in that command's section, so the two
cannot drift apart; "the reference" is explained where the docs promise and
never written into a report."""
import os
import re

from common import SOURCE, TempDirTest, main, run

LONG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
SHORT = re.compile(r"(?<![\w-])-[a-zA-Z](?![\w-])")


def commands():
    """The commands the top-level --help lists."""
    text = run("--help", check=0).stdout
    block = text.split("Commands:", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def help_options(*cmd):
    """(long, short) options of `rpxprof CMD --help`: from the lines that define
    options (they start with '-' after the indent), every segment that starts
    with '-' (a line may define two, `--a S  (default 10)   --b S`), and the
    usage lines."""
    text = run(*cmd, "--help", check=0).stdout
    longs, shorts = set(), set()
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("Usage:", "or:")):
            longs.update(LONG.findall(stripped))
            continue
        if not line[:1].isspace() or not stripped.startswith("-"):
            continue
        for seg in re.split(r"\s{2,}", stripped):
            if seg.startswith("-"):
                longs.update(LONG.findall(seg))
                shorts.update(SHORT.findall(seg))
    return longs, shorts


def cli_md():
    with open(os.path.join(SOURCE, "docs", "cli.md")) as f:
        return f.read()


def section(doc, command):
    """The text of the '## rpxprof ...' section whose heading names `command`."""
    parts = re.split(r"^## ", doc, flags=re.M)
    for part in parts[1:]:
        heading = part.split("\n", 1)[0]
        if heading.startswith("rpxprof") and re.search(rf"\b{re.escape(command)}\b", heading):
            return part
    return None


def mentions(text, option):
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


class CliDocsTest(TempDirTest):
    def test_every_command_has_a_section(self):
        doc = cli_md()
        cmds = commands()
        self.assertIn("run", cmds)
        self.assertGreaterEqual(len(cmds), 9)
        for cmd in cmds:
            self.assertIsNotNone(section(doc, cmd), f"docs/cli.md has no '## rpxprof {cmd}' section")

    def test_every_option_of_every_help_is_documented(self):
        doc = cli_md()
        missing = []
        for cmd in commands():
            sec = section(doc, cmd)
            if sec is None:
                continue  # reported by test_every_command_has_a_section
            longs, shorts = help_options(cmd)
            self.assertIn("--help", longs, cmd)  # the extraction works
            for opt in sorted(longs | shorts):
                if opt in ("--help", "-h"):
                    continue  # said once, at the top
                if not mentions(sec, opt):
                    missing.append(f"rpxprof {cmd} {opt}")
        self.assertEqual(missing, [], "options shown by --help but not in docs/cli.md "
                         "(document them in the command's section)")

    def test_help_and_version_are_documented_once(self):
        top = cli_md().split("\n## ", 1)[0]
        for opt in ("-h", "--help", "-V", "--version"):
            self.assertTrue(mentions(top, opt), opt)
        longs, shorts = help_options()
        self.assertEqual((longs, shorts), ({"--help", "--version"}, {"-h", "-V"}))

    def test_the_extraction_finds_what_help_shows(self):
        # the parser itself: two options on one line, short forms, usage lines
        longs, shorts = help_options("run")
        for opt in ("--model", "--connect-timeout", "--request-timeout", "--quiet"):
            self.assertIn(opt, longs)
        self.assertTrue({"-m", "-i", "-o", "-q"} <= shorts, shorts)
        longs, shorts = help_options("gpus")
        self.assertTrue({"--sources", "--match", "--gpu-spec", "--json"} <= longs, longs)
        self.assertTrue({"-s", "-j"} <= shorts, shorts)
        # and the check can fail: an option missing from a section is seen
        sec = section(cli_md(), "gpus")
        self.assertFalse(mentions(sec.replace("--match", "--m-a-t-c-h"), "--match"))
        self.assertFalse(mentions("--matches", "--match"))

    def test_the_reference_is_explained_and_reports_do_not_mention_it(self):
        for doc in ("README.md", os.path.join("docs", "report.md")):
            with open(os.path.join(SOURCE, doc)) as f:
                text = f.read()
            self.assertIn("`rpx_benchmark`", text, doc)
            self.assertRegex(text, r"(?i)\*the reference\*", doc)
        inputs = self.path("in.npz")
        run("inputs", "make", inputs, "rgb=8x8x3:uint8", check=0)
        out = self.path("r.json")
        # cpu run: the reference's GPU table is among the default roofline targets
        run("run", "--model", "rpxprof-demo:demo_depth", "--inputs", inputs, "--repeats", 5,
            "--flops", "1e9", "--params", "1e6", "--quiet", "--output", out, check=0)
        with open(out) as f:
            report = f.read()
        self.assertIn("ref-a100-80gb", report)
        self.assertEqual(re.findall(r'[^"]*\bthe reference\b[^"]*', report, re.I), [])

    def test_every_environment_variable_read_is_documented(self):
        """docs/environment.md names every variable that src/ reads with getenv(), names
        as an RPX_* override (the plugins' and the demo library's), or that the Python
        plugin's code reads from os.environ; recorded-only names (the system card's
        allowlist) are system.md's."""
        names = set()
        for top in ("src", "python"):
            for folder, _, files in os.walk(os.path.join(SOURCE, top)):
                for f in files:
                    if not f.endswith((".c", ".h", ".py")):
                        continue
                    with open(os.path.join(folder, f)) as fh:
                        text = fh.read()
                    names |= set(re.findall(r'\b(?:secure_)?getenv\("([A-Za-z_][A-Za-z0-9_]*)"\)', text))
                    names |= set(re.findall(r"os\.environ(?:\.get\(|\[)\s*['\"]([A-Za-z_][A-Za-z0-9_]*)", text))
                    if f != "env.c":  # the card's allowlist: recorded, not acted on
                        names |= {n for n in re.findall(r'"(RPX_[A-Z0-9_]+)"', text)
                                  if not re.fullmatch(r"RPX_E[A-Z]*|RPX_OK", n)}
        self.assertTrue({"RPX_GPU_SPECS", "RPX_DEMO_LIBRARY", "VIRTUAL_ENV", "TMPDIR"} <= names, names)
        with open(os.path.join(SOURCE, "docs", "environment.md")) as f:
            doc = f.read()
        documented = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)", doc))
        self.assertEqual(sorted(names - documented), [])
        with open(os.path.join(SOURCE, "README.md")) as f:
            self.assertTrue("docs/environment.md" in f.read(), "README.md does not link docs/environment.md")


if __name__ == "__main__":
    main()
