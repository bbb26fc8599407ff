#!/usr/bin/env bash
# make bench: the normalized-cut decoder's speed, with SciPy's generalized solver in the same run
# as the baseline (scipy.linalg.eigh(D - W, D, subset_by_index=[1, 2]) on the same 900-node graph).
# Machine load from other jobs makes the numbers noisy; run it on a quiet machine for the record.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
B=$BUILD/tests/bench_ncut
[ -x "$B" ] || { echo "bench_ncut: $B not built"; exit 1; }
export OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
T=$BUILD/bench-tmp/ncut; mkdir -p "$T"
PY=/usr/bin/python3
if $PY -c 'import numpy, scipy' 2>/dev/null; then
  # a keys-like 30x30 image: structured features with a common offset (as uncentred ViT keys)
  $PY - "$T" <<'PYEOF'
import sys, time, numpy as np, scipy.linalg
T = sys.argv[1]
rng = np.random.default_rng(3)
yy, xx = np.mgrid[0:30, 0:30]
obj = ((yy - 15) ** 2 + (xx - 12) ** 2 < 60).reshape(-1)
f = 0.8 * rng.standard_normal((900, 64)) + 0.6
f[obj, :16] += 1.5
f[yy.reshape(-1) < 8, 16:32] += 1.0
f = f.astype(np.float32)
f.tofile(T + "/feats.f32")
fn = (f / np.linalg.norm(f, axis=1, keepdims=True)).astype(np.float32)
S = fn @ fn.T
# a keys-like image from the parity data (case 5 of tests/data/ncut/inputs.bin: centred keys of a
# real VOC photo through a random projection): a half-dense graph with a large eigengap
import struct
blob = open("tests/data/ncut/inputs.bin", "rb").read(); off = 0
for case in range(6):
    gh, gw, dim = struct.unpack("<3i", blob[off:off + 12]); off += 12
    c = np.frombuffer(blob[off:off + gh * gw * dim * 4], np.float32).reshape(gh * gw, dim); off += gh * gw * dim * 4
c.tofile(T + "/centred.f32")
cn = (c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-30)).astype(np.float32)
Sc = cn @ cn.T
for name, SS, tau in (("noisy", S, 0.10), ("noisy", S, 0.20), ("centred keys-like", Sc, 0.10)):
    W = np.where(SS > np.float32(tau), 1.0, 1e-5); d = W.sum(1); D = np.diag(d)
    reps, t0 = 5, time.perf_counter()
    for _ in range(reps): w, v = scipy.linalg.eigh(D - W, D, subset_by_index=[1, 2])
    print("scipy eigh(D - W, D, subset_by_index=[1, 2]) %s n=900 tau=%.2f: %.3f ms  (lambda2 %.9g, x 12 = %.0f ms for a 144-grid budget)"
          % (name, tau, 1e3 * (time.perf_counter() - t0) / reps, w[0], 12e3 * (time.perf_counter() - t0) / reps))
PYEOF
  echo "noisy keys-like features with a common offset (near-complete graphs):"
  for tau in 0.10 0.20; do OMP_NUM_THREADS=1 "$B" eigen "$T/feats.f32" 900 64 $tau 50; done
  OMP_NUM_THREADS=2 "$B" grid "$T/feats.f32" 30 30 64 5
  echo "centred keys-like features (parity case 5):"
  OMP_NUM_THREADS=1 "$B" eigen "$T/centred.f32" 900 32 0.10 50
  OMP_NUM_THREADS=2 "$B" grid "$T/centred.f32" 30 30 32 5
  echo "the cosine matrix S (ViT-S keys: 900 x 384), fixed-order kernels beside oneDNN's float32 product:"
  OMP_NUM_THREADS=1 "$B" cosine 900 384 20
  echo "structured synthetic features (built in):"; OMP_NUM_THREADS=2 "$B" synth
else
  echo "bench_ncut: no numpy/scipy, SciPy baseline skipped"
  OMP_NUM_THREADS=2 "$B" synth
fi
