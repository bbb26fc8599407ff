#!/usr/bin/env bash
# tests/test_attn_real.sh — DINO's attention baseline end to end on the REAL VOC photos of
# $KC_SHARED_DATA (voc_official: its train split, voc_labelme: its val split) with a seeded
# ViT-S/16 (tests/ref/parity_real.py model: vit_ref.make_params seed 11, depth 12, 6 heads, class
# token, final norm): kc-extract --features keys,attn -> kc-decode --kind attn (attn-mass0.60) ->
# kc-score, against tests/ref/attn_ref.py check (class attention from torch primitives to 1e-4 of
# max |ref|; the 60 % masks with 0 differing patches except counted knife edges; DINO's best-head
# Jaccard and the per-head foreground Jaccard per pixel to 1e-9, per image and in summary.csv).
# SKIP (naming the Debian packages) without torch/h5py/PIL/numpy in /usr/bin/python3, or without the
# shared data.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
S=$KC_SHARED_DATA
need "attention baseline parity" py:numpy py:h5py py:PIL py:torch || { done_tests; exit; }
if [ ! -f "$S/voc_official/ImageSets/Segmentation/train.txt" ] || [ ! -f "$S/voc_labelme/ImageSets/Segmentation/val.txt" ]; then
  skip "attention baseline parity: shared VOC data absent ($S)"
  done_tests; exit
fi
for p in kc-extract kc-decode kc-score; do
  [ -x "$BUILD/$p" ] || { bad "attention baseline parity: $BUILD/$p not built"; done_tests; exit; }
done
T=$(tmpdir attn_real)
export KC_QUIET=1
t0=$SECONDS
if $PY tests/ref/parity_real.py model "$T/vits16.pth" --depth 12 >"$T/model.log" 2>&1; then ok
else bad "parity_real.py model: $(tail -n 3 "$T/model.log")"; done_tests; exit; fi
for set in voc_official:train voc_labelme:val; do
  name=${set%%:*} split=$S/$name/ImageSets/Segmentation/${set#*:}.txt
  if "$BUILD/kc-extract" --weights "$T/vits16.pth" --dataset "voc:$S/$name:${set#*:}" --features keys,attn \
       --out "$T/$name.h5" 2>"$T/err" &&
     "$BUILD/kc-decode" --features "$T/$name.h5" --kind attn --setting attn-mass0.60 --out "$T/$name-masks.h5" 2>>"$T/err" &&
     "$BUILD/kc-score" --masks "$T/$name-masks.h5" --voc "$S/$name" --split "$split" --out "$T/$name-scores" \
       --ledger "$T/ledger.tsv" 2>>"$T/err"; then
    ok
  else
    bad "$name: extract / decode / score failed: $(tail -n 2 "$T/err")"; continue
  fi
  if OMP_NUM_THREADS=2 $PY tests/ref/attn_ref.py check --weights "$T/vits16.pth" --voc "$S/$name" --split "$split" \
       --features "$T/$name.h5" --masks "$T/$name-masks.h5" --scores "$T/$name-scores" >"$T/$name.log" 2>&1; then
    ok
  else
    bad "$name: kc differs from tests/ref/attn_ref.py (see the MISMATCH lines)"
  fi
  sed "s/^/  $name: /" "$T/$name.log"
done
echo "total: $((SECONDS - t0)) s"
if [ "$T_FAIL" -eq 0 ]; then rm -rf "$T"; else rm -f "$T/vits16.pth"; echo "outputs kept in $T"; fi
done_tests
