#!/usr/bin/env bash
# tests/test_attn_cli.sh — the attention baseline's command lines on the tiny fixtures
# (tests/data/vit/dino.pth with 2 heads, tests/data/voc/tiny): kc-extract --features attn (also
# keys,attn), kc-decode --kind attn, kc-score's DINO scoring files, kc-table with an attention row,
# kc-show's panels, kc-merge of attention shards; and the bad inputs: attention from a network
# without a class token (--drop-cls and a SelfPatch-shaped file), --model color, --kind attn on a
# keys cache, attn-mass1.50 and other masses, keys setting on an attention cache — each one clear
# line, non-zero exit, nothing written.  The numbers themselves are checked by tests/test_attn.c
# (tiny, against PyTorch blobs) and tests/test_attn_real.sh (full size, against attn_ref.py).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
T=$(tmpdir attn_cli)
X=$BUILD/kc-extract D=$BUILD/kc-decode S=$BUILD/kc-score
V=tests/data/voc/tiny SPLIT=tests/data/voc/tiny/ImageSets/Segmentation/val.txt
W="--weights tests/data/vit/dino.pth --heads 2"
export KC_QUIET=1
nothing() { [ ! -e "$1" ] && [ ! -e "$1.partial" ] && [ ! -e "$1.tmp" ]; }

# ---- the working path ----
if $X $W --dataset voc:$V:val --features keys,attn --out $T/ka.h5 2>$T/err &&
   $X $W --dataset voc:$V:val --features attn --out $T/a.h5 2>>$T/err &&
   $D --features $T/ka.h5 --kind attn --out $T/m.h5 2>>$T/err &&
   $D --features $T/a.h5 --kind attn --setting attn-mass0.6 --out $T/m2.h5 2>>$T/err; then ok
else bad "extract / decode: $(tail -n 2 $T/err)"; fi
if need "the attention cache's layout" py:h5py py:numpy; then
/usr/bin/python3 - "$T" >$T/py.log 2>&1 <<'PY'
import sys, h5py, numpy as np
T = sys.argv[1]
ka, a, m, m2 = (h5py.File(T + n, "r") for n in ("/ka.h5", "/a.h5", "/m.h5", "/m2.h5"))
assert ka.attrs["feature_kinds"] == "keys,attn" and a.attrs["feature_kinds"] == "attn", ka.attrs["feature_kinds"]
for i in ka["index/ids"].asstr()[()]:
    x = ka["features/attn/" + i][()]
    assert x.shape == (2, 900) and x.dtype == np.float32, x.shape
    assert np.allclose(x.sum(1), 1 - np.zeros(2), atol=0.05) and (x.sum(1) < 1).all()  # the class column is dropped
    assert np.array_equal(x, a["features/attn/" + i][()])
    mk = m["masks/attn-mass0.60/" + i]
    assert mk.shape == (2, 30, 30) and mk.dtype == np.uint8 and set(np.unique(mk[()])) <= {0, 1}
    assert np.array_equal(mk[()], m2["masks/attn-mass0.60/" + i][()])   # 0.6 and 0.60 are one setting
    assert abs(float(mk.attrs["mass"][0]) - 0.6) < 1e-7 and "knife_edge_heads" in mk.attrs
assert list(m["masks"].keys()) == ["attn-mass0.60"] and m.attrs["feature_kind"] == "attn"
print("ok")
PY
[ "$(tail -n 1 $T/py.log)" = ok ] && ok || bad "cache layout: $(tail -n 3 $T/py.log)"
fi
if $S --masks $T/m.h5 --voc $V --split $SPLIT --out $T/s --ledger $T/ledger.tsv --network 'dino (attention 60 %)' 2>$T/err; then ok
else bad "kc-score: $(tail -n 2 $T/err)"; fi
[ "$(head -n 1 $T/s/attn-mass0.60.csv)" = "id,setting,jaccard,objects,fg_jaccard_h0,fg_jaccard_h1" ] && ok || bad "per-image header: $(head -n 1 $T/s/attn-mass0.60.csv)"
[ "$(sed -n 1p $T/s/summary.csv)" = "setting,images,jaccard,corloc" ] && grep -Eq '^attn-mass0\.60,4,0\.[0-9]+,$' $T/s/summary.csv && ok || bad "summary: $(cat $T/s/summary.csv)"
[ "$(head -n 1 $T/s/attn-mass0.60.heads.csv)" = "head,images,fg_jaccard,object_jaccard,best_fg" ] && [ "$(awk -F, 'NR>1 {s+=$5} END {print s}' $T/s/attn-mass0.60.heads.csv)" = 1 ] && ok || bad "heads.csv: $(cat $T/s/attn-mass0.60.heads.csv)"
grep -q "fg_jaccard_hH" $T/s/attn-mass0.60.columns.txt && ok || bad "columns.txt"
[ "$(wc -l <$T/ledger.tsv)" -eq 2 ] && ok || bad "one ledger line expected"
# the summary's Jaccard is the mean of the per-image column
awk -F, 'NR==FNR { if (FNR>1) { s+=$3; n++ } next } FNR==2 { d=$3-s/n; if (d<0) d=-d; exit !(d < 1e-8) }' $T/s/attn-mass0.60.csv $T/s/summary.csv && ok || bad "summary mean"
# kc-table: a keys network and the attention row; the attention row has no CorLoc
$S --masks $V/masks.h5 --voc $V --split $SPLIT --out $T/k --ledger $T/ledger.tsv --network tinynet 2>$T/err
if $BUILD/kc-table $T/k $T/s --out $T/tab --name report --only report --setting t0.20-bin-mean-seed-n1 --ledger $T/ledger.tsv >$T/tab.log 2>&1; then ok
else bad "kc-table: $(tail -n 2 $T/tab.log)"; fi
grep -Eq '^dino \(attention 60 %\),0\.[0-9]+,,baseline$' $T/tab/report.csv && ok || bad "report row: $(cat $T/tab/report.csv 2>&1)"
grep -q 'dino (attention 60 \\%)' $T/tab/report.tex && ok || bad "LaTeX row: $(grep attention $T/tab/report.tex)"
# kc-show: one panel per head (2 heads: two 64x48 panels side by side, 128x48)
if $BUILD/kc-show --masks $T/m.h5 --setting attn-mass0.60 --images voc:$V:val --out $T/show --first 1 2>$T/err &&
   [ "$(png_size $T/show/t_000001.png 2>/dev/null)" = "(128, 48)" ]; then ok
else bad "kc-show panels: $(tail -n 1 $T/err) $(ls $T/show 2>&1)"; fi
# shards: two halves merged give the same file
if $X $W --dataset voc:$V:val --features keys,attn --shard 1/2 --out $T/s1.h5 2>$T/err &&
   $X $W --dataset voc:$V:val --features keys,attn --shard 2/2 --out $T/s2.h5 2>>$T/err &&
   $BUILD/kc-merge $T/merged.h5 $T/s1.h5 $T/s2.h5 2>>$T/err &&
   $D --features $T/merged.h5 --kind attn --out $T/mm.h5 2>>$T/err &&
   $S --masks $T/mm.h5 --voc $V --split $SPLIT --out $T/sm --ledger $T/ledger.tsv 2>>$T/err &&
   cmp -s $T/s/attn-mass0.60.csv $T/sm/attn-mass0.60.csv; then ok
else bad "sharded attention: $(tail -n 2 $T/err)"; fi

# kc-center keeps the attention: decoding the centred cache gives the same masks
if $BUILD/kc-center $T/ka.h5 $T/cen.h5 2>$T/err && $D --features $T/cen.h5 --kind attn --out $T/mc.h5 2>>$T/err; then ok
else bad "kc-center then kc-decode --kind attn: $(tail -n 2 $T/err)"; fi
if need "the centred cache's attention masks compared" py:h5py py:numpy; then
  if /usr/bin/python3 -c 'import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
sys.exit(0 if all(np.array_equal(a["masks/attn-mass0.60/" + i][()], b["masks/attn-mass0.60/" + i][()]) for i in a["index/ids"].asstr()[()]) else 1)' $T/m.h5 $T/mc.h5
  then ok; else bad "kc-center then kc-decode --kind attn: other masks"; fi
fi

# ---- bad input: one line, non-zero exit, nothing written ----
expect_fail "attn with --drop-cls" "dino.pth: --features attn needs the class token's attention.*runs no class token" \
  $X $W --drop-cls --dataset voc:$V:val --features attn --out $T/bad1.h5
nothing $T/bad1.h5 && ok || bad "bad1 left files"
expect_fail "attn of a SelfPatch-shaped network" "selfpatch.pth: --features attn needs the class token's attention" \
  $X --weights tests/data/vit/selfpatch.pth --heads 2 --dataset voc:$V:val --features keys,attn --out $T/bad2.h5
nothing $T/bad2.h5 && ok || bad "bad2 left files"
expect_fail "attn of the colour model" "--features attn needs a ViT with a class token" \
  $X --model color --dataset voc:$V:val --features attn --out $T/bad3.h5
expect_fail "unknown kind" "--features: unknown kind 'attention'" $X $W --dataset voc:$V:val --features keys,attention --out $T/bad3.h5
expect_fail "twice" "--features: 'attn' listed twice" $X $W --dataset voc:$V:val --features attn,attn --out $T/bad3.h5
nothing $T/bad3.h5 && ok || bad "bad3 left files"
$X $W --dataset voc:$V:val --out $T/keys.h5 2>/dev/null
expect_fail "--kind attn on a keys cache" "keys.h5: no /features/attn \(holds keys; extract the class attention with kc-extract --features attn\)" \
  $D --features $T/keys.h5 --kind attn --setting attn-mass0.60 --out $T/bad4.h5
nothing $T/bad4.h5 && ok || bad "bad4 left files"
expect_fail "attn-mass1.50" "setting 'attn-mass1.50': the mass 1.5 is outside \(0, 1\]" \
  $D --features $T/ka.h5 --kind attn --setting attn-mass1.50 --out $T/bad5.h5
expect_fail "attn-mass0" "outside \(0, 1\]" $D --features $T/ka.h5 --kind attn --setting attn-mass0 --out $T/bad5.h5
expect_fail "attn-mass" "must be a number in \(0, 1\]" $D --features $T/ka.h5 --kind attn --setting attn-massx --out $T/bad5.h5
expect_fail "attn setting with --kind keys" "--setting attn-mass0.60 decodes class attention: give --kind attn" \
  $D --features $T/ka.h5 --kind keys --setting attn-mass0.60 --out $T/bad5.h5
expect_fail "ncut setting with --kind attn" "--kind attn: setting 't0.20-bin-mean-seed-n1' is not attn-mass<m>" \
  $D --features $T/ka.h5 --kind attn --setting t0.20-bin-mean-seed-n1 --out $T/bad5.h5
expect_fail "grid with --kind attn" "--kind attn takes one --setting attn-mass<m>, not --grid" \
  $D --features $T/ka.h5 --kind attn --grid configs/sweep.ini --out $T/bad5.h5
nothing $T/bad5.h5 && ok || bad "bad5 left files"
rm -rf "$T"
done_tests
