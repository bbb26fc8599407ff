#!/usr/bin/env bash
# tests/bench_vit.sh — keys of ViT-S/16 at 480x480: keycut's forward, PyTorch as a user runs it,
# PyTorch at its best, and one large sgemm, in the same run.  Figures only, no assertions.
# The machine may be shared: numbers are noisy; each line gives mean and best.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
IMAGES=${BENCH_IMAGES:-5}
THREADS=${OMP_NUM_THREADS:-$(nproc)}
echo "== bench_vit: ViT-S/16 keys at 480x480, $THREADS threads (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
if [ ! -x "$BUILD/tests/bench_vit" ]; then echo "bench_vit: $BUILD/tests/bench_vit not built" >&2; exit 1; fi
OMP_NUM_THREADS=$THREADS "$BUILD/tests/bench_vit" --images "$IMAGES"
# the other way to share the cores, for comparison: products on OpenBLAS's own pthread pool,
# OpenMP (passive waiting) for the rest
echo "-- alternative threading (KC_VIT_THREADING=openblas, OMP_WAIT_POLICY=PASSIVE):"
KC_VIT_THREADING=openblas OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=$THREADS "$BUILD/tests/bench_vit" --images "$IMAGES" | grep -E '^keycut'
echo "-- keycut again (the machine may be shared; compare the best figures):"
OMP_NUM_THREADS=$THREADS "$BUILD/tests/bench_vit" --images "$IMAGES" | grep -E '^(keycut|sgemm|forward)'
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  # as a user runs it: default environment and threads
  env -u OMP_NUM_THREADS -u OMP_WAIT_POLICY /usr/bin/python3 tests/ref/vit_ref.py bench user 480 "$IMAGES"
  # at its best: 2 threads, passive waiting (otherwise OpenMP spins against OpenBLAS's threads)
  OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 tests/ref/vit_ref.py bench best 480 "$IMAGES"
else
  echo "pytorch: not importable with /usr/bin/python3 (apt-get install python3-torch); skipped"
fi
