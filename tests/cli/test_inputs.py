"""`rpxprof inputs make` and `inputs show`, checked with numpy and hashlib."""
import hashlib
import io
import json
import os
import shutil
import subprocess

import numpy as np

from common import BIN, TempDirTest, main, run

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]


class InputsTest(TempDirTest):
    def test_make_every_dtype_numpy_reads_back(self):
        for compress in ([], ["--compress"]):
            for dt in DTYPES:
                with self.subTest(dtype=dt, compress=bool(compress)):
                    out = self.path(f"{dt}{len(compress)}.npz")
                    fill = "1" if dt == "bool" else "3" if dt.startswith(("int", "uint")) else "0.1"
                    run("inputs", "make", out, f"a=2x3x4:{dt}={fill}", f"s=scalar:{dt}",
                        f"e=0x5:{dt}", *compress, check=0)
                    with np.load(out, allow_pickle=False) as z:
                        self.assertEqual(list(z.keys()), ["a", "s", "e"])
                        a, s, e = z["a"], z["s"], z["e"]
                    self.assertEqual(a.dtype, np.dtype(dt))
                    self.assertEqual(a.shape, (2, 3, 4))
                    np.testing.assert_array_equal(a, np.full((2, 3, 4), np.array(fill).astype(np.float64).astype(dt) if dt != "bool" else True, dtype=dt))
                    self.assertEqual(s.shape, ())
                    self.assertEqual(s, np.zeros((), dt))
                    self.assertEqual(e.shape, (0, 5))

    def test_float16_rounding_matches_numpy(self):
        values = ["0.1", "65504", "1e-7", "-2.5", "3.14159", "70000", "6e-8"]
        for v in values:
            with self.subTest(v):
                out = self.path("h.npz")
                run("inputs", "make", out, f"h=1:float16={v}", check=0)
                with np.load(out) as z:
                    got = z["h"][0]
                want = np.float16(np.float32(float(v)))
                self.assertEqual(got.tobytes(), want.tobytes(), f"{v}: {got} vs {want}")

    def test_large_int64_fill_exact(self):
        out = self.path("big.npz")
        run("inputs", "make", out, "a=2:int64=9223372036854775807",
            "b=1:uint64=18446744073709551615", "c=1:int64=-9223372036854775808", check=0)
        with np.load(out) as z:
            self.assertEqual(int(z["a"][0]), 2**63 - 1)
            self.assertEqual(int(z["b"][0]), 2**64 - 1)
            self.assertEqual(int(z["c"][0]), -2**63)

    def test_random_is_seeded_and_in_range(self):
        a, b, c = self.path("a.npz"), self.path("b.npz"), self.path("c.npz")
        spec = ["rgb=64x64x3:uint8=random", "f=1000:float32=random", "h=1000:float16=random",
                "d=1000:float64=random", "m=1000:bool=random", "i=1000:int16=random"]
        run("inputs", "make", a, *spec, "--seed", "7", check=0)
        run("inputs", "make", b, *spec, "--seed", "7", check=0)
        run("inputs", "make", c, *spec, "--seed", "8", check=0)
        with np.load(a) as za, np.load(b) as zb, np.load(c) as zc:
            for k in za.keys():
                np.testing.assert_array_equal(za[k], zb[k])
            self.assertFalse(np.array_equal(za["rgb"], zc["rgb"]))
            self.assertGreater(len(np.unique(za["rgb"])), 200)
            for k in ("f", "h", "d"):
                self.assertTrue(((za[k] >= 0) & (za[k] < 1)).all(), k)
                self.assertGreater(za[k].std(), 0.2)
            self.assertTrue(0.4 < za["m"].mean() < 0.6)
            self.assertLess(za["i"].min(), -16000)
            self.assertGreater(za["i"].max(), 16000)

    def test_make_errors_leave_no_file(self):
        out = self.path("bad.npz")
        cases = [
            ("rgb=480x640x3:uint9", "unknown dtype 'uint9'"),
            ("rgb=480xx3:uint8", "bad shape"),
            ("rgb=480x640x3", "missing ':DTYPE'"),
            ("rgb=2:uint8=300", "fill '300' does not fit uint8"),
            ("rgb=2:int8=1.5", "fill '1.5' does not fit int8"),
            ("rgb=2:float32=abc", "fill 'abc' is not a number"),
            ("=2:uint8", "expected NAME=SHAPE:DTYPE"),
        ]
        for spec, msg in cases:
            with self.subTest(spec):
                p = run("inputs", "make", out, spec)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(msg, p.stderr)
                self.assertFalse(os.path.exists(out))
        p = run("inputs", "make", out, "a=2:uint8", "a=3:uint8")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("'a'", p.stderr)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_show_json_matches_numpy_and_hashlib(self):
        path = self.path("np.npz")
        arrays = {"rgb": np.zeros((4, 5, 3), np.uint8),
                  "f": np.asfortranarray(np.ones((3, 2), np.float32)),
                  "be": np.arange(6, dtype=">i4").reshape(2, 3),
                  "s": np.float64(2.5)}
        np.savez_compressed(path, **arrays)
        p = run("inputs", "show", path, "--json", check=0)
        info = json.loads(p.stdout)
        with open(path, "rb") as f:
            self.assertEqual(info["sha256"], hashlib.sha256(f.read()).hexdigest())
        self.assertEqual(info["file"], path)
        self.assertEqual([a["name"] for a in info["arrays"]], list(arrays))
        for a in info["arrays"]:
            want = np.asarray(arrays[a["name"]])
            self.assertEqual(a["shape"], list(want.shape))
            self.assertEqual(a["dtype"], want.dtype.newbyteorder("=").name)
            self.assertEqual(a["nbytes"], want.nbytes)
            self.assertTrue(a["compressed"])
        self.assertEqual(info["arrays"][1]["order"], "F")
        self.assertEqual(info["arrays"][2]["descr"], ">i4")
        text = run("inputs", "show", path, check=0).stdout
        self.assertIn("rgb", text)
        self.assertIn("4x5x3", text)
        self.assertIn("scalar", text)

    def test_show_refuses_bad_file(self):
        path = self.path("not.npz")
        with open(path, "w") as f:
            f.write("hello, not a zip file\n")
        p = run("inputs", "show", path)
        self.assertEqual(p.returncode, 1)
        self.assertIn("not.npz", p.stderr)

    def test_same_command_same_bytes(self):
        """Item 7: the same command makes the same bytes (fixed member times), with
        rpxprof's archive comment, and numpy still loads it."""
        import time
        import zipfile
        specs = ["rgb=8x8x3:uint8=random", "f=5:float32=0.5", "s=scalar:int64=7"]
        for compress in ([], ["--compress"]):
            with self.subTest(compress=bool(compress)):
                a = self.path(f"a{len(compress)}", "x.npz")
                b = self.path(f"b{len(compress)}", "x.npz")
                os.makedirs(os.path.dirname(a))
                os.makedirs(os.path.dirname(b))
                run("inputs", "make", a, *specs, *compress, check=0)
                time.sleep(2.1)  # a zip time has 2-second steps
                umask = os.umask(0o077)  # the file's mode is not in the archive
                try:
                    run("inputs", "make", b, *specs, *compress, check=0)
                finally:
                    os.umask(umask)
                with open(a, "rb") as fa, open(b, "rb") as fb:
                    da, db = fa.read(), fb.read()
                self.assertEqual(hashlib.sha256(da).hexdigest(), hashlib.sha256(db).hexdigest())
                with zipfile.ZipFile(a) as z:
                    self.assertEqual(z.comment, b"rpxprof inputs make")
                    for info in z.infolist():
                        self.assertEqual(info.date_time, (1980, 1, 1, 0, 0, 0))
                with np.load(a, allow_pickle=False) as z:
                    self.assertEqual(list(z.keys()), ["rgb", "f", "s"])
                    self.assertEqual(z["s"], 7)
                    self.assertEqual(z["rgb"].shape, (8, 8, 3))
                # `inputs show` and the sha256 it prints agree on the two files
                ja = json.loads(run("inputs", "show", a, "--json", check=0).stdout)
                jb = json.loads(run("inputs", "show", b, "--json", check=0).stdout)
                self.assertEqual(ja["sha256"], jb["sha256"])

    def test_multiplication_sign_is_read_as_x(self):
        """Item 8: the demo's hint writes H\u00d7W\u00d73; the parser takes the sign too."""
        out = self.path("sign.npz")
        run("inputs", "make", out, "rgb=4\u00d75\u00d73:uint8=128", "m=2x3\u00d71:float32", check=0)
        with np.load(out) as z:
            self.assertEqual(z["rgb"].shape, (4, 5, 3))
            self.assertEqual(z["m"].shape, (2, 3, 1))
        for bad in ("rgb=4\u00d7:uint8", "rgb=\u00d74:uint8", "rgb=4\u00d7\u00d73:uint8",
                    "rgb=4\u00d7x3:uint8", "rgb=4\u00c3:uint8"):
            with self.subTest(bad):
                p = run("inputs", "make", self.path("bad.npz"), bad, check=2)
                self.assertIn("bad shape", p.stderr)
                self.assertFalse(os.path.exists(self.path("bad.npz")))

    def test_duplicate_name_is_a_bad_command_line(self):
        """Item 9: a duplicate array name exits 2 like the other spec errors."""
        out = self.path("dup.npz")
        p = run("inputs", "make", out, "a=2:uint8", "b=1:int8", "a=3:uint8", check=2)
        self.assertIn("'a=3:uint8': array 'a' is given twice; give every array a unique name",
                      p.stderr)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_output_is_never_lost(self):
        """Item 8 and the output guard: a folder is named as such, a file rpxprof did not
        write is refused without --force, its own earlier file is replaced."""
        folder = self.path("folder")
        os.mkdir(folder)
        p = run("inputs", "make", folder, "a=1:uint8", check=1)
        self.assertIn("folder: is a folder", p.stderr)
        self.assertEqual(os.listdir(folder), [])
        # an unrelated file stays as it was
        mine = self.path("important.txt")
        with open(mine, "w") as f:
            f.write("my notes\n")
        p = run("inputs", "make", mine, "a=1:uint8", check=1)
        self.assertIn("important.txt", p.stderr)
        self.assertIn("--force", p.stderr)
        with open(mine) as f:
            self.assertEqual(f.read(), "my notes\n")
        # an NPZ that numpy wrote is not one of ours either
        theirs = self.path("theirs.npz")
        np.savez(theirs, a=np.zeros(3))
        with open(theirs, "rb") as f:
            before = f.read()
        run("inputs", "make", theirs, "a=1:uint8", check=1)
        with open(theirs, "rb") as f:
            self.assertEqual(f.read(), before)
        # --force replaces it
        run("inputs", "make", theirs, "a=2:uint8", "--force", check=0)
        with np.load(theirs) as z:
            self.assertEqual(z["a"].shape, (2,))
        # the same command over its own earlier file (scripts/demo.sh) works, and so does
        # another command of inputs make
        out = self.path("again.npz")
        run("inputs", "make", out, "rgb=4x4x3:uint8=128", check=0)
        run("inputs", "make", out, "rgb=4x4x3:uint8=128", check=0)
        run("inputs", "make", out, "rgb=2x2x3:uint8=7", check=0)
        with np.load(out) as z:
            self.assertEqual(z["rgb"].shape, (2, 2, 3))
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         ["again.npz", "folder", "important.txt", "theirs.npz"])
        # standard output: the NPZ goes there, and nothing else
        p = subprocess.run([BIN, "inputs", "make", "-", "a=3:int16=5"], capture_output=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with np.load(io.BytesIO(p.stdout)) as z:
            self.assertEqual(list(z["a"]), [5, 5, 5])

    def test_help(self):
        self.assertIn("Usage: rpxprof inputs make", run("inputs", "--help", check=0).stdout)
        self.assertIn("Usage: rpxprof inputs make", run("inputs", "make", "--help", check=0).stdout)


class FifoTest(TempDirTest):
    """Issue 26 §4.2: a named FIFO given where rpxprof reads a file blocked forever with no
    message (`mkfifo ff.npz; rpxprof run --inputs ff.npz`). Every file a user names is
    checked before a blocking open: an error naming it and saying it is not a regular file.
    A regression hangs, and the timeout fails the test."""

    NEEDLE = "is a FIFO (named pipe), not a regular file"

    def setUp(self):
        super().setUp()
        self.good = self.path("in.npz")
        run("inputs", "make", self.good, "x=4:float32", "--seed", "1")
        rep = self.path("r.json")
        run("run", "-m", "rpxprof-demo:demo_noop", "-i", self.good, "--warmup", "0",
            "--repeats", "3", "--processes", "1", "-o", rep, "-q")
        self.report = rep

    def fifo(self, name):
        p = self.path(name)
        os.mkfifo(p)
        return p

    def refused(self, fifo, *args, label=None, code=1):
        try:
            p = run(*args, timeout=30)
        except subprocess.TimeoutExpired:
            self.fail(f"rpxprof {' '.join(map(str, args))}: still waiting on the FIFO after 30 s")
        self.assertEqual(p.returncode, code, p.stdout + p.stderr)
        self.assertIn(f"{label + ' ' if label else ''}{fifo}: {self.NEEDLE}", p.stdout + p.stderr)

    def test_every_file_read_is_checked_before_a_blocking_open(self):
        ff_npz, ff_json, ff_onnx = self.fifo("ff.npz"), self.fifo("ff.json"), self.fifo("ff.onnx")
        demo = ("run", "-m", "rpxprof-demo:demo_noop", "--warmup", "0", "--repeats", "2",
                "--processes", "1", "-o", self.path("out.json"))
        self.refused(ff_npz, *demo, "-i", ff_npz, label="--inputs")
        self.refused(ff_npz, *demo, "-i", self.good, "-i", ff_npz, label="--inputs")
        self.refused(ff_onnx, *demo, "-i", self.good, "--cost", ff_onnx)
        self.refused(ff_json, *demo, "-i", self.good, "--gpu-spec", ff_json)
        self.refused(ff_npz, "run", "-m", "http://127.0.0.1:9/x", "--body", ff_npz, "-o",
                     self.path("out.json"), label="--body")
        self.refused(ff_npz, "inputs", "show", ff_npz)
        self.refused(ff_onnx, "cost", ff_onnx)
        self.refused(ff_json, "compare", ff_json, self.report)
        self.refused(ff_json, "compare", self.report, ff_json)
        self.refused(ff_json, "plot", ff_json, "-o", self.path("f.svg"))
        self.refused(ff_json, "batch", ff_json, "--out-dir", self.path("o"))
        self.refused(ff_json, "roofline", "--gpu", "h100-sxm", "--report", ff_json)
        self.refused(ff_json, "roofline", "--gpu", "h100-sxm", "--cost", ff_json)
        self.refused(ff_onnx, "roofline", "--gpu", "h100-sxm", "--cost", ff_onnx)
        self.refused(ff_json, "gpus", "--gpu-spec", ff_json)

    def aggregate_names(self, fifo, out, *args):
        """aggregate records what it refuses in OUT/validation.json (status FAIL, exit 1)."""
        try:
            p = run("aggregate", self.path("runs"), "--out-dir", self.path(out), *args,
                    timeout=30)
        except subprocess.TimeoutExpired:
            self.fail("aggregate: still waiting on the FIFO after 30 s")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        with open(self.path(out, "validation.json")) as f:
            self.assertIn(f"{fifo}: {self.NEEDLE}", json.dumps(json.load(f)["errors"]))

    def test_reports_in_folders_and_batch_inputs(self):
        # aggregate and compare read every DIR/<task>/<model>.json: the FIFO is named
        os.makedirs(self.path("runs", "t"))
        shutil.copy(self.report, self.path("runs", "t", "a.json"))
        ff = self.fifo(os.path.join("runs", "t", "b.json"))
        self.aggregate_names(ff, "agg")
        self.refused(ff, "compare", self.path("runs"), self.path("runs"))
        # aggregate --expect, and a manifest's inputs (batch --resume hashes them first)
        ff_npz = self.fifo("ff.npz")
        self.aggregate_names(ff_npz, "agg2", "--expect", ff_npz)
        man = self.path("m.json")
        with open(man, "w") as f:
            json.dump({"schema": "rpxprof.manifest/1",
                       "defaults": {"warmup": 0, "repeats": 2, "processes": 1},
                       "tasks": {"t": {"inputs": "ff.npz", "unit": "frame"}},
                       "models": [{"name": "a", "model": "rpxprof-demo:demo_noop",
                                   "tasks": ["t"], "flops": 1, "params": 1}]}, f)
        for resume in ((), ("--resume",)):
            self.refused(ff_npz, "batch", man, "--out-dir", self.path("bo"), *resume,
                         label="--inputs")


if __name__ == "__main__":
    main()
