#!/usr/bin/env bash
# kc-table --saliency on hand-written kc-saliency summaries: the CSV holds the inputs' numbers as
# they were written (and the published ones as fractions of their decimal text), the Markdown the
# right percentages, bold and row order, the LaTeX its groups and its Published block; the same
# inputs give the same bytes, the order of one network's folders does not matter and the order of
# the networks does (rows follow it); bad inputs get one error line naming the file and nothing is
# written; kc-plot curves still reads configs/published.ini (it skips the saliency_* sections).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TABLE=$BUILD/kc-table
d=$(tmpdir saliency_table)
if [ ! -x "$TABLE" ]; then bad "$TABLE not built"; done_tests; exit 1; fi
table() { timeout 60 "$TABLE" --saliency "$@" --ledger "$d/none.tsv"; }
HEADER=setting,refine,dataset,images,max_fbeta,iou,accuracy,threshold
SET=t0.20-bin-mean-seed-n1

# sal DIR NETWORK|- DATASET IMAGES "none: maxf iou acc" "bs: maxf iou acc": a kc-saliency folder
# (NETWORK - : no network file, the folder's name names it)
sal() {
  local dir=$1 net=$2 ds=$3 n=$4
  mkdir -p "$dir"
  [ "$net" = - ] || echo "$net" >"$dir/network"
  echo "saliency:/data/$ds" >"$dir/dataset"
  printf '%s\n' "$HEADER" "$SET,none,$ds,$n,$5,0" "$SET,bs,$ds,$n,$6,0.0117647059" | tr ' ' , >"$dir/summary.csv"
}
s=$d/s
sal "$s/a-ecssd"  alpha ECSSD     20 "0.7 0.6 0.9"                   "0.75 0.65 0.925"
sal "$s/a-duts"   alpha DUTS-TE   4  "0.103161894 0.0515096954 0.4623807" "0.526817262 0.04586725 0.458035402"
sal "$s/a-omron"  alpha DUT-OMRON 12 "0.5 nan 0.8"                   "0.55 0.125 0.85"
sal "$s/beta"     -     ECSSD     20 "0.71 0.59 0.91"                "0.74 0.66 0.92"
sal "$s/b2/beta"  -     mine      6  "0.25 0.2 0.95"                 "0.3 0.1 0.96"
sal "$s/r-ecssd"  rand  ECSSD     20 "0.9 0.1 0.1"                   "0.95 0.2 0.2"
DIRS=("$s/a-ecssd" "$s/a-duts" "$s/a-omron" "$s/beta" "$s/b2/beta" "$s/r-ecssd")

if table "${DIRS[@]}" --baseline rand --published configs/published.ini --out "$d/t1" >/dev/null 2>"$d/t1.log"; then ok
else bad "kc-table --saliency: $(cat "$d/t1.log")"; done_tests; exit 1; fi
for f in csv md tex; do [ -s "$d/t1/saliency.$f" ] && ok || bad "no saliency.$f"; done

# the CSV: the numbers exactly as written, the published ones as the fractions of their decimals
cat >"$d/want.csv" <<'EOF'
network,ECSSD_max_fbeta,ECSSD_iou,ECSSD_accuracy,DUTS-TE_max_fbeta,DUTS-TE_iou,DUTS-TE_accuracy,DUT-OMRON_max_fbeta,DUT-OMRON_iou,DUT-OMRON_accuracy,mine_max_fbeta,mine_iou,mine_accuracy,kind
alpha,0.7,0.6,0.9,0.103161894,0.0515096954,0.4623807,0.5,,0.8,,,,network
alpha + BS,0.75,0.65,0.925,0.526817262,0.04586725,0.458035402,0.55,0.125,0.85,,,,network
beta,0.71,0.59,0.91,,,,,,,0.25,0.2,0.95,network
beta + BS,0.74,0.66,0.92,,,,,,,0.3,0.1,0.96,network
rand,0.9,0.1,0.1,,,,,,,,,,baseline
rand + BS,0.95,0.2,0.2,,,,,,,,,,baseline
TokenCut ViT-S/16 (published),0.803,0.712,0.918,0.672,0.576,0.903,0.6,0.533,0.88,,,,published
TokenCut + BS ViT-S/16 (published),0.874,0.772,0.934,0.755,0.624,0.914,0.697,0.618,0.897,,,,published
EOF
if cmp -s "$d/want.csv" "$d/t1/saliency.csv"; then ok; else bad "saliency.csv: $(diff "$d/want.csv" "$d/t1/saliency.csv")"; fi

# the Markdown: percentages with one decimal, the best contender of each column in bold (not the
# baseline's 90.0 / 95.0, not the published numbers), missing cells –
md=$d/t1/saliency.md
md_row() { if grep -qFx -- "$1" "$md"; then ok; else bad "saliency.md lacks the row: $1"; fi; }
md_row '| Network | ECSSD maxFβ | ECSSD IoU | ECSSD Acc | DUTS-TE maxFβ | DUTS-TE IoU | DUTS-TE Acc | DUT-OMRON maxFβ | DUT-OMRON IoU | DUT-OMRON Acc | mine maxFβ | mine IoU | mine Acc |'
md_row '| alpha | 70.0 | 60.0 | 90.0 | 10.3 | **5.2** | **46.2** | 50.0 | – | 80.0 | – | – | – |'
md_row '| alpha + BS | **75.0** | 65.0 | **92.5** | **52.7** | 4.6 | 45.8 | **55.0** | **12.5** | **85.0** | – | – | – |'
md_row '| beta | 71.0 | 59.0 | 91.0 | – | – | – | – | – | – | 25.0 | **20.0** | 95.0 |'
md_row '| beta + BS | 74.0 | **66.0** | 92.0 | – | – | – | – | – | – | **30.0** | 10.0 | **96.0** |'
md_row '| rand (baseline) | 90.0 | 10.0 | 10.0 | – | – | – | – | – | – | – | – | – |'
md_row '| rand + BS (baseline) | 95.0 | 20.0 | 20.0 | – | – | – | – | – | – | – | – | – |'
md_row '| TokenCut ViT-S/16 (published) | 80.3 | 71.2 | 91.8 | 67.2 | 57.6 | 90.3 | 60.0 | 53.3 | 88.0 | – | – | – |'
md_row '| TokenCut + BS ViT-S/16 (published) | 87.4 | 77.2 | 93.4 | 75.5 | 62.4 | 91.4 | 69.7 | 61.8 | 89.7 | – | – | – |'
# rows in this order: networks (as given), baselines, published
order=$(grep -o '^| [^|]*|' "$md" | tail -n +2 | tr -d '|' | sed 's/^ //; s/ $//' | paste -sd';')
want_order='alpha;alpha + BS;beta;beta + BS;rand (baseline);rand + BS (baseline);TokenCut ViT-S/16 (published);TokenCut + BS ViT-S/16 (published)'
[ "$order" = "$want_order" ] && ok || bad "row order: $order"
note=$(head -n 1 "$md")
for want in "TokenCut's protocol" "setting $SET" "datasets ECSSD (20 images), DUTS-TE (4 images), DUT-OMRON (12 images), mine (6 images)" \
  "networks: alpha, beta, rand (baseline)" "published rows from configs/published.ini"; do
  if grep -qF -- "$want" <<<"$note"; then ok; else bad "note lacks '$want': $note"; fi
done
# the LaTeX: the note as a comment, the dataset groups, maxF_beta as mathematics, the Published block
tex=$d/t1/saliency.tex
for want in "% Unsupervised saliency detection" '\multicolumn{3}{c}{DUT-OMRON}' 'Network & max$F_\beta$ & IoU & Acc' \
  '\multicolumn{13}{l}{\textit{Published}} \\' 'alpha + BS & \textbf{75.0} & 65.0 & \textbf{92.5}'; do
  if grep -qF -- "$want" "$tex"; then ok; else bad "saliency.tex lacks: $want"; fi
done

# without --published: no published rows, no kind column unless a baseline
table "$s/a-ecssd" "$s/beta" --out "$d/t0" --name plain >/dev/null 2>&1 && ok || bad "kc-table --saliency without --published"
if [ "$(head -n 1 "$d/t0/plain.csv")" = "network,ECSSD_max_fbeta,ECSSD_iou,ECSSD_accuracy" ] && [ "$(wc -l <"$d/t0/plain.csv")" -eq 5 ]; then ok
else bad "plain.csv: $(cat "$d/t0/plain.csv")"; fi
# only the published values of the table's datasets: a table of 'mine' alone has no published row
table "$s/b2/beta" --published configs/published.ini --out "$d/t0" --name mine >/dev/null 2>&1 && ok || bad "table of mine"
if ! grep -q published "$d/t0/mine.csv"; then ok; else bad "a published row without values: $(cat "$d/t0/mine.csv")"; fi

# Task 2: the same bytes across runs; a network's folders in any order give the same table; the
# order of the networks sets the order of the rows (and nothing else)
table "${DIRS[@]}" --baseline rand --published configs/published.ini --out "$d/t2" >/dev/null 2>&1
for f in csv md tex; do cmp -s "$d/t1/saliency.$f" "$d/t2/saliency.$f" && ok || bad "saliency.$f differs between two runs"; done
table "$s/a-omron" "$s/beta" "$s/r-ecssd" "$s/a-duts" "$s/b2/beta" "$s/a-ecssd" --baseline rand --published configs/published.ini \
  --out "$d/t3" >/dev/null 2>&1
for f in csv md tex; do cmp -s "$d/t1/saliency.$f" "$d/t3/saliency.$f" && ok || bad "saliency.$f depends on the order of one network's folders"; done
table "$s/beta" "$s/r-ecssd" "$s/a-ecssd" "$s/b2/beta" "$s/a-omron" "$s/a-duts" --baseline rand --published configs/published.ini \
  --out "$d/t4" >/dev/null 2>&1
head -n 1 "$d/t4/saliency.csv" | cmp -s - <(head -n 1 "$d/t1/saliency.csv") && ok || bad "the columns depend on the folders' order"
if [ "$(sed -n 2p "$d/t4/saliency.csv" | cut -d, -f1)" = beta ] && [ "$(sed -n 4p "$d/t4/saliency.csv" | cut -d, -f1)" = alpha ]; then ok
else bad "rows do not follow the networks' order: $(cut -d, -f1 "$d/t4/saliency.csv" | paste -sd';')"; fi
# the same lines, reordered: beta's two rows first, then alpha's, rand and published as before
if diff <(sed -n '2,3p;6,9p' "$d/t1/saliency.csv"; sed -n '4,5p' "$d/t1/saliency.csv") \
        <(sed -n '4,5p;6,9p' "$d/t4/saliency.csv"; sed -n '2,3p' "$d/t4/saliency.csv") >/dev/null; then ok
else bad "beta-first table is not alpha-first's rows reordered"; fi

# bad input: one error line naming the file, exit 1, nothing written
expect_error() { # what regex out cmd...
  local what=$1 re=$2 out=$3; shift 3
  local err rc
  err=$("$@" --out "$out" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -eq 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -Eq -- "$re" <<<"$err"; then ok
  else bad "$what (rc=$rc): $err"; fi
  if [ ! -e "$out" ]; then ok; else bad "$what: $out was written"; fi
}
b=$d/bad
cp -r "$s/a-ecssd" "$b-dup"
expect_error "same network and dataset twice" "^kc-table: error: $b-dup/summary.csv: network alpha on ECSSD again \\(also $s/a-ecssd" \
  "$d/o1" table "$s/a-ecssd" "$b-dup"
cp -r "$s/a-ecssd" "$b-onerow"; sed -i '/,bs,/d' "$b-onerow/summary.csv"
expect_error "no bs row" "$b-onerow/summary.csv: wants two rows, refine none and bs \\(found none\\)" "$d/o2" table "$b-onerow"
cp -r "$s/a-ecssd" "$b-three"; sed -n 3p "$s/a-ecssd/summary.csv" >>"$b-three/summary.csv"
expect_error "a third row" "$b-three/summary.csv:4: a second bs row" "$d/o3" table "$b-three"
mkdir -p "$b-set"; cp -r "$s/beta" "$b-set/beta"
sed -i "s/^$SET,/t0.30-bin-mean-seed-n1,/" "$b-set/beta/summary.csv"
expect_error "mixed settings" "$b-set/beta/summary.csv: setting t0.30-bin-mean-seed-n1, but $s/a-ecssd/summary.csv is at $SET" \
  "$d/o4" table "$s/a-ecssd" "$b-set/beta"
cp -r "$s/a-ecssd" "$b-num"; sed -i 's/,0.6,0.9,/,0.6,x9,/' "$b-num/summary.csv"
expect_error "not a number" "$b-num/summary.csv:2: accuracy 'x9' is not a number" "$d/o5" table "$b-num"
cp -r "$s/a-ecssd" "$b-head"; sed -i '1s/,threshold$//' "$b-head/summary.csv"
expect_error "wrong header" "$b-head/summary.csv: header is not" "$d/o6" table "$b-head"
cp -r "$s/a-ecssd" "$b-frac"; sed -i 's/,0.75,/,75,/' "$b-frac/summary.csv"
expect_error "a percentage in a fraction's place" "$b-frac/summary.csv:3: max_fbeta 75 is outside \\[0, 1\\]" "$d/o7" table "$b-frac"
cp -r "$s/a-ecssd" "$b-fields"; sed -i '2s/,0$//' "$b-fields/summary.csv"
expect_error "7 fields" "$b-fields/summary.csv:2: expected 8 fields, found 7" "$d/o8" table "$b-fields"
expect_error "no summary" "$d/nowhere/summary.csv: no such file" "$d/o9" table "$d/nowhere"
expect_error "unknown baseline" "--baseline zz: no score folder of network 'zz'" "$d/o10" table "$s/a-ecssd" --baseline zz
printf '[x]\nlabel = X\nmetric = saliency_ecssd_maxf\nvalue = 80\n' >"$d/pub-bad.ini"
expect_error "bad published metric" "$d/pub-bad.ini:3: metric 'saliency_ecssd_maxf' is not saliency_" "$d/o11" \
  table "$s/a-ecssd" --published "$d/pub-bad.ini"
printf '[x]\nlabel = X\nmetric = saliency_duts_iou\nvalue = 180\n' >"$d/pub-pct.ini"
expect_error "published value not a percentage" "$d/pub-pct.ini:4: value '180' is not a percentage" "$d/o12" \
  table "$s/a-ecssd" --published "$d/pub-pct.ini"
expect_error "--saliency with a VOC option" "--saliency does not take --setting" "$d/o13" table "$s/a-ecssd" --setting x

# kc-plot curves still reads configs/published.ini, saliency sections and all (skipped: same lines)
S=t0.15-bin-mean-corners-n3
if tests/plot_fixture.sh "$d/w" dino run2-e05 >/dev/null 2>&1; then
  curves=(); for n in dino run2-e05; do curves+=(--voc "$n=$d/w/scores/$n/val-$S" --davis "$n=$d/w/results/$n/davis17-val"); done
  if err=$(timeout 120 "$BUILD/kc-plot" curves "${curves[@]}" --nets-ini "$d/w/nets.ini" --published configs/published.ini \
           --out "$d/f" 2>&1 >/dev/null); then ok; else bad "kc-plot curves --published configs/published.ini: $err"; fi
  awk 'BEGIN { RS = ""; ORS = "\n\n" } !/metric = saliency_/' configs/published.ini >"$d/pub-curves.ini"
  timeout 120 "$BUILD/kc-plot" curves "${curves[@]}" --nets-ini "$d/w/nets.ini" --published "$d/pub-curves.ini" --out "$d/f0" \
    >/dev/null 2>&1
  if grep -q "metric = saliency_" configs/published.ini && ! grep -q "metric = saliency_" "$d/pub-curves.ini" &&
     cmp -s "$d/f/curves.csv" "$d/f0/curves.csv" && cmp -s "$d/f/curves.tex" "$d/f0/curves.tex"; then ok
  else bad "kc-plot curves draws something of the saliency sections"; fi
  if ! grep -q "TokenCut" "$d/f/curves.tex"; then ok; else bad "curves.tex names TokenCut's saliency rows"; fi
else
  bad "tests/plot_fixture.sh failed"
fi

# the published rows: 18 saliency sections in configs/published.ini, each with a source
n=$(grep -c '^metric = saliency_' configs/published.ini)
[ "$n" -eq 18 ] && ok || bad "configs/published.ini has $n saliency sections, not 18"
done_tests
