#!/usr/bin/env bash
# The make pipeline end to end on generated data: the demo's numbers above a floor a broken decoder
# would miss, exactly the dependent steps re-run after a config edit, -j2 identical to -j1.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir pipeline)
export KC_QUIET=1
# under the sanitizer suite (BUILD=x-san, KC_SANITIZE=1) make must be told SANITIZE=1 and the base name
if [ "${KC_SANITIZE:-}" = 1 ]; then M="make --no-print-directory -s SANITIZE=1 BUILD=${BUILD%-san}"
else M="make --no-print-directory -s BUILD=$BUILD"; fi

# 1. the demo, in a scratch folder
if $M demo DEMO_DIR="$T/demo" DEMO_TABLES="$T/tables" >"$T/demo.log" 2>&1; then ok; else bad "make demo failed: $(tail -n 5 "$T/demo.log")"; fi
csv=$T/tables/demo.csv
if [ -f "$csv" ]; then
  ok
  # floor: the colour baseline finds the generated objects (Jaccard ~0.7); an all-foreground or
  # empty decoder scores below 0.3, a transposed grid far below 0.5.
  read -r jac corloc jf <<<"$(/usr/bin/env awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["voc_jaccard"]+0, $h["voc_corloc"]+0, ($h["davis_jf"]==""?0:$h["davis_jf"]+0)}' "$csv")"
  echo "demo: VOC Jaccard $jac, CorLoc $corloc, DAVIS J&F $jf"
  awk -v j="$jac" 'BEGIN{exit !(j >= 0.55)}' && ok || bad "demo Jaccard $jac below the floor 0.55"
  awk -v j="$jf" 'BEGIN{exit !(j >= 0.6)}' && ok || bad "demo DAVIS J&F $jf below the floor 0.6"
  [ -s "$T/tables/demo.md" ] && [ -s "$T/tables/demo.tex" ] && [ -s "$T/tables/demo-sweep.md" ] && ok || bad "demo tables missing"
  ls "$T"/demo/shows/*.png >/dev/null 2>&1 && ok || bad "no overlay pictures"
  # the random-weights baseline (kc-init toy/16) beside color, marked as a baseline
  grep -Eq '^random,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,baseline$' "$csv" && ok || bad "no random baseline row in $csv: $(cat "$csv")"
  for f in sweep-jaccard sweep-color-corloc curves grid-voc grid-davis; do [ -s "$T/demo/figures/$f.pdf" ] && [ -s "$T/demo/figures/$f.png" ] || bad "demo figure $f missing"; done; ok
  [ "$(grep -c ',color,' "$T/demo/figures/grid-voc.csv")" = 4 ] && ok || bad "grid-voc.csv: $(cat "$T/demo/figures/grid-voc.csv")"
else
  bad "no $csv"
fi

# 2. incremental: touching the decoder config re-runs decode, score and tables only
D=$T/demo
ARGS=(NETS=color VOC=$D/data/voc DAVIS=$D/data/davis OUT=$D SPLITS=$D/splits LEDGER=$D/ledger.tsv TABLES=$D/tables SELECT_COUNT=16)
cp configs/sweep.ini "$T/sweep.ini"
$M "${ARGS[@]}" GRID="$T/sweep.ini" "$D/tables/sweep.csv" >/dev/null 2>&1 || true   # settle on the copied grid
sleep 1; touch "$T/sweep.ini"
plan=$($M -n "${ARGS[@]}" GRID="$T/sweep.ini" "$D/tables/sweep.csv" "$D/tables/report.csv" 2>&1 | grep -o 'kc-[a-z]*' | sort -u | tr '\n' ' ')
[ "$plan" = "kc-decode kc-score kc-table " ] && ok || bad "after touching the grid, make would run: '$plan' (expected kc-decode kc-score kc-table)"
plan=$($M -n "${ARGS[@]}" GRID="$T/sweep.ini" "$D/tables/report.csv" 2>&1 | grep -o 'kc-[a-z]*' | sort -u | tr '\n' ' ')
[ -z "$plan" ] && ok || bad "the report does not depend on the grid, yet make would run: '$plan'"

# 3. make -j2 gives byte-identical CSVs to make -j1 (two networks)
printf '[color]\nmodel = color\n[color8]\nmodel = color\noptions = --patch 32\n' > "$T/nets.ini"
for j in 1 2; do
  O=$T/j$j
  $M -j$j NETS="color color8" NETS_INI="$T/nets.ini" VOC=$D/data/voc OUT=$O SPLITS=$O/splits LEDGER=$O/ledger.tsv \
     TABLES=$O/tables SELECT_COUNT=16 "$O/tables/sweep.csv" >"$T/j$j.log" 2>&1 || bad "make -j$j sweep failed: $(tail -n 3 "$T/j$j.log")"
done
n=0; diffs=0
for f in $(cd "$T/j1" && find scores tables -name '*.csv' | sort); do
  n=$((n + 1)); cmp -s "$T/j1/$f" "$T/j2/$f" || { diffs=$((diffs + 1)); echo "differs: $f" >&2; }
done
echo "-j1 vs -j2: $n CSV files compared, $diffs differ"
[ "$n" -ge 290 ] && [ "$diffs" -eq 0 ] && ok || bad "-j2 vs -j1: $diffs of $n CSVs differ"
done_tests
