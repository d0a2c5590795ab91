"""tests/list_cases.py, the listing behind one CTest entry per test class or section: where
a script splits, where it must not (a fixture built once per class, state the tests share),
and the names the entries get."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import list_cases

HERE = os.path.dirname(os.path.abspath(__file__))


class ListCasesTest(unittest.TestCase):
    def write(self, text):
        fd, path = tempfile.mkstemp(suffix=".py", prefix="test_listed_")
        with os.fdopen(fd, "w") as f:
            f.write(textwrap.dedent(text))
        self.addCleanup(os.unlink, path)
        return path

    def test_a_class_per_entry_helpers_and_bases_without_tests_left_out(self):
        path = self.write("""
            import unittest
            class Helper:
                def test_like(self): pass          # not a TestCase: unittest skips it too
            class Base(unittest.TestCase):
                def setUp(self): pass
            class First(Base):
                def test_a(self): pass
            class Second(First):
                pass                               # inherits test_a: its own entry
            """)
        cases = list_cases.unittest_cases(path)
        self.assertEqual([c for c in cases if c[0] != "Helper"],
                         [("First", ["First"]), ("Second", ["Second"])])

    def test_sections_split_a_class_and_the_tests_above_them_are_main(self):
        path = self.write("""
            import unittest
            class T(unittest.TestCase):
                def test_first(self): pass

                # ---- the quick start ----
                def test_b(self): pass
                def helper(self): pass
                # ---- errors (issue 9: what they say) ----
                def test_c(self):
                    # ---- a comment inside a method is no section ----
                    pass
                def test_d(self): pass
            """)
        self.assertEqual(list_cases.unittest_cases(path),
                         [("T.main", ["T.test_first"]), ("T.the_quick_start", ["T.test_b"]),
                          ("T.errors", ["T.test_c", "T.test_d"])])

    def test_a_class_fixture_or_shared_state_keeps_the_class_whole(self):
        sections = """
                # ---- one ----
                def test_a(self): pass
                # ---- two ----
                def test_zz_the_others_ran(self): pass
            """
        fixture = self.write("""
            import unittest
            class T(unittest.TestCase):
                @classmethod
                def setUpClass(cls): pass
            """ + sections)
        shared = self.write("""
            import unittest
            class T(unittest.TestCase):
                seen = 0
                def note(self):
                    T.seen += 1
            """ + sections)
        inherited = self.write("""
            import unittest
            class Base(unittest.TestCase):
                @classmethod
                def setUpClass(cls): pass
            class T(Base):
            """ + sections)
        for path in (fixture, shared, inherited):
            self.assertEqual(list_cases.unittest_cases(path), [("T", ["T"])])

    def test_pytest_sections_and_a_file_without_any(self):
        path = self.write("""
            import pytest
            def test_a(): pass
            # ------------------------------------------ GPUs and roofline
            @pytest.mark.parametrize("x", [1, 2])
            def test_b(x): pass
            class TestGroup:
                def test_c(self): pass
            # ---- GPUs and roofline: again ----
            def test_d(): pass
            def helper(): pass
            """)
        self.assertEqual(list_cases.pytest_sections(path),
                         [("main", ["test_a"]), ("GPUs_and_roofline", ["test_b", "TestGroup"]),
                          ("GPUs_and_roofline_2", ["test_d"])])
        plain = self.write("def test_a(): pass\ndef test_b(): pass\n")
        self.assertEqual(list_cases.pytest_sections(plain), [("", ["test_a", "test_b"])])

    def test_the_command_line_cmake_reads(self):
        path = self.write("def test_a(): pass\n# ---- two ----\ndef test_b(): pass\n")
        p = subprocess.run([sys.executable, os.path.join(HERE, "list_cases.py"), "pytest", path],
                           capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout), (0, "main test_a\ntwo test_b\n"))
        p = subprocess.run([sys.executable, os.path.join(HERE, "list_cases.py"), "pytest", plain :=
                            self.write("def test_a(): pass\n")], capture_output=True, text=True)
        self.assertEqual(p.stdout, "- test_a\n", plain)

    def test_check_names_a_test_in_no_entry(self):
        # a class the listing cannot see (made at import), which unittest would run
        path = self.write("""
            import unittest
            class Seen(unittest.TestCase):
                def test_a(self): pass
            Hidden = type("Hidden", (unittest.TestCase,), {"test_b": lambda self: None})
            """)
        p = subprocess.run([sys.executable, os.path.join(HERE, "list_cases.py"), "check", path],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("Hidden.test_b", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
