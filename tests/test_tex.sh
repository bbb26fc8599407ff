#!/usr/bin/env bash
# Every .tex fragment keycut writes compiles with pdflatex inside a minimal document: kc-table's
# booktabs tables (sweep and report, with DAVIS columns; the saliency table) and its macros, and
# kc-plot's pgfplots figures (the sweep per network and combined, the checkpoint curves with
# published lines) and a picture grid.  Skipped where pdflatex is absent (deps-tex.txt: texlive-latex-recommended,
# texlive-pictures).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$(tmpdir tex); d=$(cd "$d" && pwd)
need "LaTeX fragments compiled (make deps-tex)" pdflatex || { done_tests; exit 0; }
S=t0.15-bin-mean-corners-n3
NETS=(self_patch run2-e05)
tests/plot_fixture.sh "$d/w" "${NETS[@]}" || { bad "fixture"; done_tests; exit 1; }
sed -i '/^t0.20-wtd-zero-seed-n2,/d' "$d/w/scores/run2-e05/select/summary.csv" # a setting not scored: empty cells
sweep=(); curves=(); val=(); dav=()
for n in "${NETS[@]}"; do
  sweep+=(--scores "$n=$d/w/scores/$n/select")
  curves+=(--voc "$n=$d/w/scores/$n/val-$S" --davis "$n=$d/w/results/$n/davis17-val")
  val+=("$d/w/scores/$n/val-$S")
  dav+=(--davis "$n=$d/w/results/$n/davis17-val")
done
for n in "${NETS[@]}"; do echo "$n" > "$d/w/scores/$n/val-$S/network"; done
mkdir -p "$d/figs" "$d/tables"
step() { local what=$1; shift; local err; if err=$("$@" 2>&1 >/dev/null); then ok; else bad "$what: $err"; fi; }
step "kc-plot sweep" "$BUILD/kc-plot" sweep "${sweep[@]}" --out "$d/figs"
step "kc-plot curves" "$BUILD/kc-plot" curves "${curves[@]}" --nets-ini "$d/w/nets.ini" --published configs/published.ini --out "$d/figs"
step "kc-demo-data" "$BUILD/kc-demo-data" --out "$d/demo"
step "kc-plot davis-grid" "$BUILD/kc-plot" davis-grid --davis "$d/demo/davis" --sequence dots --frames 2 \
  --results "gt-as-result=$d/demo/davis/Annotations/480p" --out "$d/figs"
step "kc-table sweep" "$BUILD/kc-table" $(for n in "${NETS[@]}"; do echo "$d/w/scores/$n/select"; done) --out "$d/tables" \
  --name sweep --only sweep --ledger "$d/none.tsv" --voc '/data/VOC_2012 & co' --select-list '/data/splits/select_1000.txt'
# what the tables are of: a comment line atop each .tex, macros escaped (paths with LaTeX specials)
step "kc-table report" "$BUILD/kc-table" "${val[@]}" --out "$d/tables" --name report --only report "${dav[@]}" --ledger "$d/none.tsv" \
  --voc '/data/VOC_2012 & co' --val-split val --davis-root '/data/DAVIS#1~x%' --davis-split val
# the saliency table (kc-table --saliency): max$F_\beta$ column titles, baseline and Published blocks
for n in dino rand; do
  mkdir -p "$d/sal/$n"
  printf '%s\n' setting,refine,dataset,images,max_fbeta,iou,accuracy,threshold \
    t0.20-bin-mean-seed-n1,none,ECSSD,3,0.5,0.25,0.75,0 t0.20-bin-mean-seed-n1,bs,ECSSD,3,0.625,nan,0.875,0.5 >"$d/sal/$n/summary.csv"
done
step "kc-table --saliency" "$BUILD/kc-table" --saliency "$d/sal/dino" "$d/sal/rand" --baseline rand --published configs/published.ini \
  --out "$d/tables" --ledger "$d/none.tsv"

fragments=("$d"/tables/*.tex "$d"/figs/*.tex)
{
  cat <<'EOF'
\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage[margin=2cm]{geometry}
\usepackage{booktabs}
\usepackage{graphicx}
\usepackage{pgfplots}
\pgfplotsset{compat=1.16}
\usepgfplotslibrary{groupplots}
EOF
  echo "\\newcommand{\\kcfigdir}{$d/figs}"
  echo '\begin{document}'
  for f in "${fragments[@]}"; do
    echo "\\clearpage\\noindent\\texttt{\\detokenize{$(basename "$f")}}\\par\\input{$f}"
  done
  echo '\clearpage Setting \kcReportSetting, dino \kcReportSelfUnderscorePatchVocJaccard.'
  echo 'VOC \kcReportValSplit{} of \kcReportVocRoot, DAVIS \kcReportDavisSplit{} of \kcReportDavisRoot, sweep on \kcSweepSelectList.'
  echo '\end{document}'
} > "$d/doc.tex"
n_frag=${#fragments[@]}
if [ "$n_frag" -ge 12 ]; then ok; else bad "only $n_frag fragments written: ${fragments[*]}"; fi
if (cd "$d" && timeout 300 pdflatex -interaction=nonstopmode -halt-on-error doc.tex >pdflatex.out 2>&1); then
  ok
  if need "doc.pdf's page count" pdfinfo; then
    pages=$(pdfinfo "$d/doc.pdf" | awk '/^Pages:/ { print $2 }')
    if [ "$pages" -ge $((n_frag + 1)) ]; then ok; else bad "doc.pdf has $pages pages for $n_frag fragments"; fi
  fi
else
  bad "pdflatex failed on $d/doc.tex: $(grep -E -A4 '^!' "$d/doc.log" | head -n 8)"
fi
done_tests
