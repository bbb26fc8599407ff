#!/usr/bin/env bash
# tests/snapshot-diff.sh [-q] A B — compares two folders written by tests/snapshot.sh, file by file.
# Prints one line per file (-q: only the files that are not byte-identical) and a summary:
#   identical      PATH   the same bytes
#   normalised     PATH   the same once the things that legitimately differ are replaced (listed)
#   h5-same        PATH   HDF5 bytes differ, but h5dump shows the same groups, datasets, values and
#                         attributes (after the same normalisation): file layout only
#   h5-attrs       PATH   HDF5 datasets identical; only attributes differ (named, with both values)
#   DIFFERENT      PATH   content differs (first differing lines shown; HDF5: the datasets named)
#   ONLY-IN-A/B    PATH
# Normalised (each side with the values its SNAPSHOT.txt records): the tree's absolute path -> <TREE>,
# the shared data's path -> <SHARED>, the git commit (40 hex digits, or a prefix of 7 or more) ->
# <COMMIT>, each repository path listed as "path NAME: value" (config files and the CorLoc test
# fixture, whose paths HDF5 provenance and table notes record) -> <NAME>, and in ledger files (first line "#keycut-ledger") the time column -> <TIME> (kc-score,
# kc-probe and kc-table write the wall-clock time there, SOURCE_DATE_EPOCH or not).
# Not compared: A/_raw/ (raw logs, timings), SNAPSHOT.txt, FILES.sha256, and the make pipeline's stat
# caches (.recipes/.hashes.tsv: each input's inode and times beside its hash, which differ per checkout).  HDF5 comparison uses h5dump
# (Debian package hdf5-tools); without it, differing .h5 files are reported as DIFFERENT (bytes).
# Exit status 0 when every file is identical, normalised or h5-same; 1 otherwise (h5-attrs included:
# an attribute such as content_hash is a real change); 2 on bad usage.
set -euo pipefail
quiet=0
[ "${1:-}" = -q ] && { quiet=1; shift; }
[ $# -eq 2 ] || { echo "usage: tests/snapshot-diff.sh [-q] A B" >&2; exit 2; }
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd)
for d in "$A" "$B"; do [ -f "$d/SNAPSHOT.txt" ] || { echo "snapshot-diff: $d has no SNAPSHOT.txt (not a snapshot)" >&2; exit 2; }; done
meta() { sed -n "s/^$2: //p" "$1/SNAPSHOT.txt" | head -n 1; }
have_h5dump=0; command -v h5dump >/dev/null && have_h5dump=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

echo "A: $A  (commit $(meta "$A" commit), tree $(meta "$A" tree), $(meta "$A" taken))"
echo "B: $B  (commit $(meta "$B" commit), tree $(meta "$B" tree), $(meta "$B" taken))"
[ "$(meta "$A" benches)" = "$(meta "$B" benches)" ] || echo "note: benches differ: A '$(meta "$A" benches)', B '$(meta "$B" benches)'"
[ "$(meta "$A" SOURCE_DATE_EPOCH)" = "$(meta "$B" SOURCE_DATE_EPOCH)" ] || echo "note: SOURCE_DATE_EPOCH differs"
[ $have_h5dump = 1 ] || echo "note: h5dump not found (apt-get install hdf5-tools): HDF5 files compared as bytes only"

# norm SIDE(A|B) FILE > normalised text; the names of the rules that changed something go to $tmp/rules.SIDE
norm() {
  local side=$1 f=$2 dir tree shared commit
  [ "$side" = A ] && dir=$A || dir=$B
  tree=$(meta "$dir" tree) shared=$(meta "$dir" shared) commit=$(meta "$dir" commit)
  local cur=$tmp/n.$side.0 nxt=$tmp/n.$side.1
  cat "$f" >"$cur"
  : >"$tmp/rules.$side"
  apply() { # NAME SED-ARGS...
    local name=$1; shift
    sed "$@" "$cur" >"$nxt"
    cmp -s "$cur" "$nxt" || echo "$name" >>"$tmp/rules.$side"
    mv "$nxt" "$cur"
  }
  esc() { printf '%s' "$1" | sed 's/[][\.*^$/|]/\\&/g'; }
  [ -n "$tree" ] && apply "tree path" -e "s|$(esc "$tree")|<TREE>|g"
  [ -n "$shared" ] && apply "shared data path" -e "s|$(esc "$shared")|<SHARED>|g"
  # the repository paths SNAPSHOT.txt lists ("path NAME: value"), longest first
  local name val
  while IFS=$'\t' read -r _ name val; do
    [ -n "$val" ] && apply "path of $name" -e "s|$(esc "$val")|<$name>|g"
  done < <(sed -n 's/^path \([A-Za-z_0-9-]*\): \(.*\)$/\1\t\2/p' "$dir/SNAPSHOT.txt" | awk -F'\t' '{ print length($2) "\t" $0 }' | sort -rn)
  if [[ $commit =~ ^[0-9a-f]{40}$ ]]; then apply "git commit" -E -e "s/\b${commit:0:7}[0-9a-f]{0,33}\b/<COMMIT>/g"; fi
  if head -n 1 "$cur" | grep -q '^#keycut-ledger'; then
    apply "ledger times" -E -e 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\t/<TIME>\t/'
  fi
  cat "$cur"
}
# the rules that can make two files equal: those whose values differ between A and B (and ledger times)
{
  echo "ledger times"
  [ "$(meta "$A" tree)" = "$(meta "$B" tree)" ] || echo "tree path"
  [ "$(meta "$A" shared)" = "$(meta "$B" shared)" ] || echo "shared data path"
  [ "$(meta "$A" commit)" = "$(meta "$B" commit)" ] || echo "git commit"
  for n in $(sed -n 's/^path \([A-Za-z_0-9-]*\): .*/\1/p' "$A/SNAPSHOT.txt" "$B/SNAPSHOT.txt" | sort -u); do
    [ "$(meta "$A" "path $n")" = "$(meta "$B" "path $n")" ] || echo "path of $n"
  done
} | sort -u >"$tmp/relevant"
rules() { sort -u "$tmp/rules.A" "$tmp/rules.B" | comm -12 - "$tmp/relevant" | paste -sd, - | sed 's/,/, /g'; }

# h5records FILE.dump: one line per object: "data|attr <TAB> path <TAB> its dump lines joined"
h5records() {
  awk '
    function key(   i, a, o) { a = ""; o = ""
      for (i = 1; i <= sp; i++) { if (kd[i] == "ATTRIBUTE") a = nm[i]; else if (nm[i] != "" && a == "") o = (o == "" || o == "/" ? o : o "/") nm[i] }
      if (o == "") o = "/"
      return a != "" ? "attr\t" o "@" a : "data\t" o }
    NR == 1 { next }   # HDF5 "file name" {
    {
      line = $0; t = line; gsub(/^[ \t]+|[ \t]+$/, "", t)
      if (t ~ /^\},?$/) { if (sp > 0) sp--; next }
      if (t ~ /\{$/) {
        sp++; kd[sp] = ""; nm[sp] = ""
        if (match(t, /^(GROUP|DATASET|ATTRIBUTE|SOFTLINK|EXTERNAL_LINK|DATATYPE) "/)) {
          kd[sp] = substr(t, 1, index(t, " ") - 1)
          s = substr(t, index(t, "\"") + 1); nm[sp] = substr(s, 1, index(s, "\"") - 1)
          if (kd[sp] == "DATATYPE") { kd[sp] = "DATATYPE-NAMED" }
        } else { k = key(); rec[k] = rec[k] " " t }
        if (kd[sp] == "GROUP" || kd[sp] == "DATASET" || kd[sp] == "ATTRIBUTE") { k = key(); if (!(k in rec)) rec[k] = "" }
        next
      }
      k = key(); rec[k] = rec[k] " " t
    }
    END { for (k in rec) print k "\t" rec[k] }' "$1" | LC_ALL=C sort
}

# h5cmp REL: prints the verdict for an HDF5 file that differs in bytes
h5cmp() {
  local rel=$1
  if [ $have_h5dump = 0 ]; then echo "DIFFERENT  $rel  (HDF5 bytes; no h5dump)"; return 1; fi
  for side in A B; do
    local dir; [ $side = A ] && dir=$A || dir=$B
    if ! h5dump "$dir/$rel" >"$tmp/dump.raw.$side" 2>"$tmp/dump.err.$side"; then
      echo "DIFFERENT  $rel  (h5dump failed on $side: $(head -n 1 "$tmp/dump.err.$side"))"; return 1
    fi
    norm $side "$tmp/dump.raw.$side" | sed '1s/^HDF5 ".*" {$/HDF5 "<file>" {/' >"$tmp/dump.$side"
  done
  local r; r=$(rules)
  if cmp -s "$tmp/dump.A" "$tmp/dump.B"; then echo "h5-same    $rel  (same h5dump${r:+ after normalising: $r}; bytes differ: HDF5 layout only)"; return 0; fi
  h5records "$tmp/dump.A" >"$tmp/rec.A"; h5records "$tmp/dump.B" >"$tmp/rec.B"
  LC_ALL=C comm -3 "$tmp/rec.A" "$tmp/rec.B" | sed 's/^\t//' | cut -f1,2 | LC_ALL=C sort -u >"$tmp/keys"
  local nd na
  nd=$(grep -c '^data' "$tmp/keys" || true); na=$(grep -c '^attr' "$tmp/keys" || true)
  local attrs; attrs=$(grep '^attr' "$tmp/keys" | cut -f2 | head -n 8 | paste -sd' ' -)
  if [ "$nd" -eq 0 ]; then
    echo "h5-attrs   $rel  (datasets identical; $na attributes differ: $attrs)"
    grep '^attr' "$tmp/keys" | head -n 4 | while IFS=$'\t' read -r _ k; do
      va=$(awk -F'\t' -v k="$k" '$2 == k { print $3 }' "$tmp/rec.A" | grep -o '(0): .*' | head -c 160 || true)
      vb=$(awk -F'\t' -v k="$k" '$2 == k { print $3 }' "$tmp/rec.B" | grep -o '(0): .*' | head -c 160 || true)
      echo "             $k: A ${va:-(absent)} | B ${vb:-(absent)}"
    done
    return 2
  fi
  echo "DIFFERENT  $rel  (HDF5: $nd groups/datasets differ: $(grep '^data' "$tmp/keys" | cut -f2 | head -n 6 | paste -sd' ' -)$( [ "$na" -gt 0 ] && echo "; $na attributes differ: $attrs"))"
  return 1
}

(cd "$A" && find . -path ./_raw -prune -o -type f ! -name SNAPSHOT.txt ! -name FILES.sha256 ! -name .hashes.tsv -print) | sed 's|^\./||' | LC_ALL=C sort >"$tmp/list.A"
(cd "$B" && find . -path ./_raw -prune -o -type f ! -name SNAPSHOT.txt ! -name FILES.sha256 ! -name .hashes.tsv -print) | sed 's|^\./||' | LC_ALL=C sort >"$tmp/list.B"
n_same=0 n_norm=0 n_h5=0 n_attr=0 n_diff=0 n_only=0
while IFS= read -r rel; do
  if [ ! -f "$A/$rel" ]; then echo "ONLY-IN-B  $rel"; n_only=$((n_only + 1)); continue; fi
  if [ ! -f "$B/$rel" ]; then echo "ONLY-IN-A  $rel"; n_only=$((n_only + 1)); continue; fi
  if cmp -s "$A/$rel" "$B/$rel"; then
    n_same=$((n_same + 1)); [ $quiet = 1 ] || echo "identical  $rel"; continue
  fi
  if [[ $rel == *.h5 ]]; then
    rc=0; h5cmp "$rel" || rc=$?
    case $rc in 0) n_h5=$((n_h5 + 1)) ;; 2) n_attr=$((n_attr + 1)) ;; *) n_diff=$((n_diff + 1)) ;; esac
    continue
  fi
  if grep -Iq . "$A/$rel" && grep -Iq . "$B/$rel"; then   # text
    norm A "$A/$rel" >"$tmp/t.A"; norm B "$B/$rel" >"$tmp/t.B"
    if cmp -s "$tmp/t.A" "$tmp/t.B"; then echo "normalised $rel  ($(rules))"; n_norm=$((n_norm + 1)); continue; fi
    echo "DIFFERENT  $rel"
    diff "$tmp/t.A" "$tmp/t.B" | head -n 8 | cut -c1-200 | sed 's/^/             /' || true
  else
    echo "DIFFERENT  $rel  (binary, $(stat -c %s "$A/$rel") vs $(stat -c %s "$B/$rel") bytes)"
  fi
  n_diff=$((n_diff + 1))
done < <(LC_ALL=C sort -u "$tmp/list.A" "$tmp/list.B")
echo "snapshot-diff: $((n_same + n_norm + n_h5 + n_attr + n_diff + n_only)) files: $n_same identical, $n_norm identical after normalisation, $n_h5 HDF5 with the same dump (layout only), $n_attr HDF5 with the same datasets but other attributes, $n_diff different, $n_only in one snapshot only"
[ $((n_attr + n_diff + n_only)) -eq 0 ]
