#!/usr/bin/env bash
# configs/prune-figures.sh DIR PREFIX NET... — after `kc-plot sweep --out DIR` drew the figures of
# NETS, removes DIR/PREFIX-<net>-{jaccard,corloc}.* of networks no longer in NETS (left by an earlier
# request), so that DIR holds what a run into an empty folder would (pipeline.mk, make figures).
set -eu -o pipefail
dir=$1 prefix=$2; shift 2
declare -A keep=()
for n in "$@"; do keep[$n]=1; done
shopt -s nullglob
for f in "$dir/$prefix"-*-jaccard.* "$dir/$prefix"-*-corloc.*; do
  b=${f##*/}; b=${b#"$prefix"-}; n=${b%-jaccard.*}; [ "$n" != "$b" ] || n=${b%-corloc.*}
  [ -n "${keep[$n]:-}" ] || rm -f -- "$f"
done
