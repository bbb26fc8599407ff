#!/usr/bin/env bash
# configs/corloc-table.sh [--sets "DATASET..."] TABLES PUBLISHED_INI TAG CORLOC_DIR NET...   (called by `make corloc`)
# Writes TABLES/corloc.{csv,md,tex}: one row per network (its setting id, "published" for the
# published rows) with CorLoc (%) per dataset column (voc07, voc12, coco20k; empty when not run),
# read from CORLOC_DIR/<net>/<dataset>/scores-<TAG>/summary.csv (TAG = setting id, "-raw" when
# CENTER=0): with --sets, of those datasets only, each summary required (`make corloc` names the
# request's, so that a score folder of an earlier request never reaches the table); without, of
# every dataset whose summary exists.  Then the rows of PUBLISHED_INI, labelled as published, with
# their sources.  The CSV is data: our CorLoc there is 100 x the summary's fraction, exactly (its
# decimal point moved); Markdown and LaTeX round to 0.1.  Each file is written to a temporary name
# and renamed.
set -eu -o pipefail
sets="voc07 voc12 coco20k" only=
if [ "${1:-}" = --sets ]; then only=" $2 "; shift 2; fi
tables=$1 ini=$2 tag=$3 dir=$4; shift 4
mkdir -p "$tables"
rows=$(mktemp)
trap 'rm -f "$rows" "$tables"/corloc.*.tmp$$' EXIT
setting=${tag%-raw}
# pct FRACTION: 100 x the fraction as text, exactly (kc-score writes %.9g: 0.688311688 -> 68.8311688,
# 5.04617248e-05 -> 0.00504617248)
pct_awk='function pct(s,   e, neg, dot, ip, fp, digits, point) {
  e = 0
  if (match(s, /[eE]/)) { e = substr(s, RSTART + 1) + 0; s = substr(s, 1, RSTART - 1) }
  neg = substr(s, 1, 1) == "-"; if (neg) s = substr(s, 2)
  dot = index(s, "."); if (dot) { ip = substr(s, 1, dot - 1); fp = substr(s, dot + 1) } else { ip = s; fp = "" }
  digits = ip fp; point = length(ip) + e + 2
  while (point > length(digits)) digits = digits "0"
  while (point < 1) { digits = "0" digits; point++ }
  ip = substr(digits, 1, point); fp = substr(digits, point + 1)
  sub(/^0+/, "", ip); if (ip == "") ip = "0"; sub(/0+$/, "", fp)
  return (neg ? "-" : "") ip (fp == "" ? "" : "." fp)
}'
for net in "$@"; do
  line="$net|$tag" shown=
  for d in $sets; do
    f=$dir/$net/$d/scores-$tag/summary.csv v= r=
    if [ -n "$only" ]; then
      case $only in *" $d "*) [ -f "$f" ] || { echo "corloc-table: $f: no such file" >&2; exit 1; } ;; *) f= ;; esac
    fi
    if [ -n "$f" ] && [ -f "$f" ]; then
      v=$(awk -F, -v s="$setting" "$pct_awk"' NR>1 && $1==s { printf "%s|%.1f", pct($4), 100*$4; found=1 } END { exit !found }' "$f") \
        || { echo "corloc-table: $f has no row for $setting" >&2; exit 1; }
      r=${v#*|} v=${v%|*}
    fi
    line="$line|$v" shown="$shown|$r"
  done
  printf '%s|%s%s\n' "$line" "keycut" "$shown" >>"$rows"
done
# published rows: label, voc07, voc12, coco20k, source, then the same three numbers as shown
awk -F'=' '
  function flush() { if (label != "") print label "|published|" v["voc07"] "|" v["voc12"] "|" v["coco20k"] "|" src \
                                           "|" v["voc07"] "|" v["voc12"] "|" v["coco20k"] }
  /^[ \t]*[#;]/ || /^[ \t]*$/ { next }
  /^\[/ { flush(); label=""; src=""; delete v; next }
  { k=$1; val=substr($0, index($0, "=") + 1); gsub(/^[ \t]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", val)
    if (k == "label") label = val; else if (k == "source") src = val; else v[k] = val }
  END { flush() }' "$ini" >>"$rows"

csv=$tables/corloc.csv.tmp$$ md=$tables/corloc.md.tmp$$ tex=$tables/corloc.tex.tmp$$
{ echo "network,setting,voc07,voc12,coco20k,source"
  awk -F'|' '{ s=$6; gsub(/"/, "\"\"", s); printf "\"%s\",%s,%s,%s,%s,\"%s\"\n", $1, $2, $3, $4, $5, s }' "$rows"; } >"$csv"
{ echo "| network | setting | VOC07 | VOC12 | COCO20k |"
  echo "|---|---|---:|---:|---:|"
  awk -F'|' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $7, $8, $9 }' "$rows"
  echo
  echo "CorLoc (%), boxes only, LOST/TokenCut protocol (docs/corloc.md); published rows: $ini."; } >"$md"
{ echo "% CorLoc (%), written by configs/corloc-table.sh; published rows from $ini"
  echo "\\begin{tabular}{llrrr}"
  echo "\\toprule"
  echo "network & setting & VOC07 & VOC12 & COCO20k \\\\"
  echo "\\midrule"
  awk -F'|' '{ n=$1; gsub(/_/, "\\_", n); gsub(/&/, "\\&", n); gsub(/%/, "\\%", n)
               for (i = 7; i <= 9; i++) if ($i == "") $i = "--"
               printf "%s & %s & %s & %s & %s \\\\\n", n, $2, $7, $8, $9 }' "$rows"
  echo "\\bottomrule"
  echo "\\end{tabular}"; } >"$tex"
mv "$csv" "$tables/corloc.csv"; mv "$md" "$tables/corloc.md"; mv "$tex" "$tables/corloc.tex"
