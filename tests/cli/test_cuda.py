"""`rpxprof run --device cuda` against the stub CUDA driver (tests/stubs/cuda):
refusals, the synchronisation order, CUDA_VISIBLE_DEVICES, per-device peaks."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

from common import BUILD, SOURCE, TempDirTest, main, run, run_report, validate_profile

STUB = os.path.join(BUILD, "stubs", "cuda", "libcuda.so.1")
STUB_OLD = os.path.join(BUILD, "stubs", "cuda-old", "libcuda.so.1")
CUPTI = os.path.join(BUILD, "stubs", "cupti", "libcupti.so")
CUPTI_NEW = os.path.join(BUILD, "stubs", "cupti-new", "libcupti.so.13")
NVML = os.path.join(BUILD, "stubs", "nvml", "libnvidia-ml.so.1")
VERDICTS = os.path.join(SOURCE, "scripts", "gpu-check-verdicts.py")
MODELS = os.path.join(BUILD, "test-models", "librpxtest_cuda_models.so")


class CudaTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.inputs = self.path("in.npz")
        np.savez(self.inputs, x=np.zeros(4, np.float32))
        self.log = self.path("cuda.log")

    def env(self, **extra):
        e = {"RPX_CUDA_LIBRARY": STUB, "RPX_STUB_CUDA_LOG": self.log}
        e.update(extra)
        return e

    def cuda_run(self, model, *args, env=None, check=0):
        # one worker process: the stub's log follows one process's calls
        procs = [] if "--processes" in args else ["--processes", "1"]
        p, r, _ = run_report(self, "--model", f"{MODELS}:{model}", "--inputs", self.inputs,
                             "--device", "cuda", *procs, *args,
                             env=env if env is not None else self.env(), check=check)
        return p, r

    def events_after_setup(self):
        with open(self.log) as f:
            events = f.read().split()
        return events[events.index("setup") + 1:]

    def refused(self, message, **env):
        p, r = self.cuda_run("gpu_logged", env=self.env(**env), check=1)
        self.assertIn(message, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIsNone(r, "a refused run writes no report")
        if os.path.exists(self.log):
            with open(self.log) as f:
                self.assertNotIn("setup", f.read(), "the model must not be set up")

    def test_refuses_without_driver(self):
        self.refused("the CUDA driver cannot be loaded", RPX_CUDA_LIBRARY="/nonexistent/libcuda.so.1")

    def test_refuses_when_cuinit_fails(self):
        self.refused("cuInit failed: CUDA_ERROR_UNKNOWN (999)", RPX_STUB_CUDA_INIT_FAIL="999")

    def test_refuses_with_no_visible_device(self):
        # the real cuInit answers CUDA_ERROR_NO_DEVICE (100) when nothing is visible
        self.refused('no CUDA device is visible (CUDA_VISIBLE_DEVICES=""): cuInit answered '
                     'CUDA_ERROR_NO_DEVICE (100)', CUDA_VISIBLE_DEVICES="")
        self.refused('no CUDA device is visible (CUDA_VISIBLE_DEVICES=unset)',
                     RPX_STUB_CUDA_COUNT="0")
        p, _ = self.cuda_run("gpu_logged", env=self.env(CUDA_VISIBLE_DEVICES=""), check=1)
        self.assertNotIn("cuInit failed", p.stderr)

    def test_sync_order_two_devices(self):
        _, r = self.cuda_run("gpu_logged", "--warmup", "1", "--repeats", "2")
        call = ["sync0", "sync1", "predict", "sync0", "sync1"]
        self.assertEqual(self.events_after_setup(),
                         call + ["mem0", "mem1"] + call + call + ["mem0", "mem1"])
        validate_profile(r)
        self.assertEqual(r["device"], "cuda")
        self.assertEqual(len(r["cuda"]["visible_devices"]), 2)
        self.assertIsNone(r["cuda"]["CUDA_VISIBLE_DEVICES"])
        self.assertGreater(r["timer"]["sync_overhead_ns"], 0)

    def test_visible_devices_honoured_and_recorded(self):
        _, r = self.cuda_run("gpu_logged", "--warmup", "0", "--repeats", "3",
                             env=self.env(CUDA_VISIBLE_DEVICES="1"))
        self.assertEqual(set(self.events_after_setup()) - {"predict"}, {"sync0", "mem0"})
        cuda = r["cuda"]
        self.assertEqual(cuda["CUDA_VISIBLE_DEVICES"], "1")
        self.assertEqual([d["name"] for d in cuda["visible_devices"]], ["Stub GPU 1"])
        self.assertEqual(cuda["visible_devices"][0]["uuid"],
                         "GPU-20212223-2425-2627-2829-2a2b2c2d2e2f")
        self.assertEqual(cuda["visible_devices"][0]["compute_capability"], "9.0")
        self.assertEqual(list(r["memory"]["cuda_peak_allocated_mb_by_visible_device"]), ["0"])
        # by UUID prefix, as the driver accepts
        _, r = self.cuda_run("gpu_logged", "--warmup", "0", "--repeats", "1",
                             env=self.env(CUDA_VISIBLE_DEVICES="GPU-2021,0"))
        self.assertEqual([d["name"] for d in r["cuda"]["visible_devices"]],
                         ["Stub GPU 1", "Stub GPU 0"])

    def test_entry_points_by_explicit_version(self):
        # the stub exports cuCtxSynchronize_v2(CUcontext) as CUDA 12.9/13 do: the driver's
        # entry points are asked for with cuGetProcAddress and the version whose signature
        # rpxprof declares, never by appending "_v2"
        self.cuda_run("gpu_logged", "--warmup", "1", "--repeats", "2")
        with open(self.log) as f:
            events = f.read().split()
        asked = dict(e[len("proc:"):].split("@") for e in events if e.startswith("proc:"))
        self.assertLess(int(asked["cuCtxSynchronize"]), 12090)
        self.assertGreaterEqual(int(asked["cuDeviceGetUuid"]), 11040)
        self.assertGreaterEqual(int(asked["cuCtxPushCurrent"]), 4000)
        self.assertGreaterEqual(int(asked["cuMemGetInfo"]), 3020)
        self.assertNotIn("syncv20", events)
        self.assertIn("sync0", events)
        # a driver before 11.3 (no cuGetProcAddress): the exact exported names
        os.remove(self.log)
        _, r = self.cuda_run("gpu_logged", "--warmup", "1", "--repeats", "2",
                             env=self.env(RPX_CUDA_LIBRARY=STUB_OLD))
        with open(self.log) as f:
            events = f.read().split()
        self.assertFalse([e for e in events if e.startswith("proc:")])
        self.assertNotIn("syncv20", events)
        self.assertIn("sync1", events)
        self.assertEqual(r["cuda"]["visible_devices"][1]["uuid"],
                         "GPU-20212223-2425-2627-2829-2a2b2c2d2e2f")

    def python_cuda_run(self, source, *args, **env):
        with open(self.path("cudamodel.py"), "w") as f:
            f.write(source)
        e = self.env(PYTHONPATH=self.path(), **env)
        p, r, _ = run_report(self, "--model", "cudamodel:predict", "--inputs", self.inputs,
                             "--device", "cuda", "--processes", "1", "--repeats", "2", *args,
                             env=e, check=0)
        return p, r

    def test_visibility_changed_by_the_model(self):
        # the driver starts before the module is imported: its CUDA_VISIBLE_DEVICES comes
        # too late; the report shows what the driver used, and says so
        _, r = self.python_cuda_run("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"
                                    "def predict(x):\n    pass\n")
        self.assertIsNone(r["cuda"]["CUDA_VISIBLE_DEVICES"])
        self.assertEqual(len(r["cuda"]["visible_devices"]), 2)
        changed = [n for n in r["notes"] if "CUDA_VISIBLE_DEVICES" in n and "changed" in n]
        self.assertEqual(len(changed), 1, r["notes"])
        self.assertIn("unset when the driver started, '1' after", changed[0])
        _, r = self.python_cuda_run("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"
                                    "def predict(x):\n    pass\n", CUDA_VISIBLE_DEVICES="0")
        self.assertEqual(r["cuda"]["CUDA_VISIBLE_DEVICES"], "0")
        self.assertEqual([d["name"] for d in r["cuda"]["visible_devices"]], ["Stub GPU 0"])

    def test_several_visible_gpus_warned(self):
        # a primary context on every visible GPU, a sync per GPU per call, the sampler on
        # each: with CUDA_VISIBLE_DEVICES unset on a shared node that is every GPU
        _, r = self.cuda_run("gpu_logged", "--repeats", "2")
        several = [n for n in r["notes"] if "2 GPUs are visible" in n]
        self.assertEqual(len(several), 1, r["notes"])
        self.assertIn("CUDA_VISIBLE_DEVICES", several[0])
        _, r = self.cuda_run("gpu_logged", "--repeats", "2",
                             env=self.env(CUDA_VISIBLE_DEVICES="1"))
        self.assertFalse([n for n in r["notes"] if "GPUs are visible" in n], r["notes"])

    def test_mig_instance(self):
        # a MIG instance's UUID reads MIG-..., as in nvidia-smi; CUDA enumerates one MIG
        # instance per process: the entries after it are not visible, and the report says so
        _, r = self.cuda_run("gpu_logged", "--repeats", "2",
                             env=self.env(RPX_STUB_CUDA_MIG="1",
                                          CUDA_VISIBLE_DEVICES="MIG-a0a1a2a3,MIG-b0b1,1"))
        devices = r["cuda"]["visible_devices"]
        self.assertEqual([d["uuid"] for d in devices],
                         ["MIG-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf"])
        cut = [n for n in r["notes"] if "one MIG instance" in n]
        self.assertEqual(len(cut), 1, r["notes"])
        self.assertIn("'MIG-b0b1,1'", cut[0])
        # a whole GPU keeps its GPU- prefix; a lone MIG entry warns of nothing
        _, r = self.cuda_run("gpu_logged", "--repeats", "2",
                             env=self.env(RPX_STUB_CUDA_MIG="1", CUDA_VISIBLE_DEVICES="MIG-b0b1"))
        self.assertEqual(r["cuda"]["visible_devices"][0]["uuid"],
                         "MIG-b0b1b2b3-b4b5-b6b7-b8b9-babbbcbdbebf")
        self.assertFalse([n for n in r["notes"] if "one MIG instance" in n], r["notes"])

    def test_peaks_map_to_the_right_device(self):
        _, r = self.cuda_run("gpu_alloc", "--warmup", "1", "--repeats", "5")
        peaks = r["memory"]["cuda_peak_allocated_mb_by_visible_device"]
        self.assertEqual(peaks["0"], 0)
        self.assertEqual(peaks["1"], 150)  # 100 MiB of weights + a 50 MiB transient
        self.assertFalse([n for n in r["notes"] if "CUDA memory in use" in n])
        method = r["memory"]["cuda_peak_method"]
        self.assertEqual(method["method"], "cuda_mem_get_info_sampled")
        self.assertEqual(method["baseline_mb"], {"0": 512, "1": 512})
        # the weights were in use when the peaks were reset: the call's own peak is 50
        self.assertEqual(method["at_reset_mb"], {"0": 0, "1": 100})
        self.assertTrue(method["sampler"])
        _, r = self.cuda_run("gpu_alloc", "--warmup", "1", "--repeats", "3",
                             env=self.env(RPX_TEST_GPU_DEVICE="0", RPX_TEST_GPU_WEIGHTS_MB="10",
                                          RPX_TEST_GPU_TRANSIENT_MB="30"))
        peaks = r["memory"]["cuda_peak_allocated_mb_by_visible_device"]
        self.assertEqual((peaks["0"], peaks["1"]), (40, 0))

    def test_gpu_busy_time(self):
        _, r = self.cuda_run("gpu_kernels", "--warmup", "2", "--repeats", "20", "--gpu-time",
                             env=self.env(RPX_CUPTI_LIBRARY=CUPTI))
        g = r["gpu_time"]
        self.assertEqual(g["method"], "cupti_concurrent_kernel_activity")
        self.assertEqual(g["calls"], 20)
        self.assertEqual(g["samples_ms"], [0.3] * 20)  # the union of [0,100] and [50,300] us
        self.assertEqual(g["kernels_per_call_p50"], 2)
        self.assertTrue(any("launch- or host-bound" in n for n in r["notes"]))
        # not asked for: null
        _, r = self.cuda_run("gpu_logged", "--repeats", "2")
        self.assertIsNone(r["gpu_time"])

    def test_gpu_time_refusals(self):
        p, _ = self.cuda_run("gpu_kernels", "--gpu-time", check=1,
                             env=self.env(RPX_CUPTI_LIBRARY="/nonexistent/libcupti.so",
                                          RPX_TEST_CUPTI=CUPTI))
        self.assertIn("--gpu-time: CUPTI cannot be loaded", p.stderr)
        p, _ = self.cuda_run("gpu_kernels", "--gpu-time", check=1,
                             env=self.env(RPX_CUPTI_LIBRARY=CUPTI,
                                          RPX_STUB_CUPTI_ENABLE_FAIL="7"))
        self.assertIn("CUPTI refused kernel tracing", p.stderr)
        out = self.path("x.json")
        p = run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", self.inputs, "--output",
                out, "--gpu-time")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--gpu-time needs --device cuda", p.stderr)

    def test_cupti_falls_back_when_enabling_fails(self):
        # a CUPTI newer than the driver loads and then answers CUPTI_ERROR_NOT_INITIALIZED:
        # the next candidate is tried, and the report names the one rejected
        _, r = self.cuda_run("gpu_kernels", "--warmup", "1", "--repeats", "3", "--gpu-time",
                             env=self.env(RPX_CUPTI_LIBRARY=f"{CUPTI_NEW}:{CUPTI}"))
        g = r["gpu_time"]
        self.assertEqual(g["library"], CUPTI)
        self.assertEqual(g["samples_ms"], [0.3] * 3)
        self.assertEqual(g["rejected_libraries"],
                         [f"{CUPTI_NEW}: CUPTI_ERROR_NOT_INITIALIZED (15)"])
        p, _ = self.cuda_run("gpu_kernels", "--gpu-time", check=1,
                             env=self.env(RPX_CUPTI_LIBRARY=CUPTI_NEW, RPX_TEST_CUPTI=CUPTI))
        self.assertIn(f"CUPTI refused kernel tracing: {CUPTI_NEW}: CUPTI_ERROR_NOT_INITIALIZED",
                      p.stderr)

    def test_cupti_already_loaded_is_reused(self):
        # the model's framework (torch) loaded its CUPTI during setup: that copy is used,
        # opened after setup with RTLD_NOLOAD, not another one from the system's paths
        _, r = self.cuda_run("gpu_kernels", "--warmup", "1", "--repeats", "4", "--gpu-time",
                             env=self.env(RPX_TEST_CUPTI=CUPTI))
        g = r["gpu_time"]
        self.assertEqual(g["library"], CUPTI)
        self.assertEqual(g["samples_ms"], [0.3] * 4)
        self.assertEqual(g["rejected_libraries"], [])

    def test_cupti_from_the_pythons_wheel(self):
        # pip's nvidia-cuda-cupti wheel: site-packages/nvidia/cuda_cupti/lib of the Python
        # whose packages are loaded in the process
        site = self.path("site-packages")
        wheel = os.path.join(site, "nvidia", "cuda_cupti", "lib")
        os.makedirs(wheel)
        os.makedirs(os.path.join(site, "faketorch", "lib"))
        shutil.copy(CUPTI, os.path.join(wheel, "libcupti.so.12"))
        fake = os.path.join(site, "faketorch", "lib", "libfaketorch.so")
        shutil.copy(MODELS, fake)
        with open(os.path.join(site, "cudamodel.py"), "w") as f:
            f.write(f"import ctypes\nctypes.CDLL({fake!r})\ndef predict(x):\n    pass\n")
        p, r, _ = run_report(self, "--model", "cudamodel:predict", "--inputs", self.inputs,
                             "--device", "cuda", "--processes", "1", "--repeats", "2",
                             "--gpu-time", env=self.env(PYTHONPATH=site), check=0)
        self.assertIsNotNone(r, p.stderr)
        self.assertEqual(r["gpu_time"]["library"], os.path.join(wheel, "libcupti.so.12"))

    def test_gpu_conditions_sampled_during_the_timed_calls(self):
        # a GPU throttles while it works, not before the model's process starts or after it
        # ends (the stubs: busy from cuInit to the last context release): NVML is sampled
        # from the parent's watch loop during the timed calls
        env = self.env(RPX_NVML_LIBRARY=NVML, RPX_STUB_NVML_BUSY_FILE=self.path("busy"),
                       RPX_TEST_CUPTI=CUPTI, CUDA_DEVICE_ORDER="PCI_BUS_ID")
        _, r = self.cuda_run("gpu_kernels", "--warmup", "5", "--repeats", "300", env=env)
        seen = r["cuda"]["conditions_during_timed_calls"]
        self.assertEqual([g["index"] for g in seen], [0, 1])
        h100, a100 = seen
        self.assertGreaterEqual(h100["samples"], 1)
        self.assertEqual(h100["throttle_reasons_seen"], ["sw_power_cap"])
        self.assertEqual(h100["sm_clock_mhz"], {"min": 1755, "max": 1755})
        self.assertEqual(h100["power_w_max"], 690)
        self.assertIsNone(h100["temperature_c_max"])
        self.assertEqual(h100["unavailable"]["temperature_c_max"],
                         "nvmlDeviceGetTemperature: Unknown Error")
        self.assertIsNone(a100["power_w_max"])
        self.assertEqual(a100["unavailable"]["power_w_max"],
                         "nvmlDeviceGetPowerUsage: Not Supported")
        held = [n for n in r["notes"] if "during the timed calls its clocks were held back" in n]
        self.assertEqual(len(held), 2, r["notes"])
        self.assertIn("sw_power_cap", held[0])
        self.assertFalse(os.path.exists(self.path("busy")))
        # without NVML: null, and no sampling
        _, r = self.cuda_run("gpu_logged", "--repeats", "2",
                             env=self.env(RPX_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1"))
        self.assertIsNone(r["cuda"]["conditions_during_timed_calls"])

    def test_memory_sampler_can_be_turned_off(self):
        # gpu-check.sh measures the sampler's cost: p50 with it and without
        _, r = self.cuda_run("gpu_alloc", "--warmup", "1", "--repeats", "3",
                             env=self.env(RPX_GPU_MEM_SAMPLER="off"))
        method = r["memory"]["cuda_peak_method"]
        self.assertFalse(method["sampler"])
        self.assertIsNone(method["interval_us"])
        self.assertEqual(method["samples"], 2)  # at the reset and at the end only
        self.assertEqual(method["at_reset_mb"]["1"], 100)

    def verdict(self, *args):
        p = subprocess.run([sys.executable, VERDICTS, *map(str, args)], capture_output=True,
                           text=True, timeout=60)
        self.assertIn(p.returncode, (0, 1), p.stdout + p.stderr)
        self.assertEqual(len(p.stdout.strip().splitlines()), 1, p.stdout)
        return p.returncode == 0

    def test_gpu_check_verdicts_on_stub_reports(self):
        # scripts/gpu-check.sh cannot run here; its judging can, on the stubs' reports
        env = self.env(RPX_NVML_LIBRARY=NVML, RPX_STUB_NVML_OTHER_PROC="2",
                       RPX_STUB_NVML_BUSY_FILE=self.path("busy"), RPX_TEST_CUPTI=CUPTI,
                       CUDA_DEVICE_ORDER="PCI_BUS_ID")
        _, alloc = self.cuda_run("gpu_alloc", "--warmup", "1", "--repeats", "5", env=env)
        _, off = self.cuda_run("gpu_alloc", "--warmup", "1", "--repeats", "5",
                               env=dict(env, RPX_GPU_MEM_SAMPLER="off"))
        _, kern = self.cuda_run("gpu_kernels", "--warmup", "2", "--repeats", "60", "--gpu-time",
                                env=dict(env, RPX_CUPTI_LIBRARY=CUPTI))
        paths = {}
        for name, r in (("alloc", alloc), ("off", off), ("kern", kern)):
            paths[name] = self.path(f"{name}.json")
            with open(paths[name], "w") as f:
                json.dump(r, f)
        # the call's own peak: 150 MiB peak, 100 MiB of weights in use at the reset
        self.assertTrue(self.verdict("per_call_peak", paths["alloc"], 50, 1))
        self.assertFalse(self.verdict("per_call_peak", paths["alloc"], 150, 1))
        self.assertTrue(self.verdict("sampler_cost", paths["alloc"], paths["off"]))
        self.assertFalse(self.verdict("sampler_cost", paths["off"], paths["alloc"]))
        # busy time 0.3 ms from two kernels a call; a 1 ms sleep in each call
        self.assertTrue(self.verdict("busy", paths["kern"], 0.3, 2))
        self.assertFalse(self.verdict("busy", paths["kern"], 0.3, 1))
        self.assertFalse(self.verdict("busy", paths["kern"], 0.2, 2))
        self.assertFalse(self.verdict("at_least", paths["kern"], 10))  # 1 ms calls
        self.assertFalse(self.verdict("spin", paths["kern"], 10))
        self.assertTrue(self.verdict("unsynced", paths["alloc"], 1000))  # 20 ms calls
        self.assertFalse(self.verdict("unsynced", paths["kern"], 2))
        self.assertTrue(self.verdict("other_process", paths["alloc"], 4242, 256))
        self.assertFalse(self.verdict("other_process", paths["alloc"], 4243, 1))  # memory n/a
        self.assertTrue(self.verdict("conditions", paths["kern"], 1))
        self.assertFalse(self.verdict("conditions", paths["kern"], 10 ** 6))
        run_uuids = [d["uuid"] for d in kern["cuda"]["visible_devices"]]
        self.assertTrue(self.verdict("uuids", paths["kern"], ",".join(run_uuids)))
        self.assertFalse(self.verdict("uuids", paths["kern"], ",".join(reversed(run_uuids))))
        # the stub NVML and the stub driver name their GPUs differently: a mismatch
        self.assertFalse(self.verdict("card_uuids", paths["kern"]))
        for g, u in zip(kern["system_card"]["gpus"], run_uuids):
            g["uuid"] = u
        with open(paths["kern"], "w") as f:
            json.dump(kern, f)
        self.assertTrue(self.verdict("card_uuids", paths["kern"]))
        self.assertFalse(self.verdict("spin", self.path("missing.json"), 2))

    def test_device_memory_leak_is_reported(self):
        _, r = self.cuda_run("gpu_alloc", "--warmup", "1", "--repeats", "4",
                             env=self.env(RPX_TEST_GPU_LEAK="1"))
        leak = [n for n in r["notes"] if "CUDA memory in use on device 1 grew" in n]
        self.assertEqual(len(leak), 1, r["notes"])
        self.assertIn("by 200.0 MiB", leak[0])  # 4 timed calls x 50 MiB kept

    def test_cpu_run_has_no_cuda_section(self):
        out = self.path("cpu.json")
        run("run", "--model", "rpxprof-demo:demo_noop", "--inputs", self.inputs, "--output", out,
            "--repeats", "3", env=self.env(), check=0)
        with open(out) as f:
            r = json.load(f)
        self.assertIsNone(r["cuda"])
        self.assertIsNone(r["timer"]["sync_overhead_ns"])
        self.assertFalse(os.path.exists(self.log), "a cpu run must not touch the driver")


if __name__ == "__main__":
    main()
