#!/usr/bin/env bash
# `make masks IMAGES=DIR` (masks.mk, issue 31): five photos made here from the shared VOC photos
# (a JPEG, a PNG of odd size, a gray JPEG, a JPEG with EXIF orientation 6, one with a space in its
# name), then: the network line (no WEIGHTS: the colour extractor, a checkpoint needed), an overlay
# per photo at its size, PNG masks at the photos' sizes equal to the cache's grid mapped to pixels
# (kc-score's rule) and COCO JSON whose RLE, decoded by the independent plain-Python reference
# (tests/ref/coco_rle_ref.py), equals each PNG; the same request again runs no stage; another
# SETTING made incrementally equals a clean run of it (overlays, PNGs, coco.json byte for byte) and
# runs only the stages after the features; a bad request is one line, nothing run.
source "$(dirname "$0")/lib.sh"
make_cmd
export KC_QUIET=1
B=$BUILD PY=/usr/bin/python3 S=$KC_SHARED_DATA
T=$(cd "$(tmpdir masks_make)" && pwd)
if [ ! -d "$S/voc_official/JPEGImages" ] || [ ! -d "$S/voc_labelme/JPEGImages" ]; then
  skip "$S/voc_official or voc_labelme missing: make masks not run"
  done_tests; exit
fi
need "make masks's photos and the plain-Python reference" py:PIL py:h5py || { done_tests; exit $?; }

# ---- five photos ----------------------------------------------------------------------------------
mkdir -p "$T/photos"
$PY - "$T/photos" "$S/voc_official/JPEGImages" "$S/voc_labelme/JPEGImages" <<'EOF' || { bad "photos"; done_tests; exit 1; }
import os, shutil, sys
from PIL import Image
out, a, b = sys.argv[1:]
src = sorted(os.path.join(a, f) for f in os.listdir(a)) + sorted(os.path.join(b, f) for f in os.listdir(b))[:3]
shutil.copy(src[0], f"{out}/a_jpeg.jpg")                                        # a JPEG as it is
im = Image.open(src[1]).convert("RGB")
im.crop((0, 0, min(im.width, 301), min(im.height, 187))).save(f"{out}/b_png.png")  # a PNG, odd size
Image.open(src[2]).convert("L").save(f"{out}/c_gray.jpg", quality=90)              # gray
exif = Image.Exif()
exif[0x0112] = 6                                                                  # EXIF orientation 6
Image.open(src[3]).convert("RGB").resize((257, 171)).save(f"{out}/d_exif6.jpg", quality=90, exif=exif)
shutil.copy(src[0], f"{out}/e with space.jpg")                                   # a space in the name
assert Image.open(f"{out}/d_exif6.jpg").getexif().get(0x0112) == 6
EOF

# the stage commands a run printed (make echoes each)
STAGE_RE="^(rm -rf [^ ]* && )?$B/kc-[a-z]+ "
stages() { grep -cE "$STAGE_RE" "$1" || true; }
stage_names() { grep -oE "$STAGE_RE" "$1" | grep -oE 'kc-[a-z]+' | tr '\n' ' '; }
run() {  # run OUT LOG [VAR=...]: make masks of the photos into OUT
  local out=$1 log=$2; shift 2
  "${M[@]}" IMAGES="$T/photos" OUT="$out" "$@" masks >"$log" 2>&1
}

# ---- the first request ---------------------------------------------------------------------------
S1=t0.15-bin-mean-corners-n3
if KC_QUIET= run "$T/inc" "$T/log1"; then ok; else bad "make masks failed: $(tail -n 3 "$T/log1")"; done_tests; exit 1; fi
if grep -q "^masks: no WEIGHTS: the no-learning colour extractor.*real masks need a checkpoint, e.g. WEIGHTS=dino_deitsmall16_pretrain.pth, setting $S1$" "$T/log1"; then ok
else bad "no line naming the network and the checkpoint: $(head -n 1 "$T/log1")"; fi
for s in kc-extract kc-center kc-decode kc-show kc-export; do
  if grep -qE "^$s: .*[0-9]+ images in" "$T/log1"; then ok; else bad "no progress line of $s"; fi
done
D=$T/inc/masks/color/$S1
CACHE=$T/inc/cache/color/images-photos
ids=("a_jpeg" "b_png" "c_gray" "d_exif6" "e with space")
sizes_ok=0
for id in "${ids[@]}"; do
  photo=$(ls "$T/photos/$id".*)
  want=$($PY -c 'import sys; from PIL import Image; print(Image.open(sys.argv[1]).size)' "$photo")
  [ -f "$D/overlays/$id.png" ] && [ "$(png_size "$D/overlays/$id.png")" = "$want" ] && \
    [ "$(png_size "$D/png/$id.png")" = "$want" ] && sizes_ok=$((sizes_ok + 1))
done
if [ $sizes_ok = 5 ]; then ok; else bad "$sizes_ok of 5 photos have an overlay and a PNG mask at their size"; fi
if grep -qx "d_exif6.png" "$D/overlays/index.txt" && [ "$(wc -l <"$D/overlays/index.txt")" = 5 ]; then ok
else bad "overlays/index.txt: $(cat "$D/overlays/index.txt" 2>&1 | head -n 6)"; fi
if r=$($PY tests/ref/coco_rle_ref.py "$D" "$T/photos" "$CACHE/masks-$S1.h5" $S1 2>&1); then ok
else bad "the reference disagrees with make masks's output: $r"; fi

# ---- the same request again: no stage --------------------------------------------------------------
run "$T/inc" "$T/log1.again" || bad "make masks again failed"
if [ "$(stages "$T/log1.again")" = 0 ]; then ok; else bad "the same request again ran: $(stage_names "$T/log1.again")"; fi

# ---- another SETTING: incremental equals clean, only the stages after the features run ---------------
S2=t0.20-bin-mean-seed-n1
run "$T/clean" "$T/log2.clean" SETTING=$S2 & cpid=$!
run "$T/inc" "$T/log2" SETTING=$S2 || bad "make masks SETTING=$S2 failed: $(tail -n 3 "$T/log2")"
wait $cpid || bad "the clean run failed: $(tail -n 3 "$T/log2.clean")"
if [ "$(stage_names "$T/log2")" = "kc-decode kc-show kc-export " ]; then ok
else bad "SETTING=$S2 after $S1 ran: $(stage_names "$T/log2")"; fi
diffs=0
files=$(cd "$T/clean/masks/color/$S2" && find . -type f | sort)
[ "$(echo "$files" | grep -c .)" = 12 ] || { diffs=$((diffs + 1)); echo "the clean run wrote: $files" >&2; }
while IFS= read -r f; do
  cmp -s "$T/clean/masks/color/$S2/$f" "$T/inc/masks/color/$S2/$f" || { diffs=$((diffs + 1)); echo "$f differs" >&2; }
done <<<"$files"
[ "$(cd "$T/inc/masks/color/$S2" && find . -type f | sort)" = "$files" ] || { diffs=$((diffs + 1)); echo "other files" >&2; }
if [ $diffs = 0 ]; then ok; else bad "SETTING=$S2: $diffs outputs differ from a clean run's"; fi
if r=$($PY tests/ref/coco_rle_ref.py "$T/inc/masks/color/$S2" "$T/photos" "$CACHE/masks-$S2.h5" $S2 2>&1); then ok
else bad "SETTING=$S2: the reference disagrees: $r"; fi
# the first setting's folder is as it was, and asking for it again runs nothing
run "$T/inc" "$T/log3" || bad "make masks back to $S1 failed"
if [ "$(stages "$T/log3")" = 0 ]; then ok; else bad "back to $S1 ran: $(stage_names "$T/log3")"; fi

# ---- a photo overwritten in place (same name, same size, other pixels): incremental equals clean ----
# (make sees the folder's list of photos with sizes and times, masks.mk's photos.tsv, not only the
# folder's own time, which an overwrite in place does not change)
$PY - "$T/photos/a_jpeg.jpg" <<'EOF' || bad "could not overwrite a photo"
import sys
from PIL import Image
p = sys.argv[1]
Image.open(p).transpose(Image.FLIP_LEFT_RIGHT).save(p, quality=90)
EOF
touch -d '2001-01-01' "$T/photos"   # the folder's own time says nothing
run "$T/inc" "$T/log4" || bad "make masks after an overwrite failed: $(tail -n 3 "$T/log4")"
run "$T/clean4" "$T/log4.clean" || bad "the clean run after the overwrite failed: $(tail -n 3 "$T/log4.clean")"
if [ "$(stage_names "$T/log4")" = "kc-extract kc-center kc-decode kc-show kc-export " ]; then ok
else bad "a photo overwritten in place ran: '$(stage_names "$T/log4")'"; fi
diffs=0
files=$(cd "$T/clean4/masks/color/$S1" && find . -type f | sort)
while IFS= read -r f; do
  cmp -s "$T/clean4/masks/color/$S1/$f" "$T/inc/masks/color/$S1/$f" || { diffs=$((diffs + 1)); echo "$f differs" >&2; }
done <<<"$files"
if [ $diffs = 0 ] && [ -n "$files" ]; then ok; else bad "after an overwrite in place: $diffs outputs differ from a clean run's"; fi

# ---- bad requests: one line, nothing run ---------------------------------------------------------
for req in "IMAGES=" "IMAGES=$T/nope" "WEIGHTS=$T/nope.pth"; do
  out=$("${M[@]}" IMAGES="$T/photos" OUT="$T/bad" "$req" masks 2>&1); rc=$?
  if [ $rc -ne 0 ] && [ "$(grep -c . <<<"$out")" = 1 ] && grep -qE "IMAGES|WEIGHTS" <<<"$out" && [ ! -e "$T/bad/cache" ]; then ok
  else bad "$req: rc=$rc: $(head -n 3 <<<"$out")"; fi
done
done_tests
