# tests/test_score.sh — kc-score and kc-table end to end on the tiny VOC-layout fixture
# (tests/data/voc/tiny, written by tests/ref/voc_ref.py with the expected summaries).
source "$(dirname "$0")/lib.sh"
S=$BUILD/kc-score TB=$BUILD/kc-table
D=tests/data/voc/tiny SPLIT=tests/data/voc/tiny/ImageSets/Segmentation/val.txt
T=$(tmpdir test_score)
L=$T/ledger.tsv

# compare two summary CSVs: same settings and image counts, values within 1e-9
same_summary() {
  awk -F, 'NR==FNR { if (FNR>1) { n[$1]=$2; j[$1]=$3; c[$1]=$4; k++ } next }
           FNR==1 { if ($0 != "setting,images,jaccard,corloc") { print "bad header: " $0; bad=1 } next }
           { m++; if (!($1 in j) || n[$1] != $2) { print "setting " $1; bad=1; next }
             dj = $3 - j[$1]; if (dj < 0) dj = -dj; dc = $4 - c[$1]; if (dc < 0) dc = -dc;
             if (dj > worst) worst = dj; if (dc > worst) worst = dc }
           END { printf "worst |d| %.3g over %d settings (tol 1e-9)\n", worst, m;
                 exit (bad || m != k || worst > 1e-9) }' "$1" "$2"
}

# 1. scoring: files, headers, values against the NumPy reference, one ledger line
if $S --masks $D/masks.h5 --voc $D --split $SPLIT --out $T/a --ledger $L 2>$T/err; then ok; else bad "kc-score: $(cat $T/err)"; fi
if same_summary $D/expected_summary.csv $T/a/summary.csv; then ok; else bad "square480 summary differs from voc_ref.py"; fi
hdr='id,setting,jaccard,corloc,area,lambda2,eigengap,degenerate,knife_edge'
n_csv=0
for f in $T/a/t0.*.csv; do
  n_csv=$((n_csv + 1))
  [ "$(head -n 1 "$f")" = "$hdr" ] || bad "header of $f: $(head -n 1 "$f")"
  [ "$(wc -l <"$f")" -eq 5 ] || bad "$f: $(wc -l <"$f") lines, expected 5"
  awk -F, -v s="$(basename "$f" .csv)" 'NR>1 && ($2 != s || $4 !~ /^[01]$/ || $3 < 0 || $3 > 1 || $6 != 0.125 || $8 != 0 || $9 !~ /^[01]?$/) {exit 1}' "$f" \
    || bad "$f: bad row"
done
if [ $n_csv -eq 3 ]; then ok; else bad "$n_csv per-setting CSVs, expected 3"; fi
[ "$(cat $T/a/network)" = tinynet ] && ok || bad "network file: $(cat $T/a/network 2>&1)"
want_split=$(sha256sum $SPLIT | cut -c1-64) want_sum=$(sha256sum $T/a/summary.csv | cut -c1-64)
if [ "$(sed -n 1p $L | cut -f1)" = "#keycut-ledger 1" ] && [ "$(wc -l <$L)" -eq 2 ] &&
   awk -F'\t' -v sp="$SPLIT" -v h="$want_split" -v s="$want_sum" \
     'NR==2 && $1 ~ /^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9:]+Z$/ && $2==sp && $3==h && $4=="tinynet" && $5==3 && $6==s {f=1} END {exit !f}' $L
then ok; else bad "ledger line: $(cat $L)"; fi

# 2. native16 cache, --network
if $S --masks $D/masks_native.h5 --voc $D --split $SPLIT --out $T/b --ledger $L --network nat-16 2>$T/err; then ok; else bad "kc-score native: $(cat $T/err)"; fi
if same_summary $D/expected_summary_native.csv $T/b/summary.csv; then ok; else bad "native16 summary differs from voc_ref.py"; fi
[ "$(wc -l <$L)" -eq 3 ] && ok || bad "ledger after 2 runs: $(wc -l <$L) lines"

# 3. bad input: the run fails with one clear line and appends nothing
expect_fail "masks of other images" "masks_other.h5: decoded from other images than the split .*t_000004" \
  $S --masks $D/masks_other.h5 --voc $D --split $SPLIT --out $T/c --ledger $L
expect_fail "masks of other sizes" "masks_size.h5: image t_000001 is 80x48 in the masks cache but 64x48" \
  $S --masks $D/masks_size.h5 --voc $D --split $SPLIT --out $T/c --ledger $L
printf 't_000001\nt_000002\nt_000003\n' >$T/three.txt
expect_fail "masks of another split" "decoded from other images than the split \(4 images vs 3" \
  $S --masks $D/masks.h5 --voc $D --split $T/three.txt --out $T/c --ledger $L
cp -r $D $T/voc
rm $T/voc/Annotations/t_000003.xml
expect_fail "missing XML" "voc/Annotations/t_000003.xml: annotation file missing" \
  $S --masks $D/masks.h5 --voc $T/voc --split $SPLIT --out $T/c --ledger $L
cp $D/Annotations/t_000003.xml $T/voc/Annotations/
cp $D/SegmentationObject/t_000003.png $T/voc/SegmentationObject/t_000004.png
expect_fail "PNG of another size than its JPEG" "SegmentationObject/t_000004.png: size 80x40 differs from its JPEG" \
  $S --masks $D/masks.h5 --voc $T/voc --split $SPLIT --out $T/c --ledger $L
printf 't_000001\nt_000002\nt_000003\nt_000009\n' >$T/nine.txt
cp $D/SegmentationObject/t_000004.png $T/voc/SegmentationObject/
expect_fail "id in the split without files" "(t_000009' has no files|t_000009' is not in the cache)" \
  $S --masks $D/masks_other.h5 --voc $T/voc --split $T/nine.txt --out $T/c --ledger $L
# two images fail: the error named is that of the first in the split, in the Jaccard and in the
# box-only path alike (both collect the errors of their parallel loop the same way)
rm $T/voc/Annotations/t_000002.xml $T/voc/Annotations/t_000004.xml
for mode in "" --boxes-only; do
  expect_fail "two missing XML (${mode:-Jaccard}): the first one named" "voc/Annotations/t_000002.xml: annotation file missing" \
    env OMP_NUM_THREADS=2 $S $mode --masks $D/masks.h5 --voc $T/voc --split $SPLIT --out $T/c --ledger $L
done
expect_fail "not a masks cache (timeout: no hang)" "not a keycut cache|not an HDF5 file" \
  timeout 20 $S --masks $SPLIT --voc $D --split $SPLIT --out $T/c --ledger $L
[ "$(wc -l <$L)" -eq 3 ] && ok || bad "failed runs appended to the ledger: $(wc -l <$L) lines"
[ ! -e $T/c ] && ok || bad "a failed run left $T/c"

# 4. the selection split
if $S --make-selection tests/data/voc/train1500.txt --out $T/splits 2>$T/err &&
   [ "$(sha256sum $T/splits/select1000.txt | cut -c1-64)" = "$(cut -d' ' -f1 tests/data/voc/select1000.expected.sha256)" ] &&
   (cd $T/splits && sha256sum -c --quiet select1000.txt.sha256); then ok; else bad "selection split: $(cat $T/err)"; fi
expect_fail "short train list" "fewer than the 1000" $S --make-selection $SPLIT --out $T/splits2

# 5. tables: files, bold, macros, DAVIS columns, ledger count, byte-identical reruns
mkdir -p $T/davis && printf 'J&F-Mean,J-Mean,J-Recall,J-Decay,F-Mean,F-Recall,F-Decay\n0.856,0.831,0.872,0.203,0.881,0.972,0.173\n' >$T/davis/global_results-val.csv
# kc-davis's JSON beside it: the same numbers at full precision (the CSV has them to 3 decimals)
printf '{\n "global": {\n  "J&F-Mean": %s,\n  "J-Mean": %s,\n  "J-Recall": 0.872,\n  "J-Decay": 0.203,\n  "F-Mean": %s,\n  "F-Recall": 0.972,\n  "F-Decay": 0.173\n },\n "per_object": {\n },\n "per_frame": {\n }\n}\n' \
  0.85612345678901234 0.83098765432109876 0.88125925925925925 >$T/davis/global_results-val.json
# what report.md's line is to name (the paths need not exist: kc-table only names them)
ABOUT=(--voc /data/VOC_2012 --val-split val --davis-root /data/DAVIS-2017 --davis-split val --select-list /data/splits/select1000.txt)
for k in 1 2; do
  if $TB $T/a $T/b --out $T/tab$k --name val --setting t0.20-bin-mean-seed-n1 --davis nat-16=$T/davis --ledger $L "${ABOUT[@]}" \
       >$T/tab$k.out 2>$T/err; then ok; else bad "kc-table: $(cat $T/err)"; fi
done
for f in val.csv val.md val.tex val-sweep.csv val-sweep.md val-sweep.tex val-macros.tex; do
  cmp -s $T/tab1/$f $T/tab2/$f && ok || bad "$f differs between two runs"
done
[ "$(head -n 1 $T/tab1/val.csv)" = "network,voc_jaccard,voc_corloc,davis_jf,davis_j,davis_f" ] && ok || bad "val.csv header"
jt=$(awk -F, '$1=="t0.20-bin-mean-seed-n1" {print $3}' $D/expected_summary.csv)
awk -F, -v j="$jt" '$1=="tinynet" {d=$2-j; if (d<0) d=-d; f = d <= 1e-9 && $5==""} END {exit !f}' \
  $T/tab1/val.csv && ok || bad "val.csv values: $(cat $T/tab1/val.csv)"
# the DAVIS columns at full precision: equal (as doubles, exactly) to the JSON's, read here with sed
json_global() { sed -n "s/^  \"$1\": \([^,]*\),\{0,1\}\$/\1/p" "$2" | head -n 1; }
jf=$(json_global 'J&F-Mean' $T/davis/global_results-val.json) jm=$(json_global J-Mean $T/davis/global_results-val.json)
fm=$(json_global F-Mean $T/davis/global_results-val.json)
awk -F, -v jf="$jf" -v jm="$jm" -v fm="$fm" '$1=="nat-16" {g = $4 + 0 == jf + 0 && $5 + 0 == jm + 0 && $6 + 0 == fm + 0} END {exit !g}' \
  $T/tab1/val.csv && [ -n "$jf" ] && ok || bad "val.csv DAVIS columns are not the JSON's $jf $jm $fm: $(grep nat-16 $T/tab1/val.csv)"
grep -q '^| nat-16 | \*\*26.8\*\* | 0.0 | \*\*85.6\*\* | \*\*83.1\*\* | \*\*88.1\*\* |$' $T/tab1/val.md && ok || bad "val.md: $(cat $T/tab1/val.md)"
grep -q '^t0.20-bin-mean-seed-n1 & \\textbf{12.4} & \\textbf{25.0} & \\textbf{26.8} & 0.0 \\\\$' $T/tab1/val-sweep.tex && ok \
  || bad "val-sweep.tex: $(cat $T/tab1/val-sweep.tex)"
# the line above the table names the setting, the val split, the VOC root, the DAVIS root and split and
# the networks in the rows' order (taken here from val.csv); val.tex has it as its first (comment) line
line=$(head -n 1 $T/tab1/val.md) nets=$(tail -n +2 $T/tab1/val.csv | cut -d, -f1 | paste -sd, - | sed 's/,/, /g')
for want in 't0.20-bin-mean-seed-n1' 'val split "val"' '/data/VOC_2012' 'DAVIS-2017 split "val"' '/data/DAVIS-2017' \
            "networks: $nets"; do
  grep -qF -- "$want" <<<"$line" && ok || bad "val.md's first line does not name '$want': $line"
done
[ "$(sed -n 2p $T/tab1/val.md)" = "" ] && sed -n 3p $T/tab1/val.md | grep -q '^| Network |' && ok || bad "val.md: $(head -n 3 $T/tab1/val.md)"
[ "$(head -n 1 $T/tab1/val.tex)" = "% $line" ] && ok || bad "val.tex's first line is not '% $line': $(head -n 1 $T/tab1/val.tex)"
! grep -q '^[%#]\|VOC_2012\|DAVIS-2017' $T/tab1/val.csv && ok || bad "val.csv holds more than the table: $(cat $T/tab1/val.csv)"
for want in '\kcValValSplit}{val}' '\kcValVocRoot}{/data/VOC\_2012}' '\kcValDavisRoot}{/data/DAVIS-2017}' '\kcValDavisSplit}{val}' \
            '\kcValSelectList}{/data/splits/select1000.txt}'; do
  grep -qF -- "\newcommand{$want" $T/tab1/val-macros.tex && ok || bad "val-macros.tex has no $want: $(cat $T/tab1/val-macros.tex)"
done
# the sweep's line: the selection split list and the networks in the column groups' order (from its CSV)
line=$(head -n 1 $T/tab1/val-sweep.md)
snets=$(head -n 1 $T/tab1/val-sweep.csv | tr ',' '\n' | sed -n 's/_jaccard$//p' | paste -sd, - | sed 's/,/, /g')
for want in '/data/splits/select1000.txt' '/data/VOC_2012' "networks: $snets"; do
  grep -qF -- "$want" <<<"$line" && ok || bad "val-sweep.md's first line does not name '$want': $line"
done
# the full-precision DAVIS numbers need the JSON: without it, one error line naming it
mkdir -p $T/davis-nojson && cp $T/davis/global_results-val.csv $T/davis-nojson/
err=$($TB $T/a $T/b --out $T/tab4 --name val --setting t0.20-bin-mean-seed-n1 --davis nat-16=$T/davis-nojson --ledger $L 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && [ "$(grep -c . <<<"$err")" -eq 1 ] && grep -qF "$T/davis-nojson/global_results-val.json" <<<"$err" && [ ! -e $T/tab4 ] && ok \
  || bad "no JSON (rc=$rc): $err"
expect_fail "--davis-split of no results file" "davis/global_results-test-dev.csv" \
  $TB $T/a $T/b --out $T/tab4 --name val --setting t0.20-bin-mean-seed-n1 --davis nat-16=$T/davis --davis-split test-dev --ledger $L
grep -q '\\begin{tabular}' $T/tab1/val.tex && grep -q '\\bottomrule' $T/tab1/val.tex && grep -q 'DAVIS J\\&F' $T/tab1/val.tex && ok \
  || bad "val.tex: $(cat $T/tab1/val.tex)"
if grep -v '^%' $T/tab1/val-macros.tex | grep -qvE '^\\newcommand\{\\[A-Za-z]+\}\{[^}]*\}$'; then bad "macro names: $(cat $T/tab1/val-macros.tex)"; else ok; fi
grep -q '^\\newcommand{\\kcValNatDashOneSixDavisJF}{85.6}$' $T/tab1/val-macros.tex && ok || bad "DAVIS macro: $(cat $T/tab1/val-macros.tex)"
grep -q 'val.txt .*opened 2 times' $T/tab1.out && ok || bad "ledger count: $(cat $T/tab1.out)"
# --only (as pipeline.mk calls it): just that table, as NAME.*
$TB $T/a $T/b --out $T/only --name sweep --only sweep --ledger $L --select-list /data/splits/select1000.txt >/dev/null 2>&1 &&
  [ "$(head -n 1 $T/only/sweep.csv)" = "setting,tinynet_jaccard,tinynet_corloc,nat-16_jaccard,nat-16_corloc" ] &&
  head -n 1 $T/only/sweep.md | grep -qF '/data/splits/select1000.txt' && head -n 1 $T/only/sweep.md | grep -qF 'networks: tinynet, nat-16' &&
  [ ! -e $T/only/sweep-sweep.csv ] && grep -q 'kcSweepNatDashOneSixBestJaccard}{26.8}' $T/only/sweep-macros.tex && ok \
  || bad "--only sweep: $(ls $T/only 2>&1)"
$TB $T/a $T/b --out $T/only --name report --only report --setting t0.15-bin-mean-corners-n3 --ledger $L >/dev/null 2>&1 &&
  [ "$(head -n 1 $T/only/report.csv)" = "network,voc_jaccard,voc_corloc" ] && [ ! -e $T/only/report-sweep.csv ] && ok \
  || bad "--only report: $(ls $T/only 2>&1)"
# only what was given is named: no VOC root, val split or DAVIS here; --refine is named
line=$(head -n 1 $T/only/report.md)
grep -qF 't0.15-bin-mean-corners-n3' <<<"$line" && grep -qF 'networks: tinynet, nat-16' <<<"$line" && ! grep -q 'DAVIS\|split\| of ' <<<"$line" \
  && ok || bad "report.md's line names what was not given: $line"
$TB $T/a $T/b --out $T/only --name refined --only report --setting t0.15-bin-mean-corners-n3 --refine crf --ledger $L >/dev/null 2>&1 &&
  head -n 1 $T/only/refined.md | grep -qF 'crf' && ok || bad "the line does not name --refine crf: $(head -n 1 $T/only/refined.md)"
# the knife-edge share (docs/ties.md): a column per network when the per-setting CSVs fill knife_edge
cp -r $T/a $T/k && echo knifenet >$T/k/network
for f in $T/k/t0.*.csv; do awk -F, 'NR == 1 {print; next} {print $0 (NR == 2 ? "1" : "0")}' "$f" >"$f.new" && mv "$f.new" "$f"; done
$TB $T/k --out $T/ktab --name sweep --only sweep --ledger $L >/dev/null 2>&1 &&
  [ "$(head -n 1 $T/ktab/sweep.csv)" = "setting,knifenet_jaccard,knifenet_corloc,knifenet_knife_edge" ] &&
  awk -F, 'NR > 1 && $4 != 0.25 {exit 1}' $T/ktab/sweep.csv && grep -q 'Knife edge' $T/ktab/sweep.md && ok \
  || bad "knife-edge column: $(cat $T/ktab/sweep.csv 2>&1)"
printf 'setting,images,jaccard\n' >$T/bad.csv && mkdir -p $T/badnet && cp $T/bad.csv $T/badnet/summary.csv
expect_fail "not a summary" "badnet/summary.csv: header is not" $TB $T/a $T/badnet --out $T/tab3
expect_fail "setting absent" "has no scores for setting t9" $TB $T/a --out $T/tab3 --setting t9
expect_fail "two dirs of one network" "both network 'tinynet'" $TB $T/a $T/a/ --out $T/tab3
[ ! -e $T/tab3 ] && ok || bad "a failed kc-table left $T/tab3"
$S --help >/dev/null && $TB --help >/dev/null && ok || bad "--help"
done_tests
