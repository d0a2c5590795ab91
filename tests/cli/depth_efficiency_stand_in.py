"""A stand-in for the RPX pipeline's aggregate_depth_efficiency.py, written from
the facts of the reference spec's section 9 (not from its code): it
validates the per-model JSON files of a fixed 20-model roster and combines them
into one CSV, so that the tests can show an `rpxprof batch` folder passes it.

    depth_efficiency_stand_in.py --input-root DIR --output-csv F.csv
                                 --validation-json V.json [--allow-incomplete-flops]

Per expected model (DIR/<task>/<model>.json), in order: a missing file is an
error; a row whose model or task differ from the expected ones is an identity
error and is not kept; params_total and latency_p50_ms_per_sample must be
finite and positive (else an error, the row still kept); flops_per_sample
must be finite and positive, else a FLOPs note (an error unless
--allow-incomplete-flops). The CSV: the 38 fields, rows sorted by (task,
model), missing keys empty. The validation JSON (indent 2) is written and
printed, then "CSV: PATH"; exit 1 when there are errors."""
import argparse
import csv
import json
import math
import os
import sys

FRAME_MODELS = ("da-v2-large", "depth-pro", "unidepth-v2", "metric3d-v2", "moge-2-vit-l",
                "da3-metric-l", "hyden", "lotus-2", "zipdepth", "fe2e")
VIDEO_MODELS = ("video-da", "da3-video", "vggt-omega", "vigeo", "monst3r",
                "depth-crafter", "gem-depth", "dvd", "chrono-depth", "rolling-depth")
ROSTER = tuple(("image", m) for m in FRAME_MODELS) + tuple(("video", m) for m in VIDEO_MODELS)
HEADLINE = ("params_total", "flops_per_sample", "latency_p50_ms_per_sample")
FIELDS = ("task", "model", "input_protocol", "frames_per_sample", "precision", "parameter_dtypes",
          "params_total", "params_total_m", "parameter_storage_mb", "flops_per_sample",
          "flops_per_sample_g", "flops_per_frame_g", "macs_per_sample_g", "flop_status",
          "latency_p50_ms_per_sample", "latency_p95_ms_per_sample", "latency_p99_ms_per_sample",
          "latency_mean_ms_per_sample", "latency_p50_ms_per_frame", "throughput_frames_per_second",
          "peak_cuda_allocated_mb", "peak_cuda_reserved_mb", "peak_cpu_rss_mb", "gpu_name",
          "gpu_total_memory_mb", "torch_version", "cuda_runtime", "batch_size", "distinct_samples",
          "warmup_forwards", "repetitions_per_sample", "timed_forwards", "dataset_revision",
          "code_sha", "container_image", "concurrent_host_load", "profiled_at_utc", "flops_note")
assert len(ROSTER) == 20 and len(FIELDS) == 38


def finite_positive(v):
    """An int or float (never a bool) that is finite and above 0."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return math.isfinite(float(v)) and float(v) > 0


def check(root, allow_incomplete_flops):
    errors, rows = [], []
    for task, model in ROSTER:
        path = os.path.join(root, task, model + ".json")
        if not os.path.exists(path):
            errors.append(f"{model}: missing {path}")
            continue
        with open(path) as f:
            row = json.load(f)
        if row.get("model") != model or row.get("task") != task:
            errors.append(f"{model}: identity mismatch in {path}")
            continue
        for key in ("params_total", "latency_p50_ms_per_sample"):
            if not finite_positive(row.get(key)):
                errors.append(f"{model}: invalid {key}={row.get(key)!r}")
        if not finite_positive(row.get("flops_per_sample")):
            note = f"{model}: FLOPs unavailable (status={row.get('flop_status', 'missing')})"
            if not allow_incomplete_flops:
                errors.append(note)
            row["flops_note"] = note
        rows.append(row)
    return errors, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description="Validate and combine RPX depth hardware-profile JSON files.")
    ap.add_argument("--input-root", required=True)
    ap.add_argument("--output-csv", required=True)
    ap.add_argument("--validation-json", required=True)
    ap.add_argument("--allow-incomplete-flops", action="store_true")
    a = ap.parse_args(argv)
    errors, rows = check(a.input_root, a.allow_incomplete_flops)
    rows.sort(key=lambda r: (r.get("task"), r.get("model")))
    os.makedirs(os.path.dirname(os.path.abspath(a.output_csv)), exist_ok=True)
    with open(a.output_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    validation = {"expected_models": len(ROSTER), "profiles_found": len(rows),
                  "headline_fields": list(HEADLINE), "errors": errors,
                  "status": "PASS" if not errors else "FAIL"}
    text = json.dumps(validation, indent=2) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(a.validation_json)), exist_ok=True)
    with open(a.validation_json, "w") as f:
        f.write(text)
    print(text, end="")
    print(f"CSV: {a.output_csv}")
    if errors:
        raise SystemExit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
