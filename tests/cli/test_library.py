"""The library as a user gets it (issue 26 §5): librpxprof.so exports the public
API and none of the rpx__ internals, and what `cmake --install` puts under
include/rpxprof is the public API only, each header compiling on its own."""
import os
import re
import shutil
import subprocess

from common import BUILD, TempDirTest, main

# Internal headers that once were installed: they must stay under src/.
INTERNAL = ["cuda.h", "nvml.h", "run.h", "output.h", "json.h", "gpu_memory.h",
            "gpu_time.h", "rss_trend.h", "pipeline.h"]


def nm_dynamic(lib):
    p = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"nm -D {lib}: {p.stderr}")
    return p.stdout.splitlines()


class LibraryTest(TempDirTest):
    def test_no_internal_symbol_is_exported(self):
        lines = nm_dynamic(os.path.join(BUILD, "librpxprof.so"))
        internal = [l for l in lines if " rpx__" in l]
        self.assertEqual(internal, [], "librpxprof.so exports internals")
        names = {l.split()[-1] for l in lines}
        # the test cannot pass on an empty library: the public API is there
        for public in ("rpx_runner_run", "rpx_latency_create", "rpx_npz_load", "rpx_strerror",
                       "rpx_cost_analyze_onnx", "rpx_system_card", "rpx_compare_reports"):
            self.assertIn(public, names)
        # and an internal with an rpx_ name from an internal header is not
        self.assertNotIn("rpx_cuda_open", names)

    def test_every_declared_function_is_exported(self):
        """A function an installed header declares (outside static inline ones) is
        in librpxprof.so: a declaration without RPX_API links in the static
        library and the CLI but not for a user of the shared one."""
        names = {l.split()[-1] for l in nm_dynamic(os.path.join(BUILD, "librpxprof.so"))}
        inc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                           "rpxprof")
        missing = []
        for h in sorted(os.listdir(inc)):
            with open(os.path.join(inc, h)) as f:
                text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
            inline = set(re.findall(r"static inline[^;{(]*\b(rpx_\w+)\s*\(", text))
            # drop the bodies of static inline functions, then read the prototypes
            text = re.sub(r"static inline[^;{]*\{(?:[^{}]|\{[^{}]*\})*\}", "", text)
            for m in re.finditer(r"^(RPX_API\s+)?[A-Za-z_][\w\s\*]*?\b(rpx_\w+)\s*\(", text, re.M):
                if "typedef" in m.group(0) or "(*" in m.group(0) or m.group(2) in inline:
                    continue
                if m.group(2) not in names:
                    missing.append(f"{h}: {m.group(2)}")
        self.assertEqual(missing, [], "declared in an installed header but not exported "
                         "(add RPX_API)")

    def test_every_installed_header_compiles_alone(self):
        prefix = self.path("prefix")
        p = subprocess.run([shutil.which("cmake") or "cmake", "--install", BUILD, "--prefix",
                            prefix], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        inc = os.path.join(prefix, "include")
        headers = sorted(os.listdir(os.path.join(inc, "rpxprof")))
        self.assertIn("model.h", headers)
        self.assertIn("runner.h", headers)
        for h in INTERNAL:
            self.assertNotIn(h, headers, f"{h} is internal and must not be installed")
        cc = os.environ.get("CC", "cc")
        for h in headers:
            src = self.path(f"only_{h}.c")
            with open(src, "w") as f:
                f.write(f"#include <rpxprof/{h}>\n")
            p = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Wstrict-prototypes",
                                "-Werror", "-fsyntax-only", "-I", inc, src],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, f"rpxprof/{h} alone: {p.stderr}")


if __name__ == "__main__":
    main()
