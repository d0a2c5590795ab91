#!/bin/sh
# bench_npz_load.sh BUILD_DIR [WORK_DIR] [REPS] — make a 1 GiB uncompressed NPZ
# with numpy (np.savez: one 1 GiB uint8 array plus two small ones) unless it
# exists, then run BUILD_DIR/bench_npz_load on it (page cache warm, read()
# and rpx_npz_load measured in the same run, median of REPS).
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [WORK_DIR] [REPS]" >&2
    exit 2
fi
BUILD=$1
WORK=${2:-${TMPDIR:-/tmp}/rpx_bench}
REPS=${3:-7}
PYTHON=${RPX_PYTHON:-/usr/bin/python3}
FILE="$WORK/bench_1gib.npz"
mkdir -p "$WORK"
if [ ! -s "$FILE" ]; then
    "$PYTHON" - "$FILE" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(2)
frames = rng.integers(0, 256, size=(256, 1024, 1024, 4), dtype=np.uint8)  # 1 GiB
np.savez(sys.argv[1] + ".tmp.npz", frames=frames,
         intrinsics=np.eye(3, dtype=np.float32), timestamps=np.arange(256, dtype=np.int64))
PY
    mv "$FILE.tmp.npz" "$FILE"
fi
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -n1), $(nproc) cores"
"$BUILD/bench_npz_load" "$FILE" "$REPS"
