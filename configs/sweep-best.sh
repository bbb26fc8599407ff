#!/usr/bin/env bash
# configs/sweep-best.sh DIR N [--baseline NET]... — what `make sweep` prints (pipeline.mk): the line
# saying what DIR/sweep.md is of, its header and its N best rows by the selection rule (the mean
# Jaccard over the networks that choose, eval/tables/setting_choice.h: the baselines left out unless
# every network is one; a setting not scored for all of them is not ranked), best first, then one
# line saying where the whole table is.  The rows are sweep.md's own (bold marks as there).
set -eu -o pipefail
dir=$1 n=$2; shift 2
base=" "
while [ $# -gt 0 ]; do
  if [ "$1" = --baseline ] && [ $# -ge 2 ]; then base+="$2 "; shift 2; else shift; fi
done
csv=$dir/sweep.csv md=$dir/sweep.md
ranked=$(awk -F, -v base="$base" '
  NR == 1 { for (j = 2; j <= NF; j++) if ($j ~ /_jaccard$/) { net = substr($j, 1, length($j) - 8); jac[j] = 1; isb[j] = index(base, " " net " ") > 0; nb += isb[j]; nj++ }
            all = nb == nj; next }
  { s = 0; k = 0; ok = 1
    for (j in jac) if (all || !isb[j]) { if ($j == "") ok = 0; s += $j; k++ }
    if (ok && k) printf "%.9f\t%d\t%s\n", s / k, NR, $1 }' "$csv" | sort -t "$(printf '\t')" -k1,1gr -k2,2n | cut -f3)
total=$(($(wc -l <"$csv") - 1))
top=$(head -n "$n" <<<"$ranked")
awk -v top="$top" 'BEGIN { m = split(top, t, "\n"); for (i = 1; i <= m; i++) r[t[i]] = i }
  !body { print; body = /^\|---/; next }
  /^\| / { s = $2; if (s in r) row[r[s]] = $0 }
  END { for (i = 1; i <= m; i++) if (i in row) print row[i] }' "$md"
k=$(grep -c . <<<"$top" || true)
echo "sweep: the $k best of $total setting$([ "$total" = 1 ] || echo s) above, by mean Jaccard; the whole table: $md (and .csv, .tex)"
