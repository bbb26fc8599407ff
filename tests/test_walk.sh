#!/usr/bin/env bash
# Incremental equals clean (issue 28, docs/design.md "The make pipeline"): a walk of request
# changes through `make sweep report davis probe figures report-html` on generated data, each
# step's outputs (tables, figures' data, score and result files, the results browser, and the
# tables and numbers the run prints) compared with a clean run of the same request in empty
# folders; then the same walk again under SHARDS=2 (compared with the same clean runs; its first 6
# steps, all 12 with KC_FULL=1).
# Steps: networks of each kind (`model =` color, `weights =` a checkpoint file, `init =` random)
# added, dropped and reordered; SETTING best / explicit / another / back; VOC and DAVIS roots
# whose ground truth differs; the checkpoint replaced by other weights with an older mtime; a
# nets.ini section edited; the grid edited in place; VAL_SPLIT; REFINE; PROBE_SIZE; requests made
# again after others; and a last step that touches every input without changing a byte, which
# must run no stage.  At the first, sixth and last steps the same request is made again and must
# start no stage.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir walk)
T=$(cd "$T" && pwd)
export KC_QUIET=1 SOURCE_DATE_EPOCH=1780000000
if [ "${KC_SANITIZE:-}" = 1 ]; then M=(make --no-print-directory SANITIZE=1 BUILD="${BUILD%-san}")
else M=(make --no-print-directory BUILD="$BUILD"); fi
B=$BUILD

# ---- data: two VOC roots and two DAVIS roots whose scenes and ground truth differ ------------
for s in 1 2; do
  "$B/kc-demo-data" --out "$T/data$s" --seed "$s" --train 4 --val 3 --videos 1 --frames 3 >/dev/null 2>&1 || bad "kc-demo-data seed $s"
  head -n 2 "$T/data$s/voc/ImageSets/Segmentation/val.txt" > "$T/data$s/voc/ImageSets/Segmentation/val2.txt"
done
cmp -s "$T/data1/voc/ImageSets/Segmentation/val.txt" "$T/data2/voc/ImageSets/Segmentation/val.txt" && \
  cmp -s "$T/data1/voc/SegmentationObject/$(head -n 1 "$T/data1/voc/ImageSets/Segmentation/val.txt").png" \
         "$T/data2/voc/SegmentationObject/$(head -n 1 "$T/data2/voc/ImageSets/Segmentation/val.txt").png" && bad "the two VOC roots are the same"
# the checkpoint of the `weights =` network: two different toy ViTs, the second copied over the first
"$B/kc-init" --arch toy/16 --seed 5 --out "$T/ckpt-a.safetensors" >/dev/null 2>&1 || bad "kc-init a"
"$B/kc-init" --arch toy/16 --seed 6 --out "$T/ckpt-b.safetensors" >/dev/null 2>&1 || bad "kc-init b"
cp "$T/ckpt-a.safetensors" "$T/ckpt.safetensors"
write_ini() {   # $1: a or b (b: the [ckpt] section edited)
  cat > "$T/nets.ini" <<EOF
[color]
model = color
kind = baseline

[random]
init = --arch toy/16 --seed 0
kind = baseline

[ckpt]
weights = $T/ckpt.safetensors
$( [ "$1" = b ] && echo "options = --drop-cls" )
EOF
}
write_grid() {   # $1: a or b (b: a third tau)
  { echo "[grid]"; [ "$1" = a ] && echo "tau = 0.10, 0.20" || echo "tau = 0.10, 0.20, 0.25"
    echo "edges = bin"; echo "split = mean"; echo "foreground = seed, corners"; echo "masks = 1"; } > "$T/grid.ini"
}
write_ini a; write_grid a

# ---- the request: state variables, and the make variables they give --------------------------
S_NETS="color" S_SETTING=best S_VOC=1 S_DAVIS=1 S_VAL=val S_REFINE=none S_PROBE=224 S_CKPT=a S_INI=a S_GRID=a
key() { echo "$S_NETS|$S_SETTING|$S_VOC|$S_DAVIS|$S_VAL|$S_REFINE|$S_PROBE|$S_CKPT|$S_INI|$S_GRID"; }
vars() {   # $1: the folder of OUT, TABLES, FIGURES, REPORT_DIR, SPLITS and the ledger
  echo "NETS=$S_NETS"
  printf '%s\n' NETS_INI="$T/nets.ini" VOC="$T/data$S_VOC/voc" DAVIS="$T/data$S_DAVIS/davis" GRID="$T/grid.ini" \
    SETTING="$S_SETTING" VAL_SPLIT="$S_VAL" REFINE="$S_REFINE" PROBE_SIZE="$S_PROBE" PROBE=1 PROBE_TRAIN=train "PROBE_OPTS=--batch 4 --epochs 2 --drop-at 1" \
    SELECT_COUNT=4 OUT="$1/work" TABLES="$1/tables" FIGURES="$1/figures" REPORT_DIR="$1/report" SPLITS="$1/splits" LEDGER="$1/ledger.tsv"
}
GOALS=(sweep report davis probe figures report-html)
run() {   # run DIR LOG [make options...]: the request's goals into DIR
  local dir=$1 log=$2; shift 2
  local -a v; mapfile -t v < <(vars "$dir")
  "${M[@]}" "$@" "${v[@]}" "${GOALS[@]}" >"$log" 2>&1
}
stages() { grep -cE "^$B/kc-[a-z]+ " "$1" || true; }
# what the run printed that a reader takes away: the tables and the per-network result lines
printed() { grep -E "$PRINTED" "$1" | sed "s|$2|DIR|g"; }
PRINTED='^\||^[a-z0-9-]+: (probe mIoU |[0-9])'   # the tables, make davis' and make probe's lines
# the products a reader uses, as files below DIR: tables, the figures' data, scores, results, the
# results browser (but the ledger and the caches, which record their own paths and times)
products() { (cd "$1" && find $WRITTEN work/scores work/results -type f \
               ! -name '*.pdf' ! -name '*.png' ! -name '.*' 2>/dev/null | sort); }
# bundle DIR FILE...: a digest of the files' bytes, DIR's own path read as DIR (one tail -v for
# all: each file's bytes under a header "==> FILE <=="; a missing file has no header)
bundle() { local d=$1; shift; (cd "$d" && { [ $# = 0 ] || tail -v -n +1 -- "$@" 2>/dev/null; }) | sed "s|$d|DIR|g" | sha256sum; }
# the folders a request writes whole (OUT keeps the products of other requests: a cache)
written() { (cd "$1" && find $WRITTEN -type f ! -name '.*' 2>/dev/null | sort); }
WRITTEN="tables figures report"

n_clean=0 n_stage_clean=0 n_stage_inc=0 n_steps=0 fails_before=$T_FAIL
declare -A CLEAN=()
check_step() {   # check_step NAME AGAIN INC_DIR SHARDS_OPTS...: AGAIN=1 also checks that a rerun starts no stage
  local name=$1 again_too=$2 inc=$3; shift 3
  n_steps=$((n_steps + 1))
  local k; k=$(key)
  local log=$T/log.$n_steps c=${CLEAN[$k]:-} cpid=
  # the clean run of the request (one per request, shared by both walks), beside the incremental one
  if [ -z "$c" ]; then
    n_clean=$((n_clean + 1)); c=$T/clean$n_clean; CLEAN[$k]=$c
    run "$c" "$c.log" -j2 KC_PLAN=0 & cpid=$!
  fi
  local rc=0; run "$inc" "$log" "$@" || rc=$?
  if [ -n "$cpid" ]; then
    wait "$cpid" || { bad "step $name: the clean run failed: $(grep -E 'error|\*\*\*' "$c.log" | head -n 3)"; return; }
    n_stage_clean=$((n_stage_clean + $(stages "$c.log")))
  fi
  if [ $rc != 0 ]; then bad "step $name ($*): make failed: $(grep -E 'error|\*\*\*' "$log" | head -n 3)"; return; fi
  n_stage_inc=$((n_stage_inc + $(stages "$log")))
  local diffs=0 f
  [ "$(written "$c")" = "$(written "$inc")" ] || { diffs=$((diffs + 1)); echo "step $name: other files: $(diff <(written "$c") <(written "$inc") | grep '^[<>]' | head -n 4 | tr '\n' ' ')" >&2; }
  # the clean run's product files, each also in the incremental folder with the same bytes (paths
  # of the folder itself read as DIR); one pass over all, file by file only to name a difference
  local -a files; mapfile -t files < <(products "$c")
  if [ "$(bundle "$c" "${files[@]}")" != "$(bundle "$inc" "${files[@]}")" ]; then
    for f in "${files[@]}"; do
      [ -f "$inc/$f" ] && cmp -s <(sed "s|$c|DIR|g" "$c/$f") <(sed "s|$inc|DIR|g" "$inc/$f") || { diffs=$((diffs + 1)); echo "step $name: $f differs from the clean run's" >&2; }
    done
  fi
  [ "$(printed "$log" "$inc")" = "$(printed "$c.log" "$c")" ] || { diffs=$((diffs + 1)); echo "step $name: printed other tables: $(diff <(printed "$c.log" "$c") <(printed "$log" "$inc") | head -n 4 | tr '\n' ' ')" >&2; }
  [ "$diffs" = 0 ] && ok || bad "step $name ($*): $diffs outputs differ from a clean run of the same request"
  echo "step $n_steps $name $*: $(stages "$log") stages (clean: $(stages "$c.log")), done at ${SECONDS}s"
  # the same request again: no stage starts
  if [ "$again_too" = 1 ]; then
    local again; again=$(run "$inc" "$log.again" "$@" && stages "$log.again")
    [ "$again" = 0 ] && ok || bad "step $name: a rerun of the same request started $again stages: $(grep -E "^$B/kc-" "$log.again" | head -n 3)"
  fi
}

# ---- the steps: each changes the request ------------------------------------------------------
# The walk goes forward and back, so that requests come again (a request made again must give its
# earlier outputs, its stamps rewritten back) and the clean runs, one per distinct request, stay
# few: 13 requests, 9 distinct.
add_init()    { S_NETS="$S_NETS random"; }
add_weights() { S_NETS="$S_NETS ckpt"; }
reorder()     { S_NETS=$(tr ' ' '\n' <<<"$S_NETS" | tac | paste -sd' '); }
drop_first()  { S_NETS=$(cut -d' ' -f2- <<<"$S_NETS"); }
setting()     { S_SETTING=$1; }
voc()         { S_VOC=$1; }
davis()       { S_DAVIS=$1; }
val()         { S_VAL=$1; }
refine()      { S_REFINE=$1; }
probe()       { S_PROBE=$1; }
ckpt()        {   # other weights copied in, older than every product (as cp -p of an old file)
  S_CKPT=$1; cp "$T/ckpt-$1.safetensors" "$T/ckpt.safetensors"; touch -d '2001-01-01' "$T/ckpt.safetensors"; }
ini()         { S_INI=$1; write_ini "$1"; }     # b: [ckpt] gains options = --drop-cls
grid()        { S_GRID=$1; write_grid "$1"; }   # b: a third tau
STEPS=(
  "add_init"                               # the issue's first case: an `init =` network added to a sweep
  "add_weights"                            # a `weights =` network
  "setting t0.20-bin-mean-seed-n1; ckpt b" # an explicit setting; the checkpoint replaced, older mtime
  "voc 2; davis 2"                         # roots whose ground truth differs
  "voc 1; davis 1"                         # back: the request of two steps before
  "setting best; ini b"                    # SETTING back to best; a nets.ini section edited
  "grid b; reorder"                        # the grid edited in place; the networks reordered
  "val val2; refine bs; probe 448"         # another VAL_SPLIT, refined masks, the probe at 448
  "val val; refine none; probe 224"        # back
  "val val2; refine bs; probe 448"         # and forth again
  "ckpt a; ini a"                          # the old checkpoint copied back (older mtime again)
  "drop_first; setting t0.10-bin-mean-corners-n1"   # a network dropped; another explicit setting
)
[ "${KC_SANITIZE:-}" != 1 ] || KC_WALK_STEPS=${KC_WALK_STEPS:-5}   # (the sanitizer suite: the stages' memory; the make layer is the same)
[ -z "${KC_WALK_STEPS:-}" ] || STEPS=("${STEPS[@]:0:$KC_WALK_STEPS}")

walk() {   # walk INC_DIR MAKE_OPTIONS...: the whole walk from the first request
  local inc=$1; shift
  S_NETS="color" S_SETTING=best S_VOC=1 S_DAVIS=1 S_VAL=val S_REFINE=none S_PROBE=224
  [ "$S_CKPT" = a ] || ckpt a; [ "$S_INI" = a ] || ini a; [ "$S_GRID" = a ] || grid a
  check_step start 1 "$inc" "$@"
  local i=0 step
  for step in "${STEPS[@]}"; do eval "$step"; i=$((i + 1)); check_step "$i:${step// /_}" $((i == 6 || i == ${#STEPS[@]})) "$inc" "$@"; done
  # every input touched, no byte changed: nothing runs
  touch "$T/ckpt.safetensors" "$T/nets.ini" "$T/grid.ini" "$T"/data*/voc/ImageSets/Segmentation/*.txt "$T"/data*/davis/ImageSets/2017/*.txt
  local log=$T/log.touched; local -a v; mapfile -t v < <(vars "$inc")
  "${M[@]}" "$@" "${v[@]}" "${GOALS[@]}" >"$log" 2>&1 || bad "after touching the inputs, make failed"
  [ "$(stages "$log")" = 0 ] && ok || bad "touching the inputs without changing them ran $(stages "$log") stages: $(grep -E "^$B/kc-" "$log" | head -n 3)"
}

walk "$T/inc"
echo "walk: $n_steps requests; the incremental runs started $n_stage_inc stages in all, the $n_clean clean runs (one per distinct request) $n_stage_clean"
inc1=$n_stage_inc steps1=$n_steps clean1=$n_clean
# under SHARDS=2 the goals whose products are sharded (features, decoding, propagation: make report
# makes DAVIS's too, DAVIS being set, and the probe, PROBE=1); their outputs against the same clean runs
# (the first 6 steps: every kind of network added, a checkpoint replaced, other roots and back, the
# same request again; the whole walk with KC_FULL=1, make check-full)
GOALS=(sweep report) WRITTEN=tables PRINTED='^\|' 
[ "${KC_FULL:-}" = 1 ] || STEPS=("${STEPS[@]:0:6}")
walk "$T/inc2" -j2 SHARDS=2
echo "walk under SHARDS=2 -j2: $((n_steps - steps1)) requests; the incremental runs started $((n_stage_inc - inc1)) stages (shards and merges counted), clean runs added: $((n_clean - clean1))"
[ "$T_FAIL" = "$fails_before" ] && rm -rf "$T"/clean* "$T"/inc*
done_tests
