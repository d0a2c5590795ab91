"""The README's C example compiles against the built library and prints what
the README says it prints (p50 exactly 15.0 ms)."""
import os
import re
import subprocess

from common import BUILD, SANITIZED, SOURCE, TempDirTest, main


class ReadmeTest(TempDirTest):
    def test_latency_example(self):
        with open(os.path.join(SOURCE, "README.md")) as f:
            readme = f.read()
        m = re.search(r"<!-- readme-example: latency -->\s*```c\n(.*?)```", readme, re.S)
        self.assertIsNotNone(m, "README.md lost its latency example")
        src = self.path("example.c")
        with open(src, "w") as f:
            f.write(m.group(1))
        exe = self.path("example")
        flags = ["-fsanitize=address,undefined"] if SANITIZED else []
        subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", *flags, "-I",
                        os.path.join(SOURCE, "include"), src, "-o", exe, "-L", BUILD,
                        "-lrpxprof", f"-Wl,-rpath,{os.path.abspath(BUILD)}"], check=True)
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
        self.assertEqual(out, "p50 = 15.0 ms\n")


if __name__ == "__main__":
    main()
