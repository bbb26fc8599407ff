#!/usr/bin/env bash
# kc-saliency end to end against tests/ref/saliency_ref.py, an independent NumPy/SciPy/torch
# reference of TokenCut's get_saliency.py, on saliency folders in the four layouts built from the
# shared data (tests/saliency_fixture.sh: real photos, real masks, read in place): kc-extract
# (saliency:ROOT, policy round) -> kc-decode (t0.20-bin-mean-seed-n1) -> kc-saliency --png --soft,
# then per image the decoder's mask (equal), the solver's soft output (1e-6) and metric.py's numbers
# on keycut's masks (1e-9), per image and per dataset.  Two networks: a random ViT-S/16 (kc-init)
# and the colour extractor.  Then the bad inputs: one line naming the file, exit 1, earlier results
# untouched.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir saliency)
T=$(cd "$T" && pwd)
export KC_QUIET=1
B=$BUILD
S=$KC_SHARED_DATA
PY=/usr/bin/python3
PYREQ="py:numpy py:scipy py:PIL py:h5py py:torch"
"$B/kc-saliency" --help | grep -q 'saliency:ROOT' && ok || bad "kc-saliency --help"
if [ ! -d "$S/davis_testdev_firstframe" ] || [ ! -d "$S/davis" ] || [ ! -d "$S/voc_labelme" ]; then
  skip "$S (davis, davis_testdev_firstframe, voc_labelme) missing: kc-saliency not run on real photos"
  done_tests; exit
fi
bash tests/saliency_fixture.sh "$S" "$T/data"
"$B/kc-init" --arch vit-s/16 --seed 7 --out "$T/vit.safetensors" >/dev/null 2>&1 || bad "kc-init"

# run NAME DATASET MODEL_ARGS...: the chain into $T/NAME
chain() {
  local name=$1 d=$2; shift 2
  local o=$T/$name
  mkdir -p "$o"
  "$B/kc-extract" "$@" --dataset "saliency:$T/data/$d" --out "$o/keys.h5" >"$o/log" 2>&1 &&
    "$B/kc-decode" --features "$o/keys.h5" --setting t0.20-bin-mean-seed-n1 --out "$o/masks.h5" >>"$o/log" 2>&1 &&
    "$B/kc-saliency" --masks "$o/masks.h5" --dataset "saliency:$T/data/$d" --out "$o/scores" --png "$o/scores/png" \
      --soft "$o/soft" --ledger "$T/ledger.tsv" >>"$o/log" 2>&1
}
for run in "vit ECSSD" "vit DUTS-TE" "color DUT-OMRON" "color tokencut"; do
  read -r net d <<<"$run"
  if [ "$net" = vit ]; then args=(--weights "$T/vit.safetensors"); else args=(--model color); fi
  if ! chain "$net-$d" "$d" "${args[@]}"; then bad "$net on $d: $(grep -i error "$T/$net-$d/log" | head -n 2)"; continue; fi
  ok
  o=$T/$net-$d
  # the layout's name, the ids in byte order, two lines per image, the PNGs at the images' sizes
  n=$(find "$T/data/$d" -mindepth 2 -name '*.jpg' | wc -l)
  want=$d; [ "$d" = tokencut ] && want=tokencut
  [ "$(sed -n 2p "$o/scores/summary.csv" | cut -d, -f3,4)" = "$want,$n" ] && ok || bad "$d: summary $(sed -n 2p "$o/scores/summary.csv")"
  [ "$(tail -n +2 "$o/scores/t0.20-bin-mean-seed-n1.csv" | wc -l)" = $((2 * n)) ] && ok || bad "$d: per-image lines"
  [ "$(tail -n +2 "$o/scores/t0.20-bin-mean-seed-n1.csv" | cut -d, -f1 | uniq | LC_ALL=C sort -c 2>&1)" = "" ] && ok || bad "$d: ids not in byte order"
  [ "$(ls "$o/scores/png" | wc -l)" = "$n" ] && ok || bad "$d: $(ls "$o/scores/png" | wc -l) PNGs for $n images"
  if need "kc-saliency against tests/ref/saliency_ref.py ($net on $d)" $PYREQ; then
    if out=$($PY tests/ref/saliency_ref.py check "$T/data/$d" "$o/keys.h5" "$o/scores" "$o/soft" "$o/scores/png" "$o/masks.h5" 2>&1); then ok
    else bad "$net on $d: $(grep -E 'MISMATCH|Error|error' <<<"$out" | head -n 4)"; fi
    echo "$net on $d:"; sed 's/^/  /' <<<"$out" | grep -v MISMATCH
  fi
done
[ "$(grep -c $'\tsaliency:' "$T/ledger.tsv")" = 4 ] && ok || bad "ledger: $(grep -c $'\tsaliency:' "$T/ledger.tsv") lines, expected 4"
# the table of the four folders (kc-table --saliency): every number is its summary's (the numbers the
# reference checked above), none and bs rows per network
dirs=(); for run in vit-ECSSD vit-DUTS-TE color-DUT-OMRON color-tokencut; do [ -f "$T/$run/scores/summary.csv" ] && dirs+=("$T/$run/scores"); done
for run in vit-ECSSD vit-DUTS-TE; do echo vit >"$T/$run/scores/network"; done
for run in color-DUT-OMRON color-tokencut; do echo color >"$T/$run/scores/network"; done
if "$B/kc-table" --saliency "${dirs[@]}" --published configs/published.ini --out "$T/tab" --ledger "$T/ledger.tsv" >/dev/null 2>"$T/tab.err"; then
  mism=0 cells=0
  for d in "${dirs[@]}"; do
    net=$(cat "$d/network")
    while IFS=, read -r _ refine ds _ mf iou acc _; do
      [ "$refine" = refine ] && continue
      row=$net; [ "$refine" = bs ] && row="$net + BS"
      for m in "max_fbeta $mf" "iou $iou" "accuracy $acc"; do
        read -r key want <<<"$m"
        got=$(awk -F, -v row="$row" -v col="${ds}_$key" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
                                                          $1 == row && c { print $c }' "$T/tab/saliency.csv")
        cells=$((cells + 1))
        awk -v a="$got" -v b="$want" 'BEGIN { exit !(a != "" && a + 0 == b + 0) }' || { mism=$((mism + 1)); echo "table $row $ds $key: $got, summary $want" >&2; }
      done
    done <"$d/summary.csv"
  done
  [ "$mism" = 0 ] && [ "$cells" = 24 ] && ok || bad "the saliency table: $mism of $cells cells differ from the summaries"
  echo "saliency table: $cells cells equal to the summaries the reference checked"
else bad "kc-table --saliency: $(head -n 2 "$T/tab.err")"; fi

# ---- bad inputs: one line naming the file, exit 1, the earlier results as they were ------------
o=$T/color-DUT-OMRON
cp -r "$o/scores" "$T/scores.before"
before_ledger=$(wc -l <"$T/ledger.tsv")
unchanged() {   # the score folder and the ledger as before the failed run
  diff -r "$T/scores.before" "$o/scores" >/dev/null && [ "$(wc -l <"$T/ledger.tsv")" = "$before_ledger" ] && ok \
    || bad "$1: the earlier results changed"
}
sal() { "$B/kc-saliency" --masks "$o/masks.h5" --out "$o/scores" --png "$o/scores/png" --ledger "$T/ledger.tsv" "$@"; }
cp -rP "$T/data/DUT-OMRON" "$T/bad1"
rm "$T/bad1/pixelwiseGT-new-PNG/car-shadow-00014.png"
expect_fail "a missing mask" "pixelwiseGT-new-PNG/car-shadow-00014.png: ground truth of .* not found" sal --dataset "saliency:$T/bad1"
unchanged "a missing mask"
cp -rP "$T/data/DUT-OMRON" "$T/bad2"
ln -sf "$S/voc_labelme/SegmentationObject/2011_000003.png" "$T/bad2/pixelwiseGT-new-PNG/blackswan-00014.png"
expect_fail "a mask of another size" "blackswan-00014.png: ground truth of 500x338 for a 854x480 image" sal --dataset "saliency:$T/bad2"
unchanged "a mask of another size"
cp -rP "$T/data/DUT-OMRON" "$T/bad3"
head -c 4000 "$S/davis/JPEGImages/480p/blackswan/00000.jpg" >"$T/bad3/truncated.jpg"
rm "$T/bad3/DUT-OMRON-image/blackswan-00000.jpg"; cp "$T/bad3/truncated.jpg" "$T/bad3/DUT-OMRON-image/blackswan-00000.jpg"
expect_fail "a truncated image" "blackswan-00000.jpg" sal --dataset "saliency:$T/bad3"
unchanged "a truncated image"
expect_fail "masks of another folder" "masks of 6 images, but saliency:$T/data/ECSSD has 8" sal --dataset "saliency:$T/data/ECSSD"
expect_fail "not a saliency dataset" "kc-saliency scores a saliency:ROOT dataset" sal --dataset "dir:$T/data/ECSSD/images"
expect_fail "a solver constant out of range" "--bs-sigma-luma must be in \[1, 1e4\) \(got 0\)" sal --dataset "saliency:$T/data/DUT-OMRON" --bs-sigma-luma 0
expect_fail "a solver constant that is not a number" "--bs-lambda: 'x' is not a number" sal --dataset "saliency:$T/data/DUT-OMRON" --bs-lambda x
expect_fail "a setting the cache lacks" "no setting 't0.10-bin-mean-seed-n1'" sal --dataset "saliency:$T/data/DUT-OMRON" --setting t0.10-bin-mean-seed-n1
"$B/kc-extract" --model color --dataset "voc:$S/voc_labelme:val" --out "$T/voc-keys.h5" >/dev/null 2>&1 &&
  "$B/kc-decode" --features "$T/voc-keys.h5" --setting t0.20-bin-mean-seed-n1 --out "$T/voc-masks.h5" >/dev/null 2>&1
expect_fail "masks of a VOC dataset" "masks of a voc dataset" "$B/kc-saliency" --masks "$T/voc-masks.h5" --dataset "saliency:$T/data/DUT-OMRON" --out "$o/scores" --ledger "$T/ledger.tsv"
unchanged "masks of other datasets"
mkdir -p "$T/none" "$T/two/img" "$T/two/images" "$T/nogt/DUTS-TE-Image" "$T/empty/img" "$T/empty/gt"
expect_fail "no layout" "$T/none: no saliency layout found" sal --dataset "saliency:$T/none"
expect_fail "two layouts" "$T/two: holds two saliency layouts" sal --dataset "saliency:$T/two"
expect_fail "no mask folder" "$T/nogt/DUTS-TE-Mask: ground-truth folder not found" sal --dataset "saliency:$T/nogt"
expect_fail "an empty dataset" "has no images" sal --dataset "saliency:$T/empty"
unchanged "bad datasets"
# --png on a folder holding other files than PNGs: refused, the folder untouched
mkdir -p "$T/mine"; echo notes >"$T/mine/notes.txt"
expect_fail "--png on a folder of the user's" "$T/mine: holds notes.txt, not a picture of kc-saliency" \
  "$B/kc-saliency" --masks "$o/masks.h5" --dataset "saliency:$T/data/DUT-OMRON" --out "$T/mine-scores" --png "$T/mine" --ledger "$T/ledger.tsv"
[ -f "$T/mine/notes.txt" ] && [ ! -e "$T/mine-scores/summary.csv" ] && ok || bad "--png on a folder of the user's: the folder or the scores changed"
# an image whose bytes changed since extraction: refused by the hash kc-extract recorded
cp -rP "$T/data/DUT-OMRON" "$T/bad4"
rm "$T/bad4/DUT-OMRON-image/car-shadow-00028.jpg"
ln -s "$S/davis/JPEGImages/480p/car-shadow/00008.jpg" "$T/bad4/DUT-OMRON-image/car-shadow-00028.jpg"
expect_fail "an image changed since extraction" "car-shadow-00028.jpg: changed since extraction" sal --dataset "saliency:$T/bad4"
unchanged "an image changed since extraction"
# a side below half a patch: kc-extract names the image
mkdir -p "$T/tiny/img" "$T/tiny/gt"
$PY -c "from PIL import Image; Image.new('RGB', (7, 40)).save('$T/tiny/img/a.png'); Image.new('L', (7, 40)).save('$T/tiny/gt/a.png')" 2>/dev/null \
  && expect_fail "an image narrower than half a patch" "a.png: image of 7x40 has a side below half a 16-pixel patch" \
       "$B/kc-extract" --model color --dataset "saliency:$T/tiny" --out "$T/tiny.h5"

echo "test_saliency: ${SECONDS}s"
[ "$T_FAIL" != 0 ] || rm -rf "$T"
done_tests
