#!/usr/bin/env bash
# tests/plot_fixture.sh DIR NETS... — synthetic score files for kc-plot's tests and benchmark.
# Writes, per network NET (values from a fixed-seed awk generator; any fractions will do, the
# tests recompute what the figures should hold from these files):
#   DIR/scores/NET/select/summary.csv   the 144 settings of configs/sweep.ini
#   DIR/scores/NET/val-t0.15-bin-mean-corners-n3/summary.csv   one setting
#   DIR/results/NET/davis17-val/global_results-val.{csv,json}  a DAVIS global results line (3 decimals)
#                                                               and, as kc-davis writes it, the JSON
# (the layout pipeline.mk uses under OUT=DIR)
# and DIR/nets.ini: a network named <run>-e<epoch> (e.g. run2-e05) gets `run = <run>` and
# `epoch = <epoch>`; any other name is a baseline section without them.
set -eu -o pipefail
dir=$1; shift
mkdir -p "$dir"
: > "$dir/nets.ini"
seed=1
for net in "$@"; do
  seed=$((seed + 1))
  val=$dir/scores/$net/val-t0.15-bin-mean-corners-n3
  mkdir -p "$dir/scores/$net/select" "$val" "$dir/results/$net/davis17-val"
  echo "$net" > "$dir/scores/$net/select/network"
  awk -v seed="$seed" 'BEGIN {
    srand(seed); print "setting,images,jaccard,corloc"
    split("0.10 0.15 0.20 0.25", tau, " "); split("bin wtd", ed, " "); split("mean zero", sp, " ")
    split("seed corners minority", ru, " ")
    for (t = 1; t <= 4; t++) for (e = 1; e <= 2; e++) for (s = 1; s <= 2; s++) for (r = 1; r <= 3; r++)
      for (n = 1; n <= 3; n++) {
        j = 0.30 + 0.02 * seed + 0.05 * r - 0.03 * n + 0.04 * t * (e - 1.5) + 0.05 * rand()
        c = 0.40 + 0.02 * seed + 0.04 * r - 0.02 * n + 0.05 * rand()
        printf "t%s-%s-%s-%s-n%d,1000,%.9g,%.9g\n", tau[t], ed[e], sp[s], ru[r], n, j, c
      }
  }' | sort -t, -k1,1 > "$dir/scores/$net/select/summary.csv.tmp"
  { echo "setting,images,jaccard,corloc"; grep -v '^setting,' "$dir/scores/$net/select/summary.csv.tmp"; } \
    > "$dir/scores/$net/select/summary.csv"
  rm "$dir/scores/$net/select/summary.csv.tmp"
  awk -v seed="$seed" 'BEGIN { srand(100 + seed); print "setting,images,jaccard,corloc"
    printf "t0.15-bin-mean-corners-n3,1449,%.9g,%.9g\n", 0.35 + 0.01 * seed + 0.05 * rand(), 0.45 + 0.01 * seed + 0.05 * rand() }' \
    > "$val/summary.csv"
  awk -v seed="$seed" -v json="$dir/results/$net/davis17-val/global_results-val.json" 'BEGIN { srand(200 + seed)
    print "J&F-Mean,J-Mean,J-Recall,J-Decay,F-Mean,F-Recall,F-Decay"
    jf = 0.50 + 0.01 * seed + 0.05 * rand(); printf "%.3f,%.3f,0.700,0.100,%.3f,0.800,0.100\n", jf, jf - 0.02, jf + 0.02
    printf "{\n \"global\": {\n  \"J&F-Mean\": %.17g,\n  \"J-Mean\": %.17g,\n  \"J-Recall\": 0.7,\n  \"J-Decay\": 0.1,\n" \
      "  \"F-Mean\": %.17g,\n  \"F-Recall\": 0.8,\n  \"F-Decay\": 0.1\n },\n \"per_object\": {\n },\n \"per_frame\": {\n }\n}\n",
      jf, jf - 0.02, jf + 0.02 > json }' \
    > "$dir/results/$net/davis17-val/global_results-val.csv"
  if [[ $net =~ ^(.+)-e0*([0-9]+)$ ]]; then
    printf '[%s]\nweights = checkpoints/%s/checkpoint%s.pth\nrun = %s\nepoch = %s\n\n' "$net" "${BASH_REMATCH[1]}" \
      "${BASH_REMATCH[2]}" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" >> "$dir/nets.ini"
  else
    printf '[%s]\nweights = checkpoints/%s.pth\n\n' "$net" "$net" >> "$dir/nets.ini"
  fi
done
