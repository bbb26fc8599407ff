#!/usr/bin/env bash
# tests/bench_refine.sh — kc-refine per image (dense CRF at 480x480, bilateral solver at 480x480 and
# at a VOC photo's own size), beside the NumPy/SciPy references of tests/ref/refine_ref.py run on the
# same image in the same run (the SciPy solver is TokenCut's algorithm with SciPy's cg).  Targets on
# one core (issue 22): CRF <= 150 ms, BS <= 15 ms per 480x480 image.  Figures only, no assertions.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DATA=${KC_SHARED_DATA:-$(cd .. && pwd)/shared/data}
PHOTO=$DATA/voc_official/JPEGImages/2007_000063.jpg
echo "== bench_refine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), one thread"
[ -f "$PHOTO" ] || { echo "bench_refine: $PHOTO absent (shared data): skipped"; exit 0; }
[ -x "$BUILD/tests/bench_refine" ] || { echo "bench_refine: $BUILD/tests/bench_refine not built" >&2; exit 1; }
OMP_NUM_THREADS=1 "$BUILD/tests/bench_refine" "$PHOTO" 5 || exit 1
if /usr/bin/python3 -c 'import numpy, scipy, PIL' 2>/dev/null; then
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 - "$PHOTO" <<'PY'
import sys, time
import numpy as np
from PIL import Image
sys.path.insert(0, "tests/ref")
import refine_ref as R
im = Image.open(sys.argv[1]).convert("RGB")
rgb480 = np.asarray(im.resize((480, 480), Image.LANCZOS))
lab = R.patch_mask(30, 30, 0) == 1
m = np.kron(lab.astype(np.uint8), np.ones((16, 16), np.uint8))
def best(f, n):
    t = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); t.append(time.perf_counter() - t0)
    return 1e3 * min(t)
print("reference: NumPy lattice CRF (tests/ref/refine_ref.py), 480x480: %.0f ms best of 2" %
      best(lambda: R.mean_field(rgb480, R.maskcut_unary(m), R.MASKCUT), 2))
for W, H, px in ((480, 480, rgb480), (im.width, im.height, np.asarray(im))):
    target = lab.astype(float)[np.arange(H)[:, None] * 30 // H, np.arange(W)[None, :] * 30 // W]
    print("reference: SciPy bilateral solver (TokenCut's algorithm, scipy cg), %dx%d: %.0f ms best of 3" %
          (W, H, best(lambda: R.bilateral_solver(px, target, 16, 16, 8), 3)))
PY
else
  echo "reference: /usr/bin/python3 without numpy/scipy/PIL: not run"
fi
