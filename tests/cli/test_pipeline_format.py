"""The RPX depth-efficiency pipeline's formats, both ways (docs/batch.md):

- every report `rpxprof batch` writes carries the pipeline's per-model keys
  (spec section 8), so that a stand-in of the pipeline's aggregator written
  from spec section 9 (depth_efficiency_stand_in.py) passes a 20-model batch
  roster of the packaged demo models and fails a broken one;
- `rpxprof aggregate` reads reports written by the reference
  (profile_callable.py, section 6; profile_depth_efficiency.py, section 8),
  made here by Python from the spec's key lists with numpy's numbers."""
import copy
import csv
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from common import SOURCE, TempDirTest, load_json as load, main, run, save_json as save, validate, validate_profile

HERE = os.path.dirname(os.path.abspath(__file__))
STAND_IN = os.path.join(HERE, "depth_efficiency_stand_in.py")
sys.path.insert(0, HERE)
import depth_efficiency_stand_in as stand_in  # noqa: E402

PIPELINE_KEYS = (
    "model, task, input_protocol, frames_per_sample, precision, parameter_dtypes, batch_size, "
    "distinct_samples, warmup_forwards, repetitions_per_sample, timed_forwards, params_total, "
    "params_total_m, params_trainable, parameter_storage_bytes, parameter_storage_mb, flops_per_sample, "
    "flops_per_sample_g, flops_per_frame_g, macs_per_sample, macs_per_sample_g, flop_status, flop_method, "
    "latency_p50_ms_per_sample, latency_p95_ms_per_sample, latency_p99_ms_per_sample, "
    "latency_mean_ms_per_sample, latency_p50_ms_per_frame, latency_samples_ms, latency_records, "
    "throughput_frames_per_second, peak_cuda_allocated_mb, peak_cuda_reserved_mb, peak_cpu_rss_mb, "
    "gpu_name, gpu_total_memory_mb, torch_version, cuda_runtime, python_version, platform, adapter_class, "
    "manifest_path, dataset_revision, code_sha, container_image, concurrent_host_load, "
    "profiled_at_utc").split(", ")
T = 4  # frames of the video task's clip


def save_fixed_matmul_onnx(path):
    """x[1, 64] @ w[64, 32] (w all ones), every shape fixed: 2048 parameters, 4096 FLOPs."""
    import onnx
    from onnx import TensorProto, helper
    w = helper.make_tensor("w", TensorProto.FLOAT, [64, 32], np.ones(64 * 32, np.float32))
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32])], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def roster_manifest(d, name="m.json", drop=(), no_flops=(), rename=None, fail=()):
    """The 20-model roster as a batch manifest: image models run demo_depth on one
    48x64 RGB frame, video models demo_video_depth on a 4-frame clip; each declares
    its FLOPs and parameters, except 'hyden', costed from an ONNX graph."""
    np.savez(os.path.join(d, "frame.npz"), rgb=np.full((48, 64, 3), 128, np.uint8))
    np.savez(os.path.join(d, "clip.npz"), frames=np.full((T, 48, 64, 3), 128, np.uint8))
    save_fixed_matmul_onnx(os.path.join(d, "hyden.onnx"))
    models = []
    for i, (task, model) in enumerate(stand_in.ROSTER):
        if model in drop:
            continue
        sym = "demo_depth" if task == "image" else "demo_video_depth"
        if model in fail:
            sym = "demo_video_depth" if task == "image" else "demo_depth"  # wrong inputs: setup fails
        m = {"name": rename.get(model, model) if rename else model, "model": "rpxprof-demo:" + sym,
             "tasks": [task]}
        if model == "hyden":
            m["cost"] = "hyden.onnx"
        elif model not in no_flops:
            m["flops"] = (i + 1) * 1e9
            m["params"] = (i + 1) * 1e6
        else:
            m["params"] = (i + 1) * 1e6
        models.append(m)
    man = {"schema": "rpxprof.manifest/1",
           "defaults": {"warmup": 1, "repeats": 7, "device": "cpu", "precision": "fp32", "processes": 1},
           "tasks": {"image": {"inputs": "frame.npz", "unit": "frame"},
                     "video": {"inputs": "clip.npz", "unit": "clip", "meta": {"clip_length": T}}},
           "models": models}
    path = os.path.join(d, name)
    save(path, man)
    return path


def stand_in_run(root, d, *extra):
    csv_path, val_path = os.path.join(d, "sub", "rows.csv"), os.path.join(d, "sub", "validation.json")
    p = subprocess.run([sys.executable, STAND_IN, "--input-root", root, "--output-csv", csv_path,
                        "--validation-json", val_path, *extra], capture_output=True, text=True)
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    return p, load(val_path), rows


class BatchPipelineKeysTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls._ctmp = tempfile.TemporaryDirectory(prefix="rpxpipe-")
        cls.d = cls._ctmp.name
        cls.manifest = roster_manifest(cls.d)
        cls.out = os.path.join(cls.d, "out")
        p = run("batch", cls.manifest, "--out-dir", cls.out, "--quiet",
                env={"RPX_GIT_SHA": "0123abc", "PROFILE_CONTAINER_IMAGE": "",
                     "PROFILE_CONCURRENT_HOST_LOAD": ""})
        assert p.returncode == 0, p.stdout + p.stderr
        cls.batch_stdout = p.stdout

    @classmethod
    def tearDownClass(cls):
        cls._ctmp.cleanup()

    def report(self, task, model):
        return load(os.path.join(self.out, task, model + ".json"))

    def test_stand_in_passes_the_batch_folder_as_it_is(self):
        p, val, rows = stand_in_run(self.out, self.tmp)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(val, {"expected_models": 20, "profiles_found": 20,
                               "headline_fields": ["params_total", "flops_per_sample", "latency_p50_ms_per_sample"],
                               "errors": [], "status": "PASS"})
        self.assertIn("CSV: ", p.stdout)
        self.assertEqual(len(rows), 20)
        self.assertEqual(list(rows[0].keys()), list(stand_in.FIELDS))
        self.assertEqual([(r["task"], r["model"]) for r in rows], sorted(stand_in.ROSTER))
        # every field of the CSV the reports can fill is filled; on a cpu run the
        # GPU and torch fields stay empty (unknown, never 0)
        empty_on_cpu = {"peak_cuda_allocated_mb", "peak_cuda_reserved_mb", "gpu_name", "gpu_total_memory_mb",
                        "torch_version", "cuda_runtime", "container_image", "flops_note"}
        for r in rows:
            for k in stand_in.HEADLINE:
                self.assertTrue(r[k] and float(r[k]) > 0, (r["model"], k, r[k]))
            for k in stand_in.FIELDS:
                if k in empty_on_cpu or (k in ("parameter_dtypes", "parameter_storage_mb") and r["model"] != "hyden"):
                    self.assertEqual(r[k], "", (r["model"], k))
                else:
                    self.assertNotEqual(r[k], "", (r["model"], k))

    def test_every_report_carries_the_pipeline_keys_with_their_meanings(self):
        for i, (task, model) in enumerate(stand_in.ROSTER):
            r = self.report(task, model)
            validate_profile(r)
            for k in PIPELINE_KEYS:
                self.assertIn(k, r, (model, k))
            frames = T if task == "video" else 1
            s = np.array(r["latency_samples_ms"], np.float64)
            self.assertEqual((r["model"], r["task"], r["model_name"]), (model, task, model))
            self.assertEqual(r["input_protocol"], "1xclip:4x64x48" if task == "video" else "1xRGB:64x48")
            self.assertEqual(r["frames_per_sample"], frames)
            self.assertEqual((r["batch_size"], r["distinct_samples"], r["warmup_forwards"],
                              r["repetitions_per_sample"], r["timed_forwards"]), (1, 1, 1, 7, 7))
            self.assertEqual(len(s), 7)
            for q, key in ((50, "p50"), (95, "p95"), (99, "p99")):
                self.assertAlmostEqual(r[f"latency_{key}_ms_per_sample"], float(np.percentile(s, q)),
                                       delta=1e-12 * float(np.percentile(s, q)))
            self.assertAlmostEqual(r["latency_mean_ms_per_sample"], float(np.mean(s)), delta=1e-9 * float(np.mean(s)))
            self.assertEqual(r["latency_p50_ms_per_sample"], r["latency"]["p50_ms"])
            self.assertAlmostEqual(r["latency_p50_ms_per_frame"], r["latency_p50_ms_per_sample"] / frames)
            self.assertAlmostEqual(r["throughput_frames_per_second"] / (frames * 1000 / r["latency_p50_ms_per_sample"]), 1,
                                   places=12)
            self.assertEqual([(x["sample_index"], x["repetition"], x["latency_ms"]) for x in r["latency_records"]],
                             [(0, j, v) for j, v in enumerate(r["latency_samples_ms"])])
            self.assertEqual({x["sample_id"] for x in r["latency_records"]}, {"clip" if task == "video" else "frame"})
            if model == "hyden":  # counted on the ONNX graph
                self.assertEqual((r["params_total"], r["flops_per_sample"], r["macs_per_sample"]), (2048, 4096, 2048))
                self.assertEqual(r["flop_status"], "counted:onnx_graph")
                self.assertIn("hyden.onnx", r["flop_method"])
                self.assertEqual((r["parameter_dtypes"], r["parameter_storage_bytes"]), ("float32", 8192))
                self.assertEqual(r["parameter_storage_mb"], 8192 / 2 ** 20)
            else:  # declared in the manifest
                self.assertEqual((r["params_total"], r["flops_per_sample"]), ((i + 1) * 10 ** 6, (i + 1) * 10 ** 9))
                self.assertEqual(r["flop_status"], "declared")
                self.assertEqual(r["macs_per_sample"], r["flops_per_sample"] / 2)
                self.assertIsNone(r["parameter_dtypes"])
                self.assertIsNone(r["parameter_storage_bytes"])
                self.assertIsNone(r["parameter_storage_mb"])
            self.assertAlmostEqual(r["params_total_m"], r["params_total"] / 1e6)
            self.assertAlmostEqual(r["flops_per_sample_g"], r["flops_per_sample"] / 1e9)
            self.assertAlmostEqual(r["flops_per_frame_g"], r["flops_per_sample"] / frames / 1e9)
            self.assertAlmostEqual(r["macs_per_sample_g"], r["macs_per_sample"] / 1e9)
            self.assertEqual(r["peak_cpu_rss_mb"], r["memory"]["cpu_process_lifetime_peak_mb"])
            for k in ("params_trainable", "peak_cuda_allocated_mb", "peak_cuda_reserved_mb", "gpu_name",
                      "gpu_total_memory_mb", "torch_version", "cuda_runtime", "python_version", "container_image"):
                self.assertIsNone(r[k], (model, k))
            self.assertEqual(r["precision"], "fp32")
            self.assertEqual(r["adapter_class"], r["model_callable"])
            self.assertEqual(r["manifest_path"], self.manifest)
            self.assertEqual(r["dataset_revision"], "sha256:" + r["inputs_sha256"])
            self.assertEqual(r["code_sha"], "0123abc")
            self.assertEqual(r["concurrent_host_load"], "unknown")
            self.assertEqual(r["profiled_at_utc"], r["created_utc"])
            self.assertRegex(r["platform"], r"^Linux-.+-with-")
            os_ = r["system_card"]["operating_system"]
            self.assertTrue(r["platform"].startswith(f"Linux-{os_['kernel_release']}-"), r["platform"])

    def test_environment_reaches_the_keys(self):
        d = self.path("env")
        os.makedirs(d)
        np.savez(os.path.join(d, "frame.npz"), rgb=np.zeros((8, 10, 3), np.uint8))
        np.savez(os.path.join(d, "pair.npz"), rgb_a=np.zeros((8, 10, 3), np.uint8), rgb_b=np.zeros((8, 10, 3), np.uint8))
        np.savez(os.path.join(d, "odd.npz"), x=np.zeros((3, 8), np.float32))
        save(os.path.join(d, "m.json"), {
            "schema": "rpxprof.manifest/1",
            "defaults": {"warmup": 1, "repeats": 3, "processes": 1},
            "tasks": {"image": {"inputs": "frame.npz", "meta": {"frames_per_sample": 2, "batch_size": 3,
                                                               "dataset_revision": "rev-7"}},
                      "pair": {"inputs": "pair.npz"}, "odd": {"inputs": "odd.npz"}},
            "models": [{"name": "n", "model": "rpxprof-demo:demo_noop", "tasks": ["image", "pair", "odd"]}]})
        p = run("batch", os.path.join(d, "m.json"), "--out-dir", os.path.join(d, "out"), "--quiet",
                env={"RPX_GIT_SHA": "", "PROFILE_CONTAINER_IMAGE": "img:1", "PROFILE_CONCURRENT_HOST_LOAD": "busy"})
        self.assertEqual(p.returncode, 0, p.stderr)
        r = load(os.path.join(d, "out", "image", "n.json"))
        self.assertEqual((r["code_sha"], r["container_image"], r["concurrent_host_load"]), (None, "img:1", "busy"))
        self.assertEqual((r["frames_per_sample"], r["batch_size"], r["dataset_revision"]), (2, 3, "rev-7"))
        self.assertEqual(r["input_protocol"], "1xRGB:10x8")
        self.assertAlmostEqual(r["latency_p50_ms_per_frame"], r["latency"]["p50_ms"] / 2)
        # nothing declared: FLOPs and parameters unknown, never 0
        self.assertEqual(r["flop_status"], "unavailable")
        for k in ("params_total", "params_total_m", "flops_per_sample", "flops_per_sample_g", "flops_per_frame_g",
                  "macs_per_sample", "macs_per_sample_g", "flop_method"):
            self.assertIsNone(r[k], k)
        self.assertEqual(load(os.path.join(d, "out", "pair", "n.json"))["input_protocol"], "2xRGB:10x8")
        self.assertEqual(load(os.path.join(d, "out", "odd", "n.json"))["input_protocol"], "arrays:x=3x8")

    def test_stand_in_fails_a_broken_roster(self):
        d = self.path("broken")
        os.makedirs(d)
        man = roster_manifest(d, drop=("depth-pro",), no_flops=("lotus-2",), rename={"vigeo": "vigeo-v2"},
                              fail=("monst3r",))
        out = os.path.join(d, "out")
        p = run("batch", man, "--out-dir", out, "--quiet")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)  # monst3r failed
        failed = load(os.path.join(out, "video", "monst3r.json"))
        validate_profile(failed)
        self.assertEqual((failed["status"], failed["model"], failed["flop_status"]), ("failed", "monst3r", "unavailable"))
        # a renamed model: its report copied under the roster's name
        shutil.copy(os.path.join(out, "video", "vigeo-v2.json"), os.path.join(out, "video", "vigeo.json"))
        p, val, rows = stand_in_run(out, d)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertEqual(val["status"], "FAIL")
        self.assertEqual(val["profiles_found"], 18)  # missing depth-pro, mismatched vigeo
        want = [f"depth-pro: missing {os.path.join(out, 'image', 'depth-pro.json')}",
                "lotus-2: FLOPs unavailable (status=unavailable)",
                f"vigeo: identity mismatch in {os.path.join(out, 'video', 'vigeo.json')}",
                "monst3r: invalid params_total=None",
                "monst3r: invalid latency_p50_ms_per_sample=None",
                "monst3r: FLOPs unavailable (status=unavailable)"]
        self.assertEqual(val["errors"], want)
        lotus = [r for r in rows if r["model"] == "lotus-2"][0]
        self.assertEqual(lotus["flops_note"], "lotus-2: FLOPs unavailable (status=unavailable)")
        self.assertEqual(lotus["flops_per_sample"], "")
        # --allow-incomplete-flops keeps the FLOP notes out of the errors
        p, val, rows = stand_in_run(out, d, "--allow-incomplete-flops")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(val["errors"], [e for e in want if "FLOPs" not in e])
        # with the three reports made whole, it passes with --allow-incomplete-flops only
        for task, model in (("image", "depth-pro"), ("video", "vigeo"), ("video", "monst3r")):
            shutil.copy(os.path.join(self.out, task, model + ".json"), os.path.join(out, task, model + ".json"))
        p, val, _ = stand_in_run(out, d, "--allow-incomplete-flops")
        self.assertEqual((p.returncode, val["status"]), (0, "PASS"), val["errors"])
        p, val, _ = stand_in_run(out, d)
        self.assertEqual(val["errors"], ["lotus-2: FLOPs unavailable (status=unavailable)"])


# --- reports written by the reference, made from the spec's key lists -------
SYSTEM_CARD_KEYS = ("gpu_name", "gpu_memory_gb", "gpu_count", "cpu_name", "ram_gb", "cuda_version",
                    "pytorch_version", "python_version", "precision", "batch_size", "input_resolution", "os",
                    "driver_version")
DEPTH_KEYS = (
    "model, task, input_protocol, frames_per_sample, precision, parameter_dtypes, batch_size, distinct_samples, "
    "warmup_forwards, repetitions_per_sample, timed_forwards, params_total, params_total_m, params_trainable, "
    "parameter_storage_bytes, parameter_storage_mb, flops_per_sample, flops_per_sample_g, flops_per_frame_g, "
    "macs_per_sample, macs_per_sample_g, flop_status, flop_method, latency_p50_ms_per_sample, "
    "latency_p95_ms_per_sample, latency_p99_ms_per_sample, latency_mean_ms_per_sample, latency_p50_ms_per_frame, "
    "latency_samples_ms, latency_records, throughput_frames_per_second, peak_cuda_allocated_mb, "
    "peak_cuda_reserved_mb, peak_cpu_rss_mb, gpu_name, gpu_total_memory_mb, torch_version, cuda_runtime, "
    "python_version, platform, adapter_class, manifest_path, dataset_revision, code_sha, container_image, "
    "concurrent_host_load, profiled_at_utc").split(", ")
assert len(DEPTH_KEYS) == 47


def samples_ms(seed, n):
    """Latencies in ms with many digits, so that the 1 us rounding matters."""
    return [float(x) for x in np.random.default_rng(seed).lognormal(np.log(12.3456789), 0.2, n)]


def write_ref(path, report):
    """As the reference writes: json.dumps(indent=2) + newline, folders made."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(json.dumps(report, indent=2, allow_nan=False) + "\n")


def callable_report(samples, npz, *, warmup=10, precision="fp32", unit="frame"):
    """examples/profile_callable.py's report (spec section 6): statistics by numpy,
    rounded to 3 decimals as LatencyProfiler rounds them."""
    s = np.asarray(samples, np.float64)
    p50, p95, p99 = np.percentile(s, [50, 95, 99])
    with open(npz, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    with np.load(npz, allow_pickle=False) as z:
        inputs = {k: {"shape": list(z[k].shape), "dtype": str(z[k].dtype)} for k in z.files}
    card = dict(zip(SYSTEM_CARD_KEYS, ("", 0.0, 0, "x86_64", 23.5, "", "1.13.1", "3.11.2", precision, 1,
                                       "caller_defined; see inputs", "Linux 6.1.0", "")))
    return {"timing_scope": "synchronized_callable_wall_time; preloaded_inputs", "device": "cpu", "unit": unit,
            "warmup_calls": warmup, "measured_calls": len(samples), "inputs": inputs,
            "latency": {"p50_ms": round(float(p50), 3), "p95_ms": round(float(p95), 3),
                        "p99_ms": round(float(p99), 3), "mean_ms": round(float(np.mean(s)), 3)},
            "latency_samples_ms": list(samples),
            "memory": {"cpu_process_lifetime_peak_mb": 211.125, "cuda_peak_allocated_mb_by_visible_device": {}},
            "system_card": card,
            "notes": ["Warmup excluded. Fixed-input repeats are not distinct samples.",
                      "Precision and callable device placement are caller-controlled.",
                      "API callables include transport time and exclude remote GPU accounting."],
            "model_callable": "rpx_benchmark.examples.benchmark_tasks:demo_depth", "inputs_sha256": sha}


def depth_report(model, task, seed, *, frames=1, distinct=2, repeats=3, warmup=3, flops=4.0e11, params=3.35e8):
    """scripts/profile_depth_efficiency.py's report (spec section 8), its keys in
    order; percentiles by numpy unrounded, the mean by statistics.fmean."""
    import statistics
    n = distinct * repeats
    lat = samples_ms(seed, n)
    s = np.asarray(lat, np.float64)
    p50, p95, p99 = (float(x) for x in np.percentile(s, [50, 95, 99]))
    records = [{"sample_index": i, "sample_id": f"s{i}", "repetition": r, "latency_ms": lat[r * distinct + i]}
               for r in range(repeats) for i in range(distinct)]
    v = dict.fromkeys(DEPTH_KEYS)
    v.update(model=model, task=task,
             input_protocol=f"1xclip:{frames}x640x480" if task == "video" else "1xRGB:640x480",
             frames_per_sample=frames, precision="fp32", parameter_dtypes="torch.float32", batch_size=1,
             distinct_samples=distinct, warmup_forwards=warmup, repetitions_per_sample=repeats, timed_forwards=n,
             params_total=params, params_total_m=params / 1e6 if params else None, params_trainable=params,
             parameter_storage_bytes=4 * params if params else None,
             parameter_storage_mb=4 * params / 1024 ** 2 if params else None,
             flops_per_sample=flops, flops_per_sample_g=flops / 1e9 if flops else None,
             flops_per_frame_g=flops / frames / 1e9 if flops else None, macs_per_sample=flops / 2 if flops else None,
             macs_per_sample_g=flops / 2e9 if flops else None,
             flop_status="measured" if flops else "unsupported_or_zero",
             flop_method="torch.utils.flop_counter.FlopCounterMode" if flops else None,
             latency_p50_ms_per_sample=p50, latency_p95_ms_per_sample=p95, latency_p99_ms_per_sample=p99,
             latency_mean_ms_per_sample=statistics.fmean(lat), latency_p50_ms_per_frame=p50 / frames,
             latency_samples_ms=lat, latency_records=records, throughput_frames_per_second=frames * 1000 / p50,
             peak_cpu_rss_mb=2048.5, gpu_name=None, torch_version="1.13.1", cuda_runtime=None,
             python_version="3.11.2", platform="Linux-6.1.0-x86_64-with-glibc2.36",
             adapter_class="rpx_benchmark.adapters.Depth", manifest_path="/data/manifest.json",
             dataset_revision="2e2a387f7f93e98c177b2e039c141eacda94e5fc", concurrent_host_load="unknown",
             profiled_at_utc="2026-01-02T03:04:05Z")
    assert list(v) == list(DEPTH_KEYS)
    return v


def csv_rows(agg):
    with open(os.path.join(agg, "summary.csv"), newline="") as f:
        return {(r["task"], r["model"]): r for r in csv.DictReader(f)}


class ReferenceReportsTest(TempDirTest):
    def aggregate(self, *dirs, extra=()):
        agg = self.path("agg")
        p = run("aggregate", *dirs, "--out-dir", agg, *extra)
        val = load(os.path.join(agg, "validation.json"))
        validate(val, "validation.json")
        return p, val, agg

    def npz(self, shape=(48, 64, 3)):
        path = self.path("frame.npz")
        np.savez(path, rgb=np.full(shape, 128, np.uint8))
        return path

    def folder(self):
        d = self.path("ref")
        write_ref(os.path.join(d, "image", "da-v2-large.json"), depth_report("da-v2-large", "image", 1))
        write_ref(os.path.join(d, "image", "depth-pro.json"), depth_report("depth-pro", "image", 2, flops=9.1e11))
        write_ref(os.path.join(d, "video", "video-da.json"), depth_report("video-da", "video", 3, frames=250))
        write_ref(os.path.join(d, "callable", "demo.json"), callable_report(samples_ms(4, 40), self.npz()))
        return d

    def test_reference_reports_are_read_with_a_warning_naming_their_tool(self):
        d = self.folder()
        p, val, agg = self.aggregate(d, extra=("--allow-incomplete-flops",))
        self.assertEqual((p.returncode, val["status"], val["profiles_found"]), (0, "PASS", 4), val["errors"])
        w = "\n".join(val["warnings"])
        self.assertIn(f"{d}/callable/demo.json: written by the reference's profile_callable.py, not by rpxprof", w)
        for rel in ("image/da-v2-large.json", "image/depth-pro.json", "video/video-da.json"):
            self.assertIn(f"{d}/{rel}: written by the reference's profile_depth_efficiency.py, not by rpxprof", w)
        self.assertIn("FLOPs unavailable: the reference's profile_callable.py counts none (allowed by "
                      "--allow-incomplete-flops)", w)
        self.assertIn("n/a: metadata, memory.cpu_inference_peak_mb, system_card.cpu_name", w)
        rows = csv_rows(agg)
        self.assertEqual(set(rows), {("image", "da-v2-large"), ("image", "depth-pro"), ("video", "video-da"),
                                     ("callable", "demo")})
        dr = depth_report("video-da", "video", 3, frames=250)
        v = rows[("video", "video-da")]
        self.assertEqual(float(v["p50_ms"]), dr["latency_p50_ms_per_sample"])
        self.assertEqual(float(v["params"]), dr["params_total"])
        self.assertEqual(float(v["flops"]), dr["flops_per_sample"])
        self.assertEqual(float(v["per_frame_p50_ms"]), dr["latency_p50_ms_per_frame"])
        self.assertAlmostEqual(float(v["throughput_per_s"]), 1000 / dr["latency_p50_ms_per_sample"])
        self.assertEqual(float(v["cpu_process_lifetime_peak_mb"]), 2048.5)
        self.assertEqual(v["created_utc"], "2026-01-02T03:04:05Z")
        self.assertEqual((v["status"], v["processes"], v["covers"]), ("complete", "1", ""))
        c = rows[("callable", "demo")]
        cr = callable_report(samples_ms(4, 40), self.npz())
        self.assertEqual(float(c["p50_ms"]), cr["latency"]["p50_ms"])
        self.assertEqual((c["device"], c["precision"], c["warmup"], c["repeats"]), ("cpu", "fp32", "10", "40"))
        # unknown is empty, never 0: no cost, no inference peak, no GPU, no CPU model
        for k in ("params", "flops", "macs", "per_frame_p50_ms", "throughput_per_s", "cpu_inference_peak_mb",
                  "cuda_peak_mb", "gpu_name", "cpu_name", "created_utc"):
            self.assertEqual(c[k], "", k)
        with open(os.path.join(agg, "summary.md")) as f:
            md = f.read()
        self.assertIn("| callable | demo | n/a | n/a |", md)
        # without --allow-incomplete-flops the FLOP-less callable report fails
        p, val, _ = self.aggregate(d)
        self.assertEqual((p.returncode, val["status"]), (1, "FAIL"))
        self.assertEqual(val["errors"], [
            f"{d}/callable/demo.json: FLOPs unavailable: the reference's profile_callable.py counts none; profile "
            "the model with rpxprof batch (\"cost\" or \"flops\" in the manifest), or pass --allow-incomplete-flops"])

    def test_tampered_percentiles_are_caught_at_the_reference_rounding(self):
        d = self.folder()
        r = load(os.path.join(d, "callable", "demo.json"))
        good = r["latency"]["p95_ms"]
        r["latency"]["p95_ms"] = round(good + 0.002, 3)
        write_ref(os.path.join(d, "callable", "demo.json"), r)
        r = load(os.path.join(d, "image", "depth-pro.json"))
        r["latency_p50_ms_per_sample"] *= 1.01
        write_ref(os.path.join(d, "image", "depth-pro.json"), r)
        p, val, _ = self.aggregate(d, extra=("--allow-incomplete-flops",))
        self.assertEqual((p.returncode, val["status"]), (1, "FAIL"))
        self.assertEqual(len(val["errors"]), 2, val["errors"])
        self.assertRegex(val["errors"][0], rf"^{d}/callable/demo.json: latency.p95_ms is {r'[0-9.]+'} but the "
                         rf"samples give [0-9.]+ \({good:.3f} at the reference's 1 us rounding\); the report was "
                         "altered or truncated$")
        self.assertIn(f"{d}/image/depth-pro.json: latency_p50_ms_per_sample is ", val["errors"][1])
        # a value off by less than the rounding (0.4 us) is what the reference itself may store
        r["latency_p50_ms_per_sample"] = depth_report("depth-pro", "image", 2)["latency_p50_ms_per_sample"] + 0.0004
        write_ref(os.path.join(d, "image", "depth-pro.json"), r)
        _, val, _ = self.aggregate(d, extra=("--allow-incomplete-flops",))
        self.assertEqual(len(val["errors"]), 1, val["errors"])

    def test_identity_and_headline_values_of_a_depth_report(self):
        d = self.folder()
        write_ref(os.path.join(d, "image", "hyden.json"), depth_report("zipdepth", "image", 5))
        write_ref(os.path.join(d, "image", "lotus-2.json"), depth_report("lotus-2", "image", 6, params=None, flops=None))
        write_ref(os.path.join(d, "image", "fe2e.json"), {"hello": 1})
        bad = callable_report(samples_ms(4, 40), self.npz())
        bad["latency"] = "fast"
        write_ref(os.path.join(d, "callable", "typo.json"), bad)
        r = depth_report("dvd", "video", 7, frames=250)
        r["latency_records"] = r["latency_records"][:-1]
        write_ref(os.path.join(d, "video", "dvd.json"), r)
        p, val, agg = self.aggregate(d, extra=("--allow-incomplete-flops",))
        self.assertEqual(p.returncode, 1)
        self.assertEqual(val["errors"], [
            f"{d}/callable/typo.json: written by the reference's profile_callable.py, but 'latency' is not an object; "
            "the report was altered",
            f"{d}/image/fe2e.json: not a report rpxprof knows: no 'schema' (rpxprof.profile/1), and not one of the "
            "reference's either (profile_callable.py: timing_scope, latency, latency_samples_ms, measured_calls; "
            "profile_depth_efficiency.py: model, task, latency_p50_ms_per_sample, latency_samples_ms)",
            f"{d}/image/hyden.json: identity mismatch: the report is model 'zipdepth' of task 'image' but its path "
            "says model 'hyden' of task 'image'; a report must be <task>/<model>.json",
            f"{d}/image/lotus-2.json: params_total is null or missing, not a finite positive number (the reference's "
            "profile_depth_efficiency.py); the pipeline's aggregator refuses it too",
            f"{d}/video/dvd.json: latency_records has 5 records but latency_samples_ms has 6 samples; the report was "
            "altered or truncated"])
        self.assertIn(f"{d}/image/lotus-2.json: FLOPs unavailable (flop_status 'unsupported_or_zero'; allowed by "
                      "--allow-incomplete-flops)", val["warnings"])
        self.assertEqual(csv_rows(agg)[("image", "hyden")]["status"], "invalid")

    def test_a_mix_of_rpxprof_and_reference_reports(self):
        """rpxprof batch reports and the reference's in one task: the checks the
        reference's keys allow are made, the others are skipped, not failed."""
        npz = self.npz()
        man = self.path("m.json")
        save(man, {"schema": "rpxprof.manifest/1",
                   "defaults": {"warmup": 3, "repeats": 6, "device": "cpu", "precision": "fp32", "processes": 1},
                   "tasks": {"image": {"inputs": npz, "unit": "frame"}},
                   "models": [{"name": "zipdepth", "model": "rpxprof-demo:demo_depth", "tasks": ["image"],
                               "flops": 2e9, "params": 3e6}]})
        out = self.path("out")
        run("batch", man, "--out-dir", out, "--quiet", check=0, env={"CUDA_VISIBLE_DEVICES": "0"})
        # the reference records no environment: not compared (only what this test set is
        # looked at; the caller's own OPENBLAS_CORETYPE or OMP_NUM_THREADS is rightly there too)
        self.assertEqual(load(os.path.join(out, "image", "zipdepth.json"))["system_card"]["environment"]
                         .get("CUDA_VISIBLE_DEVICES"), "0")
        write_ref(os.path.join(out, "image", "hyden.json"), depth_report("hyden", "image", 8, distinct=2, repeats=3))
        write_ref(os.path.join(out, "image", "fe2e.json"), callable_report(samples_ms(9, 6), npz, warmup=3))
        p, val, agg = self.aggregate(out, extra=("--allow-incomplete-flops",))
        self.assertEqual((p.returncode, val["status"]), (0, "PASS"), val["errors"])
        self.assertEqual(len(csv_rows(agg)), 3)
        w = "\n".join(val["warnings"])
        self.assertIn("hyden.json: written by the reference's profile_depth_efficiency.py", w)
        self.assertIn("fe2e.json: written by the reference's profile_callable.py", w)
        self.assertIn("OS (system_card.os) differs", w)  # both record one: compared, a warning as between rpxprof reports
        # what both record is still compared: another warmup, other inputs
        write_ref(os.path.join(out, "image", "fe2e.json"), callable_report(samples_ms(9, 6), npz, warmup=4))
        _, val, _ = self.aggregate(out, extra=("--allow-incomplete-flops",))
        self.assertEqual(val["errors"], [f"warmup_calls differs: 4 in {out}/image/fe2e.json but 3 in {out}/image/{m}.json"
                                         for m in ("hyden", "zipdepth")])
        r = callable_report(samples_ms(9, 6), npz, warmup=3)
        r["inputs_sha256"] = "0" * 64
        write_ref(os.path.join(out, "image", "fe2e.json"), r)
        _, val, _ = self.aggregate(out, extra=("--allow-incomplete-flops",))
        self.assertEqual(len(val["errors"]), 1, val["errors"])  # the pipeline's hyden has no inputs hash
        self.assertRegex(val["errors"][0], r"^inputs_sha256 \(same task, different inputs\) differs: 0{64} in "
                         r".*fe2e.json but [0-9a-f]{64} in .*zipdepth.json$")


if __name__ == "__main__":
    main()
