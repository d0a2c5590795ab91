"""The CTest entries of one Python test script: what tests/CMakeLists.txt's rpx_py_test
asks at configure time, so that each test class (unittest) or file section (pytest) is
an entry of its own, and a class or section added to a script needs no CMake line.

    list_cases.py unittest SCRIPT   one line per entry: ENTRY NAME... (NAME: what
                                    unittest takes on its command line, Class[.test])
    list_cases.py pytest SCRIPT     one line per entry: ENTRY NAME... (test functions
                                    and classes, for SCRIPT::NAME); ENTRY "-": the file
    list_cases.py check SCRIPT...   imports each script and checks that the entries
                                    together hold every test unittest or pytest finds

The script is read with `ast`, never imported, so that listing costs no numpy or
torch import: a unittest case is a class that has (or inherits from a class of the
same file) a method whose name starts with "test". A pytest section starts at a
comment line "# ---- TITLE ----" (or "# -------- TITLE") at the left margin and holds
the top-level test functions and test classes up to the next one; its name is the
title up to its first "(" or ":", in [A-Za-z0-9_]; the tests above the first
section are the section "main"; a file without sections is one entry. A unittest class
with section comments (indented by 4) is split the same way (Class.section), unless it
or a base has setUpClass (whose fixture each entry would build again) or sets one of the
file's classes' attributes (state its tests share: one may check what the others did)."""
import ast
import re
import subprocess
import sys

SECTION = re.compile(r"^# -{3,}\s*([^-\s].*?)\s*-*\s*$")


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _is_test(name):
    return name.startswith("test")


def _sections(text, indent):
    """(line, name) of each section comment at this indent."""
    pat = re.compile("^" + indent + SECTION.pattern[1:])
    return [(i, section_name(m.group(1))) for i, line in enumerate(text.splitlines(), 1)
            for m in [pat.match(line)] if m]


def _group(starts, nodes, first_line, lo=0, hi=None):
    """[(section, [node names])] of nodes between lines lo and hi; "" without sections."""
    starts = [(l, n) for l, n in starts if l > lo and (hi is None or l < hi)]
    groups = [["main" if starts else "", []]] + [[n, []] for _, n in starts]
    for node in nodes:
        groups[sum(1 for l, _ in starts if l < first_line(node))][1].append(node.name)
    out, used = [], set()
    for name, names in groups:
        if not names:
            continue
        base, n = name, 2
        while name in used:                                # two sections of one title
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        out.append((name, names))
    return out


def _first_line(node):
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def unittest_cases(path):
    """[(entry, [unittest names])]: a class, or Class.section when the class has
    section comments, no setUpClass and no state shared between its tests."""
    text = _read(path)
    tree = ast.parse(text, path)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def methods(cls):
        return [f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def inherits(cls, pred, seen=()):
        if cls.name in seen:
            return False
        if pred(cls):
            return True
        return any(inherits(classes[b.id], pred, seen + (cls.name,)) for b in cls.bases
                   if isinstance(b, ast.Name) and b.id in classes)

    def has_tests(c):
        return any(_is_test(f.name) for f in methods(c))

    def has_class_setup(c):
        return any(f.name in ("setUpClass", "tearDownClass") for f in methods(c))

    def writes_class_state(c):
        """A method that sets an attribute of the class (CostTest.compared += 1):
        its tests share state, which one of them may check after the others."""
        for node in ast.walk(c):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AugAssign) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                        t.value.id in classes:
                    return True
        return False

    inner = _sections(text, "    ")
    out = []
    for cls in classes.values():
        if not inherits(cls, has_tests):
            continue
        tests = [f for f in methods(cls) if _is_test(f.name)]
        shared = inherits(cls, has_class_setup) or inherits(cls, writes_class_state)
        groups = [] if shared else \
            _group(inner, tests, _first_line, cls.lineno, cls.end_lineno + 1)
        if len(groups) < 2:
            out.append((cls.name, [cls.name]))
        else:
            out += [(f"{cls.name}.{g}", [f"{cls.name}.{t}" for t in names]) for g, names in groups]
    return out


def section_name(title):
    name = re.split(r"[(:]", title.replace("'", ""), 1)[0]
    name = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")
    return name or "section"


def pytest_sections(path):
    """[(entry, [test function or class names])], one per section of the file."""
    text = _read(path)
    tree = ast.parse(text, path)
    nodes = [n for n in tree.body
             if (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_test(n.name))
             or (isinstance(n, ast.ClassDef) and n.name.startswith("Test"))]
    return _group(_sections(text, ""), nodes, _first_line)


def check(paths):
    """Every test the runner itself would find is in exactly one entry."""
    bad = 0
    for path in paths:
        text = _read(path)
        if "import unittest" not in text and "from common import" not in text:
            listed = [n for _, names in pytest_sections(path) for n in names]
            p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                                "-p", "no:cacheprovider", path], capture_output=True, text=True)
            found = [l.split("[")[0].split("::")[1] for l in p.stdout.splitlines() if "::" in l]
        else:
            listed = [n for _, names in unittest_cases(path) for n in names]
            code = ("import os, sys, unittest, importlib.util as u\n"
                    "sys.path.insert(0, os.path.dirname(sys.argv[1]))\n"
                    "s = u.spec_from_file_location('m', sys.argv[1]); m = u.module_from_spec(s)\n"
                    "s.loader.exec_module(m)\n"
                    "for c in vars(m).values():\n"
                    "    if isinstance(c, type) and issubclass(c, unittest.TestCase):\n"
                    "        for t in unittest.TestLoader().getTestCaseNames(c):\n"
                    "            print(c.__name__ + '.' + t)\n")
            p = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True)
            found = p.stdout.split()
            found = [t for t in found if t not in listed and t.split(".")[0] not in listed] \
                + [t for t in found if t in listed or t.split(".")[0] in listed]
        covered = {n for n in found if n in listed or n.split(".")[0] in listed}
        lost = sorted(set(found) - covered)
        extra = sorted(n for n in listed if n not in found and not any(
            f.startswith(n + ".") for f in found))
        if p.returncode not in (0, 5) or not found:        # 5: pytest collected nothing
            print(f"{path}: could not list its tests:\n{p.stdout}{p.stderr}")
            bad += 1
        elif lost or extra or len(listed) != len(set(listed)):
            print(f"{path}: in no CTest entry: {lost}; not a test: {extra}; listed: {listed}")
            bad += 1
        else:
            print(f"{path}: {len(listed)} names in the entries cover all {len(set(found))} tests")
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "check":
        return check(argv[1:])
    if len(argv) != 2 or argv[0] not in ("unittest", "pytest"):
        print(__doc__, file=sys.stderr)
        return 2
    cases = unittest_cases(argv[1]) if argv[0] == "unittest" else pytest_sections(argv[1])
    for name, names in cases:
        print(" ".join([name or "-"] + names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
