#!/usr/bin/env bash
# tests/bench_saliency.sh — the time per image of TokenCut's saliency protocol on one core: keycut's
# kc-extract (ViT-S/16 keys at policy round), kc-decode (t0.20-bin-mean-seed-n1) and kc-saliency (the
# mask to the image, the bilateral solver, metric.py's scores), each with OMP_NUM_THREADS=1, beside
# the same steps in Python with TokenCut's libraries (tests/ref/saliency_bench.py: PIL, torch,
# scipy) measured in the same run, on the shared data's real photos laid out as ECSSD (8 of the
# DAVIS test-dev first frames, 854 to 1301 x 480) by tests/saliency_fixture.sh.  Prints the CPU.
# Asserts nothing.
set -u -o pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
S=${KC_SHARED_DATA:-$(cd .. && pwd)/shared/data}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; every timing below on 1 thread"
if [ ! -d "$S/davis_testdev_firstframe" ]; then echo "bench_saliency: $S absent: skipped"; exit 0; fi
T=$B/bench-saliency
rm -rf "$T"; mkdir -p "$T"
bash tests/saliency_fixture.sh "$S" "$T/data"
R=$T/data/ECSSD
n=$(ls "$R/images" | wc -l)
"$B/kc-init" --arch vit-s/16 --seed 0 --out "$T/vit.safetensors" >/dev/null 2>&1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 KC_QUIET=1
t() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>"$T/err" || { cat "$T/err" >&2; return 1; }; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.0f", 1000 * (b - a) / n }'; }
e=$(t "$B/kc-extract" --weights "$T/vit.safetensors" --dataset "saliency:$R" --out "$T/keys.h5") || exit 1
d=$(t "$B/kc-decode" --features "$T/keys.h5" --setting t0.20-bin-mean-seed-n1 --out "$T/masks.h5") || exit 1
s=$(t "$B/kc-saliency" --masks "$T/masks.h5" --dataset "saliency:$R" --out "$T/scores" --ledger "$T/ledger.tsv") || exit 1
echo "keycut (1 thread): $((e + d + s)) ms/image over $n images: kc-extract $e (decode, resize, ViT-S/16 keys), kc-decode $d, kc-saliency $s (solver and scores)"
if /usr/bin/python3 -c 'import torch, scipy, PIL' 2>/dev/null; then
  /usr/bin/python3 tests/ref/saliency_bench.py "$R"
else
  echo "python: torch, scipy or PIL not importable with /usr/bin/python3 (make deps-ref): the baseline is skipped"
fi
rm -rf "$T"
