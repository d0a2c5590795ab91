"""`rpxprof system`: the live machine's card checked against what Python and
the kernel say independently, the schema, a snapshot through the CLI, and the
card a run report embeds."""
import json
import os

from common import SOURCE, TempDirTest, load_schema, main, run, validate, validate_profile

SNAPSHOTS = os.path.join(SOURCE, "tests", "fixtures", "sysroots")


def validate_card(card):
    validate(card, "system_card.json")


def os_release():
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        if os.path.exists(path):
            out = {}
            with open(path) as f:
                for line in f:
                    k, _, v = line.strip().partition("=")
                    out[k] = v.strip('"')
            return out
    return {}


def meminfo_kb(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def cpuinfo_first(key):
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k.strip() == key:
                return v.strip()
    return None


class SystemTest(TempDirTest):
    def card(self, *args, env=None):
        p = run("system", "--json", *args, env=env, check=0)
        self.assertEqual(p.stderr, "")
        return json.loads(p.stdout)

    def test_live_card_matches_the_machine(self):
        c = self.card()
        validate_card(c)
        cpu, osys = c["cpu"], c["operating_system"]
        # the real CPU model, not only the architecture
        model = cpuinfo_first("model name")
        if model:
            self.assertEqual(c["cpu_name"], model)
        self.assertTrue(c["cpu_name"])
        self.assertNotEqual(c["cpu_name"], os.uname().machine)
        self.assertEqual(cpu["architecture"], os.uname().machine)
        # the CPUs this process may use
        allowed = os.sched_getaffinity(0)
        self.assertEqual(cpu["allowed_count"], len(allowed))
        self.assertEqual(c["limits"]["effective_cpus"] <= len(allowed), True)
        # memory, kernel, distribution
        self.assertEqual(c["ram_gb"], meminfo_kb("MemTotal") * 1024 / 2**30)
        self.assertEqual(c["memory"]["total_mb"], meminfo_kb("MemTotal") / 1024)
        self.assertEqual(osys["kernel_release"], os.uname().release)
        self.assertIn(os.uname().release, c["os"])
        rel = os_release()
        if rel.get("PRETTY_NAME"):
            self.assertEqual(osys["distribution"], rel["PRETTY_NAME"])
            self.assertTrue(c["os"].startswith(rel["PRETTY_NAME"]))
        self.assertEqual(osys["libc_version"], os.confstr("CS_GNU_LIBC_VERSION").split()[1])
        # the hypervisor, when the CPU says there is one
        flags = (cpuinfo_first("flags") or "").split()
        if "hypervisor" in flags:
            self.assertIs(cpu["virtualized"], True)
            self.assertTrue(cpu["hypervisor"])
            self.assertTrue(any("hypervisor" in w for w in c["warnings"]))
        elif flags:
            self.assertIs(cpu["virtualized"], False)
        # GPUs: listed, or null with the reason
        if c["gpus"] is None:
            self.assertTrue(c["unavailable"]["gpus"])
        self.assertEqual(c["gpu_count"], 0)  # --device cpu: the reference's keys describe no GPU
        self.assertLess(c["collect_ms"], 500)  # a few ms; bounded only as a busy machine allows
        self.assertIsNotNone(c["conditions"]["start"])  # `system` records the load now

    def test_human_output(self):
        c = self.card()
        p = run("system", check=0)
        out = p.stdout
        for text in (c["cpu_name"], c["operating_system"]["kernel_release"],
                     c["operating_system"]["distribution"] or "n/a", "allowed_count",
                     "Warnings", "Conditions now"):
            self.assertIn(text, out)
        self.assertIn(f"allowed_count            {len(os.sched_getaffinity(0))}\n", out)
        if c["cpu"]["hypervisor"]:
            self.assertIn(c["cpu"]["hypervisor"], out)
        self.assertNotIn("null", out)
        self.assertIn("n/a (", out)  # unknown values say why

    def test_without_nvml_the_card_says_why(self):
        env = {"RPX_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}
        c = self.card(env=env)
        self.assertIsNone(c["gpus"])
        self.assertIn("/nonexistent/libnvidia-ml.so.1", c["unavailable"]["gpus"])
        c = self.card("--device", "cuda", env=env)
        self.assertIsNone(c["gpu_count"])  # unknown on a cuda run, never 0
        self.assertIn("NVML", c["unavailable"]["gpu_count"])
        validate_card(c)

    def test_container_snapshot_through_the_cli(self):
        env = {"RPX_SYSROOT": os.path.join(SNAPSHOTS, "container-cgv2-2of64")}
        c = self.card(env=env)
        validate_card(c)
        self.assertEqual(c["cpu"]["allowed_count"], 64)
        self.assertEqual(c["limits"]["effective_cpus"], 2)
        self.assertEqual(c["cpu_name"], "Intel(R) Xeon(R) Gold 6226R CPU @ 2.90GHz")
        self.assertTrue(any("'powersave'" in w for w in c["warnings"]))
        self.assertTrue(any("RPX_SYSROOT is set" in w for w in c["warnings"]))

    def test_every_snapshot_validates(self):
        for name in sorted(os.listdir(SNAPSHOTS)):
            if os.path.isdir(os.path.join(SNAPSHOTS, name)):
                with self.subTest(name):
                    validate_card(self.card(env={"RPX_SYSROOT": os.path.join(SNAPSHOTS, name)}))

    def test_environment_is_an_allowlist(self):
        c = self.card(env={"OMP_NUM_THREADS": "2", "GITHUB_TOKEN": "ghp_secret_value"})
        self.assertEqual(c["environment"]["OMP_NUM_THREADS"], "2")
        self.assertNotIn("GITHUB_TOKEN", c["environment"])
        self.assertNotIn("ghp_secret_value", json.dumps(c))

    def test_command_line(self):
        p = run("system", "--device", "gpu")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--device 'gpu'", p.stderr)
        self.assertEqual(run("system", "extra").returncode, 2)
        self.assertEqual(run("system", "--bogus").returncode, 2)
        p = run("system", "--help", check=0)
        self.assertIn("Usage: rpxprof system", p.stdout)
        self.assertIn("system", run("--help", check=0).stdout)

    def test_gather_script_captures_what_the_card_reads(self):
        """A fresh snapshot of this machine gives this machine's card."""
        import subprocess
        from common import BIN
        snap = self.path("snap")
        subprocess.run(["bash", os.path.join(SOURCE, "scripts", "gather-snapshot.sh"), snap],
                       check=True, capture_output=True, env=dict(os.environ, RPXPROF=BIN))
        live = self.card()
        copy = self.card(env={"RPX_SYSROOT": snap})
        volatile = {"cpu": {"current_mhz", "hypervisor_source"},
                    "memory": {"available_mb", "swap_free_mb"}}
        for section in ("cpu", "memory", "limits", "operating_system"):
            a = {k: v for k, v in live[section].items() if k not in volatile.get(section, ())}
            b = {k: v for k, v in copy[section].items() if k not in volatile.get(section, ())}
            self.assertEqual(a, b, section)
        for key in ("cpu_name", "ram_gb", "os"):
            self.assertEqual(live[key], copy[key])
        # nothing identifying: no host name, no DMI serials or UUIDs
        names = [os.path.join(d, f) for d, _, fs in os.walk(snap) for f in fs]
        self.assertFalse([n for n in names if "serial" in n or "uuid" in n or "hostname" in n])
        host = os.uname().nodename
        if len(host) > 3:
            for n in names:
                with open(n, "rb") as f:
                    self.assertNotIn(host.encode(), f.read(), n)

    def test_profile_schema_refers_to_the_card_schema(self):
        self.assertEqual(load_schema("profile.json")["properties"]["system_card"],
                         {"$ref": load_schema("system_card.json")["$id"]})

    def test_run_report_embeds_the_same_card(self):
        inputs = self.path("in.npz")
        run("inputs", "make", inputs, "rgb=48x64x3:uint8=1", check=0)
        out = self.path("r.json")
        run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", inputs, "--repeats", "5",
            "--warmup", "1", "--meta", "batch_size=2", "--output", out, check=0)
        with open(out) as f:
            r = json.load(f)
        validate_profile(r)
        card = r["system_card"]
        validate_card(card)
        self.assertEqual(card["batch_size"], 2)
        self.assertEqual(card["input_resolution"], "48x64")
        self.assertEqual(card["cpu"]["allowed_count"], len(os.sched_getaffinity(0)))


if __name__ == "__main__":
    main()
