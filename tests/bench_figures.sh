#!/usr/bin/env bash
# tests/bench_figures.sh — all figures of a 10-network thesis: kc-plot sweep (144 settings; per
# network and combined, Jaccard and CorLoc: 22 figures), curves (two runs of 4 checkpoints, 2
# baselines, published lines) and a DAVIS picture grid (4 frames x 10 networks, demo video), each
# as PDF + SVG + PNG + pgfplots + CSV, from synthetic score files (tests/plot_fixture.sh).
# Target: under 10 s.  Baselines measured in the same run: kc-table on the same 10 score folders
# (reading the same files and writing the sweep table), and pdflatex compiling one sweep figure
# from its pgfplots fragment (what drawing the figures inside the thesis would cost per figure).
# Figures only, no assertions.  The machine may be shared: numbers are noisy.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DIR=$BUILD/bench-data/figures
NETS=(dino selfpatch run2-e05 run2-e10 run2-e15 run2-e20 run3-e05 run3-e10 run3-e15 run3-e20)
echo "== bench_figures: ${#NETS[@]} networks x 144 settings, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for p in "$BUILD/kc-plot" "$BUILD/kc-table" "$BUILD/kc-demo-data"; do [ -x "$p" ] || { echo "bench_figures: $p not built" >&2; exit 1; }; done
rm -rf "$DIR"; mkdir -p "$DIR"
tests/plot_fixture.sh "$DIR/w" "${NETS[@]}" || exit 1
KC_QUIET=1 "$BUILD/kc-demo-data" --out "$DIR/demo" >/dev/null 2>&1 || exit 1
S=t0.15-bin-mean-corners-n3
sweep=(); curves=(); grid=(); sel=()
for n in "${NETS[@]}"; do
  sweep+=(--scores "$n=$DIR/w/scores/$n/select"); sel+=("$DIR/w/scores/$n/select")
  curves+=(--voc "$n=$DIR/w/scores/$n/val-$S" --davis "$n=$DIR/w/results/$n/davis17-val")
  grid+=(--results "$n=$DIR/demo/davis/Annotations/480p")
done
now() { date +%s.%N; }
t0=$(now)
KC_QUIET=1 "$BUILD/kc-plot" sweep "${sweep[@]}" --out "$DIR/figs" || exit 1
t1=$(now)
KC_QUIET=1 "$BUILD/kc-plot" curves "${curves[@]}" --nets-ini "$DIR/w/nets.ini" --published configs/published.ini --out "$DIR/figs" || exit 1
t2=$(now)
KC_QUIET=1 "$BUILD/kc-plot" davis-grid --davis "$DIR/demo/davis" --sequence dots "${grid[@]}" --out "$DIR/figs" || exit 1
t3=$(now)
printf 'kc-plot sweep  (22 figures x 5 files): %.2f s\n' "$(echo "$t1 - $t0" | bc -l)"
printf 'kc-plot curves (1 figure x 5 files):   %.2f s\n' "$(echo "$t2 - $t1" | bc -l)"
printf 'kc-plot davis-grid (4 x 11 pictures):  %.2f s\n' "$(echo "$t3 - $t2" | bc -l)"
printf 'all figures: %.2f s for %d files  (target < 10 s)\n' "$(echo "$t3 - $t0" | bc -l)" "$(ls "$DIR/figs" | wc -l)"
t4=$(now)
"$BUILD/kc-table" "${sel[@]}" --out "$DIR/tables" --name sweep --only sweep --ledger "$DIR/none.tsv" >/dev/null 2>&1 || exit 1
t5=$(now)
printf 'baseline: kc-table, the sweep table of the same score files: %.2f s\n' "$(echo "$t5 - $t4" | bc -l)"
if command -v pdflatex >/dev/null; then
  d=$(cd "$DIR" && pwd)
  printf '%s\n' '\documentclass{article}\usepackage{pgfplots}\pgfplotsset{compat=1.16}\usepgfplotslibrary{groupplots}' \
    "\\newcommand{\\kcfigdir}{$d/figs}" '\begin{document}' "\\input{$d/figs/sweep-jaccard.tex}" '\end{document}' > "$DIR/one.tex"
  t6=$(now)
  (cd "$DIR" && pdflatex -interaction=nonstopmode -halt-on-error one.tex >/dev/null 2>&1) || echo "pdflatex failed (see $DIR/one.log)"
  t7=$(now)
  printf 'baseline: pdflatex compiling one sweep figure from its pgfplots fragment: %.2f s (x 23 figures = %.0f s)\n' \
    "$(echo "$t7 - $t6" | bc -l)" "$(echo "($t7 - $t6) * 23" | bc -l)"
else
  echo "baseline: pdflatex absent (make deps-tex); skipped"
fi
