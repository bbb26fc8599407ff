#!/usr/bin/env bash
# configs/check-request.sh — the pipeline's request checked before anything runs (pipeline.mk, at
# parse time, for the goals a user types).  Environment: GOALS and the pipeline's variables (NETS,
# NETS_INI, OUT, WEIGHTS, VOC, VAL_SPLIT, PROBE_TRAIN, DAVIS, DAVIS_SPLIT, GRID, SETTING, ATTN_NETS,
# SHARDS, BUILD, PROBE, TABLES; make corloc's VOC07, VOC12, COCO, COCO20K_LIST, CORLOC_PUBLISHED;
# make saliency's ECSSD, DUTS, DUTOMRON, PUBLISHED).
# Prints the first problem as one line naming the variable or file to fix (make stops with it);
# prints nothing when the request can run.
set -u
goals=" $GOALS "
has() { case $goals in *" $1 "*) return 0 ;; esac; return 1; }
say() { echo "pipeline: $*"; exit 0; }

if has tables; then
  compgen -G "${TABLES:-tables}/*.md" >/dev/null || say "no tables in ${TABLES:-tables}/ yet: run make sweep / make report first"
  [ "$GOALS" != " tables " ] || exit 0
fi
case ${SHARDS:-1} in ''|*[!0-9]*|0) say "SHARDS=$SHARDS is not a positive number" ;; esac

# the networks: sections of NETS_INI, their weights present (an `init =` network's are made)
[ -f "$NETS_INI" ] || say "NETS_INI=$NETS_INI: no such file"
[ -n "${NETS// /}" ] || say "NETS is empty: name the networks, sections of $NETS_INI"
extracts=0
for g in sweep report davis probe corloc saliency; do has $g && extracts=1; done
# net_weights NAME WEIGHTS INIT: a `weights =` network's file must exist (when the goals extract)
net_weights() {
  [ $extracts = 1 ] || return 0
  if [ "$3" = - ] && [ "$2" != - ] && [ ! -f "$2" ]; then
    if [ "$1" = weights ]; then say "WEIGHTS=$2: no such file"; fi
    say "network $1: weights $2 (section [$1] of $NETS_INI): no such file"
  fi
}
# every network read by one run (configs/net-args.sh --make-all; spaces in a field are '^'); when
# one has a problem, they are read again one by one, so that the first problem is the one named
# shellcheck disable=SC2086  # NETS and ATTN_NETS are lists of words
if infos=$(OUT=$OUT WEIGHTS=$WEIGHTS configs/net-args.sh "$NETS_INI" --make-all $NETS $ATTN_NETS 2>/dev/null); then
  while IFS='|' read -r n _ w init _; do [ -z "$n" ] || net_weights "$n" "${w//^/ }" "$init"; done <<<"$infos"
else
  for n in $NETS $ATTN_NETS; do
    info=$(OUT=$OUT WEIGHTS=$WEIGHTS configs/net-args.sh "$NETS_INI" "$n" --make 2>&1) || say "NETS: ${info#net-args: }"
    IFS='|' read -r _ w init _ <<<"$info"
    net_weights "$n" "$w" "$init"
  done
fi

# VOC: the root and the lists the goals read
voc_needed=0
for g in sweep report probe; do has $g && voc_needed=1; done
if [ $voc_needed = 1 ]; then
  [ -n "$VOC" ] || say "set VOC=/path/to/VOCdevkit/VOC2012 (see README)"
  [ -d "$VOC" ] || say "VOC=$VOC: no such folder"
fi
seg=$VOC/ImageSets/Segmentation
if has sweep || { has report && [ "$SETTING" = best ]; }; then
  [ -f "$seg/train.txt" ] || say "VOC=$VOC has no $seg/train.txt (the selection split is drawn from it)"
  [ -f "$GRID" ] || say "GRID=$GRID: no such file"
fi
if has report; then
  [ -f "$seg/$VAL_SPLIT.txt" ] || say "VAL_SPLIT=$VAL_SPLIT: no list $seg/$VAL_SPLIT.txt (VOC=$VOC)"
fi
if has probe || { has report && [ -n "${PROBE:-}" ] && [ "$PROBE" != 0 ]; }; then
  [ -f "$seg/$PROBE_TRAIN.txt" ] || say "PROBE_TRAIN=$PROBE_TRAIN: no list $seg/$PROBE_TRAIN.txt (VOC's augmented set: trainaug.txt, labels in SegmentationClassAug/; README \"The linear probe\")"
  [ -f "$seg/$VAL_SPLIT.txt" ] || say "VAL_SPLIT=$VAL_SPLIT: no list $seg/$VAL_SPLIT.txt (VOC=$VOC)"
fi

# DAVIS
if has davis && [ -z "$DAVIS" ]; then say "set DAVIS=/path/to/DAVIS (see README)"; fi
if [ -n "$DAVIS" ] && { has davis || has report; }; then
  [ -d "$DAVIS" ] || say "DAVIS=$DAVIS: no such folder"
  [ -f "$DAVIS/ImageSets/2017/$DAVIS_SPLIT.txt" ] || say "DAVIS_SPLIT=$DAVIS_SPLIT: no list $DAVIS/ImageSets/2017/$DAVIS_SPLIT.txt (DAVIS=$DAVIS)"
fi

# make corloc: the datasets given (at least one), their roots and lists, the published rows
if has corloc; then
  VOC07=${VOC07:-} VOC12=${VOC12:-} COCO=${COCO:-} COCO20K_LIST=${COCO20K_LIST:-}
  [ -n "$VOC07$VOC12$COCO$COCO20K_LIST" ] || say "set VOC07=, VOC12= and/or COCO= with COCO20K_LIST= (see README, CorLoc)"
  for v in VOC07 VOC12; do
    root=${!v}
    [ -n "$root" ] || continue
    [ -d "$root" ] || say "$v=$root: no such folder"
    [ -f "$root/ImageSets/Main/trainval.txt" ] || say "$v=$root: no list $root/ImageSets/Main/trainval.txt (the detection trainval, docs/corloc.md)"
  done
  if [ -n "$COCO$COCO20K_LIST" ]; then
    [ -n "$COCO" ] || say "COCO20K_LIST is given without COCO=: COCO20k needs the COCO root too (or leave both empty)"
    [ -n "$COCO20K_LIST" ] || say "COCO=$COCO is given without COCO20K_LIST=: COCO20k needs its file list too (TokenCut's coco_20k_filenames.txt; or leave both empty)"
    [ -d "$COCO" ] || say "COCO=$COCO: no such folder"
    [ -f "$COCO/annotations/instances_train2014.json" ] || say "COCO=$COCO: no $COCO/annotations/instances_train2014.json"
    [ -f "$COCO20K_LIST" ] || say "COCO20K_LIST=$COCO20K_LIST: no such file"
  fi
  [ -f "${CORLOC_PUBLISHED:-}" ] || say "CORLOC_PUBLISHED=${CORLOC_PUBLISHED:-}: no such file"
fi

# make saliency: the datasets given (at least one), each root in one of the layouts, the published rows
if has saliency; then
  ECSSD=${ECSSD:-} DUTS=${DUTS:-} DUTOMRON=${DUTOMRON:-}
  [ -n "$ECSSD$DUTS$DUTOMRON" ] || say "set ECSSD=, DUTS= and/or DUTOMRON= to the datasets' roots (see README, Saliency)"
  for v in ECSSD DUTS DUTOMRON; do
    root=${!v}
    [ -n "$root" ] || continue
    [ -d "$root" ] || say "$v=$root: no such folder"
    found=
    for pair in images:ground_truth_mask DUTS-TE-Image:DUTS-TE-Mask DUT-OMRON-image:pixelwiseGT-new-PNG img:gt; do
      if [ -d "$root/${pair%%:*}" ]; then
        [ -z "$found" ] || say "$v=$root: holds two saliency layouts (${found%%:*}/ and ${pair%%:*}/)"
        found=$pair
      fi
    done
    [ -n "$found" ] || say "$v=$root: no saliency layout (images/ + ground_truth_mask/, DUTS-TE-Image/ + DUTS-TE-Mask/, DUT-OMRON-image/ + pixelwiseGT-new-PNG/, or img/ + gt/)"
    [ -d "$root/${found#*:}" ] || say "$v=$root: no ${found#*:}/ beside ${found%%:*}/ (the ground-truth masks)"
  done
  [ -f "${PUBLISHED:-}" ] || say "PUBLISHED=${PUBLISHED:-}: no such file"
fi

# SETTING: best, or a decoder setting id (the nearest id of GRID named on a typo); make corloc's
# best is TokenCut's setting
if [ "$SETTING" != best ] && { has report || has figures || has report-html || has corloc || has saliency; }; then
  dec=${BUILD:-build}/kc-decode
  if [ -x "$dec" ]; then
    err=$("$dec" --check-setting "$SETTING" $([ -f "$GRID" ] && echo --grid "$GRID") 2>&1) || say "${err#kc-decode: error: }"
  fi
fi
exit 0
