"""The README's C example, built and started exactly as the README says (its
`sh` block, run from a folder where `include` and `build` are the source tree's
headers and this build), prints what the README says it prints (p50 exactly
15.0 ms). The program must start without LD_LIBRARY_PATH."""
import os
import re
import subprocess

from common import BUILD, SANITIZED, SOURCE, TempDirTest, main


class ReadmeTest(TempDirTest):
    def block(self, readme, name, lang):
        m = re.search(rf"<!-- readme-example: {name} -->\s*```{lang}\n(.*?)```", readme, re.S)
        self.assertIsNotNone(m, f"README.md lost its '{name}' example")
        return m.group(1)

    def test_latency_example(self):
        with open(os.path.join(SOURCE, "README.md")) as f:
            readme = f.read()
        with open(self.path("example.c"), "w") as f:
            f.write(self.block(readme, "latency", "c"))
        script = self.block(readme, "latency-build", "sh")
        self.assertIn("./example", script, "the README runs the program, not only builds it")
        # the repository root as the README assumes it: include/ and build/
        os.symlink(os.path.join(os.path.abspath(SOURCE), "include"), self.path("include"))
        os.symlink(os.path.abspath(BUILD), self.path("build"))
        # stricter than the README asks, and the sanitizer build's library needs its runtime
        flags = "-std=c11 -Wall -Werror" + (" -fsanitize=address,undefined" if SANITIZED else "")
        script = re.sub(r"^cc ", f"cc {flags} ", script, flags=re.M)
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        p = subprocess.run(["sh", "-e", "-c", script], cwd=self.tmp, env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "p50 = 15.0 ms\n")


if __name__ == "__main__":
    main()
