#!/usr/bin/env bash
# configs/plan.sh — reads `make -n` output on stdin and prints what the pipeline will run and how
# long it is expected to take on 2 cores.  Image counts come from the split files named in the
# environment (SELECT_LIST, VAL_LIST, DAVIS_ROOT + DAVIS_SPLIT; make saliency's roots ECSSD, DUTS,
# DUTOMRON: their image folders' files); the rates are this project's
# measured ones (README, "Speed"): ViT-S/16 keys at 480x480 ~0.3 s/image, colour features
# ~0.02 s/image, the 144-setting grid ~0.5 s/image, one setting ~0.01 s/image, propagation
# ~0.1 s/frame, kc-saliency (the solver and the scores) ~0.03 s/image.
set -u
# (bash builtins but one awk: it runs before every goal's steps, and process starts are what cost)
n_davis=0
if [ -n "${DAVIS_ROOT:-}" ] && [ -f "$DAVIS_ROOT/ImageSets/2017/${DAVIS_SPLIT:-val}.txt" ]; then
  shopt -s nullglob
  while read -r s; do [ -n "$s" ] || continue; frames=("$DAVIS_ROOT/JPEGImages/480p/$s"/*); n_davis=$((n_davis + ${#frames[@]})); done \
    < "$DAVIS_ROOT/ImageSets/2017/${DAVIS_SPLIT:-val}.txt"
fi
# make saliency's datasets (ECSSD, DUTS, DUTOMRON): the images of each root's image folder
sal=
shopt -s nullglob
for v in ECSSD DUTS DUTOMRON; do
  r=${!v:-}
  [ -n "$r" ] || continue
  for d in images DUTS-TE-Image DUT-OMRON-image img; do
    if [ -d "$r/$d" ]; then
      files=("$r/$d"/*.jpg "$r/$d"/*.jpeg "$r/$d"/*.png)
      name=${v,,}; sal="$sal$r=${#files[@]}|/saliency/*/$name/=${#files[@]}|"   # kc-extract's line names the root, the others the folder
    fi
  done
done
awk -v nd="$n_davis" -v sal="$sal" '
  # the non-blank lines of a list (0 when it does not exist)
  function lines(f,   n, l) { n = 0; while ((getline l < f) > 0) if (l !~ /^[ \t\r\f\v]*$/) n++; close(f); return n }
  BEGIN {
    ns = lines(ENVIRON["SELECT_LIST"])
    if (ns == 0) {   # not drawn yet: min(SELECT_COUNT, the train list)
      ns = lines(ENVIRON["TRAIN_LIST"]); cap = ENVIRON["SELECT_COUNT"] == "" ? 1000 : ENVIRON["SELECT_COUNT"] + 0
      if (ns > cap) ns = cap
    }
    nv = lines(ENVIRON["VAL_LIST"])
  }
  function images(line,   root, k, n, pair) {
    if (match(line, /saliency:[^ ]+/) || match(line, /\/saliency\/[^\/ ]+\/(ecssd|duts|dutomron)\//)) {
      # a saliency root or a product folder of one: its count, else the size of DUTS-TE
      root = substr(line, RSTART, RLENGTH); if (root ~ /^saliency:/) root = substr(root, 10)
      else { sub(/^\/saliency\/[^\/]+\//, "/saliency/*/", root) }
      n = split(sal, pair, "|")
      for (k = 1; k <= n; k++) if (index(pair[k], root "=") == 1) return substr(pair[k], length(root) + 2) + 0
      return 5019
    }
    if (line ~ /voc12-select|select[0-9]+\.txt/) return ns == 0 ? 1000 : ns
    if (line ~ /davis17/) return nd == 0 ? 2000 : nd
    return nv == 0 ? 1449 : nv
  }
  /kc-[a-z]+ / {
    match($0, /kc-[a-z]+/); stage = substr($0, RSTART, RLENGTH); n = images($0); s = 0
    if (stage == "kc-extract") s = n * ($0 ~ /--model color/ ? 0.02 : 0.3)
    else if (stage == "kc-decode") s = n * ($0 ~ /--grid/ ? 0.5 : 0.01)
    else if (stage == "kc-propagate") s = n * 0.1
    else if (stage == "kc-saliency") s = 1 + n * 0.03
    else if (stage == "kc-center" || stage == "kc-score" || stage == "kc-davis") s = 1 + n * 0.005
    else s = 1
    runs[stage]++; secs[stage] += s; total += s
    if (!(stage in seen)) { seen[stage] = 1; order[++k] = stage }
  }
  END {
    if (k == 0) { print "pipeline: plan: nothing to run, everything is up to date"; exit }
    printf "pipeline: plan:"
    for (i = 1; i <= k; i++) printf " %s x%d (~%s)%s", order[i], runs[order[i]], fmt(secs[order[i]]), i < k ? "," : ""
    printf "\npipeline: expected about %s on 2 cores (make -j runs independent networks side by side)\n", fmt(total)
  }
  function fmt(s) { return s < 90 ? sprintf("%ds", s + 0.5) : s < 5400 ? sprintf("%dmin", s / 60 + 0.5) : sprintf("%.1fh", s / 3600) }'
