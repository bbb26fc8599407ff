# tests/test_refine.sh — kc-refine end to end: parity on the shared photos, the cache it writes,
# scores of pixel masks against an independent reference, resume, shards, bad input.
source "$(dirname "$0")/lib.sh"
R=$BUILD/kc-refine
T=$(tmpdir test_refine)
PY=/usr/bin/python3
PYREQ="py:numpy py:scipy py:PIL py:h5py"   # tests/ref/refine_ref.py's and the checks'
have_py() { kc_missing $PYREQ; [ -z "$MISSING" ]; }

# 1. the CRF and the solver against tests/ref/refine_ref.py on real photos (VOC and a DAVIS frame)
if [ ! -d "$KC_SHARED_DATA/voc_official" ]; then
  skip "shared photos absent ($KC_SHARED_DATA): real-photo parity not run"
elif ! need "real-photo parity" $PYREQ; then :
elif $PY tests/ref/refine_ref.py real $T/real "$KC_SHARED_DATA" 2>$T/err && $BUILD/tests/test_refine $T/real >$T/real.out 2>&1; then
  ok; sed 's/^/  /' $T/real.out | grep -v '^  RESULT'
else
  bad "real-photo parity: $(cat $T/err $T/real.out 2>/dev/null | tail -n 20)"
fi

# 2. a VOC-layout dataset (the demo's generated scenes), colour features, two decoder settings
$BUILD/kc-demo-data --out $T/data >/dev/null 2>&1 || bad "kc-demo-data"
V=$T/data/voc SPLIT=$T/data/voc/ImageSets/Segmentation/val.txt
$BUILD/kc-extract --model color --dataset voc:$V:val --out $T/keys.h5 2>/dev/null || bad "kc-extract"
$BUILD/kc-decode --features $T/keys.h5 --setting t0.15-bin-mean-corners-n1 --out $T/m1.h5 2>/dev/null || bad "kc-decode"
$BUILD/kc-decode --features $T/keys.h5 --setting t0.20-bin-mean-seed-n2 --out $T/m2.h5 2>/dev/null || bad "kc-decode n2"
export SOURCE_DATE_EPOCH=1700000000
for m in crf bs; do
  if $R --masks $T/m1.h5 --dataset voc:$V:val --method $m --out $T/$m.h5 2>$T/err; then ok; else bad "kc-refine $m: $(cat $T/err)"; fi
  if $BUILD/kc-score --masks $T/$m.h5 --voc $V --split $SPLIT --out $T/s-$m --ledger $T/ledger.tsv 2>$T/err; then ok
  else bad "kc-score on $m pixel masks: $(cat $T/err)"; fi
  if ! need "scores of $m masks against tests/ref/refine_ref.py" $PYREQ; then :
  elif out=$($PY tests/ref/refine_ref.py score $T/$m.h5 $V $SPLIT $T/s-$m 2>&1); then ok; echo "  $m: $out"
  else bad "scores of $m masks: $out"; fi
done
# provenance: the method, its constants, the input's hash
inspect=$($BUILD/kc-inspect $T/crf.h5 2>&1)
in_hash=$($BUILD/kc-inspect $T/m1.h5 2>&1 | awk '$1 == "content_hash" {print $2; exit}')
if grep -q 'refine.*crf' <<<"$inspect" && grep -q 'gaussian sxy 3 w 7, bilateral sxy 50 srgb 5 w 10' <<<"$inspect" &&
   [ -n "$in_hash" ] && grep -q "masks_content_hash.*$in_hash" <<<"$inspect"; then ok
else bad "provenance of crf.h5: $inspect"; fi
# two rounds: labels 1 and 2 at pixel level; the bs refinement of a two-round cache with TokenCut's step
if $R --masks $T/m2.h5 --dataset voc:$V:val --method bs --bs-components tokencut --bs-sigmas function-defaults --out $T/bs2.h5 2>$T/err &&
   $BUILD/kc-score --masks $T/bs2.h5 --voc $V --split $SPLIT --out $T/s-bs2 --ledger $T/ledger.tsv 2>>$T/err; then ok
else bad "two rounds, TokenCut's component step: $(cat $T/err)"; fi
if have_py && ! out=$($PY tests/ref/refine_ref.py score $T/bs2.h5 $V $SPLIT $T/s-bs2 2>&1); then bad "scores of bs2: $out"; fi

# the viewers draw refined pixel masks: kc-show's overlay is the image wherever the refined mask is 0
# (contours and the text corner aside) and blended wherever it is not; kc-plot voc-grid takes them
$BUILD/kc-show --masks $T/bs.h5 --setting t0.15-bin-mean-corners-n1 --images voc:$V:val --first 2 --out $T/shows 2>$T/err \
  && ok || bad "kc-show on refined masks: $(cat $T/err)"
first=$(head -n 1 $SPLIT)
if ! need "kc-show's refined overlay checked pixel by pixel" $PYREQ; then :
elif out=$($PY - $T/bs.h5 $V/JPEGImages/$first.jpg $T/shows/$first.png $first <<'EOF' 2>&1
import sys
import h5py
import numpy as np
from PIL import Image
from scipy import ndimage
m = h5py.File(sys.argv[1], "r")["masks/t0.15-bin-mean-corners-n1/" + sys.argv[4]][()]
im = np.asarray(Image.open(sys.argv[2]).convert("RGB")).astype(int)
ov = np.asarray(Image.open(sys.argv[3]).convert("RGB")).astype(int)
assert m.shape == im.shape[:2] == ov.shape[:2], (m.shape, im.shape, ov.shape)
fg = m > 0
near = ndimage.binary_dilation(fg, iterations=3) & ~ndimage.binary_erosion(fg, iterations=3)  # contours
keep = np.ones_like(fg)
keep[:40, :260] = False  # the text corner
changed = (ov != im).any(2)
bad_bg = (changed & ~fg & ~near & keep).sum()
bad_fg = (~changed & fg & ~near & keep).sum()
print("refined overlay: %d foreground pixels, %d background pixels changed, %d foreground pixels unchanged" % (fg.sum(), bad_bg, bad_fg))
sys.exit(1 if bad_bg or bad_fg > 0.01 * fg.sum() or fg.sum() == 0 else 0)
EOF
); then ok; echo "  $out"; else bad "kc-show's overlay of refined masks: $out"; fi
$BUILD/kc-plot voc-grid --voc $V --split val --setting t0.15-bin-mean-corners-n1 --masks color=$T/bs.h5 --first 2 --out $T/figs \
  2>$T/err && [ -s $T/figs/grid-voc.png ] && ok || bad "kc-plot voc-grid on refined masks: $(cat $T/err)"

# 3. resume: stopped after its first piece, the rerun resumes and writes the same bytes
$R --masks $T/m1.h5 --dataset voc:$V:val --method crf --out $T/resume.h5 2>$T/resume1.err &
pid=$!
for _ in $(seq 200); do ls $T/resume.h5.partial/piece-*.h5 >/dev/null 2>&1 && break; sleep 0.05; done  # (a finished piece, not the .tmp in flight)
kill -TERM $pid 2>/dev/null; wait $pid; rc=$?
if [ $rc -eq 143 ] && [ ! -e $T/resume.h5 ]; then ok; else bad "SIGTERM: status $rc, $(cat $T/resume1.err)"; fi
# the same command line as the clean run, so that the bytes can be compared
mv $T/crf.h5 $T/crf-clean.h5
mv $T/resume.h5.partial $T/crf.h5.partial
if $R --masks $T/m1.h5 --dataset voc:$V:val --method crf --out $T/crf.h5 2>$T/err && grep -q 'resum' $T/err &&
   cmp -s $T/crf.h5 $T/crf-clean.h5; then ok
else bad "resumed run: $(cat $T/err); $(cmp $T/crf.h5 $T/crf-clean.h5 2>&1)"; fi

# 4. shards joined by kc-merge give the single run's file
mv $T/bs.h5 $T/bs-single.h5
for i in 1 2; do $R --masks $T/m1.h5 --dataset voc:$V:val --method bs --shard $i/2 --out $T/bs-$i.h5 2>/dev/null || bad "shard $i"; done
if $BUILD/kc-merge $T/bs.h5 $T/bs-1.h5 $T/bs-2.h5 2>$T/err && $R --help >/dev/null &&
   [ "$($BUILD/kc-inspect $T/bs.h5 2>&1 | grep content_hash)" = "$($BUILD/kc-inspect $T/bs-single.h5 2>&1 | grep content_hash)" ]; then ok
else bad "kc-merge of two kc-refine shards: $(cat $T/err)"; fi

# 5. bad input: one line naming the file and the problem, exit 1, nothing written
nothing() { [ ! -e "$1" ] && [ ! -e "$1.partial" ]; }
check_bad() {
  local what=$1 re=$2 out=$3; shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -Eq -- "$re" <<<"$err" && nothing "$out"; then ok
  else bad "$what (rc=$rc): $err"; fi
}
check_bad "masks from another dataset" "image 2099_[0-9]+ of the masks is not in voc:.*:train" $T/x1.h5 \
  $R --masks $T/m1.h5 --dataset voc:$V:train --method crf --out $T/x1.h5
cp -r $V $T/voc2
first=$(head -n 1 $SPLIT)
# another image of another size in its place (an 8x8 JPEG of tests/bad/files)
cp tests/bad/files/img_8x8.jpg $T/voc2/JPEGImages/$first.jpg
check_bad "an image changed since" "$first.jpg: is 8x8, but the masks of $first were made from" $T/x2.h5 \
  $R --masks $T/m1.h5 --dataset voc:$T/voc2:val --method bs --out $T/x2.h5
# the same size, other bytes (one byte appended after the JPEG's end: the pixels stay, the file changed):
# refused on the file hash kc-extract recorded
cp -r $V $T/voc3
printf 'x' >>$T/voc3/JPEGImages/$first.jpg
check_bad "an image changed since (same size)" "$first.jpg: changed since extraction \(sha256 [0-9a-f]{8}\.\.\., but .*m1.h5 recorded" \
  $T/x6.h5 $R --masks $T/m1.h5 --dataset voc:$T/voc3:val --method bs --out $T/x6.h5
# the viewers that draw masks over the photos after extraction refuse it the same way: kc-plot
# voc-grid and kc-report (kc-show: tests/test_show.sh)
check_bad "kc-plot voc-grid on an image changed since" "$first.jpg: changed since extraction \(sha256 [0-9a-f]{8}\.\.\., but .*bs.h5 recorded" \
  $T/figs3/grid-voc.png $BUILD/kc-plot voc-grid --voc $T/voc3 --split val --setting t0.15-bin-mean-corners-n1 \
  --masks color=$T/bs.h5 --first 2 --out $T/figs3
check_bad "kc-report on an image changed since" "$first.jpg: changed since extraction \(sha256 [0-9a-f]{8}\.\.\., but .*bs.h5 recorded" \
  $T/rep3/index.html $BUILD/kc-report --out $T/rep3 --scores color=$T/s-bs --masks color=$T/bs.h5 --images voc:$T/voc3:val
KC_QUIET=1 $BUILD/kc-report --out $T/rep --scores color=$T/s-bs --masks color=$T/bs.h5 --images voc:$V:val 2>$T/err \
  && [ -s $T/rep/index.html ] && ok || bad "kc-report on the unchanged images: $(cat $T/err)"
# the hash is carried: keys -> masks -> refined masks (and shard merges copy it)
if need "image_sha256 carried from keys to masks to refined masks" py:h5py; then
  n_sha=$($PY -c "import h5py, sys
f = h5py.File(sys.argv[1], 'r'); g = h5py.File(sys.argv[2], 'r'); k = h5py.File(sys.argv[3], 'r')
ids = [i.decode() for i in f['index/ids'][()]]
ok = 0
for i in ids:
    a = k['features/keys/' + i].attrs['image_sha256']; b = f['masks/t0.15-bin-mean-corners-n1/' + i].attrs['image_sha256']
    c = g['masks/t0.15-bin-mean-corners-n1/' + i].attrs['image_sha256']
    ok += bool((a == b).all() and (b == c).all() and len(a) == 8)
print(ok, len(ids))" $T/m1.h5 $T/bs.h5 $T/keys.h5 2>&1)
  [ "${n_sha% *}" = "${n_sha#* }" ] && ok || bad "image_sha256 not carried from keys to masks to refined masks: $n_sha"
fi
check_bad "a constant out of range" "crf-bi-srgb must be in" $T/x3.h5 \
  $R --masks $T/m1.h5 --dataset voc:$V:val --method crf --crf-bi-srgb 0 --out $T/x3.h5
check_bad "a negative lambda" "bs-lambda must be in" $T/x3.h5 \
  $R --masks $T/m1.h5 --dataset voc:$V:val --method bs --bs-lambda -1 --out $T/x3.h5
check_bad "an unknown method" "refinement 'dense' is not none, crf or bs" $T/x3.h5 \
  $R --masks $T/m1.h5 --dataset voc:$V:val --method dense --out $T/x3.h5
check_bad "refined twice" "bs-single.h5: already refined" $T/x4.h5 \
  $R --masks $T/bs-single.h5 --dataset voc:$V:val --method crf --out $T/x4.h5
check_bad "a features cache" "keys.h5: .*(masks|format)" $T/x5.h5 \
  $R --masks $T/keys.h5 --dataset voc:$V:val --method crf --out $T/x5.h5
if need "masks of another policy (policy set with h5py)" py:h5py; then
  cp $T/m1.h5 $T/m-policy.h5
  $PY -c "import h5py; f = h5py.File('$T/m-policy.h5', 'r+'); f.attrs['policy'] = 'short480'; f.close()"
  check_bad "masks of another policy" "m-policy.h5: image .* has a 30x30 grid; short480 with patch 16 gives" $T/x6.h5 \
    $R --masks $T/m-policy.h5 --dataset voc:$V:val --method crf --out $T/x6.h5
fi
done_tests
