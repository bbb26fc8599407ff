#!/usr/bin/env bash
# tests/bench_score.sh — kc-score on 144 settings x 1,000 generated images of 500x375 (target: under
# 60 s on 2 cores), beside a NumPy baseline doing the same per-pixel work on a subset, scaled.
# Figures only, no assertions.  The machine may be shared: numbers are noisy.
# BENCH_SCORE_IMAGES / BENCH_SCORE_SETTINGS shrink the run.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${BENCH_SCORE_IMAGES:-1000}
NS=${BENCH_SCORE_SETTINGS:-144}
THREADS=${OMP_NUM_THREADS:-$(nproc)}
DIR=$BUILD/bench-data/score
echo "== bench_score: $NS settings x $N images of 500x375, square480 30x30 masks, $THREADS threads"
for p in "$BUILD/tests/bench_score" "$BUILD/kc-score"; do
  [ -x "$p" ] || { echo "bench_score: $p not built" >&2; exit 1; }
done
mkdir -p "$DIR"
OMP_NUM_THREADS=$THREADS "$BUILD/tests/bench_score" "$DIR" "$N" "$NS" || exit 1
rm -rf "$DIR/out" "$DIR/ledger.tsv"
t0=$(date +%s.%N)
OMP_NUM_THREADS=$THREADS KC_QUIET=0 "$BUILD/kc-score" --masks "$DIR/masks.h5" --voc "$DIR" --split "$DIR/split.txt" \
  --out "$DIR/out" --ledger "$DIR/ledger.tsv" 2>"$DIR/kc-score.log" || { cat "$DIR/kc-score.log" >&2; exit 1; }
t1=$(date +%s.%N)
grep -E 'ground truth:|score:' "$DIR/kc-score.log" | sed 's/^/  /'
printf 'kc-score end to end (read GT PNG+XML, read %d masks from HDF5, score, write CSVs): %.1f s  (target < 60 s)\n' \
  $((N * NS)) "$(echo "$t1 - $t0" | bc -l)"
if /usr/bin/python3 -c 'import numpy, h5py, PIL' 2>/dev/null; then
  SUB=${BENCH_SCORE_SUBSET:-10}
  /usr/bin/python3 - "$DIR" "$SUB" "$N" <<'EOF'
import sys, time, os
import numpy as np, h5py
from PIL import Image
sys.path.insert(0, "tests/ref")
import voc_ref
d, sub, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ids = open(os.path.join(d, "split.txt")).read().split()[:sub]
t0 = time.time()
with h5py.File(os.path.join(d, "masks.h5"), "r") as f:
    settings = sorted(f["masks"].keys())
    for i in ids:
        obj = np.array(Image.open(os.path.join(d, "SegmentationObject", i + ".png")))
        boxes = voc_ref.read_xml(os.path.join(d, "Annotations", i + ".xml"))
        for s in settings:
            lab = f["masks"][s][i][()]
            voc_ref.jaccard_corloc(obj, boxes, "square480", 16, lab)
t = time.time() - t0
print("numpy baseline (per-pixel, 1 thread): %.2f s for %d images x %d settings -> %.0f s scaled to %d images"
      % (t, len(ids), len(settings), t * n / len(ids), n))
EOF
else
  echo "numpy baseline: /usr/bin/python3 lacks numpy/h5py/PIL (make deps-ref); skipped"
fi
