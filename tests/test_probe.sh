#!/usr/bin/env bash
# tests/test_probe.sh — kc-probe (issue 21) end to end:
#  1. parity with an independent PyTorch implementation (tests/ref/probe_ref.py, given kc-probe's
#     initial head and epoch orders): the head within 1e-3 of max|W|, every epoch's loss within 1e-4
#     relative, the mIoU within 0.05 points; on the shared real data (DAVIS frames as a two-class set
#     at square224, the VOC photos with their 21-class labels at square448), and at full protocol
#     size (batch 60, 25 epochs, generated scenes) with KC_FULL=1.  Skipped (naming the packages)
#     without python3-torch / -h5py / -pil / -numpy, or without ../shared/data.
#  2. a head in PyTorch's layout (weight (C, D, 1, 1)) is scored like kc-probe's own;
#  3. a kill resumes to the same bytes; 1 and 2 threads give the same bytes;
#  4. bad input: one line each, exit 1, nothing written.
source "$(dirname "$0")/lib.sh"
export KC_QUIET=1 OMP_WAIT_POLICY=PASSIVE SOURCE_DATE_EPOCH=1764547200
B=$(cd "$BUILD" && pwd)
T=$(cd "$(tmpdir probe)" && pwd)
ROOT=$(pwd)
W=$ROOT/tests/data/vit/dino.pth
SH=$KC_SHARED_DATA
PY=/usr/bin/python3
have_torch=0
kc_missing py:torch py:h5py py:PIL py:numpy; torch_missing=$MISSING   # tests/ref/probe_ref.py's
[ -z "$torch_missing" ] && have_torch=1
ext() { "$B"/kc-extract --weights "$W" --heads 2 --features tokens "$@" >/dev/null 2>"$T/ext.err" || bad "kc-extract $*: $(tail -n 1 "$T/ext.err")"; }

# ---- 1. parity with PyTorch on real data --------------------------------------------------------
parity() { # name, then the reference's arguments; kc-probe's outputs are $T/$name.*
  local name=$1; shift
  local out
  if out=$($PY tests/ref/probe_ref.py "$@" 2>&1); then ok; else bad "$name: parity with PyTorch: $out"; fi
  sed "s/^/$name: /" <<<"$out"
}
if [ ! -d "$SH" ]; then
  skip "shared data absent: no parity on real photos"
else
  ext --dataset "davis:$SH/davis:val" --policy square224 --out "$T/davis.h5"
  "$B"/kc-probe train --features "$T/davis.h5" --labels "davis:$SH/davis:val" --classes 2 --epochs 5 --drop-at 3 \
    --out "$T/dv.safetensors" --trace "$T/dv-trace" 2>"$T/err" || bad "davis train: $(cat "$T/err")"
  "$B"/kc-probe eval --head "$T/dv.safetensors" --features "$T/davis.h5" --labels "davis:$SH/davis:val" --out "$T/dv-eval" \
    --ledger "$T/ledger.tsv" 2>"$T/err" || bad "davis eval: $(cat "$T/err")"
  ext --dataset "voc:$SH/voc_labelme:val" --policy square448 --out "$T/labelme.h5"
  ext --dataset "voc:$SH/voc_official:train" --policy square448 --out "$T/official.h5"
  "$B"/kc-probe train --features "$T/labelme.h5" --labels "voc:$SH/voc_labelme:val" --batch 2 --lr 0.05 --epochs 8 \
    --drop-at 6 --out "$T/voc.safetensors" --trace "$T/voc-trace" 2>"$T/err" || bad "voc train: $(cat "$T/err")"
  "$B"/kc-probe eval --head "$T/voc.safetensors" --features "$T/official.h5" --labels "voc:$SH/voc_official:train" \
    --out "$T/voc-eval" --ledger "$T/ledger.tsv" 2>"$T/err" || bad "voc eval: $(cat "$T/err")"
  [ "$(grep -c . "$T/ledger.tsv")" = 3 ] && ok || bad "two evals, yet the ledger has $(grep -c . "$T/ledger.tsv") lines (header + 2)"
  head -n 1 "$T/voc-eval/iou.csv" | grep -qx 'class,name,iou,tp,fp,fn' && head -n 1 "$T/voc-eval/summary.csv" | grep -qx 'miou,classes,pixels' \
    && ok || bad "eval headers: $(head -n 1 "$T/voc-eval/iou.csv") / $(head -n 1 "$T/voc-eval/summary.csv")"
  if [ $have_torch = 1 ]; then
    echo 2007_000063 >"$T/official-ids.txt"
    parity davis --trace "$T/dv-trace" --features "$T/davis.h5" --labels "$SH/davis" --kind davis --classes 2 --epochs 5 \
      --drop-at 3 --head "$T/dv.safetensors" --loss "$T/dv.loss.csv" --val-features "$T/davis.h5" \
      --val-ids "$T/dv-trace/ids.txt" --val-labels "$SH/davis" --val-kind davis --summary "$T/dv-eval/summary.csv"
    # --eval-size full: at each frame's own 854x480
    "$B"/kc-probe eval --head "$T/dv.safetensors" --features "$T/davis.h5" --labels "davis:$SH/davis:val" --out "$T/dv-full" \
      --eval-size full --ledger "$T/ledger-full.tsv" 2>"$T/err" || bad "davis eval full: $(cat "$T/err")"
    parity davis-full --trace "$T/dv-trace" --features "$T/davis.h5" --labels "$SH/davis" --kind davis --classes 2 --epochs 5 \
      --drop-at 3 --head "$T/dv.safetensors" --loss "$T/dv.loss.csv" --val-features "$T/davis.h5" --val-full \
      --val-ids "$T/dv-trace/ids.txt" --val-labels "$SH/davis" --val-kind davis --summary "$T/dv-full/summary.csv"
    parity voc --trace "$T/voc-trace" --features "$T/labelme.h5" --labels "$SH/voc_labelme" --batch 2 --lr 0.05 --epochs 8 \
      --drop-at 6 --size 448 --head "$T/voc.safetensors" --loss "$T/voc.loss.csv" --val-features "$T/official.h5" \
      --val-ids "$T/official-ids.txt" --val-labels "$SH/voc_official" --summary "$T/voc-eval/summary.csv"
    # ---- 2. a head in PyTorch's layout, (C, D, 1, 1) -------------------------------------------
    $PY - "$T/voc.safetensors" "$T/torch-layout.safetensors" <<'EOF'
import json, struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", d[:8])[0]
h = json.loads(d[8:8 + n])
h.pop("__metadata__", None)
h["weight"]["shape"] = h["weight"]["shape"] + [1, 1]
s = json.dumps(h, separators=(",", ":")).encode()
s += b" " * (-len(s) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(s)) + s + d[8 + n:])
EOF
    "$B"/kc-probe eval --head "$T/torch-layout.safetensors" --features "$T/official.h5" --labels "voc:$SH/voc_official:train" \
      --out "$T/voc-eval4" --ledger "$T/ledger.tsv" 2>"$T/err" && cmp -s "$T/voc-eval/iou.csv" "$T/voc-eval4/iou.csv" \
      && ok || bad "a (C, D, 1, 1) head: $(cat "$T/err")"
  else
    skip "parity with PyTorch: $torch_missing not installed (make deps-ref)"
  fi
fi

# ---- KC_FULL=1: the protocol at full size (batch 60, 25 epochs, lr x0.1 from 20) on 600 scenes ----
if [ "${KC_FULL:-0}" = 1 ] && [ $have_torch = 1 ]; then
  F=$T/full
  "$B"/kc-demo-data --out "$F" --train 600 --val 60 --videos 1 --frames 3 >/dev/null 2>&1 || bad "kc-demo-data (full)"
  ext --dataset "voc:$F/voc:train" --policy square224 --out "$T/full-train.h5"
  ext --dataset "voc:$F/voc:val" --policy square224 --out "$T/full-val.h5"
  "$B"/kc-probe train --features "$T/full-train.h5" --labels "voc:$F/voc:train" --out "$T/full.safetensors" --trace "$T/full-trace" \
    2>"$T/err" || bad "full train: $(cat "$T/err")"
  "$B"/kc-probe eval --head "$T/full.safetensors" --features "$T/full-val.h5" --labels "voc:$F/voc:val" --out "$T/full-eval" \
    --ledger "$T/ledger.tsv" 2>"$T/err" || bad "full eval: $(cat "$T/err")"
  parity full --trace "$T/full-trace" --features "$T/full-train.h5" --labels "$F/voc" --head "$T/full.safetensors" \
    --loss "$T/full.loss.csv" --val-features "$T/full-val.h5" --val-ids "$F/voc/ImageSets/Segmentation/val.txt" \
    --val-labels "$F/voc" --summary "$T/full-eval/summary.csv"
elif [ "${KC_FULL:-0}" = 1 ]; then
  skip "full-size parity: $torch_missing not installed (make deps-ref)"
fi

# ---- generated scenes: resume, threads, bad input --------------------------------------------------
D=$T/demo
"$B"/kc-demo-data --out "$D" --train 40 --val 8 --videos 1 --frames 3 >/dev/null 2>&1 || bad "kc-demo-data"
ext --dataset "voc:$D/voc:train" --policy square224 --out "$T/train.h5"
ext --dataset "voc:$D/voc:val" --policy square224 --out "$T/val.h5"
TRAIN=(--features "$T/train.h5" --labels "voc:$D/voc:train" --batch 8 --epochs 60 --drop-at 50)
"$B"/kc-probe train "${TRAIN[@]}" --out "$T/clean.safetensors" 2>"$T/err" || bad "train: $(cat "$T/err")"
# ---- 3. a SIGKILL mid-run, then the same command: the same bytes -------------------------------
"$B"/kc-probe train "${TRAIN[@]}" --out "$T/killed.safetensors" 2>/dev/null &
pid=$!
for _ in $(seq 400); do [ -e "$T/killed.safetensors.partial/checkpoint.safetensors" ] && break; sleep 0.005; done
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
if [ -e "$T/killed.safetensors" ]; then skip "the run finished before its kill"; else
  [ -e "$T/killed.safetensors.partial/checkpoint.safetensors" ] && ok || bad "no checkpoint after the kill"
  KC_QUIET=0 "$B"/kc-probe train "${TRAIN[@]}" --out "$T/killed.safetensors" 2>"$T/resume.err" || bad "resume: $(tail -n 1 "$T/resume.err")"
  grep -q "resuming after epoch" "$T/resume.err" && ok || bad "the rerun did not resume: $(head -n 3 "$T/resume.err")"
  # the command line differs in --out only: compare the tensors' bytes (the data after the header)
  tail_bytes() { local n; n=$(od -An -t u8 -N 8 "$1" | tr -d ' '); tail -c +$((n + 9)) "$1" | sha256sum; }
  [ "$(tail_bytes "$T/killed.safetensors")" = "$(tail_bytes "$T/clean.safetensors")" ] && cmp -s "$T/killed.loss.csv" "$T/clean.loss.csv" \
    && ok || bad "the resumed head or losses differ from a clean run's"
  [ ! -e "$T/killed.safetensors.partial" ] && ok || bad "the partial folder stayed"
fi
# ---- 1 and 2 threads -------------------------------------------------------------------------------
OMP_NUM_THREADS=1 "$B"/kc-probe train "${TRAIN[@]}" --out "$T/one.safetensors" 2>"$T/err" || bad "1 thread: $(cat "$T/err")"
OMP_NUM_THREADS=2 "$B"/kc-probe train "${TRAIN[@]}" --out "$T/two.safetensors" 2>"$T/err" || bad "2 threads: $(cat "$T/err")"
[ "$(tail_bytes "$T/one.safetensors")" = "$(tail_bytes "$T/two.safetensors")" ] && ok || bad "1 and 2 threads give different heads"
"$B"/kc-probe eval --head "$T/clean.safetensors" --features "$T/val.h5" --labels "voc:$D/voc:val" --out "$T/eval" \
  --ledger "$T/l.tsv" 2>"$T/err" || bad "eval: $(cat "$T/err")"
echo "demo scenes, 60 epochs: final loss $(tail -n 1 "$T/clean.loss.csv" | cut -d, -f3), val mIoU $(tail -n 1 "$T/eval/summary.csv")"

# ---- 4. bad input: one line, exit 1, nothing written ------------------------------------------------
nothing_written() { [ ! -e "$1" ] && [ ! -e "$1.partial" ] && [ ! -e "${1%.safetensors}.loss.csv" ]; }
bad_train() { # what, regex, kc-probe train arguments (out: $T/bad.safetensors)
  local what=$1 re=$2; shift 2
  expect_fail "$what" "$re" "$B"/kc-probe train "$@" --out "$T/bad.safetensors"
  nothing_written "$T/bad.safetensors" && ok || bad "$what: something was written"
  local n; n=$("$B"/kc-probe train "$@" --out "$T/bad.safetensors" 2>&1 >/dev/null | grep -c .)
  [ "$n" = 1 ] && ok || bad "$what: $n lines on stderr"
}
cp -r "$D/voc" "$T/badvoc"
first=$(head -n 1 "$T/badvoc/ImageSets/Segmentation/train.txt")
rm "$T/badvoc/SegmentationClass/$first.png"
bad_train "a missing label" "SegmentationClass/$first.png: no label file for image $first" --features "$T/train.h5" \
  --labels "voc:$T/badvoc:train" --batch 8
cp "$D/voc/SegmentationClass/$(sed -n 2p "$D/voc/ImageSets/Segmentation/train.txt").png" "$T/badvoc/SegmentationClass/$first.png"
bad_train "a label of another size" "$first.png: label of [0-9]+x[0-9]+, but its image $first is" --features "$T/train.h5" \
  --labels "voc:$T/badvoc:train" --batch 8
cp "$D/voc/SegmentationClass/$first.png" "$T/badvoc/SegmentationClass/$first.png"
if need "the class-22 case (labels written by Pillow)" py:PIL py:numpy; then
  # labels with a class id 22 (written with Pillow)
  mkdir -p "$T/badvoc/SegmentationClass22"
  $PY - "$D/voc/SegmentationClass" "$T/badvoc/SegmentationClass22" <<'EOF'
import os, sys
import numpy as np
from PIL import Image
for f in os.listdir(sys.argv[1]):
    a = np.asarray(Image.open(os.path.join(sys.argv[1], f))).copy()
    a[0, 0] = 22
    Image.fromarray(a, mode="L").save(os.path.join(sys.argv[2], f))
EOF
  bad_train "a class above 20" "class id 22 is above 20" --features "$T/train.h5" --labels "voc:$T/badvoc:train" --batch 8 \
    --label-dir SegmentationClass22
fi
ext --dataset "voc:$D/voc:train" --policy square480 --out "$T/train480.h5"
bad_train "tokens at another size than --size" "policy square480 \(480 pixels\), but --size 224" --features "$T/train480.h5" \
  --labels "voc:$D/voc:train" --batch 8 --size 224
mkdir -p "$T/void/SegmentationClass"
cp -r "$D/voc/JPEGImages" "$D/voc/ImageSets" "$T/void/"
for f in "$D"/voc/SegmentationClass/*.png; do cp "$f" "$T/void/SegmentationClass/"; done
if need "the all-void split case (labels written by Pillow)" py:PIL py:numpy; then
  $PY - "$T/void/SegmentationClass" <<'EOF'
import os, sys
import numpy as np
from PIL import Image
for f in os.listdir(sys.argv[1]):
    p = os.path.join(sys.argv[1], f)
    a = np.full(np.asarray(Image.open(p)).shape, 255, np.uint8)
    Image.fromarray(a, mode="L").save(p)
EOF
  bad_train "a split without a valid pixel" "no valid pixel in the split" --features "$T/train.h5" --labels "voc:$T/void:train" --batch 8
fi
# a damaged checkpoint: refused with its reason and the folder to remove
mkdir -p "$T/damaged.safetensors.partial"
echo junk >"$T/damaged.safetensors.partial/checkpoint.safetensors"
expect_fail "a damaged checkpoint" "checkpoint.safetensors: truncated safetensors file \(5 bytes\); remove .*damaged.safetensors.partial to start over" \
  "$B"/kc-probe train "${TRAIN[@]}" --out "$T/damaged.safetensors"
[ ! -e "$T/damaged.safetensors" ] && [ -e "$T/damaged.safetensors.partial/checkpoint.safetensors" ] && ok \
  || bad "a refused checkpoint: the head was written or the checkpoint went"
# train and val caches of different networks
"$B"/kc-extract --weights "$ROOT/tests/data/vit/selfpatch.pth" --heads 2 --features tokens --dataset "voc:$D/voc:val" --policy square224 \
  --out "$T/val-other.h5" >/dev/null 2>&1 || bad "extract with the other network"
expect_fail "val tokens of another network" "val-other.h5: tokens of another network \(weights sha256 [0-9a-f]+\) than the head" \
  "$B"/kc-probe eval --head "$T/clean.safetensors" \
  --features "$T/val-other.h5" --labels "voc:$D/voc:val" --out "$T/bad-eval" --ledger "$T/l2.tsv"
[ ! -e "$T/bad-eval" ] && [ ! -e "$T/l2.tsv" ] && ok || bad "a refused eval wrote something"
expect_fail "weights of a ViT as a head" "no tensor 'weight'" "$B"/kc-probe eval --head "$ROOT/tests/data/vit/dino.safetensors" \
  --features "$T/val.h5" --labels "voc:$D/voc:val" --out "$T/bad-eval" --ledger "$T/l2.tsv"
[ ! -e "$T/bad-eval" ] && ok || bad "a refused eval wrote something"
done_tests
