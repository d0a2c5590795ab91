#!/bin/sh
# run_fuzz.sh BUILD_DIR SECONDS — run each libFuzzer target for SECONDS
# (bounded by -max_total_time), starting from a seed corpus that numpy writes
# (tests/fixtures/make_npz_fixtures.py: good and bad NPZ/NPY files).
# Exits non-zero if a target crashes; the crashing input is kept in
# BUILD_DIR/fuzz-artifacts/.
#
#   CC=clang cmake -S . -B build-fuzz -DRPX_FUZZ=ON && cmake --build build-fuzz -j2
#   tests/fuzz/run_fuzz.sh build-fuzz 20
set -eu

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [SECONDS]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
SECONDS_EACH=${2:-20}
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=${RPX_PYTHON:-/usr/bin/python3}
ART="$BUILD/fuzz-artifacts"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rpx_fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM

for t in fuzz_npy_header fuzz_npz fuzz_cost fuzz_gpu_spec fuzz_manifest fuzz_report fuzz_redact \
         fuzz_html_inputs; do
    if [ ! -x "$BUILD/$t" ]; then
        echo "$BUILD/$t is missing: configure with CC=clang -DRPX_FUZZ=ON and build" >&2
        exit 2
    fi
done

# Seeds: whole files for fuzz_npz (small ones, so mutations stay fast), and
# every NPY stream (files and zip members, header plus a little data) for
# fuzz_npy_header.
"$PYTHON" "$HERE/../fixtures/make_npz_fixtures.py" "$WORK/fixtures" >/dev/null
mkdir -p "$WORK/npz" "$WORK/npy" "$ART"
"$PYTHON" - "$WORK/fixtures" "$WORK/npz" "$WORK/npy" <<'PY'
import os, shutil, sys, zipfile
src, npz_dir, npy_dir = sys.argv[1:4]
n = 0
for sub in ("good", "bad"):
    for name in sorted(os.listdir(os.path.join(src, sub))):
        path = os.path.join(src, sub, name)
        data = open(path, "rb").read()
        if len(data) <= 65536:
            shutil.copy(path, os.path.join(npz_dir, sub + "_" + name))
        streams = [data]
        if zipfile.is_zipfile(path):
            try:
                with zipfile.ZipFile(path) as zf:
                    streams = [zf.read(i) for i in zf.infolist()[:8]]
            except Exception:
                streams = []
        for s in streams:
            with open(os.path.join(npy_dir, "seed%04d" % n), "wb") as f:
                f.write(s[:4096])
            n += 1
PY
echo "seeds: $(ls "$WORK/npz" | wc -l) files for fuzz_npz, $(ls "$WORK/npy" | wc -l) streams for fuzz_npy_header"

# Seeds for fuzz_cost: small good and bad ONNX models the onnx package writes.
"$PYTHON" "$HERE/../fixtures/onnx/make_onnx_fixtures.py" "$WORK/onnx_fixtures" >/dev/null
mkdir -p "$WORK/onnx"
for f in "$WORK"/onnx_fixtures/good/*.onnx "$WORK"/onnx_fixtures/bad/*.onnx; do
    cp "$f" "$WORK/onnx/$(basename "$(dirname "$f")")_$(basename "$f")"
done
echo "seeds: $(ls "$WORK/onnx" | wc -l) models for fuzz_cost"

# Seeds for fuzz_gpu_spec: user spec files, valid and not.
mkdir -p "$WORK/spec"
printf '%s' '{"gpus": [{"key": "lab-gpu", "name": "Lab GPU", "memory_gb": 48, "memory_bandwidth_gbps": 1000, "peak_tflops": {"fp32": 50, "fp16": 100}}]}' >"$WORK/spec/valid.json"
printf '%s' '{"gpus": [{"key": "h100-sxm", "name": "Override", "memory_bandwidth_gbps": 3000, "peak_tflops": {"fp16": {"tensor": 900, "vector": 120}, "int8": null}, "sm_count": 132, "source": "x"}]}' >"$WORK/spec/override.json"
printf '%s' '{"gpus": [{"key": "", "memory_bandwidth_gbps": -1}]}' >"$WORK/spec/invalid.json"
echo "seeds: $(ls "$WORK/spec" | wc -l) spec files for fuzz_gpu_spec"

# Seeds for fuzz_manifest: kept in the repo. For fuzz_report: real reports that
# this build's rpxprof writes (a complete one, a crashed one, an interrupted one).
mkdir -p "$WORK/manifest" "$WORK/report"
cp "$HERE"/seeds/manifest/*.json "$WORK/manifest/"
"$BUILD/rpxprof" inputs make "$WORK/in.npz" rgb=8x8x3:uint8=1 >/dev/null
"$BUILD/rpxprof" run --model rpxprof-demo:demo_depth --inputs "$WORK/in.npz" --warmup 1 \
    --repeats 20 --quiet --flops 1e6 --params 10 --output "$WORK/report/complete.json" >/dev/null
"$BUILD/rpxprof" run --model rpxprof-demo:demo_noop --inputs "$WORK/in.npz" --warmup 0 \
    --repeats 3 --quiet --output "$WORK/report/small.json" >/dev/null
echo "seeds: $(ls "$WORK/manifest" | wc -l) manifests, $(ls "$WORK/report" | wc -l) reports"

# Seeds for fuzz_redact: --model texts with credentials in every place a URL holds them.
mkdir -p "$WORK/redact"
i=0
for s in 'https://user:pass@api.example.com/v1/depth?api_key=K&n=1#access_token=T' \
         'http://u:p@ss/#?@h:8080/x;token=A' 'HTTP://h/p?sig=1;pwd=2' './libm.so:f' \
         'my_model:predict_depth' 'ftp://a@b/c:d' 'http://[::1]:80/p?q'; do
    printf '%s' "$s" >"$WORK/redact/seed$i"; i=$((i + 1))
done

# Seeds for fuzz_html_inputs: a report, a comparison and an aggregate folder's
# files, cut by "\n--8<--\n" (tests/fuzz/fuzz_html_inputs.c).
mkdir -p "$WORK/html" "$WORK/batch/t" "$WORK/agg"
cp "$WORK/report/small.json" "$WORK/batch/t/m.json"
"$BUILD/rpxprof" aggregate "$WORK/batch" --out-dir "$WORK/agg" --allow-incomplete-flops -q >/dev/null || true
"$BUILD/rpxprof" compare "$WORK/report/small.json" "$WORK/report/complete.json" --json \
    >"$WORK/html/compare.json" || true
"$PYTHON" - "$WORK" <<'PY'
import os, sys
w = sys.argv[1]
def read(p):
    try:
        return open(os.path.join(w, p), "rb").read()
    except OSError:
        return b""
cut = b"\n--8<--\n"
svg = read("agg/figure.svg").replace(b"<!-- rpxprof figure -->\n", b"")
agg = [read("agg/validation.json"), read("agg/summary.csv"), svg]
for name, first in (("small", read("report/small.json")), ("compare", read("html/compare.json"))):
    open(os.path.join(w, "html", name + ".seed"), "wb").write(cut.join([first] + agg))
open(os.path.join(w, "html", "hostile.seed"), "wb").write(cut.join([
    b'{"schema":"rpxprof.profile/1","target_kind":"<script>x</script>","latency":{"p50_ms":1}}',
    b'{"schema":"rpxprof.validation/1","status":"PASS"}', b'a,b\n"<i>",1\n',
    b'<svg><script>alert(1)</script><g onload="x"><text>&amp;<![CDATA[<b>]]></text></g></svg>']))
PY
rm -f "$WORK/html/compare.json"
echo "seeds: $(ls "$WORK/html" | wc -l) inputs for fuzz_html_inputs"

status=0
run() { # target corpus max_len
    echo "== $1: ${SECONDS_EACH}s"
    if "$BUILD/$1" -max_total_time="$SECONDS_EACH" -max_len="$3" -timeout=20 -rss_limit_mb=4096 \
        -artifact_prefix="$ART/$1-" -print_final_stats=1 "$2" >"$WORK/$1.log" 2>&1; then
        grep -E "^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$WORK/$1.log" || true
        echo "== $1: no crash"
    else
        rc=$?
        tail -n 60 "$WORK/$1.log"
        echo "== $1: FAILED (exit $rc); artifacts in $ART" >&2
        status=1
    fi
}
run fuzz_npy_header "$WORK/npy" 4096
run fuzz_npz "$WORK/npz" 65536
run fuzz_cost "$WORK/onnx" 65536
run fuzz_gpu_spec "$WORK/spec" 4096
run fuzz_manifest "$WORK/manifest" 4096
run fuzz_report "$WORK/report" 65536
run fuzz_redact "$WORK/redact" 1024
run fuzz_html_inputs "$WORK/html" 65536
rm -rf /tmp/rpx_fuzz_report.* /tmp/rpx_fuzz_html.*
exit $status
