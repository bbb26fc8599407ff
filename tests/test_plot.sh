#!/usr/bin/env bash
# kc-plot end to end on synthetic score files (tests/plot_fixture.sh): the data CSV beside every
# figure recomputed here from the score files with awk; the chosen setting equals kc-table
# --print-best; PDFs have one page of the expected size (pdfinfo, skipped when absent); the same
# inputs give the same bytes; `make figures` draws, skips and redraws; bad input gets its exact
# one-line error and writes nothing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PLOT=$BUILD/kc-plot
plot() { timeout 120 "$PLOT" "$@"; }
d=$(tmpdir plot)
S=t0.15-bin-mean-corners-n3
NETS=(dino run2-e10 run2-e05 run3-e05)

if [ ! -x "$PLOT" ]; then bad "$PLOT not built"; done_tests; exit 1; fi
if plot --help | grep -q "example:"; then ok; else bad "--help has no example"; fi
expect_fail "unknown figure" "unknown figure 'bogus'" plot bogus
expect_fail "sweep without scores" "needs --scores" plot sweep --out "$d/x"

tests/plot_fixture.sh "$d/w" "${NETS[@]}" || { bad "fixture"; done_tests; exit 1; }
sweep_args=(); curve_args=()
for n in "${NETS[@]}"; do
  sweep_args+=(--scores "$n=$d/w/scores/$n/select")
  curve_args+=(--voc "$n=$d/w/scores/$n/val-$S" --davis "$n=$d/w/results/$n/davis17-val")
done
run() { local err; err=$(plot "$@" 2>&1 >/dev/null) && ok || bad "kc-plot $*: $err"; }
plot sweep "${sweep_args[@]}" --out "$d/f1" 2>"$d/sweep.log" && ok || bad "kc-plot sweep: $(cat "$d/sweep.log")"
run curves "${curve_args[@]}" --nets-ini "$d/w/nets.ini" --published configs/published.ini --out "$d/f1"
run sweep "${sweep_args[@]}" --out "$d/f2"
run curves "${curve_args[@]}" --nets-ini "$d/w/nets.ini" --published configs/published.ini --out "$d/f2"

# every file of every figure, and the same bytes twice
for base in sweep-jaccard sweep-corloc curves $(for n in "${NETS[@]}"; do echo "sweep-$n-jaccard sweep-$n-corloc"; done); do
  for e in pdf svg png tex csv; do
    if [ -s "$d/f1/$base.$e" ] && cmp -s "$d/f1/$base.$e" "$d/f2/$base.$e"; then ok; else bad "$base.$e missing or not byte-identical across runs"; fi
  done
done

# the sweep CSVs, recomputed: per network the values of its summary.csv, and their mean
sweep_csv() { # sweep_csv COLUMN(3 jaccard, 4 corloc) SUMMARY...
  local col=$1; shift
  awk -F, -v col="$col" -v nf="$#" '
    FNR == 1 { f++; next }
    { split($1, p, "-"); tau = substr(p[1], 2); key = p[2] "_" p[3] "_" p[4] "_" p[5]
      v[tau, key] += $col; have[tau, key]++; taus[tau] = 1 }
    END {
      split("bin wtd", E, " "); split("mean zero", P, " "); split("seed corners minority", R, " ")
      hdr = "tau"
      for (e = 1; e <= 2; e++) for (s = 1; s <= 2; s++) for (r = 1; r <= 3; r++) for (n = 1; n <= 3; n++)
        { k[++nk] = E[e] "_" P[s] "_" R[r] "_n" n; hdr = hdr "," k[nk] }
      print hdr
      nt = 0; for (t in taus) T[++nt] = t
      for (i = 1; i <= nt; i++) for (j = i + 1; j <= nt; j++) if (T[j] + 0 < T[i] + 0) { x = T[i]; T[i] = T[j]; T[j] = x }
      for (i = 1; i <= nt; i++) {
        line = T[i]
        for (c = 1; c <= nk; c++) {
          kk = k[c]; sub(/_n/, "_n", kk)
          line = line "," (have[T[i], kk] == nf ? sprintf("%.9g", v[T[i], kk] / nf) : "nan")
        }
        print line
      }
    }' "$@"
}
all_summaries=()
for n in "${NETS[@]}"; do
  all_summaries+=("$d/w/scores/$n/select/summary.csv")
  sweep_csv 3 "$d/w/scores/$n/select/summary.csv" > "$d/exp.csv"
  if cmp -s "$d/exp.csv" "$d/f1/sweep-$n-jaccard.csv"; then ok; else bad "sweep-$n-jaccard.csv differs from $n's summary.csv: $(diff "$d/exp.csv" "$d/f1/sweep-$n-jaccard.csv" | head -3)"; fi
  sweep_csv 4 "$d/w/scores/$n/select/summary.csv" > "$d/exp.csv"
  if cmp -s "$d/exp.csv" "$d/f1/sweep-$n-corloc.csv"; then ok; else bad "sweep-$n-corloc.csv differs from $n's summary.csv"; fi
done
sweep_csv 3 "${all_summaries[@]}" > "$d/exp.csv"
if cmp -s "$d/exp.csv" "$d/f1/sweep-jaccard.csv"; then ok; else bad "sweep-jaccard.csv is not the mean of the networks: $(diff "$d/exp.csv" "$d/f1/sweep-jaccard.csv" | head -3)"; fi
sweep_csv 4 "${all_summaries[@]}" > "$d/exp.csv"
if cmp -s "$d/exp.csv" "$d/f1/sweep-corloc.csv"; then ok; else bad "sweep-corloc.csv is not the mean of the networks"; fi

# the chosen setting is kc-table's
best=$("$BUILD/kc-table" --print-best $(for n in "${NETS[@]}"; do echo "$d/w/scores/$n/select"; done) 2>/dev/null)
said=$(sed -n 's/.*chosen setting \([^ ]*\)$/\1/p' "$d/sweep.log")
if [ -n "$best" ] && [ "$best" = "$said" ]; then ok; else bad "chosen setting '$said', kc-table --print-best '$best'"; fi
if grep -q "coordinates {(${best:1:4}," "$d/f1/sweep-jaccard.tex"; then ok; else bad "the chosen setting is not marked in sweep-jaccard.tex"; fi
# ... and the report's: kc-table without --setting, all but run3-e05 baselines, chooses what the star
# marks (run3-e05's best Jaccard, the first of a tie), and the figure names the network that chose it
sel=(); for n in "${NETS[@]}"; do sel+=("$d/w/scores/$n/select"); done
base=(--baseline dino --baseline run2-e10 --baseline run2-e05)
own=$(awk -F, 'NR > 1 && (best == "" || $3 > max) { max = $3; best = $1 } END { print best }' "$d/w/scores/run3-e05/select/summary.csv")
"$BUILD/kc-table" "${sel[@]}" "${base[@]}" --out "$d/rep" --only report --ledger "$d/none.tsv" >/dev/null 2>"$d/rep.log"
reported=$(sed -n 's/^\\newcommand{\\kcReportSetting}{\(.*\)}$/\1/p' "$d/rep/report-macros.tex" | sed 's/\\_/_/g')
plot sweep "${sweep_args[@]}" "${base[@]}" --out "$d/f3" 2>"$d/sweep3.log"
said=$(sed -n 's/.*chosen setting \([^ ]*\)$/\1/p' "$d/sweep3.log")
if [ -n "$own" ] && [ "$reported" = "$own" ] && [ "$said" = "$own" ]; then ok; else bad "with baselines: star '$said', report '$reported', run3-e05's best '$own'; $(cat "$d/rep.log")"; fi
if grep -qF "chosen: $said, the best mean Jaccard of run3-e05 (the report's setting)" "$d/f3/sweep-jaccard.tex" &&
   grep -q "coordinates {(${said:1:4}," "$d/f3/sweep-dino-corloc.tex"; then ok; else bad "sweep-jaccard.tex does not name the chooser: $(grep 'chosen:' "$d/f3/sweep-jaccard.tex")"; fi
expect_exact "sweep: unknown baseline" "kc-plot: error: --baseline zz: no score folder of network 'zz'" \
  plot sweep "${sweep_args[@]}" --baseline zz --out "$d/bad0"

# the curves CSV, recomputed from nets.ini, the val summaries and the DAVIS results
{
  echo "network,run,epoch,voc_jaccard,voc_corloc,davis_jf"
  for n in "${NETS[@]}"; do
    run=$(awk -v s="[$n]" '$0 == s { in_s = 1; next } /^\[/ { in_s = 0 } in_s && $1 == "run" { print $3 }' "$d/w/nets.ini")
    ep=$(awk -v s="[$n]" '$0 == s { in_s = 1; next } /^\[/ { in_s = 0 } in_s && $1 == "epoch" { print $3 }' "$d/w/nets.ini")
    vals=$(awk -F, 'NR == 2 { printf "%.9g,%.9g", $3, $4 }' "$d/w/scores/$n/val-$S/summary.csv")
    jf=$(awk -F, 'NR == 2 { printf "%.9g", $1 }' "$d/w/results/$n/davis17-val/global_results-val.csv")
    first=0; [ -n "$run" ] && first=$(for m in "${NETS[@]}"; do echo "$m"; done | grep -n "^$run-" | head -n 1 | cut -d: -f1)
    printf '%d %s %s\t%s,%s,%s,%s,%s\n' "$([ -n "$run" ] && echo 0 || echo 1)" "$(printf %04d "$first")" "$(printf %08d "${ep:-0}")" "$n" "$run" "$ep" "$vals" "$jf"
  done | sort -s -k1,1n -k2,2 -k3,3 | cut -f2
} > "$d/exp.csv"
if cmp -s "$d/exp.csv" "$d/f1/curves.csv"; then ok; else bad "curves.csv differs from the score files: $(diff "$d/exp.csv" "$d/f1/curves.csv" | head -4)"; fi
if grep -q "61.8" "$d/f1/curves.tex" && grep -q "SelfPatch" "$d/f1/curves.tex"; then ok; else bad "published lines missing from curves.tex"; fi

# PDFs: one page of the expected size
if need "PDF page checks" pdfinfo; then
  for f in sweep-jaccard:"460 x 390 pts" curves:"460 x 200 pts" sweep-dino-corloc:"460 x 390 pts"; do
    info=$(pdfinfo "$d/f1/${f%%:*}.pdf" 2>&1)
    if grep -q "^Pages: *1$" <<<"$info" && grep -q "^Page size: *${f#*:}" <<<"$info"; then ok; else bad "${f%%:*}.pdf: $(grep -E 'Pages|Page size|Error' <<<"$info")"; fi
  done
fi

# bad input: exact one-line errors, nothing written
expect_exact() { # expect_exact what "message" cmd...
  local what=$1 want=$2; shift 2
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 0 ] && [ "$err" = "$want" ]; then ok; else bad "$what (rc=$rc): got '$err', want '$want'"; fi
}
expect_exact "network with no scores" \
  "kc-plot: error: network ghost has no scores yet: $d/w/scores/ghost/select/summary.csv does not exist (run make sweep first)" \
  plot sweep "${sweep_args[@]}" --scores "ghost=$d/w/scores/ghost/select" --out "$d/bad1"
if [ ! -e "$d/bad1" ]; then ok; else bad "a failed sweep wrote $d/bad1"; fi
sed 's/^epoch = 10$/epoch = ten/' "$d/w/nets.ini" > "$d/nets-ten.ini"
line=$(grep -n '^epoch = ten$' "$d/nets-ten.ini" | cut -d: -f1)
expect_exact "epoch not a number" "kc-plot: error: $d/nets-ten.ini:$line: network run2-e10: epoch 'ten' is not a number" \
  plot curves "${curve_args[@]}" --nets-ini "$d/nets-ten.ini" --out "$d/bad2"
sed 's/^epoch = 10$/epoch = 5/' "$d/w/nets.ini" > "$d/nets-dup.ini"
line=$(awk '/^\[run2-e05\]/ { s = 1 } s && /^epoch = 5$/ { print NR; exit }' "$d/nets-dup.ini")
expect_exact "two networks of one run with one epoch" \
  "kc-plot: error: $d/nets-dup.ini:$line: networks run2-e10 and run2-e05 of run run2 both have epoch 5" \
  plot curves "${curve_args[@]}" --nets-ini "$d/nets-dup.ini" --out "$d/bad3"
expect_exact "curves: network with no val scores" \
  "kc-plot: error: network ghost has no scores yet: $d/w/scores/ghost/val-$S/summary.csv does not exist (run make report first)" \
  plot curves --voc "ghost=$d/w/scores/ghost/val-$S" --nets-ini "$d/w/nets.ini" --out "$d/bad4"
if [ ! -e "$d/bad2" ] && [ ! -e "$d/bad3" ] && [ ! -e "$d/bad4" ]; then ok; else bad "a failed curves run wrote its folder"; fi
printf '[x]\nlabel = X\nmetric = miou\nvalue = 50\n' > "$d/pub.ini"
expect_fail "published: unknown metric" "pub.ini:3: metric 'miou' is not voc_jaccard" \
  plot curves "${curve_args[@]}" --nets-ini "$d/w/nets.ini" --published "$d/pub.ini" --out "$d/bad5"

# make figures: draws, then nothing to do, then redraws what a changed score file feeds
mk() { make --no-print-directory BUILD="$BUILD" OUT="$d/w" NETS="${NETS[*]}" NETS_INI="$d/w/nets.ini" FIGURES="$d/figs" SETTING=$S "$@"; }
if out=$(mk figures 2>&1) && [ -s "$d/figs/sweep-jaccard.pdf" ] && [ -s "$d/figs/curves.csv" ]; then ok; else bad "make figures: $(tail -n 3 <<<"$out")"; fi
out=$(mk figures 2>&1)
if ! grep -q "kc-plot" <<<"$out"; then ok; else bad "make figures redrew up-to-date figures: $out"; fi
f=$d/w/scores/run2-e05/val-$S/summary.csv; touch "$f"   # newer than the figure (1 s file times: once that second has passed)
for _ in $(seq 30); do [ "$f" -nt "$d/figs/curves.pdf" ] && break; sleep 0.1; touch "$f"; done
out=$(mk figures 2>&1)
if grep -q "kc-plot curves" <<<"$out" && ! grep -q "kc-plot sweep" <<<"$out"; then ok; else bad "after a val score changed, make figures ran: $(grep kc-plot <<<"$out")"; fi
# kind = baseline in nets.ini reaches the sweep figure (pipeline.mk's CHOICE_OPTS, as SETTING=best)
sed 's|^weights = checkpoints/dino.pth$|&\nkind = baseline|' "$d/w/nets.ini" > "$d/nets-base.ini"
plan=$(mk NETS_INI="$d/nets-base.ini" FIGURES="$d/figs-base" SETTING=best -n figures 2>&1)
if grep -q -- "kc-plot sweep .* --baseline dino *--out $d/figs-base" <<<"$plan"
then ok; else bad "make figures does not tell kc-plot sweep the baselines: $(grep -E 'kc-plot sweep' <<<"$plan")"; fi
out=$(mk NETS="${NETS[*]} ghost" figures 2>&1)
# (a network nets.ini does not name stops make before kc-plot, one line naming the section)
if grep -q "pipeline: NETS: $d/w/nets.ini has no section \[ghost\]" <<<"$out" && [ "$(grep -c . <<<"$out")" = 1 ]; then ok; else bad "make figures with a network nets.ini lacks: $out"; fi
done_tests
