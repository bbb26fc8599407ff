# tests/test_corloc.sh — box-only CorLoc (kc-score --boxes-only / --coco) against the independent
# NumPy reference tests/ref/corloc_ref.py (its outputs are committed in tests/data/corloc), the
# coco: and VOC detection-split datasets, the COCO box cache, and bad input.
# The VOC parts read ../shared/data in place (skipped when missing); KC_FULL=1 also reruns the
# reference script and checks that it reproduces the committed outputs.
source "$(dirname "$0")/lib.sh"
S=$BUILD/kc-score X=$BUILD/kc-extract
D=tests/data/corloc C=tests/data/corloc/coco
T=$(tmpdir test_corloc)
L=$T/ledger.tsv

# same_images EXPECTED DIR: every (setting, id) of EXPECTED has the same corloc in DIR/<setting>.csv,
# the CSVs hold no other image, jaccard is empty, and summary.csv's corloc is the mean.
same_images() {
  local exp=$1 dir=$2
  awk -F, 'FNR==NR { if (FNR>1) { want[$1","$2]=$3; n[$1]++; hits[$1]+=$3 } next }
           FILENAME ~ /summary.csv$/ { if (FNR>1) { got_sum[$1]=$4; got_n[$1]=$2 } next }
           FNR==1 { next }
           { k=$2","$1; seen++; if (!(k in want)) { print "unexpected " k; bad=1 }
             else if (want[k] != $4) { print "differs " k ": keycut " $4 ", reference " want[k]; bad=1 }
             if ($3 != "") { print "jaccard not empty for " k; bad=1 } }
           END { m=0; for (k in want) m++; if (seen != m) { print seen " rows, reference has " m; bad=1 }
                 for (s in n) { d = got_sum[s] - hits[s]/n[s]; if (d < 0) d = -d;
                   if (!(s in got_sum) || got_n[s] != n[s] || d > 1e-9) { print "summary of " s; bad=1 } }
                 printf "%d images x settings agree\n", seen; exit bad }' \
      "$exp" "$dir/summary.csv" $(ls "$dir"/t0.*.csv)
}

# 1. COCO layout: crowd boxes, odd xywh, polygons and RLE skipped, an unlisted image
if $S --coco $C --split $C/list.txt --masks $D/masks_coco.h5 --out $T/coco --ledger $L --box-cache $T/cache \
     --network ref 2>$T/err1; then ok; else bad "kc-score --coco: $(cat $T/err1)"; fi
if same_images $D/expected_coco.csv $T/coco; then ok; else bad "COCO CorLoc differs from corloc_ref.py"; fi
grep -q "1 listed images have only crowd boxes" $T/err1 && ok || bad "no warning about the crowd-only image: $(cat $T/err1)"
n_cache=$(ls $T/cache/coco-boxes-*.tsv 2>/dev/null | wc -l)
[ "$n_cache" -eq 1 ] && ok || bad "$n_cache box cache files"
# the second run reads the cache (same results, nothing rewritten)
touch -d '2001-01-01' $T/cache/coco-boxes-*.tsv
if $S --coco $C --split $C/list.txt --masks $D/masks_coco.h5 --out $T/coco2 --ledger $L --box-cache $T/cache 2>$T/err2 &&
   ! grep -q "wrote the COCO box cache" $T/err2 && [ -z "$(find $T/cache -newer $T/coco -name '*.tsv')" ] &&
   cmp -s $T/coco/summary.csv $T/coco2/summary.csv; then ok; else bad "cached run: $(cat $T/err2)"; fi
# a damaged cache is ignored and rewritten
echo garbage >$T/cache/coco-boxes-*.tsv
if $S --coco $C --split $C/list.txt --masks $D/masks_coco.h5 --out $T/coco3 --ledger $L --box-cache $T/cache 2>$T/err3 &&
   cmp -s $T/coco/summary.csv $T/coco3/summary.csv && grep -q "does not fit" $T/err3; then ok; else bad "damaged cache: $(cat $T/err3)"; fi
[ "$(grep -c $'\tref\t' $L)" -eq 1 ] && [ "$(wc -l <$L)" -eq 4 ] && ok || bad "ledger: $(cat $L)"

# the table of `make corloc` (configs/corloc-table.sh): our row from the summary, the published rows
mkdir -p $T/tab/ref/coco20k && cp -r $T/coco $T/tab/ref/coco20k/scores-t0.20-bin-mean-seed-n1
# (the CSV at full precision: 100 x the summary's fraction, which %.9g of a hundredth gives back;
# Markdown and LaTeX at 0.1)
frac=$(awk -F, '$1=="t0.20-bin-mean-seed-n1" { print $4 }' $T/coco/summary.csv)
want=$(awk -F, '$1=="t0.20-bin-mean-seed-n1" { printf "%.1f", 100*$4 }' $T/coco/summary.csv)
if configs/corloc-table.sh $T/tables configs/published-corloc.ini t0.20-bin-mean-seed-n1 $T/tab ref 2>$T/err &&
   full=$(awk -F, '$1 == "\"ref\"" && $2 == "t0.20-bin-mean-seed-n1" && $3 == "" && $4 == "" && $6 == "\"keycut\"" { print $5 }' \
          $T/tables/corloc.csv) &&
   [ -n "$full" ] && [ "$(awk -v v="$full" 'BEGIN { printf "%.9g", v / 100 }')" = "$frac" ] &&
   grep -q '^"TokenCut ViT-S/16 (published)",published,68.8,72.1,58.8,' $T/tables/corloc.csv &&
   grep -q '^| LOST ViT-S/16 (published) | published | 61.9 | 64.0 | 50.7 |$' $T/tables/corloc.md &&
   grep -qxF "ref & t0.20-bin-mean-seed-n1 & -- & -- & $want \\\\" $T/tables/corloc.tex
then ok; else bad "corloc table: $(cat $T/err; cat $T/tables/corloc.csv $T/tables/corloc.tex)"; fi
# the CSV keeps every digit of the summary (a fraction of many digits, one in exponent form), the
# Markdown rounds
mkdir -p $T/tab2/net/voc07/scores-s1 $T/tab2/net/coco20k/scores-s1
printf 'setting,images,jaccard,corloc\ns1,4952,,0.688311688\n' > $T/tab2/net/voc07/scores-s1/summary.csv
printf 'setting,images,jaccard,corloc\ns1,19817,,5.04617248e-05\n' > $T/tab2/net/coco20k/scores-s1/summary.csv
if configs/corloc-table.sh $T/tables2 configs/published-corloc.ini s1 $T/tab2 net 2>$T/err &&
   grep -qx '"net",s1,68.8311688,,0.00504617248,"keycut"' $T/tables2/corloc.csv &&
   grep -qx '| net | s1 | 68.8 |  | 0.0 |' $T/tables2/corloc.md
then ok; else bad "corloc table at full precision: $(cat $T/err $T/tables2/corloc.csv $T/tables2/corloc.md)"; fi

# 2. the coco: dataset (ids = file names without extension, list order)
if $X --model color --dataset coco:$C:$C/list.txt --policy native16 --out $T/k.h5 2>$T/err; then ok; else bad "kc-extract coco: $(cat $T/err)"; fi
# 3. bad input: one clear line, nothing written
cp -r $C $T/c2
J=$T/c2/annotations/instances_train2014.json
head -c 3000 $C/annotations/instances_train2014.json >$J
expect_fail "truncated JSON" "c2/annotations/instances_train2014.json: bad JSON: truncated" \
  $S --coco $T/c2 --split $C/list.txt --masks $D/masks_coco.h5 --out $T/bad1 --ledger $L
/usr/bin/env sed 's/"file_name": "COCO_train2014_000000100017.jpg", //' $C/annotations/instances_train2014.json >$J
expect_fail "images without file_name" "instances_train2014.json: images\[1\] has no file_name" \
  $S --coco $T/c2 --split $C/list.txt --masks $D/masks_coco.h5 --out $T/bad2 --ledger $L
cp $C/annotations/instances_train2014.json $J
echo train2014/COCO_train2014_000000100102.jpg >$T/unannotated.txt
expect_fail "listed image without annotations" "COCO_train2014_000000100102.jpg \(id 100102\) has no entry in 'annotations'" \
  $S --coco $T/c2 --split $T/unannotated.txt --masks $D/masks_coco.h5 --out $T/bad3 --ledger $L
echo train2014/COCO_train2014_000000999999.jpg >$T/ghost.txt
expect_fail "listed image not in images" "COCO_train2014_000000999999.jpg has no entry in 'images'" \
  $S --coco $T/c2 --split $T/ghost.txt --masks $D/masks_coco.h5 --out $T/bad4 --ledger $L
[ ! -e $T/bad1 ] && [ ! -e $T/bad2 ] && [ ! -e $T/bad3 ] && [ ! -e $T/bad4 ] && [ "$(wc -l <$L)" -eq 4 ] && ok \
  || bad "a failed run wrote something"

# 4. VOC (real XML read in place): all objects, --no-hard, a detection split
for set in voc_official voc_labelme; do
  V=$KC_SHARED_DATA/$set
  if [ ! -d "$V" ]; then skip "$V missing"; continue; fi
  sp=$V/ImageSets/Segmentation/train.txt; [ -f $sp ] || sp=$V/ImageSets/Segmentation/val.txt
  if $S --boxes-only --masks $D/masks_$set.h5 --voc $V --split $sp --out $T/$set --ledger $L 2>$T/err; then ok
  else bad "kc-score $set: $(cat $T/err)"; fi
  if same_images $D/expected_$set.csv $T/$set; then ok; else bad "$set CorLoc differs from corloc_ref.py"; fi
  if $S --boxes-only --no-hard --masks $D/masks_$set.h5 --voc $V --split $sp --out $T/$set-nh --ledger $L 2>$T/err; then ok
  else bad "kc-score --no-hard $set: $(cat $T/err)"; fi
  if same_images $D/expected_${set}_nohard.csv $T/$set-nh; then ok; else bad "$set --no-hard differs from corloc_ref.py"; fi
done
V=$KC_SHARED_DATA/voc_official
if [ -d "$V" ]; then
  mkdir -p $T/v07/ImageSets/Main
  for d in Annotations JPEGImages; do ln -s $V/$d $T/v07/$d; done
  cp $V/ImageSets/Segmentation/train.txt $T/v07/ImageSets/Main/trainval.txt
  if $X --model color --dataset voc:$T/v07:trainval --policy native16 --out $T/v07.h5 2>$T/err; then ok
  else bad "kc-extract on a detection split: $(cat $T/err)"; fi
  echo 2007_000064 >>$T/v07/ImageSets/Main/trainval.txt
  expect_fail "detection split naming a missing XML" "Annotations/2007_000064.xml: annotation file missing" \
    $S --boxes-only --masks $D/masks_voc_official.h5 --voc $T/v07 --split $T/v07/ImageSets/Main/trainval.txt --out $T/bad5 --ledger $L
else
  skip "$V missing"
fi

# 5. full check: the reference script reproduces the committed outputs
if [ "${KC_FULL:-0}" = 1 ] && [ -d "$KC_SHARED_DATA/voc_official" ]; then
  if ! need "tests/ref/corloc_ref.py rerun" py:numpy py:h5py py:PIL; then :
  elif /usr/bin/python3 tests/ref/corloc_ref.py --shared $KC_SHARED_DATA --out $T/ref >$T/err 2>&1 &&
     for f in $D/expected_*.csv $C/annotations/instances_train2014.json $C/list.txt; do cmp -s $f $T/ref/${f#$D/} || exit 1; done
  then ok; else bad "corloc_ref.py does not reproduce tests/data/corloc: $(cat $T/err)"; fi
else
  skip "KC_FULL=1 reruns tests/ref/corloc_ref.py"
fi
done_tests
