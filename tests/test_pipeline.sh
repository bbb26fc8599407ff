#!/usr/bin/env bash
# The make pipeline end to end on generated data: the demo's numbers above a floor a broken decoder
# would miss; `make -j2 demo SHARDS=4` gives every score, result and table file of plain (-j1)
# `make demo`, byte for byte (two networks: -j2 identical to -j1, shards identical to one run), the
# shards removed after kc-merge --remove-shards verified each merge (KEEP_SHARDS=1 keeps them) and a
# rerun runs no stage; exactly the dependent steps re-run after a config edit.
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
  grep -Eq '^random,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,baseline$' "$csv" && ok || bad "no random baseline row in $csv: $(cat "$csv")"
  # the linear probe's column (kc-probe on the scenes' class labels), a fraction above zero
  probe=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["probe_miou"]}' "$csv")
  awk -v p="$probe" 'BEGIN{exit !(p > 0 && p <= 1)}' && ok || bad "demo probe mIoU '$probe' (want a fraction in (0, 1])"
  for f in sweep-jaccard sweep-color-corloc curves grid-voc grid-davis; do [ -s "$T/demo/figures/$f.pdf" ] && [ -s "$T/demo/figures/$f.png" ] || bad "demo figure $f missing"; done; ok
  [ "$(grep -c ',color,' "$T/demo/figures/grid-voc.csv")" = 4 ] && ok || bad "grid-voc.csv: $(cat "$T/demo/figures/grid-voc.csv")"
else
  bad "no $csv"
fi

# 2. make -j2 demo SHARDS=4 gives the files of plain make demo (-j1), two networks (color, random)
M4="$M -j2 SHARDS=4 DEMO_DIR=$T/d4 DEMO_TABLES=$T/t4"
if [ -f "$csv" ] && $M4 demo >"$T/d4.log" 2>&1; then
  n=0; n_csv=0; diffs=0
  while IFS= read -r f; do
    n=$((n + 1)); case $f in *.csv) n_csv=$((n_csv + 1));; esac
    cmp -s "$T/demo/$f" "$T/d4/$f" || { diffs=$((diffs + 1)); echo "differs: $f" >&2; }
  done < <(cd "$T/demo" && find scores tables results -type f \( -name '*.csv' -o -name '*.png' \) | sort)
  # (the tables name their VOC root and selection list, paths below each DEMO_DIR: read as DIR)
  for f in "$T"/tables/*; do n=$((n + 1)); cmp -s <(sed "s|$T/demo|DIR|g" "$f") <(sed "s|$T/d4|DIR|g" "$T/t4/${f##*/}") || { diffs=$((diffs + 1)); echo "differs: $f" >&2; }; done
  echo "make -j2 demo SHARDS=4 vs plain make demo: $n files ($n_csv score, result and table CSVs), $diffs differ"
  [ "$n_csv" -ge 290 ] && [ "$diffs" -eq 0 ] && ok || bad "SHARDS=4 -j2 vs plain: $diffs of $n files differ ($n_csv CSVs)"
  # the shards were removed after each verified merge, and a rerun does not make them again
  left=$(find "$T/d4/cache" -path '*.shards/*' | wc -l)
  [ "$left" = 0 ] && [ -f "$T/d4/cache/color/voc12-select/masks.h5" ] && ok || bad "SHARDS=4 left $left shard files"
  rerun=$($M4 demo --no-silent 2>&1 | grep -cE 'kc-(extract|center|decode|merge|propagate|score) ')
  [ "$rerun" = 0 ] && ok || bad "a rerun after the shards were removed ran $rerun stage commands"
  m=$(ls -d "$T"/d4/cache/color/voc12-val/masks-*.h5); st=${m##*/masks-}; st=${st%.h5}; rm "$m"
  $M SHARDS=4 KEEP_SHARDS=1 NETS=color VOC="$T/d4/data/voc" OUT="$T/d4" SPLITS="$T/d4/splits" SELECT_COUNT=16 SETTING="$st" "$m" >/dev/null 2>&1
  [ "$(ls "$T"/d4/cache/color/voc12-val/masks-*.h5.shards/ | wc -l)" = 4 ] && ok || bad "KEEP_SHARDS=1 did not keep the 4 shards"
else
  bad "make -j2 demo SHARDS=4 failed: $(tail -n 3 "$T/d4.log")"
fi

# 3. incremental: the grid touched without a change of bytes re-runs nothing (its recipe stamp holds
# its content's hash); an edit of it re-runs decode, score and tables only, and not the report
D=$T/demo
# (the demo's request: pipeline.mk's DEMO_ARGS and DEMO_PROBE_ARGS)
ARGS=("NETS=color random" NETS_INI=configs/demo-nets.ini VOC=$D/data/voc DAVIS=$D/data/davis OUT=$D SPLITS=$D/splits
      LEDGER=$D/ledger.tsv TABLES=$D/tables SELECT_COUNT=16 "CHOICE_OPTS=--baseline random" PROBE=1 PROBE_TRAIN=train
      PROBE_SIZE=224 "PROBE_OPTS=--batch 8")
cp configs/sweep.ini "$T/sweep.ini"
$M "${ARGS[@]}" GRID="$T/sweep.ini" "$D/tables/sweep.csv" >/dev/null 2>&1 || true   # settle on the copied grid
touch "$T/sweep.ini"
plan=$($M -n "${ARGS[@]}" GRID="$T/sweep.ini" "$D/tables/sweep.csv" 2>&1 | grep -o '^[^ ]*kc-[a-z]*' | sed 's|.*/||' | sort -u | tr '\n' ' ')
[ -z "$plan" ] && ok || bad "after touching the grid (same bytes), make would run: '$plan' (expected nothing)"
echo "# an edit" >> "$T/sweep.ini"
plan=$($M -n "${ARGS[@]}" GRID="$T/sweep.ini" "$D/tables/sweep.csv" 2>&1 | grep -o '^[^ ]*kc-[a-z]*' | sed 's|.*/||' | sort -u | tr '\n' ' ')
[ "$plan" = "kc-decode kc-score kc-table " ] && ok || bad "after editing the grid, make would run: '$plan' (expected kc-decode kc-score kc-table)"
st=$(ls "$D"/cache/color/voc12-val/masks-t*.h5 | head -n 1); st=${st##*/masks-}; st=${st%.h5}
plan=$($M -n "${ARGS[@]}" GRID="$T/sweep.ini" SETTING="$st" "$D/tables/report.csv" 2>&1 | grep -o '^[^ ]*kc-[a-z]*' | sed 's|.*/||' | sort -u | tr '\n' ' ')
[ -z "$plan" ] && ok || bad "the report does not depend on the grid, yet make would run: '$plan'"

done_tests
