#!/usr/bin/env bash
# configs/plan.sh — reads `make -n` output on stdin and prints what the pipeline will run and how
# long it is expected to take on 2 cores.  Image counts come from the split files named in the
# environment (SELECT_LIST, VAL_LIST, DAVIS_ROOT + DAVIS_SPLIT); the rates are this project's
# measured ones (README, "Speed"): ViT-S/16 keys at 480x480 ~0.3 s/image, colour features
# ~0.02 s/image, the 144-setting grid ~0.5 s/image, one setting ~0.01 s/image, propagation
# ~0.1 s/frame.
set -u
count() { [ -f "$1" ] && grep -cv '^[[:space:]]*$' "$1" || echo 0; }
n_select=$(count "${SELECT_LIST:-/nonexistent}")
if [ "$n_select" -eq 0 ]; then   # not drawn yet: min(SELECT_COUNT, the train list)
  n_select=$(count "${TRAIN_LIST:-/nonexistent}")
  [ "$n_select" -gt "${SELECT_COUNT:-1000}" ] && n_select=${SELECT_COUNT:-1000}
fi
n_val=$(count "${VAL_LIST:-/nonexistent}")
n_davis=0
if [ -n "${DAVIS_ROOT:-}" ] && [ -f "$DAVIS_ROOT/ImageSets/2017/${DAVIS_SPLIT:-val}.txt" ]; then
  while read -r s; do [ -n "$s" ] && n_davis=$((n_davis + $(ls "$DAVIS_ROOT/JPEGImages/480p/$s" 2>/dev/null | wc -l))); done \
    < "$DAVIS_ROOT/ImageSets/2017/${DAVIS_SPLIT:-val}.txt"
fi
awk -v ns="$n_select" -v nv="$n_val" -v nd="$n_davis" '
  function images(line) {
    if (line ~ /voc12-select|select[0-9]+\.txt/) return ns == 0 ? 1000 : ns
    if (line ~ /davis17/) return nd == 0 ? 2000 : nd
    return nv == 0 ? 1449 : nv
  }
  /configs\/recipe\.sh / { next }   # a recipe stamp checked (pipeline.mk), not a stage
  /kc-[a-z]+ / {
    match($0, /kc-[a-z]+/); stage = substr($0, RSTART, RLENGTH); n = images($0); s = 0
    if (stage == "kc-extract") s = n * ($0 ~ /--model color/ ? 0.02 : 0.3)
    else if (stage == "kc-decode") s = n * ($0 ~ /--grid/ ? 0.5 : 0.01)
    else if (stage == "kc-propagate") s = n * 0.1
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
