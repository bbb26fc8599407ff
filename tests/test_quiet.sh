#!/usr/bin/env bash
# tests/test_quiet.sh — the quiet choices say so, once per run, in one line (issue 31 items 5, 6):
# a dir: dataset names what it skipped (other extensions, subfolders); JPEGs with an EXIF orientation
# other than 1 are counted and the first named (their pixels read as stored); the list: rules are in
# the --help of every stage that takes a dataset; kc-score's --split takes a split name as
# kc-extract's voc:ROOT:NAME does; counts of one are singular; kc-report's rates have 3 significant
# digits.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir test_quiet)
T=$(cd "$T" && pwd)
BUILD=$(cd "$BUILD" && pwd)   # (kc-score runs from inside $T below)
PY=/usr/bin/python3

"$BUILD/kc-demo-data" --out "$T/data" >/dev/null 2>&1 || bad "kc-demo-data"
V=$T/data/voc
mapfile -t IDS <"$V/ImageSets/Segmentation/val.txt"

# ---- dir: says what it skipped, in one line -------------------------------------------------
mkdir -p "$T/dir/sub"
cp "$V/JPEGImages/${IDS[0]}.jpg" "$V/JPEGImages/${IDS[1]}.jpg" "$T/dir/"
touch "$T/dir/a.webp" "$T/dir/b.webp" "$T/dir/notes.txt" "$T/dir/.hidden"
err=$("$BUILD/kc-extract" --model color --dataset "dir:$T/dir" --out "$T/dir.h5" 2>&1 >/dev/null)
line=$(grep -c "skipped" <<<"$err")
if [ "$line" = 1 ] && grep -qF "dir:$T/dir: skipped 3 files of other extensions (2 .webp, 1 .txt; only .jpg .jpeg .png are read) and 1 subfolder (dir: does not look inside folders)" <<<"$err"
then ok; else bad "dir: skipped files not said in one line: $err"; fi
# nothing skipped, nothing said
rm -rf "$T/dir/sub" "$T/dir/"*.webp "$T/dir/notes.txt"
err=$("$BUILD/kc-extract" --model color --dataset "dir:$T/dir" --out "$T/dir2.h5" 2>&1 >/dev/null)
if ! grep -q "skipped" <<<"$err"; then ok; else bad "dir: with nothing to skip said: $err"; fi

# ---- EXIF orientation: counted, the first named, one warning line ---------------------------
if need "JPEGs with an EXIF orientation made with PIL" py:PIL; then
  mkdir -p "$T/exif"
  $PY - "$V/JPEGImages" "$T/exif" "${IDS[@]:0:4}" <<'EOF'
import sys
from PIL import Image
src, dst, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
for k, (i, o) in enumerate(zip(ids, (6, 1, 3, 8))):
    im = Image.open(f"{src}/{i}.jpg")
    ex = Image.Exif()
    ex[0x0112] = o
    im.save(f"{dst}/{chr(97 + k)}.jpg", exif=ex.tobytes(), quality=90)
EOF
  err=$("$BUILD/kc-extract" --model color --dataset "dir:$T/exif" --out "$T/exif.h5" 2>&1 >/dev/null)
  want="kc-extract: warning: 3 images carry an EXIF orientation other than 1 (first: $T/exif/a.jpg, orientation 6); keycut, like the reference code, reads pixels as stored"
  if [ "$(grep -c EXIF <<<"$err")" = 1 ] && grep -qxF "$want" <<<"$err"; then ok; else bad "EXIF orientation line: $err"; fi
  rm "$T/exif/a.jpg" "$T/exif/c.jpg"
  err=$("$BUILD/kc-extract" --model color --dataset "dir:$T/exif" --out "$T/exif1.h5" 2>&1 >/dev/null)
  want="kc-extract: warning: 1 image carries an EXIF orientation other than 1 ($T/exif/d.jpg, orientation 8); keycut, like the reference code, reads pixels as stored"
  if grep -qxF "$want" <<<"$err"; then ok; else bad "EXIF orientation line for one image: $err"; fi
  # the demo's JPEGs have none: nothing said
  if ! grep -q EXIF <<<"$("$BUILD/kc-extract" --model color --dataset "voc:$V:val" --out "$T/keys.h5" 2>&1)"; then ok
  else bad "EXIF line without EXIF"; fi
fi

# ---- the list: rules in every --help that takes a dataset ----------------------------------
for s in kc-extract kc-refine kc-show kc-report; do
  h=$("$BUILD/$s" --help 2>&1)
  if grep -q "list:FILE: one image path a line, relative to FILE's folder unless absolute;" <<<"$h" &&
     grep -q "an image's id is its file name without the extension" <<<"$h"; then ok
  else bad "$s --help does not give the list: rules"; fi
done

# ---- kc-score --split NAME, as voc:ROOT:NAME ------------------------------------------------
[ -s "$T/keys.h5" ] || "$BUILD/kc-extract" --model color --dataset "voc:$V:val" --out "$T/keys.h5" 2>/dev/null
"$BUILD/kc-decode" --features "$T/keys.h5" --setting t0.15-bin-mean-corners-n1 --out "$T/m.h5" 2>/dev/null || bad "kc-decode"
"$BUILD/kc-score" --masks "$T/m.h5" --voc "$V" --split "$V/ImageSets/Segmentation/val.txt" --out "$T/s-path" --ledger "$T/l.tsv" 2>/dev/null ||
  bad "kc-score --split FILE"
if (cd "$T" && "$BUILD/kc-score" --masks m.h5 --voc "$V" --split val --out s-name --ledger l.tsv 2>err-name) &&
   cmp -s "$T/s-name/t0.15-bin-mean-corners-n1.csv" "$T/s-path/t0.15-bin-mean-corners-n1.csv"; then ok
else bad "kc-score --split val (a name): $(cat "$T/err-name" 2>/dev/null)"; fi
expect_fail "kc-score --split of no such name" "ImageSets/Segmentation/nope.txt" \
  "$BUILD/kc-score" --masks "$T/m.h5" --voc "$V" --split nope --out "$T/s-nope" --ledger "$T/l.tsv"

# ---- counts of one are singular; rates have 3 significant digits ---------------------------
mkdir -p "$T/one" && cp "$V/JPEGImages/${IDS[0]}.jpg" "$T/one/"
err=$("$BUILD/kc-extract" --model color --dataset "dir:$T/one" --out "$T/one.h5" 2>&1 >/dev/null)
if grep -q "extract: 1 image in " <<<"$err" && grep -qF "wrote $T/one.h5 (1 image, keys)" <<<"$err"; then ok
else bad "kc-extract on one image: $err"; fi
err=$("$BUILD/kc-show" --masks "$T/m.h5" --setting t0.15-bin-mean-corners-n1 --images "voc:$V:val" --first 1 --out "$T/show1" 2>&1)
if grep -q "show: 1 image in " <<<"$err" && grep -q "kc-show: 1 overlay of " <<<"$err"; then ok; else bad "kc-show --first 1: $err"; fi
err=$("$BUILD/kc-plot" voc-grid --voc "$V" --split val --setting t0.15-bin-mean-corners-n1 --masks color="$T/m.h5" --first 1 \
        --out "$T/fig1" 2>&1)
if grep -q ": 1 image x 1 network at " <<<"$err"; then ok; else bad "kc-plot voc-grid, one image, one network: $err"; fi
err=$("$BUILD/kc-report" --out "$T/rep" --scores color="$T/s-path" --masks color="$T/m.h5" --images "voc:$V:val" 2>&1)
rate=$(sed -nE 's/.*report: [0-9]+ images? in [^ ]+ \(([0-9.]+) images\/s\).*/\1/p' <<<"$err")
sig=$(tr -d . <<<"$rate" | sed -E 's/^0+//; s/0+$//')
if [ -n "$rate" ] && [ "${#sig}" -le 3 ] && grep -q "1 table\b\|0 tables, 1 gallery of 16 images" <<<"$err"; then ok
else bad "kc-report's rate '$rate' (3 significant digits) or counts: $err"; fi

done_tests
