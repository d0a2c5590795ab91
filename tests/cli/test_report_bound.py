"""rpxprof's own memory while it builds and writes the report of a long run (issue 37
item 14): the per-call arrays are streamed into the file, never held as a tree, so the
peak resident set stays under the bound docs/report.md states (about 100 bytes a timed
call above a small base; ASan's shadow memory and redzones get three times that, its
quarantine made small).
A 2-million-call run of the demo's no-op in this process (--no-isolate --processes 1,
so the samples themselves count too): slow, run alone."""
import json
import os
import resource
import subprocess

from common import BIN, SANITIZED, TempDirTest, main, run

CALLS = 2_000_000
BASE_MIB = 16
BYTES_A_CALL = 100


class ReportBoundTest(TempDirTest):
    def test_the_report_of_many_calls_is_built_within_the_bound(self):
        inputs, out = self.path("in.npz"), self.path("r.json")
        run("inputs", "make", inputs, "x=4:float32", check=0)
        env = dict(os.environ)
        if SANITIZED:  # ASan's quarantine keeps 256 MiB of freed memory resident: a small one
            env["ASAN_OPTIONS"] = ":".join(x for x in (env.get("ASAN_OPTIONS"),
                                                       "quarantine_size_mb=8") if x)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        p = subprocess.run([BIN, "run", "--model", "rpxprof-demo:demo_noop", "--inputs", inputs,
                            "--warmup", "2", "--repeats", str(CALLS), "--processes", "1",
                            "--no-isolate", "--quiet", "--output", out],
                           capture_output=True, text=True, timeout=1200,
                           stdin=subprocess.DEVNULL, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        self.assertGreater(peak_kib, before, "the run is the largest child so far")
        bound = (BASE_MIB * 2**20 + BYTES_A_CALL * CALLS) * (3 if SANITIZED else 1)
        self.assertLess(peak_kib * 1024, bound,
                        f"peak {peak_kib / 1024:.0f} MiB for {CALLS} calls, bound "
                        f"{bound / 2**20:.0f} MiB")
        with open(out) as f:
            r = json.load(f)
        self.assertEqual(len(r["latency_samples_ms"]), CALLS)
        self.assertEqual(len(r["call_records"]["cpu_start"]), CALLS)
        self.assertEqual(r["measured_calls"], CALLS)
        os.unlink(out)


if __name__ == "__main__":
    main()
