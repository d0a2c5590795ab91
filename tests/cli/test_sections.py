"""Measured sections as modules (issue 35 §4, src/runner/section.h): each section's
key is in the report as before (null, or left out, when the section is off), and
an export that does not fit a worker's shared block is a note in the report and a
warning, never silence (RPX_TEST_EXPORT_CAP, a test knob, makes the block's room for
it small)."""
import os

from common import BUILD, TempDirTest, main, run, run_report, validate

OUT_MODELS = os.path.join(BUILD, "test-models", "librpxtest_outputs.so")
NOTE = "did not fit the"


class Base(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("a.npz")
        run("inputs", "make", self.inputs, "rgb=8x8x3:uint8=random", "--seed", 1, check=0)

    def report(self, *extra, env=None, code=0):
        p, r, _ = run_report(self, "--model", f"{OUT_MODELS}:exact", "--inputs", self.inputs,
                             "--repeats", 40, "--warmup", 2, "--processes", 2, *extra,
                             env=env, check=code)
        validate(r, "profile.json")
        return p, r


class ExportOverflow(Base):
    def test_export_that_does_not_fit_is_a_note(self):
        p, r = self.report("--check-outputs", "--check-fraction", 1,
                           env={"RPX_TEST_EXPORT_CAP": "64"})
        notes = [n for n in r["notes"] if NOTE in n]
        self.assertEqual(len(notes), 2, r["notes"])  # one per process
        self.assertIn("process 0's export", notes[0])
        self.assertIn("the 64 bytes of its shared block", notes[0])
        self.assertIn("missing from this report", notes[0])
        self.assertIn(NOTE, p.stderr)  # a warning the user sees
        # what the exports held is not there, and says so
        self.assertEqual(r["outputs"]["verdict"], "not_checked")
        self.assertEqual(r["outputs"]["by_process"], [None, None])
        self.assertEqual(r["status"], "complete")

    def test_export_that_fits_has_no_note(self):
        p, r = self.report("--check-outputs", "--check-fraction", 1)
        self.assertFalse([n for n in r["notes"] if NOTE in n], r["notes"])
        self.assertNotIn(NOTE, p.stderr)
        self.assertEqual(r["outputs"]["verdict"], "match")
        self.assertEqual(r["outputs"]["checked_calls"], 40)


class SectionKeys(Base):
    def test_off_sections_keep_their_keys(self):
        _, r = self.report("--call-records", "off")
        self.assertIsNone(r["call_records"])
        self.assertIsNone(r["timeline"])
        self.assertIsNone(r["gpu_time"])
        self.assertNotIn("outputs", r)

    def test_on_sections_fill_their_keys(self):
        _, r = self.report("--timeline", "--check-outputs")
        self.assertIsInstance(r["call_records"], dict)
        self.assertEqual(len(r["timeline"]["processes"]), 2)
        self.assertEqual(r["outputs"]["verdict"], "match")
        self.assertEqual(len(r["outputs"]["by_process"]), 2)


if __name__ == "__main__":
    main()
