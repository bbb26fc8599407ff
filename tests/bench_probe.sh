#!/usr/bin/env bash
# tests/bench_probe.sh — kc-probe's training speed (issue 21): one epoch over 10,582 images of
# 196 tokens x 384 (the trainaug set at square224, synthetic values) for kc-probe and for the
# PyTorch reference on the same cached tokens in the same run; then kc-probe's whole 25-epoch
# training, its peak memory (GNU time's maximum resident set) and the CPU model.
# BENCH_PROBE_IMAGES=N changes the image count.  Targets on 2 cores: >= 3x PyTorch's epoch, the
# 25 epochs under 5 minutes, peak memory under 1.5 GB.
set -u -o pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
N=${BENCH_PROBE_IMAGES:-10582}
DIR=$B/bench-probe-$N
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
if [ ! -e "$DIR/tokens.h5" ]; then
  rm -rf "$DIR"
  t0=$(date +%s.%N)
  "$B"/tests/bench_probe "$DIR" "$N" || exit 1
  # kc-probe reads no image, but a voc: dataset lists them: one small JPEG, linked under every id
  jpg=$(ls tests/data/image/synth/*.jpg | head -n 1)
  while read -r id; do ln -f "$jpg" "$DIR/voc/JPEGImages/$id.jpg"; done <"$DIR/voc/ImageSets/Segmentation/trainaug.txt"
  echo "synthetic data: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s, tokens.h5 $(du -h "$DIR/tokens.h5" | cut -f1)"
fi
export KC_QUIET=0
TIME=/usr/bin/time
[ -x $TIME ] || TIME=
run() { # epochs -> kc-probe's line and its peak memory
  local e=$1
  rm -rf "$DIR/head-$e.safetensors"*
  if [ -n "$TIME" ]; then
    $TIME -v "$B"/kc-probe train --features "$DIR/tokens.h5" --labels "voc:$DIR/voc:trainaug" --epochs "$e" --drop-at "$((e < 20 ? e : 20))" \
      --out "$DIR/head-$e.safetensors" 2>"$DIR/probe-$e.log"
  else
    "$B"/kc-probe train --features "$DIR/tokens.h5" --labels "voc:$DIR/voc:trainaug" --epochs "$e" --drop-at "$((e < 20 ? e : 20))" \
      --out "$DIR/head-$e.safetensors" 2>"$DIR/probe-$e.log"
  fi
  grep -E 'wrote|epoch 1 of|error' "$DIR/probe-$e.log" | sed 's/^/  /'
  grep -E 'Maximum resident' "$DIR/probe-$e.log" | sed 's/^\s*/  /'
}
t0=$(date +%s.%N)
echo "kc-probe, 1 epoch (labels read and resized included):"
run 1
k1=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
echo "  wall: $k1 s"
if /usr/bin/python3 -c 'import torch, h5py' 2>/dev/null; then
  /usr/bin/python3 tests/ref/probe_bench_torch.py "$DIR/tokens.h5" "$DIR/voc" trainaug 1 2>&1 | sed 's/^/  /' | tee "$DIR/torch.log"
  te=$(grep -o 'epoch 1: [0-9.]*' "$DIR/torch.log" | awk '{print $3}')
  ke=$(grep -o 'train: [0-9]* images in [0-9.]*s' "$DIR/probe-1.log" | grep -o '[0-9.]*s$' | tr -d s)
  [ -n "$te" ] && [ -n "$ke" ] && echo "epoch: kc-probe $ke s, PyTorch $te s: $(awk -v a="$te" -v b="$ke" 'BEGIN { printf "%.2f", a / b }')x (target >= 3x)"
else
  echo "  (python3-torch or python3-h5py missing: no PyTorch baseline; make deps-ref)"
fi
t0=$(date +%s.%N)
echo "kc-probe, 25 epochs (the protocol):"
run 25
echo "  wall: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s (target < 300 s)"
